/* The records reader (tools/records.c): every uint64 the runtime writes is
 * read exactly, a value that is no uint64 is named for what it is, a pass
 * written twice is named, and so is each limit of the reader. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <stdlib.h>
#include <fcntl.h>
#include <unistd.h>

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

static void parse_text(rc_file *f, dg_list *w, const char *text)
{
    dg_init(w, 10);
    assert_int_equal(rc_parse(f, "R", text, strlen(text), w), HBG_OK);
}

static void a_second_line_of_a_pass_is_named_and_skipped(void **state)
{
    (void)state;
    static const char text[] = "{\"pid\": 1, \"inv\": 2, \"dropped\": 0, \"records\": []}\n"
                               "{\"pid\": 1, \"inv\": 3, \"dropped\": 0, \"records\": []}\n"
                               "{\"pid\": 1, \"inv\": 2, \"dropped\": 5, \"records\": []}\n";
    rc_file f;
    dg_list w;
    parse_text(&f, &w, text);
    assert_int_equal(f.nline, 2);
    assert_int_equal(f.line[0].lineno, 1);
    assert_int_equal(f.line[0].dropped, 0);
    assert_int_equal(f.line[1].lineno, 2);
    assert_int_equal(f.nbad, 1);
    assert_int_equal(w.n, 1);
    assert_string_equal(w.msg[0], "R:3: a second records line for pid=1 inv=2 (the first is line 1); line skipped");
    rc_free(&f);
    dg_free(&w);
}

/* A rank killed inside its write of a line leaves the line cut, and the
 * other rank's next line runs on from the cut. The intact line is read
 * (once it was lost with the cut one, as "not a JSON object"); the cut
 * piece is a bad line of its own; a warning names the column. */
static void a_cut_line_and_the_next_are_read_apart(void **state)
{
    (void)state;
    static const char text[] = "{\"pid\": 1, \"inv\": 1, \"dropped\": 0, \"records\": []}\n"
                               "{\"pid\": 2, \"inv\": 1, \"dropped\": 0, \"records\": [{\"pha"
                               "{\"pid\": 1, \"inv\": 2, \"dropped\": 0, \"records\": []}\n"
                               "{\"pid\": 1, \"inv\": 3, \"dropped\": 0, \"records\": []}{\"pid\":1, \"inv\": 4, "
                               "\"dropped\": 0, \"records\": []}\n";
    rc_file f;
    dg_list w;
    parse_text(&f, &w, text);
    assert_int_equal(f.nline, 4);
    assert_int_equal(f.line[1].pid, 1);
    assert_int_equal(f.line[1].inv, 2);
    assert_int_equal(f.line[1].lineno, 2);
    assert_int_equal(f.line[2].inv, 3);
    assert_int_equal(f.line[3].inv, 4); /* two whole objects run together: both */
    assert_int_equal(f.nbad, 1);
    assert_int_equal(w.n, 3);
    assert_string_equal(w.msg[0], "R:2: a records line runs into another at column 53 (a writer stopped mid-line, "
                                  "e.g. a rank killed): the two are read apart");
    assert_true(strncmp(w.msg[1], "R:2: not a JSON object (", 24) == 0);
    assert_string_equal(w.msg[2], "R:3: a records line runs into another at column 50 (a writer stopped mid-line, "
                                  "e.g. a rank killed): the two are read apart");
    rc_free(&f);
    dg_free(&w);
    /* a valid line holding the text elsewhere (a key of its own) is read
     * whole, and a string cannot hold it unescaped */
    static const char whole[] = "{\"pid\": 1, \"inv\": 5, \"dropped\": 0, \"x\": {\"pid\": 2}, \"records\": [], "
                                "\"y\": \"{\\\"pid\\\": 3\"}\n";
    parse_text(&f, &w, whole);
    assert_int_equal(f.nline, 1);
    assert_int_equal(f.line[0].inv, 5);
    assert_int_equal(f.nbad, 0);
    assert_int_equal(w.n, 0);
    rc_free(&f);
    dg_free(&w);
}

/* Lines ending in CR alone, as in CRLF, or in LF, read alike; in a file
 * with LF line ends a CR is JSON's whitespace, inside its line. */
static void every_line_end_is_read(void **state)
{
    (void)state;
    static const char *const texts[] = {
        "{\"pid\": 1, \"inv\": 2, \"dropped\": 0, \"records\": []}\r"
        "{\"pid\": 1, \"inv\": 3, \"dropped\": 0, \"records\": []}\r"
        "{\"pid\": 1, \"inv\": 2, \"dropped\": 5, \"records\": []}\r",
        "{\"pid\": 1, \"inv\": 2, \"dropped\": 0, \"records\": []}\r\n"
        "{\"pid\": 1, \"inv\": 3, \"dropped\": 0, \"records\": []}\r\n"
        "{\"pid\": 1, \"inv\": 2, \"dropped\": 5, \"records\": []}",
        "{\"pid\": 1, \"inv\": 2, \"dropped\": 0, \"records\": []}\n"
        "{\"pid\": 1,\r\"inv\": 3, \"dropped\": 0, \"records\": []}\n"
        "{\"pid\": 1, \"inv\": 2, \"dropped\": 5, \"records\": []}\n",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        rc_file f;
        dg_list w;
        parse_text(&f, &w, texts[i]);
        assert_int_equal(f.nline, 2);
        assert_int_equal(f.line[1].lineno, 2);
        assert_int_equal(f.line[1].inv, 3);
        assert_int_equal(f.nbad, 1);
        assert_int_equal(w.n, 1);
        assert_string_equal(w.msg[0],
                            "R:3: a second records line for pid=1 inv=2 (the first is line 1); line skipped");
        rc_free(&f);
        dg_free(&w);
    }
}

