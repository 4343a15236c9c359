/* hbg fit: a least-squares cost model of the warm control plane over the
 * passes of any set of logs. Output: docs/fit.md. Exit: 0 fitted, 1 too
 * few usable passes, 2 usage, an input that cannot be read or is refused,
 * or a failed write. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/longopt.h"
#include "tools/diag.h"
#include "cli/outfile.h"
#include "tools/fit.h"
#include "tools/fitplot.h"
#include "tools/jw.h"
#include "tools/phstats.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: hbg fit LOG... [--format table|json] [--plot FILE.svg] [--min-per-log] [--relative]\n"
            "               [--skip-warm N]\n\n"
            "Fits, by least squares over the warm passes of every LOG,\n"
            "  control plane = fixed + per task x tasks + per recorded node x nodes\n"
            "                  + per replay x replays + per boundary slot x slots\n"
            "where a pass's control plane is as `hbg phases` sums it (host_orch + graph_upload +\n"
            "arena_h2d) and its counts are its own: tasks= of host_orch, the record_node and\n"
            "graph_submit counts of its host-orch lines, slots= of graph_upload (hbg's logs only).\n"
            "Prints each coefficient with a 95 %% interval (Student's t), R\xC2\xB2, the worst residual, and\n"
            "a warning when residuals grow with size (a super-linear term). A term whose count\n"
            "does not vary on its own across the passes is reported as not identifiable.\n"
            "Reads logs of hbg and of the original runtime; LOG '-' is standard input. Each log\n"
            "counts once: the same file named twice (a link, another path) is refused.\n"
            "Documentation: docs/fit.md.\n\n"
            "  --format F      table (default) or json\n"
            "  --plot FILE     an SVG of measured against fitted cost per pass (a file: never\n"
            "                  '-', never one of the LOGs)\n"
            "  --min-per-log   fit each log's cheapest warm pass only (one point per log: far\n"
            "                  less noise on a shared machine; needs more logs than terms)\n"
            "  --skip-warm N   leave out each rank's first N warm passes of every log, 0 to\n"
            "                  1000000 (default 0; hbg's second pass writes the journal and the\n"
            "                  memos' notes: --skip-warm 1)\n"
            "  --relative      least squares of residuals relative to each pass's cost (for\n"
            "                  sweeps over decades, where the noise grows with the cost)\n"
            "  -h, --help      this text\n\n"
            "exit status: 0 fitted, 1 too few usable passes (or a pass of 0 ns with --relative),\n"
            "2 usage error, unusable input, a failed write or out of memory\n");
}

static void print_warnings(const dg_list *w)
{
    char more[64];
    for (size_t i = 0; i < w->n; i++)
        fprintf(stderr, "hbg fit: warning: %s\n", w->msg[i]);
    if (w->suppressed)
        fprintf(stderr, "hbg fit: warning: %s\n", dg_more(w->suppressed, more, sizeof more));
}

/* A log named twice (the same device and inode: a link, another spelling
 * of its path, '-' and the file on stdin) would count its passes twice and
 * narrow every interval as if it were new data. A copy is the user's
 * choice; the same file twice is a mistake. Returns 0, or 2 after naming
 * both arguments. An argument that cannot be stat'ed is left to the
 * reader, which says why. */
static int distinct_logs(char *const *arg, size_t n)
{
    size_t i, j;
    if (!hbg_same_file_pair((const char *const *)arg, n, &i, &j))
        return 0;
    fprintf(stderr,
            "hbg fit: LOG %zu (%s) and LOG %zu (%s) are the same file: its passes would count twice; give each "
            "log once\n",
            i + 1, hbg_arg_shown(arg[i]), j + 1, hbg_arg_shown(arg[j]));
    return 2;
}

/* Reads one log and adds its warm passes; 0, or 2 after saying why. A
 * log that says it is incomplete is added to `incomplete` too, for the
 * JSON ("LOG:LINE: why"): its warning on stderr is gone with the run. */
