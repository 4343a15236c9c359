/* Dependency inference through the tensor map. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support/orch_fixture.h"

static void disjoint_views_no_edge(void **state)
{
    (void)state;
    hbg_orch *o = fx_orch(64, 1 << 20);
    hbg_tensor buf = fx_buf(0x1000, 8, 8);
    /* Left and right halves interleave in bytes (row by row) but not in
     * elements: the per-dimension test must see them as disjoint. */
    hbg_tensor left = fx_tile(&buf, 0, 0, 8, 4), right = fx_tile(&buf, 0, 4, 8, 4);
    hbg_task_id w, r;
    hbg_arg wa[] = {{&left, HBG_OUT}};
    assert_int_equal(fx_task(o, 1, wa, &w), HBG_OK);
    hbg_arg ra[] = {{&right, HBG_IN}};
    assert_int_equal(fx_task(o, 1, ra, &r), HBG_OK);
    assert_false(fx_has_edge(o, w, r));
    assert_int_equal(fx_fanin_count(o, r), 0);
    /* Disjoint rows, also disjoint in bytes. */
    hbg_tensor top = fx_tile(&buf, 0, 0, 4, 8), bottom = fx_tile(&buf, 4, 0, 4, 8);
    hbg_arg wb[] = {{&top, HBG_OUT}};
    hbg_arg rb[] = {{&bottom, HBG_IN}};
    hbg_task_id w2, r2;
    assert_int_equal(fx_task(o, 1, wb, &w2), HBG_OK);
    assert_int_equal(fx_task(o, 1, rb, &r2), HBG_OK);
    assert_false(fx_has_edge(o, w2, r2));
    /* A different buffer never depends. */
    hbg_tensor other = fx_buf(0x9000, 8, 8);
    hbg_arg ro[] = {{&other, HBG_IN}};
    hbg_task_id r3;
    assert_int_equal(fx_task(o, 1, ro, &r3), HBG_OK);
    assert_int_equal(fx_fanin_count(o, r3), 0);
    hbg__orch_destroy(o);
}

static void overlapping_views_edge(void **state)
{
    (void)state;
    hbg_orch *o = fx_orch(64, 1 << 20);
    hbg_tensor buf = fx_buf(0x1000, 8, 8);
    hbg_tensor a = fx_tile(&buf, 0, 0, 4, 4), b = fx_tile(&buf, 3, 3, 2, 2);
    hbg_task_id w, r, rw;
    hbg_arg wa[] = {{&a, HBG_OUT}};
    hbg_arg ra[] = {{&b, HBG_IN}};
    assert_int_equal(fx_task(o, 1, wa, &w), HBG_OK);
    assert_int_equal(fx_task(o, 1, ra, &r), HBG_OK);
    assert_true(fx_has_edge(o, w, r));
    /* INOUT reads too. */
    hbg_arg ia[] = {{&b, HBG_INOUT}};
    assert_int_equal(fx_task(o, 1, ia, &rw), HBG_OK);
    assert_true(fx_has_edge(o, w, rw));
    /* Different layouts (a transposed-stride view): decided by bytes. */
    int64_t tstr[2] = {1, 8};
    uint32_t tshape[2] = {2, 2};
    hbg_tensor tv = hbg_tensor_view(&buf, 0, 2, tshape, tstr);
    hbg_arg ta[] = {{&tv, HBG_IN}};
    hbg_task_id rt;
    assert_int_equal(fx_task(o, 1, ta, &rt), HBG_OK);
    assert_true(fx_has_edge(o, w, rt));
    hbg__orch_destroy(o);
}

/* A window whose rows are longer than the row stride reaches into the
 * rows below its box: rows 0..1 of a 3 x 4 buffer, 6 wide, touch
 * elements 0..9, and so element 8..9 of row 2, which a writer of row 2
 * alone wrote. The boxes ([0,2) x [0,6) and [2,3) x [0,4)) are apart. */
