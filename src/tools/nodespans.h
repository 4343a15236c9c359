/* The scheduler's node-family spans (node.*, network1..3.*) of a log, as
 * the original tool reads them: which node.submit hands each node.dispatch
 * its task (the same pid, run_id and task slot, the latest submit that
 * started no later than the dispatch), and what role each host thread
 * plays (its spans' role= attributes; the facade submits, the scheduler
 * dispatches, workers run), so the timeline can draw the hand-off and
 * name the lane. */
#ifndef HBG_TOOLS_NODESPANS_H
#define HBG_TOOLS_NODESPANS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "hbg/status.h"
#include "tools/passes.h"

typedef struct ns_flow {
    size_t submit, dispatch;    /* L->span indices */
} ns_flow;

enum { NS_FACADE = 1, NS_SCHEDULER = 2, NS_WORKER = 4 };

typedef struct ns_role {
    uint64_t pid, tid;
    unsigned roles;             /* NS_* bits seen on the thread */
    uint64_t worker_id;
    int nworker_ids;            /* distinct worker_id= values (counted to 2) */
} ns_role;

typedef struct ns_result {
    ns_flow *flow;
    size_t nflow;
    ns_role *role;
    size_t nrole;
} ns_result;

hbg_status ns_analyse(const ps_log *L, ns_result *r);
void ns_free(ns_result *r);
/* The lane name a thread's roles give it ("scheduler (tid 7003)"), or
 * NULL when it has none. */
const char *ns_lane_name(const ns_role *r, char *buf, size_t n);
/* The role entry of (pid, tid), or NULL. */
const ns_role *ns_role_of(const ns_result *r, uint64_t pid, uint64_t tid);

#endif
