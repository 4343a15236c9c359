/* The sim backend: a host-threaded stand-in for an accelerator.
 *
 * Threads are created once at open and live until destroy, as a device's
 * schedulers and cores would: `schedulers` scheduler threads find ready work
 * and hand single blocks to `aic_cores` + `aiv_cores` core threads, which
 * call the registered kernel functions. One mutex guards all run state.
 * That serialises the schedulers with each other, but kernels run outside
 * it, and the scheduling work per block is a few loads and stores; what the
 * sim models is the *order* a device may run things in, not its speed.
 *
 * Work moves through three stages: `ready` (dependencies met) -> a job
 * queue per core type (blocks not yet on a core) -> `done` (all blocks
 * finished). Only schedulers touch ready/done processing; cores only run
 * calls and report. A REPLAY task's nodes join the run when it starts, and
 * replays start only while the nodes of those under way stay within
 * REPLAY_NODES (the rest wait their turn in `deferred`): so ready and done
 * are rings sized at run start by the tasks plus that window, not by every
 * node the image would replay (a few MB of REPLAY tasks of a 4096-node
 * Definition would otherwise ask for GBs).
 *
 * A MIX block takes one AIC and one AIV core together. The AIC core runs
 * kernel_aic, then hands the block to its partner AIV core for kernel_aiv,
 * and both are released when that finishes: the AIC part of a block
 * happens-before its AIV part, and no other work uses either core between.
 * `sync_start` is ignored: blocks start whenever cores free up, so kernels
 * must not wait for other blocks of the same task.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "device/exec.h"
#include "device/sim.h"
#include "device/sim_mem.h"
#include "hbg/graph.h"

#define NO_INST UINT32_MAX

/* Nodes of the replays under way, at most (unless one replay alone is
 * larger: HBG_MAX_DEF_NODES is below it). Far more than a device has
 * cores, so what waits is only what would have queued behind them. */
#define REPLAY_NODES ((uint32_t)1 << 16)
_Static_assert(HBG_MAX_DEF_NODES <= REPLAY_NODES, "any one replay fits the window");

typedef struct item {
    uint32_t inst; /* NO_INST: top-level task `idx`; else node `idx` of insts[inst] */
    uint32_t idx;
} item;

/* A kernel call, 3 KB with its tensors: a job gets one when its first
 * block goes to a core and gives it back when its last block is done. */
typedef struct callbuf {
    struct callbuf *next; /* free list */
    hbg__exec_call call;
} callbuf;

/* A kernel call queued for its cores: small, since a run of N independent
 * tasks queues N of them at once (with its call in each, 900 MB at
 * 200,000 tasks). */
typedef struct job {
    struct job *next; /* job queue or free list */
    item it;
    uint32_t task, node; /* for messages */
    uint8_t core;        /* hbg_core */
    uint32_t blocks;
    uint32_t next_block, blocks_done;
    callbuf *cb;         /* NULL until a block is placed */
} job;

typedef struct sim sim;

typedef struct core {
    sim *s;
    pthread_t th;
    pthread_cond_t cv;
    uint8_t type; /* HBG_CORE_AIC or HBG_CORE_AIV */
    job *job;     /* the call to run; NULL when waiting */
    uint32_t block;
    uint8_t part;
    struct core *partner; /* the other core of a MIX block */
} core;

/* One expanded replay: per-node pending counts over the Definition's DAG. */
typedef struct inst {
    uint32_t task, replay, nnodes, done;
    const hbg__exec_dag *dag;
    uint32_t *pending;
} inst;

typedef struct jobq {
    job *head, *tail;
} jobq;

struct sim {
    hbg_device dev; /* first: the handle callers hold */
    sim_mem mem;
    uint64_t max_steps;
    pthread_mutex_t run_lock; /* one run at a time */
    /* During a run (under wf_lock): the device whose kernel started it,
     * NULL from a host thread, and that device's wait for this run. */
    const struct sim *outer;
    struct wf_edge {
        const struct sim *from, *to;
        struct wf_edge *next;
    } nest;
    pthread_mutex_t m;        /* everything below */
    pthread_cond_t sched_cv, done_cv;
    bool quit;
    bool work; /* something changed since a scheduler last looked */
    unsigned ncores[2], nsched, ncv, nstarted_cores, nstarted_sched;
    core *cores;
    pthread_t *scheds;
    core **idle[2];
    unsigned nidle[2];
    job *free_jobs;
    size_t nfree_jobs; /* on free_jobs: at most HBG__SIM_SPARE_JOBS */
    /* Calls for the jobs that have a block placed: at most one a core and
     * one a queue (its head may be placed in part), all made at open. */
    callbuf *free_calls;
    hbg__exec_call scratch; /* a call built at dispatch to check it */

