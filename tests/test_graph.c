/* Graphs: recording a Definition once, replaying it with new boundaries. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "graph/graph_internal.h"
#include "support/orch_fixture.h"

#define LAYERS 40
#define H 8

/* Boundary: 0 x (IN), 1 w (IN, this layer's view), 2 y (INOUT),
 * 3 scratch (INOUT); scalar 0 = layer index. */
typedef struct body_ctx {
    uint16_t k_mm;          /* changing it changes one node */
    const hbg_tensor *stray;/* a tensor outside the boundary, to misuse */
} body_ctx;

static hbg_status layer_body(hbg_orch *o, void *vctx, const hbg_boundary *b)
{
    body_ctx *c = vctx;
    uint32_t shape[2] = {1, H};
    hbg_tensor tmp = hbg_tensor_desc(HBG_F32, 2, shape);
    hbg_arg a0[] = {{b->args[0].t, HBG_IN}, {b->args[1].t, HBG_IN}, {&tmp, HBG_OUT_ALLOC}};
    hbg_task mm = {.kernel_aic = c->k_mm, .kernel_aiv = HBG_KERNEL_NONE, .core = HBG_CORE_AIC, .blocks = 2,
                   .ntensors = 3, .args = a0};
    hbg_task_id n0, n1, n2, n3, n4;
    hbg_submit_task(o, &mm, &n0);
    hbg_tensor acc = hbg_tensor_desc(HBG_F32, 2, shape);
    hbg_tensor *ts[] = {&acc};
    hbg_alloc_tensors(o, 1, ts, &n1);
    /* half of the scratch, as a view */
    uint32_t half[2] = {1, H / 2};
    hbg_tensor sv = hbg_tensor_view(b->args[3].t, b->args[3].t->offset + H / 2, 2, half, NULL);
    hbg_arg a2[] = {{&tmp, HBG_IN}, {&acc, HBG_OUT}, {&sv, HBG_INOUT}};
    hbg_task v = {.kernel_aic = HBG_KERNEL_NONE, .kernel_aiv = 2, .core = HBG_CORE_AIV, .blocks = 1,
                  .ntensors = 3, .args = a2};
    hbg_submit_task(o, &v, &n2);
    uint64_t sc[2] = {0, 77};
    int16_t slots[2] = {0, -1};
    hbg_arg a3[] = {{&acc, HBG_IN}, {b->args[2].t, HBG_INOUT}};
    if (c->stray)
        a3[0].t = (hbg_tensor *)c->stray;
    hbg_task add = {.kernel_aic = HBG_KERNEL_NONE, .kernel_aiv = 3, .core = HBG_CORE_AIV, .blocks = 1,
                    .ntensors = 2, .args = a3, .nscalars = 2, .scalars = sc, .scalar_slots = slots};
    hbg_submit_task(o, &add, &n3);
    hbg_submit_dummy(o, 1, &n3, &n4);
    return HBG_OK;
}

typedef struct model {
    hbg_tensor hid[2], weights, scratch, wl[LAYERS];
    hbg_arg args[LAYERS][4];
    uint64_t sc[LAYERS][1];
    hbg_boundary b[LAYERS];
} model;

static void make_model(model *m)
{
    m->hid[0] = fx_buf(0x10000, 1, H);
    m->hid[1] = fx_buf(0x20000, 1, H);
    m->weights = fx_buf(0x40000, LAYERS * H, H);
    m->scratch = fx_buf(0x80000, 1, H);
    for (int i = 0; i < LAYERS; i++) {
        m->wl[i] = fx_tile(&m->weights, (uint32_t)i * H, 0, H, H);
        m->args[i][0] = (hbg_arg){&m->hid[i % 2], HBG_IN};
        m->args[i][1] = (hbg_arg){&m->wl[i], HBG_IN};
        m->args[i][2] = (hbg_arg){&m->hid[(i + 1) % 2], HBG_INOUT};
        m->args[i][3] = (hbg_arg){&m->scratch, HBG_INOUT};
        m->sc[i][0] = (uint64_t)i;
        m->b[i] = (hbg_boundary){.ntensors = 4, .args = m->args[i], .nscalars = 1, .scalars = m->sc[i]};
    }
}

static hbg_task_id run_layers(hbg_orch *o, model *m, body_ctx *c, hbg_task_id *ids)
{
    for (int i = 0; i < LAYERS; i++)
        assert_int_equal(hbg_submit_graph(o, 42, layer_body, c, &m->b[i], 0, &ids[i]), HBG_OK);
    return ids[LAYERS - 1];
}

static const hbg_def_header *only_def(const hbg_orch *o)
{
    assert_int_equal(o->img.ndeftab, 1);
    return hbg__def_image(o, 0);
}

