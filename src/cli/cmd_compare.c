/* hbg compare: an A/B verdict between two arms' bind logs, repetition by
 * repetition. The statistics are tools/compare.c's; this file reads the
 * options and prints. Documentation: docs/compare.md. Exit: 0 no
 * regression, 1 slower past --threshold, 2 usage or inputs that cannot be
 * compared. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/longopt.h"
#include "tools/diag.h"
#include "cli/outfile.h"
#include "tools/compare.h"
#include "tools/jw.h"
#include "tools/svgplot.h"
#include "tools/text.h"
#include "util/printable.h"

enum { FMT_TABLE, FMT_JSON, FMT_CSV };

/* The command named in diagnostics: "hbg compare", or the command that
 * runs it in-process on logs of its own (hbg ab), so that a plot or
 * stdout that cannot be written is said by the command the user ran. */
static const char *who = "hbg compare";

__attribute__((format(printf, 1, 2))) static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", who);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}

typedef struct cmp_args {
    const char **base, **measure;
    size_t nbase, nmeasure;
    cp_options opt;
    int fmt;
    const char *plot;
} cmp_args;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: hbg compare --base LOG... --measure LOG... [options]\n\n"
            "Compares two arms of an A/B measurement of bind. The i-th base log and the i-th\n"
            "measure log are repetition i. Each log is read as `hbg phases` reads it (either\n"
            "runtime's grammar); its figure is the minimum over its warm passes of the\n"
            "per-pass control-plane sum. The first output line is the verdict:\n"
            "  contended \xe2\x80\x94 rerun  the control segment moved, or the arms differ but a\n"
            "                     repetition disagrees in sign\n"
            "  slower / faster    one-sided Mann-Whitney over every warm per-pass sum clears\n"
            "                     --alpha, every repetition agrees in sign, and the effect\n"
            "                     (Hodges-Lehmann shift, 95 %% CI) exceeds the noise floor: the\n"
            "                     control's largest |relative delta|, or, for a control under\n"
            "                     1 us, the range of the repetitions' relative deltas (one\n"
            "                     repetition has none: no floor, no verdict); with fewer\n"
            "                     repetitions than the sign test needs to reach --alpha (5\n"
            "                     at 0.05), also a t-test of the repetitions' deltas (one\n"
            "                     repetition backs no verdict)\n"
            "  no difference      otherwise\n"
            "then the flags (minimum and median moving apart, a lower minimum with a wider\n"
            "range, exact figures that differ), and per repetition the minima, medians and\n"
            "deltas of the total and of every segment. Logs must be comparable: stamps that\n"
            "differ in nothing but the commit (options in any order; -o/--log, --out-dir,\n"
            "--time-limit and --peer-timeout aside, and hbg run's --mode, --skip-device-run\n"
            "and --log-level where the stamp gives the switches they set), one commit per\n"
            "arm, the same segments and ranks, a warm pass each, and no file given twice (a\n"
            "link or another path to it included). Documentation: docs/compare.md.\n\n"
            "  --base LOG...        the base arm's logs, one per repetition ('-': stdin, once)\n"
            "  --measure LOG...     the measure arm's logs, as many\n"
            "  --                   every word after it is a log of the arm named last (a log\n"
            "                       whose name starts with --)\n"
            "  --control SEG        the untouched segment that witnesses noise (default runtime_init)\n"
            "  --alpha A            significance of the tests, 0 < A < 1 (default 0.05)\n"
            "  --threshold PCT      exit 1 when slower and the interval's lower bound exceeds\n"
            "                       PCT %% of the base minimum (default 2)\n"
            "  --format F           table (default), json or csv\n"
            "  --plot FILE.svg      also draw each repetition's per-pass sums as an SVG strip plot\n"
            "                       (a file: never '-', never one of the logs)\n"
            "  --allow-unstamped    compare logs without a [stamp] line (said on every output)\n"
            "  --allow-incomplete   compare logs that say they are incomplete: a run stopped by a\n"
            "                       signal or its --time-limit, or short of its stamp's --rounds\n"
            "                       (said on every output)\n"
            "  -h, --help           this text\n\n"
            "exit status: 0 no regression past the threshold, 1 slower past it, 2 usage error or\n"
            "logs that cannot be compared (the message names the two logs and what differs)\n");
}

/* "--name=value" or "--name value": the value, advancing *i; NULL when missing. */
static const char *opt_value(int argc, char **argv, int *i, const char *name)
{
    size_t n = strlen(name);
    const char *a = argv[*i];
    if (a[n] == '=')
        return a + n + 1;
    if (*i + 1 < argc)
        return argv[++*i];
    return NULL;
}

static bool is_opt(const char *a, const char *name)
{
    size_t n = strlen(name);
    return strncmp(a, name, n) == 0 && (a[n] == 0 || a[n] == '=');
}

