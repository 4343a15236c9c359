/* The orchestrator: tasks, scopes, the GM heap, dependency inference.
 *
 * This file is the bind hot path. Each submit validates its limits first,
 * then appends to the host mirror's arrays (sized for the worst case at
 * creation, so appends never check capacity), then infers its fanins. The
 * tensor map is updated last, so a submit that fails leaves the map as if
 * the task had never been offered.
 */
#include <stdlib.h>
#include <string.h>

#include "orch/opsample.h"
#include "orch/orch_internal.h"
#include "orch/taskmemo.h"

hbg_status hbg__orch_create(const hbg__orch_config *cfg, hbg_orch **out)
{
    *out = NULL;
    /* The journal's calls: checked before anything is allocated. */
    uint32_t window = cfg->task_window ? cfg->task_window : HBG_DEFAULT_TASK_WINDOW;
    if (window > HBG_MAX_TASK_WINDOW)
        return HBG_E_INVAL;
    uint64_t jcalls = cfg->journal_calls ? cfg->journal_calls : (uint64_t)window * HBG_DEFAULT_JOURNAL_CALLS_PER_TASK;
    if (!cfg->no_journal && jcalls > HBG_MAX_JOURNAL_CALLS)
        return HBG_E_INVAL;
    hbg_orch *o = calloc(1, sizeof *o);
    if (!o) {
        if (cfg->nomem_part)
            *cfg->nomem_part = "the orchestrator";
        return HBG_E_NOMEM;
    }
    o->cfg = *cfg;
    o->cfg.nomem_part = NULL; /* the caller's variable, of the create only */
    hbg__opclock_init(&o->clock);
    o->op_rng = HBG_OPSAMPLE_SEED;
    o->window = window;
    if (o->cfg.nranks == 0)
        o->cfg.nranks = 1;
    const char *part = "the task image";
    bool ok = hbg__image_create(&o->img, o->window) == HBG_OK;
    ok = ok && (part = "the message buffers", o->msg = calloc(3, HBG_ORCH_MSG_MAX)) != NULL;
    if (ok)
        o->utext[0] = o->msg + HBG_ORCH_MSG_MAX, o->utext[1] = o->msg + 2 * HBG_ORCH_MSG_MAX;
    ok = ok && (part = "the task stamps", o->task_stamp = hbg__reserve(o->window * sizeof *o->task_stamp)) != NULL;
    /* A task touches at most 32 tensors plus a predicate word. */
    ok = ok && (part = "the tensor map",
                hbg__tmap_init(&o->map, o->window * 4u, o->window * (HBG_MAX_TASK_TENSORS + 1u))) == HBG_OK;
    /* The journal holds a pass's queries and writes: a few per task on the
     * cases (a dsv4 rank: some 4,200 for 1,131 tasks), but a replay makes
     * one per boundary slot it reads or writes, so room by default for 16
     * a task, and 4 reports a call (reserved: past the prefix committed at
     * creation, only what a pass uses is touched). A pass that makes more
     * follows the journal's prefix and walks the rest. */
    ok =
        ok && (cfg->no_journal || (part = "the tensor map's journal",
                                   hbg__tmap_journal_init(&o->map, (uint32_t)jcalls, (uint32_t)jcalls * 4u)) == HBG_OK);
    /* An eager orchestrator runs each task as it is submitted: a memo's
     * answer would skip the run. */
    ok = ok && (cfg->no_journal || cfg->eager || (part = "the task memo", hbg__memo_init(o)) == HBG_OK);
    if (!ok) {
        if (cfg->nomem_part)
            *cfg->nomem_part = part;
        hbg__orch_destroy(o);
        return HBG_E_NOMEM;
    }
    *out = o;
    return HBG_OK;
}

void hbg__orch_destroy(hbg_orch *o)
{
    if (!o)
        return;
    if (o->ext && o->ext->destroy)
        o->ext->destroy(o);
    hbg__image_destroy(&o->img);
    hbg__unreserve(o->task_stamp, o->window * sizeof *o->task_stamp);
    hbg__tmap_free(&o->map);
    hbg__memo_free(o);
    free(o->msg);
    free(o);
}

void hbg__orch_set_timing(hbg_orch *o, bool on, hbg_recpool *records)
{
    o->timing = on || records != NULL;
    o->recpool = records;
    if (o->timing)
        hbg__opclock_calibrate(&o->clock);
}

void hbg__orch_set_kept(hbg_orch *o, const uint64_t *addr, const uint32_t *arg, uint32_t n)
{
    n = n < HBG_ORCH_MAX_KEPT ? n : HBG_ORCH_MAX_KEPT;
    bool same = n == o->nkept;
    for (uint32_t i = 0; i < n && same; i++)
        same = o->kept_addr[i] == addr[i] && o->kept_arg[i] == arg[i];
    if (same)
        return;
    /* a memo's answer skips the check: a task it answers was checked
     * against the last pass's set */
    hbg__memo_forget(o);
    o->kept_bloom = 0;
    for (uint32_t i = 0; i < n; i++) {
        o->kept_addr[i] = addr[i];
        o->kept_arg[i] = arg[i];
        o->kept_bloom |= 1ull << hbg__kept_bit(addr[i]);
    }
    o->nkept = n;
}

