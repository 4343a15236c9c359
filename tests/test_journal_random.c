/* The journal and the compared Definition rebuild under programs no case
 * makes: random programs on an orchestrator with the journal and one
 * without, and two regressions found by review (a Definition hash trusted
 * for a place another build had rewritten; a recorded node refused after
 * one of its writes). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "graph/graph_internal.h"
#include "util/hash.h"
#include "support/orch_fixture.h"


static uint64_t rs;
static uint64_t rnd(void)
{
    rs ^= rs << 13, rs ^= rs >> 7, rs ^= rs << 17;
    return rs;
}

#define NB 6
static hbg_tensor bufs[NB];
typedef struct op { int kind; hbg_tensor v[3]; uint8_t dir[3]; int n; uint64_t key; int body; } op;
static op prog[400];
static int nprog;

static hbg_tensor rtile(void)
{
    const hbg_tensor *b = &bufs[rnd() % NB];
    uint32_t r0 = rnd() % 16, c0 = rnd() % 16;
    uint32_t rows = 1 + rnd() % (16 - r0), cols = 1 + rnd() % (16 - c0);
    if (rnd() % 3 == 0) c0 = 0, cols = 16;
    return fx_tile(b, r0, c0, rows, cols);
}

typedef struct bctx { int body; } bctx;
static hbg_status random_body(hbg_orch *o, void *vctx, const hbg_boundary *b)
{
    bctx *c = vctx;
    uint32_t sh[2] = {1, 8};
    for (int i = 0; i < 2 + c->body; i++) {
        hbg_tensor tmp = hbg_tensor_desc(HBG_F32, 2, sh);
        uint32_t half[2] = {2, 4};
        hbg_tensor sv = hbg_tensor_view(b->args[1].t, b->args[1].t->offset + (uint64_t)(i % 3) * 4, 2, half,
                                        b->args[1].t->strides);
        hbg_arg a[] = {{b->args[0].t, HBG_IN}, {&sv, (i + c->body) % 2 ? HBG_INOUT : HBG_IN}, {&tmp, HBG_OUT_ALLOC}};
        hbg_task t = {.kernel_aic = HBG_KERNEL_NONE, .kernel_aiv = (uint16_t)(1 + c->body), .core = HBG_CORE_AIV,
                      .blocks = 1, .ntensors = 3, .args = a};
        hbg_task_id id;
        hbg_submit_task(o, &t, &id);
    }
    return HBG_OK;
}

static void gen(void)
{
    nprog = 20 + rnd() % 200;
    for (int i = 0; i < nprog; i++) {
        op *p = &prog[i];
        memset(p, 0, sizeof *p);
        if (rnd() % 4 == 0) {
            p->kind = 1;
            p->body = rnd() % 4;
            p->key = 1000 + p->body;
            p->v[0] = rtile();
            p->v[1] = fx_tile(&bufs[rnd() % NB], rnd() % 8, 0, 8, 16);
            p->n = 2;
        } else {
            p->n = 1 + rnd() % 3;
            for (int k = 0; k < p->n; k++) {
                p->v[k] = rtile();
                p->dir[k] = rnd() % 3 == 0 ? HBG_IN : (rnd() % 2 ? HBG_INOUT : HBG_OUT);
            }
        }
    }
}

static hbg_status run_program(hbg_orch *o)
{
    hbg_status first = HBG_OK;
    for (int i = 0; i < nprog; i++) {
        op *p = &prog[i];
        hbg_task_id id;
        hbg_status st;
        if (p->kind == 1) {
            hbg_arg a[2] = {{&p->v[0], HBG_IN}, {&p->v[1], HBG_INOUT}};
            hbg_boundary b = {.ntensors = 2, .args = a};
            bctx c = {p->body};
            st = hbg_submit_graph(o, p->key, random_body, &c, &b, HBG_GRAPH_FALLBACK | (rnd() % 4 == 0 ? HBG_GRAPH_CHECK_BODY : 0), &id);
        } else {
            hbg_arg a[3];
            for (int k = 0; k < p->n; k++) a[k] = (hbg_arg){&p->v[k], p->dir[k]};
            st = fx_task(o, p->n, a, &id);
        }
        if (!first) first = st;
    }
    return first;
}

static void check_hashes(hbg_orch *o)
{
    static unsigned char tmp[1 << 22];
    for (uint32_t i = 0; i < o->graph->ndefs; i++) {
        const hbg_def_header *h = o->graph->defs[i].img;
        memcpy(tmp, h, h->bytes);
        memset(tmp + offsetof(hbg_def_header, hash), 0, 8);
        assert_int_equal(h->hash, hbg__image_hash(tmp, h->bytes));
    }
}

#define SAME_SECTION(f, n) assert_memory_equal(a->img.f, b->img.f, (size_t)(n) * sizeof *a->img.f)
/* Random programs of tasks and Graph calls (four bodies, fallback and
 * check-body at random, windows that fill, fanin limits), changed between
 * some passes, re-recorded and kept, on two orchestrators, one with the
 * journal: every status and image section the same, every Definition's
 * hash that of its bytes. */
