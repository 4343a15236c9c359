/* Grouping bind-phase lines into passes; see passes.h for the rules. */
#include "tools/passes.h"
#include "tools/diag.h"
#include "tools/passes_internal.h"
#include "hbg/trace.h"
#include "tools/hugemem.h"
#include "tools/linereader.h"
#include "util/vec.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The names of the segments and operations our runtime writes are its own
 * (hbg_phase_name, the one spelling of the log's vocabulary); the reader
 * adds only the retired segments of the original runtime's logs. The
 * reader's ids follow the runtime's order: */
_Static_assert(PS_ARGS == (int)HBG_PH_ARGS && PS_HOST_VIEW_CLOSE == (int)HBG_PH_HOST_VIEW_CLOSE &&
                   PS_HOST_VIEW_CLOSE + 1 == (int)HBG_SEGMENT_COUNT,
               "the reader's segment ids are the runtime's hbg_phase segments");
_Static_assert(PS_NOPS == (int)HBG_OP_BUILD_DEFINITION - (int)HBG_OP_SUBMIT_TASK + 1,
               "the reader's operation ids are the runtime's hbg_phase operations");
static const char *const retired_segs[PS_NKNOWN - HBG_SEGMENT_COUNT] = {"relocate", "sm_h2d"};

const char *ps_op_name(int op)
{
    return hbg_phase_name((hbg_phase)(HBG_OP_SUBMIT_TASK + op));
}

static const char *known_seg_name(int seg)
{
    return seg < (int)HBG_SEGMENT_COUNT ? hbg_phase_name((hbg_phase)seg) : retired_segs[seg - HBG_SEGMENT_COUNT];
}

const char *ps_label(const ps_pass *p, char *out, size_t n)
{
    if (p->has_pid && p->has_inv)
        snprintf(out, n, "pid=%" PRIu64 " inv=%" PRIu64, p->pid, p->inv);
    else if (p->has_pid && p->has_thread)
        snprintf(out, n, "pid=%" PRIu64 " thread 0x%" PRIx64, p->pid, p->thread);
    else if (p->has_thread)
        snprintf(out, n, "thread 0x%" PRIx64, p->thread);
    else
        snprintf(out, n, "without pid, inv or thread");
    return out;
}

const ps_pass *ps_find(const ps_log *L, uint64_t pid, uint64_t inv)
{
    uint32_t v = hmap_get2(&L->ix->map, pid, inv);
    return v ? &L->pass[v - 1] : NULL;
}

/* --- passes ------------------------------------------------------------ */

static ps_pass *new_pass(ps_log *L, size_t line)
{
    if (L->npass == L->cap) {
        hm_block nb;
        /* The first array is sized for the worst case the file allows (a
         * pass needs a bind line of 33 bytes at least): a reservation that
         * is only paid for where it is touched, so it never moves. */
        size_t nc = L->cap ? L->cap * 2 : 256;
        if (!L->cap && L->size_hint / 33 + 16 > nc)
            nc = L->size_hint / 33 + 16;
        /* a reservation the system refuses falls back to growing by doubling
         * (not vec_grow: the array lives on huge pages, see hugemem.h) */
        if (hm_alloc(&nb, nc * sizeof(ps_pass)) != 0 &&
            (nc == (L->cap ? L->cap * 2 : 256) || hm_alloc(&nb, (L->cap ? L->cap * 2 : 256) * sizeof(ps_pass)) != 0)) {
            L->oom = true;
            return NULL;
        }
        size_t ncap = nb.len / sizeof(ps_pass);
        if (L->opt.keep_spans) {
            hm_block nx;
            if (hm_alloc(&nx, ncap * PS_MAXSEG * sizeof(ps_segx)) != 0) {
                hm_free(&nb);
                L->oom = true;
                return NULL;
            }
            if (L->npass)
                memcpy(nx.p, L->segx, L->npass * PS_MAXSEG * sizeof(ps_segx));
            hm_free(&L->segxmem);
            L->segxmem = nx;
            L->segx = nx.p;
        }
        if (L->npass)
            memcpy(nb.p, L->pass, L->npass * sizeof(ps_pass));
        hm_free(&L->passmem);
        L->passmem = nb;
        L->pass = nb.p;
        L->cap = ncap;
    }
    ps_pass *p = &L->pass[L->npass++];
    /* the segments need no clearing: present says which are set */
    memset(p, 0, offsetof(ps_pass, op_line));
    p->first_line = line;
    p->first_seg = -1;
    p->rank = -1;
    p->run = L->nstamps;
    p->run_last = L->nstamps ? L->nstamps : 1;
    return p;
}

/* What follows a malformed line's warning: a drawing (opt.draws) leaves
 * out a bind line's segment or a span, which it would have drawn; a
 * host-orch line or an anchor it never draws, and so ignores. */
static const char *bad_fate(const ps_log *L, lx_kind kind)
{
    return L->opt.draws && (kind == LX_BIND || kind == LX_SPAN) ? "not drawn" : "ignored";
}

static inline int seg_id(ps_log *L, lx_slice name, size_t line)
{
    /* the names of one log are few and usually hit in the first compares */
    for (int i = 0; i < L->nseg; i++)
        if (name.n == L->seglen[i] && name.p[0] == L->segname[i][0] && memcmp(L->segname[i], name.p, name.n) == 0)
            return i;
    if (L->nseg == PS_MAXSEG) {
        if (!L->seg_overflow_warned) {
            L->seg_overflow_warned = true;
            dg_add(&L->warn, "%s:%zu: more than %d distinct segment names; segment %.*s and later new names %s",
                   L->path, line, PS_MAXSEG, (int)name.n, name.p, L->opt.draws ? "not drawn" : "ignored");
        }
        return -1;
    }
    memcpy(L->segname[L->nseg], name.p, name.n);
    L->segname[L->nseg][name.n] = 0;
    L->seglen[L->nseg] = (uint8_t)name.n;
    /* kept as its own row, but never silently: a typo or a segment from a
     * newer runtime must be seen */
    dg_add(&L->warn, "%s:%zu: unknown segment %s (not one of this version's); %s", L->path, line, L->segname[L->nseg],
           L->opt.draws ? "drawn under its own name" : "kept as its own row");
    return L->nseg++;
}

static int op_id(lx_slice name)
{
    for (int i = 0; i < PS_NOPS; i++)
        if (lx_slice_eq(name, ps_op_name(i)))
            return i;
    return -1;
}

/* The open (unkeyed) burst of each writing thread. A closed entry keeps
 * its slot, marked NO_OPEN, so open addressing never needs a deletion. */
#define NO_OPEN UINT32_MAX

static ps_pass *open_pass(ps_log *L, bool has_thread, uint64_t thread)
{
    ps_index *X = L->ix;
    /* a burst's lines usually follow each other: remember the last one */
    if (X->last_open && X->last_open_ht == has_thread && X->last_open_th == thread)
        return X->last_open == NO_OPEN ? NULL : &L->pass[X->last_open - 1];
    uint32_t v = hmap_get2(&X->omap, thread, has_thread ? 1 : 2);
    if (!v)
        v = NO_OPEN;
    X->last_open = v;
    X->last_open_ht = has_thread;
    X->last_open_th = thread;
    return v == NO_OPEN ? NULL : &L->pass[v - 1];
}

static void set_open(ps_log *L, bool has_thread, uint64_t thread, uint32_t val)
{
    ps_index *X = L->ix;
    uint32_t *s = hmap_put2(&X->omap, thread, has_thread ? 1 : 2);
    if (!s) {
        L->oom = true;
        return;
    }
    *s = val;
    X->last_open = val;
    X->last_open_ht = has_thread;
    X->last_open_th = thread;
}

/* Text blocks grow from TEXTBLK0 to TEXTBLK, doubling: a small log's
 * names fit in a few small pages, where a first block of 4 MiB took a
 * huge page, cleared whole (2 MiB) for a few hundred bytes of text: half
 * a millisecond a log, seconds for hbg compare over a thousand logs. */
#define TEXTBLK0 ((size_t)16 << 10)
#define TEXTBLK ((size_t)4 << 20)

/* Eight bytes per step: every span and segment of a timeline is hashed, and
 * a byte-at-a-time hash was a visible part of the run. */
static uint64_t text_hash(const char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0x9e3779b97f4a7c15ull;
        h ^= h >> 32;
    }
    if (i < n) {
        uint64_t w = 0;
        memcpy(&w, p + i, n - i);
        h = (h ^ w) * 0x9e3779b97f4a7c15ull;
        h ^= h >> 32;
    }
    h *= 0xc2b2ae3d27d4eb4full;
    h ^= h >> 29;
    return h;
}

