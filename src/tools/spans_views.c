/* The tpot, tree and rounds views of a grouped log (spans.h).
 *
 * tpot and tree share one accumulator: nodes keyed by (parent, name), each
 * collecting one value per invocation that has it (the sum of its
 * occurrences there). tpot keys every span by its name alone; tree keys
 * each span under the node of its parent, found from depth. */
#include "tools/spans.h"
#include "tools/hmap.h"
#include "util/hash.h"
#include "util/vec.h"

#include <stdlib.h>
#include <string.h>

const char *const sp_col_names[SP_NCOL] = {"host", "device", "effective", "orch", "sched"};

#define NONE SIZE_MAX

typedef struct i64vec {
    int64_t *v;
    size_t n, cap;
} i64vec;

typedef struct anode {
    lx_slice name;
    bool dev;
    uint32_t level;
    uint32_t depth;         /* depth= of its first span */
    size_t parent, first_child, last_child, next;
    size_t nkids;
    __int128 cur, rcur;     /* this invocation's sums: duration, untimed remainder
                               (exact: clamped to int64 once, at its end) */
    uint32_t line, rline;   /* the span that last took each out of int64 */
    size_t stamp, rstamp;   /* the invocation they belong to, + 1 */
    i64vec val, rem;
} anode;

typedef struct atab {
    anode *n;
    size_t nn, cap;
    size_t first_root, last_root, nroots;
    hmap by_name;           /* (parent + 1, hash of name) -> node + 1: every node */
    size_t stamp;
    size_t *touched;
    size_t ntouched, captouched;
    sp_sat_note sat;
    bool oom;
} atab;

/* Sums are kept exact in 128 bits (each span is under 2^62 ns, so no
 * count of them a log can hold reaches 2^127) and clamped to int64 once,
 * when the sum is done: a sum clamped on the way and then added to would
 * be neither the clamp nor the sum. */
static bool out_of_int64(__int128 v)
{
    return v > INT64_MAX || v < INT64_MIN;
}

/* v as an int64, clamped; noted (with the line of the span that took it
 * out) when it had to be. */
static int64_t clamp(__int128 v, sp_sat_note *n, uint32_t line)
{
    if (!out_of_int64(v))
        return (int64_t)v;
    if (!n->n++ || line < n->line) /* the earliest in the log */
        n->line = line;
    return v < 0 ? INT64_MIN : INT64_MAX;
}

static bool push(i64vec *v, int64_t x)
{
    if (!vec_grow((void **)&v->v, &v->cap, v->n + 1, sizeof *v->v))
        return false;
    v->v[v->n++] = x;
    return true;
}

typedef struct named {
    const atab *T;
    lx_slice name;
} named;

static bool is_named(void *ctx, uint32_t v)
{
    const named *w = ctx;
    return lx_slice_same(w->T->n[v - 1].name, w->name);
}

/* The child of parent (NONE: a root) named name, made when absent. A
 * node's few children are looked at in turn; past eight, by hash (a span
 * name per task, tens of thousands under one node, made it a scan per
 * span). Every node is in the map, so either way finds it. */
static size_t child(atab *T, size_t parent, const ps_span *s)
{
    lx_slice name = s->name;
    size_t nk = parent == NONE ? T->nroots : T->n[parent].nkids;
    if (nk <= 8)
        for (size_t k = parent == NONE ? T->first_root : T->n[parent].first_child; k != NONE; k = T->n[k].next)
            if (lx_slice_same(T->n[k].name, name))
                return k;
    /* hashed only here: a name found in turn costs no hash */
    named want = {T, name};
    const uint64_t key[2] = {parent + 1, hbg__hash64(name.p, name.n)};
    uint32_t *v = hmap_put_eq(&T->by_name, key, is_named, &want);
    if (nk > 8 && v && *v)
        return *v - 1;
    if (!v || T->nn >= UINT32_MAX || !vec_grow((void **)&T->n, &T->cap, T->nn + 1, sizeof *T->n)) {
        T->oom = true;
        return NONE;
    }
    anode *a = &T->n[T->nn];
    memset(a, 0, sizeof *a);
    a->name = name;
    a->dev = s->dev;
    a->depth = s->depth;
    a->parent = parent;
    a->level = parent == NONE ? 0 : T->n[parent].level + 1;
    a->first_child = a->last_child = a->next = NONE;
    size_t *last = parent == NONE ? &T->last_root : &T->n[parent].last_child;
    size_t *first = parent == NONE ? &T->first_root : &T->n[parent].first_child;
    if (*last == NONE)
        *first = T->nn;
    else
        T->n[*last].next = T->nn;
    *last = T->nn;
    if (parent == NONE)
        T->nroots++;
    else
        T->n[parent].nkids++;
    *v = (uint32_t)(T->nn + 1);
    return T->nn++;
}

