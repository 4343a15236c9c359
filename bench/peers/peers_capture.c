/* The capturing stand-in for the orchestrator (see peers_capture.h).
 *
 * It does what an eager pass does to the order and the addresses of the
 * submits (Graph bodies run inline, buffers are bumped from one heap) and
 * keeps each submit in a peers_stream instead of running it. Ids are
 * stream indices, which the case hands back as explicit deps.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peers_capture.h"

typedef struct cap {
    peers_stream *s;
    hbg_tensor *args;
    uint32_t nargs, rank, nranks;
    uint32_t manual_depth, depth;
    uint8_t mode[64];
    uint64_t heap_used, heap_bytes;
    const hbg_boundary *body;  /* of the Graph body running inline */
    hbg_status err;
} cap;

static cap *as_cap(const hbg_orch *o)
{
    return (cap *)(uintptr_t)o;
}

static hbg_status fail(cap *c, hbg_status st)
{
    if (st && !c->err)
        c->err = st;
    return st;
}

bool peers_grow(void **p, uint32_t *capn, uint32_t need, size_t elem)
{
    if (need <= *capn)
        return true;
    uint32_t n = *capn ? *capn : 1024;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, (size_t)n * elem);
    if (!q)
        return false;
    *p = q;
    *capn = n;
    return true;
}

#define GROW(s, arr, cnt, capf, extra) peers_grow((void **)&(s)->arr, &(s)->capf, (s)->cnt + (extra), sizeof *(s)->arr)

static hbg_status heap_alloc(cap *c, hbg_tensor *t)
{
    uint64_t lo, hi;
    if (!hbg_tensor_byte_range(t, &lo, &hi))
        return HBG_E_INVAL;
    uint64_t at = (c->heap_used + 63) & ~63ull;
    if (hi > c->heap_bytes || at > c->heap_bytes - hi)
        return HBG_E_HEAP_EXHAUSTED;
    c->heap_used = at + hi;
    t->addr = PEERS_HEAP_BASE + at;
    t->nbytes = hi;
    t->creator = c->s->ntasks + 1;
    return HBG_OK;
}

/* Appends a task of `kind` with room for `nargs` arguments and `ndeps`
 * deps; NULL when out of memory. */
static peers_task *new_task(cap *c, uint8_t kind, uint32_t nargs, uint32_t ndeps, const hbg_task_id *deps)
{
    peers_stream *s = c->s;
    if (!GROW(s, tasks, ntasks, cap_tasks, 1) || !GROW(s, args, nargs, cap_args, nargs) ||
        !GROW(s, deps, ndeps, cap_deps, ndeps))
        return NULL;
    for (uint32_t i = 0; i < ndeps; i++)
        if (deps[i] >= s->ntasks)
            return NULL;
    peers_task *t = &s->tasks[s->ntasks];
    memset(t, 0, sizeof *t);
    t->kind = kind;
    t->manual = c->manual_depth > 0;
    t->arg_off = s->nargs;
    t->dep_off = s->ndeps;
    t->sc_off = s->nscalars;
    t->ndeps = ndeps;
    t->kernel_aic = t->kernel_aiv = HBG_KERNEL_NONE;
    t->blocks = 1;
    if (ndeps)
        memcpy(s->deps + s->ndeps, deps, (size_t)ndeps * sizeof *deps);
    s->ndeps += ndeps;
    return t;
}

static void push_arg(peers_stream *s, peers_task *t, const hbg_tensor *v, uint8_t dir)
{
    s->args[s->nargs++] = (peers_arg){.t = *v, .dir = dir};
    t->nargs++;
}

