/* A log that says it is incomplete: `hbg run`'s record of a run that a
 * stop signal or its --time-limit cut (docs/log-format.md), or a log
 * short of its stamp's --rounds. The lexer tells the record by its whole
 * text, and every analysis tool says so: a warning on stderr naming the
 * line, and in its JSON; hbg compare refuses such a log unless
 * --allow-incomplete, and then says so on every output. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/tools_support.h"
#include "tools/loglex.h"

#define STAMP "[stamp] 1a2b3c4 env HBG_BIND_BREAKDOWN=1 hbg run qwen --rounds 3\n"
#define BIND(inv, orch)                                                                                                \
    "[mono_ns=1][T0x1][TIMING] f: [a.c:1] bind phase=runtime_init start_ns=1 dur_ns=2000 pid=7 inv=" #inv "\n"         \
    "[mono_ns=1][T0x1][TIMING] f: [a.c:1] bind phase=host_orch start_ns=1 dur_ns=" #orch " pid=7 inv=" #inv "\n"       \
    "[mono_ns=1][T0x1][TIMING] f: [a.c:1] bind phase=arena_h2d start_ns=1 dur_ns=5 pid=7 inv=" #inv "\n"
#define STOPPED                                                                                                        \
    "[mono_ns=9][T0x2][ERROR] hbg_cmd_run: hbg run stopped by signal 2 (Interrupt) after 2 of 3 passes: "              \
    "this log is incomplete\n"
/* a whole run, the same cut by Ctrl-C after its second pass, and cut
 * with no record (line 1 is the stamp) */
static const char WHOLE[] = STAMP BIND(1, 100) BIND(2, 110) BIND(3, 120);
static const char CUT[] = STAMP BIND(1, 100) BIND(2, 110) STOPPED;
static const char SHORT[] = STAMP BIND(1, 100) BIND(2, 110);

typedef struct got {
    int n;
    lx_rec rec[4];
    char name[4][160];
} got;

static void on_rec(void *ctx, const lx_rec *r)
{
    got *g = ctx;
    if (r->kind != LX_STOPPED || g->n == 4)
        return;
    snprintf(g->name[g->n], sizeof g->name[0], "%.*s", (int)r->name.n, r->name.p);
    g->rec[g->n++] = *r;
}

static void on_bad(void *ctx, const lx_rec *r, const char *msg)
{
    (void)ctx, (void)r, (void)msg;
}

static got lex(const char *text)
{
    got g = {0};
    lx_sink sink = {&g, on_rec, on_bad, false};
    lx_scan(text, strlen(text), &sink);
    got s = {0};
    lx_sink spans = {&s, on_rec, on_bad, true}; /* hbg spans' reading finds it too */
    lx_scan(text, strlen(text), &spans);
    assert_int_equal(s.n, g.n);
    return g;
}

static void the_lexer_reads_the_record_and_no_other_text(void **st)
{
    (void)st;
    got g = lex("x\n" STOPPED "[mono_ns=9][T0x2][ERROR] hbg_cmd_run: hbg run stopped at the --time-limit of 5 s "
                "after 0 of 12 passes: this log is incomplete\r\n");
    assert_int_equal(g.n, 2);
    assert_int_equal(g.rec[0].line, 2);
    assert_string_equal(g.name[0], "hbg run stopped by signal 2 (Interrupt) after 2 of 3 passes");
    assert_int_equal(g.rec[0].ran, 2);
    assert_int_equal(g.rec[0].planned, 3);
    assert_int_equal(g.rec[1].line, 3);
    assert_string_equal(g.name[1], "hbg run stopped at the --time-limit of 5 s after 0 of 12 passes");
    assert_int_equal(g.rec[1].planned, 12);
    /* near misses: another writer, no prefix, a word changed, a count
     * that is no number, a cause of another shape, text after it */
    const char *miss[] = {
        "[mono_ns=9][T0x2][ERROR] other_fn: hbg run stopped by signal 2 (Interrupt) after 2 of 3 passes: this log "
        "is incomplete\n",
        "hbg_cmd_run: hbg run stopped by signal 2 (Interrupt) after 2 of 3 passes: this log is incomplete\n",
        "[mono_ns=9][T0x2][WARN] hbg_cmd_run: hbg run stopped by signal 2 (Interrupt) after 2 of 3 passes: this "
        "log is incomplete\n",
        "[mono_ns=9][T0x2][ERROR] hbg_cmd_run: hbg run stopped by signal 2 (Interrupt) after two of 3 passes: this "
        "log is incomplete\n",
        "[mono_ns=9][T0x2][ERROR] hbg_cmd_run: hbg run stopped by a user after 2 of 3 passes: this log is "
        "incomplete\n",
        "[mono_ns=9][T0x2][ERROR] hbg_cmd_run: hbg run stopped by signal 2 (Interrupt) after 2 of 3 passes: this "
        "log is incomplete, or not\n",
        "[mono_ns=x][T0x2][ERROR] hbg_cmd_run: hbg run stopped by signal 2 (Interrupt) after 2 of 3 passes: this "
        "log is incomplete\n",
    };
    for (size_t i = 0; i < sizeof miss / sizeof miss[0]; i++)
        assert_int_equal(lex(miss[i]).n, 0);
}

