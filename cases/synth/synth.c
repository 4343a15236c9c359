/* synth — a parametric workload for the cost model of bind.
 *
 * `hbg run synth --tasks N --graph-nodes M --replays R --boundary B
 * --fanin F`: the runtime's task window and GM heap are sized from the
 * parameters, so a pass of 10^6 tasks binds like one of 10^3; past the
 * hard caps (SYN_MAX_WINDOW tasks, SYN_MAX_HEAP bytes) the parameters are
 * refused with a one-line reason before anything is allocated. The golden
 * is the same orchestration run eagerly, in program order, on host memory.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostmem.h"
#include "rng.h"
#include "synth/synth.h"

static const hbg_case_param params[] = {
    [SYN_P_TASKS] = {"tasks", "outer tasks", 1000, 1, SYN_MAX_WINDOW},
    [SYN_P_NODES] = {"graph-nodes", "nodes of the Definition", 100, 1, HBG_MAX_DEF_NODES},
    [SYN_P_REPLAYS] = {"replays", "replays of the Definition", 10, 0, SYN_MAX_WINDOW},
    [SYN_P_BOUNDARY] = {"boundary", "boundary tensors per replay", 8, 1, HBG_MAX_BOUNDARY_TENSORS},
    [SYN_P_FANIN] = {"fanin", "earlier results each task and node reads", 2, 0, SYN_MAX_FANIN},
    [SYN_P_BOUND] = {"bound", "1: bounds (hbg_bound) hold each task's arguments and replay's tensors, 0: views each pass",
                     0, 0, 1},
    [SYN_P_FAULT] = {"fault-round", "a round whose device result is made wrong, to see the golden find it (0: none)",
                     0, 0, 100000},
    [SYN_NPARAMS] = {NULL, NULL, 0, 0, 0},
};

syn_params syn_params_of(const hbg_case_env *env)
{
    return (syn_params){(uint32_t)env->param[SYN_P_TASKS], (uint32_t)env->param[SYN_P_NODES],
                        (uint32_t)env->param[SYN_P_REPLAYS], (uint32_t)env->param[SYN_P_BOUNDARY],
                        (uint32_t)env->param[SYN_P_FANIN], (uint32_t)env->param[SYN_P_BOUND],
                        (uint32_t)env->param[SYN_P_FAULT]};
}

#define ALIGN64(x) (((x) + 63u) & ~(uint64_t)63u)

hbg_status syn_count(const syn_params *p, syn_counts *n, char *msg, size_t cap)
{
    memset(n, 0, sizeof *n);
    if (p->tasks < 1 || p->tasks > SYN_MAX_WINDOW || p->nodes < 1 || p->nodes > HBG_MAX_DEF_NODES ||
        p->replays > SYN_MAX_WINDOW || p->boundary < 1 || p->boundary > HBG_MAX_BOUNDARY_TENSORS ||
        p->fanin > SYN_MAX_FANIN || p->bound > 1) {
        snprintf(msg, cap, "a parameter is out of its range (`hbg run --list` gives each range)");
        return HBG_E_INVAL;
    }
    n->chunks = (p->tasks + SYN_CHUNK_ROWS - 1) / SYN_CHUNK_ROWS;
    n->allocs = (n->chunks + SYN_ALLOC_BATCH - 1) / SYN_ALLOC_BATCH;
    uint64_t window = (uint64_t)p->tasks + p->replays + n->allocs;
    if (window > SYN_MAX_WINDOW) {
        snprintf(msg, cap,
                 "%" PRIu64 " tasks per pass (%u outer + %u replays + %u allocations) is past the cap of %u "
                 "(the task window); lower --tasks or --replays",
                 window, p->tasks, p->replays, n->allocs, SYN_MAX_WINDOW);
        return HBG_E_INVAL;
    }
    n->window = (uint32_t)window;
    /* A task's calls: its row written, its F views and the input row
     * read, the column and the copy; a replay's: each boundary slot read
     * or written (twice, to spare), an allocation's none. Sized so that
     * every warm pass follows the journal whatever the boundary's width,
     * up to the journal's cap (HBG_MAX_JOURNAL_CALLS: some 2 x 10^6
     * replays of 128 slots, past which the last replays walk); the
     * runtime's default (16 a window task) is less than a replay of more
     * than 8 slots makes. */
    uint64_t calls = (uint64_t)p->tasks * (p->fanin + 4u) + (uint64_t)p->replays * 2u * p->boundary;
    uint64_t floor = window * HBG_DEFAULT_JOURNAL_CALLS_PER_TASK;
    calls = calls > floor ? calls : floor;
    n->journal_calls = (uint32_t)(calls < HBG_MAX_JOURNAL_CALLS ? calls : HBG_MAX_JOURNAL_CALLS);
    n->eager_window = (uint64_t)p->tasks + n->allocs + (uint64_t)p->replays * p->nodes;
    n->device_steps = window + (uint64_t)p->replays * p->nodes;
    /* Each buffer is 2 KB; each replay carves M-1 temporaries of one
     * 64-byte-aligned row; 1 MB to spare. */
    uint64_t per_replay = ALIGN64((uint64_t)(p->nodes - 1) * 64u);
    n->heap_bytes = (uint64_t)n->chunks * ALIGN64(SYN_CHUNK_ROWS * SYN_ROW * 4u) + p->replays * per_replay +
                    (1u << 20);
    if (n->heap_bytes > SYN_MAX_HEAP) {
        snprintf(msg, cap,
                 "a pass needs %" PRIu64 " bytes of GM heap, past the cap of %llu; lower --replays or "
                 "--graph-nodes",
                 n->heap_bytes, (unsigned long long)SYN_MAX_HEAP);
        return HBG_E_INVAL;
    }
    return HBG_OK;
}

