/* `hbg ab` end to end on throwaway repositories: a tiny project whose
 * measure.sh writes bind logs stands in for a workload, so the builds are
 * `true` and every run takes milliseconds. What is checked: the log names
 * and stamps, the interleaving, the refusal of existing logs and --resume,
 * WORKTREE snapshots, build and run failures, and usage errors. The
 * default cmake build of hbg itself is test_cli_ab_self's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <signal.h>
#include <fcntl.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/ab_support.h"
#include "support/fault_support.h"
#include "support/tools_support.h"

static char *root, *repo;
static char c1[8], c2[8];
static bool compare_real;

/* The template every measuring test runs: the order file records which
 * arm ran when, and the first measure.sh's output is thrown away (a run
 * template may run anything before the measurement). */
#define RUN_TMPL "echo {rev} >> %s; sh {worktree}/measure.sh > /dev/null; sh {worktree}/measure.sh"

static int group_setup(void **state)
{
    (void)state;
    /* the stand-in hbg's stamps are those of an environment without switches */
    const char *sw[] = {"HBG_BIND_BREAKDOWN", "HBG_HOST_PHASE_RECORDS", "HBG_SKIP_DEVICE_RUN", "HBG_LOG_LEVEL",
                        "SIMPLER_HBG_BIND_BREAKDOWN_ENABLE", "SIMPLER_HBG_HOST_PHASE_RECORDS_ENABLE",
                        "SIMPLER_SKIP_DEVICE_RUN", "SIMPLER_LOG_LEVEL"};
    for (size_t i = 0; i < sizeof sw / sizeof *sw; i++)
        unsetenv(sw[i]);
    root = ab_sandbox("cli");
    repo = ab_two_commit_repo(root, "proj", c1, c2);
    /* hbg compare lands separately; until it does, everything up to the
     * logs is checked and the comparison's exit status is its placeholder's. */
    char path[4096];
    snprintf(path, sizeof path, "%s/src/cli/cmd_compare.c", getenv("HBG_SOURCE_DIR"));
    char *src = ab_read(path);
    if (src)
        src[strcspn(src, "\n")] = 0;
    compare_real = src && !strstr(src, "placeholder");
    free(src);
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    free(repo);
    ab_sandbox_free(root);
    return 0;
}

static char *in_root(const char *name)
{
    char *p = NULL;
    assert_true(asprintf(&p, "%s/%s", root, name) > 0);
    return p;
}

static char *log_name(const char *out, const char *rev, int rep)
{
    char *p = NULL;
    assert_true(asprintf(&p, "%s/bind_qwen_numbers_%s_r%d.log", out, rev, rep) > 0);
    return p;
}

static char *first_line(const char *path)
{
    char *s = ab_read(path);
    assert_non_null(s);
    s[strcspn(s, "\n")] = 0;
    return s;
}

static bool one_line(const char *err)
{
    return err && !strncmp(err, "hbg ab: ", 8) && strchr(err, '\n') == err + strlen(err) - 1;
}

/* hbg ab C1 C2 with the test's templates, plus up to four more arguments. */
static int ab(const char *out, const char *order, const char *x1, const char *x2, const char *x3, const char *x4,
              char **sout, char **serr)
{
    char tmpl[4096];
    snprintf(tmpl, sizeof tmpl, RUN_TMPL, order);
    const char *args[] = {"ab", c1, c2, "--build", "true", "--run", tmpl, "--reps", "5", "--outputs", out,
                          x1, x2, x3, x4, NULL};
    return ab_hbg(repo, args, sout, serr);
}

static int expected_status(void)
{
    /* host_orch 10 % longer clears --threshold 5; the placeholder says 2 */
    return compare_real ? 1 : 2;
}

static void assert_logs(const char *out, const char *order)
{
    assert_int_equal(ab_entries(out), 10);
    char want[4096];
    for (int i = 1; i <= 5; i++)
        for (int a = 0; a < 2; a++) {
            const char *c = a ? c2 : c1;
            char *p = log_name(out, c, i);
            char *l = first_line(p);
            snprintf(want, sizeof want, "[stamp] %s env " RUN_TMPL, c, order);
            assert_string_equal(l, want);
            free(l);
            free(p);
        }
}

/* Runs the printed `hbg compare` line and checks it gives what hbg ab gave. */
static void assert_rerun_matches(const char *err, const char *out_ab, int rc_ab)
{
    const char *k = strstr(err, "to compare these logs again: hbg compare ");
    assert_non_null(k);
    char *line = strndup(k + strlen("to compare these logs again: hbg "), strcspn(k, "\n"));
    line[strcspn(line, "\n")] = 0;
    const char *args[64];
    int n = 0;
    for (char *t = strtok(line, " "); t && n < 63; t = strtok(NULL, " "))
        args[n++] = t;
    args[n] = NULL;
    char *o = NULL;
    assert_int_equal(ab_hbg(repo, args, &o, NULL), rc_ab);
    assert_string_equal(o, out_ab);
    free(o);
    free(line);
}

static void test_measures_interleaved_and_compares(void **state)
{
    (void)state;
    char *out = in_root("out-main"), *order = in_root("order-main");
    char *so, *se;
    int rc = ab(out, order, "--threshold", "5", NULL, NULL, &so, &se);
    assert_int_equal(rc, expected_status());
    assert_logs(out, order);
    /* abab: A then B in every repetition */
    char want[256] = "";
    for (int i = 0; i < 5; i++)
        snprintf(want + strlen(want), sizeof want - strlen(want), "%s\n%s\n", c1, c2);
    char *ord = ab_read(order);
    assert_string_equal(ord, want);
    /* one progress line per run when stderr is not a terminal */
    char line[256];
    snprintf(line, sizeof line, "hbg ab: rep 2/5 B %s: bind_qwen_numbers_%s_r2.log (", c2, c2);
    assert_non_null(strstr(se, line));
    /* five repetitions are enough for the sign test: no note */
    assert_null(strstr(se, "hbg ab: note:"));
    snprintf(line, sizeof line, "hbg compare --base %s/bind_qwen_numbers_%s_r1.log", out, c1);
    assert_non_null(strstr(se, line));
    if (compare_real) {
        char *verdict = strndup(so, strcspn(so, "\n"));
        assert_true(strncmp(verdict, "verdict", 7) == 0);
        assert_non_null(strstr(verdict, "slower"));
        free(verdict);
        assert_rerun_matches(se, so, rc);
    }
    free(ord);
    free(so);
    free(se);
    free(out);
    free(order);
}

static void mtimes(const char *out, struct timespec *t)
{
    for (int i = 0; i < 10; i++) {
        char *p = log_name(out, i % 2 ? c2 : c1, i / 2 + 1);
        struct stat sb;
        assert_int_equal(stat(p, &sb), 0);
        t[i] = sb.st_mtim;
        free(p);
    }
}

/* A second identical run is refused before it runs anything; --resume
 * then reuses the logs whose stamps match and reruns only what is gone. */
static void test_existing_logs_refused_then_resumed(void **state)
{
    (void)state;
    char *out = in_root("out-resume"), *order = in_root("order-resume");
    char *so, *se, *so2;
    int rc = ab(out, order, "--threshold", "5", NULL, NULL, &so, &se);
    assert_int_equal(rc, expected_status());
    struct timespec before[10], after[10];
    mtimes(out, before);
    free(se);

    assert_int_equal(ab(out, order, "--threshold", "5", NULL, NULL, &so2, &se), 2);
    assert_true(one_line(se));
    assert_non_null(strstr(se, "exists"));
    assert_non_null(strstr(se, "--resume"));
    assert_non_null(strstr(se, "nothing was run"));
    assert_string_equal(so2, "");
    assert_int_equal(ab_lines(order), 10);
    assert_int_equal(ab_entries(out), 10);
    mtimes(out, after);
    assert_memory_equal(before, after, sizeof before);
    free(so2);
    free(se);

    assert_int_equal(ab(out, order, "--threshold", "5", "--resume", NULL, &so2, &se), rc);
    assert_int_equal(ab_lines(order), 10);
    char line[256];
    snprintf(line, sizeof line, "hbg ab: rep 5/5 B %s: bind_qwen_numbers_%s_r5.log (reused)", c2, c2);
    assert_non_null(strstr(se, line));
    assert_string_equal(so2, so);
    free(so2);
    free(se);

    /* a log another run wrote is named, and nothing runs */
    char *r3 = log_name(out, c2, 3);
    char *body = ab_read(r3);
    char *rest = strchr(body, '\n');
    char *forged = NULL;
    assert_true(asprintf(&forged, "[stamp] %s env sh other.sh%s", c2, rest) > 0);
    ab_write(r3, forged);
    assert_int_equal(ab(out, order, "--threshold", "5", "--resume", NULL, NULL, &se), 2);
    assert_true(one_line(se));
    assert_non_null(strstr(se, r3));
    assert_non_null(strstr(se, "another run"));
    assert_int_equal(ab_lines(order), 10);
    free(se);

    /* a missing log is run again, and only it */
    assert_int_equal(unlink(r3), 0);
    assert_int_equal(ab(out, order, "--threshold", "5", "--resume", NULL, &so2, &se), rc);
    assert_int_equal(ab_lines(order), 11);
    char *ord = ab_read(order);
    snprintf(line, sizeof line, "\n%s\n", c2);
    assert_true(strlen(ord) > strlen(line) && !strcmp(ord + strlen(ord) - strlen(line), line));
    snprintf(line, sizeof line, "hbg ab: rep 3/5 B %s: bind_qwen_numbers_%s_r3.log (", c2, c2);
    char *hit = strstr(se, line);
    assert_non_null(hit);
    assert_true(strncmp(hit + strlen(line), "reused", 6) != 0);
    assert_string_equal(so2, so);
    free(so2);
    free(se);

    /* a run that did not finish (hbg ab interrupted) left LOG.part, never
     * LOG: without --resume it is refused; with it, that repetition runs
     * again, and its log replaces the partial one */
    assert_int_equal(unlink(r3), 0);
    char *r3part = NULL;
    assert_true(asprintf(&r3part, "%s.part", r3) > 0);
    ab_write(r3part, body);
    assert_int_equal(ab(out, order, "--threshold", "5", NULL, NULL, &so2, &se), 2);
    assert_true(one_line(se));
    assert_non_null(strstr(se, "nothing was run"));
    free(so2);
    free(se);
    /* the partial log alone (the others moved away): named as such */
    char *keep = NULL;
    assert_true(asprintf(&keep, "%s-kept", out) > 0);
    assert_int_equal(rename(out, keep), 0);
    assert_int_equal(mkdir(out, 0755), 0);
    char *lone = NULL;
    assert_true(asprintf(&lone, "%s/%s", out, strrchr(r3part, '/') + 1) > 0);
    ab_write(lone, body);
    assert_int_equal(ab(out, order, "--threshold", "5", NULL, NULL, &so2, &se), 2);
    assert_true(one_line(se));
    assert_non_null(strstr(se, lone));
    assert_non_null(strstr(se, "(1 of this run's 10 partial logs, left by runs that did not finish, does)"));
    free(so2);
    free(se);
    assert_int_equal(unlink(lone), 0);
    assert_int_equal(rmdir(out), 0);
    assert_int_equal(rename(keep, out), 0);
    free(lone);
    free(keep);
    assert_int_equal(ab(out, order, "--threshold", "5", "--resume", NULL, &so2, &se), rc);
    assert_int_equal(ab_lines(order), 12);
    assert_int_equal(access(r3part, F_OK), -1);
    assert_int_equal(access(r3, F_OK), 0);
    assert_string_equal(so2, so);
    free(so2);
    free(se);

    /* a log saved by an editor, a byte order mark before its stamp, is
     * kept as hbg compare reads it (it was refused as another run's) */
    char *saved = ab_read(r3), *marked = NULL;
    assert_true(asprintf(&marked, "\xef\xbb\xbf%s", saved) > 0);
    ab_write(r3, marked);
    assert_int_equal(ab(out, order, "--threshold", "5", "--resume", NULL, &so2, &se), rc);
    snprintf(line, sizeof line, "hbg ab: rep 3/5 B %s: bind_qwen_numbers_%s_r3.log (reused)", c2, c2);
    if (!strstr(se, line))
        fail_msg("stderr '%s'", se);
    assert_int_equal(ab_lines(order), 12);
    assert_string_equal(so2, so);
    free(marked);
    free(saved);
    free(r3part);
    free(ord);
    free(forged);
    free(body);
    free(r3);
    free(so);
    free(so2);
    free(se);
    free(out);
    free(order);
}

static void test_abba_order_and_names(void **state)
{
    (void)state;
    char *out = in_root("out-abba"), *order = in_root("order-abba");
    char tmpl[4096];
    snprintf(tmpl, sizeof tmpl, RUN_TMPL, order);
    const char *args[] = {"ab",    "HEAD~1", "HEAD",   "--build", "true",   "--run",    tmpl,      "--reps", "3",
                          "--order", "abba", "--case", "vector",  "--mode", "timeline", "--outputs", out,     NULL};
    char *se;
    int rc = ab_hbg(repo, args, NULL, &se);
    assert_true(rc == 0 || rc == 1 || rc == 2);
    char want[256];
    snprintf(want, sizeof want, "%s\n%s\n%s\n%s\n%s\n%s\n", c1, c2, c2, c1, c1, c2);
    char *ord = ab_read(order);
    assert_string_equal(ord, want);
    /* --case and --mode name the logs even though --run measures */
    assert_int_equal(ab_entries(out), 6);
    char path[4096];
    snprintf(path, sizeof path, "%s/bind_vector_timeline_%s_r3.log", out, c2);
    assert_int_equal(access(path, F_OK), 0);
    free(ord);
    free(se);
    free(out);
    free(order);
}

static char *porcelain(const char *r)
{
    char *s = NULL;
    const char *av[] = {"git", "-C", r, "status", "--porcelain", NULL};
    assert_int_equal(ab_exec(NULL, av, &s, NULL), 0);
    return s;
}

/* WORKTREE: the uncommitted tree, snapshot on top of HEAD, stamped dirty;
 * the working tree and its index are left as they were. */
