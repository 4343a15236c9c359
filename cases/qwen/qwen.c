/* qwen — a Qwen3-14B-shaped decode step (1 rank). See docs/case-qwen.md.
 *
 * Setup builds the model's host data from a seeded generator, so every run
 * of every build sees the same numbers; the golden runs the plain reference
 * decode (qwen_reference.c) and compares the device's final hidden state and the
 * KV-cache rows it wrote, within QWEN_TOLERANCE.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostmem.h"
#include "qwen/qwen_internal.h"
#include "rng.h"

#define QWEN_SEED 0x5157454e33313442ull

/* The reference decode's outputs: the final hidden state and the new
 * token's K and V rows of every layer. */
typedef struct qwen_golden_ref {
    float *ref, *knew, *vnew;
} qwen_golden_ref;

typedef struct qwen_state {
    qwen_model m;
    qwen_ctx *ctx;
    hbg_host_tensor args[QA_COUNT];
} qwen_state;

static void qwen_free_ref(void *ref)
{
    qwen_golden_ref *g = ref;
    if (g)
        free(g->ref), free(g->knew), free(g->vnew);
    free(g);
}

qwen_dims qwen_dims_for(uint32_t u)
{
    return (qwen_dims){.u = u, .hidden = 5 * u, .inter = 17 * u, .qdim = 5 * u, .kvdim = u, .head_dim = u / 8};
}

/* uniform in [-1, 1) */
static float next_f(uint64_t *s)
{
    return (float)((double)(case_splitmix64(s) >> 11) * 0x1.0p-53 * 2.0 - 1.0);
}

static void fill(float *p, size_t n, float scale, float bias, uint64_t *s)
{
    for (size_t i = 0; i < n; i++)
        p[i] = bias + scale * next_f(s);
}

/* The model's host arrays: where each goes and how many 4-byte elements
 * it holds (float, or int32 for the three index tables). One list, so
 * that allocating, freeing and sizing the model up front
 * (qwen_model_bytes) cannot disagree. */
typedef struct model_array {
    float **f;
    int32_t **i; /* when f is NULL */
    size_t n;
} model_array;

enum { MODEL_ARRAYS = 20 };

static void model_arrays(qwen_model *m, qwen_dims d, model_array a[MODEL_ARRAYS])
{
    const size_t L = QWEN_LAYERS, B = QWEN_BATCH, H = d.hidden, I = d.inter, Q = d.qdim, KV = d.kvdim,
                 hd = d.head_dim, kvl = (size_t)QWEN_PAGES * QWEN_PAGE * KV;
    model_array list[MODEL_ARRAYS] = {
        {&m->x, NULL, B * H},         {&m->out, NULL, B * H},          {&m->in_norm, NULL, (L + 1) * H},
        {&m->wq, NULL, L * H * Q},    {&m->wk, NULL, L * H * KV},      {&m->wv, NULL, L * H * KV},
        {&m->qnorm, NULL, L * hd},    {&m->knorm, NULL, L * hd},       {NULL, &m->seqlens, B},
        {NULL, &m->block_table, B * QWEN_PAGES_PER_SEQ},               {NULL, &m->slots, B},
        {&m->cos, NULL, QWEN_MAX_CTX * hd / 2},                        {&m->sin, NULL, QWEN_MAX_CTX * hd / 2},
        {&m->kcache, NULL, L * kvl},  {&m->vcache, NULL, L * kvl},     {&m->wo, NULL, L * Q * H},
        {&m->wgate, NULL, L * H * I}, {&m->wup, NULL, L * H * I},      {&m->wdown, NULL, L * I * H},
        {&m->post_norm, NULL, L * H},
    };
    memcpy(a, list, sizeof list);
}

static void free_model(qwen_model *m)
{
    model_array a[MODEL_ARRAYS];
    model_arrays(m, m->d, a);
    for (int k = 0; k < MODEL_ARRAYS; k++)
        free(a[k].f ? (void *)*a[k].f : (void *)*a[k].i);
    memset(m, 0, sizeof *m);
}

