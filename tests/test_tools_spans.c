/* `hbg spans`: every view's numbers, computed here from the fixture's own
 * [STRACE] lines, on logs of both grammars (two ranks, pipelined
 * invocations, a missing anchor, two anchors for one pid); the overlap
 * assertion holding and failing; per-operation tails of a records file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "support/fault_support.h"
#include "support/tools_support.h"

/* --- the fixture, read independently of the tool ------------------------- */

typedef struct xspan {
    uint64_t pid, tid, inv, ts, dur, depth;
    char hid[17], name[96];
    bool dev;
    size_t line;
} xspan;

typedef struct xanchor {
    uint64_t pid, mono, wall;
    size_t line;
} xanchor;

typedef struct xlog {
    xspan s[256];
    size_t n;
    xanchor a[8];
    size_t na;
} xlog;

/* %XX -> byte, as the emitter encodes names */
static void decode(char *s)
{
    char *o = s;
    for (char *p = s; *p; p++) {
        unsigned v;
        if (*p == '%' && sscanf(p + 1, "%2x", &v) == 1 && v >= 0x20 && v != 0x7f) {
            *o++ = (char)v;
            p += 2;
        } else {
            *o++ = *p;
        }
    }
    *o = 0;
}

static void read_fixture(const char *name, xlog *x)
{
    memset(x, 0, sizeof *x);
    char *text = ts_slurp(ts_fixture(name), NULL);
    assert_non_null(text);
    size_t line = 0;
    for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
        line++;
        /* the line count must follow blank-free lines: the fixtures have none */
        for (char *p = strstr(l, "[STRACE] v=1 "); p; p = strstr(p + 1, "[STRACE] v=1 ")) {
            xspan *s = &x->s[x->n];
            int k = sscanf(p,
                           "[STRACE] v=1 pid=%" SCNu64 " tid=%" SCNu64 " inv=%" SCNu64 " hid=%16s depth=%" SCNu64
                           " name=%95s ts=%" SCNu64 " dur=%" SCNu64,
                           &s->pid, &s->tid, &s->inv, s->hid, &s->depth, s->name, &s->ts, &s->dur);
            assert_int_equal(k, 8);
            char *next = strstr(p + 1, "[mono_ns=");
            char *clk = strstr(p, "clk=dev");
            s->dev = clk && (!next || clk < next);
            s->line = line;
            decode(s->name);
            if (strncmp(s->name, "node.", 5))
                x->n++;
        }
        char *a = strstr(l, "[CLOCK_ANCHOR] v=1 ");
        if (a) {
            xanchor *c = &x->a[x->na++];
            assert_int_equal(sscanf(a, "[CLOCK_ANCHOR] v=1 pid=%" SCNu64 " mono_ns=%" SCNu64 " wall_ns=%" SCNu64,
                                    &c->pid, &c->mono, &c->wall),
                             3);
            c->line = line;
        }
    }
    free(text);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The per-invocation sums of name over the invocations of hid (pid 0: any). */
static size_t values(const xlog *x, const char *hid, const char *name, uint64_t pid, int64_t *out)
{
    size_t n = 0;
    uint64_t seen[64][2];
    size_t nseen = 0;
    for (size_t i = 0; i < x->n; i++) {
        const xspan *s = &x->s[i];
        if (strcmp(s->hid, hid) || (pid && s->pid != pid))
            continue;
        bool dup = false;
        for (size_t k = 0; k < nseen; k++)
            dup |= seen[k][0] == s->pid && seen[k][1] == s->inv;
        if (dup)
            continue;
        seen[nseen][0] = s->pid;
        seen[nseen++][1] = s->inv;
        int64_t sum = 0;
        bool any = false;
        for (size_t j = 0; j < x->n; j++)
            if (x->s[j].pid == s->pid && x->s[j].inv == s->inv && !strcmp(x->s[j].name, name)) {
                sum += (int64_t)x->s[j].dur;
                any = true;
            }
        if (any)
            out[n++] = sum;
    }
    return n;
}

/* The median of v[0..n) as the tool prints it. */
static char *median_str(int64_t *v, size_t n, char *buf, size_t len)
{
    qsort(v, n, sizeof *v, cmp_i64);
    if (n % 2)
        snprintf(buf, len, "%" PRId64, v[n / 2]);
    else if ((v[n / 2 - 1] + v[n / 2]) % 2 == 0)
        snprintf(buf, len, "%" PRId64, (v[n / 2 - 1] + v[n / 2]) / 2);
    else
        snprintf(buf, len, "%" PRId64 ".5", (v[n / 2 - 1] + v[n / 2]) / 2);
    return buf;
}

static double mean(const int64_t *v, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += (double)v[i];
    return s / (double)n;
}

/* --- running the tool ------------------------------------------------------- */

static json_t *run_json(const char *const *args, int want, char **err)
{
    char *out;
    assert_int_equal(ts_run_cli(args, &out, err), want);
    json_error_t je;
    json_t *j = json_loads(out, 0, &je);
    if (!j)
        fprintf(stderr, "output does not parse: %s\n%s\n", je.text, out);
    assert_non_null(j);
    free(out);
    return j;
}

/* A JSON number as the tool wrote it: an integer, or x.5 */
static char *num_str(json_t *v, char *buf, size_t n)
{
    if (json_is_integer(v))
        snprintf(buf, n, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    else
        snprintf(buf, n, "%.1f", json_real_value(v));
    return buf;
}

/* Whether an element of j's "warnings" holds text. */
static bool json_warned(json_t *j, const char *text)
{
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(j, "warnings"), i, e)
    {
        const char *s = json_string_value(e);
        if (s && ts_contains(s, text))
            return true;
    }
    return false;
}

static json_t *by_name(json_t *arr, const char *key, const char *name)
{
    size_t i;
    json_t *e;
    json_array_foreach(arr, i, e)
    {
        const char *s = json_string_value(json_object_get(e, key));
        if (s && !strcmp(s, name))
            return e;
    }
    return NULL;
}

/* --- tpot --------------------------------------------------------------------- */

static void check_tpot(const char *fixture, const char *hid, const char *label, size_t ninv)
{
    xlog x;
    read_fixture(fixture, &x);
    char lp[4096], *err;
    snprintf(lp, sizeof lp, "%s", ts_fixture(fixture));
    const char *a[] = {"spans", lp, "--format", "json", NULL};
    json_t *j = run_json(a, 0, &err);
    free(err);
    assert_string_equal(json_string_value(json_object_get(j, "view")), "tpot");
    json_t *c = by_name(json_object_get(j, "callables"), "hid", hid);
    assert_non_null(c);
    assert_string_equal(json_string_value(json_object_get(c, "label")), label);
    assert_int_equal(json_integer_value(json_object_get(c, "invocations")), ninv);
    size_t i;
    json_t *st;
    size_t nst = 0;
    json_array_foreach(json_object_get(c, "stages"), i, st)
    {
        const char *name = json_string_value(json_object_get(st, "name"));
        int64_t v[64];
        size_t n = values(&x, hid, name, 0, v);
        assert_true(n > 0);
        char want[48], got[48];
        assert_int_equal(json_integer_value(json_object_get(st, "n")), n);
        qsort(v, n, sizeof *v, cmp_i64);
        assert_int_equal(json_integer_value(json_object_get(st, "min_ns")), v[0]);
        assert_int_equal(json_integer_value(json_object_get(st, "max_ns")), v[n - 1]);
        snprintf(want, sizeof want, "%.1f", mean(v, n));
        snprintf(got, sizeof got, "%.1f", json_real_value(json_object_get(st, "mean_ns")));
        assert_string_equal(got, want);
        median_str(v, n, want, sizeof want);
        assert_string_equal(num_str(json_object_get(st, "median_ns"), got, sizeof got), want);
        nst++;
    }
    /* every distinct name of the callable has its row */
    size_t distinct = 0;
    for (size_t k = 0; k < x.n; k++) {
        if (strcmp(x.s[k].hid, hid))
            continue;
        bool first = true;
        for (size_t m = 0; m < k; m++)
            first &= strcmp(x.s[m].hid, hid) || strcmp(x.s[m].name, x.s[k].name);
        distinct += first;
    }
    assert_int_equal(nst, distinct);
    json_decref(j);
}

/* A count of one reads as English: "1 spans of the per-task ... carry"
 * and "its 1 spans are all" it once said of one such span. */
static void test_one_foreign_span(void **st)
{
    (void)st;
    static const char alone[] = "[STRACE] v=1 pid=9 tid=9 inv=0 hid=aa depth=0 name=node.dispatch ts=100 dur=10\n";
    static const char beside[] = "[STRACE] v=1 pid=9 tid=9 inv=1 hid=ab depth=0 name=chip.run ts=1000 dur=100\n"
                                 "[STRACE] v=1 pid=9 tid=9 inv=0 hid=aa depth=0 name=node.dispatch ts=100 dur=10\n";
    char *lp = ts_temp_file(alone, strlen(alone), ".log"), *out, *err, want[4400];
    const char *a[] = {"spans", lp, NULL};
    assert_int_equal(ts_run_cli(a, &out, &err), 1);
    snprintf(want, sizeof want,
             "hbg spans: %s: its one span is of the per-task (node, network) or external (ext.) families, which "
             "carry no run identity: no invocations to show\n",
             lp);
    if (!ts_contains(err, want))
        fail_msg("%s", err);
    free(out), free(err);
    unlink(lp);
    free(lp);
    lp = ts_temp_file(beside, strlen(beside), ".log");
    a[1] = lp;
    assert_int_equal(ts_run_cli(a, &out, &err), 0);
    snprintf(want, sizeof want,
             "hbg spans: warning: %s: one span of the per-task (node, network) or external (ext.) families carries "
             "no run identity and is left out\n",
             lp);
    if (!ts_contains(err, want))
        fail_msg("%s", err);
    free(out), free(err);
    unlink(lp);
    free(lp);
}

/* A log whose only record is malformed: that is the reason given (as
 * hbg timeline gives it), in the singular ("none of its 1 [STRACE]
 * record" it once said), not the log level. */
static void test_nothing_whole_is_the_reason_given(void **st)
{
    (void)st;
    static const char text[] =
        "[mono_ns=1][T0x1][TIMING] e: [STRACE] v=1 pid=1 tid=1 inv=1 hid=ab depth=0 name=chip.run ts=5\n";
    char *log = ts_temp_file(text, strlen(text), ".log"), *out = NULL, *err = NULL, want[4400];
    const char *args[] = {"spans", log, NULL};
    assert_int_equal(ts_run_cli(args, &out, &err), 1);
    snprintf(want, sizeof want, "hbg spans: %s: its one [STRACE] record is not whole (see the warnings)\n", log);
    assert_true(ts_contains(err, want));
    assert_false(ts_contains(err, "log level"));
    assert_string_equal(out, "");
    free(out);
    free(err);
    unlink(log);
    free(log);
}

static void test_tpot_ours_two_ranks(void **st)
{
    (void)st;
    check_tpot("spans-ours-2rank.log", "2222222222222222", "decode", 6);
    check_tpot("spans-ours-2rank.log", "1111111111111111", "prefill", 1);
}

/* A log holding its run twice (two copies put together): each span is
 * the same record twice and counts once, so every view says what the one
 * copy says, with one warning naming the repeats. */
static void test_a_run_twice_counts_once(void **st)
{
    (void)st;
    size_t len;
    char *one = ts_slurp(ts_fixture("spans-ours-2rank.log"), &len);
    assert_non_null(one);
    char *both = malloc(2 * len);
    assert_non_null(both);
    memcpy(both, one, len);
    memcpy(both + len, one, len);
    size_t nspan = 0;
    for (char *p = one; (p = strstr(p, "[STRACE] v=1 ")); p++)
        nspan++;
    char *l1 = ts_temp_file(one, len, ".log"), *l2 = ts_temp_file(both, 2 * len, ".log");
    static const char *const views[] = {"tpot", "tree", "rounds"};
    for (size_t v = 0; v < 3; v++) {
        char *e1, *e2;
        const char *a1[] = {"spans", l1, "--view", views[v], "--format", "json", NULL};
        const char *a2[] = {"spans", l2, "--view", views[v], "--format", "json", NULL};
        json_t *j1 = run_json(a1, 0, &e1), *j2 = run_json(a2, 0, &e2);
        json_object_del(j1, "log");
        json_object_del(j2, "log");
        json_object_del(j1, "warnings");
        json_object_del(j2, "warnings");
        if (!json_equal(j1, j2)) {
            char *d1 = json_dumps(j1, JSON_COMPACT), *d2 = json_dumps(j2, JSON_COMPACT);
            fail_msg("--view %s: once %s\ntwice %s", views[v], d1, d2);
            free(d1), free(d2);
        }
        char want[128];
        snprintf(want, sizeof want, ": %zu spans repeat an earlier span of their invocation exactly", nspan);
        assert_true(ts_contains(e2, want));
        assert_false(ts_contains(e1, "repeat an earlier span"));
        json_decref(j1);
        json_decref(j2);
        free(e1);
        free(e2);
    }
    remove(l1);
    remove(l2);
    free(l1);
    free(l2);
    free(both);
    free(one);
}

static void test_tpot_original_pipelined(void **st)
{
    (void)st;
    check_tpot("spans-original-pipelined.log", "3333333333333333", "decode", 4);
    check_tpot("original-grammar-2rank-3round.log", "8f3a1c2e9d0b4471", "decode", 6);
}

/* --- rounds -------------------------------------------------------------------- */

static bool wall_at(const xlog *x, uint64_t pid, size_t line, uint64_t mono, char *buf, size_t n)
{
    const xanchor *a = NULL;
    for (size_t i = 0; i < x->na; i++)
        if (x->a[i].pid == pid && x->a[i].line < line)
            a = &x->a[i];
    if (!a)
        return false;
    uint64_t w = a->wall + mono - a->mono;
    time_t sec = (time_t)(w / 1000000000u);
    struct tm tm;
    gmtime_r(&sec, &tm);
    char d[32];
    strftime(d, sizeof d, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, n, "%s.%09uZ", d, (unsigned)(w % 1000000000u));
    return true;
}

static const xspan *find_span(const xlog *x, uint64_t pid, uint64_t inv, const char *name)
{
    for (size_t i = 0; i < x->n; i++)
        if (x->s[i].pid == pid && x->s[i].inv == inv && !strcmp(x->s[i].name, name))
            return &x->s[i];
    return NULL;
}

