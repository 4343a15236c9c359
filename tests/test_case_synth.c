/* synth: the exact counts of docs/case-synth.md from the orchestrator, for
 * several parameter sets; the device run on the sim backend matched
 * against the eager golden (which must fail on a changed word); the caps,
 * with their messages, from the case and from `hbg run`. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hbg/image.h"
#include "hbg/runtime.h"
#include "support/fault_support.h"
#include "support/orch_fixture.h"
#include "support/run_support.h"
#include "hostmem.h"
#include "synth/synth.h"

static hbg_case_env env_of(uint32_t tasks, uint32_t nodes, uint32_t replays, uint32_t boundary, uint32_t fanin)
{
    hbg_case_env env;
    hbg_case_env_init(&hbg_case_synth, &env);
    env.nranks = 1;
    env.param[SYN_P_TASKS] = tasks;
    env.param[SYN_P_NODES] = nodes;
    env.param[SYN_P_REPLAYS] = replays;
    env.param[SYN_P_BOUNDARY] = boundary;
    env.param[SYN_P_FANIN] = fanin;
    return env;
}

static void test_params_and_defaults(void **state)
{
    (void)state;
    assert_ptr_equal(hbg_case_find("synth"), &hbg_case_synth);
    assert_int_equal(hbg_case_param_index(&hbg_case_synth, "tasks"), SYN_P_TASKS);
    assert_int_equal(hbg_case_param_index(&hbg_case_synth, "graph-nodes"), SYN_P_NODES);
    assert_int_equal(hbg_case_param_index(&hbg_case_synth, "replays"), SYN_P_REPLAYS);
    assert_int_equal(hbg_case_param_index(&hbg_case_synth, "boundary"), SYN_P_BOUNDARY);
    assert_int_equal(hbg_case_param_index(&hbg_case_synth, "fanin"), SYN_P_FANIN);
    assert_int_equal(hbg_case_param_index(&hbg_case_synth, "bound"), SYN_P_BOUND);
    assert_int_equal(hbg_case_param_index(&hbg_case_synth, "fault-round"), SYN_P_FAULT);
    assert_int_equal(hbg_case_param_index(&hbg_case_synth, "tile-unit"), -1);
    assert_int_equal(hbg_case_param_index(hbg_case_find("qwen"), "tasks"), -1);
    hbg_case_env env;
    hbg_case_env_init(&hbg_case_synth, &env);
    syn_params p = syn_params_of(&env);
    assert_int_equal(p.tasks, 1000);
    assert_int_equal(p.nodes, 100);
    assert_int_equal(p.replays, 10);
    assert_int_equal(p.boundary, 8);
    assert_int_equal(p.fanin, 2);
    assert_int_equal(p.bound, 0);
    /* 1000 tasks: 8 buffers, one alloc; 1011 tasks; 8 x 2 KB + 10 x 99 x 64 B + 1 MB */
    hbg_case_pools pools;
    char msg[256];
    assert_int_equal(hbg_case_pools_for(&hbg_case_synth, &env, &pools, msg, sizeof msg), HBG_OK);
    assert_int_equal(pools.task_window, 1011);
    assert_int_equal(pools.heap_bytes, 8 * 2048 + 10 * 99 * 64 + (1u << 20));
    /* the journal: the default's 16 a window task, more than 1000 x (2 + 4) + 10 x 2 x 8 */
    assert_int_equal(pools.journal_calls, 1011 * 16);
    /* 1000 replays of 128 slots: 1000 x (2 + 4) + 1000 x 2 x 128, past 2001 x 16 */
    hbg_case_env wide = env_of(1000, 100, 1000, 128, 2);
    assert_int_equal(hbg_case_pools_for(&hbg_case_synth, &wide, &pools, msg, sizeof msg), HBG_OK);
    assert_int_equal(pools.journal_calls, 262000);
    /* a case without a hook: its own heap, the default window */
    assert_int_equal(hbg_case_pools_for(hbg_case_find("qwen"), &env, &pools, msg, sizeof msg), HBG_OK);
    assert_int_equal(pools.task_window, 0);
    assert_int_equal(pools.heap_bytes, 256ull << 20);
}

/* Three binds over a fake address space: every count exact, every pass;
 * the third follows the journal the second wrote (sized by the case),
 * and the memo answers all but the recording call. */
/* Three passes of the case on orchestrators over a fake heap, its
 * replays passed as boundaries and, beside it, in bounds (--bound 1):
 * the counts the docs give, and the two images the same byte for byte. */
static void check_counts(uint32_t N, uint32_t M, uint32_t R, uint32_t B, uint32_t F)
{
    hbg_case_pools pools;
    char msg[256];
    uint32_t chunks = (N + 127) / 128, allocs = (chunks + 31) / 32;
    hbg_kernel_table *kt[2];
    hbg_program prog[2];
    void *state[2];
    hbg_orch *os[2];
    for (int v = 0; v < 2; v++) {
        hbg_case_env env = env_of(N, M, R, B, F);
        env.param[SYN_P_BOUND] = (uint64_t)v;
        assert_int_equal(hbg_case_pools_for(&hbg_case_synth, &env, &pools, msg, sizeof msg), HBG_OK);
        assert_int_equal(pools.task_window, N + R + allocs);
        assert_int_equal(hbg_kernel_table_create(&kt[v]), HBG_OK);
        assert_int_equal(hbg_case_synth.setup(&env, kt[v], &prog[v], &state[v]), HBG_OK);
        assert_int_equal(prog[v].nargs, 2);
        assert_int_equal(prog[v].args[1].layout.nbytes, (uint64_t)(R + 1) * 16);
        hbg__orch_config cfg = {.heap_base = FAKE_HEAP_BASE, .heap_bytes = pools.heap_bytes,
                               .task_window = pools.task_window, .journal_calls = pools.journal_calls, .nranks = 1};
        assert_int_equal(hbg__graph_orch_create(&cfg, &os[v]), HBG_OK);
        hbg__orch_set_timing(os[v], true, NULL);
    }
    hbg_tensor args[2];
    for (uint32_t i = 0; i < 2; i++) {
        args[i] = prog[0].args[i].layout;
        args[i].addr = 0x4000000000ull + (uint64_t)i * (1ull << 30);
    }
    for (int pass = 0; pass < 3; pass++) {
        for (int v = 0; v < 2; v++) {
            hbg_orch *o = os[v];
            uint64_t hits = o->memo_hits;
            hbg__orch_begin_pass(o, FAKE_HEAP_BASE, args, 2);
            assert_int_equal(prog[v].orch(o, prog[v].ctx), HBG_OK);
            assert_int_equal(hbg__orch_end_pass(o), HBG_OK);
            assert_false(pass && o->map.j.stopped);
            assert_int_equal(o->memo_hits - hits, pass < 2 ? 0 : N + allocs + (R ? R - 1 : 0));
            assert_int_equal(hbg_orch_task_count(o), N + R + allocs);
            uint32_t kernel = 0, alloc = 0, rep = 0;
            for (uint32_t i = 0; i < hbg_orch_task_count(o); i++) {
                kernel += o->img.tasks[i].kind == HBG_TASK_KERNEL;
                alloc += o->img.tasks[i].kind == HBG_TASK_ALLOC;
                rep += o->img.tasks[i].kind == HBG_TASK_REPLAY;
            }
            assert_int_equal(kernel, N);
            assert_int_equal(alloc, allocs);
            assert_int_equal(rep, R);
            /* the per-operation counts the log's host-orch lines carry */
            assert_int_equal(o->ops[HBG_OP_SUBMIT_TASK - HBG_SEGMENT_COUNT].count, N);
            assert_int_equal(o->ops[HBG_OP_ALLOC_TENSORS - HBG_SEGMENT_COUNT].count, allocs);
            assert_int_equal(o->ops[HBG_OP_RECORD_NODE - HBG_SEGMENT_COUNT].count, R ? M : 0);
            assert_int_equal(o->ops[HBG_OP_GRAPH_SUBMIT - HBG_SEGMENT_COUNT].count, R);
            assert_int_equal(o->img.nbtensor, R * B);
            assert_int_equal(o->img.nreplay, R);
            assert_int_equal(hbg_orch_def_count(o), R ? 1 : 0);
            if (R) {
                hbg_def_info di;
                assert_int_equal(hbg_orch_def_info(o, 0, &di), HBG_OK);
                assert_int_equal(di.nodes, M);
                assert_int_equal(di.by_kind[HBG_NODE_AIC], M);
                assert_int_equal(di.boundary_tensors, B);
                assert_int_equal(di.boundary_in, B - 1);
                assert_int_equal(di.boundary_out, 1);
                assert_int_equal(di.boundary_scalars, 0);
                assert_int_equal(di.heap_bytes, (uint64_t)(M - 1) * 64);
            }
            /* everything the pass carved fits the heap the case asked for */
            assert_true(hbg_orch_heap_used(o) <= pools.heap_bytes);
        }
        fx_same_images(os[0], os[1]);
    }
    for (int v = 0; v < 2; v++) {
        hbg__orch_destroy(os[v]);
        hbg_case_synth.teardown(state[v]);
        hbg_kernel_table_destroy(kt[v]);
    }
}

