/* Reference trackers: the edges each rule infers from the flat stream,
 * computed plainly (lists and linear scans), to check what each system
 * built against (see peers.h for the two rules). */
#include <stdlib.h>
#include <string.h>

#include "orch/tensormap.h"
#include "peers.h"

/* The edge list under construction, one node at a time. */
typedef struct builder {
    peers_edges *e;
    uint32_t cap;
    uint32_t *stamp; /* per node: the node whose preds list it, + 1 */
    uint32_t node;
} builder;

static bool add_edge(builder *b, uint32_t from, uint8_t kind)
{
    peers_edges *e = b->e;
    if (from == b->node || b->stamp[from] == b->node + 1)
        return true;
    if (e->total >= b->cap) {
        uint32_t c = b->cap ? b->cap * 2 : 4096;
        uint32_t *p = realloc(e->pred, (size_t)c * sizeof *p);
        uint8_t *k = p ? realloc(e->kind, c) : NULL;
        if (p)
            e->pred = p;
        if (!k)
            return false;
        e->kind = k;
        b->cap = c;
    }
    b->stamp[from] = b->node + 1;
    e->kind[e->total] = kind;
    e->pred[e->total++] = from;
    e->cnt[b->node]++;
    e->by_kind[kind]++;
    return true;
}

static hbg_status builder_init(builder *b, peers_edges *e, uint32_t n)
{
    memset(e, 0, sizeof *e);
    memset(b, 0, sizeof *b);
    b->e = e;
    e->n = n;
    e->off = calloc((size_t)n + 1, sizeof *e->off);
    e->cnt = calloc((size_t)n + 1, sizeof *e->cnt);
    b->stamp = calloc((size_t)n + 1, sizeof *b->stamp);
    return e->off && e->cnt && b->stamp ? HBG_OK : HBG_E_NOMEM;
}

void peers_edges_free(peers_edges *e)
{
    free(e->off);
    free(e->cnt);
    free(e->pred);
    free(e->kind);
    memset(e, 0, sizeof *e);
}

/* ---- hbg's rule --------------------------------------------------------- */

typedef struct writer {
    const hbg_tensor *view;
    uint64_t lo, hi;
    uint32_t task;
} writer;

typedef struct wbuf {
    uint64_t addr;
    writer *w;
    uint32_t n, cap;
} wbuf;

typedef struct wmap {
    wbuf *b;
    uint32_t n, cap;
} wmap;

static wbuf *find(wmap *m, uint64_t addr, bool make)
{
    for (uint32_t i = 0; i < m->n; i++)
        if (m->b[i].addr == addr)
            return &m->b[i];
    if (!make)
        return NULL;
    if (!peers_grow((void **)&m->b, &m->cap, m->n + 1, sizeof *m->b))
        return NULL;
    m->b[m->n] = (wbuf){.addr = addr};
    return &m->b[m->n++];
}

static bool hbg_reads(wmap *m, builder *b, const hbg_tensor *t)
{
    uint64_t lo, hi;
    wbuf *w = find(m, t->addr, false);
    if (!w || !hbg_tensor_byte_range(t, &lo, &hi))
        return true;
    for (uint32_t i = 0; i < w->n; i++)
        if (hbg__views_overlap(t, lo, hi, w->w[i].view, w->w[i].lo, w->w[i].hi) &&
            !add_edge(b, w->w[i].task, PEERS_EDGE_RAW))
            return false;
    return true;
}

static bool hbg_writes(wmap *m, const hbg_tensor *t, uint8_t dir, uint32_t task)
{
    uint64_t lo, hi;
    if (!hbg_tensor_byte_range(t, &lo, &hi) || hi <= lo)
        return true;
    wbuf *w = find(m, t->addr, true);
    if (!w)
        return false;
    if (dir != HBG_OUT_ALLOC) {
        uint32_t k = 0;
        for (uint32_t i = 0; i < w->n; i++)
            if (!hbg__view_covers(t, lo, hi, w->w[i].view, w->w[i].lo, w->w[i].hi))
                w->w[k++] = w->w[i];
        w->n = k;
    }
    if (!peers_grow((void **)&w->w, &w->cap, w->n + 1, sizeof *w->w))
        return false;
    w->w[w->n++] = (writer){t, lo, hi, task};
    return true;
}

static hbg_status hbg_rule(const peers_stream *s, builder *b)
{
    wmap m = {0};
    bool ok = true;
    for (uint32_t i = 0; i < s->ntasks && ok; i++) {
        const peers_task *t = &s->tasks[i];
        b->node = i;
        b->e->off[i] = (uint32_t)b->e->total;
        if (t->kind == PEERS_ALLOC)
            continue; /* its buffers are not registered */
        for (uint32_t k = 0; k < t->ndeps && ok; k++)
            ok = add_edge(b, s->deps[t->dep_off + k], PEERS_EDGE_EXPLICIT);
        for (uint32_t k = 0; k < t->nargs && ok && !t->manual; k++) {
            const peers_arg *a = &s->args[t->arg_off + k];
            if (a->dir != HBG_OUT_ALLOC && a->dir != HBG_NO_DEP)
                ok = hbg_reads(&m, b, &a->t);
        }
        for (uint32_t k = 0; k < t->nargs && ok; k++) {
            const peers_arg *a = &s->args[t->arg_off + k];
            if (a->dir == HBG_OUT_ALLOC || a->dir == HBG_INOUT || a->dir == HBG_OUT)
                ok = hbg_writes(&m, &a->t, a->dir, i);
        }
    }
    for (uint32_t i = 0; i < m.n; i++)
        free(m.b[i].w);
    free(m.b);
    return ok ? HBG_OK : HBG_E_NOMEM;
}

