/* The line builder: formats one log line into a bounded stack buffer.
 *
 * Overflow never splits a line into two writes and never grows the
 * buffer: the content is cut at HBG_LINE_MAX - 1 bytes and its last three
 * bytes become "...", so a reader can tell a cut line from a whole one
 * and every line still ends in exactly one newline.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "trace/trace_internal.h"

/* Content bytes available before the newline. */
#define CONTENT_MAX (HBG_LINE_MAX - 1)

void hbg__line_init(hbg__linebuf *r, uint64_t mono_ns, hbg_level l, const char *func)
{
    r->n = 0;
    r->truncated = false;
    /* pthread_t is an unsigned long on Linux; the handle (not the kernel tid)
     * is what the original runtime prints, so both logs lex alike. */
    hbg__line_printf(r, "[mono_ns=%llu][T0x%lx][%s] %s: ", (unsigned long long)mono_ns,
                   (unsigned long)pthread_self(), hbg_level_name(l), func ? func : "?");
}

void hbg__line_vprintf(hbg__linebuf *r, const char *fmt, va_list ap)
{
    if (r->truncated)
        return;
    size_t room = CONTENT_MAX - r->n;
    int k = vsnprintf(r->b + r->n, room + 1, fmt, ap);
    if (k < 0)
        return;
    if ((size_t)k > room) {
        r->n = CONTENT_MAX;
        r->truncated = true;
    } else {
        r->n += (size_t)k;
    }
}

void hbg__line_printf(hbg__linebuf *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hbg__line_vprintf(r, fmt, ap);
    va_end(ap);
}

void hbg__line_puts(hbg__linebuf *r, const char *s)
{
    if (r->truncated)
        return;
    size_t len = strlen(s), room = CONTENT_MAX - r->n;
    if (len > room) {
        memcpy(r->b + r->n, s, room);
        r->n = CONTENT_MAX;
        r->truncated = true;
        return;
    }
    memcpy(r->b + r->n, s, len);
    r->n += len;
}

void hbg__line_putc(hbg__linebuf *r, char c)
{
    if (r->truncated)
        return;
    if (r->n == CONTENT_MAX) {
        r->truncated = true;
        return;
    }
    r->b[r->n++] = c;
}