static void test_counts(void **state)
{
    (void)state;
    check_counts(1000, 100, 10, 8, 2);
    check_counts(1, 1, 0, 1, 0);
    check_counts(129, 7, 5, 128, 16);
    check_counts(4097, 3, 40, 2, 1);
    check_counts(5000, 1, 3, 1, 16);
}

/* The dependencies the tensor map infers for the first tasks: a view of
 * two rows depends on both writers, a column on 64. */
static void test_overlapping_views(void **state)
{
    (void)state;
    hbg_case_env env = env_of(300, 2, 0, 1, 2);
    hbg_case_pools pools;
    char msg[256];
    assert_int_equal(hbg_case_pools_for(&hbg_case_synth, &env, &pools, msg, sizeof msg), HBG_OK);
    hbg_kernel_table *kt;
    assert_int_equal(hbg_kernel_table_create(&kt), HBG_OK);
    hbg_program prog;
    void *st;
    assert_int_equal(hbg_case_synth.setup(&env, kt, &prog, &st), HBG_OK);
    hbg__orch_config cfg = {.heap_base = FAKE_HEAP_BASE, .heap_bytes = pools.heap_bytes,
                           .task_window = pools.task_window, .journal_calls = pools.journal_calls, .nranks = 1};
    hbg_orch *o;
    assert_int_equal(hbg__graph_orch_create(&cfg, &o), HBG_OK);
    hbg_tensor args[2] = {prog.args[0].layout, prog.args[1].layout};
    args[0].addr = 0x4000000000ull, args[1].addr = 0x5000000000ull;
    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, args, 2);
    assert_int_equal(prog.orch(o, prog.ctx), HBG_OK);
    assert_int_equal(hbg__orch_end_pass(o), HBG_OK);
    /* task 0 is the alloc; outer task i is task i + 1 */
    assert_int_equal(fx_fanin_count(o, 1), 0);
    assert_int_equal(fx_fanin_count(o, 2), 1); /* reads row 0 */
    assert_true(fx_has_edge(o, 1, 2));
    assert_int_equal(fx_fanin_count(o, 3), 2); /* rows 0..1 and row 0 */
    assert_int_equal(fx_fanin_count(o, 4), 3); /* rows 1..2 and 0..1 */
    assert_true(fx_has_edge(o, 1, 4) && fx_has_edge(o, 2, 4) && fx_has_edge(o, 3, 4));
    /* task 128 (the second buffer's first row): rows 126..127, 125..126,
     * and a column down rows 0..63 of the first buffer */
    assert_int_equal(fx_fanin_count(o, 129), 64 + 3);
    /* task 129: rows 128 (the buffer's first row, alone) and 126..127 */
    assert_int_equal(fx_fanin_count(o, 130), 3);
    hbg__orch_destroy(o);
    hbg_case_synth.teardown(st);
    hbg_kernel_table_destroy(kt);
}

/* A device run on the sim backend, two rounds, against the golden. */
static void check_device(uint32_t N, uint32_t M, uint32_t R, uint32_t B, uint32_t F, bool keep)
{
    hbg_case_env env = env_of(N, M, R, B, F);
    hbg_case_pools pools;
    char msg[256] = "";
    assert_int_equal(hbg_case_pools_for(&hbg_case_synth, &env, &pools, msg, sizeof msg), HBG_OK);
    hbg_kernel_table *kt;
    hbg_device *dev;
    hbg_runtime *rt;
    hbg_program prog;
    void *state;
    hbg_sim_config sc = {.rank = 0, .nranks = 1};
    assert_int_equal(hbg_sim_open(&sc, &dev), HBG_OK);
    assert_int_equal(hbg_kernel_table_create(&kt), HBG_OK);
    assert_int_equal(hbg_case_synth.setup(&env, kt, &prog, &state), HBG_OK);
    hbg_runtime_config rc = {.device = dev, .kernels = kt, .heap_bytes = pools.heap_bytes,
                             .task_window = pools.task_window, .keep_definitions = keep, .nranks = 1};
    assert_int_equal(hbg_runtime_create(&rc, &rt), HBG_OK);
    for (int round = 0; round < 2; round++) {
        hbg_pass_report rep;
        assert_int_equal(hbg_runtime_run(rt, &prog, false, &rep), HBG_OK);
        assert_int_equal(rep.tasks, pools.task_window);
        assert_int_equal(rep.run.replays, R);
        assert_int_equal(hbg_case_golden(&hbg_case_synth, state, &env, kt, msg, sizeof msg), HBG_OK);
    }
    /* the golden is able to fail */
    uint32_t *out = prog.args[1].host;
    out[4 * R + 2] ^= 1;
    assert_int_equal(hbg_case_golden(&hbg_case_synth, state, &env, kt, msg, sizeof msg), HBG_E_DEVICE);
    char want[64];
    snprintf(want, sizeof want, "out[%u][2] = 0x", R);
    assert_non_null(strstr(msg, want));
    assert_non_null(strstr(msg, "(exact match expected)"));
    hbg_runtime_destroy(rt);
    hbg_case_synth.teardown(state);
    hbg_kernel_table_destroy(kt);
    hbg_device_close(dev);
}

static void test_device_golden(void **state)
{
    (void)state;
    check_device(300, 5, 7, 3, 4, false);
    check_device(1, 1, 0, 1, 0, false);
    check_device(2, 3, 3, 128, 16, true);
    check_device(1000, 20, 12, 9, 2, true);
}