/* The name of the option that takes no value which s gives one
 * (--allow-unstamped=1), said as such rather than as an unexpected
 * argument; NULL for any other word. Whole names only, as every option
 * here is read. */
static const char *flag_value(const char *s)
{
    static const char *const flags[] = {"help", "allow-unstamped", "allow-incomplete"};
    for (size_t k = 0; k < sizeof flags / sizeof flags[0]; k++) {
        size_t n = strlen(flags[k]);
        if (!strncmp(s, "--", 2) && !strncmp(s + 2, flags[k], n) && s[2 + n] == '=')
            return flags[k];
    }
    return NULL;
}

static bool parse_double(const char *s, double lo, double hi, bool lo_open, double *out)
{
    char *end;
    if (!hbg_cli_decimal(s))
        return false;
    errno = 0;
    double v = strtod(s, &end);
    if (*end || errno || !isfinite(v) || v > hi || v < lo || (lo_open && v == lo))
        return false;
    *out = v;
    return true;
}

/* The logs after --base / --measure: every argument up to the next option
 * or `--` (after which every argument is a log of the arm named last). */
static int take_logs(int argc, char **argv, int *i, const char ***list, size_t *n, const char *name)
{
    const char *a = argv[*i];
    size_t k = strlen(name);
    size_t before = *n;
    if (a[k] == '=')
        (*list)[(*n)++] = a + k + 1;
    while (*i + 1 < argc && strncmp(argv[*i + 1], "--", 2) != 0 && strcmp(argv[*i + 1], "-h") != 0)
        (*list)[(*n)++] = argv[++*i];
    if (*n == before && !(*i + 1 < argc && !strcmp(argv[*i + 1], "--"))) {
        say("%s expects at least one LOG\n", name);
        return -1;
    }
    return 0;
}

static int parse_args(int argc, char **argv, cmp_args *a)
{
    a->opt = (cp_options){CP_ALPHA_DEFAULT, 2.0, "runtime_init", false, false};
    a->fmt = FMT_TABLE;
    a->base = calloc((size_t)argc, sizeof *a->base);
    a->measure = calloc((size_t)argc, sizeof *a->measure);
    if (!a->base || !a->measure) {
        say("out of memory\n");
        return 2;
    }
    const char ***arm = NULL; /* the arm named last, and its count */
    size_t *narm = NULL;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i], *v;
        if (!strcmp(s, "--")) {
            /* the rest are logs, even one named like an option */
            if (!arm) {
                say("the logs after '--' belong to no arm: put it after --base or "
                    "--measure (see `hbg compare --help`)\n");
                return 2;
            }
            while (++i < argc)
                (*arm)[(*narm)++] = argv[i];
            break;
        } else if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
            usage(stdout);
            return 0;
        } else if (is_opt(s, "--base")) {
            if (take_logs(argc, argv, &i, &a->base, &a->nbase, "--base"))
                return 2;
            arm = &a->base, narm = &a->nbase;
        } else if (is_opt(s, "--measure")) {
            if (take_logs(argc, argv, &i, &a->measure, &a->nmeasure, "--measure"))
                return 2;
            arm = &a->measure, narm = &a->nmeasure;
        } else if (is_opt(s, "--control")) {
            if (!(v = opt_value(argc, argv, &i, "--control")) || !*v) {
                say("--control expects a segment name\n");
                return 2;
            }
            a->opt.control = v;
        } else if (is_opt(s, "--alpha")) {
            v = opt_value(argc, argv, &i, "--alpha");
            if (!parse_double(v, 0, 1, true, &a->opt.alpha) || a->opt.alpha >= 1) {
                say("--alpha expects a number between 0 and 1 (exclusive), got '%s'\n", dg_shown(v ? v : ""));
                return 2;
            }
        } else if (is_opt(s, "--threshold")) {
            v = opt_value(argc, argv, &i, "--threshold");
            if (!parse_double(v, 0, 1e6, false, &a->opt.threshold_pct)) {
                say("--threshold expects a percentage from 0 to 1000000, got '%s'\n", dg_shown(v ? v : ""));
                return 2;
            }
        } else if (is_opt(s, "--format")) {
            v = opt_value(argc, argv, &i, "--format");
            if (v && !strcmp(v, "table")) a->fmt = FMT_TABLE;
            else if (v && !strcmp(v, "json")) a->fmt = FMT_JSON;
            else if (v && !strcmp(v, "csv")) a->fmt = FMT_CSV;
            else {
                say("--format expects table, json or csv, got '%s'\n", dg_shown(v ? v : ""));
                return 2;
            }
        } else if (is_opt(s, "--plot")) {
            if (!(v = opt_value(argc, argv, &i, "--plot")) || !*v) {
                say("--plot expects a file name\n");
                return 2;
            }
            /* '-' would put the SVG after the verdict on stdout, where
             * nothing could read either */
            if (hbg_outfile_is_stdout(v)) {
                say("--plot expects a file name, not '%s': the plot cannot share standard "
                    "output with the results\n",
                    dg_shown(v));
                return 2;
            }
            a->plot = v;
        } else if (!strcmp(s, "--allow-unstamped")) {
            a->opt.allow_unstamped = true;
        } else if (!strcmp(s, "--allow-incomplete")) {
            a->opt.allow_incomplete = true;
        } else if (flag_value(s)) {
            return hbg_cli_no_value(who, flag_value(s), strchr(s, '='));
        } else {
            say("unexpected argument '%s' (logs follow --base or --measure; see `hbg "
                "compare --help`)\n",
                dg_shown(s));
            return 2;
        }
    }
    if (!a->nbase || !a->nmeasure) {
        say("give the logs of both arms: --base LOG... --measure LOG... (see `hbg "
            "compare --help`)\n");
        return 2;
    }
    return -1;
}

