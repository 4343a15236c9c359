/* StarPU's side: a data handle per atom, registered once, and each peer
 * task built with starpu_task_build (the first half of starpu_task_insert;
 * it returns the task, which explicit deps and the edge count need) and
 * submitted (kept, not destroyed, until the pass ends: explicit deps name
 * submitted tasks), with an empty CPU codelet, STARPU_R / STARPU_W / STARPU_RW
 * accesses in a STARPU_DATA_MODE_ARRAY and the case's explicit deps in a
 * STARPU_TASK_DEPS_ARRAY. The workers are paused while a pass is built, so
 * no task runs during the timed part; the pass then runs to completion,
 * which leaves every handle without pending accessors for the next one. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <starpu.h>

#include "peers_starpu.h"

struct peers_sp {
    const peers_stream *s;
    starpu_data_handle_t *h;
    char *mem;
    struct starpu_task **task;
    struct starpu_data_descr *descr;
    struct starpu_task **deps;
    bool no_deps;            /* the fault: explicit deps left out */
};

static void empty_cpu(void *buffers[], void *arg)
{
    (void)buffers, (void)arg;
}

static struct starpu_codelet empty_cl = {
    .where = STARPU_CPU,
    .cpu_funcs = {empty_cpu},
    .nbuffers = STARPU_VARIABLE_NBUFFERS,
    .name = "peers_empty",
};

static char own_home[4096]; /* the StarPU home this run made, "" for none */