static void check_rounds(const char *fixture, const char *hid, const uint64_t *pids, size_t nranks)
{
    xlog x;
    read_fixture(fixture, &x);
    char lp[4096], *err;
    snprintf(lp, sizeof lp, "%s", ts_fixture(fixture));
    const char *a[] = {"spans", lp, "--view", "rounds", "--format", "json", NULL};
    json_t *j = run_json(a, 0, &err);
    free(err);
    json_t *ranks = json_object_get(j, "ranks");
    assert_int_equal(json_array_size(ranks), nranks);
    for (size_t r = 0; r < nranks; r++)
        assert_int_equal(json_integer_value(json_object_get(json_array_get(ranks, r), "pid")), pids[r]);
    json_t *rows = json_object_get(j, "rounds");
    size_t row = 0;
    static const char *const cols[] = {"host", "device", "orch", "sched"};
    static const char *const names[] = {"chip.run", "chip.run.runner_run.device_wall",
                                        "chip.run.runner_run.device_wall.orch",
                                        "chip.run.runner_run.device_wall.sched"};
    int64_t warm[5][64];
    size_t nwarm[5] = {0};
    for (size_t r = 0; r < nranks; r++) {
        /* the rank's invocations of hid, in inv order */
        uint64_t invs[64];
        size_t ni = 0;
        for (size_t i = 0; i < x.n; i++)
            if (x.s[i].pid == pids[r] && !strcmp(x.s[i].hid, hid) && x.s[i].depth == 0)
                invs[ni++] = x.s[i].inv;
        for (size_t a1 = 1; a1 < ni; a1++)
            for (size_t b1 = a1; b1 > 0 && invs[b1 - 1] > invs[b1]; b1--) {
                uint64_t t = invs[b1];
                invs[b1] = invs[b1 - 1];
                invs[b1 - 1] = t;
            }
        for (size_t k = 0; k < ni; k++, row++) {
            json_t *e = json_array_get(rows, row);
            assert_non_null(e);
            assert_int_equal(json_integer_value(json_object_get(e, "rank")), r);
            assert_int_equal(json_integer_value(json_object_get(e, "pid")), pids[r]);
            assert_int_equal(json_integer_value(json_object_get(e, "inv")), invs[k]);
            assert_int_equal(json_integer_value(json_object_get(e, "round")), k + 1);
            assert_int_equal(json_is_true(json_object_get(e, "cold")), k == 0);
            char key[32];
            for (int c = 0; c < 4; c++) {
                const xspan *s = find_span(&x, pids[r], invs[k], names[c]);
                snprintf(key, sizeof key, "%s_ns", cols[c]);
                json_t *v = json_object_get(e, key);
                if (!s) {
                    assert_true(json_is_null(v));
                    continue;
                }
                assert_int_equal(json_integer_value(v), s->dur);
                if (k)
                    warm[c][nwarm[c]++] = (int64_t)s->dur;
            }
            const xspan *o = find_span(&x, pids[r], invs[k], names[2]);
            const xspan *s = find_span(&x, pids[r], invs[k], names[3]);
            json_t *eff = json_object_get(e, "effective_ns");
            if (o && s) {
                uint64_t e0 = o->ts < s->ts ? o->ts : s->ts;
                uint64_t e1 = o->ts + o->dur > s->ts + s->dur ? o->ts + o->dur : s->ts + s->dur;
                assert_int_equal(json_integer_value(eff), e1 - e0);
                if (k)
                    warm[4][nwarm[4]++] = (int64_t)(e1 - e0);
            } else {
                assert_true(json_is_null(eff));
            }
            const xspan *root = find_span(&x, pids[r], invs[k], "chip.run");
            char utc[64];
            json_t *u = json_object_get(e, "start_utc");
            if (wall_at(&x, pids[r], root->line, root->ts, utc, sizeof utc))
                assert_string_equal(json_string_value(u), utc);
            else
                assert_true(json_is_null(u));
        }
    }
    assert_int_equal(json_array_size(rows), row);
    /* min / median / trimmed mean over warm rounds only */
    json_t *w = json_object_get(j, "warm");
    for (int c = 0; c < 5; c++) {
        char key[32], want[48], got[48];
        snprintf(key, sizeof key, "%s_ns", c < 4 ? cols[c] : "effective");
        json_t *s = json_object_get(w, key);
        assert_int_equal(json_integer_value(json_object_get(s, "n")), nwarm[c]);
        if (!nwarm[c])
            continue;
        int64_t *v = warm[c];
        size_t n = nwarm[c];
        qsort(v, n, sizeof *v, cmp_i64);
        assert_int_equal(json_integer_value(json_object_get(s, "min")), v[0]);
        median_str(v, n, want, sizeof want);
        assert_string_equal(num_str(json_object_get(s, "median"), got, sizeof got), want);
        size_t cut = n / 10;
        snprintf(want, sizeof want, "%.1f", mean(v + cut, n - 2 * cut));
        snprintf(got, sizeof got, "%.1f", json_number_value(json_object_get(s, "trimmed_mean")));
        assert_string_equal(got, want);
    }
    json_decref(j);
}

static void test_rounds_two_ranks_anchors(void **st)
{
    (void)st;
    /* pid 5200 writes first, but hbg run forks rank 0 first: 5100 is rank 0.
     * 5100's first decode round precedes its first anchor, its third follows
     * a second anchor; 5200 has none. */
    static const uint64_t pids[] = {5100, 5200};
    check_rounds("spans-ours-2rank.log", "2222222222222222", pids, 2);
    char lp[4096], *out, *err;
    snprintf(lp, sizeof lp, "%s", ts_fixture("spans-ours-2rank.log"));
    const char *a[] = {"spans", lp, "--view", "rounds", NULL};
    assert_int_equal(ts_run_cli(a, &out, &err), 0);
    assert_true(ts_contains(out, "2 1 cold"));
    assert_true(ts_contains(out, "- (no clock anchor before it)"));
    assert_true(ts_contains(out, "2026-08-22T12:00:05.")); /* the second anchor, 5 s on */
    free(out);
    free(err);
}

/* Two records on one line (writes that interleave): the anchor first on
 * the line dates the round after it (it was taken for one after the
 * round, as if there were none); one after the round on its line does
 * not date it. */
static void test_rounds_an_anchor_on_the_line_of_a_round(void **st)
{
    (void)st;
    static const char text[] =
        "[mono_ns=100][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=8 mono_ns=100 wall_ns=1000000000000000000 "
        "[mono_ns=202][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=8 tid=8 inv=1 hid=ab depth=0 name=chip.run "
        "ts=150 dur=50\n"
        "[mono_ns=302][T0x2][TIMING] emit_host_span: [STRACE] v=1 pid=9 tid=9 inv=1 hid=ab depth=0 name=chip.run "
        "ts=100 dur=50 [mono_ns=300][T0x2][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=9 mono_ns=300 "
        "wall_ns=1000000000000000000\n";
    char *log = ts_temp_file(text, strlen(text), ".log"), *out, *err;
    const char *a[] = {"spans", log, "--view", "rounds", NULL};
    assert_int_equal(ts_run_cli(a, &out, &err), 0);
    assert_true(ts_contains(out, "2001-09-09T01:46:40.000000050Z"));     /* pid 8: 1e18 + 150 - 100 */
    assert_true(ts_contains(out, "- (no clock anchor before it)"));      /* pid 9 */
    assert_false(ts_contains(out, "2001-09-09T01:46:39.999999800Z"));    /* pid 9, dated backwards */
    free(out);
    free(err);
    unlink(log);
    free(log);
    /* After a bind line on its line, an anchor is not first there: as in
     * hbg timeline, which lexes the bind line this reader passes over */
    static const char after_bind[] =
        "[mono_ns=1100][T0x2][TIMING] bind_trace_end: [bind_trace.c:212] bind phase=host_orch start_ns=1050 "
        "dur_ns=10 pid=8 inv=1[mono_ns=1000][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=7 mono_ns=1000 "
        "wall_ns=1700000000000000000[mono_ns=1600][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=7 tid=7 inv=1 "
        "hid=ab depth=0 name=chip.run ts=1100 dur=500\n";
    log = ts_temp_file(after_bind, strlen(after_bind), ".log");
    a[1] = log;
    assert_int_equal(ts_run_cli(a, &out, &err), 0);
    assert_true(ts_contains(out, "- (no clock anchor before it)"));
    free(out);
    free(err);
    unlink(log);
    free(log);
}

/* A round's host_ns and start are its chip.run span's, not those of a
 * depth-0 span of another name written before it in its invocation. */
static void test_rounds_host_is_chip_run(void **st)
{
    (void)st;
    static const char text[] =
        "[mono_ns=100][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=8 mono_ns=100 wall_ns=1000000000000000000\n"
        "[mono_ns=120][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=8 tid=8 inv=1 hid=ab depth=0 name=prep "
        "ts=100 dur=20 \n"
        "[mono_ns=200][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=8 tid=8 inv=1 hid=ab depth=0 name=chip.run "
        "ts=130 dur=70 \n";
    char *log = ts_temp_file(text, strlen(text), ".log"), *err;
    const char *a[] = {"spans", log, "--view", "rounds", "--format", "json", NULL};
    json_t *j = run_json(a, 0, &err);
    free(err);
    json_t *r = json_array_get(json_object_get(j, "rounds"), 0);
    assert_non_null(r);
    assert_int_equal(json_integer_value(json_object_get(r, "host_ns")), 70);
    /* 1e18 + 130 - 100 */
    assert_string_equal(json_string_value(json_object_get(r, "start_utc")), "2001-09-09T01:46:40.000000030Z");
    json_decref(j);
    unlink(log);
    free(log);
}

static void test_rounds_pipelined_device_phases(void **st)
{
    (void)st;
    static const uint64_t pids[] = {7001};
    check_rounds("spans-original-pipelined.log", "3333333333333333", pids, 1);
    static const uint64_t pids2[] = {31337, 31348};
    check_rounds("original-grammar-2rank-3round.log", "8f3a1c2e9d0b4471", pids2, 2);
}

/* --- tree ------------------------------------------------------------------------ */

static json_t *node_after(json_t *nodes, size_t *from, const char *name, size_t depth)
{
    json_t *e = json_array_get(nodes, (*from)++);
    assert_non_null(e);
    assert_string_equal(json_string_value(json_object_get(e, "name")), name);
    assert_int_equal(json_integer_value(json_object_get(e, "depth")), depth);
    return e;
}

static void want_median(json_t *e, int64_t *v, size_t n)
{
    char want[48], got[48];
    assert_int_equal(json_integer_value(json_object_get(e, "n")), n);
    median_str(v, n, want, sizeof want);
    assert_string_equal(num_str(json_object_get(e, "median_ns"), got, sizeof got), want);
}

/* untimed of parent: per invocation, its dur minus its children's */
static size_t untimed(const xlog *x, const char *parent, const char *const *kids, int64_t *out)
{
    int64_t p[64];
    size_t n = values(x, x->s[0].hid, parent, 0, p);
    for (int k = 0; kids[k]; k++) {
        int64_t c[64];
        assert_int_equal(values(x, x->s[0].hid, kids[k], 0, c), n);
        for (size_t i = 0; i < n; i++)
            p[i] -= c[i];
    }
    memcpy(out, p, n * sizeof *p);
    return n;
}

static void test_tree_from_depth(void **st)
{
    (void)st;
    /* pipelined: invocation 2's bind is written before invocation 1's
     * runner_run ends, and the device spans (ts=0, device clock) cannot be
     * placed by time: only depth and written order rebuild the tree */
    xlog x;
    read_fixture("spans-original-pipelined.log", &x);
    char lp[4096], *err;
    snprintf(lp, sizeof lp, "%s", ts_fixture("spans-original-pipelined.log"));
    const char *a[] = {"spans", lp, "--view", "tree", "--format", "json", NULL};
    json_t *j = run_json(a, 0, &err);
    assert_true(ts_contains(err, "4 spans of the per-task"));
    free(err);
    json_t *nodes = json_object_get(json_array_get(json_object_get(j, "callables"), 0), "nodes");
    size_t at = 0;
    int64_t v[64];
    size_t n;
    static const char *const k_root[] = {"chip.run.bind", "chip.run.runner_run", NULL};
    static const char *const k_bind[] = {"chip.run.bind.host prep", NULL};
    static const char *const k_rr[] = {"chip.run.runner_run.device_wall", NULL};
    static const char *const k_dw[] = {"chip.run.runner_run.device_wall.orch",
                                       "chip.run.runner_run.device_wall.sched", NULL};
    const char *hid = x.s[0].hid;

    json_t *root = node_after(nodes, &at, "chip.run", 0);
    n = values(&x, hid, "chip.run", 0, v);
    want_median(root, v, n);
    assert_true(json_is_null(json_object_get(root, "share")));

    json_t *bind = node_after(nodes, &at, "chip.run.bind", 1);
    n = values(&x, hid, "chip.run.bind", 0, v);
    want_median(bind, v, n);
    int64_t rv[64];
    values(&x, hid, "chip.run", 0, rv);
    char med_b[48], med_r[48], want[32], got[32];
    median_str(v, n, med_b, sizeof med_b);
    median_str(rv, n, med_r, sizeof med_r);
    snprintf(want, sizeof want, "%.4f", atof(med_b) / atof(med_r));
    snprintf(got, sizeof got, "%.4f", json_real_value(json_object_get(bind, "share")));
    assert_string_equal(got, want);

    n = values(&x, hid, "chip.run.bind.host prep", 0, v);
    want_median(node_after(nodes, &at, "chip.run.bind.host prep", 2), v, n);
    json_t *u = node_after(nodes, &at, "(untimed)", 2);
    assert_true(json_is_true(json_object_get(u, "untimed")));
    want_median(u, v, untimed(&x, "chip.run.bind", k_bind, v));

    n = values(&x, hid, "chip.run.runner_run", 0, v);
    want_median(node_after(nodes, &at, "chip.run.runner_run", 1), v, n);
    n = values(&x, hid, "chip.run.runner_run.device_wall", 0, v);
    json_t *dw = node_after(nodes, &at, "chip.run.runner_run.device_wall", 2);
    assert_string_equal(json_string_value(json_object_get(dw, "clock")), "device");
    want_median(dw, v, n);
    n = values(&x, hid, "chip.run.runner_run.device_wall.orch", 0, v);
    want_median(node_after(nodes, &at, "chip.run.runner_run.device_wall.orch", 3), v, n);
    n = values(&x, hid, "chip.run.runner_run.device_wall.sched", 0, v);
    want_median(node_after(nodes, &at, "chip.run.runner_run.device_wall.sched", 3), v, n);
    /* orch and sched overlap: the remainder is negative, and shown */
    want_median(node_after(nodes, &at, "(untimed)", 3), v, untimed(&x, "chip.run.runner_run.device_wall", k_dw, v));
    want_median(node_after(nodes, &at, "(untimed)", 2), v, untimed(&x, "chip.run.runner_run", k_rr, v));
    want_median(node_after(nodes, &at, "(untimed)", 1), v, untimed(&x, "chip.run", k_root, v));
    assert_int_equal(json_array_size(nodes), at);
    json_decref(j);
}