static void record_once_replay_forty(void **state)
{
    (void)state;
    model m;
    make_model(&m);
    body_ctx c = {.k_mm = 1};
    hbg_orch *o = fx_orch(256, 1 << 20);
    hbg_task_id ids[LAYERS];
    run_layers(o, &m, &c, ids);

    assert_int_equal(hbg_orch_def_count(o), 1);
    assert_int_equal(o->graph->defs_built, 1);
    assert_int_equal(o->img.nreplay, LAYERS);
    assert_int_equal(hbg_orch_task_count(o), LAYERS);
    assert_int_equal(o->img.nbtensor, LAYERS * 4);
    assert_int_equal(o->img.nbscalar, LAYERS);

    hbg_def_info in;
    assert_int_equal(hbg_orch_def_info(o, 0, &in), HBG_OK);
    assert_int_equal(in.nodes, 5);
    assert_int_equal(in.by_kind[HBG_NODE_AIC], 1);
    assert_int_equal(in.by_kind[HBG_NODE_AIV], 2);
    assert_int_equal(in.by_kind[HBG_NODE_ALLOC], 1);
    assert_int_equal(in.by_kind[HBG_NODE_DUMMY], 1);
    assert_int_equal(in.boundary_tensors, 4);
    assert_int_equal(in.boundary_in, 2);
    assert_int_equal(in.boundary_inout, 2);
    assert_int_equal(in.boundary_scalars, 1);
    assert_int_equal(in.heap_bytes, 128); /* tmp at 0, acc at 64 (64-byte aligned), 32 B each */

    /* Each replay's boundary image carries that layer's tensors and scalar. */
    for (int i = 0; i < LAYERS; i++) {
        const hbg_img_replay *r = &o->img.replays[i];
        assert_int_equal(r->task, ids[i]);
        assert_int_equal(r->def, 0);
        const hbg_img_btensor *bt = &o->img.btensors[r->btensor_off];
        assert_int_equal(bt[0].addr, m.hid[i % 2].addr);
        assert_int_equal(bt[1].addr, m.weights.addr);
        assert_int_equal(bt[1].offset, (uint64_t)i * H * H);
        assert_int_equal(bt[2].addr, m.hid[(i + 1) % 2].addr);
        assert_int_equal(o->img.bscalars[r->bscalar_off], (uint64_t)i);
        assert_int_equal(o->img.tasks[ids[i]].kind, HBG_TASK_REPLAY);
        assert_int_equal(o->img.tasks[ids[i]].replay, (uint32_t)i);
        /* the GM block of each replay is its own */
        if (i)
            assert_true(r->heap_base >= o->img.replays[i - 1].heap_base + in.heap_bytes);
        /* layer i reads what layer i-1 wrote */
        if (i)
            assert_true(fx_has_edge(o, ids[i - 1], ids[i]));
    }

    /* The node tensors are expressed relative to the replay. */
    const hbg_def_header *h = only_def(o);
    const unsigned char *img = (const unsigned char *)h;
    const hbg_def_node *nodes = (const hbg_def_node *)(img + h->off_nodes);
    const hbg_def_targ *targs = (const hbg_def_targ *)(img + h->off_targs);
    const hbg_def_sarg *sargs = (const hbg_def_sarg *)(img + h->off_sargs);
    const uint32_t *fanins = (const uint32_t *)(img + h->off_fanins);
    const hbg_def_targ *g0 = targs + nodes[0].targ_off;
    assert_int_equal(g0[0].cls, HBG_TARG_BOUNDARY);
    assert_int_equal(g0[0].ref, 0);
    assert_int_equal(g0[1].cls, HBG_TARG_BOUNDARY);
    assert_int_equal(g0[1].ref, 1);
    assert_int_equal(g0[2].cls, HBG_TARG_OWN_OUT);
    assert_int_equal(g0[2].heap_off, 0);
    const hbg_def_targ *g2 = targs + nodes[2].targ_off;
    assert_int_equal(g2[0].cls, HBG_TARG_NODE_OUT);
    assert_int_equal(g2[0].heap_off, 0);
    assert_int_equal(g2[1].cls, HBG_TARG_NODE_OUT);
    assert_int_equal(g2[1].heap_off, 64);
    assert_int_equal(g2[2].cls, HBG_TARG_BVIEW);
    assert_int_equal(g2[2].ref, 3);
    assert_int_equal(g2[2].delta, H / 2);
    const hbg_def_sarg *s3 = sargs + nodes[3].sarg_off;
    assert_int_equal(s3[0].slot, 0);
    assert_int_equal(s3[1].slot, -1);
    assert_int_equal(s3[1].value, 77);
    /* intra-Definition fanins: node 2 after 0 (tmp; the alloc node 1 is
     * complete when the replay starts, so no edge), node 3 after 2 (acc),
     * node 4 after 3 (explicit). */
    assert_int_equal(nodes[2].fanin_cnt, 1);
    assert_int_equal(fanins[nodes[2].fanin_off], 0);
    assert_int_equal(nodes[3].fanin_cnt, 1);
    assert_int_equal(fanins[nodes[3].fanin_off], 2);
    assert_int_equal(nodes[4].fanin_cnt, 1);
    assert_int_equal(nodes[0].fanin_cnt, 0);
    assert_int_equal(hbg__orch_end_pass(o), HBG_OK);
    hbg__orch_destroy(o);
}

static uint64_t hash_of_pass(hbg_orch *o, model *m, body_ctx *c)
{
    hbg_task_id ids[LAYERS];
    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    run_layers(o, m, c, ids);
    assert_int_equal(hbg__orch_end_pass(o), HBG_OK);
    return only_def(o)->hash;
}

