/* Reading a file in whole-line pieces, with the next read already under
 * way on a second thread.
 *
 * read(2) of a log that is in the page cache is a copy the kernel makes:
 * about a quarter of `hbg phases` on a 200 MB log. A reader thread copies
 * the next piece while the caller lexes this one, so on a machine with a
 * second core that quarter overlaps the work instead of adding to it. Where
 * no thread can be started the same reads happen in line.
 *
 * Pieces end at a '\n' (or at the end of the file), so a record is never
 * split; a line longer than the buffer is gathered whole before it is
 * handed over. The caller sees pieces in file order, one at a time, on its
 * own thread. */
#ifndef HBG_TOOLS_LINEREADER_H
#define HBG_TOOLS_LINEREADER_H

#include <stdbool.h>
#include <stddef.h>

#define LR_CHUNK ((size_t)256 << 10) /* near the fastest read size measured here */

/* Calls fn(ctx, p, n) for each piece of fd, until the end of the file or
 * until fn returns false. chunk is the read size (0: LR_CHUNK; tests use
 * tiny ones). Returns 0; ENOMEM (a line that does not fit in memory, or
 * the buffers); or the errno of a failed read. */
int lr_read_lines(int fd, size_t chunk, bool (*fn)(void *ctx, const char *p, size_t n), void *ctx);

#endif
