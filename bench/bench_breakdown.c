/* What the breakdown switch costs: the warm control plane of one case with
 * the per-operation timing on and off, measured in one process.
 *
 * Two runtimes run the same program, one created with `breakdown` on and
 * one with it off, and their passes alternate (on, off, off, on, ...): the
 * same code layout, the same caches and the same minutes for both arms,
 * which separate processes (HBG_BIND_BREAKDOWN=1 and =0 runs of `hbg run`)
 * cannot give; between processes the same binary measured up to 5 % apart
 * on the development VM, more than the cost being measured. Neither
 * runtime writes a log, so "on" is the timing of every operation (two
 * clock reads and the totals) without the lines formatted after the pass.
 *
 * Each arm's figure is the minimum control plane (host_orch + graph_upload
 * + arena_h2d) over its warm passes, reported with the range; the first
 * pass of each runtime is cold and dropped. The device run is skipped.
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

typedef struct arm {
    hbg_runtime *rt;
    uint64_t min, max;
} arm;

static void die(const char *what, hbg_status st)
{
    fprintf(stderr, "bench_breakdown: %s: %s\n", what, hbg_strerror(st));
    exit(1);
}

static void pass(arm *a, const hbg_program *p, int warm)
{
    hbg_pass_report rep;
    hbg_status st = hbg_runtime_run(a->rt, p, true, &rep);
    if (st)
        die("a pass failed", st);
    if (!warm)
        return;
    uint64_t v = rep.control_plane_ns;
    if (!a->min || v < a->min)
        a->min = v;
    if (v > a->max)
        a->max = v;
}

int main(int argc, char **argv)
{
    const char *name = argc > 1 ? argv[1] : NULL;
    long passes = 200;
    bool keep = false, bad = false;
    for (int i = 2; i < argc; i++) {
        char *end;
        if (!strcmp(argv[i], "--keep-definitions")) {
            keep = true;
            continue;
        }
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
    arm arms[2];
    memset(arms, 0, sizeof arms);
    for (int k = 0; k < 2; k++) {
        hbg_runtime_config rc = {.device = dev, .kernels = kt, .heap_bytes = pools.heap_bytes,
                                 .task_window = pools.task_window, .keep_definitions = keep,
                                 .breakdown = k == 0, .records_fd = -1, .rank = 0, .nranks = env.nranks};
        if ((st = hbg_runtime_create(&rc, &arms[k].rt)))
            die("runtime", st);
        pass(&arms[k], &prog, 0);
    }
    for (long i = 0; i < passes; i++) {
        /* on, off, off, on: neither arm always follows the other */
        int first = (int)((i & 1) ^ ((i >> 1) & 1));
        pass(&arms[first], &prog, 1);
        pass(&arms[!first], &prog, 1);
    }
    double on = (double)arms[0].min, off = (double)arms[1].min;
    printf("%s%s  on %.0f ns [%llu .. %llu]  off %.0f ns [%llu .. %llu]  cost %+.1f %%\n", c->name,
           keep ? " (kept)" : "", on, (unsigned long long)arms[0].min, (unsigned long long)arms[0].max, off,
           (unsigned long long)arms[1].min, (unsigned long long)arms[1].max, 100.0 * (on / off - 1.0));
    for (int k = 0; k < 2; k++)
        hbg_runtime_destroy(arms[k].rt);
    c->teardown(state);
    hbg_kernel_table_destroy(kt);
    hbg_device_close(dev);
    return 0;
}