static void hash_stable_and_sensitive(void **state)
{
    (void)state;
    model m;
    make_model(&m);
    body_ctx c = {.k_mm = 1};
    hbg_orch *o = fx_orch(256, 1 << 20);
    hbg__orch_end_pass(o);
    uint64_t h1 = hash_of_pass(o, &m, &c);
    /* A second recording (pass 2 re-records) hashes identically, even with
     * the GM heap at another address. */
    uint64_t h2 = hash_of_pass(o, &m, &c);
    assert_int_equal(o->graph->defs_built, 1);
    assert_true(h1 == h2);
    /* The hash covers every byte but its own field. */
    const hbg_def_header *h = only_def(o);
    hbg_def_header copy;
    memcpy(&copy, h, sizeof copy);
    unsigned char buf[1 << 16];
    assert_true(h->bytes <= sizeof buf);
    memcpy(buf, h, h->bytes);
    memset(buf + offsetof(hbg_def_header, hash), 0, 8);
    assert_true(hbg__image_hash(buf, h->bytes) == h->hash);
    /* XXH3-64 of this model's image: it moves exactly when the image's
     * bytes (or the hash) do. */
    assert_int_equal(h->bytes, 1824);
    assert_true(h1 == 0xa53efee470f18796ull);
    c.k_mm = 9;
    uint64_t h3 = hash_of_pass(o, &m, &c);
    assert_true(h3 != h1);
    hbg__orch_destroy(o);
}

/* A Definition the pool has no room for is not listed: no entry may point
 * at an image that was never written. */
static void pool_full_lists_nothing(void **state)
{
    (void)state;
    model m;
    make_model(&m);
    body_ctx c = {.k_mm = 1};
    /* The image is 1824 bytes (hash_stable_and_sensitive). */
    hbg__orch_config cfg = {
        .task_window = 256, .heap_base = FAKE_HEAP_BASE, .heap_bytes = 1 << 20, .def_pool_bytes = 1024};
    hbg_orch *o = NULL;
    assert_int_equal(hbg__graph_orch_create(&cfg, &o), HBG_OK);
    hbg__orch_set_timing(o, true, NULL);
    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    hbg_task_id id;
    assert_int_equal(hbg_submit_graph(o, 42, layer_body, &c, &m.b[0], 0, &id), HBG_E_DEF_POOL_FULL);
    assert_string_equal(hbg_orch_last_error(o),
                        "task 0 (graph key 0x2a): the host's 1024-byte pool of Definition images is full");
    assert_int_equal(hbg_orch_def_count(o), 0);
    /* The refused build is an operation like any other: counted, and (the
     * first pass times every one) timed, with detail 0. */
    const hbg__opstat *bd = &o->ops[HBG_OP_BUILD_DEFINITION - HBG_SEGMENT_COUNT];
    assert_int_equal(bd->count, 1);
    assert_int_equal(bd->timed, 1);
    assert_int_equal(bd->detail_sum, 0);
    hbg_def_info in;
    assert_int_equal(hbg_orch_def_info(o, 0, &in), HBG_E_INVAL);
    hbg__orch_destroy(o);
}

/* An orchestrator that keeps Definitions across passes, before its first. */
static hbg_orch *kept_orch(void)
{
    hbg__orch_config cfg = {.task_window = 256, .heap_base = FAKE_HEAP_BASE, .heap_bytes = 1 << 20,
                           .keep_definitions = true};
    hbg_orch *o;
    assert_int_equal(hbg__graph_orch_create(&cfg, &o), HBG_OK);
    return o;
}

static void kept_definitions_skip_recording(void **state)
{
    (void)state;
    model m;
    make_model(&m);
    body_ctx c = {.k_mm = 1};
    hbg_orch *o = kept_orch();
    hbg_task_id ids[LAYERS];
    for (int pass = 0; pass < 3; pass++) {
        hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
        run_layers(o, &m, &c, ids);
        assert_int_equal(hbg__orch_end_pass(o), HBG_OK);
        assert_int_equal(o->graph->defs_built, pass == 0 ? 1 : 0);
        assert_int_equal(o->img.nreplay, LAYERS);
        assert_int_equal(hbg_orch_def_count(o), 1);
    }
    hbg__orch_destroy(o);
}

/* Kept Definitions whose keys change: a key per pass for 300 passes, and
 * one key (the model's layer) every pass. The cache drops what the last
 * pass did not use once it passes half full, and packs the pool: every
 * pass binds, the layer is never recorded again, and a dropped key called
 * again is recorded again, to the same image bytes. */
static hbg_status step_body(hbg_orch *o, void *ctx, const hbg_boundary *b)
{
    (void)ctx;
    hbg_arg a[] = {{b->args[0].t, HBG_INOUT}};
    return fx_task(o, 1, a, NULL);
}

