/* The passes of `hbg run`'s ranks that its log holds but the parent was
 * never told of: for the count in the record of a stopped run.
 *
 * A rank writes its pass's lines to the log as the pass goes (its bind
 * lines and chip.run.bind span when the bind ends, the rest after the
 * device run), and reports the pass to the parent after them. A rank
 * killed between the two (a stop signal, the --time-limit, a peer's
 * bound) leaves one pass more in the log than it reported: the record
 * "after K of N passes" then said one short of what the log holds, and
 * the tools list. Looking in the log once the ranks have ended costs a
 * pass nothing.
 */
#ifndef HBG_CLI_RUN_LOGTAIL_H
#define HBG_CLI_RUN_LOGTAIL_H

#include <stdint.h>
#include <sys/types.h>

/* For each of n ranks, pid[r] (0: none to look for) and last[r], the inv
 * of the last pass it reported (0: none): how many of them have lines of
 * a later pass in the log written to logfd (its bind, orch or span lines
 * with that pid and an inv past last[r]). At most one pass a rank: a rank
 * reports each pass before it starts the next. The log is read from its
 * end, back to each such rank's last reported pass or its clock anchor,
 * whichever comes first: the tail a stop left, not the whole log; and
 * never before `from`, where the run's own lines begin (past its stamp).
 * What lies before is an earlier run's, in a log appended to (`2>>
 * run.log`), whose ranks may have had the same pids (a container's pids
 * repeat from one run to the next): a rank stopped in its set-up, before
 * it wrote a line, was charged their passes. 0 when the log cannot be
 * read back (not a regular file: a terminal, a pipe). */
uint32_t logtail_unreported(int logfd, off_t from, const uint64_t *pid, const uint64_t *last, uint32_t n);

#endif