static void test_worktree_snapshot(void **state)
{
    (void)state;
    char w1[8], w2[8], path[4096];
    char *r = ab_two_commit_repo(root, "wt", w1, w2);
    snprintf(path, sizeof path, "%s/.gitignore", r);
    ab_write(path, "ignored.txt\n");
    ab_git(r, (const char *const[]){"add", ".gitignore", NULL});
    ab_git(r, (const char *const[]){"commit", "-q", "-m", "ignore", NULL});
    char *head = ab_git_line(r, (const char *const[]){"rev-parse", "--short=7", "HEAD", NULL});
    snprintf(path, sizeof path, "%s/measure.sh", r);
    char *script = ab_read(path);
    char *edited = NULL;
    assert_true(asprintf(&edited, "%secho worktree-edit-marker\n", script) > 0);
    ab_write(path, edited);
    snprintf(path, sizeof path, "%s/extra.txt", r);
    ab_write(path, "untracked-marker\n");
    snprintf(path, sizeof path, "%s/ignored.txt", r);
    ab_write(path, "ignored\n");
    char *before = porcelain(r);

    char *out = in_root("out-wt");
    const char *tmpl = "sh {worktree}/measure.sh; cat {worktree}/extra.txt 2>/dev/null; "
                       "test -e {worktree}/ignored.txt && echo ignored-present; "
                       "cd {worktree} && git status --porcelain --untracked-files=no | grep -q . && "
                       "echo snapshot-dirty; true";
    const char *args[] = {"ab", w1, "WORKTREE", "--build", "true", "--run", tmpl, "--reps", "2", "--outputs", out,
                          NULL};
    char *se;
    int rc = ab_hbg(r, args, NULL, &se);
    assert_true(rc == 0 || rc == 1 || rc == 2);
    assert_int_equal(ab_entries(out), 5); /* 4 logs, and the tree file of WORKTREE's */
    char dirty[32];
    snprintf(dirty, sizeof dirty, "%s-dirty", head);
    char *la = log_name(out, w1, 2), *lb = log_name(out, dirty, 2);
    char *a_log = ab_read(la), *b_log = ab_read(lb);
    assert_non_null(a_log);
    assert_non_null(b_log);
    char want[256];
    snprintf(want, sizeof want, "[stamp] %s env sh {worktree}/measure.sh; cat", dirty);
    assert_true(!strncmp(b_log, want, strlen(want)));
    /* what the runs printed, past the stamp (which quotes the template) */
    const char *a = strchr(a_log, '\n'), *b = strchr(b_log, '\n');
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(strstr(b, "worktree-edit-marker"));
    assert_non_null(strstr(b, "untracked-marker"));
    /* cmake/version.cmake would stamp the snapshot -dirty too */
    assert_non_null(strstr(b, "snapshot-dirty"));
    assert_null(strstr(b, "ignored-present"));
    assert_null(strstr(a, "worktree-edit-marker"));
    assert_null(strstr(a, "snapshot-dirty"));
    /* two repetitions: said before the runs, when there is time to stop */
    const char *note = strstr(se, "hbg ab: note: 2 repetitions are too few for the sign test at alpha = 0.05; a "
                                  "verdict will also need a t-test of their deltas, which misses small effects. "
                                  "--reps 5 or more for the sign test\n");
    assert_non_null(note);
    assert_true(note < strstr(se, "hbg ab: rep 1/2"));
    char *after = porcelain(r);
    assert_string_equal(before, after);
    free(se);

    /* --resume keeps WORKTREE's logs only for the uncommitted state they
     * came from: their stamp says -dirty alone, the file beside them
     * names the snapshot */
    const char *resume[] = {"ab", w1, "WORKTREE", "--build", "true", "--run", tmpl, "--reps", "2", "--outputs", out,
                            "--resume", NULL};
    ab_hbg(r, resume, NULL, &se);
    if (strstr(se, "--resume:"))
        fail_msg("stderr '%s'", se);
    free(se);
    char *other = NULL;
    assert_true(asprintf(&other, "%secho another-state\n", edited) > 0);
    snprintf(path, sizeof path, "%s/measure.sh", r);
    ab_write(path, other);
    assert_int_equal(ab_hbg(r, resume, NULL, &se), 2);
    assert_true(one_line(se));
    assert_non_null(strstr(se, "hbg ab: --resume: the logs of REV_B "));
    assert_non_null(strstr(se, " (WORKTREE) were made from another uncommitted state ("));
    free(se);
    free(other);
    ab_write(path, edited);
    char tree[4096];
    snprintf(tree, sizeof tree, "%s/bind_qwen_numbers_%s.tree", out, dirty);
    assert_int_equal(unlink(tree), 0);
    assert_int_equal(ab_hbg(r, resume, NULL, &se), 2);
    assert_non_null(strstr(se, " (WORKTREE) have no record of the uncommitted state they were made from ("));
    free(se);

    /* the same uncommitted state is the same snapshot: its build is reused */
    char *out2 = in_root("out-wt2");
    args[10] = out2;
    ab_hbg(r, args, NULL, &se);
    snprintf(want, sizeof want, "hbg ab: REV_B %s (WORKTREE): reusing the build in ", dirty);
    assert_non_null(strstr(se, want));
    free(se);

    /* hbg ab's own outputs inside the tree are no change of it: an
     * --outputs folder an earlier run filled and a --plot there leave the
     * snapshot as it was, and its build is reused */
    char in_out[4096], in_plot[4096];
    snprintf(in_out, sizeof in_out, "%s/ab-out", r);
    snprintf(in_plot, sizeof in_plot, "%s/ab.svg", r);
    assert_int_equal(mkdir(in_out, 0755), 0);
    char left[4096 + 16];
    snprintf(left, sizeof left, "%s/left.txt", in_out);
    ab_write(left, "an earlier run's\n");
    ab_write(in_plot, "<svg/>\n");
    const char *inside[] = {"ab",    w1, "WORKTREE", "--build", "true",   "--run", tmpl,
                            "--reps", "2", "--outputs", in_out, "--plot", "ab.svg", NULL};
    ab_hbg(r, inside, NULL, &se);
    if (!strstr(se, want))
        fail_msg("stderr '%s'", se);
    free(se);
    char *made = NULL;
    assert_true(asprintf(&made, "rm -rf '%s' '%s'", in_out, in_plot) > 0);
    assert_int_equal(system(made), 0);
    free(made);

    /* a clean tree is HEAD itself, and HEAD against HEAD is refused */
    snprintf(path, sizeof path, "%s/measure.sh", r);
    ab_write(path, script);
    snprintf(path, sizeof path, "%s/extra.txt", r);
    unlink(path);
    const char *same[] = {"ab", "HEAD", "WORKTREE", "--run", "true", "--outputs", out2, NULL};
    assert_int_equal(ab_hbg(r, same, NULL, &se), 2);
    assert_non_null(strstr(se, "no uncommitted changes"));
    /* the advice is not "or WORKTREE": that is what was named */
    assert_non_null(strstr(se, "same commit"));
    assert_non_null(strstr(se, "_rN.log); WORKTREE has no uncommitted changes: change the tree, or name two "
                               "different commits\n"));
    assert_null(strstr(se, "or WORKTREE for"));
    free(se);
    free(out2);
    free(after);
    free(before);
    free(a_log);
    free(b_log);
    free(la);
    free(lb);
    free(out);
    free(edited);
    free(script);
    free(head);
    free(r);
}

/* A failed build names the revision and shows its log's tail; the next
 * run builds it again, and a finished build is reused. */
static void test_build_failure_and_reuse(void **state)
{
    (void)state;
    char *out = in_root("out-buildfail"), *order = in_root("order-buildfail"), *count = in_root("build-count");
    char tmpl[4096], build[4096];
    snprintf(tmpl, sizeof tmpl, RUN_TMPL, order);
    const char *args[] = {"ab", "HEAD~1", "HEAD", "--build", "echo building-{rev}; exit 3", "--run", tmpl,
                          "--outputs", out, NULL};
    char *se;
    assert_int_equal(ab_hbg(repo, args, NULL, &se), 2);
    char want[256];
    snprintf(want, sizeof want, "hbg ab: building REV_A 'HEAD~1' (%s) failed: --build exit status 3", c1);
    assert_non_null(strstr(se, want));
    assert_non_null(strstr(se, ".build.log; its last 30 lines:"));
    snprintf(want, sizeof want, "\n  building-%s\n", c1);
    assert_non_null(strstr(se, want));
    assert_int_equal(ab_entries(out), 0);
    assert_int_equal(access(order, F_OK), -1);
    free(se);

    snprintf(build, sizeof build, "echo built >> %s", count);
    args[4] = build;
    assert_int_equal(ab_hbg(repo, args, NULL, &se), expected_status());
    assert_int_equal(ab_lines(count), 2);
    free(se);
    char *out2 = in_root("out-buildfail2");
    args[8] = out2;
    ab_hbg(repo, args, NULL, &se);
    assert_int_equal(ab_lines(count), 2);
    snprintf(want, sizeof want, "hbg ab: REV_A %s (HEAD~1): reusing the build in ", c1);
    assert_non_null(strstr(se, want));
    free(se);
    free(out2);
    free(count);
    free(out);
    free(order);
}

/* A build or --run command that stops (as one reading the terminal does,
 * with SIGTTIN: its process group stands apart from the terminal) is
 * killed within seconds and said, where hbg ab once waited for ever. */
static void test_stopped_command_is_killed(void **state)
{
    (void)state;
    char *out = in_root("out-stopped");
    const char *args[] = {"ab", "HEAD~1", "HEAD", "--build", "sleep 0.2; kill -TTIN $$", "--outputs", out, NULL};
    char *se;
    assert_int_equal(ab_hbg(repo, args, NULL, &se), 2);
    char want[512];
    snprintf(want, sizeof want, "hbg ab: building REV_A 'HEAD~1' (%s) failed: --build stopped, waiting on the "
                                "terminal (a password prompt?), and was killed: hbg ab runs commands apart from the "
                                "terminal, so set up credentials beforehand",
             c1);
    assert_non_null(strstr(se, want));
    free(se);

    const char *run[] = {"ab",    "HEAD~1", "HEAD", "--build", "true", "--run", "kill -TTOU $$", "--reps",
                         "2",     "--outputs", out,  NULL};
    assert_int_equal(ab_hbg(repo, run, NULL, &se), 2);
    assert_non_null(strstr(se, "failed: --run stopped, waiting on the terminal (a password prompt?), and was killed"));
    free(se);

    /* Stopped by a person (SIGSTOP) and continued 3 s later, well past
     * the first look a second in (the slack is for a loaded machine):
     * waited for, and said; the build then fails on its own. */
    free(out);
    out = in_root("out-paused");
    const char *paused[] = {"ab", "HEAD~1", "HEAD", "--build", "(sleep 3; kill -CONT $$) & kill -STOP $$; exit 3",
                            "--outputs", out, NULL};
    assert_int_equal(ab_hbg(repo, paused, NULL, &se), 2);
    if (!strstr(se, ") was stopped by SIGSTOP; waiting until it is continued (kill -CONT "))
        fail_msg("%s", se);
    snprintf(want, sizeof want, "hbg ab: building REV_A 'HEAD~1' (%s) failed: --build exit status 3", c1);
    if (!strstr(se, want))
        fail_msg("%s", se);
    free(se);
    free(out);
}

/* A failed run stops everything, names the repetition, keeps its log. */
static void test_run_failure(void **state)
{
    (void)state;
    char *out = in_root("out-runfail");
    const char *args[] = {"ab", "HEAD~1", "HEAD", "--build", "true", "--run", "echo partial-output; exit 4",
                          "--outputs", out, NULL};
    char *so, *se;
    assert_int_equal(ab_hbg(repo, args, &so, &se), 2);
    char want[256];
    snprintf(want, sizeof want, "hbg ab: rep 1/5 A %s (REV_A 'HEAD~1') failed: --run exit status 4", c1);
    assert_non_null(strstr(se, want));
    assert_non_null(strstr(se, "the partial log stays at"));
    assert_non_null(strstr(se, "\n  partial-output\n"));
    assert_int_equal(ab_entries(out), 1);
    assert_string_equal(so, "");
    free(so);
    free(se);
    free(out);
}

/* A run past --run-timeout is stopped and fails as a failed run does:
 * one that ends on SIGTERM at once, and one that ignores it, killed
 * AB_GRACE_S seconds later. Without the limit each would hold hbg ab
 * for the length of its sleep. */
static void test_run_timeout(void **state)
{
    (void)state;
    char *out = in_root("out-timeout");
    const char *quick[] = {"ab", "HEAD~1", "HEAD", "--build", "true", "--run", "sleep 60", "--run-timeout", "0.5",
                           "--outputs", out, NULL};
    char *so, *se, want[512];
    assert_int_equal(ab_hbg(repo, quick, &so, &se), 2);
    snprintf(want, sizeof want, "hbg ab: rep 1/5 A %s (REV_A 'HEAD~1') failed: --run ran past --run-timeout 0.5 s "
                                "and was stopped; the partial log stays at", c1);
    assert_non_null(strstr(se, want));
    assert_string_equal(so, "");
    free(so);
    free(se);

    const char *stubborn[] = {"ab", "HEAD~1", "HEAD", "--build", "true", "--run", "trap '' TERM; sleep 60",
                              "--run-timeout", "0.2", "--reps", "1", "--outputs", out, "--resume", NULL};
    assert_int_equal(ab_hbg(repo, stubborn, &so, &se), 2);
    snprintf(want, sizeof want, "hbg ab: rep 1/1 A %s (REV_A 'HEAD~1') failed: --run ran past --run-timeout 0.2 s "
                                "and was stopped", c1);
    assert_non_null(strstr(se, want));
    free(so);
    free(se);

    /* the shell ends on SIGTERM, its child ignores it: the child is
     * killed with the group after the grace, not left running */
    char *pidf = in_root("timeout-child.pid"), cmd[1024];
    snprintf(cmd, sizeof cmd, "sh -c 'trap \"\" TERM; echo $$ > %s; exec sleep 60' & wait", pidf);
    const char *orphan[] = {"ab", "HEAD~1", "HEAD", "--build", "true", "--run", cmd, "--run-timeout", "0.5",
                            "--reps", "1", "--outputs", out, "--resume", NULL};
    assert_int_equal(ab_hbg(repo, orphan, &so, &se), 2);
    assert_non_null(strstr(se, "ran past --run-timeout 0.5 s and was stopped"));
    char *cp = ab_read(pidf);
    assert_non_null(cp);
    long child = strtol(cp, NULL, 10);
    assert_true(child > 1);
    /* gone, or a zombie its new parent has yet to reap (fs_gone) */
    for (int i = 0; i < 100 && !fs_gone((pid_t)child); i++)
        nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
    assert_true(fs_gone((pid_t)child));
    free(cp);
    free(pidf);
    free(so);
    free(se);
    free(out);
}

/* The default run, hbg run of the tree's build/hbg with its output in
 * LOG.out, without building hbg: a --build puts this stand-in there. Its
 * `run` writes the log named by -o as hbg run does (the stamp hbg ab
 * expects, then measure.sh's passes) and prints a line to LOG.out;
 * --bogus it refuses as hbg run refuses an unknown option, before any log
 * is made. --stubborn makes the file $FAKE_READY, ignoring SIGTERM, and
 * sleeps; --cut writes 3 of measure.sh's 6 passes, and exits 0. With
 * FAKE_VERSION=stubborn, `version` writes its pid to $FAKE_READY,
 * ignoring SIGTERM, and sleeps; with FAKE_VERSION=ttin it stops as one
 * reading the terminal does; with FAKE_VERSION=hang it sleeps; with
 * FAKE_VERSION=background it leaves a sleep in the background holding its
 * output open, its pid appended to $FAKE_READY, and answers. With
 * FAKE_TERM_PARENT set, `run` first sends SIGTERM to its parent, hbg ab. */
