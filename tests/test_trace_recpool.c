/* The per-op record pool: the jsonl line's exact shape, sorting, bounds
 * and drops, arming. The concurrent case is in test_trace_threaded.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "hbg/trace.h"
#include "support/capture.h"
#include "trace/recticks.h"


static hbg_recpool *make(unsigned threads, unsigned per)
{
    hbg_recpool *p = NULL;
    assert_int_equal(hbg_recpool_create(threads, per, &p), HBG_OK);
    assert_non_null(p);
    return p;
}

static char *jsonl(hbg_recpool *p, size_t *len)
{
    int fd = capture_open();
    assert_int_equal(hbg_recpool_write_jsonl(p, fd), HBG_OK);
    char *s = capture_read(fd, len);
    close(fd);
    return s;
}

static void exact_line(void **state)
{
    (void)state;
    hbg_recpool *p = make(2, 8);
    hbg_recpool_arm(p, 4242, 7);
    hbg_rec(p, HBG_OP_ALLOC_TENSORS, 300, 400, 2);
    hbg_rec(p, HBG_OP_SUBMIT_TASK, 123, 456, 17);
    hbg_rec(p, HBG_PH_ARENA_H2D, 500, 600, 180480);
    hbg_recpool_disarm(p);
    assert_int_equal(hbg_recpool_count(p), 3);
    assert_int_equal(hbg_recpool_dropped(p), 0);
    char *s = jsonl(p, NULL);
    char want[1024];
    unsigned tid = hbg_gettid();
    snprintf(want, sizeof want,
             "{\"pid\": 4242, \"inv\": 7, \"clock\": \"host_monotonic_ns\", \"dropped\": 0, \"records\": ["
             "{\"phase\": \"submit_task\", \"start_ns\": 123, \"end_ns\": 456, \"detail\": 17, \"tid\": %u}, "
             "{\"phase\": \"alloc_tensors\", \"start_ns\": 300, \"end_ns\": 400, \"detail\": 2, \"tid\": %u}, "
             "{\"phase\": \"arena_h2d\", \"start_ns\": 500, \"end_ns\": 600, \"detail\": 180480, \"tid\": %u}]}\n",
             tid, tid, tid);
    assert_string_equal(s, want);
    free(s);

    /* A pass with no records is still a line: the pass was armed. */
    hbg_recpool_arm(p, 1, 2);
    s = jsonl(p, NULL);
    assert_string_equal(s, "{\"pid\": 1, \"inv\": 2, \"clock\": \"host_monotonic_ns\", \"dropped\": 0, \"records\": []}\n");
    free(s);
    hbg_recpool_destroy(p);
}

/* Records in ticks are written in ns, mapped between the pass's anchors
 * and sorted with the ns records; converted once, however often written.
 * Without a map they cannot be placed and count as dropped. */
static void tick_records(void **state)
{
    (void)state;
    hbg_recpool *p = make(1, 8);
    hbg_recpool_arm(p, 9, 1);
    hbg_rec(p, HBG_PH_HOST_ORCH, 5000, 6000, 3);
    hbg__rec_ticks(p, HBG_OP_SUBMIT_TASK, 1000, 1400, 1);  /* 5000..5200 */
    hbg__rec_ticks(p, HBG_OP_GRAPH_SUBMIT, 2998, 3100, 2); /* 5999..6000, clamped */
    hbg_recpool_disarm(p);
    hbg__clockmap m = {.ta = 1000, .ma = 5000, .tb = 3000, .mb = 6000};
    hbg__clockmap_fix(&m);
    hbg__recpool_set_map(p, &m);
    unsigned tid = hbg_gettid();
    char want[1024];
    snprintf(want, sizeof want,
             "{\"pid\": 9, \"inv\": 1, \"clock\": \"host_monotonic_ns\", \"dropped\": 0, \"records\": ["
             "{\"phase\": \"host_orch\", \"start_ns\": 5000, \"end_ns\": 6000, \"detail\": 3, \"tid\": %u}, "
             "{\"phase\": \"submit_task\", \"start_ns\": 5000, \"end_ns\": 5200, \"detail\": 1, \"tid\": %u}, "
             "{\"phase\": \"graph_submit\", \"start_ns\": 5999, \"end_ns\": 6000, \"detail\": 2, \"tid\": %u}]}\n",
             tid, tid, tid);
    for (int k = 0; k < 2; k++) {
        char *s = jsonl(p, NULL);
        assert_string_equal(s, want);
        free(s);
    }

    /* Arming forgets the map: ticks recorded now have none. */
    hbg_recpool_arm(p, 9, 2);
    hbg__rec_ticks(p, HBG_OP_SUBMIT_TASK, 1000, 1400, 1);
    hbg_rec(p, HBG_PH_HOST_ORCH, 5000, 6000, 3);
    hbg_recpool_disarm(p);
    for (int k = 0; k < 2; k++) {
        char *s = jsonl(p, NULL);
        snprintf(want, sizeof want,
                 "{\"pid\": 9, \"inv\": 2, \"clock\": \"host_monotonic_ns\", \"dropped\": 1, \"records\": ["
                 "{\"phase\": \"host_orch\", \"start_ns\": 5000, \"end_ns\": 6000, \"detail\": 3, \"tid\": %u}]}\n",
                 tid);
        assert_string_equal(s, want); /* dropped once, not once per write */
        free(s);
    }
    hbg_recpool_destroy(p);
}

