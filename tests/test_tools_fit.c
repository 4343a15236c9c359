/* hbg fit: coefficients recovered exactly from logs generated here with
 * known costs; intervals that shrink with more data; terms that cannot be
 * fitted named as such; the super-linear warning; the original runtime's
 * logs; the t quantile; bad input, each with its message and status. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "support/fault_support.h"
#include "support/tools_support.h"
#include "tools/fit.h"
#include "tools/fitplot.h"
#include "tools/phstats.h"

/* One configuration of a pass: its counts. */
typedef struct cfg {
    uint64_t tasks, nodes, replays, slots;
} cfg;

/* Known costs, ns. */
#define C_FIXED 5000.0
#define C_TASK 50.0
#define C_NODE 100.0
#define C_REPLAY 150.0
#define C_SLOT 2.0

typedef struct gen {
    double quad;        /* ns per task squared: a super-linear term */
    int noise;          /* +-noise ns, alternating by pass */
    int warm;           /* warm passes per log */
    bool original;      /* no slots= (the original runtime has none) */
    uint64_t spike;     /* ns added to the first warm pass (hbg's second pass writes its journal) */
    int zero_inv;       /* a pass whose control plane took 0 ns (0: none) */
    bool swap23;        /* passes inv=2 and inv=3 written the other way round */
    uint64_t base;      /* ns added to every cost */
    int64_t shift;      /* ns added to every cost, below zero too */
} gen;

static uint64_t cost_of(const cfg *c, const gen *g, int pass)
{
    double y = C_FIXED + C_TASK * (double)c->tasks + C_NODE * (double)c->nodes + C_REPLAY * (double)c->replays +
               C_SLOT * (double)c->slots + g->quad * (double)c->tasks * (double)c->tasks;
    int sign = (pass * 7 + (int)c->tasks) % 3 - 1; /* -1, 0, +1, deterministic */
    return (uint64_t)llround(y) + g->base + (uint64_t)g->shift + (uint64_t)(int64_t)(sign * g->noise);
}

/* A log of one rank in our grammar: a cold pass, then g->warm warm ones. */
static char *write_log(const cfg *c, const gen *g, int pid)
{
    size_t cap = 4096 * (size_t)(g->warm + 1), n = 0;
    char *b = malloc(cap);
    assert_non_null(b);
    n += (size_t)snprintf(b + n, cap - n, "[stamp] test env HBG_BIND_BREAKDOWN=1 hbg run synth --tasks %llu\n",
                          (unsigned long long)c->tasks);
    for (int at = 1; at <= g->warm + 1; at++) {
        int inv = g->swap23 && (at == 2 || at == 3) ? 5 - at : at;
        uint64_t y = inv == 1 ? 999999 : cost_of(c, g, inv) + (inv == 2 ? g->spike : 0);
        bool zero = inv == g->zero_inv;
        const char *pre = "[mono_ns=1][T0x1][TIMING] bind_trace_end: [bind_trace.c:24]";
        n += (size_t)snprintf(b + n, cap - n,
                              "%s bind phase=args start_ns=1 dur_ns=10 bytes=0 pid=%d inv=%d\n"
                              "%s bind phase=host_orch start_ns=2 dur_ns=%llu tasks=%llu heap_used=0 pid=%d inv=%d\n",
                              pre, pid, inv, pre, zero ? 0ull : (unsigned long long)(y - 300),
                              (unsigned long long)c->tasks, pid, inv);
        if (g->original)
            n += (size_t)snprintf(b + n, cap - n,
                                  "%s bind phase=graph_upload start_ns=3 dur_ns=100 defs=0 bytes=0 submissions=%llu "
                                  "pid=%d inv=%d\n",
                                  pre, (unsigned long long)c->replays, pid, inv);
        else
            n += (size_t)snprintf(b + n, cap - n,
                                  "%s bind phase=graph_upload start_ns=3 dur_ns=%d defs=0 bytes=0 submissions=%llu "
                                  "slots=%llu pid=%d inv=%d\n",
                                  pre, zero ? 0 : 100, (unsigned long long)c->replays, (unsigned long long)c->slots,
                                  pid, inv);
        n += (size_t)snprintf(b + n, cap - n, "%s bind phase=arena_h2d start_ns=4 dur_ns=%d bytes=0 pid=%d inv=%d\n",
                              pre, zero ? 0 : 200, pid, inv);
        const char *ops[5] = {"submit_task", "alloc_tensors", "record_node", "graph_submit", "build_definition"};
        uint64_t cnt[5] = {c->tasks, 1, c->nodes, c->replays, c->nodes ? 1 : 0};
        for (int k = 0; k < 5; k++)
            n += (size_t)snprintf(b + n, cap - n,
                                  "[mono_ns=1][T0x1][TIMING] bind_trace_end: [bind_trace.c:46] host-orch phase=%s "
                                  "total_ns=1 count=%llu detail_sum=0 dropped=0 pid=%d inv=%d\n",
                                  ops[k], (unsigned long long)cnt[k], pid, inv);
        assert_true(n < cap);
    }
    char *path = ts_temp_file(b, n, ".log");
    free(b);
    return path;
}

/* A design where every count varies on its own. */
static const cfg design[] = {
    {100, 0, 0, 0},        {1000, 0, 0, 0},     {10000, 0, 0, 0},   {100, 10, 5, 10},   {100, 100, 5, 40},
    {100, 1000, 50, 100},  {1000, 10, 500, 1000}, {5000, 400, 20, 2560}, {300, 50, 200, 200}, {20000, 7, 3, 3},
};
#define NDESIGN (sizeof design / sizeof design[0])

typedef struct logs {
    char *path[64];
    size_t n;
} logs;

static void make_logs(logs *L, const cfg *c, size_t n, const gen *g)
{
    L->n = n;
    for (size_t i = 0; i < n; i++)
        L->path[i] = write_log(&c[i], g, 1000 + (int)i);
}

static void drop_logs(logs *L)
{
    for (size_t i = 0; i < L->n; i++) {
        unlink(L->path[i]);
        free(L->path[i]);
    }
}

/* `hbg fit OPTS... LOGS...`: its exit status, stdout and stderr. */
static int run_fit(const logs *L, const char *o1, const char *o2, const char *o3, char **out, char **errs)
{
    const char *args[72] = {"fit"};
    size_t n = 1;
    const char *opt[3] = {o1, o2, o3};
    for (int k = 0; k < 3; k++)
        if (opt[k])
            args[n++] = opt[k];
    for (size_t i = 0; i < L->n; i++)
        args[n++] = L->path[i];
    args[n] = NULL;
    return ts_run_cli(args, out, errs);
}

/* Reads the logs as hbg fit does and fits them. */
static int fit_logs(const logs *L, bool relative, fit_data *d, fit_result *R, char *err, size_t errlen)
{
    fit_init(d);
    for (size_t i = 0; i < L->n; i++) {
        size_t len;
        char *buf = ts_slurp(L->path[i], &len);
        assert_non_null(buf);
        ps_log P;
        ps_options po = {0};
        assert_int_equal(ps_read(&P, L->path[i], buf, len, &po), HBG_OK);
        phs_result S;
        assert_int_equal(phs_compute(&P, &S, NULL), HBG_OK);
        assert_int_equal(fit_add_log(d, &P, (uint32_t)i), HBG_OK);
        ps_free(&P);
        free(buf);
    }
    return fit_solve(d, relative, (const char *const *)L->path, R, err, errlen);
}

/* Logs of configurations c made with g, read and fitted (which must work). */
static void fit_made(logs *L, const cfg *c, size_t n, const gen *g, fit_data *d, fit_result *R)
{
    char err[256];
    make_logs(L, c, n, g);
    if (fit_logs(L, false, d, R, err, sizeof err))
        fail_msg("fit: %s", err);
}

static void assert_near(double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol))
        fail_msg("%.12g is not %.12g (within %g)", got, want, tol);
}

static void test_exact_recovery(void **state)
{
    (void)state;
    gen g = {.warm = 3};
    logs L;
    fit_data d;
    fit_result R;
    fit_made(&L, design, NDESIGN, &g, &d, &R);
    assert_int_equal(d.n, NDESIGN * 3);
    assert_int_equal(R.k, 5);
    assert_int_equal(R.df, NDESIGN * 3 - 5);
    const double want[FIT_NTERMS] = {C_FIXED, C_TASK, C_NODE, C_REPLAY, C_SLOT};
    for (int c = 0; c < FIT_NTERMS; c++) {
        assert_true(R.term[c].ident);
        assert_near(R.term[c].coef, want[c], 1e-6 * want[c]);
        /* noise-free: the interval is the point */
        assert_near(R.term[c].lo, want[c], 1e-5 * want[c]);
        assert_near(R.term[c].hi, want[c], 1e-5 * want[c]);
    }
    assert_near(R.r2, 1.0, 1e-12);
    assert_false(R.superlinear);
    assert_true(R.has_slope);
    assert_near(R.slope, 1.0, 1e-9);
    fit_free(&d);

    /* the command: the same numbers in the table and in JSON */
    char *out, *errs;
    assert_int_equal(run_fit(&L, NULL, NULL, NULL, &out, &errs), 0);
    assert_true(ts_contains(out, "passes          30 warm passes from 10 logs\n"));
    assert_true(ts_contains(out, "per task                       50.000   [50.000, 50.000]\n"));
    assert_true(ts_contains(out, "per boundary slot               2.000   [2.000, 2.000]\n"));
    assert_true(ts_contains(out, "fixed                        5000.000   [5000.000, 5000.000]\n"));
    assert_true(ts_contains(out, "R\xC2\xB2              1.000000\n"));
    /* an exact fit's worst residual is a rounding's: a zero, with no sign */
    assert_true(ts_contains(out, "\nworst residual  +0.0 ns ("));
    assert_true(ts_contains(out, "; +0.00 %) at "));
    assert_string_equal(errs, "");
    free(out), free(errs);
    assert_int_equal(run_fit(&L, "--format", "json", NULL, &out, &errs), 0);
    assert_true(ts_contains(out, "\"per_node\": {\"identifiable\": true, \"ns\": 10"));
    assert_true(ts_contains(out, "\"passes\": 30, \"left_out\": 0"));
    assert_true(ts_contains(out, "\"superlinear\": null")); /* an exact fit leaves nothing to test */
    free(out), free(errs);
    drop_logs(&L);
}

