/* The tensor map: who last wrote which part of which buffer.
 *
 * A reader depends on every live writer whose region overlaps its own; a
 * covering in-place write retires the writers it covers.
 *
 * Workloads carve hundreds of tiles out of one scratch buffer, so a plain
 * per-buffer list would make every submit scan every tile (quadratic in
 * the tiles). Instead a buffer that receives a partial write gets a block
 * of bucket heads at two resolutions: 256 fine buckets, one per 1/256 of
 * the buffer, and 16 coarse ones, one per 16 fine. A writer is linked into
 * the fine buckets it touches when they are a few, else into the coarse
 * ones when those are a few, else into the buffer's wide list; every
 * writer also goes into the buffer's full list. A narrow query walks its
 * fine buckets, its coarse buckets and the wide list; a broad one walks
 * the full list. The coarse level is for the column tiles of a row-major
 * matrix: each spans its rows' bytes, too many fine buckets, yet only a
 * sixteenth of the buffer, so without it every tile would land on the
 * wide list and each write would walk all its siblings. Bucket heads are a
 * plain array, not a hash, so a probe is one load.
 * Retired writers are marked dead and unlinked lazily by whichever walk
 * meets them first.
 *
 * Everything is sized at creation and reset in O(1) per pass by bumping a
 * generation, so the map never allocates or clears memory on the hot path.
 */
#ifndef HBG_ORCH_TENSORMAP_H
#define HBG_ORCH_TENSORMAP_H

#include <stdbool.h>
#include <stdint.h>
#include "hbg/status.h"
#include "hbg/tensor.h"
#include "util/bytes.h"

#define HBG_TMAP_BUCKETS_LOG2 8   /* 256 buckets per buffer */
#define HBG_TMAP_NARROW 4         /* a writer touching more buckets goes wide */
#define HBG_TMAP_PROBE_MAX 32     /* a query touching more walks the full list */

typedef struct hbg__tmap_buf {
    uint64_t addr;
    uint32_t gen;
    uint8_t shift;       /* bucket = byte offset >> shift */
    uint8_t small;       /* spans a few buckets at most: no block, lists only */
    uint8_t coarse;      /* some writer is in its coarse buckets */
    uint32_t all, wide;  /* entry lists (TMAP_NIL-terminated) */
    uint32_t block;      /* bucket heads, or TMAP_NIL before a narrow write */
} hbg__tmap_buf;

#define HBG_TMAP_NBUCKETS (1u << HBG_TMAP_BUCKETS_LOG2)
#define HBG_TMAP_COARSE_LOG2 4    /* a coarse bucket spans 16 fine ones */
#define HBG_TMAP_NCOARSE (HBG_TMAP_NBUCKETS >> HBG_TMAP_COARSE_LOG2)
/* A block: the fine heads, then the coarse ones. */
#define HBG_TMAP_BLOCK_HEADS (HBG_TMAP_NBUCKETS + HBG_TMAP_NCOARSE)

typedef struct hbg__tmap_entry {
    uint64_t lo, hi;          /* byte range relative to the buffer start */
    const hbg_tensor *view;   /* the writer's view (stable for the pass) */
    uint32_t writer;          /* task or node id */
    uint32_t next_all, next_wide;
    uint8_t dead;
    uint8_t boxed;            /* its hbg__tmap_box is computed */
    uint8_t dense;            /* HBG_TMAP_DENSE_* (below); UNKNOWN until needed */
} hbg__tmap_entry;
/* A view's element box (see hbg__views_overlap): the start of each
 * dimension, whether the strides allow one (ok), and the first dimension
 * past 0 that runs out of its stride (ndim when none). Computed at most
 * once per entry, on the first comparison that needs it: each is a few
 * 64-bit divisions, and one entry meets many queries. */
typedef struct hbg__tmap_box {
    uint64_t start[HBG_MAX_DIMS];
    uint8_t ok, valid;
} hbg__tmap_box;

typedef struct hbg__tmap_link {
    uint32_t entry, next;
} hbg__tmap_link;

#define HBG_TMAP_FILTER_BITS (1u << 16)

/* One query or write of an epoch (the calls between two resets), as the
 * journal keeps it (see "The journal" below). */
typedef struct hbg__tmap_jcall {
    hbg_tensor view;   /* the caller's view, by value */
    uint64_t lo, hi;
    uint32_t aux;      /* a write's writer; a query's count of reports */
    uint8_t op;        /* HBG__TMAP_J* */
    uint8_t dense;     /* as the caller passed it */
    uint8_t links;     /* a write: links it added to the map */
    uint8_t newbuf;    /* a write: it claimed its buffer's record */
} hbg__tmap_jcall;

