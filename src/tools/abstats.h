/* Statistics of an A/B comparison: two samples of integer durations (ns),
 * "base" and "measure".
 *
 * - Mann-Whitney U over the two samples, tie-corrected. Small samples get
 *   the exact permutation distribution of the statistic given the ties (the
 *   pooled mid-ranks), larger ones the normal approximation with the tie
 *   correction of the variance and a continuity correction.
 * - The Hodges-Lehmann shift (median of all measure - base differences)
 *   with its distribution-free confidence interval (order statistics of the
 *   pairwise differences at the critical value of U). The differences are
 *   never materialised: the k-th smallest is found by a search on its value
 *   that counts, over the two sorted samples, the pairs at or below it, so
 *   logs of many thousands of passes need no quadratic memory.
 * - The exact one-sided sign test over repetitions.
 *
 * No heap use besides copies of the two samples (sorted) and, on the exact
 * paths, one table of subset counts (a row per subset size up to
 * min(nb, nm), a column per rank sum), 3 MB at its largest
 * (50 + 50), freed before returning. */
#ifndef HBG_TOOLS_ABSTATS_H
#define HBG_TOOLS_ABSTATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "hbg/status.h"

/* Up to this many values in both samples together, U's distribution is
 * computed exactly (with ties: conditionally on them). */
#define AS_EXACT_MAX 100

typedef struct as_mwu {
    size_t nb, nm;
    /* U of measure over base: the number of pairs (b, m) with m > b, plus
     * half the pairs with m == b. Ranges 0 .. nb * nm; nb * nm / 2 under
     * no effect. */
    double u;
    double p_greater;      /* one-sided: measure tends to be larger (slower) */
    double p_less;         /* one-sided: measure tends to be smaller (faster) */
    double p_two;          /* two-sided: min(1, 2 * min(p_greater, p_less)) */
    bool exact;            /* the exact distribution was used */
    bool ties;             /* the pooled sample has ties */
} as_mwu;

typedef struct as_shift {
    /* The Hodges-Lehmann estimate of measure - base, ns: est_whole + 0.5
     * when est_half. It is the middle difference, or the mean of the middle
     * two, so a whole or a half ns; a double would round it past 2^53, and
     * twice it may pass int64 (both middle differences near 2^63), so it is
     * kept as its floor and a half. lo <= est_whole and est_whole + 0.5 *
     * est_half <= hi: the estimate lies inside its interval. */
    int64_t est_whole;
    bool est_half;
    int64_t lo, hi;        /* the confidence interval, ns, closed */
    double level;          /* its coverage under the no-ties null: the actual one (>= the level
                            * asked) on the exact path, the level asked on the approximation;
                            * for the whole range, what it covers (below the level asked) */
} as_shift;

/* U and its p values. Needs nb >= 1 and nm >= 1 (else HBG_E_INVAL).
 * HBG_E_NOMEM. */
hbg_status as_mann_whitney(const uint64_t *base, size_t nb, const uint64_t *meas, size_t nm, as_mwu *out);

/* The Hodges-Lehmann shift of measure - base and its two-sided interval at
 * confidence `level` (e.g. 0.95). The interval is [d(k), d(N - k + 1)] of
 * the N = nb * nm sorted differences, k the largest with
 * P(U <= k - 1) <= (1 - level) / 2 under the no-ties null (exact for
 * nb + nm <= AS_EXACT_MAX, the normal approximation above). When the
 * samples are too small for any k >= 1, the interval is the whole range
 * of differences and `level` reports its actual coverage,
 * 1 - 2 / C(nb + nm, nb), below the level asked (0 for 1 and 1). Above AS_EXACT_MAX, k is
 * floor(nb nm / 2 - z sqrt(nb nm (N + 1) / 12)), z the (1 + level) / 2
 * normal quantile. A tail equal to (1 - level) / 2 within 1e-9 relative
 * counts as at or below it (0.9 is not exact in binary). Values must be
 * below 2^63, and 0 < level < 1 (HBG_E_INVAL otherwise, and for an empty
 * sample). HBG_E_NOMEM. */
hbg_status as_hodges_lehmann(const uint64_t *base, size_t nb, const uint64_t *meas, size_t nm, double level,
                             as_shift *out);

/* The exact one-sided sign test: the probability of at least `agree` of
 * `n` fair coin flips coming up heads, sum_{i >= agree} C(n, i) / 2^n
 * (2^-n when agree == n; 1 when agree == 0). */
double as_sign_test(size_t agree, size_t n);

/* Student's t with df >= 1 degrees of freedom: P(|T| >= t), the two-sided
 * p of a statistic t (its sign does not matter), from the closed forms
 * for a whole df (Abramowitz and Stegun 26.7.3 and 26.7.4), its small
 * values summed as the tail of their series: to a few units in the last
 * place down to the smallest doubles, in [0, 1]. 1 for df == 0 or a NaN
 * t, 0 for an infinite one. */
double as_t_two_sided(double t, size_t df);

/* A one-sample t-test of x[0..n) against a mean of 0: *t = mean / (sd /
 * sqrt(n)), sd with n - 1, and *p its two-sided p with n - 1 degrees of
 * freedom. n < 2 (no spread to test against) gives t = 0, p = 1; values
 * all equal give p = 1 when they are 0 and p = 0 (t infinite, signed)
 * otherwise; a NaN or an infinity among them, t NaN and p = 1. */
void as_t_test_zero(const double *x, size_t n, double *t, double *p);

/* The shift's estimate as a double, rounded past 2^53: for percentages and
 * comparisons with other doubles, never to print it (the fields are exact). */
double as_shift_est(const as_shift *s);
/* Its sign, exactly: +1, -1, or 0. */
int as_shift_sign(const as_shift *s);

#endif
