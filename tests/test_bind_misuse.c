/* The runtime against a caller that misuses it, through the public API
 * only: each misuse is a status (and, in a pass, a reason in words), and
 * the runtime goes on working. Also a long run whose Graph body changes
 * its content every pass, which must not exhaust the device's table of
 * Definitions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "hbg/device.h"
#include "hbg/graph.h"
#include "hbg/runtime.h"

#define K_ADD 1 /* x[i] += scalar 0, over the whole tensor */
#define N 64

static int k_add(const hbg_kernel_args *a)
{
    if (a->ntensors != 1 || a->nscalars != 1)
        return 1;
    int32_t *x = (int32_t *)(uintptr_t)(a->tensors[0].addr + a->tensors[0].offset * 4);
    for (uint32_t i = 0; i < a->tensors[0].shape[0]; i++)
        x[i] += (int32_t)a->scalars[0];
    return 0;
}

typedef struct rig {
    hbg_device *dev;
    hbg_kernel_table *kt;
    hbg_runtime *rt;
    int32_t x[N];
    hbg_host_tensor arg;
} rig;

static void rig_open_sim(rig *r, uint64_t def_pool_bytes, const hbg_sim_config *sim)
{
    memset(r, 0, sizeof *r);
    assert_int_equal(hbg_sim_open(sim, &r->dev), HBG_OK);
    assert_int_equal(hbg_kernel_table_create(&r->kt), HBG_OK);
    assert_int_equal(hbg_kernel_register(r->kt, K_ADD, "add", k_add), HBG_OK);
    hbg_runtime_config rc = {.device = r->dev, .kernels = r->kt, .records_fd = -1, .nranks = 1,
                             .def_pool_bytes = def_pool_bytes};
    assert_int_equal(hbg_runtime_create(&rc, &r->rt), HBG_OK);
    r->arg = (hbg_host_tensor){.name = "x", .host = r->x, .layout = hbg_tensor_desc(HBG_I32, 1, (uint32_t[]){N}),
                               .dir = HBG_INOUT};
}

static void rig_open(rig *r, uint64_t def_pool_bytes)
{
    rig_open_sim(r, def_pool_bytes, NULL);
}

static void rig_close(rig *r)
{
    hbg_runtime_destroy(r->rt);
    hbg_kernel_table_destroy(r->kt);
    hbg_device_close(r->dev);
}

static hbg_status run(rig *r, hbg_orch_fn fn, void *ctx, hbg_pass_report *rep)
{
    hbg_program p = {.name = "misuse", .orch = fn, .ctx = ctx, .nargs = 1, .args = &r->arg};
    return hbg_runtime_run(r->rt, &p, false, rep);
}

/* One task adding `v` to x. */
static hbg_status add(hbg_orch *o, hbg_tensor *x, uint64_t v)
{
    hbg_arg a = {x, HBG_INOUT};
    hbg_task t = {.kernel_aic = K_ADD, .ntensors = 1, .args = &a, .nscalars = 1, .scalars = &v};
    return hbg_submit_task(o, &t, NULL);
}

static hbg_status add_one(hbg_orch *o, void *ctx)
{
    (void)ctx;
    return add(o, hbg_orch_arg(o, 0), 1);
}

/* A run from inside a pass of the same runtime: the orchestration adds 1,
 * calls hbg_runtime_run (a program that would add 100), adds 10. */
typedef struct nested {
    rig *r;
    hbg_status inner;
    hbg_pass_report rep;
    char why[HBG_PASS_ERROR_MAX];
} nested;

static hbg_status add_100(hbg_orch *o, void *ctx)
{
    (void)ctx;
    return add(o, hbg_orch_arg(o, 0), 100);
}

static hbg_status run_inside(hbg_orch *o, void *ctx)
{
    nested *n = ctx;
    hbg_status st = add(o, hbg_orch_arg(o, 0), 1);
    memset(&n->rep, 0xa5, sizeof n->rep);
    n->inner = run(n->r, add_100, NULL, &n->rep);
    snprintf(n->why, sizeof n->why, "%s", hbg_runtime_last_error());
    return st ? st : add(o, hbg_orch_arg(o, 0), 10);
}

#define BUSY                                                                                                           \
    "the runtime is in use: a pass of it is under way (called from its orchestration, a Graph body or a kernel of "    \
    "its device run, or from another thread), or hbg_runtime_set_breakdown on another thread"

/* HBG_E_STATE, the report it was given untouched, its words in
 * hbg_runtime_last_error (they were nowhere), and the outer pass ships
 * its own two tasks (x + 11), not the inner program's. */
static void a_run_inside_a_pass_is_refused(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, 0);
    nested n = {.r = &r};
    hbg_pass_report rep;
    assert_int_equal(run(&r, run_inside, &n, &rep), HBG_OK);
    assert_int_equal(n.inner, HBG_E_STATE);
    unsigned char untouched[sizeof n.rep];
    memset(untouched, 0xa5, sizeof untouched);
    assert_memory_equal(&n.rep, untouched, sizeof untouched);
    assert_string_equal(n.why, BUSY);
    assert_int_equal(rep.tasks, 2);
    for (int i = 0; i < N; i++)
        assert_int_equal(r.x[i], 11);
    rig_close(&r);
}

/* The breakdown switch turned from inside a pass: refused, with words. */
static hbg_status switch_inside(hbg_orch *o, void *ctx)
{
    nested *n = ctx;
    n->inner = hbg_runtime_set_breakdown(n->r->rt, true);
    snprintf(n->why, sizeof n->why, "%s", hbg_runtime_last_error());
    return add(o, hbg_orch_arg(o, 0), 1);
}

/* Every refusal that has no report to write says why in
 * hbg_runtime_last_error (a NULL runtime or report, or a switch turned
 * during a pass, left no words anywhere); a run that reaches its report
 * writes that instead, and leaves the last words as they were. */
static void refusals_without_a_report_are_named(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, 0);
    hbg_program p = {.name = "misuse", .orch = add_one, .nargs = 1, .args = &r.arg};
    hbg_pass_report rep;
    assert_int_equal(hbg_runtime_run(NULL, &p, false, &rep), HBG_E_INVAL);
    assert_string_equal(hbg_runtime_last_error(), "no runtime (rt is NULL)");
    assert_int_equal(hbg_runtime_run(r.rt, &p, false, NULL), HBG_E_INVAL);
    assert_string_equal(hbg_runtime_last_error(), "no report (rep is NULL)");
    assert_int_equal(hbg_runtime_run(r.rt, NULL, false, &rep), HBG_E_INVAL);
    assert_string_equal(rep.error, "no program (hbg_program is NULL)");
    assert_string_equal(hbg_runtime_last_error(), "no report (rep is NULL)");
    assert_int_equal(hbg_runtime_set_breakdown(NULL, true), HBG_E_INVAL);
    assert_string_equal(hbg_runtime_last_error(), "no runtime (rt is NULL)");
    nested n = {.r = &r};
    assert_int_equal(run(&r, switch_inside, &n, &rep), HBG_OK);
    assert_int_equal(n.inner, HBG_E_STATE);
    assert_string_equal(n.why, BUSY);
    assert_int_equal(r.x[0], 1);
    /* a success clears nothing */
    assert_int_equal(hbg_runtime_set_breakdown(r.rt, false), HBG_OK);
    assert_string_equal(hbg_runtime_last_error(), BUSY);
    rig_close(&r);
}

static hbg_status leave_scope_open(hbg_orch *o, void *ctx)
{
    (void)ctx;
    hbg_status st = add(o, hbg_orch_arg(o, 0), 1);
    return st ? st : hbg_scope_begin(o, HBG_SCOPE_MANUAL);
}

/* A pass that ends with a scope open fails, saying so; the next runs. */
static void an_open_scope_is_named(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, 0);
    hbg_pass_report rep;
    assert_int_equal(run(&r, leave_scope_open, NULL, &rep), HBG_E_SCOPE);
    assert_string_equal(rep.error, "task 1: the pass ended with 1 scope(s) open (an hbg_scope_begin without its "
                                   "hbg_scope_end)");
    assert_int_equal(run(&r, add_one, NULL, &rep), HBG_OK);
    assert_int_equal(r.x[0], 1);
    rig_close(&r);
}

/* fn's pass fails with st and the reason why, and eager mode refuses it
 * with st too. */
static void refused_both(hbg_orch_fn fn, hbg_status st, const char *why)
{
    rig r;
    rig_open(&r, 0);
    hbg_pass_report rep;
    assert_int_equal(run(&r, fn, NULL, &rep), st);
    assert_string_equal(rep.error, why);
    hbg_program p = {.name = "eager", .orch = fn, .nargs = 1, .args = &r.arg};
    assert_int_equal(hbg_eager_run(&p, r.kt, 1 << 20, 0, 1, NULL), st);
    rig_close(&r);
}

/* A predicate whose tensor names no buffer. */
static hbg_status pred_without_buffer(hbg_orch *o, void *ctx)
{
    (void)ctx;
    hbg_tensor w = hbg_tensor_desc(HBG_U32, 1, (uint32_t[]){4});
    hbg_pred p = {.t = &w, .op = HBG_CMP_EQ, .elem_size = 4};
    hbg_task t = {.pred = &p};
    return hbg_submit_task(o, &t, NULL);
}

/* Refused at submit, on the device and eagerly alike (eager mode would
 * read the word at address 0). */
static void a_predicate_needs_a_buffer(void **state)
{
    (void)state;
    refused_both(pred_without_buffer, HBG_E_ARG_NO_BUFFER, "task 0: the predicate's tensor names no buffer (addr 0)");
}

