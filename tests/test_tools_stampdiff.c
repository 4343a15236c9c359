/* Two stamps, the commit aside: the assignments agree as a set, the
 * program and its positional words in order, the options as a set (one
 * option's occurrences in order), and where output goes or how long a run
 * may last is no difference. Each case names the first difference
 * exactly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "tools/stampdiff.h"

static char said[768];

/* NULL when stamps a and b agree, else the difference (A is a, B is b) */
static const char *diff(const char *a, const char *b)
{
    said[0] = 0;
    return sd_differ(a, strlen(a), b, strlen(b), "A", "B", said, sizeof said) ? said : NULL;
}

#define SAME(a, b) assert_null(diff(a, b))
#define DIFFER(a, b, want)                                                                                      \
    do {                                                                                                       \
        assert_non_null(diff(a, b));                                                                           \
        assert_string_equal(said, want);                                                                       \
    } while (0)

static void options_are_a_set(void **st)
{
    (void)st;
    SAME("1a2b3c4 env X=1 hbg run qwen --mode numbers --rounds 6",
         "5d6e7f8 env X=1 hbg run qwen --rounds 6 --mode numbers");
    SAME("1a2b3c4 env X=1 hbg run qwen --rounds=6", "5d6e7f8 env X=1 hbg run qwen --rounds 6");
    /* the words after "--x=v" join its value as they join "--x v"'s: once
     * the first was an option and a positional word, the second one option */
    SAME("1a2b3c4 python main.py --rounds=6 qwen", "5d6e7f8 python main.py --rounds 6 qwen");
    DIFFER("1a2b3c4 python main.py --rounds=6 qwen", "5d6e7f8 python main.py --rounds 6 dsv4",
           "command option --rounds: '6 qwen' in A, '6 dsv4' in B");
    DIFFER("1a2b3c4 p --x= y", "5d6e7f8 p --x y", "command option --x: ' y' in A, 'y' in B");
    /* a control byte quoted from a stamp never reaches the terminal */
    DIFFER("1a2b3c4 p --x 5", "5d6e7f8 p --x 5\x1b[31mX\x07", "command option --x: '5' in A, '5?[31mX?' in B");
    SAME("1a2b3c4 env X=1 python main.py --rounds 6 --log-level timing",
         "5d6e7f8 env X=1 python main.py --log-level timing --rounds 6");
    /* a negative number is a value, not an option of its own */
    SAME("1a2b3c4 p --a -1 --b -2", "5d6e7f8 p --b -2 --a -1");
    DIFFER("1a2b3c4 p --a -1 --b -2", "5d6e7f8 p --a -2 --b -1", "command option --a: '-1' in A, '-2' in B");
    DIFFER("1a2b3c4 env X=1 hbg run qwen --mode numbers --rounds 6",
           "5d6e7f8 env X=1 hbg run qwen --rounds 7 --mode numbers", "command option --rounds: '6' in A, '7' in B");
    DIFFER("1a2b3c4 hbg run qwen --rounds 6 --keep-definitions", "5d6e7f8 hbg run qwen --rounds 6",
           "command option --keep-definitions in A, absent from B");
    DIFFER("1a2b3c4 hbg run qwen", "5d6e7f8 hbg run qwen --tile-unit 64",
           "command option --tile-unit 64 in B, absent from A");
    DIFFER("1a2b3c4 p --x", "5d6e7f8 p --x=", "command option --x: no value in A, '' in B");
}

/* An earlier revision of hbg run stamped its options as typed; a later one
 * stamps one spelling. So `hbg ab OLD NEW -- --device-memory 1g` was
 * refused as two different commands: in two hbg run stamps a decimal is
 * its number and a --device-memory its bytes. Elsewhere "007" is a word. */
static void run_values_by_what_they_mean(void **st)
{
    (void)st;
    SAME("1a2b3c4 hbg run qwen --rounds 03 --device-memory 1g", "5d6e7f8 hbg run qwen --rounds 3 --device-memory 1G");
    SAME("1a2b3c4 hbg run qwen --device-memory 1024M", "5d6e7f8 hbg run qwen --device-memory=1G");
    SAME("1a2b3c4 hbg run qwen --device-memory 1048576k", "5d6e7f8 hbg run qwen --device-memory 1073741824");
    SAME("1a2b3c4 hbg run qwen --rounds 0", "5d6e7f8 hbg run qwen --rounds 000");
    DIFFER("1a2b3c4 hbg run qwen --device-memory 1g", "5d6e7f8 hbg run qwen --device-memory 1025M",
           "command option --device-memory: '1g' in A, '1025M' in B");
    DIFFER("1a2b3c4 hbg run qwen --rounds 03", "5d6e7f8 hbg run qwen --rounds 30",
           "command option --rounds: '03' in A, '30' in B");
    DIFFER("1a2b3c4 hbg run qwen --device-memory 1x", "5d6e7f8 hbg run qwen --device-memory 1X",
           "command option --device-memory: '1x' in A, '1X' in B");
    DIFFER("1a2b3c4 python main.py --rounds 03", "5d6e7f8 python main.py --rounds 3",
           "command option --rounds: '03' in A, '3' in B");
    DIFFER("1a2b3c4 hbg run qwen --rounds 3", "5d6e7f8 python main.py --rounds 03",
           "command word 1: 'hbg' in A, 'python' in B");
}

