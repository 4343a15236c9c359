#include "tools/jw.h"
#include "tools/bgwrite.h"
#include "util/printable.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define JW_CAP (1u << 16)
/* A thread's buffers are larger: each hand-over is a lock and a wake-up. */
#define JW_BG_CAP ((size_t)512 << 10)

bool jw_init(jw *w, FILE *f)
{
    w->f = f;
    w->n = 0;
    w->out = 0;
    w->cap = JW_CAP;
    w->err = 0;
    w->bw = NULL;
    w->buf = malloc(w->cap);
    return w->buf != NULL;
}

bool jw_background(jw *w)
{
    if (w->bw || w->err || fflush(w->f) != 0)
        return false;
    bw *b = bw_open(fileno(w->f), JW_BG_CAP);
    if (!b)
        return false;
    char *p = bw_buf(b);
    memcpy(p, w->buf, w->n);
    free(w->buf);
    w->buf = p;
    w->cap = JW_BG_CAP;
    w->bw = b;
    return true;
}

/* The buffer is full: out with it, and on with an empty one. */
void jw_spill(jw *w)
{
    w->out += w->n;
    if (w->bw) {
        w->buf = bw_pass(w->bw, w->n);
    } else if (w->n && !w->err && (errno = 0, fwrite(w->buf, 1, w->n, w->f) != w->n)) {
        /* kept: the failure is told at jw_flush, many calls later, and
         * errno would be whatever the calls between left it */
        w->err = errno ? errno : EIO;
    }
    w->n = 0;
}

bool jw_flush(jw *w)
{
    jw_spill(w);
    if (w->bw) {
        int e = bw_sync(w->bw);
        if (e && !w->err)
            w->err = e;
    }
    if (w->err)
        errno = w->err;
    return !w->err;
}

void jw_free(jw *w)
{
    if (w->bw) {
        bw_close(w->bw); /* the buffers are its own */
        w->bw = NULL;
    } else {
        free(w->buf);
    }
    w->buf = NULL;
}

static inline char *room(jw *w, size_t need)
{
    if (w->cap - w->n < need)
        jw_spill(w);
    return w->buf + w->n;
}

void jw_raw_slow(jw *w, const char *s, size_t n)
{
    while (n) {
        if (w->n == w->cap)
            jw_spill(w);
        size_t k = w->cap - w->n < n ? w->cap - w->n : n;
        memcpy(w->buf + w->n, s, k);
        w->n += k;
        s += k;
        n -= k;
    }
}

static inline JW_ALWAYS_INLINE size_t fmt_u64(char *out, uint64_t v)
{
    return jw_fmt_u64(out, v);
}

void jw_u64(jw *w, uint64_t v)
{
    char *p = room(w, 24);
    w->n += fmt_u64(p, v);
}

void jw_u64str(jw *w, uint64_t v)
{
    char *p = room(w, 26);
    p[0] = '"';
    size_t k = fmt_u64(p + 1, v);
    p[k + 1] = '"';
    w->n += k + 2;
}

/* Perfetto's JSON importer reads a number with a parser of its own (the
 * integer digits, then the fraction's digits as one integer divided by
 * its power of ten, and the two added: not always the double nearest the
 * decimal) and truncates that times 1000 to integer nanoseconds; older
 * releases cut the decimal itself after three fraction digits. A value
 * read just below the exact one is a nanosecond short. The double it
 * reads from s[0..n). */
static double perfetto_read(const char *s, size_t n)
{
    double v = 0, frac = 0, div = 1;
    size_t i = 0;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
        v = v * 10 + (s[i] - '0');
    if (i < n && s[i] == '.')
        for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
            frac = frac * 10 + (s[i] - '0');
            div *= 10;
        }
    return div > 1 ? v + frac / div : v;
}

/* Whether a reader that truncates us * 1000 to an integer gets ns (ns <
 * 2^53, so its double is exact). */
