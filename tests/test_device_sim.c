/* The executors: the serial reference and the sim backend run the same
 * images and must both match a golden computed here, element by element.
 *
 * Every kernel folds its previous output, its inputs, its scalars, its core
 * and its block into each element with a non-commutative mix, so a missed
 * dependency, a swapped MIX order, a wrong replay binding or a predicate
 * evaluated the wrong way changes the numbers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "device/exec.h"
#include "device/sim.h"
#include "hbg/graph.h"
#include "support/fault_support.h"
#include "support/image_builder.h"

#define N 16
#define K_FAIL 7
#define K_TIMEOUT 8
#define K_NO_STATUS 9
#define K_PROBE 6

static void assert_prefix(const char *s, const char *prefix)
{
    if (strncmp(s, prefix, strlen(prefix)) != 0)
        fail_msg("\"%s\" does not start with \"%s\"", s, prefix);
}

/* ---- kernels ---------------------------------------------------------- */

static int acc_kernel(const hbg_kernel_args *a, uint32_t salt)
{
    uint32_t *out = hbg_kernel_ptr(&a->tensors[0]);
    uint32_t n = a->tensors[0].shape[0];
    for (uint32_t i = a->block; i < n; i += a->nblocks) {
        uint32_t acc = out[i] * 31u + salt;
        acc = acc * 31u + a->core;
        for (uint32_t k = 1; k < a->ntensors; k++) {
            const uint32_t *in = hbg_kernel_ptr(&a->tensors[k]);
            acc = acc * 31u + (i < a->tensors[k].shape[0] ? in[i] : 0);
        }
        for (uint32_t j = 0; j < a->nscalars; j++)
            acc = acc * 31u + (uint32_t)a->scalars[j];
        acc = acc * 31u + a->block;
        out[i] = acc;
    }
    return 0;
}

#define ACC(id)                                                                                                  \
    static int k_acc##id(const hbg_kernel_args *a)                                                               \
    {                                                                                                            \
        return acc_kernel(a, id);                                                                                \
    }
ACC(1)
ACC(2)
ACC(3)
ACC(4)
ACC(5)

/* Writes what it was given: resolved addresses, offsets and scalars. */
static int k_probe(const hbg_kernel_args *a)
{
    uint64_t *z = hbg_kernel_ptr(&a->tensors[0]);
    z[0] = a->tensors[1].addr;
    z[1] = a->tensors[1].offset;
    z[2] = a->tensors[1].nbytes;
    z[3] = a->tensors[2].addr;
    z[4] = a->tensors[2].offset;
    for (uint32_t j = 0; j < a->nscalars && j < 3; j++)
        z[5 + j] = a->scalars[j];
    return 0;
}

static int k_fail(const hbg_kernel_args *a)
{
    (void)a;
    return 5;
}

static int k_timeout(const hbg_kernel_args *a)
{
    (void)a;
    return -HBG_E_PEER_TIMEOUT;
}

/* Negative, but no negated hbg_status: a failure of the kernel's own. */
static int k_no_status(const hbg_kernel_args *a)
{
    (void)a;
    return -(int)HBG_STATUS_COUNT;
}

static hbg_kernel_table *kernels(void)
{
    hbg_kernel_table *kt;
    assert_int_equal(hbg_kernel_table_create(&kt), HBG_OK);
    assert_int_equal(hbg_kernel_register(kt, 1, "acc1", k_acc1), HBG_OK);
    assert_int_equal(hbg_kernel_register(kt, 2, "acc2", k_acc2), HBG_OK);
    assert_int_equal(hbg_kernel_register(kt, 3, "acc3", k_acc3), HBG_OK);
    assert_int_equal(hbg_kernel_register(kt, 4, "acc4", k_acc4), HBG_OK);
    assert_int_equal(hbg_kernel_register(kt, 5, "acc5", k_acc5), HBG_OK);
    assert_int_equal(hbg_kernel_register(kt, K_PROBE, "probe", k_probe), HBG_OK);
    assert_int_equal(hbg_kernel_register(kt, K_FAIL, "fail", k_fail), HBG_OK);
    assert_int_equal(hbg_kernel_register(kt, K_TIMEOUT, "timeout", k_timeout), HBG_OK);
    assert_int_equal(hbg_kernel_register(kt, K_NO_STATUS, "no_status", k_no_status), HBG_OK);
    return kt;
}

/* The golden: the same mix, written over whole arrays in program order. */
static void ref_acc(uint32_t *out, uint32_t n, const uint32_t *const *ins, const uint32_t *in_n, uint32_t nin,
                    const uint64_t *sc, uint32_t ns, uint32_t salt, uint32_t core, uint32_t nblocks)
{
    for (uint32_t i = 0; i < n; i++) {
        uint32_t acc = out[i] * 31u + salt;
        acc = acc * 31u + core;
        for (uint32_t k = 0; k < nin; k++)
            acc = acc * 31u + (i < in_n[k] ? ins[k][i] : 0);
        for (uint32_t j = 0; j < ns; j++)
            acc = acc * 31u + (uint32_t)sc[j];
        acc = acc * 31u + i % nblocks;
        out[i] = acc;
    }
}

/* ---- a world: host memory for the serial executor, or a sim device ----- */

typedef struct world {
    hbg_device *dev; /* NULL: serial executor over host memory */
    const hbg_kernel_table *kt;
    void *host[512];
    unsigned nhost;
} world;

static uint64_t w_alloc(world *w, uint64_t n)
{
    if (w->dev) {
        uint64_t a = 0;
        assert_int_equal(hbg_device_alloc(w->dev, n, &a), HBG_OK);
        return a;
    }
    assert_true(w->nhost < 512);
    void *p = aligned_alloc(64, (n + 63) & ~(uint64_t)63);
    assert_non_null(p);
    memset(p, 0, n);
    w->host[w->nhost++] = p;
    return (uint64_t)(uintptr_t)p;
}

static void w_put(world *w, uint64_t dst, const void *src, uint64_t n)
{
    if (w->dev)
        assert_int_equal(hbg_device_h2d(w->dev, dst, src, n), HBG_OK);
    else
        memcpy((void *)(uintptr_t)dst, src, n);
}

static void w_get(world *w, void *dst, uint64_t src, uint64_t n)
{
    if (w->dev)
        assert_int_equal(hbg_device_d2h(w->dev, dst, src, n), HBG_OK);
    else
        memcpy(dst, (const void *)(uintptr_t)src, n);
}

/* Copies the arena into the world and runs it; *at gets its address. */
static hbg_status w_run(world *w, const void *arena, uint64_t bytes, uint64_t *at, hbg_run_stats *st)
{
    uint64_t a = w_alloc(w, bytes);
    w_put(w, a, arena, bytes);
    if (at)
        *at = a;
    if (w->dev)
        return w->dev->ops->run(w->dev, a, bytes, w->kt, st);
    return hbg__image_run_serial((void *)(uintptr_t)a, bytes, w->kt, 0, 1, NULL, st);
}

static void w_release(world *w)
{
    for (unsigned i = 0; i < w->nhost; i++)
        free(w->host[i]);
    w->nhost = 0;
}

static uint64_t w_u32(world *w, const uint32_t *init, uint32_t n)
{
    uint64_t a = w_alloc(w, (uint64_t)n * 4);
    if (init)
        w_put(w, a, init, (uint64_t)n * 4);
    return a;
}

/* ---- the main scenario ------------------------------------------------- */

typedef struct outputs {
    uint32_t buf[7][N]; /* B C D E F G H */
    uint32_t y[3][N];
    uint64_t z[3][8];
    uint32_t flags[12];
    hbg_run_stats st;
} outputs;

typedef struct addrs {
    uint64_t x[3], xoff[3], xbytes[3], heap;
} addrs;

static const uint32_t pred_words[4] = {7, 0, 0, 0};

static void init_a(uint32_t *a)
{
    for (uint32_t i = 0; i < N; i++)
        a[i] = i * 7 + 3;
}

static void init_x1(uint32_t *x)
{
    for (uint32_t i = 0; i < N; i++)
        x[i] = 1000 + i * i;
}

static void init_xb(uint32_t *x)
{
    for (uint32_t i = 0; i < N + 2; i++)
        x[i] = 50000 + 3 * i;
}

static void init_y(uint32_t *y, unsigned r)
{
    for (uint32_t i = 0; i < N; i++)
        y[i] = r * 1000 + i;
}

/* The Definition replayed three times: boundary X (in), Y (inout), Z (probe
 * output); scalars s0, s1; a heap block of two node outputs. */
