#include "cli/outfile.h"
#include "tools/diag.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The temporary an interrupt would leave behind: a signal that ends the
 * command while it is being written (Ctrl-C during a long trace) removes
 * it first, so nothing named PATH.tmpPID outlives the command. One at a
 * time: a command writes one output file at once. Only signals whose
 * action is the default are taken over (a command's own handler, or a
 * signal it was started with ignored, is left as it is), and they are
 * given back when the file is finished. */
static const int g_end_sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
#define NEND (sizeof g_end_sigs / sizeof g_end_sigs[0])
static char *volatile g_tmp;
static bool g_taken[NEND];

static void on_end_signal(int sig)
{
    char *tmp = g_tmp;
    if (tmp)
        unlink(tmp); /* async-signal-safe, as is all that follows */
    signal(sig, SIG_DFL);
    raise(sig); /* delivered on return: the signal is blocked in its handler */
}

static void guard_tmp(char *tmp)
{
    if (g_tmp)
        return;
    g_tmp = tmp;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_end_signal;
    for (size_t i = 0; i < NEND; i++)
        g_taken[i] = sigaction(g_end_sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL &&
                     !(old.sa_flags & SA_SIGINFO) && sigaction(g_end_sigs[i], &sa, NULL) == 0;
}

/* Called once the temporary is renamed or removed, before its name is
 * freed (the handler must never see a freed name). */
static void unguard_tmp(const char *tmp)
{
    if (g_tmp != tmp)
        return;
    g_tmp = NULL;
    struct sigaction now;
    for (size_t i = 0; i < NEND; i++)
        if (g_taken[i]) {
            /* a handler the command put in meanwhile is its own: kept */
            if (sigaction(g_end_sigs[i], NULL, &now) == 0 && now.sa_handler == on_end_signal)
                signal(g_end_sigs[i], SIG_DFL);
            g_taken[i] = false;
        }
}

const char *hbg_outfile_held(const hbg_outfile *o)
{
    return strcmp(o->path, "-") ? dg_shown(o->path) : "standard output";
}

/* Standard output's spool: a temporary unlinked as soon as it is made, so
 * nothing is left behind whatever ends the command. Returns 0, or -1 after
 * saying why. */
static int open_spool(hbg_outfile *o)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    char *name;
    int fd = -1, e = ENOMEM;
    if (asprintf(&name, "%s/hbg-stdout.XXXXXX", dir) >= 0) {
        fd = mkstemp(name);
        e = errno;
        if (fd >= 0)
            unlink(name);
        free(name);
    }
    if (fd >= 0 && !(o->f = fdopen(fd, "w+"))) {
        e = errno;
        close(fd);
    }
    if (!o->f) {
        fprintf(stderr, "%s: cannot create a temporary file in %s to hold %s until it is complete: %s\n", o->cmd,
                dg_shown(dir), hbg_outfile_held(o), strerror(e));
        return -1;
    }
    o->spool = true;
    o->spool_dir = dir;
    return 0;
}

/* The complete spool onto its descriptor (standard output, or the one a
 * name such as /dev/stdout stands for). Returns 0, or -1 after saying
 * why. */
static int copy_spool(hbg_outfile *o)
{
    enum { CAP = 1 << 20 };
    int in = fileno(o->f), e = 0;
    char *buf = malloc(CAP);
    errno = 0; /* a stream whose error flag was set earlier leaves none */
    if (!buf)
        e = ENOMEM;
    else if (fflush(o->f) != 0 || ferror(o->f) || lseek(in, 0, SEEK_SET) != 0 || fflush(stdout) != 0)
        e = errno ? errno : EIO;
    while (!e) {
        ssize_t n = read(in, buf, CAP);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            e = n < 0 ? errno : 0;
            break;
        }
        for (ssize_t k = 0; !e && k < n;) {
            ssize_t w = write(o->spool_fd, buf + k, (size_t)(n - k));
            if (w > 0)
                k += w;
            else if (w < 0 && errno != EINTR)
                e = errno;
        }
    }
    free(buf);
    if (e)
        fprintf(stderr, "%s: cannot write %s: %s\n", o->cmd, hbg_outfile_held(o), strerror(e));
    return e ? -1 : 0;
}

static bool g_std_closed[3];

void hbg_outfile_std_closed(int fd)
{
    if (fd >= 0 && fd <= 2)
        g_std_closed[fd] = true;
}

/* The descriptor that a name of this process's own descriptors stands for
 * ("/dev/fd/N", "/proc/self/fd/N", "/proc/PID/fd/N" of this PID,
 * "/dev/stdout"), else -1. */
