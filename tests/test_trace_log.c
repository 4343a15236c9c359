/* The log emitter: record shapes, the clock anchor (one per process, forks
 * included), level thresholds, PIPE_BUF truncation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "hbg/trace.h"
#include "support/capture.h"

static hbg_log *open_log(int fd, hbg_level th)
{
    hbg_log *lg = NULL;
    assert_int_equal(hbg_log_open(fd, th, &lg), HBG_OK);
    assert_non_null(lg);
    return lg;
}

/* Parses an anchor line completely; returns its pid. */
static unsigned parse_anchor(const char *line, unsigned long long *mono, unsigned long long *wall)
{
    unsigned long long pmono, amono, awall;
    unsigned long th;
    unsigned pid;
    int n = -1;
    int k = sscanf(line, "[mono_ns=%llu][T0x%lx][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=%u mono_ns=%llu wall_ns=%llu%n",
                   &pmono, &th, &pid, &amono, &awall, &n);
    assert_int_equal(k, 5);
    assert_int_equal((size_t)n, strlen(line)); /* nothing after wall_ns */
    assert_true(amono <= pmono);
    if (mono)
        *mono = amono;
    if (wall)
        *wall = awall;
    return pid;
}

static void record_shape(void **state)
{
    (void)state;
    int fd = capture_open();
    hbg_log *lg = open_log(fd, HBG_LOG_DEBUG);
    uint64_t before = hbg_mono_ns();
    HBG_LOG(lg, HBG_LOG_INFO, "hello %d %s", 42, "world"); int line = __LINE__;
    uint64_t after = hbg_mono_ns();
    hbg_log_close(lg);

    char *out = capture_read(fd, NULL);
    char *rec = capture_line(out, 1);
    assert_non_null(rec);
    assert_null(capture_line(out, 2));

    unsigned long long mono;
    unsigned long th;
    char level[16], func[64], file[64];
    int ln, n = -1;
    assert_int_equal(sscanf(rec, "[mono_ns=%llu][T0x%lx][%15[A-Z]] %63[^:]: [%63[^:]:%d] %n", &mono, &th,
                            level, func, file, &ln, &n),
                     6);
    assert_true(n > 0);
    assert_true(mono >= before && mono <= after);
    assert_true(th == (unsigned long)pthread_self());
    assert_string_equal(level, "INFO");
    assert_string_equal(func, "record_shape");
    assert_string_equal(file, "test_trace_log.c");
    assert_int_equal(ln, line);
    assert_string_equal(rec + n, "hello 42 world");
    /* The hex thread handle is lowercase, like the original's. */
    char hex[32];
    snprintf(hex, sizeof hex, "[T0x%lx]", (unsigned long)pthread_self());
    assert_non_null(strstr(rec, hex));
    free(rec);
    free(out);
    close(fd);
}

static void verbatim_record(void **state)
{
    (void)state;
    int fd = capture_open();
    hbg_log *lg = open_log(fd, HBG_LOG_TIMING);
    hbg_log_record(lg, HBG_LOG_WARN, "my_func", "plain [x:1] text");
    hbg_log_close(lg);
    char *out = capture_read(fd, NULL);
    char *rec = capture_line(out, 1);
    const char *tail = strstr(rec, "][WARN] ");
    assert_non_null(tail);
    assert_string_equal(tail, "][WARN] my_func: plain [x:1] text");
    free(rec);
    free(out);
    close(fd);
}

