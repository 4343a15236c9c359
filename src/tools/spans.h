/* Span analysis: a log's [STRACE] spans grouped into invocations, and the
 * views `hbg spans` prints of them (docs/spans.md).
 *
 * An invocation is one run of a callable: the spans of one (pid, inv). Its
 * callable is its hid; the callable with the most invocations is the
 * decode step, one seen once is prefill. A rank is a pid, numbered as
 * `hbg run` numbers its ranks: it forks rank 0 first, so the ranks in
 * ascending pid order. The call tree of an invocation is rebuilt from
 * depth alone, in the order the spans were written (a span is written when
 * its scope ends, so a node's children come before it): never from
 * timestamps, which device-clock spans do not share with the host.
 *
 * Spans of the per-task scheduler family (names led by node, network1..3)
 * and of external producers (ext.) carry no run identity in inv; they are
 * counted and left out, as the original tool leaves them out. */
#ifndef HBG_TOOLS_SPANS_H
#define HBG_TOOLS_SPANS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "hbg/status.h"
#include "tools/diag.h"
#include "tools/passes.h"
#include "tools/phstats.h"
#include "tools/records.h"

/* A span of the per-task scheduler family (node, network1..3) or of an
 * external producer (ext.): no run identity in its inv. */
bool sp_foreign(lx_slice name);

/* Two spans in (ts, dur, depth, tid, clock, name) order; 0: one record
 * twice (a log holding a run twice repeats every span of it exactly). */
int sp_cmp_record(const ps_span *x, const ps_span *y);

typedef struct sp_inv {
    uint64_t pid, inv;
    lx_slice hid;           /* of its root span, else of its first span */
    uint32_t rank;          /* index into sp_set.rank_pid */
    uint32_t callable;      /* index into sp_set.call */
    size_t first, n;        /* its spans: sp_set.idx[first .. first+n), in log order */
    size_t root;            /* L->span index of its depth-0 host span; SIZE_MAX: none */
} sp_inv;

typedef struct sp_callable {
    lx_slice hid;
    const char *label;      /* "decode", "prefill" or "" */
    size_t ninv;
    uint32_t *inv;          /* its invocations (indices into sp_set.inv), by rank then inv */
    size_t nrank;           /* ranks it ran on */
} sp_callable;

typedef struct sp_set {
    const ps_log *L;
    size_t *idx;            /* span indices, grouped by invocation */
    sp_inv *inv;            /* ordered by (pid, inv) */
    size_t ninv;
    uint64_t *rank_pid;     /* ascending: rank K is rank_pid[K] */
    size_t nrank;
    sp_callable *call;      /* most invocations first (ties: first seen first) */
    size_t ncall;
    size_t nspan;           /* spans in invocations */
    size_t nforeign;        /* node / network / ext. spans left out */
    uint32_t *callidx;      /* storage of every callable's inv list */
    dg_list warn;
} sp_set;

/* Groups L's spans (read with keep_spans). HBG_E_NOMEM only; anomalies
 * are warnings in S->warn. */
hbg_status sp_build(sp_set *S, const ps_log *L);
void sp_free(sp_set *S);

/* The rank of pid (SIZE_MAX when it wrote no spans). */
size_t sp_rank_of(const sp_set *S, uint64_t pid);

/* Statistics of a column of values (durations may be negative for an
 * untimed remainder). The median of an even count is the mean of the two
 * central values: med + 0.5 when med_half. The trimmed mean leaves out
 * floor(n/10) values at each end. */
typedef struct sp_stat {
    size_t n;
    int64_t min, max, med;
    bool med_half;
    __int128 sum, tsum;     /* exact: the mean is sum / n, the trimmed mean tsum / tn */
    size_t tn;
} sp_stat;

/* Sorts v and fills s. */
void sp_stat_of(int64_t *v, size_t n, sp_stat *s);
/* "123", "123.5", "-0.5" */
/* s's mean (with trimmed, its trimmed mean) as the outputs print it, one
 * decimal, from the exact sum, a tie to the even tenth. A double's
 * quotient printed with "%.1f" was wrong past 2^53 ns (one span of
 * 4611686018427387000 ns: 4611686018427386880.0, below the smallest
 * value), in the tenth from a sum of 2^48, and on ties it cannot hold
 * (1.15 printed as 1.1). */
char *sp_mean_str(const sp_stat *s, bool trimmed, char *buf, size_t n);
char *sp_med_str(const sp_stat *s, char *buf, size_t n);
/* The median as a double (for shares). */
double sp_med_val(const sp_stat *s);

/* One row of the tpot view: a span name of one callable, its duration per
 * invocation (summed when the name occurs more than once in one). */
typedef struct sp_stage {
    lx_slice name;          /* as written: percent-encoded */
    bool dev;               /* clk=dev */
    uint32_t depth;
    sp_stat st;
} sp_stage;

/* Sums of one invocation's spans that left the 64-bit range (past 2^63 - 1
 * ns, or an untimed remainder below -2^63) and are shown clamped at its
 * end: each span is under the reader's 2^62 ns rule, so only three or
 * more absurd ones (a corrupt log) get there. n such sums; line: the
 * earliest in the log of the spans that took one out. */
typedef struct sp_sat_note {
    size_t n;
    uint32_t line;
} sp_sat_note;

/* The tpot rows of callable c, sorted by name. *out is malloc'd. */
hbg_status sp_tpot(const sp_set *S, size_t c, sp_stage **out, size_t *n, sp_sat_note *sat);

