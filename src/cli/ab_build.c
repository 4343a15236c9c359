/* hbg ab: child processes, revision worktrees, builds. See ab_build.h. */
#include "cli/ab_build.h"
#include "tools/diag.h"
#include "cli/stopsig.h"
#include "util/fdio.h"
#include "util/vec.h"

#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* --- strings ------------------------------------------------------------- */

bool ab_buf_add(ab_buf *b, const void *s, size_t n)
{
    if (n > SIZE_MAX - 1 - b->n || !vec_grow((void **)&b->p, &b->cap, b->n + n + 1, 1))
        return false;
    if (n)
        memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
    return true;
}

bool ab_buf_str(ab_buf *b, const char *s)
{
    return ab_buf_add(b, s, strlen(s));
}

bool ab_buf_fmt(ab_buf *b, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return false;
    if ((size_t)n < sizeof small)
        return ab_buf_add(b, small, (size_t)n);
    char *big = malloc((size_t)n + 1);
    if (!big)
        return false;
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    bool ok = ab_buf_add(b, big, (size_t)n);
    free(big);
    return ok;
}

bool ab_buf_shquote(ab_buf *b, const char *s)
{
    bool plain = *s != 0;
    for (const char *c = s; *c && plain; c++)
        plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%", *c) != NULL;
    if (plain)
        return ab_buf_str(b, s);
    bool ok = ab_buf_add(b, "'", 1);
    for (const char *c = s; *c && ok; c++)
        ok = *c == '\'' ? ab_buf_add(b, "'\\''", 4) : ab_buf_add(b, c, 1);
    return ok && ab_buf_add(b, "'", 1);
}

void ab_buf_free(ab_buf *b)
{
    free(b->p);
    *b = (ab_buf){0};
}

const char *ab_buf_cstr(const ab_buf *b)
{
    return b->p ? b->p : "";
}

bool ab_subst(ab_buf *out, const char *tmpl, const char *worktree, const char *rev, const char *log)
{
    static const char *const names[] = {"{worktree}", "{rev}", "{log}"};
    const char *vals[] = {worktree, rev, log};
    bool ok = true;
    for (const char *s = tmpl; *s && ok;) {
        int hit = -1;
        for (int k = 0; k < 3 && hit < 0; k++)
            if (vals[k] && !strncmp(s, names[k], strlen(names[k])))
                hit = k;
        if (hit < 0) {
            ok = ab_buf_add(out, s++, 1);
            continue;
        }
        ok = ab_buf_shquote(out, vals[hit]);
        s += strlen(names[hit]);
    }
    return ok && ab_buf_add(out, "", 0);
}

/* --- processes ----------------------------------------------------------- */

/* Each child runs in a process group of its own, so that a build's make
 * and compilers, or an hbg run's ranks, can be stopped together. A stop
 * signal to hbg ab (Ctrl-C reaches only its own group) is passed to the
 * child's group as SIGTERM, with SIGCONT (a stopped child would hold it
 * pending for ever); a second one sends SIGKILL. Once no process of the
 * group is left (end_group: SIGKILL AB_GRACE_S seconds on), hbg ab says
 * so and ends by the first signal (ab_wait). A signal hbg ab was
 * started with ignored (nohup, a script's background job) stays ignored,
 * and one it was started with blocked stays blocked and pending, by it
 * and its children (stopsig.h): no wait takes it. The child's group
 * stands apart from the terminal: a child that reads it (a password
 * prompt) stops until the user stops hbg ab; the builds and runs do not. */
static volatile sig_atomic_t g_signal, g_signals;
/* The group of the child being waited for; 0: none. After a stop signal
 * it is kept past its leader's end, until the group is gone, so that a
 * second signal still kills what is left of it. */
static volatile pid_t g_child;

static void on_stop_signal(int sig)
{
    if (!g_signal)
        g_signal = sig;
    g_signals++;
    if (g_child > 0) {
        kill(-g_child, g_signals > 1 ? SIGKILL : SIGTERM);
        kill(-g_child, SIGCONT);
    }
}

void ab_catch_signals(void)
{
    stopsig_catch(on_stop_signal);
}

void ab_stop_if_signalled(void)
{
    if (!g_signal)
        return;
    fprintf(stderr, "\nhbg ab: stopped by signal %d (%s); the finished logs are kept: rerun with --resume to go on\n",
            (int)g_signal, strsignal(g_signal));
    stopsig_raise(g_signal);
}

/* In the child: only async-signal-safe calls until exec. The stop
 * signals arrive blocked (ab_start): their actions are put back first,
 * then they are unblocked, so one sent meanwhile ends the child. SIGXFSZ,
 * which hbg ignores, is put back as hbg found it. */
static void child_exec(const char *const *argv, const char *cwd, int out_fd, int err_fd, const sigset_t *mask)
{
    setpgid(0, 0);
    stopsig_default();
    stopsig_inherited();
    sigprocmask(SIG_SETMASK, mask, NULL);
    int nul = open("/dev/null", O_RDWR);
    if (nul < 0)
        _exit(127);
    dup2(nul, STDIN_FILENO);
    dup2(out_fd >= 0 ? out_fd : nul, STDOUT_FILENO);
    dup2(err_fd >= 0 ? err_fd : nul, STDERR_FILENO);
    if (nul > STDERR_FILENO)
        close(nul);
    if (cwd && chdir(cwd) != 0) {
        static const char m[] = "hbg ab: cannot enter the directory to run in\n";
        (void)!write(STDERR_FILENO, m, sizeof m - 1);
        _exit(127);
    }
    signal(SIGPIPE, SIG_DFL);
    execvp(argv[0], (char *const *)argv);
    static const char m[] = "hbg ab: cannot start the program (exec failed)\n";
    (void)!write(STDERR_FILENO, m, sizeof m - 1);
    _exit(127);
}

