/* The kernel table: a flat array indexed by kernel id.
 *
 * Ids are small and dense (a case registers its kernels once, before the
 * first bind), so a direct index beats any map and lookups on the device
 * run cost one load. Names are copied so callers may pass stack buffers.
 *
 * Runtimes on several threads may share a table, and a program may
 * register a kernel while they run: a slot is claimed by its name (one
 * compare-and-swap, so two registrations of one id cannot both win) and
 * published by a release store of its function, which lookups read with
 * acquire. A lookup sees either no kernel or the whole entry. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "hbg/kernel.h"

typedef struct kernel_entry {
    _Atomic(hbg_kernel_fn) fn;
    _Atomic(char *) name; /* set first: the slot's claim */
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
        free(atomic_load_explicit(&kt->e[i].name, memory_order_relaxed));
    free(kt);
}

hbg_status hbg_kernel_register(hbg_kernel_table *kt, uint16_t id, const char *name, hbg_kernel_fn fn)
{
    if (!kt || !fn || id >= HBG_MAX_KERNELS)
        return HBG_E_INVAL;
    /* A second registration would silently change what already-built
     * images run; refuse it instead. */
    if (atomic_load_explicit(&kt->e[id].name, memory_order_acquire))
        return HBG_E_INVAL;
    char *copy = strdup(name ? name : "");
    if (!copy)
        return HBG_E_NOMEM;
    char *none = NULL;
    if (!atomic_compare_exchange_strong_explicit(&kt->e[id].name, &none, copy, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        free(copy); /* another thread registered it first */
        return HBG_E_INVAL;
    }
    atomic_store_explicit(&kt->e[id].fn, fn, memory_order_release);
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
    return atomic_load_explicit(&((hbg_kernel_table *)kt)->e[id].fn, memory_order_acquire);
}

const char *hbg_kernel_name(const hbg_kernel_table *kt, uint16_t id)
{
    if (!kt || id >= HBG_MAX_KERNELS)
        return NULL;
    /* Named once its function is out: a slot still being registered has neither. */
    if (!atomic_load_explicit(&((hbg_kernel_table *)kt)->e[id].fn, memory_order_acquire))
        return NULL;
    return atomic_load_explicit(&((hbg_kernel_table *)kt)->e[id].name, memory_order_relaxed);
}
