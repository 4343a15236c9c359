#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "support/orch_fixture.h"

hbg_orch *fx_orch(uint32_t window, uint64_t heap)
{
    hbg__orch_config cfg = {.task_window = window, .heap_base = FAKE_HEAP_BASE, .heap_bytes = heap};
    hbg_orch *o = NULL;
    assert_int_equal(hbg__graph_orch_create(&cfg, &o), HBG_OK);
    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    return o;
}

bool fx_has_edge(const hbg_orch *o, uint32_t from, uint32_t to)
{
    const hbg_img_task *t = &o->img.tasks[to];
    for (uint32_t i = 0; i < t->fanin_cnt; i++)
        if (o->img.fanins[t->fanin_off + i] == from)
            return true;
    return false;
}

uint32_t fx_fanin_count(const hbg_orch *o, uint32_t task)
{
    return o->img.tasks[task].fanin_cnt;
}

hbg_tensor fx_buf(uint64_t addr, uint32_t rows, uint32_t cols)
{
    uint32_t shape[2] = {rows, cols};
    return hbg_tensor_at(addr, HBG_F32, 2, shape);
}

hbg_tensor fx_tile(const hbg_tensor *b, uint32_t r0, uint32_t c0, uint32_t rows, uint32_t cols)
{
    uint32_t shape[2] = {rows, cols};
    return hbg_tensor_view(b, (uint64_t)r0 * b->shape[1] + c0, 2, shape, b->strides);
}

hbg_status fx_task(hbg_orch *o, uint32_t n, hbg_arg *args, hbg_task_id *id)
{
    hbg_task t = {.kernel_aic = HBG_KERNEL_NONE, .kernel_aiv = 1, .core = HBG_CORE_AIV, .blocks = 1,
                  .ntensors = n, .args = args};
    return hbg_submit_task(o, &t, id);
}