pid_t ab_start(const char *const *argv, const char *cwd, int out_fd, int err_fd)
{
    fflush(NULL);
    /* blocked from before the fork until the child's group is known, so
     * that a stop signal is never lost between them */
    sigset_t was;
    stopsig_block(&was);
    pid_t pid = fork();
    if (pid == 0)
        child_exec(argv, cwd, out_fd, err_fd, &was);
    if (pid > 0) {
        setpgid(pid, pid); /* as the child does: whichever runs first */
        g_child = pid;
    }
    sigprocmask(SIG_SETMASK, &was, NULL);
    if (pid > 0 && g_signal) /* came before: the child starts stopped short */
        kill(-pid, SIGTERM);
    return pid;
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* waitpid for pid, without hanging unless hang: its status as ab_wait
 * gives it, -2 while it runs. A hanging wait goes on through signals. */
static int reap(pid_t pid, bool hang)
{
    int ws = 0;
    pid_t got;
    for (;;) {
        got = waitpid(pid, &ws, hang ? 0 : WNOHANG);
        if (got >= 0 || errno != EINTR)
            break;
    }
    if (got == 0)
        return -2;
    if (got < 0)
        return -1;
    if (WIFEXITED(ws))
        return WEXITSTATUS(ws);
    return WIFSIGNALED(ws) ? 128 + WTERMSIG(ws) : -1;
}

/* reap(pid, true), giving up (-2) once a stop signal has come. A look at
 * g_signal then a blocking waitpid would miss one that lands between
 * them until pid ended, which one that ignores SIGTERM never does: a
 * second signal was needed. So the stop signals (those caught) and
 * SIGCHLD are blocked from before the look, and sigwaitinfo takes
 * whichever comes next: a stop signal is handled as the handler would
 * have, a SIGCHLD (any child's end or stop; blocked, it is kept pending
 * though its action is the default) sends the loop round to look again. */
static int reap_until_signal(pid_t pid)
{
    sigset_t set, was;
    sigemptyset(&set);
    stopsig_caught(&set);
    sigaddset(&set, SIGCHLD);
    sigprocmask(SIG_BLOCK, &set, &was);
    int st;
    while ((st = reap(pid, false)) == -2 && !g_signal) {
        int sig = sigwaitinfo(&set, NULL);
        if (sig > 0 && sig != SIGCHLD)
            on_stop_signal(sig);
    }
    /* a signal that came after the one taken reaches the handler now */
    sigprocmask(SIG_SETMASK, &was, NULL);
    return st;
}

/* The end of group pid once it was sent SIGTERM (a stop signal, or
 * --run-timeout): waits, at most AB_GRACE_S seconds, until no process of
 * it is left (its leader reaped), then kills what is left with SIGKILL.
 * The whole group, not only its leader: a --run script's child that
 * ignores SIGTERM outlives the shell, and would run on beside the next
 * measurement or after hbg ab. A group with no process left answers
 * ESRCH; while one is left, its id is no other process's. st: the
 * leader's status when it was reaped already, else -2; returns it. */
static int end_group(pid_t pid, int st)
{
    double until = mono_s() + AB_GRACE_S;
    for (;;) {
        if (st == -2)
            st = reap(pid, false);
        if (st != -2 && kill(-pid, 0) != 0 && errno == ESRCH)
            break;
        if (mono_s() >= until) {
            kill(-pid, SIGKILL);
            if (st == -2)
                st = reap(pid, true);
            break;
        }
        nanosleep(&(struct timespec){.tv_nsec = 20000000}, NULL);
    }
    if (g_child == pid)
        g_child = 0;
    return st;
}

int ab_wait(pid_t pid, bool hang)
{
    int st = hang ? reap_until_signal(pid) : reap(pid, false);
    if (g_signal) {
        /* the group was sent SIGTERM (on_stop_signal, ab_start): all of it
         * goes before hbg ab does */
        st = end_group(pid, st);
        ab_stop_if_signalled();
    }
    if (st != -2 && g_child == pid)
        g_child = 0;
    return st;
}

/* Whether a process of group pgid is stopped ('T' in /proc/PID/stat).
 * Nothing stops a build or a run but a stop signal, and the one that
 * comes by itself is the terminal's: the group stands apart from it, so
 * a read of it (a password prompt on /dev/tty) or, under `stty tostop`, a
 * write stops the process with SIGTTIN or SIGTTOU, for ever. */
static bool group_stopped(pid_t pgid)
{
    DIR *d = opendir("/proc");
    if (!d)
        return false;
    bool stopped = false;
    struct dirent *e;
    char path[sizeof e->d_name + 16], buf[512];
    while (!stopped && (e = readdir(d)) != NULL) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue; /* ended meanwhile */
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n <= 0)
            continue;
        buf[n] = 0;
        /* "PID (COMM) STATE PPID PGRP ...": COMM may hold anything, so
         * the fields are counted from its last ')' */
        char *rp = strrchr(buf, ')');
        char state;
        long ppid, pgrp;
        if (rp && sscanf(rp + 1, " %c %ld %ld", &state, &ppid, &pgrp) == 3 && pgrp == (long)pgid)
            stopped = state == 'T';
    }
    closedir(d);
    return stopped;
}

/* The signal that stopped child pid, while it is stopped; 0 when it is
 * not (the report is looked at, not taken: WNOWAIT). */
static int stop_signal(pid_t pid)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (waitid(P_PID, (id_t)pid, &si, WSTOPPED | WNOHANG | WNOWAIT) != 0 || si.si_pid != pid ||
        si.si_code != CLD_STOPPED)
        return 0;
    return si.si_status;
}

/* A command past its time limit: asked to end (SIGTERM: an hbg run
 * kills its ranks and says which passes ran), then made to, the whole
 * group (end_group). The group is continued too, in case it was paused
 * meanwhile. A stop signal that came meanwhile ends hbg ab after it. */
static int stop_overdue(pid_t pid)
{
    kill(-pid, SIGTERM);
    kill(-pid, SIGCONT);
    (void)end_group(pid, -2);
    ab_stop_if_signalled();
    return AB_TIMED_OUT;
}

/* The look a watched wait takes each second: whether a process of
 * group pid is stopped on the terminal (SIGTTIN, SIGTTOU), waiting for
 * ever. If one is, the group is killed (a stopped process takes SIGKILL
 * too) and the answer is true: the caller reaps pid and answers
 * AB_STOPPED. Unless the command itself (pid) was stopped by SIGSTOP or
 * SIGTSTP: a person paused it and will continue it, so it is waited for,
 * said once (*said). */