static int read_log(fit_data *d, const char *arg, uint32_t index, const char **name, bool min_only, dg_list *incomplete)
{
    char err[512];
    int fd = tx_open_log(arg, name, err, sizeof err);
    if (fd < 0) {
        fprintf(stderr, "hbg fit: %s\n", err);
        return 2;
    }
    ps_log L;
    ps_options po = {0};
    hbg_status rs = ps_read_fd(&L, *name, fd, &po, err, sizeof err);
    close(fd);
    int rc = 0;
    if (rs != HBG_OK) {
        fprintf(stderr, "hbg fit: %s\n", err);
        ps_free(&L); /* a failed read still holds what it allocated */
        return 2;
    }
    print_warnings(&L.warn);
    if (L.incomplete_line)
        dg_add_always(incomplete, "%s:%zu: %s", L.path, L.incomplete_line, L.incomplete);
    phs_result R;
    if (L.stamp_conflict) {
        char mixed[PATH_MAX + 160];
        fprintf(stderr, "hbg fit: %s; refusing it\n", ps_mixed_runs(&L, L.path, mixed, sizeof mixed));
        rc = 2;
    } else if (L.nbind == 0) {
        char why[320];
        fprintf(stderr, "hbg fit: %s%s\n", L.path, ps_no_bind_why(&L, why, sizeof why));
        rc = 2;
    } else if (L.nused && phs_compute(&L, &R, NULL) != HBG_OK) {
        fprintf(stderr, "hbg fit: %s: out of memory\n", L.path);
        rc = 2;
    } else if ((min_only ? fit_add_log_min(d, &L, index) : fit_add_log(d, &L, index)) != HBG_OK) {
        fprintf(stderr, "hbg fit: out of memory\n");
        rc = 2;
    } else if (L.nused == 0 && L.nwarm == 0) {
        fprintf(stderr,
                "hbg fit: warning: %s: every pass is the cold first pass of its rank (%zu); it adds nothing to the "
                "fit (run at least 2 rounds)\n",
                L.path, L.ncold);
    } else if (L.nused == 0) {
        char all[64];
        fprintf(stderr, "hbg fit: warning: %s: %s excluded (see the warnings); it adds nothing to the fit\n", L.path,
                ps_all_passes(L.nwarm, "warm ", all, sizeof all));
    }
    ps_free(&L);
    return rc;
}

/* v rounded to 1/per, as printed, with no sign on a zero: a residual of
 * -1e-12 ns is "+0.0", never "-0.0" */
static double shown(double v, double per)
{
    return round(v * per) / per + 0.0;
}

static void put_interval(const fit_result *R, const fit_term *t)
{
    if (!t->ident)
        printf("not identifiable: %s\n", t->why);
    else
        printf("%16.3f   [%.3f, %.3f]\n", shown(t->coef, 1000), shown(t->lo, 1000), shown(t->hi, 1000));
    (void)R;
}

static void out_table(const fit_data *d, const fit_result *R, const char *const *names, size_t nlogs)
{
    printf("passes          %zu warm pass%s from %zu log%s", d->n, d->n == 1 ? "" : "es", nlogs, nlogs == 1 ? "" : "s");
    if (d->excluded)
        printf(" (%zu left out: counts unknown, or a count or cost past 2^53)", d->excluded);
    if (d->skipped)
        printf(" (%zu skipped: each rank's first %zu)", d->skipped, d->skip_warm);
    printf("\nmodel           control plane = fixed + per task x tasks + per recorded node x nodes\n"
           "                  + per replay x replays + per boundary slot x slots\n\n");
    printf("%-20s %16s   %s\n", "term", "ns", "95 % interval");
    for (int c = 0; c < FIT_NTERMS; c++) {
        printf("%-20s ", fit_term_name[c]);
        put_interval(R, &R->term[c]);
    }
    if (isnan(R->r2))
        printf("\nR\xC2\xB2              n/a (every pass costs the same: nothing to explain)\n");
    else
        printf("\nR\xC2\xB2              %.6f%s\n", R->r2, R->relative ? " (of the relative residuals)" : "");
    if (R->relative)
        printf("residual sd     %.3f %% of the cost (relative; df %zu, t %.4f)\n", 100 * R->sigma, R->df, R->tq);
    else
        printf("residual sd     %.1f ns (df %zu, t %.4f)\n", R->sigma, R->df, R->tq);
    const fit_point *w = &d->pt[R->worst];
    char pct[32] = "";
    if (w->fitted > 0) /* a share of a cost: none of a cost of 0 or below */
        snprintf(pct, sizeof pct, "; %+.2f %%", shown(100 * w->resid / w->fitted, 100));
    printf("worst residual  %+.1f ns (measured %.0f, fitted %.1f%s) at %s pass %s (line %zu)\n", shown(w->resid, 10),
           w->y, w->fitted, pct, dg_shown(names[w->log]), w->label, w->line);
    if (R->has_slope)
        printf("log-log slope   %.4f (measured against fitted cost; 1 for a linear cost)\n", R->slope);
    if (!R->reset_done)
        return;
    printf("super-linear    t = %.2f for the squared fitted cost (", R->reset_t);
    /* the passes left out when the verdict was last tested */
    const char *without =
        R->reset_checked == 2 ? "the two passes furthest from the rest" : "the pass furthest from the rest";
    double t_without = R->reset_checked ? R->reset_t_without[R->reset_checked - 1] : NAN;
    if (R->superlinear)
        printf("significant: residuals grow with size, without %s too)\n", without);
    else if (!R->reset_checked)
        printf("not significant)\n");
    else if (isnan(t_without))
        printf("not significant: too few passes to test it without %s)\n", without);
    else
        printf("not significant without %s: t = %.2f)\n", without, shown(t_without, 100));
}

