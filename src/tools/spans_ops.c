/* Per-operation tails of host_phase_records.jsonl files (spans.h): the
 * distribution of each phase's record durations, and how much of each
 * pass's host_orch no operation record covers (time the orchestration
 * spent outside every instrumented operation). */
#include "tools/spans.h"
#include "util/vec.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct iv {
    uint64_t a, b;
} iv;

static int cmp_iv(const void *x, const void *y)
{
    const iv *p = x, *q = y;
    return p->a < q->a ? -1 : p->a > q->a;
}

/* The length of the union of v[0..n) (reordered). */
static uint64_t union_len(iv *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_iv);
    uint64_t tot = 0, s = 0, e = 0;
    bool open = false;
    for (size_t i = 0; i < n; i++) {
        if (open && v[i].a <= e) {
            if (v[i].b > e)
                e = v[i].b;
            continue;
        }
        if (open)
            tot += e - s;
        s = v[i].a;
        e = v[i].b;
        open = true;
    }
    return open ? tot + (e - s) : tot;
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

static bool is_op(const char *phase)
{
    for (int o = 0; o < PS_NOPS; o++)
        if (!strcmp(phase, ps_op_name(o)))
            return true;
    return false;
}

/* The uncovered part of the host_orch of the pass line ln joins: 1; 0
 * when it joins no pass with host_orch; -1 out of memory (said as such,
 * not as a line that joins nothing). */
static int uncovered(const ps_log *L, const rc_file *f, const rc_line *ln, const bool *op, iv **buf, size_t *cap,
                     uint64_t *orch, uint64_t *unc)
{
    const ps_pass *p = ps_find(L, ln->pid, ln->inv);
    if (!p || !(p->present & (1u << PS_HOST_ORCH)))
        return 0;
    uint64_t o0 = ps_start(L, p, PS_HOST_ORCH), d = p->dur[PS_HOST_ORCH];
    uint64_t o1 = o0 + d < o0 ? UINT64_MAX : o0 + d;
    if (!vec_grow((void **)buf, cap, ln->n ? ln->n : 1, sizeof **buf))
        return -1;
    size_t m = 0;
    for (size_t r = 0; r < ln->n; r++) {
        const rc_rec *x = &f->rec[ln->first + r];
        if (!op[x->phase])
            continue;
        uint64_t a = x->start > o0 ? x->start : o0, b = x->end < o1 ? x->end : o1;
        if (a < b)
            (*buf)[m++] = (iv){a, b};
    }
    *orch = o1 - o0;
    *unc = *orch - union_len(*buf, m);
    return 1;
}

/* The kind named name, made when absent; NULL on out of memory. The
 * files' phases together are not bounded by one file's limit. */
static sp_opkind *kind_of(sp_ops *o, const char *name)
{
    for (size_t k = 0; k < o->nkind; k++)
        if (!strcmp(o->kind[k].name, name))
            return &o->kind[k];
    if (!vec_grow((void **)&o->kind, &o->capkind, o->nkind + 1, sizeof *o->kind))
        return NULL;
    sp_opkind *k = &o->kind[o->nkind++];
    memset(k, 0, sizeof *k);
    snprintf(k->name, sizeof k->name, "%s", name);
    return k;
}

/* The kind of each record of the lines the reader kept, in the order
 * the kinds first come. Only those lines: the reader skips a second line
 * of one pass, or one a record of which breaks the schema, after it has
 * stored its records or taken in its phase names, so the file holds more
 * of either than its lines hold. NULL on out of memory. */
static size_t *kinds_of_lines(sp_ops *o, const rc_file *f)
{
    size_t *kind = malloc((f->nrec ? f->nrec : 1) * sizeof *kind), of[RC_MAX_PHASES];
    if (!kind)
        return NULL;
    for (int k = 0; k < f->nphase; k++)
        of[k] = SIZE_MAX;
    for (size_t l = 0; l < f->nline; l++)
        for (size_t r = f->line[l].first; r < f->line[l].first + f->line[l].n; r++) {
            int ph = f->rec[r].phase;
            if (of[ph] == SIZE_MAX) {
                const sp_opkind *k = kind_of(o, f->phase[ph]);
                if (!k) {
                    free(kind);
                    return NULL;
                }
                of[ph] = (size_t)(k - o->kind);
            }
            kind[r] = of[ph];
        }
    return kind;
}

static hbg_status tails(sp_ops *o, const rc_file *f, size_t nf)
{
    size_t nmax = 0;
    for (size_t i = 0; i < nf; i++)
        nmax += f[i].nrec;
    uint64_t *v = malloc((nmax ? nmax : 1) * sizeof *v);
    size_t **kind = calloc(nf ? nf : 1, sizeof *kind);
    hbg_status st = v && kind ? HBG_OK : HBG_E_NOMEM;
    for (size_t i = 0; i < nf && st == HBG_OK; i++)
        if (!(kind[i] = kinds_of_lines(o, &f[i])))
            st = HBG_E_NOMEM;
    for (size_t k = 0; k < o->nkind && st == HBG_OK; k++) {
        size_t m = 0;
        /* by line: a line skipped keeps its records in rec, reached by
         * no line */
        for (size_t i = 0; i < nf; i++)
            for (size_t l = 0; l < f[i].nline; l++)
                for (size_t r = f[i].line[l].first; r < f[i].line[l].first + f[i].line[l].n; r++)
                    if (kind[i][r] == k)
                        v[m++] = f[i].rec[r].end - f[i].rec[r].start;
        /* p99 by nearest rank: the smallest value at or above 99 % of them */
        qsort(v, m, sizeof *v, cmp_u64);
        if (m)
            o->kind[k].p99 = v[(m * 99 + 99) / 100 - 1];
        phs_stat s;
        phs_stat_of(v, m, &s);
        o->kind[k].count = m;
        o->kind[k].min = s.min;
        o->kind[k].med = s.med;
        o->kind[k].max = s.max;
    }
    for (size_t i = 0; kind && i < nf; i++)
        free(kind[i]);
    free(kind);
    free(v);
    return st;
}

