/* The A/B statistics against values computed without this code: SciPy 1.10
 * where it has the method, brute force otherwise. tests/data/abstats_expected.py
 * derives every constant below and prints it; each is quoted here with how
 * it was computed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tools/abstats.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* Exact paths are ratios of counts: a few ulps. The normal approximation is
 * compared with scipy's erfc-based one, which differs in the last digits of
 * the variance's arithmetic. */
#define EXACT_TOL 1e-12
#define ASYM_TOL 1e-9

static void near(double got, double want, double rel, const char *what)
{
    double err = fabs(got - want);
    double lim = rel * fabs(want);
    if (!(err <= lim) && !(want == 0 && err == 0)) {
        print_error("%s: got %.17g, want %.17g (relative error %.3g, allowed %.3g)\n", what, got, want,
                    want != 0 ? err / fabs(want) : err, rel);
        fail();
    }
}

static as_mwu mwu(const uint64_t *b, size_t nb, const uint64_t *m, size_t nm)
{
    as_mwu r;
    assert_int_equal(as_mann_whitney(b, nb, m, nm, &r), HBG_OK);
    assert_int_equal(r.nb, nb);
    assert_int_equal(r.nm, nm);
    return r;
}

static void p_are(const as_mwu *r, double pg, double pl, double p2, double tol)
{
    near(r->p_greater, pg, tol, "p_greater");
    near(r->p_less, pl, tol, "p_less");
    near(r->p_two, p2, tol, "p_two");
}

static as_shift hl(const uint64_t *b, size_t nb, const uint64_t *m, size_t nm, double level)
{
    as_shift s;
    assert_int_equal(as_hodges_lehmann(b, nb, m, nm, level, &s), HBG_OK);
    return s;
}

/* The estimate is exact: its floor and whether a half follows. */
static void est_is(as_shift s, int64_t whole, bool half)
{
    if (s.est_whole != whole || s.est_half != half) {
        print_error("estimate %lld%s, want %lld%s\n", (long long)s.est_whole, s.est_half ? " + 0.5" : "",
                    (long long)whole, half ? " + 0.5" : "");
        fail();
    }
}

/* The large samples, by formulas the script repeats: permuted, with ties
 * both within and across the arms. */
static void large150(uint64_t *b, uint64_t *m)
{
    for (uint64_t i = 0; i < 150; i++) {
        b[i] = 1000 + (i * 37) % 101;
        m[i] = 1004 + (i * 53) % 97;
    }
}

static void large2000(uint64_t *b, uint64_t *m)
{
    for (uint64_t i = 0; i < 2000; i++) {
        b[i] = 100000 + (i * 7919) % 10007;
        m[i] = 100500 + (i * 104729) % 10009;
    }
}

/* ---- Mann-Whitney U ---------------------------------------------------- */

static void test_mwu_3v4_no_ties_matches_scipy_exact(void **state)
{
    (void)state;
    uint64_t b[] = {30, 10, 20}, m[] = {45, 15, 35, 25};
    as_mwu r = mwu(b, N_OF(b), m, N_OF(m));
    assert_true(r.exact);
    assert_false(r.ties);
    assert_true(r.u == 9.0);
    /* scipy.stats.mannwhitneyu(m, b, alternative=..., method='exact') */
    p_are(&r, 0.2, 0.8857142857142858, 0.4, EXACT_TOL);
}

static void test_mwu_5v5_no_ties_matches_scipy_exact(void **state)
{
    (void)state;
    uint64_t b[] = {100, 102, 104, 106, 108}, m[] = {101, 105, 109, 111, 113};
    as_mwu r = mwu(b, N_OF(b), m, N_OF(m));
    assert_true(r.exact);
    assert_false(r.ties);
    assert_true(r.u == 19.0);
    /* scipy exact; the enumeration of all 252 splits agrees */
    p_are(&r, 0.1111111111111111, 0.9246031746031746, 0.2222222222222222, EXACT_TOL);
}

