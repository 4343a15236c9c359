/* Atoms: the coarsest cut of each buffer that no view splits.
 *
 * Every element of a buffer gets a signature, a hash of the list of views
 * (argument indices, in stream order) that touch it; elements with one
 * signature are one atom. Two views then share an atom exactly when they
 * share an element, which is what a peer needs to infer the edges of two
 * overlapping views: StarPU gets a handle per atom, OpenMP an address per
 * atom. Signatures are kept per granule, the smallest element size any view
 * of the buffer uses.
 */
#include <stdlib.h>
#include <string.h>

#include "peers.h"

static uint64_t mix(uint64_t x)
{
    x ^= x >> 31;
    x *= 0x7fb5d329728ea185ull;
    x ^= x >> 27;
    x *= 0x81dadef4bc2dd44dull;
    x ^= x >> 33;
    return x;
}

typedef void (*granule_fn)(void *ctx, uint64_t g);

/* Calls fn for every granule the view's elements cover. */
static void each_granule(const hbg_tensor *t, unsigned gran, granule_fn fn, void *ctx)
{
    unsigned esz = hbg_dtype_size((hbg_dtype)t->dtype);
    unsigned nd = t->ndim ? t->ndim : 1;
    uint32_t shape[HBG_MAX_DIMS], idx[HBG_MAX_DIMS] = {0};
    int64_t stride[HBG_MAX_DIMS];
    for (unsigned d = 0; d < nd; d++) {
        shape[d] = t->ndim ? t->shape[d] : 1;
        stride[d] = t->ndim ? t->strides[d] : 1;
        if (shape[d] == 0)
            return;
    }
    for (;;) {
        int64_t e = (int64_t)t->offset;
        for (unsigned d = 0; d < nd; d++)
            e += (int64_t)idx[d] * stride[d];
        uint64_t b = (uint64_t)e * esz;
        for (uint64_t g = b / gran; g < (b + esz) / gran; g++)
            fn(ctx, g);
        unsigned d = nd;
        while (d > 0 && ++idx[d - 1] == shape[d - 1])
            idx[--d] = 0;
        if (d == 0)
            return;
    }
}

typedef struct sig_ctx {
    uint64_t *sig;
    uint64_t tag;
} sig_ctx;

static void add_sig(void *vc, uint64_t g)
{
    sig_ctx *c = vc;
    c->sig[g] = mix(c->sig[g] ^ c->tag);
}

/* The atoms of one view, each listed once. */
typedef struct list_ctx {
    const uint32_t *atom_of;
    uint32_t *stamp, cur;
    uint32_t *out, n;
} list_ctx;

static void add_atom(void *vc, uint64_t g)
{
    list_ctx *c = vc;
    uint32_t a = c->atom_of[g];
    if (c->stamp[a] != c->cur) {
        c->stamp[a] = c->cur;
        c->out[c->n++] = a;
    }
}

typedef struct ref {
    uint64_t addr;
    uint32_t arg;
} ref;

static int by_addr(const void *a, const void *b)
{
    const ref *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    return x->arg < y->arg ? -1 : x->arg > y->arg;
}

/* Open addressing, signature -> atom id, for one buffer. */
typedef struct sigmap {
    uint64_t *key;
    uint32_t *val;
    uint64_t mask;
} sigmap;

static uint32_t sigmap_get(sigmap *m, uint64_t k, uint32_t *next)
{
    uint64_t i = mix(k) & m->mask;
    while (m->val[i] != UINT32_MAX && m->key[i] != k)
        i = (i + 1) & m->mask;
    if (m->val[i] == UINT32_MAX) {
        m->key[i] = k;
        m->val[i] = (*next)++;
    }
    return m->val[i];
}

/* Cuts one buffer (refs r[0..n)) into atoms; fills each argument's atom
 * list (aoff/acnt into *list, which grows). */
