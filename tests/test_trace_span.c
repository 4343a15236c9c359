/* [STRACE] span lines: exact shape, percent-encoding of names, clk=dev. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "hbg/trace.h"
#include "support/capture.h"

/* Emits one span into a fresh log; returns the span's line after the
 * record prefix (the anchor line is checked and skipped). */
static char *span_message(const hbg_span *s)
{
    int fd = capture_open();
    hbg_log *lg = NULL;
    assert_int_equal(hbg_log_open(fd, HBG_LOG_TIMING, &lg), HBG_OK);
    hbg_log_span(lg, s);
    hbg_log_close(lg);
    char *out = capture_read(fd, NULL);
    close(fd);
    char *a = capture_line(out, 0), *l = capture_line(out, 1);
    assert_non_null(strstr(a, "[CLOCK_ANCHOR]"));
    assert_non_null(l);
    assert_null(capture_line(out, 2));
    unsigned long long mono;
    unsigned long th;
    int n = -1;
    assert_int_equal(sscanf(l, "[mono_ns=%llu][T0x%lx][TIMING] emit_host_span: %n", &mono, &th, &n), 2);
    assert_true(n > 0);
    char *msg = strdup(l + n);
    free(a);
    free(l);
    free(out);
    return msg;
}

static void fixture_shape(void **state)
{
    (void)state;
    hbg_span s = {.inv = 1, .hid = 0x8f3a1c2e9d0b4471ull, .pid = 31337, .tid = 31402, .depth = 1,
                  .name = "chip.run.bind", .ts = 5120000000000ull, .dur = 5334366526ull};
    char *m = span_message(&s);
    /* Byte for byte as the original runtime writes it, trailing space included. */
    assert_string_equal(m, "[STRACE] v=1 pid=31337 tid=31402 inv=1 hid=8f3a1c2e9d0b4471 depth=1 "
                           "name=chip.run.bind ts=5120000000000 dur=5334366526 ");
    free(m);

    hbg_span d = {.inv = 18446744073709551615ull, .hid = 1, .pid = 7, .tid = 8, .depth = 2,
                  .name = "chip.run.runner_run.device_wall", .ts = 0, .dur = 40016810, .dev_clock = true};
    m = span_message(&d);
    assert_string_equal(m, "[STRACE] v=1 pid=7 tid=8 inv=18446744073709551615 hid=0000000000000001 depth=2 "
                           "name=chip.run.runner_run.device_wall ts=0 dur=40016810 clk=dev");
    free(m);
}

static void parse_back(void **state)
{
    (void)state;
    hbg_span s = {.inv = 3, .hid = 0xabcdef, .pid = (uint32_t)getpid(), .tid = hbg_gettid(), .depth = 0,
                  .name = "chip.run", .ts = 123, .dur = 456};
    char *m = span_message(&s);
    unsigned pid, tid, depth;
    unsigned long long inv, hid, ts, dur;
    char name[64];
    int n = -1;
    assert_int_equal(sscanf(m, "[STRACE] v=1 pid=%u tid=%u inv=%llu hid=%llx depth=%u name=%63s ts=%llu dur=%llu %n",
                            &pid, &tid, &inv, &hid, &depth, name, &ts, &dur, &n),
                     8);
    assert_int_equal((size_t)n, strlen(m));
    assert_int_equal(pid, s.pid);
    assert_int_equal(tid, s.tid);
    assert_int_equal(inv, 3);
    assert_int_equal(hid, 0xabcdef);
    assert_int_equal(depth, 0);
    assert_string_equal(name, "chip.run");
    assert_int_equal(ts, 123);
    assert_int_equal(dur, 456);
    free(m);
}

static void percent_encoding(void **state)
{
    (void)state;
    hbg_span s = {.name = "a b%c[d]e=f\x01\x7f\xc3\xa9.g~!\t", .ts = 1, .dur = 2};
    char *m = span_message(&s);
    const char *p = strstr(m, " name=");
    assert_non_null(p);
    assert_string_equal(p, " name=a%20b%25c%5Bd%5De%3Df%01%7F%C3%A9.g~!%09 ts=1 dur=2 ");
    free(m);

    /* Every byte 1..255 individually: plain exactly when in '!'..'~' and
     * not one of % [ ] =. */
    for (int c = 1; c < 256; c++) {
        char nm[2] = {(char)c, 0};
        hbg_span one = {.name = nm};
        m = span_message(&one);
        p = strstr(m, " name=") + 6;
        bool plain = c >= '!' && c <= '~' && c != '%' && c != '[' && c != ']' && c != '=';
        char want[8];
        if (plain)
            snprintf(want, sizeof want, "%c ts=", c);
        else
            snprintf(want, sizeof want, "%%%02X ts=", c);
        assert_memory_equal(p, want, strlen(want));
        free(m);
    }

    hbg_span empty = {.name = NULL, .ts = 5, .dur = 6};
    m = span_message(&empty);
    assert_non_null(strstr(m, " name= ts=5 dur=6 "));
    free(m);
}

/* A huge name is cut at 2048 encoded bytes — never inside an escape — so the
 * line still carries ts= and dur=. */
static void long_name_capped(void **state)
{
    (void)state;
    char *nm = malloc(5001);
    memset(nm, 'a', 5000);
    nm[5000] = '\0';
    nm[2047] = ' '; /* its escape would straddle the cap */
    hbg_span s = {.name = nm, .ts = 9, .dur = 10};
    char *m = span_message(&s);
    const char *p = strstr(m, " name=") + 6;
    const char *e = strstr(p, " ts=9 dur=10 ");
    assert_non_null(e);
    assert_int_equal(e - p, 2047);
    free(m);
    free(nm);
}

static void below_threshold(void **state)
{
    (void)state;
    int fd = capture_open();
    hbg_log *lg = NULL;
    assert_int_equal(hbg_log_open(fd, HBG_LOG_WARN, &lg), HBG_OK);
    hbg_span s = {.name = "x"};
    hbg_log_span(lg, &s);
    hbg_log_span(lg, NULL);
    hbg_log_span(NULL, &s);
    hbg_log_close(lg);
    char *out = capture_read(fd, NULL);
    assert_string_equal(out, "");
    free(out);
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fixture_shape),   cmocka_unit_test(parse_back),
        cmocka_unit_test(percent_encoding), cmocka_unit_test(long_name_capped),
        cmocka_unit_test(below_threshold),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
