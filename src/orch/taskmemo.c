/* The task memo (see taskmemo.h). */
#include "orch/taskmemo.h"

#include "orch/orch_internal.h"
#include "util/bytes.h"

#define DIR_BITS      3u
#define DIRS_PER_WORD 21u

_Static_assert(HBG_MAX_TASK_TENSORS <= 2 * DIRS_PER_WORD, "a memo holds every argument's direction");
_Static_assert(HBG_MAX_FANINS <= UINT16_MAX, "a memo's ndeps holds every count of dependencies");

static size_t memo_bytes(const hbg_orch *o)
{
    return (size_t)o->window * sizeof(hbg__memo);
}

/* The image has a predicate slot per window slot at most. */
static size_t pred_bytes(const hbg_orch *o)
{
    return (size_t)o->window * sizeof(hbg__memo_pred);
}

hbg_status hbg__memo_init(hbg_orch *o)
{
    o->memo = hbg__reserve(memo_bytes(o));
    o->memo_preds = o->memo ? hbg__reserve(pred_bytes(o)) : NULL;
    o->memo_from = 1;
    if (!o->memo_preds) {
        hbg__memo_free(o);
        return HBG_E_NOMEM;
    }
    return HBG_OK;
}

void hbg__memo_free(hbg_orch *o)
{
    hbg__unreserve(o->memo, memo_bytes(o));
    hbg__unreserve(o->memo_preds, pred_bytes(o));
    o->memo = NULL;
    o->memo_preds = NULL;
}

void hbg__memo_forget(hbg_orch *o)
{
    o->memo_from = o->pass + 1;
}

void hbg__memo_begin_pass(hbg_orch *o, uint64_t heap_base)
{
    /* The last pass's allocations named other addresses. */
    if (heap_base != o->cfg.heap_base)
        o->memo_from = o->pass;
}

hbg__memo_at hbg__memo_here(const hbg_orch *o)
{
    const hbg__tmap_journal *j = &o->map.j;
    return (hbg__memo_at){
        .jat = j->following ? j->at : j->ncalls,
        .jrep = j->following ? j->at_report : j->nreports,
        .heap = o->heap_used,
        .ok = o->memo && j->calls && !j->stopped,
    };
}

static unsigned dir_of(const hbg__memo *m, uint32_t i)
{
    return (unsigned)(m->u.dirs[i / DIRS_PER_WORD] >> (i % DIRS_PER_WORD * DIR_BITS)) & 7u;
}

void hbg__memo_note(hbg_orch *o, const hbg_task *t, uint32_t tid, hbg__memo_at at)
{
    const hbg__tmap_journal *j = &o->map.j;
    if (!at.ok || !j->calls || j->stopped || o->body)
        return;
    const hbg_img_task *d = &o->img.tasks[tid];
    if (t->pred) {
        const hbg_pred *p = t->pred;
        o->memo_preds[d->pred] = (hbg__memo_pred){
            .view = *p->t, .byte_offset = p->byte_offset, .value = p->value, .op = p->op, .elem_size = p->elem_size};
    }
    /* The explicit dependencies lead the fanin list unless some repeats
     * (then the list has fewer): a hit compares them there. */
    if (d->fanin_cnt < t->ndeps)
        return;
    for (uint32_t i = 0; i < t->ndeps; i++)
        if (o->img.fanins[d->fanin_off + i] != t->deps[i])
            return;
    hbg__memo *m = &o->memo[tid];
    m->u.dirs[0] = m->u.dirs[1] = 0;
    for (uint32_t i = 0; i < t->ntensors; i++)
        m->u.dirs[i / DIRS_PER_WORD] |= (uint64_t)t->args[i].dir << (i % DIRS_PER_WORD * DIR_BITS);
    m->ndeps = (uint16_t)t->ndeps;
    hbg__memo_close(o, m, at);
}

/* The caller's task against slot n's record: the header, then directions
 * and tensors (an allocating argument arrives without its buffer, so its
 * buffer fields are the record's), scalars and explicit dependencies. */