static void test_mwu_ties_across_arms_match_enumeration(void **state)
{
    (void)state;
    /* 10, 20 and 30 each appear in both arms */
    uint64_t b[] = {10, 10, 20, 30, 30}, m[] = {10, 20, 20, 30, 40};
    as_mwu r = mwu(b, N_OF(b), m, N_OF(m));
    assert_true(r.exact);
    assert_true(r.ties);
    assert_true(r.u == 15.0);
    /* all 252 splits of the pooled values, U counted pair by pair:
     * 96 have U >= 15, 192 have U <= 15 */
    p_are(&r, 0.38095238095238093, 0.7619047619047619, 0.7619047619047619, EXACT_TOL);
}

static void test_mwu_ties_within_and_across_match_enumeration(void **state)
{
    (void)state;
    /* the measure arm is the larger one here, so the base arm's rank sum is
     * the one tabulated and the tails swap */
    uint64_t b[] = {1, 1, 1, 2, 2, 3}, m[] = {1, 2, 3, 3, 3, 3, 4};
    as_mwu r = mwu(b, N_OF(b), m, N_OF(m));
    assert_true(r.ties);
    assert_true(r.u == 33.5);
    /* all 1716 splits, enumerated */
    p_are(&r, 0.049533799533799536, 0.9854312354312355, 0.09906759906759907, EXACT_TOL);
}

static void test_mwu_one_dominant_tie_group_matches_enumeration(void **state)
{
    (void)state;
    uint64_t b[] = {7, 7, 7, 7, 7, 7, 7, 9}, m[] = {7, 7, 7};
    as_mwu r = mwu(b, N_OF(b), m, N_OF(m));
    assert_true(r.u == 10.5);
    /* all 165 splits: the smallest U a split can have is 10.5, so
     * p_greater is 1 exactly, and p_two clamps to 1 */
    p_are(&r, 1.0, 0.7272727272727273, 1.0, EXACT_TOL);
}

static void test_mwu_all_equal_gives_p_one(void **state)
{
    (void)state;
    uint64_t b[] = {5, 5, 5}, m[] = {5, 5, 5, 5};
    as_mwu r = mwu(b, N_OF(b), m, N_OF(m));
    assert_true(r.exact);
    assert_true(r.ties);
    assert_true(r.u == 6.0); /* nb nm / 2: every pair a tie */
    assert_true(r.p_greater == 1 && r.p_less == 1 && r.p_two == 1);

    /* above AS_EXACT_MAX the variance is zero: still 1, not NaN */
    uint64_t big[120];
    for (size_t i = 0; i < N_OF(big); i++)
        big[i] = 42;
    r = mwu(big, 60, big + 60, 60);
    assert_false(r.exact);
    assert_true(r.u == 1800.0);
    assert_true(r.p_greater == 1 && r.p_less == 1 && r.p_two == 1);
}

static void test_mwu_ten_percent_slower_is_significant(void **state)
{
    (void)state;
    uint64_t b[20], m[20];
    for (uint64_t i = 0; i < 20; i++) {
        b[i] = 1000 + (i * 7) % 20;
        m[i] = b[i] * 11 / 10;
    }
    as_mwu r = mwu(b, 20, m, 20);
    assert_true(r.exact);
    assert_true(r.u == 400.0); /* every measure pass beats every base pass */
    /* scipy exact: 1 / C(40, 20) = 7.254444551924844e-12, p_two twice
     * that; p_less is the whole distribution (scipy: 0.9999999999999997,
     * its rounding of 1) */
    p_are(&r, 7.254444551924844e-12, 1.0, 1.4508889103849688e-11, EXACT_TOL);

    /* and the other way round: measure faster */
    r = mwu(m, 20, b, 20);
    assert_true(r.u == 0.0);
    p_are(&r, 1.0, 7.254444551924844e-12, 1.4508889103849688e-11, EXACT_TOL);
}