static char *temp_log(const char *text)
{
    char *p = ts_temp_file(text, strlen(text), ".log");
    assert_non_null(p);
    return p;
}

/* err holds exactly one line "PREFIX<path>:LINE: this log is incomplete: WHY". */
static void expect_warning(const char *err, const char *prefix, const char *path, const char *line_why)
{
    char want[4096];
    snprintf(want, sizeof want, "%s%s:%s\n", prefix, path, line_why);
    assert_true(ts_contains(err, want));
    const char *first = strstr(err, "this log is incomplete");
    assert_non_null(first);
    assert_null(strstr(first + 1, "this log is incomplete"));
}

#define WHY_CUT   "8: this log is incomplete: hbg run stopped by signal 2 (Interrupt) after 2 of 3 passes"
#define WHY_SHORT "1: this log is incomplete: it holds 2 of the 3 passes its stamp's --rounds 3 asks of 1 rank"

static void phases_says_it(void **st)
{
    (void)st;
    char *cut = temp_log(CUT), *shrt = temp_log(SHORT), *whole = temp_log(WHOLE);
    char *out, *err;
    const char *a[] = {"phases", cut, "--format", "json", NULL};
    assert_int_equal(ts_run_cli(a, &out, &err), 0);
    expect_warning(err, "hbg phases: warning: ", cut, WHY_CUT);
    json_t *j = json_loads(out, 0, NULL);
    assert_non_null(j);
    json_t *w = json_object_get(j, "warnings");
    char want[4096];
    snprintf(want, sizeof want, "%s:%s", cut, WHY_CUT);
    assert_int_equal(json_array_size(w), 1);
    assert_string_equal(json_string_value(json_array_get(w, 0)), want);
    json_decref(j);
    free(out), free(err);
    const char *b[] = {"phases", shrt, NULL};
    assert_int_equal(ts_run_cli(b, &out, &err), 0);
    assert_true(ts_contains(out, "\n1 warning (on stderr)\n"));
    expect_warning(err, "hbg phases: warning: ", shrt, WHY_SHORT);
    free(out), free(err);
    const char *c[] = {"phases", whole, NULL};
    assert_int_equal(ts_run_cli(c, &out, &err), 0);
    assert_string_equal(err, "");
    free(out), free(err);
    remove(cut), remove(shrt), remove(whole);
    free(cut), free(shrt), free(whole);
}

