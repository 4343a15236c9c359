/* dsv4 orchestration: the host program of one decode step on one rank.
 *
 *   prologue            1 alloc +   4 AIV
 *   layers 0, 1         sliding-window attention (15 allocs + 49 tasks)
 *                       + hash-routed MoE (74 allocs + 217 tasks), each
 *   layers 2..41        20 replays of one Graph: CSA attention, MoE, HCA
 *                       attention, MoE (743 nodes, 118 boundary tensors,
 *                       31 boundary scalars)
 *   layer 42            CSA attention (17 + 71) + MoE (74 + 218)
 *   head                2 allocs + 14 tasks, cross-rank argmax gather
 *
 * This function is the measured hot path: it allocates nothing, prints
 * nothing and builds every view from templates made once in dsv4_prepare().
 * Outside the Graph each task passes a bound made there too (a dry run of
 * the program counts their arguments); a warm pass whose buffers repeat
 * the last one's passes them unread (dsv4_state, tb). Only a fault that
 * reorders a block makes a bound in the pass, for a count that changed.
 * Every buffer a task writes is fresh for its block (or the Graph's
 * ping-pong state, read only by the replay before), because the runtime
 * tracks writers and not readers: a buffer rewritten while an earlier
 * reader might still run would be a race the golden cannot see.
 */
#include <string.h>

#include "dsv4/dsv4.h"
#include "hbg/graph.h"

#define PAIR_KEY 0xd5f4a11ce0000001ull
#define NONE HBG_KERNEL_NONE

/* nin, in[] (or nout, out[]) from a list of tensor pointers. */
#define TL(...) (uint32_t)(sizeof((hbg_tensor *[]){__VA_ARGS__}) / sizeof(hbg_tensor *)), (hbg_tensor *const[]){__VA_ARGS__}

typedef struct bx {     /* the block being submitted */
    hbg_orch *o;
    dsv4_state *s;
    uint64_t layer;
    int16_t lslot;      /* boundary scalar slot of the layer; -1 outside the Graph */
    uint32_t salt;      /* per task, so two tasks never mix alike */
    /* Outside the Graph: tasks through their bounds (s->tb), the next
     * task's and allocated buffer's index, and whether every bound from
     * here on holds what this pass would set (see dsv4_state). */
    bool bound, clean;
    uint32_t ti, bi;
    bool lost;          /* a task's bound could not be made or set */
    /* A dry run (dsv4_prepare's, no orchestrator): each outside task's
     * argument count is noted in s->tn, nothing is submitted. */
    bool dry;
} bx;

typedef struct opt {    /* the less common parts of a task */
    uint8_t flags, sync;
    uint32_t nextra;
    uint64_t extra[2];
    int16_t xslot[2];
    uint32_t ndeps;
    const hbg_task_id *deps;
    const hbg_pred *pred;
} opt;

/* The bound of outside task k holding args (n of them), made or set
 * again; NULL where it cannot be (no memory, an argument a bound refuses):
 * the task then goes as a plain array, whose submit says what was wrong,
 * and the pass leaves the bounds to be set again in the next. */
static hbg_bound *task_bound(bx *x, uint32_t k, uint32_t n, const hbg_arg *args)
{
    dsv4_state *s = x->s;
    hbg_bound **bd = &s->tb[k];
    s->tasks_reset++;
    if (*bd && hbg_bound_count(*bd) != n) {
        hbg_bound_destroy(*bd);
        *bd = NULL;
    }
    s->tasks_made += !*bd;
    if (!*bd ? hbg_bound_create(n, args, bd) != HBG_OK : case_bound_fill(NULL, NULL, 0, *bd, n, args) != HBG_OK) {
        hbg_bound_destroy(*bd);
        *bd = NULL;
        x->clean = false;
        x->lost = true;
    }
    return *bd;
}

static hbg_task_id sub(bx *x, uint16_t kaic, uint16_t kaiv, uint8_t core, uint32_t blocks, uint32_t nin,
                       hbg_tensor *const *in, uint32_t nio, hbg_tensor *const *io, uint32_t nout,
                       hbg_tensor *const *out, const opt *p)
{
    hbg_arg args[HBG_MAX_TASK_TENSORS];
    uint32_t n = nin + nio + nout;
    if (x->dry) {
        if (x->ti < DSV4_OUT_TASKS)
            x->s->tn[x->ti] = (uint8_t)(n <= HBG_MAX_TASK_TENSORS ? n : 0);
        x->ti++;
        return HBG_TASK_NONE;
    }
    hbg_bound *bd = NULL;
    if (x->bound && x->ti < DSV4_OUT_TASKS && n <= HBG_MAX_TASK_TENSORS)
        bd = x->clean ? x->s->tb[x->ti] : NULL;
    if (!bd && n <= HBG_MAX_TASK_TENSORS) { /* else the submit reports it */
        uint32_t k = 0;
        for (uint32_t i = 0; i < nin; i++)
            args[k++] = (hbg_arg){in[i], HBG_IN};
        for (uint32_t i = 0; i < nio; i++)
            args[k++] = (hbg_arg){io[i], HBG_INOUT};
        for (uint32_t i = 0; i < nout; i++)
            args[k++] = (hbg_arg){out[i], HBG_OUT};
        if (x->bound && x->ti < DSV4_OUT_TASKS)
            bd = task_bound(x, x->ti, n, args);
    }
    x->ti += x->bound;
    uint64_t sc[4];
    int16_t sl[4];
    sc[0] = DSV4_DESC(nin, nio, nout, p ? p->flags : 0, x->salt++);
    sl[0] = -1;
    sc[1] = x->layer;
    sl[1] = x->lslot;
    uint32_t ns = 2;
    for (uint32_t e = 0; p && e < p->nextra; e++, ns++) {
        sc[ns] = p->extra[e];
        sl[ns] = p->xslot[e];
    }
    hbg_task t = {.kernel_aic = kaic, .kernel_aiv = kaiv, .core = core, .sync_start = p ? p->sync : 0,
                  .blocks = blocks, .ntensors = n, .args = args, .nscalars = ns, .scalars = sc,
                  .scalar_slots = sl, .ndeps = p ? p->ndeps : 0, .deps = p ? p->deps : NULL,
                  .pred = p ? p->pred : NULL};
    hbg_task_id id = HBG_TASK_NONE;
    if (bd) {
        t.ntensors = 0;
        t.args = NULL;
        hbg_submit_task_bound(x->o, &t, bd, &id);
    } else {
        hbg_submit_task(x->o, &t, &id);
    }
    return id;
}

