/* hbg — status codes.
 *
 * Every fallible hbg call returns an hbg_status. HBG_OK is zero so callers
 * can write `if (st) ...`. Codes are stable: tests and tools compare them.
 */
#ifndef HBG_STATUS_H
#define HBG_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum hbg_status {
    HBG_OK = 0,
    HBG_E_INVAL,              /* an argument is out of range or inconsistent */
    HBG_E_NOMEM,              /* set-up allocation failed (never on the hot path) */
    HBG_E_TOO_MANY_TENSORS,   /* > HBG_MAX_TASK_TENSORS tensor arguments */
    HBG_E_TOO_MANY_SCALARS,   /* > HBG_MAX_TASK_SCALARS scalars */
    HBG_E_TOO_MANY_FANINS,    /* > HBG_MAX_FANINS distinct predecessors */
    HBG_E_WINDOW_FULL,        /* the task window of this pass is exhausted */
    HBG_E_HEAP_EXHAUSTED,     /* the GM heap of this pass is exhausted */
    HBG_E_POOL_EXHAUSTED,     /* a pool sized up front (tensor map, image pool) is full */
    HBG_E_SCOPE,              /* AUTO scope inside MANUAL, unbalanced scope end, a body's scopes unbalanced */
    HBG_E_BAD_DEP,            /* an explicit dep names no earlier task/node */
    HBG_E_BOUNDARY_TOO_WIDE,  /* > HBG_MAX_BOUNDARY_TENSORS / _SCALARS */
    HBG_E_BOUNDARY_MISMATCH,  /* a replay's boundary signature differs from the Definition's */
    HBG_E_GRAPH_CAPTURE,      /* a Graph body used something it cannot record */
    HBG_E_DEF_POOL_FULL,      /* the Definition cache is full */
    HBG_E_DEVICE_ALLOC,       /* the device refused an allocation */
    HBG_E_DEVICE,             /* the device failed a copy or the image's run */
    HBG_E_KERNEL,             /* a task names a kernel that is not registered */
    HBG_E_PEER_TIMEOUT,       /* a cross-rank wait ran out of time */
    HBG_E_ORCH,               /* the orchestration function reported failure */
    HBG_E_STATE,              /* the call is not valid in the object's state */
    HBG_E_IO,                 /* a file or pipe operation failed (errno kept) */
    HBG_E_PARSE,              /* an input file does not follow its grammar */
    HBG_E_ARG_HAS_BUFFER,     /* an HBG_OUT_ALLOC (or alloc_tensors) tensor already names a buffer */
    HBG_E_ARG_NO_BUFFER,      /* a tensor argument other than HBG_OUT_ALLOC names no buffer (addr 0) */
    HBG_E_GRAPH_KEY_REUSED,   /* a Graph key recorded with one body is used with another */
    HBG_E_BAD_ENV,            /* an environment switch has a value it does not take */
    HBG_E_PEER_GONE,          /* a cross-rank wait's peer rank has ended (hbg_xrank_abandon) */
    HBG_STATUS_COUNT
} hbg_status;

/* A short, stable, human-readable text for a status ("task window full"). */
const char *hbg_strerror(hbg_status st);

/* The enumerator's name ("HBG_E_WINDOW_FULL"), for logs and JSON. */
const char *hbg_status_name(hbg_status st);

#ifdef __cplusplus
}
#endif
#endif
