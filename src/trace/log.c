/* The log emitter and the per-process clock anchor.
 *
 * Atomicity. Each record reaches the fd through exactly one write(2) of at
 * most PIPE_BUF bytes (line.c caps the size). On a pipe or FIFO POSIX makes
 * such a write atomic: it is never interleaved with another writer's and
 * never partial, so rank processes sharing the runner's stdout cannot tear
 * each other's records. On a regular file opened with O_APPEND, Linux moves
 * to the end and writes under the inode lock, so appends from several
 * processes land whole too. A write interrupted before transferring anything
 * fails with EINTR and is retried whole; a short write (a full disk, a file
 * size limit) is not completed by a second write, because the rest would land
 * after some other process's record and corrupt both. Such a record is
 * simply cut short: logging never fails its caller. The failure is kept
 * instead (the first errno, or that a record was cut short), and the log's
 * owner asks for it when the work is done (hbg_log_write_error), so a full
 * disk is reported at the end rather than lost.
 *
 * The anchor. A reader maps a record's mono_ns to wall time with the anchor
 * of the process that wrote it, so every process writes its own, once per
 * log, before its first TIMING record. The log remembers the *pid* that
 * wrote the anchor rather than a flag: a rank process forked after the
 * parent anchored inherits the parent's memory, and a flag would make it
 * skip its own anchor.
 */
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "trace/trace_internal.h"

struct hbg_log {
    int fd;
    hbg_level threshold;
    /* (pid << 1) | written: the process that owns the anchor and whether its
     * line is out. One word, so a fork at any moment leaves the child either
     * a finished parent anchor or a claim by another pid — both of which the
     * child replaces with its own. */
    _Atomic uint64_t anchor;
    _Atomic int werr;      /* the first errno a write met, 0: none */
    atomic_bool cut;       /* a write was short */
};

uint64_t hbg_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint32_t hbg_gettid(void)
{
    return (uint32_t)gettid();
}

hbg_status hbg_log_open(int fd, hbg_level threshold, hbg_log **out)
{
    if (!out)
        return HBG_E_INVAL;
    *out = NULL;
    if (fd < 0 || (unsigned)threshold > HBG_LOG_OFF)
        return HBG_E_INVAL;
    hbg_log *lg = malloc(sizeof *lg);
    if (!lg)
        return HBG_E_NOMEM;
    lg->fd = fd;
    lg->threshold = threshold;
    atomic_init(&lg->anchor, 0);
    atomic_init(&lg->werr, 0);
    atomic_init(&lg->cut, false);
    *out = lg;
    return HBG_OK;
}

void hbg_log_close(hbg_log *lg)
{
    free(lg);
}

bool hbg_log_enabled(const hbg_log *lg, hbg_level l)
{
    return lg && (unsigned)l < HBG_LOG_OFF && l >= lg->threshold;
}

void hbg__line_emit(hbg_log *lg, hbg__linebuf *r)
{
    if (r->truncated)
        memcpy(r->b + r->n - 3, "...", 3);
    /* A message carrying its own newline would end the line early and leave
     * its tail looking like a record of nobody's. */
    for (size_t i = 0; i < r->n; i++)
        if (r->b[i] == '\n' || r->b[i] == '\r')
            r->b[i] = ' ';
    r->b[r->n] = '\n';
    size_t len = r->n + 1;
    ssize_t k;
    do
        k = write(lg->fd, r->b, len);
    while (k < 0 && errno == EINTR);
    if (k < 0) {
        int none = 0;
        atomic_compare_exchange_strong(&lg->werr, &none, errno);
    } else if ((size_t)k < len) {
        atomic_store(&lg->cut, true);
    }
}

int hbg_log_write_error(const hbg_log *lg)
{
    if (!lg)
        return 0;
    int e = atomic_load(&((hbg_log *)lg)->werr);
    return e ? e : atomic_load(&((hbg_log *)lg)->cut) ? EIO : 0;
}

static void write_anchor(hbg_log *lg, uint32_t pid)
{
    struct timespec wall;
    uint64_t mono = hbg_mono_ns();
    clock_gettime(CLOCK_REALTIME, &wall);
    uint64_t wall_ns = (uint64_t)wall.tv_sec * 1000000000u + (uint64_t)wall.tv_nsec;
    hbg__linebuf r;
    hbg__line_init(&r, hbg_mono_ns(), HBG_LOG_TIMING, "clock_anchor");
    hbg__line_printf(&r, "[CLOCK_ANCHOR] v=1 pid=%u mono_ns=%llu wall_ns=%llu", pid,
                   (unsigned long long)mono, (unsigned long long)wall_ns);
    hbg__line_emit(lg, &r);
}

void hbg__log_anchor(hbg_log *lg)
{
    if (!hbg_log_enabled(lg, HBG_LOG_TIMING))
        return;
    uint64_t pid = (uint64_t)getpid();
    uint64_t mine = pid << 1, done = mine | 1;
    uint64_t cur = atomic_load_explicit(&lg->anchor, memory_order_acquire);
    while (cur != done) {
        if ((cur & ~(uint64_t)1) == mine) {
            /* Another thread of this process is writing it; our record must
             * not overtake the anchor. */
            sched_yield();
            cur = atomic_load_explicit(&lg->anchor, memory_order_acquire);
            continue;
        }
        if (atomic_compare_exchange_weak_explicit(&lg->anchor, &cur, mine, memory_order_acq_rel,
                                                  memory_order_acquire)) {
            write_anchor(lg, (uint32_t)pid);
            atomic_store_explicit(&lg->anchor, done, memory_order_release);
            return;
        }
    }
}

void hbg_log_printf(hbg_log *lg, hbg_level l, const char *func, const char *file, int line,
                    const char *fmt, ...)
{
    if (!hbg_log_enabled(lg, l))
        return;
    hbg__log_anchor(lg);
    const char *base = file ? strrchr(file, '/') : NULL;
    base = base ? base + 1 : (file ? file : "?");
    hbg__linebuf r;
    hbg__line_init(&r, hbg_mono_ns(), l, func);
    hbg__line_printf(&r, "[%s:%d] ", base, line);
    va_list ap;
    va_start(ap, fmt);
    hbg__line_vprintf(&r, fmt ? fmt : "", ap); /* NULL: an empty message, as hbg_log_record's */
    va_end(ap);
    hbg__line_emit(lg, &r);
}

void hbg_log_record(hbg_log *lg, hbg_level l, const char *func, const char *msg)
{
    if (!hbg_log_enabled(lg, l))
        return;
    hbg__log_anchor(lg);
    hbg__linebuf r;
    hbg__line_init(&r, hbg_mono_ns(), l, func);
    hbg__line_puts(&r, msg ? msg : "");
    hbg__line_emit(lg, &r);
}