static bool stopped_on_terminal(pid_t pid, bool *said)
{
    int sig = group_stopped(pid) ? stop_signal(pid) : -1;
    if (sig == SIGSTOP || sig == SIGTSTP) {
        if (!*said)
            fprintf(stderr,
                    "\nhbg ab: the command (pid %ld) was stopped by %s; waiting until it is continued "
                    "(kill -CONT %ld)\n",
                    (long)pid, sig == SIGSTOP ? "SIGSTOP" : "SIGTSTP", (long)pid);
        *said = true;
        return false;
    }
    if (sig < 0)
        return false;
    kill(-pid, SIGKILL);
    return true;
}

int ab_wait_polled(pid_t pid, bool watch, void (*tick)(void *), void *ctx, double limit_s)
{
    /* short naps first: most commands (git's) end in milliseconds */
    long nap_ns = 1000000;
    bool said = false;
    double deadline = limit_s > 0 ? mono_s() + limit_s : 0;
    /* A look a second, by the clock: naps on a loaded machine last longer
     * than asked, and counting them would look late. */
    double next_look = mono_s() + 1.0;
    for (;;) {
        int st = ab_wait(pid, false);
        if (st != -2)
            return st;
        if (deadline && mono_s() >= deadline)
            return stop_overdue(pid);
        if (watch && mono_s() >= next_look) {
            next_look = mono_s() + 1.0;
            if (stopped_on_terminal(pid, &said)) {
                (void)ab_wait(pid, true);
                return AB_STOPPED;
            }
        }
        if (tick)
            tick(ctx);
        nanosleep(&(struct timespec){.tv_nsec = nap_ns}, NULL);
        nap_ns = nap_ns < 50000000 ? nap_ns * 2 : 50000000;
    }
}

/* How long a wait of at most a second may take to end by deadline (a
 * mono_s() time; 0: none): 0 when it is past. */
static struct timespec nap_until(double deadline)
{
    double left = deadline ? deadline - mono_s() : 1.0;
    left = left < 0 ? 0 : left > 1.0 ? 1.0 : left;
    return (struct timespec){.tv_sec = (time_t)left, .tv_nsec = (long)((left - (double)(time_t)left) * 1e9)};
}

/* Whether child pid has exited; it is left to be reaped (WNOWAIT). */
static bool exited(pid_t pid)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid;
}

/* A descriptor that polls readable once child pid has exited (Linux 5.3
 * on); -1 without one: the read then looks every READ_LOOK_NS instead. */
#define READ_LOOK_NS 50000000L
static int exit_fd(pid_t pid)
{
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    (void)pid;
    return -1;
#endif
}

/* What fd holds now, into out, without waiting for more; false when out
 * could not grow. */
static bool drain(int fd, ab_buf *out)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
        return true;
    bool ok = true;
    char chunk[65536];
    for (;;) {
        ssize_t got = read(fd, chunk, sizeof chunk);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        ok = ok && ab_buf_add(out, chunk, (size_t)got);
    }
    return ok;
}

/* Reads fd, the stdout of command pid, into out until the command has
 * exited and what it wrote is read; false when out could not grow. The
 * end of the output is not waited for: a process the command left in the
 * background (a daemon a hook starts) may hold the pipe open long after,
 * and hbg ab waited for it: for ever (git's queries have no limit), or
 * until the limit, which then stopped a command that had answered. So
 * once pid has exited, what the pipe holds is all it wrote (a write ends
 * before its writer can), and is taken without waiting. Stops short, the
 * rest unread, when a stop signal comes (its group then got SIGTERM: the
 * caller's wait ends hbg ab), when the command stops on the terminal
 * (*cut = AB_STOPPED: its group is killed) or at deadline (a mono_s()
 * time, 0: none; *cut = AB_TIMED_OUT: the caller ends it). A read that
 * waits for the end of the output would wait for ever on a command that
 * ignores SIGTERM, on one stopped holding the pipe open, or on one that
 * hangs. As in reap_until_signal, the stop signals are blocked from
 * before the look at g_signal and let in only inside ppoll, so that one
 * that comes between them is not lost; ppoll wakes each second for the
 * look at the command's group that ab_wait_polled takes. */
static bool read_output(int fd, pid_t pid, double deadline, ab_buf *out, int *cut)
{
    sigset_t set, was;
    sigemptyset(&set);
    stopsig_caught(&set);
    sigprocmask(SIG_BLOCK, &set, &was);
    int efd = exit_fd(pid);
    struct pollfd pf[2] = {{.fd = fd, .events = POLLIN}, {.fd = efd, .events = POLLIN}};
    double next_look = mono_s() + 1.0;
    bool ok = true, said = false;
    char chunk[65536];
    while (!g_signal && !*cut) {
        if (deadline && mono_s() >= deadline) {
            *cut = AB_TIMED_OUT;
            break;
        }
        struct timespec nap = nap_until(deadline);
        if (efd < 0 && (nap.tv_sec > 0 || nap.tv_nsec > READ_LOOK_NS))
            nap = (struct timespec){.tv_nsec = READ_LOOK_NS};
        int ready = ppoll(pf, efd >= 0 ? 2 : 1, &nap, &was);
        if (ready < 0 && errno != EINTR)
            break;
        if (ready > 0 && pf[0].revents) {
            ssize_t got = read(fd, chunk, sizeof chunk);
            if (got <= 0 && !(got < 0 && errno == EINTR))
                break; /* the end, or an error that no wait mends */
            if (got > 0)
                ok = ok && ab_buf_add(out, chunk, (size_t)got);
        }
        /* readable, the pidfd says the command has exited (reaped or not:
         * SIGCHLD ignored has the kernel reap it, and waitid finds none) */
        if (efd >= 0 ? ready > 0 && pf[1].revents : exited(pid)) {
            ok = drain(fd, out) && ok;
            break;
        }
        if (mono_s() >= next_look) {
            next_look = mono_s() + 1.0;
            *cut = stopped_on_terminal(pid, &said) ? AB_STOPPED : 0;
        }
    }
    if (efd >= 0)
        close(efd);
    sigprocmask(SIG_SETMASK, &was, NULL);
    return ok;
}