static void qwen_teardown(void *state)
{
    qwen_state *s = state;
    if (!s)
        return;
    free_model(&s->m);
    qwen_ctx_destroy(s->ctx);
    free(s);
}

static hbg_tensor lay(hbg_dtype dt, unsigned nd, uint32_t s0, uint32_t s1, uint32_t s2)
{
    uint32_t shape[3] = {s0, s1, s2};
    return hbg_tensor_desc(dt, nd, shape);
}

uint64_t qwen_model_bytes(qwen_dims d)
{
    qwen_model m;
    model_array a[MODEL_ARRAYS];
    model_arrays(&m, d, a);
    uint64_t n = 0;
    for (int k = 0; k < MODEL_ARRAYS; k++)
        n += a[k].n;
    return 4 * n;
}

hbg_status qwen_check_fits(qwen_dims d, uint32_t nranks, const hbg_case_host *h, char *msg, size_t cap)
{
    uint64_t model = qwen_model_bytes(d), need = (2 * model + CASE_PROCESS_BYTES) * (nranks ? nranks : 1);
    if (need <= h->avail)
        return HBG_OK;
    char each[32] = "";
    if (nranks > 1)
        snprintf(each, sizeof each, ", in each of %u ranks", nranks);
    snprintf(msg, cap,
             "tile unit %u needs about %s of memory (the model, %s, on the host and again in device memory%s); %s "
             "is available (%s); lower --tile-unit%s",
             d.u, case_mem(need).s, case_mem(model).s, each, case_mem(h->avail).s, h->avail_from,
             nranks > 1 ? " or --ranks" : "");
    return HBG_E_NOMEM;
}

/* The model is the same whether the device runs or the golden does. */
static hbg_status qwen_fits(const hbg_case_env *env, const hbg_case_host *h, char *msg, size_t cap)
{
    return qwen_check_fits(qwen_dims_for(env->tile_unit ? env->tile_unit : QWEN_DEFAULT_U), env->nranks, h, msg, cap);
}

static hbg_status build_model(qwen_model *m, qwen_dims d)
{
    const size_t Lc = QWEN_LAYERS, Bc = QWEN_BATCH, H = d.hidden, I = d.inter, Q = d.qdim, KV = d.kvdim,
                 hd = d.head_dim, kvl = (size_t)QWEN_PAGES * QWEN_PAGE * KV;
    m->d = d;
    model_array a[MODEL_ARRAYS];
    model_arrays(m, d, a);
    for (int k = 0; k < MODEL_ARRAYS; k++)
        if (a[k].f ? !(*a[k].f = calloc(a[k].n, sizeof(float))) : !(*a[k].i = calloc(a[k].n, sizeof(int32_t))))
            return HBG_E_NOMEM;

    /* Uniform weights scaled by sqrt(3 / fan_in) keep unit-variance inputs
     * at unit variance; the two projections back into the residual are
     * halved so the residual grows gently over 40 layers. */
    uint64_t s = QWEN_SEED;
    fill(m->x, Bc * H, 1.0f, 0.0f, &s);
    fill(m->in_norm, (Lc + 1) * H, 0.1f, 1.0f, &s);
    fill(m->wq, Lc * H * Q, sqrtf(3.0f / (float)H), 0.0f, &s);
    fill(m->wk, Lc * H * KV, sqrtf(3.0f / (float)H), 0.0f, &s);
    fill(m->wv, Lc * H * KV, sqrtf(3.0f / (float)H), 0.0f, &s);
    fill(m->qnorm, Lc * hd, 0.1f, 1.0f, &s);
    fill(m->knorm, Lc * hd, 0.1f, 1.0f, &s);
    fill(m->kcache, Lc * kvl, 1.0f, 0.0f, &s);
    fill(m->vcache, Lc * kvl, 1.0f, 0.0f, &s);
    fill(m->wo, Lc * Q * H, 0.5f * sqrtf(3.0f / (float)Q), 0.0f, &s);
    fill(m->wgate, Lc * H * I, sqrtf(3.0f / (float)H), 0.0f, &s);
    fill(m->wup, Lc * H * I, sqrtf(3.0f / (float)H), 0.0f, &s);
    fill(m->wdown, Lc * I * H, 0.5f * sqrtf(3.0f / (float)I), 0.0f, &s);
    fill(m->post_norm, Lc * H, 0.1f, 1.0f, &s);

    /* Pages: a shuffled pool, four per sequence, so the block table is
     * really indirect. */
    int32_t perm[QWEN_PAGES];
    for (int32_t i = 0; i < QWEN_PAGES; i++)
        perm[i] = i;
    for (int32_t i = QWEN_PAGES - 1; i > 0; i--) {
        int32_t j = (int32_t)(case_splitmix64(&s) % (uint64_t)(i + 1)), t = perm[i];
        perm[i] = perm[j], perm[j] = t;
    }
    memcpy(m->block_table, perm, sizeof perm);
    for (size_t b = 0; b < Bc; b++) {
        int32_t n = 1 + (int32_t)(case_splitmix64(&s) % QWEN_MAX_CTX), pos = n - 1;
        m->seqlens[b] = n;
        m->slots[b] = m->block_table[b * QWEN_PAGES_PER_SEQ + (size_t)pos / QWEN_PAGE] * QWEN_PAGE + pos % QWEN_PAGE;
    }
    for (size_t p = 0; p < QWEN_MAX_CTX; p++)
        for (size_t j = 0; j < hd / 2; j++) {
            double ang = (double)p * pow(QWEN_ROPE_THETA, -2.0 * (double)j / (double)hd);
            m->cos[p * hd / 2 + j] = (float)cos(ang);
            m->sin[p * hd / 2 + j] = (float)sin(ang);
        }
    return HBG_OK;
}