/* Noise of +-40 ns: twelve warm passes a log give narrower intervals
 * than three, and both contain the true costs. */
static void test_intervals_shrink(void **state)
{
    (void)state;
    double width[2][FIT_NTERMS];
    for (int k = 0; k < 2; k++) {
        gen g = {.noise = 40, .warm = k ? 12 : 3};
        logs L;
        fit_data d;
        fit_result R;
        fit_made(&L, design, NDESIGN, &g, &d, &R);
        assert_true(R.sigma > 0);
        assert_true(R.r2 < 1.0 && R.r2 > 0.999999);
        const double want[FIT_NTERMS] = {C_FIXED, C_TASK, C_NODE, C_REPLAY, C_SLOT};
        for (int c = 0; c < FIT_NTERMS; c++) {
            assert_true(R.term[c].lo < R.term[c].hi);
            assert_true(R.term[c].lo <= want[c] && want[c] <= R.term[c].hi);
            width[k][c] = R.term[c].hi - R.term[c].lo;
        }
        fit_free(&d);
        drop_logs(&L);
    }
    for (int c = 0; c < FIT_NTERMS; c++)
        assert_true(width[1][c] < width[0][c]);
}

static void test_not_identifiable(void **state)
{
    (void)state;
    /* replays the same in every pass; slots = 8 x nodes */
    const cfg c[] = {{100, 10, 4, 80}, {1000, 20, 4, 160}, {300, 40, 4, 320}, {2000, 5, 4, 40}, {50, 70, 4, 560}};
    gen g = {.warm = 2};
    logs L;
    fit_data d;
    fit_result R;
    fit_made(&L, c, 5, &g, &d, &R);
    assert_true(R.term[FIT_TASK].ident && R.term[FIT_NODE].ident);
    assert_false(R.term[FIT_REPLAY].ident);
    assert_string_equal(R.term[FIT_REPLAY].why, "replays is 4 in every pass; vary it to fit this term");
    assert_false(R.term[FIT_SLOT].ident);
    assert_string_equal(R.term[FIT_SLOT].why,
                        "slots is determined by the other counts in every pass; vary it on its own to fit this term");
    assert_int_equal(R.k, 3);
    /* fixed absorbs the constant replays: 5000 + 4 x 150; nodes carry their slots: 100 + 8 x 2 */
    assert_near(R.term[FIT_FIXED].coef, C_FIXED + 4 * C_REPLAY, 1e-6);
    assert_near(R.term[FIT_NODE].coef, C_NODE + 8 * C_SLOT, 1e-6);
    fit_free(&d);
    char *out, *errs;
    assert_int_equal(run_fit(&L, NULL, NULL, NULL, &out, &errs), 0);
    assert_true(ts_contains(out, "per replay           not identifiable: replays is 4 in every pass; vary it to fit "
                                 "this term\n"));
    free(out), free(errs);
    drop_logs(&L);
}

/* Every pass of one size: the fixed term alone, which is the mean, taken
 * exactly (not 11760.000000000002), with an R² of exactly 0. */
static void test_mean_only(void **state)
{
    (void)state;
    const cfg c[] = {{100, 10, 4, 80}};
    gen g = {.warm = 3, .noise = 40}; /* -40, 0, +40 around 11760 */
    logs L;
    fit_data d;
    fit_result R;
    fit_made(&L, c, 1, &g, &d, &R);
    assert_int_equal(R.k, 1);
    assert_true(R.term[FIT_FIXED].coef == 11760.0);
    for (size_t i = 0; i < d.n; i++)
        assert_true(d.pt[i].fitted == 11760.0);
    assert_true(R.r2 == 0.0 && !signbit(R.r2));
    fit_free(&d);
    char *out, *errs;
    assert_int_equal(run_fit(&L, NULL, NULL, NULL, &out, &errs), 0);
    assert_true(ts_contains(out, "fixed                       11760.000   ["));
    assert_true(ts_contains(out, "\nR\xC2\xB2              0.000000\n"));
    assert_true(ts_contains(out, "worst residual  -40.0 ns (measured 11720, fitted 11760.0; -0.34 %) at "));
    free(out), free(errs);
    drop_logs(&L);
    /* no noise: nothing to explain, and a residual of zero has no sign */
    g.noise = 0;
    make_logs(&L, c, 1, &g);
    assert_int_equal(run_fit(&L, NULL, NULL, NULL, &out, &errs), 0);
    assert_true(ts_contains(out, "\nR\xC2\xB2              n/a (every pass costs the same: nothing to explain)\n"));
    assert_true(ts_contains(out, "worst residual  +0.0 ns (measured 11760, fitted 11760.0; +0.00 %) at "));
    free(out), free(errs);
    drop_logs(&L);
}

/* Passes of 2 s that differ by a nanosecond do not cost the same: R² is
 * 0 (the mean alone), not "n/a". Equal costs are decided on the costs as
 * the log has them: a tolerance relative to the cost (1e-9 of it, 2 ns
 * here) once took these for one cost. */
static void test_r2_of_costs_a_nanosecond_apart(void **state)
{
    (void)state;
    const cfg c[] = {{40000000, 0, 0, 0}}; /* 2,000,005,000 ns a pass */
    gen g = {.warm = 3, .noise = 1};
    logs L;
    fit_data d;
    fit_result R;
    fit_made(&L, c, 1, &g, &d, &R);
    assert_int_equal(R.k, 1);
    assert_true(R.r2 == 0.0 && !signbit(R.r2));
    fit_free(&d);
    char *out, *errs;
    assert_int_equal(run_fit(&L, NULL, NULL, NULL, &out, &errs), 0);
    assert_true(ts_contains(out, "\nR\xC2\xB2              0.000000\n"));
    free(out), free(errs);
    drop_logs(&L);
    /* two sizes 2 ns apart, no noise: the fit explains all of it */
    const cfg two[] = {{40000000, 0, 0, 0}, {40000000, 0, 0, 1}};
    g.noise = 0;
    make_logs(&L, two, 2, &g);
    assert_int_equal(run_fit(&L, NULL, NULL, NULL, &out, &errs), 0);
    assert_true(ts_contains(out, "per boundary slot               2.000   [2.000, 2.000]\n"));
    assert_true(ts_contains(out, "\nR\xC2\xB2              1.000000\n"));
    free(out), free(errs);
    drop_logs(&L);
}

/* Costs near 2^52 ns that differ by some 10^4 ns, or task counts of
 * 9 x 10^13 + 100 .. 20000: as doubles, the spread the fit learns from
 * is in their last few bits. Fitted less each column's smallest count and
 * the smallest cost, the coefficients, standard errors and residuals are
 * those of an exact computation (rational arithmetic on the same logs:
 * the noise of -3, 0, +3 ns leaves the true costs), and the fixed term is
 * given back its offsets. Raw, per recorded node came out 107.1 and the
 * residuals 2 to 3 ns off. */
static void test_large_offsets(void **state)
{
    (void)state;
    const double want[FIT_NTERMS] = {C_FIXED, C_TASK, C_NODE, C_REPLAY, C_SLOT};
    /* per task's, 8.39e-5 ns, times 9 x 10^13 is the fixed term's */
    double se[FIT_NTERMS] = {7554005069.492998, 8.393338965622315e-05, 0.0017327083860058654, 0.0035125718589236114,
                             0.0006753495548716427};
    for (int big_tasks = 0; big_tasks < 2; big_tasks++) {
        gen g = {.warm = 3, .noise = 3, .base = big_tasks ? 0 : (UINT64_C(1) << 52) - 1000000};
        cfg c[NDESIGN];
        for (size_t i = 0; i < NDESIGN; i++)
            c[i] = design[i], c[i].tasks += big_tasks ? UINT64_C(90000000000000) : 0;
        se[FIT_FIXED] = big_tasks ? 7554005069.492998 : 0.7652356190994754;
        logs L;
        fit_data d;
        fit_result R;
        fit_made(&L, c, NDESIGN, &g, &d, &R);
        assert_int_equal(R.k, 5);
        for (int t = 0; t < FIT_NTERMS; t++) {
            double at = t == FIT_FIXED ? want[t] + (double)g.base : want[t];
            /* within a millionth of its standard error: at 9 x 10^13
             * tasks the fixed term, 7.6 x 10^9 ns either way, some ns */
            assert_near(R.term[t].coef, at, 1e-6 * se[t]);
            assert_near(R.term[t].se, se[t], 1e-6 * se[t]);
        }
        for (size_t i = 0; i < d.n; i++)
            if (!(fabs(fabs(d.pt[i].resid) - 3) < 1e-9 || fabs(d.pt[i].resid) < 1e-9))
                fail_msg("pass %zu: residual %.17g", i, d.pt[i].resid);
        assert_near(R.sigma, 2.6832815729997477, 1e-9); /* sqrt(180 / 25) */
        fit_free(&d);
        char *out, *errs;
        assert_int_equal(run_fit(&L, NULL, NULL, NULL, &out, &errs), 0);
        assert_string_equal(errs, "");
        if (!big_tasks)
            assert_true(ts_contains(out, "fixed                4503599626375496.000   [4503599626375494.500, "
                                         "4503599626375497.500]\n"));
        assert_true(ts_contains(out, "\nper task                       50.000   [50.000, 50.000]\n"
                                     "per recorded node             100.000   [99.996, 100.004]\n"
                                     "per replay                    150.000   [149.993, 150.007]\n"
                                     "per boundary slot               2.000   [1.999, 2.001]\n\n"
                                     "R\xC2\xB2              1.000000\n"
                                     "residual sd     2.7 ns (df 25, t 2.0595)\n"));
        free(out), free(errs);
        drop_logs(&L);
    }
}

