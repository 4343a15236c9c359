/* Faults: a full disk under the log, stdout on a full device, stdout
 * closed. Each write that fails makes the command fail, naming the file
 * and the errno; nothing is lost silently, and no file takes fds 0-2.
 * A full disk is a file size limit here (RLIMIT_FSIZE: writes past it fail
 * with EFBIG), which needs no privileges. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "support/fault_support.h"
#include "support/tools_support.h"

/* Entries of a folder other than . and .. */
static int dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

static void a_log_on_a_full_disk_fails_the_run(void **state)
{
    (void)state;
    char *dir = fs_tempdir("fsize");
    char *log = fs_path(dir, "run.log");
    const char *args[] = {"run", "vector", "--mode", "numbers", "--rounds", "10", "-o", log, NULL};
    fs_spec spec = {.args = args, .fsize = 4096};
    char *err = NULL;
    assert_int_equal(fs_run(&spec, 60, NULL, &err), 1);
    char want[600];
    snprintf(want, sizeof want,
             "hbg run: cannot write %s: File too large (rank 0; records from then on are missing or cut short)\n",
             log);
    fs_expect(err, want);
    free(err);
    free(log);
    fs_rmdir(dir);
}

/* A records file that cannot be written fails the pass, and the rank's
 * line says which file and why, not only "I/O error". The log goes to a
 * pipe (stderr), which the size limit does not touch. */
static void a_records_write_failure_is_named(void **state)
{
    (void)state;
    char *dir = fs_tempdir("rsize");
    const char *args[] = {"run", "vector", "--mode", "timeline", "--out-dir", dir, NULL};
    fs_spec spec = {.args = args, .fsize = 512};
    char *out = NULL, *err = NULL;
    assert_int_equal(fs_run(&spec, 60, &out, &err), 1);
    fs_expect(out, "): FAILED: round 1 failed: I/O error; cannot write host_phase_records.jsonl: File too large\n");
    free(out);
    free(err);
    fs_rmdir(dir);
}

static void run_results_on_a_full_stdout_fail_the_run(void **state)
{
    (void)state;
    char *dir = fs_tempdir("full");
    char *log = fs_path(dir, "run.log");
    const char *args[] = {"run", "vector", "-o", log, NULL};
    fs_spec spec = {.args = args, .out = FS_OUT_FULL};
    char *err = NULL;
    assert_int_equal(fs_run(&spec, 60, NULL, &err), 1);
    assert_string_equal(err, "hbg run: cannot write standard output: No space left on device\n");
    free(err);
    free(log);
    fs_rmdir(dir);
}

static void phases_on_a_full_stdout_is_a_failed_write(void **state)
{
    (void)state;
    const char *args[] = {"phases", ts_fixture("ours-1rank-4pass.log"), NULL};
    fs_spec spec = {.args = args, .out = FS_OUT_FULL};
    char *err = NULL;
    assert_int_equal(fs_run(&spec, 60, NULL, &err), 2);
    assert_string_equal(err, "hbg phases: cannot write standard output: No space left on device\n");
    free(err);
}

/* A trace that cannot be written whole is not left behind under its name. */
static void a_trace_on_a_full_disk_is_not_left_half_written(void **state)
{
    (void)state;
    char *dir = fs_tempdir("tfull");
    char *out = fs_path(dir, "t.json");
    const char *args[] = {"timeline", ts_fixture("hbg-run-vector-timeline.log"), "-o", out, NULL};
    fs_spec spec = {.args = args, .fsize = 4096};
    char *err = NULL;
    assert_int_equal(fs_run(&spec, 60, NULL, &err), 2);
    char want[600];
    snprintf(want, sizeof want, "hbg timeline: cannot write %s: File too large\n", out);
    fs_expect(err, want);
    assert_int_equal(dir_entries(dir), 0);
    const char *sargs[] = {"timeline", ts_fixture("hbg-run-vector-timeline.log"), "-o", "-", NULL};
    fs_spec sspec = {.args = sargs, .out = FS_OUT_FULL};
    free(err);
    assert_int_equal(fs_run(&sspec, 60, NULL, &err), 2);
    fs_expect(err, "hbg timeline: cannot write standard output: No space left on device\n");
    free(err);
    /* standard output a file: the trace is held in a temporary until
     * complete, and it is that file, in TMPDIR, that cannot be written */
    char env[600];
    snprintf(env, sizeof env, "TMPDIR=%s", dir);
    fs_spec tspec = {.args = sargs, .fsize = 4096, .env = env};
    char *sout = NULL;
    assert_int_equal(fs_run(&tspec, 60, &sout, &err), 2);
    snprintf(want, sizeof want,
             "hbg timeline: cannot write the temporary file in %s that holds standard output until it is complete: "
             "File too large\n",
             dir);
    fs_expect(err, want);
    assert_string_equal(sout, "");
    assert_int_equal(dir_entries(dir), 0);
    free(sout);
    free(err);
    free(out);
    fs_rmdir(dir);
}