static inline bool lands_on(double us, uint64_t ns)
{
    double m = us * 1000.0;
    return m >= (double)ns && m < (double)ns + 1.0;
}

/* The text jw_us writes for ns, at p (room for 32 bytes); returns its
 * length, and in *d the double a correctly rounding reader (a browser's)
 * takes from it. Three decimals are exact, and are written where both
 * Perfetto's reading and the nearest double land on ns (nearly always);
 * else the smallest nudge past them with which both do: a digit 1 in the
 * sixth, fifth or fourth decimal, then a 5 there (half a nanosecond):
 * 5120000000.317001. Cut after three decimals, each still reads ns. Past
 * 2^53 ns (104 days) no double holds every nanosecond: three decimals. */
static size_t us_text(char *p, uint64_t ns, double *d)
{
    size_t k = fmt_u64(p, ns / 1000);
    unsigned f = (unsigned)(ns % 1000);
    *d = (double)ns / 1000.0; /* correctly rounded: the double nearest the decimal */
    if (!f)
        return k;
    p[k++] = '.';
    p[k++] = (char)('0' + f / 100);
    p[k++] = (char)('0' + f / 10 % 10);
    p[k++] = (char)('0' + f % 10);
    /* Perfetto's reading of these three decimals, as its parser adds them */
    if (ns >= (1ull << 53) || (lands_on(*d, ns) && lands_on((double)(ns / 1000) + (double)f / 1000.0, ns)))
        return k;
    static const char *const nudge[] = {"001", "01", "1", "5"};
    for (size_t i = 0; i < sizeof nudge / sizeof nudge[0]; i++) {
        size_t n = strlen(nudge[i]);
        memcpy(p + k, nudge[i], n + 1);
        double r = strtod(p, NULL); /* rare: the nearest double, as a browser reads it */
        if (lands_on(r, ns) && lands_on(perfetto_read(p, k + n), ns)) {
            *d = r;
            return k + n;
        }
    }
    return k;
}

void jw_us(jw *w, uint64_t ns)
{
    double d;
    w->n += us_text(room(w, 32), ns, &d);
}

static const uint64_t pow10_u64[20] = {1ull,
                                       10ull,
                                       100ull,
                                       1000ull,
                                       10000ull,
                                       100000ull,
                                       1000000ull,
                                       10000000ull,
                                       100000000ull,
                                       1000000000ull,
                                       10000000000ull,
                                       100000000000ull,
                                       1000000000000ull,
                                       10000000000000ull,
                                       100000000000000ull,
                                       1000000000000000ull,
                                       10000000000000000ull,
                                       100000000000000000ull,
                                       1000000000000000000ull,
                                       10000000000000000000ull};

/* The digit count of v (1 for 0): the bit length gives it to within one
 * (1233 / 4096 is just above log10(2)); v | 1 has the same count. */
static inline int ndigits(uint64_t v)
{
    uint64_t x = v | 1;
    int t = ((64 - __builtin_clzll(x)) * 1233) >> 12;
    return t + (x >= pow10_u64[t]);
}

/* 0 < q < 10^k (k <= 20) as exactly k digits, less its trailing zeros;
 * returns how many are left. In registers: the zeros are counted from the
 * digit words, not read back from memory, and no branch depends on them. */
