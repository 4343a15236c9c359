/* Test support: arena and Definition image builders (see image_builder.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "support/image_builder.h"

/* A growable array of fixed-size records. */
typedef struct vec {
    unsigned char *p;
    uint32_t n, cap;
    uint32_t elem;
} vec;

static uint32_t vec_push(vec *v, const void *src, uint32_t count)
{
    if (v->n + count > v->cap) {
        uint32_t cap = v->cap ? v->cap : 16;
        while (cap < v->n + count)
            cap *= 2;
        v->p = realloc(v->p, (size_t)cap * v->elem);
        assert_non_null(v->p);
        v->cap = cap;
    }
    uint32_t at = v->n;
    if (count)
        memcpy(v->p + (size_t)at * v->elem, src, (size_t)count * v->elem);
    v->n += count;
    return at;
}

hbg_tensor ib_u32(uint64_t addr, uint32_t n)
{
    hbg_tensor t;
    memset(&t, 0, sizeof t);
    t.addr = addr;
    t.nbytes = (uint64_t)n * 4;
    t.ndim = 1;
    t.shape[0] = n;
    t.strides[0] = 1;
    t.dtype = HBG_U32;
    return t;
}

struct ib {
    vec sec[HBG_SEC_COUNT];
};

static const uint32_t img_elem[HBG_SEC_COUNT] = {
    sizeof(hbg_img_task),    sizeof(uint32_t),       sizeof(hbg_tensor), sizeof(uint64_t),
    sizeof(hbg_img_pred),    sizeof(uint32_t),       sizeof(hbg_img_replay),
    sizeof(hbg_img_btensor), sizeof(uint64_t),       sizeof(hbg_img_def),
};

ib *ib_new(void)
{
    ib *b = calloc(1, sizeof *b);
    assert_non_null(b);
    for (int s = 0; s < HBG_SEC_COUNT; s++)
        b->sec[s].elem = img_elem[s];
    return b;
}

void ib_free(ib *b)
{
    if (!b)
        return;
    for (int s = 0; s < HBG_SEC_COUNT; s++)
        free(b->sec[s].p);
    free(b);
}

uint32_t ib_add_task(ib *b, const ib_task_spec *t)
{
    hbg_img_task k;
    memset(&k, 0, sizeof k);
    k.kind = t->kind;
    k.core = t->core;
    k.kernel_aic = t->aic;
    k.kernel_aiv = t->aiv;
    k.blocks = t->blocks;
    k.fanin_off = vec_push(&b->sec[HBG_SEC_FANINS], t->fanins, t->nfanin);
    k.fanin_cnt = t->nfanin;
    k.tensor_off = vec_push(&b->sec[HBG_SEC_TENSORS], t->tensors, t->ntensors);
    k.tensor_cnt = t->ntensors;
    k.scalar_off = vec_push(&b->sec[HBG_SEC_SCALARS], t->scalars, t->nscalars);
    k.scalar_cnt = t->nscalars;
    if (t->pred) {
        k.has_pred = 1;
        k.pred = vec_push(&b->sec[HBG_SEC_PREDS], t->pred, 1);
    }
    uint32_t zero = 0;
    vec_push(&b->sec[HBG_SEC_FLAGS], &zero, 1);
    return vec_push(&b->sec[HBG_SEC_TASKS], &k, 1);
}

uint32_t ib_add_def(ib *b, uint64_t addr, uint64_t bytes, uint64_t hash)
{
    hbg_img_def d = {addr, bytes, hash};
    return vec_push(&b->sec[HBG_SEC_DEFTAB], &d, 1);
}

uint32_t ib_add_replay(ib *b, uint32_t def, const hbg_img_btensor *bt, uint32_t nbt, const uint64_t *bs,
                       uint32_t nbs, uint64_t heap_base, const uint32_t *fanins, uint32_t nfanin)
{
    ib_task_spec t = {.kind = HBG_TASK_REPLAY, .fanins = fanins, .nfanin = nfanin};
    uint32_t task = ib_add_task(b, &t);
    hbg_img_replay r;
    memset(&r, 0, sizeof r);
    r.def = def;
    r.task = task;
    r.btensor_off = vec_push(&b->sec[HBG_SEC_BTENSORS], bt, nbt);
    r.bscalar_off = vec_push(&b->sec[HBG_SEC_BSCALARS], bs, nbs);
    r.heap_base = heap_base;
    hbg_img_task *k = (hbg_img_task *)b->sec[HBG_SEC_TASKS].p + task;
    k->replay = vec_push(&b->sec[HBG_SEC_REPLAYS], &r, 1);
    return task;
}

static uint64_t align8(uint64_t x)
{
    return (x + 7) & ~(uint64_t)7;
}

void *ib_build(const ib *b, uint64_t *bytes)
{
    hbg_img_header h;
    memset(&h, 0, sizeof h);
    h.magic = HBG_IMG_MAGIC;
    h.version = HBG_IMG_VERSION;
    h.nranks = 1;
    h.pass = 1;
    uint64_t off = align8(sizeof h);
    h.image_off = off;
    for (int s = 0; s < HBG_SEC_COUNT; s++) {
        if (s == HBG_SEC_REPLAYS) {
            h.image_bytes = off - h.image_off;
            h.subs_off = off;
        }
        h.sec[s].off = off;
        h.sec[s].count = b->sec[s].n;
        h.sec[s].elem = b->sec[s].elem;
        off = align8(off + (uint64_t)b->sec[s].n * b->sec[s].elem);
    }
    h.subs_bytes = off - h.subs_off;
    h.total_bytes = off;
    unsigned char *a = aligned_alloc(8, off);
    assert_non_null(a);
    memset(a, 0, off);
    memcpy(a, &h, sizeof h);
    for (int s = 0; s < HBG_SEC_COUNT; s++)
        if (b->sec[s].n)
            memcpy(a + h.sec[s].off, b->sec[s].p, (size_t)b->sec[s].n * b->sec[s].elem);
    *bytes = off;
    return a;
}

