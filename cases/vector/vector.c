/* vector — a small built-in program that exercises every bind segment.
 *
 *   x, y (IN, n floats), out (OUT, n floats), stats (OUT, 4 u32)
 *   alloc:  t, u (n floats), flag (1 u32)
 *   AIV  scale   t = 2x                    (4 blocks, SPMD)
 *   AIC  mix     u = t + y, MIX-free cube  (2 blocks)
 *   AIV  count   flag = #(u > 0)   (the first replay waits for it explicitly)
 *   Graph "axpb" replayed REPLAYS times: u = u * s_k + b_k  (scalar slots),
 *        a two-node body: an AIC node into a body-local temp, then an AIV
 *        node back into u (INOUT)
 *   MIX  fold    out = u + 1 (AIC half) then out *= 1 (AIV half)
 *   AIV  stats[0] = 7     predicated on flag != 0   (runs)
 *   AIV  stats[1] = 9     predicated on flag == 0   (skipped)
 *   dummy barrier after the two predicated tasks.
 *
 * The golden is a plain loop over the same arithmetic.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "case.h"

enum { K_SCALE = 1, K_ADD, K_COUNT, K_AXPB_MUL, K_AXPB_ADD, K_FOLD_AIC, K_FOLD_AIV, K_STORE };
#define REPLAYS 4

typedef struct vec_state {
    uint32_t n;
    float *x, *y, *out;
    uint32_t *stats;
    hbg_host_tensor args[4];
} vec_state;

static int k_scale(const hbg_kernel_args *a)
{
    const float *x = hbg_kernel_ptr(&a->tensors[0]);
    float *t = hbg_kernel_ptr(&a->tensors[1]);
    uint32_t n = a->tensors[0].shape[0], per = (n + a->nblocks - 1) / a->nblocks;
    for (uint32_t i = a->block * per; i < n && i < (a->block + 1) * per; i++)
        t[i] = 2.0f * x[i];
    return 0;
}

static int k_add(const hbg_kernel_args *a)
{
    const float *t = hbg_kernel_ptr(&a->tensors[0]), *y = hbg_kernel_ptr(&a->tensors[1]);
    float *u = hbg_kernel_ptr(&a->tensors[2]);
    uint32_t n = a->tensors[0].shape[0], per = (n + a->nblocks - 1) / a->nblocks;
    for (uint32_t i = a->block * per; i < n && i < (a->block + 1) * per; i++)
        u[i] = t[i] + y[i];
    return 0;
}

static int k_count(const hbg_kernel_args *a)
{
    const float *u = hbg_kernel_ptr(&a->tensors[0]);
    uint32_t *flag = hbg_kernel_ptr(&a->tensors[1]);
    uint32_t c = 0;
    for (uint32_t i = 0; i < a->tensors[0].shape[0]; i++)
        c += u[i] > 0.0f;
    *flag = c;
    return 0;
}

static int k_axpb_mul(const hbg_kernel_args *a)
{
    const float *u = hbg_kernel_ptr(&a->tensors[0]);
    float *tmp = hbg_kernel_ptr(&a->tensors[1]);
    float s = hbg_kernel_f32(a, 0);
    for (uint32_t i = 0; i < a->tensors[0].shape[0]; i++)
        tmp[i] = u[i] * s;
    return 0;
}

static int k_axpb_add(const hbg_kernel_args *a)
{
    const float *tmp = hbg_kernel_ptr(&a->tensors[0]);
    float *u = hbg_kernel_ptr(&a->tensors[1]);
    float b = hbg_kernel_f32(a, 0);
    for (uint32_t i = 0; i < a->tensors[0].shape[0]; i++)
        u[i] = tmp[i] + b;
    return 0;
}

static int k_fold_aic(const hbg_kernel_args *a)
{
    const float *u = hbg_kernel_ptr(&a->tensors[0]);
    float *out = hbg_kernel_ptr(&a->tensors[1]);
    uint32_t n = a->tensors[0].shape[0], per = (n + a->nblocks - 1) / a->nblocks;
    for (uint32_t i = a->block * per; i < n && i < (a->block + 1) * per; i++)
        out[i] = u[i] + 1.0f;
    return 0;
}

/* The AIV half runs after the AIC half of the same block: doubling what
 * the AIC half wrote shows the order was kept. */
