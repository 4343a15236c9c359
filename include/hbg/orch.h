/* hbg — the orchestration API.
 *
 * A case's orchestration function receives an hbg_orch and submits tasks to
 * it. Every call appends to the task image of the current bind pass; nothing
 * here allocates memory, takes a lock or formats text, because this is the
 * hot path the whole project is measured on. Capacity is fixed when the
 * runtime is created and exceeding it is a named status, never an abort: the
 * orchestrator stays usable so the caller can still report the failure.
 */
#ifndef HBG_ORCH_H
#define HBG_ORCH_H

#include <stdint.h>
#include <string.h>
#include "hbg/bound.h"
#include "hbg/status.h"
#include "hbg/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Limits (the original system's, kept so workloads port unchanged). */
#define HBG_MAX_TASK_TENSORS 32
#define HBG_MAX_TASK_SCALARS 16
#define HBG_MAX_FANINS 128
/* SPMD blocks per task (hbg_task.blocks): the device refuses an image
 * with more, so a submit does. */
#define HBG_MAX_BLOCKS 65536u
#define HBG_DEFAULT_TASK_WINDOW 16384u
/* The largest task window (hbg_runtime_config.task_window): its pools
 * (33 tensor-map entries a task, 4 buffers) are counted in 32 bits. */
#define HBG_MAX_TASK_WINDOW (1u << 24)
#define HBG_DEFAULT_HEAP_BYTES (256ull << 20)
/* The largest GM heap (hbg_runtime_config.heap_bytes): 2^64 - 64, so that
 * an offset into it rounded up to 64 bytes stays in 64 bits. */
#define HBG_MAX_HEAP_BYTES (UINT64_MAX & ~(uint64_t)63)
#define HBG_LARGE_HEAP_BYTES (2ull << 30)
#define HBG_MAX_ALLOC_TENSORS 32 /* tensors per alloc_tensors call */
/* The tensor map's journal (hbg_runtime_config.journal_calls): calls a
 * pass may journal, by default per window task, and at most. */
#define HBG_DEFAULT_JOURNAL_CALLS_PER_TASK 16u
#define HBG_MAX_JOURNAL_CALLS (1u << 28)

typedef struct hbg_orch hbg_orch;

/* Task ids. Outside a Graph body an id is the task's index in this pass's
 * window. Inside a body being recorded, ids name Definition nodes and carry
 * HBG_NODE_ID_BIT; they are only meaningful as deps inside that body. */
typedef uint32_t hbg_task_id;
#define HBG_NODE_ID_BIT 0x80000000u
#define HBG_TASK_NONE 0xffffffffu

typedef enum hbg_core {
    HBG_CORE_AIC = 0, /* cube core: matmul */
    HBG_CORE_AIV = 1, /* vector core */
    HBG_CORE_MIX = 2  /* one AIC and one AIV run the block together */
} hbg_core;

#define HBG_KERNEL_NONE 0xffffu

/* Directions. Each name means one thing wherever it appears: on a task's
 * tensor argument, a Graph boundary slot, or a caller tensor
 * (hbg_host_tensor.dir, which takes HBG_IN, HBG_OUT and HBG_INOUT only).
 * Only HBG_OUT_ALLOC makes a buffer; every other direction uses the buffer
 * its tensor already names, so a caller's output tensor passed to a task as
 * HBG_OUT is written in place. */
typedef enum hbg_dir {
    HBG_IN = 0,        /* read; depends on earlier overlapping writers
                          (caller tensor: staged to the device before the run) */
    HBG_OUT_ALLOC = 1, /* task argument only: the runtime allocates the buffer
                          from the GM heap and fills t->addr / nbytes / creator;
                          the tensor must arrive without one (addr 0), else
                          HBG_E_ARG_HAS_BUFFER */
    HBG_INOUT = 2,     /* read and written in place (caller tensor: staged,
                          and read back after the run) */
    HBG_OUT = 3,       /* written into the buffer the tensor names; no read
                          dependency (caller tensor: read back after the run) */
    HBG_NO_DEP = 4     /* task argument only: passed through, never tracked */
} hbg_dir;