static hbg_status too_many_blocks(hbg_orch *o, void *ctx)
{
    (void)ctx;
    hbg_task t = {.blocks = HBG_MAX_BLOCKS + 1};
    return hbg_submit_task(o, &t, NULL);
}

/* More blocks than the device takes: refused at submit, eagerly too
 * (eager mode ran what the device then refused). */
static void blocks_past_the_device_limit(void **state)
{
    (void)state;
    refused_both(too_many_blocks, HBG_E_INVAL, "task 0: 65537 blocks, the limit is 65536");
}

/* A scalar marked as a boundary slot: outside any body it names nothing
 * (HBG_E_INVAL); in a body, past its boundary's scalars, it is one the
 * body cannot express (HBG_E_GRAPH_CAPTURE, graph.h). The two were
 * swapped, and neither said why. */
static hbg_status slot_outside_body(hbg_orch *o, void *ctx)
{
    (void)ctx;
    static const uint64_t sc[1] = {1};
    static const int16_t sl[1] = {70};
    hbg_arg a = {hbg_orch_arg(o, 0), HBG_INOUT};
    hbg_task t = {.kernel_aic = K_ADD, .ntensors = 1, .args = &a, .nscalars = 1, .scalars = sc, .scalar_slots = sl};
    return hbg_submit_task(o, &t, NULL);
}

static hbg_status slot_body(hbg_orch *o, void *ctx, const hbg_boundary *b)
{
    (void)ctx;
    static const uint64_t sc[1] = {1};
    static const int16_t sl[1] = {70};
    hbg_arg a = {b->args[0].t, HBG_INOUT};
    hbg_task t = {.kernel_aic = K_ADD, .ntensors = 1, .args = &a, .nscalars = 1, .scalars = sc, .scalar_slots = sl};
    return hbg_submit_task(o, &t, NULL);
}

static hbg_status slot_in_body(hbg_orch *o, void *ctx)
{
    (void)ctx;
    hbg_arg ba = {hbg_orch_arg(o, 0), HBG_INOUT};
    hbg_boundary b = {.ntensors = 1, .args = &ba};
    return hbg_submit_graph(o, 3, slot_body, NULL, &b, 0, NULL);
}

static hbg_status slot_below_static(hbg_orch *o, void *ctx)
{
    (void)ctx;
    static const uint64_t sc[2] = {1, 2};
    static const int16_t sl[2] = {-1, -7};
    hbg_arg a = {hbg_orch_arg(o, 0), HBG_INOUT};
    hbg_task t = {.kernel_aic = K_ADD, .ntensors = 1, .args = &a, .nscalars = 2, .scalars = sc, .scalar_slots = sl};
    return hbg_submit_task(o, &t, NULL);
}

static int16_t memo_mark = -1;

static hbg_status slot_marked(hbg_orch *o, void *ctx)
{
    (void)ctx;
    static const uint64_t sc[1] = {1};
    const int16_t sl[1] = {memo_mark};
    hbg_arg a = {hbg_orch_arg(o, 0), HBG_INOUT};
    hbg_task t = {.kernel_aic = K_ADD, .ntensors = 1, .args = &a, .nscalars = 1, .scalars = sc, .scalar_slots = sl};
    return hbg_submit_task(o, &t, NULL);
}

/* The task memo answers a submit that repeats the last pass's without
 * checking it again: a -7 after a pass of -1 was a hit, and ran. */
static void a_bad_mark_is_no_memo_hit(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, 0);
    hbg_pass_report rep;
    memo_mark = -1;
    assert_int_equal(run(&r, slot_marked, NULL, &rep), HBG_OK);
    assert_int_equal(run(&r, slot_marked, NULL, &rep), HBG_OK);
    memo_mark = -7;
    assert_int_equal(run(&r, slot_marked, NULL, &rep), HBG_E_INVAL);
    assert_string_equal(rep.error, "task 0: scalar 0 is marked -7: a mark is -1 (a static scalar) or a boundary "
                                   "scalar's index");
    assert_int_equal(r.x[0], 2);
    memo_mark = -1;
    rig_close(&r);
}

static void a_scalar_slot_is_named(void **state)
{
    (void)state;
    /* taken as static, silently, before */
    refused_both(slot_below_static, HBG_E_INVAL,
                 "task 0: scalar 1 is marked -7: a mark is -1 (a static scalar) or a boundary scalar's index");
    refused_both(slot_outside_body, HBG_E_INVAL,
                 "task 0: scalar 0 is marked boundary scalar 70 outside any Graph body (-1 marks a static scalar)");
    refused_both(slot_in_body, HBG_E_GRAPH_CAPTURE,
                 "graph key 0x3 node 0: scalar 0 is marked boundary scalar 70, but the Graph's boundary has 0 "
                 "scalars");
}

/* Scopes: each misuse named. */
static hbg_status too_deep(hbg_orch *o, void *ctx)
{
    (void)ctx;
    hbg_status st = HBG_OK;
    for (int i = 0; i < 100 && !st; i++)
        st = hbg_scope_begin(o, HBG_SCOPE_AUTO);
    return st;
}

static hbg_status auto_in_manual(hbg_orch *o, void *ctx)
{
    (void)ctx;
    hbg_status st = hbg_scope_begin(o, HBG_SCOPE_MANUAL);
    return st ? st : hbg_scope_begin(o, HBG_SCOPE_AUTO);
}

static hbg_status end_alone(hbg_orch *o, void *ctx)
{
    (void)ctx;
    return hbg_scope_end(o);
}

/* A Graph body that ends its caller's scope and begins a MANUAL one of
 * its own: the caller's tasks after the call lost their inferred edges,
 * every call returning HBG_OK. */
static hbg_status swap_scope_body(hbg_orch *o, void *ctx, const hbg_boundary *b)
{
    (void)ctx;
    hbg_status st = hbg_scope_end(o);
    if (!st)
        st = hbg_scope_begin(o, HBG_SCOPE_MANUAL);
    return st ? st : add(o, b->args[0].t, 1);
}

static hbg_status open_scope_body(hbg_orch *o, void *ctx, const hbg_boundary *b)
{
    (void)ctx;
    hbg_status st = hbg_scope_begin(o, HBG_SCOPE_MANUAL);
    return st ? st : add(o, b->args[0].t, 1);
}

static hbg_graph_body scope_body;

static hbg_status scope_in_body(hbg_orch *o, void *ctx)
{
    (void)ctx;
    hbg_status st = hbg_scope_begin(o, HBG_SCOPE_AUTO);
    hbg_arg ba = {hbg_orch_arg(o, 0), HBG_INOUT};
    hbg_boundary b = {.ntensors = 1, .args = &ba};
    if (!st)
        st = hbg_submit_graph(o, 4, scope_body, NULL, &b, 0, NULL);
    if (!st)
        st = add(o, hbg_orch_arg(o, 0), 10);
    return st ? st : hbg_scope_end(o);
}

static void a_body_keeps_out_of_its_callers_scopes(void **state)
{
    (void)state;
    scope_body = swap_scope_body;
    refused_both(scope_in_body, HBG_E_SCOPE, "graph key 0x4 node 0: hbg_scope_end in a Graph body ends a scope of "
                                             "its caller's");
    scope_body = open_scope_body;
    refused_both(scope_in_body, HBG_E_SCOPE, "graph key 0x4 node 1: a Graph body left 1 scope open");
}

/* A status that is no hbg_status, from the program's own code: the pass
 * fails as HBG_E_ORCH in words (999 was passed on, "unknown status"). */
static hbg_status returns_999(hbg_orch *o, void *ctx)
{
    (void)o;
    (void)ctx;
    return (hbg_status)999;
}

static hbg_status fails_555(hbg_orch *o, void *ctx)
{
    (void)ctx;
    return hbg_orch_fail(o, (hbg_status)555, "layer %d is short", 3);
}

static hbg_status body_999(hbg_orch *o, void *ctx, const hbg_boundary *b)
{
    (void)o;
    (void)ctx;
    (void)b;
    return (hbg_status)999;
}

static hbg_status graph_999(hbg_orch *o, void *ctx)
{
    (void)ctx;
    hbg_arg ba = {hbg_orch_arg(o, 0), HBG_INOUT};
    hbg_boundary b = {.ntensors = 1, .args = &ba};
    hbg_status st = hbg_submit_graph(o, 5, body_999, NULL, &b, 0, NULL);
    return st == HBG_E_ORCH ? HBG_OK : HBG_E_INVAL; /* the pass has failed all the same */
}

/* A message cut to fit (255 bytes) ends on a whole character, in every
 * place it is cut: a lone lead byte of "é" ended it. */
static hbg_status fails_long(hbg_orch *o, void *ctx)
{
    (void)ctx;
    char e[601];
    for (int i = 0; i < 600; i += 2)
        memcpy(e + i, "\xc3\xa9", 2);
    e[600] = 0;
    return hbg_orch_fail(o, HBG_E_INVAL, "x%s", e);
}

static bool ends_whole(const char *s)
{
    size_t n = strlen(s), j = n - 1; /* the last byte that is no continuation */
    while (j > 0 && ((unsigned char)s[j] & 0xc0) == 0x80)
        j--;
    unsigned char c = (unsigned char)s[j];
    size_t need = c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
    return n - j == need;
}

static void a_cut_message_ends_on_a_whole_character(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, 0);
    hbg_pass_report rep;
    assert_int_equal(run(&r, fails_long, NULL, &rep), HBG_E_INVAL);
    assert_true(strlen(rep.error) > 240);
    if (!ends_whole(rep.error))
        fail_msg("the report ends inside a character: %s", rep.error);
    hbg_program p = {.name = "eager", .orch = fails_long, .nargs = 1, .args = &r.arg};
    assert_int_equal(hbg_eager_run(&p, r.kt, 1 << 20, 0, 1, NULL), HBG_E_INVAL);
    assert_true(strlen(hbg_eager_last_error()) > 240);
    if (!ends_whole(hbg_eager_last_error()))
        fail_msg("the eager message ends inside a character: %s", hbg_eager_last_error());
    rig_close(&r);
}

