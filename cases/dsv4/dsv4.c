/* dsv4 — a DeepSeek-V4-Flash-shaped decode step on two ranks.
 *
 * The host work has the original's shape (docs/case-dsv4.md has the
 * counts); the tensors are small and all uint32, and the kernels mix them
 * exactly, so the golden — the same orchestration run eagerly, in program
 * order, on host memory, with the same cross-rank services — must match the
 * device run bit for bit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsv4/dsv4.h"
#include "hbg/xrank.h"
#include "rng.h"

#define SEED 0xd5f4c0ffee123457ull

typedef struct arg_spec {
    const char *name;
    uint8_t ndim;
    uint32_t shape[4];
    uint8_t dir;
    bool persistent;
    bool per_layer;   /* dim 0 is the layer */
} arg_spec;

static char lane_names[DSV4_LANES + DSV4_NX][24];

static arg_spec spec_of(uint32_t a)
{
    const uint32_t L = DSV4_LAYERS;
    if (a >= A_AW_LANE0 && a < A_AW_LANE0 + DSV4_LANES)
        return (arg_spec){lane_names[a - A_AW_LANE0], 3, {L, DSV4_WR, DSV4_D}, HBG_IN, true, true};
    if (a >= A_AW_X0 && a < A_AW_X0 + DSV4_NX)
        return (arg_spec){lane_names[DSV4_LANES + a - A_AW_X0], 3, {L, DSV4_WR, DSV4_D}, HBG_IN, true, true};
    switch (a) {
    case A_TOKENS: return (arg_spec){"tokens", 1, {DSV4_T}, HBG_IN, false, false};
    case A_EMBED: return (arg_spec){"embed", 2, {DSV4_V, DSV4_D}, HBG_IN, true, false};
    case A_ROPE_COS: return (arg_spec){"rope_cos", 2, {DSV4_CACHE, DSV4_D}, HBG_IN, true, false};
    case A_ROPE_SIN: return (arg_spec){"rope_sin", 2, {DSV4_CACHE, DSV4_D}, HBG_IN, true, false};
    case A_POS: return (arg_spec){"positions", 1, {DSV4_T}, HBG_IN, false, false};
    /* Caches are written on the device; staged afresh every pass, so every
     * round starts from the same state. */
    case A_SWA_KV: return (arg_spec){"swa_kv", 3, {L, DSV4_CACHE, DSV4_D}, HBG_IN, false, true};
    case A_CSA_KV: return (arg_spec){"csa_kv", 3, {L, DSV4_CACHE, DSV4_D}, HBG_IN, false, true};
    case A_CSA_IDX: return (arg_spec){"csa_index_k", 3, {L, DSV4_CACHE, DSV4_D}, HBG_IN, false, true};
    case A_HCA_KV: return (arg_spec){"hca_kv", 3, {L, DSV4_CACHE, DSV4_D}, HBG_IN, false, true};
    case A_AW_HC: return (arg_spec){"attn.hc_pre", 3, {L, DSV4_WR, DSV4_D}, HBG_IN, true, true};
    case A_AW_NORM: return (arg_spec){"attn.norm", 3, {L, DSV4_WR, DSV4_D}, HBG_IN, true, true};
    case A_AW_SINK: return (arg_spec){"attn.sink", 3, {L, DSV4_WR, DSV4_D}, HBG_IN, true, true};
    case A_AW_WO: return (arg_spec){"attn.wo", 3, {L, DSV4_WR, DSV4_D}, HBG_IN, true, true};
    case A_AW_HCPOST: return (arg_spec){"attn.hc_post", 3, {L, DSV4_WR, DSV4_D}, HBG_IN, true, true};
    case A_MW_HCFN: return (arg_spec){"moe.hc_fn", 3, {L, DSV4_WR, DSV4_D}, HBG_IN, true, true};
    case A_MW_NORM: return (arg_spec){"moe.norm", 3, {L, DSV4_WR, DSV4_D}, HBG_IN, true, true};
    case A_MW_GATE: return (arg_spec){"moe.gate", 3, {L, DSV4_WR, DSV4_D}, HBG_IN, true, true};
    case A_MW_GATEB: return (arg_spec){"moe.gate_bias", 3, {L, DSV4_WR, DSV4_D}, HBG_IN, true, true};
    case A_MW_SH1: return (arg_spec){"moe.shared_w1", 3, {L, DSV4_WR, DSV4_D}, HBG_IN, true, true};
    case A_MW_SH3: return (arg_spec){"moe.shared_w3", 3, {L, DSV4_WR, DSV4_D}, HBG_IN, true, true};
    case A_MW_SH2: return (arg_spec){"moe.shared_w2", 3, {L, DSV4_WR, DSV4_D}, HBG_IN, true, true};
    case A_MW_HCPOST: return (arg_spec){"moe.hc_post", 3, {L, DSV4_WR, DSV4_D}, HBG_IN, true, true};
    case A_MW_EX1: return (arg_spec){"moe.experts_w1", 4, {L, DSV4_EL, DSV4_F, DSV4_D}, HBG_IN, true, true};
    case A_MW_EX3: return (arg_spec){"moe.experts_w3", 4, {L, DSV4_EL, DSV4_F, DSV4_D}, HBG_IN, true, true};
    case A_MW_EX2: return (arg_spec){"moe.experts_w2", 4, {L, DSV4_EL, DSV4_F, DSV4_D}, HBG_IN, true, true};
    case A_MW_S1: return (arg_spec){"moe.experts_s1", 3, {L, DSV4_EL, DSV4_F}, HBG_IN, true, true};
    case A_MW_S2: return (arg_spec){"moe.experts_s2", 3, {L, DSV4_EL, DSV4_F}, HBG_IN, true, true};
    case A_FINAL_NORM: return (arg_spec){"final_norm", 2, {DSV4_WR, DSV4_D}, HBG_IN, true, false};
    case A_HC_HEAD: return (arg_spec){"hc_head", 2, {DSV4_WR, DSV4_D}, HBG_IN, true, false};
    case A_LM_HEAD: return (arg_spec){"lm_head", 2, {DSV4_VL, DSV4_D}, HBG_IN, true, false};
    case A_OUT_LOGITS: return (arg_spec){"logits", 2, {DSV4_T, DSV4_VL}, HBG_OUT, false, false};
    default: return (arg_spec){"result", 2, {DSV4_T, 4}, HBG_OUT, false, false};
    }
}