/* A host span that ends after its host parent (a corrupted dur, a clock
 * that went backwards) makes its share and the parent's (untimed) row
 * meaningless (538 %, -4351 ns): the tree says so, naming the line and
 * the count, and still prints. Device children that overlap each other
 * (test_tree_from_depth's fixture) are not this. */
/* A node with many children (past the eight looked at in turn, found
 * by hash): each name is one node, in the order first seen, its value per
 * invocation the sum of its spans there; in tpot too. */
static void test_tree_many_children(void **st)
{
    (void)st;
    char *log = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&log, &len);
    assert_non_null(f);
    for (int inv = 1; inv <= 2; inv++) {
        uint64_t t0 = 1000000u * (uint64_t)inv;
        for (int k = 0; k < 20; k++)
            for (int twice = 0; twice < 2; twice++)
                fprintf(f,
                        "[STRACE] v=1 pid=5 tid=5 inv=%d hid=00000000000000ab depth=1 name=child.%02d ts=%llu "
                        "dur=%d\n",
                        inv, (k * 7) % 20, (unsigned long long)(t0 + 100 * (uint64_t)(2 * k + twice)), 10 * inv + twice);
        fprintf(f, "[STRACE] v=1 pid=5 tid=5 inv=%d hid=00000000000000ab depth=0 name=chip.run ts=%llu dur=90000\n",
                inv, (unsigned long long)t0);
    }
    assert_int_equal(fclose(f), 0);
    char *p = ts_temp_file(log, len, ".log"), *err;
    free(log);
    const char *a[] = {"spans", p, "--view", "tree", "--format", "json", NULL};
    json_t *j = run_json(a, 0, &err);
    free(err);
    json_t *nodes = json_object_get(json_array_get(json_object_get(j, "callables"), 0), "nodes");
    size_t at = 0;
    node_after(nodes, &at, "chip.run", 0);
    for (int k = 0; k < 20; k++) {
        char name[16];
        snprintf(name, sizeof name, "child.%02d", (k * 7) % 20);
        json_t *e = node_after(nodes, &at, name, 1);
        /* per invocation 10 + 11 and 20 + 21: the median of 21 and 41 */
        assert_int_equal(json_integer_value(json_object_get(e, "n")), 2);
        assert_int_equal(json_integer_value(json_object_get(e, "median_ns")), 31);
    }
    json_decref(j);
    const char *b[] = {"spans", p, "--view", "tpot", "--format", "json", NULL};
    j = run_json(b, 0, &err);
    free(err);
    char *text = json_dumps(j, 0);
    for (int k = 0; k < 20; k++) {
        char name[40];
        snprintf(name, sizeof name, "\"child.%02d\"", k);
        assert_non_null(strstr(text, name));
        assert_null(strstr(strstr(text, name) + 1, name)); /* one stage a name */
    }
    free(text);
    json_decref(j);
    unlink(p);
    free(p);
}

static void test_tree_child_outside_parent(void **st)
{
    (void)st;
    char *src = ts_slurp(ts_fixture("spans-ours-2rank.log"), NULL);
    assert_non_null(src);
    char *d = strstr(src, "inv=1 hid=1111111111111111 depth=1 name=chip.run.bind ts=2000000150 dur=614 ");
    assert_non_null(d);
    memcpy(strstr(d, "dur=614 "), "dur=6140", 8); /* past chip.run's 929 */
    char *p = ts_temp_file(src, strlen(src), ".log");
    const char *a[] = {"spans", p, "--view", "tree", NULL};
    char *out, *err;
    assert_int_equal(ts_run_cli(a, &out, &err), 0);
    assert_true(ts_contains(err, ".log:3: callable 1111111111111111: 1 host span lies outside its host parent (this "
                                 "line's is the first): its share and the parent's (untimed) row do not measure what "
                                 "they say\n"));
    assert_false(ts_contains(err, "callable 2222222222222222: 1 host span"));
    assert_true(ts_contains(out, "  chip.run.bind                                      host       1              6140"));
    free(out), free(err);
    /* the JSON's warnings are every warning of the run, the view's too */
    const char *j[] = {"spans", p, "--view", "tree", "--format", "json", NULL};
    json_t *o = run_json(j, 0, &err);
    assert_true(ts_contains(err, ": 1 host span lies outside its host parent"));
    assert_true(json_warned(o, ".log:3: callable 1111111111111111: 1 host span lies outside its host parent"));
    json_decref(o);
    free(err);
    unlink(p);
    free(p);
    /* the fixture as written: no such warning */
    const char *b[] = {"spans", ts_fixture("spans-ours-2rank.log"), "--view", "tree", NULL};
    assert_int_equal(ts_run_cli(b, &out, &err), 0);
    assert_false(ts_contains(err, "outside"));
    free(out), free(err);
    free(src);
}

/* Three spans of one name in one invocation, each under the reader's
 * 2^62 ns rule, whose sum leaves the 64-bit range, and three device
 * spans likewise: the clamped sums of the next two tests. */
static const char clamped_log[] =
    "[STRACE] v=1 pid=5 tid=5 inv=1 hid=aa depth=0 name=chip.run ts=100 dur=50\n"
    "[STRACE] v=1 pid=5 tid=5 inv=2 hid=aa depth=1 name=x ts=101 dur=4000000000000000000\n"
    "[STRACE] v=1 pid=5 tid=5 inv=2 hid=aa depth=1 name=x ts=102 dur=4000000000000000000\n"
    "[STRACE] v=1 pid=5 tid=5 inv=2 hid=aa depth=1 name=x ts=103 dur=4000000000000000000\n"
    "[STRACE] v=1 pid=5 tid=5 inv=2 hid=aa depth=2 name=chip.run.runner_run.device_wall ts=1 "
    "dur=4000000000000000000 clk=dev\n"
    "[STRACE] v=1 pid=5 tid=5 inv=2 hid=aa depth=2 name=chip.run.runner_run.device_wall ts=2 "
    "dur=4000000000000000000 clk=dev\n"
    "[STRACE] v=1 pid=5 tid=5 inv=2 hid=aa depth=2 name=chip.run.runner_run.device_wall ts=3 "
    "dur=4000000000000000000 clk=dev\n"
    "[STRACE] v=1 pid=5 tid=5 inv=2 hid=aa depth=0 name=chip.run ts=100 dur=50\n";

/* Means past 2^53 ns, where a double holds no exact nanosecond, are
 * exact: the mean of two values is their median, and the trimmed mean of
 * one value is that value. As doubles they printed 2305843009213693440.0
 * for both rows (medians ...505.5 and ...504.5) and 4611686018427386880.0
 * for a round of 4611686018427387001 ns, below its own minimum. */
static void test_means_past_2_53_are_exact(void **st)
{
    (void)st;
    static const char log[] =
        "[STRACE] v=1 pid=5 tid=5 inv=1 hid=aa depth=1 name=chip.run.bind ts=100 dur=9 \n"
        "[STRACE] v=1 pid=5 tid=5 inv=1 hid=aa depth=0 name=chip.run ts=100 dur=10 \n"
        "[STRACE] v=1 pid=5 tid=5 inv=2 hid=aa depth=1 name=chip.run.bind ts=200 dur=4611686018427387000 \n"
        "[STRACE] v=1 pid=5 tid=5 inv=2 hid=aa depth=0 name=chip.run ts=200 dur=4611686018427387001 \n"
        "[STRACE] v=1 pid=6 tid=6 inv=1 hid=bb depth=1 name=chip.run.x ts=300 dur=4611686018427387003 \n"
        "[STRACE] v=1 pid=6 tid=6 inv=1 hid=bb depth=0 name=chip.run ts=300 dur=30 \n";
    char *lp = ts_temp_file(log, strlen(log), ".log"), *out, *err;
    const char *tpot[] = {"spans", lp, "--format", "csv", NULL};
    assert_int_equal(ts_run_cli(tpot, &out, &err), 0);
    assert_true(ts_contains(out, "\naa,decode,chip.run,host,0,2,10,2305843009213693505.5,4611686018427387001,"
                                 "2305843009213693505.5\n"
                                 "aa,decode,chip.run.bind,host,1,2,9,2305843009213693504.5,4611686018427387000,"
                                 "2305843009213693504.5\n"));
    free(out), free(err);
    const char *rounds[] = {"spans", lp, "--view", "rounds", "--format", "json", NULL};
    assert_int_equal(ts_run_cli(rounds, &out, &err), 0);
    assert_true(ts_contains(out, "\"trimmed_mean\": 4611686018427387001.0}"));
    free(out), free(err);
    /* an untimed remainder far below zero: its mean is exact too */
    const char *tree[] = {"spans", lp, "--view", "tree", "--format", "csv", NULL};
    assert_int_equal(ts_run_cli(tree, &out, &err), 0);
    assert_true(ts_contains(out, "\nbb,prefill,(untimed),1,,1,-4611686018427386973,-4611686018427386973.0,"));
    free(out), free(err);
    unlink(lp);
    free(lp);
}

/* A sum below 2^53 is exact as a double, but the mean is not: three
 * spans summing to 2^53 - 1 ns have the mean ...330.33, which the double
 * quotient made ...330.5. */
static void test_means_below_2_53_are_exact(void **st)
{
    (void)st;
    static const char log[] =
        "[STRACE] v=1 pid=5 tid=5 inv=1 hid=aa depth=0 name=chip.run ts=100 dur=3002399751580330\n"
        "[STRACE] v=1 pid=5 tid=5 inv=2 hid=aa depth=0 name=chip.run ts=200 dur=3002399751580330\n"
        "[STRACE] v=1 pid=5 tid=5 inv=3 hid=aa depth=0 name=chip.run ts=300 dur=3002399751580331\n";
    char *lp = ts_temp_file(log, strlen(log), ".log"), *out, *err;
    const char *a[] = {"spans", lp, "--format", "csv", NULL};
    assert_int_equal(ts_run_cli(a, &out, &err), 0);
    assert_true(ts_contains(out, "\naa,decode,chip.run,host,0,3,3002399751580330,3002399751580330,"
                                 "3002399751580331,3002399751580330.3\n"));
    free(out), free(err);
    unlink(lp);
    free(lp);
}

/* A mean that is a tie at the tenth is rounded to the even tenth on
 * both sides of the bound where the exact sum takes over from the double:
 * "%.1f" rounds 2^50 - 0.75 (a double holds it) to ...623.2, and the mean
 * 2^50 + 0.25 of a sum just past 2^53 is ...624.2, not ...624.3. */
static void test_mean_ties_round_alike_past_2_53(void **st)
{
    (void)st;
    char log[2048];
    const int64_t v = (int64_t)1 << 50;
    const int64_t below[8] = {v - 1, v - 1, v - 1, v - 1, v - 1, v - 1, v - 1, v + 1};
    const int64_t past[8] = {v, v, v, v, v, v, v, v + 2};
    const int64_t *const sets[2] = {below, past};
    const char *const want[2] = {",1125899906842623.2\n", ",1125899906842624.2\n"};
    for (int k = 0; k < 2; k++) {
        size_t n = 0;
        for (int i = 0; i < 8; i++)
            n +=
                (size_t)snprintf(log + n, sizeof log - n,
                                 "[STRACE] v=1 pid=5 tid=5 inv=%d hid=aa depth=0 name=chip.run ts=%d dur=%" PRId64 "\n",
                                 i + 1, 100 * (i + 1), sets[k][i]);
        char *lp = ts_temp_file(log, n, ".log"), *out, *err;
        const char *a[] = {"spans", lp, "--format", "csv", NULL};
        assert_int_equal(ts_run_cli(a, &out, &err), 0);
        assert_true(ts_contains(out, want[k]));
        free(out), free(err);
        unlink(lp);
        free(lp);
    }
}

/* A small mean that is a tie at the tenth the double cannot hold (1.15,
 * 1.149999... as a double) rounds to the even tenth as the large ones do:
 * "%.1f" of the quotient printed 1.1. Twenty spans of 1 ns and 2 ns,
 * summing to 23. */
static void test_small_mean_ties_round_to_even(void **st)
{
    (void)st;
    char log[4096];
    size_t n = 0;
    for (int i = 0; i < 20; i++)
        n += (size_t)snprintf(log + n, sizeof log - n,
                              "[STRACE] v=1 pid=5 tid=5 inv=%d hid=aa depth=0 name=chip.run ts=%d dur=%d\n", i + 1,
                              100 * (i + 1), i < 17 ? 1 : 2);
    char *lp = ts_temp_file(log, n, ".log"), *out, *err;
    const char *a[] = {"spans", lp, "--format", "csv", NULL};
    assert_int_equal(ts_run_cli(a, &out, &err), 0);
    if (!ts_contains(out, "\naa,decode,chip.run,host,0,20,1,1,2,1.2\n"))
        fail_msg("%s", out);
    free(out), free(err);
    unlink(lp);
    free(lp);
}

/* Each span is under the reader's 2^62 ns rule, but three absurd ones of
 * one name in one invocation add up past 2^63 - 1 ns: tpot, tree and
 * rounds show the sum clamped there, as they always did, and now say so on
 * stderr, naming the first span that passed it. Once was a silent
 * 9223372036854775807 like any other number. Counted once a sum. */