/* hbg run's --mode, --skip-device-run and --log-level do nothing but set
 * switches; where the stamp gives every switch resolved (as hbg run's
 * stamps do), the switches are compared and those options are not. */
static void hbg_run_switch_options_are_their_switches(void **st)
{
    (void)st;
#define ENV_NUM "env HBG_BIND_BREAKDOWN=1 HBG_HOST_PHASE_RECORDS=0 HBG_SKIP_DEVICE_RUN=1 HBG_LOG_LEVEL=timing "
    SAME("1a2b3c4 " ENV_NUM "hbg run qwen --mode numbers --rounds 6", "5d6e7f8 " ENV_NUM "hbg run qwen --rounds 6");
    SAME("1a2b3c4 " ENV_NUM "build/hbg run qwen --skip-device-run --rounds 6 --log-level timing",
         "5d6e7f8 " ENV_NUM "build/hbg run qwen --rounds 6 --mode numbers");
    /* the switches still differ where they do */
    DIFFER("1a2b3c4 " ENV_NUM "hbg run qwen --mode numbers",
           "5d6e7f8 env HBG_BIND_BREAKDOWN=1 HBG_HOST_PHASE_RECORDS=1 HBG_SKIP_DEVICE_RUN=1 HBG_LOG_LEVEL=timing "
           "hbg run qwen --mode timeline",
           "env HBG_HOST_PHASE_RECORDS=0 in A, HBG_HOST_PHASE_RECORDS=1 in B");
    /* and the other options as before */
    DIFFER("1a2b3c4 " ENV_NUM "hbg run qwen --mode numbers --rounds 6", "5d6e7f8 " ENV_NUM "hbg run qwen --rounds 7",
           "command option --rounds: '6' in A, '7' in B");
    /* a stamp without every switch resolved: the option is all it has */
    DIFFER("1a2b3c4 env HBG_BIND_BREAKDOWN=1 hbg run qwen --mode numbers",
           "5d6e7f8 env HBG_BIND_BREAKDOWN=1 hbg run qwen", "command option --mode numbers in A, absent from B");
    /* another program's --mode is a condition */
    DIFFER("1a2b3c4 " ENV_NUM "python run.py --mode numbers", "5d6e7f8 " ENV_NUM "python run.py",
           "command option --mode numbers in A, absent from B");
    DIFFER("1a2b3c4 " ENV_NUM "hbg phases --mode numbers", "5d6e7f8 " ENV_NUM "hbg phases",
           "command option --mode numbers in A, absent from B");
    DIFFER("1a2b3c4 " ENV_NUM "myhbg run qwen --mode numbers", "5d6e7f8 " ENV_NUM "myhbg run qwen",
           "command option --mode numbers in A, absent from B");
#undef ENV_NUM
}

static void one_options_occurrences_keep_their_order(void **st)
{
    (void)st;
    SAME("1a2b3c4 p --x 1 --y --x 2", "5d6e7f8 p --y --x 1 --x 2");
    DIFFER("1a2b3c4 p --x 1 --x 2", "5d6e7f8 p --x 2 --x 1", "command option --x: '1' in A, '2' in B");
    /* once as "once", not "1 times" nor a bare "1" */
    DIFFER("1a2b3c4 p --x 1 --x 1", "5d6e7f8 p --x 1", "command option --x: given 2 times in A, once in B");
    DIFFER("1a2b3c4 p --x 1", "5d6e7f8 p --x 1 --x 1", "command option --x: given once in A, 2 times in B");
    DIFFER("1a2b3c4 p --x 1 --x 1 --x 1", "5d6e7f8 p --x 1 --x 1", "command option --x: given 3 times in A, 2 in B");
}

