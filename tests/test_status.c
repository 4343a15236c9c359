/* Every status has a distinct, non-empty text and name. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "hbg/status.h"

static void texts_are_distinct(void **state)
{
    (void)state;
    for (int i = 0; i < HBG_STATUS_COUNT; i++) {
        assert_non_null(hbg_strerror((hbg_status)i));
        assert_true(strlen(hbg_strerror((hbg_status)i)) > 0);
        assert_true(strncmp(hbg_status_name((hbg_status)i), "HBG_", 4) == 0);
        for (int j = 0; j < i; j++)
            assert_string_not_equal(hbg_strerror((hbg_status)i), hbg_strerror((hbg_status)j));
    }
    assert_string_equal(hbg_strerror(HBG_E_WINDOW_FULL), "task window full");
    assert_string_equal(hbg_strerror((hbg_status)999), "unknown status");
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(texts_are_distinct)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
