/* `hbg timeline`: the trace parses as JSON, lanes and nesting are right,
 * wall times are exact, and every records anomaly is counted on stderr. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support/tools_support.h"
#include "tools/records.h"

/* With HBG_TRACE_KEEP=DIR (CTest sets it: test_tools_speedscope imports
 * what is kept with speedscope), every trace these tests write is kept as
 * DIR/NN-LOG[-WHAT].json and listed, one name a line, in DIR/traces.txt. */
static bool keep_none; /* the traces being written do not nest on purpose */

static void keep_trace(const char *log, const char *what, const char *text)
{
    static unsigned n;
    const char *dir = getenv("HBG_TRACE_KEEP");
    if (!dir || !text || keep_none)
        return;
    const char *b = strrchr(log, '/');
    b = b ? b + 1 : log;
    int bl = (int)strlen(b);
    if (bl > 4 && !strcmp(b + bl - 4, ".log"))
        bl -= 4;
    char name[512], path[4096];
    snprintf(name, sizeof name, "%02u-%.*s%s%s.json", ++n, bl, b, what ? "-" : "", what ? what : "");
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
    snprintf(path, sizeof path, "%s/traces.txt", dir);
    f = fopen(path, "a");
    assert_non_null(f);
    assert_true(fprintf(f, "%s\n", name) > 0);
    assert_int_equal(fclose(f), 0);
}

static json_t *run_timeline(const char *log, const char *records, int want, char **err)
{
    char *o = ts_temp_file("", 0, ".json");
    char lp[4096], rp[4096];
    snprintf(lp, sizeof lp, "%s", log);
    if (records)
        snprintf(rp, sizeof rp, "%s", records);
    const char *a[] = {"timeline", lp, "-o", o, records ? "--records" : NULL, rp, NULL};
    char *out;
    assert_int_equal(ts_run_cli(a, &out, err), want);
    free(out);
    char *s = ts_slurp(o, NULL);
    unlink(o);
    free(o);
    if (!s)
        return NULL;
    if (want == 0)
        keep_trace(log, records ? "records" : NULL, s);
    json_error_t je;
    /* a member twice in one object is kept by most readers as the last:
     * every trace these tests make must have none */
    json_t *j = json_loads(s, JSON_REJECT_DUPLICATES, &je);
    if (!j && want == 0)
        fprintf(stderr, "trace does not parse: %s at line %d\n", je.text, je.line);
    free(s);
    /* the summary counts exactly the events written */
    const char *w = j ? strstr(*err, ".json: ") : NULL;
    if (w)
        assert_int_equal(strtoull(w + 7, NULL, 10), json_array_size(json_object_get(j, "traceEvents")));
    return j;
}

static double dnum(json_t *v)
{
    return json_is_integer(v) ? (double)json_integer_value(v) : json_real_value(v);
}

/* Events with these fields; returns how many, and the first in *first. */
static size_t find(json_t *ev, const char *name, const char *cat, long long pid, long long tid, json_t **first)
{
    size_t n = 0, i;
    json_t *e;
    json_array_foreach(ev, i, e)
    {
        if (name && strcmp(json_string_value(json_object_get(e, "name")), name))
            continue;
        if (cat && (!json_object_get(e, "cat") || strcmp(json_string_value(json_object_get(e, "cat")), cat)))
            continue;
        if (pid >= 0 && json_integer_value(json_object_get(e, "pid")) != pid)
            continue;
        if (tid >= 0 && json_integer_value(json_object_get(e, "tid")) != tid)
            continue;
        if (!n && first)
            *first = e;
        n++;
    }
    return n;
}

/* A line's own attribute named like a member this tool writes (wall_ns
 * and utc from the clock anchor) is kept under "logged_<name>": a second
 * member of one name was read as the last, the logged text over the
 * value computed. */
static void test_a_logged_key_is_not_a_second_member(void **st)
{
    (void)st;
    static const char text[] =
        "[mono_ns=1][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=5 mono_ns=1 wall_ns=1796582114695931462\n"
        "[mono_ns=2][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=5 tid=5 inv=1 hid=aa depth=0 name=chip.run "
        "ts=100 dur=10 wall_ns=7 utc=x logged_utc=y\n";
    char *log = ts_temp_file(text, strlen(text), ".log"), *err;
    json_t *j = run_timeline(log, NULL, 0, &err);
    assert_non_null(j);
    json_t *e = NULL;
    assert_int_equal(find(json_object_get(j, "traceEvents"), "chip.run", "span", -1, -1, &e), 1);
    json_t *a = json_object_get(e, "args");
    assert_string_equal(json_string_value(json_object_get(a, "wall_ns")), "1796582114695931561");
    assert_int_equal(json_integer_value(json_object_get(a, "logged_wall_ns")), 7);
    assert_string_equal(json_string_value(json_object_get(a, "logged_logged_utc")), "x");
    assert_string_equal(json_string_value(json_object_get(a, "logged_utc")), "y");
    json_decref(j);
    free(err);
    unlink(log);
    free(log);
}

/* wall_ns, logged_wall_ns, ... with logged_ twelve times: the name for
 * wall_ns was cut at 96 bytes to the last of them, a member twice. */
static void test_a_long_chain_of_logged_keys(void **st)
{
    (void)st;
    char text[2048];
    int n = snprintf(text, sizeof text,
                     "[mono_ns=2][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=5 tid=5 inv=1 hid=aa depth=0 "
                     "name=chip.run ts=100 dur=10");
    for (int i = 0; i <= 12; i++) {
        n += snprintf(text + n, sizeof text - (size_t)n, " ");
        for (int k = 0; k < i; k++)
            n += snprintf(text + n, sizeof text - (size_t)n, "logged_");
        n += snprintf(text + n, sizeof text - (size_t)n, "wall_ns=%d", i);
    }
    snprintf(text + n, sizeof text - (size_t)n, "\n");
    char *log = ts_temp_file(text, strlen(text), ".log"), *err;
    json_t *j = run_timeline(log, NULL, 0, &err);
    assert_non_null(j); /* no member twice */
    json_t *e = NULL;
    assert_int_equal(find(json_object_get(j, "traceEvents"), "chip.run", "span", -1, -1, &e), 1);
    char name[160] = "";
    for (int k = 0; k < 13; k++)
        strcat(name, "logged_");
    strcat(name, "wall_ns");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(e, "args"), name)), 0);
    json_decref(j);
    free(err);
    unlink(log);
    free(log);
}

/* A key's byte that is no part of a UTF-8 character is written U+FFFD,
 * so k<FF> and k<FE> were written as one name, "k\uFFFD", twice in one
 * args object (a reader keeps the last), and as the line's own key
 * k<EF BF BD> (U+FFFD itself) too. Such a key is given the first of
 * _2, _3, ... that is no other member's; a key written as it is keeps its
 * name. The second span's args come from the cache of the text. */
static void test_keys_written_alike_are_not_one_member(void **st)
{
    (void)st;
    static const char text[] =
        "[mono_ns=2][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=5 tid=5 inv=1 hid=aa depth=0 name=chip.run "
        "ts=100 dur=10 k\xff=1 k\xfe=2 k\xef\xbf\xbd=3 k\xfd_2=4\n"
        "[mono_ns=3][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=5 tid=5 inv=1 hid=aa depth=1 name=chip.run.bind "
        "ts=101 dur=5 k\xff=1 k\xfe=2 k\xef\xbf\xbd=3 k\xfd_2=4\n"
        "[mono_ns=4][T0x1][TIMING] f: [a.c:1] bind phase=arena_h2d start_ns=102 dur_ns=2 pid=5 inv=1 "
        "x\xff=1 x\xfe=2\n";
    char *lp = ts_temp_file(text, strlen(text), ".log");
    char *o = ts_temp_file("", 0, ".json"), *out, *err;
    const char *a[] = {"timeline", lp, "-o", o, NULL};
    assert_int_equal(ts_run_cli(a, &out, &err), 0);
    char *t = ts_slurp(o, NULL);
    assert_non_null(t);
    static const char *const want[] = {
        "\"name\":\"chip.run\",\"cat\":\"span\",\"ph\":\"X\",\"pid\":5,\"tid\":5,\"ts\":0.100,"
        "\"dur\":0.009999999999999995,\"args\":{\"inv\":1,\"hid\":\"aa\",\"depth\":0,"
        "\"k\xef\xbf\xbd_2\":1,\"k\xef\xbf\xbd_3\":2,\"k\xef\xbf\xbd\":3,\"k\xef\xbf\xbd_2_2\":4}}",
        "\"name\":\"chip.run.bind\",\"cat\":\"span\",\"ph\":\"X\",\"pid\":5,\"tid\":5,\"ts\":0.101,"
        "\"dur\":0.0049999999999999906,\"args\":{\"inv\":1,\"hid\":\"aa\",\"depth\":1,"
        "\"k\xef\xbf\xbd_2\":1,\"k\xef\xbf\xbd_3\":2,\"k\xef\xbf\xbd\":3,\"k\xef\xbf\xbd_2_2\":4}}",
        "\"args\":{\"inv\":1,\"x\xef\xbf\xbd\":1,\"x\xef\xbf\xbd_2\":2}}",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!strstr(t, want[i]))
            fail_msg("trace lacks %s\n%s", want[i], t);
    /* as a reader that keeps the last of a name would count them */
    json_error_t je;
    json_t *j = json_loads(t, JSON_REJECT_DUPLICATES, &je);
    if (!j)
        fail_msg("%s", je.text);
    json_decref(j);
    free(t), free(out), free(err);
    unlink(o), unlink(lp);
    free(o), free(lp);
}

/* Two records on one line (writes that interleave): an anchor first on
 * the line is in force for the span after it; an anchor after the span
 * is not (it was taken backwards to date the span before it). */
static void test_an_anchor_on_the_line_of_a_span(void **st)
{
    (void)st;
    static const char text[] =
        "[mono_ns=100][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=8 mono_ns=100 wall_ns=1000000000000000000 "
        "[mono_ns=202][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=8 tid=8 inv=1 hid=aa depth=0 name=chip.run "
        "ts=150 dur=50\n"
        "[mono_ns=202][T0x2][TIMING] emit_host_span: [STRACE] v=1 pid=9 tid=9 inv=1 hid=aa depth=0 name=chip.run "
        "ts=100 dur=50 [mono_ns=300][T0x2][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=9 mono_ns=300 "
        "wall_ns=1000000000000000000\n";
    char *log = ts_temp_file(text, strlen(text), ".log"), *err;
    json_t *j = run_timeline(log, NULL, 0, &err);
    assert_non_null(j);
    json_t *e = NULL;
    assert_int_equal(find(json_object_get(j, "traceEvents"), "chip.run", "span", 8, -1, &e), 1);
    assert_string_equal(json_string_value(json_object_get(json_object_get(e, "args"), "wall_ns")),
                        "1000000000000000050");
    assert_int_equal(find(json_object_get(j, "traceEvents"), "chip.run", "span", 9, -1, &e), 1);
    assert_null(json_object_get(json_object_get(e, "args"), "wall_ns"));
    /* in the singular, as it once was not ("1 events precede") */
    char want[4400];
    snprintf(want, sizeof want,
             "hbg timeline: warning: %s: one event precedes its process's first clock anchor; it carries no "
             "wall_ns\n",
             log);
    if (!ts_contains(err, want))
        fail_msg("%s", err);
    json_decref(j);
    free(err);
    unlink(log);
    free(log);
}

/* A log whose every record is malformed: that is the reason given, not
 * the breakdown switch it was told to turn on. */
static void test_nothing_whole_is_the_reason_given(void **st)
{
    (void)st;
    static const char text[] =
        "[mono_ns=1][T0x1][TIMING] e: [STRACE] v=1 pid=1 tid=1 inv=1 hid=ab depth=0 name=chip.run ts=5\n"
        "[mono_ns=2][T0x1][TIMING] e: [STRACE] v=1 pid=1 tid=1 inv=2 hid=ab depth=0 name=chip.run dur=5\n";
    char *log = ts_temp_file(text, strlen(text), ".log"), *err = NULL, want[4400];
    const char *args[] = {"timeline", log, "-o", "/dev/null", NULL};
    assert_int_equal(ts_run_cli(args, NULL, &err), 1);
    snprintf(want, sizeof want, "hbg timeline: nothing to draw: %s: none of its 2 [STRACE] records is whole (see "
             "the warnings)\n", log);
    assert_true(ts_contains(err, want));
    assert_false(ts_contains(err, "HBG_BIND_BREAKDOWN"));
    free(err);
    unlink(log);
    free(log);
}

static void test_original_with_records(void **st)
{
    (void)st;
    char lp[4096], rp[4096], *err;
    snprintf(lp, sizeof lp, "%s", ts_fixture("original-2rank-interleaved.log"));
    snprintf(rp, sizeof rp, "%s", ts_fixture("original-2rank-interleaved.host_phase_records.jsonl"));
    json_t *j = run_timeline(lp, rp, 0, &err);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(j, "displayTimeUnit")), "ns");
    json_t *ev = json_object_get(j, "traceEvents");
    assert_true(json_is_array(ev));

    /* lanes: two ranks, each with a device-clock lane of its own */
    json_t *e = NULL;
    assert_int_equal(find(ev, "process_name", NULL, 4001, 0, &e), 1);
    assert_string_equal(json_string_value(json_object_get(json_object_get(e, "args"), "name")), "rank 0 (pid 4001)");
    assert_int_equal(find(ev, "process_name", NULL, 1000004002, 0, &e), 1);
    assert_string_equal(json_string_value(json_object_get(json_object_get(e, "args"), "name")),
                        "rank 1 (pid 4002) device: device-clock spans, placed at the start of runner_run");
    assert_int_equal(find(ev, "thread_name", NULL, 4001, 4012, NULL), 1);

    /* spans: 4 per pass; device ones on the rank's device lane (one
     * thread per span name), each at the start of its invocation's
     * runner_run: never at their device ts on the host axis */
    assert_int_equal(find(ev, NULL, "span", -1, -1, NULL), 18);
    assert_int_equal(find(ev, NULL, "device", 1000004001, -1, NULL), 3);
    assert_int_equal(find(ev, "chip.run.runner_run.device_wall", "device", 1000004001, 1, NULL), 3);
    json_t *rr = NULL;
    size_t i;
    json_array_foreach(ev, i, e)
    {
        const char *cat = json_string_value(json_object_get(e, "cat"));
        if (!cat || strcmp(cat, "device"))
            continue;
        json_t *args = json_object_get(e, "args");
        long long pid = json_integer_value(json_object_get(args, "host_pid"));
        long long inv = json_integer_value(json_object_get(args, "inv"));
        size_t k;
        json_t *x;
        rr = NULL;
        json_array_foreach(ev, k, x)
        {
            const char *c2 = json_string_value(json_object_get(x, "cat"));
            if (c2 && !strcmp(c2, "span") && json_integer_value(json_object_get(x, "pid")) == pid &&
                json_integer_value(json_object_get(json_object_get(x, "args"), "inv")) == inv &&
                !strcmp(json_string_value(json_object_get(x, "name")), "chip.run.runner_run"))
                rr = x;
        }
        assert_non_null(rr);
        assert_true(dnum(json_object_get(e, "ts")) == dnum(json_object_get(rr, "ts")));
        assert_true(dnum(json_object_get(e, "dur")) == 4.0);
        assert_string_equal(json_string_value(json_object_get(args, "device_ts_ns")), "0");
        assert_null(json_object_get(args, "wall_ns"));
    }
    /* nothing on the host axis before the first bind span */
    double first_bind = 1e300, first = 1e300;
    json_array_foreach(ev, i, e)
    {
        if (strcmp(json_string_value(json_object_get(e, "ph")), "X"))
            continue;
        double ts = dnum(json_object_get(e, "ts"));
        if (ts < first)
            first = ts;
        if (!strcmp(json_string_value(json_object_get(e, "name")), "chip.run.bind") && ts < first_bind)
            first_bind = ts;
    }
    assert_true(first >= first_bind);

    /* bind segments on the bind span's thread, inside it */
    assert_int_equal(find(ev, NULL, "bind", -1, -1, NULL), 60 + 2);
    json_t *bind = NULL;
    json_array_foreach(ev, i, e)
    {
        json_t *a = json_object_get(e, "args");
        if (!strcmp(json_string_value(json_object_get(e, "name")), "chip.run.bind") &&
            json_integer_value(json_object_get(e, "pid")) == 4001 && json_integer_value(json_object_get(a, "inv")) == 2)
            bind = e;
    }
    assert_non_null(bind);
    assert_int_equal(json_integer_value(json_object_get(bind, "tid")), 4011);
    assert_true(dnum(json_object_get(bind, "ts")) == 6000000119.294);
    /* 51437 ns, as the microseconds that sum with ts exactly to its end */
    assert_int_equal(llround(dnum(json_object_get(bind, "dur")) * 1000), 51437);
    assert_true(6000000119.294 + dnum(json_object_get(bind, "dur")) == 6000000170.731);
    /* wall = 1787400000000000000 + 6000000119294 - (6000000000000 - 50) */
    assert_string_equal(json_string_value(json_object_get(json_object_get(bind, "args"), "wall_ns")),
                        "1787400000000119344");
    double b0 = dnum(json_object_get(bind, "ts")), b1 = b0 + dnum(json_object_get(bind, "dur"));
    size_t inside = 0;
    json_array_foreach(ev, i, e)
    {
        json_t *a = json_object_get(e, "args");
        const char *cat = json_string_value(json_object_get(e, "cat"));
        if (cat && !strcmp(cat, "bind") && json_integer_value(json_object_get(e, "pid")) == 4001 &&
            json_integer_value(json_object_get(e, "tid")) == 4011 && json_integer_value(json_object_get(a, "inv")) == 2) {
            double t0 = dnum(json_object_get(e, "ts")), t1 = t0 + dnum(json_object_get(e, "dur"));
            assert_true(t0 >= b0 && t1 <= b1);
            inside++;
        }
    }
    assert_int_equal(inside, 10);
    e = NULL;
    json_array_foreach(ev, i, e)
    {
        if (!strcmp(json_string_value(json_object_get(e, "name")), "arena_h2d") &&
            json_integer_value(json_object_get(e, "pid")) == 4001)
            break;
    }
    assert_string_equal(json_string_value(json_object_get(json_object_get(e, "args"), "args")), "96/40/0");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(e, "args"), "nt")), 47);

    /* records: inside host_orch on the thread that did them */
    assert_int_equal(find(ev, NULL, "op", -1, -1, NULL), 7);
    assert_int_equal(find(ev, "record_node", "op", 4001, 4012, &e), 1);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(e, "args"), "detail")), 4294967296ll);
    json_t *orch = NULL;
    assert_int_equal(find(ev, "host_orch", "bind", 4001, 4012, &orch), 1);
    assert_true(dnum(json_object_get(orch, "ts")) == 6000000139.387);
    assert_true(dnum(json_object_get(orch, "dur")) == 1.0);
    assert_true(dnum(json_object_get(e, "ts")) >= 6000000139.387);

    assert_true(ts_contains(err, "hbg timeline: wrote "));
    /* hand-offs: consecutive operations on two threads, the second after
     * the first ended; pid 4002's records are out of order in the file */
    assert_int_equal(find(ev, "handoff", "flow", -1, -1, NULL), 6);
    const struct {
        const char *ph;
        long long id, pid, tid;
        double ts;
    } fl[] = {{"s", 1, 4001, 4011, 6000000139.650}, {"f", 1, 4001, 4012, 6000000139.900},
              {"s", 2, 4001, 4012, 6000000139.900}, {"f", 2, 4001, 4011, 6000000140.200},
              {"s", 3, 4002, 4021, 6000000139.450}, {"f", 3, 4002, 4022, 6000000150.050}};
    size_t k = 0;
    json_array_foreach(ev, i, e)
    {
        if (strcmp(json_string_value(json_object_get(e, "name")), "handoff"))
            continue;
        assert_true(k < 6);
        assert_string_equal(json_string_value(json_object_get(e, "ph")), fl[k].ph);
        assert_int_equal(json_integer_value(json_object_get(e, "id")), fl[k].id);
        assert_int_equal(json_integer_value(json_object_get(e, "pid")), fl[k].pid);
        assert_int_equal(json_integer_value(json_object_get(e, "tid")), fl[k].tid);
        assert_true(dnum(json_object_get(e, "ts")) == fl[k].ts);
        if (fl[k].ph[0] == 'f')
            assert_string_equal(json_string_value(json_object_get(e, "bp")), "e");
        else
            assert_null(json_object_get(e, "bp"));
        k++;
    }

    assert_true(ts_contains(err, ": 113 events (18 spans, 6 device spans, 60 bind segments, 2 host_orch copies on "
                                 "other threads, 7 records, 3 hand-off arrows of 2 events, 14 lane names)\n"));
    assert_true(ts_contains(err, "hbg timeline: records lines whose (pid, inv) has no chip.run.bind span (not "
                                 "drawn): 1\n"));
    assert_true(ts_contains(err, "hbg timeline: records outside their bind span (drawn, marked "
                                 "outside_bind_span): 1\n"));
    assert_true(ts_contains(err, "hbg timeline: records inside the bind span but outside host_orch (drawn, marked "
                                 "outside_host_orch): 1\n"));
    assert_true(ts_contains(err, "hbg timeline: records lines with dropped > 0: 1 (3 records refused by the pool)\n"));
    assert_true(ts_contains(err, "hbg timeline: records lines not in the schema (skipped): 3\n"));
    assert_true(ts_contains(err, ".host_phase_records.jsonl:3: pid=4001 inv=9 has no chip.run.bind span in "));
    assert_true(ts_contains(err, ".host_phase_records.jsonl:2: pid=4002 inv=2 dropped=3: the record pool refused"));
    assert_true(
        ts_contains(err, ".host_phase_records.jsonl:2: pid=4002 inv=2: 1 of 3 records lies outside the bind span\n"));
    json_decref(j);
    free(err);
}

