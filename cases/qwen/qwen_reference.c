/* qwen reference: the decode step written plainly, one whole matrix at a
 * time, in fp32 throughout: no tiles, no K-splits, no deferred
 * normalisation, no bf16 activations and no runtime. It shares no code with
 * the kernels. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "qwen/qwen_internal.h"

/* y[rows][n] = x[rows][k] . w[k][n] */
static void matmul(const float *x, uint32_t rows, uint32_t k, const float *w, uint32_t n, float *y)
{
    for (uint32_t r = 0; r < rows; r++)
        for (uint32_t j = 0; j < n; j++) {
            float s = 0.0f;
            for (uint32_t i = 0; i < k; i++)
                s += x[(size_t)r * k + i] * w[(size_t)i * n + j];
            y[(size_t)r * n + j] = s;
        }
}

/* y = x / rms(x) * gamma, over n elements */
static void rmsnorm(const float *x, const float *gamma, uint32_t n, float *y)
{
    float ss = 0.0f;
    for (uint32_t i = 0; i < n; i++)
        ss += x[i] * x[i];
    float r = 1.0f / sqrtf(ss / (float)n + QWEN_EPS);
    for (uint32_t i = 0; i < n; i++)
        y[i] = x[i] * r * gamma[i];
}

static void rope(float *x, uint32_t hd, const float *cos_row, const float *sin_row)
{
    uint32_t h = hd / 2;
    for (uint32_t j = 0; j < h; j++) {
        float a = x[j], b = x[j + h];
        x[j] = a * cos_row[j] - b * sin_row[j];
        x[j + h] = b * cos_row[j] + a * sin_row[j];
    }
}

static float silu(float x)
{
    return x / (1.0f + expf(-x));
}

hbg_status qwen_reference(const qwen_model *m, float *hidden, float *knew, float *vnew)
{
    const qwen_dims *d = &m->d;
    const uint32_t Bn = QWEN_BATCH, H = d->hidden, I = d->inter, Q = d->qdim, KV = d->kvdim, hd = d->head_dim;
    const size_t kvl = (size_t)QWEN_PAGES * QWEN_PAGE * KV;
    float *xn = malloc(sizeof(float) * Bn * H), *q = malloc(sizeof(float) * Bn * Q),
          *k = malloc(sizeof(float) * Bn * KV), *v = malloc(sizeof(float) * Bn * KV),
          *att = malloc(sizeof(float) * Bn * Q), *proj = malloc(sizeof(float) * Bn * H),
          *g = malloc(sizeof(float) * Bn * I), *up = malloc(sizeof(float) * Bn * I),
          *act = malloc(sizeof(float) * Bn * I);
    hbg_status st = HBG_OK;
    if (!xn || !q || !k || !v || !att || !proj || !g || !up || !act) {
        st = HBG_E_NOMEM;
        goto out;
    }
    memcpy(hidden, m->x, sizeof(float) * Bn * H);
    for (uint32_t l = 0; l < QWEN_LAYERS; l++) {
        /* attention */
        for (uint32_t b = 0; b < Bn; b++)
            rmsnorm(hidden + (size_t)b * H, m->in_norm + (size_t)l * H, H, xn + (size_t)b * H);
        matmul(xn, Bn, H, m->wq + (size_t)l * H * Q, Q, q);
        matmul(xn, Bn, H, m->wk + (size_t)l * H * KV, KV, k);
        matmul(xn, Bn, H, m->wv + (size_t)l * H * KV, KV, v);
        const float *kc = m->kcache + l * kvl, *vc = m->vcache + l * kvl;
        for (uint32_t b = 0; b < Bn; b++) {
            int32_t ctx = m->seqlens[b], pos = ctx - 1;
            const float *cr = m->cos + (size_t)pos * (hd / 2), *sr = m->sin + (size_t)pos * (hd / 2);
            for (uint32_t kh = 0; kh < QWEN_KVHEADS; kh++) {
                float *kn = knew + ((size_t)l * Bn + b) * KV + kh * hd;
                rmsnorm(k + (size_t)b * KV + kh * hd, m->knorm + (size_t)l * hd, hd, kn);
                rope(kn, hd, cr, sr);
                memcpy(vnew + ((size_t)l * Bn + b) * KV + kh * hd, v + (size_t)b * KV + kh * hd,
                       sizeof(float) * hd);
            }
            for (uint32_t h = 0; h < QWEN_QHEADS; h++) {
                uint32_t kh = h / QWEN_GROUP;
                float qh[128], score[QWEN_MAX_CTX], mx = -INFINITY, sum = 0.0f;
                rmsnorm(q + (size_t)b * Q + h * hd, m->qnorm + (size_t)l * hd, hd, qh);
                rope(qh, hd, cr, sr);
                for (int32_t t = 0; t < ctx; t++) {
                    const float *key = t == pos ? knew + ((size_t)l * Bn + b) * KV + kh * hd
                                                : kc + ((size_t)m->block_table[b * QWEN_PAGES_PER_SEQ + t / QWEN_PAGE] *
                                                            QWEN_PAGE + t % QWEN_PAGE) * KV + kh * hd;
                    float s = 0.0f;
                    for (uint32_t j = 0; j < hd; j++)
                        s += qh[j] * key[j];
                    score[t] = s / sqrtf((float)hd);
                    mx = fmaxf(mx, score[t]);
                }
                for (int32_t t = 0; t < ctx; t++)
                    sum += (score[t] = expf(score[t] - mx));
                float *o = att + (size_t)b * Q + h * hd;
                for (uint32_t j = 0; j < hd; j++)
                    o[j] = 0.0f;
                for (int32_t t = 0; t < ctx; t++) {
                    const float *val = t == pos ? vnew + ((size_t)l * Bn + b) * KV + kh * hd
                                                : vc + ((size_t)m->block_table[b * QWEN_PAGES_PER_SEQ + t / QWEN_PAGE] *
                                                            QWEN_PAGE + t % QWEN_PAGE) * KV + kh * hd;
                    for (uint32_t j = 0; j < hd; j++)
                        o[j] += score[t] / sum * val[j];
                }
            }
        }
        matmul(att, Bn, Q, m->wo + (size_t)l * Q * H, H, proj);
        for (size_t i = 0; i < (size_t)Bn * H; i++)
            hidden[i] += proj[i];

        /* MLP */
        for (uint32_t b = 0; b < Bn; b++)
            rmsnorm(hidden + (size_t)b * H, m->post_norm + (size_t)l * H, H, xn + (size_t)b * H);
        matmul(xn, Bn, H, m->wgate + (size_t)l * H * I, I, g);
        matmul(xn, Bn, H, m->wup + (size_t)l * H * I, I, up);
        for (size_t i = 0; i < (size_t)Bn * I; i++)
            act[i] = silu(g[i]) * up[i];
        matmul(act, Bn, I, m->wdown + (size_t)l * I * H, H, proj);
        for (size_t i = 0; i < (size_t)Bn * H; i++)
            hidden[i] += proj[i];
    }
out:
    free(xn), free(q), free(k), free(v), free(att), free(proj), free(g), free(up), free(act);
    return st;
}