/* Parses the line with jansson, checks key order and the sort; returns the
 * record array's size. */
static size_t check_json(const char *s, uint64_t pid, uint64_t inv, uint64_t dropped)
{
    assert_true(strlen(s) > 0 && s[strlen(s) - 1] == '\n');
    assert_ptr_equal(strchr(s, '\n'), s + strlen(s) - 1); /* one line */
    json_error_t err;
    json_t *o = json_loads(s, JSON_PRESERVE_ORDER, &err);
    if (!o)
        fail_msg("invalid JSON at %d: %s", err.position, err.text);
    static const char *const keys[] = {"pid", "inv", "clock", "dropped", "records"};
    size_t i = 0;
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v) {
        assert_true(i < 5);
        assert_string_equal(k, keys[i++]);
    }
    assert_int_equal(i, 5);
    assert_int_equal(json_integer_value(json_object_get(o, "pid")), pid);
    assert_int_equal(json_integer_value(json_object_get(o, "inv")), inv);
    assert_string_equal(json_string_value(json_object_get(o, "clock")), "host_monotonic_ns");
    assert_int_equal(json_integer_value(json_object_get(o, "dropped")), dropped);
    json_t *recs = json_object_get(o, "records");
    assert_true(json_is_array(recs));
    json_int_t prev = -1;
    static const char *const rkeys[] = {"phase", "start_ns", "end_ns", "detail", "tid"};
    for (size_t r = 0; r < json_array_size(recs); r++) {
        json_t *rec = json_array_get(recs, r);
        size_t j = 0;
        json_object_foreach(rec, k, v) {
            assert_true(j < 5);
            assert_string_equal(k, rkeys[j++]);
        }
        assert_int_equal(j, 5);
        json_int_t st = json_integer_value(json_object_get(rec, "start_ns"));
        assert_true(st >= prev);
        prev = st;
    }
    size_t n = json_array_size(recs);
    json_decref(o);
    return n;
}

/* Thousands of records in scrambled order: valid JSON longer than PIPE_BUF,
 * sorted, and records with equal start_ns keep their recording order. */
static void sorted_and_stable(void **state)
{
    (void)state;
    enum { N = 5000 };
    hbg_recpool *p = make(1, N);
    hbg_recpool_arm(p, 11, 3);
    for (uint64_t i = 0; i < N; i++) {
        uint64_t start = (i * 7919) % 1000; /* five records per start value */
        hbg_rec(p, (hbg_phase)(i % HBG_PHASE_COUNT), start, start + 1, i);
    }
    assert_int_equal(hbg_recpool_count(p), N);
    size_t len;
    char *s = jsonl(p, &len);
    assert_true(len > PIPE_BUF);
    assert_int_equal(check_json(s, 11, 3, 0), N);

    json_t *o = json_loads(s, 0, NULL);
    json_t *recs = json_object_get(o, "records");
    for (size_t r = 1; r < N; r++) {
        json_t *a = json_array_get(recs, r - 1), *b = json_array_get(recs, r);
        json_int_t sa = json_integer_value(json_object_get(a, "start_ns"));
        json_int_t sb = json_integer_value(json_object_get(b, "start_ns"));
        if (sa == sb)
            assert_true(json_integer_value(json_object_get(a, "detail")) <
                        json_integer_value(json_object_get(b, "detail")));
    }
    /* Each record's phase is the one it was recorded with. */
    for (size_t r = 0; r < N; r++) {
        json_t *a = json_array_get(recs, r);
        json_int_t d = json_integer_value(json_object_get(a, "detail"));
        assert_string_equal(json_string_value(json_object_get(a, "phase")),
                            hbg_phase_name((hbg_phase)(d % HBG_PHASE_COUNT)));
        assert_int_equal(json_integer_value(json_object_get(a, "end_ns")),
                         json_integer_value(json_object_get(a, "start_ns")) + 1);
    }
    json_decref(o);
    free(s);
    hbg_recpool_destroy(p);
}

