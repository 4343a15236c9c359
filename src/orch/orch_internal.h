/* The orchestrator's insides, shared by src/orch and the layers above it
 * (src/graph, src/bind).
 *
 * One hbg_orch lives as long as its runtime. Everything it will ever need
 * is allocated at creation: the host mirror of the task image (src/image)
 * and the tensor map; src/graph adds its recorder and Definition cache. A
 * pass resets counters and generations; no call between hbg__orch_begin_pass() and
 * hbg__orch_end_pass() allocates, locks or formats.
 */
#ifndef HBG_ORCH_INTERNAL_H
#define HBG_ORCH_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "hbg/graph.h"
#include "hbg/image.h"
#include "orch/opsample.h"
#include "orch/range.h"
#include "hbg/kernel.h"
#include "hbg/orch.h"
#include "hbg/trace.h"
#include "image/image.h"
#include "orch/opclock.h"
#include "orch/tensormap.h"
#include "trace/recticks.h"
#include "util/reserve.h"

#define HBG_MAX_SCOPE_DEPTH 32
#define HBG_HEAP_ALIGN 64u

/* Runs one submitted task the moment it is submitted (eager mode); the
 * task's records are read in place from the host mirror. */
typedef hbg_status (*hbg__task_runner)(void *ctx, uint32_t task, const hbg_img_task *t,
                                       const hbg_tensor *tensors, const uint64_t *scalars,
                                       const hbg_img_pred *preds);

typedef struct hbg__orch_config {
    uint32_t task_window;     /* 0: HBG_DEFAULT_TASK_WINDOW */
    uint64_t heap_base;       /* device (or host, when eager) address of the GM heap */
    uint64_t heap_bytes;
    bool eager;               /* run each task the moment it is submitted, through run_task */
    hbg__task_runner run_task;
    void *run_ctx;
    uint32_t rank, nranks;
    /* every tensor-map query walks the map: no journal (tensormap.h) */
    bool no_journal;
    uint32_t journal_calls;   /* 0: HBG_DEFAULT_JOURNAL_CALLS_PER_TASK a window task */
    /* read by src/graph only */
    bool keep_definitions;    /* reuse a Definition across passes when key and signature match */
    uint64_t def_pool_bytes;  /* 0: 64 MiB */
    /* When not NULL, a create refused for want of host memory sets
     * *nomem_part to the part it could not make ("the tensor map"): the
     * caller's message names it, and a static string needs no memory. */
    const char **nomem_part;
} hbg__orch_config;

/* What a layer above the orchestrator adds to it (src/graph installs one):
 * a Graph body being recorded turns submits into Definition nodes, and the
 * layer's own state follows the orchestrator's passes and lifetime. The
 * orchestrator calls through this table and never includes the layer. */
typedef struct hbg__orch_ext {
    void (*begin_pass)(hbg_orch *o);
    void (*destroy)(hbg_orch *o);
    hbg_status (*capture_task)(hbg_orch *o, const hbg_task *t, bool dummy, hbg_task_id *id);
    hbg_status (*capture_alloc)(hbg_orch *o, uint32_t n, hbg_tensor *const *ts, hbg_task_id *id);
    /* Notes (hbg__why_at) where a failure found before a call inside a
     * body reached the recorder lies: the node it would have made. */
    void (*locate_capture)(hbg_orch *o);
} hbg__orch_ext;

struct hbg__graph; /* src/graph's state; opaque here */

/* Buffers allocated inside a body being recorded live at REC_BASE + offset
 * in the replay's GM block: far above any user-space pointer, so they can
 * never be mistaken for a real device address, and a tensor that names one
 * outside the body it was recorded in is refused (orch.c, hbg__orch_check_view). */
#define HBG_REC_BASE 0xf000000000000000ull

