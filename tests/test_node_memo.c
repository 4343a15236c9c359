/* The node memo (src/graph/nodememo.c): a node a re-recorded body submits
 * that repeats the last capture's, in the same state, keeps the records
 * the last capture left. Against an orchestrator without a journal (so
 * without any memo), the same calls must give the same statuses and ids
 * inside the body, the same tensors handed back to it, the same images
 * and the same Definitions byte for byte; and the memo must answer, and
 * stop answering where what it relies on is gone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "support/orch_fixture.h"

static uint64_t rs;
static uint64_t rnd(void)
{
    rs ^= rs << 13, rs ^= rs >> 7, rs ^= rs << 17;
    return rs;
}

#define NBUF  6 /* the last one is never in a boundary */
#define MAXN  16
#define NSLOT 4
#define NCALL 6

static hbg_tensor bufs[NBUF];

/* How a node's argument is made. */
enum {
    A_SLOT,  /* the boundary's tensor itself */
    A_SUB,   /* a copy of it, one row of it (a view of the slot) */
    A_OWN,   /* the buffer an earlier node of the body allocated */
    A_NEW,   /* a new buffer (HBG_OUT_ALLOC) */
    A_STRAY, /* a buffer outside the boundary: the node is refused */
    A_SAME,  /* the same tensor as an earlier argument of the node */
    A_FIXED, /* a row of the buffer of slot k, whatever the slot's view */
};

typedef struct aspec {
    uint8_t how, k, dir;
    uint32_t rows;
} aspec;

/* One submit of a body. kind 0: kernel; 1: dummy; 2: alloc_tensors;
 * 3: a kernel in a MANUAL scope of its own. */
typedef struct nspec {
    uint8_t kind, n;
    aspec a[4];
    uint8_t nsc;
    uint64_t sc[3];
    int16_t slot[3];
    uint8_t ndeps, dep[3];
    uint8_t baddep; /* a dependency that is not a node: refused */
    int8_t pred;    /* -1: none; 0..3: on that argument; 4: on slot 0; 5: A_FIXED row prow of slot 0 */
    uint8_t prow, pop;
    uint8_t kern, blocks, sync; /* the task's header */
    uint64_t pval;
    uint8_t poff;
    int8_t mutate; /* >= 0: the body changes that slot's tensor first */
} nspec;

typedef struct bspec {
    int nn;
    nspec node[MAXN];
} bspec;

/* One Graph call of a pass. */
typedef struct cspec {
    int key, nt, nsc;
    int buf[NSLOT]; /* the shape's buffers */
    hbg_tensor v[NSLOT];
    uint8_t dir[NSLOT];
    uint64_t sc[2];
    uint32_t flags;
} cspec;

static bspec bodies[2];
static cspec calls[NCALL];
static int ncalls;

static aspec gen_arg(int i, int idx)
{
    aspec a = {.dir = (uint8_t)(rnd() % 4), .k = (uint8_t)(rnd() % NSLOT), .rows = 1 + (uint32_t)(rnd() % 3)};
    static const uint8_t dirs[4] = {HBG_IN, HBG_INOUT, HBG_OUT, HBG_NO_DEP};
    a.dir = dirs[a.dir];
    uint64_t r = rnd() % 100;
    a.how = r < 36 ? A_SLOT : r < 54 ? A_SUB : r < 70 ? A_OWN : r < 92 ? A_NEW : r < 96 ? A_FIXED : A_SAME;
    if (rnd() % 1000 == 0)
        a.how = A_STRAY;
    if (a.how == A_OWN && i == 0)
        a.how = A_SLOT;
    if (a.how == A_OWN)
        a.k = (uint8_t)(rnd() % (uint64_t)i);
    if (a.how == A_SAME) {
        if (idx == 0)
            a.how = A_SLOT;
        else
            a.k = (uint8_t)(rnd() % (uint64_t)idx);
    }
    if (a.how == A_FIXED)
        a.rows = (uint32_t)(rnd() % 4);
    if (a.how == A_NEW)
        a.dir = HBG_OUT_ALLOC;
    return a;
}

static void gen_node(nspec *p, int i)
{
    memset(p, 0, sizeof *p);
    uint64_t r = rnd() % 40;
    p->kind = r < 32 ? 0 : r < 34 ? 1 : r < 38 ? 2 : 3;
    p->n = (uint8_t)(1 + rnd() % 4);
    for (int k = 0; k < p->n; k++) {
        p->a[k] = gen_arg(i, k);
        if (p->kind == 2)
            p->a[k] = (aspec){.how = A_NEW, .dir = HBG_OUT_ALLOC, .rows = 1 + (uint32_t)(rnd() % 3)};
    }
    p->nsc = (uint8_t)(rnd() % 4);
    for (int k = 0; k < p->nsc; k++) {
        p->sc[k] = rnd() % 3;
        /* slot 2 is past every boundary's scalars, and slot 0 of some */
        p->slot[k] = rnd() % 4 ? -1 : rnd() % 50 ? 0 : 2;
    }
    p->ndeps = i ? (uint8_t)(rnd() % 3) : 0;
    for (int k = 0; k < p->ndeps; k++)
        p->dep[k] = (uint8_t)(rnd() % (uint64_t)i);
    if (p->ndeps == 2 && rnd() % 4 == 0)
        p->dep[1] = p->dep[0];
    p->baddep = rnd() % 300 == 0;
    p->pred = rnd() % 5 ? -1 : (int8_t)(rnd() % 6);
    p->prow = (uint8_t)(rnd() % 4);
    /* a predicate on a buffer the task allocates is refused (its size is
     * unknown when checked): now and then */
    if (p->pred >= 0 && p->pred < 4 && (p->pred >= p->n || (p->a[p->pred].how == A_NEW && rnd() % 8)))
        p->pred = 4;
    p->pval = rnd() % 2;
    p->poff = (uint8_t)(4 * (rnd() % 2));
    p->mutate = rnd() % 50 ? -1 : (int8_t)(rnd() % NSLOT);
}

