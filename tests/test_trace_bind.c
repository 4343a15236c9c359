/* The bind burst: segment lines in run order with arena_h2d last, the five
 * host-orch lines, pid=/inv= on every line, one mono_ns for the burst. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "hbg/trace.h"
#include "support/capture.h"

static void set_seg(hbg_bind_trace *bt, hbg_phase s, uint64_t start, uint64_t dur)
{
    bt->seg[s].start_ns = start;
    bt->seg[s].dur_ns = dur;
}

static void add_attr(hbg_bind_trace *bt, hbg_phase s, const char *k, uint64_t v)
{
    bt->seg[s].attr[bt->seg[s].nattr].key = k;
    bt->seg[s].attr[bt->seg[s].nattr].value = v;
    bt->seg[s].nattr++;
}

/* A pass shaped like the fixture's first one (hbg-grammar-1rank-3round). */
static hbg_bind_trace fixture_pass(void)
{
    hbg_bind_trace bt;
    memset(&bt, 0, sizeof bt);
    bt.pid = 31337;
    bt.inv = 1;
    static const uint8_t ran[] = {HBG_PH_ARGS, HBG_PH_ARENA_BUILD, HBG_PH_STATIC_ARENA, HBG_PH_GM_HEAP,
                                  HBG_PH_SHARED_MEM, HBG_PH_RUNTIME_INIT, HBG_PH_HOST_ORCH,
                                  HBG_PH_GRAPH_UPLOAD, HBG_PH_ARENA_H2D, HBG_PH_HOST_VIEW_CLOSE};
    memcpy(bt.order, ran, sizeof ran);
    bt.nran = sizeof ran;
    set_seg(&bt, HBG_PH_ARGS, 5120000000000, 4401047294);
    add_attr(&bt, HBG_PH_ARGS, "ntensor", 20);
    add_attr(&bt, HBG_PH_ARGS, "staged", 19);
    add_attr(&bt, HBG_PH_ARGS, "bytes", 40859999040);
    set_seg(&bt, HBG_PH_ARENA_BUILD, 5124401048294, 134258);
    add_attr(&bt, HBG_PH_ARENA_BUILD, "bytes", 9437184);
    add_attr(&bt, HBG_PH_ARENA_BUILD, "device", 704);
    set_seg(&bt, HBG_PH_STATIC_ARENA, 5124401183552, 9179);
    add_attr(&bt, HBG_PH_STATIC_ARENA, "heap", 268435456);
    add_attr(&bt, HBG_PH_STATIC_ARENA, "arena", 1048576);
    set_seg(&bt, HBG_PH_GM_HEAP, 5124401193731, 3826);
    set_seg(&bt, HBG_PH_SHARED_MEM, 5124401198557, 18443);
    add_attr(&bt, HBG_PH_SHARED_MEM, "bytes", 177152);
    set_seg(&bt, HBG_PH_RUNTIME_INIT, 5124401218000, 41796);
    set_seg(&bt, HBG_PH_HOST_ORCH, 5124401260796, 1893238);
    add_attr(&bt, HBG_PH_HOST_ORCH, "tasks", 47);
    add_attr(&bt, HBG_PH_HOST_ORCH, "heap_used", 127673344);
    set_seg(&bt, HBG_PH_GRAPH_UPLOAD, 5124403155034, 957888);
    add_attr(&bt, HBG_PH_GRAPH_UPLOAD, "defs", 1);
    add_attr(&bt, HBG_PH_GRAPH_UPLOAD, "bytes", 130432);
    add_attr(&bt, HBG_PH_GRAPH_UPLOAD, "submissions", 40);
    set_seg(&bt, HBG_PH_ARENA_H2D, 5124404113922, 149841);
    add_attr(&bt, HBG_PH_ARENA_H2D, "nt", 47);
    add_attr(&bt, HBG_PH_ARENA_H2D, "bytes", 180480);
    add_attr(&bt, HBG_PH_ARENA_H2D, "copied", 704);
    add_attr(&bt, HBG_PH_ARENA_H2D, "sm", 56320);
    add_attr(&bt, HBG_PH_ARENA_H2D, "subs", 123456);
    set_seg(&bt, HBG_PH_HOST_VIEW_CLOSE, 5124404264763, 930100763);
    add_attr(&bt, HBG_PH_HOST_VIEW_CLOSE, "count", 19);
    add_attr(&bt, HBG_PH_HOST_VIEW_CLOSE, "bytes", 40859999040);
    static const uint64_t ops[HBG_OP_COUNT][5] = {{767447, 983, 0, 0, 61},
                                                  {896163, 868, 0, 0, 54},
                                                  {922800, 381, 0, 0, 381},
                                                  {90930, 865, 0, 0, 865},
                                                  {635281, 345, 0, 0, 345}};
    for (int k = 0; k < HBG_OP_COUNT; k++) {
        bt.op[k].total_ns = ops[k][0];
        bt.op[k].count = ops[k][1];
        bt.op[k].detail_sum = ops[k][2];
        bt.op[k].dropped = ops[k][3];
        bt.op[k].timed = ops[k][4];
    }
    return bt;
}

