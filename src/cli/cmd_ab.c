/* hbg ab — build two revisions, run them interleaved, compare.
 *
 * The plan is fixed before anything runs: both revisions resolved, the
 * --outputs folder taken (one hbg ab's at a time), every log name checked
 * (an existing one is refused, or with --resume reused when its stamp is
 * the one this run would write), and only then are the
 * trees built (ab_build.c) and the arms run, alternating repetition by
 * repetition so that a machine that drifts during the measurement drifts
 * under both arms alike. The logs then go to `hbg compare`, in-process.
 * Documentation: docs/ab.md.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "case.h"
#include "tools/diag.h"
#include "cli/ab_build.h"
#include "cli/cli.h"
#include "cli/longopt.h"
#include "cli/outfile.h"
#include "cli/stopsig.h"
#include "cli/run_opts.h"
#include "hbg/trace.h"
#include "tools/compare.h"
#include "tools/loglex.h"
#include "tools/passes.h"

#define MAX_REPS 1000
#define MAX_ROUNDS 100000
#define TAIL_LINES 30
#define VERSION_LIMIT_S   5       /* for `hbg version` of a built tree, which answers at once */
#define MAX_RUN_TIMEOUT_S 8640000 /* 100 days */

typedef struct ab_opts {
    const char *rev_a, *rev_b;
    const char *case_name, *mode, *order, *outputs;
    unsigned reps, rounds;
    bool keep_defs, resume;
    const char *threshold, *alpha, *plot, *format;
    const char *build, *run;
    const char *run_timeout; /* --run-timeout as given; NULL: none */
    double run_limit_s;      /* its value; 0: none */
    char **args;            /* after --: for hbg run */
    int nargs;
    char outputs_abs[AB_PATH];
    int outputs_lock;       /* the descriptor holding the --outputs folder's lock; -1: none */
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
    bool read[2];           /* each arm's first run made here: its log read (run_one) */
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
            "                             reaches 0.05; with fewer a verdict also needs a t-test of\n"
            "                             the repetitions' deltas, and one repetition gives none)\n"
            "  --rounds N                 bind passes per run (default 6; the first is cold)\n"
            "  --mode numbers|timeline    hbg run's mode (default numbers)\n"
            "  --order abab|abba          abab: A B in every repetition; abba: A B, B A, A B, ...\n"
            "  --keep-definitions         passed to hbg run\n"
            "  --outputs DIR              where the logs go (default outputs; made if missing); one\n"
            "                             hbg ab at a time: another using it is refused\n"
            "  --resume                   reuse existing logs whose [stamp] is the one this run writes\n"
            "  --threshold PCT, --alpha A, --plot FILE.svg, --format table|json|csv\n"
            "                             passed to hbg compare (--plot is checked before anything is\n"
            "                             built: not '-', nor a name of hbg ab's own files in OUTPUTS,\n"
            "                             bind_*; an existing FILE is replaced)\n"
            "  --build CMD                build a tree with CMD instead of cmake (run in the worktree)\n"
            "  --run CMD                  measure with CMD instead of hbg run (run in the worktree)\n"
            "  --run-timeout S            stop a run (and the trial) still going after S seconds\n"
            "                             (SIGTERM to its process group, SIGKILL 5 s later) and\n"
            "                             fail as for a failed run; default: no limit\n"
            "  -h, --help                 this text\n"
            "Everything after -- is passed to hbg run, except what would override hbg ab's own options:\n"
            "--rounds, --mode, --log and -o, in any spelling getopt takes (--ro, --mode=..., -oFILE).\n\n"
            "Default build: cmake -S WT -B WT/build -DCMAKE_BUILD_TYPE=Release -DHBG_TESTS=OFF\n"
            "-DHBG_INSTALL=OFF, then cmake --build WT/build -j <online CPUs> --target hbg_cli. A build\n"
            "is reused for the same tree and builder. Before a tree is built, hbg run is tried for one\n"
            "round on a tree built already, so that a command line it refuses stops hbg ab before the\n"
            "build. Without --run, the built `hbg version` is checked against the commit in the log\n"
            "names (a difference is a warning).\n"
            "Worktrees: $XDG_CACHE_HOME/hbg/ab/<repo>-<hash>/<full sha> (else ~/.cache/hbg/ab/...);\n"
            "WORKTREE's: <full sha>-dirty-<content hash>.\n"
            "Logs: OUTPUTS/bind_<case>_<mode>_<commit>_r<N>.log, written as LOG.part and renamed once\n"
            "the run exits 0 and the log is whole (its last line ended, no pass missing: else the run\n"
            "fails); hbg run's stdout goes to LOG.out. An existing log, LOG.part or LOG.out is\n"
            "refused; with --resume a log whose stamp matches is kept (and its LOG.out), and a missing\n"
            "one is run again (its LOG.part and LOG.out replaced); an empty or cut one is refused.\n\n"
            "--build and --run are /bin/sh -c templates, for any project. Placeholders, replaced\n"
            "shell-quoted: {worktree} the revision's worktree, {rev} its short commit (-dirty for\n"
            "WORKTREE), {log} the log, LOG.part (for --build: the build log). With --run, hbg writes the log's\n"
            "first line, `[stamp] <commit> env <VARS> <CMD as written>` (VARS: a leading\n"
            "`env VAR=value ...` of CMD), then appends CMD's stdout and stderr; --case and --mode\n"
            "then only name the logs. Without --run, the run is {worktree}/build/hbg run CASE.\n\n"
            "Exit status: hbg compare's: 0 no regression, 1 a regression past --threshold, 2 not\n"
            "comparable; 2 also for bad usage, a failed build or a failed run.\n");
}

/* A line of hbg ab's own on stderr, with the control bytes of what it
 * quotes (paths, revisions, specs) masked: one line, as long as it is
 * (the "compare these logs again" line quotes every log's path). */
static void vsay(const char *prefix, const char *fmt, va_list ap)
{
    va_list aq;
    va_copy(aq, ap);
    int len = vsnprintf(NULL, 0, fmt, ap);
    char small[1024], *msg = len >= 0 && (size_t)len < sizeof small ? small : malloc(len > 0 ? (size_t)len + 1 : 1);
    if (len < 0 || !msg) {
        fputs(prefix, stderr);
        vfprintf(stderr, fmt, aq); /* no room to mask it: as it is */
        va_end(aq);
        return;
    }
    vsnprintf(msg, (size_t)len + 1, fmt, aq);
    va_end(aq);
    bool nl = len && msg[len - 1] == '\n';
    if (nl)
        msg[len - 1] = '\0';
    fprintf(stderr, "%s%s%s", prefix, dg_sanitize(msg), nl ? "\n" : "");
    if (msg != small)
        free(msg);
}

/* fmt (ending in '\n') on stderr, masked. */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsay("", fmt, ap);
    va_end(ap);
}

/* A refusal before anything ran: "hbg ab: ..." on one line, exit 2. */
static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsay("hbg ab: ", fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 2;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* --- options ------------------------------------------------------------- */

/* Every number of hbg ab's options is written without a sign or a space,
 * whole or not: strtoul would take " 3" and "+3", strtod "+1" and "-0". */
static bool parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *out)
{
    char *end;
    if (!hbg_cli_digits(s))
        return false;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return false;
    *out = (unsigned)v;
    return true;
}

