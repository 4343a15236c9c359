/* The qwen case: its host-work shape (the counts docs/case-qwen.md fixes), the
 * layer Definition's nodes and fanins, the replay bindings, and the golden
 * (eager and on the sim device), including a wrong binding the golden must
 * catch. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "case.h"
#include "graph/graph_internal.h"
#include "hostmem.h"
#include "qwen/qwen_internal.h"
#include "support/orch_fixture.h"

#define SMALL_U 16
#define L QWEN_LAYERS

typedef struct rig {
    const hbg_case *c;
    hbg_kernel_table *kt;
    hbg_program prog;
    void *state;
    hbg_case_env env;
} rig;

static void rig_open(rig *r, uint32_t u)
{
    memset(r, 0, sizeof *r);
    r->c = hbg_case_find("qwen");
    assert_non_null(r->c);
    assert_int_equal(hbg_kernel_table_create(&r->kt), HBG_OK);
    r->env = (hbg_case_env){.nranks = 1, .tile_unit = u};
    assert_int_equal(r->c->setup(&r->env, r->kt, &r->prog, &r->state), HBG_OK);
}

static void rig_close(rig *r)
{
    r->c->teardown(r->state);
    hbg_kernel_table_destroy(r->kt);
}

static hbg_status golden(rig *r, char *msg, size_t cap)
{
    msg[0] = 0;
    return hbg_case_golden(r->c, r->state, &r->env, r->kt, msg, cap);
}

static void eager_golden_passes(void **unused)
{
    (void)unused;
    rig r;
    rig_open(&r, SMALL_U);
    assert_int_equal(hbg_eager_run(&r.prog, r.kt, r.c->heap_bytes, 0, 1, NULL), HBG_OK);
    char msg[512];
    hbg_status st = golden(&r, msg, sizeof msg);
    if (st)
        fail_msg("%s", msg);
    rig_close(&r);
}

/* Node indices of the layer Definition, in submission order. */
enum { N_B1, N_ATTN_SEED, N_Q_SEED, N_RMS, N_QP, N_KV_SEED, N_MLP_SEED, N_KP, N_VP, N_ATT, N_B2, N_OP0 };
#define N_OPS (N_OP0 + 26)
#define N_CAST(c) (N_OPS + 1 + (c))
#define N_RED (N_CAST(5))
#define N_GL(k) (N_RED + 1 + 2 * (k))
#define N_UL(k) (N_GL(k) + 1)
#define N_GS(k) (N_RED + 11 + 2 * (k))
#define N_US(k) (N_GS(k) + 1)
#define N_G(n, k) (N_RED + 21 + 2 * (((n) - 6) * 5 + (k)))
#define N_U(n, k) (N_G(n, k) + 1)
#define N_SILU(n) (N_RED + 131 + (n))
#define N_D(n, k) (N_SILU(17) + (n) * 17 + (k))
#define N_DCR (N_D(5, 0))

