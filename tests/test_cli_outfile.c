/* The commands' output files (src/cli/outfile.c): written to PATH.tmpPID
 * and renamed over PATH once complete, so that neither a failure nor an
 * interrupt leaves half a file under the name asked for, nor a temporary
 * beside it. A stop signal that ends the command mid-write removes the
 * temporary first; a signal the command handles itself, or was started
 * with ignored, is left alone. The signal cases run in a child, which the
 * signal ends. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/outfile.h"
#include "support/ab_support.h"
#include "support/fault_support.h"
#include "support/tools_support.h"

static void expect_file(const char *path, const char *text)
{
    char *got = ts_slurp(path, NULL);
    assert_non_null(got);
    assert_string_equal(got, text);
    free(got);
}

static void test_renamed_on_success_removed_on_failure(void **st)
{
    (void)st;
    char *dir = fs_tempdir("outfile");
    char *path = fs_path(dir, "out.svg");
    fs_write(path, "old");
    hbg_outfile o;
    assert_int_equal(hbg_outfile_open(&o, "hbg test", path), 0);
    fputs("half", o.f);
    assert_int_equal(ab_entries(dir), 2); /* the old file and the temporary */
    assert_int_equal(hbg_outfile_close(&o, false), -1);
    expect_file(path, "old");
    assert_int_equal(ab_entries(dir), 1);
    assert_int_equal(hbg_outfile_open(&o, "hbg test", path), 0);
    fputs("new", o.f);
    assert_int_equal(hbg_outfile_close(&o, true), 0);
    expect_file(path, "new");
    assert_int_equal(ab_entries(dir), 1);
    free(path);
    fs_rmdir(dir);
}

/* A symbolic link to a file is written through: the target gets the new
 * text and keeps its mode, the link stays a link (renamed onto, it was
 * replaced by a regular file of mode 0644 and the target kept the old
 * text). A file replaced keeps its mode too. */
static void test_a_link_is_written_through(void **st)
{
    (void)st;
    char *dir = fs_tempdir("outlink");
    char *sub = fs_path(dir, "real"), *target = fs_path(dir, "real/t.svg"), *link = fs_path(dir, "l.svg");
    assert_int_equal(mkdir(sub, 0755), 0);
    fs_write(target, "old");
    assert_int_equal(chmod(target, 0640), 0);
    assert_int_equal(symlink("real/t.svg", link), 0);
    hbg_outfile o;
    assert_int_equal(hbg_outfile_open(&o, "hbg test", link), 0);
    fputs("new", o.f);
    assert_int_equal(hbg_outfile_close(&o, true), 0);
    struct stat lsb, sb;
    assert_int_equal(lstat(link, &lsb), 0);
    assert_true(S_ISLNK(lsb.st_mode));
    expect_file(target, "new");
    assert_int_equal(stat(target, &sb), 0);
    assert_int_equal(sb.st_mode & 07777, 0640);
    assert_int_equal(ab_entries(sub), 1); /* no temporary left beside the target */
    assert_int_equal(ab_entries(dir), 2);
    /* a failed write leaves the target as it was */
    assert_int_equal(hbg_outfile_open(&o, "hbg test", link), 0);
    fputs("half", o.f);
    assert_int_equal(hbg_outfile_close(&o, false), -1);
    expect_file(target, "new");
    assert_int_equal(ab_entries(sub), 1);
    remove(link), remove(target), rmdir(sub);
    free(link), free(target), free(sub);
    fs_rmdir(dir);
}

/* A name of one of the command's own descriptors (/dev/stdout, a link to
 * /proc/self/fd/N) is written through that descriptor, in place: taken
 * for a file, its temporary was made beside the file the descriptor is
 * open on and renamed over it, or, with the descriptor closed, made in
 * the link's own folder (/dev) and renamed over the link. A closed one is
 * refused, and nothing is made. */
