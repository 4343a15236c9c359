/* qwen orchestration: the host program of one decode step.
 *
 * 47 host tasks: alloc, tiling setup, barrier, input copy, input norm (in a
 * MANUAL scope), alloc of the ping-pong pairs and scratch, 40 submits of the
 * layer Graph, output copy. The layer body (277 nodes) records once per
 * pass; every descriptor the 40 boundaries need is built in setup, so a
 * pass only re-reads the 20 caller addresses and patches the views whose
 * buffer moved — no allocation, no formatting, no per-layer arithmetic.
 * Each layer's boundary is a bound (hbg_bound, include/hbg/graph.h): the
 * runtime holds its 26 tensors, and a pass sets them again only when one
 * of the tensors they copy changed, which after the first pass it does
 * not; a layer's replay then repeats the last pass's without being read.
 */
#include <stdlib.h>
#include <string.h>

#include "qwen/qwen_internal.h"

#define L QWEN_LAYERS
#define B QWEN_BATCH
#define OP_SPLITS 5   /* out-proj K-splits of u */
#define OP_TILES 10   /* out-proj column tiles of u/2 */
#define OP_NODES 26   /* entries with a node each; OPS does the rest */
#define MLP_TILES 17  /* gate/up column tiles of u = down-proj K-splits */
#define GU_SPLITS 5   /* gate/up K-splits of u = down-proj output tiles */
#define GS_TILES 6    /* gate/up tiles done by the 6-block GS/US nodes */

/* The 13 per-layer views, in boundary order. */
enum { LV_IN_NORM, LV_WQ, LV_WK, LV_WV, LV_QNORM, LV_KNORM, LV_KC, LV_VC, LV_WO, LV_WG, LV_WU, LV_WD, LV_POST,
       LV_COUNT };

/* Caller arg and boundary slot of each; the input-norm view of layer l is
 * row l + 1 (the next layer's weight, applied by DCR). */
static const struct {
    uint8_t qa, qb;
} lv_map[LV_COUNT] = {
    {QA_IN_NORM, QB_IN_NORM_NEXT}, {QA_WQ, QB_WQ},         {QA_WK, QB_WK},       {QA_WV, QB_WV},
    {QA_QNORM, QB_QNORM},          {QA_KNORM, QB_KNORM},   {QA_KCACHE, QB_KCACHE}, {QA_VCACHE, QB_VCACHE},
    {QA_WO, QB_WO},                {QA_WGATE, QB_WGATE},   {QA_WUP, QB_WUP},     {QA_WDOWN, QB_WDOWN},
    {QA_POST_NORM, QB_POST_NORM},
};

struct qwen_ctx {
    qwen_dims d;
    /* scratch carving, in elements */
    uint64_t off_q, off_k, off_v, off_rin, off_attn, off_op, off_rpost, off_gate, off_up, off_hmid, off_dp;
    uint64_t off_xg, off_hact, n32, n16;

    uint64_t seen_addr[QA_COUNT], seen_bytes[QA_COUNT];
    hbg_tensor caller[QA_COUNT];
    hbg_tensor lv[LV_COUNT][L];
    hbg_tensor in_norm0;

    /* runtime-allocated tensors and their request templates */
    hbg_tensor meta, ws, hid0, nrm0, hid[2], nrm[2], s16, s32;
    hbg_tensor meta_d, ws_d, act_d, s16_d, s32_d;
    hbg_tensor *alloc0[4], *alloc1[6];

    hbg_arg a_tiling[3], a_copy_in[2], a_norm[3], a_copy_out[2];
    uint64_t tiling_sc[1];
    hbg_task t_tiling, t_copy_in, t_norm, t_copy_out;

    hbg_arg barg[L][QB_COUNT];
    hbg_bound *bound[L];
    /* The tensors the bounds copy that a pass writes (alloc_tensors fills
     * them), as the bounds were last given them; and whether a boundary
     * tensor changed otherwise since (a caller buffer moved, a fault). */
    hbg_tensor synced[10];
    bool stale;
};

/* The tensors of `synced`, in its order. */
#define PASS_TENSORS(c)                                                                                        \
    {                                                                                                          \
        &(c)->meta, &(c)->ws, &(c)->hid0, &(c)->nrm0, &(c)->hid[0], &(c)->hid[1], &(c)->nrm[0], &(c)->nrm[1], \
            &(c)->s16, &(c)->s32                                                                               \
    }