static void a_window_past_its_stride_finds_the_row_below(void **state)
{
    (void)state;
    hbg_orch *o = fx_orch(64, 1 << 20);
    hbg_tensor buf = fx_buf(0x1000, 3, 4);
    int64_t st[2] = {4, 1};
    uint32_t row[2] = {1, 4}, win[2] = {2, 6};
    hbg_tensor r2 = hbg_tensor_view(&buf, 8, 2, row, st), w = hbg_tensor_view(&buf, 0, 2, win, st);
    hbg_task_id wr, rd, wr2;
    hbg_arg wa[] = {{&r2, HBG_OUT}};
    hbg_arg ra[] = {{&w, HBG_IN}};
    assert_int_equal(fx_task(o, 1, wa, &wr), HBG_OK);
    assert_int_equal(fx_task(o, 1, ra, &rd), HBG_OK);
    assert_true(fx_has_edge(o, wr, rd));
    /* and the other way: a write through the window waits for the read of
     * row 2 only through the writer it follows (the map tracks writers) */
    hbg_arg wwa[] = {{&w, HBG_OUT}};
    assert_int_equal(fx_task(o, 1, wwa, &wr2), HBG_OK);
    hbg_task_id rd2;
    hbg_arg rra[] = {{&r2, HBG_IN}};
    assert_int_equal(fx_task(o, 1, rra, &rd2), HBG_OK);
    assert_true(fx_has_edge(o, wr2, rd2));
    hbg__orch_destroy(o);
}

static void covering_inout_retires(void **state)
{
    (void)state;
    hbg_orch *o = fx_orch(64, 1 << 20);
    hbg_tensor buf = fx_buf(0x1000, 8, 8);
    hbg_tensor q = fx_tile(&buf, 0, 0, 4, 4);
    hbg_task_id w1, w2, cover, r, partial, r2;
    hbg_arg a1[] = {{&q, HBG_OUT}};
    assert_int_equal(fx_task(o, 1, a1, &w1), HBG_OK);
    hbg_tensor q2 = fx_tile(&buf, 4, 4, 4, 4);
    hbg_arg a2[] = {{&q2, HBG_OUT}};
    assert_int_equal(fx_task(o, 1, a2, &w2), HBG_OK);
    hbg_arg ac[] = {{&buf, HBG_INOUT}};
    assert_int_equal(fx_task(o, 1, ac, &cover), HBG_OK);
    assert_true(fx_has_edge(o, w1, cover));
    assert_true(fx_has_edge(o, w2, cover));
    hbg_arg ar[] = {{&q, HBG_IN}};
    assert_int_equal(fx_task(o, 1, ar, &r), HBG_OK);
    /* Only the covering writer remains reachable. */
    assert_true(fx_has_edge(o, cover, r));
    assert_false(fx_has_edge(o, w1, r));
    assert_int_equal(fx_fanin_count(o, r), 1);
    /* A partial INOUT does not retire the covering writer. */
    hbg_arg ap[] = {{&q2, HBG_INOUT}};
    assert_int_equal(fx_task(o, 1, ap, &partial), HBG_OK);
    hbg_tensor whole = buf;
    hbg_arg ar2[] = {{&whole, HBG_IN}};
    assert_int_equal(fx_task(o, 1, ar2, &r2), HBG_OK);
    assert_true(fx_has_edge(o, cover, r2));
    assert_true(fx_has_edge(o, partial, r2));
    assert_int_equal(fx_fanin_count(o, r2), 2);
    hbg__orch_destroy(o);
}

static void manual_scope_explicit_only(void **state)
{
    (void)state;
    hbg_orch *o = fx_orch(64, 1 << 20);
    hbg_tensor buf = fx_buf(0x1000, 4, 4);
    hbg_task_id w, m1, m2, after;
    hbg_arg wa[] = {{&buf, HBG_OUT}};
    assert_int_equal(fx_task(o, 1, wa, &w), HBG_OK);
    assert_int_equal(hbg_scope_begin(o, HBG_SCOPE_MANUAL), HBG_OK);
    hbg_arg ra[] = {{&buf, HBG_INOUT}};
    assert_int_equal(fx_task(o, 1, ra, &m1), HBG_OK);
    assert_int_equal(fx_fanin_count(o, m1), 0);
    hbg_task t = {.kernel_aic = HBG_KERNEL_NONE, .kernel_aiv = 1, .core = HBG_CORE_AIV, .blocks = 1,
                  .ntensors = 1, .args = ra, .ndeps = 1, .deps = &w};
    assert_int_equal(hbg_submit_task(o, &t, &m2), HBG_OK);
    assert_int_equal(fx_fanin_count(o, m2), 1);
    assert_true(fx_has_edge(o, w, m2));
    /* AUTO inside MANUAL is an error and leaves the scope stack intact. */
    assert_int_equal(hbg_scope_begin(o, HBG_SCOPE_AUTO), HBG_E_SCOPE);
    assert_int_equal(hbg_scope_end(o), HBG_OK);
    /* Writes inside the MANUAL scope were registered: an AUTO reader sees
     * the last in-place writer (which retired the earlier ones). */
    hbg_arg rd[] = {{&buf, HBG_IN}};
    assert_int_equal(fx_task(o, 1, rd, &after), HBG_OK);
    assert_true(fx_has_edge(o, m2, after));
    assert_int_equal(fx_fanin_count(o, after), 1);
    assert_int_equal(hbg_scope_end(o), HBG_E_SCOPE);
    hbg__orch_destroy(o);
}

