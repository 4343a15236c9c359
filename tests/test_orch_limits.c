/* Every limit produces its named status, a readable message, and leaves
 * the orchestrator usable. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "hbg/graph.h"
#include "orch/orch_internal.h"
#include "support/orch_fixture.h"

static void defaults_are_the_documented_ones(void **state)
{
    (void)state;
    assert_int_equal(HBG_MAX_TASK_TENSORS, 32);
    assert_int_equal(HBG_MAX_TASK_SCALARS, 16);
    assert_int_equal(HBG_MAX_FANINS, 128);
    assert_int_equal(HBG_DEFAULT_TASK_WINDOW, 16384);
    assert_true(HBG_DEFAULT_HEAP_BYTES == 256ull << 20);
    assert_true(HBG_LARGE_HEAP_BYTES == 2ull << 30);
    assert_int_equal(HBG_MAX_BOUNDARY_TENSORS, 128);
    assert_int_equal(HBG_MAX_BOUNDARY_SCALARS, 64);
}

static void still_usable(hbg_orch *o)
{
    hbg_task_id id;
    uint32_t before = hbg_orch_task_count(o);
    assert_int_equal(hbg_submit_dummy(o, 0, NULL, &id), HBG_OK);
    assert_int_equal(hbg_orch_task_count(o), before + 1);
}

static void too_many_tensors(void **state)
{
    (void)state;
    hbg_orch *o = fx_orch(64, 1 << 20);
    hbg_tensor b = fx_buf(0x1000, 4, 4);
    hbg_arg args[33];
    for (int i = 0; i < 33; i++)
        args[i] = (hbg_arg){&b, HBG_IN};
    hbg_task_id id;
    assert_int_equal(fx_task(o, 33, args, &id), HBG_E_TOO_MANY_TENSORS);
    assert_int_equal(id, HBG_TASK_NONE);
    assert_int_equal(fx_task(o, 32, args, &id), HBG_OK);
    assert_non_null(strstr(hbg_strerror(HBG_E_TOO_MANY_TENSORS), "32"));
    assert_int_equal(hbg_orch_error(o), HBG_E_TOO_MANY_TENSORS);
    still_usable(o);
    hbg__orch_destroy(o);
}

static void too_many_scalars(void **state)
{
    (void)state;
    hbg_orch *o = fx_orch(64, 1 << 20);
    uint64_t s[17] = {0};
    hbg_task t = {.kernel_aic = HBG_KERNEL_NONE, .kernel_aiv = 1, .core = HBG_CORE_AIV, .blocks = 1,
                  .nscalars = 17, .scalars = s};
    hbg_task_id id;
    assert_int_equal(hbg_submit_task(o, &t, &id), HBG_E_TOO_MANY_SCALARS);
    t.nscalars = 16;
    assert_int_equal(hbg_submit_task(o, &t, &id), HBG_OK);
    assert_non_null(strstr(hbg_strerror(HBG_E_TOO_MANY_SCALARS), "16"));
    hbg__orch_destroy(o);
}

static void too_many_fanins(void **state)
{
    (void)state;
    hbg_orch *o = fx_orch(512, 1 << 20);
    hbg_task_id deps[129];
    for (int i = 0; i < 129; i++)
        assert_int_equal(hbg_submit_dummy(o, 0, NULL, &deps[i]), HBG_OK);
    hbg_task_id id;
    assert_int_equal(hbg_submit_dummy(o, 129, deps, &id), HBG_E_TOO_MANY_FANINS);
    assert_int_equal(hbg_submit_dummy(o, 128, deps, &id), HBG_OK);
    /* Inferred fanins count too: 129 writers of distinct rows, one reader. */
    hbg_tensor buf = fx_buf(0x1000, 129, 4);
    for (uint32_t r = 0; r < 129; r++) {
        hbg_tensor row = fx_tile(&buf, r, 0, 1, 4);
        hbg_arg a[] = {{&row, HBG_OUT}};
        assert_int_equal(fx_task(o, 1, a, &id), HBG_OK);
    }
    uint32_t before = hbg_orch_task_count(o);
    hbg_arg ra[] = {{&buf, HBG_IN}};
    assert_int_equal(fx_task(o, 1, ra, &id), HBG_E_TOO_MANY_FANINS);
    assert_int_equal(hbg_orch_task_count(o), before);
    assert_non_null(strstr(hbg_strerror(HBG_E_TOO_MANY_FANINS), "128"));
    still_usable(o);
    hbg__orch_destroy(o);
}