static bool written_in_place(uint32_t a)
{
    return a == A_SWA_KV || a == A_CSA_KV || a == A_CSA_IDX || a == A_HCA_KV;
}

static void free_state(dsv4_state *s)
{
    if (!s)
        return;
    dsv4_release(s);
    for (uint32_t a = 0; a < A_COUNT; a++)
        free(s->mem[a]);
    free(s);
}

static hbg_status dsv4_setup(const hbg_case_env *env, hbg_kernel_table *kt, hbg_program *prog, void **state)
{
    *state = NULL;
    if (env->nranks != DSV4_RANKS || env->rank >= DSV4_RANKS)
        return HBG_E_INVAL;
    for (uint32_t i = 0; i < DSV4_LANES; i++)
        snprintf(lane_names[i], sizeof lane_names[i], "attn.lane%u", i);
    for (uint32_t i = 0; i < DSV4_NX; i++)
        snprintf(lane_names[DSV4_LANES + i], sizeof lane_names[0], "attn.extra%u", i);
    dsv4_state *s = calloc(1, sizeof *s);
    if (!s)
        return HBG_E_NOMEM;
    s->rank = env->rank;
    s->nranks = env->nranks;
    s->seed = SEED;
    for (uint32_t a = 0; a < A_COUNT; a++) {
        arg_spec sp = spec_of(a);
        hbg_tensor lay = hbg_tensor_desc(HBG_U32, sp.ndim, sp.shape);
        uint64_t n = hbg_tensor_numel(&lay);
        lay.nbytes = n * 4;
        uint32_t *m = calloc(n, 4);
        if (!m) {
            free_state(s);
            return HBG_E_NOMEM;
        }
        s->mem[a] = m;
        if (sp.per_layer)
            s->slice[a] = n / DSV4_LAYERS;
        /* Each rank holds its own experts and vocabulary slice: the stream
         * depends on the rank as well as on the tensor. */
        uint64_t st = s->seed ^ ((uint64_t)(a + 1) << 32) ^ ((uint64_t)env->rank << 56);
        if (sp.dir != HBG_OUT)
            for (uint64_t j = 0; j < n; j++)
                m[j] = (uint32_t)case_splitmix64(&st);
        if (a == A_TOKENS)
            for (uint64_t j = 0; j < n; j++)
                m[j] %= DSV4_V;
        if (a == A_POS)
            for (uint64_t j = 0; j < n; j++)
                m[j] = 100 + (uint32_t)j;
        s->args[a] = (hbg_host_tensor){sp.name, m, lay, sp.dir, sp.persistent};
    }
    hbg_status st = dsv4_register_kernels(kt);
    if (st) {
        free_state(s);
        return st;
    }
    if ((st = dsv4_prepare(s))) {
        free_state(s);
        return st;
    }
    *prog = (hbg_program){.name = "dsv4", .orch = dsv4_orchestrate, .ctx = s, .nargs = A_COUNT, .args = s->args};
    *state = s;
    return HBG_OK;
}

/* Runs the orchestration eagerly on copies of everything it writes, with
 * the outputs landing in `logits` / `result`. *why (when why is not NULL):
 * the eager run's words when it ran and failed, else the status's. */