static void gen_body(bspec *b)
{
    b->nn = 1 + (int)(rnd() % MAXN);
    for (int i = 0; i < b->nn; i++)
        gen_node(&b->node[i], i);
}

/* Each key's boundary shape: its calls differ in buffers and offsets (and
 * now and then in more, which a call without HBG_GRAPH_FALLBACK refuses). */
static cspec shape[2];

static void gen_shape(cspec *c, int key)
{
    memset(c, 0, sizeof *c);
    c->key = key;
    c->nt = 2 + (int)(rnd() % (NSLOT - 1));
    c->nsc = rnd() % 40 ? 1 + (int)(rnd() % 2) : 0;
    for (int k = 0; k < NSLOT; k++)
        c->dir[k] = k == 0 ? HBG_IN : rnd() % 2 ? HBG_INOUT : HBG_OUT;
    c->flags = rnd() % 4 == 0; /* slot 1 shares slot 0's buffer */
    /* distinct buffers, but for the alias */
    int perm[NBUF - 1];
    for (int k = 0; k < NBUF - 1; k++)
        perm[k] = k;
    for (int k = NBUF - 2; k > 0; k--) {
        int m = (int)(rnd() % (uint64_t)(k + 1)), x = perm[k];
        perm[k] = perm[m], perm[m] = x;
    }
    for (int k = 0; k < NSLOT; k++)
        c->buf[k] = perm[k];
    if (c->flags)
        c->buf[1] = c->buf[0];
}

static void gen_call(cspec *c)
{
    *c = shape[rnd() % 12 == 0];
    bool alias = c->flags;
    for (int k = 0; k < NSLOT; k++)
        c->v[k] = fx_tile(&bufs[c->buf[k]], rnd() % 8 ? 0 : 4, 0, 4, 8);
    if (alias)
        c->v[1] = fx_tile(&bufs[c->buf[0]], 4, 0, 4, 8);
    c->sc[0] = rnd() % 5, c->sc[1] = rnd() % 5;
    c->flags = (rnd() % 20 == 0 ? HBG_GRAPH_CHECK_BODY : 0) | (rnd() % 4 == 0 ? HBG_GRAPH_FALLBACK : 0);
    if (rnd() % 30 == 0)
        c->dir[c->nt - 1] ^= HBG_INOUT ^ HBG_OUT; /* another shape */
}

static void gen(void)
{
    gen_body(&bodies[0]);
    gen_body(&bodies[1]);
    gen_shape(&shape[0], 0);
    gen_shape(&shape[1], 1);
    ncalls = 1 + (int)(rnd() % NCALL);
    for (int i = 0; i < ncalls; i++)
        gen_call(&calls[i]);
}

/* Small changes between passes: a node of a body, a scalar, a boundary's
 * view or scalars, a call's flags. */
