/* The records file is small next to the log (one line per pass), so each
 * line is handed to jansson; only the schema checks are ours. A file is
 * read in whole-line pieces (linereader.h): only its longest line is held
 * as text at once, never the file. */
#include "tools/records.h"
#include "tools/diag.h"
#include "tools/linereader.h"
#include "tools/text.h"
#include "util/vec.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* jansson holds integers as int64 and refuses a line with a larger one,
 * but the runtime writes uint64 values (a record's detail may be any 64-bit
 * value). So before parsing, an integer outside int64 is rewritten as a
 * string that starts with a NUL byte: "\u0000" and its digits, "\u0000-"
 * for a negative one, "\u0000+" for one past 64 bits. The line is then
 * parsed with NUL allowed in strings; a line that has a \u0000 of its own
 * is refused, so no string of the input can pose as a number. */
#define WIDE_MARK "\"\\u0000"

/* 1: [p, e) is an integer token that fits int64; 0: an integer that does
 * not; -1: not an integer (a real, or not a number). */
static int fits_i64(const char *p, const char *e)
{
    bool neg = *p == '-';
    const char *d = p + neg;
    for (const char *q = d; q < e; q++)
        if (*q < '0' || *q > '9')
            return -1;
    if (d == e || (*d == '0' && e - d > 1))
        return -1; /* no JSON integer: jansson names it */
    static const char max[] = "9223372036854775807", min[] = "9223372036854775808";
    size_t n = (size_t)(e - d);
    if (n != 19)
        return n < 19;
    return memcmp(d, neg ? min : max, 19) <= 0;
}

/* Past 18446744073709551615? (d: digits only) */
static bool past_u64(const char *d, size_t n)
{
    return n > 20 || (n == 20 && memcmp(d, "18446744073709551615", 20) > 0);
}

/* Appends the rewritten token to out (room for it is there). */
static size_t put_wide(char *out, const char *p, const char *e)
{
    size_t k = strlen(WIDE_MARK);
    memcpy(out, WIDE_MARK, k);
    if (*p == '-')
        out[k++] = '-';
    else if (past_u64(p, (size_t)(e - p)))
        out[k++] = '+';
    else
        memcpy(out + k, p, (size_t)(e - p)), k += (size_t)(e - p);
    out[k++] = '"';
    return k;
}

enum { WIDE_OK, WIDE_OOM, WIDE_NUL };

/* The line with its integers outside int64 rewritten (malloc'd, length in
 * *outn), or NULL when nothing needs it; *st says WIDE_OOM when the copy
 * could not be made, WIDE_NUL when a string of the line holds \u0000. */
static char *widen(const char *s, size_t n, size_t *outn, int *st)
{
    char *out = NULL;
    size_t k = 0, from = 0;
    bool str = false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (str) {
            if (c == '\\' && i + 5 < n && !memcmp(s + i + 1, "u0000", 5)) {
                free(out);
                *st = WIDE_NUL;
                return NULL;
            }
            if (c == '\\')
                i++;
            else if (c == '"')
                str = false;
            continue;
        }
        if (c == '"') {
            str = true;
            continue;
        }
        if (c != '-' && (c < '0' || c > '9'))
            continue;
        size_t j = i + 1;
        while (j < n && s[j] != ',' && s[j] != ']' && s[j] != '}' && s[j] != ' ' && s[j] != '\t' &&
               s[j] != '\r' && s[j] != '\n')
            j++;
        if (fits_i64(s + i, s + j) == 0) {
            if (!out && !(out = malloc(n * 2 + 16))) {
                *st = WIDE_OOM;
                return NULL;
            }
            memcpy(out + k, s + from, i - from);
            k += i - from;
            k += put_wide(out + k, s + i, s + j);
            from = j;
        }
        i = j - 1;
    }
    if (out) {
        memcpy(out + k, s + from, n - from);
        *outn = k + n - from;
    }
    return out;
}

/* A value widen() rewrote: its digits, or why it is no uint64. */
static bool wide_u64(json_t *v, uint64_t *out, const char **why)
{
    const char *t = json_string_value(v);
    if (t[1] == '-' || t[1] == '+') {
        *why = t[1] == '-' ? "negative" : "a number past 64 bits";
        return false;
    }
    uint64_t x = 0;
    for (const char *q = t + 1; *q; q++)
        x = x * 10 + (uint64_t)(*q - '0');
    *out = x;
    return true;
}