/* hbg_alloc_tensors, and outside the Graph a check of each buffer given
 * against the one the last pass's allocation at this place gave: one
 * that differs makes the tasks from here on set their bounds again. */
static void alloc_n(bx *x, uint32_t n, hbg_tensor *const *ts)
{
    if (x->dry)
        return;
    hbg_task_id id;
    hbg_alloc_tensors(x->o, n, ts, &id);
    if (!x->bound)
        return;
    for (uint32_t i = 0; i < n; i++, x->bi++) {
        if (x->bi >= DSV4_OUT_BUFS) {
            x->clean = false;
            continue;
        }
        dsv4_buf *b = &x->s->abuf[x->bi];
        const hbg_tensor *t = ts[i];
        if (b->addr != t->addr || b->nbytes != t->nbytes || b->creator != t->creator) {
            *b = (dsv4_buf){t->addr, t->nbytes, t->creator};
            x->clean = false;
        }
    }
}

static hbg_task_id aiv(bx *x, uint32_t nin, hbg_tensor *const *in, uint32_t nout, hbg_tensor *const *out)
{
    return sub(x, NONE, DSV4_K_GEN_AIV, HBG_CORE_AIV, 1, nin, in, 0, NULL, nout, out, NULL);
}

static hbg_task_id aic(bx *x, uint32_t nin, hbg_tensor *const *in, uint32_t nout, hbg_tensor *const *out,
                       const opt *p)
{
    return sub(x, DSV4_K_GEN_AIC, NONE, HBG_CORE_AIC, 2, nin, in, 0, NULL, nout, out, p);
}

static void dummy(bx *x, uint32_t ndeps, const hbg_task_id *deps, hbg_task_id *id)
{
    *id = HBG_TASK_NONE;
    if (!x->dry)
        hbg_submit_dummy(x->o, ndeps, deps, id);
}

/* The orchestrator's error; none in a dry run. */
static hbg_status failed(const bx *x)
{
    return x->dry ? HBG_OK : hbg_orch_error(x->o);
}

/* Spreads nb buffers over na alloc_tensors calls, round robin. */
static void alloc_rr(bx *x, uint32_t na, hbg_tensor *buf, uint32_t nb)
{
    for (uint32_t a = 0; a < na; a++) {
        hbg_tensor *ts[HBG_MAX_ALLOC_TENSORS];
        uint32_t n = 0;
        for (uint32_t b = a; b < nb && n < HBG_MAX_ALLOC_TENSORS; b += na)
            ts[n++] = &buf[b];
        alloc_n(x, n, ts);
    }
}

/* A row-major 2-D (cols 0: 1-D) view `off` elements into b's view,
 * written to *v with hbg_tensor_view_into: the submit that follows reads
 * it back 16 bytes at a time, which waits on a view built field by field
 * (the templates' reserved fields are zero, so the bytes are the same). */
static void part(hbg_tensor *v, const hbg_tensor *b, uint64_t off, uint32_t rows, uint32_t cols)
{
    const uint32_t shape[2] = {rows, cols};
    hbg_tensor_view_into(v, b, b->offset + off, cols ? 2 : 1, shape, NULL);
}

/* part() for an argument only: left unbuilt where the tasks that read it
 * pass their bounds unread (outside the Graph, x clean). Every such view
 * is read by tasks before the block's next allocation, the one thing that
 * can make x unclean and those tasks build their arguments. */
static void arg_part(const bx *x, hbg_tensor *v, const hbg_tensor *b, uint64_t off, uint32_t rows, uint32_t cols)
{
    if (!(x->bound && x->clean))
        part(v, b, off, rows, cols);
}

/* ---- attention ---------------------------------------------------------- */

typedef struct attn_shape {
    uint8_t nalloc, pre, post, aiv, nmix, ncache, nx;
    uint32_t salt;
} attn_shape;

static const attn_shape SWA = {15, 14, 4, 29, 1, 1, 0, 0x1000};
static const attn_shape CSA = {17, 20, 6, 42, 2, 2, 5, 0x2000};
static const attn_shape HCA = {16, 16, 5, 33, 1, 1, 2, 0x3000};

typedef struct attn_io {
    hbg_tensor *in, *out;   /* out NULL: the block allocates its output */
    uint8_t out_dir;
    hbg_tensor *hc, *norm, *lane[DSV4_LANES], *sink, *wo, *hcpost, *x[DSV4_NX];
    hbg_tensor *cache[2];
    hbg_tensor *rope_cos, *rope_sin, *pos;
    uint64_t cache_len;
    int16_t cache_slot;
    bool early_read;        /* DSV4_FAULT_EARLY_READ */
} attn_io;

/* Weights from an array laid out [hc, norm, nl lanes, sink, wo, hcpost, extras]. */
static void attn_weights(attn_io *a, hbg_tensor *const *w, uint32_t nl, uint32_t nx)
{
    a->hc = w[0], a->norm = w[1];
    for (uint32_t i = 0; i < nl; i++)
        a->lane[i] = w[2 + i];
    a->sink = w[2 + nl], a->wo = w[3 + nl], a->hcpost = w[4 + nl];
    for (uint32_t j = 0; j < nx; j++)
        a->x[j] = w[5 + nl + j];
}

/* hc-pre -> norm -> `pre` projection lanes (AIC, then AIV chains) -> cache
 * writes -> MIX attention (two for CSA: indexer, then sparse attention) ->
 * barrier -> output-projection tiles -> reduce -> hc-post. */