typedef struct text_key {
    const ps_log *L;
    const char *p;
    size_t n;
} text_key;

/* The key's words are the text's hash and length; this compares the rest. */
static bool same_text(void *ctx, uint32_t val)
{
    const text_key *k = ctx;
    return memcmp(k->L->ix->itext[val - 1], k->p, k->n) == 0;
}

static const char *copy_text(ps_log *L, const char *p, size_t n)
{
    if (!L->ntextblk || L->textused + n > L->textblk[L->ntextblk - 1].len) {
        if (!vec_grow((void **)&L->textblk, &L->captextblk, L->ntextblk + 1, sizeof *L->textblk)) {
            L->oom = true;
            return NULL;
        }
        size_t want = L->ntextblk >= 8 ? TEXTBLK : TEXTBLK0 << L->ntextblk; /* 16 KiB << 8 = 4 MiB */
        if (hm_alloc(&L->textblk[L->ntextblk], n > want ? n : want) != 0) {
            L->oom = true;
            return NULL;
        }
        L->ntextblk++;
        L->textused = 0;
    }
    char *d = (char *)L->textblk[L->ntextblk - 1].p + L->textused;
    memcpy(d, p, n);
    L->textused += n;
    return d;
}

static const char *intern_text(ps_log *L, const char *p, size_t n);

/* A copy of p, shared with an earlier identical text when there is one. */
static const char *keep_text(ps_log *L, const char *p, size_t n)
{
    ps_index *X = L->ix;
    if (L->buf)
        return p;
    /* n > 0: the callers keep no empty text */
    unsigned r = (unsigned)(((uint64_t)n * 0x9E3779B1u ^ (unsigned char)p[0] ^ (unsigned)(unsigned char)p[n / 2] << 8 ^
                             (unsigned)(unsigned char)p[n - 1] << 16) *
                            0x9E3779B97F4A7C15ull >> 58);
    if (X->recent_n[r] == n && memcmp(X->recent[r], p, n) == 0)
        return X->recent[r];
    const char *c = intern_text(L, p, n);
    if (c && n <= UINT32_MAX) {
        X->recent[r] = c;
        X->recent_n[r] = (uint32_t)n;
    }
    return c;
}

/* keep_text's copy, found by the text's whole hash or made. */
static const char *intern_text(ps_log *L, const char *p, size_t n)
{
    ps_index *X = L->ix;
    const uint64_t key[2] = {text_hash(p, n), n};
    text_key k = {L, p, n};
    uint32_t *s = hmap_put_eq(&X->intern, key, same_text, &k);
    if (!s || (!*s && !vec_grow((void **)&X->itext, &X->capitext, X->nitext + 1, sizeof *X->itext))) {
        L->oom = true;
        return NULL;
    }
    if (*s)
        return X->itext[*s - 1];
    const char *c = copy_text(L, p, n);
    if (!c)
        return NULL;
    X->itext[X->nitext++] = c;
    *s = (uint32_t)X->nitext;
    return c;
}

static lx_slice keep_slice(ps_log *L, lx_slice s)
{
    lx_slice o = {s.n ? keep_text(L, s.p, s.n) : s.p, s.n};
    if (s.n && !o.p)
        o.n = 0;
    return o;
}

/* Whether name s is its own canonical encoding: no '%' to look at, no
 * byte that needs one (the common case, checked without a copy). */
static bool canonical(lx_slice s)
{
    for (size_t i = 0; i < s.n; i++) {
        unsigned char c = (unsigned char)s.p[i];
        if (lx_name_encodes(c))
            return false;
    }
    return true;
}

/* A span's name, kept in its canonical encoding (lx_canon_name): a name
 * that a writer encoded otherwise ("chip.run.bin%64") is grouped, matched
 * and drawn as the name it is. */
static lx_slice keep_name(ps_log *L, lx_slice s)
{
    if (!s.n || canonical(s))
        return keep_slice(L, s);
    char small[768], *buf = 3 * s.n <= sizeof small ? small : malloc(3 * s.n);
    if (!buf) {
        L->oom = true;
        return (lx_slice){s.p, 0};
    }
    /* a copy of its own whatever the mode: keep_text hands back the log's
     * own bytes when the log is in memory, and these are this frame's */
    size_t n = lx_canon_name(s, buf);
    lx_slice o = {intern_text(L, buf, n), n};
    if (!o.p)
        o.n = 0;
    if (buf != small)
        free(buf);
    return o;
}

/* Whether span name s is, in its canonical encoding, the text t. */
static bool name_is(lx_slice s, const char *t)
{
    char buf[192];
    if (canonical(s) || 3 * s.n > sizeof buf)
        return lx_slice_eq(s, t);
    return lx_slice_eq((lx_slice){buf, lx_canon_name(s, buf)}, t);
}

/* The side-table entry of segment id (>= PS_INLINE) of pass p. */
static ps_xseg *side_seg(ps_log *L, const ps_pass *p, int id, bool insert)
{
    ps_index *X = L->ix;
    uint64_t i = (uint64_t)(p - L->pass);
    if (!insert) {
        uint32_t v = hmap_get2(&X->xmap, i, (uint64_t)id);
        return v ? &X->xseg[v - 1] : NULL;
    }
    uint32_t *s = hmap_put2(&X->xmap, i, (uint64_t)id);
    if (!s || (!*s && !vec_grow((void **)&X->xseg, &X->capxseg, X->nxseg + 1, sizeof *X->xseg))) {
        L->oom = true;
        return NULL;
    }
    if (!*s)
        *s = (uint32_t)++X->nxseg;
    return &X->xseg[*s - 1];
}

ps_seg ps_get_side(const ps_log *L, const ps_pass *p, int id)
{
    ps_seg g = {0, 0, 0, (p->has_bytes >> id) & 1};
    const ps_xseg *x = side_seg((ps_log *)L, p, id, false);
    if (x) {
        g.dur = x->dur;
        g.bytes = x->bytes;
        g.line = x->line;
    }
    return g;
}

static void add_segment(ps_log *L, ps_pass *p, int id, const lx_rec *r)
{
    uint32_t bit = 1u << id;
    if (p->present & bit) {
        if (!(p->defects & PS_D_DUPLICATE)) {
            p->defects |= PS_D_DUPLICATE;
            p->dup_line = r->line > UINT32_MAX ? UINT32_MAX : (uint32_t)r->line;
            p->dup_first_line = ps_get(L, p, id).line;
            p->dup_seg = (int8_t)id;
        }
        return;
    }
    uint64_t *dur, *bytes;
    uint32_t *line;
    if (id < PS_INLINE) {
        dur = &p->dur[id];
        bytes = &p->bytes[id];
        line = &p->line[id];
    } else {
        ps_xseg *x = side_seg(L, p, id, true);
        if (!x)
            return;
        dur = &x->dur;
        bytes = &x->bytes;
        line = &x->line;
    }
    if (p->first_seg < 0) {
        p->first_seg = (int8_t)id;
        p->first_start = r->start;
    }
    p->present |= bit;
    L->seen |= bit;
    *dur = r->dur;
    if (r->dur > L->max_dur)
        L->max_dur = r->dur;
    *line = r->line > UINT32_MAX ? UINT32_MAX : (uint32_t)r->line;
    if (L->segx) {
        ps_segx *x = &L->segx[(size_t)(p - L->pass) * PS_MAXSEG + (size_t)id];
        x->start = r->start;
        x->attr.p = NULL;
        x->attr.n = 0;
        if (r->attr_text.n && r->attr_text.n < UINT32_MAX) {
            x->attr.p = keep_text(L, r->attr_text.p, r->attr_text.n);
            x->attr.n = x->attr.p ? r->attr_text.n : 0;
        }
    }
    for (int i = 0; i < r->nattr; i++) {
        const lx_attr *a = &r->attr[i];
        if (!a->is_num) {
            /* ignored like any attribute, but a slots= that is there and
             * unreadable must not pass for one the log does not write */
            if (id == PS_GRAPH_UPLOAD && a->key.n == 5 && memcmp(a->key.p, "slots", 5) == 0)
                p->bad_slots = true;
            continue;
        }
        if (a->key.n == 5 && memcmp(a->key.p, "bytes", 5) == 0) {
            *bytes = a->num; /* the last bytes= of the line counts */
            p->has_bytes |= bit;
        } else if (id == PS_HOST_ORCH && a->key.n == 9 && memcmp(a->key.p, "heap_used", 9) == 0) {
            p->heap_used = a->num;
            p->has_heap_used = true;
        } else if (id == PS_HOST_ORCH && a->key.n == 5 && memcmp(a->key.p, "tasks", 5) == 0) {
            p->tasks = a->num;
            p->has_tasks = true;
        } else if (id == PS_GRAPH_UPLOAD && a->key.n == 5 && memcmp(a->key.p, "slots", 5) == 0) {
            p->slots = a->num;
            p->has_slots = true;
        }
    }
}