/* An eager run that has failed runs no kernel, in a body run inline too
 * (its clean slate hid the failure): a kernel that failed there gave the
 * pass its words under the first failure's status. */
#define K_SEVEN 5
static int k_seven(const hbg_kernel_args *a)
{
    (void)a;
    return 7;
}

static hbg_status seven_body(hbg_orch *o, void *ctx, const hbg_boundary *b)
{
    (void)ctx;
    (void)b;
    hbg_task t = {.kernel_aic = K_SEVEN};
    return hbg_submit_task(o, &t, NULL);
}

static hbg_status fail_then_body(hbg_orch *o, void *ctx)
{
    (void)ctx;
    hbg_orch_fail(o, HBG_E_INVAL, "the program's own first failure");
    hbg_arg ba = {hbg_orch_arg(o, 0), HBG_INOUT};
    hbg_boundary b = {.ntensors = 1, .args = &ba};
    (void)hbg_submit_graph(o, 6, seven_body, NULL, &b, 0, NULL);
    return HBG_OK;
}

static void an_eager_run_that_failed_runs_no_body_kernel(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, 0);
    assert_int_equal(hbg_kernel_register(r.kt, K_SEVEN, "seven", k_seven), HBG_OK);
    hbg_program p = {.name = "eager", .orch = fail_then_body, .nargs = 1, .args = &r.arg};
    assert_int_equal(hbg_eager_run(&p, r.kt, 1 << 20, 0, 1, NULL), HBG_E_INVAL);
    assert_string_equal(hbg_eager_last_error(), "orchestration (0 tasks submitted): the program's own first failure");
    rig_close(&r);
}

static void a_status_that_is_none_is_named(void **state)
{
    (void)state;
    refused_both(returns_999, HBG_E_ORCH, "orchestration (0 tasks submitted): the orchestration function returned "
                                          "999, which is no hbg_status");
    refused_both(fails_555, HBG_E_ORCH, "orchestration (0 tasks submitted): layer 3 is short");
    refused_both(graph_999, HBG_E_ORCH, "graph key 0x5 body (0 nodes recorded): the Graph body returned 999, which "
                                        "is no hbg_status");
}

static void scope_misuse_is_named(void **state)
{
    (void)state;
    refused_both(too_deep, HBG_E_SCOPE, "task 0: scopes nested past 32 deep");
    refused_both(auto_in_manual, HBG_E_SCOPE, "task 0: an AUTO scope inside a MANUAL one");
    refused_both(end_alone, HBG_E_SCOPE, "task 0: hbg_scope_end with no scope open");
}

/* A Graph call's boundary, checked as a task's arrays are. */
static hbg_status body_add(hbg_orch *o, void *ctx, const hbg_boundary *b)
{
    (void)ctx;
    return add(o, b->args[0].t, 1);
}

static int boundary_case;

static hbg_status bad_boundary(hbg_orch *o, void *ctx)
{
    (void)ctx;
    hbg_arg ba = {hbg_orch_arg(o, 0), HBG_INOUT};
    hbg_boundary b = {.ntensors = 1, .args = &ba};
    if (boundary_case == 0)
        return hbg_submit_graph(o, 4, body_add, NULL, NULL, 0, NULL);
    if (boundary_case == 1)
        b.ndeps = 1;
    if (boundary_case == 2)
        b.ndeps = HBG_MAX_FANINS + 1;
    if (boundary_case == 3)
        b.nscalars = 2;
    hbg_tensor past = hbg_tensor_view(hbg_orch_arg(o, 0), N - 4, 1, (uint32_t[]){8}, NULL);
    if (boundary_case == 4)
        ba.dir = HBG_NO_DEP;
    if (boundary_case == 5)
        ba.t = &past;
    if (boundary_case == 6)
        ba.t = NULL;
    hbg_task_id later = 3;
    if (boundary_case == 7)
        b.ndeps = 1, b.deps = &later;
    return hbg_submit_graph(o, 4, body_add, NULL, &b, 0, NULL);
}

static void a_bad_boundary_is_named(void **state)
{
    (void)state;
    static const struct {
        hbg_status st;
        const char *why;
    } c[] = {
        {HBG_E_INVAL, "task 0 (graph key 0x4): no boundary (NULL)"},
        {HBG_E_INVAL, "task 0 (graph key 0x4): 1 explicit deps but no array of them (NULL)"},
        {HBG_E_TOO_MANY_FANINS, "task 0 (graph key 0x4): 129 explicit deps, the limit is 128"},
        {HBG_E_INVAL, "task 0 (graph key 0x4): 2 boundary scalars but no array of them (NULL)"},
    };
    for (boundary_case = 0; boundary_case < 4; boundary_case++)
        refused_both(bad_boundary, c[boundary_case].st, c[boundary_case].why);
}

/* A boundary dep on no earlier task: refused eagerly too, where the body
 * ran inline as though the dep were none. */
static void a_bad_boundary_dep_is_refused_eagerly(void **state)
{
    (void)state;
    static const char why[] = "task 0 (graph key 0x4): dep 0 names 0x3, which is no earlier task (0 so far)";
    boundary_case = 7;
    refused_both(bad_boundary, HBG_E_BAD_DEP, why);
    assert_string_equal(hbg_eager_last_error(), why);
}

/* A call that falls back runs its body inline with no outer task, which
 * is where its deps were checked: a dep on no task was taken as none. */
static hbg_status fallback_with_a_bad_dep(hbg_orch *o, void *ctx)
{
    (void)ctx;
    hbg_arg whole = {hbg_orch_arg(o, 0), HBG_INOUT};
    hbg_boundary b = {.ntensors = 1, .args = &whole};
    hbg_status st = hbg_submit_graph(o, 4, body_add, NULL, &b, 0, NULL);
    if (st)
        return st;
    hbg_tensor half = hbg_tensor_view(hbg_orch_arg(o, 0), 0, 1, (uint32_t[]){N / 2}, NULL);
    hbg_arg part = {&half, HBG_INOUT};
    hbg_task_id none = 99;
    hbg_boundary mismatched = {.ntensors = 1, .args = &part, .ndeps = 1, .deps = &none};
    return hbg_submit_graph(o, 4, body_add, NULL, &mismatched, HBG_GRAPH_FALLBACK, NULL);
}

static void a_fallback_checks_its_deps(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, 0);
    hbg_pass_report rep;
    assert_int_equal(run(&r, fallback_with_a_bad_dep, NULL, &rep), HBG_E_BAD_DEP);
    assert_string_equal(rep.error, "task 1 (graph key 0x4): dep 0 names 0x63, which is no earlier task (1 so far)");
    assert_int_equal(rep.fallbacks, 0);
    assert_int_equal(r.x[0], 0);
    rig_close(&r);
}

/* A boundary slot the device path refuses is refused by the reference
 * too, in the same words, before the body runs: eager mode ran the body
 * on it (a slot passed HBG_NO_DEP was written as the body's task said;
 * a view past its buffer was blamed on the body's task). */
static void a_bad_boundary_slot_is_refused_eagerly(void **state)
{
    (void)state;
    static const char *const why[] = {
        "task 0 (graph key 0x4) slot 0: direction 4 is not one this argument takes",
        "task 0 (graph key 0x4) slot 0: view [240, 272) outside its 256-byte buffer",
        "task 0 (graph key 0x4) slot 0: no tensor (NULL)",
    };
    for (boundary_case = 4; boundary_case < 7; boundary_case++) {
        refused_both(bad_boundary, HBG_E_INVAL, why[boundary_case - 4]);
        assert_string_equal(hbg_eager_last_error(), why[boundary_case - 4]);
    }
}

/* A body's predicate on a word the Definition cannot express (x[0],
 * outside the view of x the call passes): the failure names the
 * predicate's tensor, where it gave the status's text alone ("graph body
 * used a tensor or task it cannot record"). */
static hbg_status body_pred_outside(hbg_orch *o, void *ctx, const hbg_boundary *b)
{
    (void)ctx;
    hbg_pred pr = {.t = hbg_orch_arg(o, 0), .op = HBG_CMP_EQ, .elem_size = 4};
    hbg_arg a = {b->args[0].t, HBG_INOUT};
    uint64_t v = 1;
    hbg_task t = {.kernel_aic = K_ADD, .ntensors = 1, .args = &a, .nscalars = 1, .scalars = &v, .pred = &pr};
    return hbg_submit_task(o, &t, NULL);
}

static hbg_status pred_outside_the_boundary(hbg_orch *o, void *ctx)
{
    (void)ctx;
    hbg_tensor v = hbg_tensor_view(hbg_orch_arg(o, 0), 8, 1, (uint32_t[]){4}, NULL);
    hbg_arg ba = {&v, HBG_INOUT};
    hbg_boundary b = {.ntensors = 1, .args = &ba};
    return hbg_submit_graph(o, 5, body_pred_outside, NULL, &b, 0, NULL);
}

static void a_predicate_outside_the_boundary_is_named(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, 0);
    hbg_pass_report rep;
    assert_int_equal(run(&r, pred_outside_the_boundary, NULL, &rep), HBG_E_GRAPH_CAPTURE);
    assert_string_equal(rep.error, "graph key 0x5 node 0: the predicate's tensor is neither a boundary tensor, a "
                                   "view inside one, nor a node's output");
    assert_int_equal(r.x[8], 0);
    rig_close(&r);
}

