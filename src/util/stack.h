/* The calling thread's stack, committed ahead of the bind's control plane.
 *
 * A cold pass's orchestration runs deeper than anything before it on its
 * thread (a dsv4 rank's case keeps argument arrays of several KB on the
 * stack, under the submit path's own frames), and each new stack page it
 * reaches is a page fault inside host_orch: ten or so a rank, ~11 us each
 * in a virtual machine. The runtime's first pass writes a byte of each
 * page of the next HBG_STACK_HOT bytes below its frame in static_arena,
 * a few segments before host_orch at the same depth; the pages then stay
 * resident, and later passes do not touch them again.
 *
 * Only on the thread that created the runtime, on its own stack: a bind
 * run on a coroutine or fiber stack carved out of that thread's stack
 * (not one of its own mapping) is not supported, as the 64 KB below such
 * a stack's frame may belong to the frames it was entered from.
 */
#ifndef HBG_UTIL_STACK_H
#define HBG_UTIL_STACK_H

#include <pthread.h>
#include <stdint.h>

#define HBG_STACK_HOT ((uintptr_t)64 << 10)

/* One thread's stack: the thread, and its bounds (zero where they cannot
 * be learnt). The thread is a serial number of this process's threads,
 * not its pthread_t: a thread started after another has ended may get the
 * ended one's pthread_t (glibc's is the address of its descriptor, at the
 * top of its stack) on a stack of another size. */
typedef struct hbg__stack {
    uint64_t owner;
    uintptr_t lo, hi;
} hbg__stack;

/* The calling thread's serial number: from 1, never one another thread
 * of this process had. */
uint64_t hbg__thread_serial(void);

/* The calling thread's stack. It may read /proc and allocate: call it
 * once, at creation, on the thread that will bind. */
hbg__stack hbg__stack_of_caller(void);

/* Commits the HBG_STACK_HOT bytes below the caller's frame when the
 * caller is s's thread, its frame inside s's bounds with those bytes to
 * spare and as much again below them; else (another thread, another
 * stack, a small stack, bounds unknown) does nothing. */
void hbg__stack_commit(hbg__stack s);

#endif
