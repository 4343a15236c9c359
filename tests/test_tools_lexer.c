/* The log lexer: markers found anywhere on a line, records sharing a line,
 * opaque attribute values, and every malformed record reported, not read. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "tools/loglex.h"

typedef struct got {
    int n, nbad;
    lx_rec rec[16];
    char bad[8][200];
    size_t badoff[8];
    bool bad_name_ok[8];
} got;

static void on_rec(void *ctx, const lx_rec *r)
{
    got *g = ctx;
    if (g->n < 16)
        g->rec[g->n] = *r;
    g->n++;
}

static void on_bad(void *ctx, const lx_rec *r, const char *msg)
{
    got *g = ctx;
    if (g->nbad < 8) {
        snprintf(g->bad[g->nbad], sizeof g->bad[0], "%s", msg);
        g->badoff[g->nbad] = r->off;
        g->bad_name_ok[g->nbad] = r->name_ok;
    }
    g->nbad++;
}

static void scan(const char *s, got *g)
{
    memset(g, 0, sizeof *g);
    lx_sink sink = {g, on_rec, on_bad, false};
    lx_scan(s, strlen(s), &sink);
}

static void scan_n(const char *s, size_t n, got *g);

static int attr_is(const lx_rec *r, int i, const char *k, const char *v)
{
    return i < r->nattr && lx_slice_eq(r->attr[i].key, k) && lx_slice_eq(r->attr[i].val, v);
}

static void test_bind_line_fields(void **st)
{
    (void)st;
    got g;
    scan("[mono_ns=5][T0x7f3c9a7fc640][TIMING] bind_trace_end: [bind_trace.c:9] bind phase=arena_h2d "
         "start_ns=100 dur_ns=42 nt=47 bytes=180480 args=96/40/0 pid=31337 inv=2\n",
         &g);
    assert_int_equal(g.n, 1);
    assert_int_equal(g.nbad, 0);
    const lx_rec *r = &g.rec[0];
    assert_int_equal(r->kind, LX_BIND);
    assert_true(lx_slice_eq(r->name, "arena_h2d"));
    assert_int_equal(r->start, 100);
    assert_int_equal(r->dur, 42);
    assert_true(r->has_pid && r->has_inv);
    assert_int_equal(r->pid, 31337);
    assert_int_equal(r->inv, 2);
    uint64_t th;
    assert_true(lx_thread(r, NULL, &th));
    assert_int_equal(th, 0x7f3c9a7fc640ull);
    assert_int_equal(r->nattr, 3);
    assert_true(attr_is(r, 0, "nt", "47") && r->attr[0].is_num && r->attr[0].num == 47);
    assert_true(attr_is(r, 2, "args", "96/40/0") && !r->attr[2].is_num);
    assert_int_equal(r->off, 0);
}

static void test_record_after_text_and_two_on_a_line(void **st)
{
    (void)st;
    got g;
    scan("worker 3 | [mono_ns=1][T0xa][TIMING] f: bind phase=args start_ns=1 dur_ns=2 bytes=3"
         "[mono_ns=2][T0xb][TIMING] f: host-orch phase=submit_task total_ns=9 count=5 detail_sum=0 dropped=0 "
         "timed=2 pid=7 inv=1   [mono_ns=3][T0xc][TIMING] s: [STRACE] v=1 pid=7 tid=8 inv=1 hid=ab depth=1 "
         "name=chip.run.bind ts=1 dur=20 \n",
         &g);
    assert_int_equal(g.nbad, 0);
    assert_int_equal(g.n, 3);
    assert_int_equal(g.rec[0].kind, LX_BIND);
    uint64_t th;
    assert_true(lx_thread(&g.rec[0], NULL, &th));
    assert_int_equal(th, 0xa);
    assert_int_equal(g.rec[0].off, 11);
    assert_int_equal(g.rec[0].nattr, 1);
    assert_true(attr_is(&g.rec[0], 0, "bytes", "3"));
    assert_int_equal(g.rec[1].kind, LX_ORCH);
    assert_true(lx_thread(&g.rec[1], NULL, &th));
    assert_int_equal(th, 0xb);
    assert_int_equal(g.rec[1].count, 5);
    assert_int_equal(g.rec[1].pid, 7);
    /* hbg's timed= (how many of count were timed) is an attribute */
    assert_int_equal(g.rec[1].nattr, 1);
    assert_true(attr_is(&g.rec[1], 0, "timed", "2"));
    assert_int_equal(g.rec[2].kind, LX_SPAN);
    assert_true(lx_thread(&g.rec[2], NULL, &th));
    assert_int_equal(th, 0xc);
    assert_true(lx_slice_eq(g.rec[2].name, "chip.run.bind"));
    assert_int_equal(g.rec[2].tid, 8);
    assert_int_equal(g.rec[2].dur, 20);
}

/* spans_only passes over bind-phase and host-orch records, even torn ones,
 * and still finds the span and the anchor sharing their line, with the
 * span's own prefix and line. */
static void test_spans_only(void **st)
{
    (void)st;
    static const char text[] =
        "[mono_ns=1][T0xa][TIMING] f: bind phase=args start_ns=1 dur_ns=2 bytes=3"
        "[mono_ns=2][T0xb][TIMING] f: host-orch phase=submit_task total_ns=x\n"
        "[mono_ns=3][T0xc][TIMING] s: [STRACE] v=1 pid=7 tid=8 inv=1 hid=ab depth=1 name=chip.run.bind ts=1 dur=20"
        "[mono_ns=4][T0xd][TIMING] a: [CLOCK_ANCHOR] v=1 pid=7 mono_ns=5 wall_ns=6\n";
    got g;
    memset(&g, 0, sizeof g);
    lx_sink sink = {&g, on_rec, on_bad, true};
    lx_scan(text, strlen(text), &sink);
    assert_int_equal(g.nbad, 0);
    assert_int_equal(g.n, 2);
    assert_int_equal(g.rec[0].kind, LX_SPAN);
    assert_int_equal(g.rec[0].line, 2);
    uint64_t th;
    assert_true(lx_thread(&g.rec[0], NULL, &th));
    assert_int_equal(th, 0xc);
    assert_int_equal(g.rec[0].dur, 20);
    assert_int_equal(g.rec[1].kind, LX_ANCHOR);
    assert_int_equal(g.rec[1].wall, 6);
    /* read in full, the same text has both phase records, one of them torn */
    scan(text, &g);
    assert_int_equal(g.n, 3);
    assert_int_equal(g.nbad, 1);
}

