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

/* Codes are stable: new ones are appended, each with its name and text. */
static void buffer_statuses(void **state)
{
    (void)state;
    assert_int_equal(HBG_E_PARSE, 22);
    assert_int_equal(HBG_E_ARG_HAS_BUFFER, 23);
    assert_int_equal(HBG_E_ARG_NO_BUFFER, 24);
    assert_int_equal(HBG_E_GRAPH_KEY_REUSED, 25);
    assert_int_equal(HBG_E_BAD_ENV, 26);
    assert_int_equal(HBG_E_PEER_GONE, 27);
    assert_string_equal(hbg_status_name(HBG_E_PEER_GONE), "HBG_E_PEER_GONE");
    assert_string_equal(hbg_strerror(HBG_E_PEER_GONE), "a peer rank has ended: its arrivals will not come");
    assert_string_equal(hbg_status_name(HBG_E_BAD_ENV), "HBG_E_BAD_ENV");
    assert_string_equal(hbg_strerror(HBG_E_BAD_ENV), "an environment switch has a value it does not take");
    assert_string_equal(hbg_status_name(HBG_E_ARG_HAS_BUFFER), "HBG_E_ARG_HAS_BUFFER");
    assert_string_equal(hbg_strerror(HBG_E_ARG_HAS_BUFFER),
                        "a tensor the runtime is to allocate already names a buffer (write into it with HBG_OUT)");
    assert_string_equal(hbg_status_name(HBG_E_ARG_NO_BUFFER), "HBG_E_ARG_NO_BUFFER");
    assert_string_equal(hbg_strerror(HBG_E_ARG_NO_BUFFER),
                        "a tensor argument names no buffer (addr 0; allocate it with HBG_OUT_ALLOC or "
                        "hbg_alloc_tensors)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(texts_are_distinct), cmocka_unit_test(buffer_statuses)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