/* One tensor argument. Every direction but HBG_OUT_ALLOC needs a tensor
 * that names a buffer (addr != 0), else HBG_E_ARG_NO_BUFFER. For
 * HBG_OUT_ALLOC `t` must point at writable storage, which the runtime
 * fills in; a tensor reused across passes is reset to its description
 * (hbg_tensor_desc) before each pass's submit. */
typedef struct hbg_arg {
    hbg_tensor *t;
    uint8_t dir; /* an hbg_dir */
} hbg_arg;

typedef enum hbg_cmp {
    HBG_CMP_EQ = 0, HBG_CMP_NE, HBG_CMP_LT, HBG_CMP_LE, HBG_CMP_GT, HBG_CMP_GE
} hbg_cmp;

/* Dispatch predicate: the device reads the unsigned integer of `elem_size`
 * bytes (1, 2, 4 or 8) at `byte_offset` into tensor `t`'s buffer and runs the
 * task only if `word <op> value`; otherwise the task completes without
 * running. The word is read as an INPUT, so the task depends on its writer. */
typedef struct hbg_pred {
    const hbg_tensor *t;
    uint64_t byte_offset;
    uint64_t value;
    uint8_t op;        /* an hbg_cmp */
    uint8_t elem_size;
} hbg_pred;

/* A task. `core` picks the kernel slots that run: kernel_aic for
 * HBG_CORE_AIC, kernel_aiv for HBG_CORE_AIV, both for HBG_CORE_MIX; a slot
 * the core does not use is ignored (HBG_KERNEL_NONE by convention), and a
 * slot it uses must name a kernel (not HBG_KERNEL_NONE), else HBG_E_INVAL
 * with hbg_orch_last_error naming the core and both slots. `scalar_slots`,
 * when not NULL, marks each scalar as static (-1) or as boundary scalar k
 * of the enclosing Graph (k >= 0); in a replay the scalar is then rebound.
 * Any other mark (below -1) is HBG_E_INVAL.
 *
 * A zero-initialised task is valid: one block of AIC kernel 0, no tensors,
 * scalars, deps or predicate. `blocks = 0` means 1, and every count of 0
 * may come with a NULL pointer. */
typedef struct hbg_task {
    uint16_t kernel_aic;
    uint16_t kernel_aiv;
    uint8_t core;       /* an hbg_core */
    uint8_t sync_start; /* all blocks start together (MIX attention) */
    uint32_t blocks;    /* SPMD block count; 0 means 1 */
    uint32_t ntensors;
    hbg_arg *args;
    uint32_t nscalars;
    const uint64_t *scalars;
    const int16_t *scalar_slots;
    uint32_t ndeps;
    const hbg_task_id *deps;
    const hbg_pred *pred; /* NULL: always run */
} hbg_task;

/* Float scalars without bit-casting by hand: a task scalar is 64 bits, a
 * float travels in its low 32 (the high 32 zero), a double in all 64. A
 * kernel reads them back with hbg_kernel_f32 / hbg_kernel_f64 (kernel.h). */
static inline uint64_t hbg_scalar_f32(float x)
{
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    return bits;
}

static inline uint64_t hbg_scalar_f64(double x)
{
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    return bits;
}

hbg_status hbg_submit_task(hbg_orch *o, const hbg_task *t, hbg_task_id *id);

/* hbg_submit_task with the task's tensor arguments from `bd` (bound.h):
 * t->ntensors must be 0 and t->args NULL, else HBG_E_INVAL. Everything
 * else (kernel, blocks, scalars, dependencies, predicate) comes from t,
 * and is checked and compared as for hbg_submit_task; the arguments are
 * checked where they are used, as passed ones are. */
hbg_status hbg_submit_task_bound(hbg_orch *o, const hbg_task *t, const hbg_bound *bd, hbg_task_id *id);

/* A task with no kernel: it exists for ordering (a barrier). */
hbg_status hbg_submit_dummy(hbg_orch *o, uint32_t ndeps, const hbg_task_id *deps,
                            hbg_task_id *id);

/* A kernel-less task that completes on the host and returns `n` tensors
 * carved from the GM heap. On entry each *ts[i] describes dtype and shape
 * and names no buffer (see hbg_tensor_desc; addr != 0 is
 * HBG_E_ARG_HAS_BUFFER); on return addr / nbytes / creator are filled. */