static void window_full(void **state)
{
    (void)state;
    hbg_orch *o = fx_orch(4, 1 << 20);
    hbg_task_id id;
    for (int i = 0; i < 4; i++)
        assert_int_equal(hbg_submit_dummy(o, 0, NULL, &id), HBG_OK);
    assert_int_equal(hbg_submit_dummy(o, 0, NULL, &id), HBG_E_WINDOW_FULL);
    assert_int_equal(hbg_orch_task_count(o), 4);
    assert_string_equal(hbg_strerror(HBG_E_WINDOW_FULL), "task window full");
    assert_int_equal(hbg__orch_end_pass(o), HBG_E_WINDOW_FULL);
    /* The next pass starts clean. */
    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    assert_int_equal(hbg_submit_dummy(o, 0, NULL, &id), HBG_OK);
    assert_int_equal(hbg__orch_end_pass(o), HBG_OK);
    hbg__orch_destroy(o);
}

static void heap_exhausted(void **state)
{
    (void)state;
    hbg_orch *o = fx_orch(64, 1024);
    uint32_t shape[1] = {200};
    hbg_tensor a = hbg_tensor_desc(HBG_F32, 1, shape), b = hbg_tensor_desc(HBG_F32, 1, shape);
    hbg_tensor *ts[] = {&a, &b};
    hbg_task_id id;
    assert_int_equal(hbg_alloc_tensors(o, 2, ts, &id), HBG_E_HEAP_EXHAUSTED);
    assert_int_equal(hbg_orch_heap_used(o), 0);
    assert_int_equal(hbg_orch_task_count(o), 0);
    assert_int_equal(hbg_alloc_tensors(o, 1, ts, &id), HBG_OK);
    assert_int_equal(hbg_orch_heap_used(o), 800);
    hbg_arg oa[] = {{&b, HBG_OUT_ALLOC}};
    assert_int_equal(fx_task(o, 1, oa, &id), HBG_E_HEAP_EXHAUSTED);
    assert_int_equal(hbg_orch_heap_used(o), 800);
    assert_non_null(strstr(hbg_strerror(HBG_E_HEAP_EXHAUSTED), "heap"));
    still_usable(o);
    hbg__orch_destroy(o);
}

/* HBG_OUT_ALLOC makes a buffer; every other direction uses the one the
 * tensor names. Mixing them up is a named status, not a silent copy. */
static void alloc_needs_no_buffer(void **state)
{
    (void)state;
    hbg_orch *o = fx_orch(64, 1 << 20);
    hbg_tensor caller = fx_buf(0x5000, 4, 4);
    hbg_arg wrong[] = {{&caller, HBG_OUT_ALLOC}};
    hbg_task_id id;
    assert_int_equal(fx_task(o, 1, wrong, &id), HBG_E_ARG_HAS_BUFFER);
    assert_string_equal(hbg_strerror(HBG_E_ARG_HAS_BUFFER),
                        "a tensor the runtime is to allocate already names a buffer (write into it with HBG_OUT)");
    /* the caller's tensor is untouched, nothing was carved */
    assert_int_equal(caller.addr, 0x5000);
    assert_int_equal(hbg_orch_heap_used(o), 0);
    /* HBG_OUT writes into the caller's buffer itself */
    hbg_arg right[] = {{&caller, HBG_OUT}};
    assert_int_equal(fx_task(o, 1, right, &id), HBG_OK);
    assert_int_equal(o->img.tensors[o->img.tasks[id].tensor_off].addr, 0x5000);
    assert_int_equal(hbg_orch_heap_used(o), 0);
    /* alloc_tensors follows the same rule */
    hbg_tensor *ts[] = {&caller};
    assert_int_equal(hbg_alloc_tensors(o, 1, ts, &id), HBG_E_ARG_HAS_BUFFER);
    assert_int_equal(caller.addr, 0x5000);
    still_usable(o);
    hbg__orch_destroy(o);
}

static void write_needs_a_buffer(void **state)
{
    (void)state;
    hbg_orch *o = fx_orch(64, 1 << 20);
    uint32_t shape[1] = {16};
    hbg_tensor d = hbg_tensor_desc(HBG_F32, 1, shape);
    hbg_task_id id;
    static const hbg_dir dirs[] = {HBG_IN, HBG_OUT, HBG_INOUT, HBG_NO_DEP};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        hbg_arg a[] = {{&d, dirs[i]}};
        assert_int_equal(fx_task(o, 1, a, &id), HBG_E_ARG_NO_BUFFER);
    }
    assert_string_equal(hbg_strerror(HBG_E_ARG_NO_BUFFER),
                        "a tensor argument names no buffer (addr 0; allocate it with HBG_OUT_ALLOC or "
                        "hbg_alloc_tensors)");
    assert_int_equal(hbg_orch_task_count(o), 0);
    hbg__orch_destroy(o);
}

/* A tensor struct reused for a second allocation is refused until it is
 * reset to its description; a refused task hands its allocations back. */
