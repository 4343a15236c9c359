/* A program's caller tensors: what makes one unusable, and the words that
 * say so.
 *
 * The bind pipeline (seg_args) and the eager reference (hbg_eager_run)
 * take the same hbg_program, so they refuse the same ones: a reference
 * that ran a program the device path refuses would check nothing. The
 * check only notes the fault (bind's args segment is timed, and formats
 * nothing); the words are made after the pass. */
#include <stdio.h>

#include "bind/bind_internal.h"
#include "util/printable.h"

/* What is wrong with caller tensor a; HBG_ARGF_NONE when nothing is. */
static uint8_t tensor_fault(const hbg_host_tensor *a, uint64_t *value)
{
    if (!a->host)
        return HBG_ARGF_NO_HOST;
    /* Before its size, which the constructor left 0: the mistake is in
     * the arguments the layout was made from. */
    if (a->layout.dtype == HBG_DTYPE_COUNT && a->layout.nbytes == 0)
        return HBG_ARGF_INVALID;
    if (a->layout.nbytes == 0)
        return HBG_ARGF_EMPTY;
    if (a->dir != HBG_IN && a->dir != HBG_OUT && a->dir != HBG_INOUT) {
        *value = a->dir;
        return HBG_ARGF_DIR;
    }
    if (a->layout.dtype >= HBG_DTYPE_COUNT) {
        *value = a->layout.dtype;
        return HBG_ARGF_DTYPE;
    }
    /* Kept on the device means the host copy is not read again: for a
     * tensor the device writes, the caller's changes would be dropped
     * (INOUT), and the kept copy would be the kernels' output (OUT). */
    if (a->persistent && a->dir != HBG_IN) {
        *value = a->dir;
        return HBG_ARGF_PERSISTENT;
    }
    return HBG_ARGF_NONE;
}

bool hbg__caller_args_ok(const hbg_program *p, hbg__argfault_at *f)
{
    *f = (hbg__argfault_at){HBG_ARGF_NONE, 0, 0};
    if (p->nargs > HBG_MAX_PROGRAM_ARGS || (p->nargs && !p->args)) {
        f->what = p->nargs > HBG_MAX_PROGRAM_ARGS ? HBG_ARGF_TOO_MANY : HBG_ARGF_NO_ARRAY;
        f->value = p->nargs;
        return false;
    }
    for (uint32_t i = 0; i < p->nargs; i++)
        if ((f->what = tensor_fault(&p->args[i], &f->value)) != HBG_ARGF_NONE) {
            f->index = i;
            return false;
        }
    return true;
}

static const char *dir_name(uint64_t dir)
{
    return dir == HBG_IN ? "HBG_IN" : dir == HBG_OUT ? "HBG_OUT" : dir == HBG_INOUT ? "HBG_INOUT" : "?";
}

void hbg__argfault_format(const hbg__argfault_at *f, const hbg_program *p, char *buf, size_t len)
{
    unsigned long long v = (unsigned long long)f->value;
    /* The name is the program's text: cut at a whole character, controls
     * masked, so the report's error stays one line of text. */
    char name[64], who[96];
    snprintf(name, sizeof name, "%s",
             f->what > HBG_ARGF_NO_ARRAY && p->args[f->index].name ? p->args[f->index].name : "unnamed");
    hbg__mask_controls(hbg__utf8_trim(name));
    snprintf(who, sizeof who, "caller tensor %u (%s)", f->index, name);
    switch (f->what) {
    case HBG_ARGF_TOO_MANY:
        snprintf(buf, len, "args: %llu caller tensors, the limit is %d", v, HBG_MAX_PROGRAM_ARGS);
        break;
    case HBG_ARGF_NO_ARRAY:
        snprintf(buf, len, "args: %llu caller tensors but no array of them (NULL)", v);
        break;
    case HBG_ARGF_NO_HOST:
        snprintf(buf, len, "args: %s: no host memory (host is NULL)", who);
        break;
    case HBG_ARGF_EMPTY:
        snprintf(buf, len, "args: %s: layout.nbytes is 0", who);
        break;
    case HBG_ARGF_DIR:
        snprintf(buf, len, "args: %s: direction %llu, not HBG_IN, HBG_OUT or HBG_INOUT", who, v);
        break;
    case HBG_ARGF_PERSISTENT:
        snprintf(buf, len,
                 "args: %s: persistent, but its direction is %s: only an HBG_IN is kept on the device "
                 "(the device writes this one)",
                 who, dir_name(v));
        break;
    case HBG_ARGF_INVALID:
        snprintf(buf, len,
                 "args: %s: layout is the invalid tensor (dtype HBG_DTYPE_COUNT, nbytes 0) that a tensor "
                 "constructor returns for bad arguments",
                 who);
        break;
    default:
        snprintf(buf, len, "args: %s: dtype %llu is no hbg_dtype", who, v);
        break;
    }
}

void hbg__set_kept(hbg_orch *o, const hbg_program *p, const hbg_tensor *args)
{
    uint64_t addr[HBG_MAX_PROGRAM_ARGS];
    uint32_t arg[HBG_MAX_PROGRAM_ARGS], n = 0;
    for (uint32_t i = 0; i < p->nargs; i++)
        if (p->args[i].persistent) {
            addr[n] = args[i].addr;
            arg[n++] = i;
        }
    hbg__orch_set_kept(o, addr, arg, n);
}
