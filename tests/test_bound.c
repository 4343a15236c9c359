/* Bounds (src/orch/bound.c): a task or Graph call given a bound binds
 * exactly as one given the same tensors as arguments, and is answered
 * from the task memo by the bound's stamp, which moves with every change
 * to what the bound holds (hbg_bound_set, or a body that changes its
 * boundary's tensors) and with nothing else. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "hbg/graph.h"
#include "support/orch_fixture.h"

static hbg_tensor x, y;

static hbg_orch *orch(bool keep)
{
    hbg__orch_config cfg = {
        .task_window = 64, .heap_base = FAKE_HEAP_BASE, .heap_bytes = 1 << 20, .keep_definitions = keep};
    hbg_orch *o;
    assert_int_equal(hbg__graph_orch_create(&cfg, &o), HBG_OK);
    return o;
}

/* Reads slot 0 into a temporary, and writes slot 1 from it. With
 * `toggle` set, it then moves slot 0's view to the other of two rows: a
 * body that changes the boundary it was passed. */
static bool toggle;

static hbg_status body(hbg_orch *o, void *ctx, const hbg_boundary *b)
{
    (void)ctx;
    uint32_t sh[2] = {1, 8};
    hbg_tensor tmp = hbg_tensor_desc(HBG_F32, 2, sh);
    hbg_arg a0[] = {{b->args[0].t, HBG_IN}, {&tmp, HBG_OUT_ALLOC}};
    hbg_arg a1[] = {{&tmp, HBG_IN}, {b->args[1].t, HBG_INOUT}};
    hbg_task_id id;
    hbg_status st = fx_task(o, 2, a0, &id);
    if (!st)
        st = fx_task(o, 2, a1, &id);
    if (toggle)
        b->args[0].t->offset ^= 8;
    return st;
}

/* One pass of `calls` Graph calls, each passed v[0], v[1] as a boundary
 * (bd NULL) or the bound; returns the memo's answers in the pass. */
static uint64_t pass(hbg_orch *o, hbg_tensor *v, hbg_bound *bd, int calls)
{
    hbg_arg a[] = {{&v[0], HBG_IN}, {&v[1], HBG_INOUT}};
    hbg_boundary b = {.ntensors = 2, .args = a};
    uint64_t h0 = o->memo_hits;
    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    for (int c = 0; c < calls; c++) {
        hbg_task_id id;
        hbg_status st = bd ? hbg_submit_graph_bound(o, 9, body, NULL, bd, NULL, 0, &id)
                           : hbg_submit_graph(o, 9, body, NULL, &b, 0, &id);
        assert_int_equal(st, HBG_OK);
        assert_int_equal(id, (hbg_task_id)c);
    }
    assert_int_equal(hbg__orch_end_pass(o), HBG_OK);
    return o->memo_hits - h0;
}

static int setup(void **state)
{
    (void)state;
    x = fx_buf(0x10000, 8, 8);
    y = fx_buf(0x20000, 8, 8);
    toggle = false;
    return 0;
}

/* Kept and re-recorded Definitions: the same images as calls passed the
 * tensors, and every replay answered from the third pass on (the second
 * notes; with re-recorded Definitions each pass's first call records). */
static void a_bound_call_binds_as_a_boundary_call(void **state)
{
    (void)state;
    for (int keep = 0; keep < 2; keep++) {
        hbg_orch *plain = orch(keep), *held = orch(keep);
        hbg_tensor v[2] = {fx_tile(&x, 0, 0, 1, 8), fx_tile(&y, 2, 0, 1, 8)};
        hbg_arg a[] = {{&v[0], HBG_IN}, {&v[1], HBG_INOUT}};
        hbg_bound *bd;
        assert_int_equal(hbg_bound_create(2, a, &bd), HBG_OK);
        uint64_t hits[4];
        for (int p = 0; p < 4; p++) {
            pass(plain, v, NULL, 3);
            hits[p] = pass(held, v, bd, 3);
            fx_same_images(plain, held);
        }
        assert_int_equal(hits[0], 0);
        assert_int_equal(hits[1], 0);
        assert_int_equal(hits[2], keep ? 3 : 2);
        assert_int_equal(hits[3], keep ? 3 : 2);
        hbg_bound_destroy(bd);
        hbg__orch_destroy(plain);
        hbg__orch_destroy(held);
    }
}

