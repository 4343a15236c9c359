/* `hbg spans` output. Tables for people, one JSON object or one CSV table
 * for scripts; every figure is integer nanoseconds except means (one
 * decimal) and shares. */
#include "cli/spans_out.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/jw.h"
#include "util/printable.h"

bool so_parse_view(const char *s, so_view *v)
{
    static const char *const names[] = {"tpot", "rounds", "tree", "ops"};
    for (int i = 0; i < 4; i++)
        if (!strcmp(s, names[i])) {
            *v = (so_view)i;
            return true;
        }
    return false;
}

bool so_parse_format(const char *s, so_format *f)
{
    static const char *const names[] = {"table", "json", "csv"};
    for (int i = 0; i < 3; i++)
        if (!strcmp(s, names[i])) {
            *f = (so_format)i;
            return true;
        }
    return false;
}

/* --- small pieces ----------------------------------------------------------- */

/* A decoded span name (malloc'd, NUL-terminated; "" when out of memory). */
static char *name_of(lx_slice s)
{
    char *b = malloc(s.n + 1);
    if (!b)
        return calloc(1, 1);
    b[lx_decode_name(s, b)] = 0;
    return b;
}

/* Text for a terminal or a CSV cell: each control (printable.h), and
 * each byte that starts no well-formed character, becomes one '?'. A
 * CSV cell holding a comma or a quote is quoted as RFC 4180 has it (the
 * quote doubled), so the name reads back as it is. */
static void put_clean(FILE *f, const char *s, size_t n, bool csv)
{
    bool quote = csv && (memchr(s, ',', n) || memchr(s, '"', n));
    if (quote)
        fputc('"', f);
    for (size_t i = 0; i < n;) {
        bool ctl;
        size_t len = hbg__text_step(s + i, n - i, &ctl);
        if (quote && s[i] == '"')
            fputc('"', f);
        if (ctl)
            fputc('?', f);
        else
            fwrite(s + i, 1, len, f);
        i += len;
    }
    if (quote)
        fputc('"', f);
}

/* The columns a name takes on a UTF-8 terminal as put_clean prints it, so
 * the next column lines up after a name that is not ASCII. It steps as
 * put_clean does (printable.h): a control, or a byte that starts no
 * well-formed character (an overlong form, a surrogate, one past
 * U+10FFFF), is one '?'; a character one column, a combining
 * mark none, an East Asian wide or emoji one two. The ranges are the
 * common blocks, not all of Unicode's tables: close enough for a table,
 * and no locale needed. */
static int shown_width(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    int w = 0;
    for (size_t i = 0; i < n;) {
        bool ctl;
        size_t len = hbg__text_step(s + i, n - i, &ctl);
        uint32_t cp = p[i];
        if (len == 2)
            cp = (p[i] & 0x1fu) << 6 | (p[i + 1] & 0x3fu);
        else if (len == 3)
            cp = (p[i] & 0x0fu) << 12 | (p[i + 1] & 0x3fu) << 6 | (p[i + 2] & 0x3fu);
        else if (len == 4)
            cp = (p[i] & 0x07u) << 18 | (p[i + 1] & 0x3fu) << 12 | (p[i + 2] & 0x3fu) << 6 | (p[i + 3] & 0x3fu);
        i += len;
        if (ctl || len == 1) {
            w++;
            continue;
        }
        if ((cp >= 0x0300 && cp <= 0x036f) || (cp >= 0x200b && cp <= 0x200f) || (cp >= 0xfe00 && cp <= 0xfe0f))
            continue;
        bool wide = (cp >= 0x1100 && cp <= 0x115f) || (cp >= 0x2e80 && cp <= 0xa4cf && cp != 0x303f) ||
                    (cp >= 0xac00 && cp <= 0xd7a3) || (cp >= 0xf900 && cp <= 0xfaff) ||
                    (cp >= 0xfe30 && cp <= 0xfe4f) || (cp >= 0xff00 && cp <= 0xff60) ||
                    (cp >= 0xffe0 && cp <= 0xffe6) || (cp >= 0x1f300 && cp <= 0x1f64f) ||
                    (cp >= 0x1f900 && cp <= 0x1f9ff) || (cp >= 0x20000 && cp <= 0x3fffd);
        w += wide ? 2 : 1;
    }
    return w;
}

/* A table's column is as wide as its default or its widest cell, the
 * larger: a sum clamped near the end of the 64-bit range has 19 or 20
 * digits, more than a default leaves room for, and a fixed width would
 * push every column after it out of line with its header. */
static int widen(int w, int len)
{
    return len > w ? len : w;
}

static int len_i64(int64_t v)
{
    return snprintf(NULL, 0, "%" PRId64, v);
}

static int len_u64(uint64_t v)
{
    return snprintf(NULL, 0, "%" PRIu64, v);
}

static int len_zu(size_t v)
{
    return snprintf(NULL, 0, "%zu", v);
}

static void jstr(jw *w, const char *s)
{
    jw_str(w, s, strlen(s));
}

static void jslice(jw *w, lx_slice s)
{
    jw_str(w, s.p, s.n);
}

static void jdouble(jw *w, double v, const char *fmt)
{
    char b[64];
    snprintf(b, sizeof b, fmt, v);
    jw_lit(w, b);
}

static void ji64(jw *w, int64_t v)
{
    char b[32];
    snprintf(b, sizeof b, "%" PRId64, v);
    jw_lit(w, b);
}

static void jstat(jw *w, const sp_stat *s, bool with_minmax)
{
    char med[48];
    jw_lit(w, "\"n\": ");
    jw_u64(w, s->n);
    if (!s->n) {
        jw_lit(w, ", \"median_ns\": null");
        return;
    }
    if (with_minmax) {
        jw_lit(w, ", \"min_ns\": ");
        ji64(w, s->min);
    }
    jw_lit(w, ", \"median_ns\": ");
    jw_lit(w, sp_med_str(s, med, sizeof med));
    if (with_minmax) {
        jw_lit(w, ", \"max_ns\": ");
        ji64(w, s->max);
    }
    jw_lit(w, ", \"mean_ns\": ");
    jw_lit(w, sp_mean_str(s, false, med, sizeof med));
}

