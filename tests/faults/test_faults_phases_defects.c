/* Fault: a defect most (or all) passes share. A `dur_ns` past 64 bits on
 * the host_orch line of a pass makes the line unreadable; the pass is then
 * excluded for it, and the segment set the intact passes are held to is
 * the set the passes emitted, so neither a total without host_orch nor
 * the exclusion of the intact minority can come out of it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "support/fault_support.h"
#include "support/tools_support.h"

/* One line of the fixture, changed or not, written at out + *n. */
typedef void line_edit(char *line, const void *arg, char *out, size_t cap, size_t *n);

/* Fixture `name` with each line through `edit`; the temporary's path. */
static char *edited(const char *name, line_edit *edit, const void *arg)
{
    char *text = ts_slurp(ts_fixture(name), NULL);
    assert_non_null(text);
    size_t cap = strlen(text) + 4096, n = 0;
    char *out = malloc(cap);
    assert_non_null(out);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
        edit(line, arg, out, cap, &n);
    char *path = ts_temp_file(out, n, ".log");
    assert_non_null(path);
    free(out);
    free(text);
    return path;
}

/* the host_orch dur_ns of each inv in `broken` (inv digits) past 64 bits */
static void host_orch_past_64_bits(char *line, const void *arg, char *out, size_t cap, size_t *n)
{
    const char *broken = arg;
    char *inv = strstr(line, " inv=");
    char *dur = strstr(line, " dur_ns=");
    if (strstr(line, "phase=host_orch ") && inv && dur && strchr(broken, inv[5])) {
        *dur = 0;
        char *rest = strchr(dur + 1, ' ');
        *n += (size_t)snprintf(out + *n, cap - *n, "%s dur_ns=99999999999999999999%s\n", line, rest);
    } else {
        *n += (size_t)snprintf(out + *n, cap - *n, "%s\n", line);
    }
}

static char *break_host_orch(const char *broken)
{
    return edited("ours-1rank-4pass.log", host_orch_past_64_bits, broken);
}

static void every_pass_sharing_a_defect_leaves_no_statistics(void **state)
{
    (void)state;
    char *log = break_host_orch("1234");
    const char *args[] = {"phases", log, NULL};
    fs_spec spec = {.args = args};
    char *out = NULL, *err = NULL;
    assert_int_equal(fs_run(&spec, 60, &out, &err), 1);
    assert_string_equal(out, "");
    fs_expect(err, ":30: malformed bind line: dur_ns= is a number past 64 bits; ignored\n");
    fs_expect(err, ":24: pass pid=4242 inv=2 has a malformed line that was ignored (line 30); excluded\n");
    fs_expect(err, ": no usable passes: all 3 warm passes were excluded (3 with an ignored line; see the warnings)\n");
    unlink(log);
    free(log);
    free(out);
    free(err);
}

static void the_intact_minority_is_the_one_used(void **state)
{
    (void)state;
    char *log = break_host_orch("23");
    const char *args[] = {"phases", log, NULL};
    fs_spec spec = {.args = args};
    char *out = NULL, *err = NULL;
    assert_int_equal(fs_run(&spec, 60, &out, &err), 0);
    fs_expect(out, "passes  4 in 1 rank: 1 cold (dropped), 3 warm; 2 excluded; 1 used\n");
    fs_expect(out, "\nhost_orch          *            2000              2000            2000     1\n");
    fs_expect(err, ":44: pass pid=4242 inv=3 has a malformed line that was ignored (line 50); excluded\n");
    assert_null(strstr(err, "other segments"));
    unlink(log);
    free(log);
    free(out);
    free(err);
}

/* On each line holding both marks, `from` (its first occurrence) becomes
 * `to`; on every line, thread `th_from` becomes `th_to` (when set). */
typedef struct sub {
    const char *mark1, *mark2, *from, *to, *th_from, *th_to;
    bool dup; /* the line is kept, and its edited copy follows it */
    const struct sub *also; /* a further edit of the line, or NULL */
} sub;