/* One line whose single record has the phase name given. */
static void one_phase(char *buf, size_t cap, const char *name, uint64_t inv)
{
    snprintf(buf, cap,
             "{\"pid\": 1, \"inv\": %llu, \"dropped\": 0, \"records\": [{\"phase\": \"%s\", \"start_ns\": 1, "
             "\"end_ns\": 2, \"detail\": 0, \"tid\": 1}]}\n",
             (unsigned long long)inv, name);
}

static void the_readers_limits_are_named(void **state)
{
    (void)state;
    char line[512];
    rc_file f;
    dg_list w;
    one_phase(line, sizeof line, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 1);
    parse_text(&f, &w, line);
    assert_int_equal(f.nline, 0);
    assert_string_equal(w.msg[0], "R:1: record 0: phase \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\" is longer than 32 "
                                  "characters (the reader's limit); line skipped");
    rc_free(&f);
    dg_free(&w);
    one_phase(line, sizeof line, "Args", 1);
    parse_text(&f, &w, line);
    assert_string_equal(w.msg[0], "R:1: record 0: phase \"Args\" is not a name of [a-z0-9_]; line skipped");
    rc_free(&f);
    dg_free(&w);

    static char text[65 * 256];
    size_t n = 0;
    for (int i = 0; i <= RC_MAX_PHASES; i++) {
        char name[16];
        snprintf(name, sizeof name, "p%d", i);
        one_phase(text + n, sizeof text - n, name, (uint64_t)i + 1);
        n += strlen(text + n);
    }
    parse_text(&f, &w, text);
    assert_int_equal(f.nline, RC_MAX_PHASES);
    assert_int_equal(w.n, 1);
    assert_string_equal(w.msg[0], "R:65: record 0: phase \"p64\" is one distinct phase name too many for the file "
                                  "(the reader's limit is 64); line skipped");
    rc_free(&f);
    dg_free(&w);
}

/* A file is read in whole-line pieces: the lines are numbered as in the
 * file; a line past the bound (here the read size, 256 KiB, the least it
 * can be) is skipped, though its start is a record, and named with the
 * bound, and the lines after it keep their numbers. */
static void a_file_is_read_in_lines_with_a_bound(void **state)
{
    (void)state;
    char path[] = "/tmp/hbg-records-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    char one[256];
    for (int inv = 1; inv <= 300; inv++) {
        one_phase(one, sizeof one, "args", (uint64_t)inv);
        fputs(one, f);
        if (inv == 150) { /* line 151: a record, 300 KiB of blanks, and no record */
            one_phase(one, sizeof one, "args", 999);
            one[strlen(one) - 1] = 0;
            fputs(one, f);
            for (int k = 0; k < 300 << 10; k++)
                fputc(' ', f);
            fputs("junk\n", f);
        }
    }
    assert_int_equal(fclose(f), 0);

    for (int bounded = 0; bounded < 2; bounded++) {
        rc_file r;
        dg_list w;
        dg_init(&w, 10);
        char err[256];
        fd = open(path, O_RDONLY);
        assert_true(fd >= 0);
        assert_int_equal(rc_read_fd(&r, "R", fd, bounded ? 1000 : 0, &w, err, sizeof err), HBG_OK);
        close(fd);
        assert_int_equal(r.nline, 300);
        assert_int_equal(r.nbad, 1);
        assert_int_equal(r.line[150].lineno, 152);
        assert_int_equal(r.line[150].inv, 151);
        assert_int_equal(r.line[299].lineno, 301);
        /* cut, its start (a whole record and blanks) is not parsed */
        assert_int_equal(w.n, 1);
        if (bounded)
            assert_string_equal(w.msg[0], "R:151: a line longer than 262144 bytes (the reader's limit) read as its "
                                          "first 262144 bytes and skipped: no records line is that long");
        else
            assert_non_null(strstr(w.msg[0], "R:151: not a JSON object"));
        rc_free(&r);
        dg_free(&w);
    }
    unlink(path);
}

/* Read from a file, in the reader's pieces: an LF file's last line,
 * without a '\n' of its own, comes as a piece of its own; a CR in it is
 * JSON's whitespace still, not a line end (it was split there: two bad
 * lines, one of them a line 3 the file does not have). */
static void an_unended_last_line_keeps_its_cr(void **state)
{
    (void)state;
    static const char text[] = "{\"pid\":1,\"inv\":2,\"dropped\":0,\"records\":[]}\n"
                               "{\"pid\": 1,\r\"inv\": 3,\"dropped\":0,\"records\":[]}";
    char path[] = "/tmp/hbg-records-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
    assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
    rc_file r;
    dg_list w;
    dg_init(&w, 10);
    char err[256];
    assert_int_equal(rc_read_fd(&r, "R", fd, 0, &w, err, sizeof err), HBG_OK);
    close(fd);
    unlink(path);
    assert_int_equal(r.nline, 2);
    assert_int_equal(r.nbad, 0);
    assert_int_equal(r.line[1].inv, 3);
    assert_int_equal(w.n, 0);
    rc_free(&r);
    dg_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(detail_past_int64_is_read_exactly),
        cmocka_unit_test(a_detail_that_is_no_uint64_is_named),
        cmocka_unit_test(a_second_line_of_a_pass_is_named_and_skipped),
        cmocka_unit_test(every_line_end_is_read),
        cmocka_unit_test(a_cut_line_and_the_next_are_read_apart),
        cmocka_unit_test(an_unended_last_line_keeps_its_cr),
        cmocka_unit_test(the_readers_limits_are_named),
        cmocka_unit_test(a_file_is_read_in_lines_with_a_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
