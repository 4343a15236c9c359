/* Whether a child is ending by a signal of its own (src/cli/procsig.c):
 * the parsers of /proc/PID/status and /proc/PID/stat on texts of their
 * kinds, then on live children that have the signal pending, blocked,
 * ignored, or none. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/procsig.h"

/* The lines of a /proc/PID/status around the pending masks (Linux 6). */
static const char STATUS_FMT[] = "Name:\thbg\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t4242\n"
                                 "SigQ:\t1/63704\nSigPnd:\t%s\nShdPnd:\t%s\nSigBlk:\t0000000000000002\n"
                                 "SigIgn:\t0000000000001000\nSigCgt:\t0000000000004000\n";

static bool pending_in(const char *sigpnd, const char *shdpnd, int sig)
{
    char text[512];
    snprintf(text, sizeof text, STATUS_FMT, sigpnd, shdpnd);
    return procsig_status_pending(text, sig);
}

/* A signal pending for the thread or the process; another signal's bit,
 * SigBlk's and SigIgn's, are not it. */
static void a_pending_signal_is_read_from_either_mask(void **state)
{
    (void)state;
    const char *none = "0000000000000000";
    assert_true(pending_in("0000000000000002", none, SIGINT));
    assert_true(pending_in(none, "0000000000000002", SIGINT));
    assert_true(pending_in(none, "0000000000004002", SIGTERM));
    assert_true(pending_in(none, "8000000000000000", 64));
    assert_false(pending_in(none, none, SIGINT)); /* SigBlk has it: blocked is not pending */
    assert_false(pending_in(none, "0000000000004000", SIGINT));
    assert_false(pending_in("0000000000000001", none, SIGINT)); /* SIGHUP */
    assert_false(pending_in(none, none, 13));                   /* SigIgn's bit */
    assert_false(pending_in("ffffffffffffffff", none, 0));
    assert_false(pending_in("ffffffffffffffff", none, 65));
    /* a key only at a line's start: "XSigPnd" is not it; none at all: false */
    assert_false(procsig_status_pending("XSigPnd:\t0000000000000002\n", SIGINT));
    assert_true(procsig_status_pending("SigPnd:\t0000000000000002", SIGINT));
    assert_false(procsig_status_pending("", SIGINT));
}

/* PF_EXITING (0x4) in the ninth field, after a name that may hold ") "
 * and spaces of its own. */
static void exiting_is_read_from_the_flags_after_the_name(void **state)
{
    (void)state;
    assert_true(procsig_stat_exiting("4242 (hbg) R 1 4242 4242 0 -1 4194564 120 0 0 0 5 1 0 0 20 0 1 0\n"));
    assert_false(procsig_stat_exiting("4242 (hbg) S 1 4242 4242 0 -1 4194560 120 0 0 0 5 1 0 0 20 0 1 0\n"));
    assert_true(procsig_stat_exiting("4242 (a) b (c) ) Z 1 4242 4242 0 -1 4 0 0\n"));
    assert_false(procsig_stat_exiting("4242 (a) 4 4 4 4 4 4) S 1 4242 4242 0 -1 0 4\n"));
    assert_false(procsig_stat_exiting("4242 (hbg) R 1 4242 4242 0 -1"));
    assert_false(procsig_stat_exiting("4242 hbg R 1 4242 4242 0 -1 4"));
    assert_false(procsig_stat_exiting(""));
}

static void nap_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* A child that blocks SIGINT (block) or ignores it (ignore), then
 * sleeps: told by a pipe once its mask is set. With ngroups, it is in
 * that many groups first (root only): a 0 read back means it could not. */
static pid_t sleeper_in_groups(bool block, bool ignore, size_t ngroups)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t parent = getpid();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* A failed assertion leaves it unreaped: it goes with the test,
         * not on for ever holding the test's output (ctest waits on it). */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(1);
        static gid_t groups[2000];
        for (size_t i = 0; i < ngroups && i < sizeof groups / sizeof groups[0]; i++)
            groups[i] = (gid_t)(1876400000u + i); /* ten digits, as a directory service's */
        if (ngroups && setgroups(ngroups, groups) != 0)
            _exit(write(p[1], "0", 1) == 1 ? 3 : 2);
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGINT);
        if (block)
            sigprocmask(SIG_BLOCK, &set, NULL);
        if (ignore)
            signal(SIGINT, SIG_IGN);
        close(p[0]);
        if (write(p[1], "x", 1) != 1)
            _exit(2);
        for (;;)
            pause();
    }
    close(p[1]);
    char c;
    assert_int_equal(read(p[0], &c, 1), 1);
    close(p[0]);
    if (c == '0') {
        waitpid(pid, NULL, 0);
        return -1;
    }
    return pid;
}

static pid_t sleeper(bool block, bool ignore)
{
    return sleeper_in_groups(block, ignore, 0);
}

static void reap(pid_t pid)
{
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* Live: a child that blocks SIGINT has it pending once sent, and is
 * ending by it; one that ignores it never has it (the kernel drops an
 * ignored signal), nor one that was sent nothing; a reaped child cannot
 * be read, and is not ending. */
static void a_live_child_is_ending_only_with_the_signal_pending(void **state)
{
    (void)state;
    pid_t blocked = sleeper(true, false);
    assert_false(procsig_ending(blocked, SIGINT));
    assert_int_equal(kill(blocked, SIGINT), 0);
    assert_true(procsig_ending(blocked, SIGINT));
    assert_false(procsig_ending(blocked, SIGTERM));
    reap(blocked);
    assert_false(procsig_ending(blocked, SIGINT));

    pid_t ignoring = sleeper(false, true);
    assert_int_equal(kill(ignoring, SIGINT), 0);
    nap_ms(20);
    assert_false(procsig_ending(ignoring, SIGINT));
    reap(ignoring);
}

/* A child in 1000 groups: its status's Groups line alone is some 11 KB,
 * SigPnd and ShdPnd after it. The pending signal is found there; it was
 * not, past a read of the first 4 KiB, and such a rank was killed as one
 * still running. Root only (setgroups). */
static void a_pending_signal_is_found_past_a_long_groups_line(void **state)
{
    (void)state;
    pid_t blocked = sleeper_in_groups(true, false, 1000);
    if (blocked < 0)
        skip(); /* not root: no process of ours can be in 1000 groups */
    assert_false(procsig_ending(blocked, SIGINT));
    assert_int_equal(kill(blocked, SIGINT), 0);
    assert_true(procsig_ending(blocked, SIGINT));
    assert_false(procsig_ending(blocked, SIGTERM));
    reap(blocked);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_pending_signal_is_read_from_either_mask),
        cmocka_unit_test(exiting_is_read_from_the_flags_after_the_name),
        cmocka_unit_test(a_live_child_is_ending_only_with_the_signal_pending),
        cmocka_unit_test(a_pending_signal_is_found_past_a_long_groups_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