#define FAKE_HBG                                                                                             \
    "#!/bin/sh\n"                                                                                            \
    "top=$(cd \"$(dirname \"$0\")/..\" && pwd)\n"                                                            \
    "rev=$(git -C \"$top\" rev-parse --short=7 HEAD)\n"                                                      \
    "if [ \"$1\" = version ]; then\n"                                                                        \
    "  case \"${FAKE_VERSION:-}\" in\n"                                                                      \
    "    stubborn) trap '' TERM; echo $$ > \"$FAKE_READY\"; exec sleep 40;;\n"                               \
    "    ttin) kill -TTIN $$;;\n"                                                                            \
    "    hang) exec sleep 60;;\n"                                                                            \
    "    background) sleep 600 & echo $! >> \"$FAKE_READY\";;\n"                                            \
    "  esac\n"                                                                                               \
    "  echo \"hbg $rev\"; exit 0\n"                                                                          \
    "fi\n"                                                                                                   \
    "if [ -n \"${FAKE_TERM_PARENT:-}\" ]; then kill -TERM $PPID; fi\n"                                       \
    "cs=$2 log= mode= rounds= prev= nophases= cut=\n"                                                        \
    "if [ \"$rev\" = \"${FAKE_NOPHASES_REV:-}\" ]; then nophases=1; fi\n"                                    \
    "for a in \"$@\"; do\n"                                                                                  \
    "  case \"$prev\" in -o) log=$a;; --mode) mode=$a;; --rounds) rounds=$a;; esac\n"                        \
    "  if [ \"$a\" = --bogus ]; then\n"                                                                      \
    "    echo \"hbg run: unknown or incomplete option '--bogus' (see \\`hbg run --help\\`)\" >&2; exit 2\n"  \
    "  fi\n"                                                                                                 \
    "  if [ \"$a\" = --help ]; then echo \"usage: hbg run CASE\"; exit 0; fi\n"                              \
    "  if [ \"$a\" = --no-phases ]; then nophases=1; fi\n"                                                   \
    "  if [ \"$a\" = --hang ]; then exec sleep 60; fi\n"                                                   \
    "  if [ \"$a\" = --stubborn ]; then trap '' TERM; : > \"$FAKE_READY\"; exec sleep 40; fi\n"              \
    "  if [ \"$a\" = --cut ]; then cut=33; fi\n"                                                             \
    "  prev=$a\n"                                                                                            \
    "done\n"                                                                                                 \
    "echo \"fake hbg run of $rev\"\n"                                                                        \
    "{ echo \"[stamp] $rev env HBG_BIND_BREAKDOWN=1 HBG_HOST_PHASE_RECORDS=0 HBG_SKIP_DEVICE_RUN=1 "         \
    "HBG_LOG_LEVEL=timing hbg run $cs --mode $mode --rounds $rounds\"; [ -n \"$nophases\" ] || "             \
    "sh \"$top/measure.sh\" | head -n \"${cut:-66}\"; } > \"$log\"\n"

/* hbg ab C1 C2, 2 repetitions, with the default run on the stand-in; the
 * --build also appends each revision it builds to `built` (a new file is
 * a new builder, so each test builds afresh). extra ends with NULL. */
/* The cache folder of the tests' repository "proj" under
 * ROOT/cache/hbg/ab (malloc'd); other tests make other repositories. */
static char *the_cache(void)
{
    char *base = in_root("cache/hbg/ab"), *found = NULL;
    DIR *d = opendir(base);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, "proj-", 5)) {
            assert_null(found);
            assert_true(asprintf(&found, "%s/%s", base, e->d_name) > 0);
        }
    closedir(d);
    assert_non_null(found);
    free(base);
    return found;
}

static int count_trials(const char *cache)
{
    DIR *d = opendir(cache);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += !strncmp(e->d_name, "trial-", 6);
    closedir(d);
    return n;
}

/* The --build template that puts the stand-in in place. */
static void fake_build(char *build, size_t cap, const char *built)
{
    static char *fake;
    if (!fake) {
        fake = in_root("fake-hbg");
        ab_write(fake, FAKE_HBG);
    }
    snprintf(build, cap, "mkdir -p build && cp '%s' build/hbg && chmod +x build/hbg && echo {rev} >> '%s'", fake,
             built);
}

static int ab_fake(const char *out, const char *built, const char *const *extra, char **so, char **se)
{
    char build[8192];
    fake_build(build, sizeof build, built);
    const char *args[32] = {"ab", c1, c2, "--build", build, "--reps", "2", "--outputs", out};
    size_t n = 9;
    for (; extra && *extra && n < 31; extra++)
        args[n++] = *extra;
    args[n] = NULL;
    return ab_hbg(repo, args, so, se);
}

static char *dot_out(const char *log)
{
    char *p = NULL;
    assert_true(asprintf(&p, "%s.out", log) > 0);
    return p;
}

static bool starts_with(const char *path, const char *text)
{
    char *s = ab_read(path);
    bool yes = s && !strncmp(s, text, strlen(text));
    free(s);
    return yes;
}

/* LOG.out, where hbg run's output goes, is refused like the log when it
 * exists; --resume replaces only the LOG.out of a repetition it runs
 * again, never that of a log it keeps. */
static void test_existing_out_refused(void **state)
{
    (void)state;
    char *out = in_root("out-dotout"), *built = in_root("built-dotout");
    assert_int_equal(mkdir(out, 0755), 0);
    char *a1 = log_name(out, c1, 1), *a1o = dot_out(a1), *b2 = log_name(out, c2, 2), *b2o = dot_out(b2);
    ab_write(a1o, "PRECIOUS\n");
    char *so, *se;
    assert_int_equal(ab_fake(out, built, NULL, &so, &se), 2);
    assert_true(one_line(se));
    char want[8192];
    snprintf(want, sizeof want,
             "hbg ab: %s exists (1 of this run's 4 LOG.out files, where hbg run's output goes, does)", a1o);
    assert_true(!strncmp(se, want, strlen(want)));
    assert_non_null(strstr(se, "nothing was run"));
    assert_string_equal(so, "");
    assert_true(starts_with(a1o, "PRECIOUS\n"));
    assert_int_equal(access(built, F_OK), -1);
    assert_int_equal(ab_entries(out), 1);
    free(so);
    free(se);

    /* with --resume a missing log is run again, and its LOG.out with it */
    const char *resume[] = {"--resume", NULL};
    int rc = ab_fake(out, built, resume, &so, &se);
    assert_true(rc == expected_status() || rc == 0);
    assert_int_equal(ab_entries(out), 8);
    snprintf(want, sizeof want, "fake hbg run of %s\n", c1);
    assert_true(starts_with(a1o, want));
    free(so);
    free(se);

    ab_write(a1o, "KEPT\n");
    assert_int_equal(unlink(b2), 0);
    ab_write(b2o, "OLD\n");
    assert_int_equal(ab_fake(out, built, resume, &so, &se), rc);
    snprintf(want, sizeof want, "hbg ab: rep 1/2 A %s: bind_qwen_numbers_%s_r1.log (reused)", c1, c1);
    assert_non_null(strstr(se, want));
    assert_true(starts_with(a1o, "KEPT\n"));
    snprintf(want, sizeof want, "fake hbg run of %s\n", c2);
    assert_true(starts_with(b2o, want));
    assert_int_equal(access(b2, F_OK), 0);
    free(so);
    free(se);

    /* the stamp expected of arguments after --, in any spelling hbg run
     * takes, is the one hbg run writes: switches resolved, words in full
     * (the stand-in's logs have other ones, so they are refused, and the
     * message quotes the expected stamp) */
    const char *spelled[] = {"--resume", "--", "--log-l=DEBUG", "--skip-dev", "--ta=050", NULL};
    assert_int_equal(ab_fake(out, built, spelled, &so, &se), 2);
    if (!strstr(se, "HBG_SKIP_DEVICE_RUN=1 HBG_LOG_LEVEL=debug hbg run qwen --mode numbers --rounds 6 --log-level "
                    "debug --skip-device-run --tasks 50'"))
        fail_msg("stderr '%s'", se);
    free(so);
    free(se);
    free(a1);
    free(a1o);
    free(b2);
    free(b2o);
    free(built);
    free(out);
}

/* SIGTERM to hbg ab while a run is in flight: the run (in a process group
 * of its own, here a shell and its sleep) is stopped with it, hbg ab says
 * so and ends by that signal, and the run's LOG.part stays for --resume;
 * nothing is left running. */
static void test_stop_signal_stops_the_run(void **state)
{
    (void)state;
    char *out = in_root("out-sig"), *pidf = in_root("sig-pid");
    char tmpl[4096];
    snprintf(tmpl, sizeof tmpl, "echo $$ > '%s'; sleep 30 & echo $! >> '%s'; wait", pidf, pidf);
    const char *cli = getenv("HBG_CLI");
    assert_non_null(cli);
    pid_t ab = fork();
    assert_true(ab >= 0);
    if (ab == 0) {
        if (chdir(repo) != 0)
            _exit(127);
        int nul = open("/dev/null", O_WRONLY);
        dup2(nul, STDOUT_FILENO);
        dup2(nul, STDERR_FILENO);
        execl(cli, cli, "ab", "HEAD~1", "HEAD", "--build", "true", "--run", tmpl, "--outputs", out, (char *)NULL);
        _exit(127);
    }
    long pids[2] = {0, 0};
    struct timespec nap = {0, 20 * 1000 * 1000};
    for (int i = 0; i < 1500 && !pids[1]; i++) {
        FILE *f = fopen(pidf, "r");
        if (f) {
            if (fscanf(f, "%ld %ld", &pids[0], &pids[1]) != 2)
                pids[1] = 0;
            fclose(f);
        }
        if (!pids[1])
            nanosleep(&nap, NULL);
    }
    assert_true(pids[1] > 0);
    assert_int_equal(kill(ab, SIGTERM), 0);
    int ws;
    assert_int_equal(waitpid(ab, &ws, 0), ab);
    assert_true(WIFSIGNALED(ws));
    assert_int_equal(WTERMSIG(ws), SIGTERM);
    for (int i = 0; i < 250 && !(fs_gone((pid_t)pids[0]) && fs_gone((pid_t)pids[1])); i++)
        nanosleep(&nap, NULL);
    bool left = !fs_gone((pid_t)pids[1]);
    if (left)
        kill((pid_t)pids[1], SIGKILL);
    assert_false(left);
    assert_true(fs_gone((pid_t)pids[0]));
    char *part = log_name(out, c1, 1), *withpart = NULL;
    assert_true(asprintf(&withpart, "%s.part", part) > 0);
    assert_int_equal(access(withpart, F_OK), 0);
    assert_int_equal(access(part, F_OK), -1);
    free(withpart);
    free(part);
    free(pidf);
    free(out);
}

static pid_t ab_background(const char *const *args, const char *errpath);

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Reads the pid written to path (at most 30 s for it to be there). */
static long pid_in(const char *path)
{
    long pid = 0;
    struct timespec nap = {0, 20 * 1000 * 1000};
    for (int i = 0; i < 1500 && pid <= 0; i++) {
        char *s = ab_read(path);
        pid = s ? strtol(s, NULL, 10) : 0;
        free(s);
        if (pid <= 0)
            nanosleep(&nap, NULL);
    }
    assert_true(pid > 1);
    return pid;
}

/* hbg ab (pid) ends, within limit_s seconds, by signal sig, said as
 * docs/ab.md says, its stderr in errp. */
static void ends_by(pid_t pid, int sig, double limit_s, const char *errp)
{
    int ws = 0;
    pid_t got = 0;
    struct timespec nap = {0, 20 * 1000 * 1000};
    for (int i = 0; i < (int)(limit_s * 50) && (got = waitpid(pid, &ws, WNOHANG)) == 0; i++)
        nanosleep(&nap, NULL);
    if (got == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &ws, 0);
        fail_msg("hbg ab still running %.1f s after the signal", limit_s);
    }
    char *se = ab_read(errp), want[128];
    if (!WIFSIGNALED(ws) || WTERMSIG(ws) != sig)
        fail_msg("hbg ab did not end by signal %d: %s", sig, se);
    snprintf(want, sizeof want,
             "\nhbg ab: stopped by signal %d (%s); the finished logs are kept: rerun with "
             "--resume to go on\n",
             sig, strsignal(sig));
    if (!se || !strstr(se, want))
        fail_msg("stderr '%s'", se);
    free(se);
}

/* Whether pid is gone (or a zombie its new parent has yet to reap),
 * given a second for it; a process left is killed. */
static bool gone_soon(pid_t pid)
{
    for (int i = 0; i < 100 && !fs_gone(pid); i++)
        nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
    bool gone = fs_gone(pid);
    if (!gone)
        kill(pid, SIGKILL);
    return gone;
}

/* A stop signal to hbg ab waits for the run's whole process group, not
 * its leader: the shell ends on SIGTERM, its child ignores it and is
 * killed AB_GRACE_S seconds on, before hbg ab ends; a second signal
 * kills it at once, though the shell has ended and been reaped. Before,
 * hbg ab ended with the shell and left the child running. */
static void test_stop_signal_waits_for_the_group(void **state)
{
    (void)state;
    char *out = in_root("out-siggroup"), *errp = in_root("err-siggroup"), *leadf = in_root("siggroup-lead");
    char *pidf = in_root("siggroup-child"), tmpl[4096];
    snprintf(tmpl, sizeof tmpl, "echo $$ > '%s'; sh -c 'trap \"\" TERM; echo $$ > \"%s\"; exec sleep 60' & wait", leadf,
             pidf);
    const char *args[] = {"ab",     "HEAD~1", "HEAD",      "--build", "true", "--run", tmpl,
                          "--reps", "1",      "--outputs", out,       NULL,   NULL};
    struct timespec nap = {0, 20 * 1000 * 1000};

    pid_t ab = ab_background(args, errp);
    long child = pid_in(pidf);
    assert_int_equal(kill(ab, SIGTERM), 0);
    ends_by(ab, SIGTERM, 20, errp);
    assert_true(gone_soon((pid_t)child));

    /* the second signal, once the shell is reaped: SIGKILL to the rest */
    unlink(leadf);
    unlink(pidf);
    args[11] = "--resume";
    ab = ab_background(args, errp);
    long lead = pid_in(leadf);
    child = pid_in(pidf);
    double t0 = mono_now();
    assert_int_equal(kill(ab, SIGTERM), 0);
    for (int i = 0; i < 250 && !fs_gone((pid_t)lead); i++)
        nanosleep(&nap, NULL);
    assert_true(fs_gone((pid_t)lead));
    nanosleep(&(struct timespec){.tv_nsec = 200000000}, NULL); /* reaped, as hbg ab polls each 20 ms */
    assert_int_equal(kill(ab, SIGINT), 0);
    ends_by(ab, SIGTERM, 20, errp);
    assert_true(gone_soon((pid_t)child));
    if (mono_now() - t0 >= 4)
        fail_msg("the second signal did not end the group: hbg ab ended %.1f s after the first", mono_now() - t0);
    free(pidf);
    free(leadf);
    free(errp);
    free(out);
}

/* An --outputs folder whose name starts with '-' (relative, in the
 * repository): the logs reach compare as paths, not options. */
