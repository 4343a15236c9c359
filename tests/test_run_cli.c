/* `hbg run` end to end: the log grammar, records, switches, refusals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "support/run_support.h"
#include "support/tools_support.h"


static unsigned long long num(const char *line, const char *key)
{
    const char *p = strstr(line, key);
    if (!p)
        return ~0ull;
    return strtoull(p + strlen(key), NULL, 10);
}

/* Checks the grammar: stamp first, one anchor, N bursts of 10 segments
 * with arena_h2d last, each followed by the chip.run.bind span of the same
 * (pid, inv). */
static void check_log(const char *path, int rounds, bool device)
{
    char *log = rs_slurp(path);
    assert_non_null(log);
    assert_true(strncmp(log, "[stamp] ", 8) == 0);
    int anchors = 0, bursts = 0, segs = 0, runner = 0;
    unsigned long long pid = 0, inv = 0;
    bool closed = false;
    for (char *line = strtok(log, "\n"); line; line = strtok(NULL, "\n")) {
        if (strstr(line, "[CLOCK_ANCHOR] v=1 ")) {
            anchors++;
            assert_int_equal(bursts, 0);
        } else if (strstr(line, " bind phase=")) {
            if (segs == 0) {
                pid = num(line, " pid="), inv = num(line, " inv=");
                closed = false;
            }
            assert_false(closed);
            assert_int_equal(num(line, " pid="), pid);
            assert_int_equal(num(line, " inv="), inv);
            segs++;
            if (strstr(line, "bind phase=arena_h2d ")) {
                assert_int_equal(segs, 10);
                closed = true;
            }
        } else if (strstr(line, "name=chip.run.bind ")) {
            assert_true(closed);
            assert_int_equal(num(line, " pid="), pid);
            assert_int_equal(num(line, " inv="), inv);
            assert_int_equal(inv, (unsigned long long)bursts + 1);
            bursts++;
            segs = 0;
        } else if (strstr(line, "name=chip.run.runner_run ")) {
            runner++;
        }
    }
    assert_int_equal(anchors, 1);
    assert_int_equal(bursts, rounds);
    assert_int_equal(runner, device ? rounds : 0);
    free(log);
}

static void three_rounds_parse(void **state)
{
    (void)state;
    char out[8192], log[300], args[1200];
    snprintf(log, sizeof log, "%s/numbers.log", rs_dir);
    snprintf(args, sizeof args, "run vector --rounds 3 -o %s", log);
    assert_int_equal(rs_run("HBG_BIND_BREAKDOWN=1", args, out, sizeof out), 0);
    assert_non_null(strstr(out, "rank 0 (pid "));
    assert_non_null(strstr(out, "golden passed; device wall min "));
    check_log(log, 3, true);
    /* the stamp records the resolved switches and the command, not the log path */
    char *text = rs_slurp(log);
    assert_non_null(strstr(text, " env HBG_BIND_BREAKDOWN=1 HBG_HOST_PHASE_RECORDS=0 HBG_SKIP_DEVICE_RUN=0 "
                                 "HBG_LOG_LEVEL=timing hbg run vector --rounds 3\n"));
    free(text);
    /* an existing log is never overwritten */
    struct stat before, after;
    stat(log, &before);
    assert_int_equal(rs_run("", args, out, sizeof out), 1);
    assert_non_null(strstr(out, "refusing to overwrite"));
    stat(log, &after);
    assert_int_equal(before.st_size, after.st_size);
    /* refused, it leaves nothing behind: not even an --out-dir it made
     * for the records */
    char od[400];
    snprintf(od, sizeof od, "%s/fresh_od", rs_dir);
    snprintf(args, sizeof args, "run vector --mode timeline --out-dir %s -o %s", od, log);
    assert_int_equal(rs_run("", args, out, sizeof out), 1);
    assert_non_null(strstr(out, "refusing to overwrite"));
    assert_int_equal(access(od, F_OK), -1);
}

/* An --out-dir too long for a run folder's path is refused, and the
 * folder the run made for it is removed again, as on every other
 * refusal: the same command, shortened, then finds nothing left over. */
static void too_long_out_dir_leaves_nothing(void **state)
{
    (void)state;
    char parent[1400], od[1500], out[8192], args[1800];
    /* four 240-byte folders, so that --out-dir itself can be made (each
     * name under 255 bytes) while its run folder's path passes 1023 */
    int n = snprintf(parent, sizeof parent, "%s/long", rs_dir);
    assert_int_equal(mkdir(parent, 0755), 0);
    for (int k = 0; k < 4; k++) {
        parent[n++] = '/';
        memset(parent + n, 'a', 240);
        n += 240;
        parent[n] = 0;
        assert_int_equal(mkdir(parent, 0755), 0);
    }
    snprintf(od, sizeof od, "%s/bbbbbbbb", parent);
    snprintf(args, sizeof args, "run vector --mode timeline --out-dir %s -o %s/long.log", od, rs_dir);
    assert_int_equal(rs_run("", args, out, sizeof out), 1);
    assert_non_null(strstr(out, " is too long (a run folder's path takes at most 1023 bytes)\n"));
    assert_int_equal(access(od, F_OK), -1);
    snprintf(args, sizeof args, "%s/long.log", rs_dir);
    assert_int_equal(access(args, F_OK), -1);
    /* a --out-dir that existed before is the user's: it stays */
    assert_int_equal(mkdir(od, 0755), 0);
    snprintf(args, sizeof args, "run vector --mode timeline --out-dir %s -o %s/long.log", od, rs_dir);
    assert_int_equal(rs_run("", args, out, sizeof out), 1);
    assert_int_equal(access(od, F_OK), 0);
}

