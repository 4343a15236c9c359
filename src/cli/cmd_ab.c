/* hbg ab — build two revisions, run them interleaved, compare.
 *
 * The plan is fixed before anything runs: both revisions resolved, every
 * log name checked (an existing one is refused, or with --resume reused
 * when its stamp is the one this run would write), and only then are the
 * trees built (ab_build.c) and the arms run, alternating repetition by
 * repetition so that a machine that drifts during the measurement drifts
 * under both arms alike. The logs then go to `hbg compare`, in-process.
 * Documentation: docs/ab.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "case.h"
#include "cli/ab_build.h"
#include "cli/cli.h"
#include "hbg/trace.h"

#define MAX_REPS 1000
#define MAX_ROUNDS 100000
#define TAIL_LINES 30

typedef struct ab_opts {
    const char *rev_a, *rev_b;
    const char *case_name, *mode, *order, *outputs;
    unsigned reps, rounds;
    bool keep_defs, resume;
    const char *threshold, *alpha, *plot, *format;
    const char *build, *run;
    char **args;            /* after --: for hbg run */
    int nargs;
    char outputs_abs[AB_PATH];
} ab_opts;

typedef struct ab_arm {
    char label;             /* 'A' or 'B' */
    const char *role;       /* "REV_A" or "REV_B" */
    const char *spec;       /* the revision as given */
    ab_tree t;
    char **logs;            /* per repetition: OUTPUTS/bind_<case>_<mode>_<rev>_r<N>.log */
    bool *reuse;            /* --resume: this repetition's log is kept */
    unsigned to_run;        /* repetitions that are not reused */
    ab_buf stamp;           /* the [stamp] line this run writes (without the newline) */
    char bin[AB_PATH_X];    /* the default run's hbg */
} ab_arm;

typedef struct ab_progress {
    bool tty, line;         /* stderr is a terminal; an updating line is showing */
    double t0, spent;       /* when the first run started; seconds of finished runs */
    unsigned done, total;   /* runs finished / to run (reused logs not counted) */
} ab_progress;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: hbg ab REV_A REV_B [options] [-- ARGS for hbg run]\n\n"
            "Builds REV_A and REV_B of the repository the current directory is in, each in its own\n"
            "worktree under the cache folder, runs them interleaved (A B A B ..., one `hbg run` per arm\n"
            "and repetition), and compares the logs with `hbg compare` (base REV_A, measure REV_B).\n"
            "REV_B may be WORKTREE: the uncommitted tree (tracked changes and untracked, non-ignored\n"
            "files), built from a snapshot and stamped <commit>-dirty. Documentation: docs/ab.md.\n\n"
            "options:\n"
            "  --case NAME                the workload, a case of `hbg run --list` (default qwen);\n"
            "                             its parameters (synth's --tasks ...) go after --\n"
            "  --reps N                   repetitions per arm (default 5: a unanimous sign test then\n"
            "                             reaches 0.05)\n"
            "  --rounds N                 bind passes per run (default 6; the first is cold)\n"
            "  --mode numbers|timeline    hbg run's mode (default numbers)\n"
            "  --order abab|abba          abab: A B in every repetition; abba: A B, B A, A B, ...\n"
            "  --keep-definitions         passed to hbg run\n"
            "  --outputs DIR              where the logs go (default outputs; made if missing)\n"
            "  --resume                   reuse existing logs whose [stamp] is the one this run writes\n"
            "  --threshold PCT, --alpha A, --plot FILE.svg, --format table|json|csv\n"
            "                             passed to hbg compare\n"
            "  --build CMD                build a tree with CMD instead of cmake (run in the worktree)\n"
            "  --run CMD                  measure with CMD instead of hbg run (run in the worktree)\n"
            "  -h, --help                 this text\n"
            "Everything after -- is passed to hbg run.\n\n"
            "Default build: cmake -S WT -B WT/build -DCMAKE_BUILD_TYPE=Release -DHBG_TESTS=OFF\n"
            "-DHBG_INSTALL=OFF, then cmake --build WT/build --target hbg_cli. A build is reused for\n"
            "the same tree and builder.\n"
            "Worktrees: $XDG_CACHE_HOME/hbg/ab/<repo>/<commit> (else ~/.cache/hbg/ab/...).\n"
            "Logs: OUTPUTS/bind_<case>_<mode>_<commit>_r<N>.log; hbg run's stdout goes to LOG.out.\n\n"
            "--build and --run are /bin/sh -c templates, for any project. Placeholders, replaced\n"
            "shell-quoted: {worktree} the revision's worktree, {rev} its short commit (-dirty for\n"
            "WORKTREE), {log} the log (for --build: the build log). With --run, hbg writes the log's\n"
            "first line, `[stamp] <commit> env <VARS> <CMD as written>` (VARS: a leading\n"
            "`env VAR=value ...` of CMD), then appends CMD's stdout and stderr; --case and --mode\n"
            "then only name the logs. Without --run, the run is {worktree}/build/hbg run CASE.\n\n"
            "Exit status: hbg compare's: 0 no regression, 1 a regression past --threshold, 2 not\n"
            "comparable; 2 also for bad usage, a failed build or a failed run.\n");
}

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "hbg ab: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    return 2;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* --- options ------------------------------------------------------------- */

