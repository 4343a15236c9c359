/* A reference workload: how `hbg run` sets one up, and how it checks it.
 *
 * A case builds its program once per rank process (kernels registered,
 * caller tensors allocated and filled deterministically), is bound and run
 * N rounds by the driver, which compares its outputs after every round
 * with a golden that is computed without the runtime's scheduling (a plain
 * reference, or the same orchestration run eagerly).
 */
#ifndef HBG_CASES_CASE_H
#define HBG_CASES_CASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hbg/runtime.h"

/* A case's own numeric option: `hbg run CASE --NAME V`. */
typedef struct hbg_case_param {
    const char *name;        /* the option without its "--"; NULL ends a list */
    const char *help;        /* one line for `hbg run --list` */
    uint64_t def, min, max;
} hbg_case_param;

#define HBG_CASE_MAX_PARAMS 8

typedef struct hbg_case_env {
    uint32_t rank, nranks;
    uint32_t tile_unit;      /* 0: the case's default */
    void *services;          /* cross-rank services (kernels' hbg_kernel_args.services) */
    /* The case's parameters, in the order of hbg_case.params; filled with
     * their defaults by hbg_case_env_init. */
    uint64_t param[HBG_CASE_MAX_PARAMS];
} hbg_case_env;

/* What the runtime must be sized for to run a case. */
typedef struct hbg_case_pools {
    uint64_t heap_bytes;     /* GM heap per rank per pass */
    uint32_t task_window;    /* 0: the runtime's default */
    uint32_t journal_calls;  /* 0: the runtime's default (hbg_runtime_config) */
} hbg_case_pools;

/* A run's circumstances, for a case's memory check (hbg_case.fits). */
typedef struct hbg_case_host {
    bool device;             /* the device runs the passes */
    bool golden;             /* the golden runs after them */
    uint64_t avail;          /* bytes of memory the run may use */
    const char *avail_from;  /* where that figure comes from, for the message */
} hbg_case_host;

typedef struct hbg_case {
    const char *name;
    const char *summary;
    uint32_t default_ranks;
    uint32_t min_ranks, max_ranks;  /* the rank counts it runs on */
    uint32_t default_tile_unit;
    /* The tile units it accepts: multiples of tile_step in [tile_min,
     * tile_max]. tile_max 0: its shapes are fixed, it has no tile unit. */
    uint32_t tile_min, tile_max, tile_step;
    uint64_t heap_bytes;     /* GM heap per rank per pass */
    uint64_t window_bytes;   /* cross-rank window per rank (0: none) */
    /* Registers kernels into kt and fills *prog (program name, orchestration
     * function, caller tensors with host memory the case owns). */
    hbg_status (*setup)(const hbg_case_env *env, hbg_kernel_table *kt, hbg_program *prog, void **state);
    /* The golden, in three steps so that it is computed once and checked
     * after every pass that ran the device (the driver computes it after
     * the first such pass, every rank at that point: an eager golden may
     * wait on its peers), and a wrong result in any round is found, not
     * only in the last. `reference` computes it into *ref (the case's
     * own, given back to free_ref); HBG_OK, or a one-line reason in msg.
     * `compare` compares the program's outputs (already read back into
     * the caller tensors' host memory) with it: HBG_OK when they match,
     * else a one-line reason in msg. hbg_case_golden does all three. */
    hbg_status (*reference)(void *state, const hbg_case_env *env, const hbg_kernel_table *kt, void **ref, char *msg,
                            size_t cap);
    hbg_status (*compare)(void *state, const void *ref, char *msg, size_t cap);
    void (*free_ref)(void *ref);
    void (*teardown)(void *state);
    /* The case's own options (NULL, or a list ended by a NULL name). */
    const hbg_case_param *params;
    /* The pools env's parameters need (NULL: heap_bytes and the default
     * window). Parameters past a hard cap: HBG_E_INVAL, with a one-line
     * reason in msg. */
    hbg_status (*pools)(const hbg_case_env *env, hbg_case_pools *out, char *msg, size_t cap);
    /* HBG_OK when a run of env's parameters on env->nranks ranks fits in
     * the memory `host` says the run may use; else HBG_E_NOMEM with a
     * one-line reason giving both figures and what to lower. Checked
     * before anything is allocated, so a run the host cannot hold is
     * refused instead of filling memory until the kernel kills a rank.
     * NULL: the case's needs are small. */
    hbg_status (*fits)(const hbg_case_env *env, const hbg_case_host *host, char *msg, size_t cap);
    /* HBG_OK when a device run of a pass of env's parameters asks for at
     * most max_steps steps, counted as the simulated device counts them
     * (hbg_sim_config.max_steps: a task or replayed node each, a kernel's
     * one a block); else HBG_E_INVAL with a one-line reason giving both
     * figures and what to lower. Checked before any rank starts when the
     * device runs: the device itself refuses such a run only once every
     * rank has set up and bound its first pass. NULL: the count does not
     * follow from parameters (qwen, dsv4 and vector ask for under 20,000
     * steps whatever their tile unit and ranks). */
    hbg_status (*steps)(const hbg_case_env *env, uint64_t max_steps, char *msg, size_t cap);
    /* HBG_OK when the golden of env's parameters is within the case's own
     * cap on it; else HBG_E_INVAL with a one-line reason giving both
     * figures, what to lower and --skip-golden. Checked before any rank
     * starts when the device runs and the golden is not skipped:
     * `reference` refuses such parameters too, but only after the first
     * round's device run. NULL: the golden has no cap that follows from
     * parameters. */
    hbg_status (*golden_cap)(const hbg_case_env *env, char *msg, size_t cap);
} hbg_case;

/* The golden computed, compared with the outputs and freed: a check of
 * the outputs as they stand (HBG_OK, or a one-line reason in msg). */
hbg_status hbg_case_golden(const hbg_case *c, void *state, const hbg_case_env *env, const hbg_kernel_table *kt,
                           char *msg, size_t cap);

/* All cases, NULL-terminated, and lookup by name. */
const hbg_case *const *hbg_cases(void);
const hbg_case *hbg_case_find(const char *name);

/* env zeroed, then every parameter of c at its default. */
void hbg_case_env_init(const hbg_case *c, hbg_case_env *env);
/* The index of c's parameter `name`, or -1. */
int hbg_case_param_index(const hbg_case *c, const char *name);
/* The pools c needs for env (its hook, or heap_bytes and the default
 * window); on a cap, HBG_E_INVAL and a one-line reason in msg. */
hbg_status hbg_case_pools_for(const hbg_case *c, const hbg_case_env *env, hbg_case_pools *out, char *msg,
                              size_t cap);

/* Gives every slot of bd (n of them) what args name. A slot given what
 * it holds already keeps the bound's stamp (hbg_bound_set), so a case
 * may refill all its bounds when one buffer moved. A slot refused fails
 * o's pass in the bound's words, as `what`'s bound `i` (o NULL: only the
 * status, for a caller that goes on without the bound). */
static inline hbg_status case_bound_fill(hbg_orch *o, const char *what, uint32_t i, hbg_bound *bd, uint32_t n,
                                         const hbg_arg *args)
{
    for (uint32_t k = 0; k < n; k++) {
        hbg_status st = hbg_bound_set(bd, k, args[k].t, args[k].dir);
        if (st)
            return o ? hbg_orch_fail(o, st, "%s %u's bound: %s", what, i, hbg_bound_last_error()) : st;
    }
    return HBG_OK;
}

#endif