static bool same_task(const hbg_orch *o, const hbg__memo *m, const hbg_img_task *d, const hbg_task *t)
{
    if (d->kind != HBG_TASK_KERNEL || d->has_pred != (t->pred != NULL) || t->core != d->core ||
        t->sync_start != d->sync_start || t->kernel_aic != d->kernel_aic || t->kernel_aiv != d->kernel_aiv ||
        (t->blocks ? t->blocks : 1) != d->blocks || t->ntensors != d->tensor_cnt || t->nscalars != d->scalar_cnt ||
        t->ndeps != m->ndeps)
        return false;
    if ((t->ntensors && !t->args) || (t->nscalars && !t->scalars) || (t->ndeps && !t->deps))
        return false;
    for (uint32_t i = 0; i < t->ntensors; i++) {
        const hbg_arg *a = &t->args[i];
        const hbg_tensor *r = &o->img.tensors[d->tensor_off + i];
        if (!a->t || a->dir != dir_of(m, i))
            return false;
        if (a->dir == HBG_OUT_ALLOC) {
            hbg_tensor v = *a->t;
            if (v.addr)
                return false;
            v.addr = r->addr, v.nbytes = r->nbytes, v.creator = r->creator;
            if (!hbg__same_bytes16(&v, r, sizeof v))
                return false;
        } else if (!hbg__same_bytes16(a->t, r, sizeof *r)) {
            return false;
        }
    }
    /* Outside a Graph body a scalar slot is refused: never a hit. */
    for (uint32_t i = 0; i < t->nscalars; i++)
        if ((t->scalar_slots && t->scalar_slots[i] >= 0) || t->scalars[i] != o->img.scalars[d->scalar_off + i])
            return false;
    for (uint32_t i = 0; i < t->ndeps; i++)
        if (t->deps[i] != o->img.fanins[d->fanin_off + i])
            return false;
    if (t->pred) {
        const hbg_pred *p = t->pred;
        const hbg__memo_pred *q = &o->memo_preds[d->pred];
        /* A predicate on a tensor the task allocates reads it after the
         * allocation (its word's address is the new buffer's): the full
         * path's order, which a compare before the write-back cannot see. */
        for (uint32_t i = 0; i < t->ntensors; i++)
            if (t->args[i].dir == HBG_OUT_ALLOC && t->args[i].t == p->t)
                return false;
        if (d->pred != o->img.npred || !p->t || p->byte_offset != q->byte_offset || p->value != q->value ||
            p->op != q->op || p->elem_size != q->elem_size || !hbg__same_bytes16(p->t, &q->view, sizeof q->view))
            return false;
    }
    return true;
}

bool hbg__memo_usable(const hbg_orch *o, uint32_t n)
{
    const hbg__tmap_journal *j = &o->map.j;
    if (!o->memo || !j->following || o->img.rollbacks || n >= o->window)
        return false;
    const hbg__memo *m = &o->memo[n];
    return m->pass == (uint32_t)(o->pass - 1) && o->pass - 1 >= o->memo_from && m->jat == j->at &&
           m->jrep == j->at_report && m->jat_end <= j->ncalls && m->jrep_end <= j->nreports &&
           m->heap0 == o->heap_used && m->infer == (o->manual_depth == 0);
}

void hbg__memo_follow(hbg_orch *o, const hbg__memo *m)
{
    hbg__tmap *map = &o->map;
    hbg__tmap_journal *j = &map->j;
    for (uint32_t k = m->jat; k < m->jat_end; k++) {
        const hbg__tmap_jcall *c = &j->calls[k];
        if (c->op != HBG__TMAP_JREAD)
            hbg__tmap_follow_write(map, c);
    }
    j->at = m->jat_end;
    j->at_report = m->jrep_end;
}