static void mutate(void)
{
    bspec *b = &bodies[rnd() % 2];
    int i = (int)(rnd() % (uint64_t)b->nn);
    cspec *c = &calls[rnd() % (uint64_t)ncalls];
    nspec *p = &b->node[i];
    aspec *a = &p->a[rnd() % p->n];
    switch (rnd() % 15) {
    case 11: /* the header */
        switch (rnd() % 3) {
        case 0:
            p->kern ^= 1;
            break;
        case 1:
            p->blocks = (uint8_t)(p->blocks ? 0 : 2); /* 0 means 1 */
            break;
        default:
            p->sync ^= 1;
        }
        break;
    case 12: { /* the first predicate: its value, its offset, or dropped */
        int m = 0;
        while (m < b->nn && b->node[m].pred < 0)
            m++;
        if (m == b->nn) {
            p->pred = 4;
            break;
        }
        nspec *q = &b->node[m];
        uint64_t v = rnd() % 4;
        if (v == 0)
            q->pval ^= 1;
        else if (v == 1)
            q->poff ^= 4;
        else if (v == 2)
            q->pop ^= 1;
        else
            q->pred = -1;
        break;
    }
    case 13: /* a scalar's slot, or how many scalars */
        if (p->nsc && rnd() % 2)
            p->slot[0] = p->slot[0] < 0 ? 0 : -1;
        else
            p->nsc = (uint8_t)((p->nsc + 1) % 4), p->slot[p->nsc ? p->nsc - 1 : 0] = -1;
        break;
    case 14: /* an argument without dependencies, added or dropped */
        if (p->n < 4 && rnd() % 2)
            p->a[p->n++] = (aspec){.how = A_SLOT, .k = 0, .dir = HBG_NO_DEP};
        else if (p->n > 1 && p->a[p->n - 1].dir == HBG_NO_DEP)
            p->n--;
        break;
    case 0:
        gen_node(p, i);
        break;
    case 5: /* one direction */
        if (a->how != A_NEW)
            a->dir = a->dir == HBG_IN ? HBG_OUT : HBG_IN;
        break;
    case 6: /* one new buffer's size (an alloc node's, which the map never sees, first) */
        for (int m = 0; m < b->nn; m++)
            if (b->node[m].kind == 2)
                a = &b->node[m].a[0];
        if (a->how == A_NEW)
            a->rows = 1 + a->rows % 3;
        break;
    case 7: /* one dependency */
        if (p->ndeps)
            p->dep[0] = (uint8_t)(rnd() % (uint64_t)i);
        break;
    case 8: /* the next node becomes this one */
        if (i + 1 < b->nn)
            b->node[i + 1] = *p;
        break;
    case 9: /* a second new buffer, or the first one passed twice */
        if (p->n > 1 && p->a[0].how == A_NEW) {
            bool same = p->a[1].how == A_SAME;
            p->a[1] = p->a[0];
            if (!same)
                p->a[1].how = A_SAME, p->a[1].k = 0;
        }
        break;
    case 10: /* a fixed row, or a predicate's tensor */
        if (a->how == A_FIXED)
            a->rows = (a->rows + 1) % 4;
        for (int m = 0; m < b->nn; m++)
            if (b->node[m].pred >= 4)
                p = &b->node[m];
        if (p->pred == 4)
            p->pred = 5;
        p->prow = (uint8_t)((p->prow + 1) % 4);
        break;
    case 1:
        if (b->node[i].nsc)
            b->node[i].sc[0]++;
        break;
    case 2:
        c->v[rnd() % NSLOT].offset = 8 * (rnd() % 5);
        break;
    case 3:
        c->sc[0]++;
        break;
    default:
        c->flags ^= HBG_GRAPH_CHECK_BODY;
    }
}

/* What the bodies did, in order: each submit's status and id, and the
 * tensors each node passed as they were after it (own buffers get their
 * recording addresses). Compared between the two orchestrators. */
static unsigned char tlog[2][1 << 20];
static size_t tlen[2];
static int side;

static void logv(const void *p, size_t n)
{
    assert_true(tlen[side] + n <= sizeof tlog[side]);
    memcpy(tlog[side] + tlen[side], p, n);
    tlen[side] += n;
}

static uint64_t kernels; /* kernel nodes the memo side was asked to record */

static hbg_status run_node(hbg_orch *o, const hbg_boundary *b, const bspec *body, int i, hbg_tensor (*tens)[4],
                           hbg_task_id *ids)
{
    const nspec *p = &body->node[i];
    hbg_tensor *v = tens[i];
    hbg_arg a[4];
    for (int k = 0; k < p->n; k++) {
        const aspec *s = &p->a[k];
        hbg_tensor *t = &v[k];
        uint32_t sh[2] = {s->rows, 8};
        switch (s->how) {
        case A_SLOT:
            t = b->args[s->k % b->ntensors].t;
            break;
        case A_SUB:
            *t = *b->args[s->k % b->ntensors].t;
            t->shape[0] = 1;
            t->offset += (uint64_t)(s->rows - 1) * 8;
            break;
        case A_OWN: {
            const nspec *q = &body->node[s->k];
            int src = -1;
            for (int m = 0; m < q->n && src < 0 && q->kind != 1; m++)
                if (q->a[m].how == A_NEW)
                    src = m;
            if (src < 0)
                t = b->args[0].t;
            else
                t = &tens[s->k][src];
            break;
        }
        case A_NEW:
            *t = hbg_tensor_desc(HBG_F32, 2, sh);
            break;
        case A_FIXED:
            *t = fx_tile(&bufs[shape[body == &bodies[1]].buf[s->k]], s->rows, 0, 1, 8);
            break;
        case A_STRAY:
            *t = fx_tile(&bufs[NBUF - 1], 0, 0, 1, 8);
            break;
        default:
            t = a[s->k].t;
        }
        /* Slot 0 is passed as HBG_IN (gen_shape), and a node may write a
         * boundary buffer only through a slot passed for writing: a write
         * on slot 0's buffer that slot 1 (when it shares it) cannot
         * carry is made a read, so the bodies are refused no more often
         * than before that rule. */
        uint8_t dir = s->dir;
        if ((dir == HBG_INOUT || dir == HBG_OUT) && b->ntensors && t->addr == b->args[0].t->addr &&
            !(b->ntensors > 1 && b->args[1].t->addr == t->addr))
            dir = HBG_IN;
        a[k] = (hbg_arg){t, dir};
    }
    hbg_task_id deps[4];
    uint32_t nd = 0;
    for (int k = 0; k < p->ndeps; k++)
        deps[nd++] = ids[p->dep[k]] == HBG_TASK_NONE ? HBG_NODE_ID_BIT : ids[p->dep[k]];
    if (p->baddep)
        deps[nd++] = 3; /* not a node id */
    hbg_tensor pfix = fx_tile(&bufs[shape[body == &bodies[1]].buf[0]], p->prow, 0, 1, 8);
    hbg_pred pr = {.t = p->pred == 5                  ? &pfix
                        : p->pred == 4 || p->pred < 0 ? b->args[0].t
                                                      : a[p->pred].t,
                   .byte_offset = p->poff,
                   .value = p->pval,
                   .op = p->pop ? HBG_CMP_NE : HBG_CMP_EQ,
                   .elem_size = 4};
    hbg_task t = {.kernel_aic = HBG_KERNEL_NONE,
                  .kernel_aiv = (uint16_t)(1 + p->kern),
                  .core = HBG_CORE_AIV,
                  .blocks = p->blocks,
                  .sync_start = p->sync,
                  .ntensors = p->n,
                  .args = a,
                  .nscalars = p->nsc,
                  .scalars = p->sc,
                  .scalar_slots = p->slot,
                  .ndeps = nd,
                  .deps = deps,
                  .pred = p->pred >= 0 ? &pr : NULL};
    hbg_status st = HBG_OK, s2;
    ids[i] = HBG_TASK_NONE;
    kernels += side == 0 && (p->kind == 0 || p->kind == 3) && o->capturing;
    switch (p->kind) {
    case 1:
        st = hbg_submit_dummy(o, nd, deps, &ids[i]);
        break;
    case 2: {
        hbg_tensor *ts[4] = {&v[0], &v[1], &v[2], &v[3]};
        st = hbg_alloc_tensors(o, p->n, ts, &ids[i]);
        break;
    }
    case 3:
        st = hbg_scope_begin(o, HBG_SCOPE_MANUAL);
        s2 = hbg_submit_task(o, &t, &ids[i]);
        st = st ? st : s2;
        s2 = hbg_scope_end(o);
        st = st ? st : s2;
        break;
    default:
        st = hbg_submit_task(o, &t, &ids[i]);
    }
    logv(&st, sizeof st);
    logv(&ids[i], sizeof ids[i]);
    for (int k = 0; k < p->n; k++)
        logv(a[k].t ? a[k].t : &v[k], sizeof(hbg_tensor));
    return st;
}

