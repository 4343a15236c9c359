/* Operation timestamps: the clock map between two anchors (exact values),
 * readings of a real pass that land between its anchors and agree with
 * the monotonic clock, and the breakdown's sample (orch/opsample.h): its
 * periods, its draws and its estimate. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <cmocka.h>

#include "orch/opclock.h"
#include "orch/opsample.h"

static void sleep_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

static void the_map_interpolates_between_its_anchors(void **state)
{
    (void)state;
    hbg__clockmap m = {.ta = 1000, .ma = 5000, .tb = 3000, .mb = 6000};
    hbg__clockmap_fix(&m);
    assert_true(m.ns_per_tick == 0.5);
    assert_int_equal(hbg__clockmap_ns(&m, 1000), 5000);
    assert_int_equal(hbg__clockmap_ns(&m, 2000), 5500);
    assert_int_equal(hbg__clockmap_ns(&m, 2999), 5999);
    assert_int_equal(hbg__clockmap_ns(&m, 3000), 6000);
    assert_int_equal(hbg__clockmap_dur(&m, 2001), 1001); /* 1000.5 rounds up */
    /* A reading outside the anchors (an out-of-order TSC read) is clamped
     * to the nearer one: nothing maps outside the pass. */
    assert_int_equal(hbg__clockmap_ns(&m, 999), 5000);
    assert_int_equal(hbg__clockmap_ns(&m, 0), 5000);
    assert_int_equal(hbg__clockmap_ns(&m, 3001), 6000);
    assert_int_equal(hbg__clockmap_ns(&m, UINT64_MAX), 6000);
}

static void the_map_rounds_never_past_the_closing_anchor(void **state)
{
    (void)state;
    /* A rate whose product rounds up: the last tick before the anchor must
     * still map at or before mb. */
    hbg__clockmap m = {.ta = 0, .ma = 0, .tb = 3, .mb = 10};
    hbg__clockmap_fix(&m);
    for (uint64_t t = 0; t <= 3; t++)
        assert_true(hbg__clockmap_ns(&m, t) <= 10);
    assert_int_equal(hbg__clockmap_ns(&m, 1), 3);
    assert_int_equal(hbg__clockmap_ns(&m, 2), 6);
}

static void a_degenerate_map_is_its_opening_anchor(void **state)
{
    (void)state;
    hbg__clockmap same = {.ta = 7, .ma = 100, .tb = 7, .mb = 100};
    hbg__clockmap_fix(&same);
    assert_int_equal(hbg__clockmap_ns(&same, 7), 100);
    assert_int_equal(hbg__clockmap_ns(&same, 8), 100);
    assert_int_equal(hbg__clockmap_dur(&same, 50), 0);
    hbg__clockmap back = {.ta = 10, .ma = 100, .tb = 20, .mb = 90};
    hbg__clockmap_fix(&back);
    assert_int_equal(hbg__clockmap_ns(&back, 15), 100);
}

static void readings_of_a_pass_land_between_its_anchors(void **state)
{
    (void)state;
    hbg__opclock c;
    hbg__opclock_init(&c);
    for (int pass = 0; pass < 3; pass++) {
        uint64_t before = hbg_mono_ns();
        hbg__opclock_open(&c);
        uint64_t r0 = hbg__opclock_now(&c);
        sleep_ms(2);
        uint64_t m1 = hbg_mono_ns();
        uint64_t r1 = hbg__opclock_now(&c);
        uint64_t m2 = hbg_mono_ns();
        sleep_ms(1);
        uint64_t r2 = hbg__opclock_now(&c);
        hbg__opclock_close(&c);
        uint64_t after = hbg_mono_ns();
        uint64_t n0 = hbg__opclock_ns(&c, r0), n1 = hbg__opclock_ns(&c, r1), n2 = hbg__opclock_ns(&c, r2);
        /* Inside the monotonic reads that bracket the pass: exactly, not
         * within a tolerance, since the map is pinned to reads inside it. */
        assert_true(before <= n0 && n0 <= n1 && n1 <= n2 && n2 <= after);
        /* The middle reading agrees with the monotonic reads around it to
         * within the anchors' error: tens of ns; 20 us allows for a
         * descheduled read on a loaded machine without hiding a wrong map
         * (a wrong rate is off by the ms slept). */
        uint64_t off = n1 < m1 ? m1 - n1 : n1 > m2 ? n1 - m2 : 0;
        assert_true(off <= 20000);
        assert_int_equal(hbg__opclock_dur(&c, r2 - r0) >= 2500000, 1);
    }
}

