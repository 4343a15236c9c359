/* Graph internals shared by record.c, graph.c and the bind pipeline. */
#ifndef HBG_GRAPH_INTERNAL_H
#define HBG_GRAPH_INTERNAL_H

#include <string.h>

#include "orch/orch_internal.h"
#include "util/hash.h"

/* Buffers allocated inside a body being recorded live at REC_BASE + offset
 * in the replay's GM block: far above any user-space pointer, so they can
 * never be mistaken for a real device address. */
#define HBG_REC_BASE 0xf000000000000000ull

/* Indexes a boundary by buffer address; fills alias[k] with the first slot
 * on the same buffer (k itself when none). Linear in the boundary width. */
void hbg_boundary_index(hbg_recorder *r, const hbg_boundary *b, uint16_t *alias);

/* Empties the boundary address table for a new boundary. Only when the
 * stamp wraps are the entries cleared, so an old entry never reads as
 * current. */
static inline void hbg_btab_begin(hbg_recorder *r)
{
    if (++r->bstamp == 0) {
        memset(r->btab, 0, sizeof r->btab);
        r->bstamp = 1;
    }
}

/* The entry holding `addr`, or the empty one where it belongs (its stamp is
 * then not current). A boundary fills under half the table, so the probe
 * always ends. */
static inline hbg_btab_ent *hbg_btab_probe(hbg_recorder *r, uint64_t addr)
{
    uint64_t h = addr ^ addr >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    uint32_t i = (uint32_t)(h ^ h >> 32) & (HBG_BTAB_SIZE - 1);
    while (r->btab[i].stamp == r->bstamp && r->btab[i].addr != addr)
        i = (i + 1) & (HBG_BTAB_SIZE - 1);
    return &r->btab[i];
}

/* The Definition image of a cache entry, for graph_upload. */
static inline const hbg_def_header *hbg_def_image(const hbg_orch *o, uint32_t deftab_index)
{
    return o->defs[o->deftab_entry[deftab_index]].img;
}


#endif