    /* The run in progress. */
    bool active, finished;
    hbg_status status;
    char msg[256];
    const hbg__exec_image *im;
    const hbg_kernel_table *kt;
    hbg__exec_dag tdag;
    hbg__exec_dag *ddag; /* one per deftab entry */
    inst *insts;
    uint32_t ninst;
    uint32_t live_nodes; /* nodes of the replays started and not complete */
    uint32_t *deferred;  /* REPLAY tasks ready but not started: each once */
    uint32_t fhead, ftail;
    item *ready, *done; /* rings of ring_mask + 1 items */
    uint64_t ring_mask;
    uint64_t rhead, rtail, dhead, dtail;
    jobq q[3]; /* by hbg_core */
    uint32_t in_flight; /* blocks on cores */
    uint32_t tasks_done;
    hbg_run_stats stats;
};

static sim *S(hbg_device *d)
{
    return (sim *)d;
}

/* The first failure of a run wins; later ones are its consequences. */
static void fail(sim *s, hbg_status st)
{
    if (s->status == HBG_OK) {
        s->status = st;
        snprintf(s->msg, sizeof s->msg, "%s", hbg__exec_last_error());
    }
}

static void kick(sim *s)
{
    s->work = true;
    pthread_cond_signal(&s->sched_cv);
}

static bool mem_check(void *ctx, uint64_t addr, uint64_t n)
{
    return sim_mem_contains(ctx, addr, n);
}

/* Every item in ready or done is a task or a node of a replay under way,
 * and in one of them at most once: the rings never fill (setup_run). */
static void push_ready(sim *s, item it)
{
    s->ready[s->rtail++ & s->ring_mask] = it;
}

static void push_done(sim *s, item it)
{
    s->done[s->dtail++ & s->ring_mask] = it;
}

static void end_replay(sim *s, inst *x)
{
    s->live_nodes -= x->nnodes;
    free(x->pending);
    x->pending = NULL;
}

static void complete(sim *s, item it)
{
    if (it.inst == NO_INST) {
        uint32_t t = it.idx;
        s->im->flags[t] = 1;
        s->tasks_done++;
        const hbg__exec_dag *g = &s->tdag;
        for (uint32_t e = g->off[t]; e < g->off[t + 1]; e++)
            if (--g->npred[g->out[e]] == 0)
                push_ready(s, (item){NO_INST, g->out[e]});
        return;
    }
    inst *x = &s->insts[it.inst];
    const hbg__exec_dag *g = x->dag;
    x->done++;
    for (uint32_t e = g->off[it.idx]; e < g->off[it.idx + 1]; e++)
        if (--x->pending[g->out[e]] == 0)
            push_ready(s, (item){it.inst, g->out[e]});
    if (x->done == x->nnodes) {
        end_replay(s, x);
        complete(s, (item){NO_INST, x->task});
    }
}

static job *new_job(sim *s)
{
    job *j = s->free_jobs;
    if (j) {
        s->free_jobs = j->next;
        s->nfree_jobs--;
    } else if (!(j = malloc(sizeof *j))) {
        hbg__exec_set_error("sim: no memory for a job");
        fail(s, HBG_E_NOMEM);
        return NULL;
    }
    j->next = NULL;
    j->next_block = j->blocks_done = 0;
    j->cb = NULL;
    return j;
}

static void free_job(sim *s, job *j)
{
    if (j->cb) {
        j->cb->next = s->free_calls;
        s->free_calls = j->cb;
        j->cb = NULL;
    }
    /* N independent tasks queue N jobs at once: kept, they would hold
     * that peak (48 bytes a job) until the device is closed. */
    if (s->nfree_jobs >= HBG__SIM_SPARE_JOBS) {
        free(j);
        return;
    }
    j->next = s->free_jobs;
    s->free_jobs = j;
    s->nfree_jobs++;
}

size_t hbg__sim_spare_jobs(hbg_device *d)
{
    sim *s = S(d);
    pthread_mutex_lock(&s->m);
    size_t n = s->nfree_jobs;
    pthread_mutex_unlock(&s->m);
    return n;
}

/* The kernel call of a ready item: a task's read in place from the
 * image, a node's resolved against its replay (which may fail). Dispatch
 * builds it to check it and learn its cores; place() builds it again when
 * a core takes it (the image does not change during a run). */
