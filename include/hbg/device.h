/* hbg — the device interface.
 *
 * A backend implements hbg_device_ops; the runtime talks to the device only
 * through it. The device receives the bound arena (one copy per pass) and
 * runs it from its own memory: nothing in the host mirror is read during a
 * run. `sim` is the first backend; a real accelerator implements the same ops.
 */
#ifndef HBG_DEVICE_H
#define HBG_DEVICE_H

#include <stddef.h>
#include <stdint.h>
#include "hbg/status.h"
#include "hbg/kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hbg_device hbg_device;

typedef struct hbg_run_stats {
    uint64_t device_wall_ns; /* device clock: never mapped to host wall time */
    uint64_t tasks_run;      /* tasks + replayed nodes whose kernels ran */
    uint64_t tasks_skipped;  /* predicated off */
    uint64_t replays;        /* graph-replay tasks expanded */
} hbg_run_stats;

typedef struct hbg_device_ops {
    const char *name;
    /* Reserve `bytes` of device memory; *addr gets its device address. A
     * refusal is HBG_E_DEVICE_ALLOC. */
    hbg_status (*alloc)(hbg_device *d, uint64_t bytes, uint64_t *addr);
    void (*free)(hbg_device *d, uint64_t addr);
    hbg_status (*h2d)(hbg_device *d, uint64_t dst, const void *src, uint64_t n);
    hbg_status (*d2h)(hbg_device *d, void *dst, uint64_t src, uint64_t n);
    /* Run the image bound at arena [addr, addr+bytes). */
    hbg_status (*run)(hbg_device *d, uint64_t arena, uint64_t bytes,
                      const hbg_kernel_table *kt, hbg_run_stats *stats);
    void (*destroy)(hbg_device *d);
} hbg_device_ops;

struct hbg_device {
    const hbg_device_ops *ops;
    uint32_t rank, nranks;
    void *services; /* passed to kernels as hbg_kernel_args.services */
};

/* hbg_sim_open refuses more (HBG_E_INVAL): each is a thread. */
#define HBG_SIM_MAX_CORES 1024u      /* of each type */
#define HBG_SIM_MAX_SCHEDULERS 64u
/* The steps of one run (a task or a replayed node each, a kernel's one a
 * block) that hbg_sim_open's max_steps takes when it is 0: minutes. */
#define HBG_SIM_MAX_STEPS ((uint64_t)1 << 24)

typedef struct hbg_sim_config {
    unsigned aic_cores;        /* simulated cube cores (threads), default 2, at most HBG_SIM_MAX_CORES */
    unsigned aiv_cores;        /* simulated vector cores (threads), default 2, at most HBG_SIM_MAX_CORES */
    unsigned schedulers;       /* scheduler threads, default 1, at most HBG_SIM_MAX_SCHEDULERS */
    uint64_t mem_limit;        /* refuse allocations past this (0: no limit) */
    uint32_t rank, nranks;
    uint64_t max_steps;        /* refuse a run of more steps (0: HBG_SIM_MAX_STEPS) */
} hbg_sim_config;

hbg_status hbg_sim_open(const hbg_sim_config *cfg, hbg_device **out);

/* Why the last failed device call on this thread failed: one line naming
 * the record at fault ("image: task 12: fanin 0 is 40, not below ntasks
 * 20"). Valid until the next device call on the thread. */
const char *hbg_device_last_error(void);

static inline hbg_status hbg_device_alloc(hbg_device *d, uint64_t n, uint64_t *a) { return d->ops->alloc(d, n, a); }
static inline void hbg_device_free(hbg_device *d, uint64_t a) { d->ops->free(d, a); }
static inline hbg_status hbg_device_h2d(hbg_device *d, uint64_t dst, const void *src, uint64_t n) { return d->ops->h2d(d, dst, src, n); }
static inline hbg_status hbg_device_d2h(hbg_device *d, void *dst, uint64_t src, uint64_t n) { return d->ops->d2h(d, dst, src, n); }
static inline void hbg_device_close(hbg_device *d) { if (d) d->ops->destroy(d); }

#ifdef __cplusplus
}
#endif
#endif
