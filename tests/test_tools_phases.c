/* Pass grouping and phase statistics on hand-written logs of both runtimes:
 * exact numbers, and the exact warning for every defect a log can have. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/tools_support.h"
#include "tools/phstats.h"

typedef struct fx {
    char *buf;
    size_t len;
    ps_log L;
    phs_result R;
    hbg_status st;
} fx;

/* Groups fixture NAME; warnings name it by NAME alone. */
static fx *load(const char *name, bool keep_first)
{
    fx *f = calloc(1, sizeof *f);
    f->buf = ts_slurp(ts_fixture(name), &f->len);
    assert_non_null(f->buf);
    ps_options o = {.keep_first = keep_first};
    assert_int_equal(ps_read(&f->L, name, f->buf, f->len, &o), HBG_OK);
    f->st = f->L.nused ? phs_compute(&f->L, &f->R, NULL) : HBG_OK;
    return f;
}

static void drop(fx *f)
{
    ps_free(&f->L);
    free(f->buf);
    free(f);
}

/* The process's anonymous memory on huge pages, in kB (0 where the kernel
 * does not say). */
static long anon_huge_kb(void)
{
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    long kb = 0;
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb;
}

/* Whether the kernel puts any anonymous memory on huge pages on its own
 * ("always"): then the heap may be collapsed into one at any moment, and
 * the process's count says nothing about the reader's arrays. */
static bool huge_pages_always(void)
{
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    char line[128] = "";
    if (f) {
        if (!fgets(line, sizeof line, f))
            line[0] = 0;
        fclose(f);
    }
    return strstr(line, "[always]") != NULL;
}

/* A small log costs a few small pages, not a huge page cleared whole
 * (2 MiB) per array: reading one took half a millisecond of page
 * clearing, seconds for hbg compare over a thousand logs. Where the
 * kernel gives no huge pages this holds trivially. */
static void a_small_log_takes_no_huge_page(void **st)
{
    (void)st;
    if (huge_pages_always())
        skip();
    static const char *const names[] = {"hbg-grammar-1rank-3round.log", "original-2rank-interleaved.log"};
    for (int i = 0; i < 2; i++) {
        int fd = open(ts_fixture(names[i]), O_RDONLY);
        assert_true(fd >= 0);
        long before = anon_huge_kb();
        ps_log L;
        phs_result R;
        ps_options o = {.keep_spans = true};
        char err[256];
        assert_int_equal(ps_read_fd(&L, names[i], fd, &o, err, sizeof err), HBG_OK);
        assert_true(L.nused > 0);
        assert_int_equal(phs_compute(&L, &R, NULL), HBG_OK);
        assert_int_equal(anon_huge_kb() - before, 0);
        ps_free(&L);
        close(fd);
    }
}

/* Lines cut to the reader's bound are named by the first one's number
 * (the warning said how many, not where): the lines around them keep
 * their numbers, and a malformed line after them is named right. */
static void a_cut_line_is_named_by_its_number(void **st)
{
    (void)st;
    char *src = ts_slurp(ts_fixture("ours-1rank-4pass.log"), NULL);
    assert_non_null(src);
    size_t n = strlen(src), m = 5000, first = (size_t)((char *)memchr(src, '\n', n) - src) + 1;
    char *text = malloc(n + 3 * m + 128), *at = text;
    memcpy(at, src, first); /* line 1, the stamp; two lines too long; a malformed line; the rest */
    at += first;
    for (int k = 0; k < 2; k++) {
        memset(at, 'x', m);
        at += m;
        *at++ = '\n';
    }
    at += sprintf(at, "[mono_ns=1][T0x1][TIMING] f: [a.c:1] bind phase=host_orch start_ns=x dur_ns=1\n");
    memcpy(at, src + first, n - first);
    at += n - first;
    char *in = ts_temp_file(text, (size_t)(at - text), ".log");
    int fd = open(in, O_RDONLY);
    assert_true(fd >= 0);
    ps_log L;
    ps_options o = {.max_line = 4096, .chunk = 1024};
    char err[256];
    assert_int_equal(ps_read_fd(&L, "cut.log", fd, &o, err, sizeof err), HBG_OK);
    close(fd);
    bool named = false, bad = false;
    for (size_t i = 0; i < L.warn.n; i++) {
        named |= !strcmp(L.warn.msg[i], "cut.log:2: 2 lines longer than 0 MiB (no record is; a corrupt or truncated "
                                        "tail?), this the first: read as their first 0 MiB, the rest skipped");
        bad |= !strncmp(L.warn.msg[i], "cut.log:4: malformed bind line", 30);
    }
    if (!named || !bad)
        for (size_t i = 0; i < L.warn.n; i++)
            print_message("%s\n", L.warn.msg[i]);
    assert_true(named && bad);
    ps_free(&L);
    remove(in);
    free(in), free(text), free(src);
}

static const phs_stat *row(fx *f, const char *seg)
{
    for (int r = 0; r < f->R.nrow; r++)
        if (!strcmp(f->L.segname[f->R.row_seg[r]], seg))
            return &f->R.row[r];
    return NULL;
}

static void check(const phs_stat *s, uint64_t mn, uint64_t med, int half, uint64_t mx, size_t n)
{
    assert_non_null(s);
    assert_int_equal(s->min, mn);
    assert_int_equal(s->med.whole, med);
    assert_int_equal(s->med.half, half);
    assert_int_equal(s->max, mx);
    assert_int_equal(s->n, n);
}

static void warnings_are(fx *f, const char *const *want, size_t n)
{
    for (size_t i = 0; i < f->L.warn.n && i < n; i++)
        assert_string_equal(f->L.warn.msg[i], want[i]);
    assert_int_equal(f->L.warn.n, n);
}

static void test_ours_one_rank(void **st)
{
    (void)st;
    fx *f = load("ours-1rank-4pass.log", false);
    assert_int_equal(f->L.npass, 4);
    assert_int_equal(f->L.nrank, 1);
    assert_int_equal(f->L.ncold, 1);
    assert_int_equal(f->L.nused, 3);
    assert_int_equal(f->L.nbind, 40);
    assert_true(f->L.has_stamp);
    assert_true(lx_slice_eq(f->L.stamp, "1a2b3c4 env HBG_BIND_BREAKDOWN=1 hbg run qwen --rounds 4 -o "
                                        "outputs/bind_qwen_numbers_1a2b3c4_r1.log"));
    assert_int_equal(f->R.nrow, 10);
    check(row(f, "args"), 20000, 20001, 0, 20002, 3);
    check(row(f, "host_orch"), 1000, 2000, 0, 3000, 3);
    check(row(f, "graph_upload"), 500, 600, 0, 700, 3);
    check(row(f, "arena_h2d"), 100, 105, 0, 110, 3);
    check(row(f, "host_view_close"), 30000, 30001, 0, 30003, 3);
    check(&f->R.total, 1600, 2705, 0, 3810, 3);
    assert_int_equal(f->R.control, (1u << PS_HOST_ORCH) | (1u << PS_GRAPH_UPLOAD) | (1u << PS_ARENA_H2D));
    assert_int_equal(f->R.heap_used.value, 127673344);
    assert_false(f->R.heap_used.varies);
    assert_int_equal(f->R.tasks.value, 47);
    assert_int_equal(f->R.bytes[PS_ARGS].value, 40859999040ull);
    assert_int_equal(f->R.bytes[PS_ARENA_H2D].value, 180480);
    assert_int_equal(f->R.bytes[PS_GM_HEAP].n, 0);
    assert_int_equal(f->R.op_count[PS_OP_RECORD_NODE].value, 277);
    assert_int_equal(f->L.warn.n, 0);
    drop(f);
}

