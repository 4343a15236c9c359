/* libFuzzer target: the device's reading of a bound image (device/exec.h):
 * validation, then everything a run does with an image it accepted that
 * needs no kernel to compute anything.
 *
 * The input is device memory. Its bytes are copied to DEVICE_BASE, a fixed
 * address, and the arena is its first byte; the Definition images,
 * predicate words and heap blocks an image names by absolute address are
 * read where the input holds them, so the seeds (fuzz/corpus/image/, real
 * images the runtime packed) were written with those addresses relocated
 * into the input. The memory callback admits exactly the input's bytes and
 * the rest of the mapping is poisoned: a read that validation let through
 * and that leaves the input is an ASan report, as a wild read on a device
 * core would be.
 *
 * A refusal must be a device status with a message. An accepted image is
 * walked as the serial executor walks it (Kahn over the tasks, a replay's
 * nodes in index order), with the memory callback wherever the sim backend
 * passes one: predicates read, every kernel call resolved and invoked
 * (the first and last block: the others run the same code) on kernels
 * that only read their arguments, completion flags written. Along the way
 * it checks what the executors take on trust: a Definition's nodes form a
 * DAG, the replays and nodes reached fit the counts the sim sizes its run
 * state by, and the steps the run takes (a task or node each, a kernel's
 * one a block) stay within the count the sim bounds a run by. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_FIXED_NOREPLACE */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sanitizer/asan_interface.h>

#include "device/exec.h"
#include "fuzz_kernels.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Above ASan's shadow and below its allocator and the mmap area; the
 * seeds' addresses depend on it. */
#define DEVICE_BASE 0x500000000000ull
#define DEVICE_CAP  ((size_t)1 << 20)

static unsigned char *device;
static uint64_t device_bytes; /* the current input's */
static hbg_kernel_table *kernels;
static volatile uint64_t sink;

static bool in_device(void *ctx, uint64_t addr, uint64_t n)
{
    (void)ctx;
    uint64_t base = (uint64_t)(uintptr_t)device;
    return addr >= base && addr - base <= device_bytes && n <= device_bytes - (addr - base);
}

static int k_read(const hbg_kernel_args *a)
{
    sink += fuzz_read_args(a);
    return 0;
}