static void attention(bx *x, const attn_shape *sh, const attn_io *io, hbg_tensor *made)
{
    dsv4_state *s = x->s;
    x->salt = sh->salt;
    uint32_t chain = sh->aiv - 4u - sh->ncache, base = chain / sh->pre, rem = chain % sh->pre;
    hbg_tensor buf[2 + DSV4_LANES * 3 + 2 + 8 + 2];
    uint32_t nb = 2 + sh->pre + chain + sh->nmix + sh->post + 1 + (io->out == NULL);
    for (uint32_t b = 0; b < nb; b++)
        buf[b] = s->d_td;
    if (!io->out)
        buf[nb - 1] = s->d_state;
    alloc_rr(x, sh->nalloc, buf, nb);

    hbg_tensor *xh = &buf[0], *xn = &buf[1], *fin[DSV4_LANES];
    uint32_t b = 2;
    aiv(x, TL(io->in, io->hc), TL(xh));
    aiv(x, TL(xh, io->norm), TL(xn));
    for (uint32_t i = 0; i < sh->pre; i++) {
        hbg_tensor *p = &buf[b++];
        aic(x, TL(xn, io->lane[i]), TL(p), NULL);
        for (uint32_t c = 0; c < base + (i < rem); c++) {
            hbg_tensor *q = &buf[b++];
            aiv(x, TL(p, c == 0 && i < sh->nx ? io->x[i] : io->pos), TL(q));
            p = q;
        }
        fin[i] = p;
    }
    for (uint32_t c = 0; c < sh->ncache; c++)
        sub(x, NONE, DSV4_K_GEN_AIV, HBG_CORE_AIV, 1, TL(fin[c], io->pos), 1, &io->cache[c], 0, NULL, NULL);

    opt m = {.sync = 1, .nextra = 1, .extra = {io->cache_len}, .xslot = {io->cache_slot}};
    hbg_tensor *min[HBG_MAX_TASK_TENSORS], *o_att = NULL;
    hbg_task_id last = HBG_TASK_NONE;
    uint32_t half = sh->nmix == 2 ? sh->pre / 2 : 0, n = 0;
    if (sh->nmix == 2) {
        hbg_tensor *idx = &buf[b++];
        for (uint32_t i = 0; i < half; i++)
            min[n++] = fin[i];
        min[n++] = io->cache[1];
        min[n++] = io->sink;
        sub(x, DSV4_K_GEN_AIC, DSV4_K_MIX_AIV, HBG_CORE_MIX, 2, n, min, 0, NULL, 1, &idx, &m);
        n = 0;
        min[n++] = idx;
    }
    for (uint32_t i = half; i < sh->pre; i++)
        min[n++] = fin[i];
    min[n++] = io->cache[0];
    if (sh->nmix == 1)
        for (uint32_t c = 1; c < sh->ncache; c++)
            min[n++] = io->cache[c];
    min[n++] = io->sink;
    min[n++] = io->rope_cos;
    min[n++] = io->rope_sin;
    o_att = &buf[b++];
    last = sub(x, DSV4_K_GEN_AIC, DSV4_K_MIX_AIV, HBG_CORE_MIX, 2, n, min, 0, NULL, 1, &o_att, &m);

    hbg_task_id bar = HBG_TASK_NONE;
    dummy(x, 1, &last, &bar);
    uint32_t rows = DSV4_WR / sh->post;
    hbg_tensor *y[8], *z = &buf[b + sh->post];
    opt d = {.ndeps = 1, .deps = &bar};
    for (uint32_t j = 0; j < sh->post; j++) {
        y[j] = &buf[b + j];
        if (io->early_read && j + 1 == sh->post)
            aiv(x, sh->post, y, TL(z));
        hbg_tensor tile;
        arg_part(x, &tile, io->wo, (uint64_t)j * rows * DSV4_D, rows, DSV4_D);
        aic(x, TL(o_att, &tile), TL(y[j]), &d);
    }
    if (!io->early_read)
        aiv(x, sh->post, y, TL(z));
    b += sh->post + 1;
    hbg_tensor *out = io->out ? io->out : &buf[b++];
    if (io->out_dir == HBG_INOUT)
        sub(x, NONE, DSV4_K_GEN_AIV, HBG_CORE_AIV, 1, TL(z, io->in, io->hcpost), 1, &out, 0, NULL, NULL);
    else
        aiv(x, TL(z, io->in, io->hcpost), 1, &out);
    if (made && !io->out)
        *made = *out;
}

/* ---- MoE ---------------------------------------------------------------- */

typedef struct moe_io {
    hbg_tensor *in, *out;   /* out NULL: the block allocates its output */
    uint8_t out_dir;
    hbg_tensor *const *w;   /* BM_COUNT weights, boundary order */
    hbg_tensor *load, *tokens;
    uint64_t epoch;
    int16_t eslot;
    bool hash, tail, flip;
} moe_io;

enum {
    M_COEF, M_XM, M_XN, M_LOGITS, M_TOPK, M_WTS, M_SG, M_SU, M_SA, M_SY, M_XQ, M_PKT, M_SENT, M_ARR, M_PPKT,
    M_RECV, M_CNT, M_Y, M_SENT2, M_ARR2, M_PY, M_PYD, M_MOUT, M_COUT, M_RES, M_OUT, M_FIN, M_NBUF
};

/* The block's ten non-expert allocations (-1 ends a group). */
static const int8_t moe_groups[10][6] = {
    {M_COEF, M_XM, M_XN, -1},         {M_LOGITS, -1},
    {M_TOPK, M_WTS, -1},              {M_SG, M_SU, M_SA, M_SY, -1},
    {M_XQ, M_PKT, -1},                {M_SENT, M_ARR, M_PPKT, -1},
    {M_RECV, M_CNT, -1},              {M_Y, -1},
    {M_SENT2, M_ARR2, M_PY, M_PYD, -1}, {M_MOUT, M_COUT, M_RES, M_OUT, M_FIN, -1},
};

/* pre-norm and mixing -> gate (MIX) -> routing -> shared expert -> dispatch
 * (pack, push into the peer's window, wait, gather, permute) -> 32 experts,
 * predicated on their row count -> combine (push, wait, gather) -> merge ->
 * shared add -> residual -> hc-post. */