/* A rank's cold pass is its lowest inv=, wherever it lies in the file: a
 * warm pass first (logs joined in the wrong order) once made the cold
 * pass, 900 times slower, a used one, with no word. */
static void the_cold_pass_is_the_lowest_inv(void **st)
{
    (void)st;
    static const struct {
        unsigned inv;
        unsigned orch;
    } order[] = {{2, 1000}, {1, 900000}, {3, 1100}};
    char text[2048];
    size_t n = 0;
    for (size_t i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++)
            n += (size_t)snprintf(text + n, sizeof text - n,
                                  "[mono_ns=1][T0x1][TIMING] bind_trace_end: [bind_trace.c:24] bind phase=%s "
                                  "start_ns=1 dur_ns=%u pid=9 inv=%u\n",
                                  k == 0 ? "host_orch" : k == 1 ? "graph_upload" : "arena_h2d",
                                  k ? 1 : order[i].orch, order[i].inv);
    fx f = {0};
    ps_options o = {0};
    assert_int_equal(ps_read(&f.L, "ooo.log", text, n, &o), HBG_OK);
    assert_int_equal(f.L.ncold, 1);
    assert_int_equal(f.L.nused, 2);
    assert_false(f.L.pass[0].cold);
    assert_true(f.L.pass[1].cold);
    assert_int_equal(f.L.warn.n, 1);
    assert_string_equal(f.L.warn.msg[0], "ooo.log:1: pass pid=9 inv=2 comes before its rank's pass inv=1 (line 4): "
                                         "the passes are out of order; inv=1 is taken as the cold pass");
    assert_int_equal(phs_compute(&f.L, &f.R, NULL), HBG_OK);
    check(&f.R.total, 1002, 1052, 0, 1102, 2);
    ps_free(&f.L);
}

/* Our lines are grouped by (pid, inv) however they interleave: a pass
 * whose host-orch line comes before its bind lines (a log sorted by
 * another key, or two writers' lines shuffled) is whole. The line was
 * warned as having "no bind burst before it" and dropped, so the pass
 * lost its op counts. A key that has host-orch lines only is a pass
 * without its bind lines: said once and excluded. */
static void a_host_orch_line_before_its_bind_lines(void **st)
{
    (void)st;
    char text[4096];
    size_t n = 0;
    for (unsigned inv = 1; inv <= 4; inv++) {
        char orch[160];
        snprintf(orch, sizeof orch,
                 "[mono_ns=1][T0x1][TIMING] f: [a.c:2] host-orch phase=submit_task total_ns=%u count=%u "
                 "detail_sum=0 dropped=0 pid=9 inv=%u\n",
                 400 + inv, 10 + inv, inv);
        if (inv == 3) /* pass 3's host-orch line first */
            n += (size_t)snprintf(text + n, sizeof text - n, "%s", orch);
        for (int k = 0; k < 2; k++)
            n += (size_t)snprintf(text + n, sizeof text - n,
                                  "[mono_ns=1][T0x1][TIMING] f: [a.c:1] bind phase=%s start_ns=1 dur_ns=%u pid=9 "
                                  "inv=%u\n",
                                  k ? "arena_h2d" : "host_orch", k ? 10 : 1000 + inv, inv);
        if (inv != 3)
            n += (size_t)snprintf(text + n, sizeof text - n, "%s", orch);
    }
    n += (size_t)snprintf(text + n, sizeof text - n,
                          "[mono_ns=1][T0x1][TIMING] f: [a.c:2] host-orch phase=submit_task total_ns=1 count=1 "
                          "detail_sum=0 dropped=0 pid=9 inv=5\n");
    fx f = {0};
    ps_options o = {0};
    assert_int_equal(ps_read(&f.L, "early.log", text, n, &o), HBG_OK);
    assert_int_equal(f.L.npass, 5);
    assert_int_equal(f.L.ncold, 1);
    assert_int_equal(f.L.nused, 3);
    for (size_t i = 0; i < 4; i++) {
        assert_true(f.L.pass[i].has_orch);
        assert_int_equal(f.L.pass[i].op_count[0], 10 + f.L.pass[i].inv);
    }
    assert_int_equal(f.L.warn.n, 1);
    assert_string_equal(f.L.warn.msg[0], "early.log:13: pass pid=9 inv=5 has host-orch lines and no bind lines; "
                                         "excluded");
    assert_int_equal(phs_compute(&f.L, &f.R, NULL), HBG_OK);
    check(&f.R.total, 1012, 1013, 0, 1014, 3);
    ps_free(&f.L);
}

/* A pass whose span is missing takes the pid of the other passes of its
 * thread, but ranks forked from one process share a thread id: on a
 * thread of two pids it is no one's (taking the nearest named pass's pid
 * counted pid 200's cold pass, 9000 ns, as a warm one of pid 100). On a
 * thread of one pid (300 on 0x2) it still takes that pid, and is cold. */