/* The fanins docs/case-qwen.md's layer table gives node i. */
static uint32_t expected_fanins(uint32_t i, uint32_t *f)
{
    uint32_t n = 0;
    if (i == N_RMS || i == N_KV_SEED || i == N_MLP_SEED)
        f[n++] = N_B1;
    else if (i == N_QP)
        f[n++] = N_Q_SEED;
    else if (i == N_KP || i == N_VP)
        f[n++] = N_KV_SEED;
    else if (i == N_ATT) {
        uint32_t a[] = {N_QP, N_KP, N_VP, N_RMS, N_ATTN_SEED, N_MLP_SEED};
        for (uint32_t j = 0; j < 6; j++)
            f[n++] = a[j];
    } else if (i == N_B2 || i == N_OPS)
        f[n++] = N_ATT;
    else if (i >= N_OP0 && i < N_OPS)
        f[n++] = N_B2;
    else if (i >= N_CAST(0) && i < N_RED) {
        uint32_t c = i - N_CAST(0);
        for (uint32_t e = 10 * c; e < 10 * c + 10; e++)
            if (e < 26)
                f[n++] = N_OP0 + e;
        if (10 * c + 9 >= 26)
            f[n++] = N_OPS;
    } else if (i == N_RED) {
        for (uint32_t e = 0; e <= 26; e++)
            f[n++] = N_OP0 + e;
    } else if (i >= N_GL(0) && i < N_GS(0)) {
        f[n++] = N_CAST((i - N_GL(0)) / 2);
    } else if (i >= N_GS(0) && i < N_G(6, 0)) {
        f[n++] = N_CAST((i - N_GS(0)) / 2);
    } else if (i >= N_G(6, 0) && i < N_SILU(0)) {
        uint32_t j = i - N_G(6, 0), k = (j / 2) % 5;
        f[n++] = j % 2 ? N_UL(k) : N_GL(k);
    } else if (i >= N_SILU(0) && i < N_D(0, 0)) {
        uint32_t t = i - N_SILU(0);
        f[n++] = N_RED;
        for (uint32_t k = 0; k < 5; k++) {
            f[n++] = t < 6 ? N_GS(k) : N_G(t, k);
            f[n++] = t < 6 ? N_US(k) : N_U(t, k);
        }
    } else if (i >= N_D(0, 0) && i < N_DCR) {
        f[n++] = N_SILU((i - N_D(0, 0)) % 17);
    } else if (i == N_DCR) {
        for (uint32_t j = N_D(0, 0); j < N_DCR; j++)
            f[n++] = j;
    }
    return n;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* One pass of the orchestration over a fake address space. */
static hbg_orch *bind_once(rig *r, hbg_tensor *args, hbg_orch *reuse)
{
    hbg_orch *o = reuse;
    if (!o) {
        hbg__orch_config cfg = {.heap_base = FAKE_HEAP_BASE, .heap_bytes = r->c->heap_bytes};
        assert_int_equal(hbg__graph_orch_create(&cfg, &o), HBG_OK);
    }
    for (uint32_t i = 0; i < r->prog.nargs; i++) {
        args[i] = r->prog.args[i].layout;
        args[i].addr = 0x1000000000ull * (i + 1);
    }
    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, args, r->prog.nargs);
    assert_int_equal(r->prog.orch(o, r->prog.ctx), HBG_OK);
    return o;
}

static void host_program_counts(void **unused)
{
    (void)unused;
    rig r;
    rig_open(&r, SMALL_U);
    hbg_tensor args[QA_COUNT];
    hbg_orch *o = bind_once(&r, args, NULL);

    /* 47 host tasks = 5 submit_task (4 kernels + 1 dummy) + 2 alloc + 40 replays */
    assert_int_equal(hbg_orch_task_count(o), 47);
    uint32_t kinds[4] = {0};
    for (uint32_t i = 0; i < o->img.ntasks; i++)
        kinds[o->img.tasks[i].kind]++;
    assert_int_equal(kinds[HBG_TASK_KERNEL], 4);
    assert_int_equal(kinds[HBG_TASK_DUMMY], 1);
    assert_int_equal(kinds[HBG_TASK_ALLOC], 2);
    assert_int_equal(kinds[HBG_TASK_REPLAY], 40);
    assert_int_equal(o->img.tasks[0].kind, HBG_TASK_ALLOC);
    assert_int_equal(o->img.tasks[5].kind, HBG_TASK_ALLOC);
    assert_int_equal(o->img.tasks[46].kind, HBG_TASK_KERNEL);

    /* One Definition, recorded once, replayed by all 40 layers. */
    assert_int_equal(hbg_orch_def_count(o), 1);
    assert_int_equal(o->graph->defs_built, 1);
    assert_int_equal(o->img.nreplay, L);
    hbg_def_info in;
    assert_int_equal(hbg_orch_def_info(o, 0, &in), HBG_OK);
    assert_int_equal(in.key, QWEN_LAYER_KEY);
    assert_int_equal(in.nodes, 277);
    assert_int_equal(in.by_kind[HBG_NODE_DUMMY], 12);
    assert_int_equal(in.by_kind[HBG_NODE_AIC], 235);
    assert_int_equal(in.by_kind[HBG_NODE_AIV], 29);
    assert_int_equal(in.by_kind[HBG_NODE_MIX], 1);
    assert_int_equal(in.by_kind[HBG_NODE_ALLOC], 0);
    assert_int_equal(in.boundary_tensors, 26);
    assert_int_equal(in.boundary_in, 18);
    assert_int_equal(in.boundary_inout, 8);
    assert_int_equal(in.boundary_out, 0);
    assert_int_equal(in.boundary_scalars, 0);
    assert_int_equal(in.predicated, 0);
    assert_int_equal(in.heap_bytes, 0); /* temporaries come from the scratch tensors */
    for (uint32_t i = 0; i < L; i++) {
        assert_int_equal(o->img.replays[i].def, 0);
        assert_int_equal(o->img.tasks[6 + i].kind, HBG_TASK_REPLAY);
        if (i)
            assert_true(fx_has_edge(o, 6 + i - 1, 6 + i));
    }
    /* the output copy waits for the last layer */
    assert_true(fx_has_edge(o, 6 + L - 1, 46));
    assert_int_equal(hbg__orch_end_pass(o), HBG_OK);
    hbg__orch_destroy(o);
    rig_close(&r);
}