static void spans_fit_and_timeline_say_it(void **st)
{
    (void)st;
    char *cut = temp_log(CUT);
    char *out, *err, want[4096];
    snprintf(want, sizeof want, "%s:%s", cut, WHY_CUT);
    /* spans: its JSON's warnings (the log has no span to show: exit 1) */
    const char *s[] = {"spans", cut, "--format", "json", NULL};
    ts_run_cli(s, &out, &err);
    expect_warning(err, "hbg spans: warning: ", cut, WHY_CUT);
    free(out), free(err);
    /* fit: "incomplete" in its JSON, as LOG:LINE: why */
    const char *f[] = {"fit", cut, "--format", "json", NULL};
    ts_run_cli(f, &out, &err);
    expect_warning(err, "hbg fit: warning: ", cut, WHY_CUT);
    free(out), free(err);
    /* timeline: otherData's "incomplete" */
    char *dir = ts_tempdir("incomplete");
    char trace[4096];
    snprintf(trace, sizeof trace, "%s/t.json", dir);
    const char *t[] = {"timeline", cut, "-o", trace, NULL};
    assert_int_equal(ts_run_cli(t, &out, &err), 0);
    expect_warning(err, "hbg timeline: warning: ", cut, WHY_CUT);
    char *text = ts_slurp(trace, NULL);
    json_t *j = json_loads(text, 0, NULL);
    assert_non_null(j);
    json_t *inc = json_object_get(json_object_get(j, "otherData"), "incomplete");
    assert_int_equal(json_integer_value(json_object_get(inc, "line")), 8);
    assert_string_equal(json_string_value(json_object_get(inc, "why")),
                        "hbg run stopped by signal 2 (Interrupt) after 2 of 3 passes");
    json_decref(j);
    free(text), free(out), free(err);
    ts_rmtree(dir);
    remove(cut);
    free(cut);
}

static void fit_json_names_it(void **st)
{
    (void)st;
    /* a log fit can fit, whole and cut (its 82 lines, then the record) */
    char *text = ts_slurp(ts_fixture("ours-1rank-4pass.log"), NULL);
    assert_non_null(text);
    char *whole = temp_log(text);
    size_t n = strlen(text);
    text = realloc(text, n + sizeof STOPPED);
    assert_non_null(text);
    memcpy(text + n, STOPPED, sizeof STOPPED);
    char *cut = temp_log(text);
    char *out, *err, want[4096];
    const char *f[] = {"fit", whole, cut, "--format", "json", NULL};
    assert_int_equal(ts_run_cli(f, &out, &err), 0);
    expect_warning(err, "hbg fit: warning: ", cut,
                   "83: this log is incomplete: hbg run stopped by signal 2 (Interrupt) after 2 of 3 passes");
    json_t *j = json_loads(out, 0, NULL);
    assert_non_null(j);
    json_t *inc = json_object_get(j, "incomplete");
    assert_int_equal(json_array_size(inc), 1);
    snprintf(want, sizeof want, "%s:83: hbg run stopped by signal 2 (Interrupt) after 2 of 3 passes", cut);
    assert_string_equal(json_string_value(json_array_get(inc, 0)), want);
    json_decref(j);
    free(out), free(err);
    const char *w[] = {"fit", whole, "--format", "json", NULL};
    assert_int_equal(ts_run_cli(w, &out, &err), 0);
    assert_false(ts_contains(out, "\"incomplete\""));
    free(out), free(err);
    remove(cut), remove(whole);
    free(cut), free(whole), free(text);
}

static void compare_refuses_it_unless_allowed(void **st)
{
    (void)st;
    char *cut = temp_log(CUT), *whole = temp_log(WHOLE);
    char *out, *err, want[8192];
    const char *a[] = {"compare", "--base", whole, "--measure", cut, NULL};
    assert_int_equal(ts_run_cli(a, &out, &err), 2);
    snprintf(want, sizeof want,
             "hbg compare: warning: %s:" WHY_CUT "\nhbg compare: %s:" WHY_CUT
             "; pass --allow-incomplete to compare it anyway\n",
             cut, cut);
    assert_string_equal(err, want);
    assert_string_equal(out, "");
    free(out), free(err);
    /* allowed: a line under the verdict, in every format */
    const char *b[] = {"compare", "--base", whole, "--measure", cut, "--allow-incomplete", NULL};
    assert_int_equal(ts_run_cli(b, &out, &err), 0);
    snprintf(want, sizeof want,
             "\nincomplete measure log 1 (%s:8): hbg run stopped by signal 2 (Interrupt) after 2 of 3 passes\n", cut);
    assert_true(ts_contains(out, want));
    free(out), free(err);
    const char *c[] = {"compare", "--base", whole, "--measure", cut, "--allow-incomplete", "--format", "csv", NULL};
    assert_int_equal(ts_run_cli(c, &out, &err), 0);
    snprintf(want, sizeof want,
             "\n# incomplete: measure log 1 (%s:8): hbg run stopped by signal 2 (Interrupt) after 2 of 3 passes "
             "(--allow-incomplete)\n",
             cut);
    assert_true(ts_contains(out, want));
    free(out), free(err);
    const char *d[] = {"compare", "--base", whole, "--measure", cut, "--allow-incomplete", "--format", "json", NULL};
    assert_int_equal(ts_run_cli(d, &out, &err), 0);
    json_t *j = json_loads(out, 0, NULL);
    assert_non_null(j);
    json_t *inc = json_object_get(j, "incomplete");
    assert_int_equal(json_array_size(inc), 1);
    snprintf(want, sizeof want, "measure log 1 (%s:8): hbg run stopped by signal 2 (Interrupt) after 2 of 3 passes",
             cut);
    assert_string_equal(json_string_value(json_array_get(inc, 0)), want);
    json_decref(j);
    free(out), free(err);
    /* complete logs: no such key */
    const char *e[] = {"compare", "--base", whole, "--measure", whole, "--format", "json", NULL};
    char *copy = temp_log(WHOLE);
    e[4] = copy;
    assert_int_equal(ts_run_cli(e, &out, &err), 0);
    assert_false(ts_contains(out, "incomplete"));
    assert_string_equal(err, "");
    free(out), free(err);
    remove(cut), remove(whole), remove(copy);
    free(cut), free(whole), free(copy);
}

