/* `hbg compare` end to end on synthetic arms whose effect is known: the
 * verdicts, the exit status, the refusals, the flags and the formats, in
 * both runtimes' grammars. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/compare_gen.h"
#include "support/fault_support.h"
#include "support/tools_support.h"

#define REPS 5

typedef struct arms {
    char *dir;
    char *base[REPS], *measure[REPS];
    int n;
} arms;

/* Writes n repetitions: base from b, measure from m, with per-log seeds so
 * that no two logs share their noise; tweak(rep, &b, &m) may change one
 * repetition. */
static void make_arms(arms *a, int n, cg_spec b, cg_spec m, void (*tweak)(int, cg_spec *, cg_spec *))
{
    a->dir = cg_tempdir();
    a->n = n;
    for (int i = 0; i < n; i++) {
        cg_spec bi = b, mi = m;
        bi.seed = b.seed * 100 + (uint64_t)i;
        mi.seed = m.seed * 100 + (uint64_t)i + 50;
        if (tweak)
            tweak(i, &bi, &mi);
        char name[96];
        snprintf(name, sizeof name, "bind_qwen_numbers_%s_r%d.log", bi.commit ? bi.commit : "base", i + 1);
        a->base[i] = cg_write(a->dir, name, &bi);
        snprintf(name, sizeof name, "bind_qwen_numbers_%s_r%d.log", mi.commit ? mi.commit : "measure", i + 1);
        a->measure[i] = cg_write(a->dir, name, &mi);
    }
}

static void free_arms(arms *a)
{
    for (int i = 0; i < a->n; i++) {
        unlink(a->base[i]);
        unlink(a->measure[i]);
        free(a->base[i]);
        free(a->measure[i]);
    }
    rmdir(a->dir);
    free(a->dir);
}

/* hbg compare --base ... --measure ... EXTRA... */
static int compare(const arms *a, const char *const *extra, char **out, char **err)
{
    const char *args[64];
    int k = 0;
    args[k++] = "compare";
    args[k++] = "--base";
    for (int i = 0; i < a->n; i++)
        args[k++] = a->base[i];
    args[k++] = "--measure";
    for (int i = 0; i < a->n; i++)
        args[k++] = a->measure[i];
    for (int i = 0; extra && extra[i]; i++)
        args[k++] = extra[i];
    args[k] = NULL;
    return ts_run_cli(args, out, err);
}

/* The first line of the output. */
static char *first_line(const char *s)
{
    const char *e = strchr(s, '\n');
    return strndup(s, e ? (size_t)(e - s) : strlen(s));
}

static bool starts(const char *s, const char *prefix);
static void expect_in(const char *l, const char *want);

static cg_spec slower(cg_spec s)
{
    s.host_orch_scale = 1.10;
    return s;
}

/* --- verdicts ------------------------------------------------------------ */

static void known_shift(bool original)
{
    cg_spec b = cg_default("1a2b3c4", 1), m = slower(cg_default("5d6e7f8", 2));
    b.original = m.original = original;
    if (original)
        b.ranks = m.ranks = 2;
    arms a;
    make_arms(&a, REPS, b, m, NULL);
    char *out, *err;
    const char *t5[] = {"--threshold", "5", NULL};
    assert_int_equal(compare(&a, t5, &out, &err), 1);
    char *l = first_line(out);
    /* host_orch is 100 of the 105.9 us control plane: +10 us is +9.4 % */
    assert_true(strncmp(l, "verdict    slower: effect +9.", 29) == 0);
    assert_true(ts_contains(l, "sign test p = 0.03125 (5 of 5 repetitions agree)"));
    assert_true(ts_contains(l, "(exact)") || original);  /* 2 ranks: 50 passes an arm, past the exact limit */
    assert_true(ts_contains(out, "threshold  5 %: exit 1 when slower and the interval's lower bound"));
    assert_true(ts_contains(out, "flags      none\n"));
    assert_true(ts_contains(out, "base       1a2b3c4: 5 logs"));
    assert_true(ts_contains(out, "measure    5d6e7f8: 5 logs"));
    /* the segment that moved is visible: host_orch by ~+10 %, others ~0 */
    assert_true(ts_contains(out, "\nhost_orch          *"));
    assert_true(ts_contains(out, "\nruntime_init       c "));
    assert_string_equal(err, "");
    free(l), free(out), free(err);

    const char *t20[] = {"--threshold", "20", NULL};
    assert_int_equal(compare(&a, t20, &out, &err), 0);
    assert_true(strncmp(out, "verdict    slower:", 18) == 0);
    free(out), free(err);
    /* the default threshold, 2 % */
    assert_int_equal(compare(&a, NULL, &out, &err), 1);
    free(out), free(err);
    free_arms(&a);
}

static void test_known_shift_slower(void **st)
{
    (void)st;
    known_shift(false);
}

static void test_known_shift_slower_original(void **st)
{
    (void)st;
    known_shift(true);
}

/* The other direction: faster, exit 0 whatever the threshold. */
static void test_faster(void **st)
{
    (void)st;
    cg_spec b = slower(cg_default("1a2b3c4", 3)), m = cg_default("5d6e7f8", 4);
    arms a;
    make_arms(&a, REPS, b, m, NULL);
    char *out, *err;
    const char *t0[] = {"--threshold", "0", NULL};
    assert_int_equal(compare(&a, t0, &out, &err), 0);
    assert_true(strncmp(out, "verdict    faster: effect -", 27) == 0);
    free(out), free(err);
    free_arms(&a);
}

static void no_shift(bool original)
{
    cg_spec b = cg_default("1a2b3c4", 5), m = cg_default("5d6e7f8", 6);
    b.original = m.original = original;
    arms a;
    make_arms(&a, REPS, b, m, NULL);
    char *out, *err;
    assert_int_equal(compare(&a, NULL, &out, &err), 0);
    char *l = first_line(out);
    assert_true(strncmp(l, "verdict    no difference: ", 26) == 0);
    assert_true(ts_contains(l, "repetitions disagree in sign (expected under no effect)"));
    free(l), free(out), free(err);
    free_arms(&a);
}

static void test_no_shift_no_difference(void **st)
{
    (void)st;
    no_shift(false);
}

static void test_no_shift_no_difference_original(void **st)
{
    (void)st;
    no_shift(true);
}

/* Repetition 3's base ran on a loaded machine: every segment 30 % longer,
 * so its measure comes out faster while the other four are slower. */
static void contend_rep3(int rep, cg_spec *b, cg_spec *m)
{
    (void)m;
    if (rep == 2)
        b->all_scale = 1.30;
}

static void contended(bool original)
{
    cg_spec b = cg_default("1a2b3c4", 7), m = slower(cg_default("5d6e7f8", 8));
    b.original = m.original = original;
    b.control_scale = m.control_scale = 1.0;
    arms a;
    make_arms(&a, REPS, b, m, contend_rep3);
    char *out, *err;
    assert_int_equal(compare(&a, NULL, &out, &err), 0);
    char *l = first_line(out);
    assert_true(strncmp(l, "verdict    contended \xe2\x80\x94 rerun: the arms differ", 47) == 0);
    assert_true(ts_contains(l, " but repetition 3 ("));
    assert_true(ts_contains(l, " ns) disagrees in sign with the others: the run was contended"));
    free(l), free(out), free(err);
    free_arms(&a);
}

static void test_contended_repetition(void **st)
{
    (void)st;
    contended(false);
}

static void test_contended_repetition_original(void **st)
{
    (void)st;
    contended(true);
}

/* 60 repetitions of which every third is faster: the verdict line named
 * them into a fixed buffer until it ran out, ending in "54 (-100" with 57
 * and 60 unsaid. It names the first ten, each whole, then how many more;
 * JSON's summary is the same line. */
static void test_many_disagreeing_repetitions(void **st)
{
    (void)st;
    enum { N = 60 };
    char *dir = cg_tempdir(), *b[N], *m[N];
    const char *args[2 * N + 6] = {"compare", "--base"};
    int k = 2;
    for (int i = 0; i < N; i++) {
        char name[64];
        cg_spec bs = cg_default("1a2b3c4", 800 + (uint64_t)i), ms = slower(cg_default("5d6e7f8", 900 + (uint64_t)i));
        if (i % 3 == 2)
            ms.host_orch_scale = 0.97;
        snprintf(name, sizeof name, "b%d.log", i);
        b[i] = cg_write(dir, name, &bs);
        snprintf(name, sizeof name, "m%d.log", i);
        m[i] = cg_write(dir, name, &ms);
        args[k++] = b[i];
    }
    args[k++] = "--measure";
    for (int i = 0; i < N; i++)
        args[k++] = m[i];
    args[k] = NULL;
    char *out, *err;
    assert_int_equal(ts_run_cli(args, &out, &err), 0);
    char *l = first_line(out);
    const char *pre = "verdict    contended \xe2\x80\x94 rerun: the arms differ (Mann-Whitney one-sided p = ";
    if (strncmp(l, pre, strlen(pre)) != 0)
        fail_msg("%s", l);
    const char *r = strstr(l, " but repetitions 3 (-");
    assert_non_null(r);
    /* ten entries, whole, in order: 3, 6, ..., 30 */
    for (int i = 1; i <= 10; i++) {
        char e[32];
        snprintf(e, sizeof e, "%s %d (-", i == 1 ? "repetitions" : ",", 3 * i);
        r = strstr(r, e);
        if (!r)
            fail_msg("no '%s' in: %s", e, l);
    }
    assert_false(ts_contains(l, ", 33 ("));
    if (!ts_contains(r, " ns) and 10 more disagree in sign with the others: the run was contended; effect +"))
        fail_msg("%s", l);
    const char *js[] = {"--format", "json", NULL};
    args[k++] = js[0], args[k++] = js[1], args[k] = NULL;
    char *jout, *jerr;
    assert_int_equal(ts_run_cli(args, &jout, &jerr), 0);
    json_error_t je;
    json_t *j = json_loads(jout, 0, &je);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(j, "summary")), l + 11);
    json_decref(j);
    free(l), free(out), free(err), free(jout), free(jerr);
    for (int i = 0; i < N; i++) {
        unlink(b[i]), unlink(m[i]);
        free(b[i]), free(m[i]);
    }
    rmdir(dir);
    free(dir);
}


/* The control segment itself moved: the arms ran on different machine
 * states, whatever the effect. */
static void test_control_moved_contended(void **st)
{
    (void)st;
    cg_spec b = cg_default("1a2b3c4", 9), m = slower(cg_default("5d6e7f8", 10));
    m.control_scale = 1.5;
    arms a;
    make_arms(&a, REPS, b, m, NULL);
    char *out, *err;
    assert_int_equal(compare(&a, NULL, &out, &err), 0);
    char *l = first_line(out);
    assert_true(strncmp(l, "verdict    contended \xe2\x80\x94 rerun: the control segment runtime_init itself differs", 77) ==
                0);
    free(l), free(out), free(err);
    /* another control that the change spared gives the verdict back */
    const char *ctl[] = {"--control", "args", NULL};
    assert_int_equal(compare(&a, ctl, &out, &err), 1);
    assert_true(strncmp(out, "verdict    slower:", 18) == 0);
    assert_true(ts_contains(out, "\nargs               c "));
    free(out), free(err);
    free_arms(&a);
}

