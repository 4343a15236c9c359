/* qwen — shared between the case's files and its tests.
 *
 * A Qwen3-14B-shaped decode step at a scaled size. The tile unit u sets the
 * widths: hidden 5u, intermediate 17u, 40 query heads and 8 KV heads of dim
 * u/8 (u = 1024 is the real model). Batch, layers, pages and context stay
 * fixed, so the host work (tasks, nodes, boundary) is the same at every u.
 */
#ifndef HBG_CASES_QWEN_INTERNAL_H
#define HBG_CASES_QWEN_INTERNAL_H

#include <stdint.h>

#include "case.h"

#define QWEN_LAYERS 40
#define QWEN_BATCH 16
#define QWEN_QHEADS 40
#define QWEN_KVHEADS 8
#define QWEN_GROUP (QWEN_QHEADS / QWEN_KVHEADS)
#define QWEN_PAGE 16             /* tokens per KV page */
#define QWEN_PAGES_PER_SEQ 4
#define QWEN_MAX_CTX (QWEN_PAGE * QWEN_PAGES_PER_SEQ)
#define QWEN_PAGES (QWEN_BATCH * QWEN_PAGES_PER_SEQ) /* per layer */
#define QWEN_EPS 1e-6f
#define QWEN_ROPE_THETA 10000.0
#define QWEN_DEFAULT_U 32
#define QWEN_MIN_U 16
#define QWEN_MAX_U 1024
#define QWEN_LAYER_KEY 0x7177656e4c617972ull

/* Golden tolerance: max |device - reference| / max |reference| over the
 * final hidden state (and over the KV-cache rows the step wrote). The
 * device rounds the MLP activations to bf16 (2^-9 relative) and sums in
 * tiles and K-splits; the fp32 reference does neither. One layer lands
 * near 2e-3, forty layers near 1e-2 (u = 16..64); 3e-2 leaves a margin of
 * about 3, while a wrong binding or a lost write is off by far more. */
#define QWEN_TOLERANCE 3e-2
/* The K/V rows each layer wrote into the caches, per layer, as
 * |device - reference|_2 / |reference|_2. K rows pass through a per-head
 * RMSNorm of only u/8 elements, which amplifies the inherited noise of the
 * late layers (up to ~3e-2 at u = 16); a missing or misplaced write is off
 * by ~1.4. */
#define QWEN_KV_TOLERANCE 1e-1

/* Kernel ids 100..119 belong to this case. */
enum {
    QK_ZERO = 100,      /* AIV: zero every tensor argument */
    QK_TILING,          /* AIV: attention metadata (position, pages) per sequence */
    QK_COPY,            /* AIV: dst = src (2-D) */
    QK_SCALE_COLS,      /* AIV: y = x * gamma over a column slab per block */
    QK_RMS_RECIP,       /* AIV: r[b] = 1 / rms(x[b]) */
    QK_MATMUL,          /* AIC: tiled, K-split matmul (store / atomic add / + residual) */
    QK_ATT_QK,          /* MIX, AIC half: q/k norm, RoPE, KV write, scores */
    QK_ATT_PV,          /* MIX, AIV half: softmax, P.V */
    QK_CAST,            /* AIV: residual add of the out-proj entries, x * gamma to bf16 */
    QK_RED,             /* AIV: post-attention 1 / rms */
    QK_SILU,            /* AIV: silu(r g) * (r u) to bf16 */
    QK_DCR,             /* AIV: sum of the down-proj K-splits, next x * gamma */
    QK_LAST
};

/* Matmul modes (scalar 3 of QK_MATMUL). */
enum { QMM_STORE = 0, QMM_ATOMIC = 1, QMM_RESIDUAL = 2 };

typedef struct qwen_dims {
    uint32_t u, hidden, inter, qdim, kvdim, head_dim;
} qwen_dims;

qwen_dims qwen_dims_for(uint32_t u);

/* Host bytes of the model's arrays at dims d (the weights are nearly all
 * of it: about 50 KB x u^2); the device holds a copy of each too. */
uint64_t qwen_model_bytes(qwen_dims d);

/* HBG_OK when twice the model (host arrays and their device copies) and
 * the process, for each of nranks ranks, fit in what h says a run may
 * use; else HBG_E_NOMEM with a one-line reason in msg. */
