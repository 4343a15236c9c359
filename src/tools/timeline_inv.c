/* hbg timeline --per-invocation: the original tool's other view. One
 * synthetic process lane per invocation ("decode inv=3 (pid 5100, rank
 * 0)"), its host spans on a "host" track and its device-clock spans on a
 * "device" track, each of those placed at the start of the invocation's
 * runner_run (the device clock is not the host's; drawn at their own ts
 * they would stretch the axis from 0). Each invocation its own lane, so
 * pipelined runs never overlap on one. */
#include "tools/timeline.h"
#include "tools/clockwin.h"
#include "tools/jw.h"
#include "tools/spans.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The start of x's runner_run and its smallest device ts; false when it
 * has no runner_run. */
static bool device_place(const sp_set *S, const sp_inv *x, uint64_t *host, uint64_t *base)
{
    bool found = false;
    *base = UINT64_MAX;
    for (size_t k = 0; k < x->n; k++) {
        const ps_span *s = &S->L->span[S->idx[x->first + k]];
        if (s->dev && s->ts < *base)
            *base = s->ts;
        if (!s->dev && !found && s->depth == 1 && lx_slice_eq(s->name, "chip.run.runner_run")) {
            found = true;
            *host = s->ts;
        }
    }
    return found;
}

/* Where span s of an invocation lies on the axis: a device span at its
 * offset from the runner_run's start; false for one with no runner_run. */
static bool inv_ts(const ps_span *s, bool placed, uint64_t host, uint64_t base, uint64_t *ts)
{
    if (!s->dev) {
        *ts = s->ts;
        return true;
    }
    if (!placed)
        return false;
    *ts = host + (s->ts - base) < host ? UINT64_MAX : host + (s->ts - base);
    return true;
}


static void span_event(jw *w, const ps_span *s, char *nbuf, uint64_t lane, uint64_t track, uint64_t ts,
                       tl_report *rep)
{
    size_t nl = lx_decode_name(s->name, nbuf);
    JW_LIT(w, ",\n{\"name\":");
    jw_str(w, nbuf, nl);
    jw_lit(w, s->dev ? ",\"cat\":\"device\",\"ph\":\"X\",\"pid\":" : ",\"cat\":\"span\",\"ph\":\"X\",\"pid\":");
    jw_u64(w, lane);
    JW_LIT(w, ",\"tid\":");
    jw_u64(w, track);
    JW_LIT(w, ",\"ts\":");
    jw_us(w, ts);
    JW_LIT(w, ",\"dur\":");
    jw_dur_us(w, ts, s->dur);
    JW_LIT(w, ",\"args\":{\"inv\":");
    jw_u64(w, s->inv);
    JW_LIT(w, ",\"pid\":");
    jw_u64(w, s->pid);
    JW_LIT(w, ",\"depth\":");
    jw_u64(w, s->depth);
    if (s->dev) {
        JW_LIT(w, ",\"clock\":\"device\",\"device_ts_ns\":");
        jw_u64str(w, s->ts);
    }
    JW_LIT(w, "}}");
    rep->events++;
    if (s->dev)
        rep->device_spans++;
    else
        rep->spans++;
}

/* A lane's or track's name: counted like every event (the report's
 * count is the traceEvents array's length). */
static void inv_meta(jw *w, bool *first, const char *what, uint64_t lane, uint64_t track, const char *name,
                     tl_report *rep)
{
    tl_meta(w, first, what, lane, track, name);
    rep->events++;
    rep->lane_names++;
}

/* Each of S's ranks (by pid) its run and its rank within it; returns how
 * many runs (0: out of memory). */
static size_t rank_runs(const ps_log *L, const sp_set *S, tl_rank *rk)
{
    for (size_t k = 0; k < S->nrank; k++)
        rk[k] = (tl_rank){S->rank_pid[k], L->nstamps < 2 ? 1 : UINT32_MAX, 0, 0};
    for (size_t i = 0; L->nstamps >= 2 && i < L->nspan; i++) {
        size_t k = sp_rank_of(S, L->span[i].pid);
        uint32_t r = ps_run_of(L, L->span[i].line);
        if (k != SIZE_MAX && r < rk[k].run)
            rk[k].run = r;
    }
    return S->nrank ? tl_number_ranks(rk, S->nrank) : 1;
}

