/* The cost model (see fit.h). */
#include "tools/fit.h"

#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/phstats.h"

const char *const fit_term_name[FIT_NTERMS] = {"fixed", "per task", "per recorded node", "per replay",
                                               "per boundary slot"};
const char *const fit_term_key[FIT_NTERMS] = {"fixed", "per_task", "per_node", "per_replay", "per_slot"};
const char *const fit_count_name[FIT_NTERMS] = {"", "tasks", "nodes", "replays", "slots"};

void fit_init(fit_data *d)
{
    memset(d, 0, sizeof *d);
    dg_init(&d->warn, 100);
}

void fit_free(fit_data *d)
{
    free(d->pt);
    dg_free(&d->warn);
    memset(d, 0, sizeof *d);
}

static hbg_status add_log(fit_data *d, const ps_log *L, uint32_t log, bool min_only);

hbg_status fit_add_log(fit_data *d, const ps_log *L, uint32_t log)
{
    return add_log(d, L, log, false);
}

hbg_status fit_add_log_min(fit_data *d, const ps_log *L, uint32_t log)
{
    return add_log(d, L, log, true);
}

typedef struct warm_at {
    int32_t rank;
    uint64_t key; /* inv=, or the place in the log of a pass without one */
    size_t i;
} warm_at;

static int by_rank_then_key(const void *a, const void *b)
{
    const warm_at *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->key < y->key ? -1 : x->key > y->key;
}

/* Which passes --skip-warm leaves out: each rank's first N warm passes,
 * used or not (counting only the passes the reader kept would, after a
 * pass excluded for a defect, skip the valid one after it too). First by
 * inv=, as the cold pass is (a log's passes out of order would otherwise
 * skip the wrong one, and fit hbg's journal pass); by their place in the
 * log where they have none. skip[i] for pass i; NULL when out of memory. */
static bool *skipped_passes(const ps_log *L, size_t n_skip)
{
    bool *skip = calloc(L->npass ? L->npass : 1, sizeof *skip);
    warm_at *w = malloc((L->npass ? L->npass : 1) * sizeof *w);
    if (!skip || !w) {
        free(skip);
        free(w);
        return NULL;
    }
    size_t n = 0;
    for (size_t i = 0; i < L->npass; i++)
        if (!L->pass[i].cold)
            w[n++] = (warm_at){L->pass[i].rank, L->pass[i].has_inv ? L->pass[i].inv : i, i};
    qsort(w, n, sizeof *w, by_rank_then_key);
    for (size_t j = 0, run = 0; j < n; j++) {
        run = j && w[j].rank == w[j - 1].rank ? run + 1 : 0;
        skip[w[j].i] = run < n_skip;
    }
    free(w);
    return skip;
}

static hbg_status add_log(fit_data *d, const ps_log *L, uint32_t log, bool min_only)
{
    size_t first = d->n;
    uint64_t *cost = malloc((L->nused ? L->nused : 1) * sizeof *cost);
    bool *skipped = d->skip_warm ? skipped_passes(L, d->skip_warm) : NULL;
    if (!cost || (d->skip_warm && !skipped)) {
        free(cost);
        free(skipped);
        return HBG_E_NOMEM;
    }
    size_t nc = phs_values(L, PHS_TOTAL, cost), k = 0;
    for (size_t i = 0; i < L->npass && k < nc; i++) {
        const ps_pass *p = &L->pass[i];
        /* Only a used pass that is skipped is counted as skipped: an
         * excluded one was never going to be fitted. */
        bool skip = skipped && skipped[i];
        if (!p->used)
            continue;
        uint64_t y = cost[k++];
        if (skip) {
            d->skipped++;
            continue;
        }
        char lab[64];
        ps_label(p, lab, sizeof lab);
        const char *miss = !p->has_tasks ? "no integer tasks= on its host_orch line"
                           : !(p->ops_present & (1u << PS_OP_RECORD_NODE) && p->ops_present & (1u << PS_OP_GRAPH_SUBMIT))
                               ? "no record_node and graph_submit host-orch lines"
                           : p->bad_slots ? "a slots= on its graph_upload line that is no integer"
                                          : NULL;
        if (miss) {
            dg_add(&d->warn, "%s:%zu: pass %s has %s (counts unknown); left out of the fit", L->path, p->first_line,
                   lab, miss);
            d->excluded++;
            continue;
        }
        uint64_t cnt[FIT_NTERMS] = {1, p->tasks, p->op_count[PS_OP_RECORD_NODE], p->op_count[PS_OP_GRAPH_SUBMIT],
                                    p->has_slots ? p->slots : 0};
        size_t cline[FIT_NTERMS] = {0, p->line[PS_HOST_ORCH], p->op_line[PS_OP_RECORD_NODE],
                                    p->op_line[PS_OP_GRAPH_SUBMIT], p->line[PS_GRAPH_UPLOAD]};
        int big = FIT_TASK;
        while (big < FIT_NTERMS && cnt[big] <= FIT_COUNT_MAX)
            big++;
        /* No program counts past 2^53 (9 x 10^15) of anything: such a
         * figure is corrupt, and as a double it would be rounded, two
         * different ones taken for the same. Named on its own line. */
        if (big < FIT_NTERMS) {
            static const char *const field[FIT_NTERMS] = {"", "tasks=", "host-orch record_node count=",
                                                          "host-orch graph_submit count=", "slots="};
            dg_add(&d->warn,
                   "%s:%zu: pass %s has %s%" PRIu64 ", above 2^53 (%" PRIu64 "): no count the fit can hold "
                   "exactly; left out of the fit",
                   L->path, cline[big], lab, field[big], cnt[big], FIT_COUNT_MAX);
            d->excluded++;
            continue;
        }
        /* Nor a cost: 2^53 ns is 104 days, and past it two costs a few
         * hundred ns apart are one double. */
        if (y > FIT_COUNT_MAX) {
            dg_add(&d->warn,
                   "%s:%zu: pass %s has a control plane of %" PRIu64 " ns, above 2^53 (%" PRIu64 " ns, 104 days): "
                   "no cost the fit can hold exactly; left out of the fit",
                   L->path, p->first_line, lab, y, FIT_COUNT_MAX);
            d->excluded++;
            continue;
        }
        if (d->n == d->cap) {
            size_t nc2 = d->cap ? d->cap * 2 : 64;
            fit_point *np = realloc(d->pt, nc2 * sizeof *np);
            if (!np) {
                free(cost);
                free(skipped);
                return HBG_E_NOMEM;
            }
            d->pt = np, d->cap = nc2;
        }
        fit_point *q = &d->pt[d->n++];
        memset(q, 0, sizeof *q);
        q->log = log;
        snprintf(q->label, sizeof q->label, "%s", lab);
        q->line = p->first_line;
        for (int c = 0; c < FIT_NTERMS; c++)
            q->count[c] = cnt[c];
        q->has_slots = p->has_slots;
        q->y = (double)y;
        /* one point per log: the new one replaces a dearer earlier one */
        if (min_only && d->n > first + 1) {
            if (q->y < d->pt[first].y)
                d->pt[first] = *q;
            d->n--;
        }
    }
    free(cost);
    free(skipped);
    return HBG_OK;
}

