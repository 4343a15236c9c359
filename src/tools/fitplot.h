/* The plot of a cost-model fit: each pass's measured control plane
 * against what the model gives for its counts, on log-log axes, with the
 * line measured = fitted and the worst residual marked. */
#ifndef HBG_TOOLS_FITPLOT_H
#define HBG_TOOLS_FITPLOT_H

#include <stdio.h>
#include "tools/fit.h"

/* Writes the SVG to f. Returns 0, or -1 when a write failed (errno set). */
int fp_write(FILE *f, const fit_data *d, const fit_result *R, const char *title);

#endif