static ps_pass *keyed_pass(ps_log *L, uint64_t pid, uint64_t inv, size_t line, bool create)
{
    ps_index *X = L->ix;
    /* consecutive lines nearly always belong to the pass of the line before */
    if (X->last_pass && X->last_pid == pid && X->last_inv == inv)
        return &L->pass[X->last_pass - 1];
    uint32_t *s = create ? hmap_put2(&X->map, pid, inv) : NULL;
    uint32_t v = create ? (s ? *s : 0) : hmap_get2(&X->map, pid, inv);
    if (!v) {
        if (!create)
            return NULL;
        ps_pass *p = s ? new_pass(L, line) : NULL;
        if (!p) {
            L->oom = true;
            return NULL;
        }
        *s = v = (uint32_t)L->npass;
        p->pid = pid;
        p->inv = inv;
        p->has_pid = p->has_inv = p->keyed = true;
        X->any_keyed = true;
    }
    X->last_pass = v;
    X->last_pid = pid;
    X->last_inv = inv;
    return &L->pass[v - 1];
}

static void claim_pending(ps_log *L, ps_pass *p);
static void claim_within(ps_log *L, ps_pass *p);

/* The thread of keyed pass p wrote it: remembered per thread (omap key
 * (thread, 3)), so that a thread's keyed passes are known however many
 * passes of other ranks came between (thread_pass looks back only a few). */
static void note_keyed_thread(ps_log *L, const ps_pass *p)
{
    uint32_t *s = hmap_put2(&L->ix->omap, p->thread, 3);
    if (!s) {
        L->oom = true;
        return;
    }
    /* two ranks' passes on it (forked ranks share thread ids): key
     * (thread, 4), so that the look-up further back knows it too */
    if (*s && L->pass[*s - 1].has_pid && L->pass[*s - 1].pid != p->pid) {
        uint32_t *sh = hmap_put2(&L->ix->omap, p->thread, 4);
        if (!sh) {
            L->oom = true;
            return;
        }
        *sh = 1;
    }
    *s = (uint32_t)(p - L->pass) + 1;
}
static void mark_ignored(ps_pass *p, int id, size_t line);

/* A keyed line that would open pass (pid, inv) on a thread whose only
 * pass so far is an open keyless burst, without its host-orch lines and
 * without this line's segment: that burst was this pass's first lines,
 * cut just before their " pid=" (at a log's start nothing keyed came
 * before them to tell them from the original runtime's keyless lines).
 * The burst becomes the keyed pass, its lines malformed ones charged to
 * it, and no phantom pass is left behind. NULL when it is not so. */
static ps_pass *adopt_keyless_start(ps_log *L, const lx_rec *r, int id)
{
    ps_index *X = L->ix;
    uint64_t th;
    if (id < 0 || !lx_thread(r, &X->thc, &th))
        return NULL;
    ps_pass *q = open_pass(L, true, th);
    if (!q || q->keyed || q->has_orch || (q->has_pid && q->pid != r->pid) || q->defects & ~PS_D_IGNORED ||
        ((q->present | q->ignored_segs) >> id) & 1 || hmap_get2(&X->omap, th, 3))
        return NULL;
    for (size_t k = 0; k < L->npass && k < 64; k++) {
        const ps_pass *o = &L->pass[L->npass - 1 - k];
        if (o != q && o->has_thread && o->thread == th)
            return NULL; /* the thread wrote passes before: not a log's start */
    }
    uint32_t v = (uint32_t)(q - L->pass) + 1, *s = hmap_put2(&X->map, r->pid, r->inv);
    if (!s) {
        L->oom = true;
        return NULL;
    }
    *s = v;
    set_open(L, true, th, 0);
    uint32_t cut = q->present;
    for (int sid = 0; sid < 32; sid++)
        if ((cut >> sid) & 1) {
            size_t ln = ps_get(L, q, sid).line;
            L->nbad_bind++;
            dg_add(&L->warn,
                   "%s:%zu: malformed bind line: no pid= or inv=, before its pass's first keyed line (line %zu); %s",
                   L->path, ln, r->line, bad_fate(L, LX_BIND));
            mark_ignored(q, sid, ln);
        }
    q->present = 0;
    q->has_bytes = 0;
    q->has_heap_used = q->has_tasks = q->has_slots = q->bad_slots = false;
    q->pid = r->pid;
    q->inv = r->inv;
    q->has_pid = q->has_inv = q->keyed = true;
    X->any_keyed = true;
    X->last_pass = v;
    X->last_pid = r->pid;
    X->last_inv = r->inv;
    note_keyed_thread(L, q);
    /* lines held for this pass's key, which the keyless burst could not take */
    if (X->npend)
        claim_pending(L, q);
    return q;
}

/* Keyed pass p has a line in the current run, a later one than its last:
 * noted for check_rounds. */
static void note_rerun(ps_log *L, ps_pass *p)
{
    ps_index *X = L->ix;
    if (!vec_grow((void **)&X->rerun, &X->caprerun, X->nrerun + 1, sizeof *X->rerun)) {
        L->oom = true;
        return;
    }
    p->run_last = L->nstamps;
    X->rerun[X->nrerun++] = (struct ps_rerun){(uint32_t)(p - L->pass), L->nstamps};
}

/* The pass of keyed line r (bind or host-orch: grouped by their key
 * however they interleave), made when it is its key's first line, with
 * the malformed lines held for it; NULL when out of memory. */
static ps_pass *open_keyed(ps_log *L, const lx_rec *r)
{
    size_t before = L->npass;
    ps_pass *p = keyed_pass(L, r->pid, r->inv, r->line, true);
    if (p && p->run_last < L->nstamps)
        note_rerun(L, p);
    if (p && !p->has_thread && (p->has_thread = lx_thread(r, &L->ix->thc, &p->thread)))
        note_keyed_thread(L, p);
    if (p && L->ix->npend) {
        if (L->npass != before)
            claim_pending(L, p);
        else
            claim_within(L, p);
    }
    return p;
}

/* The pass a bind line of segment id belongs to, made when it is the
 * first line of its pass; NULL when out of memory. */
static inline ps_pass *bind_pass(ps_log *L, const lx_rec *r, int id)
{
    ps_pass *p;
    /* pid= alone (a malformed line) names no pass: inv=0 would be another's */
    if (r->has_pid && r->has_inv) {
        /* a new pass's first line: the keyless burst it may continue */
        if (L->ix->any_keyless && !keyed_pass(L, r->pid, r->inv, r->line, false) &&
            (p = adopt_keyless_start(L, r, id)) != NULL)
            return p;
        return open_keyed(L, r);
    }
    uint64_t th;
    bool ht = lx_thread(r, &L->ix->thc, &th);
    p = open_pass(L, ht, th);
    /* A burst is over once its host-orch lines began, or when its first
     * segment comes round again (an ignored line's segment counts). */
    if (p && (p->has_orch || (id == p->first_seg && ((p->present | p->ignored_segs) & (1u << id)))))
        p = NULL;
    if (!p) {
        p = new_pass(L, r->line);
        if (!p)
            return NULL;
        p->has_thread = ht;
        p->thread = th;
        L->ix->any_keyless = true;
        set_open(L, ht, th, (uint32_t)L->npass);
        if (L->oom)
            return NULL;
        p = &L->pass[L->npass - 1];
        if (L->ix->npend)
            claim_pending(L, p);
    }
    return p;
}

