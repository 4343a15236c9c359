/* Phase statistics over the used passes of a grouped log.
 *
 * Per segment: min, median, max and n of dur_ns. Total: the control-plane
 * segments summed within each pass, then min / median / max across passes
 * (never a sum of per-segment minima). Medians of an even count are the mean
 * of the two central values, kept exact as an integer plus a half. The
 * "exact" figures (heap_used, tasks, every bytes=, host-orch counts) are
 * reported as one value when every pass agrees. */
#ifndef HBG_TOOLS_PHSTATS_H
#define HBG_TOOLS_PHSTATS_H

#include <stdbool.h>
#include <stdint.h>
#include "tools/passes.h"

typedef struct st_med {
    uint64_t whole;
    bool half;              /* + 0.5 */
} st_med;

typedef struct st_stat {
    uint64_t min, max;
    st_med med;
    size_t n;
} st_stat;

typedef struct st_fig {
    size_t n;               /* passes that report it */
    bool varies;
    uint64_t value;         /* the first pass's value */
    uint64_t min, max;
    size_t distinct_hint;   /* 2 when it varies (a lower bound) */
} st_fig;

typedef struct st_result {
    int nrow;
    int row_seg[PS_MAXSEG]; /* segment ids, in table order */
    st_stat row[PS_MAXSEG];
    uint32_t control;       /* control-plane segments present in the used passes */
    st_stat total;
    st_fig heap_used, tasks;
    st_fig bytes[PS_MAXSEG];
    st_fig op_count[PS_NOPS];
    bool overflow;          /* a per-pass sum passed 64 bits */
    size_t overflow_line;
} st_result;

/* Adds a warning to L->warn for each exact figure that differs between
 * passes. With by_rank (L->nrank entries), also the total over each
 * rank's own used passes (n 0: none). HBG_E_NOMEM, or HBG_E_PARSE when a
 * per-pass sum overflows. */
hbg_status st_compute(ps_log *L, st_result *R, st_stat *by_rank);

/* The row that st_values fills with each used pass's control-plane sum. */
#define ST_TOTAL (-1)

/* Each used pass's dur_ns of segment seg (a segment id of L), or with
 * ST_TOTAL its control-plane sum, in pass order, into out (room for
 * L->nused values). Passes without the segment are skipped. Returns the
 * number written, or (size_t)-1 when a sum passes 64 bits (st_compute
 * refuses such a log first, so a caller that ran it never sees this). */
size_t st_values(const ps_log *L, int seg, uint64_t *out);

/* min / median / max / n of v[0..n), which it reorders. */
void st_stat_of(uint64_t *v, size_t n, st_stat *s);

/* "1534549296" or "1534549296.5" */
char *st_med_str(st_med m, char *buf, size_t n);

#endif