static void *build_def(uint64_t *bytes, uint64_t *hash, uint32_t x1_word1)
{
    hbg_tensor bt[3] = {ib_u32(0, N), ib_u32(0, N), ib_u32(0, 16)};
    db *d = db_new(3, bt, 2, 2 * N * 4, 42);
    uint32_t n0 = db_add_node(d, &(db_node_spec){.kind = HBG_TASK_ALLOC});
    hbg_def_targ t1[2] = {db_heap(HBG_TARG_OWN_OUT, 0, ib_u32(0, N)), db_boundary(0)};
    hbg_def_sarg s1[2] = {db_slot(0), db_static(5)};
    uint32_t n1 = db_add_node(d, &(db_node_spec){.kind = HBG_TASK_KERNEL, .core = HBG_CORE_AIV, .aiv = 1,
                                                 .blocks = 2, .fanins = &n0, .nfanin = 1, .targs = t1,
                                                 .ntarg = 2, .sargs = s1, .nsarg = 2});
    hbg_def_targ t2[2] = {db_heap(HBG_TARG_OWN_OUT, N * 4, ib_u32(0, N)), db_bview(0, 4, ib_u32(0, N - 4))};
    hbg_def_sarg s2[1] = {db_slot(1)};
    uint32_t n2 = db_add_node(d, &(db_node_spec){.kind = HBG_TASK_KERNEL, .core = HBG_CORE_AIC, .aic = 2,
                                                 .blocks = 1, .fanins = &n0, .nfanin = 1, .targs = t2,
                                                 .ntarg = 2, .sargs = s2, .nsarg = 1});
    uint32_t f3[2] = {n1, n2};
    uint32_t n3 = db_add_node(d, &(db_node_spec){.kind = HBG_TASK_DUMMY, .fanins = f3, .nfanin = 2});
    hbg_def_targ t4[3] = {db_boundary(1), db_heap(HBG_TARG_NODE_OUT, 0, ib_u32(0, N)),
                          db_heap(HBG_TARG_NODE_OUT, N * 4, ib_u32(0, N))};
    hbg_def_sarg s4[2] = {db_slot(0), db_slot(1)};
    uint32_t n4 = db_add_node(d, &(db_node_spec){.kind = HBG_TASK_KERNEL, .core = HBG_CORE_MIX, .aic = 3,
                                                 .aiv = 4, .blocks = 2, .fanins = &n3, .nfanin = 1,
                                                 .targs = t4, .ntarg = 3, .sargs = s4, .nsarg = 2});
    /* Runs unless word 1 of X's *buffer* equals X1's: off for replay 1. */
    hbg_def_pred p5;
    memset(&p5, 0, sizeof p5);
    p5.where = db_boundary(0);
    p5.byte_offset = 4;
    p5.value = x1_word1;
    p5.op = HBG_CMP_NE;
    p5.elem_size = 4;
    hbg_def_targ t5[1] = {db_boundary(1)};
    db_add_node(d, &(db_node_spec){.kind = HBG_TASK_KERNEL, .core = HBG_CORE_AIV, .aiv = 5, .blocks = 1,
                                   .fanins = &n4, .nfanin = 1, .targs = t5, .ntarg = 1, .pred = &p5});
    hbg_def_targ t6[3] = {db_boundary(2), db_bview(0, 4, ib_u32(0, N - 4)),
                          db_heap(HBG_TARG_NODE_OUT, N * 4, ib_u32(0, N))};
    hbg_def_sarg s6[3] = {db_slot(0), db_slot(1), db_static(77)};
    db_add_node(d, &(db_node_spec){.kind = HBG_TASK_KERNEL, .core = HBG_CORE_AIV, .aiv = K_PROBE, .blocks = 1,
                                   .fanins = &n0, .nfanin = 1, .targs = t6, .ntarg = 3, .sargs = s6, .nsarg = 3});
    void *img = db_build(d, bytes, hash);
    db_free(d);
    return img;
}

static void run_main(world *w, outputs *o, addrs *ad)
{
    uint32_t a[N], x1[N], xb[N + 2], y[3][N];
    init_a(a);
    init_x1(x1);
    init_xb(xb);
    uint64_t A = w_u32(w, a, N), P = w_u32(w, pred_words, 4);
    uint64_t buf[7];
    for (int i = 0; i < 7; i++)
        buf[i] = w_u32(w, NULL, N);
    uint64_t X1 = w_u32(w, x1, N), XB = w_u32(w, xb, N + 2), Y[3], Z[3];
    for (unsigned r = 0; r < 3; r++) {
        init_y(y[r], r);
        Y[r] = w_u32(w, y[r], N);
        Z[r] = w_alloc(w, 64);
    }
    uint64_t heap = w_alloc(w, 3 * 2 * N * 4);

    uint64_t dbytes, dhash;
    void *dimg = build_def(&dbytes, &dhash, x1[1]);
    uint64_t DEF = w_alloc(w, dbytes);
    w_put(w, DEF, dimg, dbytes);
    free(dimg);

    enum { B, C, D, E, F, G, H };
    ib *b = ib_new();
    uint32_t t0 = ib_add_task(b, &(ib_task_spec){.kind = HBG_TASK_ALLOC});
    hbg_tensor v1[2] = {ib_u32(buf[B], N), ib_u32(A, N)};
    uint32_t t1 = ib_add_task(b, &(ib_task_spec){.kind = HBG_TASK_KERNEL, .core = HBG_CORE_AIV, .aiv = 1,
                                                 .blocks = 4, .fanins = &t0, .nfanin = 1, .tensors = v1,
                                                 .ntensors = 2});
    hbg_tensor v2[2] = {ib_u32(buf[C], N), ib_u32(A, N)};
    uint64_t sc2[1] = {100};
    uint32_t t2 = ib_add_task(b, &(ib_task_spec){.kind = HBG_TASK_KERNEL, .core = HBG_CORE_AIC, .aic = 2,
                                                 .blocks = 3, .fanins = &t0, .nfanin = 1, .tensors = v2,
                                                 .ntensors = 2, .scalars = sc2, .nscalars = 1});
    hbg_tensor v3[3] = {ib_u32(buf[D], N), ib_u32(buf[B], N), ib_u32(buf[C], N)};
    uint32_t f3[2] = {t1, t2};
    uint32_t t3 = ib_add_task(b, &(ib_task_spec){.kind = HBG_TASK_KERNEL, .core = HBG_CORE_MIX, .aic = 3,
                                                 .aiv = 4, .blocks = 2, .fanins = f3, .nfanin = 2,
                                                 .tensors = v3, .ntensors = 3});
    uint32_t t4 = ib_add_task(b, &(ib_task_spec){.kind = HBG_TASK_DUMMY, .fanins = &t3, .nfanin = 1});
    hbg_img_pred p5 = {.addr = P, .value = 7, .op = HBG_CMP_EQ, .elem_size = 4};
    hbg_tensor v5[2] = {ib_u32(buf[E], N), ib_u32(buf[D], N)};
    uint32_t t5 = ib_add_task(b, &(ib_task_spec){.kind = HBG_TASK_KERNEL, .core = HBG_CORE_AIV, .aiv = 1,
                                                 .blocks = 1, .fanins = &t4, .nfanin = 1, .tensors = v5,
                                                 .ntensors = 2, .pred = &p5});
    hbg_img_pred p6 = {.addr = P + 4, .value = 0, .op = HBG_CMP_NE, .elem_size = 1};
    hbg_tensor v6[2] = {ib_u32(buf[F], N), ib_u32(buf[D], N)};
    uint32_t t6 = ib_add_task(b, &(ib_task_spec){.kind = HBG_TASK_KERNEL, .core = HBG_CORE_AIV, .aiv = 2,
                                                 .blocks = 2, .fanins = &t4, .nfanin = 1, .tensors = v6,
                                                 .ntensors = 2, .pred = &p6});
    hbg_tensor v7[3] = {ib_u32(buf[G], N), ib_u32(buf[E], N), ib_u32(buf[F], N)};
    uint32_t f7[2] = {t5, t6};
    uint32_t t7 = ib_add_task(b, &(ib_task_spec){.kind = HBG_TASK_KERNEL, .core = HBG_CORE_AIC, .aic = 5,
                                                 .blocks = 2, .fanins = f7, .nfanin = 2, .tensors = v7,
                                                 .ntensors = 3});
    uint32_t def = ib_add_def(b, DEF, dbytes, dhash);
    hbg_img_btensor xs[3] = {{buf[G], N * 4, 0}, {X1, N * 4, 0}, {XB, (N + 2) * 4, 2}};
    uint32_t rt[3];
    for (unsigned r = 0; r < 3; r++) {
        hbg_img_btensor bt[3] = {xs[r], {Y[r], N * 4, 0}, {Z[r], 64, 0}};
        uint64_t bs[2] = {r + 1, 10 * r + 3};
        rt[r] = ib_add_replay(b, def, bt, 3, bs, 2, heap + r * 2 * N * 4, &t7, 1);
        ad->x[r] = xs[r].addr;
        ad->xoff[r] = xs[r].offset;
        ad->xbytes[r] = xs[r].nbytes;
    }
    ad->heap = heap;
    hbg_tensor v11[4] = {ib_u32(buf[H], N), ib_u32(Y[0], N), ib_u32(Y[1], N), ib_u32(Y[2], N)};
    uint32_t t11 = ib_add_task(b, &(ib_task_spec){.kind = HBG_TASK_KERNEL, .core = HBG_CORE_AIV, .aiv = 3,
                                                  .blocks = 2, .fanins = rt, .nfanin = 3, .tensors = v11,
                                                  .ntensors = 4});
    assert_int_equal(t11, 11);

    uint64_t bytes, at;
    void *arena = ib_build(b, &bytes);
    ib_free(b);
    memset(o, 0, sizeof *o);
    assert_int_equal(w_run(w, arena, bytes, &at, &o->st), HBG_OK);
    const hbg_img_header *h = arena;
    w_get(w, o->flags, at + h->sec[HBG_SEC_FLAGS].off, sizeof o->flags);
    free(arena);
    for (int i = 0; i < 7; i++)
        w_get(w, o->buf[i], buf[i], N * 4);
    for (unsigned r = 0; r < 3; r++) {
        w_get(w, o->y[r], Y[r], N * 4);
        w_get(w, o->z[r], Z[r], 64);
    }
}

