/* Messages are formatted once, when found; a pathological input that would
 * produce millions of them is capped so memory stays bounded. */
#include "tools/diag.h"
#include "util/printable.h"
#include "util/vec.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dg_init(dg_list *d, size_t limit)
{
    d->msg = NULL;
    d->n = d->cap = 0;
    d->limit = limit;
    d->suppressed = 0;
}

static void vadd(dg_list *d, bool always, const char *fmt, va_list ap)
{
    if (!always && d->limit && d->n >= d->limit) {
        d->suppressed++;
        return;
    }
    if (!vec_grow((void **)&d->msg, &d->cap, d->n + 1, sizeof *d->msg)) {
        d->suppressed++;
        return;
    }
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0) {
        d->suppressed++;
        return;
    }
    d->msg[d->n++] = dg_sanitize(s); /* a message quotes bytes of its input */
}

void dg_add(dg_list *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vadd(d, false, fmt, ap);
    va_end(ap);
}

void dg_add_always(dg_list *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vadd(d, true, fmt, ap);
    va_end(ap);
}

char *dg_sanitize(char *s)
{
    return hbg__mask_controls(s);
}

const char *dg_shown(const char *s)
{
    static _Thread_local char buf[4][1024];
    static _Thread_local unsigned next;
    size_t n = strlen(s);
    if (!hbg__has_control(s, n))
        return s;
    char *b = buf[next++ % 4];
    if (n >= sizeof buf[0]) { /* a path that long is shown by its end: where it differs */
        memcpy(b, "...", 3);
        memcpy(b + 3, s + n - (sizeof buf[0] - 4), sizeof buf[0] - 4);
        b[sizeof buf[0] - 1] = '\0';
    } else {
        memcpy(b, s, n + 1);
    }
    return hbg__mask_controls(b);
}

void dg_free(dg_list *d)
{
    for (size_t i = 0; i < d->n; i++)
        free(d->msg[i]);
    free(d->msg);
    d->msg = NULL;
    d->n = d->cap = 0;
}

const char *dg_more(size_t n, char *buf, size_t cap)
{
    snprintf(buf, cap, "%zu more warning%s not shown", n, n == 1 ? "" : "s");
    return buf;
}