static void allocated_tensor_reused(void **state)
{
    (void)state;
    hbg_orch *o = fx_orch(64, 1024);
    uint32_t shape[1] = {64};
    hbg_tensor desc = hbg_tensor_desc(HBG_F32, 1, shape), t = desc;
    hbg_arg a[] = {{&t, HBG_OUT_ALLOC}};
    hbg_task_id id;
    assert_int_equal(fx_task(o, 1, a, &id), HBG_OK);
    assert_int_equal(t.addr, FAKE_HEAP_BASE);
    assert_int_equal(fx_task(o, 1, a, &id), HBG_E_ARG_HAS_BUFFER);
    t = desc;
    assert_int_equal(fx_task(o, 1, a, &id), HBG_OK);
    assert_int_equal(t.addr, FAKE_HEAP_BASE + 256);
    /* two more 256-byte buffers fit, three do not: the first two are
     * handed back and name no buffer again */
    hbg_tensor x = desc, y = desc, z = desc;
    hbg_arg three[] = {{&x, HBG_OUT_ALLOC}, {&y, HBG_OUT_ALLOC}, {&z, HBG_OUT_ALLOC}};
    assert_int_equal(fx_task(o, 3, three, &id), HBG_E_HEAP_EXHAUSTED);
    assert_int_equal(x.addr, 0);
    assert_int_equal(y.addr, 0);
    assert_int_equal(z.addr, 0);
    assert_int_equal(fx_task(o, 2, three, &id), HBG_OK);
    hbg__orch_destroy(o);
}

/* hbg_orch_fail: the orchestration's own failure, in its own words, kept
 * as the pass's first failure like a refused call's. */
static void orchestration_fails_in_its_own_words(void **state)
{
    (void)state;
    hbg_orch *o = fx_orch(64, 8192);
    hbg_task_id id;
    for (int i = 0; i < 3; i++)
        assert_int_equal(hbg_submit_dummy(o, 0, NULL, &id), HBG_OK);
    assert_int_equal(hbg_orch_fail(o, HBG_E_INVAL, "layer %u: %s", 3u, "no bound"), HBG_E_INVAL);
    assert_int_equal(hbg_orch_error(o), HBG_E_INVAL);
    assert_string_equal(hbg_orch_last_error(o), "orchestration (3 tasks submitted): layer 3: no bound");
    /* later failures, its own or a call's, keep the first */
    assert_int_equal(hbg_orch_fail(o, HBG_E_NOMEM, "second"), HBG_E_NOMEM);
    hbg_tensor ok = fx_buf(0x1000, 4, 4);
    hbg_arg wrong[] = {{&ok, HBG_OUT_ALLOC}};
    assert_int_equal(fx_task(o, 1, wrong, &id), HBG_E_ARG_HAS_BUFFER);
    assert_int_equal(hbg_orch_error(o), HBG_E_INVAL);
    assert_string_equal(hbg_orch_last_error(o), "orchestration (3 tasks submitted): layer 3: no bound");

    /* a refused call first: its words stay */
    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    assert_int_equal(fx_task(o, 1, wrong, &id), HBG_E_ARG_HAS_BUFFER);
    assert_int_equal(hbg_orch_fail(o, HBG_E_INVAL, "mine"), HBG_E_INVAL);
    assert_int_equal(hbg_orch_error(o), HBG_E_ARG_HAS_BUFFER);
    assert_string_equal(hbg_orch_last_error(o),
                        "task 0 arg 0: a tensor to allocate already names buffer 0x1000 (write into it with HBG_OUT)");

    /* HBG_OK is no failure status; control bytes do not break the line */
    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    assert_int_equal(hbg_orch_fail(o, HBG_OK, "%s", "a\nb\tc\x7f"), HBG_E_INVAL);
    assert_int_equal(hbg_orch_error(o), HBG_E_INVAL);
    assert_string_equal(hbg_orch_last_error(o), "orchestration (0 tasks submitted): a?b?c?");
    /* no words: the status's own */
    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    const char *none = NULL;
    assert_int_equal(hbg_orch_fail(o, HBG_E_NOMEM, none), HBG_E_NOMEM);
    char want[256];
    snprintf(want, sizeof want, "orchestration (0 tasks submitted): %s", hbg_strerror(HBG_E_NOMEM));
    assert_string_equal(hbg_orch_last_error(o), want);
    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    assert_int_equal(hbg_orch_fail(o, HBG_E_NOMEM, "%s", ""), HBG_E_NOMEM);
    assert_string_equal(hbg_orch_last_error(o), want);
    /* a long text is cut to the message's 255 bytes */
    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    char longer[600];
    memset(longer, 'x', sizeof longer - 1);
    longer[sizeof longer - 1] = 0;
    assert_int_equal(hbg_orch_fail(o, HBG_E_INVAL, "%s", longer), HBG_E_INVAL);
    assert_int_equal(strlen(hbg_orch_last_error(o)), 255);
    assert_memory_equal(hbg_orch_last_error(o), "orchestration (0 tasks submitted): xxx", 38);
    /* the next pass starts clean */
    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    assert_string_equal(hbg_orch_last_error(o), "");

    /* outside a pass, nothing to fail */
    assert_int_equal(hbg__orch_end_pass(o), HBG_OK);
    assert_int_equal(hbg_orch_fail(o, HBG_E_INVAL, "late"), HBG_E_STATE);
    assert_int_equal(hbg_orch_error(o), HBG_OK);
    assert_int_equal(hbg_orch_fail(NULL, HBG_E_INVAL, "x"), HBG_E_INVAL);
    hbg__orch_destroy(o);
}

