/* The per-op record pool behind host_phase_records.jsonl.
 *
 * Hot path (hbg_rec): a thread finds its own buffer through a thread-local
 * cache and appends one fixed-size record. No lock, no allocation, no shared
 * cache line written except the owner's own buffer — the only atomic
 * read-modify-write is claiming a buffer, once per thread per pass, and
 * counting a drop.
 *
 * The cache is keyed by pool pointer *and* pass generation. Generations come
 * from one process-wide counter, so neither a new pass of the same pool nor
 * a new pool allocated at a freed pool's address can be mistaken for the
 * pass a thread last recorded into.
 *
 * Bounded means bounded: a full buffer, or a thread arriving when every
 * buffer is claimed, counts the record in `dropped` and stores nothing. An
 * earlier record is never overwritten, so what the file shows is a true
 * prefix of each thread's operations and `dropped` says how much is missing.
 *
 * Concurrency contract: records of a pass are stored between arm and disarm;
 * arm and write_jsonl run while no thread records into the pool (the bind
 * pipeline arms before host_orch starts and writes after it has ended). A
 * record's slot is published with a release store of the buffer's count, so
 * a reader that synchronised with the recording threads sees whole records.
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/recpool_hold.h"
#include "trace/recticks.h"
#include "util/fdio.h"
#include "trace/trace_internal.h"

typedef struct rec {
    uint64_t start_ns, end_ns, detail; /* times in ticks while phase has REC_TICKS */
    uint32_t tid;
    uint32_t phase;
} rec;

/* A record whose times are still in the operation clock's ticks; one that
 * could not be placed (no map) and has been counted as dropped. */
#define REC_TICKS 0x80000000u
#define REC_DEAD 0xffffffffu

/* One thread's buffer, alone on its cache line(s) so that recording threads
 * never write the same line. */
typedef struct buf {
    _Atomic uint32_t n;
    _Atomic uint32_t tid; /* atomic: claim() reads other threads' buffers */
    rec *recs;
    char pad[64 - sizeof(uint32_t) * 2 - sizeof(rec *)];
} buf;
_Static_assert(sizeof(buf) == 64, "one cache line per thread buffer");

struct hbg_recpool {
    unsigned max_threads, per_thread;
    _Atomic uint64_t gen;          /* 0: disarmed; otherwise this pass's generation */
    _Atomic(const void *) holder;  /* the runtime that arms it (recpool_hold.h) */
    uint64_t last_gen;             /* the last pass armed, for write_jsonl */
    _Atomic uint32_t nclaimed;
    _Atomic uint64_t dropped;
    uint32_t pid;
    uint64_t inv;
    buf *bufs;
    rec *storage;
    hbg__clockmap map;             /* ticks to ns for REC_TICKS records */
    bool have_map;
    uint32_t *order, *scratch;     /* merge-sort index arrays, sized up front */
    char *line;                    /* the jsonl line, sized up front */
    size_t line_cap;
};

static _Atomic uint64_t next_gen = 1;

#define CACHE_SLOTS 4
static _Thread_local struct {
    const hbg_recpool *pool;
    uint64_t gen;
    buf *b; /* NULL: this thread found no free buffer in that pass */
} cache[CACHE_SLOTS];
static _Thread_local unsigned cache_next;

/* Longest record object including its ", " separator: see put_record. */
#define REC_JSON_MAX 160
#define HEAD_JSON_MAX 256

hbg_status hbg_recpool_create(unsigned max_threads, unsigned per_thread, hbg_recpool **out)
{
    if (!out)
        return HBG_E_INVAL;
    *out = NULL;
    if (max_threads == 0 || per_thread == 0)
        return HBG_E_INVAL;
    uint64_t total = (uint64_t)max_threads * per_thread;
    if (total > UINT32_MAX / 2 || total > (SIZE_MAX - HEAD_JSON_MAX) / REC_JSON_MAX)
        return HBG_E_INVAL;
    hbg_recpool *p = calloc(1, sizeof *p);
    if (!p)
        return HBG_E_NOMEM;
    p->max_threads = max_threads;
    p->per_thread = per_thread;
    p->bufs = aligned_alloc(64, sizeof(buf) * max_threads);
    p->storage = malloc(sizeof(rec) * total);
    p->order = malloc(sizeof(uint32_t) * total);
    p->scratch = malloc(sizeof(uint32_t) * total);
    p->line_cap = HEAD_JSON_MAX + REC_JSON_MAX * (size_t)total;
    p->line = malloc(p->line_cap);
    if (!p->bufs || !p->storage || !p->order || !p->scratch || !p->line) {
        hbg_recpool_destroy(p);
        return HBG_E_NOMEM;
    }
    for (unsigned i = 0; i < max_threads; i++) {
        atomic_init(&p->bufs[i].n, 0);
        atomic_init(&p->bufs[i].tid, 0);
        p->bufs[i].recs = p->storage + (size_t)i * per_thread;
    }
    atomic_init(&p->gen, 0);
    atomic_init(&p->holder, NULL);
    atomic_init(&p->nclaimed, 0);
    atomic_init(&p->dropped, 0);
    *out = p;
    return HBG_OK;
}

