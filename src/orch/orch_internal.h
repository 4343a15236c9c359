/* The orchestrator's insides, shared by src/orch, src/graph and src/bind.
 *
 * One hbg_orch lives as long as its runtime. Everything it will ever need
 * is allocated at creation: the host mirror (one worst-case array per image
 * section), the tensor maps, the Definition builder and cache. A pass resets
 * counters and generations; no call between hbg_orch_begin_pass() and
 * hbg_orch_end_pass() allocates, locks or formats.
 */
#ifndef HBG_ORCH_INTERNAL_H
#define HBG_ORCH_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "bind/image.h"
#include "graph/def_image.h"
#include "hbg/graph.h"
#include "hbg/kernel.h"
#include "hbg/orch.h"
#include "hbg/trace.h"
#include "orch/opclock.h"
#include "orch/tensormap.h"

#define HBG_MAX_SCOPE_DEPTH 32
#define HBG_DEF_CACHE_CAP 64
#define HBG_HEAP_ALIGN 64u

typedef struct hbg_orch_config {
    uint32_t task_window;     /* 0: HBG_DEFAULT_TASK_WINDOW */
    uint64_t heap_base;       /* device (or host, when eager) address of the GM heap */
    uint64_t heap_bytes;
    bool keep_definitions;    /* reuse a Definition across passes when key and signature match */
    bool eager;               /* run each task's kernel the moment it is submitted */
    const hbg_kernel_table *kernels; /* eager mode */
    void *services;           /* eager mode: passed to kernels */
    uint32_t rank, nranks;
    uint64_t def_pool_bytes;  /* 0: 64 MiB */
} hbg_orch_config;

/* One slot of a boundary signature. A replay whose slot matches the layout
 * differs from the recording only in addr, nbytes and offset, so the extent
 * is kept here and its byte range costs a few checked operations instead
 * of a walk over the dimensions. */
typedef struct hbg_bslot {
    int64_t strides[HBG_MAX_DIMS];
    uint64_t extent;          /* sum of (shape[d] - 1) * strides[d], in elements */
    uint32_t shape[HBG_MAX_DIMS];
    uint8_t ndim, dtype, dir;
    uint8_t esize;            /* 0: the layout has no valid byte range */
    uint16_t alias;           /* first slot on the same buffer, or self */
} hbg_bslot;

/* The signature a replay's boundary must match. */
typedef struct hbg_bsig {
    uint32_t nbt, nbs;
    hbg_bslot slot[HBG_MAX_BOUNDARY_TENSORS];
} hbg_bsig;

typedef struct hbg_def_entry {
    uint64_t key;
    uint64_t pass;            /* pass that recorded it (or kept it) */
    const hbg_def_header *img;/* inside the def pool */
    hbg_bsig sig;
    uint32_t deftab_stamp_pass; /* deftab index valid when == current pass */
    uint32_t deftab_index;
    hbg_def_info info;
} hbg_def_entry;

/* An entry of the boundary address table. Entries whose stamp is not the
 * table's current one are empty, so starting a new boundary clears nothing. */
typedef struct hbg_btab_ent {
    uint64_t addr;
    uint32_t stamp;
    uint16_t slot, last;      /* first and last boundary slot on the buffer */
} hbg_btab_ent;

#define HBG_BTAB_SIZE (2 * HBG_MAX_BOUNDARY_TENSORS) /* power of two, under half full */

/* The node builder used while a Graph body is being recorded. */
typedef struct hbg_recorder {
    bool active;
    const hbg_boundary *b;
    uint64_t heap_used;                 /* recording-local GM block */
    uint32_t nnodes, nfanin, ntarg, nsarg, npred;
    hbg_def_node *nodes;                /* HBG_MAX_DEF_NODES */
    uint32_t *fanins;                   /* HBG_MAX_DEF_NODES * HBG_MAX_FANINS */
    hbg_def_targ *targs;                /* HBG_MAX_DEF_NODES * HBG_MAX_TASK_TENSORS */
    hbg_def_sarg *sargs;                /* HBG_MAX_DEF_NODES * HBG_MAX_TASK_SCALARS */
    hbg_def_pred *preds;                /* HBG_MAX_DEF_NODES */
    hbg_tensor *views;                  /* the writer views the record map points at */
    uint64_t *node_stamp;               /* fanin de-duplication */
    uint64_t stamp_node;
    uint32_t nviews;
    hbg_tmap map;                       /* writers inside the body, by node id */
    /* boundary buffer lookup: addr -> first slot, chained through bnext;
     * replays use the table alone, to find buffers their signature says
     * are distinct but are not */
    hbg_btab_ent btab[HBG_BTAB_SIZE];
    uint16_t bnext[HBG_MAX_BOUNDARY_TENSORS];
    uint32_t bstamp;
} hbg_recorder;

/* Per-op statistics for the `host-orch phase=` lines. */
typedef struct hbg_opstat {
    uint64_t total_ns, count, detail_sum;
} hbg_opstat;