int ab_capture(const char *const *argv, const char *cwd, ab_buf *out, int err_fd, double limit_s)
{
    double deadline = limit_s > 0 ? mono_s() + limit_s : 0;
    int p[2];
    if (pipe2(p, O_CLOEXEC))
        return -1;
    pid_t pid = ab_start(argv, cwd, p[1], err_fd);
    close(p[1]);
    if (pid < 0) {
        close(p[0]);
        return -1;
    }
    int st = 0;
    bool ok = read_output(p[0], pid, deadline, out, &st);
    close(p[0]); /* a command still writing gets EPIPE, or SIGPIPE */
    if (st == AB_STOPPED)
        (void)ab_wait(pid, true);
    else if (st == AB_TIMED_OUT)
        (void)stop_overdue(pid);
    else { /* polled and watched: the command may still stop on the
            * terminal once its output is closed, or hang; after a stop
            * signal, it ends hbg ab */
        double left = deadline ? deadline - mono_s() : 0;
        st = ab_wait_polled(pid, true, NULL, NULL, deadline ? (left > 1e-3 ? left : 1e-3) : 0);
    }
    if (st == AB_STOPPED) {
        /* none of the callers' own messages (a revision not found, a
         * worktree's changes that cannot be read) would say why */
        ab_buf line = {0};
        char why[256];
        for (size_t i = 0; argv[i]; i++)
            (void)(ab_buf_str(&line, i ? " " : "") && ab_buf_shquote(&line, argv[i]));
        fprintf(stderr, "hbg ab: %s %s\n", ab_buf_cstr(&line), ab_status_text(st, why, sizeof why));
        ab_buf_free(&line);
    }
    ab_buf_add(out, "", 0);
    return ok ? st : -1;
}

const char *ab_status_text(int status, char *buf, size_t cap)
{
    if (status == AB_STOPPED)
        snprintf(buf, cap, "stopped, waiting on the terminal (a password prompt?), and was killed: hbg ab runs "
                           "commands apart from the terminal, so set up credentials beforehand");
    else if (status == AB_TIMED_OUT)
        snprintf(buf, cap, "ran past --run-timeout and was stopped");
    else if (status < 0)
        snprintf(buf, cap, "could not be started or waited for");
    else if (status > 128 && status < 128 + 65)
        snprintf(buf, cap, "killed by signal %d (%s)", status - 128, strsignal(status - 128));
    else
        snprintf(buf, cap, "exit status %d", status);
    return buf;
}

/* --- files --------------------------------------------------------------- */

/* The last cap bytes of a file into buf; how many, 0 when it is empty or unreadable. */
static size_t read_end(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    off_t end = lseek(fd, 0, SEEK_END);
    off_t from = end > (off_t)cap ? end - (off_t)cap : 0;
    ssize_t n = end >= 0 ? pread(fd, buf, (size_t)(end - from), from) : -1;
    close(fd);
    return n > 0 ? (size_t)n : 0;
}

void ab_print_tail(FILE *f, const char *path, int lines)
{
    static char buf[65536];
    size_t len = read_end(path, buf, sizeof buf);
    if (!len)
        return;
    if (buf[len - 1] == '\n')
        len--;
    size_t start = len;
    for (int k = 0; start > 0; start--)
        if (buf[start - 1] == '\n' && ++k == lines)
            break;
    for (size_t i = start; i < len;) {
        const char *nl = memchr(buf + i, '\n', len - i);
        size_t e = nl ? (size_t)(nl - buf) : len;
        fprintf(f, "  %.*s\n", (int)(e - i), buf + i);
        i = e + 1;
    }
}

bool ab_last_line(const char *path, const char *prefix, char *out, size_t cap)
{
    static char buf[65536];
    size_t len = read_end(path, buf, sizeof buf);
    const char *pick = NULL;
    size_t pick_n = 0;
    for (size_t i = 0; i < len;) {
        const char *nl = memchr(buf + i, '\n', len - i);
        size_t e = nl ? (size_t)(nl - buf) : len;
        size_t n = e - i;
        while (n && buf[i + n - 1] == '\r')
            n--;
        bool wanted = n >= strlen(prefix) && !strncmp(buf + i, prefix, strlen(prefix));
        /* a line with the prefix wins over any line without it */
        if (n && (wanted || !pick || strncmp(pick, prefix, strlen(prefix))))
            pick = buf + i, pick_n = n;
        i = e + 1;
    }
    if (!pick || !cap)
        return false;
    snprintf(out, cap, "%.*s", (int)pick_n, pick);
    return true;
}

int ab_mkdirs(const char *path)
{
    char p[AB_PATH];
    if (snprintf(p, sizeof p, "%s", path) >= (int)sizeof p) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = 0;
        if (mkdir(p, 0755) && errno != EEXIST)
            return -1;
        *s = '/';
    }
    return mkdir(p, 0755) && errno != EEXIST ? -1 : 0;
}

static bool exists(const char *path)
{
    struct stat sb;
    return lstat(path, &sb) == 0;
}

static int write_file(const char *path, const void *data, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    if (hbg__write_all(fd, data, n)) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return close(fd);
}

/* Does the file hold exactly text? */
static bool file_is(const char *path, const char *text)
{
    size_t want = strlen(text);
    char *buf = malloc(want + 2);
    int fd = buf ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    ssize_t got = fd >= 0 ? read(fd, buf, want + 1) : -1;
    if (fd >= 0)
        close(fd);
    bool same = got == (ssize_t)want && !memcmp(buf, text, want);
    free(buf);
    return same;
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path) && errno != ENOENT ? -1 : 0;
}

int ab_remove_tree(const char *path)
{
    return nftw(path, rm_one, 32, FTW_DEPTH | FTW_PHYS) && errno != ENOENT ? -1 : 0;
}

/* --- locks --------------------------------------------------------------- */

int ab_lock_open(const char *path)
{
    return open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
}

/* The pid is for the words of whoever waits: the lock alone decides. */
static void lock_note_pid(int fd)
{
    char pid[24];
    int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) == 0)
        (void)!pwrite(fd, pid, (size_t)n, 0);
}

bool ab_lock_take(int fd, long *holder)
{
    *holder = 0;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0 || errno != EWOULDBLOCK) {
        lock_note_pid(fd);
        return true;
    }
    char pid[24];
    ssize_t n = pread(fd, pid, sizeof pid - 1, 0);
    pid[n > 0 ? n : 0] = 0;
    *holder = strtol(pid, NULL, 10);
    return false;
}