/* Another run's records file: its pid has nothing drawn, so no lane, no
 * rank number and no "no clock anchor" warning for it. */
static void test_foreign_records_make_no_lane(void **st)
{
    (void)st;
    const char *rec = "{\"pid\": 999, \"inv\": 1, \"dropped\": 0, \"records\": [{\"phase\": \"submit_task\", "
                      "\"start_ns\": 5000000000200, \"end_ns\": 5000000000300, \"detail\": 0, \"tid\": 3}]}\n";
    char *rp = ts_temp_file(rec, strlen(rec), ".host_phase_records.jsonl");
    char *err;
    json_t *j = run_timeline(ts_fixture("ours-1rank-4pass.log"), rp, 0, &err);
    assert_non_null(j);
    json_t *ev = json_object_get(j, "traceEvents"), *e;
    size_t i, procs = 0;
    json_array_foreach(ev, i, e)
    {
        if (strcmp(json_string_value(json_object_get(e, "name")), "process_name"))
            continue;
        procs++;
        const char *name = json_string_value(json_object_get(json_object_get(e, "args"), "name"));
        assert_true(strncmp(name, "rank 0 (pid 4242)", 17) == 0); /* its host and device lanes */
    }
    assert_int_equal(procs, 2);
    /* one record, in the singular ("its 1 records are not drawn" it said) */
    char want[8400];
    snprintf(want, sizeof want, "%s:1: pid=999 inv=1 has no chip.run.bind span in %s; its one record is not drawn\n",
             rp, ts_fixture("ours-1rank-4pass.log"));
    if (!ts_contains(err, want))
        fail_msg("%s", err);
    assert_false(ts_contains(err, "pid=999 has no [CLOCK_ANCHOR]"));
    assert_false(ts_contains(err, "processes without a clock anchor"));
    json_decref(j);
    free(err);
    unlink(rp);
    free(rp);
}

/* A device lane is never a host process, and lies below 2^32 (Perfetto
 * reads a pid as 32 bits; a larger one becomes 0). Beside pid 4242
 * (device lane 1000004242) a log holding pid 1000004242 moves 4242's lane
 * to the largest number free below 2^32; once the two shared one pid:
 * two process names, one lane. */
static void test_device_lane_never_a_host_pid(void **st)
{
    (void)st;
    size_t n;
    char *src = ts_slurp(ts_fixture("ours-1rank-4pass.log"), &n);
    assert_non_null(src);
    const char *extra = "[mono_ns=5000000300000][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=1000004242 tid=7 inv=1 "
                        "hid=aa depth=0 name=chip.run ts=5000000300000 dur=10\n";
    char *log = malloc(n + strlen(extra));
    assert_non_null(log);
    memcpy(log, src, n);
    memcpy(log + n, extra, strlen(extra));
    char *lp = ts_temp_file(log, n + strlen(extra), ".log");
    free(log);
    char *o = ts_temp_file("", 0, ".json"), *out, *err;
    const char *a[] = {"timeline", lp, "-o", o, NULL};
    assert_int_equal(ts_run_cli(a, &out, &err), 0);
    char *t = ts_slurp(o, NULL);
    assert_non_null(t);
    json_t *j = json_loads(t, JSON_REJECT_DUPLICATES, NULL);
    assert_non_null(j);
    json_t *ev = json_object_get(j, "traceEvents"), *e = NULL;
    assert_int_equal(find(ev, "process_name", NULL, 1000004242, 0, &e), 1);
    assert_string_equal(json_string_value(json_object_get(json_object_get(e, "args"), "name")),
                        "rank 1 (pid 1000004242) - no clock anchor");
    assert_int_equal(find(ev, "process_name", NULL, 4294967295, 0, &e), 1);
    assert_string_equal(json_string_value(json_object_get(json_object_get(e, "args"), "name")),
                        "rank 0 (pid 4242) device: device-clock spans, placed at the start of runner_run");
    assert_int_equal(find(ev, NULL, "device", 4294967295, -1, NULL), 4);
    assert_int_equal(find(ev, NULL, "device", 1000004242, -1, NULL), 0);
    json_decref(j);
    free(t), free(out), free(err);
    unlink(o), unlink(lp);
    free(o), free(lp);
    free(src);
}

/* A host pid of 2^32 or more (a corrupt or foreign log) would be read by
 * Perfetto as 32 bits: 2^32 and 2^64 - 1 both as 0, one lane for two
 * processes. Each is drawn on its own free number below 2^32, from the
 * top down past the pids that hold one (4294967295 here: real pids keep
 * their lanes) and the device lanes, and its lane's name gives the pid.
 * 4242's lanes are where they always were. */
static void test_host_pid_past_2_32(void **st)
{
    (void)st;
    size_t n;
    char *src = ts_slurp(ts_fixture("ours-1rank-4pass.log"), &n);
    assert_non_null(src);
    char extra[1024];
    int m = 0;
    const char *const pids[] = {"18446744073709551615", "4294967295", "4294967296"};
    for (int k = 0; k < 3; k++)
        m += snprintf(extra + m, sizeof extra - (size_t)m,
                      "[mono_ns=5000000300000][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=%s tid=7 inv=1 "
                      "hid=aa depth=0 name=chip.run ts=%d dur=10\n",
                      pids[k], 5000 + k);
    char *log = malloc(n + (size_t)m);
    assert_non_null(log);
    memcpy(log, src, n);
    memcpy(log + n, extra, (size_t)m);
    char *lp = ts_temp_file(log, n + (size_t)m, ".log");
    free(log);
    char *o = ts_temp_file("", 0, ".json"), *out, *err;
    const char *a[] = {"timeline", lp, "-o", o, NULL};
    assert_int_equal(ts_run_cli(a, &out, &err), 0);
    char *t = ts_slurp(o, NULL);
    assert_non_null(t);
    /* every pid in the trace fits 32 bits: it reads as JSON integers */
    json_t *j = json_loads(t, JSON_REJECT_DUPLICATES, NULL);
    assert_non_null(j);
    json_t *ev = json_object_get(j, "traceEvents"), *e = NULL;
    /* in the order the processes were met, each its host lane, then its
     * device lane where pid + 10^9 will not do (none drawn here) */
    const long long lane[] = {4294967294, 4294967295, 4294967291};
    const char *const name[] = {"rank 3 (pid 18446744073709551615, past 2^32: drawn as 4294967294) - no clock anchor",
                                "rank 1 (pid 4294967295) - no clock anchor",
                                "rank 2 (pid 4294967296, past 2^32: drawn as 4294967291) - no clock anchor"};
    for (int k = 0; k < 3; k++) {
        assert_int_equal(find(ev, "process_name", NULL, lane[k], 0, &e), 1);
        assert_string_equal(json_string_value(json_object_get(json_object_get(e, "args"), "name")), name[k]);
        assert_int_equal(find(ev, "chip.run", "span", lane[k], 7, NULL), 1);
        assert_int_equal(find(ev, "process_sort_index", NULL, lane[k], 0, NULL), 1);
    }
    assert_int_equal(find(ev, "process_name", NULL, 4242, 0, NULL), 1);
    assert_int_equal(find(ev, "process_name", NULL, 1000004242, 0, &e), 1);
    assert_string_equal(json_string_value(json_object_get(json_object_get(e, "args"), "name")),
                        "rank 0 (pid 4242) device: device-clock spans, placed at the start of runner_run");
    assert_int_equal(find(ev, NULL, "device", 1000004242, -1, NULL), 4);
    assert_int_equal(find(ev, "process_name", NULL, 0, -1, NULL), 0);
    assert_false(ts_contains(t, "\"pid\":18446744073709551615"));
    assert_false(ts_contains(t, "\"pid\":4294967296"));
    json_decref(j);
    free(t), free(out), free(err);
    unlink(o), unlink(lp);
    free(o), free(lp);
    free(src);
}

/* Perfetto reads a tid as 32 bits too: tids 2^64 - 1 and 2^32 both read
 * as 0 (or as no JSON integer), and a pass of pid 2^32 without its
 * chip.run.bind span is drawn on tid = its pid. Each such thread is drawn
 * on its own number below 2^32, never a tid of the log (4294967295 keeps
 * its own), and its lane's name gives the tid. */
static void test_host_tid_past_2_32(void **st)
{
    (void)st;
    static const char text[] =
        "[mono_ns=1][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=9 tid=18446744073709551615 inv=1 hid=aa "
        "depth=0 name=chip.run ts=1000 dur=10\n"
        "[mono_ns=2][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=9 tid=4294967295 inv=2 hid=aa depth=0 "
        "name=chip.run ts=2000 dur=10\n"
        "[mono_ns=3][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=9 tid=4294967296 inv=3 hid=aa depth=0 "
        "name=chip.run ts=3000 dur=10\n"
        "[mono_ns=4][T0x1][TIMING] f: [a.c:1] bind phase=host_orch start_ns=4000 dur_ns=10 pid=4294967296 inv=1\n"
        "[mono_ns=5][T0x1][TIMING] f: [a.c:1] bind phase=arena_h2d start_ns=4010 dur_ns=10 pid=4294967296 inv=1\n";
    char *lp = ts_temp_file(text, strlen(text), ".log");
    char *o = ts_temp_file("", 0, ".json"), *out, *err;
    const char *a[] = {"timeline", lp, "-o", o, NULL};
    assert_int_equal(ts_run_cli(a, &out, &err), 0);
    char *t = ts_slurp(o, NULL);
    assert_non_null(t);
    json_t *j = json_loads(t, JSON_REJECT_DUPLICATES, NULL);
    assert_non_null(j);
    json_t *ev = json_object_get(j, "traceEvents"), *e = NULL;
    const long long tid[] = {4294967294, 4294967295, 4294967293};
    const char *const name[] = {"tid 18446744073709551615, past 2^32: drawn as 4294967294", "tid 4294967295",
                                "tid 4294967296, past 2^32: drawn as 4294967293"};
    for (int k = 0; k < 3; k++) {
        assert_int_equal(find(ev, "chip.run", "span", 9, tid[k], NULL), 1);
        assert_int_equal(find(ev, "thread_name", NULL, 9, tid[k], &e), 1);
        assert_string_equal(json_string_value(json_object_get(json_object_get(e, "args"), "name")), name[k]);
    }
    /* the pass's process is drawn as 4294967295 (pids and tids are
     * numbered apart), its thread as the next tid free */
    assert_int_equal(find(ev, "host_orch", "bind", 4294967295, 4294967292, NULL), 1);
    assert_int_equal(find(ev, "arena_h2d", "bind", 4294967295, 4294967292, NULL), 1);
    assert_int_equal(find(ev, "thread_name", NULL, 4294967295, 4294967292, &e), 1);
    assert_string_equal(json_string_value(json_object_get(json_object_get(e, "args"), "name")),
                        "tid 4294967296, past 2^32: drawn as 4294967292");
    assert_false(ts_contains(t, "\"tid\":18446744073709551615"));
    assert_false(ts_contains(t, "\"tid\":4294967296"));
    assert_int_equal(find(ev, "thread_name", NULL, -1, 0, NULL), 0);
    size_t i;
    json_array_foreach(ev, i, e)
    {
        assert_true(json_integer_value(json_object_get(e, "tid")) >= 0);
        assert_true(json_integer_value(json_object_get(e, "tid")) < 4294967296LL);
    }
    json_decref(j);
    free(t), free(out), free(err);
    unlink(o), unlink(lp);
    free(o), free(lp);
}

/* Slot lanes are numbered past the largest tid in use; with a thread of
 * tid 2^64 - 1 whose runs overlap, that wrapped them onto 0 and 1, and the
 * run of the real thread 0 was drawn on pipeline slot 1's lane (which took
 * the thread's name). They begin the widest gap between the tids instead. */
static void test_slot_lanes_after_the_last_tid(void **st)
{
    (void)st;
    static const char text[] =
        "[mono_ns=1][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=9 tid=0 inv=1 hid=aa depth=0 name=chip.run "
        "ts=1000 dur=10\n"
        "[mono_ns=2][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=9 tid=18446744073709551615 inv=2 hid=aa "
        "depth=0 name=chip.run ts=2000 dur=1000\n"
        "[mono_ns=3][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=9 tid=18446744073709551615 inv=3 hid=aa "
        "depth=0 name=chip.run ts=2500 dur=1000\n";
    char *lp = ts_temp_file(text, strlen(text), ".log"), *err;
    json_t *j = run_timeline(lp, NULL, 0, &err);
    assert_non_null(j);
    json_t *ev = json_object_get(j, "traceEvents"), *e = NULL;
    const char *const name[] = {"tid 0", "pipeline slot 1 (tid 18446744073709551615)",
                                "pipeline slot 2 (tid 18446744073709551615)"};
    for (int k = 0; k < 3; k++) {
        assert_int_equal(find(ev, "chip.run", "span", 9, k, &e), 1);
        assert_int_equal(json_integer_value(json_object_get(json_object_get(e, "args"), "inv")), k + 1);
        assert_int_equal(find(ev, "thread_name", NULL, 9, k, &e), 1);
        assert_string_equal(json_string_value(json_object_get(json_object_get(e, "args"), "name")), name[k]);
    }
    json_decref(j);
    free(err);
    unlink(lp);
    free(lp);
}

/* An anchor whose wall_ns puts its events past 2^64 ns: they carry no
 * wall_ns, and the trace says why instead of dropping it silently. */
static void test_anchor_out_of_range_is_said(void **st)
{
    (void)st;
    char *src = ts_slurp(ts_fixture("ours-1rank-4pass.log"), NULL);
    assert_non_null(src);
    char *w = strstr(src, "wall_ns=1787400000000000000");
    assert_non_null(w);
    char *o = malloc(strlen(src) + 8);
    assert_non_null(o);
    sprintf(o, "%.*swall_ns=18446744073709551615%s", (int)(w - src), src, w + 27);
    char *p = ts_temp_file(o, strlen(o), ".log");
    char *err;
    json_t *j = run_timeline(p, NULL, 0, &err);
    assert_non_null(j);
    if (!ts_contains(err, " events carry no wall_ns: their clock anchor's wall_ns puts them outside 0 .. 2^64 - 1 "
                          "ns (a corrupt anchor)\n"))
        fail_msg("%s", err);
    json_decref(j);
    free(err);
    const char *sp[] = {"spans", p, "--view", "rounds", NULL};
    char *out;
    assert_int_equal(ts_run_cli(sp, &out, &err), 0);
    assert_true(ts_contains(out, "  - (its anchor's wall_ns is out of range)\n"));
    assert_false(ts_contains(out, "no clock anchor before it"));
    free(out), free(err);
    unlink(p);
    free(p), free(o), free(src);
}

