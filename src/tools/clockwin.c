/* Each process's window of plausible starts (see clockwin.h). */
#include "tools/clockwin.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/vec.h"

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Reorders a[0..n) so that a[k] is the element a sort would put there,
 * those before it no larger and those after no smaller. Quickselect with
 * a three-way partition (runs of equal starts are common: segments
 * logged at one clock reading) around the median of three elements drawn
 * at random: a log's starts come in sorted runs (the spans, then the
 * segments), which the first, middle and last elements would split badly
 * round after round. After four times the rounds that halving would need
 * (input built to defeat the draw) the rest is sorted instead, so it is
 * never quadratic. */
static uint64_t kth(uint64_t *a, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    uint64_t r = 0x9e3779b97f4a7c15ull ^ n;
    int limit = 16;
    for (size_t m = n; m; m >>= 1)
        limit += 4;
    for (int round = 0; lo < hi; round++) {
        if (round == limit) {
            qsort(a + lo, hi - lo + 1, sizeof *a, cmp_u64);
            break;
        }
        uint64_t pick[3];
        for (int j = 0; j < 3; j++) {
            r ^= r << 13, r ^= r >> 7, r ^= r << 17; /* xorshift64 */
            pick[j] = a[lo + r % (hi - lo + 1)];
        }
        uint64_t x = pick[0], y = pick[1], z = pick[2];
        uint64_t pivot = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
        /* [lo, lt) < pivot, [lt, i) == pivot, (gt, hi] > pivot; the pivot
         * is one of the elements, so gt never passes below lo */
        size_t lt = lo, i = lo, gt = hi;
        while (i <= gt) {
            uint64_t v = a[i];
            if (v < pivot) {
                a[i++] = a[lt];
                a[lt++] = v;
            } else if (v > pivot) {
                a[i] = a[gt];
                a[gt--] = v;
            } else {
                i++;
            }
        }
        if (k < lt)
            hi = lt - 1;
        else if (k > gt)
            lo = gt + 1;
        else
            return pivot;
    }
    return a[k];
}

bool cw_window(uint64_t *ts, size_t n, cw_win *w)
{
    if (!ts || n < CW_MIN_EVENTS)
        return false;
    size_t k = n / 10;
    uint64_t a = kth(ts, n, k);
    /* the upper percentile among those at or above the lower one */
    uint64_t b = kth(ts + k, n - k, n - 1 - k - k);
    uint64_t m;
    if (__builtin_mul_overflow(b - a, 3, &m))
        m = UINT64_MAX;
    if (m < CW_MIN_MARGIN_NS)
        m = CW_MIN_MARGIN_NS;
    w->p10 = a, w->p90 = b;
    w->lo = a > m ? a - m : 0;
    if (__builtin_add_overflow(b, m, &w->hi))
        w->hi = UINT64_MAX;
    return true;
}

/* A process's starts as the build counts and then samples them. */
typedef struct tally {
    size_t n;        /* its starts */
    size_t stride;   /* every stride-th is sampled ... */
    size_t seen;     /* ... counting those seen so far */
    size_t start, at, end; /* its sample's place in fill.ts: first, next, end */
} tally;

typedef struct fill {
    cw_set *S;
    tally *t;
    size_t cap;
    uint64_t *ts;
    struct cw_seen seen[CW_SEEN]; /* lookups lately, by pid % CW_SEEN: its tally + 1 */
} fill;

/* The tally of pid, made when absent; NULL when out of memory. */
static tally *tally_of(fill *f, uint64_t pid)
{
    cw_set *S = f->S;
    struct cw_seen *c = &f->seen[pid % CW_SEEN];
    if (c->valid && c->pid == pid)
        return &f->t[c->v - 1];
    const uint64_t key[1] = {pid};
    uint32_t *v = hmap_put(&S->map, key);
    if (!v)
        return NULL;
    if (!*v) {
        if (S->nwin == f->cap) {
            size_t nc = f->cap ? 2 * f->cap : 8;
            tally *t = realloc(f->t, nc * sizeof *t);
            if (!t)
                return NULL;
            f->t = t, f->cap = nc;
        }
        memset(&f->t[S->nwin], 0, sizeof f->t[0]);
        *v = (uint32_t)++S->nwin;
    }
    c->pid = pid, c->v = *v, c->valid = true;
    return &f->t[*v - 1];
}

/* Calls each(ctx, pid, inv, ts) for every start the windows are built
 * from: the host spans, then each pass's bind segments. */