static hbg_status cut_buffer(const peers_stream *s, const ref *r, uint32_t n, uint32_t *natoms, uint32_t **list,
                             uint64_t *nlist, uint64_t *caplist, uint32_t **stamp, uint32_t *capstamp,
                             uint64_t *aoff, uint32_t *acnt)
{
    unsigned gran = 8;
    uint64_t size = 0;
    for (uint32_t i = 0; i < n; i++) {
        const hbg_tensor *t = &s->args[r[i].arg].t;
        unsigned esz = hbg_dtype_size((hbg_dtype)t->dtype);
        uint64_t lo, hi;
        if (!esz || !hbg_tensor_byte_range(t, &lo, &hi))
            return HBG_E_INVAL;
        gran = esz < gran ? esz : gran;
        size = hi > size ? hi : size;
    }
    uint64_t ng = size / gran + 1;
    uint64_t *sig = calloc(ng, sizeof *sig);
    uint32_t *atom_of = malloc(ng * sizeof *atom_of);
    sigmap m = {0};
    uint64_t slots = 16;
    while (slots < 2 * ng)
        slots *= 2;
    m.mask = slots - 1;
    m.key = malloc(slots * sizeof *m.key);
    m.val = malloc(slots * sizeof *m.val);
    hbg_status st = sig && atom_of && m.key && m.val ? HBG_OK : HBG_E_NOMEM;
    if (!st) {
        memset(m.val, 0xff, slots * sizeof *m.val);
        for (uint32_t i = 0; i < n; i++) {
            sig_ctx c = {sig, mix(r[i].arg + 1u)};
            each_granule(&s->args[r[i].arg].t, gran, add_sig, &c);
        }
        for (uint64_t g = 0; g < ng; g++)
            atom_of[g] = sig[g] ? sigmap_get(&m, sig[g], natoms) : UINT32_MAX;
        if (*natoms > *capstamp) {
            uint32_t *q = realloc(*stamp, (size_t)*natoms * 2 * sizeof *q);
            if (!q) {
                st = HBG_E_NOMEM;
            } else {
                memset(q + *capstamp, 0, ((size_t)*natoms * 2 - *capstamp) * sizeof *q);
                *stamp = q;
                *capstamp = *natoms * 2;
            }
        }
    }
    static uint32_t cur;
    for (uint32_t i = 0; i < n && !st; i++) {
        /* at most one atom per granule of the view's range */
        uint64_t lo, hi;
        hbg_tensor_byte_range(&s->args[r[i].arg].t, &lo, &hi);
        uint64_t room = (hi - lo) / gran + 1;
        if (*nlist + room > *caplist) {
            uint64_t c2 = *caplist ? *caplist : 4096;
            while (c2 < *nlist + room)
                c2 *= 2;
            uint32_t *q = realloc(*list, c2 * sizeof *q);
            if (!q) {
                st = HBG_E_NOMEM;
                break;
            }
            *list = q;
            *caplist = c2;
        }
        list_ctx c = {atom_of, *stamp, ++cur, *list + *nlist, 0};
        each_granule(&s->args[r[i].arg].t, gran, add_atom, &c);
        aoff[r[i].arg] = *nlist;
        acnt[r[i].arg] = c.n;
        *nlist += c.n;
    }
    free(sig);
    free(atom_of);
    free(m.key);
    free(m.val);
    return st;
}

static uint8_t mode_of(uint8_t dir)
{
    switch (dir) {
    case HBG_IN: case PEERS_PRED: return PEERS_R;
    case HBG_OUT: case HBG_OUT_ALLOC: return PEERS_W;
    case HBG_INOUT: return PEERS_RW;
    default: return 0; /* HBG_NO_DEP: not tracked */
    }
}

/* Each peer task's accesses: its arguments' atoms, one access per atom
 * with the modes of all its arguments on that atom merged. */
static hbg_status fill_accesses(peers_stream *s, const uint32_t *list, const uint64_t *aoff, const uint32_t *acnt,
                                uint32_t *slot_of)
{
    uint64_t total = 0;
    for (uint32_t p = 0; p < s->npeer; p++) {
        const peers_task *t = &s->tasks[s->task_of[p]];
        for (uint32_t i = 0; i < t->nargs; i++)
            total += mode_of(s->args[t->arg_off + i].dir) ? acnt[t->arg_off + i] : 0;
    }
    s->acc = malloc((total + 1) * sizeof *s->acc);
    s->acc_off = malloc(((size_t)s->npeer + 1) * sizeof *s->acc_off);
    s->acc_cnt = malloc(((size_t)s->npeer + 1) * sizeof *s->acc_cnt);
    if (!s->acc || !s->acc_off || !s->acc_cnt)
        return HBG_E_NOMEM;
    s->nacc = 0;
    for (uint32_t p = 0; p < s->npeer; p++) {
        const peers_task *t = &s->tasks[s->task_of[p]];
        s->acc_off[p] = s->nacc;
        for (uint32_t i = 0; i < t->nargs; i++) {
            uint8_t mode = mode_of(s->args[t->arg_off + i].dir);
            for (uint32_t k = 0; mode && k < acnt[t->arg_off + i]; k++) {
                uint32_t a = list[aoff[t->arg_off + i] + k];
                uint32_t j = slot_of[a];
                if (j >= s->acc_off[p] && j < s->nacc && s->acc[j].atom == a) {
                    s->acc[j].mode |= mode;
                } else {
                    slot_of[a] = s->nacc;
                    s->acc[s->nacc++] = (peers_acc){.atom = a, .mode = mode};
                }
            }
        }
        s->acc_cnt[p] = s->nacc - s->acc_off[p];
    }
    return HBG_OK;
}