static void test_caps(void **state)
{
    (void)state;
    char msg[256];
    hbg_case_pools pools;
    hbg_case_env env = env_of(2097152, 1, 0, 1, 0);
    assert_int_equal(hbg_case_pools_for(&hbg_case_synth, &env, &pools, msg, sizeof msg), HBG_E_INVAL);
    assert_string_equal(msg, "2097664 tasks per pass (2097152 outer + 0 replays + 512 allocations) is past the cap "
                             "of 2097152 (the task window); lower --tasks or --replays");
    env = env_of(1000, 4096, 100000, 1, 0);
    assert_int_equal(hbg_case_pools_for(&hbg_case_synth, &env, &pools, msg, sizeof msg), HBG_E_INVAL);
    assert_string_equal(msg, "a pass needs 26209064960 bytes of GM heap, past the cap of 4294967296; lower --replays "
                             "or --graph-nodes");
    /* just inside the window cap */
    env = env_of(2097152 - 512 - 1, 1, 1, 1, 0);
    assert_int_equal(hbg_case_pools_for(&hbg_case_synth, &env, &pools, msg, sizeof msg), HBG_OK);
    assert_int_equal(pools.task_window, 2097152);
    /* setup refuses what the pools refuse */
    hbg_kernel_table *kt;
    assert_int_equal(hbg_kernel_table_create(&kt), HBG_OK);
    hbg_program prog;
    void *st = NULL;
    env = env_of(2097152, 1, 0, 1, 0);
    assert_int_equal(hbg_case_synth.setup(&env, kt, &prog, &st), HBG_E_INVAL);
    assert_null(st);
    /* the eager golden's own cap: every replay's nodes run inline */
    env = env_of(10, 4096, 1000, 1, 0);
    assert_int_equal(hbg_case_synth.setup(&env, kt, &prog, &st), HBG_OK);
    assert_int_equal(hbg_case_golden(&hbg_case_synth, st, &env, kt, msg, sizeof msg), HBG_E_INVAL);
    assert_string_equal(msg, "the eager golden would run 4096011 tasks a pass (10 outer + 1 allocations + 1000 "
                             "replays x 4096 nodes, each replay's nodes inline), past its cap of 2097152; lower "
                             "--replays, --graph-nodes or --tasks, or leave out the golden (--skip-golden)");
    hbg_case_synth.teardown(st);
    hbg_kernel_table_destroy(kt);
}

/* One pass of N outer tasks and R replays of M nodes on a sim bounded at
 * `limit` steps: its status, and the pass's error in rep. */
static hbg_status run_bounded(uint32_t N, uint32_t M, uint32_t R, uint32_t bound, uint64_t limit, hbg_pass_report *rep)
{
    hbg_case_env env = env_of(N, M, R, 3, 2);
    env.param[SYN_P_BOUND] = bound;
    hbg_case_pools pools;
    char msg[256] = "";
    assert_int_equal(hbg_case_pools_for(&hbg_case_synth, &env, &pools, msg, sizeof msg), HBG_OK);
    hbg_kernel_table *kt;
    hbg_device *dev;
    hbg_runtime *rt;
    hbg_program prog;
    void *state;
    hbg_sim_config sc = {.rank = 0, .nranks = 1, .max_steps = limit};
    assert_int_equal(hbg_sim_open(&sc, &dev), HBG_OK);
    assert_int_equal(hbg_kernel_table_create(&kt), HBG_OK);
    assert_int_equal(hbg_case_synth.setup(&env, kt, &prog, &state), HBG_OK);
    hbg_runtime_config rc = {
        .device = dev, .kernels = kt, .heap_bytes = pools.heap_bytes, .task_window = pools.task_window, .nranks = 1};
    assert_int_equal(hbg_runtime_create(&rc, &rt), HBG_OK);
    hbg_status st = hbg_runtime_run(rt, &prog, false, rep);
    hbg_runtime_destroy(rt);
    hbg_case_synth.teardown(state);
    hbg_kernel_table_destroy(kt);
    hbg_device_close(dev);
    return st;
}

/* The steps synth counts are the steps the sim counts: a device bounded
 * at exactly that many runs the pass, one bounded a step lower refuses it
 * with that count in its words; syn_check_steps draws the line at the
 * same place. N + A + R + R x M: the outer tasks and allocations, the
 * REPLAY tasks, the replayed nodes (one block each). */
static void check_steps(uint32_t N, uint32_t M, uint32_t R, uint32_t bound, uint64_t want)
{
    hbg_case_env env = env_of(N, M, R, 3, 2);
    env.param[SYN_P_BOUND] = bound;
    syn_params p = syn_params_of(&env);
    syn_counts n;
    char msg[400], err[300];
    assert_int_equal(syn_count(&p, &n, msg, sizeof msg), HBG_OK);
    assert_int_equal(n.device_steps, want);
    assert_int_equal(syn_check_steps(&p, want, msg, sizeof msg), HBG_OK);
    assert_int_equal(hbg_case_synth.steps(&env, want, msg, sizeof msg), HBG_OK);
    assert_int_equal(syn_check_steps(&p, want - 1, msg, sizeof msg), HBG_E_INVAL);
    assert_int_equal(hbg_case_synth.steps(&env, want - 1, msg, sizeof msg), HBG_E_INVAL);
    hbg_pass_report rep;
    assert_int_equal(run_bounded(N, M, R, bound, want, &rep), HBG_OK);
    assert_true(rep.device_ran);
    assert_int_equal(run_bounded(N, M, R, bound, want - 1, &rep), HBG_E_DEVICE);
    snprintf(err, sizeof err,
             "device run: sim: the image asks for %llu steps (tasks, replayed nodes and kernel blocks), past the "
             "limit of %llu (hbg_sim_config.max_steps)",
             (unsigned long long)want, (unsigned long long)(want - 1));
    assert_string_equal(rep.error, err);
}

static void test_device_steps(void **state)
{
    (void)state;
    check_steps(300, 5, 7, 0, 300 + 1 + 7 + 7 * 5);
    check_steps(300, 5, 7, 1, 300 + 1 + 7 + 7 * 5);
    check_steps(1, 1, 0, 0, 1 + 1);
    check_steps(5000, 3, 2, 0, 5000 + 2 + 2 + 2 * 3); /* 40 buffers: two allocations */
    check_steps(129, 4096, 2, 0, 129 + 1 + 2 + 2 * 4096);
    /* the default bound, 2^24, exactly: 4095 replays of 4096 steps and
     * 4096 more; a task more is a step past it */
    hbg_case_env env = env_of(4095, 4095, 4095, 8, 2);
    syn_params p = syn_params_of(&env);
    char msg[400];
    assert_int_equal(syn_check_steps(&p, HBG_SIM_MAX_STEPS, msg, sizeof msg), HBG_OK);
    p.tasks = 4096;
    assert_int_equal(syn_check_steps(&p, HBG_SIM_MAX_STEPS, msg, sizeof msg), HBG_E_INVAL);
    assert_string_equal(msg, "a device run asks for 16777217 steps a pass (4096 outer + 1 allocations + 4095 replays "
                             "x (1 + 4095 nodes)), past the device's limit of 16777216 (--device-steps); lower "
                             "--replays, --graph-nodes or --tasks, raise --device-steps, or leave out the device run "
                             "(--skip-device-run)");
    /* a parameter past its cap is refused as the pools refuse it */
    p.tasks = 2097152, p.replays = 0;
    assert_int_equal(syn_check_steps(&p, HBG_SIM_MAX_STEPS, msg, sizeof msg), HBG_E_INVAL);
    assert_string_equal(msg, "2097664 tasks per pass (2097152 outer + 0 replays + 512 allocations) is past the cap "
                             "of 2097152 (the task window); lower --tasks or --replays");
}