double fit_tq975(size_t df)
{
    static const double t[31] = {0,           12.70620474, 4.30265273, 3.18244631, 2.77644511, 2.57058184,
                                 2.44691185, 2.36462425,  2.30600414, 2.26215716, 2.22813885, 2.20098516,
                                 2.17881283, 2.16036866,  2.14478669, 2.13144955, 2.11990530, 2.10981558,
                                 2.10092204, 2.09302405,  2.08596345, 2.07961384, 2.07387307, 2.06865761,
                                 2.06389856, 2.05953855,  2.05552944, 2.05183052, 2.04840714, 2.04522964,
                                 2.04227246};
    if (df <= 30)
        return t[df ? df : 1];
    /* Cornish-Fisher: z plus a series in 1/df (Abramowitz & Stegun 26.7.5). */
    double z = 1.959963984540054, v = (double)df, z2 = z * z;
    double g1 = (z2 + 1) * z / 4;
    double g2 = ((5 * z2 + 16) * z2 + 3) * z / 96;
    double g3 = (((3 * z2 + 19) * z2 + 17) * z2 - 15) * z / 384;
    double g4 = ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) * z / 92160;
    return z + g1 / v + g2 / (v * v) + g3 / (v * v * v) + g4 / (v * v * v * v);
}

static double dot(const double *a, const double *b, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

/* Removes from v its components along the k orthonormal columns of q
 * (twice: one pass of modified Gram-Schmidt can leave a little behind),
 * accumulating them into r. */
static void orthogonalize(double *v, double *const *q, size_t k, size_t n, double *r)
{
    for (int pass = 0; pass < 2; pass++)
        for (size_t j = 0; j < k; j++) {
            double c = dot(q[j], v, n);
            if (r)
                r[j] += c;
            for (size_t i = 0; i < n; i++)
                v[i] -= c * q[j][i];
        }
}

/* Why column c cannot be fitted, or NULL: no variation, missing from a
 * log, or determined by the columns already taken (its remainder is
 * nothing next to its size). */
static const char *unidentifiable(const fit_data *d, int c, const double *rest, double norm0, char *buf, size_t cap)
{
    if (c == FIT_SLOT)
        for (size_t i = 0; i < d->n; i++)
            if (!d->pt[i].has_slots) {
                snprintf(buf, cap, "the logs do not carry it (graph_upload slots=, written by hbg only)");
                return buf;
            }
    /* on the counts as the log has them, not on their doubles */
    bool same = c != FIT_FIXED;
    for (size_t i = 1; i < d->n && same; i++)
        same = d->pt[i].count[c] == d->pt[0].count[c];
    if (same) {
        snprintf(buf, cap, "%s is %" PRIu64 " in every pass; vary it to fit this term", fit_count_name[c],
                 d->pt[0].count[c]);
        return buf;
    }
    if (sqrt(dot(rest, rest, d->n)) <= 1e-9 * norm0) {
        snprintf(buf, cap, "%s is determined by the other counts in every pass; vary it on its own to fit this term",
                 fit_count_name[c]);
        return buf;
    }
    return NULL;
}

typedef struct qr {
    size_t n, k;
    const double *w;          /* row weights (1, or 1 / cost with relative) */
    uint64_t off[FIT_NTERMS]; /* each count's smallest, taken off its column (0 for fixed) */
    double yoff;              /* the smallest cost, taken off every cost */
    int col[FIT_NTERMS];      /* term of each fitted column */
    double scale[FIT_NTERMS]; /* columns are divided by their largest value */
    double *q[FIT_NTERMS + 1];
    double r[FIT_NTERMS + 1][FIT_NTERMS + 1];
} qr;

/* The columns are fitted less their smallest count, and the costs less
 * the smallest cost: counts of 10^14 + 0..100 or costs of 2^52 + 0..100
 * ns as doubles would leave their spread, all the fit learns from, to the
 * last few bits, and the orthogonalisation against the fixed column would
 * take it apart in cancellation. Integers of at most 2^53 less a smaller
 * one: each difference exact. The fixed column absorbs the offsets, and
 * fit_solve gives them back to the fixed term. */
static void find_offsets(const fit_data *d, qr *Q)
{
    for (int c = FIT_TASK; c < FIT_NTERMS; c++) {
        Q->off[c] = d->pt[0].count[c];
        for (size_t i = 1; i < d->n; i++)
            Q->off[c] = d->pt[i].count[c] < Q->off[c] ? d->pt[i].count[c] : Q->off[c];
    }
    Q->yoff = d->pt[0].y;
    for (size_t i = 1; i < d->n; i++)
        Q->yoff = fmin(Q->yoff, d->pt[i].y);
}

/* Point i's count of term c less its offset, exactly. */
static double xs(const qr *Q, const fit_point *p, int c)
{
    return c == FIT_FIXED ? 1 : (double)(p->count[c] - Q->off[c]);
}

/* Takes each term whose column is identifiable, in order. */
static int build_qr(fit_data *d, qr *Q, fit_result *R)
{
    size_t n = d->n;
    for (int c = 0; c < FIT_NTERMS; c++) {
        double *v = calloc(n, sizeof *v);
        if (!v)
            return -1;
        double big = 0;
        for (size_t i = 0; i < n; i++)
            big = fmax(big, xs(Q, &d->pt[i], c));
        big = big > 0 ? big : 1;
        for (size_t i = 0; i < n; i++)
            v[i] = xs(Q, &d->pt[i], c) / big * Q->w[i];
        double norm0 = sqrt(dot(v, v, n)), rc[FIT_NTERMS + 1] = {0};
        orthogonalize(v, Q->q, Q->k, n, rc);
        const char *why = unidentifiable(d, c, v, norm0, R->term[c].why, sizeof R->term[c].why);
        if (why || norm0 == 0) {
            free(v);
            continue;
        }
        double rr = sqrt(dot(v, v, n));
        for (size_t i = 0; i < n; i++)
            v[i] /= rr;
        for (size_t j = 0; j < Q->k; j++)
            Q->r[j][Q->k] = rc[j];
        Q->r[Q->k][Q->k] = rr;
        Q->col[Q->k] = c;
        Q->scale[Q->k] = big;
        Q->q[Q->k++] = v;
        R->term[c].ident = true;
    }
    return 0;
}

/* The inverse of the k x k upper-triangular r, into ri. */
static void invert_upper(const qr *Q, double ri[FIT_NTERMS][FIT_NTERMS])
{
    size_t k = Q->k;
    memset(ri, 0, sizeof(double) * FIT_NTERMS * FIT_NTERMS);
    for (size_t j = 0; j < k; j++) {
        ri[j][j] = 1 / Q->r[j][j];
        for (size_t i = j; i-- > 0;) {
            double s = 0;
            for (size_t l = i + 1; l <= j; l++)
                s += Q->r[i][l] * ri[l][j];
            ri[i][j] = -s / Q->r[i][i];
        }
    }
}

/* Whether the fit leaves anything of the logs unexplained: a residual
 * of half a nanosecond or more. The costs are whole nanoseconds, so a fit
 * within half of one of every pass gives back each logged cost when
 * rounded; what is left is the fit's own rounding, whatever its size
 * next to the costs (a tolerance relative to them, 1e-18 of their
 * squares, passed over 10^4 ns of curvature in costs of 10^14). */
static bool left_to_explain(const fit_data *d)
{
    for (size_t i = 0; i < d->n; i++)
        if (fabs(d->pt[i].resid) >= 0.5)
            return true;
    return false;
}

/* Ramsey's RESET: does the square of the fitted cost explain what the
 * linear terms leave? A positive, significant coefficient means the cost
 * grows faster than the counts: residuals grow with size.
 * fs: the fitted costs less Q->yoff. Squared, they add to the columns
 * the same new direction the fitted costs would (the two differ by a
 * constant, which the fixed column holds), without the offset's size. */
static void reset_test(const fit_data *d, qr *Q, const double *y, const double *fs, double sse, fit_result *R)
{
    size_t n = d->n;
    if (R->df < 2 || !left_to_explain(d))
        return;
    double big = 0;
    for (size_t i = 0; i < n; i++)
        big = fmax(big, fabs(fs[i]));
    double *z = malloc(n * sizeof *z);
    if (!z || big == 0) {
        free(z);
        return;
    }
    for (size_t i = 0; i < n; i++)
        z[i] = (fs[i] / big) * (fs[i] / big) * Q->w[i];
    double norm0 = sqrt(dot(z, z, n));
    orthogonalize(z, Q->q, Q->k, n, NULL);
    double rz = sqrt(dot(z, z, n));
    if (norm0 > 0 && rz > 1e-9 * norm0) {
        double qy = dot(z, y, n) / rz; /* y's component along the new direction */
        double sse2 = sse - qy * qy;
        sse2 = sse2 > 0 ? sse2 : 0;
        double se = sqrt(sse2 / (double)(R->df - 1));
        R->reset_done = true;
        R->reset_t = se > 0 ? qy / se : (qy > 0 ? INFINITY : -INFINITY);
        R->superlinear = qy > 0 && R->reset_t > fit_tq975(R->df - 1);
    }
    free(z);
}

static void slope_of(const fit_data *d, fit_result *R)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    size_t m = 0;
    for (size_t i = 0; i < d->n; i++) {
        if (d->pt[i].fitted <= 0 || d->pt[i].y <= 0)
            return;
        double x = log(d->pt[i].fitted), y = log(d->pt[i].y);
        sx += x, sy += y, sxx += x * x, sxy += x * y, m++;
    }
    double var = sxx - sx * sx / (double)m;
    if (m < 2 || var <= 1e-12 * (sxx > 0 ? sxx : 1))
        return;
    R->has_slope = true;
    R->slope = (sxy - sx * sy / (double)m) / var;
}

