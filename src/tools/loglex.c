/* The lexer is the hot loop of `hbg phases` and `hbg timeline`: one memchr
 * per '=' in the log, a few byte compares per '=', and a tokenizer that
 * touches each byte of a recognised record once. No regular expressions,
 * no per-line allocation. */
#include "tools/loglex.h"

#include <stdio.h>
#include <string.h>

/* Byte classes for the tokenizer. */
enum { C_TEXT = 0, C_SPACE, C_END, C_BRACKET };
static unsigned char cls[256];
static unsigned char kstop[256];   /* bytes that end a key: '=', spaces, line ends */
static unsigned char segch[256];   /* the bytes of a segment name: [a-z0-9_] */

static void init_cls(void)
{
    if (cls[' '] == C_SPACE)
        return;
    kstop['='] = kstop[' '] = kstop['\t'] = kstop['\n'] = kstop['\r'] = kstop[0] = 1;
    cls[' '] = C_SPACE;
    cls['\t'] = C_SPACE;
    cls['\n'] = C_END;
    cls['\r'] = C_END;
    cls[0] = C_END;
    cls['['] = C_BRACKET;
    for (int ch = 'a'; ch <= 'z'; ch++)
        segch[ch] = 1;
    for (int ch = '0'; ch <= '9'; ch++)
        segch[ch] = 1;
    segch['_'] = 1;
}

static const char PREFIX[] = "[mono_ns=";
#define PREFIX_LEN (sizeof PREFIX - 1)

static inline bool at_prefix(const char *p, const char *e)
{
    return (size_t)(e - p) >= PREFIX_LEN && memcmp(p, PREFIX, PREFIX_LEN) == 0;
}

int lx_parse_u64(lx_slice v, uint64_t *out)
{
    if (v.n == 0)
        return -1;
    uint64_t x = 0;
    for (size_t i = 0; i < v.n; i++) {
        unsigned d = (unsigned char)v.p[i] - '0';
        if (d > 9)
            return -1;
        if (x >= 1844674407370955161ull && (x > 1844674407370955161ull || d > 5)) {
            /* keep scanning: "123abc" past 64 bits is still not a number */
            for (size_t j = i; j < v.n; j++)
                if ((unsigned char)v.p[j] - '0' > 9)
                    return -1;
            return -2;
        }
        x = x * 10 + d;
    }
    *out = x;
    return 0;
}

typedef struct cur {
    const char *p, *e;
    bool cr_lines;  /* the text has no '\n': its lines end in CR alone */
    bool at_next;   /* p is at the next record's start: scan on from there */
} cur;

/* Whether the line-end byte at p (C_END) ends the line: a '\n'; a '\r'
 * (or several) before a '\n' or at the end of the text (CRLF); any '\r'
 * in a text of CR-only line ends, which has no '\n' at all. A NUL, or a
 * CR before anything else where lines end in '\n', is inside a line: a
 * record it cut short would otherwise pass for a whole one, its last
 * value cut too ("dur_ns=7" of "dur_ns=7\r38382"). */
static inline bool at_line_end(const char *p, const char *e, bool cr_lines)
{
    if (*p == '\n')
        return true;
    if (*p != '\r')
        return false;
    if (cr_lines)
        return true;
    while (p < e && *p == '\r')
        p++;
    return p >= e || *p == '\n';
}

/* The complaint about a record next_tok stopped inside (it returned -1 at
 * c->p), when a byte inside the line stopped it; NULL otherwise. */
static const char *cut_inside(const cur *c)
{
    if (c->p >= c->e || cls[(unsigned char)*c->p] != C_END || at_line_end(c->p, c->e, c->cr_lines))
        return NULL;
    return *c->p ? "a CR byte inside the record (the line is cut or corrupt)"
                 : "a NUL byte inside the record (the line is cut or corrupt)";
}

/* cut_inside's complaint, or `otherwise`. */
static const char *torn_why(const cur *c, const char *otherwise)
{
    const char *why = cut_inside(c);
    return why ? why : otherwise;
}

/* The value of the token next_tok last returned, as a number: 0 a decimal
 * integer that fits 64 bits, -1 not a decimal integer, -2 past 64 bits. */
typedef struct numv {
    uint64_t x;
    int st;
} numv;

/* Next "key=value" token of a record, its value parsed as a number on the
 * way. 1: a token; 0: the record ended; -1: a token without '=' (the
 * record is not in the grammar). */
static inline int next_tok(cur *c, lx_slice *k, lx_slice *v, numv *nv)
{
    const char *p = c->p, *e = c->e;
    while (p < e && cls[(unsigned char)*p] == C_SPACE)
        p++;
    if (p >= e || (*p == '[' && at_prefix(p, e))) {
        c->p = p;
        return 0;
    }
    if (cls[(unsigned char)*p] == C_END) {
        c->p = p;
        return at_line_end(p, e, c->cr_lines) ? 0 : -1;
    }
    const char *ks = p;
    while (p < e && !kstop[(unsigned char)*p])
        p++;
    if (p >= e || *p != '=' || p == ks) {
        c->p = ks; /* the offending token, for the message */
        return -1;
    }
    k->p = ks;
    k->n = (size_t)(p - ks);
    p++;
    const char *vs = p;
    uint64_t x = 0;
    int st = 0;
    for (; p < e; p++) {
        unsigned d = (unsigned)(unsigned char)*p - '0';
        if (d > 9)
            break;
        x = x * 10 + d;
    }
    if (p - vs > 19) {
        /* 20 digits or more may not fit: parse again, checking each step */
        x = 0;
        for (const char *q = vs; q < p; q++) {
            unsigned d = (unsigned)(unsigned char)*q - '0';
            if (x >= 1844674407370955161ull && (x > 1844674407370955161ull || d > 5))
                st = -2;
            x = x * 10 + d;
        }
    }
    if (p == vs)
        st = -1;
    if (p < e && cls[(unsigned char)*p] != C_SPACE && cls[(unsigned char)*p] != C_END) {
        /* not (only) digits: an opaque value, up to the next space */
        for (; p < e; p++) {
            unsigned char cl = cls[(unsigned char)*p];
            if (cl == C_TEXT) {
                st = -1;
                continue;
            }
            if (cl == C_BRACKET) {
                if (at_prefix(p, e))
                    break;
                st = -1;
                continue;
            }
            break;
        }
    }
    v->p = vs;
    v->n = (size_t)(p - vs);
    nv->x = x;
    nv->st = st;
    c->p = p;
    return 1;
}