/* The eager run of N outer tasks and R replays of M nodes in a window of
 * `window` tasks, on a fresh set-up: its status, and its words in msg. */
static hbg_status eager_in(uint32_t N, uint32_t M, uint32_t R, uint32_t bound, uint32_t window, char *msg, size_t cap)
{
    hbg_case_env env = env_of(N, M, R, 3, 2);
    env.param[SYN_P_BOUND] = bound;
    hbg_kernel_table *kt;
    hbg_program prog;
    void *state;
    assert_int_equal(hbg_kernel_table_create(&kt), HBG_OK);
    assert_int_equal(hbg_case_synth.setup(&env, kt, &prog, &state), HBG_OK);
    uint32_t *out = calloc((size_t)(R + 1) * SYN_ROW, 4);
    assert_non_null(out);
    hbg_status st = syn_eager(state, &env, kt, window, out);
    snprintf(msg, cap, "%s", hbg_eager_last_error());
    free(out);
    hbg_case_synth.teardown(state);
    hbg_kernel_table_destroy(kt);
    return st;
}

/* The tasks synth counts for its golden are the tasks the eager run
 * takes: in a window of exactly that many it runs, in one a task smaller
 * the orchestrator finds its window full; syn_check_golden and the
 * case's hook draw the line at the same place. N + A + R x M: the outer
 * tasks and allocations, and each replay's nodes run inline (a REPLAY
 * task is not one of them). */
static void check_golden(uint32_t N, uint32_t M, uint32_t R, uint32_t bound, uint64_t want)
{
    hbg_case_env env = env_of(N, M, R, 3, 2);
    env.param[SYN_P_BOUND] = bound;
    syn_params p = syn_params_of(&env);
    syn_counts n;
    char msg[400], err[300];
    assert_int_equal(syn_count(&p, &n, msg, sizeof msg), HBG_OK);
    assert_int_equal(n.eager_window, want);
    assert_int_equal(syn_check_golden(&p, want, msg, sizeof msg), HBG_OK);
    assert_int_equal(syn_check_golden(&p, want - 1, msg, sizeof msg), HBG_E_INVAL);
    assert_int_equal(eager_in(N, M, R, bound, (uint32_t)want, msg, sizeof msg), HBG_OK);
    assert_string_equal(msg, "");
    assert_int_equal(eager_in(N, M, R, bound, (uint32_t)want - 1, msg, sizeof msg), HBG_E_WINDOW_FULL);
    snprintf(err, sizeof err, "task window full (%llu tasks)", (unsigned long long)(want - 1));
    if (!strstr(msg, err))
        fail_msg("\"%s\" does not say \"%s\"", msg, err);
}

static void test_golden_cap(void **state)
{
    (void)state;
    check_golden(300, 5, 7, 0, 300 + 1 + 7 * 5);
    check_golden(300, 5, 7, 1, 300 + 1 + 7 * 5);
    check_golden(1, 1, 0, 0, 1 + 1);
    check_golden(5000, 3, 2, 0, 5000 + 2 + 2 * 3); /* 40 buffers: two allocations */
    check_golden(129, 4096, 2, 0, 129 + 1 + 2 * 4096);
    /* the cap, 2^21, exactly: 511 replays of 4096 nodes and 4096 more; a
     * task more is a task past it */
    hbg_case_env env = env_of(4095, 4096, 511, 8, 2);
    syn_params p = syn_params_of(&env);
    char msg[400];
    assert_int_equal(syn_check_golden(&p, SYN_MAX_WINDOW, msg, sizeof msg), HBG_OK);
    assert_int_equal(hbg_case_synth.golden_cap(&env, msg, sizeof msg), HBG_OK);
    env.param[SYN_P_TASKS] = 4096;
    static const char *const past = "the eager golden would run 2097153 tasks a pass (4096 outer + 1 allocations + "
                                    "511 replays x 4096 nodes, each replay's nodes inline), past its cap of 2097152; "
                                    "lower --replays, --graph-nodes or --tasks, or leave out the golden "
                                    "(--skip-golden)";
    assert_int_equal(hbg_case_synth.golden_cap(&env, msg, sizeof msg), HBG_E_INVAL);
    assert_string_equal(msg, past);
    /* the golden itself refuses them in the same words, before it runs */
    hbg_kernel_table *kt;
    hbg_program prog;
    void *st;
    assert_int_equal(hbg_kernel_table_create(&kt), HBG_OK);
    assert_int_equal(hbg_case_synth.setup(&env, kt, &prog, &st), HBG_OK);
    assert_int_equal(hbg_case_golden(&hbg_case_synth, st, &env, kt, msg, sizeof msg), HBG_E_INVAL);
    assert_string_equal(msg, past);
    hbg_case_synth.teardown(st);
    hbg_kernel_table_destroy(kt);
    /* a parameter past its cap is refused as the pools refuse it */
    env = env_of(2097152, 1, 0, 1, 0);
    assert_int_equal(hbg_case_synth.golden_cap(&env, msg, sizeof msg), HBG_E_INVAL);
    assert_string_equal(msg, "2097664 tasks per pass (2097152 outer + 0 replays + 512 allocations) is past the cap "
                             "of 2097152 (the task window); lower --tasks or --replays");
}

/* `hbg run` refuses parameters past the golden's cap before any rank
 * starts (exit 2, one line, no log), after the step check and before the
 * memory check; without the golden, or the device run it follows, nothing
 * is refused for it (HBG_HOST_MEMORY=1 then shows the next check ran,
 * without a run of 2^21 steps). */
static void test_cli_golden(void **state)
{
    (void)state;
    static char out[1 << 14];
    char args[512];
    char dir[] = "/tmp/hbg-synth-golden-XXXXXX", log[64];
    assert_non_null(mkdtemp(dir));
    snprintf(log, sizeof log, "%s/run.log", dir);
    static const char *const past = "run synth --tasks 4096 --graph-nodes 4096 --replays 511";
    static const char *const refused = "hbg run: synth: the eager golden would run 2097153 tasks a pass (4096 outer "
                                       "+ 1 allocations + 511 replays x 4096 nodes, each replay's nodes inline), "
                                       "past its cap of 2097152; lower --replays, --graph-nodes or --tasks, or "
                                       "leave out the golden (--skip-golden)\n";
    snprintf(args, sizeof args, "%s --rounds 1 -o %s", past, log);
    assert_int_equal(rs_run("", args, out, sizeof out), 2);
    assert_string_equal(out, refused);
    assert_int_equal(access(log, F_OK), -1);
    /* before the memory check; the step check (exact too) first */
    assert_int_equal(rs_run("HBG_HOST_MEMORY=1", past, out, sizeof out), 2);
    assert_string_equal(out, refused);
    snprintf(args, sizeof args, "%s --device-steps 2097152", past);
    assert_int_equal(rs_run("", args, out, sizeof out), 2);
    assert_non_null(strstr(out, "hbg run: synth: a device run asks for 2097664 steps a pass "));
    /* at the cap, or without the golden: on to the memory check */
    static const char *const next = "hbg run: synth: a run of these parameters needs about ";
    assert_int_equal(
        rs_run("HBG_HOST_MEMORY=1", "run synth --tasks 4095 --graph-nodes 4096 --replays 511", out, sizeof out), 2);
    assert_non_null(strstr(out, next));
    static const char *const without[] = {"--skip-golden", "--skip-device-run", "--mode numbers"};
    for (size_t i = 0; i < sizeof without / sizeof without[0]; i++) {
        snprintf(args, sizeof args, "%s %s", past, without[i]);
        assert_int_equal(rs_run("HBG_HOST_MEMORY=1", args, out, sizeof out), 2);
        if (strncmp(out, next, strlen(next)) != 0)
            fail_msg("%s: \"%s\"", without[i], out);
    }
    assert_int_equal(rs_run("HBG_HOST_MEMORY=1 HBG_SKIP_DEVICE_RUN=1", past, out, sizeof out), 2);
    assert_non_null(strstr(out, next));
    assert_int_equal(rmdir(dir), 0); /* empty: nothing was written */
}