void hbg__orch_begin_pass(hbg_orch *o, uint64_t heap_base, hbg_tensor *args, uint32_t nargs)
{
    o->pass++;
    o->in_pass = true;
    o->err = HBG_OK;
    o->err_held = false;
    memset(&o->fault, 0, sizeof o->fault);
    hbg__why_clear(o);
    hbg__memo_begin_pass(o, heap_base);
    o->cfg.heap_base = heap_base;
    o->heap_used = 0;
    o->args = args;
    o->nargs = nargs;
    hbg__image_reset(&o->img);
    o->scope_depth = o->manual_depth = o->scope_floor = 0;
    o->body = NULL;
    o->capturing = false;
    /* Each kind's period from the mean of its recent timed operations
     * (opsample.h); every operation when records are armed. */
    for (int k = 0; k < HBG_OP_COUNT; k++) {
        const hbg__opmean *m = &o->opmean[k];
        uint32_t period = o->recpool ? 1 : hbg__opsample_period(m->n, m->ns, o->clock.pair_ns);
        o->ops[k] = (hbg__opstat){.period = period};
        o->ops[k].skip = hbg__opsample_first(&o->op_rng, period, &o->ops[k].at);
    }
    if (o->timing)
        hbg__opclock_open(&o->clock);
    hbg__tmap_reset(&o->map);
    if (o->ext && o->ext->begin_pass)
        o->ext->begin_pass(o);
}

/* Only records need the anchors inside the orchestration's segment: a
 * record must nest in it, and mapping between anchors that lie inside
 * cannot put one outside. The totals need only the rate between the
 * anchors, which begin_pass's opening anchor and a closing one taken after
 * the segment's end give as well, at no cost to the segment. */
uint64_t hbg__orch_clock_read(const hbg_orch *o, uint64_t *tick)
{
    if (o->recpool)
        return hbg__opclock_anchor(&o->clock, tick);
    return *tick = hbg_mono_ns();
}

void hbg__orch_open_clock_at(hbg_orch *o, uint64_t tick, uint64_t mono)
{
    if (o->recpool)
        hbg__opclock_open_at(&o->clock, tick, mono);
}

/* The pass's operation times, from the clock's readings to nanoseconds:
 * the totals here, the records when their line is written. The closing
 * anchor is in the clock already. */
static void close_clock(hbg_orch *o)
{
    for (int k = 0; k < HBG_OP_COUNT; k++) {
        hbg__opstat *s = &o->ops[k];
        uint64_t sum = hbg__opclock_dur(&o->clock, s->total_ns);
        /* the estimate takes the mean as it was before this pass: with
         * none timed the two are the same, and with some the mean is not
         * read */
        s->total_ns = hbg__opsample_total(sum, s->timed, s->count, &o->opmean[k]);
        if (s->timed)
            hbg__opmean_add(&o->opmean[k], sum, s->timed);
    }
    if (o->recpool && o->clock.tsc)
        hbg__recpool_set_map(o->recpool, &o->clock.map);
}

/* at: the caller's closing anchor (tick, mono), used when records are
 * armed; otherwise the clock reads its own after the segment. */
static hbg_status end_pass(hbg_orch *o, bool at, uint64_t tick, uint64_t mono)
{
    if (o->in_pass && o->err == HBG_OK && (o->scope_depth != 0 || o->capturing)) {
        hbg__why(o, HBG_WHY_SCOPE_OPEN, -1, o->scope_depth, o->capturing, 0);
        hbg__orch_fail(o, HBG_E_SCOPE);
    }
    if (o->in_pass && o->timing) {
        if (at && o->recpool)
            hbg__opclock_close_at(&o->clock, tick, mono);
        else
            hbg__opclock_close(&o->clock);
        close_clock(o);
    }
    /* A failed pass may have stopped anywhere: its notes are not trusted. */
    if (o->in_pass && o->err)
        hbg__memo_forget(o);
    o->in_pass = false;
    return o->err;
}

hbg_status hbg__orch_end_pass(hbg_orch *o)
{
    return end_pass(o, false, 0, 0);
}

hbg_status hbg__orch_end_pass_at(hbg_orch *o, uint64_t tick, uint64_t mono)
{
    return end_pass(o, true, tick, mono);
}

hbg_status hbg__orch_fail(hbg_orch *o, hbg_status st)
{
    if (!st)
        return st;
    if (o->err == HBG_OK) {
        /* A call refused inside a body before the recorder saw it (no
         * task, no bound, a list where a bound is given) is at the node
         * it would have made, not at the window's next task. */
        if (!o->why.located && o->capturing && o->ext && o->ext->locate_capture)
            o->ext->locate_capture(o);
        o->err = st;
        o->fault = o->why;
        o->fault.st = st;
        if (!o->fault.located)
            o->fault.where = HBG_AT_TASK, o->fault.task = o->img.ntasks;
        if (o->fault.why == HBG_WHY_NONE)
            o->fault.arg = -1; /* an index noted for a step that then succeeded */
    }
    hbg__why_clear(o);
    return st;
}

/* A timed operation's first reading, and the gap to the next one. */
uint64_t hbg__op_sample(hbg_orch *o, hbg__opstat *s)
{
    s->skip = hbg__opsample_gap(&o->op_rng, s->period, &s->at);
    return hbg__opclock_now(&o->clock);
}

void hbg__op_record(hbg_orch *o, hbg_phase op, uint64_t t0, uint64_t t1, uint64_t detail)
{
    if (o->clock.tsc)
        hbg__rec_ticks(o->recpool, op, t0, t1, detail);
    else
        hbg_rec(o->recpool, op, t0, t1, detail);
}