/* The lines of one file that a warning is about, the first of them in
 * the file's line order (the reader keeps it): one warning a file, at
 * that line, so a user with several records files knows which one and
 * where to look, and a file of thousands of such lines is one line on
 * stderr, not thousands that crowd out the rest. */
typedef struct line_note {
    size_t n;
    const rc_line *first;
} line_note;

static void note(line_note *w, const rc_line *ln)
{
    if (!w->n++)
        w->first = ln;
}

static void warn_dropped(const rc_file *f, const line_note *d, dg_list *warn)
{
    const rc_line *x = d->first;
    if (d->n == 1)
        dg_add(warn,
               "%s:%zu: pid=%" PRIu64 " inv=%" PRIu64 " dropped=%" PRIu64
               ": the record pool refused that many records; this pass's operations are incomplete",
               f->path, x->lineno, x->pid, x->inv, x->dropped);
    else if (d->n)
        dg_add(warn,
               "%s:%zu: %zu records lines have dropped > 0 (this line's, pid=%" PRIu64 " inv=%" PRIu64
               " dropped=%" PRIu64 ", is the first): the record pool refused records of those passes, whose "
               "operations are incomplete",
               f->path, x->lineno, d->n, x->pid, x->inv, x->dropped);
}

static void warn_unjoined(const rc_file *f, const line_note *u, const char *log, dg_list *warn)
{
    const rc_line *x = u->first;
    if (u->n == 1)
        dg_add(warn,
               "%s:%zu: pid=%" PRIu64 " inv=%" PRIu64
               " joins no bind pass with host_orch in %s; its operations count in the tails only",
               f->path, x->lineno, x->pid, x->inv, log);
    else if (u->n)
        dg_add(warn,
               "%s:%zu: %zu records lines join no bind pass with host_orch in %s (this line's, pid=%" PRIu64
               " inv=%" PRIu64 ", is the first); their operations count in the tails only",
               f->path, x->lineno, u->n, log, x->pid, x->inv);
}

/* The passes' host_orch, and its uncovered part, summed exactly (each
 * under 2^64 ns: no count of passes reaches 2^128) and clamped to 64 bits
 * once, at the end; the records line whose pass took the sum past 2^64 - 1
 * is named. A sum that wrapped once passed for an ordinary figure. */
typedef struct orch_sums {
    unsigned __int128 orch, unc;
    const char *path; /* the records line that took orch out, if one did */
    size_t line;
} orch_sums;

static void sums_add(orch_sums *s, uint64_t orch, uint64_t unc, const rc_file *f, const rc_line *ln)
{
    s->orch += orch;
    s->unc += unc;
    if (!s->path && s->orch > UINT64_MAX) {
        s->path = f->path;
        s->line = ln->lineno;
    }
}

static void sums_done(const orch_sums *s, sp_ops *o, dg_list *warn)
{
    o->orch_ns = s->orch > UINT64_MAX ? UINT64_MAX : (uint64_t)s->orch;
    o->uncovered_ns = s->unc > UINT64_MAX ? UINT64_MAX : (uint64_t)s->unc;
    o->uncovered_share = s->orch ? (double)s->unc / (double)s->orch : 0;
    if (s->path)
        dg_add(warn,
               "%s:%zu: the host_orch of the passes the records join adds up past 2^64 - 1 ns (this line's pass "
               "took it past) and is shown clamped there: the log is corrupt",
               s->path, s->line);
}

hbg_status sp_op_tails(const ps_log *L, const rc_file *f, size_t nf, sp_ops *o, dg_list *warn)
{
    memset(o, 0, sizeof *o);
    iv *buf = NULL;
    size_t cap = 0;
    orch_sums sum = {0};
    for (size_t i = 0; i < nf; i++) {
        bool op[RC_MAX_PHASES];
        line_note dropped = {0}, unjoined = {0};
        for (int k = 0; k < f[i].nphase; k++)
            op[k] = is_op(f[i].phase[k]);
        for (size_t l = 0; l < f[i].nline; l++) {
            const rc_line *ln = &f[i].line[l];
            o->lines++;
            if (ln->dropped)
                note(&dropped, ln);
            uint64_t orch, unc;
            int joined = uncovered(L, &f[i], ln, op, &buf, &cap, &orch, &unc);
            if (joined < 0) {
                free(buf);
                return HBG_E_NOMEM;
            }
            if (!joined) {
                note(&unjoined, ln);
                continue;
            }
            o->passes++;
            sums_add(&sum, orch, unc, &f[i], ln);
        }
        warn_dropped(&f[i], &dropped, warn);
        warn_unjoined(&f[i], &unjoined, L->path, warn);
    }
    free(buf);
    sums_done(&sum, o, warn);
    return tails(o, f, nf);
}

void sp_ops_free(sp_ops *o)
{
    free(o->kind);
    memset(o, 0, sizeof *o);
}