/* An anchor after a bind line on its line is not first there, whether
 * the scan lexes the bind line or passes it over, and whether or not
 * that line kept its prefix: both readings date the line alike. */
static void test_anchor_after_a_bind_line_not_first(void **st)
{
    (void)st;
    static const char *const lines[] = {
        "bind_trace_end: [bind_trace.c:1] bind phase=args start_ns=1 dur_ns=2  pid=7 inv=2 "
        "[mono_ns=4][T0xd][TIMING] a: [CLOCK_ANCHOR] v=1 pid=7 mono_ns=5 wall_ns=6\n",
        "x: host-orch phase=submit_task total_ns=9 count=5 detail_sum=0 dropped=0 "
        "[mono_ns=4][T0xd][TIMING] a: [CLOCK_ANCHOR] v=1 pid=7 mono_ns=5 wall_ns=6\n",
        "[mono_ns=1][T0xa][TIMING] f: bind phase=args start_ns=1 dur_ns=2 "
        "[mono_ns=4][T0xd][TIMING] a: [CLOCK_ANCHOR] v=1 pid=7 mono_ns=5 wall_ns=6\n",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        for (int spans_only = 0; spans_only < 2; spans_only++) {
            got g;
            memset(&g, 0, sizeof g);
            lx_sink sink = {&g, on_rec, on_bad, spans_only};
            lx_scan(lines[i], strlen(lines[i]), &sink);
            const lx_rec *a = &g.rec[g.n - 1];
            assert_int_equal(a->kind, LX_ANCHOR);
            assert_false(a->line_first);
        }
    /* after text that is no record, it is first */
    static const char prose[] = "worker 3| the bind phase is next [mono_ns=4][T0xd][TIMING] a: [CLOCK_ANCHOR] v=1 "
                                "pid=7 mono_ns=5 wall_ns=6\n";
    for (int spans_only = 0; spans_only < 2; spans_only++) {
        got g;
        memset(&g, 0, sizeof g);
        lx_sink sink = {&g, on_rec, on_bad, spans_only};
        lx_scan(prose, strlen(prose), &sink);
        assert_int_equal(g.n, 1);
        assert_true(g.rec[0].line_first);
    }
}

static void test_crlf_and_noise(void **st)
{
    (void)st;
    got g;
    scan("noise a=b rebind_phase=3 v=2 phase=9\r\n"
         "[mono_ns=1][T0x1][TIMING] f: bind phase=gm_heap start_ns=4 dur_ns=5  pid=1 inv=1\r\n"
         "[mono_ns=1][T0x1][TIMING] c: [CLOCK_ANCHOR] v=1 pid=1 mono_ns=10 wall_ns=20\r\n",
         &g);
    assert_int_equal(g.nbad, 0);
    assert_int_equal(g.n, 2);
    assert_int_equal(g.rec[0].dur, 5);
    assert_int_equal(g.rec[0].nattr, 0);
    assert_int_equal(g.rec[0].inv, 1);
    assert_int_equal(g.rec[1].kind, LX_ANCHOR);
    assert_int_equal(g.rec[1].wall, 20);
}

/* A NUL, or a CR before anything but a line's end or the next line's
 * '[', is inside a line: the record it cuts is reported, never read with
 * its last value cut ("dur_ns=7" of "dur_ns=7\r38382"), in each kind of
 * record; the rest of its line yields nothing. A CR before '\n', before
 * the next line's prefix or at the end ends a line (CRLF and CR-only
 * logs). */
static void test_nul_and_cr_inside_a_line(void **st)
{
    (void)st;
    static const char *const cut[] = {
        "[mono_ns=1][T0x1][TIMING] f: bind phase=args start_ns=1 dur_ns=7\r38382 pid=1 inv=1\n",
        "bind phase=args start_ns=1 dur_ns=7\r38382\n",
        "host-orch phase=submit_task total_ns=5\r0 count=1 detail_sum=0 dropped=0\n",
        "[STRACE] v=1 pid=1 tid=1 inv=1 hid=ab depth=0 name=a ts=5 dur=8\r1\n",
        "[CLOCK_ANCHOR] v=1 pid=1 mono_ns=10\r wall_ns=20\n",
    };
    static const char *const why[] = {"a CR byte inside the record (the line is cut or corrupt)",
                                      "a NUL byte inside the record (the line is cut or corrupt)"};
    char line[256];
    got g;
    for (size_t i = 0; i < sizeof cut / sizeof cut[0]; i++)
        for (int nul = 0; nul < 2; nul++) {
            size_t n = strlen(cut[i]);
            memcpy(line, cut[i], n);
            if (nul)
                *strchr(line, '\r') = 0;
            scan_n(line, n, &g);
            assert_int_equal(g.n, 0);
            assert_int_equal(g.nbad, 1);
            assert_string_equal(g.bad[0], why[nul]);
        }
    /* a CR before a '[' that starts no line of its own is inside one too */
    scan("bind phase=args start_ns=1 dur_ns=7\r[38382 pid=1 inv=1\n", &g);
    assert_int_equal(g.n, 0);
    assert_int_equal(g.nbad, 1);
    /* CR-only line ends (no '\n' in the text): each record whole, beside
     * blank lines, other output and unprefixed records */
    scan("[mono_ns=1][T0x1][TIMING] f: bind phase=args start_ns=1 dur_ns=7\r\r"
         "progress: step done\r"
         "bind phase=gm_heap start_ns=3 dur_ns=9\r"
         "bind phase=host_orch start_ns=4 dur_ns=11\r",
         &g);
    assert_int_equal(g.nbad, 0);
    assert_int_equal(g.n, 3);
    assert_int_equal(g.rec[0].dur, 7);
    assert_int_equal(g.rec[1].dur, 9);
    assert_int_equal(g.rec[2].dur, 11);
    /* CRLF converted twice ("\r\r\n"), and CRLF before a blank line */
    scan("bind phase=args start_ns=1 dur_ns=7\r\r\n\r\nbind phase=gm_heap start_ns=3 dur_ns=9\r\n", &g);
    assert_int_equal(g.nbad, 0);
    assert_int_equal(g.n, 2);
    assert_int_equal(g.rec[1].dur, 9);
    /* a malformed record read on to its pid= and inv= stops at another
     * record's phase= on its line, which is read whole */
    scan("bind phase=args start_ns=1 dur_ns= 5 bind phase=gm_heap start_ns=3 dur_ns=9 pid=4 inv=5\n", &g);
    assert_int_equal(g.nbad, 1);
    assert_int_equal(g.n, 1);
    assert_true(lx_slice_eq(g.rec[0].name, "gm_heap"));
    assert_int_equal(g.rec[0].pid, 4);
}

/* Span names are percent-decoded, but for control bytes, which stay
 * encoded (a NUL would end the name as a C string), a '%' without
 * two hex digits, and an encoded '%' that two hex digits follow. */
static void test_decode_name(void **st)
{
    (void)st;
    static const struct {
        const char *in, *out;
    } c[] = {
        {"chip.run", "chip.run"},
        {"a%20b%3D%5b%25", "a b=[%"},
        {"a%00b", "a%00b"},
        {"x%0Ay%1f%7F%7e", "x%0Ay%1f%7F~"},
        {"%4", "%4"},
        {"%zz%41", "%zzA"},
        /* a '%' before two hex digits stays encoded: "%2500" is not the NUL */
        {"%2500", "%2500"},
        {"%25%00", "%%00"},
        {"%254", "%4"},
        {"%25zz%2541x", "%zz%2541x"},
        {"a%25", "a%"},
    };
    char out[64];
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        size_t n = lx_decode_name((lx_slice){c[i].in, strlen(c[i].in)}, out);
        out[n] = 0;
        assert_string_equal(out, c[i].out);
    }
}