/* The burst's lines, prefix checked and stripped: each entry is the message
 * after "[bind_trace.c:<n>] ". `lines` gets the <n> of each. */
static size_t burst(const hbg_bind_trace *bt, char **msg, int *lines, size_t max)
{
    int fd = capture_open();
    hbg_log *lg = NULL;
    assert_int_equal(hbg_log_open(fd, HBG_LOG_TIMING, &lg), HBG_OK);
    hbg_bind_trace_emit(lg, bt);
    hbg_log_close(lg);
    char *out = capture_read(fd, NULL);
    close(fd);
    char *a = capture_line(out, 0);
    assert_non_null(strstr(a, "] clock_anchor: [CLOCK_ANCHOR] v=1 pid="));
    free(a);
    size_t n = 0;
    unsigned long long mono0 = 0;
    for (char *l; (l = capture_line(out, n + 1)) != NULL; n++) {
        assert_true(n < max);
        unsigned long long mono;
        unsigned long th;
        int k = -1;
        assert_int_equal(sscanf(l, "[mono_ns=%llu][T0x%lx][TIMING] bind_trace_end: [bind_trace.c:%d] %n", &mono,
                                &th, &lines[n], &k),
                         3);
        assert_true(k > 0);
        if (n == 0)
            mono0 = mono;
        assert_int_equal(mono, mono0); /* one mono_ns for the whole burst */
        msg[n] = strdup(l + k);
        free(l);
    }
    free(out);
    return n;
}

static void fixture_burst(void **state)
{
    (void)state;
    hbg_bind_trace bt = fixture_pass();
    static const char *const want[] = {
        "bind phase=args start_ns=5120000000000 dur_ns=4401047294 ntensor=20 staged=19 bytes=40859999040 pid=31337 inv=1",
        "bind phase=arena_build start_ns=5124401048294 dur_ns=134258 bytes=9437184 device=704 pid=31337 inv=1",
        "bind phase=static_arena start_ns=5124401183552 dur_ns=9179 heap=268435456 arena=1048576 pid=31337 inv=1",
        "bind phase=gm_heap start_ns=5124401193731 dur_ns=3826  pid=31337 inv=1",
        "bind phase=shared_mem start_ns=5124401198557 dur_ns=18443 bytes=177152 pid=31337 inv=1",
        "bind phase=runtime_init start_ns=5124401218000 dur_ns=41796  pid=31337 inv=1",
        "bind phase=host_orch start_ns=5124401260796 dur_ns=1893238 tasks=47 heap_used=127673344 pid=31337 inv=1",
        "bind phase=graph_upload start_ns=5124403155034 dur_ns=957888 defs=1 bytes=130432 submissions=40 pid=31337 inv=1",
        "bind phase=host_view_close start_ns=5124404264763 dur_ns=930100763 count=19 bytes=40859999040 pid=31337 inv=1",
        "bind phase=arena_h2d start_ns=5124404113922 dur_ns=149841 nt=47 bytes=180480 copied=704 sm=56320 subs=123456 pid=31337 inv=1",
        "host-orch phase=submit_task total_ns=767447 count=983 detail_sum=0 dropped=0 timed=61 pid=31337 inv=1",
        "host-orch phase=alloc_tensors total_ns=896163 count=868 detail_sum=0 dropped=0 timed=54 pid=31337 inv=1",
        "host-orch phase=record_node total_ns=922800 count=381 detail_sum=0 dropped=0 timed=381 pid=31337 inv=1",
        "host-orch phase=graph_submit total_ns=90930 count=865 detail_sum=0 dropped=0 timed=865 pid=31337 inv=1",
        "host-orch phase=build_definition total_ns=635281 count=345 detail_sum=0 dropped=0 timed=345 pid=31337 inv=1",
    };
    char *msg[32];
    int lines[32];
    size_t n = burst(&bt, msg, lines, 32);
    assert_int_equal(n, 15);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(msg[i], want[i]);
        /* bind lines share one source line, host-orch lines another */
        assert_int_equal(lines[i], lines[i < 10 ? 0 : 10]);
        free(msg[i]);
    }
    assert_true(lines[0] > 0 && lines[10] > 0 && lines[0] != lines[10]);
}