static void skip_device_switch_values(void **state)
{
    (void)state;
    char out[8192], log[300], args[600];
    snprintf(log, sizeof log, "%s/skip0.log", rs_dir);
    snprintf(args, sizeof args, "run vector --rounds 2 -o %s", log);
    assert_int_equal(rs_run("HBG_BIND_BREAKDOWN=1 SIMPLER_SKIP_DEVICE_RUN=0", args, out, sizeof out), 0);
    assert_non_null(strstr(out, "golden passed"));
    check_log(log, 2, true);

    snprintf(log, sizeof log, "%s/skip1.log", rs_dir);
    snprintf(args, sizeof args, "run vector --rounds 2 -o %s", log);
    assert_int_equal(rs_run("HBG_BIND_BREAKDOWN=1 SIMPLER_SKIP_DEVICE_RUN=1", args, out, sizeof out), 0);
    assert_non_null(strstr(out, "golden skipped (device run skipped); device skipped"));
    check_log(log, 2, false);

    /* a value that is not a switch value is refused, naming the variable */
    assert_int_equal(rs_run("HBG_SKIP_DEVICE_RUN=maybe", "run vector", out, sizeof out), 2);
    assert_non_null(strstr(out, "HBG_SKIP_DEVICE_RUN=maybe is not a switch value"));
    /* as typed it may hold an escape or a line break: masked, one line */
    assert_int_equal(rs_run("HBG_BIND_BREAKDOWN=\"$(printf '\\033[31mred')\"", "run vector", out, sizeof out), 2);
    assert_string_equal(out, "hbg run: HBG_BIND_BREAKDOWN=?[31mred is not a switch value (expected 1/true/on/yes or "
                             "0/false/off/no/empty)\n");
    assert_int_equal(rs_run("HBG_LOG_LEVEL=\"$(printf 'x\\ty')\"", "run vector", out, sizeof out), 2);
    assert_string_equal(out, "hbg run: HBG_LOG_LEVEL=x?y is not a log level (expected debug|info|timing|warn|error|off)\n");
    /* the breakdown off: no bind phase lines at all */
    snprintf(log, sizeof log, "%s/off.log", rs_dir);
    snprintf(args, sizeof args, "run vector --rounds 2 -o %s", log);
    assert_int_equal(rs_run("HBG_BIND_BREAKDOWN=off", args, out, sizeof out), 0);
    char *text = rs_slurp(log);
    assert_null(strstr(text, "bind phase="));
    assert_non_null(strstr(text, "name=chip.run.bind "));
    free(text);
}

static json_t *records_lines(const char *out, int *n)
{
    const char *p = strstr(out, "records: ");
    assert_non_null(p);
    char path[512];
    assert_int_equal(sscanf(p, "records: %511s", path), 1);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    json_t *arr = json_array();
    char *line = NULL;
    size_t cap = 0;
    *n = 0;
    while (getline(&line, &cap, f) > 0) {
        json_error_t err;
        json_t *j = json_loads(line, 0, &err);
        if (!j)
            fail_msg("records line %d is not JSON: %s", *n + 1, err.text);
        json_array_append_new(arr, j);
        (*n)++;
    }
    free(line);
    fclose(f);
    return arr;
}

static void timeline_records(void **state)
{
    (void)state;
    char out[8192], log[300], args[900];
    snprintf(log, sizeof log, "%s/timeline.log", rs_dir);
    snprintf(args, sizeof args, "run vector --mode timeline --rounds 2 -o %s --out-dir %s/out", log, rs_dir);
    assert_int_equal(rs_run("", args, out, sizeof out), 0);
    int n;
    json_t *arr = records_lines(out, &n);
    assert_int_equal(n, 2);
    char *text = rs_slurp(log);
    for (int i = 0; i < n; i++) {
        json_t *j = json_array_get(arr, (size_t)i);
        json_int_t pid = json_integer_value(json_object_get(j, "pid"));
        json_int_t inv = json_integer_value(json_object_get(j, "inv"));
        assert_int_equal(inv, i + 1);
        assert_string_equal(json_string_value(json_object_get(j, "clock")), "host_monotonic_ns");
        assert_int_equal(json_integer_value(json_object_get(j, "dropped")), 0);
        /* joined to its span by (pid, inv) */
        char key[96];
        snprintf(key, sizeof key, "pid=%lld tid=", (long long)pid);
        assert_non_null(strstr(text, key));
        snprintf(key, sizeof key, "inv=%lld hid=", (long long)inv);
        assert_non_null(strstr(text, key));
        json_t *recs = json_object_get(j, "records");
        size_t nrec = json_array_size(recs);
        /* 7 submits + 1 alloc + 4 graph_submit + 2 record_node + 1 build + 10 segments */
        assert_int_equal(nrec, 25);
        json_int_t last = 0;
        int segs = 0;
        for (size_t k = 0; k < nrec; k++) {
            json_t *r = json_array_get(recs, k);
            json_int_t s = json_integer_value(json_object_get(r, "start_ns"));
            assert_true(s >= last);
            assert_true(json_integer_value(json_object_get(r, "end_ns")) >= s);
            last = s;
            segs += strcmp(json_string_value(json_object_get(r, "phase")), "host_orch") == 0;
        }
        assert_int_equal(segs, 1);
    }
    free(text);
    json_decref(arr);
    /* timeline mode skips the device, as the original runtime's does */
    assert_non_null(strstr(out, "golden skipped (device run skipped)"));
}

