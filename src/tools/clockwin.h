/* Where each process's events lie in time, to tell a corrupt clock
 * reading from a start worth drawing.
 *
 * A start is a clock reading, so no fixed bound tells a corrupt one (a
 * CLOCK_MONOTONIC reading is the machine's uptime, anything from seconds
 * to months). But one process's events cluster in its run, and a start
 * far outside the cluster (digits run into the next number, a wrapped
 * subtraction near 2^64) drawn as it is stretches a trace's axis over
 * years, the real events a sliver at one end. The windows are built from
 * a log's host spans and bind segments. A start outside its process's
 * window is still kept when another start of its invocation lies within
 * a day of it: a second run of the pid days later, however sparse, is
 * not corrupt, and its events lie together where a corrupt reading
 * stands alone. The trace writers leave out the rest, and say so once. */
#ifndef HBG_TOOLS_CLOCKWIN_H
#define HBG_TOOLS_CLOCKWIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tools/diag.h"
#include "tools/hmap.h"
#include "tools/passes.h"

/* Fewer events of a process than this tell no cluster: none is judged. */
#define CW_MIN_EVENTS 10
/* At most this many starts of a process make its window: every k-th of
 * its spans, then of its passes' segments, past it. */
#define CW_SAMPLE 4096
/* The least margin on either side of the cluster: a day. */
#define CW_MIN_MARGIN_NS 86400000000000ull

typedef struct cw_win {
    uint64_t lo, hi;    /* the window */
    uint64_t p10, p90;  /* the middle 80 % it was widened from */
    bool set;
} cw_win;

/* The window [w->lo, w->hi] of the n starts ts[] (reordered): their middle
 * 80 % (the 10th to the 90th percentile), widened on each side by three
 * times its own width, and by a day at least, so that a long run's
 * events, and two runs of one process hours apart, stay inside; up to a
 * tenth of the events on either side may be corrupt without moving it.
 * false, and no window, when n is below CW_MIN_EVENTS. Linear time. */
bool cw_window(uint64_t *ts, size_t n, cw_win *w);

/* The event left out first in the first file one was (the earliest
 * line there), for the one warning, and how many were. */
typedef struct cw_note {
    size_t n;
    const char *path;
    size_t line;
    char what[96];
    uint64_t pid, inv, ts, p10, p90;
} cw_note;

/* An invocation with a start out of its process's window: its clusters
 * of two or more starts a day or less apart (see cw_far). */
#define CW_MAX_CLUSTERS 4
#define CW_SEEN 8
#define CW_GROUP_MAX 65536
typedef struct cw_group {
    uint64_t *ts;        /* while built: its starts */
    size_t n, cap;
    uint64_t c[CW_MAX_CLUSTERS][2];
    unsigned nc;
    bool unjudged;       /* too many starts or clusters to tell: none is far */
} cw_group;

typedef struct cw_set {
    hmap map;           /* pid -> win index + 1 */
    cw_win *win;
    size_t nwin;
    struct cw_seen {    /* lookups lately, by pid % CW_SEEN: its window + 1 (0: none) */
        uint64_t pid;
        uint32_t v;
        bool valid;
    } seen[CW_SEEN];
    size_t last;        /* the last lookup's window + 1 */
    hmap gmap;          /* (pid, inv) -> grp index + 1 */
    cw_group *grp;
    size_t ngrp, capgrp;
    cw_note note;
} cw_set;

/* The windows of L's processes, from their host spans' and (with
 * keep_spans) their bind segments' starts, CW_SAMPLE of them at most. false when out of memory
 * (S is then safe to cw_free). */
bool cw_build(cw_set *S, const ps_log *L);
void cw_free(cw_set *S);

/* Whether a start ts of invocation (pid, inv) is a corrupt reading: out
 * of pid's window (never, for a process with none), and alone in its
 * invocation, no other start of it within a day (a second run of the
 * pid, however sparse, keeps its events together). */
bool cw_far(cw_set *S, uint64_t pid, uint64_t inv, uint64_t ts);

/* cw_far, and when it is, the event counted and (when it is the first
 * to be warned of) described: kind "span", "bind segment", ...; its name
 * (name_n bytes); line of path. True: leave it out. */
bool cw_drop(cw_set *S, uint64_t pid, uint64_t inv, uint64_t ts, const char *path, size_t line, const char *kind,
             const char *name, size_t name_n);

/* cw_drop of span s placed at ts (a device span's own ts is on the
 * device's clock). */
bool cw_drop_span(cw_set *S, const ps_span *s, uint64_t ts, const char *path);

/* The warning for the events left out, if any. */
void cw_warn(const cw_set *S, dg_list *warn);

#endif