static void test_mwu_exact_up_to_100_values_asymptotic_above(void **state)
{
    (void)state;
    uint64_t b[51], m[50];
    for (uint64_t i = 0; i < 51; i++)
        b[i] = 3 * i;
    for (uint64_t j = 0; j < 50; j++)
        m[j] = 3 * j + 11;
    /* 50 + 50: scipy.stats.mannwhitneyu(m, b, method='exact'); the
     * tabulation's largest case, counts up to C(100, 50) ~ 1e29 */
    as_mwu r = mwu(b, 50, m, 50);
    assert_true(r.exact);
    assert_true(r.u == 1419.0);
    p_are(&r, 0.12329020923184471, 0.8781119058785705, 0.24658041846368942, EXACT_TOL);

    /* 51 + 50: scipy method='asymptotic' (continuity-corrected) */
    r = mwu(b, 51, m, 50);
    assert_false(r.exact);
    assert_false(r.ties);
    assert_true(r.u == 1422.0);
    p_are(&r, 0.15984863720618359, 0.8417974183113567, 0.31969727441236717, ASYM_TOL);
}

static void test_mwu_150v150_with_ties_matches_scipy_asymptotic(void **state)
{
    (void)state;
    uint64_t b[150], m[150];
    large150(b, m);
    as_mwu r = mwu(b, 150, m, 150);
    assert_false(r.exact);
    assert_true(r.ties);
    assert_true(r.u == 11583.0);
    /* scipy.stats.mannwhitneyu(m, b, method='asymptotic'): its variance
     * carries the same tie correction */
    p_are(&r, 0.3290205421327034, 0.6714608278680207, 0.6580410842654068, ASYM_TOL);
}

static void test_mwu_2000v2000_matches_scipy_asymptotic(void **state)
{
    (void)state;
    uint64_t *b = malloc(4000 * sizeof *b);
    assert_non_null(b);
    large2000(b, b + 2000);
    as_mwu r = mwu(b, 2000, b + 2000, 2000);
    assert_false(r.exact);
    assert_true(r.u == 2194136.0);
    /* scipy method='asymptotic' */
    p_are(&r, 5.3049606961565396e-08, 0.9999999469583714, 1.0609921392313079e-07, ASYM_TOL);
    free(b);
}

static void test_mwu_rejects_empty_sample(void **state)
{
    (void)state;
    uint64_t v[] = {1, 2};
    as_mwu r;
    assert_int_equal(as_mann_whitney(v, 0, v, 2, &r), HBG_E_INVAL);
    assert_int_equal(as_mann_whitney(v, 2, v, 0, &r), HBG_E_INVAL);
    assert_int_equal(as_mann_whitney(NULL, 2, v, 2, &r), HBG_E_INVAL);
    assert_int_equal(as_mann_whitney(v, 2, v, 2, NULL), HBG_E_INVAL);
}

/* ---- Hodges-Lehmann ---------------------------------------------------- */

static void test_hl_odd_count_is_middle_difference(void **state)
{
    (void)state;
    /* 9 differences, sorted -7 -3 -1 1 3 7 11 15 19 */
    uint64_t b[] = {9, 1, 5}, m[] = {20, 2, 8};
    as_shift s = hl(b, 3, m, 3, 0.95);
    est_is(s, 3, false);
    /* 3 + 3 is too small for 95 % (P(U = 0) = 1/20 > 0.025): the range */
    assert_int_equal(s.lo, -7);
    assert_int_equal(s.hi, 19);
    near(s.level, 0.9, EXACT_TOL, "range of 3 + 3"); /* 1 - 2/20: not 95 % */
}

static void test_hl_even_count_is_mean_of_middle_two(void **state)
{
    (void)state;
    /* 6 differences, sorted -5 0 1 6 6 12: (1 + 6) / 2 */
    uint64_t b[] = {4, 10}, m[] = {5, 10, 16};
    as_shift s = hl(b, 2, m, 3, 0.95);
    est_is(s, 3, true);
    assert_int_equal(s.lo, -5);
    assert_int_equal(s.hi, 12);
    near(s.level, 0.8, EXACT_TOL, "range of 2 + 3"); /* 1 - 2/10 */
}