static void moe(bx *x, const moe_io *io, hbg_tensor *made, hbg_tensor *final)
{
    dsv4_state *s = x->s;
    x->salt = 0x4000;
    hbg_tensor B[M_NBUF];
    for (int i = 0; i < M_NBUF; i++)
        B[i] = s->d_td;
    B[M_LOGITS] = s->d_logits;
    B[M_TOPK] = B[M_WTS] = s->d_topk;
    B[M_PKT] = B[M_PPKT] = s->d_pkt;
    B[M_SENT] = B[M_ARR] = B[M_SENT2] = B[M_ARR2] = s->d_word;
    B[M_RECV] = B[M_Y] = B[M_PY] = B[M_PYD] = s->d_y;
    B[M_CNT] = s->d_counts;
    B[M_OUT] = B[M_FIN] = s->d_state;
    for (int g = 0; g < 10; g++) {
        hbg_tensor *ts[6];
        uint32_t n = 0;
        for (int k = 0; moe_groups[g][k] >= 0; k++) {
            int m = moe_groups[g][k];
            if ((m == M_OUT && io->out) || (m == M_FIN && !io->tail))
                continue;
            ts[n++] = &B[m];
        }
        alloc_n(x, n, ts);
    }
    hbg_tensor *const *w = io->w;
    hbg_tensor *out = io->out ? io->out : &B[M_OUT];

    aic(x, TL(io->in, w[BM_HCFN]), TL(&B[M_COEF]), NULL);
    aiv(x, TL(io->in, &B[M_COEF]), TL(&B[M_XM]));
    aiv(x, TL(&B[M_XM], w[BM_NORM]), TL(&B[M_XN]));
    sub(x, DSV4_K_GEN_AIC, DSV4_K_MIX_AIV, HBG_CORE_MIX, 2, TL(&B[M_XN], w[BM_GATE], w[BM_GATEB]), 0, NULL,
        TL(&B[M_LOGITS]), NULL);
    opt r = {.flags = io->hash ? DSV4_FLAG_HASH_ROUTE : 0};
    if (io->hash)
        sub(x, NONE, DSV4_K_ROUTE, HBG_CORE_AIV, 1, TL(&B[M_LOGITS], io->tokens), 0, NULL, TL(&B[M_TOPK]), &r);
    else
        sub(x, NONE, DSV4_K_ROUTE, HBG_CORE_AIV, 1, TL(&B[M_LOGITS]), 0, NULL, TL(&B[M_TOPK]), &r);
    aiv(x, TL(&B[M_LOGITS], &B[M_TOPK]), TL(&B[M_WTS]));
    aic(x, TL(&B[M_XN], w[BM_SH1]), TL(&B[M_SG]), NULL);
    aic(x, TL(&B[M_XN], w[BM_SH3]), TL(&B[M_SU]), NULL);
    aiv(x, TL(&B[M_SG], &B[M_SU]), TL(&B[M_SA]));
    aic(x, TL(&B[M_SA], w[BM_SH2]), TL(&B[M_SY]), NULL);

    /* dispatch */
    opt ex = {.nextra = 2, .extra = {io->epoch, 0}, .xslot = {io->eslot, -1}};
    aiv(x, TL(&B[M_XN]), TL(&B[M_XQ]));
    sub(x, NONE, DSV4_K_DISPATCH_META, HBG_CORE_AIV, 1, TL(&B[M_XQ], &B[M_TOPK]), 1, &io->load, TL(&B[M_PKT]),
        NULL);
    sub(x, NONE, DSV4_K_PUSH, HBG_CORE_AIV, 1, TL(&B[M_PKT]), 0, NULL, TL(&B[M_SENT]), &ex);
    sub(x, NONE, DSV4_K_WAIT, HBG_CORE_AIV, 1, TL(&B[M_SENT]), 0, NULL, TL(&B[M_ARR]), &ex);
    sub(x, NONE, DSV4_K_GATHER, HBG_CORE_AIV, 1, TL(&B[M_ARR]), 0, NULL, TL(&B[M_PPKT]), &ex);
    sub(x, NONE, DSV4_K_PERMUTE, HBG_CORE_AIV, 1, TL(&B[M_PKT], &B[M_PPKT]), 0, NULL,
        TL(&B[M_RECV], &B[M_CNT], &B[M_Y]), NULL);

    /* experts: each task runs only if its expert received a row */
    hbg_tensor eg[DSV4_EL][4], ed[DSV4_EL];
    hbg_task_id last[DSV4_EL];
    for (uint32_t e = 0; e < DSV4_EL; e++) {
        hbg_pred pr = {.t = &B[M_CNT], .byte_offset = 4u * e, .value = 0,
                       .op = io->flip ? HBG_CMP_EQ : HBG_CMP_NE, .elem_size = 4};
        opt p = {.pred = &pr};
        hbg_tensor *ts[4];
        for (int k = 0; k < 4; k++)
            eg[e][k] = s->d_ef, ts[k] = &eg[e][k];
        alloc_n(x, 4, ts);
        hbg_tensor rv;
        arg_part(x, &rv, &B[M_RECV], (uint64_t)e * DSV4_R * DSV4_D, DSV4_R, DSV4_D);
        uint64_t toff = (uint64_t)(e % 8) * DSV4_F * DSV4_D;
        hbg_tensor t1;
        arg_part(x, &t1, w[BM_EX1 + e / 8], toff, DSV4_F, DSV4_D);
        hbg_tensor t3;
        arg_part(x, &t3, w[BM_EX3 + e / 8], toff, DSV4_F, DSV4_D);
        hbg_tensor s1;
        arg_part(x, &s1, w[BM_S1 + e / 8], (uint64_t)(e % 8) * DSV4_F, DSV4_F, 0);
        sub(x, DSV4_K_GEN_AIC, NONE, HBG_CORE_AIC, 1, TL(&rv, &t1), 0, NULL, TL(&eg[e][0]), &p);
        sub(x, DSV4_K_GEN_AIC, NONE, HBG_CORE_AIC, 1, TL(&rv, &t3), 0, NULL, TL(&eg[e][1]), &p);
        sub(x, NONE, DSV4_K_GEN_AIV, HBG_CORE_AIV, 1, TL(&eg[e][0], &eg[e][1]), 0, NULL, TL(&eg[e][2]), &p);
        sub(x, NONE, DSV4_K_GEN_AIV, HBG_CORE_AIV, 1, TL(&eg[e][2], &s1), 0, NULL, TL(&eg[e][3]), &p);
    }
    for (uint32_t e = 0; e < DSV4_EL; e++) {
        hbg_pred pr = {.t = &B[M_CNT], .byte_offset = 4u * e, .value = 0,
                       .op = io->flip ? HBG_CMP_EQ : HBG_CMP_NE, .elem_size = 4};
        opt p = {.pred = &pr};
        ed[e] = s->d_ed;
        hbg_tensor *tp = &ed[e];
        alloc_n(x, 1, &tp);
        uint64_t toff = (uint64_t)(e % 8) * DSV4_F * DSV4_D;
        hbg_tensor t2;
        arg_part(x, &t2, w[BM_EX2 + e / 8], toff, DSV4_F, DSV4_D);
        hbg_tensor s2;
        arg_part(x, &s2, w[BM_S2 + e / 8], (uint64_t)(e % 8) * DSV4_F, DSV4_F, 0);
        hbg_tensor yv;
        arg_part(x, &yv, &B[M_Y], (uint64_t)e * DSV4_R * DSV4_D, DSV4_R, DSV4_D);
        hbg_tensor *yp = &yv;
        sub(x, DSV4_K_GEN_AIC, NONE, HBG_CORE_AIC, 1, TL(&eg[e][3], &t2), 0, NULL, TL(&ed[e]), &p);
        last[e] = sub(x, NONE, DSV4_K_GEN_AIV, HBG_CORE_AIV, 1, TL(&ed[e], &s2), 1, &yp, 0, NULL, &p);
    }

    /* combine */
    hbg_task_id bar = HBG_TASK_NONE;
    dummy(x, DSV4_EL, last, &bar);
    opt cx = {.nextra = 2, .extra = {io->epoch, 1}, .xslot = {io->eslot, -1}, .ndeps = 1, .deps = &bar};
    sub(x, NONE, DSV4_K_PUSH, HBG_CORE_AIV, 1, TL(&B[M_Y]), 0, NULL, TL(&B[M_SENT2]), &cx);
    cx.ndeps = 0;
    sub(x, NONE, DSV4_K_WAIT, HBG_CORE_AIV, 1, TL(&B[M_SENT2]), 0, NULL, TL(&B[M_ARR2]), &cx);
    sub(x, NONE, DSV4_K_GATHER, HBG_CORE_AIV, 1, TL(&B[M_ARR2]), 0, NULL, TL(&B[M_PY]), &cx);
    aiv(x, TL(&B[M_PY]), TL(&B[M_PYD]));
    sub(x, NONE, DSV4_K_MERGE, HBG_CORE_AIV, 1, TL(&B[M_PKT], &B[M_PPKT], &B[M_WTS], &B[M_Y], &B[M_PYD]), 0, NULL,
        TL(&B[M_MOUT]), NULL);
    aiv(x, TL(&B[M_MOUT], &B[M_SY]), TL(&B[M_COUT]));
    aiv(x, TL(&B[M_COUT], &B[M_XM]), TL(&B[M_RES]));
    if (io->out_dir == HBG_INOUT)
        sub(x, NONE, DSV4_K_GEN_AIV, HBG_CORE_AIV, 1, TL(&B[M_RES], io->in, w[BM_HCPOST], &B[M_COEF]), 1, &out, 0,
            NULL, NULL);
    else
        aiv(x, TL(&B[M_RES], io->in, w[BM_HCPOST], &B[M_COEF]), 1, &out);
    if (io->tail)
        aiv(x, TL(out), TL(&B[M_FIN]));
    if (made && !io->out)
        *made = *out;
    if (final && io->tail)
        *final = B[M_FIN];
}

