/* The two 64-bit content hashes.
 *
 * hbg__image_hash hashes each Definition image once per recording, so it
 * sits on the bind path (a qwen Definition is 128 KB, a dsv4 one 376 KB).
 * It is libxxhash's XXH3-64: where the library has its x86 dispatcher, the
 * widest vector unit the CPU offers (AVX2, AVX-512) runs it, ~3.5x the speed
 * of the four-lane multiply hash below; the library's portable entry point
 * runs SSE2 only and is no faster than that hash, hence the dispatcher. The
 * value is the same on every path and machine. A collision costs nothing
 * worse than the device table treating two Definitions of equal size as
 * one, which the size check and the 64-bit width make vanishingly unlikely.
 *
 * hbg__hash64 hashes short texts (a callable's name, the hid of its spans).
 * Its values are in logs that older and newer builds compare, so it stays
 * as it is: four independent lanes of 8 bytes, folded at the end.
 */
#include <string.h>

#include <xxhash.h>
#ifdef HBG_HAVE_XXH_DISPATCH
#include <xxh_x86dispatch.h> /* maps XXH3_64bits to XXH3_64bits_dispatch */
#endif

#include "util/hash.h"

uint64_t hbg__image_hash(const void *data, size_t n) { return XXH3_64bits(data, n); }

/* The dispatcher asks the CPU what it supports on its first call; under a
 * hypervisor each such question is a trap, ~0.3 ms in all, which would
 * land in a rank's first build_definition. One hash long enough to take
 * the vector loop that images take settles it. */
void hbg__image_hash_prepare(void)
{
    static const unsigned char probe[2048];
    (void)hbg__image_hash(probe, sizeof probe);
}

static inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static inline uint64_t round64(uint64_t acc, uint64_t v)
{
    acc += v * 0xc2b2ae3d27d4eb4full;
    acc = rotl(acc, 31);
    return acc * 0x9e3779b97f4a7c15ull;
}

static inline uint64_t load64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

uint64_t hbg__hash64(const void *data, size_t n)
{
    const unsigned char *p = data;
    uint64_t a = 0x60ea27eeadc0b5d6ull, b = 0xc2b2ae3d27d4eb4full, c = 0x165667b19e3779f9ull,
             d = 0x27d4eb2f165667c5ull ^ (uint64_t)n;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        a = round64(a, load64(p + i));
        b = round64(b, load64(p + i + 8));
        c = round64(c, load64(p + i + 16));
        d = round64(d, load64(p + i + 24));
    }
    uint64_t h = rotl(a, 1) + rotl(b, 7) + rotl(c, 12) + rotl(d, 18);
    for (; i + 8 <= n; i += 8)
        h = round64(h, load64(p + i));
    if (i < n) {
        uint64_t v = 0;
        memcpy(&v, p + i, n - i);
        h = round64(h, v);
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}
