/* The A/B comparison: loading, the comparability checks, the per-repetition
 * rows, the verdict and its flags. Output is the command's (cmd_compare.c). */
#include "tools/compare.h"
#include "tools/diag.h"
#include "util/printable.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/stampdiff.h"
#include "tools/text.h"

const char *cp_verdict_name(cp_verdict v)
{
    switch (v) {
    case CP_SLOWER: return "slower";
    case CP_FASTER: return "faster";
    case CP_CONTENDED: return "contended \xe2\x80\x94 rerun";
    default: return "no difference";
    }
}

const char *cp_verdict_key(cp_verdict v)
{
    switch (v) {
    case CP_SLOWER: return "slower";
    case CP_FASTER: return "faster";
    case CP_CONTENDED: return "contended";
    default: return "no_difference";
    }
}

static hbg_status refuse(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static hbg_status refuse(char *err, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
    dg_sanitize(err); /* one line, whatever the paths it quotes hold */
    return HBG_E_INVAL;
}

/* --- one log ------------------------------------------------------------ */

static int seg_by_name(const ps_log *L, const char *name)
{
    for (int s = 0; s < L->nseg; s++)
        if (strcmp(L->segname[s], name) == 0)
            return s;
    return -1;
}

/* The segments of the used passes (they all share one set: passes_defects.c
 * excludes a pass whose set differs from the reference). */
static uint32_t used_set(const phs_result *R)
{
    uint32_t m = 0;
    for (int r = 0; r < R->nrow; r++)
        m |= 1u << R->row_seg[r];
    return m;
}

const char *cp_incomplete(const ps_log *L, char *buf, size_t n)
{
    /* keep_first is off: a warm pass is used unless a defect excludes it.
     * Only the passes of the run the count is of: in logs put together,
     * another run's are none of them. */
    size_t excluded = ps_run_excluded(L, L->incomplete_run);
    if (excluded)
        snprintf(buf, n, "%s (%zu excluded for defects)", L->incomplete, excluded);
    else
        snprintf(buf, n, "%s", L->incomplete);
    return buf;
}

static hbg_status load_log(cp_log *g, const char *arg, const cp_options *o, char *err, size_t n)
{
    char why[512];
    int fd = tx_open_log(arg, &g->path, why, sizeof why);
    if (fd < 0)
        return refuse(err, n, "%s", why);
    ps_options po = {.keep_first = false};
    hbg_status st = ps_read_fd(&g->L, g->path, fd, &po, why, sizeof why);
    close(fd);
    g->loaded = true;
    if (st == HBG_E_NOMEM)
        return st;
    if (st != HBG_OK)
        return refuse(err, n, "%s", why);
    ps_log *L = &g->L;
    if (L->stamp_conflict) {
        char mixed[PATH_MAX + 160];
        return refuse(err, n, "%s", ps_mixed_runs(L, g->path, mixed, sizeof mixed));
    }
    if (!L->has_stamp && L->empty_stamp_line && !o->allow_unstamped)
        return refuse(err, n,
                      "%s:%zu: its [stamp] line is empty, so nothing records its command and commit; pass "
                      "--allow-unstamped to compare it anyway",
                      g->path, L->empty_stamp_line);
    if (!L->has_stamp && !o->allow_unstamped)
        return refuse(err, n,
                      "%s has no [stamp] line, so nothing records its command and commit; pass --allow-unstamped "
                      "to compare it anyway",
                      g->path);
    /* A run cut short is not the run its stamp names: its minimum is over
     * fewer passes, and a verdict on it would pass for one on the whole. */
    if (L->incomplete_line && !o->allow_incomplete) {
        char why[sizeof L->incomplete + 64];
        return refuse(err, n, "%s:%zu: this log is incomplete: %s; pass --allow-incomplete to compare it anyway",
                      g->path, L->incomplete_line, cp_incomplete(L, why, sizeof why));
    }
    if (L->nbind == 0) {
        char why[320];
        return refuse(err, n, "%s%s", g->path, ps_no_bind_why(L, why, sizeof why));
    }
    if (L->nwarm == 0)
        return refuse(err, n,
                      "%s has no warm pass: every pass is its rank's cold first pass (run at least 2 rounds, 6 "
                      "recommended)",
                      g->path);
    if (L->nused == 0) {
        char all[64];
        return refuse(err, n, "%s: %s excluded for defects (see the warnings)", g->path,
                      ps_all_passes(L->nwarm, "warm ", all, sizeof all));
    }
    /* medians are kept doubled (exact halves): every duration and every
     * used pass's sum is below LX_DUR_LIMIT_NS (2^62), so doubled it
     * fits; a line or pass past it was refused or excluded */
    st = phs_compute(L, &g->R, NULL);
    if (st != HBG_OK)
        return st;
    int cs = seg_by_name(L, o->control);
    if (cs < 0 || !(used_set(&g->R) & (1u << cs))) {
        char names[512];
        ps_seg_list(L, used_set(&g->R), names, sizeof names);
        return refuse(err, n, "%s: the control segment '%s' is not in its passes (they have: %s); name another "
                              "with --control",
                      g->path, o->control, names);
    }
    g->sums = malloc(L->nused * sizeof *g->sums);
    g->ctl = malloc(L->nused * sizeof *g->ctl);
    if (!g->sums || !g->ctl)
        return HBG_E_NOMEM;
    g->nsums = phs_values(L, PHS_TOTAL, g->sums);
    g->nctl = phs_values(L, cs, g->ctl);
    if (L->has_stamp) {
        size_t b = 0, k;
        while (b < L->stamp.n && (L->stamp.p[b] == ' ' || L->stamp.p[b] == '\t'))
            b++;
        for (k = b; k < L->stamp.n && L->stamp.p[k] != ' ' && L->stamp.p[k] != '\t'; k++)
            ;
        /* the commit heads the verdict's lines: a C1 control (CSI as C2 9B
         * or a bare 9B) is one too, and a byte that starts no character
         * would make them no UTF-8 */
        const char *flaw = hbg__text_flaw(L->stamp.p + b, k - b, NULL);
        if (flaw)
            return refuse(err, n, "%s:%zu: the stamp's commit has %s", g->path, L->stamp_line, flaw);
        if (k - b + 1 > sizeof g->commit)
            return refuse(err, n, "%s:%zu: the stamp's commit is %zu bytes long (at most %zu)", g->path,
                          L->stamp_line, k - b, sizeof g->commit - 1);
        memcpy(g->commit, L->stamp.p + b, k - b);
        g->commit[k - b] = 0;
    }
    return HBG_OK;
}

/* Is log g comparable with the reference log f? */
static hbg_status check_pair(const cp_log *f, const cp_log *g, char *err, size_t n)
{
    if (f->L.has_stamp && g->L.has_stamp) {
        char d[768];
        if (sd_differ(f->L.stamp.p, f->L.stamp.n, g->L.stamp.p, g->L.stamp.n, f->path, g->path, d, sizeof d))
            return refuse(err, n, "%s and %s: their stamps differ in more than the commit: %s; both arms must be "
                                  "measured the same way",
                          f->path, g->path, d);
    }
    if (f->L.nrank != g->L.nrank)
        return refuse(err, n, "%s and %s: different rank counts: %zu and %zu", f->path, g->path, f->L.nrank,
                      g->L.nrank);
    uint32_t mf = used_set(&f->R), mg = used_set(&g->R);
    for (int s = 0; s < f->L.nseg; s++)
        if ((mf >> s) & 1 && (seg_by_name(&g->L, f->L.segname[s]) < 0 ||
                              !((mg >> seg_by_name(&g->L, f->L.segname[s])) & 1)))
            return refuse(err, n, "%s and %s: different segment sets: %s is in the passes of %s, not of %s", f->path,
                          g->path, f->L.segname[s], f->path, g->path);
    for (int s = 0; s < g->L.nseg; s++)
        if ((mg >> s) & 1 && (seg_by_name(&f->L, g->L.segname[s]) < 0 ||
                              !((mf >> seg_by_name(&f->L, g->L.segname[s])) & 1)))
            return refuse(err, n, "%s and %s: different segment sets: %s is in the passes of %s, not of %s", f->path,
                          g->path, g->L.segname[s], g->path, f->path);
    return HBG_OK;
}

/* The first stamped log of an arm (the reference its others are checked
 * against), or the first log when none is stamped. An unstamped reference
 * would check no stamp: with --allow-unstamped, an unstamped repetition 1
 * let the arm's other logs mix commits and commands, and the same logs in
 * another order were refused. */
static size_t arm_ref(const cp_rep *rep, size_t nrep, bool base)
{
    for (size_t i = 0; i < nrep; i++)
        if ((base ? &rep[i].base : &rep[i].measure)->L.has_stamp)
            return i;
    return 0;
}

/* Every stamped log of one arm is of one commit. */
static hbg_status check_arm(const cp_rep *rep, size_t nrep, bool base, char *err, size_t n)
{
    size_t r = arm_ref(rep, nrep, base);
    const cp_log *f = base ? &rep[r].base : &rep[r].measure;
    for (size_t i = r + 1; i < nrep; i++) {
        const cp_log *g = base ? &rep[i].base : &rep[i].measure;
        if (f->L.has_stamp && g->L.has_stamp && strcmp(f->commit, g->commit) != 0)
            return refuse(err, n, "%s and %s: the %s arm mixes two commits: %s and %s", f->path, g->path,
                          base ? "base" : "measure", f->commit, g->commit);
    }
    return HBG_OK;
}

/* --- rows ----------------------------------------------------------------- */

static void fill_rows(cp_rep *r, const char *control)
{
    const cp_log *b = &r->base, *m = &r->measure;
    cp_row *t = &r->row[0];
    *t = (cp_row){"total", true, false, b->R.total.min, m->R.total.min, b->R.total.max, m->R.total.max,
                  b->R.total.med, m->R.total.med};
    r->nrow = 1;
    for (int i = 0; i < b->R.nrow; i++) {
        int s = b->R.row_seg[i];
        const char *name = b->L.segname[s];
        int ms = seg_by_name(&m->L, name);
        const phs_stat *y = NULL;
        for (int j = 0; j < m->R.nrow; j++)
            if (m->R.row_seg[j] == ms)
                y = &m->R.row[j];
        const phs_stat *x = &b->R.row[i];
        if (!y)
            continue;   /* refused before: the sets agree */
        r->row[r->nrow++] = (cp_row){name, (PS_CONTROL_MASK >> s) & 1, strcmp(name, control) == 0, x->min, y->min,
                                     x->max, y->max, x->med, y->med};
    }
    r->dmin = (int64_t)(t->mmin - t->bmin);
    uint64_t cb = UINT64_MAX, cm = UINT64_MAX;
    for (size_t i = 0; i < b->nctl; i++)
        cb = b->ctl[i] < cb ? b->ctl[i] : cb;
    for (size_t i = 0; i < m->nctl; i++)
        cm = m->ctl[i] < cm ? m->ctl[i] : cm;
    /* no share of a base of 0 ns: it was one of 1 ns, a control of 0 ns
     * against 9008 ns "+900800 %" (such a control is too short to be a
     * floor, so no verdict took it) */
    r->ctl_rel = cb ? ((double)cm - (double)cb) / (double)cb : NAN;
}

static int sgn64(int64_t v)
{
    return (v > 0) - (v < 0);
}

/* twice a median, so that halves stay exact */
static int64_t med2(phs_med m)
{
    return (int64_t)(2 * m.whole + (m.half ? 1 : 0));
}

/* --- flags ---------------------------------------------------------------- */

static void fig_text(const phs_fig *f, char *out, size_t n)
{
    if (!f->n)
        snprintf(out, n, "absent");
    else if (f->varies)
        snprintf(out, n, "varies %" PRIu64 "..%" PRIu64, f->min, f->max);
    else
        snprintf(out, n, "%" PRIu64, f->value);
}

/* Exact figures of one repetition whose values differ between the arms:
 * each is added once, with the repetitions it differs in. */
typedef struct exact_diff {
    char what[256];
    char reps[128];
} exact_diff;

static void note_exact(exact_diff *d, size_t *nd, size_t cap, const char *name, const phs_fig *fb, const phs_fig *fm,
                       size_t rep)
{
    char vb[64], vm[64], what[256];
    fig_text(fb, vb, sizeof vb);
    fig_text(fm, vm, sizeof vm);
    if (!strcmp(vb, vm))
        return;
    snprintf(what, sizeof what, "%s: base %s, measure %s", name, vb, vm);
    size_t i = 0;
    while (i < *nd && strcmp(d[i].what, what) != 0)
        i++;
    if (i == *nd) {
        if (*nd == cap)
            return;
        snprintf(d[i].what, sizeof d[i].what, "%s", what);
        d[i].reps[0] = 0;
        (*nd)++;
    }
    size_t k = strlen(d[i].reps);
    snprintf(d[i].reps + k, sizeof d[i].reps - k, "%s%zu", k ? ", " : "", rep);
}

static void exact_flags(cp_result *R)
{
    enum { CAP = 64 };
    exact_diff *d = calloc(CAP, sizeof *d);
    if (!d)
        return;
    size_t nd = 0;
    char name[128];
    for (size_t i = 0; i < R->nrep; i++) {
        const cp_log *b = &R->rep[i].base, *m = &R->rep[i].measure;
        note_exact(d, &nd, CAP, "heap_used", &b->R.heap_used, &m->R.heap_used, i + 1);
        note_exact(d, &nd, CAP, "tasks", &b->R.tasks, &m->R.tasks, i + 1);
        for (int s = 0; s < b->L.nseg; s++) {
            int ms = seg_by_name(&m->L, b->L.segname[s]);
            static const phs_fig none;
            snprintf(name, sizeof name, "bytes= of %s", b->L.segname[s]);
            note_exact(d, &nd, CAP, name, &b->R.bytes[s], ms < 0 ? &none : &m->R.bytes[ms], i + 1);
        }
        for (int o = 0; o < PS_NOPS; o++) {
            snprintf(name, sizeof name, "host-orch %s count", ps_op_name(o));
            note_exact(d, &nd, CAP, name, &b->R.op_count[o], &m->R.op_count[o], i + 1);
        }
    }
    for (size_t i = 0; i < nd; i++)
        dg_add(&R->flags, "exact figure differs: %s (repetition%s %s): the arms did different work", d[i].what,
               strchr(d[i].reps, ',') ? "s" : "", d[i].reps);
    free(d);
}

static void row_flags(cp_result *R)
{
    char fl[48];
    if (R->hl.level < CP_CI_LEVEL - 1e-9)
        dg_add(&R->flags,
               "%zu base and %zu measure warm passes are too few for a %.0f %% interval of the effect: the one given "
               "is the whole range of their differences, which covers %.0f %%; measure more rounds",
               R->nbase, R->nmeasure, CP_CI_LEVEL * 100, floor(R->hl.level * 100));
    if (R->no_floor)
        dg_add(&R->flags,
               "the control %s is too short to witness noise (its minimum is %" PRIu64 " ns, under %d ns: a few "
               "clock reads); the noise floor would instead be the range of the repetitions' relative deltas, but "
               "one repetition's has none: there is no floor, and the control is not tested; name a longer "
               "untouched segment with --control",
               R->opt.control, R->ctl_min, CP_CONTROL_MIN_NS);
    else if (!R->ctl_resolves)
        dg_add(&R->flags,
               "the control %s is too short to witness noise (its minimum is %" PRIu64 " ns, under %d ns: a few "
               "clock reads); the noise floor is instead the range of the repetitions' relative deltas, %s %% "
               "(how far the comparison moved between repetitions), and the control is not tested; name a longer "
               "untouched segment with --control",
               R->opt.control, R->ctl_min, CP_CONTROL_MIN_NS, cp_floor(R->delta_range * 100, fl, sizeof fl));
    double effect = fabs(as_shift_est(&R->hl));
    for (size_t i = 0; i < R->nrep; i++) {
        const cp_rep *r = &R->rep[i];
        for (int k = 0; k < r->nrow; k++) {
            const cp_row *w = &r->row[k];
            int64_t dmin = (int64_t)(w->mmin - w->bmin), dmed2 = med2(w->mmed) - med2(w->bmed);
            int smin = sgn64(dmin), smed = sgn64(dmed2);
            /* the total is the decisive row: any disagreement shows; a
             * segment's only when both moves stand out of the noise, or
             * every jitter of a 20 ns segment would be a flag */
            double floor = R->noise_floor > 0.01 ? R->noise_floor : 0.01;
            bool stands = k == 0 || (fabs((double)dmin) > floor * (double)w->bmin &&
                                     fabs((double)dmed2 / 2) > floor * (double)w->bmed.whole);
            if (smin && smed && smin != smed && stands)
                dg_add(&R->flags,
                       "repetition %zu, %s: the minimum moves %s (%+" PRId64 " ns) but the median %s: read the "
                       "two together",
                       i + 1, w->name, smin > 0 ? "up" : "down", (int64_t)(w->mmin - w->bmin),
                       smed > 0 ? "up" : "down");
        }
        const cp_row *t = &r->row[0];
        int64_t wider = (int64_t)(t->mmax - t->mmin) - (int64_t)(t->bmax - t->bmin);
        if (t->mmin < t->bmin && (double)wider > effect)
            dg_add(&R->flags,
                   "repetition %zu: a lower minimum (%+" PRId64 " ns) with a wider range (max - min %+" PRId64
                   " ns, more than the effect): a cost too",
                   i + 1, (int64_t)(t->mmin - t->bmin), wider);
    }
    exact_flags(R);
}

/* --- the verdict ---------------------------------------------------------- */

static hbg_status pool(cp_result *R)
{
    size_t nb = 0, nm = 0, cb = 0, cm = 0;
    for (size_t i = 0; i < R->nrep; i++) {
        nb += R->rep[i].base.nsums;
        nm += R->rep[i].measure.nsums;
        cb += R->rep[i].base.nctl;
        cm += R->rep[i].measure.nctl;
    }
    R->all_base = malloc(nb * sizeof *R->all_base);
    R->all_measure = malloc(nm * sizeof *R->all_measure);
    uint64_t *ctl_b = malloc(cb * sizeof *ctl_b), *ctl_m = malloc(cm * sizeof *ctl_m);
    hbg_status st = HBG_E_NOMEM;
    if (!R->all_base || !R->all_measure || !ctl_b || !ctl_m)
        goto out;
    nb = nm = cb = cm = 0;
    for (size_t i = 0; i < R->nrep; i++) {
        const cp_log *b = &R->rep[i].base, *m = &R->rep[i].measure;
        memcpy(R->all_base + nb, b->sums, b->nsums * sizeof *b->sums);
        memcpy(R->all_measure + nm, m->sums, m->nsums * sizeof *m->sums);
        memcpy(ctl_b + cb, b->ctl, b->nctl * sizeof *b->ctl);
        memcpy(ctl_m + cm, m->ctl, m->nctl * sizeof *m->ctl);
        nb += b->nsums, nm += m->nsums, cb += b->nctl, cm += m->nctl;
    }
    R->nbase = nb, R->nmeasure = nm;
    st = as_mann_whitney(R->all_base, nb, R->all_measure, nm, &R->mwu);
    if (st == HBG_OK)
        st = as_hodges_lehmann(R->all_base, nb, R->all_measure, nm, CP_CI_LEVEL, &R->hl);
    if (st == HBG_OK)
        st = as_mann_whitney(ctl_b, cb, ctl_m, cm, &R->ctl);
out:
    free(ctl_b);
    free(ctl_m);
    return st;
}

/* The control's smallest duration; how far the same code's figure wanders
 * between repetitions of one arm (reported); and how far the comparison
 * itself moved between repetitions: the range of the total's relative
 * delta, the noise floor when the control is too short to be one. The
 * arms' own spread is no floor: a machine that slows down over the run
 * slows both arms of a repetition alike, which the interleaving cancels,
 * and a 6-of-6, -20 % effect was once called "no difference" inside the
 * 24 % of such a drift. The delta's range is paired as the control's
 * |relative delta| is: it holds what did not cancel. One repetition has
 * neither (NAN): an arm's one minimum has no spread and one delta no
 * range, and a 0 of either would read as no noise at all. Nor has an arm
 * whose minimum is 0 ns in some repetition a spread relative to it, and
 * the larger of the two arms' is then unknown (NAN, not the 0 it was). */
static void arm_spread(cp_result *R)
{
    R->ctl_min = UINT64_MAX;
    double spread = 0;
    for (int arm = 0; arm < 2; arm++) {
        uint64_t lo = UINT64_MAX, hi = 0;
        for (size_t i = 0; i < R->nrep; i++) {
            const cp_log *g = arm ? &R->rep[i].measure : &R->rep[i].base;
            uint64_t m = arm ? R->rep[i].row[0].mmin : R->rep[i].row[0].bmin;
            lo = m < lo ? m : lo;
            hi = m > hi ? m : hi;
            for (size_t k = 0; k < g->nctl; k++)
                R->ctl_min = g->ctl[k] < R->ctl_min ? g->ctl[k] : R->ctl_min;
        }
        double s = lo ? (double)hi / (double)lo - 1 : NAN;
        spread = isnan(s) || s > spread ? s : spread;
    }
    double rlo = 0, rhi = 0;
    R->spread = R->delta_range = NAN;
    if (R->nrep < 2)
        return;
    R->spread = spread;
    for (size_t i = 0; i < R->nrep; i++) {
        uint64_t b = R->rep[i].row[0].bmin;
        if (!b) /* no relative delta of a base of 0 ns: no such floor */
            return;
        double r = (double)R->rep[i].dmin / (double)b;
        rlo = i == 0 || r < rlo ? r : rlo;
        rhi = i == 0 || r > rhi ? r : rhi;
    }
    R->delta_range = rhi - rlo;
}

/* "repetitions 2 (-5 ns), 4 (-7 ns)" / "repetition 3 (-5 ns)" / "the one
 * repetition (-5 ns)" (of one repetition, whatever its sign): the first
 * CP_REPS_NAMED of those whose delta has sign `sign` (-1, 0 or 1), then
 * "and N more" for the others. Every named entry is whole: the list was
 * once written into a fixed buffer until it ran out, and 20 of 60
 * repetitions ended in "54 (-100" with 57 and 60 gone unsaid. */
static void rep_list(const cp_result *R, int sign, char *out, size_t n)
{
    size_t c = 0, named = 0;
    if (R->nrep == 1) { /* "repetition 1" says there are others to tell it from */
        snprintf(out, n, "the one repetition (%+" PRId64 " ns)", R->rep[0].dmin);
        return;
    }
    for (size_t i = 0; i < R->nrep; i++)
        if (sgn64(R->rep[i].dmin) == sign)
            c++;
    int w = snprintf(out, n, "repetition%s", c == 1 ? "" : "s");
    size_t k = w < 0 ? 0 : (size_t)w;
    for (size_t i = 0; i < R->nrep && named < CP_REPS_NAMED; i++) {
        if (sgn64(R->rep[i].dmin) != sign)
            continue;
        char e[64];
        w = snprintf(e, sizeof e, "%s %zu (%+" PRId64 " ns)", named ? "," : "", i + 1, R->rep[i].dmin);
        /* room for the entry and for the "and N more" that may follow it */
        if (w < 0 || k + (size_t)w + 32 >= n)
            break;
        memcpy(out + k, e, (size_t)w + 1);
        k += (size_t)w;
        named++;
    }
    if (named < c)
        snprintf(out + k, n - k, " and %zu more", c - named);
}

/* With fewer repetitions than the sign test needs to reach alpha (five
 * at 0.05), a verdict rests on a one-sample t-test of the repetitions'
 * deltas of the total's minimum (relative to each base minimum; in ns
 * when a base minimum is 0) instead: each repetition's arms run at levels
 * of their own that the pooled passes cannot see (the Mann-Whitney test
 * takes every pass for an independent draw), and with the range of two
 * deltas as the only floor, an A/A comparison of two repetitions at a 1 %
 * arm jitter was called slower or faster 11 % of the time, and of one
 * repetition 30 %. The t-test weighs the effect against the spread of
 * the repetitions themselves; one repetition has none, and backs no
 * verdict. */
static hbg_status reps_t_test(cp_result *R)
{
    double *x = malloc(R->nrep * sizeof *x);
    if (!x)
        return HBG_E_NOMEM;
    bool relative = true;
    for (size_t i = 0; i < R->nrep; i++)
        relative = relative && R->rep[i].row[0].bmin;
    for (size_t i = 0; i < R->nrep; i++)
        x[i] = relative ? (double)R->rep[i].dmin / (double)R->rep[i].row[0].bmin : (double)R->rep[i].dmin;
    as_t_test_zero(x, R->nrep, &R->rep_t, &R->rep_t_p);
    free(x);
    return HBG_OK;
}

size_t cp_reps_needed(double alpha)
{
    /* 2^-1075 rounds to 0, below any alpha > 0: the loop ends there */
    size_t n = 1;
    while (n < 1075 && ldexp(1.0, -(int)n) > alpha)
        n++;
    return n;
}

static void decide(cp_result *R)
{
    const cp_options *o = &R->opt;
    int es = as_shift_sign(&R->hl);
    R->direction = es ? es : R->mwu.p_greater < R->mwu.p_less ? 1 : -1;
    R->p = R->direction > 0 ? R->mwu.p_greater : R->mwu.p_less;
    R->significant = R->p < o->alpha;
    R->agree = R->disagree = 0;
    for (size_t i = 0; i < R->nrep; i++) {
        int s = sgn64(R->rep[i].dmin);
        R->agree += s == R->direction;
        R->disagree += s == -R->direction;
    }
    R->sign_p = as_sign_test(R->agree, R->nrep);
    R->sign_can_reach = R->nrep >= cp_reps_needed(o->alpha);
    R->reps_back = R->sign_can_reach || R->rep_t_p < o->alpha;
    R->noise_floor = 0;
    for (size_t i = 0; i < R->nrep; i++)
        if (fabs(R->rep[i].ctl_rel) > R->noise_floor)
            R->noise_floor = fabs(R->rep[i].ctl_rel);
    R->ctl_resolves = R->ctl_min >= CP_CONTROL_MIN_NS;
    R->ctl_significant = R->ctl_resolves && R->ctl.p_two < o->alpha;
    if (!R->ctl_resolves)
        R->noise_floor = R->delta_range;
    /* nothing for an effect to clear, which is not a floor of 0 that
     * every effect clears (one repetition backs a verdict at an alpha of
     * 0.5 or more) */
    R->no_floor = !R->ctl_resolves && R->nrep == 1;
    /* a base minimum of 0 ns has no percentages (NAN, printed n/a); any
     * shift from it is beyond a relative floor, and a lower bound above
     * 0 ns past any threshold */
    double base = (double)R->base_min;
    R->effect_pct = R->base_min ? as_shift_est(&R->hl) / base * 100 : NAN;
    R->lo_pct = R->base_min ? (double)R->hl.lo / base * 100 : NAN;
    R->hi_pct = R->base_min ? (double)R->hl.hi / base * 100 : NAN;
    R->beyond = !R->no_floor && (R->base_min ? fabs(R->effect_pct) > R->noise_floor * 100 : es != 0);
    if (R->ctl_significant)
        R->verdict = CP_CONTENDED;
    else if (R->significant && R->disagree > 0)
        R->verdict = CP_CONTENDED;
    /* a repetition whose delta is 0 neither disagrees nor backs the
     * effect: no verdict can rest on every repetition then */
    else if (R->significant && R->beyond && R->reps_back && R->agree == R->nrep)
        R->verdict = R->direction > 0 ? CP_SLOWER : CP_FASTER;
    else
        R->verdict = CP_NO_DIFFERENCE;
    R->regression = R->verdict == CP_SLOWER && (R->base_min ? R->lo_pct > o->threshold_pct : R->hl.lo > 0);
}

/* "%+.2f" (signed) or "%.2f", or "n/a" where there is no such figure (a
 * percentage of a base of 0 ns, NAN or infinite). 48 bytes hold any: an
 * int64 delta over a base of 1 ns is under 1e21 %. */
static const char *pct_text(double v, bool sign, char *b, size_t n)
{
    if (isfinite(v))
        snprintf(b, n, sign ? "%+.2f" : "%.2f", v);
    else
        snprintf(b, n, "n/a");
    return b;
}

const char *cp_pct(double v, char *b, size_t n)
{
    return pct_text(v, true, b, n);
}

const char *cp_floor(double v, char *b, size_t n)
{
    return pct_text(v, false, b, n);
}

const char *cp_shift_ns(const as_shift *s, bool sign, char *b, size_t n)
{
    /* from the floor and the half: -2.5 is a floor of -3 and a half, so a
     * negative half is printed from the floor's successor (never INT64_MIN:
     * a difference of values below 2^63 is above it) */
    int64_t w = s->est_whole;
    if (w >= 0)
        snprintf(b, n, "%s%" PRId64 "%s", sign ? "+" : "", w, s->est_half ? ".5" : "");
    else if (s->est_half)
        snprintf(b, n, "-%" PRId64 ".5", -(w + 1));
    else
        snprintf(b, n, "-%" PRId64, -w);
    return b;
}

/* "95 % CI", or, when the passes are too few for one, what the interval
 * (then the whole range of differences) really covers: a label that
 * claimed 95 % over 2 + 2 passes would overstate 67 %. */
static const char *ci_label(const cp_result *R, char *b, size_t n)
{
    if (R->hl.level >= CP_CI_LEVEL - 1e-9)
        snprintf(b, n, "%.0f %% CI", CP_CI_LEVEL * 100);
    else
        snprintf(b, n, "whole range, only a %.0f %% CI:", floor(R->hl.level * 100));
    return b;
}

/* "K of N repetitions agree", in the singular where a count is one: "1 of
 * 5 repetitions agrees", "the one repetition agrees" ("does not agree" of
 * none), not "1 of 1 repetitions agree". one and many: the verb after one
 * repetition and after more ("agrees", "agree"). Into b; returns it. */
static const char *reps_that(size_t k, size_t n, const char *one, const char *many, char *b, size_t cap)
{
    if (n == 1 && k)
        snprintf(b, cap, "the one repetition %s", one);
    else if (n == 1)
        snprintf(b, cap, "the one repetition does not %s", many);
    else
        snprintf(b, cap, "%zu of %zu repetitions %s", k, n, k == 1 ? one : many);
    return b;
}

/* Every repetition's delta is 0: "the one repetition shows no
 * difference", "both repetitions ...", "all 5 repetitions ...". Into b;
 * returns it. */
static const char *all_show_none(size_t n, char *b, size_t cap)
{
    if (n == 1)
        snprintf(b, cap, "the one repetition shows no difference");
    else if (n == 2)
        snprintf(b, cap, "both repetitions show no difference");
    else
        snprintf(b, cap, "all %zu repetitions show no difference", n);
    return b;
}

/* Whom the disagreeing repetitions of a contended verdict disagree with:
 * "the others" only when every other repetition has the effect's sign,
 * "the other" when that is one (of two repetitions, one disagrees with
 * the one other); one repetition has no others, and one whose delta is 0
 * has no sign. */
static const char *disagree_with(const cp_result *R)
{
    if (R->agree == 0 || R->agree + R->disagree < R->nrep)
        return "the effect";
    return R->agree == 1 ? "the other" : "the others";
}

/* What the repetitions' signs add under a "no difference" to the sign
 * test's count of those that agree: "; 2 of 5 repetitions disagree in
 * sign, 1 with no delta (expected under no effect)". That parenthesis is
 * for disagreements only: none of 5 disagreeing is not what no effect
 * leads one to expect, and when every repetition agrees there is
 * nothing to add. A count of one, two or all is said in words: "the one
 * repetition shows no difference", not "the one repetition does not
 * disagree in sign, 1 with no delta". Into b ("" when nothing); returns
 * it. */
static const char *rep_signs(const cp_result *R, char *b, size_t cap)
{
    size_t n = R->nrep, d = R->disagree, t = n - R->agree - R->disagree;
    char ties[48] = "", all[64];
    if (t)
        snprintf(ties, sizeof ties, ", %zu with no delta", t);
    if (d && n == 1)
        snprintf(b, cap, "; the one repetition disagrees in sign (expected under no effect)");
    else if (d)
        snprintf(b, cap, "; %zu of %zu repetitions disagree%s in sign%s (expected under no effect)", d, n,
                 d == 1 ? "s" : "", ties);
    else if (t == n)
        snprintf(b, cap, "; %s", all_show_none(n, all, sizeof all));
    else if (t)
        snprintf(b, cap, "; %zu of %zu repetitions show%s no delta", t, n, t == 1 ? "s" : "");
    else
        b[0] = '\0';
    return b;
}

static void verdict_line(cp_result *R)
{
    const cp_options *o = &R->opt;
    /* reps holds CP_REPS_NAMED entries of at most 48 bytes and the rest;
     * the line holds it with the effect and the words around them */
    char eff[256], sign[384], reps[64 + CP_REPS_NAMED * 48], ci[40];
    char pe[48], es[48];
    snprintf(eff, sizeof eff,
             "effect %s %% (%s ns; %s %+" PRId64 "..%+" PRId64 " ns) of the base minimum %" PRIu64 " ns",
             cp_pct(R->effect_pct, pe, sizeof pe), cp_shift_ns(&R->hl, true, es, sizeof es),
             ci_label(R, ci, sizeof ci), R->hl.lo, R->hl.hi, R->base_min);
    /* with every delta 0 there is no sign to agree: "0 of 5 repetitions
     * agree" read as if they disagreed */
    char agree[64];
    if (!R->agree && !R->disagree)
        snprintf(agree, sizeof agree, "no delta to sign");
    else
        reps_that(R->agree, R->nrep, "agrees", "agree", agree, sizeof agree);
    int sn = snprintf(sign, sizeof sign, "sign test p = %.4g (%s)", R->sign_p, agree);
    if (!R->sign_can_reach && sn > 0 && R->nrep > 1)
        snprintf(sign + sn, sizeof sign - (size_t)sn,
                 ", too few repetitions for it to reach alpha = %g; t-test of the repetitions' deltas two-sided "
                 "p = %.3g (t = %.3g, %zu df)",
                 o->alpha, R->rep_t_p, R->rep_t, R->nrep - 1);
    else if (!R->sign_can_reach && sn > 0)
        snprintf(sign + sn, sizeof sign - (size_t)sn,
                 ": one repetition is too few for it to reach alpha = %g and has no spread for a t-test", o->alpha);
    const char *mw = R->mwu.exact ? "exact" : "normal approximation";
    switch (R->verdict) {
    case CP_SLOWER:
    case CP_FASTER:
        snprintf(R->line, sizeof R->line, "%s: %s; Mann-Whitney one-sided p = %.3g (%s); %s",
                 cp_verdict_name(R->verdict), eff, R->p, mw, sign);
        break;
    case CP_CONTENDED:
        if (R->ctl_significant) {
            snprintf(R->line, sizeof R->line,
                     "%s: the control segment %s itself differs between the arms (Mann-Whitney two-sided p = %.3g, "
                     "noise floor %.2f %%): the arms were not measured on the same machine state; %s",
                     cp_verdict_name(R->verdict), o->control, R->ctl.p_two, R->noise_floor * 100, eff);
        } else {
            rep_list(R, -R->direction, reps, sizeof reps);
            snprintf(R->line, sizeof R->line,
                     "%s: the arms differ (Mann-Whitney one-sided p = %.3g, %s) but %s disagree%s in sign with %s: "
                     "the run was contended; %s",
                     cp_verdict_name(R->verdict), R->p, R->direction > 0 ? "slower" : "faster", reps,
                     R->disagree == 1 ? "s" : "", disagree_with(R), eff);
        }
        break;
    default: {
        char why[896], fl[48]; /* room for reps whole */
        bool ties_why = false; /* the repetitions with no delta are the reason given */
        if (!R->significant)
            snprintf(why, sizeof why, "the test does not clear alpha = %g (Mann-Whitney one-sided p = %.3g, %s)",
                     o->alpha, R->p, mw);
        else if (!R->beyond && !R->no_floor)
            snprintf(why, sizeof why, "the effect is inside the noise floor of %s %% (%s)",
                     cp_floor(R->noise_floor * 100, fl, sizeof fl),
                     !R->ctl_resolves ? "the range of the repetitions' relative deltas"
                     : R->nrep == 1   ? "the control's |relative delta| in the one repetition"
                                      : "the control's largest |relative delta|");
        else if (!R->reps_back && R->nrep > 1)
            snprintf(why, sizeof why,
                     "the repetitions' deltas do not clear alpha = %g by a t-test (two-sided p = %.3g), and %zu "
                     "repetitions are too few for the sign test: measure %zu or more",
                     o->alpha, R->rep_t_p, R->nrep, cp_reps_needed(o->alpha));
        else if (!R->reps_back)
            snprintf(why, sizeof why,
                     "one repetition cannot tell the effect from the levels its two arms happened to run at: "
                     "measure %zu or more",
                     cp_reps_needed(o->alpha));
        else if (!R->beyond) /* no_floor: an alpha that lets one repetition back a verdict */
            snprintf(why, sizeof why,
                     "the effect has no noise floor to clear: the control %s is too short to witness noise, and "
                     "one repetition's relative delta has no range to stand for it",
                     o->control);
        else {
            /* significant, beyond the floor, backed, none disagrees: a
             * repetition whose delta is 0 is what is left (decide); when
             * every one's is, "not every" would say some back it */
            rep_list(R, 0, reps, sizeof reps);
            ties_why = true;
            snprintf(why, sizeof why,
                     "the arms differ (Mann-Whitney one-sided p = %.3g, %s) but %s show%s no delta (the arms' "
                     "minima are equal there): %s",
                     R->p, R->direction > 0 ? "slower" : "faster", reps, R->agree + 1 == R->nrep ? "s" : "",
                     R->agree       ? "not every repetition backs the effect"
                     : R->nrep == 1 ? "the one repetition does not back the effect"
                                    : "no repetition backs the effect");
        }
        /* none disagrees where the ties are the reason, so the count of
         * signs would only say again which repetitions show no delta */
        char signs[128] = "";
        if (!ties_why)
            rep_signs(R, signs, sizeof signs);
        snprintf(R->line, sizeof R->line, "%s: %s; %s%s; %s", cp_verdict_name(R->verdict), why, eff, signs, sign);
    }
    }
}

/* The verdict in a few words, for a plot's title: the line itself wraps
 * to four lines at a figure's width. */
static void verdict_title(cp_result *R)
{
    const char *v = cp_verdict_name(R->verdict);
    char eff[160], ci[40], reps[64];
    char pe[48], pl[48], ph[48], es[48];
    /* the shift in ns beside its share: a share rounds to +0.00 % (a 1 ns
     * effect on 1000 s), or has no base to be a share of (a 0 ns minimum),
     * where the ns still say what moved */
    cp_shift_ns(&R->hl, true, es, sizeof es);
    if (!isnan(R->effect_pct))
        snprintf(eff, sizeof eff, "%s %% = %s ns (%s %s..%s %%)", cp_pct(R->effect_pct, pe, sizeof pe), es,
                 ci_label(R, ci, sizeof ci), cp_pct(R->lo_pct, pl, sizeof pl), cp_pct(R->hi_pct, ph, sizeof ph));
    else
        snprintf(eff, sizeof eff, "%s ns (%s %+" PRId64 "..%+" PRId64 " ns; no share of a 0 ns base)", es,
                 ci_label(R, ci, sizeof ci), R->hl.lo, R->hl.hi);
    if (R->verdict == CP_CONTENDED && R->ctl_significant)
        snprintf(R->title, sizeof R->title, "%s: the control %s moved (p = %.3g)", v, R->opt.control, R->ctl.p_two);
    else if (R->verdict == CP_CONTENDED)
        snprintf(R->title, sizeof R->title, "%s: %s; %s", v,
                 reps_that(R->disagree, R->nrep, "disagrees in sign", "disagree in sign", reps, sizeof reps), eff);
    else if (R->agree == 0 && R->disagree == 0)
        /* every delta is 0: "0 of 5 repetitions agree" (and "the one
         * repetition does not agree") reads as if they disagreed */
        snprintf(R->title, sizeof R->title, "%s: %s; Mann-Whitney p = %.3g; %s", v, eff, R->p,
                 all_show_none(R->nrep, reps, sizeof reps));
    else
        snprintf(R->title, sizeof R->title, "%s: %s; Mann-Whitney p = %.3g; %s", v, eff, R->p,
                 reps_that(R->agree, R->nrep, "agrees", "agree", reps, sizeof reps));
}

/* --- the whole ------------------------------------------------------------ */

static hbg_status load_all(cp_result *R, const char *const *base, const char *const *measure, char *err, size_t n)
{
    size_t stdin_uses = 0;
    for (size_t i = 0; i < R->nrep; i++)
        stdin_uses += (size_t)(!strcmp(base[i], "-") + !strcmp(measure[i], "-"));
    if (stdin_uses > 1)
        return refuse(err, n, "'-' (standard input) can stand for one log only");
    for (size_t i = 0; i < R->nrep; i++) {
        hbg_status st = load_log(&R->rep[i].base, base[i], &R->opt, err, n);
        if (st == HBG_OK)
            st = load_log(&R->rep[i].measure, measure[i], &R->opt, err, n);
        if (st != HBG_OK)
            return st;
        R->unstamped |= !R->rep[i].base.L.has_stamp || !R->rep[i].measure.L.has_stamp;
        R->nincomplete += (R->rep[i].base.L.incomplete_line != 0) + (R->rep[i].measure.L.incomplete_line != 0);
    }
    return HBG_OK;
}

static hbg_status check_all(cp_result *R, char *err, size_t n)
{
    /* each repetition's pair first: that is the comparison the user asked for */
    for (size_t i = 0; i < R->nrep; i++) {
        hbg_status st = check_pair(&R->rep[i].base, &R->rep[i].measure, err, n);
        if (st != HBG_OK)
            return st;
    }
    /* then every log against its arm's first stamped one, whatever the
     * order of the logs, and the two arms' references against each other:
     * no repetition may pair two stamped logs */
    size_t rb = arm_ref(R->rep, R->nrep, true), rm = arm_ref(R->rep, R->nrep, false);
    for (size_t i = 0; i < R->nrep; i++) {
        hbg_status st = i == rb ? HBG_OK : check_pair(&R->rep[rb].base, &R->rep[i].base, err, n);
        if (st == HBG_OK && i != rm)
            st = check_pair(&R->rep[rm].measure, &R->rep[i].measure, err, n);
        if (st != HBG_OK)
            return st;
    }
    if (rb != rm) {
        hbg_status st = check_pair(&R->rep[rb].base, &R->rep[rm].measure, err, n);
        if (st != HBG_OK)
            return st;
    }
    hbg_status st = check_arm(R->rep, R->nrep, true, err, n);
    return st != HBG_OK ? st : check_arm(R->rep, R->nrep, false, err, n);
}

hbg_status cp_run(cp_result *R, const char *const *base, const char *const *measure, size_t nrep,
                  const cp_options *opt, char *err, size_t errlen)
{
    memset(R, 0, sizeof *R);
    R->opt = *opt;
    dg_init(&R->flags, 0);
    err[0] = 0;
    if (nrep == 0)
        return refuse(err, errlen, "no repetitions: give at least one base and one measure log");
    R->rep = calloc(nrep, sizeof *R->rep);
    if (!R->rep)
        return HBG_E_NOMEM;
    R->nrep = nrep;
    hbg_status st = load_all(R, base, measure, err, errlen);
    if (st == HBG_OK)
        st = check_all(R, err, errlen);
    if (st != HBG_OK)
        return st;
    /* the arms' first stamped logs name the commits and the stamp (every
     * stamped log's, checked above) */
    const cp_log *b0 = &R->rep[arm_ref(R->rep, nrep, true)].base;
    const cp_log *m0 = &R->rep[arm_ref(R->rep, nrep, false)].measure;
    snprintf(R->base_commit, sizeof R->base_commit, "%s", b0->commit[0] ? b0->commit : "unstamped");
    snprintf(R->measure_commit, sizeof R->measure_commit, "%s", m0->commit[0] ? m0->commit : "unstamped");
    const cp_log *s0 = b0->L.has_stamp ? b0 : m0;
    R->stamp_measure = !b0->L.has_stamp;
    R->stamp_rep = arm_ref(R->rep, nrep, !R->stamp_measure);
    if (s0->L.has_stamp) {
        const char *sp = memchr(s0->L.stamp.p, ' ', s0->L.stamp.n);
        R->stamp_rest = sp ? sp + 1 : s0->L.stamp.p + s0->L.stamp.n;
        R->stamp_rest_len = s0->L.stamp.n - (size_t)(R->stamp_rest - s0->L.stamp.p);
    }
    R->ranks = (int)b0->L.nrank;
    R->base_min = R->measure_min = UINT64_MAX;
    for (size_t i = 0; i < nrep; i++) {
        fill_rows(&R->rep[i], opt->control);
        if (R->rep[i].row[0].bmin < R->base_min)
            R->base_min = R->rep[i].row[0].bmin;
        if (R->rep[i].row[0].mmin < R->measure_min)
            R->measure_min = R->rep[i].row[0].mmin;
    }
    arm_spread(R);
    if ((st = reps_t_test(R)) != HBG_OK)
        return st;
    st = pool(R);
    if (st != HBG_OK)
        return st == HBG_E_NOMEM ? st : refuse(err, errlen, "a per-pass sum is past 2^63 ns; refusing");
    /* the arms' own order statistics, for the table's header lines */
    uint64_t *tmp = malloc((R->nbase > R->nmeasure ? R->nbase : R->nmeasure) * sizeof *tmp);
    if (!tmp)
        return HBG_E_NOMEM;
    memcpy(tmp, R->all_base, R->nbase * sizeof *tmp);
    phs_stat_of(tmp, R->nbase, &R->base_tot);
    memcpy(tmp, R->all_measure, R->nmeasure * sizeof *tmp);
    phs_stat_of(tmp, R->nmeasure, &R->measure_tot);
    free(tmp);
    decide(R);
    verdict_line(R);
    verdict_title(R);
    row_flags(R);
    return HBG_OK;
}

static void log_free(cp_log *g)
{
    if (g->loaded)
        ps_free(&g->L);
    free(g->sums);
    free(g->ctl);
}

void cp_free(cp_result *R)
{
    for (size_t i = 0; R->rep && i < R->nrep; i++) {
        log_free(&R->rep[i].base);
        log_free(&R->rep[i].measure);
    }
    free(R->rep);
    free(R->all_base);
    free(R->all_measure);
    dg_free(&R->flags);
    memset(R, 0, sizeof *R);
}