static void layer_nodes_and_fanins(void **unused)
{
    (void)unused;
    rig r;
    rig_open(&r, SMALL_U);
    hbg_tensor args[QA_COUNT];
    hbg_orch *o = bind_once(&r, args, NULL);
    const hbg_def_header *h = hbg__def_image(o, 0);
    const unsigned char *img = (const unsigned char *)h;
    const hbg_def_node *nodes = (const hbg_def_node *)(img + h->off_nodes);
    const uint32_t *fanins = (const uint32_t *)(img + h->off_fanins);
    assert_int_equal(h->nnodes, 277);
    assert_int_equal(N_DCR, 276);

    uint32_t dummies[] = {N_B1, N_B2, N_GL(0), N_UL(0), N_GL(4), N_UL(4)};
    for (uint32_t i = 0; i < 6; i++)
        assert_int_equal(nodes[dummies[i]].kind, HBG_TASK_DUMMY);
    assert_int_equal(nodes[N_QP].blocks, 50);
    assert_int_equal(nodes[N_KP].blocks, 10);
    assert_int_equal(nodes[N_VP].blocks, 10);
    assert_int_equal(nodes[N_ATT].core, HBG_CORE_MIX);
    assert_int_equal(nodes[N_ATT].blocks, 24);
    assert_int_equal(nodes[N_ATT].sync_start, 1);
    assert_int_equal(nodes[N_OPS].blocks, 24);
    assert_int_equal(nodes[N_OP0 + 25].blocks, 1);
    assert_int_equal(nodes[N_GS(3)].blocks, 6);
    assert_int_equal(nodes[N_US(3)].blocks, 6);
    assert_int_equal(nodes[N_G(16, 4)].core, HBG_CORE_AIC);
    assert_int_equal(nodes[N_SILU(16)].core, HBG_CORE_AIV);
    assert_int_equal(nodes[N_D(4, 16)].core, HBG_CORE_AIC);
    assert_int_equal(nodes[N_DCR].core, HBG_CORE_AIV);
    assert_int_equal(nodes[N_DCR].blocks, 5);

    uint32_t total = 0;
    for (uint32_t i = 0; i < 277; i++) {
        uint32_t want[128], got[128];
        uint32_t nw = expected_fanins(i, want), ng = nodes[i].fanin_cnt;
        if (ng != nw)
            fail_msg("node %u: %u fanins, expected %u", i, ng, nw);
        memcpy(got, fanins + nodes[i].fanin_off, ng * sizeof *got);
        qsort(got, ng, sizeof *got, cmp_u32);
        qsort(want, nw, sizeof *want, cmp_u32);
        for (uint32_t j = 0; j < ng; j++)
            if (got[j] != want[j])
                fail_msg("node %u: fanin %u is node %u, expected node %u", i, j, got[j], want[j]);
        total += ng;
    }
    /* 3 + 1 + 2 + 6 + 1 + 26 + 1 + 29 + 27 + 20 + 110 + 17*11 + 85 + 85 */
    assert_int_equal(total, 583);
    assert_int_equal(hbg__orch_end_pass(o), HBG_OK);
    hbg__orch_destroy(o);
    rig_close(&r);
}

