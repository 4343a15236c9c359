/* Order statistics by selection, not sorting: a 200 MB log has hundreds of
 * thousands of durations per table and only three order statistics of each
 * are printed. */
#include "tools/phstats.h"
#include "tools/hugemem.h"

#include <inttypes.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

char *phs_med_str(phs_med m, char *buf, size_t n)
{
    snprintf(buf, n, "%" PRIu64 "%s", m.whole, m.half ? ".5" : "");
    return buf;
}

/* select_k and stat_of for one element type T (suffix S): durations are
 * gathered as 32-bit values when every one of the log fits, which halves
 * the fresh memory the columns take (on these machines a visible part of
 * a run). */
#define ORDER_STATS(T, S)                                                                  \
    /* Places the k-th smallest at v[k], smaller ones before it, larger after. */       \
    static void select_k##S(T *v, size_t n, size_t kk)                                     \
    {                                                                                      \
        ptrdiff_t lo = 0, hi = (ptrdiff_t)n - 1, k = (ptrdiff_t)kk;                        \
        while (hi > lo) {                                                                  \
            /* median of three as pivot, then a three-way partition so runs of equal     \
             * values (common: exact figures, quantised timers) stay linear */              \
            ptrdiff_t mid = lo + (hi - lo) / 2;                                            \
            T x;                                                                           \
            if (v[mid] < v[lo]) x = v[mid], v[mid] = v[lo], v[lo] = x;                     \
            if (v[hi] < v[lo]) x = v[hi], v[hi] = v[lo], v[lo] = x;                        \
            if (v[hi] < v[mid]) x = v[hi], v[hi] = v[mid], v[mid] = x;                     \
            T piv = v[mid];                                                                \
            ptrdiff_t lt = lo, i = lo, gt = hi;                                            \
            while (i <= gt) {                                                              \
                if (v[i] < piv) {                                                          \
                    x = v[lt], v[lt] = v[i], v[i] = x;                                     \
                    lt++, i++;                                                             \
                } else if (v[i] > piv) {                                                   \
                    x = v[i], v[i] = v[gt], v[gt] = x;                                     \
                    gt--;                                                                  \
                } else {                                                                   \
                    i++;                                                                   \
                }                                                                          \
            }                                                                              \
            if (k < lt)                                                                    \
                hi = lt - 1;                                                               \
            else if (k > gt)                                                               \
                lo = gt + 1;                                                               \
            else                                                                           \
                return;                                                                    \
        }                                                                                  \
    }                                                                                      \
                                                                                           \
    static void stat_of##S(T *v, size_t n, phs_stat *s)                                     \
    {                                                                                      \
        memset(s, 0, sizeof *s);                                                           \
        s->n = n;                                                                          \
        if (!n)                                                                            \
            return;                                                                        \
        T mn = v[0], mx = v[0];                                                            \
        for (size_t i = 1; i < n; i++) {                                                   \
            if (v[i] < mn) mn = v[i];                                                      \
            if (v[i] > mx) mx = v[i];                                                      \
        }                                                                                  \
        s->min = mn;                                                                       \
        s->max = mx;                                                                       \
        if (n % 2) {                                                                       \
            select_k##S(v, n, n / 2);                                                      \
            s->med.whole = v[n / 2];                                                       \
            return;                                                                        \
        }                                                                                  \
        select_k##S(v, n, n / 2 - 1);                                                      \
        uint64_t a = v[n / 2 - 1];                                                         \
        uint64_t b = v[n / 2];                                                             \
        for (size_t i = n / 2 + 1; i < n; i++)                                             \
            if (v[i] < b)                                                                  \
                b = v[i];                                                                  \
        /* (a + b) / 2 without overflowing 64 bits */                                      \
        s->med.whole = a / 2 + b / 2 + ((a & 1) & (b & 1));                                \
        s->med.half = ((a & 1) ^ (b & 1)) != 0;                                            \
    }

ORDER_STATS(uint64_t, 64)
ORDER_STATS(uint32_t, 32)

static void fig_add(phs_fig *f, uint64_t v, size_t line, size_t *first_line, size_t *other_line, uint64_t *other)
{
    if (f->n == 0) {
        f->value = f->min = f->max = v;
        *first_line = line;
    } else {
        if (v != f->value && !f->varies) {
            f->varies = true;
            *other_line = line;
            *other = v;
        }
        if (v < f->min) f->min = v;
        if (v > f->max) f->max = v;
    }
    f->n++;
}

typedef struct fig_ctx {
    size_t first_line, other_line;
    uint64_t other;
    size_t missing_line;    /* the first used pass without it */
} fig_ctx;

/* A used pass that should report a figure and does not. */
static void fig_missing(phs_fig *f, fig_ctx *c, size_t line)
{
    if (!f->missing++)
        c->missing_line = line;
}

