/* The window of plausible starts (clockwin.h): exact windows for known
 * sets, the percentiles against a sort on random sets (runs of equal
 * values, outliers at both ends), and too few events judged not at all. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>
#include <string.h>

#include "tools/clockwin.h"

#define DAY CW_MIN_MARGIN_NS
#define HOUR 3600000000000ull

static void test_exact_windows(void **st)
{
    (void)st;
    uint64_t ts[100];
    cw_win w;
    /* 100 starts 1 .. 100 ns, shuffled: the 11th and the 90th smallest */
    for (int i = 0; i < 100; i++)
        ts[i] = (uint64_t)((i * 37) % 100 + 1);
    assert_true(cw_window(ts, 100, &w));
    assert_int_equal(w.p10, 11);
    assert_int_equal(w.p90, 90);
    assert_int_equal(w.lo, 0);
    assert_int_equal(w.hi, 90 + DAY);

    /* a run of 99 hours: three times its middle's 79 hours either side */
    for (int i = 0; i < 100; i++)
        ts[i] = 1000 * HOUR + (uint64_t)i * HOUR;
    assert_true(cw_window(ts, 100, &w));
    assert_int_equal(w.p10, 1010 * HOUR);
    assert_int_equal(w.p90, 1089 * HOUR);
    assert_int_equal(w.lo, 1010 * HOUR - 237 * HOUR);
    assert_int_equal(w.hi, 1089 * HOUR + 237 * HOUR);

    /* nine corrupt starts of a hundred, at both ends, move nothing */
    for (int i = 0; i < 100; i++)
        ts[i] = 5000 * HOUR + (uint64_t)i;
    for (int i = 0; i < 5; i++)
        ts[i * 7] = UINT64_MAX - (uint64_t)i;
    for (int i = 0; i < 4; i++)
        ts[i * 7 + 3] = (uint64_t)i;
    assert_true(cw_window(ts, 100, &w));
    assert_true(w.p10 >= 5000 * HOUR && w.p90 < 5000 * HOUR + 100);
    assert_int_equal(w.hi, w.p90 + DAY);
    assert_int_equal(w.lo, w.p10 - DAY);

    /* the margin saturates: near 2^64 the window ends there */
    for (int i = 0; i < 10; i++)
        ts[i] = UINT64_MAX - 10 + (uint64_t)i;
    assert_true(cw_window(ts, 10, &w));
    assert_int_equal(w.hi, UINT64_MAX);
    for (int i = 0; i < 10; i++)
        ts[i] = i % 2 ? UINT64_MAX : 0;
    assert_true(cw_window(ts, 10, &w));
    assert_int_equal(w.lo, 0);
    assert_int_equal(w.hi, UINT64_MAX);

    /* equal starts: the window is the day around them */
    for (int i = 0; i < 50; i++)
        ts[i] = 7 * DAY;
    assert_true(cw_window(ts, 50, &w));
    assert_int_equal(w.lo, 6 * DAY);
    assert_int_equal(w.hi, 8 * DAY);

    /* too few to tell a cluster */
    assert_false(cw_window(ts, CW_MIN_EVENTS - 1, &w));
    assert_false(cw_window(NULL, 100, &w));
}

static int cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The percentiles are the sorted set's, whatever the order (sorted and
 * reversed sets among them) and however many repeat. */
static void test_against_sort(void **st)
{
    (void)st;
    enum { MAXN = 4096 };
    static uint64_t ts[MAXN], ref[MAXN];
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int trial = 0; trial < 2000; trial++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t n = CW_MIN_EVENTS + (size_t)(x % (trial < 1000 ? 40 : MAXN - CW_MIN_EVENTS));
        uint64_t spread = trial % 3 == 0 ? 4 : trial % 3 == 1 ? 1000 : UINT64_MAX;
        for (size_t i = 0; i < n; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            ts[i] = spread == UINT64_MAX ? x : x % spread;
            if (trial % 5 == 0) /* sorted input */
                ts[i] = i * 3;
            if (trial % 5 == 1) /* reversed */
                ts[i] = (n - i) * 3;
        }
        memcpy(ref, ts, n * sizeof *ts);
        qsort(ref, n, sizeof *ref, cmp);
        cw_win w;
        assert_true(cw_window(ts, n, &w));
        assert_int_equal(w.p10, ref[n / 10]);
        assert_int_equal(w.p90, ref[n - 1 - n / 10]);
        /* the same values, only reordered */
        qsort(ts, n, sizeof *ts, cmp);
        assert_memory_equal(ts, ref, n * sizeof *ts);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_windows),
        cmocka_unit_test(test_against_sort),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