static bool each_start(const ps_log *L, bool (*each)(void *, uint64_t, uint64_t, uint64_t), void *ctx)
{
    for (size_t i = 0; i < L->nspan; i++)
        if (!L->span[i].dev && !each(ctx, L->span[i].pid, L->span[i].inv, L->span[i].ts))
            return false;
    for (size_t i = 0; L->segx && i < L->npass; i++) {
        const ps_pass *p = &L->pass[i];
        if (!p->has_pid)
            continue;
        for (int s = 0; s < L->nseg; s++)
            if ((p->present >> s) & 1 && !each(ctx, p->pid, p->inv, ps_start(L, p, s)))
                return false;
    }
    return true;
}

static bool count_one(void *ctx, uint64_t pid, uint64_t inv, uint64_t ts)
{
    (void)ts, (void)inv;
    fill *f = ctx;
    tally *t = tally_of(f, pid);
    if (t)
        t->n++;
    return t != NULL;
}

static bool sample_one(void *ctx, uint64_t pid, uint64_t inv, uint64_t ts)
{
    (void)inv;
    fill *f = ctx;
    tally *t = tally_of(f, pid); /* made by count_one: never NULL */
    if (t->seen++ % t->stride == 0 && t->at < t->end)
        f->ts[t->at++] = ts;
    return true;
}

static bool build_groups(cw_set *S, const ps_log *L);

bool cw_build(cw_set *S, const ps_log *L)
{
    memset(S, 0, sizeof *S);
    hmap_init(&S->map, 1);
    fill f = {.S = S};
    bool ok = each_start(L, count_one, &f);
    /* A sample of each process's starts, evenly spaced (its spans, then
     * its segments), tells its percentiles well enough for a margin of a
     * day, without an array of every start (a large log has millions, and
     * the pages they would fault in cost more than the rest of the build). */
    size_t total = 0;
    for (size_t w = 0; ok && w < S->nwin; w++) {
        tally *t = &f.t[w];
        t->stride = (t->n + CW_SAMPLE - 1) / CW_SAMPLE;
        t->stride = t->stride ? t->stride : 1;
        t->start = t->at = total;
        total += (t->n + t->stride - 1) / t->stride;
        t->end = total;
    }
    ok = ok && (S->win = calloc(S->nwin ? S->nwin : 1, sizeof *S->win)) != NULL;
    ok = ok && (f.ts = malloc((total ? total : 1) * sizeof *f.ts)) != NULL;
    if (ok) {
        (void)each_start(L, sample_one, &f);
        for (size_t w = 0; w < S->nwin; w++)
            S->win[w].set = cw_window(f.ts + f.t[w].start, f.t[w].at - f.t[w].start, &S->win[w]);
    }
    free(f.t);
    free(f.ts);
    return ok && build_groups(S, L);
}

void cw_free(cw_set *S)
{
    hmap_free(&S->map);
    hmap_free(&S->gmap);
    for (size_t i = 0; i < S->ngrp; i++)
        free(S->grp[i].ts);
    free(S->grp);
    free(S->win);
    memset(S, 0, sizeof *S);
}

/* Whether ts lies outside pid's window. */
static bool out_of_window(cw_set *S, uint64_t pid, uint64_t ts)
{
    /* the ranks' lines interleave: a few processes' answers kept, by pid */
    struct cw_seen *c = &S->seen[pid % CW_SEEN];
    if (!c->valid || c->pid != pid) {
        const uint64_t key[1] = {pid};
        c->v = S->win ? hmap_get(&S->map, key) : 0;
        c->pid = pid;
        c->valid = true;
    }
    S->last = c->v;
    if (!S->last)
        return false;
    const cw_win *w = &S->win[S->last - 1];
    return w->set && (ts < w->lo || ts > w->hi);
}

/* A start out of its process's window may still be one of a run of its
 * own: a second run of the pid a day later, sparse beside the first. Its
 * invocation's other events then start near it, where a corrupt reading
 * stands alone. So the invocations (pid, inv) with a start out of window
 * keep their starts' clusters (starts a day or less apart), and a start
 * is far only when it is in no cluster of two or more. */
static bool suspect_one(void *ctx, uint64_t pid, uint64_t inv, uint64_t ts)
{
    cw_set *S = ctx;
    if (!out_of_window(S, pid, ts))
        return true;
    uint32_t *v = hmap_put2(&S->gmap, pid, inv);
    if (!v)
        return false;
    if (!*v) {
        if (!vec_grow((void **)&S->grp, &S->capgrp, S->ngrp + 1, sizeof *S->grp))
            return false;
        memset(&S->grp[S->ngrp], 0, sizeof S->grp[0]);
        *v = (uint32_t)++S->ngrp;
    }
    return true;
}