static void test_outputs_named_like_an_option(void **state)
{
    (void)state;
    char *out = in_root("out-dash"), *built = in_root("built-dash");
    const char *dash[] = {"--outputs=--o6", NULL};
    char *so, *se;
    int rc = ab_fake(out, built, dash, &so, &se);
    assert_true(rc == expected_status() || rc == 0 || rc == 1);
    assert_null(strstr(se, "expects at least one LOG"));
    assert_non_null(strstr(se, "to compare these logs again: hbg compare --base ./--o6/bind_qwen_numbers_"));
    free(so);
    free(se);
    char *made = NULL;
    assert_true(asprintf(&made, "rm -rf '%s/--o6'", repo) > 0);
    assert_int_equal(system(made), 0);
    free(made);
    free(built);
    free(out);
}

/* --plot is written by hbg compare after every run: a name that cannot be
 * written, or that it would refuse, is refused before anything is built.
 * An existing file is replaced, as hbg compare's --plot and every
 * command's output file are. */
static void test_plot_checked_first(void **state)
{
    (void)state;
    char *out = in_root("out-plot"), *built = in_root("built-plot"), *plot = in_root("no-such-dir/ab.svg");
    char *b2 = log_name(out, c2, 2), *a1part = NULL, *tree = NULL, *lock = NULL;
    assert_true(asprintf(&a1part, "%s/bind_qwen_numbers_%s_r1.log.part", out, c1) > 0);
    assert_true(asprintf(&tree, "%s/../out-plot/bind_qwen_numbers_%s-dirty.tree", out, c2) > 0);
    assert_true(asprintf(&lock, "%s/.hbg-ab.lock", out) > 0);
    /* hbg compare refuses '-' and a plot over one of its logs, after the
     * runs; hbg ab's other files there it would replace */
    const char *nodir[] = {"--plot", plot, NULL}, *folder[] = {"--plot", root, NULL}, *dash[] = {"--plot", "-", NULL},
               *over[] = {"--plot", b2, NULL}, *part[] = {"--plot", a1part, NULL}, *rec[] = {"--plot", tree, NULL},
               *locked[] = {"--plot", lock, NULL}, *std[] = {"--plot", "/dev/stdout", NULL};
    const char *const *bad[] = {nodir, folder, dash, over, part, rec, locked, std};
    char *so, *se;
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        assert_int_equal(ab_fake(out, built, bad[k], &so, &se), 2);
        if (!one_line(se) || !strstr(se, bad[k][1]) || !strstr(se, "--plot") || *so)
            fail_msg("--plot %s: stderr '%s'", bad[k][1], se);
        assert_int_equal(access(built, F_OK), -1);
        assert_true(ab_entries(out) <= 0);
        free(so);
        free(se);
    }

    /* another descriptor, not open: hbg compare would refuse it after the runs */
    const char *fd57[] = {"--plot", "/dev/fd/57", NULL};
    assert_int_equal(ab_fake(out, built, fd57, &so, &se), 2);
    assert_string_equal(se, "hbg ab: cannot write /dev/fd/57: descriptor 57 is not open\n");
    assert_string_equal(so, "");
    assert_int_equal(access(built, F_OK), -1);
    free(so);
    free(se);

    char *old = in_root("old.svg");
    ab_write(old, "OLD\n");
    const char *replace[] = {"--plot", old, NULL};
    int rc = ab_fake(out, built, replace, &so, &se);
    assert_int_equal(ab_lines(built), 2);
    if (compare_real) {
        assert_int_equal(rc, expected_status());
        assert_false(starts_with(old, "OLD\n"));
        assert_true(starts_with(old, "<"));
    }
    free(so);
    free(se);
    free(old);
    free(lock);
    free(tree);
    free(a1part);
    free(b2);
    free(plot);
    free(built);
    free(out);
}

/* A trial stopped ab_fake's hbg ab: REV_A alone was built (`built`),
 * stderr (se) ends with the line `want`, nothing is in `out`, stdout (so)
 * is empty. Frees so and se. */
static void trial_stopped(const char *out, const char *built, char *so, char *se, const char *want)
{
    char a[64];
    snprintf(a, sizeof a, "%s\n", c1);
    char *b = ab_read(built);
    assert_string_equal(b, a);
    free(b);
    const char *last = se + strlen(se) - 1; /* after REV_A's build */
    while (last > se && last[-1] != '\n')
        last--;
    if (strcmp(last, want))
        fail_msg("stderr '%s'", se);
    assert_true(ab_entries(out) <= 0);
    assert_string_equal(so, "");
    free(so);
    free(se);
}

/* The arguments after -- are tried on the first built hbg before the
 * other tree is built; with both built, the first run's failure says
 * where hbg run said why (it made no log). */
static void test_args_tried_before_second_build(void **state)
{
    (void)state;
    char *out = in_root("out-args"), *out2 = in_root("out-args2"), *built = in_root("built-args");
    const char *bogus[] = {"--", "--bogus", NULL};
    char *so, *se;
    assert_int_equal(ab_fake(out, built, bogus, &so, &se), 2);
    char want[8192];
    snprintf(want, sizeof want, "hbg ab: REV_A %s (%s): a 1-round trial of hbg run failed, so REV_B was not built and "
             "nothing was measured: exit status 2: 'hbg run: unknown or incomplete option '--bogus' (see `hbg run "
             "--help`)'\n", c1, c1);
    trial_stopped(out, built, so, se, want);

    /* a trial that hangs is stopped by --run-timeout as a run is */
    char *out_h = in_root("out-args-hang"), *built_h = in_root("built-args-hang");
    const char *hang[] = {"--run-timeout", "0.5", "--", "--hang", NULL};
    assert_int_equal(ab_fake(out_h, built_h, hang, &so, &se), 2);
    snprintf(want, sizeof want, "hbg ab: REV_A %s (%s): a 1-round trial of hbg run failed, so REV_B was not built and "
             "nothing was measured: ran past --run-timeout 0.5 s and was stopped\n", c1, c1);
    trial_stopped(out_h, built_h, so, se, want);
    free(out_h);
    free(built_h);

    /* A trial's scratch folder whose hbg ab is gone (interrupted during
     * its trial) is removed by the next trial; one whose hbg ab lives
     * (here: this test's pid) is left alone. So is one whose pid is not
     * alive here but whose lock is held (a trial on another machine or
     * in another container sharing the cache: here a child holds it),
     * and one with no lock file, young (a trial between making its
     * folder and locking it). Old and without a lock file (an interrupted
     * trial of an hbg ab from before the lock), or with a lock no one
     * holds: removed. */
    char *cache = the_cache(), *dead_dir, *live_dir, *held_dir, *young_dir, *free_dir;
    pid_t dead = fork();
    assert_true(dead >= 0);
    if (!dead)
        _exit(0);
    assert_int_equal(waitpid(dead, NULL, 0), dead);
    assert_true(asprintf(&dead_dir, "%s/trial-%ld-Ab12Cd", cache, (long)dead) > 0);
    assert_true(asprintf(&live_dir, "%s/trial-%ld-Ef34Gh", cache, (long)getpid()) > 0);
    assert_true(asprintf(&held_dir, "%s/trial-%ld-Held00", cache, (long)dead) > 0);
    assert_true(asprintf(&young_dir, "%s/trial-%ld-Young0", cache, (long)dead) > 0);
    assert_true(asprintf(&free_dir, "%s/trial-%ld-Free00", cache, (long)dead) > 0);
    assert_int_equal(mkdir(dead_dir, 0755), 0);
    assert_int_equal(mkdir(live_dir, 0755), 0);
    assert_int_equal(mkdir(held_dir, 0755), 0);
    assert_int_equal(mkdir(young_dir, 0755), 0);
    assert_int_equal(mkdir(free_dir, 0755), 0);
    char *inside = NULL, *held_lock = NULL, *free_lock = NULL;
    assert_true(asprintf(&inside, "%s/trial.log", dead_dir) > 0);
    ab_write(inside, "left by an interrupted trial\n");
    const struct timespec old_times[2] = {{time(NULL) - 600, 0}, {time(NULL) - 600, 0}};
    assert_int_equal(utimensat(AT_FDCWD, dead_dir, old_times, 0), 0);
    assert_true(asprintf(&held_lock, "%s/lock", held_dir) > 0);
    assert_true(asprintf(&free_lock, "%s/lock", free_dir) > 0);
    ab_write(held_lock, "");
    ab_write(free_lock, "");
    int ready[2], hold[2];
    assert_int_equal(pipe(ready), 0);
    assert_int_equal(pipe(hold), 0);
    pid_t holder = fork();
    assert_true(holder >= 0);
    if (!holder) {
        int fd = open(held_lock, O_RDWR);
        struct flock l = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
        char c = fd >= 0 && fcntl(fd, F_SETLK, &l) == 0 ? 'y' : 'n';
        close(hold[1]);
        if (write(ready[1], &c, 1) != 1)
            _exit(1);
        while (read(hold[0], &c, 1) > 0) /* until the test closes its end */
            ;
        _exit(0);
    }
    close(ready[1]);
    close(hold[0]);
    char locked = 0;
    assert_int_equal(read(ready[0], &locked, 1), 1);
    assert_int_equal(locked, 'y');
    /* names trial_run does not make are not its to remove: a leading
     * zero or sign, a suffix not of six letters or digits; nor is a file
     * or a link */
    char odd[6][64];
    snprintf(odd[0], sizeof odd[0], "trial-0%ld-Ab12Cd", (long)dead);
    snprintf(odd[1], sizeof odd[1], "trial-+%ld-Ab12Cd", (long)dead);
    snprintf(odd[2], sizeof odd[2], "trial-%ld-Ab 2Cd", (long)dead);
    snprintf(odd[3], sizeof odd[3], "trial-%ld-Ab12Cde", (long)dead);
    snprintf(odd[4], sizeof odd[4], "trial-%ld-File00", (long)dead);
    snprintf(odd[5], sizeof odd[5], "trial-%ld-Link00", (long)dead);
    char *oddp[6];
    for (int k = 0; k < 6; k++) {
        assert_true(asprintf(&oddp[k], "%s/%s", cache, odd[k]) > 0);
        if (k < 4)
            assert_int_equal(mkdir(oddp[k], 0755), 0);
    }
    ab_write(oddp[4], "a file\n");
    assert_int_equal(symlink(live_dir, oddp[5]), 0);
    char *out3 = in_root("out-args3");
    assert_int_equal(ab_fake(out3, built, bogus, NULL, NULL), 2); /* another trial */
    close(hold[1]);
    close(ready[0]);
    assert_int_equal(waitpid(holder, NULL, 0), holder);
    assert_int_equal(access(dead_dir, F_OK), -1);
    assert_int_equal(access(free_dir, F_OK), -1);
    assert_int_equal(access(live_dir, F_OK), 0);
    assert_int_equal(access(young_dir, F_OK), 0);
    assert_int_equal(access(held_lock, F_OK), 0);
    assert_int_equal(unlink(held_lock), 0);
    assert_int_equal(rmdir(held_dir), 0);
    assert_int_equal(rmdir(young_dir), 0);
    for (int k = 0; k < 6; k++) {
        struct stat sb;
        if (lstat(oddp[k], &sb) != 0)
            fail_msg("%s was removed", odd[k]);
        assert_int_equal(k < 4 ? rmdir(oddp[k]) : unlink(oddp[k]), 0);
        free(oddp[k]);
    }
    assert_int_equal(rmdir(live_dir), 0);
    assert_int_equal(count_trials(cache), 0); /* its own removed too */
    free(inside), free(out3), free(dead_dir), free(live_dir), free(cache);
    free(held_dir), free(young_dir), free(free_dir), free(held_lock), free(free_lock);

    /* both built (the arguments were fine) */
    char *out1 = in_root("out-args1");
    ab_fake(out1, built, NULL, NULL, NULL);
    assert_int_equal(ab_lines(built), 2);
    free(out1);

    assert_int_equal(ab_fake(out2, built, bogus, &so, &se), 2);
    assert_int_equal(ab_lines(built), 2);
    char *a1 = log_name(out2, c1, 1), *a1o = dot_out(a1);
    snprintf(want, sizeof want, "hbg ab: rep 1/2 A %s (REV_A '%s') failed: hbg run exit status 2: 'hbg run: unknown or "
             "incomplete option '--bogus' (see `hbg run --help`)'; it made no log; its output is in %s, which ends:\n",
             c1, c1, a1o);
    if (!strstr(se, want) || strstr(se, "partial log"))
        fail_msg("stderr '%s'", se);
    assert_int_equal(access(a1, F_OK), -1);
    assert_int_equal(ab_entries(out2), 1);
    free(a1);
    free(a1o);
    free(so);
    free(se);
    free(built);
    free(out2);
    free(out);
}

/* A trial that exits 0 counts only when it leaves a log with bind-phase
 * lines: hbg run's --help (no log) and a log with the lines turned off
 * stop hbg ab before the second build, as a refused option does. */
