/* What the breakdown switch costs: the warm control plane of one case with
 * the per-operation timing on and off, measured in one process on one
 * runtime.
 *
 * The runtime's passes alternate the switch (on, off, off, on, ...,
 * hbg_runtime_set_breakdown between passes): the same code, the same
 * memory and the same minutes for both arms. Two runtimes, one with the
 * switch on and one off, were the first design, and an A/A run of it
 * (both off) put qwen's kept figure 8 % apart in either direction from one
 * process to the next: the two runtimes' memory lies differently, more
 * than the cost being measured. Separate processes (HBG_BIND_BREAKDOWN=1
 * and =0 runs of `hbg run`) differ the same way. No log is written, so
 * "on" is the timing of the sampled operations and the counts of all
 * (docs/log-format.md, "Bind-phase lines") without the lines formatted
 * after the pass.
 *
 * Each arm's figures are its minimum control plane (host_orch +
 * graph_upload + arena_h2d) over its warm passes, with the range, and its
 * median; the first two passes are dropped (the cold one, and the one
 * whose sample periods come from it), so the first measured pass takes
 * its periods from a warm pass. The device run is skipped. The cost
 * is given three ways: on the minima, on the medians, and paired: each
 * block of four passes (two of each arm, back to back) gives the ratio of
 * the arms' sums, and the median of those ratios is the figure least
 * moved by the machine's minute-to-minute swing. On a 7 us pass (qwen with
 * its Definitions kept) the minima still move by a few per cent from one
 * run to the next; report the median of several runs.
 *
 * Usage: bench_breakdown CASE [passes] [--keep-definitions]
 *   CASE: qwen or dsv4 (dsv4 binds rank 0 of its two ranks). passes:
 *   per arm, 200 unless given.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "case.h"
#include "hbg/device.h"
#include "hbg/runtime.h"
#include "tools/phstats.h"

typedef struct arm {
    uint64_t *v; /* each warm pass's control plane, in pass order */
    size_t n;
} arm;

static void die(const char *what, hbg_status st)
{
    fprintf(stderr, "bench_breakdown: %s: %s\n", what, hbg_strerror(st));
    exit(1);
}

static void pass(hbg_runtime *rt, arm *a, bool on, const hbg_program *p)
{
    hbg_pass_report rep;
    hbg_status st = hbg_runtime_set_breakdown(rt, on);
    if (!st)
        st = hbg_runtime_run(rt, p, true, &rep);
    if (st)
        die("a pass failed", st);
    if (a)
        a->v[a->n++] = rep.control_plane_ns;
}

/* A median of phs_stat_of's, as a double. */
static double med(phs_med m)
{
    return (double)m.whole + (m.half ? 0.5 : 0.0);
}

int main(int argc, char **argv)
{
    const char *name = argc > 1 ? argv[1] : NULL;
    long passes = 200;
    bool keep = false, bad = false;
    int counts = 0;
    for (int i = 2; i < argc; i++) {
        char *end;
        if (!strcmp(argv[i], "--keep-definitions")) {
            keep = true;
            continue;
        }
        bad = bad || counts++; /* one count: a second one was taken over the first */
        errno = 0;
        passes = strtol(argv[i], &end, 10);
        bad = bad || errno || end == argv[i] || *end || passes < 2 || passes > 1000000;
    }
    const hbg_case *c = name ? hbg_case_find(name) : NULL;
    if (!c || bad) {
        fprintf(stderr, "usage: bench_breakdown CASE [passes, 2 .. 1000000] [--keep-definitions]\n");
        return 2;
    }
    hbg_case_env env;
    hbg_case_env_init(c, &env);
    env.rank = 0, env.nranks = c->default_ranks;
    hbg_case_pools pools;
    char msg[256];
    hbg_status st = hbg_case_pools_for(c, &env, &pools, msg, sizeof msg);
    if (st) {
        fprintf(stderr, "bench_breakdown: %s\n", msg);
        return 1;
    }
    hbg_device *dev;
    hbg_kernel_table *kt;
    hbg_program prog;
    void *state;
    hbg_sim_config sc = {.rank = 0, .nranks = env.nranks};
    if ((st = hbg_sim_open(&sc, &dev)) || (st = hbg_kernel_table_create(&kt)) ||
        (st = c->setup(&env, kt, &prog, &state)))
        die("set-up", st);
    arm arms[2]; /* [0] on, [1] off */
    for (int k = 0; k < 2; k++)
        if (!(arms[k].v = malloc((size_t)passes * sizeof *arms[k].v)))
            die("set-up", HBG_E_NOMEM);
        else
            arms[k].n = 0;
    size_t nblocks = (size_t)passes / 2;
    uint64_t *ratio = malloc((nblocks ? nblocks : 1) * sizeof *ratio);
    if (!ratio)
        die("set-up", HBG_E_NOMEM);
    hbg_runtime_config rc = {.device = dev, .kernels = kt, .heap_bytes = pools.heap_bytes,
                             .task_window = pools.task_window, .keep_definitions = keep,
                             .breakdown = true, .records_fd = -1, .rank = 0, .nranks = env.nranks};
    hbg_runtime *rt;
    if ((st = hbg_runtime_create(&rc, &rt)))
        die("runtime", st);
    pass(rt, NULL, true, &prog);
    pass(rt, NULL, true, &prog);
    for (long i = 0; i < 2 * passes; i++) {
        /* on, off, off, on: neither arm always follows the other */
        int k = (int)((i & 1) ^ ((i >> 1) & 1));
        pass(rt, &arms[k], k == 0, &prog);
    }
    /* Each block of four passes (two of each arm, back to back) gives one
     * paired ratio, in parts per million: the minute's noise is common to
     * both arms of a block. */
    for (size_t b = 0; b < nblocks; b++) {
        double on = (double)(arms[0].v[2 * b] + arms[0].v[2 * b + 1]);
        double off = (double)(arms[1].v[2 * b] + arms[1].v[2 * b + 1]);
        ratio[b] = (uint64_t)(1e6 * on / off + 0.5);
    }
    phs_stat on, off, pr = {.med = {1000000, false}};
    phs_stat_of(arms[0].v, arms[0].n, &on);
    phs_stat_of(arms[1].v, arms[1].n, &off);
    if (nblocks)
        phs_stat_of(ratio, nblocks, &pr);
    printf("%s%s  on %llu ns [%llu .. %llu] median %.0f  off %llu ns [%llu .. %llu] median %.0f  "
           "cost: min %+.1f %%  median %+.1f %%  paired %+.1f %%\n",
           c->name, keep ? " (kept)" : "", (unsigned long long)on.min, (unsigned long long)on.min,
           (unsigned long long)on.max, med(on.med), (unsigned long long)off.min, (unsigned long long)off.min,
           (unsigned long long)off.max, med(off.med), 100.0 * ((double)on.min / (double)off.min - 1.0),
           100.0 * (med(on.med) / med(off.med) - 1.0), 100.0 * (med(pr.med) / 1e6 - 1.0));
    free(ratio);
    for (int k = 0; k < 2; k++)
        free(arms[k].v);
    hbg_runtime_destroy(rt);
    c->teardown(state);
    hbg_kernel_table_destroy(kt);
    hbg_device_close(dev);
    return 0;
}