static int fd_of_name(const char *s)
{
    static const char *const std[] = {"/dev/stdin", "/dev/stdout", "/dev/stderr"};
    for (int k = 0; k < 3; k++)
        if (!strcmp(s, std[k]))
            return k;
    char self[64];
    snprintf(self, sizeof self, "/proc/%ld/fd/", (long)getpid());
    static const char *const dirs[] = {"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"};
    const char *n = NULL;
    for (int k = 0; k < 3 && !n; k++)
        if (!strncmp(s, dirs[k], strlen(dirs[k])))
            n = s + strlen(dirs[k]);
    if (!n && !strncmp(s, self, strlen(self)))
        n = s + strlen(self);
    /* a thread of this process: /proc/thread-self/fd as realpath gives it */
    snprintf(self, sizeof self, "/proc/%ld/task/", (long)getpid());
    size_t tl = strlen(self), td = strspn(s + (strncmp(s, self, tl) ? 0 : tl), "0123456789");
    if (!n && !strncmp(s, self, tl) && td && !strncmp(s + tl + td, "/fd/", 4))
        n = s + tl + td + 4;
    if (!n || !*n || strspn(n, "0123456789") != strlen(n) || strlen(n) > 9)
        return -1;
    return atoi(n);
}

/* fd_of_name of path with its folder resolved ("/dev/../dev/fd/1", "fd/1"
 * in /dev, a link to /dev/fd as the folder): the last part, a descriptor's
 * own link, is not followed, since it leads to the file the descriptor is
 * open on. */
static int fd_of_name_in_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    char dir[PATH_MAX], full[PATH_MAX];
    if (slash == path ||
        snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".") >= (int)sizeof dir)
        return -1;
    char *real = realpath(dir, NULL);
    int w = real ? snprintf(full, sizeof full, "%s/%s", real, slash ? slash + 1 : path) : -1;
    free(real);
    return w < 0 || w >= (int)sizeof full ? -1 : fd_of_name(full);
}

/* The descriptor that path names, itself or through symbolic links (a
 * link to /dev/stdout), else -1. Read as text, link by link: with the
 * descriptor closed the name leads nowhere, and taken for a file that is
 * not there yet, its temporary was made in the link's folder (/dev) and
 * renamed over the link. */
static int fd_named(const char *path)
{
    char cur[PATH_MAX], next[PATH_MAX], link[PATH_MAX];
    if (snprintf(cur, sizeof cur, "%s", path) >= (int)sizeof cur)
        return -1;
    for (int hop = 0; hop < 40; hop++) {
        int fd = fd_of_name(cur);
        if (fd >= 0 || (fd = fd_of_name_in_dir(cur)) >= 0)
            return fd;
        ssize_t n = readlink(cur, link, sizeof link - 1);
        if (n < 0)
            return -1;
        link[n] = 0;
        const char *slash = strrchr(cur, '/');
        int w = link[0] == '/' || !slash ? snprintf(next, sizeof next, "%s", link)
                                         : snprintf(next, sizeof next, "%.*s/%s", (int)(slash - cur), cur, link);
        if (w < 0 || w >= (int)sizeof next)
            return -1;
        memcpy(cur, next, (size_t)w + 1);
    }
    return -1;
}

int hbg_outfile_fd_named(const char *path)
{
    return strcmp(path, "-") ? fd_named(path) : -1;
}

