/* The start line of hbg run's ranks (see startline.h). */
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <time.h>
#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

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

/* A waiting rank sleeps on the counter until an arrival changes it: on
 * Linux a futex on the shared page (not FUTEX_PRIVATE: the ranks are
 * processes), so a rank waiting at the finish line costs its core
 * nothing while its peer binds its last pass. It polled with 50 us naps
 * before, some 20,000 wake-ups a second. Elsewhere, the naps. Either way
 * the caller looks again after each return: a wake-up may be spurious,
 * and a change before the sleep makes it return at once. */
static void line_sleep(_Atomic uint32_t *word, uint32_t seen, uint64_t ns)
{
#if defined(__linux__)
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT, seen, &ts, NULL, 0);
#else
    (void)word, (void)seen;
    struct timespec nap = {0, ns < 50000 ? (long)ns : 50000};
    nanosleep(&nap, NULL);
#endif
}

static void line_wake(_Atomic uint32_t *word)
{
#if defined(__linux__)
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
#else
    (void)word;
#endif
}

void startline_arrive(run_startline *s, uint32_t rank)
{
    if (s && rank < s->n && atomic_exchange(&s->in[rank], 1) == 0) {
        atomic_fetch_add(&s->arrived, 1);
        line_wake(&s->arrived);
    }
}

bool startline_wait(run_startline *s, uint32_t rank, uint64_t timeout_ns)
{
    if (!s)
        return true;
    startline_arrive(s, rank);
    uint64_t deadline = hbg_mono_ns() + timeout_ns;
    uint32_t seen;
    while ((seen = atomic_load(&s->arrived)) < s->n) {
        uint64_t now = hbg_mono_ns();
        if (now >= deadline)
            return false;
        line_sleep(&s->arrived, seen, deadline - now);
    }
    return true;
}

bool startline_arrived(const run_startline *s, uint32_t rank)
{
    return !s || rank >= s->n || atomic_load(&s->in[rank]) != 0;
}
