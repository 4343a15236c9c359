/* The line reader: pieces end at line ends, join back into the file, and a
 * log read through any read size groups into exactly the passes, warnings
 * and statistics of the whole-buffer reader. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/tools_support.h"
#include "tools/linereader.h"
#include "tools/phstats.h"

typedef struct joined {
    char *p;
    size_t n, pieces, stop_after;
    int bad;            /* pieces that did not end at a line end (the last may not) */
    bool last_open;     /* the piece before had no line end at its end */
    char eol;           /* the line end pieces must end at ('\0': '\n') */
    bool half_split;    /* a piece ended in "half\r" (a CRLF line cut at its CR) */
} joined;

static bool collect(void *ctx, const char *p, size_t n)
{
    joined *j = ctx;
    if (j->last_open)
        j->bad++;
    j->p = realloc(j->p, j->n + n + 1);
    memcpy(j->p + j->n, p, n);
    j->n += n;
    j->p[j->n] = 0;
    j->last_open = n == 0 || p[n - 1] != (j->eol ? j->eol : '\n');
    j->half_split |= n >= 5 && memcmp(p + n - 5, "half\r", 5) == 0;
    j->pieces++;
    return !j->stop_after || j->pieces < j->stop_after;
}

static joined read_eol(const char *data, size_t len, size_t chunk, size_t max_line, size_t stop_after, int *rc,
                       size_t *cut, char eol)
{
    char *path = ts_temp_file(data, len, ".txt");
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    joined j = {NULL, 0, 0, stop_after, 0, false, eol, false};
    *rc = lr_read_lines(fd, chunk, max_line, collect, &j, cut);
    close(fd);
    unlink(path);
    free(path);
    return j;
}

static joined read_max(const char *data, size_t len, size_t chunk, size_t max_line, size_t stop_after, int *rc,
                       size_t *cut)
{
    return read_eol(data, len, chunk, max_line, stop_after, rc, cut, '\n');
}

static joined read_all(const char *data, size_t len, size_t chunk, size_t stop_after, int *rc)
{
    return read_max(data, len, chunk, 0, stop_after, rc, NULL);
}

static void test_pieces_join_back(void **st)
{
    (void)st;
    /* short lines, a line far longer than the read size, no final '\n' */
    char data[6000];
    size_t n = 0;
    for (int i = 0; i < 40; i++)
        n += (size_t)snprintf(data + n, sizeof data - n, "line %d\n", i);
    memset(data + n, 'x', 3000);
    n += 3000;
    data[n++] = '\n';
    n += (size_t)snprintf(data + n, sizeof data - n, "tail without newline");
    static const size_t chunks[] = {1, 2, 3, 7, 64, 1000, 0};
    for (size_t c = 0; c < sizeof chunks / sizeof *chunks; c++) {
        int rc;
        joined j = read_all(data, n, chunks[c], 0, &rc);
        assert_int_equal(rc, 0);
        assert_int_equal(j.n, n);
        assert_memory_equal(j.p, data, n);
        assert_int_equal(j.bad, 0);
        assert_true(j.last_open); /* the tail came last, whole */
        free(j.p);
    }
}

static void test_empty_and_stop(void **st)
{
    (void)st;
    int rc;
    joined j = read_all("", 0, 0, 0, &rc);
    assert_int_equal(rc, 0);
    assert_int_equal(j.pieces, 0);
    free(j.p);
    /* the caller stops after its second piece: nothing more is handed over */
    const char *t = "a\nb\nc\nd\n";
    j = read_all(t, strlen(t), 2, 2, &rc);
    assert_int_equal(rc, 0);
    assert_int_equal(j.pieces, 2);
    assert_string_equal(j.p, "a\nb\n");
    free(j.p);
}

/* A line past max_line is handed over as its first max_line bytes and a
 * '\n', at any read size up to max_line, and counted; the lines around it are
 * whole, so the lines after it keep their numbers. Without a '\n' at the
 * end, the cut line gets none. */