static void golden(outputs *g)
{
    memset(g, 0, sizeof *g);
    uint32_t a[N], x1[N], xb[N + 2];
    init_a(a);
    init_x1(x1);
    init_xb(xb);
    uint32_t *B = g->buf[0], *C = g->buf[1], *D = g->buf[2], *E = g->buf[3], *F = g->buf[4], *G = g->buf[5],
             *H = g->buf[6];
    const uint32_t n[4] = {N, N, N, N};
    uint64_t sc2[1] = {100};
    ref_acc(B, N, (const uint32_t *[]){a}, n, 1, NULL, 0, 1, HBG_CORE_AIV, 4);
    ref_acc(C, N, (const uint32_t *[]){a}, n, 1, sc2, 1, 2, HBG_CORE_AIC, 3);
    ref_acc(D, N, (const uint32_t *[]){B, C}, n, 2, NULL, 0, 3, HBG_CORE_AIC, 2);
    ref_acc(D, N, (const uint32_t *[]){B, C}, n, 2, NULL, 0, 4, HBG_CORE_AIV, 2);
    assert_int_equal(pred_words[0], 7);
    ref_acc(E, N, (const uint32_t *[]){D}, n, 1, NULL, 0, 1, HBG_CORE_AIV, 1);
    assert_int_equal(pred_words[1] & 0xff, 0); /* F's task is predicated off */
    ref_acc(G, N, (const uint32_t *[]){E, F}, n, 2, NULL, 0, 5, HBG_CORE_AIC, 2);
    const uint32_t *xbuf[3] = {G, x1, xb};
    const uint32_t xoff[3] = {0, 0, 2};
    for (unsigned r = 0; r < 3; r++) {
        uint32_t h0[N] = {0}, h1[N] = {0};
        uint64_t s0 = r + 1, s1 = 10 * r + 3;
        const uint32_t *x = xbuf[r] + xoff[r];
        ref_acc(h0, N, (const uint32_t *[]){x}, n, 1, (uint64_t[]){s0, 5}, 2, 1, HBG_CORE_AIV, 2);
        ref_acc(h1, N, (const uint32_t *[]){x + 4}, (const uint32_t[]){N - 4}, 1, (uint64_t[]){s1}, 1, 2,
                HBG_CORE_AIC, 1);
        init_y(g->y[r], r);
        ref_acc(g->y[r], N, (const uint32_t *[]){h0, h1}, n, 2, (uint64_t[]){s0, s1}, 2, 3, HBG_CORE_AIC, 2);
        ref_acc(g->y[r], N, (const uint32_t *[]){h0, h1}, n, 2, (uint64_t[]){s0, s1}, 2, 4, HBG_CORE_AIV, 2);
        if (xbuf[r][1] != x1[1])
            ref_acc(g->y[r], N, NULL, n, 0, NULL, 0, 5, HBG_CORE_AIV, 1);
        else
            assert_int_equal(r, 1); /* only replay 1's node 5 is predicated off */
    }
    ref_acc(H, N, (const uint32_t *[]){g->y[0], g->y[1], g->y[2]}, n, 3, NULL, 0, 3, HBG_CORE_AIV, 2);
    for (int i = 0; i < 12; i++)
        g->flags[i] = 1;
    /* Kernel tasks 1 2 3 5 7 11 and per replay nodes 1 2 4 6 (+5 twice). */
    g->st.tasks_run = 6 + 3 * 4 + 2;
    g->st.tasks_skipped = 2;
    g->st.replays = 3;
}

static void check_main(const outputs *o, const addrs *ad)
{
    outputs g;
    golden(&g);
    const char *names = "BCDEFGH";
    for (int i = 0; i < 7; i++)
        for (int e = 0; e < N; e++)
            if (o->buf[i][e] != g.buf[i][e])
                fail_msg("%c[%d] = %u, expected %u", names[i], e, o->buf[i][e], g.buf[i][e]);
    for (int i = 0; i < N; i++)
        assert_int_equal(o->buf[4][i], 0); /* the skipped kernel wrote nothing */
    for (unsigned r = 0; r < 3; r++) {
        for (int e = 0; e < N; e++)
            if (o->y[r][e] != g.y[r][e])
                fail_msg("Y%u[%d] = %u, expected %u", r, e, o->y[r][e], g.y[r][e]);
        /* BVIEW: the boundary buffer, its offset + delta 4; NODE_OUT: heap. */
        assert_int_equal(o->z[r][0], ad->x[r]);
        assert_int_equal(o->z[r][1], ad->xoff[r] + 4);
        assert_int_equal(o->z[r][2], ad->xbytes[r]);
        assert_int_equal(o->z[r][3], ad->heap + r * 2 * N * 4 + N * 4);
        assert_int_equal(o->z[r][4], 0);
        assert_int_equal(o->z[r][5], r + 1);
        assert_int_equal(o->z[r][6], 10 * r + 3);
        assert_int_equal(o->z[r][7], 77);
    }
    assert_memory_equal(o->flags, g.flags, sizeof g.flags);
    assert_int_equal(o->st.tasks_run, g.st.tasks_run);
    assert_int_equal(o->st.tasks_skipped, g.st.tasks_skipped);
    assert_int_equal(o->st.replays, g.st.replays);
}

static hbg_device *open_sim(const hbg_sim_config *cfg)
{
    hbg_device *d = NULL;
    assert_int_equal(hbg_sim_open(cfg, &d), HBG_OK);
    assert_non_null(d);
    assert_string_equal(d->ops->name, "sim");
    return d;
}

static void serial_matches_golden(void **state)
{
    (void)state;
    hbg_kernel_table *kt = kernels();
    world w = {.kt = kt};
    outputs o;
    addrs ad;
    run_main(&w, &o, &ad);
    check_main(&o, &ad);
    w_release(&w);
    hbg_kernel_table_destroy(kt);
}

static void sim_matches_serial(void **state)
{
    (void)state;
    hbg_kernel_table *kt = kernels();
    /* Several shapes of the device; each runs the image repeatedly so the
     * threads get many chances to run something too early. */
    const hbg_sim_config cfgs[] = {
        {0},
        {.aic_cores = 1, .aiv_cores = 1, .schedulers = 1},
        {.aic_cores = 4, .aiv_cores = 3, .schedulers = 3},
    };
    for (size_t c = 0; c < sizeof cfgs / sizeof cfgs[0]; c++) {
        hbg_device *d = open_sim(&cfgs[c]);
        for (int rep = 0; rep < 8; rep++) {
            world w = {.dev = d, .kt = kt};
            outputs o;
            addrs ad;
            run_main(&w, &o, &ad);
            check_main(&o, &ad);
        }
        hbg_device_close(d);
    }
    /* And the serial executor, on the same image in host memory. */
    world ws = {.kt = kt};
    outputs os;
    addrs ads;
    run_main(&ws, &os, &ads);
    check_main(&os, &ads);
    w_release(&ws);
    hbg_kernel_table_destroy(kt);
}

/* ---- failures ---------------------------------------------------------- */

