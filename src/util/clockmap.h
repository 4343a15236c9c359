/* A map from a fast counter's ticks to CLOCK_MONOTONIC nanoseconds, fixed
 * by two anchors: tick ta was read with monotonic time ma, tb with mb.
 *
 * Ticks between the anchors map linearly between ma and mb, and a tick
 * outside them is clamped to the nearer anchor, so everything timed between
 * the two anchor reads lands between ma and mb, whatever the counter's rate
 * and however the monotonic clock was slewed meanwhile. That is the property
 * the per-operation records need: an operation always nests inside the
 * segment whose start and end bracket the anchors.
 */
#ifndef HBG_UTIL_CLOCKMAP_H
#define HBG_UTIL_CLOCKMAP_H

#include <stdint.h>

typedef struct hbg__clockmap {
    uint64_t ta, ma; /* the opening anchor: tick, nanoseconds */
    uint64_t tb, mb; /* the closing anchor */
    double ns_per_tick;
} hbg__clockmap;

/* Completes the map once both anchors are in. */
static inline void hbg__clockmap_fix(hbg__clockmap *m)
{
    if (m->tb <= m->ta || m->mb < m->ma) {
        /* No time between the anchors (or a clock that went back): map
         * everything onto the opening anchor rather than divide by zero. */
        m->tb = m->ta, m->mb = m->ma, m->ns_per_tick = 0;
        return;
    }
    m->ns_per_tick = (double)(m->mb - m->ma) / (double)(m->tb - m->ta);
}

static inline uint64_t hbg__clockmap_ns(const hbg__clockmap *m, uint64_t t)
{
    if (t <= m->ta)
        return m->ma;
    if (t >= m->tb)
        return m->mb;
    uint64_t ns = m->ma + (uint64_t)((double)(t - m->ta) * m->ns_per_tick);
    return ns < m->mb ? ns : m->mb; /* rounding never crosses the anchor */
}

/* A duration of `ticks`, in nanoseconds, at the map's rate. */
static inline uint64_t hbg__clockmap_dur(const hbg__clockmap *m, uint64_t ticks)
{
    return (uint64_t)((double)ticks * m->ns_per_tick + 0.5);
}

#endif