static void creator_edges(void **state)
{
    (void)state;
    hbg_orch *o = fx_orch(64, 1 << 20);
    uint32_t shape[1] = {16};
    hbg_tensor out = hbg_tensor_desc(HBG_F32, 1, shape);
    hbg_arg oa[] = {{&out, HBG_OUT_ALLOC}};
    hbg_task_id prod, cons, alloc, cons2;
    assert_int_equal(fx_task(o, 1, oa, &prod), HBG_OK);
    assert_true(out.addr >= FAKE_HEAP_BASE);
    assert_int_equal(out.nbytes, 64);
    assert_int_equal(out.creator, prod + 1);
    hbg_arg ia[] = {{&out, HBG_IN}};
    assert_int_equal(fx_task(o, 1, ia, &cons), HBG_OK);
    assert_true(fx_has_edge(o, prod, cons));

    hbg_tensor a = hbg_tensor_desc(HBG_F32, 1, shape), b = hbg_tensor_desc(HBG_F32, 1, shape);
    hbg_tensor *ts[] = {&a, &b};
    assert_int_equal(hbg_alloc_tensors(o, 2, ts, &alloc), HBG_OK);
    assert_int_equal(a.creator, alloc + 1);
    assert_true(b.addr >= a.addr + 64);
    /* An alloc task completes on the host before anything can read its
     * buffers: no edge to it. The first kernel writing the buffer is the
     * one its readers wait for. */
    hbg_arg ib[] = {{&b, HBG_IN}};
    assert_int_equal(fx_task(o, 1, ib, &cons2), HBG_OK);
    assert_false(fx_has_edge(o, alloc, cons2));
    assert_int_equal(fx_fanin_count(o, cons2), 0);
    assert_int_equal(o->img.tasks[alloc].kind, HBG_TASK_ALLOC);
    hbg_task_id w, r;
    hbg_arg wb[] = {{&b, HBG_OUT}};
    assert_int_equal(fx_task(o, 1, wb, &w), HBG_OK);
    assert_int_equal(fx_task(o, 1, ib, &r), HBG_OK);
    assert_true(fx_has_edge(o, w, r));
    hbg__orch_destroy(o);
}

static void fanins_deduplicated(void **state)
{
    (void)state;
    hbg_orch *o = fx_orch(64, 1 << 20);
    hbg_tensor buf = fx_buf(0x1000, 4, 4);
    hbg_tensor r0 = fx_tile(&buf, 0, 0, 1, 4), r1 = fx_tile(&buf, 1, 0, 1, 4);
    hbg_task_id w, c;
    hbg_arg wa[] = {{&r0, HBG_OUT}, {&r1, HBG_OUT}};
    assert_int_equal(fx_task(o, 2, wa, &w), HBG_OK);
    /* Three reads of regions the same task wrote, plus the same explicit
     * dep twice: one fanin. */
    hbg_arg ra[] = {{&r0, HBG_IN}, {&r1, HBG_IN}, {&buf, HBG_IN}};
    hbg_task_id deps[] = {w, w};
    hbg_task t = {.kernel_aic = HBG_KERNEL_NONE, .kernel_aiv = 1, .core = HBG_CORE_AIV, .blocks = 1,
                  .ntensors = 3, .args = ra, .ndeps = 2, .deps = deps};
    assert_int_equal(hbg_submit_task(o, &t, &c), HBG_OK);
    assert_int_equal(fx_fanin_count(o, c), 1);
    assert_true(fx_has_edge(o, w, c));
    hbg__orch_destroy(o);
}

static void bad_dep_rejected(void **state)
{
    (void)state;
    hbg_orch *o = fx_orch(64, 1 << 20);
    hbg_task_id dep = 5, id;
    assert_int_equal(hbg_submit_dummy(o, 1, &dep, &id), HBG_E_BAD_DEP);
    assert_int_equal(id, HBG_TASK_NONE);
    assert_int_equal(hbg_orch_task_count(o), 0);
    assert_int_equal(hbg_orch_error(o), HBG_E_BAD_DEP);
    hbg__orch_destroy(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(disjoint_views_no_edge),   cmocka_unit_test(overlapping_views_edge),
        cmocka_unit_test(a_window_past_its_stride_finds_the_row_below),
        cmocka_unit_test(covering_inout_retires),   cmocka_unit_test(manual_scope_explicit_only),
        cmocka_unit_test(creator_edges),            cmocka_unit_test(fanins_deduplicated),
        cmocka_unit_test(bad_dep_rejected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
