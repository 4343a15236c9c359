/* The stamp: the first line of a log, saying what was measured and how.
 *
 * hbg compare reads it back (src/tools/compare.c) and refuses to compare
 * logs whose stamps differ in more than the commit, so the one writer lives
 * here, in the library, for `hbg run` and a user's own program alike.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "trace/level.h"
#include "trace/trace_internal.h"

static bool commit_ok(const char *c)
{
    if (!c || !*c)
        return false;
    for (; *c; c++)
        if ((unsigned char)*c <= ' ' || *c == 0x7f)
            return false;
    return true;
}

hbg_status hbg_stamp_format(const hbg_stamp *s, char *buf, size_t cap)
{
    if (!s || !buf || !cap || !commit_ok(s->commit) || !s->command || (unsigned)s->level > HBG_LOG_OFF)
        return HBG_E_INVAL;
    const char *level = hbg__level_lower(s->level);
    int n = snprintf(buf, cap,
                     "[stamp] %s env HBG_BIND_BREAKDOWN=%d HBG_HOST_PHASE_RECORDS=%d HBG_SKIP_DEVICE_RUN=%d "
                     "HBG_LOG_LEVEL=%s %s",
                     s->commit, s->breakdown, s->records, s->skip_device, level, s->command);
    if (n < 0 || (size_t)n >= cap)
        return HBG_E_INVAL;
    /* A newline inside the command would end the stamp early and leave its
     * tail looking like a record of nobody's. */
    for (char *p = buf + (n - (int)strlen(s->command)); *p; p++)
        if ((unsigned char)*p < ' ' || *p == 0x7f)
            *p = ' ';
    return HBG_OK;
}

hbg_status hbg_log_stamp(int fd, const hbg_stamp *s)
{
    char line[HBG_LINE_MAX + 1];
    hbg_status st = hbg_stamp_format(s, line, sizeof line - 1);
    if (st)
        return st;
    size_t len = strlen(line);
    line[len++] = '\n';
    ssize_t k;
    do
        k = write(fd, line, len);
    while (k < 0 && errno == EINTR);
    if (k != (ssize_t)len) {
        if (k >= 0)
            errno = EIO;
        return HBG_E_IO;
    }
    return HBG_OK;
}
