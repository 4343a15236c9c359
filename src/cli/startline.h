/* The start line of `hbg run`'s ranks: each rank's first pass begins once
 * every rank has finished its set-up. A second line is the finish: no
 * rank checks its golden or tears down (unmapping gigabytes of reserved
 * address space, which slowed a peer's bind the same way) until every
 * rank has finished its passes.
 *
 * Ranks are processes started together, but their set-ups take different
 * times (a dsv4 rank writes ~10 MB of weights into fresh memory), so
 * without a start line one rank's first bind ran while its peer was still
 * setting up. On the development VM the page faults of that set-up slowed
 * the first bind of the other rank up to threefold (dsv4's worse-rank cold
 * pass: 1.6 ms at best, 5.5 ms at worst). A decode step on real ranks
 * starts in step, and measuring it so is what a user expects of the cold
 * figure.
 *
 * The line is a counter in memory shared by the ranks (mapped before the
 * fork), with a flag per rank so that a rank is counted once however many
 * times it is said to arrive. A rank that cannot go on (a failed set-up
 * or round) still arrives, so its peers do not wait for it; the parent
 * arrives for a rank that died or was never started. A rank that hangs
 * before arriving holds its peers for the peer timeout at most, after
 * which they go on anyway; at the finish line the parent then kills it
 * (cmd_run.c). */
#ifndef HBG_CLI_STARTLINE_H
#define HBG_CLI_STARTLINE_H

#include <stdbool.h>
#include <stdint.h>

typedef struct run_startline run_startline;

/* For n ranks; NULL when the shared page cannot be mapped (the ranks then
 * start as they are ready, as before). */
run_startline *startline_create(uint32_t n);
void startline_destroy(run_startline *s);

/* Marks rank `rank` arrived (again: no change). */
void startline_arrive(run_startline *s, uint32_t rank);
/* Arrives, then waits until every rank has arrived or timeout_ns have
 * passed; false on the timeout. A NULL line returns at once. */
bool startline_wait(run_startline *s, uint32_t rank, uint64_t timeout_ns);
/* Whether rank `rank` has arrived (true on a NULL line: nobody waits
 * there). */
bool startline_arrived(const run_startline *s, uint32_t rank);

#endif