static void test_clamped_sums_warned(void **st)
{
    (void)st;
    const char *src = clamped_log;
    char *p = ts_temp_file(src, strlen(src), ".log"), *out, *err;
    const char *a[] = {"spans", p, "--view", "tpot", NULL};
    assert_int_equal(ts_run_cli(a, &out, &err), 0);
    assert_true(ts_contains(err, ".log:4: callable aa: 2 sums of one invocation's spans leave the 64-bit range (this "
                                 "line's span took the first out) and are shown clamped at its end: the log is "
                                 "corrupt\n"));
    assert_true(ts_contains(out, "9223372036854775807"));
    free(out), free(err);
    const char *b[] = {"spans", p, "--view", "tree", NULL};
    assert_int_equal(ts_run_cli(b, &out, &err), 0);
    /* x's sum, the device span's, and chip.run's untimed remainder */
    assert_true(ts_contains(err, ".log:4: callable aa: 3 sums of one invocation's spans leave the 64-bit range"));
    assert_true(ts_contains(out, "-9223372036854775808"));
    free(out), free(err);
    const char *c[] = {"spans", p, "--view", "rounds", NULL};
    assert_int_equal(ts_run_cli(c, &out, &err), 0);
    assert_true(ts_contains(err, ": callable aa: 1 round (the first pid=5 inv=2) has a device column "
                                 "whose spans add up past 2^63 - 1 ns, shown clamped there: the log is corrupt\n"));
    free(out), free(err);
    const char *cj[] = {"spans", p, "--view", "rounds", "--format", "json", NULL};
    json_t *o = run_json(cj, 0, &err);
    assert_true(json_warned(o, ": callable aa: 1 round (the first pid=5 inv=2) has a device column"));
    json_decref(o);
    free(err);
    unlink(p);
    free(p);

    /* the effective window, from orch's start to sched's end, 2^63 ns and
     * more apart: clamped and said, not left out */
    static const char win[] =
        "[STRACE] v=1 pid=5 tid=5 inv=1 hid=aa depth=0 name=chip.run ts=100 dur=50\n"
        "[STRACE] v=1 pid=5 tid=5 inv=2 hid=aa depth=3 name=chip.run.runner_run.device_wall.orch ts=1 dur=10 "
        "clk=dev\n"
        "[STRACE] v=1 pid=5 tid=5 inv=2 hid=aa depth=3 name=chip.run.runner_run.device_wall.sched "
        "ts=9300000000000000000 dur=10 clk=dev\n"
        "[STRACE] v=1 pid=5 tid=5 inv=2 hid=aa depth=0 name=chip.run ts=100 dur=50\n";
    p = ts_temp_file(win, strlen(win), ".log");
    const char *w[] = {"spans", p, "--view", "rounds", "--format", "json", NULL};
    o = run_json(w, 0, &err);
    assert_true(json_warned(o, ": callable aa: 1 round (the first pid=5 inv=2) has a device column"));
    json_t *row = json_array_get(json_object_get(o, "rounds"), 1);
    assert_non_null(row);
    assert_int_equal(json_integer_value(json_object_get(row, "effective_ns")), INT64_MAX);
    json_decref(o);
    free(err);
    unlink(p);
    free(p);
    /* A sum that leaves the range and comes back is exact, not clamped
     * (once it stayed at the clamp it had reached, and was added to
     * there): x's untimed remainder is 10 - 3 x 4e18 + 4e18 - 1. */
    static const char mixed[] =
        "[STRACE] v=1 pid=5 tid=5 inv=1 hid=aa depth=2 name=k ts=101 dur=4000000000000000000\n"
        "[STRACE] v=1 pid=5 tid=5 inv=1 hid=aa depth=2 name=k ts=102 dur=4000000000000000000\n"
        "[STRACE] v=1 pid=5 tid=5 inv=1 hid=aa depth=2 name=k ts=103 dur=4000000000000000000\n"
        "[STRACE] v=1 pid=5 tid=5 inv=1 hid=aa depth=1 name=x ts=100 dur=10\n"
        "[STRACE] v=1 pid=5 tid=5 inv=1 hid=aa depth=2 name=k ts=201 dur=1\n"
        "[STRACE] v=1 pid=5 tid=5 inv=1 hid=aa depth=1 name=x ts=200 dur=4000000000000000000\n"
        "[STRACE] v=1 pid=5 tid=5 inv=1 hid=aa depth=0 name=chip.run ts=100 dur=50\n";
    p = ts_temp_file(mixed, strlen(mixed), ".log");
    const char *e[] = {"spans", p, "--view", "tree", NULL};
    assert_int_equal(ts_run_cli(e, &out, &err), 0);
    assert_true(ts_contains(out, "    (untimed)                                                   1 -7999999999999999991 "));
    assert_true(
        ts_contains(out, "    k                                                host       1  9223372036854775807 "));
    /* k's sum alone is clamped */
    assert_true(ts_contains(err, ".log:3: callable aa: 1 sum of one invocation's spans leaves the 64-bit range"));
    free(out), free(err);
    /* sums that stay in range: no such line */
    const char *d[] = {"spans", ts_fixture("spans-ours-2rank.log"), "--view", "tree", NULL};
    assert_int_equal(ts_run_cli(d, &out, &err), 0);
    assert_false(ts_contains(err, "clamped"));
    free(out), free(err);
    unlink(p);
    free(p);
}

/* Every table's columns are as wide as their widest cell: a sum clamped
 * at 2^63 - 1 has 19 digits, a record's duration up to 20, a pid or inv
 * 20, a phase name 32 characters, more than the default widths leave room
 * for. Each such cell once pushed the columns after it out of line with
 * their header. */
static void test_tables_widen_to_the_widest_value(void **st)
{
    (void)st;
    const char *src = clamped_log;
    static const char recs[] =
        "{\"pid\": 5, \"inv\": 2, \"clock\": \"host_monotonic_ns\", \"dropped\": 0, \"records\": ["
        "{\"phase\": \"submit_task\", \"start_ns\": 0, \"end_ns\": 18446744073709551615, \"detail\": 0, "
        "\"tid\": 5}, {\"phase\": \"a_phase_name_of_thirty_two_chars\", \"start_ns\": 1, \"end_ns\": 3, "
        "\"detail\": 0, \"tid\": 5}]}\n";
    char *lp = ts_temp_file(src, strlen(src), ".log"), *rp = ts_temp_file(recs, strlen(recs), ".jsonl"), *out, *err;
    static const char *const want[][4] = {
        {"tpot",
         "stage                                        clock      n              min_ns           median_ns       "
         "       max_ns               mean_ns\n",
         "  x                                          host       1 9223372036854775807 9223372036854775807 "
         "9223372036854775807 9223372036854775807.0\n",
         "chip.run                                     host       2                  50                  50           "
         "       50                  50.0\n"},
        {"tree",
         "node                                                 clock      n            median_ns                "
         "    share\n",
         "  x                                                  host       1  9223372036854775807  "
         "18446744073709551616.0%\n",
         "  (untimed)                                                     1 -9223372036854775808 "
         "-18446744073709551616.0%\n"},
        {"rounds", "rank  pid             inv round               host_ns           device_ns  start (UTC)\n",
         "0     5                 2 2                        50 9223372036854775807  - (no clock anchor before it)\n",
         "statistic                           host_ns             device_ns\n"
         "min                                      50   9223372036854775807\n"
         "median                                   50   9223372036854775807\n"
         "trimmed mean                           50.0 9223372036854775807.0\n"},
        {"ops",
         "kind                                 count               min_ns            median_ns               "
         "p99_ns               max_ns\n",
         "submit_task                              1 18446744073709551615 18446744073709551615 18446744073709551615 "
         "18446744073709551615\n",
         "a_phase_name_of_thirty_two_chars         1                    2                    2                    2    "
         "                2\n"},
    };
    for (size_t v = 0; v < sizeof want / sizeof *want; v++) {
        const char *a[] = {"spans", lp, "--view", want[v][0], "--records", rp, NULL};
        assert_int_equal(ts_run_cli(a, &out, &err), 0);
        for (int k = 1; k < 4; k++)
            if (!ts_contains(out, want[v][k]))
                fail_msg("--view %s: no line\n%s\nin\n%s", want[v][0], want[v][k], out);
        free(out), free(err);
    }
    unlink(lp);
    free(lp);
    /* the overlap check's pairs: a pid and an inv of 20 digits */
    static const char ov[] =
        "[STRACE] v=1 pid=18446744073709551615 tid=5 inv=1 hid=aa depth=1 name=a ts=90 dur=5\n"
        "[STRACE] v=1 pid=18446744073709551615 tid=5 inv=1 hid=aa depth=1 name=b ts=100 dur=50\n"
        "[STRACE] v=1 pid=18446744073709551615 tid=5 inv=1 hid=aa depth=0 name=chip.run ts=100 dur=50\n"
        "[STRACE] v=1 pid=18446744073709551615 tid=5 inv=18446744073709551614 hid=aa depth=1 name=a ts=120 dur=50\n"
        "[STRACE] v=1 pid=18446744073709551615 tid=5 inv=18446744073709551614 hid=aa depth=1 name=b ts=180 dur=50\n"
        "[STRACE] v=1 pid=18446744073709551615 tid=5 inv=18446744073709551614 hid=aa depth=0 name=chip.run ts=120 "
        "dur=150\n";
    lp = ts_temp_file(ov, strlen(ov), ".log");
    const char *b[] = {"spans", lp, "--assert-overlap", "a,b", NULL};
    assert_int_equal(ts_run_cli(b, &out, &err), 0);
    assert_true(ts_contains(out, "\nrank  pid                     inv N              inv N+1  result\n"
                                 "0     18446744073709551615        1 18446744073709551614  ok: a starts 30 ns "
                                 "before b of N ends\n"));
    free(out), free(err);
    unlink(lp);
    free(lp);
    unlink(rp);
    free(rp);
}

/* A name that is not ASCII is padded by the columns it takes, not its
 * bytes: "测试" is six bytes and four columns, "é" (e and a combining
 * accent) three bytes and one column. The clock column once started two
 * and two columns early on such rows. */
/* A warning that counts several spans names the earliest line in the
 * log, not the first of pid order: here pid 100's come after the others'. */
static void test_warnings_name_the_earliest_line(void **st)
{
    (void)st;
    static const char text[] = "[STRACE] v=1 pid=200 tid=1 inv=1 hid=aa depth=1 name=chip.run.bind ts=50 dur=500\n"
                               "[STRACE] v=1 pid=200 tid=1 inv=1 hid=aa depth=0 name=chip.run ts=100 dur=100\n"
                               "[STRACE] v=1 pid=100 tid=1 inv=1 hid=aa depth=1 name=chip.run.bind ts=50 dur=500\n"
                               "[STRACE] v=1 pid=100 tid=1 inv=1 hid=aa depth=0 name=chip.run ts=100 dur=100\n"
                               "[STRACE] v=1 pid=300 tid=1 inv=1 hid=cc depth=1 name=y ts=1 dur=1\n"
                               "[STRACE] v=1 pid=300 tid=1 inv=1 hid=dd depth=0 name=chip.run ts=1 dur=5\n"
                               "[STRACE] v=1 pid=100 tid=1 inv=3 hid=cc depth=1 name=y ts=1 dur=1\n"
                               "[STRACE] v=1 pid=100 tid=1 inv=3 hid=dd depth=0 name=chip.run ts=1 dur=5\n"
                               "[STRACE] v=1 pid=400 tid=1 inv=1 hid=aa depth=1 name=z ts=1 dur=1\n"
                               "[STRACE] v=1 pid=100 tid=1 inv=4 hid=aa depth=1 name=z ts=1 dur=1\n";
    char *log = ts_temp_file(text, strlen(text), ".log"), *out, *err;
    const char *a[] = {"spans", log, "--view", "tree", NULL};
    assert_int_equal(ts_run_cli(a, &out, &err), 0);
    assert_true(ts_contains(err, ".log:1: callable aa: 2 host spans lie outside their host parent"));
    assert_true(ts_contains(err, ".log:9: invocation pid=400 inv=1 has no depth-0 span (chip.run)\n"));
    assert_true(ts_contains(err, ".log:5: invocation pid=300 inv=1 has spans of another hid (cc)"));
    free(out), free(err);
    unlink(log);
    free(log);
    static const char sums[] = "[STRACE] v=1 pid=200 tid=1 inv=1 hid=aa depth=0 name=x ts=1 dur=4000000000000000000\n"
                               "[STRACE] v=1 pid=200 tid=1 inv=1 hid=aa depth=0 name=x ts=2 dur=4000000000000000000\n"
                               "[STRACE] v=1 pid=200 tid=1 inv=1 hid=aa depth=0 name=x ts=3 dur=4000000000000000000\n"
                               "[STRACE] v=1 pid=100 tid=1 inv=1 hid=aa depth=0 name=x ts=1 dur=4000000000000000000\n"
                               "[STRACE] v=1 pid=100 tid=1 inv=1 hid=aa depth=0 name=x ts=2 dur=4000000000000000000\n"
                               "[STRACE] v=1 pid=100 tid=1 inv=1 hid=aa depth=0 name=x ts=3 dur=4000000000000000000\n";
    log = ts_temp_file(sums, strlen(sums), ".log");
    a[1] = log;
    a[3] = "tpot";
    assert_int_equal(ts_run_cli(a, &out, &err), 0);
    assert_true(ts_contains(err, ".log:3: callable aa: 2 sums of one invocation's spans leave the 64-bit range"));
    free(out), free(err);
    unlink(log);
    free(log);
}

