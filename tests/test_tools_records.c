/* The records reader (tools/records.c): every uint64 the runtime writes is
 * read exactly, and a value that is no uint64 is named for what it is. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tools/records.h"

/* One records line of one record whose detail is the text d. */
static void parse_detail(rc_file *f, dg_list *w, const char *d)
{
    char line[512];
    snprintf(line, sizeof line,
             "{\"pid\": 18446744073709551615, \"inv\": 2, \"dropped\": 0, \"records\": [{\"phase\": \"args\", "
             "\"start_ns\": 10, \"end_ns\": 20, \"detail\": %s, \"tid\": 7}]}\n",
             d);
    dg_init(w, 10);
    assert_int_equal(rc_parse(f, "R", line, strlen(line), w), HBG_OK);
}

static void detail_past_int64_is_read_exactly(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        uint64_t v;
    } cases[] = {{"9223372036854775807", 9223372036854775807ull},
                 {"9223372036854775808", 9223372036854775808ull},
                 {"18446744073709551615", 18446744073709551615ull}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rc_file f;
        dg_list w;
        parse_detail(&f, &w, cases[i].text);
        assert_int_equal(w.n, 0);
        assert_int_equal(f.nline, 1);
        assert_int_equal(f.nrec, 1);
        assert_true(f.rec[0].detail == cases[i].v);
        assert_true(f.line[0].pid == 18446744073709551615ull);
        rc_free(&f);
        dg_free(&w);
    }
}

static void a_detail_that_is_no_uint64_is_named(void **state)
{
    (void)state;
    static const struct {
        const char *text, *msg;
    } cases[] = {
        {"18446744073709551616",
         "R:1: record 0: \"detail\" is a number past 64 bits (expected an integer >= 0); line skipped"},
        {"-9223372036854775809", "R:1: record 0: \"detail\" is negative (expected an integer >= 0); line skipped"},
        {"-1", "R:1: record 0: \"detail\" is negative (expected an integer >= 0); line skipped"},
        {"\"\\u00001\"", "R:1: a string holds \\u0000 (a NUL character, which no field may have); line skipped"},
        {"1.5", "R:1: record 0: \"detail\" is not an integer (expected an integer >= 0); line skipped"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rc_file f;
        dg_list w;
        parse_detail(&f, &w, cases[i].text);
        assert_int_equal(f.nline, 0);
        assert_int_equal(f.nbad, 1);
        assert_int_equal(w.n, 1);
        assert_string_equal(w.msg[0], cases[i].msg);
        rc_free(&f);
        dg_free(&w);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(detail_past_int64_is_read_exactly),
        cmocka_unit_test(a_detail_that_is_no_uint64_is_named),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