/* One size only: the super-linear test cannot be made, and JSON says
 * null for it, not a false "no super-linear term". */
static void test_superlinear_not_tested_is_null(void **state)
{
    (void)state;
    const cfg c[] = {{100, 10, 4, 80}, {100, 10, 4, 80}};
    gen g = {.warm = 4, .noise = 10};
    logs L;
    fit_data d;
    fit_result R;
    fit_made(&L, c, 2, &g, &d, &R);
    assert_false(R.reset_done);
    fit_free(&d);
    char *out, *errs;
    assert_int_equal(run_fit(&L, "--format", "json", NULL, &out, &errs), 0);
    assert_true(ts_contains(out, "\"superlinear\": null, \"superlinear_t\": null, \"superlinear_t_without_one\": "
                                 "null, \"superlinear_t_without_two\": null, \"loglog_slope\": null, "
                                 "\"superlinear_left_out\": [], \"superlinear_pair\": false"));
    free(out), free(errs);
    assert_int_equal(run_fit(&L, NULL, NULL, NULL, &out, &errs), 0);
    assert_false(ts_contains(out, "super-linear"));
    free(out), free(errs);
    drop_logs(&L);
    /* every pass the same cost: R² is 0/0, said so, not 1 */
    gen flat = {.warm = 4};
    make_logs(&L, c, 2, &flat);
    assert_int_equal(run_fit(&L, NULL, NULL, NULL, &out, &errs), 0);
    assert_true(ts_contains(out, "\nR\xC2\xB2              n/a (every pass costs the same: nothing to explain)\n"));
    free(out), free(errs);
    assert_int_equal(run_fit(&L, "--format", "json", NULL, &out, &errs), 0);
    assert_true(ts_contains(out, "\"r2\": null"));
    free(out), free(errs);
    drop_logs(&L);
}

static void test_superlinear(void **state)
{
    (void)state;
    gen g = {.warm = 3, .quad = 0.001, .noise = 10};
    logs L;
    fit_data d;
    fit_result R;
    fit_made(&L, design, NDESIGN, &g, &d, &R);
    assert_true(R.reset_done);
    assert_true(R.superlinear);
    assert_true(R.reset_t > 10);
    fit_free(&d);
    char *out, *errs;
    assert_int_equal(run_fit(&L, NULL, NULL, NULL, &out, &errs), 0);
    assert_true(ts_contains(errs, "hbg fit: warning: residuals grow with size: the square of the fitted cost "
                                  "explains what the linear terms leave (t = "));
    assert_true(
        ts_contains(out, "(significant: residuals grow with size, without the pass furthest from the rest too)\n"));
    /* a straight line through a convex cost crosses zero: the cheapest
     * passes are fitted below it, which is said, and their residual is
     * given no share of a negative cost */
    if (!ts_contains(errs, "hbg fit: warning: the model puts "))
        fail_msg("%s", errs);
    assert_true(ts_contains(errs, " below zero cost (the lowest -"));
    const char *wr = strstr(out, "worst residual  ");
    assert_non_null(wr);
    if (strstr(wr, "fitted -"))
        assert_false(strstr(wr, " %) at ") != NULL && strstr(wr, " %) at ") < strchr(wr, '\n'));
    free(out), free(errs);
    drop_logs(&L);
    /* the linear costs with the same noise: no warning */
    gen lin = {.warm = 3, .noise = 10};
    fit_made(&L, design, NDESIGN, &lin, &d, &R);
    assert_true(R.reset_done);
    assert_false(R.superlinear);
    assert_int_equal(R.nneg, 0);
    fit_free(&d);
    drop_logs(&L);
}

/* The table's super-linear line, or "" when there is none. */
static char *reset_line(const logs *L, char **errs)
{
    char *out;
    assert_int_equal(run_fit(L, NULL, NULL, NULL, &out, errs), 0);
    const char *at = strstr(out, "super-linear    ");
    char *line = strdup(at ? at : "");
    assert_non_null(line);
    free(out);
    return line;
}

/* The test is made when some pass is half a nanosecond or more off the
 * fit, whatever the size of the costs: exact data, small or near 10^15
 * ns, leave nothing to test; a nanosecond of noise is tested, and found
 * not significant; a quadratic term of 10^4 ns in costs of 10^14 ns,
 * which a tolerance relative to the costs passed over, is found. */
static void test_superlinear_needs_a_residual(void **state)
{
    (void)state;
    logs L;
    char *line, *errs;
    gen exact = {.warm = 3};
    make_logs(&L, design, NDESIGN, &exact);
    line = reset_line(&L, &errs);
    assert_string_equal(line, "");
    assert_string_equal(errs, "");
    free(line), free(errs);
    drop_logs(&L);

    gen ns = {.warm = 3, .noise = 1};
    make_logs(&L, design, NDESIGN, &ns);
    line = reset_line(&L, &errs);
    assert_string_equal(line, "super-linear    t = 0.00 for the squared fitted cost (not significant)\n");
    assert_string_equal(errs, "");
    free(line), free(errs);
    drop_logs(&L);

    /* 10^12 .. 6 x 10^12 tasks at 50 ns: costs up to 3 x 10^14 ns */
    cfg big[6];
    for (int i = 0; i < 6; i++)
        big[i] = (cfg){(uint64_t)(i + 1) * 1000000000000u, 7, 3, 3};
    make_logs(&L, big, 6, &exact);
    line = reset_line(&L, &errs);
    assert_string_equal(line, "");
    free(line), free(errs);
    drop_logs(&L);
    gen quad = {.warm = 3, .noise = 10, .quad = 1e-21};
    make_logs(&L, big, 6, &quad);
    line = reset_line(&L, &errs);
    assert_string_equal(
        line, "super-linear    t = 961.57 for the squared fitted cost (significant: residuals grow with size, "
              "without the pass furthest from the rest too)\n");
    assert_true(ts_contains(errs, "hbg fit: warning: residuals grow with size: the square of the fitted cost "
                                  "explains what the linear terms leave (t = "));
    free(line), free(errs);
    drop_logs(&L);
}

/* One pass 20 % above the fit at the largest size (a descheduled pass)
 * makes the squared fitted cost significant by itself; without it the
 * other 29 show no curvature, so it is not called super-linear, and the
 * pass is named. */
static void test_superlinear_one_outlier(void **state)
{
    (void)state;
    gen g = {.warm = 1, .noise = 10}, spiked = g;
    /* bench_scaling.sh's tasks sweep: 10^3 .. 10^6 by sqrt(10) */
    const cfg sweep[7] = {{1000, 7, 3, 3},   {3162, 7, 3, 3},   {10000, 7, 3, 3},  {31623, 7, 3, 3},
                          {100000, 7, 3, 3}, {316228, 7, 3, 3}, {1000000, 7, 3, 3}};
    spiked.spike = 1000000; /* the 10^6 tasks' pass: 50 ms */
    logs L;
    make_logs(&L, sweep, 7, &g);
    unlink(L.path[6]);
    free(L.path[6]);
    L.path[6] = write_log(&sweep[6], &spiked, 1006);
    fit_data d;
    fit_result R;
    char err[256];
    assert_int_equal(fit_logs(&L, false, &d, &R, err, sizeof err), 0);
    char *line, *errs, *out;
    line = reset_line(&L, &errs);
    assert_true(R.reset_done);
    assert_int_equal(R.reset_checked, 1);
    assert_false(R.superlinear);
    fit_free(&d);
    assert_string_equal(line, "super-linear    t = 20.69 for the squared fitted cost (not significant without the pass "
                              "furthest from the rest: t = 0.17)\n");
    /* fitted close to it: it pulls the line to itself, and another pass
     * has the largest residual */
    assert_true(ts_contains(errs, "hbg fit: warning: one pass alone makes the squared fitted cost significant (t = "
                                  "20.69; without it, t = 0.17): "));
    assert_true(ts_contains(errs, ".log pass pid=1006 inv=2 (line 11), measured 51006146 ns, fitted 50925791.9; not "
                                  "taken for super-linear growth\n"));
    assert_false(ts_contains(errs, "residuals grow with size"));
    free(line), free(errs);
    assert_int_equal(run_fit(&L, "--format", "json", NULL, &out, &errs), 0);
    assert_true(ts_contains(out, "\"superlinear\": false, \"superlinear_t\": 20.69"));
    assert_true(ts_contains(out, "\"superlinear_t_without_one\": 0.17"));
    assert_true(ts_contains(out, "\"superlinear_t_without_two\": null, \"loglog_slope\": "));
    free(out), free(errs);
    drop_logs(&L);
}

/* Two passes far above the fit, on costs that are linear: the largest
 * tasks' first warm pass in two logs of it, 2 % over. The pass the
 * others predict worst left out, the other still makes the squared
 * fitted cost significant; in rank the residuals do not rise with it. */
/* Logs of the sizes c, each one warm pass, those at s1 and s2 2 x 10^4
 * ns above the line (a descheduled pass each). */
static void make_two_outliers(logs *L, const cfg *c, size_t n, size_t s1, size_t s2)
{
    gen g = {.warm = 1, .noise = 10}, spiked = g;
    spiked.spike = 20000;
    make_logs(L, c, n, &g);
    size_t at[2] = {s1, s2};
    for (int k = 0; k < 2; k++) {
        unlink(L->path[at[k]]);
        free(L->path[at[k]]);
        L->path[at[k]] = write_log(&c[at[k]], &spiked, 1000 + (int)at[k]);
    }
}

/* Two passes above a cost that is linear, at the two largest of ten
 * sizes: with either left out, the other is alone at the top and the
 * squared fitted cost stays significant (t = 3.47), which once called
 * the cost super-linear. Without both, nothing curves. The same at the
 * two smallest sizes. */
