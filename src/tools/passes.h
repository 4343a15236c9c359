/* Bind passes: grouping a log's bind-phase lines into passes.
 *
 * One pass is one bind of one rank process. Lines that carry pid=/inv=
 * (our runtime) are grouped by (pid, inv) exactly. Lines without them (the
 * original runtime) are grouped per writing thread (the [T0x...] prefix) into
 * bursts: a burst ends at the chip.run.bind span that follows it (whose
 * pid/inv then name the pass), or, when there is no span, where its host-orch
 * lines end or its first segment comes round again. A burst is never closed
 * by arena_h2d alone, so a pass missing arena_h2d is reported, not merged
 * into its neighbour.
 *
 * `hbg phases`, `hbg timeline` and the comparison tools share this module;
 * the statistics are in phstats.h. */
#ifndef HBG_TOOLS_PASSES_H
#define HBG_TOOLS_PASSES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "hbg/status.h"
#include "tools/diag.h"
#include "tools/hugemem.h"
#include "tools/loglex.h"
#include "tools/text.h"

/* Segment ids: the pipeline's order (the table order), then the retired
 * kinds, then names first seen in the log. */
enum {
    PS_ARGS = 0, PS_ARENA_BUILD, PS_STATIC_ARENA, PS_GM_HEAP, PS_SHARED_MEM, PS_RUNTIME_INIT,
    PS_HOST_ORCH, PS_GRAPH_UPLOAD, PS_ARENA_H2D, PS_HOST_VIEW_CLOSE,
    PS_RELOCATE, PS_SM_H2D,
    PS_NKNOWN
};
#define PS_MAXSEG 16       /* the 12 known kinds and 4 new names */
#define PS_CLOSE PS_ARENA_H2D
#define PS_CONTROL_MASK ((1u << PS_HOST_ORCH) | (1u << PS_GRAPH_UPLOAD) | (1u << PS_ARENA_H2D) | \
                         (1u << PS_RELOCATE) | (1u << PS_SM_H2D))
#define PS_RETIRED_MASK ((1u << PS_RELOCATE) | (1u << PS_SM_H2D))

/* Orchestrator operation kinds of the host-orch lines, and their names
 * (the runtime's own spelling: hbg_phase_name). */
enum { PS_OP_SUBMIT_TASK = 0, PS_OP_ALLOC_TENSORS, PS_OP_RECORD_NODE, PS_OP_GRAPH_SUBMIT,
       PS_OP_BUILD_DEFINITION, PS_NOPS };
const char *ps_op_name(int op);

/* Why a pass is not used; a pass may have several. */
enum {
    PS_D_MISSING_CLOSE = 1u << 0,
    PS_D_TRUNCATED = 1u << 1,
    PS_D_DUPLICATE = 1u << 2,
    PS_D_DROPPED = 1u << 3,
    PS_D_SETDIFF = 1u << 4,
    PS_D_IGNORED = 1u << 5,   /* one of its lines was malformed and ignored */
    PS_D_NO_ORCH = 1u << 6,   /* no host_orch line: a total would lack most of the control plane */
    PS_D_LONG = 1u << 7,      /* its control-plane sum reaches LX_DUR_LIMIT_NS: no measurement */
    PS_D_NO_PID = 1u << 8,    /* no pid, on a thread the passes of several pids share */
    PS_D_ORCH_ONLY = 1u << 9, /* host-orch lines of its key and no bind line */
};
#define PS_NDEFECTS 10

/* One segment of a pass, as ps_get returns it. */
typedef struct ps_seg {
    uint64_t dur, bytes;
    uint32_t line;
    bool has_bytes;         /* its line had bytes= */
} ps_seg;

typedef struct ps_text {
    const char *p;
    size_t n;               /* 0: none */
} ps_text;

/* What only the timeline draws of a segment (kept with keep_spans only):
 * apart from the pass so that a reader without it touches less memory. */
typedef struct ps_segx {
    uint64_t start;
    ps_text attr;
} ps_segx;

/* The segments stored in the pass itself: the pipeline's ten kinds. The
 * retired kinds and new names, rare, live in a side table. A pass of a
 * large log is written once, on fresh memory that costs more to fault in
 * than the rest of the work, so the record is kept small. */
#define PS_INLINE PS_RELOCATE