void ab_lock_wait(int fd)
{
    /* Polled, as the waits for a run are: a look at the stop flag then a
     * blocking flock missed a signal that came between them until the
     * other hbg ab let go, a whole build later. */
    for (;;) {
        ab_stop_if_signalled();
        if (flock(fd, LOCK_EX | LOCK_NB) == 0 || (errno != EWOULDBLOCK && errno != EINTR))
            break;
        nanosleep(&(struct timespec){.tv_nsec = 50000000}, NULL);
    }
    lock_note_pid(fd);
}

/* FNV-1a, 64 bits: a cache key, not a defence against anyone. */
static uint64_t fnv(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}
#define FNV0 0xcbf29ce484222325ull

/* --- the repository ------------------------------------------------------ */

/* One line of a git query's output into out. 0, or the failing status. */
static int git_line(const char *cwd, const char *const *args, char *out, size_t cap)
{
    const char *argv[16] = {"git"};
    size_t k = 0;
    for (; args[k] && k < 14; k++)
        argv[k + 1] = args[k];
    argv[k + 1] = NULL;
    ab_buf b = {0};
    int st = ab_capture(argv, cwd, &b, -1, 0);
    const char *s = ab_buf_cstr(&b);
    size_t n = strcspn(s, "\n");
    if (st == 0 && (n == 0 || n >= cap))
        st = 1;
    if (st == 0)
        snprintf(out, cap, "%.*s", (int)n, s);
    ab_buf_free(&b);
    return st;
}

/* A name for the repository in its cache folder's name: [A-Za-z0-9._-]. */
static void repo_name(const char *common, char *out, size_t cap)
{
    char tmp[AB_PATH];
    snprintf(tmp, sizeof tmp, "%s", common);
    size_t n = strlen(tmp);
    if (n > 5 && !strcmp(tmp + n - 5, "/.git"))
        tmp[n - 5] = 0;
    const char *base = strrchr(tmp, '/');
    base = base && base[1] ? base + 1 : "repo";
    size_t k = 0;
    for (; base[k] && k + 1 < cap && k < 40; k++)
        out[k] = (char)(strchr("._-", base[k]) || (base[k] >= '0' && base[k] <= '9') ||
                                (base[k] >= 'a' && base[k] <= 'z') || (base[k] >= 'A' && base[k] <= 'Z')
                            ? base[k] : '_');
    out[k] = 0;
}

/* $XDG_CACHE_HOME when it is an absolute path (the XDG rule), else ~/.cache. */
static int cache_base(char *out, size_t cap, char *err, size_t ecap)
{
    const char *x = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    int n;
    if (x && x[0] == '/')
        n = snprintf(out, cap, "%s", x);
    else if (home && home[0] == '/')
        n = snprintf(out, cap, "%s/.cache", home);
    else {
        snprintf(err, ecap, "no cache folder: set XDG_CACHE_HOME or HOME to an absolute path");
        return 2;
    }
    if (n >= (int)cap) {
        snprintf(err, ecap, "the cache folder's path is too long");
        return 2;
    }
    return 0;
}

int ab_repo_open(ab_repo *r, char *err, size_t cap)
{
    memset(r, 0, sizeof *r);
    char common[AB_PATH], real[PATH_MAX];
    if (git_line(NULL, (const char *const[]){"rev-parse", "--show-toplevel", NULL}, r->top, sizeof r->top)) {
        snprintf(err, cap, "the current directory is not in a git work tree (REV_A and REV_B are revisions of "
                           "the repository hbg ab is run in)");
        return 2;
    }
    /* The common dir names the repository whichever of its worktrees we
     * are in, so all of them share one cache folder. */
    if (git_line(r->top, (const char *const[]){"rev-parse", "--path-format=absolute", "--git-common-dir", NULL},
                 common, sizeof common) ||
        !realpath(common, real)) {
        snprintf(err, cap, "cannot find the git directory of %s", r->top);
        return 2;
    }
    char base[AB_PATH], name[48];
    if (cache_base(base, sizeof base, err, cap))
        return 2;
    repo_name(real, name, sizeof name);
    uint64_t h = fnv(FNV0, real, strlen(real));
    if (snprintf(r->cache, sizeof r->cache, "%s/hbg/ab/%s-%012" PRIx64, base, name, h >> 16) >=
        (int)sizeof r->cache) {
        snprintf(err, cap, "the cache folder's path is too long");
        return 2;
    }
    return 0;
}

static int tree_paths(const ab_repo *r, ab_tree *t, char *err, size_t cap)
{
    if (snprintf(t->dir, sizeof t->dir, "%s/%s", r->cache, t->key) >= (int)sizeof t->dir - 64 ||
        snprintf(t->log, sizeof t->log, "%s/%s.build.log", r->cache, t->key) >= (int)sizeof t->log) {
        snprintf(err, cap, "the cache folder's path is too long");
        return 2;
    }
    return 0;
}

static int short_rev(const ab_repo *r, ab_tree *t)
{
    /* --short=7 as cmake/version.cmake asks, so the log names carry what
     * the built binary's stamp will say (longer only where 7 is ambiguous). */
    return git_line(r->top, (const char *const[]){"rev-parse", "--short=7", t->sha, NULL}, t->rev, sizeof t->rev);
}

/* How many objects, and of them commits, have a name that starts with
 * spec, when spec is a short hex name (git's --quiet, which keeps its
 * other words off the terminal, drops the reason "ambiguous" too); 0
 * otherwise. A blob or a tree that shares the digits is no revision to
 * choose, but it makes the name ambiguous to git all the same. */
static size_t short_name_matches(const ab_repo *r, const char *spec, size_t *commits)
{
    size_t n = strlen(spec), objects = 0;
    *commits = 0;
    if (n < 4 || n >= 40 || strspn(spec, "0123456789abcdefABCDEF") != n)
        return 0;
    char arg[64];
    snprintf(arg, sizeof arg, "--disambiguate=%s", spec);
    ab_buf out = {0};
    if (ab_capture((const char *const[]){"git", "rev-parse", arg, NULL}, r->top, &out, -1, 0) == 0)
        for (const char *s = ab_buf_cstr(&out), *e; (e = strchr(s, '\n')) != NULL; s = e + 1) {
            char sha[64], type[16];
            snprintf(sha, sizeof sha, "%.*s", (int)(e - s), s);
            objects++;
            *commits += git_line(r->top, (const char *const[]){"cat-file", "-t", sha, NULL}, type, sizeof type) == 0 &&
                        !strcmp(type, "commit");
        }
    ab_buf_free(&out);
    return objects;
}