/* The passes that alone make the squared fitted cost significant: the
 * one, or the two, without which it is not (or cannot be tested). */
static void warn_few_passes(const fit_data *d, const fit_result *R, const char *const *names)
{
    size_t m = R->reset_checked;
    char without[32] = "too few passes left to test";
    if (!isnan(R->reset_t_without[m - 1]))
        snprintf(without, sizeof without, "t = %.2f", shown(R->reset_t_without[m - 1], 100));
    if (m == 1)
        fprintf(stderr,
                "hbg fit: warning: one pass alone makes the squared fitted cost significant (t = %.2f; without "
                "it, %s): ",
                R->reset_t, without);
    else
        fprintf(stderr,
                "hbg fit: warning: two passes alone make the squared fitted cost significant (t = %.2f; without "
                "one, t = %.2f; without both, %s): ",
                R->reset_t, shown(R->reset_t_without[0], 100), without);
    for (size_t k = 0; k < m; k++) {
        const fit_point *q = &d->pt[R->reset_pass[k]];
        fprintf(stderr, "%s%s pass %s (line %zu), measured %.0f ns, fitted %.1f", k ? "; " : "",
                dg_shown(names[q->log]), q->label, q->line, q->y, q->fitted);
    }
    fprintf(stderr, "; not taken for super-linear growth\n");
}

static void jnum(jw *w, double v)
{
    char b[40];
    if (!isfinite(v)) {
        JW_LIT(w, "null");
        return;
    }
    snprintf(b, sizeof b, "%.17g", v);
    jw_lit(w, b);
}

static void jbool(jw *w, bool v)
{
    if (v)
        JW_LIT(w, "true");
    else
        JW_LIT(w, "false");
}

static void jkey(jw *w, const char *k, bool first)
{
    if (!first)
        JW_LIT(w, ", ");
    jw_str(w, k, strlen(k));
    JW_LIT(w, ": ");
}

/* Returns 0; the errno of a failed write (jw_flush leaves it set, see
 * jw.h: jw writes its full buffers past stdout's own, so the stream is
 * left an error flag but no reason); or -1 out of memory, said. */
