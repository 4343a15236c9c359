/* Whole-file input for the log tools, and byte offset -> line number.
 *
 * The tools read a log once: it is mapped (or, for pipes and empty files,
 * read) into one contiguous buffer, and every later stage refers to records
 * by byte offset. Line numbers are only needed for messages, so they are
 * computed on demand instead of being counted for every line. */
#ifndef HBG_TOOLS_TEXT_H
#define HBG_TOOLS_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include "hbg/status.h"

typedef struct tx_file {
    const char *path;
    const char *data;
    size_t len;
    int mapped;        /* 1: munmap on close; 0: free */
} tx_file;

/* On failure writes a one-line reason ("cannot open X: No such file...")
 * into err and returns HBG_E_IO. */
hbg_status tx_load(const char *path, tx_file *f, char *err, size_t errlen);
void tx_close(tx_file *f);

/* Line numbers (1-based, '\n' separated) of byte offsets. Queries in
 * increasing order cost one pass over the buffer in total. */
typedef struct tx_lines {
    const char *data;
    size_t len;
    size_t at_off;     /* cursor: offset ... */
    size_t at_line;    /* ... and the line it is on */
} tx_lines;

void tx_lines_init(tx_lines *l, const char *data, size_t len);
size_t tx_lineno(tx_lines *l, size_t off);

#endif
