/* The task memo (src/orch/taskmemo.h): a submit that repeats the last
 * pass's at the same slot, in the same state, is answered from the image
 * the last pass left. Against an orchestrator without a journal (so
 * without a memo), the same calls must give the same statuses, the same
 * image bytes in every section, the same heap and the same buffers handed
 * back to the caller; and the memo must actually answer, and stop
 * answering where the state it relies on is gone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "orch/taskmemo.h"
#include "support/orch_fixture.h"

static uint64_t rs;
static uint64_t rnd(void)
{
    rs ^= rs << 13, rs ^= rs >> 7, rs ^= rs << 17;
    return rs;
}

#define NB     5
#define MAXOPS 160
static hbg_tensor bufs[NB];

/* One call of a program. kind 0: a kernel task; 1: alloc_tensors; 2: a
 * dummy; 3: a kernel task in a MANUAL scope of its own. */
typedef struct op {
    int kind;
    int n;           /* tensor arguments */
    hbg_tensor v[4]; /* views, or descriptions for HBG_OUT_ALLOC */
    uint8_t dir[4];
    int nsc;
    uint64_t sc[3];
    int16_t slot[3]; /* -1, or 0 to make the submit refused */
    int ndeps;
    int dep[3]; /* earlier ops, by index (their ids this pass) */
    int pred;   /* a predicate on v[3] */
    uint64_t pval;
} op;

static op prog[MAXOPS];
static int nprog;

static hbg_tensor rtile(void)
{
    const hbg_tensor *b = &bufs[rnd() % NB];
    uint32_t r0 = rnd() % 8, c0 = rnd() % 8;
    return fx_tile(b, r0, c0, 1 + rnd() % (8 - r0), 1 + rnd() % (8 - c0));
}

static void gen_op(op *p, int i)
{
    memset(p, 0, sizeof *p);
    int r = (int)(rnd() % 20);
    p->kind = r < 15 ? 0 : r < 17 ? 1 : r < 18 ? 2 : 3;
    p->n = 1 + (int)(rnd() % 3);
    for (int k = 0; k < p->n; k++) {
        int d = (int)(rnd() % 5);
        if (p->kind == 1 || d == 4) {
            uint32_t sh[2] = {1 + (uint32_t)(rnd() % 4), 8};
            p->v[k] = hbg_tensor_desc(HBG_F32, 2, sh);
            p->dir[k] = HBG_OUT_ALLOC;
        } else {
            p->v[k] = rtile();
            p->dir[k] = d == 0 ? HBG_IN : d == 1 ? HBG_INOUT : d == 2 ? HBG_OUT : HBG_NO_DEP;
        }
    }
    p->nsc = (int)(rnd() % 4);
    for (int k = 0; k < p->nsc; k++)
        p->sc[k] = rnd() % 3, p->slot[k] = rnd() % 400 == 0 ? 0 : -1;
    p->ndeps = i ? (int)(rnd() % 3) : 0;
    for (int k = 0; k < p->ndeps; k++)
        p->dep[k] = (int)(rnd() % (uint64_t)i);
    if (p->ndeps == 2 && rnd() % 4 == 0)
        p->dep[1] = p->dep[0]; /* a repeated dependency */
    p->pred = rnd() % 5 == 0;
    p->v[3] = fx_tile(&bufs[rnd() % NB], 0, (uint32_t)(rnd() % 8), 1, 1);
    p->pval = rnd() % 2;
    /* now and then a view past its buffer: refused, rolls the image back */
    if (p->kind == 0 && rnd() % 300 == 0)
        p->v[0].offset = 1000;
}

static void gen(void)
{
    nprog = 10 + (int)(rnd() % (MAXOPS - 10));
    for (int i = 0; i < nprog; i++)
        gen_op(&prog[i], i);
}

/* Small changes between passes: a scalar, a predicate's value, a view, or
 * an op replaced. */