/* t0: acc into B; t1: the given kernel(s); t2: acc into C after t1. */
static hbg_status run_failing(world *w, uint8_t core, uint16_t aic, uint16_t aiv, uint32_t flags[3], uint32_t bc[2][N])
{
    uint32_t a[N];
    init_a(a);
    uint64_t A = w_u32(w, a, N), B = w_u32(w, NULL, N), C = w_u32(w, NULL, N), M = w_u32(w, NULL, N);
    ib *b = ib_new();
    hbg_tensor v0[2] = {ib_u32(B, N), ib_u32(A, N)};
    uint32_t t0 = ib_add_task(b, &(ib_task_spec){.kind = HBG_TASK_KERNEL, .core = HBG_CORE_AIV, .aiv = 1,
                                                 .blocks = 2, .tensors = v0, .ntensors = 2});
    hbg_tensor v1[1] = {ib_u32(M, N)};
    uint32_t t1 = ib_add_task(b, &(ib_task_spec){.kind = HBG_TASK_KERNEL, .core = core, .aic = aic, .aiv = aiv,
                                                 .blocks = 1, .fanins = &t0, .nfanin = 1, .tensors = v1,
                                                 .ntensors = 1});
    hbg_tensor v2[2] = {ib_u32(C, N), ib_u32(A, N)};
    ib_add_task(b, &(ib_task_spec){.kind = HBG_TASK_KERNEL, .core = HBG_CORE_AIV, .aiv = 1, .blocks = 2,
                                   .fanins = &t1, .nfanin = 1, .tensors = v2, .ntensors = 2});
    uint64_t bytes, at;
    void *arena = ib_build(b, &bytes);
    ib_free(b);
    hbg_status st = w_run(w, arena, bytes, &at, NULL);
    char msg[256];
    snprintf(msg, sizeof msg, "%s", hbg__exec_last_error());
    w_get(w, flags, at + ((const hbg_img_header *)arena)->sec[HBG_SEC_FLAGS].off, 12);
    free(arena);
    w_get(w, bc[0], B, N * 4);
    w_get(w, bc[1], C, N * 4);
    uint32_t m[N];
    w_get(w, m, M, N * 4);
    if (core == HBG_CORE_MIX && aic == K_FAIL) /* the AIV part never ran */
        for (int i = 0; i < N; i++)
            assert_int_equal(m[i], 0);
    hbg__exec_set_error("%s", msg);
    return st;
}

static void check_failed(uint32_t flags[3], uint32_t bc[2][N])
{
    assert_int_equal(flags[0], 1);
    assert_int_equal(flags[1], 0);
    assert_int_equal(flags[2], 0);
    for (int i = 0; i < N; i++) {
        assert_int_not_equal(bc[0][i], 0); /* t0 ran */
        assert_int_equal(bc[1][i], 0);     /* t2 never did */
    }
}

static void failing_kernels(void **state)
{
    (void)state;
    hbg_kernel_table *kt = kernels();
    hbg_device *d = open_sim(NULL);
    world worlds[2] = {{.kt = kt}, {.dev = d, .kt = kt}};
    for (int wi = 0; wi < 2; wi++) {
        world *w = &worlds[wi];
        uint32_t flags[3], bc[2][N];
        assert_int_equal(run_failing(w, HBG_CORE_AIV, 0, K_FAIL, flags, bc), HBG_E_KERNEL);
        assert_string_equal(hbg__exec_last_error(), "task 1: kernel 7 (fail) block 0/1 on AIV returned 5 (HBG_E_KERNEL)");
        check_failed(flags, bc);
        assert_int_equal(run_failing(w, HBG_CORE_AIC, K_TIMEOUT, 0, flags, bc), HBG_E_PEER_TIMEOUT);
        assert_string_equal(hbg__exec_last_error(),
                            "task 1: kernel 8 (timeout) block 0/1 on AIC returned -18 (HBG_E_PEER_TIMEOUT)");
        check_failed(flags, bc);
        assert_int_equal(run_failing(w, HBG_CORE_MIX, K_FAIL, 1, flags, bc), HBG_E_KERNEL);
        check_failed(flags, bc);
        /* A negative value that negates no status is the kernel's own failure. */
        assert_int_equal(run_failing(w, HBG_CORE_AIV, 0, K_NO_STATUS, flags, bc), HBG_E_KERNEL);
        assert_string_equal(hbg__exec_last_error(),
                            "task 1: kernel 9 (no_status) block 0/1 on AIV returned -28 (HBG_E_KERNEL)");
        check_failed(flags, bc);
        /* A kernel id nobody registered: refused before anything runs. */
        assert_int_equal(run_failing(w, HBG_CORE_AIV, 0, 99, flags, bc), HBG_E_KERNEL);
        assert_string_equal(hbg__exec_last_error(), "image: task 1: kernel_aiv 99 is not registered");
        assert_int_equal(flags[0], 0);
        /* The device still runs the next image. */
        outputs o;
        addrs ad;
        run_main(w, &o, &ad);
        check_main(&o, &ad);
        w_release(w);
    }
    hbg_device_close(d);
    hbg_kernel_table_destroy(kt);
}

/* ---- malformed images -------------------------------------------------- */

enum corruption {
    C_NONE,
    C_MAGIC,
    C_VERSION,
    C_SECTION_OOB,
    C_ELEM,
    C_FANIN,
    C_DEF_FORWARD,
    C_DEF_SLOT,
    C_DEF_SCALAR_SLOT,
    C_REPLAY_BOUNDARY,
    C_DEF_MAGIC,
    C_DEF_HASH,
    C_CYCLE,
    C_PRED_SIZE,
    C_DEF_OUTSIDE,
    C_NODE_PRED,
    C_NODE_FAIL,
    C_BVIEW_MIN,
    C_BVIEW_PAST,
    C_FLAGS_OVER_PRED,
    C_FLAGS_OVER_HEADER
};

/* The parts of a small image, kept for byte-level corruption. */
typedef struct small_image {
    unsigned char *arena, *def;
    uint64_t bytes, dbytes, def_addr;
} small_image;

/* A small image: task 0 acc, task 1 a replay of a two-node Definition,
 * task 2 a predicated dummy. With `keep`, built but not run. */
static hbg_status run_corrupt(world *w, enum corruption c, small_image *keep)
{
    uint32_t a[N];
    init_a(a);
    uint64_t A = w_u32(w, a, N), B = w_u32(w, NULL, N), Y = w_u32(w, NULL, N);
    hbg_tensor btpl[1] = {ib_u32(0, N)};
    db *d = db_new(1, btpl, 1, N * 4, 7);
    hbg_def_targ t0[1] = {db_heap(HBG_TARG_OWN_OUT, 0, ib_u32(0, N))};
    uint32_t n0 = db_add_node(d, &(db_node_spec){.kind = HBG_TASK_KERNEL, .core = HBG_CORE_AIV, .aiv = 1,
                                                 .blocks = 1, .targs = t0, .ntarg = 1});
    hbg_def_targ t1[2] = {db_boundary(0), db_heap(HBG_TARG_NODE_OUT, 0, ib_u32(0, N))};
    hbg_def_sarg s1[1] = {db_slot(0)};
    /* A word just past the boundary buffer: only a replay can tell. */
    hbg_def_pred np;
    memset(&np, 0, sizeof np);
    np.where = db_boundary(0);
    np.byte_offset = N * 4;
    np.op = HBG_CMP_EQ;
    np.elem_size = 4;
    db_add_node(d, &(db_node_spec){.kind = HBG_TASK_KERNEL, .core = HBG_CORE_AIV,
                                   .aiv = c == C_NODE_FAIL ? K_FAIL : 2, .blocks = 1, .fanins = &n0, .nfanin = 1,
                                   .targs = t1, .ntarg = 2, .sargs = s1, .nsarg = 1,
                                   .pred = c == C_NODE_PRED ? &np : NULL});
    uint64_t dbytes, dhash;
    unsigned char *dimg = db_build(d, &dbytes, &dhash);
    db_free(d);
    hbg_def_header *dh = (hbg_def_header *)dimg;
    if (c == C_DEF_FORWARD)
        ((uint32_t *)(dimg + dh->off_fanins))[0] = 1; /* node 1 waits on itself */
    if (c == C_DEF_SLOT)
        ((hbg_def_targ *)(dimg + dh->off_targs))[1].ref = 1;
    if (c == C_DEF_SCALAR_SLOT)
        ((hbg_def_sarg *)(dimg + dh->off_sargs))[0].slot = 3;
    if (c == C_BVIEW_MIN || c == C_BVIEW_PAST) {
        /* node 1's boundary tensor as a view: INT64_MIN elements back (its
         * negation is no int64_t), or one forward of an offset at 2^64 - 1 */
        hbg_def_targ *v = &((hbg_def_targ *)(dimg + dh->off_targs))[1];
        *v = db_bview(0, c == C_BVIEW_MIN ? INT64_MIN : 1, ib_u32(0, N));
    }
    if (c == C_DEF_MAGIC)
        dh->magic = 0x12345678;
    dh->hash = db_hash(dimg, dbytes);
    dhash = c == C_DEF_HASH ? dh->hash ^ 1 : dh->hash;
    uint64_t DEF = w_alloc(w, dbytes);
    w_put(w, DEF, dimg, dbytes);
    if (keep) {
        keep->def = dimg;
        keep->dbytes = dbytes;
        keep->def_addr = DEF;
    } else {
        free(dimg);
    }

    ib *b = ib_new();
    hbg_tensor v0[2] = {ib_u32(B, N), ib_u32(A, N)};
    uint32_t k0 = ib_add_task(b, &(ib_task_spec){.kind = HBG_TASK_KERNEL, .core = HBG_CORE_AIV, .aiv = 1,
                                                 .blocks = 1, .tensors = v0, .ntensors = 2});
    uint32_t def = ib_add_def(b, c == C_DEF_OUTSIDE ? 4096 : DEF, dbytes, dhash);
    hbg_img_btensor bt[1] = {{Y, N * 4, 0}};
    uint64_t bs[1] = {9};
    ib_add_replay(b, def, bt, 1, bs, 1, w_alloc(w, N * 4), &k0, 1);
    hbg_img_pred p = {.addr = A, .value = 3, .op = HBG_CMP_EQ, .elem_size = c == C_PRED_SIZE ? 3 : 4};
    ib_add_task(b, &(ib_task_spec){.kind = HBG_TASK_DUMMY, .pred = &p});
    uint64_t bytes;
    unsigned char *arena = ib_build(b, &bytes);
    ib_free(b);
    hbg_img_header *h = (hbg_img_header *)arena;
    hbg_img_task *tasks = (hbg_img_task *)(arena + h->sec[HBG_SEC_TASKS].off);
    uint32_t *fanins = (uint32_t *)(arena + h->sec[HBG_SEC_FANINS].off);
    hbg_img_replay *rp = (hbg_img_replay *)(arena + h->sec[HBG_SEC_REPLAYS].off);
    switch (c) {
    case C_MAGIC: h->magic = 0; break;
    case C_VERSION: h->version = 2; break;
    case C_SECTION_OOB: h->sec[HBG_SEC_TENSORS].off = h->total_bytes - 8; break;
    case C_ELEM: h->sec[HBG_SEC_SCALARS].elem = 4; break;
    case C_FANIN: fanins[0] = 3; break;
    case C_REPLAY_BOUNDARY: rp[0].btensor_off = 1; break;
    case C_BVIEW_PAST:
        ((hbg_img_btensor *)(arena + h->sec[HBG_SEC_BTENSORS].off))[0].offset = UINT64_MAX;
        break;
    /* The flags a run writes over the predicate's value (task 0's flag
     * would turn 3 into 1 before task 2 reads it), or over the section
     * table. */
    case C_FLAGS_OVER_PRED:
        h->sec[HBG_SEC_FLAGS].off = h->sec[HBG_SEC_PREDS].off + 8;
        break;
    case C_FLAGS_OVER_HEADER:
        h->sec[HBG_SEC_FLAGS].off = 200;
        break;
    case C_CYCLE:
        /* task 0 waits for task 1, which shares its fanin list */
        tasks[0].fanin_off = 0;
        tasks[0].fanin_cnt = 1;
        fanins[0] = 1;
        break;
    default: break;
    }
    if (keep) {
        keep->arena = arena;
        keep->bytes = bytes;
        return HBG_OK;
    }
    hbg_status st = w_run(w, arena, bytes, NULL, NULL);
    free(arena);
    return st;
}

