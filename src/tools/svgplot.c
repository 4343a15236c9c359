/* The A/B strip plot, written as plain SVG 1.1 by hand: a plotting
 * dependency would be larger than the whole tools directory, and the
 * figure is a few hundred elements. Everything that makes the two
 * renderers it is checked in (librsvg and browsers) disagree is avoided:
 * no CSS, no dominant-baseline, no textLength, no external fonts. Text
 * cannot be measured here, so its width is estimated from DejaVu Sans'
 * advances, on the generous side: an overestimate wraps a line early, an
 * underestimate clips it. */
#include "tools/svgplot.h"
#include "util/vec.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define FONT SP_FONT
#define COL_BASE SP_COL_BASE
#define COL_MEAS SP_COL_MEAS
#define COL_INK SP_COL_INK
#define COL_SOFT SP_COL_SOFT
#define COL_GRID SP_COL_GRID

#define MIN_W 640.0
#define MIN_GROUP 64.0 /* "rep 50" and two strips that do not touch */
#define MARGIN 16.0
#define PLOT_H 360.0
#define TITLE_PX 16.0
#define SUB_PX 12.0
#define TICK_PX 12.0
#define LEGEND_PX 12.0
#define DOT_R 3.0

typedef sp_writer sw;

void sp_out(sp_writer *w, const char *fmt, ...)
{
    if (w->err)
        return;
    va_list ap;
    va_start(ap, fmt);
    errno = 0;
    int r = vfprintf(w->f, fmt, ap);
    va_end(ap);
    if (r < 0)
        w->err = errno ? errno : EIO;
}

/* Decodes one UTF-8 sequence at s (n bytes left) into *cp; returns its
 * length, or 0 when the bytes there are not a well-formed sequence
 * (overlong forms, surrogates and values past U+10FFFF included). */
static size_t utf8_next(const unsigned char *s, size_t n, uint32_t *cp)
{
    unsigned char b = s[0];
    if (b < 0x80) {
        *cp = b;
        return 1;
    }
    size_t len;
    unsigned char lo = 0x80, hi = 0xBF;
    if (b >= 0xC2 && b <= 0xDF)
        len = 2;
    else if (b >= 0xE0 && b <= 0xEF) {
        len = 3;
        if (b == 0xE0) lo = 0xA0;
        if (b == 0xED) hi = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
        len = 4;
        if (b == 0xF0) lo = 0x90;
        if (b == 0xF4) hi = 0x8F;
    } else
        return 0;
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    uint32_t c = b & (0x7Fu >> len);
    for (size_t i = 1; i < len; i++) {
        if (i > 1 && (s[i] & 0xC0) != 0x80)
            return 0;
        c = c << 6 | (s[i] & 0x3Fu);
    }
    *cp = c;
    return len;
}

/* A copy of s that is all XML 1.0 characters and on one line: tab and
 * newline become spaces (the text is wrapped here, not by the renderer),
 * every other control character, U+FFFE/U+FFFF and every byte of a broken
 * sequence becomes '?'. NULL (ENOMEM) when out of memory. */
static char *clean(const char *s)
{
    if (!s)
        s = "";
    size_t n = strlen(s);
    char *d = malloc(n + 1);
    if (!d) {
        errno = ENOMEM;
        return NULL;
    }
    const unsigned char *u = (const unsigned char *)s;
    size_t j = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = utf8_next(u + i, n - i, &cp);
        if (k == 0) {
            d[j++] = '?';
            i++;
            continue;
        }
        if (cp == '\t' || cp == '\n')
            d[j++] = ' ';
        else if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0xFFFE || cp == 0xFFFF)
            d[j++] = '?';
        else {
            memcpy(d + j, s + i, k);
            j += k;
        }
        i += k;
    }
    d[j] = '\0';
    return d;
}

/* Writes n bytes of already clean text with the five XML specials escaped. */
static void esc(sw *w, const char *s, size_t n)
{
    size_t from = 0;
    for (size_t i = 0; i < n; i++) {
        const char *e;
        switch (s[i]) {
        case '&': e = "&amp;"; break;
        case '<': e = "&lt;"; break;
        case '>': e = "&gt;"; break;
        case '"': e = "&quot;"; break;
        case '\'': e = "&apos;"; break;
        default: continue;
        }
        sp_out(w, "%.*s%s", (int)(i - from), s + from, e);
        from = i + 1;
    }
    sp_out(w, "%.*s", (int)(n - from), s + from);
}

