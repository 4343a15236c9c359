/* Validating a bound arena and resolving its tasks into kernel calls.
 *
 * The arena arrives as bytes from another process's point of view: the
 * bind side may be buggy, and a bad index must become HBG_E_DEVICE with a
 * message that says which record is wrong, never a wild read on a core
 * thread. So every offset, count and index the executors will follow is
 * checked here, once, with overflow-safe arithmetic.
 */
#include <stdalign.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/exec.h"
#include "hbg/graph.h"
#include "util/printable.h"

static _Thread_local char last_error[256];
/* How many times this thread's last_error was set: a caller that noted it
 * before a call can tell a message of that call from an older one. */
static _Thread_local uint64_t last_error_seq;

uint64_t hbg__exec_error_seq(void)
{
    return last_error_seq;
}

const char *hbg__exec_last_error(void)
{
    return last_error;
}

const char *hbg_device_last_error(void)
{
    return last_error;
}

void hbg__exec_set_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hbg__vformat(last_error, sizeof last_error, fmt, ap); /* a long kernel name is cut at a whole character */
    va_end(ap);
    hbg__mask_controls(last_error); /* one line, whatever a kernel's name holds */
    last_error_seq++;
}

#define FAIL(...) (hbg__exec_set_error(__VA_ARGS__), HBG_E_DEVICE)

/* [off, off + count*elem) inside [0, limit), without overflow. */
static bool range_ok(uint64_t off, uint64_t count, uint64_t elem, uint64_t limit)
{
    if (off > limit)
        return false;
    if (elem && count > (limit - off) / elem)
        return false;
    return true;
}

/* Slice [off, off+cnt) of a pool of n elements. */
static bool slice_ok(uint32_t off, uint32_t cnt, uint64_t n)
{
    return (uint64_t)off + cnt <= n;
}

static bool valid_pred(uint8_t op, uint8_t elem_size)
{
    return op <= HBG_CMP_GE && (elem_size == 1 || elem_size == 2 || elem_size == 4 || elem_size == 8);
}

static const char *sec_name(int s)
{
    static const char *const names[HBG_SEC_COUNT] = {"tasks",   "fanins",   "tensors",  "scalars",
                                                     "preds",   "flags",    "replays",  "btensors",
                                                     "bscalars", "deftab"};
    return names[s];
}

/* A kernel task needs the kernels its core type calls; anything else is
 * HBG_E_KERNEL before a single call runs, so a run never stops half-way for
 * a reason known up front. */
static hbg_status check_kernels(const hbg_kernel_table *kt, uint8_t core, uint16_t aic, uint16_t aiv,
                                const char *what, uint32_t idx, uint32_t def)
{
    char where[64];
    if (def == UINT32_MAX)
        snprintf(where, sizeof where, "%s %u", what, idx);
    else
        snprintf(where, sizeof where, "definition %u node %u", def, idx);
    if (core > HBG_CORE_MIX)
        return FAIL("image: %s: core %u is not AIC (0), AIV (1) or MIX (2)", where, core);
    if (core != HBG_CORE_AIV && !hbg_kernel_lookup(kt, aic)) {
        hbg__exec_set_error("image: %s: kernel_aic %u is not registered", where, aic);
        return HBG_E_KERNEL;
    }
    if (core != HBG_CORE_AIC && !hbg_kernel_lookup(kt, aiv)) {
        hbg__exec_set_error("image: %s: kernel_aiv %u is not registered", where, aiv);
        return HBG_E_KERNEL;
    }
    return HBG_OK;
}

static hbg_status check_targ(const hbg_def_header *h, const hbg_def_targ *t, uint32_t def, const char *what,
                             uint32_t idx)
{
    switch (t->cls) {
    case HBG_TARG_BOUNDARY:
    case HBG_TARG_BVIEW:
        if (t->ref >= h->nbt)
            return FAIL("definition %u: %s %u: boundary slot %u is not below nbt %u", def, what, idx, t->ref,
                        h->nbt);
        return HBG_OK;
    case HBG_TARG_NODE_OUT:
    case HBG_TARG_OWN_OUT:
        if (!range_ok(t->heap_off, 1, t->layout.nbytes, h->heap_bytes))
            return FAIL("definition %u: %s %u: heap bytes [%llu, +%llu) exceed the replay block of %llu", def,
                        what, idx, (unsigned long long)t->heap_off, (unsigned long long)t->layout.nbytes,
                        (unsigned long long)h->heap_bytes);
        return HBG_OK;
    default:
        return FAIL("definition %u: %s %u: class %u is not BOUNDARY, BVIEW, NODE_OUT or OWN_OUT", def, what,
                    idx, t->cls);
    }
}

/* Whether [a, a+an) and [b, b+bn) share a byte (sizes that fit: checked). */
static bool overlap(uint64_t a, uint64_t an, uint64_t b, uint64_t bn)
{
    return an && bn && a < b + bn && b < a + an;
}