static int k_fold_aiv(const hbg_kernel_args *a)
{
    float *out = hbg_kernel_ptr(&a->tensors[1]);
    uint32_t n = a->tensors[0].shape[0], per = (n + a->nblocks - 1) / a->nblocks;
    for (uint32_t i = a->block * per; i < n && i < (a->block + 1) * per; i++)
        out[i] *= 2.0f;
    return 0;
}

static int k_store(const hbg_kernel_args *a)
{
    uint32_t *stats = hbg_kernel_ptr(&a->tensors[0]);
    stats[a->scalars[0]] = (uint32_t)a->scalars[1];
    return 0;
}

static const float axpb_s[REPLAYS] = {0.5f, -1.5f, 2.0f, 0.25f};
static const float axpb_b[REPLAYS] = {1.0f, 0.5f, -3.0f, 4.0f};

static hbg_status axpb_body(hbg_orch *o, void *ctx, const hbg_boundary *b)
{
    (void)ctx;
    hbg_tensor *u = b->args[0].t;
    hbg_tensor tmp = hbg_tensor_desc(HBG_F32, 1, u->shape);
    hbg_arg a1[] = {{u, HBG_IN}, {&tmp, HBG_OUT_ALLOC}};
    int16_t slot0[] = {0}, slot1[] = {1};
    uint64_t zero = 0;
    hbg_task mul = {.kernel_aic = K_AXPB_MUL, .kernel_aiv = HBG_KERNEL_NONE, .core = HBG_CORE_AIC, .blocks = 1,
                    .ntensors = 2, .args = a1, .nscalars = 1, .scalars = &zero, .scalar_slots = slot0};
    hbg_task_id id;
    hbg_submit_task(o, &mul, &id);
    hbg_arg a2[] = {{&tmp, HBG_IN}, {u, HBG_INOUT}};
    hbg_task add = {.kernel_aic = HBG_KERNEL_NONE, .kernel_aiv = K_AXPB_ADD, .core = HBG_CORE_AIV, .blocks = 1,
                    .ntensors = 2, .args = a2, .nscalars = 1, .scalars = &zero, .scalar_slots = slot1};
    hbg_submit_task(o, &add, &id);
    return HBG_OK;
}