hbg_status hbg__orch_heap_alloc(hbg_orch *o, uint64_t bytes, uint64_t *addr)
{
    uint64_t at = (o->heap_used + HBG_HEAP_ALIGN - 1) & ~(uint64_t)(HBG_HEAP_ALIGN - 1);
    if (bytes > o->cfg.heap_bytes || at > o->cfg.heap_bytes - bytes) {
        uint64_t cap = o->cfg.heap_bytes;
        hbg__why(o, HBG_WHY_HEAP, o->why.arg, (int64_t)bytes, (int64_t)(at < cap ? cap - at : 0), (int64_t)cap);
        return HBG_E_HEAP_EXHAUSTED;
    }
    o->heap_used = at + bytes;
    *addr = o->cfg.heap_base + at;
    return HBG_OK;
}

hbg_status hbg__orch_new_task(hbg_orch *o, uint8_t kind, uint32_t *id)
{
    if (o->img.ntasks >= o->window) {
        hbg__why(o, HBG_WHY_WINDOW, -1, o->window, 0, 0);
        return HBG_E_WINDOW_FULL;
    }
    /* An eager body's tasks are the nodes a Definition of it would hold:
     * the reference refuses one more than the recorder takes. */
    if (o->cfg.eager && o->body && o->img.ntasks - o->body_task0 >= HBG_MAX_DEF_NODES) {
        hbg__why(o, HBG_WHY_POOL, -1, HBG_POOL_DEF_NODES, HBG_MAX_DEF_NODES, 0);
        return HBG_E_POOL_EXHAUSTED;
    }
    uint32_t i = o->img.ntasks++;
    hbg_img_task *t = &o->img.tasks[i];
    memset(t, 0, sizeof *t);
    t->kind = kind;
    t->kernel_aic = t->kernel_aiv = HBG_KERNEL_NONE;
    t->blocks = 1;
    t->fanin_off = o->img.nfanin;
    t->tensor_off = o->img.ntensor;
    t->scalar_off = o->img.nscalar;
    /* A fresh stamp per task makes the de-dup array valid without clearing. */
    o->stamp++;
    *id = i;
    return HBG_OK;
}

hbg_status hbg__orch_add_fanin(hbg_orch *o, uint32_t task, uint32_t pred)
{
    return hbg__fanin_add(o->task_stamp, o->stamp, o->img.fanins, &o->img.nfanin, &o->img.tasks[task].fanin_cnt,
                          pred);
}

typedef struct fanin_ctx {
    hbg_orch *o;
    uint32_t task;
} fanin_ctx;

static hbg_status visit_writer(void *ctx, uint32_t writer)
{
    fanin_ctx *c = ctx;
    return writer == c->task ? HBG_OK : hbg__orch_add_fanin(c->o, c->task, writer);
}

hbg_status hbg__orch_task_reads(hbg_orch *o, uint32_t task, const hbg_tensor *t, uint64_t lo, uint64_t hi,
                               uint8_t dense)
{
    fanin_ctx c = {o, task};
    return hbg__tmap_readers_deps(&o->map, t, lo, hi, dense, visit_writer, &c);
}

hbg_status hbg__orch_task_writes(hbg_orch *o, uint32_t task, const hbg_tensor *t, uint64_t lo, uint64_t hi,
                                uint8_t dense, uint8_t dir)
{
    /* An in-place write that covers an earlier write makes it unreachable:
     * later readers need only the newer writer, which already follows it. */
    return hbg__tmap_write(&o->map, t, lo, hi, dense, task, dir == HBG_INOUT || dir == HBG_OUT);
}

void hbg__why_bad_view(hbg_orch *o, int32_t arg, const hbg_tensor *t)
{
    /* A valid dtype and rank, no empty dimension and no negative stride:
     * what hbg__byte_range refused is then the range's end. */
    bool past64 = t->ndim <= HBG_MAX_DIMS && hbg__dtype_size(t->dtype);
    for (unsigned i = 0; past64 && i < t->ndim; i++)
        past64 = t->shape[i] && t->strides[i] >= 0;
    hbg__why(o, HBG_WHY_BAD_VIEW, arg, t->dtype, t->ndim, past64);
}

void hbg__why_map_full(hbg_orch *o, const hbg__tmap *m, uint32_t n)
{
    uint64_t size;
    bool entries = hbg__tmap_full_entries(m, n, &size);
    hbg__why(o, HBG_WHY_POOL, -1, entries ? HBG_POOL_MAP_ENTRIES : HBG_POOL_MAP_BUFFERS, (int64_t)size, 0);
}

/* In an eager run a Graph body runs inline, never recorded: the rule the
 * recorder keeps (a node writes a boundary buffer only through a slot
 * passed for writing whose range holds the write) is kept here, so the
 * reference refuses what the device path refuses. The first HBG_IN slot
 * on t's buffer when no writing slot holds the write; -1 when one does,
 * or t is on no slot's buffer. */
static int32_t inline_in_slot(const hbg_boundary *b, const hbg_tensor *t, const hbg__range *r)
{
    int32_t in = -1;
    for (uint32_t k = 0; k < b->ntensors; k++) {
        const hbg_tensor *s = b->args[k].t;
        if (!s || s->addr != t->addr)
            continue;
        if (b->args[k].dir == HBG_IN) {
            in = in < 0 ? (int32_t)k : in;
            continue;
        }
        uint64_t lo, hi;
        if (s == t || (hbg__byte_range(s, &lo, &hi) && r->lo >= lo && r->hi <= hi))
            return -1;
    }
    return in;
}

/* The recorder's other rule (graph/recorder.c, classify), kept for an
 * eager body likewise: a tensor the body passes is a buffer the body
 * itself allocated, or a view that a boundary slot on its buffer holds
 * (the slot's own tensor, or one of its dtype inside its range). */
