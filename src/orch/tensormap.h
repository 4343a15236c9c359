/* The tensor map: who last wrote which part of which buffer.
 *
 * Keyed by buffer address; each buffer has a short list of live writer
 * regions. A reader depends on every live writer whose region overlaps its
 * own; a covering in-place write retires the writers it covers, which keeps
 * the lists short in the common read-modify-write chains.
 *
 * Everything is sized at creation and reset in O(1) per pass by bumping a
 * generation, so the map never allocates or clears memory on the hot path.
 */
#ifndef HBG_ORCH_TENSORMAP_H
#define HBG_ORCH_TENSORMAP_H

#include <stdbool.h>
#include <stdint.h>
#include "hbg/status.h"
#include "hbg/tensor.h"

typedef struct hbg_tmap_slot {
    uint64_t addr;
    uint32_t gen;
    uint32_t head; /* first live entry, or TMAP_NIL */
} hbg_tmap_slot;

typedef struct hbg_tmap_entry {
    uint64_t lo, hi;          /* byte range relative to the buffer start */
    const hbg_tensor *view;   /* the writer's view (stable for the pass) */
    uint32_t writer;          /* task or node id */
    uint32_t next;
} hbg_tmap_entry;

typedef struct hbg_tmap {
    hbg_tmap_slot *slots;
    uint32_t mask;        /* slot count - 1 (power of two) */
    uint32_t gen;
    uint32_t used_slots;  /* this generation */
    hbg_tmap_entry *entries;
    uint32_t nentries, cap_entries;
} hbg_tmap;

#define TMAP_NIL 0xffffffffu

hbg_status hbg_tmap_init(hbg_tmap *m, uint32_t buffers, uint32_t entries);
void hbg_tmap_free(hbg_tmap *m);
void hbg_tmap_reset(hbg_tmap *m);

/* True when two views of the same buffer can touch a common element. The
 * byte ranges decide unless both views share one nested stride layout, in
 * which case the per-dimension boxes decide (disjoint tiles of one matrix
 * interleave in bytes but not in elements). */
bool hbg_views_overlap(const hbg_tensor *a, uint64_t alo, uint64_t ahi,
                       const hbg_tensor *b, uint64_t blo, uint64_t bhi);

/* True when view `a` covers every element that `b` can touch. */
bool hbg_view_covers(const hbg_tensor *a, uint64_t alo, uint64_t ahi,
                     const hbg_tensor *b, uint64_t blo, uint64_t bhi);

/* Calls add(ctx, writer) for every live writer overlapping `t` [lo, hi).
 * Returns the first non-OK status add() returned. */
typedef hbg_status (*hbg_tmap_visit)(void *ctx, uint32_t writer);
hbg_status hbg_tmap_readers_deps(hbg_tmap *m, const hbg_tensor *t, uint64_t lo, uint64_t hi,
                                 hbg_tmap_visit add, void *ctx);

/* Registers `writer` as the latest writer of t's region. With `retire`,
 * live writers whose regions t fully covers are dropped first. */
hbg_status hbg_tmap_write(hbg_tmap *m, const hbg_tensor *t, uint64_t lo, uint64_t hi,
                          uint32_t writer, bool retire);

#endif
