/* A case set up for orchestration alone: its program built by the case's
 * own setup, its caller tensors bound at stand-in device addresses (no
 * task runs, so nothing reads them), its pools from the case. */
#include <stdio.h>
#include <string.h>

#include "peers.h"

#define ARGS_BASE 0x100000000000ull

hbg_status peers_case_open(const char *name, peers_case *pc, char *msg, size_t cap)
{
    memset(pc, 0, sizeof *pc);
    pc->name = name;
    pc->c = hbg_case_find(name);
    if (!pc->c) {
        snprintf(msg, cap, "no case named %s", name);
        return HBG_E_INVAL;
    }
    hbg_case_env_init(pc->c, &pc->env);
    pc->env.rank = 0;
    pc->env.nranks = pc->c->default_ranks;
    /* The smallest tile unit: the host work is the same at every one. */
    pc->env.tile_unit = pc->c->tile_max ? pc->c->tile_min : 0;
    hbg_case_pools pools;
    hbg_status st = hbg_case_pools_for(pc->c, &pc->env, &pools, msg, cap);
    if (!st)
        st = hbg_kernel_table_create(&pc->kt);
    if (!st)
        st = pc->c->setup(&pc->env, pc->kt, &pc->prog, &pc->state);
    if (st) {
        if (!msg[0])
            snprintf(msg, cap, "%s: setup failed: %s", name, hbg_strerror(st));
        peers_case_close(pc);
        return st;
    }
    pc->heap_bytes = pools.heap_bytes;
    pc->window = pools.task_window ? pools.task_window : HBG_DEFAULT_TASK_WINDOW;
    if (pc->prog.nargs > sizeof pc->args / sizeof pc->args[0]) {
        snprintf(msg, cap, "%s: %u caller tensors, more than the bench's 256", name, pc->prog.nargs);
        peers_case_close(pc);
        return HBG_E_INVAL;
    }
    uint64_t at = ARGS_BASE;
    for (uint32_t i = 0; i < pc->prog.nargs; i++) {
        hbg_tensor t = pc->prog.args[i].layout;
        uint64_t lo, hi;
        if (!hbg_tensor_byte_range(&t, &lo, &hi))
            hi = t.nbytes;
        t.nbytes = t.nbytes > hi ? t.nbytes : hi;
        t.addr = at;
        t.creator = 0;
        pc->args[i] = t;
        at += (t.nbytes + 4095) & ~4095ull;
    }
    return HBG_OK;
}

void peers_case_close(peers_case *pc)
{
    if (pc->state && pc->c)
        pc->c->teardown(pc->state);
    hbg_kernel_table_destroy(pc->kt);
    memset(pc, 0, sizeof *pc);
}