static bool is_segment(const char *phase)
{
    static const char *const seg[] = {"args",         "arena_build", "static_arena",    "gm_heap",   "runtime_init",
                                      "host_orch",    "graph_upload", "shared_mem",     "host_view_close", "arena_h2d"};
    for (size_t i = 0; i < sizeof seg / sizeof *seg; i++)
        if (strcmp(phase, seg[i]) == 0)
            return true;
    return false;
}

/* Every operation record lies inside its pass's host_orch segment record,
 * on every pass of both ranks: the operations' TSC readings are mapped
 * between anchors taken inside the segment (an earlier clock put some up
 * to ~1 us after the segment's end). */
static void operations_nest_inside_host_orch(void **state)
{
    (void)state;
    static char out[1 << 16];
    char log[300], args[900];
    snprintf(log, sizeof log, "%s/nest.log", rs_dir);
    snprintf(args, sizeof args, "run dsv4 --mode timeline --rounds 150 -o %s --out-dir %s/nest", log, rs_dir);
    assert_int_equal(rs_run("", args, out, sizeof out), 0);
    int n;
    json_t *arr = records_lines(out, &n);
    assert_int_equal(n, 300);
    size_t ops = 0;
    for (int i = 0; i < n; i++) {
        json_t *recs = json_object_get(json_array_get(arr, (size_t)i), "records");
        json_int_t lo = -1, hi = -1;
        for (size_t k = 0; k < json_array_size(recs); k++) {
            json_t *r = json_array_get(recs, k);
            if (strcmp(json_string_value(json_object_get(r, "phase")), "host_orch") == 0) {
                lo = json_integer_value(json_object_get(r, "start_ns"));
                hi = json_integer_value(json_object_get(r, "end_ns"));
            }
        }
        assert_true(lo > 0 && hi >= lo);
        for (size_t k = 0; k < json_array_size(recs); k++) {
            json_t *r = json_array_get(recs, k);
            if (is_segment(json_string_value(json_object_get(r, "phase"))))
                continue;
            json_int_t s = json_integer_value(json_object_get(r, "start_ns"));
            json_int_t e = json_integer_value(json_object_get(r, "end_ns"));
            if (s < lo || e > hi || e < s)
                fail_msg("line %d record %zu (%s) %lld..%lld is outside host_orch %lld..%lld", i + 1, k,
                         json_string_value(json_object_get(r, "phase")), (long long)s, (long long)e, (long long)lo,
                         (long long)hi);
            ops++;
        }
    }
    assert_true(ops > 300 * 100); /* every pass had its operations checked */
    json_decref(arr);
}

static void small_pool_drops_but_keeps(void **state)
{
    (void)state;
    char out[8192], log[300], args[900];
    snprintf(log, sizeof log, "%s/small.log", rs_dir);
    snprintf(args, sizeof args,
             "run vector --mode timeline --rounds 1 --records-per-thread 5 -o %s --out-dir %s/small", log, rs_dir);
    assert_int_equal(rs_run("", args, out, sizeof out), 0);
    int n;
    json_t *arr = records_lines(out, &n);
    assert_int_equal(n, 1);
    json_t *j = json_array_get(arr, 0);
    assert_int_equal(json_integer_value(json_object_get(j, "dropped")), 20);
    json_t *recs = json_object_get(j, "records");
    assert_int_equal(json_array_size(recs), 5);
    /* the kept ones are the first five made: args, arena_build, ... */
    assert_string_equal(json_string_value(json_object_get(json_array_get(recs, 0), "phase")), "args");
    char *text = rs_slurp(log);
    assert_non_null(strstr(text, "dropped=20 "));
    free(text);
    json_decref(arr);
}

/* docs/case-synth.md's --records-per-thread figure for synth is exact:
 * at it every pass keeps all its records, one below it the first pass
 * drops one. N + A + 10 without a Graph; N + A + R + M + 11 with one, the
 * nodes recorded once per pass (not per replay). With --keep-definitions
 * only the first pass records the Definition, so the second needs M + 1
 * fewer and drops nothing. */