static void test_hl_ci_5v5_matches_brute_force(void **state)
{
    (void)state;
    uint64_t b[] = {100, 102, 104, 106, 108}, m[] = {101, 105, 109, 111, 113};
    /* the 25 differences listed and sorted; k from the exact counts of U
     * (all 252 splits): at 95 % k = 3, P(U <= 2) = 4/252 */
    as_shift s = hl(b, 5, m, 5, 0.95);
    est_is(s, 5, false);
    assert_int_equal(s.lo, -3);
    assert_int_equal(s.hi, 11);
    near(s.level, 0.9682539682539683, EXACT_TOL, "level 95");
    /* at 90 % k = 5, P(U <= 4) = 12/252 */
    s = hl(b, 5, m, 5, 0.90);
    assert_int_equal(s.lo, -1);
    assert_int_equal(s.hi, 9);
    near(s.level, 0.9047619047619048, EXACT_TOL, "level 90");
}

static void test_hl_ci_tail_equal_to_cut_keeps_order_statistic(void **state)
{
    (void)state;
    /* 3 + 3 at 90 %: P(U = 0) = 1/20 is exactly (1 - 0.9) / 2, so k = 1
     * (in doubles (1 - 0.9) / 2 rounds to just below 1/20, which must not
     * cost the order statistic) and the coverage is 0.9 exactly */
    uint64_t b[] = {1, 2, 3}, m[] = {4, 5, 6};
    as_shift s = hl(b, 3, m, 3, 0.90);
    est_is(s, 3, false);
    assert_int_equal(s.lo, 1);
    assert_int_equal(s.hi, 5);
    near(s.level, 0.9, EXACT_TOL, "level");
}

static void test_hl_ci_25v25_matches_brute_force(void **state)
{
    (void)state;
    uint64_t b[25], m[25];
    for (uint64_t i = 0; i < 25; i++) {
        b[i] = 5000 + (i * 13) % 29 * 3;
        m[i] = 5010 + (i * 11) % 31 * 3;
    }
    /* 625 differences listed and sorted; k = 212 from exact integer counts
     * of U (the recurrence over the largest value, checked against
     * enumeration on small sizes) */
    as_shift s = hl(b, 25, m, 25, 0.95);
    est_is(s, 10, false);
    assert_int_equal(s.lo, -8);
    assert_int_equal(s.hi, 25);
    near(s.level, 0.9505749267748778, EXACT_TOL, "level");
}

static void test_hl_too_small_for_any_k_gives_whole_range(void **state)
{
    (void)state;
    /* 2 + 2: P(U = 0) = 1/6, above any usual tail; differences -7 3 10 20 */
    uint64_t b[] = {10, 20}, m[] = {13, 30};
    as_shift s = hl(b, 2, m, 2, 0.95);
    est_is(s, 6, true);
    assert_int_equal(s.lo, -7);
    assert_int_equal(s.hi, 20);
    /* the whole range misses U = 0 and U = 4, 1/6 each: it covers 2/3,
     * and saying 1 (or 95 %) would overstate it */
    near(s.level, 2.0 / 3, EXACT_TOL, "range of 2 + 2");
    /* one value an arm: the one difference covers nothing */
    uint64_t b1[] = {10}, m1[] = {13};
    s = hl(b1, 1, m1, 1, 0.95);
    est_is(s, 3, false);
    assert_true(s.lo == 3 && s.hi == 3);
    assert_true(s.level == 0.0);
}