static hbg_status vec_orch(hbg_orch *o, void *ctx)
{
    (void)ctx;
    /* The caller tensors go to tasks as they are: hbg_orch_arg gives what
     * hbg_arg takes. */
    hbg_tensor *x = hbg_orch_arg(o, 0), *y = hbg_orch_arg(o, 1), *out = hbg_orch_arg(o, 2),
               *stats = hbg_orch_arg(o, 3);
    uint32_t n = x->shape[0], one = 1;
    hbg_tensor t = hbg_tensor_desc(HBG_F32, 1, &n), u = hbg_tensor_desc(HBG_F32, 1, &n),
               flag = hbg_tensor_desc(HBG_U32, 1, &one);
    hbg_tensor *ts[] = {&t, &u, &flag};
    hbg_task_id id, p1, p2, counted;
    hbg_alloc_tensors(o, 3, ts, &id);

    hbg_arg as[] = {{x, HBG_IN}, {&t, HBG_OUT}};
    hbg_task scale = {.kernel_aic = HBG_KERNEL_NONE, .kernel_aiv = K_SCALE, .core = HBG_CORE_AIV, .blocks = 4,
                      .ntensors = 2, .args = as};
    hbg_submit_task(o, &scale, &id);
    hbg_arg aa[] = {{&t, HBG_IN}, {y, HBG_IN}, {&u, HBG_OUT}};
    hbg_task add = {.kernel_aic = K_ADD, .kernel_aiv = HBG_KERNEL_NONE, .core = HBG_CORE_AIC, .blocks = 2,
                    .ntensors = 3, .args = aa};
    hbg_submit_task(o, &add, &id);
    hbg_arg ac[] = {{&u, HBG_IN}, {&flag, HBG_OUT}};
    hbg_task count = {.kernel_aic = HBG_KERNEL_NONE, .kernel_aiv = K_COUNT, .core = HBG_CORE_AIV, .blocks = 1,
                      .ntensors = 2, .args = ac};
    hbg_submit_task(o, &count, &counted);

    for (int k = 0; k < REPLAYS; k++) {
        hbg_arg ba[] = {{&u, HBG_INOUT}};
        uint64_t sc[] = {hbg_scalar_f32(axpb_s[k]), hbg_scalar_f32(axpb_b[k])};
        /* The tensor map tracks writers, not readers: the first in-place
         * update must wait for `count` to have read u, explicitly. */
        hbg_boundary b = {.ntensors = 1, .args = ba, .nscalars = 2, .scalars = sc,
                          .ndeps = k == 0, .deps = &counted};
        hbg_submit_graph(o, 0xa8b0, axpb_body, NULL, &b, 0, &id);
    }

    hbg_arg af[] = {{&u, HBG_IN}, {out, HBG_OUT}};
    hbg_task fold = {.kernel_aic = K_FOLD_AIC, .kernel_aiv = K_FOLD_AIV, .core = HBG_CORE_MIX, .blocks = 2,
                     .ntensors = 2, .args = af};
    hbg_submit_task(o, &fold, &id);

    hbg_arg ap[] = {{stats, HBG_INOUT}};
    uint64_t s1[] = {0, 7}, s2[] = {1, 9};
    hbg_pred yes = {.t = &flag, .byte_offset = 0, .value = 0, .op = HBG_CMP_NE, .elem_size = 4};
    hbg_pred no = {.t = &flag, .byte_offset = 0, .value = 0, .op = HBG_CMP_EQ, .elem_size = 4};
    hbg_task st1 = {.kernel_aic = HBG_KERNEL_NONE, .kernel_aiv = K_STORE, .core = HBG_CORE_AIV, .blocks = 1,
                    .ntensors = 1, .args = ap, .nscalars = 2, .scalars = s1, .pred = &yes};
    hbg_submit_task(o, &st1, &p1);
    hbg_task st2 = st1;
    st2.scalars = s2;
    st2.pred = &no;
    hbg_submit_task(o, &st2, &p2);
    hbg_task_id both[] = {p1, p2};
    hbg_submit_dummy(o, 2, both, &id);
    return hbg_orch_error(o);
}

static hbg_status vec_setup(const hbg_case_env *env, hbg_kernel_table *kt, hbg_program *prog, void **state)
{
    vec_state *s = calloc(1, sizeof *s);
    if (!s)
        return HBG_E_NOMEM;
    s->n = env->tile_unit ? env->tile_unit : 1024;
    s->x = calloc(s->n, sizeof *s->x);
    s->y = calloc(s->n, sizeof *s->y);
    s->out = calloc(s->n, sizeof *s->out);
    s->stats = calloc(4, sizeof *s->stats);
    if (!s->x || !s->y || !s->out || !s->stats) {
        free(s->x), free(s->y), free(s->out), free(s->stats), free(s);
        return HBG_E_NOMEM;
    }
    for (uint32_t i = 0; i < s->n; i++) {
        s->x[i] = (float)((int)(i % 17) - 8) * 0.25f;
        s->y[i] = (float)((int)(i % 5) - 2);
    }
    uint32_t four = 4;
    s->args[0] = (hbg_host_tensor){"x", s->x, hbg_tensor_desc(HBG_F32, 1, &s->n), HBG_IN, true};
    s->args[1] = (hbg_host_tensor){"y", s->y, hbg_tensor_desc(HBG_F32, 1, &s->n), HBG_IN, false};
    s->args[2] = (hbg_host_tensor){"out", s->out, hbg_tensor_desc(HBG_F32, 1, &s->n), HBG_OUT, false};
    s->args[3] = (hbg_host_tensor){"stats", s->stats, hbg_tensor_desc(HBG_U32, 1, &four), HBG_INOUT, false};
    static const hbg_kernel_def ks[] = {{K_SCALE, "vector.scale", k_scale},         {K_ADD, "vector.add", k_add},
              {K_COUNT, "vector.count", k_count},         {K_AXPB_MUL, "vector.axpb_mul", k_axpb_mul},
              {K_AXPB_ADD, "vector.axpb_add", k_axpb_add}, {K_FOLD_AIC, "vector.fold_aic", k_fold_aic},
              {K_FOLD_AIV, "vector.fold_aiv", k_fold_aiv}, {K_STORE, "vector.store", k_store}};
    hbg_status st = hbg_kernel_register_all(kt, ks, sizeof ks / sizeof ks[0]);
    if (st) {
        free(s->x), free(s->y), free(s->out), free(s->stats), free(s);
        return st;
    }
    *prog = (hbg_program){.name = "vector", .orch = vec_orch, .ctx = s, .nargs = 4, .args = s->args};
    *state = s;
    return HBG_OK;
}

