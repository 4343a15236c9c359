/* Emission is one pass over the spans, one over the passes and one over the
 * records; every per-event number goes through the hand-written formatter
 * in jw.c, since the trace is about as large as the log. */
#include "tools/timeline.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/clockwin.h"
#include "tools/hmap.h"
#include "tools/hugemem.h"
#include "tools/jw.h"
#include "tools/nodespans.h"
#include "tools/spans.h"
#include "util/hash.h"
#include "util/vec.h"

typedef struct proc {
    uint64_t pid;
    size_t rank;            /* its rank in its run, as hbg run numbers them (number_procs) */
    uint32_t run;           /* its run (ps_run_of of its first record) */
    size_t order;           /* its lane's place: by (run, pid) */
    uint64_t dev_pid;       /* its device lane's process (number_procs) */
    uint64_t lane_pid;      /* its host lane's process: pid, or one below 2^32 (number_procs) */
    bool has_dev;
    bool has_anchor;
    bool has_span_tid;      /* span_tid: the thread of its first host span */
    uint64_t span_tid;
    size_t a0, na;          /* its anchors: tl.anc[a0 .. a0+na), in log order */
} proc;

typedef struct bspan {
    uint64_t pid, inv;
    size_t idx;
} bspan;

typedef struct thr {
    uint64_t pid, tid;
    uint64_t real_tid;      /* a pipeline-slot lane: the thread it splits */
    uint32_t slot;          /* its slot, from 1; 0: a real thread */
} thr;

/* A thread that interleaved runs (pipelined invocations: one run's
 * chip.run still open when the next one's starts) cannot nest as one lane.
 * Each run of such a thread is drawn on a lane of its pipeline slot: the
 * first slot whose previous run has ended. */
typedef struct slotlane {
    uint64_t pid, inv, real_tid, tid;
    uint32_t slot;
} slotlane;

/* A run's root span, for finding the threads whose runs overlap. */
typedef struct rootkey {
    uint64_t pid, tid, ts, end, inv;
    size_t idx;             /* the span, in L->span */
} rootkey;

/* A device-clock span name: one lane of each rank's device process. */
typedef struct devlane {
    lx_slice name;
    uint32_t slot;          /* the pipeline slot of its runs (0: not split) */
} devlane;

/* Where an invocation's device spans are drawn: its runner_run span's
 * start, and the smallest device ts of the invocation (device_wall's,
 * normally 0) that the others are offsets from. */
typedef struct devplace {
    uint64_t pid, inv;
    uint64_t host_ts, dev_base;
    bool has_host;
} devplace;

/* Spans found not to nest: how many, the first of them in the log, and
 * the span it cuts. */
typedef struct nestbad {
    size_t n, first, other;
} nestbad;

/* A lane as the nesting check sees it (nest_note): its spans in log
 * order, each pushed on the lane's stack, a list through tl.stk. */
typedef struct nestlane {
    uint64_t last_end, last_ts; /* the last span's: (end, -ts) may only grow */
    size_t top;             /* its stack's top, in tl.stk, + 1; 0: empty */
    nestbad bad;            /* what it found while in order */
    bool unordered;         /* a span came out of end order: check_unordered's */
} nestlane;

/* An entry of a lane's stack; popped entries are reused. */
typedef struct nestlink {
    size_t span;
    uint64_t ts, end;       /* where it is drawn */
    size_t below;           /* the entry under it + 1; 0: none (free: the next free one) */
} nestlink;

/* A piece of an event that many events repeat (a lane's head, a line's
 * attributes), as written once, keyed by what it was made from: numbers,
 * and pointers to text that stays put while the trace is written (the
 * log's kept text is shared between identical copies, so the same text
 * is the same pointer). */
#define FRAG_SLOTS 128
#define FRAG_MAX 176
typedef struct frag {
    uint64_t key[5];        /* all 0: empty */
    uint32_t n;
    char text[FRAG_MAX];
} frag;

typedef struct tl {
    ps_log *L;
    jw w;
    tl_report *rep;
    dg_list *warn;
    proc *proc;
    size_t nproc, capproc;
    bspan *bs;
    size_t nbs;
    devplace *dp;           /* sorted by (pid, inv) */
    size_t ndp;
    hm_block dp_mem, bs_mem; /* dp's and bs's memory */
    size_t bs_hint[16], dp_hint[16]; /* by pid: where its last run was found in bs, dp */
    hm_block scratch;       /* sort_runs' room: nspan elements of the largest kind sorted */
    devlane *dl;
    size_t ndl, capdl;
    size_t dev_unplaced;
    const ps_anchor **anc;  /* every anchor, by pid, then in log order */
    ns_result ns;           /* the scheduler's node.* spans: submit -> dispatch, thread roles */
    rootkey *rk;            /* the runs' roots, by (pid, tid, ts, end, inv): collect_roots */
    size_t nrk;
    hm_block rk_mem;
    slotlane *sl;           /* runs moved to a pipeline-slot lane, by (pid, inv) */
    size_t nsl;
    size_t before_anchor;   /* host events before their process's first anchor */
    size_t wall_range;      /* events whose anchor's wall_ns puts them out of range */
    size_t anchor_bad;      /* events whose anchor's own reading is corrupt (ps_anchor_judge) */
    size_t anchor_bad_line; /* the first such anchor's line */
    uint64_t utc_sec;       /* the last second formatted, and its text */
    char utc_text[72];      /* room for six ints of any size: the Debug build checks snprintf's worst case */
    bool utc_valid;
    uint64_t wall_sec;      /* the second of wall_head and wall_mid, 0: none */
    bool wall_utc;          /* that second has a UTC text (gmtime took it) */
    size_t wall_nhead, wall_nmid;
    char wall_head[40];     /* ,"wall_ns":"<the second's digits> */
    char wall_mid[40];      /* ","utc":"<date>T<time>. */
    thr *thr;
    size_t nthr, capthr;
    hmap h;                 /* (kind, a, b) -> index + 1: processes (0), threads (1), nesting lanes (2), device lanes (3),
                             * tids past 2^32 (4) */
    uint64_t *low_tid;      /* every host lane's tid below 2^32, sorted, where some are not (collect_tids) */
    size_t nlow_tid;
    uint64_t *big_lane;     /* the lane of each tid past 2^32, by (4, pid, tid) in h */
    size_t nbig, capbig;
    uint64_t next_tid;      /* the next number below 2^32 to try for such a lane */
    uint64_t last_pid;      /* the last process found, at proc[last_proc - 1] (0: none) */
    uint32_t last_proc;
    uint64_t last_thr_pid, last_thr_tid; /* the last thread added (valid when has_last_thr) */
    bool has_last_thr;
    bool first;
    char *nbuf;
    size_t nbufcap;
    char *an;               /* write_attrs: the names given so far to keys written U+FFFD */
    size_t ancap;
    size_t *an_end;         /* where each ends in an */
    size_t an_endcap;
    struct by_start *order; /* one records line's records in start order */
    size_t caporder;
    uint64_t flow_id;
    uint32_t *rec_segs;     /* per pass: segment ids its records time (drawn from them, not the bind line) */
    bool span_multi;        /* some process wrote host spans from more than one thread */
    nestlane *nl;           /* the nesting check's lanes, found by (2, pid, tid) in h */
    size_t nnl, capnl;
    nestlink *stk;          /* the lanes' stacks' entries: room for one a span, touched as used */
    size_t nstk, stk_free;  /* stk_free: the first free entry + 1 */
    hm_block stk_mem;
    struct {
        uint64_t pid, tid;
        size_t at;          /* nl[at - 1]; 0: empty */
    } nl_cache[8];          /* lanes asked for lately, by (pid + tid) % 8: a rank's few lanes alternate */
    size_t nunordered;      /* lanes whose spans came out of end order */
    nestbad bad;            /* spans that start inside another of their lane and end after it */
    cw_set cw;              /* each process's window of plausible starts */
    size_t nrun;            /* the runs its processes are of (number_procs) */
    bool oom;
    frag *frags;            /* FRAG_SLOTS for event heads, then FRAG_SLOTS for args (NULL: none) */
} tl;

/* An array of n elements of sz bytes, on huge pages where the kernel has
 * them: these are hundreds of kilobytes on a large log, and a fault per
 * 4 KiB page costs about 10 us on these virtual machines (hugemem.h).
 * NULL when there is no memory. */
static void *big_array(hm_block *b, size_t n, size_t sz)
{
    if (n == 0)
        n = 1;
    if (sz && n > SIZE_MAX / sz)
        return NULL;
    return hm_alloc(b, n * sz) == 0 ? b->p : NULL;
}

/* The end of the run in order that starts at i. */
static size_t run_end(const char *a, size_t i, size_t n, size_t sz, int (*cmp)(const void *, const void *))
{
    size_t j = i + 1;
    while (j < n && cmp(a + (j - 1) * sz, a + j * sz) <= 0)
        j++;
    return j;
}

/* Sorts n elements of sz bytes, stably, as glibc's qsort (a merge sort)
 * does, so equal keys keep the same order: by merging the runs already in
 * order, pairwise, until one is left. The arrays sorted here list a few
 * processes' spans interleaved, each process's nearly in order, so a few
 * passes do (qsort's n log n compares, and its temporary array's page
 * faults, cost more). tmp: room for n elements; NULL: qsort. */
static void sort_runs(void *base, size_t n, size_t sz, int (*cmp)(const void *, const void *), void *tmp)
{
    if (!tmp) {
        qsort(base, n, sz, cmp);
        return;
    }
    if (n < 2)
        return;
    char *src = base, *dst = tmp;
    for (;;) {
        size_t i = 0, runs = 0;
        while (i < n) {
            size_t m = run_end(src, i, n, sz, cmp), e = m < n ? run_end(src, m, n, sz, cmp) : n;
            /* merge [i, m) and [m, e) into dst: the left one first on ties */
            size_t l = i, r = m, o = i;
            while (l < m && r < e) {
                if (cmp(src + l * sz, src + r * sz) <= 0)
                    memcpy(dst + o++ * sz, src + l++ * sz, sz);
                else
                    memcpy(dst + o++ * sz, src + r++ * sz, sz);
            }
            memcpy(dst + o * sz, src + l * sz, (m - l) * sz);
            o += m - l;
            memcpy(dst + o * sz, src + r * sz, (e - r) * sz);
            i = e;
            runs++;
        }
        char *x = src;
        src = dst;
        dst = x;
        if (runs == 1)
            break;
    }
    if (src != (char *)base)
        memcpy(base, src, n * sz);
}

static proc *find_proc(tl *t, uint64_t pid, bool add)
{
    /* events come in runs of one process: the last answer first */
    if (t->last_proc && t->last_pid == pid)
        return &t->proc[t->last_proc - 1];
    const uint64_t key[3] = {0, pid, 0};
    uint32_t v = hmap_get(&t->h, key);
    if (v) {
        t->last_pid = pid;
        t->last_proc = v;
    }
    if (v || !add)
        return v ? &t->proc[v - 1] : NULL;
    uint32_t *s = hmap_put(&t->h, key);
    if (!s || !vec_grow((void **)&t->proc, &t->capproc, t->nproc + 1, sizeof *t->proc)) {
        t->oom = true;
        return NULL;
    }
    proc *p = &t->proc[t->nproc++];
    memset(p, 0, sizeof *p);
    p->pid = pid;
    *s = (uint32_t)t->nproc;
    return p;
}

static void add_thr(tl *t, uint64_t pid, uint64_t tid)
{
    /* lanes come in runs too; a thread once added stays */
    if (t->has_last_thr && t->last_thr_pid == pid && t->last_thr_tid == tid)
        return;
    const uint64_t key[3] = {1, pid, tid};
    uint32_t *s = hmap_put(&t->h, key);
    if (s && *s) {
        t->has_last_thr = true;
        t->last_thr_pid = pid;
        t->last_thr_tid = tid;
        return;
    }
    if (!s || !vec_grow((void **)&t->thr, &t->capthr, t->nthr + 1, sizeof *t->thr)) {
        t->oom = true;
        return;
    }
    t->thr[t->nthr].pid = pid;
    t->thr[t->nthr].tid = tid;
    t->thr[t->nthr].real_tid = tid;
    t->thr[t->nthr].slot = 0;
    t->nthr++;
    *s = (uint32_t)t->nthr;
}

