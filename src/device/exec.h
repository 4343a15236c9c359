/* The executor core shared by every way of running a bound image.
 *
 * Both the serial reference executor and the sim backend's threaded one go
 * through here for everything that decides *what* runs: validating the
 * arena, turning a task or a replayed Definition node into a kernel call,
 * and evaluating dispatch predicates. They differ only in *when* and *where*
 * calls run, so a disagreement between them is a scheduling bug, never a
 * resolution one.
 *
 * Validation happens once per run, before anything executes, so the
 * executors can index every section without further checks. Two things
 * depend on the replay and are checked when a node resolves instead: a
 * boundary view whose offset falls before its buffer or past 2^64
 * elements, and a node predicate word outside its buffer or outside device
 * memory.
 */
#ifndef HBG_DEVICE_EXEC_H
#define HBG_DEVICE_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hbg/image.h"
#include "hbg/device.h"
#include "hbg/kernel.h"
#include "hbg/orch.h"

/* Blocks per kernel task or node. A device has far fewer cores than this.
 * It bounds one count, not a run: blocks times nodes times replays can
 * still be 2^43 from a few MB of image, which is why a backend bounds
 * hbg__exec_image.steps as well. */
#define HBG_EXEC_MAX_BLOCKS HBG_MAX_BLOCKS

/* True when [addr, addr+n) is device memory the executor itself may read
 * (predicate words, Definition images, replay heap blocks). NULL trusts every
 * address: the serial executor runs images that live in host memory. */
typedef bool (*hbg__exec_mem_fn)(void *ctx, uint64_t addr, uint64_t n);

typedef struct hbg__exec_def {
    const hbg_def_header *h;
    const hbg_def_node *nodes;
    const uint32_t *fanins;
    const hbg_def_targ *targs;
    const hbg_def_sarg *sargs;
    const hbg_def_pred *preds;
    const hbg_tensor *btemplates;
    uint64_t steps; /* what one replay of it costs: see hbg__exec_image.steps */
} hbg__exec_def;

/* A validated arena: typed views of every section. */
typedef struct hbg__exec_image {
    const hbg_img_header *h;
    const hbg_img_task *tasks;
    uint32_t ntasks;
    const uint32_t *fanins;
    const hbg_tensor *tensors;
    const uint64_t *scalars;
    const hbg_img_pred *preds;
    uint32_t *flags;
    const hbg_img_replay *replays;
    const hbg_img_btensor *btensors;
    const uint64_t *bscalars;
    uint32_t ndefs;
    hbg__exec_def *defs;    /* one per deftab entry */
    uint32_t nreplay_tasks;
    uint64_t replay_nodes; /* nodes over all REPLAY tasks: sizes run scratch */
    /* The work a run of the image is: one step for each task and each
     * replayed node, a kernel task or node one for each of its blocks.
     * 3 MB of image asks for 2^43 (44,000 replays of 4096 nodes of
     * 65536 blocks each): a backend bounds it before it runs. */
    uint64_t steps;
} hbg__exec_image;

/* Validates `arena` and fills `im`. HBG_E_DEVICE for a malformed image,
 * HBG_E_KERNEL when a kernel task names an unregistered kernel; the reason
 * is in hbg__exec_last_error(). Release with hbg__exec_close. */
hbg_status hbg__exec_open(hbg__exec_image *im, void *arena, uint64_t bytes,
                         const hbg_kernel_table *kt, hbg__exec_mem_fn mem, void *mem_ctx);
void hbg__exec_close(hbg__exec_image *im);

/* Successor lists (CSR) and initial pending counts of a task list or of a
 * Definition's nodes; a duplicated fanin counts twice on both sides, so the
 * counts still reach zero exactly once. */
typedef struct hbg__exec_dag {
    uint32_t n;
    uint32_t *off; /* n+1 */
    uint32_t *out;
    uint32_t *npred; /* n */
} hbg__exec_dag;

hbg_status hbg__exec_dag_tasks(const hbg__exec_image *im, hbg__exec_dag *g);
hbg_status hbg__exec_dag_def(const hbg__exec_def *d, hbg__exec_dag *g);
void hbg__exec_dag_free(hbg__exec_dag *g);

/* One kernel task or node, resolved. `args.tensors` may point into `tbuf`,
 * so a call is not movable once filled. */
typedef struct hbg__exec_call {
    uint8_t core; /* hbg_core */
    uint16_t kernel_aic, kernel_aiv;
    uint32_t blocks;
    hbg_kernel_args args;
    hbg_tensor tbuf[HBG_MAX_TASK_TENSORS];
    uint64_t sbuf[HBG_MAX_TASK_SCALARS];
} hbg__exec_call;

/* Top-level task: tensors and scalars are read in place from the arena. */
void hbg__exec_task_call(const hbg__exec_image *im, uint32_t task, uint32_t rank, uint32_t nranks,
                        void *services, hbg__exec_call *c);
/* Node `node` of the Definition replayed by replays[replay]. */
hbg_status hbg__exec_node_call(const hbg__exec_image *im, uint32_t replay, uint32_t node, uint32_t rank,
                              uint32_t nranks, void *services, hbg__exec_call *c);

/* Dispatch predicates: whether the task/node runs. A top-level word was
 * checked by hbg__exec_open; a node's depends on the replay, so it is checked
 * here (HBG_E_DEVICE when it leaves its buffer or device memory). */
bool hbg__exec_task_pred(const hbg__exec_image *im, uint32_t task);
/* Whether a resolved predicate holds: the word at p->addr compared with
 * p->value (also the eager executor's test). */
bool hbg__exec_pred_holds(const hbg_img_pred *p);
hbg_status hbg__exec_node_pred(const hbg__exec_image *im, hbg__exec_mem_fn mem, void *mem_ctx,
                              uint32_t replay, uint32_t node, bool *run);

#define HBG_EXEC_NO_NODE UINT32_MAX

/* Runs block `block` of the `core` part (AIC or AIV) of a call. Maps the
 * kernel's return value to a status and records the reason on failure,
 * naming `task` (and `node` of its Definition unless HBG_EXEC_NO_NODE). */
hbg_status hbg__exec_invoke(const hbg_kernel_table *kt, const hbg__exec_call *c, uint32_t block,
                           uint8_t core, uint32_t task, uint32_t node);

/* The reason for the last failure of an executor call on this thread. */
const char *hbg__exec_last_error(void);
void hbg__exec_set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* How many messages this thread's device calls have set so far. */
uint64_t hbg__exec_error_seq(void);

/* The reference executor: runs every task on the calling thread in a
 * dependency-respecting order (Kahn over tasks; a Definition's nodes in
 * index order, which validation guarantees is topological). Blocks run in
 * order; a MIX block runs its AIC part then its AIV part. Writes flags[] in
 * the arena, so `arena` is writable. */
hbg_status hbg__image_run_serial(void *arena, uint64_t bytes, const hbg_kernel_table *kt, uint32_t rank,
                                uint32_t nranks, void *services, hbg_run_stats *st);

#endif
