/* Recording a Graph body into Definition nodes.
 *
 * While a body records, its submits land here instead of in the window.
 * Each tensor argument is expressed relative to the replay rather than to
 * this call: a boundary slot, a view of one (element delta), or a byte
 * offset into the replay's own GM block. Buffers the body allocates get
 * addresses in a private range (REC_BASE) during recording, so they can be
 * told apart from real device addresses by value alone, and so the body can
 * pass them from node to node exactly as it would outside a Graph.
 */
#include <string.h>

#include "graph/graph_internal.h"
#include "util/bytes.h"

/* Slot chain of boundary tensors sharing a buffer. */
void hbg__boundary_index(hbg__recorder *r, const hbg_boundary *b, uint16_t *alias)
{
    hbg__btab_begin(r);
    for (uint32_t k = 0; k < b->ntensors; k++) {
        hbg__btab_ent *x = hbg__btab_probe(r, b->args[k].t->addr);
        r->bnext[k] = 0xffff;
        if (x->stamp != r->bstamp) {
            *x = (hbg__btab_ent){.addr = b->args[k].t->addr, .stamp = r->bstamp, .slot = (uint16_t)k,
                                .last = (uint16_t)k};
            alias[k] = (uint16_t)k;
        } else {
            /* Appended, so the first slot stays the chain head. */
            alias[k] = x->slot;
            r->bnext[x->last] = (uint16_t)k;
            x->last = (uint16_t)k;
        }
    }
}

static int boundary_head(hbg__recorder *r, uint64_t addr)
{
    const hbg__btab_ent *x = hbg__btab_probe(r, addr);
    return x->stamp == r->bstamp ? x->slot : -1;
}

static bool same_view(const hbg_tensor *a, const hbg_tensor *b)
{
    if (a->offset != b->offset || a->ndim != b->ndim || a->dtype != b->dtype)
        return false;
    for (unsigned d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d] || a->strides[d] != b->strides[d])
            return false;
    return true;
}

static hbg_status rec_alloc(hbg_orch *o, hbg__recorder *r, uint64_t bytes, uint64_t *off)
{
    uint64_t heap_cap = o->cfg.heap_bytes;
    uint64_t at = (r->heap_used + HBG_HEAP_ALIGN - 1) & ~(uint64_t)(HBG_HEAP_ALIGN - 1);
    if (bytes > heap_cap || at > heap_cap - bytes) {
        hbg__why(o, HBG_WHY_HEAP, o->why.arg, (int64_t)bytes, (int64_t)(at < heap_cap ? heap_cap - at : 0),
                 (int64_t)heap_cap);
        return HBG_E_HEAP_EXHAUSTED;
    }
    r->heap_used = at + bytes;
    *off = at;
    return HBG_OK;
}

/* A buffer the node itself creates: `bytes` of the replay's GM block,
 * handed to the body at its recording address. */
static hbg_status own_out(hbg_orch *o, hbg__recorder *r, int32_t i, hbg_tensor *t, uint64_t bytes,
                          hbg_def_targ *g)
{
    uint64_t off;
    o->why.arg = i;
    hbg_status st = rec_alloc(o, r, bytes, &off);
    if (st)
        return st;
    t->addr = HBG_REC_BASE + off;
    t->nbytes = bytes;
    t->creator = 0;
    g->cls = HBG_TARG_OWN_OUT;
    g->heap_off = off;
    hbg__layout_into(&g->layout, t, true);
    return HBG_OK;
}

/* Expresses `t` relative to the replay, into *out, which the caller has
 * zeroed, and says in *via how it was found (HBG_VIA_*). A slot's own
 * tensor, passed on by the body as the call passed it, is that slot. Any
 * other tensor is found by its content: the first slot on its buffer with
 * the same view, else the first whose range holds it; when another slot
 * on the buffer would do too, which one the body meant is a guess, and the
 * signature holds those slots where they lay (graph.c, fixed_heads). */