static void test_table_aligns_utf8_names(void **st)
{
    (void)st;
    static const char src[] =
        "[STRACE] v=1 pid=5 tid=5 inv=1 hid=aa depth=1 name=%E6%B5%8B%E8%AF%95 ts=101 dur=10\n"
        "[STRACE] v=1 pid=5 tid=5 inv=1 hid=aa depth=1 name=e%CC%81 ts=111 dur=10\n"
        "[STRACE] v=1 pid=5 tid=5 inv=1 hid=aa depth=0 name=chip.run ts=100 dur=50\n";
    char *p = ts_temp_file(src, strlen(src), ".log"), *out, *err;
    const char *a[] = {"spans", p, "--view", "tree", NULL};
    assert_int_equal(ts_run_cli(a, &out, &err), 0);
    assert_true(ts_contains(out, "\n  \xe6\xb5\x8b\xe8\xaf\x95" "                                               host "));
    assert_true(ts_contains(out, "\n  e\xcc\x81" "                                                  host "));
    assert_true(ts_contains(out, "\nchip.run                                             host "));
    free(out), free(err);
    const char *b[] = {"spans", p, "--view", "tpot", NULL};
    assert_int_equal(ts_run_cli(b, &out, &err), 0);
    assert_true(ts_contains(out, "\n  \xe6\xb5\x8b\xe8\xaf\x95" "                                       host "));
    assert_true(ts_contains(out, "\nchip.run                                     host "));
    free(out), free(err);
    unlink(p);
    free(p);
    /* bytes that start no well-formed character (an overlong '/', an
     * overlong 3-byte form, past U+10FFFF) are a '?' and a column each:
     * the padding once took each such sequence for one character, and
     * the bytes once reached the terminal as they were */
    static const char bad[] = "[STRACE] v=1 pid=5 tid=5 inv=1 hid=aa depth=1 name=a%C0%AFb ts=101 dur=10\n"
                              "[STRACE] v=1 pid=5 tid=5 inv=1 hid=aa depth=1 name=c%E0%80%AFd ts=102 dur=10\n"
                              "[STRACE] v=1 pid=5 tid=5 inv=1 hid=aa depth=1 name=e%F4%90%80%80f ts=103 dur=10\n"
                              "[STRACE] v=1 pid=5 tid=5 inv=1 hid=aa depth=0 name=chip.run ts=100 dur=50\n";
    p = ts_temp_file(bad, strlen(bad), ".log");
    const char *d[] = {"spans", p, "--view", "tree", NULL};
    assert_int_equal(ts_run_cli(d, &out, &err), 0);
    assert_true(ts_contains(out, "\n  a??b                                               host "));
    assert_true(ts_contains(out, "\n  c???d                                              host "));
    assert_true(ts_contains(out, "\n  e????f                                             host "));
    free(out), free(err);
    unlink(p);
    free(p);
    /* a C1 control in a name (CSI, as UTF-8) is one '?' and one column */
    static const char c1[] = "[STRACE] v=1 pid=5 tid=5 inv=1 hid=aa depth=1 name=a%C2%9B2Jb ts=101 dur=10\n"
                             "[STRACE] v=1 pid=5 tid=5 inv=1 hid=aa depth=0 name=chip.run ts=100 dur=50\n";
    p = ts_temp_file(c1, strlen(c1), ".log");
    const char *c[] = {"spans", p, "--view", "tree", NULL};
    assert_int_equal(ts_run_cli(c, &out, &err), 0);
    assert_true(ts_contains(out, "\n  a?2Jb                                              host "));
    assert_null(strstr(out, "\xc2\x9b"));
    free(out), free(err);
    unlink(p);
    free(p);
}

/* A name encoded otherwise than a writer of the format encodes it
 * ("chip.run.bin%64", a lowercase %2f) is the name it decodes to: one
 * row with the other spans of that name, and matched by --assert-overlap,
 * where it once made a row of its own under the same shown name. */
static void test_one_name_one_row(void **st)
{
    (void)st;
    static const char src[] =
        "[mono_ns=1][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=5 tid=5 inv=1 hid=aa depth=1 "
        "name=chip.run.bind ts=100 dur=10\n"
        "[mono_ns=1][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=5 tid=5 inv=1 hid=aa depth=0 name=chip.run "
        "ts=90 dur=30\n"
        "[mono_ns=1][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=5 tid=5 inv=2 hid=aa depth=1 "
        "name=chip.run.bin%64 ts=200 dur=12\n"
        "[mono_ns=1][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=5 tid=5 inv=2 hid=aa depth=0 name=chip.run "
        "ts=190 dur=30\n";
    char *p = ts_temp_file(src, strlen(src), ".log"), *out, *err;
    const char *a[] = {"spans", p, "--view", "tree", NULL};
    assert_int_equal(ts_run_cli(a, &out, &err), 0);
    assert_true(ts_contains(out, "\n  chip.run.bind                                      host       2"));
    assert_false(ts_contains(out, "host       1"));
    free(out), free(err);
    const char *b[] = {"spans", p, "--assert-overlap", "chip.run.bind,chip.run", NULL};
    assert_int_equal(ts_run_cli(b, &out, &err), 1);
    assert_true(ts_contains(out, "chip.run.bind of inv 2 starts at 200, not before chip.run of inv 1 ends at 120"));
    free(out), free(err);
    unlink(p);
    free(p);
}

/* --- the overlap assertion ---------------------------------------------------------- */

static void test_overlap_holds_when_pipelined(void **st)
{
    (void)st;
    char lp[4096], *out, *err;
    snprintf(lp, sizeof lp, "%s", ts_fixture("spans-original-pipelined.log"));
    const char *a[] = {"spans", lp, "--assert-overlap", "chip.run.bind,chip.run.runner_run", "--hidden", NULL};
    assert_int_equal(ts_run_cli(a, &out, &err), 0);
    /* the pairs checked: each with how far A starts before B ends */
    xlog x;
    read_fixture("spans-original-pipelined.log", &x);
    for (uint64_t i = 1; i < 4; i++) {
        const xspan *bn = find_span(&x, 7001, i + 1, "chip.run.bind");
        const xspan *rp = find_span(&x, 7001, i, "chip.run.runner_run");
        char want[160];
        snprintf(want, sizeof want, "%" PRIu64 "  ok: chip.run.bind starts %" PRIu64 " ns before", i + 1,
                 rp->ts + rp->dur - bn->ts);
        assert_true(ts_contains(out, want));
    }
    assert_true(ts_contains(err, "overlap held for all 3 pairs"));
    free(out);
    free(err);
}

/* One pair checked is said in the singular: once "all 1 pairs". */
static void test_overlap_holds_for_one_pair(void **st)
{
    (void)st;
    static const char src[] = "[STRACE] v=1 pid=5 tid=5 inv=1 hid=aa depth=1 name=chip.run.bind ts=100 dur=10\n"
                              "[STRACE] v=1 pid=5 tid=5 inv=1 hid=aa depth=1 name=chip.run.runner_run ts=110 dur=50\n"
                              "[STRACE] v=1 pid=5 tid=5 inv=1 hid=aa depth=0 name=chip.run ts=100 dur=60\n"
                              "[STRACE] v=1 pid=5 tid=5 inv=2 hid=aa depth=1 name=chip.run.bind ts=150 dur=10\n"
                              "[STRACE] v=1 pid=5 tid=5 inv=2 hid=aa depth=1 name=chip.run.runner_run ts=160 dur=50\n"
                              "[STRACE] v=1 pid=5 tid=5 inv=2 hid=aa depth=0 name=chip.run ts=150 dur=60\n";
    char *p = ts_temp_file(src, strlen(src), ".log"), *out, *err;
    const char *a[] = {"spans", p, "--assert-overlap", "chip.run.bind,chip.run.runner_run", NULL};
    assert_int_equal(ts_run_cli(a, &out, &err), 0);
    assert_string_equal(err, "hbg spans: overlap held for the one pair\n");
    free(out), free(err);
    unlink(p);
    free(p);
}

/* --assert-overlap's names as typed reach the table and stderr masked:
 * once an escape in A went to the terminal as it was. */
static void test_overlap_names_masked(void **st)
{
    (void)st;
    const char *a[] = {"spans", ts_fixture("spans-ours-2rank.log"), "--assert-overlap",
                       "chip.run.bind\033[31m,chip.run", NULL};
    char *out, *err;
    assert_int_equal(ts_run_cli(a, &out, &err), 1);
    assert_true(ts_contains(out, "overlap: chip.run.bind?[31m of invocation N+1 against chip.run of invocation N"));
    assert_true(ts_contains(err, "have both chip.run.bind?[31m and chip.run: nothing to check\n"));
    assert_null(strchr(out, '\033'));
    assert_null(strchr(err, '\033'));
    free(out), free(err);
}

static void test_overlap_fails_naming_the_pair(void **st)
{
    (void)st;
    char lp[4096], *out, *err;
    snprintf(lp, sizeof lp, "%s", ts_fixture("spans-ours-2rank.log"));
    const char *a[] = {"spans", lp, "--assert-overlap", "chip.run.bind,chip.run.runner_run", NULL};
    assert_int_equal(ts_run_cli(a, &out, &err), 1);
    xlog x;
    read_fixture("spans-ours-2rank.log", &x);
    const xspan *bn = find_span(&x, 5100, 2, "chip.run.bind");
    const xspan *rp = find_span(&x, 5100, 1, "chip.run.runner_run");
    char want[256];
    snprintf(want, sizeof want,
             "overlap assertion failed: rank 0 (pid 5100) inv 1 -> 2: chip.run.bind of inv 2 starts at %" PRIu64
             ", not before chip.run.runner_run of inv 1 ends at %" PRIu64,
             bn->ts, rp->ts + rp->dur);
    assert_true(ts_contains(err, want));
    /* every pair is listed, both ranks': 3 of rank 0, 2 of rank 1 */
    size_t nfail = 0;
    for (const char *p = strstr(out, "  FAILED: "); p; p = strstr(p + 1, "  FAILED: "))
        nfail++;
    assert_int_equal(nfail, 5);
    assert_true(ts_contains(out, "chip.run.bind of inv 3 starts at"));
    free(out);
    free(err);

    /* not hidden: A running past B's end fails only with --hidden */
    snprintf(lp, sizeof lp, "%s", ts_fixture("spans-original-pipelined.log"));
    const char *b[] = {"spans", lp, "--assert-overlap", "chip.run,chip.run.runner_run", "--hidden", NULL};
    assert_int_equal(ts_run_cli(b, &out, &err), 1);
    assert_true(ts_contains(err, ": not hidden"));
    free(out);
    free(err);
    const char *c[] = {"spans", lp, "--assert-overlap", "chip.run,chip.run.runner_run", NULL};
    assert_int_equal(ts_run_cli(c, &out, &err), 0);
    free(out);
    free(err);
    json_t *j;

    /* a device-clock span has no place on the host axis: refused */
    const char *d[] = {"spans", lp, "--assert-overlap", "chip.run.bind,chip.run.runner_run.device_wall", NULL};
    assert_int_equal(ts_run_cli(d, &out, &err), 2);
    assert_true(ts_contains(err, "chip.run.runner_run.device_wall is a device-clock span"));
    free(out);
    free(err);
    /* JSON has the figures the table and the CSV show: each pair's
     * span ends, so an ok pair's margin too */
    const char *g[] = {"spans", lp, "--assert-overlap", "chip.run.bind,chip.run.runner_run", "--format", "json", NULL};
    j = run_json(g, 0, &err);
    free(err);
    json_t *pairs = json_object_get(j, "pairs");
    assert_int_equal(json_array_size(pairs), 3);
    read_fixture("spans-original-pipelined.log", &x);
    for (size_t i = 0; i < 3; i++) {
        json_t *pr = json_array_get(pairs, i);
        uint64_t pi = (uint64_t)json_integer_value(json_object_get(pr, "prev_inv"));
        const xspan *an = find_span(&x, 7001, pi + 1, "chip.run.bind");
        const xspan *bp = find_span(&x, 7001, pi, "chip.run.runner_run");
        const xspan *bn2 = find_span(&x, 7001, pi + 1, "chip.run.runner_run");
        assert_int_equal(json_integer_value(json_object_get(pr, "a_start")), an->ts);
        assert_int_equal(json_integer_value(json_object_get(pr, "a_end")), an->ts + an->dur);
        assert_int_equal(json_integer_value(json_object_get(pr, "b_start")), bp->ts);
        assert_int_equal(json_integer_value(json_object_get(pr, "b_end")), bp->ts + bp->dur);
        assert_int_equal(json_integer_value(json_object_get(pr, "next_b_start")), bn2->ts);
    }
    json_decref(j);
    /* the pairs are printed instead of a view: a view or records named
     * beside the check are refused, not left unshown */
    const char *recs = ts_fixture("hbg-run-vector-timeline.host_phase_records.jsonl");
    const char *const both[][8] = {
        {"spans", lp, "--view", "tree", "--assert-overlap", "chip.run.bind,chip.run.runner_run", NULL},
        {"spans", lp, "--assert-overlap", "chip.run.bind,chip.run.runner_run", "--records", recs, NULL},
    };
    const char *what[] = {"--view", "--records"};
    for (int k = 0; k < 2; k++) {
        char want[256];
        assert_int_equal(ts_run_cli(both[k], &out, &err), 2);
        snprintf(want, sizeof want,
                 "hbg spans: --assert-overlap prints its pairs instead of a view; %s does not "
                 "apply to it (see `hbg spans --help`)\n",
                 what[k]);
        assert_string_equal(err, want);
        assert_string_equal(out, "");
        free(out), free(err);
    }
    /* names no invocation has: nothing to check */
    const char *e[] = {"spans", lp, "--assert-overlap", "chip.run.bind,nope", "--format", "json", NULL};
    j = run_json(e, 1, &err);
    assert_int_equal(json_integer_value(json_object_get(j, "missing")), 4);
    assert_true(ts_contains(err, "nothing to check"));
    json_decref(j);
    free(err);
}

