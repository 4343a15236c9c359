/* Command-line counts of the benchmarks: a whole number in a range, or a
 * usage error (atoi took "3x" for 3 and "abc" for 0, and ran). */
#ifndef HBG_BENCH_ARGS_H
#define HBG_BENCH_ARGS_H

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

/* s as a whole number in [lo, hi]. */
static inline bool bench_count(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || s[0] < '0' || s[0] > '9' || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

#endif
