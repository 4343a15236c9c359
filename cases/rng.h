/* The cases' random numbers: splitmix64, small, seedable and identical on
 * every machine, so a case's inputs (and so its golden) are the same
 * wherever it runs. */
#ifndef HBG_CASES_RNG_H
#define HBG_CASES_RNG_H

#include <stdint.h>

static inline uint64_t case_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

#endif
