/* Each process's window of plausible starts (see clockwin.h). */
#include "tools/clockwin.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    uint64_t last_pid;   /* events come in runs of one process: its window + 1 (0: none) */
    uint32_t last;
} fill;

/* The tally of pid, made when absent; NULL when out of memory. */
static tally *tally_of(fill *f, uint64_t pid)
{
    cw_set *S = f->S;
    if (f->last && f->last_pid == pid)
        return &f->t[f->last - 1];
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
    f->last_pid = pid;
    f->last = *v;
    return &f->t[*v - 1];
}

/* Calls each(f, pid, ts) for every start the windows are built from. */
static bool each_start(const ps_log *L, bool (*each)(fill *, uint64_t, uint64_t), fill *f)
{
    for (size_t i = 0; i < L->nspan; i++)
        if (!L->span[i].dev && !each(f, L->span[i].pid, L->span[i].ts))
            return false;
    for (size_t i = 0; L->segx && i < L->npass; i++) {
        const ps_pass *p = &L->pass[i];
        if (!p->has_pid)
            continue;
        for (int s = 0; s < L->nseg; s++)
            if ((p->present >> s) & 1 && !each(f, p->pid, ps_start(L, p, s)))
                return false;
    }
    return true;
}

static bool count_one(fill *f, uint64_t pid, uint64_t ts)
{
    (void)ts;
    tally *t = tally_of(f, pid);
    if (t)
        t->n++;
    return t != NULL;
}

static bool sample_one(fill *f, uint64_t pid, uint64_t ts)
{
    tally *t = tally_of(f, pid); /* made by count_one: never NULL */
    if (t->seen++ % t->stride == 0 && t->at < t->end)
        f->ts[t->at++] = ts;
    return true;
}

bool cw_build(cw_set *S, const ps_log *L)
{
    memset(S, 0, sizeof *S);
    hmap_init(&S->map, 1);
    fill f = {S, NULL, 0, NULL, 0, 0};
    bool ok = each_start(L, count_one, &f);
    /* A sample of each process's starts, evenly spaced in log order, tells
     * its percentiles well enough for a margin of a day, without an array
     * of every start (a large log has millions, and the pages they would
     * fault in cost more than the rest of the build). */
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
        f.last = 0;
        (void)each_start(L, sample_one, &f);
        for (size_t w = 0; w < S->nwin; w++)
            S->win[w].set = cw_window(f.ts + f.t[w].start, f.t[w].at - f.t[w].start, &S->win[w]);
    }
    free(f.t);
    free(f.ts);
    return ok;
}

void cw_free(cw_set *S)
{
    hmap_free(&S->map);
    free(S->win);
    memset(S, 0, sizeof *S);
}

bool cw_far(cw_set *S, uint64_t pid, uint64_t ts)
{
    if (!S->last || S->last_pid != pid) {
        const uint64_t key[1] = {pid};
        S->last = S->win ? hmap_get(&S->map, key) : 0;
        S->last_pid = pid;
    }
    if (!S->last)
        return false;
    const cw_win *w = &S->win[S->last - 1];
    return w->set && (ts < w->lo || ts > w->hi);
}

bool cw_leave_out(cw_set *S, uint64_t pid, uint64_t ts, const char *path, size_t line, const char *what,
                  size_t what_n)
{
    if (!cw_far(S, pid, ts))
        return false;
    cw_note *n = &S->note;
    /* the earliest of the first file named: the writers go kind by kind */
    if (!n->n++ || (path == n->path && line < n->line)) {
        const cw_win *w = &S->win[S->last - 1];
        n->path = path, n->line = line, n->pid = pid, n->ts = ts, n->p10 = w->p10, n->p90 = w->p90;
        snprintf(n->what, sizeof n->what, "%.*s", (int)(what_n < 80 ? what_n : 80), what);
    }
    return true;
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
           "%s:%zu: %s of pid=%" PRIu64 " starts at %" PRIu64 " ns, far from that process's other events (most "
           "start in %" PRIu64 " .. %" PRIu64 " ns): a corrupt clock reading; not drawn%s",
           n->path, n->line, n->what, n->pid, n->ts, n->p10, n->p90, more);
}