static bool get_u64(json_t *o, const char *key, uint64_t *out, const char **why)
{
    json_t *v = json_object_get(o, key);
    if (!v) {
        *why = "missing";
        return false;
    }
    if (json_is_string(v) && json_string_length(v) > 1 && json_string_value(v)[0] == 0)
        return wide_u64(v, out, why);
    if (!json_is_integer(v)) {
        *why = "not an integer";
        return false;
    }
    json_int_t x = json_integer_value(v);
    if (x < 0) {
        *why = "negative";
        return false;
    }
    *out = (uint64_t)x;
    return true;
}

/* The phase's index, or -1 with *why saying which limit it broke. */
static int phase_id(rc_file *f, const char *s, size_t n, const char **why)
{
    for (int i = 0; i < f->nphase; i++)
        if (strlen(f->phase[i]) == n && memcmp(f->phase[i], s, n) == 0)
            return i;
    *why = "is not a name of [a-z0-9_]";
    if (n == 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
            return -1;
    }
    if (n > RC_MAX_NAME) {
        *why = "is longer than " RC_STR(RC_MAX_NAME) " characters (the reader's limit)";
        return -1;
    }
    if (f->nphase == RC_MAX_PHASES) {
        *why = "is one distinct phase name too many for the file (the reader's limit is " RC_STR(RC_MAX_PHASES) ")";
        return -1;
    }
    memcpy(f->phase[f->nphase], s, n);
    f->phase[f->nphase][n] = 0;
    return f->nphase++;
}

/* jansson does not always say that it ran out of memory: a string it
 * cannot allocate in its lexer comes back as "invalid token", a syntax
 * error, and the line would be skipped as malformed (under a 100 MiB
 * address space, one run in four). So jansson allocates through
 * count_malloc, which counts the allocations refused: a parse that saw one
 * failed for want of memory, whatever its error says (or its value: see
 * parse_line). Set before each parse (two pointers, the same every
 * time); jansson frees with free, as before, so a value allocated by
 * plain malloc is freed as it should be. The count is per thread: a
 * reader in another thread does not see this one's. */
static _Thread_local unsigned long refused;

static void *count_malloc(size_t n)
{
    void *p = malloc(n);
    if (!p)
        refused++;
    return p;
}

/* 1 ok, 0 bad line (warned), -1 out of memory; 2, with quiet, for a line
 * that is no JSON at all (not warned: the caller reads it in pieces). */
