/* hbg — Graphs: record a sub-graph once, replay it with new boundary tensors.
 *
 * The first hbg_submit_graph() under a key runs `body` in recording mode: its
 * submits become the nodes of a Definition instead of tasks. Every call,
 * the first included, then writes one boundary image and one outer task that
 * replays the Definition on the device. Inside the body a tensor may be a
 * boundary tensor (exactly), a view of one, the output of an earlier node, or
 * a node's own OUTPUT; a scalar is static or a boundary slot (hbg_task's
 * scalar_slots). Anything else is HBG_E_GRAPH_CAPTURE.
 */
#ifndef HBG_GRAPH_H
#define HBG_GRAPH_H

#include <stdint.h>
#include "hbg/orch.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HBG_MAX_BOUNDARY_TENSORS 128
#define HBG_MAX_BOUNDARY_SCALARS 64
#define HBG_MAX_DEF_NODES 4096

typedef struct hbg_boundary {
    uint32_t ntensors;
    const hbg_arg *args; /* dir: HBG_IN, HBG_INOUT or HBG_OUT */
    uint32_t nscalars;
    const uint64_t *scalars;
    uint32_t ndeps;          /* explicit deps of the outer task (MANUAL scopes) */
    const hbg_task_id *deps;
} hbg_boundary;

/* The body sees the boundary of the call that runs it. The call reads
 * the boundary once, when it is made (its tensors, directions, scalars and
 * dependencies): what it checks, records, signs and replays is the
 * boundary as passed, whatever the body does to the caller's boundary or
 * tensors (it may change them; they stay as it leaves them). */
typedef hbg_status (*hbg_graph_body)(hbg_orch *o, void *ctx, const hbg_boundary *b);

/* A key names one body: a call under a key already recorded with another
 * body function is HBG_E_GRAPH_KEY_REUSED, never a replay of the first. */
enum {
    /* On a boundary mismatch, run the body as ordinary tasks instead of
     * failing with HBG_E_BOUNDARY_MISMATCH. The pass report counts such
     * calls (hbg_pass_report.fallbacks) and, after the pass, the runtime
     * logs one WARN record naming the count and the first mismatch. Such a
     * call has no outer task: *id is HBG_TASK_NONE, and a MANUAL scope
     * that must order later work after it names the body's tasks (or a
     * dummy over them) instead. The body's tasks take the call's deps in
     * the outer task's place (each that follows no earlier one of them). */
    HBG_GRAPH_FALLBACK = 1u << 0,
    /* Under a key already recorded, record the body again and compare what
     * it submits with the Definition: a body whose content differs (other
     * kernels, scalars, tensors or edges; e.g. one function behind one key
     * whose ctx changed) is HBG_E_GRAPH_KEY_REUSED. Costs one recording
     * per call: a check for tests and debugging, not for measured runs. */
    HBG_GRAPH_CHECK_BODY = 1u << 1
};
/* Any other bit in `flags` is HBG_E_INVAL ("flags 0x84: bits 0x80 are no
 * flag ..."), never ignored. */

hbg_status hbg_submit_graph(hbg_orch *o, uint64_t key, hbg_graph_body body, void *ctx,
                            const hbg_boundary *b, uint32_t flags, hbg_task_id *id);

/* hbg_submit_graph with the boundary's tensors from `bd` (bound.h; each
 * slot's dir must be a boundary's: HBG_IN, HBG_INOUT or HBG_OUT, checked
 * by the call). `rest` gives
 * the scalars and explicit dependencies (NULL: none); its ntensors must
 * be 0. The body sees a boundary of bd's arguments and rest's scalars and
 * dependencies. */
hbg_status hbg_submit_graph_bound(hbg_orch *o, uint64_t key, hbg_graph_body body, void *ctx,
                                  const hbg_bound *bd, const hbg_boundary *rest, uint32_t flags,
                                  hbg_task_id *id);

/* A read-only look at a Definition, for tests and tools. */
typedef struct hbg_def_info {
    uint64_t key;
    uint64_t hash;        /* content hash of the image (hash field zeroed) */
    uint32_t nodes;
    uint32_t by_kind[5];  /* indexed by hbg_node_kind */
    uint32_t boundary_tensors;
    uint32_t boundary_in, boundary_inout, boundary_out;
    uint32_t boundary_scalars;
    uint32_t predicated;  /* nodes carrying a dispatch predicate */
    uint64_t image_bytes;
    uint64_t heap_bytes;  /* GM bytes one replay carves for node outputs */
} hbg_def_info;

typedef enum hbg_node_kind {
    HBG_NODE_AIC = 0, HBG_NODE_AIV, HBG_NODE_MIX, HBG_NODE_DUMMY, HBG_NODE_ALLOC
} hbg_node_kind;

/* Definitions in the orchestrator's cache after the latest pass. */
uint32_t hbg_orch_def_count(const hbg_orch *o);
hbg_status hbg_orch_def_info(const hbg_orch *o, uint32_t i, hbg_def_info *out);

#ifdef __cplusplus
}
#endif
#endif
