/* Defect analysis, after the scan: each pass's rank and whether it is its
 * rank's cold one, the reference segment set most passes share, each
 * pass's defects with their warnings, and why the excluded passes were
 * left out. The grouping is in passes.c. */
#include "tools/passes_internal.h"
#include "util/vec.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank_of(ps_log *L, const ps_pass *p)
{
    bool named = p->has_pid || (p->defects & PS_D_NO_PID);
    uint32_t *s = hmap_put2(&L->ix->rmap, named ? p->pid : p->thread, named ? 1 : 2);
    if (!s) {
        L->oom = true;
        return -1;
    }
    if (*s)
        return (int)(*s - 1);
    if (!vec_grow((void **)&L->rank, &L->caprank, L->nrank + 1, sizeof *L->rank)) {
        L->oom = true;
        return -1;
    }
    ps_rank *k = &L->rank[L->nrank];
    k->has_pid = named;
    k->pid = named ? p->pid : 0;
    k->thread = p->thread;
    k->npasses = 0;
    *s = (uint32_t)(L->nrank + 1);
    return (int)L->nrank++;
}

/* A pass whose bind lines carry no pid and whose span is missing belongs to
 * the process that wrote the other passes of its thread. But a thread id
 * is no process's own: ranks forked from one process run on a thread of
 * the same id. Where a thread carries the passes of several pids, the
 * pass could be any one's (taking the nearest named one's charged a
 * rank's cold pass to its peer, as warm): it is excluded (PS_D_NO_PID),
 * filed under the first one's rank without counting in it. A thread is
 * taken within its run (ps_pass.run): runs put one after another in one
 * file share no pass, whatever their threads' ids. Maps of (thread, run)
 * -> its first named pass, and of those several pids share. */
static bool inherit_pids(ps_log *L)
{
    hmap first, shared;
    hmap_init(&first, 2);
    hmap_init(&shared, 2);
    bool ok = true;
    for (size_t i = 0; i < L->npass && ok; i++) {
        const ps_pass *p = &L->pass[i];
        if (!p->has_thread || !p->has_pid)
            continue;
        uint32_t *f = hmap_put2(&first, p->thread, p->run);
        if (!f) {
            ok = false;
        } else if (!*f) {
            *f = (uint32_t)(i + 1);
        } else if (L->pass[*f - 1].pid != p->pid) {
            uint32_t *sh = hmap_put2(&shared, p->thread, p->run);
            if (sh)
                *sh = 1;
            ok = sh != NULL;
        }
    }
    for (size_t i = 0; i < L->npass && ok; i++) {
        ps_pass *p = &L->pass[i];
        if (!p->has_thread || p->has_pid)
            continue;
        uint32_t v = hmap_get2(&first, p->thread, p->run);
        if (v && hmap_get2(&shared, p->thread, p->run))
            p->defects |= PS_D_NO_PID;
        if (v) {
            p->pid = L->pass[v - 1].pid; /* for its rank only: its inv stays unknown */
            p->has_pid = !(p->defects & PS_D_NO_PID);
        }
    }
    hmap_free(&first);
    hmap_free(&shared);
    return ok;
}

/* How many candidate passes have each segment set. */
typedef struct mask_count {
    uint32_t mask;
    size_t n;
} mask_count;

void ps_seg_list(const ps_log *L, uint32_t mask, char *out, size_t n)
{
    size_t k = 0;
    out[0] = 0;
    for (int i = 0; i < L->nseg && k + 1 < n; i++)
        if (mask & (1u << i)) {
            int w = snprintf(out + k, n - k, "%s%s", k ? ", " : "", L->segname[i]);
            if (w < 0)
                break;
            k += (size_t)w;
            if (k >= n)
                k = n - 1;
        }
}

/* What follows "the passes are out of order; " for the cold pass inv=
 * inv: a drawing keeps every pass where its times put it, and has no cold
 * pass to choose. Into buf, which it returns. */