static inline size_t fmt_frac(char *out, uint64_t q, int k)
{
    const uint64_t z = 0x3030303030303030ull;
    /* a digit word's last digits are its highest bytes; a duration's k
     * hardly changes from one event to the next, so the branches on it
     * are foreseen, and only the words k needs are made */
    if (k <= 8) {
        uint64_t d0 = jw_digits8((uint32_t)q);
        jw_store8(out, (d0 | z) >> (8 * (8 - k)));
        return (size_t)(k - (__builtin_clzll(d0) >> 3));
    }
    uint64_t q1 = q / 100000000u;
    uint64_t d0 = jw_digits8((uint32_t)(q - q1 * 100000000u)); /* the last eight digits */
    if (k <= 16) {
        uint64_t d1 = jw_digits8((uint32_t)q1);
        jw_store8(out, (d1 | z) >> (8 * (16 - k)));
        jw_store8(out + k - 8, d0 | z);
        return (size_t)(k - (d0 ? __builtin_clzll(d0) >> 3 : 8 + (__builtin_clzll(d1) >> 3)));
    }
    uint64_t q2 = q1 / 100000000u;
    uint64_t d1 = jw_digits8((uint32_t)(q1 - q2 * 100000000u));
    uint64_t d2 = jw_digits8((uint32_t)q2);
    jw_store8(out, (d2 | z) >> (8 * (24 - k)));
    jw_store8(out + k - 16, d1 | z);
    jw_store8(out + k - 8, d0 | z);
    return (size_t)(k - (d0 ? __builtin_clzll(d0) >> 3 : d1 ? 8 + (__builtin_clzll(d1) >> 3) : 16 + (__builtin_clzll(d2) >> 3)));
}

/* d > 0 to 17 significant digits, rounded half up, at p (room for 64
 * bytes): every double reads back exactly from 17. d = mant * 2^-s, taken
 * from its bits; its fraction's first k digits are one 128-bit product
 * (s <= 59 and k <= 20 keep it in range, and q below 10^19). Returns the
 * length; 0 when d is not of that form. */
static size_t fmt_sig17(char *p, double d)
{
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    int ex = (int)(bits >> 52 & 0x7ff), s = 1075 - ex;
    uint64_t mant = (bits & ((1ull << 52) - 1)) | (1ull << 52);
    if (ex == 0 || ex == 0x7ff || s <= 0)
        return 0;
    int tz = __builtin_ctzll(mant);
    tz = tz < s ? tz : s;
    mant >>= tz;
    s -= tz;
    if (s > 59)
        return 0;
    uint64_t mask = (1ull << s) - 1, f = mant & mask, ip = mant >> s;
    int k;
    if (ip) {
        k = 17 - ndigits(ip);
    } else {
        /* 17 digits from the fraction's first that is not 0 */
        uint64_t v19 = (uint64_t)(((unsigned __int128)f * pow10_u64[19]) >> s);
        if (!v19)
            return 0;
        k = 19 - ndigits(v19) + 17;
        k = k < 20 ? k : 20; /* a duration of 1 ns has three zeros, so 10^20 at most */
    }
    unsigned __int128 p10 = k < 20 ? pow10_u64[k] : (unsigned __int128)pow10_u64[19] * 10;
    unsigned __int128 x = (unsigned __int128)f * p10;
    uint64_t q = (uint64_t)(x >> s), r = (uint64_t)x & mask;
    /* half up, without a branch: half the values round each way */
    q += s && r >= 1ull << (s - 1);
    if (q == p10) {
        q = 0;
        ip++;
    }
    size_t n = fmt_u64(p, ip);
    if (q) {
        p[n] = '.';
        n += 1 + fmt_frac(p + n + 1, q, k);
    }
    return n;
}

void jw_dur_us(jw *w, uint64_t ts, uint64_t dur)
{
    uint64_t end;
    /* Below 2^51 ns (26 days of uptime) a microsecond double is within
     * 0.25 ns of its decimal, so the sum-exact duration still rounds to
     * dur; above, and where no double sums exactly, the decimal as jw_us
     * writes it. */
    if (__builtin_add_overflow(ts, dur, &end) || end >= (1ull << 51)) {
        jw_us(w, dur);
        return;
    }
    /* ts and the end as a reader takes them from jw_us's texts */
    char *p = room(w, 64), tmp[32];
    double t, e, d3;
    us_text(tmp, ts, &t);
    us_text(tmp, end, &e);
    size_t n = us_text(p, dur, &d3);
    double d = e - t;
    /* dur's own text where it is that difference; else the difference
     * (written over it) */
    if (d != d3 && t + d == e) {
        size_t k = fmt_sig17(p, d);
        n = k ? k : us_text(p, dur, &d3);
    }
    w->n += n;
}