/* A full buffer drops new records and keeps every earlier one. */
static void small_pool_drops(void **state)
{
    (void)state;
    hbg_recpool *p = make(1, 4);
    hbg_recpool_arm(p, 5, 1);
    for (uint64_t i = 0; i < 10; i++)
        hbg_rec(p, HBG_OP_SUBMIT_TASK, 100 - i, 200, i); /* later records start earlier */
    hbg_rec(p, HBG_PHASE_COUNT, 1, 2, 3);                 /* out of range: dropped too */
    assert_int_equal(hbg_recpool_count(p), 4);
    assert_int_equal(hbg_recpool_dropped(p), 7);
    char *s = jsonl(p, NULL);
    assert_int_equal(check_json(s, 5, 1, 7), 4);
    json_t *o = json_loads(s, 0, NULL);
    json_t *recs = json_object_get(o, "records");
    for (size_t r = 0; r < 4; r++) /* the first four, sorted: details 3, 2, 1, 0 */
        assert_int_equal(json_integer_value(json_object_get(json_array_get(recs, r), "detail")), 3 - r);
    json_decref(o);
    free(s);
    hbg_recpool_destroy(p);
}

static void *second_thread(void *arg)
{
    hbg_recpool *p = arg;
    for (int i = 0; i < 3; i++)
        hbg_rec(p, HBG_OP_RECORD_NODE, 50, 60, 9);
    return NULL;
}

/* A thread arriving when every buffer is claimed has all its records dropped. */
static void no_free_buffer(void **state)
{
    (void)state;
    hbg_recpool *p = make(1, 16);
    hbg_recpool_arm(p, 5, 2);
    hbg_rec(p, HBG_OP_SUBMIT_TASK, 1, 2, 3);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, second_thread, p), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    hbg_rec(p, HBG_OP_SUBMIT_TASK, 4, 5, 6);
    assert_int_equal(hbg_recpool_count(p), 2);
    assert_int_equal(hbg_recpool_dropped(p), 3);
    char *s = jsonl(p, NULL);
    assert_int_equal(check_json(s, 5, 2, 3), 2);
    free(s);
    hbg_recpool_destroy(p);
}

static void arming(void **state)
{
    (void)state;
    hbg_recpool *p = make(2, 4);
    assert_false(hbg_recpool_armed(p));
    int fd = capture_open();
    assert_int_equal(hbg_recpool_write_jsonl(p, fd), HBG_E_STATE); /* never armed */
    hbg_rec(p, HBG_OP_SUBMIT_TASK, 1, 2, 3);                       /* ignored, not dropped */
    assert_int_equal(hbg_recpool_count(p), 0);
    assert_int_equal(hbg_recpool_dropped(p), 0);

    hbg_recpool_arm(p, 1, 1);
    assert_true(hbg_recpool_armed(p));
    for (int i = 0; i < 6; i++)
        hbg_rec(p, HBG_OP_SUBMIT_TASK, 1, 2, 3);
    assert_int_equal(hbg_recpool_count(p), 4);
    assert_int_equal(hbg_recpool_dropped(p), 2);
    hbg_recpool_disarm(p);
    assert_false(hbg_recpool_armed(p));
    hbg_rec(p, HBG_OP_SUBMIT_TASK, 1, 2, 3);
    assert_int_equal(hbg_recpool_count(p), 4);
    assert_int_equal(hbg_recpool_dropped(p), 2);

    /* A new pass forgets the old one's records and drops; the same thread
     * gets a buffer again (its cached one belongs to the old pass). */
    hbg_recpool_arm(p, 1, 2);
    assert_int_equal(hbg_recpool_count(p), 0);
    assert_int_equal(hbg_recpool_dropped(p), 0);
    hbg_rec(p, HBG_OP_GRAPH_SUBMIT, 8, 9, 10);
    assert_int_equal(hbg_recpool_count(p), 1);
    char *s = jsonl(p, NULL);
    assert_int_equal(check_json(s, 1, 2, 0), 1);
    free(s);
    /* Over many passes one thread never runs out of buffers. */
    for (int pass = 0; pass < 100; pass++) {
        hbg_recpool_arm(p, 1, (uint64_t)pass);
        hbg_rec(p, HBG_OP_GRAPH_SUBMIT, 8, 9, 10);
        assert_int_equal(hbg_recpool_count(p), 1);
        assert_int_equal(hbg_recpool_dropped(p), 0);
    }
    close(fd);
    hbg_recpool_destroy(p);
}

