/* The cases `hbg run` knows, in the order `hbg run --list` prints them. */
#include <string.h>

#include "case.h"

extern const hbg_case hbg_case_vector;
extern const hbg_case hbg_case_qwen;
extern const hbg_case hbg_case_dsv4;
extern const hbg_case hbg_case_synth;

static const hbg_case *const all[] = {
    &hbg_case_vector,
    &hbg_case_qwen,
    &hbg_case_dsv4,
    &hbg_case_synth,
    NULL,
};

const hbg_case *const *hbg_cases(void)
{
    return all;
}

hbg_status hbg_case_golden(const hbg_case *c, void *state, const hbg_case_env *env, const hbg_kernel_table *kt,
                           char *msg, size_t cap)
{
    void *ref = NULL;
    hbg_status st = c->reference(state, env, kt, &ref, msg, cap);
    if (!st)
        st = c->compare(state, ref, msg, cap);
    c->free_ref(ref);
    return st;
}

const hbg_case *hbg_case_find(const char *name)
{
    for (const hbg_case *const *c = all; *c; c++)
        if (strcmp((*c)->name, name) == 0)
            return *c;
    return NULL;
}
