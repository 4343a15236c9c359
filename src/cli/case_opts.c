/* A case's own options on the `hbg run` command line (see case_opts.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/case_opts.h"
#include "tools/diag.h"

int case_opts_table(case_opts *co, struct option *table, int n, int cap, int first_id)
{
    memset(co, 0, sizeof *co);
    co->first_id = first_id;
    for (const hbg_case *const *c = hbg_cases(); *c; c++)
        for (const hbg_case_param *p = (*c)->params; p && p->name; p++) {
            bool seen = false;
            for (int k = 0; k < co->nnames && !seen; k++)
                seen = strcmp(co->names[k], p->name) == 0;
            if (seen || co->nnames == CASE_OPTS_MAX || n + 1 >= cap)
                continue;
            table[n++] = (struct option){p->name, required_argument, NULL, first_id + co->nnames};
            co->names[co->nnames++] = p->name;
        }
    table[n] = (struct option){NULL, 0, NULL, 0};
    return n;
}

bool case_opts_take(case_opts *co, int ch, const char *optarg)
{
    int k = ch - co->first_id;
    if (k < 0 || k >= co->nnames)
        return false;
    /* given again: the last value counts, as for every other option */
    for (int g = 0; g < co->ngiven; g++)
        if (co->given_name[g] == co->names[k]) {
            co->given_val[g] = optarg;
            return true;
        }
    if (co->ngiven == CASE_OPTS_MAX)
        return false;
    co->given_name[co->ngiven] = co->names[k];
    co->given_val[co->ngiven++] = optarg;
    return true;
}

static bool parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || !*s || *end || s[0] < '0' || s[0] > '9' || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

int case_opts_apply(const case_opts *co, const hbg_case *c, hbg_case_env *env, hbg_case_pools *pools, FILE *err)
{
    hbg_case_env_init(c, env);
    for (int g = 0; g < co->ngiven; g++) {
        int i = hbg_case_param_index(c, co->given_name[g]);
        if (i < 0) {
            fprintf(err, "hbg run: --%s is not an option of case %s (`hbg run --list` names each case's)\n",
                    co->given_name[g], c->name);
            return 2;
        }
        const hbg_case_param *p = &c->params[i];
        if (!parse_u64(co->given_val[g], p->min, p->max, &env->param[i])) {
            fprintf(err,
                    "hbg run: --%s expects an integer from %" PRIu64 " to %" PRIu64 ", got '%s' (see `hbg run "
                    "--help`)\n",
                    p->name, p->min, p->max, dg_shown(co->given_val[g]));
            return 2;
        }
    }
    char msg[256];
    if (hbg_case_pools_for(c, env, pools, msg, sizeof msg)) {
        fprintf(err, "hbg run: %s: %s\n", c->name, msg[0] ? msg : "the parameters are out of range");
        return 2;
    }
    return 0;
}

void case_opts_list(const hbg_case *c, FILE *f)
{
    for (const hbg_case_param *p = c->params; p && p->name; p++)
        fprintf(f, "         --%-12s N  %s (default %" PRIu64 ", %" PRIu64 "..%" PRIu64 ")\n", p->name, p->help,
                p->def, p->min, p->max);
}
