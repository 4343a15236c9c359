/* libFuzzer target: `hbg run`'s command line. The input is one argument per
 * line; a line `HBG_NAME=value` or `SIMPLER_NAME=value` sets that variable
 * instead, so the environment's switches are read too. Whatever the bytes,
 * the parser returns an exit status or a complete, in-range set of options:
 * never a crash, an out-of-range value or a read past an argument. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/run_opts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ARGS 64
#define MAX_ENV 8

static void check(const run_opts *o)
{
    const hbg_case *c = o->c;
    if (!c || o->rounds < 1 || o->rounds > MAX_ROUNDS || o->ranks < c->min_ranks || o->ranks > c->max_ranks ||
        o->records_per_thread < 1 || o->records_per_thread > (1u << 24) || o->peer_timeout_s < 1 || !o->out_dir ||
        o->device_steps > (1ull << 62))
        __builtin_trap();
    if (o->tile_unit && (o->tile_unit < c->tile_min || o->tile_unit > c->tile_max))
        __builtin_trap();
    if (strlen(o->stamp_cmd) >= sizeof o->stamp_cmd)
        __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Each argument its own allocation, so ASan sees a read past any one. */
    char *argv[MAX_ARGS + 2] = {strdup("run")};
    char *env[MAX_ENV];
    int argc = 1, nenv = 0;
    size_t at = 0;
    while (at <= size && argc <= MAX_ARGS) {
        const uint8_t *nl = at < size ? memchr(data + at, '\n', size - at) : NULL;
        size_t len = nl ? (size_t)(nl - (data + at)) : size - at;
        char *a = malloc(len + 1);
        if (!a)
            break;
        memcpy(a, data + at, len);
        a[len] = 0;
        char *eq = strchr(a, '=');
        if ((!strncmp(a, "HBG_", 4) || !strncmp(a, "SIMPLER_", 8)) && eq && nenv < MAX_ENV) {
            /* putenv of a string this input owns, not setenv: glibc's
             * setenv never frees what it copied, and over millions of
             * inputs that alone would reach the fuzzer's memory limit. */
            putenv(a);
            env[nenv++] = a;
        } else {
            argv[argc++] = a;
        }
        at += len + 1;
    }
    argv[argc] = NULL;

    run_opts o;
    int rc = run_opts_parse(argc, argv, &o);
    if (rc == RUN_OPTS_GO)
        check(&o);
    else if (rc != RUN_OPTS_LIST && rc != 0 && rc != 2)
        __builtin_trap();

    for (int i = 0; i < argc; i++)
        free(argv[i]);
    for (int i = 0; i < nenv; i++) {
        char *name = strndup(env[i], (size_t)(strchr(env[i], '=') - env[i]));
        if (!name)
            __builtin_trap(); /* the string would stay in the environment */
        unsetenv(name);
        free(name);
    }
    for (int i = 0; i < nenv; i++)
        free(env[i]); /* out of the environment now, every one */
    return 0;
}
