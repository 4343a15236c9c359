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

char *st_med_str(st_med m, char *buf, size_t n)
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
    static void stat_of##S(T *v, size_t n, st_stat *s)                                     \
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

static void fig_add(st_fig *f, uint64_t v, size_t line, size_t *first_line, size_t *other_line, uint64_t *other)
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
} fig_ctx;

static void warn_fig(ps_log *L, const st_fig *f, const fig_ctx *c, const char *what)
{
    if (!f->varies)
        return;
    size_t l1 = c->first_line;
    size_t l2 = c->other_line;
    dg_add(&L->warn, "%s: %s differs between passes: %" PRIu64 " (line %zu) and %" PRIu64 " (line %zu); range %" PRIu64 "..%" PRIu64,
           L->path, what, f->value, l1, c->other, l2, f->min, f->max);
}

void st_stat_of(uint64_t *v, size_t n, st_stat *s)
{
    stat_of64(v, n, s);
}

size_t st_values(const ps_log *L, int seg, uint64_t *out)
{
    size_t k = 0;
    for (size_t i = 0; i < L->npass; i++) {
        const ps_pass *p = &L->pass[i];
        if (!p->used)
            continue;
        if (seg != ST_TOTAL) {
            if (p->present & (1u << seg))
                out[k++] = ps_get(L, p, seg).dur;
            continue;
        }
        uint64_t sum = 0;
        for (int s = 0; s < L->nseg; s++)
            if (((p->present & PS_CONTROL_MASK) >> s) & 1 && __builtin_add_overflow(sum, ps_get(L, p, s).dur, &sum))
                return (size_t)-1;
        out[k++] = sum;
    }
    return k;
}

hbg_status st_compute(ps_log *L, st_result *R, st_stat *by_rank)
{
    memset(R, 0, sizeof *R);
    size_t n = L->nused ? L->nused : 1;
    /* One walk over the passes fills a column per segment: the pass array
     * is large, and walking it once per segment costs more than the rest. */
    /* columns for the segments the log has only: fresh memory is dear */
    size_t cix[PS_MAXSEG], ncol = 0;
    for (int s = 0; s < L->nseg; s++)
        cix[s] = (L->seen >> s) & 1 ? ncol++ : 0;
    bool narrow = L->max_dur <= UINT32_MAX;
    size_t width = narrow ? sizeof(uint32_t) : sizeof(uint64_t);
    hm_block colmem;
    /* with by_rank: each sum's rank, and room to sort the sums by it */
    size_t extra = by_rank ? n * (sizeof(uint32_t) + sizeof(uint64_t)) : 0;
    if (hm_alloc(&colmem, n * sizeof(uint64_t) + ncol * n * width + extra) != 0)
        return HBG_E_NOMEM;
    /* the 64-bit arrays first: the 32-bit ones after them stay aligned */
    uint64_t *tot = colmem.p;
    uint64_t *rsum = tot + n;
    uint64_t *col = by_rank ? rsum + n : rsum;
    uint32_t *rk = (uint32_t *)(void *)((char *)col + ncol * n * width);
    uint32_t *col32 = (uint32_t *)(void *)col;
    size_t cnt[PS_MAXSEG + 1] = {0};
    uint32_t any = 0;
    fig_ctx c_heap = {0}, c_tasks = {0}, c_bytes[PS_MAXSEG], c_op[PS_NOPS];
    memset(c_bytes, 0, sizeof c_bytes);
    memset(c_op, 0, sizeof c_op);
    size_t k = 0;
    for (size_t i = 0; i < L->npass; i++) {
        const ps_pass *p = &L->pass[i];
        if (!p->used)
            continue;
        any |= p->present;
        uint64_t sum = 0;
        for (int s = 0; s < L->nseg; s++) {
            if (!(p->present & (1u << s)))
                continue;
            ps_seg g = ps_get(L, p, s);
            if (narrow)
                col32[cix[s] * n + cnt[s]++] = (uint32_t)g.dur;
            else
                col[cix[s] * n + cnt[s]++] = g.dur;
            if (((PS_CONTROL_MASK >> s) & 1) && __builtin_add_overflow(sum, g.dur, &sum)) {
                R->overflow = true;
                R->overflow_line = p->first_line;
                hm_free(&colmem);
                return HBG_E_PARSE;
            }
            if (g.has_bytes)
                fig_add(&R->bytes[s], g.bytes, g.line, &c_bytes[s].first_line, &c_bytes[s].other_line,
                        &c_bytes[s].other);
        }
        if (by_rank)
            rk[k] = (uint32_t)p->rank;
        tot[k++] = sum;
        if (p->has_heap_used)
            fig_add(&R->heap_used, p->heap_used, p->line[PS_HOST_ORCH], &c_heap.first_line, &c_heap.other_line,
                    &c_heap.other);
        if (p->has_tasks)
            fig_add(&R->tasks, p->tasks, p->line[PS_HOST_ORCH], &c_tasks.first_line, &c_tasks.other_line,
                    &c_tasks.other);
        for (int o = 0; o < PS_NOPS; o++)
            if (p->ops_present & (1u << o))
                fig_add(&R->op_count[o], p->op_count[o], p->op_line[o], &c_op[o].first_line, &c_op[o].other_line,
                        &c_op[o].other);
    }
    R->control = any & PS_CONTROL_MASK;
    for (int s = 0; s < L->nseg; s++) {
        if (!(any & (1u << s)))
            continue;
        R->row_seg[R->nrow] = s;
        if (narrow)
            stat_of32(col32 + cix[s] * n, cnt[s], &R->row[R->nrow]);
        else
            stat_of64(col + cix[s] * n, cnt[s], &R->row[R->nrow]);
        R->nrow++;
    }
    if (by_rank) {
        /* the sums grouped by rank (a counting sort), before stat_of64
         * reorders tot */
        size_t *at = calloc(L->nrank + 1, sizeof *at);
        if (!at) {
            hm_free(&colmem);
            return HBG_E_NOMEM;
        }
        for (size_t i = 0; i < k; i++)
            at[rk[i] + 1]++;
        for (size_t r = 0; r < L->nrank; r++)
            at[r + 1] += at[r];
        for (size_t i = 0; i < k; i++)
            rsum[at[rk[i]]++] = tot[i];
        /* at[r] is now where rank r + 1 begins */
        for (size_t r = 0; r < L->nrank; r++) {
            size_t b = r ? at[r - 1] : 0;
            stat_of64(rsum + b, at[r] - b, &by_rank[r]);
        }
        free(at);
    }
    stat_of64(tot, k, &R->total);
    hm_free(&colmem);

    char what[128];
    warn_fig(L, &R->heap_used, &c_heap, "heap_used");
    warn_fig(L, &R->tasks, &c_tasks, "tasks");
    for (int s = 0; s < L->nseg; s++) {
        snprintf(what, sizeof what, "bytes= of %s", L->segname[s]);
        warn_fig(L, &R->bytes[s], &c_bytes[s], what);
    }
    for (int o = 0; o < PS_NOPS; o++) {
        snprintf(what, sizeof what, "host-orch %s count", ps_op_name(o));
        warn_fig(L, &R->op_count[o], &c_op[o], what);
    }
    return HBG_OK;
}