static void test_hl_150v150_uses_normal_critical_value(void **state)
{
    (void)state;
    uint64_t b[150], m[150];
    large150(b, m);
    /* 22500 differences listed and sorted in Python; k = floor(nm/2 - z
     * sqrt(nm (N + 1) / 12)) with z = scipy.stats.norm.ppf(0.975): 9777
     * (from 9777.58, far from an integer, so the quantile's last digits
     * cannot move it) */
    as_shift s = hl(b, 150, m, 150, 0.95);
    est_is(s, 1, false);
    assert_int_equal(s.lo, -5);
    assert_int_equal(s.hi, 8);
    assert_true(s.level == 0.95); /* nominal */
    /* at 99 %: k = 9314 (from 9314.91) */
    s = hl(b, 150, m, 150, 0.99);
    assert_int_equal(s.lo, -7);
    assert_int_equal(s.hi, 10);
    assert_true(s.level == 0.99);
}

static void test_hl_2000v2000_searches_four_million_differences(void **state)
{
    (void)state;
    uint64_t *b = malloc(4000 * sizeof *b);
    assert_non_null(b);
    large2000(b, b + 2000);
    /* the 4e6 differences sorted in Python; k = 1928423 (from 1928423.29) */
    as_shift s = hl(b, 2000, b + 2000, 2000, 0.95);
    est_is(s, 498, false);
    assert_int_equal(s.lo, 318);
    assert_int_equal(s.hi, 679);
    assert_true(s.level == 0.95);
    free(b);
}

static void test_hl_extreme_values_do_not_overflow(void **state)
{
    (void)state;
    /* differences span -(2^63 - 1) .. 2^63 - 1, the whole int64 range less
     * one: the search's midpoint must not overflow */
    const uint64_t M = INT64_MAX;
    uint64_t b[] = {0, M}, m[] = {M, 0};
    as_shift s = hl(b, 2, m, 2, 0.95);
    est_is(s, 0, false);
    assert_true(s.lo == -INT64_MAX);
    assert_true(s.hi == INT64_MAX);

    /* one pair: the single difference is estimate and both ends */
    uint64_t one = M, zero = 0;
    s = hl(&one, 1, &zero, 1, 0.95);
    est_is(s, -INT64_MAX, false);
    assert_true(s.lo == -INT64_MAX && s.hi == -INT64_MAX);
}

/* Past 2^53 a double has no room for the units of an estimate, and twice
 * an estimate near 2^63 is past int64: it was ((double)lo + (double)hi) / 2,
 * which rounded 2^63 - 1.5 to 2^63, above its own interval, and made a
 * printed --4611686018427387904 of it. Kept exact, it stays inside. */
static void test_hl_estimate_exact_past_2_53(void **state)
{
    (void)state;
    /* one pair: 2^53 + 1, which a double rounds to 2^53 */
    uint64_t zero = 0, odd = ((uint64_t)1 << 53) + 1;
    as_shift s = hl(&zero, 1, &odd, 1, 0.95);
    est_is(s, ((int64_t)1 << 53) + 1, false);
    /* differences M - 1, M - 1, M, M (M = 2^63 - 1): the middle two's mean
     * is M - 0.5, whose double is 2^63 */
    const uint64_t M = INT64_MAX;
    uint64_t b[] = {0, 1}, m[] = {M, M};
    s = hl(b, 2, m, 2, 0.95);
    est_is(s, INT64_MAX - 1, true);
    assert_true(s.lo == INT64_MAX - 1 && s.hi == INT64_MAX);
    assert_int_equal(as_shift_sign(&s), 1);
    /* and negative: -(M - 0.5), a floor of -M and a half */
    s = hl(m, 2, b, 2, 0.95);
    est_is(s, -INT64_MAX, true);
    assert_true(s.lo == -INT64_MAX && s.hi == -INT64_MAX + 1);
    assert_int_equal(as_shift_sign(&s), -1);
    /* -0.5 has the floor -1, +0.5 the floor 0: the sign is the half's */
    uint64_t b2[] = {10, 11}, m2[] = {10, 10};
    s = hl(b2, 2, m2, 2, 0.95); /* differences -1 -1 0 0 */
    est_is(s, -1, true);
    assert_int_equal(as_shift_sign(&s), -1);
    s = hl(m2, 2, b2, 2, 0.95); /* 0 0 1 1 */
    est_is(s, 0, true);
    assert_int_equal(as_shift_sign(&s), 1);
    s = hl(b2, 1, m2, 1, 0.95);
    est_is(s, 0, false);
    assert_int_equal(as_shift_sign(&s), 0);
}