/* A control of a few clock reads witnesses nothing: the floor is the range
 * of the repetitions' relative deltas, the control is not tested, and a
 * flag says so. */
static void test_short_control_falls_back_to_delta_range(void **st)
{
    (void)st;
    cg_spec b = cg_default("1a2b3c4", 43), m = slower(cg_default("5d6e7f8", 44));
    b.control_scale = m.control_scale = 0.005;   /* runtime_init 45 ns */
    b.control_noise = m.control_noise = 0.3;
    arms a;
    make_arms(&a, REPS, b, m, NULL);
    char *out, *err;
    assert_int_equal(compare(&a, NULL, &out, &err), 1);
    assert_true(strncmp(out, "verdict    slower: ", 19) == 0);
    assert_true(ts_contains(out, "\nflags      the control runtime_init is too short to witness noise (its minimum is "));
    assert_true(ts_contains(out, "\ncontrol    runtime_init: too short to witness noise (minimum "));
    free(out), free(err);
    free_arms(&a);
}

/* The machine slows down over the run, 6 % a repetition, both arms of a
 * repetition alike: the interleaving cancels that, and a floor that
 * counted it (the arms' own spread, 24 % here) called this 5-of-5 -21 %
 * "no difference". The deltas' own range is a few %. */
static void drift_rep(int rep, cg_spec *b, cg_spec *m)
{
    b->all_scale = m->all_scale = 1 + 0.06 * rep;
}

static void test_drift_is_not_noise(void **st)
{
    (void)st;
    cg_spec b = cg_default("1a2b3c4", 45), m = cg_default("5d6e7f8", 46);
    b.control_scale = m.control_scale = 0.005;   /* runtime_init 45 ns */
    m.host_orch_scale = 0.80;
    arms a;
    make_arms(&a, REPS, b, m, drift_rep);
    char *out, *err;
    assert_int_equal(compare(&a, NULL, &out, &err), 0);
    char *l = first_line(out);
    if (strncmp(l, "verdict    faster: effect -2", 28) != 0)
        fail_msg("%s", out);
    assert_true(ts_contains(l, "(5 of 5 repetitions agree)"));
    /* the floor printed is the deltas' range, well under the effect */
    const char *c = strstr(out, "\ncontrol    runtime_init: too short to witness noise (minimum ");
    assert_non_null(c);
    c = strstr(c, "noise floor ");
    assert_non_null(c);
    assert_true(strtod(c + 12, NULL) < 5);
    assert_true(ts_contains(c, " %, the range of the repetitions' relative deltas\n"));
    free(l), free(out), free(err);
    const char *js[] = {"--format", "json", NULL};
    assert_int_equal(compare(&a, js, &out, &err), 0);
    c = strstr(out, "\"arm_spread_pct\": ");
    assert_non_null(c);
    assert_true(strtod(c + 18, NULL) > 20);
    c = strstr(out, "\"delta_range_pct\": ");
    assert_non_null(c);
    assert_true(strtod(c + 19, NULL) < 5);
    free(out), free(err);
    free_arms(&a);
}

/* One repetition with a control too short to witness noise: the floor
 * would be the range of the repetitions' relative deltas, and one
 * repetition's delta has none. It was printed as 0.00 %, as if there
 * were no noise at all, and at an alpha where one repetition's sign test
 * reaches alpha every effect cleared it: slower. */
static void test_one_repetition_gives_no_delta_range(void **st)
{
    (void)st;
    cg_spec b = cg_default("1a2b3c4", 43), m = slower(cg_default("5d6e7f8", 44));
    b.control_scale = m.control_scale = 0.005; /* runtime_init 45 ns */
    arms a;
    make_arms(&a, 1, b, m, NULL);
    char *out, *err;
    assert_int_equal(compare(&a, NULL, &out, &err), 0);
    if (!starts(out, "verdict    no difference: one repetition cannot tell the effect from the levels its two arms "
                     "happened to run at: measure 5 or more; effect +8.50 % (+8967 ns; "))
        fail_msg("%s", out);
    expect_in(out, "\nflags      the control runtime_init is too short to witness noise (its minimum is 45 ns, under "
                   "1000 ns: a few clock reads); the noise floor would instead be the range of the repetitions' "
                   "relative deltas, but one repetition's has none: there is no floor, and the control is not "
                   "tested; name a longer untouched segment with --control\n");
    expect_in(out, "\ncontrol    runtime_init: too short to witness noise (minimum 45 ns); noise floor: none with one "
                   "repetition, whose relative delta has no range\n");
    assert_false(ts_contains(out, "0.00 %"));
    free(out), free(err);
    const char *js[] = {"--format", "json", NULL};
    assert_int_equal(compare(&a, js, &out, &err), 0);
    json_t *j = json_loads(out, 0, NULL);
    assert_non_null(j);
    json_t *c = json_object_get(j, "control");
    assert_true(json_is_null(json_object_get(c, "noise_floor_pct")));
    assert_true(json_is_null(json_object_get(c, "delta_range_pct")));
    /* nor does an arm's one minimum spread: it was 0 */
    assert_true(json_is_null(json_object_get(c, "arm_spread_pct")));
    json_decref(j);
    free(out), free(err);
    /* an alpha at which one repetition's sign test reaches it: no floor
     * for the effect to clear, where 0 % let it through (exit 1, slower) */
    const char *a6[] = {"--alpha", "0.6", NULL};
    assert_int_equal(compare(&a, a6, &out, &err), 0);
    char *l = first_line(out);
    assert_string_equal(l, "verdict    no difference: the effect has no noise floor to clear: the control runtime_init "
                           "is too short to witness noise, and one repetition's relative delta has no range to stand "
                           "for it; effect +8.50 % (+8967 ns; 95 % CI +8112..+9750 ns) of the base minimum 105514 ns; "
                           "sign test p = 0.5 (the one repetition agrees)");
    free(l), free(out), free(err);
    free_arms(&a);
}

/* 2 + 2 warm passes have no 95 % interval: the whole range of the four
 * differences is given, labelled with what it covers (2/3), and flagged. */
static void test_too_few_passes_for_an_interval(void **st)
{
    (void)st;
    cg_spec b = cg_default("1a2b3c4", 47), m = slower(cg_default("5d6e7f8", 48));
    b.rounds = m.rounds = 3;
    arms a;
    make_arms(&a, 1, b, m, NULL);
    char *out, *err;
    assert_int_equal(compare(&a, NULL, &out, &err), 0);
    char *l = first_line(out);
    if (!ts_contains(l, " ns; whole range, only a 66 % CI: +"))
        fail_msg("%s", out);
    assert_false(ts_contains(l, "95 % CI"));
    assert_true(ts_contains(out, "\nflags      2 base and 2 measure warm passes are too few for a 95 % interval of "
                                 "the effect: the one given is the whole range of their differences, which covers "
                                 "66 %; measure more rounds\n"));
    free(l), free(out), free(err);
    const char *js[] = {"--format", "json", NULL};
    assert_int_equal(compare(&a, js, &out, &err), 0);
    assert_true(ts_contains(out, "\"ci_level\": 0.66666"));
    free(out), free(err);
    free_arms(&a);
}

/* A base of 0 ns has no percentages: n/a in the verdict, the rows, JSON
 * (null) and CSV (empty), never a share of a made-up 1 ns or a 0 %. */
static void test_zero_base_has_no_percentages(void **st)
{
    (void)st;
    cg_spec b = cg_default("1a2b3c4", 49), m = cg_default("5d6e7f8", 50);
    b.all_scale = 0;
    arms a;
    make_arms(&a, REPS, b, m, NULL);
    char *out, *err;
    assert_int_equal(compare(&a, NULL, &out, &err), 1); /* slower past any threshold */
    char *l = first_line(out);
    if (!ts_contains(l, "verdict    slower: effect n/a % (+"))
        fail_msg("%s", out);
    assert_true(ts_contains(l, " of the base minimum 0 ns"));
    assert_true(ts_contains(out, "lower bound (n/a %: +"));
    assert_true(ts_contains(out, " ns over a base minimum of 0 ns) exceeds it: it does\n"));

    /* nor a floor of relative deltas of 0 ns (it was 4498478 % of 1 ns) */
    assert_true(ts_contains(out, "\ncontrol    runtime_init: too short to witness noise (minimum 0 ns); noise floor "
                                 "n/a %, the range of the repetitions' relative deltas\n"));
    assert_true(ts_contains(out, "\nhost_orch          *             0 "));
    assert_true(ts_contains(out, "       n/a\n"));
    assert_false(ts_contains(out, "+0.00%"));
    free(l), free(out), free(err);
    const char *js[] = {"--format", "json", NULL};
    assert_int_equal(compare(&a, js, &out, &err), 1);
    assert_true(ts_contains(out, "\"pct\": null"));
    assert_true(ts_contains(out, "\"delta_min_pct\": null"));
    assert_true(ts_contains(out, "\"delta_range_pct\": null"));
    assert_true(ts_contains(out, "\"noise_floor_pct\": null"));
    /* nor a spread relative to a minimum of 0 ns: the base arm's was 0 */
    assert_true(ts_contains(out, "\"arm_spread_pct\": null"));
    free(out), free(err);
    const char *cs[] = {"--format", "csv", NULL};
    assert_int_equal(compare(&a, cs, &out, &err), 1);
    assert_true(ts_contains(out, ",host_orch,1,0,0,"));
    free(out), free(err);
    /* the plot's title gives the shift in ns (it said "n/a % (95 % CI
     * n/a..n/a %)", no number at all) */
    char *svg = ts_temp_file("", 0, ".svg");
    const char *pl[] = {"--plot", svg, NULL};
    assert_int_equal(compare(&a, pl, &out, &err), 1);
    free(out), free(err);
    char *text = ts_slurp(svg, NULL);
    assert_non_null(text);
    assert_true(ts_contains(text, "slower: +"));
    assert_true(ts_contains(text, " ns; no share of a 0 ns base); Mann-Whitney p = "));
    assert_false(ts_contains(text, "n/a"));
    free(text);
    unlink(svg);
    free(svg);
    free_arms(&a);

    /* 0 ns in both arms: no percentage either (0 / 0), and every delta 0
     * disagrees with nothing */
    m.all_scale = 0;
    make_arms(&a, REPS, b, m, NULL);
    assert_int_equal(compare(&a, NULL, &out, &err), 0);
    l = first_line(out);
    if (!starts(l, "verdict    no difference: the test does not clear alpha = 0.05"))
        fail_msg("%s", out);
    assert_true(ts_contains(l, "; effect n/a % (+0 ns"));
    assert_true(
        ts_contains(l, " of the base minimum 0 ns; all 5 repetitions show no difference; sign test p = 1 (no delta "
                       "to sign)"));
    assert_true(ts_contains(out, "\nhost_orch          *             0            0           +0       n/a "));
    assert_true(ts_contains(out, "lower bound (n/a %: +0 ns over a base minimum of 0 ns) exceeds it: no\n"));
    free(l), free(out), free(err);
    free_arms(&a);
}

