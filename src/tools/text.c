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

int tx_open_file(const char *path, char *err, size_t errlen)
{
    return usable(open(path, O_RDONLY | O_CLOEXEC), path, err, errlen);
}

int tx_open_log(const char *arg, const char **name, char *err, size_t errlen)
{
    bool in = !strcmp(arg, "-");
    *name = in ? "<stdin>" : arg;
    return usable(in ? fcntl(0, F_DUPFD_CLOEXEC, 0) : open(arg, O_RDONLY | O_CLOEXEC), *name, err, errlen);
}
