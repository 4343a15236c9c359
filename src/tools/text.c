/* Opening a log or a records file to read in pieces (read, never mapped). */
#include "tools/text.h"
#include "tools/diag.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* fd, just opened as name (-1: the open failed), unless it is a
 * directory; -1 with the reason in err. */
static int usable(int fd, const char *name, char *err, size_t errlen)
{
    if (fd < 0) {
        snprintf(err, errlen, "cannot open %s: %s", dg_shown(name), strerror(errno));
        return -1;
    }
    struct stat sb;
    if (fstat(fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        snprintf(err, errlen, "cannot read %s: it is a directory", dg_shown(name));
        close(fd);
        return -1;
    }
    posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    return fd;
}

/* fd, opened by a name, unless it is standard input held write-only: a
 * name of fd 0 (/dev/stdin) opens again what fd 0 is on, and with stdin
 * closed at start that is the write-only /dev/null the command put there,
 * read as an empty log ("has no [stamp] line") where "-" fails with EBADF.
 * -1 with the reason in err. */
static int not_held_stdin(int fd, const char *name, char *err, size_t errlen)
{
    struct stat a, b;
    int fl = fcntl(0, F_GETFL);
    if (fd >= 0 && fl >= 0 && (fl & O_ACCMODE) == O_WRONLY && !fstat(fd, &a) && !fstat(0, &b) && S_ISCHR(a.st_mode) &&
        a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
        snprintf(err, errlen, "cannot read %s: standard input is not open for reading", dg_shown(name));
        close(fd);
        return -1;
    }
    return fd;
}

int tx_open_file(const char *path, char *err, size_t errlen)
{
    int fd = usable(open(path, O_RDONLY | O_CLOEXEC), path, err, errlen);
    return fd < 0 ? fd : not_held_stdin(fd, path, err, errlen);
}

int tx_open_log(const char *arg, const char **name, char *err, size_t errlen)
{
    bool in = !strcmp(arg, "-");
    *name = in ? "<stdin>" : arg;
    int fd = usable(in ? fcntl(0, F_DUPFD_CLOEXEC, 0) : open(arg, O_RDONLY | O_CLOEXEC), *name, err, errlen);
    return fd < 0 || in ? fd : not_held_stdin(fd, arg, err, errlen);
}
