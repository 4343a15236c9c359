/* The bind pass: ten segments, each timed, each once.
 *
 * Execution order: args, arena_build, static_arena, gm_heap, runtime_init,
 * host_orch, graph_upload, shared_mem, host_view_close, arena_h2d. The
 * last one is the pass's only copy of the image to the device; everything
 * before it prepares the host side or touches regions that persist (caller
 * buffers, the GM heap, Definitions), so a pass that fails before arena_h2d
 * leaves nothing half-written on the device that a later pass could read.
 *
 * Inside a pass nothing allocates host memory, takes a lock or formats text,
 * except where a device region must grow (a cold path, named as such).
 */
#include <stdlib.h>
#include <string.h>

#include "bind/bind_internal.h"
#include "device/exec.h"
#include "util/reserve.h"
#include "graph/graph_internal.h"

typedef struct seg_clock {
    hbg_bind_trace *bt;
    hbg_recpool *rec;
    hbg_phase cur;
    uint64_t t0;
} seg_clock;

static void seg_begin_at(seg_clock *c, hbg_phase s, uint64_t t0)
{
    c->cur = s;
    c->t0 = t0;
}

static void seg_begin(seg_clock *c, hbg_phase s)
{
    seg_begin_at(c, s, hbg_mono_ns());
}

static void seg_attr(seg_clock *c, const char *k, uint64_t v)
{
    hbg_seg_trace *sg = &c->bt->seg[c->cur];
    if (sg->nattr < HBG_MAX_ATTRS)
        sg->attr[sg->nattr++] = (hbg_attr){k, v};
}

static void seg_end_at(seg_clock *c, uint64_t t1, uint64_t detail)
{
    hbg_seg_trace *sg = &c->bt->seg[c->cur];
    sg->start_ns = c->t0;
    sg->dur_ns = t1 - c->t0;
    c->bt->order[c->bt->nran++] = (uint8_t)c->cur;
    if (c->rec)
        hbg_rec(c->rec, c->cur, c->t0, t1, detail);
}

static void seg_end(seg_clock *c, uint64_t detail)
{
    seg_end_at(c, hbg_mono_ns(), detail);
}

/* args: caller tensors into device buffers (kept across passes), host views
 * for the ones read back after the run. */
static hbg_status seg_args(hbg_runtime *rt, const hbg_program *p, seg_clock *c)
{
    uint32_t staged = 0;
    uint64_t bytes = 0;
    hbg_status st = HBG_OK;
    rt->nviews = 0;
    if (!hbg__caller_args_ok(p, &rt->argfault))
        st = HBG_E_INVAL;
    for (uint32_t i = 0; i < p->nargs && !st; i++) {
        const hbg_host_tensor *a = &p->args[i];
        hbg__argbuf *ab = &rt->argbufs[i];
        uint64_t n = a->layout.nbytes;
        if (ab->cap < n) {
            /* Cold: a buffer is reserved the first time an argument of this
             * size is seen, then reused pass after pass. */
            if (ab->dev)
                hbg_device_free(rt->dev, ab->dev);
            ab->dev = 0, ab->cap = 0, ab->staged_from = NULL;
            st = hbg_device_alloc(rt->dev, n, &ab->dev);
            if (st)
                break;
            ab->cap = n;
        }
        if (a->dir == HBG_OUT) {
            /* the kernels write it: it holds no caller's staging any more */
            ab->staged_from = NULL;
        } else {
            bool fresh = a->persistent && ab->staged_from == a->host && ab->staged_bytes == n;
            if (!fresh) {
                st = hbg_device_h2d(rt->dev, ab->dev, a->host, n);
                if (st)
                    break;
                staged++;
                bytes += n;
                ab->staged_from = a->persistent ? a->host : NULL;
                ab->staged_bytes = n;
            }
        }
        if (a->dir != HBG_IN)
            rt->views[rt->nviews++] = (hbg__hostview){a->host, ab->dev, n};
        rt->devargs[i] = a->layout;
        rt->devargs[i].addr = ab->dev;
        rt->devargs[i].nbytes = n;
        rt->devargs[i].creator = 0;
    }
    if (!st)
        hbg__set_kept(rt->orch, p, rt->devargs);
    seg_attr(c, "ntensor", p->nargs);
    seg_attr(c, "staged", staged);
    seg_attr(c, "bytes", bytes);
    seg_end(c, bytes);
    return st;
}