static void touch(atab *T, size_t k)
{
    if (T->n[k].stamp == T->stamp || T->n[k].rstamp == T->stamp)
        return;
    if (!vec_grow((void **)&T->touched, &T->captouched, T->ntouched + 1, sizeof *T->touched)) {
        T->oom = true;
        return;
    }
    T->touched[T->ntouched++] = k;
}

/* Adds x, from the span at line, to this invocation's sum (the
 * duration's, or with rem the untimed remainder's) of node k. */
static void add(atab *T, size_t k, __int128 x, bool rem, uint32_t line)
{
    touch(T, k);
    anode *a = &T->n[k];
    size_t *stamp = rem ? &a->rstamp : &a->stamp;
    __int128 *cur = rem ? &a->rcur : &a->cur;
    if (*stamp != T->stamp) {
        *stamp = T->stamp;
        *cur = 0;
    }
    bool was = out_of_int64(*cur);
    *cur += x;
    if (!was && out_of_int64(*cur))
        *(rem ? &a->rline : &a->line) = line;
}

/* The end of an invocation: each node it touched gets one value. */
static void flush(atab *T)
{
    for (size_t i = 0; i < T->ntouched; i++) {
        anode *a = &T->n[T->touched[i]];
        if (a->stamp == T->stamp && !push(&a->val, clamp(a->cur, &T->sat, a->line)))
            T->oom = true;
        if (a->rstamp == T->stamp && !push(&a->rem, clamp(a->rcur, &T->sat, a->rline)))
            T->oom = true;
    }
    T->ntouched = 0;
    T->stamp++;
}

static void atab_init(atab *T)
{
    memset(T, 0, sizeof *T);
    T->first_root = T->last_root = NONE;
    T->stamp = 1;
    hmap_init(&T->by_name, 2);
}

static void atab_free(atab *T)
{
    for (size_t i = 0; i < T->nn; i++) {
        free(T->n[i].val.v);
        free(T->n[i].rem.v);
    }
    free(T->n);
    free(T->touched);
    hmap_free(&T->by_name);
}

/* --- tpot ---------------------------------------------------------------- */

static int cmp_stage(const void *a, const void *b)
{
    const sp_stage *x = a, *y = b;
    size_t n = x->name.n < y->name.n ? x->name.n : y->name.n;
    int c = memcmp(x->name.p, y->name.p, n);
    return c ? c : (x->name.n > y->name.n) - (x->name.n < y->name.n);
}

hbg_status sp_tpot(const sp_set *S, size_t c, sp_stage **out, size_t *n, sp_sat_note *sat)
{
    const ps_log *L = S->L;
    const sp_callable *cl = &S->call[c];
    atab T;
    atab_init(&T);
    for (size_t i = 0; i < cl->ninv && !T.oom; i++) {
        const sp_inv *x = &S->inv[cl->inv[i]];
        for (size_t k = 0; k < x->n && !T.oom; k++) {
            const ps_span *s = &L->span[S->idx[x->first + k]];
            size_t nd = child(&T, NONE, s);
            if (nd != NONE)
                add(&T, nd, (int64_t)s->dur, false, s->line);
        }
        flush(&T);
    }
    *sat = T.sat;
    sp_stage *st = T.oom ? NULL : calloc(T.nn ? T.nn : 1, sizeof *st);
    if (!st) {
        atab_free(&T);
        return HBG_E_NOMEM;
    }
    for (size_t k = 0; k < T.nn; k++) {
        st[k].name = T.n[k].name;
        st[k].dev = T.n[k].dev;
        st[k].depth = T.n[k].depth;
        sp_stat_of(T.n[k].val.v, T.n[k].val.n, &st[k].st);
    }
    qsort(st, T.nn, sizeof *st, cmp_stage);
    *out = st;
    *n = T.nn;
    atab_free(&T);
    return HBG_OK;
}