static hbg_status nbody(hbg_orch *o, void *ctx, const hbg_boundary *b)
{
    const bspec *s = &bodies[*(const int *)ctx];
    hbg_tensor tens[MAXN][4];
    hbg_task_id ids[MAXN];
    memset(tens, 0, sizeof tens);
    hbg_status first = HBG_OK;
    for (int i = 0; i < s->nn; i++) {
        const nspec *p = &s->node[i];
        /* the caller's tensor, a row shorter (a row on, now and then) */
        if (p->mutate >= 0 && (uint32_t)p->mutate < b->ntensors && b->args[p->mutate].t->shape[0] > 1) {
            hbg_tensor *x = b->args[p->mutate].t;
            x->shape[0]--;
            x->offset += p->pval * 8;
        }
        hbg_status st = run_node(o, b, s, i, tens, ids);
        first = first ? first : st;
    }
    return first;
}

static uint64_t node_hits(const hbg_orch *o)
{
    return o->graph->rec.node_hits;
}

/* One pass of the program: every call, and a kernel task now and then
 * between them on a boundary buffer. */
static hbg_status run(hbg_orch *o, hbg_tensor (*slots)[NSLOT])
{
    static const int keys[2] = {0, 1};
    hbg_status first = HBG_OK;
    hbg_task_id prev = HBG_TASK_NONE, id = HBG_TASK_NONE;
    for (int i = 0; i < ncalls; i++) {
        cspec *c = &calls[i];
        memcpy(slots[i], c->v, sizeof c->v);
        hbg_arg a[NSLOT];
        for (int k = 0; k < c->nt; k++)
            a[k] = (hbg_arg){&slots[i][k], c->dir[k]};
        hbg_boundary b = {.ntensors = (uint32_t)c->nt,
                          .args = a,
                          .nscalars = (uint32_t)c->nsc,
                          .scalars = c->sc,
                          .ndeps = prev != HBG_TASK_NONE,
                          .deps = &prev};
        hbg_status st = hbg_submit_graph(o, 900 + (uint64_t)c->key, nbody, (void *)&keys[c->key], &b, c->flags, &id);
        prev = id;
        logv(&st, sizeof st);
        first = first ? first : st;
        if (i % 2) {
            hbg_tensor x = fx_tile(&bufs[i % (NBUF - 1)], 0, 0, 2, 8);
            hbg_arg xa[1] = {{&x, HBG_INOUT}};
            st = fx_task(o, 1, xa, &id);
            first = first ? first : st;
        }
    }
    return first;
}

static hbg_tensor slots_a[NCALL][NSLOT], slots_b[NCALL][NSLOT];

/* Random bodies (boundary slots and views of them, own buffers passed on,
 * new buffers, strays, aliased arguments, scalar slots, dependencies and
 * repeated ones, predicates, dummies, alloc nodes, MANUAL scopes, bodies
 * that move the caller's boundary tensors) under calls that change a
 * little between most passes: the orchestrators with and without the
 * memo agree on everything the body, the caller and the device see. */