static int parse_line(rc_file *f, const char *s, size_t n, size_t lineno, dg_list *warn, bool quiet)
{
    json_error_t je;
    size_t wn = 0;
    int wst = WIDE_OK;
    char *wide = widen(s, n, &wn, &wst);
    if (wst == WIDE_OOM)
        return -1;
    if (wst == WIDE_NUL) {
        dg_add(warn, "%s:%zu: a string holds \\u0000 (a NUL character, which no field may have); line skipped",
               f->path, lineno);
        return 0;
    }
    json_set_alloc_funcs(count_malloc, free);
    unsigned long refused0 = refused;
    json_t *o = wide ? json_loadb(wide, wn, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je)
                     : json_loadb(s, n, JSON_REJECT_DUPLICATES, &je);
    free(wide);
    /* Running out of memory is not the line's fault: the command must fail,
     * not skip the line. jansson names it in some paths, in others fails
     * without naming any error, and in its lexer calls it a syntax error:
     * the refused allocation is what tells (count_malloc). */
    if (refused != refused0) {
        /* even a parse that returned a value: jansson does not check
         * every allocation it makes, and a value built past one that
         * failed is not to be trusted */
        json_decref(o);
        return -1;
    }
    if (!o && (json_error_code(&je) == json_error_out_of_memory || je.text[0] == 0))
        return -1;
    if (!o) {
        if (quiet)
            return 2;
        dg_add(warn, "%s:%zu: not a JSON object (%s, column %d); line skipped", f->path, lineno, je.text, je.column);
        return 0;
    }
    int rc = 0;
    const char *why = NULL;
    rc_line L = {0};
    L.lineno = lineno;
    if (!json_is_object(o)) {
        dg_add(warn, "%s:%zu: expected a JSON object; line skipped", f->path, lineno);
        goto out;
    }
    static const char *const keys[3] = {"pid", "inv", "dropped"};
    uint64_t *dst[3] = {&L.pid, &L.inv, &L.dropped};
    for (int i = 0; i < 3; i++)
        if (!get_u64(o, keys[i], dst[i], &why)) {
            dg_add(warn, "%s:%zu: \"%s\" is %s (expected an integer >= 0); line skipped", f->path, lineno, keys[i],
                   why);
            goto out;
        }
    json_t *clk = json_object_get(o, "clock");
    if (clk && (!json_is_string(clk) || strcmp(json_string_value(clk), "host_monotonic_ns") != 0)) {
        dg_add(warn, "%s:%zu: \"clock\" is not \"host_monotonic_ns\"; line skipped", f->path, lineno);
        goto out;
    }
    json_t *arr = json_object_get(o, "records");
    if (!json_is_array(arr)) {
        dg_add(warn, "%s:%zu: \"records\" is missing or not an array; line skipped", f->path, lineno);
        goto out;
    }
    size_t nr = json_array_size(arr);
    if (!vec_grow((void **)&f->rec, &f->caprec, f->nrec + nr, sizeof *f->rec)) {
        rc = -1;
        goto out;
    }
    L.first = f->nrec;
    for (size_t i = 0; i < nr; i++) {
        json_t *r = json_array_get(arr, i);
        rc_rec R = {0};
        static const char *const rk[4] = {"start_ns", "end_ns", "detail", "tid"};
        uint64_t *rd[4] = {&R.start, &R.end, &R.detail, &R.tid};
        if (!json_is_object(r)) {
            dg_add(warn, "%s:%zu: record %zu is not an object; line skipped", f->path, lineno, i);
            goto out;
        }
        json_t *ph = json_object_get(r, "phase");
        if (!json_is_string(ph)) {
            dg_add(warn, "%s:%zu: record %zu has no \"phase\" string; line skipped", f->path, lineno, i);
            goto out;
        }
        int id = phase_id(f, json_string_value(ph), json_string_length(ph), &why);
        if (id < 0) {
            dg_add(warn, "%s:%zu: record %zu: phase \"%.40s%s\" %s; line skipped", f->path, lineno, i,
                   json_string_value(ph), json_string_length(ph) > 40 ? "..." : "", why);
            goto out;
        }
        R.phase = (uint16_t)id;
        for (int k = 0; k < 4; k++)
            if (!get_u64(r, rk[k], rd[k], &why)) {
                dg_add(warn, "%s:%zu: record %zu: \"%s\" is %s (expected an integer >= 0); line skipped", f->path,
                       lineno, i, rk[k], why);
                goto out;
            }
        if (R.end < R.start) {
            dg_add(warn, "%s:%zu: record %zu ends before it starts; line skipped", f->path, lineno, i);
            goto out;
        }
        f->rec[L.first + i] = R;
    }
    L.n = nr;
    if (!vec_grow((void **)&f->line, &f->capline, f->nline + 1, sizeof *f->line)) {
        rc = -1;
        goto out;
    }
    f->nrec += nr;
    f->line[f->nline++] = L;
    rc = 1;
out:
    json_decref(o);
    return rc;
}

static int by_key(const void *a, const void *b)
{
    const rc_line *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->inv != y->inv)
        return x->inv < y->inv ? -1 : 1;
    return x->lineno < y->lineno ? -1 : x->lineno > y->lineno;
}

static int by_lineno(const void *a, const void *b)
{
    const rc_line *x = a, *y = b;
    return x->lineno < y->lineno ? -1 : x->lineno > y->lineno;
}

/* A pass writes one records line: a second line of the same (pid, inv)
 * (a file appended to twice, two runs put together) is skipped with a
 * warning rather than drawn over the first. */
static void drop_duplicates(rc_file *f, dg_list *warn)
{
    if (f->nline < 2)
        return;
    qsort(f->line, f->nline, sizeof *f->line, by_key);
    size_t k = 1;
    for (size_t i = 1; i < f->nline; i++) {
        const rc_line *a = &f->line[k - 1], *b = &f->line[i];
        if (a->pid == b->pid && a->inv == b->inv) {
            dg_add(warn, "%s:%zu: a second records line for pid=%" PRIu64 " inv=%" PRIu64
                   " (the first is line %zu); line skipped", f->path, b->lineno, b->pid, b->inv, a->lineno);
            f->nbad++;
            continue;
        }
        f->line[k++] = *b;
    }
    f->nline = k;
    qsort(f->line, f->nline, sizeof *f->line, by_lineno);
}

