/* Bounds: tensor arguments held by the runtime (include/hbg/bound.h).
 *
 * A submit passed its arguments as such has to read every one to learn
 * whether it repeats the last pass's (orch/taskmemo.h, graph/replaymemo.c):
 * 96 bytes a tensor, about as much as the submit itself costs once the
 * answer is yes. A bound is changed only through hbg_bound_set, so each
 * content it has held can carry a stamp, and two submits that pass it
 * with one stamp pass the same tensors and directions.
 *
 * Stamps come from one process-wide counter and are never reused, by
 * this bound or another: a note that names a stamp names one content,
 * whichever bound holds it now. A bound destroyed and another created at
 * its address cannot be taken for it.
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orch/orch_internal.h"
#include "util/printable.h"

static _Atomic uint64_t stamp_last;

/* Why the last failed bound call on this thread failed (hbg_bound_last_error). */
static _Thread_local char last_error[192];

/* The end of a message about a direction dir_ok refuses. */
#define NOT_HELD "is none a bound holds (HBG_IN, HBG_INOUT, HBG_OUT, HBG_NO_DEP)"

/* Notes why in last_error; returns st. */
__attribute__((format(printf, 2, 3))) static hbg_status fail(hbg_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hbg__vformat(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return st;
}

const char *hbg_bound_last_error(void)
{
    return last_error;
}

static uint64_t new_stamp(void)
{
    return atomic_fetch_add_explicit(&stamp_last, 1, memory_order_relaxed) + 1;
}

void hbg__bound_restamp(hbg_bound *bd)
{
    bd->stamp = new_stamp();
}

/* Any direction but HBG_OUT_ALLOC, whose buffer the runtime writes into
 * the caller's tensor: into a bound's, it would change the bound behind
 * its stamp. A Graph call refuses HBG_NO_DEP as it refuses it in a
 * boundary. */
static bool dir_ok(uint8_t dir)
{
    return dir == HBG_IN || dir == HBG_INOUT || dir == HBG_OUT || dir == HBG_NO_DEP;
}

hbg_status hbg_bound_create(uint32_t n, const hbg_arg *args, hbg_bound **out)
{
    if (!out)
        return fail(HBG_E_INVAL, "hbg_bound_create: no place for the bound (out is NULL)");
    *out = NULL;
    if (n > HBG_MAX_BOUND_TENSORS)
        return fail(HBG_E_BOUNDARY_TOO_WIDE, "hbg_bound_create: %u tensors, the limit is %d", n,
                    HBG_MAX_BOUND_TENSORS);
    if (n && !args)
        return fail(HBG_E_INVAL, "hbg_bound_create: %u tensors but no array of them (NULL)", n);
    for (uint32_t k = 0; k < n; k++) {
        if (!args[k].t)
            return fail(HBG_E_INVAL, "hbg_bound_create: argument %u has no tensor (NULL)", k);
        if (!dir_ok(args[k].dir))
            return fail(HBG_E_INVAL, "hbg_bound_create: argument %u: direction %u " NOT_HELD, k, args[k].dir);
    }
    /* One block: the tensors first (16-byte aligned, as malloc's), then
     * the arguments that point at them. */
    hbg_bound *bd = malloc(sizeof *bd + (size_t)n * (sizeof(hbg_tensor) + sizeof(hbg_arg)));
    if (!bd)
        return fail(HBG_E_NOMEM, "hbg_bound_create: out of memory for %u tensors", n);
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
    if (!bd)
        return fail(HBG_E_INVAL, "hbg_bound_set: no bound (NULL)");
    if (!t)
        return fail(HBG_E_INVAL, "hbg_bound_set: slot %u: no tensor (NULL)", slot);
    if (slot >= bd->n)
        return fail(HBG_E_INVAL, "hbg_bound_set: slot %u, but the bound has %u", slot, bd->n);
    if (!dir_ok(dir))
        return fail(HBG_E_INVAL, "hbg_bound_set: slot %u: direction %u " NOT_HELD, slot, dir);
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

uint32_t hbg_bound_count(const hbg_bound *bd)
{
    return bd ? bd->n : 0;
}

hbg_status hbg_bound_get(const hbg_bound *bd, uint32_t slot, hbg_tensor *t, uint8_t *dir)
{
    if (!bd)
        return fail(HBG_E_INVAL, "hbg_bound_get: no bound (NULL)");
    if (slot >= bd->n)
        return fail(HBG_E_INVAL, "hbg_bound_get: slot %u, but the bound has %u", slot, bd->n);
    if (!t || !dir)
        return fail(HBG_E_INVAL, "hbg_bound_get: nowhere to put slot %u (t or dir is NULL)", slot);
    *t = bd->tensors[slot];
    *dir = bd->args[slot].dir;
    return HBG_OK;
}

void hbg_bound_destroy(hbg_bound *bd)
{
    free(bd);
}
