/* --assert-overlap: does the next invocation's preparation overlap the
 * previous one's device work, rank by rank (spans.h)? */
#include "tools/spans.h"
#include "util/vec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Names are compared as written, so the wanted name is encoded the way the
 * emitter encodes it. */
static char *encode_name(const char *s)
{
    size_t n = strlen(s);
    char *o = malloc(3 * n + 1), *p = o;
    if (!o)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (lx_name_encodes(c))
            p += sprintf(p, "%%%02X", c);
        else
            *p++ = (char)c;
    }
    *p = 0;
    return o;
}

typedef struct found {
    bool a, b, a_dev, b_dev;
    uint64_t a0, a1, b0, b1;
} found;

static uint64_t end_of(const ps_span *s)
{
    return s->ts + s->dur < s->ts ? UINT64_MAX : s->ts + s->dur;
}

/* The first host span of each name in invocation x. */
static found find_ab(const sp_set *S, const sp_inv *x, const char *a, const char *b)
{
    found f = {0};
    size_t na = strlen(a), nb = strlen(b);
    for (size_t k = 0; k < x->n; k++) {
        const ps_span *s = &S->L->span[S->idx[x->first + k]];
        bool is_a = s->name.n == na && memcmp(s->name.p, a, na) == 0;
        bool is_b = s->name.n == nb && memcmp(s->name.p, b, nb) == 0;
        if (s->dev) {
            f.a_dev |= is_a;
            f.b_dev |= is_b;
            continue;
        }
        if (is_a && !f.a) {
            f.a = true;
            f.a0 = s->ts;
            f.a1 = end_of(s);
        }
        if (is_b && !f.b) {
            f.b = true;
            f.b0 = s->ts;
            f.b1 = end_of(s);
        }
    }
    return f;
}

static hbg_status check(const sp_set *S, const char *a, const char *b, bool hidden, sp_overlap *o, char *err,
                        size_t errlen)
{
    size_t cap = 0, prev = SIZE_MAX;
    found pf = {0};
    for (size_t i = 0; i < S->ninv; i++) {
        const sp_inv *x = &S->inv[i];
        found f = find_ab(S, x, a, b);
        if (f.a_dev || f.b_dev) {
            snprintf(err, errlen, "%s is a device-clock span (clk=dev) in pid=%llu inv=%llu: its ts is not host time",
                     f.a_dev ? a : b, (unsigned long long)x->pid, (unsigned long long)x->inv);
            return HBG_E_INVAL;
        }
        if (!f.a || !f.b) {
            o->nmissing++;
            continue;
        }
        /* S->inv is in (pid, inv) order: adjacent complete invocations of one rank */
        if (prev != SIZE_MAX && S->inv[prev].pid == x->pid) {
            if (!vec_grow((void **)&o->pair, &cap, o->npair + 1, sizeof *o->pair))
                return HBG_E_NOMEM;
            sp_pair *p = &o->pair[o->npair];
            p->prev = prev;
            p->next = i;
            p->a0 = f.a0;
            p->a1 = f.a1;
            p->b0 = pf.b0;
            p->b1 = pf.b1;
            p->nb0 = f.b0;
            p->overlap = f.a0 < pf.b1 && f.a1 > pf.b0;
            p->hidden = f.a1 <= pf.b1;
            p->ordered = f.b0 >= pf.b0;
            p->ok = p->overlap && p->ordered && (!hidden || p->hidden);
            if (!p->ok && o->first_fail == SIZE_MAX)
                o->first_fail = o->npair;
            o->npair++;
        }
        prev = i;
        pf = f;
    }
    return HBG_OK;
}

hbg_status sp_check_overlap(const sp_set *S, const char *a, const char *b, bool hidden, sp_overlap *o, char *err,
                            size_t errlen)
{
    memset(o, 0, sizeof *o);
    o->first_fail = SIZE_MAX;
    char *ea = encode_name(a), *eb = encode_name(b);
    hbg_status st = ea && eb ? check(S, ea, eb, hidden, o, err, errlen) : HBG_E_NOMEM;
    free(ea);
    free(eb);
    if (st == HBG_E_NOMEM)
        snprintf(err, errlen, "out of memory");
    return st;
}

void sp_overlap_free(sp_overlap *o)
{
    free(o->pair);
    memset(o, 0, sizeof *o);
}
