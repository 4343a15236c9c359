/* The clock of per-operation timings.
 *
 * A timed operation reads the clock twice: every operation when per-op
 * records are armed, a sample of each kind with the breakdown alone
 * (opsample.h). clock_gettime costs ~26 ns on the
 * virtual machines this runs on, a sizable share of a 130 ns submit, so on
 * x86 with an invariant TSC the operations read the TSC (~10 ns) instead
 * and keep the raw ticks: no conversion inside the pass at all.
 *
 * The pass is bracketed by two anchors, each a CLOCK_MONOTONIC read paired
 * with the TSC; when the pass closes, the ticks are mapped to nanoseconds
 * linearly between them (util/clockmap.h). An earlier version converted
 * each reading at once with a rate measured over earlier passes and
 * extrapolated from the pass's opening anchor; rate error and clock slew
 * then put an operation up to ~1 us past the end of the host_orch segment
 * that contains it. Interpolating between anchors that lie inside the
 * segment cannot: every operation maps between them. With records armed
 * the anchors are the segment's own two reads (the _at forms); the
 * breakdown alone needs only the rate, and anchors outside the segment.
 * Other platforms read CLOCK_MONOTONIC directly and need no map.
 */
#ifndef HBG_ORCH_OPCLOCK_H
#define HBG_ORCH_OPCLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "hbg/trace.h"
#include "util/clockmap.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HBG_HAVE_TSC 1
#else
#define HBG_HAVE_TSC 0
#endif

typedef struct hbg__opclock {
    bool tsc;          /* readings are TSC ticks (an invariant TSC is present) */
    hbg__clockmap map; /* this pass's ticks to ns; complete after close */
    uint64_t pair_ns;  /* what two readings cost (calibrate) */
    bool calibrated;
} hbg__opclock;

/* Picks the clock. */
void hbg__opclock_init(hbg__opclock *c);
/* Measures what a timed operation's two readings cost, once (later calls
 * keep the figure): the breakdown's sampling weighs it against the
 * operations (opsample.h). A few microseconds, so it is taken when timing
 * is first turned on, not for every orchestrator (eager runs time nothing). */
void hbg__opclock_calibrate(hbg__opclock *c);
/* The opening anchor; readings after it belong to this pass. Call where
 * the timed region starts, outside any operation. */
void hbg__opclock_open(hbg__opclock *c);
/* The closing anchor: completes the map of the readings since open. */
void hbg__opclock_close(hbg__opclock *c);

/* An anchor read for a caller that times its region with the same
 * CLOCK_MONOTONIC read (the host_orch segment): returns that read and
 * puts the tick paired with it in *tick (the read itself on a clock
 * without the TSC). The _at forms take such a pair, so the region's own
 * two reads anchor the pass and the breakdown adds none. */
uint64_t hbg__opclock_anchor(const hbg__opclock *c, uint64_t *tick);
void hbg__opclock_open_at(hbg__opclock *c, uint64_t tick, uint64_t mono);
void hbg__opclock_close_at(hbg__opclock *c, uint64_t tick, uint64_t mono);

static inline uint64_t hbg__opclock_now(const hbg__opclock *c)
{
#if HBG_HAVE_TSC
    if (c->tsc)
        return __rdtsc();
#endif
    (void)c;
    return hbg_mono_ns();
}

/* A reading of this pass in CLOCK_MONOTONIC ns (after close). */
static inline uint64_t hbg__opclock_ns(const hbg__opclock *c, uint64_t t)
{
    return c->tsc ? hbg__clockmap_ns(&c->map, t) : t;
}

/* A difference of two readings, in ns (after close). */
static inline uint64_t hbg__opclock_dur(const hbg__opclock *c, uint64_t d)
{
    return c->tsc ? hbg__clockmap_dur(&c->map, d) : d;
}

#endif
