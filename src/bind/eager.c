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
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "bind/bind_internal.h"
#include "device/exec.h"
#include "graph/graph_internal.h"
#include "hbg/runtime.h"
#include "util/printable.h"

typedef struct eager_ctx {
    const hbg_kernel_table *kernels;
    void *services;
    uint32_t rank, nranks;
    bool kernel_failed; /* a kernel's return failed the pass: the words are its call's */
    char kernel_error[HBG_PASS_ERROR_MAX];
} eager_ctx;

static hbg_status run_task(void *ctx, uint32_t task, const hbg_img_task *t, const hbg_tensor *tensors,
                           const uint64_t *scalars, const hbg_img_pred *preds)
{
    eager_ctx *e = ctx;
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
        if (st) {
            e->kernel_failed = true;
            snprintf(e->kernel_error, sizeof e->kernel_error, "%s", hbg__exec_last_error());
            return st;
        }
    }
    return HBG_OK;
}

hbg_status hbg_eager_run(const hbg_program *p, const hbg_kernel_table *kt, uint64_t heap_bytes,
                         uint32_t rank, uint32_t nranks, void *services)
{
    return hbg_eager_run_window(p, kt, heap_bytes, 0, rank, nranks, services);
}

/* The words of this thread's last failed eager run ("" after a success):
 * the orchestrator that held them is gone when the call returns. */
static _Thread_local char last_error[HBG_PASS_ERROR_MAX];

const char *hbg_eager_last_error(void)
{
    return last_error;
}

static hbg_status fail(hbg_status st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static hbg_status fail(hbg_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hbg__vformat(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    hbg__mask_controls(last_error); /* one line, whatever a name it quotes holds */
    return st;
}

hbg_status hbg_eager_run_window(const hbg_program *p, const hbg_kernel_table *kt, uint64_t heap_bytes,
                                uint32_t task_window, uint32_t rank, uint32_t nranks, void *services)
{
    last_error[0] = '\0';
    if (!p)
        return fail(HBG_E_INVAL, "no program (hbg_program is NULL)");
    if (!p->orch)
        return fail(HBG_E_INVAL, "program %s has no orchestration function (orch is NULL)",
                    p->name ? p->name : "(unnamed)");
    if (!kt)
        return fail(HBG_E_INVAL, "no kernel table (NULL)");
    /* a rank outside its job, refused as hbg_runtime_create refuses it */
    if (nranks ? rank >= nranks : rank != 0)
        return fail(HBG_E_INVAL, "rank %u of %u ranks: no such rank", rank, nranks);
    /* said here, as the orchestrator refuses it with a bare status */
    if (task_window > HBG_MAX_TASK_WINDOW)
        return fail(HBG_E_INVAL, "task window %u is past the limit of %u (HBG_MAX_TASK_WINDOW)", task_window,
                    HBG_MAX_TASK_WINDOW);
    /* refused as hbg_runtime_create refuses it: past it the 64-byte
     * rounding of a heap offset wraps, and no reservation is tried (which
     * failed as HBG_E_NOMEM, a reason of the host's, not the caller's) */
    if (heap_bytes > HBG_MAX_HEAP_BYTES)
        return fail(HBG_E_INVAL, "heap_bytes %llu is past the limit of %llu (HBG_MAX_HEAP_BYTES)",
                    (unsigned long long)heap_bytes, (unsigned long long)HBG_MAX_HEAP_BYTES);
    /* the caller tensors bind would refuse: a reference that ran them
     * would check nothing */
    hbg__argfault_at af;
    if (!hbg__caller_args_ok(p, &af)) {
        hbg__argfault_format(&af, p, last_error, sizeof last_error);
        return HBG_E_INVAL;
    }
    if (heap_bytes == 0)
        heap_bytes = HBG_DEFAULT_HEAP_BYTES;
    void *heap = mmap(NULL, heap_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (heap == MAP_FAILED)
        return fail(HBG_E_NOMEM, "cannot reserve %llu bytes of host memory for the GM heap: %s",
                    (unsigned long long)heap_bytes, strerror(errno));
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
    if (st) {
        fail(st, "cannot create the orchestrator: %s", hbg_strerror(st));
    } else {
        /* refused here too, as the device path refuses it: here the
         * write would change the caller's own weights in place */
        hbg__set_kept(o, p, args);
        hbg__orch_begin_pass(o, cfg.heap_base, args, p->nargs);
        hbg_status ost = hbg__orch_returned(o, p->orch(o, p->ctx), false);
        st = hbg__orch_end_pass(o);
        if (!st)
            st = ost;
        if (st) {
            if (ec.kernel_failed) /* the kernel's call named, as a device run names it, whatever it returned */
                fail(st, "%s", ec.kernel_error);
            else if (hbg_orch_error(o))
                fail(st, "%s", hbg_orch_last_error(o));
            else /* a bare status from the program's own code */
                fail(st, "orchestration: %s", hbg_strerror(st));
        }
        hbg__orch_destroy(o);
    }
    munmap(heap, heap_bytes);
    if (!st) /* a failed run nested in this one (its orchestration's, a kernel's) left its words */
        last_error[0] = '\0';
    return st;
}