static void malformed_images(void **state)
{
    (void)state;
    hbg_kernel_table *kt = kernels();
    hbg_device *d = open_sim(&(hbg_sim_config){.aic_cores = 1, .aiv_cores = 2});
    world worlds[2] = {{.kt = kt}, {.dev = d, .kt = kt}};
    static const struct {
        enum corruption c;
        const char *msg;
        hbg_status st;
    } cases[] = {
        {C_MAGIC, "image: magic 0x00000000, expected 0x31474248", HBG_E_DEVICE},
        {C_VERSION, "image: version 2, expected 1", HBG_E_DEVICE},
        {C_SECTION_OOB, NULL, HBG_E_DEVICE},
        {C_ELEM, "image: section scalars: element size 4, expected 8", HBG_E_DEVICE},
        {C_FANIN, "image: task 1: fanin 0 is 3, not below ntasks 3", HBG_E_DEVICE},
        {C_DEF_FORWARD, "definition 0: node 1: fanin 0 is node 1, not an earlier node", HBG_E_DEVICE},
        {C_DEF_SLOT, "definition 0: targ 1: boundary slot 1 is not below nbt 1", HBG_E_DEVICE},
        {C_DEF_SCALAR_SLOT, "definition 0: sarg 0: boundary scalar slot 3 is not below nbs 1", HBG_E_DEVICE},
        {C_REPLAY_BOUNDARY, "image: replay 0: boundary tensors [1, +1) exceed 1", HBG_E_DEVICE},
        {C_DEF_MAGIC, "definition 0: magic 0x12345678, expected 0x46454448", HBG_E_DEVICE},
        {C_DEF_HASH, NULL, HBG_E_DEVICE},
        {C_CYCLE, "device: deadlock: 2 of 3 tasks never became ready (a fanin cycle)", HBG_E_DEVICE},
        {C_PRED_SIZE, "image: pred 0: op 0 / elem_size 3 (expected op 0..5, size 1/2/4/8)", HBG_E_DEVICE},
        {C_NODE_PRED, "replay 0 node 1: predicate word at byte 64 (+4) lies outside its 64-byte buffer", HBG_E_DEVICE},
        {C_NODE_FAIL, "task 1 node 1: kernel 7 (fail) block 0/1 on AIV returned 5 (HBG_E_KERNEL)", HBG_E_KERNEL},
        {C_BVIEW_MIN, "replay 0: boundary view of slot 0 starts 9223372036854775808 elements before its buffer",
         HBG_E_DEVICE},
        {C_FLAGS_OVER_PRED, "image: section flags [568, +3 x 4) overlaps section preds [560, +1 x 24)", HBG_E_DEVICE},
        {C_FLAGS_OVER_HEADER, "image: section flags [200, +3 x 4) overlaps the header (224 bytes)", HBG_E_DEVICE},
        {C_BVIEW_PAST, "replay 0: boundary view of slot 0: offset 18446744073709551615 + delta 1 is past 2^64 elements",
         HBG_E_DEVICE},
    };
    for (int wi = 0; wi < 2; wi++) {
        world *w = &worlds[wi];
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            hbg_status st = run_corrupt(w, cases[i].c, NULL);
            if (st != cases[i].st)
                fail_msg("%s executor, case %zu: %s (%s)", wi ? "sim" : "serial", i, hbg_status_name(st),
                         hbg__exec_last_error());
            if (cases[i].msg)
                assert_string_equal(hbg_device_last_error(), cases[i].msg);
        }
        assert_int_equal(run_corrupt(w, C_NONE, NULL), HBG_OK);
        w_release(w);
    }
    /* Only the sim knows what device memory is: a Definition outside it. */
    assert_int_equal(run_corrupt(&worlds[1], C_DEF_OUTSIDE, NULL), HBG_E_DEVICE);
    assert_prefix(hbg__exec_last_error(), "image: deftab[0]: [0x1000, +");
    assert_non_null(strstr(hbg__exec_last_error(), ") is not device memory"));
    assert_int_equal(run_corrupt(&worlds[1], C_NONE, NULL), HBG_OK);
    hbg_device_close(d);
    hbg_kernel_table_destroy(kt);
}

/* A def table entry that places the Definition over the arena's own
 * flags, which the run writes as tasks complete: refused before the
 * Definition is read (it would change under the run after validation). */
static void definition_over_flags(void **state)
{
    (void)state;
    hbg_kernel_table *kt = kernels();
    hbg_device *d = open_sim(&(hbg_sim_config){.aic_cores = 1, .aiv_cores = 1});
    world worlds[2] = {{.kt = kt}, {.dev = d, .kt = kt}};
    for (int wi = 0; wi < 2; wi++) {
        world *w = &worlds[wi];
        small_image im;
        assert_int_equal(run_corrupt(w, C_NONE, &im), HBG_OK);
        hbg_img_header *h = (hbg_img_header *)im.arena;
        hbg_img_def *tab = (hbg_img_def *)(im.arena + h->sec[HBG_SEC_DEFTAB].off);
        /* one allocation for both, so the sim finds the Definition in
         * device memory and gets as far as the overlap */
        uint64_t at = w_alloc(w, im.bytes + im.dbytes);
        uint64_t flags = at + h->sec[HBG_SEC_FLAGS].off;
        tab[0].addr = flags - 8;
        w_put(w, at, im.arena, im.bytes);
        hbg_status st = w->dev ? d->ops->run(d, at, im.bytes, kt, NULL)
                               : hbg__image_run_serial((void *)(uintptr_t)at, im.bytes, kt, 0, 1, NULL, NULL);
        assert_int_equal(st, HBG_E_DEVICE);
        char want[160];
        snprintf(want, sizeof want, "image: deftab[0]: [0x%llx, +%llu) overlaps the arena's flags [0x%llx, +12)",
                 (unsigned long long)(flags - 8), (unsigned long long)im.dbytes, (unsigned long long)flags);
        assert_string_equal(hbg_device_last_error(), want);
        free(im.arena);
        free(im.def);
        w_release(w);
    }
    hbg_device_close(d);
    hbg_kernel_table_destroy(kt);
}

/* ---- limits ------------------------------------------------------------ */

/* What one submit makes of a task or a node, and what one pass binds. */
enum over { O_TASK_FANINS, O_TASK_TENSORS, O_TASK_SCALARS, O_NODE_FANINS, O_DEF_NODES, O_DEFTAB, O_TASKS };

/* An image at the limit `what` names, or one past it: task 0 a kernel
 * task, task 1 a dummy or a replay waiting for it. The fanins past a limit
 * all name task (node) 0, as a fanin list shared by many tasks does: each
 * asks for another successor edge. */