/* Counts of one in the singular, as they once were not: "1 events carry
 * no wall_ns: their clock anchor's ...", "(1 spans, ...)" in the tally
 * and "(1 records refused by the pool)". */
static void test_counts_of_one_in_the_singular(void **st)
{
    (void)st;
    static const char *const anchor[] = {
        /* a wall_ns that puts the span past 2^64 ns */
        "[mono_ns=100][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=8 mono_ns=100 wall_ns=18446744073709551615\n",
        /* a mono_ns 5.5 hours from its own line's and from the span's */
        "[mono_ns=100][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=8 mono_ns=20000000000100 "
        "wall_ns=1000000000000000000\n"};
    static const char *const said[] = {
        ": one event carries no wall_ns: its clock anchor's wall_ns puts it outside 0 .. 2^64 - 1 ns (a corrupt "
        "anchor)\n",
        ":1: one event carries no wall_ns: its clock anchor's mono_ns is corrupt (far from its own line's "
        "[mono_ns=] and from the event's)\n"};
    for (int k = 0; k < 2; k++) {
        char text[512], want[4600];
        snprintf(text, sizeof text,
                 "%s[mono_ns=202][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=8 tid=8 inv=1 hid=aa depth=0 "
                 "name=chip.run ts=150 dur=50\n",
                 anchor[k]);
        char *log = ts_temp_file(text, strlen(text), ".log"), *err;
        json_t *j = run_timeline(log, NULL, 0, &err);
        assert_non_null(j);
        snprintf(want, sizeof want, "hbg timeline: warning: %s%s", log, said[k]);
        if (!ts_contains(err, want))
            fail_msg("%s", err);
        if (!ts_contains(err, ".json: 4 events (1 span, 0 device spans, 0 bind segments, 0 host_orch copies on other "
                              "threads, 0 records, 0 hand-off arrows of 2 events, 3 lane names)\n"))
            fail_msg("%s", err);
        json_decref(j);
        free(err);
        unlink(log);
        free(log);
    }
    /* a records line of one record refused */
    char *rec = ts_slurp(ts_fixture("original-2rank-interleaved.host_phase_records.jsonl"), NULL);
    assert_non_null(rec);
    char *d = strstr(rec, "\"dropped\": 3");
    assert_non_null(d);
    d[11] = '1';
    char *rp = ts_temp_file(rec, strlen(rec), ".jsonl"), *err;
    json_t *j = run_timeline(ts_fixture("original-2rank-interleaved.log"), rp, 0, &err);
    assert_non_null(j);
    if (!ts_contains(err, "\nhbg timeline: records lines with dropped > 0: 1 (1 record refused by the pool)\n"))
        fail_msg("%s", err);
    json_decref(j);
    free(err);
    unlink(rp);
    free(rp), free(rec);
}

/* A round whose own chip.run ts is corrupt: its anchor is sound, so the
 * rounds view blames the start, not the anchor, whether the conversion
 * would overflow (inv 2) or would give a date a century off (inv 3). */
static void test_round_start_far_from_anchor(void **st)
{
    (void)st;
    char *src = ts_slurp(ts_fixture("ours-1rank-4pass.log"), NULL);
    assert_non_null(src);
    static const char *const from[] = {"inv=2 hid=8f3a1c2e9d0b4471 depth=0 name=chip.run ts=5000000145880",
                                       "inv=3 hid=8f3a1c2e9d0b4471 depth=0 name=chip.run ts=5000000209788"};
    static const char *const to[] = {"inv=2 hid=8f3a1c2e9d0b4471 depth=0 name=chip.run ts=18000000000000000000",
                                     "inv=3 hid=8f3a1c2e9d0b4471 depth=0 name=chip.run ts=3160000000000000000"};
    char *o = malloc(strlen(src) + 64);
    assert_non_null(o);
    strcpy(o, src);
    for (int i = 0; i < 2; i++) {
        char *w = strstr(o, from[i]);
        assert_non_null(w);
        size_t fl = strlen(from[i]), tl = strlen(to[i]);
        memmove(w + tl, w + fl, strlen(w + fl) + 1);
        memcpy(w, to[i], tl);
    }
    char *p = ts_temp_file(o, strlen(o), ".log");
    const char *sp[] = {"spans", p, "--view", "rounds", NULL};
    char *out, *err;
    assert_int_equal(ts_run_cli(sp, &out, &err), 0);
    const char *far = "  - (its start is over 10 years from its clock anchor: a corrupt ts)\n";
    const char *a = strstr(out, far);
    if (!a)
        fail_msg("%s", out);
    assert_non_null(strstr(a + 1, far)); /* both rounds */
    assert_false(ts_contains(out, "wall_ns is out of range"));
    assert_false(ts_contains(out, "2126-"));
    assert_true(ts_contains(out, "2026-08-22T")); /* the sound rounds keep theirs */
    free(out), free(err);
    unlink(p);
    free(p), free(o), free(src);
}

/* A clock anchor's mono_ns against its own line's [mono_ns=]: read a
 * moment apart, so over an hour apart one of them is corrupt, and the
 * event's own time tells which (it is near the sound one). */
static char *anchor_edited(const char *from, const char *to)
{
    char *src = ts_slurp(ts_fixture("spans-ours-2rank.log"), NULL);
    assert_non_null(src);
    char *w = strstr(src, from);
    assert_non_null(w);
    char *o = malloc(strlen(src) + strlen(to) + 1);
    assert_non_null(o);
    sprintf(o, "%.*s%s%s", (int)(w - src), src, to, w + strlen(from));
    char *p = ts_temp_file(o, strlen(o), ".log");
    free(o), free(src);
    return p;
}

static void test_corrupt_anchor_is_blamed(void **st)
{
    (void)st;
    /* digits run together in the anchor's mono_ns, 5.5 hours off (once
     * its rounds were dated 5.5 hours early, silently) or centuries off
     * (once the rounds were blamed: "a corrupt ts") */
    static const char *const runs[] = {"pid=5100 mono_ns=20000021522000 ", "pid=5100 mono_ns=2000002152178740000 "};
    for (int k = 0; k < 2; k++) {
        char *p = anchor_edited("pid=5100 mono_ns=2000002152 ", runs[k]);
        const char *sp[] = {"spans", p, "--view", "rounds", NULL};
        char *out, *err;
        assert_int_equal(ts_run_cli(sp, &out, &err), 0);
        if (!ts_contains(out, "  - (its clock anchor's mono_ns is corrupt: far from its own line's and from this)\n"))
            fail_msg("%s", out);
        assert_false(ts_contains(out, "a corrupt ts"));
        assert_false(ts_contains(out, "T06:"));
        assert_true(ts_contains(out, "2026-08-22T12:00:05.")); /* the second, sound anchor's */
        free(out), free(err);
        json_t *j = run_timeline(p, NULL, 0, &err);
        assert_non_null(j);
        if (!ts_contains(err, ":18: 3 events carry no wall_ns: their clock anchor's mono_ns is corrupt (far from its "
                              "own line's [mono_ns=] and from theirs)\n"))
            fail_msg("%s", err);
        json_decref(j);
        free(err);
        unlink(p);
        free(p);
    }
    /* the line's prefix is the corrupt reading: the anchor is sound, and
     * its rounds keep their times */
    char *p = anchor_edited("[mono_ns=2000002157][T0x7f0000005100][TIMING] clock_anchor",
                            "[mono_ns=2000002157000000000][T0x7f0000005100][TIMING] clock_anchor");
    const char *sp[] = {"spans", p, "--view", "rounds", NULL};
    char *out, *err;
    assert_int_equal(ts_run_cli(sp, &out, &err), 0);
    assert_false(ts_contains(out, "corrupt"));
    assert_true(ts_contains(out, "2026-08-22T12:00:00.000000095Z"));
    free(out), free(err);
    unlink(p);
    free(p);
}

static void test_torn_span_counted(void **st)
{
    (void)st;
    char *src = ts_slurp(ts_fixture("ours-1rank-4pass.log"), NULL);
    assert_non_null(src);
    /* cut one chip.run.bind span short: the rest of its line is lost */
    char *s = strstr(src, "name=chip.run.bind ts=");
    s = strstr(s, " dur=");
    memcpy(s, "\n     ", 6);
    char *p = ts_temp_file(src, strlen(src), ".log");
    char *err;
    json_t *j = run_timeline(p, NULL, 0, &err);
    assert_non_null(j);
    assert_true(ts_contains(err, "hbg timeline: malformed [STRACE] records (not drawn): 1\n"));
    assert_true(ts_contains(err, "malformed [STRACE] span: expected dur= (the span is torn); not drawn"));
    assert_true(ts_contains(err, "hbg timeline: bind passes without a chip.run.bind span: 1\n"));
    json_t *ev = json_object_get(j, "traceEvents");
    assert_int_equal(find(ev, "chip.run.bind", "span", 4242, -1, NULL), 3);
    json_decref(j);
    free(err);
    unlink(p);
    free(p);
    free(src);
}

/* A log that ends inside a record (a full disk, a crash, a copy taken
 * while it was written) lost the record's end: its last value may be cut
 * ("dur=400" of "dur=40016810"), and a device span cut before its
 * "clk=dev" reads as a host span at ts=0 that stretches the axis over the
 * host's uptime. Such a record is malformed, as one cut inside the log. */
static void test_log_cut_inside_its_last_record(void **st)
{
    (void)st;
    char *src = ts_slurp(ts_fixture("hbg-grammar-1rank-3round.log"), NULL);
    assert_non_null(src);
    static const char *const cuts[] = {"device_wall ts=0 dur=400", "device_wall ts=0 dur=40016810 ",
                                       "name=chip.run.runner_run ts=5125334366526 dur=4001"};
    for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; k++) {
        const char *at = strstr(src, cuts[k]);
        assert_non_null(at);
        size_t n = (size_t)(at - src) + strlen(cuts[k]);
        char *p = ts_temp_file(src, n, ".log");
        char *err;
        json_t *j = run_timeline(p, NULL, 0, &err);
        assert_non_null(j);
        assert_true(ts_contains(err, "hbg timeline: malformed [STRACE] records (not drawn): 1\n"));
        assert_true(ts_contains(err, "the log ends inside the record (cut short: no line end after it)"));
        json_t *ev = json_object_get(j, "traceEvents");
        /* nothing at the device clock's 0 on the host's axis, no runner_run cut short */
        size_t i;
        json_t *e;
        json_array_foreach(ev, i, e)
        {
            json_t *ts = json_object_get(e, "ts");
            if (ts)
                assert_true(dnum(ts) > 5e9);
        }
        assert_int_equal(find(ev, "chip.run.runner_run", "span", 31337, -1, NULL), 0);
        json_decref(j);
        free(err);
        unlink(p);
        free(p);
    }
    /* a record whole but for its '\n' (a CRLF line cut between CR and LF)
     * is whole: drawn as it is (here, with no runner_run, not placed) */
    const char *at = strstr(src, "device_wall ts=0 dur=40016810 clk=dev\n");
    assert_non_null(at);
    size_t n = (size_t)(at - src) + strlen("device_wall ts=0 dur=40016810 clk=dev");
    char *cr = malloc(n + 1);
    assert_non_null(cr);
    memcpy(cr, src, n);
    cr[n] = '\r';
    char *p = ts_temp_file(cr, n + 1, ".log");
    char *err;
    assert_int_equal(ts_run_cli((const char *[]){"timeline", p, "-o", "/dev/null", NULL}, NULL, &err), 0);
    assert_false(ts_contains(err, "malformed"));
    assert_true(ts_contains(err, "device"));
    free(err);
    unlink(p);
    free(p);
    free(cr);
    free(src);
}

/* A pass whose only line is cut by the log's end (its key read, its
 * line end lost) has no segment to draw: it is said as malformed and
 * truncated, and is no pass "drawn on thread P" without its span, nor
 * counted among them. */
static void test_pass_with_nothing_to_draw(void **st)
{
    (void)st;
    char *src = ts_slurp(ts_fixture("hbg-grammar-1rank-3round.log"), NULL);
    assert_non_null(src);
    const char *at = strstr(src, "bytes=40859999040 pid=31337 inv=3\n");
    assert_non_null(at);
    size_t n = (size_t)(at - src) + strlen("bytes=40859999040 pid=31337 inv=3");
    char *p = ts_temp_file(src, n, ".log");
    char *err;
    json_t *j = run_timeline(p, NULL, 0, &err);
    assert_non_null(j);
    assert_true(ts_contains(err, "the log ends inside the record (cut short: no line end after it)"));
    assert_true(ts_contains(err, "the log ends inside pass pid=31337 inv=3"));
    assert_false(ts_contains(err, "has no chip.run.bind span"));
    assert_false(ts_contains(err, "bind passes without a chip.run.bind span"));
    assert_true(ts_contains(err, " 20 bind segments, "));
    json_decref(j);
    free(err);
    unlink(p);
    free(p);
    free(src);
}

/* src with the first `from` after `after` replaced by `to` (malloc'd). */
static char *swap_after(char *src, const char *after, const char *from, const char *to)
{
    char *at = strstr(strstr(src, after), from);
    assert_non_null(at);
    size_t pre = (size_t)(at - src), nf = strlen(from), nt = strlen(to), rest = strlen(at + nf);
    char *o = malloc(pre + nt + rest + 1);
    assert_non_null(o);
    memcpy(o, src, pre);
    memcpy(o + pre, to, nt);
    memcpy(o + pre + nt, at + nf, rest + 1);
    free(src);
    return o;
}

/* A bind segment that does not lie inside its pass's chip.run.bind span
 * (a corrupt dur_ns, a clock read wrong) is drawn as the log has it, but
 * marked and counted, as a record outside its bind span is: drawn
 * silently it broke its lane's nesting, across the runner_run after it. */
static void test_segment_outside_its_bind_span(void **st)
{
    (void)st;
    char *src = ts_slurp(ts_fixture("ours-1rank-4pass.log"), NULL);
    assert_non_null(src);
    /* the line's own outside_bind_span is kept, as logged_outside_bind_span */
    src = swap_after(src, "bind phase=arena_h2d start_ns=5000000134979", " dur_ns=900 ",
                     " dur_ns=9000 outside_bind_span=7 ");
    char *p = ts_temp_file(src, strlen(src), ".log");
    char *err;
    keep_none = true;
    json_t *j = run_timeline(p, NULL, 0, &err);
    keep_none = false;
    assert_non_null(j);
    assert_true(ts_contains(err, ":13: bind segment arena_h2d of pass pid=4242 inv=1 ends after its chip.run.bind "
                                 "span (line 19); drawn, marked outside_bind_span\n"));
    assert_true(ts_contains(
        err, "hbg timeline: bind segments outside their chip.run.bind span (drawn, marked outside_bind_span): 1\n"));
    json_t *ev = json_object_get(j, "traceEvents"), *e;
    size_t i, marked = 0;
    json_array_foreach(ev, i, e)
    {
        json_t *o = json_object_get(json_object_get(e, "args"), "outside_bind_span");
        if (!o)
            continue;
        assert_true(json_is_true(o));
        assert_int_equal(json_integer_value(json_object_get(json_object_get(e, "args"), "logged_outside_bind_span")),
                         7);
        assert_string_equal(json_string_value(json_object_get(e, "name")), "arena_h2d");
        assert_string_equal(json_string_value(json_object_get(e, "cat")), "bind");
        marked++;
    }
    assert_int_equal(marked, 1);
    json_decref(j);
    free(err);
    unlink(p);
    free(p);
    free(src);
}

/* Every event's number `key`, where it has one, in [lo, hi). */
static void every_within(json_t *ev, const char *key, double lo, double hi)
{
    size_t i;
    json_t *e;
    json_array_foreach(ev, i, e)
    {
        json_t *v = json_object_get(e, key);
        if (v)
            assert_true(json_number_value(v) >= lo && json_number_value(v) < hi);
    }
}

/* A pass that hbg phases leaves out of its statistics for a defect is
 * drawn all the same, with what it has: its warning, worded as phases
 * words it ("excluded"), said the opposite of what the trace shows. Each
 * says what is drawn; a pass that has no place on the trace is "not
 * drawn". The segments drawn are counted from the trace. */
static void test_pass_defects_say_what_is_drawn(void **st)
{
    (void)st;
    static const struct {
        const char *log;
        const char *warning; /* after the log's name */
        const char *seg;     /* a segment of every pass but a defective one's */
        size_t nseg;         /* how many of it are drawn */
    } c[] = {
        {"ours-missing-close.log",
         ":24: pass pid=4242 inv=2 has no arena_h2d (its closing segment); drawn without it\n", "host_orch", 4},
        {"ours-missing-close.log", NULL, "arena_h2d", 3},
        {"ours-setdiff.log", ":52: unknown segment pin_mem (not one of this version's); drawn under its own name\n",
         "pin_mem", 1},
        {"ours-setdiff.log",
         ":44: pass pid=4242 inv=3 has other segments than the other 3 passes (missing: none; extra: pin_mem); drawn "
         "as it is\n",
         "host_orch", 4},
        {"ours-duplicate.log",
         ":52: segment graph_upload appears twice in pass pid=4242 inv=3 (first at line 51); drawn from the first\n",
         "graph_upload", 4},
        {"ours-dropped.log",
         ":56: host-orch record_node dropped=4 in pass pid=4242 inv=3 (the per-op record pool overflowed); drawn\n",
         "host_orch", 4},
        /* the original runtime's pass, without its span: no inv, no place */
        {"original-truncated.log",
         ":63: the log ends inside pass pid=5001 thread 0x7f3c9a7fc650 (no arena_h2d): truncated pass not drawn\n",
         NULL, 0},
        {"original-truncated.log",
         ":70: malformed bind line: the log ends inside the record (cut short: no line end after it); not drawn\n",
         NULL, 0},
    };
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
        char lp[4096], *err;
        snprintf(lp, sizeof lp, "%s", ts_fixture(c[k].log));
        json_t *j = run_timeline(lp, NULL, 0, &err);
        assert_non_null(j);
        if (c[k].warning) {
            char want[8192];
            snprintf(want, sizeof want, "hbg timeline: warning: %s%s", lp, c[k].warning);
            if (!ts_contains(err, want))
                fail_msg("%s: no \"%s\" in:\n%s", c[k].log, want, err);
        }
        assert_false(ts_contains(err, "excluded"));
        assert_false(ts_contains(err, "ignored"));
        if (c[k].seg)
            assert_int_equal(find(json_object_get(j, "traceEvents"), c[k].seg, "bind", 4242, -1, NULL), c[k].nseg);
        json_decref(j);
        free(err);
    }
}

