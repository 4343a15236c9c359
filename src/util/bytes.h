/* Whether two byte runs are equal, for the short fixed-size compares on
 * the bind path (a view against the tensor map's journal, a boundary
 * slot's layout against its signature).
 *
 * n is a multiple of 16 and a constant at every call, so on x86-64 the
 * loop unrolls into 16-byte loads, xors and one test: a dozen instructions
 * for 96 bytes, against a call to memcmp that decides byte order it does
 * not need. Equality of raw bytes is the right test only for structs
 * without padding; the callers' are static-asserted so.
 */
#ifndef HBG_UTIL_BYTES_H
#define HBG_UTIL_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

static inline bool hbg__same_bytes16(const void *a, const void *b, size_t n)
{
#if defined(__SSE2__)
    const unsigned char *x = a, *y = b;
    __m128i d = _mm_setzero_si128();
    /* Unrolled whole: left a loop (gcc keeps it one for 64 bytes), its
     * counter and branch were most of a boundary slot's check. (gcc
     * before 8 does not know the pragma, and -Wall would say so.) */
#if defined(__clang__) || __GNUC__ >= 8
#pragma GCC unroll 8
#endif
    for (size_t i = 0; i < n; i += 16)
        d = _mm_or_si128(d, _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)(x + i)),
                                          _mm_loadu_si128((const __m128i *)(const void *)(y + i))));
    return _mm_movemask_epi8(_mm_cmpeq_epi8(d, _mm_setzero_si128())) == 0xffff;
#else
    return memcmp(a, b, n) == 0;
#endif
}

#endif
