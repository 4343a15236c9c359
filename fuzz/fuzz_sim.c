/* libFuzzer target: the sim device running a bound image (device/sim.c):
 * its scheduler, ready and done rings, dependency counts, replays, job
 * queues, cores and MIX pairs, the failure of a kernel and the step
 * bound, on every image validation accepts. fuzz_image covers the validation and what a
 * serial walk does; this is the run `hbg run` makes of an uploaded image.
 *
 * The input is device memory, laid out as fuzz_image's (whose seeds, at
 * the same address, serve here too): its bytes are the one allocation of
 * a sim device, mapped at DEVICE_BASE (hbg__sim_alloc_at) so that the
 * absolute addresses an image holds land in it, and the arena is its
 * first byte. The sim's memory check then admits exactly the input, and
 * the rest of its last page is poisoned: a read past it is an ASan report.
 *
 * Each input gets a device of its own, so that a reproducer reproduces
 * alone, with one scheduler and one core of each kind, the most
 * repeatable order the design allows (an AIC and an AIV core still run
 * at once). The image is copied in and run, as `hbg run` runs a pass,
 * and after a failed run copied and run again: the second run finds what
 * the failure left behind (cores, calls and jobs). Each run must end, in
 * HBG_OK or in a status with a message: what validation refuses, the
 * step bound (MAX_STEPS) and a fanin cycle, an unregistered or failing
 * kernel (a quarter of the inputs fail one call: fault_plan). Never a
 * crash, a hang (libFuzzer's -timeout) or a leak.
 *
 * Around the run it checks what can be known without the sim: the sim
 * refuses exactly what the validator refuses, with the same status and
 * message; it refuses by the step bound exactly the images past it; it
 * reports a deadlock only where the tasks hold a cycle, and never
 * succeeds where they do; a run that succeeded set every task's completion flag (zeroed before it) and
 * counted no more tasks and replays than the image holds; the device
 * keeps no more spare jobs than its cap. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sanitizer/asan_interface.h>

#include "device/exec.h"
#include "device/sim.h"
#include "fuzz_kernels.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* fuzz_image's: the seeds' addresses depend on it. */
#define DEVICE_BASE 0x500000000000ull
#define DEVICE_CAP  ((size_t)1 << 20)
#define PAGE        4096u
/* A step costs some 40 us here (a core thread woken for a block, the
 * scheduler for its report): a run that succeeds takes 10 ms at most, and
 * an input 2 ms on average. The seeds ask for up to 166 steps, so they
 * run, and a mutation of their block counts meets the bound. Too few for
 * a replay to wait for the window (65536 nodes) or for more jobs than the
 * spares kept (4096): the unit tests reach those. */
#define MAX_STEPS 256u
/* The kernels that fail (fuzz_kernels.h) are rarely named by mutations,
 * so each input also fails one kernel call of its own (fault_plan). */
#define NO_FAULT UINT32_MAX

static unsigned char *const device = (unsigned char *)(uintptr_t)DEVICE_BASE;
static uint64_t device_bytes;
static hbg_kernel_table *kernels;
static uint64_t sink;
/* The call of a run that fails (NO_FAULT: none), what it returns, and
 * the calls made so far: kernels run on the sim's core threads. */
static uint32_t fault_at;
static int fault_rc;
static uint32_t calls;

static bool in_device(void *ctx, uint64_t addr, uint64_t n)
{
    (void)ctx;
    /* sim_mem_contains: an empty range at the end is outside too */
    return addr >= DEVICE_BASE && addr - DEVICE_BASE < device_bytes && n <= device_bytes - (addr - DEVICE_BASE);
}

/* fuzz_image's kernels (fuzz_kernels.h), run on the sim's core threads:
 * the read kernel also fails the call fault_plan chose. */
static int k_read(const hbg_kernel_args *a)
{
    __atomic_fetch_add(&sink, fuzz_read_args(a), __ATOMIC_RELAXED);
    return __atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED) == fault_at ? fault_rc : 0;
}

static void set_up(void)
{
    kernels = fuzz_kernels(k_read);
}

/* A quarter of the inputs fail one of the first 32 kernel calls of each
 * run, with a status or with a bare 1: a failure with blocks still
 * queued, on a core whose partner waits for it, with other calls on
 * cores. Drawn from the input, so that a reproducer fails the same
 * call: the same n-th, counted in the order the cores run them. */
static void fault_plan(const uint8_t *data, size_t size)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < size; i++)
        h = (h ^ data[i]) * 16777619u;
    fault_at = h % 4 == 0 ? (h >> 2) % 32 : NO_FAULT;
    fault_rc = h & 0x100 ? -(int)HBG_E_PEER_TIMEOUT : 1;
}

/* What the validator makes of the input, with the sim's view of device
 * memory (exactly the input): its status and message, and for an image
 * it accepts the counts a run is checked against. Zeroes the completion
 * flags, so that a run's are its own. */
typedef struct expect {
    hbg_status st;
    char msg[256];
    uint32_t ntasks, nreplay_tasks;
    uint64_t replay_nodes, steps;
    bool cycle; /* some tasks wait for each other */
} expect;