/* Skips the rest of a malformed record so scanning resumes after it. */
static const char *skip_record(const char *p, const char *e)
{
    for (; p < e; p++) {
        unsigned char cl = cls[(unsigned char)*p];
        if (cl == C_END)
            return p;
        if (cl == C_BRACKET && at_prefix(p, e))
            return p;
    }
    return e;
}

/* The thread handle of the prefix "[mono_ns=<d>][T0x<hex>]" at p. A log's
 * lines come from a few threads, so the handle's text is first compared
 * with the last one parsed (c, may be NULL). */
static bool parse_thread(const char *p, const char *e, uint64_t *out, lx_thread_cache *c)
{
    p += PREFIX_LEN;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* past the stamp's digits eight at a time: the high bit of each byte
     * that is not a digit, the lowest of them exact (carries run upwards) */
    if (e - p >= 16) {
        const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
        uint64_t w, m;
        memcpy(&w, p, 8);
        m = ((w + ones * 0x46) | (w - ones * '0') | w) & highs;
        if (m) {
            p += __builtin_ctzll(m) >> 3;
        } else {
            memcpy(&w, p + 8, 8);
            m = ((w + ones * 0x46) | (w - ones * '0') | w) & highs;
            p += m ? 8 + (__builtin_ctzll(m) >> 3) : 16;
        }
    }
#endif
    while (p < e && *p >= '0' && *p <= '9')
        p++;
    if (e - p < 6 || memcmp(p, "][T0x", 5) != 0) {
        /* a time gone wrong ("[mono_ns=2x0]"; the lexer calls the record
         * malformed): its thread still names the pass it is charged to */
        while (e - p >= 6 && memcmp(p, "][T0x", 5) != 0)
            p++;
        if (e - p < 6)
            return false;
    }
    p += 5;
    if (c && c->n && (size_t)(e - p) > c->n && p[c->n] == ']' && memcmp(p, c->text, c->n) == 0) {
        *out = c->val;
        return true;
    }
    /* one table look per digit: every line of the original runtime's logs
     * asks for its thread */
    static const signed char hexv[256] = {
        ['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7, ['7'] = 8, ['8'] = 9,
        ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
        ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
    };
    uint64_t x = 0;
    const char *h0 = p;
    for (; p < e && *p != ']'; p++) {
        int d = hexv[(unsigned char)*p];
        if (!d)
            return false;
        x = (x << 4) | (unsigned)(d - 1);
    }
    if (p >= e || p == h0 || p - h0 > 16)
        return false;
    *out = x;
    if (c) {
        c->n = (uint8_t)(p - h0);
        memcpy(c->text, h0, c->n);
        c->val = x;
    }
    return true;
}

bool lx_thread(const lx_rec *r, lx_thread_cache *c, uint64_t *out)
{
    *out = 0;
    return r->prefix && parse_thread(r->prefix, r->mark, out, c);
}

bool lx_prefix_mono(const lx_rec *r, uint64_t *out)
{
    if (!r->prefix || !at_prefix(r->prefix, r->mark))
        return false;
    const char *p = r->prefix + PREFIX_LEN, *e = memchr(p, ']', (size_t)(r->mark - p));
    return e && lx_parse_u64((lx_slice){p, (size_t)(e - p)}, out) == 0;
}

/* Fills a numeric field; returns NULL or the complaint. */
static const char *set_num(lx_slice k, lx_slice v, const numv *nv, uint64_t *dst, char *msg, size_t mlen)
{
    if (nv->st == 0) {
        *dst = nv->x;
        return NULL;
    }
    if (nv->st == -2)
        snprintf(msg, mlen, "%.*s= is a number past 64 bits", (int)k.n, k.p);
    else
        snprintf(msg, mlen, "expected %.*s=<decimal integer>, found %.*s=%.*s", (int)k.n, k.p, (int)k.n, k.p,
                 (int)(v.n > 24 ? 24 : v.n), v.p);
    return msg;
}

/* The complaint of a key given twice in one record: which of its values
 * is meant cannot be told, and taking the last would let a torn or doubled
 * write change a figure without a word. */
static __attribute__((cold, noinline)) const char *twice(lx_slice k, char *msg, size_t mlen)
{
    snprintf(msg, mlen, "%.*s= appears twice in the record", (int)(k.n > 24 ? 24 : k.n), k.p);
    return msg;
}

static void add_attr(lx_rec *r, lx_slice k, lx_slice v, const numv *nv, const char **bad, char *msg, size_t mlen)
{
    /* The keys seen so far, one bit each of 64 by length and first and
     * last byte: most records' keys all differ there, so the attributes
     * are compared only when a bit is already set. */
    uint64_t bit = 1ull << ((k.n * 7u + (unsigned char)k.p[0] * 3u + (unsigned char)k.p[k.n - 1]) & 63u);
    if (r->attr_keys & bit)
        for (int i = 0; i < r->nattr; i++) {
            lx_slice o = r->attr[i].key;
            if (o.n == k.n && memcmp(o.p, k.p, k.n) == 0 && !*bad)
                *bad = twice(k, msg, mlen);
        }
    r->attr_keys |= bit;
    if (r->nattr == LX_MAX_ATTRS) {
        if (!*bad) {
            snprintf(msg, mlen, "more than %d attributes (the most the tools read on one line)", LX_MAX_ATTRS);
            *bad = msg;
        }
        return;
    }
    lx_attr *a = &r->attr[r->nattr++];
    a->key = k;
    a->val = v;
    a->num = nv->x;
    a->is_num = nv->st == 0;
    if (nv->st == -2 && !*bad) {
        snprintf(msg, mlen, "%.*s= is a number past 64 bits", (int)k.n, k.p);
        *bad = msg;
    }
}

/* bind phase=<seg> start_ns= dur_ns= <attrs> [pid= inv=]
 * host-orch phase=<kind> total_ns= count= detail_sum= dropped= [timed= pid= inv=]
 * (other keys, timed= among them, are kept as the line's attributes) */
static const char *lex_phase(lx_rec *r, cur *c, char *msg, size_t mlen)
{
    const char *bad = NULL;
    lx_slice k, v;
    numv nv;
    /* the value right after "phase=" */
    const char *p = c->p;
    const char *s = p;
    /* a valid name ends at the first byte outside [a-z0-9_]; only an
     * invalid one needs the second look */
    while (p < c->e && segch[(unsigned char)*p])
        p++;
    bool valid = p - s <= LX_MAX_NAME && p > s, long_name = p - s > LX_MAX_NAME;
    if (p < c->e && cls[(unsigned char)*p] == C_TEXT) {
        valid = long_name = false;
        while (p < c->e && cls[(unsigned char)*p] == C_TEXT)
            p++;
    }
    r->name.p = s;
    r->name.n = (size_t)(p - s);
    r->name_ok = valid;
    c->p = p;
    if (long_name) { /* a name of the grammar, past what the tools hold */
        snprintf(msg, mlen, "phase=%.24s... is a name of %zu characters; the tools read names of at most %d",
                 r->name.p, r->name.n, LX_MAX_NAME);
        return msg;
    }
    if (!valid) {
        snprintf(msg, mlen, "expected phase=<name of [a-z0-9_]>, found phase=%.*s",
                 (int)(r->name.n > 24 ? 24 : r->name.n), r->name.p);
        return msg;
    }
    /* The line ends with the name: it may be cut inside it ("arena" of
     * "arena_build"), so it names no segment, neither a known one the
     * pass would be charged for nor an unknown one to report. */
    if (p >= c->e || (cls[(unsigned char)*p] == C_END && at_line_end(p, c->e, c->cr_lines))) {
        r->name_ok = false;
        snprintf(msg, mlen, "the line ends after phase=%.*s (cut short: expected %s)",
                 (int)(r->name.n > 24 ? 24 : r->name.n), r->name.p,
                 r->kind == LX_BIND ? "start_ns= dur_ns=" : "total_ns= count= detail_sum= dropped=");
        return msg;
    }
    /* A NUL or CR inside the line right after the name cuts it
     * ("ar\0ena_build"): what was read names no segment either. The byte
     * itself is complained of below, as inside any record. */
    if (cls[(unsigned char)*p] == C_END)
        r->name_ok = false;
    bool s_start = false, s_dur = false, s_total = false, s_count = false, s_dsum = false, s_drop = false;
    bool s_pid = false, s_inv = false;
    const char *attr_begin = NULL, *attr_end = NULL;
    int t;
    bool bind = r->kind == LX_BIND;
    char torn[96] = ""; /* the first token that is no key=value, if any */
    while ((t = next_tok(c, &k, &v, &nv)) != 0) {
        if (t < 0) {
            /* The record is malformed, but its pid= and inv= may still
             * follow: read on to the line's end, so that the line is
             * charged to its own pass (passes.c) rather than opening one. */
            if (!torn[0]) {
                const char *why = cut_inside(c);
                size_t n = 0;
                while (!why && c->p + n < c->e && n < 24 && cls[(unsigned char)c->p[n]] != C_SPACE &&
                       cls[(unsigned char)c->p[n]] != C_END)
                    n++;
                if (why)
                    snprintf(torn, sizeof torn, "%s", why);
                else
                    snprintf(torn, sizeof torn, "expected key=value, found '%.*s'", (int)n, c->p);
            }
            const char *q = c->p;
            if (q < c->e && cls[(unsigned char)*q] == C_END)
                q++; /* the NUL or CR inside the line */
            while (q < c->e && cls[(unsigned char)*q] != C_SPACE && cls[(unsigned char)*q] != C_END &&
                   !(*q == '[' && at_prefix(q, c->e)))
                q++;
            c->p = q;
            continue;
        }
        const char *e = NULL;
        uint64_t *dst = NULL;
        bool *seen = NULL; /* dst's s_ flag */
        if (torn[0] && lx_slice_eq(k, "phase")) {
            /* reading on, another record's "phase=" on the same line:
             * this one ends before it, and the scan finds that one */
            c->p = k.p;
            c->at_next = true;
            break;
        }
        switch (k.n) {
        case 3:
            if (k.p[0] == 'p' && k.p[1] == 'i' && k.p[2] == 'd') {
                dst = &r->pid, seen = &s_pid;
                r->has_pid = true;
            } else if (k.p[0] == 'i' && k.p[1] == 'n' && k.p[2] == 'v') {
                dst = &r->inv, seen = &s_inv;
                r->has_inv = true;
            }
            break;
        case 5:
            if (!bind && memcmp(k.p, "count", 5) == 0) {
                dst = &r->count, seen = &s_count;
            }
            break;
        case 6:
            if (bind && memcmp(k.p, "dur_ns", 6) == 0) {
                dst = &r->dur, seen = &s_dur;
            }
            break;
        case 7:
            if (!bind && memcmp(k.p, "dropped", 7) == 0) {
                dst = &r->dropped, seen = &s_drop;
            }
            break;
        case 8:
            if (bind && memcmp(k.p, "start_ns", 8) == 0) {
                dst = &r->start, seen = &s_start;
            } else if (!bind && memcmp(k.p, "total_ns", 8) == 0) {
                dst = &r->total_ns, seen = &s_total;
            }
            break;
        case 10:
            if (!bind && memcmp(k.p, "detail_sum", 10) == 0) {
                dst = &r->detail_sum, seen = &s_dsum;
            }
            break;
        }
        if (!dst && k.n == 5 && lx_slice_eq(k, "phase")) {
            e = twice(k, msg, mlen); /* after the name, not another record's (torn[] is empty) */
        } else if (dst) {
            e = *seen ? twice(k, msg, mlen) : set_num(k, v, &nv, dst, msg, mlen);
            *seen = true;
            /* a pid or inv that did not parse names no pass */
            if (e && dst == &r->pid)
                r->has_pid = false;
            else if (e && dst == &r->inv)
                r->has_inv = false;
        } else {
            if (!attr_begin)
                attr_begin = k.p;
            attr_end = v.p + v.n;
            add_attr(r, k, v, &nv, &bad, msg, mlen);
        }
        if (e && !bad)
            bad = e;
    }
    r->attr_text.p = attr_begin;
    r->attr_text.n = attr_begin ? (size_t)(attr_end - attr_begin) : 0;
    if (torn[0]) {
        snprintf(msg, mlen, "%s", torn);
        return msg;
    }
    if (bad)
        return bad;
    if (r->kind == LX_BIND) {
        if (!s_start)
            return "expected start_ns=<ns> (the line is cut short or not a bind line)";
        if (!s_dur)
            return "expected dur_ns=<ns> (the line is cut short or not a bind line)";
    } else {
        if (!s_total || !s_count || !s_dsum || !s_drop)
            return "expected total_ns= count= detail_sum= dropped= (the line is cut short)";
    }
    if (r->has_pid != r->has_inv)
        return r->has_pid ? "pid= without inv=" : "inv= without pid=";
    /* LX_DUR_LIMIT_NS: kept, such a figure would be the whole of every
     * sum and statistic it entered */
    if (r->kind == LX_BIND && r->dur >= LX_DUR_LIMIT_NS)
        return "dur_ns= is 2^62 ns (146 years) or more: not a duration";
    if (r->kind != LX_BIND && r->total_ns >= LX_DUR_LIMIT_NS)
        return "total_ns= is 2^62 ns (146 years) or more: not a duration";
    return NULL;
}

/* [STRACE] v=1 pid= tid= inv= hid= depth= name= ts= dur= [k=v ...] */
static const char *lex_span(lx_rec *r, cur *c, char *msg, size_t mlen)
{
    enum { F_V = 1, F_PID = 2, F_TID = 4, F_INV = 8, F_HID = 16, F_DEPTH = 32, F_NAME = 64, F_TS = 128, F_DUR = 256 };
    lx_slice k, v;
    numv nv;
    unsigned seen = 0;
    const char *bad = NULL;
    const char *attr_begin = NULL, *attr_end = NULL;
    int t;
    uint64_t ver = 0;
    while ((t = next_tok(c, &k, &v, &nv)) == 1) {
        const char *e = NULL;
        unsigned bit = 0;
        uint64_t *num = NULL;
        lx_slice *text = NULL;
        if (k.n == 1 && k.p[0] == 'v')
            bit = F_V, num = &ver;
        else if (lx_slice_eq(k, "pid"))
            bit = F_PID, num = &r->pid;
        else if (lx_slice_eq(k, "tid"))
            bit = F_TID, num = &r->tid;
        else if (lx_slice_eq(k, "inv"))
            bit = F_INV, num = &r->inv;
        else if (lx_slice_eq(k, "hid"))
            bit = F_HID, text = &r->hid;
        else if (lx_slice_eq(k, "depth"))
            bit = F_DEPTH, num = &r->depth;
        else if (lx_slice_eq(k, "name"))
            bit = F_NAME, text = &r->name;
        else if (lx_slice_eq(k, "ts"))
            bit = F_TS, num = &r->start;
        else if (lx_slice_eq(k, "dur"))
            bit = F_DUR, num = &r->dur;
        if (bit & seen) {
            e = twice(k, msg, mlen);
        } else if (num) {
            e = set_num(k, v, &nv, num, msg, mlen);
        } else if (text) {
            *text = v;
        } else {
            if (lx_slice_eq(k, "clk") && lx_slice_eq(v, "dev"))
                r->dev_clock = true;
            if (!attr_begin)
                attr_begin = k.p;
            attr_end = v.p + v.n;
            add_attr(r, k, v, &nv, &bad, msg, mlen);
        }
        seen |= bit;
        if (e && !bad)
            bad = e;
    }
    r->attr_text.p = attr_begin;
    r->attr_text.n = attr_begin ? (size_t)(attr_end - attr_begin) : 0;
    r->has_pid = r->has_inv = true;
    if (t < 0)
        return torn_why(c, "expected key=value (the span is torn)");
    if (bad)
        return bad;
    if (seen != 511u) {
        static const char *names[] = {"v", "pid", "tid", "inv", "hid", "depth", "name", "ts", "dur"};
        for (int i = 0; i < 9; i++)
            if (!(seen & (1u << i))) {
                snprintf(msg, mlen, "expected %s= (the span is torn)", names[i]);
                return msg;
            }
    }
    if (ver != 1) {
        snprintf(msg, mlen, "unknown span version v=%llu (expected v=1)", (unsigned long long)ver);
        return msg;
    }
    if (r->name.n == 0)
        return "expected name=<dotted name>, found an empty name";
    /* A span nests a handful deep: a depth past 32 bits is a damaged
     * digit, and narrowed it would be a depth no writer wrote. */
    if (r->depth > UINT32_MAX)
        return "depth= is 2^32 or more: not a depth";
    for (size_t i = 0; i < r->hid.n; i++) {
        char ch = r->hid.p[i];
        if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f')))
            return "expected hid=<lowercase hex>";
    }
    return NULL;
}

/* [CLOCK_ANCHOR] v=1 pid= mono_ns= wall_ns= (nothing after wall_ns) */
static const char *lex_anchor(lx_rec *r, cur *c, char *msg, size_t mlen)
{
    lx_slice k, v;
    numv nv;
    unsigned seen = 0;
    uint64_t ver = 0;
    int t;
    while ((t = next_tok(c, &k, &v, &nv)) == 1) {
        const char *e = NULL;
        if (seen & 16) {
            snprintf(msg, mlen, "text after wall_ns= ('%.*s')", (int)(k.n > 24 ? 24 : k.n), k.p);
            return msg;
        }
        if ((k.n == 1 && k.p[0] == 'v' && (seen & 1)) || (lx_slice_eq(k, "pid") && (seen & 2)) ||
            (lx_slice_eq(k, "mono_ns") && (seen & 4))) {
            return twice(k, msg, mlen);
        } else if (k.n == 1 && k.p[0] == 'v') {
            e = set_num(k, v, &nv, &ver, msg, mlen);
            seen |= 1;
        } else if (lx_slice_eq(k, "pid")) {
            e = set_num(k, v, &nv, &r->pid, msg, mlen);
            seen |= 2;
        } else if (lx_slice_eq(k, "mono_ns")) {
            e = set_num(k, v, &nv, &r->mono, msg, mlen);
            seen |= 4;
        } else if (lx_slice_eq(k, "wall_ns")) {
            e = set_num(k, v, &nv, &r->wall, msg, mlen);
            seen |= 8 | 16;
        } else {
            snprintf(msg, mlen, "unexpected %.*s= in a clock anchor", (int)(k.n > 24 ? 24 : k.n), k.p);
            return msg;
        }
        if (e)
            return e;
    }
    if (t < 0)
        return torn_why(c, "expected key=value (the clock anchor is torn)");
    if ((seen & 15) != 15)
        return "expected v=1 pid= mono_ns= wall_ns= (the clock anchor is torn)";
    if (ver != 1)
        return "unknown clock anchor version (expected v=1)";
    r->has_pid = true;
    return NULL;
}

/* A stamp line at t (a physical line start). */
static void emit_stamp(const char *buf, size_t base, size_t line, const char *t, const char *e, const lx_sink *sink,
                       lx_rec *r)
{
    const char *q = t + 7 + (e - t > 7 && t[7] == ' ');
    /* it ends where any record ends: at a line end of any kind (a log of
     * CR-only line ends has no '\n' at all) */
    const char *te = q;
    while (te < e && *te != '\n' && *te != '\r' && *te)
        te++;
    while (te > q && te[-1] == ' ')
        te--;
    memset(r, 0, offsetof(lx_rec, attr));
    r->kind = LX_STAMP;
    r->off = base + (size_t)(t - buf);
    r->at = t;
    r->line = line;
    r->name.p = q;
    r->name.n = (size_t)(te - q);
    sink->on_rec(sink->ctx, r);
}

/* "[stamp] TEXT", or "[stamp]" alone on its line (no text: the tools
 * say so rather than that the log has none). */
static inline bool at_stamp(const char *t, const char *e)
{
    return e - t >= 7 && memcmp(t, "[stamp]", 7) == 0 &&
           (e - t == 7 || t[7] == ' ' || t[7] == '\n' || t[7] == '\r');
}

#if defined(__SSE2__)
#include <emmintrin.h>
/* The first a or b in [p, e), or e: sixteen bytes per step. */
static inline const char *find_either(const char *p, const char *e, char a, char b)
{
    const __m128i va = _mm_set1_epi8(a), vb = _mm_set1_epi8(b);
    /* the log is read once, front to back: ask for the next lines early */
    __builtin_prefetch(p + 1024);
    while (e - p >= 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
        unsigned m = (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(x, va), _mm_cmpeq_epi8(x, vb)));
        if (m)
            return p + __builtin_ctz(m);
        p += 16;
    }
    for (; p < e; p++)
        if (*p == a || *p == b)
            return p;
    return e;
}
#else
static inline const char *find_either(const char *p, const char *e, char a, char b)
{
    for (; p < e; p++)
        if (*p == a || *p == b)
            return p;
    return e;
}
#endif

