/* Whole writes to a file descriptor. */
#ifndef HBG_UTIL_FDIO_H
#define HBG_UTIL_FDIO_H
#include <stddef.h>

/* Writes all n bytes of p to fd: one write(2) when the kernel takes it
 * whole (on an O_APPEND file that keeps the bytes from interleaving with
 * another process's), continued after a short write and retried on EINTR.
 * 0 when done, else the failed write's errno (EIO for a write of nothing,
 * which would otherwise loop); errno is left set to it. */
int hbg__write_all(int fd, const void *p, size_t n);

#endif