static void kept_definitions_of_changing_keys_are_dropped(void **state)
{
    (void)state;
    model m;
    make_model(&m);
    body_ctx c = {.k_mm = 1};
    hbg_orch *o = kept_orch();
    hbg_task_id ids[LAYERS];
    hbg_tensor x = fx_buf(0x700000, 4, 4);
    hbg_arg a = {&x, HBG_INOUT};
    hbg_boundary b = {.ntensors = 1, .args = &a};
    uint64_t first_hash = 0;
    for (uint32_t pass = 0; pass < 300; pass++) {
        hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
        run_layers(o, &m, &c, ids);
        /* key 1000 in the first pass and again in the 200th */
        uint64_t key = pass == 0 || pass == 200 ? 1000 : 2000 + pass;
        assert_int_equal(hbg_submit_graph(o, key, step_body, NULL, &b, 0, NULL), HBG_OK);
        assert_int_equal(hbg__orch_end_pass(o), HBG_OK);
        /* the layer once, then only each new key */
        assert_int_equal(o->graph->defs_built, pass == 0 ? 2 : 1);
        assert_true(hbg_orch_def_count(o) <= HBG_DEF_CACHE_CAP / 2 + 1);
        hbg_def_info info;
        for (uint32_t i = 0; i < hbg_orch_def_count(o); i++) {
            assert_int_equal(hbg_orch_def_info(o, i, &info), HBG_OK);
            if (info.key == 1000) {
                if (!first_hash)
                    first_hash = info.hash;
                assert_int_equal(info.hash, first_hash);
            }
        }
    }
    hbg__orch_destroy(o);
}

/* 64 new keys a pass, kept: each takes the place of a key of the last
 * pass, whose image is then named by no entry. Every entry is always the
 * last pass's, so nothing is dropped, and the pool must be packed all the
 * same: it was not, and a 1 MiB pool filled at pass 42 (the default 64
 * MiB at pass 2730). */
static void given_places_are_packed(void **state)
{
    (void)state;
    hbg__orch_config cfg = {.task_window = 256, .heap_base = FAKE_HEAP_BASE, .heap_bytes = 1 << 20,
                           .keep_definitions = true, .def_pool_bytes = 1 << 20};
    hbg_orch *o;
    assert_int_equal(hbg__graph_orch_create(&cfg, &o), HBG_OK);
    hbg_tensor x = fx_buf(0x700000, 4, 4);
    hbg_arg a = {&x, HBG_INOUT};
    hbg_boundary b = {.ntensors = 1, .args = &a};
    uint64_t most = 0;
    for (uint32_t pass = 0; pass < 120; pass++) {
        hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
        for (uint64_t k = 0; k < HBG_DEF_CACHE_CAP; k++)
            if (hbg_submit_graph(o, 100000 + pass * 100 + k, step_body, NULL, &b, 0, NULL))
                fail_msg("pass %u key %llu: %s", pass, (unsigned long long)k, hbg_orch_last_error(o));
        assert_int_equal(hbg__orch_end_pass(o), HBG_OK);
        assert_int_equal(o->graph->defs_built, HBG_DEF_CACHE_CAP);
        if (o->graph->def_pool_used > most)
            most = o->graph->def_pool_used;
    }
    /* two passes' images at most: the last pass's, and this one's */
    assert_true(most <= 2 * HBG_DEF_CACHE_CAP * 512);
    hbg__orch_destroy(o);
}

static void boundary_mismatch_detected(void **state)
{
    (void)state;
    model m;
    make_model(&m);
    body_ctx c = {.k_mm = 1};
    hbg_orch *o = fx_orch(256, 1 << 20);
    hbg_task_id id;
    assert_int_equal(hbg_submit_graph(o, 42, layer_body, &c, &m.b[0], 0, &id), HBG_OK);

    /* a different shape */
    hbg_tensor wide = fx_buf(0x10000, 1, 2 * H);
    hbg_arg args[4];
    memcpy(args, m.args[1], sizeof args);
    args[0].t = &wide;
    hbg_boundary b = m.b[1];
    b.args = args;
    uint32_t before = hbg_orch_task_count(o);
    assert_int_equal(hbg_submit_graph(o, 42, layer_body, &c, &b, 0, &id), HBG_E_BOUNDARY_MISMATCH);
    assert_int_equal(hbg_orch_task_count(o), before);
    /* a different direction */
    memcpy(args, m.args[1], sizeof args);
    args[3].dir = HBG_IN;
    assert_int_equal(hbg_submit_graph(o, 42, layer_body, &c, &b, 0, &id), HBG_E_BOUNDARY_MISMATCH);
    /* different aliasing: y on the same buffer as x */
    memcpy(args, m.args[1], sizeof args);
    args[2].t = args[0].t;
    assert_int_equal(hbg_submit_graph(o, 42, layer_body, &c, &b, 0, &id), HBG_E_BOUNDARY_MISMATCH);
    /* a different scalar count */
    memcpy(args, m.args[1], sizeof args);
    b.nscalars = 0;
    assert_int_equal(hbg_submit_graph(o, 42, layer_body, &c, &b, 0, &id), HBG_E_BOUNDARY_MISMATCH);
    assert_string_equal(hbg_strerror(HBG_E_BOUNDARY_MISMATCH), "graph boundary does not match the recorded Definition");

    /* With fallback the body runs as ordinary tasks: 4 tasks + 1 alloc. */
    b.nscalars = 1;
    args[0].t = &wide;
    before = hbg_orch_task_count(o);
    assert_int_equal(hbg_submit_graph(o, 42, layer_body, &c, &b, HBG_GRAPH_FALLBACK, &id), HBG_OK);
    assert_int_equal(hbg_orch_task_count(o), before + 5);
    assert_int_equal(o->graph->fallbacks, 1);
    /* the scalar slot resolved against this call's boundary */
    const hbg_img_task *add = &o->img.tasks[before + 3];
    assert_int_equal(o->img.scalars[add->scalar_off], 1);
    assert_int_equal(o->img.scalars[add->scalar_off + 1], 77);
    hbg__orch_destroy(o);
}

