/* Spans into invocations, ranks and callables; the statistics and wall
 * clock the views share. The views themselves: spans_views.c. */
#include "tools/spans.h"
#include "tools/hmap.h"
#include "util/vec.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* --- families ------------------------------------------------------------ */

/* The scheduler's per-task spans (node, network1..3) and external producers'
 * (ext.) carry no run identity in inv: grouping them by it would forge
 * invocations. */
bool sp_foreign(lx_slice name)
{
    static const char *const heads[] = {"node", "network1", "network2", "network3", "ext"};
    const char *dot = memchr(name.p, '.', name.n);
    size_t hn = dot ? (size_t)(dot - name.p) : name.n;
    for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++)
        if (hn == strlen(heads[i]) && memcmp(name.p, heads[i], hn) == 0)
            return true;
    return false;
}

/* --- building -------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_inv(const void *a, const void *b)
{
    const sp_inv *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return x->inv < y->inv ? -1 : x->inv > y->inv;
}

/* Invocation order by callable (hid bytes), then their own order. */
static int cmp_by_hid(const void *a, const void *b, void *ctx)
{
    const sp_inv *inv = ctx;
    const sp_inv *x = &inv[*(const uint32_t *)a], *y = &inv[*(const uint32_t *)b];
    size_t n = x->hid.n < y->hid.n ? x->hid.n : y->hid.n;
    int c = memcmp(x->hid.p, y->hid.p, n);
    if (c)
        return c;
    if (x->hid.n != y->hid.n)
        return x->hid.n < y->hid.n ? -1 : 1;
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    return i < j ? -1 : i > j;
}

typedef struct call_key {
    size_t ninv, first_line;
    size_t c;
} call_key;

static int cmp_call(const void *a, const void *b)
{
    const call_key *x = a, *y = b;
    if (x->ninv != y->ninv)
        return x->ninv > y->ninv ? -1 : 1;
    return x->first_line < y->first_line ? -1 : x->first_line > y->first_line;
}

size_t sp_rank_of(const sp_set *S, uint64_t pid)
{
    size_t lo = 0, hi = S->nrank;
    while (lo < hi) {
        size_t m = (lo + hi) / 2;
        if (S->rank_pid[m] < pid)
            lo = m + 1;
        else
            hi = m;
    }
    return lo < S->nrank && S->rank_pid[lo] == pid ? lo : SIZE_MAX;
}

/* Each span's invocation, in order of first appearance; NULL on out of memory. */
static uint32_t *assign(sp_set *S, sp_inv **invs, size_t *ninv)
{
    const ps_log *L = S->L;
    uint32_t *of = malloc((L->nspan ? L->nspan : 1) * sizeof *of);
    hmap m;
    sp_inv *v = NULL;
    size_t n = 0, cap = 0;
    uint64_t lp = 0, li = 0;
    uint32_t last = 0;
    if (!of)
        return NULL;
    hmap_init(&m, 2);
    for (size_t i = 0; i < L->nspan; i++) {
        const ps_span *s = &L->span[i];
        of[i] = UINT32_MAX;
        if (sp_foreign(s->name)) {
            S->nforeign++;
            continue;
        }
        /* a run's spans mostly follow each other */
        if (!last || s->pid != lp || s->inv != li) {
            uint32_t *slot = hmap_put2(&m, s->pid, s->inv);
            if (!slot || n >= UINT32_MAX - 1 || (!*slot && !vec_grow((void **)&v, &cap, n + 1, sizeof *v))) {
                free(of);
                free(v);
                hmap_free(&m);
                return NULL;
            }
            if (!*slot) {
                memset(&v[n], 0, sizeof v[n]);
                v[n].pid = s->pid;
                v[n].inv = s->inv;
                v[n].hid = s->hid;
                v[n].root = SIZE_MAX;
                *slot = (uint32_t)++n;
            }
            last = *slot;
            lp = s->pid;
            li = s->inv;
        }
        sp_inv *x = &v[last - 1];
        of[i] = last - 1;
        x->n++;
        S->nspan++;
        if (s->depth == 0 && !s->dev && x->root == SIZE_MAX) {
            x->root = i;
            x->hid = s->hid;
        }
    }
    hmap_free(&m);
    *invs = v;
    *ninv = n;
    return of;
}

