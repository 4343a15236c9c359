/* A/B statistics on integer durations. Everything works on sorted copies of
 * the two samples: ranks come from one merge of them, and the differences
 * of the Hodges-Lehmann shift are counted over them with two pointers
 * instead of being written out (5000 passes per arm would be 25 million
 * differences, 200 MB, for three order statistics). */
#include "tools/abstats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SQRT2 1.41421356237309504880
#define SQRT2PI 2.50662827463100050242
#define LN2 0.69314718055994530942

/* Below 2^63 a duration is also an int64, and every difference of two fits
 * one. */
#define AS_VALUE_LIMIT ((uint64_t)1 << 63)

/* A tail probability computed in floating point and a cut-off taken from a
 * decimal confidence level meet at exact ties (1/20 against (1 - 0.9) / 2):
 * closer than this, relatively, they count as equal, so the interval does
 * not lose an order statistic to the rounding of 0.9. */
#define AS_CUT_SLACK 1e-9

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static double norm_sf(double z)
{
    return 0.5 * erfc(z / SQRT2);
}

/* The standard normal quantile: Acklam's rational approximation (relative
 * error 1.15e-9), then one Halley step against erfc, which brings it to
 * about the precision of erfc itself. The upper half is the mirror of the
 * lower: 1 - p is exact there, while erfc near 2 would leave the step too
 * few digits to correct with. Needs 0 < p < 1. */
static double norm_ppf(double p)
{
    static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                               1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
    static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                               6.680131188771972e+01,  -1.328068155288572e+01};
    static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                               -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
    static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                               3.754408661907416e+00};
    if (p > 0.5)
        return -norm_ppf(1 - p);
    double x;
    if (p < 0.02425) {
        double q = sqrt(-2 * log(p));
        x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    } else {
        double q = p - 0.5, r = q * q;
        x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
            (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
    }
    double e = 0.5 * erfc(-x / SQRT2) - p;
    double u = e * SQRT2PI * exp(x * x / 2);
    return x - u / (1 + x * u / 2);
}

/* The number of k-subsets of the n weights w with each sum 0 .. smax, in
 * row k of a (k + 1) x (smax + 1) table; the caller frees the table. Rows
 * are subset sizes, so one pass over the weights fills them all, each row
 * from the one below it, updated downwards as in a 0/1 knapsack. Counts
 * reach C(100, 50) ~ 1e29: doubles hold that range, and the p values are
 * ratios, which only need the relative precision. */
static double *subset_sums(const uint32_t *w, size_t n, size_t k, size_t smax)
{
    size_t width = smax + 1;
    double *t = calloc((k + 1) * width, sizeof *t);
    if (!t)
        return NULL;
    t[0] = 1;
    size_t top = 0; /* the largest sum reached so far */
    for (size_t i = 0; i < n; i++) {
        size_t wi = w[i];
        top = top + wi < smax ? top + wi : smax;
        size_t jmax = i + 1 < k ? i + 1 : k;
        for (size_t j = jmax; j >= 1; j--) {
            double *dst = t + j * width;
            const double *src = t + (j - 1) * width;
            for (size_t s = top; s >= wi; s--) {
                dst[s] += src[s - wi];
                if (s == wi)
                    break;
            }
        }
    }
    return t;
}