/* A base minimum of 0 ns in one repetition: that arm's spread (max/min - 1
 * over the repetitions' minima) is relative to 0 and does not exist. It
 * was 0, and the arms' spread was the measure arm's alone. */
static void zero_base_rep2(int rep, cg_spec *b, cg_spec *m)
{
    (void)m;
    if (rep == 1)
        b->all_scale = 0;
}

static void test_zero_base_minimum_has_no_arm_spread(void **st)
{
    (void)st;
    cg_spec b = cg_default("1a2b3c4", 49), m = cg_default("5d6e7f8", 50);
    arms a;
    make_arms(&a, REPS, b, m, zero_base_rep2);
    char *out, *err;
    const char *js[] = {"--format", "json", NULL};
    compare(&a, js, &out, &err);
    json_t *j = json_loads(out, 0, NULL);
    if (!j)
        fail_msg("%s%s", out, err);
    json_t *c = json_object_get(j, "control");
    assert_true(json_is_null(json_object_get(c, "arm_spread_pct")));
    assert_true(json_is_null(json_object_get(c, "delta_range_pct")));
    json_decref(j);
    free(out), free(err);
    /* and with every minimum above 0 ns, a spread it is */
    free_arms(&a);
    make_arms(&a, REPS, b, m, NULL);
    assert_int_equal(compare(&a, js, &out, &err), 0);
    j = json_loads(out, 0, NULL);
    assert_non_null(j);
    assert_true(json_is_number(json_object_get(json_object_get(j, "control"), "arm_spread_pct")));
    json_decref(j);
    free(out), free(err);
    free_arms(&a);
}

/* A control of 0 ns in the base arm has no relative delta: each
 * repetition's control_delta_pct was a share of 1 ns ("+900800 %" of a
 * 9008 ns measure), where the control's own row said null. */
static void test_zero_control_has_no_relative_delta(void **st)
{
    (void)st;
    cg_spec b = cg_default("1a2b3c4", 49), m = cg_default("5d6e7f8", 50);
    b.control_scale = 0;
    arms a;
    make_arms(&a, 2, b, m, NULL);
    char *out, *err;
    const char *js[] = {"--format", "json", NULL};
    assert_int_equal(compare(&a, js, &out, &err), 0);
    json_t *j = json_loads(out, 0, NULL);
    assert_non_null(j);
    for (size_t i = 0; i < 2; i++) {
        json_t *r = json_array_get(json_object_get(j, "per_repetition"), i);
        assert_true(json_is_null(json_object_get(r, "control_delta_pct")));
        json_t *row = json_array_get(json_object_get(r, "rows"), 6);
        assert_string_equal(json_string_value(json_object_get(row, "row")), "runtime_init");
        assert_int_equal(json_integer_value(json_object_get(row, "base_min_ns")), 0);
        assert_true(json_is_null(json_object_get(row, "delta_min_pct")));
    }
    json_decref(j);
    free(out), free(err);
    free_arms(&a);
}

static void set_dur(const char *path, const char *after, const char *mark, const char *dur);

/* A median's change is a share of the base median, its half included: a
 * base median of 6.5 ns was taken as 6 (+0.5 ns was "+8.33 %", not
 * +7.69 %), and one of 0.5 ns as 0, a base with no percentage. */
static void test_median_percentage_counts_the_half(void **st)
{
    (void)st;
    static const char *const base_heap[2][4] = {{"6", "6", "7", "7"}, {"0", "0", "1", "1"}};
    static const char *const measure_heap[2] = {"7", "1"};
    static const char *const table[2] = {
        "\ngm_heap                          6            7           +1   +16.67%            6.5              7      "
        "     +0.5    +7.69%\n",
        "\ngm_heap                          0            1           +1       n/a            0.5              1      "
        "     +0.5  +100.00%\n"};
    static const char *const json[2] = {"\"delta_median_pct\": 7.69231}", "\"delta_median_pct\": 100}"};
    static const char *const csv[2] = {",6,7,1,16.6667,6.5,7,0.5,7.6923\n", ",0,1,1,,0.5,1,0.5,100.0000\n"};
    for (int c = 0; c < 2; c++) {
        cg_spec b = cg_default("1a2b3c4", 51), m = cg_default("5d6e7f8", 52);
        b.rounds = m.rounds = 5; /* four warm passes: the median is a half */
        arms a;
        make_arms(&a, 1, b, m, NULL);
        char inv[16];
        for (int k = 0; k < 4; k++) { /* the warm passes, inv=2..5 */
            snprintf(inv, sizeof inv, "inv=%d\n", k + 2);
            set_dur(a.base[0], inv, "phase=gm_heap ", base_heap[c][k]);
            set_dur(a.measure[0], inv, "phase=gm_heap ", measure_heap[c]);
        }
        char *out, *err;
        assert_int_equal(compare(&a, NULL, &out, &err), 0);
        expect_in(out, table[c]);
        free(out), free(err);
        const char *js[] = {"--format", "json", NULL};
        assert_int_equal(compare(&a, js, &out, &err), 0);
        expect_in(out, json[c]);
        free(out), free(err);
        const char *cs[] = {"--format", "csv", NULL};
        assert_int_equal(compare(&a, cs, &out, &err), 0);
        expect_in(out, csv[c]);
        free(out), free(err);
        free_arms(&a);
    }
}

/* An effect inside the noise floor is no difference, however significant. */
static void test_effect_inside_noise_floor(void **st)
{
    (void)st;
    cg_spec b = cg_default("1a2b3c4", 11), m = cg_default("5d6e7f8", 12);
    b.noise = m.noise = 0.0005;
    b.control_noise = m.control_noise = 0.05;
    m.host_orch_scale = 1.003;     /* +0.3 %, every pass */
    arms a;
    make_arms(&a, REPS, b, m, NULL);
    char *out, *err;
    assert_int_equal(compare(&a, NULL, &out, &err), 0);
    char *l = first_line(out);
    assert_true(strncmp(l, "verdict    no difference: the effect is inside the noise floor of ", 66) == 0);
    free(l), free(out), free(err);
    free_arms(&a);
}

/* One repetition's control has one |relative delta|: the control line and
 * the verdict called it "the largest ... across repetitions" of a single
 * value. Text and JSON say what it is. */
static void test_one_repetitions_control_delta(void **st)
{
    (void)st;
    cg_spec b = cg_default("1a2b3c4", 11), m = cg_default("5d6e7f8", 12);
    b.noise = m.noise = 0.0005;
    b.control_noise = m.control_noise = 0.05;
    m.host_orch_scale = 1.003;
    b.rounds = m.rounds = 40;
    arms a;
    make_arms(&a, 1, b, m, NULL);
    char *out, *err;
    assert_int_equal(compare(&a, NULL, &out, &err), 0);
    char *l = first_line(out);
    assert_string_equal(l, "verdict    no difference: the effect is inside the noise floor of 0.36 % (the control's "
                           "|relative delta| in the one repetition); effect +0.28 % (+295 ns; 95 % CI +281..+307 ns) "
                           "of the base minimum 105850 ns; sign test p = 0.5 (the one repetition agrees): one "
                           "repetition is too few for it to reach alpha = 0.05 and has no spread for a t-test");
    expect_in(out, "\ncontrol    runtime_init: noise floor 0.36 % (the |relative delta| of its minimum in the one "
                   "repetition); Mann-Whitney two-sided p = 0.321 between the arms\n");
    assert_false(ts_contains(out, "largest"));
    free(l), free(out), free(err);
    const char *js[] = {"--format", "json", NULL};
    assert_int_equal(compare(&a, js, &out, &err), 0);
    json_t *j = json_loads(out, 0, NULL);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(j, "summary")),
                        "no difference: the effect is inside the noise floor of 0.36 % (the control's |relative "
                        "delta| in the one repetition); effect +0.28 % (+295 ns; 95 % CI +281..+307 ns) of the base "
                        "minimum 105850 ns; sign test p = 0.5 (the one repetition agrees): one repetition is too few "
                        "for it to reach alpha = 0.05 and has no spread for a t-test");
    /* the floor is that repetition's control delta, unsigned */
    json_t *c = json_object_get(j, "control");
    double floor = json_real_value(json_object_get(c, "noise_floor_pct"));
    json_t *r0 = json_array_get(json_object_get(j, "per_repetition"), 0);
    assert_true(floor > 0.36 && floor < 0.365);
    assert_true(floor == -json_real_value(json_object_get(r0, "control_delta_pct")));
    json_decref(j);
    free(out), free(err);
    free_arms(&a);
}

/* Fewer repetitions than the sign test needs (five at 0.05): a verdict
 * rests on a t-test of the repetitions' deltas. Two repetitions that
 * agree closely back one; two that agree in sign only, 9 % and 1 %, do
 * not, however significant the pooled passes; one repetition never
 * does. Before, each of these was called slower. */
static bool starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static void rep2_apart(int rep, cg_spec *b, cg_spec *m)
{
    (void)b;
    m->host_orch_scale = rep ? 1.01 : 1.10;
}

