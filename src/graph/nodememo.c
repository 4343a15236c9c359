/* The node memo: a recorded node that repeats the last capture's, kept.
 *
 * Re-recording a Definition every pass is what the original runtime does,
 * and what users measure, so a pass that re-records runs the body and
 * takes every one of its submits as a node. But a decode step's body
 * records the same nodes from the same boundary pass after pass, and a
 * node's records (its header, fanins, tensor and scalar arguments and
 * predicate, relative to the replay) are a function of what the body
 * passed and of the state the submit met:
 *   - the boundary as the call passed it (the recorder's snapshot; with
 *     it the slot ranges and the address table, which follow from it),
 *   - the recording heap's fill (own buffers and NODE_OUT offsets),
 *   - the recorder's tensor map (the fanins inference finds), and
 *   - the counts of the recorder's arrays (where the records go).
 * The recorder's arrays still hold the last capture's records after it
 * ends: a capture writes them in order from the start, and nothing else
 * writes them. So when a capture begins with a boundary snapshot equal
 * byte for byte to the last capture's, after a last capture that refused
 * nothing, and at node n
 *   - the last capture noted node n (it was recorded the full way, from
 *     the second capture on, when the map's journal keeps calls),
 *   - the map follows its journal at the call where that node's calls
 *     began, and the heap is filled to where it was then,
 *   - the arrays are filled to the offsets node n's record names, and
 *   - the body's task equals what that node was recorded from byte for
 *     byte (the header against the node, directions and scalars against
 *     its arguments, tensors and the predicate's tensor against the copies
 *     kept beside them, explicit dependencies against its first fanins),
 * then recording it again would write the bytes that are already there.
 * The memo compares instead: the records stay, the counts move past them,
 * an own buffer goes to the body at the address the record gives it, and
 * the map moves past the node's journaled calls as following them would.
 * The Definition is still built from the arrays and compared with the
 * last pass's image, exactly as after a full recording.
 *
 * A dummy is its dependencies alone, and is kept the same way. Not
 * memoized: alloc nodes (rare, and cheap), and a task
 * that passes the tensor of an allocating argument a second time (as
 * another argument or as the predicate), whose later uses see the buffer
 * the first one got: equal bytes do not make equal aliasing. Any capture
 * after one that refused a node or failed answers nothing: a refused
 * node may have written past the live counts.
 */
#include "graph/graph_internal.h"
#include "util/bytes.h"

hbg_status hbg__node_memo_init(hbg__recorder *r)
{
    r->notes = hbg__reserve((size_t)HBG_MAX_DEF_NODES * sizeof *r->notes);
    r->intens = r->notes ? hbg__reserve((size_t)HBG_MAX_DEF_NODES * HBG_MAX_TASK_TENSORS * sizeof *r->intens) : NULL;
    r->inpred = r->intens ? hbg__reserve((size_t)HBG_MAX_DEF_NODES * sizeof *r->inpred) : NULL;
    if (!r->inpred) {
        hbg__node_memo_free(r);
        return HBG_E_NOMEM;
    }
    return HBG_OK;
}

void hbg__node_memo_free(hbg__recorder *r)
{
    hbg__unreserve(r->notes, (size_t)HBG_MAX_DEF_NODES * sizeof *r->notes);
    hbg__unreserve(r->intens, (size_t)HBG_MAX_DEF_NODES * HBG_MAX_TASK_TENSORS * sizeof *r->intens);
    hbg__unreserve(r->inpred, (size_t)HBG_MAX_DEF_NODES * sizeof *r->inpred);
    r->notes = NULL;
    r->intens = r->inpred = NULL;
}

/* Whether a tensor an allocating argument names is passed again: its
 * other uses then depend on the order of the full path. */
static bool alloc_aliased(const hbg_task *t)
{
    for (uint32_t i = 0; i < t->ntensors; i++) {
        if (t->args[i].dir != HBG_OUT_ALLOC)
            continue;
        const hbg_tensor *x = t->args[i].t;
        if (t->pred && t->pred->t == x)
            return true;
        for (uint32_t k = 0; k < t->ntensors; k++)
            if (k != i && t->args[k].t == x)
                return true;
    }
    return false;
}

hbg__memo_at hbg__node_memo_keep(hbg__recorder *r, const hbg_task *t)
{
    hbg__memo_at at = hbg__memo_mark(&r->map, r->heap_used);
    /* Only what the full path will accept is ever noted; a task it
     * refuses may pass anything, so nothing is read past the limits. */
    at.ok = at.ok && r->notes && r->nnodes < HBG_MAX_DEF_NODES && t->ntensors <= HBG_MAX_TASK_TENSORS &&
            (!t->ntensors || t->args);
    if (!at.ok)
        return at;
    for (uint32_t i = 0; i < t->ntensors; i++)
        if (t->args[i].t)
            r->intens[r->ntarg + i] = *t->args[i].t;
    if (t->pred && t->pred->t)
        r->inpred[r->npred] = *t->pred->t;
    return at;
}

/* Whether the explicit dependencies are node n's first fanins, in order
 * (they are unless one repeats). */
static bool deps_lead(const hbg__recorder *r, const hbg_def_node *n, const hbg_task_id *deps, uint32_t nd)
{
    if (n->fanin_cnt < nd)
        return false;
    for (uint32_t i = 0; i < nd; i++)
        if (!(deps[i] & HBG_NODE_ID_BIT) || r->fanins[n->fanin_off + i] != (deps[i] & ~HBG_NODE_ID_BIT))
            return false;
    return true;
}

