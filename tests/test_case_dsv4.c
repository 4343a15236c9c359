/* dsv4: every count of docs/case-dsv4.md, read from the orchestrator and from the
 * Definition; the eager golden run on two forked ranks, which must fail
 * when a predicate is flipped or a read is moved before its write; the
 * bounded wait on a peer that never comes; the device run on the sim
 * backend, two ranks, two rounds, matched exactly against the golden. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "dsv4/dsv4.h"
#include "hbg/image.h"
#include "hbg/runtime.h"
#include "hbg/xrank.h"
#include "support/orch_fixture.h"

/* ---- counts ------------------------------------------------------------- */

typedef struct tally {
    uint32_t alloc, aic, aiv, mix, dummy, replay, pred;
} tally;

static tally count_tasks(const hbg_orch *o, uint32_t from, uint32_t n)
{
    tally t = {0};
    for (uint32_t i = from; i < from + n; i++) {
        const hbg_img_task *k = &o->img.tasks[i];
        t.alloc += k->kind == HBG_TASK_ALLOC;
        t.dummy += k->kind == HBG_TASK_DUMMY;
        t.replay += k->kind == HBG_TASK_REPLAY;
        t.pred += k->has_pred;
        if (k->kind == HBG_TASK_KERNEL) {
            t.aic += k->core == HBG_CORE_AIC;
            t.aiv += k->core == HBG_CORE_AIV;
            t.mix += k->core == HBG_CORE_MIX;
        }
    }
    return t;
}

static tally count_nodes(const hbg_def_header *h, uint32_t from, uint32_t n)
{
    const hbg_def_node *nodes = (const hbg_def_node *)(const void *)((const unsigned char *)h + h->off_nodes);
    tally t = {0};
    for (uint32_t i = from; i < from + n; i++) {
        const hbg_def_node *k = &nodes[i];
        t.alloc += k->kind == HBG_TASK_ALLOC;
        t.dummy += k->kind == HBG_TASK_DUMMY;
        t.pred += k->has_pred;
        if (k->kind == HBG_TASK_KERNEL) {
            t.aic += k->core == HBG_CORE_AIC;
            t.aiv += k->core == HBG_CORE_AIV;
            t.mix += k->core == HBG_CORE_MIX;
        }
    }
    return t;
}

#define ASSERT_TALLY(t, al, c, v, m, d, pr)                                                              \
    do {                                                                                                 \
        assert_int_equal((t).alloc, al);                                                                 \
        assert_int_equal((t).aic, c);                                                                    \
        assert_int_equal((t).aiv, v);                                                                    \
        assert_int_equal((t).mix, m);                                                                    \
        assert_int_equal((t).dummy, d);                                                                  \
        assert_int_equal((t).pred, pr);                                                                  \
    } while (0)

/* One bind's orchestration for `rank` over a fake address space: nothing
 * executes, so the ranks can run one after the other in this process. */
