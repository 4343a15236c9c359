/* hbg run's progress on stderr, while the ranks bind: the passes the
 * parent has heard of so far out of ranks x rounds. On a terminal one line
 * rewritten in place (from the first second on), cleared at the end; on
 * anything else a line now and then (HBG_PROGRESS_S seconds apart, 30 by
 * default, the first after 10 or the interval if shorter; 0: none), so a CI log shows a long run is
 * moving without a line per pass. Nothing when the log itself goes to
 * stderr: its lines are the progress there. */
#ifndef HBG_CLI_RUN_PROGRESS_H
#define HBG_CLI_RUN_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

typedef struct run_progress {
    bool on, tty, shown;
    uint32_t total;
    uint64_t t0, next, every;
} run_progress;

/* false (with a message) when HBG_PROGRESS_S is not a number of seconds */
bool run_progress_start(run_progress *p, bool log_on_stderr, uint32_t total);
/* done: passes reported so far; called from the parent's wait loop */
void run_progress_tick(run_progress *p, uint32_t done);
/* clears the terminal's line, if one was shown */
void run_progress_end(run_progress *p);
/* What clears the line before another message goes to stderr: "\r\033[K"
 * (to its start, then erase to its end) while a terminal's line is
 * showing, else "" (nothing else is ever on the line then). */
const char *run_progress_clearing(const run_progress *p);
/* Writes that to stderr, so the message that follows starts a line of
 * its own rather than the progress line's end; the next tick draws the
 * line again below it. Call before each message while the ranks run. */
void run_progress_clear(run_progress *p);

#endif
