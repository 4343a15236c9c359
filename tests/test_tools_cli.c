/* `hbg phases` end to end: output formats, exit status, messages, and
 * inputs that are not logs at all. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/tools_support.h"

static int phases(const char *path, const char *a1, const char *a2, const char *a3, char **out, char **err)
{
    const char *args[] = {"phases", path, a1, a2, a3, NULL};
    return ts_run_cli(args, out, err);
}

static void test_table(void **st)
{
    (void)st;
    char *out, *err;
    char path[4096];
    snprintf(path, sizeof path, "%s", ts_fixture("ours-1rank-4pass.log"));
    assert_int_equal(phases(path, NULL, NULL, NULL, &out, &err), 0);
    assert_true(ts_contains(out, "stamp   1a2b3c4 env HBG_BIND_BREAKDOWN=1 hbg run qwen --rounds 4 -o "
                                 "outputs/bind_qwen_numbers_1a2b3c4_r1.log\n"));
    assert_true(ts_contains(out, "passes  4 in 1 rank: 1 cold (dropped), 3 warm; 0 excluded; 3 used\n"));
    assert_true(ts_contains(out, "host_orch          *            1000              2000            3000     3\n"));
    assert_true(ts_contains(out, "total              *            1600              2705            3810     3\n"));
    assert_true(ts_contains(out, "* control plane, summed within each pass into total: host_orch + graph_upload + "
                                 "arena_h2d\n"));
    assert_true(ts_contains(out, "  retired kinds absent from every pass: relocate, sm_h2d\n"));
    assert_false(ts_contains(out, "  pid=4242"));  /* one rank: no per-rank rows */
    assert_true(ts_contains(out, "  heap_used                          127673344\n"));
    assert_true(ts_contains(out, "  host-orch record_node count        277\n"));
    assert_string_equal(err, "");
    free(out);
    free(err);
}

/* Every row of the statistics table ends in its n column under the
 * header's, however long its name: a rank of the original runtime with
 * no spans is named by its thread ("  thread 0x7f3c9a7fc640"), and a
 * segment name may have 64 characters; the exact figures' values line
 * up the same way. */
static char *within(char *l, const char *e, const char *what)
{
    size_t n = strlen(what);
    for (; l + n <= e; l++)
        if (!memcmp(l, what, n))
            return l;
    return NULL;
}

static void test_table_columns_hold_long_names(void **st)
{
    (void)st;
    char *src = ts_slurp(ts_fixture("original-grammar-2rank-3round.log"), NULL);
    assert_non_null(src);
    /* no spans: each rank is its thread; a segment of a 64-character name */
    char *o = malloc(strlen(src) + 4096), *q = o;
    assert_non_null(o);
    for (char *l = src, *e; *l; l = e) {
        e = strchr(l, '\n');
        e = e ? e + 1 : l + strlen(l);
        if (within(l, e, "[STRACE]"))
            continue;
        char *hv = within(l, e, "phase=host_view_close ");
        size_t pre = hv ? (size_t)(hv - l) + 6 : (size_t)(e - l);
        memcpy(q, l, pre);
        q += pre;
        if (hv) {
            memset(q, 'x', 64);
            q += 64;
            memcpy(q, hv + 21, (size_t)(e - hv - 21));
            q += e - hv - 21;
        }
    }
    *q = 0;
    char *p = ts_temp_file(o, strlen(o), ".log");
    char *out, *err;
    assert_int_equal(phases(p, NULL, NULL, NULL, &out, &err), 0);
    assert_true(ts_contains(out, "\n  thread 0x7f3c9a7fc640 "));
    assert_true(ts_contains(out, "\nxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx "));
    const char *h = strstr(out, "\nsegment ");
    assert_non_null(h);
    h++;
    size_t width = strcspn(h, "\n"), rows = 0;
    for (const char *l = h + width + 1; *l && *l != '\n'; l += strcspn(l, "\n") + 1, rows++)
        assert_int_equal(strcspn(l, "\n"), width);
    assert_int_equal(rows, 10 + 1 + 2); /* the segments, total, two ranks */
    /* the exact figures: each value starts where heap_used's does */
    const char *x = strstr(out, "\n  heap_used ");
    assert_non_null(x);
    size_t col = strspn(x + 1 + 11, " ") + 11;
    const char *b = strstr(out, "\n  bytes xxxx");
    assert_non_null(b);
    assert_int_equal(strspn(b + 1 + 6 + 64 + 2, " ") + 6 + 64 + 2, col);
    free(out), free(err);
    unlink(p);
    free(p);
    free(o);
    free(src);
}

/* "-" reads standard input, from a file or from a pipe (read in line),
 * and names it <stdin>; the numbers are those of the file. */
static void test_stdin(void **st)
{
    (void)st;
    char path[4096];
    snprintf(path, sizeof path, "%s", ts_fixture("ours-duplicate.log"));
    const char *a[] = {"phases", "-", NULL};
    char *out, *err;
    char *want_out, *want_err;
    const char *f[] = {"phases", path, NULL};
    assert_int_equal(ts_run_cli(f, &want_out, &want_err), 0);
    assert_int_equal(ts_run_cli_in(a, path, &out, &err), 0);
    assert_true(ts_contains(out, "log     <stdin>\n"));
    assert_true(ts_contains(err, "hbg phases: warning: <stdin>:52: segment graph_upload appears twice"));
    /* past the first line the table is the file's */
    assert_string_equal(strchr(out, '\n'), strchr(want_out, '\n'));
    free(out);
    free(err);

    char *fifo = ts_temp_file("", 0, ".fifo");
    unlink(fifo);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    pid_t w = fork();
    if (w == 0) {
        size_t n;
        char *data = ts_slurp(path, &n);
        int fd = open(fifo, O_WRONLY);
        /* in small writes, so the reader sees the lines in many pieces */
        for (size_t i = 0; data && fd >= 0 && i < n; i += 100)
            if (write(fd, data + i, n - i < 100 ? n - i : 100) < 0)
                _exit(1);
        _exit(0);
    }
    assert_int_equal(ts_run_cli_in(a, fifo, &out, &err), 0);
    int ws;
    waitpid(w, &ws, 0);
    assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    assert_string_equal(strchr(out, '\n'), strchr(want_out, '\n'));
    assert_true(ts_contains(err, "<stdin>:52: segment graph_upload appears twice"));
    unlink(fifo);
    free(fifo);
    free(out);
    free(err);
    free(want_out);
    free(want_err);
}

static void test_no_stamp_said_plainly(void **st)
{
    (void)st;
    char *out, *err;
    char path[4096];
    snprintf(path, sizeof path, "%s", ts_fixture("ours-nostamp.log"));
    assert_int_equal(phases(path, "--format", "table", NULL, &out, &err), 0);
    assert_true(ts_contains(out, "stamp   none: this log has no [stamp] line, so nothing in it records the "
                                 "command and commit\n"));
    free(out);
    free(err);
    assert_int_equal(phases(path, "--format", "json", NULL, &out, &err), 0);
    assert_true(ts_contains(out, "\"stamp\": null"));
    free(out);
    free(err);
}

static json_t *num(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    assert_non_null(v);
    return v;
}