struct hbg_orch {
    hbg_orch_config cfg;
    uint32_t window;

    /* the pass */
    uint64_t pass;             /* 1-based pass number; 0 before the first */
    bool in_pass;
    hbg_status err;            /* first error of this pass */
    uint64_t heap_used;
    const hbg_tensor *args;    /* caller tensors of this pass */
    uint32_t nargs;

    /* host mirror: live counts, worst-case capacity */
    uint32_t ntasks, nfanin, ntensor, nscalar, npred, nreplay, nbtensor, nbscalar, ndeftab;
    hbg_img_task *tasks;
    uint32_t *fanins;
    hbg_tensor *tensors;
    uint64_t *scalars;
    hbg_img_pred *preds;
    hbg_img_replay *replays;
    hbg_img_btensor *btensors;
    uint64_t *bscalars;
    hbg_img_def *deftab;
    uint32_t *deftab_entry;    /* deftab index -> def cache index */
    uint64_t *task_stamp;      /* fanin de-duplication, one per window slot */
    uint64_t stamp;

    /* dependency inference */
    hbg_tmap map;
    uint8_t scope_mode[HBG_MAX_SCOPE_DEPTH];
    uint32_t scope_depth;
    uint32_t manual_depth;     /* number of MANUAL scopes open */

    /* Graphs */
    const hbg_boundary *body_boundary; /* a body running as ordinary tasks */
    hbg_recorder rec;
    hbg_def_entry defs[HBG_DEF_CACHE_CAP];
    uint32_t ndefs;
    unsigned char *def_pool;
    uint64_t def_pool_used, def_pool_cap;
    uint32_t defs_built;       /* this pass */
    uint32_t fallbacks;        /* this pass: bodies run as ordinary tasks */

    /* instrumentation (off: zero cost beyond one branch) */
    bool timing;
    hbg_opclock clock;
    hbg_recpool *recpool;
    hbg_opstat ops[HBG_OP_COUNT];

    /* eager mode: scratch for resolved kernel arguments */
    hbg_tensor eager_tensors[HBG_MAX_TASK_TENSORS];
};

hbg_status hbg_orch_create(const hbg_orch_config *cfg, hbg_orch **out);
void hbg_orch_destroy(hbg_orch *o);

/* Starts a pass: empties the window, the tensor map and (unless Definitions
 * are kept) the Definition cache. `heap_base` may move between passes. */
void hbg_orch_begin_pass(hbg_orch *o, uint64_t heap_base, const hbg_tensor *args, uint32_t nargs);
/* Ends it; returns the pass's first error. */
hbg_status hbg_orch_end_pass(hbg_orch *o);

/* Instrumentation switches for the next passes. */
void hbg_orch_set_timing(hbg_orch *o, bool on, hbg_recpool *records);

/* Internal helpers shared with src/graph. */
hbg_status hbg_orch_fail(hbg_orch *o, hbg_status st);
hbg_status hbg_orch_heap_alloc(hbg_orch *o, uint64_t bytes, uint64_t *addr);
/* Adds the fanins of an input region and returns through the de-dup. */
hbg_status hbg_orch_task_reads(hbg_orch *o, uint32_t task, const hbg_tensor *t, uint64_t lo, uint64_t hi);
hbg_status hbg_orch_task_writes(hbg_orch *o, uint32_t task, const hbg_tensor *t, uint64_t lo, uint64_t hi,
                                uint8_t dir);
hbg_status hbg_orch_add_fanin(hbg_orch *o, uint32_t task, uint32_t pred);
/* A view's byte range, computed once per argument and reused. */
typedef struct hbg_range {
    uint64_t lo, hi;
} hbg_range;
/* Checks a task before anything is written; fills rng[i] for every non-OUT
 * argument and rng[HBG_MAX_TASK_TENSORS] for the predicate tensor. */
hbg_status hbg_orch_validate_task(const hbg_orch *o, const hbg_task *t, bool dummy, hbg_range *rng);
/* Starts a new task in the window; the caller fills the rest. */
hbg_status hbg_orch_new_task(hbg_orch *o, uint8_t kind, uint32_t *id);

static inline uint64_t hbg_op_begin(hbg_orch *o)
{
    return o->timing ? hbg_opclock_now(&o->clock) : 0;
}
void hbg_op_end(hbg_orch *o, hbg_phase op, uint64_t t0, uint64_t detail);

/* Graph parts, in src/graph. */
void hbg_graph_begin_pass(hbg_orch *o);
hbg_status hbg_record_task(hbg_orch *o, const hbg_task *t, bool dummy, hbg_task_id *id);
hbg_status hbg_record_alloc(hbg_orch *o, uint32_t n, hbg_tensor *const *ts, hbg_task_id *id);

/* Eager execution of one submitted task (src/orch/eager.c). */
hbg_status hbg_eager_run_task(hbg_orch *o, uint32_t task);

#endif