static bool parse_real(const char *s, double lo, double hi, bool open)
{
    char *end;
    if (!hbg_cli_decimal(s) || s[0] == '+' || s[0] == '-')
        return false;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v))
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
                                         "--run-timeout", NULL};
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
        return parse_real(v, 0, 1e6, false) ? 0
                                             : fail("--threshold expects a percentage from 0 to 1000000, got '%s'", v);
    case 'a':
        o->alpha = v;
        return parse_real(v, 0, 1, true) ? 0 : fail("--alpha expects a probability between 0 and 1 (exclusive), "
                                                    "got '%s'", v);
    case 'o': o->outputs = v; return *v ? 0 : fail("--outputs expects a directory, got ''");
    case 'p': o->plot = v; return *v ? 0 : fail("--plot expects a file name (FILE.svg), got ''");
    case 'b': o->build = v; return *v ? 0 : fail("--build expects a shell command, got ''");
    case 'R': o->run = v; return *v ? 0 : fail("--run expects a shell command, got ''");
    case 'T':
        o->run_timeout = v;
        o->run_limit_s = parse_real(v, 0, MAX_RUN_TIMEOUT_S, false) ? strtod(v, NULL) : 0;
        return o->run_limit_s > 0 ? 0 : fail("--run-timeout expects seconds, more than 0 and at most %d, got '%s'",
                                             MAX_RUN_TIMEOUT_S, v);
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
    o->outputs_lock = -1;
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
        {"run-timeout", required_argument, NULL, 'T'}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
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
        if (ch == '?' && hbg_cli_flag_value("hbg ab", opts, argv[optind - 1]))
            return 2;
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

/* Whether word, an argument for hbg run, can name its long option `name`:
 * `--X` or `--X=V` with X a non-empty prefix of name. That is every spelling
 * getopt_long takes for the option (its name, or a prefix that no other
 * option starts with: --ro, --mo), and also the prefixes it shares with
 * other options (--r with --ranks, --lo with --log-level), which hbg run
 * refuses as ambiguous anyway; refusing those as well needs no copy of hbg
 * run's option table, which would drift from it. A longer word, such as
 * --log-level, is another option. */
static bool names_option(const char *word, const char *name)
{
    if (strncmp(word, "--", 2))
        return false;
    size_t n = strcspn(word + 2, "=");
    return n > 0 && n <= strlen(name) && !strncmp(word + 2, name, n);
}

/* hbg ab names the logs and the rounds itself: ARGS must not override
 * what the names and the stamp say, however hbg run would spell it. */
static int check_args(const ab_opts *o)
{
    static const char *const owned[][2] = {{"rounds", "--rounds"}, {"mode", "--mode"}, {"log", "-o (the log names)"}};
    if (o->run && (o->nargs || o->keep_defs)) {
        say("hbg ab: warning: --run replaces hbg run, so --keep-definitions and the arguments after "
                        "-- are not used\n");
        return 0;
    }
    for (int i = 0; i < o->nargs; i++) {
        const char *a = o->args[i];
        /* -o LOG and -oLOG: hbg run's one short option with a value */
        if (!strncmp(a, "-o", 2))
            return fail("'%s' after -- would override hbg ab's own -o (the log names); use hbg ab's option", a);
        for (size_t w = 0; w < sizeof owned / sizeof *owned; w++) {
            if (!names_option(a, owned[w][0]))
                continue;
            if (strcspn(a + 2, "=") < strlen(owned[w][0]))
                return fail("'%s' after -- abbreviates hbg run's --%s, which would override hbg ab's own %s; use "
                            "hbg ab's option", a, owned[w][0], owned[w][1]);
            return fail("'%s' after -- would override hbg ab's own %s; use hbg ab's option", a, owned[w][1]);
        }
    }
    return 0;
}

/* --- revisions and log names --------------------------------------------- */

/* The absolute path of `path`, whose folder exists (the file need not),
 * into out; NULL when it cannot be resolved. */
static const char *abs_path(const char *path, char *out, size_t cap)
{
    char dir[AB_PATH], real[AB_PATH];
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    if (!*base || strlen(path) >= sizeof dir)
        return NULL;
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) + 1 : 1, slash ? path : ".");
    if (!realpath(dir, real) || (size_t)snprintf(out, cap, "%s/%s", real, base) >= cap)
        return NULL;
    return out;
}

static ab_builder builder_of(const ab_opts *o);

static int resolve_arm(const ab_opts *o, const ab_repo *r, ab_arm *arm)
{
    char err[2 * AB_PATH];
    ab_builder b = builder_of(o);
    if (strcmp(arm->spec, "WORKTREE")) {
        if (ab_resolve_commit(r, arm->spec, &arm->t, err, sizeof err) ||
            ab_tree_use_builder(r, &arm->t, &b, err, sizeof err))
            return fail("%s", err);
        return 0;
    }
    if (arm->label == 'A')
        return fail("WORKTREE (the uncommitted tree) can only be REV_B, the arm measured against REV_A");
    /* hbg ab's own outputs inside the tree are no change to measure: the
     * --plot of the README's `hbg ab main WORKTREE --plot ab.svg` would
     * otherwise make each run's tree a new one, built again. */
    char outs[AB_PATH], plot[AB_PATH];
    const char *skip[] = {realpath(o->outputs, outs),
                          o->plot && strcmp(o->plot, "-") ? abs_path(o->plot, plot, sizeof plot) : NULL};
    bool clean = false;
    if (ab_resolve_worktree(r, &arm->t, skip, 2, &clean, err, sizeof err) ||
        ab_tree_use_builder(r, &arm->t, &b, err, sizeof err))
        return fail("%s", err);
    if (clean)
        say("hbg ab: WORKTREE has no uncommitted changes: measuring HEAD (%s) itself\n", arm->t.rev);
    return 0;
}

static int resolve(const ab_opts *o, const ab_repo *r, ab_arm *a, ab_arm *b)
{
    if (resolve_arm(o, r, a) || resolve_arm(o, r, b))
        return 2;
    /* a clean WORKTREE is HEAD: pointing at WORKTREE would be no advice */
    if (!b->t.snapshot && !strcmp(a->t.sha, b->t.sha))
        return fail("REV_A '%s' and REV_B '%s' are the same commit %s, so both arms' logs would have the same "
                    "names (bind_%s_%s_%s_rN.log); %s", a->spec, b->spec, a->t.rev, o->case_name, o->mode,
                    a->t.rev,
                    strcmp(b->spec, "WORKTREE") ? "name two different commits, or WORKTREE for the uncommitted tree"
                                                : "WORKTREE has no uncommitted changes: change the tree, or name "
                                                  "two different commits");
    return 0;
}

