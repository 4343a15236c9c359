/* Fault: the records file is truncated while `hbg timeline` holds it.
 *
 * The command loads every --records file before it reads the log, and
 * parses them after. The log here is a FIFO fed by the test with more than
 * a pipe's worth of bytes, so once the test's write has gone through, the
 * records file is certainly loaded; the test then truncates it to nothing
 * and only then ends the log. A reader that maps the file dies of SIGBUS
 * on the vanished pages; one that read it has a consistent snapshot. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "support/fault_support.h"
#include "support/tools_support.h"

/* More than a pipe buffer (64 KiB) of lines that are no record. */
static void feed_filler(int fd)
{
    char line[128];
    memset(line, 'x', sizeof line - 1);
    line[sizeof line - 1] = '\n';
    for (int i = 0; i < 4096; i++)
        assert_int_equal(write(fd, line, sizeof line), (ssize_t)sizeof line);
}

static void truncated_records_are_a_snapshot_not_a_signal(void **state)
{
    (void)state;
    char *dir = fs_tempdir("rtrunc");
    char *fifo = fs_path(dir, "log.fifo"), *recs = fs_path(dir, "records.jsonl"), *out = fs_path(dir, "t.json");
    size_t loglen = 0, reclen = 0;
    char *log = ts_slurp(ts_fixture("hbg-run-vector-timeline.log"), &loglen);
    char *rec = ts_slurp(ts_fixture("hbg-run-vector-timeline.host_phase_records.jsonl"), &reclen);
    assert_non_null(log);
    assert_non_null(rec);
    fs_write(recs, rec);
    assert_int_equal(mkfifo(fifo, 0600), 0);

    const char *args[] = {"timeline", fifo, "--records", recs, "-o", out, NULL};
    fs_spec spec = {.args = args};
    fs_child c;
    fs_start(&spec, &c);
    int w = open(fifo, O_WRONLY);
    assert_true(w >= 0);
    assert_int_equal(write(w, log, loglen), (ssize_t)loglen);
    feed_filler(w);
    assert_int_equal(truncate(recs, 0), 0);
    close(w);

    char *err = NULL;
    int rc = fs_finish(&c, 60, NULL, &err);
    assert_int_equal(rc, 0);
    /* The records read before the truncation are all drawn: 2 passes. */
    fs_expect(err, ": 57 events (4 spans, 0 device spans, 0 bind segments, 0 host_orch copies on other threads, "
                   "50 records, 0 hand-off arrows of 2 events, 3 lane names)");
    free(err);
    free(log);
    free(rec);
    free(fifo);
    free(recs);
    free(out);
    fs_rmdir(dir);
}

/* Writes n bytes to the FIFO fd (opened non-blocking), failing the test
 * when the reader takes none for 30 s (it is waiting on something else). */
static void write_or_fail(int fd, const char *p, size_t n)
{
    while (n) {
        struct pollfd pf = {.fd = fd, .events = POLLOUT};
        if (poll(&pf, 1, 30000) == 0)
            fail_msg("the command stopped reading the first records FIFO (waiting to open the second?)");
        ssize_t k = write(fd, p, n);
        if (k < 0 && (errno == EAGAIN || errno == EINTR))
            continue;
        assert_true(k > 0);
        p += k;
        n -= (size_t)k;
    }
}

/* Records files are read one after the other: a writer that fills two
 * FIFOs in turn, more than a pipe's worth into the first, is not kept
 * waiting by a command that opens the second before it has read the
 * first (as one that opened every file first did, forever). */
static void records_fifos_are_read_in_turn(void **state)
{
    (void)state;
    char *dir = fs_tempdir("rfifo");
    char *f1 = fs_path(dir, "r1.fifo"), *f2 = fs_path(dir, "r2.fifo"), *out = fs_path(dir, "t.json");
    size_t reclen = 0;
    char *rec = ts_slurp(ts_fixture("hbg-run-vector-timeline.host_phase_records.jsonl"), &reclen);
    assert_non_null(rec);
    assert_int_equal(mkfifo(f1, 0600), 0);
    assert_int_equal(mkfifo(f2, 0600), 0);
    char log[4096];
    snprintf(log, sizeof log, "%s", ts_fixture("hbg-run-vector-timeline.log"));
    const char *args[] = {"timeline", log, "--records", f1, "--records", f2, "-o", out, NULL};
    fs_spec spec = {.args = args};
    fs_child c;
    fs_start(&spec, &c);
    static char blank[70000]; /* blank lines: more than a pipe holds */
    memset(blank, '\n', sizeof blank);
    int w = open(f1, O_WRONLY);
    assert_true(w >= 0);
    assert_int_equal(fcntl(w, F_SETFL, O_NONBLOCK), 0);
    write_or_fail(w, blank, sizeof blank);
    close(w);
    w = open(f2, O_WRONLY);
    assert_true(w >= 0);
    assert_int_equal(fcntl(w, F_SETFL, O_NONBLOCK), 0);
    write_or_fail(w, rec, reclen);
    close(w);
    char *err = NULL;
    assert_int_equal(fs_finish(&c, 60, NULL, &err), 0);
    fs_expect(err, ": 57 events (4 spans, 0 device spans, 0 bind segments, 0 host_orch copies on other threads, "
                   "50 records, 0 hand-off arrows of 2 events, 3 lane names)");
    free(err);
    free(rec);
    free(f1);
    free(f2);
    free(out);
    fs_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(truncated_records_are_a_snapshot_not_a_signal),
        cmocka_unit_test(records_fifos_are_read_in_turn),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