/* hbg_orch_last_error names the task, the argument and the reason of the
 * pass's first failure; later failures do not overwrite it. */
static void errors_say_what_was_wrong(void **state)
{
    (void)state;
    hbg_orch *o = fx_orch(64, 8192);
    assert_string_equal(hbg_orch_last_error(o), "");
    hbg_task_id id;
    for (int i = 0; i < 12; i++)
        assert_int_equal(hbg_submit_dummy(o, 0, NULL, &id), HBG_OK);
    hbg_tensor ok = fx_buf(0x1000, 4, 4);
    uint32_t n = 1024;
    hbg_tensor big = hbg_tensor_at(0x2000, HBG_F32, 1, &n);
    big.nbytes = 1024;
    hbg_arg a[] = {{&ok, HBG_IN}, {&ok, HBG_IN}, {&ok, HBG_IN}, {&big, HBG_IN}};
    assert_int_equal(fx_task(o, 4, a, &id), HBG_E_INVAL);
    assert_string_equal(hbg_orch_last_error(o), "task 12 arg 3: view [0, 4096) outside its 1024-byte buffer");
    /* the first failure stays the one reported */
    hbg_arg wrong[] = {{&ok, HBG_OUT_ALLOC}};
    assert_int_equal(fx_task(o, 1, wrong, &id), HBG_E_ARG_HAS_BUFFER);
    assert_string_equal(hbg_orch_last_error(o), "task 12 arg 3: view [0, 4096) outside its 1024-byte buffer");

    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    assert_string_equal(hbg_orch_last_error(o), "");
    assert_int_equal(fx_task(o, 1, wrong, &id), HBG_E_ARG_HAS_BUFFER);
    assert_string_equal(hbg_orch_last_error(o),
                        "task 0 arg 0: a tensor to allocate already names buffer 0x1000 (write into it with HBG_OUT)");

    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    uint32_t n7 = 1792, n4 = 1024;
    hbg_tensor t7 = hbg_tensor_desc(HBG_F32, 1, &n7), t4 = hbg_tensor_desc(HBG_F32, 1, &n4);
    hbg_tensor *ts[] = {&t7};
    assert_int_equal(hbg_alloc_tensors(o, 1, ts, &id), HBG_OK);
    hbg_arg more[] = {{&ok, HBG_IN}, {&t4, HBG_OUT_ALLOC}};
    assert_int_equal(fx_task(o, 2, more, &id), HBG_E_HEAP_EXHAUSTED);
    assert_string_equal(hbg_orch_last_error(o),
                        "task 1 arg 1: GM heap exhausted: 4096 bytes requested, 1024 free of 8192");

    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    hbg_tensor d = hbg_tensor_desc(HBG_F32, 1, &n4);
    hbg_arg none[] = {{&d, HBG_OUT}};
    assert_int_equal(fx_task(o, 1, none, &id), HBG_E_ARG_NO_BUFFER);
    assert_string_equal(hbg_orch_last_error(o),
                        "task 0 arg 0: the tensor names no buffer (addr 0; allocate it with HBG_OUT_ALLOC)");

    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    hbg_task_id late = 5;
    assert_int_equal(hbg_submit_dummy(o, 1, &late, &id), HBG_E_BAD_DEP);
    assert_string_equal(hbg_orch_last_error(o), "task 0: dep 0 names 0x5, which is no earlier task (0 so far)");

    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    hbg_task t = {.kernel_aic = HBG_KERNEL_NONE, .kernel_aiv = HBG_KERNEL_NONE, .core = HBG_CORE_AIV, .blocks = 1};
    assert_int_equal(hbg_submit_task(o, &t, &id), HBG_E_INVAL);
    assert_string_equal(hbg_orch_last_error(o),
                        "task 0: core AIV needs kernel_aiv (kernel_aic 65535, kernel_aiv 65535; HBG_KERNEL_NONE is "
                        "65535)");
    hbg__orch_destroy(o);
}