static bool keyless_among_keyed(ps_log *L, const lx_rec *r);

static void on_bind(ps_log *L, const lx_rec *r)
{
    L->nbind++;
    int id = seg_id(L, r->name, r->line);
    if (id < 0)
        return;
    /* a line cut just before its " pid=": well formed, but no pass's */
    if (!r->has_pid && !r->has_inv && L->ix->any_keyed && keyless_among_keyed(L, r))
        return;
    ps_pass *p = bind_pass(L, r, id);
    if (p)
        add_segment(L, p, id, r);
}

/* The latest of the last few passes written by thread th (of pid, when
 * has_pid), or NULL; *shared when the thread wrote passes of more than
 * one pid there (forked ranks share their threads' ids). A malformed
 * line follows the lines of its pass on the same thread, so such a line
 * whose key could not be read is still that pass's when the thread is
 * its rank's alone. Rare, so a short scan back rather than an index kept
 * for every line. */
static ps_pass *thread_pass(ps_log *L, uint64_t th, bool has_pid, uint64_t pid, bool *shared)
{
    ps_pass *found = NULL;
    bool seen = false;
    uint64_t pid0 = 0;
    *shared = false;
    for (size_t k = 0; k < L->npass && k < 64; k++) {
        ps_pass *p = &L->pass[L->npass - 1 - k];
        if (!p->has_thread || p->thread != th)
            continue;
        if (p->has_pid) {
            *shared |= seen && p->pid != pid0;
            pid0 = seen ? pid0 : p->pid;
            seen = true;
        }
        if (!found && (!has_pid || (p->has_pid && p->pid == pid)))
            found = p;
    }
    if (!found) { /* the thread's latest keyed pass, further back */
        uint32_t v = hmap_get2(&L->ix->omap, th, 3);
        ps_pass *p = v ? &L->pass[v - 1] : NULL;
        *shared |= hmap_get2(&L->ix->omap, th, 4) != 0;
        if (p && (!has_pid || (p->has_pid && p->pid == pid)))
            found = p;
    }
    return found;
}

/* Charges pass p with an ignored line of segment id (-1: none named). */
static void mark_ignored(ps_pass *p, int id, size_t line)
{
    /* A held line is charged when its pass is known, after later lines
       may have been: keep the earliest, the one a reader looks at first. */
    uint32_t l32 = line > UINT32_MAX ? UINT32_MAX : (uint32_t)line;
    if (!(p->defects & PS_D_IGNORED) || l32 < p->ignored_line) {
        p->defects |= PS_D_IGNORED;
        p->ignored_line = l32;
    }
    if (id >= 0 && !((p->present | p->ignored_segs) & (1u << id))) {
        if (p->first_seg < 0)
            p->first_seg = (int8_t)id;
        p->ignored_segs |= 1u << id;
    }
}

/* Charges pass p with held line h and the segments it stands for. */
static void charge_held(ps_pass *p, const struct ps_pend *h)
{
    mark_ignored(p, h->first_seg, h->line);
    for (int id = 0; id < 32; id++)
        if ((h->segs >> id) & 1)
            mark_ignored(p, id, h->line);
}

/* A pass just made: the malformed lines waiting for it, if any is this
 * pass's (same thread and pid, and inv when the line had one). A line
 * of this thread and pid whose inv is another's is given up: the pass
 * it waited for came and is not its. */
static void claim_pending(ps_log *L, ps_pass *p)
{
    ps_index *X = L->ix;
    unsigned k = 0;
    for (unsigned i = 0; i < X->npend; i++) {
        const struct ps_pend *h = &X->pend[i];
        if (!p->has_thread || p->thread != h->th || (h->has_pid && (!p->has_pid || p->pid != h->pid))) {
            X->pend[k++] = *h; /* another thread's or rank's: kept, in order */
            continue;
        }
        if (h->has_inv && p->inv != h->inv)
            continue;
        charge_held(p, h);
    }
    X->npend = k;
}

/* A line of pass p, made before: a malformed line held since, of p's
 * thread and pid (and inv, where the line had one), was inside p after
 * all. It was held as beginning the next pass, most often because its
 * segment was p's first come round again: a cut pass and a repeat of
 * the first line look alike until p goes on. A line without its pid is
 * p's only when it repeats p's first line, segment and start_ns; else it
 * stays held: it may be the first line of another rank whose thread id
 * is p's (forked ranks share them) and whose pass is not made yet. */
static void claim_within(ps_log *L, ps_pass *p)
{
    ps_index *X = L->ix;
    unsigned k = 0;
    for (unsigned i = 0; i < X->npend; i++) {
        const struct ps_pend *h = &X->pend[i];
        bool mine = p->has_thread && p->thread == h->th && h->line > p->first_line && !p->has_orch &&
                    p->has_pid && (!h->has_inv || p->inv == h->inv);
        /* without its pid, only a repeat of p's first line: its segment
         * and its start_ns (another rank's first line has its own) */
        bool repeat = h->first_seg >= 0 && h->first_seg == p->first_seg && h->start && h->start == p->first_start;
        if (mine && (h->has_pid ? p->pid == h->pid : repeat)) {
            charge_held(p, h);
            continue;
        }
        X->pend[k++] = *h;
    }
    X->npend = k;
}

/* Holds a malformed line for the next pass of its thread (and pid, when
 * the line names one); a second line of the same thread and pid joins
 * the first. A line naming none takes no pid from the passes before it:
 * at a log's start two ranks may share the thread's id before the second
 * rank's first pass shows it, and that pass may be the one the line
 * begins. */
static void hold_for_next(ps_log *L, const lx_rec *r, uint64_t th, int id)
{
    ps_index *X = L->ix;
    struct ps_pend *h = NULL;
    for (unsigned i = 0; i < X->npend && !h; i++)
        if (X->pend[i].th == th && X->pend[i].has_pid == r->has_pid && (!r->has_pid || X->pend[i].pid == r->pid))
            h = &X->pend[i];
    if (!h) {
        if (X->npend == PS_MAXPEND) /* the oldest is given up */
            memmove(&X->pend[0], &X->pend[1], (PS_MAXPEND - 1) * sizeof X->pend[0]);
        else
            X->npend++;
        h = &X->pend[X->npend - 1];
        h->th = th;
        h->has_pid = r->has_pid, h->pid = r->pid;
        h->has_inv = r->has_inv, h->inv = r->inv;
        h->first_seg = (int8_t)id;
        h->start = r->kind == LX_BIND ? r->start : 0;
        h->segs = 0;
        h->line = r->line > UINT32_MAX ? UINT32_MAX : (uint32_t)r->line;
    }
    if (id >= 0)
        h->segs |= 1u << id;
}

/* The keyed pass a malformed bind line without a usable key (no pid=, or
 * pid= and no inv=, or inv= and no pid=) belongs to: the one its thread
 * (and pid) is writing, while the line can still be part of it. It
 * cannot once that pass's host-orch lines began, when its inv is
 * another, or when its segment is the pass's first come round again:
 * it then begins the thread's next pass, and is *held until that pass
 * is made, as it is when the thread (or pid) has no pass yet. On a
 * thread that ranks share, a line that names no pid could be either's:
 * *held too, and never charged (its warning names it). NULL, and not
 * held, where the thread has an open unkeyed burst or writes unkeyed
 * passes: the burst rule decides. */
static ps_pass *keyed_burst_of(ps_log *L, const lx_rec *r, int id, bool *held)
{
    *held = false;
    uint64_t th;
    bool ht = lx_thread(r, &L->ix->thc, &th), shared;
    if (!ht || open_pass(L, ht, th))
        return NULL;
    ps_pass *p = thread_pass(L, th, r->has_pid, r->pid, &shared);
    if (p && !p->keyed)
        return NULL;
    *held = true;
    if (!r->has_pid && shared)
        return NULL;
    if (p && !p->has_orch && (!r->has_inv || p->inv == r->inv) &&
        !(id >= 0 && id == p->first_seg && ((p->present | p->ignored_segs) >> id) & 1)) {
        *held = false;
        return p;
    }
    hold_for_next(L, r, th, id);
    return NULL;
}

