/* hbg run — bind (and run) a workload N rounds, one process per rank.
 *
 * The parent writes the stamp, forks the ranks (a single rank too, so
 * that the parent can name it, bound it and kill it as any other),
 * collects each rank's per-pass figures through a pipe, and prints them.
 * Every rank writes its own log records straight to the shared log file
 * (O_APPEND, one write per record), so nothing is torn or reordered within
 * a record. A rank that dies is noticed by the parent, named, and the
 * others are given a bounded time before they are stopped.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "case.h"
#include "tools/diag.h"
#include "cli/case_opts.h"
#include "cli/cli.h"
#include "cli/procsig.h"
#include "cli/run_logtail.h"
#include "cli/run_opts.h"
#include "cli/run_progress.h"
#include "cli/run_report.h"
#include "cli/startline.h"
#include "cli/stopsig.h"
#include "hbg/runtime.h"
#include "hbg/xrank.h"

static int open_log(const run_opts *o, int *fd)
{
    hbg_stamp stamp = {.commit = hbg_build_commit(), .breakdown = o->breakdown, .records = o->records,
                       .skip_device = o->skip_device, .level = o->level, .command = o->stamp_cmd};
    if (!o->log_path) {
        /* A log on stderr is a log too (`2> run.log`): stamped like a
         * file, so compare reads it as one. At `off` nothing is written. */
        *fd = STDERR_FILENO;
        hbg_status sst = o->level == HBG_LOG_OFF ? HBG_OK : hbg_log_stamp(*fd, &stamp);
        if (sst) {
            fprintf(stderr, "hbg run: cannot write the log's stamp to stderr: %s\n",
                    sst == HBG_E_IO ? strerror(errno) : hbg_strerror(sst));
            return 1;
        }
        return 0;
    }
    *fd = open(o->log_path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
    if (*fd < 0) {
        if (errno == EEXIST)
            fprintf(stderr, "hbg run: refusing to overwrite %s: it exists (name each run apart, e.g. _r2)\n",
                    dg_shown(o->log_path));
        else
            fprintf(stderr, "hbg run: cannot create %s: %s\n", dg_shown(o->log_path), strerror(errno));
        return 1;
    }
    hbg_status sst = hbg_log_stamp(*fd, &stamp);
    if (sst) {
        fprintf(stderr, "hbg run: cannot write %s: %s\n", dg_shown(o->log_path),
                sst == HBG_E_IO ? strerror(errno) : hbg_strerror(sst));
        close(*fd);
        unlink(o->log_path); /* made just now (O_EXCL): at most a cut stamp */
        return 1;
    }
    return 0;
}

/* The run's artifact folder, made fresh so no run overwrites another's. */
static int make_out_dir(const run_opts *o, char *dir, size_t cap, bool *made)
{
    *made = false;
    if (mkdir(o->out_dir, 0755)) {
        if (errno != EEXIST) {
            fprintf(stderr, "hbg run: cannot create %s: %s\n", dg_shown(o->out_dir), strerror(errno));
            return 1;
        }
    } else {
        *made = true;
    }
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    char ts[32];
    strftime(ts, sizeof ts, "%Y%m%d-%H%M%S", &tm);
    int n = snprintf(dir, cap, "%s/%s_%s_%d", o->out_dir, o->c->name, ts, (int)getpid());
    if (n < 0 || (size_t)n >= cap) {
        /* cut short, the name would lose its time and pid: the next
         * run's would then be the same */
        fprintf(stderr, "hbg run: --out-dir %s is too long (a run folder's path takes at most %zu bytes)\n",
                dg_shown(o->out_dir), cap - 1);
        /* refused, a run leaves nothing behind (as every refusal here):
         * not even the --out-dir it made just now */
        if (*made)
            rmdir(o->out_dir);
        return 1;
    }
    if (mkdir(dir, 0755)) {
        fprintf(stderr, "hbg run: cannot create %s: %s\n", dg_shown(dir), strerror(errno));
        if (*made)
            rmdir(o->out_dir);
        return 1;
    }
    return 0;
}

static uint64_t secs_ns(uint32_t s)
{
    return (uint64_t)s * 1000000000ull;
}

/* The ranks' two lines: their first passes start together, and none
 * tears down while a peer is still binding (cli/startline.h). */
typedef struct run_lines {
    run_startline *start, *finish;
} run_lines;

/* Rank `rank` at line l: a rank that cannot go on only arrives (its peers
 * must not wait for it, nor it for them); one that can waits for the
 * others, at most the peer timeout. */
static void meet(run_startline *l, uint32_t rank, bool failed, const run_opts *o)
{
    if (failed)
        startline_arrive(l, rank);
    else
        (void)startline_wait(l, rank, secs_ns(o->peer_timeout_s));
}