static int cmp_bs(const void *a, const void *b)
{
    const bspan *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->inv != y->inv)
        return x->inv < y->inv ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int cmp_pid(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static bool bs_is(const tl *t, size_t i, uint64_t pid, uint64_t inv)
{
    return t->bs[i].pid == pid && t->bs[i].inv == inv;
}

static const ps_span *bind_span(tl *t, uint64_t pid, uint64_t inv)
{
    /* A process's runs are asked for in order: the one after its last,
     * or the last again, before a search (the first of equal keys, as
     * the search finds). */
    size_t *h = &t->bs_hint[pid % 16];
    for (size_t c = *h; c < *h + 2 && c < t->nbs; c++)
        if (bs_is(t, c, pid, inv) && (c == 0 || !bs_is(t, c - 1, pid, inv))) {
            *h = c;
            return &t->L->span[t->bs[c].idx];
        }
    size_t lo = 0, hi = t->nbs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const bspan *b = &t->bs[mid];
        if (b->pid < pid || (b->pid == pid && b->inv < inv))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < t->nbs && bs_is(t, lo, pid, inv)) {
        *h = lo;
        return &t->L->span[t->bs[lo].idx];
    }
    return NULL;
}

static uint64_t dev_pid(tl *t, uint64_t pid)
{
    proc *p = find_proc(t, pid, false);
    return p ? p->dev_pid : pid;
}

typedef struct rank_at {
    uint32_t run;
    uint64_t pid;
    size_t i;
} rank_at;

static int cmp_rank_at(const void *a, const void *b)
{
    const rank_at *x = a, *y = b;
    if (x->run != y->run)
        return x->run < y->run ? -1 : 1;
    return x->pid < y->pid ? -1 : x->pid > y->pid;
}

size_t tl_number_ranks(tl_rank *r, size_t n)
{
    rank_at *a = malloc((n ? n : 1) * sizeof *a);
    if (!a)
        return 0;
    for (size_t i = 0; i < n; i++)
        a[i] = (rank_at){r[i].run, r[i].pid, i};
    qsort(a, n, sizeof *a, cmp_rank_at);
    size_t nrun = 0, k = 0;
    for (size_t j = 0; j < n; j++) {
        if (!j || a[j].run != a[j - 1].run) {
            nrun++;
            k = 0;
        }
        r[a[j].i].rank = k++;
        r[a[j].i].order = j;
    }
    free(a);
    return nrun ? nrun : 1;
}

const char *tl_run_label(const ps_log *L, size_t nrun, uint32_t run, char *buf, size_t cap)
{
    if (nrun > 1 && run >= 1 && run <= L->nstamps)
        snprintf(buf, cap, ", run %" PRIu32 " (stamp at line %zu)", run, L->stamp_lines[run - 1]);
    else if (cap)
        buf[0] = 0;
    return buf;
}

/* Each process's run, from its first record: where logs put together
 * hold several runs, each run's processes are ranked apart. */
static void run_procs(tl *t)
{
    const ps_log *L = t->L;
    for (size_t i = 0; i < t->nproc; i++)
        t->proc[i].run = UINT32_MAX;
    if (L->nstamps < 2) {
        for (size_t i = 0; i < t->nproc; i++)
            t->proc[i].run = 1;
        return;
    }
    for (size_t i = 0; i < L->nanchor; i++) {
        proc *p = find_proc(t, L->anchor[i].pid, false);
        uint32_t r = ps_run_of(L, L->anchor[i].line);
        if (p && r < p->run)
            p->run = r;
    }
    for (size_t i = 0; i < L->nspan; i++) {
        proc *p = find_proc(t, L->span[i].pid, false);
        uint32_t r = ps_run_of(L, L->span[i].line);
        if (p && r < p->run)
            p->run = r;
    }
    for (size_t i = 0; i < L->npass; i++) {
        proc *p = L->pass[i].has_pid ? find_proc(t, L->pass[i].pid, false) : NULL;
        uint32_t r = L->pass[i].run ? L->pass[i].run : 1;
        if (p && r < p->run)
            p->run = r;
    }
}

/* Each process's rank and device lane, from its pids sorted.
 *
 * Ranks as hbg run numbers them: it forks rank 0 first, so by ascending
 * pid, not by which rank happened to write first; in a log of several
 * runs, among the processes of its run (tl_number_ranks).
 *
 * A device lane is never a host process's. Perfetto reads a pid as a
 * 32-bit number (a larger one becomes 0, one lane for all), so every lane
 * lies below 2^32: pid + TL_DEVICE_PID_BASE, as every real log has it,
 * where that is below 2^32 and no process of the log holds it (a corrupt
 * or foreign log may hold pid 1000000005 beside 5); else the largest
 * number below 2^32 that no process and no other lane holds.
 *
 * For the same reason a host process whose pid is 2^32 or more (no real
 * one is: a corrupt or foreign log) is drawn on such a free number too,
 * each its own, and its lane's name gives the pid; every pid below 2^32
 * is its own lane, as it always was. */
static void number_procs(tl *t)
{
    const uint64_t lim = (uint64_t)1 << 32;
    size_t n = t->nproc, nt = 0;
    uint64_t *taken = malloc((n ? 2 * n : 1) * sizeof *taken);
    tl_rank *rk = malloc((n ? n : 1) * sizeof *rk);
    if (!taken || !rk) {
        free(taken);
        free(rk);
        t->oom = true;
        return;
    }
    for (size_t i = 0; i < n; i++)
        rk[i] = (tl_rank){t->proc[i].pid, t->proc[i].run, 0, 0};
    t->nrun = tl_number_ranks(rk, n);
    if (!t->nrun && n)
        t->oom = true;
    for (size_t i = 0; i < n; i++) {
        t->proc[i].rank = rk[i].rank;
        t->proc[i].order = rk[i].order;
    }
    free(rk);
    for (size_t i = 0; i < n; i++)
        if (t->proc[i].pid < lim)
            taken[nt++] = t->proc[i].pid;
    qsort(taken, nt, sizeof *taken, cmp_pid);
    size_t nhost = nt;
    for (size_t i = 0; i < n; i++) {
        uint64_t pid = t->proc[i].pid, c = pid + TL_DEVICE_PID_BASE;
        bool ok = pid < lim - TL_DEVICE_PID_BASE && !bsearch(&c, taken, nhost, sizeof *taken, cmp_pid);
        t->proc[i].dev_pid = ok ? c : 0; /* 0: none yet (a lane from the base up is never 0) */
        if (ok)
            taken[nt++] = c;
    }
    qsort(taken, nt, sizeof *taken, cmp_pid);
    /* numbers below the base hold real pids; lanes come down from the top */
    uint64_t next = lim - 1;
    for (size_t i = 0; i < n; i++) {
        proc *p = &t->proc[i];
        p->lane_pid = p->pid;
        for (int dev = 0; dev < 2; dev++) {
            uint64_t *lane = dev ? &p->dev_pid : &p->lane_pid;
            if (dev ? *lane != 0 : *lane < lim)
                continue;
            while (bsearch(&next, taken, nt, sizeof *taken, cmp_pid))
                next--;
            *lane = next--;
        }
    }
    free(taken);
}

/* --- event pieces ------------------------------------------------------- */

/* The slot of key in one of the caches (0: heads, 1: args); NULL when
 * there is none. */
static frag *frag_slot(tl *t, int which, const uint64_t key[5])
{
    if (!t->frags)
        return NULL;
    uint64_t h = key[0] * 0x9E3779B97F4A7C15ull;
    h = (h ^ key[1] ^ (h >> 29)) * 0xBF58476D1CE4E5B9ull;
    h = (h ^ key[2] ^ (h >> 31)) * 0x94D049BB133111EBull;
    h = (h ^ key[3] ^ key[4] ^ (h >> 30)) * 0x9E3779B97F4A7C15ull;
    return &t->frags[(size_t)which * FRAG_SLOTS + (size_t)(h >> 57) % FRAG_SLOTS];
}

/* Writes f's text when it was made from key: true. Else the caller
 * writes the piece itself, then offers it to frag_keep. */
static bool frag_put(tl *t, frag *f, const uint64_t key[5])
{
    if (!f || !f->n || memcmp(f->key, key, sizeof f->key) != 0)
        return false;
    /* the whole slot: a fixed copy is a few moves, a sized one a call */
    memcpy(jw_reserve(&t->w, FRAG_MAX), f->text, FRAG_MAX);
    t->w.n += f->n;
    return true;
}

/* What the caller wrote since at becomes f's text for key, if it fits. */
static void frag_keep(tl *t, frag *f, const uint64_t key[5], uint64_t at)
{
    uint64_t n = jw_pos(&t->w) - at;
    if (!f || n == 0 || n > FRAG_MAX || n > t->w.n)
        return;
    memcpy(f->key, key, sizeof f->key);
    f->n = (uint32_t)n;
    memcpy(f->text, t->w.buf + t->w.n - n, n);
}

static size_t decode_name(tl *t, lx_slice s);

/* An event's head: "name":...,"cat":...,"ph":"X","pid":...,"tid":... The
 * name is the text at id (id_n bytes), percent-decoded first when encoded
 * (a span's name, as the log writes it). */
/* The process pid's events are drawn on: itself below 2^32, where every
 * real pid and every device lane lies; else its lane (number_procs). */
static uint64_t lane_pid(tl *t, uint64_t pid)
{
    if (pid < (uint64_t)1 << 32)
        return pid;
    const proc *p = find_proc(t, pid, false);
    return p ? p->lane_pid : pid;
}

/* The thread a tid is drawn as. Perfetto reads a tid as 32 bits too: a
 * tid of 2^32 or more (a corrupt or foreign log's, a pass without its
 * chip.run.bind span drawn on tid = its pid, or a pipeline slot numbered
 * past such tids) would share a lane with another, or read as no JSON
 * integer. Each is given, when first drawn, its own number below 2^32,
 * from the top down, that no host lane of the log holds (so never a real
 * tid of its process, nor another such lane). */
static uint64_t tid_lane(tl *t, uint64_t pid, uint64_t tid)
{
    if (tid < (uint64_t)1 << 32)
        return tid;
    const uint64_t key[3] = {4, pid, tid};
    uint32_t *s = hmap_put(&t->h, key);
    if (s && *s)
        return t->big_lane[*s - 1];
    if (!s || !vec_grow((void **)&t->big_lane, &t->capbig, t->nbig + 1, sizeof *t->big_lane)) {
        t->oom = true;
        return 0;
    }
    while (t->nlow_tid && bsearch(&t->next_tid, t->low_tid, t->nlow_tid, sizeof *t->low_tid, cmp_pid))
        t->next_tid--;
    t->big_lane[t->nbig++] = t->next_tid--;
    *s = (uint32_t)t->nbig;
    return t->big_lane[t->nbig - 1];
}

static void ev_begin(tl *t, const char *id, size_t id_n, bool encoded, const char *cat, uint64_t pid, uint64_t tid)
{
    jw *w = &t->w;
    jw_lit(w, t->first ? "\n{" : ",\n{");
    t->first = false;
    t->rep->events++;
    const uint64_t key[5] = {(uint64_t)(uintptr_t)id, (uint64_t)id_n << 1 | encoded, (uint64_t)(uintptr_t)cat, pid, tid};
    frag *f = frag_slot(t, 0, key);
    if (frag_put(t, f, key))
        return;
    const char *name = id;
    size_t nlen = id_n;
    if (encoded) {
        lx_slice e = {id, id_n};
        nlen = decode_name(t, e);
        if (t->oom)
            return;
        name = t->nbuf;
    }
    uint64_t at = jw_pos(w);
    JW_LIT(w, "\"name\":");
    jw_str(w, name, nlen);
    JW_LIT(w, ",\"cat\":\"");
    jw_lit(w, cat);
    JW_LIT(w, "\",\"ph\":\"X\",\"pid\":");
    jw_u64(w, lane_pid(t, pid));
    JW_LIT(w, ",\"tid\":");
    jw_u64(w, tid_lane(t, pid, tid));
    frag_keep(t, f, key, at);
}