static void test_hl_rejects_invalid_input(void **state)
{
    (void)state;
    uint64_t ok[] = {1, 2, 3};
    uint64_t big[] = {1, (uint64_t)1 << 63, 3};
    as_shift s;
    assert_int_equal(as_hodges_lehmann(ok, 0, ok, 3, 0.95, &s), HBG_E_INVAL);
    assert_int_equal(as_hodges_lehmann(ok, 3, ok, 0, 0.95, &s), HBG_E_INVAL);
    assert_int_equal(as_hodges_lehmann(big, 3, ok, 3, 0.95, &s), HBG_E_INVAL);
    assert_int_equal(as_hodges_lehmann(ok, 3, big, 3, 0.95, &s), HBG_E_INVAL);
    assert_int_equal(as_hodges_lehmann(ok, 3, ok, 3, 0.0, &s), HBG_E_INVAL);
    assert_int_equal(as_hodges_lehmann(ok, 3, ok, 3, 1.0, &s), HBG_E_INVAL);
    assert_int_equal(as_hodges_lehmann(ok, 3, ok, 3, NAN, &s), HBG_E_INVAL);
    /* 2^63 - 1 is still a value */
    big[1] = INT64_MAX;
    assert_int_equal(as_hodges_lehmann(big, 3, ok, 3, 0.95, &s), HBG_OK);
}

/* ---- Student's t ------------------------------------------------------- */

/* Two-sided p values against published critical values (the 0.975
 * quantiles to 15 digits) and against exact ones: df 1 at t = 1 is
 * 1 - (2/pi)(pi/4); df 3 at sqrt(3) is 1/2 - 1/pi; df 4 at 2 is
 * 1 - (5/8) sqrt(2). The others were checked against the regularized
 * incomplete beta I_{df/(df+t^2)}(df/2, 1/2) by continued fraction. */
static void test_t_two_sided_known_values(void **state)
{
    (void)state;
    near(as_t_two_sided(12.7062047361747, 1), 0.05, 1e-12, "df 1, the 0.975 quantile");
    near(as_t_two_sided(4.30265272974946, 2), 0.05, 1e-12, "df 2");
    near(as_t_two_sided(3.18244630528371, 3), 0.05, 1e-12, "df 3");
    near(as_t_two_sided(2.77644510519779, 4), 0.05, 1e-12, "df 4");
    near(as_t_two_sided(2.57058183563631, 5), 0.05, 1e-12, "df 5");
    near(as_t_two_sided(2.22813885198627, 10), 0.05, 1e-12, "df 10");
    near(as_t_two_sided(2.04227245630124, 30), 0.05, 1e-12, "df 30");
    near(as_t_two_sided(1, 1), 0.5, EXACT_TOL, "df 1, t 1");
    near(as_t_two_sided(sqrt(3), 3), 0.5 - 1 / 3.14159265358979323846, EXACT_TOL, "df 3, t sqrt 3");
    near(as_t_two_sided(2, 4), 1 - 0.625 * sqrt(2), EXACT_TOL, "df 4, t 2");
    near(as_t_two_sided(0.5, 7), 0.6324071356892842, EXACT_TOL, "df 7, t 0.5");
    near(as_t_two_sided(4, 9), 0.0031104283103858517, 1e-10, "df 9, t 4");
    /* far in the tail, where 1 minus the closed form's head once gave 0
     * or 1.1e-16 (reference: the regularized incomplete beta) */
    near(as_t_two_sided(72, 19), 1.2627518147814291e-24, 1e-9, "df 19, t 72");
    near(as_t_two_sided(1000, 10), 2.4608247101732722e-26, 1e-9, "df 10, t 1000");
    near(as_t_two_sided(20, 29), 1.641823743166912e-18, 1e-9, "df 29, t 20");
    near(as_t_two_sided(7, 1000), 4.6875025667714575e-12, 1e-9, "df 1000, t 7");
    near(as_t_two_sided(20, 1000), 4.0622884995248302e-75, 1e-9, "df 1000, t 20");
    near(as_t_two_sided(10, 5000), 2.5208747116437089e-23, 1e-9, "df 5000, t 10");
    near(as_t_two_sided(1e8, 1), 2 / 3.14159265358979323846 * 1e-8, 1e-9, "df 1, t 1e8: (2/pi) atan(1/t)");
    /* the sign of t does not matter; the edges */
    assert_true(as_t_two_sided(-2, 4) == as_t_two_sided(2, 4));
    assert_true(as_t_two_sided(0, 3) == 1.0);
    assert_true(as_t_two_sided(INFINITY, 2) == 0.0);
    assert_true(as_t_two_sided(-INFINITY, 5) == 0.0);
    assert_true(as_t_two_sided(3, 0) == 1.0);
    assert_true(as_t_two_sided(NAN, 3) == 1.0);
}

