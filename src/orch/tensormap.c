/* The tensor map (see tensormap.h). */
#include <stdlib.h>
#include <string.h>

#include "orch/tensormap.h"
#include "util/reserve.h"

static uint32_t pow2_at_least(uint32_t n)
{
    uint32_t p = 16;
    while (p < n && p < (1u << 30))
        p <<= 1;
    return p;
}

/* The buffer table's first size, in slots: 32 KB, room for 512 buffers,
 * inside the committed prefix of its reservation (util/reserve.h). */
#define TMAP_FIRST_SLOTS 1024u

/* The arrays of a map, reserved and released together, with the prefix
 * each commits at creation (util/reserve.h). The buffer table's
 * reservation holds, past its largest size, room for the half of it that
 * can be live when it doubles (the spare): one reservation, whose
 * committed prefix is the table's first slots; the spare's own first
 * TMAP_SPARE_HOT bytes are committed too (hbg__tmap_init). Blocks are
 * taken from the front, one per buffer that sees a narrow write, and a
 * dsv4 rank's pass takes some 320 (350 KB): past the default prefix each
 * new page of them, and of the spare, was a fault in the cold pass. */
#define HOT HBG_RESERVE_HOT
#define TMAP_ARRAYS(X)                                                             \
    X(bufs, ((size_t)m->buf_max_mask + 1) / 2 * 3, HOT)                            \
    X(blocks, (size_t)m->cap_blocks * HBG_TMAP_BLOCK_HEADS, (size_t)512 << 10)     \
    X(entries, (size_t)(m->cap_entries ? m->cap_entries : 1), HOT)                 \
    X(boxes, (size_t)(m->cap_entries ? m->cap_entries : 1), HOT)                   \
    X(links, (size_t)(m->cap_entries ? m->cap_entries : 1) * HBG_TMAP_NARROW, HOT)

#define TMAP_SPARE_HOT ((size_t)64 << 10)

hbg_status hbg__tmap_init(hbg__tmap *m, uint32_t buffers, uint32_t entries)
{
    memset(m, 0, sizeof *m);
    m->buf_max_mask = pow2_at_least(buffers * 2u) - 1;
    m->buf_mask = m->buf_max_mask < TMAP_FIRST_SLOTS - 1 ? m->buf_max_mask : TMAP_FIRST_SLOTS - 1;
    /* A block per buffer that ever sees a partial write; past the cap such
     * buffers fall back to their wide list (correct, just slower). */
    m->cap_blocks = buffers < 65536 ? buffers : 65536;
    m->cap_entries = entries;
    m->cap_links = entries * HBG_TMAP_NARROW;
    /* Reserved, not allocated (see util/reserve.h); the buffer table
     * starts small and doubles as a pass needs (grow_bufs). */
    bool ok = true;
#define RESERVE(name, n, hot) ok = ok && (m->name = hbg__reserve_hot((n) * sizeof *m->name, hot)) != NULL;
    TMAP_ARRAYS(RESERVE)
#undef RESERVE
    if (!ok) {
        hbg__tmap_free(m);
        return HBG_E_NOMEM;
    }
    m->spare = m->bufs + (size_t)m->buf_max_mask + 1;
    size_t sb = ((size_t)m->buf_max_mask + 1) / 2 * sizeof *m->spare;
    hbg__commit(m->spare, sb < TMAP_SPARE_HOT ? sb : TMAP_SPARE_HOT);
    m->gen = 1;
    return HBG_OK;
}

void hbg__tmap_free(hbg__tmap *m)
{
#define UNRESERVE(name, n, hot) hbg__unreserve(m->name, (n) * sizeof *m->name);
    TMAP_ARRAYS(UNRESERVE)
#undef UNRESERVE
    hbg__tmap_journal_free(m);
    memset(m, 0, sizeof *m);
}

void hbg__tmap_clear(hbg__tmap *m)
{
    /* A slot whose generation is not current reads as empty, so a reset is
     * one increment; only when the counter wraps are the tables cleared. */
    if (++m->gen == 0) {
        memset(m->bufs, 0, ((size_t)m->buf_mask + 1) * sizeof *m->bufs);
        m->gen = 1;
    }
    m->nbufs = m->nblocks = m->nentries = m->nlinks = 0;
    memset(m->filter, 0, sizeof m->filter);
}