static hbg_status classify(hbg__recorder *r, const hbg_tensor *t, uint64_t lo, uint64_t hi,
                           hbg_def_targ *out, uint16_t *via)
{
    *via = 0;
    if (t->addr >= HBG_REC_BASE && t->addr - HBG_REC_BASE < r->heap_used) {
        out->cls = HBG_TARG_NODE_OUT;
        out->heap_off = t->addr - HBG_REC_BASE;
        hbg__layout_into(&out->layout, t, true);
        return HBG_OK;
    }
    int k = boundary_head(r, t->addr);
    if (k < 0)
        return HBG_E_GRAPH_CAPTURE;
    /* The slot whose own tensor t is, if one alone passed it and its view
     * is unchanged since the call read it: no guess, and no search. */
    int own = -1;
    unsigned owners = 0;
    for (int j = k; j != 0xffff; j = r->bnext[j])
        if (r->bptr[j] == t)
            own = j, owners++;
    if (owners == 1 && same_view(t, &r->bsnap[own])) {
        out->cls = HBG_TARG_BOUNDARY;
        out->ref = (uint32_t)own;
        hbg__layout_into(&out->layout, t, false);
        *via = (uint16_t)(own + 1);
        return HBG_OK;
    }
    /* By content: the search ends once it has its answer and knows
     * whether a second slot holds t. */
    int same = -1, view = -1;
    unsigned held = 0;
    for (int j = k; j != 0xffff && !(same >= 0 && held > 1); j = r->bnext[j]) {
        const hbg_tensor *bt = &r->bsnap[j];
        bool is = same_view(t, bt);
        /* The slot's range was computed (and checked) by the call's scan. */
        bool holds = is || (bt->dtype == t->dtype && lo >= r->brng[j].lo && hi <= r->brng[j].hi);
        if (is && same < 0)
            same = j;
        if (holds && view < 0)
            view = j;
        held += holds;
    }
    if (view < 0)
        return HBG_E_GRAPH_CAPTURE;
    if (held > 1)
        *via = HBG_VIA_AMBIGUOUS;
    if (same >= 0) {
        out->cls = HBG_TARG_BOUNDARY;
        out->ref = (uint32_t)same;
        hbg__layout_into(&out->layout, t, false);
        return HBG_OK;
    }
    out->cls = HBG_TARG_BVIEW;
    out->ref = (uint32_t)view;
    out->delta = (int64_t)(t->offset - r->bsnap[view].offset);
    hbg__layout_into(&out->layout, t, false);
    return HBG_OK;
}

static hbg_status node_fanin(hbg__recorder *r, hbg_def_node *n, uint32_t from)
{
    return hbg__fanin_add(r->node_stamp, r->stamp_node, r->fanins, &r->nfanin, &n->fanin_cnt, from);
}

typedef struct visit_ctx {
    hbg__recorder *r;
    hbg_def_node *n;
    uint32_t self;
} visit_ctx;

static hbg_status visit(void *ctx, uint32_t writer)
{
    visit_ctx *c = ctx;
    return writer == c->self ? HBG_OK : node_fanin(c->r, c->n, writer);
}

static hbg_status infer_read(hbg__recorder *r, hbg_def_node *n, uint32_t self, const hbg_tensor *t,
                             uint64_t lo, uint64_t hi)
{
    visit_ctx c = {r, n, self};
    return hbg__tmap_readers_deps(&r->map, t, lo, hi, HBG_TMAP_DENSE_UNKNOWN, visit, &c);
}

static hbg_status record_write(hbg__recorder *r, uint32_t self, const hbg_tensor *t, uint64_t lo, uint64_t hi,
                               uint8_t dir)
{
    hbg_tensor *v = &r->views[r->nviews++];
    *v = *t;
    return hbg__tmap_write(&r->map, v, lo, hi, HBG_TMAP_DENSE_UNKNOWN, self, dir == HBG_INOUT || dir == HBG_OUT);
}