static void substitute(char *line, const void *arg, char *out, size_t cap, size_t *n)
{
    const sub *e = arg;
    if (e->also) { /* the other edit first, into a copy of the line */
        char one[4096];
        size_t k = 0;
        substitute(line, e->also, one, sizeof one, &k);
        assert_true(k > 0 && k < sizeof one);
        one[k - 1] = '\0'; /* its newline */
        line = one;
        sub self = *e;
        self.also = NULL;
        substitute(line, &self, out, cap, n);
        return;
    }
    char *t = e->th_from ? strstr(line, e->th_from) : NULL;
    if (t)
        memcpy(t, e->th_to, strlen(e->th_to)); /* same length */
    char *f = strstr(line, e->mark1) && strstr(line, e->mark2) ? strstr(line, e->from) : NULL;
    if (f && e->dup)
        *n += (size_t)snprintf(out + *n, cap - *n, "%s\n", line);
    if (f)
        *n += (size_t)snprintf(out + *n, cap - *n, "%.*s%s%s\n", (int)(f - line), line, e->to, f + strlen(e->from));
    else
        *n += (size_t)snprintf(out + *n, cap - *n, "%s\n", line);
}

/* `hbg phases` of fixture `name` edited by e: exit 0, and its stdout and
 * stderr in *out, *err. */
static void phases_of(const char *name, const sub *e, char **out, char **err)
{
    char *log = edited(name, substitute, e);
    const char *args[] = {"phases", log, NULL};
    fs_spec spec = {.args = args};
    assert_int_equal(fs_run(&spec, 60, out, err), 0);
    unlink(log);
    free(log);
}

/* A bind line with pid= and no inv= inside a keyed pass is that pass's
 * defect: once it was charged to "inv=0" (another pass's key, here a
 * phantom pass counted as warm), and its own pass was excluded for a
 * missing segment instead. */