/* The count a log holds is of the passes in it, a truncated one among
 * them (the one a rank was stopped in): compare, which excludes that
 * pass, says so beside the count. "it holds 3 of the 4 passes" once
 * stood alone over a log compare measured by one warm pass, not two. */
static void compare_says_which_held_passes_it_excludes(void **st)
{
    (void)st;
#define STAMP4 "[stamp] 1a2b3c4 env HBG_BIND_BREAKDOWN=1 hbg run qwen --rounds 4\n"
    char *whole = temp_log(STAMP4 BIND(1, 100) BIND(2, 110) BIND(3, 120) BIND(4, 130));
    /* pass 3 cut after its host_orch line */
    char *cut = temp_log(STAMP4 BIND(1, 100) BIND(
        2, 110) "[mono_ns=1][T0x1][TIMING] f: [a.c:1] bind phase=runtime_init start_ns=1 dur_ns=2000 "
                "pid=7 inv=3\n"
                "[mono_ns=1][T0x1][TIMING] f: [a.c:1] bind phase=host_orch start_ns=1 dur_ns=120 pid=7 "
                "inv=3\n");
#undef STAMP4
    static const char held[] = "it holds 3 of the 4 passes its stamp's --rounds 4 asks of 1 rank";
    char *out, *err, want[8192];
    const char *a[] = {"compare", "--base", whole, "--measure", cut, NULL};
    assert_int_equal(ts_run_cli(a, &out, &err), 2);
    snprintf(want, sizeof want,
             "hbg compare: warning: %s:8: the log ends inside pass pid=7 inv=3 (no arena_h2d): truncated pass "
             "excluded\n"
             "hbg compare: warning: %s:1: this log is incomplete: %s\n"
             "hbg compare: %s:1: this log is incomplete: %s (1 excluded for defects); pass --allow-incomplete to "
             "compare it anyway\n",
             cut, cut, held, cut, held);
    assert_string_equal(err, want);
    free(out), free(err);
    /* allowed: the same words under the verdict */
    const char *b[] = {"compare", "--base", whole, "--measure", cut, "--allow-incomplete", "--format", "json", NULL};
    ts_run_cli(b, &out, &err);
    json_t *j = json_loads(out, 0, NULL);
    if (!j)
        fail_msg("%s%s", out, err);
    snprintf(want, sizeof want, "measure log 1 (%s:1): %s (1 excluded for defects)", cut, held);
    json_t *inc = json_object_get(j, "incomplete");
    assert_int_equal(json_array_size(inc), 1);
    assert_string_equal(json_string_value(json_array_get(inc, 0)), want);
    json_decref(j);
    free(out), free(err);
    remove(cut), remove(whole);
    free(cut), free(whole);
}

/* In logs put together the count is one run's: the passes excluded
 * beside it are that run's, not another's. A run whose second pass has a
 * segment twice, then a run cut after two passes, once said "(1 excluded
 * for defects)" of the cut run, which lost none; and the other way
 * round, the cut first run was given the second run's truncated pass. */