/* The parent's arrival, at both lines, for a rank that may never arrive
 * itself (never started, or ended); a rank is counted once whoever says
 * it arrived. */
static void arrive_for(const run_lines *l, uint32_t rank)
{
    startline_arrive(l->start, rank);
    startline_arrive(l->finish, rank);
}

/* A failed pass's report.error when it adds to the status's own words
 * ("device run: ..." with the device's account; hbg_runtime_run writes
 * "SEGMENT: status" when it knows no more, which the line says already). */
static const char *pass_account(const hbg_pass_report *rep, hbg_status st)
{
    const char *e = rep->error, *s = hbg_strerror(st);
    if (!*e || !strcmp(e, s))
        return NULL;
    if (rep->failed_segment < HBG_SEGMENT_COUNT) {
        /* "SEGMENT: why": the segment is named before it already */
        const char *seg = hbg_phase_name(rep->failed_segment);
        size_t n = strlen(seg);
        if (!strncmp(e, seg, n) && !strncmp(e + n, ": ", 2))
            return strcmp(e + n + 2, s) ? e + n + 2 : NULL;
    }
    return e;
}

/* printf into buf, cut to cap: a message that joins two others (a round
 * and the golden's reason) is cut where it must be, on purpose. */
static __attribute__((format(printf, 3, 4))) void join_msg(char *buf, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, cap, fmt, ap);
    va_end(ap);
}

/* HBG_TEST_STOP_AFTER_PASS=N[:MS], for the fault tests: the rank stops
 * the command as Ctrl-C would, after its pass N's lines are in the log
 * and before the pass is reported (a moment a real stop hits only by
 * chance): SIGINT to itself and to the command, held blocked MS ms (0 by
 * default), as a rank the machine does not schedule at once would. */
typedef struct stop_hook {
    uint32_t pass; /* 0: unset */
    unsigned long ms;
} stop_hook;

/* Read by hbg run before the ranks start: a value the hook cannot use is
 * refused, not ignored (a fault test whose hook never fires would test a
 * run that was never stopped), and so is a pass past --rounds (the rank
 * would hold SIGINT blocked for the whole run, for nothing). */
static stop_hook g_stop_hook;

static bool stop_hook_parse(uint32_t rounds)
{
    const char *v = getenv("HBG_TEST_STOP_AFTER_PASS");
    if (!v)
        return true;
    char *end;
    errno = 0;
    unsigned long n = strtoul(v, &end, 10), ms = 0;
    /* digits only, as the options read their integers: strtoul's own
     * leading blanks and sign ("+3", " 3") are no N */
    bool ok = *v >= '0' && *v <= '9' && !errno && n >= 1 && n <= rounds;
    if (ok && *end == ':') {
        const char *m = end + 1;
        ms = strtoul(m, &end, 10);
        ok = *m >= '0' && *m <= '9' && !errno && ms <= 60000;
    }
    if (!ok || *end) {
        fprintf(stderr,
                "hbg run: HBG_TEST_STOP_AFTER_PASS='%s': expected N[:MS], N a pass from 1 to --rounds (%u), "
                "MS milliseconds up to 60000\n",
                dg_shown(v), rounds);
        return false;
    }
    g_stop_hook = (stop_hook){(uint32_t)n, ms};
    return true;
}

/* In the rank, before its device starts its threads: they are started
 * with SIGINT blocked then, so that the main thread alone takes it, when
 * it unblocks it. Unset, a pass pays one comparison. */
static stop_hook stop_hook_arm(void)
{
    if (g_stop_hook.pass) {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGINT);
        sigprocmask(SIG_BLOCK, &set, NULL);
    }
    return g_stop_hook;
}

static void stop_hook_fire(const stop_hook *h)
{
    kill(getpid(), SIGINT);
    kill(getppid(), SIGINT);
    struct timespec t = {(time_t)(h->ms / 1000), (long)(h->ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) && errno == EINTR)
        ;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigprocmask(SIG_UNBLOCK, &set, NULL); /* it ends here, by SIGINT */
}