/* Resident bytes, measured (peak RSS of `hbg run synth` over each
 * parameter swept alone, plus some 10 % so that another machine's
 * allocator still fits under it; tests/test_case_synth.c checks the sum
 * covers real runs, from the second pass on, when the memo and the
 * journal are written): the process (CASE_PROCESS_BYTES); per outer task its
 * image records twice (staging and device), the task memo and the
 * tensor map's journal, each of its F reads adding a tensor record and
 * journal calls; per replay its records and per boundary slot its
 * 24-byte image record and its calls; per recorded node the Definition.
 * The device adds the GM heap it writes, each replay's expansion and
 * each node it runs; the eager golden a window task per task it runs. */
#define SYN_MEM_TASK 1280u
#define SYN_MEM_TASK_READ 480u
#define SYN_MEM_REPLAY 896u
#define SYN_MEM_SLOT 224u
#define SYN_MEM_NODE 1536u
#define SYN_MEM_DEV_TASK 128u
#define SYN_MEM_DEV_REPLAY 128u
#define SYN_MEM_DEV_NODE 96u
#define SYN_MEM_EAGER_TASK 512u
#define SYN_MEM_EAGER_READ 112u
/* A bound: its header, allocation and pointer, and a tensor and an
 * argument a slot (an outer task has F + 2, a chunk's first one more);
 * with the scratch buffers' two copies a chunk. */
#define SYN_MEM_BOUND 64u
#define SYN_MEM_BOUND_SLOT 112u
#define SYN_MEM_BOUND_CHUNK 192u