static hbg_status empty_body(hbg_orch *o, void *ctx, const hbg_boundary *b)
{
    (void)o, (void)ctx, (void)b;
    return HBG_OK;
}

static void boundary_too_wide(void **state)
{
    (void)state;
    hbg_orch *o = fx_orch(64, 1 << 20);
    hbg_tensor buf = fx_buf(0x1000, 4, 4);
    hbg_arg args[129];
    for (int i = 0; i < 129; i++)
        args[i] = (hbg_arg){&buf, HBG_IN};
    uint64_t sc[65] = {0};
    hbg_boundary b = {.ntensors = 129, .args = args};
    hbg_task_id id;
    assert_int_equal(hbg_submit_graph(o, 1, empty_body, NULL, &b, 0, &id), HBG_E_BOUNDARY_TOO_WIDE);
    b = (hbg_boundary){.ntensors = 1, .args = args, .nscalars = 65, .scalars = sc};
    assert_int_equal(hbg_submit_graph(o, 1, empty_body, NULL, &b, 0, &id), HBG_E_BOUNDARY_TOO_WIDE);
    b.nscalars = 64;
    assert_int_equal(hbg_submit_graph(o, 1, empty_body, NULL, &b, 0, &id), HBG_OK);
    assert_non_null(strstr(hbg_strerror(HBG_E_BOUNDARY_TOO_WIDE), "128"));
    hbg__orch_destroy(o);
}

/* A zero-initialised task is one block of AIC kernel 0; blocks = 0 means
 * 1, inside a Graph body too. */
static hbg_status zero_task_body(hbg_orch *o, void *ctx, const hbg_boundary *b)
{
    (void)ctx, (void)b;
    hbg_task t = {0};
    return hbg_submit_task(o, &t, NULL);
}

static void zero_task_is_valid(void **state)
{
    (void)state;
    hbg_orch *o = fx_orch(64, 1 << 20);
    hbg_task t = {0};
    hbg_task_id id;
    assert_int_equal(hbg_submit_task(o, &t, &id), HBG_OK);
    const hbg_img_task *d = &o->img.tasks[id];
    assert_int_equal(d->blocks, 1);
    assert_int_equal(d->core, HBG_CORE_AIC);
    assert_int_equal(d->kernel_aic, 0);
    assert_int_equal(d->tensor_cnt, 0);
    t = (hbg_task){.kernel_aic = HBG_KERNEL_NONE, .kernel_aiv = 3, .core = HBG_CORE_AIV};
    assert_int_equal(hbg_submit_task(o, &t, &id), HBG_OK);
    assert_int_equal(o->img.tasks[id].blocks, 1);
    hbg_boundary b = {0};
    assert_int_equal(hbg_submit_graph(o, 5, zero_task_body, NULL, &b, 0, &id), HBG_OK);
    const hbg_def_header *h = hbg__def_image(o, 0);
    const hbg_def_node *n = (const hbg_def_node *)(const void *)((const unsigned char *)h + h->off_nodes);
    assert_int_equal(h->nnodes, 1);
    assert_int_equal(n->blocks, 1);
    /* the one zero that has no meaning is a core without its kernel */
    t = (hbg_task){.kernel_aic = 0, .kernel_aiv = HBG_KERNEL_NONE, .core = HBG_CORE_MIX};
    assert_int_equal(hbg_submit_task(o, &t, &id), HBG_E_INVAL);
    assert_string_equal(hbg_orch_last_error(o), "task 3: core MIX needs both kernels (kernel_aic 0, kernel_aiv "
                                                "65535; HBG_KERNEL_NONE is 65535)");
    hbg__orch_destroy(o);
}

static void invalid_arguments(void **state)
{
    (void)state;
    hbg_orch *o = fx_orch(64, 1 << 20);
    hbg_task_id id;
    /* An AIC task without an AIC kernel, a view past its buffer. */
    hbg_task t = {.kernel_aic = HBG_KERNEL_NONE, .kernel_aiv = 1, .core = HBG_CORE_AIC, .blocks = 1};
    assert_int_equal(hbg_submit_task(o, &t, &id), HBG_E_INVAL);
    hbg_tensor buf = fx_buf(0x1000, 4, 4);
    hbg_tensor past = fx_tile(&buf, 3, 0, 2, 4);
    hbg_arg a[] = {{&past, HBG_IN}};
    assert_int_equal(fx_task(o, 1, a, &id), HBG_E_INVAL);
    /* A predicate word outside its tensor. */
    hbg_pred p = {.t = &buf, .byte_offset = 62, .value = 0, .op = HBG_CMP_NE, .elem_size = 4};
    t = (hbg_task){.kernel_aic = HBG_KERNEL_NONE, .kernel_aiv = 1, .core = HBG_CORE_AIV, .blocks = 1, .pred = &p};
    assert_int_equal(hbg_submit_task(o, &t, &id), HBG_E_INVAL);
    p.byte_offset = 60;
    assert_int_equal(hbg_submit_task(o, &t, &id), HBG_OK);
    assert_int_equal(hbg_orch_task_count(o), 1);
    hbg__orch_destroy(o);
}