static int name_logs(const ab_opts *o, ab_arm *arm)
{
    arm->logs = calloc(o->reps, sizeof *arm->logs);
    arm->reuse = calloc(o->reps, sizeof *arm->reuse);
    if (!arm->logs || !arm->reuse)
        return fail("out of memory");
    const char *sep = o->outputs[strlen(o->outputs) - 1] == '/' ? "" : "/";
    /* a folder named like an option (--outputs=--x): its logs start with
     * "./", so that hbg compare and the commands printed take them as
     * paths */
    const char *dot = o->outputs[0] == '-' ? "./" : "";
    for (unsigned i = 0; i < o->reps; i++)
        if (asprintf(&arm->logs[i], "%s%s%sbind_%s_%s_%s_r%u.log", dot, o->outputs, sep, o->case_name, o->mode,
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
    /* any spelling hbg run's getopt takes: --skip-dev, --log-l=debug */
    for (int i = 0; i < o->nargs; i++) {
        const char *a = o->args[i], *name = run_opts_long_name(a), *eq = strchr(a, '=');
        if (!name)
            continue;
        if (!strcmp(name, "skip-device-run"))
            sw[2] = true;
        else if (!strcmp(name, "log-level") && eq)
            hbg_level_parse(eq + 1, level);
        else if (!strcmp(name, "log-level") && i + 1 < o->nargs)
            hbg_level_parse(o->args[++i], level);
    }
}

/* The stamp `hbg run` writes (docs/run.md): every switch resolved, the
 * command without its artifact paths. */
static void run_stamp(const ab_opts *o, ab_arm *arm)
{
    bool sw[3];
    hbg_level level = HBG_LOG_TIMING;
    run_switches(o, sw, &level);
    /* the run's own words, spelled as hbg run spells them in its stamp
     * (--tasks=050 is stamped --tasks 50); the artifact paths it leaves
     * out are not given */
    char rounds[16];
    snprintf(rounds, sizeof rounds, "%u", o->rounds);
    char **words = calloc((size_t)o->nargs + 8, sizeof *words);
    static char cmd[8192];
    int n = 0;
    if (words) {
        const char *fixed[] = {"run", o->case_name, "--mode", o->mode, "--rounds", rounds};
        for (size_t f = 0; f < sizeof fixed / sizeof *fixed; f++)
            words[n++] = (char *)fixed[f];
        if (o->keep_defs)
            words[n++] = "--keep-definitions";
        for (int k = 0; k < o->nargs; k++)
            words[n++] = o->args[k];
        run_opts_stamp_command(n, words, cmd, sizeof cmd);
        free(words);
    } else {
        snprintf(cmd, sizeof cmd, "hbg run %s", o->case_name); /* out of memory: refused as another run's */
    }
    /* formatted as hbg run's hbg_log_stamp formats it */
    hbg_stamp st = {.commit = arm->t.rev, .breakdown = sw[0], .records = sw[1], .skip_device = sw[2],
                    .level = level, .command = cmd};
    static char line[8192 + 256];
    if (hbg_stamp_format(&st, line, sizeof line) == HBG_OK)
        ab_buf_fmt(&arm->stamp, "%s", line);
    else /* a stamp hbg run could not write either: no log matches it */
        ab_buf_fmt(&arm->stamp, "[stamp] %s (unwritable)", arm->t.rev);
}

/* The first line of a file, without its line end; false if unreadable.
 * Opened without waiting: a FIFO of that name would hold the open until
 * something writes it. */
static bool first_line(const char *path, char *out, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
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

/* Whether the log at path holds a bind-phase line: 1 yes, 0 no, -1 no
 * log that can be read (errno says why: ENOENT, none). The stamp line
 * is not one, though it may quote a --run template that names them.
 * *stamps (unless NULL) counts the [stamp] lines before the first. */
static int log_has_phases(const char *path, unsigned *stamps)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char *line = NULL;
    size_t cap = 0;
    int found = 0;
    unsigned n = 0;
    ssize_t len;
    while (!found && (len = getline(&line, &cap, f)) >= 0) {
        bool stamp = !strncmp(line, "[stamp]", 7);
        n += stamp;
        /* as the log reader tells one: "bind\tphase=" is one too */
        found = !stamp && lx_has_bind_marker(line, (size_t)len);
    }
    if (stamps)
        *stamps = n;
    int bad = ferror(f);
    free(line);
    fclose(f);
    if (bad)
        errno = EIO;
    return bad ? -1 : found;
}

/* Whether the log at path is whole: 1 yes; 0 no, why (WHY_CAP holds
 * it whole) says what is missing; -1 no log that can be read (errno says why: ENOENT,
 * none). An exit status of 0 does not show it: a --run command whose
 * writes failed (a full disk) may still exit 0, and leave a log cut in
 * the middle of a line, or short of the passes its stamp asks for, which
 * the log reader that hbg compare uses calls incomplete (passes.h). */
#define WHY_CAP (AB_PATH_X + 512) /* the path, the reader's reason (256) */
static int log_whole(const char *path, char *why, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat sb;
    char last = 0;
    if (fd < 0)
        return -1;
    ssize_t got = 0;
    if (fstat(fd, &sb) || (sb.st_size > 0 && (got = pread(fd, &last, 1, sb.st_size - 1)) < 0)) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    if (last != '\n') { /* got 0: it shrank since fstat, which no finished log does */
        close(fd);
        snprintf(why, cap, "%s",
                 !sb.st_size ? "empty"
                 : got       ? "cut: its last line has no line end (a write that failed?)"
                             : "cut: it shrank while it was read (something still writes it?)");
        return 0;
    }
    ps_log L;
    ps_options po = {0};
    char err[512];
    hbg_status st = ps_read_fd(&L, path, fd, &po, err, sizeof err);
    close(fd);
    int whole = st == HBG_OK && !L.incomplete_line;
    if (st != HBG_OK)
        snprintf(why, cap, "unreadable: %s", err);
    else if (!whole)
        snprintf(why, cap, "incomplete (%s:%zu: %s)", L.path, L.incomplete_line, L.incomplete);
    ps_free(&L);
    return whole;
}

/* A run writes its log as LOG.part and renames it LOG when it has exited
 * 0: an interrupted run (hbg ab stopped by Ctrl-C, the machine gone)
 * leaves a LOG.part, never a LOG that --resume would take for finished. */
static void part_of(const char *log, char *out, size_t cap)
{
    snprintf(out, cap, "%s.part", log);
}

/* --- the plan ------------------------------------------------------------- */

/* A WORKTREE arm's logs are stamped <HEAD>-dirty whatever the
 * uncommitted state, so beside them a file names the snapshot they came
 * from (its cache key): --resume keeps them only for that snapshot, and
 * never finishes one state's repetitions with another's. */
static void tree_file(const ab_opts *o, const ab_arm *arm, char *out, size_t cap)
{
    const char *sep = o->outputs[strlen(o->outputs) - 1] == '/' ? "" : "/";
    snprintf(out, cap, "%s%sbind_%s_%s_%s.tree", o->outputs, sep, o->case_name, o->mode, arm->t.rev);
}

static int resume_tree_check(const ab_opts *o, const ab_arm *arm)
{
    char path[AB_PATH_X], had[256];
    tree_file(o, arm, path, sizeof path);
    if (!first_line(path, had, sizeof had))
        return fail("--resume: the logs of %s %s (WORKTREE) have no record of the uncommitted state they were made "
                    "from (%s: %s), so they may come from another than the tree's now (%s): move them away",
                    arm->role, arm->t.rev, path, strerror(errno), arm->t.key);
    if (strcmp(had, arm->t.key))
        return fail("--resume: the logs of %s %s (WORKTREE) were made from another uncommitted state (%.200s, in "
                    "%s) than the tree's now (%s): finish them from that state, or move them away",
                    arm->role, arm->t.rev, had, path, arm->t.key);
    return 0;
}

/* Writes the tree file of a WORKTREE arm, replacing an earlier one. */
static int write_tree_file(const ab_opts *o, const ab_arm *arm)
{
    char path[AB_PATH_X], tmp[AB_PATH_X + 8];
    tree_file(o, arm, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.part", path);
    FILE *f = fopen(tmp, "w");
    bool ok = f && fprintf(f, "%s\n", arm->t.key) > 0;
    ok = (f && fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return fail("cannot write %s: %s", dg_shown(path), strerror(e));
    }
    return 0;
}

/* --resume: a log is kept only when its stamp is this run's. A byte
 * order mark before it (the log saved by an editor) is passed over, as
 * hbg compare, which reads the log next, passes it over. */
static int resume_check(const ab_arm *arm, unsigned i)
{
    struct stat sb;
    if (!stat(arm->logs[i], &sb) && !S_ISREG(sb.st_mode))
        return fail("--resume: %s is %s, not a log a run wrote: move it away and --resume runs its repetition "
                    "again",
                    arm->logs[i],
                    S_ISDIR(sb.st_mode)    ? "a folder"
                    : S_ISFIFO(sb.st_mode) ? "a FIFO"
                    : S_ISSOCK(sb.st_mode) ? "a socket"
                                           : "a device");
    /* Room for the stamp, a byte order mark, a CRLF and a byte more: a
     * longer first line then differs, however long the stamp is (a
     * --run template of kilobytes; a fixed 8 KiB cut this run's own). */
    size_t cap = arm->stamp.n + 7;
    char *line = malloc(cap);
    if (!line)
        return fail("out of memory");
    int rc = 0;
    if (!first_line(arm->logs[i], line, cap))
        rc = fail("--resume: cannot read %s: %s", dg_shown(arm->logs[i]), strerror(errno));
    else if (!line[0] && !stat(arm->logs[i], &sb) && sb.st_size == 0)
        /* No run of hbg ab's leaves one: its stamp is the first thing a
         * run writes, and a log is a LOG only once its run has ended
         * well. So it is not one to run again over either (a machine
         * that went down before the file's bytes were written?): it is
         * named, as a log of another run is. */
        rc = fail("--resume: %s is empty (a run that stopped before writing its stamp?), not a log a run "
                  "finished: move it away and --resume runs its repetition again",
                  arm->logs[i]);
    else if (strcmp(line + lx_bom_len(line, strlen(line)), ab_buf_cstr(&arm->stamp)))
        rc = fail("--resume: %s was written by another run: its first line is '%.300s', this run's stamp is "
                  "'%.300s'; move it away or pick another --outputs",
                  arm->logs[i], line, ab_buf_cstr(&arm->stamp));
    free(line);
    if (rc)
        return rc;
    /* A finished log hbg compare cannot read (an older hbg ab's) is no
     * repetition to keep. */
    if (log_has_phases(arm->logs[i], NULL) <= 0)
        return fail("--resume: %s has no bind-phase lines (\"bind phase=\"), so hbg compare could not read it; "
                    "move it away and --resume runs its repetition again", arm->logs[i]);
    /* nor one cut short (an older hbg ab's, which did not look) */
    char why[WHY_CAP];
    int whole = log_whole(arm->logs[i], why, sizeof why);
    if (whole <= 0)
        return fail("--resume: %s is %s%s; move it away and --resume runs its repetition again", arm->logs[i],
                    whole < 0 ? "unreadable: " : why, whole < 0 ? strerror(errno) : "");
    return 0;
}

/* Every log name, before anything runs. The default run also writes
 * LOG.out (hbg run's stdout and stderr): an existing one is refused like
 * a log, since the run would replace it. With --resume it goes with its
 * log: a kept log keeps its LOG.out (that run is not redone), and a run
 * that is redone replaces the LOG.out of its earlier attempt, as that
 * attempt's log is gone. */
static int check_logs(const ab_opts *o, ab_arm *arms)
{
    const char *first = NULL, *first_out = NULL, *first_part = NULL;
    unsigned existing = 0, outs = 0, parts = 0;
    struct stat sb;
    char outp[AB_PATH_X];
    for (int a = 0; a < 2; a++)
        for (unsigned i = 0; i < o->reps; i++) {
            snprintf(outp, sizeof outp, "%s.out", arms[a].logs[i]);
            if (!o->run && !o->resume && !lstat(outp, &sb)) {
                first_out = first_out ? first_out : arms[a].logs[i];
                outs++;
            }
            part_of(arms[a].logs[i], outp, sizeof outp);
            if (!o->resume && !lstat(outp, &sb)) {
                first_part = first_part ? first_part : arms[a].logs[i];
                parts++;
            }
            if (lstat(arms[a].logs[i], &sb))
                continue;
            if (!o->resume) {
                first = first ? first : arms[a].logs[i];
                existing++;
                continue;
            }
            if (resume_check(&arms[a], i))
                return 2;
            ab_stop_if_signalled(); /* thousands of logs may be read before the next wait */
            if (arms[a].t.snapshot && arms[a].to_run == o->reps && resume_tree_check(o, &arms[a]))
                return 2;
            arms[a].reuse[i] = true;
            arms[a].to_run--;
        }
    if (existing)
        return fail("%s exists (%u of this run's %u logs %s): nothing was run; pick another --outputs, or pass "
                    "--resume to reuse the logs whose [stamp] matches this run",
                    first, existing, 2 * o->reps, existing == 1 ? "does" : "do");
    if (parts)
        return fail("%s.part exists (%u of this run's %u partial logs, left by runs that did not finish, %s): "
                    "nothing was run; pass --resume to run those repetitions again, or move them away",
                    first_part, parts, 2 * o->reps, parts == 1 ? "does" : "do");
    if (outs)
        return fail("%s.out exists (%u of this run's %u LOG.out files, where hbg run's output goes, %s): nothing "
                    "was run; move it away or pick another --outputs (--resume would run its repetition again and "
                    "replace it)",
                    first_out, outs, 2 * o->reps, outs == 1 ? "does" : "do");
    return 0;
}

/* The --outputs folder's lock file: not a name hbg ab's logs take (bind_...). */
#define OUTPUTS_LOCK ".hbg-ab.lock"

/* An --outputs folder is one hbg ab's at a time: two in one folder would
 * remove or replace each other's logs (a --resume removes the LOG.part the
 * other is writing), and the names checked before the runs say nothing of
 * a run under way. Taken before anything there is removed or written; the
 * holder removes the file as it lets go (unlock_outputs), so the file
 * locked must still be the one of that name. Creating it also shows that
 * the folder takes files, before anything is built. */
static int lock_outputs(ab_opts *o)
{
    char path[AB_PATH_X];
    snprintf(path, sizeof path, "%s/" OUTPUTS_LOCK, o->outputs_abs);
    for (;;) {
        int fd = access(o->outputs_abs, W_OK | X_OK) ? -1 : ab_lock_open(path);
        if (fd < 0)
            return fail("cannot create files in the --outputs folder %s: %s", o->outputs, strerror(errno));
        long holder;
        if (!ab_lock_take(fd, &holder)) {
            close(fd);
            char pid[32] = "";
            if (holder > 0)
                snprintf(pid, sizeof pid, " (pid %ld)", holder);
            return fail("the --outputs folder %s is in use by another hbg ab%s: nothing was run; wait for it to "
                        "end, or pick another --outputs", o->outputs, pid);
        }
        struct stat held, named;
        if (!fstat(fd, &held) && !stat(path, &named) && held.st_dev == named.st_dev && held.st_ino == named.st_ino) {
            o->outputs_lock = fd;
            return 0;
        }
        close(fd); /* removed by the hbg ab that held it, as it let go */
    }
}

/* Once the runs are done: the logs are finished, and the comparison only
 * reads them. A lock file left by an hbg ab that was stopped is harmless:
 * its lock died with it. */
static void unlock_outputs(ab_opts *o)
{
    if (o->outputs_lock < 0)
        return;
    char path[AB_PATH_X];
    snprintf(path, sizeof path, "%s/" OUTPUTS_LOCK, o->outputs_abs);
    unlink(path);
    close(o->outputs_lock);
    o->outputs_lock = -1;
}

static int make_outputs(ab_opts *o)
{
    struct stat sb;
    /* a file in the folder's place: ab_mkdirs leaves errno at EEXIST,
     * which would say the folder exists */
    int e = ab_mkdirs(o->outputs) || stat(o->outputs, &sb) ? errno : S_ISDIR(sb.st_mode) ? 0 : ENOTDIR;
    if (e)
        return fail("cannot create the --outputs folder %s: %s", o->outputs, strerror(e));
    if (!realpath(o->outputs, o->outputs_abs))
        return fail("cannot resolve %s: %s", o->outputs, strerror(errno));
    return lock_outputs(o);
}

/* Whether the plot, in the folder dir (which exists), takes a name of hbg
 * ab's own files in the --outputs folder: the logs, their LOG.part and
 * LOG.out, a WORKTREE arm's .tree record (and its .part), of this run or
 * another (a case, mode or commit of an earlier one), all "bind_...", and
 * the folder's lock file. By name, as they may not exist yet; the folder
 * resolved, whatever links or .. name it. */
static bool plot_over_own(const ab_opts *o, const char *dir, const char *base)
{
    char abs[AB_PATH];
    return realpath(dir, abs) && !strcmp(abs, o->outputs_abs) &&
           (!strncmp(base, "bind_", 5) || !strcmp(base, OUTPUTS_LOCK));
}

/* --plot: hbg compare writes it after every run, so a name it cannot write
 * would cost the whole measurement; it is checked before anything is
 * built, once the --outputs folder (where it may go) is made. Like every
 * command's output file (cli/outfile.h), an existing file is replaced,
 * written beside it and renamed over it: the folder must exist and take a
 * new file. A name that is not a regular file (/dev/null) is written in
 * place. '-' (stdout, where the verdict goes) is refused, and so is a
 * name of hbg ab's own files in the --outputs folder, which the plot
 * would replace (hbg compare refuses a log it reads, not the others). */
static int check_plot(const ab_opts *o)
{
    if (!o->plot)
        return 0;
    int fd = hbg_outfile_fd_named(o->plot);
    if (hbg_outfile_is_stdout(o->plot))
        return fail("--plot expects a file name, not '%s': the plot cannot share standard output with the "
                    "comparison",
                    dg_shown(o->plot));
    /* another descriptor of hbg ab's: hbg compare writes through it, and
     * refuses it closed or read-only; so it is checked now, as compare will */
    if (fd >= 0)
        return hbg_outfile_probe("hbg ab", o->plot) ? 2 : 0;
    struct stat sb;
    if (!stat(o->plot, &sb) && S_ISDIR(sb.st_mode))
        return fail("--plot %s is a folder; name a file (FILE.svg)", o->plot);
    if (!stat(o->plot, &sb) && !S_ISREG(sb.st_mode))
        return access(o->plot, W_OK) ? fail("cannot write the --plot file %s: %s", o->plot, strerror(errno)) : 0;
    const char *slash = strrchr(o->plot, '/');
    char dir[AB_PATH];
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else
        snprintf(dir, sizeof dir, "%.*s", slash == o->plot ? 1 : (int)(slash - o->plot), o->plot);
    if (stat(dir, &sb))
        return fail("cannot write the --plot file %s: %s: %s", o->plot, dir, strerror(errno));
    if (!S_ISDIR(sb.st_mode))
        return fail("cannot write the --plot file %s: %s is not a folder", o->plot, dir);
    if (access(dir, W_OK | X_OK))
        return fail("cannot write the --plot file %s: cannot create files in %s: %s", o->plot, dir,
                    strerror(errno));
    if (plot_over_own(o, dir, slash ? slash + 1 : o->plot))
        return fail("--plot %s takes a name of hbg ab's own files in the --outputs folder (bind_...: the logs, "
                    "LOG.part, LOG.out and .tree files; " OUTPUTS_LOCK "); name another file", o->plot);
    return 0;
}

/* --- builds ---------------------------------------------------------------- */

static ab_builder builder_of(const ab_opts *o)
{
    long np = sysconf(_SC_NPROCESSORS_ONLN);
    return (ab_builder){.tmpl = o->build, .jobs = np > 0 ? (unsigned)np : 1};
}

/* The built hbg should report the commit the log names carry, and at
 * once: `hbg version` prints a line, and one that hangs held hbg ab for
 * ever (its runs would hang too). */
static int check_version(const ab_arm *arm)
{
    const char *argv[] = {arm->bin, "version", NULL};
    ab_buf out = {0};
    char want[80];
    snprintf(want, sizeof want, "hbg %s\n", arm->t.rev);
    int st = ab_capture(argv, NULL, &out, -1, VERSION_LIMIT_S);
    if (st == 0 && strcmp(ab_buf_cstr(&out), want))
        say("hbg ab: warning: the hbg built for %s '%s' reports '%.*s', not %s: its stamps will not "
                        "match the log names\n", arm->role, arm->spec, (int)strcspn(ab_buf_cstr(&out), "\n"),
                ab_buf_cstr(&out), arm->t.rev);
    ab_buf_free(&out);
    if (st == AB_TIMED_OUT)
        return fail("%s '%s': %s version did not end within %d s and was stopped: an hbg that hangs cannot be "
                    "measured",
                    arm->role, arm->spec, arm->bin, VERSION_LIMIT_S);
    return 0;
}

static int build_arm(const ab_opts *o, const ab_repo *r, ab_arm *arm)
{
    ab_builder b = builder_of(o);
    char err[2 * AB_PATH];
    if (ab_built(&arm->t, &b)) {
        say("hbg ab: %s %s (%s): reusing the build in %s\n", arm->role, arm->t.rev, arm->spec,
                arm->t.dir);
    } else {
        say("hbg ab: building %s %s (%s) in %s; output in %s\n", arm->role, arm->t.rev, arm->spec,
                arm->t.dir, arm->t.log);
        int rc = ab_build(r, &arm->t, &b, err, sizeof err);
        if (rc) {
            say("hbg ab: building %s '%s' (%s) failed: %s; the full log is %s; its last %d lines:\n",
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
    return check_version(arm);
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

typedef struct run_ticker {
    ab_progress *p;
    unsigned rep, reps;
    const ab_arm *arm;
    double started, last;
} run_ticker;

static void run_tick(void *ctx)
{
    run_ticker *k = ctx;
    double t = now_s();
    if (t - k->last >= 0.5) {
        k->last = t;
        progress_line(k->p, k->rep, k->reps, k->arm, k->started);
    }
}

/* Waits for a run; on a terminal the progress line ticks meanwhile. A
 * --run template is watched for a stop on the terminal (ab_wait_polled);
 * hbg run itself never reads it, and its runs are not disturbed by the
 * look at /proc that the watch takes each second. */
static int wait_run(const ab_opts *o, pid_t pid, ab_progress *p, unsigned rep, const ab_arm *arm, double started)
{
    bool watch = o->run != NULL;
    if (!watch && !p->tty && !o->run_limit_s)
        return ab_wait(pid, true);
    run_ticker k = {p, rep, o->reps, arm, started, 0};
    return ab_wait_polled(pid, watch, p->tty ? run_tick : NULL, &k, o->run_limit_s);
}

/* ab_status_text, with --run-timeout's value for a run it stopped. */
static const char *run_status_text(const ab_opts *o, int st, char *buf, size_t cap)
{
    if (st == AB_TIMED_OUT) {
        snprintf(buf, cap, "ran past --run-timeout %s s and was stopped", o->run_timeout);
        return buf;
    }
    return ab_status_text(st, buf, cap);
}

/* hbg run's command line: BIN run CASE --mode M --rounds N -o LOG
 * [--out-dir DIR] [--keep-definitions] [ARGS] [--out-dir DIR], the folder
 * before ARGS (a run's: ARGS may name another) or after them (the trial's,
 * which must stay in its scratch folder). NULL when out of memory. */
static const char **run_argv(const ab_opts *o, const char *bin, const char *rounds, const char *log,
                             const char *out_dir, bool dir_last)
{
    const char **argv = calloc((size_t)o->nargs + 16, sizeof *argv);
    if (!argv)
        return NULL;
    int k = 0;
    const char *fixed[] = {bin, "run", o->case_name, "--mode", o->mode, "--rounds", rounds, "-o", log};
    for (size_t f = 0; f < sizeof fixed / sizeof *fixed; f++)
        argv[k++] = fixed[f];
    if (!dir_last)
        argv[k++] = "--out-dir", argv[k++] = out_dir;
    if (o->keep_defs)
        argv[k++] = "--keep-definitions";
    for (int a = 0; a < o->nargs; a++)
        argv[k++] = o->args[a];
    if (dir_last)
        argv[k++] = "--out-dir", argv[k++] = out_dir;
    return argv;
}

/* hbg run of the arm's own build; its stdout and stderr go to LOG.out,
 * which check_logs found absent (or, with --resume, left to be replaced). */
static pid_t start_default(const ab_opts *o, const ab_arm *arm, unsigned i, char *outp, size_t cap)
{
    char rounds[16];
    snprintf(rounds, sizeof rounds, "%u", o->rounds);
    char part[AB_PATH_X + 8];
    part_of(arm->logs[i], part, sizeof part);
    snprintf(outp, cap, "%s.out", arm->logs[i]);
    const char **argv = run_argv(o, arm->bin, rounds, part, o->outputs, false);
    if (!argv)
        return -1;
    int fd = open(outp, O_WRONLY | O_CREAT | (o->resume ? O_TRUNC : O_EXCL) | O_CLOEXEC, 0644);
    pid_t pid = fd < 0 ? -1 : ab_start(argv, NULL, fd, fd);
    if (fd >= 0)
        close(fd);
    free(argv);
    return pid;
}

/* The trial. A command line that hbg run refuses (a bad value after --,
 * an unknown option, a bad switch in the environment) would otherwise be
 * found by the first repetition, after every tree is built. hbg run has no
 * parse-only mode, and hbg ab's own copy of its parser would judge the
 * options of the hbg that runs ab, not of the revisions measured (a
 * WORKTREE may add one), so the trial is the real thing: the run's own
 * command line on an arm's built hbg, with one round, its log and
 * artifacts in a scratch folder that is removed. It costs one pass, and is
 * made only when a build is still to come (build_all). */
/* The pid in a trial folder's name exactly as trial_run makes it,
 * "trial-PID-XXXXXX" (PID in plain decimal, mkdtemp's six characters);
 * 0 for any other name. */
static long trial_pid(const char *name)
{
    if (strncmp(name, "trial-", 6) || name[6] < '1' || name[6] > '9')
        return 0;
    const char *p = name + 6;
    long pid = 0;
    for (; *p >= '0' && *p <= '9'; p++)
        if ((pid = pid * 10 + (*p - '0')) > INT_MAX)
            return 0;
    if (*p != '-' || strlen(p + 1) != 6)
        return 0;
    for (const char *q = p + 1; *q; q++)
        if (!((*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z')))
            return 0;
    return pid;
}

/* A trial holds a write lock on the file "lock" in its folder while it
 * lives; the kernel drops it when the process ends, however it ends. The
 * pid in the folder's name is not enough where the cache is shared with
 * processes this one cannot see: a home directory on NFS used from two
 * machines, or mounted into two containers, each with its own pids. */
#define TRIAL_LOCK "lock"
/* A trial folder without a lock file younger than this may be one that a
 * trial has just made and not yet locked; older, one made by an hbg ab
 * from before the lock. */
#define TRIAL_YOUNG_S 60

/* Takes the write lock of trial folder `dir`'s lock file; the file
 * descriptor holding it, or -1 (errno says why: ENOENT no file, EAGAIN
 * or EACCES held by a live trial, anything else no locks here). With
 * `create` the file is made under another name, locked, then renamed
 * into place (the lock is the file's, whatever its name), so that no
 * sweep ever finds it there unlocked; where locks do not work it is not
 * left there at all. */
static int trial_lock(const char *dir, bool create)
{
    char path[AB_PATH_X + 8], fresh[AB_PATH_X + 16];
    if (snprintf(path, sizeof path, "%s/" TRIAL_LOCK, dir) >= (int)sizeof path ||
        snprintf(fresh, sizeof fresh, "%s/" TRIAL_LOCK ".new", dir) >= (int)sizeof fresh) {
        errno = ENAMETOOLONG;
        return -1;
    }
    const char *name = create ? fresh : path;
    int fd = open(name, O_RDWR | O_CLOEXEC | O_NOFOLLOW | (create ? O_CREAT | O_EXCL : 0), 0644);
    if (fd < 0)
        return -1;
    struct flock l = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    if (fcntl(fd, F_SETLK, &l) != 0 || (create && rename(fresh, path) != 0)) {
        int e = errno;
        if (create)
            unlink(fresh);
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

/* The scratch folders of trials whose hbg ab is gone: one interrupted
 * during its trial (Ctrl-C) could not remove its own. A folder is left
 * alone while its process is alive here (by the pid in its name) or
 * anywhere (by its lock), and, without a lock file, while it is young.
 * Where the file system takes no locks, the pid alone decides. */
static void sweep_dead_trials(const char *cache)
{
    DIR *d = opendir(cache);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        long pid = trial_pid(e->d_name);
        if (pid <= 0 || kill((pid_t)pid, 0) == 0 || errno == EPERM) /* alive (perhaps another user's) */
            continue;
        char path[AB_PATH_X];
        struct stat st;
        if (snprintf(path, sizeof path, "%s/%s", cache, e->d_name) >= (int)sizeof path || lstat(path, &st) != 0 ||
            !S_ISDIR(st.st_mode))
            continue;
        int fd = trial_lock(path, false);
        if (fd < 0 && (errno == EAGAIN || errno == EACCES ||
                       (errno == ENOENT && time(NULL) - st.st_mtime < TRIAL_YOUNG_S)))
            continue;
        ab_remove_tree(path);
        if (fd >= 0)
            close(fd);
    }
    closedir(d);
}

static int trial_run(const ab_opts *o, const ab_repo *r, const ab_arm *arm, const ab_arm *next)
{
    char dir[AB_PATH_X], log[AB_PATH_X + 16], outp[AB_PATH_X + 32];
    sweep_dead_trials(r->cache);
    snprintf(dir, sizeof dir, "%s/trial-%ld-XXXXXX", r->cache, (long)getpid());
    if (ab_mkdirs(r->cache) || !mkdtemp(dir))
        return 0; /* no scratch folder: the first repetition is the trial */
    int lock = trial_lock(dir, true); /* without it (a file system with no locks) the pid alone */
    snprintf(log, sizeof log, "%s/trial.log", dir);
    snprintf(outp, sizeof outp, "%s.out", log);
    const char **argv = run_argv(o, arm->bin, "1", log, dir, true);
    int fd = argv ? open(outp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644) : -1;
    pid_t pid = fd < 0 ? 0 : ab_start(argv, NULL, fd, fd);
    int st = pid == 0 ? 0 : pid < 0 ? -1 : ab_wait_polled(pid, false, NULL, NULL, o->run_limit_s);
    if (fd >= 0)
        close(fd);
    free(argv);
    int rc = 0;
    int phases = st ? 1 : log_has_phases(log, NULL), e = errno;
    if (st) {
        char why[224], line[512] = "";
        run_status_text(o, st, why, sizeof why);
        bool said = ab_last_line(outp, "hbg run: ", line, sizeof line);
        rc = fail("%s %s (%s): a 1-round trial of hbg run failed, so %s was not built and nothing was measured: "
                  "%s%s%s%s", arm->role, arm->t.rev, arm->spec, next->role, why, said ? ": '" : "", line,
                  said ? "'" : "");
    } else if (phases <= 0) {
        /* Exit 0 is not enough: every repetition must leave a log that
         * hbg compare can read, or the builds and runs are for nothing. */
        rc = fail("%s %s (%s): a 1-round trial of hbg run %s%s, so %s was not built and nothing was measured",
                  arm->role, arm->t.rev, arm->spec,
                  phases == 0 ? "made a log with no bind-phase lines (\"bind phase=\"; an argument after -- that "
                                "turns them off, such as --log-level above timing?)"
                  : e == ENOENT ? "exited 0 but made no log (an argument after -- that writes none, such as --help?)"
                                : "made a log that cannot be read: ",
                  phases < 0 && e != ENOENT ? strerror(e) : "", next->role);
    }
    ab_remove_tree(dir);
    if (lock >= 0)
        close(lock);
    return rc;
}

/* Builds (or reuses) the trees that have runs to do: those built already
 * first, and before the first one that must be built, the trial on an hbg
 * that is ready. A command line hbg run refuses is then found before any
 * build when one tree was built already, and after the first build rather
 * than both when none was. With every tree built there is no trial: the
 * first repetition comes as soon. */
static int build_all(const ab_opts *o, const ab_repo *r, ab_arm *arms)
{
    ab_builder b = builder_of(o);
    bool ready[2] = {ab_built(&arms[0].t, &b), ab_built(&arms[1].t, &b)};
    const ab_arm *built = NULL; /* an arm whose hbg can run */
    bool tried = o->run != NULL; /* a --run template has no command line to try */
    for (int pass = 0; pass < 2; pass++)
        for (int a = 0; a < 2; a++) {
            if (!arms[a].to_run || ready[a] != (pass == 0))
                continue;
            if (!ready[a] && built && !tried) {
                if (trial_run(o, r, built, &arms[a]))
                    return 2;
                tried = true;
            }
            if (build_arm(o, r, &arms[a]))
                return 2;
            built = &arms[a];
        }
    return 0;
}

/* --run: the stamp first, then the template's output, in the worktree. */
static pid_t start_template(const ab_opts *o, const ab_arm *arm, unsigned i)
{
    char *abs = NULL, part[AB_PATH_X + 8];
    part_of(arm->logs[i], part, sizeof part);
    const char *base = strrchr(part, '/');
    if (asprintf(&abs, "%s/%s", o->outputs_abs, base ? base + 1 : part) < 0)
        return -1;
    int fd = open(part, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
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
    char why[224];
    run_status_text(o, st, why, sizeof why);
    struct stat sb;
    char part[AB_PATH_X + 8];
    part_of(arm->logs[i], part, sizeof part);
    if (!lstat(part, &sb)) {
        say("hbg ab: rep %u/%u %c %s (%s '%s') failed: %s %s; the partial log stays at %s (--resume "
                        "runs this repetition again); %s ends:\n",
                i + 1, o->reps, arm->label, arm->t.rev, arm->role, arm->spec, o->run ? "--run" : "hbg run", why,
                part, outp);
    } else {
        /* hbg run refused before it made the log (a usage error, a bad
         * switch): its reason is a line of LOG.out */
        char line[512];
        bool said = ab_last_line(outp, "hbg run: ", line, sizeof line);
        say("hbg ab: rep %u/%u %c %s (%s '%s') failed: %s %s%s%s%s; it made no log; its output is in "
                        "%s, which ends:\n",
                i + 1, o->reps, arm->label, arm->t.rev, arm->role, arm->spec, o->run ? "--run" : "hbg run", why,
                said ? ": '" : "", said ? line : "", said ? "'" : "", outp);
    }
    ab_print_tail(stderr, outp, TAIL_LINES);
    return 2;
}

/* LOG.part becomes LOG, without replacing a LOG made meanwhile (a link
 * refuses an existing name, a rename would not); where the file system
 * makes no links, a rename. 0, or -1 with errno. */
static int finish_log(const char *part, const char *log)
{
    if (link(part, log) == 0)
        return unlink(part);
    if (errno == EEXIST || errno == ENOENT)
        return -1;
    return rename(part, log);
}

/* One arm, one repetition. */
static int run_one(const ab_opts *o, const ab_arm *arm, unsigned i, ab_progress *p)
{
    const char *name = strrchr(arm->logs[i], '/') ? strrchr(arm->logs[i], '/') + 1 : arm->logs[i];
    if (arm->reuse[i]) {
        if (!p->tty)
            say("hbg ab: rep %u/%u %c %s: %s (reused)\n", i + 1, o->reps, arm->label, arm->t.rev, name);
        return 0;
    }
    char outp[AB_PATH_X + 8], part[AB_PATH_X + 8];
    part_of(arm->logs[i], part, sizeof part);
    snprintf(outp, sizeof outp, "%s", part); /* --run: the output goes to the log */
    /* --resume: an earlier attempt's partial log goes (check_logs
     * refused one without it) */
    if (o->resume && unlink(part) && errno != ENOENT)
        return fail("rep %u/%u %c %s: cannot remove %s: %s", i + 1, o->reps, arm->label, arm->t.rev, part,
                    strerror(errno));
    double t = now_s();
    if (!p->done && p->t0 == 0)
        p->t0 = t;
    pid_t pid = o->run ? start_template(o, arm, i) : start_default(o, arm, i, outp, sizeof outp);
    if (pid < 0)
        return fail("rep %u/%u %c %s: cannot start the run (%s): %s", i + 1, o->reps, arm->label, arm->t.rev,
                    outp, strerror(errno));
    int st = wait_run(o, pid, p, i + 1, arm, t);
    double dt = now_s() - t;
    p->spent += dt;
    p->done++;
    if (st != 0) {
        if (p->line)
            fputc('\n', stderr), p->line = false;
        return run_failed(o, arm, i, st, outp);
    }
    /* Each arm's first run's log, read as the trial's is (there may have
     * been no trial, and the arms are two builds): one hbg compare cannot
     * read means every other of the arm would be the same, and the rest
     * of the runs for nothing. Read before it is finished, it stays a
     * partial log that --resume runs again. */
    unsigned stamps = 0;
    bool *read = &p->read[arm->label == 'B'];
    int phases = !*read ? log_has_phases(part, &stamps) : 1, e = errno;
    *read = true;
    if (phases == 0 || (phases < 0 && e != ENOENT) || stamps > 1) {
        if (p->line)
            fputc('\n', stderr), p->line = false;
        if (stamps > 1)
            return fail("rep %u/%u %c %s: the run's log holds a second [stamp] line, which hbg compare refuses as "
                        "two runs mixed: the --run command wrote one of its own (an hbg run? hbg ab's default run, "
                        "without --run, measures hbg run, its options after --): the other runs were not made, and "
                        "it stays at %s (--resume runs it again)",
                        i + 1, o->reps, arm->label, arm->t.rev, part);
        if (phases < 0)
            return fail("rep %u/%u %c %s: the run exited 0 but its log %s cannot be read: %s", i + 1, o->reps,
                        arm->label, arm->t.rev, part, strerror(e));
        return fail("rep %u/%u %c %s: the run exited 0 but its log has no bind-phase lines (\"bind phase=\"; %s), so "
                    "hbg compare could read none: the other runs were not made, and it stays at %s (--resume runs it "
                    "again)",
                    i + 1, o->reps, arm->label, arm->t.rev,
                    o->run ? "does the --run command turn HBG_BIND_BREAKDOWN (or SIMPLER_HBG_BIND_BREAKDOWN_ENABLE) "
                             "on, at HBG_LOG_LEVEL timing or below?"
                           : "an argument after -- that turns them off, such as --log-level above timing?",
                    part);
    }
    char why[WHY_CAP];
    int whole = log_whole(part, why, sizeof why);
    e = errno;
    if (whole == 0 || (whole < 0 && e != ENOENT)) { /* none: said below */
        if (p->line)
            fputc('\n', stderr), p->line = false;
        return fail("rep %u/%u %c %s: the run exited 0 but its log is %s%s: the other runs were not made, and it "
                    "stays at %s (--resume runs it again)",
                    i + 1, o->reps, arm->label, arm->t.rev, whole < 0 ? "unreadable: " : why,
                    whole < 0 ? strerror(e) : "", part);
    }
    if (finish_log(part, arm->logs[i]) != 0) {
        if (p->line)
            fputc('\n', stderr), p->line = false;
        bool sys = errno != EEXIST && errno != ENOENT;
        const char *why = errno == EEXIST ? "was kept as it is: the log exists, made meanwhile"
                          : sys ? strerror(errno)
                          : o->run ? "was not made (does the --run command write {log}?)"
                                   : "was not made (an argument after -- that writes none, such as --help?)";
        return fail("rep %u/%u %c %s: the run exited 0 but its log %s%s%s", i + 1, o->reps, arm->label, arm->t.rev,
                    part, sys ? ": " : " ", why);
    }
    if (!p->tty)
        say("hbg ab: rep %u/%u %c %s: %s (%.1f s)\n", i + 1, o->reps, arm->label, arm->t.rev, name, dt);
    return 0;
}

/* The arms interleaved: abab runs A then B in every repetition, abba
 * alternates which goes first (A B, B A, A B, ...). */
static int run_all(const ab_opts *o, ab_arm *arms)
{
    ab_progress p = {.tty = isatty(STDERR_FILENO) == 1, .total = arms[0].to_run + arms[1].to_run};
    for (unsigned i = 0; i < o->reps; i++) {
        bool swap = !strcmp(o->order, "abba") && i % 2 == 1;
        for (int k = 0; k < 2; k++) {
            /* one that came while the last run's log was read: no run is
             * started only to be stopped */
            ab_stop_if_signalled();
            if (run_one(o, &arms[swap ? 1 - k : k], i, &p))
                return 2;
        }
    }
    if (p.tty && p.done)
        fprintf(stderr, "\rhbg ab: %u run%s in %.1f s\033[K\n", p.done, p.done == 1 ? "" : "s", p.spent);
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
    say("hbg ab: to compare these logs again: %s\n", ab_buf_cstr(&line));
    ab_buf_free(&line);
    fflush(NULL);
    optind = 1;
    int rc = hbg_cmd_compare_as("hbg ab", (int)n, argv);
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

/* What the run will be: revisions, log names, stamps. */
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
    return 0;
}

/* Said before the runs, when there is still time to stop and ask for
 * more: fewer repetitions than the sign test needs leave the verdict to
 * a t-test of their deltas, and one repetition to none (docs/compare.md). */
static void note_few_reps(const ab_opts *o)
{
    double alpha = o->alpha ? strtod(o->alpha, NULL) : CP_ALPHA_DEFAULT;
    size_t need = cp_reps_needed(alpha);
    if (o->reps >= need)
        return;
    if (o->reps == 1)
        fprintf(stderr, "hbg ab: note: one repetition backs no verdict (it cannot tell an effect from the levels "
                        "its two arms happen to run at); the tables will show the deltas. --reps %zu or more for a "
                        "verdict at alpha = %g\n", need, alpha);
    else
        fprintf(stderr, "hbg ab: note: %u repetitions are too few for the sign test at alpha = %g; a verdict will "
                        "also need a t-test of their deltas, which misses small effects. --reps %zu or more for "
                        "the sign test\n", o->reps, alpha, need);
}

int hbg_cmd_ab(int argc, char **argv)
{
    ab_opts o;
    int rc = parse(argc, argv, &o);
    if (rc != 1)
        return rc;
    if (check_args(&o))
        return 2;
    ab_catch_signals();
    ab_repo repo;
    ab_arm arms[2] = {{.label = 'A', .role = "REV_A", .spec = o.rev_a},
                      {.label = 'B', .role = "REV_B", .spec = o.rev_b}};
    rc = plan(&o, &repo, arms);
    if (!rc)
        rc = make_outputs(&o);
    if (!rc)
        rc = check_logs(&o, arms);
    for (int a = 0; a < 2 && !rc; a++)
        if (arms[a].t.snapshot && arms[a].to_run)
            rc = write_tree_file(&o, &arms[a]) ? 2 : 0;
    if (!rc)
        rc = check_plot(&o);
    if (!rc)
        rc = build_all(&o, &repo, arms);
    if (!rc) {
        note_few_reps(&o);
        rc = run_all(&o, arms);
    }
    unlock_outputs(&o);
    /* The comparison runs in-process, with no child to pass a signal to:
     * one that comes during it ends hbg ab at once, by its default action
     * (a caught one would only interrupt a read or the plot's write). Put
     * back before the check, so that one that came just before is seen. */
    stopsig_default();
    ab_stop_if_signalled(); /* one that came after the last child */
    if (!rc)
        rc = compare(&o, arms);
    arms_free(&o, arms);
    return rc;
}
