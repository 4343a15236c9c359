/* hbg_strerror: one table, indexed by status, so adding a code without its
 * text is a compile-time error (the static assert below). */
#include "hbg/status.h"

static const struct {
    const char *name, *text;
} table[] = {
    [HBG_OK] = {"HBG_OK", "success"},
    [HBG_E_INVAL] = {"HBG_E_INVAL", "invalid argument"},
    [HBG_E_NOMEM] = {"HBG_E_NOMEM", "out of memory while setting up"},
    [HBG_E_TOO_MANY_TENSORS] = {"HBG_E_TOO_MANY_TENSORS", "too many tensor arguments for one task (limit 32)"},
    [HBG_E_TOO_MANY_SCALARS] = {"HBG_E_TOO_MANY_SCALARS", "too many scalars for one task (limit 16)"},
    [HBG_E_TOO_MANY_FANINS] = {"HBG_E_TOO_MANY_FANINS", "too many predecessors for one task (limit 128)"},
    [HBG_E_WINDOW_FULL] = {"HBG_E_WINDOW_FULL", "task window full"},
    [HBG_E_HEAP_EXHAUSTED] = {"HBG_E_HEAP_EXHAUSTED", "GM heap exhausted"},
    [HBG_E_POOL_EXHAUSTED] = {"HBG_E_POOL_EXHAUSTED", "a fixed-size pool is exhausted"},
    [HBG_E_SCOPE] = {"HBG_E_SCOPE", "invalid scope nesting (AUTO inside MANUAL, or unbalanced end)"},
    [HBG_E_BAD_DEP] = {"HBG_E_BAD_DEP", "explicit dependency names no earlier task"},
    [HBG_E_BOUNDARY_TOO_WIDE] = {"HBG_E_BOUNDARY_TOO_WIDE", "graph boundary too wide (limits 128 tensors, 64 scalars)"},
    [HBG_E_BOUNDARY_MISMATCH] = {"HBG_E_BOUNDARY_MISMATCH", "graph boundary does not match the recorded Definition"},
    [HBG_E_GRAPH_CAPTURE] = {"HBG_E_GRAPH_CAPTURE", "graph body used a tensor or task it cannot record"},
    [HBG_E_DEF_POOL_FULL] = {"HBG_E_DEF_POOL_FULL", "Definition cache full"},
    [HBG_E_DEVICE_ALLOC] = {"HBG_E_DEVICE_ALLOC", "device allocation refused"},
    [HBG_E_DEVICE] = {"HBG_E_DEVICE", "the device failed a copy or a run"},
    [HBG_E_KERNEL] = {"HBG_E_KERNEL", "kernel missing or failed"},
    [HBG_E_PEER_TIMEOUT] = {"HBG_E_PEER_TIMEOUT", "timed out waiting for the peer rank"},
    [HBG_E_ORCH] = {"HBG_E_ORCH", "orchestration function failed"},
    [HBG_E_STATE] = {"HBG_E_STATE", "call not valid in the current state"},
    [HBG_E_IO] = {"HBG_E_IO", "I/O error"},
    [HBG_E_PARSE] = {"HBG_E_PARSE", "input does not follow its format"},
    [HBG_E_ARG_HAS_BUFFER] = {"HBG_E_ARG_HAS_BUFFER", "a tensor the runtime is to allocate already names a buffer "
                                                      "(write into it with HBG_OUT)"},
    [HBG_E_ARG_NO_BUFFER] = {"HBG_E_ARG_NO_BUFFER", "a tensor argument names no buffer (addr 0; allocate it with "
                                                    "HBG_OUT_ALLOC or hbg_alloc_tensors)"},
    [HBG_E_GRAPH_KEY_REUSED] = {"HBG_E_GRAPH_KEY_REUSED", "graph key already names another body"},
    [HBG_E_BAD_ENV] = {"HBG_E_BAD_ENV", "an environment switch has a value it does not take"},
    [HBG_E_PEER_GONE] = {"HBG_E_PEER_GONE", "a peer rank has ended: its arrivals will not come"},
};

_Static_assert(sizeof table / sizeof table[0] == HBG_STATUS_COUNT, "every hbg_status needs a text");

const char *hbg_strerror(hbg_status st)
{
    if ((unsigned)st >= HBG_STATUS_COUNT)
        return "unknown status";
    return table[st].text;
}

const char *hbg_status_name(hbg_status st)
{
    if ((unsigned)st >= HBG_STATUS_COUNT)
        return "HBG_E_UNKNOWN";
    return table[st].name;
}