static void capture_errors(void **state)
{
    (void)state;
    model m;
    make_model(&m);
    hbg_tensor stray = fx_buf(0x900000, 1, H);
    body_ctx c = {.k_mm = 1, .stray = &stray};
    hbg_orch *o = fx_orch(256, 1 << 20);
    hbg_task_id id;
    assert_int_equal(hbg_submit_graph(o, 42, layer_body, &c, &m.b[0], 0, &id), HBG_E_GRAPH_CAPTURE);
    assert_int_equal(hbg_orch_def_count(o), 0);
    assert_int_equal(hbg_orch_task_count(o), 0);
    /* usable afterwards, and the key records cleanly */
    c.stray = NULL;
    assert_int_equal(hbg_submit_graph(o, 42, layer_body, &c, &m.b[0], 0, &id), HBG_OK);
    assert_int_equal(hbg_orch_def_count(o), 1);
    hbg__orch_destroy(o);
}

/* A node writing slot 0's tensor, or a row of it. */
static hbg_status write_slot0(hbg_orch *o, void *ctx, const hbg_boundary *b)
{
    const bool *row = ctx;
    hbg_tensor r0 = fx_tile(b->args[0].t, 0, 0, 1, 4);
    hbg_arg a[] = {{*row ? &r0 : b->args[0].t, HBG_INOUT}};
    return fx_task(o, 1, a, NULL);
}

/* Moves slot 1's own tensor two rows down, writes it, and moves it back. */
static hbg_status move_and_write_slot1(hbg_orch *o, void *ctx, const hbg_boundary *b)
{
    (void)ctx;
    hbg_tensor *z = b->args[1].t;
    z->offset += 8;
    hbg_arg a[] = {{z, HBG_INOUT}};
    hbg_status st = fx_task(o, 1, a, NULL);
    z->offset -= 8;
    return st;
}

/* The outer task counts as writing only the slots passed HBG_INOUT or
 * HBG_OUT: a body that writes what a slot passes as HBG_IN would leave a
 * write no later task is ordered after. Refused while it is recorded;
 * another slot on the buffer passed for writing that holds the range
 * carries it. */
static void a_body_writes_only_through_written_slots(void **state)
{
    (void)state;
    hbg_orch *o = fx_orch(256, 1 << 20);
    hbg_tensor x = fx_buf(0x100000, 4, 4), y = fx_buf(0x200000, 4, 4);
    for (int row = 0; row < 2; row++) {
        bool r = row;
        hbg_arg in[] = {{&x, HBG_IN}};
        hbg_boundary b = {.ntensors = 1, .args = in};
        hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
        assert_int_equal(hbg_submit_graph(o, 5, write_slot0, &r, &b, 0, NULL), HBG_E_GRAPH_CAPTURE);
        assert_string_equal(hbg_orch_last_error(o),
                            "graph key 0x5 node 0 arg 0: writes boundary slot 0, which the call passes as HBG_IN: "
                            "the outer task would not count as writing it (pass the slot as HBG_INOUT or HBG_OUT)");
        assert_int_equal(hbg_orch_def_count(o), 0);
        /* passed for writing: recorded */
        hbg_arg io[] = {{&x, HBG_INOUT}};
        b.args = io;
        assert_int_equal(hbg_submit_graph(o, 6 + row, write_slot0, &r, &b, 0, NULL), HBG_OK);
        /* slot 0 read, slot 1 on the same buffer written: slot 1 carries it */
        hbg_arg both[] = {{&x, HBG_IN}, {&x, HBG_INOUT}};
        hbg_boundary b2 = {.ntensors = 2, .args = both};
        assert_int_equal(hbg_submit_graph(o, 8 + row, write_slot0, &r, &b2, 0, NULL), HBG_OK);
        /* slot 1 on another buffer carries nothing of slot 0's */
        hbg_arg other[] = {{&x, HBG_IN}, {&y, HBG_INOUT}};
        b2.args = other;
        assert_int_equal(hbg_submit_graph(o, 10 + row, write_slot0, &r, &b2, 0, NULL), HBG_E_GRAPH_CAPTURE);
        assert_int_equal(hbg__orch_end_pass(o), HBG_E_GRAPH_CAPTURE);
    }
    /* the node memo does not answer a capture whose slots' directions
     * changed: the write recorded twice through INOUT is refused through IN */
    bool whole = false;
    for (int pass = 0; pass < 3; pass++) {
        hbg_arg one[] = {{&x, pass < 2 ? HBG_INOUT : HBG_IN}};
        hbg_boundary b = {.ntensors = 1, .args = one};
        hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
        assert_int_equal(hbg_submit_graph(o, 20, write_slot0, &whole, &b, 0, NULL),
                         pass < 2 ? HBG_OK : HBG_E_GRAPH_CAPTURE);
        hbg__orch_end_pass(o);
    }
    /* a body that moves the caller's tensor of a writing slot out of its
     * range writes what that slot does not hold */
    hbg_tensor z = fx_tile(&x, 0, 0, 1, 4);
    hbg_arg moved[] = {{&x, HBG_IN}, {&z, HBG_INOUT}};
    hbg_boundary bm = {.ntensors = 2, .args = moved};
    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    assert_int_equal(hbg_submit_graph(o, 30, move_and_write_slot1, NULL, &bm, 0, NULL), HBG_E_GRAPH_CAPTURE);
    assert_true(z.offset == 0);
    hbg__orch_end_pass(o);
    hbg__orch_destroy(o);
}