/* `hbg run` refuses a run the device would refuse for its steps before
 * any rank starts (exit 2, one line, no log), at the default bound and at
 * --device-steps; without the device run nothing is refused. */
static void test_cli_steps(void **state)
{
    (void)state;
    static char out[1 << 14];
    char args[512];
    char dir[] = "/tmp/hbg-synth-steps-XXXXXX", log[64];
    assert_non_null(mkdtemp(dir));
    snprintf(log, sizeof log, "%s/run.log", dir);
    snprintf(args, sizeof args, "run synth --replays 10000 --graph-nodes 4096 --rounds 1 -o %s", log);
    assert_int_equal(rs_run("", args, out, sizeof out), 2);
    assert_string_equal(out, "hbg run: synth: a device run asks for 40971001 steps a pass (1000 outer + 1 "
                             "allocations + 10000 replays x (1 + 4096 nodes)), past the device's limit of 16777216 "
                             "(--device-steps); lower --replays, --graph-nodes or --tasks, raise --device-steps, or "
                             "leave out the device run (--skip-device-run)\n");
    assert_int_equal(access(log, F_OK), -1);
    assert_int_equal(rs_run("", "run synth --tasks 4096 --graph-nodes 4095 --replays 4095", out, sizeof out), 2);
    assert_non_null(strstr(out, "hbg run: synth: a device run asks for 16777217 steps a pass (4096 outer + "));
    static const char *const small = "run synth --tasks 300 --graph-nodes 5 --replays 7 --log-level off";
    snprintf(args, sizeof args, "%s --device-steps 343 --rounds 2", small);
    assert_int_equal(rs_run("", args, out, sizeof out), 0);
    assert_non_null(strstr(out, "golden passed"));
    snprintf(args, sizeof args, "%s --device-steps 342", small);
    assert_int_equal(rs_run("", args, out, sizeof out), 2);
    assert_string_equal(out, "hbg run: synth: a device run asks for 343 steps a pass (300 outer + 1 allocations + 7 "
                             "replays x (1 + 5 nodes)), past the device's limit of 342 (--device-steps); lower "
                             "--replays, --graph-nodes or --tasks, raise --device-steps, or leave out the device run "
                             "(--skip-device-run)\n");
    /* before the memory check: the one a raised bound does not answer */
    assert_int_equal(rs_run("HBG_HOST_MEMORY=1", args, out, sizeof out), 2);
    assert_non_null(strstr(out, "hbg run: synth: a device run asks for 343 steps a pass "));
    /* no device run, nothing to refuse: the option, the mode, the switch */
    snprintf(args, sizeof args, "%s --device-steps 342 --skip-device-run", small);
    assert_int_equal(rs_run("", args, out, sizeof out), 0);
    snprintf(args, sizeof args, "%s --device-steps 342 --mode numbers", small);
    assert_int_equal(rs_run("", args, out, sizeof out), 0);
    snprintf(args, sizeof args, "%s --device-steps 342", small);
    assert_int_equal(rs_run("HBG_SKIP_DEVICE_RUN=1", args, out, sizeof out), 0);
    assert_int_equal(rmdir(dir), 0); /* empty: nothing was written */
}

/* The memory estimate, exactly as its terms add up (synth.c has what each
 * stands for), and each part present only when it runs. */
static void test_memory_estimate(void **state)
{
    (void)state;
    syn_params p = {1000, 100, 10, 8, 2, 0, 0};
    syn_counts n;
    char msg[320];
    assert_int_equal(syn_count(&p, &n, msg, sizeof msg), HBG_OK);
    /* 32 MiB + 1000 x (1280 + 2 x 480) + 10 x (896 + 8 x 224) + 100 x 1536 */
    syn_memory m = syn_host_bytes(&p, &n, true, true);
    assert_int_equal(m.runtime, 35974912);
    /* heap 1128320 + 1000 x 128 + 10 x 128 + 10 x 100 x 96 */
    assert_int_equal(m.device, 1353600);
    /* 2001 eager tasks x (512 + 2 x 112) */
    assert_int_equal(m.golden, 1472736);
    m = syn_host_bytes(&p, &n, true, false);
    assert_int_equal(m.device, 1353600);
    assert_int_equal(m.golden, 0);
    m = syn_host_bytes(&p, &n, false, true); /* no device run, no golden */
    assert_int_equal(m.runtime, 35974912);
    assert_int_equal(m.device + m.golden, 0);
    /* a golden past its own window cap refuses before it allocates */
    p = (syn_params){10, 4096, 1000, 1, 0, 0, 0};
    assert_int_equal(syn_count(&p, &n, msg, sizeof msg), HBG_OK);
    assert_int_equal(syn_host_bytes(&p, &n, true, true).golden, 0);

    /* the check, at the boundary and with its message */
    p = (syn_params){1000, 100, 10, 8, 2, 0, 0};
    uint64_t all = 35974912ull + 1353600 + 1472736;
    hbg_case_host h = {true, true, all, "MemAvailable + free swap"};
    assert_int_equal(syn_check_fits(&p, &h, msg, sizeof msg), HBG_OK);
    h.avail = all - 1;
    assert_int_equal(syn_check_fits(&p, &h, msg, sizeof msg), HBG_E_NOMEM);
    assert_string_equal(msg, "a run of these parameters needs about 38.8 MB of memory (1.4 MB of it the device "
                             "run's, 1.5 MB the golden's); 38.8 MB is available (MemAvailable + free swap); lower "
                             "--tasks, --replays, --graph-nodes, --boundary or --fanin, or leave out the golden "
                             "(--skip-golden) or the device run (--skip-device-run)");
    p = (syn_params){1, 1, 2097150, 128, 0, 0, 0};
    h = (hbg_case_host){false, true, 21000000000ull, "HBG_HOST_MEMORY"};
    assert_int_equal(syn_check_fits(&p, &h, msg, sizeof msg), HBG_E_NOMEM);
    assert_string_equal(msg, "a run of these parameters needs about 62.0 GB of memory; 21.0 GB is available "
                             "(HBG_HOST_MEMORY); lower --tasks, --replays, --graph-nodes, --boundary or --fanin");
    h = (hbg_case_host){true, false, 21000000000ull, "HBG_HOST_MEMORY"};
    assert_int_equal(syn_check_fits(&p, &h, msg, sizeof msg), HBG_E_NOMEM);
    assert_string_equal(msg, "a run of these parameters needs about 62.5 GB of memory (470.8 MB of it the device "
                             "run's); 21.0 GB is available (HBG_HOST_MEMORY); lower --tasks, --replays, "
                             "--graph-nodes, --boundary or --fanin, or leave out the device run (--skip-device-run)");
    /* past a cap: the cap's reason */
    p = (syn_params){2097152, 1, 0, 1, 0, 0, 0};
    h = (hbg_case_host){true, true, UINT64_MAX, "HBG_HOST_MEMORY"};
    assert_int_equal(syn_check_fits(&p, &h, msg, sizeof msg), HBG_E_INVAL);
}

