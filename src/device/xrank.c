/* Cross-rank services: one shared mapping made before the ranks fork.
 *
 * Layout: [header | per-rank counters | windows], windows page-aligned.
 * A counter slot holds (epoch + 1) << COUNT_BITS | arrivals, so a slot
 * reused by a later epoch is told apart by its tag rather than by being
 * cleared, which nobody could do safely while a peer may be signalling.
 * Each rank also has a 32-bit sequence word that every signal bumps: it is
 * the futex waiters sleep on, so a waiting rank costs no CPU.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "hbg/xrank.h"

#define XR_MAGIC 0x6862677872616e6bull /* "hbgxrank" */
#define COUNT_BITS 20
#define COUNT_MASK ((1ull << COUNT_BITS) - 1)
#define MAX_EPOCH ((1ull << (64 - COUNT_BITS - 1)) - 2)
/* Longest single sleep: a missed wake-up costs at most this much. */
#define MAX_NAP_NS (5ull * 1000 * 1000)

typedef struct xr_rank {
    _Atomic uint32_t seq;
    uint32_t pad;
    _Atomic uint64_t slot[HBG_XRANK_SLOTS];
} xr_rank;

struct hbg_xrank {
    uint64_t magic;
    uint32_t nranks;
    uint32_t pad;
    uint64_t window_bytes;
    uint64_t timeout_ns;
    uint64_t map_bytes;
    uint64_t windows_off;
    _Atomic uint64_t gone;  /* bit per rank abandoned (hbg_xrank_abandon) */
    xr_rank ranks[];
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t round_up(uint64_t v, uint64_t a)
{
    return (v + a - 1) / a * a;
}

hbg_status hbg_xrank_create(uint32_t nranks, uint64_t window_bytes, uint64_t timeout_ns, hbg_xrank **out)
{
    if (!out)
        return HBG_E_INVAL;
    *out = NULL;
    if (nranks == 0 || nranks > HBG_XRANK_MAX_RANKS || window_bytes > (1ull << 40))
        return HBG_E_INVAL;
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t head = round_up(sizeof(hbg_xrank) + (uint64_t)nranks * sizeof(xr_rank), page);
    uint64_t win = round_up(window_bytes, page);
    uint64_t bytes = head + win * nranks;
    void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return HBG_E_NOMEM;
    hbg_xrank *x = m; /* the mapping comes zeroed: every slot is "no epoch" */
    x->magic = XR_MAGIC;
    x->nranks = nranks;
    x->window_bytes = win;
    x->timeout_ns = timeout_ns ? timeout_ns : HBG_XRANK_DEFAULT_TIMEOUT_NS;
    x->map_bytes = bytes;
    x->windows_off = head;
    *out = x;
    return HBG_OK;
}

void hbg_xrank_destroy(hbg_xrank *x)
{
    if (x && x->magic == XR_MAGIC)
        munmap(x, x->map_bytes);
}

uint32_t hbg_xrank_nranks(const hbg_xrank *x) { return x ? x->nranks : 0; }
uint64_t hbg_xrank_window_bytes(const hbg_xrank *x) { return x ? x->window_bytes : 0; }
uint64_t hbg_xrank_timeout_ns(const hbg_xrank *x) { return x ? x->timeout_ns : 0; }

void *hbg_xrank_window(hbg_xrank *x, uint32_t rank)
{
    if (!x || rank >= x->nranks)
        return NULL;
    return (unsigned char *)x + x->windows_off + (uint64_t)rank * x->window_bytes;
}

hbg_status hbg_xrank_signal(hbg_xrank *x, uint32_t rank, uint64_t epoch)
{
    if (!x || rank >= x->nranks || epoch > MAX_EPOCH)
        return HBG_E_INVAL;
    xr_rank *r = &x->ranks[rank];
    _Atomic uint64_t *s = &r->slot[epoch % HBG_XRANK_SLOTS];
    uint64_t tag = (epoch + 1) << COUNT_BITS;
    uint64_t old = atomic_load_explicit(s, memory_order_relaxed), nv;
    do {
        /* A slot still tagged with an older epoch is simply taken over. */
        nv = (old & ~COUNT_MASK) == tag ? old + ((old & COUNT_MASK) < COUNT_MASK) : tag | 1;
    } while (!atomic_compare_exchange_weak_explicit(s, &old, nv, memory_order_release, memory_order_relaxed));
    atomic_fetch_add_explicit(&r->seq, 1, memory_order_release);
    syscall(SYS_futex, (uint32_t *)&r->seq, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
    return HBG_OK;
}

hbg_status hbg_xrank_abandon(hbg_xrank *x, uint32_t rank)
{
    if (!x || rank >= x->nranks)
        return HBG_E_INVAL;
    atomic_fetch_or_explicit(&x->gone, 1ull << rank, memory_order_release);
    for (uint32_t r = 0; r < x->nranks; r++) {
        atomic_fetch_add_explicit(&x->ranks[r].seq, 1, memory_order_release);
        syscall(SYS_futex, (uint32_t *)&x->ranks[r].seq, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
    }
    return HBG_OK;
}

hbg_status hbg_xrank_wait(hbg_xrank *x, uint32_t rank, uint64_t epoch, uint32_t expected)
{
    if (!x || rank >= x->nranks || epoch > MAX_EPOCH || expected > COUNT_MASK)
        return HBG_E_INVAL;
    if (expected == 0)
        return HBG_OK;
    xr_rank *r = &x->ranks[rank];
    _Atomic uint64_t *s = &r->slot[epoch % HBG_XRANK_SLOTS];
    uint64_t tag = (epoch + 1) << COUNT_BITS;
    uint64_t start = now_ns();
    for (;;) {
        /* Read the sequence first: a signal landing after the slot check
         * changes it, so the futex call below returns at once. */
        uint32_t seq = atomic_load_explicit(&r->seq, memory_order_acquire);
        uint64_t v = atomic_load_explicit(s, memory_order_acquire);
        if ((v & ~COUNT_MASK) == tag && (v & COUNT_MASK) >= expected)
            return HBG_OK;
        /* after the sequence: an abandon bumps it after setting the bit */
        if (atomic_load_explicit(&x->gone, memory_order_acquire))
            return HBG_E_PEER_GONE;
        uint64_t el = now_ns() - start;
        if (el >= x->timeout_ns)
            return HBG_E_PEER_TIMEOUT;
        uint64_t nap = x->timeout_ns - el;
        if (nap > MAX_NAP_NS)
            nap = MAX_NAP_NS;
        struct timespec ts = {(time_t)(nap / 1000000000ull), (long)(nap % 1000000000ull)};
        /* EAGAIN (the word moved), EINTR and ETIMEDOUT all mean: look again. */
        syscall(SYS_futex, (uint32_t *)&r->seq, FUTEX_WAIT, seq, &ts, NULL, 0);
    }
}