static void test_json(void **st)
{
    (void)st;
    char *out, *err;
    char path[4096];
    snprintf(path, sizeof path, "%s", ts_fixture("original-2rank-interleaved.log"));
    assert_int_equal(phases(path, "--format", "json", NULL, &out, &err), 0);
    json_error_t je;
    json_t *j = json_loads(out, 0, &je);
    assert_non_null(j);
    assert_string_equal(json_string_value(num(j, "log")), path);
    assert_true(ts_contains(json_string_value(num(j, "stamp")), "777d417 env SIMPLER_HBG_BIND_BREAKDOWN_ENABLE=1"));
    assert_int_equal(json_integer_value(num(j, "passes")), 6);
    assert_int_equal(json_integer_value(num(j, "warm")), 4);
    assert_int_equal(json_integer_value(num(j, "ranks")), 2);
    json_t *ph = num(j, "phases");
    assert_int_equal(json_object_size(ph), 10);
    json_t *gu = num(ph, "graph_upload");
    assert_int_equal(json_integer_value(num(gu, "min_ns")), 300);
    assert_true(json_is_real(num(gu, "median_ns")));
    assert_true(json_real_value(num(gu, "median_ns")) == 301.5);
    assert_int_equal(json_integer_value(num(gu, "max_ns")), 304);
    assert_int_equal(json_integer_value(num(gu, "n")), 4);
    json_t *t = num(j, "total");
    assert_int_equal(json_integer_value(num(t, "min_ns")), 1340);
    assert_true(json_is_integer(num(t, "median_ns")));
    assert_int_equal(json_integer_value(num(t, "median_ns")), 1493);
    json_t *br = num(j, "total_by_rank");
    assert_int_equal(json_array_size(br), 2);
    assert_string_equal(json_string_value(num(json_array_get(br, 1), "rank")), "pid=4002");
    json_t *t1 = num(json_array_get(br, 1), "total");
    assert_int_equal(json_integer_value(num(t1, "min_ns")), 1444);
    assert_int_equal(json_integer_value(num(t1, "median_ns")), 1547);
    assert_int_equal(json_integer_value(num(t1, "max_ns")), 1650);
    assert_int_equal(json_integer_value(num(t1, "n")), 2);
    json_t *cp = num(j, "control_plane");
    assert_int_equal(json_array_size(cp), 3);
    assert_string_equal(json_string_value(json_array_get(cp, 0)), "host_orch");
    assert_string_equal(json_string_value(json_array_get(cp, 2)), "arena_h2d");
    json_t *ret = num(j, "retired");
    assert_int_equal(json_array_size(ret), 2);
    assert_string_equal(json_string_value(num(json_array_get(ret, 1), "segment")), "sm_h2d");
    assert_int_equal(json_integer_value(num(json_array_get(ret, 1), "passes")), 0);
    json_t *ex = num(j, "exact");
    assert_int_equal(json_integer_value(num(ex, "heap_used")), 127673344);
    assert_int_equal(json_integer_value(num(num(ex, "bytes"), "args")), 40859999040ll);
    assert_int_equal(json_integer_value(num(num(ex, "host_orch_counts"), "graph_submit")), 40);
    assert_int_equal(json_array_size(num(j, "warnings")), 0);
    json_decref(j);
    free(out);
    free(err);
}

static void test_json_warnings_and_varying(void **st)
{
    (void)st;
    char *out, *err;
    char path[4096];
    snprintf(path, sizeof path, "%s", ts_fixture("ours-counts-vary.log"));
    assert_int_equal(phases(path, "--format", "json", NULL, &out, &err), 0);
    json_t *j = json_loads(out, 0, NULL);
    assert_non_null(j);
    json_t *v = json_object_get(json_object_get(json_object_get(j, "exact"), "host_orch_counts"), "submit_task");
    assert_true(json_is_object(v));
    assert_int_equal(json_integer_value(json_object_get(v, "min")), 5);
    assert_int_equal(json_integer_value(json_object_get(v, "max")), 6);
    json_t *w = json_object_get(j, "warnings");
    assert_int_equal(json_array_size(w), 1);
    assert_true(ts_contains(json_string_value(json_array_get(w, 0)),
                            "ours-counts-vary.log: host-orch submit_task count differs between passes: 5 (line 34) "
                            "and 6 (line 54); range 5..6"));
    assert_true(ts_contains(err, "hbg phases: warning: "));
    json_decref(j);
    free(out);
    free(err);
}

/* A log of npass passes of one rank, all but the first `whole` with
 * dropped records: a warning each, npass - whole in all. */
static char *dropped_log(int npass, int whole)
{
    size_t cap = (size_t)npass * 400, n = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    for (int i = 1; i <= npass; i++)
        n += (size_t)snprintf(
            text + n, cap - n,
            "[mono_ns=1][T0x1][TIMING] f: [a.c:1] bind phase=host_orch start_ns=1 dur_ns=5 pid=1 inv=%d\n"
            "[mono_ns=1][T0x1][TIMING] f: [a.c:1] bind phase=arena_h2d start_ns=1 dur_ns=2 pid=1 inv=%d\n"
            "[mono_ns=1][T0x1][TIMING] f: [a.c:1] host-orch phase=submit_task total_ns=1 count=1 "
            "detail_sum=1 dropped=%d pid=1 inv=%d\n",
            i, i, i > whole, i);
    char *path = ts_temp_file(text, n, ".log");
    assert_non_null(path);
    free(text);
    return path;
}

/* The JSON's warnings are those stderr shows, its "N more warnings not
 * shown" among them: past a thousand they just stopped, and a script
 * reading the JSON alone took the list for all there was. */
static void test_json_warnings_say_how_many_more(void **st)
{
    (void)st;
    /* 1005 passes, all but the first three with dropped records: a
     * warning each, 1002 in all */
    char *path = dropped_log(1005, 3);
    char *out, *err;
    assert_int_equal(phases(path, "--format", "json", NULL, &out, &err), 0);
    assert_true(ts_contains(err, "hbg phases: warning: 2 more warnings not shown\n"));
    json_t *j = json_loads(out, 0, NULL);
    assert_non_null(j);
    json_t *w = json_object_get(j, "warnings");
    assert_int_equal(json_array_size(w), 1001);
    assert_string_equal(json_string_value(json_array_get(w, 1000)), "2 more warnings not shown");
    assert_int_equal(json_integer_value(json_object_get(j, "used")), 2);
    json_decref(j);
    free(out);
    free(err);
    remove(path);
    free(path);
}

/* Past the thousand shown, every command says how many more warnings
 * there are in the same words, and of one in the singular: fit, spans,
 * timeline and compare each wrote the line themselves, and "1 more
 * warnings" was the English of all of them. */