/* The staging buffer is written from the front by shared_mem and
 * arena_h2d, up to the image's size. Committed here before they write
 * it, or its pages fault one by one inside them (a dsv4 rank's cold pass:
 * 101 faults in shared_mem, 15 in arena_h2d, ~11 us each in a virtual
 * machine). Only up to what the pass needs, not the whole capacity,
 * which doubles: at 3x10^5 synth tasks that was 268 MB committed for a
 * 139 MB image, ~33,000 page faults more in the cold pass. A later pass
 * whose image grows inside the capacity commits the difference. */
static void commit_staging(hbg_runtime *rt, uint64_t need)
{
    if (need <= rt->staging_committed)
        return;
    hbg__commit(rt->staging + rt->staging_committed, (size_t)(need - rt->staging_committed));
    rt->staging_committed = need;
}

static hbg_status grow_arena(hbg_runtime *rt, uint64_t need)
{
    /* not vec_grow: the staging buffer's capacity is the device arena's
     * size too (allocated below, logged as bytes=), a uint64_t from
     * HBG_ARENA_INITIAL */
    uint64_t cap = rt->arena_cap ? rt->arena_cap : HBG_ARENA_INITIAL;
    while (cap < need)
        cap *= 2;
    unsigned char *staging = realloc(rt->staging, cap);
    if (!staging)
        return HBG_E_NOMEM;
    rt->staging = staging;
    /* realloc kept the committed prefix resident, wherever it moved it */
    if (rt->staging_committed > cap)
        rt->staging_committed = cap;
    commit_staging(rt, need);
    uint64_t dev;
    hbg_status st = hbg_device_alloc(rt->dev, cap, &dev);
    if (st)
        return st;
    if (rt->arena_dev)
        hbg_device_free(rt->dev, rt->arena_dev);
    rt->arena_dev = dev;
    rt->arena_cap = cap;
    return HBG_OK;
}

/* arena_build: the header's place and the arena the pass will need at
 * least; pure arithmetic. */
static void seg_arena_build(hbg_runtime *rt, seg_clock *c)
{
    uint64_t header = (sizeof(hbg_img_header) + 63) & ~63ull;
    seg_attr(c, "bytes", rt->arena_cap ? rt->arena_cap : HBG_ARENA_INITIAL);
    seg_attr(c, "device", header);
    seg_end(c, 0);
}

/* static_arena: pooled regions, committed once and kept: the GM heap, the
 * arena, and the pool Definitions are uploaded into. Without the pool each
 * new Definition's device allocation, and the first writes to its pages,
 * fell in graph_upload of the pass that recorded it. The stack host_orch
 * will run on is committed here too, once (util/stack.h): its pages stay
 * resident. */
static hbg_status seg_static_arena(hbg_runtime *rt, seg_clock *c)
{
    hbg_status st = HBG_OK;
    if (!rt->committed) {
        hbg__stack_commit(rt->stack);
        st = hbg_device_alloc(rt->dev, rt->heap_bytes, &rt->heap_dev);
        if (!st)
            st = grow_arena(rt, HBG_ARENA_INITIAL);
        if (!st)
            st = hbg_device_alloc(rt->dev, rt->defpool_bytes, &rt->defpool_dev);
        if (!st) {
            rt->committed = true;
        } else {
            /* All or nothing, so the next pass starts over from the same
             * device memory: an arena kept from here would be doubled by
             * grow_arena, which allocates the new one before freeing. */
            if (rt->heap_dev)
                hbg_device_free(rt->dev, rt->heap_dev), rt->heap_dev = 0;
            if (rt->arena_dev)
                hbg_device_free(rt->dev, rt->arena_dev), rt->arena_dev = 0;
            rt->arena_cap = 0;
            rt->defpool_dev = 0;
        }
    }
    seg_attr(c, "heap", rt->heap_bytes);
    seg_attr(c, "arena", rt->arena_cap);
    seg_end(c, 0);
    return st;
}