static void test_trial_needs_phase_lines(void **state)
{
    (void)state;
    static const struct {
        const char *arg, *what;
    } c[] = {
        {"--help", "exited 0 but made no log (an argument after -- that writes none, such as --help?)"},
        {"--no-phases", "made a log with no bind-phase lines (\"bind phase=\"; an argument after -- that turns them "
                        "off, such as --log-level above timing?)"},
    };
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
        char name[64];
        snprintf(name, sizeof name, "out-trial%zu", k);
        char *out = in_root(name);
        snprintf(name, sizeof name, "built-trial%zu", k);
        char *built = in_root(name);
        const char *extra[] = {"--", c[k].arg, NULL};
        char *so, *se;
        assert_int_equal(ab_fake(out, built, extra, &so, &se), 2);
        char want[8192];
        snprintf(want, sizeof want,
                 "hbg ab: REV_A %s (%s): a 1-round trial of hbg run %s, so REV_B was not built and nothing was "
                 "measured\n",
                 c1, c1, c[k].what);
        trial_stopped(out, built, so, se, want);
        free(built);
        free(out);
    }
    /* Both built, there is no trial: the first run's log is read so */
    char *built = in_root("built-trial-both"), *out = in_root("out-trial-both"), *out2 = in_root("out-trial-both2");
    ab_fake(out, built, NULL, NULL, NULL);
    assert_int_equal(ab_lines(built), 2);
    const char *extra[] = {"--", "--no-phases", NULL};
    char *so, *se;
    assert_int_equal(ab_fake(out2, built, extra, &so, &se), 2);
    assert_int_equal(ab_lines(built), 2);
    char *a1 = log_name(out2, c1, 1), *b1 = log_name(out2, c2, 1), want[8192], part[4096];
    snprintf(part, sizeof part, "%s.part", a1);
    snprintf(want, sizeof want,
             "hbg ab: rep 1/2 A %s: the run exited 0 but its log has no bind-phase lines (\"bind phase=\"; an "
             "argument after -- that turns them off, such as --log-level above timing?), so hbg compare could read "
             "none: the other runs were not made, and it stays at %s (--resume runs it again)\n",
             c1, part);
    if (!strstr(se, want))
        fail_msg("stderr '%s'", se);
    assert_int_equal(access(a1, F_OK), -1); /* not a finished log: --resume does not keep it */
    assert_int_equal(access(part, F_OK), 0);
    assert_int_equal(access(b1, F_OK), -1);
    free(so), free(se);
    /* a finished log without them (an older hbg ab's) is not kept by
     * --resume either */
    const char *resume[] = {"--resume", NULL};
    ab_fake(out2, built, resume, NULL, NULL); /* runs them all: the partial one again */
    assert_int_equal(access(a1, F_OK), 0);
    assert_int_equal(access(part, F_OK), -1);
    char *b2 = log_name(out2, c2, 2), *stamp = ab_read(b2);
    assert_non_null(stamp);
    *(strchr(stamp, '\n') + 1) = 0; /* the stamp line alone */
    ab_write(b2, stamp);
    assert_int_equal(ab_fake(out2, built, resume, &so, &se), 2);
    snprintf(want, sizeof want,
             "hbg ab: --resume: %s has no bind-phase lines (\"bind phase=\"), so hbg compare could not read it; move "
             "it away and --resume runs its repetition again\n",
             b2);
    if (strcmp(se, want))
        fail_msg("stderr '%s'", se);
    free(stamp), free(b2), free(a1), free(b1), free(so), free(se), free(built), free(out), free(out2);

    /* each arm's first run is read: here REV_B's build writes none */
    char *out5 = in_root("out-trial-b");
    built = in_root("built-trial-both");
    setenv("FAKE_NOPHASES_REV", c2, 1);
    assert_int_equal(ab_fake(out5, built, NULL, &so, &se), 2);
    unsetenv("FAKE_NOPHASES_REV");
    char *a1b = log_name(out5, c1, 1);
    snprintf(want, sizeof want, "hbg ab: rep 1/2 B %s: the run exited 0 but its log has no bind-phase lines", c2);
    if (!strstr(se, want))
        fail_msg("stderr '%s'", se);
    assert_int_equal(access(a1b, F_OK), 0); /* A's, read and finished */
    free(a1b), free(so), free(se), free(built), free(out5);

    /* the stamp line quoting a --run template is no bind-phase line */
    char *out3 = in_root("out-trial-stamp");
    const char *tmpl[] = {"ab",      c1, c2, "--build", "true", "--run", "echo 'bind phase=' >/dev/null", "--reps", "2",
                          "--outputs", out3, NULL};
    assert_int_equal(ab_hbg(repo, tmpl, &so, &se), 2);
    assert_non_null(strstr(se, "the run exited 0 but its log has no bind-phase lines (\"bind phase=\"; does the --run "
                               "command turn HBG_BIND_BREAKDOWN (or SIMPLER_HBG_BIND_BREAKDOWN_ENABLE) on"));
    free(so), free(se), free(out3);
    /* a --run command that writes a stamp of its own (an hbg run writing
     * its log to stderr) makes logs hbg compare refuses as mixed runs */
    char *out4 = in_root("out-trial-stamp2");
    tmpl[6] = "printf '[stamp] x env y\\nbind phase=args dur_ns=1\\n'";
    tmpl[10] = out4;
    assert_int_equal(ab_hbg(repo, tmpl, &so, &se), 2);
    assert_non_null(strstr(se, "the run's log holds a second [stamp] line, which hbg compare refuses as two runs mixed"));
    free(so), free(se), free(out4);
}

/* A run whose writer pads its markers ("bind  phase=", "bind\tphase=")
 * writes bind-phase lines, as hbg compare reads them: every repetition
 * is measured and compared. Each was refused as a log with none ("the run
 * exited 0 but its log has no bind-phase lines"), and --resume refused
 * such a finished log the same way. */
static void test_padded_phase_lines_count(void **state)
{
    (void)state;
    char *out = in_root("out-padded"), *order = in_root("order-padded"), tmpl[4096];
    snprintf(tmpl, sizeof tmpl,
             "echo {rev} >> %s; sh {worktree}/measure.sh | "
             "sed 's/bind phase=args/bind\tphase=args/; s/bind phase=/bind  phase=/'",
             order);
    const char *args[] = {"ab", c1, c2, "--build", "true", "--run", tmpl, "--reps", "5", "--outputs", out, NULL};
    char *so, *se;
    int rc = ab_hbg(repo, args, &so, &se);
    if (rc != expected_status() || strstr(se, "bind-phase"))
        fail_msg("status %d, stderr '%s'", rc, se);
    assert_int_equal(ab_entries(out), 10);
    char *r1 = log_name(out, c2, 1), *log = ab_read(r1);
    assert_non_null(log);
    /* the lines as written, past the stamp (which quotes the template) */
    const char *body = strchr(log, '\n');
    assert_non_null(body);
    assert_null(strstr(body, "bind phase="));
    assert_non_null(strstr(body, "bind  phase=arena_h2d "));
    assert_non_null(strstr(body, "bind\tphase=args "));
    free(so), free(se);
    /* --resume keeps them all */
    const char *resume[] = {"ab",     c1,  c2,          "--build", "true",     "--run", tmpl,
                            "--reps", "5", "--outputs", out,       "--resume", NULL};
    rc = ab_hbg(repo, resume, &so, &se);
    char want[256];
    snprintf(want, sizeof want, "hbg ab: rep 5/5 B %s: bind_qwen_numbers_%s_r5.log (reused)", c2, c2);
    if (rc != expected_status() || !strstr(se, want))
        fail_msg("status %d, stderr '%s'", rc, se);
    assert_int_equal(ab_lines(order), 10);
    free(so), free(se), free(log), free(r1), free(order), free(out);
}

static void usage_error(const char *dir, const char *const *args, const char *needle)
{
    char *so, *se;
    int rc = ab_hbg(dir, args, &so, &se);
    if (rc != 2 || !one_line(se) || !strstr(se, needle) || *so)
        fail_msg("hbg ab %s %s: status %d, stderr '%s' (wanted one line with '%s')", args[1] ? args[1] : "",
                 args[1] && args[2] ? args[2] : "", rc, se, needle);
    free(so);
    free(se);
}

static void test_usage_errors(void **state)
{
    (void)state;
    char *out = in_root("out-usage");
    const char *bad[][8] = {
        {"ab", "--reps", "0", "HEAD~1", "HEAD", NULL},           {"ab", "--reps", "five", "HEAD~1", "HEAD", NULL},
        {"ab", "--rounds", "1", "HEAD~1", "HEAD", NULL},         {"ab", "--bogus", "HEAD~1", "HEAD", NULL},
        {"ab", NULL},                                             {"ab", "HEAD", NULL},
        {"ab", "HEAD~1", "HEAD", "HEAD~1", NULL},                 {"ab", "HEAD~1", "no-such-rev", NULL},
        {"ab", "HEAD", c2, NULL},                                 {"ab", "WORKTREE", "HEAD", NULL},
        {"ab", "--order", "aabb", "HEAD~1", "HEAD", NULL},        {"ab", "--mode", "fast", "HEAD~1", "HEAD", NULL},
        {"ab", "--case", "llama", "HEAD~1", "HEAD", NULL},        {"ab", "--format", "xml", "HEAD~1", "HEAD", NULL},
        {"ab", "--alpha", "1", "HEAD~1", "HEAD", NULL},           {"ab", "--threshold", "-1", "HEAD~1", "HEAD", NULL},
        {"ab", "HEAD~1", "HEAD", "--", "--rounds", "3", NULL},    {"ab", "HEAD~1", "HEAD", "--reps", NULL},
        {"ab", "--threshold", "0x10", "HEAD~1", "HEAD", NULL},    {"ab", "--alpha", "0x0.1", "HEAD~1", "HEAD", NULL},
        {"ab", "--case", "x\ny\033", "HEAD~1", "HEAD", NULL},   {"ab", "--run-timeout", "0", "HEAD~1", "HEAD", NULL},
        {"ab", "--run-timeout", "1e99", "HEAD~1", "HEAD", NULL},
    };
    const char *why[] = {"--reps expects an integer from 1 to", "--reps expects", "--rounds expects",
                         "unknown or incomplete option '--bogus'", "expected two revisions", "expected two revisions",
                         "expected two revisions", "unknown revision 'no-such-rev'", "the same commit",
                         "can only be REV_B", "--order expects abab or abba", "--mode expects numbers or timeline",
                         "--case expects a case `hbg run --list` names, got 'llama'", "--format expects table, json or csv",
                         "--alpha expects", "--threshold expects", "would override", "unknown or incomplete option",
                         "--threshold expects", "--alpha expects",
                         "--case expects a case `hbg run --list` names, got 'x?y?'\n",
                         "--run-timeout expects seconds, more than 0 and at most 8640000, got '0'",
                         "--run-timeout expects seconds, more than 0 and at most 8640000, got '1e99'"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        usage_error(repo, bad[i], why[i]);
    /* outside any repository */
    const char *outside[] = {"ab", "HEAD~1", "HEAD", "--outputs", out, NULL};
    usage_error(root, outside, "not in a git work tree");
    assert_int_equal(access(out, F_OK), -1);
    free(out);
}

/* Every number is digits alone, however the option parses it: strtoul
 * took " 3" and "+3" for --reps, where --run-timeout refused " 1", and
 * strtod took "+1" and "-0". */
static void test_numbers_without_signs_or_spaces(void **state)
{
    (void)state;
    static const char *const bad[][2] = {
        {"--reps", " 3"},        {"--reps", "3 "},        {"--reps", "+3"},        {"--rounds", " 6"},
        {"--rounds", "+6"},      {"--threshold", "+5"},   {"--threshold", "-0"},   {"--alpha", "+0.1"},
        {"--run-timeout", "+1"}, {"--run-timeout", " 1"}, {"--run-timeout", "1 "},
    };
    static const char *const want[] = {
        "hbg ab: --reps expects an integer from 1 to 1000, got ' 3'\n",
        "hbg ab: --reps expects an integer from 1 to 1000, got '3 '\n",
        "hbg ab: --reps expects an integer from 1 to 1000, got '+3'\n",
        "hbg ab: --rounds expects an integer from 2 to 100000 (the first pass is cold and dropped), got ' 6'\n",
        "hbg ab: --rounds expects an integer from 2 to 100000 (the first pass is cold and dropped), got '+6'\n",
        "hbg ab: --threshold expects a percentage from 0 to 1000000, got '+5'\n",
        "hbg ab: --threshold expects a percentage from 0 to 1000000, got '-0'\n",
        "hbg ab: --alpha expects a probability between 0 and 1 (exclusive), got '+0.1'\n",
        "hbg ab: --run-timeout expects seconds, more than 0 and at most 8640000, got '+1'\n",
        "hbg ab: --run-timeout expects seconds, more than 0 and at most 8640000, got ' 1'\n",
        "hbg ab: --run-timeout expects seconds, more than 0 and at most 8640000, got '1 '\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const char *args[] = {"ab", bad[i][0], bad[i][1], "HEAD~1", "HEAD", "--build", "false", NULL};
        char *so, *se;
        int rc = ab_hbg(repo, args, &so, &se);
        if (rc != 2 || strcmp(se, want[i]) || *so)
            fail_msg("hbg ab %s '%s': status %d, stderr '%s' (wanted '%s')", bad[i][0], bad[i][1], rc, se, want[i]);
        free(so);
        free(se);
    }
}

/* hbg run's getopt_long takes an unambiguous prefix and --name=value:
 * each of these would be its --rounds, --mode or log; the ambiguous --r,
 * --lo, which it refuses itself, are refused here too. --log-level is an
 * option of its own, and passes (the build, `false`, is what fails). */
static void test_owned_options_abbreviated(void **state)
{
    (void)state;
    char *out = in_root("out-abbrev");
    const char *words[] = {"--ro", "--rou=3", "--r", "--mo", "--mod=timeline", "--m", "--mode=timeline",
                           "--log=x.log", "--lo", "-ox.log", "-o"};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++) {
        const char *args[] = {"ab", "HEAD~1", "HEAD", "--build", "false", "--outputs", out, "--", words[i], "5", NULL};
        usage_error(repo, args, "would override");
    }
    const char *ok[] = {"ab", "HEAD~1", "HEAD", "--build", "false", "--outputs", out, "--", "--log-level", "debug",
                        "--log-l=info", NULL};
    char *se;
    assert_int_equal(ab_hbg(repo, ok, NULL, &se), 2);
    assert_non_null(strstr(se, "hbg ab: building REV_A"));
    assert_null(strstr(se, "would override"));
    free(se);
    free(out);
}

static void test_help(void **state)
{
    (void)state;
    const char *args[] = {"ab", "--help", NULL};
    char *so, *se;
    assert_int_equal(ab_hbg(repo, args, &so, &se), 0);
    const char *parts[] = {"usage: hbg ab REV_A REV_B [options] [-- ARGS for hbg run]", "WORKTREE", "--reps N",
                           "--order abab|abba", "--resume", "--build CMD", "--run CMD", "{worktree}", "{rev}",
                           "{log}", "[stamp] <commit> env", "Exit status", "0 no regression", "2 also for bad usage"};
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
        if (!strstr(so, parts[i]))
            fail_msg("hbg ab --help lacks '%s'", parts[i]);
    assert_string_equal(se, "");
    free(so);
    free(se);
}

/* hbg ab with args (args[0] "ab"), started in the tests' repository and
 * not waited for; its stdout and stderr go to errpath. */
static pid_t ab_background(const char *const *args, const char *errpath)
{
    const char *cli = getenv("HBG_CLI");
    assert_non_null(cli);
    const char *av[40] = {cli};
    size_t n = 1;
    for (; args[n - 1] && n < 39; n++)
        av[n] = args[n - 1];
    av[n] = NULL;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644), nul = open("/dev/null", O_RDONLY);
        if (fd < 0 || nul < 0 || chdir(repo) != 0)
            _exit(127);
        dup2(nul, STDIN_FILENO);
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        execv(cli, (char *const *)av);
        _exit(127);
    }
    return pid;
}

/* Waits until the file at path holds text, written by the hbg ab running
 * in the background as pid (its stderr at errpath). At most 180 s: a
 * loaded machine has taken more than 60 s to bring hbg ab to its build.
 * An hbg ab that ended before writing it fails the test at once, with
 * what it said (waitid's WNOWAIT leaves it for the test to reap). */
static void wait_for_text(const char *path, const char *text, pid_t pid, const char *errpath)
{
    struct timespec nap = {0, 20 * 1000 * 1000};
    double until = mono_now() + 180;
    for (;;) {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        /* looked at before the file: an hbg ab that wrote the text and
         * ended between a read and this look is found by the read after */
        bool ended = waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid;
        char *s = ab_read(path);
        bool there = s && strstr(s, text);
        free(s);
        if (there)
            return;
        if (ended) {
            char *err = ab_read(errpath);
            fail_msg("hbg ab ended (%s %d) before %s held '%s'; it said '%s'",
                     si.si_code == CLD_EXITED ? "exit status" : "by signal", si.si_status, path, text, err ? err : "");
        }
        if (mono_now() > until) {
            /* not left running past the test: SIGTERM ends its builds too */
            kill(pid, SIGTERM);
            fail_msg("%s never held '%s' in 180 s", path, text);
        }
        nanosleep(&nap, NULL);
    }
}

/* The exit status of pid, which must exit (not die by a signal). */
static int exit_status(pid_t pid)
{
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    if (!WIFEXITED(ws))
        fail_msg("hbg ab ended by signal %d", WIFSIGNALED(ws) ? WTERMSIG(ws) : -1);
    return WEXITSTATUS(ws);
}

