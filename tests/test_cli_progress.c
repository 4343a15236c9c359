/* hbg run's progress line (src/cli/run_progress.c): a message on stderr
 * while the line shows on a terminal first clears it, so the message
 * starts a line of its own instead of running on from the line's end
 * ("... 3 s hbg run: rank 0 (pid N) still running ..."); elsewhere, and
 * before the line has shown, nothing is written. stderr is a file here:
 * the terminal is stood for by the struct's tty flag, as isatty set it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/run_progress.h"
#include "hbg/trace.h"
#include "support/tools_support.h"

/* What f (called with p) writes to stderr, read back from a file. */
static char *stderr_of(void (*f)(run_progress *), run_progress *p)
{
    char *path = ts_temp_file("", 0, ".err");
    int fd = open(path, O_WRONLY | O_TRUNC);
    assert_true(fd >= 0);
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    assert_true(saved >= 0 && dup2(fd, STDERR_FILENO) >= 0);
    close(fd);
    f(p);
    fflush(stderr);
    assert_true(dup2(saved, STDERR_FILENO) >= 0);
    close(saved);
    char *text = ts_slurp(path, NULL);
    remove(path);
    free(path);
    return text;
}

static void tick_then_clear(run_progress *p)
{
    run_progress_tick(p, 3);
    run_progress_clear(p);
    fputs("hbg run: a message\n", stderr);
    run_progress_clear(p); /* nothing showing now: nothing written */
    run_progress_end(p);   /* nor at the end */
}

static void clearing_only_while_a_terminal_line_shows(void **state)
{
    (void)state;
    run_progress p = {.on = true, .tty = true, .shown = true};
    assert_string_equal(run_progress_clearing(&p), "\r\033[K");
    p.shown = false; /* before the first tick */
    assert_string_equal(run_progress_clearing(&p), "");
    p = (run_progress){.on = true, .tty = false, .shown = true}; /* a file or pipe: whole lines */
    assert_string_equal(run_progress_clearing(&p), "");
    p = (run_progress){.on = false, .tty = true, .shown = true}; /* HBG_PROGRESS_S=0 */
    assert_string_equal(run_progress_clearing(&p), "");
    assert_string_equal(run_progress_clearing(NULL), "");
}

/* On a terminal: the line, cleared, the message on a line of its own;
 * the second clear and the end add nothing. */
static void a_message_starts_its_own_line_on_a_terminal(void **state)
{
    (void)state;
    run_progress p = {.on = true, .tty = true, .total = 10, .t0 = hbg_mono_ns(), .next = 0};
    char *text = stderr_of(tick_then_clear, &p);
    assert_string_equal(text, "\rhbg run: 3 of 10 passes, 0 s \r\033[Khbg run: a message\n");
    free(text);
    assert_false(p.shown);
}

/* Elsewhere the progress lines are whole lines already: the output is as
 * it was, with no control characters. */
static void nothing_is_added_elsewhere(void **state)
{
    (void)state;
    run_progress p = {.on = true, .tty = false, .total = 10, .t0 = hbg_mono_ns(), .next = 0,
                      .every = 30000000000ull};
    char *text = stderr_of(tick_then_clear, &p);
    assert_string_equal(text, "hbg run: 3 of 10 passes after 0 s\nhbg run: a message\n");
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(clearing_only_while_a_terminal_line_shows),
        cmocka_unit_test(a_message_starts_its_own_line_on_a_terminal),
        cmocka_unit_test(nothing_is_added_elsewhere),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