enum { HBG__TMAP_JREAD = 1, HBG__TMAP_JWRITE, HBG__TMAP_JRETIRE };

typedef struct hbg__tmap_journal {
    hbg__tmap_jcall *calls;
    uint32_t *reports;        /* the writers each query reported, in order */
    uint32_t cap_calls, cap_reports;
    uint32_t ncalls, nreports; /* the last epoch's, or this one's so far */
    uint32_t at, at_report;   /* following: the next call to match */
    bool following;           /* the map has not applied calls [0, at) */
    bool stopped;             /* this epoch records no more */
    uint8_t epochs;           /* resets seen, up to 2: the first epoch makes no journal */
} hbg__tmap_journal;

typedef struct hbg__tmap {
    /* One bit per hash of a written buffer's address: most reads are of
     * buffers nothing in the pass wrote (weights, inputs), and a clear bit
     * in this 8 KB, cache-resident filter answers them without probing the
     * much larger buffer table. */
    uint64_t filter[HBG_TMAP_FILTER_BITS / 64];
    /* The buffer table, hashed by address, grows by doubling inside a
     * reservation for the worst case (buf_max_mask + 1 slots): a pass
     * touches only as many slots as it has buffers, so the table stays in
     * cache instead of spreading a few thousand buffers over megabytes.
     * It never shrinks; spare, past the largest size in the same
     * reservation, holds the live records while it doubles. */
    hbg__tmap_buf *bufs, *spare;
    uint32_t buf_mask, buf_max_mask, nbufs;
    uint32_t *blocks;    /* cap_blocks x HBG_TMAP_BLOCK_HEADS link heads */
    uint32_t nblocks, cap_blocks;
    uint32_t gen;
    hbg__tmap_entry *entries;
    hbg__tmap_box *boxes;  /* one per entry, filled when first needed */
    uint32_t nentries, cap_entries;
    hbg__tmap_link *links;
    uint32_t nlinks, cap_links;
    hbg__tmap_journal j;  /* calls == NULL: no journal */
} hbg__tmap;

#define TMAP_NIL 0xffffffffu

/* False when nothing in the pass wrote the buffer at `addr`. Inline so a
 * caller looking at many buffers (a replay's boundary) pays a load and a
 * test for each unwritten one. */
static inline uint32_t hbg__tmap_filter_bit(uint64_t addr)
{
    return (uint32_t)(addr >> 6 ^ addr >> 22) & (HBG_TMAP_FILTER_BITS - 1);
}

static inline bool hbg__tmap_may_hold(const hbg__tmap *m, uint64_t addr)
{
    uint32_t f = hbg__tmap_filter_bit(addr);
    return m->filter[f >> 6] >> (f & 63) & 1;
}

/* Sets filter bit f: a buffer whose address hashes there was claimed. */
static inline void hbg__tmap_filter_set(hbg__tmap *m, uint32_t f)
{
    m->filter[f >> 6] |= 1ull << (f & 63);
}

/* Whether writes to the n buffers at addr (repeats allowed) fit: entries,
 * links, and the buffer table. A task asks before its first write, so one
 * refused for room leaves the map as it was (a write that failed halfway
 * would leave entries naming a task id the next task gets). The common case
 * is decided without looking at addr; near a full buffer table the
 * buffers not yet in it are counted. While the map follows its journal
 * the counts are those the journal says the map would have. */
bool hbg__tmap_fits_slow(hbg__tmap *m, const uint64_t *addr, uint32_t n);
static inline bool hbg__tmap_fits(hbg__tmap *m, const uint64_t *addr, uint32_t n)
{
    if ((uint64_t)m->nentries + n > m->cap_entries ||
        (uint64_t)m->nlinks + (uint64_t)n * HBG_TMAP_NARROW > m->cap_links)
        return false;
    if (((uint64_t)m->nbufs + n) * 2 <= (uint64_t)m->buf_max_mask + 1)
        return true;
    return hbg__tmap_fits_slow(m, addr, n);
}

/* After hbg__tmap_fits refused n writes: whether its entries (true) or
 * its table of written buffers (false) are what is full, with that
 * pool's size in *size. For the words of the failure only. */
bool hbg__tmap_full_entries(const hbg__tmap *m, uint32_t n, uint64_t *size);

