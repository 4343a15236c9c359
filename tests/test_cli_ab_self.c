/* `hbg ab` on hbg itself, with the default cmake builds: a throwaway
 * repository of the current source tree (uncommitted work included) as
 * commit A, and commit B with 100 us of busy-waiting at the start of the
 * host_orch segment. hbg ab must build both, run qwen interleaved, and
 * find B slower. Labelled "slow" (two Release builds): `ctest -LE slow`
 * skips it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "support/ab_support.h"

#define ANCHOR "    hbg__orch_open_clock_at(o, tick, c->t0);\n"
#define BUSY_WAIT                                                                                    \
    "    {\n"                                                                                        \
    "        struct timespec t0_, t1_;\n"                                                            \
    "        clock_gettime(CLOCK_MONOTONIC, &t0_);\n"                                                \
    "        do\n"                                                                                   \
    "            clock_gettime(CLOCK_MONOTONIC, &t1_);\n"                                            \
    "        while ((t1_.tv_sec - t0_.tv_sec) * 1000000000L + (t1_.tv_nsec - t0_.tv_nsec) < 100000);\n" \
    "    }\n"

/* B: the busy-wait right after the anchor line, which must be there. */
static void slow_down_host_orch(const char *repo)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/src/bind/segments.c", repo);
    char *src = ab_read(path);
    assert_non_null(src);
    char *at = strstr(src, ANCHOR);
    if (!at)
        fail_msg("src/bind/segments.c has no line '%.*s': the test's edit cannot be applied; update the anchor",
                 (int)strlen(ANCHOR) - 1, ANCHOR);
    size_t head = (size_t)(at - src) + strlen(ANCHOR);
    char *edited = NULL;
    assert_true(asprintf(&edited, "#include <time.h>\n%.*s" BUSY_WAIT "%s", (int)head, src, src + head) > 0);
    ab_write(path, edited);
    char *check = ab_read(path);
    assert_non_null(strstr(check, ANCHOR BUSY_WAIT));
    free(check);
    free(edited);
    free(src);
}

/* The text after "verdict" and its padding on the first line. */
static char *verdict(const char *out)
{
    assert_true(out && strncmp(out, "verdict", 7) == 0);
    const char *v = out + 7 + strspn(out + 7, " ");
    return strndup(v, strcspn(v, "\n"));
}

static int ab(const char *repo, const char *a, const char *b, const char *out, bool resume, char **so, char **se)
{
    const char *args[] = {"ab", a, b, "--case", "qwen", "--reps", "5", "--rounds", "12", "--outputs", out,
                          resume ? "--resume" : NULL, NULL};
    return ab_hbg(repo, args, so, se);
}

static void assert_logs(const char *out, const char *a, const char *b)
{
    char path[4096], want[512];
    for (int arm = 0; arm < 2; arm++)
        for (int i = 1; i <= 5; i++) {
            const char *c = arm ? b : a;
            snprintf(path, sizeof path, "%s/bind_qwen_numbers_%s_r%d.log", out, c, i);
            char *log = ab_read(path);
            assert_non_null(log);
            snprintf(want, sizeof want, "[stamp] %s env HBG_BIND_BREAKDOWN=1 HBG_HOST_PHASE_RECORDS=0 "
                                        "HBG_SKIP_DEVICE_RUN=1 HBG_LOG_LEVEL=timing hbg run qwen --mode numbers "
                                        "--rounds 12\n", c);
            assert_true(strncmp(log, want, strlen(want)) == 0);
            free(log);
            snprintf(path, sizeof path, "%s/bind_qwen_numbers_%s_r%d.log.out", out, c, i);
            assert_int_equal(access(path, F_OK), 0);
        }
    assert_int_equal(ab_entries(out), 20);
}

static char *root;

static int teardown(void **state)
{
    (void)state;
    ab_sandbox_free(root);
    root = NULL;
    return 0;
}

static void test_ab_finds_the_slower_commit(void **state)
{
    (void)state;
    /* the stamps below are those of an environment without switches */
    const char *sw[] = {"HBG_BIND_BREAKDOWN", "HBG_HOST_PHASE_RECORDS", "HBG_SKIP_DEVICE_RUN", "HBG_LOG_LEVEL",
                        "SIMPLER_HBG_BIND_BREAKDOWN_ENABLE", "SIMPLER_HBG_HOST_PHASE_RECORDS_ENABLE",
                        "SIMPLER_SKIP_DEVICE_RUN", "SIMPLER_LOG_LEVEL"};
    for (size_t i = 0; i < sizeof sw / sizeof *sw; i++)
        unsetenv(sw[i]);
    root = ab_sandbox("self");
    char repo[4096], out[4096];
    snprintf(repo, sizeof repo, "%s/hbg", root);
    assert_int_equal(mkdir(repo, 0755), 0);
    assert_true(ab_copy_listed(getenv("HBG_SOURCE_DIR"), repo) > 50);
    ab_git(repo, (const char *const[]){"init", "-q", NULL});
    ab_git(repo, (const char *const[]){"add", "-A", NULL});
    ab_git(repo, (const char *const[]){"commit", "-q", "-m", "A: the source tree as it is", NULL});
    char *a = ab_git_line(repo, (const char *const[]){"rev-parse", "--short=7", "HEAD", NULL});
    slow_down_host_orch(repo);
    ab_git(repo, (const char *const[]){"commit", "-q", "-a", "-m", "B: host_orch 100 us longer", NULL});
    char *b = ab_git_line(repo, (const char *const[]){"rev-parse", "--short=7", "HEAD", NULL});

    /* On a contended machine (a 2-core VM compiling next door) whole runs
     * are slowed: the verdict is then "contended — rerun", or "no
     * difference" when the arms' own spread swallows the effect. Either
     * is hbg compare declining to claim, not a wrong answer, so the test
     * reruns (the builds are reused; an attempt takes a few seconds) for
     * at most 100 s, and fails only if no attempt finds B slower. */
    char *so = NULL, *se = NULL, *v = NULL;
    int rc = -1;
    time_t t0 = time(NULL);
    for (int attempt = 1; attempt <= 40; attempt++) {
        free(so), free(se), free(v);
        snprintf(out, sizeof out, "%s/outputs-%d", root, attempt);
        rc = ab(repo, a, b, out, false, &so, &se);
        if (rc != 0 && rc != 1)
            fail_msg("hbg ab exited %d:\n%s\n%s", rc, se, so);
        v = verdict(so);
        if (attempt == 1) {
            assert_non_null(strstr(se, "hbg ab: building REV_A"));
            assert_non_null(strstr(se, "hbg ab: building REV_B"));
        }
        if (!strncmp(v, "slower", 6) || time(NULL) - t0 > 100)
            break;
        fprintf(stderr, "attempt %d: %.200s\n", attempt, v);
    }
    if (strncmp(v, "slower", 6))
        fail_msg("the verdict is '%s', not slower:\n%s", v, so);
    assert_logs(out, a, b);

    /* --resume reuses all ten logs: the stamps hbg ab expects are the ones
     * the built hbg run wrote, and nothing is built or run again */
    char *so2, *se2;
    assert_int_equal(ab(repo, a, b, out, true, &so2, &se2), rc);
    assert_null(strstr(se2, "building"));
    int reused = 0;
    for (const char *p = se2; (p = strstr(p, "(reused)")); p++)
        reused++;
    assert_int_equal(reused, 10);
    assert_string_equal(so2, so);
    free(so2);
    free(se2);
    free(v);
    free(so);
    free(se);
    free(a);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ab_finds_the_slower_commit),
    };
    return cmocka_run_group_tests(tests, NULL, teardown);
}
