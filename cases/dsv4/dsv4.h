/* dsv4 — the insides shared by the case's files (and its tests).
 *
 * Everything is uint32 words: kernels mix integers, so results are exact
 * and a device run must match the eager golden bit for bit.
 */
#ifndef HBG_CASES_DSV4_H
#define HBG_CASES_DSV4_H

#include <stdbool.h>
#include <stdint.h>

#include "case.h"

/* Scaled-down model. */
#define DSV4_T 4          /* decode tokens per rank */
#define DSV4_D 32         /* hidden */
#define DSV4_NS 4         /* hyper-connection streams */
#define DSV4_E 64         /* routed experts (all ranks) */
#define DSV4_K 6          /* experts per token */
#define DSV4_RANKS 2
#define DSV4_EL (DSV4_E / DSV4_RANKS) /* experts per rank */
#define DSV4_R (DSV4_RANKS * DSV4_T)  /* rows an expert can receive */
#define DSV4_F 8          /* expert weight rows */
#define DSV4_LAYERS 43
#define DSV4_PAIRS 20   /* layers 2..41: replays of the layer-pair Graph */
#define DSV4_VL 48        /* vocabulary columns per rank (LM head, TP) */
#define DSV4_V (DSV4_VL * DSV4_RANKS)
#define DSV4_CACHE 16     /* cache positions per layer */
#define DSV4_WR 12        /* rows of a per-layer weight slice (x D) */
#define DSV4_GROUPS 4     /* expert weights reach a Graph in groups of 8 */
#define DSV4_LANES 20     /* most attention projections of any block */
#define DSV4_NX 5         /* extra (compressor / indexer) weights */

/* Cross-rank window: one slot per epoch modulo DSV4_SLOTS. */
#define DSV4_SLOTS 8
#define DSV4_SLOT_BYTES (DSV4_EL * DSV4_R * DSV4_D * 4)
#define DSV4_WINDOW_BYTES ((uint64_t)DSV4_SLOTS * DSV4_SLOT_BYTES)

/* Kernel ids (a range no other case uses). */
enum {
    DSV4_K_GEN_AIC = 200, /* generic mixing, cube */
    DSV4_K_GEN_AIV,       /* generic mixing, vector */
    DSV4_K_MIX_AIV,       /* the AIV half of a MIX task */
    DSV4_K_ROUTE,
    DSV4_K_DISPATCH_META,
    DSV4_K_PUSH,
    DSV4_K_WAIT,
    DSV4_K_GATHER,
    DSV4_K_PERMUTE,
    DSV4_K_MERGE,
    DSV4_K_ARGMAX,
    DSV4_K_SAMPLE,
    DSV4_K_END
};

/* Generic-kernel descriptor (scalar 0): counts of IN, INOUT and OUT
 * tensors, flags, and a per-task salt. */
#define DSV4_DESC(nin, nio, nout, flags, salt)                                                      \
    ((uint64_t)(nin) | (uint64_t)(nio) << 8 | (uint64_t)(nout) << 16 | (uint64_t)(flags) << 24 |    \
     (uint64_t)(uint32_t)(salt) << 32)
#define DSV4_FLAG_HASH_ROUTE 1u

/* Caller tensors, in program order. */
enum {
    A_TOKENS, A_EMBED, A_ROPE_COS, A_ROPE_SIN, A_POS,
    A_SWA_KV, A_CSA_KV, A_CSA_IDX, A_HCA_KV,
    A_AW_HC, A_AW_NORM, A_AW_LANE0,
    A_AW_SINK = A_AW_LANE0 + DSV4_LANES, A_AW_WO, A_AW_HCPOST, A_AW_X0,
    A_MW_HCFN = A_AW_X0 + DSV4_NX, A_MW_NORM, A_MW_GATE, A_MW_GATEB, A_MW_SH1, A_MW_SH3, A_MW_SH2, A_MW_HCPOST,
    A_MW_EX1, A_MW_EX3, A_MW_EX2, A_MW_S1, A_MW_S2,
    A_FINAL_NORM, A_HC_HEAD, A_LM_HEAD,
    A_OUT_LOGITS, A_OUT_RESULT,
    A_COUNT
};

/* Boundary of the layer-pair Graph: 113 IN, then 5 INOUT. */
enum {
    B_H_IN, B_ROPE_COS, B_ROPE_SIN, B_POS,
    B_CSA, /* hc, norm, 20 lanes, sink, wo, hcpost, 5 extras */
    B_HCA = B_CSA + 2 + DSV4_LANES + 3 + DSV4_NX, /* hc, norm, 16 lanes, sink, wo, hcpost, 2 extras: 23 */
    B_M1 = B_HCA + 23, /* 28 per MoE block */
    B_M2 = B_M1 + 28,
    B_NIN = B_M2 + 28,
    B_H_OUT = B_NIN, B_CSA_KV, B_CSA_IDX, B_HCA_KV, B_LOAD,
    B_COUNT
};
/* Offsets inside a MoE part. */
enum {
    BM_HCFN, BM_NORM, BM_GATE, BM_GATEB, BM_SH1, BM_SH3, BM_SH2, BM_HCPOST,
    BM_EX1, BM_EX3 = BM_EX1 + DSV4_GROUPS, BM_EX2 = BM_EX3 + DSV4_GROUPS, BM_S1 = BM_EX2 + DSV4_GROUPS,
    BM_S2 = BM_S1 + DSV4_GROUPS, BM_COUNT = BM_S2 + DSV4_GROUPS
};
/* Boundary scalars: 4 that change every replay, then 27 constants. */
enum { S_LAYER_CSA, S_LAYER_HCA, S_EPOCH_M1, S_EPOCH_M2, S_CONST0, S_COUNT = 31 };
#define S_CACHE_LEN (S_CONST0 + 9)