static hbg_status other_body(hbg_orch *o, void *ctx, const hbg_boundary *b)
{
    return layer_body(o, ctx, b);
}

/* A key names one body: another function under it is refused, in the pass
 * that recorded it and (kept Definitions) in later ones. */
static void key_names_one_body(void **state)
{
    (void)state;
    model m;
    make_model(&m);
    body_ctx c = {.k_mm = 1};
    hbg_orch *o = kept_orch();
    hbg_task_id id;
    for (int pass = 0; pass < 2; pass++) {
        hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
        assert_int_equal(hbg_submit_graph(o, 42, layer_body, &c, &m.b[0], 0, &id), HBG_OK);
        uint32_t before = hbg_orch_task_count(o);
        assert_int_equal(hbg_submit_graph(o, 42, other_body, &c, &m.b[1], 0, &id), HBG_E_GRAPH_KEY_REUSED);
        assert_int_equal(id, HBG_TASK_NONE);
        assert_int_equal(hbg_orch_task_count(o), before);
        assert_int_equal(hbg__orch_end_pass(o), HBG_E_GRAPH_KEY_REUSED);
    }
    assert_string_equal(hbg_status_name(HBG_E_GRAPH_KEY_REUSED), "HBG_E_GRAPH_KEY_REUSED");
    assert_string_equal(hbg_strerror(HBG_E_GRAPH_KEY_REUSED), "graph key already names another body");
    hbg__orch_destroy(o);
}

/* One function whose content depends on its ctx: only the caller can ask
 * for the content to be checked, and then a change is refused. */
static void check_body_compares_content(void **state)
{
    (void)state;
    model m;
    make_model(&m);
    body_ctx c = {.k_mm = 1};
    hbg_orch *o = fx_orch(256, 1 << 20);
    hbg_task_id id;
    assert_int_equal(hbg_submit_graph(o, 42, layer_body, &c, &m.b[0], HBG_GRAPH_CHECK_BODY, &id), HBG_OK);
    assert_int_equal(hbg_submit_graph(o, 42, layer_body, &c, &m.b[1], HBG_GRAPH_CHECK_BODY, &id), HBG_OK);
    assert_int_equal(o->img.nreplay, 2);
    c.k_mm = 9;
    uint32_t before = hbg_orch_task_count(o);
    assert_int_equal(hbg_submit_graph(o, 42, layer_body, &c, &m.b[2], HBG_GRAPH_CHECK_BODY, &id),
                     HBG_E_GRAPH_KEY_REUSED);
    assert_int_equal(hbg_orch_task_count(o), before);
    /* unasked, the first body is replayed */
    assert_int_equal(hbg_submit_graph(o, 42, layer_body, &c, &m.b[2], 0, &id), HBG_OK);
    assert_int_equal(hbg_orch_def_count(o), 1);
    hbg__orch_destroy(o);
}

/* Records key 42 in a fresh pass, then offers boundary `b`: the mismatch
 * message names the slot and what differs. */
static void expect_mismatch(hbg_orch *o, model *m, const hbg_boundary *b, const char *msg)
{
    body_ctx c = {.k_mm = 1};
    hbg_task_id id;
    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    assert_int_equal(hbg_submit_graph(o, 42, layer_body, &c, &m->b[0], 0, &id), HBG_OK);
    assert_int_equal(hbg_submit_graph(o, 42, layer_body, &c, b, 0, &id), HBG_E_BOUNDARY_MISMATCH);
    assert_string_equal(hbg_orch_last_error(o), msg);
}

