/* The passes a log holds past what its ranks reported
 * (src/cli/run_logtail.c), on logs written here: the lines of a pass the
 * rank never reported count once a rank, whatever kind they are, in
 * whichever chunk of the read back they fall; a rank's reported passes,
 * another process's lines and a log that cannot be read back count for
 * nothing. */
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

#include "cli/run_logtail.h"
#include "support/fault_support.h"

typedef struct logw {
    char *dir, *path;
    FILE *f;
} logw;

static void log_open(logw *l)
{
    l->dir = fs_tempdir("logtail");
    l->path = fs_path(l->dir, "run.log");
    l->f = fopen(l->path, "w");
    assert_non_null(l->f);
    fprintf(l->f, "[stamp] hbg run vector --rounds 9\n");
}

static void anchor(logw *l, unsigned pid)
{
    fprintf(l->f, "[mono_ns=1][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=%u mono_ns=1 wall_ns=1\n", pid);
}

static void span(logw *l, unsigned pid, unsigned inv, const char *name)
{
    fprintf(l->f,
            "[mono_ns=1][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=%u tid=%u inv=%u hid=0000000000000001 "
            "depth=1 name=%s ts=1 dur=1 \n",
            pid, pid, inv, name);
}

static void bind_line(logw *l, unsigned pid, unsigned inv)
{
    fprintf(l->f,
            "[mono_ns=1][T0x1][TIMING] bind_trace_end: [bind_trace.c:1] bind phase=args start_ns=1 dur_ns=1  "
            "pid=%u inv=%u\n",
            pid, inv);
}

/* A whole pass: its bind line and spans. */
static void pass(logw *l, unsigned pid, unsigned inv)
{
    bind_line(l, pid, inv);
    span(l, pid, inv, "chip.run.bind");
    span(l, pid, inv, "chip.run");
}

/* The count for ranks of pids pid[] whose last reported passes are
 * last[], on the log as written so far (opened for writing only, as hbg
 * run's is), of a run whose lines begin at `from`. */
static uint32_t count_from(logw *l, off_t from, const uint64_t *pid, const uint64_t *last, uint32_t n)
{
    assert_int_equal(fflush(l->f), 0);
    int fd = open(l->path, O_WRONLY | O_APPEND);
    assert_true(fd >= 0);
    uint32_t got = logtail_unreported(fd, from, pid, last, n);
    close(fd);
    return got;
}

/* The same, for a log of one run, its stamp first. */
static uint32_t count(logw *l, const uint64_t *pid, const uint64_t *last, uint32_t n)
{
    return count_from(l, 0, pid, last, n);
}

static void log_close(logw *l)
{
    fclose(l->f);
    free(l->path);
    fs_rmdir(l->dir);
}

/* Rank 0 (pid 100) was killed after pass 3's bind line, rank 1 (pid 200)
 * after its pass 2 whole: both reported 2 passes. Rank 2 (pid 300)
 * reported all its passes. */
static void a_pass_the_rank_never_reported_counts_once(void **state)
{
    (void)state;
    logw l;
    log_open(&l);
    anchor(&l, 100), anchor(&l, 200), anchor(&l, 300);
    for (unsigned inv = 1; inv <= 2; inv++)
        pass(&l, 100, inv), pass(&l, 200, inv), pass(&l, 300, inv);
    uint64_t pid[] = {100, 200, 300}, last[] = {2, 1, 2};
    assert_int_equal(count(&l, pid, last, 3), 1); /* rank 1: pass 2 */
    bind_line(&l, 100, 3);
    last[1] = 2;
    assert_int_equal(count(&l, pid, last, 3), 1); /* rank 0: pass 3's bind line */
    span(&l, 100, 3, "chip.run.bind");
    assert_int_equal(count(&l, pid, last, 3), 1); /* still one pass */
    pid[0] = 0;                                   /* not looked for (it ended well) */
    assert_int_equal(count(&l, pid, last, 3), 0);
    /* a rank that reported none, killed in its first pass */
    anchor(&l, 400);
    span(&l, 400, 1, "chip.run.bind");
    uint64_t pid4[] = {400, 500}, last4[] = {0, 0}; /* 500: killed before it wrote a line */
    assert_int_equal(count(&l, pid4, last4, 2), 1);
    log_close(&l);
}

/* Lines far back, behind more than one chunk of other ranks' passes (the
 * log is read back 64 KiB at a time): a rank's last lines are found
 * wherever they are, and a rank whose lines are all reported ones, or
 * whose anchor is its last line, counts none. */
static void lines_behind_a_chunk_of_other_passes_are_found(void **state)
{
    (void)state;
    logw l;
    log_open(&l);
    anchor(&l, 100), anchor(&l, 200), anchor(&l, 300);
    pass(&l, 100, 1);
    pass(&l, 100, 2);
    bind_line(&l, 200, 1);
    for (unsigned inv = 1; inv <= 2000; inv++) /* some 600 KB of pid 999's passes */
        pass(&l, 999, inv);
    uint64_t pid[] = {100, 200, 300}, last[] = {1, 0, 0};
    assert_int_equal(count(&l, pid, last, 3), 2);
    last[0] = 2, last[1] = 1;
    assert_int_equal(count(&l, pid, last, 3), 0);
    log_close(&l);
}

/* A log on stderr appended to (`2>> run.log`): the run's lines begin
 * past an earlier run's, whose ranks had the same pids (as a container's
 * do). A rank stopped before it wrote a line counts none of their passes,
 * however far back the look goes; one that wrote its pass counts it. It
 * was charged an earlier run's pass. */
static void an_earlier_runs_passes_count_for_nothing(void **state)
{
    (void)state;
    logw l;
    log_open(&l);
    anchor(&l, 100), anchor(&l, 200);
    for (unsigned inv = 1; inv <= 3; inv++)
        pass(&l, 100, inv), pass(&l, 200, inv);
    for (unsigned inv = 1; inv <= 1000; inv++) /* more than a chunk */
        pass(&l, 999, inv);
    fprintf(l.f, "[stamp] hbg run vector --rounds 9\n");
    assert_int_equal(fflush(l.f), 0);
    off_t from = ftello(l.f);
    uint64_t pid[] = {100, 200}, last[] = {0, 0};
    assert_int_equal(count_from(&l, from, pid, last, 2), 0);
    anchor(&l, 200);
    bind_line(&l, 200, 1);
    assert_int_equal(count_from(&l, from, pid, last, 2), 1);
    log_close(&l);
}

/* Standard error on a pipe, a terminal: nothing to read back. */
static void a_log_that_is_no_file_counts_none(void **state)
{
    (void)state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    uint64_t pid[] = {100}, last[] = {0};
    assert_int_equal(logtail_unreported(p[1], 0, pid, last, 1), 0);
    close(p[0]);
    close(p[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_pass_the_rank_never_reported_counts_once),
        cmocka_unit_test(lines_behind_a_chunk_of_other_passes_are_found),
        cmocka_unit_test(an_earlier_runs_passes_count_for_nothing),
        cmocka_unit_test(a_log_that_is_no_file_counts_none),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