/* The fitted cost of p less Q->yoff, from the coefficients b of the
 * scaled columns. */
static long double fitted_less_offset(const qr *Q, const long double *b, const fit_point *p)
{
    long double f = 0;
    for (size_t j = 0; j < Q->k; j++)
        f += b[j] / Q->scale[j] * xs(Q, p, Q->col[j]);
    return f;
}

/* Iterative refinement: the solve's own rounding leaves b some units in
 * the last place off, which the fixed term, recovered at counts of 10^14
 * from offsets, multiplies by as much. The residuals taken in long double
 * and solved for again take it back, into b held in long double: after
 * a round, the residuals are the long double's rounding of the fitted
 * costs (exact data at 9 x 10^13 tasks: the fixed term from 23 ns off to
 * 0.01 ns), and a second finds nothing more. r: n doubles of scratch. */
static void refine(const fit_data *d, const qr *Q, double ri[FIT_NTERMS][FIT_NTERMS], long double *b, double *r)
{
    for (int round = 0; round < 2; round++) {
        double qtr[FIT_NTERMS];
        for (size_t i = 0; i < d->n; i++)
            r[i] = (double)(((long double)(d->pt[i].y - Q->yoff) - fitted_less_offset(Q, b, &d->pt[i])) * Q->w[i]);
        for (size_t j = 0; j < Q->k; j++)
            qtr[j] = dot(Q->q[j], r, d->n);
        bool moved = false;
        for (size_t i = 0; i < Q->k; i++) {
            long double was = b[i];
            for (size_t j = i; j < Q->k; j++)
                b[i] += ri[i][j] * qtr[j];
            moved |= b[i] != was;
        }
        if (!moved)
            return;
    }
}

