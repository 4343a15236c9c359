/* hbg — tracing: the log emitter, spans, bind-phase lines, per-op records.
 *
 * Every record is formatted into a stack buffer and written with one
 * write(2) of at most PIPE_BUF bytes, so rank processes sharing a pipe or a
 * file never tear each other's records. Formatting happens at the end of a
 * pass, never inside it: the hot path only stores numbers.
 * Formats: docs/log-format.md (the grammar both runtimes write).
 */
#ifndef HBG_TRACE_H
#define HBG_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "hbg/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum hbg_level {
    HBG_LOG_DEBUG = 0, HBG_LOG_INFO, HBG_LOG_TIMING, HBG_LOG_WARN, HBG_LOG_ERROR, HBG_LOG_OFF
} hbg_level;

const char *hbg_level_name(hbg_level l); /* "DEBUG" ... "ERROR", "OFF" */
/* Parses debug|info|timing|warn|error|off (any case). */
hbg_status hbg_level_parse(const char *s, hbg_level *out);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t hbg_mono_ns(void);
/* The calling thread's kernel tid. */
uint32_t hbg_gettid(void);

typedef struct hbg_log hbg_log;

/* Logs to `fd` (not closed by hbg_log_close) at `threshold`: records below
 * it are not written, and HBG_LOG_OFF writes nothing. Every emitting call
 * below accepts a NULL log and then does nothing. */
hbg_status hbg_log_open(int fd, hbg_level threshold, hbg_log **out);
void hbg_log_close(hbg_log *lg);
bool hbg_log_enabled(const hbg_log *lg, hbg_level l);
/* Logging never fails its caller; a write that failed is remembered here:
 * the first errno a record's write met, EIO when a record was only partly
 * written (a full disk, a file size limit), 0 when every record went out
 * whole. The owner of the log checks it when the work is done. */
int hbg_log_write_error(const hbg_log *lg);

/* "[mono_ns=..][T0x..][LEVEL] func: [file:line] message" (file is the
 * basename). Before a process's first record in a log whose threshold admits
 * TIMING, its clock anchor is written — once per process, forked children
 * included. A record longer than PIPE_BUF bytes is cut and ends in "...";
 * newlines inside a message become spaces. */
