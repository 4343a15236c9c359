#include "support/ab_support.h"
#include "support/tools_support.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

char *ab_sandbox(const char *tag)
{
    char name[64];
    snprintf(name, sizeof name, "ab-%s", tag);
    char *root = ts_tempdir(name);
    char *cache = NULL;
    assert_true(asprintf(&cache, "%s/cache", root) > 0);
    setenv("XDG_CACHE_HOME", cache, 1);
    free(cache);
    /* the machine's git settings (signing, hooks paths, default branch)
     * must not change what the tests see */
    setenv("GIT_CONFIG_GLOBAL", "/dev/null", 1);
    setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
    return root;
}

void ab_sandbox_free(char *root)
{
    ts_rmtree(root);
}

static char *slurp_fd(int fd, size_t *len)
{
    size_t n = 0, cap = 4096;
    char *b = malloc(cap);
    ssize_t k;
    lseek(fd, 0, SEEK_SET);
    while (b && (k = read(fd, b + n, cap - n - 1)) > 0) {
        n += (size_t)k;
        if (cap - n < 2) {
            char *nb = realloc(b, cap * 2);
            if (!nb)
                break;
            b = nb;
            cap *= 2;
        }
    }
    if (b)
        b[n] = 0;
    if (len)
        *len = n;
    return b;
}

/* The commands of a test repository read no terminal: stdin is /dev/null. */
static int exec_len(const char *dir, const char *const *argv, char **out, size_t *outlen, char **err)
{
    return ts_exec(dir, argv, "/dev/null", out, outlen, err);
}

int ab_exec(const char *dir, const char *const *argv, char **out, char **err)
{
    return exec_len(dir, argv, out, NULL, err);
}

int ab_hbg(const char *dir, const char *const *args, char **out, char **err)
{
    const char *cli = getenv("HBG_CLI");
    assert_non_null(cli);
    size_t n = 0;
    while (args[n])
        n++;
    const char **av = calloc(n + 2, sizeof *av);
    assert_non_null(av);
    av[0] = cli;
    memcpy(av + 1, args, n * sizeof *av);
    int rc = ab_exec(dir, av, out, err);
    free(av);
    return rc;
}

static int git_argv(const char *repo, const char *const *args, char **out, char **err)
{
    const char *av[32] = {"git", "-C", repo, "-c", "user.name=hbg test", "-c", "user.email=test@hbg.invalid",
                          "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"};
    size_t k = 11;
    for (size_t i = 0; args[i]; i++) {
        assert_true(k < 31);
        av[k++] = args[i];
    }
    av[k] = NULL;
    return ab_exec(NULL, av, out, err);
}

void ab_git(const char *repo, const char *const *args)
{
    char *err = NULL;
    int rc = git_argv(repo, args, NULL, &err);
    if (rc != 0)
        fail_msg("git %s in %s failed (%d): %s", args[0], repo, rc, err ? err : "");
    free(err);
}

char *ab_git_line(const char *repo, const char *const *args)
{
    char *out = NULL;
    assert_int_equal(git_argv(repo, args, &out, NULL), 0);
    out[strcspn(out, "\n")] = 0;
    return out;
}