/* --- tree ---------------------------------------------------------------- */

typedef struct inst {
    size_t span;
    size_t first_child, next;
} inst;

typedef struct tree_work {
    inst *in;
    size_t nin, capin;
    size_t *stack;          /* instances waiting for their parent */
    size_t nstack, capstack;
    size_t *walk;           /* pairs (instance, merged parent) */
    size_t nwalk, capwalk;
    sp_tree_notes notes;
} tree_work;

static bool wpush(size_t **v, size_t *n, size_t *cap, size_t x)
{
    if (!vec_grow((void **)v, cap, *n + 1, sizeof **v))
        return false;
    (*v)[(*n)++] = x;
    return true;
}

/* The instance tree of one invocation from depth, in written order: a span
 * at depth d adopts the waiting spans deeper than d written since its last
 * sibling (they ended inside it). Returns the roots as a list through
 * w->in[..].next, first root in *root. */
static bool build_instances(const sp_set *S, const sp_inv *x, tree_work *w, size_t *root)
{
    const ps_log *L = S->L;
    w->nin = w->nstack = 0;
    for (size_t k = 0; k < x->n; k++) {
        size_t si = S->idx[x->first + k];
        uint32_t d = L->span[si].depth;
        if (!vec_grow((void **)&w->in, &w->capin, w->nin + 1, sizeof *w->in))
            return false;
        size_t me = w->nin++;
        w->in[me] = (inst){si, NONE, NONE};
        /* children come off the stack last-written first: link them in front */
        while (w->nstack && L->span[w->in[w->stack[w->nstack - 1]].span].depth > d) {
            size_t ch = w->stack[--w->nstack];
            if (L->span[w->in[ch].span].depth != d + 1)
                w->notes.orphans++;
            w->in[ch].next = w->in[me].first_child;
            w->in[me].first_child = ch;
        }
        if (!wpush(&w->stack, &w->nstack, &w->capstack, me))
            return false;
    }
    *root = NONE;
    for (size_t i = w->nstack; i-- > 0;) {
        size_t r = w->stack[i];
        if (L->span[w->in[r].span].depth != 0)
            w->notes.orphans++;
        w->in[r].next = *root;
        *root = r;
    }
    return true;
}

/* The pairs (x, tag) pushed from v[base] on, reversed: a stack then
 * visits a list in its own order. */
static void rev_pairs(size_t *v, size_t base, size_t end)
{
    for (size_t a = base, b = end - 2; a < b; a += 2, b -= 2) {
        size_t t0 = v[a], t1 = v[a + 1];
        v[a] = v[b];
        v[a + 1] = v[b + 1];
        v[b] = t0;
        v[b + 1] = t1;
    }
}

/* Pushes the instances of a list, each tagged with parent, so that the
 * first is popped first. */
static bool push_list(tree_work *w, size_t first, size_t parent)
{
    size_t base = w->nwalk;
    for (size_t c = first; c != NONE; c = w->in[c].next)
        if (!wpush(&w->walk, &w->nwalk, &w->capwalk, c) || !wpush(&w->walk, &w->nwalk, &w->capwalk, parent))
            return false;
    if (w->nwalk > base)
        rev_pairs(w->walk, base, w->nwalk);
    return true;
}

/* Walks one invocation's instances top-down into the merged tree. */
static bool merge_instances(const sp_set *S, atab *T, tree_work *w, size_t root)
{
    const ps_log *L = S->L;
    w->nwalk = 0;
    if (!push_list(w, root, NONE))
        return false;
    while (w->nwalk) {
        size_t parent = w->walk[--w->nwalk];
        size_t i = w->walk[--w->nwalk];
        const ps_span *s = &L->span[w->in[i].span];
        size_t nd = child(T, parent, s);
        if (nd == NONE)
            return false;
        add(T, nd, (int64_t)s->dur, false, s->line);
        if (w->in[i].first_child == NONE)
            continue;
        /* what the node did outside its instrumented children */
        __int128 rem = s->dur;
        uint32_t out_line = s->line; /* the child that took rem out of int64 */
        for (size_t c = w->in[i].first_child; c != NONE; c = w->in[c].next) {
            const ps_span *k = &L->span[w->in[c].span];
            bool was = out_of_int64(rem);
            rem -= k->dur;
            if (!was && out_of_int64(rem))
                out_line = k->line;
            /* spans below LX_DUR_LIMIT_NS: ts + dur stays in 64 bits
             * unless ts is itself absurd, which then counts too */
            if (!s->dev && !k->dev && (k->ts < s->ts || k->ts + k->dur < k->ts || k->ts + k->dur > s->ts + s->dur) &&
                (!w->notes.outside++ || k->line < w->notes.outside_line)) /* the earliest in the log */
                w->notes.outside_line = k->line;
        }
        add(T, nd, rem, true, out_of_int64(rem) ? out_line : s->line);
        if (!push_list(w, w->in[i].first_child, nd))
            return false;
    }
    return true;
}