/* A malformed bind or host-orch line is still charged to its pass when
 * what was read of it names one: the pass is then excluded (its figures
 * are not all there), and the segment the line was for still counts as
 * emitted, so a defect most passes share never redefines the segment set
 * that the intact passes are held to. */
static void charge_bad_line(ps_log *L, const lx_rec *r)
{
    bool keyed = r->has_pid && r->has_inv;
    int id = r->kind == LX_BIND && r->name_ok ? seg_id(L, r->name, r->line) : -1;
    ps_pass *p;
    bool held = false;
    if (keyed) {
        p = r->kind == LX_BIND ? bind_pass(L, r, id) : keyed_pass(L, r->pid, r->inv, r->line, false);
    } else if (r->kind == LX_BIND && ((p = keyed_burst_of(L, r, id, &held)) != NULL || held)) {
        /* the keyed pass it interrupts, or the one it begins: no pass of its own */
    } else if (r->kind == LX_BIND && id >= 0) {
        p = bind_pass(L, r, id);
    } else {
        uint64_t th;
        bool ht = lx_thread(r, &L->ix->thc, &th), shared;
        p = open_pass(L, ht, th);
        /* a host-orch line follows its pass's bind lines on the thread */
        if (!p && r->kind == LX_ORCH && ht && (p = thread_pass(L, th, r->has_pid, r->pid, &shared)) &&
            ((!r->has_pid && shared) || (r->has_inv && p->inv != r->inv)))
            p = NULL;
    }
    if (p)
        mark_ignored(p, id, r->line);
}

/* A bind line without pid= and inv= on a thread whose passes are keyed
 * (the original runtime writes neither; hbg both): a defect of the pass
 * it sits in, said and charged as a malformed line is. */
static bool keyless_among_keyed(ps_log *L, const lx_rec *r)
{
    uint64_t th;
    bool shared;
    if (!lx_thread(r, &L->ix->thc, &th) || open_pass(L, true, th))
        return false;
    ps_pass *p = thread_pass(L, th, false, 0, &shared);
    if (!p || !p->keyed)
        return false;
    L->nbad_bind++;
    dg_add(&L->warn, "%s:%zu: malformed bind line: no pid= or inv=, on a thread whose passes have them; %s", L->path,
           r->line, bad_fate(L, LX_BIND));
    charge_bad_line(L, r);
    return true;
}

static void on_orch(ps_log *L, const lx_rec *r)
{
    L->norch++;
    ps_pass *p = NULL;
    if (r->has_pid && r->has_inv) {
        /* a host-orch line read before its pass's bind lines (a log sorted
         * by another key, two writers' lines shuffled) opens the pass; one
         * whose bind lines never come is excluded (PS_D_ORCH_ONLY) */
        p = open_keyed(L, r);
    } else {
        uint64_t th;
        bool ht = lx_thread(r, &L->ix->thc, &th);
        p = open_pass(L, ht, th);
    }
    if (!p) {
        dg_add(&L->warn, "%s:%zu: host-orch line with no bind burst before it; ignored", L->path, r->line);
        return;
    }
    int op = op_id(r->name);
    if (op < 0) {
        if (L->unknown_op_warned < 4) {
            L->unknown_op_warned++;
            dg_add(&L->warn, "%s:%zu: unknown host-orch kind %.*s; ignored", L->path, r->line,
                   (int)r->name.n, r->name.p);
        }
        return;
    }
    p->has_orch = true;
    if (p->ops_present & (1u << op)) {
        if (!(p->defects & PS_D_DUPLICATE)) {
            p->defects |= PS_D_DUPLICATE;
            p->dup_line = r->line > UINT32_MAX ? UINT32_MAX : (uint32_t)r->line;
            p->dup_first_line = p->op_line[op];
            p->dup_seg = (int8_t)(-1 - op);
        }
        return;
    }
    p->ops_present |= (uint8_t)(1u << op);
    p->op_count[op] = r->count;
    p->op_line[op] = r->line > UINT32_MAX ? UINT32_MAX : (uint32_t)r->line;
    if (r->dropped && !(p->defects & PS_D_DROPPED)) {
        p->defects |= PS_D_DROPPED;
        p->drop_line = r->line > UINT32_MAX ? UINT32_MAX : (uint32_t)r->line;
        p->drop_op = (int8_t)op;
        p->drop_count = r->dropped;
    }
}

static void keep_span(ps_log *L, const lx_rec *r)
{
    /* LX_DUR_LIMIT_NS or more is no measurement: drawn, such a span
     * stretches a trace's axis over centuries; in a tree or a tail it
     * swamps every real one. Left out here, for every tool that keeps
     * spans, and named once when the log is read (warn_long_spans). */
    if (r->dur >= LX_DUR_LIMIT_NS) {
        if (!L->nlong_spans++)
            L->long_first = (ps_span){.dur = r->dur, .line = r->line > UINT32_MAX ? UINT32_MAX : (uint32_t)r->line,
                                      .name = keep_name(L, r->name)};
        return;
    }
    if (L->nspan == L->capspan) {
        /* sized for the worst case (a span line has 60 bytes at least); on
         * huge pages, so not vec_grow */
        size_t nc0 = L->capspan ? L->capspan * 2 : 256, nc = nc0;
        if (!L->capspan && L->size_hint / 60 + 16 > nc)
            nc = L->size_hint / 60 + 16;
        hm_block nb;
        if (hm_alloc(&nb, nc * sizeof(ps_span)) != 0 && (nc == nc0 || hm_alloc(&nb, nc0 * sizeof(ps_span)) != 0)) {
            L->oom = true;
            return;
        }
        if (L->nspan)
            memcpy(nb.p, L->span, L->nspan * sizeof(ps_span));
        hm_free(&L->spanmem);
        L->spanmem = nb;
        L->span = nb.p;
        L->capspan = nb.len / sizeof(ps_span);
    }
    ps_span *s = &L->span[L->nspan++];
    s->pid = r->pid;
    s->tid = r->tid;
    s->inv = r->inv;
    s->depth = (uint32_t)r->depth; /* the lexer refuses a depth past 32 bits */
    s->ts = r->start;
    s->dur = r->dur;
    s->line = r->line > UINT32_MAX ? UINT32_MAX : (uint32_t)r->line;
    s->name = keep_name(L, r->name);
    s->hid = keep_slice(L, r->hid);
    s->extra = keep_slice(L, r->attr_text);
    s->dev = r->dev_clock;
}

static void on_span(ps_log *L, const lx_rec *r)
{
    L->nspans++;
    if (L->opt.keep_spans)
        keep_span(L, r);
    if (r->dev_clock || r->depth != 1 || !name_is(r->name, "chip.run.bind"))
        return;
    L->nbindspans++;
    ps_pass *p = keyed_pass(L, r->pid, r->inv, r->line, false);
    if (p) {
        p->has_span = true;
        return;
    }
    uint64_t th;
    bool ht = lx_thread(r, &L->ix->thc, &th);
    p = open_pass(L, ht, th);
    if (!p)
        return;
    size_t idx = (size_t)(p - L->pass);
    set_open(L, ht, th, NO_OPEN);
    uint32_t *s = hmap_put2(&L->ix->map, r->pid, r->inv);
    if (!s) {
        L->oom = true;
        return;
    }
    p = &L->pass[idx];
    p->has_span = true;
    if (*s)
        return; /* (pid, inv) already named another pass: leave this one unnamed */
    *s = (uint32_t)(idx + 1);
    p->pid = r->pid;
    p->inv = r->inv;
    p->has_pid = p->has_inv = true;
}

/* A process writes one anchor per log: a second one for the same pid
 * means two runs were put into one file, and their passes are pooled. */
static void note_anchor(ps_log *L, const lx_rec *r)
{
    uint32_t *s = hmap_put2(&L->ix->amap, r->pid, 0);
    if (!s) {
        L->oom = true;
        return;
    }
    if (*s) {
        dg_add(&L->warn,
               "%s:%zu: a second clock anchor for pid=%" PRIu64 " (the first is at line %" PRIu32 "): the log "
               "holds two runs (logs put together?), %s",
               L->path, r->line, r->pid, *s,
               L->opt.draws ? "drawn as one process, each event dated by the anchor in force at it"
                            : "and their passes are pooled");
        return;
    }
    *s = r->line > UINT32_MAX ? UINT32_MAX : (uint32_t)r->line;
}

