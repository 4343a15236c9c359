/* Growing an array by doubling: the one helper every growable array of
 * the project shares (the log tools' tables and buffers, the command's
 * strings, the sim's allocation list). */
#ifndef HBG_UTIL_VEC_H
#define HBG_UTIL_VEC_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

/* Makes room for need elements of sz bytes in *p (capacity *cap, doubled
 * from 16); false when out of memory or past SIZE_MAX bytes, *p and *cap
 * then unchanged. */
static inline bool vec_grow(void **p, size_t *cap, size_t need, size_t sz)
{
    if (need <= *cap)
        return true;
    size_t nc = *cap ? *cap : 16;
    while (nc < need) {
        if (nc > SIZE_MAX / 2)
            return false;
        nc *= 2;
    }
    if (nc > SIZE_MAX / sz)
        return false;
    void *np = realloc(*p, nc * sz);
    if (!np)
        return false;
    *p = np;
    *cap = nc;
    return true;
}

#endif
