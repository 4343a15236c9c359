/* A case's own options on the `hbg run` command line (`--tasks N` for
 * synth): the option table learns every case's parameter names, and once
 * the case is known the values given are checked against that case's
 * parameters, then its pools are sized from them. */
#ifndef HBG_CLI_CASE_OPTS_H
#define HBG_CLI_CASE_OPTS_H

#include <getopt.h>
#include <stdio.h>

#include "case.h"

#define CASE_OPTS_MAX 32

typedef struct case_opts {
    int first_id;                       /* getopt value of the first name */
    int nnames;
    const char *names[CASE_OPTS_MAX];   /* every case's parameter names, once each */
    int ngiven;
    const char *given_name[CASE_OPTS_MAX];
    const char *given_val[CASE_OPTS_MAX];
} case_opts;

/* Appends one long option per distinct parameter name of all cases to
 * table (which holds n entries and room for cap, the terminator included),
 * with getopt values first_id, first_id + 1, ...; returns the new count. */
int case_opts_table(case_opts *co, struct option *table, int n, int cap, int first_id);

/* Notes that getopt returned ch with optarg; false when ch is not a case
 * option (or too many were given). */
bool case_opts_take(case_opts *co, int ch, const char *optarg);

/* Fills env (hbg_case_env_init, then the values given) and sizes pools.
 * On a bad value or a parameter c does not have, prints one line on err
 * and returns 2; on a cap, prints the case's reason and returns 2. */
int case_opts_apply(const case_opts *co, const hbg_case *c, hbg_case_env *env, hbg_case_pools *pools, FILE *err);

/* "  --tasks N  outer tasks (default 1000, 1..1000000)" lines, for --list. */
void case_opts_list(const hbg_case *c, FILE *f);

#endif