hbg_status hbg_alloc_tensors(hbg_orch *o, uint32_t n, hbg_tensor *const *ts, hbg_task_id *id);

typedef enum hbg_scope_mode {
    HBG_SCOPE_AUTO = 0,  /* dependencies inferred through the tensor map */
    HBG_SCOPE_MANUAL = 1 /* explicit deps only; writes are still registered */
} hbg_scope_mode;

/* Scopes nest; AUTO inside MANUAL is HBG_E_SCOPE. Outside a pass, like
 * the submits: HBG_E_STATE. A pass that ends with a scope open fails with
 * HBG_E_SCOPE. A Graph body's scopes are its own: ending one its caller
 * began, or returning with one of its own open, is HBG_E_SCOPE. */
hbg_status hbg_scope_begin(hbg_orch *o, hbg_scope_mode mode);
hbg_status hbg_scope_end(hbg_orch *o);

/* The first error a call returned in this pass (HBG_OK if none): lets an
 * orchestration function submit a whole program and check once. */
hbg_status hbg_orch_error(const hbg_orch *o);

/* That first error in words, naming the task (the id it would have had),
 * the argument or boundary slot and the reason, e.g.
 *   "task 12 arg 3: view [0, 4096) outside its 1024-byte buffer"
 *   "task 40 (graph key 0x2a) slot 2: shape[1] is 16, the Definition's 8"
 *   "task 3 arg 0: GM heap exhausted: 4096 bytes requested, 1024 free of 8192"
 * "" when the pass has no error. The submit path only stores the facts;
 * this call formats them, into storage the orchestrator owns that stays
 * valid until the next call to it or the next pass. */
const char *hbg_orch_last_error(const hbg_orch *o);

/* Fails the pass from the orchestration's own code, in its own words: for
 * what no hbg_ call refused (caller tensors it cannot use, a bound it could
 * not fill). `st` becomes the pass's error (HBG_OK is taken as
 * HBG_E_INVAL, a value that is no hbg_status as HBG_E_ORCH) and `fmt`,
 * printf-style, its text, so that
 *   return hbg_orch_fail(o, HBG_E_INVAL, "layer %u: %s", l, why);
 * ends the orchestration function and hbg_orch_last_error (and the pass
 * report) read "orchestration (40 tasks submitted): layer 3: ...", or
 * "graph key 0x2a body (3 nodes recorded): ..." from a body being
 * recorded. The text is formatted now, a failure path; the whole message
 * is cut to fit 255 bytes (at a whole character), control bytes in it
 * read '?', and a NULL or empty fmt gives the status's own text. As for
 * a refused call, a pass that has failed already keeps its first failure
 * (nothing is formatted). Returns st; HBG_E_STATE outside a pass,
 * HBG_E_INVAL for a NULL orchestrator. */
hbg_status hbg_orch_fail(hbg_orch *o, hbg_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Counts of this pass so far (host tasks in the window, GM bytes used). */
uint32_t hbg_orch_task_count(const hbg_orch *o);
uint64_t hbg_orch_heap_used(const hbg_orch *o);

/* Caller tensors bound to this pass (see hbg_program in runtime.h), NULL
 * past the last. The pointer is what hbg_arg.t takes: pass it straight to
 * a task or a Graph boundary, no copy needed. It points at the pass's own
 * description of the staged buffer (device address, layout), which the
 * runtime rebuilds from the program at the start of every pass and never
 * writes during one: the only argument that writes its tensor,
 * HBG_OUT_ALLOC, is refused for a tensor that names a buffer. A change the
 * orchestration makes to it (say, a narrower shape) lasts until the pass
 * ends; for a view, build one with hbg_tensor_view instead. */
uint32_t hbg_orch_nargs(const hbg_orch *o);
hbg_tensor *hbg_orch_arg(const hbg_orch *o, uint32_t i);

/* Per-rank facts the orchestration may need. (These getters, and the
 * counts and arguments above, give 0 or NULL for a NULL orchestrator.) */
uint32_t hbg_orch_rank(const hbg_orch *o);
uint32_t hbg_orch_nranks(const hbg_orch *o);

#ifdef __cplusplus
}
#endif
#endif