typedef struct ps_pass {
    uint64_t pid, inv;
    uint64_t thread;
    uint64_t heap_used, tasks;
    uint64_t slots;         /* graph_upload's slots= (hbg only): boundary slots the replays wrote */
    uint64_t drop_count;    /* dropped= of the host-orch line named by drop_op */
    uint64_t first_start;   /* start_ns of its first segment's line */
    size_t first_line;
    uint32_t dup_line, dup_first_line, drop_line;
    uint32_t present;       /* bit per segment id */
    uint32_t ignored_segs;  /* bit per segment id of its malformed (ignored) bind lines */
    uint32_t ignored_line;  /* its first malformed line (PS_D_IGNORED) */
    uint32_t has_bytes;     /* bit per segment id: its line had bytes= */
    int32_t rank;
    uint16_t defects;
    uint8_t ops_present;
    int8_t first_seg;
    int8_t dup_seg;         /* segment id, or -1 - op for a host-orch kind */
    int8_t drop_op;
    uint32_t run;           /* the [stamp] lines before it: logs put together hold runs one after another */
    uint32_t run_last;      /* the latest run a line of it is in (1 before the first stamp): see ps_index.rerun */
    bool has_pid;           /* pid known (from the lines, the span, or the thread's other passes) */
    bool has_inv;           /* inv known (from the lines or the span) */
    bool keyed;             /* from pid=/inv= on the bind lines */
    bool has_thread;
    bool has_orch, has_span;
    bool cold, used;
    bool has_heap_used, has_tasks, has_slots;
    bool bad_slots;         /* a graph_upload slots= that is no integer (fit leaves the pass out) */
    uint32_t op_line[PS_NOPS];
    uint64_t op_count[PS_NOPS];
    uint64_t dur[PS_INLINE], bytes[PS_INLINE];
    uint32_t line[PS_INLINE];
} ps_pass;

typedef struct ps_span {
    uint64_t pid, tid, inv, ts, dur;
    uint32_t depth, line;
    lx_slice name, hid, extra;
    bool dev;
} ps_span;

/* Farther apart than this, two readings of one process's clock are not
 * both sound: no process runs ten years. */
#define PS_CLOCK_FAR_NS (10ull * 366 * 86400 * 1000000000ull)

/* An anchor's mono_ns and its own line's [mono_ns=] are read a moment
 * apart; farther apart than this, one of the two is corrupt. */
#define PS_ANCHOR_SKEW_NS (3600ull * 1000000000ull)

typedef struct ps_anchor {
    uint64_t pid, mono, wall;
    size_t off, line;
    uint64_t line_mono;     /* its line's own [mono_ns=], when has_line_mono */
    bool has_line_mono;
    bool line_first;        /* no record before it on its line */
} ps_anchor;

/* Whether anchor a comes before a record on line `line`, and so is in
 * force there: on an earlier line, or first on that line (writes that
 * interleave put two records on one line; a record before the anchor on
 * it must not take the anchor's time backwards). A record after an anchor
 * that is not first on the line takes an earlier anchor, or none. */
static inline bool ps_anchor_precedes(const ps_anchor *a, size_t line)
{
    return a->line < line || (a->line == line && a->line_first);
}

/* How a wall time for host time mono may be taken from anchor a:
 * PS_ANCHOR_OK; PS_ANCHOR_CORRUPT when a's mono_ns is over
 * PS_ANCHOR_SKEW_NS from its own line's [mono_ns=] and mono is nearer that
 * line's (the anchor's reading is the corrupt one: digits run together);
 * PS_ANCHOR_FAR when mono is over PS_CLOCK_FAR_NS from a's mono_ns
 * otherwise (mono is the corrupt one). */
enum { PS_ANCHOR_OK, PS_ANCHOR_CORRUPT, PS_ANCHOR_FAR };
int ps_anchor_judge(const ps_anchor *a, uint64_t mono);

/* The wall-clock time of host time mono by anchor a: wall_ns + mono -
 * mono_ns. False when that falls outside 0 .. 2^64 - 1 ns (a corrupt
 * anchor), *wall untouched. */
bool ps_anchor_wall(const ps_anchor *a, uint64_t mono, uint64_t *wall);

typedef struct ps_rank {
    bool has_pid;
    uint64_t pid, thread;
    size_t npasses;
} ps_rank;

typedef struct ps_options {
    bool keep_first;        /* the cold pass of each rank is used too */
    bool keep_spans;        /* store every [STRACE] span, anchor and segment attribute text (timeline) */
    size_t chunk;           /* ps_read_fd's read size; 0: LR_CHUNK (tests use tiny ones) */
    bool spans_only;        /* spans, anchors and the stamp only: bind-phase and host-orch lines are
                               not read (no passes, no warnings about them) */
    size_t max_line;        /* ps_read_fd's longest line; 0: LR_MAX_LINE (the fuzzer uses short ones) */
    bool runs_apart;        /* the tool keeps the runs of a log put together apart (ps_run_of), so the
                               warning of a repeated [stamp] says so, not that they are pooled */
    bool draws;             /* the tool draws the log (timeline), computes no figure of it: a warning
                               says what is drawn of what it names, not that it is excluded from
                               statistics or ignored (ps_fate) */
    bool records_join;      /* hbg spans --records: a defective pass is no statistic's to exclude, so
                               its warning says whether a records line can still join it */
} ps_options;