/* What a task or a node is called in a refusal: "image: task 12" or
 * "definition 0: node 7". */
static void item_name(char *buf, size_t n, uint32_t def, uint32_t idx)
{
    if (def == UINT32_MAX)
        snprintf(buf, n, "image: task %u", idx);
    else
        snprintf(buf, n, "definition %u: node %u", def, idx);
}

/* The fanins, tensors and scalars of one task or node: (offset, count)
 * into its pools. */
typedef struct item_args {
    uint32_t off[3], cnt[3];
    uint32_t pool[3];
} item_args;

/* Each slice inside its pool and no longer than one submit may make it
 * (HBG_MAX_FANINS distinct predecessors, HBG_MAX_TASK_TENSORS,
 * HBG_MAX_TASK_SCALARS): tasks and nodes go through this one check, so
 * they keep the same limits. A REPLAY task (replay) carries a tensor for
 * each boundary slot its Definition writes, up to
 * HBG_MAX_BOUNDARY_TENSORS, and no scalars. The fanin limit is also what
 * bounds the successor lists a run builds (build_dag): a fanin list may
 * be shared by any number of tasks, so without it a few bytes of fanins
 * could ask for billions of edges. */
static hbg_status check_args(uint32_t def, uint32_t idx, const item_args *a, bool replay)
{
    static const char *const what[3] = {"fanins", "tensors", "scalars"};
    const uint32_t limit[3] = {HBG_MAX_FANINS, replay ? HBG_MAX_BOUNDARY_TENSORS : HBG_MAX_TASK_TENSORS,
                               HBG_MAX_TASK_SCALARS};
    char who[64];
    for (int i = 0; i < 3; i++) {
        if (a->cnt[i] <= limit[i] && slice_ok(a->off[i], a->cnt[i], a->pool[i]))
            continue;
        item_name(who, sizeof who, def, idx);
        if (a->cnt[i] > limit[i])
            return FAIL("%s: %u %s, past the limit of %u", who, a->cnt[i], what[i], limit[i]);
        return FAIL("%s: %s [%u, +%u) exceed %u", who, what[i], a->off[i], a->cnt[i], a->pool[i]);
    }
    return HBG_OK;
}

