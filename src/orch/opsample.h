/* Which operations the breakdown times.
 *
 * Timing an operation costs two clock reads, ~10 ns each on the AMD
 * virtual machines this runs on (opclock.h), and a warm pass makes
 * thousands of operations, most of them memo answers of 30-40 ns: timing
 * every one made the breakdown switch cost 5-9 % of the control plane it
 * measures. So the breakdown times a random sample of each kind's
 * operations and counts all of them:
 *
 *   - `count` and `detail_sum` are exact; `timed` says how many of the
 *     `count` operations were timed;
 *   - the kind's total is the timed operations' sum scaled by
 *     count / timed, an estimate of the whole; a pass that timed none of
 *     a kind it made (timed = 0 < count) estimates count times the kind's
 *     mean, below.
 *
 * Each kind keeps the mean of its recent timed operations across passes
 * (hbg__opmean: a window of about the last HBG_OPSAMPLE_WINDOW of them;
 * passes with the breakdown off add nothing). A kind's period P (one
 * operation in P timed, on average) is chosen when a pass begins, from
 * that mean: the P at which two clock reads (measured when timing is
 * first turned on) are HBG_OPSAMPLE_COST_PERMILLE per mille of the
 * operations' time, at most HBG_OPSAMPLE_MAX_PERIOD. A memo answer of
 * 30 ns gets the longest period, a Graph replay of 370 ns one near 30, a
 * Definition build of tens of microseconds is timed whole, as is every
 * kind that has no mean yet (the first pass, a kind's first operations)
 * and every operation in a pass with per-op records armed (each needs
 * its record).
 *
 * P is not capped at the kind's count in a pass. An earlier version
 * capped it there so that every pass timed at least one operation of
 * each kind, and on qwen with its Definitions kept (a 7 us pass of 5
 * submits, 2 allocations and 40 replays) those forced timings were most
 * of what the switch cost: each timed operation costs some 40 ns in
 * place (its reads, a draw, the branches the predictor misses), and ~5 a
 * pass made the switch cost 3-5 % (bench_breakdown). Uncapped, a kind of
 * fewer operations than P is timed in about count / P of the passes, and
 * the others take the mean.
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
 * rounding of the last, partial block.
 */
#ifndef HBG_ORCH_OPSAMPLE_H
#define HBG_ORCH_OPSAMPLE_H

#include <stdint.h>

/* What timing costs a kind, as a share of its time, in per mille (of the
 * clock reads alone; in place a timed operation costs about twice its
 * reads, bench_breakdown). */
#define HBG_OPSAMPLE_COST_PERMILLE 2u
/* The longest period: 256 keeps a 30 ns memo answer's share of the reads
 * under 0.3 %. */
#define HBG_OPSAMPLE_MAX_PERIOD 256u
/* How many timed operations a kind's mean weighs (hbg__opmean_add). */
#define HBG_OPSAMPLE_WINDOW 16u
/* The generator's seed (xorshift must not start at 0). */
#define HBG_OPSAMPLE_SEED 0x9e3779b97f4a7c15ull

/* The mean of a kind's recent timed operations: `n` of them took `ns`.
 * Kept across passes; n = 0: none timed yet. */
typedef struct hbg__opmean {
    uint64_t ns, n;
} hbg__opmean;

/* Adds a pass's `timed` operations that took `ns`, then scales the whole
 * down to HBG_OPSAMPLE_WINDOW operations when it holds more: an
 * exponentially fading window, so a mean follows a kind that got cheaper
 * (the cold pass, timed whole, is 1/2 of the mean after some 11 timed
 * operations more added one at a time, 1/10 after 38) without
 * remembering every pass. */
static inline void hbg__opmean_add(hbg__opmean *m, uint64_t ns, uint64_t timed)
{
    m->ns += ns;
    m->n += timed;
    if (m->n > HBG_OPSAMPLE_WINDOW) {
        /* in double: ns * W may pass 2^64 */
        m->ns = (uint64_t)((double)m->ns * HBG_OPSAMPLE_WINDOW / (double)m->n + 0.5);
        m->n = HBG_OPSAMPLE_WINDOW;
    }
}

/* The period of a kind whose recent timed operations (`n` of them) took
 * `ns` in all, on a clock whose two reads cost `pair_ns`. */
static inline uint32_t hbg__opsample_period(uint64_t n, uint64_t ns, uint64_t pair_ns)
{
    if (!n || !ns)
        return 1;
    /* P >= pair / (permille / 1000 * mean), mean = ns / n, rounded up;
     * past 2^64 the longest period */
    uint64_t den = (uint64_t)HBG_OPSAMPLE_COST_PERMILLE * ns;
    uint64_t p = pair_ns > UINT64_MAX / 1000 / n ? HBG_OPSAMPLE_MAX_PERIOD : (1000 * pair_ns * n + den - 1) / den;
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

/* The kind's total: the sum of its `timed` of `count` operations scaled
 * up, or with none timed, `count` times the mean (0 when there is none). */
static inline uint64_t hbg__opsample_total(uint64_t sum, uint64_t timed, uint64_t count, const hbg__opmean *m)
{
    if (!timed)
        return count && m->n ? (uint64_t)((double)m->ns * (double)count / (double)m->n + 0.5) : 0;
    if (timed >= count)
        return sum;
    return (uint64_t)((double)sum * (double)count / (double)timed + 0.5);
}

#endif
