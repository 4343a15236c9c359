/* Whole-file input for the log tools (a records file is parsed from one
 * buffer, read into memory: a file truncated or rewritten while the command
 * runs leaves it a snapshot, never a signal). Logs themselves are
 * read in pieces: linereader.h. */
#ifndef HBG_TOOLS_TEXT_H
#define HBG_TOOLS_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include "hbg/status.h"

typedef struct tx_file {
    const char *path;
    const char *data;
    size_t len;        /* data is malloc'd */
} tx_file;

/* On failure writes a one-line reason ("cannot open X: No such file...")
 * into err and returns HBG_E_IO. */
hbg_status tx_load(const char *path, tx_file *f, char *err, size_t errlen);
void tx_close(tx_file *f);

/* Opens a log for reading front to back: "-" is standard input, named
 * "<stdin>" in *name (else *name is arg). A directory is refused. Returns
 * the descriptor, or -1 with a one-line reason in err. */
int tx_open_log(const char *arg, const char **name, char *err, size_t errlen);

#endif