/* ---- the layer-pair Graph ----------------------------------------------- */

static hbg_status pair_body(hbg_orch *o, void *ctx, const hbg_boundary *b)
{
    dsv4_state *s = ctx;
    if (b->ntensors != B_COUNT || b->nscalars != S_COUNT)
        return hbg_orch_fail(o, HBG_E_INVAL, "the layer pair takes %u boundary tensors and %u scalars, not %u and %u",
                             B_COUNT, S_COUNT, b->ntensors, b->nscalars);
    hbg_tensor *B[B_COUNT];
    for (uint32_t k = 0; k < B_COUNT; k++)
        B[k] = b->args[k].t;
    hbg_tensor st[3] = {s->d_state, s->d_state, s->d_state};
    hbg_tensor *sp[3] = {&st[0], &st[1], &st[2]};
    hbg_task_id id;
    hbg_alloc_tensors(o, 3, sp, &id);

    bx x = {.o = o, .s = s, .layer = b->scalars[S_LAYER_CSA], .lslot = S_LAYER_CSA};
    attn_io a = {.in = B[B_H_IN], .out = &st[0], .out_dir = HBG_OUT,
                 .cache = {B[B_CSA_KV], B[B_CSA_IDX]}, .rope_cos = B[B_ROPE_COS], .rope_sin = B[B_ROPE_SIN],
                 .pos = B[B_POS], .cache_len = b->scalars[S_CACHE_LEN], .cache_slot = S_CACHE_LEN};
    attn_weights(&a, B + B_CSA, DSV4_LANES, DSV4_NX);
    attention(&x, &CSA, &a, NULL);
    if (hbg_orch_error(o))
        return HBG_OK;
    moe_io m = {.in = &st[0], .out = &st[1], .out_dir = HBG_OUT, .w = B + B_M1, .load = B[B_LOAD],
                .epoch = b->scalars[S_EPOCH_M1], .eslot = S_EPOCH_M1, .flip = s->fault == DSV4_FAULT_FLIP_PRED};
    moe(&x, &m, NULL, NULL);
    if (hbg_orch_error(o))
        return HBG_OK;

    x.layer = b->scalars[S_LAYER_HCA];
    x.lslot = S_LAYER_HCA;
    attn_io h = {.in = &st[1], .out = &st[2], .out_dir = HBG_OUT, .cache = {B[B_HCA_KV]},
                 .rope_cos = B[B_ROPE_COS], .rope_sin = B[B_ROPE_SIN], .pos = B[B_POS],
                 .cache_len = b->scalars[S_CACHE_LEN], .cache_slot = S_CACHE_LEN};
    attn_weights(&h, B + B_HCA, HCA.pre, HCA.nx);
    attention(&x, &HCA, &h, NULL);
    if (hbg_orch_error(o))
        return HBG_OK;
    moe_io m2 = {.in = &st[2], .out = B[B_H_OUT], .out_dir = HBG_INOUT, .w = B + B_M2, .load = B[B_LOAD],
                 .epoch = b->scalars[S_EPOCH_M2], .eslot = S_EPOCH_M2};
    moe(&x, &m2, NULL, NULL);
    return HBG_OK;
}

/* ---- views and the boundary --------------------------------------------- */

static void fill(const dsv4_state *s, const hbg_tensor *args, uint32_t first, uint32_t n, uint64_t layer,
                 hbg_tensor *dst)
{
    for (uint32_t i = 0; i < n; i++) {
        const dsv4_slot *sl = &s->bslot[first + i];
        hbg_tensor t = sl->tmpl;
        t.addr = args[sl->arg].addr;
        t.nbytes = args[sl->arg].nbytes;
        if (sl->per_layer)
            t.offset += (layer + sl->layer_delta) * sl->slice;
        dst[i] = t;
    }
}

/* The same slots one layer on: the views fill() made for an earlier layer
 * differ only in the offset of those that are per layer, so only that
 * word is written (a decode step's boundary moves by a slice a layer). */
static void advance(const dsv4_state *s, uint32_t first, uint32_t n, uint64_t layer, hbg_tensor *dst)
{
    for (uint32_t i = 0; i < n; i++) {
        const dsv4_slot *sl = &s->bslot[first + i];
        if (sl->per_layer)
            dst[i].offset = sl->tmpl.offset + (layer + sl->layer_delta) * sl->slice;
    }
}

static hbg_tensor layer_view(const dsv4_state *s, const hbg_tensor *args, uint32_t arg, const hbg_tensor *tmpl,
                             uint64_t layer)
{
    hbg_tensor t = *tmpl;
    t.addr = args[arg].addr;
    t.nbytes = args[arg].nbytes;
    t.offset = layer * s->slice[arg];
    return t;
}