/* Unequal arms, refused after the files are checked: a file that cannot
 * be read, or one named twice (in both arms, which makes the counts
 * differ too), is the more basic mistake; 0, or 2 after saying why. */
static int check_counts(const cmp_args *a)
{
    if (a->nbase == a->nmeasure)
        return 0;
    say("%zu base log%s but %zu measure log%s: the i-th of each arm is repetition i, so the "
        "counts must be equal\n",
        a->nbase, a->nbase == 1 ? "" : "s", a->nmeasure, a->nmeasure == 1 ? "" : "s");
    return 2;
}

/* The i-th log of the two arms together (base first), for a message:
 * "base log 2 (PATH)". */
static void log_label(const cmp_args *a, size_t i, char *buf, size_t n)
{
    bool base = i < a->nbase;
    const char *p = base ? a->base[i] : a->measure[i - a->nbase];
    snprintf(buf, n, "%s log %zu (%s)", base ? "base" : "measure", (base ? i : i - a->nbase) + 1,
             hbg_arg_shown(p));
}

/* A log that cannot be opened, said as reading it would say it, before
 * the other checks: a missing file is the first thing to fix. Only what
 * opening costs nothing is opened here: a FIFO's writer would see its
 * reader come and go, and standard input is read once. */
static int check_readable(const char *const *in, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct stat sb;
        if (!strcmp(in[i], "-") || (stat(in[i], &sb) == 0 && !S_ISREG(sb.st_mode) && !S_ISDIR(sb.st_mode)))
            continue;
        char why[PATH_MAX + 128];
        int fd = tx_open_file(in[i], why, sizeof why);
        if (fd < 0) {
            say("%s\n", why);
            return 2;
        }
        close(fd);
    }
    return 0;
}

/* Refusals that need the file system, before any log is read; 0, or 2
 * after saying why. A log that cannot be opened comes first. A log named twice (the same device and inode: a link,
 * another spelling of its path, '-' and the file on stdin) would count as
 * two repetitions, and the sign test would count its agreement twice; in
 * both arms it would compare a log with itself. A copy is the user's
 * choice; the same file twice is a mistake. The plot must not be one of
 * the logs. */
static int check_files(const cmp_args *a)
{
    size_t n = a->nbase + a->nmeasure, i, j;
    const char **in = calloc(n ? n : 1, sizeof *in);
    if (!in) {
        say("out of memory\n");
        return 2;
    }
    memcpy(in, a->base, a->nbase * sizeof *in);
    memcpy(in + a->nbase, a->measure, a->nmeasure * sizeof *in);
    int rc = 0;
    if (check_readable(in, n)) {
        rc = 2;
    } else if (hbg_same_file_pair(in, n, &i, &j)) {
        char li[1024], lj[1024];
        log_label(a, i, li, sizeof li);
        log_label(a, j, lj, sizeof lj);
        say("%s and %s are the same file: each repetition needs logs of its own; give each "
            "log once\n",
            li, lj);
        rc = 2;
    } else if (a->plot && hbg_outfile_not_input(who, a->plot, in, n)) {
        rc = 2;
    } else if (hbg_outfile_not_input(who, "-", in, n)) {
        rc = 2; /* the verdict appended to a log it reads (`>> LOG`) */
    }
    free(in);
    return rc;
}

/* --- numbers ---------------------------------------------------------------- */

static int64_t med2(phs_med m)
{
    return (int64_t)(2 * m.whole + (m.half ? 1 : 0));
}

/* a doubled value as "123", "123.5", "+7", "-0.5" */
static char *half_str(int64_t v2, bool sign, char *buf, size_t n)
{
    int64_t a = v2 < 0 ? -v2 : v2;
    snprintf(buf, n, "%s%" PRId64 "%s", v2 < 0 ? "-" : sign ? "+" : "", a / 2, a & 1 ? ".5" : "");
    return buf;
}