/* Peak resident bytes of `hbg run ARGS...` (the rank processes included:
 * wait4 reports the largest of a process and the children it waited for). */
static uint64_t peak_rss(const char *const *args)
{
    const char *cli = getenv("HBG_CLI");
    assert_non_null(cli);
    const char *argv[32] = {cli};
    size_t k = 1;
    for (; args[k - 1]; k++)
        argv[k] = args[k - 1];
    argv[k] = NULL;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1), dup2(null, 2);
        execv(cli, (char *const *)argv);
        _exit(127);
    }
    int st;
    struct rusage ru;
    assert_int_equal(wait4(pid, &st, 0, &ru), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    return (uint64_t)ru.ru_maxrss * 1024;
}

/* The estimate covers what real runs hold at their peak, and not by so
 * much that it refuses runs a host could hold: a run heavy in tasks and
 * reads without the device, and one heavy in replays and boundary slots
 * with the device run and the golden, each with and without bounds. (A sanitizer's shadow memory would
 * swamp the figure: measured in the plain build only.) */
static void test_memory_estimate_covers_runs(void **state)
{
    (void)state;
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    skip();
#endif
    static const struct {
        syn_params p;
        bool device;
        const char *args[24];
    } runs[] = {
        {{60000, 1, 0, 1, 8, 0, 0}, false,
         {"run", "synth", "--tasks", "60000", "--replays", "0", "--graph-nodes", "1", "--fanin", "8", "--mode",
          "numbers", "--rounds", "3", "--log-level", "off", NULL}},
        {{1, 4, 20000, 32, 2, 0, 0}, true,
         {"run", "synth", "--tasks", "1", "--replays", "20000", "--boundary", "32", "--graph-nodes", "4",
          "--rounds", "2", "--log-level", "off", NULL}},
        {{60000, 1, 0, 1, 8, 1, 0}, false,
         {"run", "synth", "--tasks", "60000", "--replays", "0", "--graph-nodes", "1", "--fanin", "8", "--bound", "1",
          "--mode", "numbers", "--rounds", "3", "--log-level", "off", NULL}},
        {{1, 4, 20000, 32, 2, 1, 0}, true,
         {"run", "synth", "--tasks", "1", "--replays", "20000", "--boundary", "32", "--graph-nodes", "4",
          "--bound", "1", "--rounds", "2", "--log-level", "off", NULL}},
        /* every task ready at once: the device once made a 3 KB job of
         * each (899 MB at 200,000 tasks against an estimate of 320 MB) */
        {{100000, 1, 0, 1, 0, 0, 0}, true,
         {"run", "synth", "--tasks", "100000", "--replays", "0", "--graph-nodes", "1", "--fanin", "0", "--rounds",
          "2", "--log-level", "off", NULL}},
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        syn_counts n;
        char msg[256];
        assert_int_equal(syn_count(&runs[i].p, &n, msg, sizeof msg), HBG_OK);
        syn_memory m = syn_host_bytes(&runs[i].p, &n, runs[i].device, true);
        uint64_t est = m.runtime + m.device + m.golden, rss = peak_rss(runs[i].args);
        print_message("run %zu: estimate %.1f MB, peak resident %.1f MB\n", i, (double)est / 1e6, (double)rss / 1e6);
        assert_true(est >= rss);
        /* the golden's eager run is held after the first pass, under the
         * peak of the later ones (their memo and journal): the parts that
         * hold that peak are the ones held to it */
        uint64_t held = m.runtime + m.device;
        assert_true(held <= rss + rss / 2);
    }
}

/* Writes `text` to ROOT/rel, making the folders on the way. */
static void put(const char *root, const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    for (char *q = path + strlen(root) + 1; (q = strchr(q, '/')); q++) {
        *q = 0;
        assert_true(mkdir(path, 0755) == 0 || errno == EEXIST);
        *q = '/';
    }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static void expect_room(const char *root, uint64_t bytes, const char *from)
{
    uint64_t b;
    const char *f;
    assert_true(case_host_available_at(root, &b, &f));
    assert_int_equal(b, bytes);
    assert_string_equal(f, from);
}

#define LONG_V1_LINE "4:memory:/" X100(X100("abcdefghi/")) "\n"
#define X10(s) s s s s s s s s s s
#define X100(s) X10(X10(s))

/* What a run may use: MemAvailable + free swap, or the room a memory
 * cgroup (v2, or v1 mounted as a container's own) leaves, the least of
 * its levels'. */
static void test_host_available(void **state)
{
    (void)state;
    char root[] = "/tmp/hbg-hostmem-XXXXXX";
    assert_non_null(mkdtemp(root));
    uint64_t b;
    const char *from;
    assert_false(case_host_available_at(root, &b, &from)); /* no /proc/meminfo */
    /* each step writes a file, then (room > 0, or `zero`) expects a figure */
    static const struct {
        const char *file, *text;
        uint64_t room;
        bool cgroup, zero;
    } steps[] = {
        {"proc/meminfo", "MemTotal: 9999 kB\nMemAvailable: 1000 kB\nSwapFree: 24 kB\n", 1048576, false, false},
        /* v2: the parent's limit is the tighter */
        {"proc/self/cgroup", "0::/a/b\n", 0, false, false},
        {"sys/fs/cgroup/a/b/memory.max", "max\n", 0, false, false},
        {"sys/fs/cgroup/a/b/memory.current", "5\n", 0, false, false},
        {"sys/fs/cgroup/a/memory.max", "600000\n", 0, false, false},
        {"sys/fs/cgroup/a/memory.current", "100000\n", 500000, true, false},
        {"sys/fs/cgroup/a/memory.max", "max\n", 1048576, false, false},
        /* v1, the host's path not under the container's mount: its root */
        {"proc/self/cgroup", "5:cpu,cpuacct:/x\n4:memory:/host/path\n0::/\n", 0, false, false},
        {"sys/fs/cgroup/memory/memory.limit_in_bytes", "300000\n", 0, false, false},
        {"sys/fs/cgroup/memory/memory.usage_in_bytes", "100000\n", 200000, true, false},
        /* over its limit: no room */
        {"sys/fs/cgroup/memory/memory.usage_in_bytes", "400000\n", 0, true, true},
        /* the inactive file cache is reclaimed before anything is killed */
        {"sys/fs/cgroup/memory/memory.stat", "cache 350000\ninactive_file 1\ntotal_inactive_file 250000\n", 150000,
         true, false},
        /* a path longer than a line the reader takes: the mount's level still */
        {"proc/self/cgroup", LONG_V1_LINE, 150000, true, false},
        /* "unlimited" in v1 is a huge number */
        {"sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n", 1048576, false, false},
        /* mountinfo says where: a v1 memory controller sharing its mount
         * ("cpu,memory"), the cgroup's path below it */
        {"proc/self/cgroup", "4:cpu,memory:/job/7\n0::/\n", 0, false, false},
        {"sys/fs/cgroup/cpu,memory/job/7/memory.limit_in_bytes", "700000\n", 0, false, false},
        {"sys/fs/cgroup/cpu,memory/job/7/memory.usage_in_bytes", "0\n", 0, false, false},
        {"proc/self/mountinfo",
         "22 1 0:20 / /sys rw - sysfs sysfs rw\n"
         "30 22 0:26 / /sys/fs/cgroup/cpu,memory rw,nosuid - cgroup cgroup rw,cpu,memory\n"
         "31 22 0:27 / /sys/fs/cgroup/unified rw shared:9 - cgroup2 cgroup2 rw\n",
         700000, true, false},
        /* a controller named only as part of another's name is not it */
        {"proc/self/mountinfo", "30 22 0:26 / /sys/fs/cgroup/cpu,memory rw - cgroup cgroup rw,cpu,memory_x\n",
         1048576, false, false},
        /* v2 mounted elsewhere (a space in its name), of a cgroup below
         * the hierarchy's root: the path is taken below the mount's root */
        {"proc/self/cgroup", "0::/ctr/abc/sub\n", 0, false, false},
        {"mnt/my cg/sub/memory.max", "400000\n", 0, false, false},
        {"mnt/my cg/sub/memory.current", "150000\n", 0, false, false},
        {"proc/self/mountinfo",
         "40 22 0:30 /elsewhere /x rw - cgroup2 cgroup2 rw\n"
         "41 22 0:30 /ctr/abc /mnt/my\\040cg rw - cgroup2 cgroup2 rw,nsdelegate\n",
         250000, true, false},
        /* the mount's root does not show the cgroup: the mount's level */
        {"proc/self/cgroup", "0::/other\n", 1048576, false, false},
        {"mnt/my cg/memory.max", "90000\n", 0, false, false},
        {"mnt/my cg/memory.current", "0\n", 0, false, false},
        {"proc/self/mountinfo", "41 22 0:30 /ctr/abc /mnt/my\\040cg rw - cgroup2 cgroup2 rw\n", 90000, true,
         false},
    };
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        put(root, steps[i].file, steps[i].text);
        if (steps[i].room || steps[i].zero)
            expect_room(root, steps[i].room,
                        steps[i].cgroup ? "the memory cgroup's limit less its use" : "MemAvailable + free swap");
    }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
    /* the sizes messages use */
    assert_string_equal(case_mem(40000).s, "40.0 KB");
    assert_string_equal(case_mem(388500000).s, "388.5 MB");
    assert_string_equal(case_mem(106400000000ull).s, "106.4 GB");
    /* under 1 KB in bytes, not a KB figure rounded to 0.0 */
    assert_string_equal(case_mem(0).s, "0 bytes");
    assert_string_equal(case_mem(1).s, "1 byte");
    assert_string_equal(case_mem(512).s, "512 bytes");
    assert_string_equal(case_mem(999).s, "999 bytes");
    assert_string_equal(case_mem(1000).s, "1.0 KB");
    /* a figure that would round to 1000.0 is the next unit's 1.0 */
    assert_string_equal(case_mem(999949).s, "999.9 KB");
    assert_string_equal(case_mem(999950).s, "1.0 MB");
    assert_string_equal(case_mem(999949999).s, "999.9 MB");
    assert_string_equal(case_mem(999950000).s, "1.0 GB");
    assert_string_equal(case_mem(UINT64_MAX).s, "18446744073.7 GB");
}