/* One rank: device, case, runtime, rounds, golden. Results go to `out`. */
static void run_rank(const run_opts *o, uint32_t rank, int logfd, int recfd, int out, void *services,
                     const run_lines *line)
{
    rank_summary sum;
    memset(&sum, 0, sizeof sum);
    sum.rank = rank;
    sum.pid = (uint32_t)getpid();
    sum.status = HBG_OK;
    sum.golden = GOLDEN_SKIPPED;
    hbg_log *log = NULL;
    hbg_device *dev = NULL;
    hbg_kernel_table *kt = NULL;
    hbg_recpool *rec = NULL;
    hbg_runtime *rt = NULL;
    void *state = NULL;
    hbg_program prog;
    hbg_case_env env = o->env;
    env.rank = rank, env.nranks = o->ranks, env.tile_unit = o->tile_unit, env.services = services;
    stop_hook hook = stop_hook_arm();

    hbg_status st = hbg_log_open(logfd, o->level, &log);
    hbg_sim_config sc = {.rank = rank, .nranks = o->ranks, .mem_limit = o->device_memory, .max_steps = o->device_steps};
    if (!st)
        st = hbg_sim_open(&sc, &dev);
    if (!st) {
        dev->services = services;
        st = hbg_kernel_table_create(&kt);
    }
    if (!st && o->records)
        st = hbg_recpool_create(4, o->records_per_thread, &rec);
    if (!st) {
        st = o->c->setup(&env, kt, &prog, &state);
        if (st)
            snprintf(sum.msg, sizeof sum.msg, "case setup failed: %s", hbg_strerror(st));
    }
    if (!st) {
        hbg_runtime_config rc = {.device = dev, .kernels = kt, .heap_bytes = o->pools.heap_bytes,
                                 .task_window = o->pools.task_window,
                                 .journal_calls = o->pools.journal_calls,
                                 .keep_definitions = o->keep_defs, .no_tmap_journal = o->no_journal,
                                 .log = log, .breakdown = o->breakdown,
                                 .records = rec, .records_fd = recfd, .rank = rank, .nranks = o->ranks};
        st = hbg_runtime_create(&rc, &rt);
        if (st) /* which field or limit, or what host memory ran out for */
            snprintf(sum.msg, sizeof sum.msg, "cannot create the runtime: %s", hbg_runtime_last_error());
    }
    if (st && !sum.msg[0])
        snprintf(sum.msg, sizeof sum.msg, "set-up failed: %s", hbg_strerror(st));
    /* The golden is computed once, after the first pass that ran the
     * device (every rank at that point: an eager golden may wait on its
     * peers; and with the device's memory held, as the memory estimates
     * assume), and the outputs are compared with it after every such
     * pass: a wrong result in any round fails it, not only one in the
     * last. */
    bool check = !st && !o->skip_device && !o->skip_golden;
    void *golden = NULL;
    char gmsg[sizeof sum.msg] = "";
    bool gfailed = false;
    sum.status = st;
    report_send(out, MSG_SUMMARY, &sum, sizeof sum);
    /* The ranks' first passes start together (cli/startline.h). */
    meet(line->start, rank, st != HBG_OK, o);

    for (uint32_t r = 0; r < o->rounds && !st; r++) {
        hbg_pass_report rep;
        st = hbg_runtime_run(rt, &prog, o->skip_device, &rep);
        pass_row row = {.rank = rank, .round = r + 1, .pid = sum.pid, .inv = rep.inv, .status = st,
                        .control_plane_ns = rep.control_plane_ns, .tasks = rep.tasks, .heap_used = rep.heap_used,
                        .shipped = rep.shipped_bytes, .defs_uploaded = rep.defs_uploaded,
                        .device_ran = rep.device_ran, .device_wall_ns = rep.run.device_wall_ns,
                        .failed_segment = (uint32_t)rep.failed_segment};
        for (int s = 0; s < 3; s++)
            row.cp_ns[s] = rep.trace.seg[s == 0 ? HBG_PH_HOST_ORCH : s == 1 ? HBG_PH_GRAPH_UPLOAD : HBG_PH_ARENA_H2D].dur_ns;
        if (r + 1 == hook.pass)
            stop_hook_fire(&hook);
        report_send(out, MSG_ROW, &row, sizeof row);
        if (st) {
            /* The pass's own account, when it says more than the status:
             * which task, which file and why, or the device's (which
             * task, which kernel, which record of the image). */
            const char *why = pass_account(&rep, st);
            snprintf(sum.msg, sizeof sum.msg, "round %u failed%s%s: %s%s%s", r + 1,
                     rep.failed_segment < HBG_SEGMENT_COUNT ? " in " : "",
                     rep.failed_segment < HBG_SEGMENT_COUNT ? hbg_phase_name(rep.failed_segment) : "",
                     hbg_strerror(st), why ? "; " : "", why ? why : "");
        }
        if (!st && check && rep.device_ran && !gfailed) {
            hbg_status g = golden ? HBG_OK : o->c->reference(state, &env, kt, &golden, gmsg, sizeof gmsg);
            char why[sizeof sum.msg];
            if (g) {
                gfailed = true;
                /* A rank of several whose golden stopped short (out of
                 * memory, a peer gone) has exchanged less than its peers:
                 * its next pass would pair with their golden's exchanges
                 * and every one after with the wrong pass. It ends here,
                 * as a failed round does, so its peers are told it is
                 * gone. */
                if (o->ranks > 1) {
                    st = g;
                    join_msg(sum.msg, sizeof sum.msg, "the golden after round %u could not be computed: %s", r + 1,
                             gmsg);
                }
            } else if (o->c->compare(state, golden, why, sizeof why) != HBG_OK) {
                join_msg(gmsg, sizeof gmsg, "round %u: %s", r + 1, why);
                gfailed = true;
            }
        }
        uint64_t dropped = rec ? hbg_recpool_dropped(rec) : 0;
        sum.records_dropped += dropped;
        sum.passes_dropping += dropped > 0;
        if (rep.device_ran && (sum.device_wall_min_ns == 0 || rep.run.device_wall_ns < sum.device_wall_min_ns))
            sum.device_wall_min_ns = rep.run.device_wall_ns;
        sum.device_ran = sum.device_ran || rep.device_ran;
        sum.rounds_done = r + 1;
    }
    /* The teardown (unmapping gigabytes of reservations) waits for every
     * peer's last pass: on a shared machine it slowed a peer's bind as a
     * set-up does. */
    meet(line->finish, rank, st != HBG_OK, o);
    sum.status = st;
    /* a round failed after the golden had: both are said */
    size_t n = strlen(sum.msg);
    if (st && gfailed && strstr(sum.msg, gmsg) == NULL && n + 32 < sizeof sum.msg)
        join_msg(sum.msg + n, sizeof sum.msg - n, "; the golden had failed: %s", gmsg);
    if (!st && sum.device_ran && check) {
        sum.golden = gfailed ? GOLDEN_FAILED : GOLDEN_PASSED;
        if (gfailed)
            snprintf(sum.msg, sizeof sum.msg, "%s", gmsg);
    }
    sum.final = true;
    sum.log_errno = hbg_log_write_error(log);
    report_send(out, MSG_SUMMARY, &sum, sizeof sum);

    o->c->free_ref(golden);
    if (state)
        o->c->teardown(state);
    hbg_runtime_destroy(rt);
    hbg_recpool_destroy(rec);
    hbg_kernel_table_destroy(kt);
    hbg_device_close(dev);
    hbg_log_close(log);
}

