/* hbg — command dispatch. Results go to stdout, diagnostics to stderr. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

typedef struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"run", hbg_cmd_run, "bind (and run) a workload on the simulated device, N rounds"},
    {"phases", hbg_cmd_phases, "per-phase statistics of the bind passes in a log"},
    {"timeline", hbg_cmd_timeline, "write a Perfetto / Chrome trace of a log (and its records)"},
    {"compare", hbg_cmd_compare, "an A/B verdict between two arms' logs, repetition by repetition"},
    {"ab", hbg_cmd_ab, "build two revisions, run them interleaved, and compare"},
    {"fit", hbg_cmd_fit, "a cost model of the warm control plane over the passes of many logs"},
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

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *name = argv[1];
    if (!strcmp(name, "help") || !strcmp(name, "--help") || !strcmp(name, "-h")) {
        if (argc > 2 && strcmp(name, "help") == 0) {
            const command *c = find(argv[2]);
            if (!c) {
                fprintf(stderr, "hbg: unknown command '%s' (see `hbg help`)\n", argv[2]);
                return 2;
            }
            char *hargv[] = {argv[2], "--help", NULL};
            return c->fn(2, hargv);
        }
        usage(stdout);
        return 0;
    }
    if (!strcmp(name, "version") || !strcmp(name, "--version")) {
        printf("hbg %s\n", hbg_build_commit());
        return 0;
    }
    const command *c = find(name);
    if (!c) {
        fprintf(stderr, "hbg: unknown command '%s' (see `hbg help`)\n", name);
        return 2;
    }
    return c->fn(argc - 1, argv + 1);
}
