/* The stamp: the first line of a log, saying what was measured and how.
 *
 * hbg compare reads it back (src/tools/compare.c) and refuses to compare
 * logs whose stamps differ in more than the commit, so the one writer lives
 * here, in the library, for `hbg run` and a user's own program alike.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "trace/level.h"
#include "trace/trace_internal.h"
#include "util/printable.h"

/* Why this thread's last refused stamp call was refused
 * (hbg_stamp_last_error): a stamp is a caller's struct, with no object of
 * the library's to hold the words. */
static _Thread_local char last_error[192];

const char *hbg_stamp_last_error(void)
{
    return last_error;
}

/* Notes why in last_error; returns st. errno is kept: an HBG_E_IO's is
 * the caller's to read. */
__attribute__((format(printf, 2, 3))) static hbg_status fail(hbg_status st, const char *fmt, ...)
{
    int saved = errno;
    va_list ap;
    va_start(ap, fmt);
    hbg__vformat(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    errno = saved;
    return st;
}

/* The commit heads hbg compare's verdict lines and is read back as the
 * stamp's first word: it is refused here by compare's own rule
 * (hbg__text_flaw), so no stamp the library writes is one compare
 * refuses. */
static hbg_status check_commit(const char *c)
{
    if (!c)
        return fail(HBG_E_INVAL, "the stamp's commit is NULL");
    if (!*c)
        return fail(HBG_E_INVAL, "the stamp's commit is empty");
    size_t at = 0;
    const char *flaw = hbg__text_flaw(c, strlen(c), &at);
    if (flaw)
        return fail(HBG_E_INVAL, "the stamp's commit has %s at byte %zu", flaw, at);
    if (strlen(c) > HBG_STAMP_COMMIT_MAX)
        return fail(HBG_E_INVAL, "the stamp's commit is %zu bytes long (at most %d)", strlen(c), HBG_STAMP_COMMIT_MAX);
    const char *sp = strchr(c, ' ');
    if (sp)
        return fail(HBG_E_INVAL, "the stamp's commit has a space at byte %zu: it is one word", (size_t)(sp - c));
    return HBG_OK;
}

/* Formats the line into buf[0..cap); its length in *len. A line that
 * does not fit is refused with no words: the caller names whose room it
 * outgrew (a caller's cap, or a record's). */
static hbg_status format(const hbg_stamp *s, char *buf, size_t cap, size_t *len)
{
    if (!s)
        return fail(HBG_E_INVAL, "the stamp is NULL");
    hbg_status st = check_commit(s->commit);
    if (st)
        return st;
    if (!s->command)
        return fail(HBG_E_INVAL, "the stamp's command is NULL");
    if ((unsigned)s->level > HBG_LOG_OFF)
        return fail(HBG_E_INVAL, "the stamp's level %d is no hbg_level", (int)s->level);
    const char *level = hbg__level_lower(s->level);
    int n = snprintf(buf, cap,
                     "[stamp] %s env HBG_BIND_BREAKDOWN=%d HBG_HOST_PHASE_RECORDS=%d HBG_SKIP_DEVICE_RUN=%d "
                     "HBG_LOG_LEVEL=%s %s",
                     s->commit, s->breakdown, s->records, s->skip_device, level, s->command);
    if (n < 0)
        return fail(HBG_E_INVAL, "the stamp line could not be formatted");
    *len = (size_t)n;
    if ((size_t)n >= cap)
        return HBG_E_INVAL; /* the caller says whose room it outgrew */
    /* A newline inside the command would end the stamp early and leave its
     * tail looking like a record of nobody's. */
    for (char *p = buf + (n - (int)strlen(s->command)); *p; p++)
        if ((unsigned char)*p < ' ' || *p == 0x7f)
            *p = ' ';
    return HBG_OK;
}

hbg_status hbg_stamp_format(const hbg_stamp *s, char *buf, size_t cap)
{
    if (!buf)
        return fail(HBG_E_INVAL, "the stamp's buffer is NULL");
    if (!cap)
        return fail(HBG_E_INVAL, "cap is 0: no room for the stamp line");
    size_t len = 0;
    hbg_status st = format(s, buf, cap, &len);
    if (st && len >= cap)
        return fail(st, "the stamp line is %zu bytes; cap %zu holds %zu and its NUL", len, cap, cap - 1);
    return st;
}

hbg_status hbg_log_stamp(int fd, const hbg_stamp *s)
{
    char line[HBG_LINE_MAX + 1];
    size_t len = 0;
    hbg_status st = format(s, line, sizeof line - 1, &len);
    if (st && len >= sizeof line - 1)
        return fail(st, "the stamp line is %zu bytes; a record holds %zu and its newline", len,
                    (size_t)HBG_LINE_MAX - 1);
    if (st)
        return st;
    line[len++] = '\n';
    ssize_t k;
    do
        k = write(fd, line, len);
    while (k < 0 && errno == EINTR);
    if (k != (ssize_t)len) {
        if (k >= 0)
            errno = EIO;
        return fail(HBG_E_IO,
                    k < 0 ? "the stamp's write to fd %d failed: %s" : "the stamp's write to fd %d was short: %s", fd,
                    strerror(errno));
    }
    return HBG_OK;
}
