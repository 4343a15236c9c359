/* Output files of the commands (a trace, a plot): written beside the target
 * and renamed over it only once complete, so a failed or interrupted run
 * never leaves half a file under the name asked for, and an older file of
 * that name survives the failure. "-" is stdout, which likewise gets the
 * output only once it is complete (hbg_outfile_open); a name that is not a
 * regular file (/dev/null, a FIFO) is written in place, since a rename would
 * replace it with a regular file; so is a name of one of the command's own
 * descriptors (/dev/stdout, /dev/fd/N, /proc/self/fd/N, or a link to one),
 * through that descriptor, whatever it is open on, and, as stdout, only once
 * complete unless it is a terminal or /dev/null. A stop signal (SIGINT, SIGTERM, SIGHUP,
 * SIGPIPE) whose action is the default removes the temporary before it
 * ends the command. */
#ifndef HBG_CLI_OUTFILE_H
#define HBG_CLI_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>

typedef struct hbg_outfile {
    FILE *f;                /* write here */
    const char *path;       /* the name asked for */
    char *tmp;              /* the temporary beside it, or NULL */
    char *dest;             /* a symbolic link's target, renamed onto; NULL: path */
    bool spool;             /* "-": f is an unlinked temporary, copied to stdout once complete */
    const char *spool_dir;  /* the folder of that temporary (kept after close, for messages); NULL: none */
    const char *cmd;        /* "hbg timeline": prefixes the messages */
    int spool_fd;           /* the descriptor the spool is copied onto: stdout, or the one path names */
} hbg_outfile;

/* What a spool holds the output for, as messages name it: "standard
 * output" for "-", else the name asked for (/dev/stdout, /dev/fd/N). */
const char *hbg_outfile_held(const hbg_outfile *o);

/* Notes that standard descriptor fd (0..2) was closed when the command
 * started (main then holds it on /dev/null, so no file takes its place): an
 * output named for it (/dev/stdout) is refused, "CMD: cannot write
 * /dev/stdout: standard output is closed", instead of being written into
 * /dev/null. */
void hbg_outfile_std_closed(int fd);

/* The descriptor that path names (/dev/stdout, /dev/fd/N, /proc/self/fd/N,
 * a link to one), which hbg_outfile_open writes through; -1 for any other
 * name, "-" included. */
int hbg_outfile_fd_named(const char *path);
/* Whether an output named path would go where standard output goes: "-",
 * a name of fd 1, or a name of another descriptor open on the same file,
 * pipe or terminal as fd 1. A plot beside results on stdout refuses it. */
bool hbg_outfile_is_stdout(const char *path);

/* A path argument as a message shows it: '-' is standard input, any
 * other as dg_shown masks it. */
const char *hbg_arg_shown(const char *path);

/* Opens path for writing. On failure prints "CMD: cannot create ...: why"
 * on stderr and returns -1. "-" is standard output: unless that is a
 * character device (a terminal, /dev/null), the output is kept in an
 * unlinked temporary file in $TMPDIR (else /tmp) and copied to it only
 * when hbg_outfile_close is told it is complete, so a failed command
 * writes nothing there (a pipe's reader would take half an output, or an
 * empty one, for the result). */
int hbg_outfile_open(hbg_outfile *o, const char *cmd, const char *path);

/* Says whether path could be opened by hbg_outfile_open, without leaving
 * anything behind: a command checks its output before long work, so it
 * fails before printing results under a failing exit status. A regular
 * file's folder is probed by creating and removing the temporary; a
 * directory is refused (EISDIR); another name that is not a regular file
 * (a FIFO: opening it would wait for a reader) is probed by access(2);
 * "-", where it is held in a temporary (not a terminal or /dev/null), by
 * making that temporary and closing it. Returns 0, or -1 after "CMD:
 * cannot create PATH: why" (or "cannot write"). */
int hbg_outfile_probe(const char *cmd, const char *path);
/* Finishes the file: with ok, flushes, closes and renames it into place;
 * without, removes the temporary. Returns 0, or -1 after printing why the
 * file could not be completed ("CMD: cannot write PATH: ..."); a write
 * error is never lost. */
int hbg_outfile_close(hbg_outfile *o, bool ok);

/* Refuses an output that is one of the inputs (the same device and inode,
 * whatever the names: a link, another path, stdout redirected onto it).
 * "-" stands for stdout as the output and stdin as an input. Returns 0, or
 * -1 after "CMD: refusing to write OUT: it is the input IN" on stderr. */
int hbg_outfile_not_input(const char *cmd, const char *out, const char *const *in, size_t n);

/* The first two of paths[0..n) that are one file (same device and inode:
 * a link, another spelling, "-" with it on stdin), in *a < *b; false when
 * they are all distinct. A path that cannot be examined counts as
 * distinct (reading it will say why); so does everything when there is no
 * memory to compare them. */
bool hbg_same_file_pair(const char *const *paths, size_t n, size_t *a, size_t *b);

/* Flushes stdout. When anything written to it was lost, says so once per
 * process ("CMD: cannot write standard output: why") and returns -1 (then
 * and on every later call, without repeating the message); else 0. */
int hbg_stdout_flush(const char *cmd);

/* hbg_stdout_flush after a JSON output whose direct write to the
 * descriptor failed with errno `werr` (0: it did not): that failure is
 * said here, once, with its reason, and the stream's error flag, which has
 * no reason to give, cleared, or the final check would say it again as
 * "Input/output error". Returns -1 when anything was lost, else 0. */
int hbg_stdout_done(const char *cmd, int werr);

#endif