hbg_status hbg__tmap_init(hbg__tmap *m, uint32_t buffers, uint32_t entries);
void hbg__tmap_free(hbg__tmap *m);
/* Empties the map: the next epoch starts (and may follow the journal). */
void hbg__tmap_reset(hbg__tmap *m);

/* The journal.
 *
 * A decode step submits the same tasks on the same views pass after pass,
 * so the map is asked the same questions in the same order, and, being a
 * function of the calls since its reset, gives the same answers. With a
 * journal the map keeps each epoch's calls (every write, and every query
 * the address filter lets through) with the writers each query reported.
 * The next epoch *follows* it: a call equal to the journal's next one, byte
 * for byte, is answered from the journal (a query re-reports its writers
 * to the caller's visitor, in the same order), and the map itself is left
 * untouched. At the first call that differs, the map catches up (applies
 * the journal's writes so far, the same calls as the walks it skipped)
 * and from then on answers by walking, journaling the calls anew for the
 * next epoch. So a follow is never a guess: nothing is answered from the
 * journal that the walk would not give, and the dependencies, fanin
 * order and counts are exactly those of a pass without one.
 * A call refused (its visitor or the map failed) ends the epoch's
 * journal before it; a journal full at `calls` keeps its prefix. The
 * first epoch after creation makes none (the second writes it). Sized at
 * creation (`calls` and `reports` are counts); the map works without
 * one (never enabled). */
hbg_status hbg__tmap_journal_init(hbg__tmap *m, uint32_t calls, uint32_t reports);
void hbg__tmap_journal_free(hbg__tmap *m);

/* True when two views of the same buffer can touch a common element. The
 * byte ranges decide unless both views share one nested stride layout, in
 * which case the per-dimension boxes decide (disjoint tiles of one matrix
 * interleave in bytes but not in elements). */
bool hbg__views_overlap(const hbg_tensor *a, uint64_t alo, uint64_t ahi,
                       const hbg_tensor *b, uint64_t blo, uint64_t bhi);

/* True when view `a` covers every element that `b` can touch. */
bool hbg__view_covers(const hbg_tensor *a, uint64_t alo, uint64_t ahi,
                     const hbg_tensor *b, uint64_t blo, uint64_t bhi);

/* Whether a view is contiguous (it covers every byte of its range), as
 * the callers below may pass it when they know it: HBG_TMAP_DENSE_UNKNOWN
 * has the map work it out when a comparison needs it. It depends on the
 * layout alone (shape, strides, dtype; hi - lo follows from them), not on
 * the offset, so a replay computes it once per boundary slot when the
 * Definition is recorded instead of at every comparison of every pass. */
enum { HBG_TMAP_DENSE_UNKNOWN = 0, HBG_TMAP_DENSE_YES = 1, HBG_TMAP_DENSE_NO = 2 };
uint8_t hbg__tmap_dense(const hbg_tensor *t, uint64_t lo, uint64_t hi);

typedef hbg_status (*hbg__tmap_visit)(void *ctx, uint32_t writer);

/* The journal's slow halves (tmapjournal.c): the map catches up, walks
 * and journals the call. */
hbg_status hbg__tmap_readers_deps_slow(hbg__tmap *m, const hbg_tensor *t, uint64_t lo, uint64_t hi,
                                      uint8_t dense, hbg__tmap_visit add, void *ctx);
hbg_status hbg__tmap_write_slow(hbg__tmap *m, const hbg_tensor *t, uint64_t lo, uint64_t hi, uint8_t dense,
                               uint32_t writer, bool retire);
/* Stops following: applies the journal's calls so far to the map. */
hbg_status hbg__tmap_catch_up(hbg__tmap *m);

/* A view is compared with the journal's as raw bytes: hbg_tensor has no
 * padding (its reserved fields are zero). */
_Static_assert(sizeof(hbg_tensor) % 16 == 0, "hbg_tensor is compared 16 bytes at a time");

/* The journal's next call, when the map is following and the call equals
 * it (the cheap, discriminating fields first); else NULL. */
static inline const hbg__tmap_jcall *hbg__tmap_next(const hbg__tmap *m, uint8_t op, const hbg_tensor *t,
                                                    uint64_t lo, uint64_t hi, uint8_t dense, uint32_t writer)
{
    const hbg__tmap_journal *j = &m->j;
    if (!j->following || j->at >= j->ncalls)
        return NULL;
    const hbg__tmap_jcall *c = &j->calls[j->at];
    if (c->op != op || c->lo != lo || c->hi != hi || c->dense != dense ||
        (op != HBG__TMAP_JREAD && c->aux != writer) || !hbg__same_bytes16(&c->view, t, sizeof *t))
        return NULL;
    return c;
}