void hbg_log_printf(hbg_log *lg, hbg_level l, const char *func, const char *file, int line,
                    const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;
#define HBG_LOG(lg, lvl, ...) hbg_log_printf((lg), (lvl), __func__, __FILE__, __LINE__, __VA_ARGS__)

/* A record whose message is given verbatim (no "[file:line] "). */
void hbg_log_record(hbg_log *lg, hbg_level l, const char *func, const char *msg);

/* One [STRACE] span line (docs/log-format.md, "Spans"), func "emit_host_span",
 * level TIMING. hid is printed as 16 lowercase hex digits; name is
 * percent-encoded (and cut at 2048 encoded bytes). */
typedef struct hbg_span {
    uint64_t inv;
    uint64_t hid;
    uint32_t pid, tid;
    int depth;
    const char *name;
    uint64_t ts, dur;
    bool dev_clock;   /* appends clk=dev; ts is then 0 by convention */
} hbg_span;
void hbg_log_span(hbg_log *lg, const hbg_span *s);

/* --- the stamp ------------------------------------------------------- */

/* The longest commit a stamp carries, in bytes: what hbg compare reads
 * back (its verdict lines name the commit). */
#define HBG_STAMP_COMMIT_MAX 47

/* What a log was measured with, for its first line. hbg compare (and hbg
 * ab) accept two logs as the same ruler only when their stamps agree in
 * everything but the commit, so a program of one's own that writes its log
 * with this line can be compared like `hbg run`'s. */
typedef struct hbg_stamp {
    const char *commit;    /* the build measured: one word of UTF-8 text, at
                              most HBG_STAMP_COMMIT_MAX bytes, no control
                              byte (C0, DEL, C1) and no byte that starts no
                              UTF-8 character, as hbg compare reads it (a
                              git commit; "<commit>-dirty" for a changed
                              tree) */
    bool breakdown, records, skip_device; /* the switches in effect */
    hbg_level level;                      /* the log's threshold */
    const char *command;   /* the command as run, words separated by spaces
                              (artifact paths left out: they differ run to run);
                              control bytes are written as spaces */
} hbg_stamp;

/* Formats the stamp line, without its newline:
 *   [stamp] <commit> env HBG_BIND_BREAKDOWN=<0|1> HBG_HOST_PHASE_RECORDS=<0|1>
 *           HBG_SKIP_DEVICE_RUN=<0|1> HBG_LOG_LEVEL=<level> <command>
 * (one line; every switch written resolved, so two stamps differ exactly
 * where two runs' conditions do). HBG_E_INVAL for a NULL stamp or
 * buffer, a `cap` of 0, a missing or empty commit, a commit longer than
 * HBG_STAMP_COMMIT_MAX or with a space, a control byte or a byte that
 * starts no UTF-8 character (a commit hbg compare would refuse), a
 * missing command, a level that is no hbg_level,
 * or a line that does not fit `cap` bytes (NUL included);
 * hbg_stamp_last_error says which. */
hbg_status hbg_stamp_format(const hbg_stamp *s, char *buf, size_t cap);

/* Writes the stamp line to `fd` (the log's first line) with one write(2).
 * HBG_E_INVAL as hbg_stamp_format, also for a line longer than a record
 * (PIPE_BUF bytes); HBG_E_IO when the write fails or is short (errno kept). */
hbg_status hbg_log_stamp(int fd, const hbg_stamp *s);

/* Why this thread's last refused hbg_stamp_format or hbg_log_stamp was
 * refused, in one line ("the stamp's commit has a control byte at byte
 * 4"): a stamp is the caller's struct, with no object of the library's to
 * hold the words. Valid until the next refused stamp call on the thread;
 * not cleared by a success; "" before any refusal. */
const char *hbg_stamp_last_error(void);

/* --- bind phases ------------------------------------------------------ */

typedef enum hbg_phase {
    /* bind segments, in pipeline (table) order */
    HBG_PH_ARGS = 0, HBG_PH_ARENA_BUILD, HBG_PH_STATIC_ARENA, HBG_PH_GM_HEAP,
    HBG_PH_SHARED_MEM, HBG_PH_RUNTIME_INIT, HBG_PH_HOST_ORCH, HBG_PH_GRAPH_UPLOAD,
    HBG_PH_ARENA_H2D, HBG_PH_HOST_VIEW_CLOSE,
    HBG_SEGMENT_COUNT,
    /* orchestrator operation kinds */
    HBG_OP_SUBMIT_TASK = HBG_SEGMENT_COUNT, HBG_OP_ALLOC_TENSORS, HBG_OP_RECORD_NODE,
    HBG_OP_GRAPH_SUBMIT, HBG_OP_BUILD_DEFINITION,
    HBG_PHASE_COUNT,
    /* No phase at all: a pass report's failed_segment when no bind segment
     * failed (the pass succeeded, or the device run failed). Apart from
     * every segment and operation, so it never reads as one. */
    HBG_PH_NONE = 0xff
} hbg_phase;
#define HBG_OP_COUNT (HBG_PHASE_COUNT - HBG_SEGMENT_COUNT)

/* "args", ..., "build_definition"; "none" for HBG_PH_NONE. */
const char *hbg_phase_name(hbg_phase p);

#define HBG_MAX_ATTRS 6
typedef struct hbg_attr { const char *key; uint64_t value; } hbg_attr;

/* One pass's bind trace, filled by the pipeline with numbers only. */
typedef struct hbg_seg_trace {
    uint64_t start_ns, dur_ns;
    uint32_t nattr;
    hbg_attr attr[HBG_MAX_ATTRS];
} hbg_seg_trace;

typedef struct hbg_bind_trace {
    uint32_t pid;
    uint64_t inv;
    uint8_t order[HBG_SEGMENT_COUNT]; /* segments in the order they ran */
    uint32_t nran;
    hbg_seg_trace seg[HBG_SEGMENT_COUNT];
    /* Per operation kind: count and detail_sum are exact; total_ns is the
     * sum of the `timed` operations scaled by count / timed (the
     * breakdown times a sample of each kind; docs/log-format.md,
     * "Bind-phase lines"). timed == count: every operation was timed;
     * timed == 0 < count: the total is unknown, 0. */
    struct {
        uint64_t total_ns, count, detail_sum, dropped, timed;
    } op[HBG_OP_COUNT];
} hbg_bind_trace;

/* Writes the burst (func "bind_trace_end", level TIMING, one shared
 * mono_ns): one `bind phase=` line per segment that ran, in `order` except
 * that arena_h2d always comes last and a repeated or out-of-range entry is
 * skipped; then the five `host-orch phase=` lines; each ends with pid= /
 * inv=. Attributes with a NULL key are skipped. */
void hbg_bind_trace_emit(hbg_log *lg, const hbg_bind_trace *bt);

/* --- per-op records --------------------------------------------------- */

typedef struct hbg_recpool hbg_recpool;

/* A bounded pool: up to `max_threads` per-thread buffers of `per_thread`
 * records each. All memory is taken here, the jsonl line buffer included.
 *
 * Contract: arm, disarm and write_jsonl are called while no thread records
 * into the pool (before and after the pass). Arm in the process that
 * records: a child forked from an armed pool must arm its own pass. */
hbg_status hbg_recpool_create(unsigned max_threads, unsigned per_thread, hbg_recpool **out);
void hbg_recpool_destroy(hbg_recpool *p);
/* Starts a pass: forgets earlier records and drops; (pid, inv) tag the
 * jsonl line. Records made while disarmed are ignored, not counted. */
void hbg_recpool_arm(hbg_recpool *p, uint32_t pid, uint64_t inv);
void hbg_recpool_disarm(hbg_recpool *p);
bool hbg_recpool_armed(const hbg_recpool *p);
/* Hot path: no lock, no allocation. A full buffer (or no free buffer for a
 * new thread, or a phase out of range) counts the record as dropped; an
 * earlier record is never overwritten. */
void hbg_rec(hbg_recpool *p, hbg_phase phase, uint64_t start_ns, uint64_t end_ns, uint64_t detail);
uint64_t hbg_recpool_count(const hbg_recpool *p);
uint64_t hbg_recpool_dropped(const hbg_recpool *p);
/* Appends the last armed pass's line of host_phase_records.jsonl to `fd`:
 * records sorted by start_ns (stable), each with its recording thread's
 * kernel tid. The line is formatted into the pool's own buffer and written
 * with one write(2) (continued only after a short write), so lines of rank
 * processes appending to one O_APPEND file do not interleave.
 * HBG_E_INVAL for a NULL pool or a negative fd, HBG_E_STATE if the pool
 * was never armed, HBG_E_IO if the write fails. */
hbg_status hbg_recpool_write_jsonl(hbg_recpool *p, int fd);

/* --- switches --------------------------------------------------------- */

/* The name whose value is in effect: `ours` when set (even empty), else
 * `original` when set, else NULL — for error messages naming the variable. */
const char *hbg_switch_which(const char *ours, const char *original);

/* Reads switch `ours`, else `original` (may be NULL): ours wins when both are
 * set. `0`, `false`, `off`, `no` and the empty string mean off; `1`, `true`,
 * `on`, `yes` mean on (any case); unset leaves *on untouched. Anything else
 * is HBG_E_INVAL, *on untouched: the caller names the variable (see
 * hbg_switch_which) and the value in its message. */
hbg_status hbg_switch_read(const char *ours, const char *original, bool *on);

/* A switch value as hbg_switch_read reads one: HBG_OK with *on, or
 * HBG_E_INVAL (*on untouched) for any other value and for NULL. For a
 * variable that takes a switch value or something else (a size that may
 * be `off`). */
hbg_status hbg_switch_value(const char *v, bool *on);

#define HBG_SW_BREAKDOWN "HBG_BIND_BREAKDOWN", "SIMPLER_HBG_BIND_BREAKDOWN_ENABLE"
#define HBG_SW_RECORDS "HBG_HOST_PHASE_RECORDS", "SIMPLER_HBG_HOST_PHASE_RECORDS_ENABLE"
#define HBG_SW_SKIP_DEVICE "HBG_SKIP_DEVICE_RUN", "SIMPLER_SKIP_DEVICE_RUN"
#define HBG_SW_LOG_LEVEL "HBG_LOG_LEVEL", "SIMPLER_LOG_LEVEL"

/* Reads HBG_LOG_LEVEL / SIMPLER_LOG_LEVEL (ours wins): debug|info|timing|
 * warn|error|off in any case; unset or empty means timing; anything else is
 * HBG_E_INVAL with *out untouched. */
hbg_status hbg_switch_level(hbg_level *out);

#ifdef __cplusplus
}
#endif
#endif