/* Why a call failed, as facts: the code that finds a failure notes them
 * (hbg__why) and hbg__orch_fail keeps those of the pass's first failure.
 * Only hbg_orch_last_error() turns them into text, after the fact, so the
 * submit path never formats. */
typedef enum hbg__why_code {
    HBG_WHY_NONE = 0,     /* nothing noted: the status's own text */
    HBG_WHY_TOO_MANY,     /* n0 given, n1 the limit; n2: what (hbg__count) */
    HBG_WHY_CORE,         /* n0 core, n1 kernel_aic, n2 kernel_aiv */
    HBG_WHY_NULL_TENSOR,
    HBG_WHY_DIR,          /* n0 the direction */
    HBG_WHY_HAS_BUFFER,   /* n0 the address */
    HBG_WHY_NO_BUFFER,
    HBG_WHY_BAD_VIEW,     /* no byte range: n0 dtype, n1 ndim */
    HBG_WHY_VIEW_OUTSIDE, /* [n0, n1) of an n2-byte buffer */
    HBG_WHY_HEAP,         /* n0 requested, n1 free, n2 heap size */
    HBG_WHY_DEP,          /* dep n0 names n1; n2 tasks / nodes so far */
    HBG_WHY_WINDOW,       /* n0 the window */
    HBG_WHY_CAPTURE,      /* a tensor the body cannot express */
    HBG_WHY_NESTED,       /* a Graph inside a Graph body */
    HBG_WHY_B_COUNT,      /* tensors n0 / scalars n1 given; n2 / n3 recorded */
    HBG_WHY_B_DIR,        /* n0 given, n1 recorded */
    HBG_WHY_B_DTYPE,      /* n0 given, n1 recorded */
    HBG_WHY_B_NDIM,       /* n0 given, n1 recorded */
    HBG_WHY_B_SHAPE,      /* dim n2: n0 given, n1 recorded */
    HBG_WHY_B_STRIDE,     /* dim n2: n0 given, n1 recorded */
    HBG_WHY_B_ALIAS,      /* shares n0's buffer (n0 = -1: none) where the
                             recording shared n1's (n1 = -1: none) */
    HBG_WHY_B_ALIAS_AT,   /* lies n1 bytes from slot n0 in their buffer,
                             the recording n2 bytes */
    HBG_WHY_KEY_BODY,     /* another body function */
    HBG_WHY_KEY_CONTENT,  /* the same function, other content */
    HBG_WHY_SCOPE_OPEN,   /* the pass ended with n0 scopes open; n1: in a Graph body */
    HBG_WHY_PRED_NO_BUFFER, /* the predicate's tensor has addr 0 */
    HBG_WHY_REC_BUFFER,   /* n0: a body's own buffer, used outside it */
    HBG_WHY_NULL_ARRAY,   /* n1 items of kind n0 (hbg__count) but a NULL array */
    HBG_WHY_NULL_INPUT,   /* n0: 0 the task, 1 the tensor list, 2 the body function, 3 the bound,
                             4 the boundary */
    HBG_WHY_BOUND_REST,   /* a bound call's `rest` (n1 0) or task (n1 1) has tensors:
                             n0 of them, or 0 and a list */
    HBG_WHY_SCOPE_MODE,   /* n0 the mode given */
    HBG_WHY_PRED,         /* the predicate: n0 what (hbg__pred_fault), n1, n2 */
    HBG_WHY_SCALAR_SLOT,  /* scalar n0 marked boundary scalar n1; n2 the body's
                             boundary scalars, -1 outside any body */
    HBG_WHY_SCOPE,        /* n0: 0 nested past n1 scopes, 1 AUTO inside MANUAL,
                             2 an end with no scope open */
    HBG_WHY_USER,         /* hbg_orch_fail: the fault's `text` */
    HBG_WHY_GRAPH_FLAGS,  /* n0 the flags given, n1 the bits no flag has */
    HBG_WHY_KEPT_WRITE,   /* n0 the caller index of the persistent IN written */
    HBG_WHY_IN_SLOT_WRITE, /* a body writes what boundary slot n0 (and any other holding it) passes as HBG_IN */
    HBG_WHY_POOL,         /* pool n0 (hbg__pool) is full; n1 its size */
    HBG_WHY_BODY_DEP,     /* an eager body's dep n0 names n1, before its first task n2 */
} hbg__why_code;