static void test_superlinear_two_outliers(void **state)
{
    (void)state;
    cfg lin[10];
    for (int i = 0; i < 10; i++)
        lin[i] = (cfg){(uint64_t)(i + 1) * 1000, 7, 3, 3};
    logs L;
    make_two_outliers(&L, lin, 10, 9, 8);
    fit_data d;
    fit_result R;
    char err[256];
    assert_int_equal(fit_logs(&L, false, &d, &R, err, sizeof err), 0);
    assert_true(R.reset_done);
    assert_false(R.superlinear);
    assert_int_equal(R.reset_checked, 2);
    fit_free(&d);
    char *line, *errs, *out;
    line = reset_line(&L, &errs);
    assert_string_equal(line, "super-linear    t = 3.16 for the squared fitted cost (not significant without the two "
                              "passes furthest from the rest: t = -0.75)\n");
    /* in the order they were left out: the largest pulls the line to
     * itself, so the second largest is the one the others predict worst */
    if (!ts_contains(errs, "hbg fit: warning: two passes alone make the squared fitted cost significant (t = 3.16; "
                           "without one, t = 3.47; without both, t = -0.75): "))
        fail_msg("%s", errs);
    assert_true(ts_contains(errs, ".log pass pid=1008 inv=2 (line 11), measured 476166 ns, fitted 466943.5; "));
    assert_true(ts_contains(errs, ".log pass pid=1009 inv=2 (line 11), measured 526146 ns, fitted 518883.1; not "
                                  "taken for super-linear growth\n"));
    assert_true(strstr(errs, "pid=1008") < strstr(errs, "pid=1009"));
    assert_false(ts_contains(errs, "residuals grow with size"));
    free(line), free(errs);
    assert_int_equal(run_fit(&L, "--format", "json", NULL, &out, &errs), 0);
    assert_true(ts_contains(out, "\"superlinear\": false, \"superlinear_t\": 3.1"));
    assert_true(ts_contains(out, "\"superlinear_t_without_one\": 3.47"));
    assert_true(ts_contains(out, "\"superlinear_t_without_two\": -0.74"));
    assert_true(ts_contains(out, "\"superlinear_left_out\": [8, 9], \"superlinear_pair\": false, \"points\": ["));
    free(out), free(errs);
    drop_logs(&L);

    make_two_outliers(&L, lin, 10, 0, 1);
    line = reset_line(&L, &errs);
    assert_string_equal(line, "super-linear    t = 3.16 for the squared fitted cost (not significant without the two "
                              "passes furthest from the rest: t = 0.00)\n");
    assert_true(ts_contains(errs, "(t = 3.16; without one, t = 3.48; without both, t = 0.00): "));
    assert_false(ts_contains(errs, "residuals grow with size"));
    free(line), free(errs);
    drop_logs(&L);
}

/* Two passes above a cost that is linear, at the two smallest of eight
 * sizes: they tilt the line, so the pass the others predict worst is
 * neither of them, and a second pass was never left out of eight (too
 * few degrees of freedom left for one chosen from the fit without the
 * first): the cost was called super-linear (t = 2.70; without the worst
 * pass, 2.81). Left out together, each is far off the line through the
 * rest, and nothing curves without them. */
static void test_superlinear_pair_of_outliers(void **state)
{
    (void)state;
    cfg lin[8];
    for (int i = 0; i < 8; i++)
        lin[i] = (cfg){(uint64_t)(i + 1) * 1000, 7, 3, 3};
    logs L;
    make_two_outliers(&L, lin, 8, 0, 1);
    fit_data d;
    fit_result R;
    char err[256];
    assert_int_equal(fit_logs(&L, false, &d, &R, err, sizeof err), 0);
    assert_true(R.reset_done);
    assert_false(R.superlinear);
    assert_int_equal(R.reset_checked, 2);
    assert_true(R.reset_pair);
    assert_int_equal(R.reset_pass[0], 1);
    assert_int_equal(R.reset_pass[1], 0);
    fit_free(&d);
    char *line, *errs, *out;
    line = reset_line(&L, &errs);
    assert_string_equal(line, "super-linear    t = 2.70 for the squared fitted cost (not significant without the two "
                              "passes furthest from the rest: t = 0.30)\n");
    /* the one the others predict worse first */
    assert_true(ts_contains(errs, "hbg fit: warning: two passes alone make the squared fitted cost significant (t = "
                                  "2.70; without one, t = 3.72; without both, t = 0.30): "));
    assert_true(ts_contains(errs, ".log pass pid=1001 inv=2 (line 11), measured 126156 ns, fitted 118296.7; "));
    assert_true(ts_contains(errs, ".log pass pid=1000 inv=2 (line 11), measured 76146 ns, fitted 71153.5; not "
                                  "taken for super-linear growth\n"));
    assert_false(ts_contains(errs, "residuals grow with size"));
    free(line), free(errs);
    assert_int_equal(run_fit(&L, "--format", "json", NULL, &out, &errs), 0);
    assert_true(ts_contains(out, "\"superlinear\": false, \"superlinear_t\": 2.69"));
    assert_true(ts_contains(out, "\"superlinear_t_without_one\": 3.72"));
    assert_true(ts_contains(out, "\"superlinear_t_without_two\": 0.29"));
    assert_true(ts_contains(out, "\"superlinear_left_out\": [1, 0], \"superlinear_pair\": true, \"points\": ["));
    free(out), free(errs);
    drop_logs(&L);
}

/* With --relative, a share is the only scale an outlier is measured by,
 * and the two largest of eight sizes spaced by decades, on a cost 20 %
 * over its line at the top (noise of up to 1 %), stand that far apart
 * from the line through the other six: 20 % and 7 % above it, the six
 * within 3 %. Left out as a pair, they took the curve with them (t =
 * 2.53 without both, on three degrees of freedom), and the cost was
 * called linear in 11 of 29 such runs. The pair is left out there only
 * where a second pass would be (FIT_TRIM_DF). */
static void test_superlinear_relative_ends_are_no_pair(void **state)
{
    (void)state;
    static const uint64_t tasks[8] = {1000, 2683, 7197, 19307, 51795, 138950, 372759, 1000000};
    static const int64_t shift[8] = {-411, 975, 1934, -4777, -239, -7219, 60739, 346504};
    logs L = {.n = 8};
    for (int i = 0; i < 8; i++) {
        gen g = {.warm = 1, .quad = 1e-5, .shift = shift[i]};
        L.path[i] = write_log(&(cfg){tasks[i], 7, 3, 3}, &g, 1000 + i);
    }
    fit_data d;
    fit_result R;
    char err[256];
    assert_int_equal(fit_logs(&L, true, &d, &R, err, sizeof err), 0);
    assert_true(R.superlinear);
    assert_false(R.reset_pair);
    assert_int_equal(R.reset_checked, 1);
    assert_int_equal(R.reset_pass[0], 7);
    fit_free(&d);
    char *out, *errs;
    assert_int_equal(run_fit(&L, "--relative", "--format", "json", &out, &errs), 0);
    assert_true(ts_contains(out, "\"superlinear\": true, \"superlinear_t\": 28.67"));
    assert_true(ts_contains(out, "\"superlinear_t_without_one\": 9.67"));
    assert_true(ts_contains(out, "\"superlinear_left_out\": [7], \"superlinear_pair\": false, \"points\": ["));
    assert_true(ts_contains(errs, "hbg fit: warning: residuals grow with size"));
    free(out), free(errs);
    drop_logs(&L);
}

/* Four sizes of two passes each, a cost 20 % over its line at the top,
 * noise within 1 %: the two passes of the smallest size agree with each
 * other and stand apart from the line through the other three sizes
 * (leaving them out took the most from the sum of squares, and the fit
 * without them found no curve: t = 1.62 on three degrees of freedom).
 * They are that size's cost, with no other pass of it to say they are
 * not, and are not left out as a pair: 4 of 20 such runs were called
 * linear. */
static void test_superlinear_whole_size_is_no_pair(void **state)
{
    (void)state;
    static const int64_t shift[4] = {117687, -243646, 247178, -229033};
    static const int noise[4] = {-2156, 15580, 42928, -433966};
    logs L = {.n = 4};
    for (int i = 0; i < 4; i++) {
        gen g = {.warm = 2, .quad = 1e-5, .shift = shift[i], .noise = noise[i]};
        L.path[i] = write_log(&(cfg){(uint64_t)(i + 1) * 250000, 7, 3, 3}, &g, 1000 + i);
    }
    fit_data d;
    fit_result R;
    char err[256];
    assert_int_equal(fit_logs(&L, false, &d, &R, err, sizeof err), 0);
    /* as generated: the smallest size's two passes are the first points */
    assert_int_equal(d.n, 8);
    assert_true(d.pt[0].y == 13250999 && d.pt[1].y == 13248843 && d.pt[7].y == 59777123);
    assert_true(R.superlinear);
    assert_false(R.reset_pair);
    fit_free(&d);
    char *out, *errs;
    assert_int_equal(run_fit(&L, "--format", "json", NULL, &out, &errs), 0);
    assert_true(ts_contains(out, "\"superlinear\": true, \"superlinear_t\": 6.96"));
    assert_true(ts_contains(out, "\"superlinear_pair\": false, \"points\": ["));
    assert_true(ts_contains(errs, "hbg fit: warning: residuals grow with size"));
    free(out), free(errs);
    drop_logs(&L);
}

/* Nine even sizes with nodes varying apart from the tasks (three terms
 * fitted), a square term 20 % at the top, noise within 1 %: the fit of
 * the other seven bends to the curve with the nodes' term, and the two
 * smallest sizes, left out as a pair, stood apart from its small
 * residuals; the fit without them found no curve (t = 1.1 on three
 * degrees of freedom), and 3 of 20 such runs were called linear. With a
 * second count the pair is left out only where a second pass would be
 * (FIT_TRIM_DF). */