static void ev_time(tl *t, uint64_t ts, uint64_t dur)
{
    JW_LIT(&t->w, ",\"ts\":");
    jw_us(&t->w, ts);
    JW_LIT(&t->w, ",\"dur\":");
    jw_dur_us(&t->w, ts, dur);
}

/* "2026-08-22T12:00:00": the date and time of second sec, formatted once
 * per second (a trace has an event per few hundred bytes of log). False
 * when gmtime cannot take it. */
static bool utc_second(tl *t, uint64_t sec)
{
    if (!t->utc_valid || sec != t->utc_sec) {
        time_t ts = (time_t)sec;
        struct tm tm;
        if (!gmtime_r(&ts, &tm))
            return false;
        snprintf(t->utc_text, sizeof t->utc_text, "%04d-%02d-%02dT%02d:%02d:%02d", tm.tm_year + 1900,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
        t->utc_sec = sec;
        t->utc_valid = true;
    }
    return true;
}

/* "2026-08-22T12:00:00.000000095Z": the nanoseconds by hand. */
static void put_utc(tl *t, uint64_t wall)
{
    if (!utc_second(t, wall / 1000000000u))
        return;
    char frac[16];
    frac[0] = '.';
    jw_fmt9(frac + 1, (uint32_t)(wall % 1000000000u));
    frac[10] = 'Z';
    JW_LIT(&t->w, ",\"utc\":\"");
    jw_raw(&t->w, t->utc_text, 19);
    jw_raw(&t->w, frac, 11);
    JW_LIT(&t->w, "\"");
}

/* ,"wall_ns":"<wall>","utc":"<its UTC time>": from the second's two texts,
 * made once per second, and the nine digits of the nanoseconds that both
 * end with (the decimal of a wall of a second or more is its second's
 * followed by nine digits). */
static void put_wall(tl *t, uint64_t wall)
{
    uint64_t sec = wall / 1000000000u;
    if (!sec) {
        JW_LIT(&t->w, ",\"wall_ns\":");
        jw_u64str(&t->w, wall);
        put_utc(t, wall);
        return;
    }
    if (sec != t->wall_sec) {
        char *h = t->wall_head;
        memcpy(h, ",\"wall_ns\":\"", 12);
        t->wall_nhead = 12 + jw_fmt_u64(h + 12, sec);
        t->wall_utc = utc_second(t, sec);
        if (t->wall_utc) {
            memcpy(t->wall_mid, "\",\"utc\":\"", 9);
            memcpy(t->wall_mid + 9, t->utc_text, 19);
            t->wall_mid[28] = '.';
            t->wall_nmid = 29;
        }
        t->wall_sec = sec;
    }
    /* the nine digits once, stored twice; the second's texts as fixed
     * copies of their whole buffers (the lengths only move the end) */
    uint32_t ns = (uint32_t)(wall - sec * 1000000000u), hi = ns / 100000000u;
    char c0 = (char)('0' + hi);
    uint64_t d8 = jw_digits8(ns - hi * 100000000u) | 0x3030303030303030ull;
    char *p = jw_reserve(&t->w, 128), *p0 = p;
    memcpy(p, t->wall_head, sizeof t->wall_head);
    p += t->wall_nhead;
    p[0] = c0;
    jw_store8(p + 1, d8);
    p += 9;
    if (t->wall_utc) {
        memcpy(p, t->wall_mid, sizeof t->wall_mid);
        p += t->wall_nmid;
        p[0] = c0;
        jw_store8(p + 1, d8);
        p[9] = 'Z';
        p[10] = '"';
        p += 11;
    } else {
        *p++ = '"';
    }
    t->w.n += (size_t)(p - p0);
}

/* wall_ns and utc of host time mono of a record at line: from the anchor in
 * force there (the process's latest anchor before it: ps_anchor_precedes). An
 * event before its process's first anchor gets neither: extrapolating a
 * later anchor backwards would invent a time. */
static void arg_wall(tl *t, const proc *p, size_t line, uint64_t mono)
{
    if (!p || !p->na)
        return;
    size_t lo = 0, hi = p->na;
    while (lo < hi) {
        size_t m = (lo + hi) / 2;
        if (ps_anchor_precedes(t->anc[p->a0 + m], line))
            lo = m + 1;
        else
            hi = m;
    }
    if (!lo) {
        t->before_anchor++;
        return;
    }
    const ps_anchor *a = t->anc[p->a0 + lo - 1];
    uint64_t wall;
    if (ps_anchor_judge(a, mono) == PS_ANCHOR_CORRUPT) {
        if (!t->anchor_bad++)
            t->anchor_bad_line = a->line;
        return;
    }
    if (!ps_anchor_wall(a, mono, &wall)) {
        t->wall_range++; /* a corrupt anchor: said once the trace is written */
        return;
    }
    put_wall(t, wall);
}

/* A value a double holds exactly is a number; a larger one a string. */
static void put_num(jw *w, uint64_t v)
{
    if (v <= (1ull << 53))
        jw_u64(w, v);
    else
        jw_u64str(w, v);
}

/* Whether key k is one this tool writes into an event's args itself: a
 * line's own attribute of that name would make a second member of one
 * name, and most readers keep the last, the logged text over the value
 * computed (wall_ns from the clock anchor). */
static bool generated_key(const char *k, size_t kl)
{
    static const char *const gen[] = {"inv",   "hid",    "depth",        "wall_ns",  "utc",
                                      "clock", "placed", "device_ts_ns", "host_pid", "outside_bind_span"};
    for (size_t i = 0; i < sizeof gen / sizeof gen[0]; i++)
        if (strlen(gen[i]) == kl && !memcmp(gen[i], k, kl))
            return true;
    return false;
}

/* The next k=v attribute of the text [*p, e), as write_attrs reads it:
 * false at the end. */
static bool next_attr(const char **p, const char *e, lx_slice *k, lx_slice *v)
{
    const char *q = *p;
    while (q < e && (*q == ' ' || *q == '\t'))
        q++;
    if (q >= e)
        return false;
    k->p = q;
    while (q < e && *q != '=' && *q != ' ')
        q++;
    k->n = (size_t)(q - k->p);
    v->p = q < e && *q == '=' ? q + 1 : q;
    q = v->p;
    while (q < e && *q != ' ' && *q != '\t')
        q++;
    v->n = (size_t)(q - v->p);
    *p = q;
    return true;
}

/* Whether the k=v text [p, p + n) has the key k. */
static bool has_key(const char *p, size_t n, const char *k, size_t kl)
{
    lx_slice a, v;
    for (const char *e = p + n; next_attr(&p, e, &a, &v);)
        if (a.n == kl && !memcmp(a.p, k, kl))
            return true;
    return false;
}

/* Whether name[0..nl) is one of the names written before it (nw of them,
 * ends in t->an_end, text in t->an). */
static bool name_taken(const tl *t, size_t nw, const char *name, size_t nl)
{
    for (size_t i = 0, at = 0; i < nw; at = t->an_end[i++])
        if (t->an_end[i] - at == nl && !memcmp(t->an + at, name, nl))
            return true;
    return false;
}

/* The name of key k (which holds a byte written U+FFFD) among the
 * attributes of the text [p, p + n), the i-th written: its string as
 * written, or where that is another member's (a key written exactly, or
 * an earlier one written so), with the first of _2, _3, ... that is
 * none. Each is kept for those after it; false out of memory. Every
 * name this tool writes itself is ASCII, so no U+FFFD name is one. */
static bool replaced_name(tl *t, const char *p, size_t n, size_t i, lx_slice k)
{
    size_t at = i ? t->an_end[i - 1] : 0;
    if (k.n > (SIZE_MAX - 32 - at) / 3 || !vec_grow((void **)&t->an, &t->ancap, at + 3 * k.n + 32, 1) ||
        !vec_grow((void **)&t->an_end, &t->an_endcap, i + 1, sizeof *t->an_end))
        return false;
    char *name = t->an + at;
    size_t base = jw_str_text(k.p, k.n, name), nl = base;
    for (unsigned sfx = 2; has_key(p, n, name, nl) || name_taken(t, i, name, nl); sfx++)
        nl = base + (size_t)snprintf(name + base, 32, "_%u", sfx);
    t->an_end[i] = at + nl;
    return true;
}

/* The k=v attribute text of a line, as args members; a key this tool
 * writes itself is kept as "logged_<key>" (or "logged_logged_<key>", and
 * so on, where the line has that key too). A key holding a byte that is
 * no part of a UTF-8 character, written U+FFFD, is given a name of its
 * own where that makes it another's (replaced_name): the members' names
 * depend on the text alone, so its cached copy (arg_attrs) stays right. */
static void write_attrs(tl *t, const char *p, size_t n)
{
    const char *const text = p;
    const char *e = p + n;
    size_t nrep = 0; /* keys written U+FFFD so far */
    lx_slice k, v;
    while (next_attr(&p, e, &k, &v)) {
        if (!k.n)
            continue;
        JW_LIT(&t->w, ",");
        if (generated_key(k.p, k.n)) {
            /* room for a logged_ for each of a line's attributes (each
             * one taken is another key of it) before the longest name */
            char both[7 * (LX_MAX_ATTRS + 1) + 32];
            int bl = snprintf(both, sizeof both, "logged_%.*s", (int)k.n, k.p);
            while (bl + 7 < (int)sizeof both && has_key(text, n, both, (size_t)bl)) {
                memmove(both + 7, both, (size_t)bl + 1);
                memcpy(both, "logged_", 7);
                bl += 7;
            }
            jw_str(&t->w, both, (size_t)bl);
        } else if (jw_str_exact(k.p, k.n)) {
            jw_str(&t->w, k.p, k.n);
        } else if (replaced_name(t, text, n, nrep, k)) {
            size_t at = nrep ? t->an_end[nrep - 1] : 0;
            jw_str(&t->w, t->an + at, t->an_end[nrep] - at);
            nrep++;
        } else {
            t->oom = true;
            jw_str(&t->w, k.p, k.n);
        }
        JW_LIT(&t->w, ":");
        uint64_t x;
        if (lx_parse_u64(v, &x) == 0)
            put_num(&t->w, x);
        else
            jw_str(&t->w, v.p, v.n);
    }
}

/* The same, from the cache when the line's text was written before. */
static void arg_attrs(tl *t, const char *p, size_t n)
{
    const uint64_t key[5] = {(uint64_t)(uintptr_t)p, n, 0, 1, 0};
    frag *f = frag_slot(t, 1, key);
    if (frag_put(t, f, key))
        return;
    uint64_t at = jw_pos(&t->w);
    write_attrs(t, p, n);
    frag_keep(t, f, key, at);
}

/* A host span's ,"hid":"...","depth":N (its invocation's, repeated). */
static void arg_hid_depth(tl *t, lx_slice hid, uint64_t depth)
{
    const uint64_t key[5] = {(uint64_t)(uintptr_t)hid.p, hid.n, depth, 2, 0};
    frag *f = frag_slot(t, 1, key);
    if (frag_put(t, f, key))
        return;
    uint64_t at = jw_pos(&t->w);
    JW_LIT(&t->w, ",\"hid\":");
    jw_str(&t->w, hid.p, hid.n);
    JW_LIT(&t->w, ",\"depth\":");
    jw_u64(&t->w, depth);
    frag_keep(t, f, key, at);
}

/* Span names percent-encode bytes outside !..~ and % [ ] =. */
static size_t decode_name(tl *t, lx_slice s)
{
    if (!vec_grow((void **)&t->nbuf, &t->nbufcap, s.n + 1, 1)) {
        t->oom = true;
        return 0;
    }
    return lx_decode_name(s, t->nbuf);
}

void tl_put_incomplete(jw *w, const ps_log *L)
{
    if (!L->incomplete_line)
        return;
    jw_lit(w, ",\"incomplete\":{\"line\":");
    jw_u64(w, L->incomplete_line);
    jw_lit(w, ",\"why\":");
    jw_str(w, L->incomplete, strlen(L->incomplete));
    jw_lit(w, "}");
}

void tl_meta(jw *w, bool *first, const char *what, uint64_t pid, uint64_t tid, const char *name)
{
    jw_lit(w, *first ? "\n{\"name\":\"" : ",\n{\"name\":\"");
    *first = false;
    jw_lit(w, what);
    JW_LIT(w, "\",\"ph\":\"M\",\"pid\":");
    jw_u64(w, pid);
    JW_LIT(w, ",\"tid\":");
    jw_u64(w, tid);
    JW_LIT(w, ",\"args\":{\"name\":");
    jw_str(w, name, strlen(name));
    JW_LIT(w, "}}");
}

static void meta(tl *t, const char *what, uint64_t pid, uint64_t tid, const char *name)
{
    tl_meta(&t->w, &t->first, what, lane_pid(t, pid), tid_lane(t, pid, tid), name);
    t->rep->events++;
    t->rep->lane_names++;
}

static void meta_sort(tl *t, uint64_t pid, uint64_t idx)
{
    jw *w = &t->w;
    JW_LIT(w, ",\n{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":");
    jw_u64(w, lane_pid(t, pid));
    JW_LIT(w, ",\"tid\":0,\"args\":{\"sort_index\":");
    jw_u64(w, idx);
    JW_LIT(w, "}}");
    t->rep->events++;
    t->rep->lane_names++;
}

static int cmp_dp(const void *a, const void *b)
{
    const devplace *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return x->inv < y->inv ? -1 : x->inv > y->inv;
}

static devplace *find_dp(tl *t, uint64_t pid, uint64_t inv)
{
    /* keys are unique; asked for in order, as bind_span's */
    size_t *h = &t->dp_hint[pid % 16];
    for (size_t c = *h; c < *h + 2 && c < t->ndp; c++)
        if (t->dp[c].pid == pid && t->dp[c].inv == inv) {
            *h = c;
            return &t->dp[c];
        }
    devplace key = {.pid = pid, .inv = inv};
    devplace *d = bsearch(&key, t->dp, t->ndp, sizeof *t->dp, cmp_dp);
    if (d)
        *h = (size_t)(d - t->dp);
    return d;
}

/* Device-clock spans keep their own time base, which the host axis does
 * not share (device_wall has ts=0: drawn as is, the axis ran from 0 to
 * the host's uptime). Each invocation's are placed at the start of its
 * chip.run.runner_run span instead, offset by their device ts. */
static void place_device_spans(tl *t)
{
    ps_log *L = t->L;
    size_t n = 0;
    for (size_t i = 0; i < L->nspan; i++)
        n += L->span[i].dev;
    if (!n)
        return;
    t->dp = big_array(&t->dp_mem, n, sizeof *t->dp);
    if (!t->dp) {
        t->oom = true;
        return;
    }
    for (size_t i = 0; i < L->nspan; i++)
        if (L->span[i].dev)
            t->dp[t->ndp++] = (devplace){L->span[i].pid, L->span[i].inv, 0, UINT64_MAX, false};
    sort_runs(t->dp, t->ndp, sizeof *t->dp, cmp_dp, t->scratch.p);
    size_t k = 0;
    for (size_t i = 0; i < t->ndp; i++)
        if (!k || cmp_dp(&t->dp[k - 1], &t->dp[i]))
            t->dp[k++] = t->dp[i];
    t->ndp = k;
    for (size_t i = 0; i < L->nspan; i++) {
        const ps_span *s = &L->span[i];
        devplace *d = find_dp(t, s->pid, s->inv);
        if (!d)
            continue;
        if (s->dev && s->ts < d->dev_base)
            d->dev_base = s->ts;
        if (!s->dev && !d->has_host && s->depth == 1 && lx_slice_eq(s->name, "chip.run.runner_run")) {
            d->has_host = true;
            d->host_ts = s->ts;
        }
    }
}

static int cmp_sl(const void *a, const void *b)
{
    const slotlane *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return x->inv < y->inv ? -1 : x->inv > y->inv;
}

/* The lane an event of run (pid, inv) on thread tid is drawn on. */
static uint64_t lane_of(const tl *t, uint64_t pid, uint64_t tid, uint64_t inv)
{
    if (!t->nsl)
        return tid;
    slotlane key = {.pid = pid, .inv = inv};
    const slotlane *l = bsearch(&key, t->sl, t->nsl, sizeof *t->sl, cmp_sl);
    return l && l->real_tid == tid ? l->tid : tid;
}

static int cmp_root(const void *a, const void *b)
{
    const rootkey *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static uint64_t sat_end(uint64_t ts, uint64_t dur)
{
    return ts + dur < ts ? UINT64_MAX : ts + dur;
}

/* Every run's root (a host depth-0 span of a run: not the scheduler's
 * or an external producer's), by (pid, tid, ts), stably: runs that start
 * together keep their order in the log (split_pipelined's slots). A run
 * held twice puts its two roots in one run of equal (pid, tid, ts). */
static void collect_roots(tl *t)
{
    ps_log *L = t->L;
    size_t n = 0;
    for (size_t i = 0; i < L->nspan; i++) {
        const ps_span *s = &L->span[i];
        n += !s->dev && s->depth == 0 && !sp_foreign(s->name);
    }
    if (!n)
        return;
    t->rk = big_array(&t->rk_mem, n, sizeof *t->rk);
    if (!t->rk) {
        t->oom = true;
        return;
    }
    for (size_t i = 0; i < L->nspan; i++) {
        const ps_span *s = &L->span[i];
        if (!s->dev && s->depth == 0 && !sp_foreign(s->name))
            t->rk[t->nrk++] = (rootkey){s->pid, s->tid, s->ts, sat_end(s->ts, s->dur), s->inv, i};
    }
    sort_runs(t->rk, t->nrk, sizeof *t->rk, cmp_root, t->scratch.p);
}

static int cmp_slice(lx_slice a, lx_slice b)
{
    if (a.n != b.n)
        return a.n < b.n ? -1 : 1;
    return a.p == b.p ? 0 : memcmp(a.p, b.p, a.n);
}

/* Two spans in (pid, inv, sp_cmp_record, hid, attributes) order; 0: the
 * same line twice. */
static int cmp_whole(const ps_span *x, const ps_span *y)
{
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->inv != y->inv)
        return x->inv < y->inv ? -1 : 1;
    int c = sp_cmp_record(x, y);
    if (!c)
        c = cmp_slice(x->hid, y->hid);
    return c ? c : cmp_slice(x->extra, y->extra);
}

/* Span indices by cmp_whole, the earlier line first among equals. */
static int cmp_repeat(const void *a, const void *b, void *ctx)
{
    const ps_span *sp = ctx;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    int c = cmp_whole(&sp[i], &sp[j]);
    return c ? c : i < j ? -1 : i > j;
}

/* Does some root repeat another? Roots that start together (one run of
 * t->rk) are compared whole, through a sorted copy of their indices when
 * there are more than two (a run held twice with two roots of the same
 * times: the copies need not be side by side). */
static bool roots_repeat(tl *t, bool *oom)
{
    const ps_log *L = t->L;
    size_t *tmp = NULL, captmp = 0;
    bool rep = false;
    for (size_t a = 0, b; a < t->nrk && !rep; a = b) {
        for (b = a + 1; b < t->nrk && t->rk[b].pid == t->rk[a].pid && t->rk[b].tid == t->rk[a].tid &&
                        t->rk[b].ts == t->rk[a].ts;
             b++)
            ;
        if (b - a == 2) {
            rep = !cmp_whole(&L->span[t->rk[a].idx], &L->span[t->rk[a + 1].idx]);
        } else if (b - a > 2) {
            if (!vec_grow((void **)&tmp, &captmp, b - a, sizeof *tmp)) {
                *oom = true;
                break;
            }
            for (size_t i = a; i < b; i++)
                tmp[i - a] = t->rk[i].idx;
            qsort_r(tmp, b - a, sizeof *tmp, cmp_repeat, L->span);
            for (size_t i = 1; i < b - a && !rep; i++)
                rep = !cmp_whole(&L->span[tmp[i - 1]], &L->span[tmp[i]]);
        }
    }
    free(tmp);
    return rep;
}

/* A span that repeats an earlier one exactly (the same line: pid, inv,
 * thread, depth, name, clock, start, duration, hid, attributes) is the
 * same record twice: a log holding a run twice (two copies concatenated,
 * or a log appended to). Drawn twice, each copy lay on the other, and each
 * chip.run overlapped its copy, which split_pipelined took for
 * pipelining: a slot lane for every run. As hbg spans does, each is kept
 * once, the first in the log, and one warning counts the repeats. They
 * are looked for only in a log that shows it holds something twice: a
 * root repeated (the sorted roots show it at no cost), the stamp line
 * again, or a process anchored twice (which a process may also do of its
 * own: the search then finds nothing). Every span is then sorted, in
 * that log alone. Removes them from L->span, and collects t->rk again. */
static void drop_repeats(tl *t)
{
    ps_log *L = t->L;
    bool oom = false, suspect = L->stamp_repeated || roots_repeat(t, &oom);
    for (size_t i = 0; i < t->nproc && !suspect; i++)
        suspect = t->proc[i].na > 1;
    if (oom)
        t->oom = true;
    if (!suspect || oom || L->nspan < 2)
        return;
    size_t *ord = malloc(L->nspan * sizeof *ord);
    unsigned char *gone = calloc(L->nspan, 1);
    if (!ord || !gone) {
        free(ord);
        free(gone);
        t->oom = true;
        return;
    }
    for (size_t i = 0; i < L->nspan; i++)
        ord[i] = i;
    qsort_r(ord, L->nspan, sizeof *ord, cmp_repeat, L->span);
    size_t ngone = 0, first_line = 0;
    for (size_t k = 1; k < L->nspan; k++) {
        const ps_span *b = &L->span[ord[k]];
        if (!cmp_whole(&L->span[ord[k - 1]], b)) {
            gone[ord[k]] = 1;
            if (!ngone++ || b->line < first_line)
                first_line = b->line;
        }
    }
    free(ord);
    if (ngone) {
        size_t w = 0;
        for (size_t i = 0; i < L->nspan; i++)
            if (!gone[i])
                L->span[w++] = L->span[i];
        L->nspan = w;
        dg_add(t->warn,
               "%s:%zu: %zu span%s repeat an earlier span exactly (the same line: pid, inv, thread, depth, name, "
               "clock, start, duration, hid, attributes): the same record twice, as in a log holding a run twice; "
               "each drawn once",
               L->path, first_line, ngone, ngone == 1 ? "" : "s");
        /* the roots again, without the repeats, at the spans' new places */
        hm_free(&t->rk_mem);
        t->rk = NULL;
        t->nrk = 0;
        collect_roots(t);
    }
    free(gone);
}

/* A slot of a thread's interleaved runs in a min-heap by key: the busy
 * slots by the end of their run, the free ones by number. */
typedef struct slotkey {
    uint64_t key;
    uint32_t slot;
} slotkey;

static void heap_push(slotkey *h, size_t *n, slotkey v)
{
    size_t i = (*n)++;
    for (; i && h[(i - 1) / 2].key > v.key; i = (i - 1) / 2)
        h[i] = h[(i - 1) / 2];
    h[i] = v;
}

static slotkey heap_pop(slotkey *h, size_t *n)
{
    slotkey top = h[0], last = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && h[c + 1].key < h[c].key)
            c++;
        if (h[c].key >= last.key)
            break;
        h[i] = h[c];
        i = c;
    }
    if (*n)
        h[i] = last;
    return top;
}