/* Kahn over the tasks: whether some never become ready. */
static bool has_cycle(const hbg__exec_image *im)
{
    hbg__exec_dag g;
    if (hbg__exec_dag_tasks(im, &g))
        abort(); /* no memory for a graph of under 64 KiB of image */
    uint32_t *queue = malloc((g.n ? g.n : 1) * sizeof *queue);
    if (!queue)
        abort();
    uint32_t head = 0, tail = 0;
    for (uint32_t t = 0; t < g.n; t++)
        if (g.npred[t] == 0)
            queue[tail++] = t;
    while (head < tail) {
        uint32_t t = queue[head++];
        for (uint32_t e = g.off[t]; e < g.off[t + 1]; e++)
            if (--g.npred[g.out[e]] == 0)
                queue[tail++] = g.out[e];
    }
    bool cycle = tail != g.n;
    free(queue);
    hbg__exec_dag_free(&g);
    return cycle;
}

static void validate(expect *e)
{
    hbg__exec_image im;
    memset(e, 0, sizeof *e);
    e->st = hbg__exec_open(&im, device, device_bytes, kernels, in_device, NULL);
    if (e->st) {
        snprintf(e->msg, sizeof e->msg, "%s", hbg__exec_last_error());
        return;
    }
    e->ntasks = im.ntasks;
    e->nreplay_tasks = im.nreplay_tasks;
    e->replay_nodes = im.replay_nodes;
    e->steps = im.steps;
    e->cycle = has_cycle(&im);
    memset(im.flags, 0, im.ntasks * sizeof *im.flags);
    hbg__exec_close(&im);
}

/* A run that succeeded completed every task: their flags are set. */
static void check_flags(void)
{
    hbg__exec_image im;
    if (hbg__exec_open(&im, device, device_bytes, kernels, in_device, NULL))
        __builtin_trap(); /* a run changes nothing validation reads */
    for (uint32_t t = 0; t < im.ntasks; t++)
        if (im.flags[t] != 1)
            __builtin_trap();
    hbg__exec_close(&im);
}

static void check_run(hbg_device *d, const expect *e, hbg_status st, const hbg_run_stats *rs)
{
    const char *msg = hbg_device_last_error();
    if (e->st) {
        /* the sim reads the image as the validator does */
        if (st != e->st || strcmp(msg, e->msg) != 0)
            __builtin_trap();
    } else if (e->steps > MAX_STEPS) {
        if (st != HBG_E_DEVICE || strncmp(msg, "sim: the image asks for ", 24) != 0)
            __builtin_trap();
    } else if (st == HBG_OK) {
        if (e->cycle)
            __builtin_trap(); /* tasks that never became ready completed */
        check_flags();
        if (rs->tasks_run + rs->tasks_skipped > e->ntasks + e->replay_nodes || rs->replays > e->nreplay_tasks)
            __builtin_trap();
    } else {
        /* a cycle, a node's predicate or view past its buffer, a kernel
         * that failed or is not registered: said why */
        if (st != HBG_E_DEVICE && st != HBG_E_KERNEL && st != HBG_E_PEER_TIMEOUT && st != HBG_E_NOMEM)
            __builtin_trap();
        if (!msg[0])
            __builtin_trap();
        /* a deadlock is a cycle, never a lost wake-up */
        if (!e->cycle && strncmp(msg, "device: deadlock: ", 18) == 0)
            __builtin_trap();
    }
    if (hbg__sim_spare_jobs(d) > HBG__SIM_SPARE_JOBS)
        __builtin_trap();
}

/* A pass: the image copied in, then run. After a failed one, a second
 * pass on the same device, as `hbg run` makes its next: the failure must
 * leave no core taken, no call or job astray, nothing half set up. */
static void run_passes(hbg_device *d, const uint8_t *data, size_t size)
{
    for (int pass = 0; pass < 2; pass++) {
        if (hbg_device_h2d(d, DEVICE_BASE, data, size))
            __builtin_trap();
        expect e;
        validate(&e);
        hbg_run_stats rs;
        calls = 0;
        hbg_status st = d->ops->run(d, DEVICE_BASE, size, kernels, &rs);
        check_run(d, &e, st, &rs);
        if (st == HBG_OK)
            break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!kernels)
        set_up();
    if (size == 0 || size > DEVICE_CAP)
        return 0;
    hbg_sim_config cfg = {
        .aic_cores = 1, .aiv_cores = 1, .schedulers = 1, .mem_limit = DEVICE_CAP, .max_steps = MAX_STEPS};
    hbg_device *d;
    if (hbg_sim_open(&cfg, &d))
        abort();
    if (hbg__sim_alloc_at(d, DEVICE_BASE, size)) {
        fprintf(stderr, "fuzz_sim: cannot map device memory at 0x%llx: %s\n", DEVICE_BASE, hbg_device_last_error());
        abort();
    }
    /* Only the input is device memory, to ASan as to the sim. */
    size_t mapped = (size + PAGE - 1) / PAGE * PAGE;
    ASAN_POISON_MEMORY_REGION(device + size, mapped - size);
    device_bytes = size;
    fault_plan(data, size);
    run_passes(d, data, size);
    ASAN_UNPOISON_MEMORY_REGION(device + size, mapped - size);
    hbg_device_free(d, DEVICE_BASE);
    hbg_device_close(d);
    return 0;
}
