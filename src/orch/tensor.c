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
#include <stddef.h>
#include <string.h>

#include "hbg/tensor.h"
#include "orch/range.h"

#define LITTLE_ENDIAN_WORDS (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)

/* Sixteen bytes of a tensor, written as one store (gcc and clang). */
typedef uint64_t w128 __attribute__((vector_size(16)));

/* Loops over the dimensions unrolled whole, so their arrays live in
 * registers (gcc before 8 does not know the pragma, and -Wall would say
 * so). */
#if defined(__clang__) || __GNUC__ >= 8
#define UNROLL5 _Pragma("GCC unroll 5")
#else
#define UNROLL5
#endif

/* x, loaded on its own: see hbg_tensor_view_into. */
static inline uint64_t narrow(uint64_t x)
{
    __asm__("" : "+r"(x));
    return x;
}

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
        bool over = false, empty = false;
        for (unsigned i = 0; i < ndim; i++) {
            empty |= !shape[i];
            over |= __builtin_mul_overflow(n, (uint64_t)shape[i], &n);
        }
        if (empty) /* 0 elements, whatever the product of the others */
            n = 0, over = false;
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

/* The same view as hbg_tensor_view, computed in registers and written
 * to *out as six 16-byte stores. Why it is worth a second version: the
 * 96-byte tensor a submit is given is read back 16 bytes at a time (the
 * task memo's compare, a struct copy), and a wide load cannot be
 * forwarded from the narrower stores of a tensor built field by field
 * while those are still in flight; it waits for them to reach the cache.
 * Returned by value, the tensor is also built in a temporary and copied
 * once more. For the same reason the inputs are read as their writers
 * most likely wrote them (narrow): left to itself, gcc merges two
 * dimensions of the shape into one 8-byte load, and addr and nbytes into
 * one 16-byte load. The words are packed little-endian; elsewhere, and for
 * bad arguments, this is hbg_tensor_view. test_tensor holds the two to
 * the same bytes. */
void hbg_tensor_view_into(hbg_tensor *out, const hbg_tensor *t, uint64_t offset, unsigned ndim,
                          const uint32_t *shape, const int64_t *strides)
{
    if (!LITTLE_ENDIAN_WORDS || !t || ndim > HBG_MAX_DIMS || (ndim && !shape)) {
        *out = hbg_tensor_view(t, offset, ndim, shape, strides);
        return;
    }
    uint64_t sh[HBG_MAX_DIMS];
    int64_t st[HBG_MAX_DIMS];
    bool bad = false;
    /* Constant indices once unrolled: the arrays live in registers. */
UNROLL5
    for (unsigned i = 0; i < HBG_MAX_DIMS; i++)
        sh[i] = i < ndim ? narrow(shape[i]) : 0;
    if (strides) {
UNROLL5
        for (unsigned i = 0; i < HBG_MAX_DIMS; i++)
            st[i] = i < ndim ? strides[i] : 0;
    } else {
        /* row_major's arithmetic; like it, a stride that does not fit
         * leaves the outer ones unset. */
        int64_t s = 1;
UNROLL5
        for (unsigned i = HBG_MAX_DIMS; i-- > 0;) {
            st[i] = 0;
            if (i < ndim && !bad) {
                st[i] = s;
                bad = i && __builtin_mul_overflow(s, (int64_t)sh[i], &s);
            }
        }
    }
    uint64_t dt = bad ? HBG_DTYPE_COUNT : t->dtype;
    /* Field order and widths as in hbg_tensor (static-asserted below). */
    const w128 w[6] = {
        {narrow(t->addr), narrow(t->nbytes)},
        {offset, (uint64_t)st[0]},
        {(uint64_t)st[1], (uint64_t)st[2]},
        {(uint64_t)st[3], (uint64_t)st[4]},
        {sh[0] | sh[1] << 32, sh[2] | sh[3] << 32},
        {sh[4] | (uint64_t)ndim << 32 | dt << 40, t->creator},
    };
    memcpy(out, w, sizeof w);
}

_Static_assert(sizeof(hbg_tensor) == 96 && offsetof(hbg_tensor, strides) == 24 &&
                   offsetof(hbg_tensor, shape) == 64 && offsetof(hbg_tensor, ndim) == 84 &&
                   offsetof(hbg_tensor, dtype) == 85 && offsetof(hbg_tensor, reserved) == 86 &&
                   offsetof(hbg_tensor, creator) == 88 && offsetof(hbg_tensor, reserved2) == 92,
               "hbg_tensor_view_into writes hbg_tensor as six 16-byte words");

uint64_t hbg_tensor_numel(const hbg_tensor *t)
{
    if (!t || t->ndim > HBG_MAX_DIMS)
        return 0;
    uint64_t n = 1;
    bool over = false;
    /* A 0 extent anywhere empties the view, even after extents whose
     * product overflows: look at every one before saturating. */
    for (unsigned i = 0; i < t->ndim; i++) {
        if (!t->shape[i])
            return 0;
        over |= __builtin_mul_overflow(n, (uint64_t)t->shape[i], &n);
    }
    return over ? UINT64_MAX : n; /* saturate: no buffer can hold it anyway */
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