static void positional_words_keep_their_order(void **st)
{
    (void)st;
    DIFFER("1a2b3c4 hbg run qwen --rounds 6", "5d6e7f8 hbg run dsv4 --rounds 6",
           "command word 3: 'qwen' in A, 'dsv4' in B");
    DIFFER("1a2b3c4 hbg run qwen", "5d6e7f8 hbg run", "command word 3: 'qwen' in A, '(end)' in B");
    /* words after an option are its value: moved, they are another command */
    DIFFER("1a2b3c4 p --f x y", "5d6e7f8 p y --f x", "command word 2: '(end)' in A, 'y' in B");
    /* after --, every word is positional */
    DIFFER("1a2b3c4 p -- --a --b", "5d6e7f8 p -- --b --a", "command word 3: '--a' in A, '--b' in B");
    SAME("1a2b3c4 p - --a 1", "5d6e7f8 p - --a 1");
}

/* -inf and -nan are values, as -1 is */
static void numbers_are_values(void **st)
{
    (void)st;
    DIFFER("1a2b3c4 ./bench --lo -inf --hi -nan", "5d6e7f8 ./bench --lo -nan --hi -inf",
           "command option --hi: '-nan' in A, '-inf' in B");
    SAME("1a2b3c4 ./bench --lo -Inf --hi -NaN", "5d6e7f8 ./bench --hi -NaN --lo -Inf");
}

/* Past 255 words the rest of a stamp is one plain word, compared as it
 * is: an option at its start does not make it an option, nor left out. */
static void the_rest_past_the_cap_is_compared(void **st)
{
    (void)st;
    static char a[8192], b[8192];
    strcpy(a, "1a2b3c4 p");
    strcpy(b, "5d6e7f8 p");
    for (int i = 1; i <= 253; i++) {
        snprintf(a + strlen(a), sizeof a - strlen(a), " w%d", i);
        snprintf(b + strlen(b), sizeof b - strlen(b), " w%d", i);
    }
    strcat(a, " -o x.log --rounds 6");
    strcat(b, " -o x.log --rounds 7");
    DIFFER(a, b, "command word 255: '-o x.log --rounds 6' in A, '-o x.log --rounds 7' in B");
}

static void where_output_goes_is_no_difference(void **st)
{
    (void)st;
    SAME("1a2b3c4 hbg run qwen --rounds 6 -o a.log", "5d6e7f8 hbg run qwen --rounds 6 -o other/b.log");
    SAME("1a2b3c4 hbg run -o a.log qwen --rounds 6", "5d6e7f8 hbg run qwen --rounds 6 --log=b.log");
    SAME("1a2b3c4 hbg run qwen -o a.log --out-dir x", "5d6e7f8 hbg run qwen --out-dir=y");
    /* other programs' single-dash options that start with o are conditions */
    DIFFER("1a2b3c4 ./bench -opt-level=3", "5d6e7f8 ./bench -opt-level=0",
           "command option -opt-level: '3' in A, '0' in B");
    DIFFER("1a2b3c4 ./bench -offload --rounds 6", "5d6e7f8 ./bench --rounds 6",
           "command option -offload in A, absent from B");
    SAME("1a2b3c4 hbg run qwen --time-limit 60 --peer-timeout 5", "5d6e7f8 hbg run qwen --peer-timeout=30");
    /* --log-level is not --log */
    DIFFER("1a2b3c4 hbg run qwen --log-level timing", "5d6e7f8 hbg run qwen --log-level info",
           "command option --log-level: 'timing' in A, 'info' in B");
}

static void the_commit_stands_for_this_logs_commit(void **st)
{
    (void)st;
    SAME("1a2b3c4 p --name run_1a2b3c4", "5d6e7f8-dirty p --name run_5d6e7f8-dirty");
    SAME("1a2b3c4-dirty p --name run_1a2b3c4", "5d6e7f8 p --name run_5d6e7f8");
    DIFFER("1a2b3c4 p --name run_1a2b3c4", "5d6e7f8 p --name run_0badc0d",
           "command option --name: 'run_1a2b3c4' in A, 'run_0badc0d' in B");
    /* only as a whole token: the commit inside a longer name or number is
     * no commit */
    DIFFER("1a2b3c4 hbg run qwen --rounds 1a2b3c40", "5d6e7f8 hbg run qwen --rounds 5d6e7f80",
           "command option --rounds: '1a2b3c40' in A, '5d6e7f80' in B");
    DIFFER("1a2b3c4 p x1a2b3c4.log", "5d6e7f8 p x5d6e7f8.log",
           "command word 2: 'x1a2b3c4.log' in A, 'x5d6e7f8.log' in B");
    DIFFER("1a2b3c4 env X=21a2b3c4 p", "5d6e7f8 env X=25d6e7f8 p", "env X=21a2b3c4 in A, X=25d6e7f8 in B");
    SAME("1a2b3c4 p --name run_1a2b3c4_r1.log", "5d6e7f8 p --name run_5d6e7f8_r1.log");
    SAME("1a2b3c4-dirty p --name run_1a2b3c4-dirty.log", "5d6e7f8 p --name run_5d6e7f8.log");
    SAME("1a2b3c4 p --name 1a2b3c4/x", "5d6e7f8 p --name 5d6e7f8/x");
    SAME("1a2b3c4 p 1a2b3c4", "5d6e7f8 p 5d6e7f8");
    /* git's shortest abbreviation, 4 hex digits, and a whole hash */
    SAME("beef p --name run_beef.log", "cafe p --name run_cafe.log");
    SAME("1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d p --x 1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d",
         "0badc0de0badc0de0badc0de0badc0de0badc0de p --x 0badc0de0badc0de0badc0de0badc0de0badc0de");
}