/* A body that passes x itself, outside the one-element view of it its
 * call passes. */
static hbg_status body_add_outside(hbg_orch *o, void *ctx, const hbg_boundary *b)
{
    (void)ctx;
    (void)b;
    return add(o, hbg_orch_arg(o, 0), 1);
}

static int capture_case;

static hbg_status tensor_outside_the_boundary(hbg_orch *o, void *ctx)
{
    (void)ctx;
    hbg_tensor v = hbg_tensor_view(hbg_orch_arg(o, 0), 8, 1, (uint32_t[]){4}, NULL);
    hbg_arg ba = {&v, HBG_INOUT};
    hbg_boundary b = {.ntensors = 1, .args = &ba};
    return hbg_submit_graph(o, 5, capture_case ? body_pred_outside : body_add_outside, NULL, &b, 0, NULL);
}

/* What the recorder cannot express is refused by the reference too: an
 * eager run ran such a body inline and succeeded, where the runtime
 * refuses it with HBG_E_GRAPH_CAPTURE. */
static void a_tensor_outside_the_boundary_is_refused_eagerly(void **state)
{
    (void)state;
    static const char *const why[2][2] = {
        {"graph key 0x5 node 0 arg 0: the tensor is neither a boundary tensor, a view inside one, nor a node's "
         "output",
         "task 0 arg 0: the tensor is neither a boundary tensor, a view inside one, nor a node's output"},
        {"graph key 0x5 node 0: the predicate's tensor is neither a boundary tensor, a view inside one, nor a "
         "node's output",
         "task 0: the predicate's tensor is neither a boundary tensor, a view inside one, nor a node's output"},
    };
    for (capture_case = 0; capture_case < 2; capture_case++) {
        refused_both(tensor_outside_the_boundary, HBG_E_GRAPH_CAPTURE, why[capture_case][0]);
        assert_string_equal(hbg_eager_last_error(), why[capture_case][1]);
    }
}

/* A body of one node more than a Definition holds. */
static hbg_status body_too_long(hbg_orch *o, void *ctx, const hbg_boundary *b)
{
    (void)ctx;
    (void)b;
    hbg_status st = HBG_OK;
    for (uint32_t i = 0; i <= HBG_MAX_DEF_NODES && !st; i++)
        st = hbg_submit_dummy(o, 0, NULL, NULL);
    return st;
}

static hbg_status a_body_too_long(hbg_orch *o, void *ctx)
{
    (void)ctx;
    hbg_boundary b = {0};
    return hbg_submit_graph(o, 6, body_too_long, NULL, &b, 0, NULL);
}

/* The reference refuses it too: an eager run ran all its tasks. */
static void a_body_past_the_node_limit_is_refused_eagerly(void **state)
{
    (void)state;
    refused_both(a_body_too_long, HBG_E_POOL_EXHAUSTED,
                 "graph key 0x6 node 4096: the Definition's 4096 nodes are all taken (HBG_MAX_DEF_NODES)");
    assert_string_equal(hbg_eager_last_error(),
                        "task 4096: the Definition's 4096 nodes are all taken (HBG_MAX_DEF_NODES)");
}

/* A body whose task names a task of its caller's as a dep: the device
 * path refuses it (a body's deps name its own earlier nodes). */
static hbg_status body_dep_outside(hbg_orch *o, void *ctx, const hbg_boundary *b)
{
    hbg_arg a = {b->args[0].t, HBG_INOUT};
    uint64_t v = 1;
    hbg_task t = {
        .kernel_aic = K_ADD, .ntensors = 1, .args = &a, .nscalars = 1, .scalars = &v, .ndeps = 1, .deps = ctx};
    return hbg_submit_task(o, &t, NULL);
}

static hbg_status dep_outside_the_body(hbg_orch *o, void *ctx)
{
    (void)ctx;
    hbg_task_id first;
    hbg_status st = hbg_submit_dummy(o, 0, NULL, &first);
    if (st)
        return st;
    hbg_arg whole = {hbg_orch_arg(o, 0), HBG_INOUT};
    hbg_boundary b = {.ntensors = 1, .args = &whole};
    return hbg_submit_graph(o, 4, body_dep_outside, &first, &b, 0, NULL);
}

/* The reference refuses it too: an eager run ran the body's task. */
static void a_body_dep_outside_the_body_is_refused_eagerly(void **state)
{
    (void)state;
    refused_both(dep_outside_the_body, HBG_E_BAD_DEP,
                 "graph key 0x4 node 0: dep 0 names 0x0, which is no earlier node of this body (0 so far)");
    assert_string_equal(hbg_eager_last_error(),
                        "task 1: dep 0 names 0x0, which is no earlier task of this Graph body (its first is 0x1)");
}

/* A program's caller tensors that args cannot stage: HBG_E_INVAL, and the
 * report names the tensor and what is wrong with it (it said "args:
 * invalid argument"). A dtype that is none was staged without a word, and
 * the invalid tensor a constructor returns was "layout.nbytes is 0". */
static void bad_caller_tensors_are_named(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, 0);
    hbg_host_tensor good = r.arg;
    static const struct {
        int what;
        const char *why;
    } c[] = {
        {0, "args: caller tensor 0 (x): no host memory (host is NULL)"},
        {1, "args: caller tensor 0 (x): layout.nbytes is 0"},
        {2, "args: caller tensor 0 (x): direction 1, not HBG_IN, HBG_OUT or HBG_INOUT"},
        {3, "args: caller tensor 0 (x): dtype 50 is no hbg_dtype"},
        {4, "args: 2000 caller tensors, the limit is 256"},
        {5, "args: 1 caller tensors but no array of them (NULL)"},
        {6, "args: caller tensor 0 (x): layout is the invalid tensor (dtype HBG_DTYPE_COUNT, nbytes 0) that a "
            "tensor constructor returns for bad arguments"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        hbg_host_tensor h = good;
        hbg_program p = {.name = "bad", .orch = add_one, .nargs = 1, .args = &h};
        if (c[i].what == 0)
            h.host = NULL;
        if (c[i].what == 1)
            h.layout.nbytes = 0;
        if (c[i].what == 2)
            h.dir = HBG_OUT_ALLOC;
        if (c[i].what == 3)
            h.layout.dtype = 50;
        if (c[i].what == 4)
            p.nargs = 2000;
        if (c[i].what == 5)
            p.args = NULL;
        if (c[i].what == 6) /* a shape of more dimensions than a tensor has */
            h.layout = hbg_tensor_desc(HBG_I32, HBG_MAX_DIMS + 1, (uint32_t[HBG_MAX_DIMS + 1]){N});
        hbg_pass_report rep;
        assert_int_equal(hbg_runtime_run(r.rt, &p, false, &rep), HBG_E_INVAL);
        assert_int_equal(rep.failed_segment, HBG_PH_ARGS);
        assert_string_equal(rep.error, c[i].why);
        assert_int_equal(hbg_eager_run(&p, r.kt, 1 << 20, 0, 1, NULL), HBG_E_INVAL);
        assert_string_equal(hbg_eager_last_error(), c[i].why);
    }
    hbg_pass_report rep;
    assert_int_equal(run(&r, add_one, NULL, &rep), HBG_OK);
    assert_int_equal(r.x[0], 1);
    rig_close(&r);
}

/* A task argument that is the invalid tensor a constructor returned:
 * named as such, not as a view with no byte range ("dtype 10, 0 dims")
 * or, for a description, a tensor that lacks a buffer. */
static int invalid_case;

static hbg_status invalid_arg(hbg_orch *o, void *ctx)
{
    (void)ctx;
    uint32_t shape[HBG_MAX_DIMS + 1] = {N};
    hbg_tensor t = invalid_case ? hbg_tensor_view(hbg_orch_arg(o, 0), 0, HBG_MAX_DIMS + 1, shape, NULL)
                                : hbg_tensor_desc(HBG_I32, HBG_MAX_DIMS + 1, shape);
    hbg_arg a = {&t, HBG_IN};
    hbg_task tk = {.kernel_aic = K_ADD, .ntensors = 1, .args = &a};
    return hbg_submit_task(o, &tk, NULL);
}

static void an_invalid_task_tensor_is_named(void **state)
{
    (void)state;
    invalid_case = 0;
    refused_both(invalid_arg, HBG_E_ARG_NO_BUFFER,
                 "task 0 arg 0: the tensor is the invalid tensor (dtype HBG_DTYPE_COUNT) that a tensor constructor "
                 "returns for bad arguments, and names no buffer");
    invalid_case = 1;
    refused_both(invalid_arg, HBG_E_INVAL,
                 "task 0 arg 0: the tensor is the invalid tensor (dtype HBG_DTYPE_COUNT) that a tensor constructor "
                 "returns for bad arguments");
}

/* A view whose byte range ends past 2^64: a huge offset, an INT64_MAX
 * stride, and the same as an allocating argument. Named as such (it read
 * "no byte range (...; an empty or negative-stride view?)", which it is
 * neither); an empty view keeps those words. */
static int wide_case;

static hbg_status wide_arg(hbg_orch *o, void *ctx)
{
    (void)ctx;
    hbg_tensor t = *hbg_orch_arg(o, 0);
    if (wide_case == 0)
        t.offset = (uint64_t)1 << 62;
    if (wide_case == 1 || wide_case == 2)
        t.shape[0] = 2, t.strides[0] = INT64_MAX;
    if (wide_case == 2)
        t.addr = 0, t.offset = 0;
    if (wide_case == 3)
        t.shape[0] = 0;
    hbg_arg a = {&t, wide_case == 2 ? HBG_OUT_ALLOC : HBG_IN};
    hbg_task tk = {.kernel_aic = K_ADD, .ntensors = 1, .args = &a};
    return hbg_submit_task(o, &tk, NULL);
}