/* gm_heap: this pass's heap is the whole committed region, empty. */
static void seg_gm_heap(hbg_runtime *rt, const hbg_program *p, seg_clock *c)
{
    hbg__orch_begin_pass(rt->orch, rt->heap_dev, rt->devargs, p->nargs);
    seg_end(c, 0);
}

/* runtime_init: the runtime header of this pass. */
static void seg_runtime_init(hbg_runtime *rt, seg_clock *c)
{
    memset(&rt->layout, 0, sizeof rt->layout);
    rt->layout.h.magic = HBG_IMG_MAGIC;
    rt->layout.h.version = HBG_IMG_VERSION;
    rt->layout.h.rank = rt->cfg.rank;
    rt->layout.h.nranks = rt->cfg.nranks;
    rt->layout.h.pass = rt->orch->pass;
    seg_end(c, 0);
}

/* host_orch: the program's orchestration, into the host mirror. With
 * per-op records armed, the segment's two clock reads are the operation
 * clock's anchors too (opclock.h), so every record nests in the segment;
 * with the breakdown alone, the clock is anchored outside the segment.
 * Either way the breakdown adds no clock read of its own to the segment,
 * and converts its totals after the segment's end. */
static hbg_status seg_host_orch(hbg_runtime *rt, const hbg_program *p, seg_clock *c, hbg_pass_report *rep)
{
    hbg_orch *o = rt->orch;
    uint64_t tick;
    seg_begin_at(c, HBG_PH_HOST_ORCH, hbg__orch_clock_read(o, &tick));
    hbg__orch_open_clock_at(o, tick, c->t0);
    hbg_status ost = p->orch ? hbg__orch_returned(o, p->orch(o, p->ctx), false) : HBG_E_INVAL;
    uint64_t t1 = hbg__orch_clock_read(o, &tick);
    hbg_status st = hbg__orch_end_pass_at(o, tick, t1);
    if (!st)
        st = ost;
    rep->tasks = o->img.ntasks;
    rep->heap_used = o->heap_used;
    rep->replays = o->img.nreplay;
    rep->fallbacks = o->graph->fallbacks;
    seg_attr(c, "tasks", o->img.ntasks);
    seg_attr(c, "heap_used", o->heap_used);
    seg_end_at(c, t1, o->img.ntasks);
    for (int k = 0; k < HBG_OP_COUNT; k++) {
        c->bt->op[k].total_ns = o->ops[k].total_ns;
        c->bt->op[k].count = o->ops[k].count;
        c->bt->op[k].detail_sum = o->ops[k].detail_sum;
        c->bt->op[k].timed = o->ops[k].timed;
    }
    return st;
}

/* The device copy of a Definition image, uploading it the first time its
 * content is seen; *fresh says whether it went up now. */
static hbg_status devdef_for(hbg_runtime *rt, uint32_t i, const hbg__devdef **out, bool *fresh)
{
    const hbg_img_def *d = &rt->orch->img.deftab[i];
    *fresh = false;
    for (uint32_t j = 0; j < rt->ndevdefs; j++)
        if (rt->devdefs[j].hash == d->hash && rt->devdefs[j].bytes == d->bytes) {
            *out = &rt->devdefs[j];
            return HBG_OK;
        }
    if (rt->ndevdefs >= HBG_DEVTABLE_CAP)
        return HBG_E_DEF_POOL_FULL;
    hbg__devdef *nd = &rt->devdefs[rt->ndevdefs];
    nd->hash = d->hash;
    nd->bytes = d->bytes;
    nd->dev = 0;
    uint64_t at = (rt->defpool_used + HBG_DEFPOOL_ALIGN - 1) & ~(uint64_t)(HBG_DEFPOOL_ALIGN - 1);
    nd->pooled = d->bytes <= rt->defpool_bytes && at <= rt->defpool_bytes - d->bytes;
    hbg_status st = HBG_OK;
    if (nd->pooled)
        nd->dev = rt->defpool_dev + at;
    else
        st = hbg_device_alloc(rt->dev, d->bytes, &nd->dev);
    if (!st)
        st = hbg_device_h2d(rt->dev, nd->dev, hbg__def_image(rt->orch, i), d->bytes);
    if (st) {
        if (nd->dev && !nd->pooled)
            hbg_device_free(rt->dev, nd->dev);
        return st;
    }
    if (nd->pooled)
        rt->defpool_used = at + d->bytes;
    rt->ndevdefs++;
    *out = nd;
    *fresh = true;
    return HBG_OK;
}