static bool inline_expressible(const hbg_orch *o, const hbg_tensor *t, const hbg__range *r)
{
    if (t->addr >= o->cfg.heap_base + o->body_heap0 && t->addr < o->cfg.heap_base + o->heap_used)
        return true;
    const hbg_boundary *b = o->body;
    for (uint32_t k = 0; k < b->ntensors; k++) {
        const hbg_tensor *s = b->args[k].t;
        uint64_t lo, hi;
        if (!s || s->addr != t->addr)
            continue;
        if (s == t || (s->dtype == t->dtype && hbg__byte_range(s, &lo, &hi) && r->lo >= lo && r->hi <= hi))
            return true;
    }
    return false;
}

/* One tensor argument: present, a known direction, a buffer exactly when
 * it is not to be allocated, and (unless allocated) a view inside it. The
 * range is computed once here and reused by inference. */
static hbg_status check_arg(hbg_orch *o, const hbg_arg *a, int32_t i, hbg__range *r)
{
    if (!a->t) {
        hbg__why(o, HBG_WHY_NULL_TENSOR, i, 0, 0, 0);
        return HBG_E_INVAL;
    }
    if (a->dir > HBG_NO_DEP) {
        hbg__why(o, HBG_WHY_DIR, i, a->dir, 0, 0);
        return HBG_E_INVAL;
    }
    /* Only an allocating argument may (and must) arrive without a buffer:
     * a caller's buffer passed for allocation would be silently replaced,
     * a description passed for writing would be written at address 0. */
    if ((a->dir == HBG_OUT_ALLOC) != (a->t->addr == 0)) {
        hbg__why(o, a->t->addr ? HBG_WHY_HAS_BUFFER : HBG_WHY_NO_BUFFER, i, (int64_t)a->t->addr, a->t->dtype, 0);
        return a->t->addr ? HBG_E_ARG_HAS_BUFFER : HBG_E_ARG_NO_BUFFER;
    }
    if (a->dir == HBG_OUT_ALLOC)
        return HBG_OK;
    if (hbg__orch_writes_kept(o, a->dir, a->t->addr, i))
        return HBG_E_INVAL;
    int32_t k;
    hbg_status st = hbg__orch_check_view(o, a->t, i, r);
    if (!st && o->cfg.eager && o->body && !inline_expressible(o, a->t, r)) {
        hbg__why(o, HBG_WHY_CAPTURE, i, 0, 0, 0);
        return HBG_E_GRAPH_CAPTURE;
    }
    if (!st && o->cfg.eager && o->body && (a->dir == HBG_OUT || a->dir == HBG_INOUT) &&
        (k = inline_in_slot(o->body, a->t, r)) >= 0) {
        hbg__why(o, HBG_WHY_IN_SLOT_WRITE, i, k, 0, 0);
        return HBG_E_GRAPH_CAPTURE;
    }
    return st;
}

/* A body's own buffer exists in its replays alone: on the device the
 * address names nothing. (Inside a capture the recorder tells its own
 * buffers from others'.) */
static hbg_status outside_its_body(hbg_orch *o, const hbg_tensor *t, int32_t i)
{
    if (o->capturing || t->addr < HBG_REC_BASE)
        return HBG_OK;
    hbg__why(o, HBG_WHY_REC_BUFFER, i, (int64_t)t->addr, 0, 0);
    return HBG_E_GRAPH_CAPTURE;
}

hbg_status hbg__orch_check_view(hbg_orch *o, const hbg_tensor *t, int32_t i, hbg__range *r)
{
    hbg_status st = outside_its_body(o, t, i);
    if (st)
        return st;
    if (!hbg__byte_range(t, &r->lo, &r->hi)) {
        hbg__why_bad_view(o, i, t);
        return HBG_E_INVAL;
    }
    if (r->hi > t->nbytes) {
        hbg__why(o, HBG_WHY_VIEW_OUTSIDE, i, (int64_t)r->lo, (int64_t)r->hi, (int64_t)t->nbytes);
        return HBG_E_INVAL;
    }
    return HBG_OK;
}

static bool core_ok(const hbg_task *t)
{
    switch (t->core) {
    case HBG_CORE_AIC: return t->kernel_aic != HBG_KERNEL_NONE;
    case HBG_CORE_AIV: return t->kernel_aiv != HBG_KERNEL_NONE;
    case HBG_CORE_MIX: return t->kernel_aic != HBG_KERNEL_NONE && t->kernel_aiv != HBG_KERNEL_NONE;
    default: return false;
    }
}

/* Checks everything a submit can check before touching the mirror; notes
 * the facts of what it refuses. */
