/* The task memo (see taskmemo.h). */
#include "orch/taskmemo.h"

#include <stddef.h>

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
    return (size_t)o->window * sizeof(hbg_tensor);
}

/* A stamp per window slot; kept apart from the note, which is one cache
 * line already full, and read only by a submit passed a bound. */
static size_t bound_bytes(const hbg_orch *o)
{
    return (size_t)o->window * sizeof(uint64_t);
}

hbg_status hbg__memo_init(hbg_orch *o)
{
    o->memo = hbg__reserve(memo_bytes(o));
    o->memo_preds = o->memo ? hbg__reserve(pred_bytes(o)) : NULL;
    o->memo_bound = o->memo_preds ? hbg__reserve(bound_bytes(o)) : NULL;
    o->memo_from = 1;
    if (!o->memo_bound) {
        hbg__memo_free(o);
        return HBG_E_NOMEM;
    }
    return HBG_OK;
}

void hbg__memo_free(hbg_orch *o)
{
    hbg__unreserve(o->memo, memo_bytes(o));
    hbg__unreserve(o->memo_preds, pred_bytes(o));
    hbg__unreserve(o->memo_bound, bound_bytes(o));
    o->memo = NULL;
    o->memo_preds = NULL;
    o->memo_bound = NULL;
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

/* A note made by the last pass, which nothing has voided since; and the
 * mirror past the live counts still the last pass's. */
static bool fresh(const hbg_orch *o, const hbg__memo *m)
{
    return m->stamp == (uint32_t)(o->pass - 1) && o->pass - 1 >= o->memo_from && !o->img.rollbacks;
}

hbg__memo_at hbg__memo_here(const hbg_orch *o)
{
    hbg__memo_at at = hbg__memo_mark(&o->map, o->heap_used);
    at.ok = at.ok && o->memo;
    return at;
}

bool hbg__memo_usable(const hbg_orch *o, uint32_t n)
{
    if (!o->memo || n >= o->window)
        return false;
    const hbg__memo *m = &o->memo[n];
    return fresh(o, m) && hbg__memo_meets(m, &o->map, o->heap_used, o->manual_depth == 0);
}

bool hbg__memo_deps_lead(const hbg_orch *o, const hbg_img_task *d, const hbg_task_id *deps, uint32_t n)
{
    if (d->fanin_cnt < n)
        return false;
    for (uint32_t i = 0; i < n; i++)
        if (o->img.fanins[d->fanin_off + i] != deps[i])
            return false;
    return true;
}

bool hbg__memo_close(hbg_orch *o, hbg__memo *m, hbg__memo_at at)
{
    return hbg__memo_seal(&o->map, m, at, o->heap_used, o->pass, o->manual_depth == 0);
}

/* The part of an answer every kind shares (an allocation's note has an
 * empty journal span). */
static void answer(hbg_orch *o, hbg__memo *m, hbg_task_id *id)
{
    *id = o->img.ntasks++;
    o->heap_used = m->heap1;
    o->stamp++;
    m->stamp = (uint32_t)o->pass;
    o->memo_hits++;
}

void hbg__memo_answer(hbg_orch *o, hbg__memo *m, hbg_task_id *id)
{
    hbg__tmap_span_follow(&o->map, &m->j);
    answer(o, m, id);
}

/* An allocating argument arrives without its buffer: it equals its record
 * when everything but the buffer fields (addr, nbytes, creator) does.
 * Compared in place, not as a copy with the buffer fields patched in:
 * the copy's 16-byte reads then met the 4-byte store of `creator` still
 * in flight, a stall that was a third of a dsv4 rank's allocations. */
/* The parts compared: 64 bytes from `offset` (to shape[3]), then the
 * 8-byte tail (shape[4], ndim, dtype, reserved) that ends where creator
 * begins, then reserved2: all but addr, nbytes and creator. */
#define ALLOC_MID ((size_t)64)
#define ALLOC_TAIL (offsetof(hbg_tensor, offset) + ALLOC_MID)
_Static_assert(offsetof(hbg_tensor, offset) == 16 && ALLOC_TAIL + 8 == offsetof(hbg_tensor, creator) &&
                   offsetof(hbg_tensor, reserved2) + 4 == sizeof(hbg_tensor),
               "same_alloc's parts cover hbg_tensor but its buffer fields");

static bool same_alloc(const hbg_tensor *t, const hbg_tensor *r)
{
    if (t->addr)
        return false;
    uint64_t tail_t, tail_r;
    memcpy(&tail_t, (const unsigned char *)t + ALLOC_TAIL, 8);
    memcpy(&tail_r, (const unsigned char *)r + ALLOC_TAIL, 8);
    return hbg__same_bytes16(&t->offset, &r->offset, ALLOC_MID) && tail_t == tail_r && t->reserved2 == r->reserved2;
}

/* The buffer the record says it was given, as the full path gives it. */
static void take_buffer(hbg_tensor *t, const hbg_tensor *r)
{
    t->addr = r->addr, t->nbytes = r->nbytes, t->creator = r->creator;
}

static unsigned dir_of(const hbg__memo *m, uint32_t i)
{
    return (unsigned)(m->u.dirs[i / DIRS_PER_WORD] >> (i % DIRS_PER_WORD * DIR_BITS)) & 7u;
}

/* The arguments against their records, each direction and tensor (an
 * allocating one on all but its buffer). */
static bool same_args(const hbg__memo *m, const hbg_tensor *r, const hbg_task *t)
{
    for (uint32_t i = 0; i < t->ntensors; i++) {
        const hbg_arg *a = &t->args[i];
        if (!a->t || a->dir != dir_of(m, i) ||
            !(a->dir == HBG_OUT_ALLOC ? same_alloc(a->t, &r[i]) : hbg__same_bytes16(a->t, &r[i], sizeof r[i])))
            return false;
    }
    return true;
}

void hbg__memo_note(hbg_orch *o, const hbg_task *t, uint64_t stamp, uint32_t tid, hbg__memo_at at)
{
    const hbg_img_task *d = &o->img.tasks[tid];
    hbg__memo *m = &o->memo[tid];
    if (o->body || !hbg__memo_deps_lead(o, d, t->deps, t->ndeps) || !hbg__memo_close(o, m, at))
        return;
    if (t->pred)
        o->memo_preds[d->pred] = *t->pred->t;
    m->u.dirs[0] = m->u.dirs[1] = 0;
    for (uint32_t i = 0; i < t->ntensors; i++)
        m->u.dirs[i / DIRS_PER_WORD] |= (uint64_t)t->args[i].dir << (i % DIRS_PER_WORD * DIR_BITS);
    m->ndeps = (uint16_t)t->ndeps;
    o->memo_bound[tid] = stamp;
}

/* The predicate against its record: the word's address, value and test in
 * the image, the tensor beside it. The same tensor at the same address
 * makes the same byte offset. */
static bool same_pred(const hbg_orch *o, const hbg_img_task *d, const hbg_task *t)
{
    const hbg_pred *p = t->pred;
    const hbg_img_pred *r = &o->img.preds[d->pred];
    /* A predicate on a tensor the task allocates reads it after the
     * allocation (its word's address is the new buffer's): the full
     * path's order, which a compare before the write-back cannot see.
     * A bound task's own list is empty, and a bound never allocates
     * (bound.c): the bound is not read. */
    for (uint32_t i = 0; i < t->ntensors; i++)
        if (t->args[i].dir == HBG_OUT_ALLOC && t->args[i].t == p->t)
            return false;
    return d->pred == o->img.npred && p->t && p->t->addr + p->byte_offset == r->addr && p->value == r->value &&
           p->op == r->op && p->elem_size == r->elem_size &&
           hbg__same_bytes16(p->t, &o->memo_preds[d->pred], sizeof *p->t);
}

/* The caller's task against slot n's record: the header, then directions
 * and tensors, scalars, explicit dependencies and the predicate. */
static bool same_task(const hbg_orch *o, const hbg__memo *m, const hbg_img_task *d, const hbg_task *t,
                      uint32_t ntensors, uint64_t stamp)
{
    if (d->kind != HBG_TASK_KERNEL || d->has_pred != (t->pred != NULL) || t->core != d->core ||
        t->sync_start != d->sync_start || t->kernel_aic != d->kernel_aic || t->kernel_aiv != d->kernel_aiv ||
        (t->blocks ? t->blocks : 1) != d->blocks || ntensors != d->tensor_cnt || t->nscalars != d->scalar_cnt ||
        t->ndeps != m->ndeps)
        return false;
    if ((t->ntensors && !t->args) || (t->nscalars && !t->scalars) || (t->ndeps && !t->deps))
        return false;
    if (stamp ? o->memo_bound[d - o->img.tasks] != stamp : !same_args(m, &o->img.tensors[d->tensor_off], t))
        return false;
    /* Outside a Graph body a scalar slot is refused, and so is a mark
     * that is neither a slot nor static (-7): never a hit. */
    for (uint32_t i = 0; i < t->nscalars; i++)
        if ((t->scalar_slots && t->scalar_slots[i] != -1) || t->scalars[i] != o->img.scalars[d->scalar_off + i])
            return false;
    return hbg__memo_deps_lead(o, d, t->deps, t->ndeps) && (!t->pred || same_pred(o, d, t));
}

bool hbg__memo_hit(hbg_orch *o, const hbg_task *t, uint32_t ntensors, uint64_t stamp, hbg_task_id *id)
{
    uint32_t n = o->img.ntasks;
    if (o->body || !hbg__memo_usable(o, n))
        return false;
    hbg__memo *m = &o->memo[n];
    const hbg_img_task *d = &o->img.tasks[n];
    if (d->fanin_off != o->img.nfanin || d->tensor_off != o->img.ntensor || d->scalar_off != o->img.nscalar ||
        !same_task(o, m, d, t, ntensors, stamp))
        return false;

    /* The submit, as the full path would make it (a bound task's own
     * list is empty). */
    for (uint32_t i = 0; i < t->ntensors; i++)
        if (t->args[i].dir == HBG_OUT_ALLOC)
            take_buffer(t->args[i].t, &o->img.tensors[d->tensor_off + i]);
    o->img.nfanin += d->fanin_cnt;
    o->img.ntensor += d->tensor_cnt;
    o->img.nscalar += d->scalar_cnt;
    o->img.npred += d->has_pred;
    hbg__memo_answer(o, m, id);
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
    m->stamp = (uint32_t)o->pass;
}

bool hbg__memo_hit_alloc(hbg_orch *o, uint32_t n, hbg_tensor *const *ts, hbg_task_id *id)
{
    uint32_t slot = o->img.ntasks;
    if (slot >= o->window)
        return false;
    hbg__memo *m = &o->memo[slot];
    const hbg_img_task *d = &o->img.tasks[slot];
    if (!fresh(o, m) || m->heap0 != o->heap_used || d->kind != HBG_TASK_ALLOC || d->tensor_cnt != n ||
        d->fanin_off != o->img.nfanin || d->tensor_off != o->img.ntensor || d->scalar_off != o->img.nscalar)
        return false;
    for (uint32_t i = 0; i < n; i++) {
        if (!ts[i] || !same_alloc(ts[i], &o->img.tensors[d->tensor_off + i]))
            return false;
        /* The full path allocates as it goes: a description listed twice
         * names a buffer by its second turn and is refused then. */
        for (uint32_t k = 0; k < i; k++)
            if (ts[k] == ts[i])
                return false;
    }
    for (uint32_t i = 0; i < n; i++)
        take_buffer(ts[i], &o->img.tensors[d->tensor_off + i]);
    o->img.ntensor += n;
    answer(o, m, id);
    return true;
}
