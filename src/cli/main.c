/* hbg — command dispatch. Results go to stdout, diagnostics to stderr. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cli/cli.h"
#include "tools/diag.h"
#include "cli/outfile.h"
#include "cli/stopsig.h"

typedef struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
    int write_failed;       /* the command's exit status for a failed write */
} command;

static const command commands[] = {
    {"run", hbg_cmd_run, "bind (and run) a workload on the simulated device, N rounds", 1},
    {"phases", hbg_cmd_phases, "per-phase statistics of the bind passes in a log", 2},
    {"spans", hbg_cmd_spans, "per-callable, per-round and call-tree views of a log's spans", 2},
    {"timeline", hbg_cmd_timeline, "write a Perfetto / Chrome trace of a log (and its records)", 2},
    {"compare", hbg_cmd_compare, "an A/B verdict between two arms' logs, repetition by repetition", 2},
    {"ab", hbg_cmd_ab, "build two revisions, run them interleaved, and compare", 2},
    {"fit", hbg_cmd_fit, "a cost model of the warm control plane over the passes of many logs", 2},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
    fprintf(f, "usage: hbg COMMAND [ARGS...]\n\n"
               "hbg builds accelerator task graphs on the host, binds them to a device,\n"
               "and measures that bind stage phase by phase.\n\ncommands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "  %-10s %s\n  %-10s %s\n\n", "help", "this text, or `hbg help CMD` for one command",
            "version", "the commit this binary was built from");
    fprintf(f, "Run `hbg CMD --help` for a command's options. Documentation: docs/.\n");
}

static const command *find(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

/* A closed standard descriptor would be taken by the next file opened (a
 * log opened on fd 1 would receive the results). Each is held by /dev/null
 * opened the wrong way round, so any use fails with EBADF and is reported
 * like any other failed write or read, never silently lost or misplaced. */
static void hold_std_fds(void)
{
    for (int fd = 0; fd <= 2; fd++)
        if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
            int h = open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
            if (h >= 0 && h != fd) {
                dup2(h, fd);
                close(h);
            }
            hbg_outfile_std_closed(fd);
        }
}

/* Results that never reached stdout are a failure of the command: rc, or
 * the command's status for a failed write when that is higher. */
static int check_stdout(int rc, const char *cmd, int write_failed)
{
    if (hbg_stdout_flush(cmd) == 0)
        return rc;
    return rc > write_failed ? rc : write_failed;
}

/* The stack's mapping grown now, while there is room for it. Under an
 * address-space limit (`ulimit -v`) the heap can take all that is left,
 * and the stack's next page then has nowhere to go: the process dies of
 * SIGSEGV in whatever call needs it (the lazy binder's frame inside
 * jansson was where it was seen), where it should have said "out of
 * memory". The kernel never shrinks a stack's mapping, and only the page
 * touched here is made resident. Every command measured needs under 40
 * KiB beyond the 132 KiB the kernel starts it with. */
#define STACK_RESERVE ((size_t)512 << 10)

/* A quarter of the stack's limit at most (`ulimit -s`): a limit of 400
 * KiB must still leave room for what the kernel starts the process with
 * and what the commands use. */
static size_t stack_reserve(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur / 4 < STACK_RESERVE)
        return (size_t)rl.rlim_cur / 4;
    return STACK_RESERVE;
}

static __attribute__((noinline)) void grow_stack(size_t n)
{
    char pad[n]; /* the one variable-length array: its size is the point */
    volatile char *low = pad; /* the frame's lowest address */
    *low = 0;
}

int main(int argc, char **argv)
{
    grow_stack(stack_reserve());
    hold_std_fds();
    /* Past a file size limit a write then fails with EFBIG, which is
     * reported with the file's name, instead of killing the process. */
    stopsig_ignore_xfsz();
    /* hbg ab and hbg run wait for the children they start. Started with
     * SIGCHLD ignored (a parent's setting, which exec keeps), the kernel
     * would reap those itself, their statuses lost (waitpid: ECHILD), and
     * send no SIGCHLD, which hbg ab's wait for a child takes as the sign
     * to look again: it hung, or took a git that ran well for one that
     * failed; hbg run waited for ranks that were gone. The default action
     * discards it just the same. */
    signal(SIGCHLD, SIG_DFL);
    /* Text for stdout (help, tables, reports) is written whole when the
     * command ends, where a failed write keeps its errno for the message:
     * with stdio's 4 KiB a help text past it met a full disk in mid-text,
     * and by the final flush the cause was lost ("Input/output error" for
     * "No space left on device"). Bigger outputs have writers that keep
     * the error themselves (outfile.h). A terminal stays line-buffered. */
    static char outbuf[64 << 10]; /* glibc takes no size without a buffer */
    if (!isatty(STDOUT_FILENO))
        setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *name = argv[1];
    bool is_help = !strcmp(name, "help") || !strcmp(name, "--help") || !strcmp(name, "-h");
    bool is_version = !strcmp(name, "version") || !strcmp(name, "--version");
    if (is_help || is_version) {
        /* `hbg help CMD` is `hbg CMD --help`; help and version take no
         * options of their own, so --help/-h after either is itself */
        const char *topic = argc > 2 ? argv[2] : NULL;
        bool self = topic && (!strcmp(topic, "--help") || !strcmp(topic, "-h"));
        bool about = is_help && topic && !self; /* hbg help CMD */
        int used = 2 + (self || about);
        if (argc > used) {
            fprintf(stderr, "hbg: unexpected argument '%s' after `%s%s%s` (see `hbg help`)\n",
                    dg_shown(argv[used]), name, about ? " " : "", about ? dg_shown(topic) : "");
            return 2;
        }
        if (about && strcmp(topic, "help") && strcmp(topic, "version")) {
            const command *c = find(topic);
            if (!c) {
                fprintf(stderr, "hbg: unknown command '%s' (see `hbg help`)\n", dg_shown(topic));
                return 2;
            }
            /* as `hbg CMD --help` ends: its prefix, its status for a
             * failed write (hbg run's is 1) */
            char *hargv[] = {argv[2], "--help", NULL}, prefix[32];
            snprintf(prefix, sizeof prefix, "hbg %s", c->name);
            return check_stdout(c->fn(2, hargv), prefix, c->write_failed);
        }
        if (is_version && !self) {
            printf("hbg %s\n", hbg_build_commit());
            return check_stdout(0, "hbg", 2);
        }
        if (is_version || (topic && !strcmp(topic, "version")))
            printf("usage: hbg version\n\nPrints the commit this binary was built from: `hbg COMMIT`, with\n"
                   "`-dirty` when the tree it was built from had changes.\n");
        else
            usage(stdout);
        return check_stdout(0, "hbg", 2);
    }
    const command *c = find(name);
    if (!c) {
        fprintf(stderr, "hbg: unknown command '%s' (see `hbg help`)\n", dg_shown(name));
        return 2;
    }
    char prefix[32];
    snprintf(prefix, sizeof prefix, "hbg %s", c->name);
    return check_stdout(c->fn(argc - 1, argv + 1), prefix, c->write_failed);
}