static void random_programs_with_and_without(void **state)
{
    (void)state;
    int nf = 0, nerr = 0, nrf = 0, npass = 0;
    for (int i = 0; i < NB; i++) bufs[i] = fx_buf(0x100000ull * (i + 1), 16, 16);
    for (int keep = 0; keep < 2; keep++)
    for (int seed = 1; seed < 60; seed++) {
        rs = 0x9e3779b97f4a7c15ull * seed;
        hbg__orch_config cfg = {.task_window = 64 + (seed % 3) * 100, .heap_base = FAKE_HEAP_BASE, .heap_bytes = 1 << 22,
                                .keep_definitions = keep};
        hbg_orch *a, *b;
        assert_int_equal(hbg__graph_orch_create(&cfg, &a), HBG_OK);
        cfg.no_journal = true;
        assert_int_equal(hbg__graph_orch_create(&cfg, &b), HBG_OK);
        gen();
        for (int pass = 0; pass < 8; pass++) {
            if (rnd() % 3 == 0) gen();
            uint64_t s0 = rs;
            hbg__orch_begin_pass(a, FAKE_HEAP_BASE, NULL, 0);
            hbg_status sa = run_program(a);
            hbg_status ea = hbg__orch_end_pass(a);
            rs = s0;
            hbg__orch_begin_pass(b, FAKE_HEAP_BASE, NULL, 0);
            hbg_status sb = run_program(b);
            hbg_status eb = hbg__orch_end_pass(b);
            assert_int_equal(sa, sb);
            assert_int_equal(ea, eb);
            assert_int_equal(a->img.ntasks, b->img.ntasks);
            assert_int_equal(a->img.nfanin, b->img.nfanin);
            SAME_SECTION(tasks, a->img.ntasks);
            SAME_SECTION(fanins, a->img.nfanin);
            SAME_SECTION(tensors, a->img.ntensor);
            SAME_SECTION(replays, a->img.nreplay);
            SAME_SECTION(btensors, a->img.nbtensor);
            check_hashes(a);
            nf += a->map.j.following; nerr += sa != 0; nrf += a->graph->rec.map.j.following; npass++;
            check_hashes(b);
        }
        hbg__orch_destroy(a);
        hbg__orch_destroy(b);
    }
    /* the journals were followed, and failing passes were among them */
    assert_true(nf > npass / 4 && nrf > 0 && nerr > 0);
}



static hbg_status dummies_body(hbg_orch *o, void *ctx, const hbg_boundary *b)
{
    (void)b;
    uint32_t k = *(uint32_t *)ctx;
    for (uint32_t i = 0; i < k; i++) {
        hbg_task_id id;
        hbg_status st = hbg_submit_dummy(o, 0, NULL, &id);
        if (st) return st;
    }
    return HBG_OK;
}