/* The warnings about the log as a whole that timeline shares with hbg
 * phases say what timeline does too: passes out of order are each drawn
 * where their times put them (no cold pass is chosen), and a pid anchored
 * twice is one process whose events each take the anchor in force. */
static void test_log_warnings_say_what_is_drawn(void **st)
{
    (void)st;
    char text[2048];
    size_t n = 0;
    static const unsigned inv[] = {2, 1, 3};
    for (size_t i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++)
            n += (size_t)snprintf(text + n, sizeof text - n,
                                  "[mono_ns=1][T0x1][TIMING] bind_trace_end: [bind_trace.c:24] bind phase=%s "
                                  "start_ns=%zu dur_ns=1 pid=9 inv=%u\n",
                                  k == 0   ? "host_orch"
                                  : k == 1 ? "graph_upload"
                                           : "arena_h2d",
                                  10 * i + (size_t)k, inv[i]);
    char *lp = ts_temp_file(text, n, ".log"), *err;
    json_t *j = run_timeline(lp, NULL, 0, &err);
    assert_non_null(j);
    char want[8192];
    snprintf(want, sizeof want,
             "hbg timeline: warning: %s:1: pass pid=9 inv=2 comes before its rank's pass inv=1 (line 4): the passes "
             "are out of order; each is drawn at its own time\n",
             lp);
    assert_true(ts_contains(err, want));
    assert_int_equal(find(json_object_get(j, "traceEvents"), "host_orch", "bind", 9, -1, NULL), 3);
    json_decref(j);
    free(err);
    unlink(lp);
    free(lp);

    char *one = ts_slurp(ts_fixture("ours-1rank-4pass.log"), NULL);
    assert_non_null(one);
    size_t m = strlen(one);
    char *two = malloc(2 * m + 1);
    assert_non_null(two);
    memcpy(two, one, m);
    memcpy(two + m, one, m + 1);
    lp = ts_temp_file(two, 2 * m, ".log");
    j = run_timeline(lp, NULL, 0, &err);
    assert_non_null(j);
    snprintf(want, sizeof want,
             "hbg timeline: warning: %s:84: a second clock anchor for pid=4242 (the first is at line 2): the log holds "
             "two runs (logs put together?), drawn as one process, each event dated by the anchor in force at it\n",
             lp);
    assert_true(ts_contains(err, want));
    assert_false(ts_contains(err, "pooled"));
    json_decref(j);
    free(err);
    unlink(lp);
    free(lp);
    free(two);
    free(one);
}

/* Durations of 2^62 ns (146 years) or more (a wrapped clock, a corrupted
 * digit) are left out with a warning, a span's and a segment's alike:
 * drawn, one would stretch the axis over centuries. Everything else is
 * drawn; `hbg spans` leaves the same spans out with the same warning. */
static void test_long_durations_left_out(void **st)
{
    (void)st;
    char *src = ts_slurp(ts_fixture("ours-1rank-4pass.log"), NULL);
    assert_non_null(src);
    src = swap_after(src, "inv=1 hid=8f3a1c2e9d0b4471 depth=1 name=chip.run.bind ", " dur=135780",
                     " dur=4611686018427387904");
    src = swap_after(src, "inv=2 hid=", " dur=", " dur=18446744073709551615 x=");
    src = swap_after(src, "phase=graph_upload start_ns=5000000168975", " dur_ns=700 ", " dur_ns=4611686018427387904 ");
    /* pass 3: two segments below the bound whose sum reaches it */
    src = swap_after(src, "phase=host_orch start_ns=5000000229883", " dur_ns=1000 ", " dur_ns=2305843009213693952 ");
    src = swap_after(src, "phase=graph_upload start_ns=5000000230884", " dur_ns=500 ", " dur_ns=2305843009213693952 ");
    char *p = ts_temp_file(src, strlen(src), ".log");
    char *err;
    json_t *j = run_timeline(p, NULL, 0, &err);
    assert_non_null(j);
    static const char span_warning[] = ":19: span chip.run.bind has dur=4611686018427387904 (2^62 ns, 146 years, or "
                                       "more: not a duration); left out, with 1 more as long\n";
    assert_true(ts_contains(err, span_warning));
    assert_true(ts_contains(err, ":31: malformed bind line: dur_ns= is 2^62 ns (146 years) or more: not a duration; "
                                 "not drawn\n"));
    assert_true(ts_contains(err, "pass pid=4242 inv=3 has a control-plane sum of 2^62 ns (146 years) or more: no "
                                 "measurement; not drawn\n"));
    assert_false(ts_contains(err, "excluded"));
    json_t *ev = json_object_get(j, "traceEvents");
    assert_int_equal(find(ev, "chip.run.bind", "span", 4242, -1, NULL), 2);
    assert_int_equal(find(ev, "graph_upload", "bind", 4242, -1, NULL), 2);
    assert_int_equal(find(ev, "host_orch", "bind", 4242, -1, NULL), 3);
    /* every drawn duration is a real one: under a second here */
    every_within(ev, "dur", 0, 1e6);
    json_decref(j);
    free(err);
    const char *args[] = {"spans", p, NULL};
    char *out;
    assert_int_equal(ts_run_cli(args, &out, &err), 0);
    assert_true(ts_contains(err, span_warning));
    free(out);
    free(err);
    unlink(p);
    free(p);
    free(src);
}

static json_t *run_per_invocation(const char *lp);

/* src with every mono_ns=, start_ns= and host ts= moved by add ns, and
 * every inv= by inv_add (the stamp line left out). */
static char *shifted(const char *src, uint64_t add, uint64_t inv_add)
{
    size_t n = strlen(src), k = 0;
    char *o = malloc(2 * n + 1);
    assert_non_null(o);
    const char *p = strchr(src, '\n') + 1; /* after the stamp */
    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p + 1) : strlen(p);
        const char *cd = strstr(p, "clk=dev");
        bool dev = cd && cd < p + len;
        for (const char *q = p; q < p + len;) {
            static const char *const keys[] = {"mono_ns=", "start_ns=", " ts=", " inv="};
            int hit = -1;
            for (int j = 0; j < 4 && hit < 0; j++)
                if (!strncmp(q, keys[j], strlen(keys[j])) && !(j == 2 && dev))
                    hit = j;
            if (hit < 0) {
                o[k++] = *q++;
                continue;
            }
            size_t kl = strlen(keys[hit]);
            char *end;
            unsigned long long v = strtoull(q + kl, &end, 10);
            k += (size_t)sprintf(o + k, "%s%llu", keys[hit], v + (hit == 3 ? inv_add : add));
            q = end;
        }
        p += len;
    }
    o[k] = 0;
    return o;
}

/* A start far outside its process's other events (a clock reading run
 * into another number, a wrapped subtraction) is left out, named once:
 * drawn, the trace's axis ran 584 years, the run a sliver at one end.
 * Everything else is drawn, in both views. */
static void test_absurd_starts_left_out(void **st)
{
    (void)st;
    char *src = ts_slurp(ts_fixture("ours-1rank-4pass.log"), NULL);
    assert_non_null(src);
    /* a span's ts and a bind segment's start_ns */
    src = swap_after(src, "inv=3 hid=8f3a1c2e9d0b4471 depth=0 name=chip.run ", " ts=5000000209788", " ts=1844674407300000000");
    src = swap_after(src, "phase=arena_build start_ns=5000000229789", "start_ns=5000000229789",
                     "start_ns=500000022978941");
    char *p = ts_temp_file(src, strlen(src), ".log");
    char *err;
    json_t *j = run_timeline(p, NULL, 0, &err);
    assert_non_null(j);
    assert_true(ts_contains(err, ":45: bind segment arena_build of pid=4242 inv=3 starts at 500000022978941 ns, "
                                 "far from that process's other events (most start in 5000000050803 .. "
                                 "5000000293588 ns) and alone in its invocation: a corrupt clock reading; not drawn, "
                                 "with 1 more as far\n"));
    json_t *ev = json_object_get(j, "traceEvents");
    assert_int_equal(find(ev, "chip.run", "span", 4242, -1, NULL), 3);
    assert_int_equal(find(ev, "arena_build", "bind", 4242, -1, NULL), 3);
    assert_int_equal(find(ev, "args", "bind", 4242, -1, NULL), 4);
    /* every drawn start lies in the run's 0.4 ms */
    every_within(ev, "ts", 5000000000.0, 5000000400.0);
    json_decref(j);
    free(err);

    /* the per-invocation view leaves the span out too */
    j = run_per_invocation(p);
    ev = json_object_get(j, "traceEvents");
    assert_int_equal(find(ev, "chip.run", NULL, -1, -1, NULL), 3);
    json_decref(j);

    /* an invocation whose every span is a corrupt reading (each far from
     * the others) gets no lane of its own in the per-invocation view */
    char *lone = ts_slurp(ts_fixture("ours-1rank-4pass.log"), NULL);
    assert_non_null(lone);
    lone = swap_after(lone, "inv=3 hid=8f3a1c2e9d0b4471 depth=1 name=chip.run.bind ", " ts=5000000209788",
                      " ts=1000000000000000000");
    lone = swap_after(lone, "inv=3 hid=8f3a1c2e9d0b4471 depth=1 name=chip.run.runner_run ", " ts=5000000261488",
                      " ts=2000000000000000000");
    lone = swap_after(lone, "inv=3 hid=8f3a1c2e9d0b4471 depth=0 name=chip.run ", " ts=5000000209788",
                      " ts=3000000000000000000");
    char *lp = ts_temp_file(lone, strlen(lone), ".log");
    j = run_per_invocation(lp);
    ev = json_object_get(j, "traceEvents");
    assert_int_equal(find(ev, "process_name", NULL, -1, -1, NULL), 3);
    assert_int_equal(find(ev, "chip.run", NULL, -1, -1, NULL), 3);
    json_decref(j);
    unlink(lp);
    free(lp);
    free(lone);

    /* a record's start, and the hand-off arrow to it */
    char *rec = ts_slurp(ts_fixture("original-2rank-interleaved.host_phase_records.jsonl"), NULL);
    assert_non_null(rec);
    rec = swap_after(rec, "\"pid\": 4001, \"inv\": 2", "\"start_ns\": 6000000139800, \"end_ns\": 6000000140000",
                     "\"start_ns\": 600000013980000000, \"end_ns\": 600000013980000200");
    char *rp = ts_temp_file(rec, strlen(rec), ".jsonl");
    j = run_timeline(ts_fixture("original-2rank-interleaved.log"), rp, 0, &err);
    assert_non_null(j);
    assert_true(ts_contains(err, ":1: record record_node of pid=4001 inv=2 starts at 600000013980000000 ns, far "
                                 "from that process's other events"));
    every_within(json_object_get(j, "traceEvents"), "ts", 0, 6000001000.0);
    json_decref(j);
    free(err);
    unlink(rp);
    free(rp);
    free(rec);

    /* a second run of the pid two days later, sparse beside the first
     * (one copy of the fixture against nine): kept, its invocations'
     * events lie together */
    char *runs = ts_slurp(ts_fixture("ours-1rank-4pass.log"), NULL), *one = strdup(runs);
    assert_non_null(one);
    for (int r = 1; r <= 10; r++) {
        char *more = shifted(one, r < 10 ? (uint64_t)r * 1000000 : 2 * 86400000000000ull, (uint64_t)r * 10);
        size_t a = strlen(runs), b = strlen(more);
        runs = realloc(runs, a + b + 1);
        assert_non_null(runs);
        memcpy(runs + a, more, b + 1);
        free(more);
    }
    char *rp2 = ts_temp_file(runs, strlen(runs), ".log");
    j = run_timeline(rp2, NULL, 0, &err);
    assert_null(strstr(err, "corrupt clock"));
    assert_int_equal(find(json_object_get(j, "traceEvents"), "chip.run", "span", 4242, -1, NULL), 44);
    json_decref(j);
    free(err);
    unlink(rp2);
    free(rp2);
    free(runs);
    free(one);

    /* an intact log loses nothing */
    j = run_timeline(ts_fixture("ours-1rank-4pass.log"), NULL, 0, &err);
    assert_null(strstr(err, "corrupt clock"));
    assert_int_equal(find(json_object_get(j, "traceEvents"), "chip.run", "span", 4242, -1, NULL), 4);
    json_decref(j);
    free(err);
    unlink(p);
    free(p);
    free(src);
}

/* A log and records file written by `hbg run vector --mode timeline`: the
 * records of bind segments sit beside host_orch and are not flagged, and
 * each segment is drawn once, from the records, not also from its bind
 * line. */
static void test_log_of_hbg_run(void **st)
{
    (void)st;
    char lp[4096], rp[4096], *err;
    snprintf(lp, sizeof lp, "%s", ts_fixture("hbg-run-vector-timeline.log"));
    snprintf(rp, sizeof rp, "%s", ts_fixture("hbg-run-vector-timeline.host_phase_records.jsonl"));
    json_t *j = run_timeline(lp, rp, 0, &err);
    assert_non_null(j);
    assert_true(ts_contains(err, ": 57 events (4 spans, 0 device spans, 0 bind segments, 0 host_orch copies on "
                                 "other threads, 50 records, 0 hand-off arrows of 2 events, 3 lane names)\n"));
    assert_false(ts_contains(err, "outside"));
    assert_false(ts_contains(err, "warning"));
    json_t *ev = json_object_get(j, "traceEvents");
    static const char *const segs[] = {"args", "arena_build", "static_arena", "gm_heap", "shared_mem",
                                       "runtime_init", "host_orch", "graph_upload", "arena_h2d", "host_view_close"};
    for (size_t k = 0; k < sizeof segs / sizeof segs[0]; k++) {
        /* once per pass (two passes), whatever its category */
        assert_int_equal(find(ev, segs[k], NULL, 1500, -1, NULL), 2);
        assert_int_equal(find(ev, segs[k], "bind", -1, -1, NULL), 0);
    }
    assert_int_equal(find(ev, "submit_task", "op", -1, -1, NULL), 14);
    json_decref(j);
    free(err);
}

/* A pass whose chip.run.bind span is missing has its records left out
 * (nothing to place them by): its segments are then drawn from its bind
 * lines, on thread pid, as the warning says, not dropped as if the
 * records had drawn them. */
static void test_records_of_a_pass_without_its_span(void **st)
{
    (void)st;
    char *src = ts_slurp(ts_fixture("hbg-run-vector-timeline.log"), NULL);
    assert_non_null(src);
    char *at = strstr(src, "inv=2 hid=3e8f098e3dc8a45c depth=1 name=chip.run.bind ");
    assert_non_null(at);
    while (at > src && at[-1] != '\n')
        at--;
    char *end = strchr(at, '\n') + 1;
    memmove(at, end, strlen(end) + 1);
    char *p = ts_temp_file(src, strlen(src), ".log");
    char rp[4096], *err;
    snprintf(rp, sizeof rp, "%s", ts_fixture("hbg-run-vector-timeline.host_phase_records.jsonl"));
    json_t *j = run_timeline(p, rp, 0, &err);
    assert_non_null(j);
    assert_true(ts_contains(err, "pid=1500 inv=2 has no chip.run.bind span in "));
    assert_true(ts_contains(err, "bind pass pid=1500 inv=2 has no chip.run.bind span; its segments are drawn on "
                                 "thread 1500\n"));
    assert_true(ts_contains(err, " 10 bind segments, "));
    json_t *ev = json_object_get(j, "traceEvents");
    static const char *const segs[] = {"args", "arena_build", "static_arena", "gm_heap", "shared_mem",
                                       "runtime_init", "host_orch", "graph_upload", "arena_h2d", "host_view_close"};
    for (size_t k = 0; k < sizeof segs / sizeof segs[0]; k++) {
        assert_int_equal(find(ev, segs[k], "op", 1500, 1500, NULL), 1);   /* inv=1's, from the records */
        assert_int_equal(find(ev, segs[k], "bind", 1500, 1500, NULL), 1); /* inv=2's, from its bind line */
    }
    json_decref(j);
    free(err);
    unlink(p);
    free(p);
    free(src);
}

/* Two operations on two threads are a hand-off only when the second starts
 * after the first ended; a span whose parent ran on another thread is one
 * too. */