void sp_text(sp_writer *w, const char *s)
{
    char *c = clean(s);
    if (!c) {
        if (!w->err)
            w->err = ENOMEM;
        return;
    }
    esc(w, c, strlen(c));
    free(c);
}

/* Advances of printable ASCII in DejaVu Sans and DejaVu Sans Bold, in
 * thousandths of an em, rounded up (read from the fonts' hmtx tables).
 * DejaVu is the first font asked for and wider than the fallbacks, so a
 * width from these is an upper bound wherever the font is installed. */
static const uint16_t adv_book[95] = {
    318, 401, 460, 838, 637, 951, 780, 275, 391, 391, 500, 838, 318, 361, 318, 337,
    637, 637, 637, 637, 637, 637, 637, 637, 637, 637, 337, 337, 838, 838, 838, 531,
    1000, 685, 687, 699, 771, 632, 576, 775, 752, 295, 295, 656, 558, 863, 749, 788,
    604, 788, 695, 635, 611, 732, 685, 989, 686, 611, 686, 391, 337, 391, 838, 500,
    500, 613, 635, 550, 635, 616, 353, 635, 634, 278, 278, 580, 278, 975, 634, 612,
    635, 635, 412, 521, 393, 634, 592, 818, 592, 592, 525, 637, 337, 637, 838,
};
static const uint16_t adv_bold[95] = {
    349, 457, 521, 838, 696, 1002, 873, 307, 458, 458, 523, 838, 380, 416, 380, 366,
    696, 696, 696, 696, 696, 696, 696, 696, 696, 696, 400, 400, 838, 838, 838, 581,
    1000, 774, 763, 734, 831, 684, 684, 821, 837, 373, 373, 775, 638, 996, 837, 851,
    733, 851, 771, 721, 683, 813, 774, 1104, 771, 725, 726, 458, 366, 458, 838, 500,
    500, 675, 716, 593, 716, 679, 436, 716, 712, 343, 343, 666, 343, 1042, 712, 688,
    716, 716, 494, 596, 479, 712, 652, 924, 646, 652, 583, 712, 366, 712, 838,
};

/* The width of n bytes of clean text in px, with 4 % to spare for hinting
 * and for renderers that round advances. Anything past ASCII counts a full
 * em: accented letters are narrower, CJK from a fallback font about that. */
static double text_w(const char *s, size_t n, double px, bool bold)
{
    const uint16_t *t = bold ? adv_bold : adv_book;
    const unsigned char *u = (const unsigned char *)s;
    unsigned long milli = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp = '?';
        size_t k = utf8_next(u + i, n - i, &cp);
        milli += cp >= 0x20 && cp < 0x7F ? t[cp - 0x20] : 1000;
        i += k ? k : 1;
    }
    return (double)milli / 1000 * px * 1.04;
}

typedef struct span {
    size_t off, len;
} span;

typedef struct lines {
    span *v;
    size_t n, cap;
} lines;

static int push_line(lines *L, size_t off, size_t len)
{
    if (!vec_grow((void **)&L->v, &L->cap, L->n + 1, sizeof *L->v)) {
        errno = ENOMEM;
        return -1;
    }
    L->v[L->n++] = (span){off, len};
    return 0;
}

/* Greedy word wrap of clean text s into lines no wider than maxw. A word
 * wider than a whole line (a path, a hash run together) is cut between
 * characters, so nothing ever runs past the edge. Runs of spaces collapse,
 * as SVG would collapse them anyway (within a line they are kept and
 * collapsed by the renderer). An empty text gives no lines. */