static hbg_status callables(sp_set *S)
{
    const ps_log *L = S->L;
    uint32_t *ord = malloc((S->ninv ? S->ninv : 1) * sizeof *ord);
    S->callidx = malloc((S->ninv ? S->ninv : 1) * sizeof *S->callidx);
    if (!ord || !S->callidx) {
        free(ord);
        return HBG_E_NOMEM;
    }
    for (size_t i = 0; i < S->ninv; i++)
        ord[i] = (uint32_t)i;
    qsort_r(ord, S->ninv, sizeof *ord, cmp_by_hid, S->inv);
    size_t ncall = 0;
    for (size_t i = 0; i < S->ninv; i++)
        if (!i || !lx_slice_same(S->inv[ord[i]].hid, S->inv[ord[i - 1]].hid))
            ncall++;
    call_key *ck = calloc(ncall ? ncall : 1, sizeof *ck);
    sp_callable *tmp = calloc(ncall ? ncall : 1, sizeof *tmp);
    S->call = calloc(ncall ? ncall : 1, sizeof *S->call);
    if (!ck || !tmp || !S->call) {
        free(ord);
        free(ck);
        free(tmp);
        return HBG_E_NOMEM;
    }
    size_t c = 0;
    for (size_t i = 0; i < S->ninv; i++) {
        const sp_inv *x = &S->inv[ord[i]];
        if (i && !lx_slice_same(x->hid, S->inv[ord[i - 1]].hid))
            c++;
        if (!tmp[c].ninv) {
            tmp[c].hid = x->hid;
            tmp[c].inv = &S->callidx[i];
            ck[c].c = c;
            ck[c].first_line = SIZE_MAX;
        }
        tmp[c].inv[tmp[c].ninv++] = ord[i];
        size_t line = L->span[S->idx[x->first]].line;
        if (line < ck[c].first_line)
            ck[c].first_line = line;
        ck[c].ninv++;
    }
    qsort(ck, ncall, sizeof *ck, cmp_call);
    for (size_t k = 0; k < ncall; k++) {
        sp_callable *d = &S->call[k];
        *d = tmp[ck[k].c];
        d->label = "";
        if (d->ninv == 1)
            d->label = "prefill";
        else if (k == 0)
            d->label = "decode";
        for (size_t j = 0; j < d->ninv; j++) {
            S->inv[d->inv[j]].callable = (uint32_t)k;
            if (!j || S->inv[d->inv[j]].rank != S->inv[d->inv[j - 1]].rank)
                d->nrank++;
        }
    }
    S->ncall = ncall;
    free(ord);
    free(ck);
    free(tmp);
    return HBG_OK;
}

int sp_cmp_record(const ps_span *x, const ps_span *y)
{
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    if (x->dur != y->dur)
        return x->dur < y->dur ? -1 : 1;
    if (x->depth != y->depth)
        return x->depth < y->depth ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->dev != y->dev)
        return x->dev ? 1 : -1;
    if (x->name.n != y->name.n)
        return x->name.n < y->name.n ? -1 : 1;
    return memcmp(x->name.p, y->name.p, x->name.n);
}

/* Span indices by sp_cmp_record, the earlier line first among equals. */
static int cmp_repeat(const void *a, const void *b, void *ctx)
{
    const ps_span *sp = ctx;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    int c = sp_cmp_record(&sp[i], &sp[j]);
    return c ? c : i < j ? -1 : i > j;
}

/* A span that repeats an earlier one of its invocation exactly (thread,
 * depth, name, clock, start and duration) is the same record twice: a
 * log holding a run twice (two copies concatenated). Summed per name, as
 * the tpot and tree views do, each would count double; each is kept
 * once, the first in the log, and the repeats are counted in a warning.
 * Compacts S->idx; false on out of memory. */
static bool drop_repeats(sp_set *S)
{
    const ps_log *L = S->L;
    size_t most = 0;
    for (size_t i = 0; i < S->ninv; i++)
        most = S->inv[i].n > most ? S->inv[i].n : most;
    size_t *tmp = malloc((most ? most : 1) * sizeof *tmp);
    unsigned char *rep = calloc(L->nspan ? L->nspan : 1, 1);
    if (!tmp || !rep) {
        free(tmp);
        free(rep);
        return false;
    }
    size_t nrep = 0, first_line = 0, w = 0;
    for (size_t i = 0; i < S->ninv; i++) {
        sp_inv *x = &S->inv[i];
        memcpy(tmp, S->idx + x->first, x->n * sizeof *tmp);
        qsort_r(tmp, x->n, sizeof *tmp, cmp_repeat, (void *)L->span);
        for (size_t k = 1; k < x->n; k++) {
            const ps_span *b = &L->span[tmp[k]];
            if (!sp_cmp_record(&L->span[tmp[k - 1]], b)) {
                rep[tmp[k]] = 1;
                if (!nrep++ || b->line < first_line)
                    first_line = b->line;
            }
        }
        size_t from = x->first, n = x->n;
        x->first = w;
        for (size_t k = 0; k < n; k++)
            if (!rep[S->idx[from + k]])
                S->idx[w++] = S->idx[from + k];
        x->n = w - x->first;
    }
    S->nspan = w;
    if (nrep)
        dg_add(&S->warn, "%s:%zu: %zu span%s repeat an earlier span of their invocation exactly (thread, depth, "
                         "name, start, duration): the same record twice, as in a log holding a run twice; each "
                         "counted once",
               L->path, first_line, nrep, nrep == 1 ? "" : "s");
    free(tmp);
    free(rep);
    return true;
}

