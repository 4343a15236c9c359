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
    _Atomic uint8_t in[]; /* rank r has arrived: counted once */
};

static size_t line_bytes(uint32_t n)
{
    return sizeof(run_startline) + n;
}

run_startline *startline_create(uint32_t n)
{
    run_startline *s = mmap(NULL, line_bytes(n), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (s == MAP_FAILED)
        return NULL;
    atomic_init(&s->arrived, 0);
    s->n = n;
    for (uint32_t r = 0; r < n; r++)
        atomic_init(&s->in[r], 0);
    return s;
}

void startline_destroy(run_startline *s)
{
    if (s)
        munmap(s, line_bytes(s->n));
}

void startline_arrive(run_startline *s, uint32_t rank)
{
    if (s && rank < s->n && atomic_exchange(&s->in[rank], 1) == 0)
        atomic_fetch_add(&s->arrived, 1);
}

bool startline_wait(run_startline *s, uint32_t rank, uint64_t timeout_ns)
{
    if (!s)
        return true;
    startline_arrive(s, rank);
    uint64_t deadline = hbg_mono_ns() + timeout_ns;
    /* A short sleep between looks: the wait is twice per run and ends when
     * the slowest rank arrives, so 50 us of lateness is noise, and the
     * waiting rank leaves its core to the peer still working. */
    struct timespec nap = {0, 50000};
    while (atomic_load(&s->arrived) < s->n) {
        if (hbg_mono_ns() >= deadline)
            return false;
        nanosleep(&nap, NULL);
    }
    return true;
}

bool startline_arrived(const run_startline *s, uint32_t rank)
{
    return !s || rank >= s->n || atomic_load(&s->in[rank]) != 0;
}