static bool parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || !*s || *end || s[0] == '-' || s[0] == '+' || v < lo || v > hi)
        return false;
    *out = (unsigned)v;
    return true;
}

static bool parse_real(const char *s, double lo, double hi, bool open)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || !*s || *end || !isfinite(v))
        return false;
    return open ? v > lo && v < hi : v >= lo && v <= hi;
}

static bool one_of(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(s, *list))
            return true;
    return false;
}

/* Where the options end: the first "--" that is not an option's value. */
static int split_at_dashes(int argc, char **argv)
{
    static const char *const valued[] = {"--case", "--reps", "--rounds", "--mode", "--order", "--outputs",
                                         "--threshold", "--alpha", "--plot", "--format", "--build", "--run",
                                         NULL};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--"))
            return i;
        if (one_of(argv[i], valued))
            i++;
    }
    return argc;
}

static const char *const modes[] = {"numbers", "timeline", NULL};
static const char *const orders[] = {"abab", "abba", NULL};
static const char *const formats[] = {"table", "json", "csv", NULL};

/* One option's value, checked. 0, or 2 after the one-line message. */
static int take(ab_opts *o, int ch, const char *v)
{
    switch (ch) {
    case 'c': o->case_name = v; return hbg_case_find(v) ? 0 : fail("--case expects a case `hbg run --list` names, got '%s'", v);
    case 'm': o->mode = v; return one_of(v, modes) ? 0 : fail("--mode expects numbers or timeline, got '%s'", v);
    case 'O': o->order = v; return one_of(v, orders) ? 0 : fail("--order expects abab or abba, got '%s'", v);
    case 'F': o->format = v; return one_of(v, formats) ? 0 : fail("--format expects table, json or csv, got '%s'", v);
    case 'n':
        return parse_uint(v, 1, MAX_REPS, &o->reps) ? 0 : fail("--reps expects an integer from 1 to %d, got '%s'",
                                                              MAX_REPS, v);
    case 'r':
        return parse_uint(v, 2, MAX_ROUNDS, &o->rounds)
                   ? 0 : fail("--rounds expects an integer from 2 to %d (the first pass is cold and dropped), got "
                              "'%s'", MAX_ROUNDS, v);
    case 't':
        o->threshold = v;
        return parse_real(v, 0, 1e6, false) ? 0 : fail("--threshold expects a percentage >= 0, got '%s'", v);
    case 'a':
        o->alpha = v;
        return parse_real(v, 0, 1, true) ? 0 : fail("--alpha expects a probability between 0 and 1 (exclusive), "
                                                    "got '%s'", v);
    case 'o': o->outputs = v; return *v ? 0 : fail("--outputs expects a directory, got ''");
    case 'p': o->plot = v; return *v ? 0 : fail("--plot expects a file name (FILE.svg), got ''");
    case 'b': o->build = v; return *v ? 0 : fail("--build expects a shell command, got ''");
    case 'R': o->run = v; return *v ? 0 : fail("--run expects a shell command, got ''");
    }
    return 0;
}