static void synth_records_figure_is_exact(void **state)
{
    (void)state;
    static const struct {
        const char *params;
        unsigned need, second_drops;
    } sets[] = {
        {"--tasks 100 --replays 0", 100 + 1 + 10, 1},
        {"--tasks 300 --replays 3 --graph-nodes 5", 300 + 1 + 3 + 5 + 11, 1},
        {"--tasks 300 --replays 3 --graph-nodes 5 --keep-definitions", 300 + 1 + 3 + 5 + 11, 0},
    };
    char out[8192], args[1200];
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++)
        for (unsigned less = 0; less < 2; less++) {
            snprintf(args, sizeof args,
                     "run synth %s --mode timeline --rounds 2 --records-per-thread %u -o %s/fig%zu_%u.log "
                     "--out-dir %s/fig",
                     sets[i].params, sets[i].need - less, rs_dir, i, less, rs_dir);
            assert_int_equal(rs_run("", args, out, sizeof out), 0);
            int n;
            json_t *arr = records_lines(out, &n);
            assert_int_equal(n, 2);
            json_int_t d1 = json_integer_value(json_object_get(json_array_get(arr, 0), "dropped"));
            json_int_t d2 = json_integer_value(json_object_get(json_array_get(arr, 1), "dropped"));
            if (d1 != less || d2 != (less ? sets[i].second_drops : 0))
                fail_msg("synth %s at %u records per thread: dropped %lld and %lld", sets[i].params,
                         sets[i].need - less, (long long)d1, (long long)d2);
            json_decref(arr);
        }
}

static void usage_errors(void **state)
{
    (void)state;
    char out[8192];
    assert_int_equal(rs_run("", "run nosuch", out, sizeof out), 2);
    assert_non_null(strstr(out, "unknown case 'nosuch'"));
    assert_int_equal(rs_run("", "run vector --rounds 0", out, sizeof out), 2);
    assert_non_null(strstr(out, "--rounds expects"));
    assert_int_equal(rs_run("", "run vector --mode fast", out, sizeof out), 2);
    assert_int_equal(rs_run("", "run --list", out, sizeof out), 0);
    assert_non_null(strstr(out, "vector"));
    assert_non_null(strstr(out, "\nsynth "));
    /* with a case, that case alone, whichever side of --list it is on */
    assert_int_equal(rs_run("", "run synth --list", out, sizeof out), 0);
    assert_true(strncmp(out, "synth ", 6) == 0);
    assert_non_null(strstr(out, "\n         --tasks "));
    assert_null(strstr(out, "vector"));
    assert_int_equal(rs_run("", "run --list qwen", out, sizeof out), 0);
    assert_true(strncmp(out, "qwen ", 5) == 0 && strchr(out, '\n')[1] == 0);
    /* anything beside --list is a usage error, not left unread */
    static const struct {
        const char *args, *msg;
    } list_refused[] = {
        {"run --list nosuch", "hbg run: unknown case 'nosuch'; `hbg run --list` names them (see `hbg run --help`)\n"},
        {"run --list qwen extra", "hbg run: unexpected argument 'extra' (see `hbg run --help`)\n"},
        {"run --list --tasks 0",
         "hbg run: --list takes no other option (only a CASE, to list it alone), got '--tasks' (see `hbg run --help`)\n"},
        {"run qwen --list -o x.log",
         "hbg run: --list takes no other option (only a CASE, to list it alone), got '-o' (see `hbg run --help`)\n"},
        {"run --li --ro=3",
         "hbg run: --list takes no other option (only a CASE, to list it alone), got '--ro=3' (see `hbg run --help`)\n"},
    };
    for (size_t i = 0; i < sizeof list_refused / sizeof list_refused[0]; i++) {
        assert_int_equal(rs_run("", list_refused[i].args, out, sizeof out), 2);
        assert_string_equal(out, list_refused[i].msg);
    }
    assert_int_equal(rs_run("", "run --help", out, sizeof out), 0);
    assert_non_null(strstr(out, "usage: hbg run CASE"));
    /* the help gives --ranks its range and each case's fixed count, as the refusals do */
    assert_non_null(strstr(out, "--ranks N             rank processes, 1 to 8 (default: the case's; dsv4 runs on\n"
                                "                        exactly 2, synth on exactly 1)\n"));
    assert_int_equal(rs_run("", "help run", out, sizeof out), 0);
    assert_int_equal(rs_run("", "nosuch", out, sizeof out), 2);
    /* help and version are commands too: help on them, nothing after them */
    assert_int_equal(rs_run("", "help help", out, sizeof out), 0);
    assert_non_null(strstr(out, "usage: hbg COMMAND"));
    assert_int_equal(rs_run("", "help version", out, sizeof out), 0);
    assert_non_null(strstr(out, "usage: hbg version"));
    assert_int_equal(rs_run("", "version --help", out, sizeof out), 0);
    assert_non_null(strstr(out, "usage: hbg version"));
    assert_int_equal(rs_run("", "help -h", out, sizeof out), 0);
    assert_non_null(strstr(out, "usage: hbg COMMAND"));
    assert_int_equal(rs_run("", "version extra", out, sizeof out), 2);
    assert_string_equal(out, "hbg: unexpected argument 'extra' after `version` (see `hbg help`)\n");
    assert_int_equal(rs_run("", "help run extra", out, sizeof out), 2);
    assert_string_equal(out, "hbg: unexpected argument 'extra' after `help run` (see `hbg help`)\n");
}

