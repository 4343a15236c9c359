/* The strip plot of an A/B comparison, as a standalone SVG file: for each
 * repetition, each arm's warm per-pass sums as a column of dots side by
 * side (base, then measure), each arm's minimum and median marked, a time
 * axis with units, a legend naming the two commits, and the verdict in the
 * title. Written directly, no plotting dependency; the output renders the
 * same in librsvg (rsvg-convert) and in browsers. */
#ifndef HBG_TOOLS_SVGPLOT_H
#define HBG_TOOLS_SVGPLOT_H

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

/* Writes the SVG to f. Returns 0, or -1 when a write failed (errno set) or
 * memory ran out (errno ENOMEM). Text is XML-escaped; bytes that are not
 * valid XML characters are replaced. */
int sp_write(FILE *f, const sp_plot *p);

#endif