/* Explicit deps as peer indices (a dep on an allocation orders nothing:
 * it is complete before the pass runs). */
static hbg_status fill_deps(peers_stream *s)
{
    s->pdeps = malloc(((size_t)s->ndeps + 1) * sizeof *s->pdeps);
    s->pdep_off = malloc(((size_t)s->npeer + 1) * sizeof *s->pdep_off);
    s->pdep_cnt = malloc(((size_t)s->npeer + 1) * sizeof *s->pdep_cnt);
    if (!s->pdeps || !s->pdep_off || !s->pdep_cnt)
        return HBG_E_NOMEM;
    uint32_t n = 0;
    for (uint32_t p = 0; p < s->npeer; p++) {
        const peers_task *t = &s->tasks[s->task_of[p]];
        s->pdep_off[p] = n;
        for (uint32_t i = 0; i < t->ndeps; i++) {
            uint32_t q = s->peer_of[s->deps[t->dep_off + i]];
            if (q != UINT32_MAX)
                s->pdeps[n++] = q;
        }
        s->pdep_cnt[p] = n - s->pdep_off[p];
    }
    return HBG_OK;
}

hbg_status peers_atoms(peers_stream *s)
{
    uint32_t nref = 0;
    ref *r = malloc(((size_t)s->nargs + 1) * sizeof *r);
    uint64_t *aoff = calloc((size_t)s->nargs + 1, sizeof *aoff);
    uint32_t *acnt = calloc((size_t)s->nargs + 1, sizeof *acnt);
    uint32_t *list = NULL, *stamp = NULL, capstamp = 0;
    uint64_t nlist = 0, caplist = 0;
    hbg_status st = r && aoff && acnt ? HBG_OK : HBG_E_NOMEM;
    for (uint32_t p = 0; p < s->npeer && !st; p++) {
        const peers_task *t = &s->tasks[s->task_of[p]];
        for (uint32_t i = 0; i < t->nargs; i++)
            if (mode_of(s->args[t->arg_off + i].dir))
                r[nref++] = (ref){s->args[t->arg_off + i].t.addr, t->arg_off + i};
    }
    if (!st)
        qsort(r, nref, sizeof *r, by_addr);
    s->natoms = 0;
    for (uint32_t i = 0; i < nref && !st;) {
        uint32_t j = i;
        while (j < nref && r[j].addr == r[i].addr)
            j++;
        st = cut_buffer(s, r + i, j - i, &s->natoms, &list, &nlist, &caplist, &stamp, &capstamp, aoff, acnt);
        i = j;
    }
    uint32_t *slot_of = NULL;
    if (!st) {
        slot_of = malloc(((size_t)s->natoms + 1) * sizeof *slot_of);
        st = slot_of ? HBG_OK : HBG_E_NOMEM;
        if (!st) {
            memset(slot_of, 0xff, ((size_t)s->natoms + 1) * sizeof *slot_of);
            st = fill_accesses(s, list, aoff, acnt, slot_of);
        }
    }
    if (!st)
        st = fill_deps(s);
    free(slot_of);
    free(r);
    free(aoff);
    free(acnt);
    free(list);
    free(stamp);
    return st;
}

void peers_widest(const peers_stream *s, uint32_t *maxacc, uint32_t *maxdeps)
{
    *maxacc = *maxdeps = 1;
    for (uint32_t i = 0; i < s->npeer; i++) {
        *maxacc = s->acc_cnt[i] > *maxacc ? s->acc_cnt[i] : *maxacc;
        *maxdeps = s->pdep_cnt[i] > *maxdeps ? s->pdep_cnt[i] : *maxdeps;
    }
}