/* A slot set to other tensors is a call the memo does not answer, and
 * binds what the bound holds now; set back to its first bytes it is a
 * new content all the same (a stamp is never reused), and a slot set to
 * the bytes it holds is no change at all. */
static void a_set_slot_is_a_new_boundary(void **state)
{
    (void)state;
    hbg_orch *plain = orch(true), *held = orch(true);
    hbg_tensor v[2] = {fx_tile(&x, 0, 0, 1, 8), fx_tile(&y, 2, 0, 1, 8)};
    hbg_arg a[] = {{&v[0], HBG_IN}, {&v[1], HBG_INOUT}};
    hbg_bound *bd;
    assert_int_equal(hbg_bound_create(2, a, &bd), HBG_OK);
    for (int p = 0; p < 3; p++)
        pass(plain, v, NULL, 1), pass(held, v, bd, 1);
    uint64_t s0 = bd->stamp;
    assert_int_equal(hbg_bound_set(bd, 0, &v[0], HBG_IN), HBG_OK);
    assert_true(bd->stamp == s0);
    assert_int_equal(pass(held, v, bd, 1), 1);
    pass(plain, v, NULL, 1);
    fx_same_images(plain, held);

    hbg_tensor moved = fx_tile(&x, 5, 0, 1, 8);
    assert_int_equal(hbg_bound_set(bd, 0, &moved, HBG_IN), HBG_OK);
    assert_true(bd->stamp != s0);
    hbg_tensor w[2] = {moved, v[1]};
    assert_int_equal(pass(held, w, bd, 1), 0);
    pass(plain, w, NULL, 1);
    fx_same_images(plain, held);
    assert_int_equal(held->img.ntensor, 1); /* the INOUT slot's copy */

    assert_int_equal(hbg_bound_set(bd, 0, &v[0], HBG_IN), HBG_OK);
    assert_true(bd->stamp != s0);
    assert_int_equal(pass(held, v, bd, 1), 0);
    pass(plain, v, NULL, 1);
    fx_same_images(plain, held);
    assert_int_equal(pass(held, v, bd, 1), 1);
    hbg_bound_destroy(bd);
    hbg__orch_destroy(plain);
    hbg__orch_destroy(held);
}

/* A body that moves its boundary's view changes what the bound holds:
 * each pass's recording call leaves slot 0 on the other row, and the
 * replays after it must bind that row, as calls passed the caller's
 * tensors do. Had the stamp stayed, the second pass's replays would be
 * answered with the first's row. */
static void a_body_that_changes_its_bound(void **state)
{
    (void)state;
    toggle = true;
    hbg_orch *plain = orch(false), *held = orch(false);
    hbg_tensor v[2] = {fx_tile(&x, 0, 0, 1, 8), fx_tile(&y, 2, 0, 1, 8)};
    hbg_arg a[] = {{&v[0], HBG_IN}, {&v[1], HBG_INOUT}};
    hbg_bound *bd;
    assert_int_equal(hbg_bound_create(2, a, &bd), HBG_OK);
    for (int p = 0; p < 5; p++) {
        uint64_t s0 = bd->stamp;
        pass(plain, v, NULL, 3);
        pass(held, v, bd, 3);
        fx_same_images(plain, held);
        assert_true(bd->stamp != s0);
        hbg_tensor held0;
        uint8_t dir;
        assert_int_equal(hbg_bound_count(bd), 2);
        assert_int_equal(hbg_bound_get(bd, 0, &held0, &dir), HBG_OK);
        assert_memory_equal(&held0, &v[0], sizeof v[0]);
        assert_int_equal(dir, HBG_IN);
    }
    hbg_bound_destroy(bd);
    hbg__orch_destroy(plain);
    hbg__orch_destroy(held);
}

/* The scalars and dependencies come from `rest`, as a boundary's do. */
static hbg_status scalar_body(hbg_orch *o, void *ctx, const hbg_boundary *b)
{
    (void)ctx;
    int16_t slots[1] = {0};
    uint64_t sc[1] = {0};
    hbg_arg a[] = {{b->args[0].t, HBG_INOUT}};
    hbg_task t = {.kernel_aic = HBG_KERNEL_NONE, .kernel_aiv = 1, .core = HBG_CORE_AIV, .blocks = 1,
                  .ntensors = 1, .args = a, .nscalars = 1, .scalars = sc, .scalar_slots = slots};
    hbg_task_id id;
    return hbg_submit_task(o, &t, &id);
}