static void the_period_weighs_the_reads_against_the_mean_operation(void **state)
{
    (void)state;
    /* nothing timed before: everything */
    assert_int_equal(hbg__opsample_period(0, 0, 22), 1);
    assert_int_equal(hbg__opsample_period(100, 0, 22), 1);
    assert_int_equal(hbg__opsample_period(0, 5000, 22), 1);
    /* 100 ops of 100 ns, reads of 20 ns: ceil(20 / (0.002 * 100)) = 100 */
    assert_int_equal(hbg__opsample_period(100, 10000, 20), 100);
    /* rounds up, never down: ceil(21 * 99 / 20) = ceil(103.95) */
    assert_int_equal(hbg__opsample_period(99, 10000, 21), 104);
    /* 40 replays of 370 ns: ceil(28.4) */
    assert_int_equal(hbg__opsample_period(40, 14800, 21), 29);
    /* 5 ops of 500 ns want ceil(22): not capped at the 5 a pass makes */
    assert_int_equal(hbg__opsample_period(5, 2500, 22), 22);
    /* 1,000 memo answers of 30 ns want 367: the longest period */
    assert_int_equal(hbg__opsample_period(1000, 30000, 22), HBG_OPSAMPLE_MAX_PERIOD);
    /* a 50 us Definition build: timed whole */
    assert_int_equal(hbg__opsample_period(1, 50000, 22), 1);
    /* 40 replays of 20 us: the reads are 0.1 % of them, under the share */
    assert_int_equal(hbg__opsample_period(40, 800000, 22), 1);
    /* free reads: everything; reads past any product: the longest period */
    assert_int_equal(hbg__opsample_period(1000, 30000, 0), 1);
    assert_int_equal(hbg__opsample_period(1000, 30000, UINT64_MAX), HBG_OPSAMPLE_MAX_PERIOD);
    assert_int_equal(hbg__opsample_period(3, 1, UINT64_MAX), HBG_OPSAMPLE_MAX_PERIOD);
}

/* The mean holds a window of HBG_OPSAMPLE_WINDOW operations: below it a
 * plain sum, past it scaled down with the mean kept; a cold pass timed
 * whole fades as warm operations come (the figures opsample.h gives). */
static void the_mean_fades_to_a_window(void **state)
{
    (void)state;
    hbg__opmean m = {0, 0};
    hbg__opmean_add(&m, 1000, 10);
    assert_int_equal(m.ns, 1000);
    assert_int_equal(m.n, 10);
    hbg__opmean_add(&m, 600, 6);
    assert_int_equal(m.ns, 1600);
    assert_int_equal(m.n, 16);
    hbg__opmean_add(&m, 100, 1); /* 1700 over 17: 1600 over 16 */
    assert_int_equal(m.ns, 1600);
    assert_int_equal(m.n, HBG_OPSAMPLE_WINDOW);
    hbg__opmean_add(&m, 0, 0);
    assert_int_equal(m.ns, 1600);
    /* a cold pass of 277 operations of 400 ns, then warm ones of 40 ns */
    m = (hbg__opmean){0, 0};
    hbg__opmean_add(&m, 277 * 400, 277);
    assert_int_equal(m.ns, 16 * 400);
    assert_int_equal(m.n, 16);
    for (int k = 1; k <= 37; k++) {
        hbg__opmean_add(&m, 40, 1);
        double excess = ((double)m.ns / (double)m.n - 40) / 360;
        if (k == 11)
            assert_true(excess > 0.45 && excess < 0.55);
        if (k == 38)
            assert_true(excess > 0.08 && excess < 0.12);
    }
}

