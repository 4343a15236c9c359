/* The timeline writer: a grouped log (kept with its spans and anchors) and
 * its per-op records as Chrome trace-event JSON (docs/timeline.md).
 *
 * Lanes: one process per rank pid (its host threads as threads; a pid of
 * 2^32 or more, on a free number below 2^32, named with the pid), and one
 * separate process per rank for device-clock spans (pid + TL_DEVICE_PID_BASE,
 * or, where that is taken or past 2^32, a free number below 2^32), each placed at the start of its invocation's runner_run span, since the
 * device clock is not the host's. Host ts/dur are CLOCK_MONOTONIC
 * in microseconds, each ts read back as exactly its nanosecond (jw_us); each host event's
 * args.wall_ns is the epoch time from its process's clock anchor, as a
 * decimal string. */
#ifndef HBG_TOOLS_TIMELINE_H
#define HBG_TOOLS_TIMELINE_H

#include <stdio.h>
#include "tools/passes.h"
#include "tools/records.h"

#define TL_DEVICE_PID_BASE 1000000000ull

typedef struct tl_report {
    size_t events;             /* every entry of traceEvents: the sum of those below (flows twice) */
    size_t spans, device_spans, segments, records;
    size_t orch_copies;        /* host_orch drawn again on each other thread that did operations */
    size_t flows;              /* hand-off arrows (s/f pairs) between operations on two threads */
    size_t lane_names;         /* metadata events: process and thread names, sort order */
    size_t torn;               /* [STRACE] records that did not parse */
    size_t rec_lines;
    size_t rec_nobind;         /* records lines whose (pid, inv) has no chip.run.bind span */
    size_t rec_outside_bind;   /* records outside their bind span */
    size_t rec_outside_orch;   /* records inside the bind span but outside host_orch */
    size_t rec_dropped_lines;  /* records lines with dropped > 0 */
    uint64_t rec_dropped;      /* their dropped records, summed */
    size_t rec_bad_lines;      /* records lines that did not parse */
    size_t pass_nospan;        /* bind passes drawn without their chip.run.bind span */
    size_t seg_outside_bind;   /* bind segments not inside their chip.run.bind span */
    size_t pass_unplaced;      /* bind passes with no pid: not drawn */
    size_t pids_no_anchor;     /* processes without a clock anchor: no wall_ns */
    size_t unnested;           /* spans that start inside another of their lane and end after it */
    size_t far;                /* events left out: a start far outside their process's others (clockwin.h) */
} tl_report;

/* A process's place in a log that may hold several runs (logs put
 * together): its run (ps_run_of: the run of its first record) and its
 * rank within that run, as hbg run numbers its ranks, by ascending pid
 * among the run's processes. Two runs' ranks 0 are two lanes, each named
 * with its run; pids of another run never shift a rank. */
typedef struct tl_rank {
    uint64_t pid;
    uint32_t run;
    size_t rank;
    size_t order; /* its place among all, by (run, pid): lanes are sorted by it */
} tl_rank;

/* Sets rank and order of r[0..n) from their pid and run (each pid once).
 * Returns how many runs they are of; 0 when out of memory. */
size_t tl_number_ranks(tl_rank *r, size_t n);
/* ", run R (stamp at line N)" for a process of run `run` when the log's
 * processes are of more than one run (nrun > 1), else "". Into buf, which
 * it returns. */
const char *tl_run_label(const ps_log *L, size_t nrun, uint32_t run, char *buf, size_t cap);

/* Writes the trace to out. Anomalies are counted in rep and described in
 * warn. Returns HBG_E_NOMEM, HBG_E_IO (a write failed) or HBG_OK. */
hbg_status tl_write(ps_log *L, const rc_file *recs, size_t nrecs, FILE *out, tl_report *rep, dg_list *warn);

/* One metadata event ("process_name", "thread_name") naming lane (pid,
 * tid); *first: no event written yet (no comma before it). */
struct jw;
void tl_meta(struct jw *w, bool *first, const char *what, uint64_t pid, uint64_t tid, const char *name);

/* otherData's "incomplete" member, {"line": L, "why": "..."}, after a
 * comma, for a log that says it is incomplete (passes.h); nothing for
 * one that does not, whose trace stays as it was. */
void tl_put_incomplete(struct jw *w, const ps_log *L);

/* The per-invocation view (--per-invocation): one synthetic process lane
 * per (pid, inv), its host spans on track 0 and its device-clock spans on
 * track 1, placed at the start of its runner_run. Spans only. */
hbg_status tl_write_per_invocation(ps_log *L, FILE *out, tl_report *rep, dg_list *warn);

#endif
