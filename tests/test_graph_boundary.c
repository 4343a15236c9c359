/* A replay's boundary check, against a reference that checks every slot
 * the long way: validity, direction, layout, and aliasing by comparing each
 * slot with every earlier one (the same first slot on its buffer, at the
 * same distance from it in bytes). Boundaries and their damage are random (a
 * fixed seed), so aliasing patterns, bad ranges and offsets that overflow
 * meet in combinations no hand-written case lists. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "graph/graph_internal.h"
#include "support/orch_fixture.h"

#define NBUF 24
#define BUF_BYTES 4096u

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state % n);
}

static uint64_t buf_addr(uint32_t i)
{
    return 0x10000000ull + (uint64_t)i * 0x10000;
}

static hbg_tensor random_view(void)
{
    hbg_tensor t;
    memset(&t, 0, sizeof t);
    t.addr = buf_addr(rnd(NBUF));
    t.nbytes = BUF_BYTES;
    static const hbg_dtype dts[] = {HBG_F32, HBG_F16, HBG_U8};
    t.dtype = dts[rnd(3)];
    t.ndim = (uint8_t)(1 + rnd(3));
    int64_t s = 1 + rnd(2);
    for (unsigned d = t.ndim; d-- > 0;) {
        t.shape[d] = 1 + rnd(4);
        t.strides[d] = s;
        s *= t.shape[d] + rnd(2);
    }
    t.offset = rnd(16);
    return t;
}

static void damage(hbg_tensor *t, hbg_arg *a)
{
    unsigned d = rnd(t->ndim ? t->ndim : 1);
    switch (rnd(11)) {
    case 0: a->dir = (uint8_t)rnd(HBG_NO_DEP + 1); break;
    case 1: a->t = NULL; break;
    case 2: t->addr = buf_addr(rnd(NBUF)); break;
    case 3: t->shape[d] += 1; break;
    case 4: t->strides[d] += 1 + rnd(3); break;
    case 5: {
        /* the last element's index, just fitting or just not */
        uint64_t span = 0;
        for (unsigned k = 0; k < t->ndim && k < HBG_MAX_DIMS; k++)
            span += (uint64_t)(t->shape[k] - 1) * (uint64_t)t->strides[k];
        uint64_t offs[] = {UINT64_MAX, UINT64_MAX - span, UINT64_MAX - span + 1, UINT64_MAX / 2, BUF_BYTES / 2, 3};
        t->offset = offs[rnd(6)];
        break;
    }
    case 6: t->dtype = rnd(2) ? HBG_DTYPE_COUNT : HBG_I64; break;
    case 7: t->ndim = rnd(2) ? 6 : (uint8_t)(t->ndim + 1); break;
    case 8: /* past ndim nothing counts */
        for (unsigned k = t->ndim; k < HBG_MAX_DIMS; k++)
            t->shape[k] = 7, t->strides[k] = 9;
        break;
    case 9: t->nbytes = rnd(2) ? 1 : 64; break;
    default: t->strides[d] = -1; break;
    }
}

static bool ref_slot_ok(const hbg_arg *a)
{
    uint64_t lo, hi;
    return a->t && (a->dir == HBG_IN || a->dir == HBG_INOUT || a->dir == HBG_OUT) &&
           hbg_tensor_byte_range(a->t, &lo, &hi) && hi <= a->t->nbytes;
}

static uint32_t ref_alias(const hbg_arg *args, uint32_t k)
{
    uint32_t j = 0;
    while (args[j].t->addr != args[k].t->addr)
        j++;
    return j;
}

/* `fixed`: the body wrote through every slot, so slots that share a
 * buffer must lie where they lay from the first on it. */
