/* The strip plot of an A/B comparison, as a standalone SVG file: for each
 * repetition, each arm's warm per-pass sums as a column of dots side by
 * side (base, then measure), each arm's minimum and median marked, a time
 * axis with units, a legend naming the two commits, and the verdict in the
 * title. Written directly, no plotting dependency; the output renders the
 * same in librsvg (rsvg-convert) and in browsers. */
#ifndef HBG_TOOLS_SVGPLOT_H
#define HBG_TOOLS_SVGPLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct sp_arm {
    const uint64_t *v;     /* per-pass sums, ns, any order */
    size_t n;              /* 0: no passes in this repetition (a "no passes" note instead of dots) */
} sp_arm;

typedef struct sp_rep {
    sp_arm base, measure;
} sp_rep;

typedef struct sp_plot {
    const char *title;         /* the verdict line, drawn as the title (escaped here) */
    const char *subtitle;      /* e.g. the case and the stamp's command; NULL: none */
    const char *base_label;    /* legend: e.g. "base 1a2b3c4" */
    const char *measure_label; /* legend: e.g. "measure 5d6e7f8" */
    const char *value_label;   /* axis title, e.g. "control-plane sum per pass" */
    const sp_rep *rep;
    size_t nrep;
} sp_plot;

/* The pieces every plot of the tools shares (the strip plot here, the fit
 * plot in fitplot.c): fonts and colours, a writer that keeps the first
 * failed write, escaped text, and a time axis with units. */
#define SP_FONT "DejaVu Sans, Arial, Helvetica, sans-serif"
/* Okabe-Ito blue and vermillion: apart for every common colour-vision
 * deficiency and in greyscale. */
#define SP_COL_BASE "#0072B2"
#define SP_COL_MEAS "#D55E00"
#define SP_COL_INK "#222222"
#define SP_COL_SOFT "#555555"
#define SP_COL_GRID "#E4E4E4"

typedef struct sp_writer {
    FILE *f;
    int err; /* errno of the first failed write; 0 while none has */
} sp_writer;

void sp_out(sp_writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Any text, made valid XML on one line and escaped. */
void sp_text(sp_writer *w, const char *s);

/* A linear time axis over [vmin, vmax] ns, padded 5 % each side, ticks
 * every 1, 2 or 5 times a power of ten, labelled in one unit. */
typedef struct sp_axis {
    double lo, hi;   /* the drawn range, ns */
    double step;     /* between ticks, ns */
    double scale;    /* ns per unit */
    const char *unit;
    int dec;         /* decimals of a tick label */
} sp_axis;

typedef struct sp_ticks {
    double v[64];
    char label[64][40];
    size_t n;
} sp_ticks;

sp_axis sp_axis_of(uint64_t vmin, uint64_t vmax, bool any);
void sp_ticks_of(const sp_axis *a, sp_ticks *t);

/* Writes the SVG to f. Returns 0, or -1 when a write failed (errno set) or
 * memory ran out (errno ENOMEM). Text is XML-escaped; bytes that are not
 * valid XML characters are replaced. */
int sp_write(FILE *f, const sp_plot *p);

#endif
