/* submit_graph: the Definition cache, boundary signatures, replays.
 *
 * A call costs, in the common case of a key already recorded: one cache
 * probe, one linear pass over the boundary (signature, byte ranges, the
 * boundary image), one GM bump allocation and one outer task whose fanins
 * come from the few slots on buffers the pass has written. Recording
 * happens once per key per pass (or once ever, with kept Definitions).
 */
#include <string.h>

#include "graph/graph_internal.h"

_Static_assert(HBG_MAX_BOUND_TENSORS == HBG_MAX_BOUNDARY_TENSORS, "a bound holds a whole boundary");

/* Kept Definitions, past half the cache or half the pool: those the last
 * pass did not use are dropped, and the pool is packed. Without this a
 * program whose keys change (a shape per key, a key per step) filled the
 * cache in 64 passes and refused every new key after (the cache never
 * emptied itself). Keys used pass after pass stay; a dropped key is
 * recorded again the next time it is called. Done between passes, when no
 * def table row names an entry. The entries that moved get a new gen: a
 * replay noted under the old one is not answered (replaymemo.c). */
static void drop_unused(hbg_orch *o)
{
    struct hbg__graph *g = o->graph;
    if (g->ndefs <= HBG_DEF_CACHE_CAP / 2 && g->def_pool_used <= g->def_pool_cap / 2)
        return;
    uint32_t keep = 0;
    for (uint32_t i = 0; i < g->ndefs; i++)
        if (g->defs[i].pass + 1 >= o->pass) /* used by the last pass (o->pass is the new one) */
            g->defs[keep++] = g->defs[i];
    /* Nothing dropped: packing would move nothing, unless a place was
     * given to a new key in a pass, leaving its old image behind. */
    if (keep == g->ndefs && !g->orphans)
        return;
    g->ndefs = keep;
    g->orphans = false;
    /* The pool in address order: each image moves down, never over one
     * not yet moved. */
    uint64_t at = 0;
    for (;;) {
        hbg__def_entry *next = NULL;
        for (uint32_t i = 0; i < g->ndefs; i++) {
            const unsigned char *p = (const unsigned char *)g->defs[i].img;
            if (p >= g->def_pool + at && (!next || p < (const unsigned char *)next->img))
                next = &g->defs[i];
        }
        if (!next)
            break;
        at = (at + 63) & ~63ull;
        unsigned char *to = g->def_pool + at;
        if (to != (const unsigned char *)next->img) {
            memmove(to, next->img, next->img->bytes);
            next->img = (const hbg_def_header *)(void *)to;
            next->gen = ++g->gen_next;
            next->gen_img = next->img;
        }
        at += next->img->bytes;
    }
    g->def_pool_used = at;
    /* built[] vouched for bytes at places that have moved */
    for (uint32_t n = 0; n < HBG_DEF_CACHE_CAP; n++)
        g->built[n].img = NULL;
}

static void graph_begin_pass(hbg_orch *o)
{
    struct hbg__graph *g = o->graph;
    /* built[n] vouches for the bytes at its place only while nothing else
     * has written there. One pass's builds never overlap, so the last
     * pass's first defs_built entries hold; a later entry is from an
     * earlier pass, and the last pass's builds may have overwritten its
     * place (with other bytes, or, worse, the same bytes under another
     * hash). */
    for (uint32_t n = g->defs_built; n < HBG_DEF_CACHE_CAP; n++)
        g->built[n].img = NULL;
    g->defs_built = 0;
    g->fallbacks = 0;
    if (!o->cfg.keep_definitions) {
        /* Re-recording every pass (the original system's behaviour): the
         * pool and the cache start empty, so a pass never reads a
         * Definition it did not build itself. */
        g->ndefs = 0;
        g->def_pool_used = 0;
    } else {
        drop_unused(o);
    }
}

/* The recorder's worst-case arrays, reserved like the image's. */
#define REC_ARRAYS(X)                                                              \
    X(nodes, HBG_MAX_DEF_NODES)                                                    \
    X(fanins, (size_t)HBG_MAX_DEF_NODES * HBG_MAX_FANINS)                          \
    X(targs, (size_t)HBG_MAX_DEF_NODES * HBG_MAX_TASK_TENSORS)                     \
    X(sargs, (size_t)HBG_MAX_DEF_NODES * HBG_MAX_TASK_SCALARS)                     \
    X(preds, HBG_MAX_DEF_NODES)                                                    \
    X(tvia, (size_t)HBG_MAX_DEF_NODES * HBG_MAX_TASK_TENSORS)                      \
    X(pvia, HBG_MAX_DEF_NODES)                                                     \
    X(views, (size_t)HBG_MAX_DEF_NODES * (HBG_MAX_TASK_TENSORS + 1))               \
    X(node_stamp, HBG_MAX_DEF_NODES)

/* The Definition pool's committed prefix: a Definition's image is built
 * there in the pass that records it, so the first pass reaches as far as
 * its Definitions (dsv4's one is 385 KB; past the usual prefix its pages
 * faulted inside host_orch of the cold pass). */
#define DEF_POOL_HOT ((size_t)1 << 20)

/* memo_bx: one word per boundary image slot the window can hold. */
static size_t memo_bx_bytes(const hbg_orch *o)
{
    return (size_t)o->window * HBG_MAX_BOUNDARY_TENSORS * sizeof(uint64_t);
}

static void graph_destroy(hbg_orch *o)
{
    struct hbg__graph *g = o->graph;
    if (!g)
        return;
#define FREE(name, n) hbg__unreserve(g->rec.name, (n) * sizeof *g->rec.name);
    REC_ARRAYS(FREE)
#undef FREE
    hbg__unreserve(g->def_pool, g->def_pool_cap);
    hbg__unreserve(g->memo_bx, memo_bx_bytes(o));
    hbg__node_memo_free(&g->rec);
    hbg__tmap_free(&g->rec.map);
    hbg__unreserve(g, sizeof *g);
    o->graph = NULL;
}

/* The node a refused call inside the body being recorded would have made. */
static void graph_locate_capture(hbg_orch *o)
{
    const hbg__recorder *r = &o->graph->rec;
    hbg__why_at(o, HBG_AT_NODE, r->nnodes, r->key);
}

static const hbg__orch_ext graph_ext = {
    .begin_pass = graph_begin_pass,
    .destroy = graph_destroy,
    .capture_task = hbg__record_task,
    .capture_alloc = hbg__record_alloc,
    .locate_capture = graph_locate_capture,
};

