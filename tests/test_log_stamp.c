/* hbg_log_stamp: the stamp line `hbg run` writes, from the library, and a
 * program of one's own whose logs hbg compare accepts through it. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "case.h"
#include "hbg/runtime.h"
#include "support/ab_support.h"
#include "support/capture.h"

static void writes_the_line(void **state)
{
    (void)state;
    int fd = capture_open();
    hbg_stamp s = {.commit = "1a2b3c4-dirty", .breakdown = true, .level = HBG_LOG_TIMING,
                   .command = "./mybench --rounds 6\n--fast"};
    assert_int_equal(hbg_log_stamp(fd, &s), HBG_OK);
    char *text = capture_read(fd, NULL);
    assert_string_equal(text, "[stamp] 1a2b3c4-dirty env HBG_BIND_BREAKDOWN=1 HBG_HOST_PHASE_RECORDS=0 "
                              "HBG_SKIP_DEVICE_RUN=0 HBG_LOG_LEVEL=timing ./mybench --rounds 6 --fast\n");
    free(text);
    close(fd);
}

static void refuses_what_compare_could_not_read(void **state)
{
    (void)state;
    char buf[64];
    hbg_stamp s = {.commit = "two words", .command = "x"};
    assert_int_equal(hbg_stamp_format(&s, buf, sizeof buf), HBG_E_INVAL);
    s.commit = "";
    assert_int_equal(hbg_stamp_format(&s, buf, sizeof buf), HBG_E_INVAL);
    s.commit = "abc";
    s.command = NULL;
    assert_int_equal(hbg_stamp_format(&s, buf, sizeof buf), HBG_E_INVAL);
    s.command = "a command far too long for the sixty-four bytes of this buffer";
    assert_int_equal(hbg_stamp_format(&s, buf, sizeof buf), HBG_E_INVAL);
    /* a level that is none: the stamp would say HBG_LOG_LEVEL=? */
    char line[256];
    s.command = "x";
    s.level = (hbg_level)(HBG_LOG_OFF + 1);
    assert_int_equal(hbg_stamp_format(&s, line, sizeof line), HBG_E_INVAL);
    s.level = HBG_LOG_OFF;
    assert_int_equal(hbg_stamp_format(&s, line, sizeof line), HBG_OK);
    /* a write that fails is an error */
    s.command = "x";
    assert_int_equal(hbg_log_stamp(-1, &s), HBG_E_IO);
}

/* Refuses s's stamp with HBG_E_INVAL and the words why. */
static void refused(const hbg_stamp *s, const char *why)
{
    char buf[256];
    assert_int_equal(hbg_stamp_format(s, buf, sizeof buf), HBG_E_INVAL);
    assert_string_equal(hbg_stamp_last_error(), why);
    int fd = capture_open();
    assert_int_equal(hbg_log_stamp(fd, s), HBG_E_INVAL);
    assert_string_equal(hbg_stamp_last_error(), why);
    char *text = capture_read(fd, NULL);
    assert_string_equal(text, ""); /* nothing written */
    free(text);
    close(fd);
}

/* hbg compare refuses a stamp whose commit holds a C1 control (as UTF-8 or
 * a bare byte) or a byte that starts no UTF-8 character: the library's
 * writer refuses it by the same rule, naming what and where. */
static void refuses_a_commit_compare_would_refuse(void **state)
{
    (void)state;
    hbg_stamp s = {.commit = "ab\xc2\x9b"
                             "cd",
                   .command = "x"};
    refused(&s, "the stamp's commit has a control byte at byte 2");
    s.commit = "ab\x9b"
               "cd";
    refused(&s, "the stamp's commit has a control byte at byte 2");
    s.commit = "abc\xff";
    refused(&s, "the stamp's commit has a byte that starts no UTF-8 character at byte 3");
    s.commit = "abc\xe2"; /* a character cut short */
    refused(&s, "the stamp's commit has a byte that starts no UTF-8 character at byte 3");
    s.commit = "a\xff"
               "b\x01"; /* a control is named first, as compare names it */
    refused(&s, "the stamp's commit has a control byte at byte 3");
    s.commit = "a\tb";
    refused(&s, "the stamp's commit has a control byte at byte 1");
    /* compare reads a commit of HBG_STAMP_COMMIT_MAX bytes at most */
    char longest[HBG_STAMP_COMMIT_MAX + 2];
    memset(longest, 'a', sizeof longest - 1);
    longest[sizeof longest - 1] = '\0';
    s.commit = longest;
    refused(&s, "the stamp's commit is 48 bytes long (at most 47)");
    longest[HBG_STAMP_COMMIT_MAX] = '\0';
    char line[256];
    assert_int_equal(hbg_stamp_format(&s, line, sizeof line), HBG_OK);
    /* UTF-8 text is a commit: compare reads it */
    char buf[256];
    s.commit = "caf\xc3\xa9";
    assert_int_equal(hbg_stamp_format(&s, buf, sizeof buf), HBG_OK);
}