/* The first tid of n numbers for slot lanes that no thread of the log or
 * records holds: past the largest, maxtid, as a real log has it. A corrupt
 * log whose largest is within n of 2^64 - 1 would wrap them onto tid 0 and
 * up, a real thread's lane drawn as a slot's: there they begin the widest
 * gap between the tids in use, which holds n (the tids in use are fewer
 * than 2^64 - n). UINT64_MAX when memory ran out. */
static uint64_t lanes_base(const ps_log *L, const rc_file *recs, size_t nrecs, uint64_t maxtid, size_t n)
{
    if (maxtid <= UINT64_MAX - n)
        return maxtid + 1;
    size_t m = 0, cap = 1;
    for (size_t r = 0; r < nrecs; r++)
        cap += recs[r].nrec;
    cap += L->nspan;
    uint64_t *used = malloc(cap * sizeof *used);
    if (!used)
        return UINT64_MAX;
    for (size_t i = 0; i < L->nspan; i++)
        if (!L->span[i].dev)
            used[m++] = L->span[i].tid;
    for (size_t r = 0; r < nrecs; r++)
        for (size_t i = 0; i < recs[r].nrec; i++)
            used[m++] = recs[r].rec[i].tid;
    qsort(used, m, sizeof *used, cmp_pid);
    uint64_t best = 0, best_len = m ? used[0] : UINT64_MAX; /* the gap below the smallest */
    for (size_t i = 0; i + 1 < m; i++)
        if (used[i + 1] - used[i] > 1 && used[i + 1] - used[i] - 1 > best_len)
            best = used[i] + 1, best_len = used[i + 1] - used[i] - 1;
    free(used);
    return best;
}