/* Calls add(ctx, writer) for every live writer overlapping `t` [lo, hi)
 * (a writer may be reported more than once; callers de-duplicate).
 * `dense`: hbg__tmap_dense(t, lo, hi), or HBG_TMAP_DENSE_UNKNOWN.
 * Returns the first non-OK status add() returned. Inline, with the
 * journal's answer in the caller: its visitor is then a direct call. */
static inline hbg_status hbg__tmap_readers_deps(hbg__tmap *m, const hbg_tensor *t, uint64_t lo, uint64_t hi,
                                               uint8_t dense, hbg__tmap_visit add, void *ctx)
{
    if (!hbg__tmap_may_hold(m, t->addr))
        return HBG_OK;
    const hbg__tmap_jcall *c = hbg__tmap_next(m, HBG__TMAP_JREAD, t, lo, hi, dense, 0);
    if (!c)
        return hbg__tmap_readers_deps_slow(m, t, lo, hi, dense, add, ctx);
    hbg__tmap_journal *j = &m->j;
    const uint32_t *w = j->reports + j->at_report;
    for (uint32_t i = 0; i < c->aux; i++) {
        hbg_status st = add(ctx, w[i]);
        if (st) {
            /* The walk would have stopped at the same report; the
             * journal ends before this call. */
            if (!hbg__tmap_catch_up(m))
                j->stopped = true;
            return st;
        }
    }
    j->at++;
    j->at_report += c->aux;
    return HBG_OK;
}

/* A followed write that claimed its buffer's record: the buffer count
 * and the address filter bit `f`, as the walk's claim set them. */
static inline void hbg__tmap_follow_claim(hbg__tmap *m, uint32_t f)
{
    hbg__tmap_filter_set(m, f);
    m->nbufs++;
}

/* What following the journal's write `c` changes: the counts
 * hbg__tmap_fits reads and the address filter (the task memo follows a
 * task's writes so too, orch/taskmemo.h). */
static inline void hbg__tmap_follow_write(hbg__tmap *m, const hbg__tmap_jcall *c)
{
    m->nentries++;
    m->nlinks += c->links;
    if (c->newbuf)
        hbg__tmap_follow_claim(m, hbg__tmap_filter_bit(c->view.addr));
}

/* A stretch of one epoch's journal: the calls [at, at_end) and the
 * reports [rep, rep_end) of its queries. The task memo and the node memo
 * keep one per submit they note: a later epoch that follows the journal to
 * `at` is in the state the noted submit met, and moves past its calls as
 * following each of them would (hbg__tmap_span_follow). What that changes
 * is summed when the span closes (writes, links, and the filter bit of the
 * one buffer a write claimed, when one did), so that following a span
 * costs the same however many calls it holds: a replay of a wide boundary
 * makes one call per slot, and reading each 120-byte call again to skip
 * its queries cost more than comparing the slot; a dsv4 task's output is
 * a buffer its write claims, and reading the task's calls for its filter
 * bit cost a cache miss or more per task. A span whose writes claim two
 * buffers or more (a few a pass) is read call by call. 24 bytes, so a
 * note is one cache line (orch/taskmemo.h). */
typedef struct hbg__tmap_jspan {
    uint32_t at, at_end, rep, rep_end;
    uint16_t writes;  /* its writes (a submit makes at most a few hundred) */
    uint16_t links;   /* the links they added */
    uint16_t fbit;    /* newbufs == 1: the claimed buffer's filter bit */
    uint8_t newbufs;  /* buffers its writes claimed: 0, 1, or 2 for more */
} hbg__tmap_jspan;

_Static_assert(HBG_TMAP_FILTER_BITS - 1 <= UINT16_MAX, "a filter bit fits a span");

/* Where the journal stands: the next call to follow, or the end of what
 * this epoch has journaled so far. */
static inline void hbg__tmap_span_mark(const hbg__tmap *m, uint32_t *at, uint32_t *rep)
{
    const hbg__tmap_journal *j = &m->j;
    *at = j->following ? j->at : j->ncalls;
    *rep = j->following ? j->at_report : j->nreports;
}

/* Whether this epoch keeps its calls: a span noted now can be followed. */
static inline bool hbg__tmap_span_kept(const hbg__tmap *m)
{
    return m->j.calls && !m->j.stopped;
}