static void mutate(void)
{
    int n = 1 + (int)(rnd() % 3);
    for (int m = 0; m < n; m++) {
        int i = (int)(rnd() % (uint64_t)nprog);
        op *p = &prog[i];
        switch (rnd() % 4) {
        case 0:
            if (p->nsc)
                p->sc[0]++;
            break;
        case 1:
            p->pval ^= 1;
            break;
        case 2:
            if (p->dir[0] != HBG_OUT_ALLOC)
                p->v[0] = rtile();
            break;
        default:
            gen_op(p, i);
        }
    }
}

/* Runs the program; out[] receives the allocating arguments as the
 * orchestrator left them. */
static hbg_status run(hbg_orch *o, hbg_tensor out[][4])
{
    hbg_status first = HBG_OK;
    hbg_task_id ids[MAXOPS];
    for (int i = 0; i < nprog; i++) {
        op *p = &prog[i];
        hbg_tensor *v = out[i];
        memcpy(v, p->v, sizeof p->v);
        hbg_task_id deps[3];
        for (int k = 0; k < p->ndeps; k++)
            deps[k] = ids[p->dep[k]] == HBG_TASK_NONE ? 0 : ids[p->dep[k]];
        hbg_status st = HBG_OK;
        ids[i] = HBG_TASK_NONE;
        if (p->kind == 0 || p->kind == 3) {
            hbg_arg a[3];
            for (int k = 0; k < p->n; k++)
                a[k] = (hbg_arg){&v[k], p->dir[k]};
            hbg_pred pr = {.t = &v[3], .byte_offset = 0, .value = p->pval, .op = HBG_CMP_EQ, .elem_size = 4};
            hbg_task t = {.kernel_aic = HBG_KERNEL_NONE,
                          .kernel_aiv = 1,
                          .core = HBG_CORE_AIV,
                          .blocks = 1,
                          .ntensors = (uint32_t)p->n,
                          .args = a,
                          .nscalars = (uint32_t)p->nsc,
                          .scalars = p->sc,
                          .scalar_slots = p->slot,
                          .ndeps = (uint32_t)p->ndeps,
                          .deps = deps,
                          .pred = p->pred ? &pr : NULL};
            if (p->kind == 3)
                st = hbg_scope_begin(o, HBG_SCOPE_MANUAL);
            hbg_status s2 = hbg_submit_task(o, &t, &ids[i]);
            if (!st)
                st = s2;
            if (p->kind == 3 && (s2 = hbg_scope_end(o)) && !st)
                st = s2;
        } else if (p->kind == 1) {
            hbg_tensor *ts[3] = {&v[0], &v[1], &v[2]};
            st = hbg_alloc_tensors(o, (uint32_t)p->n, ts, &ids[i]);
        } else {
            st = hbg_submit_dummy(o, (uint32_t)p->ndeps, deps, &ids[i]);
        }
        if (!first)
            first = st;
    }
    return first;
}


static hbg_tensor outa[MAXOPS][4], outb[MAXOPS][4];

/* Random programs, changed a little between most passes and now and then
 * replaced, the heap moved now and then, some passes refusing submits
 * (scalar slots outside a body, views past their buffers, a full window or
 * heap): the two orchestrators agree on everything the
 * caller and the device see. */