static void defaults(ab_opts *o)
{
    memset(o, 0, sizeof *o);
    o->case_name = "qwen";
    o->mode = "numbers";
    o->order = "abab";
    o->outputs = "outputs";
    o->reps = 5;
    o->rounds = 6;
}

/* 1: go on; 0: help printed; 2: usage error (message printed). */
static int parse(int argc, char **argv, ab_opts *o)
{
    static const struct option opts[] = {
        {"case", required_argument, NULL, 'c'},    {"reps", required_argument, NULL, 'n'},
        {"rounds", required_argument, NULL, 'r'},  {"mode", required_argument, NULL, 'm'},
        {"order", required_argument, NULL, 'O'},   {"keep-definitions", no_argument, NULL, 'k'},
        {"outputs", required_argument, NULL, 'o'}, {"threshold", required_argument, NULL, 't'},
        {"alpha", required_argument, NULL, 'a'},   {"plot", required_argument, NULL, 'p'},
        {"format", required_argument, NULL, 'F'},  {"build", required_argument, NULL, 'b'},
        {"run", required_argument, NULL, 'R'},     {"resume", no_argument, NULL, 'u'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0}};
    defaults(o);
    int end = split_at_dashes(argc, argv);
    o->args = argv + (end < argc ? end + 1 : argc);
    o->nargs = argc - (end < argc ? end + 1 : argc);
    optind = 1;
    opterr = 0;
    int ch;
    while ((ch = getopt_long(end, argv, "h", opts, NULL)) != -1) {
        if (ch == 'h') {
            usage(stdout);
            return 0;
        }
        if (ch == 'k' || ch == 'u') {
            *(ch == 'k' ? &o->keep_defs : &o->resume) = true;
            continue;
        }
        if (ch == '?' || ch == ':')
            return fail("unknown or incomplete option '%s' (see `hbg ab --help`)", argv[optind - 1]);
        if (take(o, ch, optarg))
            return 2;
    }
    if (end - optind != 2)
        return fail("expected two revisions, REV_A and REV_B, got %d (see `hbg ab --help`)", end - optind);
    o->rev_a = argv[optind];
    o->rev_b = argv[optind + 1];
    return 1;
}

/* hbg ab names the logs and the rounds itself: ARGS must not override
 * what the names and the stamp say. */
static int check_args(const ab_opts *o)
{
    static const char *const owned[] = {"--mode", "--rounds", "--log", "-o", NULL};
    if (o->run && (o->nargs || o->keep_defs)) {
        fprintf(stderr, "hbg ab: warning: --run replaces hbg run, so --keep-definitions and the arguments after "
                        "-- are not used\n");
        return 0;
    }
    for (int i = 0; i < o->nargs; i++)
        for (const char *const *w = owned; *w; w++) {
            size_t n = strlen(*w);
            if (!strncmp(o->args[i], *w, n) && (o->args[i][n] == 0 || o->args[i][n] == '=' || n == 2))
                return fail("'%s' after -- would override hbg ab's own %s; use hbg ab's option", o->args[i],
                            n == 2 ? "-o (the log names)" : *w);
        }
    return 0;
}

/* --- revisions and log names --------------------------------------------- */