static hbg_status ref_match(const hbg_arg *rec, const hbg_arg *args, uint32_t n, bool fixed)
{
    for (uint32_t k = 0; k < n; k++) {
        const hbg_tensor *a = args[k].t, *r = rec[k].t;
        if (!ref_slot_ok(&args[k]))
            return HBG_E_INVAL;
        bool same = args[k].dir == rec[k].dir && a->ndim == r->ndim && a->dtype == r->dtype &&
                    ref_alias(args, k) == ref_alias(rec, k);
        for (unsigned d = 0; same && d < a->ndim; d++)
            same = a->shape[d] == r->shape[d] && a->strides[d] == r->strides[d];
        /* a slot sharing an earlier one's buffer lies where it lay from it, in bytes */
        uint32_t j = ref_alias(args, k);
        if (same && fixed && j != k)
            same = a->offset * hbg_dtype_size((hbg_dtype)a->dtype) -
                       args[j].t->offset * hbg_dtype_size((hbg_dtype)args[j].t->dtype) ==
                   r->offset * hbg_dtype_size((hbg_dtype)r->dtype) -
                       rec[j].t->offset * hbg_dtype_size((hbg_dtype)rec[j].t->dtype);
        if (!same)
            return HBG_E_BOUNDARY_MISMATCH;
    }
    return HBG_OK;
}

static hbg_status one_dummy(hbg_orch *o, void *ctx, const hbg_boundary *b)
{
    (void)ctx, (void)b;
    return hbg_submit_dummy(o, 0, NULL, NULL);
}

/* A node writing through each slot's own tensor. */
static hbg_status write_all(hbg_orch *o, void *ctx, const hbg_boundary *b)
{
    (void)ctx;
    hbg_status st = HBG_OK;
    for (uint32_t k = 0; k < b->ntensors && !st; k++) {
        hbg_arg a = {b->args[k].t, HBG_INOUT};
        st = fx_task(o, 1, &a, NULL);
    }
    return st;
}

/* Full-buffer writers before the replay: its fanins must be exactly the
 * writers of the buffers its boundary names. */
static void check_fanins(const hbg_orch *o, uint32_t task, const hbg_arg *args, uint32_t n,
                         const uint32_t *writer)
{
    bool named[NBUF] = {false};
    for (uint32_t k = 0; k < n; k++)
        named[(args[k].t->addr - buf_addr(0)) / 0x10000] = true;
    uint32_t want = 0;
    for (uint32_t i = 0; i < NBUF; i++) {
        if (writer[i] == HBG_TASK_NONE)
            continue;
        assert_int_equal(fx_has_edge(o, writer[i], task), named[i]);
        want += named[i];
    }
    assert_int_equal(fx_fanin_count(o, task), want);
}