void ab_write(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        fail_msg("cannot write %s: %s", path, strerror(errno));
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

char *ab_read(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return NULL;
    char *s = slurp_fd(fd, NULL);
    close(fd);
    return s;
}

int ab_lines(const char *path)
{
    char *s = ab_read(path);
    int n = 0;
    for (const char *p = s; p && *p; p++)
        n += *p == '\n';
    free(s);
    return n;
}

int ab_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

char *ab_measure_script(unsigned host_orch_ns)
{
    /* The line shapes of tests/data/logs/ours-1rank-4pass.log: ten bind
     * segments and a host-orch line per pass, grouped by pid and inv. The
     * variation is a function of the pass, so every run writes the same. */
    char *s = NULL;
    int n = asprintf(&s,
                     "#!/bin/sh\n"
                     "# six bind passes in hbg's log grammar\n"
                     "HO=%u\n"
                     "pass=1\n"
                     "while [ $pass -le 6 ]; do\n"
                     "  v=$(( (pass * 37) %% 11 ))\n"
                     "  t=$(( 5000000000000 + pass * 1000000 ))\n"
                     "  p=\"[mono_ns=$t][T0x7f00aa000640][TIMING] bind_trace_end: [bind_trace.c:212]\"\n"
                     "  for seg in args:20000 arena_build:40 static_arena:30 gm_heap:2 shared_mem:6 "
                     "runtime_init:9 host_orch:$HO graph_upload:500 host_view_close:30000 arena_h2d:1500; do\n"
                     "    echo \"$p bind phase=${seg%%%%:*} start_ns=$t dur_ns=$(( ${seg#*:} + v )) pid=4242 "
                     "inv=$pass\"\n"
                     "  done\n"
                     "  echo \"$p host-orch phase=submit_task total_ns=500 count=5 detail_sum=0 dropped=0 "
                     "pid=4242 inv=$pass\"\n"
                     "  pass=$((pass + 1))\n"
                     "done\n",
                     host_orch_ns);
    assert_true(n > 0);
    return s;
}

static void commit_script(const char *repo, unsigned ho, const char *msg)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/measure.sh", repo);
    char *script = ab_measure_script(ho);
    ab_write(path, script);
    free(script);
    ab_git(repo, (const char *const[]){"add", "-A", NULL});
    ab_git(repo, (const char *const[]){"commit", "-q", "-m", msg, NULL});
}

char *ab_two_commit_repo(const char *root, const char *name, char c1[8], char c2[8])
{
    char *repo = NULL;
    assert_true(asprintf(&repo, "%s/%s", root, name) > 0);
    assert_int_equal(mkdir(repo, 0755), 0);
    ab_git(repo, (const char *const[]){"init", "-q", NULL});
    commit_script(repo, 90000, "measure: host_orch 90 us");
    char *s = ab_git_line(repo, (const char *const[]){"rev-parse", "--short=7", "HEAD", NULL});
    snprintf(c1, 8, "%s", s);
    free(s);
    commit_script(repo, 99000, "measure: host_orch 10 % longer");
    s = ab_git_line(repo, (const char *const[]){"rev-parse", "--short=7", "HEAD", NULL});
    snprintf(c2, 8, "%s", s);
    free(s);
    return repo;
}

static int mkparents(char *path)
{
    for (char *s = path + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = 0;
        int rc = mkdir(path, 0755) && errno != EEXIST;
        *s = '/';
        if (rc)
            return -1;
    }
    return 0;
}

static bool copy_file(const char *src, const char *dst, mode_t mode)
{
    int in = open(src, O_RDONLY), out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, mode & 0777);
    char buf[65536];
    ssize_t n = in >= 0 && out >= 0 ? 0 : -1;
    while (n >= 0 && (n = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, (size_t)n) != n)
            n = -1;
    if (in >= 0)
        close(in);
    if (out >= 0)
        close(out);
    return n == 0;
}

int ab_copy_listed(const char *src, const char *dst)
{
    const char *av[] = {"git", "-C", src, "ls-files", "-co", "--exclude-standard", "-z", NULL};
    char *list = NULL;
    size_t len = 0;
    assert_int_equal(exec_len(NULL, av, &list, &len, NULL), 0);
    int copied = 0;
    for (char *p = list; p < list + len; p += strlen(p) + 1) {
        char s[4096], d[4096];
        struct stat sb;
        snprintf(s, sizeof s, "%s/%s", src, p);
        snprintf(d, sizeof d, "%s/%s", dst, p);
        if (lstat(s, &sb) || !S_ISREG(sb.st_mode))
            continue;
        assert_int_equal(mkparents(d), 0);
        if (!copy_file(s, d, sb.st_mode))
            fail_msg("cannot copy %s to %s", s, d);
        copied++;
    }
    free(list);
    return copied;
}