static void outside_attention(bx *x, const attn_shape *sh, const hbg_tensor *args, uint32_t layer, hbg_tensor *in,
                              hbg_tensor *made, bool early)
{
    dsv4_state *s = x->s;
    hbg_tensor w[30], g[3], c[2];
    hbg_tensor *wp[30];
    fill(s, args, B_CSA, 30, layer, w);
    fill(s, args, B_ROPE_COS, 3, 0, g);
    for (int i = 0; i < 30; i++)
        wp[i] = &w[i];
    attn_io a = {.in = in, .out_dir = HBG_OUT, .rope_cos = &g[0], .rope_sin = &g[1], .pos = &g[2],
                 .cache_len = DSV4_CACHE, .cache_slot = -1, .early_read = early};
    attn_weights(&a, wp, DSV4_LANES, DSV4_NX);
    if (sh == &SWA) {
        c[0] = layer_view(s, args, A_SWA_KV, &s->t_cache, layer);
    } else {
        c[0] = layer_view(s, args, A_CSA_KV, &s->t_cache, layer);
        c[1] = layer_view(s, args, A_CSA_IDX, &s->t_cache, layer);
    }
    a.cache[0] = &c[0], a.cache[1] = &c[1];
    x->layer = layer;
    x->lslot = -1;
    attention(x, sh, &a, made);
}

static void outside_moe(bx *x, const hbg_tensor *args, uint32_t layer, hbg_tensor *in, hbg_tensor *load,
                        hbg_tensor *tokens, bool hash, hbg_tensor *made, hbg_tensor *final)
{
    dsv4_state *s = x->s;
    hbg_tensor w[BM_COUNT];
    hbg_tensor *wp[BM_COUNT];
    fill(s, args, B_M1, BM_COUNT, layer, w);
    for (int i = 0; i < BM_COUNT; i++)
        wp[i] = &w[i];
    moe_io m = {.in = in, .out_dir = HBG_OUT, .w = wp, .load = load, .tokens = tokens,
                .epoch = s->epoch++, .eslot = -1, .hash = hash, .tail = final != NULL};
    x->layer = layer;
    x->lslot = -1;
    moe(x, &m, made, final);
}

/* The layer pairs' boundaries, built into their bounds when what they
 * are built from changed: the first pass, a caller buffer that moved, a
 * heap that gave the prologue or layer 1 other buffers. Otherwise the
 * bounds hold this pass's boundaries already, and each replay is passed
 * its bound unread. h1: layer 1's output, the first pair's input. */
static hbg_status sync_pairs(hbg_orch *o, dsv4_state *s, const hbg_tensor *args, const hbg_tensor *h1,
                             const hbg_tensor *ping, const hbg_tensor *pong, const hbg_tensor *load)
{
    const hbg_tensor *now[4] = {h1, ping, pong, load};
    bool same = s->pairs_built && memcmp(s->synced_args, args, sizeof s->synced_args) == 0;
    for (int i = 0; i < 4 && same; i++)
        same = memcmp(now[i], &s->synced_pass[i], sizeof s->synced_pass[i]) == 0;
    if (same)
        return HBG_OK;
    const hbg_tensor *pingpong[2] = {ping, pong};
    fill(s, args, B_ROPE_COS, 3, 0, &s->bt[B_ROPE_COS]);
    s->bt[B_LOAD] = *load;
    for (uint32_t k = 0; k < DSV4_PAIRS; k++) {
        uint64_t L = 2 + 2 * k;
        s->bt[B_H_IN] = k == 0 ? *h1 : *pingpong[(k - 1) & 1];
        s->bt[B_H_OUT] = *pingpong[k & 1];
        if (k == 0) {
            fill(s, args, B_CSA, B_NIN - B_CSA, L, &s->bt[B_CSA]);
            fill(s, args, B_CSA_KV, 3, L, &s->bt[B_CSA_KV]);
        } else {
            advance(s, B_CSA, B_NIN - B_CSA, L, &s->bt[B_CSA]);
            advance(s, B_CSA_KV, 3, L, &s->bt[B_CSA_KV]);
        }
        hbg_status st = case_bound_fill(o, "layer pair", k, s->pair[k], B_COUNT, s->ba);
        if (st)
            return st;
    }
    memcpy(s->synced_args, args, sizeof s->synced_args);
    for (int i = 0; i < 4; i++)
        s->synced_pass[i] = *now[i];
    s->pairs_built = true;
    return HBG_OK;
}

/* ---- the program -------------------------------------------------------- */

/* The program itself, x's orchestrator and state set; x counts its
 * tasks and buffers as it goes. */