/* A bound (bound.c): its tensors, the arguments that point at them, and
 * the stamp of what it holds now (never 0, never reused). */
struct hbg_bound {
    uint64_t stamp;
    uint32_t n;
    hbg_tensor *tensors;
    hbg_arg *args;
};
/* A new stamp for what bd holds. */
void hbg__bound_restamp(hbg_bound *bd);

typedef enum hbg__count {
    HBG_COUNT_TENSORS,
    HBG_COUNT_SCALARS,
    HBG_COUNT_DEPS,
    HBG_COUNT_BTENSORS,
    HBG_COUNT_BSCALARS,
    HBG_COUNT_BLOCKS,
    HBG_COUNT_ALLOCS
} hbg__count;

/* The fixed-size pools behind HBG_E_POOL_EXHAUSTED and
 * HBG_E_DEF_POOL_FULL (HBG_WHY_POOL): one status each for several pools,
 * so the words say which one filled. */
typedef enum hbg__pool { HBG_POOL_MAP_ENTRIES, HBG_POOL_MAP_BUFFERS, HBG_POOL_MAP_COPIES, HBG_POOL_DEF_NODES,
                         HBG_POOL_DEF_KEYS, HBG_POOL_DEF_IMAGES } hbg__pool;

typedef enum hbg__pred_fault {
    HBG_PRED_NO_TENSOR,   /* no tensor */
    HBG_PRED_ELEM_SIZE,   /* n1 the size */
    HBG_PRED_OP,          /* n1 the op */
    HBG_PRED_OUTSIDE,     /* n1 the byte offset, n2 the buffer's size */
} hbg__pred_fault;

typedef enum hbg__where {
    HBG_AT_TASK = 0, /* task `task` of the window (the id it would have had) */
    HBG_AT_GRAPH,    /* the outer task `task` of a Graph call under `key` */
    HBG_AT_NODE      /* node `task` of the body recorded under `key` */
} hbg__where;

typedef struct hbg__fault {
    hbg_status st;
    uint8_t why;     /* an hbg__why_code */
    uint8_t where;   /* an hbg__where */
    bool located;    /* where / task / key were set by the noting layer */
    int32_t arg;     /* argument index or boundary slot; -1: none */
    uint32_t task;
    uint64_t key;
    int64_t n[4];
    const char *text; /* HBG_WHY_USER: the orchestration's words, in one of utext (hbg_orch_fail) */
} hbg__fault;

/* Per-op statistics for the `host-orch phase=` lines (opsample.h: which
 * operations are timed). */
typedef struct hbg__opstat {
    uint64_t total_ns; /* the timed ones' sum, in the clock's readings until
                          the pass ends; then the kind's estimated total */
    uint64_t count, detail_sum;
    uint64_t timed;
    uint32_t skip;     /* operations until the next timed one, this included */
    uint32_t period;   /* this pass's: one timed in each block of `period` */
    uint32_t at;       /* the place of the last timed one in its block */
} hbg__opstat;

#define HBG_ORCH_MAX_KEPT 256

struct hbg_orch {
    hbg__orch_config cfg;
    uint32_t window;