/* Closes a span opened (at, rep) with hbg__tmap_span_mark at the journal's
 * position now, summing what its writes add; false when the journal
 * stopped keeping calls meanwhile (or, which no submit does, the span
 * holds more writes or links than it counts). */
static inline bool hbg__tmap_span_close(const hbg__tmap *m, hbg__tmap_jspan *s)
{
    if (!hbg__tmap_span_kept(m))
        return false;
    hbg__tmap_span_mark(m, &s->at_end, &s->rep_end);
    uint32_t writes = 0, links = 0, newbufs = 0, fbit = 0;
    for (uint32_t k = s->at; k < s->at_end; k++) {
        const hbg__tmap_jcall *c = &m->j.calls[k];
        if (c->op == HBG__TMAP_JREAD)
            continue;
        writes++;
        links += c->links;
        if (c->newbuf && newbufs++ == 0)
            fbit = hbg__tmap_filter_bit(c->view.addr);
    }
    if (writes > UINT16_MAX || links > UINT16_MAX)
        return false;
    s->writes = (uint16_t)writes;
    s->links = (uint16_t)links;
    s->fbit = (uint16_t)fbit;
    s->newbufs = (uint8_t)(newbufs < 2 ? newbufs : 2);
    return true;
}

/* Whether the map follows its journal exactly at s's start, and the
 * journal holds all of s. */
static inline bool hbg__tmap_span_next(const hbg__tmap *m, const hbg__tmap_jspan *s)
{
    const hbg__tmap_journal *j = &m->j;
    return j->following && s->at == j->at && s->rep == j->at_report && s->at_end <= j->ncalls &&
           s->rep_end <= j->nreports;
}

/* Moves a map that hbg__tmap_span_next accepted past s, as following
 * each of its calls would (hbg__tmap_follow_write): writes change the
 * counts and the filter, queries only the position. */
static inline void hbg__tmap_span_follow(hbg__tmap *m, const hbg__tmap_jspan *s)
{
    hbg__tmap_journal *j = &m->j;
    m->nentries += s->writes;
    m->nlinks += s->links;
    if (s->newbufs == 1) {
        hbg__tmap_follow_claim(m, s->fbit);
    } else if (s->newbufs > 1) {
        for (uint32_t k = s->at; k < s->at_end; k++) {
            const hbg__tmap_jcall *c = &j->calls[k];
            if (c->op != HBG__TMAP_JREAD && c->newbuf)
                hbg__tmap_follow_claim(m, hbg__tmap_filter_bit(c->view.addr));
        }
    }
    j->at = s->at_end;
    j->at_report = s->rep_end;
}

/* Registers `writer` as the latest writer of t's region. With `retire`,
 * live writers whose regions t fully covers are dropped first. `dense` as
 * for hbg__tmap_readers_deps. Following, only what a caller can see
 * changes: the counts hbg__tmap_fits reads and the address filter. */
static inline hbg_status hbg__tmap_write(hbg__tmap *m, const hbg_tensor *t, uint64_t lo, uint64_t hi,
                                        uint8_t dense, uint32_t writer, bool retire)
{
    if (hi <= lo)
        return HBG_OK;
    const hbg__tmap_jcall *c =
        hbg__tmap_next(m, retire ? HBG__TMAP_JRETIRE : HBG__TMAP_JWRITE, t, lo, hi, dense, writer);
    if (!c)
        return hbg__tmap_write_slow(m, t, lo, hi, dense, writer, retire);
    hbg__tmap_follow_write(m, c);
    m->j.at++;
    return HBG_OK;
}

/* The map without its journal, for tmapjournal.c: a reset that leaves the
 * journal alone, a query of a buffer the filter lets through, a write of a
 * non-empty range, and the slow half of hbg__tmap_fits on the map as it
 * stands. */
void hbg__tmap_clear(hbg__tmap *m);
hbg_status hbg__tmap_walk_readers(hbg__tmap *m, const hbg_tensor *t, uint64_t lo, uint64_t hi, uint8_t dense,
                                 hbg__tmap_visit add, void *ctx);
hbg_status hbg__tmap_put(hbg__tmap *m, const hbg_tensor *t, uint64_t lo, uint64_t hi, uint8_t dense,
                        uint32_t writer, bool retire);
bool hbg__tmap_room_slow(const hbg__tmap *m, const uint64_t *addr, uint32_t n);

#endif
