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

/* Back-to-back readings: what they cost in a row, which is what an
 * operation pays for its two (less when they overlap its work). The least
 * of a few tries, so a preemption does not make the clock look dear. */
void hbg__opclock_calibrate(hbg__opclock *c)
{
    if (c->calibrated)
        return;
    enum { READS = 128, TRIES = 4 };
    uint64_t best = UINT64_MAX, sink = 0;
    for (int t = 0; t < TRIES; t++) {
        uint64_t m0 = hbg_mono_ns();
        for (int i = 0; i < READS; i++)
            sink += hbg__opclock_now(c);
        uint64_t m1 = hbg_mono_ns();
        if (m1 - m0 < best)
            best = m1 - m0;
    }
    c->pair_ns = 2 * best / READS + (sink == 1); /* sink: the reads are used */
    c->calibrated = true;
}

/* One anchor: a monotonic read and the TSC at its middle. The TSC is read
 * on both sides of the monotonic read so the pair is as close as it can be;
 * the monotonic value itself is the one returned, so a segment timed with
 * plain monotonic reads around the anchors contains them. */
uint64_t hbg__opclock_anchor(const hbg__opclock *c, uint64_t *tick)
{
#if HBG_HAVE_TSC
    if (c->tsc) {
        uint64_t t0 = __rdtsc();
        uint64_t mono = hbg_mono_ns();
        uint64_t t1 = __rdtsc();
        *tick = t0 + (t1 - t0) / 2;
        return mono;
    }
#endif
    (void)c;
    return *tick = hbg_mono_ns();
}

void hbg__opclock_open_at(hbg__opclock *c, uint64_t tick, uint64_t mono)
{
    c->map.ta = tick, c->map.ma = mono;
}

void hbg__opclock_close_at(hbg__opclock *c, uint64_t tick, uint64_t mono)
{
    c->map.tb = tick, c->map.mb = mono;
    if (c->tsc)
        hbg__clockmap_fix(&c->map);
}

void hbg__opclock_open(hbg__opclock *c)
{
    uint64_t tick, mono = hbg__opclock_anchor(c, &tick);
    hbg__opclock_open_at(c, tick, mono);
}

void hbg__opclock_close(hbg__opclock *c)
{
    uint64_t tick, mono = hbg__opclock_anchor(c, &tick);
    hbg__opclock_close_at(c, tick, mono);
}
