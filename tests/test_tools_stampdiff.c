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

static void one_options_occurrences_keep_their_order(void **st)
{
    (void)st;
    SAME("1a2b3c4 p --x 1 --y --x 2", "5d6e7f8 p --y --x 1 --x 2");
    DIFFER("1a2b3c4 p --x 1 --x 2", "5d6e7f8 p --x 2 --x 1", "command option --x: '1' in A, '2' in B");
    DIFFER("1a2b3c4 p --x 1 --x 1", "5d6e7f8 p --x 1", "command option --x: given 2 times in A, 1 in B");
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

static void where_output_goes_is_no_difference(void **st)
{
    (void)st;
    SAME("1a2b3c4 hbg run qwen --rounds 6 -o a.log", "5d6e7f8 hbg run qwen --rounds 6 -o other/b.log");
    SAME("1a2b3c4 hbg run -o a.log qwen --rounds 6", "5d6e7f8 hbg run qwen --rounds 6 --log=b.log");
    SAME("1a2b3c4 hbg run qwen -oa.log --out-dir x", "5d6e7f8 hbg run qwen --out-dir=y");
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
}

static void assignments_are_a_set(void **st)
{
    (void)st;
    SAME("1a2b3c4 env A=1 B=2 p", "5d6e7f8 env B=2 A=1 p");
    DIFFER("1a2b3c4 env A=1 p", "5d6e7f8 env A=1 B=2 p", "env B=2 in B, absent from A");
    DIFFER("1a2b3c4 env A=1 p", "5d6e7f8 env A=2 p", "env A=1 in A, A=2 in B");
    DIFFER("1a2b3c4 env A=1 A=1 p", "5d6e7f8 env A=1 p", "env: 2 assignments in A, 1 in B (one is repeated)");
    /* the assignments come first: they are named before the command */
    DIFFER("1a2b3c4 env A=1 p --x 1", "5d6e7f8 env A=2 p --x 2", "env A=1 in A, A=2 in B");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(options_are_a_set),
        cmocka_unit_test(one_options_occurrences_keep_their_order),
        cmocka_unit_test(positional_words_keep_their_order),
        cmocka_unit_test(where_output_goes_is_no_difference),
        cmocka_unit_test(the_commit_stands_for_this_logs_commit),
        cmocka_unit_test(assignments_are_a_set),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