void hbg__node_memo_note(hbg_orch *o, const hbg_task *t, uint32_t n, hbg__memo_at at)
{
    hbg__recorder *r = &o->graph->rec;
    hbg__memo *m = &r->notes[n];
    if (!deps_lead(r, &r->nodes[n], t->deps, t->ndeps) || alloc_aliased(t) ||
        !hbg__memo_seal(&r->map, m, at, r->heap_used, r->capture, o->manual_depth == 0))
        return;
    m->ndeps = (uint16_t)t->ndeps;
}

/* The scalars as the full path records them. */
static bool same_scalars(const hbg__recorder *r, const hbg_def_node *d, const hbg_task *t)
{
    const hbg_def_sarg *s = r->sargs + d->sarg_off;
    for (uint32_t i = 0; i < t->nscalars; i++) {
        int32_t slot = t->scalar_slots ? t->scalar_slots[i] : -1;
        if (s[i].slot != slot || (slot < 0 && s[i].value != t->scalars[i]))
            return false;
    }
    return true;
}

/* A targ found as a slot's own tensor (via, HBG_VIA_*) holds no guess,
 * and so fixes no slots: the tensor passed now must be that slot's own
 * too. One found by its content may be answered for a slot's own tensor:
 * the guess it held fixed the slots that could have been meant. */
static bool same_owner(const hbg__recorder *r, uint16_t via, const hbg_tensor *t)
{
    unsigned v = via & HBG_VIA_SLOT_MASK;
    return !v || r->bptr[v - 1u] == t;
}

static bool same_pred(const hbg__recorder *r, const hbg_def_node *d, const hbg_task *t)
{
    const hbg_pred *p = t->pred;
    const hbg_def_pred *q = &r->preds[d->pred];
    return d->pred == r->npred && p->t && p->byte_offset == q->byte_offset && p->value == q->value && p->op == q->op &&
           p->elem_size == q->elem_size && hbg__same_bytes16(p->t, &r->inpred[d->pred], sizeof *p->t) &&
           same_owner(r, r->pvia[d->pred], p->t);
}

/* The body's task against node d and what it was recorded from. A
 * dummy is its dependencies alone. */
static bool same_task(const hbg__recorder *r, const hbg__memo *m, const hbg_def_node *d, const hbg_task *t,
                      bool dummy)
{
    if (d->kind != (dummy ? HBG_TASK_DUMMY : HBG_TASK_KERNEL) || t->ndeps != m->ndeps || (t->ndeps && !t->deps))
        return false;
    if (dummy)
        return deps_lead(r, d, t->deps, t->ndeps);
    if (d->has_pred != (t->pred != NULL) || t->core != d->core || t->sync_start != d->sync_start ||
        t->kernel_aic != d->kernel_aic || t->kernel_aiv != d->kernel_aiv || (t->blocks ? t->blocks : 1) != d->blocks ||
        t->ntensors != d->targ_cnt || t->nscalars != d->sarg_cnt)
        return false;
    if ((t->ntensors && !t->args) || (t->nscalars && !t->scalars))
        return false;
    const hbg_def_targ *g = r->targs + d->targ_off;
    const hbg_tensor *in = r->intens + d->targ_off;
    for (uint32_t i = 0; i < t->ntensors; i++) {
        const hbg_arg *a = &t->args[i];
        if (!a->t || a->dir != g[i].dir || !hbg__same_bytes16(a->t, &in[i], sizeof in[i]) ||
            (g[i].dir != HBG_OUT_ALLOC && !same_owner(r, r->tvia[d->targ_off + i], a->t)))
            return false;
    }
    return same_scalars(r, d, t) && deps_lead(r, d, t->deps, t->ndeps) && (!t->pred || same_pred(r, d, t)) &&
           !alloc_aliased(t);
}

bool hbg__node_memo_hit(hbg_orch *o, const hbg_task *t, bool dummy)
{
    hbg__recorder *r = &o->graph->rec;
    uint32_t n = r->nnodes;
    if (n >= HBG_MAX_DEF_NODES)
        return false;
    hbg__memo *m = &r->notes[n];
    const hbg_def_node *d = &r->nodes[n];
    if (m->stamp != r->capture - 1 || !hbg__memo_meets(m, &r->map, r->heap_used, o->manual_depth == 0) ||
        d->fanin_off != r->nfanin || d->targ_off != r->ntarg || d->sarg_off != r->nsarg ||
        !same_task(r, m, d, t, dummy))
        return false;

    /* The node, as the full path would record it. (Its views, if it
     * wrote any, are not copied: the map follows the journal, whose calls
     * hold their own copies.) */
    const hbg_def_targ *g = r->targs + d->targ_off;
    for (uint32_t i = 0; i < t->ntensors; i++) {
        if (g[i].dir == HBG_OUT_ALLOC) {
            hbg_tensor *x = t->args[i].t;
            x->addr = HBG_REC_BASE + g[i].heap_off;
            x->nbytes = g[i].layout.nbytes;
            x->creator = 0;
        }
    }
    r->nfanin += d->fanin_cnt;
    r->ntarg += d->targ_cnt;
    r->nsarg += d->sarg_cnt;
    r->npred += d->has_pred;
    r->heap_used = m->heap1;
    hbg__tmap_span_follow(&r->map, &m->j);
    m->stamp = r->capture; /* the note holds for the next capture too */
    r->node_hits++;
    return true;
}
