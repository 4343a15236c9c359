/* Test helper: log into an unlinked temporary file and read it back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "support/capture.h"

int capture_open(void)
{
    const char *dir = getenv("TMPDIR");
    char path[512];
    snprintf(path, sizeof path, "%s/hbg-capture-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    assert_int_equal(fcntl(fd, F_SETFL, O_APPEND), 0);
    return fd;
}

char *capture_read(int fd, size_t *len)
{
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    char *s = malloc((size_t)st.st_size + 1);
    assert_non_null(s);
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t k = pread(fd, s + got, (size_t)st.st_size - got, (off_t)got);
        assert_true(k > 0);
        got += (size_t)k;
    }
    s[got] = '\0';
    if (len)
        *len = got;
    return s;
}

size_t capture_count(const char *s, const char *needle)
{
    size_t n = 0;
    while (*s) {
        const char *e = strchr(s, '\n');
        size_t l = e ? (size_t)(e - s) : strlen(s);
        char *line = strndup(s, l);
        if (strstr(line, needle))
            n++;
        free(line);
        s += l + (e ? 1 : 0);
    }
    return n;
}

char *capture_line(const char *s, size_t i)
{
    while (i-- > 0) {
        s = strchr(s, '\n');
        if (!s)
            return NULL;
        s++;
    }
    if (!*s)
        return NULL;
    const char *e = strchr(s, '\n');
    return strndup(s, e ? (size_t)(e - s) : strlen(s));
}