static void random_bodies_with_and_without(void **state)
{
    (void)state;
    uint64_t hits = 0, passes = 0, failed = 0;
    for (int i = 0; i < NBUF; i++)
        bufs[i] = fx_buf(0x100000ull * (i + 1), 8, 8);
    for (int seed = 1; seed < 300; seed++) {
        rs = 0x9e3779b97f4a7c15ull * (uint64_t)seed;
        hbg__orch_config cfg = {.task_window = 64,
                                .heap_base = FAKE_HEAP_BASE,
                                .heap_bytes = seed % 7 == 0 ? 1024 : 1 << 20,
                                .keep_definitions = seed % 5 == 0};
        hbg_orch *a, *b;
        assert_int_equal(hbg__graph_orch_create(&cfg, &a), HBG_OK);
        cfg.no_journal = true;
        assert_int_equal(hbg__graph_orch_create(&cfg, &b), HBG_OK);
        assert_non_null(a->graph->rec.notes);
        assert_null(b->graph->rec.notes);
        gen();
        for (int pass = 0; pass < 12; pass++) {
            uint64_t r = rnd() % 20;
            if (r == 0)
                gen();
            else if (r < 12)
                mutate();
            tlen[0] = tlen[1] = 0;
            side = 0;
            hbg__orch_begin_pass(a, FAKE_HEAP_BASE, NULL, 0);
            hbg_status sa = run(a, slots_a);
            hbg_status ea = hbg__orch_end_pass(a);
            side = 1;
            hbg__orch_begin_pass(b, FAKE_HEAP_BASE, NULL, 0);
            hbg_status sb = run(b, slots_b);
            hbg_status eb = hbg__orch_end_pass(b);
            assert_int_equal(sa, sb);
            assert_int_equal(ea, eb);
            assert_int_equal(tlen[0], tlen[1]);
            assert_memory_equal(tlog[0], tlog[1], tlen[0]);
            assert_memory_equal(slots_a, slots_b, sizeof slots_a);
            fx_same_images(a, b);
            passes++;
            failed += ea != HBG_OK;
        }
        hits += node_hits(a);
        assert_int_equal(node_hits(b), 0);
        hbg__orch_destroy(a);
        hbg__orch_destroy(b);
    }

    print_message("node memo: %llu hits of %llu kernel nodes recorded, over %llu passes, %llu failed\n",
                  (unsigned long long)hits, (unsigned long long)kernels, (unsigned long long)passes,
                  (unsigned long long)failed);
    assert_true(hits * 12 > kernels);
    assert_true(failed > 0);
}

/* ---- exact cases ---------------------------------------------------------- */

static hbg_tensor ex_buf, ex_w;
static uint64_t ex_value;  /* the predicate's value */
static int ex_bad_at = -1; /* the node refused (a dependency that is no node) */
static bool ex_shrink;     /* the body shrinks slot 0 before its first node */
static bool ex_pred0;      /* node 0 has node 3's predicate too */
static bool ex_chain;      /* node i > 0 reads node i-1's buffer, not the weights */
static int ex_manual_at = -1; /* the node submitted in a MANUAL scope of its own */
static hbg_tensor ex_outs[4];
static bool ex_readonly; /* the nodes only read: no output */

/* Four nodes on a boundary of activations and weights: each a new buffer
 * from a view of the activations (the first: the whole slot) and the
 * weights, the last one predicated on the activations' first word. */
static hbg_status ex_body(hbg_orch *o, void *ctx, const hbg_boundary *b)
{
    (void)ctx;
    if (ex_shrink)
        b->args[0].t->shape[0] = 2;
    hbg_status first = HBG_OK;
    for (int i = 0; i < 4; i++) {
        uint32_t sh[2] = {1, 8};
        ex_outs[i] = hbg_tensor_desc(HBG_F32, 2, sh);
        hbg_tensor xv = fx_tile(&ex_buf, (uint32_t)i, 0, 1, 8);
        hbg_task_id bad = 5;
        hbg_pred pr = {.t = b->args[0].t, .value = ex_value, .op = HBG_CMP_EQ, .elem_size = 4};

        hbg_tensor *w = ex_chain && i > 0 ? &ex_outs[i - 1] : b->args[1].t;
        hbg_arg a[] = {{i == 0 ? b->args[0].t : &xv, HBG_IN}, {w, HBG_IN}, {&ex_outs[i], HBG_OUT_ALLOC}};
        hbg_task t = {.kernel_aic = HBG_KERNEL_NONE,
                      .kernel_aiv = 1,
                      .core = HBG_CORE_AIV,
                      .ntensors = ex_readonly ? 2 : 3,
                      .args = a,
                      .ndeps = i == ex_bad_at,
                      .deps = &bad,
                      .pred = i == 3 || (i == 0 && ex_pred0) ? &pr : NULL};
        hbg_task_id id;
        hbg_status st = i == ex_manual_at ? hbg_scope_begin(o, HBG_SCOPE_MANUAL) : HBG_OK;
        first = first ? first : st;
        st = hbg_submit_task(o, &t, &id);
        first = first ? first : st;
        st = i == ex_manual_at ? hbg_scope_end(o) : HBG_OK;
        first = first ? first : st;
    }
    return first;
}