struct db {
    hbg_def_header h;
    vec nodes, fanins, targs, sargs, preds, bt;
};

db *db_new(uint32_t nbt, const hbg_tensor *btemplates, uint32_t nbs, uint64_t heap_bytes, uint64_t key)
{
    db *d = calloc(1, sizeof *d);
    assert_non_null(d);
    d->nodes.elem = sizeof(hbg_def_node);
    d->fanins.elem = sizeof(uint32_t);
    d->targs.elem = sizeof(hbg_def_targ);
    d->sargs.elem = sizeof(hbg_def_sarg);
    d->preds.elem = sizeof(hbg_def_pred);
    d->bt.elem = sizeof(hbg_tensor);
    d->h.magic = HBG_DEF_MAGIC;
    d->h.key = key;
    d->h.heap_bytes = heap_bytes;
    d->h.nbt = nbt;
    d->h.nbs = nbs;
    vec_push(&d->bt, btemplates, nbt);
    return d;
}

void db_free(db *d)
{
    if (!d)
        return;
    free(d->nodes.p);
    free(d->fanins.p);
    free(d->targs.p);
    free(d->sargs.p);
    free(d->preds.p);
    free(d->bt.p);
    free(d);
}

uint32_t db_add_node(db *d, const db_node_spec *n)
{
    hbg_def_node k;
    memset(&k, 0, sizeof k);
    k.kind = n->kind;
    k.core = n->core;
    k.kernel_aic = n->aic;
    k.kernel_aiv = n->aiv;
    k.blocks = n->blocks;
    k.fanin_off = vec_push(&d->fanins, n->fanins, n->nfanin);
    k.fanin_cnt = n->nfanin;
    k.targ_off = vec_push(&d->targs, n->targs, n->ntarg);
    k.targ_cnt = n->ntarg;
    k.sarg_off = vec_push(&d->sargs, n->sargs, n->nsarg);
    k.sarg_cnt = n->nsarg;
    if (n->pred) {
        k.has_pred = 1;
        k.pred = vec_push(&d->preds, n->pred, 1);
    }
    return vec_push(&d->nodes, &k, 1);
}

uint64_t db_hash(const void *img, uint64_t bytes)
{
    const unsigned char *p = img;
    uint64_t h = 1469598103934665603ull;
    for (uint64_t i = 0; i < bytes; i++) {
        unsigned char c = p[i];
        if (i >= offsetof(hbg_def_header, hash) && i < offsetof(hbg_def_header, hash) + 8)
            c = 0;
        h = (h ^ c) * 1099511628211ull;
    }
    return h;
}

void *db_build(const db *d, uint64_t *bytes, uint64_t *hash)
{
    hbg_def_header h = d->h;
    const vec *secs[] = {&d->nodes, &d->fanins, &d->targs, &d->sargs, &d->preds, &d->bt};
    uint64_t *offs[] = {&h.off_nodes, &h.off_fanins, &h.off_targs, &h.off_sargs, &h.off_preds, &h.off_btemplates};
    h.nnodes = d->nodes.n;
    h.nfanin = d->fanins.n;
    h.ntarg = d->targs.n;
    h.nsarg = d->sargs.n;
    h.npred = d->preds.n;
    uint64_t off = align8(sizeof h);
    for (int i = 0; i < 6; i++) {
        *offs[i] = off;
        off = align8(off + (uint64_t)secs[i]->n * secs[i]->elem);
    }
    h.bytes = off;
    unsigned char *img = aligned_alloc(8, off);
    assert_non_null(img);
    memset(img, 0, off);
    for (int i = 0; i < 6; i++)
        if (secs[i]->n)
            memcpy(img + *offs[i], secs[i]->p, (size_t)secs[i]->n * secs[i]->elem);
    h.hash = 0;
    memcpy(img, &h, sizeof h);
    h.hash = db_hash(img, off);
    memcpy(img, &h, sizeof h);
    *bytes = off;
    *hash = h.hash;
    return img;
}

hbg_def_targ db_boundary(uint32_t ref)
{
    hbg_def_targ t;
    memset(&t, 0, sizeof t);
    t.cls = HBG_TARG_BOUNDARY;
    t.ref = ref;
    return t;
}

hbg_def_targ db_bview(uint32_t ref, int64_t delta, hbg_tensor layout)
{
    hbg_def_targ t;
    memset(&t, 0, sizeof t);
    t.cls = HBG_TARG_BVIEW;
    t.ref = ref;
    t.delta = delta;
    t.layout = layout;
    return t;
}

hbg_def_targ db_heap(uint8_t cls, uint64_t heap_off, hbg_tensor layout)
{
    hbg_def_targ t;
    memset(&t, 0, sizeof t);
    t.cls = cls;
    t.heap_off = heap_off;
    t.layout = layout;
    return t;
}

hbg_def_sarg db_slot(int32_t slot)
{
    hbg_def_sarg s = {slot, 0, 0};
    return s;
}

hbg_def_sarg db_static(uint64_t value)
{
    hbg_def_sarg s = {-1, 0, value};
    return s;
}