static inline uint32_t mix64(uint64_t a)
{
    a ^= a >> 33;
    a *= 0xff51afd7ed558ccdull;
    a ^= a >> 33;
    return (uint32_t)a;
}

static unsigned ceil_log2(uint64_t v)
{
    unsigned l = 0;
    while (l < 63 && (1ull << l) < v)
        l++;
    return l;
}

/* Doubles the buffer table: the pass's live records are set aside, the
 * old slots emptied, and each record hashed again under the wider mask.
 * Slots past the old size were never used at this size, so they need no
 * clearing. Costs O(slots), only in the passes that first reach a size;
 * the records keep their contents (lists, blocks), so nothing else moves. */
static void grow_bufs(hbg__tmap *m)
{
    uint32_t n = 0, slots = m->buf_mask + 1;
    for (uint32_t i = 0; i < slots; i++)
        if (m->bufs[i].gen == m->gen)
            m->spare[n++] = m->bufs[i];
    memset(m->bufs, 0, (size_t)slots * sizeof *m->bufs);
    m->buf_mask = slots * 2 - 1;
    /* Up to 8192 slots lie in the reservation's committed prefix; past it
     * a page faults on its first use, as the spare's do. */
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = mix64(m->spare[k].addr) & m->buf_mask;
        while (m->bufs[i].gen == m->gen)
            i = (i + 1) & m->buf_mask;
        m->bufs[i] = m->spare[k];
    }
}

/* The buffer record of `addr`; with `t`, claimed if absent. NULL when absent
 * (or when the table is full at its largest). */
static hbg__tmap_buf *find_buf(hbg__tmap *m, uint64_t addr, const hbg_tensor *t, uint64_t hi)
{
    uint32_t i = mix64(addr) & m->buf_mask;
    for (;; i = (i + 1) & m->buf_mask) {
        hbg__tmap_buf *b = &m->bufs[i];
        if (b->gen != m->gen) {
            if (!t)
                return NULL;
            /* Keep the load under one half so probe chains stay short. */
            if ((m->nbufs + 1) * 2 > m->buf_mask + 1) {
                if (m->buf_mask == m->buf_max_mask)
                    return NULL;
                grow_bufs(m);
                return find_buf(m, addr, t, hi); /* absent still: claims a slot */
            }
            hbg__tmap_filter_set(m, hbg__tmap_filter_bit(addr));
            uint64_t size = t->nbytes > hi ? t->nbytes : hi;
            unsigned l = ceil_log2(size);
            b->gen = m->gen;
            b->addr = addr;
            b->shift = (uint8_t)(l > HBG_TMAP_BUCKETS_LOG2 + 6 ? l - HBG_TMAP_BUCKETS_LOG2 : 6);
            /* Buckets only pay in a buffer many writers can share apart;
             * one of a few buckets (a scalar, a small table) would fill a
             * whole block of heads to index a handful of writes. */
            b->small = size > 0 && (size - 1) >> b->shift < HBG_TMAP_NARROW;
            b->all = b->wide = TMAP_NIL;
            b->block = TMAP_NIL;
            b->coarse = 0;
            m->nbufs++;
            return b;
        }
        if (b->addr == addr)
            return b;
    }
}

/* Per-dimension element boxes, available when the strides are positive and
 * each divides the one before it (a row-major layout, possibly padded).
 * A unit stride, the usual innermost one, needs no division. */
static void box_make(const hbg_tensor *t, hbg__tmap_box *bx)
{
    bx->ok = 0;
    bx->valid = 0;
    uint64_t rem = t->offset;
    for (unsigned d = 0; d < t->ndim; d++) {
        if (t->strides[d] <= 0)
            return;
        uint64_t s = (uint64_t)t->strides[d];
        if (d + 1 < t->ndim) {
            int64_t next = t->strides[d + 1];
            if (next <= 0 || (next != 1 && s % (uint64_t)next != 0))
                return;
        }
        if (s == 1) {
            bx->start[d] = rem;
            rem = 0;
        } else {
            bx->start[d] = rem / s;
            rem %= s;
        }
    }
    if (rem)
        return;
    bx->ok = 1;
    /* The outermost dimension may run past the stride pattern; the
     * remaining ones must stay inside their stride to be a box. */
    bx->valid = t->ndim;
    for (unsigned d = 1; d < t->ndim; d++) {
        uint64_t inner = (uint64_t)t->strides[d];
        uint64_t span = inner == 1 ? (uint64_t)t->strides[d - 1] : (uint64_t)t->strides[d - 1] / inner;
        if (bx->start[d] + t->shape[d] > span) {
            bx->valid = (uint8_t)d;
            break;
        }
    }
}