static void test_few_repetitions_rest_on_a_t_test(void **st)
{
    (void)st;
    cg_spec b = cg_default("1a2b3c4", 61), m = slower(cg_default("5d6e7f8", 62));
    arms a;
    make_arms(&a, 2, b, m, NULL);
    char *out, *err;
    assert_int_equal(compare(&a, NULL, &out, &err), 1);
    char *l = first_line(out);
    if (strncmp(l, "verdict    slower: effect +9.", 29) != 0)
        fail_msg("%s", out);
    assert_true(ts_contains(l, "sign test p = 0.25 (2 of 2 repetitions agree), too few repetitions for it to "
                               "reach alpha = 0.05; t-test of the repetitions' deltas two-sided p = "));
    assert_true(ts_contains(l, ", 1 df)"));
    free(l), free(out), free(err);
    const char *js[] = {"--format", "json", NULL};
    assert_int_equal(compare(&a, js, &out, &err), 1);
    json_t *j = json_loads(out, 0, NULL);
    assert_non_null(j);
    json_t *tt = json_object_get(j, "repetitions_t_test");
    assert_non_null(tt);
    assert_int_equal(json_integer_value(json_object_get(tt, "df")), 1);
    assert_true(json_real_value(json_object_get(tt, "p")) < 0.05);
    assert_true(json_is_true(json_object_get(tt, "backs_verdict")));
    json_decref(j);
    free(out), free(err);
    free_arms(&a);

    make_arms(&a, 2, b, m, rep2_apart);
    assert_int_equal(compare(&a, NULL, &out, &err), 0);
    l = first_line(out);
    if (!starts(l, "verdict    no difference: the repetitions' deltas do not clear alpha = 0.05 by a t-test "
                   "(two-sided p = "))
        fail_msg("%s", out);
    assert_true(ts_contains(l, "), and 2 repetitions are too few for the sign test: measure 5 or more; effect +"));
    free(l), free(out), free(err);
    free_arms(&a);

    make_arms(&a, 1, b, m, NULL);
    assert_int_equal(compare(&a, NULL, &out, &err), 0);
    l = first_line(out);
    if (!starts(l, "verdict    no difference: one repetition cannot tell the effect from the levels its two arms "
                   "happened to run at: measure 5 or more; effect +9."))
        fail_msg("%s", out);
    /* in the singular, as it once was not ("0 of 1 repetitions disagree",
     * "(1 of 1 repetitions agree)"), and without "the one repetition does
     * not disagree in sign (expected under no effect)": the sign test's
     * count says it agrees */
    if (!ts_contains(l, " ns; sign test p = 0.5 (the one repetition agrees): one repetition is too few for it to reach "
                        "alpha = 0.05 and has no spread for a t-test"))
        fail_msg("%s", l);
    free(l), free(out), free(err);
    /* and its JSON shows no t-test: null, not t = 0, df = 0, p = 1 */
    const char *j1[] = {"--format", "json", NULL};
    assert_int_equal(compare(&a, j1, &out, &err), 0);
    j = json_loads(out, 0, NULL);
    assert_non_null(j);
    tt = json_object_get(j, "repetitions_t_test");
    assert_true(json_is_null(json_object_get(tt, "t")) && json_is_null(json_object_get(tt, "df")) &&
                json_is_null(json_object_get(tt, "p")));
    assert_true(json_is_false(json_object_get(tt, "backs_verdict")));
    json_decref(j);
    free(out), free(err);
    /* a larger alpha needs fewer: 4 at 0.1 */
    const char *a1[] = {"--alpha", "0.1", NULL};
    assert_int_equal(compare(&a, a1, &out, &err), 0);
    l = first_line(out);
    if (!starts(l, "verdict    no difference: one repetition cannot tell the effect from the levels its two arms "
                   "happened to run at: measure 4 or more; "))
        fail_msg("%s", out);
    free(l), free(out), free(err);
    free_arms(&a);
}

/* --- refusals ------------------------------------------------------------ */

/* Repetition 1's measure arm is its base arm, pass for pass: its delta is
 * exactly 0, which neither disagrees in sign (contended) nor backs the
 * effect the other four show. */
static void tie_rep1(int rep, cg_spec *b, cg_spec *m)
{
    if (rep == 0) {
        *m = *b;
        m->commit = "5d6e7f8";
    }
}

static void test_a_zero_delta_is_no_disagreement(void **st)
{
    (void)st;
    cg_spec b = cg_default("1a2b3c4", 61), m = slower(cg_default("5d6e7f8", 62));
    b.host_orch_scale = 1.0;
    m.host_orch_scale = 1.3;
    arms a;
    make_arms(&a, REPS, b, m, tie_rep1);
    char *out, *err;
    assert_int_equal(compare(&a, NULL, &out, &err), 0);
    char *l = first_line(out);
    if (!starts(l, "verdict    no difference: the arms differ (Mann-Whitney one-sided p = "))
        fail_msg("%s", out);
    assert_true(ts_contains(l, ", slower) but repetition 1 (+0 ns) shows no delta (the arms' minima are equal "
                               "there): not every repetition backs the effect; effect +"));
    /* the repetition with no delta is the reason, said once: it was
     * counted again after the effect ("1 of 5 repetitions shows no
     * delta") */
    expect_in(l, " ns; sign test p = 0.1875 (4 of 5 repetitions agree)");
    assert_false(ts_contains(l, "1 of 5 repetitions shows no delta"));
    free(l), free(out), free(err);
    const char *js[] = {"--format", "json", NULL};
    assert_int_equal(compare(&a, js, &out, &err), 0);
    assert_true(ts_contains(out, "\"sign_test\": {\"agree\": 4, \"disagree\": 0, \"repetitions\": 5,"));
    free(out), free(err);
    free_arms(&a);
}

/* The title of the plot of the arms a, with extra options. */
static char *plot_title(const arms *a)
{
    char *svg = ts_temp_file("", 0, ".svg"), *out, *err;
    const char *pl[] = {"--plot", svg, NULL};
    assert_int_equal(compare(a, pl, &out, &err), 0);
    free(out), free(err);
    char *text = ts_slurp(svg, NULL);
    assert_non_null(text);
    unlink(svg);
    free(svg);
    return text;
}

/* Counts of one in the singular, as they once were not: "1 warm passes",
 * "(1 of 2 repetitions agree)", "1 of 5 repetitions disagree in sign". */
static void test_counts_of_one_in_the_singular(void **st)
{
    (void)st;
    /* a log of one warm pass an arm */
    cg_spec b = cg_default("1a2b3c4", 63), m = slower(cg_default("5d6e7f8", 64));
    b.rounds = m.rounds = 2;
    arms a;
    make_arms(&a, 1, b, m, NULL);
    char *out, *err;
    assert_int_equal(compare(&a, NULL, &out, &err), 0);
    if (!ts_contains(out, "\nbase       1a2b3c4: 1 log, 1 warm pass; min ") ||
        !ts_contains(out, "\nmeasure    5d6e7f8: 1 log, 1 warm pass; min "))
        fail_msg("%s", out);
    free(out), free(err);
    free_arms(&a);
    /* one repetition of two agrees, the other shows no delta */
    b = cg_default("1a2b3c4", 61), m = slower(cg_default("5d6e7f8", 62));
    m.host_orch_scale = 1.3;
    make_arms(&a, 2, b, m, tie_rep1);
    assert_int_equal(compare(&a, NULL, &out, &err), 0);
    char *l = first_line(out);
    if (!ts_contains(l, " ns; 1 of 2 repetitions shows no delta; sign test p = 0.75 (1 of 2 repetitions agrees), too "
                        "few repetitions"))
        fail_msg("%s", l);
    free(l), free(out), free(err);
    char *t = plot_title(&a);
    if (!ts_contains(t, "; 1 of 2 repetitions agrees</title>"))
        fail_msg("%s", t);
    free(t);
    free_arms(&a);
    /* one repetition of five disagrees in sign: the plot's title */
    b = cg_default("1a2b3c4", 7), m = slower(cg_default("5d6e7f8", 8));
    b.control_scale = m.control_scale = 1.0;
    make_arms(&a, REPS, b, m, contend_rep3);
    t = plot_title(&a);
    if (!ts_contains(t, "contended \xe2\x80\x94 rerun: 1 of 5 repetitions disagrees in sign; +"))
        fail_msg("%s", t);
    free(t);
    free_arms(&a);
}

static void tie_all(int rep, cg_spec *b, cg_spec *m)
{
    (void)rep;
    *m = *b;
    m->commit = "5d6e7f8";
}

/* Repetition 2's base ran on a loaded machine, as contend_rep3's 3. */
/* Of two repetitions, the second's measure 0.5 % faster where the
 * first's is 10 % slower: it disagrees, and the pooled passes still
 * differ. */
static void contend_rep2(int rep, cg_spec *b, cg_spec *m)
{
    b->rounds = m->rounds = 30;
    if (rep == 1)
        m->host_orch_scale = 0.995;
}

static void tie1_contend3(int rep, cg_spec *b, cg_spec *m)
{
    tie_rep1(rep, b, m);
    contend_rep3(rep, b, m);
}

/* One repetition, pooled over 29 warm passes an arm: host_orch scale x
 * in the measure, whose passes jitter by 40 %. */
static void make_one_noisy(arms *a, uint64_t seed, double x)
{
    cg_spec b = cg_default("1a2b3c4", seed), m = cg_default("5d6e7f8", seed + 100);
    b.rounds = m.rounds = 30;
    m.host_orch_scale = x;
    m.noise = 0.4;
    make_arms(a, 1, b, m, NULL);
}

/* The verdict's first line of the arms a (exit 0). */
static char *verdict_of(const arms *a)
{
    char *out, *err;
    assert_int_equal(compare(a, NULL, &out, &err), 0);
    char *l = first_line(out);
    free(out), free(err);
    return l;
}

static void expect_in(const char *l, const char *want)
{
    if (!ts_contains(l, want))
        fail_msg("'%s' lacks '%s'", l, want);
}

/* Small counts in plain words, as they once were not: "the one repetition
 * does not disagree in sign, 1 with no delta", "0 of 2 repetitions
 * disagree in sign, 2 with no delta (expected under no effect)", and
 * "repetition 1 (...) disagrees in sign with the others" of one
 * repetition, which has no others. */
static void test_small_counts_in_words(void **st)
{
    (void)st;
    /* one repetition whose arms are the same passes */
    cg_spec b = cg_default("1a2b3c4", 61), m = cg_default("5d6e7f8", 62);
    arms a;
    make_arms(&a, 1, b, m, tie_all);
    char *l = verdict_of(&a);
    expect_in(l, " ns; the one repetition shows no difference; sign test p = 1 (no delta to sign): one "
                 "repetition is too few for it to reach alpha = 0.05 and has no spread for a t-test");
    free(l);
    /* and the plot's title, which said "the one repetition does not
     * agree", as of one that disagrees */
    char *t = plot_title(&a);
    expect_in(t, "<title>no difference: +0.00 % = +0 ns (95 % CI -0.41..+0.41 %); Mann-Whitney p = 0.587; the one "
                 "repetition shows no difference</title>");
    free(t);
    free_arms(&a);
    /* two such */
    make_arms(&a, 2, b, m, tie_all);
    l = verdict_of(&a);
    expect_in(l, " ns; both repetitions show no difference; sign test p = 1 (no delta to sign), too few "
                 "repetitions for it to reach alpha = 0.05; ");
    free(l);
    t = plot_title(&a);
    expect_in(t, "; both repetitions show no difference</title>");
    free(t);
    free_arms(&a);
    /* one repetition that disagrees with a shift too small to clear alpha */
    make_one_noisy(&a, 3, 1.02);
    l = verdict_of(&a);
    if (!starts(l, "verdict    no difference: the test does not clear alpha = 0.05 (Mann-Whitney one-sided p = "))
        fail_msg("%s", l);
    expect_in(l, " ns; the one repetition disagrees in sign (expected under no effect); sign test p = 1 (the one "
                 "repetition does not agree): one repetition is too few");
    free(l);
    free_arms(&a);
    /* and with one that clears it: no others to disagree with */
    make_one_noisy(&a, 1, 1.3);
    l = verdict_of(&a);
    if (!starts(l, "verdict    contended \xe2\x80\x94 rerun: the arms differ (Mann-Whitney one-sided p = "))
        fail_msg("%s", l);
    expect_in(l, ", slower) but the one repetition (-19224 ns) disagrees in sign with the effect: the run was "
                 "contended; effect +");
    free(l);
    free_arms(&a);
    /* of two, one disagrees: with the one other, not "the others" */
    b = cg_default("1a2b3c4", 7), m = slower(cg_default("5d6e7f8", 8));
    b.control_scale = m.control_scale = 1.0;
    make_arms(&a, 2, b, m, contend_rep2);
    l = verdict_of(&a);
    if (!starts(l, "verdict    contended \xe2\x80\x94 rerun: the arms differ (Mann-Whitney one-sided p = 0.00168, "
                   "slower) but repetition 2 (-435 ns) disagrees in sign with the other: the run was contended; "
                   "effect +"))
        fail_msg("%s", l);
    free(l);
    free_arms(&a);
    /* of five, one shows no delta and one disagrees: the others are not
     * all of the effect's sign */
    b = cg_default("1a2b3c4", 7), m = slower(cg_default("5d6e7f8", 8));
    b.control_scale = m.control_scale = 1.0;
    make_arms(&a, REPS, b, m, tie1_contend3);
    l = verdict_of(&a);
    expect_in(l, ", slower) but repetition 3 (-22247 ns) disagrees in sign with the effect: the run was contended; ");
    free(l);
    free_arms(&a);
}