static void test_superlinear_two_counts_ends_are_no_pair(void **state)
{
    (void)state;
    static const uint64_t nodes[9] = {19000, 3000, 16000, 9000, 2000, 1000, 5000, 19000, 16000};
    static const int64_t shift[9] = {70614, 55940, -70018, -240040, -6934, -228733, 338562, 445480, 48361};
    logs L = {.n = 9};
    for (int i = 0; i < 9; i++) {
        gen g = {.warm = 1, .quad = 1e-5, .shift = shift[i]};
        L.path[i] = write_log(&(cfg){1000000 * (uint64_t)(i + 1) / 9, nodes[i], 3, 3}, &g, 1000 + i);
    }
    fit_data d;
    fit_result R;
    char err[256];
    assert_int_equal(fit_logs(&L, false, &d, &R, err, sizeof err), 0);
    assert_int_equal(R.k, 3);
    assert_true(R.superlinear);
    assert_false(R.reset_pair);
    fit_free(&d);
    char *out, *errs;
    assert_int_equal(run_fit(&L, "--format", "json", NULL, &out, &errs), 0);
    assert_true(ts_contains(out, "\"superlinear_pair\": false, \"points\": ["));
    assert_true(ts_contains(errs, "hbg fit: warning: residuals grow with size"));
    free(out), free(errs);
    drop_logs(&L);
}

/* A cost 20 % over its line at the largest of six sizes spaced by
 * decades, one pass each (as --min-per-log leaves), noise of up to 1 %
 * of each cost. Without the pass the others predict worst the curve is
 * still there (t = 64.50); a second pass is not left out as well, with
 * two degrees of freedom left to the fit without both: once it was, and
 * the cost was called linear. */
static void test_superlinear_few_sizes(void **state)
{
    (void)state;
    static const uint64_t tasks[6] = {1000, 3981, 15849, 63096, 251189, 1000000};
    static const int64_t shift[6] = {387, 1060, -1273, -15433, 2976, -114091};
    logs L = {.n = 6};
    for (int i = 0; i < 6; i++) {
        gen g = {.warm = 1, .quad = 1e-5, .shift = shift[i]};
        L.path[i] = write_log(&(cfg){tasks[i], 7, 3, 3}, &g, 1000 + i);
    }
    fit_data d;
    fit_result R;
    char err[256];
    assert_int_equal(fit_logs(&L, false, &d, &R, err, sizeof err), 0);
    assert_true(R.superlinear);
    assert_int_equal(R.reset_checked, 1);
    fit_free(&d);
    char *line, *errs;
    line = reset_line(&L, &errs);
    assert_string_equal(line,
                        "super-linear    t = 173.69 for the squared fitted cost (significant: residuals grow with "
                        "size, without the pass furthest from the rest too)\n");
    assert_true(ts_contains(errs, "hbg fit: warning: residuals grow with size: the square of the fitted cost "
                                  "explains what the linear terms leave (t = 173.69, df 3)"));
    free(line), free(errs);
    char *out;
    assert_int_equal(run_fit(&L, "--format", "json", NULL, &out, &errs), 0);
    assert_true(ts_contains(out, "\"superlinear\": true, \"superlinear_t\": 173.6"));
    assert_true(ts_contains(out, "\"superlinear_t_without_one\": 64.50"));
    assert_true(ts_contains(out, "\"superlinear_t_without_two\": null, \"loglog_slope\": "));
    assert_true(ts_contains(out, "\"superlinear_left_out\": [5], \"superlinear_pair\": false, \"points\": ["));
    free(out), free(errs);
    drop_logs(&L);
}

/* Relative weights: still exact on exact data; noise in proportion to
 * the cost leaves intervals that contain the true costs. */
static void test_relative(void **state)
{
    (void)state;
    const double want[FIT_NTERMS] = {C_FIXED, C_TASK, C_NODE, C_REPLAY, C_SLOT};
    for (int noisy = 0; noisy < 2; noisy++) {
        gen g = {.warm = 4, .noise = noisy ? 30 : 0};
        logs L;
        make_logs(&L, design, NDESIGN, &g);
        fit_data d;
        fit_result R;
        char err[256];
        assert_int_equal(fit_logs(&L, true, &d, &R, err, sizeof err), 0);
        assert_true(R.relative);
        for (int c = 0; c < FIT_NTERMS; c++) {
            assert_true(R.term[c].ident);
            if (!noisy)
                assert_near(R.term[c].coef, want[c], 1e-6 * want[c]);
            else
                assert_true(R.term[c].lo <= want[c] && want[c] <= R.term[c].hi);
        }
        if (noisy) {
            /* R² of the fit made: its relative residuals about the
             * weighted mean, not the ns residuals it did not minimise */
            double sw = 0, ym = 0, sse = 0, sst = 0;
            for (size_t i = 0; i < d.n; i++)
                sw += 1 / (d.pt[i].y * d.pt[i].y), ym += 1 / d.pt[i].y;
            ym /= sw;
            for (size_t i = 0; i < d.n; i++) {
                double r = d.pt[i].resid / d.pt[i].y, t = (d.pt[i].y - ym) / d.pt[i].y;
                sse += r * r, sst += t * t;
            }
            assert_near(R.r2, 1 - sse / sst, 1e-9);
            assert_true(R.r2 > 0.99 && R.r2 < 1);
        }
        fit_free(&d);
        if (!noisy) {
            char *out, *errs;
            assert_int_equal(run_fit(&L, "--relative", NULL, NULL, &out, &errs), 0);
            assert_true(ts_contains(out, "per replay                    150.000   [150.000, 150.000]\n"));
            assert_true(ts_contains(out, "residual sd     0.000 % of the cost (relative; df 35, t 2.0301)\n"));
            assert_true(ts_contains(out, "\nR\xC2\xB2              1.000000 (of the relative residuals)\n"));
            free(out), free(errs);
        }
        drop_logs(&L);
    }
}

/* A pass of no cost cannot be divided by: named by its log and line,
 * exit 1 (the logs were read; no fit can be made of them so). */
static void test_relative_zero_cost(void **state)
{
    (void)state;
    gen g = {.warm = 3, .zero_inv = 3};
    logs L;
    make_logs(&L, design, 2, &g);
    char *out, *errs, want[512];
    assert_int_equal(run_fit(&L, "--relative", NULL, NULL, &out, &errs), 1);
    snprintf(want, sizeof want,
             "hbg fit: %s:20: pass pid=1000 inv=3 has a control plane of 0 ns, and --relative divides each pass by "
             "its cost; fit without --relative\n",
             L.path[0]);
    assert_string_equal(errs, want);
    assert_string_equal(out, "");
    free(out), free(errs);
    drop_logs(&L);
}

/* One point per log: its cheapest warm pass. */
static void test_min_per_log(void **state)
{
    (void)state;
    gen g = {.warm = 4, .noise = 40};
    logs L;
    make_logs(&L, design, NDESIGN, &g);
    char *out, *errs;
    assert_int_equal(run_fit(&L, "--min-per-log", "--format", "json", &out, &errs), 0);
    assert_true(ts_contains(out, "\"passes\": 10, \"left_out\": 0"));
    free(out), free(errs);
    drop_logs(&L);
}

/* --skip-warm 1 leaves out each log's first warm pass, which here costs a
 * millisecond more than the model: the rest fits exactly. The first is
 * the lowest inv= above the cold one's, wherever the log puts it: with
 * inv=3 written before inv=2 (the spiked one), inv=2 is still left out. */
static void test_skip_warm(void **state)
{
    (void)state;
    logs L;
    char *out, *errs;
    for (int swap = 1; swap >= 0; swap--) {
        gen g = {.warm = 3, .spike = 1000000, .swap23 = swap};
        make_logs(&L, design, NDESIGN, &g);
        assert_int_equal(run_fit(&L, "--skip-warm", "1", NULL, &out, &errs), 0);
        assert_true(
            ts_contains(out, "passes          20 warm passes from 10 logs (10 skipped: each rank's first 1)\n"));
        assert_true(ts_contains(out, "R\xC2\xB2              1.000000\n"));
        assert_true(ts_contains(out, "per task                       50.000   [50.000, 50.000]\n"));
        free(out), free(errs);
        if (swap)
            drop_logs(&L);
    }
    assert_int_equal(run_fit(&L, NULL, NULL, NULL, &out, &errs), 0);
    assert_false(ts_contains(out, "R\xC2\xB2              1.000000\n"));
    free(out), free(errs);
    assert_int_equal(run_fit(&L, "--skip-warm", "1", "--format=json", &out, &errs), 0);
    assert_true(ts_contains(out, "\"skipped\": 10"));
    free(out), free(errs);
    /* every pass skipped: nothing to fit, and the option is named */
    assert_int_equal(run_fit(&L, "--skip-warm", "3", NULL, &out, &errs), 1);
    assert_true(ts_contains(errs, "hbg fit: no warm pass with counts in any log once --skip-warm 3 left out 30; "
                                  "nothing to fit (lower --skip-warm or give more rounds)\n"));
    free(out), free(errs);
    const char *bad[] = {"-1", "x", "2x", ""};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(run_fit(&L, "--skip-warm", bad[i], NULL, &out, &errs), 2);
        assert_true(ts_contains(errs, "--skip-warm expects a count of passes"));
        free(out), free(errs);
    }
    drop_logs(&L);
}

/* Rewrites the file at path with the first `from` after `after` (NULL:
 * the start) replaced by `to`. */
static void edit_file(const char *path, const char *after, const char *from, const char *to)
{
    char *text = ts_slurp(path, NULL);
    assert_non_null(text);
    char *start = after ? strstr(text, after) : text;
    assert_non_null(start);
    char *at = strstr(start, from);
    assert_non_null(at);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    assert_int_equal(fclose(f), 0);
    free(text);
}

/* --skip-warm counts a rank's warm passes as the log has them, not as the
 * reader kept them: with log 3's first warm pass excluded (its record
 * pool overflowed), --skip-warm 1 leaves out that pass's place only, and
 * log 3 still gives its two later passes. Counting only the kept passes
 * skipped inv=3 as well (19 passes, 10 skipped). */