static void check_rank_counts(uint32_t rank)
{
    hbg_kernel_table *kt;
    assert_int_equal(hbg_kernel_table_create(&kt), HBG_OK);
    hbg_case_env env = {.rank = rank, .nranks = 2};
    hbg_program prog;
    void *state;
    assert_int_equal(hbg_case_dsv4.setup(&env, kt, &prog, &state), HBG_OK);
    assert_int_equal(prog.nargs, A_COUNT);
    assert_int_equal(hbg_case_dsv4.heap_bytes, 2ull << 30);

    hbg__orch_config cfg = {.heap_base = FAKE_HEAP_BASE, .heap_bytes = hbg_case_dsv4.heap_bytes, .rank = rank,
                           .nranks = 2};
    hbg_orch *o;
    assert_int_equal(hbg__graph_orch_create(&cfg, &o), HBG_OK);
    hbg_tensor args[A_COUNT];
    for (uint32_t i = 0; i < A_COUNT; i++) {
        args[i] = prog.args[i].layout;
        args[i].addr = 0x4000000000ull + (uint64_t)i * (16u << 20);
        assert_true(args[i].nbytes < (16u << 20));
    }
    uint64_t epochs_seen = 0;
    for (int pass = 0; pass < 2; pass++) {
        hbg__orch_begin_pass(o, FAKE_HEAP_BASE, args, A_COUNT);
        assert_int_equal(prog.orch(o, prog.ctx), HBG_OK);
        assert_int_equal(hbg__orch_end_pass(o), HBG_OK);

        /* 1131 = 839 submit_task + 272 alloc_tensors + 20 graph_submit */
        assert_int_equal(hbg_orch_task_count(o), 1131);
        tally all = count_tasks(o, 0, 1131);
        assert_int_equal(all.aic + all.aiv + all.mix + all.dummy, 839);
        assert_int_equal(all.alloc, 272);
        assert_int_equal(all.replay, 20);
        /* outside the Definition, section by section */
        uint32_t at = 0;
        tally t = count_tasks(o, at, 5);
        ASSERT_TALLY(t, 1, 0, 4, 0, 0, 0);
        at += 5;
        for (int layer = 0; layer < 2; layer++) {
            t = count_tasks(o, at, 15 + 49);
            ASSERT_TALLY(t, 15, 18, 29, 1, 1, 0);
            at += 64;
            t = count_tasks(o, at, 74 + 217);
            ASSERT_TALLY(t, 74, 100, 115, 1, 1, 192);
            at += 291;
        }
        t = count_tasks(o, at, 20);
        assert_int_equal(t.replay, 20);
        at += 20;
        t = count_tasks(o, at, 17 + 71);
        ASSERT_TALLY(t, 17, 26, 42, 2, 1, 0);
        at += 88;
        t = count_tasks(o, at, 74 + 218);
        ASSERT_TALLY(t, 74, 100, 116, 1, 1, 192);
        at += 292;
        t = count_tasks(o, at, 16);
        ASSERT_TALLY(t, 2, 6, 8, 0, 0, 0);
        at += 16;
        assert_int_equal(at, 1131);

        /* the Definition */
        assert_int_equal(hbg_orch_def_count(o), 1);
        hbg_def_info in;
        assert_int_equal(hbg_orch_def_info(o, 0, &in), HBG_OK);
        assert_int_equal(in.nodes, 743);
        assert_int_equal(in.by_kind[HBG_NODE_ALLOC], 182);
        assert_int_equal(in.by_kind[HBG_NODE_AIC], 247);
        assert_int_equal(in.by_kind[HBG_NODE_AIV], 305);
        assert_int_equal(in.by_kind[HBG_NODE_MIX], 5);
        assert_int_equal(in.by_kind[HBG_NODE_DUMMY], 4);
        assert_int_equal(in.boundary_tensors, 118);
        assert_int_equal(in.boundary_in, 113);
        assert_int_equal(in.boundary_inout, 5);
        assert_int_equal(in.boundary_out, 0);
        assert_int_equal(in.boundary_scalars, 31);
        assert_int_equal(in.predicated, 384);
        const hbg_def_header *h = o->graph->defs[0].img;
        t = count_nodes(h, 0, 1);
        ASSERT_TALLY(t, 1, 0, 0, 0, 0, 0);
        t = count_nodes(h, 1, 88);
        ASSERT_TALLY(t, 17, 26, 42, 2, 1, 0);
        t = count_nodes(h, 89, 291);
        ASSERT_TALLY(t, 74, 100, 115, 1, 1, 192);
        t = count_nodes(h, 380, 72);
        ASSERT_TALLY(t, 16, 21, 33, 1, 1, 0);
        t = count_nodes(h, 452, 291);
        ASSERT_TALLY(t, 74, 100, 115, 1, 1, 192);

        /* replays: layer indices and epochs change every time, the other
         * 27 scalars never; epochs never repeat, across passes too */
        assert_int_equal(o->img.nreplay, 20);
        const uint64_t *first = o->img.bscalars + o->img.replays[0].bscalar_off;
        for (uint32_t r = 0; r < 20; r++) {
            const uint64_t *sc = o->img.bscalars + o->img.replays[r].bscalar_off;
            assert_int_equal(sc[S_LAYER_CSA], 2 + 2 * r);
            assert_int_equal(sc[S_LAYER_HCA], 3 + 2 * r);
            assert_true(sc[S_EPOCH_M1] >= epochs_seen);
            assert_int_equal(sc[S_EPOCH_M2], sc[S_EPOCH_M1] + 1);
            epochs_seen = sc[S_EPOCH_M2] + 1;
            for (uint32_t k = S_CONST0; k < S_COUNT; k++)
                assert_int_equal(sc[k], first[k]);
        }
        assert_true(hbg_orch_heap_used(o) > 0);
        assert_true(hbg_orch_heap_used(o) <= hbg_case_dsv4.heap_bytes);
    }
    hbg__orch_destroy(o);
    hbg_case_dsv4.teardown(state);
    hbg_kernel_table_destroy(kt);
}

