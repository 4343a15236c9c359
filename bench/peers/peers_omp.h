/* OpenMP's side of bench_peers (peers_omp.c). */
#ifndef BENCH_PEERS_OMP_H
#define BENCH_PEERS_OMP_H

#include "peers.h"

typedef struct peers_omp peers_omp;

/* The depend-clause addresses of a stream; `seq` (the reference edges of
 * the sequential rule) says which tasks are roots, and what check mode
 * verifies. */
peers_omp *peers_omp_prepare(const peers_stream *s, const peers_edges *seq);
void peers_omp_release(peers_omp *p);
/* The team size the gate needs. */
int peers_omp_threads(const peers_omp *p);

/* Creates every peer task behind the closed gate (*ns: that part), opens
 * it and waits for the pass. With `check`, each task verifies that every
 * reference predecessor finished before it started; *violations counts
 * those that had not. */
hbg_status peers_omp_pass(peers_omp *p, bool check, uint64_t *ns, uint64_t *violations, char *msg, size_t cap);

#endif