static hbg_orch *ex_o[2];

/* One pass of a one-call program on both orchestrators (with the memo
 * and without): the same status and images; the memo's hits this pass. */
static uint64_t ex_pass(uint64_t slot_row, hbg_status want)
{
    uint64_t h0 = node_hits(ex_o[0]);
    hbg_tensor keep[2];
    for (int w = 0; w < 2; w++) {
        hbg__orch_begin_pass(ex_o[w], FAKE_HEAP_BASE, NULL, 0);
        hbg_tensor x = fx_tile(&ex_buf, (uint32_t)slot_row, 0, 4, 8);
        hbg_arg ba[2] = {{&x, HBG_INOUT}, {&ex_w, HBG_IN}};
        hbg_boundary b = {.ntensors = 2, .args = ba};
        hbg_status st = hbg_submit_graph(ex_o[w], 77, ex_body, NULL, &b, 0, NULL);
        if (st != want)
            print_message("%s\n", hbg_orch_last_error(ex_o[w]));
        assert_int_equal(st, want);
        hbg__orch_end_pass(ex_o[w]);
        keep[w] = x;
    }
    assert_memory_equal(&keep[0], &keep[1], sizeof keep[0]);
    fx_same_images(ex_o[0], ex_o[1]);
    return node_hits(ex_o[0]) - h0;
}

static int ex_setup(void **state)
{
    (void)state;
    ex_buf = fx_buf(0x200000, 8, 8);
    ex_w = fx_buf(0x300000, 8, 8);
    ex_value = 0, ex_bad_at = -1, ex_shrink = false, ex_pred0 = false, ex_chain = false, ex_manual_at = -1;
    ex_readonly = false;
    for (int w = 0; w < 2; w++) {
        hbg__orch_config cfg = {
            .task_window = 16, .heap_base = FAKE_HEAP_BASE, .heap_bytes = 1 << 20, .no_journal = w == 1};
        assert_int_equal(hbg__graph_orch_create(&cfg, &ex_o[w]), HBG_OK);
    }
    return 0;
}

static int ex_teardown(void **state)
{
    (void)state;
    hbg__orch_destroy(ex_o[0]);
    hbg__orch_destroy(ex_o[1]);
    return 0;
}

/* The first capture journals nothing, the second notes, the third and
 * later answer every node; the Definition is built and compared all the
 * same (fx_same_images). */
static void every_node_of_the_third_capture_is_answered(void **state)
{
    (void)state;
    assert_int_equal(ex_pass(0, HBG_OK), 0);
    assert_int_equal(ex_pass(0, HBG_OK), 0);
    assert_int_equal(ex_pass(0, HBG_OK), 4);
    assert_int_equal(ex_pass(0, HBG_OK), 4);
    /* the buffers the body was handed are those of a full recording */
    assert_int_equal(ex_outs[2].addr, HBG_REC_BASE + ex_o[0]->graph->rec.targs[8].heap_off);
}

/* A body whose nodes only read its boundary makes no map call: the
 * journal of its capture is empty, and was once never followed, so no
 * capture of such a body was ever answered. */
static void a_body_that_only_reads_is_answered(void **state)
{
    (void)state;
    ex_readonly = true;
    assert_int_equal(ex_pass(0, HBG_OK), 0);
    assert_int_equal(ex_pass(0, HBG_OK), 0);
    assert_int_equal(ex_pass(0, HBG_OK), 4);
    assert_int_equal(ex_pass(0, HBG_OK), 4);
    /* another boundary: recorded in full once, then answered */
    assert_int_equal(ex_pass(1, HBG_OK), 0);
    assert_int_equal(ex_pass(1, HBG_OK), 4);
}

/* A predicate's value is part of the node: the node with the new value is
 * recorded in full, the others are answered. */
static void a_changed_predicate_is_recorded_again(void **state)
{
    (void)state;
    for (int p = 0; p < 3; p++)
        ex_pass(0, HBG_OK);
    ex_value = 1;
    assert_int_equal(ex_pass(0, HBG_OK), 3);
    assert_int_equal(ex_pass(0, HBG_OK), 4);
}

/* Node 3's predicate added to node 0 (on a buffer nothing in the body
 * writes, so the map is asked nothing more): node 3's predicate record
 * moves one place on, and node 3 is recorded again though it is the
 * same. */
static void a_predicate_before_a_node_moves_its_record(void **state)
{
    (void)state;
    for (int p = 0; p < 3; p++)
        ex_pass(0, HBG_OK);
    ex_pred0 = true;
    assert_int_equal(ex_pass(0, HBG_OK), 2);
    assert_int_equal(ex_pass(0, HBG_OK), 4);
}

/* Another boundary (slot 0 a row on): its classification, and so every
 * node's record, may differ; nothing is answered until a capture with it
 * has noted its nodes. */
static void another_boundary_answers_nothing(void **state)
{
    (void)state;
    for (int p = 0; p < 3; p++)
        ex_pass(0, HBG_OK);
    assert_int_equal(ex_pass(1, HBG_OK), 0);
    assert_int_equal(ex_pass(1, HBG_OK), 4);
    assert_int_equal(ex_pass(0, HBG_OK), 0);
}