static int out_json(const fit_data *d, const fit_result *R, const char *const *names, size_t nlogs,
                    const dg_list *incomplete)
{
    jw w;
    if (!jw_init(&w, stdout)) {
        fprintf(stderr, "hbg fit: out of memory\n");
        return -1;
    }
    JW_LIT(&w, "{");
    jkey(&w, "logs", true), JW_LIT(&w, "[");
    for (size_t i = 0; i < nlogs; i++) {
        if (i)
            JW_LIT(&w, ", ");
        jw_str(&w, names[i], strlen(names[i]));
    }
    JW_LIT(&w, "]");
    if (incomplete->n) { /* only then: the JSON of complete logs is as it was */
        jkey(&w, "incomplete", false), JW_LIT(&w, "[");
        for (size_t i = 0; i < incomplete->n; i++) {
            if (i)
                JW_LIT(&w, ", ");
            jw_str(&w, incomplete->msg[i], strlen(incomplete->msg[i]));
        }
        JW_LIT(&w, "]");
    }
    jkey(&w, "passes", false), jw_u64(&w, d->n);
    jkey(&w, "left_out", false), jw_u64(&w, d->excluded);
    jkey(&w, "skipped", false), jw_u64(&w, d->skipped);
    jkey(&w, "terms", false), JW_LIT(&w, "{");
    for (int c = 0; c < FIT_NTERMS; c++) {
        const fit_term *t = &R->term[c];
        jkey(&w, fit_term_key[c], c == 0), JW_LIT(&w, "{");
        jkey(&w, "identifiable", true), jbool(&w, t->ident);
        if (t->ident) {
            jkey(&w, "ns", false), jnum(&w, t->coef);
            jkey(&w, "se", false), jnum(&w, t->se);
            jkey(&w, "lo", false), jnum(&w, t->lo);
            jkey(&w, "hi", false), jnum(&w, t->hi);
        } else {
            jkey(&w, "why", false), jw_str(&w, t->why, strlen(t->why));
        }
        JW_LIT(&w, "}");
    }
    JW_LIT(&w, "}");
    jkey(&w, "r2", false), jnum(&w, R->r2);
    jkey(&w, "relative", false), jbool(&w, R->relative);
    jkey(&w, "sigma", false), jnum(&w, R->sigma);
    jkey(&w, "df", false), jw_u64(&w, R->df);
    jkey(&w, "t", false), jnum(&w, R->tq);
    const fit_point *p = &d->pt[R->worst];
    jkey(&w, "worst", false), JW_LIT(&w, "{");
    jkey(&w, "log", true), jw_str(&w, names[p->log], strlen(names[p->log]));
    jkey(&w, "pass", false), jw_str(&w, p->label, strlen(p->label));
    jkey(&w, "line", false), jw_u64(&w, p->line);
    jkey(&w, "measured", false), jnum(&w, p->y);
    jkey(&w, "fitted", false), jnum(&w, p->fitted);
    jkey(&w, "residual", false), jnum(&w, p->resid);
    JW_LIT(&w, "}");
    jkey(&w, "superlinear", false);
    if (R->reset_done)
        jbool(&w, R->superlinear);
    else
        JW_LIT(&w, "null"); /* not tested: "false" would claim it was */
    jkey(&w, "superlinear_t", false), jnum(&w, R->reset_done ? R->reset_t : NAN);
    jkey(&w, "superlinear_t_without_one", false), jnum(&w, R->reset_checked ? R->reset_t_without[0] : NAN);
    jkey(&w, "superlinear_t_without_two", false), jnum(&w, R->reset_checked > 1 ? R->reset_t_without[1] : NAN);
    jkey(&w, "loglog_slope", false), jnum(&w, R->has_slope ? R->slope : NAN);
    /* the passes left out to test the verdict again, as indices into
     * "points", and whether the two were left out as a pair: after the
     * keys that were there first, which keep their order */
    jkey(&w, "superlinear_left_out", false), JW_LIT(&w, "[");
    for (size_t k = 0; k < R->reset_checked; k++) {
        if (k)
            JW_LIT(&w, ", ");
        jw_u64(&w, R->reset_pass[k]);
    }
    JW_LIT(&w, "]");
    jkey(&w, "superlinear_pair", false), jbool(&w, R->reset_pair);
    jkey(&w, "points", false), JW_LIT(&w, "[");
    for (size_t i = 0; i < d->n; i++) {
        const fit_point *q = &d->pt[i];
        if (i)
            JW_LIT(&w, ",");
        JW_LIT(&w, "\n  {");
        jkey(&w, "log", true), jw_u64(&w, q->log);
        jkey(&w, "pass", false), jw_str(&w, q->label, strlen(q->label));
        for (int c = FIT_TASK; c < FIT_NTERMS; c++)
            jkey(&w, fit_count_name[c], false), jw_u64(&w, q->count[c]);
        jkey(&w, "measured", false), jnum(&w, q->y);
        jkey(&w, "fitted", false), jnum(&w, q->fitted);
        JW_LIT(&w, "}");
    }
    JW_LIT(&w, "]}\n");
    int werr = jw_flush(&w) ? 0 : errno ? errno : EIO;
    jw_free(&w);
    return werr;
}

/* The plot through the atomic output file. A failed write is said here
 * (hbg_outfile_close names only a failure of its own: the close or the
 * rename). */
static int write_plot(const char *path, const fit_data *d, const fit_result *R)
{
    hbg_outfile of;
    if (hbg_outfile_open(&of, "hbg fit", path))
        return 2;
    errno = 0;
    bool ok = fp_write(of.f, d, R, "hbg fit: measured against fitted control plane") == 0;
    int werr = errno ? errno : EIO; /* fp_write's, before the close can change it */
    int rc = hbg_outfile_close(&of, ok) ? 2 : 0;
    if (!ok)
        fprintf(stderr, "hbg fit: cannot write %s: %s\n", dg_shown(path), strerror(werr));
    return rc;
}

