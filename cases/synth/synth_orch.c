/* synth — the orchestration: N outer tasks, then R replays of one
 * Definition of M nodes.
 *
 * Task i writes row i of the scratch (rows live in buffers of 128, made by
 * alloc_tensors 32 buffers at a time) and reads F views of two rows each,
 * rows i-f-1 and i-f (f = 1..F, within one buffer): consecutive views
 * overlap by a row, and each view overlaps two writers. The first task of a
 * buffer also reads a strided column down the first 64 rows of the
 * previous buffer (64 writers). Rows are written once, so there is no
 * write-after-read hazard the tensor map (which tracks writers) would miss.
 */
#include "synth/synth.h"

static const uint32_t row_shape[2] = {1, SYN_ROW};

static void row_view(hbg_tensor *v, const hbg_tensor *buf, uint32_t row, uint32_t rows)
{
    uint32_t shape[2] = {rows, SYN_ROW};
    hbg_tensor_view_into(v, buf, (uint64_t)row * SYN_ROW, 2, shape, NULL);
}

/* Scratch buffers c .. c+31 (fewer at the end), in one alloc_tensors. */
static hbg_status alloc_chunks(hbg_orch *o, syn_state *s, uint32_t c)
{
    uint32_t n = s->n.chunks - c < SYN_ALLOC_BATCH ? s->n.chunks - c : SYN_ALLOC_BATCH;
    uint32_t shape[2] = {SYN_CHUNK_ROWS, SYN_ROW};
    hbg_tensor *ts[SYN_ALLOC_BATCH];
    for (uint32_t k = 0; k < n; k++) {
        s->chunk[c + k] = hbg_tensor_desc(HBG_U32, 2, shape);
        ts[k] = &s->chunk[c + k];
    }
    hbg_task_id id;
    return hbg_alloc_tensors(o, n, ts, &id);
}

/* Task i's arguments into a[] (its views built in wr and rd[]); their
 * count. */
static uint32_t task_args(const syn_state *s, const hbg_tensor *in, uint32_t i, hbg_tensor *wr, hbg_tensor *rd,
                          hbg_arg *a)
{
    uint32_t c = i / SYN_CHUNK_ROWS, r = i % SYN_CHUNK_ROWS;
    uint32_t nr = 0, na = 0;
    row_view(wr, &s->chunk[c], r, 1);
    a[na++] = (hbg_arg){wr, HBG_OUT};
    row_view(&rd[nr++], in, i % SYN_IN_ROWS, 1);
    for (uint32_t f = 1; f <= s->p.fanin && f <= i; f++) {
        uint32_t j = i - f, first = j % SYN_CHUNK_ROWS ? j - 1 : j;
        row_view(&rd[nr++], &s->chunk[j / SYN_CHUNK_ROWS], first % SYN_CHUNK_ROWS, j - first + 1);
    }
    if (r == 0 && c > 0) {
        uint32_t shape[2] = {SYN_COLUMN_ROWS, 1};
        int64_t strides[2] = {SYN_ROW, 1};
        hbg_tensor_view_into(&rd[nr++], &s->chunk[c - 1], i % SYN_ROW, 2, shape, strides);
    }
    for (uint32_t k = 0; k < nr; k++)
        a[na++] = (hbg_arg){&rd[k], HBG_IN};
    if (i + 1 == s->p.tasks)
        a[na++] = (hbg_arg){&s->outrow[s->p.replays], HBG_OUT};
    return na;
}

static hbg_status outer_task(hbg_orch *o, syn_state *s, const hbg_tensor *in, uint32_t i)
{
    hbg_tensor rd[SYN_MAX_FANIN + 2], wr;
    hbg_arg a[SYN_MAX_FANIN + 4];
    uint64_t sc[2] = {i, i + 1 == s->p.tasks};
    /* --fault-round: the last task hashes another index in that pass, so
     * the row it writes into `out` is wrong there and right again after */
    if (i + 1 == s->p.tasks && s->p.fault_round && !s->eager && s->device_passes == s->p.fault_round)
        sc[0] ^= 1u << 31;
    hbg_task t = {.kernel_aic = HBG_KERNEL_NONE, .kernel_aiv = SYN_K_ROW_AIV, .core = HBG_CORE_AIV, .blocks = 1,
                  .nscalars = 2, .scalars = sc};
    hbg_task_id id;
    if (s->tbounds)
        return hbg_submit_task_bound(o, &t, s->tbounds[i], &id);
    t.ntensors = task_args(s, in, i, &wr, rd, a);
    t.args = a;
    return hbg_submit_task(o, &t, &id);
}