static hbg_status program(bx *x, const hbg_tensor *args)
{
    hbg_orch *o = x->o;
    dsv4_state *s = x->s;
    hbg_tensor tokens = args[A_TOKENS], embed = args[A_EMBED];

    /* prologue: embedding, hyper-connection expansion, the Graph's
     * ping-pong state, the running expert load */
    x->salt = 0x6000;
    hbg_tensor pro[5] = {s->d_td, s->d_state, s->d_state, s->d_state, s->d_load};
    hbg_tensor *pp[5] = {&pro[0], &pro[1], &pro[2], &pro[3], &pro[4]};
    hbg_task_id id;
    alloc_n(x, 5, pp);
    hbg_tensor *xe = &pro[0], *s0 = &pro[1], *ping = &pro[2], *pong = &pro[3], *load = &pro[4];
    aiv(x, TL(&tokens, &embed), TL(xe));
    aiv(x, TL(xe), TL(s0));
    aiv(x, TL(&tokens), TL(ping, pong));
    aiv(x, 0, NULL, TL(load));

    /* layers 0 and 1: sliding-window attention, hash-routed MoE */
    /* A failed block stops the program: in an eager run every later
     * cross-rank wait would otherwise sit out its own timeout. */
    hbg_tensor st[4];
    outside_attention(x, &SWA, args, 0, s0, &st[0], s->fault == DSV4_FAULT_EARLY_READ);
    outside_moe(x, args, 0, &st[0], load, &tokens, true, &st[1], NULL);
    if (failed(x))
        return failed(x);
    outside_attention(x, &SWA, args, 1, &st[1], &st[2], false);
    outside_moe(x, args, 1, &st[2], load, &tokens, true, &st[3], NULL);
    if (failed(x))
        return failed(x);

    /* layers 2..41: the layer-pair Graph, ping-ponging the state */
    hbg_tensor *pingpong[2] = {ping, pong};
    hbg_status bst = x->dry ? HBG_OK : sync_pairs(x->o, s, args, &st[3], ping, pong, load);
    if (bst)
        return bst;
    hbg_boundary rest = {.nscalars = S_COUNT, .scalars = s->bs};
    for (uint32_t k = 0; k < DSV4_PAIRS && !x->dry; k++) {
        uint64_t L = 2 + 2 * k;
        s->bs[S_LAYER_CSA] = L;
        s->bs[S_LAYER_HCA] = L + 1;
        s->bs[S_EPOCH_M1] = s->epoch++;
        s->bs[S_EPOCH_M2] = s->epoch++;
        if (hbg_submit_graph_bound(o, PAIR_KEY, pair_body, s, s->pair[k], &rest, 0, &id))
            return failed(x);
    }

    /* layer 42: CSA attention and the last MoE, which also collapses the
     * state for the head */
    hbg_tensor a42, m42, fin;
    outside_attention(x, &CSA, args, 42, pingpong[1], &a42, false);
    outside_moe(x, args, 42, &a42, load, &tokens, false, &m42, &fin);
    if (failed(x))
        return failed(x);

    /* head: final norm, LM head (this rank's vocabulary slice), argmax,
     * cross-rank gather, sampling */
    x->salt = 0x5000;
    x->layer = DSV4_LAYERS;
    hbg_tensor hb[12];
    for (int i = 0; i < 8; i++)
        hb[i] = i < 2 ? s->d_td : s->d_lm;
    hb[8] = s->d_amax, hb[9] = s->d_word, hb[10] = s->d_word, hb[11] = s->d_amax;
    hbg_tensor *h0[8], *h1[4];
    for (int i = 0; i < 8; i++)
        h0[i] = &hb[i];
    for (int i = 0; i < 4; i++)
        h1[i] = &hb[8 + i];
    alloc_n(x, 8, h0);
    alloc_n(x, 4, h1);
    hbg_tensor hc = args[A_HC_HEAD], fnorm = args[A_FINAL_NORM], lm = args[A_LM_HEAD];
    hbg_tensor logits = args[A_OUT_LOGITS], result = args[A_OUT_RESULT];
    aiv(x, TL(&fin, &hc), TL(&hb[0]));
    aiv(x, TL(&hb[0], &fnorm), TL(&hb[1]));
    for (uint32_t j = 0; j < 6; j++) {
        hbg_tensor tile;
        arg_part(x, &tile, &lm, (uint64_t)j * 8 * DSV4_D, 8, DSV4_D);
        aic(x, TL(&hb[1], &tile), TL(&hb[2 + j]), NULL);
    }
    aiv(x, 6, h0 + 2, TL(&logits));
    sub(x, NONE, DSV4_K_ARGMAX, HBG_CORE_AIV, 1, TL(&logits), 0, NULL, TL(&hb[8]), NULL);
    opt ex = {.nextra = 2, .extra = {s->epoch++, 0}, .xslot = {-1, -1}};
    sub(x, NONE, DSV4_K_PUSH, HBG_CORE_AIV, 1, TL(&hb[8]), 0, NULL, TL(&hb[9]), &ex);
    sub(x, NONE, DSV4_K_WAIT, HBG_CORE_AIV, 1, TL(&hb[9]), 0, NULL, TL(&hb[10]), &ex);
    sub(x, NONE, DSV4_K_GATHER, HBG_CORE_AIV, 1, TL(&hb[10]), 0, NULL, TL(&hb[11]), &ex);
    sub(x, NONE, DSV4_K_SAMPLE, HBG_CORE_AIV, 1, TL(&hb[8], &hb[11], load), 0, NULL, TL(&result), NULL);
    return failed(x);
}

hbg_status dsv4_orchestrate(hbg_orch *o, void *ctx)
{
    dsv4_state *s = ctx;
    if (hbg_orch_nargs(o) != A_COUNT || hbg_orch_nranks(o) != DSV4_RANKS)
        return hbg_orch_fail(o, HBG_E_INVAL, "dsv4 takes %u caller tensors on %u ranks, not %u on %u", A_COUNT,
                             DSV4_RANKS, hbg_orch_nargs(o), hbg_orch_nranks(o));
    const hbg_tensor *args = hbg_orch_arg(o, 0);
    /* The outside tasks' bounds hold this pass's arguments while the
     * allocations repeat the last complete pass's: that pass had these
     * caller tensors and this fault. A pass that fails leaves them to be
     * set again. */
    bx x = {.o = o, .s = s, .lslot = -1, .bound = !s->plain_tasks};
    x.clean = s->tasks_built && s->tasks_fault == s->fault &&
              memcmp(s->tasks_args, args, sizeof s->tasks_args) == 0;
    s->tasks_built = false;
    s->tasks_reset = s->tasks_made = 0;
    hbg_status st = program(&x, args);
    if (st == HBG_OK && x.bound) {
        memcpy(s->tasks_args, args, sizeof s->tasks_args);
        s->tasks_fault = s->fault;
        /* A bound that could not be set is left NULL: the next pass
         * builds and sets every one again. Tasks and buffers past the
         * tables need nothing: such a task never has a bound, such a
         * buffer makes every pass unclean from there on. */
        s->tasks_built = !x.lost;
    }
    return st;
}

/* ---- templates (setup, once) -------------------------------------------- */

static hbg_tensor desc(unsigned ndim, uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t shape[3] = {a, b, c};
    return hbg_tensor_desc(HBG_U32, ndim, shape);
}

static void slot(dsv4_state *s, uint32_t k, uint32_t arg, const hbg_tensor *tmpl, uint64_t off, uint8_t delta)
{
    dsv4_slot *sl = &s->bslot[k];
    sl->tmpl = *tmpl;
    sl->tmpl.addr = 0;
    sl->tmpl.nbytes = 0;
    sl->tmpl.offset = off;
    sl->arg = (uint16_t)arg;
    sl->layer_delta = delta;
    sl->per_layer = s->slice[arg] != 0;
    sl->slice = s->slice[arg];
}

static void attn_slots(dsv4_state *s, uint32_t first, uint32_t nl, uint32_t nx, uint8_t delta,
                       const hbg_tensor *w)
{
    uint32_t k = first;
    slot(s, k++, A_AW_HC, w, 0, delta);
    slot(s, k++, A_AW_NORM, w, 0, delta);
    for (uint32_t i = 0; i < nl; i++)
        slot(s, k++, A_AW_LANE0 + i, w, 0, delta);
    slot(s, k++, A_AW_SINK, w, 0, delta);
    slot(s, k++, A_AW_WO, w, 0, delta);
    slot(s, k++, A_AW_HCPOST, w, 0, delta);
    for (uint32_t j = 0; j < nx; j++)
        slot(s, k++, A_AW_X0 + j, w, 0, delta);
}

