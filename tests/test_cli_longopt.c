/* Which long option a word names (src/cli/longopt.c), as getopt_long
 * resolves it: the exact name even where longer names start with it, a
 * prefix only one option starts with, and no option for a prefix two
 * start with. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "cli/longopt.h"

static const struct option opts[] = {
    {"rounds-max", required_argument, NULL, 1},
    {"rounds-min", required_argument, NULL, 2},
    {"rounds", required_argument, NULL, 3},
    {"quiet", no_argument, NULL, 4},
    {NULL, 0, NULL, 0},
};

static const char *named(const char *word)
{
    const struct option *p = hbg_cli_long_option(opts, word, strlen(word));
    return p ? p->name : NULL;
}

/* "rounds" is an option of its own after two that start with it: taken,
 * where the two before it made it ambiguous. */
static void the_exact_name_wins(void **state)
{
    (void)state;
    assert_string_equal(named("rounds"), "rounds");
    assert_string_equal(named("quiet"), "quiet");
}

static void a_prefix_of_one_option(void **state)
{
    (void)state;
    assert_string_equal(named("q"), "quiet");
    assert_string_equal(named("rounds-ma"), "rounds-max");
}

static void a_prefix_of_several_or_none(void **state)
{
    (void)state;
    assert_null(named("round"));
    assert_null(named("rounds-m"));
    assert_null(named("x"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_exact_name_wins),
        cmocka_unit_test(a_prefix_of_one_option),
        cmocka_unit_test(a_prefix_of_several_or_none),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