static void replay_matches_reference(void **state)
{
    (void)state;
    hbg__orch_config cfg = {.task_window = 256, .heap_base = FAKE_HEAP_BASE, .heap_bytes = 1 << 20,
                           .keep_definitions = true};
    hbg_orch *o;
    assert_int_equal(hbg__graph_orch_create(&cfg, &o), HBG_OK);
    static hbg_tensor rec_t[HBG_MAX_BOUNDARY_TENSORS], t[HBG_MAX_BOUNDARY_TENSORS];
    static hbg_arg rec_a[HBG_MAX_BOUNDARY_TENSORS], a[HBG_MAX_BOUNDARY_TENSORS];
    uint32_t outcomes[3] = {0};
    for (uint64_t key = 1; key <= 40; key++) {
        uint32_t n = key % 4 == 0 ? HBG_MAX_BOUNDARY_TENSORS : 1 + rnd(HBG_MAX_BOUNDARY_TENSORS);
        for (uint32_t k = 0; k < n; k++) {
            rec_t[k] = random_view();
            /* a body writes only through slots passed for writing */
            static const hbg_dir dirs[] = {HBG_IN, HBG_IN, HBG_INOUT, HBG_OUT};
            rec_a[k] = (hbg_arg){&rec_t[k], key % 2 ? dirs[2 + rnd(2)] : dirs[rnd(4)]};
        }
        hbg_boundary b = {.ntensors = n, .args = rec_a};
        /* a body that reads nothing leaves slots on one buffer free to move apart */
        bool fixed = key % 2;
        hbg_graph_body body = fixed ? write_all : one_dummy;
        hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
        assert_int_equal(hbg_submit_graph(o, key, body, NULL, &b, 0, NULL), HBG_OK);
        assert_int_equal(hbg__orch_end_pass(o), HBG_OK);

        for (int v = 0; v < 25; v++) {
            memcpy(t, rec_t, n * sizeof *t);
            for (uint32_t k = 0; k < n; k++)
                a[k] = (hbg_arg){&t[k], rec_a[k].dir};
            for (uint32_t m = rnd(4); m-- > 0;) {
                uint32_t k = rnd(n);
                damage(&t[k], &a[k]);
            }
            hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
            uint32_t writer[NBUF];
            for (uint32_t i = 0; i < NBUF; i++) {
                writer[i] = HBG_TASK_NONE;
                if (rnd(3))
                    continue;
                hbg_tensor w = {.addr = buf_addr(i), .nbytes = BUF_BYTES,
                                .dtype = HBG_U8, .ndim = 1, .shape = {BUF_BYTES}, .strides = {1}};
                hbg_arg wa = {&w, HBG_OUT};
                assert_int_equal(fx_task(o, 1, &wa, &writer[i]), HBG_OK);
            }
            uint32_t ntask = o->img.ntasks, nbt = o->img.nbtensor, nfanin = o->img.nfanin;
            hbg_status want = ref_match(rec_a, a, n, fixed);
            hbg_boundary bv = {.ntensors = n, .args = a};
            hbg_task_id id;
            assert_int_equal(hbg_submit_graph(o, key, body, NULL, &bv, 0, &id), want);
            hbg__orch_end_pass(o);
            outcomes[want == HBG_OK ? 0 : want == HBG_E_INVAL ? 1 : 2]++;
            if (want != HBG_OK) {
                assert_int_equal(o->img.ntasks, ntask);
                assert_int_equal(o->img.nbtensor, nbt);
                assert_int_equal(o->img.nfanin, nfanin);
                continue;
            }
            const hbg_img_btensor *img = &o->img.btensors[o->img.replays[o->img.nreplay - 1].btensor_off];
            for (uint32_t k = 0; k < n; k++) {
                assert_int_equal(img[k].addr, t[k].addr);
                assert_int_equal(img[k].nbytes, t[k].nbytes);
                assert_int_equal(img[k].offset, t[k].offset);
            }
            check_fanins(o, id, a, n, writer);
        }
    }
    /* every outcome was exercised */
    for (int i = 0; i < 3; i++)
        assert_true(outcomes[i] > 20);
    hbg__orch_destroy(o);
}

static hbg_status empty_first_dim(hbg_orch *o, void *ctx, const hbg_boundary *b)
{
    (void)ctx;
    b->args[0].t->shape[0] = 0;
    return hbg_submit_dummy(o, 0, NULL, NULL);
}

/* A body that changes a boundary tensor's layout (here to one no view can
 * have a byte range with) changes nothing the call records: the
 * signature is the boundary as passed. The next call passes the tensor as
 * the body left it, which is invalid in itself; restored, it replays. */
static void body_emptying_a_boundary_tensor(void **state)
{
    (void)state;
    hbg_orch *o = fx_orch(64, 1 << 20);
    hbg_tensor x = fx_buf(0x10000, 4, 4);
    hbg_arg a = {&x, HBG_IN};
    hbg_boundary b = {.ntensors = 1, .args = &a};
    assert_int_equal(hbg_submit_graph(o, 7, empty_first_dim, NULL, &b, 0, NULL), HBG_OK);
    assert_int_equal(x.shape[0], 0);
    assert_int_equal(o->graph->defs[0].sig.slot[0].shape[0], 4);
    assert_int_equal(hbg_submit_graph(o, 7, empty_first_dim, NULL, &b, 0, NULL), HBG_E_INVAL);
    x.shape[0] = 4;
    assert_int_equal(hbg_submit_graph(o, 7, empty_first_dim, NULL, &b, 0, NULL), HBG_OK);
    assert_int_equal(o->img.nreplay, 2);
    hbg__orch_destroy(o);
}

typedef struct two_views {
    hbg_tensor exact, inner;
} two_views;

static hbg_status use_views(hbg_orch *o, void *ctx, const hbg_boundary *b)
{
    (void)b;
    two_views *v = ctx;
    hbg_arg a[] = {{&v->exact, HBG_IN}, {&v->inner, HBG_IN}};
    return fx_task(o, 2, a, NULL);
}

/* Recording finds a boundary tensor among all the slots on its buffer, not
 * only the first: slots 0, 2 and 3 share X. */