/* The fixed term for the counts as the logs have them: the constant
 * fitted to the offset columns, plus the cost's offset, less each term's
 * cost times its count's offset (in long double where there is one: the
 * terms may be far larger than their sum). Its standard error is that of
 * the same combination of the fitted coefficients, whose covariance is
 * sigma² ri riᵀ. */
static void fixed_term(const qr *Q, const long double *b, double ri[FIT_NTERMS][FIT_NTERMS], fit_result *R)
{
    double g[FIT_NTERMS] = {0}, v = 0;
    long double c = Q->yoff + b[0] / Q->scale[0];
    g[0] = 1 / Q->scale[0];
    for (size_t j = 1; j < Q->k; j++) {
        c -= b[j] / Q->scale[j] * (long double)Q->off[Q->col[j]];
        g[j] = -(double)Q->off[Q->col[j]] / Q->scale[j];
    }
    for (size_t l = 0; l < Q->k; l++) {
        double s = 0;
        for (size_t j = 0; j <= l; j++)
            s += ri[j][l] * g[j];
        v += s * s;
    }
    R->term[FIT_FIXED].coef = (double)c;
    R->term[FIT_FIXED].se = R->sigma * sqrt(v);
}

/* Whether every point costs the same. */
static bool same_costs(const fit_data *d)
{
    for (size_t i = 1; i < d->n; i++)
        if (d->pt[i].y != d->pt[0].y)
            return false;
    return true;
}

static int solve(fit_data *d, bool relative, const char *const *names, fit_result *R, char *err, size_t errlen,
                 bool confirm, ptrdiff_t *worst, double *worst_off);

/* The leverage of point i: how far the fit is pulled to it. */
static double leverage(const qr *Q, size_t i)
{
    double h = 0;
    for (size_t j = 0; j < Q->k; j++)
        h += Q->q[j][i] * Q->q[j][i];
    return h;
}