/* Progress on stderr while the ranks bind: with HBG_PROGRESS_S a line
 * every so often when stderr is not a terminal, none with 0, a usage
 * error for a value that is not seconds. The interval here is 1 ms, so
 * any run prints some. */
static void progress_on_stderr(void **state)
{
    (void)state;
    char out[65536], log[300], args[600];
    snprintf(log, sizeof log, "%s/progress.log", rs_dir);
    snprintf(args, sizeof args, "run synth --tasks 3000 --rounds 20 --mode numbers -o %s", log);
    assert_int_equal(rs_run("HBG_PROGRESS_S=0.001", args, out, sizeof out), 0);
    assert_non_null(strstr(out, "hbg run: "));
    assert_non_null(strstr(out, " of 20 passes after "));
    remove(log);
    assert_int_equal(rs_run("HBG_PROGRESS_S=0", args, out, sizeof out), 0);
    assert_null(strstr(out, " passes after "));
    remove(log);
    assert_int_equal(rs_run("HBG_PROGRESS_S=soon", args, out, sizeof out), 2);
    assert_string_equal(out, "hbg run: HBG_PROGRESS_S=soon is not a number of seconds from 0 to 86400\n");
    /* the value as typed may hold an escape: masked */
    assert_int_equal(rs_run("HBG_PROGRESS_S=\"$(printf '1\\033[2J')\"", args, out, sizeof out), 2);
    assert_string_equal(out, "hbg run: HBG_PROGRESS_S=1?[2J is not a number of seconds from 0 to 86400\n");
    /* a fraction without its 0 */
    assert_int_equal(rs_run("HBG_PROGRESS_S=.001", args, out, sizeof out), 0);
    assert_non_null(strstr(out, " of 20 passes after "));
    remove(log);
    /* decimal only */
    assert_int_equal(rs_run("HBG_PROGRESS_S=0x10", args, out, sizeof out), 2);
    assert_int_equal(rs_run("HBG_PROGRESS_S=1e1", args, out, sizeof out), 2);
    assert_int_equal(access(log, F_OK), -1); /* refused before the log was made */
}

/* A --ranks or --tile-unit the case cannot take is a usage error that
 * says what it takes, before any rank starts. */
