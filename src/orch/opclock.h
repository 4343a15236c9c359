/* The clock of per-operation timings.
 *
 * A pass times every orchestrator operation when the breakdown or records
 * are on: two clock reads per submit. clock_gettime costs ~26 ns on the
 * virtual machines this runs on, a sizable share of a 130 ns submit, so on
 * x86 with an invariant TSC the operations read the TSC (~12 ns) instead and
 * convert to CLOCK_MONOTONIC nanoseconds with a rate measured between the
 * anchors of earlier passes. The first pass, before any rate is known, and
 * every other platform read CLOCK_MONOTONIC directly.
 */
#ifndef HBG_ORCH_OPCLOCK_H
#define HBG_ORCH_OPCLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "hbg/trace.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HBG_HAVE_TSC 1
#else
#define HBG_HAVE_TSC 0
#endif

typedef struct hbg__opclock {
    bool invariant;     /* the TSC ticks at a constant rate in every state */
    bool tsc;           /* this pass reads the TSC */
    double ns_per_tick;
    uint64_t mono0, tick0;        /* this pass's anchor */
    uint64_t cal_mono, cal_tick;  /* the first anchor: the rate's base */
} hbg__opclock;

void hbg__opclock_init(hbg__opclock *c);
/* Anchors a pass (and refines the rate). Call outside the timed region. */
void hbg__opclock_pass(hbg__opclock *c);

static inline uint64_t hbg__opclock_now(const hbg__opclock *c)
{
#if HBG_HAVE_TSC
    if (c->tsc)
        return __rdtsc();
#endif
    return hbg_mono_ns();
}

static inline uint64_t hbg__opclock_ns(const hbg__opclock *c, uint64_t t)
{
    if (!c->tsc)
        return t;
    return c->mono0 + (uint64_t)((double)(int64_t)(t - c->tick0) * c->ns_per_tick);
}

#endif