static void a_view_past_64_bits_is_named(void **state)
{
    (void)state;
    static const char *const why = "task 0 arg 0: the view's byte range is past 64 bits (dtype 6, 1 dims: its offset, "
                                   "shape and strides reach beyond byte 2^64)";
    for (wide_case = 0; wide_case < 3; wide_case++)
        refused_both(wide_arg, HBG_E_INVAL, why);
    wide_case = 3;
    refused_both(wide_arg, HBG_E_INVAL,
                 "task 0 arg 0: the view has no byte range (dtype 6, 1 dims; an empty or negative-stride view?)");
}

/* A caller tensor's name is the program's text, quoted in the report: a
 * long one is cut at a whole character and its controls read '?', so
 * the error stays one line of text (a name of "é"s was cut inside one,
 * and a newline in it split the report and the eager message). */
static void a_caller_tensor_name_is_quoted_whole(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, 0);
    char name[201] = "a\nbc";
    for (int i = 4; i < 198; i += 2)
        memcpy(name + i, "\xc3\xa9", 2);
    name[198] = 0;
    hbg_host_tensor h = r.arg;
    h.name = name;
    h.host = NULL;
    hbg_program p = {.name = "bad", .orch = add_one, .nargs = 1, .args = &h};
    char expect[256] = "args: caller tensor 0 (a?bc";
    for (int i = 0; i < 29; i++) /* of the name's first 63 bytes, 4 and 29 whole "é"s */
        strcat(expect, "\xc3\xa9");
    strcat(expect, "): no host memory (host is NULL)");
    hbg_pass_report rep;
    assert_int_equal(hbg_runtime_run(r.rt, &p, false, &rep), HBG_E_INVAL);
    assert_string_equal(rep.error, expect);
    assert_int_equal(hbg_eager_run(&p, r.kt, 1 << 20, 0, 1, NULL), HBG_E_INVAL);
    assert_string_equal(hbg_eager_last_error(), expect);
    rig_close(&r);
}

/* A kernel's name is the program's text, quoted by the device's message
 * when the kernel fails: its controls read '?', so the device's last
 * error and the report stay one line (a newline in the name split them). */
#define K_BAD_NAME 6
static int k_fails(const hbg_kernel_args *a)
{
    (void)a;
    return 3;
}

static hbg_status run_bad_name(hbg_orch *o, void *ctx)
{
    (void)ctx;
    hbg_task t = {.kernel_aic = K_BAD_NAME};
    return hbg_submit_task(o, &t, NULL);
}

static void a_kernel_name_is_quoted_on_one_line(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, 0);
    assert_int_equal(hbg_kernel_register(r.kt, K_BAD_NAME, "two\nlines\x1b[2J", k_fails), HBG_OK);
    hbg_pass_report rep;
    assert_int_equal(run(&r, run_bad_name, NULL, &rep), HBG_E_KERNEL);
    assert_string_equal(rep.error,
                        "device run: task 0: kernel 6 (two?lines?[2J) block 0/1 on AIC returned 3 (HBG_E_KERNEL)");
    assert_string_equal(hbg_device_last_error(),
                        "task 0: kernel 6 (two?lines?[2J) block 0/1 on AIC returned 3 (HBG_E_KERNEL)");
    rig_close(&r);
}

/* A core that is none: said so, not "core unknown needs both kernels". */
static hbg_status core_seven(hbg_orch *o, void *ctx)
{
    (void)ctx;
    hbg_task t = {.kernel_aic = K_ADD, .kernel_aiv = K_ADD, .core = 7};
    return hbg_submit_task(o, &t, NULL);
}

static void small_misuses_are_named(void **state)
{
    (void)state;
    refused_both(core_seven, HBG_E_INVAL, "task 0: core 7 is none of HBG_CORE_AIC, HBG_CORE_AIV and HBG_CORE_MIX");
    rig r;
    rig_open(&r, 0);
    /* eager mode refuses a rank outside its job, as hbg_runtime_create does */
    hbg_program p = {.name = "eager", .orch = add_one, .nargs = 1, .args = &r.arg};
    assert_int_equal(hbg_eager_run(&p, r.kt, 1 << 20, 3, 2, NULL), HBG_E_INVAL);
    assert_int_equal(hbg_eager_run(&p, r.kt, 1 << 20, 1, 0, NULL), HBG_E_INVAL);
    assert_int_equal(r.x[0], 0);
    assert_int_equal(hbg_eager_run(&p, r.kt, 1 << 20, 1, 2, NULL), HBG_OK);
    assert_int_equal(r.x[0], 1);
    /* a window past the limit is said so, not "cannot create the orchestrator" */
    assert_int_equal(hbg_eager_run_window(&p, r.kt, 1 << 20, HBG_MAX_TASK_WINDOW + 1, 0, 1, NULL), HBG_E_INVAL);
    assert_string_equal(hbg_eager_last_error(),
                        "task window 16777217 is past the limit of 16777216 (HBG_MAX_TASK_WINDOW)");
    assert_int_equal(r.x[0], 1);
    /* a heap past HBG_MAX_HEAP_BYTES is the caller's error, as hbg_runtime_create
     * says it, not a host out of memory (HBG_E_NOMEM, as it was) */
    const uint64_t heaps[] = {UINT64_MAX, HBG_MAX_HEAP_BYTES + 1};
    const char *const heap_why[] = {
        "heap_bytes 18446744073709551615 is past the limit of 18446744073709551552 (HBG_MAX_HEAP_BYTES)",
        "heap_bytes 18446744073709551553 is past the limit of 18446744073709551552 (HBG_MAX_HEAP_BYTES)"};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(hbg_eager_run(&p, r.kt, heaps[i], 0, 1, NULL), HBG_E_INVAL);
        assert_string_equal(hbg_eager_last_error(), heap_why[i]);
        assert_int_equal(hbg_eager_run_window(&p, r.kt, heaps[i], 0, 0, 1, NULL), HBG_E_INVAL);
        assert_string_equal(hbg_eager_last_error(), heap_why[i]);
    }
    /* the limit itself is taken, and left to the host, which has no room for it */
    assert_int_equal(hbg_eager_run(&p, r.kt, HBG_MAX_HEAP_BYTES, 0, 1, NULL), HBG_E_NOMEM);
    assert_non_null(strstr(hbg_eager_last_error(), "cannot reserve 18446744073709551552 bytes of host memory"));
    assert_int_equal(r.x[0], 1);
    /* a copy from no host memory is said so, not "not inside one device allocation" */
    uint64_t a;
    assert_int_equal(hbg_device_alloc(r.dev, 16, &a), HBG_OK);
    assert_int_equal(hbg_device_h2d(r.dev, a, NULL, 4), HBG_E_INVAL);
    assert_non_null(strstr(hbg_device_last_error(), "h2d of 4 bytes at 0x"));
    assert_non_null(strstr(hbg_device_last_error(), ": no host memory (NULL)"));
    hbg_device_free(r.dev, a);
    rig_close(&r);
}

/* Bad arguments outside a pass: statuses, no crash. */
static void null_arguments_are_statuses(void **state)
{
    (void)state;
    hbg_runtime_config rc = {0};
    assert_int_equal(hbg_runtime_create(&rc, NULL), HBG_E_INVAL);
    rig r;
    rig_open(&r, 0);
    /* a window past HBG_MAX_TASK_WINDOW, whose pools would not count in
     * 32 bits (the journal off, which would refuse it first) */
    hbg_runtime *big;
    hbg_runtime_config bc = {.device = r.dev, .kernels = r.kt, .records_fd = -1, .nranks = 1,
                             .task_window = HBG_MAX_TASK_WINDOW + 1, .no_tmap_journal = true};
    assert_int_equal(hbg_runtime_create(&bc, &big), HBG_E_INVAL);
    assert_null(big);
    /* a rank outside its job */
    hbg_runtime_config rk = {.device = r.dev, .kernels = r.kt, .records_fd = -1, .rank = 7, .nranks = 2};
    assert_int_equal(hbg_runtime_create(&rk, &big), HBG_E_INVAL);
    rk.nranks = 0, rk.rank = 1; /* nranks 0 is one rank: rank 0 */
    assert_int_equal(hbg_runtime_create(&rk, &big), HBG_E_INVAL);
    assert_null(big);
    hbg_program p = {.name = "no args", .orch = add_one, .nargs = 1, .args = NULL};
    hbg_pass_report rep;
    assert_int_equal(hbg_runtime_run(r.rt, &p, false, &rep), HBG_E_INVAL);
    assert_int_equal(hbg_kernel_register_all(r.kt, NULL, 3), HBG_E_INVAL);
    assert_int_equal(hbg_kernel_register_all(r.kt, NULL, 0), HBG_OK);
    assert_int_equal(hbg_orch_task_count(NULL), 0);
    assert_int_equal(hbg_orch_heap_used(NULL), 0);
    assert_int_equal(hbg_orch_nargs(NULL), 0);
    assert_null(hbg_orch_arg(NULL, 0));
    assert_int_equal(hbg_orch_rank(NULL), 0);
    assert_int_equal(hbg_orch_nranks(NULL), 0);
    /* scopes outside a pass, like submits */
    hbg_orch *o = (hbg_orch *)hbg_runtime_orch(r.rt);
    assert_int_equal(hbg_scope_begin(o, HBG_SCOPE_MANUAL), HBG_E_STATE);
    assert_int_equal(hbg_scope_end(o), HBG_E_STATE);
    assert_int_equal(hbg_submit_dummy(o, 0, NULL, NULL), HBG_E_STATE);
    assert_int_equal(run(&r, add_one, NULL, &rep), HBG_OK);
    rig_close(&r);
}