/* The one encoding of a name: what needs no encoding decoded, the rest
 * in capitals, a '%' without two hex digits as it stands. */
static void test_canon_name(void **st)
{
    (void)st;
    static const struct {
        const char *in, *out;
    } c[] = {
        {"chip.run", "chip.run"},
        {"chip.run.bin%64", "chip.run.bind"},
        {"a%2fb%2F", "a/b/"},
        {"a%20b%3d%5b%25", "a%20b%3D%5B%25"},
        {"x%0ay%7f%e2%82%ac", "x%0Ay%7F%E2%82%AC"},
        {"%4", "%254"},
        {"%zz%41", "%25zzA"},
        {"a%", "a%25"},
        /* raw bytes that need encoding meet their encoded spelling */
        {"x.caf\xc3\xa9", "x.caf%C3%A9"},
        {"x.caf%c3%A9", "x.caf%C3%A9"},
        {"z.a=b", "z.a%3Db"},
        {"y.a%zz", "y.a%25zz"},
        {"y.a%25zz", "y.a%25zz"},
    };
    char out[64];
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        size_t n = lx_canon_name((lx_slice){c[i].in, strlen(c[i].in)}, out);
        out[n] = 0;
        assert_string_equal(out, c[i].out);
    }
}

static void test_overflow_is_reported(void **st)
{
    (void)st;
    got g;
    scan("x\n[mono_ns=1][T0x1][TIMING] f: bind phase=args start_ns=1 dur_ns=18446744073709551616\n", &g);
    assert_int_equal(g.n, 0);
    assert_int_equal(g.nbad, 1);
    assert_string_equal(g.bad[0], "dur_ns= is a number past 64 bits");
    assert_int_equal(g.badoff[0], 2);
    /* 64 bits, but 2^62 ns or more: a wrapped clock, not a duration */
    static const char *const wrapped[][2] = {
        {"[mono_ns=1][T0x1][TIMING] f: bind phase=args start_ns=1 dur_ns=18446744073709551615\n", "dur_ns"},
        {"bind phase=args start_ns=1 dur_ns=4611686018427387904\n", "dur_ns"},
        {"host-orch phase=submit_task total_ns=4611686018427387904 count=1 detail_sum=0 dropped=0\n", "total_ns"},
    };
    for (size_t i = 0; i < sizeof wrapped / sizeof wrapped[0]; i++) {
        char want[96];
        snprintf(want, sizeof want, "%s= is 2^62 ns (146 years) or more: not a duration", wrapped[i][1]);
        scan(wrapped[i][0], &g);
        assert_int_equal(g.n, 0);
        assert_int_equal(g.nbad, 1);
        assert_string_equal(g.bad[0], want);
    }
    scan("bind phase=args start_ns=18446744073709551615 dur_ns=4611686018427387903\n", &g);
    assert_int_equal(g.n, 1);
    assert_true(g.rec[0].dur == LX_DUR_LIMIT_NS - 1);
    assert_true(g.rec[0].start == UINT64_MAX); /* a start is a clock reading: any 64 bits */
    scan("host-orch phase=submit_task total_ns=4611686018427387903 count=1 detail_sum=0 dropped=0\n", &g);
    assert_int_equal(g.n, 1);
    scan("bind phase=args start_ns=1 dur_ns=2 heap=99999999999999999999999\n", &g);
    assert_int_equal(g.nbad, 1);
    assert_string_equal(g.bad[0], "heap= is a number past 64 bits");
}

