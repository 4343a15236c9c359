/* Operation timestamps: TSC readings converted to CLOCK_MONOTONIC agree
 * with the monotonic clock, on the first pass and after calibration. */
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

static void converted_times_track_the_monotonic_clock(void **state)
{
    (void)state;
    hbg_opclock c;
    hbg_opclock_init(&c);
    hbg_opclock_pass(&c);
    /* first pass: no rate yet, plain monotonic nanoseconds */
    assert_false(c.tsc);
    uint64_t m = hbg_mono_ns(), t = hbg_opclock_now(&c);
    assert_true(hbg_opclock_ns(&c, t) >= m);
    sleep_ms(5);
    for (int pass = 0; pass < 3; pass++) {
        hbg_opclock_pass(&c);
        if (c.invariant)
            assert_true(c.tsc);
        sleep_ms(2);
        uint64_t before = hbg_mono_ns();
        uint64_t ns = hbg_opclock_ns(&c, hbg_opclock_now(&c));
        uint64_t after = hbg_mono_ns();
        /* within 20 us of the bracket (the rate's error over 2 ms is far
         * smaller; the slack absorbs a preempted read) */
        assert_true(ns + 20000 >= before);
        assert_true(ns <= after + 20000);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(converted_times_track_the_monotonic_clock)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
