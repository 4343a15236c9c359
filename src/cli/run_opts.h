/* `hbg run`'s command line: options, the environment's switches and the
 * case's own parameters, resolved into one run_opts before anything runs.
 * Apart from the command so that it can be fuzzed on its own. */
#ifndef HBG_CLI_RUN_OPTS_H
#define HBG_CLI_RUN_OPTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "case.h"
#include "hbg/trace.h"

#define MAX_RANKS 8
#define MAX_ROUNDS 100000

typedef struct run_opts {
    const hbg_case *c;
    uint32_t rounds, ranks, tile_unit;
    bool tile_given;            /* --tile-unit was given (0 included: refused by the case's range) */
    const char *log_path, *out_dir, *mode;
    bool skip_golden, keep_defs, no_journal, list;
    bool breakdown, records, skip_device;
    hbg_level level;
    uint32_t records_per_thread;
    uint32_t peer_timeout_s, time_limit_s;
    uint64_t device_memory;     /* the simulated device's memory, bytes (0: no limit) */
    uint64_t device_steps;      /* its bound on one run's steps (0: HBG_SIM_MAX_STEPS) */
    hbg_case_env env;          /* the case's parameters */
    hbg_case_pools pools;      /* sized from them */
    char stamp_cmd[2048];
} run_opts;

/* What run_opts_parse found: go on and run, or list the cases (o->c
 * alone when a case was named, every case when o->c is NULL). Any other
 * value is the command's exit status (0 after --help, 2 after a usage
 * error said on stderr). */
#define RUN_OPTS_GO 1
#define RUN_OPTS_LIST (-1)

/* Parses argv (argv[0] is `run`, as the command gets it) into o. May be
 * called again on a new command line: getopt starts afresh each time. */
int run_opts_parse(int argc, char **argv, run_opts *o);

/* The command part of the stamp hbg run writes for argv (argv[0] is
 * `run`): every long option spelled in full, a repeated one once, the
 * artifact paths left out ("hbg run qwen --mode numbers --rounds 6").
 * hbg ab expects its runs' stamps so. */
void run_opts_stamp_command(int argc, char **argv, char *out, size_t cap);
/* The full name of the long option `word` names ("--log-l=x" names
 * "log-level"), as hbg run's getopt resolves it; NULL for none. */
const char *run_opts_long_name(const char *word);

#endif