static hbg_tensor shaped(hbg_dtype dt, unsigned nd, uint32_t s0, uint32_t s1, uint32_t s2)
{
    uint32_t shape[3] = {s0, s1, s2};
    return hbg_tensor_desc(dt, nd, shape);
}

/* A view of `b`'s buffer, `off` elements past b's own view start. Built
 * field by field: cheaper than hbg_tensor_view and the body builds ~800. */
static inline hbg_tensor vw(const hbg_tensor *b, uint64_t off, unsigned nd, uint32_t s0, uint32_t s1,
                            uint32_t s2, int64_t st0, int64_t st1)
{
    hbg_tensor t;
    memset(&t, 0, sizeof t);
    t.addr = b->addr;
    t.nbytes = b->nbytes;
    t.creator = b->creator;
    t.dtype = b->dtype;
    t.offset = b->offset + off;
    t.ndim = (uint8_t)nd;
    t.shape[0] = s0, t.shape[1] = s1, t.shape[2] = s2;
    if (nd == 1) {
        t.strides[0] = 1;
    } else if (nd == 2) {
        t.strides[0] = st0, t.strides[1] = 1;
    } else {
        t.strides[0] = st0, t.strides[1] = st1, t.strides[2] = 1;
    }
    return t;
}

#define V1(b, off, n) vw((b), (off), 1, (n), 0, 0, 0, 0)
#define V2(b, off, r, c, rs) vw((b), (off), 2, (r), (c), 0, (rs), 0)
#define V3(b, off, p, r, c, ps, rs) vw((b), (off), 3, (p), (r), (c), (ps), (rs))

static hbg_task_id sub(hbg_orch *o, uint16_t kaic, uint16_t kaiv, uint8_t core, uint32_t blocks, hbg_arg *args,
                       uint32_t nargs, const uint64_t *sc, uint32_t nsc, const hbg_task_id *deps, uint32_t ndeps)
{
    hbg_task t = {.kernel_aic = kaic, .kernel_aiv = kaiv, .core = core, .blocks = blocks, .ntensors = nargs,
                  .args = args, .nscalars = nsc, .scalars = sc, .ndeps = ndeps, .deps = deps};
    hbg_task_id id = HBG_TASK_NONE;
    hbg_submit_task(o, &t, &id);
    return id;
}

#define AIC(kid) (kid), HBG_KERNEL_NONE, HBG_CORE_AIC
#define AIV(kid) HBG_KERNEL_NONE, (kid), HBG_CORE_AIV
#define N(a) (uint32_t)(sizeof(a) / sizeof((a)[0]))

/* One matmul task: C (cdir) = A . W (+ R, the residual, when given), over
 * `blocks` blocks covering entries e0.. of a tiles x splits grid. */
typedef struct mm {
    hbg_tensor *a, *w, *c, *r;
    uint8_t cdir;
    uint32_t blocks;
    uint64_t e0, tiles, splits, mode;
    const hbg_task_id *deps;
    uint32_t ndeps;
} mm;

static hbg_task_id matmul(hbg_orch *o, const mm *m)
{
    hbg_arg a[] = {{m->a, HBG_IN}, {m->w, HBG_IN}, {m->c, m->cdir}, {m->r, HBG_IN}};
    uint64_t sc[] = {m->e0, m->tiles, m->splits, m->mode};
    return sub(o, AIC(QK_MATMUL), m->blocks, a, m->r ? 4 : 3, sc, 4, m->deps, m->ndeps);
}

/* The layer Graph body. Node order and dependencies follow the layer table
 * of the case's documentation; everything but DCR runs in a MANUAL scope. */