static void random_programs_with_and_without(void **state)
{
    (void)state;
    uint64_t hits = 0, passes = 0, failed = 0;
    for (int i = 0; i < NB; i++)
        bufs[i] = fx_buf(0x100000ull * (i + 1), 8, 8);
    for (int seed = 1; seed < 120; seed++) {
        rs = 0x9e3779b97f4a7c15ull * (uint64_t)seed;
        hbg__orch_config cfg = {.task_window = 40 + (uint32_t)(seed % 4) * 60,
                                .heap_base = FAKE_HEAP_BASE,
                                .heap_bytes = seed % 5 == 0 ? 16384 : 1 << 22};
        hbg_orch *a, *b;
        assert_int_equal(hbg__graph_orch_create(&cfg, &a), HBG_OK);
        cfg.no_journal = true;
        assert_int_equal(hbg__graph_orch_create(&cfg, &b), HBG_OK);
        assert_non_null(a->memo);
        assert_null(b->memo);
        gen();
        uint64_t base = FAKE_HEAP_BASE;
        for (int pass = 0; pass < 10; pass++) {
            uint64_t r = rnd() % 8;
            if (r == 0)
                gen();
            else if (r < 4)
                mutate();
            if (rnd() % 10 == 0)
                base += 0x10000;
            hbg__orch_begin_pass(a, base, NULL, 0);
            hbg_status sa = run(a, outa);
            hbg_status ea = hbg__orch_end_pass(a);
            hbg__orch_begin_pass(b, base, NULL, 0);
            hbg_status sb = run(b, outb);
            hbg_status eb = hbg__orch_end_pass(b);
            assert_int_equal(sa, sb);
            assert_int_equal(ea, eb);
            fx_same_images(a, b);
            assert_memory_equal(outa, outb, (size_t)nprog * sizeof outa[0]);
            passes++;
            failed += ea != HBG_OK;
        }
        hits += a->memo_hits;
        assert_int_equal(b->memo_hits, 0);
        hbg__orch_destroy(a);
        hbg__orch_destroy(b);
    }
    print_message("memo: %llu hits over %llu passes, %llu failed\n", (unsigned long long)hits,
                  (unsigned long long)passes, (unsigned long long)failed);
    /* the memo answered a good share, and failing passes were among them */
    assert_true(hits > passes * 10);
    assert_true(failed > 0);
}

/* ---- exact cases ---------------------------------------------------------- */

static hbg_orch *o;
static hbg_tensor w, x, y;
static uint64_t scal[2];
static hbg_tensor outs[4];

static hbg_status layer(int bad_at)
{
    hbg_status first = HBG_OK;
    for (int i = 0; i < 4; i++) {
        uint32_t sh[2] = {2, 8};
        outs[i] = hbg_tensor_desc(HBG_F32, 2, sh);
        hbg_tensor xv = fx_tile(&x, (uint32_t)i * 2, 0, 2, 8);
        if (i == bad_at)
            xv.offset = 4096; /* past the buffer: refused */
        hbg_arg a[] = {{&w, HBG_IN}, {&xv, HBG_INOUT}, {&outs[i], HBG_OUT_ALLOC}};
        hbg_task t = {.kernel_aic = HBG_KERNEL_NONE,
                      .kernel_aiv = 1,
                      .core = HBG_CORE_AIV,
                      .blocks = 1,
                      .ntensors = 3,
                      .args = a,
                      .nscalars = 2,
                      .scalars = scal};
        hbg_task_id id;
        hbg_status st = hbg_submit_task(o, &t, &id);
        if (!first)
            first = st;
    }
    return first;
}

static void pass_at(uint64_t base, int bad_at)
{
    hbg__orch_begin_pass(o, base, NULL, 0);
    layer(bad_at);
    hbg__orch_end_pass(o);
}

static int setup(void **state)
{
    (void)state;
    hbg__orch_config cfg = {.task_window = 64, .heap_base = FAKE_HEAP_BASE, .heap_bytes = 1 << 20};
    assert_int_equal(hbg__graph_orch_create(&cfg, &o), HBG_OK);
    w = fx_buf(0x10000, 8, 8);
    x = fx_buf(0x20000, 8, 8);
    y = fx_buf(0x30000, 8, 8);
    scal[0] = 7, scal[1] = 9;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    hbg__orch_destroy(o);
    return 0;
}

/* The first pass makes no journal and the second writes it, so the third
 * is the first the memo answers; it then answers every repeat, and the
 * allocating argument gets the buffer it got before. */
static void a_repeated_pass_is_answered_from_the_memo(void **state)
{
    (void)state;
    pass_at(FAKE_HEAP_BASE, -1);
    pass_at(FAKE_HEAP_BASE, -1);
    assert_int_equal(o->memo_hits, 0);
    hbg_tensor before = outs[3];
    pass_at(FAKE_HEAP_BASE, -1);
    assert_int_equal(o->memo_hits, 4);
    assert_memory_equal(&outs[3], &before, sizeof before);
    assert_int_equal(outs[3].creator, 4);
    pass_at(FAKE_HEAP_BASE, -1);
    assert_int_equal(o->memo_hits, 8);
}

/* A changed scalar misses its own task only: the map's calls are the same,
 * so the journal still follows and the next task hits. */
