/* Which operations the breakdown times.
 *
 * Timing an operation costs two clock reads, ~12 ns each on the AMD
 * virtual machines this runs on (opclock.h), and a warm pass makes
 * thousands of operations, most of them memo answers of 30-40 ns: timing
 * every one made the breakdown switch cost 5-9 % of the control plane it
 * measures. So the breakdown times a random sample of each kind's
 * operations and counts all of them:
 *
 *   - `count` and `detail_sum` are exact; `timed` says how many of the
 *     `count` operations were timed;
 *   - the kind's total is the timed operations' sum scaled by
 *     count / timed, an estimate of the whole; timed = 0 with count > 0
 *     (a pass of fewer operations than the last pass's period) leaves it
 *     unknown, 0.
 *
 * A kind's period P (one operation in P timed, on average) is chosen when
 * a pass begins, from the last pass that was timed: the P at which timing
 * costs HBG_OPSAMPLE_COST_PERMILLE per mille of the kind's time (two clock
 * reads, measured when timing is first turned on, against the kind's mean
 * operation), but at most the kind's count in that pass, so a pass like
 * it times at least one of each kind, and at most HBG_OPSAMPLE_MAX_PERIOD.
 * A memo answer of 30 ns gets the longest period; a Graph replay of 150 ns
 * one near 30; a Definition build of tens of microseconds is timed whole,
 * as is every kind in the first pass, which has no pass before it, and in
 * a pass with per-op records armed (every operation needs its record).
 * In place a timed operation costs some four times its reads in a row
 * (~90 ns on the development VM: the reads, a draw, two branches the
 * predictor misses), so the sample costs about 2 % of the operations'
 * time, and counting the untimed ones about 1 % more (bench_breakdown).
 *
 * One operation at random in each block of P, not every P-th: a case's
 * operations repeat with the period of its layers, and a fixed stride
 * that divides that period would time the same operation of every layer
 * and nothing else. The pass's operations of a kind fall in consecutive
 * blocks of P, and in each block one place is drawn uniformly: every
 * operation is timed with probability 1/P, wherever it lies in the pass
 * (gaps drawn independently, the first in [1, P] and the rest in
 * [1, 2P - 1], favoured the first two blocks: +12 % on a pass whose dear
 * operations came late). The estimate is then unbiased but for the
 * rounding of the last, partial block, and a pass of at least P
 * operations times at least one.
 */
#ifndef HBG_ORCH_OPSAMPLE_H
#define HBG_ORCH_OPSAMPLE_H

#include <stdint.h>

/* What timing costs a kind, as a share of its time, in per mille (of the
 * clock reads alone). */
#define HBG_OPSAMPLE_COST_PERMILLE 5u
/* The longest period: 64 keeps a 30 ns memo answer's share near 1 %. */
#define HBG_OPSAMPLE_MAX_PERIOD 64u
/* The generator's seed (xorshift must not start at 0). */
#define HBG_OPSAMPLE_SEED 0x9e3779b97f4a7c15ull

/* The period of a kind whose last timed pass made `count` operations
 * that took `total_ns` in all, on a clock whose two reads cost `pair_ns`. */
static inline uint32_t hbg__opsample_period(uint64_t count, uint64_t total_ns, uint64_t pair_ns)
{
    if (!count || !total_ns)
        return 1;
    /* P >= pair / (permille / 1000 * mean), mean = total / count, rounded
     * up; past 2^64 the longest period */
    uint64_t den = (uint64_t)HBG_OPSAMPLE_COST_PERMILLE * total_ns;
    uint64_t want = pair_ns > UINT64_MAX / 1000 / count ? HBG_OPSAMPLE_MAX_PERIOD
                                                        : (1000 * pair_ns * count + den - 1) / den;
    uint64_t p = want < count ? want : count;
    return p < 1 ? 1 : p > HBG_OPSAMPLE_MAX_PERIOD ? HBG_OPSAMPLE_MAX_PERIOD : (uint32_t)p;
}

/* xorshift64*: 32 good bits a draw, a few cycles, drawn only for timed
 * operations. */
static inline uint32_t hbg__opsample_rand(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return (uint32_t)((x * 0x2545f4914f6cdd1dull) >> 32);
}

/* A uniform draw from [1, n] (n >= 1), by multiply and shift: no
 * division on the path. */
static inline uint32_t hbg__opsample_draw(uint64_t *s, uint32_t n)
{
    return 1 + (uint32_t)(((uint64_t)hbg__opsample_rand(s) * n) >> 32);
}

/* Operations until the pass's first timed one: the place drawn in the
 * first block, 1 .. P; *at is that place, 0 .. P - 1. */
static inline uint32_t hbg__opsample_first(uint64_t *s, uint32_t period, uint32_t *at)
{
    *at = period <= 1 ? 0 : hbg__opsample_draw(s, period) - 1;
    return *at + 1;
}

/* Operations until the next timed one, after the one at place *at of its
 * block: the rest of that block and the place drawn in the next, 1 ..
 * 2P - 1 (mean P); *at becomes the new place. */
static inline uint32_t hbg__opsample_gap(uint64_t *s, uint32_t period, uint32_t *at)
{
    if (period <= 1)
        return 1;
    uint32_t next = hbg__opsample_draw(s, period) - 1;
    uint32_t gap = period - *at + next;
    *at = next;
    return gap;
}

/* The kind's total from the sum of its `timed` of `count` operations;
 * 0 when none was timed. */
static inline uint64_t hbg__opsample_total(uint64_t sum, uint64_t timed, uint64_t count)
{
    if (!timed || timed >= count)
        return timed ? sum : 0;
    return (uint64_t)((double)sum * (double)count / (double)timed + 0.5);
}

#endif
