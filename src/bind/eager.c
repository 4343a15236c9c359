/* Eager execution: each task runs the moment it is submitted, in program
 * order, on whatever memory its tensors name (host memory in practice).
 *
 * This is the reference a device run is checked against: program order is a
 * valid schedule only if every dependency the program relies on is one the
 * runtime honours, so a lost edge shows up as a difference between the two.
 *
 * It lives with the bind pipeline, not the orchestrator: running a kernel is
 * the device layer's business (device/exec.h), and the orchestrator only
 * calls back through hbg__orch_config.run_task.
 */
#include <sys/mman.h>

#include "bind/bind_internal.h"
#include "device/exec.h"
#include "graph/graph_internal.h"
#include "hbg/runtime.h"

typedef struct eager_ctx {
    const hbg_kernel_table *kernels;
    void *services;
    uint32_t rank, nranks;
} eager_ctx;

static hbg_status run_task(void *ctx, uint32_t task, const hbg_img_task *t, const hbg_tensor *tensors,
                           const uint64_t *scalars, const hbg_img_pred *preds)
{
    const eager_ctx *e = ctx;
    if (t->kind != HBG_TASK_KERNEL || (t->has_pred && !hbg__exec_pred_holds(&preds[t->pred])))
        return HBG_OK;
    /* The same call the device executors make, so a kernel sees the same
     * arguments and its return value maps to the same status. */
    hbg__exec_call c = {
        .core = t->core,
        .kernel_aic = t->kernel_aic,
        .kernel_aiv = t->kernel_aiv,
        .blocks = t->blocks,
        .args = {.ntensors = t->tensor_cnt,
                 .tensors = tensors + t->tensor_off,
                 .nscalars = t->scalar_cnt,
                 .scalars = scalars + t->scalar_off,
                 .nblocks = t->blocks,
                 .rank = e->rank,
                 .nranks = e->nranks,
                 .services = e->services},
    };
    for (uint32_t b = 0; b < t->blocks; b++) {
        hbg_status st = HBG_OK;
        if (t->core == HBG_CORE_AIC || t->core == HBG_CORE_MIX)
            st = hbg__exec_invoke(e->kernels, &c, b, HBG_CORE_AIC, task, HBG_EXEC_NO_NODE);
        if (!st && (t->core == HBG_CORE_AIV || t->core == HBG_CORE_MIX))
            st = hbg__exec_invoke(e->kernels, &c, b, HBG_CORE_AIV, task, HBG_EXEC_NO_NODE);
        if (st)
            return st;
    }
    return HBG_OK;
}

hbg_status hbg_eager_run(const hbg_program *p, const hbg_kernel_table *kt, uint64_t heap_bytes,
                         uint32_t rank, uint32_t nranks, void *services)
{
    return hbg_eager_run_window(p, kt, heap_bytes, 0, rank, nranks, services);
}

hbg_status hbg_eager_run_window(const hbg_program *p, const hbg_kernel_table *kt, uint64_t heap_bytes,
                                uint32_t task_window, uint32_t rank, uint32_t nranks, void *services)
{
    /* a rank outside its job, refused as hbg_runtime_create refuses it */
    if (!p || !p->orch || !kt || p->nargs > HBG_MAX_PROGRAM_ARGS || (p->nargs && !p->args) ||
        (nranks ? rank >= nranks : rank != 0))
        return HBG_E_INVAL;
    if (heap_bytes == 0)
        heap_bytes = HBG_DEFAULT_HEAP_BYTES;
    void *heap = mmap(NULL, heap_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (heap == MAP_FAILED)
        return HBG_E_NOMEM;
    hbg_tensor args[HBG_MAX_PROGRAM_ARGS];
    for (uint32_t i = 0; i < p->nargs; i++) {
        args[i] = p->args[i].layout;
        args[i].addr = (uint64_t)(uintptr_t)p->args[i].host;
        args[i].creator = 0;
    }
    eager_ctx ec = {.kernels = kt, .services = services, .rank = rank, .nranks = nranks ? nranks : 1};
    hbg__orch_config cfg = {.heap_base = (uint64_t)(uintptr_t)heap, .heap_bytes = heap_bytes, .eager = true,
                           .task_window = task_window,
                           /* one pass: a journal would never be followed */
                           .no_journal = true,
                           .run_task = run_task, .run_ctx = &ec, .rank = rank, .nranks = nranks};
    hbg_orch *o;
    hbg_status st = hbg__graph_orch_create(&cfg, &o);
    if (!st) {
        hbg__orch_begin_pass(o, cfg.heap_base, args, p->nargs);
        hbg_status ost = p->orch(o, p->ctx);
        st = hbg__orch_end_pass(o);
        if (!st)
            st = ost;
        hbg__orch_destroy(o);
    }
    munmap(heap, heap_bytes);
    return st;
}