static void case_limits_are_usage_errors(void **state)
{
    (void)state;
    static const struct {
        const char *args, *msg;
    } cases[] = {
        {"run dsv4 --ranks 1", "hbg run: dsv4 runs on exactly 2 ranks, got --ranks 1 (see `hbg run --help`)\n"},
        {"run dsv4 --tile-unit 64",
         "hbg run: dsv4 has no tile unit (its shapes are fixed); --tile-unit is refused (see `hbg run --help`)\n"},
        /* synth's sizes are its parameters: not "its shapes are fixed" */
        {"run synth --tile-unit 64", "hbg run: synth has no tile unit (its sizes are its own parameters: `hbg run "
                                     "--list synth`); --tile-unit is refused (see `hbg run --help`)\n"},
        {"run qwen --tile-unit 24",
         "hbg run: qwen takes a --tile-unit that is a multiple of 16 from 16 to 1024, got 24 (see `hbg run --help`)\n"},
        {"run vector --tile-unit 1048576",
         "hbg run: vector takes a --tile-unit from 1 to 524288, got 1048576 (see `hbg run --help`)\n"},
        {"run vector --records-per-thread 16777217",
         "hbg run: --records-per-thread expects an integer from 1 to 16777216, got '16777217' (see `hbg run --help`)\n"},
        {"run synth --ranks 2", "hbg run: synth runs on exactly 1 rank, got --ranks 2 (see `hbg run --help`)\n"},
        {"run vector --rounds +2", "hbg run: --rounds expects an integer from 1 to 100000, got '+2' (see `hbg run --help`)\n"},
        /* a value's control bytes are shown as '?': the error stays one line */
        {"run vector --rounds 1\033[2J", "hbg run: --rounds expects an integer from 1 to 100000, got '1?[2J' (see "
                                          "`hbg run --help`)\n"},
        {"run synth --tasks +5", "hbg run: --tasks expects"},
        {"run qwen --tile-unit 4294967296",
         "hbg run: --tile-unit expects an integer under 2^32 (each case takes its own range), got '4294967296' (see "
         "`hbg run --help`)\n"},
        /* 0 meets the case's own range, not a generic one */
        {"run vector --tile-unit 0", "hbg run: vector takes a --tile-unit from 1 to 524288, got 0 (see `hbg run --help`)\n"},
        {"run dsv4 --tile-unit 0",
         "hbg run: dsv4 has no tile unit (its shapes are fixed); --tile-unit is refused (see `hbg run --help`)\n"},
        /* the letter of a short-option cluster, not the word before it */
        {"run qwen -xo foo", "hbg run: unknown or incomplete option '-x' (see `hbg run --help`)\n"},
        {"run qwen --keep -xo", "hbg run: unknown or incomplete option '-x' (see `hbg run --help`)\n"},
        /* a long option with a short alias as typed, not as its letter
         * (getopt reports --log's missing value as -o's) */
        {"run qwen --log", "hbg run: unknown or incomplete option '--log' (see `hbg run --help`)\n"},
        {"run qwen --lo", "hbg run: unknown or incomplete option '--lo' (see `hbg run --help`)\n"},
        /* a value to an option that takes none: the value named, not
         * the option called unknown (a prefix named in full) */
        {"run qwen --help=3", "hbg run: --help takes no value (given \"=3\")\n"},
        {"run qwen --skip-device-run=1", "hbg run: --skip-device-run takes no value (given \"=1\")\n"},
        {"run qwen --skip-d=0", "hbg run: --skip-device-run takes no value (given \"=0\")\n"},
        {"run qwen --keep-definitions=", "hbg run: --keep-definitions takes no value (given \"=\")\n"},
        {"run qwen --no-journal=\033[2J", "hbg run: --no-journal takes no value (given \"=?[2J\")\n"},
        {"run --list=qwen", "hbg run: --list takes no value (given \"=qwen\")\n"},
        /* an ambiguous prefix names no option: unknown, as before */
        {"run qwen --skip=1", "hbg run: unknown or incomplete option '--skip=1' (see `hbg run --help`)\n"},
        {"run qwen -o", "hbg run: unknown or incomplete option '-o' (see `hbg run --help`)\n"},
        {"run qwen --rounds", "hbg run: unknown or incomplete option '--rounds' (see `hbg run --help`)\n"},
        {"run qwen --tas", "hbg run: unknown or incomplete option '--tas' (see `hbg run --help`)\n"},
        /* an empty name is usage, not a file that cannot be created */
        {"run qwen --log=", "hbg run: -o/--log expects a file name, got '' (see `hbg run --help`)\n"},
        {"run qwen --out-dir=", "hbg run: --out-dir expects a folder, got '' (see `hbg run --help`)\n"},
        /* '-' is standard output to the other commands; here it made a
         * file named '-' */
        {"run vector -o -", "hbg run: -o/--log expects a file name, not '-': standard output carries the results; "
                            "without -o the log goes to stderr (./- names a file '-') (see `hbg run --help`)\n"},
        {"run vector --log=-", "hbg run: -o/--log expects a file name, not '-': standard output carries the results; "
                               "without -o the log goes to stderr (./- names a file '-') (see `hbg run --help`)\n"},
        {"run vector --mode timeline --out-dir -",
         "hbg run: --out-dir expects a folder, not '-' (./- names a folder '-') (see `hbg run --help`)\n"},
    };
    char out[8192];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(rs_run("", cases[i].args, out, sizeof out), 2);
        if (cases[i].msg[strlen(cases[i].msg) - 1] == '\n')
            assert_string_equal(out, cases[i].msg);
        else
            assert_true(strncmp(out, cases[i].msg, strlen(cases[i].msg)) == 0 && !strchr(out, '\n')[1]);
    }
}

/* The same conditions, typed differently, make the same stamp: long
 * options in full as `--name value`, a repeated one once with its last
 * value, numbers without leading zeros, bytes in their largest whole
 * unit, the artifact paths (--out for --out-dir) left out; the words stay
 * in the order given. */
static void stamp_is_canonical(void **state)
{
    (void)state;
    static const char *const typed[] = {
        "run synth --rounds 2 --tasks 40 --keep-definitions --log-level timing --device-memory 1G",
        "run synth --ro 2 --ta=040 --keep --out %s/art --log-level=TIMING --device-memory=1024m",
        "run synth --rounds 5 --tasks 7 --rounds=2 --tasks 40 --ke --out-dir=%s/art --log-l Timing --device-m "
        "1073741824",
    };
    char *first = NULL;
    for (size_t i = 0; i < sizeof typed / sizeof typed[0]; i++) {
        char out[8192], log[300], args[1024], cmd[400];
        snprintf(log, sizeof log, "%s/canon%zu.log", rs_dir, i);
        snprintf(cmd, sizeof cmd, typed[i], rs_dir);
        snprintf(args, sizeof args, "%s --mode numbers -o %s", cmd, log);
        assert_int_equal(rs_run("", args, out, sizeof out), 0);
        char *text = rs_slurp(log);
        char *nl = strchr(text, '\n');
        assert_non_null(nl);
        *nl = 0;
        assert_non_null(
            strstr(text, " hbg run synth --rounds 2 --tasks 40 --keep-definitions --log-level timing --device-memory 1G "
                         "--mode numbers"));
        if (!first)
            first = text;
        else
            assert_string_equal(strchr(text, ' '), strchr(first, ' ')), free(text);
    }
    free(first);
}