syn_memory syn_host_bytes(const syn_params *p, const syn_counts *n, bool device, bool golden)
{
    syn_memory m = {0};
    m.runtime = CASE_PROCESS_BYTES + (uint64_t)p->tasks * (SYN_MEM_TASK + SYN_MEM_TASK_READ * p->fanin) +
                (uint64_t)p->replays * (SYN_MEM_REPLAY + (uint64_t)SYN_MEM_SLOT * p->boundary) +
                (uint64_t)p->nodes * SYN_MEM_NODE;
    if (p->bound)
        m.runtime += (uint64_t)p->replays * (SYN_MEM_BOUND + (uint64_t)SYN_MEM_BOUND_SLOT * p->boundary) +
                     (uint64_t)p->tasks * (SYN_MEM_BOUND + (uint64_t)SYN_MEM_BOUND_SLOT * (p->fanin + 3u)) +
                     (uint64_t)n->chunks * SYN_MEM_BOUND_CHUNK;
    if (device)
        m.device = n->heap_bytes + (uint64_t)p->tasks * SYN_MEM_DEV_TASK + (uint64_t)p->replays * SYN_MEM_DEV_REPLAY +
                   (uint64_t)p->replays * p->nodes * SYN_MEM_DEV_NODE;
    /* Past its window cap the golden refuses before it allocates. */
    if (device && golden && n->eager_window <= SYN_MAX_WINDOW)
        m.golden = n->eager_window * (SYN_MEM_EAGER_TASK + SYN_MEM_EAGER_READ * p->fanin);
    return m;
}

hbg_status syn_check_fits(const syn_params *p, const hbg_case_host *h, char *msg, size_t cap)
{
    syn_counts n;
    hbg_status st = syn_count(p, &n, msg, cap);
    if (st)
        return st;
    syn_memory m = syn_host_bytes(p, &n, h->device, h->golden);
    uint64_t need = m.runtime + m.device + m.golden;
    if (need <= h->avail)
        return HBG_OK;
    char parts[96] = "";
    if (m.golden)
        snprintf(parts, sizeof parts, " (%s of it the device run's, %s the golden's)", case_mem(m.device).s,
                 case_mem(m.golden).s);
    else if (m.device)
        snprintf(parts, sizeof parts, " (%s of it the device run's)", case_mem(m.device).s);
    snprintf(msg, cap,
             "a run of these parameters needs about %s of memory%s; %s is available (%s); lower --tasks, "
             "--replays, --graph-nodes, --boundary or --fanin%s",
             case_mem(need).s, parts, case_mem(h->avail).s, h->avail_from,
             m.golden   ? ", or leave out the golden (--skip-golden) or the device run (--skip-device-run)"
             : m.device ? ", or leave out the device run (--skip-device-run)"
                        : "");
    return HBG_E_NOMEM;
}

hbg_status syn_check_steps(const syn_params *p, uint64_t max_steps, char *msg, size_t cap)
{
    syn_counts n;
    hbg_status st = syn_count(p, &n, msg, cap);
    if (st || n.device_steps <= max_steps)
        return st;
    snprintf(msg, cap,
             "a device run asks for %" PRIu64 " steps a pass (%u outer + %u allocations + %u replays x (1 + %u "
             "nodes)), past the device's limit of %" PRIu64 " (--device-steps); lower --replays, --graph-nodes or "
             "--tasks, raise --device-steps, or leave out the device run (--skip-device-run)",
             n.device_steps, p->tasks, n.allocs, p->replays, p->nodes, max_steps);
    return HBG_E_INVAL;
}

hbg_status syn_check_golden(const syn_params *p, uint64_t max_tasks, char *msg, size_t cap)
{
    syn_counts n;
    hbg_status st = syn_count(p, &n, msg, cap);
    if (st || n.eager_window <= max_tasks)
        return st;
    snprintf(msg, cap,
             "the eager golden would run %" PRIu64 " tasks a pass (%u outer + %u allocations + %u replays x %u "
             "nodes, each replay's nodes inline), past its cap of %" PRIu64 "; lower --replays, --graph-nodes or "
             "--tasks, or leave out the golden (--skip-golden)",
             n.eager_window, p->tasks, n.allocs, p->replays, p->nodes, max_tasks);
    return HBG_E_INVAL;
}

static hbg_status syn_steps(const hbg_case_env *env, uint64_t max_steps, char *msg, size_t cap)
{
    syn_params p = syn_params_of(env);
    return syn_check_steps(&p, max_steps, msg, cap);
}

static hbg_status syn_golden_cap(const hbg_case_env *env, char *msg, size_t cap)
{
    syn_params p = syn_params_of(env);
    return syn_check_golden(&p, SYN_MAX_WINDOW, msg, cap);
}

