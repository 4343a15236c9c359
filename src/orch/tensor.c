/* Tensor values: dtype facts, constructors and the byte-range arithmetic the
 * tensor map's overlap test rests on.
 *
 * Constructors cannot fail, so bad arguments (more than HBG_MAX_DIMS
 * dimensions, a NULL shape, an unknown dtype) yield a tensor with the invalid
 * dtype HBG_DTYPE_COUNT, which hbg_tensor_in_bounds and
 * hbg_tensor_byte_range then reject: the mistake surfaces at the first
 * submit that checks, never as a wrong address.
 *
 * byte_range treats a negative stride as invalid rather than computing a
 * range below the view's start: nothing in the runtime builds such views,
 * and accepting them would let a view reach before its own offset.
 */
#include <string.h>

#include "hbg/tensor.h"
#include "orch/range.h"

static const char *const dtype_names[HBG_DTYPE_COUNT] = {
    [HBG_F32] = "f32", [HBG_F16] = "f16", [HBG_BF16] = "bf16", [HBG_I8] = "i8",   [HBG_U8] = "u8",
    [HBG_I16] = "i16", [HBG_I32] = "i32", [HBG_U32] = "u32",   [HBG_I64] = "i64", [HBG_U64] = "u64",
};

unsigned hbg_dtype_size(hbg_dtype dt)
{
    return hbg__dtype_size((unsigned)dt);
}

const char *hbg_dtype_name(hbg_dtype dt)
{
    return (unsigned)dt < HBG_DTYPE_COUNT ? dtype_names[dt] : "unknown";
}

/* False when a stride does not fit int64: no buffer could hold the tensor. */
static bool row_major(unsigned ndim, const uint32_t *shape, int64_t *strides)
{
    int64_t s = 1;
    for (unsigned i = ndim; i-- > 0;) {
        strides[i] = s;
        if (i && __builtin_mul_overflow(s, (int64_t)shape[i], &s))
            return false;
    }
    return true;
}

/* Shape and strides of `ndim` dims into `t`, or the invalid dtype. */
static bool set_layout(hbg_tensor *t, unsigned ndim, const uint32_t *shape, const int64_t *strides)
{
    if (ndim > HBG_MAX_DIMS || (ndim && !shape)) {
        t->dtype = HBG_DTYPE_COUNT;
        return false;
    }
    t->ndim = (uint8_t)ndim;
    if (ndim)
        memcpy(t->shape, shape, ndim * sizeof shape[0]);
    if (strides) {
        memcpy(t->strides, strides, ndim * sizeof strides[0]);
    } else if (!row_major(ndim, shape, t->strides)) {
        t->dtype = HBG_DTYPE_COUNT;
        return false;
    }
    return true;
}

hbg_tensor hbg_tensor_desc(hbg_dtype dt, unsigned ndim, const uint32_t *shape)
{
    return hbg_tensor_at(0, dt, ndim, shape);
}

hbg_tensor hbg_tensor_at(uint64_t addr, hbg_dtype dt, unsigned ndim, const uint32_t *shape)
{
    hbg_tensor t;
    memset(&t, 0, sizeof t);
    t.addr = addr;
    t.dtype = (unsigned)dt < HBG_DTYPE_COUNT ? (uint8_t)dt : HBG_DTYPE_COUNT;
    if (set_layout(&t, ndim, shape, NULL) && t.dtype != HBG_DTYPE_COUNT) {
        uint64_t n = 1;
        bool over = false;
        for (unsigned i = 0; i < ndim; i++)
            over |= __builtin_mul_overflow(n, (uint64_t)shape[i], &n);
        if (over || __builtin_mul_overflow(n, (uint64_t)hbg_dtype_size(dt), &t.nbytes)) {
            t.dtype = HBG_DTYPE_COUNT;
            t.nbytes = 0;
        }
    }
    return t;
}

hbg_tensor hbg_tensor_view(const hbg_tensor *t, uint64_t offset, unsigned ndim,
                           const uint32_t *shape, const int64_t *strides)
{
    hbg_tensor v;
    memset(&v, 0, sizeof v);
    if (!t) {
        v.dtype = HBG_DTYPE_COUNT;
        return v;
    }
    v.addr = t->addr;
    v.nbytes = t->nbytes;
    v.dtype = t->dtype;
    v.creator = t->creator;
    v.offset = offset;
    set_layout(&v, ndim, shape, strides);
    return v;
}

uint64_t hbg_tensor_numel(const hbg_tensor *t)
{
    if (!t || t->ndim > HBG_MAX_DIMS)
        return 0;
    uint64_t n = 1;
    for (unsigned i = 0; i < t->ndim; i++)
        if (__builtin_mul_overflow(n, (uint64_t)t->shape[i], &n))
            return UINT64_MAX; /* saturate: no buffer can hold it anyway */
    return n;
}

bool hbg_tensor_byte_range(const hbg_tensor *t, uint64_t *lo, uint64_t *hi)
{
    return t && hbg__byte_range(t, lo, hi);
}

bool hbg_tensor_in_bounds(const hbg_tensor *t)
{
    uint64_t lo, hi;
    if (hbg_tensor_byte_range(t, &lo, &hi))
        return hi <= t->nbytes;
    /* An empty view touches no byte; it is in bounds when its start is. */
    if (!t || t->ndim > HBG_MAX_DIMS || !hbg_dtype_size((hbg_dtype)t->dtype) || hbg_tensor_numel(t))
        return false;
    for (unsigned i = 0; i < t->ndim; i++)
        if (t->strides[i] < 0)
            return false;
    uint64_t b0;
    return !__builtin_mul_overflow(t->offset, (uint64_t)hbg_dtype_size((hbg_dtype)t->dtype), &b0) &&
           b0 <= t->nbytes;
}