static void set_dur(const char *path, const char *after, const char *mark, const char *dur);

/* n repetitions whose passes have no jitter, the measure's host_orch
 * 5000 ns longer in each warm pass but its first (inv=2): each
 * repetition's minimum is the same in both arms, a delta of exactly 0,
 * while 4 of the measure's 5 warm passes are slower. */
static void make_equal_minima(arms *a, int n)
{
    cg_spec b = cg_default("1a2b3c4", 81), m = cg_default("5d6e7f8", 82);
    b.noise = m.noise = 0;
    make_arms(a, n, b, m, NULL);
    for (int i = 0; i < n; i++)
        for (int inv = 3; inv <= 6; inv++) {
            char after[16];
            snprintf(after, sizeof after, "inv=%d\n", inv);
            set_dur(a->measure[i], after, "phase=host_orch ", "105000");
        }
}

/* The pooled passes differ but no repetition's minimum does: none backs
 * the effect, which the verdict once called "not every repetition". */
static void test_no_repetition_backs_the_effect(void **st)
{
    (void)st;
    arms a;
    make_equal_minima(&a, REPS);
    char *out, *err;
    assert_int_equal(compare(&a, NULL, &out, &err), 0);
    assert_string_equal(err, "");
    char *l = first_line(out);
    assert_string_equal(l, "verdict    no difference: the arms differ (Mann-Whitney one-sided p = 1.13e-09, slower) "
                           "but repetitions 1 (+0 ns), 2 (+0 ns), 3 (+0 ns), 4 (+0 ns), 5 (+0 ns) show no delta (the "
                           "arms' minima are equal there): no repetition backs the effect; effect +4.72 % (+5000 ns; "
                           "95 % CI +5000..+5000 ns) of the base minimum 105900 ns; sign test p = 1 (no delta "
                           "to sign)");
    free(l), free(out), free(err);
    /* the plot's title says so, where it said "0 of 5 repetitions agree" */
    char *t = plot_title(&a);
    expect_in(t, "<title>no difference: +4.72 % = +5000 ns (95 % CI +4.72..+4.72 %); Mann-Whitney p = 1.13e-09; all "
                 "5 repetitions show no difference</title>");
    free(t);
    free_arms(&a);
    /* one repetition backs a verdict where alpha lets its sign test
     * reach it (0.5 or more), and the control gives a floor (0 %) */
    make_equal_minima(&a, 1);
    const char *a6[] = {"--alpha", "0.6", NULL};
    assert_int_equal(compare(&a, a6, &out, &err), 0);
    l = first_line(out);
    if (!starts(l, "verdict    no difference: the arms differ (Mann-Whitney one-sided p = "))
        fail_msg("%s", out);
    expect_in(l, ", slower) but the one repetition (+0 ns) shows no delta (the arms' minima are equal there): the one "
                 "repetition does not back the effect; effect +");
    expect_in(l, " ns; sign test p = 1 (no delta to sign)");
    assert_false(ts_contains(l, "shows no difference"));
    free(l), free(out), free(err);
    free_arms(&a);
}

static void expect_refusal(const arms *a, const char *const *extra, const char *msg)
{
    char *out, *err;
    assert_int_equal(compare(a, extra, &out, &err), 2);
    assert_string_equal(out, "");
    if (!ts_contains(err, msg))
        fail_msg("stderr lacks '%s':\n%s", msg, err);
    /* one line */
    assert_non_null(strchr(err, '\n'));
    assert_null(strchr(strchr(err, '\n') + 1, '\n'));
    free(out), free(err);
}

static void stamps_differ(bool original)
{
    cg_spec b = cg_default("1a2b3c4", 13), m = cg_default("5d6e7f8", 14);
    b.original = m.original = original;
    m.env_extra = "TORCH_DEVICE_BACKEND_AUTOLOAD=0";
    arms a;
    make_arms(&a, 2, b, m, NULL);
    char msg[1024];
    snprintf(msg, sizeof msg,
             "hbg compare: %s and %s: their stamps differ in more than the commit: env "
             "TORCH_DEVICE_BACKEND_AUTOLOAD=0 in %s, absent from %s; both arms must be measured the same way\n",
             a.base[0], a.measure[0], a.measure[0], a.base[0]);
    expect_refusal(&a, NULL, msg);
    free_arms(&a);
}

static void test_stamps_differ_in_one_variable(void **st)
{
    (void)st;
    stamps_differ(false);
}

static void test_stamps_differ_in_one_variable_original(void **st)
{
    (void)st;
    stamps_differ(true);
}

static void test_stamps_differ_in_a_value_and_a_word(void **st)
{
    (void)st;
    cg_spec b = cg_default("1a2b3c4", 15), m = cg_default("5d6e7f8", 16);
    b.env_extra = "OMP_NUM_THREADS=1";
    m.env_extra = "OMP_NUM_THREADS=2";
    arms a;
    make_arms(&a, 1, b, m, NULL);
    expect_refusal(&a, NULL, "env OMP_NUM_THREADS=1 in ");
    free_arms(&a);
    b.env_extra = m.env_extra = NULL;
    m.rounds = 7;
    make_arms(&a, 1, b, m, NULL);
    expect_refusal(&a, NULL, "command option --rounds: '6' in ");
    free_arms(&a);
}

static void test_refuses_unequal_counts(void **st)
{
    (void)st;
    arms a;
    make_arms(&a, 2, cg_default("1a2b3c4", 17), cg_default("5d6e7f8", 18), NULL);
    const char *args[] = {"compare", "--base", a.base[0], a.base[1], "--measure", a.measure[0], NULL};
    char *out, *err;
    assert_int_equal(ts_run_cli(args, &out, &err), 2);
    assert_string_equal(err, "hbg compare: 2 base logs but 1 measure log: the i-th of each arm is repetition i, so "
                             "the counts must be equal\n");
    free(out), free(err);
    free_arms(&a);
}

/* Refusals of the input come in one order: usage errors, then a log that
 * cannot be read, then one named twice, then unequal arms. The same log
 * given to --base twice (--base a --base a) makes the counts unequal
 * too; once that was said instead, and fixing the counts by adding a
 * measure log only led to the same-file refusal. */
static void test_input_refusals_in_order(void **st)
{
    (void)st;
    arms a;
    make_arms(&a, 2, cg_default("1a2b3c4", 19), cg_default("5d6e7f8", 20), NULL);
    const char *miss = "/nonexistent/x.log";
    char want[4096], *out, *err;
    const char *twice[] = {"compare", "--base", a.base[0], "--base", a.base[0], "--measure", a.measure[0], NULL};
    assert_int_equal(ts_run_cli(twice, &out, &err), 2);
    snprintf(want, sizeof want,
             "hbg compare: base log 1 (%s) and base log 2 (%s) are the same file: each repetition needs logs of its "
             "own; give each log once\n",
             a.base[0], a.base[0]);
    assert_string_equal(err, want);
    free(out), free(err);
    /* a log that cannot be read, beside one named twice and unequal arms */
    const char *unread[] = {"compare", "--base", a.base[0], miss, "--measure", a.base[0], NULL};
    assert_int_equal(ts_run_cli(unread, &out, &err), 2);
    assert_string_equal(err, "hbg compare: cannot open /nonexistent/x.log: No such file or directory\n");
    free(out), free(err);
    /* a usage error before all of them */
    const char *usage[] = {"compare", "--base", a.base[0], miss, "--measure", a.base[0], "--alpha", "2", NULL};
    assert_int_equal(ts_run_cli(usage, &out, &err), 2);
    assert_string_equal(err, "hbg compare: --alpha expects a number between 0 and 1 (exclusive), got '2'\n");
    free(out), free(err);
    free_arms(&a);
}

static void test_unstamped_refused_unless_allowed(void **st)
{
    (void)st;
    cg_spec b = cg_default(NULL, 41), m = slower(cg_default(NULL, 42));
    arms a;
    make_arms(&a, REPS, b, m, NULL);
    char msg[512];
    snprintf(msg, sizeof msg, "hbg compare: %s has no [stamp] line, so nothing records its command and commit; pass "
                              "--allow-unstamped to compare it anyway\n", a.base[0]);
    expect_refusal(&a, NULL, msg);
    const char *fmts[3] = {"table", "json", "csv"};
    const char *said[3] = {"\nunstamped  ", "\"unstamped\": true", "\n# unstamped: "};
    for (int f = 0; f < 3; f++) {
        const char *ex[] = {"--allow-unstamped", "--format", fmts[f], NULL};
        char *out, *err;
        assert_int_equal(compare(&a, ex, &out, &err), 1);
        assert_true(ts_contains(out, said[f]));
        free(out), free(err);
    }
    free_arms(&a);
}

/* With --allow-unstamped, an unstamped repetition 1 was the only reference
 * of its arm: the stamped logs after it were never checked against each
 * other, so an arm of two commands or two commits was compared, and the
 * same logs in another order refused. The first stamped log of each arm
 * is the reference now, and the two arms' references meet even when no
 * repetition pairs two stamped logs. */
static void unstamped_rep1(int rep, cg_spec *b, cg_spec *m)
{
    if (rep == 0)
        b->commit = m->commit = NULL;
    if (rep == 2)
        b->env_extra = m->env_extra = "OMP_NUM_THREADS=2";
}

static void unstamped_rep1_two_commits(int rep, cg_spec *b, cg_spec *m)
{
    (void)m;
    if (rep == 0)
        b->commit = m->commit = NULL;
    if (rep == 2)
        b->commit = "0badc0d";
}