/* A kernel that calls hbg_runtime_run on the runtime whose device run
 * called it: refused with HBG_E_STATE, where it used to wait for ever for
 * the device run that waits for the kernel (and, with skip_device, to
 * bind a new pass under the running one). */
#define K_NESTED 2
static struct {
    rig *r;
    hbg_status st[2];
    int calls;
    char why[HBG_PASS_ERROR_MAX]; /* the kernel's thread's words */
} nest;

static int k_nested(const hbg_kernel_args *a)
{
    (void)a;
    hbg_program p = {.name = "inner", .orch = add_one, .nargs = 1, .args = &nest.r->arg};
    hbg_pass_report rep;
    for (int skip = 0; skip < 2; skip++)
        nest.st[skip] = hbg_runtime_run(nest.r->rt, &p, skip, &rep);
    snprintf(nest.why, sizeof nest.why, "%s", hbg_runtime_last_error());
    nest.calls++;
    return 0;
}

static hbg_status nested_kernel_orch(hbg_orch *o, void *ctx)
{
    (void)ctx;
    hbg_task t = {.kernel_aic = K_NESTED};
    hbg_status st = hbg_submit_task(o, &t, NULL);
    return st ? st : add(o, hbg_orch_arg(o, 0), 5);
}

static void a_run_from_a_kernel_is_refused(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, 0);
    assert_int_equal(hbg_kernel_register(r.kt, K_NESTED, "nested", k_nested), HBG_OK);
    memset(&nest, 0, sizeof nest);
    nest.r = &r;
    hbg_pass_report rep;
    assert_int_equal(run(&r, nested_kernel_orch, NULL, &rep), HBG_OK);
    assert_int_equal(nest.calls, 1);
    assert_int_equal(nest.st[0], HBG_E_STATE);
    assert_int_equal(nest.st[1], HBG_E_STATE);
    assert_string_equal(nest.why, BUSY);
    assert_int_equal(r.x[0], 5);
    /* the runtime is free again once the call returns */
    assert_int_equal(run(&r, add_one, NULL, &rep), HBG_OK);
    assert_int_equal(r.x[0], 6);
    /* a NULL program: a status and a report that says so */
    assert_int_equal(hbg_runtime_run(r.rt, NULL, false, &rep), HBG_E_INVAL);
    assert_string_equal(rep.error, "no program (hbg_program is NULL)");
    assert_int_equal(run(&r, add_one, NULL, &rep), HBG_OK);
    rig_close(&r);
}

/* A kernel that runs another runtime sharing its device (runtimes may
 * share one): the device's run waits for the kernel, whose run would
 * wait for the device. Refused (HBG_E_STATE), where it hung. */
static struct {
    hbg_runtime *rt2;
    hbg_host_tensor *arg;
    hbg_status st;
    char error[256];
} peer;

static int k_peer(const hbg_kernel_args *a)
{
    (void)a;
    hbg_program p = {.name = "peer", .orch = add_one, .nargs = 1, .args = peer.arg};
    hbg_pass_report rep;
    peer.st = hbg_runtime_run(peer.rt2, &p, false, &rep);
    snprintf(peer.error, sizeof peer.error, "%s", rep.error);
    return 0;
}

static void a_run_of_its_own_device_from_a_kernel_is_refused(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, 0);
    assert_int_equal(hbg_kernel_register(r.kt, K_NESTED, "peer", k_peer), HBG_OK);
    hbg_runtime_config rc = {.device = r.dev, .kernels = r.kt, .records_fd = -1, .nranks = 1};
    assert_int_equal(hbg_runtime_create(&rc, &peer.rt2), HBG_OK);
    int32_t y[N] = {0};
    hbg_host_tensor arg = {.name = "y", .host = y, .layout = hbg_tensor_desc(HBG_I32, 1, (uint32_t[]){N}),
                           .dir = HBG_INOUT};
    peer.arg = &arg;
    peer.st = HBG_OK;
    hbg_pass_report rep;
    assert_int_equal(run(&r, nested_kernel_orch, NULL, &rep), HBG_OK);
    assert_int_equal(peer.st, HBG_E_STATE);
    if (!strstr(peer.error, "a run of this device from one of its own kernels"))
        fail_msg("report: %s", peer.error);
    assert_int_equal(r.x[0], 5);
    assert_int_equal(y[0], 0);
    /* outside a kernel the second runtime runs on the device as before */
    hbg_program p = {.name = "peer", .orch = add_one, .nargs = 1, .args = &arg};
    assert_int_equal(hbg_runtime_run(peer.rt2, &p, false, &rep), HBG_OK);
    assert_int_equal(y[0], 1);
    hbg_runtime_destroy(peer.rt2);
    rig_close(&r);
}

/* The same through a second device: a kernel on A runs a runtime on B,
 * whose kernel runs a second runtime on A, which waits for A's run,
 * which waits for the first kernel. Refused where it hung. */
#define K_TO_B 3
#define K_TO_A 4
static struct {
    hbg_runtime *rt_b, *rt_a2;
    hbg_host_tensor *arg, *arg_b; /* a2's, and b's own (b copies its own back after the kernel) */
    hbg_status st_b, st_a2;
    char error[256];
} cyc;

static hbg_status one_task(hbg_orch *o, void *ctx)
{
    hbg_task t = {.kernel_aic = (uint32_t)(uintptr_t)ctx};
    return hbg_submit_task(o, &t, NULL);
}

static int k_to_a(const hbg_kernel_args *a)
{
    (void)a;
    hbg_program p = {.name = "a2", .orch = add_one, .nargs = 1, .args = cyc.arg};
    hbg_pass_report rep;
    cyc.st_a2 = hbg_runtime_run(cyc.rt_a2, &p, false, &rep);
    snprintf(cyc.error, sizeof cyc.error, "%s", rep.error);
    return 0;
}

static int k_to_b(const hbg_kernel_args *a)
{
    (void)a;
    hbg_program p = {.name = "b", .orch = one_task, .ctx = (void *)(uintptr_t)K_TO_A, .nargs = 1, .args = cyc.arg_b};
    hbg_pass_report rep;
    cyc.st_b = hbg_runtime_run(cyc.rt_b, &p, false, &rep);
    return 0;
}

static void a_cycle_through_another_device_is_refused(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, 0);
    assert_int_equal(hbg_kernel_register(r.kt, K_TO_B, "to_b", k_to_b), HBG_OK);
    assert_int_equal(hbg_kernel_register(r.kt, K_TO_A, "to_a", k_to_a), HBG_OK);
    hbg_device *b;
    assert_int_equal(hbg_sim_open(NULL, &b), HBG_OK);
    hbg_runtime_config rb = {.device = b, .kernels = r.kt, .records_fd = -1, .nranks = 1};
    hbg_runtime_config ra = {.device = r.dev, .kernels = r.kt, .records_fd = -1, .nranks = 1};
    assert_int_equal(hbg_runtime_create(&rb, &cyc.rt_b), HBG_OK);
    assert_int_equal(hbg_runtime_create(&ra, &cyc.rt_a2), HBG_OK);
    int32_t y[N] = {0};
    hbg_host_tensor arg = {.name = "y", .host = y, .layout = hbg_tensor_desc(HBG_I32, 1, (uint32_t[]){N}),
                           .dir = HBG_INOUT};
    int32_t z[N] = {0};
    hbg_host_tensor arg_b = arg;
    arg_b.host = z;
    cyc.arg = &arg;
    cyc.arg_b = &arg_b;
    cyc.st_b = cyc.st_a2 = HBG_E_INVAL;
    hbg_pass_report rep;
    assert_int_equal(run(&r, one_task, (void *)(uintptr_t)K_TO_B, &rep), HBG_OK);
    assert_int_equal(cyc.st_b, HBG_OK);
    assert_int_equal(cyc.st_a2, HBG_E_STATE);
    if (!strstr(cyc.error, "a run of this device from one of its own kernels"))
        fail_msg("report: %s", cyc.error);
    /* B run from a host thread, its kernel runs A: no cycle, it runs */
    hbg_program p = {.name = "b", .orch = one_task, .ctx = (void *)(uintptr_t)K_TO_A, .nargs = 1, .args = &arg_b};
    assert_int_equal(hbg_runtime_run(cyc.rt_b, &p, false, &rep), HBG_OK);
    assert_int_equal(cyc.st_a2, HBG_OK);
    assert_int_equal(y[0], 1);
    hbg_runtime_destroy(cyc.rt_a2);
    hbg_runtime_destroy(cyc.rt_b);
    hbg_device_close(b);
    rig_close(&r);
}

/* hbg_sim_open: a core or scheduler count past its limit (a thread each)
 * is refused by name; two counts that wrapped their sum to 0 made a
 * device of no cores whose every run failed as "a fanin cycle". */