/* Each refusal says what was wrong, as the runtime's calls do. */
static void each_refusal_is_named(void **state)
{
    (void)state;
    hbg_stamp s = {.commit = "two words", .command = "x"};
    refused(&s, "the stamp's commit has a space at byte 3: it is one word");
    s.commit = "";
    refused(&s, "the stamp's commit is empty");
    s.commit = NULL;
    refused(&s, "the stamp's commit is NULL");
    s.commit = "abc";
    s.command = NULL;
    refused(&s, "the stamp's command is NULL");
    s.command = "x";
    s.level = (hbg_level)(HBG_LOG_OFF + 1);
    refused(&s, "the stamp's level 6 is no hbg_level");
    s.level = HBG_LOG_OFF;
    refused(NULL, "the stamp is NULL");

    char buf[64];
    assert_int_equal(hbg_stamp_format(&s, NULL, sizeof buf), HBG_E_INVAL);
    assert_string_equal(hbg_stamp_last_error(), "the stamp's buffer is NULL");
    assert_int_equal(hbg_stamp_format(&s, buf, 0), HBG_E_INVAL);
    assert_string_equal(hbg_stamp_last_error(), "cap is 0: no room for the stamp line");
    assert_int_equal(hbg_stamp_format(&s, buf, sizeof buf), HBG_E_INVAL);
    assert_string_equal(hbg_stamp_last_error(), "the stamp line is 103 bytes; cap 64 holds 63 and its NUL");

    /* past a record: one write(2) of PIPE_BUF bytes at most */
    char *cmd = malloc(5000);
    assert_non_null(cmd);
    memset(cmd, 'c', 4999);
    cmd[4999] = '\0';
    s.command = cmd;
    assert_int_equal(hbg_log_stamp(1, &s), HBG_E_INVAL);
    assert_string_equal(hbg_stamp_last_error(), "the stamp line is 5101 bytes; a record holds 4095 and its newline");
    free(cmd);

    /* a write that fails keeps its errno and says so; a success clears nothing */
    s.command = "x";
    assert_int_equal(hbg_log_stamp(-1, &s), HBG_E_IO);
    assert_int_equal(errno, EBADF);
    assert_string_equal(hbg_stamp_last_error(), "the stamp's write to fd -1 failed: Bad file descriptor");
    char line[256];
    assert_int_equal(hbg_stamp_format(&s, line, sizeof line), HBG_OK);
    assert_string_equal(hbg_stamp_last_error(), "the stamp's write to fd -1 failed: Bad file descriptor");
}

/* One arm's log, as a user's program would write it: the stamp, then
 * passes of the vector case with the breakdown on. */
static void write_log(const char *path, const char *commit, bool breakdown)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND, 0644);
    assert_true(fd >= 0);
    hbg_stamp s = {.commit = commit, .breakdown = breakdown, .skip_device = true, .level = HBG_LOG_TIMING,
                   .command = "./mybench --rounds 4"};
    assert_int_equal(hbg_log_stamp(fd, &s), HBG_OK);
    hbg_log *log;
    assert_int_equal(hbg_log_open(fd, HBG_LOG_TIMING, &log), HBG_OK);
    hbg_device *dev;
    hbg_kernel_table *kt;
    hbg_sim_config sc = {0};
    assert_int_equal(hbg_sim_open(&sc, &dev), HBG_OK);
    assert_int_equal(hbg_kernel_table_create(&kt), HBG_OK);
    const hbg_case *c = hbg_case_find("vector");
    hbg_case_env env = {.nranks = 1, .tile_unit = 256};
    hbg_program prog;
    void *cs;
    assert_int_equal(c->setup(&env, kt, &prog, &cs), HBG_OK);
    hbg_runtime_config rc = {.device = dev, .kernels = kt, .heap_bytes = c->heap_bytes, .log = log,
                             .breakdown = true, .records_fd = -1, .nranks = 1};
    hbg_runtime *rt;
    assert_int_equal(hbg_runtime_create(&rc, &rt), HBG_OK);
    for (int i = 0; i < 4; i++) {
        hbg_pass_report rep;
        assert_int_equal(hbg_runtime_run(rt, &prog, true, &rep), HBG_OK);
    }
    hbg_runtime_destroy(rt);
    c->teardown(cs);
    hbg_kernel_table_destroy(kt);
    hbg_device_close(dev);
    hbg_log_close(log);
    close(fd);
}

static void compare_accepts_its_logs(void **state)
{
    (void)state;
    char *root = ab_sandbox("stamp");
    char path[4][512];
    for (int i = 0; i < 4; i++) {
        snprintf(path[i], sizeof path[i], "%s/%s%d.log", root, i < 2 ? "base" : "measure", i % 2);
        write_log(path[i], i < 2 ? "aaaa111" : "bbbb222", true);
    }
    const char *args[] = {"compare", "--base", path[0], path[1], "--measure", path[2], path[3], NULL};
    char *out = NULL, *err = NULL;
    int rc = ab_hbg(root, args, &out, &err);
    if (rc != 0 && rc != 1)
        fail_msg("hbg compare exited %d: %s", rc, err);
    assert_string_equal(err, "");
    assert_non_null(strstr(out, "aaaa111"));
    assert_non_null(strstr(out, "bbbb222"));
    assert_null(strstr(out, "unstamped"));
    free(out), free(err);

    /* a stamp that differs in a switch is another ruler: refused */
    char other[512];
    snprintf(other, sizeof other, "%s/other.log", root);
    write_log(other, "bbbb222", false);
    const char *args2[] = {"compare", "--base", path[0], "--measure", other, NULL};
    assert_int_equal(ab_hbg(root, args2, &out, &err), 2);
    assert_non_null(strstr(err, "their stamps differ in more than the commit"));
    assert_non_null(strstr(err, "HBG_BIND_BREAKDOWN"));
    free(out), free(err);
    ab_sandbox_free(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(writes_the_line),
        cmocka_unit_test(refuses_what_compare_could_not_read),
        cmocka_unit_test(refuses_a_commit_compare_would_refuse),
        cmocka_unit_test(each_refusal_is_named),
        cmocka_unit_test(compare_accepts_its_logs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
