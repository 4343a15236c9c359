/* Writing a stream's buffers to a descriptor on a second thread.
 *
 * write(2) of a large output into the page cache is a copy the kernel
 * makes, about a third of `hbg timeline`'s time on a trace of tens of
 * megabytes. A writer thread makes that copy while the caller formats the
 * next buffer, so on a machine with a second core it overlaps the work
 * instead of adding to it (the reading side's twin: linereader.h).
 *
 * Buffers are written in the order they are handed over, each whole. */
#ifndef HBG_TOOLS_BGWRITE_H
#define HBG_TOOLS_BGWRITE_H

#include <stddef.h>

typedef struct bw bw;

/* A writer of fd whose buffers hold size bytes each; NULL when no thread
 * or memory could be had (the caller then writes in line). */
bw *bw_open(int fd, size_t size);
/* The buffer to fill first. */
char *bw_buf(bw *b);
/* Hands over the first n bytes of the buffer last returned, and returns
 * the next one to fill (waiting until the thread has emptied one). */
char *bw_pass(bw *b, size_t n);
/* Waits until every buffer handed over is written; 0, or the errno of the
 * first write that failed (nothing after it is written). */
int bw_sync(bw *b);
/* Writes what was handed over, stops the thread and frees b; the result of
 * bw_sync. */
int bw_close(bw *b);

#endif