static void rest_gives_scalars_and_deps(void **state)
{
    (void)state;
    hbg_orch *plain = orch(true), *held = orch(true);
    hbg_tensor v = fx_tile(&x, 1, 0, 1, 8), other = fx_tile(&y, 0, 0, 1, 8);
    hbg_arg a[] = {{&v, HBG_INOUT}};
    hbg_bound *bd;
    assert_int_equal(hbg_bound_create(1, a, &bd), HBG_OK);
    for (int p = 0; p < 4; p++) {
        hbg_orch *os[2] = {plain, held};
        for (int k = 0; k < 2; k++) {
            hbg__orch_begin_pass(os[k], FAKE_HEAP_BASE, NULL, 0);
            hbg_arg oa[] = {{&other, HBG_INOUT}};
            hbg_task_id first, id;
            assert_int_equal(fx_task(os[k], 1, oa, &first), HBG_OK);
            uint64_t sc[1] = {100 + (uint64_t)p}; /* a step's position: new every pass */
            hbg_boundary b = {.ntensors = 1, .args = a, .nscalars = 1, .scalars = sc, .ndeps = 1, .deps = &first};
            hbg_boundary rest = {.nscalars = 1, .scalars = sc, .ndeps = 1, .deps = &first};
            assert_int_equal(k ? hbg_submit_graph_bound(held, 4, scalar_body, NULL, bd, &rest, 0, &id)
                               : hbg_submit_graph(plain, 4, scalar_body, NULL, &b, 0, &id),
                             HBG_OK);
            assert_true(fx_has_edge(os[k], first, id));
            assert_int_equal(hbg__orch_end_pass(os[k]), HBG_OK);
        }
        fx_same_images(plain, held);
        assert_int_equal(held->img.bscalars[0], 100 + (uint64_t)p);
    }
    assert_int_equal(held->memo_hits, plain->memo_hits);
    assert_true(held->memo_hits >= 2);
    hbg_bound_destroy(bd);
    hbg__orch_destroy(plain);
    hbg__orch_destroy(held);
}

/* Tasks: three kernel tasks a pass, each on its own bound, against the
 * same tasks passed their arguments. The same images, and from the third
 * pass every task answered (the second notes); a slot set to other
 * tensors misses once, and only its task. A pass-through argument
 * (HBG_NO_DEP) may be held too. */
static void pass_tasks(hbg_orch *o, hbg_tensor v[3][3], hbg_bound **bd, uint64_t step)
{
    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    for (int k = 0; k < 3; k++) {
        hbg_arg a[] = {{&v[k][0], HBG_IN}, {&v[k][1], HBG_INOUT}, {&v[k][2], HBG_NO_DEP}};
        uint64_t sc[2] = {(uint64_t)k, step};
        hbg_task t = {.kernel_aiv = 1, .core = HBG_CORE_AIV, .blocks = 2, .nscalars = 2, .scalars = sc};
        hbg_task_id id;
        if (bd) {
            assert_int_equal(hbg_submit_task_bound(o, &t, bd[k], &id), HBG_OK);
        } else {
            t.ntensors = 3, t.args = a;
            assert_int_equal(hbg_submit_task(o, &t, &id), HBG_OK);
        }
        assert_int_equal(id, (hbg_task_id)k);
    }
    assert_int_equal(hbg__orch_end_pass(o), HBG_OK);
}

/* Six passes of three tasks, plain beside bound, images compared each
 * pass; task 1's first slot moves before the fifth (to a row of x that
 * task 0 does not write). The step scalar is the pass's number, or 9 in
 * every pass. Returns each pass's answers on the bound side in hits[];
 * the two sides' answers in all must agree. */