int hbg_cmd_fit(int argc, char **argv)
{
    static const struct option opts[] = {
        {"format", required_argument, NULL, 'f'},
        {"plot", required_argument, NULL, 'p'},
        {"min-per-log", no_argument, NULL, 'm'},
        {"relative", no_argument, NULL, 'r'},
        {"skip-warm", required_argument, NULL, 's'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bool json = false;
    const char *plot = NULL;
    bool min_only = false, relative = false;
    unsigned long skip = 0;
    optind = 1;
    opterr = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (ch) {
        case 'f':
            if (strcmp(optarg, "table") && strcmp(optarg, "json")) {
                fprintf(stderr, "hbg fit: --format expects table or json, got '%s'\n", dg_shown(optarg));
                return 2;
            }
            json = strcmp(optarg, "json") == 0;
            break;
        case 'p':
            /* '-' would put the SVG after the table or JSON on stdout, where
             * nothing could read either */
            if (!*optarg || hbg_outfile_is_stdout(optarg)) {
                fprintf(stderr, "hbg fit: --plot expects a file name%s%s%s\n", *optarg ? ", not '" : "",
                        *optarg ? dg_shown(optarg) : "",
                        *optarg ? "': the plot cannot share standard output with the results" : "");
                return 2;
            }
            plot = optarg;
            break;
        case 'm': min_only = true; break;
        case 'r': relative = true; break;
        case 's': {
            char *end;
            errno = 0;
            skip = strtoul(optarg, &end, 10);
            if (errno || *end || optarg[0] < '0' || optarg[0] > '9' || skip > 1000000) {
                fprintf(stderr, "hbg fit: --skip-warm expects a count of passes from 0 to 1000000, got '%s'\n",
                        dg_shown(optarg));
                return 2;
            }
            break;
        }
        case 'h': usage(stdout); return 0;
        default:
            if (ch == '?' && hbg_cli_flag_value("hbg fit", opts, argv[optind - 1]))
                return 2;
            fprintf(stderr, "hbg fit: unknown or incomplete option '%s' (see `hbg fit --help`)\n",
                    dg_shown(argv[optind - 1]));
            return 2;
        }
    }
    size_t nlogs = (size_t)(argc - optind);
    if (nlogs == 0) {
        fprintf(stderr, "hbg fit: expected one LOG or more (see `hbg fit --help`)\n");
        return 2;
    }
    /* before anything is read: a log named twice, a plot over a log */
    if (distinct_logs(argv + optind, nlogs))
        return 2;
    if (plot && hbg_outfile_not_input("hbg fit", plot, (const char *const *)(argv + optind), nlogs))
        return 2;
    if (hbg_outfile_not_input("hbg fit", "-", (const char *const *)(argv + optind), nlogs))
        return 2; /* the table appended to a log it reads (`>> LOG`) */
    /* A plot that cannot be created fails now, before a table goes out
     * under an exit status that says the command failed. */
    if (plot && hbg_outfile_probe("hbg fit", plot))
        return 2;
    const char **names = calloc(nlogs, sizeof *names);
    fit_data d;
    fit_init(&d);
    d.skip_warm = skip;
    int rc = names ? 0 : 2;
    dg_list incomplete;
    dg_init(&incomplete, 0);
    for (size_t i = 0; i < nlogs && !rc; i++)
        rc = read_log(&d, argv[optind + (int)i], (uint32_t)i, &names[i], min_only, &incomplete);
    fit_result R;
    char err[256];
    if (!rc) {
        print_warnings(&d.warn);
        int fr = fit_solve(&d, relative, names, &R, err, sizeof err);
        if (fr) {
            fprintf(stderr, "hbg fit: %s\n", err);
            rc = fr == -2 ? 2 : 1;
        }
    }
    if (!rc) {
        if (R.nneg) {
            const fit_point *q = &d.pt[R.most_neg];
            fprintf(stderr,
                    "hbg fit: warning: the model puts %zu pass%s below zero cost (the lowest %.1f ns, measured %.0f, "
                    "at %s pass %s, line %zu): a coefficient's sign is off, most likely a count that barely "
                    "varies or moves with another\n",
                    R.nneg, R.nneg == 1 ? "" : "es", q->fitted, q->y, dg_shown(names[q->log]), q->label, q->line);
        }
        if (R.superlinear)
            fprintf(stderr,
                    "hbg fit: warning: residuals grow with size: the square of the fitted cost explains what the "
                    "linear terms leave (t = %.2f, df %zu); some cost is super-linear in a count\n",
                    R.reset_t, R.df - 1);
        else if (R.reset_checked)
            warn_few_passes(&d, &R, names);
        /* the plot is drawn even when stdout fails (as compare's is): the
         * fit was made, and nothing of it need be lost. First, then: a
         * pipe whose reader has gone (`| head -1`) ends the command by
         * SIGPIPE at the first write to it. */
        if (plot && write_plot(plot, &d, &R))
            rc = 2;
        int werr = 0;
        if (json)
            werr = out_json(&d, &R, names, nlogs, &incomplete);
        else
            out_table(&d, &R, names, nlogs);
        if (werr < 0)
            rc = 2;
        else if (hbg_stdout_done("hbg fit", werr) != 0)
            rc = 2;
    }
    fit_free(&d);
    dg_free(&incomplete);
    free(names);
    return rc;
}
