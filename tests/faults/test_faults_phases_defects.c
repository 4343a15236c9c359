/* Fault: a defect most (or all) passes share. A `dur_ns` past 64 bits on
 * the host_orch line of a pass makes the line unreadable; the pass is then
 * excluded for it, and the segment set the intact passes are held to is
 * the set the passes emitted, so neither a total without host_orch nor
 * the exclusion of the intact minority can come out of it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "support/fault_support.h"
#include "support/tools_support.h"

/* The 4-pass fixture with the host_orch dur_ns of each inv in `broken`
 * (a string of inv digits) past 64 bits; returns the temporary's path. */
static char *break_host_orch(const char *broken)
{
    char *text = ts_slurp(ts_fixture("ours-1rank-4pass.log"), NULL);
    assert_non_null(text);
    size_t cap = strlen(text) + 4096, n = 0;
    char *out = malloc(cap);
    assert_non_null(out);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char *inv = strstr(line, " inv=");
        char *dur = strstr(line, " dur_ns=");
        bool hit = strstr(line, "phase=host_orch ") && inv && dur && strchr(broken, inv[5]);
        if (hit) {
            *dur = 0;
            char *rest = strchr(dur + 1, ' ');
            n += (size_t)snprintf(out + n, cap - n, "%s dur_ns=99999999999999999999%s\n", line, rest);
        } else {
            n += (size_t)snprintf(out + n, cap - n, "%s\n", line);
        }
    }
    char *path = ts_temp_file(out, n, ".log");
    assert_non_null(path);
    free(out);
    free(text);
    return path;
}

static void every_pass_sharing_a_defect_leaves_no_statistics(void **state)
{
    (void)state;
    char *log = break_host_orch("1234");
    const char *args[] = {"phases", log, NULL};
    fs_spec spec = {.args = args};
    char *out = NULL, *err = NULL;
    assert_int_equal(fs_run(&spec, 60, &out, &err), 1);
    assert_string_equal(out, "");
    fs_expect(err, ":30: malformed bind line: dur_ns= is a number past 64 bits; ignored\n");
    fs_expect(err, ":24: pass pid=4242 inv=2 has a malformed line that was ignored (line 30); excluded\n");
    fs_expect(err, ": no usable passes: all 3 warm passes were excluded (3 with an ignored line; see the warnings)\n");
    unlink(log);
    free(log);
    free(out);
    free(err);
}

static void the_intact_minority_is_the_one_used(void **state)
{
    (void)state;
    char *log = break_host_orch("23");
    const char *args[] = {"phases", log, NULL};
    fs_spec spec = {.args = args};
    char *out = NULL, *err = NULL;
    assert_int_equal(fs_run(&spec, 60, &out, &err), 0);
    fs_expect(out, "passes  4 in 1 rank: 1 cold (dropped), 3 warm; 2 excluded; 1 used\n");
    fs_expect(out, "\nhost_orch          *            2000              2000            2000     1\n");
    fs_expect(err, ":44: pass pid=4242 inv=3 has a malformed line that was ignored (line 50); excluded\n");
    assert_null(strstr(err, "other segments"));
    unlink(log);
    free(log);
    free(out);
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_pass_sharing_a_defect_leaves_no_statistics),
        cmocka_unit_test(the_intact_minority_is_the_one_used),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