static uint64_t dbytes(uint32_t k)
{
#define A8(x) (((x) + 7) & ~(uint64_t)7)
    return A8(sizeof(hbg_def_header)) + A8((uint64_t)k * sizeof(hbg_def_node)) + A8(sizeof(hbg_tensor));
}
static uint64_t a64(uint64_t x) { return (x + 63) & ~63ull; }

static hbg_tensor one_buf;
static hbg_arg one_arg;
static hbg_boundary one_bnd;

static uint64_t record_checked(hbg_orch *o, uint64_t key, uint32_t k)
{
    hbg_task_id id;
    assert_int_equal(hbg_submit_graph(o, key, dummies_body, &k, &one_bnd, 0, &id), HBG_OK);
    hbg__def_entry *e = NULL;
    for (uint32_t i = 0; i < o->graph->ndefs; i++)
        if (o->graph->defs[i].key == key) e = &o->graph->defs[i];
    assert_non_null(e);
    assert_int_equal(e->img->bytes, dbytes(k));
    /* the hash the image carries must be that of its bytes (hash zeroed) */
    static unsigned char tmp[1 << 20];
    memcpy(tmp, e->img, e->img->bytes);
    memset(tmp + offsetof(hbg_def_header, hash), 0, 8);
    uint64_t want = hbg__image_hash(tmp, e->img->bytes);
    assert_int_equal(e->img->hash, want);
    return e->img->hash;
}

/* built[n] must not vouch for a place a later pass's other build has
 * written: pass 1 builds keys 1, 2, 100 (100 third), pass 2 builds 3 and
 * 200 (200 second, at the place where 100 was), pass 3 builds 1, 2, 200
 * (200 third, where its own bytes lie): its hash must be its own, not
 * 100's, or the device would run 100's Definition for it. */
static void a_place_rewritten_by_another_build_is_not_trusted(void **state)
{
    (void)state;
    one_buf = fx_buf(0x10000, 1, 8);
    one_arg = (hbg_arg){&one_buf, HBG_IN};
    one_bnd = (hbg_boundary){.ntensors = 1, .args = &one_arg};
    /* find ka, kc: 2 * a64(bytes(ka)) == a64(bytes(kc)) */
    uint32_t ka = 0, kc = 0;
    for (uint32_t a = 1; a < 64 && !ka; a++)
        for (uint32_t c = 1; c < 256 && !ka; c++)
            if (2 * a64(dbytes(a)) == a64(dbytes(c)))
                ka = a, kc = c;
    assert_true(ka);
    uint32_t kb = 3;
    hbg_orch *o = fx_orch(256, 1 << 20);
    /* pass 1: A1, A2, B (B is build 2 at 2*a64(A)) */
    record_checked(o, 1, ka); record_checked(o, 2, ka); record_checked(o, 100, kb);
    assert_int_equal(hbg__orch_end_pass(o), HBG_OK);
    /* pass 2: C, E (E is build 1, at the same offset) */
    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    record_checked(o, 3, kc); record_checked(o, 200, kb);
    assert_int_equal(hbg__orch_end_pass(o), HBG_OK);
    /* pass 3: A1, A2, E: E is build 2 again, where E's bytes lie */
    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    record_checked(o, 1, ka); record_checked(o, 2, ka); record_checked(o, 200, kb);
    assert_int_equal(hbg__orch_end_pass(o), HBG_OK);
    hbg__orch_destroy(o);
}