static hbg_status run_over(world *w, enum over what, bool past)
{
    uint32_t a[N];
    init_a(a);
    uint64_t A = w_u32(w, a, N);
    uint32_t x = past, zeros[HBG_MAX_FANINS + 1] = {0};
    hbg_tensor ts[HBG_MAX_TASK_TENSORS + 1];
    for (uint32_t i = 0; i <= HBG_MAX_TASK_TENSORS; i++)
        ts[i] = ib_u32(A, N);
    uint64_t sc[HBG_MAX_TASK_SCALARS + 1] = {0};
    ib *b = ib_new();
    ib_task_spec k = {.kind = HBG_TASK_KERNEL,
                      .core = HBG_CORE_AIV,
                      .aiv = 1,
                      .blocks = 1,
                      .tensors = ts,
                      .ntensors = what == O_TASK_TENSORS ? HBG_MAX_TASK_TENSORS + x : 1,
                      .scalars = sc,
                      .nscalars = what == O_TASK_SCALARS ? HBG_MAX_TASK_SCALARS + x : 0};
    uint32_t t0 = ib_add_task(b, &k);
    if (what == O_NODE_FANINS || what == O_DEF_NODES || what == O_DEFTAB) {
        db *d = db_new(0, NULL, 0, 0, 7);
        uint32_t nodes = what == O_DEF_NODES ? HBG_MAX_DEF_NODES + x : 2;
        for (uint32_t n = 0; n < nodes; n++)
            db_add_node(d, &(db_node_spec){.kind = HBG_TASK_DUMMY,
                                           .fanins = zeros,
                                           .nfanin = what == O_NODE_FANINS && n == 1 ? HBG_MAX_FANINS + x : 0});
        uint64_t dbytes, dhash;
        void *dimg = db_build(d, &dbytes, &dhash);
        db_free(d);
        uint64_t DEF = w_alloc(w, dbytes);
        w_put(w, DEF, dimg, dbytes);
        free(dimg);
        /* every entry the same Definition: each one validated, and given
         * run state, again */
        for (uint32_t e = 0; e < (what == O_DEFTAB ? HBG_IMG_MAX_DEFS + x : 1); e++)
            ib_add_def(b, DEF, dbytes, dhash);
        ib_add_replay(b, 0, NULL, 0, NULL, 0, 0, &t0, 1);
    } else {
        ib_add_task(b, &(ib_task_spec){.kind = HBG_TASK_DUMMY,
                                       .fanins = zeros,
                                       .nfanin = what == O_TASK_FANINS ? HBG_MAX_FANINS + x : 1});
    }
    uint64_t bytes;
    unsigned char *arena = ib_build(b, &bytes);
    ib_free(b);
    if (what == O_TASKS && past) {
        /* a task window's worth of records is 700 MB: the count alone
         * is refused, before the section is */
        hbg_img_header *h = (hbg_img_header *)arena;
        h->sec[HBG_SEC_TASKS].count = h->sec[HBG_SEC_FLAGS].count = HBG_MAX_TASK_WINDOW + 1;
    }
    hbg_status st = w_run(w, arena, bytes, NULL, NULL);
    free(arena);
    return st;
}

/* Each limit is accepted and one past it refused, before anything is
 * built for the image: fanins (a list shared by any number of tasks would
 * otherwise ask for any number of successor edges), tensors and scalars,
 * the same for top-level tasks as for Definition nodes; tasks, nodes and
 * def table entries. */
static void over_limits(void **state)
{
    (void)state;
    hbg_kernel_table *kt = kernels();
    hbg_device *d = open_sim(&(hbg_sim_config){.aic_cores = 1, .aiv_cores = 1});
    world worlds[2] = {{.kt = kt}, {.dev = d, .kt = kt}};
    static const struct {
        enum over what;
        const char *msg;
    } cases[] = {
        {O_TASK_FANINS, "image: task 1: 129 fanins, past the limit of 128"},
        {O_TASK_TENSORS, "image: task 0: 33 tensors, past the limit of 32"},
        {O_TASK_SCALARS, "image: task 0: 17 scalars, past the limit of 16"},
        {O_NODE_FANINS, "definition 0: node 1: 129 fanins, past the limit of 128"},
        {O_DEF_NODES, "definition 0: 4097 nodes, past the limit of 4096"},
        {O_DEFTAB, "image: 65 def table entries, past the limit of 64"},
        {O_TASKS, "image: 16777217 tasks, past the limit of 16777216"},
    };
    for (int wi = 0; wi < 2; wi++) {
        world *w = &worlds[wi];
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            hbg_status st = run_over(w, cases[i].what, false);
            if (st != HBG_OK)
                fail_msg("%s executor, case %zu at the limit: %s (%s)", wi ? "sim" : "serial", i, hbg_status_name(st),
                         hbg__exec_last_error());
            st = run_over(w, cases[i].what, true);
            if (st != HBG_E_DEVICE)
                fail_msg("%s executor, case %zu past the limit: %s (%s)", wi ? "sim" : "serial", i, hbg_status_name(st),
                         hbg__exec_last_error());
            assert_string_equal(hbg_device_last_error(), cases[i].msg);
            w_release(w);
        }
    }
    hbg_device_close(d);
    hbg_kernel_table_destroy(kt);
}

static int k_noop(const hbg_kernel_args *a)
{
    (void)a;
    return 0;
}

/* Random byte flips in the arena and the Definition: whatever the status,
 * the sim must neither crash nor hang, and must run the intact image after.
 * Kernels here touch nothing, since tensor addresses are not checked. */
static void corrupted_bytes(void **state)
{
    (void)state;
    hbg_kernel_table *kt;
    assert_int_equal(hbg_kernel_table_create(&kt), HBG_OK);
    for (uint16_t id = 1; id <= 8; id++)
        assert_int_equal(hbg_kernel_register(kt, id, "noop", k_noop), HBG_OK);
    hbg_device *d = open_sim(&(hbg_sim_config){.aic_cores = 1, .aiv_cores = 1});
    world w = {.dev = d, .kt = kt};
    small_image im;
    assert_int_equal(run_corrupt(&w, C_NONE, &im), HBG_OK);
    unsigned char *arena = malloc(im.bytes), *def = malloc(im.dbytes);
    assert_non_null(arena);
    assert_non_null(def);
    uint64_t at = w_alloc(&w, im.bytes);
    uint32_t seed = 12345;
    unsigned failed = 0;
    for (int it = 0; it < 3000; it++) {
        memcpy(arena, im.arena, im.bytes);
        memcpy(def, im.def, im.dbytes);
        int flips = 1 + it % 4;
        for (int f = 0; f < flips; f++) {
            seed = seed * 1103515245u + 12345u;
            uint32_t r = seed >> 8;
            bool in_def = it % 3 == 2;
            uint64_t size = in_def ? im.dbytes : im.bytes;
            (in_def ? def : arena)[r % size] ^= (unsigned char)(1u << (r >> 20 & 7));
        }
        if (it % 3 == 2) {
            /* keep the hash right half the time, so checks past it run */
            if (it % 2) {
                hbg_def_header *dh = (hbg_def_header *)def;
                uint64_t hh = db_hash(def, im.dbytes);
                dh->hash = hh;
                hbg_img_header *h = (hbg_img_header *)arena;
                hbg_img_def *tab = (hbg_img_def *)(arena + h->sec[HBG_SEC_DEFTAB].off);
                tab[0].hash = hh;
            }
            w_put(&w, im.def_addr, def, im.dbytes);
        }
        w_put(&w, at, arena, im.bytes);
        hbg_status st = d->ops->run(d, at, im.bytes, kt, NULL);
        failed += st != HBG_OK;
        assert_true(st == HBG_OK || st == HBG_E_DEVICE || st == HBG_E_KERNEL || st == HBG_E_NOMEM);
        w_put(&w, im.def_addr, im.def, im.dbytes);
    }
    assert_true(failed > 1000); /* most flips land in checked fields */
    w_put(&w, at, im.arena, im.bytes);
    assert_int_equal(d->ops->run(d, at, im.bytes, kt, NULL), HBG_OK);
    free(arena);
    free(def);
    free(im.arena);
    free(im.def);
    hbg_device_close(d);
    hbg_kernel_table_destroy(kt);
}

/* ---- device memory ----------------------------------------------------- */