/* Each refusal of a malformed task says what was wrong. */
static void expect_refusal(hbg_orch *o, const hbg_task *t, hbg_status st, const char *msg)
{
    hbg_task_id id;
    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    assert_int_equal(hbg_submit_task(o, t, &id), st);
    assert_string_equal(hbg_orch_last_error(o), msg);
}

static hbg_status keep_own(hbg_orch *o, void *ctx, const hbg_boundary *b)
{
    (void)b;
    hbg_tensor *tmp = ctx;
    uint32_t n = 16;
    *tmp = hbg_tensor_desc(HBG_F32, 1, &n);
    hbg_arg a[] = {{tmp, HBG_OUT_ALLOC}};
    return fx_task(o, 1, a, NULL);
}

static void malformed_tasks_are_named(void **state)
{
    (void)state;
    hbg_orch *o = fx_orch(64, 1 << 20);
    hbg_tensor buf = fx_buf(0x1000, 4, 4);
    hbg_task t = {.kernel_aic = HBG_KERNEL_NONE, .kernel_aiv = 1, .core = HBG_CORE_AIV, .blocks = 1, .ntensors = 2};
    expect_refusal(o, &t, HBG_E_INVAL, "task 0: 2 tensor arguments but no array of them (NULL)");
    t = (hbg_task){.kernel_aic = HBG_KERNEL_NONE, .kernel_aiv = 1, .core = HBG_CORE_AIV, .blocks = 1, .nscalars = 3};
    expect_refusal(o, &t, HBG_E_INVAL, "task 0: 3 scalars but no array of them (NULL)");
    t = (hbg_task){.kernel_aic = HBG_KERNEL_NONE, .kernel_aiv = 1, .core = HBG_CORE_AIV, .blocks = 1, .ndeps = 1};
    expect_refusal(o, &t, HBG_E_INVAL, "task 0: 1 explicit deps but no array of them (NULL)");
    hbg_pred p = {.t = NULL, .op = HBG_CMP_NE, .elem_size = 4};
    t = (hbg_task){.kernel_aic = HBG_KERNEL_NONE, .kernel_aiv = 1, .core = HBG_CORE_AIV, .blocks = 1, .pred = &p};
    expect_refusal(o, &t, HBG_E_INVAL, "task 0: the predicate has no tensor (NULL)");
    p.t = &buf, p.elem_size = 3;
    expect_refusal(o, &t, HBG_E_INVAL, "task 0: the predicate's elem_size is 3; it takes 1, 2, 4 or 8");
    p.elem_size = 4, p.op = 9;
    expect_refusal(o, &t, HBG_E_INVAL, "task 0: the predicate's op is 9; it takes HBG_CMP_EQ to HBG_CMP_GE (0 to 5)");
    p.op = HBG_CMP_EQ, p.byte_offset = 62;
    expect_refusal(o, &t, HBG_E_INVAL, "task 0: the predicate's word at byte 62 lies past its 64-byte buffer");

    /* Calls refused in a pass are the pass's error, for a program that
     * checks hbg_orch_error once */
    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    assert_int_equal(hbg_submit_task(o, NULL, NULL), HBG_E_INVAL);
    assert_int_equal(hbg_orch_error(o), HBG_E_INVAL);
    assert_string_equal(hbg_orch_last_error(o), "task 0: no task (NULL)");
    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    assert_int_equal(hbg_scope_begin(o, (hbg_scope_mode)7), HBG_E_INVAL);
    assert_int_equal(hbg_orch_error(o), HBG_E_INVAL);
    assert_string_equal(hbg_orch_last_error(o), "task 0: scope mode 7 is neither HBG_SCOPE_AUTO nor HBG_SCOPE_MANUAL");
    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    assert_int_equal(hbg_alloc_tensors(o, 2, NULL, NULL), HBG_E_INVAL);
    assert_string_equal(hbg_orch_last_error(o), "task 0: no list of tensors to allocate (NULL)");
    /* an alloc past its limit counts what it allocates, not task arguments */
    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    hbg_tensor *many[HBG_MAX_ALLOC_TENSORS + 1] = {0};
    assert_int_equal(hbg_alloc_tensors(o, HBG_MAX_ALLOC_TENSORS + 1, many, NULL), HBG_E_TOO_MANY_TENSORS);
    assert_string_equal(hbg_orch_last_error(o), "task 0: 33 tensors to allocate, the limit is 32");
    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    hbg_arg ga[] = {{&buf, HBG_IN}};
    hbg_boundary gb = {.ntensors = 1, .args = ga};
    assert_int_equal(hbg_submit_graph(o, 1, NULL, NULL, &gb, 0, NULL), HBG_E_INVAL);
    assert_int_equal(hbg_orch_error(o), HBG_E_INVAL);
    assert_string_equal(hbg_orch_last_error(o), "task 0 (graph key 0x1): no body function (NULL)");

    /* A Graph body's own buffer, kept past the body: named, as a task's
     * argument, a predicate's tensor and a boundary tensor. */
    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    hbg_tensor tmp, other = fx_buf(0x2000, 4, 4);
    hbg_arg ba[] = {{&other, HBG_IN}};
    hbg_boundary b = {.ntensors = 1, .args = ba};
    assert_int_equal(hbg_submit_graph(o, 3, keep_own, &tmp, &b, 0, NULL), HBG_OK);
    assert_true(tmp.addr >= HBG_REC_BASE);
    hbg_arg use[] = {{&tmp, HBG_IN}};
    t = (hbg_task){.kernel_aic = HBG_KERNEL_NONE, .kernel_aiv = 1, .core = HBG_CORE_AIV, .blocks = 1,
                   .ntensors = 1, .args = use};
    char want[256];
    snprintf(want, sizeof want,
             "task 1 arg 0: the tensor names address 0x%llx, no buffer outside a Graph body: from 0xf000000000000000 "
             "up, addresses are a Graph body's own buffers (HBG_OUT_ALLOC inside the body), which exist only in that "
             "body's replays",
             (unsigned long long)tmp.addr);
    hbg_task_id id;
    assert_int_equal(hbg_submit_task(o, &t, &id), HBG_E_GRAPH_CAPTURE);
    assert_string_equal(hbg_orch_last_error(o), want);
    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    p = (hbg_pred){.t = &tmp, .op = HBG_CMP_NE, .elem_size = 4};
    t = (hbg_task){.kernel_aic = HBG_KERNEL_NONE, .kernel_aiv = 1, .core = HBG_CORE_AIV, .blocks = 1, .pred = &p};
    assert_int_equal(hbg_submit_task(o, &t, &id), HBG_E_GRAPH_CAPTURE);
    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    ba[0].t = &tmp;
    assert_int_equal(hbg_submit_graph(o, 4, keep_own, &other, &b, 0, NULL), HBG_E_INVAL);
    assert_non_null(strstr(hbg_orch_last_error(o), "slot 0: the tensor names address 0x"));
    assert_int_equal(hbg_orch_task_count(o), 0);

    /* an address that high with no Graph anywhere: no buffer either, and
     * said so (no body's buffer can be told from it) */
    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    hbg_tensor wild = fx_buf(UINT64_MAX - 8, 4, 4);
    use[0].t = &wild;
    t = (hbg_task){.kernel_aic = HBG_KERNEL_NONE, .kernel_aiv = 1, .core = HBG_CORE_AIV, .blocks = 1,
                   .ntensors = 1, .args = use};
    assert_int_equal(hbg_submit_task(o, &t, &id), HBG_E_GRAPH_CAPTURE);
    assert_string_equal(hbg_orch_last_error(o),
                        "task 0 arg 0: the tensor names address 0xfffffffffffffff7, no buffer outside a Graph body: "
                        "from 0xf000000000000000 up, addresses are a Graph body's own buffers (HBG_OUT_ALLOC inside "
                        "the body), which exist only in that body's replays");

    /* a flag bit that is no flag: refused, not ignored */
    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    ba[0].t = &other;
    assert_int_equal(hbg_submit_graph(o, 4, keep_own, &tmp, &b, HBG_GRAPH_FALLBACK | 0x80, NULL), HBG_E_INVAL);
    assert_string_equal(hbg_orch_last_error(o),
                        "task 0 (graph key 0x4): flags 0x81: bits 0x80 are no flag (HBG_GRAPH_FALLBACK, "
                        "HBG_GRAPH_CHECK_BODY)");
    assert_int_equal(hbg_orch_task_count(o), 0);
    hbg__orch_destroy(o);
}

