/* submit -> dispatch pairs and thread roles of node-family spans
 * (nodespans.h). */
#include "tools/nodespans.h"
#include "tools/spans.h"
#include "util/vec.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The value of key= in a span's extra attributes. */
static bool attr(lx_slice extra, const char *key, lx_slice *val)
{
    /* a span without extra attributes has no buffer at all */
    if (!extra.p || !extra.n)
        return false;
    size_t kn = strlen(key);
    const char *p = extra.p, *e = extra.p + extra.n;
    while (p < e) {
        const char *tok = p;
        while (p < e && *p != ' ')
            p++;
        if ((size_t)(p - tok) > kn && !memcmp(tok, key, kn) && tok[kn] == '=') {
            val->p = tok + kn + 1;
            val->n = (size_t)(p - val->p);
            return true;
        }
        while (p < e && *p == ' ')
            p++;
    }
    return false;
}

static bool attr_u64(lx_slice extra, const char *key, uint64_t *v)
{
    lx_slice s;
    return attr(extra, key, &s) && lx_parse_u64(s, v) == 0;
}

/* The part of a node-family name after its level word ("submit" of
 * node.submit or network1.submit), or an empty slice. */
static lx_slice leaf(lx_slice name)
{
    lx_slice none = {name.p, 0};
    if (!sp_foreign(name) || (name.n >= 4 && !memcmp(name.p, "ext.", 4)))
        return none;
    const char *dot = memchr(name.p, '.', name.n);
    if (!dot)
        return none;
    lx_slice l = {dot + 1, (size_t)(name.p + name.n - dot - 1)};
    return l;
}

typedef struct key {
    uint64_t pid, run, slot, ts;
    size_t i;
} key;

static int cmp_key(const void *a, const void *b)
{
    const key *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->run != y->run)
        return x->run < y->run ? -1 : 1;
    if (x->slot != y->slot)
        return x->slot < y->slot ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

static bool flow_key(const ps_span *s, key *k, size_t i)
{
    k->pid = s->pid;
    k->ts = s->ts;
    k->i = i;
    return attr_u64(s->extra, "run_id", &k->run) &&
           (attr_u64(s->extra, "task_slot", &k->slot) || attr_u64(s->extra, "slot", &k->slot));
}

static hbg_status flows(const ps_log *L, ns_result *r)
{
    key *sub = NULL;
    size_t ns = 0, cap = 0;
    for (size_t i = 0; i < L->nspan; i++) {
        const ps_span *s = &L->span[i];
        key k;
        if (!s->dev && lx_slice_eq(leaf(s->name), "submit") && flow_key(s, &k, i)) {
            if (!vec_grow((void **)&sub, &cap, ns + 1, sizeof *sub)) {
                free(sub);
                return HBG_E_NOMEM;
            }
            sub[ns++] = k;
        }
    }
    if (!ns)
        return HBG_OK;
    qsort(sub, ns, sizeof *sub, cmp_key);
    size_t capf = 0;
    for (size_t i = 0; i < L->nspan; i++) {
        const ps_span *s = &L->span[i];
        key k;
        if (s->dev || !lx_slice_eq(leaf(s->name), "dispatch") || !flow_key(s, &k, SIZE_MAX))
            continue;
        /* the latest submit of its (pid, run, slot) that started no later */
        size_t lo = 0, hi = ns;
        while (lo < hi) {
            size_t m = (lo + hi) / 2;
            if (cmp_key(&sub[m], &k) <= 0)
                lo = m + 1;
            else
                hi = m;
        }
        if (!lo || sub[lo - 1].pid != k.pid || sub[lo - 1].run != k.run || sub[lo - 1].slot != k.slot)
            continue;
        if (!vec_grow((void **)&r->flow, &capf, r->nflow + 1, sizeof *r->flow)) {
            free(sub);
            return HBG_E_NOMEM;
        }
        r->flow[r->nflow++] = (ns_flow){sub[lo - 1].i, i};
    }
    free(sub);
    return HBG_OK;
}

static ns_role *role_entry(ns_result *r, size_t *cap, uint64_t pid, uint64_t tid)
{
    for (size_t i = r->nrole; i-- > 0;)
        if (r->role[i].pid == pid && r->role[i].tid == tid)
            return &r->role[i];
    if (!vec_grow((void **)&r->role, cap, r->nrole + 1, sizeof *r->role))
        return NULL;
    ns_role *e = &r->role[r->nrole++];
    memset(e, 0, sizeof *e);
    e->pid = pid;
    e->tid = tid;
    return e;
}

/* A thread's roles: role= where a span says it; the facade also by the
 * spans only it writes (node.submit, node.graph_build); any other node
 * span by a worker. */
static hbg_status roles(const ps_log *L, ns_result *r)
{
    size_t cap = 0;
    for (size_t i = 0; i < L->nspan; i++) {
        const ps_span *s = &L->span[i];
        if (s->dev)
            continue;
        lx_slice lf = leaf(s->name), role = {NULL, 0};
        bool has_role = s->extra.n && attr(s->extra, "role", &role);
        unsigned bit = 0;
        if ((has_role && lx_slice_eq(role, "facade")) || lx_slice_eq(lf, "submit") || lx_slice_eq(lf, "graph_build"))
            bit = NS_FACADE;
        else if (has_role && lx_slice_eq(role, "scheduler"))
            bit = NS_SCHEDULER;
        else if ((has_role && lx_slice_eq(role, "worker")) || lf.n)
            bit = NS_WORKER;
        if (!bit)
            continue;
        ns_role *e = role_entry(r, &cap, s->pid, s->tid);
        if (!e)
            return HBG_E_NOMEM;
        e->roles |= bit;
        uint64_t w;
        if (has_role && lx_slice_eq(role, "worker") && attr_u64(s->extra, "worker_id", &w) &&
            (!e->nworker_ids || (e->nworker_ids == 1 && w != e->worker_id))) {
            e->nworker_ids++;
            e->worker_id = w;
        }
    }
    return HBG_OK;
}

hbg_status ns_analyse(const ps_log *L, ns_result *r)
{
    memset(r, 0, sizeof *r);
    if (flows(L, r) != HBG_OK || roles(L, r) != HBG_OK) {
        ns_free(r);
        return HBG_E_NOMEM;
    }
    return HBG_OK;
}

void ns_free(ns_result *r)
{
    free(r->flow);
    free(r->role);
    memset(r, 0, sizeof *r);
}

const ns_role *ns_role_of(const ns_result *r, uint64_t pid, uint64_t tid)
{
    for (size_t i = 0; i < r->nrole; i++)
        if (r->role[i].pid == pid && r->role[i].tid == tid)
            return &r->role[i];
    return NULL;
}

const char *ns_lane_name(const ns_role *r, char *buf, size_t n)
{
    /* one thread may play several roles: the facade's name wins, then the
     * scheduler's (the scheduler loop also runs workers' bookkeeping) */
    if (r->roles & NS_FACADE)
        snprintf(buf, n, "orchestrator / facade (tid %" PRIu64 ")", r->tid);
    else if (r->roles & NS_SCHEDULER)
        snprintf(buf, n, "scheduler (tid %" PRIu64 ")", r->tid);
    else if (r->roles & NS_WORKER && r->nworker_ids == 1)
        snprintf(buf, n, "worker %" PRIu64 " (tid %" PRIu64 ")", r->worker_id, r->tid);
    else if (r->roles & NS_WORKER)
        snprintf(buf, n, "worker (tid %" PRIu64 ")", r->tid);
    else
        return NULL;
    return buf;
}
