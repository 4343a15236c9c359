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
 * dummy; 3: a kernel task in a MANUAL scope of its own; 4: a Graph call
 * (v[0], v[1] its boundary, sc[] its scalars, dep[] its deps, `pred` the
 * key, pval its flags). */
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
    int bound;  /* a Graph call or kernel task: its tensors passed in bounds[i] */
    uint64_t pval;
    uint64_t poff; /* the predicate's byte offset */
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
    p->kind = r < 12 ? 0 : r < 14 ? 1 : r < 15 ? 2 : r < 16 ? 3 : 4;
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
    p->poff = 4 * (rnd() % 2);
    if (p->kind == 4) {
        /* one shape per slot, so that calls replay; now and then another */
        bool odd = rnd() % 16 == 0;
        p->pred = (int)(rnd() % 2);
        p->v[0] = fx_tile(&bufs[rnd() % 2], (uint32_t)(rnd() % 7), 0, 2, 8);
        p->dir[0] = HBG_IN;
        p->v[1] = odd ? rtile() : fx_tile(&bufs[2 + rnd() % 3], (uint32_t)(rnd() % 8), 0, 1, 8);
        p->dir[1] = p->pred ? HBG_OUT : HBG_INOUT;
        p->n = 2;
        p->nsc = p->pred + (odd && rnd() % 2);
        p->pval = (rnd() % 40 ? HBG_GRAPH_FALLBACK : 0) | (rnd() % 20 == 0 ? HBG_GRAPH_CHECK_BODY : 0);
        p->bound = (int)(rnd() % 2);
    }
    /* now and then a view past its buffer: refused, rolls the image back */
    if (p->kind == 0 && rnd() % 300 == 0)
        p->v[0].offset = 1000;
    /* a kernel task's tensors in a bound, where none is allocating */
    if (p->kind == 0) {
        p->bound = (int)(rnd() % 2);
        for (int k = 0; k < p->n; k++)
            p->bound &= p->dir[k] != HBG_OUT_ALLOC;
    }
}

static void gen(void)
{
    nprog = 10 + (int)(rnd() % (MAXOPS - 10));
    for (int i = 0; i < nprog; i++)
        gen_op(&prog[i], i);
}

/* What each key's body submits: changed between passes, a re-recorded
 * Definition changes under its key. */
static int variant[2];

static hbg_status gbody(hbg_orch *o, void *ctx, const hbg_boundary *b)
{
    int var = variant[*(const int *)ctx];
    for (int i = 0; i < 1 + var; i++) {
        uint32_t sh[2] = {1, 4};
        hbg_tensor tmp = hbg_tensor_desc(HBG_F32, 2, sh);
        int16_t slots[2] = {b->nscalars ? 0 : -1, -1};
        uint64_t sc[2] = {7, (uint64_t)i};
        hbg_arg a[] = {{b->args[0].t, HBG_IN}, {b->args[1].t, b->args[1].dir}, {&tmp, HBG_OUT_ALLOC}};
        hbg_task t = {.kernel_aic = HBG_KERNEL_NONE,
                      .kernel_aiv = (uint16_t)(1 + var),
                      .core = HBG_CORE_AIV,
                      .blocks = 1,
                      .ntensors = 3,
                      .args = a,
                      .nscalars = 2,
                      .scalars = sc,
                      .scalar_slots = slots};
        hbg_task_id id;
        hbg_submit_task(o, &t, &id);
    }
    return HBG_OK;
}

/* Small changes between passes: a scalar, a predicate's value or a Graph
 * call's flags, a view, a body, or an op replaced. */
static void mutate(void)
{
    int n = 1 + (int)(rnd() % 3);
    if (rnd() % 4 == 0)
        variant[rnd() % 2] = (int)(rnd() % 3);
    for (int m = 0; m < n; m++) {
        int i = (int)(rnd() % (uint64_t)nprog);
        op *p = &prog[i];
        switch (rnd() % 4) {
        case 0:
            if (p->nsc)
                p->sc[0]++;
            break;
        case 1:
            if (rnd() % 2)
                p->pval ^= 1;
            else
                p->poff ^= 4;
            break;
        case 2:
            if (p->kind == 4) /* the same layout elsewhere: a replay of other tensors */
                p->v[0] = fx_tile(&bufs[rnd() % 2], (uint32_t)(rnd() % 7), 0, 2, 8);
            else if (p->dir[0] != HBG_OUT_ALLOC)
                p->v[0] = rtile();
            break;
        default:
            gen_op(p, i);
        }
    }
}