/* The parent's view of the ranks while they run. */
typedef struct rank_watch {
    int fd[MAX_RANKS];        /* read end of each rank's pipe, -1 once at EOF */
    bool live[MAX_RANKS];     /* forked and not yet reaped */
    const run_lines *line;    /* the ranks' start and finish lines */
    hbg_xrank *xr;            /* the cross-rank services, NULL: none */
    uint64_t deadline;        /* when the ranks still running are killed; 0: not armed */
    char why[128];            /* what armed it, for the kill messages */
    run_progress *pg;         /* the progress line, cleared before each message */
} rank_watch;

/* Rank r will never signal its peers again: their waits end now, each
 * rank reporting its own failure (HBG_E_PEER_GONE), where they used to
 * sit out --peer-timeout, the same length as the bound this side arms at
 * that moment: whichever started later lost, and a survivor killed by the
 * bound had only "killed by signal 9" to say. */
static void abandon(rank_watch *w, uint32_t r)
{
    if (w->xr)
        hbg_xrank_abandon(w->xr, r);
}

/* A rank that could not be started (out of descriptors or processes) has
 * no pid to name: it is named as not started, and the bound on the other
 * ranks is armed at once, since a peer of theirs will never come. */
static void not_started(const run_opts *o, run_collector *col, rank_watch *w, uint32_t r, const char *call)
{
    snprintf(col->rank[r].sum.msg, sizeof col->rank[r].sum.msg, "not started: %s: %s", call, strerror(errno));
    arrive_for(w->line, r);
    abandon(w, r);
    if (o->ranks > 1) {
        run_progress_clear(w->pg);
        fprintf(stderr, "hbg run: rank %u %s; waiting at most %u s for the other ranks\n", r, col->rank[r].sum.msg,
                o->peer_timeout_s);
    }
    if (!w->deadline) {
        snprintf(w->why, sizeof w->why, "%u s after rank %u could not be started", o->peer_timeout_s, r);
        w->deadline = hbg_mono_ns() + secs_ns(o->peer_timeout_s);
    }
}

/* SIGINT, SIGTERM or SIGHUP to the command (Ctrl-C reaches the ranks
 * too, in the same process group): the parent notes it, kills the ranks
 * still running after a short grace, reports what they did, then ends by
 * the same signal, so that whatever ran it sees how it ended. */
static volatile sig_atomic_t g_signal;

/* How long the ranks are given to end by a stop signal of their own
 * before those still running are killed: ample for a rank to die of a
 * signal delivered with the command's, short beside a person's wait. */