/* Forgets every Definition the device holds: those allocated alone are
 * freed, and the pool is empty again. */
static void evict_devdefs(hbg_runtime *rt)
{
    for (uint32_t j = 0; j < rt->ndevdefs; j++)
        if (!rt->devdefs[j].pooled)
            hbg_device_free(rt->dev, rt->devdefs[j].dev);
    rt->ndevdefs = 0;
    rt->defpool_used = 0;
}

/* The device address of each Definition in this pass's table, uploading
 * those the device does not hold; *up and *up_bytes count the uploads
 * (added to: the copies a first attempt made before an eviction were
 * made, and took their time, all the same). */
static hbg_status upload_defs(hbg_runtime *rt, uint32_t *up, uint64_t *up_bytes)
{
    hbg__image *im = &rt->orch->img;
    for (uint32_t i = 0; i < im->ndeftab; i++) {
        const hbg__devdef *have;
        bool fresh;
        hbg_status st = devdef_for(rt, i, &have, &fresh);
        if (st)
            return st;
        *up += fresh;
        *up_bytes += fresh ? have->bytes : 0;
        im->deftab[i].addr = have->dev;
    }
    return HBG_OK;
}

/* graph_upload: each Definition the device does not hold yet goes up
 * once, keyed by content hash, and stays for later passes. Definitions
 * no pass uses any more are not tracked: when the table is full (a body
 * whose content changes pass after pass: a step number as a static
 * scalar) or the device refuses a Definition's allocation, every one is
 * forgotten and this pass's go up again (at most 64, the keys of one
 * pass), so a long run neither stops at the table's size nor holds the
 * device memory of every Definition it ever made. */
static hbg_status seg_graph_upload(hbg_runtime *rt, seg_clock *c, hbg_pass_report *rep)
{
    hbg__image *im = &rt->orch->img;
    uint32_t up = 0;
    uint64_t up_bytes = 0;
    hbg_status st = upload_defs(rt, &up, &up_bytes);
    if ((st == HBG_E_DEF_POOL_FULL || st == HBG_E_DEVICE_ALLOC) && rt->ndevdefs > up) {
        evict_devdefs(rt);
        st = upload_defs(rt, &up, &up_bytes);
        /* the refusal's message, if any, is not a failure of this pass's
         * now: a later refusal that says nothing must not be given it */
        if (!st)
            rt->dev_seq = hbg__exec_error_seq();
    }
    rep->defs_uploaded = up;
    seg_attr(c, "defs", up);
    seg_attr(c, "bytes", up_bytes);
    seg_attr(c, "submissions", im->nreplay);
    /* The boundary slots the replays wrote: what a cost model needs beside
     * the replay count (hbg fit). */
    seg_attr(c, "slots", (uint64_t)im->nbtensor + im->nbscalar);
    seg_end(c, up_bytes);
    return st;
}

