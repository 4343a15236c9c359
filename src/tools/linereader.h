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
 * split; a line longer than the buffer is gathered whole (up to
 * LR_MAX_LINE) before it is handed over. A file without a '\n' whose
 * lines end in CRs alone is handed over in pieces that end at a CR once
 * it passes LR_MAX_LINE (below that, as one piece), up to a '\n' that
 * comes after all (a '\n' log joined to it): from the last CR before that,
 * pieces end at a '\n' again. The caller sees pieces in file order, one at a time, on its
 * own thread. */
#ifndef HBG_TOOLS_LINEREADER_H
#define HBG_TOOLS_LINEREADER_H

#include <stdbool.h>
#include <stddef.h>

#define LR_CHUNK ((size_t)256 << 10) /* near the fastest read size measured here */
/* The longest line gathered: a record is at most a few KiB, and a file
 * that ends in gigabytes without a '\n' (the NUL tail a crash leaves, or
 * /dev/zero) must not be held whole in memory. A longer line is handed
 * over as its first LR_MAX_LINE bytes and its line end, so line numbers
 * stay right, and is counted in *cut. */
#define LR_MAX_LINE ((size_t)16 << 20)

/* Calls fn(ctx, p, n) for each piece of fd, until the end of the file or
 * until fn returns false. chunk is the read size (0: LR_CHUNK; tests use
 * tiny ones); max_line the longest line gathered (0: LR_MAX_LINE; at
 * least the read size, since a line inside one piece is passed as read). *cut
 * (when cut is not NULL) counts the lines cut to max_line. Returns 0;
 * ENOMEM (the buffers); or the errno of a failed read. */
int lr_read_lines(int fd, size_t chunk, size_t max_line, bool (*fn)(void *ctx, const char *p, size_t n), void *ctx,
                  size_t *cut);

#endif