/* With fd 1 closed the log must not become fd 1: the table would land in it. */
static void a_closed_stdout_is_reported_and_the_log_stays_clean(void **state)
{
    (void)state;
    char *dir = fs_tempdir("closed");
    char *log = fs_path(dir, "run.log");
    const char *args[] = {"run", "vector", "-o", log, NULL};
    fs_spec spec = {.args = args, .out = FS_OUT_CLOSED};
    char *err = NULL;
    assert_int_equal(fs_run(&spec, 60, NULL, &err), 1);
    assert_string_equal(err, "hbg run: cannot write standard output: Bad file descriptor\n");
    char *text = ts_slurp(log, NULL);
    assert_non_null(text);
    assert_int_equal(strncmp(text, "[stamp] ", 8), 0);
    assert_null(strstr(text, "rank 0 (pid"));
    assert_null(strstr(text, "control_ns"));
    free(text);
    free(err);
    free(log);
    fs_rmdir(dir);
}

/* An output named for standard output (/dev/stdout; here a link to
 * /proc/self/fd/1 in a test folder) with stdout closed: one line, exit 2,
 * and nothing made in the link's folder. It went into the /dev/null that
 * holds fd 1 with exit 0, or, where the name led nowhere, into a
 * temporary made beside the link and renamed over it. */
static void an_output_named_for_a_closed_stdout_is_refused(void **state)
{
    (void)state;
    char *dir = fs_tempdir("devout"), *logs = fs_tempdir("devout-logs");
    char *link = fs_path(dir, "stdout"), *a = fs_path(logs, "a.log"), *b = fs_path(logs, "b.log");
    assert_int_equal(symlink("/proc/self/fd/1", link), 0);
    char *text = ts_slurp(ts_fixture("ours-1rank-4pass.log"), NULL);
    assert_non_null(text);
    fs_write(a, text);
    fs_write(b, text);
    const char *timeline[] = {"timeline", a, "-o", link, NULL};
    const char *fit[] = {"fit", a, "--plot", link, NULL};
    const char *compare[] = {"compare", "--base", a, "--measure", b, "--plot", link, NULL};
    const char *const *args[3] = {timeline, fit, compare};
    for (int c = 0; c < 3; c++) {
        fs_spec spec = {.args = args[c], .out = FS_OUT_CLOSED};
        char *err = NULL, want[4200];
        assert_int_equal(fs_run(&spec, 60, NULL, &err), 2);
        /* a plot beside the results refuses stdout by any name, as '-' */
        if (c)
            snprintf(want, sizeof want,
                     "hbg %s: --plot expects a file name, not '%s': the plot cannot share standard output with the "
                     "results\n",
                     args[c][0], link);
        else
            snprintf(want, sizeof want, "hbg %s: cannot write %s: standard output is closed\n", args[c][0], link);
        fs_expect(err, want);
        free(err);
        assert_int_equal(dir_entries(dir), 1); /* the link alone */
        struct stat lsb;
        assert_int_equal(lstat(link, &lsb), 0);
        assert_true(S_ISLNK(lsb.st_mode));
    }
    free(text);
    remove(link), remove(a), remove(b);
    free(link), free(a), free(b);
    fs_rmdir(dir);
    fs_rmdir(logs);
}

/* A plot named for standard output (/dev/stdout, /dev/fd/1) is refused as
 * '-' is: the SVG went onto stdout before or after the table, verdict or
 * JSON, neither readable, with exit 0. Another descriptor not open is
 * refused before any log is read. */
