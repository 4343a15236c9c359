/* Bound boundaries: a Graph call's tensors held by the runtime.
 *
 * A call passed an hbg_boundary has to read every slot to learn whether
 * it repeats the last pass's replay (replaymemo.c): 96 bytes a slot,
 * about as much as the replay itself costs once the answer is yes. A
 * bound is changed only through hbg_bound_set, so each content it has
 * held can carry a stamp, and two calls that pass it with one stamp pass
 * the same tensors and directions.
 *
 * Stamps come from one process-wide counter and are never reused, by
 * this bound or another: a note that names a stamp names one content,
 * whichever bound holds it now. A bound destroyed and another created at
 * its address cannot be taken for it.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph_internal.h"

static _Atomic uint64_t stamp_last;

static uint64_t new_stamp(void)
{
    return atomic_fetch_add_explicit(&stamp_last, 1, memory_order_relaxed) + 1;
}

void hbg__bound_restamp(hbg_bound *bd)
{
    bd->stamp = new_stamp();
}

static bool dir_ok(uint8_t dir)
{
    return dir == HBG_IN || dir == HBG_INOUT || dir == HBG_OUT;
}

hbg_status hbg_bound_create(uint32_t n, const hbg_arg *args, hbg_bound **out)
{
    if (!out)
        return HBG_E_INVAL;
    *out = NULL;
    if (n > HBG_MAX_BOUNDARY_TENSORS)
        return HBG_E_BOUNDARY_TOO_WIDE;
    if (n && !args)
        return HBG_E_INVAL;
    for (uint32_t k = 0; k < n; k++)
        if (!args[k].t || !dir_ok(args[k].dir))
            return HBG_E_INVAL;
    /* One block: the tensors first (16-byte aligned, as malloc's), then
     * the arguments that point at them. */
    hbg_bound *bd = malloc(sizeof *bd + (size_t)n * (sizeof(hbg_tensor) + sizeof(hbg_arg)));
    if (!bd)
        return HBG_E_NOMEM;
    bd->n = n;
    bd->tensors = (hbg_tensor *)(void *)(bd + 1);
    bd->args = (hbg_arg *)(void *)(bd->tensors + n);
    for (uint32_t k = 0; k < n; k++) {
        bd->tensors[k] = *args[k].t;
        bd->args[k] = (hbg_arg){&bd->tensors[k], args[k].dir};
    }
    bd->stamp = new_stamp();
    *out = bd;
    return HBG_OK;
}

hbg_status hbg_bound_set(hbg_bound *bd, uint32_t slot, const hbg_tensor *t, uint8_t dir)
{
    if (!bd || !t || slot >= bd->n || !dir_ok(dir))
        return HBG_E_INVAL;
    /* The same bytes keep the stamp: a caller that sets every slot after
     * a buffer moved leaves the calls of the slots that did not move
     * answerable. */
    if (bd->args[slot].dir == dir && memcmp(&bd->tensors[slot], t, sizeof *t) == 0)
        return HBG_OK;
    bd->tensors[slot] = *t;
    bd->args[slot].dir = dir;
    bd->stamp = new_stamp();
    return HBG_OK;
}

const hbg_arg *hbg_bound_args(const hbg_bound *bd, uint32_t *n)
{
    if (n)
        *n = bd ? bd->n : 0;
    return bd ? bd->args : NULL;
}

void hbg_bound_destroy(hbg_bound *bd)
{
    free(bd);
}
