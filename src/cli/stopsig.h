/* The signals that stop a command, SIGINT, SIGTERM and SIGHUP, for the
 * commands that run children (hbg run's ranks, hbg ab's builds and runs):
 * each catches them to stop its children, report and end by the same
 * signal. One rule for both: a signal the command was started with
 * ignored (nohup, a script's background job) stays ignored, and one it
 * was started with blocked stays blocked (and pending, once sent), by it
 * and its children: neither is one of its stop signals.
 */
#ifndef HBG_CLI_STOPSIG_H
#define HBG_CLI_STOPSIG_H

#include <signal.h>

/* Catches the stop signals that are neither ignored nor blocked with
 * `handler` (no SA_RESTART: a blocking wait returns at once). */
void stopsig_catch(void (*handler)(int));
/* Puts back the default action of those stopsig_catch caught: in a child
 * after fork, or before the command ends by one. */
void stopsig_default(void);
/* Blocks the stop signals; *was receives the mask to put back. */
void stopsig_block(sigset_t *was);
/* Adds to *set the stop signals stopsig_catch caught: those a wait that
 * takes them itself (sigwaitinfo) may take, never one that is ignored
 * or that the command was started with blocked. */
void stopsig_caught(sigset_t *set);
/* Ends the process by `sig`, its default action put back (exit status
 * 128 + sig should it be blocked). Output is flushed first. */
void stopsig_raise(int sig);

/* SIGXFSZ ignored, for the whole command: a write past a file size limit
 * then fails with EFBIG, reported with the file's name, instead of
 * killing the process. Its action as the command was started with is
 * kept for stopsig_inherited. */
void stopsig_ignore_xfsz(void);
/* In a child after fork, before it execs another program: SIGXFSZ's
 * action put back as the command was started with, so that a build or a
 * run gets what the shell would have given it. Async-signal-safe. */
void stopsig_inherited(void);

#endif