/* A commit that is no git hash (under 4 hex digits, or not hex) stands
 * for nothing in the other words, whatever a program's own stamp gives:
 * of commits 1 and 2, `--rounds 1` and `--rounds 2` were taken for the
 * commits, and 1 round was no difference against 2. */
static void a_commit_that_is_no_hash_stands_for_itself(void **st)
{
    (void)st;
    DIFFER("1 hbg run qwen --rounds 1", "2 hbg run qwen --rounds 2", "command option --rounds: '1' in A, '2' in B");
    DIFFER("1 hbg run qwen --rounds 10", "2 hbg run qwen --rounds 20", "command option --rounds: '10' in A, '20' in B");
    DIFFER("1 p 1", "2 p 2", "command word 2: '1' in A, '2' in B");
    DIFFER("1 env X=1 p", "2 env X=2 p", "env X=1 in A, X=2 in B");
    DIFFER("1-dirty p --x 1", "2 p --x 2", "command option --x: '1' in A, '2' in B");
    DIFFER("abc p --x abc", "def p --x def", "command option --x: 'abc' in A, 'def' in B");
    DIFFER("v1.0 p --name run_v1.0.log", "v2.0 p --name run_v2.0.log",
           "command option --name: 'run_v1.0.log' in A, 'run_v2.0.log' in B");
    DIFFER("unknown p --x unknown", "1a2b3c4 p --x 1a2b3c4", "command option --x: 'unknown' in A, '1a2b3c4' in B");
    /* the stamps' first words are still their commits, not a difference */
    SAME("1 hbg run qwen --rounds 3", "2 hbg run qwen --rounds 3");
}

static void assignments_are_a_set(void **st)
{
    (void)st;
    SAME("1a2b3c4 env A=1 B=2 p", "5d6e7f8 env B=2 A=1 p");
    DIFFER("1a2b3c4 env A=1 p", "5d6e7f8 env A=1 B=2 p", "env B=2 in B, absent from A");
    DIFFER("1a2b3c4 env A=1 p", "5d6e7f8 env A=2 p", "env A=1 in A, A=2 in B");
    /* a variable's value is its last assignment, as env applies them */
    SAME("1a2b3c4 env A=1 A=1 p", "5d6e7f8 env A=1 p");
    SAME("1a2b3c4 env X=1 X=2 p", "5d6e7f8 env X=2 p");
    SAME("1a2b3c4 env A=1 B=2 A=3 p", "5d6e7f8 env B=2 A=3 p");
    DIFFER("1a2b3c4 env X=1 X=2 p", "5d6e7f8 env X=2 X=1 p", "env X=2 in A, X=1 in B");
    DIFFER("1a2b3c4 env X=1 X=2 X=1 p", "5d6e7f8 env X=1 X=2 X=2 p", "env X=1 in A, X=2 in B");
    /* the assignments come first: they are named before the command */
    DIFFER("1a2b3c4 env A=1 p --x 1", "5d6e7f8 env A=2 p --x 2", "env A=1 in A, A=2 in B");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(options_are_a_set),
        cmocka_unit_test(run_values_by_what_they_mean),
        cmocka_unit_test(hbg_run_switch_options_are_their_switches),
        cmocka_unit_test(one_options_occurrences_keep_their_order),
        cmocka_unit_test(positional_words_keep_their_order),
        cmocka_unit_test(numbers_are_values),
        cmocka_unit_test(the_rest_past_the_cap_is_compared),
        cmocka_unit_test(where_output_goes_is_no_difference),
        cmocka_unit_test(the_commit_stands_for_this_logs_commit),
        cmocka_unit_test(a_commit_that_is_no_hash_stands_for_itself),
        cmocka_unit_test(assignments_are_a_set),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