static int resolve_arm(const ab_repo *r, ab_arm *arm)
{
    char err[2 * AB_PATH];
    if (strcmp(arm->spec, "WORKTREE")) {
        if (ab_resolve_commit(r, arm->spec, &arm->t, err, sizeof err))
            return fail("%s", err);
        return 0;
    }
    if (arm->label == 'A')
        return fail("WORKTREE (the uncommitted tree) can only be REV_B, the arm measured against REV_A");
    bool clean = false;
    if (ab_resolve_worktree(r, &arm->t, &clean, err, sizeof err))
        return fail("%s", err);
    if (clean)
        fprintf(stderr, "hbg ab: WORKTREE has no uncommitted changes: measuring HEAD (%s) itself\n", arm->t.rev);
    return 0;
}

static int resolve(const ab_opts *o, const ab_repo *r, ab_arm *a, ab_arm *b)
{
    if (resolve_arm(r, a) || resolve_arm(r, b))
        return 2;
    if (!b->t.snapshot && !strcmp(a->t.sha, b->t.sha))
        return fail("REV_A '%s' and REV_B '%s' are the same commit %s, so both arms' logs would have the same "
                    "names (bind_%s_%s_%s_rN.log); name two different commits, or WORKTREE for the uncommitted "
                    "tree", a->spec, b->spec, a->t.rev, o->case_name, o->mode, a->t.rev);
    return 0;
}

static int name_logs(const ab_opts *o, ab_arm *arm)
{
    arm->logs = calloc(o->reps, sizeof *arm->logs);
    arm->reuse = calloc(o->reps, sizeof *arm->reuse);
    if (!arm->logs || !arm->reuse)
        return fail("out of memory");
    const char *sep = o->outputs[strlen(o->outputs) - 1] == '/' ? "" : "/";
    for (unsigned i = 0; i < o->reps; i++)
        if (asprintf(&arm->logs[i], "%s%sbind_%s_%s_%s_r%u.log", o->outputs, sep, o->case_name, o->mode,
                     arm->t.rev, i + 1) < 0) {
            arm->logs[i] = NULL;
            return fail("out of memory");
        }
    arm->to_run = o->reps;
    return 0;
}

/* --- stamps ---------------------------------------------------------------- */

/* --run: the template as written, a leading `env` folded into the stamp's. */
static void template_stamp(const ab_opts *o, ab_arm *arm)
{
    const char *s = o->run + strspn(o->run, " \t\n");
    if (!strncmp(s, "env", 3) && (s[3] == ' ' || s[3] == '\t'))
        s += 3 + strspn(s + 3, " \t");
    ab_buf_fmt(&arm->stamp, "[stamp] %s env ", arm->t.rev);
    /* one line, whatever the template's layout */
    for (; *s; s++)
        ab_buf_add(&arm->stamp, *s == '\n' || *s == '\r' || *s == '\t' ? " " : s, 1);
}

/* The switches as hbg run resolves them: the mode's presets, then the
 * environment (which the run inherits), then explicit options in ARGS. */
static void run_switches(const ab_opts *o, bool sw[3], hbg_level *level)
{
    sw[0] = true;
    sw[1] = !strcmp(o->mode, "timeline");
    sw[2] = true;
    hbg_switch_read(HBG_SW_BREAKDOWN, &sw[0]);
    hbg_switch_read(HBG_SW_RECORDS, &sw[1]);
    hbg_switch_read(HBG_SW_SKIP_DEVICE, &sw[2]);
    hbg_switch_level(level);
    for (int i = 0; i < o->nargs; i++) {
        const char *a = o->args[i];
        if (!strcmp(a, "--skip-device-run"))
            sw[2] = true;
        else if (!strcmp(a, "--log-level") && i + 1 < o->nargs)
            hbg_level_parse(o->args[++i], level);
        else if (!strncmp(a, "--log-level=", 12))
            hbg_level_parse(a + 12, level);
    }
}

/* The stamp `hbg run` writes (docs/run.md): every switch resolved, the
 * command without its artifact paths. */
