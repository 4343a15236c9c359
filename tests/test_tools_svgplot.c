/* The A/B strip plot: the file is well-formed XML (xmllint), its text is
 * escaped and names what it should, it renders in librsvg to a picture
 * with both arms' colours in it and nothing cut at the right edge, a full
 * disk is reported, and the corner cases still give valid documents. The
 * external tools are required, not optional: a missing one fails the test
 * with the package to install. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/tools_support.h"
#include "tools/svgplot.h"

static void need_tool(const char *tool, const char *package)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", tool);
    if (system(cmd) != 0)
        fail_msg("%s not found: install the Debian package %s (listed in scripts/packages)", tool, package);
}

/* The plot written to a fresh temporary .svg; its path (malloc'd). */
static char *write_plot(const sp_plot *p)
{
    char *path = ts_temp_file("", 0, ".svg");
    assert_non_null(path);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(sp_write(f, p), 0);
    assert_int_equal(fclose(f), 0);
    return path;
}

static void assert_xml(const char *path)
{
    need_tool("xmllint", "libxml2-utils");
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "xmllint --noout '%s'", path);
    if (system(cmd) != 0)
        fail_msg("%s is not well-formed XML (xmllint's complaint above)", path);
}

typedef struct picture {
    png_uint_32 w, h;
    unsigned char *px; /* RGBA, 8 bits each */
} picture;

/* Renders the SVG with librsvg and decodes the PNG. */
static picture render(const char *svg)
{
    need_tool("rsvg-convert", "librsvg2-bin");
    char png[4200], cmd[8500];
    snprintf(png, sizeof png, "%s.png", svg);
    snprintf(cmd, sizeof cmd, "rsvg-convert -f png -o '%s' '%s'", png, svg);
    if (system(cmd) != 0)
        fail_msg("rsvg-convert could not render %s", svg);
    png_image im;
    memset(&im, 0, sizeof im);
    im.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_file(&im, png))
        fail_msg("%s: %s", png, im.message);
    im.format = PNG_FORMAT_RGBA;
    picture p = {im.width, im.height, malloc(PNG_IMAGE_SIZE(im))};
    assert_non_null(p.px);
    if (!png_image_finish_read(&im, NULL, p.px, 0, NULL))
        fail_msg("%s: %s", png, im.message);
    unlink(png);
    return p;
}

static int near(const unsigned char *px, int r, int g, int b, int tol)
{
    return px[3] > 200 && abs(px[0] - r) <= tol && abs(px[1] - g) <= tol && abs(px[2] - b) <= tol;
}

/* Pixels that are neither white nor transparent, and pixels close to one
 * colour (tolerance for antialiasing: the bars' interiors are exact). */
static size_t count_ink(const picture *p)
{
    size_t n = 0;
    for (size_t i = 0; i < (size_t)p->w * p->h; i++) {
        const unsigned char *q = p->px + 4 * i;
        if (q[3] > 16 && (q[0] < 245 || q[1] < 245 || q[2] < 245))
            n++;
    }
    return n;
}

static size_t count_colour(const picture *p, int r, int g, int b)
{
    size_t n = 0;
    for (size_t i = 0; i < (size_t)p->w * p->h; i++)
        n += (size_t)near(p->px + 4 * i, r, g, b, 24);
    return n;
}

/* Three repetitions around 100 µs: base ~100-130 µs, measure 5 % lower. */
static uint64_t B[3][12], M[3][12];
static sp_rep R3[3];

static void fill(void)
{
    for (int r = 0; r < 3; r++)
        for (int i = 0; i < 12; i++) {
            B[r][i] = 100000 + (uint64_t)(i * i * 200 + r * 1500);
            M[r][i] = 95000 + (uint64_t)(i * i * 190 + r * 1400);
        }
    for (int r = 0; r < 3; r++)
        R3[r] = (sp_rep){{B[r], 12}, {M[r], 12}};
}

static sp_plot plot3(void)
{
    fill();
    return (sp_plot){
        .title = "A<B & C\x01 done \xff",
        .subtitle = "qwen, hbg run qwen --rounds 12",
        .base_label = "base 1a2b3c4",
        .measure_label = "measure 5d6e7f8",
        .value_label = "control-plane sum per pass",
        .rep = R3,
        .nrep = 3,
    };
}

static void test_parses(void **st)
{
    (void)st;
    sp_plot p = plot3();
    char *path = write_plot(&p);
    assert_xml(path);
    unlink(path);
    free(path);
}

