/* hbg's side: the case's own orchestration through the orchestrator (the
 * host_orch segment of a bind pass: the orchestration function and the
 * end of the pass), and the flat stream submitted task by task through the
 * public API, every Graph body inline. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph_internal.h"
#include "peers_capture.h"
#include "peers_hbg.h"

hbg_status peers_hbg_open(const peers_case *pc, uint32_t window, uint64_t heap_base, bool journal, hbg_orch **o)
{
    hbg__orch_config cfg = {.task_window = window, .heap_base = heap_base, .heap_bytes = pc->heap_bytes,
                            .rank = pc->env.rank, .nranks = pc->env.nranks, .no_journal = !journal};
    return hbg__graph_orch_create(&cfg, o);
}

void peers_hbg_close(hbg_orch *o)
{
    if (o)
        hbg__orch_destroy(o);
}

hbg_status peers_hbg_case_pass(hbg_orch *o, const peers_case *pc, uint64_t *ns)
{
    /* The runtime rebuilds the caller tensors every pass; so does this. */
    static hbg_tensor args[256];
    memcpy(args, pc->args, (size_t)pc->prog.nargs * sizeof args[0]);
    hbg__orch_begin_pass(o, PEERS_HEAP_BASE, args, pc->prog.nargs);
    uint64_t t0 = hbg_mono_ns();
    hbg_status ost = pc->prog.orch(o, pc->prog.ctx);
    hbg_status st = hbg__orch_end_pass(o);
    *ns = hbg_mono_ns() - t0;
    return st ? st : ost;
}

/* Submits stream task i as it was submitted in the capture. */
static hbg_status submit_one(hbg_orch *o, const peers_stream *s, uint32_t i)
{
    const peers_task *t = &s->tasks[i];
    hbg_tensor ts[HBG_MAX_TASK_TENSORS + 1], *tp[HBG_MAX_ALLOC_TENSORS];
    hbg_arg args[HBG_MAX_TASK_TENSORS];
    hbg_task_id id;
    const peers_arg *a = s->args + t->arg_off;
    if (t->kind == PEERS_ALLOC) {
        for (uint32_t k = 0; k < t->nargs; k++) {
            ts[k] = a[k].t;
            ts[k].addr = ts[k].nbytes = 0;
            ts[k].creator = 0;
            tp[k] = &ts[k];
        }
        return hbg_alloc_tensors(o, t->nargs, tp, &id);
    }
    if (t->kind == PEERS_DUMMY)
        return hbg_submit_dummy(o, t->ndeps, t->ndeps ? s->deps + t->dep_off : NULL, &id);
    uint32_t n = 0;
    hbg_pred pred, *pp = NULL;
    for (uint32_t k = 0; k < t->nargs; k++) {
        ts[k] = a[k].t;
        if (a[k].dir == PEERS_PRED) {
            pred = (hbg_pred){.t = &ts[k], .byte_offset = 0, .value = 0, .op = HBG_CMP_NE, .elem_size = 1};
            pp = &pred;
            continue;
        }
        if (a[k].dir == HBG_OUT_ALLOC)
            ts[k].addr = ts[k].nbytes = ts[k].creator = 0;
        args[n++] = (hbg_arg){&ts[k], a[k].dir};
    }
    hbg_task task = {.kernel_aic = t->kernel_aic, .kernel_aiv = t->kernel_aiv, .core = t->core,
                     .sync_start = t->sync_start, .blocks = t->blocks, .ntensors = n, .args = args,
                     .nscalars = t->nscalars, .scalars = t->nscalars ? s->scalars + t->sc_off : NULL,
                     .ndeps = t->ndeps, .deps = t->ndeps ? s->deps + t->dep_off : NULL, .pred = pp};
    return hbg_submit_task(o, &task, &id);
}

hbg_status peers_hbg_flat_pass(hbg_orch *o, const peers_stream *s, uint64_t *ns)
{
    hbg__orch_begin_pass(o, PEERS_HEAP_BASE, NULL, 0);
    uint64_t t0 = hbg_mono_ns();
    bool manual = false;
    for (uint32_t i = 0; i < s->ntasks; i++) {
        if (s->tasks[i].manual != manual) {
            manual = s->tasks[i].manual;
            if (manual)
                hbg_scope_begin(o, HBG_SCOPE_MANUAL);
            else
                hbg_scope_end(o);
        }
        submit_one(o, s, i);
    }
    if (manual)
        hbg_scope_end(o);
    hbg_status st = hbg__orch_end_pass(o);
    *ns = hbg_mono_ns() - t0;
    return st;
}

uint64_t peers_hbg_flat_edges(const hbg_orch *o)
{
    return o->img.nfanin;
}

/* Everything the pass built: its tasks' fanins, and each replay's
 * Definition's node fanins (a replay expands them on the device). */
void peers_hbg_case_counts(const hbg_orch *o, peers_hbg_counts *c)
{
    memset(c, 0, sizeof *c);
    c->outer_edges = o->img.nfanin;
    for (uint32_t i = 0; i < o->img.ntasks; i++) {
        uint8_t k = o->img.tasks[i].kind;
        c->outer_tasks += k == HBG_TASK_KERNEL || k == HBG_TASK_DUMMY;
    }
    c->replays = o->img.nreplay;
    for (uint32_t r = 0; r < o->img.nreplay; r++) {
        const hbg_def_header *h = hbg__def_image(o, o->img.replays[r].def);
        const hbg_def_node *nodes = (const hbg_def_node *)(const void *)((const unsigned char *)h + h->off_nodes);
        c->node_edges += h->nfanin;
        for (uint32_t n = 0; n < h->nnodes; n++)
            c->node_tasks += nodes[n].kind == HBG_TASK_KERNEL || nodes[n].kind == HBG_TASK_DUMMY;
    }
}

hbg_status peers_hbg_check_flat(const hbg_orch *o, const peers_stream *s, char *msg, size_t cap)
{
    /* The flat pass must have made the stream's buffers at the stream's
     * addresses, or its edges are not those of the stream. */
    for (uint32_t i = 0; i < s->ntasks; i++) {
        const peers_task *t = &s->tasks[i];
        const hbg_img_task *d = &o->img.tasks[i];
        uint32_t k = 0;
        for (uint32_t j = 0; j < t->nargs; j++) {
            const peers_arg *a = &s->args[t->arg_off + j];
            if (a->dir == PEERS_PRED)
                continue;
            if (k < d->tensor_cnt && o->img.tensors[d->tensor_off + k].addr != a->t.addr) {
                snprintf(msg, cap, "%s: task %u argument %u is at 0x%llx in hbg's flat pass, 0x%llx in the stream",
                         s->name, i, j, (unsigned long long)o->img.tensors[d->tensor_off + k].addr,
                         (unsigned long long)a->t.addr);
                return HBG_E_INVAL;
            }
            k++;
        }
    }
    return HBG_OK;
}
