/* Operation timestamps: the clock map between two anchors (exact values),
 * and readings of a real pass that land between its anchors and agree with
 * the monotonic clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <cmocka.h>

#include "orch/opclock.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_map_interpolates_between_its_anchors),
        cmocka_unit_test(the_map_rounds_never_past_the_closing_anchor),
        cmocka_unit_test(a_degenerate_map_is_its_opening_anchor),
        cmocka_unit_test(readings_of_a_pass_land_between_its_anchors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
