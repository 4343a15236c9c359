/* hbg timeline: a log (and its per-op records) as a Chrome trace-event file
 * that Perfetto and chrome://tracing load. Documentation: docs/timeline.md.
 * Exit: 0 written, 1 nothing to draw, 2 usage, unreadable input or a failed
 * write. Every anomaly is counted on stderr. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/longopt.h"
#include "tools/diag.h"
#include "cli/outfile.h"
#include "tools/passes.h"
#include "tools/records.h"
#include "tools/text.h"
#include "tools/timeline.h"

#define MAX_RECORDS_FILES 64

static void usage(FILE *f)
{
    fprintf(f,
            "usage: hbg timeline LOG [--records FILE]... [--per-invocation] -o OUT.json\n\n"
            "Writes LOG's [STRACE] spans and bind segments (and, with --records, every\n"
            "orchestrator operation of host_phase_records.jsonl) as Chrome trace-event JSON\n"
            "for ui.perfetto.dev or chrome://tracing: one process lane per rank, each bind\n"
            "pass's segments inside its chip.run.bind span, operations inside host_orch on\n"
            "the thread that did them, device-clock spans on their own lane, and an arrow\n"
            "(flow event) wherever one thread hands work to another. Anomalies\n"
            "(torn spans, records without a bind span, records and bind segments outside\n"
            "it, dropped records, spans that do not nest on their lane) are counted on\n"
            "stderr; a span the log holds twice (logs put together) is drawn once. LOG '-'\n"
            "is standard input.\n"
            "Documentation: docs/timeline.md.\n\n"
            "  --records FILE  a host_phase_records.jsonl (repeatable, up to 64 files, each\n"
            "                  once; '-' standard input)\n"
            "  --per-invocation  instead: one lane per invocation, host and device tracks\n"
            "  -o, --output F  the trace to write ('-' for stdout); never one of the inputs\n"
            "  -h, --help      this text\n\n"
            "exit status: 0 written, 1 nothing to draw, 2 usage error, unreadable input, out of\n"
            "memory or a failed write\n");
}

static void count(const char *what, size_t n)
{
    if (n)
        fprintf(stderr, "hbg timeline: %s: %zu\n", what, n);
}

/* "N things", or "1 thing" of one: a tally reads as English at one as at
 * any other count. Into b; returns it. */
static const char *tally(char *b, size_t cap, size_t n, const char *one, const char *many)
{
    snprintf(b, cap, "%zu %s", n, n == 1 ? one : many);
    return b;
}

/* The command line. */
typedef struct tl_args {
    const char *rpath[MAX_RECORDS_FILES];
    size_t nr;
    const char *out;
    const char *path;
    bool per_inv;       /* --per-invocation */
} tl_args;

/* Returns -1 to go on, else the exit status (help printed, or a usage
 * error said). */
