#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>

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

#define SAME(a, b, field, n) assert_memory_equal((a)->img.field, (b)->img.field, (size_t)(n) * sizeof *(a)->img.field)

void fx_same_images(const hbg_orch *a, const hbg_orch *b)
{
    assert_int_equal(a->img.ntasks, b->img.ntasks);
    assert_int_equal(a->img.nfanin, b->img.nfanin);
    assert_int_equal(a->img.ntensor, b->img.ntensor);
    assert_int_equal(a->img.nscalar, b->img.nscalar);
    assert_int_equal(a->img.npred, b->img.npred);
    assert_int_equal(a->img.nreplay, b->img.nreplay);
    assert_int_equal(a->img.nbtensor, b->img.nbtensor);
    assert_int_equal(a->img.nbscalar, b->img.nbscalar);
    assert_int_equal(a->img.ndeftab, b->img.ndeftab);
    assert_int_equal(a->heap_used, b->heap_used);
    SAME(a, b, tasks, a->img.ntasks);
    SAME(a, b, fanins, a->img.nfanin);
    SAME(a, b, tensors, a->img.ntensor);
    SAME(a, b, scalars, a->img.nscalar);
    SAME(a, b, preds, a->img.npred);
    SAME(a, b, replays, a->img.nreplay);
    SAME(a, b, btensors, a->img.nbtensor);
    SAME(a, b, bscalars, a->img.nbscalar);
    SAME(a, b, deftab, a->img.ndeftab);
    if (a->graph && b->graph)
        assert_memory_equal(a->graph->deftab_entry, b->graph->deftab_entry,
                            a->img.ndeftab * sizeof a->graph->deftab_entry[0]);
    assert_int_equal(hbg_orch_def_count(a), hbg_orch_def_count(b));
    for (uint32_t i = 0; i < hbg_orch_def_count(a); i++) {
        hbg_def_info x, y;
        assert_int_equal(hbg_orch_def_info(a, i, &x), HBG_OK);
        assert_int_equal(hbg_orch_def_info(b, i, &y), HBG_OK);
        assert_int_equal(x.hash, y.hash);
        assert_int_equal(x.nodes, y.nodes);
        assert_int_equal(x.image_bytes, y.image_bytes);
        /* and byte for byte: a hash can agree by chance, or be cached */
        assert_memory_equal(a->graph->defs[i].img, b->graph->defs[i].img, x.image_bytes);
    }
}