static void a_spanless_pass_on_a_shared_thread_is_no_ones(void **st)
{
    (void)st;
    static const struct {
        unsigned thread, pid, inv, orch; /* pid 0: its span is missing */
    } pass[] = {{1, 100, 1, 1000}, {1, 0, 0, 9000}, {2, 0, 0, 7000}, {1, 100, 2, 100}, {1, 200, 2, 900},
                {2, 300, 2, 700},  {1, 100, 3, 110}, {1, 200, 3, 910}, {2, 300, 3, 710}};
    char text[8192];
    size_t n = 0;
    for (size_t i = 0; i < sizeof pass / sizeof pass[0]; i++) {
        for (int k = 0; k < 2; k++)
            n += (size_t)snprintf(text + n, sizeof text - n,
                                  "[mono_ns=1][T0x%u][TIMING] f: [host_phase_trace.c:393] bind phase=%s start_ns=1 "
                                  "dur_ns=%u\n",
                                  pass[i].thread, k ? "arena_h2d" : "host_orch", k ? 0 : pass[i].orch);
        if (pass[i].pid)
            n += (size_t)snprintf(text + n, sizeof text - n,
                                  "[mono_ns=1][T0x%u][TIMING] emit_host_span: [STRACE] v=1 pid=%u tid=%u inv=%u "
                                  "hid=ab depth=1 name=chip.run.bind ts=1 dur=%u\n",
                                  pass[i].thread, pass[i].pid, pass[i].pid, pass[i].inv, pass[i].orch);
    }
    fx f = {0};
    ps_options o = {0};
    assert_int_equal(ps_read(&f.L, "shared.log", text, n, &o), HBG_OK);
    assert_int_equal(f.L.nrank, 3);
    assert_false(f.L.pass[1].has_pid);
    assert_true(f.L.pass[1].defects & PS_D_NO_PID);
    assert_false(f.L.pass[1].cold);
    assert_true(f.L.pass[2].has_pid && f.L.pass[2].pid == 300 && f.L.pass[2].cold);
    assert_int_equal(f.L.ncold, 3);  /* pid 100 inv 1, pid 200 inv 2 (its first seen), pid 300's spanless */
    assert_int_equal(f.L.nused, 5);
    assert_int_equal(f.L.warn.n, 1);
    assert_string_equal(f.L.warn.msg[0], "shared.log:4: pass thread 0x1 has no pid (no chip.run.bind span), and its "
                                         "thread carries the passes of several pids, any one's it could be; "
                                         "excluded");
    assert_int_equal(f.L.rank[0].npasses, 3);
    assert_int_equal(f.L.rank[1].npasses, 3); /* pid 300 */
    assert_int_equal(f.L.rank[2].npasses, 2); /* pid 200: the spanless pass counts in no rank */
    char why[256];
    ps_exclusions(&f.L, why, sizeof why);
    assert_string_equal(why, "1 of no one pid");
    assert_int_equal(phs_compute(&f.L, &f.R, NULL), HBG_OK);
    check(&f.R.total, 100, 700, 0, 910, 5);
    ps_free(&f.L);
    /* Two runs put one after another in a file, each after its [stamp],
     * on threads of one id: a thread is taken within its run, so run 1's
     * spanless pass is pid 100's, as it was before the rule above. */
    n = 0;
    for (int run = 0; run < 2; run++) {
        n += (size_t)snprintf(text + n, sizeof text - n, "[stamp] 777d417 env python run.py\n");
        for (unsigned inv = 1; inv <= 4; inv++) {
            unsigned pid = run ? 200 : 100, orch = inv == 1 ? 9000 : 500 + inv;
            for (int k = 0; k < 2; k++)
                n += (size_t)snprintf(text + n, sizeof text - n,
                                      "[mono_ns=1][T0x1][TIMING] f: [a.c:1] bind phase=%s start_ns=1 dur_ns=%u\n",
                                      k ? "arena_h2d" : "host_orch", k ? 0 : orch);
            if (run || inv != 2)
                n += (size_t)snprintf(text + n, sizeof text - n,
                                      "[mono_ns=1][T0x1][TIMING] e: [STRACE] v=1 pid=%u tid=%u inv=%u hid=ab "
                                      "depth=1 name=chip.run.bind ts=1 dur=%u\n",
                                      pid, pid, inv, orch);
        }
    }
    assert_int_equal(ps_read(&f.L, "joined.log", text, n, &o), HBG_OK);
    assert_int_equal(f.L.npass, 8);
    assert_true(f.L.pass[1].has_pid && f.L.pass[1].pid == 100);
    assert_int_equal(f.L.ncold, 2);
    assert_int_equal(f.L.nused, 6);
    ps_free(&f.L);
}

/* A host-orch line whose prefix is damaged ("[mono_ns=2x0]") was taken
 * for one with no thread, "with no bind burst before it": its
 * dropped=99 lost, and its pass kept as clean. It is malformed, and its
 * thread still charges it to its pass, which is excluded. */
static void a_damaged_prefix_excludes_its_pass(void **st)
{
    (void)st;
    char text[4096];
    size_t n = 0;
    for (int i = 1; i <= 3; i++)
        n += (size_t)snprintf(text + n, sizeof text - n,
                              "[mono_ns=%d0][T0x1][TIMING] f: [a.c:1] bind phase=host_orch start_ns=1 dur_ns=%d00\n"
                              "[mono_ns=%d0][T0x1][TIMING] f: [a.c:1] bind phase=arena_h2d start_ns=1 dur_ns=%d0\n"
                              "[mono_ns=%s][T0x1][TIMING] f: [a.c:2] host-orch phase=record_node total_ns=5 count=7 "
                              "detail_sum=0 dropped=%d\n",
                              i, i, i, i, i == 2 ? "2x0" : i == 1 ? "10" : "30", i == 2 ? 99 : 0);
    fx f = {0};
    ps_options o = {0};
    assert_int_equal(ps_read(&f.L, "pfx.log", text, n, &o), HBG_OK);
    assert_int_equal(f.L.npass, 3);
    assert_int_equal(f.L.nused, 1);
    assert_int_equal(f.L.warn.n, 2);
    assert_string_equal(f.L.warn.msg[0], "pfx.log:6: malformed host-orch line: its prefix [mono_ns=2x0][T0x1] is not "
                                         "[mono_ns=<ns>][T0x<hex>]; ignored");
    assert_string_equal(f.L.warn.msg[1], "pfx.log:4: pass thread 0x1 has a malformed line that was ignored (line 6); "
                                         "excluded");
    ps_free(&f.L);
}

/* A span name read in its canonical form (chip.run.bin%64 is
 * chip.run.bind) from a log read in memory, where the reader keeps the log's
 * own bytes and copies nothing: a name it rewrote is a copy of its own,
 * not the bytes of the frame that rewrote it. */
static void wipe_stack(void)
{
    volatile char junk[1 << 16];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (char)0xa5;
}

static void a_rewritten_name_outlives_its_reading(void **st)
{
    (void)st;
    static const char src[] = "[mono_ns=1][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=5 tid=5 inv=1 hid=aa "
                              "depth=1 name=chip.run.bin%64 ts=100 dur=10\n";
    ps_log L;
    ps_options o = {.keep_spans = true};
    assert_int_equal(ps_read(&L, "m.log", src, sizeof src - 1, &o), HBG_OK);
    wipe_stack();
    assert_int_equal(L.nspan, 1);
    assert_true(lx_slice_eq(L.span[0].name, "chip.run.bind"));
    assert_int_equal(L.nbindspans, 1);
    ps_free(&L);
}

/* A duration past 32 bits: the statistics columns are 64-bit then, and
 * every figure is the same as it would be in a narrow column. */
static void test_wide_durations(void **st)
{
    (void)st;
    fx *f = calloc(1, sizeof *f);
    f->buf = ts_slurp(ts_fixture("ours-1rank-4pass.log"), &f->len);
    assert_non_null(f->buf);
    char *d = strstr(f->buf, "dur_ns=20002 ");
    assert_non_null(d);
    /* the warm pass with 20002 gets 4294967296 (2^32) instead: five digits more */
    size_t nlen = f->len + 5;
    char *nb = malloc(nlen);
    size_t at = (size_t)(d - f->buf) + 7;
    memcpy(nb, f->buf, at);
    memcpy(nb + at, "4294967296", 10);
    memcpy(nb + at + 10, f->buf + at + 5, f->len - at - 5);
    free(f->buf);
    f->buf = nb;
    f->len = nlen;
    ps_options o = {.keep_first = false};
    assert_int_equal(ps_read(&f->L, "wide.log", f->buf, f->len, &o), HBG_OK);
    assert_int_equal(f->L.max_dur, 4294967296ull);
    assert_int_equal(phs_compute(&f->L, &f->R, NULL), HBG_OK);
    check(row(f, "args"), 20000, 20001, 0, 4294967296ull, 3);
    check(row(f, "host_orch"), 1000, 2000, 0, 3000, 3);
    check(&f->R.total, 1600, 2705, 0, 3810, 3);
    drop(f);
}