hbg_status qwen_check_fits(qwen_dims d, uint32_t nranks, const hbg_case_host *h, char *msg, size_t cap);

/* The caller tensors, in program order. */
enum {
    QA_X = 0, QA_OUT, QA_IN_NORM, QA_WQ, QA_WK, QA_WV, QA_QNORM, QA_KNORM, QA_SEQLENS,
    QA_BLOCK_TABLE, QA_SLOTS, QA_COS, QA_SIN, QA_KCACHE, QA_VCACHE, QA_WO, QA_WGATE, QA_WUP,
    QA_WDOWN, QA_POST_NORM, QA_COUNT
};

/* Layer boundary slots, in order (18 IN, 8 INOUT). */
enum {
    QB_HID = 0, QB_NRM, QB_HID_NEXT, QB_NRM_NEXT, QB_IN_NORM_NEXT, QB_WQ, QB_WK, QB_WV, QB_QNORM,
    QB_KNORM, QB_SEQLENS, QB_BLOCK_TABLE, QB_SLOTS, QB_COS, QB_SIN, QB_KCACHE, QB_VCACHE, QB_WO,
    QB_WGATE, QB_WUP, QB_WDOWN, QB_POST_NORM, QB_WS, QB_META, QB_S16, QB_S32, QB_COUNT
};

/* The model's host data (all float unless noted), one array per caller
 * tensor. Per-layer tensors are stacked along the first dimension. */
typedef struct qwen_model {
    qwen_dims d;
    float *x;            /* [B][H] input hidden */
    float *out;          /* [B][H] final hidden (device result) */
    float *in_norm;      /* [L+1][H]: layer l's input norm; row L is the final norm */
    float *wq, *wk, *wv; /* [L][H][qdim|kvdim] */
    float *qnorm, *knorm;/* [L][head_dim] */
    int32_t *seqlens;    /* [B] context length, new token included */
    int32_t *block_table;/* [B][PAGES_PER_SEQ] */
    int32_t *slots;      /* [B] cache slot of the new token */
    float *cos, *sin;    /* [MAX_CTX][head_dim/2] */
    float *kcache, *vcache; /* [L][PAGES][PAGE][kvdim] */
    float *wo;           /* [L][qdim][H] */
    float *wgate, *wup;  /* [L][H][I] */
    float *wdown;        /* [L][I][H] */
    float *post_norm;    /* [L][H] */
} qwen_model;

/* The plain reference decode (qwen_reference.c): writes the final hidden state
 * [B][H] and each layer's new K and V rows [L][B][kvdim]. Reads the cache
 * only at positions before each sequence's new token. */
hbg_status qwen_reference(const qwen_model *m, float *hidden, float *knew, float *vnew);

/* Kernel registration (qwen_kernels.c). */
hbg_status qwen_register_kernels(hbg_kernel_table *kt);

/* bf16 helpers shared by the kernels and the reference. */
static inline uint16_t qwen_to_bf16(float f)
{
    union { float f; uint32_t u; } v = {f};
    v.u += 0x7fffu + ((v.u >> 16) & 1u);
    return (uint16_t)(v.u >> 16);
}

static inline float qwen_from_bf16(uint16_t h)
{
    union { uint32_t u; float f; } v = {(uint32_t)h << 16};
    return v.f;
}

/* Faults a test can inject to show the golden notices a wrong graph. */
typedef enum qwen_fault {
    QWEN_FAULT_NONE = 0,
    QWEN_FAULT_SWAP_WO,     /* layer 5 is bound to layer 6's output projection */
    QWEN_FAULT_STALE_KV     /* layer 9 is bound to layer 8's KV caches */
} qwen_fault;

/* The orchestration context (qwen_orch.c): every descriptor the host program
 * needs, built once in setup so a bind pass only patches addresses. */
typedef struct qwen_ctx qwen_ctx;
hbg_status qwen_ctx_create(const qwen_dims *d, qwen_ctx **out);
void qwen_ctx_destroy(qwen_ctx *c);
void qwen_ctx_fault(qwen_ctx *c, qwen_fault f);
hbg_status qwen_orchestrate(hbg_orch *o, void *ctx);

void qwen_inject_fault(void *state, qwen_fault f);
const qwen_model *qwen_state_model(const void *state);

#endif
