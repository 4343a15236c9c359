/* Reading a records file whole (read, never mapped), and opening a log to read in pieces. */
#include "tools/text.h"
#include "util/vec.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Reads to the end in growing chunks, starting from the size fstat gave.
 * The file is read rather than mapped: a mapped file truncated by another
 * process while it is parsed kills the reader with SIGBUS, whereas bytes
 * read are a snapshot that no later change to the file can take away. */
static hbg_status read_all(int fd, size_t hint, tx_file *f, char *err, size_t errlen)
{
    size_t cap = hint + 1 > ((size_t)1 << 16) ? hint + 1 : (size_t)1 << 16, len = 0;
    char *buf = malloc(cap);
    if (!buf) {
        snprintf(err, errlen, "%s: out of memory", f->path);
        return HBG_E_NOMEM;
    }
    for (;;) {
        if (!vec_grow((void **)&buf, &cap, len + 1, 1)) {
            free(buf);
            snprintf(err, errlen, "%s: out of memory", f->path);
            return HBG_E_NOMEM;
        }
        ssize_t n = read(fd, buf + len, cap - len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            snprintf(err, errlen, "cannot read %s: %s", f->path, strerror(errno));
            free(buf);
            return HBG_E_IO;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    f->data = buf;
    f->len = len;
    return HBG_OK;
}

hbg_status tx_load(const char *path, tx_file *f, char *err, size_t errlen)
{
    memset(f, 0, sizeof *f);
    f->path = path;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return HBG_E_IO;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(err, errlen, "cannot stat %s: %s", path, strerror(errno));
        close(fd);
        return HBG_E_IO;
    }
    if (S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "cannot read %s: it is a directory", path);
        close(fd);
        return HBG_E_IO;
    }
    posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    size_t hint = S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size : 0;
    hbg_status rc = read_all(fd, hint, f, err, errlen);
    close(fd);
    return rc;
}

void tx_close(tx_file *f)
{
    if (!f->data)
        return;
    free((void *)f->data);
    f->data = NULL;
    f->len = 0;
}

int tx_open_log(const char *arg, const char **name, char *err, size_t errlen)
{
    bool in = !strcmp(arg, "-");
    *name = in ? "<stdin>" : arg;
    int fd = in ? fcntl(0, F_DUPFD_CLOEXEC, 0) : open(arg, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open %s: %s", *name, strerror(errno));
        return -1;
    }
    struct stat sb;
    if (fstat(fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        snprintf(err, errlen, "cannot read %s: it is a directory", *name);
        close(fd);
        return -1;
    }
    posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    return fd;
}