#define STOP_GRACE_NS (250ull * 1000 * 1000)
/* How long a rank that has the signal pending, or is already exiting, is
 * waited for past that: on a loaded machine a rank not yet scheduled to
 * take Ctrl-C's signal outlived the grace, and was killed and named as a
 * rank the command found still running. A rank that blocks the signal
 * holds the command no longer than this. */
#define STOP_GRACE_MAX_NS (2000ull * 1000 * 1000)

static void on_stop_signal(int sig)
{
    if (!g_signal)
        g_signal = sig;
}

/* The passes the log holds: those the ranks reported, and one more of
 * each rank that was killed after its pass's first lines were written
 * and before it reported the pass (run_logtail.h). A rank that ended
 * well reported every pass; below TIMING no pass writes a line. */
static uint64_t passes_logged(const run_opts *o, int logfd, off_t from, const run_collector *col)
{
    if (o->level > HBG_LOG_TIMING)
        return col->nrows;
    uint64_t pid[MAX_RANKS] = {0}, last[MAX_RANKS] = {0};
    uint32_t rows[MAX_RANKS] = {0};
    for (uint32_t i = 0; i < col->nrows; i++) {
        const pass_row *row = &col->rows[i];
        if (row->rank < o->ranks) {
            rows[row->rank]++;
            last[row->rank] = row->inv > last[row->rank] ? row->inv : last[row->rank];
        }
    }
    for (uint32_t r = 0; r < o->ranks; r++)
        if (col->rank[r].pid > 0 && !col->rank[r].sum.final && rows[r] < o->rounds)
            pid[r] = (uint64_t)col->rank[r].pid;
    return col->nrows + logtail_unreported(logfd, from, pid, last, o->ranks);
}

/* The log's last record, when a stop signal or the --time-limit cut the
 * run (`how`: "stopped by ..."): read alone, a log of fewer passes than
 * its stamp's --rounds would pass for a complete run of fewer rounds.
 * Written after every rank has ended, so nothing follows it. A run
 * stopped after its last pass (in a golden check, a teardown) has every
 * pass in its log, and no such record. The passes it counts are those the
 * log holds, which the tools list: a pass a rank was killed in after its
 * bind lines counts, though the rank never reported it. A record that
 * cannot be written is not reported: the run already fails, and says why
 * on stderr. */
static void log_stopped(const run_opts *o, int logfd, off_t from, const run_collector *col, const char *how)
{
    uint64_t held = passes_logged(o, logfd, from, col);
    if (held >= (uint64_t)o->ranks * o->rounds)
        return;
    hbg_log *lg = NULL;
    /* at ERROR, not the run's level: a threshold that admits TIMING would
     * put this process's clock anchor before it, an anchor of no spans */
    if (hbg_log_open(logfd, o->level == HBG_LOG_OFF ? HBG_LOG_OFF : HBG_LOG_ERROR, &lg))
        return;
    char msg[256];
    snprintf(msg, sizeof msg, "hbg run %s after %llu of %llu passes: this log is incomplete", how,
             (unsigned long long)held, (unsigned long long)o->ranks * o->rounds);
    hbg_log_record(lg, HBG_LOG_ERROR, "hbg_cmd_run", msg);
    hbg_log_close(lg);
}

/* Forks the ranks; a rank that cannot be started is named and left out. */
static void fork_ranks(const run_opts *o, int logfd, int recfd, void *services, const run_lines *line,
                       run_collector *col, rank_watch *w)
{
    fflush(NULL);
    w->line = line;
    pid_t parent = getpid();
    for (uint32_t r = 0; r < o->ranks; r++) {
        w->fd[r] = -1;
        w->live[r] = false;
        int p[2];
        if (pipe(p)) {
            not_started(o, col, w, r, "pipe");
            continue;
        }
        pid_t pid = fork();
        if (pid == 0) {
            stopsig_default();
            /* a rank does not outlive the command, however it ends */
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != parent) /* it ended before that took hold */
                _exit(1);
            close(p[0]);
            for (uint32_t j = 0; j < r; j++)
                if (w->fd[j] >= 0)
                    close(w->fd[j]);
            run_rank(o, r, logfd, recfd, p[1], services, line);
            close(p[1]);
            _exit(0);
        }
        close(p[1]);
        if (pid < 0) {
            not_started(o, col, w, r, "fork");
            close(p[0]);
            continue;
        }
        col->rank[r].pid = pid;
        w->fd[r] = p[0];
        w->live[r] = true;
    }
}

/* Arms the bound on the ranks still running, once: the first failure (a
 * rank that died, or one that ended with a failed round or set-up) is the
 * moment its peers can no longer finish, whether they are waiting on it,
 * stopped, or hung. */