static int wrap(const char *s, double px, bool bold, double maxw, lines *L)
{
    size_t n = strlen(s);
    size_t i = 0;
    size_t ls = 0, le = 0; /* the line being filled: [ls, le) */
    bool open = false;
    while (i < n) {
        while (i < n && s[i] == ' ')
            i++;
        if (i == n)
            break;
        size_t ws = i;
        for (;;) {
            size_t ts = i;
            while (i < n && s[i] != ' ')
                i++;
            /* "-5.8 %" and "-7.1 .. -4.4" stay on one line: a verdict is
             * read in numbers */
            size_t j = i;
            while (j < n && s[j] == ' ')
                j++;
            if (j == n || (s[j] != '%' && !(i - ts == 2 && s[ts] == '.' && s[ts + 1] == '.')))
                break;
            i = j;
        }
        size_t we = i;
        if (open && text_w(s + ls, we - ls, px, bold) <= maxw) {
            le = we;
            continue;
        }
        if (open && push_line(L, ls, le - ls) != 0)
            return -1;
        /* the word starts a line; cut it while it alone is too wide */
        ls = ws;
        while (text_w(s + ls, we - ls, px, bold) > maxw) {
            size_t cut = ls, next = ls;
            while (next < we) {
                uint32_t cp;
                size_t k = utf8_next((const unsigned char *)s + next, we - next, &cp);
                next += k ? k : 1;
                if (cut > ls && text_w(s + ls, next - ls, px, bold) > maxw)
                    break;
                cut = next;
            }
            if (push_line(L, ls, cut - ls) != 0)
                return -1;
            ls = cut;
        }
        le = we;
        open = ls < we;
    }
    if (open && push_line(L, ls, le - ls) != 0)
        return -1;
    return 0;
}

/* The longest prefix of clean text s that fits maxw, "…" appended when
 * something was cut; written into a fresh buffer. */
static char *fit(const char *s, double px, double maxw)
{
    size_t n = strlen(s);
    char *d = malloc(n + 4);
    if (!d) {
        errno = ENOMEM;
        return NULL;
    }
    if (text_w(s, n, px, false) <= maxw) {
        memcpy(d, s, n + 1);
        return d;
    }
    double ell = text_w("\xE2\x80\xA6", 3, px, false);
    size_t cut = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = utf8_next((const unsigned char *)s + i, n - i, &cp);
        i += k ? k : 1;
        if (text_w(s, i, px, false) + ell > maxw)
            break;
        cut = i;
    }
    memcpy(d, s, cut);
    memcpy(d + cut, "\xE2\x80\xA6", 4);
    return d;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

typedef struct armstat {
    uint64_t min;
    double med;
} armstat;

/* Minimum and median of one arm from a sorted copy: a few hundred values,
 * so sorting is cheaper than being clever. */
static int arm_stat(const sp_arm *a, armstat *s)
{
    if (a->n == 0)
        return 0;
    uint64_t *c = malloc(a->n * sizeof *c);
    if (!c) {
        errno = ENOMEM;
        return -1;
    }
    memcpy(c, a->v, a->n * sizeof *c);
    qsort(c, a->n, sizeof *c, cmp_u64);
    s->min = c[0];
    if (a->n % 2)
        s->med = (double)c[a->n / 2];
    else
        s->med = ((double)c[a->n / 2 - 1] + (double)c[a->n / 2]) / 2;
    free(c);
    return 0;
}

/* The top of the value axis. One far pass (a rank descheduled for
 * milliseconds) would otherwise set the scale alone and flatten every
 * strip onto its floor, minima and medians with it: the axis stops at
 * the largest pass within the far-out fence of all passes pooled, Tukey's
 * Q3 + 3 IQR (quartiles interpolated), and never below an arm's median.
 * Passes above it are drawn on the top edge, and said (sp_write). Under
 * 8 passes in all there are no quartiles worth the name: vmax. */
static int axis_top(const sp_plot *p, const armstat *st, uint64_t vmax, uint64_t *top)
{
    *top = vmax;
    size_t n = 0;
    for (size_t r = 0; r < p->nrep; r++)
        n += p->rep[r].base.n + p->rep[r].measure.n;
    if (n < 8)
        return 0;
    uint64_t *c = malloc(n * sizeof *c);
    if (!c) {
        errno = ENOMEM;
        return -1;
    }
    size_t k = 0;
    for (size_t r = 0; r < p->nrep; r++) {
        memcpy(c + k, p->rep[r].base.v, p->rep[r].base.n * sizeof *c);
        k += p->rep[r].base.n;
        memcpy(c + k, p->rep[r].measure.v, p->rep[r].measure.n * sizeof *c);
        k += p->rep[r].measure.n;
    }
    qsort(c, n, sizeof *c, cmp_u64);
    double q[2];
    for (int i = 0; i < 2; i++) {
        double at = (double)(n - 1) * (i ? 0.75 : 0.25), f = floor(at);
        size_t j = (size_t)f;
        q[i] = (double)c[j] + (j + 1 < n ? (at - f) * ((double)c[j + 1] - (double)c[j]) : 0);
    }
    double fence = q[1] + 3 * (q[1] - q[0]);
    size_t last = n;
    while (last > 1 && (double)c[last - 1] > fence)
        last--;
    *top = c[last - 1];
    for (size_t i = 0; i < 2 * p->nrep; i++)
        if ((i % 2 ? p->rep[i / 2].measure.n : p->rep[i / 2].base.n) && st[i].med > (double)*top)
            *top = (uint64_t)ceil(st[i].med);
    free(c);
    return 0;
}