static void aliased_slots_recorded(void **state)
{
    (void)state;
    hbg_orch *o = fx_orch(64, 1 << 20);
    hbg_tensor x = fx_buf(0x10000, 4, 8), y = fx_buf(0x20000, 4, 8);
    hbg_tensor s0 = fx_tile(&x, 0, 0, 2, 8), s2 = fx_tile(&x, 2, 0, 1, 8), s3 = fx_tile(&x, 3, 0, 1, 8);
    hbg_arg a[] = {{&s0, HBG_IN}, {&y, HBG_IN}, {&s2, HBG_INOUT}, {&s3, HBG_IN}};
    hbg_boundary b = {.ntensors = 4, .args = a};
    two_views v = {.exact = s3, .inner = fx_tile(&x, 2, 4, 1, 4)};
    assert_int_equal(hbg_submit_graph(o, 7, use_views, &v, &b, 0, NULL), HBG_OK);
    const hbg_def_header *h = hbg__def_image(o, 0);
    const hbg_def_targ *g = (const hbg_def_targ *)((const unsigned char *)h + h->off_targs);
    assert_int_equal(g[0].cls, HBG_TARG_BOUNDARY);
    assert_int_equal(g[0].ref, 3);
    assert_int_equal(g[1].cls, HBG_TARG_BVIEW);
    assert_int_equal(g[1].ref, 2);
    assert_int_equal(g[1].delta, 4);
    hbg__orch_destroy(o);
}

/* How a body names slots on one buffer decides whether a replay may
 * move them apart. `how`: 0 reads each slot's own tensor, 1 reads a copy
 * of each (found by content), 2 writes through each slot's own tensor. */
static hbg_status read_slots(hbg_orch *o, void *ctx, const hbg_boundary *b)
{
    int how = *(const int *)ctx;
    hbg_status st = HBG_OK;
    for (uint32_t k = 0; k < b->ntensors && !st; k++) {
        hbg_tensor copy = *b->args[k].t, out = hbg_tensor_desc(HBG_F32, 1, (uint32_t[]){8});
        hbg_arg a[] = {{how == 1 ? &copy : b->args[k].t, how == 2 ? HBG_INOUT : HBG_IN}, {&out, HBG_OUT_ALLOC}};
        st = fx_task(o, 2, a, NULL);
    }
    return st;
}

/* Slots 0 and 1 are rows 0 and 1 of X at the recording, and rows 2 and
 * 0 at the replay; slot 2 is Y. */
static hbg_status replay_moved(hbg_orch *o, int how, uint64_t key, bool rows_equal)
{
    hbg_tensor x = fx_buf(0x10000, 4, 8), y = fx_buf(0x20000, 4, 8);
    hbg_tensor r0 = fx_tile(&x, 0, 0, 1, 8), r1 = fx_tile(&x, rows_equal ? 0 : 1, 0, 1, 8);
    /* a body writes only through slots passed for writing */
    hbg_dir d = how == 2 ? HBG_INOUT : HBG_IN;
    hbg_arg a[] = {{&r0, d}, {&r1, d}, {&y, d}};
    hbg_boundary b = {.ntensors = 3, .args = a};
    assert_int_equal(hbg_submit_graph(o, key, read_slots, &how, &b, 0, NULL), HBG_OK);
    hbg_tensor m0 = fx_tile(&x, 2, 0, 1, 8), m1 = fx_tile(&x, 0, 0, 1, 8);
    hbg_arg m[] = {{&m0, d}, {&m1, d}, {&y, d}};
    hbg_boundary bm = {.ntensors = 3, .args = m};
    return hbg_submit_graph(o, key, read_slots, &how, &bm, 0, NULL);
}