void hbg_recpool_destroy(hbg_recpool *p)
{
    if (!p)
        return;
    free(p->bufs);
    free(p->storage);
    free(p->order);
    free(p->scratch);
    free(p->line);
    free(p);
}

void hbg_recpool_arm(hbg_recpool *p, uint32_t pid, uint64_t inv)
{
    if (!p)
        return;
    p->pid = pid;
    p->inv = inv;
    for (unsigned i = 0; i < p->max_threads; i++) {
        atomic_store_explicit(&p->bufs[i].n, 0, memory_order_relaxed);
        atomic_store_explicit(&p->bufs[i].tid, 0, memory_order_relaxed);
    }
    atomic_store_explicit(&p->nclaimed, 0, memory_order_relaxed);
    atomic_store_explicit(&p->dropped, 0, memory_order_relaxed);
    p->have_map = false;
    p->last_gen = atomic_fetch_add_explicit(&next_gen, 1, memory_order_relaxed);
    atomic_store_explicit(&p->gen, p->last_gen, memory_order_release);
}

bool hbg__recpool_hold(hbg_recpool *p, const void *who)
{
    const void *none = NULL;
    return atomic_compare_exchange_strong(&p->holder, &none, who);
}

void hbg__recpool_release(hbg_recpool *p, const void *who)
{
    const void *mine = who;
    atomic_compare_exchange_strong(&p->holder, &mine, NULL);
}

void hbg_recpool_disarm(hbg_recpool *p)
{
    if (p)
        atomic_store_explicit(&p->gen, 0, memory_order_release);
}

bool hbg_recpool_armed(const hbg_recpool *p)
{
    return p && atomic_load_explicit(&p->gen, memory_order_acquire) != 0;
}

static unsigned claimed(const hbg_recpool *p)
{
    uint32_t c = atomic_load_explicit(&p->nclaimed, memory_order_acquire);
    return c < p->max_threads ? c : p->max_threads;
}

/* A buffer this thread claimed earlier in this pass and whose cache slot
 * has since gone to other pools (a thread recording into more than
 * CACHE_SLOTS armed pools at once). Without this look-up each return to
 * the pool claimed one more buffer, and the pool ran out of buffers for
 * its other threads. A tid is unique among live threads; one reused
 * within a pass belongs to a thread that started after the first ended,
 * and the acquire load of n orders its records after the first's. */
static buf *own_buf(hbg_recpool *p, uint32_t tid)
{
    for (unsigned i = 0, c = claimed(p); i < c; i++)
        if (atomic_load_explicit(&p->bufs[i].tid, memory_order_relaxed) == tid) {
            (void)atomic_load_explicit(&p->bufs[i].n, memory_order_acquire);
            return &p->bufs[i];
        }
    return NULL;
}

/* A free buffer for this thread, or NULL when every one is taken. */
static buf *new_buf(hbg_recpool *p, uint32_t tid)
{
    uint32_t i = atomic_fetch_add_explicit(&p->nclaimed, 1, memory_order_relaxed);
    if (i >= p->max_threads) {
        /* Undo, so nclaimed cannot creep towards wrapping however many
         * threads arrive late. */
        atomic_fetch_sub_explicit(&p->nclaimed, 1, memory_order_relaxed);
        return NULL;
    }
    atomic_store_explicit(&p->bufs[i].tid, tid, memory_order_relaxed);
    return &p->bufs[i];
}

/* The slow path: the first record of this thread in this pass, or its
 * first since the cache forgot this pool. */
static buf *claim(hbg_recpool *p, uint64_t gen)
{
    uint32_t tid = hbg_gettid();
    buf *b = own_buf(p, tid);
    if (!b)
        b = new_buf(p, tid);
    unsigned slot = cache_next++ % CACHE_SLOTS;
    cache[slot].pool = p;
    cache[slot].gen = gen;
    cache[slot].b = b;
    return b;
}

/* hbg_rec's body; `flag` is REC_TICKS for a record in ticks. */
static inline void put(hbg_recpool *p, hbg_phase phase, uint32_t flag, uint64_t start_ns, uint64_t end_ns,
                       uint64_t detail)
{
    if (!p)
        return;
    uint64_t gen = atomic_load_explicit(&p->gen, memory_order_acquire);
    if (!gen)
        return;
    buf *b;
    if (cache[0].pool == p && cache[0].gen == gen) {
        b = cache[0].b;
    } else {
        unsigned i = 1;
        while (i < CACHE_SLOTS && !(cache[i].pool == p && cache[i].gen == gen))
            i++;
        b = i < CACHE_SLOTS ? cache[i].b : claim(p, gen);
    }
    uint32_t n = b ? atomic_load_explicit(&b->n, memory_order_relaxed) : 0;
    if (!b || n >= p->per_thread || (unsigned)phase >= HBG_PHASE_COUNT) {
        atomic_fetch_add_explicit(&p->dropped, 1, memory_order_relaxed);
        return;
    }
    rec *r = &b->recs[n];
    r->start_ns = start_ns;
    r->end_ns = end_ns;
    r->detail = detail;
    r->tid = atomic_load_explicit(&b->tid, memory_order_relaxed);
    r->phase = (uint32_t)phase | flag;
    atomic_store_explicit(&b->n, n + 1, memory_order_release);
}

