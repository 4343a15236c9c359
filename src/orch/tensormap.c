/* The tensor map (see tensormap.h). */
#include <stdlib.h>
#include <string.h>

#include "orch/tensormap.h"

static uint32_t pow2_at_least(uint32_t n)
{
    uint32_t p = 16;
    while (p < n && p < (1u << 30))
        p <<= 1;
    return p;
}

hbg_status hbg_tmap_init(hbg_tmap *m, uint32_t buffers, uint32_t entries)
{
    memset(m, 0, sizeof *m);
    uint32_t nslots = pow2_at_least(buffers * 2u);
    m->slots = calloc(nslots, sizeof *m->slots);
    m->entries = calloc(entries ? entries : 1, sizeof *m->entries);
    if (!m->slots || !m->entries) {
        hbg_tmap_free(m);
        return HBG_E_NOMEM;
    }
    m->mask = nslots - 1;
    m->gen = 1;
    m->cap_entries = entries;
    return HBG_OK;
}

void hbg_tmap_free(hbg_tmap *m)
{
    free(m->slots);
    free(m->entries);
    memset(m, 0, sizeof *m);
}

void hbg_tmap_reset(hbg_tmap *m)
{
    /* A slot whose generation is not current reads as empty, so a reset is
     * one increment; only when the counter wraps do the slots get cleared. */
    if (++m->gen == 0) {
        memset(m->slots, 0, ((size_t)m->mask + 1) * sizeof *m->slots);
        m->gen = 1;
    }
    m->used_slots = 0;
    m->nentries = 0;
}

static inline uint32_t hash_addr(uint64_t a)
{
    a ^= a >> 33;
    a *= 0xff51afd7ed558ccdull;
    a ^= a >> 33;
    return (uint32_t)a;
}

/* Finds the slot of `addr`; with `create`, claims an empty one. NULL when
 * absent (or when the table is full and `create` was asked). */
static hbg_tmap_slot *find_slot(hbg_tmap *m, uint64_t addr, bool create)
{
    uint32_t i = hash_addr(addr) & m->mask;
    for (uint32_t probes = 0; probes <= m->mask; probes++, i = (i + 1) & m->mask) {
        hbg_tmap_slot *s = &m->slots[i];
        if (s->gen != m->gen) {
            if (!create)
                return NULL;
            /* Keep the load under one half so probe chains stay short. */
            if ((m->used_slots + 1) * 2 > m->mask + 1)
                return NULL;
            s->gen = m->gen;
            s->addr = addr;
            s->head = TMAP_NIL;
            m->used_slots++;
            return s;
        }
        if (s->addr == addr)
            return s;
    }
    return NULL;
}

/* Per-dimension element boxes, available when the strides are positive and
 * each divides the one before it (a row-major layout, possibly padded). */
static bool box_of(const hbg_tensor *t, uint64_t start[HBG_MAX_DIMS])
{
    uint64_t rem = t->offset;
    for (unsigned d = 0; d < t->ndim; d++) {
        if (t->strides[d] <= 0)
            return false;
        uint64_t s = (uint64_t)t->strides[d];
        if (d + 1 < t->ndim && (t->strides[d + 1] <= 0 || s % (uint64_t)t->strides[d + 1] != 0))
            return false;
        start[d] = rem / s;
        rem %= s;
    }
    return rem == 0;
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

bool hbg_views_overlap(const hbg_tensor *a, uint64_t alo, uint64_t ahi,
                       const hbg_tensor *b, uint64_t blo, uint64_t bhi)
{
    if (alo >= bhi || blo >= ahi)
        return false;
    if (!same_layout(a, b))
        return true;
    uint64_t sa[HBG_MAX_DIMS], sb[HBG_MAX_DIMS];
    if (!box_of(a, sa) || !box_of(b, sb))
        return true;
    for (unsigned d = 0; d < a->ndim; d++) {
        /* The outermost dimension may run past the stride pattern; the
         * remaining ones must stay inside their stride to be a box. */
        if (d > 0) {
            uint64_t span = (uint64_t)a->strides[d - 1] / (uint64_t)a->strides[d];
            if (sa[d] + a->shape[d] > span || sb[d] + b->shape[d] > span)
                return true;
        }
        if (sa[d] >= sb[d] + b->shape[d] || sb[d] >= sa[d] + a->shape[d])
            return false;
    }
    return true;
}

bool hbg_view_covers(const hbg_tensor *a, uint64_t alo, uint64_t ahi,
                     const hbg_tensor *b, uint64_t blo, uint64_t bhi)
{
    if (alo > blo || ahi < bhi)
        return false;
    /* A contiguous view covers everything in its byte range. */
    uint64_t esz = hbg_dtype_size((hbg_dtype)a->dtype);
    if (esz && ahi - alo == hbg_tensor_numel(a) * esz)
        return true;
    if (!same_layout(a, b))
        return false;
    uint64_t sa[HBG_MAX_DIMS], sb[HBG_MAX_DIMS];
    if (!box_of(a, sa) || !box_of(b, sb))
        return false;
    for (unsigned d = 0; d < a->ndim; d++)
        if (sa[d] > sb[d] || sa[d] + a->shape[d] < sb[d] + b->shape[d])
            return false;
    return true;
}

hbg_status hbg_tmap_readers_deps(hbg_tmap *m, const hbg_tensor *t, uint64_t lo, uint64_t hi,
                                 hbg_tmap_visit add, void *ctx)
{
    hbg_tmap_slot *s = find_slot(m, t->addr, false);
    if (!s)
        return HBG_OK;
    for (uint32_t e = s->head; e != TMAP_NIL; e = m->entries[e].next) {
        const hbg_tmap_entry *en = &m->entries[e];
        if (hbg_views_overlap(t, lo, hi, en->view, en->lo, en->hi)) {
            hbg_status st = add(ctx, en->writer);
            if (st)
                return st;
        }
    }
    return HBG_OK;
}

hbg_status hbg_tmap_write(hbg_tmap *m, const hbg_tensor *t, uint64_t lo, uint64_t hi,
                          uint32_t writer, bool retire)
{
    hbg_tmap_slot *s = find_slot(m, t->addr, true);
    if (!s || m->nentries >= m->cap_entries)
        return HBG_E_POOL_EXHAUSTED;
    if (retire) {
        uint32_t *link = &s->head;
        while (*link != TMAP_NIL) {
            hbg_tmap_entry *en = &m->entries[*link];
            if (hbg_view_covers(t, lo, hi, en->view, en->lo, en->hi))
                *link = en->next;
            else
                link = &en->next;
        }
    }
    uint32_t e = m->nentries++;
    m->entries[e] = (hbg_tmap_entry){.lo = lo, .hi = hi, .view = t, .writer = writer, .next = s->head};
    s->head = e;
    return HBG_OK;
}
