/* Phase names: the `phase=` values of bind and host-orch lines and the
 * "phase" of per-op records. They are the grammar's vocabulary, so they
 * never change spelling. */
#include "hbg/trace.h"

static const char *const names[HBG_PHASE_COUNT] = {
    [HBG_PH_ARGS] = "args",
    [HBG_PH_ARENA_BUILD] = "arena_build",
    [HBG_PH_STATIC_ARENA] = "static_arena",
    [HBG_PH_GM_HEAP] = "gm_heap",
    [HBG_PH_SHARED_MEM] = "shared_mem",
    [HBG_PH_RUNTIME_INIT] = "runtime_init",
    [HBG_PH_HOST_ORCH] = "host_orch",
    [HBG_PH_GRAPH_UPLOAD] = "graph_upload",
    [HBG_PH_ARENA_H2D] = "arena_h2d",
    [HBG_PH_HOST_VIEW_CLOSE] = "host_view_close",
    [HBG_OP_SUBMIT_TASK] = "submit_task",
    [HBG_OP_ALLOC_TENSORS] = "alloc_tensors",
    [HBG_OP_RECORD_NODE] = "record_node",
    [HBG_OP_GRAPH_SUBMIT] = "graph_submit",
    [HBG_OP_BUILD_DEFINITION] = "build_definition",
};

const char *hbg_phase_name(hbg_phase p)
{
    if (p == HBG_PH_NONE)
        return "none";
    if ((unsigned)p >= HBG_PHASE_COUNT || !names[p])
        return "unknown";
    return names[p];
}
