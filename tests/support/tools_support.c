#include "support/tools_support.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

const char *ts_fixture(const char *name)
{
    static char buf[4096];
    const char *src = getenv("HBG_SOURCE_DIR");
    snprintf(buf, sizeof buf, "%s/tests/data/logs/%s", src ? src : ".", name);
    return buf;
}

char *ts_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap + 1);
    size_t k;
    while (b && (k = fread(b + n, 1, cap - n, f)) > 0) {
        n += k;
        if (n == cap) {
            char *nb = realloc(b, cap * 2 + 1);
            if (!nb) {
                free(b);
                b = NULL;
                break;
            }
            b = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (!b)
        return NULL;
    b[n] = 0;
    if (len)
        *len = n;
    return b;
}

char *ts_temp_file(const void *data, size_t len, const char *suffix)
{
    const char *bin = getenv("HBG_BINARY_DIR");
    char *path = NULL;
    if (asprintf(&path, "%s/tools-test-XXXXXX%s", bin ? bin : "/tmp", suffix) < 0)
        return NULL;
    int fd = mkstemps(path, (int)strlen(suffix));
    if (fd < 0) {
        free(path);
        return NULL;
    }
    const char *p = data;
    while (len) {
        ssize_t w = write(fd, p, len);
        if (w <= 0)
            break;
        p += w;
        len -= (size_t)w;
    }
    close(fd);
    return path;
}

int ts_run_cli(const char *const *args, char **out, char **err)
{
    return ts_run_cli_in(args, NULL, out, err);
}

/* Waits for pid; past limit_s seconds (0: none) it is sent SIGTERM, and
 * SIGKILL 5 s later, and *late is set. */
static void wait_child(pid_t pid, int *st, unsigned limit_s, bool *late)
{
    if (!limit_s) {
        while (pid > 0 && waitpid(pid, st, 0) < 0 && errno == EINTR)
            ;
        return;
    }
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        pid_t got = waitpid(pid, st, WNOHANG);
        if (got == pid || (got < 0 && errno != EINTR))
            return;
        clock_gettime(CLOCK_MONOTONIC, &now);
        time_t s = now.tv_sec - t0.tv_sec;
        if (s >= (time_t)limit_s && !*late) {
            *late = true;
            kill(pid, SIGTERM);
        }
        if (s >= (time_t)limit_s + 5)
            kill(pid, SIGKILL);
        nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
    }
}

static int exec_as(const char *dir, const char *const *argv, const char *in, char **out, size_t *outlen, char **err,
                   bool ignore_chld, unsigned limit_s)
{
    char *po = ts_temp_file("", 0, ".out");
    char *pe = ts_temp_file("", 0, ".err");
    if (!po || !pe) {
        free(po);
        free(pe);
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        if (ignore_chld)
            signal(SIGCHLD, SIG_IGN);
        int fo = open(po, O_WRONLY | O_TRUNC), fe = open(pe, O_WRONLY | O_TRUNC);
        dup2(fo, 1);
        dup2(fe, 2);
        if (in) {
            int fi = open(in, O_RDONLY);
            if (fi < 0)
                _exit(126);
            dup2(fi, 0);
        }
        if (dir && chdir(dir) != 0)
            _exit(126);
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    int st = 0;
    bool late = false;
    wait_child(pid, &st, limit_s, &late);
    char *o = ts_slurp(po, outlen), *e = ts_slurp(pe, NULL);
    unlink(po);
    unlink(pe);
    free(po);
    free(pe);
    if (out)
        *out = o;
    else
        free(o);
    if (err)
        *err = e;
    else
        free(e);
    if (late)
        return -2;
    return pid > 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int ts_exec(const char *dir, const char *const *argv, const char *in, char **out, size_t *outlen, char **err)
{
    return exec_as(dir, argv, in, out, outlen, err, false, 0);
}

int ts_exec_limit(const char *dir, const char *const *argv, const char *in, char **out, char **err, unsigned limit_s)
{
    return exec_as(dir, argv, in, out, NULL, err, false, limit_s);
}

int ts_exec_chld_ignored(const char *dir, const char *const *argv, const char *in, char **out, char **err,
                         unsigned limit_s)
{
    return exec_as(dir, argv, in, out, NULL, err, true, limit_s);
}

int ts_exec_args(const char *const *head, size_t nhead, const char *const *args, const char *in, char **out,
                 char **err)
{
    size_t n = 0;
    while (args[n])
        n++;
    const char **av = calloc(nhead + n + 1, sizeof *av);
    if (!av)
        return -1;
    memcpy(av, head, nhead * sizeof *av);
    memcpy(av + nhead, args, n * sizeof *av);
    int rc = ts_exec(NULL, av, in, out, NULL, err);
    free(av);
    return rc;
}

int ts_run_cli_in(const char *const *args, const char *in, char **out, char **err)
{
    const char *cli = getenv("HBG_CLI");
    if (!cli)
        return -1;
    return ts_exec_args(&cli, 1, args, in, out, err);
}

int ts_contains(const char *hay, const char *needle)
{
    return hay && needle && strstr(hay, needle) != NULL;
}

char *ts_tempdir_in(const char *parent, const char *tag)
{
    if (!parent)
        parent = getenv("TMPDIR");
    if (!parent || !*parent)
        parent = "/tmp";
    size_t n = strlen(parent) + strlen(tag) + 32;
    char *dir = malloc(n);
    assert_non_null(dir);
    snprintf(dir, n, "%s/hbg-%s-XXXXXX", parent, tag);
    assert_non_null(mkdtemp(dir));
    return dir;
}

char *ts_tempdir(const char *tag)
{
    return ts_tempdir_in(NULL, tag);
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

void ts_rmtree(char *dir)
{
    if (dir)
        assert_int_equal(nftw(dir, rm_one, 32, FTW_DEPTH | FTW_PHYS), 0);
    free(dir);
}