/* base stamped only in repetition 2, measure only in repetition 1 */
static void stamped_apart(int rep, cg_spec *b, cg_spec *m)
{
    if (rep == 0)
        b->commit = NULL;
    else
        m->commit = NULL;
    b->env_extra = "OMP_NUM_THREADS=2";
}

static void test_unstamped_first_log_checks_no_less(void **st)
{
    (void)st;
    const char *allow[] = {"--allow-unstamped", NULL};
    char msg[2048];
    arms a;
    make_arms(&a, 3, cg_default("1a2b3c4", 57), cg_default("5d6e7f8", 58), unstamped_rep1);
    snprintf(msg, sizeof msg,
             "hbg compare: %s and %s: their stamps differ in more than the commit: env OMP_NUM_THREADS=2 in %s, "
             "absent from %s; both arms must be measured the same way\n",
             a.base[1], a.base[2], a.base[2], a.base[1]);
    expect_refusal(&a, allow, msg);
    free_arms(&a);

    make_arms(&a, 3, cg_default("1a2b3c4", 59), cg_default("5d6e7f8", 60), unstamped_rep1_two_commits);
    snprintf(msg, sizeof msg, "hbg compare: %s and %s: the base arm mixes two commits: 1a2b3c4 and 0badc0d\n",
             a.base[1], a.base[2]);
    expect_refusal(&a, allow, msg);
    free_arms(&a);

    make_arms(&a, 2, cg_default("1a2b3c4", 61), cg_default("5d6e7f8", 62), stamped_apart);
    snprintf(msg, sizeof msg,
             "hbg compare: %s and %s: their stamps differ in more than the commit: env OMP_NUM_THREADS=2 in %s, "
             "absent from %s; both arms must be measured the same way\n",
             a.base[1], a.measure[0], a.base[1], a.measure[0]);
    expect_refusal(&a, allow, msg);
    free_arms(&a);
}

/* With unstamped logs allowed, the stamp line said "the first base log's;
 * every log agrees with it" of a stamp that was another log's, and of
 * logs that nothing had checked. It names the log it is, and what was
 * checked. */
static void base_unstamped(int rep, cg_spec *b, cg_spec *m)
{
    (void)rep, (void)m;
    b->commit = NULL;
}

static void base_rep1_unstamped(int rep, cg_spec *b, cg_spec *m)
{
    (void)m;
    if (rep == 0)
        b->commit = NULL;
}

static void test_unstamped_stamp_line_names_its_log(void **st)
{
    (void)st;
    const char *allow[] = {"--allow-unstamped", NULL};
    const char *tail = "hbg run qwen --mode numbers --rounds 6  (";
    char *out, *err;
    arms a;
    make_arms(&a, 2, cg_default("1a2b3c4", 57), cg_default("5d6e7f8", 58), base_unstamped);
    assert_int_equal(compare(&a, allow, &out, &err), 0);
    const char *l = strstr(out, "\nstamp      ");
    assert_non_null(l);
    l = strstr(l, tail);
    assert_non_null(l);
    assert_true(starts(l + strlen(tail), "measure log 1's, the first stamped one; every stamped log agrees with it "
                                         "but for its commit, log path and time limits)\n"));
    free(out), free(err);
    free_arms(&a);

    make_arms(&a, 2, cg_default("1a2b3c4", 57), cg_default("5d6e7f8", 58), base_rep1_unstamped);
    assert_int_equal(compare(&a, allow, &out, &err), 0);
    l = strstr(strstr(out, "\nstamp      "), tail);
    assert_non_null(l);
    assert_true(starts(l + strlen(tail), "base log 2's, the first stamped one; every stamped log agrees with it but "
                                         "for its commit, log path and time limits)\n"));
    free(out), free(err);
    free_arms(&a);
}

static void test_refuses_different_segment_sets(void **st)
{
    (void)st;
    cg_spec b = cg_default("1a2b3c4", 21), m = cg_default("5d6e7f8", 22);
    m.drop_graph_upload = true;
    arms a;
    make_arms(&a, 1, b, m, NULL);
    char msg[1024];
    snprintf(msg, sizeof msg, "hbg compare: %s and %s: different segment sets: graph_upload is in the passes of %s, not of %s\n",
             a.base[0], a.measure[0], a.base[0], a.measure[0]);
    expect_refusal(&a, NULL, msg);
    free_arms(&a);
}

static void test_refuses_a_log_without_warm_pass(void **st)
{
    (void)st;
    cg_spec b = cg_default("1a2b3c4", 23), m = cg_default("5d6e7f8", 24);
    m.rounds = 1;
    arms a;
    make_arms(&a, 1, b, m, NULL);
    expect_refusal(&a, NULL, " has no warm pass: every pass is its rank's cold first pass");
    free_arms(&a);
}

static void test_refuses_different_rank_counts(void **st)
{
    (void)st;
    cg_spec b = cg_default("1a2b3c4", 25), m = cg_default("5d6e7f8", 26);
    m.ranks = 2;
    arms a;
    make_arms(&a, 1, b, m, NULL);
    expect_refusal(&a, NULL, ": different rank counts: 1 and 2\n");
    free_arms(&a);
}

static void mixed(int rep, cg_spec *b, cg_spec *m)
{
    (void)m;
    if (rep == 1)
        b->commit = "0badc0d";
}

static void test_refuses_an_arm_of_two_commits(void **st)
{
    (void)st;
    arms a;
    make_arms(&a, 2, cg_default("1a2b3c4", 27), cg_default("5d6e7f8", 28), mixed);
    expect_refusal(&a, NULL, ": the base arm mixes two commits: 1a2b3c4 and 0badc0d\n");
    free_arms(&a);
}

static void test_refuses_unusable_input(void **st)
{
    (void)st;
    arms a;
    make_arms(&a, 1, cg_default("1a2b3c4", 29), cg_default("5d6e7f8", 30), NULL);
    const char *nc[] = {"--control", "nosuch", NULL};
    expect_refusal(&a, nc, ": the control segment 'nosuch' is not in its passes (they have: args, arena_build");
    const char *missing[] = {"compare", "--base", "/nonexistent/x.log", "--measure", a.measure[0], NULL};
    char *out, *err;
    assert_int_equal(ts_run_cli(missing, &out, &err), 2);
    assert_true(ts_contains(err, "/nonexistent/x.log"));
    free(out), free(err);
    /* strtod alone took hexadecimal (0x10 as 16 %), inf and leading spaces */
    static const char *const bad[][3] = {{"--alpha", "1", NULL},        {"--alpha", "x", NULL},
                                         {"--threshold", "-1", NULL},   {"--format", "xml", NULL},
                                         {"--bogus", NULL, NULL},       {"--threshold", "0x10", NULL},
                                         {"--alpha", "0x0.1", NULL},    {"--threshold", "inf", NULL},
                                         {"--threshold", " 5", NULL}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(compare(&a, bad[i], &out, &err), 2);
        assert_true(strncmp(err, "hbg compare: ", 13) == 0);
        free(out), free(err);
    }
    free_arms(&a);
}

/* An arm's commit heads the verdict's lines: one holding a control, a C1
 * one (CSI as C2 9B or a bare 9B) included, or a byte that starts no
 * UTF-8 character, is refused, not printed. */
static void test_refuses_a_commit_with_a_control(void **st)
{
    (void)st;
    static const char *const commits[] = {"1a\x1b[2J", "1a\xc2\x9b" "2J", "1a\x9b" "2J"};
    for (size_t i = 0; i < sizeof commits / sizeof commits[0]; i++) {
        arms a;
        make_arms(&a, 1, cg_default(commits[i], 33), cg_default("5d6e7f8", 34), NULL);
        expect_refusal(&a, NULL, ":1: the stamp's commit has a control byte\n");
        free_arms(&a);
    }
    /* a byte that starts no UTF-8 character (FF, a lone C3) is refused
     * too, for what it is: it is no control */
    static const char *const broken[] = {"1a\xff", "1a\xc3"
                                                   "2J"};
    for (size_t i = 0; i < sizeof broken / sizeof broken[0]; i++) {
        arms a;
        make_arms(&a, 1, cg_default(broken[i], 37), cg_default("5d6e7f8", 38), NULL);
        expect_refusal(&a, NULL, ":1: the stamp's commit has a byte that starts no UTF-8 character\n");
        free_arms(&a);
    }
    /* a character whose UTF-8 holds such bytes is no control */
    arms a;
    make_arms(&a, 1, cg_default("1a\xc3\x89", 35), cg_default("5d6e7f8", 36), NULL);
    char *out, *err;
    compare(&a, NULL, &out, &err);
    assert_null(strstr(err, "control byte"));
    free(out), free(err);
    free_arms(&a);
}

/* The same file named twice (again, through a link, as '-' on stdin) would
 * count as two repetitions, or compare a log with itself: refused, naming
 * both arguments, before anything is read. A copy is a log of its own. */
static void test_refuses_a_log_given_twice(void **st)
{
    (void)st;
    arms a;
    make_arms(&a, REPS, cg_default("1a2b3c4", 51), slower(cg_default("5d6e7f8", 52)), NULL);
    char want[4096], link[1024];
    /* the base of repetition 1 again as the base of repetition 3 */
    const char *again[] = {"compare", "--base", a.base[0], a.base[1], a.base[0], a.base[3], a.base[4],
                           "--measure", a.measure[0], a.measure[1], a.measure[2], a.measure[3], a.measure[4], NULL};
    char *out, *err;
    assert_int_equal(ts_run_cli(again, &out, &err), 2);
    snprintf(want, sizeof want,
             "hbg compare: base log 1 (%s) and base log 3 (%s) are the same file: each repetition needs logs of its "
             "own; give each log once\n",
             a.base[0], a.base[0]);
    assert_string_equal(err, want);
    assert_string_equal(out, "");
    free(out), free(err);
    /* through a link, in the other arm */
    snprintf(link, sizeof link, "%s/link.log", a.dir);
    assert_int_equal(symlink(a.base[1], link), 0);
    const char *linked[] = {"compare", "--base", a.base[0], a.base[1], "--measure", a.measure[0], link, NULL};
    assert_int_equal(ts_run_cli(linked, &out, &err), 2);
    snprintf(want, sizeof want,
             "hbg compare: base log 2 (%s) and measure log 2 (%s) are the same file: each repetition needs logs of "
             "its own; give each log once\n",
             a.base[1], link);
    assert_string_equal(err, want);
    free(out), free(err);
    unlink(link);
    /* standard input holding one of the named logs */
    const char *in[] = {"compare", "--base", "-", a.base[1], "--measure", a.measure[0], a.measure[1], NULL};
    assert_int_equal(ts_run_cli_in(in, a.measure[1], &out, &err), 2);
    snprintf(want, sizeof want,
             "hbg compare: base log 1 (standard input) and measure log 2 (%s) are the same file: each repetition "
             "needs logs of its own; give each log once\n",
             a.measure[1]);
    assert_string_equal(err, want);
    free(out), free(err);
    free_arms(&a);
}