static void test_one_more_warning_in_every_command(void **st)
{
    (void)st;
    char *lp = dropped_log(1004, 3), *lp2 = dropped_log(1004, 3); /* 1001 warnings each */
    /* 1001 torn spans and no whole one: spans and timeline give up after
     * the warnings (where timeline once left the count out) */
    static const char bad[] = "[STRACE] v=1 pid=5 tid=5 inv=1 hid=zz depth=0 name=x ts=1\n";
    size_t nb = strlen(bad);
    char *text = malloc(1001 * nb);
    assert_non_null(text);
    for (int i = 0; i < 1001; i++)
        memcpy(text + (size_t)i * nb, bad, nb);
    char *sp = ts_temp_file(text, 1001 * nb, ".log");
    char *dir = ts_tempdir("onemore");
    char trace[4096];
    snprintf(trace, sizeof trace, "%s/t.json", dir);
    char *out, *err;
    const char *ph[] = {"phases", lp, NULL};
    const char *fit[] = {"fit", lp, NULL};
    const char *tl[] = {"timeline", sp, "-o", trace, NULL};
    const char *sa[] = {"spans", sp, NULL};
    const char *cmp[] = {"compare", "--allow-unstamped", "--base", lp, "--measure", lp2, NULL};
    const struct {
        const char *const *args;
        const char *want;
    } c[] = {
        {ph, "hbg phases: warning: 1 more warning not shown\n"},
        {fit, "hbg fit: warning: 1 more warning not shown\n"},
        {tl, "hbg timeline: warning: 1 more warning not shown\n"},
        {sa, "hbg spans: warning: 1 more warning not shown\n"},
        {cmp, "hbg compare: warning: 1 more warning not shown\n"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        ts_run_cli(c[i].args, &out, &err);
        if (!ts_contains(err, c[i].want))
            fail_msg("%s: %s", c[i].args[0], err);
        assert_false(ts_contains(err, "more warnings not shown"));
        free(out), free(err);
    }
    remove(sp), remove(lp), remove(lp2);
    free(sp), free(lp), free(lp2), free(text);
    ts_rmtree(dir);
}

/* Counts of one read as English: "all 1 warm passes were excluded" was
 * what phases, fit and compare said of a log whose one warm pass was
 * excluded, and "none of its 1 bind lines is well-formed" of a log of
 * one malformed bind line. */
static void test_counts_of_one_read_as_english(void **st)
{
    (void)st;
    char *lp = dropped_log(2, 1), *lp2 = dropped_log(2, 1); /* a cold pass, and a warm one excluded */
    char *out, *err, want[4400];
    assert_int_equal(phases(lp, NULL, NULL, NULL, &out, &err), 1);
    snprintf(want, sizeof want,
             "hbg phases: %s: no usable passes: the one warm pass was excluded (1 with dropped records; see the "
             "warnings)\n",
             lp);
    if (!ts_contains(err, want))
        fail_msg("%s", err);
    free(out), free(err);
    const char *fit[] = {"fit", lp, lp2, NULL};
    ts_run_cli(fit, &out, &err);
    snprintf(want, sizeof want,
             "hbg fit: warning: %s: the one warm pass was excluded (see the warnings); it adds nothing to the fit\n",
             lp);
    if (!ts_contains(err, want))
        fail_msg("%s", err);
    free(out), free(err);
    const char *cmp[] = {"compare", "--allow-unstamped", "--base", lp, "--measure", lp2, NULL};
    assert_int_equal(ts_run_cli(cmp, &out, &err), 2);
    snprintf(want, sizeof want, "%s: the one warm pass was excluded for defects (see the warnings)\n", lp);
    if (!ts_contains(err, want))
        fail_msg("%s", err);
    free(out), free(err);
    static const char one_bad[] = "[mono_ns=1][T0x1][TIMING] f: [a.c:1] bind phase=host_orch start_ns=1 dur_ns=x "
                                  "pid=1 inv=1\n";
    char *bp = ts_temp_file(one_bad, strlen(one_bad), ".log");
    assert_int_equal(phases(bp, NULL, NULL, NULL, &out, &err), 1);
    snprintf(want, sizeof want, "hbg phases: %s: its one bind line is not well-formed (see the warnings)\n", bp);
    if (!ts_contains(err, want))
        fail_msg("%s", err);
    free(out), free(err);
    remove(lp), remove(lp2), remove(bp);
    free(lp), free(lp2), free(bp);
}

static void test_csv(void **st)
{
    (void)st;
    char *out, *err;
    char path[4096];
    snprintf(path, sizeof path, "%s", ts_fixture("ours-retired.log"));
    assert_int_equal(phases(path, "--format", "csv", NULL, &out, &err), 0);
    assert_string_equal(out, "segment,control_plane,min_ns,median_ns,max_ns,n\n"
                             "args,0,20000,20001,20002,3\n"
                             "arena_build,0,40,41,42,3\n"
                             "static_arena,0,30,30,30,3\n"
                             "gm_heap,0,2,2,2,3\n"
                             "shared_mem,0,6,7,8,3\n"
                             "runtime_init,0,9,9,9,3\n"
                             "host_orch,1,1000,2000,3000,3\n"
                             "graph_upload,1,500,600,700,3\n"
                             "arena_h2d,1,100,105,110,3\n"
                             "host_view_close,0,30000,30001,30003,3\n"
                             "relocate,1,50,50,50,3\n"
                             "sm_h2d,1,60,60,60,3\n"
                             "total,1,1710,2815,3920,3\n");
    free(out);
    free(err);
}

static void test_refusals_and_exit_status(void **st)
{
    (void)st;
    char *out, *err;
    char path[4096];
    snprintf(path, sizeof path, "%s", ts_fixture("ours-two-stamps.log"));
    assert_int_equal(phases(path, NULL, NULL, NULL, &out, &err), 2);
    assert_true(ts_contains(err, "ours-two-stamps.log:41: a second, different [stamp] line (the first is at line "
                                 "1): the log mixes two runs; refusing to merge them\n"));
    assert_string_equal(out, "");
    free(out);
    free(err);
    /* hbg spans refuses it too; hbg timeline draws both runs and says so */
    const char *sp[] = {"spans", path, NULL};
    assert_int_equal(ts_run_cli(sp, &out, &err), 2);
    assert_true(ts_contains(err, "hbg spans: "));
    assert_true(ts_contains(err, "ours-two-stamps.log:41: a second, different [stamp] line (the first is at line "
                                 "1): the log mixes two runs; refusing to merge them\n"));
    assert_string_equal(out, "");
    free(out);
    free(err);
    char *o = ts_temp_file("", 0, ".json");
    const char *tl[] = {"timeline", path, "-o", o, NULL};
    assert_int_equal(ts_run_cli(tl, &out, &err), 0);
    assert_true(ts_contains(err, "hbg timeline: warning: "));
    assert_true(ts_contains(err, "ours-two-stamps.log:41: a second, different [stamp] line (the first is at line "
                                 "1): the log mixes two runs; both are drawn, and the trace's stamp is the "
                                 "first's\n"));
    free(out);
    free(err);
    unlink(o);
    free(o);

    snprintf(path, sizeof path, "%s", ts_fixture("original-no-bind-lines.log"));
    assert_int_equal(phases(path, NULL, NULL, NULL, &out, &err), 1);
    assert_true(ts_contains(err, "has no bind-phase lines (\"bind phase=\"); run the workload with "
                                 "HBG_BIND_BREAKDOWN=1 (the original runtime: SIMPLER_HBG_BIND_BREAKDOWN_ENABLE=1)\n"));
    free(out);
    free(err);

    snprintf(path, sizeof path, "%s", ts_fixture("original-only-cold.log"));
    assert_int_equal(phases(path, NULL, NULL, NULL, &out, &err), 1);
    assert_true(ts_contains(err, "every pass is the cold first pass of its rank (2 ranks, one pass each), and cold "
                                 "passes are dropped; run at least 2 rounds (6 recommended), or pass --keep-first"));
    free(out);
    free(err);
    assert_int_equal(phases(path, "--keep-first", NULL, NULL, &out, &err), 0);
    assert_true(ts_contains(out, "passes  2 in 2 ranks: 2 cold (kept), 0 warm; 0 excluded; 2 used\n"));
    free(out);
    free(err);

    assert_int_equal(phases("/nonexistent/x.log", NULL, NULL, NULL, &out, &err), 2);
    assert_string_equal(err, "hbg phases: cannot open /nonexistent/x.log: No such file or directory\n");
    free(out);
    free(err);
    assert_int_equal(phases("/", NULL, NULL, NULL, &out, &err), 2);
    assert_string_equal(err, "hbg phases: cannot read /: it is a directory\n");
    free(out);
    free(err);
    /* a path as typed may hold a line break or an escape: the error is
     * still one line, and nothing reaches the terminal as a control */
    assert_int_equal(phases("/nonexistent/x\ny\033[2J.log", NULL, NULL, NULL, &out, &err), 2);
    assert_string_equal(err, "hbg phases: cannot open /nonexistent/x?y?[2J.log: No such file or directory\n");
    free(out);
    free(err);
    /* and the C1 controls, CSI among them: as UTF-8 (C2 9B, each byte a
     * '?') and as a bare byte (9B); characters whose UTF-8 holds bytes
     * 0x80..0x9F (U+00C9 is C3 89, U+6D4B is E6 B5 8B) stay as they are */
    assert_int_equal(phases("/nonexistent/a\xc2\x9b" "2Jb\x9b" "31m\xc3\x89\xe6\xb5\x8b.log", NULL, NULL, NULL, &out,
                            &err),
                     2);
    assert_string_equal(err, "hbg phases: cannot open /nonexistent/a??2Jb?31m\xc3\x89\xe6\xb5\x8b.log: No such file or "
                             "directory\n");
    free(out);
    free(err);
    {
        const char *args[] = {"fit", ts_fixture("ours-1rank-4pass.log"), "--plot", "/nonexistent\n/p.svg", NULL};
        assert_int_equal(ts_run_cli(args, &out, &err), 2);
        assert_string_equal(err, "hbg fit: cannot create /nonexistent?/p.svg: No such file or directory\n");
        free(out);
        free(err);
    }
    {
        /* a log whose name holds a line break: the messages about it show
         * '?', its JSON "log" the name as it is */
        char dir[] = "/tmp/hbg-ctl-XXXXXX", name[64];
        assert_non_null(mkdtemp(dir));
        snprintf(name, sizeof name, "%s/x\ny.log", dir);
        FILE *f = fopen(name, "w");
        assert_non_null(f);
        fputs("[mono_ns=1][T0x1][TIMING] bind_trace_end: [bind_trace.c:24] bind phase=host_orch start_ns=1 "
              "dur_ns=900 pid=9 inv=1\n", f);
        assert_int_equal(fclose(f), 0);
        const char *a1[] = {"phases", name, NULL}, *a2[] = {"phases", name, "--format", "json", NULL};
        char want[256];
        assert_int_equal(ts_run_cli(a1, &out, &err), 1);
        snprintf(want, sizeof want, "hbg phases: %s/x?y.log: every pass is the cold first pass", dir);
        assert_true(ts_contains(err, want));
        assert_null(strstr(err, "x\ny"));
        free(out);
        free(err);
        /* hbg compare's refusals quote it masked too */
        const char *a3[] = {"compare", "--base", name, "--measure", ts_fixture("ours-1rank-4pass.log"), NULL};
        assert_int_equal(ts_run_cli(a3, &out, &err), 2);
        snprintf(want, sizeof want, "hbg compare: %s/x?y.log has no [stamp] line", dir);
        assert_true(ts_contains(err, want));
        assert_null(strstr(err, "x\ny"));
        free(out);
        free(err);
        size_t flen;
        char *fx = ts_slurp(ts_fixture("ours-1rank-4pass.log"), &flen);
        assert_non_null(fx);
        f = fopen(name, "w");
        assert_non_null(f);
        assert_int_equal(fwrite(fx, 1, flen, f), flen);
        assert_int_equal(fclose(f), 0);
        free(fx);
        assert_int_equal(ts_run_cli(a2, &out, &err), 0);
        snprintf(want, sizeof want, "{\"log\": \"%s/x\\u000ay.log\"", dir);
        assert_true(strncmp(out, want, strlen(want)) == 0);
        free(out);
        free(err);
        unlink(name);
        rmdir(dir);
    }
    {
        const char *cmd[] = {"x\ny", NULL}, *opt[] = {"timeline", "--zz\033[31m", NULL};
        assert_int_equal(ts_run_cli(cmd, &out, &err), 2);
        assert_string_equal(err, "hbg: unknown command 'x?y' (see `hbg help`)\n");
        free(out);
        free(err);
        assert_int_equal(ts_run_cli(opt, &out, &err), 2);
        assert_string_equal(err,
                            "hbg timeline: unknown or incomplete option '--zz?[31m' (see `hbg timeline --help`)\n");
        free(out);
        free(err);
    }

    snprintf(path, sizeof path, "%s", ts_fixture("ours-1rank-4pass.log"));
    assert_int_equal(phases(path, "--format", "xml", NULL, &out, &err), 2);
    assert_string_equal(err, "hbg phases: --format expects table, json or csv, got 'xml'\n");
    free(out);
    free(err);
    assert_int_equal(phases(path, "--rounds", "0", NULL, &out, &err), 2);
    free(out);
    free(err);
    assert_int_equal(phases(path, "--bogus", NULL, NULL, &out, &err), 2);
    free(out);
    free(err);
    const char *h[] = {"phases", "--help", NULL};
    assert_int_equal(ts_run_cli(h, &out, &err), 0);
    assert_true(ts_contains(out, "usage: hbg phases LOG"));
    /* a lost table is exit 2 too (docs/phases.md) */
    assert_true(ts_contains(out, "exit status: 0 ok, 1 no usable passes, 2 usage error, unusable input or a failed\nwrite\n"));
    /* the ranges the refusals above name */
    assert_true(ts_contains(out, "  --rounds N      check that each rank shows N passes, 1 to 1000000 (a mismatch\n"));
    assert_true(ts_contains(out, "  --ranks R       check that the log shows R ranks, 1 to 1000000 (a mismatch is a\n"));
    free(out);
    free(err);
}

/* An option that takes no value, given one (--keep-first=1), is named
 * with the value to drop, the same words in every command; getopt_long
 * called it an unknown option, which sent one looking for a typo in a
 * name that was right. */
static void test_a_value_to_a_flag_is_named(void **st)
{
    (void)st;
    static const struct {
        const char *argv[6];
        const char *err;
    } c[] = {
        {{"phases", "--keep-first=1", "x.log"}, "hbg phases: --keep-first takes no value (given \"=1\")\n"},
        /* a prefix getopt_long takes is named in full */
        {{"phases", "--keep=yes", "x.log"}, "hbg phases: --keep-first takes no value (given \"=yes\")\n"},
        {{"phases", "--help=", "x.log"}, "hbg phases: --help takes no value (given \"=\")\n"},
        {{"spans", "--hidden=1", "x.log"}, "hbg spans: --hidden takes no value (given \"=1\")\n"},
        {{"fit", "--relative=1", "x.log"}, "hbg fit: --relative takes no value (given \"=1\")\n"},
        {{"fit", "--min-per-log=\033[2J", "x.log"}, "hbg fit: --min-per-log takes no value (given \"=?[2J\")\n"},
        {{"timeline", "--per-invocation=1", "x.log", "-o", "x.json"},
         "hbg timeline: --per-invocation takes no value (given \"=1\")\n"},
        {{"compare", "--allow-unstamped=1", "--base", "a.log", "--measure", "b.log"},
         "hbg compare: --allow-unstamped takes no value (given \"=1\")\n"},
        {{"compare", "--allow-incomplete=no"}, "hbg compare: --allow-incomplete takes no value (given \"=no\")\n"},
        {{"compare", "--help=1"}, "hbg compare: --help takes no value (given \"=1\")\n"},
        {{"ab", "--resume=1", "A", "B"}, "hbg ab: --resume takes no value (given \"=1\")\n"},
        {{"ab", "--keep-definitions=0", "A", "B"}, "hbg ab: --keep-definitions takes no value (given \"=0\")\n"},
        /* a value to an option that takes one, or to a name no option
         * has, is what it was */
        {{"phases", "--bogus=1", "x.log"},
         "hbg phases: unknown or incomplete option '--bogus=1' (see `hbg phases "
         "--help`)\n"},
        {{"compare", "--allow-unstampe=1"},
         "hbg compare: unexpected argument '--allow-unstampe=1' (logs follow "
         "--base or --measure; see `hbg compare --help`)\n"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        char *out, *err;
        int rc = ts_run_cli(c[i].argv, &out, &err);
        if (rc != 2 || strcmp(err, c[i].err) || *out)
            fail_msg("%s %s: exit %d, stderr '%s', stdout '%s'", c[i].argv[0], c[i].argv[1], rc, err, out);
        free(out);
        free(err);
    }
}

static void test_rounds_and_ranks_checked(void **st)
{
    (void)st;
    char *out, *err;
    char path[4096];
    snprintf(path, sizeof path, "%s", ts_fixture("original-2rank-interleaved.log"));
    assert_int_equal(phases(path, "--rounds", "6", NULL, &out, &err), 0);
    assert_true(ts_contains(err, "original-2rank-interleaved.log: --rounds 6, but the log shows 3 passes per rank\n"));
    /* two ranks: each rank's own total under the pooled one */
    assert_true(ts_contains(out, "total              *            1340              1493            1650     4\n"
                                 "  pid=4001                      1340              1441            1542     2\n"
                                 "  pid=4002                      1444              1547            1650     2\n"));
    assert_true(ts_contains(out, "  total is over the passes of every rank; the rows under it, of each rank alone\n"));
    free(out);
    free(err);
    const char *a[] = {"phases", path, "--rounds", "3", "--ranks", "1", NULL};
    assert_int_equal(ts_run_cli(a, &out, &err), 0);
    assert_true(ts_contains(err, "original-2rank-interleaved.log: --ranks 1, but the log shows 2 ranks\n"));
    assert_false(ts_contains(err, "--rounds"));
    free(out);
    free(err);
}

/* Ranks too many to list end their list visibly: it was cut where the
 * buffer ended, and read as every rank there is. */
static void test_a_cut_rank_list_says_so(void **st)
{
    (void)st;
    /* 60 ranks, pid=100000.., of 2 passes each but the first, of 3 */
    size_t cap = 60 * 3 * 300, n = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    for (int r = 0; r < 60; r++)
        for (int inv = 1; inv <= (r ? 2 : 3); inv++)
            n += (size_t)snprintf(text + n, cap - n,
                                  "[mono_ns=1][T0x%x][TIMING] f: [a.c:1] bind phase=host_orch start_ns=1 dur_ns=5 "
                                  "pid=%d inv=%d\n"
                                  "[mono_ns=1][T0x%x][TIMING] f: [a.c:1] bind phase=arena_h2d start_ns=1 dur_ns=2 "
                                  "pid=%d inv=%d\n",
                                  r + 1, 100000 + r, inv, r + 1, 100000 + r, inv);
    char *path = ts_temp_file(text, n, ".log");
    char *out, *err, want[8192];
    assert_int_equal(phases(path, "--rounds", "2", NULL, &out, &err), 0);
    /* 31 fit in the message's 512 bytes with room for the tail */
    size_t k = (size_t)snprintf(want, sizeof want,
                                "%s: --rounds 2, but the ranks show different numbers of passes (pid=100000: 3", path);
    for (int r = 1; r < 31; r++)
        k += (size_t)snprintf(want + k, sizeof want - k, ", pid=%d: 2", 100000 + r);
    snprintf(want + k, sizeof want - k, ", ... (29 more))\n");
    if (!ts_contains(err, want))
        fail_msg("%s", err);
    free(out), free(err);
    remove(path);
    free(path), free(text);
}

/* Not logs at all: a clear message and a clean exit, never a crash. */
static void run_junk(const void *data, size_t len, int want, const char *msg)
{
    char *p = ts_temp_file(data, len, ".log");
    assert_non_null(p);
    char *out, *err;
    assert_int_equal(phases(p, NULL, NULL, NULL, &out, &err), want);
    if (msg)
        assert_true(ts_contains(err, msg));
    free(out);
    free(err);
    char *o = ts_temp_file("", 0, ".json");
    const char *a[] = {"timeline", p, "-o", o, NULL};
    int rc = ts_run_cli(a, &out, &err);
    assert_true(rc == 0 || rc == 1);
    free(out);
    free(err);
    unlink(o);
    free(o);
    unlink(p);
    free(p);
}

static void test_junk_inputs(void **st)
{
    (void)st;
    run_junk("", 0, 1, "has no bind-phase lines");
    size_t n = 1 << 20;
    unsigned char *b = malloc(n);
    uint32_t x = 7;
    for (size_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        b[i] = (unsigned char)(x >> 24);
    }
    run_junk(b, n, 1, NULL);
    free(b);
    /* one 10 MB line, with a bind marker and a 10 MB attribute value (and
     * its line end: a log that ends inside a record was cut there) */
    n = 10u << 20;
    char *l = malloc(n + 64);
    memset(l, 'a', n);
    memcpy(l + 1000, " bind phase=args start_ns=1 dur_ns=2 x=", 39);
    l[n] = '\n';
    run_junk(l, n + 1, 1, "every pass is the cold first pass");
    run_junk(l, n, 1, "malformed bind line: the log ends inside the record (cut short: no line end after it)");
    /* the same line without a marker */
    memset(l, 'z', n);
    run_junk(l, n, 1, "has no bind-phase lines");
    free(l);
    /* numbers past 64 bits */
    const char *big = "bind phase=args start_ns=1 dur_ns=99999999999999999999999\n";
    run_junk(big, strlen(big), 1, ":1: malformed bind line: dur_ns= is a number past 64 bits; ignored");
}

static void test_invalid_utf8_stays_valid_json(void **st)
{
    (void)st;
    char *src = ts_slurp(ts_fixture("ours-1rank-4pass.log"), NULL);
    assert_non_null(src);
    /* invalid UTF-8 in the stamp and in an opaque attribute */
    char *s = strstr(src, "qwen");
    s[0] = (char)0xff;
    s[1] = (char)0xfe;
    char *a = strstr(src, "args=96/40/0");
    a[5] = (char)0xc3;
    a[6] = (char)0x28;
    char *p = ts_temp_file(src, strlen(src), ".log");
    char *out, *err;
    assert_int_equal(phases(p, "--format", "json", NULL, &out, &err), 0);
    json_t *j = json_loads(out, 0, NULL);
    assert_non_null(j);
    /* each invalid byte is U+FFFD, not the Latin-1 character of its value */
    assert_true(ts_contains(json_string_value(json_object_get(j, "stamp")), "run \xef\xbf\xbd\xef\xbf\xbd"
                                                                            "en --rounds"));
    json_decref(j);
    free(out);
    free(err);
    char *o = ts_temp_file("", 0, ".json");
    const char *tl[] = {"timeline", p, "-o", o, NULL};
    assert_int_equal(ts_run_cli(tl, &out, &err), 0);
    char *trace = ts_slurp(o, NULL);
    json_error_t je;
    j = json_loads(trace, 0, &je);
    assert_non_null(j);
    json_decref(j);
    free(trace);
    free(out);
    free(err);
    unlink(o);
    free(o);
    unlink(p);
    free(p);
    free(src);
}

/* A copy of fixture `from` at `to`. */
static void copy_fixture(const char *from, const char *to)
{
    size_t n;
    char *data = ts_slurp(ts_fixture(from), &n);
    assert_non_null(data);
    FILE *f = fopen(to, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
    free(data);
}

/* The refusals that name two arguments (an output that is an input, a
 * file given twice) quote them as every other message does: a control
 * byte in a name shows as '?', so the message stays one line and sends
 * nothing to the terminal. */
/* A log or trace named with a line break and an escape sequence is
 * shown with '?' for each in the lines that say what spans and timeline
 * made of it, as in their tables and warnings: spans' and timeline's
 * "nothing to draw" and timeline's "wrote" quoted the name as typed, and
 * split the one line each is. */
static void test_results_mask_controls(void **st)
{
    (void)st;
    char dir[] = "/tmp/hbg-res-XXXXXX", log[64], trace[64], want[256];
    assert_non_null(mkdtemp(dir));
    snprintf(log, sizeof log, "%s/e\nx\033[2J.log", dir);
    snprintf(trace, sizeof trace, "%s/t\nr.json", dir);
    FILE *f = fopen(log, "w");
    assert_non_null(f);
    fputs("no records here\n", f);
    fclose(f);
    char *out, *err;
    const char *sp[] = {"spans", log, NULL};
    assert_int_equal(ts_run_cli(sp, &out, &err), 1);
    snprintf(want, sizeof want, "hbg spans: %s/e?x?[2J.log has no [STRACE] spans (", dir);
    if (!ts_contains(err, want))
        fail_msg("%s", err);
    free(out), free(err);
    const char *tl[] = {"timeline", log, "-o", trace, NULL};
    assert_int_equal(ts_run_cli(tl, &out, &err), 1);
    snprintf(want, sizeof want, "hbg timeline: nothing to draw: %s/e?x?[2J.log has no [STRACE] spans and no ", dir);
    if (!ts_contains(err, want))
        fail_msg("%s", err);
    free(out), free(err);
    const char *tl2[] = {"timeline", ts_fixture("hbg-run-vector-timeline.log"), "-o", trace, NULL};
    assert_int_equal(ts_run_cli(tl2, &out, &err), 0);
    snprintf(want, sizeof want, "hbg timeline: wrote %s/t?r.json: ", dir);
    if (!ts_contains(err, want))
        fail_msg("%s", err);
    free(out), free(err);
    unlink(log), unlink(trace);
    rmdir(dir);
}

/* Bytes that start no UTF-8 character (FF, a lone C3) in a log's name
 * and in a span's name: each is a '?' where a line of text quotes it, as
 * a control byte is (dg_shown, the tables), where once they reached the
 * terminal as they were. In JSON (each tool's --format json, the
 * timeline's trace) each is U+FFFD, where once it was \u00XX: valid, but
 * the Latin-1 character of the byte, a path that is not the file's.
 * Well-formed UTF-8 (é) is written as it is, in both. No tool fails for
 * them. */
static void test_invalid_utf8_in_names(void **st)
{
    (void)st;
#define FFFD "\xef\xbf\xbd" /* U+FFFD, the replacement character */
    /* k, two bytes that start no character (FF, and C3 before another
     * lead byte), then a well-formed é (C3 A9) */
    char dir[] = "/tmp/hbg-u8-XXXXXX", log[64], log2[64], trace[64], gone[64], want[512];
    assert_non_null(mkdtemp(dir));
    snprintf(log, sizeof log, "%s/k\xff\xc3\xc3\xa9.log", dir);
    snprintf(log2, sizeof log2, "%s/m\xff.log", dir);
    snprintf(trace, sizeof trace, "%s/t\xff\xc3.json", dir);
    snprintf(gone, sizeof gone, "%s/n\xff.log", dir);
    char *src = ts_slurp(ts_fixture("ours-1rank-4pass.log"), NULL);
    assert_non_null(src);
    for (char *k = src; (k = strstr(k, "name=chip.run.runner_run.device_wall "));) {
        memcpy(k, "name=kern\xff\xc3l ", 13);
        memmove(k + 13, k + 37, strlen(k + 37) + 1);
    }
    for (int i = 0; i < 2; i++) {
        FILE *f = fopen(i ? log2 : log, "w");
        assert_non_null(f);
        fputs(src, f);
        fclose(f);
    }
    free(src);
    /* the paths as JSON writes them: each invalid byte U+FFFD, é as it is */
    char jlog[128], jlog2[128];
    snprintf(jlog, sizeof jlog, "\"%s/k" FFFD FFFD "\xc3\xa9.log\"", dir);
    snprintf(jlog2, sizeof jlog2, "\"%s/m" FFFD ".log\"", dir);
    char *out, *err;
    assert_int_equal(phases(log, "--format", "json", NULL, &out, &err), 0);
    json_t *j = json_loads(out, 0, NULL);
    if (!j)
        fail_msg("%s", out);
    json_decref(j);
    snprintf(want, sizeof want, "{\"log\": %s, \"stamp\": ", jlog);
    if (strncmp(out, want, strlen(want)) != 0)
        fail_msg("%s", out);
    free(out), free(err);
    const char *sj[] = {"spans", log, "--format", "json", NULL};
    assert_int_equal(ts_run_cli(sj, &out, &err), 0);
    j = json_loads(out, 0, NULL);
    if (!j)
        fail_msg("%s", out);
    json_decref(j);
    if (strncmp(out, want, strlen(want)) != 0 || !ts_contains(out, "\"kern" FFFD FFFD "l\"") ||
        ts_contains(out, "\\u00"))
        fail_msg("%s", out);
    free(out), free(err);
    const char *fj[] = {"fit", log, "--format", "json", NULL};
    assert_int_equal(ts_run_cli(fj, &out, &err), 0);
    snprintf(want, sizeof want, "{\"logs\": [%s], ", jlog);
    if (strncmp(out, want, strlen(want)) != 0)
        fail_msg("%s", out);
    free(out), free(err);
    const char *cj[] = {"compare", "--base", log, "--measure", log2, "--format", "json", NULL};
    assert_int_equal(ts_run_cli(cj, &out, &err), 0);
    snprintf(want, sizeof want, "{\"base_log\": %s, \"measure_log\": %s, ", jlog, jlog2);
    if (!ts_contains(out, want))
        fail_msg("%s", out);
    free(out), free(err);
    const char *sv[] = {"spans", log, "--view", "tree", NULL};
    assert_int_equal(ts_run_cli(sv, &out, &err), 0);
    snprintf(want, sizeof want, "log     %s/k??\xc3\xa9.log\n", dir);
    if (!ts_contains(out, want) || !ts_contains(out, "\n    kern??l ") || strchr(out, 0xff))
        fail_msg("%s", out);
    free(out), free(err);
    const char *tl[] = {"timeline", log, "-o", trace, NULL};
    assert_int_equal(ts_run_cli(tl, &out, &err), 0);
    snprintf(want, sizeof want, "hbg timeline: wrote %s/t??.json: ", dir);
    if (!ts_contains(err, want) || strchr(err, 0xff))
        fail_msg("%s", err);
    free(out), free(err);
    char *t = ts_slurp(trace, NULL);
    assert_non_null(t);
    j = json_loads(t, 0, NULL);
    assert_non_null(j);
    json_decref(j);
    snprintf(want, sizeof want, "\"generator\":\"hbg timeline\",\"log\":%s,\"stamp\":", jlog);
    if (!ts_contains(t, want) || !ts_contains(t, "\"name\":\"kern" FFFD FFFD "l\"") || ts_contains(t, "\\u00"))
        fail_msg("%s", t);
    free(t);
    assert_int_equal(phases(gone, NULL, NULL, NULL, &out, &err), 2);
    snprintf(want, sizeof want, "hbg phases: cannot open %s/n?.log: No such file or directory\n", dir);
    assert_string_equal(err, want);
    free(out), free(err);
    unlink(log), unlink(log2), unlink(trace);
    rmdir(dir);
#undef FFFD
}

/* Runs `hbg CMD LOG` (timeline: -o TRACE) and returns its stdout, stderr
 * and, for timeline, the trace, joined. */
static char *tool_output(const char *cmd, const char *log, const char *trace, int *rc)
{
    const char *args[] = {cmd, log, trace ? "-o" : NULL, trace, NULL};
    char *out, *err;
    *rc = ts_run_cli(args, &out, &err);
    char *t = trace ? ts_slurp(trace, NULL) : NULL;
    size_t n = strlen(out) + strlen(err) + (t ? strlen(t) : 0) + 8;
    char *all = malloc(n);
    assert_non_null(all);
    snprintf(all, n, "%s\n--\n%s\n--\n%s", out, err, t ? t : "");
    free(out), free(err), free(t);
    return all;
}

/* Markers padded with runs of blanks ("[STRACE]  v=", "bind\tphase=")
 * read as the fields after them do: every tool reads the padded log as
 * the log itself. A padded span was passed over without a word: it
 * vanished from every tool and nothing counted it. */
static void test_padded_markers_read_alike(void **st)
{
    (void)st;
    char *src = ts_slurp(ts_fixture("ours-1rank-4pass.log"), NULL);
    assert_non_null(src);
    size_t n = strlen(src);
    char *pad = malloc(2 * n + 1), *at = pad;
    static const char *const from[] = {"bind phase=", "host-orch phase=", "[STRACE] v=", "[CLOCK_ANCHOR] v="};
    static const char *const to[] = {"bind  phase=", "host-orch\tphase=", "[STRACE]  v=", "[CLOCK_ANCHOR] \tv="};
    for (const char *p = src; *p;) {
        size_t k = 0;
        while (k < 4 && strncmp(p, from[k], strlen(from[k])) != 0)
            k++;
        if (k < 4) {
            at += sprintf(at, "%s", to[k]);
            p += strlen(from[k]);
        } else {
            *at++ = *p++;
        }
    }
    *at = '\0';
    char *dir = ts_tempdir("pad"), log[4096], trace[4096];
    snprintf(log, sizeof log, "%s/a.log", dir);
    snprintf(trace, sizeof trace, "%s/a.json", dir);
    static const char *const cmds[] = {"phases", "spans", "timeline"};
    char *plain[3], *padded[3];
    for (int pass = 0; pass < 2; pass++) {
        FILE *f = fopen(log, "w");
        assert_non_null(f);
        fputs(pass ? pad : src, f);
        fclose(f);
        for (int c = 0; c < 3; c++) {
            int rc;
            char *o = tool_output(cmds[c], log, c == 2 ? trace : NULL, &rc);
            assert_int_equal(rc, 0);
            (pass ? padded : plain)[c] = o;
        }
    }
    for (int c = 0; c < 3; c++)
        assert_string_equal(padded[c], plain[c]);
    /* and what they read: every span, pass and anchor */
    assert_true(ts_contains(padded[0], "passes  4 in 1 rank: 1 cold (dropped), 3 warm; 0 excluded; 3 used\n"));
    assert_true(ts_contains(padded[1], "spans   16 in 4 invocations of 1 callable\n"));
    assert_true(ts_contains(padded[2], ": 62 events (12 spans, 4 device spans, 40 bind segments, "));
    assert_false(ts_contains(padded[2], "no [CLOCK_ANCHOR]"));
    for (int c = 0; c < 3; c++)
        free(plain[c]), free(padded[c]);
    free(src), free(pad);
    ts_rmtree(dir);
}

/* A span's depth past 2^32 - 1 is damage: counted and said as a
 * malformed record by every tool, never kept at a depth narrowed to 32
 * bits (it was read as 4294967295, a span no writer wrote). */
static void test_depth_past_32_bits_is_malformed(void **st)
{
    (void)st;
    static const char text[] =
        "[mono_ns=100][T0xa][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=7 mono_ns=100 wall_ns=1000000000\n"
        "[mono_ns=200][T0xa][TIMING] emit_host_span: [STRACE] v=1 pid=7 tid=8 inv=1 hid=00000000000000ab "
        "depth=4294967296 name=chip.run.bind ts=150 dur=40 \n"
        "[mono_ns=300][T0xa][TIMING] emit_host_span: [STRACE] v=1 pid=7 tid=8 inv=1 hid=00000000000000ab depth=0 "
        "name=chip.run ts=100 dur=190 \n";
    char *dir = ts_tempdir("depth"), log[4096], trace[4096], want[8400], *out, *err;
    snprintf(log, sizeof log, "%s/d.log", dir);
    snprintf(trace, sizeof trace, "%s/d.json", dir);
    FILE *f = fopen(log, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    const char *sp[] = {"spans", log, NULL};
    assert_int_equal(ts_run_cli(sp, &out, &err), 0);
    snprintf(want, sizeof want,
             "hbg spans: warning: %s:2: malformed [STRACE] span: depth= is 2^32 or more: not a depth; ignored\n", log);
    assert_string_equal(err, want);
    assert_true(ts_contains(out, "spans   1 in 1 invocation of 1 callable\n"));
    assert_false(ts_contains(out, "chip.run.bind"));
    free(out), free(err);
    const char *tl[] = {"timeline", log, "-o", trace, NULL};
    assert_int_equal(ts_run_cli(tl, &out, &err), 0);
    snprintf(want, sizeof want,
             "hbg timeline: warning: %s:2: malformed [STRACE] span: depth= is 2^32 or more: not a depth; not drawn\n"
             "hbg timeline: wrote %s: 4 events (1 span, 0 device spans, ",
             log, trace);
    if (!ts_contains(err, want) || !ts_contains(err, "hbg timeline: malformed [STRACE] records (not drawn): 1\n"))
        fail_msg("%s", err);
    free(out), free(err);
    ts_rmtree(dir);
}

static void test_refusals_mask_controls(void **st)
{
    (void)st;
    char dir[] = "/tmp/hbg-ctl-XXXXXX", log[64], rec[64], alias[64], want[256];
    assert_non_null(mkdtemp(dir));
    snprintf(log, sizeof log, "%s/x\033[2J.log", dir);
    snprintf(rec, sizeof rec, "%s/r\ny.jsonl", dir);
    snprintf(alias, sizeof alias, "%s/r2\ny.jsonl", dir);
    copy_fixture("hbg-run-vector-timeline.log", log);
    copy_fixture("hbg-run-vector-timeline.host_phase_records.jsonl", rec);
    assert_int_equal(link(rec, alias), 0);
    char *out, *err;
    const char *tl[] = {"timeline", log, "-o", log, NULL};
    assert_int_equal(ts_run_cli(tl, &out, &err), 2);
    snprintf(want, sizeof want, "hbg timeline: refusing to write %s/x?[2J.log: it is the input %s/x?[2J.log\n", dir,
             dir);
    assert_string_equal(err, want);
    free(out);
    free(err);
    const char *fit[] = {"fit", log, log, NULL};
    assert_int_equal(ts_run_cli(fit, &out, &err), 2);
    snprintf(want, sizeof want, "hbg fit: LOG 1 (%s/x?[2J.log) and LOG 2 (%s/x?[2J.log) are the same file", dir, dir);
    assert_true(ts_contains(err, want));
    free(out);
    free(err);
    const char *sp[] = {"spans", log, "--records", rec, "--records", alias, NULL};
    assert_int_equal(ts_run_cli(sp, &out, &err), 2);
    snprintf(want, sizeof want, "hbg spans: --records 1 (%s/r?y.jsonl) and --records 2 (%s/r2?y.jsonl) are the same "
             "file", dir, dir);
    assert_true(ts_contains(err, want));
    free(out);
    free(err);
    const char *tr[] = {"timeline", log, "--records", rec, "--records", alias, "-o", "-", NULL};
    assert_int_equal(ts_run_cli(tr, &out, &err), 2);
    snprintf(want, sizeof want, "hbg timeline: --records 1 (%s/r?y.jsonl) and --records 2 (%s/r2?y.jsonl) are the "
             "same file", dir, dir);
    assert_true(ts_contains(err, want));
    free(out);
    free(err);
    unlink(alias);
    unlink(rec);
    unlink(log);
    rmdir(dir);
}

/* A count or a percentage out of range is refused naming the range, and
 * a count is digits alone (as hbg run and hbg ab read theirs): a blank or
 * a sign before it is no count. */
static void test_counts_name_their_range(void **st)
{
    (void)st;
    char lp[4096], mp[4096], want[256];
    snprintf(lp, sizeof lp, "%s", ts_fixture("ours-1rank-4pass.log"));
    snprintf(mp, sizeof mp, "%s", ts_fixture("ours-counts-vary.log"));
    const char *opt[] = {"--rounds", "--ranks"}, *bad[] = {"2000000", " 3", "+3"};
    char *out, *err;
    for (int o = 0; o < 2; o++)
        for (int b = 0; b < 3; b++) {
            assert_int_equal(phases(lp, opt[o], bad[b], NULL, &out, &err), 2);
            snprintf(want, sizeof want, "hbg phases: %s expects an integer from 1 to 1000000, got '%s'\n", opt[o],
                     bad[b]);
            assert_string_equal(err, want);
            assert_string_equal(out, "");
            free(out), free(err);
        }
    for (int b = 1; b < 3; b++) {
        const char *fit[] = {"fit", lp, "--skip-warm", bad[b], NULL};
        assert_int_equal(ts_run_cli(fit, &out, &err), 2);
        snprintf(want, sizeof want, "hbg fit: --skip-warm expects a count of passes from 0 to 1000000, got '%s'\n",
                 bad[b]);
        assert_string_equal(err, want);
        free(out), free(err);
    }
    const char *cmp[] = {"compare", "--base", lp, "--measure", mp, "--threshold", "2000000", NULL};
    assert_int_equal(ts_run_cli(cmp, &out, &err), 2);
    assert_string_equal(err, "hbg compare: --threshold expects a percentage from 0 to 1000000, got '2000000'\n");
    free(out), free(err);
}

/* hbg compare: `--` ends the options, the words after it logs of the arm
 * named last (once it was taken for a log itself, `cannot open --`). */
static void test_compare_double_dash(void **st)
{
    (void)st;
    char lp[4096], mp[4096];
    snprintf(lp, sizeof lp, "%s", ts_fixture("ours-1rank-4pass.log"));
    snprintf(mp, sizeof mp, "%s", ts_fixture("ours-counts-vary.log"));
    char *out, *err, *want, *werr;
    const char *plain[] = {"compare", "--base", lp, "--measure", mp, NULL};
    assert_int_equal(ts_run_cli(plain, &want, &werr), 0);
    const char *dd[] = {"compare", "--base", lp, "--measure", "--", mp, NULL};
    assert_int_equal(ts_run_cli(dd, &out, &err), 0);
    assert_string_equal(out, want);
    free(out), free(err);
    const char *dd2[] = {"compare", "--measure", mp, "--base", lp, "--", NULL};
    assert_int_equal(ts_run_cli(dd2, &out, &err), 0);
    assert_string_equal(out, want);
    free(out), free(err);
    free(want), free(werr);
    /* a log named like an option, after -- */
    char *dir = ts_tempdir("dd"), odd[4200];
    snprintf(odd, sizeof odd, "%s/--odd.log", dir);
    size_t n;
    char *data = ts_slurp(mp, &n);
    FILE *f = fopen(odd, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
    free(data);
    char cwd[4096];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(dir), 0);
    const char *o[] = {"compare", "--base", lp, "--measure", "--", "--odd.log", NULL};
    assert_int_equal(ts_run_cli(o, &out, &err), 0);
    assert_true(ts_contains(out, "measure --odd.log\n"));
    free(out), free(err);
    assert_int_equal(chdir(cwd), 0);
    const char *none[] = {"compare", "--", "--base", lp, "--measure", mp, NULL};
    assert_int_equal(ts_run_cli(none, &out, &err), 2);
    assert_string_equal(err, "hbg compare: the logs after '--' belong to no arm: put it after --base or --measure "
                             "(see `hbg compare --help`)\n");
    free(out), free(err);
    ts_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_table_columns_hold_long_names),
        cmocka_unit_test(test_stdin),
        cmocka_unit_test(test_no_stamp_said_plainly),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_json_warnings_and_varying),
        cmocka_unit_test(test_json_warnings_say_how_many_more),
        cmocka_unit_test(test_one_more_warning_in_every_command),
        cmocka_unit_test(test_counts_of_one_read_as_english),
        cmocka_unit_test(test_csv),
        cmocka_unit_test(test_refusals_and_exit_status),
        cmocka_unit_test(test_a_value_to_a_flag_is_named),
        cmocka_unit_test(test_rounds_and_ranks_checked),
        cmocka_unit_test(test_a_cut_rank_list_says_so),
        cmocka_unit_test(test_junk_inputs),
        cmocka_unit_test(test_invalid_utf8_stays_valid_json),
        cmocka_unit_test(test_refusals_mask_controls),
        cmocka_unit_test(test_results_mask_controls),
        cmocka_unit_test(test_invalid_utf8_in_names),
        cmocka_unit_test(test_counts_name_their_range),
        cmocka_unit_test(test_compare_double_dash),
        cmocka_unit_test(test_padded_markers_read_alike),
        cmocka_unit_test(test_depth_past_32_bits_is_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
