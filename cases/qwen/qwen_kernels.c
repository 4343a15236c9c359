/* qwen kernels: the device side of the layer, in plain C.
 *
 * Every kernel reads its views through their strides, so a tile handed to
 * it is a window on a larger matrix and nothing is copied. Shapes come from
 * the tensors themselves; a shape the kernel cannot serve fails the run
 * (return 1) instead of reading out of bounds.
 *
 * Matmul K-splits that share an output accumulate into it with atomic adds
 * (the output was zeroed by a seed node), so the order of the K-split
 * contributions varies from run to run at the last bit; the golden is a
 * tolerance for that reason, among others.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "hbg/kernel.h"
#include "hbg/orch.h"
#include "qwen/qwen_internal.h"

typedef uint32_t __attribute__((may_alias)) u32_alias;

#define CHUNK 256      /* output columns accumulated at once */
#define MAX_K 4096     /* K-split width a matmul block can take */
#define MAX_HEAD 128

static void atomic_addf(float *p, float v)
{
    u32_alias *q = (u32_alias *)p;
    uint32_t old = __atomic_load_n(q, __ATOMIC_RELAXED), nw;
    do {
        float f;
        memcpy(&f, &old, sizeof f);
        f += v;
        memcpy(&nw, &f, sizeof nw);
    } while (!__atomic_compare_exchange_n(q, &old, nw, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
}

static inline float *fp(const hbg_tensor *t)
{
    return hbg_kernel_ptr(t);
}

static inline float *f2(const hbg_tensor *t, uint64_t i, uint64_t j)
{
    return fp(t) + (int64_t)i * t->strides[0] + (int64_t)j * t->strides[1];
}

static inline float *f3(const hbg_tensor *t, uint64_t i, uint64_t j, uint64_t k)
{
    return fp(t) + (int64_t)i * t->strides[0] + (int64_t)j * t->strides[1] + (int64_t)k * t->strides[2];
}

static inline float f1(const hbg_tensor *t, uint64_t i)
{
    return fp(t)[(int64_t)i * t->strides[0]];
}

static inline int32_t i1(const hbg_tensor *t, uint64_t i)
{
    return ((const int32_t *)hbg_kernel_ptr(t))[(int64_t)i * t->strides[0]];
}

static inline int32_t i2(const hbg_tensor *t, uint64_t i, uint64_t j)
{
    return ((const int32_t *)hbg_kernel_ptr(t))[(int64_t)i * t->strides[0] + (int64_t)j * t->strides[1]];
}

static inline uint16_t *h2(const hbg_tensor *t, uint64_t i, uint64_t j)
{
    return (uint16_t *)hbg_kernel_ptr(t) + (int64_t)i * t->strides[0] + (int64_t)j * t->strides[1];
}

static bool is2(const hbg_tensor *t, hbg_dtype dt)
{
    return t->ndim == 2 && t->dtype == dt;
}

/* Block `blk` of `n` over `cols` columns: [*c0, *c1). */
static void slab(uint32_t cols, uint32_t blk, uint32_t n, uint32_t *c0, uint32_t *c1)
{
    uint32_t per = (cols + n - 1) / n;
    *c0 = blk * per < cols ? blk * per : cols;
    *c1 = *c0 + per < cols ? *c0 + per : cols;
}

static int k_zero(const hbg_kernel_args *a)
{
    for (uint32_t i = 0; i < a->ntensors; i++) {
        const hbg_tensor *t = &a->tensors[i];
        if (t->dtype != HBG_F32 || t->ndim < 1 || t->ndim > 2)
            return 1;
        uint32_t rows = t->ndim == 2 ? t->shape[0] : 1, cols = t->shape[t->ndim - 1];
        int64_t rs = t->ndim == 2 ? t->strides[0] : 0, cs = t->strides[t->ndim - 1];
        float *p = fp(t);
        for (uint32_t r = 0; r < rows; r++)
            for (uint32_t c = 0; c < cols; c++)
                p[r * rs + c * cs] = 0.0f;
    }
    return 0;
}

/* meta[b] = {position of the new token, pages in use}. */
static int k_tiling(const hbg_kernel_args *a)
{
    const hbg_tensor *sl = &a->tensors[0], *meta = &a->tensors[1];
    if (a->nscalars < 1 || a->scalars[0] == 0 || meta->ndim != 2 || meta->shape[1] < 2)
        return 1;
    int32_t page = (int32_t)a->scalars[0];
    int32_t *m = hbg_kernel_ptr(meta);
    for (uint32_t b = 0; b < sl->shape[0]; b++) {
        int32_t n = i1(sl, b);
        m[b * meta->strides[0]] = n - 1;
        m[b * meta->strides[0] + meta->strides[1]] = (n + page - 1) / page;
    }
    return 0;
}

static int k_copy(const hbg_kernel_args *a)
{
    const hbg_tensor *s = &a->tensors[0], *d = &a->tensors[1];
    if (!is2(s, HBG_F32) || !is2(d, HBG_F32) || s->shape[0] != d->shape[0] || s->shape[1] != d->shape[1])
        return 1;
    for (uint32_t r = 0; r < s->shape[0]; r++)
        for (uint32_t c = 0; c < s->shape[1]; c++)
            *f2(d, r, c) = *f2(s, r, c);
    return 0;
}

/* y = x * gamma, one column slab per block. */
static int k_scale_cols(const hbg_kernel_args *a)
{
    const hbg_tensor *x = &a->tensors[0], *g = &a->tensors[1], *y = &a->tensors[2];
    if (!is2(x, HBG_F32) || !is2(y, HBG_F32) || g->shape[0] != x->shape[1])
        return 1;
    uint32_t c0, c1;
    slab(x->shape[1], a->block, a->nblocks, &c0, &c1);
    for (uint32_t r = 0; r < x->shape[0]; r++)
        for (uint32_t c = c0; c < c1; c++)
            *f2(y, r, c) = *f2(x, r, c) * f1(g, c);
    return 0;
}

static int k_rms_recip(const hbg_kernel_args *a)
{
    const hbg_tensor *x = &a->tensors[0], *r = &a->tensors[1];
    if (!is2(x, HBG_F32) || r->shape[0] != x->shape[0])
        return 1;
    for (uint32_t b = 0; b < x->shape[0]; b++) {
        float ss = 0.0f;
        for (uint32_t c = 0; c < x->shape[1]; c++) {
            float v = *f2(x, b, c);
            ss += v * v;
        }
        fp(r)[b * r->strides[0]] = 1.0f / sqrtf(ss / (float)x->shape[1] + QWEN_EPS);
    }
    return 0;
}

/* C (tile t, K-split s) = A[:, s] . W[s, t], entry e = e0 + block with
 * t = e / splits, s = e % splits. A 3-D C holds one plane per K-split.
 * scalars: e0, tiles, splits, mode; a 4th tensor is the residual of
 * QMM_RESIDUAL. */
static int k_matmul(const hbg_kernel_args *a)
{
    if (a->ntensors < 3 || a->nscalars < 4)
        return 1;
    const hbg_tensor *A = &a->tensors[0], *W = &a->tensors[1], *C = &a->tensors[2];
    uint32_t e = (uint32_t)a->scalars[0] + a->block, tiles = (uint32_t)a->scalars[1],
             splits = (uint32_t)a->scalars[2], mode = (uint32_t)a->scalars[3];
    if (A->ndim != 2 || (A->dtype != HBG_F32 && A->dtype != HBG_BF16) || !is2(W, HBG_F32) || !tiles ||
        !splits || e >= tiles * splits || A->shape[1] != W->shape[0] || A->shape[1] % splits ||
        W->shape[1] % tiles || C->dtype != HBG_F32 || (C->ndim != 2 && C->ndim != 3))
        return 1;
    uint32_t t = e / splits, s = e % splits, M = A->shape[0], Kt = A->shape[1] / splits,
             Nt = W->shape[1] / tiles;
    bool planes = C->ndim == 3;
    if (Kt > MAX_K || (planes && (C->shape[0] != splits || C->shape[1] != M || C->shape[2] != W->shape[1])) ||
        (!planes && (C->shape[0] != M || C->shape[1] != W->shape[1])))
        return 1;
    const hbg_tensor *R = NULL;
    if (mode == QMM_RESIDUAL) {
        if (a->ntensors < 4 || !is2(&a->tensors[3], HBG_F32))
            return 1;
        R = &a->tensors[3];
    }
    float arow[MAX_K], acc[CHUNK];
    for (uint32_t m = 0; m < M; m++) {
        for (uint32_t k = 0; k < Kt; k++)
            arow[k] = A->dtype == HBG_F32 ? *f2(A, m, s * Kt + k) : qwen_from_bf16(*h2(A, m, s * Kt + k));
        for (uint32_t c0 = 0; c0 < Nt; c0 += CHUNK) {
            uint32_t n = Nt - c0 < CHUNK ? Nt - c0 : CHUNK;
            memset(acc, 0, n * sizeof *acc);
            for (uint32_t k = 0; k < Kt; k++) {
                const float *w = f2(W, s * Kt + k, t * Nt + c0);
                float av = arow[k];
                for (uint32_t c = 0; c < n; c++)
                    acc[c] += av * w[c * W->strides[1]];
            }
            for (uint32_t c = 0; c < n; c++) {
                uint32_t col = t * Nt + c0 + c;
                float *out = planes ? f3(C, s, m, col) : f2(C, m, col);
                if (mode == QMM_ATOMIC)
                    atomic_addf(out, acc[c]);
                else if (mode == QMM_RESIDUAL)
                    *out = *f2(R, m, col) + acc[c];
                else
                    *out = acc[c];
            }
        }
    }
    return 0;
}

/* RMSNorm over one head, then RoPE (rotate-half) at `pos`. */
static void norm_rope(float *x, uint32_t hd, const hbg_tensor *w, const hbg_tensor *cs, const hbg_tensor *sn,
                      int32_t pos)
{
    float ss = 0.0f;
    for (uint32_t j = 0; j < hd; j++)
        ss += x[j] * x[j];
    float r = 1.0f / sqrtf(ss / (float)hd + QWEN_EPS);
    for (uint32_t j = 0; j < hd; j++)
        x[j] = x[j] * r * f1(w, j);
    uint32_t h = hd / 2;
    for (uint32_t j = 0; j < h; j++) {
        float c = *f2(cs, (uint64_t)pos, j), s = *f2(sn, (uint64_t)pos, j);
        float x1 = x[j], x2 = x[j + h];
        x[j] = x1 * c - x2 * s;
        x[j + h] = x2 * c + x1 * s;
    }
}

enum { AT_Q, AT_K, AT_V, AT_R, AT_QN, AT_KN, AT_COS, AT_SIN, AT_SEQ, AT_BT, AT_SLOT, AT_META, AT_KC, AT_VC,
       AT_WS, AT_OUT, AT_COUNT };

typedef struct att_shape {
    uint32_t hd, nkv, grp, page, maxctx, pairs;
} att_shape;

static bool att_shape_of(const hbg_kernel_args *a, att_shape *s)
{
    if (a->ntensors != AT_COUNT)
        return false;
    const hbg_tensor *t = a->tensors;
    s->hd = t[AT_QN].shape[0];
    if (!s->hd || s->hd > MAX_HEAD || s->hd % 2 || t[AT_K].shape[1] % s->hd || t[AT_KC].ndim != 3 ||
        t[AT_WS].ndim != 2)
        return false;
    s->nkv = t[AT_K].shape[1] / s->hd;
    s->grp = t[AT_Q].shape[1] / t[AT_K].shape[1];
    s->page = t[AT_KC].shape[1];
    s->maxctx = t[AT_WS].shape[1];
    s->pairs = t[AT_Q].shape[0] * s->nkv;
    return s->nkv && s->grp && s->page && t[AT_WS].shape[0] >= s->pairs * s->grp &&
           t[AT_KC].shape[2] == t[AT_K].shape[1] && t[AT_COS].shape[1] * 2 == s->hd;
}

/* AIC half: per (sequence, KV head) pair, finish q/k/v (1/rms, head norm,
 * RoPE), write the new K/V into the cache slot, and score every position. */
static int k_att_qk(const hbg_kernel_args *a)
{
    att_shape s;
    if (!att_shape_of(a, &s))
        return 1;
    const hbg_tensor *t = a->tensors;
    float scale = 1.0f / sqrtf((float)s.hd), k[MAX_HEAD], q[MAX_HEAD];
    for (uint32_t p = a->block; p < s.pairs; p += a->nblocks) {
        uint32_t b = p / s.nkv, g = p % s.nkv;
        int32_t pos = i2(&t[AT_META], b, 0), ctx = i1(&t[AT_SEQ], b), slot = i1(&t[AT_SLOT], b);
        if (pos < 0 || ctx != pos + 1 || (uint32_t)ctx > s.maxctx || slot < 0 ||
            (uint64_t)slot >= (uint64_t)t[AT_KC].shape[0] * s.page || (uint32_t)pos >= t[AT_COS].shape[0])
            return 1;
        float r = f1(&t[AT_R], b);
        for (uint32_t j = 0; j < s.hd; j++)
            k[j] = r * *f2(&t[AT_K], b, g * s.hd + j);
        norm_rope(k, s.hd, &t[AT_KN], &t[AT_COS], &t[AT_SIN], pos);
        for (uint32_t j = 0; j < s.hd; j++) {
            *f3(&t[AT_KC], (uint32_t)slot / s.page, (uint32_t)slot % s.page, g * s.hd + j) = k[j];
            *f3(&t[AT_VC], (uint32_t)slot / s.page, (uint32_t)slot % s.page, g * s.hd + j) =
                r * *f2(&t[AT_V], b, g * s.hd + j);
        }
        for (uint32_t i = 0; i < s.grp; i++) {
            uint32_t qh = g * s.grp + i;
            for (uint32_t j = 0; j < s.hd; j++)
                q[j] = r * *f2(&t[AT_Q], b, qh * s.hd + j);
            norm_rope(q, s.hd, &t[AT_QN], &t[AT_COS], &t[AT_SIN], pos);
            for (int32_t tok = 0; tok < ctx; tok++) {
                int32_t pg = i2(&t[AT_BT], b, (uint32_t)tok / s.page);
                if (pg < 0 || (uint32_t)pg >= t[AT_KC].shape[0])
                    return 1;
                const float *kr = f3(&t[AT_KC], (uint32_t)pg, (uint32_t)tok % s.page, g * s.hd);
                float dot = 0.0f;
                for (uint32_t j = 0; j < s.hd; j++)
                    dot += q[j] * kr[j * t[AT_KC].strides[2]];
                *f2(&t[AT_WS], p * s.grp + i, (uint32_t)tok) = dot * scale;
            }
        }
    }
    return 0;
}

/* AIV half: softmax of the scores the AIC half left in the workspace, then
 * the weighted sum of V into the (zero-seeded) attention output. */
static int k_att_pv(const hbg_kernel_args *a)
{
    att_shape s;
    if (!att_shape_of(a, &s))
        return 1;
    const hbg_tensor *t = a->tensors;
    float o[MAX_HEAD];
    for (uint32_t p = a->block; p < s.pairs; p += a->nblocks) {
        uint32_t b = p / s.nkv, g = p % s.nkv;
        int32_t ctx = i1(&t[AT_SEQ], b);
        for (uint32_t i = 0; i < s.grp; i++) {
            float *sc = f2(&t[AT_WS], p * s.grp + i, 0);
            int64_t cs = t[AT_WS].strides[1];
            float mx = -INFINITY, sum = 0.0f;
            for (int32_t tok = 0; tok < ctx; tok++)
                mx = sc[tok * cs] > mx ? sc[tok * cs] : mx;
            memset(o, 0, s.hd * sizeof *o);
            for (int32_t tok = 0; tok < ctx; tok++) {
                float w = expf(sc[tok * cs] - mx);
                sum += w;
                int32_t pg = i2(&t[AT_BT], b, (uint32_t)tok / s.page);
                const float *vr = f3(&t[AT_VC], (uint32_t)pg, (uint32_t)tok % s.page, g * s.hd);
                for (uint32_t j = 0; j < s.hd; j++)
                    o[j] += w * vr[j * t[AT_VC].strides[2]];
            }
            uint32_t qh = g * s.grp + i;
            for (uint32_t j = 0; j < s.hd; j++)
                *f2(&t[AT_OUT], b, qh * s.hd + j) += o[j] / sum;
        }
    }
    return 0;
}

/* The post-attention residual, computed the same way by CAST and RED so
 * both see bit-identical values. */
static inline float hmid_at(const hbg_tensor *hid, const hbg_tensor *op, uint32_t b, uint32_t c)
{
    float h = *f2(hid, b, c);
    for (uint32_t s = 0; s < op->shape[0]; s++)
        h += *f3(op, s, b, c);
    return h;
}

static int k_cast(const hbg_kernel_args *a)
{
    const hbg_tensor *hid = &a->tensors[0], *op = &a->tensors[1], *g = &a->tensors[2], *hm = &a->tensors[3],
                     *xg = &a->tensors[4];
    if (a->ntensors != 5 || !is2(hid, HBG_F32) || op->ndim != 3 || !is2(hm, HBG_F32) || !is2(xg, HBG_BF16) ||
        op->shape[2] != hid->shape[1] || g->shape[0] != hid->shape[1])
        return 1;
    for (uint32_t b = 0; b < hid->shape[0]; b++)
        for (uint32_t c = 0; c < hid->shape[1]; c++) {
            float h = hmid_at(hid, op, b, c);
            *f2(hm, b, c) = h;
            *h2(xg, b, c) = qwen_to_bf16(h * f1(g, c));
        }
    return 0;
}

static int k_red(const hbg_kernel_args *a)
{
    const hbg_tensor *hid = &a->tensors[0], *op = &a->tensors[1], *r = &a->tensors[2];
    if (a->ntensors != 3 || !is2(hid, HBG_F32) || op->ndim != 3 || op->shape[2] != hid->shape[1])
        return 1;
    for (uint32_t b = 0; b < hid->shape[0]; b++) {
        float ss = 0.0f;
        for (uint32_t c = 0; c < hid->shape[1]; c++) {
            float h = hmid_at(hid, op, b, c);
            ss += h * h;
        }
        fp(r)[b * r->strides[0]] = 1.0f / sqrtf(ss / (float)hid->shape[1] + QWEN_EPS);
    }
    return 0;
}

static int k_silu(const hbg_kernel_args *a)
{
    const hbg_tensor *gt = &a->tensors[0], *up = &a->tensors[1], *r = &a->tensors[2], *h = &a->tensors[3];
    if (a->ntensors != 4 || !is2(gt, HBG_F32) || !is2(up, HBG_F32) || !is2(h, HBG_BF16))
        return 1;
    for (uint32_t b = 0; b < gt->shape[0]; b++) {
        float rb = f1(r, b);
        for (uint32_t c = 0; c < gt->shape[1]; c++) {
            float g = rb * *f2(gt, b, c), u = rb * *f2(up, b, c);
            *h2(h, b, c) = qwen_to_bf16(g / (1.0f + expf(-g)) * u);
        }
    }
    return 0;
}

/* Next hidden = sum of the down-proj K-split planes (plane 0 carries the
 * residual); next normed = hidden * the next layer's input-norm weight. */
static int k_dcr(const hbg_kernel_args *a)
{
    const hbg_tensor *dp = &a->tensors[0], *g = &a->tensors[1], *hn = &a->tensors[2], *nn = &a->tensors[3];
    if (a->ntensors != 4 || dp->ndim != 3 || !is2(hn, HBG_F32) || !is2(nn, HBG_F32) ||
        dp->shape[2] != hn->shape[1] || g->shape[0] != hn->shape[1])
        return 1;
    uint32_t c0, c1;
    slab(hn->shape[1], a->block, a->nblocks, &c0, &c1);
    for (uint32_t b = 0; b < hn->shape[0]; b++)
        for (uint32_t c = c0; c < c1; c++) {
            float h = 0.0f;
            for (uint32_t k = 0; k < dp->shape[0]; k++)
                h += *f3(dp, k, b, c);
            *f2(hn, b, c) = h;
            *f2(nn, b, c) = h * f1(g, c);
        }
    return 0;
}

hbg_status qwen_register_kernels(hbg_kernel_table *kt)
{
    static const hbg_kernel_def ks[] = {
        {QK_ZERO, "qwen.zero", k_zero},         {QK_TILING, "qwen.tiling", k_tiling},
        {QK_COPY, "qwen.copy", k_copy},         {QK_SCALE_COLS, "qwen.scale_cols", k_scale_cols},
        {QK_RMS_RECIP, "qwen.rms_recip", k_rms_recip}, {QK_MATMUL, "qwen.matmul", k_matmul},
        {QK_ATT_QK, "qwen.att_qk", k_att_qk},   {QK_ATT_PV, "qwen.att_pv", k_att_pv},
        {QK_CAST, "qwen.cast", k_cast},         {QK_RED, "qwen.red", k_red},
        {QK_SILU, "qwen.silu", k_silu},         {QK_DCR, "qwen.dcr", k_dcr},
    };
    return hbg_kernel_register_all(kt, ks, sizeof ks / sizeof ks[0]);
}