static void test_long_line_is_cut(void **st)
{
    (void)st;
    char data[4000];
    size_t n = 0;
    n += (size_t)sprintf(data + n, "first\n");
    memset(data + n, 'x', 3000);
    n += 3000;
    n += (size_t)sprintf(data + n, "\nlast\n");
    char want[200];
    memset(want, 0, sizeof want);
    strcpy(want, "first\n");
    memset(want + 6, 'x', 100);
    strcpy(want + 106, "\nlast\n");
    for (size_t chunk = 1; chunk <= 64; chunk = chunk * 3 + 1) {
        int rc;
        size_t cut = 0;
        joined j = read_max(data, n, chunk, 100, 0, &rc, &cut);
        assert_int_equal(rc, 0);
        assert_int_equal(cut, 1);
        assert_string_equal(j.p, want);
        free(j.p);
        /* cut at the end of the file, without a '\n' */
        cut = 0;
        j = read_max(data, 6 + 3000, chunk, 100, 0, &rc, &cut);
        assert_int_equal(rc, 0);
        assert_int_equal(cut, 1);
        assert_int_equal(j.n, 106);
        assert_memory_equal(j.p, want, 106);
        free(j.p);
        /* a line of exactly max_line bytes, and its '\n', is whole */
        cut = 0;
        j = read_max(data, n, chunk, 3000, 0, &rc, &cut);
        assert_int_equal(cut, 0);
        assert_int_equal(j.n, n);
        assert_memory_equal(j.p, data, n);
        free(j.p);
    }
    /* a read size past max_line raises the bound to it: lines inside one
     * piece are passed as read, and one across pieces is cut at the same
     * bound, so no line is treated two ways */
    int rc;
    size_t cut = 0;
    joined j = read_max(data, n, 1000, 100, 0, &rc, &cut);
    assert_int_equal(rc, 0);
    assert_int_equal(cut, 1);
    assert_int_equal(j.n, 6 + 1000 + 1 + 5);
    free(j.p);
}

/* Lines that end in CRs alone (no '\n' in the file): past max_line they
 * are handed over in pieces that end at a CR, each line whole, and a line
 * past the bound is cut as a '\n' one is. Once the file was one line,
 * its first max_line bytes read and the rest lost. */
static void test_cr_only_lines(void **st)
{
    (void)st;
    char data[6000], want[6000];
    size_t n = 0;
    for (int i = 0; i < 300; i++) /* 300 short lines: far past the bound in all */
        n += (size_t)sprintf(data + n, "line %d\r", i);
    size_t shorts = n;
    memset(data + n, 'x', 3000);
    n += 3000;
    n += (size_t)sprintf(data + n, "\rlast\r");
    memcpy(want, data, shorts);
    memset(want + shorts, 'x', 100);
    strcpy(want + shorts + 100, "\rlast\r");
    static const size_t chunks[] = {1, 2, 7, 64, 100};
    for (size_t c = 0; c < sizeof chunks / sizeof *chunks; c++) {
        int rc;
        size_t cut = 0;
        joined j = read_eol(data, shorts, chunks[c], 100, 0, &rc, &cut, '\r');
        assert_int_equal(rc, 0);
        assert_int_equal(cut, 0);
        assert_int_equal(j.n, shorts);
        assert_memory_equal(j.p, data, shorts);
        assert_int_equal(j.bad, 0); /* every piece ends at a CR */
        assert_true(j.pieces > 1);
        free(j.p);
        cut = 0;
        j = read_eol(data, n, chunks[c], 100, 0, &rc, &cut, '\r');
        assert_int_equal(rc, 0);
        assert_int_equal(cut, 1);
        assert_string_equal(j.p, want);
        assert_int_equal(j.bad, 0);
        free(j.p);
    }
    /* a '\n' after the switch (a '\n' log after a CR-only one): the CR
     * lines end at the last CR before it, and '\n' lines follow, whole */
    char mixed[8000];
    size_t m = shorts;
    memcpy(mixed, data, shorts);
    m += (size_t)sprintf(mixed + m, "half\r\n"); /* a CRLF line: its CR is its own, no line end */
    for (int i = 0; i < 40; i++) /* '\n' lines far past the bound in all */
        m += (size_t)sprintf(mixed + m, "lf line %d\n", i);
    for (size_t c = 0; c < sizeof chunks / sizeof *chunks; c++) {
        int rc2;
        size_t cut2 = 0;
        joined j2 = read_eol(mixed, m, chunks[c], 100, 0, &rc2, &cut2, '\n');
        assert_int_equal(rc2, 0);
        assert_false(j2.half_split); /* "half\r\n" came in one piece, or at the end of one */
        assert_int_equal(cut2, 0);
        assert_int_equal(j2.n, m);
        assert_memory_equal(j2.p, mixed, m);
        free(j2.p);
    }

    /* the caller stops in the middle: nothing more is handed over */
    int rc;
    joined j = read_eol(data, shorts, 7, 100, 1, &rc, NULL, '\r');
    assert_int_equal(rc, 0);
    assert_int_equal(j.pieces, 1);
    free(j.p);
    /* a file with '\n' lines keeps them: a long line of CRs (a progress
     * bar) is one line, cut */
    n = (size_t)sprintf(data, "a\n");
    for (int i = 0; i < 200; i++)
        n += (size_t)sprintf(data + n, "p%d\r", i % 10);
    n += (size_t)sprintf(data + n, "\nz\n");
    size_t cut = 0;
    j = read_max(data, n, 16, 100, 0, &rc, &cut);
    assert_int_equal(rc, 0);
    assert_int_equal(cut, 1);
    assert_int_equal(j.n, 2 + 100 + 1 + 2);
    assert_memory_equal(j.p, data, 102);
    assert_memory_equal(j.p + 102, "\nz\n", 3);
    assert_int_equal(j.bad, 0);
    free(j.p);
}