static void moe_slots(dsv4_state *s, uint32_t first, uint8_t delta, const hbg_tensor *w, const hbg_tensor *grp,
                      const hbg_tensor *sgrp)
{
    static const uint16_t kinds[8] = {A_MW_HCFN, A_MW_NORM, A_MW_GATE, A_MW_GATEB,
                                      A_MW_SH1,  A_MW_SH3,  A_MW_SH2,  A_MW_HCPOST};
    for (uint32_t i = 0; i < 8; i++)
        slot(s, first + i, kinds[i], w, 0, delta);
    for (uint32_t g = 0; g < DSV4_GROUPS; g++) {
        uint64_t eo = (uint64_t)g * 8 * DSV4_F * DSV4_D, so = (uint64_t)g * 8 * DSV4_F;
        slot(s, first + BM_EX1 + g, A_MW_EX1, grp, eo, delta);
        slot(s, first + BM_EX3 + g, A_MW_EX3, grp, eo, delta);
        slot(s, first + BM_EX2 + g, A_MW_EX2, grp, eo, delta);
        slot(s, first + BM_S1 + g, A_MW_S1, sgrp, so, delta);
        slot(s, first + BM_S2 + g, A_MW_S2, sgrp, so, delta);
    }
}

/* The outside tasks' bounds, one per task with its argument count,
 * holding placeholders until the first pass sets them: made here, in
 * setup, as a bound's memory is new to the process and the first pass
 * would otherwise pay its page faults (a dsv4 rank's cold bind was 2.7
 * times as long). The counts come from a dry run of the program. */
static hbg_status make_task_bounds(dsv4_state *s)
{
    hbg_tensor args[A_COUNT];
    for (uint32_t a = 0; a < A_COUNT; a++)
        args[a] = s->args[a].layout;
    bx x = {.s = s, .lslot = -1, .bound = true, .dry = true};
    uint64_t epoch = s->epoch;
    program(&x, args);
    s->epoch = epoch;
    hbg_tensor none = {0};
    hbg_arg ph[HBG_MAX_TASK_TENSORS];
    for (uint32_t i = 0; i < HBG_MAX_TASK_TENSORS; i++)
        ph[i] = (hbg_arg){&none, HBG_IN};
    for (uint32_t k = 0; k < x.ti && k < DSV4_OUT_TASKS; k++) {
        hbg_status st = hbg_bound_create(s->tn[k], ph, &s->tb[k]);
        if (st) {
            dsv4_release(s);
            return st;
        }
    }
    return HBG_OK;
}

hbg_status dsv4_prepare(dsv4_state *s)
{
    s->d_td = desc(2, DSV4_T, DSV4_D, 0);
    s->d_state = desc(3, DSV4_NS, DSV4_T, DSV4_D);
    s->d_logits = desc(2, DSV4_T, DSV4_E, 0);
    s->d_topk = desc(2, DSV4_T, DSV4_K, 0);
    s->d_pkt = desc(1, DSV4_T * (DSV4_D + DSV4_K), 0, 0);
    s->d_y = desc(3, DSV4_EL, DSV4_R, DSV4_D);
    s->d_counts = desc(1, DSV4_EL, 0, 0);
    s->d_word = desc(1, 1, 0, 0);
    s->d_amax = desc(2, DSV4_T, 2, 0);
    s->d_lm = desc(2, DSV4_T, 8, 0);
    s->d_ef = desc(2, DSV4_R, DSV4_F, 0);
    s->d_ed = desc(2, DSV4_R, DSV4_D, 0);
    s->d_load = desc(1, DSV4_E, 0, 0);
    s->t_cache = desc(2, DSV4_CACHE, DSV4_D, 0);
    hbg_tensor w = desc(2, DSV4_WR, DSV4_D, 0), grp = desc(3, 8, DSV4_F, DSV4_D), sgrp = desc(2, 8, DSV4_F, 0);

    slot(s, B_ROPE_COS, A_ROPE_COS, &s->args[A_ROPE_COS].layout, 0, 0);
    slot(s, B_ROPE_SIN, A_ROPE_SIN, &s->args[A_ROPE_SIN].layout, 0, 0);
    slot(s, B_POS, A_POS, &s->args[A_POS].layout, 0, 0);
    attn_slots(s, B_CSA, DSV4_LANES, DSV4_NX, 0, &w);
    attn_slots(s, B_HCA, HCA.pre, HCA.nx, 1, &w);
    moe_slots(s, B_M1, 0, &w, &grp, &sgrp);
    moe_slots(s, B_M2, 1, &w, &grp, &sgrp);
    slot(s, B_CSA_KV, A_CSA_KV, &s->t_cache, 0, 0);
    slot(s, B_CSA_IDX, A_CSA_IDX, &s->t_cache, 0, 0);
    slot(s, B_HCA_KV, A_HCA_KV, &s->t_cache, 0, 1);
    s->bslot[B_H_IN].arg = s->bslot[B_H_OUT].arg = s->bslot[B_LOAD].arg = 0xffff;
    for (uint32_t k = 0; k < B_COUNT; k++)
        s->ba[k] = (hbg_arg){&s->bt[k], k < B_NIN ? HBG_IN : HBG_INOUT};

    /* The constants a layer pair is told: model dimensions and the
     * attention geometry of the original (window, compression ratios,
     * index top-k), so the Graph is as wide as the original's. */
    static const uint64_t consts[S_COUNT - S_CONST0] = {
        DSV4_T, DSV4_D, DSV4_NS, DSV4_E, DSV4_EL, DSV4_K, DSV4_R, DSV4_F, DSV4_VL, DSV4_CACHE,
        128, 4, 128, 512, 64, 1, 2, 6, 7168, 4096, 512, 64, 43, 3, 8, 16, 2};
    for (uint32_t i = 0; i < S_COUNT - S_CONST0; i++)
        s->bs[S_CONST0 + i] = consts[i];
    /* What the pairs' slots hold is set by the first pass (sync_pairs). */
    for (uint32_t k = 0; k < DSV4_PAIRS; k++) {
        hbg_status st = hbg_bound_create(B_COUNT, s->ba, &s->pair[k]);
        if (st) {
            dsv4_release(s);
            return st;
        }
    }
    s->pairs_built = false;
    return make_task_bounds(s);
}

void dsv4_release(dsv4_state *s)
{
    if (!s)
        return;
    for (uint32_t k = 0; k < DSV4_PAIRS; k++) {
        hbg_bound_destroy(s->pair[k]);
        s->pair[k] = NULL;
    }
    for (uint32_t k = 0; k < DSV4_OUT_TASKS; k++) {
        hbg_bound_destroy(s->tb[k]);
        s->tb[k] = NULL;
    }
}