static hbg_def_node *new_node(hbg_orch *o, hbg__recorder *r, uint8_t kind)
{
    if (r->nnodes >= HBG_MAX_DEF_NODES) {
        hbg__why(o, HBG_WHY_POOL, -1, HBG_POOL_DEF_NODES, HBG_MAX_DEF_NODES, 0);
        return NULL;
    }
    hbg_def_node *n = &r->nodes[r->nnodes];
    memset(n, 0, sizeof *n);
    n->kind = kind;
    n->kernel_aic = n->kernel_aiv = HBG_KERNEL_NONE;
    n->blocks = 1;
    n->fanin_off = r->nfanin;
    n->targ_off = r->ntarg;
    n->sarg_off = r->nsarg;
    r->stamp_node++;
    return n;
}

typedef struct rec_mark {
    uint32_t nfanin, ntarg, nsarg, npred, nviews;
    uint64_t heap_used;
} rec_mark;

static rec_mark mark(const hbg__recorder *r)
{
    return (rec_mark){r->nfanin, r->ntarg, r->nsarg, r->npred, r->nviews, r->heap_used};
}

static void rollback(hbg__recorder *r, rec_mark m)
{
    r->nfanin = m.nfanin, r->ntarg = m.ntarg, r->nsarg = m.nsarg, r->npred = m.npred;
    r->nviews = m.nviews, r->heap_used = m.heap_used;
}

/* Every recorded submit ends here: a node that was refused was already
 * taken back (or never started), a good one becomes node nnodes; either
 * way the operation is timed. */
static hbg_status end_node(hbg_orch *o, hbg_status st, hbg_task_id *id, uint64_t t0)
{
    hbg__recorder *r = &o->graph->rec;
    if (!st) {
        *id = HBG_NODE_ID_BIT | r->nnodes++;
    } else {
        r->hits_on = false; /* its records may lie past the counts */
        hbg__why_at(o, HBG_AT_NODE, r->nnodes, r->key);
    }
    if (o->timing)
        hbg__op_end(o, HBG_OP_RECORD_NODE, t0, r->nnodes);
    return st;
}

void hbg__rec_begin(hbg_orch *o, const hbg_boundary *b, const hbg__range *brng)
{
    hbg__recorder *r = &o->graph->rec;
    r->brng = brng;
    r->heap_used = 0;
    r->nnodes = r->nfanin = r->ntarg = r->nsarg = r->npred = r->nviews = 0;
    hbg__tmap_reset(&r->map);
    /* The snapshot, its tensors compared with the last capture's as they
     * are copied: the nodes' classification reads nothing else of the
     * boundary (brng and the address table follow from them), and their
     * validation only the count of scalars. */
    hbg_boundary *p = &r->bpassed;
    bool same = r->last_clean && p->ntensors == b->ntensors && p->nscalars == b->nscalars;
    for (uint32_t k = 0; k < b->ntensors; k++) {
        /* the directions too: what a node may write through depends on
         * them (writable()), and a memo's answer checks nothing */
        same = same && r->bargs[k].dir == b->args[k].dir &&
               hbg__same_bytes16(&r->bsnap[k], b->args[k].t, sizeof r->bsnap[k]);
        r->bsnap[k] = *b->args[k].t;
        r->bptr[k] = b->args[k].t;
        r->bargs[k] = (hbg_arg){&r->bsnap[k], b->args[k].dir};
    }
    if (b->nscalars)
        memcpy(r->bscalars, b->scalars, (size_t)b->nscalars * sizeof *r->bscalars);
    if (b->ndeps)
        memcpy(r->bdeps, b->deps, (size_t)b->ndeps * sizeof *r->bdeps);
    *p = (hbg_boundary){.ntensors = b->ntensors,
                        .args = r->bargs,
                        .nscalars = b->nscalars,
                        .scalars = r->bscalars,
                        .ndeps = b->ndeps,
                        .deps = r->bdeps};
    r->hits_on = same && r->notes;
    r->wrote = false;
    r->capture++;
}

void hbg__rec_end(hbg__recorder *r, hbg_status st)
{
    /* A refused node may have written records past the live counts, over
     * the last capture's; a capture that refused one fails (the error is
     * sticky), as does one that failed otherwise. */
    r->last_clean = !st;
}

/* Whether a node may write t, classified as g, through the boundary:
 * some slot that holds it (passes it, or a range around it) is passed as
 * HBG_INOUT or HBG_OUT. The outer task registers only those slots as
 * written, so a write through an HBG_IN slot would be one no later task
 * is ordered after (and, on a persistent caller input, one that outlives
 * the pass). */