hbg_status hbg__graph_orch_create(const hbg__orch_config *cfg, hbg_orch **out)
{
    hbg_orch *o;
    hbg_status st = hbg__orch_create(cfg, &o);
    if (st)
        return st;
    const char *part = "the Graph state"; /* what a failed step below could not make */
    /* Some 800 KB, mostly Definition entries used from the front: a
     * reservation (zeroed, its prefix committed), or the first recording
     * faults on the recorder's and the first entries' pages. */
    struct hbg__graph *g = hbg__reserve(sizeof *g);
    o->graph = g;
    o->ext = &graph_ext;
    bool ok = g != NULL;
    if (ok)
        part = "the recorder's arrays";
#define ALLOC(name, n) ok = ok && (g->rec.name = hbg__reserve((n) * sizeof *g->rec.name)) != NULL;
    REC_ARRAYS(ALLOC)
#undef ALLOC
    if (ok) {
        part = "the host copy of the Definition pool";
        g->def_pool_cap = cfg->def_pool_bytes ? cfg->def_pool_bytes : (64ull << 20);
        ok = (g->def_pool = hbg__reserve_hot(g->def_pool_cap, DEF_POOL_HOT)) != NULL;
    }
    ok = ok && (part = "the recorder's tensor map",
                hbg__tmap_init(&g->rec.map, HBG_MAX_DEF_NODES * 2u, HBG_MAX_DEF_NODES * (HBG_MAX_TASK_TENSORS + 1u))) ==
                   HBG_OK;
    /* A re-recorded Definition asks its map what the last recording did. */
    ok = ok && (cfg->no_journal ||
                (part = "the recorder's journal",
                 hbg__tmap_journal_init(&g->rec.map, HBG_MAX_DEF_NODES * 8u, HBG_MAX_DEF_NODES * 32u)) == HBG_OK);
    /* Replays join the task memo where there is one (replaymemo.c), and
     * so do recorded nodes (nodememo.c). */
    ok = ok && (!o->memo || (part = "the replay memo", g->memo_bx = hbg__reserve(memo_bx_bytes(o))) != NULL);
    ok = ok && (!o->memo || (part = "the node memo", hbg__node_memo_init(&g->rec)) == HBG_OK);
    if (!ok) {
        if (cfg->nomem_part)
            *cfg->nomem_part = part;
        hbg__orch_destroy(o);
        return HBG_E_NOMEM;
    }
    hbg__image_hash_prepare(); /* its first use is costly (util/hash.c) */
    *out = o;
    return HBG_OK;
}

static hbg__def_entry *find_def(struct hbg__graph *g, uint64_t key)
{
    for (uint32_t i = 0; i < g->ndefs; i++)
        if (g->defs[i].key == key)
            return &g->defs[i];
    return NULL;
}

/* Limits that do not need a look at each slot. */
static hbg_status check_boundary(hbg_orch *o, const hbg_boundary *b)
{
    if (!b) {
        hbg__why(o, HBG_WHY_NULL_INPUT, -1, 4, 0, 0);
        return HBG_E_INVAL;
    }
    if (b->ntensors > HBG_MAX_BOUNDARY_TENSORS) {
        hbg__why(o, HBG_WHY_TOO_MANY, -1, b->ntensors, HBG_MAX_BOUNDARY_TENSORS, HBG_COUNT_BTENSORS);
        return HBG_E_BOUNDARY_TOO_WIDE;
    }
    if (b->nscalars > HBG_MAX_BOUNDARY_SCALARS) {
        hbg__why(o, HBG_WHY_TOO_MANY, -1, b->nscalars, HBG_MAX_BOUNDARY_SCALARS, HBG_COUNT_BSCALARS);
        return HBG_E_BOUNDARY_TOO_WIDE;
    }
    /* as a task's own arrays and deps are checked (orch.c) */
    if (!hbg__array_ok(o, HBG_COUNT_BTENSORS, b->ntensors, b->args) ||
        !hbg__array_ok(o, HBG_COUNT_BSCALARS, b->nscalars, b->scalars))
        return HBG_E_INVAL;
    return hbg__deps_ok(o, b->ndeps, b->deps);
}

/* A slot's own validity: a tensor, a boundary direction, a byte range
 * inside its buffer (kept in *r for inference). Notes what is wrong. */
static bool slot_ok(hbg_orch *o, const hbg_arg *a, uint32_t k, hbg__range *r)
{
    if (!a->t) {
        hbg__why(o, HBG_WHY_NULL_TENSOR, (int32_t)k, 0, 0, 0);
        return false;
    }
    if (a->dir != HBG_IN && a->dir != HBG_INOUT && a->dir != HBG_OUT) {
        hbg__why(o, HBG_WHY_DIR, (int32_t)k, a->dir, 0, 0);
        return false;
    }
    if (hbg__orch_writes_kept(o, a->dir, a->t->addr, (int32_t)k))
        return false;
    return hbg__orch_check_view(o, a->t, (int32_t)k, r) == HBG_OK;
}

/* What the outer task needs from a boundary that passed its scan. The
 * boundary image is already written, past the live end of btensors[]:
 * replay() makes it live only once the outer task exists, so a boundary
 * that fails leaves nothing behind. */
typedef struct bscan {
    hbg__range rng[HBG_MAX_BOUNDARY_TENSORS];
    uint16_t reads[HBG_MAX_BOUNDARY_TENSORS];  /* slots on a buffer the pass may have written */
    uint16_t writes[HBG_MAX_BOUNDARY_TENSORS]; /* INOUT and OUT slots */
    uint32_t nreads, nwrites;
} bscan;

/* The per-slot tail of both scans. The tensor map does not change between
 * here and the inference of the reads, so a buffer the filter rules out now
 * has no writer to find then. */
static inline void note_slot(const hbg__tmap *map, hbg_img_btensor *bt, bscan *sc, uint32_t k, const hbg_arg *a)
{
    const hbg_tensor *t = a->t;
    if (hbg__tmap_may_hold(map, t->addr))
        sc->reads[sc->nreads++] = (uint16_t)k;
    if (a->dir != HBG_IN)
        sc->writes[sc->nwrites++] = (uint16_t)k;
    bt[k] = (hbg_img_btensor){t->addr, t->nbytes, t->offset};
}