static void warn_fig(ps_log *L, const phs_fig *f, const fig_ctx *c, const char *what)
{
    if (f->missing && f->n)
        dg_add(&L->warn, "%s: %s is missing or not an integer in %zu of %zu used passes (the first at line %zu)",
               L->path, what, f->missing, f->missing + f->n, c->missing_line);
    if (!f->varies || c->other_line == 0)
        return;
    size_t l1 = c->first_line;
    size_t l2 = c->other_line;
    dg_add(&L->warn, "%s: %s differs between passes: %" PRIu64 " (line %zu) and %" PRIu64 " (line %zu); range %" PRIu64 "..%" PRIu64,
           L->path, what, f->value, l1, c->other, l2, f->min, f->max);
}

void phs_stat_of(uint64_t *v, size_t n, phs_stat *s)
{
    stat_of64(v, n, s);
}

size_t phs_values(const ps_log *L, int seg, uint64_t *out)
{
    size_t k = 0;
    for (size_t i = 0; i < L->npass; i++) {
        const ps_pass *p = &L->pass[i];
        if (!p->used)
            continue;
        if (seg != PHS_TOTAL) {
            if (p->present & (1u << seg))
                out[k++] = ps_get(L, p, seg).dur;
            continue;
        }
        out[k++] = ps_control_sum(L, p);
    }
    return k;
}

/* The duration columns of the used passes, one per segment the log has,
 * and the control-plane sums, in one block. One walk over the passes fills
 * them all: the pass array is large, and walking it once per segment costs
 * more than the rest. */
typedef struct columns {
    hm_block mem;
    size_t n;               /* rows: the used passes (1 at least) */
    size_t cix[PS_MAXSEG];  /* each segment's column */
    bool narrow;            /* every duration fits 32 bits: col32 */
    bool by_rank;           /* rk[] and rsum[] have room */
    uint64_t *tot, *rsum, *col;
    uint32_t *rk, *col32;
    size_t cnt[PS_MAXSEG + 1];
} columns;

/* The line context of each figure's warning. */
typedef struct fig_ctxs {
    fig_ctx heap, tasks, bytes[PS_MAXSEG], op[PS_NOPS];
} fig_ctxs;

static hbg_status columns_alloc(const ps_log *L, bool by_rank, columns *C)
{
    memset(C, 0, sizeof *C);
    size_t n = C->n = L->nused ? L->nused : 1;
    /* columns for the segments the log has only: fresh memory is dear */
    size_t ncol = 0;
    for (int s = 0; s < L->nseg; s++)
        C->cix[s] = (L->seen >> s) & 1 ? ncol++ : 0;
    C->narrow = L->max_dur <= UINT32_MAX;
    C->by_rank = by_rank;
    size_t width = C->narrow ? sizeof(uint32_t) : sizeof(uint64_t);
    /* with by_rank: each sum's rank, and room to sort the sums by it */
    size_t extra = by_rank ? n * (sizeof(uint32_t) + sizeof(uint64_t)) : 0;
    if (hm_alloc(&C->mem, n * sizeof(uint64_t) + ncol * n * width + extra) != 0)
        return HBG_E_NOMEM;
    /* the 64-bit arrays first: the 32-bit ones after them stay aligned */
    C->tot = C->mem.p;
    C->rsum = C->tot + n;
    C->col = by_rank ? C->rsum + n : C->rsum;
    C->rk = (uint32_t *)(void *)((char *)C->col + ncol * n * width);
    C->col32 = (uint32_t *)(void *)C->col;
    return HBG_OK;
}

/* One used pass into the columns and the figures. Its control-plane sum
 * is below LX_DUR_LIMIT_NS (a pass past it is excluded: PS_D_LONG). */
static void add_pass(const ps_log *L, const ps_pass *p, phs_result *R, columns *C, fig_ctxs *F, size_t k)
{
    uint64_t sum = 0;
    for (int s = 0; s < L->nseg; s++) {
        if (!(p->present & (1u << s)))
            continue;
        ps_seg g = ps_get(L, p, s);
        if (C->narrow)
            C->col32[C->cix[s] * C->n + C->cnt[s]++] = (uint32_t)g.dur;
        else
            C->col[C->cix[s] * C->n + C->cnt[s]++] = g.dur;
        if ((PS_CONTROL_MASK >> s) & 1)
            sum += g.dur;
        if (g.has_bytes)
            fig_add(&R->bytes[s], g.bytes, g.line, &F->bytes[s].first_line, &F->bytes[s].other_line,
                    &F->bytes[s].other);
        else
            fig_missing(&R->bytes[s], &F->bytes[s], g.line);
    }
    if (C->by_rank)
        C->rk[k] = (uint32_t)p->rank;
    C->tot[k] = sum;
    if (p->has_heap_used)
        fig_add(&R->heap_used, p->heap_used, p->line[PS_HOST_ORCH], &F->heap.first_line, &F->heap.other_line,
                &F->heap.other);
    else
        fig_missing(&R->heap_used, &F->heap, p->line[PS_HOST_ORCH]);
    if (p->has_tasks)
        fig_add(&R->tasks, p->tasks, p->line[PS_HOST_ORCH], &F->tasks.first_line, &F->tasks.other_line,
                &F->tasks.other);
    else
        fig_missing(&R->tasks, &F->tasks, p->line[PS_HOST_ORCH]);
    /* a pass with no line of a kind the others have did not do "the
     * same": it is named by its first line, having none of that kind */
    for (int o = 0; o < PS_NOPS; o++)
        if (p->ops_present & (1u << o))
            fig_add(&R->op_count[o], p->op_count[o], p->op_line[o], &F->op[o].first_line, &F->op[o].other_line,
                    &F->op[o].other);
        else
            fig_missing(&R->op_count[o], &F->op[o], p->first_line);
}