/* --- per-operation tails ---------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void test_ops_tails(void **st)
{
    (void)st;
    const char *logname = "hbg-run-vector-timeline.log";
    const char *recname = "hbg-run-vector-timeline.host_phase_records.jsonl";
    char lp[4096], rp[4096], *err;
    snprintf(lp, sizeof lp, "%s", ts_fixture(logname));
    snprintf(rp, sizeof rp, "%s", ts_fixture(recname));
    const char *a[] = {"spans", lp, "--records", rp, "--format", "json", NULL};
    json_t *j = run_json(a, 0, &err);
    free(err);
    json_t *ops = json_object_get(j, "operations");
    assert_non_null(ops);

    /* host_orch of each (pid, inv), from the log's own lines */
    char *text = ts_slurp(lp, NULL);
    uint64_t hp[16], hi[16], h0[16], hd[16];
    size_t nh = 0;
    for (char *p = strstr(text, "bind phase=host_orch "); p; p = strstr(p + 1, "bind phase=host_orch ")) {
        assert_int_equal(sscanf(p, "bind phase=host_orch start_ns=%" SCNu64 " dur_ns=%" SCNu64, &h0[nh], &hd[nh]), 2);
        char *q = strstr(p, " pid=");
        assert_int_equal(sscanf(q, " pid=%" SCNu64 " inv=%" SCNu64, &hp[nh], &hi[nh]), 2);
        nh++;
    }
    free(text);
    /* the records: per phase durations, and each line's covered part of host_orch */
    char *rtext = ts_slurp(rp, NULL);
    uint64_t orch = 0, unc = 0;
    size_t lines = 0;
    uint64_t d_submit[4096];
    size_t ns = 0;
    for (char *l = strtok(rtext, "\n"); l; l = strtok(NULL, "\n")) {
        json_t *o = json_loads(l, 0, NULL);
        assert_non_null(o);
        lines++;
        uint64_t pid = (uint64_t)json_integer_value(json_object_get(o, "pid"));
        uint64_t inv = (uint64_t)json_integer_value(json_object_get(o, "inv"));
        size_t h = 0;
        while (h < nh && !(hp[h] == pid && hi[h] == inv))
            h++;
        assert_true(h < nh);
        /* covered: a bitmap of host_orch's nanoseconds (the fixture's are short) */
        assert_true(hd[h] < 4000000);
        unsigned char *cov = calloc(hd[h], 1);
        size_t i;
        json_t *r;
        json_array_foreach(json_object_get(o, "records"), i, r)
        {
            const char *ph = json_string_value(json_object_get(r, "phase"));
            uint64_t s = (uint64_t)json_integer_value(json_object_get(r, "start_ns"));
            uint64_t e = (uint64_t)json_integer_value(json_object_get(r, "end_ns"));
            if (!strcmp(ph, "submit_task"))
                d_submit[ns++] = e - s;
            if (strcmp(ph, "submit_task") && strcmp(ph, "alloc_tensors") && strcmp(ph, "record_node") &&
                strcmp(ph, "graph_submit") && strcmp(ph, "build_definition"))
                continue;
            for (uint64_t t = s; t < e; t++)
                if (t >= h0[h] && t < h0[h] + hd[h])
                    cov[t - h0[h]] = 1;
        }
        uint64_t c = 0;
        for (uint64_t t = 0; t < hd[h]; t++)
            c += cov[t];
        free(cov);
        orch += hd[h];
        unc += hd[h] - c;
        json_decref(o);
    }
    free(rtext);
    assert_int_equal(json_integer_value(json_object_get(ops, "lines")), lines);
    assert_int_equal(json_integer_value(json_object_get(ops, "passes")), lines);
    assert_int_equal(json_integer_value(json_object_get(ops, "host_orch_ns")), orch);
    assert_int_equal(json_integer_value(json_object_get(ops, "uncovered_ns")), unc);
    json_t *k = by_name(json_object_get(ops, "kinds"), "kind", "submit_task");
    assert_non_null(k);
    qsort(d_submit, ns, sizeof *d_submit, cmp_u64);
    assert_int_equal(json_integer_value(json_object_get(k, "count")), ns);
    assert_int_equal(json_integer_value(json_object_get(k, "min_ns")), d_submit[0]);
    assert_int_equal(json_integer_value(json_object_get(k, "max_ns")), d_submit[ns - 1]);
    assert_int_equal(json_integer_value(json_object_get(k, "p99_ns")), d_submit[(ns * 99 + 99) / 100 - 1]);
    json_decref(j);

    /* CSV carries one table: the tails come with --view ops */
    char *out;
    const char *b[] = {"spans", lp, "--records", rp, "--view", "ops", "--format", "csv", NULL};
    assert_int_equal(ts_run_cli(b, &out, &err), 0);
    assert_true(!strncmp(out, "kind,count,min_ns,median_ns,p99_ns,max_ns\n", 42));
    assert_true(ts_contains(out, "\nsubmit_task,"));
    free(out);
    free(err);
}

/* The tails hold the records lines the reader kept: a second line of one
 * pass and a line past the schema are skipped, with warnings, and neither
 * their records nor a phase name only they carry enter a kind's row. */
static void test_ops_tails_of_lines_kept(void **st)
{
    (void)st;
    static const char recs[] =
        "{\"pid\": 4001, \"inv\": 2, \"clock\": \"host_monotonic_ns\", \"dropped\": 0, \"records\": ["
        "{\"phase\": \"submit_task\", \"start_ns\": 6000000139400, \"end_ns\": 6000000139500, \"detail\": 0, "
        "\"tid\": 4011}, {\"phase\": \"submit_task\", \"start_ns\": 6000000139600, \"end_ns\": 6000000139700, "
        "\"detail\": 1, \"tid\": 4011}]}\n"
        "{\"pid\": 4001, \"inv\": 2, \"clock\": \"host_monotonic_ns\", \"dropped\": 0, \"records\": ["
        "{\"phase\": \"submit_task\", \"start_ns\": 6000000139400, \"end_ns\": 6000000139900, \"detail\": 0, "
        "\"tid\": 4011}, {\"phase\": \"twice_only\", \"start_ns\": 6000000139600, \"end_ns\": 6000000139700, "
        "\"detail\": 1, \"tid\": 4011}]}\n"
        "{\"pid\": 4002, \"inv\": 2, \"clock\": \"host_monotonic_ns\", \"dropped\": 0, \"records\": ["
        "{\"phase\": \"skipped_only\", \"start_ns\": 6000000139400, \"end_ns\": 6000000139500, \"detail\": 0, "
        "\"tid\": 4021}, {\"phase\": \"submit_task\", \"start_ns\": 5, \"end_ns\": 1, \"detail\": 0, "
        "\"tid\": 4021}]}\n";
    char lp[4096], *err;
    snprintf(lp, sizeof lp, "%s", ts_fixture("original-2rank-interleaved.log"));
    char *rp = ts_temp_file(recs, strlen(recs), ".jsonl");
    const char *a[] = {"spans", lp, "--view", "ops", "--records", rp, "--format", "json", NULL};
    json_t *j = run_json(a, 0, &err);
    assert_true(ts_contains(err, ":2: a second records line for pid=4001 inv=2 (the first is line 1); line skipped"));
    assert_true(ts_contains(err, ":3: record 1 ends before it starts; line skipped"));
    free(err);
    json_t *ops = json_object_get(j, "operations");
    assert_int_equal(json_integer_value(json_object_get(ops, "lines")), 1);
    json_t *kinds = json_object_get(ops, "kinds");
    assert_int_equal(json_array_size(kinds), 1);
    json_t *k = by_name(kinds, "kind", "submit_task");
    assert_non_null(k);
    assert_int_equal(json_integer_value(json_object_get(k, "count")), 2);
    assert_int_equal(json_integer_value(json_object_get(k, "max_ns")), 100);
    json_decref(j);
    unlink(rp);
    free(rp);
}

/* One file names at most RC_MAX_PHASES phases; files together may name
 * more, each a kind of its own (they once ran out of room, and the
 * command said it was out of memory). */
static void test_ops_kinds_of_many_files(void **st)
{
    (void)st;
    char lp[4096], *rp[2], *err;
    snprintf(lp, sizeof lp, "%s", ts_fixture("spans-ours-2rank.log"));
    for (int f = 0; f < 2; f++) {
        char line[8192];
        int n = snprintf(line, sizeof line,
                         "{\"pid\": 9, \"inv\": %d, \"clock\": \"host_monotonic_ns\", \"dropped\": 0, \"records\": [",
                         f + 1);
        for (int k = 0; k < 40; k++)
            n += snprintf(line + n, sizeof line - (size_t)n,
                          "%s{\"phase\": \"p%d_%d\", \"start_ns\": 1, \"end_ns\": %d, \"detail\": 0, \"tid\": 1}",
                          k ? ", " : "", f, k, 2 + k);
        n += snprintf(line + n, sizeof line - (size_t)n, "]}\n");
        rp[f] = ts_temp_file(line, (size_t)n, ".jsonl");
    }
    const char *a[] = {"spans", lp, "--view", "ops", "--records", rp[0], "--records", rp[1], "--format", "json", NULL};
    json_t *j = run_json(a, 0, &err);
    assert_false(ts_contains(err, "out of memory"));
    free(err);
    json_t *kinds = json_object_get(json_object_get(j, "operations"), "kinds");
    assert_int_equal(json_array_size(kinds), 80);
    json_t *k = by_name(kinds, "kind", "p1_39");
    assert_non_null(k);
    assert_int_equal(json_integer_value(json_object_get(k, "max_ns")), 40);
    json_decref(j);
    for (int f = 0; f < 2; f++) {
        unlink(rp[f]);
        free(rp[f]);
    }
}

/* Records lines that join no pass are named per file, at each file's
 * first such line: a count of them alone once named no file, and a user
 * with several records files could not tell which held them. */
static void test_unjoined_lines_named_per_file(void **st)
{
    (void)st;
    static const char joined[] =
        "{\"pid\": 31337, \"inv\": 1, \"clock\": \"host_monotonic_ns\", \"dropped\": 0, \"records\": []}\n";
    static const char a_text[] =
        "{\"pid\": 9, \"inv\": 1, \"clock\": \"host_monotonic_ns\", \"dropped\": 0, \"records\": []}\n"
        "{\"pid\": 9, \"inv\": 2, \"clock\": \"host_monotonic_ns\", \"dropped\": 0, \"records\": []}\n";
    static const char b_text[] =
        "{\"pid\": 9, \"inv\": 3, \"clock\": \"host_monotonic_ns\", \"dropped\": 0, \"records\": []}\n";
    char a_all[512];
    snprintf(a_all, sizeof a_all, "%s%s", joined, a_text);
    char *ra = ts_temp_file(a_all, strlen(a_all), ".jsonl"), *rb = ts_temp_file(b_text, strlen(b_text), ".jsonl");
    char lp[4096], want[16384], *err;
    snprintf(lp, sizeof lp, "%s", ts_fixture("original-grammar-2rank-3round.log"));
    const char *a[] = {"spans", lp, "--view", "ops", "--records", ra, "--records", rb, "--format", "json", NULL};
    json_t *j = run_json(a, 0, &err);
    snprintf(want, sizeof want,
             "hbg spans: warning: %s:2: 2 records lines join no bind pass with host_orch in %s (this line's, pid=9 "
             "inv=1, is the first); their operations count in the tails only\n"
             "hbg spans: warning: %s:1: pid=9 inv=3 joins no bind pass with host_orch in %s; its operations count "
             "in the tails only\n",
             ra, lp, rb, lp);
    if (!ts_contains(err, want))
        fail_msg("%s", err);
    assert_int_equal(json_array_size(json_object_get(j, "warnings")), 2);
    json_t *ops = json_object_get(j, "operations");
    assert_int_equal(json_integer_value(json_object_get(ops, "lines")), 4);
    assert_int_equal(json_integer_value(json_object_get(ops, "passes")), 1);
    json_decref(j);
    free(err);
    for (int f = 0; f < 2; f++) {
        unlink(f ? rb : ra);
        free(f ? rb : ra);
    }
}

/* The passes' host_orch, each under 2^62 ns, summed over five passes
 * leaves 64 bits: the sum is shown clamped at 2^64 - 1 and a warning names
 * the records line whose pass took it past; the share no record covers
 * is of the exact sums. Once the sum wrapped, silently, to a small figure,
 * and the share was 965.8 %. */
static void test_ops_orch_sum_clamped(void **st)
{
    (void)st;
    char log[4096], recs[4096], want[8192], *out, *err;
    size_t nl = 0, nr = 0;
    for (int i = 1; i <= 5; i++) {
        nl += (size_t)snprintf(log + nl, sizeof log - nl,
                               "[mono_ns=1][T0x1][TIMING] bind_trace_end: [bind_trace.c:212] bind phase=host_orch "
                               "start_ns=1000 dur_ns=4000000000000000000 pid=7 inv=%d\n"
                               "[mono_ns=1][T0x1][TIMING] bind_trace_end: [bind_trace.c:212] bind phase=arena_h2d "
                               "start_ns=4000000000000001000 dur_ns=1 pid=7 inv=%d\n",
                               i, i);
        nr += (size_t)snprintf(recs + nr, sizeof recs - nr,
                               "{\"pid\": 7, \"inv\": %d, \"clock\": \"host_monotonic_ns\", \"dropped\": 0, "
                               "\"records\": [{\"phase\": \"submit_task\", \"start_ns\": 1000, \"end_ns\": "
                               "1000000000000001000, \"detail\": 0, \"tid\": 7}]}\n",
                               i);
    }
    char *lp = ts_temp_file(log, nl, ".log"), *rp = ts_temp_file(recs, nr, ".jsonl");
    const char *a[] = {"spans", lp, "--view", "ops", "--records", rp, "--format", "json", NULL};
    assert_int_equal(ts_run_cli(a, &out, &err), 0);
    snprintf(want, sizeof want,
             "hbg spans: warning: %s:5: the host_orch of the passes the records join adds up past 2^64 - 1 ns (this "
             "line's pass took it past) and is shown clamped there: the log is corrupt\n",
             rp);
    if (!ts_contains(err, want))
        fail_msg("%s", err);
    /* figures past jansson's int64, read as written */
    if (!ts_contains(out, "\"passes\": 5, \"host_orch_ns\": 18446744073709551615, \"uncovered_ns\": "
                          "15000000000000000000, \"uncovered_share\": 0.7500, "))
        fail_msg("%s", out);
    free(out), free(err);
    const char *b[] = {"spans", lp, "--view", "ops", "--records", rp, NULL};
    assert_int_equal(ts_run_cli(b, &out, &err), 0);
    if (!ts_contains(out, "host_orch not covered by any operation record: 15000000000000000000 of "
                          "18446744073709551615 ns (75.0%)\n"))
        fail_msg("%s", out);
    free(out), free(err);
    unlink(lp), unlink(rp);
    free(lp), free(rp);
}

/* The records join takes a pass whatever its defects: a warning about one
 * says what the join does with it. It once said "excluded", as hbg
 * phases' statistics do, of a pass whose records line joined it all the
 * same and counted in the share of host_orch no record covers. */