typedef struct ps_log {
    /* the log as messages name it: the name given, its control bytes shown
     * as '?' (a name with a line break would split the one line a message
     * is); `file` is the name as given, for JSON, which holds any byte */
    const char *path;
    const char *file;
    char *path_own;         /* path's masked copy, when it needed one */
    const char *buf;
    size_t len;
    ps_options opt;

    int nseg;
    uint32_t seen;          /* bit per segment id some pass has */
    uint64_t max_dur;       /* the largest dur_ns of any segment */
    char segname[PS_MAXSEG][LX_MAX_NAME + 1];
    uint8_t seglen[PS_MAXSEG];
    bool seg_overflow_warned;
    unsigned unknown_op_warned;

    ps_pass *pass;
    size_t npass, cap;
    hm_block passmem;       /* where pass[] lives */
    ps_segx *segx;          /* keep_spans: PS_MAXSEG per pass of pass[] */
    hm_block segxmem;
    size_t size_hint;       /* the file's size, when known: sizes pass[] once */
    struct ps_index *ix;    /* the reader's tables and caches (passes_internal.h) */
    bool stamp_repeated;    /* the same [stamp] line twice: two runs of one command */

    /* The log is incomplete: hbg run's record of a run that a stop signal
     * or its --time-limit cut (docs/log-format.md), or, with no such
     * record, fewer passes than the stamp's hbg run --rounds asks for. A
     * warning says so; `incomplete` is the first reason, as it gives it
     * ("hbg run stopped by signal 2 (Interrupt) after 3 of 6 passes"), on
     * line incomplete_line (the record's, or the stamp's). */
    size_t incomplete_line; /* 0: complete, as far as the log tells */
    char incomplete[256];
    uint32_t incomplete_run; /* the run `incomplete` counts the passes of, from 1 (ps_run_excluded) */
    size_t nstopped; /* the records (logs put together may hold several) */

    bool has_stamp;
    lx_slice stamp;         /* owned copy */
    size_t stamp_line;
    size_t empty_stamp_line; /* the first [stamp] line with no text, 0: none
                                (it records nothing: has_stamp stays false) */
    bool stamp_conflict;
    size_t stamp2_line;
    uint32_t nstamps;       /* [stamp] lines read so far: a run begins at each (ps_pass.run) */
    size_t *stamp_lines;    /* the line of each of them, in log order (ps_run_of) */
    size_t capstamp_lines;

    size_t nbind, norch, nspans, nbad_bind, nbad_orch, ntorn, nbad_anchor;
    size_t cut_line;        /* the line of the record the log's end cut (LX_CUT_MSG); 0: none */
    size_t nbindspans;

    ps_span *span;          /* keep_spans: each span but those of LX_DUR_LIMIT_NS or more */
    size_t nspan, capspan;
    size_t nlong_spans;     /* those left out, the first of them in long_first */
    ps_span long_first;
    hm_block spanmem;
    /* copies of the text spans and attributes refer to, when the log is
     * read in pieces: blocks that never move */
    hm_block *textblk;
    size_t ntextblk, captextblk, textused;
    ps_anchor *anchor;
    size_t nanchor, capanchor;

    ps_rank *rank;
    size_t nrank, caprank;
    size_t ncold, nwarm, nused;

    dg_list warn;
    bool oom;
} ps_log;

/* Groups the log in buf (which must stay valid while L is used: spans and
 * segment offsets refer to it). Warnings go to L->warn as "PATH:LINE: ..."
 * lines. Returns HBG_E_NOMEM only; every input problem is a warning or a
 * flag the caller checks (stamp_conflict). */
hbg_status ps_read(ps_log *L, const char *path, const char *buf, size_t len, const ps_options *opt);

/* The same, reading the open file fd in whole-line pieces (linereader.h:
 * the next piece is read on a second thread while this one is lexed).
 * This is the fast path: on a virtual machine, walking a large mapping page
 * by page costs several times what read(2) into a cache-resident buffer
 * does. L->buf stays NULL; with keep_spans the text that spans and segment
 * attributes refer to is copied. HBG_E_IO (err says why) or HBG_E_NOMEM. */
hbg_status ps_read_fd(ps_log *L, const char *path, int fd, const ps_options *opt, char *err, size_t errlen);
void ps_free(ps_log *L);

/* "pid=31337 inv=2"; "pid=31337 thread 0x7f3c9a7fc640" when its inv is
 * unknown; "thread 0x7f3c9a7fc640" when its pid is too. */