/* A --build template builds in a worktree of its own: two builders of
 * one tree, one after the other, each reuse their own build, where the
 * second replaced the first's marker (and, run at once, rebuilt the tree
 * under the first's runs). */
static void test_each_builder_its_own_tree(void **state)
{
    (void)state;
    char *count = in_root("count-builders"), *out = in_root("out-builders");
    char one[4096], two[4096];
    snprintf(one, sizeof one, "echo one >> '%s'", count);
    snprintf(two, sizeof two, "echo two >> '%s'", count);
    const char *args[] = {"ab", c1, c2, "--build", one, "--run", "sh {worktree}/measure.sh", "--reps", "1",
                          "--outputs", out, NULL};
    char *se, want[256];
    for (int k = 0; k < 3; k++) { /* one, two, one again */
        args[4] = k == 1 ? two : one;
        char sub[64];
        snprintf(sub, sizeof sub, "-%d", k);
        char *o = in_root(sub);
        args[10] = o;
        ab_hbg(repo, args, NULL, &se);
        snprintf(want, sizeof want, "hbg ab: REV_A %s (%s): reusing the build in ", c1, c1);
        if (k == 2 && !strstr(se, want))
            fail_msg("builder one rebuilt after builder two: '%s'", se);
        free(se);
        free(o);
    }
    assert_int_equal(ab_lines(count), 4); /* each tree once per builder */
    free(out);
    free(count);
}

/* Two hbg ab measuring the same trees at once, into two folders: the
 * second waits for the first's build of a tree and reuses it, where it
 * would have built the tree over the first's (relinking the binary the
 * first runs, removing the worktree it makes). */
static void test_same_tree_built_once_at_once(void **state)
{
    (void)state;
    char *out1 = in_root("out-twice1"), *out2 = in_root("out-twice2"), *built = in_root("built-twice");
    char *errp = in_root("err-twice");
    char build[4096];
    /* slow enough that the second reaches its lock on a loaded machine */
    snprintf(build, sizeof build, "echo {rev} >> '%s'; sleep 2", built);
    const char *args[] = {"ab", c1, c2, "--build", build, "--run", "sh {worktree}/measure.sh", "--reps", "2",
                          "--outputs", out1, NULL};
    pid_t first = ab_background(args, errp);
    wait_for_text(built, c1, first, errp); /* the first is building REV_A */
    args[10] = out2;
    char *se;
    int rc2 = ab_hbg(repo, args, NULL, &se);
    int rc1 = exit_status(first);
    char *se1 = ab_read(errp);
    if (rc1 != rc2 || (rc1 != 0 && rc1 != 1 && compare_real))
        fail_msg("exit status %d and %d:\n%s\n%s", rc1, rc2, se1, se);
    assert_int_equal(ab_lines(built), 2); /* each tree built once */
    char want[64];
    snprintf(want, sizeof want, " (pid %ld)\n", (long)first);
    const char *w = strstr(se, "hbg ab: waiting for another hbg ab building ");
    if (!w || !strstr(w, want))
        fail_msg("stderr '%s'", se);
    free(se1);
    free(se);
    free(errp);
    free(built);
    free(out2);
    free(out1);
}

/* An --outputs folder is one hbg ab's at a time: a second one there, even
 * with --resume (which removes the partial logs of the repetitions it
 * runs again), is refused at once, and the first's logs are whole. */
static void test_outputs_held_by_one_run(void **state)
{
    (void)state;
    char *out = in_root("out-held"), *errp = in_root("err-held"), *started = in_root("started-held");
    char tmpl[4096];
    snprintf(tmpl, sizeof tmpl, "echo {rev} >> '%s'; sleep 1; sh {worktree}/measure.sh", started);
    const char *args[] = {"ab", c1, c2, "--build", "true", "--run", tmpl, "--reps", "2", "--outputs", out,
                          NULL, NULL};
    pid_t first = ab_background(args, errp);
    wait_for_text(started, c1, first, errp); /* its first run is writing its LOG.part */
    args[11] = "--resume";
    char *se;
    assert_int_equal(ab_hbg(repo, args, NULL, &se), 2);
    char want[4096];
    snprintf(want, sizeof want, "hbg ab: the --outputs folder %s is in use by another hbg ab (pid %ld): nothing was "
                                "run; wait for it to end, or pick another --outputs\n", out, (long)first);
    assert_string_equal(se, want);
    int rc = exit_status(first);
    char *se1 = ab_read(errp);
    if (compare_real && rc != 0 && rc != 1)
        fail_msg("the first hbg ab exited %d: %s", rc, se1);
    assert_int_equal(ab_entries(out), 4); /* its four logs, and no lock file left */
    free(se1);
    free(se);
    free(started);
    free(errp);
    free(out);
}

/* An --outputs folder that takes no files is refused before anything is
 * built (/proc: root may write anywhere a mode allows, but not there). */
static void test_unwritable_outputs_refused_first(void **state)
{
    (void)state;
    char *built = in_root("built-unwritable");
    char *so, *se;
    assert_int_equal(ab_fake("/proc", built, NULL, &so, &se), 2);
    assert_true(one_line(se));
    assert_true(!strncmp(se, "hbg ab: cannot create files in the --outputs folder /proc: ", 59));
    assert_int_equal(access(built, F_OK), -1);
    free(so);
    free(se);
    free(built);
}

/* An --outputs that is a file, not a folder, is said to be one (once
 * "File exists", the errno of the mkdir that found it), before any build. */
static void test_outputs_that_is_a_file_refused(void **state)
{
    (void)state;
    char *built = in_root("built-file-outputs"), *file = in_root("outputs-file");
    ab_write(file, "x");
    char *so, *se, want[4096];
    assert_int_equal(ab_fake(file, built, NULL, &so, &se), 2);
    snprintf(want, sizeof want, "hbg ab: cannot create the --outputs folder %s: Not a directory\n", file);
    assert_string_equal(se, want);
    assert_int_equal(access(built, F_OK), -1);
    free(so);
    free(se);
    free(file);
    free(built);
}

/* A stop signal during the comparison (in-process, after the runs) ends
 * hbg ab by that signal, as one during a run does. The --plot is a FIFO
 * no one reads, so the comparison waits in its write for as long as the
 * test needs; a caught signal would only have interrupted that write. */
static void test_stop_signal_during_compare(void **state)
{
    (void)state;
    if (!compare_real)
        skip();
    char *out = in_root("out-sigcmp"), *errp = in_root("err-sigcmp"), *fifo = in_root("sigcmp.svg");
    assert_int_equal(mkfifo(fifo, 0644), 0);
    const char *args[] = {"ab", c1, c2, "--build", "true", "--run", "sh {worktree}/measure.sh", "--reps", "2",
                          "--outputs", out, "--plot", fifo, NULL};
    pid_t pid = ab_background(args, errp);
    wait_for_text(errp, "hbg ab: to compare these logs again: ", pid, errp);
    struct timespec nap = {0, 200 * 1000 * 1000};
    nanosleep(&nap, NULL); /* into the comparison, or past it to the FIFO */
    assert_int_equal(kill(pid, SIGTERM), 0);
    int ws = 0;
    nap.tv_nsec = 20 * 1000 * 1000;
    for (int i = 0; i < 500 && waitpid(pid, &ws, WNOHANG) == 0; i++)
        nanosleep(&nap, NULL);
    if (waitpid(pid, &ws, WNOHANG) == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &ws, 0);
        fail_msg("hbg ab went on after SIGTERM during the comparison");
    }
    char *se = ab_read(errp);
    if (!WIFSIGNALED(ws) || WTERMSIG(ws) != SIGTERM)
        fail_msg("hbg ab did not end by SIGTERM: %s", se);
    free(se);
    unlink(fifo);
    free(fifo);
    free(errp);
    free(out);
}

/* The comparison that hbg ab runs in-process on its logs is hbg ab's:
 * a verdict it cannot write is said as hbg ab's failure (it was said as
 * "hbg compare: cannot write standard output", a command the user did
 * not run), exit 2, and the logs stay for the rerun line. */
static void test_unwritable_verdict_is_said_by_ab(void **state)
{
    (void)state;
    if (!compare_real || access("/dev/full", W_OK) != 0)
        skip();
    char *out = in_root("out-full"), *cmd = NULL;
    assert_true(asprintf(&cmd,
                         "exec \"$HBG_CLI\" ab %s %s --build true --run 'sh {worktree}/measure.sh' --reps 2 "
                         "--outputs '%s' > /dev/full",
                         c1, c2, out) > 0);
    const char *argv[] = {"sh", "-c", cmd, NULL};
    char *so = NULL, *se = NULL;
    assert_int_equal(ab_exec(repo, argv, &so, &se), 2);
    if (!strstr(se, "\nhbg ab: cannot write standard output: No space left on device\n") || strstr(se, "hbg compare:"))
        fail_msg("%s", se);
    assert_int_equal(ab_entries(out), 4);
    free(so), free(se), free(cmd), free(out);
}

/* A WORKTREE whose only change is a new file, staged or intent-to-add,
 * is a dirty snapshot to cmake/version.cmake (`git status --porcelain
 * --untracked-files=no` not empty), as the log names say: a new file left
 * untracked in the snapshot built as clean. */
static void test_worktree_new_file_only(void **state)
{
    (void)state;
    char w1[8], w2[8], path[4096];
    char *r = ab_two_commit_repo(root, "wtnew", w1, w2);
    char *head = ab_git_line(r, (const char *const[]){"rev-parse", "--short=7", "HEAD", NULL});
    const char *tmpl = "sh {worktree}/measure.sh; cd {worktree} && git status --porcelain --untracked-files=no | "
                       "grep -q . && echo snapshot-dirty; true";
    const char *how[][3] = {{"add", "new.txt", NULL}, {"add", "-N", "new.txt"}};
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/new.txt", r);
        ab_write(path, k ? "intent-to-add\n" : "staged\n");
        ab_git(r, (const char *const[]){how[k][0], how[k][1], how[k][2], NULL});
        char *out = in_root(k ? "out-wtnew-ita" : "out-wtnew-staged");
        const char *args[] = {"ab", w1, "WORKTREE", "--build", "true", "--run", tmpl, "--reps", "1", "--outputs",
                              out, NULL};
        char *se;
        ab_hbg(r, args, NULL, &se);
        snprintf(path, sizeof path, "%s/bind_qwen_numbers_%s-dirty_r1.log", out, head);
        char *log = ab_read(path);
        if (!log || !strstr(strchr(log, '\n'), "snapshot-dirty"))
            fail_msg("%s %s: the snapshot is not dirty:\n%s", how[k][0], how[k][1], se);
        free(log);
        free(se);
        free(out);
        ab_git(r, (const char *const[]){"rm", "-q", "--cached", "new.txt", NULL});
    }
    free(head);
    free(r);
}

/* A short sha two commits share is refused as ambiguous, not unknown;
 * :/TEXT (a commit by its message) names a commit. The two commits are
 * made with fixed dates, so that their shas are known: 1fc129e… and
 * 1fc1379…, both on the empty tree. */
static void test_ambiguous_and_message_revisions(void **state)
{
    (void)state;
    char a1[8], a2[8];
    char *r = ab_two_commit_repo(root, "amb", a1, a2);
    /* every input of the two commits' names fixed, whatever the
     * environment says: their shas must both start with 1fc1 */
    static const char *const id[][2] = {{"GIT_AUTHOR_DATE", "946684800 +0000"},
                                        {"GIT_COMMITTER_DATE", "946684800 +0000"},
                                        {"GIT_AUTHOR_NAME", "hbg test"},
                                        {"GIT_COMMITTER_NAME", "hbg test"},
                                        {"GIT_AUTHOR_EMAIL", "test@hbg.invalid"},
                                        {"GIT_COMMITTER_EMAIL", "test@hbg.invalid"}};
    for (size_t i = 0; i < sizeof id / sizeof id[0]; i++)
        setenv(id[i][0], id[i][1], 1);
    ab_git(r, (const char *const[]){"hash-object", "-t", "tree", "-w", "/dev/null", NULL});
    for (int k = 0; k < 2; k++)
        ab_git(r, (const char *const[]){"commit-tree", "4b825dc642cb6eb9a060e54bf8d69288fbee4904", "-m",
                                        k ? "ambiguous 164" : "ambiguous 97", NULL});
    for (size_t i = 0; i < sizeof id / sizeof id[0]; i++)
        unsetenv(id[i][0]);
    char *out = in_root("out-amb");
    const char *args[] = {"ab", "1fc1", "HEAD", "--build", "true", "--run", "sh {worktree}/measure.sh", "--reps",
                          "1", "--outputs", out, NULL};
    char *se;
    assert_int_equal(ab_hbg(r, args, NULL, &se), 2);
    assert_true(one_line(se));
    if (!strstr(se, "hbg ab: ambiguous revision '1fc1': 2 objects of "))
        fail_msg("stderr '%s'", se);
    free(se);
    args[1] = ":/host_orch 90 us";
    ab_hbg(r, args, NULL, &se);
    char *log = NULL;
    assert_true(asprintf(&log, "%s/bind_qwen_numbers_%s_r1.log", out, a1) > 0);
    if (access(log, F_OK))
        fail_msg("no %s: stderr '%s'", log, se);
    free(log);
    free(se);
    free(out);
    free(r);
}

/* The exit status of hbg ab (pid), which must exit within limit_s
 * seconds; one still running is killed and fails the test. */
static int exits_within(pid_t pid, int limit_s)
{
    int ws = 0;
    pid_t got = 0;
    for (int i = 0; i < limit_s * 50 && (got = waitpid(pid, &ws, WNOHANG)) == 0; i++)
        nanosleep(&(struct timespec){.tv_nsec = 20000000}, NULL);
    if (got == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &ws, 0);
        fail_msg("hbg ab still running after %d s", limit_s);
    }
    assert_int_equal(got, pid);
    if (!WIFEXITED(ws))
        fail_msg("hbg ab ended by signal %d", WIFSIGNALED(ws) ? WTERMSIG(ws) : -1);
    return WEXITSTATUS(ws);
}

/* --resume on a log name that is a FIFO or a folder: refused as no log,
 * at once. The FIFO held hbg ab in its open for ever (until a signal,
 * then said as "cannot read ...: Interrupted system call"). */
static void test_resume_refuses_what_is_no_file(void **state)
{
    (void)state;
    char *out = in_root("out-fifo"), *errp = in_root("err-fifo");
    assert_int_equal(mkdir(out, 0755), 0);
    char *r1 = log_name(out, c1, 1);
    assert_int_equal(mkfifo(r1, 0644), 0);
    const char *args[] = {"ab",     c1,  c2,          "--build", "true",     "--run", "sh {worktree}/measure.sh",
                          "--reps", "1", "--outputs", out,       "--resume", NULL};
    assert_int_equal(exits_within(ab_background(args, errp), 20), 2);
    char *se = ab_read(errp), want[4096];
    snprintf(want, sizeof want,
             "hbg ab: --resume: %s is a FIFO, not a log a run wrote: move it away and --resume "
             "runs its repetition again\n",
             r1);
    assert_string_equal(se, want);
    free(se);
    assert_int_equal(unlink(r1), 0);
    assert_int_equal(mkdir(r1, 0755), 0);
    assert_int_equal(exits_within(ab_background(args, errp), 20), 2);
    se = ab_read(errp);
    snprintf(want, sizeof want,
             "hbg ab: --resume: %s is a folder, not a log a run wrote: move it away and --resume "
             "runs its repetition again\n",
             r1);
    assert_string_equal(se, want);
    free(se);
    assert_int_equal(rmdir(r1), 0);
    free(r1);
    free(errp);
    free(out);
}