/* Finds the threads whose runs overlap and gives each of their runs a
 * slot lane; the lanes' tids are free ones (lanes_base).
 * Interval partitioning, each run taking the lowest slot free at its
 * start: with the free slots and the busy ones in heaps, n log n (a scan
 * of the slots per run took minutes on 10^5 runs all overlapping). */
static void split_pipelined(tl *t, const rc_file *recs, size_t nrecs)
{
    ps_log *L = t->L;
    uint64_t maxtid = 0;
    for (size_t i = 0; i < L->nspan; i++)
        if (!L->span[i].dev && L->span[i].tid > maxtid)
            maxtid = L->span[i].tid;
    for (size_t r = 0; r < nrecs; r++)
        for (size_t i = 0; i < recs[r].nrec; i++)
            if (recs[r].rec[i].tid > maxtid)
                maxtid = recs[r].rec[i].tid;
    const rootkey *rk = t->rk;
    size_t n = t->nrk;
    if (n < 2)
        return;
    t->sl = malloc(n * sizeof *t->sl); /* touched only where runs overlap */
    slotkey *bh = NULL, *fh = NULL; /* the busy slots, the free ones */
    if (!t->sl) {
        t->oom = true;
        return;
    }
    uint64_t next = lanes_base(L, recs, nrecs, maxtid, n);
    if (next == UINT64_MAX) {
        t->oom = true;
        return;
    }
    for (size_t a = 0, b; a < n && !t->oom; a = b) {
        bool overlap = false;
        for (b = a + 1; b < n && rk[b].pid == rk[a].pid && rk[b].tid == rk[a].tid; b++)
            overlap |= rk[b].ts < rk[b - 1].end;
        if (!overlap)
            continue;
        if (!bh) {
            bh = malloc(n * sizeof *bh);
            fh = malloc(n * sizeof *fh);
            if (!bh || !fh) {
                t->oom = true;
                break;
            }
        }
        size_t nslots = 0, nb = 0, nf = 0;
        uint64_t base = next;
        for (size_t i = a; i < b; i++) {
            while (nb && bh[0].key <= rk[i].ts) {
                uint32_t f = heap_pop(bh, &nb).slot;
                heap_push(fh, &nf, (slotkey){f, f});
            }
            uint32_t k = nf ? heap_pop(fh, &nf).slot : (uint32_t)nslots++;
            heap_push(bh, &nb, (slotkey){rk[i].end, k});
            t->sl[t->nsl++] = (slotlane){rk[i].pid, rk[i].inv, rk[i].tid, base + k, k + 1};
        }
        next = base + nslots;
    }
    free(bh);
    free(fh);
    qsort(t->sl, t->nsl, sizeof *t->sl, cmp_sl);
    for (size_t i = 0; i < t->nsl; i++) {
        add_thr(t, t->sl[i].pid, t->sl[i].tid);
        /* by its key, not a search: a slot's lane serves many runs */
        const uint64_t key[3] = {1, t->sl[i].pid, t->sl[i].tid};
        uint32_t k = hmap_get(&t->h, key);
        if (k) {
            t->thr[k - 1].real_tid = t->sl[i].real_tid;
            t->thr[k - 1].slot = t->sl[i].slot;
        }
    }
}

static void low_tid_add(tl *t, uint64_t tid, size_t *cap)
{
    if (tid >= (uint64_t)1 << 32)
        return;
    if (!vec_grow((void **)&t->low_tid, cap, t->nlow_tid + 1, sizeof *t->low_tid)) {
        t->oom = true;
        return;
    }
    t->low_tid[t->nlow_tid++] = tid;
}

/* The tids below 2^32 that host lanes are drawn on (a span's thread, a
 * records line's, a pipeline slot's, a pass's drawn on tid = pid), which
 * tid_lane leaves free; gathered only where some tid is 2^32 or more, so
 * a real log pays nothing. */
static void collect_tids(tl *t, const rc_file *recs, size_t nrecs)
{
    const ps_log *L = t->L;
    const uint64_t lim = (uint64_t)1 << 32;
    bool big = false;
    for (size_t i = 0; i < L->nspan && !big; i++)
        big = !L->span[i].dev && L->span[i].tid >= lim;
    for (size_t r = 0; r < nrecs && !big; r++)
        for (size_t i = 0; i < recs[r].nrec && !big; i++)
            big = recs[r].rec[i].tid >= lim;
    for (size_t i = 0; i < t->nsl && !big; i++)
        big = t->sl[i].tid >= lim;
    for (size_t i = 0; i < L->npass && !big; i++)
        big = L->pass[i].pid >= lim;
    t->next_tid = lim - 1;
    if (!big)
        return;
    size_t cap = 0;
    for (size_t i = 0; i < L->nspan; i++)
        if (!L->span[i].dev)
            low_tid_add(t, L->span[i].tid, &cap);
    for (size_t r = 0; r < nrecs; r++)
        for (size_t i = 0; i < recs[r].nrec; i++)
            low_tid_add(t, recs[r].rec[i].tid, &cap);
    for (size_t i = 0; i < t->nsl; i++)
        low_tid_add(t, t->sl[i].tid, &cap);
    for (size_t i = 0; i < L->npass; i++)
        low_tid_add(t, L->pass[i].pid, &cap);
    if (t->nlow_tid)
        qsort(t->low_tid, t->nlow_tid, sizeof *t->low_tid, cmp_pid);
}

/* A thread's name, given the number it is drawn as where that is not its
 * tid: inside the name's closing parenthesis ("scheduler (tid T, past
 * 2^32: drawn as N)"), or after a bare "tid T". */
static void note_moved(char *name, size_t cap, uint64_t lane)
{
    size_t n = strlen(name);
    bool paren = n && name[n - 1] == ')';
    if (paren)
        name[--n] = 0;
    snprintf(name + n, cap - n, ", past 2^32: drawn as %" PRIu64 "%s", lane, paren ? ")" : "");
}

/* The device process's lane of a span name (1, 2, ...): names, not
 * invocations, so that a rank's device lanes stay few and each holds one
 * kind of span in sequence; the runs of a pipelined thread keep their
 * slots apart here too, since their runner_runs overlap. */
typedef struct dl_want {
    const tl *t;
    lx_slice name;
    uint32_t slot;
} dl_want;

static bool dl_is(void *ctx, uint32_t val)
{
    const dl_want *w = ctx;
    const devlane *d = &w->t->dl[val - 1];
    return d->slot == w->slot && lx_slice_same(d->name, w->name);
}

static uint64_t dev_lane(tl *t, lx_slice name, uint32_t slot)
{
    /* a rank's few names, looked at in turn; past those, by hash (one
     * name per device span was a scan of every lane per span) */
    if (t->ndl <= 8) {
        for (size_t i = 0; i < t->ndl; i++)
            if (t->dl[i].slot == slot && lx_slice_same(t->dl[i].name, name))
                return i + 1;
    }
    dl_want w = {t, name, slot};
    const uint64_t key[3] = {3, hbg__hash64(name.p, name.n), slot};
    uint32_t *v = hmap_put_eq(&t->h, key, dl_is, &w);
    if (!v || !vec_grow((void **)&t->dl, &t->capdl, t->ndl + 1, sizeof *t->dl)) {
        t->oom = true;
        return 0;
    }
    if (*v)
        return *v;
    t->dl[t->ndl].name = name;
    t->dl[t->ndl].slot = slot;
    *v = (uint32_t)++t->ndl;
    return t->ndl;
}

/* The pipeline slot of run (pid, inv); 0 when its thread is not split. */
static uint32_t slot_of(const tl *t, uint64_t pid, uint64_t inv)
{
    if (!t->nsl)
        return 0;
    slotlane key = {.pid = pid, .inv = inv};
    const slotlane *l = bsearch(&key, t->sl, t->nsl, sizeof *t->sl, cmp_sl);
    return l ? l->slot : 0;
}

/* --- the parts of the trace -------------------------------------------- */

/* Where span s is drawn: lane (pid, tid) and start *ts. A device-clock
 * span sits on its rank's device lane of its name, at the start of its
 * runner_run plus its offset on the device clock; false for one with no
 * runner_run to place it by. */
static bool span_place(tl *t, const ps_span *s, uint64_t *pid, uint64_t *tid, uint64_t *ts)
{
    if (!s->dev) {
        *pid = s->pid;
        *tid = lane_of(t, s->pid, s->tid, s->inv);
        *ts = s->ts;
        return true;
    }
    const devplace *d = find_dp(t, s->pid, s->inv);
    if (!d || !d->has_host)
        return false;
    *pid = dev_pid(t, s->pid);
    *tid = dev_lane(t, s->name, slot_of(t, s->pid, s->inv));
    uint64_t off = s->ts - d->dev_base;
    *ts = d->host_ts + off < d->host_ts ? UINT64_MAX : d->host_ts + off;
    return true;
}

static nestlane *nest_lane(tl *t, uint64_t pid, uint64_t tid)
{
    size_t c = (size_t)((pid + tid) % 8);
    if (t->nl_cache[c].at && t->nl_cache[c].pid == pid && t->nl_cache[c].tid == tid)
        return &t->nl[t->nl_cache[c].at - 1];
    const uint64_t key[3] = {2, pid, tid};
    uint32_t *v = hmap_put(&t->h, key);
    if (!v)
        return NULL;
    if (!*v) {
        if (!vec_grow((void **)&t->nl, &t->capnl, t->nnl + 1, sizeof *t->nl))
            return NULL;
        memset(&t->nl[t->nnl++], 0, sizeof *t->nl);
        *v = (uint32_t)t->nnl;
    }
    t->nl_cache[c].pid = pid, t->nl_cache[c].tid = tid, t->nl_cache[c].at = *v;
    return &t->nl[*v - 1];
}

/* Adds what src found to dst, keeping the first in the log. */
static void bad_add(const tl *t, nestbad *dst, nestbad src)
{
    if (!src.n)
        return;
    if (!dst->n || t->L->span[src.first].line < t->L->span[dst->first].line)
        dst->first = src.first, dst->other = src.other;
    dst->n += src.n;
}

/* Does span i, drawn on lane (pid, tid) over [ts, end), nest with the
 * spans drawn there before it? A trace viewer stacks a lane's slices by
 * time and needs each to lie inside the one open at its start or to start
 * after it ends; one that starts inside another and ends after it is drawn
 * wrong (cut, or on the wrong level). Spans are written as they end, so a
 * lane's come in end order (and, ending together, the inner one first):
 * each span then has, below it on its lane's stack, the spans it contains
 * (popped: they start no earlier) and under those the latest span that
 * started before it, which it must not end inside. Linear; a lane whose
 * spans come out of that order is left to check_unordered. (An outer span
 * written before an inner one that ends with it would have popped spans
 * the inner one may cut.) */