static hbg_status syn_fits(const hbg_case_env *env, const hbg_case_host *h, char *msg, size_t cap)
{
    syn_params p = syn_params_of(env);
    return syn_check_fits(&p, h, msg, cap);
}

static hbg_status syn_pools(const hbg_case_env *env, hbg_case_pools *out, char *msg, size_t cap)
{
    syn_params p = syn_params_of(env);
    syn_counts n;
    hbg_status st = syn_count(&p, &n, msg, cap);
    if (!st)
        *out = (hbg_case_pools){.heap_bytes = n.heap_bytes, .task_window = n.window, .journal_calls = n.journal_calls};
    return st;
}

static void free_state(syn_state *s)
{
    if (!s)
        return;
    if (s->bounds)
        for (uint32_t k = 0; k < s->p.replays; k++)
            hbg_bound_destroy(s->bounds[k]);
    if (s->tbounds)
        for (uint32_t i = 0; i < s->p.tasks; i++)
            hbg_bound_destroy(s->tbounds[i]);
    free(s->bounds), free(s->tbounds), free(s->chunk_seen), free(s->rchunk_seen);
    free(s->in), free(s->out), free(s->chunk), free(s->outrow), free(s->tmp);
    free(s);
}

/* --bound 1: a bound per replay and per outer task, its slots set by the
 * first pass. */
static hbg_status make_bounds(syn_state *s)
{
    s->bounds = calloc(s->p.replays ? s->p.replays : 1, sizeof *s->bounds);
    s->tbounds = calloc(s->p.tasks, sizeof *s->tbounds);
    s->chunk_seen = calloc(s->n.chunks, sizeof *s->chunk_seen);
    s->rchunk_seen = calloc(s->n.chunks, sizeof *s->rchunk_seen);
    if (!s->bounds || !s->tbounds || !s->chunk_seen || !s->rchunk_seen)
        return HBG_E_NOMEM;
    hbg_arg a[HBG_MAX_BOUND_TENSORS];
    for (uint32_t v = 0; v < HBG_MAX_BOUND_TENSORS; v++)
        a[v] = (hbg_arg){&s->outrow[0], v ? HBG_IN : HBG_OUT};
    hbg_status st = HBG_OK;
    for (uint32_t k = 0; k < s->p.replays && !st; k++)
        st = hbg_bound_create(s->p.boundary, a, &s->bounds[k]);
    for (uint32_t i = 0; i < s->p.tasks && !st; i++)
        st = hbg_bound_create(syn_task_args(s, i), a, &s->tbounds[i]);
    return st;
}

static hbg_status syn_setup(const hbg_case_env *env, hbg_kernel_table *kt, hbg_program *prog, void **state)
{
    *state = NULL;
    syn_state *s = calloc(1, sizeof *s);
    if (!s)
        return HBG_E_NOMEM;
    s->p = syn_params_of(env);
    char msg[256];
    hbg_status st = syn_count(&s->p, &s->n, msg, sizeof msg);
    if (st) {
        free(s);
        return st;
    }
    uint32_t outrows = s->p.replays + 1;
    s->in = calloc((size_t)SYN_IN_ROWS * SYN_ROW, 4);
    s->out = calloc((size_t)outrows * SYN_ROW, 4);
    s->chunk = calloc(s->n.chunks, sizeof *s->chunk);
    s->outrow = calloc(outrows, sizeof *s->outrow);
    s->tmp = calloc(s->p.nodes, sizeof *s->tmp);
    if (!s->in || !s->out || !s->chunk || !s->outrow || !s->tmp) {
        free_state(s);
        return HBG_E_NOMEM;
    }
    uint64_t rng = 0x5e17a11ce0ddba11ull;
    for (uint32_t j = 0; j < SYN_IN_ROWS * SYN_ROW; j++)
        s->in[j] = (uint32_t)case_splitmix64(&rng);
    uint32_t in_shape[2] = {SYN_IN_ROWS, SYN_ROW}, out_shape[2] = {outrows, SYN_ROW};
    s->args[0] = (hbg_host_tensor){"in", s->in, hbg_tensor_desc(HBG_U32, 2, in_shape), HBG_IN, true};
    s->args[1] = (hbg_host_tensor){"out", s->out, hbg_tensor_desc(HBG_U32, 2, out_shape), HBG_OUT, false};
    s->args[0].layout.nbytes = (uint64_t)SYN_IN_ROWS * SYN_ROW * 4;
    s->args[1].layout.nbytes = (uint64_t)outrows * SYN_ROW * 4;
    if ((st = syn_register_kernels(kt)) || (s->p.bound && (st = make_bounds(s)))) {
        free_state(s);
        return st;
    }
    *prog = (hbg_program){.name = "synth", .orch = syn_orchestrate, .ctx = s, .nargs = 2, .args = s->args};
    *state = s;
    return HBG_OK;
}