static void compare_counts_the_excluded_of_the_cut_run(void **st)
{
    (void)st;
#define BIND8(inv)                                                                                                     \
    "[mono_ns=1][T0x1][TIMING] f: [a.c:1] bind phase=runtime_init start_ns=1 dur_ns=2000 pid=8 inv=" #inv "\n"         \
    "[mono_ns=1][T0x1][TIMING] f: [a.c:1] bind phase=host_orch start_ns=1 dur_ns=90 pid=8 inv=" #inv "\n"              \
    "[mono_ns=1][T0x1][TIMING] f: [a.c:1] bind phase=arena_h2d start_ns=1 dur_ns=5 pid=8 inv=" #inv "\n"
#define TWICE "[mono_ns=1][T0x1][TIMING] f: [a.c:1] bind phase=arena_h2d start_ns=1 dur_ns=5 pid=7 inv=2\n"
#define CUT8                                                                                                           \
    "[mono_ns=1][T0x1][TIMING] f: [a.c:1] bind phase=runtime_init start_ns=1 dur_ns=2000 pid=8 inv=3\n"                \
    "[mono_ns=1][T0x1][TIMING] f: [a.c:1] bind phase=host_orch start_ns=1 dur_ns=90 pid=8 inv=3\n"
    const char *const text[] = {
        STAMP BIND(1, 100) BIND(2, 110) TWICE BIND(3, 120) STAMP BIND8(1) BIND8(2),
        STAMP BIND(1, 100) BIND(2, 110) STAMP BIND8(1) BIND8(2) CUT8,
        STAMP BIND(1, 100) BIND(2, 110) TWICE BIND(3, 120) STAMP BIND8(1) BIND8(2) STOPPED,
    };
#undef BIND8
#undef TWICE
#undef CUT8
    const char *const why[] = {
        "12: this log is incomplete: it holds 2 of the 3 passes its stamp's --rounds 3 asks of 1 rank",
        "1: this log is incomplete: it holds 2 of the 3 passes its stamp's --rounds 3 asks of 1 rank",
        "19: this log is incomplete: hbg run stopped by signal 2 (Interrupt) after 2 of 3 passes",
    };
    char *whole = temp_log(WHOLE);
    for (size_t i = 0; i < sizeof text / sizeof text[0]; i++) {
        char *p = temp_log(text[i]), *out, *err, want[4096];
        const char *a[] = {"compare", "--base", whole, "--measure", p, NULL};
        assert_int_equal(ts_run_cli(a, &out, &err), 2);
        snprintf(want, sizeof want, "hbg compare: %s:%s; pass --allow-incomplete to compare it anyway\n", p, why[i]);
        if (!ts_contains(err, want))
            fail_msg("%s", err);
        free(out), free(err);
        remove(p);
        free(p);
    }
    remove(whole);
    free(whole);
}

/* The stamp's --rounds is read only from hbg run's own stamp: another
 * program's or one that gives no --rounds is not judged by it. */
static void only_hbg_runs_stamp_is_counted(void **st)
{
    (void)st;
    const char *fine[] = {
        "[stamp] 1a2b3c4 env HBG_BIND_BREAKDOWN=1 ./mybench --rounds 3\n" BIND(1, 100) BIND(2, 110),
        "[stamp] 1a2b3c4 env HBG_BIND_BREAKDOWN=1 hbg run qwen\n" BIND(1, 100) BIND(2, 110),
        "[stamp] 1a2b3c4 env HBG_BIND_BREAKDOWN=1 hbg run qwen --rounds 2 --ranks 1\n" BIND(1, 100) BIND(2, 110),
    };
    for (size_t i = 0; i < sizeof fine / sizeof fine[0]; i++) {
        char *p = temp_log(fine[i]), *out, *err;
        const char *a[] = {"phases", p, NULL};
        assert_int_equal(ts_run_cli(a, &out, &err), 0);
        assert_false(ts_contains(err, "incomplete"));
        free(out), free(err);
        remove(p);
        free(p);
    }
    /* --ranks 2 with one rank in the log: the other's passes are missing */
    char *p = temp_log("[stamp] 1a2b3c4 env HBG_BIND_BREAKDOWN=1 hbg run dsv4 --rounds=2 --ranks 2\n" BIND(1, 100)
                           BIND(2, 110));
    char *out, *err;
    const char *a[] = {"phases", p, NULL};
    assert_int_equal(ts_run_cli(a, &out, &err), 0);
    expect_warning(err, "hbg phases: warning: ", p,
                   "1: this log is incomplete: it holds 2 of the 4 passes its stamp's --rounds 2 asks of 2 ranks");
    free(out), free(err);
    remove(p);
    free(p);
}

