/* hbg — tensors: a device buffer and a strided view of it.
 *
 * A tensor names a *buffer* by its device base address `addr` and size
 * `nbytes`; `offset`, `shape` and `strides` (in elements) select a view of it.
 * Views of one buffer keep the buffer's `addr` and differ in `offset`: the
 * tensor map keys dependency inference on `addr`, so a view built by moving
 * `addr` instead would be a different buffer to it.
 *
 * Tensors are plain values; copy them freely.
 */
#ifndef HBG_TENSOR_H
#define HBG_TENSOR_H

#include <stdint.h>
#include <stdbool.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HBG_MAX_DIMS 5

typedef enum hbg_dtype {
    HBG_F32 = 0,
    HBG_F16,
    HBG_BF16,
    HBG_I8,
    HBG_U8,
    HBG_I16,
    HBG_I32,
    HBG_U32,
    HBG_I64,
    HBG_U64,
    HBG_DTYPE_COUNT
} hbg_dtype;

typedef struct hbg_tensor {
    uint64_t addr;                 /* device address of the buffer's byte 0 */
    uint64_t nbytes;               /* size of the whole buffer */
    uint64_t offset;               /* view start, in elements from addr */
    int64_t strides[HBG_MAX_DIMS]; /* in elements */
    uint32_t shape[HBG_MAX_DIMS];
    uint8_t ndim;
    uint8_t dtype;                 /* an hbg_dtype */
    uint16_t reserved;
    uint32_t creator;              /* runtime-owned: 1 + id of the task that
                                      allocated the buffer, 0 for caller buffers */
    uint32_t reserved2;            /* zero; keeps the struct free of padding so
                                      recorded images hash the same every time */
} hbg_tensor;

/* Bytes per element of a dtype (0 for an unknown dtype). Constructors given
 * bad arguments (ndim > HBG_MAX_DIMS, a NULL shape, an unknown dtype)
 * return a tensor whose dtype is HBG_DTYPE_COUNT, which byte_range and
 * in_bounds reject. */
unsigned hbg_dtype_size(hbg_dtype dt);
const char *hbg_dtype_name(hbg_dtype dt);

/* A contiguous row-major tensor description with no buffer yet (addr 0):
 * the shape of an OUTPUT or an alloc_tensors request. */
hbg_tensor hbg_tensor_desc(hbg_dtype dt, unsigned ndim, const uint32_t *shape);

/* A contiguous row-major tensor over an existing buffer. */
hbg_tensor hbg_tensor_at(uint64_t addr, hbg_dtype dt, unsigned ndim, const uint32_t *shape);

/* Defined here as well as exported by the library, so that a caller's
 * compiler builds a view in place: a pass builds thousands, and returned
 * from an out-of-line call the 96-byte struct went through a stack copy,
 * written field by field and read back 16 bytes at a time, which the store
 * buffer cannot forward (a warm `synth` task builds four views: 65 ns of
 * host_orch through the call, 44 inline). C99 inline: the library's
 * object holds the one external definition; under gnu89 inline semantics,
 * where `inline` alone would define it again in every file, each file gets
 * a static copy instead. */
#if defined(__cplusplus) || !defined(__GNUC_GNU_INLINE__)
#define HBG__INLINE inline
#else
#define HBG__INLINE static inline
#endif

/* A view of `t`'s buffer: `offset` elements from the buffer start, the given
 * shape, and `strides` (NULL: row-major contiguous for `shape`). */
HBG__INLINE hbg_tensor hbg_tensor_view(const hbg_tensor *t, uint64_t offset, unsigned ndim,
                                       const uint32_t *shape, const int64_t *strides)
{
    unsigned i;
    int64_t st = 1;
    hbg_tensor v;
    memset(&v, 0, sizeof v);
    if (!t) {
        v.dtype = HBG_DTYPE_COUNT;
        return v;
    }
    v.addr = t->addr;
    v.nbytes = t->nbytes;
    v.offset = offset;
    v.dtype = t->dtype;
    v.creator = t->creator;
    if (ndim > HBG_MAX_DIMS || (ndim && !shape)) {
        v.dtype = HBG_DTYPE_COUNT;
        return v;
    }
    v.ndim = (uint8_t)ndim;
    for (i = 0; i < ndim; i++)
        v.shape[i] = shape[i];
    /* Row-major unless strides are given; a stride past int64 makes the
     * view invalid. Below 2^31 a stride times a 32-bit extent cannot
     * overflow, so only a stride that large pays a division. */
    for (i = ndim; i-- > 0;) {
        v.strides[i] = strides ? strides[i] : st;
        if (strides || !i)
            continue;
        if ((st >> 31) && shape[i] && st > INT64_MAX / (int64_t)shape[i]) {
            v.dtype = HBG_DTYPE_COUNT;
            break;
        }
        st *= (int64_t)shape[i];
    }
    return v;
}

#undef HBG__INLINE

/* Number of elements of the view. */
uint64_t hbg_tensor_numel(const hbg_tensor *t);

/* Byte range [*lo, *hi) of the buffer that the view can touch, relative to
 * the buffer start. Returns false for an empty view, an invalid dtype, a
 * negative stride, or a range that overflows 64 bits. */
bool hbg_tensor_byte_range(const hbg_tensor *t, uint64_t *lo, uint64_t *hi);

/* True when the view lies inside its buffer (an empty view: when its start
 * does). */
bool hbg_tensor_in_bounds(const hbg_tensor *t);

#ifdef __cplusplus
}
#endif
#endif