static void arm_on_failure(const run_opts *o, const run_collector *col, rank_watch *w, uint32_t r, int ws)
{
    const rank_state *rs = &col->rank[r];
    bool died = !rs->sum.final || !WIFEXITED(ws) || WEXITSTATUS(ws);
    /* a rank the parent killed was named when it was */
    if (rs->stopped || !(died || rs->sum.status))
        return;
    abandon(w, r);
    if (w->deadline)
        return;
    /* after a stop signal the command ends within its grace: no wait to announce */
    if (o->ranks > 1 && !g_signal) {
        run_progress_clear(w->pg);
        fprintf(stderr, "hbg run: rank %u (pid %d) %s; waiting at most %u s for the other ranks\n", r, rs->pid,
                died ? "ended without finishing" : "failed", o->peer_timeout_s);
    }
    snprintf(w->why, sizeof w->why, "%u s after rank %u failed", o->peer_timeout_s, r);
    w->deadline = hbg_mono_ns() + secs_ns(o->peer_timeout_s);
}

/* Rank r ended well, having waited at the finish line (cli/startline.h):
 * a rank still running that has not arrived there has had --peer-timeout
 * seconds since r finished its rounds (r's wait ended on that bound, as
 * the line was not full), and is killed now. Where the ranks' rounds wait
 * on each other (dsv4's device runs, through its cross-rank window) a
 * stopped or hung rank fails its peers first; elsewhere (numbers mode, a
 * skipped device run, the cases without a window) no round waits, and
 * before this a stopped rank held the command for ever. A rank whose pipe
 * is closed has ended (its own reap names it), and one killed already is
 * not killed again. Without a finish line (its page could not be mapped)
 * nobody waited: the others get the bound from now. */
static void kill_laggards(const run_opts *o, run_collector *col, rank_watch *w, uint32_t r, int ws)
{
    const rank_state *rs = &col->rank[r];
    if (o->ranks < 2 || !rs->sum.final || rs->sum.status || !WIFEXITED(ws) || WEXITSTATUS(ws))
        return;
    if (!w->line->finish) {
        if (!w->deadline) {
            snprintf(w->why, sizeof w->why, "%u s after rank %u finished its rounds", o->peer_timeout_s, r);
            w->deadline = hbg_mono_ns() + secs_ns(o->peer_timeout_s);
        }
        return;
    }
    bool rest = false;
    for (uint32_t k = 0; k < o->ranks; k++) {
        if (!w->live[k] || col->rank[k].stopped)
            continue;
        if (w->fd[k] >= 0 && !startline_arrived(w->line->finish, k)) {
            run_progress_clear(w->pg);
            fprintf(stderr, "hbg run: rank %u (pid %d) still running %u s after rank %u finished its rounds: killing it\n",
                    k, col->rank[k].pid, o->peer_timeout_s, r);
            kill(col->rank[k].pid, SIGKILL);
            col->rank[k].stopped = true;
        } else {
            rest = true;
        }
    }
    /* The ranks past the finish line have their golden check and
     * teardown left, as r had: --peer-timeout seconds more, so that one
     * stopped or hung there cannot hold the command either. */
    if (rest && !w->deadline) {
        snprintf(w->why, sizeof w->why, "%u s after rank %u ended", o->peer_timeout_s, r);
        w->deadline = hbg_mono_ns() + secs_ns(o->peer_timeout_s);
    }
}

/* Reaps rank r if it has ended (blocking only once its pipe is closed and
 * `block` is set, i.e. it has been killed). */
static void reap(const run_opts *o, run_collector *col, rank_watch *w, uint32_t r, bool block)
{
    int ws = 0;
    pid_t got = waitpid(col->rank[r].pid, &ws, block ? 0 : WNOHANG);
    if (got != col->rank[r].pid)
        return;
    w->live[r] = false;
    col->rank[r].reaped = true;
    col->rank[r].wait_status = ws;
    kill_laggards(o, col, w, r, ws);
    arrive_for(w->line, r); /* it may have ended before either line */
    arm_on_failure(o, col, w, r, ws);
}

/* Kills rank r, still running, naming it and why. */
static void kill_rank(run_collector *col, rank_watch *w, uint32_t r)
{
    run_progress_clear(w->pg);
    fprintf(stderr, "hbg run: rank %u (pid %d) still running %s: killing it\n", r, col->rank[r].pid, w->why);
    kill(col->rank[r].pid, SIGKILL);
    col->rank[r].stopped = true;
}

/* Kills every rank still running, naming each and why. */
static void kill_rest(run_collector *col, rank_watch *w, uint32_t ranks)
{
    for (uint32_t r = 0; r < ranks; r++)
        if (w->live[r] && !col->rank[r].stopped)
            kill_rank(col, w, r);
    w->deadline = UINT64_MAX;
}