typedef struct quiet_ctx {
    long before[64];    /* the threads there were before the read (a sanitizer's own among them) */
    int nbefore;
    int quiet, others;
} quiet_ctx;

static bool was_there(const quiet_ctx *q, long tid)
{
    for (int i = 0; i < q->nbefore; i++)
        if (q->before[i] == tid)
            return true;
    return false;
}

/* With count, how many threads started since q->before block SIGINT,
 * SIGTERM, SIGHUP and SIGPIPE (q->quiet), of how many (q->others);
 * without, notes the threads there are into q->before. */
static void scan_threads(quiet_ctx *q, bool count)
{
    DIR *d = opendir("/proc/self/task");
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d));) {
        long tid = atol(e->d_name);
        if (e->d_name[0] == '.' || (count && was_there(q, tid)))
            continue;
        if (!count) {
            if (q->nbefore < 64)
                q->before[q->nbefore++] = tid;
            continue;
        }
        char path[300], line[256];
        snprintf(path, sizeof path, "/proc/self/task/%s/status", e->d_name);
        FILE *f = fopen(path, "r");
        unsigned long long blk = 0;
        while (f && fgets(line, sizeof line, f))
            if (sscanf(line, "SigBlk: %llx", &blk) == 1)
                break;
        if (f)
            fclose(f);
        unsigned long long want = 1ull << (SIGINT - 1) | 1ull << (SIGTERM - 1) | 1ull << (SIGHUP - 1) |
                                  1ull << (SIGPIPE - 1);
        q->others++;
        q->quiet += (blk & want) == want;
    }
    closedir(d);
}

static bool note_threads(void *ctx, const char *p, size_t n)
{
    (void)p, (void)n;
    quiet_ctx *q = ctx;
    if (!q->others)
        scan_threads(q, true);
    return true;
}

/* The reading thread takes no signal: a Ctrl-C is handled on the thread
 * that runs the command (hbg timeline's output file removes its
 * temporary there, and frees its name there). */
static void test_reader_thread_takes_no_signal(void **st)
{
    (void)st;
    size_t len = 8u << 20;
    char *data = malloc(len);
    assert_non_null(data);
    for (size_t i = 0; i < len; i++)
        data[i] = i % 64 == 63 ? '\n' : 'x';
    char *path = ts_temp_file(data, len, ".txt");
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    quiet_ctx q = {{0}, 0, 0, 0};
    scan_threads(&q, false);
    assert_int_equal(lr_read_lines(fd, 1u << 20, 0, note_threads, &q, NULL), 0);
    assert_true(q.others >= 1); /* a file of several pieces is read on a second thread */
    assert_int_equal(q.quiet, q.others);
    close(fd);
    unlink(path);
    free(path);
    free(data);
}

static void test_read_error(void **st)
{
    (void)st;
    int fd = open(".", O_RDONLY | O_DIRECTORY);
    assert_true(fd >= 0);
    joined j = {NULL, 0, 0, 0, 0, false, 0, false};
    assert_int_equal(lr_read_lines(fd, 0, 0, collect, &j, NULL), EISDIR);
    assert_int_equal(j.pieces, 0);
    close(fd);
}

/* Every fixture, read through tiny pieces: the same grouping as in one
 * buffer, warnings and statistics to the digit. */