static const char *cold_said(const ps_log *L, uint64_t inv, char *buf, size_t cap)
{
    if (L->opt.draws)
        snprintf(buf, cap, "each is drawn at its own time");
    else
        snprintf(buf, cap, "inv=%" PRIu64 " is taken as the cold pass", inv);
    return buf;
}

/* A rank's cold pass is its first by inv= where its passes have one (a
 * process numbers its passes from 1 up), not by its place in the file:
 * logs joined in the wrong order put a warm pass first, and the cold
 * one, slower by orders of magnitude, would be taken for warm while a
 * warm one was dropped. Said once per rank. Keyless passes (the original
 * runtime writes no inv=) keep the file's order. False when out of
 * memory (L->oom set). */
static bool cold_by_inv(ps_log *L)
{
    size_t *first = malloc((L->nrank ? L->nrank : 1) * sizeof *first);
    if (!first) {
        L->oom = true;
        return false;
    }
    for (size_t r = 0; r < L->nrank; r++)
        first[r] = SIZE_MAX;
    for (size_t i = 0; i < L->npass; i++) {
        const ps_pass *p = &L->pass[i];
        size_t *f = &first[p->rank];
        if (p->cold)
            *f = i; /* the file's first: it stays unless a keyed pass is earlier */
        else if (p->has_inv && *f != SIZE_MAX && L->pass[*f].has_inv && p->inv < L->pass[*f].inv &&
                 L->pass[*f].has_pid == p->has_pid && L->pass[*f].pid == p->pid)
            *f = i;
    }
    char taken[64];
    for (size_t i = 0; i < L->npass; i++) {
        ps_pass *p = &L->pass[i];
        if (!p->cold || first[p->rank] == i)
            continue;
        const ps_pass *c = &L->pass[first[p->rank]];
        dg_add(&L->warn,
               "%s:%zu: pass pid=%" PRIu64 " inv=%" PRIu64 " comes before its rank's pass inv=%" PRIu64
               " (line %zu): the passes are out of order; %s",
               L->path, p->first_line, p->pid, p->inv, c->inv, c->first_line,
               cold_said(L, c->inv, taken, sizeof taken));
        p->cold = false;
        L->pass[first[p->rank]].cold = true;
    }
    free(first);
    return true;
}

/* Each pass's rank and whether it is its rank's first (cold) pass. last[]
 * gets the index of each rank's last pass (the caller frees it); false
 * when out of memory (L->oom set). */
static bool assign_ranks(ps_log *L, size_t **lastp)
{
    size_t *last = NULL;
    size_t caplast = 0;
    /* the rank of the pass before, for the common run of one rank's passes */
    uint64_t ka = 0, kb = 0;
    int krk = -1;
    for (size_t i = 0; i < L->npass; i++) {
        ps_pass *p = &L->pass[i];
        bool named = p->has_pid || (p->defects & PS_D_NO_PID);
        uint64_t a = named ? p->pid : p->thread, b = named ? 1 : 2;
        int rk = krk >= 0 && a == ka && b == kb ? krk : rank_of(L, p);
        ka = a;
        kb = b;
        krk = rk;
        if (rk < 0) {
            free(last);
            return false;
        }
        if (!vec_grow((void **)&last, &caplast, (size_t)rk + 1, sizeof *last)) {
            free(last);
            L->oom = true;
            return false;
        }
        p->rank = rk;
        if (p->defects & PS_D_NO_PID)
            continue; /* its rank is a guess: not its first or last pass, nor one of its passes */
        last[rk] = i;
        p->cold = L->rank[rk].npasses == 0;
        L->rank[rk].npasses++;
    }
    if (!cold_by_inv(L)) {
        free(last);
        return false;
    }
    *lastp = last;
    return true;
}

