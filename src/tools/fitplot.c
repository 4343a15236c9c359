/* The fit plot (see fitplot.h), plain SVG through svgplot.h's writer. The
 * counts of a sweep span decades, so both axes are logarithmic, from the
 * decade below the smallest value to the one above the largest (a value
 * on a decade gets the next one, so that no point sits on the frame). A
 * pass with a cost below 1 ns, measured or fitted (a model that gives a
 * small pass a negative cost), has no place on such an axis: it is drawn
 * as a cross on the frame, and the subtitle counts those. */
#include "tools/fitplot.h"

#include <errno.h>
#include <math.h>

#include "tools/svgplot.h"

#define W 640.0
#define H 560.0
#define X0 92.0
#define X1 (W - 48.0) /* room for half of the last x label, "1e4 s" and the like */
#define Y0 64.0
#define Y1 (H - 64.0)

typedef struct lax {
    double lo, hi; /* log10 of the drawn range */
} lax;

/* Where v lies across the axis, 0..1; a value below the axis (a fitted
 * cost of zero or less) sits on its edge. */
static double frac(const lax *a, double v)
{
    double l = v > 0 ? log10(v) : a->lo;
    l = l < a->lo ? a->lo : l > a->hi ? a->hi : l;
    return (l - a->lo) / (a->hi - a->lo);
}

static double xmap(const lax *a, double v)
{
    return X0 + frac(a, v) * (X1 - X0);
}

static double ymap(const lax *a, double v)
{
    return Y1 - frac(a, v) * (Y1 - Y0);
}

/* "100 µs" for 10^k ns; past 1000 s, "1e4 s". */
static void decade_label(int k, char *buf, size_t n)
{
    static const char *const unit[] = {"ns", "\xC2\xB5s", "ms", "s"};
    int u = k / 3 > 3 ? 3 : k / 3;
    if (k - 3 * u > 3)
        snprintf(buf, n, "1e%d s", k - 9);
    else
        snprintf(buf, n, "%.0f %s", pow(10, k - 3 * u), unit[u]);
}

static void axes(sp_writer *w, const lax *a)
{
    /* a grid line every decade, a label every `step` (at most nine), so
     * that labels of a wide sweep do not run into each other */
    int nd = (int)(a->hi - a->lo), step = (nd + 8) / 9;
    for (int k = (int)a->lo; k <= (int)a->hi; k++) {
        char lab[32];
        decade_label(k, lab, sizeof lab);
        double x = xmap(a, pow(10, k)), y = ymap(a, pow(10, k));
        sp_out(w, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\"/>\n", X0, y, X1, y,
               SP_COL_GRID);
        sp_out(w, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\"/>\n", x, Y0, x, Y1,
               SP_COL_GRID);
        if ((k - (int)a->lo) % step)
            continue;
        sp_out(w, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"12\" text-anchor=\"end\" fill=\"%s\">%s</text>\n",
               X0 - 6, y + 4, SP_COL_INK, lab);
        sp_out(w, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"12\" text-anchor=\"middle\" fill=\"%s\">%s</text>\n", x,
               Y1 + 18, SP_COL_INK, lab);
    }
    sp_out(w, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"none\" stroke=\"%s\"/>\n", X0, Y0,
           X1 - X0, Y1 - Y0, SP_COL_SOFT);
    sp_out(w, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"12\" text-anchor=\"middle\" fill=\"%s\">fitted control plane "
              "per pass (model)</text>\n",
           (X0 + X1) / 2, Y1 + 40, SP_COL_INK);
    sp_out(w, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"12\" text-anchor=\"middle\" fill=\"%s\" "
              "transform=\"rotate(-90 %.2f %.2f)\">measured control plane per pass</text>\n",
           18.0, (Y0 + Y1) / 2, SP_COL_INK, 18.0, (Y0 + Y1) / 2);
}

#define LEG_W 140.0

/* The legend's corner: top left, where a pass measured far above its fit
 * would lie, unless more passes lie under it there than bottom right
 * (far below its fit). Under it at 85 % opacity, a pass is hidden. */
static bool legend_below(const fit_data *d, const lax *a, double h)
{
    size_t top = 0, bottom = 0;
    for (size_t i = 0; i < d->n; i++) {
        double x = xmap(a, d->pt[i].fitted), y = ymap(a, d->pt[i].y);
        top += x <= X0 + 4 + LEG_W + 6 && y <= Y0 + 4 + h + 6;
        bottom += x >= X1 - 4 - LEG_W - 6 && y >= Y1 - 4 - h - 6;
    }
    return bottom < top;
}

/* A pass with no place on the axes, centred at (x, y). */
static void cross(sp_writer *w, double x, double y)
{
    sp_out(w, "<path d=\"M%.2f %.2fl8 8m0 -8l-8 8\" stroke=\"%s\" stroke-width=\"2\"/>\n", x - 4, y - 4, SP_COL_MEAS);
}

