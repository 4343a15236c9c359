/* Whether a child process is about to end by a signal of its own, read
 * from Linux's /proc: for `hbg run`'s grace after a stop signal.
 *
 * Ctrl-C reaches the command and its ranks at once. A rank that has the
 * signal pending, but has not been scheduled to take it (a loaded
 * machine), or that is already exiting by it (unmapping its memory, which
 * on a large rank takes a while), ends by it on its own: killed instead,
 * it would be named as a rank the command found still running. The
 * parsers are apart from the reads so that they can be tested on any
 * text.
 */
#ifndef HBG_CLI_PROCSIG_H
#define HBG_CLI_PROCSIG_H

#include <stdbool.h>
#include <sys/types.h>

/* Whether signal sig (1 to 64) is pending in the text of a
 * /proc/PID/status: for its thread (SigPnd) or for the whole process
 * (ShdPnd, where a signal sent to a process or a process group waits).
 * Blocked or not: a rank that blocks it for a moment still ends by it. */
bool procsig_status_pending(const char *status, int sig);

/* Whether the text of a /proc/PID/stat says the process is exiting: the
 * kernel's PF_EXITING in its flags (the ninth field, after the command
 * name in parentheses, which may itself hold spaces and parentheses). */
bool procsig_stat_exiting(const char *stat);

/* Whether process pid has signal sig pending or is exiting (the two
 * above, on its own /proc files); false when they cannot be read (it has
 * been reaped, or there is no /proc): it is then waited for no more. */
bool procsig_ending(pid_t pid, int sig);

#endif
