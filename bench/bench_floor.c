/* bench_floor: the floor a control plane is judged against — a plain
 * memset of BYTES (building the image, at no cost per byte beyond
 * writing it) plus a memcpy of them (its one host-to-device copy).
 *
 * The buffers are as large as BYTES and touched before timing, so the
 * figure is the warm cost of the bytes alone: no page faults, no work per
 * task. bench/bench_cases.sh divides each case's kept control plane by
 * this floor for the bytes that case ships per bind. Printed: the minimum
 * over the runs in ns, then the range, like the other benchmarks.
 *
 *   bench_floor BYTES [RUNS]          (RUNS default 200)
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned char sink;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int usage(const char *why)
{
    fprintf(stderr, "bench_floor: %s\nusage: bench_floor BYTES [RUNS]\n", why);
    return 2;
}

static int parse(const char *s, unsigned long long max, unsigned long long *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-' || v == 0 || v > max)
        return -1;
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    unsigned long long bytes, runs = 200;
    if (argc < 2 || argc > 3)
        return usage("expected BYTES and at most RUNS");
    if (parse(argv[1], 1ull << 32, &bytes))
        return usage("BYTES is a whole number from 1 to 4294967296");
    if (argc == 3 && parse(argv[2], 1000000, &runs))
        return usage("RUNS is a whole number from 1 to 1000000");
    unsigned char *img = malloc(bytes), *dev = malloc(bytes);
    if (!img || !dev) {
        fprintf(stderr, "bench_floor: cannot allocate 2 x %llu bytes\n", bytes);
        return 1;
    }
    memset(img, 1, bytes);
    memset(dev, 1, bytes);
    uint64_t lo = UINT64_MAX, hi = 0;
    for (unsigned long long r = 0; r < runs; r++) {
        uint64_t t0 = now_ns();
        memset(img, (int)(r & 0xff), bytes);
        memcpy(dev, img, bytes);
        /* Reading a byte of the copy back keeps the stores from being
         * dropped as dead. */
        sink = dev[r % bytes];
        uint64_t d = now_ns() - t0;
        lo = d < lo ? d : lo;
        hi = d > hi ? d : hi;
    }
    printf("%llu bytes: memset + memcpy %llu ns [%llu .. %llu] over %llu runs\n", bytes, (unsigned long long)lo,
           (unsigned long long)lo, (unsigned long long)hi, runs);
    free(img);
    free(dev);
    return 0;
}