static void nest_note(tl *t, size_t i, uint64_t pid, uint64_t tid, uint64_t ts, uint64_t end)
{
    nestlane *l = t->stk ? nest_lane(t, pid, tid) : NULL;
    if (!l) {
        t->oom = true;
        return;
    }
    if (l->unordered)
        return;
    if (end < l->last_end || (end == l->last_end && ts > l->last_ts)) {
        /* what the lane found so far is found again by the sort */
        l->unordered = true;
        l->bad.n = 0;
        t->nunordered++;
        return;
    }
    l->last_end = end, l->last_ts = ts;
    while (l->top && t->stk[l->top - 1].ts >= ts) {
        size_t k = l->top - 1;
        l->top = t->stk[k].below;
        t->stk[k].below = t->stk_free;
        t->stk_free = k + 1;
    }
    /* the one under: it started before, so ended before this span (the
     * order); at or before ts it nests */
    if (l->top && t->stk[l->top - 1].end > ts)
        bad_add(t, &l->bad, (nestbad){1, i, t->stk[l->top - 1].span});
    size_t k;
    if (t->stk_free) {
        k = t->stk_free - 1;
        t->stk_free = t->stk[k].below;
    } else {
        k = t->nstk++; /* at most one a span */
    }
    t->stk[k] = (nestlink){i, ts, end, l->top};
    l->top = k + 1;
}

typedef struct nestent {
    uint64_t lane, ts, end;
    size_t i;
} nestent;

static int cmp_nestent(const void *a, const void *b)
{
    const nestent *x = a, *y = b;
    if (x->lane != y->lane)
        return x->lane < y->lane ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    if (x->end != y->end)
        return x->end > y->end ? -1 : 1; /* the longer first: it holds the other */
    return x->i < y->i ? -1 : x->i > y->i;
}

/* The lanes whose spans came out of end order (not written as they
 * ended), checked by start: a span does not nest when a span that started
 * before it is still open at its start and ends before it does. The open
 * spans' ends are kept in a min-heap, so the one ending first is the one
 * to test (a stack's top is not, once a span that does not nest is on
 * it). */
static void check_unordered(tl *t)
{
    ps_log *L = t->L;
    if (!t->nunordered)
        return;
    nestent *e = NULL;
    slotkey *open = NULL;
    /* counted first: the lanes out of order may hold few of the spans */
    size_t n = 0;
    for (int fill = 0; fill < 2; fill++) {
        for (size_t i = 0; i < L->nspan; i++) {
            uint64_t pid, tid, ts;
            if (!span_place(t, &L->span[i], &pid, &tid, &ts))
                continue;
            nestlane *l = nest_lane(t, pid, tid);
            if (l && l->unordered && fill)
                e[n] = (nestent){(uint64_t)(l - t->nl), ts, sat_end(ts, L->span[i].dur), i};
            n += l && l->unordered;
        }
        if (fill)
            break;
        e = malloc((n ? n : 1) * sizeof *e);
        open = malloc((n ? n : 1) * sizeof *open);
        if (!e || !open || n >= UINT32_MAX) {
            free(e);
            free(open);
            t->oom = true;
            return;
        }
        n = 0;
    }
    qsort(e, n, sizeof *e, cmp_nestent);
    size_t nopen = 0;
    for (size_t k = 0; k < n; k++) {
        if (k && e[k].lane != e[k - 1].lane)
            nopen = 0;
        while (nopen && open[0].key <= e[k].ts)
            heap_pop(open, &nopen);
        /* (one that started with it ends no earlier: the sort) */
        if (nopen && open[0].key < e[k].end)
            bad_add(t, &t->bad, (nestbad){1, e[k].i, e[open[0].slot].i});
        heap_push(open, &nopen, (slotkey){e[k].end, (uint32_t)k});
    }
    free(e);
    free(open);
}

static void emit_spans(tl *t)
{
    ps_log *L = t->L;
    /* on huge pages where the kernel has them: a root is never popped, so
     * a lane holds one entry a run, and a fault per 4 KiB page cost more
     * than the check */
    if (!(t->stk = big_array(&t->stk_mem, L->nspan, sizeof *t->stk)))
        t->oom = true;
    for (size_t i = 0; i < L->nspan; i++) {
        const ps_span *s = &L->span[i];
        uint64_t pid, lane, ts;
        if (!span_place(t, s, &pid, &lane, &ts)) {
            /* a device-clock span with no runner_run: the host axis does
             * not share its clock, so it has no place, and is not drawn */
            t->dev_unplaced++;
            continue;
        }
        /* its start (placed, for a device span) a corrupt clock reading */
        if (cw_drop_span(&t->cw, s, ts, L->path))
            continue;
        nest_note(t, i, pid, lane, ts, sat_end(ts, s->dur));
        if (s->dev) {
            proc *pr = find_proc(t, s->pid, false);
            if (pr)
                pr->has_dev = true;
            ev_begin(t, s->name.p, s->name.n, true, "device", pid, lane);
            ev_time(t, ts, s->dur);
            JW_LIT(&t->w, ",\"args\":{\"clock\":\"device\",\"placed\":\"at the start of chip.run.runner_run\","
                          "\"device_ts_ns\":");
            jw_u64str(&t->w, s->ts);
            JW_LIT(&t->w, ",\"host_pid\":");
            jw_u64(&t->w, s->pid);
            JW_LIT(&t->w, ",\"inv\":");
            jw_u64(&t->w, s->inv);
            t->rep->device_spans++;
        } else {
            ev_begin(t, s->name.p, s->name.n, true, "span", s->pid, lane);
            ev_time(t, s->ts, s->dur);
            JW_LIT(&t->w, ",\"args\":{\"inv\":");
            jw_u64(&t->w, s->inv);
            arg_hid_depth(t, s->hid, s->depth);
            proc *pr = find_proc(t, s->pid, false);
            arg_wall(t, pr, s->line, s->ts);
            if (pr && pr->has_span_tid && pr->span_tid != s->tid)
                t->span_multi = true;
            else if (pr && !pr->has_span_tid)
                pr->has_span_tid = true, pr->span_tid = s->tid;
            t->rep->spans++;
            add_thr(t, s->pid, lane);
        }
        if (s->extra.n)
            arg_attrs(t, s->extra.p, s->extra.n);
        JW_LIT(&t->w, "}}");
    }
    for (size_t k = 0; k < t->nnl; k++)
        if (!t->nl[k].unordered)
            bad_add(t, &t->bad, t->nl[k].bad);
    check_unordered(t);
    if (t->bad.n) {
        const ps_span *a = &L->span[t->bad.first], *b = &L->span[t->bad.other];
        dg_add(t->warn,
               "%s:%u: span %.*s (pid=%" PRIu64 " inv=%" PRIu64 ") starts inside %.*s (line %u) on its lane and "
               "ends after it: the lane does not nest, and trace viewers draw it wrong (%zu such span%s)",
               L->path, a->line, (int)a->name.n, a->name.p, a->pid, a->inv, (int)b->name.n, b->name.p, b->line,
               t->bad.n, t->bad.n == 1 ? "" : "s");
    }
    t->rep->unnested = t->bad.n;
}

static void flow_end(tl *t, const char *name, char ph, uint64_t id, uint64_t pid, uint64_t tid, uint64_t ts);

/* A host span's place in (pid, inv, depth, ts) order, for finding parents. */
typedef struct skey {
    uint64_t pid, inv, ts;
    uint32_t depth, i;
} skey;

static int cmp_skey(const void *a, const void *b)
{
    const skey *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->inv != y->inv)
        return x->inv < y->inv ? -1 : 1;
    if (x->depth != y->depth)
        return x->depth < y->depth ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* A span whose parent (same pid and inv, one level up, open at its start)
 * ran on another thread was handed its work by that thread: an arrow from
 * the parent, at the child's start, to the child. Only processes whose
 * spans came from more than one thread can have one, and the spans are
 * sorted only then: in the common log every span of a process is on one
 * thread and this costs nothing (emit_spans notes the threads). */
static void emit_span_handoffs(tl *t)
{
    ps_log *L = t->L;
    if (!t->span_multi || L->nspan > UINT32_MAX)
        return;
    skey *ix = malloc(L->nspan * sizeof *ix);
    if (!ix) {
        t->oom = true;
        return;
    }
    size_t n = 0;
    for (size_t i = 0; i < L->nspan; i++) {
        const ps_span *x = &L->span[i];
        if (!x->dev)
            ix[n++] = (skey){x->pid, x->inv, x->ts, x->depth, (uint32_t)i};
    }
    qsort(ix, n, sizeof *ix, cmp_skey);
    for (size_t k = 0; k < n; k++) {
        const ps_span *c = &L->span[ix[k].i];
        if (c->depth == 0)
            continue;
        /* the last span of the level above that starts no later than c */
        skey key = {c->pid, c->inv, c->ts, c->depth - 1, UINT32_MAX};
        size_t lo = 0, hi = n;
        while (lo < hi) {
            size_t m = (lo + hi) / 2;
            if (cmp_skey(&ix[m], &key) <= 0)
                lo = m + 1;
            else
                hi = m;
        }
        if (!lo)
            continue;
        const ps_span *p = &L->span[ix[lo - 1].i];
        if (p->pid != c->pid || p->inv != c->inv || p->depth != key.depth || p->tid == c->tid ||
            c->ts - p->ts > p->dur || cw_far(&t->cw, p->pid, p->inv, p->ts) ||
            cw_far(&t->cw, c->pid, c->inv, c->ts))
            continue;
        /* at the child's start, inside the parent even when both start
         * together (an arrow binds to the slice around its time) */
        uint64_t at = c->ts == p->ts && p->dur > 1 ? c->ts + 1 : c->ts;
        uint64_t id = ++t->flow_id;
        flow_end(t, "handoff", 's', id, c->pid, lane_of(t, p->pid, p->tid, p->inv), at);
        flow_end(t, "handoff", 'f', id, c->pid, lane_of(t, c->pid, c->tid, c->inv), c->ts + c->dur / 2);
        t->rep->flows++;
    }
    free(ix);
}

/* The segments each pass's records time. Our runtime records every bind
 * segment too: drawing the bind line's copy as well put each one twice on
 * the same lane, one over the other. The records' intervals win, where
 * they are drawn: a pass without its chip.run.bind span has its records
 * left out (emit_records), and its bind lines are then the only copy. */
static void note_record_segments(tl *t, const rc_file *recs, size_t nrecs)
{
    ps_log *L = t->L;
    if (!nrecs || !L->npass)
        return;
    t->rec_segs = calloc(L->npass, sizeof *t->rec_segs);
    if (!t->rec_segs) {
        t->oom = true;
        return;
    }
    for (size_t r = 0; r < nrecs; r++) {
        const rc_file *f = &recs[r];
        int seg[RC_MAX_PHASES];
        for (int k = 0; k < f->nphase; k++) {
            seg[k] = -1;
            for (int s = 0; s < L->nseg; s++)
                if (!strcmp(f->phase[k], L->segname[s]))
                    seg[k] = s;
        }
        for (size_t i = 0; i < f->nline; i++) {
            const rc_line *ln = &f->line[i];
            const ps_pass *p = ps_find(L, ln->pid, ln->inv);
            if (!p || !bind_span(t, ln->pid, ln->inv))
                continue;
            for (size_t k = 0; k < ln->n; k++)
                if (seg[f->rec[ln->first + k].phase] >= 0)
                    t->rec_segs[p - L->pass] |= 1u << seg[f->rec[ln->first + k].phase];
        }
    }
}

/* The scheduler's hand-offs: an arrow from each node.submit to the
 * node.dispatch of the task it submitted, as the original tool draws them;
 * each end in the middle of its slice, so it binds to that slice. */