/* A log on stderr (`2> LOG`) is stamped like an -o log, so the tools read
 * it as one; at --log-level off stderr gets nothing at all. */
static void stderr_log_is_stamped(void **state)
{
    (void)state;
    char err[300], cmd[1024], out[8192], args[400];
    for (int off = 0; off < 2; off++) {
        snprintf(err, sizeof err, "%s/stderr%d.log", rs_dir, off);
        snprintf(cmd, sizeof cmd,
                 "env -u HBG_BIND_BREAKDOWN -u HBG_HOST_PHASE_RECORDS -u HBG_SKIP_DEVICE_RUN -u HBG_LOG_LEVEL "
                 "%s run vector --rounds 2 --mode numbers%s >/dev/null 2>%s",
                 getenv("HBG_CLI"), off ? " --log-level off" : "", err);
        int st = system(cmd);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        char *text = rs_slurp(err);
        if (off) {
            assert_string_equal(text, "");
        } else {
            assert_true(strncmp(text, "[stamp] ", 8) == 0);
            assert_non_null(strstr(text, " hbg run vector --rounds 2 --mode numbers\n"));
            snprintf(args, sizeof args, "phases %s --format json", err);
            assert_int_equal(rs_run("", args, out, sizeof out), 0);
            assert_non_null(strstr(out, "\"stamp\": \""));
        }
        free(text);
    }
}

/* A rank killed mid-run: hbg run names it, stops its peer within the bound,
 * exits non-zero, and the log stays parseable. */
static void killed_rank_is_named(void **state)
{
    (void)state;
    char log[300], outp[300];
    snprintf(log, sizeof log, "%s/killed.log", rs_dir);
    snprintf(outp, sizeof outp, "%s/killed.out", rs_dir);
    const char *argv[] = {"run", "vector", "--ranks", "2", "--rounds", "100000", "--peer-timeout", "1", NULL};
    char *out = rs_kill_a_rank(argv, log, outp, "chip.run", 4);
    assert_non_null(strstr(out, "rank 0 (pid "));
    free(out);
}

/* --device-memory: the simulated device refuses what would pass it, and
 * the rank's line says which segment asked, for how much, and how much
 * was in use, in the device's own words (a pass's report used to give
 * the status alone). The exact figures: the vector case's arguments
 * take 12,304 bytes, its static arena asks for 16 MiB. */
static void device_memory_refusal_is_named(void **state)
{
    (void)state;
    char out[8192], log[300], args[400];
    snprintf(log, sizeof log, "%s/devmem.log", rs_dir);
    snprintf(args, sizeof args, "run vector --device-memory 1M -o %s", log);
    assert_int_equal(rs_run("", args, out, sizeof out), 1);
    if (!strstr(out, "): FAILED: round 1 failed in static_arena: device allocation refused; sim: allocating "
                     "16777216 bytes would exceed the device memory limit (12304 of 1048576 in use)\n"))
        fail_msg("%s", out);
    char *text = rs_slurp(log);
    assert_non_null(strstr(text, "static_arena: sim: allocating 16777216 bytes would exceed the device memory "
                                 "limit (12304 of 1048576 in use)"));
    free(text);
    unlink(log);
    /* the first allocation refused: nothing in use; lower-case suffix */
    assert_int_equal(rs_run("", "run vector --device-memory 1k", out, sizeof out), 1);
    if (!strstr(out, "): FAILED: round 1 failed in args: device allocation refused; sim: allocating 4096 bytes "
                     "would exceed the device memory limit (0 of 1024 in use)\n"))
        fail_msg("%s", out);
    /* room enough: the run and its golden as without the option */
    assert_int_equal(rs_run("", "run vector --device-memory 64M --rounds 2", out, sizeof out), 0);
    assert_non_null(strstr(out, "golden passed"));
    static const char *const bad[] = {"0", "5X", "1T", "4611686018427387905", "4294967297G", "-1", "1KB", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(args, sizeof args, "run vector --device-memory '%s'", bad[i]);
        assert_int_equal(rs_run("", args, out, sizeof out), 2);
        char want[300];
        snprintf(want, sizeof want,
                 "hbg run: --device-memory expects bytes from 1 to 2^62, with an optional suffix K, M or G (KiB, "
                 "MiB, GiB), got '%s' (see `hbg run --help`)\n",
                 bad[i]);
        assert_string_equal(out, want);
    }
    /* 2^62 itself, spelled both ways, is accepted (the case then runs) */
    assert_int_equal(rs_run("", "run vector --device-memory 4294967296G --skip-device-run", out, sizeof out), 0);
    assert_int_equal(rs_run("", "run vector --device-memory 4611686018427387904 --skip-device-run", out, sizeof out),
                     0);
}