static bool same_layout(const hbg_tensor *a, const hbg_tensor *b)
{
    if (a->ndim != b->ndim || a->dtype != b->dtype || a->ndim == 0)
        return false;
    for (unsigned d = 0; d < a->ndim; d++)
        if (a->strides[d] != b->strides[d])
            return false;
    return true;
}

/* The box test of two views with the same layout whose byte ranges meet.
 * Dimension by dimension: one where the boxes are apart proves them
 * disjoint, but only when neither view runs past its stride anywhere
 * below the outermost dimension. An element's coordinates are its box
 * indices only then: a row that runs past its stride carries into the
 * dimension above, and on up, so a view of rows 0..1 whose rows are
 * longer than the row stride reaches into row 2. */
static bool boxes_overlap(const hbg_tensor *a, const hbg__tmap_box *xa, const hbg_tensor *b,
                          const hbg__tmap_box *xb)
{
    if (!xa->ok || !xb->ok || xa->valid < a->ndim || xb->valid < b->ndim)
        return true;
    for (unsigned d = 0; d < a->ndim; d++)
        if (xa->start[d] >= xb->start[d] + b->shape[d] || xb->start[d] >= xa->start[d] + a->shape[d])
            return false;
    return true;
}

static bool box_covers(const hbg_tensor *a, const hbg__tmap_box *xa, const hbg_tensor *b,
                       const hbg__tmap_box *xb)
{
    if (!xa->ok || !xb->ok)
        return false;
    for (unsigned d = 0; d < a->ndim; d++)
        if (xa->start[d] > xb->start[d] || xa->start[d] + a->shape[d] < xb->start[d] + b->shape[d])
            return false;
    return true;
}

/* A contiguous view covers everything in its byte range: its dimensions
 * (those longer than 1), taken by increasing stride, are a dense row-major
 * layout, each stride the product of the extents inside it. Counting
 * elements is not enough: a view that visits some elements twice (a zero
 * or repeated stride) can have as many elements as its range has places
 * and still skip some of them. */
static inline bool contiguous(const hbg_tensor *a, uint64_t alo, uint64_t ahi)
{
    uint64_t esz = hbg_dtype_size((hbg_dtype)a->dtype);
    if (!esz)
        return false;
    /* The common case first: already row-major, strides falling. */
    uint64_t dense = 1;
    unsigned d = a->ndim < HBG_MAX_DIMS ? a->ndim : HBG_MAX_DIMS;
    for (; d > 0; d--) {
        if (a->shape[d - 1] <= 1)
            continue;
        if (a->strides[d - 1] < 0 || (uint64_t)a->strides[d - 1] != dense)
            break;
        dense *= a->shape[d - 1];
    }
    if (d == 0)
        return ahi - alo == dense * esz;
    /* Strides already falling give the same order sorted: not dense. */
    bool falling = true;
    for (unsigned i = 0, last = 0; i < a->ndim && i < HBG_MAX_DIMS && falling; i++)
        if (a->shape[i] > 1) {
            falling = !last || a->strides[last - 1] >= a->strides[i];
            last = i + 1;
        }
    if (falling)
        return false;
    int64_t st[HBG_MAX_DIMS];
    uint32_t ex[HBG_MAX_DIMS];
    unsigned n = 0;
    for (unsigned i = 0; i < a->ndim && i < HBG_MAX_DIMS; i++) {
        if (a->shape[i] <= 1)
            continue;
        /* insertion by stride: at most five dimensions */
        unsigned k = n++;
        for (; k > 0 && st[k - 1] > a->strides[i]; k--)
            st[k] = st[k - 1], ex[k] = ex[k - 1];
        st[k] = a->strides[i], ex[k] = a->shape[i];
    }
    dense = 1;
    for (unsigned k = 0; k < n; k++) {
        if (st[k] < 0 || (uint64_t)st[k] != dense)
            return false;
        dense *= ex[k];
    }
    return ahi - alo == dense * esz;
}

