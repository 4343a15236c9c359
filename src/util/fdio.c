/* Whole writes to a file descriptor (see fdio.h). */
#include <errno.h>
#include <unistd.h>

#include "util/fdio.h"

int hbg__write_all(int fd, const void *p, size_t n)
{
    const char *s = p;
    while (n) {
        ssize_t k = write(fd, s, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            if (k == 0 || !errno)
                errno = EIO;
            return errno;
        }
        s += k;
        n -= (size_t)k;
    }
    return 0;
}