static hbg_status build_call(sim *s, const item *it, hbg__exec_call *c)
{
    if (it->inst == NO_INST) {
        hbg__exec_task_call(s->im, it->idx, s->dev.rank, s->dev.nranks, s->dev.services, c);
        return HBG_OK;
    }
    return hbg__exec_node_call(s->im, s->insts[it->inst].replay, it->idx, s->dev.rank, s->dev.nranks,
                               s->dev.services, c);
}

static void enqueue(sim *s, job *j)
{
    jobq *q = &s->q[j->core];
    if (q->tail)
        q->tail->next = j;
    else
        q->head = j;
    q->tail = j;
}

/* Starts the replay of REPLAY task t: its roots become ready. */
static void start_replay(sim *s, uint32_t t)
{
    const hbg__exec_image *im = s->im;
    uint32_t rp = im->tasks[t].replay;
    const hbg__exec_dag *g = &s->ddag[im->replays[rp].def];
    if (g->n == 0) {
        s->stats.replays++;
        complete(s, (item){NO_INST, t});
        return;
    }
    uint32_t *pending = malloc(g->n * sizeof *pending);
    if (!pending) {
        hbg__exec_set_error("sim: no memory for the %u nodes of task %u's replay", g->n, t);
        fail(s, HBG_E_NOMEM);
        return;
    }
    s->stats.replays++; /* one that started: not one memory refused */
    uint32_t xi = s->ninst++;
    inst *x = &s->insts[xi];
    *x = (inst){.task = t, .replay = rp, .nnodes = g->n, .dag = g, .pending = pending};
    memcpy(pending, g->npred, g->n * sizeof *pending);
    s->live_nodes += g->n;
    for (uint32_t n = 0; n < g->n; n++)
        if (pending[n] == 0)
            push_ready(s, (item){xi, n});
}

/* Starts the waiting replays, in the order they became ready, while their
 * nodes fit the window; the first always does when none is under way.
 * Whether one started. */
static bool start_deferred(sim *s)
{
    bool started = false;
    while (s->fhead < s->ftail && s->status == HBG_OK) {
        uint32_t t = s->deferred[s->fhead];
        uint32_t n = s->ddag[s->im->replays[s->im->tasks[t].replay].def].n;
        if (s->live_nodes && n > REPLAY_NODES - s->live_nodes)
            break;
        s->fhead++;
        start_replay(s, t);
        started = true;
    }
    return started;
}

/* A ready item, outer task or replayed node alike: read its predicate,
 * then skip it, expand it (a REPLAY task), complete it at once (DUMMY and
 * ALLOC) or queue its kernel call. */
static void dispatch(sim *s, item it)
{
    const hbg__exec_image *im = s->im;
    const bool task = it.inst == NO_INST;
    const inst *x = task ? NULL : &s->insts[it.inst];
    hbg_status st = HBG_OK;
    bool go = true;
    uint8_t kind;
    if (task) {
        const hbg_img_task *k = &im->tasks[it.idx];
        kind = k->kind;
        go = !k->has_pred || hbg__exec_task_pred(im, it.idx);
    } else {
        const hbg_def_node *nd = &im->defs[im->replays[x->replay].def].nodes[it.idx];
        kind = nd->kind;
        if (nd->has_pred)
            st = hbg__exec_node_pred(im, mem_check, &s->mem, x->replay, it.idx, &go);
    }
    if (st) {
        fail(s, st);
        return;
    }
    if (!go) {
        s->stats.tasks_skipped++;
        complete(s, it);
        return;
    }
    if (task && kind == HBG_TASK_REPLAY) {
        s->deferred[s->ftail++] = it.idx; /* start_deferred() starts it */
        return;
    }
    if (kind != HBG_TASK_KERNEL) {
        complete(s, it);
        return;
    }
    job *j = new_job(s);
    if (!j)
        return;
    j->it = it;
    j->task = task ? it.idx : x->task;
    j->node = task ? HBG_EXEC_NO_NODE : it.idx;
    st = build_call(s, &it, &s->scratch);
    if (st) {
        free_job(s, j);
        fail(s, st);
        return;
    }
    j->core = s->scratch.core;
    j->blocks = s->scratch.blocks;
    enqueue(s, j);
}

static core *take_idle(sim *s, int type)
{
    return s->nidle[type] ? s->idle[type][--s->nidle[type]] : NULL;
}

static void release(sim *s, core *c)
{
    c->job = NULL;
    c->partner = NULL;
    s->idle[c->type][s->nidle[c->type]++] = c;
}

