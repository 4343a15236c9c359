/* StarPU's side of bench_peers (peers_starpu.c). */
#ifndef BENCH_PEERS_STARPU_H
#define BENCH_PEERS_STARPU_H

#include "peers.h"

/* starpu_init with quiet defaults for any STARPU_* variable not set
 * (STARPU_SILENT=1, STARPU_NCPU=1, no CUDA / OpenCL, STARPU_SCHED=eager),
 * workers paused. */
hbg_status peers_starpu_init(char *msg, size_t cap);
void peers_starpu_shutdown(void);

/* A stream's handles (one per atom), registered once. */
typedef struct peers_sp peers_sp;
peers_sp *peers_starpu_prepare(const peers_stream *s);
void peers_starpu_release(peers_sp *p);

/* A fault, to show the edge check fails: the explicit deps are left out
 * of every task StarPU is given. */
void peers_starpu_drop_deps(peers_sp *p);

/* Builds and submits every peer task while the workers are paused (*ns:
 * that part), then lets the pass run to completion. With `edges`, counts
 * StarPU's own successor lists before the pass runs. */
hbg_status peers_starpu_pass(peers_sp *p, uint64_t *ns, uint64_t *edges);

#endif