uint64_t ps_control_sum(const ps_log *L, const ps_pass *p)
{
    uint64_t sum = 0;
    for (int s = 0; s < L->nseg; s++)
        if (((p->present >> s) & (PS_CONTROL_MASK >> s) & 1) && __builtin_add_overflow(sum, ps_get(L, p, s).dur, &sum))
            return UINT64_MAX;
    return sum;
}

/* A pass without its closing segment: truncated when it is its rank's
 * last, nothing after its segments arrived and no line of it is damaged
 * but by the log's end; otherwise incomplete.
 * The segment set most of the other candidate passes share is the
 * reference (*ref, shared by *best passes). Of sets shared by as many,
 * the one of more segments wins (a pass that lost a segment's line is
 * the likelier defect: with two warm passes, one without gm_heap was
 * the norm the whole one was excluded against), then the earliest.
 * False when out of memory (L->oom set). */
static bool reference_set(ps_log *L, const size_t *last, uint32_t *ref, size_t *best)
{
    /* the sets of one log are few: mc[] in order of first appearance */
    bool expect_orch = L->nbad_bind > 0;
    for (size_t i = 0; i < L->npass && !expect_orch; i++)
        expect_orch = (L->pass[i].present | L->pass[i].ignored_segs) & (1u << PS_HOST_ORCH);
    hmap sets;
    hmap_init(&sets, 1);
    mask_count *mc = NULL;
    size_t capm = 0, nmask = 0;
    for (size_t i = 0; i < L->npass; i++) {
        ps_pass *p = &L->pass[i];
        /* made by a keyed host-orch line whose bind lines never came: one
         * defect, not the three segments it lacks */
        if (!(p->present | p->ignored_segs)) {
            p->defects |= PS_D_ORCH_ONLY;
            continue;
        }
        if (!(p->present & (1u << PS_CLOSE))) {
            /* Cut by the log's end, unless a line of it is damaged that
             * the end did not cut (its first ignored line is not the
             * log's cut last one): that line may be the arena_h2d the
             * pass lacks, a line end after it, and the pass is said to
             * lack it and to have the line, not to be truncated. */
            bool damaged = (p->defects & PS_D_IGNORED) && p->ignored_line != L->cut_line;
            if (last[p->rank] == i && !p->has_orch && !p->has_span && !damaged)
                p->defects |= PS_D_TRUNCATED;
            else
                p->defects |= PS_D_MISSING_CLOSE;
        }
        /* Without host_orch a pass's total is graph_upload + arena_h2d,
         * a few per cent of its control plane, and a segment set that
         * every pass shares does not catch a defect that every pass
         * shares (a host_orch line each could not be read, or not tied
         * to its pass). So where the log shows its passes have one
         * (another pass has it, or a bind line could not be read), a pass
         * without it is excluded. An ignored host_orch line already
         * excludes its pass and says so. */
        if (expect_orch && !((p->present | p->ignored_segs) & (1u << PS_HOST_ORCH)) &&
            !(p->defects & PS_D_TRUNCATED))
            p->defects |= PS_D_NO_ORCH;
        if (ps_control_sum(L, p) >= LX_DUR_LIMIT_NS)
            p->defects |= PS_D_LONG;
        /* an ignored line's pass still shows which segments it emitted */
        if ((p->defects & ~PS_D_IGNORED) || (p->cold && !L->opt.keep_first))
            continue;
        const uint64_t emitted = p->present | p->ignored_segs;
        uint32_t *s = hmap_put(&sets, &emitted);
        if (!s || (!*s && !vec_grow((void **)&mc, &capm, nmask + 1, sizeof *mc))) {
            hmap_free(&sets);
            free(mc);
            L->oom = true;
            return false;
        }
        if (!*s) {
            mc[nmask] = (mask_count){(uint32_t)emitted, 0};
            *s = (uint32_t)++nmask;
        }
        mc[*s - 1].n++;
    }
    hmap_free(&sets);
    /* in order of first appearance, so the earliest set wins a full tie */
    *ref = 0;
    *best = 0;
    for (size_t j = 0; j < nmask; j++)
        if (mc[j].n > *best || (mc[j].n == *best && __builtin_popcount(mc[j].mask) > __builtin_popcount(*ref))) {
            *best = mc[j].n;
            *ref = mc[j].mask;
        }
    free(mc);
    return true;
}

