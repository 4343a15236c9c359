/* Fault: too few file descriptors (RLIMIT_NOFILE, as `ulimit -n` sets it).
 * With six, `hbg run dsv4` has room for the log and rank 0's pipe, not for
 * rank 1's: rank 1 is named as not started with the reason, never as a
 * rank of pid 0, and the run fails. With the device run, rank 0's first
 * cross-rank wait ends at once with its own account (HBG_E_PEER_GONE):
 * it used to wait out --peer-timeout, the same bound after which the
 * parent kills it, and lost that race every time, named only as killed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "support/fault_support.h"

static void a_rank_without_a_pipe_is_named_not_started(void **state)
{
    (void)state;
    char *dir = fs_tempdir("nofile");
    char *log = fs_path(dir, "run.log");
    const char *args[] = {"run", "dsv4", "--mode", "numbers", "--peer-timeout", "1", "-o", log, NULL};
    fs_spec spec = {.args = args, .nofile = 6};
    char *out = NULL, *err = NULL;
    assert_int_equal(fs_run(&spec, 60, &out, &err), 1);
    fs_expect(err, "hbg run: rank 1 not started: pipe: Too many open files; waiting at most 1 s for the other "
                   "ranks\n");
    fs_expect(out, "\nrank 1: FAILED: not started: pipe: Too many open files\n");
    assert_null(strstr(out, "(pid 0)"));
    free(out);
    free(err);
    free(log);
    fs_rmdir(dir);
}

static void the_peer_of_a_rank_not_started_says_so(void **state)
{
    (void)state;
    char *dir = fs_tempdir("nofile");
    char *log = fs_path(dir, "run.log");
    const char *args[] = {"run", "dsv4", "--rounds", "3", "--peer-timeout", "2", "-o", log, NULL};
    fs_spec spec = {.args = args, .nofile = 6};
    char *out = NULL, *err = NULL;
    assert_int_equal(fs_run(&spec, 60, &out, &err), 1);
    fs_expect(out, "FAILED: round 1 failed: a peer rank has ended: its arrivals will not come; device run: task ");
    fs_expect(out, " (dsv4.wait) block 0/1 on AIV returned -27 (HBG_E_PEER_GONE)\n");
    fs_expect(out, "\nrank 1: FAILED: not started: pipe: Too many open files\n");
    assert_null(strstr(out, "killed"));
    assert_null(strstr(err, "killing it"));
    free(out);
    free(err);
    free(log);
    fs_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_rank_without_a_pipe_is_named_not_started),
        cmocka_unit_test(the_peer_of_a_rank_not_started_says_so),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
