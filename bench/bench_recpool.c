/* bench_recpool: the cost of one hbg_rec call on a warm pool.
 *
 * Each run arms a pass and records RECORDS records from one thread, timing
 * the whole loop with CLOCK_MONOTONIC; ns/record is that time over RECORDS.
 * The first WARMUP runs fault the buffers in and are discarded. The figure
 * is the minimum over the warm runs, printed with the range (min..max) and
 * the median, because on a shared machine a single run can land far off.
 *
 *   bench_recpool [runs] [records]      (defaults 30 and 65536)
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench_args.h"

#include "hbg/trace.h"

#define WARMUP 3

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    long runs_l = 30, records_l = 65536;
    if (argc > 3 || (argc > 1 && !bench_count(argv[1], 1, 100000, &runs_l)) ||
        (argc > 2 && !bench_count(argv[2], 1, 1 << 24, &records_l))) {
        fprintf(stderr, "bench_recpool: expected [RUNS 1..100000] [RECORDS 1..16777216], got '%s' '%s'%s\n"
                        "usage: bench_recpool [RUNS] [RECORDS]\n",
                argc > 1 ? argv[1] : "", argc > 2 ? argv[2] : "", argc > 3 ? " and more" : "");
        return 2;
    }
    int runs = (int)runs_l, records = (int)records_l;
    hbg_recpool *p;
    hbg_status st = hbg_recpool_create(1, (unsigned)records, &p);
    if (st) {
        fprintf(stderr, "bench_recpool: cannot create a pool of %d records: %s\n", records, hbg_strerror(st));
        return 1;
    }
    double *ns = malloc(sizeof *ns * (size_t)runs);
    if (!ns)
        return 1;
    for (int r = 0; r < WARMUP + runs; r++) {
        hbg_recpool_arm(p, 1, (uint64_t)r + 1);
        uint64_t t0 = hbg_mono_ns();
        for (int i = 0; i < records; i++)
            hbg_rec(p, HBG_OP_SUBMIT_TASK, t0 + (uint64_t)i, t0 + (uint64_t)i + 1, (uint64_t)i);
        uint64_t t1 = hbg_mono_ns();
        if (hbg_recpool_count(p) != (uint64_t)records || hbg_recpool_dropped(p)) {
            fprintf(stderr, "bench_recpool: run %d kept %llu of %d records\n", r,
                    (unsigned long long)hbg_recpool_count(p), records);
            return 1;
        }
        if (r >= WARMUP)
            ns[r - WARMUP] = (double)(t1 - t0) / records;
    }
    qsort(ns, (size_t)runs, sizeof *ns, cmp);
    printf("hbg_rec: %.2f ns/record (min over %d warm runs of %d records; range %.2f..%.2f, median %.2f)\n",
           ns[0], runs, records, ns[0], ns[runs - 1], ns[runs / 2]);
    free(ns);
    hbg_recpool_destroy(p);
    return 0;
}