    /* the pass */
    uint64_t pass;             /* 1-based pass number; 0 before the first */
    bool in_pass;
    hbg_status err;            /* first error of this pass */
    bool err_held;             /* the pass failed before the body now running (hbg__err_take holds it) */
    hbg__fault fault;          /* its facts */
    hbg__fault why;            /* facts of the failure being returned now */
    char *msg;                 /* hbg_orch_last_error's text, HBG_ORCH_MSG_MAX bytes */
    /* hbg_orch_fail's texts, HBG_ORCH_MSG_MAX bytes each: the next one is
     * written into the one `fault.text` does not name. Two, because a
     * Graph body run inline fails with a clean slate (hbg__err_take, which
     * leaves `fault` in place) while the pass's first failure, maybe one
     * of these, waits to be put back; bodies do not nest, so one level is
     * all there is. */
    char *utext[2];
    uint64_t heap_used;
    hbg_tensor *args;          /* caller tensors of this pass (hbg_orch_arg) */
    uint32_t nargs;
    /* The caller tensors kept on the device (persistent INs: staged once,
     * not again while unchanged), by buffer address, with their caller
     * index: a task or replay slot that writes one is refused, as its
     * write would outlive the pass (hbg__orch_set_kept). kept_bloom: one
     * bit per address (hbg__kept_bit), so that the check of a written
     * argument is one test where nothing is kept. */
    uint64_t kept_addr[HBG_ORCH_MAX_KEPT];
    uint32_t kept_arg[HBG_ORCH_MAX_KEPT];
    uint32_t nkept;
    uint64_t kept_bloom;

    /* the task image's host mirror */
    hbg__image img;
    uint64_t *task_stamp;      /* fanin de-duplication, one per window slot */
    uint64_t stamp;

    /* dependency inference */
    hbg__tmap map;
    /* the task memo (taskmemo.h): one note per window slot, NULL without
     * a journal; notes of passes before memo_from are void */
    struct hbg__memo *memo;
    hbg_tensor *memo_preds;    /* a predicate's tensor, per predicate slot */
    uint64_t *memo_bound;      /* per window slot: the noted task's bound stamp, 0 for none */
    uint64_t memo_from;
    uint64_t memo_hits;        /* submits answered from it, ever (tests) */
    uint8_t scope_mode[HBG_MAX_SCOPE_DEPTH];
    uint32_t scope_depth;
    uint32_t manual_depth;     /* number of MANUAL scopes open */
    uint32_t scope_floor;      /* scopes below it are a Graph body's caller's: not its to end */

    /* Graphs: the boundary of the body now running (recorded or inline),
     * whether it is being recorded, and the layer that records it */
    const hbg_boundary *body;
    uint64_t body_heap0; /* heap_used when the body running inline began */
    uint32_t body_task0; /* and img.ntasks */
    bool capturing;
    const hbg__orch_ext *ext;
    struct hbg__graph *graph;

    /* instrumentation (off: zero cost beyond one branch) */
    bool timing;
    hbg__opclock clock;
    hbg_recpool *recpool;
    hbg__opstat ops[HBG_OP_COUNT];
    hbg__opmean opmean[HBG_OP_COUNT]; /* across passes: each kind's recent timed ones */
    uint64_t op_rng;           /* the sample's generator (opsample.h) */
};

/* What every submit checks first. A NULL *id becomes `spare` (the caller
 * does not want the id), and the id is HBG_TASK_NONE until the submit
 * makes its task. */
static inline hbg_status hbg__submit_begins(const hbg_orch *o, hbg_task_id **id, hbg_task_id *spare)
{
    if (!*id)
        *id = spare;
    **id = HBG_TASK_NONE;
    if (!o)
        return HBG_E_INVAL;
    return o->in_pass ? HBG_OK : HBG_E_STATE;
}

/* Appends `from` to the fanin list of the task or node being built (its
 * count in *cnt, the shared list and its length in list / *nlist) unless
 * it is listed already. stamp[from] == cur marks "listed": each task or
 * node takes a fresh cur, so the stamp array is valid without clearing.
 * The window's tasks and a Definition's nodes both build their lists so. */