static uint64_t replay_hits, bound_hits, task_bound_hits;
/* One bound per op, kept across programs and shared by the two
 * orchestrators: set before each call to what the op passes, so that a
 * stamp is kept, or moves on, as the op's tensors do. */
static hbg_bound *bounds[MAXOPS];

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
            hbg_pred pr = {.t = &v[3], .byte_offset = p->poff, .value = p->pval, .op = HBG_CMP_EQ, .elem_size = 4};
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
            hbg_status s2;
            if (p->bound) {
                /* a bound's width is fixed: made again for another */
                if (hbg_bound_count(bounds[i]) != (uint32_t)p->n) {
                    hbg_bound_destroy(bounds[i]);
                    assert_int_equal(hbg_bound_create((uint32_t)p->n, a, &bounds[i]), HBG_OK);
                }
                for (int k = 0; k < p->n; k++)
                    assert_int_equal(hbg_bound_set(bounds[i], (uint32_t)k, &v[k], p->dir[k]), HBG_OK);
                t.ntensors = 0, t.args = NULL;
                uint64_t h0 = o->memo_hits;
                s2 = hbg_submit_task_bound(o, &t, bounds[i], &ids[i]);
                task_bound_hits += o->memo_hits - h0;
            } else {
                s2 = hbg_submit_task(o, &t, &ids[i]);
            }
            if (!st)
                st = s2;
            if (p->kind == 3 && (s2 = hbg_scope_end(o)) && !st)
                st = s2;
        } else if (p->kind == 4) {
            static const int keys[2] = {0, 1};
            hbg_arg a[2] = {{&v[0], p->dir[0]}, {&v[1], p->dir[1]}};
            hbg_boundary b = {.ntensors = 2,
                              .args = a,
                              .nscalars = (uint32_t)p->nsc,
                              .scalars = p->sc,
                              .ndeps = (uint32_t)p->ndeps,
                              .deps = deps};
            uint64_t h0 = o->memo_hits; /* a body's own submits are never answered */
            if (p->bound) {
                if (hbg_bound_count(bounds[i]) != 2) {
                    hbg_bound_destroy(bounds[i]);
                    assert_int_equal(hbg_bound_create(2, a, &bounds[i]), HBG_OK);
                }
                for (uint32_t k = 0; k < 2; k++)
                    assert_int_equal(hbg_bound_set(bounds[i], k, &v[k], p->dir[k]), HBG_OK);
                b.ntensors = 0, b.args = NULL;
                st = hbg_submit_graph_bound(o, 500 + (uint64_t)p->pred, gbody, (void *)&keys[p->pred], bounds[i],
                                            &b, (uint32_t)p->pval, &ids[i]);
            } else {
                st = hbg_submit_graph(o, 500 + (uint64_t)p->pred, gbody, (void *)&keys[p->pred], &b,
                                      (uint32_t)p->pval, &ids[i]);
            }
            replay_hits += o->memo_hits - h0;
            if (p->bound)
                bound_hits += o->memo_hits - h0;
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

/* Random programs of tasks and Graph calls (Definitions kept or re-recorded,
 * bodies that change, boundary scalars and deps, fallback and check-body),
 * changed a little between most passes and now and then replaced, the heap
 * moved now and then, some passes refusing submits
 * (scalar slots outside a body, views past their buffers, a full window or
 * heap): the two orchestrators agree on everything the
 * caller and the device see. */
static void random_programs_with_and_without(void **state)
{
    (void)state;
    uint64_t hits = 0, passes = 0, failed = 0;
    for (int i = 0; i < NB; i++)
        bufs[i] = fx_buf(0x100000ull * (i + 1), 8, 8);
    for (int i = 0; i < MAXOPS; i++) {
        hbg_arg two[] = {{&bufs[0], HBG_IN}, {&bufs[1], HBG_INOUT}};
        assert_int_equal(hbg_bound_create(2, two, &bounds[i]), HBG_OK);
    }
    for (int seed = 1; seed < 120; seed++) {
        rs = 0x9e3779b97f4a7c15ull * (uint64_t)seed;
        hbg__orch_config cfg = {.task_window = 40 + (uint32_t)(seed % 4) * 60,
                                .heap_base = FAKE_HEAP_BASE,
                                .heap_bytes = seed % 5 == 0 ? 16384 : 1 << 22,
                                .keep_definitions = seed % 2};
        variant[0] = variant[1] = 0;
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
    print_message("memo: %llu hits (%llu replays, %llu of them bound; %llu bound tasks) over %llu passes, %llu "
                  "failed\n",
                  (unsigned long long)hits, (unsigned long long)replay_hits, (unsigned long long)bound_hits,
                  (unsigned long long)task_bound_hits, (unsigned long long)passes, (unsigned long long)failed);
    for (int i = 0; i < MAXOPS; i++)
        hbg_bound_destroy(bounds[i]);
    /* the memo answered a good share, and failing passes were among them */
    assert_true(hits > passes * 5);
    assert_true(replay_hits > passes);
    assert_true(bound_hits > passes / 2);
    assert_true(task_bound_hits > passes);
    assert_true(failed > 0);
}

/* ---- exact cases ---------------------------------------------------------- */

static hbg_orch *o;
static hbg_tensor w, x, y;
static uint64_t scal[2];
static hbg_tensor outs[4];
static bool one_row;        /* every task updates the same rows, each after the last */
static int manual_at = -1;  /* the task submitted in a MANUAL scope of its own */
static int flip_at = -1;    /* a byte of task 3's allocating argument, flipped */

static hbg_status layer(int bad_at)
{
    hbg_status first = HBG_OK;
    for (int i = 0; i < 4; i++) {
        uint32_t sh[2] = {2, 8};
        outs[i] = hbg_tensor_desc(HBG_F32, 2, sh);
        if (i == 3 && flip_at >= 0)
            ((unsigned char *)&outs[i])[flip_at] ^= 1;
        hbg_tensor xv = fx_tile(&x, one_row ? 0 : (uint32_t)i * 2, 0, 2, 8);
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
        hbg_status st = i == manual_at ? hbg_scope_begin(o, HBG_SCOPE_MANUAL) : HBG_OK;
        if (!st)
            st = hbg_submit_task(o, &t, &id);
        if (i == manual_at && !st)
            st = hbg_scope_end(o);
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

/* Three passes of the layer: the third is answered; the hits so far. */
static uint64_t warm(void)
{
    for (int i = 0; i < 3; i++)
        pass_at(FAKE_HEAP_BASE, -1);
    return o->memo_hits;
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
    one_row = false, manual_at = -1, flip_at = -1;
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
    uint64_t h = warm();
    scal[1] = 10;
    pass_at(FAKE_HEAP_BASE, -1);
    /* every task has the scalar: all miss, and write the new value */
    assert_int_equal(o->memo_hits, h);
    assert_int_equal(o->img.scalars[o->img.nscalar - 1], 10);
    pass_at(FAKE_HEAP_BASE, -1);
    assert_int_equal(o->memo_hits, h + 4);
}

/* The same task in a MANUAL scope: its fanins are its explicit
 * dependencies alone, not the task before it on the same rows, so it is
 * submitted again; after it the map no longer follows the last pass's
 * calls, and the last task is submitted again too. */
static void a_task_in_a_manual_scope_is_submitted_again(void **state)
{
    (void)state;
    one_row = true;
    uint64_t h = warm();
    assert_int_equal(h, 4);
    assert_int_equal(o->img.tasks[2].fanin_cnt, 1);
    manual_at = 2;
    pass_at(FAKE_HEAP_BASE, -1);
    assert_int_equal(o->memo_hits, h + 2);
    assert_int_equal(o->img.tasks[2].fanin_cnt, 0);
    pass_at(FAKE_HEAP_BASE, -1);
    assert_int_equal(o->memo_hits, h + 6);
    manual_at = -1;
    pass_at(FAKE_HEAP_BASE, -1);
    assert_int_equal(o->memo_hits, h + 8);
    assert_int_equal(o->img.tasks[2].fanin_cnt, 1);
}

/* A refused submit rolls the image back, having maybe written past the
 * live counts over the last pass's records: nothing after it in the pass
 * is answered from them. */
static void a_refused_submit_ends_the_memo_for_its_pass(void **state)
{
    (void)state;
    uint64_t h = warm();
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
    uint64_t h = warm();
    pass_at(FAKE_HEAP_BASE + 0x100000, -1);
    assert_int_equal(o->memo_hits, h);
    assert_true(outs[0].addr >= FAKE_HEAP_BASE + 0x100000);
    pass_at(FAKE_HEAP_BASE + 0x100000, -1);
    assert_int_equal(o->memo_hits, h + 4);
    hbg__memo_forget(o);
    pass_at(FAKE_HEAP_BASE + 0x100000, -1);
    assert_int_equal(o->memo_hits, h + 4);
}

/* An allocating argument is its record but for the buffer it is given:
 * one byte flipped anywhere in it but nbytes and creator (which the
 * allocation overwrites) is a different task, and addr set is not an
 * allocating argument at all; flipped in nbytes or creator, the task is
 * still answered. Every byte of the 96, each on a fresh orchestrator
 * warmed with the unflipped layer. */
static void an_allocating_argument_is_compared_on_all_but_its_buffer(void **state)
{
    (void)state;
    for (int at = 0; at < (int)sizeof(hbg_tensor); at++) {
        teardown(NULL);
        setup(NULL);
        uint64_t h = warm();
        flip_at = at;
        pass_at(FAKE_HEAP_BASE, -1);
        bool ignored = (at >= (int)offsetof(hbg_tensor, nbytes) && at < (int)offsetof(hbg_tensor, offset)) ||
                       (at >= (int)offsetof(hbg_tensor, creator) && at < (int)offsetof(hbg_tensor, reserved2));
        if (o->memo_hits != h + (ignored ? 4 : 3))
            fail_msg("byte %d of the allocating argument: %llu hits, want %d", at,
                     (unsigned long long)(o->memo_hits - h), ignored ? 4 : 3);
    }
}

/* alloc_tensors makes no map calls: its record depends on the heap's fill
 * only. Like the kernel tasks' notes, its notes start with the second pass
 * (the cold pass touches none), so the third answers. */
static void an_allocation_is_answered_from_the_third_pass(void **state)
{
    (void)state;
    uint64_t addr[4] = {0};
    for (int pass = 0; pass < 4; pass++) {
        hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
        uint32_t sh[2] = {4, 8};
        hbg_tensor a = hbg_tensor_desc(HBG_F32, 2, sh), b = hbg_tensor_desc(HBG_I8, 2, sh);
        hbg_tensor *ts[] = {&a, &b};
        hbg_task_id id;
        assert_int_equal(hbg_alloc_tensors(o, 2, ts, &id), HBG_OK);
        assert_int_equal(id, 0);
        assert_int_equal(hbg__orch_end_pass(o), HBG_OK);
        assert_int_equal(o->memo_hits, pass < 2 ? 0 : (uint64_t)pass - 1);
        addr[pass] = b.addr;
        assert_int_equal(b.creator, 1);
        assert_int_equal(b.nbytes, 32);
        assert_int_equal(o->heap_used, 128 + 32);
    }
    assert_int_equal(addr[0], FAKE_HEAP_BASE + 128);
    assert_int_equal(addr[1], addr[0]);
    assert_int_equal(addr[2], addr[0]);
    assert_int_equal(addr[3], addr[0]);
}

/* ---- regressions: one caller struct in two roles ------------------------ */

static hbg_orch *orch_with(bool no_journal)
{
    hbg__orch_config cfg = {
        .task_window = 64, .heap_base = FAKE_HEAP_BASE, .heap_bytes = 1 << 20, .no_journal = no_journal};
    hbg_orch *q;
    assert_int_equal(hbg__graph_orch_create(&cfg, &q), HBG_OK);
    return q;
}

/* alloc_tensors given one description twice allocates as it goes, so the
 * second turn finds a buffer and is refused; a pass before that listed two
 * equal descriptions must not make the memo accept it. */
static void a_description_listed_twice_is_refused_with_the_memo(void **state)
{
    (void)state;
    hbg_status st[2];
    uint64_t heap[2];
    for (int k = 0; k < 2; k++) {
        hbg_orch *q = orch_with(k);
        uint32_t sh[2] = {4, 8};
        for (int pass = 0; pass < 3; pass++) {
            hbg__orch_begin_pass(q, FAKE_HEAP_BASE, NULL, 0);
            hbg_tensor a = hbg_tensor_desc(HBG_F32, 2, sh), b = a;
            hbg_tensor *two[] = {&a, &b}, *same[] = {&a, &a};
            hbg_task_id id;
            st[k] = hbg_alloc_tensors(q, 2, pass < 2 ? two : same, &id);
            hbg__orch_end_pass(q);
        }
        heap[k] = q->heap_used;
        hbg__orch_destroy(q);
    }
    assert_int_equal(st[1], HBG_E_ARG_HAS_BUFFER);
    assert_int_equal(st[0], st[1]);
    assert_int_equal(heap[0], heap[1]);
}

/* A predicate on a tensor its own task allocates reads the new buffer's
 * address, memo or not; one on an equal copy of the description, which
 * names no buffer, is refused in a pass between them (the memo, whose
 * last record read the allocation, must not answer it). */
static void a_predicate_on_its_own_allocation(void **state)
{
    (void)state;
    hbg_img_pred pr[2];
    for (int k = 0; k < 2; k++) {
        hbg_orch *q = orch_with(k);
        uint32_t sh[2] = {1, 8};
        hbg_tensor x = fx_buf(0x10000, 8, 8);
        for (int pass = 0; pass < 7; pass++) {
            hbg__orch_begin_pass(q, FAKE_HEAP_BASE, NULL, 0);
            hbg_tensor t = hbg_tensor_desc(HBG_F32, 2, sh), u = t;
            hbg_arg a[] = {{&x, HBG_INOUT}, {&t, HBG_OUT_ALLOC}};
            hbg_pred p = {.t = pass == 4 ? &u : &t, .value = 1, .op = HBG_CMP_EQ, .elem_size = 4};
            hbg_task tk = {.kernel_aic = HBG_KERNEL_NONE,
                           .kernel_aiv = 1,
                           .core = HBG_CORE_AIV,
                           .ntensors = 2,
                           .args = a,
                           .pred = &p};
            hbg_task_id id;
            hbg_status want = pass == 4 ? HBG_E_ARG_NO_BUFFER : HBG_OK;
            assert_int_equal(hbg_submit_task(q, &tk, &id), want);
            assert_int_equal(hbg__orch_end_pass(q), want);
        }
        pr[k] = q->img.preds[0];
        hbg__orch_destroy(q);
    }
    assert_int_equal(pr[1].addr, FAKE_HEAP_BASE);
    assert_memory_equal(&pr[0], &pr[1], sizeof pr[0]);
}

/* Tasks of 30-odd allocations each fill the map's buffer table, a task
 * more in one pass: hbg__tmap_fits decides near the full table with the
 * counts the memo's answers kept. */
static void a_full_buffer_table(void **state)
{
    (void)state;
    static hbg_tensor d[2][8][32];
    for (uint32_t win = 8; win <= 24; win += 4)
        for (int tasks = 1; tasks <= 6; tasks++) {
            hbg__orch_config cfg = {.task_window = win, .heap_base = FAKE_HEAP_BASE, .heap_bytes = 1 << 22};
            hbg_orch *q[2];
            assert_int_equal(hbg__graph_orch_create(&cfg, &q[0]), HBG_OK);
            cfg.no_journal = true;
            assert_int_equal(hbg__graph_orch_create(&cfg, &q[1]), HBG_OK);
            hbg_tensor x = fx_buf(0x10000, 8, 8);
            for (int pass = 0; pass < 5; pass++) {
                hbg_status st[2][8];
                for (int k = 0; k < 2; k++) {
                    hbg__orch_begin_pass(q[k], FAKE_HEAP_BASE, NULL, 0);
                    for (int i = 0; i < tasks + (pass == 3); i++) {
                        hbg_arg a[32];
                        uint32_t n = 31 - (uint32_t)(i % 2);
                        a[0] = (hbg_arg){&x, HBG_INOUT};
                        for (uint32_t j = 1; j < n; j++) {
                            uint32_t sh[1] = {4};
                            d[k][i][j] = hbg_tensor_desc(HBG_F32, 1, sh);
                            a[j] = (hbg_arg){&d[k][i][j], HBG_OUT_ALLOC};
                        }
                        hbg_task t = {.kernel_aic = HBG_KERNEL_NONE,
                                      .kernel_aiv = 1,
                                      .core = HBG_CORE_AIV,
                                      .ntensors = n,
                                      .args = a};
                        hbg_task_id id;
                        st[k][i] = hbg_submit_task(q[k], &t, &id);
                    }
                    hbg__orch_end_pass(q[k]);
                }
                assert_memory_equal(st[0], st[1], (size_t)(tasks + (pass == 3)) * sizeof st[0][0]);
                fx_same_images(q[0], q[1]);
                assert_memory_equal(d[0], d[1], sizeof d[0]);
            }
            hbg__orch_destroy(q[0]);
            hbg__orch_destroy(q[1]);
        }
}

/* A Definition's entry keeps its gen while a re-recording builds the same
 * image at the same place with the same signature, and takes a new one
 * when the body or the boundary's layout changes (replays noted under
 * the old gen are then not answered). */
static hbg_status one_task_body(hbg_orch *q, void *ctx, const hbg_boundary *b)
{
    uint32_t sh[2] = {1, 4};
    hbg_tensor tmp = hbg_tensor_desc(HBG_F32, 2, sh);
    hbg_arg a[] = {{b->args[0].t, HBG_INOUT}, {&tmp, HBG_OUT_ALLOC}};
    hbg_task t = {.kernel_aic = HBG_KERNEL_NONE,
                  .kernel_aiv = (uint16_t)(1 + *(const int *)ctx),
                  .core = HBG_CORE_AIV,
                  .ntensors = 2,
                  .args = a};
    hbg_task_id id;
    return hbg_submit_task(q, &t, &id);
}

static void a_definition_keeps_its_gen_while_it_is_the_same(void **state)
{
    (void)state;
    hbg_orch *q = orch_with(false);
    int kernel = 0;
    uint32_t gens[6];
    for (int pass = 0; pass < 6; pass++) {
        if (pass == 3)
            kernel = 1;                                                               /* another body content */
        hbg_tensor v = pass == 5 ? fx_tile(&x, 0, 0, 2, 8) : fx_tile(&x, 0, 0, 1, 8); /* another layout */
        hbg_arg a[] = {{&v, HBG_INOUT}};
        hbg_boundary b = {.ntensors = 1, .args = a};
        hbg__orch_begin_pass(q, FAKE_HEAP_BASE, NULL, 0);
        hbg_task_id id;
        for (int call = 0; call < 3; call++)
            assert_int_equal(hbg_submit_graph(q, 77, one_task_body, &kernel, &b, 0, &id), HBG_OK);
        assert_int_equal(hbg__orch_end_pass(q), HBG_OK);
        gens[pass] = q->graph->defs[0].gen;
    }
    assert_int_equal(gens[1], gens[0]);
    assert_int_equal(gens[2], gens[0]);
    assert_true(gens[3] != gens[2]);
    assert_int_equal(gens[4], gens[3]);
    assert_true(gens[5] != gens[4]);
    /* the third pass on answers the two replays after each recording */
    assert_true(q->memo_hits >= 2);
    hbg__orch_destroy(q);
}

/* Replays of a boundary of HBG_MAX_BOUNDARY_TENSORS slots, each a row of
 * one buffer the first slot writes: some 130 map calls a replay, more
 * than the default journal of a window of 8 holds (16 a task), so no
 * replay is answered; with the journal sized for them (journal_calls),
 * every replay after the recording is, from the third pass on. */
static uint64_t wide_replay_hits(uint32_t journal_calls)
{
    hbg__orch_config cfg = {
        .task_window = 8, .heap_base = FAKE_HEAP_BASE, .heap_bytes = 1 << 20, .journal_calls = journal_calls};
    hbg_orch *q;
    assert_int_equal(hbg__graph_orch_create(&cfg, &q), HBG_OK);
    hbg_tensor buf = fx_buf(0x400000, HBG_MAX_BOUNDARY_TENSORS, 8);
    static hbg_tensor v[HBG_MAX_BOUNDARY_TENSORS];
    hbg_arg a[HBG_MAX_BOUNDARY_TENSORS];
    for (uint32_t k = 0; k < HBG_MAX_BOUNDARY_TENSORS; k++) {
        v[k] = fx_tile(&buf, k, 0, 1, 8);
        a[k] = (hbg_arg){&v[k], k ? HBG_IN : HBG_INOUT};
    }
    hbg_boundary b = {.ntensors = HBG_MAX_BOUNDARY_TENSORS, .args = a};
    int kernel = 0;
    for (int pass = 0; pass < 4; pass++) {
        hbg__orch_begin_pass(q, FAKE_HEAP_BASE, NULL, 0);
        hbg_task_id id;
        for (int call = 0; call < 4; call++)
            assert_int_equal(hbg_submit_graph(q, 78, one_task_body, &kernel, &b, 0, &id), HBG_OK);
        assert_int_equal(hbg__orch_end_pass(q), HBG_OK);
    }
    uint64_t hits = q->memo_hits;
    hbg__orch_destroy(q);
    return hits;
}

static void a_wide_boundary_is_answered_with_a_journal_sized_for_it(void **state)
{
    (void)state;
    assert_int_equal(wide_replay_hits(0), 0);
    assert_int_equal(wide_replay_hits(8 * 4 * 140), 6);
    /* past the most a journal may hold: refused */
    hbg__orch_config cfg = {.task_window = 8, .heap_base = FAKE_HEAP_BASE, .heap_bytes = 1 << 20,
                            .journal_calls = HBG_MAX_JOURNAL_CALLS + 1};
    hbg_orch *q = NULL;
    assert_int_equal(hbg__graph_orch_create(&cfg, &q), HBG_E_INVAL);
    assert_null(q);
}

/* ---- regressions: a body that changes its boundary, stray layout bytes --- */

static hbg_tensor *moved; /* the body moves this boundary tensor when set */

static hbg_status moving_body(hbg_orch *q, void *ctx, const hbg_boundary *b)
{
    (void)ctx;
    hbg_arg a[1] = {{b->args[0].t, HBG_IN}};
    hbg_task_id id;
    hbg_status st = fx_task(q, 1, a, &id);
    if (moved)
        moved->offset += 1000; /* past its buffer */
    return st;
}

static hbg_orch *graph_orch(bool keep, bool memo)
{
    hbg__orch_config cfg = {.task_window = 64,
                            .heap_base = FAKE_HEAP_BASE,
                            .heap_bytes = 1 << 20,
                            .keep_definitions = keep,
                            .no_journal = !memo};
    hbg_orch *q;
    assert_int_equal(hbg__graph_orch_create(&cfg, &q), HBG_OK);
    return q;
}

/* Kept Definitions: a key first recorded in the second pass, whose body
 * moves the caller's boundary tensor; the third pass passes the tensor as
 * the body left it. The recording call's records mix the boundary before
 * the body (its inference) and after it (its image): it must not be noted. */
static void a_recording_call_is_not_noted(void **state)
{
    (void)state;
    hbg_tensor buf = fx_buf(0x100000, 8, 8);
    hbg_status st[2];
    for (int w = 0; w < 2; w++) {
        hbg_orch *q = graph_orch(true, w == 0);
        hbg_tensor x = fx_tile(&buf, 0, 0, 4, 8);
        for (int pass = 1; pass <= 3; pass++) {
            hbg__orch_begin_pass(q, FAKE_HEAP_BASE, NULL, 0);
            if (pass >= 2) {
                hbg_arg ba[1] = {{&x, HBG_INOUT}};
                hbg_boundary b = {.ntensors = 1, .args = ba};
                moved = pass == 2 ? &x : NULL;
                hbg_submit_graph(q, 9, moving_body, NULL, &b, 0, NULL);
            }
            st[w] = hbg__orch_end_pass(q);
        }
        hbg__orch_destroy(q);
    }
    moved = NULL;
    assert_int_equal(st[1], HBG_E_INVAL); /* the moved view is outside its buffer */
    assert_int_equal(st[0], st[1]);
}

/* The same for a call with HBG_GRAPH_CHECK_BODY, whose body moves an OUT
 * slot after the scan: the next pass's plain call must not keep its copy. */
static void a_check_body_call_is_not_noted(void **state)
{
    (void)state;
    hbg_tensor buf = fx_buf(0x100000, 8, 8);
    hbg_orch *q[2] = {graph_orch(true, true), graph_orch(true, false)};
    for (int pass = 1; pass <= 5; pass++) {
        for (int w = 0; w < 2; w++) {
            hbg__orch_begin_pass(q[w], FAKE_HEAP_BASE, NULL, 0);
            hbg_tensor x = fx_tile(&buf, 0, 0, 2, 8);
            hbg_arg ba[1] = {{&x, HBG_OUT}};
            hbg_boundary b = {.ntensors = 1, .args = ba};
            moved = pass == 3 ? &x : NULL;
            assert_int_equal(
                hbg_submit_graph(q[w], 9, moving_body, NULL, &b, pass == 3 ? HBG_GRAPH_CHECK_BODY : 0, NULL), HBG_OK);
            assert_int_equal(hbg__orch_end_pass(q[w]), HBG_OK);
        }
        moved = NULL;
        fx_same_images(q[0], q[1]);
    }
    assert_true(q[0]->memo_hits > 0);
    hbg__orch_destroy(q[0]);
    hbg__orch_destroy(q[1]);
}

/* A written slot with a stray byte outside its layout (`reserved`) matches
 * its signature field by field, and the replay copies it whole: a pass
 * later the byte is gone, and the copy must not be kept. */
static void stray_layout_bytes_are_not_kept(void **state)
{
    (void)state;
    hbg_tensor buf = fx_buf(0x100000, 8, 8);
    hbg_orch *q[2] = {graph_orch(false, true), graph_orch(false, false)};
    for (int pass = 1; pass <= 5; pass++) {
        for (int w = 0; w < 2; w++) {
            hbg__orch_begin_pass(q[w], FAKE_HEAP_BASE, NULL, 0);
            for (int call = 0; call < 2; call++) {
                hbg_tensor x = fx_tile(&buf, 0, 0, 2, 8);
                if (pass == 3 && call == 1)
                    x.reserved = 1;
                hbg_arg ba[1] = {{&x, HBG_INOUT}};
                hbg_boundary b = {.ntensors = 1, .args = ba};
                assert_int_equal(hbg_submit_graph(q[w], 9, moving_body, NULL, &b, 0, NULL), HBG_OK);
            }
            assert_int_equal(hbg__orch_end_pass(q[w]), HBG_OK);
        }
        fx_same_images(q[0], q[1]);
    }
    assert_true(q[0]->memo_hits > 0);
    hbg__orch_destroy(q[0]);
    hbg__orch_destroy(q[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_programs_with_and_without),
        cmocka_unit_test_setup_teardown(a_repeated_pass_is_answered_from_the_memo, setup, teardown),
        cmocka_unit_test_setup_teardown(a_changed_scalar_misses_only_its_task, setup, teardown),
        cmocka_unit_test_setup_teardown(a_task_in_a_manual_scope_is_submitted_again, setup, teardown),
        cmocka_unit_test_setup_teardown(a_refused_submit_ends_the_memo_for_its_pass, setup, teardown),
        cmocka_unit_test_setup_teardown(a_moved_heap_forgets_the_memo, setup, teardown),
        cmocka_unit_test_setup_teardown(an_allocating_argument_is_compared_on_all_but_its_buffer, setup, teardown),
        cmocka_unit_test_setup_teardown(an_allocation_is_answered_from_the_third_pass, setup, teardown),
        cmocka_unit_test(a_description_listed_twice_is_refused_with_the_memo),
        cmocka_unit_test(a_predicate_on_its_own_allocation),
        cmocka_unit_test(a_full_buffer_table),
        cmocka_unit_test_setup_teardown(a_definition_keeps_its_gen_while_it_is_the_same, setup, teardown),
        cmocka_unit_test(a_wide_boundary_is_answered_with_a_journal_sized_for_it),
        cmocka_unit_test(a_recording_call_is_not_noted),
        cmocka_unit_test(a_check_body_call_is_not_noted),
        cmocka_unit_test(stray_layout_bytes_are_not_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