static void slots_on_one_buffer_move_apart_when_nothing_binds_them(void **state)
{
    (void)state;
    hbg_orch *o = fx_orch(64, 1 << 20);
    /* read through their own tensors: nothing binds them */
    assert_int_equal(replay_moved(o, 0, 1, false), HBG_OK);
    assert_int_equal(replay_moved(o, 0, 2, true), HBG_OK);
    /* read through copies, each in one slot's range alone: no guess */
    assert_int_equal(replay_moved(o, 1, 3, false), HBG_OK);
    /* read through copies of two equal slots: which was meant is a guess */
    assert_int_equal(replay_moved(o, 1, 4, true), HBG_E_BOUNDARY_MISMATCH);
    assert_string_equal(hbg_orch_last_error(o), "task 7 (graph key 0x4) slot 1: starts -64 bytes from slot 0's "
                                                "start in their buffer, the Definition's 0");
    /* written through: the nodes' order among themselves came from where
     * the slots lay (a new pass: a pass reports its first failure) */
    hbg__orch_end_pass(o);
    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    assert_int_equal(replay_moved(o, 2, 5, false), HBG_E_BOUNDARY_MISMATCH);
    assert_string_equal(hbg_orch_last_error(o), "task 1 (graph key 0x5) slot 1: starts -64 bytes from slot 0's "
                                                "start in their buffer, the Definition's 32");
    hbg__orch_destroy(o);
}

/* The node memo answers a node only as it was found: a copy of a slot's
 * tensor, recorded the pass before as the slot's own tensor, is a guess
 * between the two equal slots, and binds them. */
static void a_copy_answered_from_the_memo_still_binds(void **state)
{
    (void)state;
    hbg_orch *o = fx_orch(64, 1 << 20);
    int how = 0;
    hbg_tensor x = fx_buf(0x10000, 4, 8);
    hbg_tensor r0 = fx_tile(&x, 0, 0, 1, 8), r1 = r0, m0 = fx_tile(&x, 2, 0, 1, 8), m1 = r0;
    hbg_arg a[] = {{&r0, HBG_IN}, {&r1, HBG_IN}}, m[] = {{&m0, HBG_IN}, {&m1, HBG_IN}};
    hbg_boundary b = {.ntensors = 2, .args = a}, bm = {.ntensors = 2, .args = m};
    hbg__orch_end_pass(o);
    for (int pass = 0; pass < 4; pass++) {
        /* re-recorded each pass; the fourth records through copies */
        how = pass == 3;
        hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
        uint64_t hits = o->graph->rec.node_hits;
        assert_int_equal(hbg_submit_graph(o, 7, read_slots, &how, &b, 0, NULL), HBG_OK);
        if (pass == 2)
            assert_int_equal(o->graph->rec.node_hits - hits, 2); /* the memo answers by now */
        if (pass >= 2)
            assert_int_equal(hbg_submit_graph(o, 7, read_slots, &how, &bm, 0, NULL),
                             pass < 3 ? HBG_OK : HBG_E_BOUNDARY_MISMATCH);
        hbg__orch_end_pass(o);
    }
    hbg__orch_destroy(o);
}

static void missing_tensor(void **state)
{
    (void)state;
    hbg_orch *o = fx_orch(64, 1 << 20);
    hbg_tensor x = fx_buf(0x10000, 4, 4);
    hbg_arg a[] = {{&x, HBG_IN}, {NULL, HBG_IN}};
    hbg_boundary b = {.ntensors = 2, .args = a};
    assert_int_equal(hbg_submit_graph(o, 7, one_dummy, NULL, &b, 0, NULL), HBG_E_INVAL);
    assert_int_equal(hbg_orch_def_count(o), 0);
    hbg__orch_destroy(o);
}

/* Entries left from 2^32 boundaries ago must not read as current when the
 * stamp wraps around to theirs. */
static void stamp_wraps(void **state)
{
    (void)state;
    hbg_orch *o = fx_orch(64, 1 << 20);
    hbg_tensor x = fx_buf(0x10000, 4, 4), y = fx_buf(0x20000, 4, 4);
    hbg_arg a[] = {{&x, HBG_IN}, {&y, HBG_INOUT}};
    hbg_boundary b = {.ntensors = 2, .args = a};
    assert_int_equal(hbg_submit_graph(o, 7, one_dummy, NULL, &b, 0, NULL), HBG_OK);
    o->graph->rec.bstamp = UINT32_MAX;
    for (uint32_t i = 0; i < HBG_BTAB_SIZE; i += 2)
        o->graph->rec.btab[i] = (hbg__btab_ent){.addr = x.addr, .stamp = 1};
    assert_int_equal(hbg_submit_graph(o, 7, one_dummy, NULL, &b, 0, NULL), HBG_OK);
    assert_int_equal(o->graph->rec.bstamp, 1);
    y.addr = x.addr;
    assert_int_equal(hbg_submit_graph(o, 7, one_dummy, NULL, &b, 0, NULL), HBG_E_BOUNDARY_MISMATCH);
    hbg__orch_destroy(o);
}

