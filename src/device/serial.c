/* The reference executor: one thread, no device, the plainest valid order.
 *
 * Tests run an image here and on a backend and compare the outputs; any
 * difference is a scheduling bug in the backend. So this file stays simple
 * enough to be obviously right: Kahn's algorithm over the tasks with a FIFO,
 * and a Definition's nodes in index order when its replay task comes up.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "device/exec.h"

typedef struct serial_run {
    const hbg__exec_image *im;
    const hbg_kernel_table *kt;
    uint32_t rank, nranks;
    void *services;
    hbg_run_stats *st;
    hbg__exec_call call;
} serial_run;

static hbg_status run_blocks(serial_run *r, uint32_t task, uint32_t node)
{
    hbg__exec_call *c = &r->call;
    for (uint32_t b = 0; b < c->blocks; b++) {
        hbg_status s;
        if (c->core == HBG_CORE_MIX) {
            /* The AIC part of a block happens-before its AIV part. */
            s = hbg__exec_invoke(r->kt, c, b, HBG_CORE_AIC, task, node);
            if (!s)
                s = hbg__exec_invoke(r->kt, c, b, HBG_CORE_AIV, task, node);
        } else {
            s = hbg__exec_invoke(r->kt, c, b, c->core, task, node);
        }
        if (s)
            return s;
    }
    r->st->tasks_run++;
    return HBG_OK;
}

static hbg_status run_replay(serial_run *r, uint32_t task)
{
    uint32_t rp = r->im->tasks[task].replay;
    const hbg__exec_def *d = &r->im->defs[r->im->replays[rp].def];
    r->st->replays++;
    for (uint32_t n = 0; n < d->h->nnodes; n++) {
        const hbg_def_node *nd = &d->nodes[n];
        if (nd->has_pred) {
            bool go;
            hbg_status s = hbg__exec_node_pred(r->im, NULL, NULL, rp, n, &go);
            if (s)
                return s;
            if (!go) {
                r->st->tasks_skipped++;
                continue;
            }
        }
        if (nd->kind != HBG_TASK_KERNEL)
            continue;
        hbg_status s = hbg__exec_node_call(r->im, rp, n, r->rank, r->nranks, r->services, &r->call);
        if (!s)
            s = run_blocks(r, task, n);
        if (s)
            return s;
    }
    return HBG_OK;
}

static hbg_status run_task(serial_run *r, uint32_t t)
{
    const hbg_img_task *k = &r->im->tasks[t];
    if (k->has_pred && !hbg__exec_task_pred(r->im, t)) {
        r->st->tasks_skipped++;
        return HBG_OK;
    }
    switch (k->kind) {
    case HBG_TASK_KERNEL:
        hbg__exec_task_call(r->im, t, r->rank, r->nranks, r->services, &r->call);
        return run_blocks(r, t, HBG_EXEC_NO_NODE);
    case HBG_TASK_REPLAY:
        return run_replay(r, t);
    default: /* DUMMY, ALLOC: nothing to do once ready */
        return HBG_OK;
    }
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

hbg_status hbg__image_run_serial(void *arena, uint64_t bytes, const hbg_kernel_table *kt, uint32_t rank,
                                uint32_t nranks, void *services, hbg_run_stats *st)
{
    hbg_run_stats local;
    if (!st)
        st = &local;
    memset(st, 0, sizeof *st);
    uint64_t t0 = now_ns();

    hbg__exec_image im;
    hbg_status s = hbg__exec_open(&im, arena, bytes, kt, NULL, NULL);
    if (s)
        goto out;
    hbg__exec_dag g;
    s = hbg__exec_dag_tasks(&im, &g);
    if (s) {
        hbg__exec_close(&im);
        goto out;
    }
    serial_run *r = malloc(sizeof *r);
    uint32_t *queue = malloc((im.ntasks ? im.ntasks : 1) * sizeof *queue);
    if (!r || !queue) {
        hbg__exec_set_error("device: no memory for the serial run of %u tasks", im.ntasks);
        s = HBG_E_NOMEM;
    } else {
        *r = (serial_run){.im = &im, .kt = kt, .rank = rank, .nranks = nranks, .services = services, .st = st};
        uint32_t head = 0, tail = 0;
        for (uint32_t t = 0; t < im.ntasks; t++)
            if (g.npred[t] == 0)
                queue[tail++] = t;
        while (head < tail && !s) {
            uint32_t t = queue[head++];
            s = run_task(r, t);
            if (s)
                break;
            im.flags[t] = 1;
            for (uint32_t e = g.off[t]; e < g.off[t + 1]; e++)
                if (--g.npred[g.out[e]] == 0)
                    queue[tail++] = g.out[e];
        }
        if (!s && head < im.ntasks) {
            hbg__exec_set_error("device: deadlock: %u of %u tasks never became ready (a fanin cycle)",
                               im.ntasks - head, im.ntasks);
            s = HBG_E_DEVICE;
        }
    }
    free(queue);
    free(r);
    hbg__exec_dag_free(&g);
    hbg__exec_close(&im);
out:
    st->device_wall_ns = now_ns() - t0;
    return s;
}
