#include "support/fault_support.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "support/tools_support.h"

static void limit(int what, unsigned long v)
{
    struct rlimit rl = {v, v};
    if (v && setrlimit(what, &rl) != 0)
        _exit(125);
}

/* In the child: the descriptors and limits the spec asks for, then exec. */
static void child(const fs_spec *s, const fs_child *c, const char *cli)
{
    int fe = open(c->errp, O_WRONLY | O_TRUNC);
    if (fe < 0 || dup2(fe, 2) < 0)
        _exit(126);
    close(fe);
    if (s->out == FS_OUT_CLOSED) {
        close(1);
    } else {
        int fo = open(s->out == FS_OUT_FULL ? "/dev/full" : c->outp, O_WRONLY | O_TRUNC);
        if (fo < 0 || dup2(fo, 1) < 0)
            _exit(126);
        close(fo);
    }
    if (s->in) {
        int fi = open(s->in, O_RDONLY);
        if (fi < 0 || dup2(fi, 0) < 0)
            _exit(126);
        close(fi);
    }
    if (s->env && putenv((char *)s->env) != 0)
        _exit(126);
    /* only fds 0-2: what the test process holds must not count against a limit */
    for (int fd = 3; fd < 1024; fd++)
        close(fd);
    signal(SIGXFSZ, SIG_IGN); /* a write past RLIMIT_FSIZE then fails with EFBIG */
    if (s->group && (setpgid(0, 0) || signal(SIGINT, SIG_DFL) == SIG_ERR))
        _exit(126);
    limit(RLIMIT_AS, s->as_bytes);
    limit(RLIMIT_NOFILE, s->nofile);
    limit(RLIMIT_FSIZE, s->fsize);
    size_t n = 0;
    while (s->args[n])
        n++;
    const char **av = calloc(n + 2, sizeof *av);
    if (!av)
        _exit(126);
    av[0] = cli;
    memcpy(av + 1, s->args, n * sizeof *av);
    execv(cli, (char *const *)av);
    _exit(127);
}

void fs_start(const fs_spec *spec, fs_child *c)
{
    const char *cli = getenv("HBG_CLI");
    assert_non_null(cli);
    c->outp = ts_temp_file("", 0, ".out");
    c->errp = ts_temp_file("", 0, ".err");
    assert_non_null(c->outp);
    assert_non_null(c->errp);
    c->pid = fork();
    assert_true(c->pid >= 0);
    if (c->pid == 0)
        child(spec, c, cli);
}

int fs_finish(fs_child *c, int limit_s, char **out, char **err)
{
    int sig = 0;
    int rc = fs_finish_any(c, limit_s, &sig, out, err);
    if (sig)
        fail_msg("hbg died of signal %d (%s); stderr: %s", sig, strsignal(sig), err && *err ? *err : "");
    return rc;
}

int fs_finish_any(fs_child *c, int limit_s, int *signo, char **out, char **err)
{
    int st = 0;
    pid_t got = 0;
    struct timespec nap = {0, 10 * 1000 * 1000};
    for (long waited = 0; got == 0; waited += 10) {
        got = waitpid(c->pid, &st, WNOHANG);
        if (got < 0 && errno == EINTR)
            got = 0;
        if (got == 0 && waited >= limit_s * 1000L) {
            kill(c->pid, SIGKILL);
            waitpid(c->pid, &st, 0);
            fail_msg("hbg did not end within %d s", limit_s);
        }
        if (got == 0)
            nanosleep(&nap, NULL);
    }
    char *o = ts_slurp(c->outp, NULL), *e = ts_slurp(c->errp, NULL);
    unlink(c->outp);
    unlink(c->errp);
    free(c->outp);
    free(c->errp);
    *signo = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
    assert_true(WIFEXITED(st) || WIFSIGNALED(st));
    if (out)
        *out = o;
    else
        free(o);
    if (err)
        *err = e;
    else
        free(e);
    return *signo ? -1 : WEXITSTATUS(st);
}

int fs_run(const fs_spec *spec, int limit_s, char **out, char **err)
{
    fs_child c;
    fs_start(spec, &c);
    return fs_finish(&c, limit_s, out, err);
}

char *fs_tempdir(const char *tag)
{
    return ts_tempdir_in(getenv("HBG_BINARY_DIR"), tag);
}

void fs_rmdir(char *dir)
{
    ts_rmtree(dir);
}

char *fs_path(const char *dir, const char *name)
{
    char *p = NULL;
    assert_true(asprintf(&p, "%s/%s", dir, name) > 0);
    return p;
}

void fs_write(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

void fs_expect(const char *hay, const char *needle)
{
    if (!hay || !strstr(hay, needle))
        fail_msg("expected \"%s\" in:\n%s", needle, hay ? hay : "(nothing)");
}

int fs_asan(void)
{
#if defined(__SANITIZE_ADDRESS__)
    return 1;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    return 1;
#else
    return 0;
#endif
#else
    return 0;
#endif
}

bool fs_gone(pid_t pid)
{
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return true;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *rp = strrchr(buf, ')');
    return rp && rp[1] == ' ' && rp[2] == 'Z';
}