static void sim_counts_past_the_limits_are_named(void **state)
{
    (void)state;
    static const struct {
        hbg_sim_config c;
        const char *msg;
    } bad[] = {
        {{.aic_cores = 0x80000000u, .aiv_cores = 0x80000000u},
         "sim: aic_cores 2147483648 is past the limit of 1024 (a thread each)"},
        {{.aic_cores = 2, .aiv_cores = HBG_SIM_MAX_CORES + 1},
         "sim: aiv_cores 1025 is past the limit of 1024 (a thread each)"},
        {{.schedulers = 65}, "sim: schedulers 65 is past the limit of 64 (a thread each)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        hbg_device *d = (hbg_device *)&d;
        assert_int_equal(hbg_sim_open(&bad[i].c, &d), HBG_E_INVAL);
        assert_null(d);
        assert_string_equal(hbg_device_last_error(), bad[i].msg);
    }
}

/* A per-op records file that cannot be written fails the call, but the
 * pass was bound and is still run: the output is computed, and the
 * report says both. */
static void a_records_write_failure_still_runs_the_pass(void **state)
{
    (void)state;
    hbg_recpool *pool;
    assert_int_equal(hbg_recpool_create(1, 4096, &pool), HBG_OK);
    int full = open("/dev/full", O_WRONLY);
    assert_true(full >= 0);
    rig r;
    memset(&r, 0, sizeof r);
    assert_int_equal(hbg_sim_open(NULL, &r.dev), HBG_OK);
    assert_int_equal(hbg_kernel_table_create(&r.kt), HBG_OK);
    assert_int_equal(hbg_kernel_register(r.kt, K_ADD, "add", k_add), HBG_OK);
    hbg_runtime_config rc = {.device = r.dev, .kernels = r.kt, .records = pool, .records_fd = full, .nranks = 1};
    assert_int_equal(hbg_runtime_create(&rc, &r.rt), HBG_OK);
    r.arg = (hbg_host_tensor){.name = "x", .host = r.x, .layout = hbg_tensor_desc(HBG_I32, 1, (uint32_t[]){N}),
                              .dir = HBG_INOUT};
    hbg_pass_report rep;
    assert_int_equal(run(&r, add_one, NULL, &rep), HBG_E_IO);
    assert_true(rep.device_ran);
    assert_int_equal(r.x[0], 1);
    assert_string_equal(rep.error, "cannot write host_phase_records.jsonl: No space left on device");
    rig_close(&r);
    close(full);
    hbg_recpool_destroy(pool);
}

/* A Graph whose body carries the pass number as a static scalar: a new
 * Definition every pass, 300 of them, past the device's table of 256. */
typedef struct stepper {
    uint64_t step;
} stepper;

static hbg_status step_body(hbg_orch *o, void *ctx, const hbg_boundary *b)
{
    stepper *s = ctx;
    return add(o, b->args[0].t, s->step);
}

static hbg_status step_orch(hbg_orch *o, void *ctx)
{
    hbg_arg ba = {hbg_orch_arg(o, 0), HBG_INOUT};
    hbg_boundary b = {.ntensors = 1, .args = &ba};
    return hbg_submit_graph(o, 7, step_body, ctx, &b, 0, NULL);
}

/* Three keys a pass, each body a step of its own (3s, 3s+1, 3s+2). */
static hbg_status three_body(hbg_orch *o, void *ctx, const hbg_boundary *b)
{
    return add(o, b->args[0].t, *(const uint64_t *)ctx);
}

static hbg_status three_orch(hbg_orch *o, void *ctx)
{
    stepper *s = ctx;
    hbg_arg ba = {hbg_orch_arg(o, 0), HBG_INOUT};
    hbg_boundary b = {.ntensors = 1, .args = &ba};
    static uint64_t v[3];
    hbg_status st = HBG_OK;
    for (uint64_t k = 0; k < 3 && !st; k++) {
        v[k] = 3 * s->step + k;
        st = hbg_submit_graph(o, 100 + k, three_body, &v[k], &b, 0, NULL);
    }
    return st;
}

/* Each refusal of hbg_runtime_create says what was wrong, in
 * hbg_runtime_last_error (it was a bare status: which field, which
 * limit?). */
static void create_failures_are_named(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, 0);
    hbg_recpool *pool;
    assert_int_equal(hbg_recpool_create(1, 64, &pool), HBG_OK);
    hbg_runtime_config good = {.device = r.dev, .kernels = r.kt, .records_fd = -1, .nranks = 1};
    static const struct {
        int what;
        hbg_status st;
        const char *why;
    } c[] = {
        {0, HBG_E_INVAL, "nowhere to put the runtime (out is NULL)"},
        {1, HBG_E_INVAL, "no config (hbg_runtime_config is NULL)"},
        {2, HBG_E_INVAL, "no device (cfg.device is NULL)"},
        {3, HBG_E_INVAL, "no kernel table (cfg.kernels is NULL)"},
        {4, HBG_E_INVAL, "rank 2 of 2 ranks: no such rank"},
        {5, HBG_E_INVAL, "rank 1 of 0 ranks: no such rank (nranks 0 is one rank, rank 0)"},
        {6, HBG_E_INVAL, "task_window 16777217 is past the limit of 16777216 (HBG_MAX_TASK_WINDOW)"},
        {7, HBG_E_INVAL, "journal_calls 268435457 is past the limit of 268435456 (HBG_MAX_JOURNAL_CALLS)"},
        {8, HBG_E_STATE,
         "cfg.records is a record pool another live runtime holds (a pool serves one runtime "
         "from create to destroy: create one for each)"},
        /* past 2^64 - 64 the 64-byte rounding of an offset wraps */
        {9, HBG_E_INVAL,
         "heap_bytes 18446744073709551615 is past the limit of 18446744073709551552 (HBG_MAX_HEAP_BYTES)"},
        {10, HBG_E_INVAL,
         "heap_bytes 18446744073709551553 is past the limit of 18446744073709551552 (HBG_MAX_HEAP_BYTES)"},
        {11, HBG_E_INVAL,
         "def_pool_bytes 18446744073709551615 is past the limit of 18446744073709551552 (HBG_MAX_DEF_POOL_BYTES)"},
        {12, HBG_E_INVAL,
         "def_pool_bytes 18446744073709551553 is past the limit of 18446744073709551552 (HBG_MAX_DEF_POOL_BYTES)"},
    };
    hbg_runtime *held = NULL;
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        hbg_runtime_config rc = good;
        hbg_runtime *rt = (hbg_runtime *)&rc, **out = &rt;
        const hbg_runtime_config *cfg = &rc;
        if (c[i].what == 0)
            out = NULL;
        if (c[i].what == 1)
            cfg = NULL;
        if (c[i].what == 2)
            rc.device = NULL;
        if (c[i].what == 3)
            rc.kernels = NULL;
        if (c[i].what == 4)
            rc.rank = 2, rc.nranks = 2;
        if (c[i].what == 5)
            rc.rank = 1, rc.nranks = 0;
        if (c[i].what == 6)
            rc.task_window = HBG_MAX_TASK_WINDOW + 1;
        if (c[i].what == 7)
            rc.journal_calls = HBG_MAX_JOURNAL_CALLS + 1;
        if (c[i].what == 9 || c[i].what == 10)
            rc.heap_bytes = c[i].what == 9 ? UINT64_MAX : HBG_MAX_HEAP_BYTES + 1;
        if (c[i].what == 11 || c[i].what == 12)
            rc.def_pool_bytes = c[i].what == 11 ? UINT64_MAX : HBG_MAX_DEF_POOL_BYTES + 1;
        if (c[i].what == 8) {
            rc.records = pool;
            assert_int_equal(hbg_runtime_create(&rc, &held), HBG_OK);
        }
        assert_int_equal(hbg_runtime_create(cfg, out), c[i].st);
        assert_string_equal(hbg_runtime_last_error(), c[i].why);
        if (out)
            assert_null(rt);
    }
    /* journal_calls is not read with the journal off */
    hbg_runtime_config rc = good;
    rc.journal_calls = HBG_MAX_JOURNAL_CALLS + 1;
    rc.no_tmap_journal = true;
    hbg_runtime *rt;
    assert_int_equal(hbg_runtime_create(&rc, &rt), HBG_OK);
    hbg_runtime_destroy(rt);
    /* the limits themselves are taken (a device refuses them at the
     * first pass, as any size it has no room for) */
    rc = good;
    rc.heap_bytes = HBG_MAX_HEAP_BYTES;
    rc.def_pool_bytes = HBG_MAX_DEF_POOL_BYTES;
    assert_int_equal(hbg_runtime_create(&rc, &rt), HBG_OK);
    hbg_runtime_destroy(rt);
    hbg_runtime_destroy(held);
    hbg_recpool_destroy(pool);
    rig_close(&r);
}

/* Host memory that runs out while the runtime is made is named by the
 * part it was for. The address space is cut in a child, below what the
 * largest window's task image reserves (ASan reserves its own shadow
 * memory up front and dies on a failed allocation: not under it). */
static void create_out_of_memory_is_named(void **state)
{
    (void)state;
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    skip();
#else
    rig r;
    rig_open(&r, 0);
    hbg_runtime_config rc = {.device = r.dev,
                             .kernels = r.kt,
                             .records_fd = -1,
                             .nranks = 1,
                             .task_window = HBG_MAX_TASK_WINDOW,
                             .no_tmap_journal = true};
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        unsigned long long pages = 0;
        FILE *f = fopen("/proc/self/statm", "r");
        if (!f || fscanf(f, "%llu", &pages) != 1)
            _exit(2);
        fclose(f);
        struct rlimit lim = {.rlim_cur = pages * (unsigned long long)sysconf(_SC_PAGESIZE) + (64u << 20)};
        lim.rlim_max = lim.rlim_cur;
        if (setrlimit(RLIMIT_AS, &lim))
            _exit(3);
        hbg_runtime *rt;
        hbg_status st = hbg_runtime_create(&rc, &rt);
        const char *want = "out of host memory for the task image (a window of 16777216 tasks)";
        if (st != HBG_E_NOMEM || strcmp(hbg_runtime_last_error(), want) != 0) {
            fprintf(stderr, "status %d, \"%s\"; expected HBG_E_NOMEM, \"%s\"\n", (int)st, hbg_runtime_last_error(),
                    want);
            _exit(1);
        }
        _exit(0);
    }
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    assert_true(WIFEXITED(ws));
    assert_int_equal(WEXITSTATUS(ws), 0);
    rig_close(&r);
