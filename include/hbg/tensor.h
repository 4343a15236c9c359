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

/* A view of `t`'s buffer: `offset` elements from the buffer start, the given
 * shape, and `strides` (NULL: row-major contiguous for `shape`). */
hbg_tensor hbg_tensor_view(const hbg_tensor *t, uint64_t offset, unsigned ndim,
                           const uint32_t *shape, const int64_t *strides);

/* The same view written to *out (all 96 bytes), for code that builds
 * views on the bind path: several times cheaper a view than the call
 * above when the view goes straight to a submit. The result comes out in
 * 16-byte stores, so a submit that reads it back 16 bytes at a time is
 * not kept waiting for it (a tensor returned by value is built field by
 * field in a temporary, and copied). `out` must not overlap `t`, `shape`
 * or `strides`. */
void hbg_tensor_view_into(hbg_tensor *out, const hbg_tensor *t, uint64_t offset, unsigned ndim,
                          const uint32_t *shape, const int64_t *strides);

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