static int parse_args(int argc, char **argv, tl_args *a)
{
    static const struct option opts[] = {{"records", required_argument, NULL, 'r'},
                                         {"output", required_argument, NULL, 'o'},
                                         {"per-invocation", no_argument, NULL, 'p'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    a->nr = 0;
    a->out = NULL;
    a->per_inv = false;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
        switch (c) {
        case 'r':
            if (a->nr == MAX_RECORDS_FILES) {
                fprintf(stderr, "hbg timeline: at most %d --records files\n", MAX_RECORDS_FILES);
                return 2;
            }
            a->rpath[a->nr++] = optarg;
            break;
        case 'o': a->out = optarg; break;
        case 'p': a->per_inv = true; break;
        case 'h': usage(stdout); return 0;
        default:
            if (c == '?' && hbg_cli_flag_value("hbg timeline", opts, argv[optind - 1]))
                return 2;
            fprintf(stderr, "hbg timeline: unknown or incomplete option '%s' (see `hbg timeline --help`)\n",
                    dg_shown(argv[optind - 1]));
            return 2;
        }
    }
    if (argc - optind != 1) {
        fprintf(stderr, "hbg timeline: expected exactly one LOG (see `hbg timeline --help`)\n");
        return 2;
    }
    if (!a->out) {
        fprintf(stderr, "hbg timeline: -o OUT.json is required (see `hbg timeline --help`)\n");
        return 2;
    }
    if (!*a->out) {
        fprintf(stderr, "hbg timeline: -o needs a file name (or - for stdout)\n");
        return 2;
    }
    if (a->per_inv && a->nr) {
        fprintf(stderr, "hbg timeline: --per-invocation draws spans only; --records does not apply to it\n");
        return 2;
    }
    a->path = argv[optind];
    /* writing over an input would destroy it (and read half a trace) */
    const char *inputs[MAX_RECORDS_FILES + 1];
    inputs[0] = a->path;
    memcpy(inputs + 1, a->rpath, a->nr * sizeof *a->rpath);
    if (hbg_outfile_not_input("hbg timeline", a->out, inputs, a->nr + 1) != 0)
        return 2;
    /* the log given as records too (or standard input as both), as
     * hbg spans refuses it */
    size_t i, j;
    if (hbg_same_file_pair(inputs, a->nr + 1, &i, &j) && i == 0) {
        fprintf(stderr, "hbg timeline: the log (%s) and --records %zu (%s) are the same file; give the log once\n",
                hbg_arg_shown(a->path), j, hbg_arg_shown(a->rpath[j - 1]));
        return 2;
    }
    /* the same records file twice (a link, another spelling) would draw
     * every operation twice, as hbg spans refuses too */
    if (hbg_same_file_pair(a->rpath, a->nr, &i, &j)) {
        fprintf(stderr,
                "hbg timeline: --records %zu (%s) and --records %zu (%s) are the same file: its records would be "
                "drawn twice; give each records file once\n",
                i + 1, hbg_arg_shown(a->rpath[i]), j + 1, hbg_arg_shown(a->rpath[j]));
        return 2;
    }
    /* an output that cannot be created fails now, not after a long log
     * (or a FIFO's writer) has been waited for and read */
    if (hbg_outfile_probe("hbg timeline", a->out))
        return 2;
    return -1;
}

static void print_warnings(const ps_log *L, const dg_list *warn)
{
    char buf[64];
    size_t n = L->warn.suppressed + warn->suppressed;
    for (size_t i = 0; i < L->warn.n; i++)
        fprintf(stderr, "hbg timeline: warning: %s\n", L->warn.msg[i]);
    for (size_t i = 0; i < warn->n; i++)
        fprintf(stderr, "hbg timeline: warning: %s\n", warn->msg[i]);
    if (n)
        fprintf(stderr, "hbg timeline: warning: %s\n", dg_more(n, buf, sizeof buf));
}

/* Why a log without spans, passes or records draws nothing, and what to
 * run: the level its stamp shows when that level writes no TIMING lines,
 * else the breakdown switch. */
static void nothing_to_draw(const ps_log *L, const char *path, bool per_inv)
{
    char said[96];
    const char *quiet = ps_stamp_quiet_level(L, said, sizeof said);
    /* records there are, none whole: the level and the switch are not why */
    size_t torn = L->ntorn, bad = per_inv ? 0 : L->nbad_bind;
    if (torn || bad) {
        char why[160];
        fprintf(stderr, "hbg timeline: nothing to draw: %s: %s\n", path, ps_none_whole(torn, bad, why, sizeof why));
        return;
    }
    if (per_inv && !L->npass && !quiet)
        /* the breakdown switch adds bind lines, which this view does not draw */
        fprintf(stderr, "hbg timeline: nothing to draw: %s has no [STRACE] spans, which --per-invocation draws\n",
                path);
    else if (per_inv && L->npass)
        /* the bind lines are there; the view draws spans only */
        fprintf(stderr,
                "hbg timeline: nothing to draw: %s has no [STRACE] spans, which --per-invocation draws (its %zu "
                "bind pass%s are not drawn in that view)\n",
                path, L->npass, L->npass == 1 ? "" : "es");
    else if (quiet)
        fprintf(stderr,
                "hbg timeline: nothing to draw: %s has no [STRACE] spans and no bind-phase lines: its stamp "
                "shows %s, which writes no TIMING records; run at --log-level timing\n",
                path, said);
    else
        fprintf(stderr,
                "hbg timeline: nothing to draw: %s has no [STRACE] spans and no bind-phase lines (run with "
                "HBG_BIND_BREAKDOWN=1; the original runtime: SIMPLER_HBG_BIND_BREAKDOWN_ENABLE=1)\n",
                path);
}

/* The summary of a written trace, and every anomaly counted. Standard
 * output is named as such, as the error of writing it is ("wrote -" read
 * as a file of that name). */
static void print_report(const char *out, const tl_report *rep)
{
    char ev[48], sp[48], ds[48], sg[48], oc[64], rc[48], fl[64], ln[48];
    fprintf(
        stderr, "hbg timeline: wrote %s: %s (%s, %s, %s, %s, %s, %s, %s)\n",
        strcmp(out, "-") ? dg_shown(out) : "standard output", tally(ev, sizeof ev, rep->events, "event", "events"),
        tally(sp, sizeof sp, rep->spans, "span", "spans"),
        tally(ds, sizeof ds, rep->device_spans, "device span", "device spans"),
        tally(sg, sizeof sg, rep->segments, "bind segment", "bind segments"),
        tally(oc, sizeof oc, rep->orch_copies, "host_orch copy on another thread", "host_orch copies on other threads"),
        tally(rc, sizeof rc, rep->records, "record", "records"),
        tally(fl, sizeof fl, rep->flows, "hand-off arrow of 2 events", "hand-off arrows of 2 events"),
        tally(ln, sizeof ln, rep->lane_names, "lane name", "lane names"));
    count("malformed [STRACE] records (not drawn)", rep->torn);
    count("records lines whose (pid, inv) has no chip.run.bind span (not drawn)", rep->rec_nobind);
    count("records outside their bind span (drawn, marked outside_bind_span)", rep->rec_outside_bind);
    count("records inside the bind span but outside host_orch (drawn, marked outside_host_orch)",
          rep->rec_outside_orch);
    if (rep->rec_dropped_lines)
        fprintf(stderr,
                "hbg timeline: records lines with dropped > 0: %zu (%" PRIu64 " record%s refused by the pool)\n",
                rep->rec_dropped_lines, rep->rec_dropped, rep->rec_dropped == 1 ? "" : "s");
    count("records lines not in the schema (skipped)", rep->rec_bad_lines);
    count("bind passes without a chip.run.bind span", rep->pass_nospan);
    count("bind segments outside their chip.run.bind span (drawn, marked outside_bind_span)", rep->seg_outside_bind);
    count("bind passes without pid/inv (not drawn)", rep->pass_unplaced);
    count("processes without a clock anchor (no wall_ns)", rep->pids_no_anchor);
}

/* The trace, written through the atomic output file (a failed write
 * leaves no half trace under OUT); the warnings after it. Returns the
 * exit status. */
static int write_trace(ps_log *L, const rc_file *recs, size_t nr, bool per_inv, const char *out, dg_list *warn)
{
    hbg_outfile of;
    if (hbg_outfile_open(&of, "hbg timeline", out) != 0)
        return 2;
    tl_report rep;
    errno = 0;
    hbg_status st = per_inv ? tl_write_per_invocation(L, of.f, &rep, warn) : tl_write(L, recs, nr, of.f, &rep, warn);
    int werr = errno ? errno : EIO; /* the failed write's, before anything else can set it */
    /* A trace without one slice is no profile to a viewer (speedscope
     * refuses it): every span and pass was of a kind that has no place on
     * it. A file is then not kept. */
    bool empty = st == HBG_OK && rep.spans + rep.device_spans + rep.segments + rep.records == 0;
    bool written = hbg_outfile_close(&of, st == HBG_OK && !empty) == 0;
    print_warnings(L, warn);
    if (st != HBG_OK) {
        const char *why = st == HBG_E_NOMEM ? "out of memory" : strerror(werr);
        /* standard output held in a temporary: it is the temporary's
         * folder that is full, not standard output */
        if (of.spool_dir && st != HBG_E_NOMEM)
            fprintf(stderr,
                    "hbg timeline: cannot write the temporary file in %s that holds %s until it is complete: %s\n",
                    dg_shown(of.spool_dir), hbg_outfile_held(&of), why);
        else
            fprintf(stderr, "hbg timeline: cannot write %s: %s\n", strcmp(out, "-") ? dg_shown(out) : "standard output",
                    why);
        return 2;
    }
    if (empty) {
        fprintf(stderr,
                "hbg timeline: nothing to draw: no span, bind segment or record of %s has a place on the trace "
                "(see the warnings)\n",
                L->path);
        return 1;
    }
    if (!written)
        return 2;
    print_report(out, &rep);
    return 0;
}

int hbg_cmd_timeline(int argc, char **argv)
{
    tl_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0)
        return rc;
    rc = 0;
    const char *path = a.path;
    size_t nr = a.nr;
    const char *const *rpath = a.rpath;
    char err[512];
    rc_file recs[MAX_RECORDS_FILES];
    size_t nparsed = 0;
    ps_log L;
    bool have_log = false;
    dg_list warn;
    dg_init(&warn, 1000);

    int lfd = tx_open_log(path, &path, err, sizeof err);
    if (lfd < 0) {
        fprintf(stderr, "hbg timeline: %s\n", err);
        return 2;
    }
    /* read first, one after the other (each opened, read and closed: a
     * FIFO's writer may fill them in turn): a records file that cannot be
     * read fails the command before the log is read, and what the records
     * say is what they said then, whatever happens to the file while the
     * log is read */
    for (; nparsed < nr; nparsed++)
        if (rc_load(&recs[nparsed], rpath[nparsed], &warn, err, sizeof err) != HBG_OK) {
            nparsed++;
            fprintf(stderr, "hbg timeline: %s\n", err);
            rc = 2;
            goto done;
        }
    if (rc_drop_repeats(recs, nr, &warn) != HBG_OK) {
        fprintf(stderr, "hbg timeline: %s: out of memory\n", dg_shown(rpath[0]));
        rc = 2;
        goto done;
    }
    ps_options po = {.keep_first = true, .keep_spans = true, .runs_apart = true, .draws = true};
    hbg_status rs = ps_read_fd(&L, path, lfd, &po, err, sizeof err);
    close(lfd);
    lfd = -1;
    have_log = true;
    if (rs != HBG_OK) {
        fprintf(stderr, "hbg timeline: %s\n", err);
        rc = 2;
        goto done;
    }
    /* Drawn all the same: each run's processes get their own lanes. */
    char mixed[PATH_MAX + 160];
    if (L.stamp_conflict)
        dg_add(&warn, "%s; both are drawn, and the trace's stamp is the first's",
               ps_mixed_runs(&L, path, mixed, sizeof mixed));
    size_t nrec_lines = 0;
    for (size_t i = 0; i < nr; i++)
        nrec_lines += recs[i].nline;
    if (L.nspan == 0 && (a.per_inv || (L.npass == 0 && nrec_lines == 0))) {
        print_warnings(&L, &warn);
        nothing_to_draw(&L, L.path, a.per_inv); /* L.path: the name as a message shows it */
        rc = 1;
        goto done;
    }
    rc = write_trace(&L, recs, nr, a.per_inv, a.out, &warn);
done:
    for (size_t i = 0; i < nparsed; i++)
        rc_free(&recs[i]);
    if (have_log)
        ps_free(&L);
    dg_free(&warn);
    if (lfd >= 0)
        close(lfd);
    return rc;
}
