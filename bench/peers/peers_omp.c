/* OpenMP's side: each peer task is an `omp task` whose depend clauses name
 * one address per atom (in / out / inout for R / W / RW); an explicit dep
 * is an `in` on a token of the task it names, which that task declares
 * `out`. One thread creates every task inside `omp single`.
 *
 * The gate: a first task that blocks until the pass is built, on which the
 * tasks with no other predecessor depend, so no task runs while the pass is
 * timed. libgomp runs a new task inline, waiting for its dependences, once
 * more than 64 tasks per team thread are pending; with the gate closed that
 * would never end, so the team has more than ntasks / 64 threads. They
 * sleep on the team's barrier meanwhile (more threads than cores make
 * libgomp spin only briefly before sleeping; OMP_WAIT_POLICY=passive makes
 * it sleep at once). */
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peers_omp.h"

struct peers_omp {
    const peers_stream *s;
    const peers_edges *seq;
    char *atom_tok, *task_tok, gate_tok;
    bool *target, *root;
    char **in, **out, **io;
    int nthreads;
    uint32_t *done;
    uint64_t violations;
};

static pthread_mutex_t gate_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static int gate_open;

static void gate_set(int open)
{
    pthread_mutex_lock(&gate_mu);
    gate_open = open;
    pthread_cond_broadcast(&gate_cv);
    pthread_mutex_unlock(&gate_mu);
}

static void gate_wait(void)
{
    pthread_mutex_lock(&gate_mu);
    while (!gate_open)
        pthread_cond_wait(&gate_cv, &gate_mu);
    pthread_mutex_unlock(&gate_mu);
}

peers_omp *peers_omp_prepare(const peers_stream *s, const peers_edges *seq)
{
    peers_omp *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    uint32_t maxacc, maxdeps;
    peers_widest(s, &maxacc, &maxdeps);
    p->s = s;
    p->seq = seq;
    p->atom_tok = calloc((size_t)s->natoms + 1, 1);
    p->task_tok = calloc((size_t)s->npeer + 1, 1);
    p->target = calloc((size_t)s->npeer + 1, sizeof *p->target);
    p->root = calloc((size_t)s->npeer + 1, sizeof *p->root);
    p->done = calloc((size_t)s->npeer + 1, sizeof *p->done);
    p->in = calloc((size_t)maxacc + maxdeps + 1, sizeof *p->in);
    p->out = calloc((size_t)maxacc + 2, sizeof *p->out);
    p->io = calloc((size_t)maxacc + 1, sizeof *p->io);
    if (!p->atom_tok || !p->task_tok || !p->target || !p->root || !p->done || !p->in || !p->out || !p->io) {
        peers_omp_release(p);
        return NULL;
    }
    for (uint32_t i = 0; i < s->npeer; i++) {
        for (uint32_t k = 0; k < s->pdep_cnt[i]; k++)
            p->target[s->pdeps[s->pdep_off[i] + k]] = true;
        p->root[i] = seq->cnt[i] == 0;
    }
    p->nthreads = (int)(s->npeer / 64 + 2);
    return p;
}

void peers_omp_release(peers_omp *p)
{
    if (!p)
        return;
    free(p->atom_tok);
    free(p->task_tok);
    free(p->target);
    free(p->root);
    free(p->done);
    free(p->in);
    free(p->out);
    free(p->io);
    free(p);
}

int peers_omp_threads(const peers_omp *p)
{
    return p->nthreads;
}

/* Check mode's task body: every predecessor the reference gives the task
 * has finished before it starts. */
static void check_task(peers_omp *p, uint32_t i)
{
    const peers_edges *e = p->seq;
    for (uint32_t k = 0; k < e->cnt[i]; k++)
        if (!__atomic_load_n(&p->done[e->pred[e->off[i] + k]], __ATOMIC_ACQUIRE))
            __atomic_fetch_add(&p->violations, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&p->done[i], 1, __ATOMIC_RELEASE);
}

/* Creates every peer task of the pass (the timed part). */
static void create_all(peers_omp *p, bool check)
{
    const peers_stream *s = p->s;
    for (uint32_t i = 0; i < s->npeer; i++) {
        const peers_acc *acc = s->acc + s->acc_off[i];
        int nin = 0, nout = 0, nio = 0;
        for (uint32_t k = 0; k < s->acc_cnt[i]; k++) {
            char *a = &p->atom_tok[acc[k].atom];
            if (acc[k].mode == PEERS_R)
                p->in[nin++] = a;
            else if (acc[k].mode == PEERS_W)
                p->out[nout++] = a;
            else
                p->io[nio++] = a;
        }
        for (uint32_t k = 0; k < s->pdep_cnt[i]; k++)
            p->in[nin++] = &p->task_tok[s->pdeps[s->pdep_off[i] + k]];
        if (p->target[i])
            p->out[nout++] = &p->task_tok[i];
        if (p->root[i])
            p->in[nin++] = &p->gate_tok;
        char **in = p->in, **out = p->out, **io = p->io;
#pragma omp task depend(iterator(j = 0 : nin), in : *in[j]) depend(iterator(j = 0 : nout), out : *out[j]) \
    depend(iterator(j = 0 : nio), inout : *io[j])
        {
            if (check)
                check_task(p, i);
        }
    }
}

hbg_status peers_omp_pass(peers_omp *p, bool check, uint64_t *ns, uint64_t *violations, char *msg, size_t cap)
{
    int team = 0;
    uint64_t t = 0;
    memset(p->done, 0, ((size_t)p->s->npeer + 1) * sizeof *p->done);
    p->violations = 0;
    gate_set(0);
#pragma omp parallel num_threads(p->nthreads)
#pragma omp single
    {
        team = omp_get_num_threads();
        if (team >= p->nthreads) {
#pragma omp task depend(out : p->gate_tok)
            gate_wait();
            uint64_t t0 = hbg_mono_ns();
            create_all(p, check);
            t = hbg_mono_ns() - t0;
        }
        gate_set(1);
    }
    if (team < p->nthreads) {
        snprintf(msg, cap, "OpenMP gave a team of %d threads, the gate needs %d (raise OMP_THREAD_LIMIT)", team,
                 p->nthreads);
        return HBG_E_INVAL;
    }
    *ns = t;
    if (violations)
        *violations = p->violations;
    return HBG_OK;
}