hbg_status hbg__orch_validate_task(hbg_orch *o, const hbg_task *t, bool dummy, hbg__range *rng)
{
    if (!dummy) {
        if (t->ntensors > HBG_MAX_TASK_TENSORS) {
            hbg__why(o, HBG_WHY_TOO_MANY, -1, t->ntensors, HBG_MAX_TASK_TENSORS, HBG_COUNT_TENSORS);
            return HBG_E_TOO_MANY_TENSORS;
        }
        if (t->nscalars > HBG_MAX_TASK_SCALARS) {
            hbg__why(o, HBG_WHY_TOO_MANY, -1, t->nscalars, HBG_MAX_TASK_SCALARS, HBG_COUNT_SCALARS);
            return HBG_E_TOO_MANY_SCALARS;
        }
        if (t->blocks > HBG_MAX_BLOCKS) {
            hbg__why(o, HBG_WHY_TOO_MANY, -1, t->blocks, HBG_MAX_BLOCKS, HBG_COUNT_BLOCKS);
            return HBG_E_INVAL;
        }
        if (!core_ok(t)) {
            hbg__why(o, HBG_WHY_CORE, -1, t->core, t->kernel_aic, t->kernel_aiv);
            return HBG_E_INVAL;
        }
        if (!hbg__array_ok(o, HBG_COUNT_TENSORS, t->ntensors, t->args) ||
            !hbg__array_ok(o, HBG_COUNT_SCALARS, t->nscalars, t->scalars))
            return HBG_E_INVAL;
        for (uint32_t i = 0; i < t->ntensors; i++) {
            hbg_status st = check_arg(o, &t->args[i], (int32_t)i, &rng[i]);
            if (st)
                return st;
        }
        if (t->scalar_slots) {
            /* In a body, a slot past its boundary's scalars is a scalar the
             * body cannot express (graph.h); outside any body a slot names
             * nothing at all. */
            uint32_t nbs = o->body ? o->body->nscalars : 0;
            for (uint32_t i = 0; i < t->nscalars; i++)
                if (t->scalar_slots[i] < -1) { /* no slot and no static mark: a value gone wrong */
                    hbg__why(o, HBG_WHY_SCALAR_SLOT, -1, i, t->scalar_slots[i], -2);
                    return HBG_E_INVAL;
                } else if (t->scalar_slots[i] >= 0 && (uint32_t)t->scalar_slots[i] >= nbs) {
                    hbg__why(o, HBG_WHY_SCALAR_SLOT, -1, i, t->scalar_slots[i], o->body ? (int64_t)nbs : -1);
                    return o->body ? HBG_E_GRAPH_CAPTURE : HBG_E_INVAL;
                }
        }
        if (t->pred) {
            const hbg_pred *p = t->pred;
            unsigned es = p->elem_size;
            hbg__range *pr = &rng[HBG_MAX_TASK_TENSORS];
            if (!p->t) {
                hbg__why(o, HBG_WHY_PRED, -1, HBG_PRED_NO_TENSOR, 0, 0);
                return HBG_E_INVAL;
            }
            if (es != 1 && es != 2 && es != 4 && es != 8) {
                hbg__why(o, HBG_WHY_PRED, -1, HBG_PRED_ELEM_SIZE, es, 0);
                return HBG_E_INVAL;
            }
            if (p->op > HBG_CMP_GE) {
                hbg__why(o, HBG_WHY_PRED, -1, HBG_PRED_OP, p->op, 0);
                return HBG_E_INVAL;
            }
            if (p->byte_offset > p->t->nbytes || es > p->t->nbytes - p->byte_offset) {
                hbg__why(o, HBG_WHY_PRED, -1, HBG_PRED_OUTSIDE, (int64_t)p->byte_offset, (int64_t)p->t->nbytes);
                return HBG_E_INVAL;
            }
            if (!hbg__byte_range(p->t, &pr->lo, &pr->hi)) {
                hbg__why_bad_view(o, -1, p->t);
                return HBG_E_INVAL;
            }
            hbg_status st = outside_its_body(o, p->t, -1);
            if (st)
                return st;
            /* read as an input: it must name a buffer (eager mode reads
             * the word on the host, at that address), or be a tensor this
             * task allocates (read after the allocation) */
            bool own = false;
            for (uint32_t i = 0; i < t->ntensors && !own; i++)
                own = t->args[i].t == p->t && t->args[i].dir == HBG_OUT_ALLOC;
            if (!p->t->addr && !own) {
                hbg__why(o, HBG_WHY_PRED_NO_BUFFER, -1, 0, 0, 0);
                return HBG_E_ARG_NO_BUFFER;
            }
            if (o->cfg.eager && o->body && !own && !inline_expressible(o, p->t, pr)) {
                hbg__why(o, HBG_WHY_CAPTURE, -1, 1, 0, 0); /* 1: the predicate's */
                return HBG_E_GRAPH_CAPTURE;
            }
        }
    }
    return hbg__deps_ok(o, t->ndeps, t->deps);
}

/* A bound task as the full path reads it: t with the bound's arguments. */
static const hbg_task *with_bound(const hbg_task *t, const hbg_bound *bd, hbg_task *bt)
{
    if (!bd)
        return t;
    *bt = *t;
    bt->ntensors = bd->n;
    bt->args = bd->args;
    return bt;
}

/* A call that fell back runs its body inline with no outer task to take
 * the call's deps: each of its tasks that follows none of the body's
 * earlier tasks takes them itself, so that the whole body still runs
 * after them (in a MANUAL scope they are its only edges). A task after an
 * earlier kernel or dummy of the body follows them through it; an alloc
 * task takes no edges. (An eager run keeps program order: no edge orders
 * anything there.) */
static hbg_status inline_call_deps(hbg_orch *o, uint32_t tid)
{
    const hbg_boundary *b = o->body;
    const hbg_img_task *d = &o->img.tasks[tid];
    for (uint32_t i = 0; i < d->fanin_cnt; i++) {
        uint32_t f = o->img.fanins[d->fanin_off + i];
        if (f >= o->body_task0 && o->img.tasks[f].kind != HBG_TASK_ALLOC)
            return HBG_OK;
    }
    hbg_status st = HBG_OK;
    for (uint32_t i = 0; i < b->ndeps && !st; i++)
        st = hbg__orch_add_fanin(o, tid, b->deps[i]);
    return st;
}