static void test_keep_first(void **st)
{
    (void)st;
    fx *f = load("ours-1rank-4pass.log", true);
    assert_int_equal(f->L.nused, 4);
    check(row(f, "host_orch"), 1000, 2500, 0, 9000, 4);
    check(&f->R.total, 1600, 3257, 1, 14900, 4);
    drop(f);
}

static void test_crlf_same_numbers(void **st)
{
    (void)st;
    fx *f = load("ours-1rank-4pass-crlf.log", false);
    check(&f->R.total, 1600, 2705, 0, 3810, 3);
    check(row(f, "args"), 20000, 20001, 0, 20002, 3);
    assert_true(lx_slice_eq(f->L.stamp, "1a2b3c4 env HBG_BIND_BREAKDOWN=1 hbg run qwen --rounds 4 -o "
                                        "outputs/bind_qwen_numbers_1a2b3c4_r1.log"));
    assert_int_equal(f->L.warn.n, 0);
    drop(f);
}

static void test_original_two_ranks_interleaved(void **st)
{
    (void)st;
    fx *f = load("original-2rank-interleaved.log", false);
    assert_int_equal(f->L.npass, 6);
    assert_int_equal(f->L.nrank, 2);
    assert_int_equal(f->L.rank[0].pid, 4001);
    assert_int_equal(f->L.rank[1].pid, 4002);
    assert_int_equal(f->L.nused, 4);
    /* every pass named by the span that followed its burst */
    for (size_t i = 0; i < f->L.npass; i++) {
        assert_true(f->L.pass[i].has_pid && f->L.pass[i].has_inv && f->L.pass[i].has_span);
        assert_false(f->L.pass[i].keyed);
    }
    assert_non_null(ps_find(&f->L, 4002, 3));
    check(row(f, "host_orch"), 1000, 1150, 0, 1301, 4);
    check(row(f, "graph_upload"), 300, 301, 1, 304, 4);
    check(row(f, "arena_h2d"), 40, 41, 1, 45, 4);
    check(row(f, "host_view_close"), 30000, 30000, 0, 30000, 4);
    check(&f->R.total, 1340, 1493, 0, 1650, 4);
    assert_int_equal(f->L.warn.n, 0);
    /* each rank's own total: pid 4001's passes sum to 1340 and 1542, 4002's
     * to 1444 and 1650 (the pooled median is (1444 + 1542) / 2) */
    phs_stat by_rank[2];
    phs_result R2;
    assert_int_equal(phs_compute(&f->L, &R2, by_rank), HBG_OK);
    check(&by_rank[0], 1340, 1441, 0, 1542, 2);
    check(&by_rank[1], 1444, 1547, 0, 1650, 2);
    check(&R2.total, 1340, 1493, 0, 1650, 4);
    drop(f);
}

static void test_shared_lines_and_noise(void **st)
{
    (void)st;
    fx *f = load("ours-2rank-shared-lines.log", false);
    assert_int_equal(f->L.nbind, 60);
    assert_int_equal(f->L.norch, 30);
    assert_int_equal(f->L.nbindspans, 6);
    assert_int_equal(f->L.npass, 6);
    assert_int_equal(f->L.nused, 4);
    check(row(f, "host_orch"), 1000, 1500, 0, 3000, 4);
    check(row(f, "arena_h2d"), 100, 102, 1, 110, 4);
    check(&f->R.total, 1600, 2152, 1, 3810, 4);
    assert_int_equal(f->L.warn.n, 0);
    drop(f);
}

static void test_retired_counted(void **st)
{
    (void)st;
    fx *f = load("ours-retired.log", false);
    check(row(f, "relocate"), 50, 50, 0, 50, 3);
    check(row(f, "sm_h2d"), 60, 60, 0, 60, 3);
    check(&f->R.total, 1710, 2815, 0, 3920, 3);
    assert_true(f->R.control & (1u << PS_RELOCATE));
    assert_true(f->R.control & (1u << PS_SM_H2D));
    drop(f);
}

static void test_unknown_segment_kept_last(void **st)
{
    (void)st;
    fx *f = load("ours-unknown-segment.log", false);
    /* warned about once, with its first line, though every pass has it */
    static const char *const w[] = {
        "ours-unknown-segment.log:10: unknown segment pin_mem (not one of this version's); kept as its own row"};
    warnings_are(f, w, 1);
    assert_int_equal(f->R.nrow, 11);
    assert_string_equal(f->L.segname[f->R.row_seg[10]], "pin_mem");
    assert_string_equal(f->L.segname[f->R.row_seg[9]], "host_view_close");
    check(&f->R.row[10], 7, 7, 0, 7, 3);
    check(&f->R.total, 1600, 2705, 0, 3810, 3);
    drop(f);
}

static void test_missing_close_ours(void **st)
{
    (void)st;
    fx *f = load("ours-missing-close.log", false);
    static const char *const w[] = {
        "ours-missing-close.log:24: pass pid=4242 inv=2 has no arena_h2d (its closing segment); excluded"};
    warnings_are(f, w, 1);
    assert_int_equal(f->L.npass, 4);
    check(row(f, "host_orch"), 1000, 1500, 0, 2000, 2);
    check(&f->R.total, 1600, 2152, 1, 2705, 2);
    drop(f);
}

/* The original tool closes a pass at arena_h2d and would merge inv 3 into
 * inv 4 here; the burst is tied to its span instead. */
static void test_missing_close_original_not_merged(void **st)
{
    (void)st;
    fx *f = load("original-missing-close.log", false);
    static const char *const w[] = {
        "original-missing-close.log:44: pass pid=5001 inv=3 has no arena_h2d (its closing segment); excluded"};
    warnings_are(f, w, 1);
    assert_int_equal(f->L.npass, 4);
    check(row(f, "host_orch"), 2000, 2500, 0, 3000, 2);
    check(row(f, "args"), 20001, 20001, 1, 20002, 2);
    check(&f->R.total, 2705, 3257, 1, 3810, 2);
    drop(f);
}

static void test_missing_close_original_without_spans(void **st)
{
    (void)st;
    fx *f = load("original-missing-close-nospans.log", false);
    static const char *const w[] = {"original-missing-close-nospans.log:36: pass thread 0x7f3c9a7fc650 has no "
                                    "arena_h2d (its closing segment); excluded"};
    warnings_are(f, w, 1);
    assert_int_equal(f->L.npass, 4);
    assert_int_equal(f->L.nrank, 1);
    check(&f->R.total, 2705, 3257, 1, 3810, 2);
    drop(f);
}

static void test_duplicate_segment(void **st)
{
    (void)st;
    fx *f = load("ours-duplicate.log", false);
    static const char *const w[] = {"ours-duplicate.log:52: segment graph_upload appears twice in pass pid=4242 "
                                    "inv=3 (first at line 51); excluded"};
    warnings_are(f, w, 1);
    check(&f->R.total, 2705, 3257, 1, 3810, 2);
    drop(f);
}

