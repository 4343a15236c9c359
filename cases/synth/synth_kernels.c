/* synth — the one kernel: a task's result row is a hash of its salt and of
 * every word it reads, so a read of the wrong value (a dependency missed,
 * a view resolved wrongly) changes every result downstream of it. */
#include "hbg/kernel.h"
#include "synth/synth.h"

static uint64_t mix(uint64_t h, uint64_t x)
{
    h = (h ^ x) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
}

/* Folds every word of a view (at most two dimensions, any strides). */
static uint64_t fold_view(const hbg_tensor *t, uint64_t h)
{
    const uint32_t *p = hbg_kernel_ptr(t);
    uint32_t n0 = t->shape[0], n1 = t->ndim > 1 ? t->shape[1] : 1;
    int64_t s0 = t->strides[0], s1 = t->ndim > 1 ? t->strides[1] : 0;
    for (uint32_t i = 0; i < n0; i++)
        for (uint32_t j = 0; j < n1; j++)
            h = mix(h, p[(int64_t)i * s0 + (int64_t)j * s1]);
    return h;
}

/* tensors[0]: the result row; tensors[1 .. n - copies): read; the last
 * `copies` tensors get the result too. scalars: salt, copies. */
static int k_row(const hbg_kernel_args *a)
{
    uint32_t copies = (uint32_t)a->scalars[1];
    uint64_t h = mix(0x5e17ull, a->scalars[0]);
    for (uint32_t i = 1; i + copies < a->ntensors; i++)
        h = fold_view(&a->tensors[i], h);
    for (uint32_t t = 0; t <= copies; t++) {
        uint32_t *dst = hbg_kernel_ptr(&a->tensors[t == 0 ? 0 : a->ntensors - t]);
        for (uint32_t k = 0; k < SYN_ROW; k++)
            dst[k] = (uint32_t)mix(h, k);
    }
    return 0;
}

hbg_status syn_register_kernels(hbg_kernel_table *kt)
{
    static const hbg_kernel_def ks[] = {{SYN_K_ROW_AIV, "synth.row", k_row}, {SYN_K_NODE_AIC, "synth.node", k_row}};
    return hbg_kernel_register_all(kt, ks, sizeof ks / sizeof ks[0]);
}