static void a_line_without_inv_is_its_burst_defect(void **state)
{
    (void)state;
    char *out = NULL, *err = NULL;
    sub mid = {"phase=graph_upload ", " inv=3", " inv=3", "", NULL, NULL, false, NULL};
    phases_of("ours-1rank-4pass.log", &mid, &out, &err);
    fs_expect(out, "passes  4 in 1 rank: 1 cold (dropped), 3 warm; 1 excluded; 2 used\n");
    fs_expect(err, ":51: malformed bind line: pid= without inv=; ignored\n");
    fs_expect(err, ":44: pass pid=4242 inv=3 has a malformed line that was ignored (line 51); excluded\n");
    assert_null(strstr(err, "inv=0"));
    assert_null(strstr(err, "other segments"));
    free(out), free(err);

    /* the first line of its pass: charged to the pass it begins */
    sub first = {"phase=args ", " inv=3", " inv=3", "", NULL, NULL, false, NULL};
    phases_of("ours-1rank-4pass.log", &first, &out, &err);
    fs_expect(out, "passes  4 in 1 rank: 1 cold (dropped), 3 warm; 1 excluded; 2 used\n");
    fs_expect(err, ":45: pass pid=4242 inv=3 has a malformed line that was ignored (line 44); excluded\n");
    assert_null(strstr(err, "other segments"));
    free(out), free(err);

    /* cut just before its pid=: well formed, but among keyed passes a defect */
    sub nokey = {"phase=args ", " inv=3", " pid=4242 inv=3", "", NULL, NULL, false, NULL};
    phases_of("ours-1rank-4pass.log", &nokey, &out, &err);
    fs_expect(out, "passes  4 in 1 rank: 1 cold (dropped), 3 warm; 1 excluded; 2 used\n");
    fs_expect(err, ":44: malformed bind line: no pid= or inv=, on a thread whose passes have them; ignored\n");
    fs_expect(err, ":45: pass pid=4242 inv=3 has a malformed line that was ignored (line 44); excluded\n");
    free(out), free(err);

    /* the log's first line: no pass yet, charged to the one it begins */
    sub logfirst = {"phase=args ", " inv=1", " inv=1", "", NULL, NULL, false, NULL};
    phases_of("ours-1rank-4pass.log", &logfirst, &out, &err);
    /* (the cold pass, dropped anyway, is not counted as excluded too) */
    fs_expect(out, "passes  4 in 1 rank: 1 cold (dropped), 3 warm; 0 excluded; 3 used\n");
    fs_expect(err, ":5: pass pid=4242 inv=1 has a malformed line that was ignored (line 4); excluded\n");
    free(out), free(err);

    /* the log's first line cut before its pid=, while nothing keyed came
     * before it: once it opened a keyless pass of its own (a phantom,
     * excluded for its missing segments) and its pass lacked args */
    sub cutfirst = {"phase=args ", " inv=1", " pid=4242 inv=1", "", NULL, NULL, false, NULL};
    phases_of("ours-1rank-4pass.log", &cutfirst, &out, &err);
    fs_expect(out, "passes  4 in 1 rank: 1 cold (dropped), 3 warm; 0 excluded; 3 used\n");
    fs_expect(err, ":4: malformed bind line: no pid= or inv=, before its pass's first keyed line (line 5); ignored\n");
    fs_expect(err, ":4: pass pid=4242 inv=1 has a malformed line that was ignored (line 4); excluded\n");
    assert_null(strstr(err, " thread 0x"));
    assert_null(strstr(err, "other segments"));
    free(out), free(err);

    /* the same at the start of the second rank, after the first rank's
     * keyed line, on a thread of its own */
    sub cutsecond = {"phase=args ", "pid=6002 inv=1", " pid=6002 inv=1", "", NULL, NULL, false, NULL};
    phases_of("ours-2rank-shared-lines.log", &cutsecond, &out, &err);
    fs_expect(out, "passes  6 in 2 ranks: 2 cold (dropped), 4 warm; 0 excluded; 4 used\n");
    fs_expect(err, ":5: malformed bind line: no pid= or inv=, before its pass's first keyed line (line 7); ignored\n");
    fs_expect(err, ":5: pass pid=6002 inv=1 has a malformed line that was ignored (line 5); excluded\n");
    assert_null(strstr(err, " thread 0x"));
    free(out), free(err);

    /* a malformed repeat of a pass's first line, right after it, with
     * its pid: held as the next pass's first line until the pass went
     * on, then its pass's (once the intact next pass was excluded) */
    sub repeat = {"phase=args ", " inv=3", " dur_ns=20000 ntensor=20 staged=19 bytes=40859999040 pid=4242 inv=3",
                  " dur_ns=x ntensor=20 staged=19 bytes=40859999040 pid=4242", NULL, NULL, true, NULL};
    phases_of("ours-1rank-4pass.log", &repeat, &out, &err);
    fs_expect(out, "passes  4 in 1 rank: 1 cold (dropped), 3 warm; 1 excluded; 2 used\n");
    fs_expect(err, ":45: malformed bind line: expected dur_ns=<decimal integer>, found dur_ns=x; ignored\n");
    fs_expect(err, ":44: pass pid=4242 inv=3 has a malformed line that was ignored (line 45); excluded\n");
    assert_null(strstr(err, "inv=4"));
    free(out), free(err);

    /* the same repeat without its pid, on a thread that is its rank's
     * alone: its pass's too */
    sub repeat_nopid = {"phase=args ", " inv=2", " pid=4242 inv=2", "", NULL, NULL, true, NULL};
    phases_of("ours-1rank-4pass.log", &repeat_nopid, &out, &err);
    fs_expect(out, "passes  4 in 1 rank: 1 cold (dropped), 3 warm; 1 excluded; 2 used\n");
    fs_expect(err, ":24: pass pid=4242 inv=2 has a malformed line that was ignored (line 25); excluded\n");
    assert_null(strstr(err, "inv=3"));
    free(out), free(err);

    /* the same line with a start_ns of its own is no repeat: it may be
     * another rank's first line (forked ranks share thread ids, and one
     * may start a pass late), so it stays held for the next pass */
    sub own_start = {"phase=args ", " inv=2", "start_ns=5000000145880 dur_ns=20001 ntensor=20 staged=19 bytes=40859999040 pid=4242 inv=2",
                     "start_ns=5000000145999 dur_ns=20001 ntensor=20 staged=19 bytes=40859999040", NULL, NULL, true,
                     NULL};
    phases_of("ours-1rank-4pass.log", &own_start, &out, &err);
    fs_expect(err, ":45: pass pid=4242 inv=3 has a malformed line that was ignored (line 25); excluded\n");
    free(out), free(err);

    /* a pid-only first line (held: it names no pass), then a keyless one,
     * then the pass's first keyed line: both are the first pass's (once
     * the held one went to the next, intact pass) */
    sub keyless2 = {"phase=arena_build ", " inv=1", " pid=4242 inv=1", "", NULL, NULL, false, NULL};
    sub pidonly = {"phase=args ", " inv=1", " inv=1", "", NULL, NULL, false, &keyless2};
    phases_of("ours-1rank-4pass.log", &pidonly, &out, &err);
    fs_expect(out, "passes  4 in 1 rank: 1 cold (dropped), 3 warm; 0 excluded; 3 used\n");
    /* the earliest of its ignored lines, though the held one was charged
     * last (once the warning named line 5) */
    fs_expect(err, ":5: pass pid=4242 inv=1 has a malformed line that was ignored (line 4); excluded\n");
    assert_null(strstr(err, "inv=2"));
    free(out), free(err);

    /* a keyless first line, then a keyed line whose name is invalid (no
     * segment id): no adoption, and no shift by -1 (UBSan aborts on it) */
    sub badname = {"phase=arena_build ", " inv=1", "phase=arena_build ", "phase=ARENA_build ", NULL, NULL, false,
                   &cutfirst};
    phases_of("ours-1rank-4pass.log", &badname, &out, &err);
    fs_expect(err, ":5: malformed bind line: expected phase=<name of [a-z0-9_]>, found phase=ARENA_build; ignored\n");
    fs_expect(out, "passes  ");
    free(out), free(err);

    /* a segment twice in mid-pass: its pass's, not the next one's */
    sub twice = {"phase=shared_mem ", " inv=3", " inv=3", "", NULL, NULL, true, NULL};
    phases_of("ours-1rank-4pass.log", &twice, &out, &err);
    fs_expect(out, "passes  4 in 1 rank: 1 cold (dropped), 3 warm; 1 excluded; 2 used\n");
    fs_expect(err, ":44: pass pid=4242 inv=3 has a malformed line that was ignored (line 49); excluded\n");
    free(out), free(err);

    /* --keep-first: the cold pass was a candidate too, and is counted */
    char *all = break_host_orch("1234");
    const char *kargs[] = {"phases", "--keep-first", all, NULL};
    fs_spec spec = {.args = kargs};
    assert_int_equal(fs_run(&spec, 60, &out, &err), 1);
    fs_expect(err, ": no usable passes: all 4 passes were excluded (4 with an ignored line; see the warnings)\n");
    unlink(all);
    free(all);
    free(out);
    free(err);
}

