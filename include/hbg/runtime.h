/* hbg — the runtime: bind a program to a device, run it, trace both.
 *
 * A runtime owns one device context for one rank: the pooled device
 * regions (GM heap, arena, caller buffers, uploaded Definitions) persist
 * across passes, so only the first pass pays for them. Each hbg_runtime_run()
 * is one `chip.run`: a bind pass (the ten segments) and, unless skipped, a
 * device run that ends with the caller's outputs copied back.
 */
#ifndef HBG_RUNTIME_H
#define HBG_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>

#include "hbg/device.h"
#include "hbg/graph.h"
#include "hbg/kernel.h"
#include "hbg/orch.h"
#include "hbg/status.h"
#include "hbg/tensor.h"
#include "hbg/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hbg_runtime hbg_runtime;

/* A caller tensor: host memory the program reads and/or writes. */
typedef struct hbg_host_tensor {
    const char *name;
    void *host;         /* caller memory, `layout.nbytes` bytes */
    hbg_tensor layout;  /* dtype / shape / strides / nbytes; addr ignored */
    uint8_t dir;        /* HBG_IN (staged), HBG_OUT (read back), HBG_INOUT (both);
                           the orchestration passes it to tasks with the same
                           name: HBG_OUT writes into this buffer */
    bool persistent;    /* an IN staged once and kept on the device while its
                           host pointer and size stay the same (weights) and
                           no other program's OUT in its position wrote it;
                           on an OUT or INOUT the pass fails (HBG_E_INVAL),
                           and so does a task or Graph slot that writes it */
} hbg_host_tensor;

/* The orchestration function: builds the pass's task graph. The caller
 * tensors, staged, are hbg_orch_arg(o, i) in the order of the program. */
typedef hbg_status (*hbg_orch_fn)(hbg_orch *o, void *ctx);

typedef struct hbg_program {
    const char *name;
    hbg_orch_fn orch;
    void *ctx;
    uint32_t nargs;
    hbg_host_tensor *args;
} hbg_program;

typedef struct hbg_runtime_config {
    hbg_device *device;               /* not owned */
    const hbg_kernel_table *kernels;  /* not owned */
    uint32_t task_window;             /* 0: HBG_DEFAULT_TASK_WINDOW; at most
                                         HBG_MAX_TASK_WINDOW (else HBG_E_INVAL) */
    uint64_t heap_bytes;              /* 0: HBG_DEFAULT_HEAP_BYTES; at most
                                         HBG_MAX_HEAP_BYTES (else HBG_E_INVAL) */
    bool keep_definitions;            /* keep Definitions across passes */
    hbg_log *log;                     /* spans and breakdown lines; NULL: none */
    bool breakdown;                   /* emit `bind phase=` / `host-orch phase=` */
    hbg_recpool *records;             /* arm per-op records each pass; NULL: off.
                                         Held by one runtime at a time, from
                                         create to destroy (a pool serves one
                                         pass at a time): see hbg_runtime_create */
    int records_fd;                   /* host_phase_records.jsonl (when records);
                                         -1 (any negative value): kept in
                                         the pool, not written */
    uint32_t rank, nranks;            /* rank < nranks (nranks 0: one rank, rank 0) */
    /* Filled by hbg_runtime_config_from_env for the caller, who passes
     * them on: skip_device to hbg_runtime_run, log_level to hbg_log_open. */
    bool skip_device;
    hbg_level log_level;
    /* The record pool hbg_runtime_config_from_env creates: record_threads
     * buffers (threads that record; 0: HBG_DEFAULT_RECORD_THREADS) of
     * records_per_thread records (0: HBG_DEFAULT_RECORDS_PER_THREAD). */
    uint32_t record_threads, records_per_thread;
    /* The device pool Definitions are uploaded into, committed with the GM
     * heap and the arena in the first pass's static_arena (0:
     * HBG_DEFAULT_DEF_POOL_BYTES; at most HBG_MAX_DEF_POOL_BYTES, else
     * HBG_E_INVAL); it counts toward the device's memory
     * like them. A Definition that does not fit in what is left gets a
     * device allocation of its own in graph_upload: a device short of
     * memory can pass a small pool (even 1 byte) to have every Definition
     * allocated that way, as before the pool. */
    uint64_t def_pool_bytes;
    /* Every pass walks the tensor map for each of its dependency queries.
     * Off (the default), from the third pass on, a pass whose queries
     * repeat the last pass's, in order and byte for byte, gets the same
     * answers from the map's journal of that pass without walking (the
     * cold pass makes no journal), and a kernel task that repeats the
     * last pass's at its window slot, in the same state, keeps the record
     * that pass left instead of being validated and written again (the
     * task memo, which needs the journal), as does a re-recorded node
     * that repeats the last recording's (the node memo). The image and
     * the Definitions are the same either way (docs/orchestration.md,
     * "The tensor map's journal", "The task memo", "The node memo"). */
    bool no_tmap_journal;
    /* The tensor-map calls (dependency queries and writes) the journal
     * can hold for a pass, with room for 4 reported writers each; 0:
     * HBG_DEFAULT_JOURNAL_CALLS_PER_TASK per window task. A task makes one
     * a tensor argument it reads and one it writes, a replay one a
     * boundary slot: the cases make 3-4 a task, but replays of wide
     * boundaries make up to 256 (HBG_MAX_BOUNDARY_TENSORS read and
     * written). A pass that makes more follows the journal's prefix and
     * walks the rest, with no memo answer past it: the same image, slower.
     * Reserved address space (136 bytes a call with its reports), of
     * which a pass touches what it journals. At most HBG_MAX_JOURNAL_CALLS
     * (HBG_E_INVAL past it, or when the window's default would be). */
    uint32_t journal_calls;
} hbg_runtime_config;

