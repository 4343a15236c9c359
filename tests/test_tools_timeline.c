/* `hbg timeline`: the trace parses as JSON, lanes and nesting are right,
 * wall times are exact, and every records anomaly is counted on stderr. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/tools_support.h"
#include "tools/records.h"

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
    json_error_t je;
    json_t *j = json_loads(s, 0, &je);
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

static void test_upstream_with_records(void **st)
{
    (void)st;
    char lp[4096], rp[4096], *err;
    snprintf(lp, sizeof lp, "%s", ts_fixture("upstream-2rank-interleaved.log"));
    snprintf(rp, sizeof rp, "%s", ts_fixture("upstream-2rank-interleaved.host_phase_records.jsonl"));
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
                        "rank 1 (pid 4002) device clock: own time base, not host time");
    assert_int_equal(find(ev, "thread_name", NULL, 4001, 4012, NULL), 1);

    /* spans: 4 per pass, device ones on the device lane at device time */
    assert_int_equal(find(ev, NULL, "span", -1, -1, NULL), 18);
    assert_int_equal(find(ev, NULL, "device", 1000004001, -1, NULL), 3);
    assert_int_equal(find(ev, "chip.run.runner_run.device_wall", "device", 1000004001, 2, &e), 1);
    assert_true(dnum(json_object_get(e, "ts")) == 0);
    assert_true(dnum(json_object_get(e, "dur")) == 4.0);
    assert_null(json_object_get(json_object_get(e, "args"), "wall_ns"));

    /* bind segments on the bind span's thread, inside it */
    assert_int_equal(find(ev, NULL, "bind", -1, -1, NULL), 60 + 2);
    json_t *bind = NULL;
    size_t i;
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
    assert_true(dnum(json_object_get(bind, "dur")) == 51.437);
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

    assert_true(ts_contains(err, ": 111 events (18 spans, 6 device spans, 60 bind segments, 2 host_orch copies on "
                                 "other threads, 7 records, 3 hand-off arrows of 2 events, 12 lane names)\n"));
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
    assert_true(ts_contains(err, ".host_phase_records.jsonl:2: pid=4002 inv=2: 1 of 3 records lie outside the bind span"));
    json_decref(j);
    free(err);
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
    assert_true(ts_contains(err, "hbg timeline: torn [STRACE] records (not drawn): 1\n"));
    assert_true(ts_contains(err, "malformed [STRACE] span (torn): expected dur= (the span is torn); ignored"));
    assert_true(ts_contains(err, "hbg timeline: bind passes without a chip.run.bind span: 1\n"));
    json_t *ev = json_object_get(j, "traceEvents");
    assert_int_equal(find(ev, "chip.run.bind", "span", 4242, -1, NULL), 3);
    json_decref(j);
    free(err);
    unlink(p);
    free(p);
    free(src);
}

/* A log and records file written by `hbg run vector --mode timeline`: the
 * records of bind segments sit beside host_orch and are not flagged. */
static void test_log_of_hbg_run(void **st)
{
    (void)st;
    char lp[4096], rp[4096], *err;
    snprintf(lp, sizeof lp, "%s", ts_fixture("hbg-run-vector-timeline.log"));
    snprintf(rp, sizeof rp, "%s", ts_fixture("hbg-run-vector-timeline.host_phase_records.jsonl"));
    json_t *j = run_timeline(lp, rp, 0, &err);
    assert_non_null(j);
    assert_true(ts_contains(err, ": 77 events (4 spans, 0 device spans, 20 bind segments, 0 host_orch copies on "
                                 "other threads, 50 records, 0 hand-off arrows of 2 events, 3 lane names)\n"));
    assert_false(ts_contains(err, "outside"));
    assert_false(ts_contains(err, "warning"));
    json_t *ev = json_object_get(j, "traceEvents");
    assert_int_equal(find(ev, "host_orch", "bind", -1, -1, NULL), 2);
    assert_int_equal(find(ev, "submit_task", "op", -1, -1, NULL), 14);
    json_decref(j);
    free(err);
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
    unlink(p);
    free(p);
    const char *a[] = {"timeline", "x.log", NULL};
    char *out;
    assert_int_equal(ts_run_cli(a, &out, &err), 2);
    assert_string_equal(err, "hbg timeline: -o OUT.json is required (see hbg timeline --help)\n");
    free(out);
    free(err);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_upstream_with_records),
        cmocka_unit_test(test_torn_span_counted),
        cmocka_unit_test(test_log_of_hbg_run),
        cmocka_unit_test(test_handoffs),
        cmocka_unit_test(test_nothing_to_draw),
        cmocka_unit_test(test_records_reader),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