/* The line of invocation x's first span in the log. */
static uint32_t first_line(const sp_set *S, const sp_inv *x)
{
    return S->L->span[S->idx[x->first]].line;
}

/* Invocations without a depth-0 span, and with spans of another hid than
 * their root's. Each warning names the earliest such line in the log:
 * the invocations are in pid order, which is not the log's, and a reader
 * goes from the top. */
static void warn_shapes(sp_set *S)
{
    const ps_log *L = S->L;
    const sp_inv *noroot = NULL, *mixed = NULL;
    const ps_span *other = NULL;
    size_t nroot = 0;
    for (size_t i = 0; i < S->ninv; i++) {
        const sp_inv *x = &S->inv[i];
        if (x->root == SIZE_MAX && (!nroot++ || first_line(S, x) < first_line(S, noroot)))
            noroot = x;
        for (size_t k = 0; k < x->n; k++) {
            const ps_span *s = &L->span[S->idx[x->first + k]];
            if (!lx_slice_same(s->hid, x->hid)) {
                if (!other || s->line < other->line) {
                    other = s;
                    mixed = x;
                }
                break;
            }
        }
    }
    if (noroot)
        dg_add(&S->warn, "%s:%u: invocation pid=%" PRIu64 " inv=%" PRIu64 " has no depth-0 span (chip.run)", L->path,
               first_line(S, noroot), noroot->pid, noroot->inv);
    if (nroot > 1)
        dg_add(&S->warn, "%s: %zu invocations have no depth-0 span", L->path, nroot);
    if (mixed)
        dg_add(&S->warn,
               "%s:%u: invocation pid=%" PRIu64 " inv=%" PRIu64 " has spans of another hid (%.*s); it is counted "
               "under its root's",
               L->path, other->line, mixed->pid, mixed->inv, (int)other->hid.n, other->hid.p);
}

hbg_status sp_build(sp_set *S, const ps_log *L)
{
    memset(S, 0, sizeof *S);
    S->L = L;
    dg_init(&S->warn, 1000);
    sp_inv *v = NULL;
    size_t n = 0;
    uint32_t *of = assign(S, &v, &n);
    if (!of)
        return HBG_E_NOMEM;
    /* sorted by (pid, inv); each span's slot follows its invocation's new place */
    uint32_t *perm = malloc((n ? n : 1) * sizeof *perm);
    sp_inv *sorted = malloc((n ? n : 1) * sizeof *sorted);
    S->idx = malloc((S->nspan ? S->nspan : 1) * sizeof *S->idx);
    S->rank_pid = malloc((n ? n : 1) * sizeof *S->rank_pid);
    if (!perm || !sorted || !S->idx || !S->rank_pid) {
        free(of);
        free(v);
        free(perm);
        free(sorted);
        return HBG_E_NOMEM;
    }
    for (size_t i = 0; i < n; i++)
        v[i].first = i; /* its old id, carried through the sort */
    if (n)
        memcpy(sorted, v, n * sizeof *v);
    qsort(sorted, n, sizeof *sorted, cmp_inv);
    size_t pos = 0;
    for (size_t i = 0; i < n; i++) {
        perm[sorted[i].first] = (uint32_t)i;
        sorted[i].first = pos;
        pos += sorted[i].n;
        sorted[i].n = 0;
        if (!S->nrank || S->rank_pid[S->nrank - 1] != sorted[i].pid)
            S->rank_pid[S->nrank++] = sorted[i].pid;
    }
    for (size_t i = 0; i < L->nspan; i++) {
        if (of[i] == UINT32_MAX)
            continue;
        sp_inv *x = &sorted[perm[of[i]]];
        S->idx[x->first + x->n++] = i;
    }
    free(of);
    free(v);
    free(perm);
    S->inv = sorted;
    S->ninv = n;
    if (!drop_repeats(S))
        return HBG_E_NOMEM;
    qsort(S->rank_pid, S->nrank, sizeof *S->rank_pid, cmp_u64);
    for (size_t i = 0; i < n; i++)
        S->inv[i].rank = (uint32_t)sp_rank_of(S, S->inv[i].pid);
    warn_shapes(S);
    if (S->nforeign == 1) /* not "1 spans ... carry" */
        dg_add(&S->warn,
               "%s: one span of the per-task (node, network) or external (ext.) families carries no run "
               "identity and is left out",
               L->path);
    else if (S->nforeign)
        dg_add(&S->warn, "%s: %zu spans of the per-task (node, network) or external (ext.) families carry no run "
                         "identity and are left out",
               L->path, S->nforeign);
    return callables(S);
}