void hbg_rec(hbg_recpool *p, hbg_phase phase, uint64_t start_ns, uint64_t end_ns, uint64_t detail)
{
    put(p, phase, 0, start_ns, end_ns, detail);
}

void hbg__rec_ticks(hbg_recpool *p, hbg_phase phase, uint64_t start, uint64_t end, uint64_t detail)
{
    put(p, phase, REC_TICKS, start, end, detail);
}

void hbg__recpool_set_map(hbg_recpool *p, const hbg__clockmap *map)
{
    if (!p)
        return;
    p->map = *map;
    p->have_map = true;
}

uint64_t hbg_recpool_count(const hbg_recpool *p)
{
    if (!p)
        return 0;
    uint64_t sum = 0;
    for (unsigned i = 0, c = claimed(p); i < c; i++)
        sum += atomic_load_explicit(&p->bufs[i].n, memory_order_acquire);
    return sum;
}

uint64_t hbg_recpool_dropped(const hbg_recpool *p)
{
    return p ? atomic_load_explicit(&p->dropped, memory_order_relaxed) : 0;
}

/* Stable bottom-up merge sort of record indices by start_ns. Stability keeps
 * records with equal start_ns in buffer-claim, then recording, order. */
static uint32_t *sort_by_start(hbg_recpool *p, uint32_t n)
{
    uint32_t *a = p->order, *t = p->scratch;
    for (uint32_t w = 1; w < n; w *= 2) {
        for (uint32_t lo = 0; lo < n; lo += 2 * w) {
            uint32_t mid = lo + w < n ? lo + w : n;
            uint32_t hi = lo + 2 * w < n ? lo + 2 * w : n;
            uint32_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                t[k++] = p->storage[a[j]].start_ns < p->storage[a[i]].start_ns ? a[j++] : a[i++];
            while (i < mid)
                t[k++] = a[i++];
            while (j < hi)
                t[k++] = a[j++];
        }
        uint32_t *x = a;
        a = t;
        t = x;
    }
    return a;
}

hbg_status hbg_recpool_write_jsonl(hbg_recpool *p, int fd)
{
    if (!p || fd < 0)
        return HBG_E_INVAL;
    if (!p->last_gen)
        return HBG_E_STATE;
    /* Gather every buffer's records into index order, times in ns, then
     * sort. A tick record is converted in place, once: its flag goes. */
    uint32_t n = 0;
    uint64_t unplaced = 0;
    for (unsigned i = 0, c = claimed(p); i < c; i++) {
        uint32_t bn = atomic_load_explicit(&p->bufs[i].n, memory_order_acquire);
        uint32_t base = (uint32_t)(p->bufs[i].recs - p->storage);
        for (uint32_t j = 0; j < bn; j++) {
            rec *r = &p->storage[base + j];
            if (r->phase == REC_DEAD)
                continue;
            if (r->phase & REC_TICKS) {
                if (!p->have_map) {
                    r->phase = REC_DEAD;
                    unplaced++;
                    continue;
                }
                r->start_ns = hbg__clockmap_ns(&p->map, r->start_ns);
                r->end_ns = hbg__clockmap_ns(&p->map, r->end_ns);
                r->phase &= ~REC_TICKS;
            }
            p->order[n++] = base + j;
        }
    }
    if (unplaced)
        atomic_fetch_add_explicit(&p->dropped, unplaced, memory_order_relaxed);
    const uint32_t *sorted = sort_by_start(p, n);

    char *s = p->line;
    size_t len = (size_t)snprintf(s, HEAD_JSON_MAX,
                                  "{\"pid\": %" PRIu32 ", \"inv\": %" PRIu64
                                  ", \"clock\": \"host_monotonic_ns\", \"dropped\": %" PRIu64
                                  ", \"records\": [",
                                  p->pid, p->inv, hbg_recpool_dropped(p));
    for (uint32_t i = 0; i < n; i++) {
        const rec *r = &p->storage[sorted[i]];
        len += (size_t)snprintf(s + len, REC_JSON_MAX,
                                "%s{\"phase\": \"%s\", \"start_ns\": %" PRIu64 ", \"end_ns\": %" PRIu64
                                ", \"detail\": %" PRIu64 ", \"tid\": %" PRIu32 "}",
                                i ? ", " : "", hbg_phase_name((hbg_phase)r->phase), r->start_ns,
                                r->end_ns, r->detail, r->tid);
    }
    memcpy(s + len, "]}\n", 3);
    len += 3;
    /* One write when the kernel takes it whole: on an O_APPEND file this
     * line does not interleave with another rank's. errno stays set. */
    return hbg__write_all(fd, s, len) ? HBG_E_IO : HBG_OK;
}