static void six_passes(bool step_moves, uint64_t hits[6])
{
    hbg_orch *plain = orch(false), *held = orch(false);
    hbg_tensor v[3][3];
    hbg_bound *bd[3];
    for (int k = 0; k < 3; k++) {
        v[k][0] = fx_tile(&x, (uint32_t)k, 0, 1, 8);
        v[k][1] = fx_tile(&y, (uint32_t)k, 0, 1, 8);
        v[k][2] = fx_tile(&x, 7, 0, 1, 8);
        hbg_arg a[] = {{&v[k][0], HBG_IN}, {&v[k][1], HBG_INOUT}, {&v[k][2], HBG_NO_DEP}};
        assert_int_equal(hbg_bound_create(3, a, &bd[k]), HBG_OK);
    }
    for (int p = 0; p < 6; p++) {
        if (p == 4) {
            v[1][0] = fx_tile(&x, 5, 0, 1, 8);
            assert_int_equal(hbg_bound_set(bd[1], 0, &v[1][0], HBG_IN), HBG_OK);
        }
        uint64_t h0 = held->memo_hits, step = step_moves ? (uint64_t)p : 9;
        pass_tasks(plain, v, NULL, step);
        pass_tasks(held, v, bd, step);
        fx_same_images(plain, held);
        hits[p] = held->memo_hits - h0;
    }
    assert_int_equal(held->memo_hits, plain->memo_hits);
    for (int k = 0; k < 3; k++)
        hbg_bound_destroy(bd[k]);
    hbg__orch_destroy(plain);
    hbg__orch_destroy(held);
}

static void a_bound_task_is_answered_by_its_stamp(void **state)
{
    (void)state;
    uint64_t hits[6];
    six_passes(true, hits);
    assert_int_equal(hits[0], 0);
    assert_int_equal(hits[1], 0);
    /* the step scalar changes every pass: a changed scalar is a miss too */
    assert_int_equal(hits[2], 0);

    /* the same with a fixed step: answered from the third pass, and the
     * task whose slot was set misses once */
    six_passes(false, hits);
    assert_int_equal(hits[0], 0);
    assert_int_equal(hits[1], 0);
    assert_int_equal(hits[2], 3);
    assert_int_equal(hits[3], 3);
    assert_int_equal(hits[4], 2);
    assert_int_equal(hits[5], 3);
}

/* A Graph call refuses a pass-through slot in a bound as in a boundary. */
static void a_graph_call_refuses_a_pass_through_slot(void **state)
{
    (void)state;
    hbg_orch *o = orch(false);
    hbg_tensor v[2] = {fx_tile(&x, 0, 0, 1, 8), fx_tile(&y, 2, 0, 1, 8)};
    hbg_arg a[] = {{&v[0], HBG_NO_DEP}, {&v[1], HBG_INOUT}};
    hbg_bound *bd;
    assert_int_equal(hbg_bound_create(2, a, &bd), HBG_OK);
    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    hbg_task_id id;
    assert_int_equal(hbg_submit_graph_bound(o, 9, body, NULL, bd, NULL, 0, &id), HBG_E_INVAL);
    assert_int_equal(id, HBG_TASK_NONE);
    hbg__orch_end_pass(o);
    hbg_bound_destroy(bd);
    hbg__orch_destroy(o);
}