static void test_truncated_last_pass(void **st)
{
    (void)st;
    fx *f = load("original-truncated.log", false);
    static const char *const w[] = {
        "original-truncated.log:70: malformed bind line: the log ends inside the record (cut short: no line end "
        "after it); ignored",
        "original-truncated.log:63: the log ends inside pass pid=5001 thread 0x7f3c9a7fc650 (no arena_h2d): "
        "truncated pass excluded"};
    warnings_are(f, w, 2);
    assert_int_equal(f->L.npass, 4);
    assert_int_equal(f->L.nused, 2);
    check(&f->R.total, 1600, 2705, 0, 3810, 2);
    drop(f);
}

/* A last pass whose arena_h2d line is there but damaged, with its line
 * end, was not cut by the log's end: it lacks arena_h2d and has a
 * malformed line, and is said so, where it was once called truncated.
 * The same line cut by the log's end is the truncation. */
static void test_a_damaged_last_line_is_not_a_truncation(void **st)
{
    (void)st;
    char text[2048];
    size_t n = 0;
    for (unsigned inv = 1; inv <= 3; inv++)
        n += (size_t)snprintf(text + n, sizeof text - n,
                              "[mono_ns=1][T0x1][TIMING] f: [a.c:1] bind phase=host_orch start_ns=1 dur_ns=5 pid=9 "
                              "inv=%u\n"
                              "[mono_ns=1][T0x1][TIMING] f: [a.c:1] bind phase=arena_h2d start_ns=1 dur_ns=%s pid=9 "
                              "inv=%u\n",
                              inv, inv < 3 ? "2" : "2x", inv);
    fx f = {0};
    ps_options o = {0};
    assert_int_equal(ps_read(&f.L, "d.log", text, n, &o), HBG_OK);
    assert_int_equal(f.L.nused, 1);
    assert_int_equal(f.L.warn.n, 3);
    assert_string_equal(f.L.warn.msg[0],
                        "d.log:6: malformed bind line: expected dur_ns=<decimal integer>, found dur_ns=2x; "
                        "ignored");
    assert_string_equal(f.L.warn.msg[1], "d.log:5: pass pid=9 inv=3 has no arena_h2d (its closing segment); excluded");
    assert_string_equal(f.L.warn.msg[2],
                        "d.log:5: pass pid=9 inv=3 has a malformed line that was ignored (line 6); excluded");
    ps_free(&f.L);
    /* cut where the '2x' ends, no line end after it */
    fx g = {0};
    assert_int_equal(ps_read(&g.L, "d.log", text, n - strlen(" pid=9 inv=3\n"), &o), HBG_OK);
    assert_int_equal(g.L.warn.n, 2);
    assert_string_equal(g.L.warn.msg[0], "d.log:6: malformed bind line: the log ends inside the record (cut short: no "
                                         "line end after it); ignored");
    assert_string_equal(g.L.warn.msg[1],
                        "d.log:5: the log ends inside pass pid=9 inv=3 (no arena_h2d): truncated pass excluded");
    ps_free(&g.L);
}

static void test_segment_sets_differ(void **st)
{
    (void)st;
    fx *f = load("ours-setdiff.log", false);
    static const char *const w[] = {
        "ours-setdiff.log:52: unknown segment pin_mem (not one of this version's); kept as its own row",
        "ours-setdiff.log:44: pass pid=4242 inv=3 has other segments than the other 2 "
        "passes (missing: none; extra: pin_mem); excluded"};
    warnings_are(f, w, 2);
    check(&f->R.total, 2705, 3257, 1, 3810, 2);
    drop(f);
}

/* Two warm passes, one without its gm_heap line: of two sets shared by
 * one pass each, the whole one is the norm and the other is excluded
 * (the earlier set once won, and the whole pass was excluded against
 * the one that lost a line). */
static void test_a_tie_of_sets_keeps_the_whole_pass(void **st)
{
    (void)st;
    static const char *const seg[] = {"gm_heap", "host_orch", "graph_upload", "arena_h2d"};
    char text[4096];
    size_t n = 0;
    for (unsigned inv = 1; inv <= 3; inv++)
        for (int k = 0; k < 4; k++)
            if (!(inv == 2 && k == 0))
                n += (size_t)snprintf(text + n, sizeof text - n,
                                      "[mono_ns=1][T0x1][TIMING] bind_trace_end: [bind_trace.c:24] bind phase=%s "
                                      "start_ns=1 dur_ns=%u pid=9 inv=%u\n",
                                      seg[k], 100 * inv + (unsigned)k, inv);
    fx f = {0};
    ps_options o = {0};
    assert_int_equal(ps_read(&f.L, "tie.log", text, n, &o), HBG_OK);
    assert_int_equal(f.L.nused, 1);
    assert_int_equal(f.L.warn.n, 1);
    assert_string_equal(f.L.warn.msg[0], "tie.log:5: pass pid=9 inv=2 has other segments than the other pass "
                                         "(missing: gm_heap; extra: none); excluded");
    assert_int_equal(phs_compute(&f.L, &f.R, NULL), HBG_OK);
    check(&f.R.total, 906, 906, 0, 906, 1); /* inv=3: 301 + 302 + 303 */
    ps_free(&f.L);
}

static void test_dropped_named(void **st)
{
    (void)st;
    fx *f = load("ours-dropped.log", false);
    static const char *const w[] = {"ours-dropped.log:56: host-orch record_node dropped=4 in pass pid=4242 inv=3 "
                                    "(the per-op record pool overflowed); excluded"};
    warnings_are(f, w, 1);
    assert_int_equal(f->L.nused, 2);
    drop(f);
}

static void test_counts_vary(void **st)
{
    (void)st;
    fx *f = load("ours-counts-vary.log", false);
    static const char *const w[] = {"ours-counts-vary.log: host-orch submit_task count differs between passes: 5 "
                                    "(line 34) and 6 (line 54); range 5..6"};
    warnings_are(f, w, 1);
    assert_true(f->R.op_count[PS_OP_SUBMIT_TASK].varies);
    assert_int_equal(f->R.op_count[PS_OP_SUBMIT_TASK].min, 5);
    assert_int_equal(f->R.op_count[PS_OP_SUBMIT_TASK].max, 6);
    assert_false(f->R.op_count[PS_OP_ALLOC_TENSORS].varies);
    drop(f);
}

static void test_overflow_line(void **st)
{
    (void)st;
    fx *f = load("ours-overflow.log", false);
    static const char *const w[] = {
        "ours-overflow.log:51: malformed bind line: dur_ns= is a number past 64 bits; ignored",
        "ours-overflow.log:44: pass pid=4242 inv=3 has a malformed line that was ignored (line 51); excluded"};
    warnings_are(f, w, 2);
    check(&f->R.total, 2705, 3257, 1, 3810, 2);
    drop(f);
}