static void counts_rank0(void **state)
{
    (void)state;
    check_rank_counts(0);
}

static void counts_rank1(void **state)
{
    (void)state;
    check_rank_counts(1);
}

/* ---- outside tasks through bounds --------------------------------------- */

typedef struct twin {
    hbg_kernel_table *kt;
    hbg_program prog;
    void *state;
    hbg_orch *o, *small;   /* small: a heap the program outgrows */
} twin;

/* plain: the case passes argument arrays, to an orchestrator without a
 * journal, so without a task memo either: every task is submitted in
 * full, a reference that shares nothing with the answers under test. */
static void twin_open(twin *t, uint32_t rank, bool plain)
{
    assert_int_equal(hbg_kernel_table_create(&t->kt), HBG_OK);
    hbg_case_env env = {.rank = rank, .nranks = 2};
    assert_int_equal(hbg_case_dsv4.setup(&env, t->kt, &t->prog, &t->state), HBG_OK);
    dsv4_set_plain_tasks(t->state, plain);
    hbg__orch_config cfg = {.heap_base = FAKE_HEAP_BASE, .heap_bytes = hbg_case_dsv4.heap_bytes, .rank = rank,
                           .nranks = 2, .no_journal = plain};
    assert_int_equal(hbg__graph_orch_create(&cfg, &t->o), HBG_OK);
    cfg.heap_bytes = 1u << 16;
    assert_int_equal(hbg__graph_orch_create(&cfg, &t->small), HBG_OK);
}

static void twin_close(twin *t)
{
    hbg__orch_destroy(t->o);
    hbg__orch_destroy(t->small);
    hbg_case_dsv4.teardown(t->state);
    hbg_kernel_table_destroy(t->kt);
}

/* One pass of t's program on o; the orchestration's status. */
static hbg_status twin_pass(twin *t, hbg_orch *o, uint64_t heap, hbg_tensor *args)
{
    hbg__orch_begin_pass(o, heap, args, A_COUNT);
    hbg_status st = t->prog.orch(o, t->prog.ctx);
    hbg_status end = hbg__orch_end_pass(o);
    return st ? st : end;
}

/* Each task outside the layer pairs passed through a bound of its own
 * gives the image its arguments passed as arrays give, byte for byte,
 * pass after pass: while nothing moves (every bound passed unread, none
 * set), after the heap moved, a caller buffer moved, the program changed
 * (a fault reorders a block) and a pass failed half way (the bounds it
 * left are all set again). A case that kept a bound past a change of
 * what it was built from would give a stale image. Setup makes the
 * bounds (a dry run of the program counts each task's arguments), so no
 * pass of the program as set up makes one. Then, one pass each, a buffer
 * the case remembers from the last pass is made to differ at one
 * allocation after another. */