static void on_anchor(ps_log *L, const lx_rec *r)
{
    note_anchor(L, r);
    if (!L->opt.keep_spans)
        return;
    if (!vec_grow((void **)&L->anchor, &L->capanchor, L->nanchor + 1, sizeof *L->anchor)) {
        L->oom = true;
        return;
    }
    ps_anchor *a = &L->anchor[L->nanchor++];
    a->pid = r->pid;
    a->mono = r->mono;
    a->wall = r->wall;
    a->off = r->off;
    a->line = r->line;
    a->line_first = r->line_first;
    /* the line's own "[mono_ns=N]", written by the same clock a moment
     * before: ps_anchor_judge weighs the anchor's reading against it */
    a->has_line_mono = lx_prefix_mono(r, &a->line_mono);
}

static void on_stamp(ps_log *L, const lx_rec *r)
{
    if (!vec_grow((void **)&L->stamp_lines, &L->capstamp_lines, (size_t)L->nstamps + 1, sizeof *L->stamp_lines)) {
        L->oom = true;
        return;
    }
    L->stamp_lines[L->nstamps++] = r->line;
    if (r->name.n == 0) {
        if (!L->empty_stamp_line)
            L->empty_stamp_line = r->line;
        return;
    }
    if (!L->has_stamp) {
        /* copied: in the streaming reader the line's buffer is reused */
        char *t = malloc(r->name.n + 1);
        if (!t) {
            L->oom = true;
            return;
        }
        memcpy(t, r->name.p, r->name.n);
        t[r->name.n] = 0;
        L->has_stamp = true;
        L->stamp.p = t;
        L->stamp.n = r->name.n;
        L->stamp_line = r->line;
        return;
    }
    if (!L->stamp_conflict && (r->name.n != L->stamp.n || memcmp(r->name.p, L->stamp.p, r->name.n) != 0)) {
        L->stamp_conflict = true;
        L->stamp2_line = r->line;
    } else if (!L->stamp_conflict && !L->stamp_repeated) {
        /* a run writes its stamp once: this is a second run of the same command */
        L->stamp_repeated = true;
        dg_add(&L->warn,
               "%s:%zu: the [stamp] line again (the first is at line %zu): the log holds two runs of the same "
               "command (logs put together?), %s",
               L->path, r->line, L->stamp_line,
               L->opt.runs_apart ? "kept apart: each run's processes are ranked among themselves"
                                 : "and their passes are pooled");
    }
}

/* hbg run's record of a run it stopped: every one is said (logs put
 * together may hold several runs, each cut), past the warnings' limit,
 * for a log that passes for a whole run of fewer rounds is the one
 * warning that changes what every figure means. */
static void on_stopped(ps_log *L, const lx_rec *r)
{
    if (!L->nstopped++) {
        L->incomplete_line = r->line;
        L->incomplete_run = L->nstamps ? L->nstamps : 1;
        snprintf(L->incomplete, sizeof L->incomplete, "%.*s", (int)r->name.n, r->name.p);
    }
    dg_add_always(&L->warn, "%s:%zu: this log is incomplete: %.*s", L->path, r->line, (int)r->name.n, r->name.p);
}

static void sink_rec(void *ctx, const lx_rec *r)
{
    ps_log *L = ctx;
    switch (r->kind) {
    case LX_BIND: on_bind(L, r); break;
    case LX_ORCH: on_orch(L, r); break;
    case LX_SPAN: on_span(L, r); break;
    case LX_ANCHOR: on_anchor(L, r); break;
    case LX_STAMP: on_stamp(L, r); break;
    case LX_STOPPED:
        on_stopped(L, r);
        break;
    }
}

static void sink_bad(void *ctx, const lx_rec *r, const char *msg)
{
    ps_log *L = ctx;
    const char *what = "bind line";
    switch (r->kind) {
    case LX_BIND: L->nbad_bind++; break;
    case LX_ORCH: L->nbad_orch++; what = "host-orch line"; break;
    case LX_SPAN: L->ntorn++; what = "[STRACE] span"; break; /* its msg says when it is torn */
    default: L->nbad_anchor++; what = "clock anchor"; break;
    }
    dg_add(&L->warn, "%s:%zu: malformed %s: %s; %s", L->path, r->line, what, msg, bad_fate(L, r->kind));
    if (!strcmp(msg, LX_CUT_MSG))
        L->cut_line = r->line;
    if (r->kind == LX_BIND || r->kind == LX_ORCH)
        charge_bad_line(L, r);
}

/* The stamp's next word from *p (words are one space apart), moving *p
 * past it; false at the stamp's end. */
static bool stamp_word(const char **p, const char *e, lx_slice *w)
{
    while (*p < e && **p == ' ')
        (*p)++;
    if (*p >= e)
        return false;
    const char *s = *p;
    while (*p < e && **p != ' ')
        (*p)++;
    *w = (lx_slice){s, (size_t)(*p - s)};
    return true;
}

/* The value of option `name` in word w ("--rounds=6"), or in the word
 * after it ("--rounds 6"): 1: found and a decimal from 1 to max; 0: not
 * this option; -1: this option with any other value. */
static int stamp_count(lx_slice w, const char **p, const char *e, const char *name, uint64_t max, uint64_t *out)
{
    size_t n = strlen(name);
    if (w.n < n || memcmp(w.p, name, n) != 0 || (w.n > n && w.p[n] != '='))
        return 0;
    lx_slice v = {w.p + n + 1, w.n > n ? w.n - n - 1 : 0};
    if (w.n == n && !stamp_word(p, e, &v))
        return -1;
    return lx_parse_u64(v, out) == 0 && *out >= 1 && *out <= max ? 1 : -1;
}

/* The passes a stamp of `hbg run` asks for: its --rounds per rank and its
 * --ranks (0: not given, the case's default, which only the case table
 * knows). The stamp is hbg run's own when its command, after the commit
 * and the env assignments, is the words "hbg run": hbg run writes every
 * option it was given there, spelled in full (docs/run.md). False for a
 * stamp without --rounds (hbg run's default is 1, but an earlier revision
 * may have had another), a --rounds or --ranks that is no count, and any
 * other program's stamp, whose --rounds may mean anything. */
static bool stamp_rounds(lx_slice st, uint64_t *rounds, uint64_t *ranks)
{
    const char *p = st.p, *e = st.p + st.n;
    lx_slice w;
    if (!stamp_word(&p, e, &w) || !stamp_word(&p, e, &w)) /* the commit, then "env" */
        return false;
    if (lx_slice_eq(w, "env"))
        while (stamp_word(&p, e, &w) && memchr(w.p, '=', w.n))
            ;
    if (!lx_slice_eq(w, "hbg") || !stamp_word(&p, e, &w) || !lx_slice_eq(w, "run"))
        return false;
    *rounds = *ranks = 0;
    while (stamp_word(&p, e, &w)) {
        if (lx_slice_eq(w, "--"))
            break;
        int a = stamp_count(w, &p, e, "--rounds", 100000, rounds),
            b = a ? 0 : stamp_count(w, &p, e, "--ranks", 64, ranks);
        if (a < 0 || b < 0)
            return false;
    }
    return *rounds != 0;
}

/* What one run of a log holds, for check_rounds: its ranks, and its
 * passes up to --rounds a rank (a rank with more is no other's stand-in). */
typedef struct run_count {
    uint64_t ranks, held;
} run_count;

/* A rank's passes in the run it was last seen in (1 + run index; 0: none yet). */
typedef struct rank_in_run {
    uint32_t run;
    uint64_t n;
} rank_in_run;

static void flush_rank(run_count *run, rank_in_run *r, uint64_t rounds)
{
    if (r->run) {
        run[r->run - 1].ranks++;
        run[r->run - 1].held += r->n < rounds ? r->n : rounds;
    }
    r->run = 0;
    r->n = 0;
}

