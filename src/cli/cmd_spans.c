/* hbg spans: what a log's [STRACE] spans say, per callable, per round and
 * as a call tree; the pipelining check; per-operation tails of records.
 * Documentation: docs/spans.md. Exit: 0 printed (or the overlap held),
 * 1 nothing to show or the overlap assertion failed, 2 usage, unreadable
 * input or a failed write. */
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/longopt.h"
#include "tools/diag.h"
#include "cli/outfile.h"
#include "cli/spans_out.h"
#include "tools/records.h"
#include "tools/spans.h"
#include "tools/text.h"

#define MAX_RECORDS_FILES 64

static void usage(FILE *f)
{
    fprintf(f,
            "usage: hbg spans LOG [--view tpot|rounds|tree|ops] [--format table|json|csv]\n"
            "                 [--records FILE]... [--assert-overlap A,B [--hidden]]\n\n"
            "Groups LOG's [STRACE] spans into invocations (one (pid, inv): one run of a\n"
            "callable, named by its hid) and prints one view of them:\n"
            "  tpot    per callable (the most frequent is decode, one seen once prefill):\n"
            "          each span name's min / median / max / mean per invocation\n"
            "  rounds  one row per invocation of the decode callable per rank: host wall,\n"
            "          device wall, effective, orch, sched; min / median / trimmed mean\n"
            "          over warm rounds (each rank's first round is cold, never counted)\n"
            "  tree    per callable, the call tree rebuilt from depth: each node's median\n"
            "          and share of its parent, its untimed remainder as its own row\n"
            "  ops     per-operation tails of --records only\n"
            "Ranks are numbered as hbg run numbers them (ascending pid). Reads logs of hbg\n"
            "and of the original runtime. LOG '-' is standard input. Documentation:\n"
            "docs/spans.md.\n\n"
            "  --view V            tpot (default), rounds, tree or ops\n"
            "  --format F          table (default), json or csv\n"
            "  --records FILE      a host_phase_records.jsonl (repeatable, each file once): per\n"
            "                      operation kind count, min / median / p99 / max, and the share\n"
            "                      of host_orch no record covers ('-': standard input); in\n"
            "                      csv, with --view ops only (a CSV holds one table)\n"
            "  --assert-overlap A,B  check that, for adjacent invocations of each rank, span A\n"
            "                      of N+1 starts before span B of N ends (and ends after it\n"
            "                      starts), and that B of N+1 starts no earlier than B of N\n"
            "                      (instead of a view: not with --view or --records)\n"
            "  --hidden            with --assert-overlap: A of N+1 must also end inside B of N\n"
            "  -h, --help          this text\n\n"
            "exit status: 0 printed (with --assert-overlap: every pair held), 1 no spans (but\n"
            "with --view ops, whose tails need none), no records line for --view ops, or the\n"
            "assertion failed or had no pair to check, 2 usage error, unreadable input or\n"
            "failed write\n");
}

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "hbg spans: ");
    fprintf(stderr, fmt, arg ? dg_shown(arg) : arg);
    fprintf(stderr, " (see `hbg spans --help`)\n");
    return 2;
}

typedef struct args {
    so_view view;
    bool view_given;        /* --view named */
    so_format fmt;
    const char *rpath[MAX_RECORDS_FILES];
    size_t nr;
    char *overlap;          /* "A,B" split in place */
    const char *a, *b;
    bool hidden;
    const char *log;
} args;

/* A records file named twice (the same device and inode: a link, another
 * spelling of its path) would count every operation twice. A copy is the
 * user's choice; the same file twice is a mistake. Returns -1, or 2 after
 * naming both arguments. A name that cannot be stat'ed is left to the
 * reader, which says why. */
static int distinct_records(const args *a)
{
    size_t i, j;
    /* results appended to the log they are read from (`>> LOG`) */
    const char *in[MAX_RECORDS_FILES + 1] = {a->log};
    for (size_t k = 0; k < a->nr; k++)
        in[k + 1] = a->rpath[k];
    if (hbg_outfile_not_input("hbg spans", "-", in, a->nr + 1))
        return 2;
    /* the log given as records too (or standard input as both): no
     * records line in it, or nothing left of stdin for the second */
    if (hbg_same_file_pair(in, a->nr + 1, &i, &j) && i == 0) {
        fprintf(stderr, "hbg spans: the log (%s) and --records %zu (%s) are the same file; give the log once\n",
                hbg_arg_shown(a->log), j, hbg_arg_shown(a->rpath[j - 1]));
        return 2;
    }
    if (!hbg_same_file_pair((const char *const *)a->rpath, a->nr, &i, &j))
        return -1;
    fprintf(stderr,
            "hbg spans: --records %zu (%s) and --records %zu (%s) are the same file: its records would count twice; "
            "give each records file once\n",
            i + 1, hbg_arg_shown(a->rpath[i]), j + 1, hbg_arg_shown(a->rpath[j]));
    return 2;
}