/* A change relative to base; none of a base of 0 ns (NAN, printed n/a)
 * unless nothing changed. A median's change is taken over the doubled
 * median, halves and all: over its whole ns, a base median of 0.5 ns had
 * no percentage, and one of 6.5 ns a share of 6. */
static double pct(double delta, uint64_t base)
{
    return base ? delta / (double)base * 100 : NAN;
}

/* "%+8.2f%%", or "n/a" in the same width */
static const char *pct_str(double v, char *b, size_t n)
{
    if (isfinite(v))
        snprintf(b, n, "%+8.2f%%", v);
    else
        snprintf(b, n, "%9s", "n/a");
    return b;
}

/* --- the logs that say they are incomplete ------------------------------------ */

/* Each incomplete log (--allow-incomplete) as "base log 2 (X:37): why",
 * through put(ctx, i, text) in repetition order, base first; i counts
 * them from 0. */
static void each_incomplete(const cp_result *R, void (*put)(void *, size_t, const char *), void *ctx)
{
    char buf[PATH_MAX + 512], why[sizeof R->rep[0].base.L.incomplete + 64];
    size_t k = 0;
    for (size_t i = 0; i < R->nrep; i++)
        for (int m = 0; m < 2; m++) {
            const cp_log *g = m ? &R->rep[i].measure : &R->rep[i].base;
            if (!g->L.incomplete_line)
                continue;
            snprintf(buf, sizeof buf, "%s log %zu (%s:%zu): %s", m ? "measure" : "base", i + 1, dg_shown(g->path),
                     g->L.incomplete_line, cp_incomplete(&g->L, why, sizeof why));
            put(ctx, k++, buf);
        }
}

static void table_incomplete(void *ctx, size_t i, const char *text)
{
    fprintf(ctx, "%s %s\n", i ? "          " : "incomplete", text);
}

static void csv_incomplete(void *ctx, size_t i, const char *text)
{
    (void)i;
    fprintf(ctx, "# incomplete: %s (--allow-incomplete)\n", text);
}

/* --- table ------------------------------------------------------------------ */

static void table_row(FILE *f, const cp_row *w)
{
    char b[32], m[32], d[32], p1[48], p2[48];
    int64_t dmin = (int64_t)(w->mmin - w->bmin);
    int64_t dmed = med2(w->mmed) - med2(w->bmed);
    fprintf(f, "%-18s %-2s %12" PRIu64 " %12" PRIu64 " %+12" PRId64 " %s", w->name,
            w->control ? "c" : w->control_plane ? "*" : "", w->bmin, w->mmin, dmin,
            pct_str(pct((double)dmin, w->bmin), p1, sizeof p1));
    fprintf(f, " %14s %14s %14s %s\n", half_str(med2(w->bmed), false, b, sizeof b),
            half_str(med2(w->mmed), false, m, sizeof m), half_str(dmed, true, d, sizeof d),
            pct_str(pct((double)dmed, (uint64_t)med2(w->bmed)), p2, sizeof p2));
}