int ab_resolve_commit(const ab_repo *r, const char *spec, ab_tree *t, char *err, size_t cap)
{
    memset(t, 0, sizeof *t);
    /* :/TEXT, the youngest commit whose message matches TEXT, takes the
     * rest of the spec as TEXT: a ^{commit} after it would be searched
     * for too. It names a commit anyway. */
    const char *peel = strncmp(spec, ":/", 2) ? "^{commit}" : "";
    char q[1024];
    if (snprintf(q, sizeof q, "%s%s", spec, peel) >= (int)sizeof q ||
        git_line(r->top, (const char *const[]){"rev-parse", "--verify", "--quiet", q, NULL}, t->sha,
                 sizeof t->sha) ||
        strlen(t->sha) != 40) {
        size_t commits, many = short_name_matches(r, spec, &commits);
        if (many > 1 && commits)
            snprintf(err, cap, "ambiguous revision '%s': %zu objects of %s start with it (%zu commit%s); give more "
                               "of the commit's digits", spec, many, r->top, commits, commits == 1 ? "" : "s");
        else
            snprintf(err, cap, "unknown revision '%s': not a commit of %s (git rev-parse --verify '%s%s' failed)",
                     spec, r->top, spec, peel);
        return 2;
    }
    if (short_rev(r, t)) {
        snprintf(err, cap, "cannot abbreviate commit %s", t->sha);
        return 2;
    }
    snprintf(t->key, sizeof t->key, "%s", t->sha);
    return tree_paths(r, t, err, cap);
}

/* Hashes one untracked file (its path, kind, mode and bytes). */
static bool hash_file(const char *top, const char *rel, uint64_t *h)
{
    char path[AB_PATH];
    struct stat sb;
    if (snprintf(path, sizeof path, "%s/%s", top, rel) >= (int)sizeof path || lstat(path, &sb))
        return false;
    *h = fnv(*h, rel, strlen(rel) + 1);
    uint32_t mode = (uint32_t)sb.st_mode;
    *h = fnv(*h, &mode, sizeof mode);
    if (S_ISLNK(sb.st_mode)) {
        char tgt[AB_PATH];
        ssize_t n = readlink(path, tgt, sizeof tgt);
        *h = fnv(*h, tgt, n > 0 ? (size_t)n : 0);
        return n >= 0;
    }
    if (!S_ISREG(sb.st_mode))
        return true;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    char buf[65536];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0)
        *h = fnv(*h, buf, (size_t)n);
    close(fd);
    return n == 0;
}

/* The uncommitted state: the diff against HEAD and the untracked files,
 * but for the paths `skip` names inside the repository. */
static int worktree_state(const ab_repo *r, ab_tree *t, const char *const *skip, size_t nskip)
{
    /* Explicit prefixes and no config-driven variants, so `git apply` in
     * the snapshot reads what it is given whatever the user's settings. */
    const char *diff[32] = {"git", "-c", "diff.noprefix=false", "diff", "HEAD", "--binary", "--no-color",
                            "--no-ext-diff", "--no-textconv", "--no-relative", "--submodule=short",
                            "--src-prefix=a/", "--dst-prefix=b/", "--", "."};
    const char *others[32] = {"git", "ls-files", "--others", "--exclude-standard", "-z", "--", "."};
    size_t nd = 15, no = 7, top = strlen(r->top);
    char spec[4][AB_PATH + 32];
    for (size_t i = 0, k = 0; i < nskip && k < 4; i++) {
        const char *p = skip[i];
        if (!p || strncmp(p, r->top, top) || p[top] != '/' || !p[top + 1])
            continue; /* not inside the repository */
        snprintf(spec[k], sizeof spec[k], ":(exclude,literal)%s", p + top + 1);
        diff[nd++] = others[no++] = spec[k++];
    }
    if (ab_capture(diff, r->top, &t->diff, -1, 0) || ab_capture(others, r->top, &t->untracked, -1, 0))
        return 2;
    return 0;
}

int ab_resolve_worktree(const ab_repo *r, ab_tree *t, const char *const *skip, size_t nskip, bool *clean, char *err,
                        size_t cap)
{
    if (ab_resolve_commit(r, "HEAD", t, err, cap)) {
        snprintf(err, cap, "WORKTREE is the uncommitted tree on top of HEAD, and this repository has no HEAD "
                           "commit yet");
        return 2;
    }
    if (worktree_state(r, t, skip, nskip)) {
        snprintf(err, cap, "cannot read the uncommitted changes of %s (git diff HEAD / git ls-files failed)",
                 r->top);
        return 2;
    }
    *clean = t->diff.n == 0 && t->untracked.n == 0;
    if (*clean)
        return 0;
    uint64_t h = fnv(FNV0, t->sha, 40);
    h = fnv(h, t->diff.p ? t->diff.p : "", t->diff.n);
    for (size_t i = 0; i < t->untracked.n; i += strlen(t->untracked.p + i) + 1) {
        ab_stop_if_signalled(); /* no wait between the files: see ab_stop_if_signalled */
        if (!hash_file(r->top, t->untracked.p + i, &h)) {
            snprintf(err, cap, "cannot read the untracked file %s/%s: %s", r->top, t->untracked.p + i,
                     strerror(errno));
            return 2;
        }
    }
    t->snapshot = true;
    snprintf(t->rev + strlen(t->rev), sizeof t->rev - strlen(t->rev), "-dirty");
    snprintf(t->key, sizeof t->key, "%s-dirty-%016" PRIx64, t->sha, h);
    return tree_paths(r, t, err, cap);
}

void ab_tree_free(ab_tree *t)
{
    ab_buf_free(&t->diff);
    ab_buf_free(&t->untracked);
}

/* --- worktrees ----------------------------------------------------------- */

