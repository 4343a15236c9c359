/* What the log tools read from the stamp and the anchors: two runs put
 * into one file are named, never pooled silently (a second [stamp] of the
 * same command; a second clock anchor for one pid); a stamp ends where its
 * record ends, whatever the line ends are; and a log without bind lines is
 * explained by the level its stamp shows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "support/tools_support.h"
#include "tools/passes.h"

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

/* `hbg phases --keep-first --format json` of a one-pass log (written to a
 * temporary, returned in *in: the caller removes it) reads the vector
 * run's stamp, and says nothing on stderr. */
static void reads_vector_stamp(const char *log, size_t len, char **in)
{
    *in = ts_temp_file(log, len, ".log");
    assert_non_null(*in);
    const char *args[] = {"phases", "--keep-first", "--format", "json", *in, NULL};
    char *out = NULL, *err = NULL;
    assert_int_equal(ts_run_cli(args, &out, &err), 0);
    assert_true(ts_contains(out, ", \"stamp\": \"abc env HBG_LOG_LEVEL=timing hbg run vector\", \"passes\": 1,"));
    assert_string_equal(err, "");
    free(out);
    free(err);
}

static void a_stamp_ends_at_a_cr(void **state)
{
    (void)state;
    static const char log[] = "[stamp] abc env HBG_LOG_LEVEL=timing hbg run vector \r"
                              "[mono_ns=1][T0x1][TIMING] f: [a.c:1] bind phase=arena_h2d start_ns=1 dur_ns=2 "
                              "pid=1 inv=1\r";
    char *in;
    reads_vector_stamp(log, sizeof log - 1, &in);
    remove(in);
    free(in);
}

static void a_quiet_level_is_the_reason_given(void **state)
{
    (void)state;
    static const char log[] = "[stamp] abc env HBG_BIND_BREAKDOWN=1 HBG_HOST_PHASE_RECORDS=0 HBG_SKIP_DEVICE_RUN=1 "
                              "HBG_LOG_LEVEL=off hbg run vector --mode numbers --log-level off\n";
    char *in = ts_temp_file(log, sizeof log - 1, ".log");
    assert_non_null(in);
    const char *args[] = {"phases", in, NULL};
    char *err = NULL, want[1200];
    assert_int_equal(ts_run_cli(args, NULL, &err), 1);
    snprintf(want, sizeof want,
             "hbg phases: %s has no bind-phase lines: its stamp shows --log-level off, which writes no TIMING "
             "records; run the workload at --log-level timing (or debug/info)\n", in);
    assert_string_equal(err, want);
    free(err);
    /* fit and compare give the same reason */
    const char *fargs[] = {"fit", in, NULL};
    assert_int_equal(ts_run_cli(fargs, NULL, &err), 2);
    snprintf(want, sizeof want,
             "hbg fit: %s has no bind-phase lines: its stamp shows --log-level off, which writes no TIMING "
             "records; run the workload at --log-level timing (or debug/info)\n", in);
    assert_true(ts_contains(err, want));
    free(err);
    char *in2 = ts_temp_file(log, sizeof log - 1, ".log");
    const char *cargs[] = {"compare", "--base", in, "--measure", in2, NULL};
    assert_int_equal(ts_run_cli(cargs, NULL, &err), 2);
    assert_true(ts_contains(err, "has no bind-phase lines: its stamp shows --log-level off, which writes no TIMING "
                                 "records"));
    free(err);
    remove(in2);
    free(in2);
    const char *targs[] = {"timeline", in, "-o", "/dev/null", NULL};
    assert_int_equal(ts_run_cli(targs, NULL, &err), 1);
    snprintf(want, sizeof want,
             "hbg timeline: nothing to draw: %s has no [STRACE] spans and no bind-phase lines: its stamp shows "
             "--log-level off, which writes no TIMING records; run at --log-level timing\n", in);
    assert_string_equal(err, want);
    free(err);
    remove(in);
    free(in);
}

/* The level a stamp shows: its command's --log-level over the
 * environment, hbg's variable over the original runtime's, in any case;
 * named as written. Only HBG_LOG_LEVEL= was read: an original runtime's
 * log at SIMPLER_LOG_LEVEL=warn was told to turn the breakdown on. */