static void run_stamp(const ab_opts *o, ab_arm *arm)
{
    bool sw[3];
    hbg_level level = HBG_LOG_TIMING;
    run_switches(o, sw, &level);
    char lv[16];
    const char *ln = hbg_level_name(level);
    size_t i = 0;
    for (; ln[i] && i + 1 < sizeof lv; i++)
        lv[i] = (char)(ln[i] >= 'A' && ln[i] <= 'Z' ? ln[i] - 'A' + 'a' : ln[i]);
    lv[i] = 0;
    ab_buf_fmt(&arm->stamp,
               "[stamp] %s env HBG_BIND_BREAKDOWN=%d HBG_HOST_PHASE_RECORDS=%d HBG_SKIP_DEVICE_RUN=%d "
               "HBG_LOG_LEVEL=%s hbg run %s --mode %s --rounds %u%s",
               arm->t.rev, sw[0], sw[1], sw[2], lv, o->case_name, o->mode, o->rounds,
               o->keep_defs ? " --keep-definitions" : "");
    for (int k = 0; k < o->nargs; k++) {
        const char *a = o->args[k];
        if (!strcmp(a, "--out-dir")) {
            k++;
            continue;
        }
        if (strncmp(a, "--out-dir=", 10))
            ab_buf_fmt(&arm->stamp, " %s", a);
    }
}

/* The first line of a file, without its line end; false if unreadable. */
static bool first_line(const char *path, char *out, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, out, cap - 1);
    close(fd);
    if (n < 0)
        return false;
    out[n] = 0;
    out[strcspn(out, "\r\n")] = 0;
    return true;
}

/* --- the plan ------------------------------------------------------------- */

/* --resume: a log is kept only when its stamp is this run's. */
static int resume_check(const ab_arm *arm, unsigned i)
{
    static char line[8192];
    if (!first_line(arm->logs[i], line, sizeof line))
        return fail("--resume: cannot read %s: %s", arm->logs[i], strerror(errno));
    if (strcmp(line, ab_buf_cstr(&arm->stamp)))
        return fail("--resume: %s was written by another run: its first line is '%.300s', this run's stamp is "
                    "'%.300s'; move it away or pick another --outputs", arm->logs[i], line,
                    ab_buf_cstr(&arm->stamp));
    return 0;
}

/* Every log name, before anything runs. */
static int check_logs(const ab_opts *o, ab_arm *arms)
{
    const char *first = NULL;
    unsigned existing = 0;
    struct stat sb;
    for (int a = 0; a < 2; a++)
        for (unsigned i = 0; i < o->reps; i++) {
            if (lstat(arms[a].logs[i], &sb))
                continue;
            if (!o->resume) {
                first = first ? first : arms[a].logs[i];
                existing++;
                continue;
            }
            if (resume_check(&arms[a], i))
                return 2;
            arms[a].reuse[i] = true;
            arms[a].to_run--;
        }
    if (existing)
        return fail("%s exists (%u of this run's %u logs do): nothing was run; pick another --outputs, or pass "
                    "--resume to reuse the logs whose [stamp] matches this run", first, existing, 2 * o->reps);
    return 0;
}

static int make_outputs(ab_opts *o)
{
    struct stat sb;
    if (ab_mkdirs(o->outputs) || stat(o->outputs, &sb) || !S_ISDIR(sb.st_mode))
        return fail("cannot create the --outputs folder %s: %s", o->outputs,
                    errno ? strerror(errno) : "not a directory");
    if (!realpath(o->outputs, o->outputs_abs))
        return fail("cannot resolve %s: %s", o->outputs, strerror(errno));
    return 0;
}

/* --- builds ---------------------------------------------------------------- */