static void test_t_test_zero(void **state)
{
    (void)state;
    double t, p;
    /* mean 0.02, sd 0.01 sqrt 2: t = 2, df 1 */
    double two[] = {0.01, 0.03};
    as_t_test_zero(two, 2, &t, &p);
    near(t, 2, 1e-12, "t of two");
    near(p, 1 - 2 / 3.14159265358979323846 * atan(2), 1e-12, "p of two");
    /* mean -1, sd 1 over 4: t = -2, df 3 */
    double four[] = {-2, -1, -1, 0};
    as_t_test_zero(four, 4, &t, &p);
    near(t, -2 / sqrt(2.0 / 3), 1e-12, "t of four"); /* sd = sqrt(2/3), t = -1 / (sd / 2) */
    near(p, as_t_two_sided(t, 3), EXACT_TOL, "p of four");
    /* no spread: infinite t unless the mean is 0 */
    double same[] = {0.05, 0.05, 0.05};
    as_t_test_zero(same, 3, &t, &p);
    assert_true(isinf(t) && t > 0 && p == 0.0);
    double neg[] = {-3, -3};
    as_t_test_zero(neg, 2, &t, &p);
    assert_true(isinf(t) && t < 0 && p == 0.0);
    double zero[] = {0, 0};
    as_t_test_zero(zero, 2, &t, &p);
    assert_true(t == 0.0 && p == 1.0);
    /* one value has no spread to test against; nor has none */
    as_t_test_zero(two, 1, &t, &p);
    assert_true(t == 0.0 && p == 1.0);
    as_t_test_zero(NULL, 0, &t, &p);
    assert_true(t == 0.0 && p == 1.0);
    double nan_in[] = {0.1, NAN};
    as_t_test_zero(nan_in, 2, &t, &p);
    assert_true(isnan(t) && p == 1.0);
    double inf_in[] = {0.1, INFINITY};
    as_t_test_zero(inf_in, 2, &t, &p);
    assert_true(isnan(t) && p == 1.0);
    /* the scale does not matter: neither squares that underflow nor
     * ones that overflow (mean 1/2, sd 1/sqrt 2 of the scale: t = 1) */
    double tiny[] = {1e-300, 0};
    as_t_test_zero(tiny, 2, &t, &p);
    near(t, 1, 1e-12, "t of {1e-300, 0}");
    near(p, 0.5, 1e-12, "p of {1e-300, 0}");
    double huge[] = {1e300, 0};
    as_t_test_zero(huge, 2, &t, &p);
    near(t, 1, 1e-12, "t of {1e300, 0}");
    double signs[] = {1e-170, -1e-170, 3e-170};
    as_t_test_zero(signs, 3, &t, &p);
    assert_true(p > 0.3);
}