static void bad_arguments_are_refused(void **state)
{
    (void)state;
    hbg_tensor v = fx_tile(&x, 0, 0, 1, 8);
    hbg_arg ok[1] = {{&v, HBG_IN}}, none[1] = {{NULL, HBG_IN}}, alloc[1] = {{&v, HBG_OUT_ALLOC}};
    hbg_arg wide[HBG_MAX_BOUNDARY_TENSORS + 1];
    for (uint32_t k = 0; k <= HBG_MAX_BOUNDARY_TENSORS; k++)
        wide[k] = ok[0];
    hbg_bound *bd = (hbg_bound *)&v;
    /* each refusal says why (hbg_bound_last_error) */
    assert_int_equal(hbg_bound_create(HBG_MAX_BOUNDARY_TENSORS + 1, wide, &bd), HBG_E_BOUNDARY_TOO_WIDE);
    assert_string_equal(hbg_bound_last_error(), "hbg_bound_create: 129 tensors, the limit is 128");
    assert_null(bd);
    assert_int_equal(hbg_bound_create(1, none, &bd), HBG_E_INVAL);
    assert_string_equal(hbg_bound_last_error(), "hbg_bound_create: argument 0 has no tensor (NULL)");
    assert_int_equal(hbg_bound_create(1, alloc, &bd), HBG_E_INVAL);
    assert_string_equal(hbg_bound_last_error(), "hbg_bound_create: argument 0: direction 1 is none a bound holds "
                                                "(HBG_IN, HBG_INOUT, HBG_OUT, HBG_NO_DEP)");
    assert_int_equal(hbg_bound_create(1, NULL, &bd), HBG_E_INVAL);
    assert_string_equal(hbg_bound_last_error(), "hbg_bound_create: 1 tensors but no array of them (NULL)");
    assert_int_equal(hbg_bound_create(1, ok, NULL), HBG_E_INVAL);
    assert_string_equal(hbg_bound_last_error(), "hbg_bound_create: no place for the bound (out is NULL)");
    assert_int_equal(hbg_bound_create(HBG_MAX_BOUNDARY_TENSORS, wide, &bd), HBG_OK);
    hbg_bound_destroy(bd);
    assert_int_equal(hbg_bound_create(1, ok, &bd), HBG_OK);
    uint64_t s0 = bd->stamp;
    assert_int_equal(hbg_bound_set(bd, 1, &v, HBG_IN), HBG_E_INVAL);
    assert_string_equal(hbg_bound_last_error(), "hbg_bound_set: slot 1, but the bound has 1");
    assert_int_equal(hbg_bound_set(bd, 0, NULL, HBG_IN), HBG_E_INVAL);
    assert_string_equal(hbg_bound_last_error(), "hbg_bound_set: slot 0: no tensor (NULL)");
    assert_int_equal(hbg_bound_set(bd, 0, &v, HBG_OUT_ALLOC), HBG_E_INVAL);
    assert_int_equal(hbg_bound_set(bd, 0, &v, 5), HBG_E_INVAL);
    assert_string_equal(hbg_bound_last_error(), "hbg_bound_set: slot 0: direction 5 is none a bound holds (HBG_IN, "
                                                "HBG_INOUT, HBG_OUT, HBG_NO_DEP)");
    assert_int_equal(hbg_bound_set(NULL, 0, &v, HBG_IN), HBG_E_INVAL);
    assert_string_equal(hbg_bound_last_error(), "hbg_bound_set: no bound (NULL)");
    assert_true(bd->stamp == s0);
    hbg_tensor got;
    uint8_t dir;
    assert_int_equal(hbg_bound_count(NULL), 0);
    assert_int_equal(hbg_bound_get(NULL, 0, &got, &dir), HBG_E_INVAL);
    assert_string_equal(hbg_bound_last_error(), "hbg_bound_get: no bound (NULL)");
    assert_int_equal(hbg_bound_get(bd, 1, &got, &dir), HBG_E_INVAL);
    assert_int_equal(hbg_bound_get(bd, 0, NULL, &dir), HBG_E_INVAL);
    assert_int_equal(hbg_bound_get(bd, 0, &got, &dir), HBG_OK);
    assert_memory_equal(&got, &v, sizeof v);
    assert_int_equal(dir, HBG_IN);
    hbg_bound_destroy(NULL);

    hbg_orch *o = orch(false);
    hbg_task_id id = 5;
    assert_int_equal(hbg_submit_graph_bound(o, 3, body, NULL, bd, NULL, 0, &id), HBG_E_STATE);
    assert_int_equal(id, HBG_TASK_NONE);
    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    assert_int_equal(hbg_submit_graph_bound(o, 3, body, NULL, NULL, NULL, 0, &id), HBG_E_INVAL);
    assert_string_equal(hbg_orch_last_error(o), "task 0 (graph key 0x3): no bound (NULL)");
    assert_int_equal(hbg__orch_end_pass(o), HBG_E_INVAL);
    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0); /* the first failure of a pass is the one named */
    hbg_boundary rest = {.ntensors = 1, .args = ok};
    assert_int_equal(hbg_submit_graph_bound(o, 3, body, NULL, bd, &rest, 0, &id), HBG_E_INVAL);
    assert_string_equal(hbg_orch_last_error(o),
                        "task 0 (graph key 0x3): `rest` names 1 tensors; a bound call's tensors are the bound's");
    assert_int_equal(hbg__orch_end_pass(o), HBG_E_INVAL);
    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    rest.ntensors = 0;
    assert_int_equal(hbg_submit_graph_bound(o, 3, body, NULL, bd, &rest, 0, &id), HBG_E_INVAL);
    assert_string_equal(hbg_orch_last_error(o),
                        "task 0 (graph key 0x3): `rest` has a tensor list (args); a bound call's tensors are the "
                        "bound's");
    assert_int_equal(hbg__orch_end_pass(o), HBG_E_INVAL);
    /* the same for a task */
    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    hbg_task t = {.kernel_aiv = 1, .core = HBG_CORE_AIV, .ntensors = 1, .args = ok};
    assert_int_equal(hbg_submit_task_bound(o, &t, bd, &id), HBG_E_INVAL);
    assert_int_equal(id, HBG_TASK_NONE);
    assert_string_equal(hbg_orch_last_error(o), "task 0: the task names 1 tensors; a bound call's tensors are the "
                                                "bound's");
    assert_int_equal(hbg__orch_end_pass(o), HBG_E_INVAL);
    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    t.ntensors = 0, t.args = NULL;
    assert_int_equal(hbg_submit_task_bound(o, &t, NULL, &id), HBG_E_INVAL);
    assert_string_equal(hbg_orch_last_error(o), "task 0: no bound (NULL)");
    assert_int_equal(hbg__orch_end_pass(o), HBG_E_INVAL);
    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    assert_int_equal(hbg_submit_task_bound(o, NULL, bd, &id), HBG_E_INVAL);
    assert_string_equal(hbg_orch_last_error(o), "task 0: no task (NULL)");
    hbg__orch_end_pass(o);
    hbg__orch_destroy(o);
    hbg_bound_destroy(bd);
}

