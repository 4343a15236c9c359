/* A cost model of the warm control plane, fitted over the passes of any
 * set of logs:
 *
 *   control plane = fixed + per task x tasks + per recorded node x nodes
 *                   + per replay x replays + per boundary slot x slots
 *
 * The cost of a pass is its control-plane sum as `hbg phases` defines it
 * (st_values); the counts are the pass's own: tasks= of its host_orch
 * line, the record_node and graph_submit counts of its host-orch lines,
 * and slots= of its graph_upload line (written by hbg only; the original
 * runtime's logs leave that term unidentifiable). Least squares by a
 * Gram-Schmidt QR of at most five columns, each less its smallest count,
 * against the costs less the smallest cost (large common offsets would
 * leave the spread to the doubles' last bits); a column with no variation, or
 * one the others already determine, is reported as not identifiable
 * instead of fitted. */
#ifndef HBG_TOOLS_FIT_H
#define HBG_TOOLS_FIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tools/diag.h"
#include "tools/passes.h"

enum { FIT_FIXED = 0, FIT_TASK, FIT_NODE, FIT_REPLAY, FIT_SLOT, FIT_NTERMS };

/* How many passes the super-linear verdict must hold without: the pass
 * the others predict worst, then the worst of the fit without it. */
#define FIT_TRIM 2

/* The second of those passes is left out only when it is an outlier:
 * off the fit made without it by more than FIT_APART robust standard
 * deviations of the other passes' residuals, and with more than
 * FIT_TRIM_DF degrees of freedom left to the fit without both (fewer
 * passes give neither that scale nor a test that could still find a
 * curve: 6 or 8 sizes of a cost 20 % over its line at the top, one pass
 * each, were called linear). */
#define FIT_APART   5.0
#define FIT_TRIM_DF 4

/* The verdict must also hold without the pair of passes whose leaving
 * out together takes the most from the fit's sum of squares, when both
 * are outliers (as above) from the fit without them, made with at least
 * FIT_PAIR_DF degrees of freedom: two passes descheduled side by side
 * tilt the line so that neither looks apart while the other is in (8
 * sizes, the two smallest 2 % of the top cost high, warned in 13 of 20
 * noisy runs); with relative, or more than one count fitted, more than
 * FIT_TRIM_DF, as for the second pass: a share is then the only scale,
 * and the two largest of eight sizes spaced by decades on a curve stand
 * apart by it; a second count bends the fit of the rest to a curve's
 * ends, which then stand apart from it. Not searched among more than
 * FIT_PAIR_MAX passes. */
#define FIT_PAIR_DF  4
#define FIT_PAIR_MAX 4096

/* 2^53: the largest count a double holds exactly together with every
 * count below it. A larger one would be rounded in the fit, and two
 * different ones taken for the same. */
#define FIT_COUNT_MAX (UINT64_C(1) << 53)

/* "fixed", "per task", ... and their JSON keys "fixed", "per_task", ... */
extern const char *const fit_term_name[FIT_NTERMS];
extern const char *const fit_term_key[FIT_NTERMS];
/* The count each term multiplies: "", "tasks", "nodes", "replays", "slots". */
extern const char *const fit_count_name[FIT_NTERMS];

typedef struct fit_point {
    uint32_t log;             /* index of its log */
    char label[64];           /* the pass (ps_label) */
    size_t line;              /* its first line */
    uint64_t count[FIT_NTERMS]; /* 1, tasks, nodes, replays, slots: as the log has them */
    bool has_slots;
    double y;                 /* measured control plane, ns */
    double fitted, resid;     /* after fit_solve */
} fit_point;

typedef struct fit_data {
    fit_point *pt;
    size_t n, cap;
    size_t excluded;          /* used passes left out: counts missing, or past 2^53 */
    size_t skip_warm;         /* set before adding: each rank's first warm passes to leave out */
    size_t skipped;           /* used passes left out so */
    dg_list warn;
} fit_data;

void fit_init(fit_data *d);
void fit_free(fit_data *d);
/* Adds L's used passes as points of log `log`, but those among each
 * rank's first d->skip_warm warm passes (by inv=, else in the log's
 * order; excluded passes counted: they hold their place). A pass without tasks= on
 * its host_orch line or without host-orch lines has no counts, and one
 * with a count above FIT_COUNT_MAX has none the fit can hold exactly:
 * each is left out with a warning naming its line. HBG_E_NOMEM only. */
hbg_status fit_add_log(fit_data *d, const ps_log *L, uint32_t log);
/* The same, keeping only the log's cheapest such pass (the figure `hbg
 * phases` calls decisive): one point per log, far less noise when the
 * machine is shared. */
hbg_status fit_add_log_min(fit_data *d, const ps_log *L, uint32_t log);

typedef struct fit_term {
    bool ident;
    char why[160];            /* when not identifiable */
    double coef, se, lo, hi;  /* ns; lo == hi == coef when the fit is exact */
} fit_term;

typedef struct fit_result {
    fit_term term[FIT_NTERMS];
    size_t n, k, df;          /* points, fitted terms, n - k */
    bool relative;            /* residuals weighed relative to each cost */
    double sigma;             /* residual standard deviation: ns, or a
                                 fraction of the cost with relative */
    double tq;                /* the t quantile of the intervals */
    double r2;                /* 1 - SSE/SST of the fit made (weighted with
                                 relative); NAN when every cost is the same */
    size_t nneg, most_neg;    /* points fitted below 0, and the lowest */
    size_t worst;             /* the point with the largest |residual| */
    bool reset_done;          /* the super-linearity test could be made */
    double reset_t;           /* t of the squared-fit term (inf: exact) */
    bool superlinear;         /* that term is positive and significant,
                                 with every pass and without each
                                 reset_pass in turn */
    size_t reset_checked;     /* how many passes were left out to test
                                 again (up to FIT_TRIM; 0: not significant
                                 with every pass) */
    size_t reset_pass[FIT_TRIM];      /* the point the others predict worst,
                                 then that of the fit without it; or
                                 the pair (reset_pair) */
    double reset_t_without[FIT_TRIM]; /* t without the first, without
                                 both (NAN: too few passes) */
    bool reset_pair;          /* the two were left out as a pair (the
                                 first the one the others predict worse),
                                 not one at a time */
    bool has_slope;
    double slope;             /* of log(measured) on log(fitted) */
} fit_result;

/* Fits d (filling each point's fitted value and residual). With relative,
 * minimises the sum of squared residuals divided by each cost (the right
 * weights when the noise grows with the cost, as it does across a sweep
 * of decades). names[i] is log i's path, for the messages (NULL: "LOG").
 * The super-linear test is made when some residual is half a nanosecond
 * or more, and its verdict holds only if the fit without the pass the
 * others predict worst finds it too, and the fit without the worst of
 * that fit as well where that pass is an outlier among enough passes
 * (FIT_APART, FIT_TRIM_DF), and without the pair of passes that stands
 * apart together (FIT_PAIR_DF). Returns 0; -1 with a one-line reason in err when there
 * are no more points than terms to fit (or, relative, a cost is 0); -2
 * out of memory. */
int fit_solve(fit_data *d, bool relative, const char *const *names, fit_result *R, char *err, size_t errlen);

/* The 0.975 quantile of Student's t with df degrees of freedom (df >= 1):
 * exact to 9 digits up to 30, a Cornish-Fisher expansion beyond. */
double fit_tq975(size_t df);

#endif
