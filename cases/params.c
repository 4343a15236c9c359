/* A case's own parameters and the pools they size (see case.h). */
#include <string.h>

#include "case.h"

void hbg_case_env_init(const hbg_case *c, hbg_case_env *env)
{
    memset(env, 0, sizeof *env);
    for (int i = 0; c->params && c->params[i].name && i < HBG_CASE_MAX_PARAMS; i++)
        env->param[i] = c->params[i].def;
}

int hbg_case_param_index(const hbg_case *c, const char *name)
{
    for (int i = 0; c->params && c->params[i].name && i < HBG_CASE_MAX_PARAMS; i++)
        if (strcmp(c->params[i].name, name) == 0)
            return i;
    return -1;
}

hbg_status hbg_case_pools_for(const hbg_case *c, const hbg_case_env *env, hbg_case_pools *out, char *msg,
                              size_t cap)
{
    if (cap)
        msg[0] = 0;
    *out = (hbg_case_pools){.heap_bytes = c->heap_bytes, .task_window = 0};
    return c->pools ? c->pools(env, out, msg, cap) : HBG_OK;
}