/* arena_h2d goes last whatever the run order says; repeats and
 * out-of-range entries are skipped; segments that did not run are absent. */
static void order_rules(void **state)
{
    (void)state;
    hbg_bind_trace bt;
    memset(&bt, 0, sizeof bt);
    bt.pid = 9;
    bt.inv = 77;
    static const uint8_t ran[] = {HBG_PH_ARENA_H2D, HBG_PH_HOST_ORCH, 200, HBG_PH_HOST_ORCH, HBG_PH_ARGS};
    memcpy(bt.order, ran, sizeof ran);
    bt.nran = sizeof ran;
    set_seg(&bt, HBG_PH_ARENA_H2D, 30, 3);
    set_seg(&bt, HBG_PH_HOST_ORCH, 10, 1);
    set_seg(&bt, HBG_PH_ARGS, 20, 2);
    add_attr(&bt, HBG_PH_ARGS, NULL, 5); /* NULL key: skipped */
    add_attr(&bt, HBG_PH_ARGS, "bytes", 6);
    bt.op[HBG_OP_RECORD_NODE - HBG_SEGMENT_COUNT].dropped = 12;
    char *msg[32];
    int lines[32];
    size_t n = burst(&bt, msg, lines, 32);
    assert_int_equal(n, 3 + HBG_OP_COUNT);
    assert_string_equal(msg[0], "bind phase=host_orch start_ns=10 dur_ns=1  pid=9 inv=77");
    assert_string_equal(msg[1], "bind phase=args start_ns=20 dur_ns=2 bytes=6 pid=9 inv=77");
    assert_string_equal(msg[2], "bind phase=arena_h2d start_ns=30 dur_ns=3  pid=9 inv=77");
    static const char *const kinds[] = {"submit_task", "alloc_tensors", "record_node", "graph_submit",
                                        "build_definition"};
    for (int k = 0; k < HBG_OP_COUNT; k++) {
        char want[160];
        snprintf(want, sizeof want,
                 "host-orch phase=%s total_ns=0 count=0 detail_sum=0 dropped=%d timed=0 pid=9 inv=77", kinds[k],
                 k == 2 ? 12 : 0);
        assert_string_equal(msg[3 + k], want);
    }
    for (size_t i = 0; i < n; i++)
        free(msg[i]);

    /* nran beyond the table is clamped, and no segment repeats. */
    memset(bt.order, HBG_PH_GM_HEAP, sizeof bt.order);
    bt.nran = 1000;
    n = burst(&bt, msg, lines, 32);
    assert_int_equal(n, 1 + HBG_OP_COUNT);
    assert_string_equal(msg[0], "bind phase=gm_heap start_ns=0 dur_ns=0  pid=9 inv=77");
    for (size_t i = 0; i < n; i++)
        free(msg[i]);
}

static void below_threshold(void **state)
{
    (void)state;
    hbg_bind_trace bt = fixture_pass();
    int fd = capture_open();
    hbg_log *lg = NULL;
    assert_int_equal(hbg_log_open(fd, HBG_LOG_WARN, &lg), HBG_OK);
    hbg_bind_trace_emit(lg, &bt);
    hbg_bind_trace_emit(lg, NULL);
    hbg_bind_trace_emit(NULL, &bt);
    hbg_log_close(lg);
    char *out = capture_read(fd, NULL);
    assert_string_equal(out, "");
    free(out);
    close(fd);
}

static void phase_names(void **state)
{
    (void)state;
    static const char *const want[HBG_PHASE_COUNT] = {
        "args", "arena_build", "static_arena", "gm_heap", "shared_mem", "runtime_init", "host_orch",
        "graph_upload", "arena_h2d", "host_view_close", "submit_task", "alloc_tensors", "record_node",
        "graph_submit", "build_definition"};
    for (int p = 0; p < HBG_PHASE_COUNT; p++)
        assert_string_equal(hbg_phase_name((hbg_phase)p), want[p]);
    assert_string_equal(hbg_phase_name(HBG_PHASE_COUNT), "unknown");
    assert_string_equal(hbg_phase_name(HBG_PH_NONE), "none");
    assert_int_equal(HBG_OP_COUNT, 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fixture_burst),
        cmocka_unit_test(order_rules),
        cmocka_unit_test(below_threshold),
        cmocka_unit_test(phase_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
