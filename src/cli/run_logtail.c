/* The passes a log holds past what its ranks reported (run_logtail.h). */
#include "cli/run_logtail.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/run_opts.h"
#include "tools/loglex.h"

/* Read back this much at a time, from the end: some passes of every rank
 * (a record is at most 4096 bytes). */
#define TAIL_CHUNK ((size_t)64 * 1024)

typedef struct tail_look {
    const uint64_t *pid, *last;
    uint32_t n;
    bool past[MAX_RANKS];    /* a line of a pass past last[r] is in the log */
    bool settled[MAX_RANKS]; /* the rest of the log, before, has none */
} tail_look;

static void on_rec(void *ctx, const lx_rec *rec)
{
    tail_look *t = ctx;
    bool of_pass = (rec->kind == LX_BIND || rec->kind == LX_ORCH || rec->kind == LX_SPAN) && rec->has_inv;
    if (!rec->has_pid || !(of_pass || rec->kind == LX_ANCHOR))
        return;
    for (uint32_t r = 0; r < t->n; r++) {
        if (!t->pid[r] || rec->pid != t->pid[r])
            continue;
        if (of_pass && rec->inv > t->last[r])
            t->past[r] = true;
        else /* a reported pass's line, older ones before it; or the
              * rank's anchor, its first line */
            t->settled[r] = true;
    }
}

/* A line a rank's kill cut, or one otherwise torn, is still its pass's
 * when it names it, as the tools charge it. */
static void on_bad(void *ctx, const lx_rec *rec, const char *msg)
{
    (void)msg;
    on_rec(ctx, rec);
}

static bool all_known(const tail_look *t)
{
    for (uint32_t r = 0; r < t->n; r++)
        if (t->pid[r] && !t->past[r] && !t->settled[r])
            return false;
    return true;
}

/* Reads len bytes at off; false on an error or a file cut meanwhile. */
static bool read_at(int fd, char *buf, size_t len, off_t off)
{
    while (len) {
        ssize_t got = pread(fd, buf, len, off);
        if (got <= 0)
            return false;
        buf += got, len -= (size_t)got, off += got;
    }
    return true;
}

/* The log's lines from its end back to `from`, a chunk at a time, each
 * chunk cut at its first line end (the line before it is read with the
 * chunk before), until every rank looked for is known. */
static void look_back(int fd, off_t from, off_t size, tail_look *t)
{
    char *buf = malloc(TAIL_CHUNK);
    if (!buf)
        return;
    lx_sink sink = {.ctx = t, .on_rec = on_rec, .on_bad = on_bad};
    for (off_t pos = size; pos > from && !all_known(t);) {
        off_t start = pos - from > (off_t)TAIL_CHUNK ? pos - (off_t)TAIL_CHUNK : from;
        size_t len = (size_t)(pos - start);
        if (!read_at(fd, buf, len, start))
            break;
        size_t skip = 0;
        const char *nl = start > from ? memchr(buf, '\n', len) : NULL;
        /* no line end short of the chunk's end: no record of ours is
         * that long; the text is read as it is, and the look goes on */
        if (nl && (size_t)(nl - buf) + 1 < len)
            skip = (size_t)(nl - buf) + 1;
        lx_scan(buf + skip, len - skip, &sink);
        pos = start + (off_t)skip;
    }
    free(buf);
}

uint32_t logtail_unreported(int logfd, off_t from, const uint64_t *pid, const uint64_t *last, uint32_t n)
{
    tail_look t = {.pid = pid, .last = last, .n = n < MAX_RANKS ? n : MAX_RANKS};
    if (all_known(&t))
        return 0;
    /* The log is open for writing only (and may be standard error): it
     * is opened again, by its descriptor, so whatever its name now. */
    struct stat st;
    if (fstat(logfd, &st) || !S_ISREG(st.st_mode))
        return 0;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", logfd);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    look_back(fd, from > 0 && from <= st.st_size ? from : 0, st.st_size, &t);
    close(fd);
    uint32_t more = 0;
    for (uint32_t r = 0; r < t.n; r++)
        more += t.past[r];
    return more;
}