/* `hbg run` refuses what the host cannot hold before any rank starts:
 * exit 2, one line, no log; without the golden (or the device) the same
 * parameters need less. HBG_HOST_MEMORY stands in for the host's figure. */
static void test_cli_memory(void **state)
{
    (void)state;
    static char out[1 << 14];
    char args[512], env[64];
    char dir[] = "/tmp/hbg-synth-mem-XXXXXX", log[64];
    assert_non_null(mkdtemp(dir));
    snprintf(log, sizeof log, "%s/run.log", dir);
    uint64_t all = 35974912ull + 1353600 + 1472736;
    snprintf(env, sizeof env, "HBG_HOST_MEMORY=%llu", (unsigned long long)(all - 1));
    snprintf(args, sizeof args, "run synth --log-level off -o %s", log);
    assert_int_equal(rs_run(env, args, out, sizeof out), 2);
    assert_string_equal(out, "hbg run: synth: a run of these parameters needs about 38.8 MB of memory (1.4 MB of it "
                             "the device run's, 1.5 MB the golden's); 38.8 MB is available (HBG_HOST_MEMORY); lower "
                             "--tasks, --replays, --graph-nodes, --boundary or --fanin, or leave out the golden "
                             "(--skip-golden) or the device run (--skip-device-run)\n");
    assert_int_equal(access(log, F_OK), -1);
    assert_int_equal(rs_run(env, "run synth --log-level off --skip-golden", out, sizeof out), 0);
    assert_non_null(strstr(out, "golden skipped (--skip-golden)"));
    snprintf(env, sizeof env, "HBG_HOST_MEMORY=%llu", (unsigned long long)all);
    assert_int_equal(rs_run(env, "run synth --log-level off", out, sizeof out), 0);
    assert_non_null(strstr(out, "golden passed"));
    assert_int_equal(rs_run("HBG_HOST_MEMORY=1000000000", "run qwen --tile-unit 256 --ranks 2", out, sizeof out), 2);
    assert_string_equal(out, "hbg run: qwen: tile unit 256 needs about 13.6 GB of memory (the model, 3.4 GB, on the "
                             "host and again in device memory, in each of 2 ranks); 1.0 GB is available "
                             "(HBG_HOST_MEMORY); lower --tile-unit or --ranks\n");
    /* a bad value is refused whatever the case; `off` turns the check off */
    static const char *const bad[] = {"HBG_HOST_MEMORY=2G", "HBG_HOST_MEMORY=' 5'", "HBG_HOST_MEMORY=-1",
                                      "HBG_HOST_MEMORY=18446744073709551616"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(rs_run(bad[i], "run vector --log-level off", out, sizeof out), 2);
        if (!strstr(out, " is not a number of bytes below 2^64 (or 0, empty, off: no check)\n") ||
            strchr(out, '\n')[1])
            fail_msg("%s: %s", bad[i], out);
    }
    assert_int_equal(rs_run("HBG_HOST_MEMORY=2G", "run synth", out, sizeof out), 2);
    assert_string_equal(out, "hbg run: HBG_HOST_MEMORY=2G is not a number of bytes below 2^64 (or 0, empty, off: "
                             "no check)\n");
    /* as the switches read off */
    assert_int_equal(rs_run("HBG_HOST_MEMORY=off", "run synth --log-level off", out, sizeof out), 0);
    assert_int_equal(rs_run("HBG_HOST_MEMORY=0", "run synth --log-level off", out, sizeof out), 0);
    assert_int_equal(rs_run("HBG_HOST_MEMORY=", "run synth --log-level off", out, sizeof out), 0);
    assert_int_equal(rs_run("HBG_HOST_MEMORY=OFF", "run synth --log-level off", out, sizeof out), 0);
    assert_int_equal(rs_run("HBG_HOST_MEMORY=False", "run synth --log-level off", out, sizeof out), 0);
    assert_int_equal(rs_run("HBG_HOST_MEMORY=no", "run synth --log-level off", out, sizeof out), 0);
    assert_int_equal(rs_run("HBG_HOST_MEMORY=1", "run synth --log-level off", out, sizeof out), 2);
    assert_string_equal(out, "hbg run: synth: a run of these parameters needs about 38.8 MB of memory (1.4 MB of it "
                             "the device run's, 1.5 MB the golden's); 1 byte is available (HBG_HOST_MEMORY); lower "
                             "--tasks, --replays, --graph-nodes, --boundary or --fanin, or leave out the golden "
                             "(--skip-golden) or the device run (--skip-device-run)\n");
    assert_int_equal(rs_run("HBG_HOST_MEMORY=512", "run synth --log-level off", out, sizeof out), 2);
    assert_non_null(strstr(out, "; 512 bytes is available (HBG_HOST_MEMORY); "));
    assert_int_equal(rs_run("HBG_HOST_MEMORY=1", "run vector --log-level off", out, sizeof out), 0); /* no estimate */
    assert_int_equal(rmdir(dir), 0); /* empty: nothing was written */
}

