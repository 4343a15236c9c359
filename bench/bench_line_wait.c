/* bench_line_wait: what a rank of `hbg run` spends waiting at its start or
 * finish line (src/cli/startline.c) for a peer that is still working.
 *
 * One process waits SECONDS on a two-rank line that nobody else reaches
 * (so it waits its whole bound) and reports the CPU time and voluntary
 * context switches the wait cost it, from getrusage: the cost a waiting
 * rank puts on a machine whose other cores run its peer's pass. RUNS
 * waits; the least CPU time is printed, with the range.
 *
 *   bench_line_wait [SECONDS] [RUNS]     (defaults 1 and 3)
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "cli/startline.h"

static long cpu_us(const struct rusage *r)
{
    return (long)(r->ru_utime.tv_sec + r->ru_stime.tv_sec) * 1000000L + r->ru_utime.tv_usec + r->ru_stime.tv_usec;
}

int main(int argc, char **argv)
{
    char *end;
    long secs = argc > 1 ? strtol(argv[1], &end, 10) : 1;
    if (argc > 1 && (*end || secs < 1 || secs > 60)) {
        fprintf(stderr, "bench_line_wait: SECONDS must be 1 to 60, got '%s'\nusage: bench_line_wait [SECONDS] [RUNS]\n",
                argv[1]);
        return 2;
    }
    long runs = argc > 2 ? strtol(argv[2], &end, 10) : 3;
    if (argc > 2 && (*end || runs < 1 || runs > 100)) {
        fprintf(stderr, "bench_line_wait: RUNS must be 1 to 100, got '%s'\nusage: bench_line_wait [SECONDS] [RUNS]\n",
                argv[2]);
        return 2;
    }
    long lo = -1, hi = 0, sw_lo = -1, sw_hi = 0;
    for (long r = 0; r < runs; r++) {
        run_startline *s = startline_create(2);
        if (!s) {
            fprintf(stderr, "bench_line_wait: cannot map the line\n");
            return 1;
        }
        struct rusage a, b;
        getrusage(RUSAGE_SELF, &a);
        bool reached = startline_wait(s, 0, (uint64_t)secs * 1000000000ull);
        getrusage(RUSAGE_SELF, &b);
        startline_destroy(s);
        if (reached) {
            fprintf(stderr, "bench_line_wait: the line was reached, which nobody should do\n");
            return 1;
        }
        long us = cpu_us(&b) - cpu_us(&a), sw = b.ru_nvcsw - a.ru_nvcsw;
        lo = lo < 0 || us < lo ? us : lo, hi = us > hi ? us : hi;
        sw_lo = sw_lo < 0 || sw < sw_lo ? sw : sw_lo, sw_hi = sw > sw_hi ? sw : sw_hi;
    }
    printf("waiting %ld s at a line: cpu %ld us [%ld .. %ld], voluntary context switches %ld [%ld .. %ld] over %ld runs\n",
           secs, lo, lo, hi, sw_lo, sw_lo, sw_hi, runs);
    return 0;
}
