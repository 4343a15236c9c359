/* A 64-bit content hash for Definition images.
 *
 * Definitions are hashed once per recording, so the hash sits on the bind
 * path: it takes 8 bytes per step with a multiply-rotate mix rather than a
 * byte-at-a-time loop. Collisions only cost a re-upload check (the device
 * table also compares sizes), not correctness of a single pass.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/hash.h"

static inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static inline uint64_t mix(uint64_t h, uint64_t v)
{
    v *= 0x9e3779b97f4a7c15ull;
    v = rotl(v, 31);
    v *= 0xc2b2ae3d27d4eb4full;
    h ^= v;
    return rotl(h, 27) * 5 + 0x52dce729;
}

uint64_t hbg_hash64(const void *data, size_t n)
{
    const unsigned char *p = data;
    uint64_t h = 0x27d4eb2f165667c5ull ^ (uint64_t)n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v;
        memcpy(&v, p + i, 8);
        h = mix(h, v);
    }
    if (i < n) {
        uint64_t v = 0;
        memcpy(&v, p + i, n - i);
        h = mix(h, v);
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}