uint32_t syn_task_args(const syn_state *s, uint32_t i)
{
    hbg_tensor rd[SYN_MAX_FANIN + 2], wr, in = {0};
    hbg_arg a[SYN_MAX_FANIN + 4];
    return task_args(s, &in, i, &wr, rd, a);
}

/* With --bound 1, before chunk c's tasks (its buffer just allocated):
 * their bounds are built again when what their views are built from
 * changed since they were built: chunk c or c-1 (a task reads back at
 * most 16 rows, and the column down the buffer before), or `in`, or (the
 * last task's copy) `out`. In a warm pass none did, and the chunk's 128
 * tasks are passed their bounds as the last pass left them. */
static hbg_status sync_tasks(hbg_orch *o, syn_state *s, const hbg_tensor *in, const hbg_tensor *out, uint32_t c)
{
    bool moved = memcmp(&s->chunk[c], &s->chunk_seen[c], sizeof s->chunk[c]) != 0;
    s->chunk_seen[c] = s->chunk[c];
    bool stale = moved || s->prev_chunk_moved || !s->tasks_built || memcmp(in, &s->in_seen, sizeof *in) != 0 ||
                 memcmp(out, &s->tout_seen, sizeof *out) != 0;
    s->prev_chunk_moved = moved;
    if (!stale)
        return HBG_OK;
    uint32_t end = (c + 1) * SYN_CHUNK_ROWS < s->p.tasks ? (c + 1) * SYN_CHUNK_ROWS : s->p.tasks;
    for (uint32_t i = c * SYN_CHUNK_ROWS; i < end; i++) {
        hbg_tensor rd[SYN_MAX_FANIN + 2], wr;
        hbg_arg a[SYN_MAX_FANIN + 4];
        hbg_status st = case_bound_fill(o, "task", i, s->tbounds[i], task_args(s, in, i, &wr, rd, a), a);
        if (st)
            return st;
    }
    return HBG_OK;
}

/* Node m writes a temporary (the last node: boundary tensor 0, a row of
 * `out`) from the F temporaries before it and one boundary input. */
static hbg_status body(hbg_orch *o, void *ctx, const hbg_boundary *b)
{
    syn_state *s = ctx;
    hbg_status st = HBG_OK;
    for (uint32_t m = 0; m < s->p.nodes && !st; m++) {
        hbg_arg a[SYN_MAX_FANIN + 2];
        uint32_t na = 0;
        if (m + 1 < s->p.nodes) {
            s->tmp[m] = hbg_tensor_desc(HBG_U32, 2, row_shape);
            a[na++] = (hbg_arg){&s->tmp[m], HBG_OUT_ALLOC};
        } else {
            a[na++] = (hbg_arg){b->args[0].t, HBG_OUT};
        }
        for (uint32_t f = 1; f <= s->p.fanin && f <= m; f++)
            a[na++] = (hbg_arg){&s->tmp[m - f], HBG_IN};
        if (b->ntensors > 1)
            a[na++] = (hbg_arg){b->args[1 + m % (b->ntensors - 1)].t, HBG_IN};
        uint64_t sc[2] = {m, 0};
        hbg_task t = {.kernel_aic = SYN_K_NODE_AIC, .kernel_aiv = HBG_KERNEL_NONE, .core = HBG_CORE_AIC,
                      .blocks = 1, .ntensors = na, .args = a, .nscalars = 2, .scalars = sc};
        hbg_task_id id;
        st = hbg_submit_task(o, &t, &id);
    }
    return st;
}

/* Replay k's boundary, into b[] (over bv[]): boundary 0 is row k of
 * `out`; boundaries 1 .. B-1 are views of two rows of one scratch buffer,
 * two views per starting row, so they overlap each other and each
 * overlaps two writers. */