bool hbg_outfile_is_stdout(const char *path)
{
    if (!strcmp(path, "-"))
        return true;
    int fd = fd_named(path);
    if (fd == STDOUT_FILENO)
        return true;
    /* another descriptor on what fd 1 is on (3>&1, or the file stdout
     * is redirected to, opened again): the plot would land among the
     * results as surely as through /dev/stdout */
    struct stat a, b;
    return fd >= 0 && !g_std_closed[STDOUT_FILENO] && !fstat(fd, &a) && !fstat(STDOUT_FILENO, &b) &&
           a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* Why descriptor fd cannot take an output, into why; false when it can. */
static bool fd_unwritable(int fd, char *why, size_t cap)
{
    static const char *const std[] = {"standard input", "standard output", "standard error"};
    int fl = fcntl(fd, F_GETFL);
    if (fd <= 2 && g_std_closed[fd])
        snprintf(why, cap, "%s is closed", std[fd]);
    else if (fl < 0)
        snprintf(why, cap, "descriptor %d is not open", fd);
    else if ((fl & O_ACCMODE) == O_RDONLY)
        snprintf(why, cap, "descriptor %d is open for reading only", fd);
    else
        return false;
    return true;
}

/* An output named for descriptor fd: written through it, in place (a
 * temporary beside it, renamed, would replace the name's link, or the
 * file it is open on, with a file of its own). As standard output ("-"),
 * it gets the output only once complete, held in a spool until then: a
 * pipe's reader, or the file the descriptor is open on, never takes half
 * an output, or an empty one, for the result; a terminal or /dev/null
 * takes it as it is written. Returns 0, or -1 after saying why. */
static int open_fd(hbg_outfile *o, int fd)
{
    char why[64];
    struct stat sb;
    if (fd_unwritable(fd, why, sizeof why)) {
        fprintf(stderr, "%s: cannot write %s: %s\n", o->cmd, dg_shown(o->path), why);
        return -1;
    }
    if (fstat(fd, &sb) != 0 || !S_ISCHR(sb.st_mode)) {
        o->spool_fd = fd;
        return open_spool(o);
    }
    int d = dup(fd);
    if (d < 0 || !(o->f = fdopen(d, "w"))) {
        int e = errno;
        if (d >= 0)
            close(d);
        fprintf(stderr, "%s: cannot write %s: %s\n", o->cmd, dg_shown(o->path), strerror(e));
        return -1;
    }
    return 0;
}

int hbg_outfile_open(hbg_outfile *o, const char *cmd, const char *path)
{
    *o = (hbg_outfile){NULL, path, NULL, NULL, false, NULL, cmd, STDOUT_FILENO};
    struct stat sb, lsb;
    if (strcmp(path, "-") == 0) {
        /* a terminal or /dev/null takes the output as it is written: no
         * reader there takes a part of it for the whole */
        if (fstat(STDOUT_FILENO, &sb) == 0 && S_ISCHR(sb.st_mode)) {
            o->f = stdout;
            return 0;
        }
        return open_spool(o);
    }
    int fd = fd_named(path);
    if (fd >= 0)
        return open_fd(o, fd);
    bool exists = stat(path, &sb) == 0;
    /* A link to a file is written through, as a shell's `>` would: the
     * temporary goes beside the target and is renamed onto it (renamed
     * onto the link, it replaced the link with a file of its own). A
     * link that leads nowhere is left to be replaced. */
    if (exists && S_ISREG(sb.st_mode) && lstat(path, &lsb) == 0 && S_ISLNK(lsb.st_mode))
        o->dest = realpath(path, NULL);
    if (exists && !S_ISREG(sb.st_mode)) {
        o->f = fopen(path, "w");
        if (!o->f) {
            fprintf(stderr, "%s: cannot write %s: %s\n", cmd, dg_shown(path), strerror(errno));
            return -1;
        }
        return 0;
    }
    if (asprintf(&o->tmp, "%s.tmp%ld", o->dest ? o->dest : path, (long)getpid()) < 0) {
        o->tmp = NULL;
        free(o->dest);
        o->dest = NULL;
        fprintf(stderr, "%s: cannot create %s: out of memory\n", cmd, dg_shown(path));
        return -1;
    }
    guard_tmp(o->tmp); /* before the file exists: no moment it is unguarded */
    o->f = fopen(o->tmp, "w");
    if (!o->f) {
        /* the file asked for: the temporary beside it is ours */
        int e = errno;
        unguard_tmp(o->tmp);
        fprintf(stderr, "%s: cannot create %s: %s\n", cmd, dg_shown(path), strerror(e));
        free(o->tmp);
        free(o->dest);
        o->tmp = o->dest = NULL;
        return -1;
    }
    /* the file replaced keeps its permissions (a plot made readable to a
     * web server stays so); best effort, as cp's are */
    if (exists)
        (void)fchmod(fileno(o->f), sb.st_mode & 07777);
    return 0;
}

int hbg_outfile_probe(const char *cmd, const char *path)
{
    struct stat sb;
    if (strcmp(path, "-") == 0) {
        /* standard output held in a temporary: one that cannot be made
         * in $TMPDIR fails now too, as a file's folder does */
        hbg_outfile o;
        if (hbg_outfile_open(&o, cmd, path))
            return -1;
        if (o.spool)
            hbg_outfile_close(&o, false); /* closes the unlinked temporary */
        return 0;
    }
    if (fd_named(path) >= 0) {
        /* refused as the open would be, or its spool made and closed */
        hbg_outfile o;
        if (hbg_outfile_open(&o, cmd, path))
            return -1;
        hbg_outfile_close(&o, false);
        return 0;
    }
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "%s: cannot write %s: %s\n", cmd, dg_shown(path), strerror(EISDIR));
        return -1;
    }
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        if (access(path, W_OK) == 0)
            return 0;
        fprintf(stderr, "%s: cannot write %s: %s\n", cmd, dg_shown(path), strerror(errno));
        return -1;
    }
    hbg_outfile o;
    if (hbg_outfile_open(&o, cmd, path))
        return -1;
    hbg_outfile_close(&o, false); /* removes the temporary */
    return 0;
}