static void out_table(const cp_result *R)
{
    char fl[48];
    FILE *f = stdout;
    const cp_options *o = &R->opt;
    fprintf(f, "verdict    %s\n", R->line);
    if (R->unstamped)
        fprintf(f, "unstamped  some logs have no [stamp] line: nothing checks that the arms ran the same command "
                   "(--allow-unstamped)\n");
    /* under the verdict: a verdict on logs cut short is not one on the
     * runs their stamps name (--allow-incomplete) */
    each_incomplete(R, table_incomplete, f);
    if (!R->flags.n)
        fprintf(f, "flags      none\n");
    for (size_t i = 0; i < R->flags.n; i++)
        fprintf(f, "%s %s\n", i ? "          " : "flags     ", R->flags.msg[i]);
    char m1[32], m2[32];
    fprintf(f, "base       %s: %zu log%s, %zu warm pass%s; min %" PRIu64 " ns, median %s ns\n", R->base_commit, R->nrep,
            R->nrep == 1 ? "" : "s", R->nbase, R->nbase == 1 ? "" : "es", R->base_tot.min,
            half_str(med2(R->base_tot.med), false, m1, sizeof m1));
    fprintf(f, "measure    %s: %zu log%s, %zu warm pass%s; min %" PRIu64 " ns, median %s ns\n", R->measure_commit,
            R->nrep, R->nrep == 1 ? "" : "s", R->nmeasure, R->nmeasure == 1 ? "" : "es", R->measure_tot.min,
            half_str(med2(R->measure_tot.med), false, m2, sizeof m2));
    if (R->stamp_rest) {
        fprintf(f, "stamp      ");
        hbg__fput_masked(f, R->stamp_rest, R->stamp_rest_len);
        if (!R->unstamped)
            fprintf(f, "  (the first base log's; every log agrees with it but for its commit, log path and time "
                       "limits)\n");
        else /* the unstamped logs were not checked, and base log 1 may be one */
            fprintf(f,
                    "  (%s log %zu's, the first stamped one; every stamped log agrees with it but for its commit, "
                    "log path and time limits)\n",
                    R->stamp_measure ? "measure" : "base", R->stamp_rep + 1);
    }
    fprintf(f, "ranks      %d, pooled\n", R->ranks);
    if (R->ctl_resolves)
        /* one repetition's is no largest of several */
        fprintf(f, "control    %s: noise floor %.2f %% (%s); Mann-Whitney two-sided p = %.3g between the arms\n",
                o->control, R->noise_floor * 100,
                R->nrep == 1 ? "the |relative delta| of its minimum in the one repetition"
                             : "the largest |relative delta| of its minimum across repetitions",
                R->ctl.p_two);
    else if (R->no_floor) /* one delta has no range; "0.00 %" read as no noise at all */
        fprintf(f,
                "control    %s: too short to witness noise (minimum %" PRIu64 " ns); noise floor: none with one "
                "repetition, whose relative delta has no range\n",
                o->control, R->ctl_min);
    else
        fprintf(f,
                "control    %s: too short to witness noise (minimum %" PRIu64 " ns); noise floor %s %%, the "
                "range of the repetitions' relative deltas\n",
                o->control, R->ctl_min, cp_floor(R->noise_floor * 100, fl, sizeof fl));
    char lo[48];
    if (R->base_min)
        fprintf(f, "threshold  %g %%: exit 1 when slower and the interval's lower bound (%s %%) exceeds it: %s\n",
                o->threshold_pct, cp_pct(R->lo_pct, lo, sizeof lo), R->regression ? "it does" : "no");
    else /* no percentage of 0 ns: a lower bound above it is past any threshold */
        fprintf(f,
                "threshold  %g %%: exit 1 when slower and the interval's lower bound (n/a %%: %+" PRId64
                " ns over a base minimum of 0 ns) exceeds it: %s\n",
                o->threshold_pct, R->hl.lo, R->regression ? "it does" : "no");
    for (size_t i = 0; i < R->nrep; i++) {
        const cp_rep *r = &R->rep[i];
        fprintf(f, "\nrepetition %zu: base %s, measure %s\n", i + 1, dg_shown(r->base.path), dg_shown(r->measure.path));
        fprintf(f, "%-18s %-2s %12s %12s %12s %9s %14s %14s %14s %9s\n", "row", "", "base_min", "measure_min",
                "delta_ns", "delta", "base_median", "measure_median", "delta_ns", "delta");
        for (int k = 0; k < r->nrow; k++)
            table_row(f, &r->row[k]);
    }
    fprintf(f, "\n* control plane, summed within each pass into total; c the control segment (noise witness)\n");
    fprintf(f, "  all figures in ns; deltas are measure - base, %% of the base figure\n");
}

/* --- csv -------------------------------------------------------------------- */