/* Room for the reference cases' Definitions (qwen's is 131 KB, dsv4's
 * 385 KB) with some to spare. */
#define HBG_DEFAULT_DEF_POOL_BYTES ((uint64_t)1 << 20)
/* The largest def_pool_bytes: 2^64 - 64, as HBG_MAX_HEAP_BYTES, for the
 * same 64-byte rounding of the offsets into it. */
#define HBG_MAX_DEF_POOL_BYTES (UINT64_MAX & ~(uint64_t)63)

/* The default record pool: 4 x 65536 records. A record takes 200 bytes
 * (32 stored, 8 for sorting, 160 of jsonl line room), so the default pool
 * is 50 MiB, all taken when it is created. */
#define HBG_DEFAULT_RECORD_THREADS 4u
#define HBG_DEFAULT_RECORDS_PER_THREAD 65536u

/* Reads the environment switches into `cfg` (docs/log-format.md, "Switch
 * values"; hbg's name wins over the original's when both are set):
 *   HBG_BIND_BREAKDOWN      / SIMPLER_HBG_BIND_BREAKDOWN_ENABLE     -> breakdown
 *   HBG_HOST_PHASE_RECORDS  / SIMPLER_HBG_HOST_PHASE_RECORDS_ENABLE -> records
 *   HBG_SKIP_DEVICE_RUN     / SIMPLER_SKIP_DEVICE_RUN               -> skip_device
 *   HBG_LOG_LEVEL           / SIMPLER_LOG_LEVEL                     -> log_level
 * An unset switch leaves the field as it was, except log_level, which is
 * then HBG_LOG_TIMING. Records on with no pool in cfg->records creates one
 * of record_threads x records_per_thread records; it is the caller's, to
 * hbg_recpool_destroy after the runtime, and serves that one runtime (a
 * config copied to a second is refused: hbg_runtime_create). Records off sets cfg->records to
 * NULL (a pool the caller made stays the caller's). The caller still sets
 * records_fd.
 *
 * A value a switch does not take is HBG_E_BAD_ENV, with cfg untouched and
 * `msg` (when not NULL; `cap` bytes) naming the variable, e.g.
 *   "HBG_BIND_BREAKDOWN=maybe is not a switch value (expected
 *    1/true/on/yes or 0/false/off/no/empty)".
 * A record pool that cannot be created is hbg_recpool_create's status
 * (HBG_E_NOMEM; HBG_E_INVAL past 2^31 - 1 records), cfg untouched and msg
 * "a record pool of T x P records: " and the status's text. A NULL cfg
 * is HBG_E_INVAL, msg "no config (hbg_runtime_config is NULL)". */