/* Replays of a wide boundary fill the pools sized per task: the boundary
 * image (128 slots a task) and the written-tensor copies (32 a task, and a
 * replay may write 128). Both are named errors that leave the pass as it
 * was, never a write past a pool. */
static void wide_replays_exhaust_pools(void **state)
{
    (void)state;
    enum { WINDOW = 8 };
    hbg__orch_config cfg = {.task_window = WINDOW, .heap_base = FAKE_HEAP_BASE, .heap_bytes = 1 << 20};
    hbg_orch *o;
    assert_int_equal(hbg__graph_orch_create(&cfg, &o), HBG_OK);
    static hbg_tensor t[HBG_MAX_BOUNDARY_TENSORS];
    static hbg_arg a[HBG_MAX_BOUNDARY_TENSORS];
    for (int pass = 0; pass < 2; pass++) {
        /* pass 0: every slot read (the image fills first); pass 1: every
         * slot written (the tensor copies fill first) */
        /* 16 buffers of 8 disjoint views each: the tensor map (4 buffers
         * a task) is not what fills */
        for (uint32_t k = 0; k < HBG_MAX_BOUNDARY_TENSORS; k++) {
            t[k] = (hbg_tensor){.addr = 0x20000000ull + (uint64_t)(k % 16) * 0x1000, .nbytes = 4096,
                                .offset = (k / 16) * 64, .dtype = HBG_U8, .ndim = 1, .shape = {64},
                                .strides = {1}};
            a[k] = (hbg_arg){&t[k], pass ? HBG_INOUT : HBG_IN};
        }
        hbg_boundary b = {.ntensors = HBG_MAX_BOUNDARY_TENSORS, .args = a};
        hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
        hbg_status st = HBG_OK;
        uint32_t ok = 0;
        while (st == HBG_OK && ok < 4 * WINDOW) {
            uint32_t ntask = o->img.ntasks, nbt = o->img.nbtensor, nt = o->img.ntensor;
            st = hbg_submit_graph(o, 7 + (uint64_t)pass, one_dummy, NULL, &b, 0, NULL);
            if (st == HBG_OK) {
                ok++;
                continue;
            }
            assert_int_equal(o->img.ntasks, ntask);
            assert_int_equal(o->img.nbtensor, nbt);
            assert_int_equal(o->img.ntensor, nt);
        }
        assert_true(o->img.nbtensor <= (size_t)WINDOW * HBG_MAX_BOUNDARY_TENSORS);
        assert_true(o->img.ntensor <= (size_t)WINDOW * HBG_MAX_TASK_TENSORS);
        if (pass == 0) {
            /* one task records the body, then a replay per free task */
            assert_int_equal(st, HBG_E_WINDOW_FULL);
        } else {
            /* 128 copies a replay: the third finds the copies (WINDOW * 32)
             * full while tasks are still free */
            assert_int_equal(st, HBG_E_POOL_EXHAUSTED);
            assert_string_equal(hbg_orch_last_error(o),
                                "task 2 (graph key 0x8): the tensor map's 256 copies of written tensors are all taken");
            assert_int_equal(ok, 2);
            assert_true(o->img.ntasks < WINDOW);
        }
        hbg__orch_end_pass(o);
    }
    hbg__orch_destroy(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(replay_matches_reference),
        cmocka_unit_test(body_emptying_a_boundary_tensor),
        cmocka_unit_test(stamp_wraps),
        cmocka_unit_test(missing_tensor),
        cmocka_unit_test(aliased_slots_recorded),
        cmocka_unit_test(slots_on_one_buffer_move_apart_when_nothing_binds_them),
        cmocka_unit_test(a_copy_answered_from_the_memo_still_binds),
        cmocka_unit_test(wide_replays_exhaust_pools),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