static void csv_str(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void out_csv(const cp_result *R)
{
    FILE *f = stdout;
    fprintf(f, "# %s\n", R->line);
    if (R->unstamped)
        fprintf(f, "# unstamped: some logs have no [stamp] line (--allow-unstamped)\n");
    each_incomplete(R, csv_incomplete, f);
    for (size_t i = 0; i < R->flags.n; i++)
        fprintf(f, "# flag: %s\n", R->flags.msg[i]);
    fprintf(f, "repetition,base_log,measure_log,row,control_plane,control,base_min_ns,measure_min_ns,delta_min_ns,"
               "delta_min_pct,base_median_ns,measure_median_ns,delta_median_ns,delta_median_pct\n");
    char b[32], m[32], d[32];
    for (size_t i = 0; i < R->nrep; i++) {
        const cp_rep *r = &R->rep[i];
        for (int k = 0; k < r->nrow; k++) {
            const cp_row *w = &r->row[k];
            int64_t dmin = (int64_t)(w->mmin - w->bmin), dmed = med2(w->mmed) - med2(w->bmed);
            fprintf(f, "%zu,", i + 1);
            csv_str(f, r->base.path);
            fputc(',', f);
            csv_str(f, r->measure.path);
            char p1[32] = "", p2[32] = ""; /* empty: no percentage of a base of 0 */
            double v1 = pct((double)dmin, w->bmin), v2 = pct((double)dmed, (uint64_t)med2(w->bmed));
            if (isfinite(v1))
                snprintf(p1, sizeof p1, "%.4f", v1);
            if (isfinite(v2))
                snprintf(p2, sizeof p2, "%.4f", v2);
            fprintf(f, ",%s,%d,%d,%" PRIu64 ",%" PRIu64 ",%" PRId64 ",%s,%s,%s,%s,%s\n", w->name, w->control_plane,
                    w->control, w->bmin, w->mmin, dmin, p1, half_str(med2(w->bmed), false, b, sizeof b),
                    half_str(med2(w->mmed), false, m, sizeof m), half_str(dmed, false, d, sizeof d), p2);
        }
    }
}

/* --- json ------------------------------------------------------------------- */

static void jnum(jw *w, double v)
{
    char buf[64];
    if (!isfinite(v)) { /* no such figure (a percentage of 0 ns): not a made-up 0 */
        jw_lit(w, "null");
        return;
    }
    snprintf(buf, sizeof buf, "%.6g", v);
    jw_lit(w, buf);
}

static void jkey(jw *w, const char *k, bool first)
{
    if (!first)
        jw_lit(w, ", ");
    jw_str(w, k, strlen(k));
    jw_lit(w, ": ");
}

static void jstr(jw *w, const char *s)
{
    jw_str(w, s, strlen(s));
}

static void jhalf(jw *w, int64_t v2)
{
    char buf[32];
    jw_lit(w, half_str(v2, false, buf, sizeof buf));
}

/* a signed integer as it is (doubled, one near 2^63 would not fit) */
static void jint(jw *w, int64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%" PRId64, v);
    jw_lit(w, buf);
}

static void json_mwu(jw *w, const as_mwu *u)
{
    /* U is a count of pairs plus half the ties: exact as a doubled integer */
    jw_lit(w, "{\"u\": ");
    jhalf(w, (int64_t)llround(u->u * 2));
    jkey(w, "p_greater", false), jnum(w, u->p_greater);
    jkey(w, "p_less", false), jnum(w, u->p_less);
    jkey(w, "p_two_sided", false), jnum(w, u->p_two);
    jkey(w, "exact", false), jw_lit(w, u->exact ? "true" : "false");
    jkey(w, "ties", false), jw_lit(w, u->ties ? "true" : "false");
    jw_lit(w, "}");
}

static void json_row(jw *w, const cp_row *r)
{
    int64_t dmin = (int64_t)(r->mmin - r->bmin), dmed = med2(r->mmed) - med2(r->bmed);
    jw_lit(w, "{\"row\": ");
    jstr(w, r->name);
    jkey(w, "control_plane", false), jw_lit(w, r->control_plane ? "true" : "false");
    jkey(w, "control", false), jw_lit(w, r->control ? "true" : "false");
    jkey(w, "base_min_ns", false), jw_u64(w, r->bmin);
    jkey(w, "measure_min_ns", false), jw_u64(w, r->mmin);
    jkey(w, "delta_min_ns", false), jhalf(w, 2 * dmin);
    jkey(w, "delta_min_pct", false), jnum(w, pct((double)dmin, r->bmin));
    jkey(w, "base_median_ns", false), jhalf(w, med2(r->bmed));
    jkey(w, "measure_median_ns", false), jhalf(w, med2(r->mmed));
    jkey(w, "delta_median_ns", false), jhalf(w, dmed);
    jkey(w, "delta_median_pct", false), jnum(w, pct((double)dmed, (uint64_t)med2(r->bmed)));
    jw_lit(w, "}");
}

static void json_incomplete(void *ctx, size_t i, const char *text)
{
    if (i)
        jw_lit(ctx, ", ");
    jstr(ctx, text);
}

/* Returns 0; the errno of a failed write (jw_flush leaves it set, see
 * jw.h: jw writes its full buffers past stdout's own, so the stream is
 * left an error flag but no reason); or -1 out of memory, said. */
static int out_json(const cp_result *R)
{
    jw w;
    if (!jw_init(&w, stdout)) {
        say("out of memory\n");
        return -1;
    }
    const cp_options *o = &R->opt;
    jw_lit(&w, "{");
    jkey(&w, "verdict", true), jstr(&w, cp_verdict_key(R->verdict));
    jkey(&w, "summary", false), jstr(&w, R->line);
    jkey(&w, "regression", false), jw_lit(&w, R->regression ? "true" : "false");
    jkey(&w, "unstamped", false), jw_lit(&w, R->unstamped ? "true" : "false");
    if (R->nincomplete) { /* only then: the JSON of complete logs is as it was */
        jkey(&w, "incomplete", false), jw_lit(&w, "[");
        each_incomplete(R, json_incomplete, &w);
        jw_lit(&w, "]");
    }
    jkey(&w, "flags", false), jw_lit(&w, "[");
    for (size_t i = 0; i < R->flags.n; i++) {
        if (i)
            jw_lit(&w, ", ");
        jstr(&w, R->flags.msg[i]);
    }
    jw_lit(&w, "]");
    jkey(&w, "base_commit", false), jstr(&w, R->base_commit);
    jkey(&w, "measure_commit", false), jstr(&w, R->measure_commit);
    jkey(&w, "stamp", false);
    if (R->stamp_rest)
        jw_str(&w, R->stamp_rest, R->stamp_rest_len);
    else
        jw_lit(&w, "null");
    jkey(&w, "ranks", false), jw_u64(&w, (uint64_t)R->ranks);
    jkey(&w, "repetitions", false), jw_u64(&w, R->nrep);
    jkey(&w, "base_passes", false), jw_u64(&w, R->nbase);
    jkey(&w, "measure_passes", false), jw_u64(&w, R->nmeasure);
    jkey(&w, "base_min_ns", false), jw_u64(&w, R->base_min);
    jkey(&w, "measure_min_ns", false), jw_u64(&w, R->measure_min);
    jkey(&w, "base_median_ns", false), jhalf(&w, med2(R->base_tot.med));
    jkey(&w, "measure_median_ns", false), jhalf(&w, med2(R->measure_tot.med));
    jkey(&w, "effect", false);
    /* exact, whole or a half, however large: a doubled estimate rounded
     * through a double once came out as --4611686018427387904 */
    char hl[48];
    jw_lit(&w, "{\"hodges_lehmann_ns\": ");
    jw_lit(&w, cp_shift_ns(&R->hl, false, hl, sizeof hl));
    jkey(&w, "ci_low_ns", false), jint(&w, R->hl.lo);
    jkey(&w, "ci_high_ns", false), jint(&w, R->hl.hi);
    jkey(&w, "ci_level", false), jnum(&w, R->hl.level);
    jkey(&w, "pct", false), jnum(&w, R->effect_pct);
    jkey(&w, "ci_low_pct", false), jnum(&w, R->lo_pct);
    jkey(&w, "ci_high_pct", false), jnum(&w, R->hi_pct);
    jw_lit(&w, "}");
    jkey(&w, "mann_whitney", false), json_mwu(&w, &R->mwu);
    jkey(&w, "direction", false), jstr(&w, R->direction > 0 ? "slower" : "faster");
    jkey(&w, "p", false), jnum(&w, R->p);
    jkey(&w, "alpha", false), jnum(&w, o->alpha);
    jkey(&w, "significant", false), jw_lit(&w, R->significant ? "true" : "false");
    jkey(&w, "sign_test", false);
    jw_lit(&w, "{\"agree\": ");
    jw_u64(&w, R->agree);
    jkey(&w, "disagree", false), jw_u64(&w, R->disagree);
    jkey(&w, "repetitions", false), jw_u64(&w, R->nrep);
    jkey(&w, "p", false), jnum(&w, R->sign_p);
    jkey(&w, "can_reach_alpha", false), jw_lit(&w, R->sign_can_reach ? "true" : "false");
    jw_lit(&w, "}");
    jkey(&w, "repetitions_t_test", false);
    /* one repetition has no spread: no test was made, and none is shown
     * (t = 0, df = 0, p = 1 read as a test that found nothing) */
    bool tested = R->nrep >= 2;
    jw_lit(&w, "{\"t\": ");
    jnum(&w, tested ? R->rep_t : NAN);
    jkey(&w, "df", false);
    if (tested)
        jw_u64(&w, R->nrep - 1);
    else
        jw_lit(&w, "null");
    jkey(&w, "p", false), jnum(&w, tested ? R->rep_t_p : NAN);
    jkey(&w, "backs_verdict", false), jw_lit(&w, R->reps_back ? "true" : "false");
    jw_lit(&w, "}");
    jkey(&w, "control", false);
    jw_lit(&w, "{\"segment\": ");
    jstr(&w, o->control);
    jkey(&w, "noise_floor_pct", false), jnum(&w, R->noise_floor * 100);
    jkey(&w, "min_ns", false), jw_u64(&w, R->ctl_min);
    jkey(&w, "witnesses_noise", false), jw_lit(&w, R->ctl_resolves ? "true" : "false");
    jkey(&w, "arm_spread_pct", false), jnum(&w, R->spread * 100);
    jkey(&w, "delta_range_pct", false), jnum(&w, R->delta_range * 100);
    jkey(&w, "significant", false), jw_lit(&w, R->ctl_significant ? "true" : "false");
    jkey(&w, "mann_whitney", false), json_mwu(&w, &R->ctl);
    jw_lit(&w, "}");
    jkey(&w, "threshold_pct", false), jnum(&w, o->threshold_pct);
    jkey(&w, "per_repetition", false), jw_lit(&w, "[");
    for (size_t i = 0; i < R->nrep; i++) {
        const cp_rep *r = &R->rep[i];
        jw_lit(&w, i ? ", {\"base_log\": " : "{\"base_log\": ");
        jstr(&w, r->base.path);
        jkey(&w, "measure_log", false), jstr(&w, r->measure.path);
        jkey(&w, "base_passes", false), jw_u64(&w, r->base.nsums);
        jkey(&w, "measure_passes", false), jw_u64(&w, r->measure.nsums);
        jkey(&w, "control_delta_pct", false), jnum(&w, r->ctl_rel * 100);
        jkey(&w, "rows", false), jw_lit(&w, "[");
        for (int k = 0; k < r->nrow; k++) {
            if (k)
                jw_lit(&w, ", ");
            json_row(&w, &r->row[k]);
        }
        jw_lit(&w, "]}");
    }
    jw_lit(&w, "]}\n");
    int werr = jw_flush(&w) ? 0 : errno ? errno : EIO;
    jw_free(&w);
    return werr;
}

/* --- plot ------------------------------------------------------------------- */

static int write_plot(const cp_result *R, const char *path)
{
    sp_rep *reps = calloc(R->nrep, sizeof *reps);
    if (!reps) {
        say("cannot write %s: out of memory\n", dg_shown(path));
        return -1;
    }
    for (size_t i = 0; i < R->nrep; i++) {
        reps[i].base = (sp_arm){R->rep[i].base.sums, R->rep[i].base.nsums};
        reps[i].measure = (sp_arm){R->rep[i].measure.sums, R->rep[i].measure.nsums};
    }
    char bl[96], ml[96], sub[1024];
    snprintf(bl, sizeof bl, "base %s", R->base_commit);
    snprintf(ml, sizeof ml, "measure %s", R->measure_commit);
    if (R->stamp_rest)
        snprintf(sub, sizeof sub, "%.*s", (int)R->stamp_rest_len, R->stamp_rest);
    else
        snprintf(sub, sizeof sub, "unstamped logs");
    sp_plot p = {R->title, sub, bl, ml, "control-plane sum per warm pass", reps, R->nrep};
    hbg_outfile of;
    int rc = -1;
    if (hbg_outfile_open(&of, who, path) == 0) {
        errno = 0;
        bool ok = sp_write(of.f, &p) == 0;
        int werr = errno ? errno : EIO; /* sp_write's, before the close can change it */
        rc = hbg_outfile_close(&of, ok);
        if (!ok)
            say("cannot write %s: %s\n", dg_shown(path), strerror(werr));
    }
    free(reps);
    return rc;
}

/* --- the command ------------------------------------------------------------ */

static void print_warnings(const cp_result *R)
{
    char more[64];
    for (size_t i = 0; R->rep && i < R->nrep; i++) {
        const dg_list *l[2] = {&R->rep[i].base.L.warn, &R->rep[i].measure.L.warn};
        for (int k = 0; k < 2; k++) {
            for (size_t j = 0; j < l[k]->n; j++)
                say("warning: %s\n", l[k]->msg[j]);
            if (l[k]->suppressed)
                say("warning: %s\n", dg_more(l[k]->suppressed, more, sizeof more));
        }
    }
}

int hbg_cmd_compare(int argc, char **argv)
{
    return hbg_cmd_compare_as("hbg compare", argc, argv);
}

int hbg_cmd_compare_as(const char *cmd, int argc, char **argv)
{
    who = cmd;
    cmp_args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc < 0 && (check_files(&a) || check_counts(&a)))
        rc = 2;
    if (rc >= 0) {
        free(a.base);
        free(a.measure);
        return rc;
    }
    /* A plot that cannot be created fails now, before a verdict goes out
     * under an exit status that says the command failed. */
    if (a.plot && hbg_outfile_probe(who, a.plot)) {
        free(a.base);
        free(a.measure);
        return 2;
    }
    cp_result R;
    char err[2048];
    hbg_status st = cp_run(&R, a.base, a.measure, a.nbase, &a.opt, err, sizeof err);
    print_warnings(&R);
    if (st != HBG_OK) {
        say("%s\n", st == HBG_E_NOMEM ? "out of memory" : err);
        rc = 2;
        goto out;
    }
    /* the plot first: stdout may be a pipe whose reader has gone (`| head
     * -1`), and SIGPIPE would end the command before a plot drawn after */
    bool plot_failed = a.plot && write_plot(&R, a.plot) != 0;
    int werr = 0;
    if (a.fmt == FMT_JSON)
        werr = out_json(&R);
    else if (a.fmt == FMT_CSV)
        out_csv(&R);
    else
        out_table(&R);
    rc = R.regression ? 1 : 0;
    if (werr < 0 || hbg_stdout_done(who, werr) != 0 || plot_failed)
        rc = 2;
out:
    cp_free(&R);
    free(a.base);
    free(a.measure);
    return rc;
}