/* The golden: the expected `out` (n floats) and then the two `stats`
 * words the predicated stores leave, in one block. */
static hbg_status vec_make_ref(void *state, const hbg_case_env *env, const hbg_kernel_table *kt, void **ref,
                               char *msg, size_t cap)
{
    (void)env, (void)kt;
    vec_state *s = state;
    float *u = malloc(s->n * sizeof *u + 2 * sizeof(uint32_t));
    *ref = u;
    if (!u) {
        snprintf(msg, cap, "vector: golden: out of memory");
        return HBG_E_NOMEM;
    }
    uint32_t positive = 0;
    for (uint32_t i = 0; i < s->n; i++) {
        u[i] = 2.0f * s->x[i] + s->y[i];
        positive += u[i] > 0.0f;
    }
    for (int k = 0; k < REPLAYS; k++)
        for (uint32_t i = 0; i < s->n; i++)
            u[i] = u[i] * axpb_s[k] + axpb_b[k];
    for (uint32_t i = 0; i < s->n; i++)
        u[i] = (u[i] + 1.0f) * 2.0f;
    const uint32_t stats[2] = {positive ? 7 : 0, positive ? 0 : 9};
    memcpy(u + s->n, stats, sizeof stats);
    return HBG_OK;
}

static hbg_status vec_compare(void *state, const void *ref, char *msg, size_t cap)
{
    vec_state *s = state;
    const float *want = ref;
    for (uint32_t i = 0; i < s->n; i++)
        if (s->out[i] != want[i]) {
            snprintf(msg, cap, "out[%u] = %.9g, expected %.9g (exact)", i, (double)s->out[i], (double)want[i]);
            return HBG_E_DEVICE;
        }
    uint32_t stats[2];
    memcpy(stats, want + s->n, sizeof stats);
    if (s->stats[0] != stats[0] || s->stats[1] != stats[1]) {
        snprintf(msg, cap, "predicated stores wrote stats = {%u, %u}, expected {%u, %u}", s->stats[0],
                 s->stats[1], stats[0], stats[1]);
        return HBG_E_DEVICE;
    }
    return HBG_OK;
}

static void vec_teardown(void *state)
{
    vec_state *s = state;
    if (!s)
        return;
    free(s->x), free(s->y), free(s->out), free(s->stats), free(s);
}

const hbg_case hbg_case_vector = {
    .name = "vector",
    .summary = "small element-wise program: every segment, a Graph replayed 4x, predicates, MIX",
    .default_ranks = 1,
    .min_ranks = 1,
    .max_ranks = 8,
    .default_tile_unit = 1024,
    /* three f32 vectors of the unit must fit the 16 MiB heap */
    .tile_min = 1,
    .tile_max = 524288,
    .tile_step = 1,
    .heap_bytes = 16ull << 20,
    .setup = vec_setup,
    .reference = vec_make_ref,
    .compare = vec_compare,
    .free_ref = free,
    .teardown = vec_teardown,
};
