/* The calling thread's stack, committed ahead (see stack.h). */
#include <pthread.h>

#include "util/stack.h"

hbg__stack hbg__stack_of_caller(void)
{
    hbg__stack s = {0, 0};
    pthread_attr_t at;
    void *lo = NULL;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &at) != 0)
        return s;
    if (pthread_attr_getstack(&at, &lo, &size) == 0 && lo)
        s = (hbg__stack){(uintptr_t)lo, (uintptr_t)lo + size};
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
    unsigned char here;
    uintptr_t sp = (uintptr_t)&here;
    /* Stacks of different threads do not overlap: inside s is on s. */
    if (sp > s.lo && sp < s.hi && sp - s.lo > 2 * HBG_STACK_HOT)
        touch();
}