/* --plot names a file: never '-' (the SVG would follow the verdict on
 * stdout, and JSON or CSV would no longer parse) and never one of the
 * logs (which it would overwrite). Both refused before anything is read. */
static void test_plot_refusals(void **st)
{
    (void)st;
    arms a;
    make_arms(&a, 2, cg_default("1a2b3c4", 53), cg_default("5d6e7f8", 54), NULL);
    size_t n0, n1;
    char *before = ts_slurp(a.measure[1], &n0);
    assert_non_null(before);
    char dotted[1024], want[4096];
    snprintf(dotted, sizeof dotted, "%s/./%s", a.dir, strrchr(a.measure[1], '/') + 1);
    const char *over[] = {"--plot", dotted, NULL};
    snprintf(want, sizeof want, "hbg compare: refusing to write %s: it is the input %s\n", dotted, a.measure[1]);
    expect_refusal(&a, over, want);
    char *after = ts_slurp(a.measure[1], &n1);
    assert_non_null(after);
    assert_int_equal(n0, n1);
    assert_memory_equal(before, after, n0);
    free(before), free(after);
    const char *dash[] = {"--format", "json", "--plot", "-", NULL};
    expect_refusal(&a, dash,
                   "hbg compare: --plot expects a file name, not '-': the plot cannot share standard "
                   "output with the results\n");
    free_arms(&a);
}

/* JSON past the writer's 64 KiB buffer goes to stdout's descriptor, not
 * through the stream: a failed write is still one line with its reason. */
static void test_json_on_a_full_stdout(void **st)
{
    (void)st;
    enum { N = 24 };
    char *dir = cg_tempdir(), *b[N], *m[N];
    const char *args[2 * N + 6] = {"compare", "--format", "json", "--base"};
    int k = 4;
    for (int i = 0; i < N; i++) {
        char name[64];
        cg_spec bs = cg_default("1a2b3c4", 600 + (uint64_t)i), ms = cg_default("5d6e7f8", 700 + (uint64_t)i);
        snprintf(name, sizeof name, "b%d.log", i);
        b[i] = cg_write(dir, name, &bs);
        snprintf(name, sizeof name, "m%d.log", i);
        m[i] = cg_write(dir, name, &ms);
        args[k++] = b[i];
    }
    args[k++] = "--measure";
    for (int i = 0; i < N; i++)
        args[k++] = m[i];
    args[k] = NULL;
    char *out, *err;
    int rc = ts_run_cli(args, &out, &err);
    assert_true(rc == 0 || rc == 1);
    if (strlen(out) <= 65536)
        fail_msg("%zu bytes of JSON: not past the writer's buffer", strlen(out));
    free(out), free(err);
    const int where[2] = {FS_OUT_FULL, FS_OUT_CLOSED};
    const char *why[2] = {"hbg compare: cannot write standard output: No space left on device\n",
                          "hbg compare: cannot write standard output: Bad file descriptor\n"};
    for (int w = 0; w < 2; w++) {
        fs_spec spec = {.args = args, .out = where[w]};
        assert_int_equal(fs_run(&spec, 60, NULL, &err), 2);
        assert_string_equal(err, why[w]);
        free(err);
    }
    for (int i = 0; i < N; i++) {
        unlink(b[i]), unlink(m[i]);
        free(b[i]), free(m[i]);
    }
    rmdir(dir);
    free(dir);
}

/* Rewrites the first line of the log at path to "[stamp] " + stamp. */
static void restamp(const char *path, const char *stamp)
{
    size_t n;
    char *s = ts_slurp(path, &n);
    assert_non_null(s);
    char *nl = strchr(s, '\n');
    assert_non_null(nl);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "[stamp] %s%s", stamp, nl);
    assert_int_equal(fclose(f), 0);
    free(s);
}

/* What the stamp check reads: assignments in any order and spacing, the
 * commit (with its -dirty) inside a word; a repeated assignment, a
 * difference past many words, a leading space before the commit. */
static void test_stamp_reading(void **st)
{
    (void)st;
    arms a;
    make_arms(&a, 2, cg_default("1a2b3c4", 45), slower(cg_default("5d6e7f8", 46)), NULL);
    char *out, *err;
    restamp(a.base[0], "1a2b3c4 env B=2 A=1 hbg run qwen -o out/bind_1a2b3c4_r1.log");
    restamp(a.measure[0], "5d6e7f8-dirty  env\tA=1 B=2 hbg run qwen -o out/bind_5d6e7f8-dirty_r1.log");
    restamp(a.base[1], "1a2b3c4 env B=2 A=1 hbg run qwen -o out/bind_1a2b3c4_r1.log");
    restamp(a.measure[1], "5d6e7f8-dirty env A=1 B=2 hbg run qwen -o out/bind_5d6e7f8_r1.log");
    assert_int_equal(compare(&a, NULL, &out, &err), 1);
    free(out), free(err);

    /* options in another order, another log and watchdog: the same ruler */
    restamp(a.base[0], "1a2b3c4 env A=1 B=2 hbg run qwen --mode numbers --rounds 6 -o x.log");
    restamp(a.measure[0], "5d6e7f8 env A=1 B=2 hbg run qwen --rounds=6 --time-limit 60 --mode numbers");
    restamp(a.base[1], "1a2b3c4 env A=1 B=2 hbg run qwen --log y.log --rounds 6 --mode numbers");
    restamp(a.measure[1], "5d6e7f8 env A=1 B=2 hbg run qwen --mode numbers --out-dir o --rounds 6");
    assert_int_equal(compare(&a, NULL, &out, &err), 1);
    free(out), free(err);
    restamp(a.measure[1], "5d6e7f8 env A=1 B=2 hbg run qwen --mode numbers --rounds 6 --keep-definitions");
    expect_refusal(&a, NULL, ": command option --keep-definitions in ");

    /* the last assignment is the value: B=2 B=3 is B=3, B=2 B=2 is B=2 */
    restamp(a.measure[0], "5d6e7f8 env A=1 B=2 B=3 hbg run qwen -o out/bind_5d6e7f8_r1.log");
    expect_refusal(&a, NULL, ": env B=2 in ");
    restamp(a.measure[0], "5d6e7f8 env A=1 B=2 B=2 hbg run qwen -o out/bind_5d6e7f8_r1.log");
    restamp(a.measure[1], "5d6e7f8 env A=1 B=2 hbg run qwen");
    restamp(a.base[0], "1a2b3c4 env A=1 B=2 hbg run qwen");
    restamp(a.base[1], "1a2b3c4 env A=1 B=2 hbg run qwen");
    assert_int_equal(compare(&a, NULL, &out, &err), 1);
    free(out), free(err);

    char big_a[4096] = "1a2b3c4 env A=1 B=2 hbg run", big_b[4096] = "5d6e7f8 env A=1 B=2 hbg run";
    for (int i = 0; i < 300; i++) {
        snprintf(big_a + strlen(big_a), sizeof big_a - strlen(big_a), " w%d", i);
        snprintf(big_b + strlen(big_b), sizeof big_b - strlen(big_b), " w%d", i);
    }
    strcat(big_a, " final_a");
    strcat(big_b, " final_b");
    restamp(a.base[0], big_a);
    restamp(a.measure[0], big_b);
    expect_refusal(&a, NULL, "their stamps differ in more than the commit: command word ");

    /* a space before the commit: still the commit, so two of them in one arm are refused */
    restamp(a.base[0], " 1a2b3c4 env A=1 B=2 hbg run qwen");
    restamp(a.measure[0], " 5d6e7f8 env A=1 B=2 hbg run qwen");
    restamp(a.base[1], " 0badc0d env A=1 B=2 hbg run qwen");
    restamp(a.measure[1], " 5d6e7f8 env A=1 B=2 hbg run qwen");
    expect_refusal(&a, NULL, ": the base arm mixes two commits: 1a2b3c4 and 0badc0d\n");
    free_arms(&a);
}

/* A duration past 2^62 ns is a corrupt line: refused, never wrapped. */
/* Writes `dur` into the dur_ns= of the first line holding `mark` after
 * the first `after` in log `path` (a pass's lines end with its pid/inv). */
static void set_dur(const char *path, const char *after, const char *mark, const char *dur)
{
    size_t n;
    char *s = ts_slurp(path, &n);
    char *d = strstr(strstr(strstr(s, after), mark), "dur_ns=") + 7;
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "%.*s%s%s", (int)(d - s), s, dur, strchr(d, ' '));
    assert_int_equal(fclose(f), 0);
    free(s);
}

/* A duration of 2^62 ns (146 years) or more, or a pass whose control-plane
 * sum reaches it, is no measurement: that pass is excluded, named, and the
 * comparison goes on with the others (it once refused the whole log). */
static void test_absurd_durations_exclude_their_pass(void **st)
{
    (void)st;
    arms a;
    make_arms(&a, REPS, cg_default("1a2b3c4", 47), cg_default("5d6e7f8", 48), NULL);
    set_dur(a.base[0], "inv=2", "phase=args ", "4611686018427387904"); /* pass 3's */
    /* each below the limit, their sum not */
    set_dur(a.base[1], "inv=4", "phase=host_orch ", "2305843009213693952");
    set_dur(a.base[1], "inv=4", "phase=graph_upload ", "2305843009213693952");
    char *out, *err;
    int rc = compare(&a, NULL, &out, &err);
    assert_true(rc == 0 || rc == 1);
    assert_true(ts_contains(err, ": malformed bind line: dur_ns= is 2^62 ns (146 years) or more: not a duration; "
                                 "ignored\n"));
    assert_true(ts_contains(err, "pass pid=4242 inv=3 has a malformed line that was ignored"));
    assert_true(ts_contains(err, "pass pid=4242 inv=4 has a control-plane sum of 2^62 ns (146 years) or more: no "
                                 "measurement; excluded\n"));
    assert_true(ts_contains(out, "verdict    "));
    free(out), free(err);
    free_arms(&a);
}

/* An effect near 2^62 ns is still printed exactly, inside its interval,
 * and JSON that parses: the estimate was a double, rounded to 2^62 here,
 * whose doubled llround overflowed into "--4611686018427387904" in the
 * verdict and in JSON, exit 0. Base passes of 0 ns against measure passes
 * of X and X + 1 ns: the differences' middle two give X + 0.5. */