/* Logs of one command put together (the same stamp again) are judged run
 * by run: a short run is said on its own stamp's line, the whole run
 * beside it makes up for none of its passes; without --ranks a run has
 * as many as the run that shows most (the last: a run none of whose
 * ranks wrote a pass). */
static void runs_put_together_are_counted_each(void **st)
{
    (void)st;
#define BIND8(inv)                                                                                                     \
    "[mono_ns=1][T0x1][TIMING] f: [a.c:1] bind phase=runtime_init start_ns=1 dur_ns=2000 pid=8 inv=" #inv "\n"         \
    "[mono_ns=1][T0x1][TIMING] f: [a.c:1] bind phase=host_orch start_ns=1 dur_ns=90 pid=8 inv=" #inv "\n"              \
    "[mono_ns=1][T0x1][TIMING] f: [a.c:1] bind phase=arena_h2d start_ns=1 dur_ns=5 pid=8 inv=" #inv "\n"
    const char *const text[] = {
        "hbg run qwen --rounds 3\n" BIND(1, 100) BIND(2, 110) BIND(3, 120) STAMP BIND8(1) BIND8(2) BIND8(3),
        "hbg run qwen --rounds 3\n" BIND(1, 100) BIND(2, 110) BIND(3, 120) STAMP BIND8(1) BIND8(2),
        "hbg run qwen --rounds 3\n" BIND(1, 100) BIND(2, 110) STAMP BIND8(1) BIND8(2) BIND8(3),
        "hbg run qwen --rounds 3\n" BIND(1, 100) STAMP BIND8(1) BIND8(2),
        "hbg run qwen --rounds 3\n" BIND(1, 100) BIND(2, 110) BIND(3, 120) STAMP,
    };
#undef BIND8
    const char *const why[][2] = {
        {NULL, NULL},
        {"11: this log is incomplete: it holds 2 of the 3 passes its stamp's --rounds 3 asks of 1 rank", NULL},
        {"1: this log is incomplete: it holds 2 of the 3 passes its stamp's --rounds 3 asks of 1 rank", NULL},
        {"1: this log is incomplete: it holds 1 of the 3 passes its stamp's --rounds 3 asks of 1 rank",
         "5: this log is incomplete: it holds 2 of the 3 passes its stamp's --rounds 3 asks of 1 rank"},
        {"11: this log is incomplete: it holds 0 of the 3 passes its stamp's --rounds 3 asks of 1 rank", NULL},
    };
    for (size_t i = 0; i < sizeof text / sizeof text[0]; i++) {
        char log[4096];
        snprintf(log, sizeof log, "[stamp] 1a2b3c4 env HBG_BIND_BREAKDOWN=1 %s", text[i]);
        char *p = temp_log(log), *out, *err;
        const char *a[] = {"phases", p, NULL};
        assert_int_equal(ts_run_cli(a, &out, &err), 0);
        assert_true(ts_contains(err, "the [stamp] line again"));
        size_t n = 0;
        for (const char *q = err; (q = strstr(q, "this log is incomplete")); q++)
            n++;
        assert_int_equal(n, (why[i][0] != NULL) + (why[i][1] != NULL));
        for (int k = 0; k < 2 && why[i][k]; k++) {
            char want[4096];
            snprintf(want, sizeof want, "hbg phases: warning: %s:%s\n", p, why[i][k]);
            assert_true(ts_contains(err, want));
        }
        free(out), free(err);
        remove(p);
        free(p);
    }
}

/* A run put together with itself (cat a.log a.log), or a later run
 * that reuses a pid: its lines join the passes of the first run of that
 * (pid, inv), and still count in the run they are written in. A whole
 * run twice is no run cut short; a copy cut after two passes is. */