/* Runs argv with its output into the build log, the command line first
 * so the log reads as a transcript. */
static int logged(int logfd, const char *const *argv, const char *cwd)
{
    ab_buf line = {0};
    ab_buf_str(&line, "+");
    for (size_t i = 0; argv[i]; i++) {
        ab_buf_str(&line, " ");
        ab_buf_shquote(&line, argv[i]);
    }
    ab_buf_str(&line, "\n");
    (void)!write(logfd, ab_buf_cstr(&line), line.n);
    ab_buf_free(&line);
    pid_t pid = ab_start(argv, cwd, logfd, logfd);
    return pid < 0 ? -1 : ab_wait_polled(pid, true, NULL, NULL, 0);
}

/* Copies one untracked file (or symlink) from the tree into the snapshot.
 * Returns 1 when it was copied, 0 when it is not a file (skipped). */
static int copy_untracked(const char *top, const char *dir, const char *rel)
{
    char src[AB_PATH], dst[AB_PATH];
    struct stat sb;
    if (snprintf(src, sizeof src, "%s/%s", top, rel) >= (int)sizeof src ||
        snprintf(dst, sizeof dst, "%s/%s", dir, rel) >= (int)sizeof dst || lstat(src, &sb))
        return -1;
    if (!S_ISREG(sb.st_mode) && !S_ISLNK(sb.st_mode))
        return 0;
    char *slash = strrchr(dst, '/');
    *slash = 0;
    int made = ab_mkdirs(dst);
    *slash = '/';
    if (made)
        return -1;
    if (S_ISLNK(sb.st_mode)) {
        char tgt[AB_PATH];
        ssize_t n = readlink(src, tgt, sizeof tgt - 1);
        if (n < 0)
            return -1;
        tgt[n] = 0;
        unlink(dst);
        return symlink(tgt, dst) ? -1 : 1;
    }
    int in = open(src, O_RDONLY | O_CLOEXEC);
    int out = in >= 0 ? open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, sb.st_mode & 0777) : -1;
    char buf[65536];
    ssize_t n = out >= 0 ? 0 : -1;
    while (out >= 0 && (n = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, (size_t)n) != n) {
            n = -1;
            break;
        }
    if (in >= 0)
        close(in);
    if (out >= 0 && close(out))
        n = -1;
    return n == 0 ? 1 : -1;
}

/* The snapshot: HEAD's worktree plus the diff plus the untracked files.
 * cmake/version.cmake ignores untracked files, so none may be left in the
 * snapshot: the diff goes to its index too (a tree whose only change is a
 * new file, staged or `git add -N`, would otherwise build as clean), and
 * the untracked files are marked intent-to-add. */
static int overlay(const ab_repo *r, ab_tree *t, int logfd, char *err, size_t cap)
{
    char side[AB_PATH_X];
    snprintf(side, sizeof side, "%s.diff", t->dir); /* the tree's own: another builder's runs at once */
    if (t->diff.n) {
        const char *apply[] = {"git", "apply", "--index", "--whitespace=nowarn", side, NULL};
        if (write_file(side, t->diff.p, t->diff.n) || logged(logfd, apply, t->dir)) {
            snprintf(err, cap, "cannot apply the uncommitted changes to a snapshot of HEAD (git apply failed; "
                               "see %s)", t->log);
            return 2;
        }
    }
    ab_buf added = {0};
    for (size_t i = 0; i < t->untracked.n; i += strlen(t->untracked.p + i) + 1) {
        ab_stop_if_signalled(); /* the snapshot, not yet ready, is made afresh */
        int c = copy_untracked(r->top, t->dir, t->untracked.p + i);
        if (c < 0) {
            snprintf(err, cap, "cannot copy the untracked file %s/%s into the snapshot: %s", r->top,
                     t->untracked.p + i, strerror(errno));
            ab_buf_free(&added);
            return 2;
        }
        if (c > 0)
            ab_buf_add(&added, t->untracked.p + i, strlen(t->untracked.p + i) + 1);
    }
    int rc = 0;
    snprintf(side, sizeof side, "%s.untracked", t->dir);
    const char *ita[] = {"git", "add", "--intent-to-add", "--pathspec-from-file", side, "--pathspec-file-nul", NULL};
    if (added.n && (write_file(side, added.p, added.n) || logged(logfd, ita, t->dir))) {
        snprintf(err, cap, "cannot mark the untracked files in the snapshot (git add -N failed; see %s)", t->log);
        rc = 2;
    }
    ab_buf_free(&added);
    return rc;
}

/* A fresh worktree of t (a previous, unfinished one is removed first). */
static int make_tree(const ab_repo *r, ab_tree *t, const char *ready, int logfd, char *err, size_t cap)
{
    unlink(ready);
    if (exists(t->dir)) {
        const char *rm[] = {"git", "worktree", "remove", "--force", "--force", t->dir, NULL};
        logged(logfd, rm, r->top);
        if (exists(t->dir) && ab_remove_tree(t->dir)) {
            snprintf(err, cap, "cannot remove the unfinished worktree %s: %s", t->dir, strerror(errno));
            return 2;
        }
    }
    /* --force: the path may still be registered from a worktree whose
     * folder was deleted by hand. */
    const char *add[] = {"git", "worktree", "add", "--force", "--detach", t->dir, t->sha, NULL};
    int st = logged(logfd, add, r->top);
    if (st) {
        char why[224];
        snprintf(err, cap, "cannot make the worktree %s (git worktree add: %s; see %s)", t->dir,
                 ab_status_text(st, why, sizeof why), t->log);
        return 2;
    }
    if (t->snapshot && overlay(r, t, logfd, err, cap))
        return 2;
    if (write_file(ready, t->sha, 40)) {
        snprintf(err, cap, "cannot write %s: %s", dg_shown(ready), strerror(errno));
        return 2;
    }
    return 0;
}

/* --- builds -------------------------------------------------------------- */

static void describe(const ab_builder *b, ab_buf *d)
{
    if (b->tmpl)
        ab_buf_fmt(d, "build: %s\n", b->tmpl);
    else
        ab_buf_str(d, "build: cmake -DCMAKE_BUILD_TYPE=Release -DHBG_TESTS=OFF -DHBG_INSTALL=OFF, target hbg_cli\n");
}

