/* hbg_runtime_config_from_env: both names of every switch, the record
 * pool it sizes, and a bad value named with its variable. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hbg/runtime.h"

static const char *const vars[] = {HBG_SW_BREAKDOWN, HBG_SW_RECORDS, HBG_SW_SKIP_DEVICE, HBG_SW_LOG_LEVEL};

static int clean_env(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
    return 0;
}

static void unset_leaves_config(void **state)
{
    (void)state;
    hbg_runtime_config c = {.breakdown = true, .skip_device = false, .log_level = HBG_LOG_ERROR};
    char msg[256] = "x";
    assert_int_equal(hbg_runtime_config_from_env(&c, msg, sizeof msg), HBG_OK);
    assert_string_equal(msg, "");
    assert_true(c.breakdown);
    assert_false(c.skip_device);
    assert_null(c.records);
    assert_int_equal(c.log_level, HBG_LOG_TIMING);
}

static void both_names_ours_wins(void **state)
{
    (void)state;
    hbg_runtime_config c = {0};
    setenv("SIMPLER_HBG_BIND_BREAKDOWN_ENABLE", "1", 1);
    setenv("SIMPLER_SKIP_DEVICE_RUN", "yes", 1);
    setenv("HBG_SKIP_DEVICE_RUN", "off", 1);
    setenv("SIMPLER_LOG_LEVEL", "warn", 1);
    assert_int_equal(hbg_runtime_config_from_env(&c, NULL, 0), HBG_OK);
    assert_true(c.breakdown);
    assert_false(c.skip_device);
    assert_int_equal(c.log_level, HBG_LOG_WARN);
    setenv("HBG_LOG_LEVEL", "Error", 1);
    setenv("HBG_BIND_BREAKDOWN", "0", 1);
    assert_int_equal(hbg_runtime_config_from_env(&c, NULL, 0), HBG_OK);
    assert_false(c.breakdown);
    assert_int_equal(c.log_level, HBG_LOG_ERROR);
}

static void bad_value_names_the_variable(void **state)
{
    (void)state;
    hbg_runtime_config c = {.breakdown = true};
    char msg[256];
    setenv("SIMPLER_HBG_HOST_PHASE_RECORDS_ENABLE", "maybe", 1);
    assert_int_equal(hbg_runtime_config_from_env(&c, msg, sizeof msg), HBG_E_BAD_ENV);
    assert_string_equal(msg, "SIMPLER_HBG_HOST_PHASE_RECORDS_ENABLE=maybe is not a switch value (expected "
                             "1/true/on/yes or 0/false/off/no/empty)");
    assert_null(c.records);
    unsetenv("SIMPLER_HBG_HOST_PHASE_RECORDS_ENABLE");
    setenv("HBG_LOG_LEVEL", "loud", 1);
    setenv("HBG_BIND_BREAKDOWN", "0", 1);
    assert_int_equal(hbg_runtime_config_from_env(&c, msg, sizeof msg), HBG_E_BAD_ENV);
    assert_string_equal(msg, "HBG_LOG_LEVEL=loud is not a log level (expected debug|info|timing|warn|error|off)");
    /* the message is one line, with nothing a terminal acts on */
    setenv("HBG_LOG_LEVEL", "lo\nud\033[2J", 1);
    assert_int_equal(hbg_runtime_config_from_env(&c, msg, sizeof msg), HBG_E_BAD_ENV);
    assert_string_equal(msg, "HBG_LOG_LEVEL=lo?ud?[2J is not a log level (expected debug|info|timing|warn|error|off)");
    /* nothing was changed */
    assert_true(c.breakdown);
    assert_string_equal(hbg_status_name(HBG_E_BAD_ENV), "HBG_E_BAD_ENV");
}

/* A NULL config is refused in words too: msg is what a caller prints on
 * any failure, and was left as the caller's own bytes. */
static void a_null_config_is_named(void **state)
{
    (void)state;
    char msg[64] = "the caller's bytes";
    assert_int_equal(hbg_runtime_config_from_env(NULL, msg, sizeof msg), HBG_E_INVAL);
    assert_string_equal(msg, "no config (hbg_runtime_config is NULL)");
    char small[8] = "unset";
    assert_int_equal(hbg_runtime_config_from_env(NULL, small, sizeof small), HBG_E_INVAL);
    assert_string_equal(small, "no conf");
    assert_int_equal(hbg_runtime_config_from_env(NULL, NULL, 0), HBG_E_INVAL);
}

/* Records on creates a pool of the size asked for (the default when 0):
 * records past a thread's share are dropped. Records off drops the pool. */
static void records_size_the_pool(void **state)
{
    (void)state;
    hbg_runtime_config c = {.record_threads = 1, .records_per_thread = 4};
    setenv("HBG_HOST_PHASE_RECORDS", "on", 1);
    assert_int_equal(hbg_runtime_config_from_env(&c, NULL, 0), HBG_OK);
    assert_non_null(c.records);
    hbg_recpool *p = c.records;
    hbg_recpool_arm(p, 1, 1);
    for (int i = 0; i < 5; i++)
        hbg_rec(p, HBG_PH_ARGS, (uint64_t)i, (uint64_t)i + 1, 0);
    assert_int_equal(hbg_recpool_count(p), 4);
    assert_int_equal(hbg_recpool_dropped(p), 1);
    /* a pool already there is kept, not replaced */
    assert_int_equal(hbg_runtime_config_from_env(&c, NULL, 0), HBG_OK);
    assert_ptr_equal(c.records, p);
    setenv("HBG_HOST_PHASE_RECORDS", "no", 1);
    assert_int_equal(hbg_runtime_config_from_env(&c, NULL, 0), HBG_OK);
    assert_null(c.records);
    hbg_recpool_destroy(p);
    assert_int_equal(HBG_DEFAULT_RECORD_THREADS, 4);
    assert_int_equal(HBG_DEFAULT_RECORDS_PER_THREAD, 65536);
}

/* A pool that cannot be made (2^32 records: past what a pool counts) is
 * hbg_recpool_create's status, said in msg, and the config is left as it
 * was, as for a bad value. */
static void a_pool_refused_is_said(void **state)
{
    (void)state;
    char msg[160];
    hbg_runtime_config c = {.record_threads = 65536, .records_per_thread = 65536};
    setenv("HBG_HOST_PHASE_RECORDS", "1", 1);
    setenv("HBG_BIND_BREAKDOWN", "1", 1);
    assert_int_equal(hbg_runtime_config_from_env(&c, msg, sizeof msg), HBG_E_INVAL);
    assert_string_equal(msg, "a record pool of 65536 x 65536 records: invalid argument");
    assert_null(c.records);
    assert_false(c.breakdown);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(unset_leaves_config, clean_env),
        cmocka_unit_test_setup(both_names_ours_wins, clean_env),
        cmocka_unit_test_setup(bad_value_names_the_variable, clean_env),
        cmocka_unit_test_setup(a_null_config_is_named, clean_env),
        cmocka_unit_test_setup(records_size_the_pool, clean_env),
        cmocka_unit_test_setup(a_pool_refused_is_said, clean_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