/* Forked ranks share their threads' ids: a line that names its pid is
 * charged to that rank's pass; one that names none could be either's,
 * and is charged to no pass (never to the other rank's intact one). */
static void ranks_sharing_a_thread_id(void **state)
{
    (void)state;
    char *out = NULL, *err = NULL;
    sub noinv = {"phase=static_arena ", "pid=6001 inv=2", "pid=6001 inv=2", "pid=6001",
                 "T0x7f00bb000641", "T0x7f00bb000640", false, NULL};
    phases_of("ours-2rank-shared-lines.log", &noinv, &out, &err);
    fs_expect(out, "passes  6 in 2 ranks: 2 cold (dropped), 4 warm; 1 excluded; 3 used\n");
    fs_expect(err, ":42: pass pid=6001 inv=2 has a malformed line that was ignored (line 46); excluded\n");
    free(out), free(err);

    sub badpid = {"phase=static_arena ", "pid=6001 inv=2", "pid=6001 ", "pid=6001x ",
                  "T0x7f00bb000641", "T0x7f00bb000640", false, NULL};
    phases_of("ours-2rank-shared-lines.log", &badpid, &out, &err);
    fs_expect(out, "passes  6 in 2 ranks: 2 cold (dropped), 4 warm; 1 excluded; 3 used\n");
    fs_expect(err, ":46: malformed bind line: expected pid=<decimal integer>, found pid=6001x; ignored\n");
    assert_null(strstr(err, "pid=6002 inv=2"));
    assert_null(strstr(err, " thread 0x"));
    free(out), free(err);

    /* rank 6002's first line, cut before its pid=, comes while the
     * thread has only rank 6001's pass: it begins 6002's pass, and takes
     * no pid from 6001's (once it was held for 6001's next pass, an
     * intact warm one) */
    sub first = {"phase=args ", "pid=6002 inv=1", " pid=6002 inv=1", "", "T0x7f00bb000641", "T0x7f00bb000640",
                 false, NULL};
    phases_of("ours-2rank-shared-lines.log", &first, &out, &err);
    fs_expect(out, "passes  6 in 2 ranks: 2 cold (dropped), 4 warm; 0 excluded; 4 used\n");
    fs_expect(err, ":7: pass pid=6002 inv=1 has a malformed line that was ignored (line 5); excluded\n");
    free(out), free(err);

    /* a host-orch line that names its pid: that rank's pass */
    sub orch = {"host-orch phase=record_node ", "pid=6002 inv=2", " inv=2", "", "T0x7f00bb000641", "T0x7f00bb000640",
                false, NULL};
    phases_of("ours-2rank-shared-lines.log", &orch, &out, &err);
    fs_expect(out, "passes  6 in 2 ranks: 2 cold (dropped), 4 warm; 1 excluded; 3 used\n");
    fs_expect(err, "pass pid=6002 inv=2 has a malformed line that was ignored (line 66); excluded\n");
    free(out), free(err);
}

