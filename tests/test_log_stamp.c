/* hbg_log_stamp: the stamp line `hbg run` writes, from the library, and a
 * program of one's own whose logs hbg compare accepts through it. */
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
        cmocka_unit_test(compare_accepts_its_logs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