static void emit_node_flows(tl *t)
{
    ps_log *L = t->L;
    for (size_t i = 0; i < t->ns.nflow; i++) {
        const ps_span *a = &L->span[t->ns.flow[i].submit], *b = &L->span[t->ns.flow[i].dispatch];
        if (cw_far(&t->cw, a->pid, a->inv, a->ts) || cw_far(&t->cw, b->pid, b->inv, b->ts))
            continue; /* an end not drawn */
        uint64_t id = ++t->flow_id;
        flow_end(t, "task dispatch", 's', id, a->pid, lane_of(t, a->pid, a->tid, a->inv), a->ts + a->dur / 2);
        flow_end(t, "task dispatch", 'f', id, b->pid, lane_of(t, b->pid, b->tid, b->inv), b->ts + b->dur / 2);
        t->rep->flows++;
    }
}

/* Whether segment s of pass p, starting at start, lies outside its
 * chip.run.bind span bs: it is drawn as the log has it (a corrupt dur_ns,
 * a clock read wrong), but its lane does not nest there, so it is said
 * and counted, as a record outside its bind span is. */
static bool seg_outside(tl *t, const ps_span *bs, const ps_pass *p, int s, uint64_t start)
{
    const ps_log *L = t->L;
    uint64_t end = sat_end(start, ps_get(L, p, s).dur);
    bool before = start < bs->ts;
    bool after = end > sat_end(bs->ts, bs->dur);
    if (!before && !after)
        return false;
    char label[96];
    t->rep->seg_outside_bind++;
    dg_add(t->warn,
           "%s:%zu: bind segment %s of pass %s %s its chip.run.bind span (line %" PRIu32
           "); drawn, marked outside_bind_span",
           L->path, (size_t)ps_get(L, p, s).line, L->segname[s], ps_label(p, label, sizeof label),
           before ? "starts before" : "ends after", bs->line);
    return true;
}

static void emit_passes(tl *t)
{
    ps_log *L = t->L;
    char label[96];
    for (size_t i = 0; i < L->npass; i++) {
        const ps_pass *p = &L->pass[i];
        if (!p->has_pid || !p->has_inv) {
            t->rep->pass_unplaced++;
            /* a pid its thread's other passes give is no inv: named as
             * what it lacks, not as a pass of no pid */
            if (p->has_pid)
                dg_add(t->warn,
                       "%s:%zu: bind pass %s has no chip.run.bind span to give its inv (the original runtime's "
                       "bind lines carry none); not drawn",
                       L->path, p->first_line, ps_label(p, label, sizeof label));
            else
                dg_add(t->warn, "%s:%zu: bind pass %s has no pid/inv and no chip.run.bind span; not drawn", L->path,
                       p->first_line, ps_label(p, label, sizeof label));
            continue;
        }
        /* its segments, each below the bound, sum past it: some are
         * decades long, and drawn they would stretch the axis as a long
         * span would (the pass's own warning says it is not drawn) */
        if (p->defects & PS_D_LONG)
            continue;
        uint32_t from_records = t->rec_segs ? t->rec_segs[i] : 0;
        /* nothing of it left to draw from its bind lines: each line
         * malformed (a first line the log's end cut: its own warnings say
         * so), or each segment drawn from the records; with its span or
         * without, no lane and no "drawn on thread" for it */
        if (!(p->present & ~from_records))
            continue;
        const ps_span *bs = bind_span(t, p->pid, p->inv);
        uint64_t tid = bs ? lane_of(t, p->pid, bs->tid, p->inv) : p->pid;
        if (!bs) {
            t->rep->pass_nospan++;
            dg_add(t->warn, "%s:%zu: bind pass %s has no chip.run.bind span; its segments are drawn on thread %" PRIu64,
                   L->path, p->first_line, ps_label(p, label, sizeof label), tid);
            add_thr(t, p->pid, tid);
        }
        const proc *pr = find_proc(t, p->pid, false);
        for (int s = 0; s < L->nseg; s++) {
            if (!(p->present & (1u << s)) || (from_records & (1u << s)))
                continue;
            uint64_t start = ps_start(L, p, s);
            if (cw_drop(&t->cw, p->pid, p->inv, start, L->path, ps_get(L, p, s).line, "bind segment",
                        L->segname[s], strlen(L->segname[s])))
                continue;
            ev_begin(t, L->segname[s], strlen(L->segname[s]), false, "bind", p->pid, tid);
            ev_time(t, start, ps_get(L, p, s).dur);
            JW_LIT(&t->w, ",\"args\":{\"inv\":");
            jw_u64(&t->w, p->inv);
            arg_wall(t, pr, ps_get(L, p, s).line, start);
            ps_text at = ps_seg_attr(L, p, s);
            if (at.n)
                arg_attrs(t, at.p, at.n);
            if (bs && seg_outside(t, bs, p, s, start))
                JW_LIT(&t->w, ",\"outside_bind_span\":true");
            JW_LIT(&t->w, "}}");
            t->rep->segments++;
        }
    }
}

/* One end of a flow arrow: "s" leaves the slice around ts on (pid, tid),
 * "f" arrives in the slice around ts ("bp":"e": the enclosing slice, not
 * the next one to start). */
static void flow_end(tl *t, const char *name, char ph, uint64_t id, uint64_t pid, uint64_t tid, uint64_t ts)
{
    JW_LIT(&t->w, ",\n{\"name\":\"");
    jw_lit(&t->w, name);
    JW_LIT(&t->w, "\",\"cat\":\"flow\",\"ph\":\"");
    char c[2] = {ph, 0};
    jw_lit(&t->w, c);
    if (ph == 'f')
        JW_LIT(&t->w, "\",\"bp\":\"e\",\"id\":");
    else
        JW_LIT(&t->w, "\",\"id\":");
    jw_u64(&t->w, id);
    JW_LIT(&t->w, ",\"pid\":");
    jw_u64(&t->w, lane_pid(t, pid));
    JW_LIT(&t->w, ",\"tid\":");
    jw_u64(&t->w, tid_lane(t, pid, tid));
    JW_LIT(&t->w, ",\"ts\":");
    jw_us(&t->w, ts);
    JW_LIT(&t->w, "}");
    t->rep->events++;
}

/* The middle of a record: an arrow's end is bound to the slice that
 * encloses it, and a slice's own start may tie with its neighbour's end. */
static uint64_t mid(const rc_rec *x)
{
    return x->start + (x->end - x->start) / 2;
}

struct by_start {
    uint64_t start;
    size_t i;
};

