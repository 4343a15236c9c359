/* The runtime: one device context per rank, one chip.run per call.
 *
 * A chip.run is a bind pass and (unless skipped) a runner_run. Everything
 * the trace says about it is formatted here, after the pass has ended, from
 * numbers the pass stored: spans, the breakdown burst, the records line.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bind/bind_internal.h"
#include "device/exec.h"
#include "graph/graph_internal.h"
#include "orch/taskmemo.h"
#include "trace/recpool_hold.h"
#include "util/hash.h"
#include "util/printable.h"

/* (pid, inv) names one run of a callable: inv counts runs per process. A
 * forked rank starts from its parent's count, which is zero as long as the
 * driver forks before the first run. */
static _Atomic uint64_t g_inv;

/* Why this thread's last failed runtime call failed (hbg_runtime_last_error):
 * a create that fails has no object to keep its words in, nor a run or a
 * breakdown switch refused before it has a report to write. */
static _Thread_local char last_error[HBG_PASS_ERROR_MAX];

const char *hbg_runtime_last_error(void)
{
    return last_error;
}

/* Notes why in last_error; returns st. */
static hbg_status fail(hbg_status st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static hbg_status fail(hbg_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hbg__vformat(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return st;
}

/* The limits of a config, checked before anything is taken or made. */
static hbg_status check_config(const hbg_runtime_config *cfg)
{
    if (!cfg)
        return fail(HBG_E_INVAL, "no config (hbg_runtime_config is NULL)");
    if (!cfg->device)
        return fail(HBG_E_INVAL, "no device (cfg.device is NULL)");
    if (!cfg->kernels)
        return fail(HBG_E_INVAL, "no kernel table (cfg.kernels is NULL)");
    /* A rank outside the job would address peers that do not exist (the
     * sim device refuses the same configuration when it opens). */
    if (cfg->nranks ? cfg->rank >= cfg->nranks : cfg->rank != 0)
        return fail(HBG_E_INVAL,
                    cfg->nranks ? "rank %u of %u ranks: no such rank"
                                : "rank %u of %u ranks: no such rank (nranks 0 is one rank, rank 0)",
                    cfg->rank, cfg->nranks);
    if (cfg->task_window > HBG_MAX_TASK_WINDOW)
        return fail(HBG_E_INVAL, "task_window %u is past the limit of %u (HBG_MAX_TASK_WINDOW)", cfg->task_window,
                    HBG_MAX_TASK_WINDOW);
    if (!cfg->no_tmap_journal && cfg->journal_calls > HBG_MAX_JOURNAL_CALLS)
        return fail(HBG_E_INVAL, "journal_calls %u is past the limit of %u (HBG_MAX_JOURNAL_CALLS)", cfg->journal_calls,
                    HBG_MAX_JOURNAL_CALLS);
    /* Past these a region's 64-byte rounding of its next offset wraps
     * (orch.c, recorder.c, segments.c): refused here, not at the first
     * pass's allocation, which a device with room for it would grant. */
    if (cfg->heap_bytes > HBG_MAX_HEAP_BYTES)
        return fail(HBG_E_INVAL, "heap_bytes %llu is past the limit of %llu (HBG_MAX_HEAP_BYTES)",
                    (unsigned long long)cfg->heap_bytes, (unsigned long long)HBG_MAX_HEAP_BYTES);
    if (cfg->def_pool_bytes > HBG_MAX_DEF_POOL_BYTES)
        return fail(HBG_E_INVAL, "def_pool_bytes %llu is past the limit of %llu (HBG_MAX_DEF_POOL_BYTES)",
                    (unsigned long long)cfg->def_pool_bytes, (unsigned long long)HBG_MAX_DEF_POOL_BYTES);
    return HBG_OK;
}

/* Why a runtime that is claimed (rt->running) refuses a call: the claim
 * does not say whose it is, so the words name every holder it can be. */
static hbg_status busy(void)
{
    return fail(HBG_E_STATE, "the runtime is in use: a pass of it is under way (called from its orchestration, a "
                             "Graph body or a kernel of its device run, or from another thread), or "
                             "hbg_runtime_set_breakdown on another thread");
}

hbg_status hbg_runtime_create(const hbg_runtime_config *cfg, hbg_runtime **out)
{
    if (!out)
        return fail(HBG_E_INVAL, "nowhere to put the runtime (out is NULL)");
    *out = NULL;
    hbg_status st = check_config(cfg);
    if (st)
        return st;
    hbg_runtime *rt = calloc(1, sizeof *rt);
    if (!rt)
        return fail(HBG_E_NOMEM, "out of host memory for the runtime (%zu bytes)", sizeof *rt);
    if (cfg->records && !hbg__recpool_hold(cfg->records, rt)) {
        free(rt);
        /* another runtime's pool (trace/recpool_hold.h) */
        return fail(HBG_E_STATE, "cfg.records is a record pool another live runtime holds (a pool serves one "
                                 "runtime from create to destroy: create one for each)");
    }
    rt->cfg = *cfg;
    atomic_init(&rt->running, false);
    rt->stack = hbg__stack_of_caller();
    if (rt->cfg.nranks == 0)
        rt->cfg.nranks = 1;
    rt->dev = cfg->device;
    rt->heap_bytes = cfg->heap_bytes ? cfg->heap_bytes : HBG_DEFAULT_HEAP_BYTES;
    rt->defpool_bytes = cfg->def_pool_bytes ? cfg->def_pool_bytes : HBG_DEFAULT_DEF_POOL_BYTES;
    const char *part = "the orchestrator";
    hbg__orch_config oc = {
        .task_window = cfg->task_window,
        .heap_bytes = rt->heap_bytes,
        .keep_definitions = cfg->keep_definitions,
        .no_journal = cfg->no_tmap_journal,
        .journal_calls = cfg->journal_calls,
        .rank = rt->cfg.rank,
        .nranks = rt->cfg.nranks,
        .nomem_part = &part,
    };
    st = hbg__graph_orch_create(&oc, &rt->orch);
    if (st) {
        if (cfg->records)
            hbg__recpool_release(cfg->records, rt);
        free(rt);
        uint32_t window = cfg->task_window ? cfg->task_window : HBG_DEFAULT_TASK_WINDOW;
        if (st == HBG_E_NOMEM)
            return fail(st, "out of host memory for %s (a window of %u tasks)", part, window);
        return fail(st, "cannot create the orchestrator: %s", hbg_strerror(st));
    }
    hbg__orch_set_timing(rt->orch, cfg->breakdown, cfg->records);
    *out = rt;
    return HBG_OK;
}

hbg_status hbg_runtime_set_breakdown(hbg_runtime *rt, bool on)
{
    if (!rt)
        return fail(HBG_E_INVAL, "no runtime (rt is NULL)");
    /* Claimed as a pass claims it: from the pass's own orchestration, or
     * from another thread while one runs, the switch would change under
     * the pass (the runtime is one thread's at a time, but a plain flag
     * read here raced with a pass starting on another thread). */
    if (atomic_exchange(&rt->running, true))
        return busy();
    rt->cfg.breakdown = on;
    hbg__orch_set_timing(rt->orch, on, rt->cfg.records);
    atomic_store(&rt->running, false);
    return HBG_OK;
}

void hbg_runtime_destroy(hbg_runtime *rt)
{
    if (!rt)
        return;
    for (uint32_t i = 0; i < HBG_MAX_PROGRAM_ARGS; i++)
        if (rt->argbufs[i].dev)
            hbg_device_free(rt->dev, rt->argbufs[i].dev);
    for (uint32_t i = 0; i < rt->ndevdefs; i++)
        if (!rt->devdefs[i].pooled)
            hbg_device_free(rt->dev, rt->devdefs[i].dev);
    if (rt->defpool_dev)
        hbg_device_free(rt->dev, rt->defpool_dev);
    if (rt->heap_dev)
        hbg_device_free(rt->dev, rt->heap_dev);
    if (rt->arena_dev)
        hbg_device_free(rt->dev, rt->arena_dev);
    free(rt->staging);
    hbg__orch_destroy(rt->orch);
    if (rt->cfg.records)
        hbg__recpool_release(rt->cfg.records, rt);
    free(rt);
}

const hbg_orch *hbg_runtime_orch(const hbg_runtime *rt)
{
    return rt ? rt->orch : NULL;
}

static void span(const hbg_runtime *rt, const hbg_pass_report *rep, uint64_t hid, int depth, const char *name,
                 uint64_t ts, uint64_t dur, bool dev)
{
    hbg_span s = {.inv = rep->inv, .hid = hid, .pid = rep->trace.pid, .tid = hbg_gettid(), .depth = depth,
                  .name = name, .ts = ts, .dur = dur, .dev_clock = dev};
    hbg_log_span(rt->cfg.log, &s);
}

static const char *prog_name(const hbg_program *p)
{
    return p->name ? p->name : "(unnamed)";
}

/* rep->error for a pass that failed with `st`, from the facts the pass
 * kept; called after the pass, never inside it. A bind segment refused by
 * the device (an allocation past its memory) is named
 * in the device's words when a device call of this pass said why
 * (rt->dev_seq: the device's message count when the pass began, or after
 * a refusal it recovered from); an older message, say of an allocation
 * that graph_upload retried with success, is not this failure's. */
static void pass_error(const hbg_runtime *rt, const hbg_program *p, hbg_pass_report *rep, hbg_status st,
                       bool device)
{
    const char *dev = hbg_device_last_error();
    bool dev_said = (st == HBG_E_DEVICE_ALLOC || st == HBG_E_DEVICE) && *dev &&
                    hbg__exec_error_seq() != rt->dev_seq;
    if (device)
        snprintf(rep->error, sizeof rep->error, "device run: %s", *dev ? dev : hbg_strerror(st));
    else if (rep->failed_segment == HBG_PH_ARGS && rt->argfault.what != HBG_ARGF_NONE)
        hbg__argfault_format(&rt->argfault, p, rep->error, sizeof rep->error);
    else if (rep->failed_segment == HBG_PH_HOST_ORCH && !p->orch)
        snprintf(rep->error, sizeof rep->error, "host_orch: program %s has no orchestration function (orch is NULL)",
                 prog_name(p));
    else if (rep->failed_segment == HBG_PH_HOST_ORCH && hbg_orch_error(rt->orch))
        snprintf(rep->error, sizeof rep->error, "%s", hbg_orch_last_error(rt->orch));
    else if (rep->failed_segment != HBG_PH_NONE && rep->failed_segment != HBG_PH_HOST_ORCH && dev_said)
        snprintf(rep->error, sizeof rep->error, "%s: %s", hbg_phase_name(rep->failed_segment), dev);
    else if (rep->failed_segment != HBG_PH_NONE)
        snprintf(rep->error, sizeof rep->error, "%s: %s", hbg_phase_name(rep->failed_segment), hbg_strerror(st));
    else
        snprintf(rep->error, sizeof rep->error, "%s", hbg_strerror(st));
    hbg__utf8_trim(rep->error); /* a long message is cut: never inside a character */
    hbg__mask_controls(rep->error); /* one line, whatever a name it quotes holds */
}

/* The warning HBG_GRAPH_FALLBACK promises, once per pass, after it. */
static void warn_fallbacks(const hbg_runtime *rt, const hbg_program *p, const hbg_pass_report *rep)
{
    char first[HBG_PASS_ERROR_MAX];
    hbg__fault_format(&rt->orch->graph->first_fallback, first, sizeof first);
    HBG_LOG(rt->cfg.log, HBG_LOG_WARN,
            "chip.run of %s: %u Graph call(s) ran as ordinary tasks (HBG_GRAPH_FALLBACK); the first: %s pid=%u "
            "inv=%llu",
            prog_name(p), rep->fallbacks, first, rep->trace.pid, (unsigned long long)rep->inv);
}

hbg_status hbg_runtime_run(hbg_runtime *rt, const hbg_program *p, bool skip_device, hbg_pass_report *rep)
{
    if (!rt)
        return fail(HBG_E_INVAL, "no runtime (rt is NULL)");
    if (!rep)
        return fail(HBG_E_INVAL, "no report (rep is NULL)");
    /* From inside a run of this runtime: its orchestration function, a
     * Graph body, or a kernel of its device run (on a core's thread). A
     * pass started now would reset the one running (its image, its
     * arguments, its arena) under it; from a kernel it would also wait
     * for a device run that waits for the kernel. The caller's report is
     * left alone: it may be the outer pass's, so the words go to
     * hbg_runtime_last_error (formatted only now, on a refusal). */
    if (atomic_exchange(&rt->running, true))
        return busy();
    memset(rep, 0, sizeof *rep);
    if (!p) {
        rep->failed_segment = HBG_PH_NONE;
        snprintf(rep->error, sizeof rep->error, "no program (hbg_program is NULL)");
        rep->status = HBG_E_INVAL;
        atomic_store(&rt->running, false);
        return HBG_E_INVAL;
    }
    rep->inv = atomic_fetch_add(&g_inv, 1) + 1;
    rep->trace.pid = (uint32_t)getpid();
    rep->trace.inv = rep->inv;
    rep->failed_segment = HBG_PH_NONE;
    uint64_t hid = hbg__hash64(p->name ? p->name : "", p->name ? strlen(p->name) : 0);
    hbg_recpool *rec = rt->cfg.records;
    if (rec)
        hbg_recpool_arm(rec, rep->trace.pid, rep->inv);

    rt->dev_seq = hbg__exec_error_seq();
    uint64_t t_run = hbg_mono_ns();
    hbg_status st = hbg__bind_pass(rt, p, rep);
    uint64_t t_bound = hbg_mono_ns();

    /* From here on the pass is over: formatting is allowed. */
    if (st)
        pass_error(rt, p, rep, st, false);
    if (rep->fallbacks)
        warn_fallbacks(rt, p, rep);
    uint64_t dropped = 0;
    hbg_status wst = HBG_OK; /* the records' write: reported after the device run, which it does not stop */
    int werr = 0;
    if (rec) {
        dropped = hbg_recpool_dropped(rec);
        hbg_recpool_disarm(rec);
        if (rt->cfg.records_fd >= 0) {
            wst = hbg_recpool_write_jsonl(rec, rt->cfg.records_fd);
            werr = errno; /* the failed write's, before anything else can set it */
        }
    }
    for (int k = 0; k < HBG_OP_COUNT; k++)
        rep->trace.op[k].dropped = dropped;
    static const hbg_phase cp[] = {HBG_PH_HOST_ORCH, HBG_PH_GRAPH_UPLOAD, HBG_PH_ARENA_H2D};
    for (uint32_t i = 0; i < rep->trace.nran; i++)
        for (unsigned j = 0; j < 3; j++)
            if (rep->trace.order[i] == cp[j])
                rep->control_plane_ns += rep->trace.seg[cp[j]].dur_ns;
    if (rt->cfg.breakdown)
        hbg_bind_trace_emit(rt->cfg.log, &rep->trace);
    span(rt, rep, hid, 1, "chip.run.bind", t_run, t_bound - t_run, false);

    if (!st && !skip_device) {
        uint64_t t0 = hbg_mono_ns();
        st = hbg__runner_run(rt, rep);
        uint64_t t1 = hbg_mono_ns();
        if (st)
            pass_error(rt, p, rep, st, true);
        span(rt, rep, hid, 2, "chip.run.runner_run.device_wall", 0, rep->run.device_wall_ns, true);
        span(rt, rep, hid, 1, "chip.run.runner_run", t0, t1 - t0, false);
    }
    span(rt, rep, hid, 0, "chip.run", t_run, hbg_mono_ns() - t_run, false);
    if (wst && !st) {
        st = wst;
        snprintf(rep->error, sizeof rep->error, "cannot write host_phase_records.jsonl: %s",
                 wst == HBG_E_IO ? strerror(werr) : hbg_strerror(wst));
    }
    if (st)
        HBG_LOG(rt->cfg.log, HBG_LOG_ERROR, "chip.run of %s failed (%s): %s pid=%u inv=%llu",
                prog_name(p), hbg_status_name(st), rep->error, rep->trace.pid,
                (unsigned long long)rep->inv);
    rep->status = st;
    atomic_store(&rt->running, false);
    return st;
}

void hbg__runtime_poison_host(hbg_runtime *rt, unsigned char pattern)
{
    hbg_orch *o = rt->orch;
    hbg__image_poison(&o->img, pattern);
    hbg__memo_forget(o); /* its notes describe the records just overwritten */
    memset(o->graph->def_pool, pattern, (size_t)o->graph->def_pool_used);
    if (rt->staging)
        memset(rt->staging, pattern, (size_t)rt->arena_cap);
}