static void errors_name_slot_node_and_key(void **state)
{
    (void)state;
    model m;
    make_model(&m);
    hbg_orch *o = fx_orch(256, 1 << 20);
    hbg_tensor wide = fx_buf(0x10000, 1, 2 * H);
    hbg_arg args[4];
    hbg_boundary b = m.b[1];
    b.args = args;
    memcpy(args, m.args[1], sizeof args);
    args[0].t = &wide;
    expect_mismatch(o, &m, &b, "task 1 (graph key 0x2a) slot 0: shape[1] is 16, the Definition's 8");
    memcpy(args, m.args[1], sizeof args);
    args[3].dir = HBG_IN;
    expect_mismatch(o, &m, &b, "task 1 (graph key 0x2a) slot 3: direction HBG_IN, the Definition's HBG_INOUT");
    memcpy(args, m.args[1], sizeof args);
    args[2].t = args[0].t;
    expect_mismatch(o, &m, &b,
                    "task 1 (graph key 0x2a) slot 2: shares slot 0's buffer, where the Definition's shares no "
                    "other slot's");
    memcpy(args, m.args[1], sizeof args);
    b.nscalars = 0;
    expect_mismatch(o, &m, &b, "task 1 (graph key 0x2a): 4 tensors and 0 scalars, the Definition's 4 and 1");

    /* a body's own failure names its node and argument */
    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    hbg_tensor stray = fx_buf(0x900000, 1, H);
    body_ctx c = {.k_mm = 1, .stray = &stray};
    hbg_task_id id;
    assert_int_equal(hbg_submit_graph(o, 42, layer_body, &c, &m.b[0], 0, &id), HBG_E_GRAPH_CAPTURE);
    assert_string_equal(hbg_orch_last_error(o),
                        "graph key 0x2a node 3 arg 0: the tensor is neither a boundary tensor, a view inside one, "
                        "nor a node's output");
    /* a key with another body */
    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    c.stray = NULL;
    assert_int_equal(hbg_submit_graph(o, 42, layer_body, &c, &m.b[0], 0, &id), HBG_OK);
    assert_int_equal(hbg_submit_graph(o, 42, other_body, &c, &m.b[1], 0, &id), HBG_E_GRAPH_KEY_REUSED);
    assert_string_equal(hbg_orch_last_error(o), "task 1 (graph key 0x2a): the key was recorded with another body "
                                                "function");
    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    assert_int_equal(hbg_submit_graph(o, 42, layer_body, &c, &m.b[0], HBG_GRAPH_CHECK_BODY, &id), HBG_OK);
    c.k_mm = 5;
    assert_int_equal(hbg_submit_graph(o, 42, layer_body, &c, &m.b[1], HBG_GRAPH_CHECK_BODY, &id),
                     HBG_E_GRAPH_KEY_REUSED);
    assert_string_equal(hbg_orch_last_error(o), "task 1 (graph key 0x2a): the body submitted other content than "
                                                "the Definition holds (HBG_GRAPH_CHECK_BODY)");
    hbg__orch_destroy(o);
}

/* A body that submits `nodes` dummies, then fails in its own words when
 * given some. */
typedef struct fail_ctx {
    uint32_t nodes;
    const char *why;
} fail_ctx;

static hbg_status failing_body(hbg_orch *o, void *vctx, const hbg_boundary *b)
{
    (void)b;
    fail_ctx *c = vctx;
    hbg_task_id id;
    for (uint32_t i = 0; i < c->nodes; i++)
        hbg_submit_dummy(o, 0, NULL, &id);
    return c->why ? hbg_orch_fail(o, HBG_E_INVAL, "body: %s", c->why) : HBG_OK;
}

/* hbg_orch_fail inside a body: while it is recorded, the message says how
 * far the recording got; run inline (a fallback) after the pass has
 * failed in its own words, the body's words do not replace the first. */
static void body_fails_in_its_own_words(void **state)
{
    (void)state;
    model m;
    make_model(&m);
    hbg_orch *o = fx_orch(256, 1 << 20);
    fail_ctx c = {.nodes = 2, .why = "no weights"};
    hbg_task_id id;
    assert_int_equal(hbg_submit_graph(o, 7, failing_body, &c, &m.b[0], 0, &id), HBG_E_INVAL);
    assert_string_equal(hbg_orch_last_error(o), "graph key 0x7 body (2 nodes recorded): body: no weights");
    assert_int_equal(hbg_orch_def_count(o), 0);
    assert_int_equal(hbg_orch_task_count(o), 0);

    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    c.why = NULL;
    assert_int_equal(hbg_submit_graph(o, 7, failing_body, &c, &m.b[0], 0, &id), HBG_OK);
    assert_int_equal(hbg_orch_fail(o, HBG_E_NOMEM, "outer"), HBG_E_NOMEM);
    hbg_boundary other = m.b[1];
    other.nscalars = 0; /* a mismatch: the body runs inline */
    c.why = "inner";
    assert_int_equal(hbg_submit_graph(o, 7, failing_body, &c, &other, HBG_GRAPH_FALLBACK, &id), HBG_E_INVAL);
    assert_int_equal(hbg_orch_error(o), HBG_E_NOMEM);
    assert_string_equal(hbg_orch_last_error(o), "orchestration (1 task submitted): outer");
    /* and after another, and a third: each body's words go where the
     * kept ones are not */
    c.why = "inner 2";
    assert_int_equal(hbg_submit_graph(o, 7, failing_body, &c, &other, HBG_GRAPH_FALLBACK, &id), HBG_E_INVAL);
    c.why = "inner 3";
    assert_int_equal(hbg_submit_graph(o, 7, failing_body, &c, &other, HBG_GRAPH_FALLBACK, &id), HBG_E_INVAL);
    assert_int_equal(hbg_orch_error(o), HBG_E_NOMEM);
    assert_string_equal(hbg_orch_last_error(o), "orchestration (1 task submitted): outer");

    /* and inline in a pass that had not failed, the body's words are its */
    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    c.why = NULL;
    assert_int_equal(hbg_submit_graph(o, 7, failing_body, &c, &m.b[0], 0, &id), HBG_OK);
    c.why = "inner";
    assert_int_equal(hbg_submit_graph(o, 7, failing_body, &c, &other, HBG_GRAPH_FALLBACK, &id), HBG_E_INVAL);
    assert_string_equal(hbg_orch_last_error(o), "orchestration (3 tasks submitted): body: inner");
    hbg__orch_destroy(o);
}