hbg_status as_mann_whitney(const uint64_t *base, size_t nb, const uint64_t *meas, size_t nm, as_mwu *out)
{
    if (!out || !base || !meas || nb == 0 || nm == 0)
        return HBG_E_INVAL;
    memset(out, 0, sizeof *out);
    out->nb = nb;
    out->nm = nm;
    size_t n = nb + nm;
    uint64_t *b = malloc(n * sizeof *b);
    if (!b)
        return HBG_E_NOMEM;
    uint64_t *m = b + nb;
    memcpy(b, base, nb * sizeof *b);
    memcpy(m, meas, nm * sizeof *m);
    qsort(b, nb, sizeof *b, cmp_u64);
    qsort(m, nm, sizeof *m, cmp_u64);

    /* One merge gives the tie groups. Mid-ranks are doubled so they stay
     * integers: a group of t equal values from pooled position a (1-based)
     * has mid-rank a + (t - 1) / 2, doubled 2a + t - 1. */
    bool exact = n <= AS_EXACT_MAX;
    uint32_t rank2[AS_EXACT_MAX];
    uint64_t s2 = 0;    /* doubled rank sum of the measure arm */
    double tie = 0;     /* sum of t^3 - t over the groups */
    size_t groups = 0, i = 0, j = 0, pos = 1;
    while (i < nb || j < nm) {
        uint64_t v = j >= nm || (i < nb && b[i] <= m[j]) ? b[i] : m[j];
        size_t tb = 0, tm = 0;
        while (i < nb && b[i] == v)
            i++, tb++;
        while (j < nm && m[j] == v)
            j++, tm++;
        size_t t = tb + tm;
        uint64_t r2 = 2 * (uint64_t)pos + t - 1;
        s2 += tm * r2;
        tie += ((double)t * (double)t - 1) * (double)t;
        if (exact)
            for (size_t q = 0; q < t; q++)
                rank2[pos - 1 + q] = (uint32_t)r2;
        pos += t;
        groups++;
    }
    free(b);
    out->ties = groups < n;
    /* the doubled rank sum of the measure arm is at least nm (nm + 1): U is
     * what lies above it, halved */
    out->u = (double)(s2 - (uint64_t)nm * (nm + 1)) / 2;
    out->exact = exact;

    if (groups == 1) {
        /* one value throughout: nothing separates the arms, and the normal
         * approximation would divide by a zero variance */
        out->p_greater = out->p_less = out->p_two = 1;
        return HBG_OK;
    }

    if (exact) {
        /* The statistic's distribution over all C(n, nm) ways to split the
         * pooled ranks, ties as they are. The smaller arm is the one
         * counted (a smaller table); the other arm's sum is the total
         * n (n + 1) less it, which turns the tails round. */
        bool by_meas = nm <= nb;
        size_t k = by_meas ? nm : nb;
        uint64_t obs = by_meas ? s2 : (uint64_t)n * (n + 1) - s2;
        size_t smax = k * (2 * n - k + 1); /* doubled ranks of the k largest */
        double *t = subset_sums(rank2, n, k, smax);
        if (!t)
            return HBG_E_NOMEM;
        const double *row = t + k * (smax + 1);
        double total = 0, ge = 0, le = 0;
        for (size_t s = 0; s <= smax; s++) {
            total += row[s];
            if (s >= obs)
                ge += row[s];
            if (s <= obs)
                le += row[s];
        }
        free(t);
        double pge = fmin(1, ge / total), ple = fmin(1, le / total);
        out->p_greater = by_meas ? pge : ple;
        out->p_less = by_meas ? ple : pge;
    } else {
        /* as scipy.stats.mannwhitneyu(method='asymptotic'): each one-sided
         * p is the upper tail of its own U (U of measure, or of base,
         * nb nm - U) less a continuity half */
        double nn = (double)n, mn = (double)nb * (double)nm;
        double sd = sqrt(mn / 12 * ((nn + 1) - tie / (nn * (nn - 1))));
        double mu = mn / 2;
        out->p_greater = norm_sf((out->u - mu - 0.5) / sd);
        out->p_less = norm_sf((mn - out->u - mu - 0.5) / sd);
    }
    out->p_two = fmin(1, 2 * fmin(out->p_greater, out->p_less));
    return HBG_OK;
}

/* Pairs (i, j) with m[j] - b[i] <= t. As b[i] grows, more of the sorted m
 * qualify, so the prefix of m that does only ever lengthens. */
static uint64_t count_le(const int64_t *b, size_t nb, const int64_t *m, size_t nm, int64_t t)
{
    uint64_t cnt = 0;
    size_t j = 0;
    for (size_t i = 0; i < nb; i++) {
        while (j < nm && m[j] - b[i] <= t)
            j++;
        cnt += j;
    }
    return cnt;
}

