/* Logs put together: two runs in one file are named, never pooled
 * silently (a second [stamp] of the same command; a second clock anchor
 * for one pid); and a stamp ends where its record ends, whatever the line
 * ends are. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "support/tools_support.h"

static void two_runs_in_one_log_are_named(void **state)
{
    (void)state;
    char *one = ts_slurp(ts_fixture("ours-1rank-4pass.log"), NULL);
    assert_non_null(one);
    size_t n = strlen(one);
    char *two = malloc(2 * n + 1);
    assert_non_null(two);
    memcpy(two, one, n);
    memcpy(two + n, one, n + 1);
    char *in = ts_temp_file(two, 2 * n, ".log");
    assert_non_null(in);
    const char *args[] = {"phases", "-", NULL};
    char *out = NULL, *err = NULL;
    assert_int_equal(ts_run_cli_in(args, in, &out, &err), 1);
    assert_true(ts_contains(err, "hbg phases: warning: <stdin>:83: the [stamp] line again (the first is at line 1): "
                                 "the log holds two runs of the same command (logs put together?), and their "
                                 "passes are pooled\n"));
    assert_true(ts_contains(err, "hbg phases: warning: <stdin>:84: a second clock anchor for pid=4242 (the first "
                                 "is at line 2): the log holds two runs (logs put together?), and their passes "
                                 "are pooled\n"));
    remove(in);
    free(in);
    free(out);
    free(err);
    free(two);
    free(one);
}

static void a_stamp_ends_at_a_cr(void **state)
{
    (void)state;
    static const char log[] = "[stamp] abc env HBG_LOG_LEVEL=timing hbg run vector \r"
                              "[mono_ns=1][T0x1][TIMING] f: [a.c:1] bind phase=arena_h2d start_ns=1 dur_ns=2 "
                              "pid=1 inv=1\r";
    char *in = ts_temp_file(log, sizeof log - 1, ".log");
    assert_non_null(in);
    const char *args[] = {"phases", "--keep-first", "--format", "json", in, NULL};
    char *out = NULL, *err = NULL;
    assert_int_equal(ts_run_cli(args, &out, &err), 0);
    assert_true(ts_contains(out, ", \"stamp\": \"abc env HBG_LOG_LEVEL=timing hbg run vector\", \"passes\": 1,"));
    remove(in);
    free(in);
    free(out);
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(two_runs_in_one_log_are_named),
        cmocka_unit_test(a_stamp_ends_at_a_cr),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