/* The merged tree in depth-first order, each node's untimed row after its
 * children. The stack holds pairs (node, row of its parent); an untimed
 * row is queued as its node with the top bit set. */
#define UNTIMED ((size_t)1 << (sizeof(size_t) * 8 - 1))

static bool push_nodes(const atab *T, size_t first, size_t prow, size_t **stk, size_t *ns, size_t *cs)
{
    size_t base = *ns;
    for (size_t c = first; c != NONE; c = T->n[c].next)
        if (!wpush(stk, ns, cs, c) || !wpush(stk, ns, cs, prow))
            return false;
    if (*ns > base)
        rev_pairs(*stk, base, *ns);
    return true;
}

static bool emit_rows(atab *T, sp_node **rows, size_t *n, size_t *cap)
{
    size_t *stk = NULL, ns = 0, cs = 0;
    bool ok = push_nodes(T, T->first_root, NONE, &stk, &ns, &cs);
    while (ok && ns) {
        size_t prow = stk[--ns];
        size_t k = stk[--ns];
        if (!vec_grow((void **)rows, cap, *n + 1, sizeof **rows)) {
            ok = false;
            break;
        }
        sp_node *o = &(*rows)[*n];
        memset(o, 0, sizeof *o);
        o->parent = prow;
        anode *a = &T->n[k & ~UNTIMED];
        if (k & UNTIMED) {
            o->untimed = true;
            o->depth = a->level + 1;
            sp_stat_of(a->rem.v, a->rem.n, &o->st);
            (*n)++;
            continue;
        }
        o->name = a->name;
        o->dev = a->dev;
        o->depth = a->level;
        sp_stat_of(a->val.v, a->val.n, &o->st);
        size_t me = (*n)++;
        if (a->rem.n)
            ok = wpush(&stk, &ns, &cs, k | UNTIMED) && wpush(&stk, &ns, &cs, me);
        ok = ok && push_nodes(T, a->first_child, me, &stk, &ns, &cs);
    }
    free(stk);
    return ok;
}

hbg_status sp_tree(const sp_set *S, size_t c, sp_node **out, size_t *n, sp_tree_notes *notes)
{
    const sp_callable *cl = &S->call[c];
    atab T;
    atab_init(&T);
    tree_work w;
    memset(&w, 0, sizeof w);
    bool ok = true;
    for (size_t i = 0; ok && i < cl->ninv; i++) {
        size_t root;
        ok = build_instances(S, &S->inv[cl->inv[i]], &w, &root) && merge_instances(S, &T, &w, root);
        flush(&T);
        ok = ok && !T.oom;
    }
    sp_node *rows = NULL;
    size_t nrows = 0, cap = 0;
    ok = ok && emit_rows(&T, &rows, &nrows, &cap);
    *notes = w.notes;
    notes->sat = T.sat;
    free(w.in);
    free(w.stack);
    free(w.walk);
    atab_free(&T);
    if (!ok) {
        free(rows);
        return HBG_E_NOMEM;
    }
    *out = rows;
    *n = nrows;
    return HBG_OK;
}

/* --- rounds -------------------------------------------------------------- */

/* The invocation's chip.run span: its first depth-0 host span of that
 * name, NONE when it has none. Not its root as such: a depth-0 span of
 * another name written first (a step of its own around the run) would
 * give the round that step's time for the run's, and its start. */