static void memory_limits(void **state)
{
    (void)state;
    hbg_kernel_table *kt = kernels();
    hbg_device *d = open_sim(&(hbg_sim_config){.mem_limit = 1 << 20});
    uint64_t a = 0, b = 0, c = 0;
    assert_int_equal(hbg_device_alloc(d, 1 << 19, &a), HBG_OK);
    assert_int_equal(hbg_device_alloc(d, (1 << 19) + 1, &b), HBG_E_DEVICE_ALLOC);
    assert_int_equal(hbg_device_alloc(d, 1 << 19, &b), HBG_OK);
    assert_int_equal(hbg_device_alloc(d, 1, &c), HBG_E_DEVICE_ALLOC);
    assert_int_equal(hbg_device_alloc(d, 0, &c), HBG_E_INVAL);
    /* a size past any address space is a size the device has not: a
     * refusal like any other, not a bad argument */
    assert_int_equal(hbg_device_alloc(d, UINT64_MAX, &c), HBG_E_DEVICE_ALLOC);
    assert_string_equal(hbg_device_last_error(), "sim: cannot allocate 18446744073709551615 bytes of device memory "
                                                 "(more than the address space holds)");
    unsigned char buf[256] = {1, 2, 3};
    hbg_device_free(d, b);
    assert_int_equal(hbg_device_h2d(d, b, buf, 1), HBG_E_INVAL); /* freed */
    hbg_device_free(d, 12345); /* unknown: ignored */
    hbg_device_free(d, a + 8); /* not an allocation's start: ignored */
    assert_int_equal(hbg_device_alloc(d, 4096, &c), HBG_OK);

    assert_int_equal(hbg_device_h2d(d, c + 3840, buf, 256), HBG_OK);
    assert_int_equal(hbg_device_h2d(d, c + 3841, buf, 256), HBG_E_INVAL);
    assert_prefix(hbg__exec_last_error(), "sim: h2d of 256 bytes at 0x");
    assert_non_null(strstr(hbg__exec_last_error(), ": not inside one device allocation"));
    assert_int_equal(hbg_device_d2h(d, buf, c + 4000, 200), HBG_E_INVAL);
    assert_int_equal(hbg_device_d2h(d, buf, 12345, 1), HBG_E_INVAL);
    assert_int_equal(hbg_device_d2h(d, buf, c + 3840, 256), HBG_OK);
    assert_int_equal(buf[2], 3);
    /* A run needs its arena in device memory too. */
    assert_int_equal(d->ops->run(d, (uint64_t)(uintptr_t)buf, sizeof buf, kt, NULL), HBG_E_INVAL);
    hbg_device_close(d);

    /* Without a limit, a 2 GiB GM heap is address space, not memory. */
    d = open_sim(NULL);
    assert_int_equal(hbg_device_alloc(d, 2ull << 30, &a), HBG_OK);
    assert_int_equal(hbg_device_h2d(d, a + (2ull << 30) - 1, buf, 1), HBG_OK);
    assert_int_equal(hbg_device_h2d(d, a + (2ull << 30) - 1, buf, 2), HBG_E_INVAL);
    hbg_device_free(d, a);
    hbg_device_close(d);
    hbg_kernel_table_destroy(kt);
}

/* Allocates bytes at an address the host had free a moment before: one
 * the device gave and took back. The host may map something there in
 * between (the sim's threads, a sanitizer's allocator: seen under ASan),
 * so another such address is tried then. */
static uint64_t alloc_at_a_free_address(hbg_device *d, uint64_t bytes)
{
    for (int i = 0; i < 32; i++) {
        uint64_t at;
        assert_int_equal(hbg_device_alloc(d, bytes, &at), HBG_OK);
        hbg_device_free(d, at);
        if (hbg__sim_alloc_at(d, at, bytes) == HBG_OK)
            return at;
    }
    fail_msg("no address the device gave back could be mapped again in 32 tries: %s", hbg_device_last_error());
    return 0;
}

/* An allocation at a fixed address (fuzz_sim's inputs name absolute
 * device addresses) is an allocation like any other, and one over a
 * mapping already there is refused, not placed elsewhere. */
static void memory_at_an_address(void **state)
{
    (void)state;
    hbg_device *d = open_sim(&(hbg_sim_config){.mem_limit = 1 << 16});
    uint64_t at = alloc_at_a_free_address(d, 100);
    unsigned char buf[100] = {7};
    assert_int_equal(hbg_device_h2d(d, at, buf, 100), HBG_OK);
    assert_int_equal(hbg_device_h2d(d, at + 1, buf, 100), HBG_E_INVAL);
    assert_int_equal(hbg__sim_alloc_at(d, at, 4096), HBG_E_DEVICE_ALLOC);
    char want[128];
    snprintf(want, sizeof want, "sim: the host refused to map 4096 bytes of device memory at 0x%llx",
             (unsigned long long)at);
    assert_string_equal(hbg_device_last_error(), want);
    assert_int_equal(hbg__sim_alloc_at(d, at + 8192, 1 << 16), HBG_E_DEVICE_ALLOC); /* the limit */
    assert_string_equal(hbg_device_last_error(),
                        "sim: allocating 65536 bytes would exceed the device memory limit (100 of 65536 in use)");
    hbg_device_free(d, at);
    assert_int_equal(hbg_device_h2d(d, at, buf, 1), HBG_E_INVAL);
    /* the freed bytes count no more: the whole limit can be had again */
    alloc_at_a_free_address(d, 1 << 16);
    hbg_device_close(d);
}

/* ---- run state ---------------------------------------------------------- */

/* What a run of many replays gave, from the child that ran it. */
typedef struct replays_out {
    hbg_status st;
    hbg_run_stats rs;
    uint32_t unset; /* flags still 0 */
    char msg[256];
} replays_out;

/* The process's address space now, in bytes. */
static uint64_t vm_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    if (f) {
        if (fscanf(f, "%lu", &pages) != 1)
            pages = 0;
        fclose(f);
    }
    return (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* Task 0, a kernel task of kernel `first`, then `nrep` REPLAY tasks after
 * it of one Definition of HBG_MAX_DEF_NODES nodes: node 0 a kernel node
 * (noop), every other a DUMMY after it. Run on a fresh sim whose address
 * space may grow by `headroom` bytes once the image is on it (0: no
 * limit). No cmocka here: this runs in a child. */
static void run_replays(uint32_t nrep, uint16_t first, uint64_t headroom, replays_out *o)
{
    hbg_kernel_table *kt = kernels();
    hbg_kernel_register(kt, 10, "noop", k_noop);
    hbg_device *d = NULL;
    /* no bound on steps: the memory is what is measured */
    hbg_sim_open(&(hbg_sim_config){.aic_cores = 1, .aiv_cores = 1, .max_steps = UINT64_MAX}, &d);
    db *df = db_new(0, NULL, 0, 0, 7);
    uint32_t zero = 0;
    db_add_node(df, &(db_node_spec){.kind = HBG_TASK_KERNEL, .core = HBG_CORE_AIV, .aiv = 10, .blocks = 1});
    for (uint32_t n = 1; n < HBG_MAX_DEF_NODES; n++)
        db_add_node(df, &(db_node_spec){.kind = HBG_TASK_DUMMY, .fanins = &zero, .nfanin = 1});
    uint64_t dbytes, dhash, DEF, at;
    void *dimg = db_build(df, &dbytes, &dhash);
    db_free(df);
    hbg_device_alloc(d, dbytes, &DEF);
    hbg_device_h2d(d, DEF, dimg, dbytes);
    free(dimg);
    ib *b = ib_new();
    uint32_t t0 =
        ib_add_task(b, &(ib_task_spec){.kind = HBG_TASK_KERNEL, .core = HBG_CORE_AIV, .aiv = first, .blocks = 1});
    ib_add_def(b, DEF, dbytes, dhash);
    for (uint32_t r = 0; r < nrep; r++)
        ib_add_replay(b, 0, NULL, 0, NULL, 0, 0, &t0, 1);
    uint64_t bytes;
    unsigned char *arena = ib_build(b, &bytes);
    ib_free(b);
    hbg_device_alloc(d, bytes, &at);
    hbg_device_h2d(d, at, arena, bytes);
    if (headroom) {
        uint64_t lim = vm_bytes() + headroom;
        setrlimit(RLIMIT_AS, &(struct rlimit){lim, lim});
    }
    o->st = d->ops->run(d, at, bytes, kt, &o->rs);
    snprintf(o->msg, sizeof o->msg, "%s", o->st ? hbg_device_last_error() : "");
    const hbg_img_header *h = (const hbg_img_header *)arena;
    uint32_t *flags = malloc((size_t)(nrep + 1) * sizeof *flags);
    hbg_device_d2h(d, flags, at + h->sec[HBG_SEC_FLAGS].off, (uint64_t)(nrep + 1) * sizeof *flags);
    for (uint32_t t = 0; t <= nrep; t++)
        o->unset += flags[t] == 0;
    free(flags);
    free(arena);
    hbg_device_close(d);
    hbg_kernel_table_destroy(kt);
}

/* run_replays in a child, whose limit on address space then stays there. */
static void run_replays_child(uint32_t nrep, uint16_t first, uint64_t headroom, replays_out *o)
{
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fd[0]);
        replays_out r = {.st = HBG_E_STATE};
        run_replays(nrep, first, headroom, &r);
        _exit(write(fd[1], &r, sizeof r) == (ssize_t)sizeof r ? 0 : 1);
    }
    close(fd[1]);
    memset(o, 0, sizeof *o);
    size_t got = 0;
    for (ssize_t n; got < sizeof *o && (n = read(fd[0], (char *)o + got, sizeof *o - got)) > 0;)
        got += (size_t)n;
    close(fd[0]);
    int ws = 0;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    assert_int_equal(got, sizeof *o);
}