static uint32_t qnode;
static hbg_status aiv_task(hbg_orch *o, uint32_t n, hbg_arg *a, hbg_task_id *id)
{
    hbg_task t = {.kernel_aic = HBG_KERNEL_NONE, .kernel_aiv = 1, .core = HBG_CORE_AIV, .blocks = 1, .ntensors = n, .args = a};
    return hbg_submit_task(o, &t, id);
}
static hbg_status rollback_body(hbg_orch *o, void *ctx, const hbg_boundary *b)
{
    (void)ctx;
    const hbg_tensor *M = b->args[0].t, *P = b->args[1].t;
    hbg_task_id id;
    hbg_tensor t0 = fx_tile(M, 0, 0, 16, 8), p0 = fx_tile(P, 0, 0, 16, 8);
    hbg_arg a0[] = {{&t0, HBG_INOUT}, {&p0, HBG_INOUT}};
    aiv_task(o, 2, a0, &id);
    uint32_t sh[1] = {4};
    hbg_tensor d[32];
    hbg_arg fa[32];
    for (int node = 0; node < 256; node++) {
        uint32_t n = node < 255 ? 32 : 30;
        for (uint32_t i = 0; i < n; i++) {
            d[i] = hbg_tensor_desc(HBG_F32, 1, sh);
            fa[i] = (hbg_arg){&d[i], HBG_OUT_ALLOC};
        }
        assert_int_equal(aiv_task(o, n, fa, &id), HBG_OK);
    }
    /* F: its first write is made, its second refused: the node is taken back */
    hbg_tensor t1 = fx_tile(M, 0, 8, 16, 8), x = hbg_tensor_desc(HBG_F32, 1, sh);
    hbg_arg af[] = {{&t1, HBG_INOUT}, {&x, HBG_OUT_ALLOC}};
    assert_int_equal(aiv_task(o, 2, af, &id), HBG_E_POOL_EXHAUSTED);
    /* G: same node id, same views[] slot */
    hbg_tensor p1 = fx_tile(P, 0, 8, 16, 8);
    hbg_arg ag[] = {{&p1, HBG_INOUT}};
    assert_int_equal(aiv_task(o, 1, ag, &id), HBG_OK);
    /* Q: bytes meet T1's, elements do not */
    hbg_tensor q = fx_tile(M, 1, 0, 15, 8);
    hbg_arg aq[] = {{&q, HBG_IN}};
    assert_int_equal(aiv_task(o, 1, aq, &id), HBG_OK);
    qnode = id & ~HBG_NODE_ID_BIT;
    return HBG_OK;
}

/* A recorded node refused for room in the recorder's map after its first
 * write used to leave that write's entry behind, naming the id the next
 * node takes and pointing at a view the next node overwrites; a read
 * then met a different view with the journal (its own copy) than
 * without. Now the node's writes fit or none is made: the same fanins
 * either way, and no phantom writer. */
static void a_refused_node_leaves_no_write(void **state)
{
    (void)state;
    hbg_tensor M = fx_buf(0x100000, 16, 16), Pb = fx_buf(0x200000, 16, 32);
    hbg_tensor P = fx_tile(&Pb, 0, 0, 16, 16);
    hbg_arg ba[] = {{&M, HBG_INOUT}, {&P, HBG_INOUT}};
    hbg_boundary b = {.ntensors = 2, .args = ba};
    hbg__orch_config cfg = {.task_window = 64, .heap_base = FAKE_HEAP_BASE, .heap_bytes = 1 << 24};
    hbg_orch *o[2];
    assert_int_equal(hbg__graph_orch_create(&cfg, &o[0]), HBG_OK);
    cfg.no_journal = true;
    assert_int_equal(hbg__graph_orch_create(&cfg, &o[1]), HBG_OK);
    for (int pass = 0; pass < 2; pass++) {
        uint32_t fc[2];
        for (int k = 0; k < 2; k++) {
            hbg__orch_begin_pass(o[k], FAKE_HEAP_BASE, NULL, 0);
            hbg_task_id id;
            hbg_status st = hbg_submit_graph(o[k], 7, rollback_body, NULL, &b, 0, &id);
            hbg__orch_end_pass(o[k]);
            fc[k] = o[k]->graph->rec.nodes[qnode].fanin_cnt;
            assert_int_equal(st, HBG_E_POOL_EXHAUSTED); /* the body's own failure, F */
        }
        assert_int_equal(fc[0], fc[1]);
    }
    hbg__orch_destroy(o[0]);
    hbg__orch_destroy(o[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_programs_with_and_without),
        cmocka_unit_test(a_place_rewritten_by_another_build_is_not_trusted),
        cmocka_unit_test(a_refused_node_leaves_no_write),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
