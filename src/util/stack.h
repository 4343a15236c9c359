/* The calling thread's stack, committed ahead of the bind's control plane.
 *
 * A cold pass's orchestration runs deeper than anything before it on its
 * thread (a dsv4 rank's case keeps argument arrays of several KB on the
 * stack, under the submit path's own frames), and each new stack page it
 * reaches is a page fault inside host_orch: ten or so a rank, ~11 us each
 * in a virtual machine. The runtime writes a byte of each page of the
 * next HBG_STACK_HOT bytes below its frame just before host_orch starts;
 * from the second pass on those pages are resident and the writes cost a
 * few nanoseconds.
 */
#ifndef HBG_UTIL_STACK_H
#define HBG_UTIL_STACK_H

#include <stdint.h>

#define HBG_STACK_HOT ((uintptr_t)64 << 10)

/* The bounds of one thread's stack; all zero where they cannot be
 * learnt. */
typedef struct hbg__stack {
    uintptr_t lo, hi;
} hbg__stack;

/* The calling thread's stack. It may read /proc and allocate: call it
 * once, at creation, on the thread that will bind. */
hbg__stack hbg__stack_of_caller(void);

/* Commits the HBG_STACK_HOT bytes below the caller's frame when the
 * caller runs on stack s with those bytes to spare and as much again
 * below them; else (another thread, a small stack, bounds unknown) does
 * nothing. */
void hbg__stack_commit(hbg__stack s);

#endif