static void test_skip_warm_counts_excluded_passes(void **state)
{
    (void)state;
    gen g = {.warm = 3, .spike = 1000000};
    logs L;
    make_logs(&L, design, NDESIGN, &g);
    edit_file(L.path[3], NULL, "dropped=0 pid=1003 inv=2\n", "dropped=4 pid=1003 inv=2\n");
    char *out, *errs;
    assert_int_equal(run_fit(&L, "--skip-warm", "1", NULL, &out, &errs), 0);
    /* 9 skipped: the excluded pass was never going to be fitted */
    assert_true(ts_contains(out, "passes          20 warm passes from 10 logs (9 skipped: each rank's first 1)\n"));
    /* no spiked pass is left in: the fit is exact */
    assert_true(ts_contains(out, "R\xC2\xB2              1.000000\n"));
    assert_true(ts_contains(errs, "host-orch submit_task dropped=4 in pass pid=1003 inv=2"));
    free(out), free(errs);
    assert_int_equal(run_fit(&L, "--skip-warm", "1", "--format=json", &out, &errs), 0);
    assert_true(ts_contains(out, "\"passes\": 20, \"left_out\": 0, \"skipped\": 9,"));
    free(out), free(errs);
    drop_logs(&L);
}

/* The 4-pass fixture as a log of its own, with each edit applied. */
static void fixture_log(logs *L, const char *const (*edit)[2], size_t nedit)
{
    char *text = ts_slurp(ts_fixture("ours-1rank-4pass.log"), NULL);
    assert_non_null(text);
    L->n = 1;
    L->path[0] = ts_temp_file(text, strlen(text), ".log");
    free(text);
    for (size_t i = 0; i < nedit; i++)
        edit_file(L->path[0], NULL, edit[i][0], edit[i][1]);
}

/* A count past 2^53 cannot be held exactly by the fit's doubles: three
 * different tasks= near 2^64 were all rounded to 2^64, called "the same
 * in every pass" and printed as 18446744073709551616, a number no pass
 * has. Such a pass is now left out, named with its line and count; 2^53
 * itself is held exactly and printed as the log has it. */
static void test_counts_past_2_53_left_out(void **state)
{
    (void)state;
    static const char *const huge[][2] = {
        {"tasks=47 heap_used=127673344 pid=4242 inv=2",
         "tasks=18446744073709551615 heap_used=127673344 pid=4242 inv=2"},
        {"tasks=47 heap_used=127673344 pid=4242 inv=3",
         "tasks=18446744073709551614 heap_used=127673344 pid=4242 inv=3"},
        {"tasks=47 heap_used=127673344 pid=4242 inv=4",
         "tasks=18446744073709551613 heap_used=127673344 pid=4242 inv=4"},
    };
    logs L;
    fixture_log(&L, huge, 3);
    char *out, *errs;
    assert_int_equal(run_fit(&L, NULL, NULL, NULL, &out, &errs), 1);
    assert_string_equal(out, "");
    assert_true(ts_contains(errs, ":30: pass pid=4242 inv=2 has tasks=18446744073709551615, above 2^53 "
                                  "(9007199254740992): no count the fit can hold exactly; left out of the fit\n"));
    assert_true(ts_contains(errs, ":50: pass pid=4242 inv=3 has tasks=18446744073709551614, above 2^53"));
    assert_true(ts_contains(errs, ":70: pass pid=4242 inv=4 has tasks=18446744073709551613, above 2^53"));
    assert_true(ts_contains(errs, "hbg fit: no warm pass with counts in any log; nothing to fit\n"));
    free(out), free(errs);
    drop_logs(&L);
    /* 2^53 in every pass is held, and said as it is; one past it in a
     * record_node count leaves that pass out */
    static const char *const edge[][2] = {
        {"tasks=47 heap_used=127673344 pid=4242 inv=2", "tasks=9007199254740992 heap_used=127673344 pid=4242 inv=2"},
        {"tasks=47 heap_used=127673344 pid=4242 inv=3", "tasks=9007199254740992 heap_used=127673344 pid=4242 inv=3"},
        {"tasks=47 heap_used=127673344 pid=4242 inv=4", "tasks=9007199254740992 heap_used=127673344 pid=4242 inv=4"},
        {"count=277 detail_sum=0 dropped=0 pid=4242 inv=3",
         "count=9007199254740993 detail_sum=0 dropped=0 pid=4242 inv=3"},
    };
    fixture_log(&L, edge, 4);
    assert_int_equal(run_fit(&L, NULL, NULL, NULL, &out, &errs), 0);
    assert_true(
        ts_contains(out, "passes          2 warm passes from 1 log (1 left out: counts unknown, or a count or cost past "
                         "2^53)\n"));
    assert_true(ts_contains(out, "per task             not identifiable: tasks is 9007199254740992 in every pass; vary "
                                 "it to fit this term\n"));
    assert_true(ts_contains(errs, ":56: pass pid=4242 inv=3 has host-orch record_node count=9007199254740993, above "
                                  "2^53 (9007199254740992): no count the fit can hold exactly; left out of the fit\n"));
    free(out), free(errs);
    assert_int_equal(run_fit(&L, "--format", "json", NULL, &out, &errs), 0);
    assert_true(ts_contains(out, "\"tasks\": 9007199254740992, \"nodes\": 277,"));
    free(out), free(errs);
    drop_logs(&L);
    /* nor a cost: a control plane past 2^53 ns (the reader takes up to
     * 2^62) would be rounded to a multiple of 2 ns or more */
    static const char *const dear[][2] = {
        {"dur_ns=1000 tasks=47 heap_used=127673344 pid=4242 inv=3",
         "dur_ns=9007199254740993 tasks=47 heap_used=127673344 pid=4242 inv=3"},
    };
    fixture_log(&L, dear, 1);
    assert_int_equal(run_fit(&L, NULL, NULL, NULL, &out, &errs), 0);
    assert_true(ts_contains(out, "passes          2 warm passes from 1 log (1 left out: counts unknown, or a count or "
                                 "cost past 2^53)\n"));
    assert_true(ts_contains(errs, ":44: pass pid=4242 inv=3 has a control plane of 9007199254741593 ns, above 2^53 "
                                  "(9007199254740992 ns, 104 days): no cost the fit can hold exactly; left out of the "
                                  "fit\n"));
    free(out), free(errs);
    drop_logs(&L);
}

/* A slots= that is there but unreadable leaves its pass out, named; it
 * must not pass for a log that writes none (which would drop the slot
 * term from the whole fit, and move its cost into the replays). */
static void test_bad_slots_leave_the_pass_out(void **state)
{
    (void)state;
    gen g = {.warm = 3, .noise = 10};
    logs L;
    make_logs(&L, design, NDESIGN, &g);
    char *text = ts_slurp(L.path[7], NULL);
    assert_non_null(text);
    char *at = strstr(strstr(text, " inv=2\n"), "slots=2560 pid=1007 inv=2\n");
    assert_non_null(at);
    char *fixed;
    assert_true(asprintf(&fixed, "%.*sslots=-2560%s", (int)(at - text), text, at + 10) > 0);
    FILE *f = fopen(L.path[7], "w");
    assert_non_null(f);
    fputs(fixed, f);
    assert_int_equal(fclose(f), 0);
    free(fixed), free(text);
    char *out, *errs;
    assert_int_equal(run_fit(&L, NULL, NULL, NULL, &out, &errs), 0);
    if (!ts_contains(errs, ": pass pid=1007 inv=2 has a slots= on its graph_upload line that is no integer (counts "
                           "unknown); left out of the fit\n"))
        fail_msg("%s", errs);
    assert_true(ts_contains(out, "passes          29 warm passes from 10 logs (1 left out"));
    assert_false(ts_contains(out, "do not carry it"));
    assert_true(ts_contains(out, "\nper boundary slot    "));
    free(out), free(errs);
    drop_logs(&L);
}

/* The original runtime's logs: no slots=, so that term is named as such. */
static void test_original_logs(void **state)
{
    (void)state;
    const char *args[] = {"fit", ts_fixture("original-grammar-2rank-3round.log"), NULL};
    char *out, *errs;
    /* 4 warm passes, all with the same counts: only the fixed cost */
    assert_int_equal(ts_run_cli(args, &out, &errs), 0);
    assert_true(ts_contains(out, "passes          4 warm passes from 1 log\n"));
    assert_true(ts_contains(out, "per boundary slot    not identifiable: the logs do not carry it (graph_upload "
                                 "slots=, written by hbg only)\n"));
    assert_true(ts_contains(out, "per task             not identifiable: tasks is 47 in every pass"));
    free(out), free(errs);
    gen g = {.warm = 3, .original = true};
    logs L;
    fit_data d;
    fit_result R;
    fit_made(&L, design, NDESIGN, &g, &d, &R);
    assert_false(R.term[FIT_SLOT].ident);
    assert_true(R.term[FIT_REPLAY].ident);
    fit_free(&d);
    drop_logs(&L);
}

static void test_t_quantile(void **state)
{
    (void)state;
    assert_near(fit_tq975(1), 12.70620474, 1e-8);
    assert_near(fit_tq975(2), 4.30265273, 1e-8);
    assert_near(fit_tq975(10), 2.22813885, 1e-8);
    assert_near(fit_tq975(30), 2.04227246, 1e-8);
    assert_near(fit_tq975(31), 2.03951345, 1e-6);
    assert_near(fit_tq975(40), 2.02107539, 1e-6);
    assert_near(fit_tq975(120), 1.97993052, 1e-6);
    assert_near(fit_tq975(100000), 1.95998771, 1e-6);
}

