/* bench_peers: one task set, built by hbg, StarPU and OpenMP tasks.
 *
 * A case's orchestration is run once through a capturing stand-in for the
 * orchestrator (peers_capture.c) that runs Graph bodies inline, as an eager
 * run does, and keeps every submit: the flat stream of tasks, each with its
 * tensor arguments (a view and a direction), its explicit deps and whether
 * it was submitted in a MANUAL scope. That stream is what the peers build.
 *
 * The peers know data, not views: StarPU infers dependencies per registered
 * handle and OpenMP per address. So each buffer is cut into atoms, the
 * coarsest pieces no view splits (peers_atoms.c): a view is the set of atoms
 * it touches, and two views overlap exactly when they share an atom.
 */
#ifndef BENCH_PEERS_H
#define BENCH_PEERS_H

#include <stdbool.h>
#include <stdint.h>

#include "case.h"
#include "hbg/graph.h"
#include "hbg/runtime.h"

/* One tensor argument as submitted (the view after any allocation). A
 * task's dispatch predicate comes last, as PEERS_PRED: a read of the view
 * that holds the word. */
#define PEERS_PRED 0xff
typedef struct peers_arg {
    hbg_tensor t;
    uint8_t dir;          /* an hbg_dir, or PEERS_PRED */
} peers_arg;

enum { PEERS_KERNEL = 0, PEERS_DUMMY = 1, PEERS_ALLOC = 2 };

/* One submit of the flat stream. */
typedef struct peers_task {
    uint8_t kind;         /* PEERS_KERNEL, PEERS_DUMMY or PEERS_ALLOC */
    bool manual;          /* submitted inside a MANUAL scope */
    uint32_t arg_off, nargs;   /* into peers_stream.args */
    uint32_t dep_off, ndeps;   /* into peers_stream.deps (stream indices) */
    uint32_t sc_off, nscalars; /* into peers_stream.scalars (slots resolved) */
    uint8_t core, sync_start;
    uint16_t kernel_aic, kernel_aiv;
    uint32_t blocks;
} peers_task;

/* An access of a peer task: an atom and a mode. */
enum { PEERS_R = 1, PEERS_W = 2, PEERS_RW = 3 };
typedef struct peers_acc {
    uint32_t atom;
    uint8_t mode;
} peers_acc;

typedef struct peers_stream {
    const char *name;
    peers_task *tasks;
    uint32_t ntasks, cap_tasks;
    peers_arg *args;
    uint32_t nargs, cap_args;
    uint32_t *deps;
    uint32_t ndeps, cap_deps;
    uint64_t *scalars;
    uint32_t nscalars, cap_scalars;
    uint32_t replays;     /* Graph calls run inline */
    /* The peer tasks: the kernel and dummy tasks of the stream, in order
     * (allocations are complete before anything reads them: no peer task).
     * peer_of[i] is task i's peer index, or UINT32_MAX. */
    uint32_t npeer;
    uint32_t *peer_of, *task_of;
    /* Filled by peers_atoms(): each peer task's accesses (one per atom,
     * modes merged), and its explicit deps as peer indices. */
    uint32_t natoms;
    uint32_t *acc_off, *acc_cnt;   /* per peer task */
    peers_acc *acc;
    uint32_t nacc;
    uint32_t *pdep_off, *pdep_cnt; /* per peer task */
    uint32_t *pdeps;
} peers_stream;

/* Where the capture (and hbg's flat replay of it) allocates: the same base
 * and the same 64-byte bump as the orchestrator's GM heap, so a buffer has
 * one address in the stream and in hbg's flat pass. */
#define PEERS_HEAP_BASE 0x200000000000ull

/* The case's program, ready to orchestrate: its caller tensors bound at
 * stand-in device addresses (nothing reads them). */
typedef struct peers_case {
    const char *name;
    const hbg_case *c;
    hbg_case_env env;
    hbg_kernel_table *kt;
    hbg_program prog;
    void *state;
    hbg_tensor args[256];
    uint64_t heap_bytes;
    uint32_t window;
} peers_case;

hbg_status peers_case_open(const char *name, peers_case *pc, char *msg, size_t cap);
void peers_case_close(peers_case *pc);

/* Captures the flat stream of one orchestration of pc (peers_capture.c). */
hbg_status peers_capture(peers_case *pc, peers_stream *s, char *msg, size_t cap);
void peers_stream_free(peers_stream *s);

/* Grows *p (of *cap elements of `elem` bytes) to hold `need`, doubling. */
bool peers_grow(void **p, uint32_t *cap, uint32_t need, size_t elem);

/* Cuts the buffers into atoms and fills the peer tasks' accesses. */
hbg_status peers_atoms(peers_stream *s);
/* The most accesses and explicit deps any peer task has (at least 1). */
void peers_widest(const peers_stream *s, uint32_t *maxacc, uint32_t *maxdeps);

/* Edge sets by a reference tracker (peers_ref.c), over the flat stream:
 *  - PEERS_RULE_HBG: hbg's rule. A task depends on its explicit deps and,
 *    outside MANUAL scopes, on every live writer overlapping any of its
 *    arguments (hbg's own overlap test); a write registers its writer, and
 *    an in-place write retires the writers it covers. Readers are not
 *    tracked.
 *  - PEERS_RULE_SEQ: sequential consistency per atom, StarPU's and
 *    OpenMP's rule: a read depends on the atom's last writer; a write on
 *    the readers since that writer, or on the writer when there were none;
 *    plus the explicit deps. Over peer tasks (no allocations).
 * Edges are (pred, succ) pairs, each counted once; indices are stream
 * indices for HBG and peer indices for SEQ. */
enum { PEERS_RULE_HBG = 0, PEERS_RULE_SEQ = 1 };
typedef struct peers_edges {
    uint32_t n;            /* nodes */
    uint32_t *off, *cnt;   /* per node: its preds in pred[] */
    uint32_t *pred;
    uint64_t total;
    /* SEQ only: edges by the kind of the first hazard that made them
     * (an explicit dep counts as such only when no access made the edge) */
    uint8_t *kind;         /* SEQ: per edge, a PEERS_EDGE_* */
    uint64_t by_kind[4];
} peers_edges;
enum { PEERS_EDGE_RAW = 0, PEERS_EDGE_WAR, PEERS_EDGE_WAW, PEERS_EDGE_EXPLICIT };

hbg_status peers_ref_edges(const peers_stream *s, int rule, peers_edges *e);
void peers_edges_free(peers_edges *e);

/* The two edge sets on common nodes (peer tasks): how many pairs both
 * have, and how many only one has. hbg's edges are mapped to peer indices;
 * edges of hbg touching an allocation task are left out (none in the
 * cases: allocations are never written or depended on). */
typedef struct peers_cmp {
    uint64_t both, only_hbg, only_seq, only_seq_war;
} peers_cmp;
void peers_ref_compare(const peers_stream *s, const peers_edges *hbg, const peers_edges *seq, peers_cmp *out);

#endif