static inline hbg_status hbg__fanin_add(uint64_t *stamp, uint64_t cur, uint32_t *list, uint32_t *nlist,
                                        uint32_t *cnt, uint32_t from)
{
    if (stamp[from] == cur)
        return HBG_OK;
    if (*cnt >= HBG_MAX_FANINS)
        return HBG_E_TOO_MANY_FANINS;
    stamp[from] = cur;
    list[(*nlist)++] = from;
    (*cnt)++;
    return HBG_OK;
}

/* A bare orchestrator: tasks only. src/graph's hbg__graph_orch_create() makes
 * one with Graphs. */
hbg_status hbg__orch_create(const hbg__orch_config *cfg, hbg_orch **out);
/* Destroys the orchestrator and whatever its extension holds. */
void hbg__orch_destroy(hbg_orch *o);

/* Starts a pass: empties the window and the tensor map, and lets the
 * extension start its pass. `heap_base` may move between passes. */
void hbg__orch_begin_pass(hbg_orch *o, uint64_t heap_base, hbg_tensor *args, uint32_t nargs);
/* The next pass's kept caller tensors (n at most HBG_ORCH_MAX_KEPT): the
 * buffer addresses and the caller index of each. Called before
 * hbg__orch_begin_pass; a set other than the last voids the task and
 * replay memos, whose answers skip the check. */
void hbg__orch_set_kept(hbg_orch *o, const uint64_t *addr, const uint32_t *arg, uint32_t n);

static inline unsigned hbg__kept_bit(uint64_t addr)
{
    return (unsigned)(((addr >> 6) * 0x9e3779b97f4a7c15ull) >> 58);
}

/* Ends it, and with it the operation clock's pass; returns the pass's
 * first error. */
hbg_status hbg__orch_end_pass(hbg_orch *o);
/* Begin and end for a caller that times the orchestration with its own
 * CLOCK_MONOTONIC reads: with records armed, hbg__orch_clock_read makes
 * each of them an anchor of the operation clock and the _at forms take the
 * pair instead of reading the clock again; otherwise it is a plain read,
 * and the pass is anchored outside the caller's two reads (orch.c). */
uint64_t hbg__orch_clock_read(const hbg_orch *o, uint64_t *tick);
void hbg__orch_open_clock_at(hbg_orch *o, uint64_t tick, uint64_t mono);
hbg_status hbg__orch_end_pass_at(hbg_orch *o, uint64_t tick, uint64_t mono);
/* What the orchestration function (or a Graph body) returned, as a
 * status: a value that is no hbg_status (the program's own code, 999)
 * fails the pass as HBG_E_ORCH in words, where it was passed on for
 * hbg_strerror to call "unknown status". Called while the pass is open. */
hbg_status hbg__orch_returned(hbg_orch *o, hbg_status ost, bool body);

/* Instrumentation switches for the next passes. */
void hbg__orch_set_timing(hbg_orch *o, bool on, hbg_recpool *records);

/* Internal helpers shared with src/graph. */

#define HBG_ORCH_MSG_MAX 256

/* Notes the facts of a failure about to be returned (argument or slot
 * `arg`, -1 for none). Failure paths only: a few stores, no text. */
static inline void hbg__why(hbg_orch *o, hbg__why_code why, int32_t arg, int64_t n0, int64_t n1, int64_t n2)
{
    o->why.why = (uint8_t)why;
    o->why.arg = arg;
    o->why.n[0] = n0, o->why.n[1] = n1, o->why.n[2] = n2;
}

/* Notes a view hbg__byte_range refused (HBG_WHY_BAD_VIEW), n2 1 when the
 * reason is a range past 64 bits, which the text names apart: told on
 * the failure path, from the tensor, which is gone by the time the text
 * is formatted. */
void hbg__why_bad_view(hbg_orch *o, int32_t arg, const hbg_tensor *t);

/* Notes which part of map `m` refused n writes (HBG_WHY_POOL). */
void hbg__why_map_full(hbg_orch *o, const hbg__tmap *m, uint32_t n);

