/* Input for the log tools: logs and records files are opened here and
 * read in pieces (linereader.h), with read(2), never mapped: a file
 * truncated or rewritten while the command runs leaves what was read a
 * snapshot, never a signal. */
#ifndef HBG_TOOLS_TEXT_H
#define HBG_TOOLS_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include "hbg/status.h"

/* Opens the file at path for reading front to back; a directory is
 * refused. Returns the descriptor, or -1 with a one-line reason ("cannot
 * open X: No such file...") in err. */
int tx_open_file(const char *path, char *err, size_t errlen);

/* Opens a log for reading front to back: "-" is standard input, named
 * "<stdin>" in *name (else *name is arg). A directory is refused. Returns
 * the descriptor, or -1 with a one-line reason in err. */
int tx_open_log(const char *arg, const char **name, char *err, size_t errlen);

#endif