/* The original runtime writes no pid= or inv=: a malformed first line
 * of each rank's first burst is held until its thread's pass is made.
 * Two held at once (two ranks, two threads) are each charged to their
 * own pass; once the second replaced the first, whose pass then went
 * uncharged. */
static void first_lines_of_two_ranks_held_at_once(void **state)
{
    (void)state;
    char *out = NULL, *err = NULL;
    sub b = {"phase=args ", "start_ns=6000000000107 ", " dur_ns=20000", " dur_ns=x", NULL, NULL, false, NULL};
    sub a = {"phase=args ", "start_ns=6000000000100 ", " dur_ns=20000", " dur_ns=x", NULL, NULL, false, &b};
    phases_of("original-2rank-interleaved.log", &a, &out, &err);
    fs_expect(err, ":5: malformed bind line: expected dur_ns=<decimal integer>, found dur_ns=x; ignored\n");
    fs_expect(err, ":6: malformed bind line: expected dur_ns=<decimal integer>, found dur_ns=x; ignored\n");
    fs_expect(err, ":7: pass pid=4001 inv=1 has a malformed line that was ignored (line 5); excluded\n");
    fs_expect(err, ":8: pass pid=4002 inv=1 has a malformed line that was ignored (line 6); excluded\n");
    fs_expect(out, "passes  6 in 2 ranks: 2 cold (dropped), 4 warm; 0 excluded; 4 used\n");
    free(out), free(err);
}

/* A line cut inside "phase=" or inside its segment's name: warned of at
 * its line and charged to its pass. Once the first was not seen at all
 * (the pass was excluded for a missing segment, the line never named),
 * and the second counted "arena" as an unknown segment of its own. */
static void a_line_cut_inside_its_marker_or_name(void **state)
{
    (void)state;
    char *out = NULL, *err = NULL;
    const char *rest = "ase=arena_build start_ns=5000000229789 dur_ns=41 bytes=9437184 device=704 pid=4242 inv=3";
    sub marker = {"phase=arena_build ", " inv=3", rest, "", NULL, NULL, false, NULL};
    phases_of("ours-1rank-4pass.log", &marker, &out, &err);
    fs_expect(err, ":45: malformed bind line: the line ends before phase= (cut short); ignored\n");
    fs_expect(err, ":44: pass pid=4242 inv=3 has a malformed line that was ignored (line 45); excluded\n");
    fs_expect(out, "passes  4 in 1 rank: 1 cold (dropped), 3 warm; 1 excluded; 2 used\n");
    assert_null(strstr(err, "other segments"));
    free(out), free(err);

    sub name = {"phase=arena_build ", " inv=3", rest + 9, "", NULL, NULL, false, NULL};
    phases_of("ours-1rank-4pass.log", &name, &out, &err);
    fs_expect(err, ":45: malformed bind line: the line ends after phase=arena (cut short: expected start_ns= "
                   "dur_ns=); ignored\n");
    fs_expect(err, ":44: pass pid=4242 inv=3 has a malformed line that was ignored (line 45); excluded\n");
    fs_expect(out, "passes  4 in 1 rank: 1 cold (dropped), 3 warm; 1 excluded; 2 used\n");
    assert_null(strstr(err, "unknown segment"));
    assert_null(strstr(out, "\narena "));
    free(out), free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_pass_sharing_a_defect_leaves_no_statistics),
        cmocka_unit_test(the_intact_minority_is_the_one_used),
        cmocka_unit_test(a_line_without_inv_is_its_burst_defect),
        cmocka_unit_test(ranks_sharing_a_thread_id),
        cmocka_unit_test(first_lines_of_two_ranks_held_at_once),
        cmocka_unit_test(a_line_cut_inside_its_marker_or_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