/* The common body of submit_task and submit_dummy outside recording. */
/* bd: the bound holding t's arguments (t's own list empty), or NULL. */
static hbg_status submit(hbg_orch *o, const hbg_task *t, bool dummy, const hbg_bound *bd, hbg_task_id *id)
{
    uint64_t stamp = bd ? bd->stamp : 0;
    if (!dummy && o->memo && hbg__memo_hit(o, t, bd ? bd->n : t->ntensors, stamp, id))
        return HBG_OK;
    /* Only now the copy with the bound's arguments in: the caller has
     * just written *t field by field, and the copy's 16-byte reads of it
     * wait until those stores reach the cache (a third of a dsv4 bound
     * task's hit, when the copy came first). */
    hbg_task bt;
    t = with_bound(t, bd, &bt);
    hbg__memo_at at = hbg__memo_here(o);
    hbg__range rng[HBG_MAX_TASK_TENSORS + 1];
    hbg_status st = hbg__orch_validate_task(o, t, dummy, rng);
    if (st)
        return st;
    for (uint32_t i = 0; i < t->ndeps; i++)
        if (t->deps[i] >= o->img.ntasks) {
            hbg__why(o, HBG_WHY_DEP, -1, i, t->deps[i], o->img.ntasks);
            return HBG_E_BAD_DEP;
        } else if (o->cfg.eager && o->body && t->deps[i] < o->body_task0) {
            /* The recorder's rule: a body's deps name its own earlier
             * nodes, its caller's work reaching it through the call. */
            hbg__why(o, HBG_WHY_BODY_DEP, -1, i, t->deps[i], o->body_task0);
            return HBG_E_BAD_DEP;
        }

    /* Remember the live lengths so a failure can take the task back. */
    hbg__image_mark m0 = hbg__image_mark_now(&o->img);
    uint64_t h0 = o->heap_used;
    uint32_t tid;
    st = hbg__orch_new_task(o, dummy ? HBG_TASK_DUMMY : HBG_TASK_KERNEL, &tid);
    if (st)
        return st;
    hbg_img_task *d = &o->img.tasks[tid];
    for (uint32_t i = 0; i < t->ndeps && !st; i++)
        st = hbg__orch_add_fanin(o, tid, t->deps[i]);

    if (!dummy && !st) {
        d->core = t->core;
        d->sync_start = t->sync_start;
        d->kernel_aic = t->kernel_aic;
        d->kernel_aiv = t->kernel_aiv;
        d->blocks = t->blocks ? t->blocks : 1;
        d->tensor_cnt = t->ntensors;
        d->scalar_cnt = t->nscalars;
        for (uint32_t i = 0; i < t->nscalars; i++) {
            int16_t slot = t->scalar_slots ? t->scalar_slots[i] : -1;
            o->img.scalars[o->img.nscalar++] = slot >= 0 ? o->body->scalars[slot] : t->scalars[i];
        }
        bool infer = o->manual_depth == 0;
        /* The written arguments, noted on the way: all of the task's
         * writes fit, or none is made. */
        uint64_t waddr[HBG_MAX_TASK_TENSORS];
        uint8_t widx[HBG_MAX_TASK_TENSORS];
        uint32_t nw = 0;
        for (uint32_t i = 0; i < t->ntensors && !st; i++) {
            hbg_arg *a = &t->args[i];
            if (a->dir == HBG_OUT_ALLOC) {
                uint64_t addr;
                if (!hbg__byte_range(a->t, &rng[i].lo, &rng[i].hi)) {
                    hbg__why_bad_view(o, (int32_t)i, a->t);
                    st = HBG_E_INVAL;
                    break;
                }
                o->why.arg = (int32_t)i;
                st = hbg__orch_heap_alloc(o, rng[i].hi, &addr);
                if (st)
                    break;
                a->t->addr = addr;
                a->t->nbytes = rng[i].hi;
                a->t->creator = tid + 1;
            } else if (infer && a->dir != HBG_NO_DEP) {
                st = hbg__orch_task_reads(o, tid, a->t, rng[i].lo, rng[i].hi, HBG_TMAP_DENSE_UNKNOWN);
            }
            if (hbg__dir_writes(a->dir))
                widx[nw] = (uint8_t)i, waddr[nw++] = a->t->addr;
            o->img.tensors[o->img.ntensor++] = *a->t;
        }
        if (t->pred && !st) {
            if (infer)
                st = hbg__orch_task_reads(o, tid, t->pred->t, rng[HBG_MAX_TASK_TENSORS].lo,
                                         rng[HBG_MAX_TASK_TENSORS].hi, HBG_TMAP_DENSE_UNKNOWN);
            d->has_pred = 1;
            d->pred = o->img.npred;
            o->img.preds[o->img.npred++] = (hbg_img_pred){.addr = t->pred->t->addr + t->pred->byte_offset,
                                                  .value = t->pred->value,
                                                  .op = t->pred->op,
                                                  .elem_size = t->pred->elem_size};
        }
        if (!st && !hbg__tmap_fits(&o->map, waddr, nw)) {
            hbg__why_map_full(o, &o->map, nw);
            st = HBG_E_POOL_EXHAUSTED;
        }
        for (uint32_t k = 0; k < nw && !st; k++) {
            uint32_t i = widx[k];
            st = hbg__orch_task_writes(o, tid, &o->img.tensors[d->tensor_off + i], rng[i].lo, rng[i].hi,
                                       HBG_TMAP_DENSE_UNKNOWN, t->args[i].dir);
        }
    }
    if (!st && o->body && o->body->ndeps && !o->cfg.eager)
        st = inline_call_deps(o, tid);
    if (st) {
        hbg__image_rollback(&o->img, m0);
        o->heap_used = h0;
        hbg__orch_release_allocs(t->args, dummy ? 0 : t->ntensors);
        return st;
    }
    /* After the first failure an eager run only records: later kernels
     * would read what the failed one never wrote (and a cross-rank wait
     * would sit out its whole timeout again). A body run inline starts
     * with a clean slate, but not a clean pass (err_held). */
    if (o->cfg.eager && !dummy && o->err == HBG_OK && !o->err_held) {
        st = o->cfg.run_task(o->cfg.run_ctx, tid, &o->img.tasks[tid], o->img.tensors, o->img.scalars,
                             o->img.preds);
        if (st) {
            hbg__why_at(o, HBG_AT_TASK, tid, 0); /* it is in the window: it ran */
            return st;
        }
    }
    if (!dummy && o->memo)
        hbg__memo_note(o, t, stamp, tid, at);
    *id = tid;
    return HBG_OK;
}