static hbg_status qwen_layer(hbg_orch *o, void *vctx, const hbg_boundary *bd)
{
    const qwen_ctx *c = vctx;
    hbg_tensor *T[QB_COUNT];
    for (uint32_t k = 0; k < QB_COUNT; k++)
        T[k] = bd->args[k].t;
    const uint32_t u = c->d.u, H = c->d.hidden, I = c->d.inter, Q = c->d.qdim, KV = c->d.kvdim;
    const hbg_tensor *s32 = T[QB_S32], *s16 = T[QB_S16];
    hbg_tensor q_acc = V2(s32, c->off_q, B, Q, Q), k_acc = V2(s32, c->off_k, B, KV, KV),
               v_acc = V2(s32, c->off_v, B, KV, KV), rin = V1(s32, c->off_rin, B),
               attn = V2(s32, c->off_attn, B, Q, Q),
               op_all = V3(s32, c->off_op, OP_SPLITS, B, H, (int64_t)B * H, H),
               rpost = V1(s32, c->off_rpost, B), gate = V2(s32, c->off_gate, B, I, I),
               up = V2(s32, c->off_up, B, I, I),
               dp_all = V3(s32, c->off_dp, MLP_TILES, B, H, (int64_t)B * H, H);

    hbg_scope_begin(o, HBG_SCOPE_MANUAL);
    hbg_task_id b1 = HBG_TASK_NONE, b2 = HBG_TASK_NONE;
    hbg_submit_dummy(o, 0, NULL, &b1);
    hbg_arg a_as[] = {{&attn, HBG_OUT}};
    hbg_task_id attn_seed = sub(o, AIV(QK_ZERO), 1, a_as, 1, NULL, 0, NULL, 0);
    hbg_arg a_qs[] = {{&q_acc, HBG_OUT}};
    hbg_task_id q_seed = sub(o, AIV(QK_ZERO), 1, a_qs, 1, NULL, 0, NULL, 0);
    hbg_arg a_rr[] = {{T[QB_HID], HBG_IN}, {&rin, HBG_OUT}};
    hbg_task_id rms = sub(o, AIV(QK_RMS_RECIP), 1, a_rr, 2, NULL, 0, &b1, 1);
    hbg_task_id qp = matmul(o, &(mm){.a = T[QB_NRM], .w = T[QB_WQ], .c = &q_acc, .cdir = HBG_INOUT, .blocks = 50,
                                     .tiles = 10, .splits = 5, .mode = QMM_ATOMIC, .deps = &q_seed, .ndeps = 1});
    hbg_arg a_ks[] = {{&k_acc, HBG_OUT}, {&v_acc, HBG_OUT}};
    hbg_task_id kv_seed = sub(o, AIV(QK_ZERO), 1, a_ks, 2, NULL, 0, &b1, 1);
    hbg_arg a_ms[] = {{&gate, HBG_OUT}, {&up, HBG_OUT}};
    hbg_task_id mlp_seed = sub(o, AIV(QK_ZERO), 1, a_ms, 2, NULL, 0, &b1, 1);
    hbg_task_id kp = matmul(o, &(mm){.a = T[QB_NRM], .w = T[QB_WK], .c = &k_acc, .cdir = HBG_INOUT, .blocks = 10,
                                     .tiles = 2, .splits = 5, .mode = QMM_ATOMIC, .deps = &kv_seed, .ndeps = 1});
    hbg_task_id vp = matmul(o, &(mm){.a = T[QB_NRM], .w = T[QB_WV], .c = &v_acc, .cdir = HBG_INOUT, .blocks = 10,
                                     .tiles = 2, .splits = 5, .mode = QMM_ATOMIC, .deps = &kv_seed, .ndeps = 1});

    hbg_arg a_att[] = {{&q_acc, HBG_IN},          {&k_acc, HBG_IN},           {&v_acc, HBG_IN},
                       {&rin, HBG_IN},            {T[QB_QNORM], HBG_IN},      {T[QB_KNORM], HBG_IN},
                       {T[QB_COS], HBG_IN},       {T[QB_SIN], HBG_IN},        {T[QB_SEQLENS], HBG_IN},
                       {T[QB_BLOCK_TABLE], HBG_IN}, {T[QB_SLOTS], HBG_IN},    {T[QB_META], HBG_IN},
                       {T[QB_KCACHE], HBG_INOUT}, {T[QB_VCACHE], HBG_INOUT},  {T[QB_WS], HBG_INOUT},
                       {&attn, HBG_INOUT}};
    hbg_task_id att_deps[] = {qp, kp, vp, rms, attn_seed, mlp_seed};
    hbg_task t_att = {.kernel_aic = QK_ATT_QK, .kernel_aiv = QK_ATT_PV, .core = HBG_CORE_MIX, .sync_start = 1,
                      .blocks = 24, .ntensors = N(a_att), .args = a_att, .ndeps = N(att_deps), .deps = att_deps};
    hbg_task_id att = HBG_TASK_NONE;
    hbg_submit_task(o, &t_att, &att);
    hbg_submit_dummy(o, 1, &att, &b2);

    /* Out-projection entry e: column tile e / 5 (u/2 wide), K-split e % 5. */
    hbg_task_id op[OP_NODES + 1];
    for (uint32_t e = 0; e < OP_NODES; e++) {
        uint32_t t = e / OP_SPLITS, s = e % OP_SPLITS, w = u / 2;
        hbg_tensor A = V2(&attn, (uint64_t)s * u, B, u, Q);
        hbg_tensor W = V2(T[QB_WO], (uint64_t)s * u * H + (uint64_t)t * w, u, w, H);
        hbg_tensor C = V2(s32, c->off_op + (uint64_t)s * B * H + (uint64_t)t * w, B, w, H);
        op[e] = matmul(o, &(mm){.a = &A, .w = &W, .c = &C, .cdir = HBG_OUT, .blocks = 1, .tiles = 1,
                                .splits = 1, .mode = QMM_STORE, .deps = &b2, .ndeps = 1});
    }
    op[OP_NODES] = matmul(o, &(mm){.a = &attn, .w = T[QB_WO], .c = &op_all, .cdir = HBG_OUT,
                                   .blocks = OP_TILES * OP_SPLITS - OP_NODES, .e0 = OP_NODES, .tiles = OP_TILES,
                                   .splits = OP_SPLITS, .mode = QMM_STORE, .deps = &att, .ndeps = 1});
    const hbg_task_id ops = op[OP_NODES];

    /* CAST c: column slab c of u = entries 10c .. 10c+9. */
    hbg_task_id cast[GU_SPLITS];
    for (uint32_t s = 0; s < GU_SPLITS; s++) {
        hbg_task_id deps[11];
        uint32_t nd = 0;
        for (uint32_t e = 10 * s; e < 10 * s + 10; e++)
            if (e < OP_NODES)
                deps[nd++] = op[e];
        if (10 * s + 9 >= OP_NODES)
            deps[nd++] = ops;
        hbg_tensor hid = V2(T[QB_HID], (uint64_t)s * u, B, u, H);
        hbg_tensor opv = V3(s32, c->off_op + (uint64_t)s * u, OP_SPLITS, B, u, (int64_t)B * H, H);
        hbg_tensor g = V1(T[QB_POST_NORM], (uint64_t)s * u, u);
        hbg_tensor hm = V2(s32, c->off_hmid + (uint64_t)s * u, B, u, H);
        hbg_tensor xg = V2(s16, c->off_xg + (uint64_t)s * u, B, u, H);
        hbg_arg a[] = {{&hid, HBG_IN}, {&opv, HBG_IN}, {&g, HBG_IN}, {&hm, HBG_OUT}, {&xg, HBG_OUT}};
        cast[s] = sub(o, AIV(QK_CAST), 1, a, N(a), NULL, 0, deps, nd);
    }
    hbg_arg a_red[] = {{T[QB_HID], HBG_IN}, {&op_all, HBG_IN}, {&rpost, HBG_OUT}};
    hbg_task_id red = sub(o, AIV(QK_RED), 1, a_red, N(a_red), NULL, 0, op, OP_NODES + 1);

    hbg_task_id gl[GU_SPLITS], ul[GU_SPLITS];
    for (uint32_t k = 0; k < GU_SPLITS; k++) {
        hbg_submit_dummy(o, 1, &cast[k], &gl[k]);
        hbg_submit_dummy(o, 1, &cast[k], &ul[k]);
    }
    /* gate/up partials of tile n, K-split k, accumulate into the seeded
     * accumulators; tile n's producers are gu[n][0..9]. */
    hbg_task_id gu[MLP_TILES][2 * GU_SPLITS];
    for (uint32_t k = 0; k < GU_SPLITS; k++) {
        hbg_tensor A = V2(s16, c->off_xg + (uint64_t)k * u, B, u, H);
        hbg_tensor Wg = V2(T[QB_WGATE], (uint64_t)k * u * I, u, GS_TILES * u, I);
        hbg_tensor Wu = V2(T[QB_WUP], (uint64_t)k * u * I, u, GS_TILES * u, I);
        hbg_tensor Cg = V2(s32, c->off_gate, B, GS_TILES * u, I), Cu = V2(s32, c->off_up, B, GS_TILES * u, I);
        hbg_task_id gs = matmul(o, &(mm){.a = &A, .w = &Wg, .c = &Cg, .cdir = HBG_INOUT, .blocks = GS_TILES,
                                         .tiles = GS_TILES, .splits = 1, .mode = QMM_ATOMIC, .deps = &cast[k],
                                         .ndeps = 1});
        hbg_task_id us = matmul(o, &(mm){.a = &A, .w = &Wu, .c = &Cu, .cdir = HBG_INOUT, .blocks = GS_TILES,
                                         .tiles = GS_TILES, .splits = 1, .mode = QMM_ATOMIC, .deps = &cast[k],
                                         .ndeps = 1});
        for (uint32_t n = 0; n < GS_TILES; n++)
            gu[n][2 * k] = gs, gu[n][2 * k + 1] = us;
    }
    for (uint32_t n = GS_TILES; n < MLP_TILES; n++)
        for (uint32_t k = 0; k < GU_SPLITS; k++) {
            hbg_tensor A = V2(s16, c->off_xg + (uint64_t)k * u, B, u, H);
            hbg_tensor Wg = V2(T[QB_WGATE], (uint64_t)k * u * I + (uint64_t)n * u, u, u, I);
            hbg_tensor Wu = V2(T[QB_WUP], (uint64_t)k * u * I + (uint64_t)n * u, u, u, I);
            hbg_tensor Cg = V2(s32, c->off_gate + (uint64_t)n * u, B, u, I);
            hbg_tensor Cu = V2(s32, c->off_up + (uint64_t)n * u, B, u, I);
            gu[n][2 * k] = matmul(o, &(mm){.a = &A, .w = &Wg, .c = &Cg, .cdir = HBG_INOUT, .blocks = 1, .tiles = 1,
                                           .splits = 1, .mode = QMM_ATOMIC, .deps = &gl[k], .ndeps = 1});
            gu[n][2 * k + 1] = matmul(o, &(mm){.a = &A, .w = &Wu, .c = &Cu, .cdir = HBG_INOUT, .blocks = 1,
                                               .tiles = 1, .splits = 1, .mode = QMM_ATOMIC, .deps = &ul[k],
                                               .ndeps = 1});
        }
    hbg_task_id silu[MLP_TILES];
    for (uint32_t n = 0; n < MLP_TILES; n++) {
        hbg_task_id deps[1 + 2 * GU_SPLITS];
        deps[0] = red;
        uint32_t nd = 1;
        /* GS/US cover tiles 0..5 with one node per K-split: list each once */
        for (uint32_t j = 0; j < 2 * GU_SPLITS; j++)
            deps[nd++] = gu[n][j];
        hbg_tensor g = V2(s32, c->off_gate + (uint64_t)n * u, B, u, I);
        hbg_tensor up_t = V2(s32, c->off_up + (uint64_t)n * u, B, u, I);
        hbg_tensor h = V2(s16, c->off_hact + (uint64_t)n * u, B, u, I);
        hbg_arg a[] = {{&g, HBG_IN}, {&up_t, HBG_IN}, {&rpost, HBG_IN}, {&h, HBG_OUT}};
        silu[n] = sub(o, AIV(QK_SILU), 1, a, N(a), NULL, 0, deps, nd);
    }
    /* Down-proj output tile n, K-split k into plane k; plane 0 also carries
     * the post-attention residual. */
    for (uint32_t n = 0; n < GU_SPLITS; n++)
        for (uint32_t k = 0; k < MLP_TILES; k++) {
            hbg_tensor A = V2(s16, c->off_hact + (uint64_t)k * u, B, u, I);
            hbg_tensor W = V2(T[QB_WDOWN], (uint64_t)k * u * H + (uint64_t)n * u, u, u, H);
            hbg_tensor C = V2(s32, c->off_dp + (uint64_t)k * B * H + (uint64_t)n * u, B, u, H);
            hbg_tensor R = V2(s32, c->off_hmid + (uint64_t)n * u, B, u, H);
            matmul(o, &(mm){.a = &A, .w = &W, .c = &C, .r = k == 0 ? &R : NULL, .cdir = HBG_OUT,
                            .blocks = 1, .tiles = 1, .splits = 1, .mode = k == 0 ? QMM_RESIDUAL : QMM_STORE,
                            .deps = &silu[k], .ndeps = 1});
        }
    hbg_scope_end(o);

    /* Outside the MANUAL scope: its 85 fanins are inferred from the planes. */
    hbg_arg a_dcr[] = {{&dp_all, HBG_IN},
                       {T[QB_IN_NORM_NEXT], HBG_IN},
                       {T[QB_HID_NEXT], HBG_OUT},
                       {T[QB_NRM_NEXT], HBG_OUT}};
    sub(o, AIV(QK_DCR), 5, a_dcr, N(a_dcr), NULL, 0, NULL, 0);
    return HBG_OK;
}