static void test_defective_passes_said_kept_or_unjoined(void **st)
{
    (void)st;
    static const char log[] =
        "[mono_ns=1][T0x1][TIMING] bind_trace_end: [bind_trace.c:212] bind phase=host_orch start_ns=1000 "
        "dur_ns=100 pid=7 inv=1\n"
        "[mono_ns=1][T0x1][TIMING] bind_trace_end: [bind_trace.c:212] bind phase=arena_h2d start_ns=1100 "
        "dur_ns=10 pid=7 inv=1\n"
        "[mono_ns=1][T0x1][TIMING] bind_trace_end: [bind_trace.c:212] bind phase=host_orch start_ns=2000 "
        "dur_ns=100 pid=7 inv=2\n"
        "[mono_ns=1][T0x1][TIMING] bind_trace_end: [bind_trace.c:212] bind phase=arena_h2d start_ns=2100 "
        "dur_ns=10 pid=7 inv=2\n"
        "[mono_ns=1][T0x1][TIMING] bind_trace_end: [bind_trace.c:212] bind phase=arena_h2d start_ns=2110 "
        "dur_ns=10 pid=7 inv=2\n"
        "[mono_ns=1][T0x1][TIMING] bind_trace_end: [bind_trace.c:212] bind phase=arena_h2d start_ns=3100 "
        "dur_ns=10 pid=7 inv=3\n";
    char recs[2048], want[8192], *out, *err;
    size_t nr = 0;
    for (int i = 1; i <= 3; i++)
        nr += (size_t)snprintf(recs + nr, sizeof recs - nr,
                               "{\"pid\": 7, \"inv\": %d, \"clock\": \"host_monotonic_ns\", \"dropped\": 0, "
                               "\"records\": [{\"phase\": \"submit_task\", \"start_ns\": %d, \"end_ns\": %d, "
                               "\"detail\": 0, \"tid\": 7}]}\n",
                               i, i * 1000, i * 1000 + 50);
    char *lp = ts_temp_file(log, strlen(log), ".log"), *rp = ts_temp_file(recs, nr, ".jsonl");
    const char *a[] = {"spans", lp, "--view", "ops", "--records", rp, "--format", "json", NULL};
    assert_int_equal(ts_run_cli(a, &out, &err), 0);
    snprintf(want, sizeof want,
             "hbg spans: warning: %s:5: segment arena_h2d appears twice in pass pid=7 inv=2 (first at line 4); "
             "kept: its records line joins it as any pass's\n"
             "hbg spans: warning: %s:6: pass pid=7 inv=3 has no host_orch (no control-plane total without it); no "
             "records line joins it (it has no host_orch): its operations count in the tails only\n",
             lp, lp);
    if (!ts_contains(err, want))
        fail_msg("%s", err);
    assert_false(ts_contains(err, "excluded"));
    /* the pass said kept is joined: two passes, 50 of their 200 ns covered */
    if (!ts_contains(out, "\"passes\": 2, \"host_orch_ns\": 200, \"uncovered_ns\": 100, "))
        fail_msg("%s", out);
    free(out), free(err);
    unlink(lp), unlink(rp);
    free(lp), free(rp);
}

/* A records file an editor saved, with a UTF-8 byte order mark and CRLF
 * line ends, gives the tails the runtime's file gives, and no warning:
 * the mark once made its first line "not a JSON object" and one "cut" at
 * its {"pid": (a writer killed mid-line), two warnings that were neither. */
static void test_records_with_a_byte_order_mark(void **st)
{
    (void)st;
    char lp[4096], rp[4096], *out, *err, *out2, *err2;
    snprintf(lp, sizeof lp, "%s", ts_fixture("original-grammar-2rank-3round.log"));
    snprintf(rp, sizeof rp, "%s", ts_fixture("original-grammar-2rank-3round.host_phase_records.jsonl"));
    size_t n;
    char *text = ts_slurp(rp, &n);
    assert_non_null(text);
    char *edited = malloc(3 + 2 * n);
    assert_non_null(edited);
    size_t k = 3;
    memcpy(edited, "\xef\xbb\xbf", 3);
    for (size_t i = 0; i < n; i++) {
        if (text[i] == '\n')
            edited[k++] = '\r';
        edited[k++] = text[i];
    }
    char *ep = ts_temp_file(edited, k, ".jsonl");
    const char *a[] = {"spans", lp, "--view", "ops", "--records", rp, "--format", "json", NULL};
    const char *b[] = {"spans", lp, "--view", "ops", "--records", ep, "--format", "json", NULL};
    assert_int_equal(ts_run_cli(a, &out, &err), 0);
    assert_int_equal(ts_run_cli(b, &out2, &err2), 0);
    assert_string_equal(err2, err);
    assert_true(ts_contains(out2, "\"operations\": {\"lines\": 6, \"passes\": 6, "));
    assert_string_equal(strstr(out2, "\"operations\""), strstr(out, "\"operations\""));
    free(out), free(err), free(out2), free(err2);
    unlink(ep);
    free(ep), free(edited), free(text);
}

/* Lines with dropped > 0 are one warning a file, at its first such line:
 * a pool too small for every pass once wrote a warning a line, and past
 * the thousandth the rest, the lines that join no pass among them, went
 * unshown. */
static void test_dropped_lines_one_warning_a_file(void **st)
{
    (void)st;
    char *recs = malloc(1200 * 128), lp[4096], want[8192], *out, *err;
    assert_non_null(recs);
    size_t n = 0;
    for (int i = 1; i <= 1200; i++)
        n += (size_t)sprintf(recs + n,
                             "{\"pid\": 9, \"inv\": %d, \"clock\": \"host_monotonic_ns\", \"dropped\": %d, "
                             "\"records\": []}\n",
                             i, i == 1 ? 0 : 3);
    char *rp = ts_temp_file(recs, n, ".jsonl");
    snprintf(lp, sizeof lp, "%s", ts_fixture("original-grammar-2rank-3round.log"));
    const char *a[] = {"spans", lp, "--view", "ops", "--records", rp, NULL};
    assert_int_equal(ts_run_cli(a, &out, &err), 0);
    snprintf(want, sizeof want,
             "hbg spans: warning: %s:2: 1199 records lines have dropped > 0 (this line's, pid=9 inv=2 dropped=3, is "
             "the first): the record pool refused records of those passes, whose operations are incomplete\n"
             "hbg spans: warning: %s:1: 1200 records lines join no bind pass with host_orch in %s (this line's, "
             "pid=9 inv=1, is the first); their operations count in the tails only\n",
             rp, rp, lp);
    if (!ts_contains(err, want))
        fail_msg("%s", err);
    assert_false(ts_contains(err, "not shown"));
    free(out), free(err);
    unlink(rp);
    free(rp), free(recs);
}

/* The JSON's warnings are those stderr shows, its "N more warnings not
 * shown" among them: past a thousand they once just stopped, and a script
 * reading the JSON alone took the list for all there was. */
static void test_json_warnings_say_how_many_more(void **st)
{
    (void)st;
    static const char bad[] = "[STRACE] v=1 pid=5 tid=5 inv=1 hid=zz depth=0 name=x ts=1 dur=1\n";
    static const char good[] = "[STRACE] v=1 pid=5 tid=5 inv=1 hid=aa depth=0 name=chip.run ts=1 dur=1\n";
    size_t n = 0, nb = strlen(bad);
    char *text = malloc(1100 * nb + sizeof good), *err;
    assert_non_null(text);
    for (int i = 0; i < 1100; i++, n += nb)
        memcpy(text + n, bad, nb);
    memcpy(text + n, good, sizeof good);
    char *lp = ts_temp_file(text, n + strlen(good), ".log");
    const char *a[] = {"spans", lp, "--format", "json", NULL};
    json_t *j = run_json(a, 0, &err);
    assert_true(ts_contains(err, "hbg spans: warning: 100 more warnings not shown\n"));
    json_t *w = json_object_get(j, "warnings");
    assert_int_equal(json_array_size(w), 1001);
    assert_string_equal(json_string_value(json_array_get(w, 1000)), "100 more warnings not shown");
    json_decref(j);
    free(err);
    unlink(lp);
    free(lp), free(text);
}

/* --view ops shows the tails of a log without spans: its header says
 * it has no ranks, as it says it has no stamp (the JSON: an empty list),
 * where it once printed a "ranks" line with nothing in it. */
static void test_ops_of_a_log_without_spans(void **st)
{
    (void)st;
    static const char log[] = "[mono_ns=100][T0x1][TIMING] bind_trace_end: [bind_trace.c:212] bind phase=host_orch "
                              "start_ns=1000 dur_ns=500 pid=7 inv=1\n";
    static const char recs[] =
        "{\"pid\": 7, \"inv\": 1, \"clock\": \"host_monotonic_ns\", \"dropped\": 0, \"records\": ["
        "{\"phase\": \"submit_task\", \"start_ns\": 1100, \"end_ns\": 1200, \"detail\": 0, \"tid\": 7}]}\n";
    char *lp = ts_temp_file(log, strlen(log), ".log"), *rp = ts_temp_file(recs, strlen(recs), ".jsonl"), *out, *err;
    const char *a[] = {"spans", lp, "--view", "ops", "--records", rp, NULL};
    assert_int_equal(ts_run_cli(a, &out, &err), 0);
    if (!ts_contains(out, "\nspans   0 in 0 invocations of 0 callables\n"
                          "ranks   none: the ranks are the pids of the spans, and this log has no spans\n\n"
                          "operations: 1 records line, 1 joined to a bind pass with host_orch\n"))
        fail_msg("%s", out);
    free(out), free(err);
    const char *b[] = {"spans", lp, "--view", "ops", "--records", rp, "--format", "json", NULL};
    json_t *j = run_json(b, 0, &err);
    assert_int_equal(json_array_size(json_object_get(j, "ranks")), 0);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "operations"), "passes")), 1);
    json_decref(j);
    free(err);
    unlink(lp), unlink(rp);
    free(lp), free(rp);
}

/* --view ops of records files without a records line (an empty file, a
 * log given as records by mistake: every line skipped) has nothing to
 * show: exit 1, said on stderr, as a log without spans is for the other
 * views. It printed an empty table and exit 0. */
static void test_ops_without_records_lines(void **st)
{
    (void)st;
    static const char notrecs[] = "not a records line\n";
    char lp[4096], want[8192], *out, *err;
    snprintf(lp, sizeof lp, "%s", ts_fixture("hbg-run-vector-timeline.log"));
    char *ep = ts_temp_file("", 0, ".jsonl"), *np = ts_temp_file(notrecs, strlen(notrecs), ".jsonl");
    const char *one[] = {"spans", lp, "--view", "ops", "--records", ep, NULL};
    assert_int_equal(ts_run_cli(one, &out, &err), 1);
    assert_string_equal(out, "");
    snprintf(want, sizeof want, "hbg spans: %s holds no records line: no operations to show\n", ep);
    assert_string_equal(err, want);
    free(out), free(err);
    const char *two[] = {"spans", lp, "--view", "ops", "--records", ep, "--records", np, "--format", "json", NULL};
    assert_int_equal(ts_run_cli(two, &out, &err), 1);
    assert_string_equal(out, "");
    assert_true(ts_contains(err, "hbg spans: warning: "));
    assert_true(ts_contains(err, ":1: not a JSON object"));
    assert_true(ts_contains(err, "\nhbg spans: none of the 2 records files holds a records line: no operations to "
                                 "show\n"));
    free(out), free(err);
    /* beside a view, the view is still something to show */
    const char *view[] = {"spans", lp, "--records", ep, NULL};
    assert_int_equal(ts_run_cli(view, &out, &err), 0);
    assert_true(ts_contains(out, "operations: 0 records lines"));
    free(out), free(err);
    unlink(ep), unlink(np);
    free(ep), free(np);
}

/* A CSV holds one table: --records with --format csv and a view other
 * than ops is a usage error. The records were read and joined, and then
 * the tails were left out of the CSV without a word. */
static void test_records_in_a_csv_of_another_view(void **st)
{
    (void)st;
    char lp[4096], rp[4096], *out, *err;
    snprintf(lp, sizeof lp, "%s", ts_fixture("hbg-run-vector-timeline.log"));
    snprintf(rp, sizeof rp, "%s", ts_fixture("hbg-run-vector-timeline.host_phase_records.jsonl"));
    const char *views[] = {"tpot", "rounds", "tree"};
    for (size_t i = 0; i < 3; i++) {
        const char *a[] = {"spans", lp, "--view", views[i], "--records", rp, "--format", "csv", NULL};
        assert_int_equal(ts_run_cli(a, &out, &err), 2);
        assert_string_equal(out, "");
        assert_string_equal(err, "hbg spans: --records with --format csv needs --view ops: a CSV holds one table, "
                                 "and the operation tails are a table of their own (see `hbg spans --help`)\n");
        free(out), free(err);
    }
    /* the help the message points to says so */
    const char *help[] = {"spans", "--help", NULL};
    assert_int_equal(ts_run_cli(help, &out, &err), 0);
    assert_true(ts_contains(out, "in\n                      csv, with --view ops only (a CSV holds one table)\n"));
    free(out), free(err);
    const char *dflt[] = {"spans", lp, "--records", rp, "--format", "csv", NULL};
    assert_int_equal(ts_run_cli(dflt, &out, &err), 2);
    free(out), free(err);
    const char *ops[] = {"spans", lp, "--view", "ops", "--records", rp, "--format", "csv", NULL};
    assert_int_equal(ts_run_cli(ops, &out, &err), 0);
    assert_true(!strncmp(out, "kind,count,min_ns,median_ns,p99_ns,max_ns\n", 42));
    free(out), free(err);
}

/* Names as the log spells them, read back from each format: a comma and
 * a quote make a quoted RFC 4180 cell (not '?'), and a UTF-8 character
 * stays one in JSON (not \u00c3\u00a9, which reads as two). */
static void test_names_in_csv_and_json(void **st)
{
    (void)st;
    char *src = ts_slurp(ts_fixture("spans-ours-2rank.log"), NULL);
    assert_non_null(src);
    size_t cap = strlen(src) * 2 + 1, k = 0;
    char *dst = malloc(cap);
    assert_non_null(dst);
    const char *from = "name=chip.run.runner_run ", *to = "name=chip.run.a%2Cb%22caf%C3%A9 ";
    for (const char *p = src; *p;) {
        if (!strncmp(p, from, strlen(from))) {
            k += (size_t)sprintf(dst + k, "%s", to);
            p += strlen(from);
        } else {
            dst[k++] = *p++;
        }
    }
    dst[k] = 0;
    char *lp = ts_temp_file(dst, k, ".log");
    char *out, *err;
    const char *csv[] = {"spans", lp, "--format", "csv", NULL};
    assert_int_equal(ts_run_cli(csv, &out, &err), 0);
    if (!ts_contains(out, ",\"chip.run.a,b\"\"caf\xc3\xa9\",host,"))
        fail_msg("%s", out);
    free(out), free(err);
    const char *js[] = {"spans", lp, "--format", "json", NULL};
    assert_int_equal(ts_run_cli(js, &out, &err), 0);
    assert_true(ts_contains(out, "\"chip.run.a,b\\\"caf\xc3\xa9\""));
    json_t *j = json_loads(out, 0, NULL);
    assert_non_null(j);
    json_decref(j);
    free(out), free(err);
    unlink(lp);
    free(lp), free(dst), free(src);
}