static void anchor_shape(void **state)
{
    (void)state;
    int fd = capture_open();
    hbg_log *lg = open_log(fd, HBG_LOG_TIMING);
    struct timespec w0, w1;
    clock_gettime(CLOCK_REALTIME, &w0);
    uint64_t m0 = hbg_mono_ns();
    hbg_log_record(lg, HBG_LOG_TIMING, "f", "x");
    uint64_t m1 = hbg_mono_ns();
    clock_gettime(CLOCK_REALTIME, &w1);
    hbg_log_close(lg);
    char *out = capture_read(fd, NULL);
    char *a = capture_line(out, 0);
    unsigned long long mono, wall;
    assert_int_equal(parse_anchor(a, &mono, &wall), (unsigned)getpid());
    assert_true(mono >= m0 && mono <= m1);
    uint64_t lo = (uint64_t)w0.tv_sec * 1000000000u + (uint64_t)w0.tv_nsec;
    uint64_t hi = (uint64_t)w1.tv_sec * 1000000000u + (uint64_t)w1.tv_nsec;
    assert_true(wall >= lo && wall <= hi);
    free(a);
    free(out);
    close(fd);
}

static void one_anchor_per_process(void **state)
{
    (void)state;
    int fd = capture_open();
    hbg_log *lg = open_log(fd, HBG_LOG_DEBUG);
    for (int i = 0; i < 5; i++)
        HBG_LOG(lg, (hbg_level)i, "record %d", i);
    hbg_log_close(lg);
    char *out = capture_read(fd, NULL);
    assert_int_equal(capture_count(out, "[CLOCK_ANCHOR]"), 1);
    char *first = capture_line(out, 0);
    parse_anchor(first, NULL, NULL);
    size_t lines = 0;
    for (const char *p = out; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, 6);
    free(first);
    free(out);
    close(fd);
}

/* A child writes its own anchor even though the parent's is already out
 * (and the log's memory, copied at fork, says so). */
static void anchor_after_fork(void **state)
{
    (void)state;
    int fd = capture_open();
    hbg_log *lg = open_log(fd, HBG_LOG_TIMING);
    hbg_log_record(lg, HBG_LOG_TIMING, "parent", "before fork");
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        hbg_log_record(lg, HBG_LOG_TIMING, "child", "one");
        hbg_log_record(lg, HBG_LOG_TIMING, "child", "two");
        _exit(0);
    }
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    hbg_log_record(lg, HBG_LOG_TIMING, "parent", "after fork");
    hbg_log_close(lg);

    char *out = capture_read(fd, NULL);
    assert_int_equal(capture_count(out, "[CLOCK_ANCHOR]"), 2);
    const char *want[] = {"clock_anchor", "parent: before fork", "clock_anchor", "child: one", "child: two",
                          "parent: after fork"};
    for (size_t i = 0; i < 6; i++) {
        char *l = capture_line(out, i);
        assert_non_null(l);
        assert_non_null(strstr(l, want[i]));
        if (i == 0)
            assert_int_equal(parse_anchor(l, NULL, NULL), (unsigned)getpid());
        if (i == 2)
            assert_int_equal(parse_anchor(l, NULL, NULL), (unsigned)child);
        free(l);
    }
    assert_null(capture_line(out, 6));
    free(out);
    close(fd);
}

/* Forked before the parent logged anything: each process anchors once. */
static void anchor_fork_first(void **state)
{
    (void)state;
    int fd = capture_open();
    hbg_log *lg = open_log(fd, HBG_LOG_INFO);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        HBG_LOG(lg, HBG_LOG_INFO, "child");
        HBG_LOG(lg, HBG_LOG_INFO, "child");
        _exit(0);
    }
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    HBG_LOG(lg, HBG_LOG_INFO, "parent");
    HBG_LOG(lg, HBG_LOG_INFO, "parent");
    hbg_log_close(lg);
    char *out = capture_read(fd, NULL);
    assert_int_equal(capture_count(out, "[CLOCK_ANCHOR]"), 2);
    char *a0 = capture_line(out, 0), *a1 = capture_line(out, 3);
    assert_int_equal(parse_anchor(a0, NULL, NULL), (unsigned)child);
    assert_int_equal(parse_anchor(a1, NULL, NULL), (unsigned)getpid());
    free(a0);
    free(a1);
    free(out);
    close(fd);
}

