/* The parent side of `hbg run`: collect rank messages, print the figures. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/run_report.h"
#include "tools/diag.h"
#include "hbg/trace.h"

int collector_init(run_collector *c, uint32_t ranks, uint32_t rounds)
{
    memset(c, 0, sizeof *c);
    c->ranks = ranks;
    c->rounds = rounds;
    c->cap = ranks * rounds;
    c->rows = calloc(c->cap ? c->cap : 1, sizeof *c->rows);
    for (uint32_t r = 0; r < ranks; r++) {
        c->rank[r].sum.rank = r;
        c->rank[r].sum.status = HBG_OK;
    }
    return c->rows ? 0 : -1;
}

void collector_free(run_collector *c)
{
    free(c->rows);
    c->rows = NULL;
}

void report_send(int fd, uint32_t tag, const void *msg, size_t n)
{
    unsigned char buf[sizeof(uint32_t) + sizeof(pass_row) + sizeof(rank_summary)];
    memcpy(buf, &tag, sizeof tag);
    memcpy(buf + sizeof tag, msg, n);
    size_t left = sizeof tag + n;
    const unsigned char *p = buf;
    while (left) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        p += w, left -= (size_t)w;
    }
}

void collector_feed(run_collector *c, uint32_t r, const void *data, size_t n)
{
    rank_state *rs = &c->rank[r];
    const unsigned char *p = data;
    while (n) {
        size_t take = sizeof rs->buf - rs->have;
        if (take > n)
            take = n;
        memcpy(rs->buf + rs->have, p, take);
        rs->have += take, p += take, n -= take;
        for (;;) {
            uint32_t tag;
            if (rs->have < sizeof tag)
                break;
            memcpy(&tag, rs->buf, sizeof tag);
            size_t need = sizeof tag + (tag == MSG_ROW ? sizeof(pass_row) : sizeof(rank_summary));
            if (rs->have < need)
                break;
            if (tag == MSG_ROW) {
                if (c->nrows < c->cap)
                    memcpy(&c->rows[c->nrows++], rs->buf + sizeof tag, sizeof(pass_row));
            } else {
                memcpy(&rs->sum, rs->buf + sizeof tag, sizeof(rank_summary));
                rs->have_sum = true;
            }
            memmove(rs->buf, rs->buf + need, rs->have - need);
            rs->have -= need;
        }
    }
}

static void ms(char *b, size_t cap, uint64_t ns)
{
    snprintf(b, cap, "%llu.%03llu ms", (unsigned long long)(ns / 1000000), (unsigned long long)(ns / 1000 % 1000));
}

int collector_print(const run_collector *c, FILE *out, bool skip_device, bool skip_golden)
{
    fprintf(out, "%-5s %-4s %-8s %-4s %14s %12s %12s %12s %6s %12s %10s %4s %14s\n", "round", "rank", "pid",
            "inv", "control_ns", "host_orch", "graph_upload", "arena_h2d", "tasks", "heap_used", "shipped",
            "defs", "device_wall_ns");
    for (uint32_t i = 0; i < c->nrows; i++) {
        const pass_row *w = &c->rows[i];
        char dev[32] = "-";
        if (w->device_ran)
            snprintf(dev, sizeof dev, "%llu", (unsigned long long)w->device_wall_ns);
        fprintf(out, "%-5u %-4u %-8u %-4llu %14llu %12llu %12llu %12llu %6u %12llu %10llu %4u %14s%s%s\n",
                w->round, w->rank, w->pid, (unsigned long long)w->inv, (unsigned long long)w->control_plane_ns,
                (unsigned long long)w->cp_ns[0], (unsigned long long)w->cp_ns[1], (unsigned long long)w->cp_ns[2],
                w->tasks, (unsigned long long)w->heap_used, (unsigned long long)w->shipped, w->defs_uploaded,
                dev, w->status ? "  FAILED: " : "", w->status ? hbg_strerror((hbg_status)w->status) : "");
    }
    int rc = 0;
    for (uint32_t r = 0; r < c->ranks; r++) {
        const rank_state *rs = &c->rank[r];
        const rank_summary *s = &rs->sum;
        char why[160] = "";
        /* "stopped": by the command's own SIGKILL; a rank that died of
         * another signal on the way (the group's Ctrl-C) died of that */
        if (rs->reaped && WIFSIGNALED(rs->wait_status))
            snprintf(why, sizeof why, "%s by signal %d (%s)",
                     rs->stopped && WTERMSIG(rs->wait_status) == SIGKILL ? "stopped" : "killed",
                     WTERMSIG(rs->wait_status), strsignal(WTERMSIG(rs->wait_status)));
        else if (rs->reaped && WIFEXITED(rs->wait_status) && WEXITSTATUS(rs->wait_status))
            snprintf(why, sizeof why, "exited with status %d", WEXITSTATUS(rs->wait_status));
        if (!rs->pid) {
            fprintf(out, "rank %u: FAILED: %s\n", r, s->msg);
            rc = 1;
            continue;
        }
        if (!s->final || why[0]) {
            /* A dead rank sent no final summary: its rows say how far it got. */
            uint32_t done = 0;
            for (uint32_t i = 0; i < c->nrows; i++)
                done += c->rows[i].rank == r && c->rows[i].status == HBG_OK;
            fprintf(out, "rank %u (pid %d): FAILED: %s after %u of %u rounds%s%s\n", r, rs->pid,
                    why[0] ? why : "ended without a result", done, c->rounds, s->msg[0] ? "; " : "", s->msg);
            rc = 1;
            continue;
        }
        if (s->status) {
            fprintf(out, "rank %u (pid %u): FAILED: %s\n", r, s->pid, s->msg[0] ? s->msg : hbg_strerror(s->status));
            rc = 1;
            continue;
        }
        char wall[48] = "";
        if (s->device_ran)
            ms(wall, sizeof wall, s->device_wall_min_ns);
        const char *g = s->golden == GOLDEN_PASSED   ? "golden passed"
                        : s->golden == GOLDEN_FAILED ? "golden FAILED"
                        : skip_device                ? "golden skipped (device run skipped)"
                        : skip_golden                ? "golden skipped (--skip-golden)"
                                                     : "golden skipped";
        if (s->golden == GOLDEN_FAILED)
            rc = 1;
        fprintf(out, "rank %u (pid %u): %s%s%s; %s%s%s\n", r, s->pid, g, s->golden == GOLDEN_FAILED ? ": " : "",
                s->golden == GOLDEN_FAILED ? s->msg : "", s->device_ran ? "device wall min " : "device skipped",
                wall, s->device_ran ? "" : "");
    }
    return rc;
}