/* Deliberate faults, to prove the golden comparison can fail. */
typedef enum dsv4_fault {
    DSV4_FAULT_NONE = 0,
    DSV4_FAULT_FLIP_PRED, /* one MoE block's expert predicates compare == 0 instead of != 0 */
    DSV4_FAULT_EARLY_READ /* one attention reduce is submitted before the tile it reads */
} dsv4_fault;

typedef struct dsv4_slot {  /* how one boundary tensor is built per replay */
    hbg_tensor tmpl;        /* layout and base offset; addr filled per pass */
    uint16_t arg;           /* caller tensor (A_*), or 0xffff: set by the caller */
    uint8_t layer_delta;    /* 0: the CSA layer, 1: the HCA layer */
    uint8_t per_layer;      /* offset += layer * slice */
    uint64_t slice;         /* elements per layer of the caller tensor */
} dsv4_slot;

/* Outside the layer pairs: the most tasks and allocated buffers of a pass
 * that hold their arguments in bounds and their buffers in `abuf` (there
 * are 839 and fewer than 900; any past these go as plain arrays). */
#define DSV4_OUT_TASKS 1024
#define DSV4_OUT_BUFS 1024

typedef struct dsv4_buf {   /* an allocation's answer, as a task's argument holds it */
    uint64_t addr, nbytes;
    uint32_t creator;
} dsv4_buf;

typedef struct dsv4_state {
    uint32_t rank, nranks;
    uint64_t seed;
    uint64_t epoch;         /* next exchange epoch; both ranks advance it alike */
    dsv4_fault fault;
    hbg_host_tensor args[A_COUNT];
    void *mem[A_COUNT];
    uint64_t slice[A_COUNT]; /* elements per layer (0: not per layer) */
    /* precomputed descriptors */
    hbg_tensor d_td, d_state, d_logits, d_topk, d_pkt, d_recv, d_counts, d_y, d_word, d_amax, d_lm, d_ef,
        d_ed, d_load, d_res;
    hbg_tensor t_wslice, t_wtile[7], t_group, t_etile, t_stile, t_cache;
    dsv4_slot bslot[B_COUNT];
    uint64_t bconst[S_COUNT];
    /* the boundary of the replay being built */
    hbg_tensor bt[B_COUNT];
    hbg_arg ba[B_COUNT];
    uint64_t bs[S_COUNT];
    /* Each layer pair's boundary tensors, held by the runtime (hbg_bound),
     * and what they were built from: the caller tensors and the prologue's
     * and layer 1's tensors the first replay reads (synced), and whether
     * they were built at all. A pass builds them again only when one of
     * those changed. */
    hbg_bound *pair[DSV4_PAIRS];
    hbg_tensor synced_args[A_COUNT], synced_pass[4];
    bool pairs_built;
    /* Each task outside the pairs holds its arguments in a bound of its
     * own too (tb, in program order), made in setup and set by the first
     * pass. A task's
     * arguments are the caller tensors, the buffers allocated before it
     * and constants; so while the caller tensors and the fault are the
     * last complete pass's (tasks_args, tasks_fault, tasks_built) and
     * every allocation so far gave the buffer it gave then (abuf), each
     * bound holds this pass's arguments already and is passed unread.
     * From the first buffer that differs on, the tasks' bounds are set
     * again (a slot given what it holds keeps its stamp). */
    hbg_bound *tb[DSV4_OUT_TASKS];
    uint8_t tn[DSV4_OUT_TASKS];     /* each one's argument count (setup's dry run) */
    dsv4_buf abuf[DSV4_OUT_BUFS];
    hbg_tensor tasks_args[A_COUNT];
    dsv4_fault tasks_fault;
    bool tasks_built;
    bool plain_tasks;       /* test hook: every outside task as a plain array */
    uint32_t tasks_reset;   /* outside tasks whose bound was set (or made) in the last pass */
    uint32_t tasks_made;    /* of those, bounds made in the pass (not in setup) */
} dsv4_state;

hbg_status dsv4_register_kernels(hbg_kernel_table *kt);
hbg_status dsv4_orchestrate(hbg_orch *o, void *ctx);
/* Builds the boundary templates, constants and bounds (setup, once);
 * HBG_E_NOMEM when a bound cannot be made. dsv4_release frees the bounds
 * (a state never prepared, or NULL, is fine). */
hbg_status dsv4_prepare(dsv4_state *s);
void dsv4_release(dsv4_state *s);

/* Test hooks. */
void dsv4_set_fault(void *state, dsv4_fault f);
/* Outside tasks passed as plain argument arrays (true) or through their
 * bounds (false, the default). */
void dsv4_set_plain_tasks(void *state, bool plain);
/* Host memory of a caller tensor. */
void *dsv4_arg_host(void *state, uint32_t arg);
/* Runs the eager reference into the program's own output tensors, as if a
 * device had produced them. */
hbg_status dsv4_eager_outputs(void *state, const hbg_case_env *env, const hbg_kernel_table *kt);

extern const hbg_case hbg_case_dsv4;

#endif
