/* Tensor helpers: layouts and the byte ranges dependency inference uses. */
#include <string.h>

#include "hbg/tensor.h"

static const struct {
    unsigned size;
    const char *name;
} dtypes[HBG_DTYPE_COUNT] = {
    [HBG_F32] = {4, "f32"}, [HBG_F16] = {2, "f16"}, [HBG_BF16] = {2, "bf16"},
    [HBG_I8] = {1, "i8"},   [HBG_U8] = {1, "u8"},   [HBG_I16] = {2, "i16"},
    [HBG_I32] = {4, "i32"}, [HBG_U32] = {4, "u32"}, [HBG_I64] = {8, "i64"},
    [HBG_U64] = {8, "u64"},
};

unsigned hbg_dtype_size(hbg_dtype dt)
{
    return (unsigned)dt < HBG_DTYPE_COUNT ? dtypes[dt].size : 0;
}

const char *hbg_dtype_name(hbg_dtype dt)
{
    return (unsigned)dt < HBG_DTYPE_COUNT ? dtypes[dt].name : "?";
}

static void row_major(hbg_tensor *t)
{
    int64_t s = 1;
    for (int d = (int)t->ndim - 1; d >= 0; d--) {
        t->strides[d] = s;
        s *= (int64_t)t->shape[d];
    }
}

hbg_tensor hbg_tensor_desc(hbg_dtype dt, unsigned ndim, const uint32_t *shape)
{
    hbg_tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = (uint8_t)dt;
    t.ndim = (uint8_t)(ndim > HBG_MAX_DIMS ? HBG_MAX_DIMS : ndim);
    for (unsigned d = 0; d < t.ndim; d++)
        t.shape[d] = shape[d];
    row_major(&t);
    t.nbytes = hbg_tensor_numel(&t) * hbg_dtype_size(dt);
    return t;
}

hbg_tensor hbg_tensor_at(uint64_t addr, hbg_dtype dt, unsigned ndim, const uint32_t *shape)
{
    hbg_tensor t = hbg_tensor_desc(dt, ndim, shape);
    t.addr = addr;
    return t;
}

hbg_tensor hbg_tensor_view(const hbg_tensor *base, uint64_t offset, unsigned ndim,
                           const uint32_t *shape, const int64_t *strides)
{
    hbg_tensor t = *base;
    t.offset = offset;
    t.ndim = (uint8_t)(ndim > HBG_MAX_DIMS ? HBG_MAX_DIMS : ndim);
    for (unsigned d = 0; d < HBG_MAX_DIMS; d++) {
        t.shape[d] = d < t.ndim ? shape[d] : 0;
        t.strides[d] = 0;
    }
    if (strides)
        for (unsigned d = 0; d < t.ndim; d++)
            t.strides[d] = strides[d];
    else
        row_major(&t);
    return t;
}

uint64_t hbg_tensor_numel(const hbg_tensor *t)
{
    uint64_t n = 1;
    for (unsigned d = 0; d < t->ndim && d < HBG_MAX_DIMS; d++)
        n *= t->shape[d];
    return n;
}

bool hbg_tensor_byte_range(const hbg_tensor *t, uint64_t *lo, uint64_t *hi)
{
    uint64_t esz = hbg_dtype_size((hbg_dtype)t->dtype);
    if (!esz || t->ndim > HBG_MAX_DIMS)
        return false;
    uint64_t last = t->offset;
    for (unsigned d = 0; d < t->ndim; d++) {
        if (t->shape[d] == 0)
            return false;
        if (t->strides[d] < 0)
            return false;
        last += (uint64_t)(t->shape[d] - 1) * (uint64_t)t->strides[d];
    }
    *lo = t->offset * esz;
    *hi = (last + 1) * esz;
    return true;
}

bool hbg_tensor_in_bounds(const hbg_tensor *t)
{
    uint64_t lo, hi;
    return hbg_tensor_byte_range(t, &lo, &hi) && hi <= t->nbytes;
}