/* A run that exits 0 but leaves a log cut short (a --run command whose
 * writes failed, an hbg run whose log lost passes) is refused as it
 * ends, naming the repetition and the log, which stays a partial one for
 * --resume; once it was renamed a finished LOG and counted, and only
 * hbg compare, after every other run, refused it (or, cut in a line,
 * compared it). */
static void test_cut_log_is_refused(void **state)
{
    (void)state;
    char *out = in_root("out-cut"), *built = in_root("built-cut");
    const char *extra[] = {"--", "--cut", NULL};
    char *so, *se, want[4096];
    assert_int_equal(ab_fake(out, built, extra, &so, &se), 2);
    char *r1 = log_name(out, c1, 1);
    snprintf(want, sizeof want,
             "hbg ab: rep 1/2 A %s: the run exited 0 but its log is incomplete (%s.part:1: it holds 3 of the 6 "
             "passes its stamp's --rounds 6 asks of 1 rank): the other runs were not made, and it stays at %s.part "
             "(--resume runs it again)\n",
             c1, r1, r1);
    if (!strstr(se, want))
        fail_msg("stderr '%s'", se);
    assert_int_equal(access(r1, F_OK), -1);
    free(so), free(se), free(r1), free(out), free(built);

    /* the last line without its line end */
    out = in_root("out-cut-line");
    const char *args[] = {"ab",
                          c1,
                          c2,
                          "--build",
                          "true",
                          "--run",
                          "sh {worktree}/measure.sh; printf 'bind phase=args dur_ns=1'",
                          "--reps",
                          "1",
                          "--outputs",
                          out,
                          NULL};
    assert_int_equal(ab_hbg(repo, args, &so, &se), 2);
    r1 = log_name(out, c1, 1);
    snprintf(want, sizeof want,
             "hbg ab: rep 1/1 A %s: the run exited 0 but its log is cut: its last line has no line end (a write "
             "that failed?): the other runs were not made, and it stays at %s.part (--resume runs it again)\n",
             c1, r1);
    if (!strstr(se, want))
        fail_msg("stderr '%s'", se);
    assert_int_equal(ab_entries(out), 1);
    free(so), free(se), free(r1), free(out);
}

/* --resume on a log cut short (by an older hbg ab, which kept it): named
 * for what it is, and kept as it is, where it was reused. */
static void test_resume_refuses_a_cut_log(void **state)
{
    (void)state;
    char *out = in_root("out-resume-cut"), *order = in_root("order-resume-cut");
    assert_int_equal(mkdir(out, 0755), 0);
    char *r1 = log_name(out, c1, 1), *so, *se, want[8192], tmpl[4096];
    /* this run's stamp, then a bind line cut in the middle */
    snprintf(tmpl, sizeof tmpl, RUN_TMPL, order);
    snprintf(want, sizeof want,
             "[stamp] %s env %s\n[mono_ns=1][T0x1][TIMING] bind_trace_end: [bind_trace.c:212] bind phase=args "
             "start_ns=1 dur_ns=2",
             c1, tmpl);
    ab_write(r1, want);
    assert_int_equal(ab(out, order, "--resume", NULL, NULL, NULL, &so, &se), 2);
    snprintf(want, sizeof want,
             "hbg ab: --resume: %s is cut: its last line has no line end (a write that failed?); move it away and "
             "--resume runs its repetition again\n",
             r1);
    assert_string_equal(se, want);
    free(so), free(se), free(r1), free(order), free(out);
}

/* --resume on an empty log: named for what it is, and kept as it is. It
 * was "written by another run: its first line is ''". */
static void test_resume_refuses_an_empty_log(void **state)
{
    (void)state;
    char *out = in_root("out-empty"), *order = in_root("order-empty");
    assert_int_equal(mkdir(out, 0755), 0);
    char *r1 = log_name(out, c1, 1), *so, *se, want[4096];
    ab_write(r1, "");
    assert_int_equal(ab(out, order, "--resume", NULL, NULL, NULL, &so, &se), 2);
    snprintf(want, sizeof want,
             "hbg ab: --resume: %s is empty (a run that stopped before writing its stamp?), not a log a run "
             "finished: move it away and --resume runs its repetition again\n",
             r1);
    assert_string_equal(se, want);
    free(so), free(se);
    char *kept = ab_read(r1);
    assert_string_equal(kept, "");
    free(kept), free(r1), free(order), free(out);
}

/* LD_PRELOAD=shim for the hbg ab started next; what ASAN_OPTIONS was
 * (NULL: unset), for unpreload. The preload comes before the sanitizer's
 * runtime in the ASan build, which it would refuse. */
static char *preload(const char *shim)
{
    const char *asan = getenv("ASAN_OPTIONS");
    char *was = asan ? strdup(asan) : NULL, *opts = NULL;
    assert_true(asprintf(&opts, "%s%sverify_asan_link_order=0", asan ? asan : "", asan && *asan ? ":" : "") > 0);
    setenv("ASAN_OPTIONS", opts, 1);
    free(opts);
    setenv("LD_PRELOAD", shim, 1);
    return was;
}

static void unpreload(char *was_asan)
{
    unsetenv("LD_PRELOAD");
    if (was_asan)
        setenv("ASAN_OPTIONS", was_asan, 1);
    else
        unsetenv("ASAN_OPTIONS");
    free(was_asan);
}

/* A stop signal that lands after hbg ab looked for one and before its
 * wait for the run blocks (raised there by preload/raise_at_wait.c),
 * with a run that ignores SIGTERM: the run is still killed AB_GRACE_S
 * seconds on and hbg ab ends by the signal. Its blocking waitpid saw the
 * signal only when the run ended (here after 40 s; a second Ctrl-C
 * otherwise). */
static void test_stop_signal_before_the_wait(void **state)
{
    (void)state;
    const char *shim = getenv("HBG_TEST_RAISE_AT_WAIT");
    assert_non_null(shim);
    char *out = in_root("out-sigwait"), *out2 = in_root("out-sigwait2"), *built = in_root("built-sigwait");
    char *ready = in_root("sigwait-ready"), *so, *se;
    /* both trees built first, so that there is no trial: the wait is the run's */
    int rc = ab_fake(out, built, NULL, &so, &se);
    assert_true(rc == expected_status() || rc == 0 || rc == 1);
    free(so), free(se);

    char *was_asan = preload(shim);
    setenv("HBG_TEST_RAISE_WHEN", ready, 1);
    setenv("FAKE_READY", ready, 1);
    const char *extra[] = {"--", "--stubborn", NULL};
    double t0 = mono_now();
    rc = ab_fake(out2, built, extra, &so, &se);
    double took = mono_now() - t0;
    unsetenv("HBG_TEST_RAISE_WHEN");
    unsetenv("FAKE_READY");
    unpreload(was_asan);
    assert_int_equal(access(ready, F_OK), 0);
    if (rc != -1 || !strstr(se, "\nhbg ab: stopped by signal 2 (Interrupt); the finished logs are kept: rerun with "
                                "--resume to go on\n"))
        fail_msg("status %d, stderr '%s'", rc, se);
    if (took >= 20)
        fail_msg("hbg ab ended %.1f s after the run started, when its run ended", took);
    free(so), free(se), free(ready), free(built), free(out2), free(out);
}

/* A stop signal that lands inside hbg ab's wait for another hbg ab's
 * build of the same tree (raised there by preload/raise_at_wait.c, after
 * the look for a signal): hbg ab ends by it at once. Its blocking flock
 * saw the signal only once the other let go of the lock, a build later
 * (here 60 s). */
static void test_stop_signal_in_the_wait_for_a_lock(void **state)
{
    (void)state;
    const char *shim = getenv("HBG_TEST_RAISE_AT_WAIT");
    assert_non_null(shim);
    char *out1 = in_root("out-siglock1"), *out2 = in_root("out-siglock2"), *built = in_root("built-siglock");
    char *errp = in_root("err-siglock"), build[4096];
    snprintf(build, sizeof build, "echo {rev} >> '%s'; sleep 60", built);
    const char *args[] = {"ab",     c1,  c2,          "--build", build, "--run", "sh {worktree}/measure.sh",
                          "--reps", "2", "--outputs", out1,      NULL};
    pid_t first = ab_background(args, errp);
    wait_for_text(built, c1, first, errp); /* the first holds REV_A's lock, building it */
    args[10] = out2;
    char *was_asan = preload(shim), *se;
    setenv("HBG_TEST_RAISE_AT_LOCK", "1", 1);
    double t0 = mono_now();
    int rc = ab_hbg(repo, args, NULL, &se);
    double took = mono_now() - t0;
    unsetenv("HBG_TEST_RAISE_AT_LOCK");
    unpreload(was_asan);
    kill(first, SIGINT);
    ends_by(first, SIGINT, 30, errp);
    if (rc != -1 || !strstr(se, "hbg ab: waiting for another hbg ab building ") ||
        !strstr(se, "\nhbg ab: stopped by signal 2 (Interrupt); the finished logs are kept: rerun with "
                    "--resume to go on\n"))
        fail_msg("status %d, stderr '%s'", rc, se);
    if (took >= 30)
        fail_msg("hbg ab ended %.1f s after it began to wait, when the lock was let go", took);
    free(se), free(errp), free(built), free(out2), free(out1);
}

/* A stop signal while hbg ab reads a log in its own process (raised by
 * preload/raise_at_wait.c as it opens the log): acted on once that log is
 * read. As a run's log is checked, the log is finished and hbg ab ends
 * before the next run; as --resume checks the logs to keep, it ends
 * before the next log, with nothing built or run. It went on to the next
 * wait for a child: it started the next run (its LOG.out made) only to
 * stop it, and read every other log to keep first. */
static void test_stop_signal_in_work_of_its_own(void **state)
{
    (void)state;
    const char *shim = getenv("HBG_TEST_RAISE_AT_WAIT");
    assert_non_null(shim);
    char *out = in_root("out-sigown"), *built = in_root("built-sigown"), *so, *se, end[64];
    char *a1, *b1out;
    assert_true(asprintf(&a1, "%s/bind_qwen_numbers_%s_r1.log", out, c1) > 0);
    assert_true(asprintf(&b1out, "%s/bind_qwen_numbers_%s_r1.log.out", out, c2) > 0);
    char *was_asan = preload(shim);
    snprintf(end, sizeof end, "/bind_qwen_numbers_%s_r1.log.part", c1);
    setenv("HBG_TEST_RAISE_AT_FOPEN", end, 1);
    int rc = ab_fake(out, built, NULL, &so, &se);
    unsetenv("HBG_TEST_RAISE_AT_FOPEN");
    unpreload(was_asan);
    if (rc != -1 || !strstr(se, "\nhbg ab: stopped by signal 2 (Interrupt); the finished logs are kept: rerun with "
                                "--resume to go on\n"))
        fail_msg("status %d, stderr '%s'", rc, se);
    assert_int_equal(access(a1, F_OK), 0);
    assert_int_equal(access(b1out, F_OK), -1);
    free(so), free(se);

    was_asan = preload(shim);
    snprintf(end, sizeof end, "/bind_qwen_numbers_%s_r1.log", c1);
    setenv("HBG_TEST_RAISE_AT_FOPEN", end, 1);
    const char *resume[] = {"--resume", NULL};
    rc = ab_fake(out, built, resume, &so, &se);
    unsetenv("HBG_TEST_RAISE_AT_FOPEN");
    unpreload(was_asan);
    if (rc != -1 || strstr(se, "hbg ab: building ") || strstr(se, "reusing the build") ||
        !strstr(se, "hbg ab: stopped by signal 2 (Interrupt); the finished logs are kept: rerun with --resume to "
                    "go on\n"))
        fail_msg("status %d, stderr '%s'", rc, se);
    assert_int_equal(access(b1out, F_OK), -1);
    free(so), free(se), free(b1out), free(a1), free(built), free(out);
}

/* The same in the work on a WORKTREE's untracked files (raised as hbg ab
 * reads the link a-link, the first of them): as it hashes them for the
 * snapshot's name, it ends with nothing built; as it copies them into the
 * snapshot, it ends before the next file (b-file). It went on through
 * every file, then started the next command only to stop it. */
static void test_stop_signal_in_untracked_files(void **state)
{
    (void)state;
    const char *shim = getenv("HBG_TEST_RAISE_AT_WAIT");
    assert_non_null(shim);
    char w1[8], w2[8], path[4096];
    char *r = ab_two_commit_repo(root, "wtstop", w1, w2);
    snprintf(path, sizeof path, "%s/a-link", r);
    assert_int_equal(symlink("measure.sh", path), 0);
    snprintf(path, sizeof path, "%s/b-file", r);
    ab_write(path, "untracked\n");
    const char *want = "hbg ab: stopped by signal 2 (Interrupt); the finished logs are kept: rerun with --resume to "
                       "go on\n";
    for (int skip = 0; skip < 2; skip++) {
        char *out = in_root(skip ? "out-wtstop-copy" : "out-wtstop-hash"), *se;
        const char *args[] = {"ab",     w1,  "WORKTREE",  "--build", "true", "--run", "sh {worktree}/measure.sh",
                              "--reps", "1", "--outputs", out,       NULL};
        char *was_asan = preload(shim);
        setenv("HBG_TEST_RAISE_AT_READLINK", "/a-link", 1);
        setenv("HBG_TEST_RAISE_SKIP", skip ? "1" : "0", 1);
        int rc = ab_hbg(r, args, NULL, &se);
        unsetenv("HBG_TEST_RAISE_AT_READLINK");
        unsetenv("HBG_TEST_RAISE_SKIP");
        unpreload(was_asan);
        const char *b = strstr(se, "hbg ab: building REV_B ");
        if (rc != -1 || !strstr(se, want) || (!skip && strstr(se, "hbg ab: building ")) || (skip && !b))
            fail_msg("status %d, stderr '%s'", rc, se);
        if (skip) { /* the snapshot: "building REV_B REV (WORKTREE) in DIR; output in ..." */
            const char *in = strstr(b, " in ") + 4, *semi = strstr(in, "; output in ");
            assert_non_null(semi);
            struct stat sb;
            snprintf(path, sizeof path, "%.*s/a-link", (int)(semi - in), in);
            assert_int_equal(lstat(path, &sb), 0);
            snprintf(path, sizeof path, "%.*s/b-file", (int)(semi - in), in);
            if (lstat(path, &sb) == 0)
                fail_msg("%s was copied after the signal", path);
        }
        free(se);
        free(out);
    }
    free(r);
}

/* hbg ab started with SIGCHLD ignored (a parent's setting, which exec
 * keeps): the kernel reaps its children itself and sends it no SIGCHLD,
 * which its wait for a child takes as the sign to look again: it hung, or
 * took a git command that ran well for one that failed ("not in a git
 * work tree"). It runs as it does otherwise. */