#endif
}

/* Every pass runs and adds its step, whether the pool holds the
 * Definitions or each has a device allocation of its own (a 1-byte
 * pool); each pass uploads its one new Definition. */
static void definitions_turn_over_in_a_long_run(void **state)
{
    (void)state;
    static const uint64_t pools[] = {0, 1};
    for (size_t k = 0; k < 2; k++) {
        rig r;
        rig_open(&r, pools[k]);
        stepper s;
        int64_t sum = 0;
        for (s.step = 1; s.step <= 300; s.step++) {
            hbg_pass_report rep;
            hbg_status st = run(&r, step_orch, &s, &rep);
            if (st)
                fail_msg("pool %llu, pass %llu: %s", (unsigned long long)pools[k], (unsigned long long)s.step,
                         rep.error);
            assert_int_equal(rep.defs_uploaded, 1);
            sum += (int64_t)s.step;
            assert_int_equal(r.x[N - 1], sum);
        }
        rig_close(&r);
    }
    /* Three new Definitions a pass: the 86th pass finds the table full
     * after its first (255 + 1), forgets them all and uploads its three
     * again, so it copies four, which defs_uploaded counts; the table
     * fills again every 85 passes after that. */
    rig r;
    rig_open(&r, 0);
    stepper s;
    int64_t sum = 0;
    for (s.step = 1; s.step <= 300; s.step++) {
        hbg_pass_report rep;
        hbg_status st = run(&r, three_orch, &s, &rep);
        if (st)
            fail_msg("pass %llu: %s", (unsigned long long)s.step, rep.error);
        bool evicts = s.step == 86 || s.step == 171 || s.step == 256;
        assert_int_equal(rep.defs_uploaded, evicts ? 4 : 3);
        sum += (int64_t)(9 * s.step + 3);
        assert_int_equal(r.x[0], sum);
    }
    rig_close(&r);
}

/* The sim's ops with alloc and h2d wrapped, for the test below: once
 * armed, the first allocation is refused by the sim itself (asked for
 * more than its limit, so it says why), the next goes through, and every
 * copy after it but the one into that allocation fails without a word
 * (a device of one's own need not set hbg_device_last_error). */
static hbg_device_ops wrap_ops;
static const hbg_device_ops *sim_ops;
static struct {
    bool armed, refused, granted;
    uint64_t def_addr;
} wrap;

#define WRAP_LIMIT ((uint64_t)1 << 30)

static hbg_status wrap_alloc(hbg_device *d, uint64_t n, uint64_t *a)
{
    if (wrap.armed && !wrap.refused) {
        wrap.refused = true;
        return sim_ops->alloc(d, WRAP_LIMIT + 1, a);
    }
    hbg_status st = sim_ops->alloc(d, n, a);
    if (wrap.refused && !wrap.granted && !st) {
        wrap.granted = true;
        wrap.def_addr = *a;
    }
    return st;
}

static hbg_status wrap_h2d(hbg_device *d, uint64_t dst, const void *src, uint64_t n)
{
    if (wrap.granted && dst != wrap.def_addr)
        return HBG_E_DEVICE;
    return sim_ops->h2d(d, dst, src, n);
}

/* graph_upload recovers from a refusal the device explained (it forgets
 * the Definitions it holds and uploads this pass's again), and then
 * arena_h2d fails without a word: the pass's error is arena_h2d's status,
 * not the recovered refusal's sentence, which is still the device's last
 * message. The runtime then goes on. */
static void a_recovered_refusal_is_not_a_later_failure(void **state)
{
    (void)state;
    rig r;
    rig_open_sim(&r, 1, &(hbg_sim_config){.mem_limit = WRAP_LIMIT});
    sim_ops = r.dev->ops;
    wrap_ops = *sim_ops;
    wrap_ops.alloc = wrap_alloc;
    wrap_ops.h2d = wrap_h2d;
    r.dev->ops = &wrap_ops;
    memset(&wrap, 0, sizeof wrap);
    stepper s = {.step = 1};
    hbg_pass_report rep;
    assert_int_equal(run(&r, step_orch, &s, &rep), HBG_OK);
    assert_int_equal(r.x[0], 1);

    s.step = 2;
    wrap.armed = true;
    assert_int_equal(run(&r, step_orch, &s, &rep), HBG_E_DEVICE);
    assert_true(wrap.granted);
    assert_int_equal(rep.defs_uploaded, 1);
    assert_int_equal(rep.failed_segment, HBG_PH_ARENA_H2D);
    assert_string_equal(rep.error, "arena_h2d: the device failed a copy or a run");
    assert_non_null(strstr(hbg_device_last_error(), "would exceed the device memory limit"));

    memset(&wrap, 0, sizeof wrap);
    s.step = 3;
    assert_int_equal(run(&r, step_orch, &s, &rep), HBG_OK);
    assert_string_equal(rep.error, "");
    assert_int_equal(r.x[0], 4);
    r.dev->ops = sim_ops;
    rig_close(&r);
}

/* Forty Graph keys a pass, all new each pass (a key per step), with
 * Definitions kept: the cache holds 64, so the last pass's forty leave 24
 * places. Every pass used to fail at its 25th key, every other pass; the
 * oldest kept Definitions now give their places. */
static hbg_status forty_new_keys(hbg_orch *o, void *ctx)
{
    stepper *s = ctx;
    hbg_arg ba = {hbg_orch_arg(o, 0), HBG_INOUT};
    hbg_boundary b = {.ntensors = 1, .args = &ba};
    hbg_status st = HBG_OK;
    for (uint64_t k = 0; k < 40 && !st; k++)
        st = hbg_submit_graph(o, s->step * 1000 + k, step_body, s, &b, 0, NULL);
    return st;
}

static void kept_definitions_turn_over(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, 0);
    hbg_runtime_destroy(r.rt);
    hbg_runtime_config rc = {.device = r.dev, .kernels = r.kt, .records_fd = -1, .nranks = 1,
                             .keep_definitions = true};
    assert_int_equal(hbg_runtime_create(&rc, &r.rt), HBG_OK);
    stepper s;
    int64_t sum = 0;
    for (s.step = 1; s.step <= 12; s.step++) {
        hbg_pass_report rep;
        if (run(&r, forty_new_keys, &s, &rep))
            fail_msg("pass %llu: %s", (unsigned long long)s.step, rep.error);
        /* forty new ones, and when the device's pool fills, the pass's
         * own again after it forgets the rest (graph_upload) */
        assert_true(rep.defs_uploaded >= 40);
        sum += 40 * (int64_t)s.step;
        assert_int_equal(r.x[N - 1], sum);
    }
    /* keys that come back are found again where they are kept: the last
     * pass's forty, replayed, record nothing new */
    s.step = 12;
    hbg_pass_report rep;
    assert_int_equal(run(&r, forty_new_keys, &s, &rep), HBG_OK);
    assert_int_equal(rep.defs_uploaded, 0);
    assert_int_equal(r.x[N - 1], sum + 40 * 12);
    rig_close(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_run_inside_a_pass_is_refused),
        cmocka_unit_test(refusals_without_a_report_are_named),
        cmocka_unit_test(a_body_keeps_out_of_its_callers_scopes),
        cmocka_unit_test(a_status_that_is_none_is_named),
        cmocka_unit_test(an_eager_run_that_failed_runs_no_body_kernel),
        cmocka_unit_test(a_cut_message_ends_on_a_whole_character),
        cmocka_unit_test(a_run_of_its_own_device_from_a_kernel_is_refused),
        cmocka_unit_test(a_cycle_through_another_device_is_refused),
        cmocka_unit_test(sim_counts_past_the_limits_are_named),
        cmocka_unit_test(a_bad_boundary_slot_is_refused_eagerly),
        cmocka_unit_test(a_predicate_outside_the_boundary_is_named),
        cmocka_unit_test(a_bad_boundary_dep_is_refused_eagerly),
        cmocka_unit_test(a_fallback_checks_its_deps),
        cmocka_unit_test(a_tensor_outside_the_boundary_is_refused_eagerly),
        cmocka_unit_test(a_body_past_the_node_limit_is_refused_eagerly),
        cmocka_unit_test(a_body_dep_outside_the_body_is_refused_eagerly),
        cmocka_unit_test(an_open_scope_is_named),
        cmocka_unit_test(a_predicate_needs_a_buffer),
        cmocka_unit_test(blocks_past_the_device_limit),
        cmocka_unit_test(null_arguments_are_statuses),
        cmocka_unit_test(create_failures_are_named),
        cmocka_unit_test(create_out_of_memory_is_named),
        cmocka_unit_test(definitions_turn_over_in_a_long_run),
        cmocka_unit_test(a_recovered_refusal_is_not_a_later_failure),
        cmocka_unit_test(a_run_from_a_kernel_is_refused),
        cmocka_unit_test(a_records_write_failure_still_runs_the_pass),
        cmocka_unit_test(kept_definitions_turn_over),
        cmocka_unit_test(a_scalar_slot_is_named),
        cmocka_unit_test(a_bad_mark_is_no_memo_hit),
        cmocka_unit_test(scope_misuse_is_named),
        cmocka_unit_test(a_bad_boundary_is_named),
        cmocka_unit_test(bad_caller_tensors_are_named),
        cmocka_unit_test(a_caller_tensor_name_is_quoted_whole),
        cmocka_unit_test(an_invalid_task_tensor_is_named),
        cmocka_unit_test(a_view_past_64_bits_is_named),
        cmocka_unit_test(a_kernel_name_is_quoted_on_one_line),
        cmocka_unit_test(small_misuses_are_named),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