static uint64_t byte_addr(const hbg_img_btensor *bt, hbg_dtype dt)
{
    return bt->addr + bt->offset * hbg_dtype_size(dt);
}

static void replay_bindings(void **unused)
{
    (void)unused;
    rig r;
    rig_open(&r, SMALL_U);
    hbg_tensor args[QA_COUNT];
    hbg_orch *o = bind_once(&r, args, NULL);
    const hbg_def_header *h = hbg__def_image(o, 0);
    const hbg_tensor *tm = (const hbg_tensor *)(const void *)((const unsigned char *)h + h->off_btemplates);
    const qwen_dims d = qwen_dims_for(SMALL_U);

    static const uint8_t views[] = {QB_IN_NORM_NEXT, QB_WQ,  QB_WK,    QB_WV,    QB_QNORM, QB_KNORM,    QB_KCACHE,
                                    QB_VCACHE,       QB_WO,  QB_WGATE, QB_WUP,   QB_WDOWN, QB_POST_NORM};
    static const uint8_t pingpong[] = {QB_HID, QB_NRM, QB_HID_NEXT, QB_NRM_NEXT};
    uint32_t moved = 0, stayed = 0;
    for (uint32_t k = 0; k < QB_COUNT; k++) {
        bool is_view = memchr(views, (int)k, sizeof views) != NULL;
        bool is_pp = memchr(pingpong, (int)k, sizeof pingpong) != NULL;
        bool any_move = false;
        for (uint32_t l = 1; l < L; l++) {
            const hbg_img_btensor *a = &o->img.btensors[o->img.replays[l - 1].btensor_off + k];
            const hbg_img_btensor *b = &o->img.btensors[o->img.replays[l].btensor_off + k];
            uint64_t pa = byte_addr(a, (hbg_dtype)tm[k].dtype), pb = byte_addr(b, (hbg_dtype)tm[k].dtype);
            if (is_view || is_pp)
                assert_true(pa != pb); /* every replay moves it */
            if (is_view)
                assert_int_equal(a->addr, b->addr); /* same buffer, another layer's offset */
            any_move |= pa != pb;
        }
        if (is_view || is_pp)
            assert_true(any_move);
        else
            assert_false(any_move);
        moved += any_move;
        stayed += !any_move;
    }
    assert_int_equal(moved, 17);
    assert_int_equal(stayed, 9);

    /* Layer offsets and the ping-pong chain. */
    for (uint32_t l = 0; l < L; l++) {
        const hbg_img_btensor *bt = &o->img.btensors[o->img.replays[l].btensor_off];
        assert_int_equal(bt[QB_WQ].addr, args[QA_WQ].addr);
        assert_int_equal(bt[QB_WQ].offset, (uint64_t)l * d.hidden * d.qdim);
        assert_int_equal(bt[QB_WDOWN].offset, (uint64_t)l * d.inter * d.hidden);
        assert_int_equal(bt[QB_IN_NORM_NEXT].offset, (uint64_t)(l + 1) * d.hidden);
        assert_int_equal(bt[QB_KCACHE].offset, (uint64_t)l * QWEN_PAGES * QWEN_PAGE * d.kvdim);
        if (l) {
            const hbg_img_btensor *prev = &o->img.btensors[o->img.replays[l - 1].btensor_off];
            assert_int_equal(bt[QB_HID].addr, prev[QB_HID_NEXT].addr);
            assert_int_equal(bt[QB_NRM].addr, prev[QB_NRM_NEXT].addr);
        }
        if (l >= 2) {
            const hbg_img_btensor *pp = &o->img.btensors[o->img.replays[l - 2].btensor_off];
            assert_int_equal(bt[QB_HID_NEXT].addr, pp[QB_HID_NEXT].addr);
        }
    }
    hbg__orch_end_pass(o);

    /* A second pass records again (one Definition) and hashes the same. */
    uint64_t h1 = h->hash;
    bind_once(&r, args, o);
    assert_int_equal(o->graph->defs_built, 1);
    assert_int_equal(hbg_orch_task_count(o), 47);
    assert_int_equal(hbg__def_image(o, 0)->hash, h1);
    assert_int_equal(hbg__orch_end_pass(o), HBG_OK);
    hbg__orch_destroy(o);
    rig_close(&r);
}

