/* Graph internals shared by record.c, graph.c and the bind pipeline. */
#ifndef HBG_GRAPH_INTERNAL_H
#define HBG_GRAPH_INTERNAL_H

#include "orch/orch_internal.h"
#include "util/hash.h"

/* Buffers allocated inside a body being recorded live at REC_BASE + offset
 * in the replay's GM block: far above any user-space pointer, so they can
 * never be mistaken for a real device address. */
#define HBG_REC_BASE 0xf000000000000000ull

/* Indexes a boundary by buffer address; fills alias[k] with the first slot
 * on the same buffer (k itself when none). Linear in the boundary width. */
void hbg_boundary_index(hbg_recorder *r, const hbg_boundary *b, uint16_t *alias);

/* The Definition image of a cache entry, for graph_upload. */
static inline const hbg_def_header *hbg_def_image(const hbg_orch *o, uint32_t deftab_index)
{
    return o->defs[o->deftab_entry[deftab_index]].img;
}


#endif