typedef struct feed {
    rc_file *f;
    dg_list *warn;
    size_t lineno;
    bool oom;
    const size_t *cut;      /* the reader's count of lines cut (NULL: none) */
    size_t cut_seen;
    size_t first_cut;       /* the line number of the first cut line */
    bool seen_nl;           /* a '\n' came: the file's lines end in it */
} feed;

/* The first `{"pid":` in [s, t), or NULL. */
static const char *line_start(const char *s, const char *t)
{
    static const char mark[] = "{\"pid\":";
    const size_t n = sizeof mark - 1;
    for (const char *c = s; (size_t)(t - c) >= n && (c = memchr(c, '{', (size_t)(t - c) - n + 1)); c++)
        if (!memcmp(c, mark, n))
            return c;
    return NULL;
}

/* Parses [s, t) as the current line, counting it when bad: parse_line's
 * answer (-1 also noted as out of memory). */
static int take_line(feed *fd, const char *s, const char *t, bool quiet)
{
    int r = parse_line(fd->f, s, (size_t)(t - s), fd->lineno, fd->warn, quiet);
    if (r < 0)
        fd->oom = true;
    if (r == 0)
        fd->f->nbad++;
    return r;
}

/* Parses the whole lines of [buf, buf + len), numbering them on from the
 * last; false once out of memory. A line cut to the reader's bound comes
 * alone, counted before it is handed over: it is skipped, not parsed (its
 * start may be a valid line of its own). */
static bool feed_lines(void *ctx, const char *buf, size_t len)
{
    feed *fd = ctx;
    if (fd->cut && *fd->cut != fd->cut_seen) {
        fd->cut_seen = *fd->cut;
        fd->lineno++;
        if (!fd->first_cut)
            fd->first_cut = fd->lineno;
        fd->f->nbad++;
        return true;
    }
    const char *p = buf, *e = buf + len;
    /* A file without a '\n' so far has lines that end in CR alone (the
     * reader hands those over whole or cut at a CR): its CRs end its
     * lines. Elsewhere a CR is a CRLF's, or JSON's whitespace, even in
     * the last line of an LF file, handed over alone when it has no '\n'
     * of its own. */
    fd->seen_nl = fd->seen_nl || memchr(buf, '\n', len);
    char eol = fd->seen_nl ? '\n' : '\r';
    while (p < e) {
        fd->lineno++;
        const char *nl = memchr(p, eol, (size_t)(e - p));
        const char *le = nl ? nl : e;
        const char *s = p, *t = le;
        /* A UTF-8 byte order mark, which an editor that saved the file
         * (with CRLF line ends, say) may put first, is no part of the
         * first line: read as JSON it made the line "not a JSON object",
         * or one "cut" at its `{"pid":`. */
        if (fd->lineno == 1 && t - s >= 3 && !memcmp(s, "\xef\xbb\xbf", 3))
            s += 3;
        while (s < t && (*s == ' ' || *s == '\t' || *s == '\r'))
            s++;
        while (t > s && (t[-1] == ' ' || t[-1] == '\t' || t[-1] == '\r'))
            t--;
        /* A writer killed inside its one write(2) of a line leaves it cut,
         * and the next line appended to the file runs on from the cut: a
         * line that is no JSON, with a `{"pid":` past its start, is read
         * in pieces, each from a `{"pid":` on, so that the intact line
         * after the cut is kept. (Inside a JSON string that text cannot
         * stand, its quotes unescaped; a valid line holding it elsewhere,
         * as an object of a key of its own, is read whole.) */
        int r = t > s ? take_line(fd, s, t, line_start(s + 1, t) != NULL) : 1;
        if (r < 0)
            return false;
        for (const char *end; r == 2 && s < t; s = end) { /* no JSON as a whole: in pieces */
            const char *next = line_start(s + 1, t);
            end = next ? next : t;
            if (next)
                dg_add(fd->warn,
                       "%s:%zu: a records line runs into another at column %zu (a writer stopped mid-line, e.g. "
                       "a rank killed): the two are read apart",
                       fd->f->path, fd->lineno, (size_t)(next - p) + 1);
            if (take_line(fd, s, end, false) < 0)
                return false;
        }
        p = nl ? nl + 1 : e;
    }
    return true;
}

hbg_status rc_parse(rc_file *f, const char *path, const char *buf, size_t len, dg_list *warn)
{
    memset(f, 0, sizeof *f);
    f->path = path;
    feed fd = {f, warn, 0, false, NULL, 0, 0, false};
    if (!feed_lines(&fd, buf, len))
        return HBG_E_NOMEM;
    drop_duplicates(f, warn);
    return HBG_OK;
}