static hbg_status qwen_setup(const hbg_case_env *env, hbg_kernel_table *kt, hbg_program *prog, void **state)
{
    uint32_t u = env->tile_unit ? env->tile_unit : QWEN_DEFAULT_U;
    if (u < QWEN_MIN_U || u > QWEN_MAX_U || u % 16) {
        fprintf(stderr, "qwen: tile unit %u: expected a multiple of 16 in [%u, %u]\n", u, QWEN_MIN_U, QWEN_MAX_U);
        return HBG_E_INVAL;
    }
    qwen_state *s = calloc(1, sizeof *s);
    if (!s)
        return HBG_E_NOMEM;
    qwen_dims d = qwen_dims_for(u);
    hbg_status st = build_model(&s->m, d);
    if (!st)
        st = qwen_ctx_create(&d, &s->ctx);
    if (!st)
        st = qwen_register_kernels(kt);
    if (st) {
        if (st == HBG_E_NOMEM)
            fprintf(stderr, "qwen: out of host memory for tile unit %u\n", u);
        qwen_teardown(s);
        return st;
    }
    const uint32_t L = QWEN_LAYERS, B = QWEN_BATCH, H = d.hidden, I = d.inter, Q = d.qdim, KV = d.kvdim,
                   hd = d.head_dim;
    qwen_model *m = &s->m;
    struct {
        const char *name;
        void *p;
        hbg_tensor layout;
        uint8_t dir;
    } a[QA_COUNT] = {
        [QA_X] = {"x", m->x, lay(HBG_F32, 2, B, H, 0), HBG_IN},
        [QA_OUT] = {"out", m->out, lay(HBG_F32, 2, B, H, 0), HBG_OUT},
        [QA_IN_NORM] = {"in_norm", m->in_norm, lay(HBG_F32, 2, L + 1, H, 0), HBG_IN},
        [QA_WQ] = {"wq", m->wq, lay(HBG_F32, 2, L * H, Q, 0), HBG_IN},
        [QA_WK] = {"wk", m->wk, lay(HBG_F32, 2, L * H, KV, 0), HBG_IN},
        [QA_WV] = {"wv", m->wv, lay(HBG_F32, 2, L * H, KV, 0), HBG_IN},
        [QA_QNORM] = {"q_norm", m->qnorm, lay(HBG_F32, 2, L, hd, 0), HBG_IN},
        [QA_KNORM] = {"k_norm", m->knorm, lay(HBG_F32, 2, L, hd, 0), HBG_IN},
        [QA_SEQLENS] = {"seq_lens", m->seqlens, lay(HBG_I32, 1, B, 0, 0), HBG_IN},
        [QA_BLOCK_TABLE] = {"block_table", m->block_table, lay(HBG_I32, 2, B, QWEN_PAGES_PER_SEQ, 0), HBG_IN},
        [QA_SLOTS] = {"slot_mapping", m->slots, lay(HBG_I32, 1, B, 0, 0), HBG_IN},
        [QA_COS] = {"rope_cos", m->cos, lay(HBG_F32, 2, QWEN_MAX_CTX, hd / 2, 0), HBG_IN},
        [QA_SIN] = {"rope_sin", m->sin, lay(HBG_F32, 2, QWEN_MAX_CTX, hd / 2, 0), HBG_IN},
        [QA_KCACHE] = {"k_cache", m->kcache, lay(HBG_F32, 3, L * QWEN_PAGES, QWEN_PAGE, KV), HBG_INOUT},
        [QA_VCACHE] = {"v_cache", m->vcache, lay(HBG_F32, 3, L * QWEN_PAGES, QWEN_PAGE, KV), HBG_INOUT},
        [QA_WO] = {"wo", m->wo, lay(HBG_F32, 2, L * Q, H, 0), HBG_IN},
        [QA_WGATE] = {"w_gate", m->wgate, lay(HBG_F32, 2, L * H, I, 0), HBG_IN},
        [QA_WUP] = {"w_up", m->wup, lay(HBG_F32, 2, L * H, I, 0), HBG_IN},
        [QA_WDOWN] = {"w_down", m->wdown, lay(HBG_F32, 2, L * I, H, 0), HBG_IN},
        [QA_POST_NORM] = {"post_norm", m->post_norm, lay(HBG_F32, 2, L, H, 0), HBG_IN},
    };
    for (uint32_t i = 0; i < QA_COUNT; i++)
        s->args[i] = (hbg_host_tensor){.name = a[i].name, .host = a[i].p, .layout = a[i].layout, .dir = a[i].dir,
                                       /* weights and tables never change: staged once */
                                       .persistent = a[i].dir == HBG_IN && i != QA_X};
    *prog = (hbg_program){.name = "qwen", .orch = qwen_orchestrate, .ctx = s->ctx, .nargs = QA_COUNT, .args = s->args};
    *state = s;
    return HBG_OK;
}