/* --- the command ------------------------------------------------------------------ */

static void test_formats_and_errors(void **st)
{
    (void)st;
    char lp[4096], *out, *err;
    snprintf(lp, sizeof lp, "%s", ts_fixture("spans-ours-2rank.log"));
    const char *csv[] = {"spans", lp, "--format", "csv", NULL};
    assert_int_equal(ts_run_cli(csv, &out, &err), 0);
    assert_true(!strncmp(out, "callable,label,stage,clock,depth,n,min_ns,median_ns,max_ns,mean_ns\n", 67));
    free(out);
    free(err);
    const char *rc[] = {"spans", lp, "--view", "rounds", "--format", "csv", NULL};
    assert_int_equal(ts_run_cli(rc, &out, &err), 0);
    assert_true(ts_contains(out, "\n1,5200,1,1,1,"));
    free(out);
    free(err);
    /* standard input */
    const char *in[] = {"spans", "-", "--view", "tree", NULL};
    assert_int_equal(ts_run_cli_in(in, lp, &out, &err), 0);
    assert_true(ts_contains(out, "log     <stdin>"));
    free(out);
    free(err);
    const char *help[] = {"spans", "--help", NULL};
    assert_int_equal(ts_run_cli(help, &out, &err), 0);
    assert_true(ts_contains(out, "usage: hbg spans LOG"));
    free(out);
    free(err);
    const char *bad[][6] = {{"spans", lp, "--view", "flame", NULL},
                            {"spans", lp, "--format", "xml", NULL},
                            {"spans", lp, "--hidden", NULL},
                            {"spans", lp, "--assert-overlap", "chip.run", NULL},
                            {"spans", lp, "--view", "ops", NULL},
                            {"spans", "/nonexistent/x.log", NULL}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(ts_run_cli(bad[i], &out, &err), 2);
        assert_true(ts_contains(err, "hbg spans: "));
        free(out);
        free(err);
    }
    /* spans of the scheduler family only: no run to group them into */
    char np[4096];
    snprintf(np, sizeof np, "%s", ts_fixture("spans-original-node.log"));
    const char *node[] = {"spans", np, NULL};
    assert_int_equal(ts_run_cli(node, &out, &err), 1);
    assert_true(ts_contains(err, "no invocations to show"));
    free(out);
    free(err);
    /* a log without spans */
    char *empty = ts_temp_file("no spans here\n", 14, ".log");
    const char *e[] = {"spans", empty, NULL};
    assert_int_equal(ts_run_cli(e, &out, &err), 1);
    assert_true(ts_contains(err, "has no [STRACE] spans"));
    free(out);
    free(err);
    remove(empty);
    free(empty);
}

/* Without --records the bind-phase lines are passed over unread: a
 * malformed one (which hbg phases reports) is no warning here, and the
 * spans around it are read as in any log. */
static void test_bind_lines_not_read(void **st)
{
    (void)st;
    char lp[4096], *out, *err;
    snprintf(lp, sizeof lp, "%s", ts_fixture("ours-overflow.log"));
    char *text = ts_slurp(lp, NULL);
    assert_non_null(text);
    size_t nspan = 0;
    for (char *p = text; (p = strstr(p, "[STRACE] v=1 ")); p++)
        nspan++;
    assert_true(ts_contains(text, "bind phase=") && nspan > 0);
    free(text);
    const char *ph[] = {"phases", lp, NULL};
    assert_int_equal(ts_run_cli(ph, &out, &err), 0);
    assert_true(ts_contains(err, "ours-overflow.log:51: malformed bind line: dur_ns= is a number past 64 bits"));
    free(out);
    free(err);
    const char *a[] = {"spans", lp, NULL};
    assert_int_equal(ts_run_cli(a, &out, &err), 0);
    assert_string_equal(err, "");
    char want[64];
    snprintf(want, sizeof want, "spans   %zu in ", nspan);
    assert_true(ts_contains(out, want));
    free(out);
    free(err);
}

/* The same records file named twice (again, or through a link) would
 * count every operation twice: refused before anything is read. */
static void test_records_given_twice(void **st)
{
    (void)st;
    char lp[2048], rp[2048], link[2048], want[8192], *out, *err;
    snprintf(lp, sizeof lp, "%s", ts_fixture("hbg-run-vector-timeline.log"));
    snprintf(rp, sizeof rp, "%s", ts_fixture("hbg-run-vector-timeline.host_phase_records.jsonl"));
    char *dir = ts_tempdir("spansdup");
    snprintf(link, sizeof link, "%s/r.jsonl", dir);
    assert_int_equal(symlink(rp, link), 0);
    const char *twice[] = {"spans", lp, "--records", rp, "--records", rp, NULL};
    assert_int_equal(ts_run_cli(twice, &out, &err), 2);
    snprintf(want, sizeof want,
             "hbg spans: --records 1 (%s) and --records 2 (%s) are the same file: its records would count twice; "
             "give each records file once\n",
             rp, rp);
    assert_string_equal(err, want);
    assert_string_equal(out, "");
    free(out);
    free(err);
    const char *linked[] = {"spans", lp, "--view", "ops", "--records", link, "--records", rp, NULL};
    assert_int_equal(ts_run_cli(linked, &out, &err), 2);
    snprintf(want, sizeof want,
             "hbg spans: --records 1 (%s) and --records 2 (%s) are the same file: its records would count twice; "
             "give each records file once\n",
             link, rp);
    assert_string_equal(err, want);
    free(out);
    free(err);
    ts_rmtree(dir);
}

/* --records - reads the records from standard input (it tried to open a
 * file named '-'): the same tails as the file gives. The log as records
 * too, or standard input as both, is refused. */
static void test_records_from_stdin(void **st)
{
    (void)st;
    char lp[2048], rp[2048], want[8192], *out, *err, *out2, *err2;
    snprintf(lp, sizeof lp, "%s", ts_fixture("hbg-run-vector-timeline.log"));
    snprintf(rp, sizeof rp, "%s", ts_fixture("hbg-run-vector-timeline.host_phase_records.jsonl"));
    const char *file[] = {"spans", lp, "--view", "ops", "--records", rp, NULL};
    const char *in[] = {"spans", lp, "--view", "ops", "--records", "-", NULL};
    assert_int_equal(ts_run_cli(file, &out, &err), 0);
    assert_int_equal(ts_run_cli_in(in, rp, &out2, &err2), 0);
    assert_true(ts_contains(out, "host_orch not covered by any operation record"));
    assert_string_equal(out2, out);
    assert_string_equal(err2, "");
    free(out), free(err), free(out2), free(err2);
    const char *both[] = {"spans", "-", "--records", "-", NULL};
    assert_int_equal(ts_run_cli_in(both, rp, &out, &err), 2);
    assert_string_equal(err, "hbg spans: the log (standard input) and --records 1 (standard input) are the same "
                             "file; give the log once\n");
    assert_string_equal(out, "");
    free(out), free(err);
    const char *self[] = {"spans", lp, "--records", lp, NULL};
    assert_int_equal(ts_run_cli(self, &out, &err), 2);
    snprintf(want, sizeof want, "hbg spans: the log (%s) and --records 1 (%s) are the same file; give the log once\n",
             lp, lp);
    assert_string_equal(err, want);
    free(out), free(err);
}

/* A pass's records line held twice, in one file (appended to twice) or in
 * two (a copy of the file), counts once: the second is skipped with a
 * warning, and its records are in no tail. */
static void test_a_pass_held_twice_counts_once(void **st)
{
    (void)st;
    char lp[4096], *err;
    snprintf(lp, sizeof lp, "%s", ts_fixture("hbg-run-vector-timeline.log"));
    size_t n;
    char *text = ts_slurp(ts_fixture("hbg-run-vector-timeline.host_phase_records.jsonl"), &n);
    assert_non_null(text);
    char *doubled = malloc(2 * n);
    assert_non_null(doubled);
    memcpy(doubled, text, n);
    memcpy(doubled + n, text, n);
    char *r1 = ts_temp_file(text, n, ".jsonl"), *r2 = ts_temp_file(text, n, ".jsonl");
    char *rd = ts_temp_file(doubled, 2 * n, ".jsonl");
    const char *once[] = {"spans", lp, "--records", r1, "--format", "json", NULL};
    json_t *j1 = run_json(once, 0, &err);
    free(err);
    const char *in_one[] = {"spans", lp, "--records", rd, "--format", "json", NULL};
    json_t *jd = run_json(in_one, 0, &err);
    assert_true(ts_contains(err, ": a second records line for pid="));
    free(err);
    const char *in_two[] = {"spans", lp, "--records", r1, "--records", r2, "--format", "json", NULL};
    json_t *j2 = run_json(in_two, 0, &err);
    char want[8192];
    snprintf(want, sizeof want, " (the first is %s:1); line skipped\n", r1);
    assert_true(ts_contains(err, want));
    free(err);
    json_t *ops = json_object_get(j1, "operations");
    assert_true(json_integer_value(json_object_get(ops, "lines")) > 0);
    assert_true(json_equal(ops, json_object_get(jd, "operations")));
    assert_true(json_equal(ops, json_object_get(j2, "operations")));
    json_decref(j1), json_decref(jd), json_decref(j2);
    unlink(r1), unlink(r2), unlink(rd);
    free(r1), free(r2), free(rd), free(doubled), free(text);
}

/* JSON past the writer's 64 KiB buffer goes to stdout's descriptor, not
 * through the stream: a failed write is still one line with its reason,
 * as a table's is. */
static void test_output_on_a_full_or_closed_stdout(void **st)
{
    (void)st;
    size_t cap = 4000 * 160, n = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    n += (size_t)snprintf(text, cap, "[stamp] 1a2b3c4 hbg run qwen\n");
    for (int inv = 1; inv <= 3000; inv++)
        n += (size_t)snprintf(text + n, cap - n,
                              "[STRACE] v=1 pid=5100 tid=5101 inv=%d hid=1111111111111111 depth=0 name=chip.run "
                              "ts=%d dur=%d\n",
                              inv, 1000000 + inv * 1000, 500 + inv % 7);
    assert_true(n < cap);
    char *lp = ts_temp_file(text, n, ".log");
    free(text);
    char *out, *err;
    const char *json[] = {"spans", lp, "--view", "rounds", "--format", "json", NULL};
    assert_int_equal(ts_run_cli(json, &out, &err), 0);
    if (strlen(out) <= 65536)
        fail_msg("%zu bytes of JSON: not past the writer's buffer", strlen(out));
    free(out);
    free(err);
    const char *table[] = {"spans", lp, "--view", "rounds", NULL};
    const char *const *args[2] = {json, table};
    const int where[2] = {FS_OUT_FULL, FS_OUT_CLOSED};
    const char *why[2] = {"hbg spans: cannot write standard output: No space left on device\n",
                          "hbg spans: cannot write standard output: Bad file descriptor\n"};
    for (int a = 0; a < 2; a++)
        for (int k = 0; k < 2; k++) {
            fs_spec spec = {.args = args[a], .out = where[k]};
            assert_int_equal(fs_run(&spec, 60, NULL, &err), 2);
            assert_string_equal(err, why[k]);
            free(err);
        }
    remove(lp);
    free(lp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tpot_ours_two_ranks),
        cmocka_unit_test(test_one_name_one_row),
        cmocka_unit_test(test_tpot_original_pipelined),
        cmocka_unit_test(test_a_run_twice_counts_once),
        cmocka_unit_test(test_rounds_two_ranks_anchors),
        cmocka_unit_test(test_rounds_an_anchor_on_the_line_of_a_round),
        cmocka_unit_test(test_rounds_pipelined_device_phases),
        cmocka_unit_test(test_rounds_host_is_chip_run),
        cmocka_unit_test(test_tree_from_depth),
        cmocka_unit_test(test_tree_child_outside_parent),
        cmocka_unit_test(test_clamped_sums_warned),
        cmocka_unit_test(test_means_past_2_53_are_exact),
        cmocka_unit_test(test_mean_ties_round_alike_past_2_53),
        cmocka_unit_test(test_means_below_2_53_are_exact),
        cmocka_unit_test(test_small_mean_ties_round_to_even),
        cmocka_unit_test(test_warnings_name_the_earliest_line),
        cmocka_unit_test(test_table_aligns_utf8_names),
        cmocka_unit_test(test_tables_widen_to_the_widest_value),
        cmocka_unit_test(test_tree_many_children),
        cmocka_unit_test(test_overlap_holds_when_pipelined),
        cmocka_unit_test(test_overlap_holds_for_one_pair),
        cmocka_unit_test(test_overlap_fails_naming_the_pair),
        cmocka_unit_test(test_overlap_names_masked),
        cmocka_unit_test(test_ops_tails),
        cmocka_unit_test(test_ops_tails_of_lines_kept),
        cmocka_unit_test(test_ops_kinds_of_many_files),
        cmocka_unit_test(test_unjoined_lines_named_per_file),
        cmocka_unit_test(test_ops_of_a_log_without_spans),
        cmocka_unit_test(test_ops_without_records_lines),
        cmocka_unit_test(test_records_in_a_csv_of_another_view),
        cmocka_unit_test(test_ops_orch_sum_clamped),
        cmocka_unit_test(test_defective_passes_said_kept_or_unjoined),
        cmocka_unit_test(test_dropped_lines_one_warning_a_file),
        cmocka_unit_test(test_json_warnings_say_how_many_more),
        cmocka_unit_test(test_records_with_a_byte_order_mark),
        cmocka_unit_test(test_names_in_csv_and_json),
        cmocka_unit_test(test_formats_and_errors),
        cmocka_unit_test(test_bind_lines_not_read),
        cmocka_unit_test(test_records_given_twice),
        cmocka_unit_test(test_records_from_stdin),
        cmocka_unit_test(test_a_pass_held_twice_counts_once),
        cmocka_unit_test(test_output_on_a_full_or_closed_stdout),
        cmocka_unit_test(test_nothing_whole_is_the_reason_given),
        cmocka_unit_test(test_one_foreign_span),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