static bool writable(hbg__recorder *r, const hbg_def_targ *g, const hbg_tensor *t, const hbg__range *rng)
{
    if (g->cls != HBG_TARG_BOUNDARY && g->cls != HBG_TARG_BVIEW)
        return true;
    for (int j = boundary_head(r, t->addr); j >= 0 && j != 0xffff; j = r->bnext[j])
        if (r->bargs[j].dir != HBG_IN &&
            ((r->bptr[j] == t && same_view(t, &r->bsnap[j])) || (rng->lo >= r->brng[j].lo && rng->hi <= r->brng[j].hi)))
            return true;
    return false;
}

hbg_status hbg__record_task(hbg_orch *o, const hbg_task *t, bool dummy, hbg_task_id *id)
{
    hbg__recorder *r = &o->graph->rec;
    uint64_t t0 = hbg__op_begin(o, HBG_OP_RECORD_NODE);
    if (r->hits_on && hbg__node_memo_hit(o, t, dummy))
        return end_node(o, HBG_OK, id, t0);
    r->wrote = true;
    hbg__memo_at at = hbg__node_memo_keep(r, t);
    hbg__range rng[HBG_MAX_TASK_TENSORS + 1];
    hbg_status st = hbg__orch_validate_task(o, t, dummy, rng);
    for (uint32_t i = 0; i < t->ndeps && !st; i++)
        if (!(t->deps[i] & HBG_NODE_ID_BIT) || (t->deps[i] & ~HBG_NODE_ID_BIT) >= r->nnodes) {
            hbg__why(o, HBG_WHY_DEP, -1, i, t->deps[i], r->nnodes);
            st = HBG_E_BAD_DEP;
        }
    hbg_def_node *n = st ? NULL : new_node(o, r, dummy ? HBG_TASK_DUMMY : HBG_TASK_KERNEL);
    if (!st && !n)
        st = HBG_E_POOL_EXHAUSTED;
    if (st)
        goto out;
    uint32_t self = r->nnodes;
    rec_mark m = mark(r);
    for (uint32_t i = 0; i < t->ndeps && !st; i++)
        st = node_fanin(r, n, t->deps[i] & ~HBG_NODE_ID_BIT);
    if (!dummy && !st) {
        n->core = t->core;
        n->sync_start = t->sync_start;
        n->kernel_aic = t->kernel_aic;
        n->kernel_aiv = t->kernel_aiv;
        n->blocks = t->blocks ? t->blocks : 1;
        for (uint32_t i = 0; i < t->nscalars; i++) {
            int16_t slot = t->scalar_slots ? t->scalar_slots[i] : -1;
            r->sargs[r->nsarg++] = (hbg_def_sarg){.slot = slot, .pad = 0, .value = slot >= 0 ? 0 : t->scalars[i]};
        }
        n->sarg_cnt = t->nscalars;
        bool infer = o->manual_depth == 0;
        for (uint32_t i = 0; i < t->ntensors && !st; i++) {
            hbg_arg *a = &t->args[i];
            hbg_def_targ *g = &r->targs[r->ntarg];
            memset(g, 0, sizeof *g);
            g->dir = a->dir;
            if (a->dir == HBG_OUT_ALLOC) {
                if (!hbg__byte_range(a->t, &rng[i].lo, &rng[i].hi)) {
                    hbg__why_bad_view(o, (int32_t)i, a->t);
                    st = HBG_E_INVAL;
                    break;
                }
                if ((st = own_out(o, r, (int32_t)i, a->t, rng[i].hi, g)))
                    break;
            } else {
                st = classify(r, a->t, rng[i].lo, rng[i].hi, g, &r->tvia[r->ntarg]);
                if (st)
                    hbg__why(o, HBG_WHY_CAPTURE, (int32_t)i, 0, 0, 0);
                if (!st && (a->dir == HBG_INOUT || a->dir == HBG_OUT) && !writable(r, g, a->t, &rng[i])) {
                    hbg__why(o, HBG_WHY_IN_SLOT_WRITE, (int32_t)i, g->ref, 0, 0);
                    st = HBG_E_GRAPH_CAPTURE;
                }
                if (!st && infer && a->dir != HBG_NO_DEP)
                    st = infer_read(r, n, self, a->t, rng[i].lo, rng[i].hi);
            }
            r->ntarg++;
        }
        n->targ_cnt = t->ntensors;
        if (t->pred && !st) {
            hbg_def_pred *p = &r->preds[r->npred];
            memset(p, 0, sizeof *p);
            const hbg__range *pr = &rng[HBG_MAX_TASK_TENSORS];
            st = classify(r, t->pred->t, pr->lo, pr->hi, &p->where, &r->pvia[r->npred]);
            if (st)
                hbg__why(o, HBG_WHY_CAPTURE, -1, 1, 0, 0); /* 1: the predicate's */
            if (!st && infer)
                st = infer_read(r, n, self, t->pred->t, pr->lo, pr->hi);
            p->byte_offset = t->pred->byte_offset;
            p->value = t->pred->value;
            p->op = t->pred->op;
            p->elem_size = t->pred->elem_size;
            n->has_pred = 1;
            n->pred = r->npred++;
        }
        /* All of the node's writes fit, or none is made, as for a task:
         * a node refused after its first write would leave an entry naming
         * the id the next node gets, and a view the next node overwrites. */
        uint64_t waddr[HBG_MAX_TASK_TENSORS];
        uint8_t widx[HBG_MAX_TASK_TENSORS];
        uint32_t nw = 0;
        for (uint32_t i = 0; i < t->ntensors && !st; i++)
            if (hbg__dir_writes(t->args[i].dir))
                widx[nw] = (uint8_t)i, waddr[nw++] = t->args[i].t->addr;
        if (!st && !hbg__tmap_fits(&r->map, waddr, nw)) {
            hbg__why_map_full(o, &r->map, nw);
            st = HBG_E_POOL_EXHAUSTED;
        }
        for (uint32_t k = 0; k < nw && !st; k++) {
            const hbg_arg *a = &t->args[widx[k]];
            st = record_write(r, self, a->t, rng[widx[k]].lo, rng[widx[k]].hi, a->dir);
        }
    }
    if (st) {
        rollback(r, m);
        hbg__orch_release_allocs(t->args, dummy ? 0 : t->ntensors);
    } else if (at.ok) {
        hbg__node_memo_note(o, t, self, at);
    }
out:
    return end_node(o, st, id, t0);
}

