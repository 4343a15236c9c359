/* Switches: every value class under both names, our name winning, levels. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "hbg/trace.h"

static const char *const pairs[][2] = {{HBG_SW_BREAKDOWN}, {HBG_SW_RECORDS}, {HBG_SW_SKIP_DEVICE}};
#define NPAIRS (sizeof pairs / sizeof pairs[0])

static const char *const offs[] = {"0", "false", "FALSE", "False", "off", "OFF", "no", "No", ""};
static const char *const ons[] = {"1", "true", "TRUE", "on", "On", "yes", "YES"};
static const char *const bad[] = {"2", "maybe", " 1", "1 ", "enable", "y", "n", "00", "-1", "truee"};

static void clear(const char *ours, const char *original)
{
    unsetenv(ours);
    unsetenv(original);
}

/* Reads with *on preset to `preset`; returns the status, *got the result. */
static hbg_status rd(const char *ours, const char *original, bool preset, bool *got)
{
    *got = preset;
    return hbg_switch_read(ours, original, got);
}

static void unset_leaves_value(void **state)
{
    (void)state;
    for (size_t i = 0; i < NPAIRS; i++) {
        clear(pairs[i][0], pairs[i][1]);
        bool on;
        assert_int_equal(rd(pairs[i][0], pairs[i][1], true, &on), HBG_OK);
        assert_true(on);
        assert_int_equal(rd(pairs[i][0], pairs[i][1], false, &on), HBG_OK);
        assert_false(on);
        assert_null(hbg_switch_which(pairs[i][0], pairs[i][1]));
    }
}

/* Each value class, set under one name only (ours, then the original runtime's). */
static void value_classes(void **state)
{
    (void)state;
    for (size_t i = 0; i < NPAIRS; i++) {
        for (int which = 0; which < 2; which++) {
            const char *name = pairs[i][which];
            clear(pairs[i][0], pairs[i][1]);
            bool on;
            for (size_t v = 0; v < sizeof offs / sizeof offs[0]; v++) {
                setenv(name, offs[v], 1);
                assert_int_equal(rd(pairs[i][0], pairs[i][1], true, &on), HBG_OK);
                assert_false(on);
                assert_string_equal(hbg_switch_which(pairs[i][0], pairs[i][1]), name);
            }
            for (size_t v = 0; v < sizeof ons / sizeof ons[0]; v++) {
                setenv(name, ons[v], 1);
                assert_int_equal(rd(pairs[i][0], pairs[i][1], false, &on), HBG_OK);
                assert_true(on);
            }
            for (size_t v = 0; v < sizeof bad / sizeof bad[0]; v++) {
                setenv(name, bad[v], 1);
                assert_int_equal(rd(pairs[i][0], pairs[i][1], true, &on), HBG_E_INVAL);
                assert_true(on); /* untouched */
                assert_int_equal(rd(pairs[i][0], pairs[i][1], false, &on), HBG_E_INVAL);
                assert_false(on);
            }
        }
        clear(pairs[i][0], pairs[i][1]);
    }
}

/* The value alone, as a variable that also takes other values reads it. */
static void value_alone(void **state)
{
    (void)state;
    bool on = true;
    for (size_t v = 0; v < sizeof offs / sizeof offs[0]; v++) {
        on = true;
        assert_int_equal(hbg_switch_value(offs[v], &on), HBG_OK);
        assert_false(on);
    }
    for (size_t v = 0; v < sizeof ons / sizeof ons[0]; v++) {
        assert_int_equal(hbg_switch_value(ons[v], &on), HBG_OK);
        assert_true(on);
    }
    for (size_t v = 0; v < sizeof bad / sizeof bad[0]; v++) {
        on = true;
        assert_int_equal(hbg_switch_value(bad[v], &on), HBG_E_INVAL);
        assert_true(on);
    }
    assert_int_equal(hbg_switch_value(NULL, &on), HBG_E_INVAL);
    assert_int_equal(hbg_switch_value("on", NULL), HBG_E_INVAL);
}