/* ---- sign test --------------------------------------------------------- */

static void test_sign_test_small_n_exact(void **state)
{
    (void)state;
    assert_true(as_sign_test(5, 5) == 1.0 / 32);
    assert_true(as_sign_test(4, 5) == 6.0 / 32);
    assert_true(as_sign_test(0, 7) == 1.0);
    assert_true(as_sign_test(0, 0) == 1.0);
    assert_true(as_sign_test(6, 5) == 0.0); /* more than n agree: impossible */
    /* the exact integer sums over C(62, i), and binomtest agrees */
    near(as_sign_test(40, 62), 0.015007932174533646, EXACT_TOL, "40 of 62");
    near(as_sign_test(31, 62), 0.5504618431735705, EXACT_TOL, "31 of 62");
}

static void test_sign_test_large_n_log_space(void **state)
{
    (void)state;
    /* exact sums of big-integer binomials (Python fractions), which
     * scipy.stats.binomtest(k, n, 0.5, alternative='greater') matches to
     * 1e-13; log space loses a few digits to lgamma of large arguments */
    near(as_sign_test(40, 63), 0.021478272762194606, ASYM_TOL, "40 of 63");
    near(as_sign_test(530, 1000), 0.03101159754918159, ASYM_TOL, "530 of 1000");
    /* fewer than half agree: the complement is summed */
    near(as_sign_test(1400, 3000), 0.9998792049685775, ASYM_TOL, "1400 of 3000");
    near(as_sign_test(2600, 5000), 0.002441824868758759, ASYM_TOL, "2600 of 5000");
    near(as_sign_test(3000, 5000), 6.501155002601886e-46, ASYM_TOL, "3000 of 5000");
    assert_true(as_sign_test(1, 5000) == 1.0); /* 1 - 2^-5000 */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mwu_3v4_no_ties_matches_scipy_exact),
        cmocka_unit_test(test_mwu_5v5_no_ties_matches_scipy_exact),
        cmocka_unit_test(test_mwu_ties_across_arms_match_enumeration),
        cmocka_unit_test(test_mwu_ties_within_and_across_match_enumeration),
        cmocka_unit_test(test_mwu_one_dominant_tie_group_matches_enumeration),
        cmocka_unit_test(test_mwu_all_equal_gives_p_one),
        cmocka_unit_test(test_mwu_ten_percent_slower_is_significant),
        cmocka_unit_test(test_mwu_exact_up_to_100_values_asymptotic_above),
        cmocka_unit_test(test_mwu_150v150_with_ties_matches_scipy_asymptotic),
        cmocka_unit_test(test_mwu_2000v2000_matches_scipy_asymptotic),
        cmocka_unit_test(test_mwu_rejects_empty_sample),
        cmocka_unit_test(test_hl_odd_count_is_middle_difference),
        cmocka_unit_test(test_hl_even_count_is_mean_of_middle_two),
        cmocka_unit_test(test_hl_ci_5v5_matches_brute_force),
        cmocka_unit_test(test_hl_ci_tail_equal_to_cut_keeps_order_statistic),
        cmocka_unit_test(test_hl_ci_25v25_matches_brute_force),
        cmocka_unit_test(test_hl_too_small_for_any_k_gives_whole_range),
        cmocka_unit_test(test_hl_150v150_uses_normal_critical_value),
        cmocka_unit_test(test_hl_2000v2000_searches_four_million_differences),
        cmocka_unit_test(test_hl_extreme_values_do_not_overflow),
        cmocka_unit_test(test_hl_estimate_exact_past_2_53),
        cmocka_unit_test(test_hl_rejects_invalid_input),
        cmocka_unit_test(test_t_two_sided_known_values),
        cmocka_unit_test(test_t_test_zero),
        cmocka_unit_test(test_sign_test_small_n_exact),
        cmocka_unit_test(test_sign_test_large_n_log_space),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
