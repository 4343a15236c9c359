/* The kernel table: a flat array indexed by kernel id.
 *
 * Ids are small and dense (a case registers its kernels once, before the
 * first bind), so a direct index beats any map and lookups on the device
 * run cost one load. Names are copied so callers may pass stack buffers. */
#include <stdlib.h>
#include <string.h>

#include "hbg/kernel.h"

typedef struct kernel_entry {
    hbg_kernel_fn fn;
    char *name;
} kernel_entry;

struct hbg_kernel_table {
    kernel_entry e[HBG_MAX_KERNELS];
};

hbg_status hbg_kernel_table_create(hbg_kernel_table **out)
{
    if (!out)
        return HBG_E_INVAL;
    *out = calloc(1, sizeof **out);
    return *out ? HBG_OK : HBG_E_NOMEM;
}

void hbg_kernel_table_destroy(hbg_kernel_table *kt)
{
    if (!kt)
        return;
    for (unsigned i = 0; i < HBG_MAX_KERNELS; i++)
        free(kt->e[i].name);
    free(kt);
}

hbg_status hbg_kernel_register(hbg_kernel_table *kt, uint16_t id, const char *name, hbg_kernel_fn fn)
{
    if (!kt || !fn || id >= HBG_MAX_KERNELS)
        return HBG_E_INVAL;
    /* A second registration would silently change what already-built
     * images run; refuse it instead. */
    if (kt->e[id].fn)
        return HBG_E_INVAL;
    char *copy = strdup(name ? name : "");
    if (!copy)
        return HBG_E_NOMEM;
    kt->e[id].fn = fn;
    kt->e[id].name = copy;
    return HBG_OK;
}

hbg_status hbg_kernel_register_all(hbg_kernel_table *kt, const hbg_kernel_def *defs, size_t n)
{
    if (n && !defs)
        return HBG_E_INVAL;
    for (size_t i = 0; i < n; i++) {
        hbg_status st = hbg_kernel_register(kt, defs[i].id, defs[i].name, defs[i].fn);
        if (st)
            return st;
    }
    return HBG_OK;
}

hbg_kernel_fn hbg_kernel_lookup(const hbg_kernel_table *kt, uint16_t id)
{
    if (!kt || id >= HBG_MAX_KERNELS)
        return NULL;
    return kt->e[id].fn;
}

const char *hbg_kernel_name(const hbg_kernel_table *kt, uint16_t id)
{
    if (!kt || id >= HBG_MAX_KERNELS)
        return NULL;
    return kt->e[id].name;
}
