/* Two buffers: the reader fills one while the caller lexes the other. The
 * reader is several times faster than the lexer, so a third would only be
 * more fresh memory (which on a virtual machine costs more than it saves). */
#include "tools/linereader.h"
#include "tools/hugemem.h"
#include "util/quietthread.h"
#include "util/vec.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NBUF 2

typedef struct slot {
    char *p;
    ssize_t n;          /* bytes read; 0 the end of the file; -1 a failed read (err) */
    int err;
    bool full;          /* filled and not yet handed back */
} slot;

typedef struct reader {
    int fd;
    size_t chunk;
    slot s[NBUF];
    bool threaded, stop;
    pthread_mutex_t mu;
    pthread_cond_t cv;
} reader;

/* One read(2) into slot k, retried on EINTR. */
static void fill(reader *r, int k)
{
    ssize_t n;
    do
        n = read(r->fd, r->s[k].p, r->chunk);
    while (n < 0 && errno == EINTR);
    r->s[k].err = n < 0 ? errno : 0;
    r->s[k].n = n < 0 ? -1 : n;
}

static void *reader_main(void *arg)
{
    reader *r = arg;
    for (int k = 0;; k = (k + 1) % NBUF) {
        pthread_mutex_lock(&r->mu);
        while (r->s[k].full && !r->stop)
            pthread_cond_wait(&r->cv, &r->mu);
        bool stop = r->stop;
        pthread_mutex_unlock(&r->mu);
        if (stop)
            break;
        fill(r, k);
        pthread_mutex_lock(&r->mu);
        r->s[k].full = true;
        pthread_cond_broadcast(&r->cv);
        pthread_mutex_unlock(&r->mu);
        if (r->s[k].n <= 0)
            break; /* the end of the file or an error: nothing more to read */
    }
    return NULL;
}

/* Slot k, filled (by the thread, or here when there is none). */
static slot *take(reader *r, int k)
{
    if (!r->threaded) {
        fill(r, k);
        return &r->s[k];
    }
    pthread_mutex_lock(&r->mu);
    while (!r->s[k].full)
        pthread_cond_wait(&r->cv, &r->mu);
    pthread_mutex_unlock(&r->mu);
    return &r->s[k];
}