static void test_huge_effect_is_exact(void **st)
{
    (void)st;
    cg_spec b = cg_default("1a2b3c4", 55), m = cg_default("5d6e7f8", 56);
    b.rounds = m.rounds = 3;
    b.all_scale = m.all_scale = 0;
    arms a;
    make_arms(&a, 1, b, m, NULL);
    set_dur(a.measure[0], "inv=2", "phase=host_orch ", "4611686018427387800");
    set_dur(a.measure[0], "inv=3", "phase=host_orch ", "4611686018427387801");
    char *out, *err;
    assert_int_equal(compare(&a, NULL, &out, &err), 0); /* 2 + 2 passes: not significant */
    char *l = first_line(out);
    if (!ts_contains(l, " % (+4611686018427387800.5 ns; whole range, only a 66 % CI: "
                        "+4611686018427387800..+4611686018427387801 ns) of the base minimum 0 ns"))
        fail_msg("%s", l);
    free(l), free(out), free(err);
    const char *js[] = {"--format", "json", NULL};
    assert_int_equal(compare(&a, js, &out, &err), 0);
    json_error_t je;
    json_t *j = json_loads(out, 0, &je);
    if (!j)
        fail_msg("invalid JSON (%s): %s", je.text, out);
    json_decref(j);
    assert_true(ts_contains(out, "\"effect\": {\"hodges_lehmann_ns\": 4611686018427387800.5, \"ci_low_ns\": "
                                 "4611686018427387800, \"ci_high_ns\": 4611686018427387801, "));
    free(out), free(err);
    free_arms(&a);
}

/* --- flags --------------------------------------------------------------- */

static void test_flags_exact_figure_that_differs(void **st)
{
    (void)st;
    cg_spec b = cg_default("1a2b3c4", 31), m = slower(cg_default("5d6e7f8", 32));
    m.heap_used = 127677440;
    arms a;
    make_arms(&a, REPS, b, m, NULL);
    char *out, *err;
    assert_int_equal(compare(&a, NULL, &out, &err), 1);
    assert_true(ts_contains(out, "\nflags      exact figure differs: heap_used: base 127673344, measure 127677440 "
                                 "(repetitions 1, 2, 3, 4, 5): the arms did different work\n"));
    free(out), free(err);
    free_arms(&a);
}

static void wide(int rep, cg_spec *b, cg_spec *m)
{
    (void)b;
    if (rep == 0)
        m->noise = 0.2;
}

static void test_flags_lower_minimum_with_wider_range(void **st)
{
    (void)st;
    arms a;
    make_arms(&a, REPS, cg_default("1a2b3c4", 33), cg_default("5d6e7f8", 34), wide);
    char *out, *err;
    assert_int_equal(compare(&a, NULL, &out, &err), 0);
    assert_true(ts_contains(out, "repetition 1: a lower minimum ("));
    assert_true(ts_contains(out, " ns, more than the effect): a cost too\n"));
    free(out), free(err);
    free_arms(&a);
}

/* --- formats -------------------------------------------------------------- */

static void test_json(void **st)
{
    (void)st;
    arms a;
    make_arms(&a, REPS, cg_default("1a2b3c4", 35), slower(cg_default("5d6e7f8", 36)), NULL);
    char *out, *err;
    const char *ex[] = {"--format", "json", NULL};
    assert_int_equal(compare(&a, ex, &out, &err), 1);
    json_error_t je;
    json_t *j = json_loads(out, 0, &je);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(j, "verdict")), "slower");
    assert_true(json_is_true(json_object_get(j, "regression")));
    assert_string_equal(json_string_value(json_object_get(j, "base_commit")), "1a2b3c4");
    json_t *eff = json_object_get(j, "effect");
    double hl = json_number_value(json_object_get(eff, "hodges_lehmann_ns"));
    assert_true(json_number_value(json_object_get(eff, "ci_low_ns")) <= hl);
    assert_true(hl <= json_number_value(json_object_get(eff, "ci_high_ns")));
    assert_true(hl > 9000 && hl < 11000);
    assert_true(hl * 2 == (double)(int64_t)(hl * 2));   /* exact: whole or a half */
    json_t *sign = json_object_get(j, "sign_test");
    assert_int_equal(json_integer_value(json_object_get(sign, "agree")), 5);
    assert_true(json_number_value(json_object_get(sign, "p")) == 0.03125);
    json_t *reps = json_object_get(j, "per_repetition");
    assert_int_equal(json_array_size(reps), REPS);
    json_t *rows = json_object_get(json_array_get(reps, 0), "rows");
    assert_int_equal(json_array_size(rows), 11);
    assert_string_equal(json_string_value(json_object_get(json_array_get(rows, 0), "row")), "total");
    assert_string_equal(json_string_value(json_object_get(json_array_get(reps, 2), "base_log")), a.base[2]);
    /* the arms' pooled figures, as the table's base and measure lines
     * give them: the minimum and the median */
    char *tout, *terr;
    assert_int_equal(compare(&a, NULL, &tout, &terr), 1);
    const char *arm[2] = {"\nbase       ", "\nmeasure    "}, *key[2][2] = {{"base_min_ns", "base_median_ns"},
                                                                         {"measure_min_ns", "measure_median_ns"}};
    for (int k = 0; k < 2; k++) {
        const char *line = strstr(tout, arm[k]);
        assert_non_null(line);
        double min, med;
        assert_int_equal(sscanf(strstr(line, "; min "), "; min %lf ns, median %lf ns", &min, &med), 2);
        assert_true(json_is_integer(json_object_get(j, key[k][0])));
        assert_true(json_number_value(json_object_get(j, key[k][0])) == min);
        assert_true(json_is_number(json_object_get(j, key[k][1])));
        assert_true(json_number_value(json_object_get(j, key[k][1])) == med);
    }
    free(tout), free(terr);
    json_decref(j);
    free(out), free(err);
    free_arms(&a);
}

static void test_csv(void **st)
{
    (void)st;
    arms a;
    make_arms(&a, REPS, cg_default("1a2b3c4", 37), slower(cg_default("5d6e7f8", 38)), NULL);
    char *out, *err;
    const char *ex[] = {"--format", "csv", NULL};
    assert_int_equal(compare(&a, ex, &out, &err), 1);
    assert_true(strncmp(out, "# slower: effect +", 18) == 0);
    assert_true(ts_contains(out, "\nrepetition,base_log,measure_log,row,control_plane,control,base_min_ns,"
                                 "measure_min_ns,delta_min_ns,delta_min_pct,base_median_ns,measure_median_ns,"
                                 "delta_median_ns,delta_median_pct\n"));
    size_t rows = 0;
    for (const char *p = strstr(out, "\n1,"); p; p = strchr(p + 1, '\n'))
        rows += p[1] >= '1' && p[1] <= '9';
    assert_int_equal(rows, REPS * 11);
    free(out), free(err);
    free_arms(&a);
}

static void test_plot(void **st)
{
    (void)st;
    arms a;
    make_arms(&a, REPS, cg_default("1a2b3c4", 39), slower(cg_default("5d6e7f8", 40)), NULL);
    char svg[512];
    snprintf(svg, sizeof svg, "%s/ab.svg", a.dir);
    char *out, *err;
    const char *ex[] = {"--plot", svg, NULL};
    assert_int_equal(compare(&a, ex, &out, &err), 1);
    free(out), free(err);
    size_t n;
    char *s = ts_slurp(svg, &n);
    assert_non_null(s);
    assert_true(ts_contains(s, "<svg"));
    assert_true(ts_contains(s, "base 1a2b3c4"));
    assert_true(ts_contains(s, "measure 5d6e7f8"));
    assert_true(ts_contains(s, "slower: +9."));
    free(s);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "xmllint --noout '%s'", svg);
    assert_int_equal(system(cmd), 0);
    unlink(svg);
    /* a plot that cannot be written fails the command, and leaves nothing */
    const char *bad[] = {"--plot", "/nonexistent-dir/ab.svg", NULL};
    assert_int_equal(compare(&a, bad, &out, &err), 2);
    /* found before the logs are read: no verdict under a failing status */
    assert_string_equal(err, "hbg compare: cannot create /nonexistent-dir/ab.svg: No such file or directory\n");
    assert_string_equal(out, "");
    free(out), free(err);
    /* nor over a directory */
    const char *dir[] = {"--plot", a.dir, NULL};
    assert_int_equal(compare(&a, dir, &out, &err), 2);
    assert_true(ts_contains(err, ": Is a directory\n"));
    assert_string_equal(out, "");
    free(out), free(err);
    free_arms(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_shift_slower),
        cmocka_unit_test(test_known_shift_slower_original),
        cmocka_unit_test(test_faster),
        cmocka_unit_test(test_no_shift_no_difference),
        cmocka_unit_test(test_no_shift_no_difference_original),
        cmocka_unit_test(test_contended_repetition),
        cmocka_unit_test(test_contended_repetition_original),
        cmocka_unit_test(test_many_disagreeing_repetitions),
        cmocka_unit_test(test_control_moved_contended),
        cmocka_unit_test(test_short_control_falls_back_to_delta_range),
        cmocka_unit_test(test_drift_is_not_noise),
        cmocka_unit_test(test_one_repetition_gives_no_delta_range),
        cmocka_unit_test(test_one_repetitions_control_delta),
        cmocka_unit_test(test_zero_base_minimum_has_no_arm_spread),
        cmocka_unit_test(test_zero_control_has_no_relative_delta),
        cmocka_unit_test(test_too_few_passes_for_an_interval),
        cmocka_unit_test(test_zero_base_has_no_percentages),
        cmocka_unit_test(test_median_percentage_counts_the_half),
        cmocka_unit_test(test_effect_inside_noise_floor),
        cmocka_unit_test(test_a_zero_delta_is_no_disagreement),
        cmocka_unit_test(test_counts_of_one_in_the_singular),
        cmocka_unit_test(test_few_repetitions_rest_on_a_t_test),
        cmocka_unit_test(test_small_counts_in_words),
        cmocka_unit_test(test_no_repetition_backs_the_effect),
        cmocka_unit_test(test_stamps_differ_in_one_variable),
        cmocka_unit_test(test_stamps_differ_in_one_variable_original),
        cmocka_unit_test(test_stamps_differ_in_a_value_and_a_word),
        cmocka_unit_test(test_refuses_unequal_counts),
        cmocka_unit_test(test_input_refusals_in_order),
        cmocka_unit_test(test_unstamped_refused_unless_allowed),
        cmocka_unit_test(test_unstamped_first_log_checks_no_less),
        cmocka_unit_test(test_unstamped_stamp_line_names_its_log),
        cmocka_unit_test(test_refuses_different_segment_sets),
        cmocka_unit_test(test_refuses_a_log_without_warm_pass),
        cmocka_unit_test(test_refuses_different_rank_counts),
        cmocka_unit_test(test_refuses_an_arm_of_two_commits),
        cmocka_unit_test(test_refuses_unusable_input),
        cmocka_unit_test(test_refuses_a_commit_with_a_control),
        cmocka_unit_test(test_refuses_a_log_given_twice),
        cmocka_unit_test(test_plot_refusals),
        cmocka_unit_test(test_json_on_a_full_stdout),
        cmocka_unit_test(test_stamp_reading),
        cmocka_unit_test(test_absurd_durations_exclude_their_pass),
        cmocka_unit_test(test_huge_effect_is_exact),
        cmocka_unit_test(test_flags_exact_figure_that_differs),
        cmocka_unit_test(test_flags_lower_minimum_with_wider_range),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_csv),
        cmocka_unit_test(test_plot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