/* --device-steps: every rank's simulated device gets the bound, and a
 * run past it fails in the device's words. A vector run asks for 25
 * steps, whatever its tile unit; the case has no count of its own to
 * refuse by beforehand, so the bind runs and the device refuses. --dev,
 * which named --device-memory alone, is now ambiguous. */
static void device_steps_reach_the_device(void **state)
{
    (void)state;
    char out[8192], args[400];
    assert_int_equal(rs_run("", "run vector --device-steps 24 --ranks 2 --log-level off", out, sizeof out), 1);
    /* both ranks' lines end so */
    const char *tail = "): FAILED: round 1 failed: the device failed a copy or a run; device run: sim: the image asks "
                       "for 25 steps (tasks, replayed nodes and kernel blocks), past the limit of 24 "
                       "(hbg_sim_config.max_steps)\n";
    const char *at = out;
    for (int rank = 0; rank < 2; rank++, at++) {
        at = strstr(at, tail);
        assert_non_null(at);
    }
    assert_null(strstr(at, tail));
    assert_non_null(strstr(out, "rank 0 (pid "));
    assert_non_null(strstr(out, "rank 1 (pid "));
    assert_int_equal(rs_run("", "run vector --device-steps 25 --ranks 2 --log-level off", out, sizeof out), 0);
    assert_non_null(strstr(out, "rank 1 (pid "));
    assert_null(strstr(out, "FAILED"));
    /* the default bound and the largest one run it too */
    assert_int_equal(rs_run("", "run vector --log-level off", out, sizeof out), 0);
    assert_int_equal(rs_run("", "run vector --device-steps 4611686018427387904 --log-level off", out, sizeof out), 0);
    static const char *const bad[] = {"0", "-1", "4611686018427387905", "18446744073709551616", "16M", " 5", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(args, sizeof args, "run vector --device-steps '%s'", bad[i]);
        assert_int_equal(rs_run("", args, out, sizeof out), 2);
        char want[300];
        snprintf(want, sizeof want,
                 "hbg run: --device-steps expects an integer from 1 to 2^62, got '%s' (see `hbg run --help`)\n",
                 bad[i]);
        assert_string_equal(out, want);
    }
    assert_int_equal(rs_run("", "run vector --dev 1", out, sizeof out), 2);
    assert_string_equal(out, "hbg run: unknown or incomplete option '--dev' (see `hbg run --help`)\n");
    /* a condition of the run: stamped, as a number */
    char log[300];
    snprintf(log, sizeof log, "%s/devsteps.log", rs_dir);
    snprintf(args, sizeof args, "run vector --device-s=0025 --mode numbers -o %s", log);
    assert_int_equal(rs_run("", args, out, sizeof out), 0);
    char *text = rs_slurp(log);
    assert_non_null(strstr(text, " hbg run vector --device-steps 25 --mode numbers\n"));
    free(text);
    unlink(log);
    assert_int_equal(rs_run("", "run --help", out, sizeof out), 0);
    assert_non_null(strstr(out, "  --device-steps N      the simulated device's bound on one run's work: a run whose\n"
                                "                        image asks for more than N steps (a task or replayed node\n"
                                "                        each, a kernel's one a block) is refused; 1 to 2^62 (default\n"
                                "                        16777216)"));
}

/* hbg run started with SIGCHLD ignored (a parent's setting, which exec
 * keeps): the kernel reaped the ranks itself, and hbg run, whose waitpid
 * then failed, waited for them for ever. It runs as it does otherwise. */
static void sigchld_ignored(void **state)
{
    (void)state;
    char log[300];
    snprintf(log, sizeof log, "%s/chld.log", rs_dir);
    const char *argv[] = {getenv("HBG_CLI"), "run", "vector", "--ranks", "2", "--rounds", "2", "-o", log, NULL};
    char *out, *err;
    int rc = ts_exec_chld_ignored(NULL, argv, "/dev/null", &out, &err, 30);
    if (rc != 0 || !strstr(out, "rank 0 (pid ") || !strstr(out, "rank 1 (pid "))
        fail_msg("status %d (-2: still running after 30 s), stdout '%s', stderr '%s'", rc, out, err);
    free(out), free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(three_rounds_parse),
        cmocka_unit_test(too_long_out_dir_leaves_nothing),
        cmocka_unit_test(skip_device_switch_values),
        cmocka_unit_test(timeline_records),
        cmocka_unit_test(operations_nest_inside_host_orch),
        cmocka_unit_test(small_pool_drops_but_keeps),
        cmocka_unit_test(synth_records_figure_is_exact),
        cmocka_unit_test(usage_errors),
        cmocka_unit_test(case_limits_are_usage_errors),
        cmocka_unit_test(stamp_is_canonical),
        cmocka_unit_test(progress_on_stderr),
        cmocka_unit_test(stderr_log_is_stamped),
        cmocka_unit_test(killed_rank_is_named),
        cmocka_unit_test(device_memory_refusal_is_named),
        cmocka_unit_test(device_steps_reach_the_device),
        cmocka_unit_test(sigchld_ignored),
    };
    return cmocka_run_group_tests(tests, rs_dir_setup, rs_dir_teardown);
}
