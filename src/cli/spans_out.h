/* The output of `hbg spans`: each view, the operation tails and the overlap
 * check, as a table, JSON or CSV (docs/spans.md). */
#ifndef HBG_CLI_SPANS_OUT_H
#define HBG_CLI_SPANS_OUT_H

#include <stdbool.h>
#include "tools/spans.h"

typedef enum so_view { SO_TPOT, SO_ROUNDS, SO_TREE, SO_OPS } so_view;
typedef enum so_format { SO_TABLE, SO_JSON, SO_CSV } so_format;

bool so_parse_view(const char *s, so_view *v);
bool so_parse_format(const char *s, so_format *f);

typedef struct so_ctx {
    const ps_log *L;
    const sp_set *S;
    so_format fmt;
    so_view view;
    dg_list *warn;          /* the command's own warnings (records files) */
    const rc_file *recs;
    size_t nrecs;
    const sp_ops *ops;      /* with --records */
    int *werr;              /* or NULL: receives the errno of a failed JSON write (jw writes to stdout's
                             * descriptor past the stream's buffer, so the stream cannot say why) */
} so_ctx;

/* Prints the warnings on stderr, then the view (and the tails, with
 * --records) on stdout. HBG_E_NOMEM only. */
hbg_status so_view_out(const so_ctx *o);

/* Prints the pairs checked and the first failing one; returns the exit
 * status: 0 every pair held, 1 one failed or there was none. */
int so_overlap(const so_ctx *o, const sp_overlap *ov, const char *a, const char *b, bool hidden);

#endif
