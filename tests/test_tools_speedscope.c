/* speedscope, a real consumer of `hbg timeline`'s traces: every trace that
 * test_tools_timeline writes (kept in $HBG_TRACE_KEEP and listed in its
 * traces.txt; CTest runs that test first) is imported by speedscope's own
 * importer (scripts/speedscope/check.mjs) with no import error and no
 * nesting warning. A hand-written trace that does not nest, and one that
 * is no profile at all, are rejected: the check can fail.
 *
 * Without node or the pinned modules (scripts/deps-speedscope.sh installs
 * them) the test is skipped (exit 77, which CTest shows as skipped), unless
 * HBG_REQUIRE_SPEEDSCOPE=1 (CI sets it): then it fails. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/tools_support.h"

static char checker[4096];

/* node check.mjs FILES... (NULL-terminated); the exit status, stdout and
 * stderr. */
static int check(const char *const *files, char **out, char **err)
{
    const char *head[] = {"node", checker};
    return ts_exec_args(head, 2, files, NULL, out, err);
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; p && (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static void test_misnested_rejected(void **st)
{
    (void)st;
    char path[4096], *out, *err;
    snprintf(path, sizeof path, "%s/tests/data/speedscope-misnested.json", getenv("HBG_SOURCE_DIR"));
    const char *f[] = {path, NULL};
    assert_int_equal(check(f, &out, &err), 1);
    assert_true(ts_contains(err, "Tried to end \"outer {\"inv\":1}\" when \"inner {\"inv\":1}\" was on the top of "
                                 "the stack"));
    assert_true(ts_contains(out, "speedscope-misnested.json: REJECTED: 2 problems\n"));
    free(out);
    free(err);
}

/* An empty trace is no profile to speedscope: not imported, rejected. */
static void test_empty_trace_rejected(void **st)
{
    (void)st;
    static const char empty[] = "{\"traceEvents\":[\n],\"displayTimeUnit\":\"ns\"}\n";
    char *p = ts_temp_file(empty, sizeof empty - 1, ".json"), *out, *err;
    const char *f[] = {p, NULL};
    assert_int_equal(check(f, &out, &err), 1);
    assert_true(ts_contains(err, "no profile was loaded"));
    assert_int_equal(count(out, ": REJECTED: "), 1);
    free(out);
    free(err);
    unlink(p);
    free(p);
}

static void test_every_timeline_trace_imports(void **st)
{
    (void)st;
    const char *dir = getenv("HBG_TRACE_KEEP");
    assert_non_null(dir);
    char path[4096];
    snprintf(path, sizeof path, "%s/traces.txt", dir);
    char *list = ts_slurp(path, NULL);
    assert_non_null(list);
    /* as many as the timeline tests kept: the list grows with them */
    size_t n = 0, cap = 1;
    for (const char *c = list; *c; c++)
        cap += *c == '\n';
    char **files = calloc(cap + 1, sizeof *files);
    assert_non_null(files);
    for (char *l = strtok(list, "\n"); l; l = strtok(NULL, "\n")) {
        assert_true(n < cap);
        size_t k = strlen(dir) + strlen(l) + 2;
        files[n] = malloc(k);
        assert_non_null(files[n]);
        snprintf(files[n++], k, "%s/%s", dir, l);
    }
    /* every shape hbg timeline writes: both grammars, with records, two
     * ranks with device lanes, pipelined slots, the scheduler's node
     * spans, a real 2-rank device run, the per-invocation view */
    static const char *const shapes[] = {"-original-2rank-interleaved-records.json", "-ours-1rank-4pass.json",
                                         "-spans-ours-2rank.json", "-spans-original-pipelined.json",
                                         "-spans-original-node.json", "-hbg-run-vector-timeline-records.json",
                                         "-run-records.json", "-spans-original-pipelined-per-invocation.json",
                                         "-spans-ours-2rank-per-invocation.json"};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        size_t seen = 0;
        for (size_t i = 0; i < n; i++)
            seen += ts_contains(files[i], shapes[s]);
        if (!seen)
            fprintf(stderr, "no trace %s among the kept ones\n", shapes[s]);
        assert_true(seen > 0);
    }
    char *out, *err;
    int rc = check((const char *const *)files, &out, &err);
    if (rc != 0)
        fprintf(stderr, "%s%s", out ? out : "", err ? err : "");
    assert_int_equal(rc, 0);
    assert_int_equal(count(out, ": ok: speedscope "), n);
    assert_int_equal(count(out, ", no warnings\n"), n);
    assert_string_equal(err, "");
    free(out);
    free(err);
    for (size_t i = 0; i < n; i++)
        free(files[i]);
    free(files);
    free(list);
}

/* node and the modules, or why not. */
static int checker_missing(char **why)
{
    const char *help[] = {"--help", NULL};
    char *out;
    int rc = check(help, &out, why);
    free(out);
    if (rc == 127) {
        free(*why);
        *why = strdup("node is not on PATH\n");
    }
    return rc != 0;
}

int main(void)
{
    snprintf(checker, sizeof checker, "%s/scripts/speedscope/check.mjs", getenv("HBG_SOURCE_DIR"));
    char *why = NULL;
    if (checker_missing(&why)) {
        const char *req = getenv("HBG_REQUIRE_SPEEDSCOPE");
        bool required = req && !strcmp(req, "1");
        fprintf(stderr, "test_tools_speedscope: %s: %s", required ? "FAILED (HBG_REQUIRE_SPEEDSCOPE=1)" : "skipped",
                why ? why : "");
        fprintf(stderr, "test_tools_speedscope: install node, npm and the modules with scripts/deps-speedscope.sh\n");
        free(why);
        return required ? 1 : 77;
    }
    free(why);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_misnested_rejected),
        cmocka_unit_test(test_empty_trace_rejected),
        cmocka_unit_test(test_every_timeline_trace_imports),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