static bool layout_matches(const hbg__bslot *p, const hbg_tensor *t)
{
    if (hbg__same_bytes16((const unsigned char *)t + offsetof(hbg_tensor, strides), p, HBG_BSLOT_LAYOUT_BYTES))
        return true;
    if (t->ndim != p->ndim || t->dtype != p->dtype)
        return false;
    for (unsigned d = 0; d < p->ndim; d++)
        if (t->shape[d] != p->shape[d] || t->strides[d] != p->strides[d])
            return false;
    return true;
}

/* Slot k does not match its signature: notes the first thing that differs
 * (cold: a mismatch ends the call). */
static void note_mismatch(hbg_orch *o, uint32_t k, const hbg_arg *a, const hbg__bslot *p)
{
    const hbg_tensor *t = a->t;
    int32_t s = (int32_t)k;
    if (a->dir != p->dir)
        return hbg__why(o, HBG_WHY_B_DIR, s, a->dir, p->dir, 0);
    if (t->dtype != p->dtype)
        return hbg__why(o, HBG_WHY_B_DTYPE, s, t->dtype, p->dtype, 0);
    if (t->ndim != p->ndim)
        return hbg__why(o, HBG_WHY_B_NDIM, s, t->ndim, p->ndim, 0);
    /* The shape first: a different stride usually follows from it. */
    for (unsigned d = 0; d < p->ndim; d++)
        if (t->shape[d] != p->shape[d])
            return hbg__why(o, HBG_WHY_B_SHAPE, s, t->shape[d], p->shape[d], d);
    for (unsigned d = 0; d < p->ndim; d++)
        if (t->strides[d] != p->strides[d])
            return hbg__why(o, HBG_WHY_B_STRIDE, s, t->strides[d], p->strides[d], d);
}

/* A replay's one pass over its boundary against the Definition's
 * signature. The statuses are those of checking every slot in order for
 * validity and then for its part of the signature; a slot that matches its
 * layout needs only its offset checked, and aliasing is verified rather
 * than rebuilt: given that the earlier slots matched, slot k aliases as
 * recorded exactly when it shares the buffer of its recorded head (at the
 * distance from it the recording had, where the signature fixes it), or,
 * if it is a head, shares no earlier head's buffer. */
static hbg_status match_boundary(hbg_orch *o, const hbg_boundary *b, const hbg__bsig *s, bscan *sc)
{
    if (s->nbt != b->ntensors || s->nbs != b->nscalars) {
        hbg__why(o, HBG_WHY_B_COUNT, -1, b->ntensors, b->nscalars, s->nbt);
        o->why.n[3] = s->nbs;
        return HBG_E_BOUNDARY_MISMATCH;
    }
    hbg__recorder *r = &o->graph->rec;
    /* The slots' image records, written here and read back for the alias
     * test; held in locals, as the stores below would make the compiler
     * reload them from o for every slot. */
    hbg_img_btensor *img = o->img.btensors + o->img.nbtensor;
    const hbg__tmap *map = &o->map;
    hbg__btab_begin(r);
    sc->nreads = sc->nwrites = 0;
    for (uint32_t k = 0; k < b->ntensors; k++) {
        const hbg_arg *a = &b->args[k];
        const hbg_tensor *t = a->t;
        const hbg__bslot *p = &s->slot[k];
        if (!t) {
            hbg__why(o, HBG_WHY_NULL_TENSOR, (int32_t)k, 0, 0, 0);
            return HBG_E_INVAL;
        }
        if (a->dir != p->dir || !layout_matches(p, t)) {
            if (!slot_ok(o, a, k, &sc->rng[k]))
                return HBG_E_INVAL;
            note_mismatch(o, k, a, p);
            return HBG_E_BOUNDARY_MISMATCH;
        }
        uint64_t lo = t->offset * p->esize, hi = lo + p->span;
        if (!p->ranged || t->offset > p->max_offset || hi > t->nbytes || t->addr >= HBG_REC_BASE) {
            hbg__range rk;
            hbg__orch_check_view(o, t, (int32_t)k, &rk); /* notes the reason */
            return HBG_E_INVAL;
        }
        if (hbg__orch_writes_kept(o, p->dir, t->addr, (int32_t)k))
            return HBG_E_INVAL;
        if (p->alias != k) {
            if (img[p->alias].addr != t->addr) {
                hbg__why(o, HBG_WHY_B_ALIAS, (int32_t)k, -1, p->alias, 0);
                return HBG_E_BOUNDARY_MISMATCH;
            }
            if (p->fixed && lo - sc->rng[p->alias].lo != p->alias_delta) {
                hbg__why(o, HBG_WHY_B_ALIAS_AT, (int32_t)k, p->alias, (int64_t)(lo - sc->rng[p->alias].lo),
                         (int64_t)p->alias_delta);
                return HBG_E_BOUNDARY_MISMATCH;
            }
        } else {
            hbg__btab_ent *x = hbg__btab_probe(r, t->addr);
            if (x->stamp == r->bstamp) {
                hbg__why(o, HBG_WHY_B_ALIAS, (int32_t)k, x->slot, -1, 0);
                return HBG_E_BOUNDARY_MISMATCH;
            }
            x->stamp = r->bstamp;
            x->addr = t->addr;
            x->slot = (uint16_t)k;
        }
        sc->rng[k] = (hbg__range){lo, hi};
        note_slot(map, img, sc, k, a);
    }
    return HBG_OK;
}

static void *pool_take(struct hbg__graph *g, uint64_t bytes)
{
    uint64_t at = (g->def_pool_used + 63) & ~63ull;
    if (at > g->def_pool_cap || bytes > g->def_pool_cap - at)
        return NULL;
    g->def_pool_used = at + bytes;
    return g->def_pool + at;
}

#define ALIGN8(x) (((x) + 7) & ~(uint64_t)7)