hbg_status syn_eager(syn_state *s, const hbg_case_env *env, const hbg_kernel_table *kt, uint32_t window, uint32_t *out)
{
    hbg_host_tensor args[2] = {s->args[0], s->args[1]};
    args[1].host = out;
    hbg_program p = {.name = "synth", .orch = syn_orchestrate, .ctx = s, .nargs = 2, .args = args};
    s->eager = true;
    hbg_status st = hbg_eager_run_window(&p, kt, s->n.heap_bytes, window, env->rank, env->nranks, env->services);
    s->eager = false;
    return st;
}

/* The orchestration run eagerly into a fresh `out` (*ref). Parameters
 * past the golden's cap were refused before any rank started (hbg run,
 * syn_golden_cap); refused here too, for a caller that did not ask. */
static hbg_status syn_make_ref(void *state, const hbg_case_env *env, const hbg_kernel_table *kt, void **ref,
                               char *msg, size_t cap)
{
    syn_state *s = state;
    *ref = NULL;
    uint64_t words = (uint64_t)(s->p.replays + 1) * SYN_ROW;
    hbg_status st = syn_check_golden(&s->p, SYN_MAX_WINDOW, msg, cap);
    if (st)
        return st;
    uint32_t *w = calloc(words, 4);
    if (!w) {
        snprintf(msg, cap, "the golden's %" PRIu64 " words: out of memory", words);
        return HBG_E_NOMEM;
    }
    st = syn_eager(s, env, kt, (uint32_t)s->n.eager_window, w);
    if (st) {
        snprintf(msg, cap, "the eager golden run failed: %s",
                 *hbg_eager_last_error() ? hbg_eager_last_error() : hbg_strerror(st));
        free(w);
        return st;
    }
    *ref = w;
    return HBG_OK;
}

/* `out` against the golden, word by word. */
static hbg_status syn_compare(void *state, const void *ref, char *msg, size_t cap)
{
    const syn_state *s = state;
    const uint32_t *want = ref;
    uint64_t words = (uint64_t)(s->p.replays + 1) * SYN_ROW;
    for (uint64_t j = 0; j < words; j++)
        if (s->out[j] != want[j]) {
            snprintf(msg, cap, "out[%" PRIu64 "][%" PRIu64 "] = 0x%08x, golden 0x%08x (exact match expected)",
                     j / SYN_ROW, j % SYN_ROW, s->out[j], want[j]);
            return HBG_E_DEVICE;
        }
    return HBG_OK;
}

static void syn_teardown(void *state)
{
    free_state(state);
}

const hbg_case hbg_case_synth = {
    .name = "synth",
    .summary = "parametric: N tasks over overlapping views, a Definition of M nodes replayed R times "
               "with B boundary tensors, fan-in F (sized from the parameters)",
    .default_ranks = 1,
    .min_ranks = 1,
    .max_ranks = 1,
    .default_tile_unit = 0, /* no tile unit: its sizes are its parameters */
    .heap_bytes = 0,
    .setup = syn_setup,
    .reference = syn_make_ref,
    .compare = syn_compare,
    .free_ref = free,
    .teardown = syn_teardown,
    .params = params,
    .pools = syn_pools,
    .fits = syn_fits,
    .steps = syn_steps,
    .golden_cap = syn_golden_cap,
};
