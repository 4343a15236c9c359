/* The task memo for replays (see orch/taskmemo.h for the kernel tasks').
 *
 * A replay's outer task, fanins, written-slot copies, boundary image and
 * replay record are a function of the call (key, boundary, dependencies),
 * of the Definition it replays (its image and signature), and of the state
 * it meets: the window's, the heap's and the boundary sections' fill, the
 * def table, and the tensor map. So a call that replays the Definition the
 * last pass replayed at the same window slot, under the same entry gen (the
 * entry's image and signature unchanged, graph.c's build_definition), with
 * a boundary equal byte for byte but for its scalars (which a replay only
 * copies into its record, and an answer copies too), the map following its
 * journal where that replay's calls began and the fills as they were then,
 * keeps the last pass's records instead of matching, inferring and writing
 * them again.
 *
 * A boundary slot's 96-byte tensor is compared in three parts: the layout
 * bytes against the signature (exactly, not field by field), buffer,
 * size and offset against the slot's image record, and the two fields
 * neither holds (creator, reserved2) against memo_bx, kept beside the
 * boundary image. The written slots' copies in the image are then the
 * same bytes too. A boundary from a bound (bound.c) is not read at all:
 * the note keeps the bound's stamp, and a call that passes a bound with
 * that stamp passes the tensors and directions the noted call did (a
 * stamp names one content, of one bound, for the life of the process).
 *
 * Recording is never skipped: a call that records (the first of its key in
 * a pass that re-records) takes the full path; the replays after it are
 * answered when the recording built the same Definition as the last pass.
 * Calls with HBG_GRAPH_CHECK_BODY take the full path (they run the body).
 * Neither is noted, as no later pass would ask for the note: a recording
 * call records again in the next pass, and with kept Definitions the next
 * pass's call is a replay, noted itself. (Such a call replays the
 * boundary as it was passed, the recorder's snapshot, whatever the body
 * did to the caller's.)
 */
#include "graph/graph_internal.h"
#include "orch/taskmemo.h"
#include "util/bytes.h"

/* The fields of a boundary tensor outside the signature and the image. */
static uint64_t extra_of(const hbg_tensor *t)
{
    return (uint64_t)t->creator | (uint64_t)t->reserved2 << 32;
}

/* Whether t's layout bytes are exactly the signature slot's. */
static bool layout_is(const hbg_tensor *t, const hbg__bslot *p)
{
    return hbg__same_bytes16((const unsigned char *)t + offsetof(hbg_tensor, strides), p, HBG_BSLOT_LAYOUT_BYTES);
}

/* The boundary's scalars are not compared: a replay only copies them
 * into its record (nothing else depends on their values), so an answer
 * copies them too. A decode step's replays differ from the last pass's
 * there alone (the step's position). */
static bool same_boundary(const hbg_orch *o, const hbg__memo *m, const hbg__def_entry *e, const hbg_boundary *b,
                          uint64_t stamp, const hbg_img_task *d, const hbg_img_replay *rp)
{
    if (b->ntensors != e->sig.nbt || b->nscalars != e->sig.nbs || b->ndeps != m->ndeps ||
        !hbg__memo_deps_lead(o, d, b->deps, b->ndeps))
        return false;
    if (stamp)
        return m->u.r.bound == stamp;
    const hbg_img_btensor *bt = o->img.btensors + rp->btensor_off;
    const uint64_t *bx = o->graph->memo_bx + rp->btensor_off;
    for (uint32_t k = 0; k < b->ntensors; k++) {
        const hbg_arg *a = &b->args[k];
        const hbg_tensor *t = a->t;
        const hbg__bslot *p = &e->sig.slot[k];
        if (!t || a->dir != p->dir || !layout_is(t, p) || t->addr != bt[k].addr || t->nbytes != bt[k].nbytes ||
            t->offset != bt[k].offset || extra_of(t) != bx[k])
            return false;
    }
    return true;
}

/* The gen alone names the Definition: gens are never reused, across
 * entries either, and an entry under another key has another image (the
 * key is in its header) and so another gen. */
bool hbg__replay_memo_hit(hbg_orch *o, hbg__def_entry *e, const hbg_boundary *b, uint64_t stamp, hbg_task_id *id)
{
    struct hbg__graph *g = o->graph;
    uint32_t n = o->img.ntasks;
    if (!g->memo_bx || !hbg__memo_usable(o, n))
        return false;
    hbg__memo *m = &o->memo[n];
    const hbg_img_task *d = &o->img.tasks[n];
    if (d->kind != HBG_TASK_REPLAY || m->u.r.gen != e->gen || d->fanin_off != o->img.nfanin ||
        d->tensor_off != o->img.ntensor || d->scalar_off != o->img.nscalar || d->replay != o->img.nreplay)
        return false;
    const hbg_img_replay *rp = &o->img.replays[d->replay];
    /* Whether this replay puts the Definition in the def table depends on
     * the calls before it in this pass, not the last: decided now, like
     * the full path, and the record must name the index it would. */
    bool add = e->deftab_stamp_pass != o->pass;
    if (rp->task != n || rp->btensor_off != o->img.nbtensor || rp->bscalar_off != o->img.nbscalar ||
        rp->def != (add ? o->img.ndeftab : e->deftab_index) || !same_boundary(o, m, e, b, stamp, d, rp))
        return false;

    /* The replay, as the full path would make it (graph.c's replay()). */
    o->img.nfanin += d->fanin_cnt;
    o->img.ntensor += d->tensor_cnt;
    if (add) {
        e->deftab_stamp_pass = (uint32_t)o->pass;
        e->deftab_index = o->img.ndeftab;
        o->img.deftab[o->img.ndeftab] = (hbg_img_def){.addr = 0, .bytes = e->img->bytes, .hash = e->img->hash};
        g->deftab_entry[o->img.ndeftab++] = (uint32_t)(e - g->defs);
    }
    o->img.nreplay++;
    o->img.nbtensor += b->ntensors;
    if (b->nscalars)
        memcpy(o->img.bscalars + o->img.nbscalar, b->scalars, (size_t)b->nscalars * sizeof(uint64_t));
    o->img.nbscalar += b->nscalars;
    hbg__memo_answer(o, m, id);
    return true;
}

void hbg__replay_memo_note(hbg_orch *o, const hbg__def_entry *e, const hbg_boundary *b, uint64_t stamp, uint32_t tid,
                           hbg__memo_at at)
{
    struct hbg__graph *g = o->graph;
    const hbg_img_task *d = &o->img.tasks[tid];
    hbg__memo *m = &o->memo[tid];
    if (!g->memo_bx || !hbg__memo_deps_lead(o, d, b->deps, b->ndeps))
        return;
    /* A hit compares the layout bytes exactly; a slot the scan matched
     * field by field (stray bytes past its dimensions) left a written
     * copy with those bytes, which no later boundary is compared with. */
    for (uint32_t k = 0; k < b->ntensors; k++)
        if (!layout_is(b->args[k].t, &e->sig.slot[k]))
            return;
    if (!hbg__memo_close(o, m, at))
        return;
    uint64_t *bx = g->memo_bx + o->img.replays[d->replay].btensor_off;
    for (uint32_t k = 0; k < b->ntensors; k++)
        bx[k] = extra_of(b->args[k].t);
    m->u.r.gen = e->gen;
    m->u.r.bound = stamp;
    m->ndeps = (uint16_t)b->ndeps;
}