/* ---- sequential consistency per atom ------------------------------------ */

typedef struct reader {
    uint32_t task, next;
} reader;

static hbg_status seq_rule(const peers_stream *s, builder *b)
{
    uint32_t *last = malloc(((size_t)s->natoms + 1) * sizeof *last);
    uint32_t *head = malloc(((size_t)s->natoms + 1) * sizeof *head);
    reader *rd = malloc(((size_t)s->nacc + 1) * sizeof *rd);
    uint32_t nrd = 0;
    bool ok = last && head && rd;
    if (ok) {
        memset(last, 0xff, ((size_t)s->natoms + 1) * sizeof *last);
        memset(head, 0xff, ((size_t)s->natoms + 1) * sizeof *head);
    }
    for (uint32_t p = 0; p < s->npeer && ok; p++) {
        b->node = p;
        b->e->off[p] = (uint32_t)b->e->total;
        const peers_acc *acc = s->acc + s->acc_off[p];
        for (uint32_t k = 0; k < s->acc_cnt[p] && ok; k++) {
            uint32_t a = acc[k].atom;
            if (acc[k].mode == PEERS_R) {
                if (last[a] != UINT32_MAX)
                    ok = add_edge(b, last[a], PEERS_EDGE_RAW);
                continue;
            }
            if (head[a] != UINT32_MAX) {
                for (uint32_t r = head[a]; r != UINT32_MAX && ok; r = rd[r].next)
                    ok = add_edge(b, rd[r].task, PEERS_EDGE_WAR);
            } else if (last[a] != UINT32_MAX) {
                ok = add_edge(b, last[a], acc[k].mode == PEERS_RW ? PEERS_EDGE_RAW : PEERS_EDGE_WAW);
            }
        }
        for (uint32_t k = 0; k < s->pdep_cnt[p] && ok; k++)
            ok = add_edge(b, s->pdeps[s->pdep_off[p] + k], PEERS_EDGE_EXPLICIT);
        /* The task's own accesses take effect after its deps are known. */
        for (uint32_t k = 0; k < s->acc_cnt[p] && ok; k++) {
            uint32_t a = acc[k].atom;
            if (acc[k].mode == PEERS_R) {
                rd[nrd] = (reader){p, head[a]};
                head[a] = nrd++;
            } else {
                last[a] = p;
                head[a] = UINT32_MAX;
            }
        }
    }
    free(last);
    free(head);
    free(rd);
    return ok ? HBG_OK : HBG_E_NOMEM;
}

hbg_status peers_ref_edges(const peers_stream *s, int rule, peers_edges *e)
{
    builder b;
    uint32_t n = rule == PEERS_RULE_HBG ? s->ntasks : s->npeer;
    hbg_status st = builder_init(&b, e, n);
    if (!st)
        st = rule == PEERS_RULE_HBG ? hbg_rule(s, &b) : seq_rule(s, &b);
    free(b.stamp);
    if (st)
        peers_edges_free(e);
    return st;
}

void peers_ref_compare(const peers_stream *s, const peers_edges *hbg, const peers_edges *seq, peers_cmp *out)
{
    memset(out, 0, sizeof *out);
    uint32_t *mark = calloc((size_t)s->npeer + 1, sizeof *mark);
    uint8_t *kind = calloc((size_t)s->npeer + 1, 1);
    if (!mark || !kind) {
        free(mark);
        free(kind);
        return;
    }
    for (uint32_t p = 0; p < s->npeer; p++) {
        uint32_t t = s->task_of[p];
        for (uint32_t k = 0; k < seq->cnt[p]; k++) {
            mark[seq->pred[seq->off[p] + k]] = p + 1;
            kind[seq->pred[seq->off[p] + k]] = seq->kind[seq->off[p] + k];
        }
        uint64_t common = 0;
        for (uint32_t k = 0; k < hbg->cnt[t]; k++) {
            uint32_t q = s->peer_of[hbg->pred[hbg->off[t] + k]];
            if (q == UINT32_MAX)
                continue;
            if (mark[q] == p + 1) {
                common++;
                mark[q] = 0; /* counted */
            } else {
                out->only_hbg++;
            }
        }
        out->both += common;
        for (uint32_t k = 0; k < seq->cnt[p]; k++) {
            uint32_t q = seq->pred[seq->off[p] + k];
            if (mark[q] == p + 1) {
                out->only_seq++;
                out->only_seq_war += kind[q] == PEERS_EDGE_WAR;
            }
        }
    }
    free(mark);
    free(kind);
}
