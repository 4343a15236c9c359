/* Concurrency (run under ThreadSanitizer too): eight threads recording into
 * one pool at once, threads finding the pool full, and eight threads racing
 * to write a log's first record (exactly one anchor, and it comes first). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "hbg/trace.h"
#include "support/capture.h"

enum { THREADS = 8, PER = 2000 };

typedef struct worker {
    hbg_recpool *pool;
    hbg_log *log;
    pthread_barrier_t *go;
    unsigned idx;
    uint32_t tid;
} worker;

static void *recorder(void *arg)
{
    worker *w = arg;
    w->tid = hbg_gettid();
    pthread_barrier_wait(w->go);
    for (uint64_t i = 0; i < PER; i++) {
        /* Interleaved start times across threads; detail = idx * PER + i. */
        uint64_t start = i * THREADS + w->idx;
        hbg_rec(w->pool, HBG_OP_SUBMIT_TASK, start, start + 1, w->idx * PER + i);
    }
    return NULL;
}

static void run(hbg_recpool *p, worker *w)
{
    pthread_t t[THREADS];
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, THREADS);
    for (unsigned i = 0; i < THREADS; i++) {
        w[i] = (worker){.pool = p, .go = &go, .idx = i};
        assert_int_equal(pthread_create(&t[i], NULL, recorder, &w[i]), 0);
    }
    for (unsigned i = 0; i < THREADS; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    pthread_barrier_destroy(&go);
}

static void eight_recorders(void **state)
{
    (void)state;
    hbg_recpool *p = NULL;
    assert_int_equal(hbg_recpool_create(THREADS, PER, &p), HBG_OK);
    hbg_recpool_arm(p, 77, 5);
    worker w[THREADS];
    run(p, w);
    hbg_recpool_disarm(p);
    assert_int_equal(hbg_recpool_count(p), THREADS * PER);
    assert_int_equal(hbg_recpool_dropped(p), 0);

    int fd = capture_open();
    assert_int_equal(hbg_recpool_write_jsonl(p, fd), HBG_OK);
    char *s = capture_read(fd, NULL);
    close(fd);
    json_error_t err;
    json_t *o = json_loads(s, 0, &err);
    if (!o)
        fail_msg("invalid JSON at %d: %s", err.position, err.text);
    assert_int_equal(json_integer_value(json_object_get(o, "pid")), 77);
    assert_int_equal(json_integer_value(json_object_get(o, "inv")), 5);
    assert_int_equal(json_integer_value(json_object_get(o, "dropped")), 0);
    json_t *recs = json_object_get(o, "records");
    assert_int_equal(json_array_size(recs), THREADS * PER);
    /* Start times are all distinct, so the sort fixes every position: the
     * record at position k started at k and came from thread k % THREADS. */
    for (size_t k = 0; k < THREADS * PER; k++) {
        json_t *r = json_array_get(recs, k);
        unsigned idx = (unsigned)(k % THREADS);
        assert_int_equal(json_integer_value(json_object_get(r, "start_ns")), k);
        assert_int_equal(json_integer_value(json_object_get(r, "detail")), idx * PER + k / THREADS);
        assert_int_equal(json_integer_value(json_object_get(r, "tid")), w[idx].tid);
    }
    json_decref(o);
    free(s);
    hbg_recpool_destroy(p);
}

/* Four buffers for eight threads: exactly four threads' records are kept,
 * each whole, and the other four threads' records are all counted dropped. */
static void more_threads_than_buffers(void **state)
{
    (void)state;
    hbg_recpool *p = NULL;
    assert_int_equal(hbg_recpool_create(THREADS / 2, PER, &p), HBG_OK);
    hbg_recpool_arm(p, 1, 1);
    worker w[THREADS];
    run(p, w);
    assert_int_equal(hbg_recpool_count(p), THREADS / 2 * PER);
    assert_int_equal(hbg_recpool_dropped(p), THREADS / 2 * PER);
    hbg_recpool_destroy(p);
}

static void *first_logger(void *arg)
{
    worker *w = arg;
    pthread_barrier_wait(w->go);
    HBG_LOG(w->log, HBG_LOG_TIMING, "thread %u", w->idx);
    return NULL;
}

static void anchor_race(void **state)
{
    (void)state;
    for (int round = 0; round < 20; round++) {
        int fd = capture_open();
        hbg_log *lg = NULL;
        assert_int_equal(hbg_log_open(fd, HBG_LOG_TIMING, &lg), HBG_OK);
        pthread_t t[THREADS];
        pthread_barrier_t go;
        pthread_barrier_init(&go, NULL, THREADS);
        worker w[THREADS];
        for (unsigned i = 0; i < THREADS; i++) {
            w[i] = (worker){.log = lg, .go = &go, .idx = i};
            assert_int_equal(pthread_create(&t[i], NULL, first_logger, &w[i]), 0);
        }
        for (unsigned i = 0; i < THREADS; i++)
            assert_int_equal(pthread_join(t[i], NULL), 0);
        pthread_barrier_destroy(&go);
        hbg_log_close(lg);
        char *out = capture_read(fd, NULL);
        close(fd);
        assert_int_equal(capture_count(out, "[CLOCK_ANCHOR]"), 1);
        assert_int_equal(capture_count(out, "] first_logger: [test_trace_threaded.c:"), THREADS);
        char *l0 = capture_line(out, 0);
        assert_non_null(strstr(l0, "] clock_anchor: [CLOCK_ANCHOR] v=1 pid="));
        free(l0);
        free(out);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(eight_recorders),
        cmocka_unit_test(more_threads_than_buffers),
        cmocka_unit_test(anchor_race),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