static void ours_wins(void **state)
{
    (void)state;
    for (size_t i = 0; i < NPAIRS; i++) {
        const char *ours = pairs[i][0], *original = pairs[i][1];
        bool on;
        setenv(ours, "0", 1);
        setenv(original, "1", 1);
        assert_int_equal(rd(ours, original, true, &on), HBG_OK);
        assert_false(on);
        assert_string_equal(hbg_switch_which(ours, original), ours);
        setenv(ours, "yes", 1);
        setenv(original, "no", 1);
        assert_int_equal(rd(ours, original, false, &on), HBG_OK);
        assert_true(on);
        /* Set but empty still counts as set: ours says off. */
        setenv(ours, "", 1);
        setenv(original, "1", 1);
        assert_int_equal(rd(ours, original, true, &on), HBG_OK);
        assert_false(on);
        /* Our bad value is an error even when the original runtime's is fine ... */
        setenv(ours, "maybe", 1);
        assert_int_equal(rd(ours, original, true, &on), HBG_E_INVAL);
        /* ... and the original runtime's bad value is never looked at when ours is set. */
        setenv(ours, "1", 1);
        setenv(original, "maybe", 1);
        assert_int_equal(rd(ours, original, false, &on), HBG_OK);
        assert_true(on);
        clear(ours, original);
    }
}

static void no_seed_name(void **state)
{
    (void)state;
    unsetenv("HBG_TEST_SWITCH");
    bool on = true;
    assert_int_equal(hbg_switch_read("HBG_TEST_SWITCH", NULL, &on), HBG_OK);
    assert_true(on);
    setenv("HBG_TEST_SWITCH", "off", 1);
    assert_int_equal(hbg_switch_read("HBG_TEST_SWITCH", NULL, &on), HBG_OK);
    assert_false(on);
    unsetenv("HBG_TEST_SWITCH");
    assert_int_equal(hbg_switch_read(NULL, "X", &on), HBG_E_INVAL);
    assert_int_equal(hbg_switch_read("HBG_TEST_SWITCH", NULL, NULL), HBG_E_INVAL);
}

static void log_level(void **state)
{
    (void)state;
    clear(HBG_SW_LOG_LEVEL);
    hbg_level l = HBG_LOG_ERROR;
    assert_int_equal(hbg_switch_level(&l), HBG_OK);
    assert_int_equal(l, HBG_LOG_TIMING);

    static const char *const names[] = {"debug", "info", "timing", "warn", "error", "off"};
    for (int which = 0; which < 2; which++) {
        const char *name = which ? "SIMPLER_LOG_LEVEL" : "HBG_LOG_LEVEL";
        clear(HBG_SW_LOG_LEVEL);
        for (int i = 0; i <= HBG_LOG_OFF; i++) {
            setenv(name, names[i], 1);
            l = (hbg_level)((i + 1) % 6);
            assert_int_equal(hbg_switch_level(&l), HBG_OK);
            assert_int_equal(l, i);
        }
        setenv(name, "WaRn", 1);
        assert_int_equal(hbg_switch_level(&l), HBG_OK);
        assert_int_equal(l, HBG_LOG_WARN);
        setenv(name, "", 1);
        l = HBG_LOG_ERROR;
        assert_int_equal(hbg_switch_level(&l), HBG_OK);
        assert_int_equal(l, HBG_LOG_TIMING);
        setenv(name, "loud", 1);
        l = HBG_LOG_ERROR;
        assert_int_equal(hbg_switch_level(&l), HBG_E_INVAL);
        assert_int_equal(l, HBG_LOG_ERROR);
    }
    setenv("HBG_LOG_LEVEL", "debug", 1);
    setenv("SIMPLER_LOG_LEVEL", "error", 1);
    assert_int_equal(hbg_switch_level(&l), HBG_OK);
    assert_int_equal(l, HBG_LOG_DEBUG);
    clear(HBG_SW_LOG_LEVEL);
    assert_int_equal(hbg_switch_level(NULL), HBG_E_INVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(unset_leaves_value), cmocka_unit_test(value_classes), cmocka_unit_test(value_alone),
        cmocka_unit_test(ours_wins),
        cmocka_unit_test(no_seed_name),       cmocka_unit_test(log_level),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