bool hbg__views_overlap(const hbg_tensor *a, uint64_t alo, uint64_t ahi,
                       const hbg_tensor *b, uint64_t blo, uint64_t bhi)
{
    if (alo >= bhi || blo >= ahi)
        return false;
    if (!same_layout(a, b))
        return true;
    hbg__tmap_box xa, xb;
    box_make(a, &xa);
    box_make(b, &xb);
    return boxes_overlap(a, &xa, b, &xb);
}

bool hbg__view_covers(const hbg_tensor *a, uint64_t alo, uint64_t ahi,
                     const hbg_tensor *b, uint64_t blo, uint64_t bhi)
{
    if (alo > blo || ahi < bhi)
        return false;
    if (contiguous(a, alo, ahi))
        return true;
    if (!same_layout(a, b))
        return false;
    hbg__tmap_box xa, xb;
    box_make(a, &xa);
    box_make(b, &xb);
    return box_covers(a, &xa, b, &xb);
}

/* Calls fn for every live entry whose byte range meets [lo, hi), or with
 * `inside` lies inside it (some entries more than once), unlinking dead
 * entries met on the way. */
typedef hbg_status (*entry_fn)(hbg__tmap *m, hbg__tmap_entry *e, void *ctx);

/* Whether the walk hands entry e to its visitor. The byte ranges are
 * tested here, not in the visitors: most entries a bucket holds are the
 * query's sibling tiles, which fail this test, and a call through the
 * pointer for each (the visitors save registers for their rare box tests)
 * cost more than the test itself. A retiring walk wants only the entries
 * its range contains; the others cannot be covered. */
static inline bool candidate(const hbg__tmap_entry *e, uint64_t lo, uint64_t hi, bool inside)
{
    return inside ? lo <= e->lo && e->hi <= hi : e->lo < hi && lo < e->hi;
}

/* Walks the bucket lists heads[k0..k1]. */
static hbg_status walk_heads(hbg__tmap *m, uint32_t *heads, uint64_t k0, uint64_t k1, uint64_t lo, uint64_t hi,
                             bool inside, entry_fn fn, void *ctx)
{
    hbg_status st;
    for (uint64_t k = k0; k <= k1; k++) {
        for (uint32_t *l = &heads[k]; *l != TMAP_NIL;) {
            hbg__tmap_link *ln = &m->links[*l];
            hbg__tmap_entry *e = &m->entries[ln->entry];
            if (e->dead) {
                *l = ln->next;
                continue;
            }
            if (candidate(e, lo, hi, inside) && (st = fn(m, e, ctx)))
                return st;
            l = &ln->next;
        }
    }
    return HBG_OK;
}

static hbg_status walk(hbg__tmap *m, hbg__tmap_buf *b, uint64_t lo, uint64_t hi, bool inside, entry_fn fn,
                       void *ctx)
{
    uint64_t b0 = lo >> b->shift, b1 = (hi - 1) >> b->shift;
    hbg_status st;
    if (b1 - b0 >= HBG_TMAP_PROBE_MAX) {
        for (uint32_t *l = &b->all; *l != TMAP_NIL;) {
            hbg__tmap_entry *e = &m->entries[*l];
            if (e->dead) {
                *l = e->next_all;
                continue;
            }
            if (candidate(e, lo, hi, inside) && (st = fn(m, e, ctx)))
                return st;
            l = &e->next_all;
        }
        return HBG_OK;
    }
    for (uint32_t *l = &b->wide; *l != TMAP_NIL;) {
        hbg__tmap_entry *e = &m->entries[*l];
        if (e->dead) {
            *l = e->next_wide;
            continue;
        }
        if (candidate(e, lo, hi, inside) && (st = fn(m, e, ctx)))
            return st;
        l = &e->next_wide;
    }
    if (b->block == TMAP_NIL || b0 >= HBG_TMAP_NBUCKETS)
        return HBG_OK;
    uint32_t *heads = m->blocks + (size_t)b->block * HBG_TMAP_BLOCK_HEADS;
    if (b1 >= HBG_TMAP_NBUCKETS)
        b1 = HBG_TMAP_NBUCKETS - 1;
    /* The coarse heads follow the fine ones; most buffers never use them. */
    if ((st = walk_heads(m, heads, b0, b1, lo, hi, inside, fn, ctx)) || !b->coarse)
        return st;
    return walk_heads(m, heads, HBG_TMAP_NBUCKETS + (b0 >> HBG_TMAP_COARSE_LOG2),
                      HBG_TMAP_NBUCKETS + (b1 >> HBG_TMAP_COARSE_LOG2), lo, hi, inside, fn, ctx);
}

