/* The record builder: formats one log record into a bounded stack buffer.
 *
 * Overflow never splits a record into two writes and never grows the
 * buffer: the content is cut at HBG_REC_MAX - 1 bytes and its last three
 * bytes become "...", so a reader can tell a cut record from a whole one
 * and every record still ends in exactly one newline.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "trace/trace_internal.h"

/* Content bytes available before the newline. */
#define CONTENT_MAX (HBG_REC_MAX - 1)

void hbg_rec_init(hbg_recbuf *r, uint64_t mono_ns, hbg_level l, const char *func)
{
    r->n = 0;
    r->truncated = false;
    /* pthread_t is an unsigned long on Linux; the handle (not the kernel tid)
     * is what the original runtime prints, so both logs lex alike. */
    hbg_rec_printf(r, "[mono_ns=%llu][T0x%lx][%s] %s: ", (unsigned long long)mono_ns,
                   (unsigned long)pthread_self(), hbg_level_name(l), func ? func : "?");
}

void hbg_rec_vprintf(hbg_recbuf *r, const char *fmt, va_list ap)
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

void hbg_rec_printf(hbg_recbuf *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hbg_rec_vprintf(r, fmt, ap);
    va_end(ap);
}

void hbg_rec_puts(hbg_recbuf *r, const char *s)
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

void hbg_rec_putc(hbg_recbuf *r, char c)
{
    if (r->truncated)
        return;
    if (r->n == CONTENT_MAX) {
        r->truncated = true;
        return;
    }
    r->b[r->n++] = c;
}
