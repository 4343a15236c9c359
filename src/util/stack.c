/* The calling thread's stack, committed ahead (see stack.h). */
#include <pthread.h>
#include <stdatomic.h>

#include "util/stack.h"

static _Atomic uint64_t last_serial;
static _Thread_local uint64_t my_serial; /* 0 in every new thread */

uint64_t hbg__thread_serial(void)
{
    if (!my_serial)
        my_serial = atomic_fetch_add_explicit(&last_serial, 1, memory_order_relaxed) + 1;
    return my_serial;
}

hbg__stack hbg__stack_of_caller(void)
{
    hbg__stack s = {.owner = hbg__thread_serial(), .lo = 0, .hi = 0};
    pthread_attr_t at;
    void *lo = NULL;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &at) != 0)
        return s;
    if (pthread_attr_getstack(&at, &lo, &size) == 0 && lo)
        s.lo = (uintptr_t)lo, s.hi = (uintptr_t)lo + size;
    pthread_attr_destroy(&at);
    return s;
}

/* Its own frame holds the pages: noinline, so they lie below the
 * caller's. */
__attribute__((noinline)) static void touch(void)
{
    volatile unsigned char pages[HBG_STACK_HOT];
    for (uintptr_t i = 0; i < sizeof pages; i += 4096)
        pages[i] = 0;
    pages[sizeof pages - 1] = 0;
}

void hbg__stack_commit(hbg__stack s)
{
    /* The frame's address, not a local's: under AddressSanitizer's
     * detect_stack_use_after_return a local lives on a heap fake stack. The
     * thread is checked as well as the bounds: a thread that has ended may
     * leave its stack's addresses to a later one's, and its pthread_t (the
     * serial is why: a 64 KB thread once took a 64 MB one's, and the commit
     * ran off its stack). */
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
    if (s.lo && hbg__thread_serial() == s.owner && sp > s.lo && sp < s.hi && sp - s.lo > 2 * HBG_STACK_HOT)
        touch();
}