static inline void reset(lx_rec *r, lx_kind kind)
{
    /* Only the fields every consumer may read; the attribute array is
     * valid up to nattr and is not cleared (it is most of the struct). */
    r->kind = kind;
    r->prefix = NULL;
    r->mark = NULL;
    r->name.p = NULL;
    r->name.n = 0;
    r->name_ok = false;
    r->start = r->dur = 0;
    r->has_pid = r->has_inv = false;
    r->pid = r->inv = 0;
    r->total_ns = r->count = r->detail_sum = r->dropped = 0;
    r->tid = r->depth = 0;
    r->hid.p = NULL;
    r->hid.n = 0;
    r->dev_clock = false;
    r->mono = r->wall = 0;
    r->ran = r->planned = 0;
    r->nattr = 0;
    r->attr_keys = 0;
    r->attr_text.p = NULL;
    r->attr_text.n = 0;
}

void lx_scan(const char *buf, size_t len, const lx_sink *sink)
{
    lx_pos pos = {0, 1, false, false};
    lx_scan_at(buf, len, &pos, sink);
}

/* Where a scan is: its buffer, the buffer's offset and line in the log,
 * and the "[mono_ns=" prefix seen on the current line, if any. */
typedef struct scan {
    const char *buf, *e;
    const char *line_at;    /* where the current line begins */
    bool cr_lines;          /* no '\n' in the text: CR-only line ends */
    size_t base, line;
    const char *rec;
    bool lexed;             /* a record was lexed on the current line */
    bool cut_end;           /* the text is a log's end, inside a line (lx_pos.log) */
    unsigned nprefix;       /* record prefixes seen on it, of records lexed or passed over */
    const lx_sink *sink;
    lx_rec r;
    char msg[192];
} scan;

