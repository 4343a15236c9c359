/* What the two halves of the pass reader share and no caller sees: the
 * tables the lines are grouped by (passes.c) and the ranks are counted
 * by (passes_defects.c). */
#ifndef HBG_TOOLS_PASSES_INTERNAL_H
#define HBG_TOOLS_PASSES_INTERNAL_H

#include "tools/hmap.h"
#include "tools/passes.h"

/* A segment of the side table. */
typedef struct ps_xseg {
    uint64_t dur, bytes;
    uint32_t line;
} ps_xseg;

typedef struct ps_index ps_index;

/* How many threads' held lines are kept at once (see ps_index.pend). */
enum { PS_MAXPEND = 16 };

/* A keyed pass met again in a later run (ps_index.rerun). */
struct ps_rerun {
    uint32_t pass, run;
};

struct ps_index {
    hmap xmap;              /* (pass, segment id) -> xseg[], for ids from PS_INLINE */
    ps_xseg *xseg;
    size_t nxseg, capxseg;
    hmap map;               /* (pid, inv) -> pass */
    uint32_t last_pass;     /* the pass of the last keyed lookup, + 1 */
    uint64_t last_pid, last_inv;
    bool any_keyed;         /* a keyed pass was made */
    bool any_keyless;       /* a keyless burst was opened (only then can a keyed line adopt one) */
    /* Malformed bind lines with no usable key that came before their
     * pass's first line, one entry per thread and pid: the next keyed
     * pass of that thread (and pid) is charged. Several threads can each
     * begin with one (each rank's first burst, on the original runtime's
     * logs), so a few are held at once; past PS_MAXPEND the oldest is
     * given up (its own warning still stands). */
    struct ps_pend {
        bool has_pid, has_inv;
        int8_t first_seg;
        uint32_t segs, line;
        uint64_t th, pid, inv, start; /* start: the line's start_ns (0: not read) */
    } pend[PS_MAXPEND];
    unsigned npend;
    /* A keyed pass met again in a later run (a run put together with
     * itself, cat a.log a.log; a later run that reuses a pid): each such
     * (pass, run) once, in log order, so that a run is counted as holding
     * the passes written in it, not only those first seen there. */
    struct ps_rerun *rerun;
    size_t nrerun, caprerun;
    hmap omap;              /* (thread, 1 | 2 without thread) -> the thread's open burst */
    uint32_t last_open;     /* the last omap answer (0: none cached) ... */
    bool last_open_ht;      /* ... for this thread */
    uint64_t last_open_th;
    hmap rmap;              /* (pid, 1 | thread, 2) -> rank */
    hmap amap;              /* (pid, 0) -> the line of its clock anchor */
    lx_thread_cache thc;
    /* the same text is kept once: span names, hids and a segment's
     * attributes repeat pass after pass */
    hmap intern;            /* (hash, length) -> itext[] */
    const char **itext;
    size_t nitext, capitext;
    /* texts kept lately, by a hash of their length and three bytes: one
     * compare finds a repeated text without hashing it whole */
    const char *recent[64];
    uint32_t recent_n[64];
};

/* After the scan: ranks, cold passes, the reference segment set, each
 * pass's defects and their warnings, and the counts. */
void ps_analyse(ps_log *L);

#endif