static void set_up(void)
{
    void *p = mmap((void *)(uintptr_t)DEVICE_BASE, DEVICE_CAP, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (p != (void *)(uintptr_t)DEVICE_BASE) {
        fprintf(stderr, "fuzz_image: cannot map device memory at 0x%llx\n", DEVICE_BASE);
        abort();
    }
    device = p;
    kernels = fuzz_kernels(k_read);
}

/* A refusal says what was wrong, with a device status. */
static void check_refusal(hbg_status st)
{
    if (st != HBG_E_DEVICE && st != HBG_E_KERNEL && st != HBG_E_NOMEM)
        __builtin_trap();
    if (!hbg__exec_last_error()[0])
        __builtin_trap();
}

/* The first and the last block of a call, on the cores its core type
 * takes; a MIX block runs its AIC part, then its AIV part. */
static hbg_status invoke(const hbg__exec_call *c, uint32_t task, uint32_t node)
{
    if (c->blocks == 0 || c->blocks > HBG_EXEC_MAX_BLOCKS || c->core > HBG_CORE_MIX)
        __builtin_trap(); /* validated */
    uint32_t blocks[2] = {0, c->blocks - 1};
    for (int i = 0; i < (c->blocks > 1 ? 2 : 1); i++) {
        hbg_status st;
        if (c->core == HBG_CORE_MIX) {
            st = hbg__exec_invoke(kernels, c, blocks[i], HBG_CORE_AIC, task, node);
            if (!st)
                st = hbg__exec_invoke(kernels, c, blocks[i], HBG_CORE_AIV, task, node);
        } else {
            st = hbg__exec_invoke(kernels, c, blocks[i], c->core, task, node);
        }
        if (st)
            return st;
    }
    return HBG_OK;
}

/* Kahn over a Definition's nodes: validation promises every fanin names
 * an earlier node, so all of them become ready. */
static void check_def_dag(const hbg__exec_dag *g)
{
    uint32_t *pending = malloc((g->n ? g->n : 1) * sizeof *pending), *queue = malloc((g->n ? g->n : 1) * sizeof *queue);
    if (!pending || !queue)
        abort();
    memcpy(pending, g->npred, g->n * sizeof *pending);
    uint32_t head = 0, tail = 0;
    for (uint32_t n = 0; n < g->n; n++)
        if (pending[n] == 0)
            queue[tail++] = n;
    while (head < tail) {
        uint32_t n = queue[head++];
        for (uint32_t e = g->off[n]; e < g->off[n + 1]; e++)
            if (--pending[g->out[e]] == 0)
                queue[tail++] = g->out[e];
    }
    if (tail != g->n)
        __builtin_trap();
    free(pending);
    free(queue);
}

typedef struct walk {
    const hbg__exec_image *im;
    hbg__exec_call call;
    uint32_t replays;
    uint64_t nodes;
    uint64_t steps;
} walk;

/* A task or node that ran: one step, a kernel's one a block. */
static void step(walk *w, uint8_t kind, uint32_t blocks)
{
    w->steps += kind == HBG_TASK_KERNEL ? blocks : 1;
    if (w->steps > w->im->steps)
        __builtin_trap(); /* past the sim's bound on the run */
}

static hbg_status run_replay(walk *w, uint32_t task)
{
    const hbg__exec_image *im = w->im;
    uint32_t rp = im->tasks[task].replay;
    const hbg__exec_def *d = &im->defs[im->replays[rp].def];
    w->replays++;
    w->nodes += d->h->nnodes;
    if (w->replays > im->nreplay_tasks || w->nodes > im->replay_nodes)
        __builtin_trap(); /* the sim's run state would overflow */
    for (uint32_t n = 0; n < d->h->nnodes; n++) {
        const hbg_def_node *nd = &d->nodes[n];
        if (nd->has_pred) {
            bool go;
            hbg_status st = hbg__exec_node_pred(im, in_device, NULL, rp, n, &go);
            if (st)
                return st;
            if (!go)
                continue;
        }
        step(w, nd->kind, nd->blocks);
        if (nd->kind != HBG_TASK_KERNEL)
            continue;
        hbg_status st = hbg__exec_node_call(im, rp, n, 0, 1, NULL, &w->call);
        if (!st && (w->call.args.ntensors > HBG_MAX_TASK_TENSORS || w->call.args.nscalars > HBG_MAX_TASK_SCALARS))
            __builtin_trap(); /* validated: tbuf and sbuf hold that many */
        if (!st)
            st = invoke(&w->call, task, n);
        if (st)
            return st;
    }
    return HBG_OK;
}

static hbg_status run_task(walk *w, uint32_t t)
{
    const hbg_img_task *k = &w->im->tasks[t];
    if (k->has_pred && !hbg__exec_task_pred(w->im, t))
        return HBG_OK;
    step(w, k->kind, k->blocks);
    switch (k->kind) {
    case HBG_TASK_KERNEL:
        hbg__exec_task_call(w->im, t, 0, 1, NULL, &w->call);
        return invoke(&w->call, t, HBG_EXEC_NO_NODE);
    case HBG_TASK_REPLAY:
        return run_replay(w, t);
    default:
        return HBG_OK;
    }
}

/* The run: the task DAG, each Definition's DAG, then the tasks in a
 * dependency order. A failure ends it, as it ends a run. */
static void run(const hbg__exec_image *im)
{
    hbg__exec_dag g;
    if (hbg__exec_dag_tasks(im, &g))
        return;
    for (uint32_t d = 0; d < im->ndefs; d++) {
        hbg__exec_dag dg;
        if (hbg__exec_dag_def(&im->defs[d], &dg))
            continue;
        check_def_dag(&dg);
        hbg__exec_dag_free(&dg);
    }
    walk *w = malloc(sizeof *w);
    uint32_t *queue = malloc((im->ntasks ? im->ntasks : 1) * sizeof *queue);
    if (!w || !queue)
        abort();
    memset(w, 0, sizeof *w);
    w->im = im;
    uint32_t head = 0, tail = 0;
    for (uint32_t t = 0; t < im->ntasks; t++)
        if (g.npred[t] == 0)
            queue[tail++] = t;
    while (head < tail) {
        uint32_t t = queue[head++];
        uint64_t seq = hbg__exec_error_seq();
        hbg_status st = run_task(w, t);
        if (st) {
            if (hbg__exec_error_seq() == seq)
                __builtin_trap(); /* a failed run says why */
            break;
        }
        im->flags[t] = 1;
        for (uint32_t e = g.off[t]; e < g.off[t + 1]; e++)
            if (--g.npred[g.out[e]] == 0)
                queue[tail++] = g.out[e];
    }
    free(queue);
    free(w);
    hbg__exec_dag_free(&g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!device)
        set_up();
    if (size > DEVICE_CAP)
        return 0;
    /* Only the input's bytes are device memory, to ASan as to the
     * memory callback. */
    ASAN_UNPOISON_MEMORY_REGION(device, DEVICE_CAP);
    memcpy(device, data, size);
    ASAN_POISON_MEMORY_REGION(device + size, DEVICE_CAP - size);
    device_bytes = size;

    hbg__exec_image im;
    hbg_status st = hbg__exec_open(&im, device, size, kernels, in_device, NULL);
    if (st) {
        check_refusal(st);
        return 0;
    }
    run(&im);
    hbg__exec_close(&im);
    return 0;
}