static void eager_fault_caught(qwen_fault f, const char *what)
{
    rig r;
    rig_open(&r, SMALL_U);
    qwen_inject_fault(r.state, f);
    assert_int_equal(hbg_eager_run(&r.prog, r.kt, r.c->heap_bytes, 0, 1, NULL), HBG_OK);
    char msg[512];
    assert_int_equal(golden(&r, msg, sizeof msg), HBG_E_DEVICE);
    if (!strstr(msg, what) || !strstr(msg, "tolerance 3e-02"))
        fail_msg("unexpected golden message: %s", msg);
    rig_close(&r);
}

static void wrong_wo_binding_caught(void **unused)
{
    (void)unused;
    eager_fault_caught(QWEN_FAULT_SWAP_WO, "final hidden differs from the reference");
}

static void stale_kv_binding_caught(void **unused)
{
    (void)unused;
    eager_fault_caught(QWEN_FAULT_STALE_KV, "final hidden differs from the reference");
}

static void bad_tile_unit_refused(void **unused)
{
    (void)unused;
    const hbg_case *c = hbg_case_find("qwen");
    hbg_kernel_table *kt;
    assert_int_equal(hbg_kernel_table_create(&kt), HBG_OK);
    hbg_program p;
    void *st = NULL;
    hbg_case_env env = {.nranks = 1, .tile_unit = 24};
    assert_int_equal(c->setup(&env, kt, &p, &st), HBG_E_INVAL);
    env.tile_unit = 8;
    assert_int_equal(c->setup(&env, kt, &p, &st), HBG_E_INVAL);
    hbg_kernel_table_destroy(kt);
}

/* The model's bytes, exactly (the arrays build_model allocates), and a
 * tile unit whose model would not fit twice in what the host has left is
 * refused before anything is allocated, with both figures named. */
static void model_bytes_and_fit(void **unused)
{
    (void)unused;
    /* u = 32: 12,600 u^2 floats of weights and 2.6 M of KV cache, ... */
    assert_int_equal(qwen_model_bytes(qwen_dims_for(32)), 62170368);
    char msg[256] = "";
    /* twice the model and the process's own 32 MiB, each rank */
    uint64_t one = 2 * 62170368ull + CASE_PROCESS_BYTES;
    hbg_case_host h = {true, true, one, "MemAvailable + free swap"};
    assert_int_equal(qwen_check_fits(qwen_dims_for(32), 1, &h, msg, sizeof msg), HBG_OK);
    h.avail = one - 1;
    assert_int_equal(qwen_check_fits(qwen_dims_for(32), 1, &h, msg, sizeof msg), HBG_E_NOMEM);
    h.avail = 21000000000ull;
    assert_int_equal(qwen_check_fits(qwen_dims_for(1024), 1, &h, msg, sizeof msg), HBG_E_NOMEM);
    assert_string_equal(msg, "tile unit 1024 needs about 106.4 GB of memory (the model, 53.2 GB, on the host and "
                             "again in device memory); 21.0 GB is available (MemAvailable + free swap); lower "
                             "--tile-unit");
    /* each rank holds its own */
    h.avail = 3 * one;
    assert_int_equal(qwen_check_fits(qwen_dims_for(32), 3, &h, msg, sizeof msg), HBG_OK);
    h.avail = 3 * one - 1;
    assert_int_equal(qwen_check_fits(qwen_dims_for(32), 3, &h, msg, sizeof msg), HBG_E_NOMEM);
    assert_string_equal(msg, "tile unit 32 needs about 473.7 MB of memory (the model, 62.2 MB, on the host and again "
                             "in device memory, in each of 3 ranks); 473.7 MB is available (MemAvailable + free "
                             "swap); lower --tile-unit or --ranks");
}