int fp_write(FILE *f, const fit_data *d, const fit_result *R, const char *title)
{
    sp_writer w = {f, 0};
    double vmin = INFINITY, vmax = 0;
    size_t off = 0; /* passes with a cost below 1 ns, drawn on the frame */
    for (size_t i = 0; i < d->n; i++) {
        for (int k = 0; k < 2; k++) {
            double v = k ? d->pt[i].fitted : d->pt[i].y;
            if (v >= 1)
                vmin = fmin(vmin, v), vmax = fmax(vmax, v);
        }
        off += d->pt[i].fitted < 1 || d->pt[i].y < 1;
    }
    if (vmax == 0)
        vmin = 1, vmax = 10;
    lax a = {fmax(0, floor(log10(vmin) - 0.01)), ceil(log10(vmax) + 0.01)}; /* from 1 ns: a decade per label */
    if (a.hi <= a.lo)
        a.hi = a.lo + 1;
    sp_out(&w, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" height=\"%.0f\" "
               "viewBox=\"0 0 %.0f %.0f\" font-family=\"%s\">\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"#FFFFFF\"/>\n",
           W, H, W, H, SP_FONT);
    sp_out(&w, "<text x=\"%.2f\" y=\"24\" font-size=\"16\" font-weight=\"bold\" fill=\"%s\">", X0, SP_COL_INK);
    sp_text(&w, title);
    char r2[48];
    if (isnan(R->r2))
        snprintf(r2, sizeof r2, "R\xC2\xB2 n/a (every pass costs the same)");
    else
        snprintf(r2, sizeof r2, "R\xC2\xB2 = %.6f", R->r2);
    char offs[96] = "";
    if (off)
        snprintf(offs, sizeof offs, "; %zu with a cost below 1 ns (\xC3\x97 on the frame)", off);
    sp_out(&w, "</text>\n<text x=\"%.2f\" y=\"44\" font-size=\"12\" fill=\"%s\">%zu passes, %s%s%s</text>\n", X0,
           SP_COL_SOFT, d->n, r2, R->superlinear ? "; residuals grow with size (super-linear)" : "", offs);
    axes(&w, &a);
    double lo = pow(10, a.lo), hi = pow(10, a.hi);
    sp_out(&w, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" stroke-dasharray=\"6 4\"/>\n",
           xmap(&a, lo), ymap(&a, lo), xmap(&a, hi), ymap(&a, hi), SP_COL_SOFT);
    for (size_t i = 0; i < d->n; i++) {
        double x = xmap(&a, d->pt[i].fitted), y = ymap(&a, d->pt[i].y);
        if (d->pt[i].fitted >= 1 && d->pt[i].y >= 1)
            sp_out(&w, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"3\" fill=\"%s\" fill-opacity=\"0.7\"/>\n", x, y,
                   SP_COL_BASE);
        else
            cross(&w, x, y);
    }
    if (d->n) {
        const fit_point *p = &d->pt[R->worst];
        sp_out(&w, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"6\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>\n",
               xmap(&a, p->fitted), ymap(&a, p->y), SP_COL_MEAS);
    }
    /* the legend, in the corner where fewer passes lie under it */
    double lh = off ? 80 : 62, lx = X0 + 4, ly = Y0 + 4;
    if (legend_below(d, &a, lh))
        lx = X1 - 4 - LEG_W, ly = Y1 - 4 - lh;
    sp_out(&w, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.0f\" height=\"%.0f\" fill=\"#FFFFFF\" "
               "fill-opacity=\"0.85\" stroke=\"%s\"/>\n",
           lx, ly, LEG_W, lh, SP_COL_GRID);
    sp_out(&w, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"3\" fill=\"%s\"/>\n", lx + 10, ly + 12, SP_COL_BASE);
    sp_out(&w, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"12\" fill=\"%s\">a warm pass</text>\n", lx + 20, ly + 16,
           SP_COL_INK);
    sp_out(&w, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"6\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>\n", lx + 10,
           ly + 32, SP_COL_MEAS);
    sp_out(&w, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"12\" fill=\"%s\">the worst residual</text>\n", lx + 20,
           ly + 36, SP_COL_INK);
    sp_out(&w, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" stroke-dasharray=\"6 4\"/>\n",
           lx + 2, ly + 52, lx + 18, ly + 52, SP_COL_SOFT);
    sp_out(&w, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"12\" fill=\"%s\">measured = fitted</text>\n", lx + 20,
           ly + 56, SP_COL_INK);
    if (off) {
        cross(&w, lx + 10, ly + 70);
        sp_out(&w, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"12\" fill=\"%s\">a cost below 1 ns</text>\n", lx + 20,
               ly + 74, SP_COL_INK);
    }
    sp_out(&w, "</svg>\n");
    if (!w.err && fflush(f))
        w.err = errno ? errno : EIO;
    if (w.err) {
        errno = w.err;
        return -1;
    }
    return 0;
}