static void test_sigchld_ignored(void **state)
{
    (void)state;
    char *out = in_root("out-chld"), *order = in_root("order-chld"), tmpl[4096];
    snprintf(tmpl, sizeof tmpl, RUN_TMPL, order);
    const char *argv[] = {getenv("HBG_CLI"), "ab", c1,          c2,  "--build",     "true", "--run", tmpl,
                          "--reps",          "5",  "--outputs", out, "--threshold", "5",    NULL};
    char *so, *se;
    int rc = ts_exec_chld_ignored(repo, argv, "/dev/null", &so, &se, 60);
    if (rc != expected_status())
        fail_msg("status %d (-2: still running after 60 s), stderr '%s'", rc, se);
    assert_logs(out, order);
    free(so), free(se), free(order), free(out);
}

/* hbg ab started with SIGTERM blocked (a parent that keeps it pending
 * meanwhile): like one it was started with ignored, it is not one of
 * hbg ab's stop signals. Each run sends it to hbg ab, which measures to
 * the end and leaves it pending. The wait for a run took it (sigwaitinfo)
 * from under the inherited mask and ended hbg ab as stopped by it (exit
 * 128 + 15: raised, it was still blocked), where the other waits never
 * saw it. */
static void test_blocked_stop_signal_stays_blocked(void **state)
{
    (void)state;
    char *out = in_root("out-blocked"), *built = in_root("built-blocked"), *so, *se;
    sigset_t term, was;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    assert_int_equal(sigprocmask(SIG_BLOCK, &term, &was), 0);
    setenv("FAKE_TERM_PARENT", "1", 1);
    int rc = ab_fake(out, built, NULL, &so, &se);
    unsetenv("FAKE_TERM_PARENT");
    assert_int_equal(sigprocmask(SIG_SETMASK, &was, NULL), 0);
    if (rc != expected_status() && rc != 0 && rc != 1)
        fail_msg("status %d, stderr '%s'", rc, se);
    assert_null(strstr(se, "stopped by signal"));
    assert_int_equal(ab_entries(out), 8); /* each run's log and LOG.out */
    free(so), free(se), free(built), free(out);
}

/* hbg ab C1 C2 with the default run on the stand-in, as ab_fake, in the
 * background: its stdout and stderr go to errp. */
static pid_t ab_fake_background(const char *out, const char *built, const char *errp)
{
    char build[8192];
    fake_build(build, sizeof build, built);
    const char *args[] = {"ab", c1, c2, "--build", build, "--reps", "2", "--outputs", out, NULL};
    return ab_background(args, errp);
}

/* A stop signal while hbg ab reads a command's output (here `hbg version`
 * of a built tree, which ignores SIGTERM): the command's group is ended
 * as a run's is, killed AB_GRACE_S seconds on, and hbg ab ends by the
 * signal. It read the output to its end: until the command ended by
 * itself (here 40 s on), or for ever. */
static void test_stop_signal_while_reading_a_command(void **state)
{
    (void)state;
    char *out = in_root("out-sigread"), *built = in_root("built-sigread"), *errp = in_root("err-sigread");
    char *ready = in_root("sigread-ready");
    setenv("FAKE_VERSION", "stubborn", 1);
    setenv("FAKE_READY", ready, 1);
    pid_t ab = ab_fake_background(out, built, errp);
    unsetenv("FAKE_VERSION");
    unsetenv("FAKE_READY");
    long version = pid_in(ready);
    assert_int_equal(kill(ab, SIGINT), 0);
    ends_by(ab, SIGINT, 20, errp);
    assert_true(gone_soon((pid_t)version));
    free(ready), free(errp), free(built), free(out);
}

/* A stop signal that lands after hbg ab looked for one and before its
 * wait for more of a command's output (raised there by
 * preload/raise_at_wait.c, `hbg version` ignoring SIGTERM): the wait
 * takes it, the command's group is killed AB_GRACE_S seconds on, and hbg
 * ab ends by the signal. A wait that let the signal in only before it
 * began (poll without the mask) would sleep on until the command ended
 * (here 40 s). */
static void test_stop_signal_before_the_read(void **state)
{
    (void)state;
    const char *shim = getenv("HBG_TEST_RAISE_AT_WAIT");
    assert_non_null(shim);
    char *out = in_root("out-sigpoll"), *built = in_root("built-sigpoll"), *errp = in_root("err-sigpoll");
    char *ready = in_root("sigpoll-ready");
    char *was_asan = preload(shim);
    setenv("HBG_TEST_RAISE_AT_READ", ready, 1);
    setenv("FAKE_VERSION", "stubborn", 1);
    setenv("FAKE_READY", ready, 1);
    pid_t ab = ab_fake_background(out, built, errp);
    unsetenv("FAKE_VERSION");
    unsetenv("FAKE_READY");
    unsetenv("HBG_TEST_RAISE_AT_READ");
    unpreload(was_asan);
    long version = pid_in(ready);
    ends_by(ab, SIGINT, 20, errp);
    assert_true(gone_soon((pid_t)version));
    free(ready), free(errp), free(built), free(out);
}

/* A command whose output hbg ab reads, stopped on the terminal (SIGTTIN,
 * as a password prompt is): killed within seconds and said, as a build
 * step is; hbg ab goes on (a failed `hbg version` only leaves the stamps
 * unchecked). It waited for ever. */
static void test_read_command_stopped_is_killed(void **state)
{
    (void)state;
    char *out = in_root("out-readttin"), *built = in_root("built-readttin"), *errp = in_root("err-readttin");
    setenv("FAKE_VERSION", "ttin", 1);
    pid_t ab = ab_fake_background(out, built, errp);
    unsetenv("FAKE_VERSION");
    int rc = exits_within(ab, 30);
    char *se = ab_read(errp);
    if (rc != expected_status() && rc != 0 && rc != 1)
        fail_msg("status %d, stderr '%s'", rc, se);
    const char *want = "/build/hbg version stopped, waiting on the terminal (a password prompt?), and was killed: hbg "
                       "ab runs commands apart from the terminal, so set up credentials beforehand\n";
    /* one line for each tree's hbg, naming it */
    const char *one = strstr(se, want), *two = one ? strstr(one + 1, want) : NULL;
    if (!two || strstr(two + 1, want) || !strstr(se, "\nhbg ab: /"))
        fail_msg("stderr '%s'", se);
    free(se), free(errp), free(built), free(out);
}

/* A built hbg whose `version` hangs, without a stop on the terminal
 * (it sleeps): stopped 5 s on and said, naming the binary, and hbg ab
 * ends with exit 2 before any run. It waited for ever. */
static void test_version_that_hangs_is_stopped(void **state)
{
    (void)state;
    char *out = in_root("out-verhang"), *built = in_root("built-verhang"), *errp = in_root("err-verhang");
    setenv("FAKE_VERSION", "hang", 1);
    pid_t ab = ab_fake_background(out, built, errp);
    unsetenv("FAKE_VERSION");
    double t0 = mono_now();
    int rc = exits_within(ab, 30);
    double took = mono_now() - t0;
    char *se = ab_read(errp), want[256];
    if (rc != 2)
        fail_msg("status %d, stderr '%s'", rc, se);
    snprintf(want, sizeof want, "\nhbg ab: REV_A '%s': /", c1);
    const char *line = strstr(se, want);
    const char *tail = "/build/hbg version did not end within 5 s and was stopped: an hbg that hangs cannot be "
                       "measured\n";
    /* the last line, and the only one of its kind: REV_B is not built */
    if (!line || !strstr(line, tail) || strlen(strstr(line, tail)) != strlen(tail))
        fail_msg("stderr '%s'", se);
    assert_true(took >= 4.5 && took < 20);
    assert_int_equal(ab_entries(out), 0);
    free(se), free(errp), free(built), free(out);
}

/* A built hbg whose `version` answers and exits, leaving a process in
 * the background that holds its output open (a daemon it starts): hbg ab
 * takes the answer once `version` has exited, leaves the process be, and
 * measures. It read on to the output's end, so waited for the process:
 * `hbg version` "did not end within 5 s" and hbg ab failed (and a git
 * command, which has no limit, held it for ever). */
static void test_read_command_leaving_a_process(void **state)
{
    (void)state;
    char *out = in_root("out-verbg"), *built = in_root("built-verbg"), *errp = in_root("err-verbg");
    char *pids = in_root("verbg-pids");
    setenv("FAKE_VERSION", "background", 1);
    setenv("FAKE_READY", pids, 1);
    pid_t ab = ab_fake_background(out, built, errp);
    unsetenv("FAKE_VERSION");
    unsetenv("FAKE_READY");
    int rc = exits_within(ab, 60);
    char *se = ab_read(errp), *left = ab_read(pids);
    /* each tree's `version` left one, alive after hbg ab */
    int alive = 0, n = 0;
    for (char *p = left; p && *p;) {
        char *end;
        long pid = strtol(p, &end, 10);
        if (end == p)
            break;
        n++;
        alive += pid > 1 && kill((pid_t)pid, 0) == 0;
        if (pid > 1)
            kill((pid_t)pid, SIGKILL);
        p = end;
    }
    if (rc != expected_status() && rc != 0 && rc != 1)
        fail_msg("status %d, stderr '%s'", rc, se);
    if (strstr(se, "did not end") || strstr(se, "warning"))
        fail_msg("stderr '%s'", se);
    assert_int_equal(n, 2);
    assert_int_equal(alive, 2);
    assert_int_equal(ab_entries(out), 8); /* each run's log and LOG.out */
    free(left), free(se), free(pids), free(errp), free(built), free(out);
}

/* hbg ignores SIGXFSZ (a write past a file size limit fails with EFBIG,
 * said by name); the builds and runs hbg ab starts get its action back as
 * hbg found it, here the default, as they would from the shell. */
static void test_children_get_sigxfsz_back(void **state)
{
    (void)state;
    char *out = in_root("out-xfsz"), *seen = in_root("seen-xfsz"), build[4096];
    snprintf(build, sizeof build, "grep SigIgn /proc/$$/status > '%s'", seen);
    const char *args[] = {"ab",     c1,  c2,          "--build", build, "--run", "sh {worktree}/measure.sh",
                          "--reps", "2", "--outputs", out,       NULL};
    char *se;
    int rc = ab_hbg(repo, args, NULL, &se);
    assert_true(rc == expected_status() || rc == 0 || rc == 1);
    char *t = ab_read(seen);
    assert_non_null(t);
    unsigned long long ign = 0;
    assert_int_equal(sscanf(t, "SigIgn: %llx", &ign), 1);
    if (ign & (1ull << (SIGXFSZ - 1)))
        fail_msg("a build ran with SIGXFSZ ignored: %s", t);
    free(t), free(se), free(seen), free(out);
}

/* A --run template past 8 KiB makes a stamp as long: --resume keeps
 * that run's own logs (it read their first lines cut at 8 KiB and refused
 * them as another run's), and still refuses a template one byte longer. */
static void test_resume_keeps_a_long_stamp(void **state)
{
    (void)state;
    char *out = in_root("out-longstamp"), *tmpl = NULL;
    char pad[9001];
    memset(pad, 'x', sizeof pad - 1);
    pad[sizeof pad - 1] = 0;
    assert_true(asprintf(&tmpl, ": %s; sh {worktree}/measure.sh", pad) > 0);
    const char *args[] = {"ab", c1, c2, "--build", "true", "--run", tmpl, "--reps", "1", "--outputs", out, NULL, NULL};
    char *so, *se, want[256];
    int rc = ab_hbg(repo, args, &so, &se);
    assert_true(rc == expected_status() || rc == 0 || rc == 1);
    assert_int_equal(ab_entries(out), 2);
    free(so), free(se);
    args[11] = "--resume";
    assert_int_equal(ab_hbg(repo, args, &so, &se), rc);
    snprintf(want, sizeof want, "hbg ab: rep 1/1 B %s: bind_qwen_numbers_%s_r1.log (reused)\n", c2, c2);
    if (!strstr(se, want))
        fail_msg("stderr '%s'", se);
    free(so), free(se), free(tmpl);
    assert_true(asprintf(&tmpl, ": %sx; sh {worktree}/measure.sh", pad) > 0);
    args[6] = tmpl;
    assert_int_equal(ab_hbg(repo, args, &so, &se), 2);
    assert_true(one_line(se));
    assert_non_null(strstr(se, "was written by another run"));
    free(so), free(se), free(tmpl), free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_measures_interleaved_and_compares),
        cmocka_unit_test(test_existing_logs_refused_then_resumed),
        cmocka_unit_test(test_outputs_named_like_an_option),
        cmocka_unit_test(test_stop_signal_stops_the_run),
        cmocka_unit_test(test_stop_signal_waits_for_the_group),
        cmocka_unit_test(test_abba_order_and_names),
        cmocka_unit_test(test_worktree_snapshot),
        cmocka_unit_test(test_build_failure_and_reuse),
        cmocka_unit_test(test_stopped_command_is_killed),
        cmocka_unit_test(test_run_failure),
        cmocka_unit_test(test_existing_out_refused),
        cmocka_unit_test(test_plot_checked_first),
        cmocka_unit_test(test_args_tried_before_second_build),
        cmocka_unit_test(test_trial_needs_phase_lines),
        cmocka_unit_test(test_padded_phase_lines_count),
        cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_numbers_without_signs_or_spaces),
        cmocka_unit_test(test_owned_options_abbreviated),
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_each_builder_its_own_tree),
        cmocka_unit_test(test_same_tree_built_once_at_once),
        cmocka_unit_test(test_outputs_held_by_one_run),
        cmocka_unit_test(test_unwritable_outputs_refused_first),
        cmocka_unit_test(test_outputs_that_is_a_file_refused),
        cmocka_unit_test(test_stop_signal_during_compare),
        cmocka_unit_test(test_unwritable_verdict_is_said_by_ab),
        cmocka_unit_test(test_worktree_new_file_only),
        cmocka_unit_test(test_ambiguous_and_message_revisions),
        cmocka_unit_test(test_run_timeout),
        cmocka_unit_test(test_resume_refuses_what_is_no_file),
        cmocka_unit_test(test_resume_keeps_a_long_stamp),
        cmocka_unit_test(test_cut_log_is_refused),
        cmocka_unit_test(test_resume_refuses_a_cut_log),
        cmocka_unit_test(test_resume_refuses_an_empty_log),
        cmocka_unit_test(test_stop_signal_before_the_wait),
        cmocka_unit_test(test_stop_signal_in_the_wait_for_a_lock),
        cmocka_unit_test(test_stop_signal_in_work_of_its_own),
        cmocka_unit_test(test_stop_signal_in_untracked_files),
        cmocka_unit_test(test_sigchld_ignored),
        cmocka_unit_test(test_children_get_sigxfsz_back),
        cmocka_unit_test(test_blocked_stop_signal_stays_blocked),
        cmocka_unit_test(test_stop_signal_while_reading_a_command),
        cmocka_unit_test(test_stop_signal_before_the_read),
        cmocka_unit_test(test_read_command_stopped_is_killed),
        cmocka_unit_test(test_version_that_hangs_is_stopped),
        cmocka_unit_test(test_read_command_leaving_a_process),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