static void test_handoffs(void **st)
{
    (void)st;
    char *src = ts_slurp(ts_fixture("ours-1rank-4pass.log"), NULL);
    assert_non_null(src);
    /* pass inv=2 binds on thread 4260 while its chip.run stays on 4250 */
    char *s = strstr(src, "tid=4250 inv=2 hid=8f3a1c2e9d0b4471 depth=1 name=chip.run.bind ");
    assert_non_null(s);
    memcpy(s, "tid=4260", 8);
    char *lp = ts_temp_file(src, strlen(src), ".log");
    /* inv=1: 4251 overlaps 4250, no arrow; then 4250 after 4251 ended, one */
    const char *rec =
        "{\"pid\": 4242, \"inv\": 1, \"dropped\": 0, \"records\": ["
        "{\"phase\": \"submit_task\", \"start_ns\": 5000000010000, \"end_ns\": 5000000010400, \"detail\": 0, \"tid\": 4250}, "
        "{\"phase\": \"record_node\", \"start_ns\": 5000000010200, \"end_ns\": 5000000010600, \"detail\": 0, \"tid\": 4251}, "
        "{\"phase\": \"graph_submit\", \"start_ns\": 5000000010600, \"end_ns\": 5000000010800, \"detail\": 0, \"tid\": 4250}]}\n";
    char *rp = ts_temp_file(rec, strlen(rec), ".jsonl");
    char *err;
    json_t *j = run_timeline(lp, rp, 0, &err);
    assert_non_null(j);
    json_t *ev = json_object_get(j, "traceEvents"), *e = NULL;
    assert_int_equal(find(ev, "handoff", "flow", -1, -1, NULL), 4);
    /* the span arrow: from chip.run on 4250, 1 ns into it (both start
     * together), to the middle of chip.run.bind on 4260 */
    assert_int_equal(find(ev, "handoff", "flow", 4242, 4260, &e), 1);
    assert_string_equal(json_string_value(json_object_get(e, "ph")), "f");
    long long id = json_integer_value(json_object_get(e, "id"));
    assert_int_equal(find(ev, "chip.run.bind", "span", 4242, 4260, NULL), 1);
    /* chip.run.bind: ts=5000000145880 dur=53908 */
    assert_true(dnum(json_object_get(e, "ts")) == 5000000172.834);
    size_t i, n = 0;
    json_array_foreach(ev, i, e)
    {
        if (strcmp(json_string_value(json_object_get(e, "name")), "handoff") ||
            json_integer_value(json_object_get(e, "id")) != id || strcmp(json_string_value(json_object_get(e, "ph")), "s"))
            continue;
        assert_int_equal(json_integer_value(json_object_get(e, "tid")), 4250);
        assert_true(dnum(json_object_get(e, "ts")) == 5000000145.881);
        n++;
    }
    assert_int_equal(n, 1);
    /* the operation arrow: record_node (4251) to graph_submit (4250) */
    assert_int_equal(find(ev, "handoff", "flow", 4242, 4251, &e), 1);
    assert_string_equal(json_string_value(json_object_get(e, "ph")), "s");
    assert_true(dnum(json_object_get(e, "ts")) == 5000000010.400);
    assert_true(ts_contains(err, " records, 2 hand-off arrows of 2 events, "));
    json_decref(j);
    free(err);
    unlink(lp);
    unlink(rp);
    free(lp);
    free(rp);
    free(src);
}

static void test_nothing_to_draw(void **st)
{
    (void)st;
    char *p = ts_temp_file("hello\nworld\n", 12, ".log");
    char *err;
    json_t *j = run_timeline(p, NULL, 1, &err);
    assert_null(j);
    assert_true(ts_contains(err, "hbg timeline: nothing to draw: "));
    free(err);
    {
        /* per invocation, no advice to switch on bind lines it would not draw */
        char *o0 = ts_temp_file("", 0, ".json"), *pout0;
        unlink(o0);
        const char *pv[] = {"timeline", p, "--per-invocation", "-o", o0, NULL};
        assert_int_equal(ts_run_cli(pv, &pout0, &err), 1);
        assert_true(ts_contains(err, " has no [STRACE] spans, which --per-invocation draws\n"));
        assert_false(ts_contains(err, "HBG_BIND_BREAKDOWN"));
        free(pout0), free(err), free(o0);
    }
    /* lines to read but nothing with a place on the trace: bind passes
     * without pid/inv; per invocation, spans of the node family only.
     * Such an empty trace is no profile to a viewer: not written, exit 1 */
    char lp[4096], *pout;
    snprintf(lp, sizeof lp, "%s", ts_fixture("original-missing-close-nospans.log"));
    j = run_timeline(lp, NULL, 1, &err);
    assert_null(j);
    assert_true(ts_contains(err, "has no pid/inv and no chip.run.bind span; not drawn"));
    assert_true(ts_contains(err, "hbg timeline: nothing to draw: no span, bind segment or record of "));
    free(err);
    /* a pass whose pid its thread's other passes give, and no span its
     * inv: said as it is, not as a pass without a pid */
    char tp[4096];
    snprintf(tp, sizeof tp, "%s", ts_fixture("original-truncated.log"));
    j = run_timeline(tp, NULL, 0, &err);
    assert_non_null(j);
    assert_true(ts_contains(err, ":63: bind pass pid=5001 thread 0x7f3c9a7fc650 has no chip.run.bind span to give its "
                                 "inv (the original runtime's bind lines carry none); not drawn\n"));
    assert_false(ts_contains(err, "has no pid/inv"));
    json_decref(j);
    free(err);
    /* nor to standard output: a script that pipes it on must not take an
     * empty trace for the result */
    const char *so[] = {"timeline", lp, "-o", "-", NULL};
    assert_int_equal(ts_run_cli(so, &pout, &err), 1);
    assert_true(ts_contains(err, "hbg timeline: nothing to draw: no span, bind segment or record of "));
    assert_string_equal(pout, "");
    free(pout);
    free(err);
    /* nor through a name of standard output */
    const char *sn[] = {"timeline", lp, "-o", "/dev/stdout", NULL};
    assert_int_equal(ts_run_cli(sn, &pout, &err), 1);
    assert_true(ts_contains(err, "hbg timeline: nothing to draw: no span, bind segment or record of "));
    assert_string_equal(pout, "");
    free(pout);
    free(err);
    /* per invocation the same log's bind lines are named, not missed */
    char *o = ts_temp_file("", 0, ".json");
    unlink(o);
    const char *pl[] = {"timeline", lp, "--per-invocation", "-o", o, NULL};
    assert_int_equal(ts_run_cli(pl, &pout, &err), 1);
    assert_true(ts_contains(err, " has no [STRACE] spans, which --per-invocation draws (its 4 bind passes are not "
                                 "drawn in that view)\n"));
    assert_false(ts_contains(err, "no bind-phase lines"));
    assert_int_equal(access(o, F_OK), -1);
    free(pout);
    free(err);
    snprintf(lp, sizeof lp, "%s", ts_fixture("spans-original-node.log"));
    const char *pa[] = {"timeline", lp, "--per-invocation", "-o", o, NULL};
    assert_int_equal(ts_run_cli(pa, &pout, &err), 1);
    assert_true(ts_contains(err, "carry no run identity and are left out"));
    assert_true(ts_contains(err, "hbg timeline: nothing to draw: "));
    assert_int_equal(access(o, F_OK), -1);
    free(pout);
    free(err);
    const char *pso[] = {"timeline", lp, "--per-invocation", "-o", "-", NULL};
    assert_int_equal(ts_run_cli(pso, &pout, &err), 1);
    assert_true(ts_contains(err, "hbg timeline: nothing to draw: "));
    assert_string_equal(pout, "");
    free(pout);
    free(err);
    free(o);
    unlink(p);
    free(p);
    const char *a[] = {"timeline", "x.log", NULL};
    char *out;
    assert_int_equal(ts_run_cli(a, &out, &err), 2);
    assert_string_equal(err, "hbg timeline: -o OUT.json is required (see `hbg timeline --help`)\n");
    free(out);
    free(err);
    /* the help names the limit on --records files that the command holds to */
    const char *h[] = {"timeline", "--help", NULL};
    assert_int_equal(ts_run_cli(h, &out, &err), 0);
    assert_true(ts_contains(out, "  --records FILE  a host_phase_records.jsonl (repeatable, up to 64 files, each\n"));
    /* out of memory is exit 2 too, never a line skipped (docs/timeline.md) */
    assert_true(ts_contains(out, "2 usage error, unreadable input, out of\nmemory or a failed write\n"));
    free(out);
    free(err);
}

/* To standard output the trace is held until complete, then written:
 * the same bytes as to a file. Where it cannot be held, the command says
 * so and writes nothing. */
static void test_standard_output_whole_or_nothing(void **st)
{
    (void)st;
    char lp[4096], *out, *err, *fout, *ferr;
    snprintf(lp, sizeof lp, "%s", ts_fixture("spans-ours-2rank.log"));
    char *o = ts_temp_file("", 0, ".json");
    const char *f[] = {"timeline", lp, "-o", o, NULL}, *a[] = {"timeline", lp, "-o", "-", NULL};
    assert_int_equal(ts_run_cli(f, &fout, &ferr), 0);
    assert_int_equal(ts_run_cli(a, &out, &err), 0);
    char *want = ts_slurp(o, NULL);
    assert_non_null(want);
    assert_true(strlen(want) > 1000);
    assert_string_equal(out, want);
    /* standard output is named as such, not as a file "-" */
    assert_true(ts_contains(err, "hbg timeline: wrote standard output: "));
    assert_false(ts_contains(err, "wrote -"));
    free(out), free(err), free(fout), free(ferr), free(want);
    const char *old = getenv("TMPDIR");
    char *keep = old ? strdup(old) : NULL;
    char *dir = ts_tempdir("tl-stdout");
    char gone[4200];
    snprintf(gone, sizeof gone, "%s/none", dir);
    assert_int_equal(setenv("TMPDIR", gone, 1), 0);
    int rc = ts_run_cli(a, &out, &err);
    if (keep)
        setenv("TMPDIR", keep, 1);
    else
        unsetenv("TMPDIR");
    free(keep);
    assert_int_equal(rc, 2);
    char msg[8192];
    snprintf(msg, sizeof msg,
             "hbg timeline: cannot create a temporary file in %s to hold standard output until it is complete: No "
             "such file or directory\n",
             gone);
    assert_true(ts_contains(err, msg));
    assert_string_equal(out, "");
    free(out), free(err);
    ts_rmtree(dir);
    unlink(o);
    free(o);
}

/* Runs `hbg timeline FIFO -o OUT` on a FIFO in dir that no one writes,
 * with TMPDIR set to tmpdir (NULL: as it is): the command must end at
 * once, exit 2, saying want on stderr, not wait on the log first. */
static void refused_before_the_fifo_is_read(const char *dir, const char *o, const char *tmpdir, const char *want)
{
    char fifo[4200];
    snprintf(fifo, sizeof fifo, "%s/log.fifo", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    const char *old = getenv("TMPDIR");
    char *keep = old ? strdup(old) : NULL;
    if (tmpdir)
        assert_int_equal(setenv("TMPDIR", tmpdir, 1), 0);
    const char *argv[] = {getenv("HBG_CLI"), "timeline", fifo, "-o", o, NULL};
    char *out = NULL, *err = NULL;
    int rc = ts_exec_limit(NULL, argv, NULL, &out, &err, 10);
    if (keep)
        setenv("TMPDIR", keep, 1);
    else
        unsetenv("TMPDIR");
    free(keep);
    if (rc != 2)
        fail_msg("status %d (-2: still waiting on the log after 10 s), stderr '%s'", rc, err);
    assert_string_equal(err, want);
    assert_string_equal(out, "");
    free(out), free(err);
}

/* An output that cannot be created fails the command before the log is
 * read, as hbg fit's and hbg compare's plots do: a log on a FIFO that no
 * one writes yet (or a long one) was read first, and only then was the
 * output found to be in a folder that does not exist. */
static void test_output_is_checked_before_the_log_is_read(void **st)
{
    (void)st;
    char *dir = ts_tempdir("tl-early");
    char o[4200], msg[8400];
    snprintf(o, sizeof o, "%s/none/trace.json", dir);
    snprintf(msg, sizeof msg, "hbg timeline: cannot create %s: No such file or directory\n", o);
    refused_before_the_fifo_is_read(dir, o, NULL, msg);
    ts_rmtree(dir);
}

/* Standard output that cannot be held in a temporary ($TMPDIR missing)
 * fails before the log is read too, as a file in a missing folder does:
 * a log on a FIFO that no one writes was waited for first. */
static void test_stdout_spool_is_checked_before_the_log_is_read(void **st)
{
    (void)st;
    char *dir = ts_tempdir("tl-early-spool");
    char gone[4200], msg[8400];
    snprintf(gone, sizeof gone, "%s/none", dir);
    snprintf(msg, sizeof msg,
             "hbg timeline: cannot create a temporary file in %s to hold standard output until it is complete: No "
             "such file or directory\n",
             gone);
    refused_before_the_fifo_is_read(dir, "-", gone, msg);
    ts_rmtree(dir);
}

/* A pass writes one records line: the same pass in a second records file
 * (a copy, a file given under two directories) is skipped there, named
 * with the first, as a second line in one file is: drawn again, each
 * operation lay on its own copy. Passes the first file lacks are kept. */
static void test_a_pass_in_two_records_files(void **st)
{
    (void)st;
    char lp[4096], *err;
    snprintf(lp, sizeof lp, "%s", ts_fixture("hbg-run-vector-timeline.log"));
    size_t n;
    char *text = ts_slurp(ts_fixture("hbg-run-vector-timeline.host_phase_records.jsonl"), &n);
    assert_non_null(text);
    /* the first file holds the first pass alone, the second every pass */
    char *nl = strchr(text, '\n');
    char *r1 = ts_temp_file(text, (size_t)(nl + 1 - text), ".jsonl"), *r2 = ts_temp_file(text, n, ".jsonl");
    char *o = ts_temp_file("", 0, ".json");
    const char *a[] = {"timeline", lp, "--records", r1, "--records", r2, "-o", o, NULL};
    char *out;
    assert_int_equal(ts_run_cli(a, &out, &err), 0);
    char want[8192];
    snprintf(want, sizeof want, "%s:1: a second records line for pid=", r2);
    assert_true(ts_contains(err, want));
    snprintf(want, sizeof want, " (the first is %s:1); line skipped\n", r1);
    assert_true(ts_contains(err, want));
    assert_true(ts_contains(err, "hbg timeline: records lines not in the schema (skipped): 1\n"));
    char *s = ts_slurp(o, NULL);
    json_t *j = json_loads(s, 0, NULL);
    assert_non_null(j);
    /* every record once: as many as with the second file alone */
    json_t *ev = json_object_get(j, "traceEvents");
    size_t twice = find(ev, NULL, "op", -1, -1, NULL);
    free(err);
    json_t *alone = run_timeline(lp, r2, 0, &err);
    assert_non_null(alone);
    assert_int_equal(twice, find(json_object_get(alone, "traceEvents"), NULL, "op", -1, -1, NULL));
    assert_true(twice > 0);
    json_decref(alone);
    json_decref(j);
    free(s), free(out), free(err);
    unlink(o), unlink(r1), unlink(r2);
    free(o), free(r1), free(r2), free(text);
}

static void test_records_reader(void **st)
{
    (void)st;
    const char *text = "{\"pid\": 1, \"inv\": 2, \"dropped\": 0, \"records\": [{\"phase\": \"submit_task\", "
                       "\"start_ns\": 10, \"end_ns\": 20, \"detail\": 4294967296, \"tid\": 3}]}\r\n"
                       "\n"
                       "{\"pid\": 1, \"inv\": 3, \"dropped\": 0, \"records\": [{\"phase\": \"x\", \"start_ns\": 20, "
                       "\"end_ns\": 10, \"detail\": 0, \"tid\": 3}]}\n"
                       "{\"pid\": 1, \"inv\": 4, \"dropped\": 0, \"records\": [{\"phase\": \"x\", \"start_ns\": "
                       "18446744073709551616, \"end_ns\": 10, \"detail\": 0, \"tid\": 3}]}\n"
                       "[1, 2]\n"
                       "{\"pid\": 1, \"inv\": 5, \"dropped\": 2, \"records\": []}";
    rc_file f;
    dg_list w;
    dg_init(&w, 0);
    assert_int_equal(rc_parse(&f, "r.jsonl", text, strlen(text), &w), HBG_OK);
    assert_int_equal(f.nline, 2);
    assert_int_equal(f.nbad, 3);
    assert_int_equal(f.line[0].lineno, 1);
    assert_int_equal(f.line[0].n, 1);
    assert_true(f.rec[0].detail == 4294967296ull);
    assert_string_equal(f.phase[f.rec[0].phase], "submit_task");
    assert_int_equal(f.line[1].lineno, 6);
    assert_int_equal(f.line[1].dropped, 2);
    assert_int_equal(w.n, 3);
    assert_string_equal(w.msg[0], "r.jsonl:3: record 0 ends before it starts; line skipped");
    assert_string_equal(w.msg[1], "r.jsonl:4: record 0: \"start_ns\" is a number past 64 bits (expected an integer "
                                  ">= 0); line skipped");
    assert_string_equal(w.msg[2], "r.jsonl:5: expected a JSON object; line skipped");
    rc_free(&f);
    dg_free(&w);
}

/* The name and sort index of process lane pid ("process_name" /
 * "process_sort_index" metadata). */
static void lane(json_t *ev, long long pid, const char **name, long long *sort)
{
    size_t i;
    json_t *e;
    *name = NULL;
    *sort = -1;
    json_array_foreach(ev, i, e)
    {
        const char *n = json_string_value(json_object_get(e, "name"));
        if (strcmp(json_string_value(json_object_get(e, "ph")), "M") ||
            json_integer_value(json_object_get(e, "pid")) != pid)
            continue;
        if (!strcmp(n, "process_name"))
            *name = json_string_value(json_object_get(json_object_get(e, "args"), "name"));
        else if (!strcmp(n, "process_sort_index"))
            *sort = json_integer_value(json_object_get(json_object_get(e, "args"), "sort_index"));
    }
}

/* pid 5200 writes first, but hbg run forks rank 0 first: 5100 is rank 0
 * here as in hbg run's output and in hbg spans. */
static void test_rank_lanes_as_hbg_run(void **st)
{
    (void)st;
    char lp[4096], *err, *out;
    snprintf(lp, sizeof lp, "%s", ts_fixture("spans-ours-2rank.log"));
    json_t *j = run_timeline(lp, NULL, 0, &err);
    assert_non_null(j);
    free(err);
    json_t *ev = json_object_get(j, "traceEvents");
    const char *name;
    long long sort;
    lane(ev, 5100, &name, &sort);
    assert_string_equal(name, "rank 0 (pid 5100)");
    assert_int_equal(sort, 0);
    lane(ev, 5200, &name, &sort);
    assert_string_equal(name, "rank 1 (pid 5200) - no clock anchor");
    assert_int_equal(sort, 2);
    lane(ev, 1000005200, &name, &sort);
    assert_string_equal(name, "rank 1 (pid 5200) device: device-clock spans, placed at the start of runner_run");
    assert_int_equal(sort, 3);
    json_decref(j);
    const char *a[] = {"spans", lp, NULL};
    assert_int_equal(ts_run_cli(a, &out, &err), 0);
    assert_true(ts_contains(out, "ranks   0 = pid 5100, 1 = pid 5200"));
    free(out);
    free(err);
}

/* Two runs of one command put together (cat a.log b.log): each run's
 * ranks are numbered among its own processes, as hbg run numbered them,
 * and each lane names its run by its [stamp] line; the second run's pids
 * are lower than the first's, so numbered over the log they were ranks 0
 * and 2, named alike. Lanes are sorted run by run. The per-invocation view
 * names its lanes alike. */
static const char two_runs_log[] =
    "[stamp] 1a2b3c4 hbg run qwen --rounds 1 --ranks 2\n"
    "[STRACE] v=1 pid=5200 tid=1 inv=1 hid=00000000000000ab depth=0 name=chip.run ts=2000 dur=500\n"
    "[STRACE] v=1 pid=5100 tid=1 inv=1 hid=00000000000000ab depth=0 name=chip.run ts=1000 dur=500\n"
    "[stamp] 1a2b3c4 hbg run qwen --rounds 1 --ranks 2\n"
    "[STRACE] v=1 pid=5050 tid=1 inv=1 hid=00000000000000ab depth=0 name=chip.run ts=9000 dur=500\n"
    "[STRACE] v=1 pid=5150 tid=1 inv=1 hid=00000000000000ab depth=0 name=chip.run ts=9100 dur=500\n";

static void test_two_runs_ranked_apart(void **st)
{
    (void)st;
    char *lp = ts_temp_file(two_runs_log, strlen(two_runs_log), ".log"), *err;
    json_t *j = run_timeline(lp, NULL, 0, &err);
    assert_non_null(j);
    assert_true(ts_contains(err, ".log:4: the [stamp] line again (the first is at line 1): the log holds two runs of "
                                 "the same command (logs put together?), kept apart: each run's processes are ranked "
                                 "among themselves\n"));
    free(err);
    json_t *ev = json_object_get(j, "traceEvents");
    static const struct {
        long long pid;
        const char *name;
        long long sort;
    } want[] = {{5100, "rank 0 (pid 5100), run 1 (stamp at line 1) - no clock anchor", 0},
                {5200, "rank 1 (pid 5200), run 1 (stamp at line 1) - no clock anchor", 2},
                {5050, "rank 0 (pid 5050), run 2 (stamp at line 4) - no clock anchor", 4},
                {5150, "rank 1 (pid 5150), run 2 (stamp at line 4) - no clock anchor", 6}};
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        const char *name;
        long long sort;
        lane(ev, want[k].pid, &name, &sort);
        assert_non_null(name);
        assert_string_equal(name, want[k].name);
        assert_int_equal(sort, want[k].sort);
    }
    json_decref(j);
    j = run_per_invocation(lp);
    ev = json_object_get(j, "traceEvents");
    json_t *e;
    /* lanes in (pid, inv) order: 5050 is the first */
    assert_int_equal(find(ev, "process_name", NULL, 1, 0, &e), 1);
    assert_true(ts_contains(json_string_value(json_object_get(json_object_get(e, "args"), "name")),
                            " inv=1 (pid 5050, rank 0, run 2 (stamp at line 4))"));
    assert_int_equal(find(ev, "process_name", NULL, 4, 0, &e), 1);
    assert_true(ts_contains(json_string_value(json_object_get(json_object_get(e, "args"), "name")),
                            " inv=1 (pid 5200, rank 1, run 1 (stamp at line 1))"));
    json_decref(j);
    unlink(lp);
    free(lp);
}