/* Removes path and everything below it (no link is followed). */
static void remove_tree(const char *path)
{
    struct stat sb;
    if (lstat(path, &sb))
        return;
    if (S_ISDIR(sb.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            char sub[4096];
            if (snprintf(sub, sizeof sub, "%s/%s", path, e->d_name) < (int)sizeof sub)
                remove_tree(sub);
        }
        if (d)
            closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

hbg_status peers_starpu_init(char *msg, size_t cap)
{
    /* Quiet and quick unless the caller says otherwise: one CPU worker,
     * no accelerators, a scheduler with no performance model to calibrate. */
    setenv("STARPU_SILENT", "1", 0);
    setenv("STARPU_NCPU", "1", 0);
    setenv("STARPU_NCUDA", "0", 0);
    setenv("STARPU_NOPENCL", "0", 0);
    setenv("STARPU_SCHED", "eager", 0);
    /* StarPU keeps its sampling files under $STARPU_HOME/.starpu: unless
     * the caller chose a home, a folder of this run's own, removed at
     * shutdown, so no run leaves files behind */
    if (!getenv("STARPU_HOME")) {
        snprintf(own_home, sizeof own_home, "%s/hbg-starpu.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        if (!mkdtemp(own_home)) {
            snprintf(msg, cap, "cannot create a StarPU home in %s: %s",
                     getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", strerror(errno));
            own_home[0] = '\0';
            return HBG_E_IO;
        }
        setenv("STARPU_HOME", own_home, 1);
    }
    int r = starpu_init(NULL);
    if (r) {
        snprintf(msg, cap, "starpu_init failed (%d)", r);
        return HBG_E_INVAL;
    }
    starpu_pause();
    return HBG_OK;
}

void peers_starpu_shutdown(void)
{
    starpu_resume();
    starpu_shutdown();
    if (own_home[0]) {
        remove_tree(own_home);
        own_home[0] = '\0';
    }
}

peers_sp *peers_starpu_prepare(const peers_stream *s)
{
    peers_sp *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    uint32_t maxacc, maxdeps;
    peers_widest(s, &maxacc, &maxdeps);
    p->s = s;
    p->h = calloc((size_t)s->natoms + 1, sizeof *p->h);
    p->mem = calloc((size_t)s->natoms + 1, 1);
    p->task = calloc((size_t)s->npeer + 1, sizeof *p->task);
    p->descr = calloc(maxacc, sizeof *p->descr);
    p->deps = calloc(maxdeps, sizeof *p->deps);
    if (!p->h || !p->mem || !p->task || !p->descr || !p->deps) {
        peers_starpu_release(p);
        return NULL;
    }
    for (uint32_t a = 0; a < s->natoms; a++)
        starpu_variable_data_register(&p->h[a], STARPU_MAIN_RAM, (uintptr_t)&p->mem[a], 1);
    return p;
}

void peers_starpu_release(peers_sp *p)
{
    if (!p)
        return;
    for (uint32_t a = 0; p->h && a < p->s->natoms; a++)
        if (p->h[a])
            starpu_data_unregister_no_coherency(p->h[a]);
    free(p->h);
    free(p->mem);
    free(p->task);
    free(p->descr);
    free(p->deps);
    free(p);
}

static const enum starpu_data_access_mode mode_of[4] = {STARPU_NONE, STARPU_R, STARPU_W, STARPU_RW};

static int build_all(peers_sp *p)
{
    const peers_stream *s = p->s;
    for (uint32_t i = 0; i < s->npeer; i++) {
        const peers_acc *acc = s->acc + s->acc_off[i];
        uint32_t n = s->acc_cnt[i], nd = p->no_deps ? 0 : s->pdep_cnt[i];
        for (uint32_t k = 0; k < n; k++)
            p->descr[k] = (struct starpu_data_descr){.handle = p->h[acc[k].atom], .mode = mode_of[acc[k].mode]};
        for (uint32_t k = 0; k < nd; k++)
            p->deps[k] = p->task[s->pdeps[s->pdep_off[i] + k]];
        struct starpu_task *t = starpu_task_build(&empty_cl, STARPU_DATA_MODE_ARRAY, p->descr, (int)n,
                                                  STARPU_TASK_DEPS_ARRAY, (unsigned)nd, p->deps, 0);
        if (!t)
            return -1;
        /* StarPU lets a task depend on a submitted one only if that one
         * is not destroyed when it ends; all are destroyed after the pass. */
        t->destroy = 0;
        p->task[i] = t;
        if (starpu_task_submit(t))
            return -1;
    }
    return 0;
}

typedef struct ptr_ix {
    const void *p;
    uint32_t i;
} ptr_ix;

static int by_ptr(const void *a, const void *b)
{
    const ptr_ix *x = a, *y = b;
    return x->p < y->p ? -1 : x->p > y->p;
}

/* StarPU's own successor lists. A writer after several readers waits for
 * them through an empty synchronization task StarPU inserts (no codelet,
 * not a task of the pass), so an edge is a pair of tasks of the pass
 * joined directly or through such tasks; each pair is counted once. */
typedef struct walker {
    peers_sp *p;
    const ptr_ix *ix;
    uint32_t *stamp, cur;
    struct starpu_task **succ, **stack, **seen;
    unsigned cap, nstack, nseen, capstack;
    uint64_t edges;
} walker;

static bool push(walker *w, struct starpu_task *t)
{
    for (unsigned k = 0; k < w->nseen; k++)
        if (w->seen[k] == t)
            return true;
    if (w->nstack == w->capstack) {
        unsigned c = w->capstack ? w->capstack * 2 : 64;
        struct starpu_task **a = realloc(w->stack, c * sizeof *a), **b = a ? realloc(w->seen, c * sizeof *b) : NULL;
        if (a)
            w->stack = a;
        if (!b)
            return false;
        w->seen = b;
        w->capstack = c;
    }
    w->seen[w->nseen++] = t;
    w->stack[w->nstack++] = t;
    return true;
}

/* The successors of `t`, into w->succ; their number, or -1. */
static int succs_of(walker *w, struct starpu_task *t)
{
    int n = starpu_task_get_task_succs(t, w->cap, w->succ);
    if (n > (int)w->cap) {
        struct starpu_task **a = realloc(w->succ, (size_t)n * sizeof *a);
        if (!a)
            return -1;
        w->succ = a;
        w->cap = (unsigned)n;
        n = starpu_task_get_task_succs(t, w->cap, w->succ);
    }
    return n;
}

static bool walk_from(walker *w, uint32_t i, uint32_t npeer)
{
    w->nstack = w->nseen = 0;
    w->cur = i + 1;
    if (!push(w, w->p->task[i]))
        return false;
    while (w->nstack) {
        struct starpu_task *t = w->stack[--w->nstack];
        int n = succs_of(w, t);
        if (n < 0)
            return false;
        for (int k = 0; k < n; k++) {
            ptr_ix key = {w->succ[k], 0};
            const ptr_ix *f = bsearch(&key, w->ix, npeer, sizeof *w->ix, by_ptr);
            if (!f) {
                if (!push(w, w->succ[k])) /* a synchronization task: through it */
                    return false;
            } else if (w->stamp[f->i] != w->cur) {
                w->stamp[f->i] = w->cur;
                w->edges++;
            }
        }
    }
    return true;
}

static hbg_status count_edges(peers_sp *p, uint64_t *edges)
{
    const peers_stream *s = p->s;
    ptr_ix *ix = malloc(((size_t)s->npeer + 1) * sizeof *ix);
    walker w = {.p = p, .ix = ix, .stamp = calloc((size_t)s->npeer + 1, sizeof *w.stamp), .cap = 1024};
    w.succ = malloc(w.cap * sizeof *w.succ);
    bool ok = ix && w.stamp && w.succ;
    for (uint32_t i = 0; i < s->npeer && ok; i++)
        ix[i] = (ptr_ix){p->task[i], i};
    if (ok)
        qsort(ix, s->npeer, sizeof *ix, by_ptr);
    for (uint32_t i = 0; i < s->npeer && ok; i++)
        ok = walk_from(&w, i, s->npeer);
    *edges = w.edges;
    free(ix);
    free(w.stamp);
    free(w.succ);
    free(w.stack);
    free(w.seen);
    return ok ? HBG_OK : HBG_E_NOMEM;
}

hbg_status peers_starpu_pass(peers_sp *p, uint64_t *ns, uint64_t *edges)
{
    uint64_t t0 = hbg_mono_ns();
    int r = build_all(p);
    *ns = hbg_mono_ns() - t0;
    hbg_status st = r ? HBG_E_INVAL : HBG_OK;
    if (!st && edges)
        st = count_edges(p, edges);
    starpu_resume();
    starpu_task_wait_for_all();
    starpu_pause();
    for (uint32_t i = 0; i < p->s->npeer && p->task[i]; i++) {
        starpu_task_destroy(p->task[i]);
        p->task[i] = NULL;
    }
    return st;
}

void peers_starpu_drop_deps(peers_sp *p)
{
    p->no_deps = true;
}