/* Whether a record's prefix, up to its marker, begins as the writers
 * write it: "[mono_ns=<decimal>][T0x<1 to 16 hex digits>]". */
static bool prefix_ok(const char *p, const char *mark)
{
    const char *d = p += PREFIX_LEN;
    while (p < mark && *p >= '0' && *p <= '9')
        p++;
    if (p == d || mark - p < 6 || memcmp(p, "][T0x", 5) != 0)
        return false;
    const char *h = p += 5;
    while (p < mark && ((*p >= '0' && *p <= '9') || ((*p | 0x20) >= 'a' && (*p | 0x20) <= 'f')))
        p++;
    return p > h && p - h <= 16 && p < mark && *p == ']';
}

static inline bool blank(char ch)
{
    return ch == ' ' || ch == '\t';
}

/* Where the word of n bytes ends [lo, at) before a run of one or more
 * blanks (spaces, tabs): the start of the word, or NULL. A marker's words
 * are read as the fields after them are (next_tok): a run of blanks
 * between them is one separator, so a log whose writer pads ("[STRACE]  v=",
 * "bind\tphase=") loses none of its records. */
static const char *word_before_blanks(const char *lo, const char *at, const char *word, size_t n)
{
    const char *w = at;
    while (w > lo && blank(w[-1]))
        w--;
    if (w == at || (size_t)(w - lo) < n || memcmp(w - n, word, n) != 0)
        return NULL;
    return w - n;
}