/* Whether argument or slot i, of direction dir on buffer addr, writes a
 * kept caller tensor: noted (HBG_WHY_KEPT_WRITE), for the caller to refuse. */
static inline bool hbg__orch_writes_kept(hbg_orch *o, uint8_t dir, uint64_t addr, int32_t i)
{
    if ((dir != HBG_OUT && dir != HBG_INOUT) || !((o->kept_bloom >> hbg__kept_bit(addr)) & 1))
        return false;
    for (uint32_t k = 0; k < o->nkept; k++)
        if (o->kept_addr[k] == addr) {
            hbg__why(o, HBG_WHY_KEPT_WRITE, i, o->kept_arg[k], 0, 0);
            return true;
        }
    return false;
}
/* An array of n items of `kind` (hbg__count), as a task or a Graph call
 * gives it: NULL only when n is 0. Notes what is wrong. */
static inline bool hbg__array_ok(hbg_orch *o, hbg__count kind, uint32_t n, const void *p)
{
    if (n && !p) {
        hbg__why(o, HBG_WHY_NULL_ARRAY, -1, kind, n, 0);
        return false;
    }
    return true;
}
/* Explicit deps, as a task or a Graph call gives them: at most
 * HBG_MAX_FANINS, in an array. */
static inline hbg_status hbg__deps_ok(hbg_orch *o, uint32_t ndeps, const hbg_task_id *deps)
{
    if (ndeps > HBG_MAX_FANINS) {
        hbg__why(o, HBG_WHY_TOO_MANY, -1, ndeps, HBG_MAX_FANINS, HBG_COUNT_DEPS);
        return HBG_E_TOO_MANY_FANINS;
    }
    return hbg__array_ok(o, HBG_COUNT_DEPS, ndeps, deps) ? HBG_OK : HBG_E_INVAL;
}
/* Forgets noted facts: a failure that was handled (a Graph falling back)
 * must not lend them to a later one. */
static inline void hbg__why_clear(hbg_orch *o)
{
    memset(&o->why, 0, sizeof o->why);
    o->why.arg = -1;
}
/* Says where the failure being returned happened (else: the window task
 * the call would have made). */
static inline void hbg__why_at(hbg_orch *o, hbg__where where, uint32_t task, uint64_t key)
{
    o->why.located = true;
    o->why.where = (uint8_t)where;
    o->why.task = task;
    o->why.key = key;
}
/* The facts in words, as hbg_orch_last_error gives them (cold). */
void hbg__fault_format(const hbg__fault *f, char *buf, size_t cap);
/* Keeps `st` (and the facts noted for it) when it is the pass's first
 * failure; forgets the noted facts either way. Returns st. */
hbg_status hbg__orch_fail(hbg_orch *o, hbg_status st);
/* Runs a Graph body with its caller's scopes out of its reach: ending one
 * is refused, and the scopes it leaves open are a failure (and closed). */
hbg_status hbg__orch_call_body(hbg_orch *o, hbg_graph_body body, void *ctx, const hbg_boundary *b);
/* The first failure's facts and status, saved around a Graph body that
 * runs with a clean slate and put back if the pass had failed before. */
typedef struct hbg__err_state {
    hbg_status err;
    hbg__fault fault;
} hbg__err_state;
static inline hbg__err_state hbg__err_take(hbg_orch *o)
{
    hbg__err_state s = {o->err, o->fault};
    o->err = HBG_OK;
    o->err_held = s.err != HBG_OK;
    return s;
}
static inline void hbg__err_restore(hbg_orch *o, hbg__err_state s)
{
    o->err_held = false;
    if (s.err) {
        o->err = s.err;
        o->fault = s.fault;
    }
}
hbg_status hbg__orch_heap_alloc(hbg_orch *o, uint64_t bytes, uint64_t *addr);
/* Adds the fanins of an input region and returns through the de-dup.
 * `dense`: what the caller knows of the view's contiguity (tensormap.h). */