static void test_a_descriptor_name_is_written_in_place(void **st)
{
    (void)st;
    char *dir = fs_tempdir("outfd");
    char *file = fs_path(dir, "held.txt"), *link = fs_path(dir, "out");
    fs_write(file, "");
    int fd = open(file, O_WRONLY);
    assert_true(fd > 2);
    char name[64], dotted[64];
    snprintf(name, sizeof name, "/proc/self/fd/%d", fd);
    snprintf(dotted, sizeof dotted, "/dev/../proc/self/fd/../fd/%d", fd); /* its folder through links */
    assert_int_equal(symlink(name, link), 0);
    struct stat was, now, lsb;
    assert_int_equal(fstat(fd, &was), 0);
    const char *names[3] = {link, name, dotted}, *text[3] = {"one", "two", "three"};
    for (int k = 0; k < 3; k++) {
        hbg_outfile o;
        assert_int_equal(hbg_outfile_probe("hbg test", names[k]), 0);
        assert_int_equal(hbg_outfile_open(&o, "hbg test", names[k]), 0);
        fputs(text[k], o.f);
        assert_int_equal(hbg_outfile_close(&o, true), 0);
        assert_int_equal(stat(file, &now), 0);
        assert_true(now.st_ino == was.st_ino); /* the same file, not one renamed over it */
        assert_int_equal(ab_entries(dir), 2);
    }
    expect_file(file, "onetwothree"); /* at the descriptor's offset, as a program's own writes */
    {
        /* a failed output never reaches the descriptor, as it never
         * reaches standard output ("-"): it is held until complete */
        hbg_outfile o;
        assert_int_equal(hbg_outfile_open(&o, "hbg test", link), 0);
        fputs("half", o.f);
        fflush(o.f);
        expect_file(file, "onetwothree");
        assert_int_equal(hbg_outfile_close(&o, false), -1);
        expect_file(file, "onetwothree");
    }
    assert_int_equal(lstat(link, &lsb), 0);
    assert_true(S_ISLNK(lsb.st_mode));
    close(fd);
    hbg_outfile o;
    assert_int_equal(hbg_outfile_probe("hbg test", link), -1);
    assert_int_equal(hbg_outfile_open(&o, "hbg test", link), -1);
    assert_int_equal(ab_entries(dir), 2);
    assert_int_equal(lstat(link, &lsb), 0);
    assert_true(S_ISLNK(lsb.st_mode));
    remove(link), remove(file);
    free(link), free(file);
    fs_rmdir(dir);
}

/* In a child: sets sig's action (SIG_DFL, SIG_IGN or a handler), opens
 * path, writes "new", raises sig, then finishes the file. Exits 0 when
 * it lived through the signal and the action it set is in force again. */
static int caught;
static void on_sig(int sig)
{
    caught = sig;
}

static void child(const char *path, int sig, void (*action)(int))
{
    struct sigaction sa = {.sa_handler = action}; /* signal() may reset a handler once run */
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, NULL) != 0)
        _exit(9);
    hbg_outfile o;
    if (hbg_outfile_open(&o, "hbg test", path) != 0)
        _exit(10);
    fputs("new", o.f);
    fflush(o.f);
    raise(sig);
    if (hbg_outfile_close(&o, true) != 0)
        _exit(11);
    struct sigaction now;
    if (sigaction(sig, NULL, &now) != 0 || now.sa_handler != action)
        _exit(12);
    _exit(action == on_sig && caught != sig ? 13 : 0);
}

static int run_child(const char *path, int sig, void (*action)(int), int *signo)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        child(path, sig, action);
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    *signo = WIFSIGNALED(ws) ? WTERMSIG(ws) : 0;
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
}

static void test_stop_signal_removes_the_temporary(void **st)
{
    (void)st;
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        char *dir = fs_tempdir("outfile-sig");
        char *path = fs_path(dir, "trace.json");
        fs_write(path, "old");
        int signo;
        assert_int_equal(run_child(path, sigs[i], SIG_DFL, &signo), -1);
        assert_int_equal(signo, sigs[i]); /* ended by it, as without the file */
        expect_file(path, "old");
        assert_int_equal(ab_entries(dir), 1); /* no trace.json.tmpPID */
        free(path);
        fs_rmdir(dir);
    }
}

/* A command's own handler (hbg run's, hbg ab's while it builds) or a
 * signal ignored from the start (nohup) is not taken over: the write goes
 * on and the file is completed; the action is the same after. */
static void test_handled_or_ignored_signal_left_alone(void **st)
{
    (void)st;
    void (*actions[])(int) = {SIG_IGN, on_sig};
    for (size_t i = 0; i < 2; i++) {
        char *dir = fs_tempdir("outfile-keep");
        char *path = fs_path(dir, "fit.svg");
        int signo;
        assert_int_equal(run_child(path, SIGINT, actions[i], &signo), 0);
        assert_int_equal(signo, 0);
        expect_file(path, "new");
        assert_int_equal(ab_entries(dir), 1);
        free(path);
        fs_rmdir(dir);
    }
}

/* Once the file is finished the default action is the default again: a
 * later signal ends the command plainly, with no handler left pointing
 * at a freed name. */
static void test_default_given_back(void **st)
{
    (void)st;
    char *dir = fs_tempdir("outfile-back");
    char *path = fs_path(dir, "plot.svg");
    hbg_outfile o;
    assert_int_equal(hbg_outfile_open(&o, "hbg test", path), 0);
    struct sigaction now;
    assert_int_equal(sigaction(SIGTERM, NULL, &now), 0);
    assert_true(now.sa_handler != SIG_DFL); /* guarded while written */
    assert_int_equal(hbg_outfile_close(&o, true), 0);
    assert_int_equal(sigaction(SIGTERM, NULL, &now), 0);
    assert_true(now.sa_handler == SIG_DFL);
    free(path);
    fs_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_renamed_on_success_removed_on_failure),
        cmocka_unit_test(test_a_link_is_written_through),
        cmocka_unit_test(test_a_descriptor_name_is_written_in_place),
        cmocka_unit_test(test_stop_signal_removes_the_temporary),
        cmocka_unit_test(test_handled_or_ignored_signal_left_alone),
        cmocka_unit_test(test_default_given_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