/* Each invocation's label, from its own process's invocations alone: of
 * the callables its pid ran, the one it ran most is "decode" (where that
 * is more than once; of two as frequent, the one whose first span comes
 * first in the log), one it ran once "prefill", any other "callable".
 * hbg spans labels a callable by its invocations over the whole log, so a
 * qwen decode step was "decode" in a qwen log and "callable" beside
 * dsv4's two ranks' more numerous ones: a lane's name must not depend on
 * what else the log holds. S->inv is in (pid, inv) order, so a pid's
 * invocations lie together. lab[] gets S->ninv labels; false when out of
 * memory. */
static bool inv_labels(const sp_set *S, const char **lab)
{
    size_t *cnt = malloc((S->ncall ? S->ncall : 1) * sizeof *cnt);
    size_t *first = malloc((S->ncall ? S->ncall : 1) * sizeof *first);
    size_t *seen = malloc((S->ncall ? S->ncall : 1) * sizeof *seen); /* the group that last counted it, from 1 */
    if (!cnt || !first || !seen) {
        free(cnt), free(first), free(seen);
        return false;
    }
    for (size_t c = 0; c < S->ncall; c++)
        seen[c] = 0;
    for (size_t a = 0, b; a < S->ninv; a = b) {
        for (b = a; b < S->ninv && S->inv[b].pid == S->inv[a].pid; b++) {
            uint32_t c = S->inv[b].callable;
            size_t line = S->L->span[S->idx[S->inv[b].first]].line;
            if (seen[c] != a + 1) {
                seen[c] = a + 1;
                cnt[c] = 0;
                first[c] = line;
            }
            cnt[c]++;
            if (line < first[c])
                first[c] = line;
        }
        uint32_t top = S->inv[a].callable;
        for (size_t i = a; i < b; i++) {
            uint32_t c = S->inv[i].callable;
            if (cnt[c] > cnt[top] || (cnt[c] == cnt[top] && first[c] < first[top]))
                top = c;
        }
        for (size_t i = a; i < b; i++) {
            uint32_t c = S->inv[i].callable;
            lab[i] = cnt[c] == 1 ? "prefill" : c == top ? "decode" : "callable";
        }
    }
    free(cnt), free(first), free(seen);
    return true;
}