/* "4.15 ms": a value with three significant figures in its own unit. */
static void time_text(uint64_t v, char *buf, size_t cap)
{
    double x = (double)v;
    const char *unit = "ns";
    if (x >= 1e9)
        x /= 1e9, unit = "s";
    else if (x >= 1e6)
        x /= 1e6, unit = "ms";
    else if (x >= 1e3)
        x /= 1e3, unit = "\xC2\xB5s";
    snprintf(buf, cap, "%.*f %s", x < 10 ? 2 : x < 100 ? 1 : 0, x, unit);
}

typedef sp_axis axis;

/* The value axis: the data range padded by 5 % each side (a point on the
 * frame reads as clipped), ticks every 1, 2 or 5 times a power of ten, at
 * least 1 ns apart since the values are whole nanoseconds. A range of one
 * value is widened to 5 % of it around it, so equal values sit mid-plot on
 * an axis that still has numbers. */
sp_axis sp_axis_of(uint64_t vmin, uint64_t vmax, bool any)
{
    axis a;
    if (!any)
        vmin = 0, vmax = 1000;
    double lo = (double)vmin, hi = (double)vmax;
    double pad = (hi - lo) * 0.05;
    if (hi == lo)
        pad = lo * 0.05 > 2 ? lo * 0.05 : 2;
    a.lo = lo - pad;
    a.hi = hi + pad;
    double raw = (a.hi - a.lo) / 5;
    double mag = pow(10, floor(log10(raw)));
    double r = raw / mag;
    a.step = (r < 1.5 ? 1 : r < 3.5 ? 2 : r < 7.5 ? 5 : 10) * mag;
    if (a.step < 1)
        a.step = 1;
    /* the unit of the largest tick, so no label reads "0.98 µs" for 980 ns */
    double top = floor(a.hi / a.step) * a.step;
    if (top >= 1e9)
        a.scale = 1e9, a.unit = "s";
    else if (top >= 1e6)
        a.scale = 1e6, a.unit = "ms";
    else if (top >= 1e3)
        a.scale = 1e3, a.unit = "\xC2\xB5s";
    else
        a.scale = 1, a.unit = "ns";
    double su = a.step / a.scale;
    a.dec = su >= 1 ? 0 : (int)ceil(-log10(su) - 1e-9);
    if (a.dec > 9)
        a.dec = 9;
    return a;
}

typedef sp_ticks ticks;

void sp_ticks_of(const sp_axis *a, sp_ticks *t)
{
    t->n = 0;
    for (double k = ceil(a->lo / a->step); k * a->step <= a->hi && t->n < 64; k++) {
        double v = k * a->step;
        if (v < 0)
            continue;
        if (v == 0)
            v = 0; /* ceil(-0.25) is -0: no "-0 ns" */
        t->v[t->n] = v;
        snprintf(t->label[t->n], sizeof t->label[t->n], "%.*f %s", a->dec, v / a->scale, a->unit);
        t->n++;
    }
}

/* The layout, in px. */
typedef struct geo {
    double W, H;
    double px0, px1, py0, py1; /* the plot area */
    double gw;                 /* one repetition's column */
} geo;

static double ymap(const geo *g, const axis *a, double v)
{
    return g->py1 - (v - a->lo) / (a->hi - a->lo) * (g->py1 - g->py0);
}

/* Where the i-th of an arm's dots goes across its strip, in -1..1: the
 * golden-ratio sequence, so any run of consecutive passes spreads evenly
 * and the picture is the same on every run. */
static double jitter(size_t i)
{
    double x = (double)i * 0.6180339887498949;
    return 2 * (x - floor(x)) - 1;
}

/* The legend's entries in order: the two arms' dots, then the minimum and
 * the median bar. */
typedef struct legend_item {
    char *text;
    double x, y;       /* swatch's left edge and the row's middle */
} legend_item;