static size_t run_span(const sp_set *S, const sp_inv *x)
{
    if (x->root != NONE && lx_slice_eq(S->L->span[x->root].name, "chip.run"))
        return x->root;
    for (size_t k = 0; k < x->n; k++) {
        const ps_span *s = &S->L->span[S->idx[x->first + k]];
        if (s->depth == 0 && !s->dev && lx_slice_eq(s->name, "chip.run"))
            return S->idx[x->first + k];
    }
    return NONE;
}

static void round_values(const sp_set *S, const sp_inv *x, sp_round *r)
{
    const ps_log *L = S->L;
    uint64_t e0 = UINT64_MAX, e1 = 0;
    size_t run = run_span(S, x);
    if (run != NONE) {
        const ps_span *s = &L->span[run];
        r->has |= 1u << SP_HOST;
        r->val[SP_HOST] = (int64_t)s->dur;
        int w = sp_wall_at(L, x->pid, s->line, s->ts, &r->wall);
        r->has_wall = w == SP_WALL_OK;
        r->wall_range = w == SP_WALL_RANGE;
        r->wall_far = w == SP_WALL_FAR;
        r->wall_corrupt = w == SP_WALL_CORRUPT;
    }
    for (size_t k = 0; k < x->n; k++) {
        const ps_span *s = &L->span[S->idx[x->first + k]];
        int col;
        if (lx_slice_eq(s->name, "chip.run.runner_run.device_wall"))
            col = SP_DEVICE;
        else if (lx_slice_eq(s->name, "chip.run.runner_run.device_wall.orch"))
            col = SP_ORCH;
        else if (lx_slice_eq(s->name, "chip.run.runner_run.device_wall.sched"))
            col = SP_SCHED;
        else
            continue;
        if (!(r->has & (1u << col)))
            r->val[col] = 0;
        r->has |= 1u << col;
        /* durations only add: a sum that passes INT64_MAX stays there */
        if (__builtin_add_overflow(r->val[col], (int64_t)s->dur, &r->val[col])) {
            r->val[col] = INT64_MAX;
            r->saturated = true;
        }
        if (col != SP_DEVICE) {
            /* effective: the union window of orch and sched on the device clock */
            uint64_t end = s->ts + s->dur < s->ts ? UINT64_MAX : s->ts + s->dur;
            if (s->ts < e0)
                e0 = s->ts;
            if (end > e1)
                e1 = end;
        }
    }
    if (e0 != UINT64_MAX) {
        /* a window past the int64 range (device clocks 2^63 ns apart: a
         * corrupt log) is clamped and said, as a column's sum is; it was
         * left out without a word */
        r->has |= 1u << SP_EFFECTIVE;
        r->val[SP_EFFECTIVE] = e1 - e0 <= INT64_MAX ? (int64_t)(e1 - e0) : INT64_MAX;
        r->saturated |= e1 - e0 > INT64_MAX;
    }
}

hbg_status sp_rounds(const sp_set *S, size_t c, sp_round **rows, size_t *n, unsigned *cols, sp_stat sum[SP_NCOL])
{
    const sp_callable *cl = &S->call[c];
    sp_round *r = calloc(cl->ninv ? cl->ninv : 1, sizeof *r);
    int64_t *col = malloc((cl->ninv ? cl->ninv : 1) * sizeof *col);
    if (!r || !col) {
        free(r);
        free(col);
        return HBG_E_NOMEM;
    }
    *cols = 0;
    uint32_t round = 0;
    for (size_t i = 0; i < cl->ninv; i++) {
        const sp_inv *x = &S->inv[cl->inv[i]];
        bool first = !i || S->inv[cl->inv[i - 1]].rank != x->rank;
        round = first ? 1 : round + 1;
        r[i].inv = cl->inv[i];
        r[i].round = round;
        r[i].cold = first;
        round_values(S, x, &r[i]);
        *cols |= r[i].has;
    }
    for (int k = 0; k < SP_NCOL; k++) {
        size_t m = 0;
        for (size_t i = 0; i < cl->ninv; i++)
            if (!r[i].cold && (r[i].has & (1u << k)))
                col[m++] = r[i].val[k];
        sp_stat_of(col, m, &sum[k]);
    }
    free(col);
    *rows = r;
    *n = cl->ninv;
    return HBG_OK;
}