static void test_bad_input(void **state)
{
    (void)state;
    char *out, *errs;
    const char *none[] = {"fit", NULL};
    assert_int_equal(ts_run_cli(none, &out, &errs), 2);
    assert_string_equal(errs, "hbg fit: expected one LOG or more (see `hbg fit --help`)\n");
    free(out), free(errs);
    const char *missing[] = {"fit", "/nonexistent/x.log", NULL};
    assert_int_equal(ts_run_cli(missing, &out, &errs), 2);
    assert_true(ts_contains(errs, "hbg fit: cannot open /nonexistent/x.log"));
    free(out), free(errs);
    const char *nobind[] = {"fit", ts_fixture("original-no-bind-lines.log"), NULL};
    assert_int_equal(ts_run_cli(nobind, &out, &errs), 2);
    assert_true(ts_contains(errs, "original-no-bind-lines.log has no bind-phase lines (\"bind phase=\"); run the "
                                  "workload with HBG_BIND_BREAKDOWN=1"));
    free(out), free(errs);
    const char *cold[] = {"fit", ts_fixture("original-only-cold.log"), NULL};
    assert_int_equal(ts_run_cli(cold, &out, &errs), 1);
    assert_true(ts_contains(errs, "original-only-cold.log: every pass is the cold first pass of its rank (2); it "
                                  "adds nothing to the fit (run at least 2 rounds)\n"));
    assert_true(ts_contains(errs, "hbg fit: no warm pass with counts in any log; nothing to fit\n"));
    assert_string_equal(out, "");
    free(out), free(errs);
    const char *fmt[] = {"fit", "--format", "csv", "x.log", NULL};
    assert_int_equal(ts_run_cli(fmt, &out, &errs), 2);
    assert_string_equal(errs, "hbg fit: --format expects table or json, got 'csv'\n");
    free(out), free(errs);
    const char *two[] = {"fit", ts_fixture("ours-two-stamps.log"), NULL};
    assert_int_equal(ts_run_cli(two, &out, &errs), 2);
    assert_true(ts_contains(errs, "the log mixes two runs; refusing it\n"));
    free(out), free(errs);
    /* 2 logs of one warm pass each, all five terms varying: too few */
    gen g = {.warm = 1};
    logs L;
    make_logs(&L, design + 3, 2, &g);
    assert_int_equal(run_fit(&L, NULL, NULL, NULL, &out, &errs), 1);
    assert_true(ts_contains(errs, "hbg fit: 2 warm passes cannot determine"));
    free(out), free(errs);
    drop_logs(&L);
    const char *help[] = {"fit", "--help", NULL};
    assert_int_equal(ts_run_cli(help, &out, &errs), 0);
    assert_true(ts_contains(out, "usage: hbg fit LOG..."));
    /* the range a --skip-warm out of it is refused with */
    assert_true(ts_contains(out, "  --skip-warm N   leave out each rank's first N warm passes of every log, 0 to\n"
                                 "                  1000000 (default 0; "));
    free(out), free(errs);
}

/* The plot of d and R, as text (malloc'd). */
static char *plot_text(const fit_data *d, const fit_result *R)
{
    char *s = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&s, &len);
    assert_non_null(f);
    assert_int_equal(fp_write(f, d, R, "t"), 0);
    assert_int_equal(fclose(f), 0);
    return s;
}

/* A pass with a cost below 1 ns, measured or fitted (a model that gives
 * a small pass a negative cost), has no place on a log axis: it is drawn
 * as a cross on the frame and counted in the subtitle, where it once sat
 * on the frame as a point like any other. The axes start at 1 ns (a
 * decade below labelled "0 ns"), and a sweep over many decades labels at
 * most nine of them. */
static void test_plot_edges(void **state)
{
    (void)state;
    fit_point p[12];
    memset(p, 0, sizeof p);
    for (int i = 0; i < 10; i++) {
        p[i].y = 1000.0 + 500 * i;
        p[i].fitted = 900.0 + 520 * i;
    }
    p[10].y = 3e7, p[10].fitted = -4.9e6; /* fitted below zero */
    p[11].y = 0, p[11].fitted = 0;
    fit_data d = {.pt = p, .n = 12};
    fit_result R = {.r2 = 0.97, .worst = 10};
    char *s = plot_text(&d, &R);
    assert_true(ts_contains(s, ">12 passes, R\xC2\xB2 = 0.970000; 2 with a cost below 1 ns (\xC3\x97 on the frame)<"));
    size_t crosses = 0, dots = 0;
    for (const char *q = s; (q = strstr(q, "<path d=\"M")); q++)
        crosses++;
    for (const char *q = s; (q = strstr(q, "r=\"3\" fill=")); q++)
        dots++;
    assert_int_equal(crosses, 2 + 1); /* and the legend's */
    assert_int_equal(dots, 10 + 1);
    assert_true(ts_contains(s, ">a cost below 1 ns<"));
    free(s);
    /* 1 ns to 100 s: no "0 ns", and every other decade labelled */
    for (int i = 0; i < 10; i++)
        p[i].y *= 1e7, p[i].fitted *= 1e7;
    p[0].y = p[0].fitted = 1;
    d.n = 10;
    R.worst = 3;
    s = plot_text(&d, &R);
    assert_false(ts_contains(s, ">0 ns<"));
    assert_true(ts_contains(s, ">1 ns<"));
    assert_false(ts_contains(s, ">10 ns<"));
    assert_true(ts_contains(s, ">100 ns<"));
    assert_false(ts_contains(s, "below 1 ns"));
    free(s);
}

/* The legend stands where fewer passes lie under it: top left, unless
 * passes measured far above their fit lie there (they were hidden under
 * it); then bottom right. */
static void test_plot_legend_corner(void **state)
{
    (void)state;
    fit_point p[20];
    for (int i = 0; i < 20; i++) /* on the diagonal, 1 µs to 1 ms */
        p[i].y = p[i].fitted = 1000.0 * pow(1.43, i);
    fit_data d = {.pt = p, .n = 20};
    fit_result R = {.r2 = 0.9, .worst = 0};
    for (int k = 0; k < 2; k++) {
        if (k) /* four small passes measured a thousand times their fit */
            for (int i = 0; i < 4; i++)
                p[i].y = p[i].fitted * 1000;
        char *s = plot_text(&d, &R);
        /* X0 + 4 = 96, Y0 + 4 = 68; X1 - 4 - 140 = 448, Y1 - 4 - 62 = 430 */
        const char *want = k ? "<rect x=\"448.00\" y=\"430.00\" width=\"140\" height=\"62\""
                             : "<rect x=\"96.00\" y=\"68.00\" width=\"140\" height=\"62\"";
        if (!ts_contains(s, want))
            fail_msg("case %d: no %s in\n%s", k, want, s);
        free(s);
    }
}

static void test_plot(void **state)
{
    (void)state;
    gen g = {.warm = 2, .noise = 40};
    logs L;
    make_logs(&L, design, NDESIGN, &g);
    char svg[] = "/tmp/hbg_fit_plot_XXXXXX.svg";
    int fd = mkstemps(svg, 4);
    assert_true(fd >= 0);
    close(fd);
    char *out, *errs;
    assert_int_equal(run_fit(&L, "--plot", svg, NULL, &out, &errs), 0);
    free(out), free(errs);
    size_t len;
    char *s = ts_slurp(svg, &len);
    assert_non_null(s);
    assert_true(ts_contains(s, "<?xml version=\"1.0\""));
    assert_true(ts_contains(s, "hbg fit: measured against fitted control plane"));
    assert_true(ts_contains(s, "20 passes, R\xC2\xB2 = "));
    /* 20 passes, the worst ring and two legend marks */
    size_t circles = 0;
    for (const char *p = s; (p = strstr(p, "<circle")); p++)
        circles++;
    assert_int_equal(circles, 20 + 1 + 2);
    assert_true(ts_contains(s, "</svg>\n"));
    free(s);
    unlink(svg);
    /* a pipe whose reader has gone: SIGPIPE ends the command at its first
     * write to stdout, and the plot, drawn after, was lost */
    char cmd[8192];
    int k = snprintf(cmd, sizeof cmd, "'%s' fit --format json --plot '%s'", getenv("HBG_CLI"), svg);
    for (size_t i = 0; i < L.n; i++)
        k += snprintf(cmd + k, sizeof cmd - (size_t)k, " '%s'", L.path[i]);
    snprintf(cmd + k, sizeof cmd - (size_t)k, " 2>/dev/null | true");
    assert_int_equal(system(cmd), 0);
    s = ts_slurp(svg, &len);
    assert_non_null(s);
    assert_true(ts_contains(s, "</svg>\n"));
    free(s);
    unlink(svg);
    drop_logs(&L);
}

/* The same file named twice (again, through a link, as '-' on stdin) is
 * refused before anything is read: it would count its passes twice and
 * narrow every interval. A copy is a log of its own. */