hbg_status tl_write_per_invocation(ps_log *L, FILE *out, tl_report *rep, dg_list *warn)
{
    memset(rep, 0, sizeof *rep);
    rep->torn = L->ntorn;
    sp_set S;
    if (sp_build(&S, L) != HBG_OK)
        return HBG_E_NOMEM;
    cw_set W;
    if (!cw_build(&W, L)) {
        cw_free(&W);
        sp_free(&S);
        return HBG_E_NOMEM;
    }
    for (size_t i = 0; i < S.warn.n; i++)
        dg_add(warn, "%s", S.warn.msg[i]);
    size_t maxname = 1;
    for (size_t i = 0; i < L->nspan; i++)
        if (L->span[i].name.n > maxname)
            maxname = L->span[i].name.n;
    char *nbuf = malloc(maxname + 1);
    /* device spans run at once (orch beside sched): a track per name, as
     * many as an invocation has */
    size_t most = 1;
    for (size_t i = 0; i < S.ninv; i++)
        most = S.inv[i].n > most ? S.inv[i].n : most;
    lx_slice *dnames = malloc(most * sizeof *dnames);
    /* each rank numbered within its run, where logs put together hold
     * several (tl_number_ranks) */
    tl_rank *rk = malloc((S.nrank ? S.nrank : 1) * sizeof *rk);
    size_t nrun = rk ? rank_runs(L, &S, rk) : 0;
    const char **lab = malloc((S.ninv ? S.ninv : 1) * sizeof *lab);
    jw w;
    if (!nbuf || !dnames || !nrun || !lab || !inv_labels(&S, lab) || !jw_init(&w, out)) {
        free(lab);
        free(rk);
        free(nbuf);
        free(dnames);
        cw_free(&W);
        sp_free(&S);
        return HBG_E_NOMEM;
    }
    jw_background(&w);
    bool first = true;
    size_t unplaced = 0;
    char name[256];
    JW_LIT(&w, "{\"traceEvents\":[");
    for (size_t i = 0; i < S.ninv; i++) {
        const sp_inv *x = &S.inv[i];
        uint64_t lane = i + 1;
        uint64_t host = 0, base = 0, ts;
        bool placed = device_place(&S, x, &host, &base);
        /* an invocation whose every drawable span is a corrupt reading
         * gets no lane: it would stand empty */
        size_t drawn = 0, far = 0;
        for (size_t k = 0; k < x->n; k++) {
            const ps_span *s = &L->span[S.idx[x->first + k]];
            if (!inv_ts(s, placed, host, base, &ts))
                continue;
            if (cw_far(&W, s->pid, s->inv, ts))
                far++;
            else
                drawn++;
        }
        if (far && !drawn) {
            for (size_t k = 0; k < x->n; k++) {
                const ps_span *s = &L->span[S.idx[x->first + k]];
                if (!inv_ts(s, placed, host, base, &ts))
                    unplaced++;
                else
                    (void)cw_drop_span(&W, s, ts, L->path);
            }
            continue;
        }
        char run[64];
        tl_run_label(L, nrun, rk[x->rank].run, run, sizeof run);
        snprintf(name, sizeof name, "%s inv=%" PRIu64 " (pid %" PRIu64 ", rank %zu%s)", lab[i], x->inv, x->pid,
                 rk[x->rank].rank, run);
        inv_meta(&w, &first, "process_name", lane, 0, name, rep);
        inv_meta(&w, &first, "thread_name", lane, 0, "host", rep);
        size_t nd = 0;
        for (size_t k = 0; k < x->n; k++) {
            const ps_span *s = &L->span[S.idx[x->first + k]];
            uint64_t track = 0;
            if (!inv_ts(s, placed, host, base, &ts)) {
                unplaced++;
                continue;
            }
            if (cw_drop_span(&W, s, ts, L->path)) /* a corrupt clock reading (clockwin.h) */
                continue;
            if (s->dev) {
                while (track < nd && !(dnames[track].n == s->name.n && !memcmp(dnames[track].p, s->name.p, s->name.n)))
                    track++;
                if (track == nd) {
                    dnames[nd++] = s->name;
                    size_t nl = lx_decode_name(s->name, nbuf);
                    snprintf(name, sizeof name, "device (clk=dev): %.*s", (int)(nl < 200 ? nl : 200), nbuf);
                    inv_meta(&w, &first, "thread_name", lane, nd, name, rep);
                }
                track++;
            }
            span_event(&w, s, nbuf, lane, track, ts, rep);
        }
    }
    if (unplaced == 1) /* not "1 device-clock spans have" */
        dg_add(warn, "%s: one device-clock span has no chip.run.runner_run span in its invocation; not drawn", L->path);
    else if (unplaced)
        dg_add(warn, "%s: %zu device-clock spans have no chip.run.runner_run span in their invocation; not drawn",
               L->path, unplaced);
    cw_warn(&W, warn);
    rep->far = W.note.n;
    JW_LIT(&w, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"hbg timeline --per-invocation\","
               "\"log\":");
    jw_str(&w, L->file, strlen(L->file));
    tl_put_incomplete(&w, L);
    JW_LIT(&w, "}}\n");
    bool ok = jw_flush(&w);
    jw_free(&w);
    free(lab);
    free(rk);
    free(nbuf);
    free(dnames);
    cw_free(&W);
    sp_free(&S);
    return ok ? HBG_OK : HBG_E_IO;
}