/* One thread alternating between pools keeps one buffer in each. */
static void two_pools(void **state)
{
    (void)state;
    hbg_recpool *a = make(1, 100), *b = make(1, 100);
    hbg_recpool_arm(a, 1, 1);
    hbg_recpool_arm(b, 1, 1);
    for (int i = 0; i < 50; i++) {
        hbg_rec(a, HBG_OP_SUBMIT_TASK, (uint64_t)i, 0, 0);
        hbg_rec(b, HBG_OP_SUBMIT_TASK, (uint64_t)i, 0, 0);
    }
    assert_int_equal(hbg_recpool_count(a), 50);
    assert_int_equal(hbg_recpool_count(b), 50);
    assert_int_equal(hbg_recpool_dropped(a) + hbg_recpool_dropped(b), 0);
    hbg_recpool_destroy(a);
    /* A pool created where a freed one lived is a different pass. */
    hbg_recpool *c = make(1, 100);
    hbg_recpool_arm(c, 1, 1);
    hbg_rec(c, HBG_OP_SUBMIT_TASK, 1, 0, 0);
    assert_int_equal(hbg_recpool_count(c), 1);
    hbg_recpool_destroy(b);
    hbg_recpool_destroy(c);
}

/* A thread that records into more pools than its cache remembers finds
 * the buffer it claimed before: each pool below has room for one thread,
 * so a second claim by the same thread would drop every later record. */
static void more_pools_than_cache_slots(void **state)
{
    (void)state;
    enum { NP = 7, ROUNDS = 5 };
    hbg_recpool *p[NP];
    for (int k = 0; k < NP; k++) {
        p[k] = make(1, 100);
        hbg_recpool_arm(p[k], 1, 1);
    }
    for (int r = 0; r < ROUNDS; r++)
        for (int k = 0; k < NP; k++)
            hbg_rec(p[k], HBG_OP_SUBMIT_TASK, (uint64_t)r, 0, 0);
    for (int k = 0; k < NP; k++) {
        assert_int_equal(hbg_recpool_count(p[k]), ROUNDS);
        assert_int_equal(hbg_recpool_dropped(p[k]), 0);
        hbg_recpool_destroy(p[k]);
    }
}

static void bad_arguments(void **state)
{
    (void)state;
    hbg_recpool *p = (hbg_recpool *)1;
    assert_int_equal(hbg_recpool_create(0, 4, &p), HBG_E_INVAL);
    assert_null(p);
    assert_int_equal(hbg_recpool_create(4, 0, &p), HBG_E_INVAL);
    assert_int_equal(hbg_recpool_create(65536, 65536, &p), HBG_E_INVAL);
    assert_int_equal(hbg_recpool_create(1, 1, NULL), HBG_E_INVAL);
    p = make(1, 1);
    hbg_recpool_arm(p, 1, 1);
    assert_int_equal(hbg_recpool_write_jsonl(p, -1), HBG_E_INVAL);
    assert_int_equal(hbg_recpool_write_jsonl(NULL, 1), HBG_E_INVAL);
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    close(fds[0]);
    close(fds[1]);
    assert_int_equal(hbg_recpool_write_jsonl(p, fds[1]), HBG_E_IO); /* closed fd */
    hbg_recpool_destroy(p);
    /* NULL pools are quiet no-ops. */
    hbg_rec(NULL, HBG_OP_SUBMIT_TASK, 1, 2, 3);
    hbg_recpool_arm(NULL, 1, 1);
    hbg_recpool_disarm(NULL);
    assert_false(hbg_recpool_armed(NULL));
    assert_int_equal(hbg_recpool_count(NULL), 0);
    assert_int_equal(hbg_recpool_dropped(NULL), 0);
    hbg_recpool_destroy(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_line),       cmocka_unit_test(sorted_and_stable), cmocka_unit_test(small_pool_drops),
        cmocka_unit_test(no_free_buffer),   cmocka_unit_test(arming),            cmocka_unit_test(two_pools),
        cmocka_unit_test(bad_arguments),    cmocka_unit_test(tick_records),
        cmocka_unit_test(more_pools_than_cache_slots),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
