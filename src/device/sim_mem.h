/* Device memory of the sim backend: one anonymous mapping per allocation.
 *
 * Separate mappings (rather than one big pool) make every allocation its own
 * bounds-checkable region, so a copy or a predicate word that strays outside
 * the buffer it was aimed at is caught instead of landing in a neighbour.
 * MAP_NORESERVE lets a case reserve a 2 GiB GM heap of which only touched
 * pages cost memory. All calls are thread-safe. */
#ifndef HBG_DEVICE_SIM_MEM_H
#define HBG_DEVICE_SIM_MEM_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hbg/status.h"

typedef struct sim_region {
    uint64_t addr, bytes;
} sim_region;

typedef struct sim_mem {
    pthread_mutex_t lock;
    sim_region *r; /* sorted by addr; mappings never overlap */
    size_t n, cap;
    uint64_t reserved; /* bytes requested by live allocations */
    uint64_t limit;    /* 0: none */
} sim_mem;

void sim_mem_init(sim_mem *m, uint64_t limit);
/* Unmaps everything still allocated. */
void sim_mem_fini(sim_mem *m);
hbg_status sim_mem_alloc(sim_mem *m, uint64_t bytes, uint64_t *addr);
/* The same, mapped at `at` (page-aligned) when it is not 0; refused when
 * anything is mapped there. */
hbg_status sim_mem_alloc_at(sim_mem *m, uint64_t at, uint64_t bytes, uint64_t *addr);
/* Unknown addresses are ignored: freeing is never a reason to fail. */
void sim_mem_free(sim_mem *m, uint64_t addr);
/* True when [addr, addr+n) lies inside one live allocation. */
bool sim_mem_contains(sim_mem *m, uint64_t addr, uint64_t n);

#endif