static hbg_status open_def(const hbg__exec_image *im, hbg__exec_def *d, const hbg_img_def *e, uint32_t di,
                           const hbg_kernel_table *kt, hbg__exec_mem_fn mem, void *mem_ctx)
{
    if (e->bytes < sizeof(hbg_def_header))
        return FAIL("image: deftab[%u]: %llu bytes cannot hold a Definition header (%zu)", di,
                    (unsigned long long)e->bytes, sizeof(hbg_def_header));
    if (e->addr % alignof(hbg_def_header))
        return FAIL("image: deftab[%u]: address 0x%llx is not 8-byte aligned", di, (unsigned long long)e->addr);
    if (e->addr + e->bytes < e->addr || (mem && !mem(mem_ctx, e->addr, e->bytes)))
        return FAIL("image: deftab[%u]: [0x%llx, +%llu) is not device memory", di, (unsigned long long)e->addr,
                    (unsigned long long)e->bytes);
    /* The run writes the arena's flags: a Definition under them would
     * change after it was validated. */
    uint64_t flags = (uint64_t)(uintptr_t)im->flags, flag_bytes = (uint64_t)im->ntasks * sizeof *im->flags;
    if (overlap(e->addr, e->bytes, flags, flag_bytes))
        return FAIL("image: deftab[%u]: [0x%llx, +%llu) overlaps the arena's flags [0x%llx, +%llu)", di,
                    (unsigned long long)e->addr, (unsigned long long)e->bytes, (unsigned long long)flags,
                    (unsigned long long)flag_bytes);
    const unsigned char *base = (const unsigned char *)(uintptr_t)e->addr;
    const hbg_def_header *h = (const hbg_def_header *)base;
    if (h->magic != HBG_DEF_MAGIC)
        return FAIL("definition %u: magic 0x%08x, expected 0x%08x", di, h->magic, HBG_DEF_MAGIC);
    if (h->bytes > e->bytes || h->bytes < sizeof *h)
        return FAIL("definition %u: header says %llu bytes, deftab says %llu", di, (unsigned long long)h->bytes,
                    (unsigned long long)e->bytes);
    if (h->hash != e->hash)
        return FAIL("definition %u: hash 0x%016llx, deftab expects 0x%016llx", di, (unsigned long long)h->hash,
                    (unsigned long long)e->hash);
    if (h->nnodes > HBG_MAX_DEF_NODES)
        return FAIL("definition %u: %u nodes, past the limit of %u", di, h->nnodes, (unsigned)HBG_MAX_DEF_NODES);

    struct {
        const char *name;
        uint64_t off, count, elem, align;
        const void **out;
    } secs[] = {
        {"nodes", h->off_nodes, h->nnodes, sizeof(hbg_def_node), alignof(hbg_def_node), (const void **)&d->nodes},
        {"fanins", h->off_fanins, h->nfanin, sizeof(uint32_t), alignof(uint32_t), (const void **)&d->fanins},
        {"targs", h->off_targs, h->ntarg, sizeof(hbg_def_targ), alignof(hbg_def_targ), (const void **)&d->targs},
        {"sargs", h->off_sargs, h->nsarg, sizeof(hbg_def_sarg), alignof(hbg_def_sarg), (const void **)&d->sargs},
        {"preds", h->off_preds, h->npred, sizeof(hbg_def_pred), alignof(hbg_def_pred), (const void **)&d->preds},
        {"btemplates", h->off_btemplates, h->nbt, sizeof(hbg_tensor), alignof(hbg_tensor),
         (const void **)&d->btemplates},
    };
    for (size_t i = 0; i < sizeof secs / sizeof secs[0]; i++) {
        if (!range_ok(secs[i].off, secs[i].count, secs[i].elem, h->bytes))
            return FAIL("definition %u: %s [%llu, +%llu x %llu) lies outside its %llu bytes", di, secs[i].name,
                        (unsigned long long)secs[i].off, (unsigned long long)secs[i].count,
                        (unsigned long long)secs[i].elem, (unsigned long long)h->bytes);
        if (secs[i].off % secs[i].align)
            return FAIL("definition %u: %s offset %llu is not %llu-byte aligned", di, secs[i].name,
                        (unsigned long long)secs[i].off, (unsigned long long)secs[i].align);
        *secs[i].out = base + secs[i].off;
    }
    d->h = h;

    for (uint32_t n = 0; n < h->nnodes; n++) {
        const hbg_def_node *nd = &d->nodes[n];
        if (nd->kind != HBG_TASK_KERNEL && nd->kind != HBG_TASK_DUMMY && nd->kind != HBG_TASK_ALLOC)
            return FAIL("definition %u: node %u: kind %u is not KERNEL, DUMMY or ALLOC", di, n, nd->kind);
        item_args args = {{nd->fanin_off, nd->targ_off, nd->sarg_off},
                          {nd->fanin_cnt, nd->targ_cnt, nd->sarg_cnt},
                          {h->nfanin, h->ntarg, h->nsarg}};
        hbg_status st = check_args(di, n, &args, false);
        if (st)
            return st;
        for (uint32_t i = 0; i < nd->fanin_cnt; i++) {
            uint32_t f = d->fanins[nd->fanin_off + i];
            /* Nodes are recorded in submission order, so a fanin always
             * names an earlier node; index order is then a valid order. */
            if (f >= n)
                return FAIL("definition %u: node %u: fanin %u is node %u, not an earlier node", di, n, i, f);
        }
        if (nd->has_pred && nd->pred >= h->npred)
            return FAIL("definition %u: node %u: predicate %u is not below npred %u", di, n, nd->pred, h->npred);
        if (nd->kind == HBG_TASK_KERNEL) {
            if (nd->blocks == 0 || nd->blocks > HBG_EXEC_MAX_BLOCKS)
                return FAIL("definition %u: node %u: %u blocks (expected 1..%u)", di, n, nd->blocks,
                            HBG_EXEC_MAX_BLOCKS);
            st = check_kernels(kt, nd->core, nd->kernel_aic, nd->kernel_aiv, "node", n, di);
            if (st)
                return st;
        }
        d->steps += nd->kind == HBG_TASK_KERNEL ? nd->blocks : 1;
    }
    for (uint32_t i = 0; i < h->ntarg; i++) {
        hbg_status st = check_targ(h, &d->targs[i], di, "targ", i);
        if (st)
            return st;
    }
    for (uint32_t i = 0; i < h->nsarg; i++)
        if (d->sargs[i].slot >= 0 && (uint32_t)d->sargs[i].slot >= h->nbs)
            return FAIL("definition %u: sarg %u: boundary scalar slot %d is not below nbs %u", di, i,
                        d->sargs[i].slot, h->nbs);
    for (uint32_t i = 0; i < h->npred; i++) {
        const hbg_def_pred *p = &d->preds[i];
        hbg_status st = check_targ(h, &p->where, di, "pred", i);
        if (st)
            return st;
        if (!valid_pred(p->op, p->elem_size))
            return FAIL("definition %u: pred %u: op %u / elem_size %u (expected op 0..5, size 1/2/4/8)", di, i,
                        p->op, p->elem_size);
    }
    return HBG_OK;
}

/* FLAGS is the one section a run writes (a task's flag as it completes):
 * over the header or another section, it would change what was validated
 * while tasks still to run read it. Sections are inside the image here, so
 * their ends do not overflow. */
