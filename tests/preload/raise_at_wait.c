/* Preloaded (LD_PRELOAD) into an hbg ab by test_cli_ab: a stop signal at
 * the moments it could once be lost, inside hbg ab's wait for a run, and
 * (HBG_TEST_RAISE_AT_LOCK set) inside its wait for another hbg ab's lock.
 * Before hbg ab's waitpid for a child that is still running goes ahead,
 * it waits until the file $HBG_TEST_RAISE_WHEN exists (the run makes it
 * once it is ready), then raises SIGINT: after hbg ab looked whether a
 * signal had come, before the waitpid it then calls. Once only, and in
 * hbg alone (the shells and git it starts inherit the preload too).
 * With HBG_TEST_RAISE_AT_READ, the same inside its read of a command's
 * output (poll, ppoll), once that file exists; with
 * HBG_TEST_RAISE_AT_FOPEN, in work of its own, as it opens a file whose
 * path ends so (HBG_TEST_RAISE_AT_READLINK: as it reads such a link, the
 * first HBG_TEST_RAISE_SKIP reads of it passed over). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

pid_t waitpid(pid_t pid, int *ws, int options);

static void raise_when_ready(pid_t pid)
{
    static int raised;
    const char *when = getenv("HBG_TEST_RAISE_WHEN");
    if (!when || raised || pid <= 0 || strcmp(program_invocation_short_name, "hbg"))
        return;
    for (;;) {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        /* ended (git, `hbg version`): not the run */
        if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0 || si.si_pid == pid)
            return;
        if (access(when, F_OK) == 0)
            break;
        nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
    }
    raised = 1;
    raise(SIGINT);
}

pid_t waitpid(pid_t pid, int *ws, int options)
{
    static pid_t (*real)(pid_t, int *, int);
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "waitpid");
    int e = errno;
    raise_when_ready(pid);
    errno = e;
    return real(pid, ws, options);
}

/* The lock: SIGINT just before the first try at a lock that an earlier
 * try on the same descriptor found held, that is, inside the wait for it
 * (after hbg ab looked for a signal, before the try). */
int flock(int fd, int op)
{
    static int (*real)(int, int);
    static int held_fd = -1, raised;
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "flock");
    if (!raised && (op & LOCK_EX) && fd == held_fd && getenv("HBG_TEST_RAISE_AT_LOCK") &&
        !strcmp(program_invocation_short_name, "hbg")) {
        int e = errno;
        raised = 1;
        raise(SIGINT);
        errno = e;
    }
    int r = real(fd, op);
    if (r != 0 && errno == EWOULDBLOCK)
        held_fd = fd;
    return r;
}

/* The read of a command's output: SIGINT just before the wait for more
 * of it, once the file $HBG_TEST_RAISE_AT_READ exists (the command makes
 * it once it is ready): after hbg ab looked whether a signal had come.
 * That wait is then made without its time limit, so that a signal it
 * does not take shows as a wait until the command ends (a poll whose
 * mask lets the signal in only before the wait: the handler runs, and
 * the wait goes on), not as one a nap late. */
static int raise_at_read(void)
{
    static int raised;
    const char *when = getenv("HBG_TEST_RAISE_AT_READ");
    if (raised || !when || strcmp(program_invocation_short_name, "hbg") || access(when, F_OK) != 0)
        return 0;
    raised = 1;
    raise(SIGINT);
    return 1;
}

int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *timeout, const sigset_t *mask)
{
    static int (*real)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "ppoll");
    int e = errno;
    if (raise_at_read())
        timeout = NULL;
    errno = e;
    return real(fds, n, timeout, mask);
}

int poll(struct pollfd *fds, nfds_t n, int timeout_ms)
{
    static int (*real)(struct pollfd *, nfds_t, int);
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "poll");
    int e = errno;
    if (raise_at_read())
        timeout_ms = -1;
    errno = e;
    return real(fds, n, timeout_ms);
}

/* In-process work (a log read between two runs, or by --resume): SIGINT
 * as hbg opens the file whose path ends with $HBG_TEST_RAISE_AT_FOPEN,
 * once, with no wait for a child near. */
static void raise_at_fopen(const char *path)
{
    static int raised;
    const char *end = getenv("HBG_TEST_RAISE_AT_FOPEN");
    size_t n = end ? strlen(end) : 0, len = path ? strlen(path) : 0;
    if (raised || !n || len < n || strcmp(path + len - n, end) || strcmp(program_invocation_short_name, "hbg"))
        return;
    raised = 1;
    raise(SIGINT);
}

FILE *fopen(const char *path, const char *mode)
{
    static FILE *(*real)(const char *, const char *);
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "fopen");
    int e = errno;
    raise_at_fopen(path);
    errno = e;
    return real(path, mode);
}

FILE *fopen64(const char *path, const char *mode)
{
    static FILE *(*real)(const char *, const char *);
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "fopen64");
    int e = errno;
    raise_at_fopen(path);
    errno = e;
    return real(path, mode);
}

/* In-process work on a WORKTREE's untracked files (hashed, then copied
 * into the snapshot): SIGINT as hbg reads the link whose path ends with
 * $HBG_TEST_RAISE_AT_READLINK, after $HBG_TEST_RAISE_SKIP such reads. */
ssize_t readlink(const char *path, char *buf, size_t cap)
{
    static ssize_t (*real)(const char *, char *, size_t);
    static int seen;
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "readlink");
    const char *end = getenv("HBG_TEST_RAISE_AT_READLINK"), *skip = getenv("HBG_TEST_RAISE_SKIP");
    size_t n = end ? strlen(end) : 0, len = strlen(path);
    if (n && len >= n && !strcmp(path + len - n, end) && !strcmp(program_invocation_short_name, "hbg") &&
        seen++ == (skip ? atoi(skip) : 0)) {
        int e = errno;
        raise(SIGINT);
        errno = e;
    }
    return real(path, buf, cap);
}
