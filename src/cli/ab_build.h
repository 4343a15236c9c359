/* hbg ab's machinery: child processes, the revision worktrees under the
 * cache folder, and their builds. cmd_ab.c plans and runs the measurement;
 * this file knows git, cmake and /bin/sh.
 *
 * Every child is started by fork/exec with an argv array (git and cmake
 * never go through a shell; only the user's own --build/--run templates
 * do, through /bin/sh -c), and every child is waited for. */
#ifndef HBG_CLI_AB_BUILD_H
#define HBG_CLI_AB_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#define AB_PATH 4096
/* A path made from one of AB_PATH and a short suffix. */
#define AB_PATH_X (AB_PATH + 256)

/* A growable byte string, always NUL-terminated once anything was added. */
typedef struct ab_buf {
    char *p;
    size_t n, cap;
} ab_buf;

bool ab_buf_add(ab_buf *b, const void *s, size_t n);
bool ab_buf_str(ab_buf *b, const char *s);
bool ab_buf_fmt(ab_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s as one shell word: bare when it holds only safe characters, else
 * single-quoted ('\'' for a quote inside). */
bool ab_buf_shquote(ab_buf *b, const char *s);
void ab_buf_free(ab_buf *b);
/* The text so far ("" when nothing was added). */
const char *ab_buf_cstr(const ab_buf *b);

/* --- processes --------------------------------------------------------- */

/* Starts argv (argv[0] searched in PATH) in cwd (NULL: ours), standard
 * input /dev/null, stdout to out_fd and stderr to err_fd (-1: /dev/null).
 * Returns the pid, or -1 with errno set. */
pid_t ab_start(const char *const *argv, const char *cwd, int out_fd, int err_fd);
/* Catches SIGINT, SIGTERM and SIGHUP for the rest of hbg ab (those it
 * was not started with ignored or blocked: stopsig.h): the child
 * running then (in a process group of its own) gets SIGTERM (a second
 * signal: SIGKILL), and when no process of its group is left (SIGKILL to
 * what is, AB_GRACE_S seconds on) hbg ab says so and ends by that signal. */
void ab_catch_signals(void);
/* Ends hbg ab, saying why, when a stop signal has come (ab_wait does
 * after each child; the comparison, in-process, before it starts). A
 * signal is otherwise acted on at the next wait for a child, so work done
 * in hbg ab's own process that may be long (reading logs, hashing or
 * copying untracked files) calls it between its pieces: one piece late at
 * most. */
void ab_stop_if_signalled(void);
/* Waits for pid: its exit status, 128 + N when signal N ended it, -1 when
 * it cannot be waited for. With hang false, returns -2 while it runs.
 * After a stop signal it ends hbg ab instead, once pid's group is gone. */
int ab_wait(pid_t pid, bool hang);
/* ab_wait by polling, calling tick(ctx) (if not NULL) every few tens of
 * milliseconds. With watch (a command that may stop on the terminal: a
 * build, a --run template) it also looks once a second whether a process
 * of the command's group is stopped; if one is, the group is killed and
 * the answer is AB_STOPPED, where ab_wait would have waited for ever.
 * Unless the command itself (pid) was stopped by SIGSTOP or SIGTSTP: a
 * person paused it, and it is waited for, said once on stderr.
 * With limit_s > 0, a command still running limit_s seconds (wall clock,
 * pauses included) after the call has its group sent SIGTERM (and
 * SIGCONT), then SIGKILL AB_GRACE_S seconds later if it has not ended;
 * the answer is then AB_TIMED_OUT. */
#define AB_STOPPED (-3)
#define AB_TIMED_OUT (-4)
#define AB_GRACE_S   5
int ab_wait_polled(pid_t pid, bool watch, void (*tick)(void *), void *ctx, double limit_s);
/* Runs argv with its stdout appended to *out (stderr to err_fd); its
 * status as ab_wait gives it. The output is read until argv has exited,
 * not to its end: a process it left holding the pipe is not waited for. A stop signal meanwhile ends hbg ab, the
 * command's group ended first as ab_wait ends it, while the output is
 * still being read too. A command stopped on the terminal is watched for
 * as ab_wait_polled does: killed, said on stderr, AB_STOPPED. With
 * limit_s > 0, a command still running (or its output still open)
 * limit_s seconds after its start is ended as ab_wait_polled ends one
 * past its limit, and the answer is AB_TIMED_OUT, which the caller says:
 * it knows what the command was for. */
int ab_capture(const char *const *argv, const char *cwd, ab_buf *out, int err_fd, double limit_s);
/* "exit status 3", "killed by signal 9 (Killed)", "could not be started",
 * for AB_STOPPED what stopped it, for AB_TIMED_OUT that it ran too long. */
const char *ab_status_text(int status, char *buf, size_t cap);

/* A template with {worktree}, {rev} and {log} replaced by the values,
 * shell-quoted (log may be NULL: "{log}" then stays). */
bool ab_subst(ab_buf *out, const char *tmpl, const char *worktree, const char *rev, const char *log);

/* Writes the last `lines` lines of path to f, each indented by two
 * spaces. Nothing when the file cannot be read. */
void ab_print_tail(FILE *f, const char *path, int lines);
/* The last line among the last 64 KiB of path that starts with prefix,
 * else the last non-empty line, into out (truncated to cap); false when
 * the file is empty or cannot be read. */
bool ab_last_line(const char *path, const char *prefix, char *out, size_t cap);
/* mkdir -p. 0, or -1 with errno. */
int ab_mkdirs(const char *path);
/* rm -rf, without following links. 0, or -1 with errno. */
int ab_remove_tree(const char *path);

/* Lock files, for what two hbg ab at once must not share: a tree's build,
 * an --outputs folder. The lock is flock(2)'s, which the kernel drops when
 * the process ends, however it ends: a crash leaves no stale lock. */
/* Opens (creating) the lock file at path: the descriptor, or -1 (errno). */
int ab_lock_open(const char *path);
/* Takes fd's lock without waiting and writes our pid into the file. True
 * when it is ours (or the file system takes no locks: then no one's);
 * false when another process holds it, *holder the pid it wrote (0 when
 * unknown). */
bool ab_lock_take(int fd, long *holder);
/* Waits for fd's lock (a stop signal ends hbg ab meanwhile), then writes
 * our pid into the file. */
void ab_lock_wait(int fd);

/* --- the repository and its revisions ------------------------------------ */

typedef struct ab_repo {
    char top[AB_PATH];    /* the working tree the command was started in */
    char cache[AB_PATH];  /* CACHE/hbg/ab/<repo-key> */
} ab_repo;

/* One arm's source: a commit, or the uncommitted tree (a snapshot). */
typedef struct ab_tree {
    char sha[41];         /* the commit (for a snapshot: HEAD) */
    char rev[64];         /* the short commit as `hbg version` prints it; -dirty for a snapshot */
    bool snapshot;
    ab_buf diff;          /* snapshot: git diff HEAD --binary */
    ab_buf untracked;     /* snapshot: untracked, non-ignored paths, NUL-separated */
    char key[128];        /* its cache name: sha, or sha-dirty-<content hash> */
    char dir[AB_PATH];    /* its worktree, CACHE/.../<key> */
    char log[AB_PATH];    /* its build log, CACHE/.../<key>.build.log */
} ab_tree;

/* The repository of the current directory and its cache folder. Errors
 * are one line in err; 0 on success. */
int ab_repo_open(ab_repo *r, char *err, size_t cap);
/* A revision as a commit. */
int ab_resolve_commit(const ab_repo *r, const char *spec, ab_tree *t, char *err, size_t cap);
/* The uncommitted tree on top of HEAD. *clean is set when there is
 * nothing uncommitted (t then names HEAD itself, not a snapshot). The
 * nskip paths `skip` (absolute, NULL entries ignored) are left out where
 * they lie inside the repository: hbg ab's own outputs, which would make
 * every run's tree differ from the last's. */
int ab_resolve_worktree(const ab_repo *r, ab_tree *t, const char *const *skip, size_t nskip, bool *clean, char *err,
                        size_t cap);
void ab_tree_free(ab_tree *t);

/* How a tree is built: the default cmake build of hbg, or a template. */
typedef struct ab_builder {
    const char *tmpl;     /* --build, or NULL for the default */
    unsigned jobs;        /* the default build's -j */
} ab_builder;

/* A --build template builds in a worktree of its own (its name has the
 * template's hash), so that another builder's build, of another hbg ab at
 * once, never replaces what this one measures. Call before t is built. */
int ab_tree_use_builder(const ab_repo *r, ab_tree *t, const ab_builder *b, char *err, size_t cap);
/* Whether t was built by this builder before, to completion (its marker
 * is written only after a successful build and names the builder). */
bool ab_built(const ab_tree *t, const ab_builder *b);
/* Makes t's worktree (unless a finished one is there) and builds it, its
 * output into t->log. Returns 0; 1 when the build failed (err says how;
 * the log holds the rest); 2 when the worktree could not be made. While
 * another hbg ab builds the same tree, it waits for that build (said on
 * stderr), and reuses it when it is this builder's. */
int ab_build(const ab_repo *r, ab_tree *t, const ab_builder *b, char *err, size_t cap);

#endif
