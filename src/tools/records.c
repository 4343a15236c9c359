/* The records file is small next to the log (one line per pass), so each
 * line is handed to jansson; only the schema checks are ours. */
#include "tools/records.h"
#include "tools/vec.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static bool get_u64(json_t *o, const char *key, uint64_t *out, const char **why)
{
    json_t *v = json_object_get(o, key);
    if (!v) {
        *why = "missing";
        return false;
    }
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

static int phase_id(rc_file *f, const char *s, size_t n)
{
    for (int i = 0; i < f->nphase; i++)
        if (strlen(f->phase[i]) == n && memcmp(f->phase[i], s, n) == 0)
            return i;
    if (f->nphase == RC_MAX_PHASES || n == 0 || n > 32)
        return -1;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
            return -1;
    }
    memcpy(f->phase[f->nphase], s, n);
    f->phase[f->nphase][n] = 0;
    return f->nphase++;
}

/* 1 ok, 0 bad line (warned), -1 out of memory */
static int parse_line(rc_file *f, const char *s, size_t n, size_t lineno, dg_list *warn)
{
    json_error_t je;
    json_t *o = json_loadb(s, n, JSON_REJECT_DUPLICATES, &je);
    /* Running out of memory is not the line's fault: the command must fail,
     * not skip the line. jansson names it in some paths; in others (a value
     * it cannot allocate) it fails without naming any error at all, while
     * every syntax error comes with its text. */
    if (!o && (json_error_code(&je) == json_error_out_of_memory || je.text[0] == 0))
        return -1;
    if (!o) {
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
        int id = phase_id(f, json_string_value(ph), json_string_length(ph));
        if (id < 0) {
            dg_add(warn, "%s:%zu: record %zu: phase is not a name of [a-z0-9_] (or too many distinct phases); line skipped",
                   f->path, lineno, i);
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

hbg_status rc_parse(rc_file *f, const char *path, const char *buf, size_t len, dg_list *warn)
{
    memset(f, 0, sizeof *f);
    f->path = path;
    size_t lineno = 0;
    const char *p = buf, *e = buf + len;
    while (p < e) {
        lineno++;
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        const char *le = nl ? nl : e;
        const char *s = p, *t = le;
        while (s < t && (*s == ' ' || *s == '\t' || *s == '\r'))
            s++;
        while (t > s && (t[-1] == ' ' || t[-1] == '\t' || t[-1] == '\r'))
            t--;
        if (t > s) {
            int r = parse_line(f, s, (size_t)(t - s), lineno, warn);
            if (r < 0)
                return HBG_E_NOMEM;
            if (r == 0)
                f->nbad++;
        }
        p = nl ? nl + 1 : e;
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