typedef struct query {
    const hbg_tensor *t;
    uint64_t lo, hi;
    hbg__tmap_visit add;
    void *ctx;
    bool boxed;        /* box is computed */
    uint8_t dense;     /* HBG_TMAP_DENSE_*, as an entry's */
    hbg__tmap_box box;
} query;

/* Field by field: the box is filled only when first needed, and an
 * initializer would clear its 48 bytes for every query. */
static inline void query_init(query *q, const hbg_tensor *t, uint64_t lo, uint64_t hi, uint8_t dense,
                              hbg__tmap_visit add, void *ctx)
{
    q->t = t, q->lo = lo, q->hi = hi, q->add = add, q->ctx = ctx;
    q->boxed = false;
    q->dense = dense;
}

uint8_t hbg__tmap_dense(const hbg_tensor *t, uint64_t lo, uint64_t hi)
{
    return contiguous(t, lo, hi) ? HBG_TMAP_DENSE_YES : HBG_TMAP_DENSE_NO;
}

/* hbg__tmap_dense, kept: a view is met by many comparisons. */
static inline bool dense_of(uint8_t *known, const hbg_tensor *t, uint64_t lo, uint64_t hi)
{
    if (*known == HBG_TMAP_DENSE_UNKNOWN)
        *known = hbg__tmap_dense(t, lo, hi);
    return *known == HBG_TMAP_DENSE_YES;
}

/* The boxes of the query and of entry e, each computed once. */
static inline const hbg__tmap_box *query_box(query *q)
{
    if (!q->boxed) {
        box_make(q->t, &q->box);
        q->boxed = true;
    }
    return &q->box;
}

static inline const hbg__tmap_box *entry_box(hbg__tmap *m, hbg__tmap_entry *e)
{
    hbg__tmap_box *x = &m->boxes[e - m->entries];
    if (!e->boxed) {
        box_make(e->view, x);
        e->boxed = 1;
    }
    return x;
}

/* hbg__views_overlap, with the boxes kept. */
static hbg_status visit_overlap(hbg__tmap *m, hbg__tmap_entry *e, void *vq)
{
    query *q = vq; /* the walk has checked that the ranges meet */
    /* Two contiguous views whose ranges meet share an element, and the
     * box test would say so: skip it (whole tensors, the common case, need
     * no box then). */
    if (same_layout(q->t, e->view) &&
        !(dense_of(&q->dense, q->t, q->lo, q->hi) && dense_of(&e->dense, e->view, e->lo, e->hi)) &&
        !boxes_overlap(q->t, query_box(q), e->view, entry_box(m, e)))
        return HBG_OK;
    return q->add(q->ctx, e->writer);
}

/* hbg__view_covers, with the boxes kept. */
static hbg_status retire_covered(hbg__tmap *m, hbg__tmap_entry *e, void *vq)
{
    query *q = vq; /* the walk has checked that e's range lies inside q's */
    if (dense_of(&q->dense, q->t, q->lo, q->hi) ||
        (same_layout(q->t, e->view) && box_covers(q->t, query_box(q), e->view, entry_box(m, e))))
        e->dead = 1;
    return HBG_OK;
}

hbg_status hbg__tmap_walk_readers(hbg__tmap *m, const hbg_tensor *t, uint64_t lo, uint64_t hi, uint8_t dense,
                                 hbg__tmap_visit add, void *ctx)
{
    hbg__tmap_buf *b = find_buf(m, t->addr, NULL, hi);
    if (!b || hi <= lo)
        return HBG_OK;
    query q;
    query_init(&q, t, lo, hi, dense, add, ctx);
    return walk(m, b, lo, hi, false, visit_overlap, &q);
}