static void a_changed_scalar_misses_only_its_task(void **state)
{
    (void)state;
    for (int i = 0; i < 3; i++)
        pass_at(FAKE_HEAP_BASE, -1);
    uint64_t h = o->memo_hits;
    scal[1] = 10;
    pass_at(FAKE_HEAP_BASE, -1);
    /* every task has the scalar: all miss, and write the new value */
    assert_int_equal(o->memo_hits, h);
    assert_int_equal(o->img.scalars[o->img.nscalar - 1], 10);
    pass_at(FAKE_HEAP_BASE, -1);
    assert_int_equal(o->memo_hits, h + 4);
}

/* A refused submit rolls the image back, having maybe written past the
 * live counts over the last pass's records: nothing after it in the pass
 * is answered from them. */
static void a_refused_submit_ends_the_memo_for_its_pass(void **state)
{
    (void)state;
    for (int i = 0; i < 3; i++)
        pass_at(FAKE_HEAP_BASE, -1);
    uint64_t h = o->memo_hits;
    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    assert_int_equal(layer(1), HBG_E_INVAL);
    hbg__orch_end_pass(o);
    assert_int_equal(o->memo_hits, h + 1); /* task 0 only */
    /* the failed pass is forgotten as a whole */
    pass_at(FAKE_HEAP_BASE, -1);
    assert_int_equal(o->memo_hits, h + 1);
    pass_at(FAKE_HEAP_BASE, -1);
    assert_int_equal(o->memo_hits, h + 5);
}

/* A heap at another address gives the allocations other addresses. */
static void a_moved_heap_forgets_the_memo(void **state)
{
    (void)state;
    for (int i = 0; i < 3; i++)
        pass_at(FAKE_HEAP_BASE, -1);
    uint64_t h = o->memo_hits;
    pass_at(FAKE_HEAP_BASE + 0x100000, -1);
    assert_int_equal(o->memo_hits, h);
    assert_true(outs[0].addr >= FAKE_HEAP_BASE + 0x100000);
    pass_at(FAKE_HEAP_BASE + 0x100000, -1);
    assert_int_equal(o->memo_hits, h + 4);
    hbg__memo_forget(o);
    pass_at(FAKE_HEAP_BASE + 0x100000, -1);
    assert_int_equal(o->memo_hits, h + 4);
}

/* alloc_tensors makes no map calls: its record depends on the heap's fill
 * only, so the second pass (the journal's first) already answers it. */
static void an_allocation_is_answered_from_the_second_pass(void **state)
{
    (void)state;
    uint64_t addr[3] = {0};
    for (int pass = 0; pass < 3; pass++) {
        hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
        uint32_t sh[2] = {4, 8};
        hbg_tensor a = hbg_tensor_desc(HBG_F32, 2, sh), b = hbg_tensor_desc(HBG_I8, 2, sh);
        hbg_tensor *ts[] = {&a, &b};
        hbg_task_id id;
        assert_int_equal(hbg_alloc_tensors(o, 2, ts, &id), HBG_OK);
        assert_int_equal(id, 0);
        assert_int_equal(hbg__orch_end_pass(o), HBG_OK);
        assert_int_equal(o->memo_hits, (uint64_t)pass);
        addr[pass] = b.addr;
        assert_int_equal(b.creator, 1);
        assert_int_equal(b.nbytes, 32);
        assert_int_equal(o->heap_used, 128 + 32);
    }
    assert_int_equal(addr[0], FAKE_HEAP_BASE + 128);
    assert_int_equal(addr[1], addr[0]);
    assert_int_equal(addr[2], addr[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_programs_with_and_without),
        cmocka_unit_test_setup_teardown(a_repeated_pass_is_answered_from_the_memo, setup, teardown),
        cmocka_unit_test_setup_teardown(a_changed_scalar_misses_only_its_task, setup, teardown),
        cmocka_unit_test_setup_teardown(a_refused_submit_ends_the_memo_for_its_pass, setup, teardown),
        cmocka_unit_test_setup_teardown(a_moved_heap_forgets_the_memo, setup, teardown),
        cmocka_unit_test_setup_teardown(an_allocation_is_answered_from_the_second_pass, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