static hbg_status check_flags_alone(const hbg_img_header *h)
{
    const hbg_img_section *f = &h->sec[HBG_SEC_FLAGS];
    uint64_t flag_bytes = (uint64_t)f->count * f->elem;
    if (overlap(f->off, flag_bytes, 0, sizeof *h))
        return FAIL("image: section flags [%llu, +%u x %u) overlaps the header (%zu bytes)", (unsigned long long)f->off,
                    f->count, f->elem, sizeof *h);
    for (int s = 0; s < HBG_SEC_COUNT; s++) {
        const hbg_img_section *o = &h->sec[s];
        if (s != HBG_SEC_FLAGS && overlap(f->off, flag_bytes, o->off, (uint64_t)o->count * o->elem))
            return FAIL("image: section flags [%llu, +%u x %u) overlaps section %s [%llu, +%u x %u)",
                        (unsigned long long)f->off, f->count, f->elem, sec_name(s), (unsigned long long)o->off,
                        o->count, o->elem);
    }
    return HBG_OK;
}

/* The runtime header and the section table: magic, version, sizes, and
 * every section inside the image, aligned for its record. */
static hbg_status check_header(const hbg_img_header *h, uint64_t bytes)
{
    if (h->magic != HBG_IMG_MAGIC)
        return FAIL("image: magic 0x%08x, expected 0x%08x", h->magic, HBG_IMG_MAGIC);
    if (h->version != HBG_IMG_VERSION)
        return FAIL("image: version %u, expected %u", h->version, HBG_IMG_VERSION);
    if (h->total_bytes > bytes || h->total_bytes < sizeof *h)
        return FAIL("image: header claims %llu bytes, the arena holds %llu", (unsigned long long)h->total_bytes,
                    (unsigned long long)bytes);
    /* No more tasks or Definitions than one pass binds: a run's state
     * grows with them (successor lists, a DAG per def table entry), and
     * within these limits none of its counts overflows (build_dag). */
    if (h->sec[HBG_SEC_TASKS].count > HBG_MAX_TASK_WINDOW)
        return FAIL("image: %u tasks, past the limit of %u", h->sec[HBG_SEC_TASKS].count, HBG_MAX_TASK_WINDOW);
    if (h->sec[HBG_SEC_DEFTAB].count > HBG_IMG_MAX_DEFS)
        return FAIL("image: %u def table entries, past the limit of %u", h->sec[HBG_SEC_DEFTAB].count,
                    (unsigned)HBG_IMG_MAX_DEFS);

    static const struct {
        uint32_t elem, align;
    } want[HBG_SEC_COUNT] = {
        [HBG_SEC_TASKS] = {sizeof(hbg_img_task), alignof(hbg_img_task)},
        [HBG_SEC_FANINS] = {sizeof(uint32_t), alignof(uint32_t)},
        [HBG_SEC_TENSORS] = {sizeof(hbg_tensor), alignof(hbg_tensor)},
        [HBG_SEC_SCALARS] = {sizeof(uint64_t), alignof(uint64_t)},
        [HBG_SEC_PREDS] = {sizeof(hbg_img_pred), alignof(hbg_img_pred)},
        [HBG_SEC_FLAGS] = {sizeof(uint32_t), alignof(uint32_t)},
        [HBG_SEC_REPLAYS] = {sizeof(hbg_img_replay), alignof(hbg_img_replay)},
        [HBG_SEC_BTENSORS] = {sizeof(hbg_img_btensor), alignof(hbg_img_btensor)},
        [HBG_SEC_BSCALARS] = {sizeof(uint64_t), alignof(uint64_t)},
        [HBG_SEC_DEFTAB] = {sizeof(hbg_img_def), alignof(hbg_img_def)},
    };
    for (int s = 0; s < HBG_SEC_COUNT; s++) {
        const hbg_img_section *sec = &h->sec[s];
        if (sec->elem != want[s].elem)
            return FAIL("image: section %s: element size %u, expected %u", sec_name(s), sec->elem, want[s].elem);
        if (!range_ok(sec->off, sec->count, sec->elem, h->total_bytes))
            return FAIL("image: section %s [%llu, +%u x %u) lies outside the %llu-byte image", sec_name(s),
                        (unsigned long long)sec->off, sec->count, sec->elem, (unsigned long long)h->total_bytes);
        if (sec->off % want[s].align)
            return FAIL("image: section %s: offset %llu is not %u-byte aligned", sec_name(s),
                        (unsigned long long)sec->off, want[s].align);
    }
    if (h->sec[HBG_SEC_FLAGS].count != h->sec[HBG_SEC_TASKS].count)
        return FAIL("image: %u flags for %u tasks", h->sec[HBG_SEC_FLAGS].count, h->sec[HBG_SEC_TASKS].count);
    return check_flags_alone(h);
}