/* A few MB of REPLAY tasks of a 4096-node Definition name some 2^27
 * replayed nodes. The run state is the tasks plus a window of nodes of
 * the replays under way, not every node up front: the same image asked
 * for 1.4 GB for each of its ready and done lists before, and a run
 * under a limit of 512 MB more address space failed with HBG_E_NOMEM.
 * Here task 0 fails, so the replays never start and the run is quick;
 * then 48 replays (three times the window) run in full under the limit. */
static void replays_run_in_a_window(void **state)
{
    (void)state;
    uint64_t headroom = fs_asan() ? 0 : (uint64_t)512 << 20; /* ASan reserves terabytes */
    replays_out o;
    run_replays_child(44000, K_FAIL, headroom, &o);
    assert_int_equal(o.st, HBG_E_KERNEL);
    assert_string_equal(o.msg, "task 0: kernel 7 (fail) block 0/1 on AIV returned 5 (HBG_E_KERNEL)");
    assert_int_equal(o.unset, 44001);

    run_replays_child(48, 10, headroom, &o);
    if (o.st)
        fail_msg("%s: %s", hbg_status_name(o.st), o.msg);
    assert_int_equal(o.rs.replays, 48);
    assert_int_equal(o.rs.tasks_run, 1 + 48);
    assert_int_equal(o.unset, 0);
}

/* Task 0 a kernel task of `blocks0` blocks, then a REPLAY task after it
 * of a Definition of `nodes` kernel nodes of `blocks` blocks and a DUMMY
 * node: 1 + 1 + nodes * blocks + 1 steps past blocks0. */
static hbg_status run_steps(hbg_device *d, const hbg_kernel_table *kt, uint32_t blocks0, uint32_t nodes,
                            uint32_t blocks, hbg_run_stats *rs)
{
    world w = {.dev = d, .kt = kt};
    db *df = db_new(0, NULL, 0, 0, 7);
    for (uint32_t n = 0; n < nodes; n++)
        db_add_node(
            df, &(db_node_spec){.kind = HBG_TASK_KERNEL, .core = HBG_CORE_MIX, .aic = 10, .aiv = 10, .blocks = blocks});
    db_add_node(df, &(db_node_spec){.kind = HBG_TASK_DUMMY});
    uint64_t dbytes, dhash;
    void *dimg = db_build(df, &dbytes, &dhash);
    db_free(df);
    uint64_t DEF = w_alloc(&w, dbytes);
    w_put(&w, DEF, dimg, dbytes);
    free(dimg);
    ib *b = ib_new();
    uint32_t t0 =
        ib_add_task(b, &(ib_task_spec){.kind = HBG_TASK_KERNEL, .core = HBG_CORE_AIV, .aiv = 10, .blocks = blocks0});
    ib_add_def(b, DEF, dbytes, dhash);
    ib_add_replay(b, 0, NULL, 0, NULL, 0, 0, &t0, 1);
    uint64_t bytes;
    unsigned char *arena = ib_build(b, &bytes);
    ib_free(b);
    hbg_status st = w_run(&w, arena, bytes, NULL, rs);
    free(arena);
    return st;
}

/* Blocks and replays multiply: a Definition of 4096 nodes of 65536
 * blocks is 2^28 kernel calls a replay, from an image of some 200 KB;
 * 256 such nodes are just past the default limit.
 * The work of a run is counted before it runs, and past max_steps it is
 * refused: before, nothing bounded it and the sim ran for days. */
static void work_is_bounded(void **state)
{
    (void)state;
    hbg_kernel_table *kt;
    assert_int_equal(hbg_kernel_table_create(&kt), HBG_OK);
    assert_int_equal(hbg_kernel_register(kt, 10, "noop", k_noop), HBG_OK);
    /* 40 + (1 + 3 * 16 + 1) = 90 steps */
    hbg_device *d = open_sim(&(hbg_sim_config){.aic_cores = 1, .aiv_cores = 1, .max_steps = 90});
    hbg_run_stats rs;
    assert_int_equal(run_steps(d, kt, 40, 3, 16, &rs), HBG_OK);
    assert_int_equal(rs.tasks_run, 1 + 3);
    assert_int_equal(run_steps(d, kt, 41, 3, 16, &rs), HBG_E_DEVICE);
    assert_string_equal(hbg_device_last_error(), "sim: the image asks for 91 steps (tasks, replayed nodes and kernel "
                                                 "blocks), past the limit of 90 (hbg_sim_config.max_steps)");
    assert_int_equal(rs.tasks_run, 0);
    hbg_device_close(d);

    d = open_sim(NULL);
    assert_int_equal(run_steps(d, kt, 1, 256, HBG_MAX_BLOCKS, &rs), HBG_E_DEVICE);
    assert_string_equal(hbg_device_last_error(), "sim: the image asks for 16777219 steps (tasks, replayed nodes and "
                                                 "kernel blocks), past the limit of 16777216 "
                                                 "(hbg_sim_config.max_steps)");
    hbg_device_close(d);
    hbg_kernel_table_destroy(kt);
}

/* `ntasks` independent AIV tasks of one block: all ready at once, so the
 * scheduler queues a job for each before the first is done. */
static void run_wide(hbg_device *d, const hbg_kernel_table *kt, uint32_t ntasks)
{
    world w = {.dev = d, .kt = kt};
    ib *b = ib_new();
    for (uint32_t t = 0; t < ntasks; t++)
        ib_add_task(b, &(ib_task_spec){.kind = HBG_TASK_KERNEL, .core = HBG_CORE_AIV, .aiv = 10, .blocks = 1});
    uint64_t bytes, at;
    unsigned char *arena = ib_build(b, &bytes);
    ib_free(b);
    hbg_run_stats rs;
    assert_int_equal(w_run(&w, arena, bytes, &at, &rs), HBG_OK);
    assert_int_equal(rs.tasks_run, ntasks);
    hbg_device_free(d, at);
    free(arena);
}

/* The jobs a run queues are kept for the next runs, up to a cap: a wide
 * run frees the rest as they finish instead of holding its peak until
 * the device is closed (3 x the cap here; 2^24 tasks would have kept
 * some 800 MB). Runs within the cap reuse what they find. */
static void spare_jobs_are_bounded(void **state)
{
    (void)state;
    hbg_kernel_table *kt;
    assert_int_equal(hbg_kernel_table_create(&kt), HBG_OK);
    assert_int_equal(hbg_kernel_register(kt, 10, "noop", k_noop), HBG_OK);
    hbg_device *d = open_sim(&(hbg_sim_config){.aic_cores = 1, .aiv_cores = 1});
    assert_int_equal(hbg__sim_spare_jobs(d), 0);
    run_wide(d, kt, 16);
    assert_int_equal(hbg__sim_spare_jobs(d), 16);
    run_wide(d, kt, 16); /* the same 16 again, none made */
    assert_int_equal(hbg__sim_spare_jobs(d), 16);
    run_wide(d, kt, 3 * HBG__SIM_SPARE_JOBS);
    assert_int_equal(hbg__sim_spare_jobs(d), HBG__SIM_SPARE_JOBS);
    run_wide(d, kt, 16);
    assert_int_equal(hbg__sim_spare_jobs(d), HBG__SIM_SPARE_JOBS);
    run_wide(d, kt, 3 * HBG__SIM_SPARE_JOBS);
    assert_int_equal(hbg__sim_spare_jobs(d), HBG__SIM_SPARE_JOBS);
    hbg_device_close(d);
    hbg_kernel_table_destroy(kt);
}

static void open_refusals(void **state)
{
    (void)state;
    hbg_device *d = NULL;
    assert_int_equal(hbg_sim_open(&(hbg_sim_config){.rank = 2, .nranks = 2}, &d), HBG_E_INVAL);
    assert_null(d);
    assert_string_equal(hbg_device_last_error(), "sim: rank 2 is not below nranks 2");
    /* a NULL out is said so, not left to the words of the refusal before */
    assert_int_equal(hbg_sim_open(NULL, NULL), HBG_E_INVAL);
    assert_string_equal(hbg_device_last_error(), "sim: nowhere to put the device (out is NULL)");
    d = open_sim(&(hbg_sim_config){.rank = 1, .nranks = 2});
    assert_int_equal(d->rank, 1);
    assert_int_equal(d->nranks, 2);
    hbg_device_close(d);
    hbg_device_close(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(serial_matches_golden), cmocka_unit_test(sim_matches_serial),
        cmocka_unit_test(failing_kernels),       cmocka_unit_test(malformed_images),
        cmocka_unit_test(definition_over_flags), cmocka_unit_test(over_limits),
        cmocka_unit_test(corrupted_bytes),       cmocka_unit_test(memory_limits),
        cmocka_unit_test(open_refusals),         cmocka_unit_test(replays_run_in_a_window),
        cmocka_unit_test(work_is_bounded),       cmocka_unit_test(spare_jobs_are_bounded),
        cmocka_unit_test(memory_at_an_address),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