/* One pass in run r (1-based) for count_runs. */
static void count_pass(const ps_log *L, const ps_pass *p, uint32_t r, uint64_t rounds, run_count *run, rank_in_run *rk)
{
    if (p->defects & PS_D_NO_PID || p->rank < 0 || (size_t)p->rank >= L->nrank) {
        run[r - 1].held++;
        return;
    }
    rank_in_run *x = &rk[p->rank];
    if (x->run != r)
        flush_rank(run, x, rounds);
    x->run = r;
    x->n++;
}

static uint32_t run_index(const ps_log *L, uint32_t run)
{
    return run ? (run <= L->nstamps ? run : L->nstamps) : 1;
}

/* One sweep over the passes: a rank is counted in each run it has passes
 * in (a pid reused by a later run is another rank there). A pass before
 * the first stamp is the first run's. A pass whose pid was lost to
 * damage, on a thread several ranks share, counts in no rank (its rank is
 * a guess), but it is in the log: a damaged log is not a cut one. A pass
 * met again in a later run (ps_index.rerun) counts there too: the passes
 * were made in log order, as were those notes, so merged by run each rank
 * meets its runs in order. */
static void count_runs(const ps_log *L, uint64_t rounds, run_count *run, rank_in_run *rk)
{
    const ps_index *X = L->ix;
    size_t j = 0;
    for (size_t i = 0; i < L->npass; i++) {
        uint32_t r = run_index(L, L->pass[i].run);
        for (; j < X->nrerun && run_index(L, X->rerun[j].run) <= r; j++)
            count_pass(L, &L->pass[X->rerun[j].pass], run_index(L, X->rerun[j].run), rounds, run, rk);
        count_pass(L, &L->pass[i], r, rounds, run, rk);
    }
    for (; j < X->nrerun; j++)
        count_pass(L, &L->pass[X->rerun[j].pass], run_index(L, X->rerun[j].run), rounds, run, rk);
    for (size_t i = 0; i < L->nrank; i++)
        flush_rank(run, &rk[i], rounds);
}

size_t ps_run_excluded(const ps_log *L, uint32_t run)
{
    const ps_index *X = L->ix;
    size_t n = 0;
    for (size_t i = 0; i < L->npass; i++)
        n += run_index(L, L->pass[i].run) == run && !L->pass[i].cold && !L->pass[i].used;
    for (size_t j = 0; X && j < X->nrerun; j++) {
        const ps_pass *p = &L->pass[X->rerun[j].pass];
        n += run_index(L, X->rerun[j].run) == run && !p->cold && !p->used;
    }
    return n;
}

/* A log without hbg run's record of a stopped run may still be short of
 * what its stamp asks for: a rank killed outright (SIGKILL, the kernel's
 * out-of-memory killer), a rank that failed, a log copied while it was
 * written. Said when the stamp is hbg run's own and gives --rounds, and
 * the log has bind lines: a log of none lacks them for another reason (a
 * quiet level, the breakdown off), said apart. Logs of one command put
 * together (the same stamp again) are judged run by run, each short one
 * on its own stamp's line: one run's passes do not make up for another's. */
static void check_rounds(ps_log *L)
{
    uint64_t rounds, ranks;
    if (L->nstopped || !L->has_stamp || L->stamp_conflict || L->empty_stamp_line || !L->npass || L->opt.spans_only ||
        !stamp_rounds(L->stamp, &rounds, &ranks))
        return;
    uint32_t nruns = L->nstamps;
    run_count *run = calloc(nruns, sizeof *run);
    rank_in_run *rk = calloc(L->nrank ? L->nrank : 1, sizeof *rk);
    if (!run || !rk) {
        free(run), free(rk);
        L->oom = true;
        return;
    }
    count_runs(L, rounds, run, rk);
    /* Without --ranks, each run of the one command has the case's ranks:
     * as many as the run that shows most (a run whose ranks all died
     * before their first pass shows none). */
    uint64_t most = 0;
    for (uint32_t i = 0; i < nruns; i++)
        most = run[i].ranks > most ? run[i].ranks : most;
    for (uint32_t i = 0; i < nruns; i++) {
        uint64_t want = ranks ? ranks : most;
        /* more ranks than the stamp asks for: not a run cut short */
        if (run[i].ranks > want || run[i].held >= rounds * want)
            continue;
        size_t line = L->stamp_lines[i];
        if (!L->incomplete_line) {
            L->incomplete_line = line;
            L->incomplete_run = i + 1;
            snprintf(L->incomplete, sizeof L->incomplete,
                     "it holds %" PRIu64 " of the %" PRIu64 " passes its stamp's --rounds %" PRIu64 " asks of %" PRIu64
                     " rank%s",
                     run[i].held, rounds * want, rounds, want, want == 1 ? "" : "s");
        }
        dg_add_always(&L->warn,
                      "%s:%zu: this log is incomplete: it holds %" PRIu64 " of the %" PRIu64
                      " passes its stamp's --rounds %" PRIu64 " asks of %" PRIu64 " rank%s",
                      L->path, line, run[i].held, rounds * want, rounds, want, want == 1 ? "" : "s");
    }
    free(run), free(rk);
}

/* false when out of memory (L is then safe to ps_free) */
static bool init(ps_log *L, const char *path, const ps_options *opt)
{
    memset(L, 0, sizeof *L);
    L->path = L->file = path;
    const char *shown = path ? dg_shown(path) : path;
    if (shown != path) { /* dg_shown's copy lasts a few calls: L keeps its own */
        if (!(L->path_own = strdup(shown)))
            return false;
        L->path = L->path_own;
    }
    if (opt)
        L->opt = *opt;
    dg_init(&L->warn, 1000);
    for (int i = 0; i < PS_NKNOWN; i++) {
        strcpy(L->segname[i], known_seg_name(i));
        L->seglen[i] = (uint8_t)strlen(L->segname[i]);
    }
    L->nseg = PS_NKNOWN;
    ps_index *X = L->ix = calloc(1, sizeof *L->ix);
    if (!X)
        return false;
    hmap_init(&X->map, 2);
    hmap_init(&X->omap, 2);
    hmap_init(&X->rmap, 2);
    hmap_init(&X->amap, 2);
    hmap_init(&X->xmap, 2);
    hmap_init(&X->intern, 2);
    return true;
}

/* The warning for the spans keep_span left out: the first named, the
 * others counted. */
static void warn_long_spans(ps_log *L)
{
    const ps_span *f = &L->long_first;
    if (L->nlong_spans == 1)
        dg_add(&L->warn, "%s:%u: span %.*s has dur=%" PRIu64 " (2^62 ns, 146 years, or more: not a duration); left out",
               L->path, f->line, (int)f->name.n, f->name.p, f->dur);
    else if (L->nlong_spans > 1)
        dg_add(&L->warn, "%s:%u: span %.*s has dur=%" PRIu64 " (2^62 ns, 146 years, or more: not a duration); left "
               "out, with %zu more as long", L->path, f->line, (int)f->name.n, f->name.p, f->dur, L->nlong_spans - 1);
}

hbg_status ps_read(ps_log *L, const char *path, const char *buf, size_t len, const ps_options *opt)
{
    if (!init(L, path, opt))
        return HBG_E_NOMEM;
    L->buf = buf;
    L->len = len;
    L->size_hint = len;
    lx_sink sink = {L, sink_rec, sink_bad, L->opt.spans_only};
    lx_pos pos = {0, 1, false, true};
    lx_scan_at(buf, len, &pos, &sink);
    warn_long_spans(L);
    if (!L->oom)
        ps_analyse(L);
    if (!L->oom)
        check_rounds(L);
    return L->oom ? HBG_E_NOMEM : HBG_OK;
}

typedef struct piece_ctx {
    ps_log *L;
    lx_pos pos;
    lx_sink sink;
    const size_t *cut; /* the reader's count of lines cut */
    size_t cut_seen;
    size_t first_cut_line; /* the first of them, for the warning */
} piece_ctx;

static bool on_piece(void *ctx, const char *p, size_t n)
{
    piece_ctx *c = ctx;
    /* the reader counts a cut line before it hands it over, alone */
    if (*c->cut != c->cut_seen) {
        if (!c->cut_seen)
            c->first_cut_line = c->pos.line;
        c->cut_seen = *c->cut;
    }
    lx_scan_at(p, n, &c->pos, &c->sink);
    return !c->L->oom;
}