/* A kernel task or a dummy: recorded inside a Graph body, else submitted
 * and timed. */
static hbg_status task(hbg_orch *o, const hbg_task *t, bool dummy, const hbg_bound *bd, hbg_task_id *id)
{
    if (o->capturing) {
        hbg_task bt;
        return hbg__orch_fail(o, o->ext->capture_task(o, with_bound(t, bd, &bt), dummy, id));
    }
    uint64_t t0 = hbg__op_begin(o, HBG_OP_SUBMIT_TASK);
    hbg_status st = submit(o, t, dummy, bd, id);
    if (o->timing)
        hbg__op_end(o, HBG_OP_SUBMIT_TASK, t0, *id == HBG_TASK_NONE ? 0 : *id);
    return hbg__orch_fail(o, st);
}

hbg_status hbg_submit_task(hbg_orch *o, const hbg_task *t, hbg_task_id *id)
{
    hbg_task_id spare;
    hbg_status st = hbg__submit_begins(o, &id, &spare);
    if (st)
        return st;
    /* Refused in a pass, and so the pass's error too: a program that
     * checks hbg_orch_error once at the end must see it. */
    if (!t) {
        hbg__why(o, HBG_WHY_NULL_INPUT, -1, 0, 0, 0);
        return hbg__orch_fail(o, HBG_E_INVAL);
    }
    return task(o, t, false, NULL, id);
}

hbg_status hbg_submit_task_bound(hbg_orch *o, const hbg_task *t, const hbg_bound *bd, hbg_task_id *id)
{
    hbg_task_id spare;
    hbg_status st = hbg__submit_begins(o, &id, &spare);
    if (st)
        return st;
    if (!t || !bd) {
        hbg__why(o, HBG_WHY_NULL_INPUT, -1, t ? 3 : 0, 0, 0);
        return hbg__orch_fail(o, HBG_E_INVAL);
    }
    if (t->ntensors || t->args) {
        hbg__why(o, HBG_WHY_BOUND_REST, -1, t->ntensors, 1, 0);
        return hbg__orch_fail(o, HBG_E_INVAL);
    }
    return task(o, t, false, bd, id);
}

hbg_status hbg_submit_dummy(hbg_orch *o, uint32_t ndeps, const hbg_task_id *deps, hbg_task_id *id)
{
    hbg_task_id spare;
    hbg_status st = hbg__submit_begins(o, &id, &spare);
    if (st)
        return st;
    hbg_task t = {.ndeps = ndeps, .deps = deps};
    return task(o, &t, true, NULL, id);
}

hbg_status hbg__orch_check_alloc(hbg_orch *o, const hbg_tensor *t, int32_t i, uint64_t *lo, uint64_t *hi)
{
    if (!t) {
        hbg__why(o, HBG_WHY_NULL_TENSOR, i, 0, 0, 0);
        return HBG_E_INVAL;
    }
    if (!hbg__byte_range(t, lo, hi)) {
        hbg__why_bad_view(o, i, t);
        return HBG_E_INVAL;
    }
    if (t->addr) {
        hbg__why(o, HBG_WHY_HAS_BUFFER, i, (int64_t)t->addr, 0, 0);
        return HBG_E_ARG_HAS_BUFFER;
    }
    return HBG_OK;
}

/* The body of alloc_tensors outside recording: the memo's answer, or the
 * allocation the full way. */
static hbg_status alloc(hbg_orch *o, uint32_t n, hbg_tensor *const *ts, hbg_task_id *id)
{
    if (o->memo && hbg__memo_hit_alloc(o, n, ts, id))
        return HBG_OK;
    hbg__image_mark m0 = hbg__image_mark_now(&o->img);
    uint64_t h0 = o->heap_used;
    uint32_t tid, n_alloc = 0;
    hbg_status st = hbg__orch_new_task(o, HBG_TASK_ALLOC, &tid);
    for (uint32_t i = 0; i < n && !st; i++) {
        uint64_t addr, lo, hi;
        if ((st = hbg__orch_check_alloc(o, ts[i], (int32_t)i, &lo, &hi)))
            break;
        o->why.arg = (int32_t)i;
        st = hbg__orch_heap_alloc(o, hi, &addr);
        if (st)
            break;
        ts[i]->addr = addr;
        ts[i]->nbytes = hi;
        ts[i]->creator = tid + 1;
        n_alloc++;
        o->img.tensors[o->img.ntensor++] = *ts[i];
    }
    /* The buffers are not registered with their creator: an alloc task is
     * complete before anything can read them, so an edge to it would order
     * nothing, and skipping the registration keeps 800-odd tensor-map
     * inserts off a dsv4 pass. Readers reach them through their writers. */
    if (st) {
        hbg__image_rollback(&o->img, m0);
        o->heap_used = h0;
        /* They named no buffer on entry, and name none again. */
        for (uint32_t i = 0; i < n_alloc; i++)
            ts[i]->addr = 0, ts[i]->creator = 0;
        return st;
    }
    o->img.tasks[tid].tensor_cnt = n;
    if (o->memo)
        hbg__memo_note_alloc(o, tid, h0);
    *id = tid;
    return HBG_OK;
}