static hbg_status check_preds(const hbg__exec_image *im, uint32_t n, hbg__exec_mem_fn mem, void *mem_ctx)
{
    for (uint32_t i = 0; i < n; i++) {
        const hbg_img_pred *p = &im->preds[i];
        if (!valid_pred(p->op, p->elem_size))
            return FAIL("image: pred %u: op %u / elem_size %u (expected op 0..5, size 1/2/4/8)", i, p->op,
                        p->elem_size);
        if (p->addr + p->elem_size < p->addr || (mem && !mem(mem_ctx, p->addr, p->elem_size)))
            return FAIL("image: pred %u: word at 0x%llx is not device memory", i, (unsigned long long)p->addr);
    }
    return HBG_OK;
}

/* A REPLAY task's replay record against its Definition (already opened). */
static hbg_status check_replay(hbg__exec_image *im, uint32_t t, const hbg_img_task *k, hbg__exec_mem_fn mem,
                               void *mem_ctx)
{
    const hbg_img_section *S = im->h->sec;
    if (k->replay >= S[HBG_SEC_REPLAYS].count)
        return FAIL("image: task %u: replay %u is not below nreplays %u", t, k->replay, S[HBG_SEC_REPLAYS].count);
    const hbg_img_replay *r = &im->replays[k->replay];
    if (r->task != t)
        return FAIL("image: task %u: replay %u belongs to task %u", t, k->replay, r->task);
    if (r->def >= im->ndefs)
        return FAIL("image: replay %u: definition %u is not below ndefs %u", k->replay, r->def, im->ndefs);
    const hbg_def_header *dh = im->defs[r->def].h;
    if (!slice_ok(r->btensor_off, dh->nbt, S[HBG_SEC_BTENSORS].count))
        return FAIL("image: replay %u: boundary tensors [%u, +%u) exceed %u", k->replay, r->btensor_off, dh->nbt,
                    S[HBG_SEC_BTENSORS].count);
    if (!slice_ok(r->bscalar_off, dh->nbs, S[HBG_SEC_BSCALARS].count))
        return FAIL("image: replay %u: boundary scalars [%u, +%u) exceed %u", k->replay, r->bscalar_off, dh->nbs,
                    S[HBG_SEC_BSCALARS].count);
    if (dh->heap_bytes &&
        (r->heap_base + dh->heap_bytes < r->heap_base || (mem && !mem(mem_ctx, r->heap_base, dh->heap_bytes))))
        return FAIL("image: replay %u: heap block [0x%llx, +%llu) is not device memory", k->replay,
                    (unsigned long long)r->heap_base, (unsigned long long)dh->heap_bytes);
    im->nreplay_tasks++;
    im->replay_nodes += dh->nnodes;
    im->steps += im->defs[r->def].steps;
    return HBG_OK;
}

/* One task of the image: its kind, its slices of the pools, its fanins
 * (each naming a task), and what its kind needs beyond that. The same
 * checks as open_def() makes of a Definition's nodes. */
static hbg_status check_task(hbg__exec_image *im, uint32_t t, const hbg_kernel_table *kt, hbg__exec_mem_fn mem,
                             void *mem_ctx)
{
    const hbg_img_section *S = im->h->sec;
    const hbg_img_task *k = &im->tasks[t];
    if (k->kind > HBG_TASK_REPLAY)
        return FAIL("image: task %u: kind %u is not KERNEL, DUMMY, ALLOC or REPLAY", t, k->kind);
    item_args args = {{k->fanin_off, k->tensor_off, k->scalar_off},
                      {k->fanin_cnt, k->tensor_cnt, k->scalar_cnt},
                      {S[HBG_SEC_FANINS].count, S[HBG_SEC_TENSORS].count, S[HBG_SEC_SCALARS].count}};
    hbg_status st = check_args(UINT32_MAX, t, &args, k->kind == HBG_TASK_REPLAY);
    if (st)
        return st;
    for (uint32_t i = 0; i < k->fanin_cnt; i++)
        if (im->fanins[k->fanin_off + i] >= im->ntasks)
            return FAIL("image: task %u: fanin %u is %u, not below ntasks %u", t, i, im->fanins[k->fanin_off + i],
                        im->ntasks);
    if (k->has_pred && k->pred >= S[HBG_SEC_PREDS].count)
        return FAIL("image: task %u: predicate %u is not below npreds %u", t, k->pred, S[HBG_SEC_PREDS].count);
    im->steps += k->kind == HBG_TASK_KERNEL ? k->blocks : 1;
    if (k->kind == HBG_TASK_KERNEL) {
        if (k->blocks == 0 || k->blocks > HBG_EXEC_MAX_BLOCKS)
            return FAIL("image: task %u: %u blocks (expected 1..%u)", t, k->blocks, HBG_EXEC_MAX_BLOCKS);
        return check_kernels(kt, k->core, k->kernel_aic, k->kernel_aiv, "task", t, UINT32_MAX);
    }
    if (k->kind == HBG_TASK_REPLAY)
        return check_replay(im, t, k, mem, mem_ctx);
    return HBG_OK;
}