/* Re-reads the caller tensors; views are patched only for buffers that
 * moved since the last pass (normally none after the first). */
static void refresh(qwen_ctx *c, hbg_orch *o)
{
    for (uint32_t a = 0; a < QA_COUNT; a++) {
        const hbg_tensor *t = hbg_orch_arg(o, a);
        if (t->addr == c->seen_addr[a] && t->nbytes == c->seen_bytes[a])
            continue;
        c->seen_addr[a] = t->addr;
        c->seen_bytes[a] = t->nbytes;
        c->caller[a] = *t;
        c->stale = true;
        for (uint32_t g = 0; g < LV_COUNT; g++) {
            if (lv_map[g].qa != a)
                continue;
            for (uint32_t l = 0; l < L; l++) {
                c->lv[g][l].addr = t->addr;
                c->lv[g][l].nbytes = t->nbytes;
                c->lv[g][l].creator = t->creator;
            }
        }
        if (a == QA_IN_NORM) {
            c->in_norm0.addr = t->addr;
            c->in_norm0.nbytes = t->nbytes;
            c->in_norm0.creator = t->creator;
        }
    }
}

/* Gives the bounds the tensors their slots name, when one may have
 * changed since they were last given them: the first pass, a caller
 * buffer that moved, a heap that gave other addresses. A slot set to what
 * it holds keeps its bound's stamp (hbg_bound_set). */