static void a_plot_named_for_stdout_is_refused(void **state)
{
    (void)state;
    char *logs = fs_tempdir("plotout-logs");
    char *a = fs_path(logs, "a.log"), *b = fs_path(logs, "b.log");
    char *text = ts_slurp(ts_fixture("ours-1rank-4pass.log"), NULL);
    assert_non_null(text);
    fs_write(a, text);
    fs_write(b, text);
    static const char *const names[] = {"/dev/stdout", "/dev/fd/1", "/dev/fd/57"};
    for (int n = 0; n < 3; n++) {
        const char *fit[] = {"fit", a, "--plot", names[n], NULL};
        const char *compare[] = {"compare", "--base", a, "--measure", b, "--plot", names[n], NULL};
        const char *const *args[2] = {fit, compare};
        for (int c = 0; c < 2; c++) {
            fs_spec spec = {.args = args[c]};
            char *out = NULL, *err = NULL, want[512];
            assert_int_equal(fs_run(&spec, 60, &out, &err), 2);
            if (n < 2)
                snprintf(want, sizeof want,
                         "hbg %s: --plot expects a file name, not '%s': the plot cannot share standard output with "
                         "the results\n",
                         args[c][0], names[n]);
            else
                snprintf(want, sizeof want, "hbg %s: cannot write %s: descriptor 57 is not open\n", args[c][0],
                         names[n]);
            fs_expect(err, want);
            assert_string_equal(out, "");
            free(out);
            free(err);
        }
    }
    free(text);
    remove(a), remove(b);
    free(a), free(b);
    fs_rmdir(logs);
}

/* Runs $HBG_CLI with args (args[0] the subcommand), stdout into file
 * out, stderr into file err, and: dup_out, fd 3 one open file with fd 1;
 * close_in, fd 0 closed. Returns the wait status. For the descriptor
 * set-ups fs_run does not make. */
static int run_fds(const char *const *args, const char *out, const char *err, bool dup_out, bool close_in)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (!pid) {
        int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644), fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fo < 0 || fe < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0 || (dup_out && dup2(fo, 3) < 0))
            _exit(126);
        if (fo > 3 || (!dup_out && fo > 2))
            close(fo);
        if (fe > 3 || (!dup_out && fe > 2))
            close(fe);
        if (close_in)
            close(0);
        const char *argv[16] = {getenv("HBG_CLI")};
        for (int i = 0; args[i] && i < 14; i++)
            argv[i + 1] = args[i];
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    return st;
}

/* A plot named for another descriptor on what stdout is on (3>&1) is
 * refused as /dev/stdout is: it passed the check by its number, and the
 * SVG went into the results (compare's JSON no longer parsed), exit 0.
 * The child is started here, its fds 1 and 3 one open file. */
static void a_plot_through_a_copy_of_stdout_is_refused(void **state)
{
    (void)state;
    char *logs = fs_tempdir("plotdup-logs");
    char *a = fs_path(logs, "a.log"), *b = fs_path(logs, "b.log");
    char *out = fs_path(logs, "out"), *err = fs_path(logs, "err");
    char *text = ts_slurp(ts_fixture("ours-1rank-4pass.log"), NULL);
    assert_non_null(text);
    fs_write(a, text);
    fs_write(b, text);
    const char *fit[] = {"fit", a, "--plot", "/dev/fd/3", NULL};
    const char *compare[] = {"compare", "--base", a, "--measure", b, "--format", "json", "--plot", "/dev/fd/3", NULL};
    const char *const *args[2] = {fit, compare};
    for (int c = 0; c < 2; c++) {
        int st = run_fds(args[c], out, err, true, false);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 2);
        char *o = ts_slurp(out, NULL), *e = ts_slurp(err, NULL), want[512];
        snprintf(want, sizeof want,
                 "hbg %s: --plot expects a file name, not '/dev/fd/3': the plot cannot share standard output with "
                 "the results\n",
                 args[c][0]);
        assert_string_equal(e, want);
        assert_string_equal(o, "");
        free(o), free(e);
    }
    free(text);
    remove(a), remove(b), remove(out), remove(err);
    free(a), free(b), free(out), free(err);
    fs_rmdir(logs);
}

/* A log named /dev/stdin with stdin closed: one line, exit 2, from every
 * reader of logs. The name opened again the write-only /dev/null that
 * holds fd 0 and read it as an empty log ("has no [stamp] line", "no
 * bind-phase lines"), where '-' said EBADF. */