static bool zero(const unsigned char *p, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

/* The first slots of the buffers whose slots a replay must find where
 * they lay from each other: where a node writes through a slot (the
 * nodes' dependencies on each other were inferred from where the slots
 * lay), and where a node's tensor was found in a slot by its content and
 * another slot on the buffer held it too (which one the body meant is a
 * guess that holds only as they lay). Slots on a buffer that the nodes
 * only read, through the slots' own tensors or views only one slot
 * holds, may move apart between replays. */
static void fixed_heads(const hbg__recorder *r, const uint16_t *alias, bool *fixed)
{
    for (uint32_t i = 0; i < r->ntarg; i++) {
        const hbg_def_targ *g = &r->targs[i];
        if ((g->cls == HBG_TARG_BOUNDARY || g->cls == HBG_TARG_BVIEW) &&
            (g->dir != HBG_IN || (r->tvia[i] & HBG_VIA_AMBIGUOUS)))
            fixed[alias[g->ref]] = true;
    }
    for (uint32_t i = 0; i < r->npred; i++) {
        const hbg_def_targ *g = &r->preds[i].where;
        if ((g->cls == HBG_TARG_BOUNDARY || g->cls == HBG_TARG_BVIEW) && (r->pvia[i] & HBG_VIA_AMBIGUOUS))
            fixed[alias[g->ref]] = true;
    }
}

/* The boundary's part of a Definition: its templates (the layouts, at
 * offset 0, without buffers) into tm[], and the signature replays are
 * matched against. */
static bool fill_signature(hbg__def_entry *e, const hbg__recorder *r, const hbg_boundary *b, const uint16_t *alias,
                           hbg_tensor *tm)
{
    bool changed = e->sig.nbt != b->ntensors || e->sig.nbs != b->nscalars;
    bool fixed[HBG_MAX_BOUNDARY_TENSORS] = {false};
    fixed_heads(r, alias, fixed);
    e->sig.nbt = b->ntensors;
    e->sig.nbs = b->nscalars;
    for (uint32_t k = 0; k < b->ntensors; k++) {
        hbg_tensor l;
        memset(&l, 0, sizeof l);
        hbg__layout_into(&l, b->args[k].t, false);
        tm[k] = l;
        hbg__bslot slot, *p = &slot;
        memset(p, 0, sizeof *p);
        /* the slot begins with the template's layout bytes (graph_internal.h) */
        memcpy(p, (const unsigned char *)&l + offsetof(hbg_tensor, strides), HBG_BSLOT_LAYOUT_BYTES);
        p->dir = b->args[k].dir;
        p->alias = alias[k];
        p->fixed = fixed[alias[k]] && alias[k] != k;
        /* The recording's slots are valid views (the call's scan checked
         * them): their byte offsets are exact. */
        if (p->fixed)
            p->alias_delta = b->args[k].t->offset * hbg_dtype_size((hbg_dtype)b->args[k].t->dtype) -
                             b->args[alias[k]].t->offset * hbg_dtype_size((hbg_dtype)b->args[alias[k]].t->dtype);
        /* At offset 0 the range is the extent alone; a view with this
         * layout at any offset has a range exactly when this one does and
         * the offset arithmetic does not overflow. */
        uint64_t lo, hi;
        if (hbg_tensor_byte_range(&l, &lo, &hi)) {
            /* hi is (extent + 1) * esize, and every element size is a
             * power of two: a shift, not a division. */
            p->esize = (uint8_t)hbg_dtype_size((hbg_dtype)l.dtype);
            p->extent = (hi >> __builtin_ctz(p->esize)) - 1;
            p->dense = hbg__tmap_dense(&l, lo, hi);
            /* (o + extent + 1) * esize fits exactly when o + extent + 1
             * <= UINT64_MAX / esize. */
            uint64_t m = UINT64_MAX / p->esize;
            p->ranged = p->extent < m;
            p->max_offset = p->ranged ? m - p->extent - 1 : 0;
            p->span = hi;
        }
        /* both zeroed first: padding compares equal */
        changed = changed || memcmp(&e->sig.slot[k], p, sizeof *p) != 0;
        e->sig.slot[k] = slot;
    }
    return changed;
}

/* Packs the recorder's arrays into one relocatable image and hashes it
 * (or finds the same image, hashed, where the last pass built it). */
static hbg_status build_definition(hbg_orch *o, hbg__def_entry *e, uint64_t key, const hbg_boundary *b,
                                   const uint16_t *alias)
{
    uint64_t t0 = hbg__op_begin(o, HBG_OP_BUILD_DEFINITION);
    const hbg__recorder *r = &o->graph->rec;
    hbg_def_header h;
    memset(&h, 0, sizeof h);
    h.magic = HBG_DEF_MAGIC;
    h.nnodes = r->nnodes;
    h.key = key;
    h.heap_bytes = (r->heap_used + HBG_HEAP_ALIGN - 1) & ~(uint64_t)(HBG_HEAP_ALIGN - 1);
    h.nbt = b->ntensors;
    h.nbs = b->nscalars;
    h.nfanin = r->nfanin, h.ntarg = r->ntarg, h.nsarg = r->nsarg, h.npred = r->npred;
    uint64_t off = ALIGN8(sizeof h);
    h.off_nodes = off, off = ALIGN8(off + (uint64_t)r->nnodes * sizeof(hbg_def_node));
    h.off_fanins = off, off = ALIGN8(off + (uint64_t)r->nfanin * sizeof(uint32_t));
    h.off_targs = off, off = ALIGN8(off + (uint64_t)r->ntarg * sizeof(hbg_def_targ));
    h.off_sargs = off, off = ALIGN8(off + (uint64_t)r->nsarg * sizeof(hbg_def_sarg));
    h.off_preds = off, off = ALIGN8(off + (uint64_t)r->npred * sizeof(hbg_def_pred));
    h.off_btemplates = off, off = ALIGN8(off + (uint64_t)b->ntensors * sizeof(hbg_tensor));
    h.bytes = off;

    unsigned char *img = pool_take(o->graph, h.bytes);
    if (!img) {
        /* Ended like every refused operation (counted, detail 0): an
         * operation begun and never ended would move neither count nor
         * timed while its sample's place was spent. */
        if (o->timing)
            hbg__op_end(o, HBG_OP_BUILD_DEFINITION, t0, 0);
        hbg__why(o, HBG_WHY_POOL, -1, HBG_POOL_DEF_IMAGES, (int64_t)o->graph->def_pool_cap, 0);
        return HBG_E_DEF_POOL_FULL;
    }
    /* Each section is copied and the gap after it (alignment, at most 7
     * bytes) zeroed, so the hash sees only defined bytes. */
    struct {
        uint64_t off, len;
        const void *src;
    } secs[] = {
        {h.off_nodes, (uint64_t)r->nnodes * sizeof(hbg_def_node), r->nodes},
        {h.off_fanins, (uint64_t)r->nfanin * sizeof(uint32_t), r->fanins},
        {h.off_targs, (uint64_t)r->ntarg * sizeof(hbg_def_targ), r->targs},
        {h.off_sargs, (uint64_t)r->nsarg * sizeof(hbg_def_sarg), r->sargs},
        {h.off_preds, (uint64_t)r->npred * sizeof(hbg_def_pred), r->preds},
        {h.off_btemplates, (uint64_t)b->ntensors * sizeof(hbg_tensor), NULL},
    };
    enum { NSECS = sizeof secs / sizeof secs[0] };
    hbg_tensor tm[HBG_MAX_BOUNDARY_TENSORS];
    bool sig_changed = fill_signature(e, r, b, alias, tm);
    secs[NSECS - 1].src = tm;
    /* Re-recorded, a pass usually builds the bytes the last pass built at
     * the same place in the pool: compared, they need neither the copy nor
     * the hash (the hash of those bytes is the one computed then). */
    uint32_t n = o->graph->defs_built;
    bool same = n < HBG_DEF_CACHE_CAP && o->graph->built[n].img == img && o->graph->built[n].bytes == h.bytes;
    /* And when that build holds the last capture's arrays, and this
     * capture wrote nothing in them (every node was kept by the node
     * memo), the node sections are those bytes already: only the boundary
     * templates and the header are left to compare. */
    size_t first = same && !r->wrote && o->graph->built[n].capture == r->capture - 1 ? NSECS - 1 : 0;
    for (size_t i = first; i < NSECS && same; i++) {
        uint64_t end = i + 1 < NSECS ? secs[i + 1].off : h.bytes, len = secs[i].len;
        same = !memcmp(img + secs[i].off, secs[i].src, len) && zero(img + secs[i].off + len, end - secs[i].off - len);
    }
    uint64_t hash;
    if (same) {
        hbg_def_header old;
        memcpy(&old, img, sizeof old);
        old.hash = 0;
        same = !memcmp(&old, &h, sizeof h) && zero(img + sizeof h, h.off_nodes - sizeof h);
    }
    if (same) {
        hash = o->graph->built[n].hash;
    } else {
        memset(img, 0, h.off_nodes);
        for (size_t i = 0; i < NSECS; i++) {
            memcpy(img + secs[i].off, secs[i].src, secs[i].len);
            uint64_t end = i + 1 < NSECS ? secs[i + 1].off : h.bytes;
            memset(img + secs[i].off + secs[i].len, 0, end - secs[i].off - secs[i].len);
        }
        memcpy(img, &h, sizeof h);
        hash = hbg__image_hash(img, h.bytes);
        if (n < HBG_DEF_CACHE_CAP) {
            o->graph->built[n].img = img;
            o->graph->built[n].bytes = h.bytes;
            o->graph->built[n].hash = hash;
        }
    }
    if (n < HBG_DEF_CACHE_CAP)
        o->graph->built[n].capture = r->capture;
    memcpy(img + offsetof(hbg_def_header, hash), &hash, sizeof hash);

    e->key = key;
    e->pass = o->pass;
    e->img = (const hbg_def_header *)(void *)img;
    e->deftab_stamp_pass = 0;
    if (sig_changed || !e->gen || e->gen_img != e->img || e->gen_hash != hash) {
        e->gen = ++o->graph->gen_next;
        e->gen_img = e->img;
        e->gen_hash = hash;
    }
    o->graph->defs_built++;
    if (o->timing)
        hbg__op_end(o, HBG_OP_BUILD_DEFINITION, t0, r->nnodes);
    return HBG_OK;
}

/* Whether the recorder holds what Definition h was built from: the same
 * sections, byte for byte. Everything in them is relative to the replay,
 * so the same body on a matching boundary records the same bytes. The
 * Definition keeps exact copies, so this costs nothing when recording; only
 * HBG_GRAPH_CHECK_BODY, which records the body again, pays a compare. */
static bool same_body(const hbg__recorder *r, const hbg_def_header *h)
{
    if (h->nnodes != r->nnodes || h->nfanin != r->nfanin || h->ntarg != r->ntarg || h->nsarg != r->nsarg ||
        h->npred != r->npred)
        return false;
    const unsigned char *img = (const unsigned char *)h;
    return !memcmp(img + h->off_nodes, r->nodes, (size_t)r->nnodes * sizeof *r->nodes) &&
           !memcmp(img + h->off_fanins, r->fanins, (size_t)r->nfanin * sizeof *r->fanins) &&
           !memcmp(img + h->off_targs, r->targs, (size_t)r->ntarg * sizeof *r->targs) &&
           !memcmp(img + h->off_sargs, r->sargs, (size_t)r->nsarg * sizeof *r->sargs) &&
           !memcmp(img + h->off_preds, r->preds, (size_t)r->npred * sizeof *r->preds);
}

/* Runs the body in recording mode: its submits fill the recorder. The
 * first failure inside it is the status. */
static hbg_status capture(hbg_orch *o, uint64_t key, hbg_graph_body body, void *ctx, const hbg_boundary *b,
                          const hbg__range *brng)
{
    hbg__recorder *r = &o->graph->rec;
    r->key = key;
    o->capturing = true;
    hbg__rec_begin(o, b, brng);
    o->body = hbg__rec_passed(r); /* scalar slots are checked against it */
    hbg__err_state e0 = hbg__err_take(o);
    hbg_status st = hbg__orch_call_body(o, body, ctx, b);
    o->capturing = false;
    o->body = NULL;
    /* A body that ignored a failed submit must not become a Definition;
     * the first failure inside it is the one worth reporting. */
    if (!st)
        st = o->err;
    hbg__err_restore(o, e0);
    hbg__rec_end(r, st);
    return st;
}

/* Of the Definitions no call of this pass has used (kept from earlier
 * passes), the one used longest ago; NULL when every one is this pass's. */
static hbg__def_entry *oldest_unused(hbg_orch *o)
{
    struct hbg__graph *g = o->graph;
    hbg__def_entry *old = NULL;
    for (uint32_t i = 0; i < g->ndefs; i++)
        if (g->defs[i].pass != o->pass && (!old || g->defs[i].pass < old->pass))
            old = &g->defs[i];
    return old;
}

/* `alias` comes from the hbg__boundary_index() of this call, whose table the
 * recorder's classification reads too. */
static hbg_status record(hbg_orch *o, uint64_t key, hbg_graph_body body, void *ctx, const hbg_boundary *b,
                         const hbg__range *brng, const uint16_t *alias, hbg__def_entry **out)
{
    struct hbg__graph *g = o->graph;
    hbg_status st = capture(o, key, body, ctx, b, brng);
    if (st)
        return st;
    b = hbg__rec_passed(&g->rec);
    hbg__def_entry *e = find_def(g, key);
    bool fresh = !e, reused = false;
    hbg__def_entry was;
    if (fresh && g->ndefs < HBG_DEF_CACHE_CAP) {
        e = &g->defs[g->ndefs++];
    } else if (fresh) {
        /* The cache is full of kept Definitions: the one used longest ago,
         * by an earlier pass, gives its place (no row of this pass's def
         * table names it; its image stays in the pool until drop_unused
         * packs it). Else a program whose keys all change from one pass
         * to the next, 40 a pass, found 24 places free after the last
         * pass's 40 and failed every other pass. */
        e = oldest_unused(o);
        if (!e) {
            hbg__why(o, HBG_WHY_POOL, -1, HBG_POOL_DEF_KEYS, HBG_DEF_CACHE_CAP, 0);
            return HBG_E_DEF_POOL_FULL;
        }
        was = *e;
        e->gen = 0; /* a new Definition: no replay noted under the old one's gen */
        reused = true;
    }
    st = build_definition(o, e, key, b, alias);
    if (st) {
        /* Listed, an entry that was never built would hand
         * hbg_orch_def_info an earlier pass's image; a place given up
         * is the old Definition's again. */
        if (reused)
            *e = was;
        else if (fresh)
            g->ndefs--;
        return st;
    }
    g->orphans = g->orphans || reused;
    e->body = body;
    *out = e;
    return HBG_OK;
}

/* Runs the body as ordinary tasks (eager mode, or a mismatch the caller
 * allowed to fall back). Scalar slots resolve against this boundary. */
static hbg_status run_inline(hbg_orch *o, hbg_graph_body body, void *ctx, const hbg_boundary *b)
{
    const hbg_boundary *saved = o->body;
    uint64_t saved_heap0 = o->body_heap0;
    uint32_t saved_task0 = o->body_task0;
    hbg__err_state e0 = hbg__err_take(o);
    /* The body's tasks take the call's deps (orch.c) as they were passed,
     * whatever the body does to the caller's array. */
    hbg_task_id deps[HBG_MAX_FANINS];
    hbg_boundary passed = *b;
    if (b->ndeps)
        memcpy(deps, b->deps, b->ndeps * sizeof *deps);
    passed.deps = deps;
    o->body = &passed;
    o->body_heap0 = o->heap_used; /* what the body allocates lies above */
    o->body_task0 = o->img.ntasks;
    hbg_status st = hbg__orch_call_body(o, body, ctx, b);
    o->body = saved;
    o->body_heap0 = saved_heap0;
    o->body_task0 = saved_task0;
    if (!st)
        st = o->err;
    hbg__err_restore(o, e0);
    return st;
}

/* HBG_GRAPH_CHECK_BODY: the body recorded again on this call's boundary
 * must submit what the Definition holds. The boundary image the match
 * wrote stays where it is: recording touches the recorder alone. */
static hbg_status check_body(hbg_orch *o, const hbg__def_entry *e, hbg_graph_body body, void *ctx,
                             const hbg_boundary *b, const hbg__range *brng)
{
    uint16_t alias[HBG_MAX_BOUNDARY_TENSORS];
    hbg__boundary_index(&o->graph->rec, b, alias);
    hbg_status st = capture(o, e->key, body, ctx, b, brng);
    if (!st && !same_body(&o->graph->rec, e->img)) {
        hbg__why(o, HBG_WHY_KEY_CONTENT, -1, 0, 0, 0);
        st = HBG_E_GRAPH_KEY_REUSED;
    }
    return st;
}

/* The call's explicit deps each name an earlier task: checked wherever
 * the call goes, a replay, a fallback or an eager run, which run the
 * body inline with no outer task to check them. Notes the first that
 * does not (after any note a scan left). */
static hbg_status deps_exist(hbg_orch *o, const hbg_boundary *b)
{
    for (uint32_t i = 0; i < b->ndeps; i++)
        if (b->deps[i] >= o->img.ntasks) {
            hbg__why_clear(o);
            hbg__why(o, HBG_WHY_DEP, -1, i, b->deps[i], o->img.ntasks);
            return HBG_E_BAD_DEP;
        }
    return HBG_OK;
}

/* The outer task and boundary image of one replay. */
static hbg_status replay(hbg_orch *o, hbg__def_entry *e, const hbg_boundary *b, const bscan *sc, hbg_task_id *id)
{
    hbg_status dst = deps_exist(o, b);
    if (dst)
        return dst;
    hbg__image_mark m0 = hbg__image_mark_now(&o->img);
    uint64_t h0 = o->heap_used;
    uint64_t heap_base = 0;
    uint32_t tid;
    hbg_status st = hbg__orch_heap_alloc(o, e->img->heap_bytes, &heap_base);
    if (!st)
        st = hbg__orch_new_task(o, HBG_TASK_REPLAY, &tid);
    for (uint32_t i = 0; i < b->ndeps && !st; i++)
        st = hbg__orch_add_fanin(o, tid, b->deps[i]);
    bool infer = o->manual_depth == 0;
    for (uint32_t i = 0; i < sc->nreads && !st && infer; i++) {
        uint32_t k = sc->reads[i];
        st = hbg__orch_task_reads(o, tid, b->args[k].t, sc->rng[k].lo, sc->rng[k].hi, e->sig.slot[k].dense);
    }
    /* Only written slots need a stable copy: the tensor map points at it.
     * The copies are sized at HBG_MAX_TASK_TENSORS a task, and a replay may
     * write up to HBG_MAX_BOUNDARY_TENSORS. */
    uint64_t waddr[HBG_MAX_BOUNDARY_TENSORS];
    for (uint32_t i = 0; i < sc->nwrites; i++)
        waddr[i] = b->args[sc->writes[i]].t->addr;
    if (!st && o->img.ntensor + sc->nwrites > (size_t)o->window * HBG_MAX_TASK_TENSORS) {
        hbg__why(o, HBG_WHY_POOL, -1, HBG_POOL_MAP_COPIES, (int64_t)o->window * HBG_MAX_TASK_TENSORS, 0);
        st = HBG_E_POOL_EXHAUSTED;
    } else if (!st && !hbg__tmap_fits(&o->map, waddr, sc->nwrites)) {
        hbg__why_map_full(o, &o->map, sc->nwrites);
        st = HBG_E_POOL_EXHAUSTED;
    }
    for (uint32_t i = 0; i < sc->nwrites && !st; i++) {
        uint32_t k = sc->writes[i];
        o->img.tensors[o->img.ntensor] = *b->args[k].t;
        st = hbg__orch_task_writes(o, tid, &o->img.tensors[o->img.ntensor++], sc->rng[k].lo, sc->rng[k].hi,
                                  e->sig.slot[k].dense, b->args[k].dir);
    }
    if (st) {
        hbg__image_rollback(&o->img, m0);
        o->heap_used = h0;
        return st;
    }
    o->img.tasks[tid].tensor_cnt = sc->nwrites;

    if (e->deftab_stamp_pass != o->pass) {
        e->deftab_stamp_pass = (uint32_t)o->pass;
        e->deftab_index = o->img.ndeftab;
        o->img.deftab[o->img.ndeftab] = (hbg_img_def){.addr = 0, .bytes = e->img->bytes, .hash = e->img->hash};
        o->graph->deftab_entry[o->img.ndeftab++] = (uint32_t)(e - o->graph->defs);
    }
    hbg_img_replay *rp = &o->img.replays[o->img.nreplay];
    rp->def = e->deftab_index;
    rp->task = tid;
    rp->btensor_off = o->img.nbtensor;
    rp->bscalar_off = o->img.nbscalar;
    rp->heap_base = heap_base;
    o->img.nbtensor += b->ntensors;
    if (b->nscalars)
        memcpy(o->img.bscalars + o->img.nbscalar, b->scalars, (size_t)b->nscalars * sizeof(uint64_t));
    o->img.nbscalar += b->nscalars;
    o->img.tasks[tid].replay = o->img.nreplay++;
    *id = tid;
    return HBG_OK;
}

/* A body sees the call's boundary as it is, and for a bound that is the
 * bound's own tensors: what the body does to them is a change the bound
 * has not stamped. After a body that recorded, the bound is compared with
 * the recorder's snapshot of it, and its stamp moves on if they differ,
 * so no note taken before stands for what it holds now; after one that
 * ran inline (no snapshot: an eager pass, which keeps no notes, or a
 * fallback) the stamp moves on regardless. */
static hbg_status body_ran(hbg_bound *bd, const hbg__recorder *snap, hbg_status st)
{
    if (!bd)
        return st;
    bool same = snap != NULL;
    const hbg_boundary *p = snap ? hbg__rec_passed(snap) : NULL;
    for (uint32_t k = 0; same && k < bd->n; k++)
        same = memcmp(&bd->tensors[k], p->args[k].t, sizeof bd->tensors[k]) == 0;
    if (!same)
        hbg__bound_restamp(bd);
    return st;
}

/* A failure of the call itself (not of its body, which says where it
 * failed) is the outer task's. */
static hbg_status graph_fail(hbg_orch *o, uint64_t key, hbg_status st)
{
    if (st && !o->why.located)
        hbg__why_at(o, HBG_AT_GRAPH, o->img.ntasks, key);
    return hbg__orch_fail(o, st);
}

/* A call whose boundary's tensors came from bound `bd` (NULL: passed as
 * such). */
static hbg_status submit(hbg_orch *o, uint64_t key, hbg_graph_body body, void *ctx, const hbg_boundary *b,
                         hbg_bound *bd, uint32_t flags, hbg_task_id *id)
{
    if (!body) {
        hbg__why(o, HBG_WHY_NULL_INPUT, -1, 2, 0, 0);
        return graph_fail(o, key, HBG_E_INVAL);
    }
    /* A bit no flag has may be one a later version gives a meaning: run
     * without it, the call would mean something else than was asked. */
    uint32_t unknown = flags & ~(uint32_t)(HBG_GRAPH_FALLBACK | HBG_GRAPH_CHECK_BODY);
    if (unknown) {
        hbg__why(o, HBG_WHY_GRAPH_FLAGS, -1, flags, unknown, 0);
        return graph_fail(o, key, HBG_E_INVAL);
    }
    /* A Graph inside a Graph body would need nested Definitions. */
    if (o->capturing || o->body) {
        hbg__why(o, HBG_WHY_NESTED, -1, 0, 0, 0);
        return graph_fail(o, key, HBG_E_GRAPH_CAPTURE);
    }
    hbg_status st = check_boundary(o, b);
    if (st)
        return graph_fail(o, key, st);
    /* The boundary image is written during the scan, before the outer task
     * exists: a free task guarantees its room (the image pool holds a full
     * boundary for every task of the window). */
    if (!o->cfg.eager && o->img.ntasks >= o->window) {
        hbg__why(o, HBG_WHY_WINDOW, -1, o->window, 0, 0);
        return graph_fail(o, key, HBG_E_WINDOW_FULL);
    }
    if (o->cfg.eager) {
        /* The reference refuses the slots the device path refuses, before
         * the body sees them. */
        hbg__range r;
        for (uint32_t k = 0; k < b->ntensors; k++)
            if (!slot_ok(o, &b->args[k], k, &r))
                return graph_fail(o, key, HBG_E_INVAL);
        if ((st = deps_exist(o, b)))
            return graph_fail(o, key, st);
        return graph_fail(o, key, body_ran(bd, NULL, run_inline(o, body, ctx, b)));
    }
    /* Read once, before any body runs: what the call matches and replays
     * is the bound as it was then. */
    uint64_t stamp = bd ? bd->stamp : 0;

    uint64_t t0 = hbg__op_begin(o, HBG_OP_GRAPH_SUBMIT);
    hbg__memo_at at = hbg__memo_here(o);
    /* A call that runs its body (recording, check-body) is not noted: no
     * later pass asks for its note (replaymemo.c). */
    bool ran_body = false;
    bscan sc;
    hbg__def_entry *e = find_def(o->graph, key);
    if (e && !(e->pass == o->pass || o->cfg.keep_definitions))
        e = NULL; /* recorded by an earlier pass: record again */
    if (e && e->body != body) {
        hbg__why(o, HBG_WHY_KEY_BODY, -1, 0, 0, 0);
        st = HBG_E_GRAPH_KEY_REUSED;
        goto out;
    }
    if (e) {
        if (!(flags & HBG_GRAPH_CHECK_BODY) && hbg__replay_memo_hit(o, e, b, stamp, id)) {
            e->pass = o->pass;
            goto out;
        }
        st = match_boundary(o, b, &e->sig, &sc);
        if (st == HBG_E_BOUNDARY_MISMATCH && (flags & HBG_GRAPH_FALLBACK)) {
            if ((st = deps_exist(o, b)))
                goto out;
            /* The scan wrote past the live boundary records. */
            o->img.rollbacks++;
            /* Kept, not formatted: the warning is written after the pass. */
            if (o->graph->fallbacks++ == 0) {
                hbg__why_at(o, HBG_AT_GRAPH, o->img.ntasks, key);
                o->graph->first_fallback = o->why;
                o->graph->first_fallback.st = st;
            }
            hbg__why_clear(o);
            st = body_ran(bd, NULL, run_inline(o, body, ctx, b));
            goto out;
        }
        if (!st && (flags & HBG_GRAPH_CHECK_BODY)) {
            ran_body = true;
            st = body_ran(bd, &o->graph->rec, check_body(o, e, body, ctx, b, sc.rng));
            b = hbg__rec_passed(&o->graph->rec);
        }
        if (st)
            goto out;
        e->pass = o->pass;
    } else {
        uint16_t alias[HBG_MAX_BOUNDARY_TENSORS];
        for (uint32_t k = 0; k < b->ntensors && !st; k++)
            if (!slot_ok(o, &b->args[k], k, &sc.rng[k]))
                st = HBG_E_INVAL;
        if (st)
            goto out;
        hbg__boundary_index(&o->graph->rec, b, alias);
        ran_body = true;
        if ((st = body_ran(bd, &o->graph->rec, record(o, key, body, ctx, b, sc.rng, alias, &e))))
            goto out;
        /* The rest of the scan, and the replay, see the boundary as it
         * was passed, not as the body may have left it. */
        b = hbg__rec_passed(&o->graph->rec);
        sc.nreads = sc.nwrites = 0;
        for (uint32_t k = 0; k < b->ntensors; k++)
            note_slot(&o->map, o->img.btensors + o->img.nbtensor, &sc, k, &b->args[k]);
    }
    st = replay(o, e, b, &sc, id);
    if (!st && o->memo && !ran_body)
        hbg__replay_memo_note(o, e, b, stamp, *id, at);
out:
    /* A refused call's scan may have written boundary records past the
     * live count (a rolled-back outer task counted itself). */
    if (st)
        o->img.rollbacks++;
    if (o->timing)
        hbg__op_end(o, HBG_OP_GRAPH_SUBMIT, t0, *id == HBG_TASK_NONE ? 0 : *id);
    return graph_fail(o, key, st);
}

hbg_status hbg_submit_graph(hbg_orch *o, uint64_t key, hbg_graph_body body, void *ctx,
                            const hbg_boundary *b, uint32_t flags, hbg_task_id *id)
{
    hbg_task_id spare;
    hbg_status st = hbg__submit_begins(o, &id, &spare);
    return st ? st : submit(o, key, body, ctx, b, NULL, flags, id);
}

hbg_status hbg_submit_graph_bound(hbg_orch *o, uint64_t key, hbg_graph_body body, void *ctx,
                                  const hbg_bound *bd, const hbg_boundary *rest, uint32_t flags,
                                  hbg_task_id *id)
{
    hbg_task_id spare;
    hbg_status st = hbg__submit_begins(o, &id, &spare);
    if (st)
        return st;
    if (!bd) {
        hbg__why(o, HBG_WHY_NULL_INPUT, -1, 3, 0, 0);
        return graph_fail(o, key, HBG_E_INVAL);
    }
    if (rest && (rest->ntensors || rest->args)) {
        hbg__why(o, HBG_WHY_BOUND_REST, -1, rest->ntensors, 0, 0);
        return graph_fail(o, key, HBG_E_INVAL);
    }
    hbg_boundary b = rest ? *rest : (hbg_boundary){0};
    b.ntensors = bd->n;
    b.args = bd->args;
    /* The stamp is the runtime's to keep, a bound const to its caller
     * all the same: body_ran may have to move it on. */
    return submit(o, key, body, ctx, &b, (hbg_bound *)(uintptr_t)bd, flags, id);
}

uint32_t hbg_orch_def_count(const hbg_orch *o)
{
    return o && o->graph ? o->graph->ndefs : 0;
}

/* Read from the image and the signature, which stay as built until the
 * next pass starts: tests and tools ask, the bind path never does. */
hbg_status hbg_orch_def_info(const hbg_orch *o, uint32_t i, hbg_def_info *out)
{
    if (!o || !out || !o->graph || i >= o->graph->ndefs)
        return HBG_E_INVAL;
    const hbg__def_entry *e = &o->graph->defs[i];
    const hbg_def_header *h = e->img;
    const hbg_def_node *nodes = (const hbg_def_node *)(const void *)((const unsigned char *)h + h->off_nodes);
    hbg_def_info *in = out;
    memset(in, 0, sizeof *in);
    in->key = e->key;
    in->hash = h->hash;
    in->nodes = h->nnodes;
    for (uint32_t k = 0; k < h->nnodes; k++) {
        const hbg_def_node *n = &nodes[k];
        int kind = n->kind == HBG_TASK_DUMMY ? HBG_NODE_DUMMY
                 : n->kind == HBG_TASK_ALLOC ? HBG_NODE_ALLOC
                 : n->core == HBG_CORE_AIC   ? HBG_NODE_AIC
                 : n->core == HBG_CORE_AIV   ? HBG_NODE_AIV
                                             : HBG_NODE_MIX;
        in->by_kind[kind]++;
        in->predicated += n->has_pred;
    }
    in->boundary_tensors = h->nbt;
    in->boundary_scalars = h->nbs;
    for (uint32_t k = 0; k < h->nbt; k++) {
        uint8_t d = e->sig.slot[k].dir;
        in->boundary_in += d == HBG_IN;
        in->boundary_inout += d == HBG_INOUT;
        in->boundary_out += d == HBG_OUT;
    }
    in->image_bytes = h->bytes;
    in->heap_bytes = h->heap_bytes;
    return HBG_OK;
}