static void test_malformed_records(void **st)
{
    (void)st;
    got g;
    scan("[STRACE] v=1 pid=1 tid=2 inv=3 hid=ab depth=1 name=chip.run.bind ts=5\n", &g);
    assert_int_equal(g.nbad, 1);
    assert_string_equal(g.bad[0], "expected dur= (the span is torn)");
    scan("bind phase=args start_ns=12", &g);
    assert_int_equal(g.nbad, 1);
    assert_string_equal(g.bad[0], "expected dur_ns=<ns> (the line is cut short or not a bind line)");
    scan("bind phase=Args start_ns=1 dur_ns=2\n", &g);
    assert_string_equal(g.bad[0], "expected phase=<name of [a-z0-9_]>, found phase=Args");
    /* a name of the grammar too long to hold is said to be that, not a
     * name outside the grammar; LX_MAX_NAME characters are read */
    char line[512], name[LX_MAX_NAME + 2];
    memset(name, 'x', sizeof name - 1);
    name[sizeof name - 1] = 0;
    snprintf(line, sizeof line, "bind phase=%s start_ns=1 dur_ns=2\n", name);
    scan(line, &g);
    assert_int_equal(g.nbad, 1);
    assert_string_equal(g.bad[0], "phase=xxxxxxxxxxxxxxxxxxxxxxxx... is a name of 65 characters; the tools read names "
                                  "of at most 64");
    name[LX_MAX_NAME] = 0;
    snprintf(line, sizeof line, "bind phase=%s start_ns=1 dur_ns=2\n", name);
    scan(line, &g);
    assert_int_equal(g.n, 1);
    assert_int_equal(g.rec[0].name.n, LX_MAX_NAME);
    /* a prefix that is not the writers' is a line damaged at its start */
    static const char *const pfx[][2] = {
        {"[mono_ns=2x0][T0x1][TIMING] f: [a.c:1] host-orch phase=record_node total_ns=5 count=7 detail_sum=0 "
         "dropped=99\n", "its prefix [mono_ns=2x0][T0x1] is not [mono_ns=<ns>][T0x<hex>]"},
        {"[mono_ns=][T0x1][TIMING] f: [a.c:1] bind phase=args start_ns=1 dur_ns=2\n",
         "its prefix [mono_ns=][T0x1] is not [mono_ns=<ns>][T0x<hex>]"},
        {"[mono_ns=5][T0xg1][TIMING] f: [a.c:1] bind phase=args start_ns=1 dur_ns=2\n",
         "its prefix [mono_ns=5][T0xg1] is not [mono_ns=<ns>][T0x<hex>]"},
    };
    for (size_t i = 0; i < sizeof pfx / sizeof pfx[0]; i++) {
        scan(pfx[i][0], &g);
        assert_int_equal(g.n, 0);
        assert_int_equal(g.nbad, 1);
        assert_string_equal(g.bad[0], pfx[i][1]);
    }
    scan("[mono_ns=5][T0x7f3c9a7fc650][TIMING] f: [a.c:1] bind phase=args start_ns=1 dur_ns=2\n", &g);
    assert_int_equal(g.n, 1);
    /* LX_MAX_ATTRS attributes are read, one more is refused by name */
    size_t k = (size_t)snprintf(line, sizeof line, "bind phase=args start_ns=1 dur_ns=2");
    for (int i = 0; i < LX_MAX_ATTRS; i++)
        k += (size_t)snprintf(line + k, sizeof line - k, " a%d=%d", i, i);
    snprintf(line + k, sizeof line - k, "\n");
    scan(line, &g);
    assert_int_equal(g.n, 1);
    assert_int_equal(g.rec[0].nattr, LX_MAX_ATTRS);
    snprintf(line + k, sizeof line - k, " z=1\n");
    scan(line, &g);
    assert_int_equal(g.nbad, 1);
    assert_string_equal(g.bad[0], "more than 64 attributes (the most the tools read on one line)");
    scan("bind phase=args start_ns=-1 dur_ns=2\n", &g);
    assert_string_equal(g.bad[0], "expected start_ns=<decimal integer>, found start_ns=-1");
    scan("bind phase=args start_ns=1 dur_ns=2 pid=4\n", &g);
    assert_string_equal(g.bad[0], "pid= without inv=");
    scan("[CLOCK_ANCHOR] v=1 pid=1 mono_ns=2 wall_ns=3 extra=4\n", &g);
    assert_string_equal(g.bad[0], "text after wall_ns= ('extra')");
    scan("bind phase=args start_ns=1 dur_ns=2 stray\n", &g);
    assert_string_equal(g.bad[0], "expected key=value, found 'stray'");
    /* after a bad record the next one is still found */
    scan("bind phase=args start_ns=x dur_ns=2\nbind phase=args start_ns=1 dur_ns=2\n", &g);
    assert_int_equal(g.nbad, 1);
    assert_int_equal(g.n, 1);
}

/* A key given twice in one record is reported, never read as its first or
 * its last value: a doubled write would otherwise change a figure without
 * a word. Each kind of record, each kind of key; and the same key in two
 * records that share a line is no repeat. */