static void test_stamps(void **st)
{
    (void)st;
    fx *f = load("ours-nostamp.log", false);
    assert_false(f->L.has_stamp);
    check(&f->R.total, 1600, 2705, 0, 3810, 3);
    drop(f);
    f = load("ours-two-stamps.log", false);
    assert_true(f->L.stamp_conflict);
    assert_int_equal(f->L.stamp2_line, 41);
    assert_int_equal(f->L.stamp_line, 1);
    drop(f);
    f = load("ours-same-stamp-twice.log", false);
    assert_false(f->L.stamp_conflict);
    drop(f);
}

static void test_only_cold(void **st)
{
    (void)st;
    fx *f = load("original-only-cold.log", false);
    assert_int_equal(f->L.npass, 2);
    assert_int_equal(f->L.nrank, 2);
    assert_int_equal(f->L.nwarm, 0);
    assert_int_equal(f->L.nused, 0);
    drop(f);
    f = load("original-only-cold.log", true);
    assert_int_equal(f->L.nused, 2);
    check(row(f, "host_orch"), 8000, 8050, 0, 8100, 2);
    drop(f);
}

static void test_original_fixtures(void **st)
{
    (void)st;
    /* the shipped copies of the grammar fixtures of both runtimes */
    fx *f = load("hbg-grammar-1rank-3round.log", false);
    check(row(f, "args"), 1529439990, 1534549296, 1, 1539658603, 2);
    check(&f->R.total, 1101226, 1111257, 0, 1121288, 2);
    drop(f);
    f = load("original-grammar-2rank-3round.log", false);
    assert_int_equal(f->L.nrank, 2);
    check(row(f, "graph_upload"), 303977, 320794, 1, 328140, 4);
    check(&f->R.total, 988998, 1057894, 1, 1148123, 4);
    drop(f);
}

/* A log written by `hbg run vector --mode numbers --rounds 4`. */
static void test_log_of_hbg_run(void **st)
{
    (void)st;
    fx *f = load("hbg-run-vector-numbers.log", false);
    assert_int_equal(f->L.warn.n, 0);
    assert_int_equal(f->L.npass, 4);
    assert_true(f->L.pass[0].keyed);
    check(&f->R.total, 4769, 7805, 0, 33042, 3);
    check(row(f, "host_orch"), 4559, 7474, 0, 32772, 3);
    assert_int_equal(f->R.heap_used.value, 24640);
    assert_int_equal(f->R.op_count[PS_OP_GRAPH_SUBMIT].value, 4);
    drop(f);
}

/* The fixture's text with every `from` replaced by `to` (same length or
 * shorter), grouped as NAME. */
static ps_log *read_edited(const char *name, const char *from, const char *to, char **buf)
{
    size_t len;
    *buf = ts_slurp(ts_fixture("ours-1rank-4pass.log"), &len);
    assert_non_null(*buf);
    assert_true(strlen(to) <= strlen(from));
    size_t n = 0;
    for (char *at = *buf; (at = strstr(at, from)); n++) {
        size_t rest = len - (size_t)(at - *buf) - strlen(from);
        memcpy(at, to, strlen(to));
        memmove(at + strlen(to), at + strlen(from), rest);
        len -= strlen(from) - strlen(to);
        (*buf)[len] = 0;
        at += strlen(to);
    }
    assert_int_equal(n, 4); /* one such line a pass */
    static ps_log L;
    ps_options o = {0};
    assert_int_equal(ps_read(&L, name, *buf, len, &o), HBG_OK);
    return &L;
}

/* How many of L's warnings contain s. */
static size_t warns_with(const ps_log *L, const char *s)
{
    size_t n = 0;
    for (size_t w = 0; w < L->warn.n; w++)
        n += strstr(L->warn.msg[w], s) != NULL;
    return n;
}

/* A used pass without an exact figure (tasks= not an integer here) is not
 * "the same in every used pass": the figure varies, the count of such
 * passes and the first one's line in a warning; a figure no pass has is
 * not shown at all. */
static void a_figure_some_passes_lack_varies(void **st)
{
    (void)st;
    size_t len;
    char *buf = ts_slurp(ts_fixture("ours-1rank-4pass.log"), &len);
    assert_non_null(buf);
    char *at = strstr(buf, "tasks=47 heap_used=127673344 pid=4242 inv=3");
    assert_non_null(at);
    memcpy(at, "tasks=4x", 8);
    static ps_log L;
    ps_options o = {0};
    assert_int_equal(ps_read(&L, "m.log", buf, len, &o), HBG_OK);
    assert_int_equal(L.nused, 3);
    phs_result R;
    assert_int_equal(phs_compute(&L, &R, NULL), HBG_OK);
    assert_int_equal(R.tasks.n, 2);
    assert_int_equal(R.tasks.missing, 1);
    assert_true(R.tasks.varies);
    assert_int_equal(R.tasks.min, 47);
    assert_int_equal(R.heap_used.n, 3);
    assert_int_equal(R.heap_used.missing, 0);
    assert_false(R.heap_used.varies);
    assert_int_equal(warns_with(&L, "m.log: tasks is missing or not an integer in 1 of 3 used passes (the first at "
                                    "line 50)"),
                     1);
    assert_int_equal(warns_with(&L, "tasks differs"), 0);
    ps_free(&L);
    free(buf);
}

/* A used pass with no host-orch line of a kind the others have did not
 * do the same count of it: the kind's count varies, missing from that
 * pass, named by the pass's first line, as tasks= does when a pass lacks
 * it. Here inv=2 has no submit_task line (the fixture's line 34 gone);
 * the count used to read 5, "the same in every used pass". */
static void a_host_orch_kind_some_passes_lack_varies(void **st)
{
    (void)st;
    size_t len;
    char *buf = ts_slurp(ts_fixture("ours-1rank-4pass.log"), &len);
    assert_non_null(buf);
    char *at = strstr(buf, "host-orch phase=submit_task total_ns=500 count=5 detail_sum=0 dropped=0 pid=4242 inv=2\n");
    assert_non_null(at);
    char *from = strchr(at, '\n') + 1;
    while (at > buf && at[-1] != '\n')
        at--;
    memmove(at, from, len - (size_t)(from - buf) + 1);
    len -= (size_t)(from - at);
    static ps_log L;
    ps_options o = {0};
    assert_int_equal(ps_read(&L, "k.log", buf, len, &o), HBG_OK);
    assert_int_equal(L.nused, 3);
    phs_result R;
    assert_int_equal(phs_compute(&L, &R, NULL), HBG_OK);
    const phs_fig *f = &R.op_count[PS_OP_SUBMIT_TASK];
    assert_int_equal(f->n, 2);
    assert_int_equal(f->missing, 1);
    assert_true(f->varies);
    assert_int_equal(f->min, 5);
    assert_int_equal(f->max, 5);
    assert_false(R.op_count[PS_OP_ALLOC_TENSORS].varies);
    assert_int_equal(R.op_count[PS_OP_ALLOC_TENSORS].missing, 0);
    static const char *const w[] = {"k.log: host-orch submit_task count is missing or not an integer in 1 of 3 used "
                                    "passes (the first at line 24)"};
    assert_int_equal(L.warn.n, 1);
    assert_string_equal(L.warn.msg[0], w[0]);
    ps_free(&L);
    /* the table and JSON say so too */
    char *in = ts_temp_file(buf, len, ".log");
    assert_non_null(in);
    const char *table[] = {"phases", in, NULL}, *json[] = {"phases", "--format", "json", in, NULL};
    char *out = NULL, *err = NULL;
    assert_int_equal(ts_run_cli(table, &out, &err), 0);
    assert_true(ts_contains(out, "  host-orch submit_task count        varies: 5..5, missing from 1 of 3 used passes "
                                 "(see warnings)\n"));
    assert_true(ts_contains(err, "host-orch submit_task count is missing or not an integer in 1 of 3 used passes"));
    free(out), free(err);
    assert_int_equal(ts_run_cli(json, &out, &err), 0);
    assert_true(ts_contains(out, "\"host_orch_counts\": {\"submit_task\": {\"varies\": true, \"min\": 5, \"max\": 5, "
                                 "\"missing\": 1}, \"alloc_tensors\": 2,"));
    free(out), free(err);
    remove(in);
    free(in);
    free(buf);
}