static void levels(void **state)
{
    (void)state;
    for (int th = HBG_LOG_DEBUG; th <= HBG_LOG_OFF; th++) {
        int fd = capture_open();
        hbg_log *lg = open_log(fd, (hbg_level)th);
        for (int l = HBG_LOG_DEBUG; l <= HBG_LOG_OFF; l++) {
            assert_int_equal(hbg_log_enabled(lg, (hbg_level)l), l >= th && l != HBG_LOG_OFF);
            HBG_LOG(lg, (hbg_level)l, "level %d", l);
            hbg_log_record(lg, (hbg_level)l, "rec", "r");
        }
        hbg_log_close(lg);
        char *out = capture_read(fd, NULL);
        /* The anchor is a TIMING record: written only where TIMING is. */
        assert_int_equal(capture_count(out, "[CLOCK_ANCHOR]"), th <= HBG_LOG_TIMING ? 1 : 0);
        for (int l = HBG_LOG_DEBUG; l < HBG_LOG_OFF; l++) {
            char tag[32];
            snprintf(tag, sizeof tag, "][%s] levels: ", hbg_level_name((hbg_level)l));
            assert_int_equal(capture_count(out, tag), l >= th ? 1 : 0);
            snprintf(tag, sizeof tag, "][%s] rec: r", hbg_level_name((hbg_level)l));
            assert_int_equal(capture_count(out, tag), l >= th ? 1 : 0);
        }
        assert_int_equal(capture_count(out, "[OFF]"), 0);
        if (th == HBG_LOG_OFF)
            assert_string_equal(out, "");
        free(out);
        close(fd);
    }
}

static void level_names(void **state)
{
    (void)state;
    const char *names[] = {"DEBUG", "INFO", "TIMING", "WARN", "ERROR", "OFF"};
    for (int i = 0; i <= HBG_LOG_OFF; i++) {
        assert_string_equal(hbg_level_name((hbg_level)i), names[i]);
        hbg_level l = HBG_LOG_ERROR;
        assert_int_equal(hbg_level_parse(names[i], &l), HBG_OK);
        assert_int_equal(l, i);
    }
    hbg_level l = HBG_LOG_WARN;
    assert_int_equal(hbg_level_parse("tIMinG", &l), HBG_OK);
    assert_int_equal(l, HBG_LOG_TIMING);
    l = HBG_LOG_WARN;
    assert_int_equal(hbg_level_parse("verbose", &l), HBG_E_INVAL);
    assert_int_equal(hbg_level_parse("", &l), HBG_E_INVAL);
    assert_int_equal(hbg_level_parse(NULL, &l), HBG_E_INVAL);
    assert_int_equal(l, HBG_LOG_WARN);
    assert_string_equal(hbg_level_name((hbg_level)42), "?");
}

/* Length of the record prefix + "[test_trace_log.c:<line>] " for func f. */
static size_t prefix_len(const char *rec)
{
    const char *p = strstr(rec, "] truncation: [test_trace_log.c:");
    assert_non_null(p);
    p = strchr(p + 2, ']');
    return (size_t)(p - rec) + 2;
}