static void device_golden_two_rounds(void **unused)
{
    (void)unused;
    rig r;
    rig_open(&r, SMALL_U);
    hbg_device *dev;
    hbg_sim_config sc = {0};
    assert_int_equal(hbg_sim_open(&sc, &dev), HBG_OK);
    hbg_runtime_config rc = {.device = dev, .kernels = r.kt, .heap_bytes = r.c->heap_bytes, .records_fd = -1,
                             .nranks = 1};
    hbg_runtime *rt;
    assert_int_equal(hbg_runtime_create(&rc, &rt), HBG_OK);
    const qwen_model *m = qwen_state_model(r.state);
    size_t n = (size_t)QWEN_BATCH * m->d.hidden;
    for (int round = 0; round < 2; round++) {
        memset(m->out, 0xff, n * sizeof(float)); /* NaN: a result not written cannot pass */
        hbg_pass_report rep;
        assert_int_equal(hbg_runtime_run(rt, &r.prog, false, &rep), HBG_OK);
        assert_true(rep.device_ran);
        assert_int_equal(rep.tasks, 47);
        assert_int_equal(rep.replays, L);
        assert_int_equal(rep.run.replays, L);
        assert_int_equal(rep.run.tasks_run, 4 + (uint64_t)L * (277 - 12));
        char msg[512];
        hbg_status st = golden(&r, msg, sizeof msg);
        if (st)
            fail_msg("round %d: %s", round + 1, msg);
    }
    hbg_runtime_destroy(rt);
    hbg_device_close(dev);
    rig_close(&r);
}

/* Device bytes a qwen pass allocates besides Definitions: the GM heap, the
 * arena, the caller buffers. */
static uint64_t device_bytes_but_defs(const rig *r)
{
    uint64_t n = r->c->heap_bytes + (1u << 20); /* the arena's first size */
    for (uint32_t i = 0; i < r->prog.nargs; i++)
        n += r->prog.args[i].layout.nbytes;
    return n;
}

/* One pass on a sim device of `limit` bytes with a Definition pool of
 * `pool` bytes; returns its status and checks the golden when it ran. */
static hbg_status pass_with_pool(rig *r, uint64_t limit, uint64_t pool, hbg_pass_report *rep)
{
    hbg_device *dev;
    hbg_sim_config sc = {.mem_limit = limit};
    assert_int_equal(hbg_sim_open(&sc, &dev), HBG_OK);
    hbg_runtime_config rc = {.device = dev, .kernels = r->kt, .heap_bytes = r->c->heap_bytes, .records_fd = -1,
                             .nranks = 1, .def_pool_bytes = pool};
    hbg_runtime *rt;
    assert_int_equal(hbg_runtime_create(&rc, &rt), HBG_OK);
    hbg_status st = hbg_runtime_run(rt, &r->prog, false, rep);
    if (!st) {
        char msg[512];
        if (golden(r, msg, sizeof msg))
            fail_msg("%s", msg);
    }
    hbg_runtime_destroy(rt);
    hbg_device_close(dev);
    return st;
}

