/* Helpers for the fault tests (tests/faults/): the built `hbg` run as a
 * child under a fault a real machine throws — stdout on /dev/full or
 * closed, a resource limit — with a hard bound on how long it may take, so
 * a hang fails the test instead of stalling the suite. */
#ifndef HBG_TEST_FAULT_SUPPORT_H
#define HBG_TEST_FAULT_SUPPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum { FS_OUT_CAPTURE = 0, FS_OUT_FULL, FS_OUT_CLOSED };

typedef struct fs_spec {
    const char *const *args;  /* NULL-terminated; args[0] is the subcommand */
    int out;                  /* FS_OUT_*: where fd 1 goes */
    const char *in;           /* file for fd 0, or NULL: inherited */
    unsigned long as_bytes;   /* RLIMIT_AS, 0: unchanged */
    unsigned long nofile;     /* RLIMIT_NOFILE, 0: unchanged */
    unsigned long fsize;      /* RLIMIT_FSIZE in bytes, 0: unchanged (SIGXFSZ ignored) */
    const char *env;          /* one NAME=VALUE put into the child's environment, or NULL */
    bool group;               /* a process group of its own, SIGINT default: a terminal's job */
} fs_spec;

typedef struct fs_child {
    pid_t pid;
    char *outp, *errp;        /* where stdout and stderr went */
} fs_child;

/* Starts $HBG_CLI as spec says; fails the test when it cannot. */
void fs_start(const fs_spec *spec, fs_child *c);
/* Waits at most limit_s seconds (then kills it and fails the test).
 * Returns the exit status; a child killed by a signal fails the test with
 * the signal named. Fills *out and *err (malloc'd) when not NULL. */
int fs_finish(fs_child *c, int limit_s, char **out, char **err);
/* The same, but a child that ended by a signal is not a failure: *signo
 * is that signal (0 when it exited), the return value then -1. */
int fs_finish_any(fs_child *c, int limit_s, int *signo, char **out, char **err);
/* Whether process pid is gone (or a zombie no one has reaped yet, as a
 * container's first process may leave it). */
bool fs_gone(pid_t pid);
/* fs_start then fs_finish. */
int fs_run(const fs_spec *spec, int limit_s, char **out, char **err);

/* A fresh directory under $HBG_BINARY_DIR (malloc'd); fs_rmdir removes it
 * and everything in it, then frees the name. */
char *fs_tempdir(const char *tag);
void fs_rmdir(char *dir);
/* DIR/NAME (malloc'd). */
char *fs_path(const char *dir, const char *name);
/* Writes text to path; fails the test on error. */
void fs_write(const char *path, const char *text);
/* Fails the test, showing hay, unless hay contains needle. */
void fs_expect(const char *hay, const char *needle);

/* True when this program was built with AddressSanitizer (which reserves
 * terabytes of address space, so RLIMIT_AS cannot be tested under it). */
int fs_asan(void);

#endif