bool hbg__tmap_room_slow(const hbg__tmap *m, const uint64_t *addr, uint32_t n)
{
    uint32_t fresh = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (find_buf((hbg__tmap *)m, addr[i], NULL, 0))
            continue;
        bool seen = false;
        for (uint32_t j = 0; j < i && !seen; j++)
            seen = addr[j] == addr[i];
        fresh += !seen;
    }
    return ((uint64_t)m->nbufs + fresh) * 2 <= (uint64_t)m->buf_max_mask + 1;
}

bool hbg__tmap_full_entries(const hbg__tmap *m, uint32_t n, uint64_t *size)
{
    /* A link per narrow bucket an entry takes: the links fill with the
     * entries, never before them (cap_links is cap_entries x NARROW). */
    if ((uint64_t)m->nentries + n > m->cap_entries ||
        (uint64_t)m->nlinks + (uint64_t)n * HBG_TMAP_NARROW > m->cap_links) {
        *size = m->cap_entries;
        return true;
    }
    *size = ((uint64_t)m->buf_max_mask + 1) / 2; /* the table is kept at most half full */
    return false;
}

hbg_status hbg__tmap_put(hbg__tmap *m, const hbg_tensor *t, uint64_t lo, uint64_t hi, uint8_t dense,
                        uint32_t writer, bool retire)
{
    hbg__tmap_buf *b = find_buf(m, t->addr, t, hi);
    if (!b)
        return HBG_E_POOL_EXHAUSTED;
    uint64_t b0 = lo >> b->shift, b1 = (hi - 1) >> b->shift;
    /* Fine buckets [k0, k1] when they are a few, else coarse ones when
     * those are, else the wide list (k0 > k1). */
    uint64_t k0 = b0, k1 = b1;
    if (b1 >= HBG_TMAP_NBUCKETS || b->small) {
        k0 = 1, k1 = 0;
    } else if (b1 - b0 >= HBG_TMAP_NARROW) {
        k0 = HBG_TMAP_NBUCKETS + (b0 >> HBG_TMAP_COARSE_LOG2);
        k1 = HBG_TMAP_NBUCKETS + (b1 >> HBG_TMAP_COARSE_LOG2);
        if (k1 - k0 >= HBG_TMAP_NARROW)
            k0 = 1, k1 = 0;
    }
    bool narrow = k0 <= k1;
    if (m->nentries >= m->cap_entries || (narrow && m->nlinks + (k1 - k0 + 1) > m->cap_links))
        return HBG_E_POOL_EXHAUSTED;
    if (narrow && b->block == TMAP_NIL) {
        if (m->nblocks < m->cap_blocks) {
            b->block = m->nblocks++;
            memset(m->blocks + (size_t)b->block * HBG_TMAP_BLOCK_HEADS, 0xff,
                   HBG_TMAP_BLOCK_HEADS * sizeof *m->blocks);
        } else {
            narrow = false;
        }
    }
    if (retire) {
        query q;
        query_init(&q, t, lo, hi, dense, NULL, NULL);
        walk(m, b, lo, hi, true, retire_covered, &q);
        dense = q.dense; /* perhaps learnt on the way */
    }
    uint32_t ei = m->nentries++;
    hbg__tmap_entry *e = &m->entries[ei];
    *e = (hbg__tmap_entry){.lo = lo, .hi = hi, .view = t, .writer = writer, .next_all = b->all,
                          .next_wide = TMAP_NIL, .dead = 0, .boxed = 0, .dense = dense};
    b->all = ei;
    if (!narrow) {
        e->next_wide = b->wide;
        b->wide = ei;
        return HBG_OK;
    }
    uint32_t *heads = m->blocks + (size_t)b->block * HBG_TMAP_BLOCK_HEADS;
    b->coarse |= k0 >= HBG_TMAP_NBUCKETS;
    for (uint64_t k = k0; k <= k1; k++) {
        m->links[m->nlinks] = (hbg__tmap_link){.entry = ei, .next = heads[k]};
        heads[k] = m->nlinks++;
    }
    return HBG_OK;
}