static int cmp_start(const void *a, const void *b)
{
    const struct by_start *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* A hand-off: of two records of one pass that follow each other in time,
 * the second on another thread and starting after the first ended (work
 * passed on, not two threads busy at once). Each is an arrow from the
 * first to the second. */
static void emit_handoffs(tl *t, const rc_file *f, const rc_line *ln)
{
    if (ln->n < 2)
        return;
    if (!vec_grow((void **)&t->order, &t->caporder, ln->n, sizeof *t->order)) {
        t->oom = true;
        return;
    }
    const rc_rec *r = &f->rec[ln->first];
    bool sorted = true;
    for (size_t i = 0; i < ln->n; i++) {
        t->order[i] = (struct by_start){r[i].start, i};
        if (i && r[i].start < r[i - 1].start)
            sorted = false;
    }
    if (!sorted)
        qsort(t->order, ln->n, sizeof *t->order, cmp_start);
    for (size_t i = 1; i < ln->n; i++) {
        const rc_rec *a = &r[t->order[i - 1].i], *b = &r[t->order[i].i];
        if (a->tid == b->tid || a->end > b->start || cw_far(&t->cw, ln->pid, ln->inv, a->start) ||
            cw_far(&t->cw, ln->pid, ln->inv, b->start))
            continue;
        uint64_t id = ++t->flow_id;
        flow_end(t, "handoff", 's', id, ln->pid, lane_of(t, ln->pid, a->tid, ln->inv), mid(a));
        flow_end(t, "handoff", 'f', id, ln->pid, lane_of(t, ln->pid, b->tid, ln->inv), mid(b));
        t->rep->flows++;
    }
}

static void emit_records(tl *t, const rc_file *f)
{
    ps_log *L = t->L;
    bool is_op[RC_MAX_PHASES] = {false};
    for (int i = 0; i < f->nphase; i++)
        for (int o = 0; o < PS_NOPS; o++)
            if (!strcmp(f->phase[i], ps_op_name(o)))
                is_op[i] = true;
    for (size_t li = 0; li < f->nline; li++) {
        const rc_line *ln = &f->line[li];
        t->rep->rec_lines++;
        if (ln->dropped) {
            t->rep->rec_dropped_lines++;
            t->rep->rec_dropped += ln->dropped;
            dg_add(t->warn, "%s:%zu: pid=%" PRIu64 " inv=%" PRIu64 " dropped=%" PRIu64
                            ": the record pool refused that many records; this pass's operations are incomplete",
                   f->path, ln->lineno, ln->pid, ln->inv, ln->dropped);
        }
        const ps_span *bs = bind_span(t, ln->pid, ln->inv);
        if (!bs) {
            t->rep->rec_nobind++;
            char its[48] = "its one record is not drawn"; /* not "its 1 records are" */
            if (ln->n != 1)
                snprintf(its, sizeof its, "its %zu records are not drawn", ln->n);
            dg_add(t->warn, "%s:%zu: pid=%" PRIu64 " inv=%" PRIu64 " has no chip.run.bind span in %s; %s", f->path,
                   ln->lineno, ln->pid, ln->inv, L->path, its);
            continue;
        }
        const ps_pass *p = ps_find(L, ln->pid, ln->inv);
        bool has_orch = p && (p->present & (1u << PS_HOST_ORCH));
        uint64_t o0 = has_orch ? ps_start(L, p, PS_HOST_ORCH) : 0;
        uint64_t o1 = 0, b0 = bs->ts, b1;
        if (has_orch && __builtin_add_overflow(o0, p->dur[PS_HOST_ORCH], &o1))
            o1 = UINT64_MAX;
        if (__builtin_add_overflow(b0, bs->dur, &b1))
            b1 = UINT64_MAX;
        const proc *pr = find_proc(t, ln->pid, false);
        /* host_orch repeated on every other thread that did operations, so
         * each thread's operations nest inside it on their own lane */
        uint64_t seen[16];
        size_t nseen = 0;
        size_t outside = 0, outside_orch = 0;
        for (size_t r = 0; r < ln->n; r++) {
            const rc_rec *x = &f->rec[ln->first + r];
            /* records of bind segments lie beside host_orch, not in it */
            bool op = is_op[x->phase];
            if (op && has_orch && x->tid != bs->tid && !cw_far(&t->cw, ln->pid, ln->inv, o0)) {
                bool dup = false;
                for (size_t k = 0; k < nseen; k++)
                    dup |= seen[k] == x->tid;
                if (!dup && nseen < 16) {
                    seen[nseen++] = x->tid;
                    ev_begin(t, "host_orch", 9, false, "bind", ln->pid, x->tid);
                    ev_time(t, o0, o1 - o0);
                    JW_LIT(&t->w, ",\"args\":{\"inv\":");
                    jw_u64(&t->w, ln->inv);
                    JW_LIT(&t->w, ",\"note\":\"host_orch of the bind thread, repeated on this thread\"");
                    arg_wall(t, pr, bs->line, o0);
                    JW_LIT(&t->w, "}}");
                    t->rep->orch_copies++;
                }
            }
            const char *ph = f->phase[x->phase];
            if (cw_drop(&t->cw, ln->pid, ln->inv, x->start, f->path, ln->lineno, "record", ph, strlen(ph)))
                continue;
            uint64_t lane = lane_of(t, ln->pid, x->tid, ln->inv);
            add_thr(t, ln->pid, lane);
            ev_begin(t, ph, strlen(ph), false, "op", ln->pid, lane);
            ev_time(t, x->start, x->end - x->start);
            JW_LIT(&t->w, ",\"args\":{\"inv\":");
            jw_u64(&t->w, ln->inv);
            JW_LIT(&t->w, ",\"detail\":");
            put_num(&t->w, x->detail);
            arg_wall(t, pr, bs->line, x->start);
            if (x->start < b0 || x->end > b1) {
                outside++;
                JW_LIT(&t->w, ",\"outside_bind_span\":true");
            } else if (op && has_orch && (x->start < o0 || x->end > o1)) {
                outside_orch++;
                JW_LIT(&t->w, ",\"outside_host_orch\":true");
            }
            JW_LIT(&t->w, "}}");
            t->rep->records++;
        }
        emit_handoffs(t, f, ln);
        if (outside) {
            char some[64] = "its one record lies"; /* not "1 of 1 records lie" */
            if (ln->n != 1)
                snprintf(some, sizeof some, "%zu of %zu records %s", outside, ln->n, outside == 1 ? "lies" : "lie");
            dg_add(t->warn, "%s:%zu: pid=%" PRIu64 " inv=%" PRIu64 ": %s outside the bind span", f->path, ln->lineno,
                   ln->pid, ln->inv, some);
        }
        t->rep->rec_outside_bind += outside;
        t->rep->rec_outside_orch += outside_orch;
    }
}

hbg_status tl_write(ps_log *L, const rc_file *recs, size_t nrecs, FILE *out, tl_report *rep, dg_list *warn)
{
    tl t;
    memset(&t, 0, sizeof t);
    hmap_init(&t.h, 3);
    memset(rep, 0, sizeof *rep);
    t.L = L;
    t.rep = rep;
    t.warn = warn;
    t.first = true;
    rep->torn = L->ntorn;
    if (!jw_init(&t.w, out))
        return HBG_E_NOMEM;
    t.frags = calloc(2 * FRAG_SLOTS, sizeof *t.frags); /* none: every piece written afresh */
    /* the trace is about as large as the log: its writes overlap the formatting */
    jw_background(&t.w);

    /* processes in order of first appearance: anchors, spans, passes. Not
     * records: a record is drawn only under its pass's chip.run.bind span,
     * so a pid that only records name (another run's records file) would
     * be an empty lane, counted as a rank and warned of as unanchored. */
    for (size_t i = 0; i < L->nanchor; i++) {
        proc *p = find_proc(&t, L->anchor[i].pid, true);
        if (!p)
            break;
        p->has_anchor = true;
        p->na++;
    }
    /* each process's anchors, in log order: the one in force at a record
     * is the latest before it (a process may anchor again) */
    t.anc = malloc((L->nanchor ? L->nanchor : 1) * sizeof *t.anc);
    if (!t.anc)
        t.oom = true;
    for (size_t i = 0, at = 0; t.anc && i < t.nproc; i++) {
        t.proc[i].a0 = at;
        at += t.proc[i].na;
        t.proc[i].na = 0;
    }
    for (size_t i = 0; t.anc && i < L->nanchor; i++) {
        proc *p = find_proc(&t, L->anchor[i].pid, false);
        t.anc[p->a0 + p->na++] = &L->anchor[i];
    }
    for (size_t i = 0; i < L->nspan; i++)
        find_proc(&t, L->span[i].pid, true);
    for (size_t i = 0; i < L->npass; i++)
        if (L->pass[i].has_pid)
            find_proc(&t, L->pass[i].pid, true);
    run_procs(&t);
    number_procs(&t);

    for (size_t i = 0; i < L->nspan; i++)
        if (!L->span[i].dev && L->span[i].depth == 1 && lx_slice_eq(L->span[i].name, "chip.run.bind"))
            t.nbs++;
    {
        /* the largest of the arrays sorted below, each at most one per span */
        size_t big = sizeof(devplace) > sizeof(bspan) ? sizeof(devplace) : sizeof(bspan);
        big = big > sizeof(rootkey) ? big : sizeof(rootkey);
        if (!big_array(&t.scratch, L->nspan, big))
            t.scratch.p = NULL; /* qsort instead */
    }
    collect_roots(&t);
    drop_repeats(&t);
    t.bs = big_array(&t.bs_mem, t.nbs, sizeof *t.bs);
    if (!t.bs || t.oom) {
        jw_free(&t.w);
        free(t.frags);
        hm_free(&t.rk_mem);
        hm_free(&t.bs_mem);
        hm_free(&t.scratch);
        free(t.proc);
        free(t.thr);
        hmap_free(&t.h);
        return HBG_E_NOMEM;
    }
    t.nbs = 0;
    for (size_t i = 0; i < L->nspan; i++)
        if (!L->span[i].dev && L->span[i].depth == 1 && lx_slice_eq(L->span[i].name, "chip.run.bind"))
            t.bs[t.nbs++] = (bspan){L->span[i].pid, L->span[i].inv, i};
    sort_runs(t.bs, t.nbs, sizeof *t.bs, cmp_bs, t.scratch.p);

    if (!cw_build(&t.cw, L))
        t.oom = true;
    place_device_spans(&t);
    split_pipelined(&t, recs, nrecs);
    collect_tids(&t, recs, nrecs);
    if (ns_analyse(L, &t.ns) != HBG_OK)
        t.oom = true;
    JW_LIT(&t.w, "{\"traceEvents\":[");
    emit_spans(&t);
    if (t.dev_unplaced == 1) /* not "1 device-clock spans have" */
        dg_add(warn,
               "%s: one device-clock span has no chip.run.runner_run span in its invocation; not drawn "
               "(its ts is on the device clock, which the host axis does not share)",
               L->path);
    else if (t.dev_unplaced)
        dg_add(warn, "%s: %zu device-clock spans have no chip.run.runner_run span in their invocation; not drawn "
                     "(their ts is on the device clock, which the host axis does not share)",
               L->path, t.dev_unplaced);
    emit_span_handoffs(&t);
    emit_node_flows(&t);
    note_record_segments(&t, recs, nrecs);
    emit_passes(&t);
    for (size_t r = 0; r < nrecs; r++) {
        emit_records(&t, &recs[r]);
        rep->rec_bad_lines += recs[r].nbad;
    }

    char name[224], run[64];
    for (size_t i = 0; i < t.nproc; i++) {
        const proc *p = &t.proc[i];
        size_t k = p->rank;
        tl_run_label(L, t.nrun, p->run, run, sizeof run);
        char moved[64] = "";
        if (p->lane_pid != p->pid) /* Perfetto would show the lane's number, not the pid */
            snprintf(moved, sizeof moved, ", past 2^32: drawn as %" PRIu64, p->lane_pid);
        snprintf(name, sizeof name, "rank %zu (pid %" PRIu64 "%s)%s%s", k, p->pid, moved, run,
                 p->has_anchor ? "" : " - no clock anchor");
        meta(&t, "process_name", p->pid, 0, name);
        meta_sort(&t, p->pid, 2 * p->order);
        if (!p->has_anchor) {
            rep->pids_no_anchor++;
            dg_add(warn, "%s: pid=%" PRIu64 " has no [CLOCK_ANCHOR]; its events carry no wall_ns", L->path, p->pid);
        }
        if (p->has_dev) {
            snprintf(name, sizeof name,
                     "rank %zu (pid %" PRIu64 ")%s device: device-clock spans, placed at the start of runner_run", k,
                     p->pid, run);
            meta(&t, "process_name", p->dev_pid, 0, name);
            meta_sort(&t, p->dev_pid, 2 * p->order + 1);
        }
    }
    for (size_t i = 0; i < t.nthr; i++) {
        const ns_role *role = t.thr[i].slot ? NULL : ns_role_of(&t.ns, t.thr[i].pid, t.thr[i].tid);
        if (t.thr[i].slot)
            snprintf(name, sizeof name, "pipeline slot %u (tid %" PRIu64 ")", t.thr[i].slot, t.thr[i].real_tid);
        else if (!role || !ns_lane_name(role, name, sizeof name))
            snprintf(name, sizeof name, "tid %" PRIu64, t.thr[i].tid);
        uint64_t lane = tid_lane(&t, t.thr[i].pid, t.thr[i].tid);
        if (!t.thr[i].slot && lane != t.thr[i].tid) /* Perfetto would show the lane's number, not the tid */
            note_moved(name, sizeof name, lane);
        meta(&t, "thread_name", t.thr[i].pid, t.thr[i].tid, name);
    }
    for (size_t i = 0; i < t.nproc; i++)
        for (size_t k = 0; t.proc[i].has_dev && k < t.ndl; k++) {
            size_t nl = decode_name(&t, t.dl[k].name);
            if (t.oom)
                break;
            if (t.dl[k].slot)
                snprintf(name, sizeof name, "%.*s (pipeline slot %u)", (int)nl, t.nbuf, t.dl[k].slot);
            else
                snprintf(name, sizeof name, "%.*s", (int)nl, t.nbuf);
            meta(&t, "thread_name", t.proc[i].dev_pid, k + 1, name);
        }
    JW_LIT(&t.w, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"hbg timeline\",\"log\":");
    jw_str(&t.w, L->file, strlen(L->file));
    JW_LIT(&t.w, ",\"stamp\":");
    if (L->has_stamp)
        jw_str(&t.w, L->stamp.p, L->stamp.n);
    else
        JW_LIT(&t.w, "null");
    tl_put_incomplete(&t.w, L);
    JW_LIT(&t.w, ",\"clockAnchors\":[");
    for (size_t i = 0; i < L->nanchor; i++) {
        const ps_anchor *a = &L->anchor[i];
        jw_lit(&t.w, i ? ",{\"pid\":" : "{\"pid\":");
        jw_u64(&t.w, a->pid);
        JW_LIT(&t.w, ",\"line\":");
        jw_u64(&t.w, a->line);
        JW_LIT(&t.w, ",\"mono_ns\":");
        jw_u64str(&t.w, a->mono);
        put_wall(&t, a->wall);
        JW_LIT(&t.w, "}");
    }
    JW_LIT(&t.w, "]}}\n");
    cw_warn(&t.cw, warn);
    rep->far = t.cw.note.n;
    if (t.before_anchor == 1) /* not "1 events precede" */
        dg_add(warn, "%s: one event precedes its process's first clock anchor; it carries no wall_ns", L->path);
    else if (t.before_anchor)
        dg_add(warn, "%s: %zu events precede their process's first clock anchor; they carry no wall_ns", L->path,
               t.before_anchor);
    if (t.wall_range == 1) /* not "1 events carry" */
        dg_add(warn,
               "%s: one event carries no wall_ns: its clock anchor's wall_ns puts it outside 0 .. 2^64 - 1 ns "
               "(a corrupt anchor)",
               L->path);
    else if (t.wall_range)
        dg_add(warn,
               "%s: %zu events carry no wall_ns: their clock anchor's wall_ns puts them outside 0 .. 2^64 - 1 ns "
               "(a corrupt anchor)",
               L->path, t.wall_range);
    if (t.anchor_bad == 1)
        dg_add(warn,
               "%s:%zu: one event carries no wall_ns: its clock anchor's mono_ns is corrupt (far from its own line's "
               "[mono_ns=] and from the event's)",
               L->path, t.anchor_bad_line);
    else if (t.anchor_bad)
        dg_add(warn,
               "%s:%zu: %zu events carry no wall_ns: their clock anchor's mono_ns is corrupt (far from its own line's "
               "[mono_ns=] and from theirs)",
               L->path, t.anchor_bad_line, t.anchor_bad);
    bool ok = jw_flush(&t.w);
    jw_free(&t.w);
    free(t.frags);
    hm_free(&t.rk_mem);
    hm_free(&t.bs_mem);
    hm_free(&t.stk_mem);
    free(t.nl);
    hm_free(&t.scratch);
    free(t.proc);
    free(t.thr);
    free(t.nbuf);
    free(t.an);
    free(t.an_end);
    free(t.order);
    free(t.rec_segs);
    hm_free(&t.dp_mem);
    free(t.dl);
    free(t.anc);
    free(t.sl);
    free(t.low_tid);
    free(t.big_lane);
    ns_free(&t.ns);
    cw_free(&t.cw);
    hmap_free(&t.h);
    if (t.oom)
        return HBG_E_NOMEM;
    return ok ? HBG_OK : HBG_E_IO;
}