/* The pass the others predict worst: the largest residual over one less
 * its leverage h (the residual of a fit made without it, weighted as the
 * fit is). A pass alone at the largest size pulls the line to itself, so
 * its own residual is small and another's the largest; left out, it is
 * far off. A pass whose leverage is 1 (the only one to vary some count)
 * has no such residual, and is passed over; -1 when every pass is.
 * off: where there is one, its residual over the square root of one less
 * h, which is that of a fit made without it in units of the noise's own
 * standard deviation, as a pass it was fitted to would be. */
static ptrdiff_t least_predicted(const fit_data *d, const qr *Q, double *off)
{
    ptrdiff_t at = -1;
    double most = -1;
    for (size_t i = 0; i < d->n; i++) {
        double h = leverage(Q, i);
        if (1 - h <= 1e-9)
            continue;
        double e = fabs(d->pt[i].resid * Q->w[i]) / (1 - h);
        if (e > most)
            most = e, at = (ptrdiff_t)i, *off = e * sqrt(1 - h);
    }
    return at;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..m), which it sorts. */
static double median_of(double *v, size_t m)
{
    qsort(v, m, sizeof *v, by_value);
    return m % 2 ? v[m / 2] : (v[m / 2 - 1] + v[m / 2]) / 2;
}

/* 1.4826 x the median absolute deviation of the residuals of e, each
 * over its cost when per_cost: a standard deviation that a few passes
 * far off do not move. v: e->n doubles of scratch. */
static double robust_sd(const fit_data *e, bool per_cost, double *v)
{
    for (size_t i = 0; i < e->n; i++)
        v[i] = e->pt[i].resid / (per_cost ? e->pt[i].y : 1);
    double med = median_of(v, e->n);
    for (size_t i = 0; i < e->n; i++)
        v[i] = fabs(v[i] - med);
    return 1.4826 * median_of(v, e->n);
}

/* Whether a pass of this cost, off the fit of e (made without it) by off
 * (weighted as the fit is, in units of the noise: see least_predicted),
 * is an outlier by the passes' own scale: more than FIT_APART robust
 * standard deviations of their residuals off, both in nanoseconds and as
 * a share of the cost. A cost that curves leaves every pass off a line
 * by its place on the curve, none that far beyond the rest; a descheduled
 * pass is off by what the scheduler took, which the others do not share.
 * Both scales, since the noise of a pass grows with its cost: in
 * nanoseconds the many cheap passes of sizes spaced by decades make any
 * costly one look apart; as a share, the cheap ones of evenly spaced
 * sizes make a costly one look apart. Returns -1 out of memory. */
static int stands_apart(const fit_data *e, bool relative, double off, double cost)
{
    double *v = malloc(e->n * sizeof *v);
    if (!v)
        return -1;
    double share = relative ? off : off / cost;
    bool apart = off > FIT_APART * robust_sd(e, relative, v) && share > FIT_APART * robust_sd(e, true, v);
    free(v);
    return apart;
}

/* A pair of passes to test the verdict without, found together: the
 * two whose leaving out takes the most from the fit's (weighted) sum of
 * squares, the least-trimmed-squares fit of all passes but two. Two
 * descheduled passes side by side tilt the line between them and the
 * rest: then neither is the pass the others predict worst, and the fit
 * without one predicts its twin close to itself, so passes left out one
 * at a time miss the second. Found from the fit of every pass, with no
 * refit per pair: for the pair p, with H_pp the 2 x 2 block of the hat
 * matrix and r_p their residuals, the fit without both is off them by
 * d_p = (I - H_pp)^-1 r_p, which takes d_p . r_p from the sum, and
 * each d over the square root of its diagonal term of (I - H_pp)^-1 is
 * in units of the noise, as a pass fitted would be (see
 * least_predicted). Pairs the fit could not be made without (the only
 * two passes to vary some count) are passed over; none is left out when
 * the worst is every pass of one size (whole_size). Beyond FIT_PAIR_MAX
 * passes the search (n^2 / 2 pairs) is not made: two passes among that
 * many hardly move the line. */
typedef struct pass_pair {
    size_t at[2];  /* in d: the one the others predict worse first */
    double off[2]; /* how far the fit without both is from each, in noise */
    double cost[2];
} pass_pair;

static bool same_counts(const fit_point *a, const fit_point *b)
{
    return memcmp(a->count, b->count, sizeof a->count) == 0;
}

/* Whether passes i and j are every pass of one size (the same counts,
 * which no other pass has). Two that agree with each other and with no
 * other pass to tell them apart are that size's cost, not two outliers:
 * of four sizes of two passes each on a cost 20 % over its line at the
 * top, the smallest size's two stand apart from the line through the
 * other three, and left out as a pair they took the curve with them. */
static bool whole_size(const fit_data *d, size_t i, size_t j)
{
    if (!same_counts(&d->pt[i], &d->pt[j]))
        return false;
    for (size_t k = 0; k < d->n; k++)
        if (k != i && k != j && same_counts(&d->pt[k], &d->pt[i]))
            return false;
    return true;
}

