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

typedef struct phs_med {
    uint64_t whole;
    bool half;              /* + 0.5 */
} phs_med;

typedef struct phs_stat {
    uint64_t min, max;
    phs_med med;
    size_t n;
} phs_stat;

typedef struct phs_fig {
    size_t n;               /* passes that report it */
    size_t missing;         /* used passes that should and do not (no such
                               field, or not an integer); then varies too */
    bool varies;
    uint64_t value;         /* the first pass's value */
    uint64_t min, max;
    size_t distinct_hint;   /* 2 when it varies (a lower bound) */
} phs_fig;

typedef struct phs_result {
    int nrow;
    int row_seg[PS_MAXSEG]; /* segment ids, in table order */
    phs_stat row[PS_MAXSEG];
    uint32_t control;       /* control-plane segments present in the used passes */
    phs_stat total;
    phs_fig heap_used, tasks;
    phs_fig bytes[PS_MAXSEG];
    phs_fig op_count[PS_NOPS];
} phs_result;

/* Adds a warning to L->warn for each exact figure that differs between
 * passes. With by_rank (L->nrank entries), also the total over each
 * rank's own used passes (n 0: none). HBG_OK or HBG_E_NOMEM. */
hbg_status phs_compute(ps_log *L, phs_result *R, phs_stat *by_rank);

/* The row that phs_values fills with each used pass's control-plane sum. */
#define PHS_TOTAL (-1)

/* Each used pass's dur_ns of segment seg (a segment id of L), or with
 * PHS_TOTAL its control-plane sum, in pass order, into out (room for
 * L->nused values). Passes without the segment are skipped. Returns the
 * number written. */
size_t phs_values(const ps_log *L, int seg, uint64_t *out);

/* min / median / max / n of v[0..n), which it reorders. */
void phs_stat_of(uint64_t *v, size_t n, phs_stat *s);

/* "1534549296" or "1534549296.5" */
char *phs_med_str(phs_med m, char *buf, size_t n);

#endif