static void give_back(reader *r, int k)
{
    if (!r->threaded)
        return;
    pthread_mutex_lock(&r->mu);
    r->s[k].full = false;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

/* The carried start of a line that continues in the next piece. Past
 * max bytes the rest of the line is dropped (over), up to its line end. */
typedef struct carry {
    char *p;
    size_t n, cap, max;
    bool over;
} carry;

/* Whether n more bytes, the last of them eol or not, stay within max
 * bytes of text and a line end. */
static bool carry_fits(const carry *c, const char *p, size_t n, char eol)
{
    return n <= c->max - c->n || (n == c->max - c->n + 1 && p[n - 1] == eol);
}

static bool carry_add(carry *c, const char *p, size_t n, char eol)
{
    if (!carry_fits(c, p, n, eol)) {
        n = c->max - c->n;
        c->over = true;
    }
    if (!vec_grow((void **)&c->p, &c->cap, c->n + n + 1, 1)) /* + 1: the line end of a cut line */
        return false;
    memcpy(c->p + c->n, p, n);
    c->n += n;
    return true;
}

/* Hands the carried line over: a cut one with the line end it lost. */
static bool carry_flush(carry *c, char eol, bool (*fn)(void *ctx, const char *p, size_t n), void *ctx, size_t *cut)
{
    if (c->over) {
        c->p[c->n++] = eol;
        if (cut)
            ++*cut;
    }
    bool go = fn(ctx, c->p, c->n);
    c->n = 0;
    c->over = false;
    return go;
}

/* A file whose line ends are CRs alone (an old Mac's, a terminal capture)
 * has no '\n': read as '\n' lines it is one line, cut at the bound with
 * the rest lost. So when the carried line is about to pass the bound, no
 * '\n' has come yet and there are CRs in it (or in the n bytes at p that
 * would join it), the file's line end becomes '\r': the carried text up to
 * its last CR is whole lines, handed over now, and the reading goes on
 * at p with pieces that end at a CR. Below the bound nothing changes (the
 * lexer counts such a piece's lines by CR itself), and a file with a '\n'
 * before that point keeps '\n' (one after it switches back: see the main
 * loop). False when nothing changed; *go as fn returned. */
static bool to_cr_lines(carry *c, char *eol, bool seen_nl, const char *p, size_t n,
                        bool (*fn)(void *ctx, const char *p, size_t n), void *ctx, bool *go)
{
    if (*eol != '\n' || seen_nl || c->over || (!memchr(c->p, '\r', c->n) && !memchr(p, '\r', n)))
        return false;
    *eol = '\r';
    const char *lc = c->n ? memrchr(c->p, '\r', c->n) : NULL;
    if (lc) {
        size_t whole = (size_t)(lc - c->p) + 1;
        *go = fn(ctx, c->p, whole);
        memmove(c->p, c->p + whole, c->n - whole);
        c->n -= whole;
    }
    return true;
}

int lr_read_lines(int fd, size_t chunk, size_t max_line, bool (*fn)(void *ctx, const char *p, size_t n), void *ctx,
                  size_t *cut)
{
    reader r;
    memset(&r, 0, sizeof r);
    r.fd = fd;
    r.chunk = chunk ? chunk : LR_CHUNK;
    /* a pipe or a terminal is read in line: a thread blocked in its read
     * could not be told to stop. A file that fits in one piece is too:
     * there is nothing to overlap, and its buffers are sized to it. */
    struct stat sb;
    bool regular = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode);
    bool small = regular && sb.st_size >= 0 && (uint64_t)sb.st_size < r.chunk;
    /* one read and the one that finds the end; 4 KiB at least, since a
     * file in /proc says it is empty */
    if (small && !chunk)
        r.chunk = (size_t)sb.st_size + 1 > 4096 ? (size_t)sb.st_size + 1 : 4096;
    hm_block mem;
    if (r.chunk > SIZE_MAX / NBUF || hm_alloc(&mem, NBUF * r.chunk) != 0)
        return ENOMEM;
    for (int k = 0; k < NBUF; k++)
        r.s[k].p = (char *)mem.p + (size_t)k * r.chunk;
    pthread_t th;
    if (regular && !small && pthread_mutex_init(&r.mu, NULL) == 0) {
        if (pthread_cond_init(&r.cv, NULL) == 0) {
            r.threaded = hbg__thread_start_quiet(&th, reader_main, &r) == 0;
            if (!r.threaded)
                pthread_cond_destroy(&r.cv);
        }
        if (!r.threaded)
            pthread_mutex_destroy(&r.mu);
    }

    /* a piece is handed over as read, so a line inside one is whole up to
     * the read size: the bound is at least that */
    size_t maxl = max_line ? max_line : LR_MAX_LINE;
    carry c = {NULL, 0, 0, maxl > r.chunk ? maxl : r.chunk, false};
    int rc = 0;
    bool go = true, seen_nl = false;
    char eol = '\n'; /* '\r' once to_cr_lines finds the file's lines end so */
    for (int k = 0; go; k = (k + 1) % NBUF) {
        slot *s = take(&r, k);
        if (s->n < 0) {
            rc = s->err ? s->err : EIO;
            break;
        }
        if (s->n == 0)
            break;
        const char *p = s->p;
        size_t n = (size_t)s->n;
        const char *nl1 = seen_nl && eol == '\n' ? NULL : memchr(p, '\n', n);
        seen_nl = seen_nl || nl1;
        /* A '\n' after the switch to CR lines (a CR-only log with a '\n'
         * log after it): the CR lines end at the last CR before it, and
         * from there the file's lines end in '\n' again. */
        const char *back = NULL;
        if (eol == '\r' && nl1) {
            /* in a CRLF log the CR right before the '\n' is that line's own */
            const char *stop = nl1 > p && nl1[-1] == '\r' ? nl1 - 1 : nl1;
            const char *lc = memrchr(p, '\r', (size_t)(stop - p));
            back = lc ? lc + 1 : p;
        }
        size_t rest = back ? n - (size_t)(back - p) : 0;
        n -= rest;
        /* A CR at a piece's end is held back with the carried line: the
         * next byte may be a '\n' (a CRLF line end), and then the two are
         * one line end. It is not: the carried line is whole. */
        if (eol == '\r' && c.n && !c.over && c.p[c.n - 1] == '\r' && p[0] != '\n')
            go = carry_flush(&c, eol, fn, ctx, cut);
        const char *pend = s->p + s->n;
    again:
        if (go && (c.n || c.over)) {
            /* finish the carried line first (its line end is dropped with
             * the rest of a cut line, and carry_flush puts one back) */
            /* a last CR is held back (not by a cut line, which keeps none) */
            size_t sn = eol == '\r' && n && p + n == pend && !c.over ? n - 1 : n;
            const char *nl = memchr(p, eol, sn);
            size_t k1 = nl ? (size_t)(nl - p) + 1 : n;
            if (!c.over && !carry_fits(&c, p, k1, eol) && to_cr_lines(&c, &eol, seen_nl, p, k1, fn, ctx, &go)) {
                if (go)
                    goto again;
            } else if (!c.over && !carry_add(&c, p, k1, eol)) {
                rc = ENOMEM;
                go = false;
            } else {
                p += k1;
                n -= k1;
                if (nl)
                    go = carry_flush(&c, eol, fn, ctx, cut);
            }
        }
        if (go && n) {
            size_t sn = eol == '\r' && p + n == pend ? n - 1 : n; /* a last CR is held back */
            const char *last = memrchr(p, eol, sn);
            size_t whole = last ? (size_t)(last - p) + 1 : 0;
            if (whole)
                go = fn(ctx, p, whole);
            if (go && whole < n && !carry_fits(&c, p + whole, n - whole, eol) &&
                to_cr_lines(&c, &eol, seen_nl, p + whole, n - whole, fn, ctx, &go)) {
                p += whole;
                n -= whole;
                if (go)
                    goto again;
            } else if (go && whole < n && !carry_add(&c, p + whole, n - whole, eol)) {
                rc = ENOMEM;
                go = false;
            }
        }
        if (go && rest) {
            p = back;
            n = rest;
            rest = 0;
            eol = '\n';
            goto again;
        }
        give_back(&r, k);
    }
    if (!rc && go && (c.n || c.over)) {
        /* the last line has no line end: a cut one is counted, none added */
        if (c.over && cut)
            ++*cut;
        fn(ctx, c.p, c.n);
    }
    free(c.p);
    if (r.threaded) {
        pthread_mutex_lock(&r.mu);
        r.stop = true;
        pthread_cond_broadcast(&r.cv);
        pthread_mutex_unlock(&r.mu);
        pthread_join(th, NULL);
        pthread_cond_destroy(&r.cv);
        pthread_mutex_destroy(&r.mu);
    }
    hm_free(&mem);
    return rc;
}
