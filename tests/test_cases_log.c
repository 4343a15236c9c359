/* The reference cases through `hbg run`: their counts as the log reports
 * them, one anchor and one burst per round for every rank process, the
 * device skipped when asked, and a killed dsv4 rank. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "support/run_support.h"
#include "support/tools_support.h"


static long long num(const char *line, const char *key)
{
    const char *p = strstr(line, key);
    return p ? strtoll(p + strlen(key), NULL, 10) : -1;
}

typedef struct expect {
    long long tasks, submit, alloc, record, graph, build;
} expect;

/* Every pass of every rank reports the case's counts; each rank process
 * has one anchor and one burst (closed by arena_h2d) per round. */
static void check_counts(const char *path, int ranks, int rounds, const expect *e)
{
    char *log = rs_slurp(path);
    long long pids[8] = {0};
    int anchors[8] = {0}, bursts[8] = {0}, np = 0;
    for (char *line = strtok(log, "\n"); line; line = strtok(NULL, "\n")) {
        long long pid = num(line, " pid=");
        int r = -1;
        for (int i = 0; i < np; i++)
            if (pids[i] == pid)
                r = i;
        if (pid >= 0 && r < 0 && np < 8)
            pids[r = np++] = pid;
        if (strstr(line, "[CLOCK_ANCHOR]"))
            anchors[r]++;
        if (strstr(line, "bind phase=arena_h2d "))
            bursts[r]++;
        if (strstr(line, "bind phase=host_orch "))
            assert_int_equal(num(line, " tasks="), e->tasks);
        if (strstr(line, "host-orch phase=submit_task "))
            assert_int_equal(num(line, " count="), e->submit);
        if (strstr(line, "host-orch phase=alloc_tensors "))
            assert_int_equal(num(line, " count="), e->alloc);
        if (strstr(line, "host-orch phase=record_node "))
            assert_int_equal(num(line, " count="), e->record);
        if (strstr(line, "host-orch phase=graph_submit "))
            assert_int_equal(num(line, " count="), e->graph);
        if (strstr(line, "host-orch phase=build_definition "))
            assert_int_equal(num(line, " count="), e->build);
    }
    assert_int_equal(np, ranks);
    for (int i = 0; i < np; i++) {
        assert_int_equal(anchors[i], 1);
        assert_int_equal(bursts[i], rounds);
    }
    free(log);
}

static void qwen_counts_in_the_log(void **state)
{
    (void)state;
    char out[16384], log[300], args[600];
    snprintf(log, sizeof log, "%s/qwen.log", rs_dir);
    snprintf(args, sizeof args, "run qwen --mode numbers --rounds 2 -o %s", log);
    assert_int_equal(rs_run("", args, out, sizeof out), 0);
    assert_non_null(strstr(out, "rank 0 (pid "));
    assert_non_null(strstr(out, "golden skipped (device run skipped); device skipped"));
    /* 5 submit_task (4 kernels + 1 dummy), 2 alloc, 40 graph_submit;
     * one 277-node Definition recorded per pass */
    expect e = {.tasks = 47, .submit = 5, .alloc = 2, .record = 277, .graph = 40, .build = 1};
    check_counts(log, 1, 2, &e);
}

static void dsv4_counts_in_the_log(void **state)
{
    (void)state;
    char out[16384], log[300], args[600];
    snprintf(log, sizeof log, "%s/dsv4.log", rs_dir);
    snprintf(args, sizeof args, "run dsv4 --mode numbers --rounds 2 -o %s", log);
    assert_int_equal(rs_run("", args, out, sizeof out), 0);
    assert_non_null(strstr(out, "rank 0 (pid "));
    assert_non_null(strstr(out, "rank 1 (pid "));
    expect e = {.tasks = 1131, .submit = 839, .alloc = 272, .record = 743, .graph = 20, .build = 1};
    check_counts(log, 2, 2, &e);
}

/* A dsv4 rank killed mid-run: its peer's cross-rank wait ends, so the run
 * ends, non-zero, naming both ranks' failures, and every log line is
 * whole. */
static void dsv4_killed_rank(void **state)
{
    (void)state;
    char log[300], outp[300];
    snprintf(log, sizeof log, "%s/killed.log", rs_dir);
    snprintf(outp, sizeof outp, "%s/killed.out", rs_dir);
    /* kill rank 1 once both ranks finished a device run */
    const char *argv[] = {"run", "dsv4", "--rounds", "1000", "--peer-timeout", "2", NULL};
    char *out = rs_kill_a_rank(argv, log, outp, "chip.run.runner_run", 2);
    /* The parent marks the dead rank as gone, so the survivor's next wait
     * (or the one under way) ends at once and it fails in its own words.
     * Once it waited out --peer-timeout, the same figure as the run's
     * bound on it: entering its wait after the death (a slow machine), it
     * lost that race and was named only as killed. The death comes
     * after round 1's device runs, where the survivor computes its
     * golden (an eager run that exchanges too) or, later, in a round. */
    bool in_round = strstr(out, "FAILED: round ") &&
                    strstr(out, " failed: a peer rank has ended: its arrivals will not come");
    bool in_golden = strstr(out, "FAILED: the golden after round 1 could not be computed: the eager golden run "
                                 "failed: ") && strstr(out, "(HBG_E_PEER_GONE)");
    if (!in_round && !in_golden)
        fail_msg("neither failure in the survivor's own words: %s", out);
    assert_null(strstr(out, "killing it"));
    assert_null(strstr(out, "after 0 of 1000 rounds"));
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(qwen_counts_in_the_log),
        cmocka_unit_test(dsv4_counts_in_the_log),
        cmocka_unit_test(dsv4_killed_rank),
    };
    return cmocka_run_group_tests(tests, rs_dir_setup, rs_dir_teardown);
}