hbg_status hbg_runtime_config_from_env(hbg_runtime_config *cfg, char *msg, size_t cap);

#define HBG_PASS_ERROR_MAX 256

/* What one pass did: the numbers behind its `bind phase=` lines. */
typedef struct hbg_pass_report {
    uint64_t inv;                     /* this process's invocation number */
    hbg_status status;                /* of the whole chip.run */
    char error[HBG_PASS_ERROR_MAX];   /* why it failed, in words ("" when it did
                                         not): hbg_orch_last_error() for a failed
                                         orchestration, "SEGMENT: ..." for another
                                         bind segment (the device's words when it
                                         refused the segment's call: hbg_device_last_error),
                                         "device run: ..." for the device; the log
                                         gets it as one ERROR line */
    hbg_phase failed_segment;         /* the bind segment that failed; HBG_PH_NONE when
                                         none did (success, or a failed device run) */
    hbg_bind_trace trace;             /* every segment that ran, with attrs */
    uint32_t tasks;
    uint64_t heap_used;
    uint32_t defs_uploaded, replays;
    uint32_t fallbacks;               /* Graph calls run as ordinary tasks
                                         (HBG_GRAPH_FALLBACK on a mismatch) */
    uint64_t shipped_bytes;           /* the single arena H2D */
    uint64_t control_plane_ns;        /* host_orch + graph_upload + arena_h2d */
    bool device_ran;
    hbg_run_stats run;
} hbg_pass_report;

/* HBG_E_INVAL for a NULL cfg, device or kernel table, or a rank outside
 * nranks, or a task_window or journal_calls past its limit; HBG_E_STATE
 * when cfg->records is a pool another live runtime holds: runtimes that
 * run at the same time need a pool each (a config
 * copied after hbg_runtime_config_from_env made its pool shares that
 * one, and calling it again on the copy keeps it: call it on a config
 * whose records is NULL, or hbg_recpool_create one each); HBG_E_NOMEM
 * naming the part of the runtime that host memory ran out for.
 * hbg_runtime_last_error() says which, in words. */
hbg_status hbg_runtime_create(const hbg_runtime_config *cfg, hbg_runtime **out);
/* Frees the runtime's device memory through cfg->device and gives its
 * record pool back: the device, kernel table, log and pool outlive it.
 * Never called while a pass of it is under way (from another thread, or
 * from its orchestration, a Graph body or a kernel): unlike
 * hbg_runtime_run it cannot refuse. */
void hbg_runtime_destroy(hbg_runtime *rt);

/* One chip.run: bind `p`, then (unless `skip_device`) run the device and
 * copy outputs back. On failure the pass uploads nothing partial and the
 * runtime is ready for the next call. Called while a run of the same
 * runtime is under way (from its orchestration function, a Graph body,
 * a kernel of its device run, or another thread): HBG_E_STATE, the
 * report untouched and the running pass unchanged; so is a call that
 * meets hbg_runtime_set_breakdown under way on another thread, which
 * claims the runtime as a pass does (a runtime is one thread's at a
 * time: a program that turns the switch from a second thread orders
 * that call before the run itself). Those refusals, and HBG_E_INVAL for
 * a NULL runtime or report, have no report to write: their words are in
 * hbg_runtime_last_error(); every other failure's are in rep->error
 * (a NULL program's too). A per-op records file
 * (records_fd) that cannot be written fails the call with HBG_E_IO after
 * the pass was bound and run as usual (rep->device_ran says so). */