/* The layer Definition goes into the device pool committed in
 * static_arena: a device with room for the pool and nothing more still
 * runs the pass. When the pool is too small, the Definition gets its own
 * allocation in graph_upload, which that device refuses, and a device
 * with room for it runs the pass again. */
static void definitions_live_in_the_device_pool(void **unused)
{
    (void)unused;
    rig r;
    rig_open(&r, SMALL_U);
    uint64_t base = device_bytes_but_defs(&r);
    hbg_pass_report rep;
    assert_int_equal(pass_with_pool(&r, base + HBG_DEFAULT_DEF_POOL_BYTES, 0, &rep), HBG_OK);
    assert_int_equal(rep.defs_uploaded, 1);
    assert_int_equal(pass_with_pool(&r, base + 4096, 4096, &rep), HBG_E_DEVICE_ALLOC);
    assert_int_equal(rep.failed_segment, HBG_PH_GRAPH_UPLOAD);
    assert_int_equal(pass_with_pool(&r, base + 4096 + (1u << 20), 4096, &rep), HBG_OK);
    assert_int_equal(rep.defs_uploaded, 1);
    /* One byte short of the pool: static_arena is refused. */
    assert_int_equal(pass_with_pool(&r, base + HBG_DEFAULT_DEF_POOL_BYTES - 1, 0, &rep), HBG_E_DEVICE_ALLOC);
    assert_int_equal(rep.failed_segment, HBG_PH_STATIC_ARENA);
    rig_close(&r);
}

/* A first pass refused in static_arena takes nothing with it: on a device
 * with room for everything but 8 KB held by someone else, the (256 KB)
 * pool is refused; once the 8 KB are back, the same runtime commits all
 * three regions and runs. An arena kept from the failed pass would not
 * fit beside the new one the retry allocates. */
static void a_refused_static_arena_can_be_retried(void **unused)
{
    (void)unused;
    rig r;
    rig_open(&r, SMALL_U);
    hbg_device *dev;
    hbg_sim_config sc = {.mem_limit = device_bytes_but_defs(&r) + (256u << 10)};
    assert_int_equal(hbg_sim_open(&sc, &dev), HBG_OK);
    uint64_t held;
    assert_int_equal(hbg_device_alloc(dev, 8192, &held), HBG_OK);
    hbg_runtime_config rc = {.device = dev, .kernels = r.kt, .heap_bytes = r.c->heap_bytes, .records_fd = -1,
                             .nranks = 1, .def_pool_bytes = 256u << 10};
    hbg_runtime *rt;
    assert_int_equal(hbg_runtime_create(&rc, &rt), HBG_OK);
    hbg_pass_report rep;
    assert_int_equal(hbg_runtime_run(rt, &r.prog, false, &rep), HBG_E_DEVICE_ALLOC);
    assert_int_equal(rep.failed_segment, HBG_PH_STATIC_ARENA);
    hbg_device_free(dev, held);
    for (int round = 0; round < 2; round++) {
        assert_int_equal(hbg_runtime_run(rt, &r.prog, false, &rep), HBG_OK);
        char msg[512];
        if (golden(&r, msg, sizeof msg))
            fail_msg("round %d: %s", round + 1, msg);
    }
    hbg_runtime_destroy(rt);
    hbg_device_close(dev);
    rig_close(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(host_program_counts),
        cmocka_unit_test(layer_nodes_and_fanins),
        cmocka_unit_test(replay_bindings),
        cmocka_unit_test(eager_golden_passes),
        cmocka_unit_test(wrong_wo_binding_caught),
        cmocka_unit_test(stale_kv_binding_caught),
        cmocka_unit_test(bad_tile_unit_refused),
        cmocka_unit_test(model_bytes_and_fit),
        cmocka_unit_test(device_golden_two_rounds),
        cmocka_unit_test(definitions_live_in_the_device_pool),
        cmocka_unit_test(a_refused_static_arena_can_be_retried),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