hbg_status hbg__exec_open(hbg__exec_image *im, void *arena, uint64_t bytes, const hbg_kernel_table *kt,
                         hbg__exec_mem_fn mem, void *mem_ctx)
{
    memset(im, 0, sizeof *im);
    last_error[0] = 0;
    if (!arena || !kt) {
        hbg__exec_set_error("image: no arena or no kernel table");
        return HBG_E_INVAL;
    }
    if ((uintptr_t)arena % alignof(hbg_img_header))
        return FAIL("image: arena at %p is not 8-byte aligned", arena);
    if (bytes < sizeof(hbg_img_header))
        return FAIL("image: %llu bytes cannot hold the runtime header (%zu)", (unsigned long long)bytes,
                    sizeof(hbg_img_header));
    const hbg_img_header *h = arena;
    hbg_status st = check_header(h, bytes);
    if (st)
        return st;

    const hbg_img_section *S = h->sec;
    unsigned char *a = arena;
    im->h = h;
    im->ntasks = S[HBG_SEC_TASKS].count;
    im->tasks = (const void *)(a + S[HBG_SEC_TASKS].off);
    im->fanins = (const void *)(a + S[HBG_SEC_FANINS].off);
    im->tensors = (const void *)(a + S[HBG_SEC_TENSORS].off);
    im->scalars = (const void *)(a + S[HBG_SEC_SCALARS].off);
    im->preds = (const void *)(a + S[HBG_SEC_PREDS].off);
    im->flags = (void *)(a + S[HBG_SEC_FLAGS].off);
    im->replays = (const void *)(a + S[HBG_SEC_REPLAYS].off);
    im->btensors = (const void *)(a + S[HBG_SEC_BTENSORS].off);
    im->bscalars = (const void *)(a + S[HBG_SEC_BSCALARS].off);
    const hbg_img_def *deftab = (const void *)(a + S[HBG_SEC_DEFTAB].off);
    if ((st = check_preds(im, S[HBG_SEC_PREDS].count, mem, mem_ctx)))
        return st;

    im->ndefs = S[HBG_SEC_DEFTAB].count;
    if (im->ndefs) {
        im->defs = calloc(im->ndefs, sizeof *im->defs);
        if (!im->defs) {
            hbg__exec_set_error("image: no memory for %u definition views", im->ndefs);
            return HBG_E_NOMEM;
        }
    }
    for (uint32_t d = 0; d < im->ndefs && !st; d++)
        st = open_def(im, &im->defs[d], &deftab[d], d, kt, mem, mem_ctx);
    for (uint32_t t = 0; t < im->ntasks && !st; t++)
        st = check_task(im, t, kt, mem, mem_ctx);
    if (st)
        hbg__exec_close(im);
    return st;
}

void hbg__exec_close(hbg__exec_image *im)
{
    free(im->defs);
    im->defs = NULL;
    im->ndefs = 0;
}

/* Successor offsets are 32-bit: the limits validation applies (tasks and
 * nodes per list, fanins per task or node) keep every list's edges below
 * 2^32, however the fanin lists are shared. */
_Static_assert((uint64_t)HBG_MAX_TASK_WINDOW *HBG_MAX_FANINS <= UINT32_MAX, "task successor offsets fit 32 bits");
_Static_assert((uint64_t)HBG_MAX_DEF_NODES *HBG_MAX_FANINS <= UINT32_MAX, "node successor offsets fit 32 bits");

/* Both hbg_img_task and hbg_def_node keep fanin_off, fanin_cnt adjacent. */
static hbg_status build_dag(hbg__exec_dag *g, uint32_t n, const void *items, size_t stride, size_t fanin_field,
                            const uint32_t *fanins)
{
    memset(g, 0, sizeof *g);
    g->n = n;
    g->off = calloc((size_t)n + 1, sizeof *g->off);
    g->npred = calloc(n ? n : 1, sizeof *g->npred);
    if (!g->off || !g->npred)
        goto nomem;
    const unsigned char *p = items;
    uint64_t edges = 0;
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t *fc = (const uint32_t *)(p + i * stride + fanin_field);
        g->npred[i] = fc[1];
        for (uint32_t j = 0; j < fc[1]; j++)
            g->off[fanins[fc[0] + j] + 1]++;
        edges += fc[1];
    }
    for (uint32_t i = 0; i < n; i++)
        g->off[i + 1] += g->off[i];
    g->out = malloc((edges ? edges : 1) * sizeof *g->out);
    uint32_t *fill = malloc(((size_t)n + 1) * sizeof *fill);
    if (!g->out || !fill) {
        free(fill);
        goto nomem;
    }
    memcpy(fill, g->off, ((size_t)n + 1) * sizeof *fill);
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t *fc = (const uint32_t *)(p + i * stride + fanin_field);
        for (uint32_t j = 0; j < fc[1]; j++)
            g->out[fill[fanins[fc[0] + j]]++] = i;
    }
    free(fill);
    return HBG_OK;