/* A host_orch line that cannot be read, or not tied to its pass, in every
 * pass: the passes share the segment set without it, so the set does not
 * exclude them; without host_orch each is excluded, never a "total" of
 * graph_upload and arena_h2d alone (a few per cent of the control plane). */
static void no_total_without_host_orch(void **st)
{
    (void)st;
    static const char no_host_orch[] = "has no host_orch (no control-plane total without it)";
    static const struct {
        const char *from, *to, *why, *then;
    } edits[] = {
        /* the name itself unreadable: the line names no segment */
        {"bind phase=host_orch", "bind phase=host_Orch", "malformed bind line", no_host_orch},
        /* cut after dur_ns: no pid= or inv=, but inside its pass's burst
         * on the same thread: charged to that pass (no pass of its own) */
        {" tasks=47 heap_used=127673344 pid=4242 inv=", " x", "malformed bind line",
         "pass pid=4242 inv=2 has a malformed line that was ignored (line 30)"},
        /* a token without `=` before pid=: the line is read on to its
         * pid= and inv=, and its pass excluded for it (no pass of its own) */
        {"tasks=47", "tasks= 4", "malformed bind line", "has a malformed line that was ignored"},
    };
    for (size_t e = 0; e < sizeof edits / sizeof edits[0]; e++) {
        char *buf;
        ps_log *L = read_edited("e.log", edits[e].from, edits[e].to, &buf);
        assert_int_equal(L->nused, 0);
        assert_true(warns_with(L, edits[e].why) > 0);
        assert_true(warns_with(L, edits[e].then) > 0);
        if (e >= 1) {
            assert_int_equal(warns_with(L, "has no arena_h2d"), 0);
            assert_int_equal(L->npass, 4);
        }
        ps_free(L);
        free(buf);
    }
}

/* A host-orch line whose kind cannot be read (so neither its pid= nor its
 * inv=) follows its pass's burst on the same thread: it is charged to
 * that pass, which is excluded, rather than dropped from a pass that
 * then reads as if it had no such operations. */
static void unreadable_host_orch_line_excludes_its_pass(void **st)
{
    (void)st;
    char *buf;
    ps_log *L = read_edited("o.log", "host-orch phase=submit_task", "host-orch phase=submit_Task", &buf);
    assert_int_equal(L->nused, 0);
    assert_int_equal(warns_with(L, "has a malformed line that was ignored"), 4);
    ps_free(L);
    free(buf);
}

/* A warning quotes the bytes it found, but never a control byte: an
 * escape sequence in a log does not reach the terminal. */
static void warnings_carry_no_control_bytes(void **st)
{
    (void)st;
    char *buf;
    ps_log *L = read_edited("c.log", "bind phase=host_orch", "bind phase=host\x1b[2J", &buf);
    for (size_t w = 0; w < L->warn.n; w++)
        for (const char *c = L->warn.msg[w]; *c; c++)
            assert_true((unsigned char)*c >= 0x20 && *c != 0x7f);
    assert_true(warns_with(L, "found phase=host?") > 0);
    ps_free(L);
    free(buf);
}

/* A rank none of whose passes is used has no figures: its row under the
 * total says `-`, and its JSON entry null, not a total of 0 ns. Here the
 * second rank (thread ...641) loses arena_h2d in every warm pass. */
static void rank_without_used_passes_has_no_figures(void **st)
{
    (void)st;
    size_t len;
    char *buf = ts_slurp(ts_fixture("original-2rank-interleaved.log"), &len);
    assert_non_null(buf);
    char *w = buf;
    int dropped = 0, seen = 0;
    for (char *line = buf; line < buf + len;) {
        char *nl = memchr(line, '\n', (size_t)(buf + len - line));
        size_t n = nl ? (size_t)(nl - line) + 1 : (size_t)(buf + len - line);
        char one[1024];
        snprintf(one, sizeof one, "%.*s", (int)n, line);
        bool drop = strstr(one, "[T0x7f3c9a7fc641]") && strstr(one, "bind phase=arena_h2d") && seen++ > 0;
        if (drop)
            dropped++;
        else
            memmove(w, line, n), w += n;
        line += n;
    }
    assert_int_equal(dropped, 2);
    char *in = ts_temp_file(buf, (size_t)(w - buf), ".log");
    assert_non_null(in);
    const char *table[] = {"phases", in, NULL}, *json[] = {"phases", "--format", "json", in, NULL};
    char *out = NULL, *err = NULL;
    assert_int_equal(ts_run_cli(table, &out, &err), 0);
    assert_true(ts_contains(out, "                   -                 -               -     0\n"));
    free(out), free(err);
    assert_int_equal(ts_run_cli(json, &out, &err), 0);
    assert_true(ts_contains(out, "\"total\": {\"min_ns\": null, \"median_ns\": null, \"max_ns\": null, \"n\": 0}"));
    free(out), free(err);
    remove(in);
    free(in);
    free(buf);
}

/* A log that ends in 17 MiB of NULs without a '\n' (what a crash can
 * leave): read in bounded memory, its passes as they were, and the cut
 * line said. */
static void test_long_tail_is_cut(void **st)
{
    (void)st;
    char *src = ts_slurp(ts_fixture("ours-1rank-4pass.log"), NULL);
    assert_non_null(src);
    size_t n = strlen(src);
    char *in = ts_temp_file(src, n, ".log");
    assert_int_equal(truncate(in, (off_t)(n + (17u << 20))), 0);
    const char *json[] = {"phases", "--format", "json", in, NULL};
    char *out = NULL, *err = NULL;
    assert_int_equal(ts_run_cli(json, &out, &err), 0);
    assert_true(ts_contains(out, "\"passes\": 4, \"warm\": 3"));
    if (!ts_contains(err, ".log:83: a line longer than 16 MiB (no record is; a corrupt or truncated tail?): read as "
                          "its first 16 MiB, the rest skipped\n"))
        fail_msg("%s", err);
    free(out), free(err);
    remove(in);
    free(in);
    free(src);
}

/* A log of many processes (one rank each, two passes each): every rank is
 * kept, in order, with its own passes. */