/* shared_mem: size the live image; grow the arena only if it must. */
static hbg_status seg_shared_mem(hbg_runtime *rt, seg_clock *c)
{
    hbg__layout *l = &rt->layout;
    hbg_status st = HBG_OK;
    hbg__image_layout(&rt->orch->img, rt->cfg.rank, rt->cfg.nranks, rt->orch->pass, l);
    if (l->total > rt->arena_cap)
        st = grow_arena(rt, l->total);
    else
        commit_staging(rt, l->total);
    uint64_t sm = st ? 0 : hbg__image_pack_tasks(&rt->orch->img, l, rt->staging);
    seg_attr(c, "bytes", sm);
    seg_end(c, sm);
    return st;
}

/* host_view_close: the views opened in args stay open until the run has
 * read them back; nothing to copy here. */
static void seg_host_view_close(hbg_runtime *rt, seg_clock *c)
{
    seg_attr(c, "count", rt->nviews);
    seg_attr(c, "bytes", 0);
    seg_end(c, 0);
}

/* arena_h2d: the one copy — header, live image, submission block. */
static hbg_status seg_arena_h2d(hbg_runtime *rt, seg_clock *c)
{
    const hbg__layout *l = &rt->layout;
    uint64_t subs = hbg__image_pack_subs(&rt->orch->img, l, rt->staging);
    memcpy(rt->staging, &l->h, sizeof l->h);
    hbg_status st = hbg_device_h2d(rt->dev, rt->arena_dev, rt->staging, l->total);
    seg_attr(c, "nt", rt->orch->img.ntasks);
    seg_attr(c, "bytes", st ? 0 : l->total);
    seg_attr(c, "copied", l->header_bytes);
    seg_attr(c, "sm", l->image_bytes);
    seg_attr(c, "subs", subs);
    seg_end(c, l->total);
    return st;
}

hbg_status hbg__bind_pass(hbg_runtime *rt, const hbg_program *p, hbg_pass_report *rep)
{
    seg_clock c = {.bt = &rep->trace, .rec = rt->cfg.records};
    hbg_status st;
    rt->bound = false;

    /* Each segment is timed from its seg_begin to the seg_end inside it. */
    seg_begin(&c, HBG_PH_ARGS);
    if ((st = seg_args(rt, p, &c)))
        goto fail;
    seg_begin(&c, HBG_PH_ARENA_BUILD);
    seg_arena_build(rt, &c);
    seg_begin(&c, HBG_PH_STATIC_ARENA);
    if ((st = seg_static_arena(rt, &c)))
        goto fail;
    seg_begin(&c, HBG_PH_GM_HEAP);
    seg_gm_heap(rt, p, &c);
    seg_begin(&c, HBG_PH_RUNTIME_INIT);
    seg_runtime_init(rt, &c);
    if ((st = seg_host_orch(rt, p, &c, rep))) /* it begins its own segment */
        goto fail;
    seg_begin(&c, HBG_PH_GRAPH_UPLOAD);
    if ((st = seg_graph_upload(rt, &c, rep)))
        goto fail;
    seg_begin(&c, HBG_PH_SHARED_MEM);
    if ((st = seg_shared_mem(rt, &c)))
        goto fail;
    seg_begin(&c, HBG_PH_HOST_VIEW_CLOSE);
    seg_host_view_close(rt, &c);
    seg_begin(&c, HBG_PH_ARENA_H2D);
    if ((st = seg_arena_h2d(rt, &c)))
        goto fail;
    rep->shipped_bytes = rt->layout.total;
    rt->bound = true;
    return HBG_OK;

fail:
    if (rt->orch->in_pass)
        hbg__orch_end_pass(rt->orch);
    rep->failed_segment = c.cur;
    return st;
}

hbg_status hbg__runner_run(hbg_runtime *rt, hbg_pass_report *rep)
{
    if (!rt->bound)
        return HBG_E_STATE;
    hbg_status st = rt->dev->ops->run(rt->dev, rt->arena_dev, rt->layout.total, rt->cfg.kernels, &rep->run);
    for (uint32_t i = 0; i < rt->nviews && !st; i++)
        st = hbg_device_d2h(rt->dev, rt->views[i].host, rt->views[i].dev, rt->views[i].bytes);
    rep->device_ran = true;
    return st;
}