void collector_record_drops(const run_collector *c, uint32_t per_thread, FILE *err)
{
    for (uint32_t r = 0; r < c->ranks; r++) {
        const rank_summary *s = &c->rank[r].sum;
        if (!s->records_dropped)
            continue;
        char in[64];
        if (s->rounds_done == 1)
            snprintf(in, sizeof in, "its one pass");
        else
            snprintf(in, sizeof in, "%u of %u passes", s->passes_dropping, s->rounds_done);
        fprintf(err,
                "hbg run: warning: rank %u (pid %u): %llu per-op record%s dropped in %s: the pool holds %u a thread "
                "(--records-per-thread); %s records lines are incomplete\n",
                r, s->pid, (unsigned long long)s->records_dropped, s->records_dropped == 1 ? "" : "s", in, per_thread,
                s->passes_dropping == 1 ? "that pass's" : "those passes'");
    }
}

int collector_log_errors(const run_collector *c, const char *log_name, FILE *err)
{
    int rc = 0;
    for (uint32_t r = 0; r < c->ranks; r++) {
        int e = c->rank[r].sum.log_errno;
        if (!e)
            continue;
        fprintf(err, "hbg run: cannot write %s: %s (rank %u; records from then on are missing or cut short)\n",
                dg_shown(log_name), strerror(e), r);
        rc = 1;
    }
    return rc;
}