static void test_fixtures_any_read_size(void **st)
{
    (void)st;
    static const char *const names[] = {"ours-1rank-4pass.log", "ours-1rank-4pass-crlf.log",
                                        "ours-2rank-shared-lines.log", "original-2rank-interleaved.log",
                                        "original-truncated.log", "ours-duplicate.log", "ours-two-stamps.log"};
    static const size_t chunks[] = {1, 5, 97, 4096};
    for (size_t f = 0; f < sizeof names / sizeof *names; f++) {
        size_t len;
        char *buf = ts_slurp(ts_fixture(names[f]), &len);
        assert_non_null(buf);
        ps_options o = {.keep_spans = true};
        ps_log A;
        phs_result RA;
        assert_int_equal(ps_read(&A, names[f], buf, len, &o), HBG_OK);
        if (A.nused)
            assert_int_equal(phs_compute(&A, &RA, NULL), HBG_OK);
        for (size_t c = 0; c < sizeof chunks / sizeof *chunks; c++) {
            int fd = open(ts_fixture(names[f]), O_RDONLY);
            assert_true(fd >= 0);
            ps_options ob = o;
            ob.chunk = chunks[c];
            ps_log B;
            phs_result RB;
            char err[256];
            assert_int_equal(ps_read_fd(&B, names[f], fd, &ob, err, sizeof err), HBG_OK);
            close(fd);
            assert_int_equal(B.len, len);
            assert_int_equal(B.npass, A.npass);
            assert_int_equal(B.nused, A.nused);
            assert_int_equal(B.nspan, A.nspan);
            assert_int_equal(B.has_stamp, A.has_stamp);
            assert_int_equal(B.warn.n, A.warn.n);
            for (size_t w = 0; w < A.warn.n; w++)
                assert_string_equal(B.warn.msg[w], A.warn.msg[w]);
            for (size_t i = 0; i < A.nspan; i++) {
                assert_int_equal(B.span[i].line, A.span[i].line);
                assert_int_equal(B.span[i].name.n, A.span[i].name.n);
                assert_memory_equal(B.span[i].name.p, A.span[i].name.p, A.span[i].name.n);
            }
            if (A.nused) {
                assert_int_equal(phs_compute(&B, &RB, NULL), HBG_OK);
                assert_int_equal(RB.nrow, RA.nrow);
                assert_memory_equal(RB.row, RA.row, sizeof RA.row);
                assert_memory_equal(&RB.total, &RA.total, sizeof RA.total);
            }
            ps_free(&B);
        }
        ps_free(&A);
        free(buf);
    }
}

/* A log of '\n' lines whose last line, without its '\n', has CRs in it:
 * read in pieces, that line is the last piece, and it is not a text of
 * CR-only line ends (its CRs are inside a record, as the whole-buffer
 * read says). Once the last piece alone was counted by CR. */
static void test_last_line_with_crs(void **st)
{
    (void)st;
    size_t flen;
    char *fx = ts_slurp(ts_fixture("ours-1rank-4pass.log"), &flen);
    assert_non_null(fx);
    const char tail[] = "[mono_ns=1][T0x7f00aa000640][TIMING] bind_trace_end: [bind_trace.c:212] bind phase=args "
                        "start_ns=1\r dur_ns=2 pid=4242 inv=9\r[mono_ns=2][T0x7f00aa000640][TIMING] bind_trace_end: "
                        "[bind_trace.c:212] bind phase=gm_heap start_ns=3 dur_ns=4 pid=4242 inv=9";
    char *text = malloc(flen + sizeof tail);
    assert_non_null(text);
    memcpy(text, fx, flen);
    memcpy(text + flen, tail, sizeof tail - 1);
    size_t n = flen + sizeof tail - 1;
    char *path = ts_temp_file(text, n, ".log");
    assert_non_null(path);
    ps_options o = {0};
    ps_log A;
    assert_int_equal(ps_read(&A, "x.log", text, n, &o), HBG_OK);
    static const size_t chunks[] = {1, 7, 97, 4096, 0};
    for (size_t c = 0; c < sizeof chunks / sizeof *chunks; c++) {
        int fd = open(path, O_RDONLY);
        assert_true(fd >= 0);
        ps_options ob = o;
        ob.chunk = chunks[c];
        ps_log B;
        char err[256];
        assert_int_equal(ps_read_fd(&B, "x.log", fd, &ob, err, sizeof err), HBG_OK);
        close(fd);
        assert_int_equal(B.npass, A.npass);
        assert_int_equal(B.nbind, A.nbind);
        assert_int_equal(B.warn.n, A.warn.n);
        for (size_t w = 0; w < A.warn.n; w++)
            assert_string_equal(B.warn.msg[w], A.warn.msg[w]);
        ps_free(&B);
    }
    ps_free(&A);
    unlink(path);
    free(path), free(text), free(fx);
}