/* A body that allocates into a tensor the boundary already names. */
static hbg_status alloc_into_boundary(hbg_orch *o, void *ctx, const hbg_boundary *b)
{
    (void)ctx;
    hbg_arg a[] = {{b->args[0].t, HBG_OUT_ALLOC}};
    hbg_task t = {.kernel_aic = HBG_KERNEL_NONE, .kernel_aiv = 2, .core = HBG_CORE_AIV, .blocks = 1,
                  .ntensors = 1, .args = a};
    return hbg_submit_task(o, &t, NULL);
}

static hbg_status alloc_tensors_into_boundary(hbg_orch *o, void *ctx, const hbg_boundary *b)
{
    (void)ctx;
    hbg_tensor *ts[] = {b->args[0].t};
    return hbg_alloc_tensors(o, 1, ts, NULL);
}

static void body_alloc_into_buffer_refused(void **state)
{
    (void)state;
    model m;
    make_model(&m);
    hbg_orch *o = fx_orch(256, 1 << 20);
    hbg_task_id id;
    assert_int_equal(hbg_submit_graph(o, 7, alloc_into_boundary, NULL, &m.b[0], 0, &id), HBG_E_ARG_HAS_BUFFER);
    assert_int_equal(hbg_submit_graph(o, 8, alloc_tensors_into_boundary, NULL, &m.b[0], 0, &id),
                     HBG_E_ARG_HAS_BUFFER);
    assert_int_equal(m.hid[0].addr, 0x10000);
    assert_int_equal(hbg_orch_def_count(o), 0);
    assert_int_equal(hbg_orch_task_count(o), 0);
    hbg__orch_destroy(o);
}

/* A body of two tasks on its one slot, the second after the first; given
 * the caller's dep, it changes it first. */
static hbg_status two_steps(hbg_orch *o, void *ctx, const hbg_boundary *b)
{
    if (ctx)
        *(hbg_task_id *)ctx = 200;
    hbg_arg a = {b->args[0].t, HBG_INOUT};
    hbg_task_id first;
    hbg_task t = {
        .kernel_aic = HBG_KERNEL_NONE, .kernel_aiv = 1, .core = HBG_CORE_AIV, .blocks = 1, .ntensors = 1, .args = &a};
    hbg_status st = hbg_submit_task(o, &t, &first);
    if (st)
        return st;
    t.ndeps = 1, t.deps = &first;
    return hbg_submit_task(o, &t, NULL);
}

/* A call's deps order its whole body: a replay's outer task takes them,
 * and a call that falls back has no outer task, so its body's tasks take
 * them. In a MANUAL scope they make the only edges: the fallback's first
 * task had none, free to run before the task it was to follow. */
static void a_fallback_orders_its_body_after_its_deps(void **state)
{
    (void)state;
    hbg_orch *o = fx_orch(256, 1 << 20);
    hbg_tensor x = fx_buf(0x10000, 1, H), wide = fx_buf(0x20000, 1, 2 * H);
    hbg_arg w = {&x, HBG_INOUT};
    hbg_task_id before, id;
    assert_int_equal(hbg_scope_begin(o, HBG_SCOPE_MANUAL), HBG_OK);
    assert_int_equal(fx_task(o, 1, &w, &before), HBG_OK);
    hbg_boundary b = {.ntensors = 1, .args = &w, .ndeps = 1, .deps = &before};
    assert_int_equal(hbg_submit_graph(o, 9, two_steps, NULL, &b, 0, &id), HBG_OK);
    assert_true(fx_has_edge(o, before, id));
    hbg_arg other = {&wide, HBG_INOUT};
    hbg_task_id dep = before;
    b.args = &other;
    b.deps = &dep;
    uint32_t n0 = hbg_orch_task_count(o);
    /* the deps as the call passed them, not as the body left them */
    assert_int_equal(hbg_submit_graph(o, 9, two_steps, &dep, &b, HBG_GRAPH_FALLBACK, &id), HBG_OK);
    assert_int_equal(dep, 200);
    assert_int_equal(o->graph->fallbacks, 1);
    assert_int_equal(hbg_orch_task_count(o), n0 + 2);
    assert_true(fx_has_edge(o, before, n0));
    assert_int_equal(fx_fanin_count(o, n0), 1);
    /* the second follows the first, as the body says */
    assert_true(fx_has_edge(o, n0, n0 + 1));
    assert_int_equal(hbg_scope_end(o), HBG_OK);
    hbg__orch_destroy(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(record_once_replay_forty),
        cmocka_unit_test(hash_stable_and_sensitive),
        cmocka_unit_test(pool_full_lists_nothing),
        cmocka_unit_test(kept_definitions_skip_recording),
        cmocka_unit_test(kept_definitions_of_changing_keys_are_dropped),
        cmocka_unit_test(given_places_are_packed),
        cmocka_unit_test(boundary_mismatch_detected),
        cmocka_unit_test(capture_errors),
        cmocka_unit_test(a_body_writes_only_through_written_slots),
        cmocka_unit_test(body_alloc_into_buffer_refused),
        cmocka_unit_test(key_names_one_body),
        cmocka_unit_test(check_body_compares_content),
        cmocka_unit_test(errors_name_slot_node_and_key),
        cmocka_unit_test(body_fails_in_its_own_words),
        cmocka_unit_test(a_fallback_orders_its_body_after_its_deps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