/* The wall time of each host event comes from the anchor in force at its
 * record: pid 5100 anchors after its first decode round and again after
 * its second (5 s later); 5200 never does. */
static void test_anchor_in_force(void **st)
{
    (void)st;
    char lp[4096], *err;
    snprintf(lp, sizeof lp, "%s", ts_fixture("spans-ours-2rank.log"));
    /* the anchors and the chip.run spans of pid 5100, from the fixture's lines */
    char *text = ts_slurp(lp, NULL);
    assert_non_null(text);
    unsigned long long amono[2], awall[2], ts[5] = {0};
    size_t aline[2], rline[5] = {0}, na = 0, line = 0;
    for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
        line++;
        char *p = strstr(l, "[CLOCK_ANCHOR] v=1 pid=5100 ");
        if (p) {
            assert_int_equal(sscanf(p, "[CLOCK_ANCHOR] v=1 pid=5100 mono_ns=%llu wall_ns=%llu", &amono[na], &awall[na]), 2);
            aline[na++] = line;
        }
        unsigned long long inv, t0;
        p = strstr(l, "[STRACE] v=1 pid=5100 ");
        if (p && strstr(p, " name=chip.run ts=") &&
            sscanf(p, "[STRACE] v=1 pid=5100 tid=%*u inv=%llu hid=%*s depth=0 name=chip.run ts=%llu", &inv, &t0) == 2) {
            ts[inv] = t0;
            rline[inv] = line;
        }
    }
    free(text);
    assert_int_equal(na, 2);
    json_t *j = run_timeline(lp, NULL, 0, &err);
    assert_non_null(j);
    assert_true(ts_contains(err, "6 events precede their process's first clock anchor"));
    free(err);
    json_t *ev = json_object_get(j, "traceEvents"), *e;
    size_t i, seen = 0;
    json_array_foreach(ev, i, e)
    {
        if (json_integer_value(json_object_get(e, "pid")) != 5100 ||
            strcmp(json_string_value(json_object_get(e, "name")), "chip.run"))
            continue;
        json_t *args = json_object_get(e, "args");
        long long inv = json_integer_value(json_object_get(args, "inv"));
        /* the latest anchor before the record, if any */
        int k = -1;
        for (int m = 0; m < 2; m++)
            if (aline[m] < rline[inv])
                k = m;
        json_t *w = json_object_get(args, "wall_ns");
        if (k < 0) {
            assert_null(w);
            assert_null(json_object_get(args, "utc"));
        } else {
            char want[32];
            snprintf(want, sizeof want, "%llu", awall[k] + ts[inv] - amono[k]);
            assert_string_equal(json_string_value(w), want);
            assert_non_null(json_string_value(json_object_get(args, "utc")));
        }
        seen++;
    }
    assert_int_equal(seen, 4);
    /* the utc strings agree with hbg spans' */
    const char *a[] = {"spans", lp, "--view", "rounds", "--format", "json", NULL};
    char *out;
    assert_int_equal(ts_run_cli(a, &out, &err), 0);
    json_t *r = json_loads(out, 0, NULL);
    assert_non_null(r);
    json_t *row;
    json_array_foreach(json_object_get(r, "rounds"), i, row)
    {
        json_t *u = json_object_get(row, "start_utc");
        long long pid = json_integer_value(json_object_get(row, "pid"));
        long long inv = json_integer_value(json_object_get(row, "inv"));
        size_t k;
        json_array_foreach(ev, k, e)
        {
            json_t *args = json_object_get(e, "args");
            if (json_integer_value(json_object_get(e, "pid")) == pid &&
                !strcmp(json_string_value(json_object_get(e, "name")), "chip.run") &&
                json_integer_value(json_object_get(args, "inv")) == inv) {
                if (json_is_null(u))
                    assert_null(json_object_get(args, "utc"));
                else
                    assert_string_equal(json_string_value(json_object_get(args, "utc")), json_string_value(u));
            }
        }
    }
    json_decref(r);
    free(out);
    free(err);
    /* the anchors themselves, in the trace's metadata */
    json_t *ca = json_object_get(json_object_get(j, "otherData"), "clockAnchors");
    assert_int_equal(json_array_size(ca), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(ca, 1), "utc")),
                        "2026-08-22T12:00:05.000000000Z");
    json_decref(j);
}

typedef struct xev {
    long long pid, tid;
    long long ts, end;      /* ns: the microsecond doubles' sums round */
} xev;

static int cmp_xev(const void *a, const void *b)
{
    const xev *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->end > y->end ? -1 : x->end < y->end; /* the enclosing one first */
}

/* Complete events that neither nest in nor follow the one open on their
 * lane: what a flame-graph viewer reports as a nesting error. */
static size_t nesting_errors(json_t *ev)
{
    size_t n = json_array_size(ev), m = 0, bad = 0;
    xev *x = calloc(n ? n : 1, sizeof *x);
    size_t i;
    json_t *e;
    json_array_foreach(ev, i, e)
    {
        if (strcmp(json_string_value(json_object_get(e, "ph")), "X"))
            continue;
        x[m].pid = json_integer_value(json_object_get(e, "pid"));
        x[m].tid = json_integer_value(json_object_get(e, "tid"));
        x[m].ts = llround(dnum(json_object_get(e, "ts")) * 1000);
        x[m].end = x[m].ts + llround(dnum(json_object_get(e, "dur")) * 1000);
        m++;
    }
    qsort(x, m, sizeof *x, cmp_xev);
    long long stack[64];
    size_t sp = 0;
    for (size_t k = 0; k < m; k++) {
        if (k && (x[k].pid != x[k - 1].pid || x[k].tid != x[k - 1].tid))
            sp = 0;
        while (sp && stack[sp - 1] <= x[k].ts)
            sp--;
        if (sp && x[k].end > stack[sp - 1])
            bad++;
        if (sp < 64)
            stack[sp++] = x[k].end;
    }
    free(x);
    return bad;
}

/* One thread runs invocation N+1's bind while N's runner_run is still
 * open: each run goes to a pipeline-slot lane, so every lane nests. */
static void test_pipelined_lanes_nest(void **st)
{
    (void)st;
    char lp[4096], *err;
    snprintf(lp, sizeof lp, "%s", ts_fixture("spans-original-pipelined.log"));
    json_t *j = run_timeline(lp, NULL, 0, &err);
    assert_non_null(j);
    free(err);
    json_t *ev = json_object_get(j, "traceEvents"), *e;
    assert_int_equal(nesting_errors(ev), 0);
    long long lane[5] = {0};
    size_t i;
    json_array_foreach(ev, i, e)
    {
        const char *cat = json_string_value(json_object_get(e, "cat"));
        if (cat && !strcmp(cat, "span") && !strcmp(json_string_value(json_object_get(e, "name")), "chip.run"))
            lane[json_integer_value(json_object_get(json_object_get(e, "args"), "inv"))] =
                json_integer_value(json_object_get(e, "tid"));
    }
    /* runs 1 and 2 overlap: two slots, taken in turn */
    assert_true(lane[1] != lane[2]);
    assert_int_equal(lane[3], lane[1]);
    assert_int_equal(lane[4], lane[2]);
    assert_int_equal(find(ev, "thread_name", NULL, 7001, lane[1], &e), 1);
    assert_string_equal(json_string_value(json_object_get(json_object_get(e, "args"), "name")),
                        "pipeline slot 1 (tid 7002)");
    assert_int_equal(find(ev, "thread_name", NULL, 7001, lane[2], &e), 1);
    assert_string_equal(json_string_value(json_object_get(json_object_get(e, "args"), "name")),
                        "pipeline slot 2 (tid 7002)");
    json_decref(j);

    /* and every other trace of these tests nests too */
    static const char *const logs[][2] = {
        {"original-2rank-interleaved.log", "original-2rank-interleaved.host_phase_records.jsonl"},
        {"original-grammar-2rank-3round.log", "original-grammar-2rank-3round.host_phase_records.jsonl"},
        {"hbg-run-vector-timeline.log", "hbg-run-vector-timeline.host_phase_records.jsonl"},
        {"spans-ours-2rank.log", NULL}};
    for (size_t k = 0; k < sizeof logs / sizeof logs[0]; k++) {
        char rp[4096];
        snprintf(lp, sizeof lp, "%s", ts_fixture(logs[k][0]));
        if (logs[k][1])
            snprintf(rp, sizeof rp, "%s", ts_fixture(logs[k][1]));
        j = run_timeline(lp, logs[k][1] ? rp : NULL, 0, &err);
        assert_non_null(j);
        free(err);
        assert_int_equal(nesting_errors(json_object_get(j, "traceEvents")), 0);
        json_decref(j);
    }
}

/* Writes the [STRACE] lines in spec ("tid depth name ts dur inv", one
 * span a line, ';' between) as a log; returns its path. */
static char *span_log(const char *spec)
{
    char *log = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&log, &n);
    assert_non_null(f);
    char *copy = strdup(spec), *save = NULL;
    for (char *ln = strtok_r(copy, ";", &save); ln; ln = strtok_r(NULL, ";", &save)) {
        unsigned tid, depth, inv;
        char name[64];
        unsigned long long ts, dur;
        assert_int_equal(sscanf(ln, "%u %u %63s %llu %llu %u", &tid, &depth, name, &ts, &dur, &inv), 6);
        fprintf(f, "[STRACE] v=1 pid=9 tid=%u inv=%u hid=00000000000000ab depth=%u name=%s ts=%llu dur=%llu\n", tid,
                inv, depth, name, ts, dur);
    }
    free(copy);
    assert_int_equal(fclose(f), 0);
    char *path = ts_temp_file(log, n, ".log");
    free(log);
    return path;
}

/* The trace of the spans in spec (span_log's form), its stderr in *err;
 * kept for the speedscope check unless the spans do not nest on purpose. */
static json_t *spec_timeline(const char *spec, bool keep, char **err)
{
    char *log = span_log(spec);
    keep_none = !keep;
    json_t *j = run_timeline(log, NULL, 0, err);
    keep_none = false;
    assert_non_null(j);
    unlink(log);
    free(log);
    return j;
}

/* The X events of category cat that start inside another of their lane
 * and end after it, each counted once: by every pair, the slow way. */
static size_t nesting_errors_of(json_t *ev, const char *cat)
{
    size_t n = json_array_size(ev), m = 0, bad = 0, i;
    xev *x = calloc(n ? n : 1, sizeof *x);
    json_t *e;
    json_array_foreach(ev, i, e)
    {
        const char *c = json_string_value(json_object_get(e, "cat"));
        if (!c || strcmp(c, cat) || strcmp(json_string_value(json_object_get(e, "ph")), "X"))
            continue;
        x[m].pid = json_integer_value(json_object_get(e, "pid"));
        x[m].tid = json_integer_value(json_object_get(e, "tid"));
        x[m].ts = llround(dnum(json_object_get(e, "ts")) * 1000);
        x[m].end = x[m].ts + llround(dnum(json_object_get(e, "dur")) * 1000);
        m++;
    }
    for (size_t a = 0; a < m; a++)
        for (size_t b = 0; b < m; b++)
            if (x[b].pid == x[a].pid && x[b].tid == x[a].tid && x[b].ts < x[a].ts && x[a].ts < x[b].end &&
                x[b].end < x[a].end) {
                bad++;
                break;
            }
    free(x);
    return bad;
}

/* The count timeline's warning gives ("(N such span"), 0 without one. */
static size_t said_unnested(const char *err)
{
    const char *w = strstr(err, "does not nest");
    w = w ? strstr(w, "(") : NULL;
    return w ? (size_t)strtoull(w + 1, NULL, 10) : 0;
}

/* A span that starts inside another of its lane and ends after it is said,
 * whichever order the log writes the two in (as they ended, or not), and
 * only then; the trace is still written. */