static const char hex[] = "0123456789abcdef";

/* The JSON text the bytes at s[0..n) (n >= 1) start with: returns how
 * many bytes that is, with *elen 0 when they are written as they are, else
 * their escape in esc (*elen bytes). A well-formed UTF-8 character passes
 * as it is (JSON text is UTF-8), but for a C1 control (CSI among them),
 * escaped as its code point as C0 ones are: the same string to a parser,
 * nothing a terminal acts on for one who reads the file. Control bytes
 * become \u00XX. A byte >= 0x80 that is no part of a well-formed
 * character becomes U+FFFD, the replacement character, one for each such
 * byte: the log is bytes, not necessarily UTF-8, and the output must stay
 * valid. (\u00XX would be a valid string, but another one: the byte read
 * as Latin-1, a path or name that does not exist.) */
static size_t escape_at(const char *s, size_t n, char esc[6], size_t *elen)
{
    unsigned char c = (unsigned char)s[0];
    size_t u = c >= 0x80 ? hbg__utf8_len(s, n) : 0;
    *elen = 0;
    if (u && !hbg__utf8_is_c1(s, u))
        return u;
    if (!u && c >= 0x80) {
        memcpy(esc, "\xef\xbf\xbd", 3); /* U+FFFD in UTF-8 */
        *elen = 3;
        return 1;
    }
    if (u)
        c = (unsigned char)s[1]; /* U+0080..U+009F */
    if (c == '"' || c == '\\') {
        esc[0] = '\\';
        esc[1] = (char)c;
        *elen = 2;
    } else if (c < 0x20 || c >= 0x80) {
        memcpy(esc, "\\u00", 4);
        esc[4] = hex[c >> 4];
        esc[5] = hex[c & 15];
        *elen = 6;
    }
    return u ? u : 1;
}

bool jw_str_exact(const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        if ((unsigned char)s[i] < 0x80) {
            i++;
            continue;
        }
        size_t u = hbg__utf8_len(s + i, n - i);
        if (!u)
            return false;
        i += u;
    }
    return true;
}

size_t jw_str_text(const char *s, size_t n, char *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        size_t u = (unsigned char)s[i] < 0x80 ? 1 : hbg__utf8_len(s + i, n - i);
        if (!u) { /* as escape_at writes it */
            memcpy(out + k, "\xef\xbf\xbd", 3);
            k += 3;
            i++;
            continue;
        }
        memcpy(out + k, s + i, u);
        k += u;
        i += u;
    }
    return k;
}

void jw_str(jw *w, const char *s, size_t n)
{
    char *p = room(w, 2);
    *p = '"';
    w->n++;
    size_t i = 0;
    while (i < n) {
        size_t j = i;
        /* eight bytes per step while none needs escaping (names, hex ids) */
        for (; j + 8 <= n; j += 8) {
            uint64_t x;
            memcpy(&x, s + j, 8);
            const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
            uint64_t q = x ^ (ones * '"'), b = x ^ (ones * '\\');
            if ((((x - ones * 0x20) & ~x) | ((q - ones) & ~q) | ((b - ones) & ~b) | x) & highs)
                break;
        }
        while (j < n) {
            unsigned char c = (unsigned char)s[j];
            if (c < 0x20 || c == '"' || c == '\\' || c >= 0x80)
                break;
            j++;
        }
        if (j > i)
            jw_raw(w, s + i, j - i);
        if (j == n)
            break;
        char esc[6];
        size_t el, len = escape_at(s + j, n - j, esc, &el);
        if (el) {
            p = room(w, el);
            memcpy(p, esc, el);
            w->n += el;
        } else {
            jw_raw(w, s + j, len);
        }
        i = j + len;
    }
    p = room(w, 1);
    *p = '"';
    w->n++;
}