/* The same task in a MANUAL scope: its fanins are its explicit
 * dependencies alone, not the writer of what it reads (node 1's buffer),
 * so it is recorded again; after it, the map no longer follows the last
 * capture's calls, and node 3 is recorded too. */
static void a_node_in_a_manual_scope_is_recorded_again(void **state)
{
    (void)state;
    ex_chain = true;
    for (int p = 0; p < 3; p++)
        ex_pass(0, HBG_OK);
    assert_int_equal(ex_o[0]->graph->rec.nodes[2].fanin_cnt, 1);
    ex_manual_at = 2;
    assert_int_equal(ex_pass(0, HBG_OK), 2);
    assert_int_equal(ex_o[0]->graph->rec.nodes[2].fanin_cnt, 0);
    assert_int_equal(ex_pass(0, HBG_OK), 4);
    ex_manual_at = -1;
    assert_int_equal(ex_pass(0, HBG_OK), 2);
    assert_int_equal(ex_o[0]->graph->rec.nodes[2].fanin_cnt, 1);
}

/* A node refused: the capture fails, and the next one answers nothing
 * (the refused node may have written records past the counts). */
static void a_capture_after_a_refusal_answers_nothing(void **state)
{
    (void)state;
    for (int p = 0; p < 3; p++)
        ex_pass(0, HBG_OK);
    ex_bad_at = 1;
    assert_int_equal(ex_pass(0, HBG_E_BAD_DEP), 1); /* node 0, before the refusal */
    ex_bad_at = -1;
    assert_int_equal(ex_pass(0, HBG_OK), 0);
    assert_int_equal(ex_pass(0, HBG_OK), 4);
}

/* A body that changes a boundary tensor (slot 0 two rows shorter) before
 * passing it: the call reads its boundary once, so the node records a
 * view of slot 0 as it was passed, the signature and the replay are those
 * of the boundary as passed, and the next call with the full slot is a
 * replay, not a mismatch. The caller's tensor stays as the body left it. */
static void a_body_changing_its_boundary_records_it_as_passed(void **state)
{
    (void)state;
    hbg__orch_config cfg = {.task_window = 16, .heap_base = FAKE_HEAP_BASE, .heap_bytes = 1 << 20};
    hbg_orch *o;
    assert_int_equal(hbg__graph_orch_create(&cfg, &o), HBG_OK);
    hbg__orch_begin_pass(o, FAKE_HEAP_BASE, NULL, 0);
    ex_shrink = true;
    hbg_tensor x = fx_tile(&ex_buf, 0, 0, 4, 8), y = x;
    hbg_arg ba[2] = {{&x, HBG_INOUT}, {&ex_w, HBG_IN}};
    hbg_boundary b = {.ntensors = 2, .args = ba};
    assert_int_equal(hbg_submit_graph(o, 77, ex_body, NULL, &b, 0, NULL), HBG_OK);
    assert_int_equal(x.shape[0], 2);
    const hbg__recorder *r = &o->graph->rec;
    assert_int_equal(r->targs[0].cls, HBG_TARG_BVIEW);
    assert_int_equal(r->targs[0].delta, 0);
    assert_int_equal(r->targs[0].layout.shape[0], 2);
    assert_int_equal(o->graph->defs[0].sig.slot[0].shape[0], 4);
    /* the replay's boundary record and the written copy: as passed */
    assert_memory_equal(&o->img.tensors[o->img.tasks[0].tensor_off], &y, sizeof y);
    ex_shrink = false;
    hbg_arg ya[2] = {{&y, HBG_INOUT}, {&ex_w, HBG_IN}};
    hbg_boundary yb = {.ntensors = 2, .args = ya};
    assert_int_equal(hbg_submit_graph(o, 77, ex_body, NULL, &yb, 0, NULL), HBG_OK);
    assert_int_equal(hbg__orch_end_pass(o), HBG_OK);
    assert_int_equal(o->img.nreplay, 2);
    hbg__orch_destroy(o);
}

/* ---- the boundary struct, and the build shortcut ---------------------------- */

static hbg_boundary *bx_live; /* the caller's boundary, which the body reaches through a global */
static int bx_mode;           /* 1: fewer scalars before the node; 2: after it; 3: slot 0 read-only after it */
static uint16_t bx_kernel = 1;

static hbg_status bx_body(hbg_orch *o, void *ctx, const hbg_boundary *b)
{
    (void)ctx;
    hbg_arg *live_args = (hbg_arg *)(uintptr_t)bx_live->args;
    if (bx_mode == 1)
        bx_live->nscalars = 1;
    static const uint64_t sc[1] = {0};
    static const int16_t slot[1] = {1};
    hbg_arg a[1] = {{b->args[0].t, HBG_INOUT}};
    hbg_task t = {.kernel_aic = HBG_KERNEL_NONE,
                  .kernel_aiv = bx_kernel,
                  .core = HBG_CORE_AIV,
                  .ntensors = 1,
                  .args = a,
                  .nscalars = 1,
                  .scalars = sc,
                  .scalar_slots = slot};
    hbg_status st = hbg_submit_task(o, &t, NULL);
    if (bx_mode == 2)
        bx_live->nscalars = 1;
    if (bx_mode == 3)
        live_args[0].dir = HBG_IN;
    return st;
}