void sp_free(sp_set *S)
{
    free(S->idx);
    free(S->inv);
    free(S->rank_pid);
    free(S->call);
    free(S->callidx);
    dg_free(&S->warn);
    memset(S, 0, sizeof *S);
}

/* --- statistics ---------------------------------------------------------- */

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static __int128 sum_of(const int64_t *v, size_t n)
{
    __int128 sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    return sum;
}

void sp_stat_of(int64_t *v, size_t n, sp_stat *s)
{
    memset(s, 0, sizeof *s);
    s->n = n;
    if (!n)
        return;
    qsort(v, n, sizeof *v, cmp_i64);
    s->min = v[0];
    s->max = v[n - 1];
    if (n % 2) {
        s->med = v[n / 2];
    } else {
        /* floor of the exact mean of the two, and whether a half remains */
        __int128 sum = (__int128)v[n / 2 - 1] + v[n / 2];
        __int128 fl = sum >= 0 ? sum / 2 : -((-sum + 1) / 2);
        s->med = (int64_t)fl;
        s->med_half = (sum - 2 * fl) != 0;
    }
    s->sum = sum_of(v, n);
    size_t cut = n / 10;
    s->tn = n - 2 * cut;
    s->tsum = sum_of(v + cut, s->tn);
}

char *sp_mean_str(const sp_stat *s, bool trimmed, char *buf, size_t n)
{
    __int128 sum = trimmed ? s->tsum : s->sum;
    size_t k = trimmed ? s->tn : s->n;
    /* From the exact sum, always: a double's quotient is off the mean
     * in the tenth from a sum of 2^48 (three spans summing to 2^53 - 1,
     * ...330.33, printed as ...330.5), past 2^53 even below the smallest
     * value, and below that rounds a tie it cannot hold (x.15) by its
     * binary error. Tenths, a tie to the even one; each value is an
     * int64, so the mean and its tenths fit 64 and 68 bits. */
    if (!k) {
        snprintf(buf, n, "0.0");
        return buf;
    }
    unsigned __int128 mag = sum < 0 ? (unsigned __int128)(-sum) : (unsigned __int128)sum;
    unsigned __int128 tenths = mag * 10 / k, rest = mag * 10 % k;
    if (2 * rest > k || (2 * rest == k && (tenths & 1)))
        tenths++;
    snprintf(buf, n, "%s%" PRIu64 ".%u", sum < 0 ? "-" : "", (uint64_t)(tenths / 10), (unsigned)(tenths % 10));
    return buf;
}

char *sp_med_str(const sp_stat *s, char *buf, size_t n)
{
    if (!s->med_half)
        snprintf(buf, n, "%" PRId64, s->med);
    else if (s->med >= 0)
        snprintf(buf, n, "%" PRId64 ".5", s->med);
    else /* med + 0.5 with med < 0: -(|med| - 1).5 */
        snprintf(buf, n, "-%" PRIu64 ".5", (uint64_t)(-(s->med + 1)));
    return buf;
}

double sp_med_val(const sp_stat *s)
{
    return (double)s->med + (s->med_half ? 0.5 : 0.0);
}

/* --- wall clock ------------------------------------------------------------- */

int sp_wall_at(const ps_log *L, uint64_t pid, size_t line, uint64_t mono, uint64_t *wall)
{
    const ps_anchor *a = NULL;
    for (size_t i = 0; i < L->nanchor && ps_anchor_precedes(&L->anchor[i], line); i++)
        if (L->anchor[i].pid == pid)
            a = &L->anchor[i];
    if (!a)
        return SP_WALL_NONE;
    int j = ps_anchor_judge(a, mono);
    if (j != PS_ANCHOR_OK)
        return j == PS_ANCHOR_CORRUPT ? SP_WALL_CORRUPT : SP_WALL_FAR;
    return ps_anchor_wall(a, mono, wall) ? SP_WALL_OK : SP_WALL_RANGE;
}

char *sp_utc(uint64_t wall_ns, char *buf, size_t n)
{
    time_t sec = (time_t)(wall_ns / 1000000000u);
    struct tm tm;
    if (!gmtime_r(&sec, &tm)) {
        snprintf(buf, n, "-");
        return buf;
    }
    snprintf(buf, n, "%04d-%02d-%02dT%02d:%02d:%02d.%09uZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
             tm.tm_hour, tm.tm_min, tm.tm_sec, (unsigned)(wall_ns % 1000000000u));
    return buf;
}