static void the_gaps_stay_in_range_and_average_the_period(void **state)
{
    (void)state;
    uint64_t rng = HBG_OPSAMPLE_SEED;
    uint32_t at = 7;
    assert_int_equal(hbg__opsample_gap(&rng, 1, &at), 1);
    assert_int_equal(hbg__opsample_first(&rng, 1, &at), 1);
    assert_int_equal(at, 0);
    assert_int_equal(rng, HBG_OPSAMPLE_SEED); /* period 1 draws nothing */
    static const uint32_t periods[] = {2, 7, 40, HBG_OPSAMPLE_MAX_PERIOD};
    for (size_t i = 0; i < sizeof periods / sizeof *periods; i++) {
        uint32_t p = periods[i];
        uint64_t sum = 0;
        uint32_t lo = UINT32_MAX, hi = 0, flo = UINT32_MAX, fhi = 0;
        enum { N = 200000 };
        for (int k = 0; k < N; k++) {
            uint32_t f = hbg__opsample_first(&rng, p, &at);
            assert_int_equal(f, at + 1);
            uint32_t g = hbg__opsample_gap(&rng, p, &at);
            assert_true(at < p);
            sum += g;
            lo = g < lo ? g : lo, hi = g > hi ? g : hi;
            flo = f < flo ? f : flo, fhi = f > fhi ? f : fhi;
        }
        /* every value of [1, 2P - 1] and [1, P] is drawn, none outside */
        assert_int_equal(lo, 1);
        assert_int_equal(hi, 2 * p - 1);
        assert_int_equal(flo, 1);
        assert_int_equal(fhi, p);
        /* mean P, to 1 % (the seed is fixed: the same numbers every run) */
        double mean = (double)sum / N;
        assert_true(mean > 0.99 * p && mean < 1.01 * p);
    }
}

/* Every operation of a pass is timed with probability 1/P, wherever it
 * lies: over many passes of 3.5 blocks, each place's count of timings is
 * within 5 % of passes / P. (Independent gaps, the first in [1, P] and
 * the rest in [1, 2P - 1], timed place P 1.64 / P of the time and place
 * P + 1 0.65 / P.) */
static void every_place_is_timed_alike(void **state)
{
    (void)state;
    enum { P = 16, LEN = 3 * P + P / 2, PASSES = 64000 };
    uint32_t hits[LEN] = {0};
    uint64_t rng = HBG_OPSAMPLE_SEED;
    for (int pass = 0; pass < PASSES; pass++) {
        uint32_t at, skip = hbg__opsample_first(&rng, P, &at);
        uint32_t timed = 0;
        for (int op = 0; op < LEN; op++) {
            if (--skip)
                continue;
            hits[op]++, timed++;
            skip = hbg__opsample_gap(&rng, P, &at);
        }
        /* one in each whole block, and at most one in the half block */
        assert_true(timed == 3 || timed == 4);
    }
    for (int op = 0; op < LEN; op++)
        assert_true(hits[op] > 0.95 * PASSES / P && hits[op] < 1.05 * PASSES / P);
}

static void the_total_scales_the_timed_sum(void **state)
{
    (void)state;
    const hbg__opmean none = {0, 0}, m = {600, 6};
    assert_int_equal(hbg__opsample_total(1000, 10, 40, &none), 4000);
    assert_int_equal(hbg__opsample_total(1000, 40, 40, &none), 1000);
    assert_int_equal(hbg__opsample_total(7, 3, 10, &none), 23); /* 23.3 */
    assert_int_equal(hbg__opsample_total(8, 3, 10, &none), 27); /* 26.7 */
    /* with some timed, the mean is not read */
    assert_int_equal(hbg__opsample_total(1000, 10, 40, &m), 4000);
    /* none timed: count times the mean, or unknown without one */
    assert_int_equal(hbg__opsample_total(0, 0, 5, &m), 500);
    assert_int_equal(hbg__opsample_total(0, 0, 5, &(hbg__opmean){7, 3}), 12); /* 11.7 */
    assert_int_equal(hbg__opsample_total(0, 0, 5, &none), 0);
    assert_int_equal(hbg__opsample_total(0, 0, 0, &m), 0);
}

