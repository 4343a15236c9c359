/* [STRACE] span lines.
 *
 * The line ends "dur=<ns> " plus the optional "clk=dev": the original
 * runtime prints its optional fields after a fixed space, so a span without
 * them ends in one trailing space. We keep that byte for byte so the two
 * runtimes' logs stay interchangeable; readers search for `key=` and do not
 * care.
 */
#include <inttypes.h>

#include "trace/trace_internal.h"

/* Encoded names are capped so that a pathological name cannot push ts= and
 * dur= — the point of the line — past the end of the record. */
#define NAME_MAX_ENCODED 2048

/* Percent-encodes `name` into the record: every byte outside '!'..'~', and
 * the four bytes the grammar itself uses ('%', '[', ']', '='), becomes %XX. */
static void put_name(hbg__linebuf *r, const char *name)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t out = 0;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        unsigned char c = *p;
        bool plain = c >= '!' && c <= '~' && c != '%' && c != '[' && c != ']' && c != '=';
        size_t need = plain ? 1 : 3;
        if (out + need > NAME_MAX_ENCODED)
            break; /* never half an escape */
        if (plain) {
            hbg__line_putc(r, (char)c);
        } else {
            hbg__line_putc(r, '%');
            hbg__line_putc(r, hex[c >> 4]);
            hbg__line_putc(r, hex[c & 15]);
        }
        out += need;
    }
}

/* Named after the original's emitter, which is what the record's func field
 * shows. */
static void emit_host_span(hbg_log *lg, const hbg_span *s)
{
    hbg__log_anchor(lg);
    hbg__linebuf r;
    hbg__line_init(&r, hbg_mono_ns(), HBG_LOG_TIMING, __func__);
    hbg__line_printf(&r, "[STRACE] v=1 pid=%" PRIu32 " tid=%" PRIu32 " inv=%" PRIu64 " hid=%016" PRIx64
                       " depth=%d name=",
                   s->pid, s->tid, s->inv, s->hid, s->depth);
    put_name(&r, s->name ? s->name : "");
    hbg__line_printf(&r, " ts=%" PRIu64 " dur=%" PRIu64 " %s", s->ts, s->dur, s->dev_clock ? "clk=dev" : "");
    hbg__line_emit(lg, &r);
}

void hbg_log_span(hbg_log *lg, const hbg_span *s)
{
    if (!s || !hbg_log_enabled(lg, HBG_LOG_TIMING))
        return;
    emit_host_span(lg, s);
}