/* A task whose writes do not all fit in the tensor map is refused before
 * its first write: no entry of it stays behind to be taken for the task
 * that gets its id next. Window 3: the map holds 16 written buffers. */
static void tensor_map_full_takes_nothing(void **state)
{
    (void)state;
    hbg_orch *o = fx_orch(3, 1 << 20);
    hbg_tensor x[14], y[3];
    hbg_arg args[14];
    for (int i = 0; i < 14; i++) {
        x[i] = fx_buf(0x100000 + (uint64_t)i * 0x10000, 4, 4);
        args[i] = (hbg_arg){&x[i], HBG_OUT};
    }
    hbg_task_id a, b, c, d;
    assert_int_equal(fx_task(o, 14, args, &a), HBG_OK);
    for (int i = 0; i < 3; i++) {
        y[i] = fx_buf(0x200000 + (uint64_t)i * 0x10000, 4, 4);
        args[i] = (hbg_arg){&y[i], HBG_OUT};
    }
    uint32_t entries = o->map.nentries, bufs = o->map.nbufs;
    assert_int_equal(fx_task(o, 3, args, &b), HBG_E_POOL_EXHAUSTED);
    assert_int_equal(b, HBG_TASK_NONE);
    assert_int_equal(o->map.nentries, entries);
    assert_int_equal(o->map.nbufs, bufs);
    /* task 1 now is a dummy; task 2 reads y[0], which nobody wrote */
    assert_int_equal(hbg_submit_dummy(o, 0, NULL, &c), HBG_OK);
    assert_int_equal(c, 1);
    args[0] = (hbg_arg){&y[0], HBG_IN};
    assert_int_equal(fx_task(o, 1, args, &d), HBG_OK);
    assert_int_equal(fx_fanin_count(o, d), 0);
    hbg__orch_destroy(o);
}