static int run_build(const ab_tree *t, const ab_builder *b, int logfd, char *err, size_t cap)
{
    char why[224], bdir[AB_PATH_X], jobs[16];
    int st;
    if (b->tmpl) {
        ab_buf cmd = {0};
        ab_subst(&cmd, b->tmpl, t->dir, t->rev, t->log);
        const char *sh[] = {"/bin/sh", "-c", ab_buf_cstr(&cmd), NULL};
        st = logged(logfd, sh, t->dir);
        ab_buf_free(&cmd);
        if (st)
            snprintf(err, cap, "--build %s", ab_status_text(st, why, sizeof why));
        return st ? 1 : 0;
    }
    snprintf(bdir, sizeof bdir, "%s/build", t->dir);
    snprintf(jobs, sizeof jobs, "%u", b->jobs);
    const char *conf[] = {"cmake", "-S", t->dir, "-B", bdir, "-DCMAKE_BUILD_TYPE=Release", "-DHBG_TESTS=OFF",
                          "-DHBG_INSTALL=OFF", NULL};
    const char *make[] = {"cmake", "--build", bdir, "-j", jobs, "--target", "hbg_cli", NULL};
    if ((st = logged(logfd, conf, t->dir)) != 0) {
        snprintf(err, cap, "cmake (configure) %s", ab_status_text(st, why, sizeof why));
        return 1;
    }
    if ((st = logged(logfd, make, t->dir)) != 0) {
        snprintf(err, cap, "cmake --build %s", ab_status_text(st, why, sizeof why));
        return 1;
    }
    snprintf(bdir, sizeof bdir, "%s/build/hbg", t->dir);
    if (access(bdir, X_OK)) {
        snprintf(err, cap, "the build succeeded but left no %s", bdir);
        return 1;
    }
    return 0;
}

/* Beside the worktree, named after it: a builder of its own has a
 * worktree of its own (ab_tree_use_builder), and so markers of its own. */
static void markers(const ab_tree *t, char *ready, char *built, size_t cap)
{
    snprintf(ready, cap, "%s.ready", t->dir);
    snprintf(built, cap, "%s.built", t->dir);
}

int ab_tree_use_builder(const ab_repo *r, ab_tree *t, const ab_builder *b, char *err, size_t cap)
{
    if (!b->tmpl)
        return 0;
    uint64_t h = fnv(FNV0, b->tmpl, strlen(b->tmpl));
    if (snprintf(t->dir, sizeof t->dir, "%s/%s-b%012" PRIx64, r->cache, t->key, h >> 16) >= (int)sizeof t->dir - 64 ||
        snprintf(t->log, sizeof t->log, "%s.build.log", t->dir) >= (int)sizeof t->log) {
        snprintf(err, cap, "the cache folder's path is too long");
        return 2;
    }
    return 0;
}

bool ab_built(const ab_tree *t, const ab_builder *b)
{
    char ready[AB_PATH_X], built[AB_PATH_X], bin[AB_PATH_X];
    markers(t, ready, built, sizeof ready);
    snprintf(bin, sizeof bin, "%s/build/hbg", t->dir);
    ab_buf desc = {0};
    describe(b, &desc);
    bool done = exists(ready) && exists(t->dir) && file_is(built, ab_buf_cstr(&desc)) &&
                (b->tmpl || access(bin, X_OK) == 0);
    ab_buf_free(&desc);
    return done;
}

/* The tree's lock, held while its worktree is made and built: two hbg ab
 * measuring the same tree at once (one WORKTREE, two --outputs) would
 * otherwise remove each other's half-made worktree, or relink the binary
 * the other is about to run. The second waits, and says for whom. */
static int lock_tree(const ab_tree *t, char *err, size_t cap)
{
    char path[AB_PATH_X];
    snprintf(path, sizeof path, "%s.lock", t->dir);
    int fd = ab_lock_open(path);
    if (fd < 0) {
        snprintf(err, cap, "cannot create %s: %s", dg_shown(path), strerror(errno));
        return -1;
    }
    long holder;
    if (!ab_lock_take(fd, &holder)) {
        char pid[32] = "";
        if (holder > 0)
            snprintf(pid, sizeof pid, " (pid %ld)", holder);
        fprintf(stderr, "hbg ab: waiting for another hbg ab building %s%s\n", dg_shown(t->dir), pid);
        ab_lock_wait(fd);
    }
    /* The build's processes hold the lock too (it is not closed on exec):
     * an hbg ab killed outright leaves its build running, and the lock
     * with it, until that ends. */
    int fl = fcntl(fd, F_GETFD);
    if (fl >= 0)
        fcntl(fd, F_SETFD, fl & ~FD_CLOEXEC);
    return fd;
}

int ab_build(const ab_repo *r, ab_tree *t, const ab_builder *b, char *err, size_t cap)
{
    char ready[AB_PATH_X], built[AB_PATH_X];
    markers(t, ready, built, sizeof ready);
    if (ab_mkdirs(r->cache)) {
        snprintf(err, cap, "cannot create the cache folder %s: %s", r->cache, strerror(errno));
        return 2;
    }
    int lock = lock_tree(t, err, cap);
    if (lock < 0)
        return 2;
    /* the hbg ab waited for may have built it, with this builder */
    if (ab_built(t, b)) {
        close(lock);
        return 0;
    }
    int logfd = open(t->log, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    if (logfd < 0) {
        snprintf(err, cap, "cannot create %s: %s", dg_shown(t->log), strerror(errno));
        close(lock);
        return 2;
    }
    /* Gone before the build starts, so an interrupted build is not taken
     * for a finished one; a worktree never finished is made afresh. */
    unlink(built);
    int rc = 0;
    if (!exists(ready) || !exists(t->dir))
        rc = make_tree(r, t, ready, logfd, err, cap);
    if (!rc)
        rc = run_build(t, b, logfd, err, cap);
    close(logfd);
    ab_buf desc = {0};
    describe(b, &desc);
    if (!rc && write_file(built, desc.p, desc.n)) {
        snprintf(err, cap, "cannot write %s: %s", dg_shown(built), strerror(errno));
        rc = 2;
    }
    ab_buf_free(&desc);
    close(lock); /* the tree is finished: runs of it need no lock */
    return rc;
}