/* The built hbg should report the commit the log names carry. */
static void check_version(const ab_arm *arm)
{
    const char *argv[] = {arm->bin, "version", NULL};
    ab_buf out = {0};
    char want[80];
    snprintf(want, sizeof want, "hbg %s\n", arm->t.rev);
    if (ab_capture(argv, NULL, &out, -1) == 0 && strcmp(ab_buf_cstr(&out), want))
        fprintf(stderr, "hbg ab: warning: the hbg built for %s '%s' reports '%.*s', not %s: its stamps will not "
                        "match the log names\n", arm->role, arm->spec, (int)strcspn(ab_buf_cstr(&out), "\n"),
                ab_buf_cstr(&out), arm->t.rev);
    ab_buf_free(&out);
}

static int build_arm(const ab_opts *o, const ab_repo *r, ab_arm *arm)
{
    long np = sysconf(_SC_NPROCESSORS_ONLN);
    ab_builder b = {.tmpl = o->build, .jobs = np > 0 ? (unsigned)np : 1};
    char err[2 * AB_PATH];
    if (ab_built(r, &arm->t, &b)) {
        fprintf(stderr, "hbg ab: %s %s (%s): reusing the build in %s\n", arm->role, arm->t.rev, arm->spec,
                arm->t.dir);
    } else {
        fprintf(stderr, "hbg ab: building %s %s (%s) in %s; output in %s\n", arm->role, arm->t.rev, arm->spec,
                arm->t.dir, arm->t.log);
        int rc = ab_build(r, &arm->t, &b, err, sizeof err);
        if (rc) {
            fprintf(stderr, "hbg ab: building %s '%s' (%s) failed: %s; the full log is %s; its last %d lines:\n",
                    arm->role, arm->spec, arm->t.rev, err, arm->t.log, TAIL_LINES);
            ab_print_tail(stderr, arm->t.log, TAIL_LINES);
            return 2;
        }
    }
    if (o->run)
        return 0;
    snprintf(arm->bin, sizeof arm->bin, "%s/build/hbg", arm->t.dir);
    if (access(arm->bin, X_OK))
        return fail("%s '%s': the build left no %s for hbg run (with another project, --run names the "
                    "measurement)", arm->role, arm->spec, arm->bin);
    check_version(arm);
    return 0;
}

/* --- runs ------------------------------------------------------------------ */

static void progress_line(ab_progress *p, unsigned rep, unsigned reps, const ab_arm *arm, double started)
{
    double t = now_s();
    char left[48] = "estimating the time left";
    if (p->done) {
        double rest = p->spent / p->done * (p->total - p->done) - (t - started);
        snprintf(left, sizeof left, "about %.0f s left", rest > 0 ? rest : 0);
    }
    fprintf(stderr, "\rhbg ab: rep %u/%u %c %s, %.1f s elapsed, %s\033[K", rep, reps, arm->label, arm->t.rev,
            t - p->t0, left);
    fflush(stderr);
    p->line = true;
}

/* Waits for a run; on a terminal the progress line ticks meanwhile. */
static int wait_run(pid_t pid, ab_progress *p, unsigned rep, unsigned reps, const ab_arm *arm, double started)
{
    if (!p->tty)
        return ab_wait(pid, true);
    for (int tick = 0;; tick++) {
        int st = ab_wait(pid, false);
        if (st != -2)
            return st;
        if (tick % 10 == 0)
            progress_line(p, rep, reps, arm, started);
        nanosleep(&(struct timespec){.tv_nsec = 50000000}, NULL);
    }
}