static void outside_tasks_through_bounds(void **state)
{
    (void)state;
    enum { STEADY, HEAP, ARG, FAULT, UNFAULT, FAIL, NSTEP };
    static const struct {
        int what;
        bool reset; /* the bound case sets bounds again this pass */
    } steps[] = {{STEADY, true},  {STEADY, false}, {STEADY, false}, {HEAP, true},    {STEADY, false},
                 {ARG, true},     {STEADY, false}, {FAULT, true},   {STEADY, false}, {UNFAULT, true},
                 {FAIL, true},    {STEADY, true},  {STEADY, false}};
    for (uint32_t rank = 0; rank < 2; rank++) {
        twin tb, tp;
        twin_open(&tb, rank, false);
        twin_open(&tp, rank, true);
        dsv4_state *sb = tb.state;
        hbg_tensor args[A_COUNT];
        for (uint32_t i = 0; i < A_COUNT; i++) {
            args[i] = tb.prog.args[i].layout;
            args[i].addr = 0x4000000000ull + (uint64_t)i * (16u << 20);
        }
        uint64_t heap = FAKE_HEAP_BASE;
        for (size_t k = 0; k < sizeof steps / sizeof steps[0]; k++) {
            switch (steps[k].what) {
            case HEAP: heap += 1u << 20; break;
            case ARG: args[A_MW_SH1].addr += 1u << 12; break;
            case FAULT:
            case UNFAULT: {
                dsv4_fault f = steps[k].what == FAULT ? DSV4_FAULT_EARLY_READ : DSV4_FAULT_NONE;
                dsv4_set_fault(tb.state, f);
                dsv4_set_fault(tp.state, f);
                break;
            }
            default: break;
            }
            if (steps[k].what == FAIL) {
                assert_int_equal(twin_pass(&tb, tb.small, heap, args), HBG_E_HEAP_EXHAUSTED);
                assert_int_equal(twin_pass(&tp, tp.small, heap, args), HBG_E_HEAP_EXHAUSTED);
                assert_false(sb->tasks_built);
                continue;
            }
            uint64_t hits = tb.o->memo_hits;
            assert_int_equal(twin_pass(&tb, tb.o, heap, args), HBG_OK);
            assert_int_equal(twin_pass(&tp, tp.o, heap, args), HBG_OK);
            fx_same_images(tb.o, tp.o);
            /* the third pass on: the memo answered every bound task (and
             * more), so the images compared are its answers */
            if (k == 2)
                assert_true(tb.o->memo_hits - hits >= 833);
            assert_int_equal(tp.o->memo_hits, 0);
            /* 839 tasks less 6 dummies; the plain case makes no bound */
            assert_int_equal(((dsv4_state *)tp.state)->tasks_reset, 0);
            if (!steps[k].reset)
                assert_int_equal(sb->tasks_reset, 0);
            else if (k == 0 || steps[k - 1].what == FAIL)
                assert_int_equal(sb->tasks_reset, 833);
            /* setup made every bound the program's own order needs; the
             * fault's reordered block makes its own, once */
            if (steps[k].what != FAULT && steps[k].what != UNFAULT)
                assert_int_equal(sb->tasks_made, 0);
            else
                assert_true(sb->tasks_reset > 0);
            assert_true(sb->tasks_built);
        }
        /* A buffer that differs from the last pass's at one allocation
         * (any block, any place in it): the tasks from there on set
         * their bounds again, and read views left unbuilt while the pass
         * was clean only if a view is read across an allocation. */
        uint32_t nbuf = 0;
        while (nbuf < DSV4_OUT_BUFS && sb->abuf[nbuf].addr)
            nbuf++;
        assert_true(nbuf > 700);
        for (uint32_t b = 0; b < nbuf; b += 5) {
            sb->abuf[b].addr ^= 64;
            assert_int_equal(twin_pass(&tb, tb.o, heap, args), HBG_OK);
            assert_int_equal(twin_pass(&tp, tp.o, heap, args), HBG_OK);
            fx_same_images(tb.o, tp.o);
            assert_true(sb->tasks_reset > 0);
        }
        twin_close(&tb);
        twin_close(&tp);
    }
}

static void case_is_registered(void **state)
{
    (void)state;
    assert_ptr_equal(hbg_case_find("dsv4"), &hbg_case_dsv4);
    assert_int_equal(hbg_case_dsv4.default_ranks, 2);
    assert_true(hbg_case_dsv4.window_bytes >= DSV4_WINDOW_BYTES);
    hbg_kernel_table *kt;
    assert_int_equal(hbg_kernel_table_create(&kt), HBG_OK);
    hbg_case_env env = {.rank = 0, .nranks = 1};
    hbg_program prog;
    void *st = NULL;
    assert_int_equal(hbg_case_dsv4.setup(&env, kt, &prog, &st), HBG_E_INVAL);
    assert_null(st);
    hbg_kernel_table_destroy(kt);
}