/* One row of the tree view, in depth-first order; an untimed row (a node's
 * duration minus its children's) follows the node's children. */
typedef struct sp_node {
    lx_slice name;          /* empty for an untimed row */
    uint32_t depth;         /* the depth it is drawn at: an untimed row, its node's children's */
    bool dev, untimed;
    size_t parent;          /* row index of its parent (an untimed row: its node); SIZE_MAX: none */
    sp_stat st;
} sp_node;

/* What a tree found amiss in the spans it was built from. */
typedef struct sp_tree_notes {
    /* spans whose depth skips a level, or whose parent never came; they
     * are drawn under the nearest span that ended around them, or as
     * roots */
    size_t orphans;
    /* host spans that start before their host parent or end after it (a
     * clock that went backwards, a corrupted ts or dur): their share and
     * the parent's (untimed) row do not mean what they say; the earliest
     * line of them in outside_line */
    size_t outside;
    uint32_t outside_line;
    sp_sat_note sat;
} sp_tree_notes;

hbg_status sp_tree(const sp_set *S, size_t c, sp_node **out, size_t *n, sp_tree_notes *notes);

/* The rounds view: one row per invocation of callable c per rank. */
enum { SP_HOST, SP_DEVICE, SP_EFFECTIVE, SP_ORCH, SP_SCHED, SP_NCOL };
extern const char *const sp_col_names[SP_NCOL];

typedef struct sp_round {
    size_t inv;             /* index into S->inv */
    uint32_t round;         /* from 1, within its rank */
    bool cold;              /* the first round of its rank */
    unsigned has;           /* bit per column */
    int64_t val[SP_NCOL];
    bool saturated;         /* a column's sum is clamped at 2^63 - 1 ns (sp_sat_note) */
    bool has_wall;          /* its start as wall-clock time, from the anchor in force */
    bool wall_range;        /* none because that anchor's wall_ns puts it out of range */
    bool wall_far;          /* none because its start is years from that anchor */
    bool wall_corrupt;      /* none because that anchor is corrupt */
    uint64_t wall;
} sp_round;

/* rows (malloc'd, by rank then inv), *cols: bit per column some row has,
 * sum: statistics of each column over the warm rounds. */
hbg_status sp_rounds(const sp_set *S, size_t c, sp_round **rows, size_t *n, unsigned *cols, sp_stat sum[SP_NCOL]);

/* --assert-overlap: for adjacent invocations N, N+1 of one rank (by inv),
 * span a of N+1 must start before span b of N ends and end after it
 * starts; with hidden also end no later than it; and b of N+1 must not
 * start before b of N (launches stay ordered). */
typedef struct sp_pair {
    size_t prev, next;      /* indices into S->inv */
    uint64_t a0, a1;        /* span a of next: start, end */
    uint64_t b0, b1;        /* span b of prev */
    uint64_t nb0;           /* span b of next: start */
    bool overlap, hidden, ordered, ok;
} sp_pair;

typedef struct sp_overlap {
    sp_pair *pair;
    size_t npair;
    size_t nmissing;        /* invocations without a or b */
    size_t first_fail;      /* index into pair; SIZE_MAX: none */
} sp_overlap;

/* a and b are decoded names. HBG_E_NOMEM, HBG_E_INVAL when a or b is a
 * device-clock span in this log (its ts is not host time; err says which). */
hbg_status sp_check_overlap(const sp_set *S, const char *a, const char *b, bool hidden, sp_overlap *o, char *err,
                            size_t errlen);
void sp_overlap_free(sp_overlap *o);

/* Per-operation tails of records files: per phase, the duration of each
 * record; and the time of host_orch that no operation record covers,
 * summed over the passes a records line joins. */
typedef struct sp_opkind {
    char name[33];
    uint64_t min, p99, max;
    phs_med med;
    size_t count;
} sp_opkind;

typedef struct sp_ops {
    sp_opkind *kind;        /* malloc'd: a file names up to RC_MAX_PHASES, the files together more */
    size_t nkind, capkind;
    size_t lines, passes;   /* records lines; those joined to a pass with host_orch */
    uint64_t orch_ns, uncovered_ns; /* summed over those passes; clamped at 2^64 - 1 (warned) */
    double uncovered_share;         /* of the exact sums; 0 without a pass */
} sp_ops;

hbg_status sp_op_tails(const ps_log *L, const rc_file *f, size_t nf, sp_ops *o, dg_list *warn);
void sp_ops_free(sp_ops *o);

/* Wall-clock time of host time mono of pid, from the clock anchor in force
 * at line (the pid's latest anchor before it): SP_WALL_OK; SP_WALL_NONE
 * when there is no such anchor; SP_WALL_RANGE when the anchor's wall_ns
 * puts the time outside 0 .. 2^64 - 1 ns (a corrupt anchor); SP_WALL_FAR
 * when mono is more than PS_CLOCK_FAR_NS from the anchor's mono_ns, which
 * no process lives through: the time itself is corrupt, and its wall time,
 * even where it converts, would be a date decades off; SP_WALL_CORRUPT
 * when the anchor's own reading is the corrupt one (ps_anchor_judge). */
enum { SP_WALL_OK, SP_WALL_NONE, SP_WALL_RANGE, SP_WALL_FAR, SP_WALL_CORRUPT };
int sp_wall_at(const ps_log *L, uint64_t pid, size_t line, uint64_t mono, uint64_t *wall);
/* "2026-08-22T12:34:56.123456789Z" */
char *sp_utc(uint64_t wall_ns, char *buf, size_t n);

#endif