/* What hbg spans --records does with a defective pass: the statistics
 * exclude it, but the records join only matches records lines to passes
 * by (pid, inv), defects or not, so there it is kept where a line can
 * find its host_orch, and otherwise its operations count in the tails
 * only. */
static const char *records_fate(const ps_pass *p)
{
    if (!p->keyed)
        return "no records line joins it (it has no pid and inv): its operations count in the tails only";
    if (!(p->present & (1u << PS_HOST_ORCH)))
        return "no records line joins it (it has no host_orch): its operations count in the tails only";
    return "kept: its records line joins it as any pass's";
}

const char *ps_fate(const ps_log *L, const ps_pass *p, const char *excluded, const char *drawn)
{
    if (L->opt.records_join)
        return records_fate(p);
    if (!L->opt.draws)
        return excluded;
    bool placed = p->has_pid && p->has_inv && !(p->defects & PS_D_LONG) && p->present;
    return placed ? drawn : "not drawn";
}

/* The warnings of pass p's defects, one line each, each ending in what
 * the tool does with the pass (ps_fate): a timeline draws what it has. */
static void warn_defects(ps_log *L, const ps_pass *p, uint32_t ref, size_t best)
{
    char label[64], miss[512], extra[512];
    ps_label(p, label, sizeof label);
    if (p->defects & PS_D_TRUNCATED)
        dg_add(&L->warn, "%s:%zu: the log ends inside pass %s (no arena_h2d): truncated pass%s%s", L->path,
               p->first_line, label, L->opt.records_join ? "; " : " ", ps_fate(L, p, "excluded", "drawn without it"));
    if (p->defects & PS_D_MISSING_CLOSE)
        dg_add(&L->warn, "%s:%zu: pass %s has no arena_h2d (its closing segment); %s", L->path, p->first_line, label,
               ps_fate(L, p, "excluded", "drawn without it"));
    if (p->defects & PS_D_NO_ORCH)
        dg_add(&L->warn, "%s:%zu: pass %s has no host_orch (no control-plane total without it); %s", L->path,
               p->first_line, label, ps_fate(L, p, "excluded", "drawn without it"));
    if (p->defects & PS_D_ORCH_ONLY)
        dg_add(&L->warn, "%s:%zu: pass %s has host-orch lines and no bind lines; %s", L->path, p->first_line, label,
               ps_fate(L, p, "excluded", "drawn"));
    if (p->defects & PS_D_NO_PID)
        dg_add(&L->warn,
               "%s:%zu: pass %s has no pid (no chip.run.bind span), and its thread carries the passes of "
               "several pids, any one's it could be; %s",
               L->path, p->first_line, label, ps_fate(L, p, "excluded", "drawn"));
    if (p->defects & PS_D_LONG)
        dg_add(&L->warn, "%s:%zu: pass %s has a control-plane sum of 2^62 ns (146 years) or more: no measurement; %s",
               L->path, p->first_line, label, ps_fate(L, p, "excluded", "drawn"));
    if (p->defects & PS_D_DUPLICATE) {
        size_t l1 = p->dup_first_line;
        size_t l2 = p->dup_line;
        if (p->dup_seg >= 0)
            dg_add(&L->warn, "%s:%zu: segment %s appears twice in pass %s (first at line %zu); %s", L->path, l2,
                   L->segname[p->dup_seg], label, l1, ps_fate(L, p, "excluded", "drawn from the first"));
        else
            dg_add(&L->warn, "%s:%zu: host-orch %s appears twice in pass %s (first at line %zu); %s", L->path, l2,
                   ps_op_name(-1 - p->dup_seg), label, l1, ps_fate(L, p, "excluded", "drawn"));
    }
    if (p->defects & PS_D_DROPPED)
        dg_add(&L->warn, "%s:%zu: host-orch %s dropped=%" PRIu64 " in pass %s (the per-op record pool overflowed); %s",
               L->path, (size_t)p->drop_line, ps_op_name(p->drop_op), p->drop_count, label,
               ps_fate(L, p, "excluded", "drawn"));
    /* a truncated pass's cut last line is the truncation itself */
    if ((p->defects & (PS_D_IGNORED | PS_D_TRUNCATED)) == PS_D_IGNORED)
        dg_add(&L->warn, "%s:%zu: pass %s has a malformed line%s (line %" PRIu32 "); %s", L->path, p->first_line, label,
               L->opt.draws ? "" : " that was ignored", p->ignored_line, ps_fate(L, p, "excluded", "drawn without it"));
    if (p->defects & PS_D_SETDIFF) {
        ps_seg_list(L, ref & ~p->present, miss, sizeof miss);
        ps_seg_list(L, p->present & ~ref, extra, sizeof extra);
        char others[64] = "the other pass"; /* not "the other 1 passes" */
        if (best != 1)
            snprintf(others, sizeof others, "the other %zu passes", best);
        dg_add(&L->warn, "%s:%zu: pass %s has other segments than %s (missing: %s; extra: %s); %s", L->path,
               p->first_line, label, others, miss[0] ? miss : "none", extra[0] ? extra : "none",
               ps_fate(L, p, "excluded", "drawn as it is"));
    }
}

