/* The clock of per-operation timings (see opclock.h). */
#include "orch/opclock.h"

#if HBG_HAVE_TSC
#include <cpuid.h>
#endif

void hbg__opclock_init(hbg__opclock *c)
{
    *c = (hbg__opclock){0};
#if HBG_HAVE_TSC
    unsigned a, b, cx, d;
    /* CPUID 0x80000007, EDX bit 8: invariant TSC. */
    if (__get_cpuid(0x80000007u, &a, &b, &cx, &d))
        c->tsc = (d >> 8) & 1;
#endif
}

/* One anchor: a monotonic read and the TSC at its middle. The TSC is read
 * on both sides of the monotonic read so the pair is as close as it can be;
 * the monotonic value itself is the one returned, so a segment timed with
 * plain monotonic reads around the anchors contains them. */
static void anchor(uint64_t *tick, uint64_t *mono)
{
#if HBG_HAVE_TSC
    uint64_t t0 = __rdtsc();
    *mono = hbg_mono_ns();
    uint64_t t1 = __rdtsc();
    *tick = t0 + (t1 - t0) / 2;
#else
    *mono = hbg_mono_ns();
    *tick = *mono;
#endif
}

void hbg__opclock_open(hbg__opclock *c)
{
    if (c->tsc)
        anchor(&c->map.ta, &c->map.ma);
}

void hbg__opclock_close(hbg__opclock *c)
{
    if (!c->tsc)
        return;
    anchor(&c->map.tb, &c->map.mb);
    hbg__clockmap_fix(&c->map);
}