hbg_status hbg__orch_task_reads(hbg_orch *o, uint32_t task, const hbg_tensor *t, uint64_t lo, uint64_t hi,
                               uint8_t dense);
hbg_status hbg__orch_task_writes(hbg_orch *o, uint32_t task, const hbg_tensor *t, uint64_t lo, uint64_t hi,
                                uint8_t dense, uint8_t dir);
hbg_status hbg__orch_add_fanin(hbg_orch *o, uint32_t task, uint32_t pred);
/* Whether an argument of this direction writes its tensor (and so is
 * registered in the tensor map). */
static inline bool hbg__dir_writes(uint8_t dir)
{
    return dir == HBG_OUT_ALLOC || dir == HBG_INOUT || dir == HBG_OUT;
}
/* A view's byte range, computed once per argument and reused. */
typedef struct hbg__range {
    uint64_t lo, hi;
} hbg__range;
/* Checks a task before anything is written; fills rng[i] for every non-OUT
 * argument and rng[HBG_MAX_TASK_TENSORS] for the predicate tensor. */
hbg_status hbg__orch_validate_task(hbg_orch *o, const hbg_task *t, bool dummy, hbg__range *rng);
/* A task or node refused after it passed validation gives back the buffers
 * it allocated: its HBG_OUT_ALLOC tensors, which named no buffer on entry,
 * name none again, so the same submit can be offered anew. */
static inline void hbg__orch_release_allocs(const hbg_arg *args, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (args[i].dir == HBG_OUT_ALLOC)
            args[i].t->addr = 0, args[i].t->creator = 0;
}
/* A view argument (index i) inside its buffer; fills *r. */
hbg_status hbg__orch_check_view(hbg_orch *o, const hbg_tensor *t, int32_t i, hbg__range *r);
/* A tensor to allocate (index i): a description without a buffer. */
hbg_status hbg__orch_check_alloc(hbg_orch *o, const hbg_tensor *t, int32_t i, uint64_t *lo, uint64_t *hi);
/* Starts a new task in the window; the caller fills the rest. */
hbg_status hbg__orch_new_task(hbg_orch *o, uint8_t kind, uint32_t *id);

/* Starts an operation of kind `op`: its first clock reading when it is
 * one the breakdown times (opsample.h), else 0 (no reading is 0: the TSC
 * and CLOCK_MONOTONIC both count from boot). The untimed path is a
 * decrement and a branch. */
uint64_t hbg__op_sample(hbg_orch *o, hbg__opstat *s);
static inline uint64_t hbg__op_begin(hbg_orch *o, hbg_phase op)
{
    if (!o->timing)
        return 0;
    hbg__opstat *s = &o->ops[op - HBG_SEGMENT_COUNT];
    if (--s->skip)
        return 0;
    return hbg__op_sample(o, s);
}
/* The record of one timed operation (when records are armed). */
void hbg__op_record(hbg_orch *o, hbg_phase op, uint64_t t0, uint64_t t1, uint64_t detail);
/* Ends an operation hbg__op_begin started (call only when o->timing).
 * Inline, with the clock read and the totals in the caller: the timing is
 * what the breakdown switch costs, and a call per operation was a
 * measurable share of it. Readings stay in the clock's units until the
 * pass closes (opclock.h). */
static inline void hbg__op_end(hbg_orch *o, hbg_phase op, uint64_t t0, uint64_t detail)
{
    hbg__opstat *s = &o->ops[op - HBG_SEGMENT_COUNT];
    s->count++;
    s->detail_sum += detail;
    if (!t0)
        return;
    uint64_t t1 = hbg__opclock_now(&o->clock);
    s->total_ns += t1 - t0;
    s->timed++;
    if (o->recpool)
        hbg__op_record(o, op, t0, t1, detail);
}

#endif