static void the_level_is_read_as_the_runtimes_read_it(void **state)
{
    (void)state;
    static const struct {
        const char *stamp, *level, *said;
    } c[] = {
        {"777d417 env SIMPLER_LOG_LEVEL=WARN python main.py --rounds 4", "warn", "SIMPLER_LOG_LEVEL=WARN"},
        {"777d417 env SIMPLER_LOG_LEVEL=timing python main.py --log-level error", "error", "--log-level error"},
        {"777d417 env python main.py --log-level=off --rounds 2", "off", "--log-level off"},
        {"abc env HBG_LOG_LEVEL=warn hbg run qwen --log-level timing", NULL, NULL},
        {"abc env HBG_LOG_LEVEL=timing SIMPLER_LOG_LEVEL=off hbg run qwen", NULL, NULL},
        {"abc env SIMPLER_LOG_LEVEL=off HBG_LOG_LEVEL=off hbg run qwen --log-level off --log-level=info", NULL, NULL},
        {"abc env HBG_LOG_LEVEL=Off hbg run qwen", "off", "HBG_LOG_LEVEL=Off"},
        {"abc env HBG_LOG_LEVEL=offx hbg run qwen", NULL, NULL},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        char log[256], said[96] = "";
        int n = snprintf(log, sizeof log, "[stamp] %s\n", c[i].stamp);
        ps_log L;
        ps_options o = {0};
        assert_int_equal(ps_read(&L, "s.log", log, (size_t)n, &o), HBG_OK);
        const char *lv = ps_stamp_quiet_level(&L, said, sizeof said);
        if (!c[i].level) {
            if (lv)
                fail_msg("%s: read as %s", c[i].stamp, lv);
        } else {
            assert_non_null(lv);
            assert_string_equal(lv, c[i].level);
            assert_string_equal(said, c[i].said);
        }
        ps_free(&L);
    }
}

/* A [stamp] line with no text records no command or commit: compare says
 * it is empty rather than missing; timeline refuses an empty -o. */
static void an_empty_stamp_is_named(void **state)
{
    (void)state;
    static const char log[] = "[stamp]\n"
                              "[mono_ns=1][T0x1][TIMING] f: [a.c:1] bind phase=host_orch start_ns=1 dur_ns=2 "
                              "pid=1 inv=1\n";
    char *in = ts_temp_file(log, sizeof log - 1, ".log");
    assert_non_null(in);
    char *in2 = ts_temp_file(log, sizeof log - 1, ".log");
    const char *cargs[] = {"compare", "--base", in, "--measure", in2, NULL};
    char *err = NULL, want[1200];
    assert_int_equal(ts_run_cli(cargs, NULL, &err), 2);
    snprintf(want, sizeof want,
             "%s:1: its [stamp] line is empty, so nothing records its command and commit; pass --allow-unstamped to "
             "compare it anyway", in);
    assert_true(ts_contains(err, want));
    free(err);
    const char *targs[] = {"timeline", in, "-o", "", NULL};
    assert_int_equal(ts_run_cli(targs, NULL, &err), 2);
    assert_string_equal(err, "hbg timeline: -o needs a file name (or - for stdout)\n");
    free(err);
    remove(in);
    free(in);
    remove(in2);
    free(in2);
}

/* A UTF-8 byte order mark, which an editor that saved the log may put
 * before its first line, is no part of the stamp's line: the stamp was
 * read as missing, and the level it shows was not read either. */
static void a_byte_order_mark_before_the_stamp_is_passed_over(void **state)
{
    (void)state;
    static const char log[] = "\xef\xbb\xbf[stamp] abc env HBG_LOG_LEVEL=timing hbg run vector\r\n"
                              "[mono_ns=1][T0x1][TIMING] f: [a.c:1] bind phase=arena_h2d start_ns=1 dur_ns=2 "
                              "pid=1 inv=1\r\n";
    char *in, *out, *err;
    reads_vector_stamp(log, sizeof log - 1, &in);
    /* a pipe is read in pieces of its own */
    const char *sargs[] = {"phases", "--keep-first", "-", NULL};
    assert_int_equal(ts_run_cli_in(sargs, in, &out, &err), 0);
    assert_true(ts_contains(out, "log     <stdin>\nstamp   abc env HBG_LOG_LEVEL=timing hbg run vector\npasses  1 in"));
    assert_string_equal(err, "");
    free(out);
    free(err);
    remove(in);
    free(in);
    /* the level the stamp shows is the reason a log has no bind lines */
    static const char quiet[] = "\xef\xbb\xbf[stamp] abc env HBG_LOG_LEVEL=warn hbg run qwen\n";
    ps_log L;
    ps_options o = {0};
    char said[96] = "";
    assert_int_equal(ps_read(&L, "s.log", quiet, sizeof quiet - 1, &o), HBG_OK);
    const char *lv = ps_stamp_quiet_level(&L, said, sizeof said);
    assert_non_null(lv);
    assert_string_equal(lv, "warn");
    assert_string_equal(said, "HBG_LOG_LEVEL=warn");
    ps_free(&L);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(two_runs_in_one_log_are_named),
        cmocka_unit_test(a_stamp_ends_at_a_cr),
        cmocka_unit_test(a_quiet_level_is_the_reason_given),
        cmocka_unit_test(the_level_is_read_as_the_runtimes_read_it),
        cmocka_unit_test(an_empty_stamp_is_named),
        cmocka_unit_test(a_byte_order_mark_before_the_stamp_is_passed_over),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