nomem:
    hbg__exec_dag_free(g);
    hbg__exec_set_error("device: no memory for the successor lists of %u items", n);
    return HBG_E_NOMEM;
}

hbg_status hbg__exec_dag_tasks(const hbg__exec_image *im, hbg__exec_dag *g)
{
    return build_dag(g, im->ntasks, im->tasks, sizeof(hbg_img_task), offsetof(hbg_img_task, fanin_off),
                     im->fanins);
}

hbg_status hbg__exec_dag_def(const hbg__exec_def *d, hbg__exec_dag *g)
{
    return build_dag(g, d->h->nnodes, d->nodes, sizeof(hbg_def_node), offsetof(hbg_def_node, fanin_off),
                     d->fanins);
}

void hbg__exec_dag_free(hbg__exec_dag *g)
{
    free(g->off);
    free(g->out);
    free(g->npred);
    memset(g, 0, sizeof *g);
}

static void call_common(hbg__exec_call *c, uint8_t core, uint16_t aic, uint16_t aiv, uint32_t blocks,
                        uint32_t rank, uint32_t nranks, void *services)
{
    c->core = core;
    c->kernel_aic = aic;
    c->kernel_aiv = aiv;
    c->blocks = blocks;
    c->args.nblocks = blocks;
    c->args.block = 0;
    c->args.core = core;
    c->args.rank = rank;
    c->args.nranks = nranks;
    c->args.services = services;
}

void hbg__exec_task_call(const hbg__exec_image *im, uint32_t task, uint32_t rank, uint32_t nranks, void *services,
                        hbg__exec_call *c)
{
    const hbg_img_task *t = &im->tasks[task];
    call_common(c, t->core, t->kernel_aic, t->kernel_aiv, t->blocks, rank, nranks, services);
    c->args.ntensors = t->tensor_cnt;
    c->args.tensors = im->tensors + t->tensor_off;
    c->args.nscalars = t->scalar_cnt;
    c->args.scalars = im->scalars + t->scalar_off;
}

/* A boundary view's offset, the boundary's plus the recorded delta, in
 * unsigned arithmetic: a negative delta is taken as its magnitude (so
 * INT64_MIN is too), and a start before the buffer or past 2^64 elements
 * is no view of it. */
static hbg_status view_offset(const hbg__exec_image *im, const hbg_img_replay *r, const hbg_def_targ *ta, uint64_t base,
                              uint64_t *out)
{
    unsigned rp = (unsigned)(r - im->replays);
    if (ta->delta < 0) {
        uint64_t back = 0 - (uint64_t)ta->delta;
        if (back > base)
            return FAIL("replay %u: boundary view of slot %u starts %llu elements before its buffer", rp, ta->ref,
                        (unsigned long long)(back - base));
        *out = base - back;
    } else {
        if ((uint64_t)ta->delta > UINT64_MAX - base)
            return FAIL("replay %u: boundary view of slot %u: offset %llu + delta %lld is past 2^64 elements", rp,
                        ta->ref, (unsigned long long)base, (long long)ta->delta);
        *out = base + (uint64_t)ta->delta;
    }
    return HBG_OK;
}

/* A Definition tensor as this replay sees it. *base_nbytes is the size of
 * the buffer the tensor points into (for bounds of predicate words). */
static hbg_status resolve_targ(const hbg__exec_image *im, const hbg_img_replay *r, const hbg__exec_def *d,
                               const hbg_def_targ *ta, hbg_tensor *out)
{
    const hbg_img_btensor *bt;
    switch (ta->cls) {
    case HBG_TARG_BOUNDARY:
        bt = &im->btensors[r->btensor_off + ta->ref];
        *out = d->btemplates[ta->ref];
        out->addr = bt->addr;
        out->nbytes = bt->nbytes;
        out->offset = bt->offset;
        return HBG_OK;
    case HBG_TARG_BVIEW:
        bt = &im->btensors[r->btensor_off + ta->ref];
        *out = ta->layout;
        out->addr = bt->addr;
        out->nbytes = bt->nbytes;
        return view_offset(im, r, ta, bt->offset, &out->offset);
    default: /* NODE_OUT, OWN_OUT: validated */
        *out = ta->layout;
        out->addr = r->heap_base + ta->heap_off;
        return HBG_OK;
    }
}

