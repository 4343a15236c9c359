/* A view's byte range, inline for the submit path.
 *
 * hbg_tensor_byte_range (tensor.c) is this function; the orchestrator and
 * the recorder call it for every tensor argument of every task, a few
 * thousand times a pass, where the out-of-line call and the checked
 * arithmetic of each dimension were ~70 instructions. Here the farthest
 * element is summed in 128 bits: each term is below 2^95 and there are at
 * most five, so nothing wraps, and since every term is non-negative the
 * result overflows 64 bits exactly when some partial sum or product the
 * checked version looks at would. One test at the end replaces one per
 * step.
 */
#ifndef HBG_ORCH_RANGE_H
#define HBG_ORCH_RANGE_H

#include <stdbool.h>
#include <stdint.h>

#include "hbg/tensor.h"

__extension__ typedef unsigned __int128 hbg__u128;

/* Bytes per element of a dtype, 0 for one that is not (hbg_dtype_size is
 * this; here so the inline range below reads the one table). */
static inline unsigned hbg__dtype_size(unsigned dt)
{
    static const uint8_t esize[HBG_DTYPE_COUNT] = {
        [HBG_F32] = 4, [HBG_F16] = 2, [HBG_BF16] = 2, [HBG_I8] = 1, [HBG_U8] = 1,
        [HBG_I16] = 2, [HBG_I32] = 4, [HBG_U32] = 4, [HBG_I64] = 8, [HBG_U64] = 8,
    };
    return dt < HBG_DTYPE_COUNT ? esize[dt] : 0;
}

static inline bool hbg__byte_range(const hbg_tensor *t, uint64_t *lo, uint64_t *hi)
{
    unsigned nd = t->ndim;
    if (nd > HBG_MAX_DIMS)
        return false;
    uint64_t es = hbg__dtype_size(t->dtype);
    hbg__u128 last = t->offset;
    bool bad = false;
    for (unsigned i = 0; i < nd; i++) {
        bad |= (t->shape[i] == 0) | (t->strides[i] < 0);
        last += (hbg__u128)(uint64_t)(t->shape[i] - 1) * (uint64_t)t->strides[i];
    }
    hbg__u128 end = (last + 1) * es;
    if (bad || !es || end >> 64)
        return false;
    if (lo)
        *lo = t->offset * es; /* at most end, so it fits */
    if (hi)
        *hi = (uint64_t)end;
    return true;
}

#endif