/* hbg run of the arm's own build; its stdout and stderr go to LOG.out. */
static pid_t start_default(const ab_opts *o, const ab_arm *arm, unsigned i, char *outp, size_t cap)
{
    const char **argv = calloc((size_t)o->nargs + 16, sizeof *argv);
    if (!argv)
        return -1;
    char rounds[16];
    snprintf(rounds, sizeof rounds, "%u", o->rounds);
    int k = 0;
    const char *fixed[] = {arm->bin, "run", o->case_name, "--mode", o->mode, "--rounds", rounds, "-o",
                           arm->logs[i], "--out-dir", o->outputs};
    for (size_t f = 0; f < sizeof fixed / sizeof *fixed; f++)
        argv[k++] = fixed[f];
    if (o->keep_defs)
        argv[k++] = "--keep-definitions";
    for (int a = 0; a < o->nargs; a++)
        argv[k++] = o->args[a];
    snprintf(outp, cap, "%s.out", arm->logs[i]);
    int fd = open(outp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    pid_t pid = fd < 0 ? -1 : ab_start(argv, NULL, fd, fd);
    if (fd >= 0)
        close(fd);
    free(argv);
    return pid;
}

/* --run: the stamp first, then the template's output, in the worktree. */
static pid_t start_template(const ab_opts *o, const ab_arm *arm, unsigned i)
{
    char *abs = NULL;
    const char *base = strrchr(arm->logs[i], '/');
    if (asprintf(&abs, "%s/%s", o->outputs_abs, base ? base + 1 : arm->logs[i]) < 0)
        return -1;
    int fd = open(arm->logs[i], O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        free(abs);
        return -1;
    }
    pid_t pid = -1;
    if (write(fd, arm->stamp.p, arm->stamp.n) == (ssize_t)arm->stamp.n && write(fd, "\n", 1) == 1) {
        ab_buf cmd = {0};
        ab_subst(&cmd, o->run, arm->t.dir, arm->t.rev, abs);
        const char *argv[] = {"/bin/sh", "-c", ab_buf_cstr(&cmd), NULL};
        pid = ab_start(argv, arm->t.dir, fd, fd);
        ab_buf_free(&cmd);
    }
    close(fd);
    free(abs);
    return pid;
}

static int run_failed(const ab_opts *o, const ab_arm *arm, unsigned i, int st, const char *outp)
{
    char why[64];
    ab_status_text(st, why, sizeof why);
    fprintf(stderr, "hbg ab: rep %u/%u %c %s (%s '%s') failed: %s %s; the partial log stays at %s (delete it "
                    "before --resume, which would reuse it); %s ends:\n",
            i + 1, o->reps, arm->label, arm->t.rev, arm->role, arm->spec, o->run ? "--run" : "hbg run", why,
            arm->logs[i], outp);
    ab_print_tail(stderr, outp, TAIL_LINES);
    return 2;
}

/* One arm, one repetition. */
static int run_one(const ab_opts *o, const ab_arm *arm, unsigned i, ab_progress *p)
{
    const char *name = strrchr(arm->logs[i], '/') ? strrchr(arm->logs[i], '/') + 1 : arm->logs[i];
    if (arm->reuse[i]) {
        if (!p->tty)
            fprintf(stderr, "hbg ab: rep %u/%u %c %s: %s (reused)\n", i + 1, o->reps, arm->label, arm->t.rev, name);
        return 0;
    }
    char outp[AB_PATH + 8];
    snprintf(outp, sizeof outp, "%s", arm->logs[i]);
    double t = now_s();
    if (!p->done && p->t0 == 0)
        p->t0 = t;
    pid_t pid = o->run ? start_template(o, arm, i) : start_default(o, arm, i, outp, sizeof outp);
    if (pid < 0)
        return fail("rep %u/%u %c %s: cannot start the run (%s): %s", i + 1, o->reps, arm->label, arm->t.rev,
                    arm->logs[i], strerror(errno));
    int st = wait_run(pid, p, i + 1, o->reps, arm, t);
    double dt = now_s() - t;
    p->spent += dt;
    p->done++;
    if (st != 0) {
        if (p->line)
            fputc('\n', stderr), p->line = false;
        return run_failed(o, arm, i, st, outp);
    }
    if (!p->tty)
        fprintf(stderr, "hbg ab: rep %u/%u %c %s: %s (%.1f s)\n", i + 1, o->reps, arm->label, arm->t.rev, name, dt);
    return 0;
}

/* The arms interleaved: abab runs A then B in every repetition, abba
 * alternates which goes first (A B, B A, A B, ...). */
static int run_all(const ab_opts *o, ab_arm *arms)
{
    ab_progress p = {.tty = isatty(STDERR_FILENO) == 1, .total = arms[0].to_run + arms[1].to_run};
    for (unsigned i = 0; i < o->reps; i++) {
        bool swap = !strcmp(o->order, "abba") && i % 2 == 1;
        for (int k = 0; k < 2; k++)
            if (run_one(o, &arms[swap ? 1 - k : k], i, &p))
                return 2;
    }
    if (p.tty && p.done)
        fprintf(stderr, "\rhbg ab: %u runs in %.1f s\033[K\n", p.done, p.spent);
    return 0;
}

/* --- the comparison --------------------------------------------------------- */

static int compare(const ab_opts *o, const ab_arm *arms)
{
    size_t n = 0, cap = 2 * (size_t)o->reps + 16;
    char **argv = calloc(cap, sizeof *argv);
    if (!argv)
        return fail("out of memory");
    argv[n++] = "compare";
    for (int a = 0; a < 2; a++) {
        argv[n++] = a ? "--measure" : "--base";
        for (unsigned i = 0; i < o->reps; i++)
            argv[n++] = arms[a].logs[i];
    }
    const char *pass[][2] = {{"--threshold", o->threshold}, {"--alpha", o->alpha}, {"--plot", o->plot},
                             {"--format", o->format}};
    for (size_t k = 0; k < 4; k++)
        if (pass[k][1]) {
            argv[n++] = (char *)pass[k][0];
            argv[n++] = (char *)pass[k][1];
        }
    ab_buf line = {0};
    ab_buf_str(&line, "hbg");
    for (size_t k = 0; k < n; k++) {
        ab_buf_str(&line, " ");
        ab_buf_shquote(&line, argv[k]);
    }
    fprintf(stderr, "hbg ab: to compare these logs again: %s\n", ab_buf_cstr(&line));
    ab_buf_free(&line);
    fflush(NULL);
    optind = 1;
    int rc = hbg_cmd_compare((int)n, argv);
    fflush(stdout);
    free(argv);
    return rc;
}

static void arms_free(const ab_opts *o, ab_arm *arms)
{
    for (int a = 0; a < 2; a++) {
        for (unsigned i = 0; arms[a].logs && i < o->reps; i++)
            free(arms[a].logs[i]);
        free(arms[a].logs);
        free(arms[a].reuse);
        ab_buf_free(&arms[a].stamp);
        ab_tree_free(&arms[a].t);
    }
}

/* Everything before the first run: revisions, names, stamps, the check. */
static int plan(ab_opts *o, ab_repo *r, ab_arm *arms)
{
    char err[2 * AB_PATH];
    if (ab_repo_open(r, err, sizeof err))
        return fail("%s", err);
    if (resolve(o, r, &arms[0], &arms[1]))
        return 2;
    for (int a = 0; a < 2; a++) {
        if (name_logs(o, &arms[a]))
            return 2;
        if (o->run)
            template_stamp(o, &arms[a]);
        else
            run_stamp(o, &arms[a]);
    }
    return check_logs(o, arms);
}

int hbg_cmd_ab(int argc, char **argv)
{
    ab_opts o;
    int rc = parse(argc, argv, &o);
    if (rc != 1)
        return rc;
    if (check_args(&o))
        return 2;
    ab_repo repo;
    ab_arm arms[2] = {{.label = 'A', .role = "REV_A", .spec = o.rev_a},
                      {.label = 'B', .role = "REV_B", .spec = o.rev_b}};
    rc = plan(&o, &repo, arms);
    if (!rc)
        rc = make_outputs(&o);
    for (int a = 0; a < 2 && !rc; a++)
        if (arms[a].to_run)
            rc = build_arm(&o, &repo, &arms[a]);
    if (!rc)
        rc = run_all(&o, arms);
    if (!rc)
        rc = compare(&o, arms);
    arms_free(&o, arms);
    return rc;
}