static void test_unnested_spans_said(void **st)
{
    (void)st;
    static const struct {
        const char *spec;
        size_t bad;
    } cases[] = {
        /* bind 1100..1700 pokes out of chip.run 1000..1500: as they ended, and not */
        {"1 0 chip.run 1000 500 1;1 1 chip.run.bind 1100 600 1", 1},
        {"1 1 chip.run.bind 1100 600 1;1 0 chip.run 1000 500 1", 1},
        /* nested: as they ended, parent first, equal ends, equal starts, touching */
        {"1 1 chip.run.bind 1100 300 1;1 0 chip.run 1000 500 1", 0},
        {"1 0 chip.run 1000 500 1;1 1 chip.run.bind 1100 300 1", 0},
        {"1 1 chip.run.bind 1100 400 1;1 0 chip.run 1000 500 1", 0},
        {"1 1 chip.run.bind 1000 200 1;1 0 chip.run 1000 500 1", 0},
        {"1 1 a.b 1000 100 1;1 1 a.c 1100 100 1;1 0 chip.run 1000 200 1", 0},
        /* the outer span written before an inner one that ends with it:
         * that one cuts a span the outer one holds (5000..10000) */
        {"1 2 x.y 5000 5000 1;1 0 chip.run 1000 11000 1;1 1 chip.run.bind 7000 5000 1", 1},
        {"1 2 x.y 5000 5000 1;1 0 chip.run 1000 11000 1;1 1 chip.run.bind 10000 2000 1", 0},
        /* in order, then not: what the lane found in order is not counted twice */
        {"1 1 a.a 1000 10000 1;1 1 b.b 5000 10000 1;1 0 chip.run 1000 1000 1", 1},
        /* out of order: g cuts x, and so does chip.run, though g (not
         * nested) lies between them; g is the first named */
        {"1 2 g.g 31000 7000 1;1 0 chip.run 31000 18000 2;1 1 x.x 30000 4000 1", 2},
        {"1 1 x.x 30000 4000 1;1 2 g.g 31000 7000 1;1 0 chip.run 31000 18000 2", 2},
        /* on two threads they are two lanes */
        {"1 0 chip.run 1000 500 1;2 1 chip.run.bind 1100 600 1", 0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char *err;
        json_t *j = spec_timeline(cases[k].spec, cases[k].bad == 0, &err);
        if (said_unnested(err) != cases[k].bad ||
            nesting_errors_of(json_object_get(j, "traceEvents"), "span") != cases[k].bad)
            fail_msg("case %zu: %s: want %zu, said: %s", k, cases[k].spec, cases[k].bad, err);
        if (k == 10 || k == 11)
            assert_true(ts_contains(err, "span g.g (pid=9 inv=1) starts inside x.x"));
        if (k == 0)
            assert_true(ts_contains(err, ":2: span chip.run.bind (pid=9 inv=1) starts inside chip.run (line 1) on its "
                                         "lane and ends after it: the lane does not nest, and trace viewers draw it "
                                         "wrong (1 such span)"));
        json_decref(j);
        free(err);
    }
}

/* The check against a slow reference: of random spans on two threads, in
 * random order or as they ended, the warning counts exactly the trace's
 * span events that do not nest (pipelined runs moved to slot lanes,
 * repeats dropped, as drawn). */
static void test_unnested_random(void **st)
{
    (void)st;
    unsigned seed = 12345;
    static const char *const names[] = {"chip.run", "chip.run.bind", "chip.run.runner_run", "x.y"};
    size_t said = 0;
    for (int trial = 0; trial < 80; trial++) {
        struct {
            unsigned tid, depth, inv;
            unsigned long long ts, dur;
            const char *name;
        } sp[10];
        unsigned n = 2 + (seed = seed * 1103515245u + 12345u) / 65536 % 9;
        for (unsigned i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            sp[i].tid = 1 + (seed >> 16) % 2;
            sp[i].depth = (seed >> 18) % 3;
            sp[i].name = names[(seed >> 20) % 4];
            sp[i].inv = 1 + (seed >> 22) % 2;
            seed = seed * 1103515245u + 12345u;
            sp[i].ts = 1000 * (1 + (seed >> 16) % 20);
            sp[i].dur = 1000 * ((seed >> 24) % 12);
        }
        if (trial % 2) /* as they ended: by end */
            for (unsigned a = 1; a < n; a++)
                for (unsigned b = a; b > 0 && sp[b].ts + sp[b].dur < sp[b - 1].ts + sp[b - 1].dur; b--) {
                    __typeof__(sp[0]) x = sp[b];
                    sp[b] = sp[b - 1];
                    sp[b - 1] = x;
                }
        char spec[1024];
        size_t at = 0;
        for (unsigned i = 0; i < n; i++)
            at += (size_t)snprintf(spec + at, sizeof spec - at, "%s%u %u %s %llu %llu %u", i ? ";" : "", sp[i].tid,
                                   sp[i].depth, sp[i].name, sp[i].ts, sp[i].dur, sp[i].inv);
        char *err;
        json_t *j = spec_timeline(spec, false, &err);
        size_t bad = nesting_errors_of(json_object_get(j, "traceEvents"), "span");
        if (bad != said_unnested(err))
            fail_msg("trial %d: %s: reference %zu spans that do not nest, timeline said: %s", trial, spec, bad, err);
        said += bad > 0;
        json_decref(j);
        free(err);
    }
    /* the draw makes both kinds */
    assert_true(said > 5 && said < 75);
}

/* The traces of two logs have the same events (the second's warnings
 * say `repeat`, the first's not). */
static void same_events(const char *log1, const char *log2, bool repeats)
{
    char *err1, *err2;
    json_t *one = run_timeline(log1, NULL, 0, &err1), *two = run_timeline(log2, NULL, 0, &err2);
    assert_non_null(one);
    assert_non_null(two);
    assert_false(ts_contains(err1, "repeat an earlier span"));
    assert_int_equal(ts_contains(err2, "repeat an earlier span exactly (the same line"), repeats);
    json_t *e1 = json_object_get(one, "traceEvents"), *e2 = json_object_get(two, "traceEvents");
    assert_int_equal(json_array_size(e1), json_array_size(e2));
    assert_true(json_equal(e1, e2));
    json_decref(one);
    json_decref(two);
    free(err1);
    free(err2);
}

/* A log holding a run twice draws it once: no span twice, no pipeline
 * slot for a run overlapping its own copy, and a warning that counts the
 * repeats; exactly what the log alone draws, but for the second anchor.
 * So does a log appended to: a first part of it, then the whole. */
static void test_log_twice_drawn_once(void **st)
{
    (void)st;
    static const char *const logs[] = {"spans-ours-2rank.log", "spans-original-pipelined.log",
                                       "spans-original-node.log"};
    for (size_t k = 0; k < sizeof logs / sizeof logs[0]; k++) {
        size_t n;
        char lp[4096];
        snprintf(lp, sizeof lp, "%s", ts_fixture(logs[k]));
        char *text = ts_slurp(lp, &n);
        assert_non_null(text);
        /* whole twice, and the first 13 lines then the whole */
        size_t part = 0;
        for (int lines = 0; part < n && lines < 13; part++)
            lines += text[part] == '\n';
        for (int how = 0; how < 2; how++) {
            size_t first = how ? part : n;
            char *twice = malloc(first + n);
            memcpy(twice, text, first);
            memcpy(twice + first, text, n);
            char *log2 = ts_temp_file(twice, first + n, ".log");
            same_events(lp, log2, true);
            unlink(log2);
            free(log2);
            free(twice);
        }
        free(text);
    }
}

/* A repeat is the same line: two spans of the scheduler's that differ in
 * an attribute alone are two, also in a log held twice. */
static void test_repeat_is_the_whole_line(void **st)
{
    (void)st;
    static const char one[] =
        "[CLOCK_ANCHOR] v=1 pid=9 mono_ns=500 wall_ns=1700000000000000000\n"
        "[STRACE] v=1 pid=9 tid=1 inv=1 hid=00000000000000ab depth=0 name=chip.run ts=1000 dur=500\n"
        "[STRACE] v=1 pid=9 tid=4 inv=0 hid=00000000000000ab depth=0 name=node.run ts=1100 dur=0 role=worker "
        "worker_id=2 run_id=1 task_slot=0\n"
        "[STRACE] v=1 pid=9 tid=4 inv=0 hid=00000000000000ab depth=0 name=node.run ts=1100 dur=0 role=worker "
        "worker_id=2 run_id=1 task_slot=1\n";
    char two[2 * sizeof one];
    snprintf(two, sizeof two, "%s%s", one, one);
    char *log1 = ts_temp_file(one, strlen(one), ".log"), *log2 = ts_temp_file(two, strlen(two), ".log"), *err;
    /* (speedscope takes two zero-length slices at one time, with other
     * arguments, for a nesting error: not kept for its check) */
    keep_none = true;
    same_events(log1, log2, true);
    json_t *j = run_timeline(log2, NULL, 0, &err);
    keep_none = false;
    assert_int_equal(find(json_object_get(j, "traceEvents"), "node.run", "span", -1, -1, NULL), 2);
    assert_true(ts_contains(err, ":6: 3 spans repeat an earlier span exactly"));
    json_decref(j);
    free(err);
    unlink(log1);
    unlink(log2);
    free(log1);
    free(log2);
}

/* Two roots of one invocation with the same times, the log held twice:
 * each root's repeat is found, though the other root sorts between them. */
static void test_log_twice_two_roots(void **st)
{
    (void)st;
    char *err;
    json_t *j = spec_timeline("1 0 chip.run 1000 500 1;1 0 zz.root 1000 500 1;1 1 chip.run.bind 1100 100 1;"
                              "1 0 chip.run 1000 500 1;1 0 zz.root 1000 500 1;1 1 chip.run.bind 1100 100 1",
                              true, &err);
    assert_true(ts_contains(err, ":4: 3 spans repeat an earlier span exactly"));
    assert_int_equal(find(json_object_get(j, "traceEvents"), NULL, "span", -1, -1, NULL), 3);
    json_decref(j);
    free(err);
}

/* Runs that start together keep the log's order for the lowest slot, as
 * they always did. */
static void test_pipeline_slots_tie(void **st)
{
    (void)st;
    char *err;
    json_t *j = spec_timeline("1 0 chip.run 1000 10000 1;1 0 chip.run 1000 5000 2", true, &err), *e;
    assert_int_equal(find(json_object_get(j, "traceEvents"), "chip.run", "span", 9, 2, &e), 1);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(e, "args"), "inv")), 1);
    assert_int_equal(find(json_object_get(j, "traceEvents"), "chip.run", "span", 9, 3, &e), 1);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(e, "args"), "inv")), 2);
    json_decref(j);
    free(err);
}

/* Interval partitioning takes the lowest slot free at a run's start:
 * runs A 1..10, B 2..5, C 3..20, D 6..30 (B's slot 2 is free, A's not
 * yet), E 11..12 (A's slot 1 free again, and lower than any). */
static void test_pipeline_slots_lowest_free(void **st)
{
    (void)st;
    char *err;
    json_t *j = spec_timeline("1 0 chip.run 1000 9000 1;1 0 chip.run 2000 3000 2;1 0 chip.run 3000 17000 3;"
                              "1 0 chip.run 6000 24000 4;1 0 chip.run 11000 1000 5",
                              true, &err);
    json_t *ev = json_object_get(j, "traceEvents"), *e;
    long long lane[6] = {0};
    size_t i;
    json_array_foreach(ev, i, e)
    {
        const char *cat = json_string_value(json_object_get(e, "cat"));
        if (cat && !strcmp(cat, "span"))
            lane[json_integer_value(json_object_get(json_object_get(e, "args"), "inv"))] =
                json_integer_value(json_object_get(e, "tid"));
    }
    /* slot lanes get tids past every tid the log uses (1): slot k is 1 + k */
    assert_int_equal(lane[1], 2);
    assert_int_equal(lane[2], 3);
    assert_int_equal(lane[3], 4);
    assert_int_equal(lane[4], 3);
    assert_int_equal(lane[5], 2);
    assert_int_equal(nesting_errors(ev), 0);
    json_decref(j);
    free(err);
}

/* The earliest ts of e's lane (pid, tid): where speedscope puts its zero. */
static double lane_min(json_t *ev, json_t *e)
{
    double m = 1e300;
    size_t i;
    json_t *x;
    json_array_foreach(ev, i, x)
    {
        if (!strcmp(json_string_value(json_object_get(x, "ph")), "X") &&
            json_integer_value(json_object_get(x, "pid")) == json_integer_value(json_object_get(e, "pid")) &&
            json_integer_value(json_object_get(x, "tid")) == json_integer_value(json_object_get(e, "tid")) &&
            dnum(json_object_get(x, "ts")) < m)
            m = dnum(json_object_get(x, "ts"));
    }
    return m;
}

/* A start whose three decimals a reader that truncates would take a
 * nanosecond short (1.017 us is 1.016999... as a double: Perfetto showed
 * 1016 ns) is written with a nudge in the sixth decimal. */
static void test_ts_read_back_exactly(void **st)
{
    (void)st;
    static const char log[] = "[STRACE] v=1 pid=9 tid=1 inv=1 hid=00000000000000ab depth=0 name=chip.run ts=1017 "
                              "dur=3000\n";
    char *lp = ts_temp_file(log, strlen(log), ".log"), *o = ts_temp_file("", 0, ".json"), *out, *err;
    const char *a[] = {"timeline", lp, "-o", o, NULL};
    assert_int_equal(ts_run_cli(a, &out, &err), 0);
    char *text = ts_slurp(o, NULL);
    assert_non_null(text);
    assert_true(ts_contains(text, "\"name\":\"chip.run\",\"cat\":\"span\",\"ph\":\"X\",\"pid\":9,\"tid\":1,"
                                  "\"ts\":1.017001,"));
    free(text), free(out), free(err);
    unlink(lp), unlink(o);
    free(lp), free(o);
}

/* speedscope moves each lane to start at 0 and ends a slice at ts + dur,
 * in doubles: that must land exactly where the slice's end is, or a slice
 * that ends where the next one starts seems to run a fraction of a ns into
 * it, and the lane no longer nests. In the fixture, inv 1's chip.run.bind
 * ends exactly where its chip.run.runner_run starts. */
static void test_durations_sum_exactly(void **st)
{
    (void)st;
    char lp[4096], *err;
    snprintf(lp, sizeof lp, "%s", ts_fixture("ours-1rank-4pass.log"));
    char *text = ts_slurp(lp, NULL);
    assert_non_null(text);
    unsigned long long bts, bdur, rts, rdur;
    char *p = strstr(text, " inv=1 hid=8f3a1c2e9d0b4471 depth=1 name=chip.run.bind ts=");
    assert_non_null(p);
    assert_int_equal(sscanf(strstr(p, " ts="), " ts=%llu dur=%llu", &bts, &bdur), 2);
    p = strstr(text, " inv=1 hid=8f3a1c2e9d0b4471 depth=1 name=chip.run.runner_run ts=");
    assert_non_null(p);
    assert_int_equal(sscanf(strstr(p, " ts="), " ts=%llu dur=%llu", &rts, &rdur), 2);
    free(text);
    assert_true(bts + bdur == rts);
    json_t *j = run_timeline(lp, NULL, 0, &err);
    assert_non_null(j);
    free(err);
    json_t *ev = json_object_get(j, "traceEvents"), *e, *bind = NULL, *rr = NULL;
    size_t i, n = 0;
    json_array_foreach(ev, i, e)
    {
        if (strcmp(json_string_value(json_object_get(e, "ph")), "X"))
            continue;
        double ts = dnum(json_object_get(e, "ts")), dur = dnum(json_object_get(e, "dur")), m = lane_min(ev, e);
        long long end = llround(ts * 1000) + llround(dur * 1000);
        assert_true((ts - m) + dur == (double)end / 1000.0 - m);
        n++;
        const char *name = json_string_value(json_object_get(e, "name"));
        if (json_integer_value(json_object_get(json_object_get(e, "args"), "inv")) != 1)
            continue;
        if (!strcmp(name, "chip.run.bind"))
            bind = e;
        if (!strcmp(name, "chip.run.runner_run"))
            rr = e;
    }
    assert_true(n > 20);
    assert_non_null(bind);
    assert_non_null(rr);
    /* rounded to ns, the durations are the log's */
    assert_int_equal(llround(dnum(json_object_get(bind, "dur")) * 1000), bdur);
    assert_int_equal(llround(dnum(json_object_get(rr, "dur")) * 1000), rdur);
    double m = lane_min(ev, bind);
    assert_true((dnum(json_object_get(bind, "ts")) - m) + dnum(json_object_get(bind, "dur")) ==
                dnum(json_object_get(rr, "ts")) - m);
    json_decref(j);
}

/* --per-invocation: one lane per invocation, host and device tracks; the
 * device spans at the start of their runner_run; every lane nests. */
static json_t *run_per_invocation(const char *lp)
{
    char *o = ts_temp_file("", 0, ".json"), *out, *err;
    const char *a[] = {"timeline", lp, "--per-invocation", "-o", o, NULL};
    assert_int_equal(ts_run_cli(a, &out, &err), 0);
    char *text = ts_slurp(o, NULL);
    keep_trace(lp, "per-invocation", text);
    json_t *j = json_loads(text, 0, NULL);
    free(text);
    assert_non_null(j);
    /* the count it reports is the array's length, lane names included */
    const char *w = strstr(err, "wrote ");
    assert_non_null(w);
    w = strstr(w, ": ");
    assert_non_null(w);
    assert_int_equal(strtoull(w + 2, NULL, 10), json_array_size(json_object_get(j, "traceEvents")));
    free(out);
    free(err);
    unlink(o);
    free(o);
    return j;
}

/* The label of each --per-invocation lane, "decode inv=2 (pid ..." -> "decode". */
static void inv_labels_of(json_t *ev, char labels[][16], size_t n)
{
    for (size_t k = 0; k < n; k++) {
        json_t *e;
        assert_int_equal(find(ev, "process_name", NULL, (long long)k + 1, 0, &e), 1);
        const char *name = json_string_value(json_object_get(json_object_get(e, "args"), "name"));
        size_t w = strcspn(name, " ");
        assert_true(w < 16);
        memcpy(labels[k], name, w);
        labels[k][w] = 0;
    }
}

/* A lane's label is its invocation's, from its own process: the qwen
 * decode step was "decode" in a qwen log and "callable" once the log
 * also held a dsv4 run, whose two ranks ran their callable more often
 * (hbg spans' labels count over the whole log). */
static void test_per_invocation_label_is_the_invocations_own(void **st)
{
    (void)st;
    static const char qwen[] =
        "[stamp] 1a2b3c4 hbg run qwen --rounds 4\n"
        "[STRACE] v=1 pid=5100 tid=1 inv=1 hid=00000000000000cc depth=0 name=chip.run ts=1000 dur=500\n"
        "[STRACE] v=1 pid=5100 tid=1 inv=2 hid=00000000000000aa depth=0 name=chip.run ts=2000 dur=500\n"
        "[STRACE] v=1 pid=5100 tid=1 inv=3 hid=00000000000000aa depth=0 name=chip.run ts=3000 dur=500\n"
        "[STRACE] v=1 pid=5100 tid=1 inv=4 hid=00000000000000aa depth=0 name=chip.run ts=4000 dur=500\n";
    static const char dsv4[] =
        "[stamp] 1a2b3c4 hbg run dsv4 --rounds 4\n"
        "[STRACE] v=1 pid=5200 tid=1 inv=1 hid=00000000000000bb depth=0 name=chip.run ts=9000 dur=500\n"
        "[STRACE] v=1 pid=5200 tid=1 inv=2 hid=00000000000000bb depth=0 name=chip.run ts=9100 dur=50\n"
        "[STRACE] v=1 pid=5200 tid=1 inv=3 hid=00000000000000bb depth=0 name=chip.run ts=9200 dur=50\n"
        "[STRACE] v=1 pid=5200 tid=1 inv=4 hid=00000000000000bb depth=0 name=chip.run ts=9300 dur=50\n"
        "[STRACE] v=1 pid=5201 tid=1 inv=1 hid=00000000000000bb depth=0 name=chip.run ts=9000 dur=500\n"
        "[STRACE] v=1 pid=5201 tid=1 inv=2 hid=00000000000000bb depth=0 name=chip.run ts=9100 dur=50\n"
        "[STRACE] v=1 pid=5201 tid=1 inv=3 hid=00000000000000bb depth=0 name=chip.run ts=9200 dur=50\n"
        "[STRACE] v=1 pid=5201 tid=1 inv=4 hid=00000000000000bb depth=0 name=chip.run ts=9300 dur=50\n";
    char mixed[sizeof qwen + sizeof dsv4];
    snprintf(mixed, sizeof mixed, "%s%s", qwen, dsv4);
    char alone[4][16], with[12][16];
    char *lp = ts_temp_file(qwen, strlen(qwen), ".log");
    json_t *j = run_per_invocation(lp);
    inv_labels_of(json_object_get(j, "traceEvents"), alone, 4);
    json_decref(j);
    unlink(lp);
    free(lp);
    lp = ts_temp_file(mixed, strlen(mixed), ".log");
    j = run_per_invocation(lp);
    inv_labels_of(json_object_get(j, "traceEvents"), with, 12);
    json_decref(j);
    unlink(lp);
    free(lp);
    /* lanes in (pid, inv) order: qwen's pid 5100 first in both */
    static const char *const want[] = {"prefill", "decode", "decode", "decode"};
    for (size_t k = 0; k < 4; k++) {
        assert_string_equal(alone[k], want[k]);
        assert_string_equal(with[k], want[k]);
    }
    for (size_t k = 4; k < 12; k++)
        assert_string_equal(with[k], "decode");
}