hbg_status peers_cap_submit_task(hbg_orch *o, const hbg_task *t, hbg_task_id *id)
{
    cap *c = as_cap(o);
    peers_stream *s = c->s;
    *id = HBG_TASK_NONE;
    if (t->ntensors > HBG_MAX_TASK_TENSORS || t->nscalars > HBG_MAX_TASK_SCALARS)
        return fail(c, HBG_E_INVAL);
    peers_task *d = new_task(c, PEERS_KERNEL, t->ntensors + 1, t->ndeps, t->deps);
    if (!d || !GROW(s, scalars, nscalars, cap_scalars, t->nscalars))
        return fail(c, HBG_E_NOMEM);
    d->core = t->core;
    d->sync_start = t->sync_start;
    d->kernel_aic = t->kernel_aic;
    d->kernel_aiv = t->kernel_aiv;
    d->blocks = t->blocks ? t->blocks : 1;
    for (uint32_t i = 0; i < t->nscalars; i++) {
        int16_t slot = t->scalar_slots ? t->scalar_slots[i] : -1;
        s->scalars[s->nscalars++] = slot >= 0 && c->body ? c->body->scalars[slot] : t->scalars[i];
    }
    d->nscalars = t->nscalars;
    for (uint32_t i = 0; i < t->ntensors; i++) {
        hbg_arg *a = &t->args[i];
        if (a->dir == HBG_OUT_ALLOC) {
            hbg_status st = heap_alloc(c, a->t);
            if (st)
                return fail(c, st);
        }
        push_arg(s, d, a->t, a->dir);
    }
    if (t->pred)
        push_arg(s, d, t->pred->t, PEERS_PRED);
    *id = s->ntasks++;
    return HBG_OK;
}

hbg_status peers_cap_submit_dummy(hbg_orch *o, uint32_t ndeps, const hbg_task_id *deps, hbg_task_id *id)
{
    cap *c = as_cap(o);
    *id = HBG_TASK_NONE;
    if (!new_task(c, PEERS_DUMMY, 0, ndeps, deps))
        return fail(c, HBG_E_NOMEM);
    *id = c->s->ntasks++;
    return HBG_OK;
}

hbg_status peers_cap_alloc_tensors(hbg_orch *o, uint32_t n, hbg_tensor *const *ts, hbg_task_id *id)
{
    cap *c = as_cap(o);
    *id = HBG_TASK_NONE;
    peers_task *d = n <= HBG_MAX_ALLOC_TENSORS ? new_task(c, PEERS_ALLOC, n, 0, NULL) : NULL;
    if (!d)
        return fail(c, HBG_E_INVAL);
    for (uint32_t i = 0; i < n; i++) {
        hbg_status st = heap_alloc(c, ts[i]);
        if (st)
            return fail(c, st);
        push_arg(c->s, d, ts[i], HBG_OUT_ALLOC);
    }
    *id = c->s->ntasks++;
    return HBG_OK;
}

hbg_status peers_cap_scope_begin(hbg_orch *o, hbg_scope_mode mode)
{
    cap *c = as_cap(o);
    if (c->depth >= sizeof c->mode)
        return fail(c, HBG_E_SCOPE);
    c->mode[c->depth++] = (uint8_t)mode;
    c->manual_depth += mode == HBG_SCOPE_MANUAL;
    return HBG_OK;
}

hbg_status peers_cap_scope_end(hbg_orch *o)
{
    cap *c = as_cap(o);
    if (c->depth == 0)
        return fail(c, HBG_E_SCOPE);
    c->manual_depth -= c->mode[--c->depth] == HBG_SCOPE_MANUAL;
    return HBG_OK;
}

hbg_status peers_cap_orch_error(const hbg_orch *o) { return as_cap(o)->err; }
uint32_t peers_cap_orch_nargs(const hbg_orch *o) { return as_cap(o)->nargs; }
uint32_t peers_cap_orch_rank(const hbg_orch *o) { return as_cap(o)->rank; }
uint32_t peers_cap_orch_nranks(const hbg_orch *o) { return as_cap(o)->nranks; }

hbg_tensor *peers_cap_orch_arg(const hbg_orch *o, uint32_t i)
{
    cap *c = as_cap(o);
    return i < c->nargs ? &c->args[i] : NULL;
}

/* As in an eager pass: the body runs inline, its scalar slots resolved
 * against this call's boundary. */
hbg_status peers_cap_submit_graph(hbg_orch *o, uint64_t key, hbg_graph_body body, void *ctx,
                                  const hbg_boundary *b, uint32_t flags, hbg_task_id *id)
{
    (void)key, (void)flags;
    cap *c = as_cap(o);
    *id = HBG_TASK_NONE;
    if (c->body)
        return fail(c, HBG_E_GRAPH_CAPTURE);
    c->body = b;
    hbg_status st = body(o, ctx, b);
    c->body = NULL;
    c->s->replays++;
    return fail(c, st ? st : c->err);
}