/* max |got - want| / max |want|, and where the worst element is. */
static double rel_err(const float *got, const float *want, size_t n, size_t *worst)
{
    double dmax = 0.0, wmax = 0.0;
    *worst = 0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)got[i] - (double)want[i]);
        if (!(e <= dmax)) { /* NaN counts as the worst */
            dmax = isnan(e) ? INFINITY : e;
            *worst = i;
        }
        wmax = fmax(wmax, fabs((double)want[i]));
    }
    return wmax > 0.0 ? dmax / wmax : dmax;
}

/* |got - want|_2 / |want|_2, used for each layer's cache rows: a K row is
 * RMS-normalised over one head (2 elements at u = 16), which can turn the
 * device-vs-reference noise of a near-zero head into a large error on that
 * one element without anything being wrong. */
static double norm_err(const float *got, const float *want, size_t n)
{
    double d = 0.0, w = 0.0;
    for (size_t i = 0; i < n; i++) {
        double e = (double)got[i] - (double)want[i];
        d += e * e;
        w += (double)want[i] * (double)want[i];
    }
    return w > 0.0 ? sqrt(d / w) : sqrt(d);
}

static hbg_status qwen_make_ref(void *state, const hbg_case_env *env, const hbg_kernel_table *kt, void **ref,
                                char *msg, size_t cap)
{
    (void)env, (void)kt;
    const qwen_model *m = &((qwen_state *)state)->m;
    const size_t B = QWEN_BATCH, H = m->d.hidden, KV = m->d.kvdim, L = QWEN_LAYERS;
    qwen_golden_ref *g = calloc(1, sizeof *g);
    if (g) {
        g->ref = malloc(sizeof(float) * B * H);
        g->knew = malloc(sizeof(float) * L * B * KV);
        g->vnew = malloc(sizeof(float) * L * B * KV);
    }
    hbg_status st = g && g->ref && g->knew && g->vnew ? qwen_reference(m, g->ref, g->knew, g->vnew) : HBG_E_NOMEM;
    if (st) {
        snprintf(msg, cap, "qwen: reference decode failed: %s", hbg_strerror(st));
        qwen_free_ref(g);
        g = NULL;
    }
    *ref = g;
    return st;
}

