#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "support/run_support.h"
#include "support/tools_support.h"

int rs_run(const char *env, const char *args, char *out, size_t cap)
{
    const char *cli = getenv("HBG_CLI");
    assert_non_null(cli);
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "env -u HBG_BIND_BREAKDOWN -u HBG_HOST_PHASE_RECORDS -u HBG_SKIP_DEVICE_RUN "
             "-u SIMPLER_SKIP_DEVICE_RUN -u HBG_LOG_LEVEL %s %s %s 2>&1",
             env, cli, args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

char *rs_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot read %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    assert_non_null(b);
    size_t got = fread(b, 1, (size_t)n, f);
    b[got] = 0;
    fclose(f);
    return b;
}

static int count(const char *log, const char *needle)
{
    struct stat st;
    if (stat(log, &st) || st.st_size == 0)
        return 0;
    char *text = rs_slurp(log);
    int n = 0;
    for (char *p = text; (p = strstr(p, needle)); p++)
        n++;
    free(text);
    return n;
}

char *rs_kill_a_rank(const char *const *argv, const char *log, const char *outp, const char *span, int spans)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen(outp, "w", stdout))
            _exit(126);
        dup2(1, 2);
        const char *args[32] = {"hbg"};
        int n = 1;
        for (; argv[n - 1] && n < 29; n++)
            args[n] = argv[n - 1];
        args[n++] = "-o";
        args[n++] = log;
        args[n] = NULL;
        execv(getenv("HBG_CLI"), (char *const *)args);
        _exit(127);
    }
    char needle[128];
    snprintf(needle, sizeof needle, "name=%s ", span);
    pid_t victim = 0;
    for (int i = 0; i < 600 && !victim; i++) {
        usleep(50000);
        if (count(log, needle) < spans)
            continue;
        char cmd[128], line[64];
        snprintf(cmd, sizeof cmd, "pgrep -P %d | sort -n | tail -1", (int)pid);
        FILE *p = popen(cmd, "r");
        if (p && fgets(line, sizeof line, p))
            victim = (pid_t)atoi(line);
        if (p)
            pclose(p);
    }
    assert_true(victim > 0);
    kill(victim, SIGKILL);
    time_t t0 = time(NULL);
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    assert_true(time(NULL) - t0 <= 20);
    assert_true(WIFEXITED(ws));
    assert_int_equal(WEXITSTATUS(ws), 1);
    char *out = rs_slurp(outp);
    char want[96];
    snprintf(want, sizeof want, "rank 1 (pid %d): FAILED: killed by signal 9", (int)victim);
    assert_non_null(strstr(out, want));
    rs_assert_whole_lines(log);
    return out;
}

void rs_assert_whole_lines(const char *log)
{
    char *text = rs_slurp(log);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
        if (strncmp(line, "[stamp] ", 8) != 0 && strncmp(line, "[mono_ns=", 9) != 0)
            fail_msg("torn or foreign line in %s: %.80s", log, line);
    free(text);
}

char *rs_dir;

int rs_dir_setup(void **state)
{
    (void)state;
    rs_dir = ts_tempdir("run");
    return 0;
}

int rs_dir_teardown(void **state)
{
    (void)state;
    ts_rmtree(rs_dir);
    rs_dir = NULL;
    return 0;
}