const char *ps_label(const ps_pass *p, char *out, size_t n);
ps_seg ps_get_side(const ps_log *L, const ps_pass *p, int id);
/* Segment id of pass p, which must have it (p->present). */
static inline ps_seg ps_get(const ps_log *L, const ps_pass *p, int id)
{
    if (id >= PS_INLINE)
        return ps_get_side(L, p, id);
    ps_seg g = {p->dur[id], p->bytes[id], p->line[id], (p->has_bytes >> id) & 1};
    return g;
}
/* The sum of pass p's control-plane segments (PS_CONTROL_MASK),
 * UINT64_MAX past 64 bits. A pass whose sum reaches LX_DUR_LIMIT_NS is
 * excluded (PS_D_LONG), so a used pass's sum, and twice it, fit 64 bits. */
uint64_t ps_control_sum(const ps_log *L, const ps_pass *p);

/* start_ns of segment id of pass p (keep_spans only). */
static inline uint64_t ps_start(const ps_log *L, const ps_pass *p, int id)
{
    return L->segx[(size_t)(p - L->pass) * PS_MAXSEG + (size_t)id].start;
}
/* The attribute text of segment id of pass p (keep_spans only; n 0: none). */
static inline ps_text ps_seg_attr(const ps_log *L, const ps_pass *p, int id)
{
    ps_text none = {NULL, 0};
    return L->segx ? L->segx[(size_t)(p - L->pass) * PS_MAXSEG + (size_t)id].attr : none;
}
/* The names of the segment ids in mask, in id order: "args, host_orch". */
void ps_seg_list(const ps_log *L, uint32_t mask, char *out, size_t n);
/* The log level the stamp shows when it is one that writes no TIMING
 * records ("warn", "error", "off"), else NULL: then a log without bind
 * lines lacks them because of the level, whatever the breakdown switch.
 * The level is the stamp's --log-level, else its HBG_LOG_LEVEL=, else its
 * SIMPLER_LOG_LEVEL=; `said` gets the words that set it, as written
 * ("--log-level warn", "SIMPLER_LOG_LEVEL=WARN"). */
const char *ps_stamp_quiet_level(const ps_log *L, char *said, size_t n);
/* What follows a log's name in the message for a log with no bind lines
 * (L->nbind == 0), the same in every tool: none well-formed, the stamp's
 * quiet level, or the breakdown switch. Into buf, which it returns. */
const char *ps_no_bind_why(const ps_log *L, char *buf, size_t cap);
/* For a log that has records but none whole, the same in spans and
 * timeline: "none of its N [STRACE] records and M bind lines is whole
 * (see the warnings)", either count left out when 0 (torn: L->ntorn; bad:
 * the malformed bind lines, when the tool draws them); of one record,
 * "its one [STRACE] record is not whole (...)". Into buf, which it
 * returns. */
const char *ps_none_whole(size_t torn, size_t bad, char *buf, size_t cap);
/* For a log with a second, different stamp (L->stamp_conflict), the same
 * in every tool: "PATH:L: a second, different [stamp] line (the first is
 * at line K): the log mixes two runs". Each tool says what it does about
 * it after. Into buf, which it returns. */
const char *ps_mixed_runs(const ps_log *L, const char *path, char *buf, size_t cap);
/* Why the warm passes that are not used were excluded, one count per
 * defect: "3 with an ignored line, 1 without arena_h2d". */
void ps_exclusions(const ps_log *L, char *out, size_t n);
/* The subject of "... excluded" for n passes, the same in every tool:
 * "all 3 warm passes were", or "the one warm pass was" (kind: "warm "
 * or ""). Into buf, which it returns. */
const char *ps_all_passes(size_t n, const char *kind, char *buf, size_t cap);
/* The run that a record on line `line` belongs to, from 1: each [stamp]
 * line after the first begins the next (logs put together hold runs one
 * after another); a record before the first stamp is of the first run,
 * as a log's own lines are when records were written before it or logs
 * of one run were put together in another order. */
uint32_t ps_run_of(const ps_log *L, size_t line);
/* The end of a warning about pass p: what the tool does with it. A tool
 * that computes figures leaves the pass out of them (`excluded`); one that
 * draws the log (opt.draws) says whether p is drawn (`drawn`, e.g.
 * "drawn without it") or "not drawn" where it has no place on the trace
 * (no pid or inv, a control-plane sum that is no measurement, no segment
 * line whole); hbg spans --records (opt.records_join) says whether a
 * records line can still join p. */
const char *ps_fate(const ps_log *L, const ps_pass *p, const char *excluded, const char *drawn);
/* The warm passes of run `run` (from 1, as incomplete_run counts: the
 * passes before the first stamp are the first run's) that are not used:
 * those a defect excludes when the first is not kept. A pass met again
 * in a later run counts in each, as the count of the passes a run holds
 * does. */
size_t ps_run_excluded(const ps_log *L, uint32_t run);
/* The pass of (pid, inv), or NULL. */
const ps_pass *ps_find(const ps_log *L, uint64_t pid, uint64_t inv);

#endif