static bool gather_one(void *ctx, uint64_t pid, uint64_t inv, uint64_t ts)
{
    cw_set *S = ctx;
    uint32_t v = hmap_get2(&S->gmap, pid, inv);
    if (!v)
        return true;
    cw_group *g = &S->grp[v - 1];
    if (g->unjudged)
        return true;
    if (g->n == CW_GROUP_MAX) { /* no invocation has so many: keyed alike by a fault; drawn as they are */
        g->unjudged = true;
        free(g->ts);
        g->ts = NULL;
        return true;
    }
    if (!vec_grow((void **)&g->ts, &g->cap, g->n + 1, sizeof *g->ts))
        return false;
    g->ts[g->n++] = ts;
    return true;
}

/* The group's clusters of two or more, from its starts. */
static void clusters(cw_group *g)
{
    if (g->unjudged || !g->n)
        return;
    qsort(g->ts, g->n, sizeof *g->ts, cmp_u64);
    for (size_t i = 0; i < g->n;) {
        size_t j = i;
        while (j + 1 < g->n && g->ts[j + 1] - g->ts[j] <= CW_MIN_MARGIN_NS)
            j++;
        if (j > i) {
            if (g->nc == CW_MAX_CLUSTERS) { /* starts strewn over days: not judged */
                g->unjudged = true;
                break;
            }
            g->c[g->nc][0] = g->ts[i];
            g->c[g->nc][1] = g->ts[j];
            g->nc++;
        }
        i = j + 1;
    }
    free(g->ts);
    g->ts = NULL;
    g->n = g->cap = 0;
}

static bool build_groups(cw_set *S, const ps_log *L)
{
    hmap_init(&S->gmap, 2);
    if (!each_start(L, suspect_one, S))
        return false;
    if (!S->ngrp)
        return true;
    if (!each_start(L, gather_one, S))
        return false;
    for (size_t i = 0; i < S->ngrp; i++)
        clusters(&S->grp[i]);
    return true;
}

bool cw_far(cw_set *S, uint64_t pid, uint64_t inv, uint64_t ts)
{
    if (!out_of_window(S, pid, ts))
        return false;
    uint32_t v = S->ngrp ? hmap_get2(&S->gmap, pid, inv) : 0;
    if (!v) /* a record whose invocation's log events all lie in the window */
        return true;
    const cw_group *g = &S->grp[v - 1];
    if (g->unjudged)
        return false;
    /* a record is not in the clusters: a day either side of one holds it */
    for (unsigned k = 0; k < g->nc; k++)
        if (ts >= (g->c[k][0] > CW_MIN_MARGIN_NS ? g->c[k][0] - CW_MIN_MARGIN_NS : 0) &&
            ts - CW_MIN_MARGIN_NS <= g->c[k][1])
            return false;
    return true;
}

bool cw_drop(cw_set *S, uint64_t pid, uint64_t inv, uint64_t ts, const char *path, size_t line, const char *kind,
             const char *name, size_t name_n)
{
    if (!cw_far(S, pid, inv, ts))
        return false;
    cw_note *n = &S->note;
    /* the earliest of the first file named: the writers go kind by kind */
    if (!n->n++ || (path == n->path && line < n->line)) {
        const cw_win *w = &S->win[S->last - 1];
        n->path = path, n->line = line, n->pid = pid, n->inv = inv, n->ts = ts, n->p10 = w->p10, n->p90 = w->p90;
        snprintf(n->what, sizeof n->what, "%s %.*s", kind, (int)(name_n < 64 ? name_n : 64), name);
    }
    return true;
}

bool cw_drop_span(cw_set *S, const ps_span *s, uint64_t ts, const char *path)
{
    return cw_drop(S, s->pid, s->inv, ts, path, s->line, s->dev ? "device span" : "span", s->name.p, s->name.n);
}

void cw_warn(const cw_set *S, dg_list *warn)
{
    const cw_note *n = &S->note;
    if (!n->n)
        return;
    char more[64] = "";
    if (n->n > 1)
        snprintf(more, sizeof more, ", with %zu more as far", n->n - 1);
    dg_add(warn,
           "%s:%zu: %s of pid=%" PRIu64 " inv=%" PRIu64 " starts at %" PRIu64 " ns, far from that process's "
           "other events (most start in %" PRIu64 " .. %" PRIu64 " ns) and alone in its invocation: a corrupt "
           "clock reading; not drawn%s",
           n->path, n->line, n->what, n->pid, n->inv, n->ts, n->p10, n->p90, more);
}
