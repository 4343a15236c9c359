/* The start line of hbg run's ranks (see startline.h). */
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <time.h>

#include "cli/startline.h"
#include "hbg/trace.h"

struct run_startline {
    _Atomic uint32_t arrived;
    uint32_t n;
};

run_startline *startline_create(uint32_t n)
{
    run_startline *s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (s == MAP_FAILED)
        return NULL;
    atomic_init(&s->arrived, 0);
    s->n = n;
    return s;
}

void startline_destroy(run_startline *s)
{
    if (s)
        munmap(s, sizeof *s);
}

void startline_arrive(run_startline *s)
{
    if (s)
        atomic_fetch_add(&s->arrived, 1);
}

bool startline_wait(run_startline *s, uint64_t timeout_ns)
{
    if (!s)
        return true;
    startline_arrive(s);
    uint64_t deadline = hbg_mono_ns() + timeout_ns;
    /* A short sleep between looks: the wait is once per run and ends when
     * the slowest set-up does, so 50 us of lateness is noise, and the
     * waiting rank leaves its core to the peer still setting up. */
    struct timespec nap = {0, 50000};
    while (atomic_load(&s->arrived) < s->n) {
        if (hbg_mono_ns() >= deadline)
            return false;
        nanosleep(&nap, NULL);
    }
    return true;
}