static void test_per_invocation(void **st)
{
    (void)st;
    char lp[4096], *out, *err;
    snprintf(lp, sizeof lp, "%s", ts_fixture("spans-original-pipelined.log"));
    json_t *j = run_per_invocation(lp);
    json_t *ev = json_object_get(j, "traceEvents"), *e;
    assert_int_equal(nesting_errors(ev), 0);
    /* four invocations (the node.* span is not one), four lanes */
    assert_int_equal(find(ev, "process_name", NULL, -1, 0, NULL), 4);
    assert_int_equal(find(ev, "process_name", NULL, 2, 0, &e), 1);
    assert_string_equal(json_string_value(json_object_get(json_object_get(e, "args"), "name")),
                        "decode inv=2 (pid 7001, rank 0)");
    for (long long lane = 1; lane <= 4; lane++) {
        json_t *rr = NULL, *dw = NULL;
        assert_int_equal(find(ev, "chip.run.runner_run", "span", lane, 0, &rr), 1);
        assert_int_equal(find(ev, "chip.run.runner_run.device_wall", "device", lane, -1, &dw), 1);
        assert_true(json_integer_value(json_object_get(dw, "tid")) > 0);
        assert_true(dnum(json_object_get(dw, "ts")) == dnum(json_object_get(rr, "ts")));
    }
    json_decref(j);
    /* two ranks: a lane per invocation (a chip.run root each), and a
     * device track in each lane that has a device_wall span */
    snprintf(lp, sizeof lp, "%s", ts_fixture("spans-ours-2rank.log"));
    char *text = ts_slurp(lp, NULL);
    assert_non_null(text);
    size_t roots = 0, walls = 0;
    for (char *p = text; (p = strstr(p, " depth=0 name=chip.run ")); p++)
        roots++;
    for (char *p = text; (p = strstr(p, " name=chip.run.runner_run.device_wall ")); p++)
        walls++;
    free(text);
    j = run_per_invocation(lp);
    ev = json_object_get(j, "traceEvents");
    assert_int_equal(nesting_errors(ev), 0);
    assert_int_equal(find(ev, "process_name", NULL, -1, 0, NULL), roots);
    assert_int_equal(find(ev, "chip.run.runner_run.device_wall", "device", -1, 1, NULL), walls);
    json_decref(j);
    const char *b[] = {"timeline", lp, "--per-invocation", "--records", lp, "-o", "unused.json", NULL};
    assert_int_equal(ts_run_cli(b, &out, &err), 2);
    assert_true(ts_contains(err, "--per-invocation draws spans only"));
    free(out);
    free(err);
    /* the same records file twice would draw every operation twice */
    char rp[2048], want[8192];
    snprintf(lp, sizeof lp, "%s", ts_fixture("hbg-run-vector-timeline.log"));
    snprintf(rp, sizeof rp, "%s", ts_fixture("hbg-run-vector-timeline.host_phase_records.jsonl"));
    const char *c[] = {"timeline", lp, "--records", rp, "--records", rp, "-o", "unused.json", NULL};
    assert_int_equal(ts_run_cli(c, &out, &err), 2);
    snprintf(want, sizeof want,
             "hbg timeline: --records 1 (%s) and --records 2 (%s) are the same file: its records would be drawn "
             "twice; give each records file once\n",
             rp, rp);
    assert_string_equal(err, want);
    assert_int_equal(access("unused.json", F_OK), -1);
    free(out);
    free(err);
    /* --records - is standard input: as many records drawn as from the
     * file; the log as its own records is refused */
    char *o = ts_temp_file("", 0, ".json");
    const char *d[] = {"timeline", lp, "--records", "-", "-o", o, NULL};
    assert_int_equal(ts_run_cli_in(d, rp, &out, &err), 0);
    free(out);
    char *s = ts_slurp(o, NULL);
    json_t *fromin = json_loads(s, 0, NULL), *fromfile = run_timeline(lp, rp, 0, &out);
    assert_non_null(fromin);
    assert_non_null(fromfile);
    size_t nrec = find(json_object_get(fromfile, "traceEvents"), NULL, "op", -1, -1, NULL);
    assert_true(nrec > 0);
    assert_int_equal(find(json_object_get(fromin, "traceEvents"), NULL, "op", -1, -1, NULL), nrec);
    json_decref(fromin), json_decref(fromfile);
    free(s), free(out), free(err);
    unlink(o), free(o);
    const char *self[] = {"timeline", lp, "--records", lp, "-o", "unused.json", NULL};
    assert_int_equal(ts_run_cli(self, &out, &err), 2);
    char self_want[2 * sizeof lp + 96];
    snprintf(self_want, sizeof self_want,
             "hbg timeline: the log (%s) and --records 1 (%s) are the same file; give the log once\n", lp, lp);
    assert_string_equal(err, self_want);
    assert_int_equal(access("unused.json", F_OK), -1);
    free(out);
    free(err);
    /* ten device span names in one invocation: a track each */
    char log[4096];
    size_t n = (size_t)snprintf(log, sizeof log,
                                "[STRACE] v=1 pid=9 tid=9 inv=1 hid=ab depth=0 name=chip.run ts=1000 dur=100000\n"
                                "[STRACE] v=1 pid=9 tid=9 inv=1 hid=ab depth=1 name=chip.run.runner_run ts=2000 "
                                "dur=90000\n");
    for (int k = 0; k < 10; k++)
        n += (size_t)snprintf(log + n, sizeof log - n,
                              "[STRACE] v=1 pid=9 tid=9 inv=1 hid=ab depth=2 name=dev.k%d ts=%d dur=1000 clk=dev\n",
                              k, 100 + 400 * k);
    char *many = ts_temp_file(log, n, ".log");
    j = run_per_invocation(many);
    ev = json_object_get(j, "traceEvents");
    assert_int_equal(nesting_errors(ev), 0);
    for (int k = 0; k < 10; k++) {
        char nm[16];
        snprintf(nm, sizeof nm, "dev.k%d", k);
        assert_int_equal(find(ev, nm, "device", 1, k + 1, NULL), 1);
    }
    json_decref(j);
    unlink(many);
    free(many);
}

/* A count of one reads as English: "1 device-clock spans have no
 * chip.run.runner_run span" it once said, drawn whole or per invocation;
 * two are still counted as before. */
static void test_one_unplaced_device_span(void **st)
{
    (void)st;
    static const char one[] = "[STRACE] v=1 pid=9 tid=9 inv=1 hid=ab depth=0 name=chip.run ts=1000 dur=100000\n"
                              "[STRACE] v=1 pid=9 tid=9 inv=1 hid=ab depth=1 name=dev.k ts=100 dur=1000 clk=dev\n";
    static const char two[] = "[STRACE] v=1 pid=9 tid=9 inv=1 hid=ab depth=0 name=chip.run ts=1000 dur=100000\n"
                              "[STRACE] v=1 pid=9 tid=9 inv=1 hid=ab depth=1 name=dev.k ts=100 dur=1000 clk=dev\n"
                              "[STRACE] v=1 pid=9 tid=9 inv=1 hid=ab depth=1 name=dev.j ts=200 dur=1000 clk=dev\n";
    const char *const text[] = {one, two};
    const char *const whole[] = {
        "one device-clock span has no chip.run.runner_run span in its invocation; not drawn (its ts is on the "
        "device clock, which the host axis does not share)\n",
        "2 device-clock spans have no chip.run.runner_run span in their invocation; not drawn (their ts is on the "
        "device clock, which the host axis does not share)\n"};
    const char *const per[] = {"one device-clock span has no chip.run.runner_run span in its invocation; not drawn\n",
                               "2 device-clock spans have no chip.run.runner_run span in their invocation; not "
                               "drawn\n"};
    for (int k = 0; k < 2; k++) {
        char *lp = ts_temp_file(text[k], strlen(text[k]), ".log"), *out, *err, want[4400];
        const char *a[] = {"timeline", lp, "-o", "-", NULL},
                   *b[] = {"timeline", lp, "--per-invocation", "-o", "-", NULL};
        assert_int_equal(ts_run_cli(a, &out, &err), 0);
        snprintf(want, sizeof want, "hbg timeline: warning: %s: %s", lp, whole[k]);
        if (!ts_contains(err, want))
            fail_msg("%s", err);
        free(out), free(err);
        assert_int_equal(ts_run_cli(b, &out, &err), 0);
        snprintf(want, sizeof want, "hbg timeline: warning: %s: %s", lp, per[k]);
        if (!ts_contains(err, want))
            fail_msg("%s", err);
        free(out), free(err);
        unlink(lp);
        free(lp);
    }
}

/* The scheduler's node.* spans: an arrow from each node.submit to the
 * node.dispatch of its (run_id, task_slot), and lanes named by role. */
static void test_node_flows_and_roles(void **st)
{
    (void)st;
    char lp[4096], *err;
    snprintf(lp, sizeof lp, "%s", ts_fixture("spans-original-node.log"));
    json_t *j = run_timeline(lp, NULL, 0, &err);
    assert_non_null(j);
    /* three tasks handed over; the dispatch of slot 9 and the late submit of run 2 have no partner */
    assert_true(ts_contains(err, "3 hand-off arrows"));
    free(err);
    json_t *ev = json_object_get(j, "traceEvents"), *e;
    assert_int_equal(find(ev, "task dispatch", "flow", 8001, 8002, NULL), 3);
    assert_int_equal(find(ev, "task dispatch", "flow", 8001, 8003, NULL), 3);
    /* each arrow: from the middle of its submit to the middle of its dispatch */
    size_t i;
    json_array_foreach(ev, i, e)
    {
        if (strcmp(json_string_value(json_object_get(e, "name")), "task dispatch"))
            continue;
        const char *ph = json_string_value(json_object_get(e, "ph"));
        long long id = json_integer_value(json_object_get(e, "id"));
        /* submit k at 4000000100 + 300k ns, 80 ns; its dispatch 150 ns later, 40 ns */
        double want = 4000000.1 + 0.3 * (double)(id - 1) + (ph[0] == 's' ? 0.04 : 0.17);
        assert_true(fabs(dnum(json_object_get(e, "ts")) - want) < 1e-4);
    }
    static const long long tids[] = {8002, 8003, 8004};
    static const char *const names[] = {"orchestrator / facade (tid 8002)", "scheduler (tid 8003)",
                                        "worker 2 (tid 8004)"};
    for (int k = 0; k < 3; k++) {
        assert_int_equal(find(ev, "thread_name", NULL, 8001, tids[k], &e), 1);
        assert_string_equal(json_string_value(json_object_get(json_object_get(e, "args"), "name")), names[k]);
    }
    assert_int_equal(nesting_errors(ev), 0);
    json_decref(j);
}

/* The timeline of a real 2-rank device run (hbg run dsv4, device run on,
 * breakdown and records on): nothing on the host axis before the first
 * bind span, each bind segment exactly once per pass, and the rank lanes
 * named as hbg run named its ranks, whichever rank wrote first. */
static void test_two_rank_device_run(void **st)
{
    (void)st;
    char dir[] = "/tmp/hbg-tl-run.XXXXXX";
    assert_non_null(mkdtemp(dir));
    setenv("HBG_BIND_BREAKDOWN", "1", 1);
    setenv("HBG_HOST_PHASE_RECORDS", "1", 1);
    const char *argv[] = {getenv("HBG_CLI"), "run", "dsv4", "--rounds", "2", "-o", "run.log", NULL};
    char *out, *err;
    assert_int_equal(ts_exec(dir, argv, NULL, &out, NULL, &err), 0);
    unsetenv("HBG_BIND_BREAKDOWN");
    unsetenv("HBG_HOST_PHASE_RECORDS");
    free(err);
    /* "records: PATH" and "rank K (pid P): golden passed; ..." */
    char lp[4096], rp[4096], rel[1024], *r = strstr(out, "records: ");
    assert_non_null(r);
    assert_int_equal(sscanf(r, "records: %1000s", rel), 1);
    snprintf(rp, sizeof rp, "%s/%s", dir, rel);
    snprintf(lp, sizeof lp, "%s/run.log", dir);
    long long pid[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        char want[32];
        snprintf(want, sizeof want, "rank %d (pid ", k);
        char *q = strstr(out, want);
        assert_non_null(q);
        pid[k] = atoll(q + strlen(want));
    }
    free(out);
    json_t *j = run_timeline(lp, rp, 0, &err);
    assert_non_null(j);
    free(err);
    json_t *ev = json_object_get(j, "traceEvents"), *e;
    for (int k = 0; k < 2; k++) {
        const char *name;
        long long sort;
        char want[64];
        lane(ev, pid[k], &name, &sort);
        snprintf(want, sizeof want, "rank %d (pid %lld)", k, pid[k]);
        assert_string_equal(name, want);
        assert_int_equal(sort, 2 * k);
    }
    double first = 1e300, first_bind = 1e300;
    size_t i;
    json_array_foreach(ev, i, e)
    {
        if (strcmp(json_string_value(json_object_get(e, "ph")), "X"))
            continue;
        double ts = dnum(json_object_get(e, "ts"));
        first = ts < first ? ts : first;
        if (!strcmp(json_string_value(json_object_get(e, "name")), "chip.run.bind") && ts < first_bind)
            first_bind = ts;
    }
    assert_true(first >= first_bind);
    static const char *const segs[] = {"args", "arena_build", "static_arena", "gm_heap", "shared_mem",
                                       "runtime_init", "host_orch", "graph_upload", "arena_h2d", "host_view_close"};
    for (int k = 0; k < 2; k++)
        for (long long inv = 1; inv <= 2; inv++)
            for (size_t g = 0; g < sizeof segs / sizeof segs[0]; g++) {
                size_t cnt = 0;
                json_array_foreach(ev, i, e)
                {
                    json_t *args = json_object_get(e, "args");
                    if (json_integer_value(json_object_get(e, "pid")) == pid[k] &&
                        !strcmp(json_string_value(json_object_get(e, "name")), segs[g]) &&
                        json_integer_value(json_object_get(args, "inv")) == inv &&
                        !json_object_get(args, "note"))
                        cnt++;
                }
                assert_int_equal(cnt, 1);
            }
    assert_int_equal(nesting_errors(ev), 0);
    json_decref(j);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const char *keep = getenv("HBG_TRACE_KEEP");
    if (keep) {
        /* this run's traces only */
        struct stat sb;
        if (stat(keep, &sb) == 0)
            ts_rmtree(strdup(keep));
        if (mkdir(keep, 0777) != 0) {
            perror(keep);
            return 1;
        }
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_original_with_records),
        cmocka_unit_test(test_a_logged_key_is_not_a_second_member),
        cmocka_unit_test(test_keys_written_alike_are_not_one_member),
        cmocka_unit_test(test_a_long_chain_of_logged_keys),
        cmocka_unit_test(test_an_anchor_on_the_line_of_a_span),
        cmocka_unit_test(test_nothing_whole_is_the_reason_given),
        cmocka_unit_test(test_foreign_records_make_no_lane),
        cmocka_unit_test(test_device_lane_never_a_host_pid),
        cmocka_unit_test(test_host_pid_past_2_32),
        cmocka_unit_test(test_host_tid_past_2_32),
        cmocka_unit_test(test_slot_lanes_after_the_last_tid),
        cmocka_unit_test(test_anchor_out_of_range_is_said),
        cmocka_unit_test(test_counts_of_one_in_the_singular),
        cmocka_unit_test(test_round_start_far_from_anchor),
        cmocka_unit_test(test_corrupt_anchor_is_blamed),
        cmocka_unit_test(test_torn_span_counted),
        cmocka_unit_test(test_log_cut_inside_its_last_record),
        cmocka_unit_test(test_pass_with_nothing_to_draw),
        cmocka_unit_test(test_segment_outside_its_bind_span),
        cmocka_unit_test(test_long_durations_left_out),
        cmocka_unit_test(test_pass_defects_say_what_is_drawn),
        cmocka_unit_test(test_log_warnings_say_what_is_drawn),
        cmocka_unit_test(test_absurd_starts_left_out),
        cmocka_unit_test(test_log_of_hbg_run),
        cmocka_unit_test(test_records_of_a_pass_without_its_span),
        cmocka_unit_test(test_rank_lanes_as_hbg_run),
        cmocka_unit_test(test_two_runs_ranked_apart),
        cmocka_unit_test(test_standard_output_whole_or_nothing),
        cmocka_unit_test(test_ts_read_back_exactly),
        cmocka_unit_test(test_anchor_in_force),
        cmocka_unit_test(test_pipelined_lanes_nest),
        cmocka_unit_test(test_per_invocation),
        cmocka_unit_test(test_per_invocation_label_is_the_invocations_own),
        cmocka_unit_test(test_durations_sum_exactly),
        cmocka_unit_test(test_one_unplaced_device_span),
        cmocka_unit_test(test_node_flows_and_roles),
        cmocka_unit_test(test_two_rank_device_run),
        cmocka_unit_test(test_handoffs),
        cmocka_unit_test(test_nothing_to_draw),
        cmocka_unit_test(test_records_reader),
        cmocka_unit_test(test_a_pass_in_two_records_files),
        cmocka_unit_test(test_output_is_checked_before_the_log_is_read),
        cmocka_unit_test(test_stdout_spool_is_checked_before_the_log_is_read),
        cmocka_unit_test(test_unnested_spans_said),
        cmocka_unit_test(test_unnested_random),
        cmocka_unit_test(test_log_twice_drawn_once),
        cmocka_unit_test(test_log_twice_two_roots),
        cmocka_unit_test(test_repeat_is_the_whole_line),
        cmocka_unit_test(test_pipeline_slots_tie),
        cmocka_unit_test(test_pipeline_slots_lowest_free),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
