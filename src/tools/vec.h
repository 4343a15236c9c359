/* Growing an array by doubling: the one helper the log tools' many small
 * arrays (anchors, ranks, lanes, side tables) share. */
#ifndef HBG_TOOLS_VEC_H
#define HBG_TOOLS_VEC_H

#include <stdbool.h>
#include <stdlib.h>

/* Makes room for need elements of sz bytes in *p (capacity *cap, doubled
 * from 16); false when out of memory, *p then unchanged. */
static inline bool vec_grow(void **p, size_t *cap, size_t need, size_t sz)
{
    if (need <= *cap)
        return true;
    size_t nc = *cap ? *cap : 16;
    while (nc < need)
        nc *= 2;
    void *np = realloc(*p, nc * sz);
    if (!np)
        return false;
    *p = np;
    *cap = nc;
    return true;
}

#endif