static void test_a_key_given_twice(void **st)
{
    (void)st;
    static const struct {
        const char *line, *why;
    } c[] = {
        {"bind phase=host_orch start_ns=1 dur_ns=1 dur_ns=999 pid=4 inv=2\n", "dur_ns= appears twice in the record"},
        {"bind phase=args start_ns=1 start_ns=1 dur_ns=2\n", "start_ns= appears twice in the record"},
        {"bind phase=args start_ns=1 dur_ns=2 pid=4 inv=3 inv=4\n", "inv= appears twice in the record"},
        {"bind phase=args start_ns=1 dur_ns=2 pid=4 pid=5 inv=3\n", "pid= appears twice in the record"},
        {"bind phase=host_orch start_ns=1 dur_ns=2 tasks=5 tasks=500\n", "tasks= appears twice in the record"},
        {"bind phase=args start_ns=1 dur_ns=2 phase=host_orch\n", "phase= appears twice in the record"},
        {"host-orch phase=submit_task total_ns=5 count=1 detail_sum=0 dropped=5 dropped=0\n",
         "dropped= appears twice in the record"},
        {"host-orch phase=submit_task total_ns=5 total_ns=6 count=1 detail_sum=0 dropped=0\n",
         "total_ns= appears twice in the record"},
        {"[STRACE] v=1 pid=1 tid=2 inv=3 hid=ab depth=0 name=chip.run ts=5 dur=7 dur=1\n",
         "dur= appears twice in the record"},
        {"[STRACE] v=1 pid=1 tid=2 inv=3 hid=ab depth=0 name=chip.run name=evil ts=5 dur=7\n",
         "name= appears twice in the record"},
        {"[STRACE] v=1 pid=1 tid=2 inv=3 hid=ab depth=0 name=chip.run ts=5 dur=7 clk=dev clk=dev\n",
         "clk= appears twice in the record"},
        {"[CLOCK_ANCHOR] v=1 pid=1 mono_ns=2 mono_ns=3 wall_ns=4\n", "mono_ns= appears twice in the record"},
    };
    got g;
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        scan(c[i].line, &g);
        if (g.nbad != 1 || g.n != 0)
            fail_msg("%s: %d bad, %d read", c[i].line, g.nbad, g.n);
        assert_string_equal(g.bad[0], c[i].why);
    }
    /* two keys the filter cannot tell apart (add_attr) are two keys */
    scan("bind phase=args start_ns=1 dur_ns=2 ad=1 ba=2 ad2=3\n", &g);
    assert_int_equal(g.nbad, 0);
    assert_int_equal(g.n, 1);
    assert_true(attr_is(&g.rec[0], 0, "ad", "1") && attr_is(&g.rec[0], 1, "ba", "2"));
    scan("bind phase=args start_ns=1 dur_ns=2 ad=1 ba=2 ba=3\n", &g);
    assert_int_equal(g.nbad, 1);
    assert_string_equal(g.bad[0], "ba= appears twice in the record");
    scan("[mono_ns=1][T0x1][TIMING] x: bind phase=args start_ns=1 dur_ns=2 pid=4 inv=2"
         "[mono_ns=2][T0x2][TIMING] x: bind phase=args start_ns=1 dur_ns=2 pid=5 inv=2\n",
         &g);
    assert_int_equal(g.nbad, 0);
    assert_int_equal(g.n, 2);
}

/* A line cut inside its marker or its name: reported, and naming no
 * segment (a cut name may be a known segment's prefix, or an unknown
 * segment that is not one). Tails too short to tell a record by are not. */
static void test_cut_marker_and_name(void **st)
{
    (void)st;
    got g;
    const char *pre = "[mono_ns=5][T0x7f00aa000640][TIMING] bind_trace_end: [bind_trace.c:212]";
    const char *cut[] = {" bind p", " bind pha", " bind phase", " bind phase\r", " host-orch ph"};
    char line[256];
    for (size_t i = 0; i < sizeof cut / sizeof cut[0]; i++) {
        for (int lf = 0; lf < 2; lf++) { /* before a line end, and as the text's last bytes */
            snprintf(line, sizeof line, "%s%s%s[mono_ns=6][T0x1][INFO] x: y\n", pre, cut[i], lf ? "\n" : "");
            if (!lf) /* the text ends there */
                line[strlen(pre) + strlen(cut[i])] = '\0';
            scan(line, &g);
            assert_int_equal(g.n, 0);
            assert_int_equal(g.nbad, 1);
            assert_string_equal(g.bad[0], "the line ends before phase= (cut short)");
            assert_int_equal(g.badoff[0], 0);
        }
    }
    /* " bind" alone, or a tail with no record prefix before it: other lines end so */
    snprintf(line, sizeof line, "%s bind\n", pre);
    scan(line, &g);
    assert_int_equal(g.nbad, 0);
    scan("the ports failed to bind p\n", &g);
    assert_int_equal(g.nbad, 0);
    /* prose after a record's prefix: no writer's [file:line] before the words */
    scan("[mono_ns=5][T0x1][INFO] run_case: [runner.c:101] entering bind phase\n", &g);
    assert_int_equal(g.nbad, 0);
    scan("[mono_ns=5][T0x1][INFO] run_case: waiting on bind p\n", &g);
    assert_int_equal(g.nbad, 0);
    scan("[mono_ns=5][T0x1][INFO] run_case: [runner.c:] bind phase\n", &g);
    assert_int_equal(g.nbad, 0);
    /* a file cut by a crash, padded with NULs */
    char padded[256];
    int np = snprintf(padded, sizeof padded, "%s bind pha", pre);
    memset(padded + np, 0, 8);
    scan_n(padded, (size_t)np + 8, &g);
    assert_int_equal(g.nbad, 1);
    assert_string_equal(g.bad[0], "the line ends before phase= (cut short)");
    /* a record earlier on the line spent the prefix: reported once, as itself */
    snprintf(line, sizeof line, "%s bind phase=args start_ns=1 dur_ns=2 bind ph\n", pre);
    scan(line, &g);
    assert_int_equal(g.n, 0);
    assert_int_equal(g.nbad, 1);
    assert_string_equal(g.bad[0], "expected key=value, found 'bind'");

    snprintf(line, sizeof line, "%s bind phase=arena\n", pre);
    scan(line, &g);
    assert_int_equal(g.nbad, 1);
    assert_string_equal(g.bad[0], "the line ends after phase=arena (cut short: expected start_ns= dur_ns=)");
    scan("host-orch phase=record_node\r\n", &g);
    assert_int_equal(g.nbad, 1);
    assert_string_equal(g.bad[0],
                        "the line ends after phase=record_node (cut short: expected total_ns= count= detail_sum= dropped=)");
    scan("bind phase=args", &g);
    assert_int_equal(g.nbad, 1);

    /* a NUL or a lone CR right after the name cuts it: "ar" names no
     * segment (once it became an unknown segment's row) */
    static const char nul_in[] = "bind phase=ar\0ena_build start_ns=1 dur_ns=2\n";
    scan_n(nul_in, sizeof nul_in - 1, &g);
    assert_int_equal(g.n, 0);
    assert_int_equal(g.nbad, 1);
    assert_string_equal(g.bad[0], "a NUL byte inside the record (the line is cut or corrupt)");
    assert_false(g.bad_name_ok[0]);
    scan("bind phase=ar\rena_build start_ns=1 dur_ns=2\n", &g);
    assert_int_equal(g.nbad, 1);
    assert_false(g.bad_name_ok[0]);
    /* a NUL later in the record leaves the name sound */
    static const char nul_late[] = "bind phase=arena_build start_ns=1\0 dur_ns=2\n";
    scan_n(nul_late, sizeof nul_late - 1, &g);
    assert_int_equal(g.nbad, 1);
    assert_true(g.bad_name_ok[0]);

    /* a text of CR-only line ends: its lines are counted, and a cut is seen on any */
    char cr[512];
    snprintf(cr, sizeof cr, "%s bind phase=args start_ns=1 dur_ns=2\r%s bind pha\r%s bind phase=gm_heap "
                            "start_ns=3 dur_ns=4\r", pre, pre, pre);
    scan(cr, &g);
    assert_int_equal(g.n, 2);
    assert_int_equal(g.rec[0].line, 1);
    assert_int_equal(g.rec[1].line, 3);
    assert_int_equal(g.nbad, 1);
    assert_string_equal(g.bad[0], "the line ends before phase= (cut short)");

    /* a reader of spans alone reads no bind line, cut or whole */
    snprintf(line, sizeof line, "%s bind pha\n", pre);
    memset(&g, 0, sizeof g);
    lx_sink spans = {&g, on_rec, on_bad, true};
    lx_scan(line, strlen(line), &spans);
    assert_int_equal(g.nbad, 0);
}