hbg_status rc_read_fd(rc_file *f, const char *path, int fd, size_t max_line, dg_list *warn, char *err,
                      size_t errlen)
{
    memset(f, 0, sizeof *f);
    f->path = path;
    size_t cut = 0, maxl = max_line ? max_line : RC_MAX_LINE;
    feed c = {f, warn, 0, false, &cut, 0, 0, false};
    int e = lr_read_lines(fd, 0, maxl, feed_lines, &c, &cut);
    maxl = maxl > LR_CHUNK ? maxl : LR_CHUNK; /* the reader's bound: at least a piece */
    if (c.oom || e == ENOMEM) {
        snprintf(err, errlen, "%s: out of memory", path);
        return HBG_E_NOMEM;
    }
    if (e) {
        snprintf(err, errlen, "cannot read %s: %s", dg_shown(path), strerror(e));
        return HBG_E_IO;
    }
    if (cut) {
        char lim[32];
        if (maxl % ((size_t)1 << 20) == 0)
            snprintf(lim, sizeof lim, "%zu MiB", maxl >> 20);
        else
            snprintf(lim, sizeof lim, "%zu bytes", maxl);
        if (cut == 1)
            dg_add(warn,
                   "%s:%zu: a line longer than %s (the reader's limit) read as its first %s and skipped: no "
                   "records line is that long",
                   path, c.first_cut, lim, lim);
        else
            dg_add(warn,
                   "%s:%zu: %zu lines longer than %s (the reader's limit), this the first, read as their "
                   "first %s and skipped: no records line is that long",
                   path, c.first_cut, cut, lim, lim);
    }
    drop_duplicates(f, warn);
    return HBG_OK;
}

hbg_status rc_load(rc_file *f, const char *path, dg_list *warn, char *err, size_t errlen)
{
    memset(f, 0, sizeof *f);
    /* '-' is standard input, named <stdin> as a log read from it is */
    int fd = tx_open_log(path, &path, err, errlen);
    if (fd < 0)
        return HBG_E_IO;
    hbg_status st = rc_read_fd(f, path, fd, 0, warn, err, errlen);
    close(fd);
    return st;
}

typedef struct line_key {
    uint64_t pid, inv;
    size_t file, line;
} line_key;

static int by_pass_then_file(const void *a, const void *b)
{
    const line_key *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->inv != y->inv)
        return x->inv < y->inv ? -1 : 1;
    return x->file < y->file ? -1 : x->file > y->file;
}

hbg_status rc_drop_repeats(rc_file *f, size_t n, dg_list *warn)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += f[i].nline;
    if (n < 2 || total < 2)
        return HBG_OK;
    line_key *k = malloc(total * sizeof *k);
    if (!k)
        return HBG_E_NOMEM;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t l = 0; l < f[i].nline; l++)
            k[m++] = (line_key){f[i].line[l].pid, f[i].line[l].inv, i, l};
    /* a file holds a pass once (drop_duplicates): equal passes are of
     * different files, the first file's first */
    qsort(k, m, sizeof *k, by_pass_then_file);
    for (size_t i = 1, first = 0; i < m; i++) {
        if (k[i].pid != k[first].pid || k[i].inv != k[first].inv) {
            first = i;
            continue;
        }
        rc_file *a = &f[k[first].file], *b = &f[k[i].file];
        rc_line *bl = &b->line[k[i].line];
        dg_add(warn,
               "%s:%zu: a second records line for pid=%" PRIu64 " inv=%" PRIu64 " (the first is %s:%zu); line skipped",
               b->path, bl->lineno, bl->pid, bl->inv, a->path, a->line[k[first].line].lineno);
        bl->lineno = 0; /* lines count from 1: this one is skipped */
    }
    free(k);
    for (size_t i = 0; i < n; i++) {
        size_t keep = 0;
        for (size_t l = 0; l < f[i].nline; l++)
            if (f[i].line[l].lineno)
                f[i].line[keep++] = f[i].line[l];
        f[i].nbad += f[i].nline - keep;
        f[i].nline = keep;
    }
    return HBG_OK;
}

void rc_free(rc_file *f)
{
    free(f->line);
    free(f->rec);
    f->line = NULL;
    f->rec = NULL;
    f->nline = f->nrec = 0;
}
