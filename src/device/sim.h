/* sim — what the sim backend (sim.c) shows of its insides, for its tests.
 */
#ifndef HBG_DEVICE_SIM_H
#define HBG_DEVICE_SIM_H

#include <stddef.h>

#include "hbg/device.h"
#include "hbg/graph.h"

/* Spare jobs (a queued kernel call's bookkeeping) a sim keeps for reuse,
 * at most: a run that queues more at once frees the rest as they finish.
 * A Definition's nodes all ready at once reuse spares, as every run of
 * fewer tasks and nodes ready together does. */
#define HBG__SIM_SPARE_JOBS ((size_t)HBG_MAX_DEF_NODES)

/* hbg_device_alloc at device address `addr` (page-aligned), for a
 * fuzzer whose inputs are device memory at a fixed address: an image
 * names its Definitions, predicate words and heap blocks by absolute
 * address. HBG_E_DEVICE_ALLOC when anything is mapped there. */
hbg_status hbg__sim_alloc_at(hbg_device *d, uint64_t addr, uint64_t bytes);

/* The spare jobs sim device d holds now (d from hbg_sim_open). */
size_t hbg__sim_spare_jobs(hbg_device *d);

#endif