void hbg__memo_close(hbg_orch *o, hbg__memo *m, hbg__memo_at at)
{
    const hbg__tmap_journal *j = &o->map.j;
    m->heap0 = at.heap;
    m->heap1 = o->heap_used;
    m->pass = (uint32_t)o->pass;
    m->jat = at.jat;
    m->jrep = at.jrep;
    m->jat_end = j->following ? j->at : j->ncalls;
    m->jrep_end = j->following ? j->at_report : j->nreports;
    m->infer = o->manual_depth == 0;
}

bool hbg__memo_hit(hbg_orch *o, const hbg_task *t, hbg_task_id *id)
{
    uint32_t n = o->img.ntasks;
    if (o->body || !hbg__memo_usable(o, n))
        return false;
    hbg__memo *m = &o->memo[n];
    const hbg_img_task *d = &o->img.tasks[n];
    if (d->fanin_off != o->img.nfanin || d->tensor_off != o->img.ntensor || d->scalar_off != o->img.nscalar ||
        !same_task(o, m, d, t))
        return false;

    /* The submit, as the full path would make it. */
    for (uint32_t i = 0; i < t->ntensors; i++) {
        if (t->args[i].dir != HBG_OUT_ALLOC)
            continue;
        const hbg_tensor *r = &o->img.tensors[d->tensor_off + i];
        hbg_tensor *v = t->args[i].t;
        v->addr = r->addr, v->nbytes = r->nbytes, v->creator = r->creator;
    }
    o->heap_used = m->heap1;
    o->img.ntasks++;
    o->img.nfanin += d->fanin_cnt;
    o->img.ntensor += d->tensor_cnt;
    o->img.nscalar += d->scalar_cnt;
    o->img.npred += d->has_pred;
    o->stamp++;
    hbg__memo_follow(o, m);
    m->pass = (uint32_t)o->pass;
    o->memo_hits++;
    *id = n;
    return true;
}

void hbg__memo_note_alloc(hbg_orch *o, uint32_t tid, uint64_t heap0)
{
    /* Not in the first pass, which makes no journal either: a program
     * bound once pays nothing for the memo, and the cold pass touches no
     * note. */
    if (o->map.j.epochs < 2)
        return;
    hbg__memo *m = &o->memo[tid];
    m->heap0 = heap0;
    m->heap1 = o->heap_used;
    m->pass = (uint32_t)o->pass;
}

bool hbg__memo_hit_alloc(hbg_orch *o, uint32_t n, hbg_tensor *const *ts, hbg_task_id *id)
{
    uint32_t slot = o->img.ntasks;
    if (o->img.rollbacks || slot >= o->window)
        return false;
    hbg__memo *m = &o->memo[slot];
    const hbg_img_task *d = &o->img.tasks[slot];
    if (m->pass != (uint32_t)(o->pass - 1) || o->pass - 1 < o->memo_from || m->heap0 != o->heap_used ||
        d->kind != HBG_TASK_ALLOC || d->tensor_cnt != n || d->fanin_off != o->img.nfanin ||
        d->tensor_off != o->img.ntensor || d->scalar_off != o->img.nscalar)
        return false;
    for (uint32_t i = 0; i < n; i++) {
        const hbg_tensor *r = &o->img.tensors[d->tensor_off + i];
        if (!ts[i] || ts[i]->addr)
            return false;
        /* The full path allocates as it goes: a description listed twice
         * names a buffer by its second turn and is refused then. */
        for (uint32_t k = 0; k < i; k++)
            if (ts[k] == ts[i])
                return false;
        hbg_tensor v = *ts[i];
        v.addr = r->addr, v.nbytes = r->nbytes, v.creator = r->creator;
        if (!hbg__same_bytes16(&v, r, sizeof v))
            return false;
    }
    for (uint32_t i = 0; i < n; i++) {
        const hbg_tensor *r = &o->img.tensors[d->tensor_off + i];
        ts[i]->addr = r->addr, ts[i]->nbytes = r->nbytes, ts[i]->creator = r->creator;
    }
    o->heap_used = m->heap1;
    o->img.ntasks++;
    o->img.ntensor += n;
    o->stamp++;
    m->pass = (uint32_t)o->pass;
    o->memo_hits++;
    *id = slot;
    return true;
}