static bool worst_pair(const fit_data *d, const qr *Q, pass_pair *P)
{
    if (d->n > FIT_PAIR_MAX)
        return false;
    double most = -1;
    for (size_t i = 0; i < d->n; i++) {
        double hii = leverage(Q, i), ri = d->pt[i].resid * Q->w[i];
        for (size_t j = i + 1; j < d->n; j++) {
            double hjj = leverage(Q, j), hij = 0, rj = d->pt[j].resid * Q->w[j];
            for (size_t c = 0; c < Q->k; c++)
                hij += Q->q[c][i] * Q->q[c][j];
            double det = (1 - hii) * (1 - hjj) - hij * hij;
            if (det <= 1e-9 || 1 - hii <= 1e-9 || 1 - hjj <= 1e-9)
                continue;
            double di = ((1 - hjj) * ri + hij * rj) / det, dj = (hij * ri + (1 - hii) * rj) / det;
            double taken = di * ri + dj * rj;
            if (taken <= most)
                continue;
            most = taken;
            /* the diagonal of (I - H_pp)^-1: (1 - hjj) / det, (1 - hii) / det */
            double oi = fabs(di) * sqrt(det / (1 - hjj)), oj = fabs(dj) * sqrt(det / (1 - hii));
            /* the one the others predict worse first, as the passes
             * left out one at a time are named */
            bool swap = fabs(rj) / (1 - hjj) > fabs(ri) / (1 - hii);
            *P = swap ? (pass_pair){{j, i}, {oj, oi}, {d->pt[j].y, d->pt[i].y}}
                      : (pass_pair){{i, j}, {oi, oj}, {d->pt[i].y, d->pt[j].y}};
        }
    }
    return most >= 0 && !whole_size(d, P->at[0], P->at[1]);
}

/* e: d without the passes drop[0..m) (e->pt holds d->n points), fitted
 * into R2. Returns solve's status. */
static int solve_without(const fit_data *d, const size_t *drop, size_t m, bool relative, fit_data *e, fit_result *R2)
{
    e->n = 0;
    for (size_t i = 0; i < d->n; i++) {
        bool left = false;
        for (size_t k = 0; k < m; k++)
            left |= drop[k] == i;
        if (!left)
            e->pt[e->n++] = d->pt[i];
    }
    char err[256];
    return solve(e, relative, NULL, R2, err, sizeof err, false, NULL, NULL);
}

/* Whether the verdict falls without the pair P: when the fit without
 * both, made with at least FIT_PAIR_DF degrees of freedom (relative,
 * or with more than one count: more than FIT_TRIM_DF), finds no curve,
 * and each of the two stands apart from it by the scale of the passes
 * left (stands_apart), jointly: the scale is that of the rest,
 * and each is measured against the fit its twin no longer tilts. A
 * cost that curves leaves the passes left out off the line through the
 * rest by the same curve as the rest: of eight evenly spaced sizes of a
 * square term, the line through six puts the two at one end 3.8 and 2.3
 * robust standard deviations off it, the two ends 2.3 each; both must
 * be beyond 5. Two passes descheduled side by side are off by what the
 * scheduler took, which the rest do not share. The t without the first
 * of the pair alone is found too, for the message. 1: it falls (R
 * names the pair as the passes left out); 0: it stands; -2 out of
 * memory. */
static int falls_without_pair(const fit_data *d, const pass_pair *P, bool relative, fit_result *R)
{
    fit_data e;
    memset(&e, 0, sizeof e);
    e.cap = d->n;
    e.pt = malloc(d->n * sizeof *e.pt);
    if (!e.pt)
        return -2;
    fit_result R2;
    int rc = solve_without(d, P->at, 2, relative, &e, &R2), falls = 0;
    /* relative, a share is the only scale (stands_apart): nothing keeps
     * the two ends of a curve from passing for a pair where the second
     * pass would not be left out. Nor with a second count fitted: the
     * fit of the rest bends to the curve with it, and the end it leaves
     * stands apart from the rest's smaller residuals */
    size_t df = relative || R2.k > 2 ? FIT_TRIM_DF + 1 : FIT_PAIR_DF;
    if (rc == 0 && R2.df >= df && !R2.superlinear) {
        falls = 1;
        for (int k = 0; k < 2 && falls == 1; k++)
            falls = stands_apart(&e, relative, P->off[k], P->cost[k]);
    }
    if (rc == -2)
        falls = -2;
    if (falls == 1) {
        double t2 = R2.reset_done ? R2.reset_t : NAN;
        rc = solve_without(d, P->at, 1, relative, &e, &R2);
        if (rc == -2)
            falls = -2;
        else {
            R->superlinear = false;
            R->reset_checked = 2;
            R->reset_pair = true;
            for (int k = 0; k < 2; k++)
                R->reset_pass[k] = P->at[k];
            R->reset_t_without[0] = rc == 0 && R2.reset_done ? R2.reset_t : NAN;
            R->reset_t_without[1] = t2;
        }
    }
    free(e.pt);
    return falls < 0 ? -2 : falls;
}