/* After two good nodes, the body makes one of the refused calls. */
static int refusal;

static hbg_status refusing_body(hbg_orch *o, void *ctx, const hbg_boundary *b)
{
    hbg_status st = body(o, ctx, b);
    hbg_task t = {.kernel_aiv = 1, .core = HBG_CORE_AIV};
    hbg_task_id id;
    if (st)
        return st;
    switch (refusal) {
    case 0: return hbg_submit_task(o, NULL, &id);
    case 1: return hbg_submit_task_bound(o, &t, NULL, &id);
    case 2: return hbg_submit_task_bound(o, NULL, NULL, &id);
    default: return hbg_alloc_tensors(o, 1, NULL, &id);
    }
}

/* A call refused inside a body before the recorder sees it is named at
 * the node it would have made, as the recorder's own refusals are, not
 * at the window's next task. */
static void a_refusal_in_a_body_names_its_node(void **state)
{
    (void)state;
    static const char *const want[] = {
        "graph key 0x9 node 2: no task (NULL)",
        "graph key 0x9 node 2: no bound (NULL)",
        "graph key 0x9 node 2: no task (NULL)",
        "graph key 0x9 node 2: no list of tensors to allocate (NULL)",
    };
    for (refusal = 0; refusal < 4; refusal++) {
        hbg_orch *o = orch(false);
        hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
        hbg_task_id id;
        hbg_arg v[] = {{&x, HBG_IN}, {&y, HBG_INOUT}};
        hbg_boundary b = {.ntensors = 2, .args = v};
        assert_int_equal(hbg_submit_graph(o, 9, refusing_body, NULL, &b, 0, &id), HBG_E_INVAL);
        assert_string_equal(hbg_orch_last_error(o), want[refusal]);
        hbg__orch_end_pass(o);
        hbg__orch_destroy(o);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(a_bound_call_binds_as_a_boundary_call, setup),
        cmocka_unit_test_setup(a_set_slot_is_a_new_boundary, setup),
        cmocka_unit_test_setup(a_body_that_changes_its_bound, setup),
        cmocka_unit_test_setup(rest_gives_scalars_and_deps, setup),
        cmocka_unit_test_setup(a_bound_task_is_answered_by_its_stamp, setup),
        cmocka_unit_test_setup(a_graph_call_refuses_a_pass_through_slot, setup),
        cmocka_unit_test_setup(bad_arguments_are_refused, setup),
        cmocka_unit_test_setup(a_refusal_in_a_body_names_its_node, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
