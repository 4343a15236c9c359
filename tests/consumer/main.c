/* The smallest complete hbg program: two kernels, one caller tensor pair,
 * a two-task graph whose dependency the runtime infers, bound and run on the
 * simulated device, and its result checked.
 *
 *   x (IN), y (INOUT): 8 floats each
 *   task 1 (vector core):  y = y + x
 *   task 2 (vector core):  y = 2 * y     (after task 1: it reads what 1 wrote)
 *
 * Built against an installed hbg by tests/consumer/run.sh, and shown in
 * docs/embedding.md. Exit status 0 when y is right, 1 otherwise. */
#include <stdio.h>

#include "hbg/runtime.h"

enum { K_ADD = 1, K_DOUBLE = 2, N = 8 };

/* y += x, elementwise; a kernel sees device addresses (hbg_kernel_ptr). */
static int k_add(const hbg_kernel_args *a)
{
    const float *x = hbg_kernel_ptr(&a->tensors[0]);
    float *y = hbg_kernel_ptr(&a->tensors[1]);
    for (uint32_t i = 0; i < a->tensors[0].shape[0]; i++)
        y[i] += x[i];
    return 0;
}

static int k_double(const hbg_kernel_args *a)
{
    float *y = hbg_kernel_ptr(&a->tensors[0]);
    for (uint32_t i = 0; i < a->tensors[0].shape[0]; i++)
        y[i] *= 2.0f;
    return 0;
}

/* The orchestration: the pass's task graph, submitted in program order. */
static hbg_status orchestrate(hbg_orch *o, void *ctx)
{
    (void)ctx;
    hbg_tensor x = *hbg_orch_arg(o, 0), y = *hbg_orch_arg(o, 1);
    hbg_task_id id;
    hbg_arg add_args[] = {{&x, HBG_IN}, {&y, HBG_INOUT}};
    hbg_task add = {.kernel_aic = HBG_KERNEL_NONE, .kernel_aiv = K_ADD, .core = HBG_CORE_AIV,
                    .blocks = 1, .ntensors = 2, .args = add_args};
    hbg_submit_task(o, &add, &id);
    hbg_arg double_args[] = {{&y, HBG_INOUT}};
    hbg_task twice = {.kernel_aic = HBG_KERNEL_NONE, .kernel_aiv = K_DOUBLE, .core = HBG_CORE_AIV,
                      .blocks = 1, .ntensors = 1, .args = double_args};
    hbg_submit_task(o, &twice, &id);
    return hbg_orch_error(o); /* the first failure of the pass, if any */
}

static hbg_status run(float *x, float *y, hbg_pass_report *rep)
{
    hbg_device *dev = NULL;
    hbg_kernel_table *kt = NULL;
    hbg_runtime *rt = NULL;
    static const hbg_kernel_def kernels[] = {{K_ADD, "add", k_add}, {K_DOUBLE, "double", k_double}};
    hbg_sim_config sc = {0}; /* zeros: the default cores, one rank */
    hbg_status st = hbg_sim_open(&sc, &dev);
    if (!st)
        st = hbg_kernel_table_create(&kt);
    if (!st)
        st = hbg_kernel_register_all(kt, kernels, sizeof kernels / sizeof kernels[0]);
    if (!st) {
        hbg_runtime_config rc = {.device = dev, .kernels = kt}; /* zeros: default window and heap */
        st = hbg_runtime_create(&rc, &rt);
    }
    if (!st) {
        uint32_t n = N;
        hbg_host_tensor args[] = {
            {.name = "x", .host = x, .layout = hbg_tensor_desc(HBG_F32, 1, &n), .dir = HBG_IN},
            {.name = "y", .host = y, .layout = hbg_tensor_desc(HBG_F32, 1, &n), .dir = HBG_INOUT},
        };
        hbg_program prog = {.name = "consumer", .orch = orchestrate, .nargs = 2, .args = args};
        st = hbg_runtime_run(rt, &prog, false, rep); /* bind, run, read y back */
    }
    hbg_runtime_destroy(rt);
    hbg_kernel_table_destroy(kt);
    hbg_device_close(dev);
    return st;
}

int main(void)
{
    float x[N], y[N];
    for (int i = 0; i < N; i++) {
        x[i] = (float)i;
        y[i] = 1.0f;
    }
    hbg_pass_report rep;
    hbg_status st = run(x, y, &rep);
    if (st) {
        fprintf(stderr, "consumer: %s\n", hbg_strerror(st));
        return 1;
    }
    for (int i = 0; i < N; i++) {
        if (y[i] != 2.0f * (1.0f + (float)i)) {
            fprintf(stderr, "consumer: y[%d] is %g, expected %g\n", i, (double)y[i], 2.0 * (1.0 + i));
            return 1;
        }
    }
    printf("consumer: %u tasks bound and run, y = 2 * (y + x) for all %d elements\n", rep.tasks, N);
    return 0;
}