hbg_status hbg__record_alloc(hbg_orch *o, uint32_t n, hbg_tensor *const *ts, hbg_task_id *id)
{
    hbg__recorder *r = &o->graph->rec;
    uint64_t t0 = hbg__op_begin(o, HBG_OP_RECORD_NODE);
    hbg_status st = HBG_OK;
    r->wrote = true;
    hbg_def_node *node = new_node(o, r, HBG_TASK_ALLOC);
    if (!node) {
        st = HBG_E_POOL_EXHAUSTED;
        goto out;
    }
    rec_mark m = mark(r);
    for (uint32_t i = 0; i < n && !st; i++) {
        uint64_t lo, hi;
        if ((st = hbg__orch_check_alloc(o, ts[i], (int32_t)i, &lo, &hi)))
            break;
        hbg_def_targ *g = &r->targs[r->ntarg];
        memset(g, 0, sizeof *g);
        g->dir = HBG_OUT_ALLOC;
        if ((st = own_out(o, r, (int32_t)i, ts[i], hi, g)))
            break;
        r->ntarg++;
        /* Not registered as written, as outside a Graph: an alloc node is
         * complete when its replay starts (see hbg_alloc_tensors). */
    }
    node->targ_cnt = n;
    if (st) {
        /* The tensors before the failing one were given recording
         * addresses; like the buffers, those are taken back. */
        for (uint32_t i = 0; i < r->ntarg - m.ntarg; i++)
            ts[i]->addr = 0;
        rollback(r, m);
    }
out:
    return end_node(o, st, id, t0);
}
