/* The kernels of the image fuzzers (fuzz_image, fuzz_sim): every id below
 * HBG_MAX_KERNELS is registered, two of them fail (to walk a failed call
 * too), the others read what the call was given; ids past it are
 * unregistered. One table for both, so that a seed means the same to
 * each.
 */
#ifndef HBG_FUZZ_KERNELS_H
#define HBG_FUZZ_KERNELS_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hbg/device.h"

#define K_FAIL_STATUS (HBG_MAX_KERNELS - 1)
#define K_FAIL_OTHER  (HBG_MAX_KERNELS - 2)

/* Reads every tensor record and scalar the call was given: a slice past
 * its pool is an ASan report. Tensor buffers are not read: the device
 * leaves their addresses to kernels. Traps on a block or core the call
 * cannot have. Returns what it read, for the caller to sink. */
static inline uint64_t fuzz_read_args(const hbg_kernel_args *a)
{
    uint64_t acc = 0;
    for (uint32_t i = 0; i < a->ntensors; i++) {
        hbg_tensor t;
        memcpy(&t, &a->tensors[i], sizeof t);
        acc += t.addr ^ t.nbytes ^ t.offset ^ t.ndim;
    }
    for (uint32_t i = 0; i < a->nscalars; i++)
        acc += a->scalars[i];
    if (a->block >= a->nblocks || (a->core != HBG_CORE_AIC && a->core != HBG_CORE_AIV))
        __builtin_trap();
    return acc;
}

static inline int fuzz_k_fail_status(const hbg_kernel_args *a)
{
    (void)a;
    return -(int)HBG_E_PEER_TIMEOUT;
}

static inline int fuzz_k_fail_other(const hbg_kernel_args *a)
{
    (void)a;
    return 1;
}

/* A table of every id: K_FAIL_STATUS and K_FAIL_OTHER fail, the others
 * run `read` (which calls fuzz_read_args). */
static inline hbg_kernel_table *fuzz_kernels(hbg_kernel_fn read)
{
    hbg_kernel_table *kt = NULL;
    if (hbg_kernel_table_create(&kt))
        abort();
    for (uint16_t id = 0; id < HBG_MAX_KERNELS; id++) {
        hbg_kernel_fn fn = id == K_FAIL_STATUS ? fuzz_k_fail_status : id == K_FAIL_OTHER ? fuzz_k_fail_other : read;
        if (hbg_kernel_register(kt, id, "k", fn))
            abort();
    }
    return kt;
}

#endif