static const char *rank_list(const sp_set *S, char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = 0;
    for (size_t i = 0; i < S->nrank && k + 48 < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%zu = pid %" PRIu64, i ? ", " : "", i, S->rank_pid[i]);
    if (S->nrank && k + 48 >= n)
        snprintf(buf + k, n - k, ", ...");
    return buf;
}

static void table_head(const so_ctx *o)
{
    const ps_log *L = o->L;
    const sp_set *S = o->S;
    char rl[1024];
    printf("log     %s\n", L->path);
    if (L->has_stamp) {
        printf("stamp   ");
        put_clean(stdout, L->stamp.p, L->stamp.n, false);
        printf("\n");
    } else {
        printf("stamp   none: this log has no [stamp] line, so nothing in it records the command and commit\n");
    }
    printf("spans   %zu in %zu invocation%s of %zu callable%s\n", S->nspan, S->ninv, S->ninv == 1 ? "" : "s",
           S->ncall, S->ncall == 1 ? "" : "s");
    /* --view ops shows a log without spans too: its ranks, the spans'
     * pids, are none, said as the stamp line says it has none (the JSON
     * has an empty list) */
    if (S->nrank)
        printf("ranks   %s (numbered as hbg run numbers them: by ascending pid)\n", rank_list(S, rl, sizeof rl));
    else
        printf("ranks   none: the ranks are the pids of the spans, and this log has no spans\n");
}

static void callable_head(const sp_callable *c, const char *what)
{
    printf("\ncallable %.*s%s%s%s: %zu invocation%s on %zu rank%s%s\n", (int)c->hid.n, c->hid.p, c->label[0] ? " (" : "",
           c->label, c->label[0] ? ")" : "", c->ninv, c->ninv == 1 ? "" : "s", c->nrank, c->nrank == 1 ? "" : "s",
           what);
}

static void json_head(const so_ctx *o, jw *w, const char *view)
{
    const ps_log *L = o->L;
    const sp_set *S = o->S;
    jw_lit(w, "{\"log\": ");
    jstr(w, L->file);
    jw_lit(w, ", \"stamp\": ");
    if (L->has_stamp)
        jw_str(w, L->stamp.p, L->stamp.n);
    else
        jw_lit(w, "null");
    jw_lit(w, ", \"view\": ");
    jstr(w, view);
    jw_lit(w, ", \"spans\": ");
    jw_u64(w, S->nspan);
    jw_lit(w, ", \"invocations\": ");
    jw_u64(w, S->ninv);
    jw_lit(w, ", \"ranks\": [");
    for (size_t i = 0; i < S->nrank; i++) {
        jw_lit(w, i ? ", {\"rank\": " : "{\"rank\": ");
        jw_u64(w, i);
        jw_lit(w, ", \"pid\": ");
        jw_u64(w, S->rank_pid[i]);
        jw_lit(w, "}");
    }
    jw_lit(w, "]");
}

static void json_callable(jw *w, const sp_callable *c)
{
    jw_lit(w, "{\"hid\": ");
    jslice(w, c->hid);
    jw_lit(w, ", \"label\": ");
    jstr(w, c->label);
    jw_lit(w, ", \"invocations\": ");
    jw_u64(w, c->ninv);
    jw_lit(w, ", \"ranks\": ");
    jw_u64(w, c->nrank);
}

static void json_tail(const so_ctx *o, jw *w)
{
    const dg_list *lists[3] = {&o->L->warn, &o->S->warn, o->warn};
    jw_lit(w, ", \"warnings\": [");
    size_t k = 0;
    char more[64];
    for (int l = 0; l < 3; l++) {
        for (size_t i = 0; i < lists[l]->n; i++) {
            if (k++)
                jw_lit(w, ", ");
            jstr(w, lists[l]->msg[i]);
        }
        /* as stderr has it: a script reading the JSON alone learns that
         * the list is not all there is */
        if (lists[l]->suppressed) {
            dg_more(lists[l]->suppressed, more, sizeof more);
            jw_lit(w, k++ ? ", " : "");
            jstr(w, more);
        }
    }
    jw_lit(w, "]}\n");
}

static void print_warnings(const so_ctx *o)
{
    const dg_list *lists[3] = {&o->L->warn, &o->S->warn, o->warn};
    char more[64];
    for (int l = 0; l < 3; l++) {
        for (size_t i = 0; i < lists[l]->n; i++)
            fprintf(stderr, "hbg spans: warning: %s\n", lists[l]->msg[i]);
        if (lists[l]->suppressed)
            fprintf(stderr, "hbg spans: warning: %s\n", dg_more(lists[l]->suppressed, more, sizeof more));
    }
}

/* A warning the view itself finds (a tree's orphans, a clamped sum): on
 * stderr now, as the log's were before the view, and kept with them for
 * the JSON's "warnings", where a script that reads the JSON alone finds
 * every warning of the run. */
static void __attribute__((format(printf, 2, 3))) view_warn(const so_ctx *o, const char *fmt, ...)
{
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    char *s = n < 0 ? NULL : malloc((size_t)n + 1);
    if (s)
        vsnprintf(s, (size_t)n + 1, fmt, again);
    va_end(again);
    va_end(ap);
    if (!s) {
        fprintf(stderr, "hbg spans: warning: (out of memory formatting a warning)\n");
        return;
    }
    dg_sanitize(s);
    fprintf(stderr, "hbg spans: warning: %s\n", s);
    if (o->warn)
        dg_add(o->warn, "%s", s);
    free(s);
}

/* A sum clamped at the end of the 64-bit range prints as a number like any
 * other; only this line says it is not one. */
static void warn_sat(const so_ctx *o, const sp_callable *cl, const sp_sat_note *sat)
{
    if (sat->n)
        view_warn(o,
                  "%s:%" PRIu32 ": callable %.*s: %zu sum%s of one invocation's spans leave%s the 64-bit range "
                  "(this line's span took the first out) and %s shown clamped at its end: the log is corrupt",
                  o->L->path, sat->line, (int)cl->hid.n, cl->hid.p, sat->n, sat->n == 1 ? "" : "s",
                  sat->n == 1 ? "s" : "", sat->n == 1 ? "is" : "are");
}

/* --- tpot ------------------------------------------------------------------ */

/* A stage's indent: two columns a depth level, up to eight levels. */
static int stage_indent(const sp_stage *st)
{
    return (int)(2 * (st->depth < 8 ? st->depth : 8));
}

/* One callable's stages as a table, each column as wide as its widest
 * cell (widen). */
static void tpot_table(const sp_stage *st, size_t n)
{
    int wname = 44, wn = 5, wmin = 15, wmed = 17, wmax = 15, wmean = 17;
    char med[48], mean[48];
    for (size_t i = 0; i < n; i++) {
        const sp_stat *x = &st[i].st;
        char *nm = name_of(st[i].name);
        wname = widen(wname, stage_indent(&st[i]) + shown_width(nm, strlen(nm)));
        free(nm);
        wn = widen(wn, len_zu(x->n));
        wmin = widen(wmin, len_i64(x->min));
        wmed = widen(wmed, (int)strlen(sp_med_str(x, med, sizeof med)));
        wmax = widen(wmax, len_i64(x->max));
        wmean = widen(wmean, (int)strlen(sp_mean_str(x, false, mean, sizeof mean)));
    }
    printf("%-*s %-6s %*s %*s %*s %*s %*s\n", wname, "stage", "clock", wn, "n", wmin, "min_ns", wmed, "median_ns", wmax,
           "max_ns", wmean, "mean_ns");
    for (size_t i = 0; i < n; i++) {
        const sp_stat *x = &st[i].st;
        char *nm = name_of(st[i].name);
        int ind = stage_indent(&st[i]);
        printf("%*s", ind, "");
        put_clean(stdout, nm, strlen(nm), false);
        printf("%*s %-6s %*zu %*" PRId64 " %*s %*" PRId64 " %*s\n", wname - ind - shown_width(nm, strlen(nm)), "",
               st[i].dev ? "device" : "host", wn, x->n, wmin, x->min, wmed, sp_med_str(x, med, sizeof med), wmax,
               x->max, wmean, sp_mean_str(x, false, mean, sizeof mean));
        free(nm);
    }
}

static hbg_status tpot(const so_ctx *o, jw *w)
{
    const sp_set *S = o->S;
    if (o->fmt == SO_CSV)
        printf("callable,label,stage,clock,depth,n,min_ns,median_ns,max_ns,mean_ns\n");
    if (o->fmt == SO_JSON)
        jw_lit(w, ", \"callables\": [");
    for (size_t c = 0; c < S->ncall; c++) {
        const sp_callable *cl = &S->call[c];
        sp_stage *st;
        size_t n;
        sp_sat_note sat;
        if (sp_tpot(S, c, &st, &n, &sat) != HBG_OK)
            return HBG_E_NOMEM;
        warn_sat(o, cl, &sat);
        if (o->fmt == SO_TABLE) {
            callable_head(cl, "");
            tpot_table(st, n);
            free(st);
            continue;
        }
        if (o->fmt == SO_JSON) {
            jw_lit(w, c ? ", " : "");
            json_callable(w, cl);
            jw_lit(w, ", \"stages\": [");
        }
        for (size_t i = 0; i < n; i++) {
            char *nm = name_of(st[i].name), med[48], mean[48];
            const sp_stat *x = &st[i].st;
            sp_med_str(x, med, sizeof med);
            if (o->fmt == SO_CSV) {
                printf("%.*s,", (int)cl->hid.n, cl->hid.p);
                put_clean(stdout, cl->label, strlen(cl->label), true);
                putchar(',');
                put_clean(stdout, nm, strlen(nm), true);
                printf(",%s,%u,%zu,%" PRId64 ",%s,%" PRId64 ",%s\n", st[i].dev ? "device" : "host", st[i].depth, x->n,
                       x->min, med, x->max, sp_mean_str(x, false, mean, sizeof mean));
            } else {
                jw_lit(w, i ? ", {\"name\": " : "{\"name\": ");
                jstr(w, nm);
                jw_lit(w, st[i].dev ? ", \"clock\": \"device\", \"depth\": " : ", \"clock\": \"host\", \"depth\": ");
                jw_u64(w, st[i].depth);
                jw_lit(w, ", ");
                jstat(w, x, true);
                jw_lit(w, "}");
            }
            free(nm);
        }
        if (o->fmt == SO_JSON)
            jw_lit(w, "]}");
        free(st);
    }
    if (o->fmt == SO_JSON)
        jw_lit(w, "]");
    return HBG_OK;
}

/* --- tree ------------------------------------------------------------------ */

/* A node's median over its parent's; false when it has no parent or the
 * parent's median is not positive. */
static bool share_of(const sp_node *rows, size_t i, double *share)
{
    if (rows[i].parent == SIZE_MAX)
        return false;
    double p = sp_med_val(&rows[rows[i].parent].st);
    if (p <= 0)
        return false;
    *share = sp_med_val(&rows[i].st) / p;
    return true;
}

/* A node's label (its name, or "(untimed)"; malloc'd) and its cells as
 * the table shows them. */
typedef struct tree_cells {
    char *label;
    int indent;
    char med[48], share[40];
} tree_cells;

static void tree_cells_of(const sp_node *rows, size_t i, tree_cells *c)
{
    const sp_node *r = &rows[i];
    double share;
    c->label = r->untimed ? strdup("(untimed)") : name_of(r->name);
    if (!c->label)
        c->label = calloc(1, 1);
    c->indent = (int)(2 * (r->depth < 10 ? r->depth : 10));
    sp_med_str(&r->st, c->med, sizeof c->med);
    if (share_of(rows, i, &share))
        snprintf(c->share, sizeof c->share, "%.1f%%", 100.0 * share);
    else
        snprintf(c->share, sizeof c->share, "-");
}

/* One callable's tree as a table, each column as wide as its widest cell
 * (widen): a share of a parent of 1 ns is as long as the child's median. */
static void tree_table(const sp_node *rows, size_t n)
{
    int wlabel = 52, wn = 5, wmed = 17, wshare = 8;
    tree_cells c;
    for (size_t i = 0; i < n; i++) {
        tree_cells_of(rows, i, &c);
        wlabel = widen(wlabel, c.indent + shown_width(c.label, strlen(c.label)));
        wn = widen(wn, len_zu(rows[i].st.n));
        wmed = widen(wmed, (int)strlen(c.med));
        wshare = widen(wshare, (int)strlen(c.share));
        free(c.label);
    }
    printf("%-*s %-6s %*s %*s %*s\n", wlabel, "node", "clock", wn, "n", wmed, "median_ns", wshare, "share");
    for (size_t i = 0; i < n; i++) {
        const sp_node *r = &rows[i];
        tree_cells_of(rows, i, &c);
        printf("%*s", c.indent, "");
        put_clean(stdout, c.label, strlen(c.label), false);
        const char *clock = r->untimed ? "" : r->dev ? "device" : "host";
        printf("%*s %-6s %*zu %*s %*s\n", wlabel - c.indent - shown_width(c.label, strlen(c.label)), "", clock, wn,
               r->st.n, wmed, c.med, wshare, c.share);
        free(c.label);
    }
}

static hbg_status tree(const so_ctx *o, jw *w)
{
    const sp_set *S = o->S;
    if (o->fmt == SO_CSV)
        printf("callable,label,node,depth,clock,n,median_ns,mean_ns,share\n");
    if (o->fmt == SO_JSON)
        jw_lit(w, ", \"callables\": [");
    for (size_t c = 0; c < S->ncall; c++) {
        const sp_callable *cl = &S->call[c];
        sp_node *rows;
        size_t n;
        sp_tree_notes notes;
        if (sp_tree(S, c, &rows, &n, &notes) != HBG_OK)
            return HBG_E_NOMEM;
        if (notes.orphans)
            view_warn(o,
                      "%s: callable %.*s: %zu span%s a depth or %s no parent span; drawn under the span that "
                      "ended around them, or as roots",
                      o->L->path, (int)cl->hid.n, cl->hid.p, notes.orphans, notes.orphans == 1 ? " skips" : "s skip",
                      notes.orphans == 1 ? "has" : "have");
        if (notes.outside) {
            bool one = notes.outside == 1;
            const char *its = one ? "its" : "their";
            view_warn(o,
                      "%s:%" PRIu32 ": callable %.*s: %zu host span%s outside %s host parent (this line's is the "
                      "first): %s share and the parent's (untimed) row do not measure what they say",
                      o->L->path, notes.outside_line, (int)cl->hid.n, cl->hid.p, notes.outside, one ? " lies" : "s lie",
                      its, its);
        }
        warn_sat(o, cl, &notes.sat);
        if (o->fmt == SO_TABLE) {
            callable_head(cl, "");
            tree_table(rows, n);
            free(rows);
            continue;
        }
        if (o->fmt == SO_JSON) {
            jw_lit(w, c ? ", " : "");
            json_callable(w, cl);
            jw_lit(w, ", \"nodes\": [");
        }
        for (size_t i = 0; i < n; i++) {
            const sp_node *r = &rows[i];
            char *nm = r->untimed ? NULL : name_of(r->name), med[48], mean[48];
            const char *label = r->untimed ? "(untimed)" : nm;
            const char *clock = r->untimed ? "" : r->dev ? "device" : "host";
            double share = 0;
            bool has_share = share_of(rows, i, &share);
            sp_med_str(&r->st, med, sizeof med);
            if (o->fmt == SO_CSV) {
                printf("%.*s,", (int)cl->hid.n, cl->hid.p);
                put_clean(stdout, cl->label, strlen(cl->label), true);
                putchar(',');
                put_clean(stdout, label, strlen(label), true);
                printf(",%u,%s,%zu,%s,%s,", r->depth, clock, r->st.n, med,
                       sp_mean_str(&r->st, false, mean, sizeof mean));
                if (has_share)
                    printf("%.4f", share);
                printf("\n");
            } else {
                jw_lit(w, i ? ", {\"name\": " : "{\"name\": ");
                jstr(w, label);
                jw_lit(w, ", \"untimed\": ");
                jw_lit(w, r->untimed ? "true" : "false");
                jw_lit(w, ", \"depth\": ");
                jw_u64(w, r->depth);
                jw_lit(w, ", \"clock\": ");
                if (r->untimed)
                    jw_lit(w, "null");
                else
                    jstr(w, clock);
                jw_lit(w, ", ");
                jstat(w, &r->st, false);
                jw_lit(w, ", \"share\": ");
                if (has_share)
                    jdouble(w, share, "%.4f");
                else
                    jw_lit(w, "null");
                jw_lit(w, "}");
            }
            free(nm);
        }
        if (o->fmt == SO_JSON)
            jw_lit(w, "]}");
        free(rows);
    }
    if (o->fmt == SO_JSON)
        jw_lit(w, "]");
    return HBG_OK;
}

/* --- rounds ---------------------------------------------------------------- */

static void cell(const sp_round *r, int k, char *b, size_t n)
{
    if (r->has & (1u << k))
        snprintf(b, n, "%" PRId64, r->val[k]);
    else
        snprintf(b, n, "-");
}

/* s in a field of w columns, as printf's %-*s (left) or %*s does. */
static char *pad(char *p, const char *s, size_t n, size_t w, bool left)
{
    size_t fill = w > n ? w - n : 0;
    if (!left) {
        memset(p, ' ', fill);
        p += fill;
    }
    memcpy(p, s, n);
    p += n;
    if (left) {
        memset(p, ' ', fill);
        p += fill;
    }
    return p;
}

static size_t u64s(char *b, uint64_t v)
{
    char t[24];
    size_t k = 0, n = 0;
    do
        t[k++] = (char)('0' + v % 10);
    while (v /= 10);
    while (k)
        b[n++] = t[--k];
    return n;
}

static size_t i64s(char *b, int64_t v)
{
    if (v >= 0)
        return u64s(b, (uint64_t)v);
    b[0] = '-';
    return 1 + u64s(b + 1, -(uint64_t)v);
}

/* sp_utc, its date and time of day formatted once per second: a table
 * has a row per round, and rounds come many to a second. */
typedef struct utc_cache {
    uint64_t sec;
    bool valid;
    char head[48];          /* "2026-08-22T12:00:00." */
    size_t nhead;
} utc_cache;

static size_t utc_of(utc_cache *c, uint64_t wall, char *out)
{
    uint64_t sec = wall / 1000000000u;
    if (!c->valid || c->sec != sec) {
        sp_utc(wall, c->head, sizeof c->head);
        char *dot = strchr(c->head, '.');
        c->nhead = dot ? (size_t)(dot - c->head) + 1 : 0;
        c->sec = sec;
        c->valid = true;
    }
    if (!c->nhead) { /* not a date gmtime can give */
        size_t n = strlen(c->head);
        memcpy(out, c->head, n);
        return n;
    }
    memcpy(out, c->head, c->nhead);
    uint32_t ns = (uint32_t)(wall % 1000000000u);
    for (int i = 8; i >= 0; i--, ns /= 10)
        out[c->nhead + (size_t)i] = (char)('0' + ns % 10);
    out[c->nhead + 9] = 'Z';
    return c->nhead + 10;
}

/* The rounds table's column widths: each its default or its widest
 * cell's (widen). */
typedef struct round_widths {
    size_t rank, pid, inv, round, col[SP_NCOL];
} round_widths;

static size_t widest(size_t w, size_t len)
{
    return len > w ? len : w;
}

static void round_widths_of(const sp_set *S, const sp_round *r, size_t n, unsigned cols, round_widths *wd)
{
    char b[32];
    *wd = (round_widths){.rank = 5, .pid = 10, .inv = 8, .round = 11};
    for (int c = 0; c < SP_NCOL; c++)
        wd->col[c] = 15;
    for (size_t i = 0; i < n; i++) {
        const sp_inv *x = &S->inv[r[i].inv];
        wd->rank = widest(wd->rank, u64s(b, x->rank));
        wd->pid = widest(wd->pid, u64s(b, x->pid));
        wd->inv = widest(wd->inv, u64s(b, x->inv));
        wd->round = widest(wd->round, u64s(b, r[i].round) + (r[i].cold ? 5 : 0));
        for (int c = 0; c < SP_NCOL; c++)
            if (cols & r[i].has & (1u << c))
                wd->col[c] = widest(wd->col[c], i64s(b, r[i].val[c]));
    }
}

/* One row of the rounds table, formatted by hand (a log has tens of
 * thousands of rounds): "%-*u %-*lu %*lu %-*s", " %*s" per column, then
 * "  start\n", at the widths wd. */
static void round_row(const sp_inv *x, const sp_round *r, unsigned cols, const round_widths *wd, utc_cache *uc)
{
    char row[512], b[64], *p = row;
    size_t k = u64s(b, x->rank);
    p = pad(p, b, k, wd->rank, true);
    *p++ = ' ';
    k = u64s(b, x->pid);
    p = pad(p, b, k, wd->pid, true);
    *p++ = ' ';
    k = u64s(b, x->inv);
    p = pad(p, b, k, wd->inv, false);
    *p++ = ' ';
    k = u64s(b, r->round);
    if (r->cold) {
        memcpy(b + k, " cold", 5);
        k += 5;
    }
    p = pad(p, b, k, wd->round, true);
    for (int c = 0; c < SP_NCOL; c++)
        if (cols & (1u << c)) {
            *p++ = ' ';
            k = r->has & (1u << c) ? i64s(b, r->val[c]) : (b[0] = '-', 1);
            p = pad(p, b, k, wd->col[c], false);
        }
    *p++ = ' ';
    *p++ = ' ';
    if (r->has_wall) {
        p += utc_of(uc, r->wall, p);
    } else {
        static const char none[] = "- (no clock anchor before it)", range[] = "- (its anchor's wall_ns is out of range)",
                          far[] = "- (its start is over 10 years from its clock anchor: a corrupt ts)",
                          bad[] = "- (its clock anchor's mono_ns is corrupt: far from its own line's and from this)";
        const char *t = r->wall_corrupt ? bad : r->wall_far ? far : r->wall_range ? range : none;
        size_t tn = strlen(t);
        memcpy(p, t, tn);
        p += tn;
    }
    *p++ = '\n';
    fwrite(row, 1, (size_t)(p - row), stdout);
}

/* The statistic of row (min, median, trimmed mean, n) of s. */
static const char *stat_cell(const sp_stat *s, int row, char *b, size_t n)
{
    if (!s->n && row < 3)
        snprintf(b, n, "-");
    else if (row == 0)
        snprintf(b, n, "%" PRId64, s->min);
    else if (row == 1)
        sp_med_str(s, b, n);
    else if (row == 2)
        sp_mean_str(s, true, b, n);
    else
        snprintf(b, n, "%zu", s->n);
    return b;
}

static void rounds_stats(size_t n, size_t ncold, unsigned cols, const sp_stat *sum)
{
    static const char *const what[] = {"min", "median", "trimmed mean", "n"};
    char b[64];
    int w[SP_NCOL];
    for (int k = 0; k < SP_NCOL; k++) {
        w[k] = 15;
        for (int row = 0; row < 4; row++)
            w[k] = widen(w[k], (int)strlen(stat_cell(&sum[k], row, b, sizeof b)));
    }
    printf("\nwarm rounds: %zu (%zu cold not counted)\n", n - ncold, ncold);
    printf("%-27s", "statistic");
    for (int k = 0; k < SP_NCOL; k++)
        if (cols & (1u << k)) {
            snprintf(b, sizeof b, "%s_ns", sp_col_names[k]);
            printf(" %*s", w[k], b);
        }
    printf("\n");
    for (int row = 0; row < 4; row++) {
        printf("%-27s", what[row]);
        for (int k = 0; k < SP_NCOL; k++)
            if (cols & (1u << k))
                printf(" %*s", w[k], stat_cell(&sum[k], row, b, sizeof b));
        printf("\n");
    }
    printf("  trimmed mean: the mean without the lowest and highest tenth (floor(n/10) values at each end)\n");
}

static void rounds_table(const so_ctx *o, const sp_callable *cl, const sp_round *r, size_t n, unsigned cols,
                         const sp_stat *sum)
{
    char b[64];
    utc_cache uc = {0};
    round_widths wd;
    size_t ncold = 0;
    for (size_t i = 0; i < n; i++)
        ncold += r[i].cold;
    round_widths_of(o->S, r, n, cols, &wd);
    callable_head(cl, "; the first round of each rank is cold, marked, and not in the statistics");
    printf("%-*s %-*s %*s %-*s", (int)wd.rank, "rank", (int)wd.pid, "pid", (int)wd.inv, "inv", (int)wd.round, "round");
    for (int k = 0; k < SP_NCOL; k++)
        if (cols & (1u << k)) {
            snprintf(b, sizeof b, "%s_ns", sp_col_names[k]);
            printf(" %*s", (int)wd.col[k], b);
        }
    printf("  start (UTC)\n");
    for (size_t i = 0; i < n; i++)
        round_row(&o->S->inv[r[i].inv], &r[i], cols, &wd, &uc);
    rounds_stats(n, ncold, cols, sum);
}

static void rounds_json(const so_ctx *o, jw *w, const sp_callable *cl, const sp_round *r, size_t n,
                        const sp_stat *sum)
{
    char utc[48], med[48];
    jw_lit(w, ", \"callable\": ");
    json_callable(w, cl);
    jw_lit(w, "}, \"rounds\": [");
    for (size_t i = 0; i < n; i++) {
        const sp_inv *x = &o->S->inv[r[i].inv];
        jw_lit(w, i ? ", {\"rank\": " : "{\"rank\": ");
        jw_u64(w, x->rank);
        jw_lit(w, ", \"pid\": ");
        jw_u64(w, x->pid);
        jw_lit(w, ", \"inv\": ");
        jw_u64(w, x->inv);
        jw_lit(w, ", \"round\": ");
        jw_u64(w, r[i].round);
        jw_lit(w, r[i].cold ? ", \"cold\": true" : ", \"cold\": false");
        for (int k = 0; k < SP_NCOL; k++) {
            jw_lit(w, ", \"");
            jw_lit(w, sp_col_names[k]);
            jw_lit(w, "_ns\": ");
            if (r[i].has & (1u << k))
                ji64(w, r[i].val[k]);
            else
                jw_lit(w, "null");
        }
        jw_lit(w, ", \"start_utc\": ");
        if (r[i].has_wall)
            jstr(w, sp_utc(r[i].wall, utc, sizeof utc));
        else
            jw_lit(w, "null");
        jw_lit(w, "}");
    }
    jw_lit(w, "], \"warm\": {");
    for (int k = 0; k < SP_NCOL; k++) {
        const sp_stat *s = &sum[k];
        jw_lit(w, k ? ", \"" : "\"");
        jw_lit(w, sp_col_names[k]);
        jw_lit(w, "_ns\": {\"n\": ");
        jw_u64(w, s->n);
        if (s->n) {
            jw_lit(w, ", \"min\": ");
            ji64(w, s->min);
            jw_lit(w, ", \"median\": ");
            jw_lit(w, sp_med_str(s, med, sizeof med));
            jw_lit(w, ", \"trimmed_mean\": ");
            jw_lit(w, sp_mean_str(s, true, med, sizeof med));
        }
        jw_lit(w, "}");
    }
    jw_lit(w, "}");
}

static hbg_status rounds(const so_ctx *o, jw *w)
{
    const sp_set *S = o->S;
    if (!S->ncall)
        return HBG_OK;
    sp_round *r;
    size_t n;
    unsigned cols;
    sp_stat sum[SP_NCOL];
    if (sp_rounds(S, 0, &r, &n, &cols, sum) != HBG_OK)
        return HBG_E_NOMEM;
    const sp_callable *cl = &S->call[0];
    size_t nsat = 0, first = 0;
    for (size_t i = n; i-- > 0;)
        if (r[i].saturated) {
            nsat++;
            first = i;
        }
    if (nsat) {
        const sp_inv *x = &S->inv[r[first].inv];
        view_warn(o,
                  "%s: callable %.*s: %zu round%s (the first pid=%" PRIu64 " inv=%" PRIu64
                  ") %s a device column whose spans add up past 2^63 - 1 ns, shown clamped there: the log is corrupt",
                  o->L->path, (int)cl->hid.n, cl->hid.p, nsat, nsat == 1 ? "" : "s", x->pid, x->inv,
                  nsat == 1 ? "has" : "have");
    }
    if (o->fmt == SO_TABLE) {
        rounds_table(o, cl, r, n, cols, sum);
    } else if (o->fmt == SO_JSON) {
        rounds_json(o, w, cl, r, n, sum);
    } else {
        char b[64], utc[48];
        printf("rank,pid,inv,round,cold");
        for (int k = 0; k < SP_NCOL; k++)
            printf(",%s_ns", sp_col_names[k]);
        printf(",start_utc\n");
        for (size_t i = 0; i < n; i++) {
            const sp_inv *x = &S->inv[r[i].inv];
            printf("%u,%" PRIu64 ",%" PRIu64 ",%u,%d", x->rank, x->pid, x->inv, r[i].round, r[i].cold);
            for (int k = 0; k < SP_NCOL; k++) {
                cell(&r[i], k, b, sizeof b);
                printf(",%s", strcmp(b, "-") ? b : "");
            }
            printf(",%s\n", r[i].has_wall ? sp_utc(r[i].wall, utc, sizeof utc) : "");
        }
    }
    free(r);
    return HBG_OK;
}

/* --- operation tails --------------------------------------------------------- */

/* The tails as a table, each column as wide as its widest cell (widen):
 * a phase name has up to RC_MAX_NAME characters, a record's duration up
 * to 20 digits. */
static void ops_table(const sp_ops *p)
{
    int wk = 20, wc = 9, wmin = 15, wmed = 17, wp99 = 15, wmax = 15;
    char med[32];
    for (size_t k = 0; k < p->nkind; k++) {
        const sp_opkind *x = &p->kind[k];
        wk = widen(wk, (int)strlen(x->name));
        wc = widen(wc, len_zu(x->count));
        wmin = widen(wmin, len_u64(x->min));
        wmed = widen(wmed, (int)strlen(phs_med_str(x->med, med, sizeof med)));
        wp99 = widen(wp99, len_u64(x->p99));
        wmax = widen(wmax, len_u64(x->max));
    }
    printf("%-*s %*s %*s %*s %*s %*s\n", wk, "kind", wc, "count", wmin, "min_ns", wmed, "median_ns", wp99, "p99_ns",
           wmax, "max_ns");
    for (size_t k = 0; k < p->nkind; k++) {
        const sp_opkind *x = &p->kind[k];
        printf("%-*s %*zu %*" PRIu64 " %*s %*" PRIu64 " %*" PRIu64 "\n", wk, x->name, wc, x->count, wmin, x->min, wmed,
               phs_med_str(x->med, med, sizeof med), wp99, x->p99, wmax, x->max);
    }
}

static void ops_out(const so_ctx *o, jw *w)
{
    const sp_ops *p = o->ops;
    char med[32];
    double share = p->uncovered_share;
    if (o->fmt == SO_CSV) {
        printf("kind,count,min_ns,median_ns,p99_ns,max_ns\n");
        for (size_t k = 0; k < p->nkind; k++)
            printf("%s,%zu,%" PRIu64 ",%s,%" PRIu64 ",%" PRIu64 "\n", p->kind[k].name, p->kind[k].count,
                   p->kind[k].min, phs_med_str(p->kind[k].med, med, sizeof med), p->kind[k].p99, p->kind[k].max);
        return;
    }
    if (o->fmt == SO_TABLE) {
        printf("\noperations: %zu records line%s, %zu joined to a bind pass with host_orch\n", p->lines,
               p->lines == 1 ? "" : "s", p->passes);
        ops_table(p);
        if (p->passes)
            printf("host_orch not covered by any operation record: %" PRIu64 " of %" PRIu64 " ns (%.1f%%)\n",
                   p->uncovered_ns, p->orch_ns, 100.0 * share);
        else
            printf("host_orch not covered by any operation record: - (no records line joins a pass with host_orch)\n");
        return;
    }
    jw_lit(w, ", \"operations\": {\"lines\": ");
    jw_u64(w, p->lines);
    jw_lit(w, ", \"passes\": ");
    jw_u64(w, p->passes);
    jw_lit(w, ", \"host_orch_ns\": ");
    jw_u64(w, p->orch_ns);
    jw_lit(w, ", \"uncovered_ns\": ");
    jw_u64(w, p->uncovered_ns);
    jw_lit(w, ", \"uncovered_share\": ");
    if (p->passes)
        jdouble(w, share, "%.4f");
    else
        jw_lit(w, "null");
    jw_lit(w, ", \"kinds\": [");
    for (size_t k = 0; k < p->nkind; k++) {
        jw_lit(w, k ? ", {\"kind\": " : "{\"kind\": ");
        jstr(w, p->kind[k].name);
        jw_lit(w, ", \"count\": ");
        jw_u64(w, p->kind[k].count);
        jw_lit(w, ", \"min_ns\": ");
        jw_u64(w, p->kind[k].min);
        jw_lit(w, ", \"median_ns\": ");
        jw_lit(w, phs_med_str(p->kind[k].med, med, sizeof med));
        jw_lit(w, ", \"p99_ns\": ");
        jw_u64(w, p->kind[k].p99);
        jw_lit(w, ", \"max_ns\": ");
        jw_u64(w, p->kind[k].max);
        jw_lit(w, "}");
    }
    jw_lit(w, "]}");
}

/* The JSON written. A failed write's errno (jw_flush leaves it set, see
 * jw.h) is kept for the command to say: jw writes its full buffers past
 * stdout's own, so by the end the stream holds an error flag but no errno
 * and no pending byte whose write would fail again. */
static void json_flush(const so_ctx *o, jw *w)
{
    if (!jw_flush(w) && o->werr && !*o->werr)
        *o->werr = errno ? errno : EIO;
    jw_free(w);
}

hbg_status so_view_out(const so_ctx *o)
{
    static const char *const vname[] = {"tpot", "rounds", "tree", "ops"};
    print_warnings(o);
    jw w;
    if (o->fmt == SO_JSON) {
        if (!jw_init(&w, stdout))
            return HBG_E_NOMEM;
        json_head(o, &w, vname[o->view]);
    } else if (o->fmt == SO_TABLE) {
        table_head(o);
    }
    hbg_status st = HBG_OK;
    switch (o->view) {
    case SO_TPOT: st = tpot(o, &w); break;
    case SO_ROUNDS: st = rounds(o, &w); break;
    case SO_TREE: st = tree(o, &w); break;
    case SO_OPS: break;
    }
    /* CSV carries one table: the tails come with --view ops alone */
    if (st == HBG_OK && o->ops && (o->fmt != SO_CSV || o->view == SO_OPS))
        ops_out(o, &w);
    if (o->fmt == SO_JSON) {
        json_tail(o, &w);
        json_flush(o, &w);
    }
    return st;
}

/* --- the overlap check ------------------------------------------------------- */

static void why(const sp_pair *p, const char *a, const char *b, bool hidden, const sp_set *S, char *out, size_t n)
{
    uint64_t pi = S->inv[p->prev].inv, ni = S->inv[p->next].inv;
    if (!p->overlap && p->a0 >= p->b1)
        snprintf(out, n, "%s of inv %" PRIu64 " starts at %" PRIu64 ", not before %s of inv %" PRIu64 " ends at %" PRIu64,
                 a, ni, p->a0, b, pi, p->b1);
    else if (!p->overlap)
        snprintf(out, n, "%s of inv %" PRIu64 " ends at %" PRIu64 ", before %s of inv %" PRIu64 " starts at %" PRIu64, a,
                 ni, p->a1, b, pi, p->b0);
    else if (!p->ordered)
        snprintf(out, n, "%s of inv %" PRIu64 " starts at %" PRIu64 ", before %s of inv %" PRIu64
                         " at %" PRIu64 ": launches out of order",
                 b, ni, p->nb0, b, pi, p->b0);
    else if (hidden && !p->hidden)
        snprintf(out, n, "%s of inv %" PRIu64 " ends at %" PRIu64 ", after %s of inv %" PRIu64 " ends at %" PRIu64
                         ": not hidden",
                 a, ni, p->a1, b, pi, p->b1);
    else
        snprintf(out, n, "ok");
}

/* The pairs as a table, the pid and inv columns as wide as their widest
 * cell (widen). */
static void overlap_table(const sp_overlap *ov, const sp_set *S, const char *ma, const char *mb, bool hidden)
{
    int wr = 5, wp = 10, wi = 8, wj = 8;
    char r[512];
    for (size_t i = 0; i < ov->npair; i++) {
        const sp_inv *x = &S->inv[ov->pair[i].prev];
        wr = widen(wr, len_u64(x->rank));
        wp = widen(wp, len_u64(x->pid));
        wi = widen(wi, len_u64(x->inv));
        wj = widen(wj, len_u64(S->inv[ov->pair[i].next].inv));
    }
    printf("%-*s %-*s %*s %*s  %s\n", wr, "rank", wp, "pid", wi, "inv N", wj, "inv N+1", "result");
    for (size_t i = 0; i < ov->npair; i++) {
        const sp_pair *p = &ov->pair[i];
        const sp_inv *x = &S->inv[p->prev];
        printf("%-*u %-*" PRIu64 " %*" PRIu64 " %*" PRIu64 "  ", wr, x->rank, wp, x->pid, wi, x->inv, wj,
               S->inv[p->next].inv);
        why(p, ma, mb, hidden, S, r, sizeof r);
        if (p->ok)
            printf("ok: %s starts %" PRIu64 " ns before %s of N ends\n", ma, p->b1 - p->a0, mb);
        else
            printf("FAILED: %s\n", r);
    }
}

int so_overlap(const so_ctx *o, const sp_overlap *ov, const char *a, const char *b, bool hidden)
{
    /* the names as typed, for the table and stderr: controls masked
     * (JSON escapes its own) */
    char *ma = strdup(a), *mb = strdup(b);
    if (!ma || !mb) {
        free(ma), free(mb);
        fprintf(stderr, "hbg spans: out of memory\n");
        return 2;
    }
    hbg__mask_controls(ma);
    hbg__mask_controls(mb);
    const sp_set *S = o->S;
    char r[512];
    if (o->fmt == SO_JSON) {
        jw w;
        if (!jw_init(&w, stdout)) {
            free(ma), free(mb);
            return 2;
        }
        json_head(o, &w, "overlap");
        jw_lit(&w, ", \"a\": ");
        jstr(&w, a);
        jw_lit(&w, ", \"b\": ");
        jstr(&w, b);
        jw_lit(&w, hidden ? ", \"hidden\": true" : ", \"hidden\": false");
        jw_lit(&w, ", \"missing\": ");
        jw_u64(&w, ov->nmissing);
        jw_lit(&w, ", \"pairs\": [");
        for (size_t i = 0; i < ov->npair; i++) {
            const sp_pair *p = &ov->pair[i];
            const sp_inv *x = &S->inv[p->prev];
            jw_lit(&w, i ? ", {\"rank\": " : "{\"rank\": ");
            jw_u64(&w, x->rank);
            jw_lit(&w, ", \"pid\": ");
            jw_u64(&w, x->pid);
            jw_lit(&w, ", \"prev_inv\": ");
            jw_u64(&w, x->inv);
            jw_lit(&w, ", \"next_inv\": ");
            jw_u64(&w, S->inv[p->next].inv);
            /* the spans' ends, as the CSV gives them: the table's margin
             * (b_end - a_start) and a failure's figures are these */
            const char *key[] = {"a_start", "a_end", "b_start", "b_end", "next_b_start"};
            const uint64_t at[] = {p->a0, p->a1, p->b0, p->b1, p->nb0};
            for (size_t k = 0; k < sizeof at / sizeof *at; k++) {
                jw_lit(&w, ", \"");
                jw_lit(&w, key[k]);
                jw_lit(&w, "\": ");
                jw_u64(&w, at[k]);
            }
            jw_lit(&w, p->ok ? ", \"ok\": true, \"why\": " : ", \"ok\": false, \"why\": ");
            why(p, a, b, hidden, S, r, sizeof r);
            jstr(&w, r);
            jw_lit(&w, "}");
        }
        jw_lit(&w, "], \"first_failing\": ");
        if (ov->first_fail != SIZE_MAX)
            jw_u64(&w, ov->first_fail);
        else
            jw_lit(&w, "null");
        json_tail(o, &w);
        json_flush(o, &w);
    } else if (o->fmt == SO_CSV) {
        printf("rank,pid,prev_inv,next_inv,a_start,a_end,b_start,b_end,next_b_start,ok\n");
        for (size_t i = 0; i < ov->npair; i++) {
            const sp_pair *p = &ov->pair[i];
            const sp_inv *x = &S->inv[p->prev];
            printf("%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
                   ",%d\n",
                   x->rank, x->pid, x->inv, S->inv[p->next].inv, p->a0, p->a1, p->b0, p->b1, p->nb0, p->ok);
        }
    } else {
        table_head(o);
        printf("\noverlap: %s of invocation N+1 against %s of invocation N, each rank's invocations in inv "
               "order%s\n",
               ma, mb, hidden ? "; hidden: A must also end inside B" : "");
        overlap_table(ov, S, ma, mb, hidden);
        if (ov->nmissing)
            printf("%zu invocation%s without %s or %s (host clock) not checked\n", ov->nmissing,
                   ov->nmissing == 1 ? "" : "s", ma, mb);
    }
    int rc = 1;
    if (!ov->npair) {
        fprintf(stderr, "hbg spans: %s: no two adjacent invocations of one rank have both %s and %s: nothing to "
                        "check\n",
                o->L->path, ma, mb);
    } else if (ov->first_fail != SIZE_MAX) {
        const sp_pair *p = &ov->pair[ov->first_fail];
        const sp_inv *x = &S->inv[p->prev];
        why(p, ma, mb, hidden, S, r, sizeof r);
        fprintf(stderr, "hbg spans: overlap assertion failed: rank %u (pid %" PRIu64 ") inv %" PRIu64 " -> %" PRIu64
                        ": %s\n",
                x->rank, x->pid, x->inv, S->inv[p->next].inv, r);
    } else {
        if (ov->npair == 1) /* not "all 1 pairs" */
            fprintf(stderr, "hbg spans: overlap held for the one pair\n");
        else
            fprintf(stderr, "hbg spans: overlap held for all %zu pairs\n", ov->npair);
        rc = 0;
    }
    free(ma), free(mb);
    return rc;
}