/* ---- rank processes ----------------------------------------------------- */

typedef int (*rank_fn)(uint32_t rank, hbg_xrank *x);

/* Forks one process per rank in `ranks` (a bit set); returns each exit
 * status, or -1 for a rank that did not exit normally. */
static void run_ranks(uint32_t ranks, rank_fn fn, hbg_xrank *x, int rc[2])
{
    pid_t pid[2] = {0, 0};
    for (uint32_t r = 0; r < 2; r++) {
        rc[r] = 0;
        if (!(ranks & (1u << r)))
            continue;
        fflush(NULL);
        pid[r] = fork();
        assert_true(pid[r] >= 0);
        if (pid[r] == 0)
            exit(fn(r, x));
    }
    for (uint32_t r = 0; r < 2; r++) {
        if (!pid[r])
            continue;
        int ws = 0;
        assert_int_equal(waitpid(pid[r], &ws, 0), pid[r]);
        rc[r] = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
    }
}

/* Both ranks run fn over one window (60 s peer timeout) and succeed. */
static void both_ranks_pass(rank_fn fn)
{
    hbg_xrank *x;
    assert_int_equal(hbg_xrank_create(2, hbg_case_dsv4.window_bytes, 60ull * 1000 * 1000 * 1000, &x), HBG_OK);
    int rc[2];
    run_ranks(3, fn, x, rc);
    assert_int_equal(rc[0], 0);
    assert_int_equal(rc[1], 0);
    hbg_xrank_destroy(x);
}

#define FAIL_IF(cond, code, ...)                                                                         \
    do {                                                                                                 \
        if (cond) {                                                                                      \
            fprintf(stderr, "rank %u: ", rank);                                                          \
            fprintf(stderr, __VA_ARGS__);                                                                \
            fputc('\n', stderr);                                                                         \
            return code;                                                                                 \
        }                                                                                                \
    } while (0)

/* The eager reference, written where a device run would leave its outputs,
 * passes the golden; then each deliberate fault must make it fail. */
static int eager_rank(uint32_t rank, hbg_xrank *x)
{
    hbg_kernel_table *kt;
    if (hbg_kernel_table_create(&kt))
        return 2;
    hbg_case_env env = {.rank = rank, .nranks = 2, .services = x};
    hbg_program prog;
    void *state;
    hbg_status st = hbg_case_dsv4.setup(&env, kt, &prog, &state);
    FAIL_IF(st, 3, "setup: %s", hbg_strerror(st));
    st = dsv4_eager_outputs(state, &env, kt);
    FAIL_IF(st, 4, "eager run: %s", hbg_strerror(st));
    const uint32_t *res = dsv4_arg_host(state, A_OUT_RESULT);
    for (uint32_t t = 0; t < DSV4_T; t++)
        FAIL_IF(res[t * 4] >= DSV4_V, 5, "sampled token %u out of range", res[t * 4]);
    char msg[256] = "";
    st = hbg_case_golden(&hbg_case_dsv4, state, &env, kt, msg, sizeof msg);
    FAIL_IF(st, 6, "golden of an identical run failed: %s", msg);
    static const dsv4_fault faults[] = {DSV4_FAULT_FLIP_PRED, DSV4_FAULT_EARLY_READ};
    for (unsigned f = 0; f < 2; f++) {
        dsv4_set_fault(state, faults[f]);
        msg[0] = 0;
        st = hbg_case_golden(&hbg_case_dsv4, state, &env, kt, msg, sizeof msg);
        FAIL_IF(st != HBG_E_DEVICE, 7 + (int)f, "fault %u: golden returned %s", faults[f], hbg_status_name(st));
        FAIL_IF(strstr(msg, "golden 0x") == NULL, 9, "fault %u: message '%s'", faults[f], msg);
    }
    hbg_case_dsv4.teardown(state);
    hbg_kernel_table_destroy(kt);
    return 0;
}

static void eager_golden_two_ranks(void **state)
{
    (void)state;
    both_ranks_pass(eager_rank);
}

/* Rank 1 never starts: rank 0's first dispatch wait ends the run with the
 * named status instead of hanging. */