int hbg_outfile_close(hbg_outfile *o, bool ok)
{
    int e = 0;
    if (o->spool) {
        /* a failed output never reaches standard output */
        int rc = ok ? copy_spool(o) : -1;
        fclose(o->f);
        o->f = NULL;
        o->spool = false;
        return rc;
    }
    if (o->f == stdout) {
        /* a failed output's caller has said why already */
        if (!ok) {
            fflush(stdout);
            return -1;
        }
        if (hbg_stdout_flush(o->cmd) != 0)
            return -1;
    } else if (o->f) {
        if (ferror(o->f))
            e = EIO;
        if (fclose(o->f) != 0 && !e)
            e = errno ? errno : EIO;
    }
    o->f = NULL;
    int rc = 0;
    if (ok && e) {
        fprintf(stderr, "%s: cannot write %s: %s\n", o->cmd, dg_shown(o->path), strerror(e));
        rc = -1;
    } else if (ok && o->tmp && rename(o->tmp, o->dest ? o->dest : o->path) != 0) {
        fprintf(stderr, "%s: cannot rename %s to %s: %s\n", o->cmd, dg_shown(o->tmp),
                dg_shown(o->dest ? o->dest : o->path), strerror(errno));
        rc = -1;
    }
    if (o->tmp && (!ok || rc))
        remove(o->tmp);
    unguard_tmp(o->tmp);
    free(o->tmp);
    free(o->dest);
    o->tmp = o->dest = NULL;
    return ok ? rc : -1;
}

const char *hbg_arg_shown(const char *path)
{
    return strcmp(path, "-") ? dg_shown(path) : "standard input";
}

int hbg_stdout_flush(const char *cmd)
{
    static bool reported;
    errno = 0;
    if (!reported && fflush(stdout) == 0 && !ferror(stdout))
        return 0;
    if (!reported)
        fprintf(stderr, "%s: cannot write standard output: %s\n", cmd, strerror(errno ? errno : EIO));
    reported = true;
    return -1;
}

/* stat of a path, "-" meaning the descriptor fd. */
static int stat_arg(const char *path, int fd, struct stat *sb)
{
    return strcmp(path, "-") == 0 ? fstat(fd, sb) : stat(path, sb);
}

int hbg_outfile_not_input(const char *cmd, const char *out, const char *const *in, size_t n)
{
    struct stat o, i;
    /* an output that does not exist yet is no input; nor is a device
     * (/dev/null, a terminal) that an input may share */
    if (stat_arg(out, STDOUT_FILENO, &o) != 0 || !(S_ISREG(o.st_mode) || S_ISFIFO(o.st_mode)))
        return 0;
    for (size_t k = 0; k < n; k++)
        if (stat_arg(in[k], STDIN_FILENO, &i) == 0 && i.st_dev == o.st_dev && i.st_ino == o.st_ino) {
            fprintf(stderr, "%s: refusing to write %s: it is the input %s\n", cmd,
                    strcmp(out, "-") ? dg_shown(out) : "standard output",
                    hbg_arg_shown(in[k]));
            return -1;
        }
    return 0;
}

bool hbg_same_file_pair(const char *const *paths, size_t n, size_t *a, size_t *b)
{
    struct stat *sb = calloc(n ? n : 1, sizeof *sb);
    bool *ok = calloc(n ? n : 1, sizeof *ok), same = false;
    for (size_t j = 0; sb && ok && j < n && !same; j++) {
        ok[j] = (strcmp(paths[j], "-") ? stat(paths[j], &sb[j]) : fstat(STDIN_FILENO, &sb[j])) == 0;
        for (size_t i = 0; i < j && ok[j] && !same; i++)
            if (ok[i] && sb[i].st_dev == sb[j].st_dev && sb[i].st_ino == sb[j].st_ino)
                *a = i, *b = j, same = true;
    }
    free(sb);
    free(ok);
    return same;
}

int hbg_stdout_done(const char *cmd, int werr)
{
    if (!werr)
        return hbg_stdout_flush(cmd);
    fflush(stdout);
    fprintf(stderr, "%s: cannot write standard output: %s\n", cmd, strerror(werr));
    clearerr(stdout);
    return -1;
}
