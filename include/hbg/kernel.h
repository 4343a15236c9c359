/* hbg — kernels and the kernel table.
 *
 * A kernel is a host function that plays the part of a device kernel. The
 * device calls it once per block (per core for a MIX task) with the task's
 * tensors already resolved to device addresses. On the sim backend a device
 * address is directly addressable by the kernel (hbg_kernel_ptr); a real
 * accelerator backend would compile kernels instead and never call these.
 */
#ifndef HBG_KERNEL_H
#define HBG_KERNEL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "hbg/status.h"
#include "hbg/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HBG_MAX_KERNELS 1024

typedef struct hbg_kernel_args {
    uint32_t ntensors;
    const hbg_tensor *tensors; /* resolved: addr is a device address */
    uint32_t nscalars;
    const uint64_t *scalars;
    uint32_t block;   /* 0 .. nblocks-1 */
    uint32_t nblocks;
    uint8_t core;     /* hbg_core of this call: AIC or AIV (MIX calls both) */
    uint32_t rank, nranks;
    void *services;   /* backend services, e.g. the cross-rank window */
} hbg_kernel_args;

/* Returns 0 on success; a non-zero value fails the device run: -st for an
 * hbg_status st fails it with st (-HBG_E_PEER_TIMEOUT, or -1, which is
 * -HBG_E_INVAL), any other value (positive, or -HBG_STATUS_COUNT and
 * below) with HBG_E_KERNEL. */
typedef int (*hbg_kernel_fn)(const hbg_kernel_args *a);

typedef struct hbg_kernel_table hbg_kernel_table;

/* A table may be shared by runtimes on several threads, and a kernel
 * registered while they run (a lookup sees no kernel or the whole entry;
 * of two registrations of one id at once, one wins). */
hbg_status hbg_kernel_table_create(hbg_kernel_table **out);
void hbg_kernel_table_destroy(hbg_kernel_table *kt);
hbg_status hbg_kernel_register(hbg_kernel_table *kt, uint16_t id, const char *name, hbg_kernel_fn fn);

/* A program's kernels as a table, registered in order; the first failure
 * is returned (the entries before it stay registered). */
typedef struct hbg_kernel_def {
    uint16_t id;
    const char *name;
    hbg_kernel_fn fn;
} hbg_kernel_def;
hbg_status hbg_kernel_register_all(hbg_kernel_table *kt, const hbg_kernel_def *defs, size_t n);
hbg_kernel_fn hbg_kernel_lookup(const hbg_kernel_table *kt, uint16_t id);
const char *hbg_kernel_name(const hbg_kernel_table *kt, uint16_t id);

/* Scalar i of the call as the float / double hbg_scalar_f32 / hbg_scalar_f64
 * (orch.h) wrote; NaN when i is not below a->nscalars, so a wrong index
 * shows in the results instead of reading past the array. */
static inline float hbg_kernel_f32(const hbg_kernel_args *a, uint32_t i)
{
    if (i >= a->nscalars)
        return NAN;
    uint32_t bits = (uint32_t)a->scalars[i];
    float x;
    memcpy(&x, &bits, sizeof x);
    return x;
}

static inline double hbg_kernel_f64(const hbg_kernel_args *a, uint32_t i)
{
    if (i >= a->nscalars)
        return (double)NAN;
    double x;
    memcpy(&x, &a->scalars[i], sizeof x);
    return x;
}

/* Pointer to element 0 of a resolved tensor's view (sim backend). */
static inline void *hbg_kernel_ptr(const hbg_tensor *t)
{
    static const unsigned char sz[] = {4, 2, 2, 1, 1, 2, 4, 4, 8, 8};
    return (void *)(uintptr_t)(t->addr + t->offset * (t->dtype < sizeof sz ? sz[t->dtype] : 1));
}

#ifdef __cplusplus
}
#endif
#endif