static int lonely_rank(uint32_t rank, hbg_xrank *x)
{
    hbg_kernel_table *kt;
    if (hbg_kernel_table_create(&kt))
        return 2;
    hbg_case_env env = {.rank = rank, .nranks = 2, .services = x};
    hbg_program prog;
    void *state;
    if (hbg_case_dsv4.setup(&env, kt, &prog, &state))
        return 3;
    hbg_status st = dsv4_eager_outputs(state, &env, kt);
    FAIL_IF(st != HBG_E_PEER_TIMEOUT, 4, "expected HBG_E_PEER_TIMEOUT, got %s", hbg_status_name(st));
    hbg_case_dsv4.teardown(state);
    hbg_kernel_table_destroy(kt);
    return 0;
}

static void missing_peer_times_out(void **state)
{
    (void)state;
    hbg_xrank *x;
    assert_int_equal(hbg_xrank_create(2, hbg_case_dsv4.window_bytes, 100ull * 1000 * 1000, &x), HBG_OK);
    int rc[2];
    run_ranks(1, lonely_rank, x, rc);
    assert_int_equal(rc[0], 0);
    hbg_xrank_destroy(x);
}

/* ---- the device --------------------------------------------------------- */

static int device_rank(uint32_t rank, hbg_xrank *x)
{
    hbg_kernel_table *kt = NULL;
    hbg_device *dev = NULL;
    hbg_runtime *rt = NULL;
    hbg_case_env env = {.rank = rank, .nranks = 2, .services = x};
    hbg_program prog;
    void *state = NULL;
    hbg_sim_config sc = {.rank = rank, .nranks = 2};
    hbg_status st = hbg_sim_open(&sc, &dev);
    FAIL_IF(st, 2, "sim: %s", hbg_strerror(st));
    dev->services = x;
    st = hbg_kernel_table_create(&kt);
    if (!st)
        st = hbg_case_dsv4.setup(&env, kt, &prog, &state);
    FAIL_IF(st, 3, "setup: %s", hbg_strerror(st));
    hbg_runtime_config rc = {.device = dev, .kernels = kt, .heap_bytes = hbg_case_dsv4.heap_bytes, .rank = rank,
                             .nranks = 2};
    st = hbg_runtime_create(&rc, &rt);
    FAIL_IF(st, 4, "runtime: %s", hbg_strerror(st));
    for (int round = 0; round < 2; round++) {
        hbg_pass_report rep;
        st = hbg_runtime_run(rt, &prog, false, &rep);
        FAIL_IF(st, 5, "round %d: %s", round + 1, hbg_strerror(st));
        FAIL_IF(rep.tasks != 1131, 6, "round %d: %u tasks", round + 1, rep.tasks);
        FAIL_IF(!rep.device_ran || rep.run.replays != 20, 7, "round %d: device ran %d, %llu replays", round + 1,
                rep.device_ran, (unsigned long long)rep.run.replays);
        /* 45 MoE blocks x 192 predicated tasks: some must be skipped and
         * some must run, or the predicates prove nothing. */
        FAIL_IF(rep.run.tasks_skipped == 0 || rep.run.tasks_skipped >= 45 * 192, 8, "round %d: %llu skipped",
                round + 1, (unsigned long long)rep.run.tasks_skipped);
    }
    char msg[256] = "";
    st = hbg_case_golden(&hbg_case_dsv4, state, &env, kt, msg, sizeof msg);
    FAIL_IF(st, 9, "golden: %s", msg);
    hbg_case_dsv4.teardown(state);
    hbg_runtime_destroy(rt);
    hbg_kernel_table_destroy(kt);
    hbg_device_close(dev);
    return 0;
}

static void device_matches_golden(void **state)
{
    (void)state;
    both_ranks_pass(device_rank);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(case_is_registered),
        cmocka_unit_test(counts_rank0),
        cmocka_unit_test(counts_rank1),
        cmocka_unit_test(outside_tasks_through_bounds),
        cmocka_unit_test(missing_peer_times_out),
        cmocka_unit_test(eager_golden_two_ranks),
        cmocka_unit_test(device_matches_golden),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