/* Next block of the job at the head of queue `qi` goes to core `c`. */
static void place(sim *s, int qi, core *c, core *partner)
{
    jobq *q = &s->q[qi];
    job *j = q->head;
    if (!j->cb) {
        j->cb = s->free_calls; /* never empty: see free_calls */
        s->free_calls = j->cb->next;
        (void)build_call(s, &j->it, &j->cb->call); /* checked at dispatch */
    }
    c->job = j;
    c->block = j->next_block++;
    c->part = qi == HBG_CORE_AIV ? HBG_CORE_AIV : HBG_CORE_AIC;
    c->partner = partner;
    if (partner)
        partner->partner = c;
    if (j->next_block == j->blocks) {
        q->head = j->next;
        if (!q->head)
            q->tail = NULL;
    }
    s->in_flight++;
    pthread_cond_signal(&c->cv);
}

static void assign(sim *s)
{
    /* MIX first: it needs a core of each type at once and would otherwise
     * wait behind a steady stream of single-core work. */
    while (s->q[HBG_CORE_MIX].head && s->nidle[HBG_CORE_AIC] && s->nidle[HBG_CORE_AIV]) {
        core *c = take_idle(s, HBG_CORE_AIC);
        core *v = take_idle(s, HBG_CORE_AIV);
        place(s, HBG_CORE_MIX, c, v);
    }
    for (int t = HBG_CORE_AIC; t <= HBG_CORE_AIV; t++)
        while (s->q[t].head && s->nidle[t])
            place(s, t, take_idle(s, t), NULL);
}

static void finish(sim *s)
{
    s->finished = true;
    pthread_cond_broadcast(&s->done_cv);
}

/* One pass over everything that changed. Cores need the lock to report, so
 * nothing changes while this runs and one pass reaches a fixed point. */
static void sched_step(sim *s)
{
    if (s->status == HBG_OK) {
        do {
            while (s->dhead < s->dtail)
                complete(s, s->done[s->dhead++ & s->ring_mask]);
            while (s->rhead < s->rtail && s->status == HBG_OK)
                dispatch(s, s->ready[s->rhead++ & s->ring_mask]);
        } while (start_deferred(s));
        if (s->status == HBG_OK)
            assign(s);
    }
    if (s->status != HBG_OK) {
        if (s->in_flight == 0)
            finish(s);
    } else if (s->tasks_done == s->im->ntasks) {
        finish(s);
    } else if (s->in_flight == 0 && s->rhead == s->rtail && s->dhead == s->dtail) {
        hbg__exec_set_error("device: deadlock: %u of %u tasks never became ready (a fanin cycle)",
                           s->im->ntasks - s->tasks_done, s->im->ntasks);
        fail(s, HBG_E_DEVICE);
        finish(s);
    }
}

static void *sched_main(void *p)
{
    sim *s = p;
    pthread_mutex_lock(&s->m);
    for (;;) {
        while (!s->quit && !(s->active && !s->finished && s->work))
            pthread_cond_wait(&s->sched_cv, &s->m);
        if (s->quit)
            break;
        s->work = false;
        sched_step(s);
    }
    pthread_mutex_unlock(&s->m);
    return NULL;
}

static void block_done(sim *s, job *j)
{
    s->in_flight--;
    if (++j->blocks_done == j->blocks) {
        if (s->status == HBG_OK) {
            s->stats.tasks_run++;
            push_done(s, j->it);
        }
        free_job(s, j);
    }
    kick(s);
}

/* The device whose core this thread is, NULL on any other thread: a
 * kernel that runs this device again (through another runtime sharing
 * it) would wait on run_lock for the run that waits for the kernel, and
 * so would one that runs another device whose kernel runs this one (each
 * run notes the device whose kernel started it: sim.outer). */
static _Thread_local const sim *tl_core_of;

/* Who waits for whom, across threads. A device's run waits for each of
 * its kernels; a kernel that runs device E waits for E's run lock, which
 * E's run under way holds until its own kernels return. The edges, D
 * waits for E: a run of E started by a kernel of D (E's `nest`, D its
 * `outer`), and a kernel of D blocked on E's run lock (a wf_edge on that
 * kernel's stack). A kernel's run that would close a cycle is refused;
 * so the graph has none, and a walk of it ends. All of it under
 * wf_lock, taken around a run's start and end: the device side, never
 * the bind. */
typedef struct wf_edge wf_edge;
static pthread_mutex_t wf_lock = PTHREAD_MUTEX_INITIALIZER;
static wf_edge *wf_edges;
static unsigned wf_nedges;