static hbg_status qwen_compare(void *state, const void *golden, char *msg, size_t cap)
{
    const qwen_model *m = &((qwen_state *)state)->m;
    const qwen_golden_ref *g = golden;
    const size_t B = QWEN_BATCH, H = m->d.hidden, KV = m->d.kvdim, L = QWEN_LAYERS;
    size_t w;
    double e = rel_err(m->out, g->ref, B * H, &w);
    if (!(e <= QWEN_TOLERANCE)) {
        snprintf(msg, cap,
                 "qwen: final hidden differs from the reference: relative error %.3g > tolerance %.0e "
                 "(max |device - reference| / max |reference|); worst at [%zu][%zu]: %.6g vs %.6g",
                 e, QWEN_TOLERANCE, w / H, w % H, (double)m->out[w], (double)g->ref[w]);
        return HBG_E_DEVICE;
    }
    float *dk = malloc(sizeof(float) * L * B * KV), *dv = malloc(sizeof(float) * L * B * KV);
    hbg_status st = dk && dv ? HBG_OK : HBG_E_NOMEM;
    if (st)
        snprintf(msg, cap, "qwen: golden: out of memory");
    /* The new token's K and V rows, as the device left them in the caches. */
    const size_t kvl = (size_t)QWEN_PAGES * QWEN_PAGE * KV;
    for (size_t l = 0; l < L && !st; l++)
        for (size_t b = 0; b < B; b++) {
            memcpy(dk + (l * B + b) * KV, m->kcache + l * kvl + (size_t)m->slots[b] * KV, sizeof(float) * KV);
            memcpy(dv + (l * B + b) * KV, m->vcache + l * kvl + (size_t)m->slots[b] * KV, sizeof(float) * KV);
        }
    for (size_t l = 0; l < L && !st; l++)
        for (int isv = 0; isv < 2 && !st; isv++) {
            const float *got = (isv ? dv : dk) + l * B * KV, *want = (isv ? g->vnew : g->knew) + l * B * KV;
            double e = norm_err(got, want, B * KV);
            if (!(e <= QWEN_KV_TOLERANCE)) {
                snprintf(msg, cap,
                         "qwen: %s-cache rows written by layer %zu differ from the reference: relative error "
                         "%.3g > tolerance %.0e (|device - reference|_2 / |reference|_2)",
                         isv ? "V" : "K", l, e, QWEN_KV_TOLERANCE);
                st = HBG_E_DEVICE;
            }
        }
    free(dk), free(dv);
    return st;
}

void qwen_inject_fault(void *state, qwen_fault f)
{
    qwen_ctx_fault(((qwen_state *)state)->ctx, f);
}

const qwen_model *qwen_state_model(const void *state)
{
    return &((const qwen_state *)state)->m;
}

const hbg_case hbg_case_qwen = {
    .name = "qwen",
    .summary = "Qwen3-14B-shaped decode step: 47 host tasks, a 277-node layer Graph replayed 40x",
    .default_ranks = 1,
    .min_ranks = 1,
    .max_ranks = 8,
    .default_tile_unit = QWEN_DEFAULT_U,
    .tile_min = QWEN_MIN_U,
    .tile_max = QWEN_MAX_U,
    .tile_step = 16,
    .heap_bytes = 256ull << 20,
    .setup = qwen_setup,
    .reference = qwen_make_ref,
    .compare = qwen_compare,
    .free_ref = qwen_free_ref,
    .teardown = qwen_teardown,
    .fits = qwen_fits,
};