hbg_status hbg__exec_node_call(const hbg__exec_image *im, uint32_t replay, uint32_t node, uint32_t rank,
                              uint32_t nranks, void *services, hbg__exec_call *c)
{
    const hbg_img_replay *r = &im->replays[replay];
    const hbg__exec_def *d = &im->defs[r->def];
    const hbg_def_node *n = &d->nodes[node];
    call_common(c, n->core, n->kernel_aic, n->kernel_aiv, n->blocks, rank, nranks, services);
    for (uint32_t i = 0; i < n->targ_cnt; i++) {
        hbg_status st = resolve_targ(im, r, d, &d->targs[n->targ_off + i], &c->tbuf[i]);
        if (st)
            return st;
    }
    for (uint32_t i = 0; i < n->sarg_cnt; i++) {
        const hbg_def_sarg *s = &d->sargs[n->sarg_off + i];
        c->sbuf[i] = s->slot < 0 ? s->value : im->bscalars[r->bscalar_off + (uint32_t)s->slot];
    }
    c->args.ntensors = n->targ_cnt;
    c->args.tensors = c->tbuf;
    c->args.nscalars = n->sarg_cnt;
    c->args.scalars = c->sbuf;
    return HBG_OK;
}

/* Little-endian unsigned word of 1, 2, 4 or 8 bytes, read byte-wise: the
 * address need not be aligned. */
static uint64_t read_word(uint64_t addr, uint8_t size)
{
    const unsigned char *p = (const unsigned char *)(uintptr_t)addr;
    uint64_t w = 0;
    for (unsigned i = 0; i < size; i++)
        w |= (uint64_t)p[i] << (8 * i);
    return w;
}

static bool compare(uint64_t w, uint8_t op, uint64_t v)
{
    switch (op) {
    case HBG_CMP_EQ: return w == v;
    case HBG_CMP_NE: return w != v;
    case HBG_CMP_LT: return w < v;
    case HBG_CMP_LE: return w <= v;
    case HBG_CMP_GT: return w > v;
    default: return w >= v;
    }
}

bool hbg__exec_pred_holds(const hbg_img_pred *p)
{
    return compare(read_word(p->addr, p->elem_size), p->op, p->value);
}

bool hbg__exec_task_pred(const hbg__exec_image *im, uint32_t task)
{
    return hbg__exec_pred_holds(&im->preds[im->tasks[task].pred]);
}

hbg_status hbg__exec_node_pred(const hbg__exec_image *im, hbg__exec_mem_fn mem, void *mem_ctx, uint32_t replay,
                              uint32_t node, bool *run)
{
    const hbg_img_replay *r = &im->replays[replay];
    const hbg__exec_def *d = &im->defs[r->def];
    const hbg_def_pred *p = &d->preds[d->nodes[node].pred];
    hbg_tensor t;
    hbg_status st = resolve_targ(im, r, d, &p->where, &t);
    if (st)
        return st;
    if (!range_ok(p->byte_offset, 1, p->elem_size, t.nbytes))
        return FAIL("replay %u node %u: predicate word at byte %llu (+%u) lies outside its %llu-byte buffer", replay,
                    node, (unsigned long long)p->byte_offset, p->elem_size, (unsigned long long)t.nbytes);
    uint64_t addr = t.addr + p->byte_offset;
    if (addr < t.addr || (mem && !mem(mem_ctx, addr, p->elem_size)))
        return FAIL("replay %u node %u: predicate word at 0x%llx is not device memory", replay, node,
                    (unsigned long long)addr);
    *run = compare(read_word(addr, p->elem_size), p->op, p->value);
    return HBG_OK;
}

hbg_status hbg__exec_invoke(const hbg_kernel_table *kt, const hbg__exec_call *c, uint32_t block, uint8_t core,
                           uint32_t task, uint32_t node)
{
    uint16_t id = core == HBG_CORE_AIC ? c->kernel_aic : c->kernel_aiv;
    hbg_kernel_fn fn = hbg_kernel_lookup(kt, id);
    char where[64]; /* formatted only on failure: the hot path is one call */
    if (!fn) {
        if (node == HBG_EXEC_NO_NODE)
            snprintf(where, sizeof where, "task %u", task);
        else
            snprintf(where, sizeof where, "task %u node %u", task, node);
        hbg__exec_set_error("%s: kernel %u is not registered", where, id);
        return HBG_E_KERNEL;
    }
    hbg_kernel_args a = c->args;
    a.block = block;
    a.core = core;
    int rc = fn(&a);
    if (rc == 0)
        return HBG_OK;
    hbg_status st = rc < 0 && rc > -(int)HBG_STATUS_COUNT ? (hbg_status)-rc : HBG_E_KERNEL;
    if (node == HBG_EXEC_NO_NODE)
        snprintf(where, sizeof where, "task %u", task);
    else
        snprintf(where, sizeof where, "task %u node %u", task, node);
    hbg__exec_set_error("%s: kernel %u (%s) block %u/%u on %s returned %d (%s)", where, id,
                       hbg_kernel_name(kt, id), block, c->blocks, core == HBG_CORE_AIC ? "AIC" : "AIV", rc,
                       hbg_status_name(st));
    return st;
}