/* A log's pieces: the last one, when it does not end in a line end, was
 * cut there, and a record it cuts is malformed in each kind of record (its
 * last value may be cut: "dur=13" of "dur=13275108"); one a line end, a
 * CR or the next record's prefix ends is whole. lx_scan's text is not a
 * log and is read as it stands. */
static void scan_log(const char *const *piece, size_t n, got *g)
{
    memset(g, 0, sizeof *g);
    lx_sink sink = {g, on_rec, on_bad, false};
    lx_pos pos = {0, 1, false, true};
    for (size_t i = 0; i < n; i++)
        lx_scan_at(piece[i], strlen(piece[i]), &pos, &sink);
}

static void test_a_log_cut_inside_a_record(void **st)
{
    (void)st;
    static const char *const cut[] = {
        "[mono_ns=1][T0x1][TIMING] f: bind phase=args start_ns=1 dur_ns=7 pid=1 inv=1",
        "host-orch phase=submit_task total_ns=5 count=1 detail_sum=0 dropped=0",
        "[STRACE] v=1 pid=1 tid=1 inv=1 hid=ab depth=2 name=a ts=0 dur=13",
        "[STRACE] v=1 pid=1 tid=1 inv=1 hid=ab depth=2 name=a ts=0 dur=13 ",
        "[CLOCK_ANCHOR] v=1 pid=1 mono_ns=10 wall_ns=20",
    };
    got g;
    for (size_t i = 0; i < sizeof cut / sizeof cut[0]; i++) {
        const char *one[] = {cut[i]};
        scan_log(one, 1, &g);
        assert_int_equal(g.n, 0);
        assert_int_equal(g.nbad, 1);
        assert_string_equal(g.bad[0], "the log ends inside the record (cut short: no line end after it)");
        /* in the log's last piece, after whole lines */
        const char *two[] = {"[STRACE] v=1 pid=1 tid=1 inv=1 hid=ab depth=0 name=b ts=5 dur=6 \n", cut[i]};
        scan_log(two, 2, &g);
        assert_int_equal(g.n, 1);
        assert_int_equal(g.nbad, 1);
        assert_int_equal(g.badoff[0], strlen(two[0]));
        /* lx_scan reads the same text as a record */
        scan(cut[i], &g);
        assert_int_equal(g.nbad, 0);
        assert_int_equal(g.n, 1);
    }
    /* a cut that leaves a record with another fault is named as the cut:
     * "pid= without inv=" hid that the log was cut at all */
    static const char *const torn[] = {
        "[mono_ns=1][T0x1][TIMING] f: bind phase=args start_ns=1 dur_ns=7 pid=1",
        "[mono_ns=1][T0x1][TIMING] f: bind phase=args start_ns=1 dur_n",
        "host-orch phase=submit_task total_ns=5 count=1 deta",
        "[STRACE] v=1 pid=1 tid=1 inv=1 hid=ab depth=2 name=a ts=0",
        "[CLOCK_ANCHOR] v=1 pid=1 mono_ns=10 wall",
    };
    for (size_t i = 0; i < sizeof torn / sizeof torn[0]; i++) {
        const char *two[] = {"[STRACE] v=1 pid=1 tid=1 inv=1 hid=ab depth=0 name=b ts=5 dur=6 \n", torn[i]};
        scan_log(two, 2, &g);
        assert_int_equal(g.n, 1);
        assert_int_equal(g.nbad, 1);
        assert_string_equal(g.bad[0], "the log ends inside the record (cut short: no line end after it)");
        /* inside the log, the same record is torn, not cut by the end */
        scan(torn[i], &g);
        assert_int_equal(g.nbad, 1);
        assert_string_not_equal(g.bad[0], "the log ends inside the record (cut short: no line end after it)");
    }
    /* whole: a CR last (a CRLF line cut before its LF), a record the next
     * one's prefix ends, a CR-only text */
    const char *whole[] = {"[STRACE] v=1 pid=1 tid=1 inv=1 hid=ab depth=0 name=b ts=5 dur=6 \r",
                           "bind phase=args start_ns=1 dur_ns=7 pid=1 inv=1[mono_ns=1][T0x1][TIMING] x: y\n",
                           "bind phase=args start_ns=1 dur_ns=7\rbind phase=gm_heap start_ns=3 dur_ns=9\r"};
    for (size_t i = 0; i < sizeof whole / sizeof whole[0]; i++) {
        scan_log(&whole[i], 1, &g);
        assert_int_equal(g.nbad, 0);
        assert_true(g.n >= 1);
    }
}