static void wf_link(wf_edge *e)
{
    e->next = wf_edges;
    wf_edges = e;
    wf_nedges++;
}

static void wf_unlink(const wf_edge *e)
{
    for (wf_edge **p = &wf_edges; *p; p = &(*p)->next)
        if (*p == e) {
            *p = e->next;
            wf_nedges--;
            return;
        }
}

/* Whether a run of s from this thread waits for itself: s is running a
 * kernel that (through the devices its kernels ran) made this call.
 * Under wf_lock. */
static bool runs_inside(const sim *s)
{
    for (const sim *p = tl_core_of; p; p = p->outer)
        if (p == s)
            return true;
    return false;
}

/* Whether d's run waits, through the edges, for a run on this thread's
 * chain of devices (this kernel's, and the runs that wait for it).
 * Under wf_lock. A walk deeper than there are edges went round a cycle,
 * which the refusals leave none of: taken as one all the same. */
static bool wf_reaches(const sim *d, unsigned depth)
{
    if (runs_inside(d) || depth > wf_nedges)
        return true;
    for (const wf_edge *e = wf_edges; e; e = e->next)
        if (e->from == d && wf_reaches(e->to, depth + 1))
            return true;
    return false;
}

/* Takes s's run lock for a run from this thread, or refuses it
 * (HBG_E_STATE, the reason set) where the wait would never end: s runs
 * the kernel that calls (runs_inside), or s's run waits for a run that
 * waits for this kernel (two threads' kernels running each other's
 * devices). A host thread's wait is no edge: no run waits for it. */
static hbg_status wf_enter(sim *s)
{
    const sim *me = tl_core_of;
    pthread_mutex_lock(&wf_lock);
    if (runs_inside(s)) {
        pthread_mutex_unlock(&wf_lock);
        hbg__exec_set_error("sim: a run of this device from one of its own kernels: the run under way waits for the "
                            "kernel, which would wait for it");
        return HBG_E_STATE;
    }
    if (pthread_mutex_trylock(&s->run_lock) != 0) {
        if (me && wf_reaches(s, 0)) {
            pthread_mutex_unlock(&wf_lock);
            hbg__exec_set_error("sim: a run of this device from a kernel whose own run it would wait for: the run "
                                "under way here waits, through the devices its kernels run, for this kernel");
            return HBG_E_STATE;
        }
        wf_edge w = {me, s, NULL};
        if (me)
            wf_link(&w);
        pthread_mutex_unlock(&wf_lock);
        pthread_mutex_lock(&s->run_lock);
        pthread_mutex_lock(&wf_lock);
        if (me)
            wf_unlink(&w);
    }
    s->outer = me;
    s->nest = (wf_edge){me, s, NULL};
    if (me)
        wf_link(&s->nest);
    pthread_mutex_unlock(&wf_lock);
    return HBG_OK;
}

static void wf_leave(sim *s)
{
    pthread_mutex_lock(&wf_lock);
    if (s->outer)
        wf_unlink(&s->nest);
    s->outer = NULL;
    pthread_mutex_unlock(&s->run_lock);
    pthread_mutex_unlock(&wf_lock);
}

