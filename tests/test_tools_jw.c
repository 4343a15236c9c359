/* The JSON writer's hand-written numbers, checked against printf: integers
 * of every length, nanoseconds as microseconds, and the sum-exact
 * durations against the exact decimal of their double (printf's %.70f)
 * rounded half up by hand. Then pieces of every length across the
 * buffer's end, and the writer thread's stream. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/jw.h"

/* A small deterministic generator (splitmix64). */
static uint64_t rnd(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A value of a random bit length: short numbers as often as long ones. */
static uint64_t rnd_len(uint64_t *s)
{
    unsigned bits = (unsigned)(rnd(s) % 64) + 1;
    uint64_t v = rnd(s);
    return bits == 64 ? v : v & ((1ull << bits) - 1);
}

static void check_u64(uint64_t v)
{
    char got[32], want[32];
    memset(got, 'x', sizeof got);
    size_t n = jw_fmt_u64(got, v);
    int k = snprintf(want, sizeof want, "%" PRIu64, v);
    assert_int_equal(n, (size_t)k);
    assert_memory_equal(got, want, n);
}

static void test_fmt_u64(void **st)
{
    (void)st;
    for (uint64_t v = 0; v < 200000; v++)
        check_u64(v);
    uint64_t p = 1;
    for (int i = 0; i < 20; i++, p *= 10)
        for (uint64_t d = 0; d < 3; d++) {
            check_u64(p + d);
            check_u64(p - 1 - d);
        }
    for (int b = 0; b < 64; b++) {
        check_u64(1ull << b);
        check_u64((1ull << b) - 1);
        check_u64((1ull << b) + 1);
    }
    check_u64(UINT64_MAX);
    check_u64(UINT64_MAX - 1);
    check_u64(10000000000000000000ull);
    uint64_t s = 1;
    for (int i = 0; i < 2000000; i++)
        check_u64(rnd_len(&s));
    /* exact values */
    char b[32];
    assert_int_equal(jw_fmt_u64(b, 0), 1);
    assert_memory_equal(b, "0", 1);
    assert_int_equal(jw_fmt_u64(b, 1787400000123456839ull), 19);
    assert_memory_equal(b, "1787400000123456839", 19);
    assert_int_equal(jw_fmt_u64(b, 18446744073709551615ull), 20);
    assert_memory_equal(b, "18446744073709551615", 20);
}

static void test_fmt_fixed(void **st)
{
    (void)st;
    char got[16], want[16];
    uint64_t s = 2;
    for (int i = 0; i < 1000000; i++) {
        uint32_t v = (uint32_t)(i < 100000 ? (uint64_t)i * 999 % 100000000u : rnd(&s) % 100000000u);
        jw_fmt8(got, v);
        snprintf(want, sizeof want, "%08" PRIu32, v);
        assert_memory_equal(got, want, 8);
        uint32_t w = (uint32_t)(rnd(&s) % 1000000000u);
        jw_fmt9(got, w);
        snprintf(want, sizeof want, "%09" PRIu32, w);
        assert_memory_equal(got, want, 9);
    }
    jw_fmt8(got, 99999999);
    assert_memory_equal(got, "99999999", 8);
    jw_fmt9(got, 95);
    assert_memory_equal(got, "000000095", 9);
    jw_fmt9(got, 999999999);
    assert_memory_equal(got, "999999999", 9);
}

/* A writer into memory: what it wrote, as a string the caller frees. */
typedef struct mem {
    FILE *f;
    char *p;
    size_t n;
    jw w;
} mem;

static void mem_open(mem *m)
{
    m->p = NULL;
    m->n = 0;
    m->f = open_memstream(&m->p, &m->n);
    assert_non_null(m->f);
    assert_true(jw_init(&m->w, m->f));
}

static char *mem_close(mem *m)
{
    assert_true(jw_flush(&m->w));
    jw_free(&m->w);
    assert_int_equal(fclose(m->f), 0);
    return m->p;
}

static void check_us(uint64_t ns, const char *want)
{
    mem m;
    mem_open(&m);
    jw_us(&m.w, ns);
    char *got = mem_close(&m);
    assert_string_equal(got, want);
    free(got);
}

/* A reader that truncates us * 1000 to integer ns, as Perfetto's JSON
 * importer does, gets ns (< 2^53). */
static bool truncates_to(double us, uint64_t ns)
{
    double m = us * 1000.0;
    return m >= (double)ns && m < (double)ns + 1.0;
}

/* The double Perfetto's own number parser makes of the decimal s: the
 * integer digits, plus the fraction's digits as one number divided by its
 * power of ten. */
static double perfetto_parse(const char *s)
{
    double v = 0, frac = 0, div = 1;
    for (; *s >= '0' && *s <= '9'; s++)
        v = v * 10 + (*s - '0');
    if (*s == '.')
        for (s++; *s >= '0' && *s <= '9'; s++) {
            frac = frac * 10 + (*s - '0');
            div *= 10;
        }
    return div > 1 ? v + frac / div : v;
}

/* Whether every reader takes ns from the decimal s: the nearest double
 * (a browser's) and Perfetto's parse, each times 1000 and truncated, and
 * the decimal cut after three fraction digits (Perfetto's older
 * releases). */
static bool reads_as(const char *s, uint64_t ns)
{
    char *dot;
    uint64_t cut = strtoull(s, &dot, 10) * 1000;
    for (unsigned i = 1, m = 100; *dot == '.' && i <= 3 && dot[i] >= '0' && dot[i] <= '9'; i++, m /= 10)
        cut += (uint64_t)(dot[i] - '0') * m;
    return truncates_to(strtod(s, NULL), ns) && truncates_to(perfetto_parse(s), ns) && cut == ns;
}

/* What jw_us must write: three decimals where every reader takes them as
 * ns; else the first of them followed by 001, 01, 1 or 5 that is. */
static void ref_us(uint64_t ns, char *out)
{
    if (!(ns % 1000)) {
        sprintf(out, "%" PRIu64, ns / 1000);
        return;
    }
    sprintf(out, "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));
    if (ns >= (1ull << 53) || reads_as(out, ns))
        return;
    size_t k = strlen(out);
    static const char *const nudge[] = {"001", "01", "1", "5"};
    for (size_t i = 0; i < 4; i++) {
        strcpy(out + k, nudge[i]);
        if (reads_as(out, ns))
            return;
    }
    out[k] = 0;
}

static void test_us(void **st)
{
    (void)st;
    check_us(0, "0");
    check_us(1, "0.001");
    check_us(999, "0.999");
    check_us(1000, "1");
    check_us(1010, "1.010");
    check_us(1234567, "1234.567");
    check_us(5120000000000ull, "5120000000");
    check_us(5120004426882ull, "5120004426.882");
    check_us(UINT64_MAX, "18446744073709551.615");
    /* 1.017 is 1.016999999999999904 as a double, and that times 1000 is
     * 1016.9999999999999: a reader that truncates would take 1016 ns. A
     * nudge in the sixth decimal (a thousandth of a ns) reads 1017 in
     * every reader, and still 1.017 cut after three decimals. */
    assert_true(1.017 * 1000.0 < 1017.0);
    check_us(1017, "1.017001");
    check_us(8723461420460ull, "8723461420.460001");
    /* past 2^52 ns (52 days) a double's step is a quarter of a ns: half
     * a nanosecond is the nudge that every reader takes */
    check_us(4503598854661846ull, "4503598854661.8465");
    uint64_t s = 3;
    char want[48];
    size_t nudged = 0;
    for (int i = 0; i < 200000; i++) {
        uint64_t ns = rnd_len(&s);
        ref_us(ns, want);
        check_us(ns, want);
        /* below 2^52 ns every value is read exactly by every reader */
        if (ns < (1ull << 52))
            assert_true(reads_as(want, ns));
        nudged += strlen(want) > 4 && strchr(want, '.') && strlen(strchr(want, '.')) > 4;
    }
    assert_true(nudged > 100); /* about one in a hundred */
}

/* The exact decimal of d > 0 to 17 significant digits, rounded half up,
 * with at most 20 after the point; trailing zeros and a bare point
 * dropped. printf writes a double's exact expansion. */
static void ref_sig17(double d, char *out)
{
    char e[128];
    snprintf(e, sizeof e, "%.70f", d);
    char dig[128];
    size_t nd = 0, nint = 0;
    for (const char *p = e; *p; p++) {
        if (*p == '.')
            nint = nd;
        else
            dig[nd++] = *p;
    }
    size_t f0 = 0;
    while (f0 < nd && dig[f0] == '0')
        f0++;
    size_t keep = f0 + 17; /* digits kept: up to the 17th significant */
    if (keep > nint + 20)
        keep = nint + 20;
    /* half up: the first digit dropped decides */
    char r[130];
    r[0] = '0';
    memcpy(r + 1, dig, keep);
    if (dig[keep] >= '5') {
        size_t i = keep;
        while (r[i] == '9')
            r[i--] = '0';
        r[i]++;
    }
    /* r: a leading carry digit, then the kept digits; the point after nint + 1 */
    size_t a = 0;
    while (a < nint && r[a] == '0')
        a++;
    size_t k = 0;
    for (size_t i = a; i < nint + 1; i++)
        out[k++] = r[i];
    size_t end = keep + 1;
    while (end > nint + 1 && r[end - 1] == '0')
        end--;
    if (end > nint + 1) {
        out[k++] = '.';
        for (size_t i = nint + 1; i < end; i++)
            out[k++] = r[i];
    }
    out[k] = 0;
}

/* What jw_dur_us must write, from its definition. */
static void ref_dur(uint64_t ts, uint64_t dur, char *out)
{
    uint64_t end = ts + dur;
    bool us = end < ts || end >= (1ull << 51);
    /* ts, the end and dur as a reader takes them from jw_us's texts */
    char ts_s[48], end_s[48], dur_s[48];
    ref_us(ts, ts_s);
    ref_us(end, end_s);
    ref_us(dur, dur_s);
    double t = strtod(ts_s, NULL), e = strtod(end_s, NULL), d = e - t;
    if (!us)
        us = d == strtod(dur_s, NULL) || t + d != e || !(d > 0);
    if (!us) {
        /* the sum-exact double must have a short binary fraction */
        double x = d;
        int s = 0;
        while (x != floor(x) && s <= 60) {
            x *= 2;
            s++;
        }
        us = s > 59 || d < 1e-19;
    }
    if (us) {
        ref_us(dur, out);
    } else {
        ref_sig17(d, out);
    }
}

static void check_dur(uint64_t ts, uint64_t dur)
{
    char want[160];
    ref_dur(ts, dur, want);
    mem m;
    mem_open(&m);
    jw_dur_us(&m.w, ts, dur);
    char *got = mem_close(&m);
    if (strcmp(got, want))
        fail_msg("ts=%" PRIu64 " dur=%" PRIu64 ": wrote %s, want %s", ts, dur, got, want);
    /* and the sum is exact: a reader's ts + dur is the end's double */
    double back = strtod(got, NULL);
    uint64_t end = ts + dur;
    char ts_s[48], end_s[48], dur_s[48];
    ref_us(ts, ts_s);
    ref_us(end, end_s);
    ref_us(dur, dur_s);
    if (end >= ts && end < (1ull << 51) && strcmp(got, dur_s))
        assert_true(strtod(ts_s, NULL) + back == strtod(end_s, NULL));
    free(got);
}

static void test_dur_exact_values(void **st)
{
    (void)st;
    char b[160];
    const struct {
        uint64_t ts, dur;
        const char *want;
    } v[] = {
        {5000000000100ull, 135780, "135.77999973297119"},
        {5120000000000ull, 4426881, "4426.8809995651245"},
        {5120004426882ull, 40016815, "40016.814999580383"},
        {5120000000000ull, 44443706, "44443.706000328064"},
        {5120000000000ull, 76909, "76.909000396728516"},
        {0, 135780, "135.780"}, /* the decimals sum exactly: as jw_us writes them */
        {5120000000000ull, 0, "0"},
        {1ull << 51, 1500, "1.500"},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        mem m;
        mem_open(&m);
        jw_dur_us(&m.w, v[i].ts, v[i].dur);
        char *got = mem_close(&m);
        assert_string_equal(got, v[i].want);
        free(got);
        ref_dur(v[i].ts, v[i].dur, b);
        assert_string_equal(b, v[i].want);
    }
}

static void test_dur_against_printf(void **st)
{
    (void)st;
    uint64_t s = 4;
    for (int i = 0; i < 300000; i++) {
        uint64_t ts, dur;
        switch (i % 4) {
        case 0: /* a process's uptime in ns, as the logs have them */
            ts = 5000000000000ull + rnd(&s) % 1000000000000ull;
            dur = rnd(&s) % 100000000ull;
            break;
        case 1: /* short slices */
            ts = rnd(&s) % (1ull << 50);
            dur = rnd(&s) % 5000;
            break;
        case 2: /* any length, near the limit */
            ts = (1ull << 51) - 1 - rnd(&s) % (1ull << 40);
            dur = rnd(&s) % (1ull << 40);
            break;
        default: /* small times, where the fraction starts with zeros */
            ts = rnd(&s) % 100000;
            dur = rnd(&s) % 100000;
            break;
        }
        check_dur(ts, dur);
    }
}

/* Pieces of every length written at every distance from the buffer's
 * end come out whole and in order, through stdio and through the thread. */
static void pieces(bool background)
{
    char *src = malloc(300);
    assert_non_null(src);
    for (int i = 0; i < 300; i++)
        src[i] = (char)('A' + i % 26);
    size_t total = 0;
    for (int round = 0; round < 3; round++)
        for (size_t n = 0; n <= 200; n++)
            total += n + 20;
    char *want = malloc(total + 1), *w = want;
    assert_non_null(want);
    mem m;
    mem_open(&m);
    if (background)
        assert_false(jw_background(&m.w)); /* a memory stream has no descriptor: it stays in line */
    for (int round = 0; round < 3; round++)
        for (size_t n = 0; n <= 200; n++) {
            jw_raw(&m.w, src + round, n);
            memcpy(w, src + round, n);
            w += n;
            jw_u64(&m.w, 12345678901234567890ull);
            memcpy(w, "12345678901234567890", 20);
            w += 20;
        }
    *w = 0;
    char *got = mem_close(&m);
    assert_string_equal(got, want);
    free(got);
    free(want);
    free(src);
}

static void test_pieces(void **st)
{
    (void)st;
    pieces(false);
    pieces(true);
}

/* Strings: a well-formed UTF-8 character passes as it is (JSON text is
 * UTF-8, and "café" must read as café, not cafÃ©); each byte that is no
 * part of one (a lone lead or continuation byte, an overlong form, a
 * surrogate, past U+10FFFF, cut short) becomes U+FFFD, so the output
 * stays valid whatever the log holds, and no byte is passed off as the
 * Latin-1 character of its value (\u00ff was ÿ, another string). Control
 * bytes and C1 controls (U+0080..U+009F) are written \u00XX. */
static void check_str(const char *in, size_t n, const char *want)
{
    mem m;
    mem_open(&m);
    jw_str(&m.w, in, n);
    char *got = mem_close(&m);
    assert_string_equal(got, want);
    free(got);
    /* jw_str_text is that string, unescaped: written, it is written alike;
     * jw_str_exact says whether it is the input */
    char *txt = malloc(3 * n + 1);
    assert_non_null(txt);
    size_t tn = jw_str_text(in, n, txt);
    mem_open(&m);
    jw_str(&m.w, txt, tn);
    got = mem_close(&m);
    assert_string_equal(got, want);
    free(got);
    assert_int_equal(jw_str_exact(in, n), tn == n && !memcmp(txt, in, n));
    free(txt);
}

static void test_strings(void **st)
{
    (void)st;
    check_str("caf\xc3\xa9", 5, "\"caf\xc3\xa9\"");
    check_str("\xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf", 13, "\"\xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf\"");
    check_str("a\"b\\c\x01\x7f", 7, "\"a\\\"b\\\\c\\u0001\x7f\"");
#define FFFD "\xef\xbf\xbd" /* U+FFFD, the replacement character */
    check_str("\xff\xfe", 2, "\"" FFFD FFFD "\"");
    check_str("\xc3\x28", 2, "\"" FFFD "(\"");                       /* lead byte, no continuation */
    check_str("\xa9x", 2, "\"" FFFD "x\"");                          /* lone continuation */
    check_str("\xc0\xaf", 2, "\"" FFFD FFFD "\"");                   /* overlong '/' */
    check_str("\xe0\x80\xaf", 3, "\"" FFFD FFFD FFFD "\"");          /* overlong, 3 bytes */
    check_str("\xed\xa0\x80", 3, "\"" FFFD FFFD FFFD "\"");          /* a surrogate */
    check_str("\xf4\x90\x80\x80", 4, "\"" FFFD FFFD FFFD FFFD "\""); /* past U+10FFFF */
    check_str("ab\xe2\x82", 4, "\"ab" FFFD FFFD "\"");               /* cut short at the end */
    check_str("\xef\xbf\xbd", 3, "\"" FFFD "\"");                    /* U+FFFD itself passes */
    check_str("a\xff"
              "b\xc3\xa9\x01",
              6, "\"a" FFFD "b\xc3\xa9\\u0001\""); /* mixed */
    char txt[16];
    assert_int_equal(jw_str_text("k\xff\xfe", 3, txt), 7);
    assert_memory_equal(txt, "k" FFFD FFFD, 7);
    assert_false(jw_str_exact("k\xff", 2));
    assert_false(jw_str_exact("ab\xe2\x82", 4));
    assert_true(jw_str_exact("k" FFFD, 4));
    assert_true(jw_str_exact("\xc2\x9b\x01", 3)); /* escaped, but the same string */
#undef FFFD
    /* a C1 control is escaped as C0 ones are (the same string to a
     * parser, no CSI to a terminal showing the file); U+00A0 is not one */
    check_str("\xc2\x9b[2J\xc2\x80\xc2\x9f\xc2\xa0", 11, "\"\\u009b[2J\\u0080\\u009f\xc2\xa0\"");
    /* past the eight-byte fast path, a character at every offset */
    char lng[64];
    char want[80];
    for (int at = 0; at < 20; at++) {
        memset(lng, 'x', sizeof lng);
        memcpy(lng + at, "\xc3\xa9", 2);
        lng[24] = 0;
        snprintf(want, sizeof want, "\"%s\"", lng);
        check_str(lng, 24, want);
    }
}

/* The writer thread: megabytes through a file, byte for byte. */
static void test_background_file(void **st)
{
    (void)st;
    FILE *f = tmpfile();
    assert_non_null(f);
    jw w;
    assert_true(jw_init(&w, f));
    JW_LIT(&w, "head:");
    assert_true(jw_background(&w));
    assert_false(jw_background(&w)); /* once */
    uint64_t s = 5, sum = 0;
    for (int i = 0; i < 400000; i++) {
        uint64_t v = rnd_len(&s);
        jw_u64(&w, v);
        JW_LIT(&w, ",");
        sum += v;
    }
    assert_true(jw_flush(&w));
    JW_LIT(&w, "tail");
    assert_true(jw_flush(&w));
    jw_free(&w);
    rewind(f);
    char head[6] = {0};
    assert_int_equal(fread(head, 1, 5, f), 5);
    assert_string_equal(head, "head:");
    uint64_t s2 = 5, sum2 = 0;
    for (int i = 0; i < 400000; i++) {
        uint64_t v;
        assert_int_equal(fscanf(f, "%" SCNu64 ",", &v), 1);
        assert_true(v == rnd_len(&s2));
        sum2 += v;
    }
    char tail[8] = {0};
    assert_int_equal(fread(tail, 1, 7, f), 4);
    assert_string_equal(tail, "tail");
    assert_true(sum == sum2);
    fclose(f);
}

/* A write that fails in the middle of the output is told at jw_flush with
 * its own errno, whatever the calls after it left in errno. */
static void test_failed_write_keeps_its_errno(void **st)
{
    (void)st;
    FILE *f = fopen("/dev/full", "w");
    if (!f)
        skip();
    setvbuf(f, NULL, _IONBF, 0);
    jw w;
    assert_true(jw_init(&w, f));
    for (int i = 0; i < 100000; i++) /* several spills */
        jw_u64(&w, (uint64_t)i);
    errno = ENOENT; /* what a later call might leave */
    assert_false(jw_flush(&w));
    assert_int_equal(errno, ENOSPC);
    errno = 0;
    assert_false(jw_flush(&w)); /* and again */
    assert_int_equal(errno, ENOSPC);
    jw_free(&w);
    fclose(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fmt_u64),
        cmocka_unit_test(test_fmt_fixed),
        cmocka_unit_test(test_us),
        cmocka_unit_test(test_dur_exact_values),
        cmocka_unit_test(test_dur_against_printf),
        cmocka_unit_test(test_pieces),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_background_file),
        cmocka_unit_test(test_failed_write_keeps_its_errno),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