static void test_stamps_only_at_line_start(void **st)
{
    (void)st;
    got g;
    scan("[stamp] abc env X=1 cmd\r\nnot [stamp] here\n[stamp] def\n", &g);
    assert_int_equal(g.n, 2);
    assert_true(lx_slice_eq(g.rec[0].name, "abc env X=1 cmd"));
    assert_true(lx_slice_eq(g.rec[1].name, "def"));
}

static void test_parse_u64(void **st)
{
    (void)st;
    uint64_t v = 0;
    lx_slice a = {"18446744073709551615", 20}, b = {"18446744073709551616", 20}, c = {"", 0}, d = {"12a", 3};
    lx_slice e = {"999999999999999999999x", 22};
    assert_int_equal(lx_parse_u64(a, &v), 0);
    assert_true(v == UINT64_MAX);
    assert_int_equal(lx_parse_u64(b, &v), -2);
    assert_int_equal(lx_parse_u64(c, &v), -1);
    assert_int_equal(lx_parse_u64(d, &v), -1);
    assert_int_equal(lx_parse_u64(e, &v), -1);
}

static void test_binary_and_empty(void **st)
{
    (void)st;
    got g;
    memset(&g, 0, sizeof g);
    lx_sink sink = {&g, on_rec, on_bad, false};
    lx_scan(NULL, 0, &sink);
    lx_scan("", 0, &sink);
    assert_int_equal(g.n + g.nbad, 0);
    unsigned char bin[4096];
    uint32_t x = 12345;
    for (size_t i = 0; i < sizeof bin; i++) {
        x = x * 1103515245u + 12345u;
        bin[i] = (unsigned char)(x >> 16);
    }
    memcpy(bin + 100, "bind phase=a\0b start_ns=", 24);
    lx_scan((const char *)bin, sizeof bin, &sink);
    assert_int_equal(g.n, 0);
    assert_true(g.nbad >= 1);
}

/* Numbers and keys of every length, at every distance from the end of
 * the text: the tokenizer reads eight bytes at a time where there are
 * eight, and bytewise near the end. */
static void scan_n(const char *s, size_t n, got *g)
{
    memset(g, 0, sizeof *g);
    lx_sink sink = {g, on_rec, on_bad, false};
    lx_scan(s, n, &sink);
}

static void test_lengths_and_ends(void **st)
{
    (void)st;
    static const char digits[] = "98765432109876543210";
    char line[256], want[32];
    got g;
    for (int nd = 1; nd <= 20; nd++)
        for (int pad = 0; pad < 30; pad++) {
            int n = snprintf(line, sizeof line, "bind phase=args dur_ns=7 pid=1 inv=2 start_ns=%.*s%*s", nd, digits,
                             pad, "");
            scan_n(line, (size_t)n, &g);
            if (nd <= 19) {
                assert_int_equal(g.nbad, 0);
                assert_int_equal(g.n, 1);
                snprintf(want, sizeof want, "%llu", (unsigned long long)g.rec[0].start);
                assert_int_equal((int)strlen(want), nd);
                assert_memory_equal(want, digits, (size_t)nd);
            } else {
                assert_int_equal(g.n, 0);
                assert_int_equal(g.nbad, 1);
                assert_string_equal(g.bad[0], "start_ns= is a number past 64 bits");
            }
            /* the same number as an attribute's value, and a digit run
             * that goes on into text */
            n = snprintf(line, sizeof line, "bind phase=args start_ns=1 dur_ns=2 k=%.*s k2=%.*sz%*s", nd, digits, nd,
                         digits, pad, "");
            scan_n(line, (size_t)n, &g);
            assert_int_equal(g.n + g.nbad, 1);
            if (nd <= 19) {
                assert_int_equal(g.rec[0].nattr, 2);
                assert_true(g.rec[0].attr[0].is_num);
                snprintf(want, sizeof want, "%llu", (unsigned long long)g.rec[0].attr[0].num);
                assert_memory_equal(want, digits, (size_t)nd);
                assert_int_equal(g.rec[0].attr[1].val.n, (size_t)nd + 1);
                assert_false(g.rec[0].attr[1].is_num);
            }
        }
    /* keys of every length; a control byte that ends no key stays in it */
    for (int kl = 1; kl <= 20; kl++)
        for (int pad = 0; pad < 20; pad++) {
            int n = snprintf(line, sizeof line, "bind phase=args start_ns=1 dur_ns=2 %.*s=5%*s", kl,
                             "abcdefgh\001jklmnopqrstu", pad, "");
            scan_n(line, (size_t)n, &g);
            assert_int_equal(g.nbad, 0);
            assert_int_equal(g.n, 1);
            assert_int_equal(g.rec[0].nattr, 1);
            assert_int_equal(g.rec[0].attr[0].key.n, (size_t)kl);
            assert_int_equal(g.rec[0].attr[0].num, 5);
            /* a key cut by the end of the text, or by a space, is no token */
            n = snprintf(line, sizeof line, "bind phase=args start_ns=1 dur_ns=2 %.*s%s", kl, "abcdefghijklmnopqrstu",
                         pad % 2 ? " =5" : "");
            scan_n(line, (size_t)n, &g);
            assert_int_equal(g.n, 0);
            assert_int_equal(g.nbad, 1);
        }
}