/* bd's tensors copied into t[] and a[] pointing at them; their count. */
static uint32_t unbind(const hbg_bound *bd, hbg_tensor *t, hbg_arg *a)
{
    uint32_t n = hbg_bound_count(bd);
    for (uint32_t k = 0; k < n; k++) {
        (void)hbg_bound_get(bd, k, &t[k], &a[k].dir); /* k < n: cannot fail */
        a[k].t = &t[k];
    }
    return n;
}

/* The same, on a boundary of the bound's tensors and rest's scalars and
 * dependencies. */
hbg_status peers_cap_submit_graph_bound(hbg_orch *o, uint64_t key, hbg_graph_body body, void *ctx,
                                        const hbg_bound *bd, const hbg_boundary *rest, uint32_t flags,
                                        hbg_task_id *id)
{
    hbg_boundary b = rest ? *rest : (hbg_boundary){0};
    hbg_tensor t[HBG_MAX_BOUND_TENSORS];
    hbg_arg a[HBG_MAX_BOUND_TENSORS];
    b.ntensors = unbind(bd, t, a);
    b.args = a;
    return peers_cap_submit_graph(o, key, body, ctx, &b, flags, id);
}

/* A task on the bound's tensors (its own list is empty). */
hbg_status peers_cap_submit_task_bound(hbg_orch *o, const hbg_task *t, const hbg_bound *bd, hbg_task_id *id)
{
    /* refused as the library refuses them: no task or bound, or a task
     * with a list of its own, or more tensors than a task takes */
    *id = HBG_TASK_NONE;
    if (!t || !bd || t->ntensors || t->args || hbg_bound_count(bd) > HBG_MAX_TASK_TENSORS)
        return fail(as_cap(o), HBG_E_INVAL);
    hbg_task bt = *t;
    hbg_tensor v[HBG_MAX_TASK_TENSORS];
    hbg_arg a[HBG_MAX_TASK_TENSORS];
    bt.ntensors = unbind(bd, v, a);
    bt.args = a;
    return peers_cap_submit_task(o, &bt, id);
}

void peers_stream_free(peers_stream *s)
{
    free(s->tasks);
    free(s->args);
    free(s->deps);
    free(s->scalars);
    free(s->peer_of);
    free(s->task_of);
    free(s->acc_off);
    free(s->acc_cnt);
    free(s->acc);
    free(s->pdep_off);
    free(s->pdep_cnt);
    free(s->pdeps);
    memset(s, 0, sizeof *s);
}

hbg_status peers_capture(peers_case *pc, peers_stream *s, char *msg, size_t capn)
{
    memset(s, 0, sizeof *s);
    s->name = pc->name;
    hbg_tensor args[256];
    memcpy(args, pc->args, (size_t)pc->prog.nargs * sizeof args[0]);
    cap c = {.s = s, .args = args, .nargs = pc->prog.nargs, .rank = pc->env.rank, .nranks = pc->env.nranks,
             .heap_bytes = pc->heap_bytes};
    hbg_status (*orch)(hbg_orch *, void *) = NULL;
    if (strcmp(pc->name, "qwen") == 0)
        orch = peers_cap_qwen_orchestrate;
    else if (strcmp(pc->name, "dsv4") == 0)
        orch = peers_cap_dsv4_orchestrate;
    hbg_status st = orch ? orch((hbg_orch *)(void *)&c, pc->prog.ctx) : HBG_E_INVAL;
    if (!st)
        st = c.err;
    if (st) {
        snprintf(msg, capn, "%s: capturing the orchestration failed: %s", pc->name, hbg_strerror(st));
        return st;
    }
    /* The peer tasks: everything but allocations. */
    s->peer_of = malloc(((size_t)s->ntasks + 1) * sizeof *s->peer_of);
    s->task_of = malloc(((size_t)s->ntasks + 1) * sizeof *s->task_of);
    if (!s->peer_of || !s->task_of)
        return HBG_E_NOMEM;
    s->npeer = 0;
    for (uint32_t i = 0; i < s->ntasks; i++) {
        s->peer_of[i] = UINT32_MAX;
        if (s->tasks[i].kind != PEERS_ALLOC) {
            s->peer_of[i] = s->npeer;
            s->task_of[s->npeer++] = i;
        }
    }
    return HBG_OK;
}