static void a_run_put_together_with_itself_is_whole(void **st)
{
    (void)st;
    const char *const text[] = {
        STAMP BIND(1, 100) BIND(2, 110) BIND(3, 120) STAMP BIND(1, 100) BIND(2, 110) BIND(3, 120),
        STAMP BIND(1, 100) BIND(2, 110) BIND(3, 120) STAMP BIND(1, 100) BIND(2, 110) BIND(3, 120)
            STAMP BIND(1, 100) BIND(2, 110) BIND(3, 120),
        STAMP BIND(1, 100) BIND(2, 110) BIND(3, 120) STAMP BIND(1, 100) BIND(2, 110),
    };
    const char *const why[] = {
        NULL,
        NULL,
        "11: this log is incomplete: it holds 2 of the 3 passes its stamp's --rounds 3 asks of 1 rank",
    };
    for (size_t i = 0; i < sizeof text / sizeof text[0]; i++) {
        char *p = temp_log(text[i]), *out, *err;
        const char *a[] = {"phases", p, "--keep-first", NULL};
        ts_run_cli(a, &out, &err);
        assert_true(ts_contains(err, "the [stamp] line again"));
        if (why[i])
            expect_warning(err, "hbg phases: warning: ", p, why[i]);
        else
            assert_false(ts_contains(err, "incomplete"));
        free(out), free(err);
        const char *b[] = {"timeline", p, "-o", "-", NULL};
        assert_int_equal(ts_run_cli(b, &out, &err), 0);
        if (why[i])
            expect_warning(err, "hbg timeline: warning: ", p, why[i]);
        else
            assert_false(ts_contains(err, "incomplete"));
        free(out), free(err);
        remove(p);
        free(p);
    }
}

/* Ranks forked from one process share thread ids: a pass whose span
 * (and so its pid) was lost is on a thread of two pids, and counts in no
 * rank. It is still in the log: all 4 passes of 2 ranks are there, and
 * the log is damaged (said apart), not cut short. */
static void a_pass_of_no_one_pid_is_held(void **st)
{
    (void)st;
#define PASS(pid, inv, orch, span)                                                                                     \
    "[mono_ns=1][T0x1][TIMING] f: [a.c:1] bind phase=host_orch start_ns=1 dur_ns=" #orch "\n"                          \
    "[mono_ns=1][T0x1][TIMING] f: [a.c:1] bind phase=arena_h2d start_ns=1 dur_ns=5\n" span
#define SPAN(pid, inv, orch)                                                                                           \
    "[mono_ns=1][T0x1][TIMING] e: [STRACE] v=1 pid=" #pid " tid=1 inv=" #inv " hid=ab depth=1 name=chip.run.bind "     \
    "ts=1 dur=" #orch "\n"
    char *p = temp_log("[stamp] 1a2b3c4 env HBG_BIND_BREAKDOWN=1 hbg run dsv4 --rounds 2 --ranks 2\n" PASS(
        100, 1, 1000, SPAN(100, 1, 1000)) PASS(200, 1, 9000, "") PASS(100, 2, 100, SPAN(100, 2, 100))
                           PASS(200, 2, 900, SPAN(200, 2, 900)));
#undef PASS
#undef SPAN
    char *out, *err;
    const char *a[] = {"phases", p, NULL};
    assert_int_equal(ts_run_cli(a, &out, &err), 0);
    assert_true(ts_contains(err, "has no pid (no chip.run.bind span)"));
    assert_false(ts_contains(err, "incomplete"));
    free(out), free(err);
    remove(p);
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_lexer_reads_the_record_and_no_other_text),
        cmocka_unit_test(phases_says_it),
        cmocka_unit_test(spans_fit_and_timeline_say_it),
        cmocka_unit_test(fit_json_names_it),
        cmocka_unit_test(compare_refuses_it_unless_allowed),
        cmocka_unit_test(compare_says_which_held_passes_it_excludes),
        cmocka_unit_test(compare_counts_the_excluded_of_the_cut_run),
        cmocka_unit_test(only_hbg_runs_stamp_is_counted),
        cmocka_unit_test(a_pass_of_no_one_pid_is_held),
        cmocka_unit_test(runs_put_together_are_counted_each),
        cmocka_unit_test(a_run_put_together_with_itself_is_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
