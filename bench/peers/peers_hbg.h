/* hbg's side of bench_peers (peers_hbg.c). */
#ifndef BENCH_PEERS_HBG_H
#define BENCH_PEERS_HBG_H

#include "peers.h"

/* An orchestrator with Graphs, as a runtime makes one; without `journal`,
 * every dependency query walks the tensor map (hbg run --no-journal). */
hbg_status peers_hbg_open(const peers_case *pc, uint32_t window, uint64_t heap_base, bool journal, hbg_orch **o);
void peers_hbg_close(hbg_orch *o);

/* One host_orch of the case's own orchestration (re-recording its
 * Definitions, the default); *ns: the orchestration and the pass's end. */
hbg_status peers_hbg_case_pass(hbg_orch *o, const peers_case *pc, uint64_t *ns);

/* One pass of the flat stream through hbg_submit_task / _dummy /
 * hbg_alloc_tensors and MANUAL scopes where the case had them. */
hbg_status peers_hbg_flat_pass(hbg_orch *o, const peers_stream *s, uint64_t *ns);
/* Its edges: every task's fanins. */
uint64_t peers_hbg_flat_edges(const hbg_orch *o);
/* Whether the flat pass put every buffer where the stream has it. */
hbg_status peers_hbg_check_flat(const hbg_orch *o, const peers_stream *s, char *msg, size_t cap);

/* What the case's pass built: the window's kernel and dummy tasks and
 * their fanins, and per replay its Definition's kernel and dummy nodes
 * and their fanins. */
typedef struct peers_hbg_counts {
    uint64_t outer_tasks, outer_edges, replays, node_tasks, node_edges;
} peers_hbg_counts;
void peers_hbg_case_counts(const hbg_orch *o, peers_hbg_counts *c);

#endif
