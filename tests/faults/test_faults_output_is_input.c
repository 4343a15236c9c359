/* Fault: an output named onto one of the inputs. `hbg timeline` would
 * replace its log or records file with the trace; it refuses, exit 2, and
 * both inputs stay as they were — whatever name reaches the same file.
 * The commands that print to stdout refuse a stdout appended onto a file
 * they read (`hbg phases LOG >> LOG`) the same way. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "support/fault_support.h"
#include "support/tools_support.h"

typedef struct inputs {
    char *dir, *log, *recs, *log_text, *rec_text;
} inputs;

static void make_inputs(inputs *in)
{
    in->dir = fs_tempdir("same");
    in->log = fs_path(in->dir, "run.log");
    in->recs = fs_path(in->dir, "records.jsonl");
    in->log_text = ts_slurp(ts_fixture("hbg-run-vector-timeline.log"), NULL);
    in->rec_text = ts_slurp(ts_fixture("hbg-run-vector-timeline.host_phase_records.jsonl"), NULL);
    assert_non_null(in->log_text);
    assert_non_null(in->rec_text);
    fs_write(in->log, in->log_text);
    fs_write(in->recs, in->rec_text);
}

/* The log and the records file hold what make_inputs wrote. */
static void inputs_unchanged(const inputs *in)
{
    char *log = ts_slurp(in->log, NULL), *rec = ts_slurp(in->recs, NULL);
    assert_string_equal(log, in->log_text);
    assert_string_equal(rec, in->rec_text);
    free(log);
    free(rec);
}

/* Runs timeline LOG --records R -o out; asserts the refusal and that
 * neither input changed. */
static void refused(inputs *in, const char *out, const char *named_input)
{
    const char *args[] = {"timeline", in->log, "--records", in->recs, "-o", out, NULL};
    fs_spec spec = {.args = args};
    char *err = NULL;
    assert_int_equal(fs_run(&spec, 60, NULL, &err), 2);
    char want[1200];
    snprintf(want, sizeof want, "hbg timeline: refusing to write %s: it is the input %s\n", out, named_input);
    assert_string_equal(err, want);
    free(err);
    inputs_unchanged(in);
}

static void free_inputs(inputs *in)
{
    free(in->log);
    free(in->recs);
    free(in->log_text);
    free(in->rec_text);
    fs_rmdir(in->dir);
}

static void output_onto_the_records_file_is_refused(void **state)
{
    (void)state;
    inputs in;
    make_inputs(&in);
    refused(&in, in.recs, in.recs);
    free_inputs(&in);
}

static void output_onto_the_log_by_another_name_is_refused(void **state)
{
    (void)state;
    inputs in;
    make_inputs(&in);
    char *other = fs_path(in.dir, "alias.log");
    assert_int_equal(link(in.log, other), 0);
    refused(&in, other, in.log);
    free(other);
    free_inputs(&in);
}

/* CMD ... >> FILE through the shell: exit 2, one line naming FILE as
 * the input, and the log and records unchanged. */
static void stdout_appended(inputs *in, const char *args, const char *cmd, const char *named)
{
    char *errp = fs_path(in->dir, "err.txt"), sh[4096];
    snprintf(sh, sizeof sh, "cd '%s' && '%s' %s >> '%s' 2> '%s'", in->dir, getenv("HBG_CLI"), args, named, errp);
    int st = system(sh);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 2);
    char *err = ts_slurp(errp, NULL), want[1200];
    snprintf(want, sizeof want, "hbg %s: refusing to write standard output: it is the input %s\n", cmd, named);
    assert_string_equal(err, want);
    free(err);
    unlink(errp);
    free(errp);
    inputs_unchanged(in);
}

static void stdout_appended_onto_an_input_is_refused(void **state)
{
    (void)state;
    inputs in;
    make_inputs(&in);
    stdout_appended(&in, "phases run.log", "phases", "run.log");
    stdout_appended(&in, "spans run.log", "spans", "run.log");
    stdout_appended(&in, "spans run.log --records records.jsonl --view ops", "spans", "records.jsonl");
    stdout_appended(&in, "fit run.log", "fit", "run.log");
    char *b = fs_path(in.dir, "b.log");
    fs_write(b, in.log_text);
    stdout_appended(&in, "compare --base run.log --measure b.log", "compare", "run.log");
    unlink(b);
    free(b);
    free_inputs(&in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(output_onto_the_records_file_is_refused),
        cmocka_unit_test(output_onto_the_log_by_another_name_is_refused),
        cmocka_unit_test(stdout_appended_onto_an_input_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