/* The bind-phase or host-orch marker whose "phase=" has its '=' at q
 * ("bind phase=", "host-orch phase="): its kind, and its start in *mark;
 * -1 when q ends no such marker. */
static int phase_marker(const char *lo, const char *q, const char **mark)
{
    if (q - lo < 5 || memcmp(q - 5, "phase", 5) != 0)
        return -1;
    if ((*mark = word_before_blanks(lo, q - 5, "bind", 4)))
        return LX_BIND;
    if ((*mark = word_before_blanks(lo, q - 5, "host-orch", 9)))
        return LX_ORCH;
    return -1;
}

/* The start of the span or anchor marker whose "v=" has its '=' at q
 * ("[STRACE] v=", "[CLOCK_ANCHOR] v="), its kind in *kind; NULL when q
 * ends no such marker. */
static const char *v_marker(const char *lo, const char *q, lx_kind *kind)
{
    const char *m;
    if (q - lo < 2 || q[-1] != 'v')
        return NULL;
    if ((m = word_before_blanks(lo, q - 1, "[STRACE]", 8))) {
        *kind = LX_SPAN;
        return m;
    }
    if ((m = word_before_blanks(lo, q - 1, "[CLOCK_ANCHOR]", 14))) {
        *kind = LX_ANCHOR;
        return m;
    }
    return NULL;
}