hbg_status hbg_alloc_tensors(hbg_orch *o, uint32_t n, hbg_tensor *const *ts, hbg_task_id *id)
{
    hbg_task_id dummy_id;
    if (!id)
        id = &dummy_id;
    *id = HBG_TASK_NONE;
    if (!o)
        return HBG_E_INVAL;
    if (!o->in_pass)
        return HBG_E_STATE;
    if (n && !ts) {
        hbg__why(o, HBG_WHY_NULL_INPUT, -1, 1, 0, 0);
        return hbg__orch_fail(o, HBG_E_INVAL);
    }
    if (n > HBG_MAX_ALLOC_TENSORS) {
        hbg__why(o, HBG_WHY_TOO_MANY, -1, n, HBG_MAX_ALLOC_TENSORS, HBG_COUNT_ALLOCS);
        return hbg__orch_fail(o, HBG_E_TOO_MANY_TENSORS);
    }
    if (o->capturing)
        return hbg__orch_fail(o, o->ext->capture_alloc(o, n, ts, id));
    uint64_t t0 = hbg__op_begin(o, HBG_OP_ALLOC_TENSORS);
    hbg_status st = alloc(o, n, ts, id);
    if (o->timing)
        hbg__op_end(o, HBG_OP_ALLOC_TENSORS, t0, st ? 0 : *id);
    return hbg__orch_fail(o, st);
}

hbg_status hbg_scope_begin(hbg_orch *o, hbg_scope_mode mode)
{
    if (!o)
        return HBG_E_INVAL;
    if (!o->in_pass)
        return HBG_E_STATE;
    if (mode != HBG_SCOPE_AUTO && mode != HBG_SCOPE_MANUAL) {
        hbg__why(o, HBG_WHY_SCOPE_MODE, -1, (int64_t)mode, 0, 0);
        return hbg__orch_fail(o, HBG_E_INVAL);
    }
    if (o->scope_depth >= HBG_MAX_SCOPE_DEPTH || (mode == HBG_SCOPE_AUTO && o->manual_depth > 0)) {
        bool deep = o->scope_depth >= HBG_MAX_SCOPE_DEPTH;
        hbg__why(o, HBG_WHY_SCOPE, -1, deep ? 0 : 1, HBG_MAX_SCOPE_DEPTH, 0);
        return hbg__orch_fail(o, HBG_E_SCOPE);
    }
    o->scope_mode[o->scope_depth++] = (uint8_t)mode;
    if (mode == HBG_SCOPE_MANUAL)
        o->manual_depth++;
    return HBG_OK;
}

hbg_status hbg_scope_end(hbg_orch *o)
{
    if (!o)
        return HBG_E_INVAL;
    if (!o->in_pass)
        return HBG_E_STATE;
    /* A Graph body that ended its caller's scope (and began one of its
     * own: a MANUAL one) turned the caller's inference off for the tasks
     * after the call, every call returning HBG_OK. */
    if (o->scope_depth <= o->scope_floor) {
        hbg__why(o, HBG_WHY_SCOPE, -1, o->scope_depth ? 3 : 2, 0, 0);
        return hbg__orch_fail(o, HBG_E_SCOPE);
    }
    if (o->scope_mode[--o->scope_depth] == HBG_SCOPE_MANUAL)
        o->manual_depth--;
    return HBG_OK;
}

hbg_status hbg__orch_call_body(hbg_orch *o, hbg_graph_body body, void *ctx, const hbg_boundary *b)
{
    uint32_t floor0 = o->scope_floor, depth0 = o->scope_depth;
    o->scope_floor = depth0;
    hbg_status st = hbg__orch_returned(o, body(o, ctx, b), true);
    o->scope_floor = floor0;
    if (o->scope_depth == depth0)
        return st;
    if (!st && !o->err) { /* a body that went on past a failure has that one to report */
        hbg__why(o, HBG_WHY_SCOPE, -1, 4, o->scope_depth - depth0, 0);
        st = hbg__orch_fail(o, HBG_E_SCOPE);
    }
    while (o->scope_depth > depth0)
        if (o->scope_mode[--o->scope_depth] == HBG_SCOPE_MANUAL)
            o->manual_depth--;
    return st;
}

hbg_status hbg_orch_error(const hbg_orch *o) { return o ? o->err : HBG_E_INVAL; }
uint32_t hbg_orch_task_count(const hbg_orch *o) { return o ? o->img.ntasks : 0; }
uint64_t hbg_orch_heap_used(const hbg_orch *o) { return o ? o->heap_used : 0; }
uint32_t hbg_orch_nargs(const hbg_orch *o) { return o ? o->nargs : 0; }
hbg_tensor *hbg_orch_arg(const hbg_orch *o, uint32_t i) { return o && i < o->nargs ? &o->args[i] : NULL; }
uint32_t hbg_orch_rank(const hbg_orch *o) { return o ? o->cfg.rank : 0; }
uint32_t hbg_orch_nranks(const hbg_orch *o) { return o ? o->cfg.nranks : 0; }