static hbg_status eager_into(dsv4_state *s, const hbg_case_env *env, const hbg_kernel_table *kt, uint32_t *logits,
                             uint32_t *result, const char **why)
{
    hbg_host_tensor args[A_COUNT];
    void *copies[A_COUNT] = {NULL};
    hbg_status st = HBG_OK;
    memcpy(args, s->args, sizeof args);
    for (uint32_t a = 0; a < A_COUNT && !st; a++) {
        if (!written_in_place(a))
            continue;
        copies[a] = malloc(args[a].layout.nbytes);
        if (!copies[a])
            st = HBG_E_NOMEM;
        else
            memcpy(copies[a], args[a].host, args[a].layout.nbytes);
        args[a].host = copies[a];
    }
    args[A_OUT_LOGITS].host = logits;
    args[A_OUT_RESULT].host = result;
    if (!st) {
        hbg_program p = {.name = "dsv4", .orch = dsv4_orchestrate, .ctx = s, .nargs = A_COUNT, .args = args};
        st = hbg_eager_run(&p, kt, hbg_case_dsv4.heap_bytes, env->rank, env->nranks, env->services);
        if (st && why)
            *why = hbg_eager_last_error();
    }
    for (uint32_t a = 0; a < A_COUNT; a++)
        free(copies[a]);
    return st;
}

static hbg_status compare(const char *what, const uint32_t *got, const uint32_t *want, uint64_t n, char *msg,
                          size_t cap)
{
    for (uint64_t j = 0; j < n; j++)
        if (got[j] != want[j]) {
            snprintf(msg, cap, "%s[%llu] = 0x%08x, golden 0x%08x (exact match expected)", what, (unsigned long long)j,
                     got[j], want[j]);
            return HBG_E_DEVICE;
        }
    return HBG_OK;
}

/* The golden: the eager run's logits and result. */
typedef struct dsv4_golden {
    uint32_t *logits, *result;
} dsv4_golden;

static void dsv4_free_ref(void *ref)
{
    dsv4_golden *g = ref;
    if (g)
        free(g->logits), free(g->result);
    free(g);
}

static hbg_status dsv4_make_ref(void *state, const hbg_case_env *env, const hbg_kernel_table *kt, void **ref,
                                char *msg, size_t cap)
{
    dsv4_state *s = state;
    uint64_t nl = s->args[A_OUT_LOGITS].layout.nbytes / 4, nr = s->args[A_OUT_RESULT].layout.nbytes / 4;
    dsv4_golden *g = calloc(1, sizeof *g);
    if (g)
        g->logits = calloc(nl, 4), g->result = calloc(nr, 4);
    hbg_status st = g && g->logits && g->result ? HBG_OK : HBG_E_NOMEM;
    const char *why = NULL;
    if (!st)
        st = eager_into(s, env, kt, g->logits, g->result, &why);
    if (st) {
        snprintf(msg, cap, "the eager golden run failed: %s", why && *why ? why : hbg_strerror(st));
        dsv4_free_ref(g);
        g = NULL;
    }
    *ref = g;
    return st;
}

static hbg_status dsv4_compare(void *state, const void *ref, char *msg, size_t cap)
{
    const dsv4_state *s = state;
    const dsv4_golden *g = ref;
    uint64_t nl = s->args[A_OUT_LOGITS].layout.nbytes / 4, nr = s->args[A_OUT_RESULT].layout.nbytes / 4;
    hbg_status st = compare("result", s->mem[A_OUT_RESULT], g->result, nr, msg, cap);
    return st ? st : compare("logits", s->mem[A_OUT_LOGITS], g->logits, nl, msg, cap);
}

static void dsv4_teardown(void *state)
{
    free_state(state);
}

void dsv4_set_fault(void *state, dsv4_fault f)
{
    ((dsv4_state *)state)->fault = f;
}

void dsv4_set_plain_tasks(void *state, bool plain)
{
    ((dsv4_state *)state)->plain_tasks = plain;
}

void *dsv4_arg_host(void *state, uint32_t arg)
{
    return arg < A_COUNT ? ((dsv4_state *)state)->mem[arg] : NULL;
}

hbg_status dsv4_eager_outputs(void *state, const hbg_case_env *env, const hbg_kernel_table *kt)
{
    dsv4_state *s = state;
    return eager_into(s, env, kt, s->mem[A_OUT_LOGITS], s->mem[A_OUT_RESULT], NULL);
}

const hbg_case hbg_case_dsv4 = {
    .name = "dsv4",
    .summary = "DeepSeek-V4-shaped decode step, 2 ranks: 1131 host tasks, a 743-node Graph replayed 20x, "
               "MoE through a cross-rank window",
    .default_ranks = DSV4_RANKS,
    .min_ranks = DSV4_RANKS,
    .max_ranks = DSV4_RANKS,
    .default_tile_unit = 0,
    .heap_bytes = HBG_LARGE_HEAP_BYTES,
    .window_bytes = DSV4_WINDOW_BYTES,
    .setup = dsv4_setup,
    .reference = dsv4_make_ref,
    .compare = dsv4_compare,
    .free_ref = dsv4_free_ref,
    .teardown = dsv4_teardown,
};
