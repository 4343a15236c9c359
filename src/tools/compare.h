/* An A/B comparison of bind logs: the statistics behind `hbg compare`.
 *
 * The i-th base log and the i-th measure log are repetition i. Each log is
 * grouped into passes and summarised exactly as `hbg phases` does it
 * (passes.h, phstats.h): its figure is the minimum over its used (warm)
 * passes of the per-pass control-plane sum. The verdict pools every used
 * pass of each arm:
 *
 *   contended  the control segment differs significantly between the arms
 *              (two-sided), or the arms differ but a repetition's delta
 *              disagrees in sign with the effect;
 *   slower /   the one-sided Mann-Whitney test (in the direction of the
 *   faster     Hodges-Lehmann shift) clears alpha, every repetition agrees,
 *              and the effect is larger than the control's noise floor;
 *   no difference otherwise.
 *
 * Before any statistic, the inputs must be comparable: every log readable,
 * stamped and complete (unless allowed), with stamps that differ in nothing but the
 * commit, one commit per arm, the same segment set and rank count, and at
 * least one warm pass. A refusal is one line naming the two logs and what
 * differs first. */
#ifndef HBG_TOOLS_COMPARE_H
#define HBG_TOOLS_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "hbg/trace.h"
#include "tools/abstats.h"
#include "tools/diag.h"
#include "tools/phstats.h"

/* A control segment shorter than this is a few clock reads: its relative
 * delta measures the clock, not the machine (a 50 ns segment moves 40 %
 * between identical runs), so it witnesses no noise. */
#define CP_CONTROL_MIN_NS 1000
/* the effect's interval: a Hodges-Lehmann confidence level */
#define CP_CI_LEVEL 0.95
/* A contended verdict names this many of the repetitions that disagree in
 * sign, then says how many more: each repetition's table has them all. */
#define CP_REPS_NAMED 10

typedef enum cp_verdict {
    CP_NO_DIFFERENCE = 0,
    CP_SLOWER,
    CP_FASTER,
    CP_CONTENDED,
} cp_verdict;

/* "no difference", "slower", "faster", "contended — rerun" */
const char *cp_verdict_name(cp_verdict v);
/* "no_difference", "slower", "faster", "contended": for scripts */
const char *cp_verdict_key(cp_verdict v);

/* --alpha when none is given, in hbg compare and hbg ab */
#define CP_ALPHA_DEFAULT 0.05

typedef struct cp_options {
    double alpha;           /* significance of both tests (default CP_ALPHA_DEFAULT) */
    double threshold_pct;   /* exit 1 past it (default 2) */
    const char *control;    /* the control segment (default runtime_init) */
    bool allow_unstamped;
    bool allow_incomplete; /* compare a log that says it is incomplete (passes.h), said on every output */
} cp_options;

/* One log of one arm. */
typedef struct cp_log {
    const char *path;       /* as named in messages ("<stdin>" for -) */
    ps_log L;
    bool loaded;
    phs_result R;
    uint64_t *sums;         /* each used pass's control-plane sum, pass order */
    size_t nsums;
    uint64_t *ctl;          /* each used pass's control-segment dur_ns */
    size_t nctl;
    char commit[HBG_STAMP_COMMIT_MAX + 1]; /* the stamp's first token; "" unstamped */
} cp_log;

/* One row of a repetition: the total or a segment. */
typedef struct cp_row {
    const char *name;       /* "total" or the segment's name */
    bool control_plane;     /* summed into the total (or the total itself) */
    bool control;           /* the control segment */
    uint64_t bmin, mmin, bmax, mmax;
    phs_med bmed, mmed;
} cp_row;

typedef struct cp_rep {
    cp_log base, measure;
    cp_row row[PS_MAXSEG + 1];  /* row[0] is the total */
    int nrow;
    int64_t dmin;               /* measure minus base, total minimum */
    double ctl_rel;             /* control: (measure min - base min) / base min; NAN of a base of 0 */
} cp_rep;