void ps_analyse(ps_log *L)
{
    /* Three walks over the passes in all: the array is large and each walk
     * costs a cache miss per pass. */
    bool unnamed = false;
    for (size_t i = 0; i < L->npass && !unnamed; i++)
        unnamed = !L->pass[i].has_pid;
    if (unnamed && !inherit_pids(L)) {
        L->oom = true;
        return;
    }
    size_t *last = NULL;
    if (!assign_ranks(L, &last))
        return;
    uint32_t ref;
    size_t best;
    bool ok = reference_set(L, last, &ref, &best);
    free(last);
    if (!ok)
        return;
    for (size_t i = 0; i < L->npass; i++) {
        ps_pass *p = &L->pass[i];
        if (!p->defects && (!p->cold || L->opt.keep_first) && p->present != ref)
            p->defects |= PS_D_SETDIFF;
        warn_defects(L, p, ref, best);
        if (p->cold)
            L->ncold++;
        else
            L->nwarm++;
        p->used = !p->defects && (!p->cold || L->opt.keep_first);
        if (p->used)
            L->nused++;
    }
}

const char *ps_all_passes(size_t n, const char *kind, char *buf, size_t cap)
{
    if (n == 1) /* "all 1 warm passes were" */
        snprintf(buf, cap, "the one %spass was", kind);
    else
        snprintf(buf, cap, "all %zu %spasses were", n, kind);
    return buf;
}

void ps_exclusions(const ps_log *L, char *out, size_t n)
{
    static const char *const why[PS_NDEFECTS] = {"without arena_h2d",    "truncated",
                                                 "with a segment twice", "with dropped records",
                                                 "with other segments",  "with an ignored line",
                                                 "without host_orch",    "with a sum of 2^62 ns or more",
                                                 "of no one pid",        "without bind lines"};
    size_t count[PS_NDEFECTS] = {0};
    for (size_t i = 0; i < L->npass; i++) {
        const ps_pass *p = &L->pass[i];
        if (p->used || (p->cold && !L->opt.keep_first))
            continue;
        for (int d = 0; d < PS_NDEFECTS; d++)
            count[d] += (p->defects >> d) & 1;
    }
    size_t k = 0;
    out[0] = 0;
    for (int d = 0; d < PS_NDEFECTS && k < n; d++)
        if (count[d])
            k += (size_t)snprintf(out + k, n - k, "%s%zu %s", k ? ", " : "", count[d], why[d]);
}