/* The k sums grouped by rank (a counting sort), each rank's statistics;
 * before stat_of64 reorders tot. */
static hbg_status rank_stats(const ps_log *L, columns *C, size_t k, phs_stat *by_rank)
{
    size_t *at = calloc(L->nrank + 1, sizeof *at);
    if (!at)
        return HBG_E_NOMEM;
    for (size_t i = 0; i < k; i++)
        at[C->rk[i] + 1]++;
    for (size_t r = 0; r < L->nrank; r++)
        at[r + 1] += at[r];
    for (size_t i = 0; i < k; i++)
        C->rsum[at[C->rk[i]]++] = C->tot[i];
    /* at[r] is now where rank r + 1 begins */
    for (size_t r = 0; r < L->nrank; r++) {
        size_t b = r ? at[r - 1] : 0;
        stat_of64(C->rsum + b, at[r] - b, &by_rank[r]);
    }
    free(at);
    return HBG_OK;
}

static void warn_figs(ps_log *L, const phs_result *R, const fig_ctxs *F)
{
    char what[128];
    warn_fig(L, &R->heap_used, &F->heap, "heap_used");
    warn_fig(L, &R->tasks, &F->tasks, "tasks");
    for (int s = 0; s < L->nseg; s++) {
        snprintf(what, sizeof what, "bytes= of %s", L->segname[s]);
        warn_fig(L, &R->bytes[s], &F->bytes[s], what);
    }
    for (int o = 0; o < PS_NOPS; o++) {
        snprintf(what, sizeof what, "host-orch %s count", ps_op_name(o));
        warn_fig(L, &R->op_count[o], &F->op[o], what);
    }
}

hbg_status phs_compute(ps_log *L, phs_result *R, phs_stat *by_rank)
{
    memset(R, 0, sizeof *R);
    columns C;
    if (columns_alloc(L, by_rank != NULL, &C) != HBG_OK)
        return HBG_E_NOMEM;
    fig_ctxs F;
    memset(&F, 0, sizeof F);
    uint32_t any = 0;
    size_t k = 0;
    for (size_t i = 0; i < L->npass; i++) {
        const ps_pass *p = &L->pass[i];
        if (!p->used)
            continue;
        any |= p->present;
        add_pass(L, p, R, &C, &F, k++);
    }
    R->control = any & PS_CONTROL_MASK;
    for (int s = 0; s < L->nseg; s++) {
        if (!(any & (1u << s)))
            continue;
        R->row_seg[R->nrow] = s;
        if (C.narrow)
            stat_of32(C.col32 + C.cix[s] * C.n, C.cnt[s], &R->row[R->nrow]);
        else
            stat_of64(C.col + C.cix[s] * C.n, C.cnt[s], &R->row[R->nrow]);
        R->nrow++;
    }
    if (by_rank && rank_stats(L, &C, k, by_rank) != HBG_OK) {
        hm_free(&C.mem);
        return HBG_E_NOMEM;
    }
    stat_of64(C.tot, k, &R->total);
    hm_free(&C.mem);
    /* A figure some used passes lack is not the same in every one: it
     * varies (a figure no pass reports is simply not shown). */
    phs_fig *figs[2 + PS_MAXSEG + PS_NOPS];
    size_t nf = 0;
    figs[nf++] = &R->heap_used, figs[nf++] = &R->tasks;
    for (int s = 0; s < L->nseg; s++)
        figs[nf++] = &R->bytes[s];
    for (int o = 0; o < PS_NOPS; o++)
        figs[nf++] = &R->op_count[o];
    for (size_t i = 0; i < nf; i++)
        if (!figs[i]->n)
            figs[i]->missing = 0;
        else if (figs[i]->missing)
            figs[i]->varies = true;
    warn_figs(L, R, &F);
    return HBG_OK;
}