static void truncation(void **state)
{
    (void)state;
    char *big = malloc(10001);
    memset(big, 'x', 10000);
    big[10000] = '\0';

    int fd = capture_open();
    hbg_log *lg = open_log(fd, HBG_LOG_WARN); /* no anchor: one line only */
    HBG_LOG(lg, HBG_LOG_ERROR, "%s", big);
    hbg_log_close(lg);
    size_t len;
    char *out = capture_read(fd, &len);
    assert_int_equal(len, PIPE_BUF);
    assert_int_equal(len, 4096);
    assert_memory_equal(out + len - 4, "...\n", 4);
    assert_int_equal(capture_count(out, "x"), 1);
    size_t pre = prefix_len(out);
    free(out);
    close(fd);

    /* Exactly fitting: 4095 bytes of content and the newline, not cut. */
    size_t fit = PIPE_BUF - 1 - pre;
    big[fit] = '\0';
    fd = capture_open();
    lg = open_log(fd, HBG_LOG_WARN);
    HBG_LOG(lg, HBG_LOG_ERROR, "%s", big);
    hbg_log_close(lg);
    out = capture_read(fd, &len);
    assert_int_equal(len, PIPE_BUF);
    assert_memory_equal(out + len - 4, "xxx\n", 4);
    free(out);
    close(fd);

    /* One byte more: cut. */
    big[fit] = 'x';
    big[fit + 1] = '\0';
    fd = capture_open();
    lg = open_log(fd, HBG_LOG_WARN);
    HBG_LOG(lg, HBG_LOG_ERROR, "%s", big);
    big[fit + 1] = 'x'; /* back to 10000 bytes */
    hbg_log_record(lg, HBG_LOG_ERROR, "v", big); /* verbatim records are cut alike */
    hbg_log_close(lg);
    out = capture_read(fd, &len);
    assert_int_equal(len, 2 * PIPE_BUF);
    assert_memory_equal(out + PIPE_BUF - 4, "...\n", 4);
    assert_memory_equal(out + len - 4, "...\n", 4);
    free(out);
    close(fd);
    free(big);
}

static void newlines_flattened(void **state)
{
    (void)state;
    int fd = capture_open();
    hbg_log *lg = open_log(fd, HBG_LOG_WARN);
    HBG_LOG(lg, HBG_LOG_WARN, "a\nb\r\nc");
    hbg_log_close(lg);
    char *out = capture_read(fd, NULL);
    assert_non_null(strstr(out, "] a b  c\n"));
    assert_int_equal(strchr(out, '\n') - out + 1, (long)strlen(out));
    free(out);
    close(fd);
}

static void bad_arguments(void **state)
{
    (void)state;
    hbg_log *lg = (hbg_log *)1;
    assert_int_equal(hbg_log_open(-1, HBG_LOG_INFO, &lg), HBG_E_INVAL);
    assert_null(lg);
    assert_int_equal(hbg_log_open(1, (hbg_level)7, &lg), HBG_E_INVAL);
    assert_int_equal(hbg_log_open(1, HBG_LOG_INFO, NULL), HBG_E_INVAL);
    /* A NULL log is a quiet no-op everywhere. */
    assert_false(hbg_log_enabled(NULL, HBG_LOG_ERROR));
    HBG_LOG(NULL, HBG_LOG_ERROR, "nothing");
    hbg_log_record(NULL, HBG_LOG_ERROR, "f", "nothing");
    hbg_log_close(NULL);
    /* A NULL format is an empty message, as hbg_log_record's NULL msg is
     * (it reached vsnprintf: undefined, and a crash under UBSan). */
    int fd = capture_open();
    lg = open_log(fd, HBG_LOG_WARN);
    const char *volatile none = NULL;
    hbg_log_printf(lg, HBG_LOG_WARN, "f", "dir/x.c", 3, none);
    hbg_log_close(lg);
    char *out = capture_read(fd, NULL);
    assert_non_null(strstr(out, "[WARN] f: [x.c:3] \n"));
    free(out);
    close(fd);
}

static void clocks(void **state)
{
    (void)state;
    uint64_t a = hbg_mono_ns(), b = hbg_mono_ns();
    assert_true(a > 0 && b >= a);
    assert_int_equal(hbg_gettid(), (uint32_t)getpid()); /* main thread */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(record_shape),     cmocka_unit_test(verbatim_record),
        cmocka_unit_test(anchor_shape),     cmocka_unit_test(one_anchor_per_process),
        cmocka_unit_test(anchor_after_fork), cmocka_unit_test(anchor_fork_first),
        cmocka_unit_test(levels),           cmocka_unit_test(level_names),
        cmocka_unit_test(truncation),       cmocka_unit_test(newlines_flattened),
        cmocka_unit_test(bad_arguments),    cmocka_unit_test(clocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