hbg_status hbg_runtime_run(hbg_runtime *rt, const hbg_program *p, bool skip_device, hbg_pass_report *rep);

/* Turns the breakdown (cfg.breakdown) on or off for the passes that
 * follow. The per-op records, when armed, stay armed and keep every
 * operation timed. The breakdown times a sample of each operation kind,
 * its periods taken from the last pass it timed (docs/log-format.md,
 * "Bind-phase lines"), so a runtime that turns it on now and then pays
 * for a sample, not for every operation. HBG_E_INVAL for a NULL runtime,
 * HBG_E_STATE while a pass of this runtime is under way (called from its
 * orchestration, a kernel of its device run, or another thread), as
 * hbg_runtime_run is; hbg_runtime_last_error() says which. */
hbg_status hbg_runtime_set_breakdown(hbg_runtime *rt, bool on);

/* Runs p's orchestration eagerly on host memory, in program order: every
 * task executes the moment it is submitted, Graph bodies run inline, and
 * the caller tensors are used in place through their host pointers. The
 * reference a device run is checked against. `heap_bytes` of host address
 * space back the GM heap (reserved, touched only as used; 0:
 * HBG_DEFAULT_HEAP_BYTES; past HBG_MAX_HEAP_BYTES: HBG_E_INVAL, as
 * hbg_runtime_create refuses it; one the host cannot reserve:
 * HBG_E_NOMEM). */
hbg_status hbg_eager_run(const hbg_program *p, const hbg_kernel_table *kt, uint64_t heap_bytes,
                         uint32_t rank, uint32_t nranks, void *services);
/* The same with the orchestrator's task window given (0: the default;
 * past HBG_MAX_TASK_WINDOW: HBG_E_INVAL), for a program of more tasks
 * than HBG_DEFAULT_TASK_WINDOW. */
hbg_status hbg_eager_run_window(const hbg_program *p, const hbg_kernel_table *kt, uint64_t heap_bytes,
                                uint32_t task_window, uint32_t rank, uint32_t nranks, void *services);
/* Why this thread's last hbg_eager_run or hbg_eager_run_window failed:
 * a refused caller tensor in a pass report's words ("args: caller tensor
 * 0 (x): ..."), else the orchestration's hbg_orch_last_error, or for a
 * bare status "orchestration: " and its text (a pass report says
 * "host_orch: "); "" after a success. The caller tensors are checked as
 * hbg_runtime_run checks them. */
const char *hbg_eager_last_error(void);

/* Why this thread's last refused runtime call failed, in one line, for
 * the calls that fail with no report to write into: a failed
 * hbg_runtime_create ("task_window 16777217 is past the limit of 16777216
 * (HBG_MAX_TASK_WINDOW)"), a failed hbg_runtime_set_breakdown, and an
 * hbg_runtime_run refused before its pass (a NULL runtime or report,
 * HBG_E_STATE: "the runtime is in use: ..."). A run that gets as far as
 * its report (a NULL program, a failed pass) writes rep->error instead,
 * and leaves this alone. Not cleared by a success; valid until the next
 * of those calls that fails on the thread (a run refused from a kernel
 * sets the kernel's core thread's). Formatted only when a call is
 * refused: a pass pays nothing for it. Kept per thread, as
 * hbg_bound_last_error and hbg_eager_last_error keep theirs, because a
 * create that fails has no object to hold its words (*out is NULL, as
 * every create leaves it), a refused run may not write the report it
 * was given (from inside a pass it may be the running pass's), and the
 * config is the caller's, const, and laid out for callers built against
 * it: a message buffer added to it would change its size. */
const char *hbg_runtime_last_error(void);

/* The orchestrator (for Definition info after a pass). */
const hbg_orch *hbg_runtime_orch(const hbg_runtime *rt);

#ifdef __cplusplus
}
#endif
#endif