static void *core_main(void *p)
{
    core *c = p;
    sim *s = c->s;
    tl_core_of = s;
    pthread_mutex_lock(&s->m);
    for (;;) {
        while (!s->quit && !c->job)
            pthread_cond_wait(&c->cv, &s->m);
        if (s->quit)
            break;
        job *j = c->job;
        uint32_t block = c->block;
        uint8_t part = c->part;
        /* After a failure, calls already handed out but not started are
         * dropped: the run is over, only running calls may finish. */
        bool run = s->status == HBG_OK;
        pthread_mutex_unlock(&s->m);
        hbg_status st = run ? hbg__exec_invoke(s->kt, &j->cb->call, block, part, j->task, j->node) : HBG_OK;
        pthread_mutex_lock(&s->m);
        if (st)
            fail(s, st);
        if (j->core != HBG_CORE_MIX) {
            release(s, c);
            block_done(s, j);
        } else if (part == HBG_CORE_AIC && s->status == HBG_OK) {
            core *v = c->partner;
            c->job = NULL; /* stays reserved until the AIV part ends */
            v->job = j;
            v->block = block;
            v->part = HBG_CORE_AIV;
            pthread_cond_signal(&v->cv);
        } else {
            core *other = c->partner;
            release(s, c);
            release(s, other);
            block_done(s, j);
        }
    }
    pthread_mutex_unlock(&s->m);
    return NULL;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Device-side scratch for one run, sized from the validated image. */
static hbg_status setup_run(sim *s, const hbg__exec_image *im)
{
    hbg_status st = hbg__exec_dag_tasks(im, &s->tdag);
    if (st)
        return st;
    /* Ready and done hold each task at most once, and each node of a
     * replay under way: those nodes stay within REPLAY_NODES. */
    uint64_t items = (uint64_t)im->ntasks + (im->replay_nodes < REPLAY_NODES ? im->replay_nodes : REPLAY_NODES);
    uint64_t ring = 1;
    while (ring < items)
        ring <<= 1;
    s->ring_mask = ring - 1;
    s->ddag = calloc(im->ndefs ? im->ndefs : 1, sizeof *s->ddag);
    s->insts = calloc(im->nreplay_tasks ? im->nreplay_tasks : 1, sizeof *s->insts);
    s->deferred = malloc((im->nreplay_tasks ? im->nreplay_tasks : 1) * sizeof *s->deferred);
    s->ready = malloc(ring * sizeof *s->ready);
    s->done = malloc(ring * sizeof *s->done);
    if (!s->ddag || !s->insts || !s->deferred || !s->ready || !s->done) {
        hbg__exec_set_error("sim: no memory for the run state of %llu tasks and nodes", (unsigned long long)items);
        return HBG_E_NOMEM;
    }
    for (uint32_t d = 0; d < im->ndefs; d++)
        if ((st = hbg__exec_dag_def(&im->defs[d], &s->ddag[d])))
            return st;
    for (uint32_t t = 0; t < im->ntasks; t++)
        if (s->tdag.npred[t] == 0)
            push_ready(s, (item){NO_INST, t});
    return HBG_OK;
}

static void teardown_run(sim *s, const hbg__exec_image *im)
{
    hbg__exec_dag_free(&s->tdag);
    if (s->ddag)
        for (uint32_t d = 0; d < im->ndefs; d++)
            hbg__exec_dag_free(&s->ddag[d]);
    free(s->ddag);
    for (uint32_t i = 0; i < s->ninst; i++) /* a failed run leaves replays under way */
        free(s->insts[i].pending);
    free(s->insts);
    free(s->deferred);
    free(s->ready);
    free(s->done);
    for (int q = 0; q < 3; q++) {
        for (job *j = s->q[q].head, *n; j; j = n) {
            n = j->next;
            free_job(s, j);
        }
        s->q[q].head = s->q[q].tail = NULL;
    }
    s->ddag = NULL;
    s->insts = NULL;
    s->deferred = NULL;
    s->ready = s->done = NULL;
    s->ninst = s->live_nodes = s->fhead = s->ftail = 0;
    s->rhead = s->rtail = s->dhead = s->dtail = 0;
    s->im = NULL;
    s->kt = NULL;
}

static hbg_status sim_run(hbg_device *d, uint64_t arena, uint64_t bytes, const hbg_kernel_table *kt,
                          hbg_run_stats *stats)
{
    sim *s = S(d);
    if (wf_enter(s) != HBG_OK) {
        if (stats)
            memset(stats, 0, sizeof *stats);
        return HBG_E_STATE;
    }
    uint64_t t0 = now_ns();
    hbg_run_stats rs = {0};
    hbg__exec_image im;
    hbg_status st;
    if (!sim_mem_contains(&s->mem, arena, bytes)) {
        hbg__exec_set_error("sim: arena [0x%llx, +%llu) is not inside one device allocation",
                           (unsigned long long)arena, (unsigned long long)bytes);
        memset(&im, 0, sizeof im);
        st = HBG_E_INVAL;
        goto out;
    }
    st = hbg__exec_open(&im, (void *)(uintptr_t)arena, bytes, kt, mem_check, &s->mem);
    if (st)
        goto out;
    /* Blocks and replays multiply: a small image could keep the device
     * busy for days. Refused before anything runs, as a bad record is. */
    if (im.steps > s->max_steps) {
        hbg__exec_set_error("sim: the image asks for %llu steps (tasks, replayed nodes and kernel blocks), past the "
                            "limit of %llu (hbg_sim_config.max_steps)",
                            (unsigned long long)im.steps, (unsigned long long)s->max_steps);
        hbg__exec_close(&im);
        st = HBG_E_DEVICE;
        goto out;
    }

    pthread_mutex_lock(&s->m);
    memset(&s->stats, 0, sizeof s->stats);
    s->status = HBG_OK;
    s->msg[0] = 0;
    s->im = &im;
    s->kt = kt;
    s->tasks_done = 0;
    st = setup_run(s, &im);
    if (!st) {
        s->active = true;
        s->finished = false;
        kick(s);
        while (!s->finished)
            pthread_cond_wait(&s->done_cv, &s->m);
        s->active = false;
        rs = s->stats;
        st = s->status;
        if (st)
            hbg__exec_set_error("%s", s->msg);
    }
    teardown_run(s, &im);
    pthread_mutex_unlock(&s->m);
    hbg__exec_close(&im);
out:
    if (stats) {
        *stats = rs;
        stats->device_wall_ns = now_ns() - t0;
    }
    wf_leave(s);
    return st;
}

static hbg_status sim_alloc(hbg_device *d, uint64_t bytes, uint64_t *addr)
{
    return sim_mem_alloc(&S(d)->mem, bytes, addr);
}

hbg_status hbg__sim_alloc_at(hbg_device *d, uint64_t addr, uint64_t bytes)
{
    uint64_t got;
    return sim_mem_alloc_at(&S(d)->mem, addr, bytes, &got);
}

static void sim_free(hbg_device *d, uint64_t addr)
{
    sim_mem_free(&S(d)->mem, addr);
}

static hbg_status check_range(sim *s, uint64_t addr, const void *host, uint64_t n, const char *op)
{
    if (!host) {
        hbg__exec_set_error("sim: %s of %llu bytes at 0x%llx: no host memory (NULL)", op, (unsigned long long)n,
                           (unsigned long long)addr);
        return HBG_E_INVAL;
    }
    if (!sim_mem_contains(&s->mem, addr, n)) {
        hbg__exec_set_error("sim: %s of %llu bytes at 0x%llx: not inside one device allocation", op,
                           (unsigned long long)n, (unsigned long long)addr);
        return HBG_E_INVAL;
    }
    return HBG_OK;
}

static hbg_status sim_h2d(hbg_device *d, uint64_t dst, const void *src, uint64_t n)
{
    if (n == 0)
        return HBG_OK;
    hbg_status st = check_range(S(d), dst, src, n, "h2d");
    if (!st)
        memcpy((void *)(uintptr_t)dst, src, (size_t)n);
    return st;
}

static hbg_status sim_d2h(hbg_device *d, void *dst, uint64_t src, uint64_t n)
{
    if (n == 0)
        return HBG_OK;
    hbg_status st = check_range(S(d), src, dst, n, "d2h");
    if (!st)
        memcpy(dst, (const void *)(uintptr_t)src, (size_t)n);
    return st;
}

static void stop_threads(sim *s)
{
    pthread_mutex_lock(&s->m);
    s->quit = true;
    pthread_cond_broadcast(&s->sched_cv);
    for (unsigned i = 0; i < s->nstarted_cores; i++)
        pthread_cond_signal(&s->cores[i].cv);
    pthread_mutex_unlock(&s->m);
    for (unsigned i = 0; i < s->nstarted_sched; i++)
        pthread_join(s->scheds[i], NULL);
    for (unsigned i = 0; i < s->nstarted_cores; i++)
        pthread_join(s->cores[i].th, NULL);
}

static void sim_destroy(hbg_device *d)
{
    sim *s = S(d);
    stop_threads(s);
    for (unsigned i = 0; i < s->ncv; i++)
        pthread_cond_destroy(&s->cores[i].cv);
    for (job *j = s->free_jobs, *nx; j; j = nx) {
        nx = j->next;
        free(j);
    }
    for (callbuf *b = s->free_calls, *nx; b; b = nx) {
        nx = b->next;
        free(b);
    }
    free(s->cores);
    free(s->scheds);
    free(s->idle[0]);
    free(s->idle[1]);
    sim_mem_fini(&s->mem);
    pthread_cond_destroy(&s->sched_cv);
    pthread_cond_destroy(&s->done_cv);
    pthread_mutex_destroy(&s->m);
    pthread_mutex_destroy(&s->run_lock);
    free(s);
}

static const hbg_device_ops sim_ops = {
    .name = "sim",
    .alloc = sim_alloc,
    .free = sim_free,
    .h2d = sim_h2d,
    .d2h = sim_d2h,
    .run = sim_run,
    .destroy = sim_destroy,
};

hbg_status hbg_sim_open(const hbg_sim_config *cfg, hbg_device **out)
{
    static const hbg_sim_config defaults = {0};
    if (!out) {
        hbg__exec_set_error("sim: nowhere to put the device (out is NULL)");
        return HBG_E_INVAL;
    }
    *out = NULL;
    if (!cfg)
        cfg = &defaults;
    uint32_t nranks = cfg->nranks ? cfg->nranks : 1;
    if (cfg->rank >= nranks) {
        hbg__exec_set_error("sim: rank %u is not below nranks %u", cfg->rank, nranks);
        return HBG_E_INVAL;
    }
    /* a thread each: past these a machine runs out of threads first */
    const struct {
        const char *name;
        unsigned n, max;
    } lim[] = {{"aic_cores", cfg->aic_cores, HBG_SIM_MAX_CORES},
               {"aiv_cores", cfg->aiv_cores, HBG_SIM_MAX_CORES},
               {"schedulers", cfg->schedulers, HBG_SIM_MAX_SCHEDULERS}};
    for (size_t i = 0; i < sizeof lim / sizeof lim[0]; i++)
        if (lim[i].n > lim[i].max) {
            hbg__exec_set_error("sim: %s %u is past the limit of %u (a thread each)", lim[i].name, lim[i].n,
                                lim[i].max);
            return HBG_E_INVAL;
        }
    sim *s = calloc(1, sizeof *s);
    if (!s) {
        hbg__exec_set_error("sim: out of memory for the device");
        return HBG_E_NOMEM;
    }
    s->dev.ops = &sim_ops;
    s->dev.rank = cfg->rank;
    s->dev.nranks = nranks;
    s->ncores[HBG_CORE_AIC] = cfg->aic_cores ? cfg->aic_cores : 2;
    s->ncores[HBG_CORE_AIV] = cfg->aiv_cores ? cfg->aiv_cores : 2;
    s->nsched = cfg->schedulers ? cfg->schedulers : 1;
    s->max_steps = cfg->max_steps ? cfg->max_steps : HBG_SIM_MAX_STEPS;
    sim_mem_init(&s->mem, cfg->mem_limit);
    pthread_mutex_init(&s->run_lock, NULL);
    pthread_mutex_init(&s->m, NULL);
    pthread_cond_init(&s->sched_cv, NULL);
    pthread_cond_init(&s->done_cv, NULL);

    unsigned n = s->ncores[0] + s->ncores[1];
    s->cores = calloc(n, sizeof *s->cores);
    s->scheds = calloc(s->nsched, sizeof *s->scheds);
    s->idle[0] = calloc(s->ncores[0], sizeof *s->idle[0]);
    s->idle[1] = calloc(s->ncores[1], sizeof *s->idle[1]);
    if (!s->cores || !s->scheds || !s->idle[0] || !s->idle[1]) {
        hbg__exec_set_error("sim: out of memory for %u cores and %u schedulers", n, s->nsched);
        sim_destroy(&s->dev);
        return HBG_E_NOMEM;
    }
    /* A job holds a call from its first block placed to its last done:
     * each such job has a block on a core, or is the head of its queue
     * with blocks still to place (place() takes the head's first). */
    for (unsigned i = 0; i < n + 3; i++) {
        callbuf *b = malloc(sizeof *b);
        if (!b) {
            hbg__exec_set_error("sim: out of memory for the kernel calls of %u cores", n);
            sim_destroy(&s->dev);
            return HBG_E_NOMEM;
        }
        b->next = s->free_calls;
        s->free_calls = b;
    }
    for (unsigned i = 0; i < n; i++) {
        core *c = &s->cores[i];
        c->s = s;
        c->type = i < s->ncores[0] ? HBG_CORE_AIC : HBG_CORE_AIV;
        pthread_cond_init(&c->cv, NULL);
        s->ncv++;
        s->idle[c->type][s->nidle[c->type]++] = c;
    }
    for (unsigned i = 0; i < n; i++) {
        if (pthread_create(&s->cores[i].th, NULL, core_main, &s->cores[i])) {
            hbg__exec_set_error("sim: cannot start core thread %u", i);
            sim_destroy(&s->dev);
            return HBG_E_NOMEM;
        }
        s->nstarted_cores++;
    }
    for (unsigned i = 0; i < s->nsched; i++) {
        if (pthread_create(&s->scheds[i], NULL, sched_main, s)) {
            hbg__exec_set_error("sim: cannot start scheduler thread %u", i);
            sim_destroy(&s->dev);
            return HBG_E_NOMEM;
        }
        s->nstarted_sched++;
    }
    *out = &s->dev;
    return HBG_OK;
}