/* True when the first line holding `mark` also holds `want`. */
static bool line_has(const char *text, const char *mark, const char *want)
{
    const char *l = strstr(text, mark);
    if (!l)
        return false;
    const char *end = strchr(l, '\n'), *w = strstr(l, want);
    return w && (!end || w < end);
}

static void test_cli(void **state)
{
    (void)state;
    static char out[1 << 16];
    assert_int_equal(rs_run("", "run synth --tasks 2097152 --replays 0", out, sizeof out), 2);
    assert_string_equal(out, "hbg run: synth: 2097664 tasks per pass (2097152 outer + 0 replays + 512 allocations) "
                             "is past the cap of 2097152 (the task window); lower --tasks or --replays\n");
    assert_int_equal(rs_run("", "run synth --fanin 17", out, sizeof out), 2);
    assert_string_equal(out, "hbg run: --fanin expects an integer from 0 to 16, got '17' (see `hbg run --help`)\n");
    assert_int_equal(rs_run("", "run synth --tasks=-3", out, sizeof out), 2);
    assert_string_equal(out,
                        "hbg run: --tasks expects an integer from 1 to 2097152, got '-3' (see `hbg run --help`)\n");
    assert_int_equal(rs_run("", "run qwen --tasks 5", out, sizeof out), 2);
    assert_string_equal(out, "hbg run: --tasks is not an option of case qwen (`hbg run --list` names each case's)\n");
    assert_int_equal(rs_run("", "run synth --tasks 200 --graph-nodes 4 --replays 3 --boundary 5 --fanin 3 "
                                "--rounds 2 --log-level off", out, sizeof out), 0);
    assert_non_null(strstr(out, "golden passed"));
    /* the counts reach the log */
    assert_int_equal(rs_run("", "run synth --tasks 200 --graph-nodes 4 --replays 3 --boundary 5 --fanin 3 "
                                "--mode numbers", out, sizeof out), 0);
    assert_non_null(strstr(out, "bind phase=host_orch "));
    assert_non_null(strstr(out, " tasks=204 "));
    assert_true(line_has(out, "host-orch phase=submit_task ", " count=200 "));
    assert_true(line_has(out, "host-orch phase=alloc_tensors ", " count=1 "));
    assert_true(line_has(out, "host-orch phase=record_node ", " count=4 "));
    assert_true(line_has(out, "host-orch phase=graph_submit ", " count=3 "));
    assert_true(line_has(out, "bind phase=graph_upload ", " submissions=3 slots=15 "));
    assert_int_equal(rs_run("", "run --list", out, sizeof out), 0);
    assert_non_null(strstr(out, "--graph-nodes  N  nodes of the Definition (default 100, 1..4096)"));
    /* a record pool too small for a pass is said, not left to the
     * records lines' dropped= (the run is measured: exit 0) */
    char *dir = fs_tempdir("synth-drops"), cmd[512];
    snprintf(cmd, sizeof cmd,
             "run synth --tasks 2000 --replays 2 --graph-nodes 4 --rounds 3 --mode timeline --log-level off "
             "--records-per-thread 1000 --out-dir %s", dir);
    assert_int_equal(rs_run("", cmd, out, sizeof out), 0);
    assert_non_null(strstr(out, "hbg run: warning: rank 0 (pid "));
    assert_non_null(strstr(out, "): 3054 per-op records dropped in 3 of 3 passes: the pool holds 1000 a thread "
                                "(--records-per-thread); those passes' records lines are incomplete\n"));
    /* one record short of a pass's 2018, in a run of one pass */
    snprintf(cmd, sizeof cmd,
             "run synth --tasks 2000 --replays 2 --graph-nodes 4 --rounds 1 --mode timeline --log-level off "
             "--records-per-thread 2017 --out-dir %s",
             dir);
    assert_int_equal(rs_run("", cmd, out, sizeof out), 0);
    assert_non_null(strstr(out, "): 1 per-op record dropped in its one pass: the pool holds 2017 a thread "
                                "(--records-per-thread); that pass's records lines are incomplete\n"));
    snprintf(cmd, sizeof cmd,
             "run synth --tasks 2000 --replays 2 --graph-nodes 4 --rounds 3 --mode timeline --log-level off "
             "--records-per-thread 3018 --out-dir %s", dir);
    assert_int_equal(rs_run("", cmd, out, sizeof out), 0);
    assert_null(strstr(out, "dropped"));
    fs_rmdir(dir);
}

/* The golden is checked after every round, not only the last: a result
 * made wrong in round 1 or 2 of 3 (right again after it) fails the run,
 * naming the round, with the bound path or without; no round made wrong,
 * or no device run to check, does not. */
static void test_golden_every_round(void **state)
{
    (void)state;
    static char out[1 << 16];
    static const char *const bound[] = {"0", "1"};
    for (int b = 0; b < 2; b++)
        for (int r = 0; r <= 3; r++) {
            char cmd[256];
            snprintf(cmd, sizeof cmd,
                     "run synth --tasks 50 --replays 2 --graph-nodes 4 --rounds 3 --log-level off --bound %s "
                     "--fault-round %d",
                     bound[b], r);
            int rc = rs_run("", cmd, out, sizeof out);
            if (r == 0) {
                assert_int_equal(rc, 0);
                assert_non_null(strstr(out, "rank 0 (pid "));
                assert_non_null(strstr(out, "): golden passed; "));
                continue;
            }
            char want[96];
            snprintf(want, sizeof want, "): golden FAILED: round %d: out[2][0] = 0x", r);
            assert_int_equal(rc, 1);
            assert_non_null(strstr(out, want));
            assert_non_null(strstr(out, " (exact match expected); device wall min "));
        }
    /* a fault in a round past the last, or with no device run, is nothing */
    assert_int_equal(rs_run("", "run synth --tasks 50 --replays 2 --graph-nodes 4 --rounds 3 --log-level off "
                                "--fault-round 4", out, sizeof out), 0);
    assert_non_null(strstr(out, "golden passed"));
    assert_int_equal(rs_run("", "run synth --tasks 50 --replays 2 --graph-nodes 4 --rounds 3 --log-level off "
                                "--fault-round 2 --skip-device-run", out, sizeof out), 0);
    assert_non_null(strstr(out, "golden skipped"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_every_round),
        cmocka_unit_test(test_params_and_defaults),
        cmocka_unit_test(test_counts),
        cmocka_unit_test(test_overlapping_views),
        cmocka_unit_test(test_device_golden),
        cmocka_unit_test(test_caps),
        cmocka_unit_test(test_device_steps),
        cmocka_unit_test(test_cli_steps),
        cmocka_unit_test(test_golden_cap),
        cmocka_unit_test(test_cli_golden),
        cmocka_unit_test(test_cli),
        cmocka_unit_test(test_memory_estimate),
        cmocka_unit_test(test_memory_estimate_covers_runs),
        cmocka_unit_test(test_cli_memory),
        cmocka_unit_test(test_host_available),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