/* A stop signal's grace is over: each rank still running is killed,
 * but for one that is ending by the signal itself (pending, or exiting:
 * procsig.h), until `cap`. Only now is /proc read, every poll: most
 * ranks ended in the grace. */
static void kill_after_grace(run_collector *col, rank_watch *w, uint32_t ranks, uint64_t now, uint64_t cap)
{
    snprintf(w->why, sizeof w->why, "when the command got signal %d (%s)", (int)g_signal, strsignal(g_signal));
    if (now > cap) {
        kill_rest(col, w, ranks);
        return;
    }
    for (uint32_t r = 0; r < ranks; r++)
        if (w->live[r] && !col->rank[r].stopped && !procsig_ending(col->rank[r].pid, g_signal))
            kill_rank(col, w, r);
}

/* Reads what is ready on the ranks' pipes; a pipe at EOF is closed. */
static void read_pipes(const run_opts *o, run_collector *col, rank_watch *w)
{
    struct pollfd pf[MAX_RANKS];
    uint32_t which[MAX_RANKS];
    nfds_t n = 0;
    for (uint32_t r = 0; r < o->ranks; r++)
        if (w->fd[r] >= 0)
            pf[n] = (struct pollfd){.fd = w->fd[r], .events = POLLIN}, which[n++] = r;
    if (n == 0) {
        poll(NULL, 0, 20); /* only reaping is left: the ranks are exiting */
        return;
    }
    int pr = poll(pf, n, g_signal ? 20 : 200); /* a stop signal's grace is counted in these */
    for (nfds_t i = 0; pr > 0 && i < n; i++) {
        if (!(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
        uint32_t r = which[i];
        char buf[4096];
        ssize_t got = read(w->fd[r], buf, sizeof buf);
        if (got > 0) {
            collector_feed(col, r, buf, (size_t)got);
        } else if (got == 0 || errno != EINTR) {
            close(w->fd[r]);
            w->fd[r] = -1;
        }
    }
}

/* Forks the ranks and collects their messages until every rank is reaped.
 * A rank that dies or fails is named, and the others get --peer-timeout
 * seconds more (their own cross-rank waits are bounded by the same figure)
 * before they are killed; --time-limit bounds the whole run the same way.
 * So a rank stopped or hung cannot hold the command where a peer is there
 * to notice it, nor under --time-limit; a lone rank has no peer, and
 * only --time-limit bounds it. Returns true when --time-limit killed some. */
static bool spawn_ranks(const run_opts *o, int logfd, int recfd, hbg_xrank *xr, const run_lines *line,
                        run_collector *col, run_progress *pg)
{
    bool timed_out = false;
    rank_watch w = {.pg = pg, .xr = xr};
    uint64_t limit = o->time_limit_s ? hbg_mono_ns() + secs_ns(o->time_limit_s) : UINT64_MAX;
    uint64_t grace = 0, cap = 0;   /* when a stop signal's grace ends, and its longest; 0: no signal yet */
    stopsig_catch(on_stop_signal); /* no SA_RESTART: the poll below returns at once */
    fork_ranks(o, logfd, recfd, xr, line, col, &w);
    for (;;) {
        bool any = false;
        for (uint32_t r = 0; r < o->ranks; r++)
            any = any || w.live[r];
        if (!any)
            break;
        read_pipes(o, col, &w);
        run_progress_tick(pg, col->nrows);
        for (uint32_t r = 0; r < o->ranks; r++)
            if (w.live[r] && w.fd[r] < 0)
                reap(o, col, &w, r, w.deadline == UINT64_MAX);
        uint64_t now = hbg_mono_ns();
        /* Ctrl-C reaches the whole process group: ranks that got the
         * signal too end by it, and are reaped as such in a short grace
         * (longer for a rank that has it still pending, up to the cap),
         * not killed again and named as killed by the command. */
        if (g_signal && !grace)
            grace = now + STOP_GRACE_NS, cap = now + STOP_GRACE_MAX_NS;
        if (g_signal && now > grace && w.deadline != UINT64_MAX) {
            kill_after_grace(col, &w, o->ranks, now, cap);
        } else if (now > limit && w.deadline != UINT64_MAX) {
            snprintf(w.why, sizeof w.why, "at the --time-limit of %u s", o->time_limit_s);
            kill_rest(col, &w, o->ranks);
            timed_out = true;
        } else if (w.deadline && w.deadline != UINT64_MAX && now > w.deadline) {
            kill_rest(col, &w, o->ranks);
        }
    }
    for (uint32_t r = 0; r < o->ranks; r++)
        if (w.fd[r] >= 0)
            close(w.fd[r]);
    run_progress_end(pg);
    return timed_out;
}

int hbg_cmd_run(int argc, char **argv)
{
    run_opts o;
    int rc = run_opts_parse(argc, argv, &o);
    if (rc != RUN_OPTS_GO && rc != RUN_OPTS_LIST)
        return rc;
    if (rc == RUN_OPTS_LIST) {
        for (const hbg_case *const *c = hbg_cases(); *c; c++) {
            if (o.c && *c != o.c)
                continue;
            printf("%-8s %u rank%s  %s\n", (*c)->name, (*c)->default_ranks, (*c)->default_ranks == 1 ? " " : "s",
                   (*c)->summary);
            case_opts_list(*c, stdout);
        }
        return 0;
    }
    if (!stop_hook_parse(o.rounds))
        return 2;
    run_progress pg;
    if (!run_progress_start(&pg, !o.log_path, o.ranks * o.rounds))
        return 2;
    /* The artifacts first, then the log: a run refused here leaves
     * nothing behind, so the same command can be run again as it is (a
     * log left with only its stamp would be refused as existing). */
    int logfd, recfd = -1;
    char dir[1024], path[1200] = "";
    bool made_out = false; /* --out-dir itself was made here: it goes too */
    if (o.records) {
        if (make_out_dir(&o, dir, sizeof dir, &made_out))
            return 1;
        snprintf(path, sizeof path, "%s/host_phase_records.jsonl", dir);
        recfd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
        if (recfd < 0) {
            fprintf(stderr, "hbg run: cannot create %s: %s\n", dg_shown(path), strerror(errno));
            rmdir(dir);
            if (made_out)
                rmdir(o.out_dir);
            return 1;
        }
    }
    if (open_log(&o, &logfd)) {
        if (recfd >= 0)
            close(recfd), unlink(path), rmdir(dir);
        if (made_out)
            rmdir(o.out_dir);
        return 1;
    }
    if (recfd >= 0)
        printf("records: %s\n", path);
    /* Where this run's lines begin, past its stamp: a log on stderr may
     * be appended to (`2>> run.log`), and what comes before is an earlier
     * run's (run_logtail.h). Not a file: 0, and it is not read back. */
    off_t log_from = lseek(logfd, 0, SEEK_CUR);
    if (log_from < 0)
        log_from = 0;
    run_collector col;
    if (collector_init(&col, o.ranks, o.rounds)) {
        fprintf(stderr, "hbg run: out of memory\n");
        return 1;
    }
    /* Cross-rank windows are mapped before the fork so every rank sees
     * them at the same address; their waits share the peer timeout. */
    hbg_xrank *xr = NULL;
    if (o.c->window_bytes) {
        hbg_status xst = hbg_xrank_create(o.ranks, o.c->window_bytes, (uint64_t)o.peer_timeout_s * 1000000000ull, &xr);
        if (xst) {
            fprintf(stderr, "hbg run: cannot map the cross-rank window (%llu bytes per rank): %s\n",
                    (unsigned long long)o.c->window_bytes, hbg_strerror(xst));
            collector_free(&col);
            return 1;
        }
    }
    run_lines line = {NULL, NULL};
    if (o.ranks > 1)
        line = (run_lines){startline_create(o.ranks), startline_create(o.ranks)};
    bool timed_out = spawn_ranks(&o, logfd, recfd, xr, &line, &col, &pg);
    startline_destroy(line.start);
    startline_destroy(line.finish);
    hbg_xrank_destroy(xr);
    char how[96];
    if (g_signal)
        snprintf(how, sizeof how, "stopped by signal %d (%s)", (int)g_signal, strsignal(g_signal));
    else if (timed_out)
        snprintf(how, sizeof how, "stopped at the --time-limit of %u s", o.time_limit_s);
    if (g_signal || timed_out)
        log_stopped(&o, logfd, log_from, &col, how);
    if (logfd != STDERR_FILENO)
        close(logfd);
    if (recfd >= 0)
        close(recfd);
    /* said first: stdout may be a pipe closed already, whose SIGPIPE
     * would end the command before it said why it stopped */
    if (g_signal)
        fprintf(stderr, "hbg run: stopped by signal %d (%s); the passes that ran are listed, the log holds them\n",
                (int)g_signal, strsignal(g_signal));
    rc = collector_print(&col, stdout, o.skip_device, o.skip_golden);
    if (collector_log_errors(&col, o.log_path ? o.log_path : "the log (standard error)", stderr))
        rc = 1;
    if (o.records)
        collector_record_drops(&col, o.records_per_thread, stderr);
    collector_free(&col);
    if (g_signal)
        stopsig_raise(g_signal);
    return rc;
}