hbg_status ps_read_fd(ps_log *L, const char *path, int fd, const ps_options *opt, char *err, size_t errlen)
{
    if (!init(L, path, opt)) {
        snprintf(err, errlen, "%s: out of memory", path);
        return HBG_E_NOMEM;
    }
    struct stat sb;
    if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode))
        L->size_hint = (size_t)sb.st_size;
    size_t cut = 0;
    piece_ctx c = {L, {0, 1, false, true}, {L, sink_rec, sink_bad, L->opt.spans_only}, &cut, 0, 0};
    int e = lr_read_lines(fd, L->opt.chunk, L->opt.max_line, on_piece, &c, &cut);
    L->len = c.pos.off;
    size_t mib = (L->opt.max_line ? L->opt.max_line : LR_MAX_LINE) >> 20;
    /* every cut line is counted before it is handed over (on_piece saw
     * it); should one not be, the line the lexer stopped on */
    if (cut && !c.cut_seen)
        c.first_cut_line = c.pos.line;
    if (cut == 1)
        dg_add(&L->warn,
               "%s:%zu: a line longer than %zu MiB (no record is; a corrupt or truncated tail?): read as its first "
               "%zu MiB, the rest skipped",
               path, c.first_cut_line, mib, mib);
    else if (cut)
        dg_add(&L->warn,
               "%s:%zu: %zu lines longer than %zu MiB (no record is; a corrupt or truncated tail?), this the first: "
               "read as their first %zu MiB, the rest skipped",
               path, c.first_cut_line, cut, mib, mib);
    if (e && e != ENOMEM) {
        snprintf(err, errlen, "cannot read %s: %s", dg_shown(path), strerror(e));
        return HBG_E_IO;
    }
    warn_long_spans(L);
    if (!e && !L->oom)
        ps_analyse(L);
    if (!e && !L->oom)
        check_rounds(L);
    if (e || L->oom) {
        snprintf(err, errlen, "%s: out of memory", path);
        return HBG_E_NOMEM;
    }
    return HBG_OK;
}

void ps_free(ps_log *L)
{
    free(L->path_own);
    L->path_own = NULL;
    hm_free(&L->passmem);
    hm_free(&L->segxmem);
    ps_index *X = L->ix;
    if (X) {
        hmap_free(&X->xmap);
        free(X->xseg);
        hmap_free(&X->map);
        hmap_free(&X->omap);
        free(X->rerun);
        hmap_free(&X->rmap);
        hmap_free(&X->amap);
        hmap_free(&X->intern);
        free(X->itext);
        free(X);
    }
    hm_free(&L->spanmem);
    for (size_t i = 0; i < L->ntextblk; i++)
        hm_free(&L->textblk[i]);
    free(L->textblk);
    free(L->anchor);
    free(L->rank);
    free((char *)L->stamp.p);
    free(L->stamp_lines);
    dg_free(&L->warn);
    memset(L, 0, sizeof *L);
}

uint32_t ps_run_of(const ps_log *L, size_t line)
{
    /* 1 + the stamps after the first that come before the line */
    size_t lo = 1, hi = L->nstamps > 1 ? L->nstamps : 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (L->stamp_lines[mid] < line)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (uint32_t)lo;
}

const char *ps_mixed_runs(const ps_log *L, const char *path, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s:%zu: a second, different [stamp] line (the first is at line %zu): the log mixes two runs",
             path, L->stamp2_line, L->stamp_line);
    return buf;
}

const char *ps_no_bind_why(const ps_log *L, char *buf, size_t cap)
{
    char said[96];
    const char *quiet = ps_stamp_quiet_level(L, said, sizeof said);
    if (L->nbad_bind == 1) /* not "none of its 1 bind lines" */
        snprintf(buf, cap, ": its one bind line is not well-formed (see the warnings)");
    else if (L->nbad_bind)
        snprintf(buf, cap, ": none of its %zu bind lines is well-formed (see the warnings)", L->nbad_bind);
    else if (quiet)
        snprintf(buf, cap,
                 " has no bind-phase lines: its stamp shows %s, which writes no TIMING records; run the "
                 "workload at --log-level timing (or debug/info)",
                 said);
    else
        snprintf(buf, cap,
                 " has no bind-phase lines (\"bind phase=\"); run the workload with HBG_BIND_BREAKDOWN=1 (the "
                 "original runtime: SIMPLER_HBG_BIND_BREAKDOWN_ENABLE=1)");
    return buf;
}

const char *ps_none_whole(size_t torn, size_t bad, char *buf, size_t cap)
{
    char t[64] = "", b[64] = "";
    if (torn)
        snprintf(t, sizeof t, "%zu [STRACE] record%s", torn, torn == 1 ? "" : "s");
    if (bad)
        snprintf(b, sizeof b, "%zu bind line%s", bad, bad == 1 ? "" : "s");
    if (torn + bad == 1) /* not "none of its 1 [STRACE] record is whole" */
        snprintf(buf, cap, "its one %s is not whole (see the warnings)", torn ? "[STRACE] record" : "bind line");
    else
        snprintf(buf, cap, "none of its %s%s%s is whole (see the warnings)", t, torn && bad ? " and " : "", b);
    return buf;
}

/* Whether v (n bytes) is a level that writes no TIMING records, in any
 * case; *lv the level in lower case. */
static bool quiet_word(const char *v, size_t n, const char **lv)
{
    static const char *const quiet[] = {"warn", "error", "off"};
    for (int i = 0; i < 3; i++) {
        size_t k = 0;
        while (k < n && quiet[i][k] && (v[k] | 0x20) == quiet[i][k])
            k++;
        if (k == n && !quiet[i][k]) {
            *lv = quiet[i];
            return true;
        }
    }
    return false;
}

const char *ps_stamp_quiet_level(const ps_log *L, char *said, size_t n)
{
    if (!L->has_stamp)
        return NULL;
    /* The stamp's words: env assignments, then the command, whose
     * --log-level (hbg run's, the original runtime's) wins over the
     * environment; of the two variables hbg's own wins, as it does in
     * hbg run. The level of the last word that names one. */
    static const char *const keys[] = {"SIMPLER_LOG_LEVEL=", "HBG_LOG_LEVEL=", "--log-level=", "--log-level"};
    const char *p = L->stamp.p, *e = p + L->stamp.n, *level = NULL, *lv;
    int best = -1;
    while (p < e) {
        while (p < e && *p == ' ')
            p++;
        const char *w = p;
        while (p < e && *p != ' ')
            p++;
        for (int k = 0; k < 4; k++) {
            size_t kn = strlen(keys[k]);
            int rank = k < 2 ? k : 2; /* the option's two spellings are one */
            if (rank < best || (size_t)(p - w) < kn || memcmp(w, keys[k], kn) != 0 ||
                (k == 3 && (size_t)(p - w) != kn))
                continue;
            const char *v = w + kn, *ve = p;
            if (k == 3) { /* "--log-level LEVEL": the next word */
                for (v = p; v < e && *v == ' '; v++)
                    ;
                for (ve = v; ve < e && *ve != ' '; ve++)
                    ;
            }
            best = rank;
            level = quiet_word(v, (size_t)(ve - v), &lv) ? lv : NULL;
            if (level)
                snprintf(said, n, "%s%.*s", k < 2 ? keys[k] : "--log-level ", (int)(ve - v), v);
            break;
        }
    }
    return level;
}

static uint64_t dist(uint64_t a, uint64_t b)
{
    return a > b ? a - b : b - a;
}

int ps_anchor_judge(const ps_anchor *a, uint64_t mono)
{
    if (a->has_line_mono && dist(a->mono, a->line_mono) > PS_ANCHOR_SKEW_NS &&
        dist(a->line_mono, mono) < dist(a->mono, mono))
        return PS_ANCHOR_CORRUPT;
    return dist(a->mono, mono) > PS_CLOCK_FAR_NS ? PS_ANCHOR_FAR : PS_ANCHOR_OK;
}

bool ps_anchor_wall(const ps_anchor *a, uint64_t mono, uint64_t *wall)
{
    if (mono >= a->mono)
        return !__builtin_add_overflow(a->wall, mono - a->mono, wall);
    if (a->mono - mono > a->wall)
        return false;
    *wall = a->wall - (a->mono - mono);
    return true;
}