/* Whether the curvature the RESET test found holds without the passes
 * the others predict worst. One pass far above the line at the largest
 * size (one descheduled pass) squares into the new column and makes it
 * significant alone; a cost that grows faster than the counts shows in
 * the passes left. Two such passes, at the two largest sizes or the two
 * smallest, keep the curvature with either left out: each is alone at
 * its end once the other is gone. So the verdict stands only if the fit
 * without the worst pass (out, of d), tested again, finds it too, and
 * then the fit without that fit's worst pass as well (the second is
 * chosen from the first's fit: beside its twin, an outlier is predicted
 * close to itself), when that pass is an outlier (stands_apart) and
 * enough passes are left for the test to find a curve without it: on a
 * cost that curves, a second pass left out of a few takes the curve's
 * power, not an outlier. When too few passes are left to test without
 * the first, the verdict does not stand. When it still stands, it must
 * hold without the pair P as well, where P stands apart together
 * (falls_without_pair): passes left out one at a time miss two that
 * tilt the line together. Returns 0, or -2 out of memory. */
static int confirm_superlinear(const fit_data *d, ptrdiff_t out, const pass_pair *P, bool relative, fit_result *R)
{
    fit_data e;
    memset(&e, 0, sizeof e);
    e.n = e.cap = d->n;
    e.pt = malloc(e.n * sizeof *e.pt);
    size_t *at = malloc(e.n * sizeof *at); /* e's points' places in d */
    if (!e.pt || !at) {
        free(e.pt), free(at);
        return -2;
    }
    memcpy(e.pt, d->pt, e.n * sizeof *e.pt);
    for (size_t i = 0; i < e.n; i++)
        at[i] = i;
    int rc = 0;
    double off = 0; /* how far the fit without it is from out, in noise */
    for (size_t k = 0; k < FIT_TRIM && out >= 0 && R->superlinear; k++) {
        size_t o = (size_t)out, was = at[o];
        double cost = e.pt[o].y;
        e.n--;
        memmove(e.pt + o, e.pt + o + 1, (e.n - o) * sizeof *e.pt);
        memmove(at + o, at + o + 1, (e.n - o) * sizeof *at);
        fit_result R2;
        char err[256];
        double next_off = 0;
        rc = solve(&e, relative, NULL, &R2, err, sizeof err, false, &out, &next_off);
        if (rc == -2)
            break;
        if (k > 0) {
            /* a second pass is left out only when it is an outlier by the
             * scale of the passes left (the first was already the worst) */
            int apart = rc == 0 && R2.df > FIT_TRIM_DF ? stands_apart(&e, relative, off, cost) : 0;
            if (apart <= 0) {
                rc = apart < 0 ? -2 : 0;
                break;
            }
        }
        off = next_off;
        R->reset_pass[k] = was;
        R->reset_checked = k + 1;
        R->reset_t_without[k] = rc == 0 && R2.reset_done ? R2.reset_t : NAN;
        R->superlinear = rc == 0 && R2.superlinear;
        rc = 0;
    }
    free(e.pt);
    free(at);
    if (rc == 0 && R->superlinear && P)
        rc = falls_without_pair(d, P, relative, R) < 0 ? -2 : 0;
    return rc;
}

int fit_solve(fit_data *d, bool relative, const char *const *names, fit_result *R, char *err, size_t errlen)
{
    return solve(d, relative, names, R, err, errlen, true, NULL, NULL);
}

/* confirm: whether a super-linear verdict is to be tested again without
 * the passes the others predict worst (not within that test itself).
 * worst: where there is one, the pass the others predict worst when the
 * verdict is super-linear (-1 otherwise), for that test's next round;
 * worst_off: how far off it is (see least_predicted). */