static void test_text(void **st)
{
    (void)st;
    sp_plot p = plot3();
    char *path = write_plot(&p);
    char *s = ts_slurp(path, NULL);
    assert_non_null(s);
    /* the control byte and the broken UTF-8 both become '?' */
    assert_true(ts_contains(s, ">A&lt;B &amp; C? done ?</text>"));
    assert_false(ts_contains(s, "A<B"));
    assert_false(ts_contains(s, "\x01"));
    assert_false(ts_contains(s, "\xff"));
    assert_true(ts_contains(s, ">base 1a2b3c4</text>"));
    assert_true(ts_contains(s, ">measure 5d6e7f8</text>"));
    assert_true(ts_contains(s, ">rep 1</text>"));
    assert_true(ts_contains(s, ">rep 2</text>"));
    assert_true(ts_contains(s, ">rep 3</text>"));
    assert_false(ts_contains(s, ">rep 4</text>"));
    assert_true(ts_contains(s, " \xC2\xB5s</text>"));         /* a tick, e.g. "100 µs" */
    assert_true(ts_contains(s, "per pass (\xC2\xB5s)</text>")); /* the axis title */
    assert_false(ts_contains(s, " ms</text>"));
    assert_true(ts_contains(s, "xmlns=\"http://www.w3.org/2000/svg\""));
    assert_true(ts_contains(s, "viewBox=\"0 0 "));
    free(s);
    unlink(path);
    free(path);
}

static void test_renders(void **st)
{
    (void)st;
    sp_plot p = plot3();
    char *path = write_plot(&p);
    picture pic = render(path);
    assert_true(pic.w >= 640);
    size_t ink = count_ink(&pic);
    size_t blue = count_colour(&pic, 0x00, 0x72, 0xB2);
    size_t verm = count_colour(&pic, 0xD5, 0x5E, 0x00);
    print_message("%ux%u: %zu inked, %zu blue, %zu vermillion\n", (unsigned)pic.w, (unsigned)pic.h, ink, blue, verm);
    assert_true(ink > 5000);
    assert_true(blue > 100);
    assert_true(verm > 100);
    free(pic.px);
    unlink(path);
    free(path);
}

/* A verdict far wider than the figure wraps: the right edge stays blank. */
static void test_long_title_not_clipped(void **st)
{
    (void)st;
    sp_plot p = plot3();
    p.title = "measure is slower: control-plane sum +12.5 % (95 % CI +10.1 % .. +14.9 %), Mann-Whitney "
              "p = 1.2e-07, 3 of 3 repetitions agree, sign test p = 0.125; WWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWW"
              "WWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWW and more words after it";
    p.base_label = "base 1a2b3c4 with a label much longer than any legend row could hold, it goes on and on and on";
    char *path = write_plot(&p);
    assert_xml(path);
    picture pic = render(path);
    size_t edge = 0;
    for (png_uint_32 y = 0; y < pic.h; y++)
        for (png_uint_32 x = pic.w - 6; x < pic.w; x++) {
            const unsigned char *q = pic.px + 4 * ((size_t)y * pic.w + x);
            edge += q[0] < 245 || q[1] < 245 || q[2] < 245;
        }
    assert_int_equal(edge, 0);
    free(pic.px);
    unlink(path);
    free(path);
}

static void test_full_disk(void **st)
{
    (void)st;
    sp_plot p = plot3();
    FILE *f = fopen("/dev/full", "w");
    assert_non_null(f);
    errno = 0;
    assert_int_equal(sp_write(f, &p), -1);
    assert_int_equal(errno, ENOSPC);
    fclose(f);
}

static char *check_edge(const sp_plot *p)
{
    char *path = write_plot(p);
    assert_xml(path);
    char *s = ts_slurp(path, NULL);
    assert_non_null(s);
    unlink(path);
    free(path);
    return s;
}

static void test_all_equal(void **st)
{
    (void)st;
    uint64_t v[20];
    for (int i = 0; i < 20; i++)
        v[i] = 100000;
    sp_rep r[2] = {{{v, 20}, {v, 20}}, {{v, 20}, {v, 20}}};
    sp_plot p = {"equal", NULL, "base", "measure", "sum", r, 2};
    char *s = check_edge(&p);
    /* an axis with numbers on it all the same */
    assert_true(ts_contains(s, ">100 \xC2\xB5s</text>"));
    assert_true(ts_contains(s, ">98 \xC2\xB5s</text>"));
    free(s);
}

static void test_empty_arm(void **st)
{
    (void)st;
    uint64_t v[3] = {5000, 5100, 5200};
    sp_rep r[2] = {{{v, 3}, {NULL, 0}}, {{NULL, 0}, {NULL, 0}}};
    sp_plot p = {"one arm empty", "sub", "base", "measure", "sum", r, 2};
    char *s = check_edge(&p);
    assert_true(ts_contains(s, ">no passes</text>"));
    assert_true(ts_contains(s, ">rep 2</text>"));
    free(s);
    /* and no values at all */
    r[0].base.n = 0;
    s = check_edge(&p);
    assert_true(ts_contains(s, ">no passes</text>"));
    free(s);
    p.nrep = 0;
    s = check_edge(&p);
    assert_false(ts_contains(s, ">rep 1</text>"));
    free(s);
}