/* A minimum (kind 2: thick, solid) or median (3: thin, dashed) bar. Over
 * dots it lies on a white halo, else a dense strip of the same colour
 * swallows it. */
static void marker(sw *w, int kind, double x0, double x1, double y, const char *col, bool halo)
{
    double lw = kind == 2 ? 3.5 : 1.75;
    if (halo)
        sp_out(w,
            "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#FFFFFF\" stroke-width=\"%.2f\" "
            "stroke-opacity=\"0.85\"/>\n",
            x0 - 1, y, x1 + 1, y, lw + 2.5);
    sp_out(w, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" stroke-width=\"%.2f\"%s/>\n", x0,
        y, x1, y, col, lw, kind == 2 ? "" : " stroke-dasharray=\"4 2.5\"");
}

/* Text lines from a wrap, left-aligned at x, first baseline at y. */
static void text_lines(sw *w, const char *s, const lines *L, double x, double y, double lh, double px,
                       const char *attrs)
{
    for (size_t i = 0; i < L->n; i++) {
        sp_out(w, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"%.2f\" %s>", x, y + (double)i * lh, px, attrs);
        esc(w, s + L->v[i].off, L->v[i].len);
        sp_out(w, "</text>\n");
    }
}

int sp_write(FILE *f, const sp_plot *p)
{
    sw w = {f, 0};
    int rc = -1;
    char *title = clean(p->title), *sub = clean(p->subtitle), *vlab = clean(p->value_label);
    char *blab = clean(p->base_label), *mlab = clean(p->measure_label);
    armstat *st = calloc(2 * (p->nrep ? p->nrep : 1), sizeof *st);
    lines tl = {0}, sl = {0};
    legend_item li[4] = {{0}};
    if (!title || !sub || !vlab || !blab || !mlab || !st) {
        errno = ENOMEM;
        goto done;
    }

    uint64_t vmin = UINT64_MAX, vmax = 0;
    bool any = false;
    for (size_t r = 0; r < p->nrep; r++) {
        const sp_arm *arm[2] = {&p->rep[r].base, &p->rep[r].measure};
        for (int k = 0; k < 2; k++) {
            for (size_t i = 0; i < arm[k]->n; i++) {
                uint64_t v = arm[k]->v[i];
                if (v < vmin) vmin = v;
                if (v > vmax) vmax = v;
                any = true;
            }
            if (arm_stat(arm[k], &st[2 * r + (size_t)k]) != 0)
                goto done;
        }
    }
    uint64_t top;
    if (axis_top(p, st, vmax, &top) != 0)
        goto done;
    size_t above = 0;
    for (size_t r = 0; r < p->nrep; r++)
        for (int k = 0; k < 2; k++) {
            const sp_arm *a = k ? &p->rep[r].measure : &p->rep[r].base;
            for (size_t i = 0; i < a->n; i++)
                above += a->v[i] > top;
        }
    axis ax = sp_axis_of(vmin, top, any);
    ticks tk;
    sp_ticks_of(&ax, &tk);

    /* Horizontal: the axis title and tick labels on the left, then one
     * column per repetition; the figure widens with the repetitions rather
     * than squeezing them. */
    geo g;
    double tickw = 0;
    for (size_t i = 0; i < tk.n; i++) {
        double tw = text_w(tk.label[i], strlen(tk.label[i]), TICK_PX, false);
        if (tw > tickw) tickw = tw;
    }
    g.px0 = MARGIN + TICK_PX * 1.4 + 8 + tickw + 8;
    double nr = p->nrep ? (double)p->nrep : 1;
    g.W = g.px0 + nr * MIN_GROUP + 24;
    if (g.W < MIN_W)
        g.W = MIN_W;
    g.gw = (g.W - g.px0 - 24) / nr;
    g.px1 = g.px0 + g.gw * nr;

    /* Vertical: title, subtitle and legend, each as many lines as they
     * wrap to, then the plot. */
    double textw = g.W - 2 * MARGIN;
    if (wrap(title, TITLE_PX, true, textw, &tl) != 0 || wrap(sub, SUB_PX, false, textw, &sl) != 0)
        goto done;
    double y = MARGIN;
    double title_y = y + TITLE_PX;
    y += (double)tl.n * TITLE_PX * 1.3;
    double sub_y = y + SUB_PX + 2;
    if (sl.n)
        y += 2 + (double)sl.n * SUB_PX * 1.35;
    y += 10;

    /* The legend flows left to right and onto further rows when the labels
     * are long; a label wider than a whole row is cut with an ellipsis. */
    const char *ltext[4] = {blab, mlab, "minimum", "median"};
    double swatch = 22, gap = 6, sep = 22, row_h = LEGEND_PX * 1.7;
    double lx = MARGIN, ly = y + row_h / 2;
    for (int k = 0; k < 4; k++) {
        li[k].text = fit(ltext[k], LEGEND_PX, textw - swatch - gap);
        if (!li[k].text)
            goto done;
        double iw = swatch + gap + text_w(li[k].text, strlen(li[k].text), LEGEND_PX, false);
        if (lx > MARGIN && lx + iw > g.W - MARGIN) {
            lx = MARGIN;
            ly += row_h;
        }
        li[k].x = lx;
        li[k].y = ly;
        lx += iw + sep;
    }
    /* passes off the scale: one line under the legend */
    char note[160] = "";
    double note_y = 0;
    if (above) {
        char hi[32];
        time_text(vmax, hi, sizeof hi);
        snprintf(note, sizeof note, "\xE2\x96\xB2 %zu pass%s above the scale, up to %s: drawn on its top edge",
                 above, above == 1 ? "" : "es", hi);
        ly += row_h;
        note_y = ly + LEGEND_PX * 0.36;
    }
    y = ly + row_h / 2 + 12;
    g.py0 = y;
    g.py1 = y + PLOT_H;
    g.H = g.py1 + 8 + TICK_PX + MARGIN + 4;

    sp_out(&w, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n");
    sp_out(&w,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" height=\"%.0f\" "
        "viewBox=\"0 0 %.0f %.0f\" font-family=\"" FONT "\">\n",
        ceil(g.W), ceil(g.H), ceil(g.W), ceil(g.H));
    sp_out(&w, "<title>");
    esc(&w, title, strlen(title));
    sp_out(&w, "</title>\n");
    sp_out(&w, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#FFFFFF\"/>\n", ceil(g.W), ceil(g.H));

    text_lines(&w, title, &tl, MARGIN, title_y, TITLE_PX * 1.3, TITLE_PX,
               "font-weight=\"bold\" fill=\"" COL_INK "\"");
    text_lines(&w, sub, &sl, MARGIN, sub_y, SUB_PX * 1.35, SUB_PX, "fill=\"" COL_SOFT "\"");

    for (int k = 0; k < 4; k++) {
        double sx = li[k].x, sy = li[k].y;
        if (k < 2)
            sp_out(&w, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"5\" fill=\"%s\"/>\n", sx + swatch / 2, sy,
                k ? COL_MEAS : COL_BASE);
        else
            marker(&w, k, sx + 2, sx + swatch - 2, sy, COL_INK, false);
        sp_out(&w, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"%.2f\" fill=\"" COL_INK "\">", sx + swatch + gap,
            sy + LEGEND_PX * 0.36, LEGEND_PX);
        esc(&w, li[k].text, strlen(li[k].text));
        sp_out(&w, "</text>\n");
    }
    if (above)
        sp_out(&w, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"%.2f\" fill=\"" COL_INK "\">%s</text>\n", MARGIN, note_y,
            LEGEND_PX, note);

    /* grid and tick labels, then the repetition separators */
    for (size_t i = 0; i < tk.n; i++) {
        double ty = ymap(&g, &ax, tk.v[i]);
        sp_out(&w, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"" COL_GRID "\" stroke-width=\"1\"/>\n",
            g.px0, ty, g.px1, ty);
        sp_out(&w, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"" COL_INK "\" stroke-width=\"1\"/>\n",
            g.px0 - 5, ty, g.px0, ty);
        sp_out(&w, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"%.2f\" text-anchor=\"end\" fill=\"" COL_INK "\">%s</text>\n",
            g.px0 - 8, ty + TICK_PX * 0.36, TICK_PX, tk.label[i]);
    }
    for (size_t r = 1; r < p->nrep; r++) {
        double sx = g.px0 + g.gw * (double)r;
        sp_out(&w,
            "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#C8C8C8\" stroke-width=\"1\" "
            "stroke-dasharray=\"3 3\"/>\n",
            sx, g.py0, sx, g.py1);
    }
    {
        double cy = (g.py0 + g.py1) / 2, cx = MARGIN + TICK_PX;
        char *al = malloc(strlen(vlab) + 16);
        if (!al) {
            errno = ENOMEM;
            goto done;
        }
        if (*vlab)
            sprintf(al, "%s (%s)", vlab, ax.unit);
        else
            sprintf(al, "%s", ax.unit);
        char *alf = fit(al, TICK_PX, PLOT_H);
        free(al);
        if (!alf)
            goto done;
        sp_out(&w,
            "<text x=\"%.2f\" y=\"%.2f\" font-size=\"%.2f\" text-anchor=\"middle\" fill=\"" COL_INK
            "\" transform=\"rotate(-90 %.2f %.2f)\">",
            cx, cy, TICK_PX, cx, cy);
        esc(&w, alf, strlen(alf));
        sp_out(&w, "</text>\n");
        free(alf);
    }

    /* Dots under the markers, so a dense strip never hides its minimum. */
    /* the two strips of a repetition stay close however wide its column:
     * they are read against each other */
    double off = g.gw * 0.22 < 40 ? g.gw * 0.22 : 40, jw = g.gw * 0.13 < 16 ? g.gw * 0.13 : 16;
    double bw = jw + 6 < off - 3 ? jw + 6 : off - 3; /* the bars stick out, but never touch */
    for (size_t r = 0; r < p->nrep; r++) {
        double gc = g.px0 + g.gw * ((double)r + 0.5);
        const sp_arm *arm[2] = {&p->rep[r].base, &p->rep[r].measure};
        for (int k = 0; k < 2; k++) {
            double sx = gc + (k ? off : -off);
            const char *col = k ? COL_MEAS : COL_BASE;
            if (arm[k]->n == 0) {
                double cy = (g.py0 + g.py1) / 2;
                sp_out(&w,
                    "<text x=\"%.2f\" y=\"%.2f\" font-size=\"10\" text-anchor=\"middle\" fill=\"%s\" "
                    "transform=\"rotate(-90 %.2f %.2f)\">no passes</text>\n",
                    sx + 3.5, cy, col, sx + 3.5, cy);
                continue;
            }
            sp_out(&w, "<g fill=\"%s\" fill-opacity=\"0.5\">\n", col);
            for (size_t i = 0; i < arm[k]->n; i++) {
                double dx = sx + jw * jitter(i);
                if (arm[k]->v[i] > top) /* off the scale: a triangle on the top edge */
                    sp_out(&w, "<path d=\"M %.2f %.2f l -4.5 8 h 9 z\" fill-opacity=\"0.9\"/>\n", dx, g.py0 + 2);
                else
                    sp_out(&w, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"%.1f\"/>\n", dx,
                        ymap(&g, &ax, (double)arm[k]->v[i]), DOT_R);
            }
            sp_out(&w, "</g>\n");
        }
        for (int k = 0; k < 2; k++) {
            if (arm[k]->n == 0)
                continue;
            double sx = gc + (k ? off : -off);
            const char *col = k ? COL_MEAS : COL_BASE;
            const armstat *s = &st[2 * r + (size_t)k];
            marker(&w, 3, sx - bw, sx + bw, ymap(&g, &ax, s->med), col, true);
            marker(&w, 2, sx - bw, sx + bw, ymap(&g, &ax, (double)s->min), col, true);
        }
        sp_out(&w, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"%.2f\" text-anchor=\"middle\" fill=\"" COL_INK
            "\">rep %zu</text>\n", gc, g.py1 + 8 + TICK_PX, TICK_PX, r + 1);
    }

    /* the frame last, over the dots at the edges */
    sp_out(&w,
        "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"none\" stroke=\"" COL_INK
        "\" stroke-width=\"1\"/>\n",
        g.px0, g.py0, g.px1 - g.px0, g.py1 - g.py0);
    sp_out(&w, "</svg>\n");

    /* buffered bytes fail only when flushed: a full disk shows here */
    if (!w.err && fflush(f) != 0)
        w.err = errno ? errno : EIO;
    if (!w.err && ferror(f))
        w.err = EIO;
    if (w.err)
        errno = w.err;
    else
        rc = 0;
done:
    for (int k = 0; k < 4; k++)
        free(li[k].text);
    free(tl.v);
    free(sl.v);
    free(st);
    free(title);
    free(sub);
    free(vlab);
    free(blab);
    free(mlab);
    return rc;
}
