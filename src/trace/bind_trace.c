/* The bind burst: the `bind phase=` and `host-orch phase=` lines of one pass.
 *
 * The pipeline fills an hbg_bind_trace with numbers while the pass runs;
 * only here, after the pass, does any text get formatted. Every line of a
 * burst carries the same mono_ns — the moment the burst was written — as the
 * original runtime's do; the timing that matters is in start_ns/dur_ns.
 *
 * arena_h2d is written last among the segments whatever `order` says: the
 * original tool closes a pass at arena_h2d, and a segment after it would be
 * credited to the next pass. Each segment is written at most once.
 */
#include <inttypes.h>

#include "trace/trace_internal.h"

static void segment_line(hbg_log *lg, uint64_t mono, const hbg_bind_trace *bt, unsigned s,
                         const char *func)
{
    hbg__linebuf r;
    hbg__line_init(&r, mono, HBG_LOG_TIMING, func);
    /* The attributes sit between two fixed spaces, so a segment without
     * any shows "dur_ns=<ns>  pid=", as the original's lines do. */
    hbg__line_printf(&r, "[bind_trace.c:%d] bind phase=%s start_ns=%" PRIu64 " dur_ns=%" PRIu64 " ",
                   __LINE__, hbg_phase_name((hbg_phase)s), bt->seg[s].start_ns, bt->seg[s].dur_ns);
    uint32_t nattr = bt->seg[s].nattr <= HBG_MAX_ATTRS ? bt->seg[s].nattr : HBG_MAX_ATTRS;
    bool first = true;
    for (uint32_t i = 0; i < nattr; i++) {
        const hbg_attr *a = &bt->seg[s].attr[i];
        if (!a->key)
            continue;
        hbg__line_printf(&r, "%s%s=%" PRIu64, first ? "" : " ", a->key, a->value);
        first = false;
    }
    hbg__line_printf(&r, " pid=%" PRIu32 " inv=%" PRIu64, bt->pid, bt->inv);
    hbg__line_emit(lg, &r);
}

static void op_line(hbg_log *lg, uint64_t mono, const hbg_bind_trace *bt, unsigned k,
                    const char *func)
{
    hbg__linebuf r;
    hbg__line_init(&r, mono, HBG_LOG_TIMING, func);
    hbg__line_printf(&r,
                   "[bind_trace.c:%d] host-orch phase=%s total_ns=%" PRIu64 " count=%" PRIu64
                   " detail_sum=%" PRIu64 " dropped=%" PRIu64 " timed=%" PRIu64 " pid=%" PRIu32 " inv=%" PRIu64,
                   __LINE__, hbg_phase_name((hbg_phase)(HBG_SEGMENT_COUNT + k)), bt->op[k].total_ns,
                   bt->op[k].count, bt->op[k].detail_sum, bt->op[k].dropped, bt->op[k].timed, bt->pid, bt->inv);
    hbg__line_emit(lg, &r);
}

/* The records' func field reads "bind_trace_end", as docs/log-format.md fixes
 * (the original runtime's tools match on it). */
static void bind_trace_end(hbg_log *lg, const hbg_bind_trace *bt)
{
    hbg__log_anchor(lg);
    uint64_t mono = hbg_mono_ns();
    uint32_t seen = 0;
    bool h2d = false;
    uint32_t nran = bt->nran <= HBG_SEGMENT_COUNT ? bt->nran : HBG_SEGMENT_COUNT;
    for (uint32_t i = 0; i < nran; i++) {
        unsigned s = bt->order[i];
        if (s >= HBG_SEGMENT_COUNT || (seen & (1u << s)))
            continue;
        seen |= 1u << s;
        if (s == HBG_PH_ARENA_H2D) {
            h2d = true;
            continue;
        }
        segment_line(lg, mono, bt, s, __func__);
    }
    if (h2d)
        segment_line(lg, mono, bt, HBG_PH_ARENA_H2D, __func__);
    for (unsigned k = 0; k < HBG_OP_COUNT; k++)
        op_line(lg, mono, bt, k, __func__);
}

void hbg_bind_trace_emit(hbg_log *lg, const hbg_bind_trace *bt)
{
    if (!bt || !hbg_log_enabled(lg, HBG_LOG_TIMING))
        return;
    bind_trace_end(lg, bt);
}
