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
        c->invariant = (d >> 8) & 1;
#endif
}

void hbg__opclock_pass(hbg__opclock *c)
{
#if HBG_HAVE_TSC
    if (c->invariant) {
        /* Bracket the monotonic read so the pair is as close as it can be. */
        uint64_t t0 = __rdtsc();
        uint64_t mono = hbg_mono_ns();
        uint64_t t1 = __rdtsc();
        uint64_t tick = t0 + (t1 - t0) / 2;
        if (!c->cal_tick) {
            c->cal_mono = mono, c->cal_tick = tick;
        } else if (mono - c->cal_mono >= 1000000 && tick > c->cal_tick) {
            /* At least 1 ms between anchors: the rate is good to well
             * under 0.1 %, and it only gets better pass after pass. */
            c->ns_per_tick = (double)(mono - c->cal_mono) / (double)(tick - c->cal_tick);
            c->tsc = true;
        }
        c->mono0 = mono, c->tick0 = tick;
        return;
    }
#endif
    c->tsc = false;
}