/* The k-th smallest (1-based) difference m[j] - b[i]: the least t in
 * [lo, hi] with at least k differences at or below it. The range can span
 * nearly 2^64, so its midpoint is taken in unsigned arithmetic. */
static int64_t kth_diff(const int64_t *b, size_t nb, const int64_t *m, size_t nm, uint64_t k, int64_t lo, int64_t hi)
{
    while (lo < hi) {
        int64_t mid = lo + (int64_t)(((uint64_t)hi - (uint64_t)lo) / 2);
        if (count_le(b, nb, m, nm, mid) >= k)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* The largest k with P(U <= k - 1) <= tail under the no-ties null, and
 * that probability (the interval misses on each side with it). Exact: the
 * rank-sum distribution of the smaller arm over ranks 1 .. n, shifted to
 * U; the distribution is symmetric, so either arm gives the same U. */
static hbg_status crit_exact(size_t nb, size_t nm, double tail, uint64_t *k_out, double *p_out, double *p0_out)
{
    size_t n = nb + nm;
    size_t k = nm < nb ? nm : nb;
    uint32_t rank[AS_EXACT_MAX];
    for (size_t i = 0; i < n; i++)
        rank[i] = (uint32_t)(i + 1);
    size_t smin = k * (k + 1) / 2, smax = k * (2 * n - k + 1) / 2;
    double *t = subset_sums(rank, n, k, smax);
    if (!t)
        return HBG_E_NOMEM;
    const double *row = t + k * (smax + 1);
    double total = 0;
    for (size_t s = smin; s <= smax; s++)
        total += row[s];
    *p0_out = row[smin] / total; /* P(U <= 0): what the whole range misses on each side */
    double cut = tail * (1 + AS_CUT_SLACK), cum = 0, p = 0;
    uint64_t kk = 0;
    for (size_t s = smin; s <= smax; s++) {
        cum += row[s];
        if (cum / total > cut)
            break;
        kk = s - smin + 1;
        p = cum / total;
    }
    free(t);
    *k_out = kk;
    *p_out = p;
    return HBG_OK;
}

hbg_status as_hodges_lehmann(const uint64_t *base, size_t nb, const uint64_t *meas, size_t nm, double level,
                             as_shift *out)
{
    if (!out || !base || !meas || nb == 0 || nm == 0 || !(level > 0 && level < 1))
        return HBG_E_INVAL;
    if (nm > UINT64_MAX / nb)
        return HBG_E_INVAL;
    for (size_t i = 0; i < nb; i++)
        if (base[i] >= AS_VALUE_LIMIT)
            return HBG_E_INVAL;
    for (size_t i = 0; i < nm; i++)
        if (meas[i] >= AS_VALUE_LIMIT)
            return HBG_E_INVAL;
    memset(out, 0, sizeof *out);
    int64_t *b = malloc((nb + nm) * sizeof *b);
    if (!b)
        return HBG_E_NOMEM;
    int64_t *m = b + nb;
    for (size_t i = 0; i < nb; i++)
        b[i] = (int64_t)base[i];
    for (size_t i = 0; i < nm; i++)
        m[i] = (int64_t)meas[i];
    qsort(b, nb, sizeof *b, cmp_i64);
    qsort(m, nm, sizeof *m, cmp_i64);

    uint64_t nd = (uint64_t)nb * nm;
    int64_t dmin = m[0] - b[nb - 1], dmax = m[nm - 1] - b[0];
    if (nd % 2) {
        out->est_whole = kth_diff(b, nb, m, nm, nd / 2 + 1, dmin, dmax);
    } else {
        /* the mean of the middle two, exactly: lo + (hi - lo) / 2, the
         * distance taken unsigned (it can pass 2^63), its half back in
         * int64 between lo and hi, and an odd distance a half more; the
         * sum of two doubles rounded it past 2^53 */
        int64_t lo = kth_diff(b, nb, m, nm, nd / 2, dmin, dmax);
        int64_t hi = kth_diff(b, nb, m, nm, nd / 2 + 1, lo, dmax);
        uint64_t d = (uint64_t)hi - (uint64_t)lo;
        out->est_whole = lo + (int64_t)(d / 2);
        out->est_half = d & 1;
    }

    double tail = (1 - level) / 2;
    uint64_t k;
    if (nb + nm <= AS_EXACT_MAX) {
        double p, p0;
        hbg_status st = crit_exact(nb, nm, tail, &k, &p, &p0);
        if (st) {
            free(b);
            return st;
        }
        /* too few values for the level asked: the whole range, and what
         * it really covers (1 - 2 / C(n, nb); 0 for one value an arm) */
        out->level = k >= 1 ? 1 - 2 * p : fmax(0, 1 - 2 * p0);
    } else {
        /* the normal approximation to the critical value, without a
         * continuity correction: it errs towards a wider interval */
        double mn = (double)nd, n1 = (double)(nb + nm) + 1;
        double z = norm_ppf((1 + level) / 2);
        double c = floor(mn / 2 - z * sqrt(mn * n1 / 12));
        k = c > 0 ? (uint64_t)c : 0;
        out->level = k >= 1 ? level : 1;
    }
    if (k >= 1) {
        out->lo = kth_diff(b, nb, m, nm, k, dmin, dmax);
        out->hi = kth_diff(b, nb, m, nm, nd - k + 1, out->lo, dmax);
    } else {
        out->lo = dmin;
        out->hi = dmax;
    }
    free(b);
    return HBG_OK;
}

double as_shift_est(const as_shift *s)
{
    return (double)s->est_whole + (s->est_half ? 0.5 : 0);
}

int as_shift_sign(const as_shift *s)
{
    /* the floor is -1 for -0.5, and 0 for +0.5 */
    return s->est_whole > 0 || (s->est_whole == 0 && s->est_half) ? 1 : s->est_whole < 0 ? -1 : 0;
}

/* Exact to the rounding of one division up to n = 62, where the binomial
 * sums still fit 64 bits (Pascal's row, so no intermediate overflows).
 * Above, the terms are walked from the largest in the wanted tail with
 * their ratios, the first from lgamma: starting from the largest keeps an
 * underflowed start from zeroing a tail that is not negligible, and when
 * the tail holds the bulk its complement is summed instead. */
/* The series' term k from term k - 1: times c^2 and (2k)/(2k+1) for odd
 * df, (2k-1)/(2k) for even. */
static double t_step(size_t k, bool odd)
{
    return odd ? (double)(2 * k) / (double)(2 * k + 1) : (double)(2 * k - 1) / (double)(2 * k);
}

/* Student's t, P(|T| >= t) for a whole df, from the closed forms of
 * P(|T| < t) (Abramowitz and Stegun 26.7.3 and 26.7.4), th = atan(t /
 * sqrt(df)), c = cos th, s = sin th:
 *   odd df:  (2/pi)(th + s (c + 2/3 c^3 + ... + [2.4...(df-3)] /
 *            [1.3...(df-2)] c^(df-2))), th alone for df = 1;
 *   even df: s (1 + 1/2 c^2 + 1.3/(2.4) c^4 + ... + [1.3...(df-3)] /
 *            [2.4...(df-2)] c^(df-2)).
 * Each is the head of a series that sums to 1 (for odd df, of s times
 * arcsin(c) / s = pi/2 - th), so P(|T| >= t) is the rest of it, a sum of
 * positive terms. 1 minus the head loses digits as it gets small, and
 * every digit under about 1e-16 (a 19 df t of 72 came out 0, not
 * 1.4e-24; 1000 df and t = 7, 4.6864e-12 for 4.6875e-12), so below 0.1
 * the rest is summed instead; above, it converges slowly and 1 minus
 * the head is exact enough. The rest's terms fall by c^2 each, and with
 * P below 0.1, 1 - c^2 = t^2 / (df + t^2) is above 2.7 / (df + 2.7): at
 * most some 15 df terms for 17 digits. */
double as_t_two_sided(double t, size_t df)
{
    if (df == 0 || isnan(t) || t == 0)
        return 1;
    t = fabs(t);
    if (isinf(t))
        return 0;
    /* cot th = sqrt(df) / t, whence c^2 and s without the rounding of
     * cos: a t of 1e8 must not leave c^2 at 0 */
    double r = sqrt((double)df) / t, c2 = r * r / (1 + r * r), s = 1 / sqrt(1 + r * r);
    bool odd = df % 2;
    /* the head: m terms, from c (odd df) or 1 (even); term is then the
     * first term of the rest */
    size_t m = odd ? (df - 1) / 2 : df / 2;
    double term = odd ? sqrt(c2) : 1, head = 0;
    for (size_t k = 1; k <= m; k++) {
        head += term;
        term *= c2 * t_step(k, odd);
    }
    double scale = odd ? 2 / 3.14159265358979323846 : 1;
    double p = 1 - (odd ? scale * (atan(t / sqrt((double)df)) + s * head) : s * head);
    if (p < 0.1) {
        double rest = 0;
        for (size_t k = m + 1; term > rest * 1e-17 && k < m + 50 * (m + 10); k++) {
            rest += term;
            term *= c2 * t_step(k, odd);
        }
        p = scale * s * rest;
    }
    return p < 0 ? 0 : p > 1 ? 1 : p;
}

void as_t_test_zero(const double *x, size_t n, double *t, double *p)
{
    *t = 0, *p = 1;
    if (n < 2)
        return;
    /* t does not change with the scale: the values over the largest
     * magnitude, so that neither the squares underflow ({1e-300, 0}
     * came out of no spread) nor they overflow ({1e200, 2e200}) */
    double big = 0;
    bool same = true;
    for (size_t i = 0; i < n; i++) {
        if (isnan(x[i]) || isinf(x[i])) {
            *t = NAN;
            return;
        }
        big = fabs(x[i]) > big ? fabs(x[i]) : big;
        same = same && x[i] == x[0];
    }
    /* equal values: no spread; t infinite unless they are 0 */
    if (same) {
        if (x[0] != 0)
            *t = x[0] > 0 ? INFINITY : -INFINITY, *p = 0;
        return;
    }
    double mean = 0, ss = 0;
    for (size_t i = 0; i < n; i++)
        mean += x[i] / big;
    mean /= (double)n;
    for (size_t i = 0; i < n; i++)
        ss += (x[i] / big - mean) * (x[i] / big - mean);
    if (ss == 0) { /* values apart by less than the scale's rounding */
        *t = mean > 0 ? INFINITY : mean < 0 ? -INFINITY : 0;
        *p = mean != 0 ? 0 : 1;
        return;
    }
    *t = mean / sqrt(ss / (double)(n - 1) / (double)n);
    *p = as_t_two_sided(*t, n - 1);
}

double as_sign_test(size_t agree, size_t n)
{
    if (agree == 0)
        return 1;
    if (agree > n)
        return 0;
    if (n <= 62) {
        uint64_t row[63] = {1};
        for (size_t r = 1; r <= n; r++)
            for (size_t i = r; i >= 1; i--)
                row[i] += row[i - 1];
        uint64_t sum = 0;
        for (size_t i = agree; i <= n; i++)
            sum += row[i];
        return ldexp((double)sum, -(int)n);
    }
    double nn = (double)n;
    bool upper = 2 * agree > n;
    /* upper: sum over i >= agree, from i = agree up; else 1 - the sum over
     * i <= agree - 1, from i = agree - 1 down */
    size_t i = upper ? agree : agree - 1;
    double di = (double)i;
    double term = exp(lgamma(nn + 1) - lgamma(di + 1) - lgamma(nn - di + 1) - nn * LN2);
    double sum = 0;
    for (;;) {
        sum += term;
        if (term < sum * 1e-17)
            break;
        if (upper) {
            if (i == n)
                break;
            term *= (double)(n - i) / (double)(i + 1);
            i++;
        } else {
            if (i == 0)
                break;
            term *= (double)i / (double)(n - i + 1);
            i--;
        }
    }
    return upper ? fmin(1, sum) : fmax(0, 1 - sum);
}