/* A log of CR-only line ends past the line bound (16 MiB of other lines,
 * then the fixture's): read from its file, the same passes and warnings,
 * line numbers and all, as read in one buffer. Once everything after its
 * first 16 MiB was dropped as the rest of one cut line. */
static void test_cr_only_log_past_the_bound(void **st)
{
    (void)st;
    size_t flen;
    char *fx = ts_slurp(ts_fixture("ours-1rank-4pass.log"), &flen);
    assert_non_null(fx);
    const size_t fill = (LR_MAX_LINE / 64) + 4096; /* lines of 64 bytes */
    size_t cap = fill * 64 + flen + 64, n = 0, nfill = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    while (nfill < fill) {
        int k = sprintf(text + n, "[mono_ns=1][T0x1][INFO] run_case: [runner.c:100] filler %07zu", nfill++);
        n += (size_t)k;
        memset(text + n, ' ', 63 - (size_t)k);
        n += 63 - (size_t)k;
        text[n++] = '\r';
    }
    char *bad = strstr(fx, "dur_ns=41 ");
    assert_non_null(bad);
    memcpy(bad, "dur_ns=x  ", 10);
    for (size_t i = 0; i < flen; i++)
        text[n++] = fx[i] == '\n' ? '\r' : fx[i];
    char *path = ts_temp_file(text, n, ".log");
    assert_non_null(path);
    ps_options o = {0};
    ps_log A, B;
    assert_int_equal(ps_read(&A, "x.log", text, n, &o), HBG_OK);
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    char err[256];
    assert_int_equal(ps_read_fd(&B, "x.log", fd, &o, err, sizeof err), HBG_OK);
    close(fd);
    assert_int_equal(A.npass, 4);
    assert_int_equal(B.npass, A.npass);
    assert_int_equal(B.nused, A.nused);
    assert_int_equal(B.warn.n, A.warn.n);
    char want[64];
    snprintf(want, sizeof want, "x.log:%zu: malformed bind line:", fill + 45);
    bool found = false;
    for (size_t w = 0; w < A.warn.n; w++) {
        assert_string_equal(B.warn.msg[w], A.warn.msg[w]);
        found |= strncmp(B.warn.msg[w], want, strlen(want)) == 0;
    }
    assert_true(found);
    ps_free(&A);
    ps_free(&B);
    unlink(path);
    free(path);

    /* a '\n' log after it (two logs joined): its passes are read too, the
     * same whatever the read size (once a small one lost them to a line
     * cut at the bound) */
    size_t l2;
    char *lf = ts_slurp(ts_fixture("ours-2rank-shared-lines.log"), &l2);
    assert_non_null(lf);
    char *both = malloc(n + l2);
    assert_non_null(both);
    memcpy(both, text, n);
    memcpy(both + n, lf, l2);
    path = ts_temp_file(both, n + l2, ".log");
    assert_non_null(path);
    static const size_t chunks[] = {4096, 0};
    for (size_t c = 0; c < 2; c++) {
        fd = open(path, O_RDONLY);
        assert_true(fd >= 0);
        ps_options oc = {.chunk = chunks[c]};
        assert_int_equal(ps_read_fd(&B, "x.log", fd, &oc, err, sizeof err), HBG_OK);
        close(fd);
        assert_int_equal(B.npass, 4 + 6);
        assert_int_equal(B.nrank, 3);
        ps_free(&B);
    }
    unlink(path);
    free(path), free(both), free(lf);
    free(text), free(fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pieces_join_back),
        cmocka_unit_test(test_empty_and_stop),
        cmocka_unit_test(test_long_line_is_cut),
        cmocka_unit_test(test_cr_only_lines),
        cmocka_unit_test(test_read_error),
        cmocka_unit_test(test_fixtures_any_read_size),
        cmocka_unit_test(test_cr_only_log_past_the_bound),
        cmocka_unit_test(test_last_line_with_crs),
        cmocka_unit_test(test_reader_thread_takes_no_signal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