static void a_log_named_for_a_closed_stdin_is_refused(void **state)
{
    (void)state;
    char *logs = fs_tempdir("stdin-logs");
    char *b = fs_path(logs, "b.log"), *out = fs_path(logs, "out"), *err = fs_path(logs, "err");
    char *text = ts_slurp(ts_fixture("ours-1rank-4pass.log"), NULL);
    assert_non_null(text);
    fs_write(b, text);
    char *trace = fs_path(logs, "t.json");
    const char *phases[] = {"phases", "/dev/stdin", NULL};
    const char *spans[] = {"spans", "/dev/stdin", NULL};
    const char *fit[] = {"fit", "/dev/stdin", NULL};
    const char *timeline[] = {"timeline", "/dev/stdin", "-o", trace, NULL};
    const char *compare[] = {"compare", "--base", "/dev/stdin", "--measure", b, NULL};
    const char *const *args[5] = {phases, spans, fit, timeline, compare};
    for (int c = 0; c < 5; c++) {
        int st = run_fds(args[c], out, err, false, true);
        char *o = ts_slurp(out, NULL), *e = ts_slurp(err, NULL), want[512];
        snprintf(want, sizeof want, "hbg %s: cannot read /dev/stdin: standard input is not open for reading\n",
                 args[c][0]);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 2 || strcmp(e, want))
            fail_msg("hbg %s: status %d, stderr: %s", args[c][0], st, e);
        assert_string_equal(o, "");
        free(o), free(e);
    }
    struct stat sb;
    assert_int_equal(stat(trace, &sb), -1); /* no trace written */
    free(text);
    remove(b), remove(out), remove(err);
    free(b), free(out), free(err), free(trace);
    fs_rmdir(logs);
}

/* hbg spans and hbg fit on a full or closed stdout: one line with the
 * failed write's own reason, exit 2 (once said "cannot write the output"
 * and then, from the final check, "Input/output error"). */
static void spans_and_fit_on_a_full_or_closed_stdout(void **state)
{
    (void)state;
    char lp[2048];
    snprintf(lp, sizeof lp, "%s", ts_fixture("ours-1rank-4pass.log"));
    const char *spans[] = {"spans", ts_fixture("hbg-run-vector-timeline.log"), NULL};
    const char *fit[] = {"fit", lp, NULL};
    const char *const *args[2] = {spans, fit};
    const char *cmd[2] = {"spans", "fit"};
    const int where[2] = {FS_OUT_FULL, FS_OUT_CLOSED};
    const char *why[2] = {"No space left on device", "Bad file descriptor"};
    for (int c = 0; c < 2; c++)
        for (int k = 0; k < 2; k++) {
            fs_spec spec = {.args = args[c], .out = where[k]};
            char *err = NULL, want[128];
            assert_int_equal(fs_run(&spec, 60, NULL, &err), 2);
            snprintf(want, sizeof want, "hbg %s: cannot write standard output: %s\n", cmd[c], why[k]);
            assert_string_equal(err, want);
            free(err);
        }
}

/* `hbg help CMD` is `hbg CMD --help`, to the end: on a full stdout both
 * say so in the command's name and exit with its status for a failed
 * write (hbg run's 1, the others' 2). */
static void help_on_a_full_stdout_is_the_commands_own(void **state)
{
    (void)state;
    const char *cmds[] = {"run", "phases", "ab"};
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        const char *help[] = {"help", cmds[i], NULL}, *opt[] = {cmds[i], "--help", NULL};
        const char *const *args[2] = {help, opt};
        for (int k = 0; k < 2; k++) {
            fs_spec spec = {.args = args[k], .out = FS_OUT_FULL};
            char *err = NULL, want[128];
            assert_int_equal(fs_run(&spec, 60, NULL, &err), strcmp(cmds[i], "run") ? 2 : 1);
            snprintf(want, sizeof want, "hbg %s: cannot write standard output: No space left on device\n", cmds[i]);
            assert_string_equal(err, want);
            free(err);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_log_on_a_full_disk_fails_the_run),
        cmocka_unit_test(a_records_write_failure_is_named),
        cmocka_unit_test(run_results_on_a_full_stdout_fail_the_run),
        cmocka_unit_test(phases_on_a_full_stdout_is_a_failed_write),
        cmocka_unit_test(a_trace_on_a_full_disk_is_not_left_half_written),
        cmocka_unit_test(a_closed_stdout_is_reported_and_the_log_stays_clean),
        cmocka_unit_test(spans_and_fit_on_a_full_or_closed_stdout),
        cmocka_unit_test(an_output_named_for_a_closed_stdout_is_refused),
        cmocka_unit_test(a_plot_named_for_stdout_is_refused),
        cmocka_unit_test(a_plot_through_a_copy_of_stdout_is_refused),
        cmocka_unit_test(a_log_named_for_a_closed_stdin_is_refused),
        cmocka_unit_test(help_on_a_full_stdout_is_the_commands_own),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