/* A kind that makes fewer operations a pass than its period (5 submits
 * against P = 64) is timed in count / P of the passes, once each, every
 * place alike: the period is not capped at the count. */
static void a_kind_shorter_than_its_period_is_timed_in_that_share(void **state)
{
    (void)state;
    enum { P = 64, LEN = 5, PASSES = 64000 };
    uint32_t hits[LEN] = {0}, timed_passes = 0;
    uint64_t rng = HBG_OPSAMPLE_SEED;
    for (int pass = 0; pass < PASSES; pass++) {
        uint32_t at, skip = hbg__opsample_first(&rng, P, &at), timed = 0;
        for (int op = 0; op < LEN; op++) {
            if (--skip)
                continue;
            hits[op]++, timed++;
            skip = hbg__opsample_gap(&rng, P, &at);
        }
        assert_true(timed <= 1);
        timed_passes += timed;
    }
    assert_true(timed_passes > 0.95 * PASSES * LEN / P && timed_passes < 1.05 * PASSES * LEN / P);
    for (int op = 0; op < LEN; op++)
        assert_true(hits[op] > 0.9 * PASSES / P && hits[op] < 1.1 * PASSES / P);
}

/* A pass whose operations repeat with the period of its layers: one slow
 * operation and seven fast ones a layer. Timing one at random in each
 * block of 8 estimates the pass's total to within 14 % on average (the
 * blocks here are the layers: each timed one is the slow one with
 * probability 1/8), where a fixed
 * stride of 8 would time the same operation of every layer and estimate
 * 3.9x or 0.59x the total; over the passes the estimate's mean is the
 * total. */
static void random_places_estimate_a_layered_pass(void **state)
{
    (void)state;
    enum { LAYERS = 40, PER = 8, PASSES = 2000 };
    const uint64_t slow = 200, fast = 30;
    const double truth = LAYERS * (slow + (PER - 1) * fast);
    uint64_t rng = HBG_OPSAMPLE_SEED;
    double sum_est = 0, worst = 0, sum_err = 0;
    for (int pass = 0; pass < PASSES; pass++) {
        uint32_t at, skip = hbg__opsample_first(&rng, PER, &at);
        uint64_t timed = 0, tsum = 0, count = 0;
        for (int l = 0; l < LAYERS; l++)
            for (int j = 0; j < PER; j++) {
                count++;
                if (--skip)
                    continue;
                skip = hbg__opsample_gap(&rng, PER, &at);
                timed++;
                tsum += j == 0 ? slow : fast;
            }
        double est = (double)hbg__opsample_total(tsum, timed, count, &(hbg__opmean){0, 0});
        sum_est += est;
        double err = est > truth ? est / truth - 1 : 1 - est / truth;
        worst = err > worst ? err : worst;
        sum_err += err;
    }
    double mean = sum_est / PASSES;
    assert_true(mean > 0.98 * truth && mean < 1.02 * truth);
    /* A stride errs by 2.9 or 0.41 on every pass. The sample: 0.14 on
     * average, 0.66 at worst over these 2,000 passes (one pass's 40
     * timed operations can hold twice the slow share). */
    assert_true(sum_err / PASSES < 0.2);
    assert_true(worst < 1.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_map_interpolates_between_its_anchors),
        cmocka_unit_test(the_map_rounds_never_past_the_closing_anchor),
        cmocka_unit_test(a_degenerate_map_is_its_opening_anchor),
        cmocka_unit_test(readings_of_a_pass_land_between_its_anchors),
        cmocka_unit_test(the_period_weighs_the_reads_against_the_mean_operation),
        cmocka_unit_test(the_gaps_stay_in_range_and_average_the_period),
        cmocka_unit_test(every_place_is_timed_alike),
        cmocka_unit_test(the_mean_fades_to_a_window),
        cmocka_unit_test(the_total_scales_the_timed_sum),
        cmocka_unit_test(a_kind_shorter_than_its_period_is_timed_in_that_share),
        cmocka_unit_test(random_places_estimate_a_layered_pass),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