static void boundary_of(syn_state *s, uint32_t k, hbg_tensor *bv, hbg_arg *b)
{
    uint32_t N = s->p.tasks, rows = N < 2 ? N : 2;
    uint32_t nc = (N - rows) / SYN_CHUNK_ROWS + 1; /* buffers with `rows` rows written */
    uint32_t c = k % nc, cnt = N - c * SYN_CHUNK_ROWS, off = (k * 37u) % SYN_CHUNK_ROWS;
    if (cnt > SYN_CHUNK_ROWS)
        cnt = SYN_CHUNK_ROWS;
    b[0] = (hbg_arg){&s->outrow[k], HBG_OUT};
    for (uint32_t v = 1; v < s->p.boundary; v++) {
        uint32_t j = off + (v - 1) / 2;
        if (j > cnt - rows)
            j = cnt - rows;
        row_view(&bv[v], &s->chunk[c], j, rows);
        b[v] = (hbg_arg){&bv[v], HBG_IN};
    }
}

static hbg_status replay(hbg_orch *o, syn_state *s, uint32_t k)
{
    hbg_task_id id;
    if (s->bounds)
        return hbg_submit_graph_bound(o, SYN_GRAPH_KEY, body, s, s->bounds[k], NULL, 0, &id);
    hbg_tensor bv[HBG_MAX_BOUNDARY_TENSORS];
    hbg_arg b[HBG_MAX_BOUNDARY_TENSORS];
    boundary_of(s, k, bv, b);
    hbg_boundary bd = {.ntensors = s->p.boundary, .args = b};
    return hbg_submit_graph(o, SYN_GRAPH_KEY, body, s, &bd, 0, &id);
}

/* With --bound 1: the replays' boundaries, built into their bounds when
 * what they are built from changed (the first pass, a moved `out`, a
 * heap that gave the scratch other buffers); otherwise each replay is
 * passed its bound as the last pass left it. */
static hbg_status sync_bounds(hbg_orch *o, syn_state *s, const hbg_tensor *out)
{
    if (s->bounds_built && memcmp(out, &s->out_seen, sizeof *out) == 0 &&
        memcmp(s->chunk, s->rchunk_seen, (size_t)s->n.chunks * sizeof *s->chunk) == 0)
        return HBG_OK;
    hbg_tensor bv[HBG_MAX_BOUNDARY_TENSORS];
    hbg_arg b[HBG_MAX_BOUNDARY_TENSORS];
    for (uint32_t k = 0; k < s->p.replays; k++) {
        boundary_of(s, k, bv, b);
        hbg_status st = case_bound_fill(o, "replay", k, s->bounds[k], s->p.boundary, b);
        if (st)
            return st;
    }
    s->out_seen = *out;
    memcpy(s->rchunk_seen, s->chunk, (size_t)s->n.chunks * sizeof *s->chunk);
    s->bounds_built = true;
    return HBG_OK;
}

hbg_status syn_orchestrate(hbg_orch *o, void *ctx)
{
    syn_state *s = ctx;
    if (!s->eager)
        s->device_passes++;
    hbg_tensor in = *hbg_orch_arg(o, 0), out = *hbg_orch_arg(o, 1);
    for (uint32_t k = 0; k <= s->p.replays; k++)
        row_view(&s->outrow[k], &out, k, 1);
    hbg_status st = HBG_OK;
    for (uint32_t i = 0; i < s->p.tasks && !st; i++) {
        uint32_t c = i / SYN_CHUNK_ROWS;
        if (i % SYN_CHUNK_ROWS == 0 && c % SYN_ALLOC_BATCH == 0)
            st = alloc_chunks(o, s, c);
        if (!st && s->tbounds && i % SYN_CHUNK_ROWS == 0)
            st = sync_tasks(o, s, &in, &out, c);
        if (!st)
            st = outer_task(o, s, &in, i);
    }
    if (s->tbounds) {
        s->in_seen = in, s->tout_seen = out;
        s->tasks_built = !st;
    }
    if (!st && s->bounds)
        st = sync_bounds(o, s, &out);
    for (uint32_t k = 0; k < s->p.replays && !st; k++)
        st = replay(o, s, k);
    return st ? st : hbg_orch_error(o);
}