static int solve(fit_data *d, bool relative, const char *const *names, fit_result *R, char *err, size_t errlen,
                 bool confirm, ptrdiff_t *worst, double *worst_off)
{
    if (worst)
        *worst = -1;
    memset(R, 0, sizeof *R);
    R->relative = relative;
    size_t n = d->n;
    qr Q;
    memset(&Q, 0, sizeof Q);
    Q.n = n;
    double *y = malloc((n ? n : 1) * sizeof *y), *w = malloc((n ? n : 1) * sizeof *w);
    double *fs = malloc((n ? n : 1) * sizeof *fs);
    int rc = -1;
    if (!y || !w || !fs) {
        snprintf(err, errlen, "out of memory");
        rc = -2;
        goto out;
    }
    /* Relative errors: each row divided by its cost, so a pass of 10 ms
     * weighs what one of 10 us does. */
    for (size_t i = 0; i < n; i++) {
        if (relative && d->pt[i].y <= 0) {
            snprintf(err, errlen,
                     "%s:%zu: pass %s has a control plane of 0 ns, and --relative divides each pass by its cost; "
                     "fit without --relative",
                     names && names[d->pt[i].log] ? dg_shown(names[d->pt[i].log]) : "LOG", d->pt[i].line, d->pt[i].label);
            goto out;
        }
        w[i] = relative ? 1 / d->pt[i].y : 1;
    }
    Q.w = w;
    if (n)
        find_offsets(d, &Q);
    if (n && build_qr(d, &Q, R)) {
        snprintf(err, errlen, "out of memory");
        rc = -2;
        goto out;
    }
    R->n = n, R->k = Q.k;
    if (n == 0) {
        if (d->skipped && !d->excluded)
            snprintf(err, errlen,
                     "no warm pass with counts in any log once --skip-warm %zu left out %zu; nothing to fit (lower "
                     "--skip-warm or give more rounds)",
                     d->skip_warm, d->skipped);
        else
            snprintf(err, errlen, "no warm pass with counts in any log; nothing to fit");
        goto out;
    }
    if (n <= Q.k) {
        snprintf(err, errlen,
                 "%zu warm pass%s cannot determine %zu coefficient%s with an interval; give more passes "
                 "(rounds) or more logs",
                 n, n == 1 ? "" : "es", Q.k, Q.k == 1 ? "" : "s");
        goto out;
    }
    R->df = n - Q.k;
    /* the mean R² is about is that of the fit made: weighted by w² (the
     * relative fit's), so R² measures what the fit minimised */
    double ybar = 0, wsum = 0; /* of the costs less Q.yoff, as y is */
    for (size_t i = 0; i < n; i++) {
        double ys = d->pt[i].y - Q.yoff;
        y[i] = ys * w[i], ybar += ys * w[i] * w[i], wsum += w[i] * w[i];
    }
    ybar /= wsum;
    long double b[FIT_NTERMS] = {0};
    double qty[FIT_NTERMS], ri[FIT_NTERMS][FIT_NTERMS];
    for (size_t j = 0; j < Q.k; j++)
        qty[j] = dot(Q.q[j], y, n);
    invert_upper(&Q, ri);
    for (size_t i = 0; i < Q.k; i++)
        for (size_t j = i; j < Q.k; j++)
            b[i] += ri[i][j] * qty[j];
    /* the fixed term alone is the (weighted) mean: taken as it is, not as
     * the rounding of a solve leaves it (2705.0000000000009 for 2705); its
     * column is all ones, scale 1, so the fitted values and the
     * coefficient below come out as Q.yoff + ybar exactly */
    bool mean_only = Q.k == 1 && Q.col[0] == FIT_FIXED;
    if (mean_only)
        b[0] = ybar * Q.scale[0];
    else
        refine(d, &Q, ri, b, fs);
    double sse = 0, sst = 0;
    for (size_t i = 0; i < n; i++) {
        fit_point *p = &d->pt[i];
        double ys = p->y - Q.yoff;
        long double f = fitted_less_offset(&Q, b, p);
        /* the residual of the offset cost: the difference of two costs
         * near 2^52 would keep a nanosecond at best */
        fs[i] = (double)f;
        p->fitted = (double)(Q.yoff + f);
        p->resid = (double)(ys - f);
        sse += p->resid * w[i] * p->resid * w[i];
        sst += (ys - ybar) * w[i] * (ys - ybar) * w[i];
        if (p->fitted < 0 && (!R->nneg++ || p->fitted < d->pt[R->most_neg].fitted))
            R->most_neg = i;
        if (fabs(p->resid * w[i]) > fabs(d->pt[R->worst].resid * w[R->worst]))
            R->worst = i;
    }
    R->sigma = sqrt(sse / (double)R->df);
    R->tq = fit_tq975(R->df);
    /* every pass costing the same leaves nothing to explain: 0/0. Decided
     * on the costs as the log has them (integers, exact as doubles): a
     * tolerance relative to the cost took passes of 2 s a nanosecond apart
     * for one cost */
    R->r2 = !same_costs(d) && sst > 0 ? 1 - sse / sst : NAN;
    /* with the fixed term in the model R² is 0 to 1; the mean alone
     * explains nothing, exactly (not 1e-16 either side of it) */
    if (mean_only && !isnan(R->r2))
        R->r2 = 0;
    else if (R->r2 < 0)
        R->r2 = 0;
    for (size_t j = 0; j < Q.k; j++) {
        double v = 0;
        for (size_t l = j; l < Q.k; l++)
            v += ri[j][l] * ri[j][l];
        fit_term *t = &R->term[Q.col[j]];
        t->coef = (double)(b[j] / Q.scale[j]);
        t->se = R->sigma * sqrt(v) / Q.scale[j];
    }
    fixed_term(&Q, b, ri, R);
    for (size_t j = 0; j < Q.k; j++) {
        fit_term *t = &R->term[Q.col[j]];
        t->lo = t->coef - R->tq * t->se;
        t->hi = t->coef + R->tq * t->se;
    }
    reset_test(d, &Q, y, fs, sse, R);
    slope_of(d, R);
    double off = 0;
    ptrdiff_t out = R->superlinear ? least_predicted(d, &Q, &off) : -1;
    if (worst)
        *worst = out, *worst_off = off;
    pass_pair P;
    bool pair = R->superlinear && confirm && worst_pair(d, &Q, &P);
    rc = R->superlinear && confirm ? confirm_superlinear(d, out, pair ? &P : NULL, relative, R) : 0;
    if (rc)
        snprintf(err, errlen, "out of memory");
out:
    for (size_t j = 0; j < Q.k; j++)
        free(Q.q[j]);
    free(y);
    free(w);
    free(fs);
    return rc;
}