/* One call of bx_body (with `flags`) and a reader of its slot's buffer
 * after it, on both orchestrators: the same statuses and images. */
static void bx_pass(hbg_orch *const *q, uint32_t flags, bool check, hbg_status want)
{
    for (int w = 0; w < 2; w++) {
        hbg__orch_begin_pass(q[w], FAKE_HEAP_BASE, NULL, 0);
        hbg_tensor x = fx_buf(0x200000, 4, 8), y = x;
        hbg_arg ba[1] = {{&x, HBG_INOUT}};
        uint64_t bs[2] = {5, 6};
        hbg_boundary b = {.ntensors = 1, .args = ba, .nscalars = 2, .scalars = bs};
        bx_live = &b;
        uint16_t k0 = bx_kernel;
        assert_int_equal(hbg_submit_graph(q[w], 7, bx_body, NULL, &b, flags & ~HBG_GRAPH_CHECK_BODY, NULL), want);
        if (check) {
            bx_kernel = 2; /* other content under the same key */
            assert_int_equal(hbg_submit_graph(q[w], 7, bx_body, NULL, &b, HBG_GRAPH_CHECK_BODY, NULL),
                             HBG_E_GRAPH_KEY_REUSED);
            bx_kernel = k0;
        }
        hbg_arg ya[1] = {{&y, HBG_IN}};
        hbg_task_id id;
        fx_task(q[w], 1, ya, &id);
        hbg__orch_end_pass(q[w]);
    }
    fx_same_images(q[0], q[1]);
}

static void bx_orchs(hbg_orch **q)
{
    for (int w = 0; w < 2; w++) {
        hbg__orch_config cfg = {
            .task_window = 16, .heap_base = FAKE_HEAP_BASE, .heap_bytes = 1 << 20, .no_journal = w == 1};
        assert_int_equal(hbg__graph_orch_create(&cfg, &q[w]), HBG_OK);
    }
}

/* A body that lowers the caller's count of boundary scalars before a node
 * that uses scalar slot 1: the node is checked against the boundary as
 * passed (two scalars), with or without the memo; after it, the same. The
 * Definition and the replay keep two scalars. */
static void a_body_changing_the_boundary_struct_changes_nothing_recorded(void **state)
{
    (void)state;
    for (bx_mode = 1; bx_mode <= 3; bx_mode++) {
        hbg_orch *q[2];
        bx_orchs(q);
        for (int pass = 0; pass < 4; pass++)
            bx_pass(q, 0, false, HBG_OK);
        const hbg_def_header *h = q[0]->graph->defs[0].img;
        assert_int_equal(h->nbs, 2);
        assert_int_equal(q[0]->img.nbscalar, 2);
        /* the slot stays written (INOUT as passed): the reader after the
         * call depends on the replay */
        assert_int_equal(q[0]->graph->defs[0].sig.slot[0].dir, HBG_INOUT);
        assert_true(fx_has_edge(q[0], 0, 1));
        hbg__orch_destroy(q[0]);
        hbg__orch_destroy(q[1]);
    }
    bx_mode = 0;
}

/* A check-body capture of other content between two captures: its nodes
 * are the last capture's, so the next capture's nodes, equal to them, are
 * kept; but the image the last pass built at the same place holds the
 * capture before, and must be compared, not assumed. */
static void a_check_body_capture_between_builds(void **state)
{
    (void)state;
    hbg_orch *q[2];
    bx_orchs(q);
    bx_pass(q, 0, false, HBG_OK);
    bx_pass(q, 0, false, HBG_OK);
    bx_pass(q, 0, true, HBG_OK); /* the check-body capture records kernel 2 */
    uint64_t h0 = node_hits(q[0]);
    bx_kernel = 2;
    bx_pass(q, 0, false, HBG_OK); /* kernel 2 now: kept from the check-body capture */
    assert_int_equal(node_hits(q[0]), h0 + 1);
    bx_kernel = 1;
    hbg__orch_destroy(q[0]);
    hbg__orch_destroy(q[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_bodies_with_and_without),
        cmocka_unit_test_setup_teardown(every_node_of_the_third_capture_is_answered, ex_setup, ex_teardown),
        cmocka_unit_test_setup_teardown(a_body_that_only_reads_is_answered, ex_setup, ex_teardown),
        cmocka_unit_test_setup_teardown(a_changed_predicate_is_recorded_again, ex_setup, ex_teardown),
        cmocka_unit_test_setup_teardown(a_predicate_before_a_node_moves_its_record, ex_setup, ex_teardown),
        cmocka_unit_test_setup_teardown(another_boundary_answers_nothing, ex_setup, ex_teardown),
        cmocka_unit_test_setup_teardown(a_node_in_a_manual_scope_is_recorded_again, ex_setup, ex_teardown),
        cmocka_unit_test_setup_teardown(a_capture_after_a_refusal_answers_nothing, ex_setup, ex_teardown),
        cmocka_unit_test_setup_teardown(a_body_changing_its_boundary_records_it_as_passed, ex_setup, ex_teardown),
        cmocka_unit_test(a_body_changing_the_boundary_struct_changes_nothing_recorded),
        cmocka_unit_test(a_check_body_capture_between_builds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