typedef struct cp_result {
    size_t nrep;
    cp_rep *rep;

    cp_verdict verdict;
    char line[2048];            /* the verdict as one line: room for its longest parts whole */
    char title[256];            /* the same, short: a plot's title */
    bool regression;            /* slower past the threshold: exit 1 */

    uint64_t *all_base, *all_measure;   /* every used pass's sum, by arm */
    size_t nbase, nmeasure;
    uint64_t base_min, measure_min;
    phs_stat base_tot, measure_tot;      /* over all passes of each arm */
    as_mwu mwu;                 /* the arms' per-pass sums */
    as_shift hl;                /* measure - base, 95 % interval */
    int direction;              /* +1 slower, -1 faster, 0 none */
    double p;                   /* the one-sided p in that direction */
    bool significant;
    size_t agree;               /* repetitions whose delta has that sign */
    size_t disagree;            /* ... the other sign (the rest: a delta of 0) */
    double sign_p;              /* exact one-sided sign test over repetitions */
    bool sign_can_reach;        /* 2^-nrep <= alpha */
    double rep_t, rep_t_p;      /* t-test of the repetitions' deltas against 0, two-sided */
    bool reps_back;             /* the repetitions back a verdict: sign_can_reach, or rep_t_p < alpha */
    bool beyond;                /* the effect is past the noise floor */
    double effect_pct, lo_pct, hi_pct;   /* of base_min */

    as_mwu ctl;                 /* the control segment, two-sided */
    bool ctl_significant;
    uint64_t ctl_min;           /* the control's smallest duration in any log */
    bool ctl_resolves;          /* ctl_min >= CP_CONTROL_MIN_NS: it can witness noise */
    double spread;              /* the arms' own spread: largest max/min - 1 of repetition minima; NAN of one */
    double delta_range;         /* max - min over repetitions of the total's dmin / base min; NAN of one */
    double noise_floor;         /* largest |ctl_rel| (or delta_range), a fraction */
    bool no_floor;              /* a short control and one repetition: no range, no floor (NAN) */

    char base_commit[HBG_STAMP_COMMIT_MAX + 1], measure_commit[HBG_STAMP_COMMIT_MAX + 1];
    const char *stamp_rest;     /* first stamped base (else measure) log's stamp past its commit */
    size_t stamp_rest_len;
    bool stamp_measure;         /* stamp_rest is a measure log's */
    size_t stamp_rep;           /* of repetition stamp_rep + 1 */
    bool unstamped;             /* some log had no stamp (allowed) */
    size_t nincomplete;         /* logs that say they are incomplete (allowed) */
    int ranks;

    dg_list flags;              /* under the verdict */
    cp_options opt;
} cp_result;

/* Reads base[i] and measure[i] (i < nrep; "-" is standard input, at most
 * once), checks that they are comparable and computes everything above.
 * HBG_OK; HBG_E_INVAL with a one-line reason in err when the inputs are
 * refused or unreadable (exit 2); HBG_E_NOMEM. R is to be freed with
 * cp_free whatever the result; each log's own warnings are in
 * R->rep[i].base.L.warn and .measure.L.warn once loaded. */
hbg_status cp_run(cp_result *R, const char *const *base, const char *const *measure, size_t nrep,
                  const cp_options *opt, char *err, size_t errlen);
void cp_free(cp_result *R);

/* Why log L says it is incomplete (ps_log.incomplete), in buf: its count
 * is of the passes the log holds, a truncated one among them, so the
 * warm passes compare excludes for defects are said beside it: those of
 * the run the count is of (ps_log.incomplete_run). */
const char *cp_incomplete(const ps_log *L, char *buf, size_t n);

/* The fewest repetitions whose exact sign test can reach alpha: the least
 * n with 2^-n <= alpha (5 at 0.05). */
size_t cp_reps_needed(double alpha);

/* A percentage as "%+.2f", or "n/a" when there is none (of a base of 0
 * ns); b holds at least 48 bytes. Returns b. */
const char *cp_pct(double v, char *b, size_t n);
/* A noise floor in % as "%.2f", or "n/a" (NAN: none). Returns b. */
const char *cp_floor(double v, char *b, size_t n);
/* The Hodges-Lehmann estimate in ns, exactly: "1234", "1234.5", "-0.5"
 * ("+" before one >= 0 when sign); b holds at least 24 bytes. Returns b. */
const char *cp_shift_ns(const as_shift *s, bool sign, char *b, size_t n);

#endif