static hbg_status sync_bounds(hbg_orch *o, qwen_ctx *c)
{
    const hbg_tensor *now[] = PASS_TENSORS(c);
    _Static_assert(sizeof now / sizeof now[0] == sizeof c->synced / sizeof c->synced[0], "one copy each");
    bool moved = c->stale;
    for (size_t i = 0; i < sizeof now / sizeof now[0] && !moved; i++)
        moved = memcmp(now[i], &c->synced[i], sizeof c->synced[i]) != 0;
    if (!moved)
        return HBG_OK;
    for (uint32_t l = 0; l < L; l++) {
        hbg_status st = case_bound_fill(o, "layer", l, c->bound[l], QB_COUNT, c->barg[l]);
        if (st)
            return st;
    }
    for (size_t i = 0; i < sizeof now / sizeof now[0]; i++)
        c->synced[i] = *now[i];
    c->stale = false;
    return HBG_OK;
}

hbg_status qwen_orchestrate(hbg_orch *o, void *vctx)
{
    qwen_ctx *c = vctx;
    if (hbg_orch_nargs(o) != QA_COUNT)
        return hbg_orch_fail(o, HBG_E_INVAL, "qwen takes %u caller tensors, not %u", QA_COUNT, hbg_orch_nargs(o));
    refresh(c, o);
    c->meta = c->meta_d, c->ws = c->ws_d, c->hid0 = c->act_d, c->nrm0 = c->act_d;
    c->hid[0] = c->hid[1] = c->nrm[0] = c->nrm[1] = c->act_d;
    c->s16 = c->s16_d, c->s32 = c->s32_d;

    hbg_task_id id, tiling, copy_in;
    hbg_alloc_tensors(o, 4, c->alloc0, &id);
    hbg_submit_task(o, &c->t_tiling, &tiling);
    hbg_submit_dummy(o, 1, &tiling, &id);
    hbg_submit_task(o, &c->t_copy_in, &copy_in);
    hbg_scope_begin(o, HBG_SCOPE_MANUAL);
    hbg_task norm = c->t_norm;
    norm.ndeps = 1;
    norm.deps = &copy_in;
    hbg_submit_task(o, &norm, &id);
    hbg_scope_end(o);
    hbg_alloc_tensors(o, 6, c->alloc1, &id);
    hbg_status st = sync_bounds(o, c);
    if (st)
        return st;
    for (uint32_t l = 0; l < L; l++)
        hbg_submit_graph_bound(o, QWEN_LAYER_KEY, qwen_layer, c, c->bound[l], NULL, 0, &id);
    hbg_submit_task(o, &c->t_copy_out, &id);
    return hbg_orch_error(o);
}

