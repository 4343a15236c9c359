/* The capturing stand-in for the orchestrator.
 *
 * bench/CMakeLists.txt compiles the cases' orchestration files a second time
 * with each orchestrator call renamed to the peers_cap_ function of the same
 * signature below (and the files' own functions renamed, so both copies
 * link). That copy, given an orchestrator from peers_cap_begin(), records
 * what the case submits instead of building a task image; the cases' own
 * library stays untouched and is what the hbg side of the bench runs.
 */
#ifndef BENCH_PEERS_CAPTURE_H
#define BENCH_PEERS_CAPTURE_H

#include "hbg/graph.h"
#include "peers.h"

hbg_status peers_cap_submit_task(hbg_orch *o, const hbg_task *t, hbg_task_id *id);
hbg_status peers_cap_submit_task_bound(hbg_orch *o, const hbg_task *t, const hbg_bound *bd, hbg_task_id *id);
hbg_status peers_cap_submit_dummy(hbg_orch *o, uint32_t ndeps, const hbg_task_id *deps, hbg_task_id *id);
hbg_status peers_cap_alloc_tensors(hbg_orch *o, uint32_t n, hbg_tensor *const *ts, hbg_task_id *id);
hbg_status peers_cap_scope_begin(hbg_orch *o, hbg_scope_mode mode);
hbg_status peers_cap_scope_end(hbg_orch *o);
hbg_status peers_cap_orch_error(const hbg_orch *o);
uint32_t peers_cap_orch_nargs(const hbg_orch *o);
hbg_tensor *peers_cap_orch_arg(const hbg_orch *o, uint32_t i);
uint32_t peers_cap_orch_rank(const hbg_orch *o);
uint32_t peers_cap_orch_nranks(const hbg_orch *o);
hbg_status peers_cap_submit_graph(hbg_orch *o, uint64_t key, hbg_graph_body body, void *ctx,
                                  const hbg_boundary *b, uint32_t flags, hbg_task_id *id);
hbg_status peers_cap_submit_graph_bound(hbg_orch *o, uint64_t key, hbg_graph_body body, void *ctx,
                                        const hbg_bound *bd, const hbg_boundary *rest, uint32_t flags,
                                        hbg_task_id *id);

/* The renamed copies of the cases' orchestration functions. */
hbg_status peers_cap_qwen_orchestrate(hbg_orch *o, void *ctx);
hbg_status peers_cap_dsv4_orchestrate(hbg_orch *o, void *ctx);
#endif