/* Whether [from, at) holds a bind-phase or host-orch marker: a record
 * that the full scan lexes there. */
static bool phase_marker_in(const char *from, const char *at)
{
    const char *mark;
    for (const char *q = from; (q = memchr(q, '=', (size_t)(at - q))); q++)
        if (phase_marker(from, q, &mark) >= 0)
            return true;
    return false;
}

bool lx_has_bind_marker(const char *s, size_t n)
{
    const char *mark;
    for (const char *q = s; (q = memchr(q, '=', (size_t)(s + n - q))); q++)
        if (phase_marker(s, q, &mark) == LX_BIND)
            return true;
    return false;
}

/* Lexes the record of kind whose marker starts at mark; q is the '=' after
 * the marker's last word ("phase" of "bind phase=", the byte before "v=" of
 * the others). Returns where the scan goes on. */
static const char *record(scan *sc, lx_kind kind, const char *mark, const char *q)
{
    lx_rec *r = &sc->r;
    reset(r, kind);
    /* The record's own prefix: the last one seen on this line. */
    const char *start = mark;
    if (sc->rec && sc->rec < mark) {
        start = sc->rec;
        r->prefix = sc->rec;
        r->mark = mark;
    }
    r->off = sc->base + (size_t)(start - sc->buf);
    r->at = start;
    r->line = sc->line;
    /* First on its line: no record before it, lexed or not (a reader of
     * spans passes bind lines over, and must place an anchor as the
     * other tools do): its own prefix the line's first, if it has one. */
    r->line_first = !sc->lexed && sc->nprefix <= (r->prefix ? 1u : 0u);
    /* A reader of spans counts the records it passes over by their
     * prefixes; a bind line that lost its prefix is a record before an
     * anchor too, as the full scan sees it, or an anchor's line would be
     * dated by it in one reading and not the other. Anchors are one a
     * process: looking back along their line costs nothing. */
    if (r->line_first && kind == LX_ANCHOR && sc->sink->spans_only && phase_marker_in(sc->line_at, start))
        r->line_first = false;
    sc->lexed = true;
    cur c = {q + 1, sc->e, sc->cr_lines, false};
    const char *bad, *p;
    if (kind == LX_BIND || kind == LX_ORCH)
        bad = lex_phase(r, &c, sc->msg, sizeof sc->msg);
    else if (kind == LX_SPAN)
        bad = lex_span(r, &c, sc->msg, sizeof sc->msg);
    else
        bad = lex_anchor(r, &c, sc->msg, sizeof sc->msg);
    /* A prefix that is not the writers' is a line damaged at its start:
     * nothing on it can be trusted (a dropped=99 read from it was lost,
     * and its pass kept as clean). What was read still names its pass. */
    /* a record that the log's end cuts (nothing after it but spaces) */
    if (!bad && sc->cut_end && c.p >= sc->e)
        bad = LX_CUT_MSG;
    if (!bad && r->prefix && !prefix_ok(r->prefix, mark)) {
        const char *end = memchr(r->prefix + PREFIX_LEN, ']', (size_t)(mark - r->prefix - PREFIX_LEN));
        end = end && end + 1 < mark && end[1] == '[' ? memchr(end + 1, ']', (size_t)(mark - end - 1)) : end;
        int n = (int)((end ? end + 1 : mark) - r->prefix);
        snprintf(sc->msg, sizeof sc->msg, "its prefix %.*s%s is not [mono_ns=<ns>][T0x<hex>]", n > 48 ? 48 : n,
                 r->prefix, n > 48 ? "..." : "");
        bad = sc->msg;
    }
    if (bad) {
        p = c.at_next ? c.p : skip_record(c.p, sc->e);
        /* Cut by the log's end, a record lacks what came after the cut:
         * an inv= after its pid=, a key's last letters. That fault is the
         * cut's; named for itself it hid that the log was cut at all. */
        if (sc->cut_end && p >= sc->e)
            bad = LX_CUT_MSG;
        sc->sink->on_bad(sc->sink->ctx, r, bad);
    } else {
        sc->sink->on_rec(sc->sink->ctx, r);
        p = c.p;
    }
    sc->rec = NULL;
    return p <= q ? q + 1 : p; /* always move on, whatever the record looked like */
}

/* Whether the bytes just before at end a "[file:line]" token, as the
 * writer's source location does before the marker on both runtimes'
 * lines ("[bind_trace.c:212] bind phase=..."). */
static bool after_location(const char *lo, const char *at)
{
    const char *p = at;
    if (p <= lo || p[-1] != ']')
        return false;
    p--;
    const char *digits = p;
    while (p > lo && p[-1] >= '0' && p[-1] <= '9')
        p--;
    if (p == digits || p <= lo || p[-1] != ':')
        return false;
    for (p--; p > lo && p[-1] != '[' && p[-1] != ' '; p--)
        ;
    return p > lo && p[-1] == '[';
}

/* A bind or host-orch line cut before the '=' of its "phase=" (the scan
 * stops at '=', so it never saw the marker): after a record's prefix, the
 * line ends in the writer's "[file:line]" and " bind p" .. " bind phase"
 * (or the host-orch ones; runs of blanks between the words as the full
 * scan reads them). A line of prose ending so ("entering bind phase") has
 * no such location before the words, and shorter tails (" bind") are left
 * alone. end is the line's end; CRs and NULs before it (a file cut by a
 * crash is often padded with NULs) are not the line. */