static int parse_args(int argc, char **argv, args *a)
{
    static const struct option opts[] = {{"view", required_argument, NULL, 'v'},
                                         {"format", required_argument, NULL, 'F'},
                                         {"records", required_argument, NULL, 'r'},
                                         {"assert-overlap", required_argument, NULL, 'o'},
                                         {"hidden", no_argument, NULL, 'H'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    memset(a, 0, sizeof *a);
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'v':
            if (!so_parse_view(optarg, &a->view))
                return usage_error("--view expects tpot, rounds, tree or ops, got '%s'", optarg);
            a->view_given = true;
            break;
        case 'F':
            if (!so_parse_format(optarg, &a->fmt))
                return usage_error("--format expects table, json or csv, got '%s'", optarg);
            break;
        case 'r':
            if (a->nr == MAX_RECORDS_FILES)
                return usage_error("at most %s --records files", "64");
            a->rpath[a->nr++] = optarg;
            break;
        case 'o': a->overlap = optarg; break;
        case 'H': a->hidden = true; break;
        case 'h': usage(stdout); return 0;
        default:
            if (c == '?' && hbg_cli_flag_value("hbg spans", opts, argv[optind - 1]))
                return 2;
            return usage_error("unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (argc - optind != 1)
        return usage_error("expected exactly one LOG%s", "");
    a->log = argv[optind];
    if (a->overlap) {
        char *comma = strchr(a->overlap, ',');
        if (!comma || comma == a->overlap || !comma[1] || strchr(comma + 1, ','))
            return usage_error("--assert-overlap expects two span names A,B, got '%s'", a->overlap);
        *comma = 0;
        a->a = a->overlap;
        a->b = comma + 1;
    }
    if (a->hidden && !a->overlap)
        return usage_error("--hidden needs --assert-overlap A,B%s", "");
    /* the check prints its pairs instead of a view: a view or records
     * named beside it would be left unshown without a word */
    if (a->overlap && (a->view_given || a->nr))
        return usage_error("--assert-overlap prints its pairs instead of a view; %s does not apply to it",
                           a->view_given ? "--view" : "--records");
    if (a->view == SO_OPS && !a->nr)
        return usage_error("--view ops needs --records FILE%s", "");
    /* a CSV holds one table: beside another view's, the tails were read
     * and then left unwritten without a word */
    if (a->nr && a->fmt == SO_CSV && a->view != SO_OPS)
        return usage_error("--records with --format csv needs --view ops: a CSV holds one table, and the "
                           "operation tails are a table of their own%s",
                           "");
    return distinct_records(a);
}

static void print_warnings(const dg_list *w)
{
    char more[64];
    for (size_t i = 0; i < w->n; i++)
        fprintf(stderr, "hbg spans: warning: %s\n", w->msg[i]);
    if (w->suppressed)
        fprintf(stderr, "hbg spans: warning: %s\n", dg_more(w->suppressed, more, sizeof more));
}

/* The records files, parsed; a file that cannot be read is an error. */
static int load_records(const args *a, rc_file *recs, size_t *nparsed, dg_list *warn)
{
    char err[512];
    /* one after the other: a FIFO's writer may fill them in turn */
    for (; *nparsed < a->nr; (*nparsed)++)
        if (rc_load(&recs[*nparsed], a->rpath[*nparsed], warn, err, sizeof err) != HBG_OK) {
            (*nparsed)++;
            fprintf(stderr, "hbg spans: %s\n", err);
            return 2;
        }
    if (rc_drop_repeats(recs, *nparsed, warn) != HBG_OK) {
        fprintf(stderr, "hbg spans: %s: out of memory\n", dg_shown(a->rpath[0]));
        return 2;
    }
    return 0;
}

/* The overlap check, printed instead of a view. */
static int run_overlap(const args *a, ps_log *L, sp_set *S, const so_ctx *o, dg_list *warn)
{
    sp_overlap ov;
    char err[512];
    hbg_status st = sp_check_overlap(S, a->a, a->b, a->hidden, &ov, err, sizeof err);
    if (st != HBG_OK) {
        fprintf(stderr, "hbg spans: %s: %s\n", L->path, err);
        sp_overlap_free(&ov);
        return 2;
    }
    print_warnings(&L->warn);
    print_warnings(&S->warn);
    print_warnings(warn);
    int rc = so_overlap(o, &ov, a->a, a->b, a->hidden);
    sp_overlap_free(&ov);
    return rc;
}

/* --view ops of records files that hold no records line (an empty file,
 * or one whose every line was skipped: a log given by mistake) has
 * nothing to show, as a log without spans has for the other views: an
 * empty table and exit 0 passed for a run of no operations. */
static int no_records_lines(const args *a, ps_log *L, sp_set *S, dg_list *warn)
{
    print_warnings(&L->warn);
    print_warnings(&S->warn);
    print_warnings(warn);
    if (a->nr == 1)
        fprintf(stderr, "hbg spans: %s holds no records line: no operations to show\n", hbg_arg_shown(a->rpath[0]));
    else
        fprintf(stderr, "hbg spans: none of the %zu records files holds a records line: no operations to show\n",
                a->nr);
    return 1;
}

static int run(const args *a, ps_log *L, sp_set *S, const rc_file *recs, dg_list *warn, int *werr)
{
    so_ctx o = {
        .L = L, .S = S, .fmt = a->fmt, .view = a->view, .warn = warn, .recs = recs, .nrecs = a->nr, .werr = werr};
    if (a->overlap)
        return run_overlap(a, L, S, &o, warn);
    sp_ops ops = {0};
    int rc = 0;
    if (a->nr && sp_op_tails(L, recs, a->nr, &ops, warn) != HBG_OK) {
        rc = 2;
    } else if (a->view == SO_OPS && !ops.lines) {
        sp_ops_free(&ops);
        return no_records_lines(a, L, S, warn);
    } else {
        o.ops = a->nr ? &ops : NULL;
        rc = so_view_out(&o) == HBG_OK ? 0 : 2;
    }
    if (rc)
        fprintf(stderr, "hbg spans: out of memory\n");
    sp_ops_free(&ops);
    return rc;
}

int hbg_cmd_spans(int argc, char **argv)
{
    args a;
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0)
        return rc;
    rc = 0;
    const char *path;
    char err[512];
    int fd = tx_open_log(a.log, &path, err, sizeof err);
    if (fd < 0) {
        fprintf(stderr, "hbg spans: %s\n", err);
        return 2;
    }
    rc_file recs[MAX_RECORDS_FILES];
    size_t nparsed = 0;
    dg_list warn;
    dg_init(&warn, 1000);
    ps_log L;
    sp_set S;
    bool have_log = false, have_set = false;
    rc = load_records(&a, recs, &nparsed, &warn);
    if (rc) {
        close(fd);
        goto done;
    }
    /* the bind-phase lines matter only to --records (joined to their pass) */
    ps_options po = {.keep_first = true, .keep_spans = true, .spans_only = a.nr == 0, .records_join = true};
    hbg_status rs = ps_read_fd(&L, path, fd, &po, err, sizeof err);
    close(fd);
    have_log = true;
    if (rs != HBG_OK) {
        fprintf(stderr, "hbg spans: %s\n", err);
        rc = 2;
        goto done;
    }
    if (L.stamp_conflict) {
        /* per-callable statistics of two different runs would be neither's */
        print_warnings(&L.warn);
        char mixed[PATH_MAX + 160];
        fprintf(stderr, "hbg spans: %s; refusing to merge them\n", ps_mixed_runs(&L, L.path, mixed, sizeof mixed));
        rc = 2;
        goto done;
    }
    hbg_status bs = sp_build(&S, &L);
    have_set = true; /* a failed build is freed too */
    if (bs != HBG_OK) {
        fprintf(stderr, "hbg spans: %s: out of memory\n", L.path);
        rc = 2;
        goto done;
    }
    if (S.ninv == 0 && a.view != SO_OPS) {
        char why[160];
        print_warnings(&L.warn);
        print_warnings(&S.warn);
        if (S.nforeign == 1) /* not "its 1 spans are all" */
            fprintf(stderr,
                    "hbg spans: %s: its one span is of the per-task (node, network) or external (ext.) "
                    "families, which carry no run identity: no invocations to show\n",
                    L.path);
        else if (S.nforeign)
            fprintf(stderr, "hbg spans: %s: its %zu spans are all of the per-task (node, network) or external (ext.) "
                            "families, which carry no run identity: no invocations to show\n",
                    L.path, S.nforeign);
        else if (L.ntorn)
            fprintf(stderr, "hbg spans: %s: %s\n", L.path, ps_none_whole(L.ntorn, 0, why, sizeof why));
        else
            fprintf(stderr, "hbg spans: %s has no [STRACE] spans (they are written at the default log level, "
                            "timing; HBG_LOG_LEVEL=warn or higher silences them)\n",
                    L.path);
        rc = 1;
        goto done;
    }
    int werr = 0;
    rc = run(&a, &L, &S, recs, &warn, &werr);
    if (hbg_stdout_done("hbg spans", werr) != 0)
        rc = 2;
done:
    for (size_t i = 0; i < nparsed; i++)
        rc_free(&recs[i]);
    if (have_set)
        sp_free(&S);
    if (have_log)
        ps_free(&L);
    dg_free(&warn);
    return rc;
}