/* HBG_E_POOL_EXHAUSTED and HBG_E_DEF_POOL_FULL stand for several pools,
 * each with its own fix: the words say which one filled, and its size
 * (they said "a fixed-size pool is exhausted" for all of them; the
 * copies a replay takes: test_graph_boundary.c). */
static hbg_status many_dummies(hbg_orch *o, void *ctx, const hbg_boundary *b)
{
    (void)b;
    for (uint32_t i = 0; i < *(const uint32_t *)ctx; i++) {
        hbg_status st = hbg_submit_dummy(o, 0, NULL, NULL);
        if (st)
            return st;
    }
    return HBG_OK;
}

static void a_full_pool_is_named(void **state)
{
    (void)state;
    /* window 3: the table holds 16 written buffers */
    hbg_orch *o = fx_orch(3, 1 << 20);
    hbg_tensor x[17];
    hbg_arg args[17];
    for (int i = 0; i < 17; i++) {
        x[i] = fx_buf(0x100000 + (uint64_t)i * 0x10000, 4, 4);
        args[i] = (hbg_arg){&x[i], HBG_OUT};
    }
    assert_int_equal(fx_task(o, 16, args, NULL), HBG_OK);
    assert_int_equal(fx_task(o, 1, args + 16, NULL), HBG_E_POOL_EXHAUSTED);
    assert_string_equal(hbg_orch_last_error(o), "task 1: the tensor map's table of 16 written buffers is full");
    hbg__orch_destroy(o);

    /* a body past HBG_MAX_DEF_NODES */
    o = fx_orch(16, 1 << 20);
    uint32_t n = HBG_MAX_DEF_NODES + 1;
    hbg_boundary b = {.ntensors = 1, .args = args};
    assert_int_equal(hbg_submit_graph(o, 7, many_dummies, &n, &b, 0, NULL), HBG_E_POOL_EXHAUSTED);
    assert_string_equal(hbg_orch_last_error(o),
                        "graph key 0x7 node 4096: the Definition's 4096 nodes are all taken (HBG_MAX_DEF_NODES)");
    hbg__orch_destroy(o);

    /* a 65th key in one pass */
    o = fx_orch(128, 1 << 20);
    n = 1;
    for (uint64_t k = 0; k < 64; k++)
        assert_int_equal(hbg_submit_graph(o, k, many_dummies, &n, &b, 0, NULL), HBG_OK);
    assert_int_equal(hbg_submit_graph(o, 64, many_dummies, &n, &b, 0, NULL), HBG_E_DEF_POOL_FULL);
    assert_string_equal(
        hbg_orch_last_error(o),
        "task 64 (graph key 0x40): Definition cache full: 64 keys, each recorded or replayed this pass");
    hbg__orch_destroy(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults_are_the_documented_ones),
        cmocka_unit_test(a_full_pool_is_named),
        cmocka_unit_test(too_many_tensors),
        cmocka_unit_test(too_many_scalars),
        cmocka_unit_test(too_many_fanins),
        cmocka_unit_test(window_full),
        cmocka_unit_test(heap_exhausted),
        cmocka_unit_test(alloc_needs_no_buffer),
        cmocka_unit_test(write_needs_a_buffer),
        cmocka_unit_test(allocated_tensor_reused),
        cmocka_unit_test(errors_say_what_was_wrong),
        cmocka_unit_test(orchestration_fails_in_its_own_words),
        cmocka_unit_test(zero_task_is_valid),
        cmocka_unit_test(boundary_too_wide),
        cmocka_unit_test(invalid_arguments),
        cmocka_unit_test(malformed_tasks_are_named),
        cmocka_unit_test(tensor_map_full_takes_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