static void cut_marker(scan *sc, const char *end)
{
    static const struct {
        const char *word;
        size_t n;
        lx_kind kind;
    } marks[] = {{"bind", 4, LX_BIND}, {"host-orch", 9, LX_ORCH}};
    const char *lo = sc->rec;
    while (end > lo && (end[-1] == '\r' || end[-1] == '\0'))
        end--;
    /* the cut "phase": "p" .. "phase" (one at most ends the line) */
    size_t n = 1;
    while (n <= 5 && !((size_t)(end - lo) >= n && memcmp(end - n, "phase", n) == 0))
        n++;
    if (n > 5)
        return;
    for (size_t m = 0; m < sizeof marks / sizeof marks[0]; m++) {
        const char *w = word_before_blanks(lo, end - n, marks[m].word, marks[m].n), *b = w;
        while (b && b > lo && blank(b[-1]))
            b--;
        if (!w || b == w || !after_location(lo, b))
            continue;
        lx_rec *r = &sc->r;
        reset(r, marks[m].kind);
        r->prefix = lo;
        r->mark = w;
        r->off = sc->base + (size_t)(lo - sc->buf);
        r->at = lo;
        r->line = sc->line;
        r->line_first = !sc->lexed && sc->nprefix <= 1;
        sc->sink->on_bad(sc->sink->ctx, r, "the line ends before phase= (cut short)");
        return;
    }
}

/* The decimal at *p, up to e or the first byte that is not a digit
 * (one at least, 64 bits at most); *p moves past it. */
static bool take_u64(const char **p, const char *e, uint64_t *v)
{
    const char *s = *p;
    while (*p < e && **p >= '0' && **p <= '9')
        (*p)++;
    return lx_parse_u64((lx_slice){s, (size_t)(*p - s)}, v) == 0;
}

/* Whether [p, e) is exactly lit, moving *p past it when it begins so. */
static bool take_lit(const char **p, const char *e, const char *lit)
{
    size_t n = strlen(lit);
    if ((size_t)(e - *p) < n || memcmp(*p, lit, n) != 0)
        return false;
    *p += n;
    return true;
}

/* What stops a run, in the record below: "by signal <N> (<name>)", the
 * name strsignal's words (no control byte: a CR or NUL inside a line cuts
 * it), or "at the --time-limit of <S> s". */
