/* synth — the insides shared by the case's files (and its tests).
 *
 * A parametric workload for measuring how bind grows with the graph: N
 * outer tasks, one Definition of M nodes replayed R times with B boundary
 * tensors, every task reading F earlier results. docs/case-synth.md has
 * the layout and the exact counts.
 */
#ifndef HBG_CASES_SYNTH_H
#define HBG_CASES_SYNTH_H

#include <stdint.h>

#include "case.h"

/* The parameters, in the order of hbg_case_synth.params. */
enum { SYN_P_TASKS = 0, SYN_P_NODES, SYN_P_REPLAYS, SYN_P_BOUNDARY, SYN_P_FANIN, SYN_P_BOUND, SYN_P_FAULT,
       SYN_NPARAMS };

#define SYN_ROW 4u            /* uint32 words per row: one task's result */
#define SYN_CHUNK_ROWS 128u   /* rows per scratch buffer */
#define SYN_ALLOC_BATCH 32u   /* scratch buffers per alloc_tensors task (HBG_MAX_ALLOC_TENSORS) */
#define SYN_IN_ROWS 64u       /* rows of the caller's input */
#define SYN_COLUMN_ROWS 64u   /* rows a chunk's first task reads down a column of the previous chunk */
#define SYN_MAX_FANIN 16u
/* The hard caps: the task window of one pass, and the GM heap. */
#define SYN_MAX_WINDOW (1u << 21)
#define SYN_MAX_HEAP (4ull << 30)
#define SYN_GRAPH_KEY 0x5e17c0deull

/* Kernel ids (a range no other case uses). */
enum { SYN_K_ROW_AIV = 300, SYN_K_NODE_AIC };

typedef struct syn_params {
    uint32_t tasks, nodes, replays, boundary, fanin;
    uint32_t bound; /* 1: each replay's tensors in a bound (hbg_bound) */
    uint32_t fault_round; /* a device pass (1: the first) whose result is made wrong; 0: none */
} syn_params;

typedef struct syn_counts {
    uint32_t chunks;          /* scratch buffers */
    uint32_t allocs;          /* alloc_tensors tasks */
    uint32_t window;          /* tasks in a pass: tasks + replays + allocs */
    uint64_t eager_window;    /* tasks of the eager golden run, where every
                                 replay's nodes run inline: tasks + allocs +
                                 replays x nodes */
    uint64_t heap_bytes;      /* GM heap a pass carves, with room to spare */
    uint32_t journal_calls;   /* tensor-map calls a pass makes, at most */
    uint64_t device_steps;    /* the steps a device run of a pass asks for, as
                                 the sim counts them: one a task of the window
                                 (every kernel task has one block) and one a
                                 replayed node, window + replays x nodes */
} syn_counts;

typedef struct syn_state {
    syn_params p;
    syn_counts n;
    uint32_t *in, *out;       /* caller memory */
    bool eager;               /* the golden's eager run is under way: no device pass */
    uint32_t device_passes;   /* orchestrations of device passes so far (for fault_round) */
    hbg_host_tensor args[2];
    /* Tensors the runtime fills in (the buffers alloc_tensors and OUT_ALLOC
     * give) and the pass reads later live here. A view the runtime only
     * reads is built on the stack: a submit copies what it keeps. */
    hbg_tensor *chunk;        /* [chunks] */
    hbg_tensor *outrow;       /* [replays + 1] */
    hbg_tensor *tmp;          /* [nodes]: the body's temporaries */
    /* With --bound 1: each replay's bound [replays], and what they were
     * built from (`out`, and the scratch buffers [chunks]); each outer
     * task's [tasks], and what they were built from (`in`, `out`, and the
     * scratch buffers as the chunk's tasks were built, chunk_seen). Two
     * copies of the scratch, not one: a pass that fails between the
     * tasks and the replays has moved the tasks' copy on, not the
     * replays' bounds. */
    hbg_bound **bounds;
    hbg_tensor *chunk_seen, *rchunk_seen, out_seen;
    bool bounds_built;
    hbg_bound **tbounds;
    hbg_tensor in_seen, tout_seen;
    bool tasks_built, prev_chunk_moved;
} syn_state;

syn_params syn_params_of(const hbg_case_env *env);
/* The pass's counts; HBG_E_INVAL with a one-line reason when p is past a
 * cap. */
hbg_status syn_count(const syn_params *p, syn_counts *n, char *msg, size_t cap);

/* The host memory a run needs, about, in its three parts (0 for a part
 * that does not run): the runtime and process, the device run, the eager
 * golden (which runs once the device has, after the first pass). */
typedef struct syn_memory {
    uint64_t runtime, device, golden;
} syn_memory;
syn_memory syn_host_bytes(const syn_params *p, const syn_counts *n, bool device, bool golden);
/* HBG_OK when their sum fits in what h says a run may use; else
 * HBG_E_NOMEM and a one-line reason (or syn_count's refusal). */
hbg_status syn_check_fits(const syn_params *p, const hbg_case_host *h, char *msg, size_t cap);
/* HBG_OK when a device run of a pass asks for at most max_steps steps;
 * else HBG_E_INVAL and a one-line reason (or syn_count's refusal). */
hbg_status syn_check_steps(const syn_params *p, uint64_t max_steps, char *msg, size_t cap);
/* HBG_OK when the eager golden of a pass runs in a window of at most
 * max_tasks tasks (its cap is SYN_MAX_WINDOW); else HBG_E_INVAL and a
 * one-line reason (or syn_count's refusal). */
hbg_status syn_check_golden(const syn_params *p, uint64_t max_tasks, char *msg, size_t cap);
/* The orchestration run eagerly into `out` ((replays + 1) x SYN_ROW
 * words) in a window of `window` tasks (the golden's is eager_window). */
hbg_status syn_eager(syn_state *s, const hbg_case_env *env, const hbg_kernel_table *kt, uint32_t window, uint32_t *out);

hbg_status syn_orchestrate(hbg_orch *o, void *ctx);
/* How many tensor arguments outer task i takes. */
uint32_t syn_task_args(const syn_state *s, uint32_t i);
hbg_status syn_register_kernels(hbg_kernel_table *kt);

extern const hbg_case hbg_case_synth;

#endif
