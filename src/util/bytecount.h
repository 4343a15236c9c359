/* A byte count as hbg run's --device-memory takes it, for the option's
 * reader and for the stamp comparison that must read an older revision's
 * spelling of it the same way. */
#ifndef HBG_UTIL_BYTECOUNT_H
#define HBG_UTIL_BYTECOUNT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Decimal digits, then K, M or G (KiB, MiB, GiB; lower case too) or
 * nothing: the count in *out. False for anything else, or past
 * 2^64 - 1. s[0..n) need not be NUL-terminated. */
static inline bool hbg__byte_count(const char *s, size_t n, uint64_t *out)
{
    unsigned shift = 0;
    if (n > 1) {
        char u = (char)(s[n - 1] & ~0x20);
        shift = u == 'K' ? 10 : u == 'M' ? 20 : u == 'G' ? 30 : 0;
        n -= shift != 0;
    }
    if (!n)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9' || v > (UINT64_MAX - (unsigned)(s[i] - '0')) / 10)
            return false;
        v = v * 10 + (unsigned)(s[i] - '0');
    }
    if (v > UINT64_MAX >> shift)
        return false;
    *out = v << shift;
    return true;
}

#endif
