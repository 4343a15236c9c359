/* Fault: the records file is truncated while `hbg timeline` holds it.
 *
 * The command loads every --records file before it reads the log, and
 * parses them after. The log here is a FIFO fed by the test with more than
 * a pipe's worth of bytes, so once the test's write has gone through, the
 * records file is certainly loaded; the test then truncates it to nothing
 * and only then ends the log. A reader that maps the file dies of SIGBUS
 * on the vanished pages; one that read it has a consistent snapshot. */
#include <fcntl.h>
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(truncated_records_are_a_snapshot_not_a_signal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