static void test_same_log_twice(void **state)
{
    (void)state;
    gen g = {.warm = 3, .noise = 40};
    logs L;
    make_logs(&L, design, NDESIGN, &g);
    char *dir = ts_tempdir("fitdup");
    char link[4096], copy[4096], want[12288];
    snprintf(link, sizeof link, "%s/link.log", dir);
    snprintf(copy, sizeof copy, "%s/copy.log", dir);
    assert_int_equal(symlink(L.path[0], link), 0);
    char *out, *errs;
    const char *twice[] = {"fit", L.path[0], L.path[1], L.path[0], NULL};
    assert_int_equal(ts_run_cli(twice, &out, &errs), 2);
    snprintf(want, sizeof want,
             "hbg fit: LOG 1 (%s) and LOG 3 (%s) are the same file: its passes would count twice; give each log "
             "once\n",
             L.path[0], L.path[0]);
    assert_string_equal(errs, want);
    assert_string_equal(out, "");
    free(out), free(errs);
    const char *linked[] = {"fit", L.path[0], L.path[1], link, NULL};
    assert_int_equal(ts_run_cli(linked, &out, &errs), 2);
    snprintf(want, sizeof want,
             "hbg fit: LOG 1 (%s) and LOG 3 (%s) are the same file: its passes would count twice; give each log "
             "once\n",
             L.path[0], link);
    assert_string_equal(errs, want);
    free(out), free(errs);
    const char *in[] = {"fit", L.path[1], "-", L.path[0], NULL};
    assert_int_equal(ts_run_cli_in(in, L.path[0], &out, &errs), 2);
    snprintf(want, sizeof want,
             "hbg fit: LOG 2 (standard input) and LOG 3 (%s) are the same file: its passes would count twice; give "
             "each log once\n",
             L.path[0]);
    assert_string_equal(errs, want);
    free(out), free(errs);
    /* a copy is the user's choice */
    size_t n;
    char *text = ts_slurp(L.path[0], &n);
    assert_non_null(text);
    FILE *f = fopen(copy, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
    free(text);
    const char *copied[] = {"fit", L.path[0], L.path[1], copy, NULL};
    assert_int_equal(ts_run_cli(copied, &out, &errs), 0);
    assert_true(ts_contains(out, "passes          9 warm passes from 3 logs\n"));
    free(out), free(errs);
    ts_rmtree(dir);
    drop_logs(&L);
}

/* A log that cannot be read is one line and exit 2, and leaves nothing
 * allocated behind (under AddressSanitizer a leak report would follow the
 * line and the exit status would be LeakSanitizer's). */
static void test_unreadable_log(void **state)
{
    (void)state;
    char *out, *errs;
    const char *mem[] = {"fit", "/proc/self/mem", NULL};
    assert_int_equal(ts_run_cli(mem, &out, &errs), 2);
    assert_string_equal(errs, "hbg fit: cannot read /proc/self/mem: Input/output error\n");
    assert_string_equal(out, "");
    free(out), free(errs);
}

/* Each warning of a log carries the command's prefix, as every command's
 * does. */
static void test_warnings_are_prefixed(void **state)
{
    (void)state;
    char lp[2048], want[4500];
    snprintf(lp, sizeof lp, "%s", ts_fixture("ours-overflow.log"));
    const char *args[] = {"fit", lp, NULL};
    char *out, *errs;
    assert_int_equal(ts_run_cli(args, &out, &errs), 0);
    snprintf(want, sizeof want,
             "hbg fit: warning: %s:51: malformed bind line: dur_ns= is a number past 64 bits; ignored\n"
             "hbg fit: warning: %s:44: pass pid=4242 inv=3 has a malformed line that was ignored (line 51); "
             "excluded\n",
             lp, lp);
    assert_string_equal(errs, want);
    free(out), free(errs);
    /* a log that adds nothing is a warning too */
    const char *cold[] = {"fit", ts_fixture("original-only-cold.log"), lp, NULL};
    assert_int_equal(ts_run_cli(cold, &out, &errs), 0);
    for (const char *l = errs; *l; l = strchr(l, '\n') + 1)
        if (strncmp(l, "hbg fit: warning: ", 18))
            fail_msg("a line without the prefix:\n%s", errs);
    assert_true(ts_contains(errs, "hbg fit: warning: "));
    assert_true(ts_contains(errs, "original-only-cold.log: every pass is the cold first pass of its rank (2); it "
                                  "adds nothing to the fit (run at least 2 rounds)\n"));
    free(out), free(errs);
}

/* --plot names a file: not '' (found out only at the rename, after all the
 * work), not '-' (the SVG would follow the table or JSON on stdout), and
 * never one of the logs. Each is refused before any log is read. */
static void test_plot_refusals(void **state)
{
    (void)state;
    gen g = {.warm = 2, .noise = 40};
    logs L;
    make_logs(&L, design, NDESIGN, &g);
    char *out, *errs;
    const char *empty[] = {"fit", "--plot", "", L.path[0], NULL};
    assert_int_equal(ts_run_cli(empty, &out, &errs), 2);
    assert_string_equal(errs, "hbg fit: --plot expects a file name\n");
    assert_string_equal(out, "");
    free(out), free(errs);
    const char *dash[] = {"fit", "--format", "json", "--plot=-", L.path[0], NULL};
    assert_int_equal(ts_run_cli(dash, &out, &errs), 2);
    assert_string_equal(errs, "hbg fit: --plot expects a file name, not '-': the plot cannot share standard output "
                              "with the results\n");
    assert_string_equal(out, "");
    free(out), free(errs);
    /* the plot over one of the logs: refused, the log unchanged */
    size_t n0, n1;
    char *before = ts_slurp(L.path[3], &n0);
    assert_non_null(before);
    const char *over[] = {"fit",     L.path[0], L.path[1], L.path[2], L.path[3],
                          L.path[4], L.path[5], "--plot",  L.path[3], NULL};
    assert_int_equal(ts_run_cli(over, &out, &errs), 2);
    char want[9000];
    snprintf(want, sizeof want, "hbg fit: refusing to write %s: it is the input %s\n", L.path[3], L.path[3]);
    assert_string_equal(errs, want);
    assert_string_equal(out, "");
    free(out), free(errs);
    char *after = ts_slurp(L.path[3], &n1);
    assert_non_null(after);
    assert_int_equal(n0, n1);
    assert_memory_equal(before, after, n0);
    free(before), free(after);
    drop_logs(&L);
}

/* A plot that cannot be written says where and why, and fails the command. */
static void test_plot_write_fails(void **state)
{
    (void)state;
    gen g = {.warm = 2, .noise = 40};
    logs L;
    make_logs(&L, design, NDESIGN, &g);
    char *out, *errs;
    assert_int_equal(run_fit(&L, "--plot", "/dev/full", NULL, &out, &errs), 2);
    assert_string_equal(errs, "hbg fit: cannot write /dev/full: No space left on device\n");
    free(out), free(errs);
    /* a plot that cannot be created at all is found before the logs are
     * read: no table under a failing status, no temporary left */
    assert_int_equal(run_fit(&L, "--plot", "/nonexistent-dir/fit.svg", NULL, &out, &errs), 2);
    assert_string_equal(errs, "hbg fit: cannot create /nonexistent-dir/fit.svg: No such file or directory\n");
    assert_string_equal(out, "");
    free(out), free(errs);
    char dir[] = "/tmp/hbg_fit_probe_XXXXXX", svg[64];
    assert_non_null(mkdtemp(dir));
    snprintf(svg, sizeof svg, "%s/fit.svg", dir);
    assert_int_equal(run_fit(&L, "--plot", svg, NULL, &out, &errs), 0);
    free(out), free(errs);
    assert_int_equal(unlink(svg), 0);
    assert_int_equal(rmdir(dir), 0); /* empty: the probe's temporary is gone */
    drop_logs(&L);
}

/* JSON past the writer's 64 KiB buffer goes to stdout's descriptor, not
 * through the stream: a failed write is still one line with its reason. */
static void test_json_on_a_full_stdout(void **state)
{
    (void)state;
    gen g = {.warm = 60};
    logs L;
    make_logs(&L, design, NDESIGN, &g);
    char *out, *errs;
    assert_int_equal(run_fit(&L, "--format", "json", NULL, &out, &errs), 0);
    if (strlen(out) <= 65536)
        fail_msg("%zu bytes of JSON: not past the writer's buffer", strlen(out));
    free(out), free(errs);
    const char *args[NDESIGN + 4] = {"fit", "--format", "json"};
    for (size_t i = 0; i < L.n; i++)
        args[3 + i] = L.path[i];
    args[3 + L.n] = NULL;
    const int where[2] = {FS_OUT_FULL, FS_OUT_CLOSED};
    const char *why[2] = {"hbg fit: cannot write standard output: No space left on device\n",
                          "hbg fit: cannot write standard output: Bad file descriptor\n"};
    for (int k = 0; k < 2; k++) {
        fs_spec spec = {.args = args, .out = where[k]};
        char *err = NULL;
        assert_int_equal(fs_run(&spec, 60, NULL, &err), 2);
        assert_string_equal(err, why[k]);
        free(err);
    }
    /* the plot asked for is drawn all the same: the fit was made */
    char dir[] = "/tmp/hbg_fit_full_XXXXXX", svg[64];
    assert_non_null(mkdtemp(dir));
    snprintf(svg, sizeof svg, "%s/fit.svg", dir);
    const char *pargs[NDESIGN + 4] = {"fit", "--plot", svg};
    for (size_t i = 0; i < L.n; i++)
        pargs[3 + i] = L.path[i];
    pargs[3 + L.n] = NULL;
    fs_spec ps = {.args = pargs, .out = FS_OUT_FULL};
    char *perr = NULL;
    assert_int_equal(fs_run(&ps, 60, NULL, &perr), 2);
    assert_string_equal(perr, why[0]);
    free(perr);
    assert_int_equal(access(svg, F_OK), 0);
    unlink(svg);
    rmdir(dir);
    drop_logs(&L);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_recovery),
        cmocka_unit_test(test_intervals_shrink),
        cmocka_unit_test(test_not_identifiable),
        cmocka_unit_test(test_mean_only),
        cmocka_unit_test(test_r2_of_costs_a_nanosecond_apart),
        cmocka_unit_test(test_large_offsets),
        cmocka_unit_test(test_superlinear_not_tested_is_null),
        cmocka_unit_test(test_superlinear),
        cmocka_unit_test(test_superlinear_needs_a_residual),
        cmocka_unit_test(test_superlinear_one_outlier),
        cmocka_unit_test(test_superlinear_two_outliers),
        cmocka_unit_test(test_superlinear_few_sizes),
        cmocka_unit_test(test_superlinear_pair_of_outliers),
        cmocka_unit_test(test_superlinear_relative_ends_are_no_pair),
        cmocka_unit_test(test_superlinear_whole_size_is_no_pair),
        cmocka_unit_test(test_superlinear_two_counts_ends_are_no_pair),
        cmocka_unit_test(test_bad_slots_leave_the_pass_out),
        cmocka_unit_test(test_min_per_log),
        cmocka_unit_test(test_skip_warm),
        cmocka_unit_test(test_skip_warm_counts_excluded_passes),
        cmocka_unit_test(test_counts_past_2_53_left_out),
        cmocka_unit_test(test_relative),
        cmocka_unit_test(test_relative_zero_cost),
        cmocka_unit_test(test_original_logs),
        cmocka_unit_test(test_t_quantile),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_plot),
        cmocka_unit_test(test_plot_edges),
        cmocka_unit_test(test_plot_legend_corner),
        cmocka_unit_test(test_same_log_twice),
        cmocka_unit_test(test_unreadable_log),
        cmocka_unit_test(test_warnings_are_prefixed),
        cmocka_unit_test(test_plot_refusals),
        cmocka_unit_test(test_plot_write_fails),
        cmocka_unit_test(test_json_on_a_full_stdout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