void qwen_ctx_fault(qwen_ctx *c, qwen_fault f)
{
    if (f == QWEN_FAULT_SWAP_WO) {
        c->barg[5][QB_WO].t = &c->lv[LV_WO][6];
    } else if (f == QWEN_FAULT_STALE_KV) {
        c->barg[9][QB_KCACHE].t = &c->lv[LV_KC][8];
        c->barg[9][QB_VCACHE].t = &c->lv[LV_VC][8];
    }
    c->stale = true;
}

hbg_status qwen_ctx_create(const qwen_dims *d, qwen_ctx **out)
{
    qwen_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return HBG_E_NOMEM;
    c->d = *d;
    const uint64_t H = d->hidden, I = d->inter, Q = d->qdim, KV = d->kvdim, hd = d->head_dim;

    uint64_t at = 0;
#define CARVE(field, n) (c->field = at, at += ((uint64_t)(n) + 15) & ~(uint64_t)15)
    CARVE(off_q, B * Q);
    CARVE(off_k, B * KV);
    CARVE(off_v, B * KV);
    CARVE(off_rin, B);
    CARVE(off_attn, B * Q);
    CARVE(off_op, OP_SPLITS * B * H);
    CARVE(off_rpost, B);
    CARVE(off_gate, B * I);
    CARVE(off_up, B * I);
    CARVE(off_hmid, B * H);
    CARVE(off_dp, MLP_TILES * B * H);
    c->n32 = at;
    at = 0;
    CARVE(off_xg, B * H);
    CARVE(off_hact, B * I);
    c->n16 = at;
#undef CARVE

    c->meta_d = shaped(HBG_I32, 2, B, 2, 0);
    c->ws_d = shaped(HBG_F32, 2, B * QWEN_QHEADS, QWEN_MAX_CTX, 0);
    c->act_d = shaped(HBG_F32, 2, B, (uint32_t)H, 0);
    c->s16_d = shaped(HBG_BF16, 1, (uint32_t)c->n16, 0, 0);
    c->s32_d = shaped(HBG_F32, 1, (uint32_t)c->n32, 0, 0);
    c->alloc0[0] = &c->meta, c->alloc0[1] = &c->ws, c->alloc0[2] = &c->hid0, c->alloc0[3] = &c->nrm0;
    c->alloc1[0] = &c->hid[0], c->alloc1[1] = &c->nrm[0], c->alloc1[2] = &c->hid[1];
    c->alloc1[3] = &c->nrm[1], c->alloc1[4] = &c->s16, c->alloc1[5] = &c->s32;

    /* Per-layer view layouts; the buffer address is patched per pass. */
    const hbg_tensor none = {0};
    for (uint32_t l = 0; l < L; l++) {
        c->lv[LV_IN_NORM][l] = V1(&none, (l + 1) * H, (uint32_t)H);
        c->lv[LV_WQ][l] = V2(&none, l * H * Q, (uint32_t)H, (uint32_t)Q, (int64_t)Q);
        c->lv[LV_WK][l] = V2(&none, l * H * KV, (uint32_t)H, (uint32_t)KV, (int64_t)KV);
        c->lv[LV_WV][l] = V2(&none, l * H * KV, (uint32_t)H, (uint32_t)KV, (int64_t)KV);
        c->lv[LV_QNORM][l] = V1(&none, l * hd, (uint32_t)hd);
        c->lv[LV_KNORM][l] = V1(&none, l * hd, (uint32_t)hd);
        uint64_t kvl = (uint64_t)QWEN_PAGES * QWEN_PAGE * KV;
        c->lv[LV_KC][l] = V3(&none, l * kvl, QWEN_PAGES, QWEN_PAGE, (uint32_t)KV, (int64_t)(QWEN_PAGE * KV),
                             (int64_t)KV);
        c->lv[LV_VC][l] = c->lv[LV_KC][l];
        c->lv[LV_WO][l] = V2(&none, l * Q * H, (uint32_t)Q, (uint32_t)H, (int64_t)H);
        c->lv[LV_WG][l] = V2(&none, l * H * I, (uint32_t)H, (uint32_t)I, (int64_t)I);
        c->lv[LV_WU][l] = c->lv[LV_WG][l];
        c->lv[LV_WD][l] = V2(&none, l * I * H, (uint32_t)I, (uint32_t)H, (int64_t)H);
        c->lv[LV_POST][l] = V1(&none, l * H, (uint32_t)H);
    }
    for (uint32_t g = 0; g < LV_COUNT; g++)
        for (uint32_t l = 0; l < L; l++)
            c->lv[g][l].dtype = HBG_F32;
    c->in_norm0 = V1(&none, 0, (uint32_t)H);
    c->in_norm0.dtype = HBG_F32;

    /* The prologue and epilogue tasks. */
    c->tiling_sc[0] = QWEN_PAGE;
    c->a_tiling[0] = (hbg_arg){&c->caller[QA_SEQLENS], HBG_IN};
    c->a_tiling[1] = (hbg_arg){&c->meta, HBG_OUT};
    c->t_tiling = (hbg_task){.kernel_aic = HBG_KERNEL_NONE, .kernel_aiv = QK_TILING, .core = HBG_CORE_AIV,
                             .blocks = 1, .ntensors = 2, .args = c->a_tiling, .nscalars = 1, .scalars = c->tiling_sc};
    c->a_copy_in[0] = (hbg_arg){&c->caller[QA_X], HBG_IN};
    c->a_copy_in[1] = (hbg_arg){&c->hid0, HBG_OUT};
    c->t_copy_in = (hbg_task){.kernel_aic = HBG_KERNEL_NONE, .kernel_aiv = QK_COPY, .core = HBG_CORE_AIV,
                              .blocks = 1, .ntensors = 2, .args = c->a_copy_in};
    c->a_norm[0] = (hbg_arg){&c->hid0, HBG_IN};
    c->a_norm[1] = (hbg_arg){&c->in_norm0, HBG_IN};
    c->a_norm[2] = (hbg_arg){&c->nrm0, HBG_OUT};
    c->t_norm = (hbg_task){.kernel_aic = HBG_KERNEL_NONE, .kernel_aiv = QK_SCALE_COLS, .core = HBG_CORE_AIV,
                           .blocks = 5, .ntensors = 3, .args = c->a_norm};
    c->a_copy_out[0] = (hbg_arg){&c->hid[(L - 1) % 2], HBG_IN};
    c->a_copy_out[1] = (hbg_arg){&c->caller[QA_OUT], HBG_OUT};
    c->t_copy_out = (hbg_task){.kernel_aic = HBG_KERNEL_NONE, .kernel_aiv = QK_COPY, .core = HBG_CORE_AIV,
                               .blocks = 1, .ntensors = 2, .args = c->a_copy_out};

    /* The 40 boundaries: layer l reads pair (l-1)%2 (the prologue's for
     * l = 0) and writes pair l%2. */
    static const uint8_t shared[][2] = {{QB_SEQLENS, QA_SEQLENS}, {QB_BLOCK_TABLE, QA_BLOCK_TABLE},
                                        {QB_SLOTS, QA_SLOTS},     {QB_COS, QA_COS},
                                        {QB_SIN, QA_SIN}};
    for (uint32_t l = 0; l < L; l++) {
        hbg_arg *a = c->barg[l];
        a[QB_HID] = (hbg_arg){l ? &c->hid[(l - 1) % 2] : &c->hid0, HBG_IN};
        a[QB_NRM] = (hbg_arg){l ? &c->nrm[(l - 1) % 2] : &c->nrm0, HBG_IN};
        a[QB_HID_NEXT] = (hbg_arg){&c->hid[l % 2], HBG_INOUT};
        a[QB_NRM_NEXT] = (hbg_arg){&c->nrm[l % 2], HBG_INOUT};
        for (uint32_t g = 0; g < LV_COUNT; g++) {
            uint8_t qb = lv_map[g].qb;
            a[qb] = (hbg_arg){&c->lv[g][l], qb == QB_KCACHE || qb == QB_VCACHE ? HBG_INOUT : HBG_IN};
        }
        for (uint32_t k = 0; k < sizeof shared / sizeof shared[0]; k++)
            a[shared[k][0]] = (hbg_arg){&c->caller[shared[k][1]], HBG_IN};
        a[QB_WS] = (hbg_arg){&c->ws, HBG_INOUT};
        a[QB_META] = (hbg_arg){&c->meta, HBG_INOUT};
        a[QB_S16] = (hbg_arg){&c->s16, HBG_INOUT};
        a[QB_S32] = (hbg_arg){&c->s32, HBG_INOUT};
        /* What the slots hold is set by the first pass (sync_bounds). */
        hbg_status st = hbg_bound_create(QB_COUNT, a, &c->bound[l]);
        if (st) {
            qwen_ctx_destroy(c);
            return st;
        }
    }
    c->stale = true;
    *out = c;
    return HBG_OK;
}

void qwen_ctx_destroy(qwen_ctx *c)
{
    if (!c)
        return;
    for (uint32_t l = 0; l < L; l++)
        hbg_bound_destroy(c->bound[l]);
    free(c);
}