static void many_ranks(void **st)
{
    (void)st;
    enum { NR = 3000 };
    size_t cap = (size_t)NR * 2 * 200, n = 0;
    char *buf = malloc(cap);
    assert_non_null(buf);
    for (int inv = 1; inv <= 2; inv++)
        for (int r = 0; r < NR; r++)
            n += (size_t)snprintf(buf + n, cap - n,
                                  "[mono_ns=1][T0x1][TIMING] f: [b.c:1] bind phase=arena_h2d start_ns=1 dur_ns=%d "
                                  "pid=%d inv=%d\n", r + 1, 10000 + r, inv);
    ps_log L;
    ps_options o = {0};
    assert_int_equal(ps_read(&L, "many", buf, n, &o), HBG_OK);
    assert_int_equal(L.nrank, NR);
    assert_int_equal(L.nused, NR);
    for (size_t r = 0; r < NR; r++) {
        assert_int_equal(L.rank[r].pid, 10000 + r);
        assert_int_equal(L.rank[r].npasses, 2);
    }
    ps_free(&L);
    free(buf);
}

/* 70 ranks, their lines interleaved one by one, so that between two
 * passes of a thread come more passes than a short look-back covers; rank
 * 1000's arena_h2d of inv=2 cut before its pid=. It is inv=2's defect:
 * once the next pass (inv=3) was excluded for it, or it opened a pass of
 * its own. */
static void keyless_among_many(bool share)
{
    static const char *const seg[] = {"args",         "arena_build", "static_arena", "gm_heap",
                                      "shared_mem",   "runtime_init", "host_orch",   "graph_upload",
                                      "host_view_close", "arena_h2d"};
    static const char *const op[] = {"submit_task", "alloc_tensors", "record_node", "graph_submit",
                                     "build_definition"};
    enum { R = 70, INV = 4, NS = 10, NO = 5 };
    size_t cap = (size_t)R * INV * (NS + NO) * 200 + 256, n = 0;
    char *t = malloc(cap);
    assert_non_null(t);
    n += (size_t)sprintf(t + n, "[stamp] 1a2b3c4 env HBG_BIND_BREAKDOWN=1 hbg run qwen --rounds 4\n");
    size_t want_line = 0, line = 1;
    for (int inv = 1; inv <= INV; inv++)
        for (int i = 0; i < NS + NO; i++)
            for (int r = 0; r < R; r++) {
                unsigned long long ts = 5000000000000ull + (unsigned long long)inv * 100000 + (unsigned)i * 100;
                n += (size_t)sprintf(t + n, "[mono_ns=%llu][T0x7f00aa%06x][TIMING] bind_trace_end: [bind_trace.c:212] ",
                                     ts, share && r == 1 ? 0 : r);
                if (i < NS)
                    n += (size_t)sprintf(t + n, "bind phase=%s start_ns=%llu dur_ns=100 bytes=10", seg[i], ts);
                else
                    n += (size_t)sprintf(t + n, "host-orch phase=%s total_ns=50 count=1 detail_sum=0 dropped=0",
                                         op[i - NS]);
                line++;
                if (r == 0 && inv == 2 && i == NS - 1) {
                    want_line = line;
                    t[n++] = '\n';
                } else {
                    n += (size_t)sprintf(t + n, " pid=%d inv=%d\n", 1000 + r, inv);
                }
            }
    ps_options o = {0};
    ps_log L;
    assert_int_equal(ps_read(&L, "x.log", t, n, &o), HBG_OK);
    assert_int_equal(L.npass, R * INV);
    assert_int_equal(L.nused, R * (INV - 1) - 1); /* inv=2 of rank 1000: its arena_h2d is not there */
    char want[160];
    snprintf(want, sizeof want, "x.log:%zu: malformed bind line: no pid= or inv=, on a thread whose passes have them; "
                                "ignored", want_line);
    bool said = false, blamed = false;
    for (size_t w = 0; w < L.warn.n; w++) {
        said |= strcmp(L.warn.msg[w], want) == 0;
        blamed |= strstr(L.warn.msg[w], "pass pid=1000 inv=2 has a malformed line") != NULL;
        assert_null(strstr(L.warn.msg[w], "inv=3"));
        assert_null(strstr(L.warn.msg[w], "pid=1001"));
    }
    assert_true(said);
    /* charged to its pass where the thread is its rank's alone; where two
     * ranks share it, to none (never to the other rank's intact one) */
    assert_true(blamed != share);
    ps_free(&L);
    free(t);
}

static void test_keyless_line_among_many_ranks(void **st)
{
    (void)st;
    keyless_among_many(false);
    /* ranks 1000 and 1001 share a thread id, as forked ranks do: the
     * look-up past the last 64 passes knows it (once the line went to
     * 1001's intact inv=2) */
    keyless_among_many(true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keyless_line_among_many_ranks),
        cmocka_unit_test(test_ours_one_rank),
        cmocka_unit_test(the_cold_pass_is_the_lowest_inv),
        cmocka_unit_test(a_host_orch_line_before_its_bind_lines),
        cmocka_unit_test(a_rewritten_name_outlives_its_reading),
        cmocka_unit_test(test_long_tail_is_cut),
        cmocka_unit_test(a_cut_line_is_named_by_its_number),
        cmocka_unit_test(test_wide_durations),
        cmocka_unit_test(test_keep_first),
        cmocka_unit_test(test_crlf_same_numbers),
        cmocka_unit_test(test_original_two_ranks_interleaved),
        cmocka_unit_test(test_shared_lines_and_noise),
        cmocka_unit_test(test_retired_counted),
        cmocka_unit_test(test_unknown_segment_kept_last),
        cmocka_unit_test(test_missing_close_ours),
        cmocka_unit_test(test_missing_close_original_not_merged),
        cmocka_unit_test(test_missing_close_original_without_spans),
        cmocka_unit_test(a_spanless_pass_on_a_shared_thread_is_no_ones),
        cmocka_unit_test(a_damaged_prefix_excludes_its_pass),
        cmocka_unit_test(test_duplicate_segment),
        cmocka_unit_test(test_a_damaged_last_line_is_not_a_truncation),
        cmocka_unit_test(test_truncated_last_pass),
        cmocka_unit_test(test_segment_sets_differ),
        cmocka_unit_test(test_dropped_named),
        cmocka_unit_test(test_counts_vary),
        cmocka_unit_test(test_overflow_line),
        cmocka_unit_test(test_stamps),
        cmocka_unit_test(test_only_cold),
        cmocka_unit_test(test_original_fixtures),
        cmocka_unit_test(test_log_of_hbg_run),
        cmocka_unit_test(many_ranks),
        cmocka_unit_test(no_total_without_host_orch),
        cmocka_unit_test(a_figure_some_passes_lack_varies),
        cmocka_unit_test(a_host_orch_kind_some_passes_lack_varies),
        cmocka_unit_test(rank_without_used_passes_has_no_figures),
        cmocka_unit_test(unreadable_host_orch_line_excludes_its_pass),
        cmocka_unit_test(warnings_carry_no_control_bytes),
        cmocka_unit_test(a_small_log_takes_no_huge_page),
        cmocka_unit_test(test_a_tie_of_sets_keeps_the_whole_pass),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