/* Two passes of milliseconds among ~100 µs ones: the axis stays in µs,
 * below the far-out fence (190.75 µs: quartiles 104.75 and 126.25 µs, of
 * the 20 passes pooled, interpolated), the two
 * are triangles on its top edge and the line under the legend says so.
 * Without them, no such line. */
static void test_far_passes_off_scale(void **st)
{
    (void)st;
    uint64_t b[10], m[10];
    for (int i = 0; i < 10; i++)
        b[i] = 100000 + (uint64_t)i * 1000, m[i] = 120000 + (uint64_t)i * 1000;
    b[9] = 4140000;
    m[0] = 2500000;
    sp_rep r[1] = {{{b, 10}, {m, 10}}};
    sp_plot p = {"slower", NULL, "base", "measure", "sum", r, 1};
    char *s = check_edge(&p);
    assert_true(ts_contains(s, ">\xE2\x96\xB2 2 passes above the scale, up to 4.14 ms: drawn on its top edge</text>"));
    assert_false(ts_contains(s, " ms</text>\n<line")); /* no tick in ms */
    assert_true(ts_contains(s, ">120 \xC2\xB5s</text>"));
    size_t tri = 0;
    for (const char *q = s; (q = strstr(q, "<path d=\"M ")); q++)
        tri++;
    assert_int_equal(tri, 2);
    free(s);
    b[9] = 109000;
    m[0] = 120000;
    s = check_edge(&p);
    assert_false(ts_contains(s, "above the scale"));
    assert_null(strstr(s, "<path d=\"M "));
    free(s);
}

static void test_one_rep(void **st)
{
    (void)st;
    uint64_t b[1] = {1500000}, m[2] = {1400000, 1450000};
    sp_rep r[1] = {{{b, 1}, {m, 2}}};
    sp_plot p = {"one repetition", NULL, "base", "measure", NULL, r, 1};
    char *s = check_edge(&p);
    assert_true(ts_contains(s, ">rep 1</text>"));
    assert_true(ts_contains(s, " ms</text>"));
    free(s);
}

static void test_huge_values(void **st)
{
    (void)st;
    uint64_t b[3] = {(1ull << 63) - 1, (1ull << 63) - 1000, 1ull << 62}, m[2] = {1ull << 63, UINT64_MAX};
    sp_rep r[1] = {{{b, 3}, {m, 2}}};
    sp_plot p = {"huge", NULL, "base", "measure", "sum", r, 1};
    char *s = check_edge(&p);
    assert_true(ts_contains(s, " s</text>"));
    assert_false(ts_contains(s, "nan"));
    assert_false(ts_contains(s, "inf"));
    free(s);
}

/* The padding goes below zero; the ticks do not, and none reads "-0". */
static void test_near_zero(void **st)
{
    (void)st;
    uint64_t b[3] = {0, 50, 100}, m[2] = {10, 90};
    sp_rep r[1] = {{{b, 3}, {m, 2}}};
    sp_plot p = {"zero", NULL, "base", "measure", "sum", r, 1};
    char *s = check_edge(&p);
    assert_true(ts_contains(s, ">0 ns</text>"));
    assert_true(ts_contains(s, ">100 ns</text>"));
    assert_false(ts_contains(s, ">-"));
    free(s);
}

static void test_many_reps(void **st)
{
    (void)st;
    static uint64_t v[50][5];
    static sp_rep r[50];
    for (int i = 0; i < 50; i++) {
        for (int k = 0; k < 5; k++)
            v[i][k] = 400 + (uint64_t)(i + k * 7);
        r[i] = (sp_rep){{v[i], 5}, {v[i], 3}};
    }
    sp_plot p = {"fifty", NULL, "base", "measure", "sum", r, 50};
    char *s = check_edge(&p);
    assert_true(ts_contains(s, ">rep 50</text>"));
    assert_true(ts_contains(s, " ns</text>"));
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parses),
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_renders),
        cmocka_unit_test(test_long_title_not_clipped),
        cmocka_unit_test(test_full_disk),
        cmocka_unit_test(test_all_equal),
        cmocka_unit_test(test_empty_arm),
        cmocka_unit_test(test_one_rep),
        cmocka_unit_test(test_far_passes_off_scale),
        cmocka_unit_test(test_huge_values),
        cmocka_unit_test(test_near_zero),
        cmocka_unit_test(test_many_reps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