static bool stop_cause(const char *p, const char *e)
{
    uint64_t v;
    if (take_lit(&p, e, "at the --time-limit of "))
        return take_u64(&p, e, &v) && take_lit(&p, e, " s") && p == e;
    if (!take_lit(&p, e, "by signal ") || !take_u64(&p, e, &v) || !take_lit(&p, e, " (") || e - p < 2 || e[-1] != ')')
        return false;
    for (; p < e - 1; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            return false;
    return true;
}

static const char STOP_HEAD[] = "[ERROR] hbg_cmd_run: ";
static const char STOP_TAIL[] = " passes: this log is incomplete";

/* The record `hbg run` ends a log with when a stop signal or its
 * --time-limit cut the run (docs/log-format.md), on the line from the
 * prefix at sc->rec to end:
 *   [mono_ns=<d>][T0x<hex>][ERROR] hbg_cmd_run: hbg run stopped <cause> after <K> of <M> passes: this log is incomplete
 * It is told by its whole text, so that no other ERROR record is taken for
 * it, nor a line that only quotes its words. The line's end is compared
 * first: most lines that come here (prose of the original runtime, the
 * bind lines a reader of spans passes over) end otherwise. */
static void stopped_record(scan *sc, const char *end)
{
    const char *lo = sc->rec;
    while (end > lo && end[-1] == '\r')
        end--;
    size_t tail = sizeof STOP_TAIL - 1;
    if ((size_t)(end - lo) < tail || memcmp(end - tail, STOP_TAIL, tail) != 0)
        return;
    const char *mark = memchr(lo, ']', (size_t)(end - lo)); /* the end of "[mono_ns=<d>" */
    mark = mark && end - mark > 1 ? memchr(mark + 1, ']', (size_t)(end - mark - 1)) : NULL;
    if (!mark || !prefix_ok(lo, ++mark))
        return;
    const char *p = mark, *body_end = end - tail, *after;
    if (!take_lit(&p, body_end, STOP_HEAD))
        return;
    const char *text = p;
    if (!take_lit(&p, body_end, "hbg run stopped "))
        return;
    /* "<cause> after <K> of <M>": the last " after " ends the cause */
    for (after = body_end - 7; after > p && memcmp(after, " after ", 7) != 0; after--)
        ;
    uint64_t ran, planned;
    const char *q = after + 7;
    if (after <= p || !stop_cause(p, after) || !take_u64(&q, body_end, &ran) || !take_lit(&q, body_end, " of ") ||
        !take_u64(&q, body_end, &planned) || q != body_end)
        return;
    lx_rec *r = &sc->r;
    reset(r, LX_STOPPED);
    r->prefix = lo;
    r->mark = mark;
    r->off = sc->base + (size_t)(lo - sc->buf);
    r->at = lo;
    r->line = sc->line;
    r->line_first = !sc->lexed && sc->nprefix <= 1;
    r->name.p = text;
    r->name.n = (size_t)(body_end - text) + sizeof " passes" - 1;
    r->ran = ran;
    r->planned = planned;
    sc->sink->on_rec(sc->sink->ctx, r);
}

static inline void new_line(scan *sc, const char *q)
{
    if (sc->rec)
        stopped_record(sc, q);
    if (sc->rec && !sc->sink->spans_only) /* a reader of spans reads no bind line */
        cut_marker(sc, q);
    sc->rec = NULL;
    sc->lexed = false;
    sc->nprefix = 0;
    sc->line++;
    sc->line_at = q + 1;
    if (at_stamp(q + 1, sc->e))
        emit_stamp(sc->buf, sc->base, sc->line, q + 1, sc->e, sc->sink, &sc->r);
}

/* Every record: one scan stops at every '=' and every line end; markers are
 * told by the bytes before an '=', stamps by the bytes after a '\n'. */
static void scan_all(scan *sc)
{
    const char *p = sc->buf, *e = sc->e, *buf = sc->buf;
    const char eol = sc->cr_lines ? '\r' : '\n'; /* a text of CR-only line ends counts its lines by CR */
    while (p < e) {
        const char *q = find_either(p, e, '=', eol);
        if (q >= e) {
            if (sc->rec && !sc->cut_end) /* the text's last line, with no line end */
                stopped_record(sc, e);
            if (sc->rec) /* the text's last line, with no line end */
                cut_marker(sc, e);
            break;
        }
        if (*q == eol) {
            new_line(sc, q);
            p = q + 1;
            continue;
        }
        size_t before = (size_t)(q - buf);
        char c1 = before ? q[-1] : 0;
        const char *mark;
        int pk;
        lx_kind vk;
        if (c1 == 'e' && (pk = phase_marker(buf, q, &mark)) >= 0) {
            p = record(sc, (lx_kind)pk, mark, q);
        } else if (c1 == 'v' && (mark = v_marker(buf, q, &vk))) {
            p = record(sc, vk, mark, q - 2); /* the tokenizer reads "v=1" itself */
        } else {
            if (c1 == 's' && before >= PREFIX_LEN - 1 && memcmp(q - (PREFIX_LEN - 1), PREFIX, PREFIX_LEN - 1) == 0)
                sc->rec = q - (PREFIX_LEN - 1), sc->nprefix++;
            p = q + 1;
        }
    }
}

/* The "v" of the "v=" that follows the marker word at q (n bytes) after
 * a run of blanks, as v_marker reads it from the '='; NULL when the
 * marker is not there. Asked at every '[' of the log, most of them a
 * prefix's, a level's or a location's: inlined, so that the compare is
 * of a known length, and told apart by the byte after the '[' first.
 * (A call and a library memcmp for each made hbg spans' scan half as
 * slow again.) */
static inline const char *v_after(const char *q, const char *e, const char *word, size_t n)
{
    if ((size_t)(e - q) < n + 3 || q[1] != word[1] || memcmp(q, word, n) != 0 || !blank(q[n]))
        return NULL;
    const char *v = q + n + 1;
    while (v < e && blank(*v))
        v++;
    return e - v >= 2 && v[0] == 'v' && v[1] == '=' ? v : NULL;
}

/* Spans, anchors and stamps only: the scan stops at every '[' and line end
 * (three or four a line, where a bind line has a dozen '='), and what
 * follows a '[' tells a marker or a record's prefix. */
static void scan_spans(scan *sc)
{
    const char *p = sc->buf, *e = sc->e;
    const char eol = sc->cr_lines ? '\r' : '\n';
    while (p < e) {
        const char *q = find_either(p, e, '[', eol);
        if (q >= e) {
            if (sc->rec && !sc->cut_end) /* the text's last line, with no line end */
                stopped_record(sc, e);
            break;
        }
        size_t after = (size_t)(e - q);
        const char *v;
        if (*q == eol) {
            new_line(sc, q);
            p = q + 1;
        } else if ((v = v_after(q, e, "[STRACE]", 8))) {
            p = record(sc, LX_SPAN, q, v - 1);
        } else if ((v = v_after(q, e, "[CLOCK_ANCHOR]", 14))) {
            p = record(sc, LX_ANCHOR, q, v - 1);
        } else {
            if (after >= PREFIX_LEN && memcmp(q, PREFIX, PREFIX_LEN) == 0)
                sc->rec = q, sc->nprefix++;
            p = q + 1;
        }
    }
}

void lx_scan_at(const char *buf, size_t len, lx_pos *pos, const lx_sink *sink)
{
    init_cls();
    if (!buf || len == 0)
        return;
    scan sc = {
        .buf = buf, .e = buf + len, .line_at = buf, .base = pos->off, .line = pos->line, .rec = NULL, .sink = sink};
    sc.cr_lines = !pos->seen_nl && memchr(buf, '\n', len) == NULL;
    pos->seen_nl = !sc.cr_lines;
    /* a CR last ends a line: a CRLF one cut before its LF, or a CR-only one */
    sc.cut_end = pos->log && buf[len - 1] != '\n' && buf[len - 1] != '\r';
    /* A UTF-8 byte order mark, which an editor that saved the log may put
     * first, is no part of its first line: the stamp after it was taken
     * for no stamp at all (and `hbg compare` refused the log as unstamped). */
    const char *first = sc.base == 0 ? buf + lx_bom_len(buf, len) : buf;
    if (at_stamp(first, sc.e))
        emit_stamp(buf, sc.base, sc.line, first, sc.e, sink, &sc.r);
    if (sink->spans_only)
        scan_spans(&sc);
    else
        scan_all(&sc);
    pos->off = sc.base + len;
    pos->line = sc.line;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

size_t lx_canon_name(lx_slice s, char *out)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t k = 0;
    for (size_t i = 0; i < s.n; i++) {
        int hi, lo;
        unsigned char c = (unsigned char)s.p[i];
        if (c == '%' && i + 2 < s.n && (hi = hexval(s.p[i + 1])) >= 0 && (lo = hexval(s.p[i + 2])) >= 0) {
            c = (unsigned char)(hi * 16 + lo);
            i += 2;
        }
        /* a byte as it came (raw UTF-8, a lone '%') or decoded: encoded
         * where the format encodes it, so both spellings meet */
        if (lx_name_encodes(c))
            out[k++] = '%', out[k++] = hex[c >> 4], out[k++] = hex[c & 15];
        else
            out[k++] = (char)c;
    }
    return k;
}

size_t lx_decode_name(lx_slice s, char *out)
{
    size_t k = 0;
    for (size_t i = 0; i < s.n; i++) {
        int hi, lo;
        /* A control byte stays encoded: decoded, a NUL would end the name
         * wherever it is used as a C string, a newline break a table. So
         * does a '%' that two hex digits follow: "%2500" shown as "%00"
         * would read as the NUL. */
        if (s.p[i] == '%' && i + 2 < s.n && (hi = hexval(s.p[i + 1])) >= 0 && (lo = hexval(s.p[i + 2])) >= 0 &&
            hi * 16 + lo >= 0x20 && hi * 16 + lo != 0x7f &&
            !(hi * 16 + lo == '%' && i + 4 < s.n && hexval(s.p[i + 3]) >= 0 && hexval(s.p[i + 4]) >= 0)) {
            out[k++] = (char)(hi * 16 + lo);
            i += 2;
        } else {
            out[k++] = s.p[i];
        }
    }
    return k;
}