/* A run of blanks (spaces, tabs) between a marker's words reads as the
 * one space, as it does between the fields after them: a padded record is
 * read whole by either scan, never passed over without a word. */
static void test_padded_markers(void **st)
{
    (void)st;
    static const char text[] =
        "[mono_ns=1][T0xa][TIMING] f: [bind_trace.c:9] bind  phase=args start_ns=1 dur_ns=2  pid=7 inv=1\n"
        "[mono_ns=2][T0xa][TIMING] f: [bind_trace.c:9] host-orch\tphase=submit_task total_ns=9 count=5 "
        "detail_sum=0 dropped=0 pid=7 inv=1\n"
        "[mono_ns=3][T0xa][TIMING] emit_host_span: [STRACE]  v=1 pid=7 tid=8 inv=1 hid=ab depth=1 "
        "name=chip.run.bind ts=1 dur=20 \n"
        "[mono_ns=4][T0xa][TIMING] emit_host_span: [STRACE]\t v=1  pid=7 tid=8 inv=1 hid=ab depth=0 "
        "name=chip.run ts=1 dur=30 \n"
        "[mono_ns=5][T0xd][TIMING] clock_anchor: [CLOCK_ANCHOR]   v=1 pid=7 mono_ns=5 wall_ns=6\n";
    got g;
    scan(text, &g);
    assert_int_equal(g.nbad, 0);
    assert_int_equal(g.n, 5);
    static const lx_kind kinds[] = {LX_BIND, LX_ORCH, LX_SPAN, LX_SPAN, LX_ANCHOR};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(g.rec[i].kind, kinds[i]);
        assert_int_equal(g.rec[i].line, (size_t)i + 1);
        uint64_t th;
        assert_true(lx_thread(&g.rec[i], NULL, &th)); /* the prefix is the record's own */
    }
    assert_true(lx_slice_eq(g.rec[0].name, "args"));
    assert_int_equal(g.rec[0].dur, 2);
    assert_int_equal(g.rec[1].count, 5);
    assert_int_equal(g.rec[2].dur, 20);
    assert_int_equal(g.rec[3].depth, 0);
    assert_int_equal(g.rec[3].dur, 30);
    assert_int_equal(g.rec[4].wall, 6);
    /* a reader of spans finds the same spans and anchor */
    memset(&g, 0, sizeof g);
    lx_sink sink = {&g, on_rec, on_bad, true};
    lx_scan(text, strlen(text), &sink);
    assert_int_equal(g.nbad, 0);
    assert_int_equal(g.n, 3);
    assert_int_equal(g.rec[0].kind, LX_SPAN);
    assert_int_equal(g.rec[0].line, 3);
    assert_int_equal(g.rec[1].kind, LX_SPAN);
    assert_int_equal(g.rec[1].dur, 30);
    assert_int_equal(g.rec[2].kind, LX_ANCHOR);
    /* padded and torn: reported, not passed over */
    scan("[mono_ns=3][T0xa][TIMING] s: [STRACE]  v=1 pid=7 tid=8 inv=1 hid=ab depth=1 name=x ts=1\n", &g);
    assert_int_equal(g.n, 0);
    assert_int_equal(g.nbad, 1);
    assert_string_equal(g.bad[0], "expected dur= (the span is torn)");
    /* a padded marker cut before its '=' */
    scan("[mono_ns=5][T0x1][TIMING] bind_trace_end: [bind_trace.c:212] bind \t pha\n", &g);
    assert_int_equal(g.nbad, 1);
    assert_string_equal(g.bad[0], "the line ends before phase= (cut short)");
    /* the words run together are no marker */
    scan("[mono_ns=3][T0xa][TIMING] s: [STRACE]v=1 pid=7 tid=8 inv=1 hid=ab depth=1 name=x ts=1 dur=2\n"
         "x: bindphase=args start_ns=1 dur_ns=2\n",
         &g);
    assert_int_equal(g.n + g.nbad, 0);
}

/* A depth past 32 bits is damage, not a depth: the record is malformed,
 * as one with a number past 64 bits is, never read narrowed. */
static void test_depth_past_32_bits(void **st)
{
    (void)st;
    got g;
    scan("[STRACE] v=1 pid=1 tid=2 inv=3 hid=ab depth=4294967296 name=chip.run ts=5 dur=6 \n", &g);
    assert_int_equal(g.n, 0);
    assert_int_equal(g.nbad, 1);
    assert_string_equal(g.bad[0], "depth= is 2^32 or more: not a depth");
    scan("[STRACE] v=1 pid=1 tid=2 inv=3 hid=ab depth=4294967295 name=chip.run ts=5 dur=6 \n", &g);
    assert_int_equal(g.nbad, 0);
    assert_int_equal(g.n, 1);
    assert_int_equal(g.rec[0].depth, 4294967295u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bind_line_fields),
        cmocka_unit_test(test_record_after_text_and_two_on_a_line),
        cmocka_unit_test(test_spans_only),
        cmocka_unit_test(test_anchor_after_a_bind_line_not_first),
        cmocka_unit_test(test_crlf_and_noise),
        cmocka_unit_test(test_nul_and_cr_inside_a_line),
        cmocka_unit_test(test_decode_name),
        cmocka_unit_test(test_canon_name),
        cmocka_unit_test(test_overflow_is_reported),
        cmocka_unit_test(test_malformed_records),
        cmocka_unit_test(test_cut_marker_and_name),
        cmocka_unit_test(test_a_log_cut_inside_a_record),
        cmocka_unit_test(test_stamps_only_at_line_start),
        cmocka_unit_test(test_parse_u64),
        cmocka_unit_test(test_binary_and_empty),
        cmocka_unit_test(test_lengths_and_ends),
        cmocka_unit_test(test_a_key_given_twice),
        cmocka_unit_test(test_padded_markers),
        cmocka_unit_test(test_depth_past_32_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
