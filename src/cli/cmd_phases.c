/* hbg phases: per-segment statistics of the bind passes in a log.
 * Output: docs/phases.md. Exit: 0 ok, 1 no usable passes, 2 usage or an
 * input that cannot be read or is refused. */
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
#include "tools/jw.h"
#include "tools/phstats.h"
#include "util/printable.h"

enum { FMT_TABLE, FMT_JSON, FMT_CSV };

static void usage(FILE *f)
{
    fprintf(f,
            "usage: hbg phases LOG [--rounds N] [--ranks R] [--keep-first] [--format table|json|csv]\n\n"
            "Groups the bind-phase lines of LOG into passes (one bind of one rank) and prints,\n"
            "per segment, min / median / max / n of dur_ns over the warm passes, and the total:\n"
            "the control-plane segments (host_orch + graph_upload + arena_h2d, plus the retired\n"
            "relocate and sm_h2d when present) summed within each pass, then min / median / max.\n"
            "The first pass of each rank is cold and dropped. Reads logs of hbg and of the\n"
            "original runtime. LOG '-' is standard input. Documentation: docs/phases.md.\n\n"
            "  --rounds N      check that each rank shows N passes, 1 to 1000000 (a mismatch\n"
            "                  is a warning)\n"
            "  --ranks R       check that the log shows R ranks, 1 to 1000000 (a mismatch is a\n"
            "                  warning)\n"
            "  --keep-first    keep each rank's cold first pass in the statistics\n"
            "  --format F      table (default), json or csv\n"
            "  -h, --help      this text\n\n"
            "exit status: 0 ok, 1 no usable passes, 2 usage error, unusable input or a failed\n"
            "write\n");
}

static bool parse_count(const char *s, unsigned long *out)
{
    char *end;
    /* digits alone: strtoul would also take leading blanks and a sign */
    if (!s || *s < '0' || *s > '9')
        return false;
    unsigned long v = strtoul(s, &end, 10);
    if (*end || v == 0 || v > 1000000)
        return false;
    *out = v;
    return true;
}

static void rank_label(const ps_rank *k, char *out, size_t n)
{
    if (k->has_pid)
        snprintf(out, n, "pid=%" PRIu64, k->pid);
    else
        snprintf(out, n, "thread 0x%" PRIx64, k->thread);
}

/* Each rank's passes, "pid=1: 3, pid=2: 4", into buf (cap >= 128). What
 * does not fit ends in ", ... (N more)": a list cut without a word would
 * read as every rank there is. */
static void rank_passes(const ps_log *L, char *buf, size_t cap)
{
    enum { TAIL = 40 }; /* ", ... (N more)" with N of 20 digits */
    char lab[64], item[96];
    size_t k = 0, i;
    buf[0] = 0;
    for (i = 0; i < L->nrank; i++) {
        rank_label(&L->rank[i], lab, sizeof lab);
        size_t m = (size_t)snprintf(item, sizeof item, "%s%s: %zu", i ? ", " : "", lab, L->rank[i].npasses);
        /* the last rank needs no room kept for the tail after it */
        if (k + m + (i + 1 < L->nrank ? TAIL : 0) >= cap)
            break;
        memcpy(buf + k, item, m + 1);
        k += m;
    }
    if (i < L->nrank)
        snprintf(buf + k, cap - k, ", ... (%zu more)", L->nrank - i);
}

static void check_shape(ps_log *L, unsigned long rounds, unsigned long ranks)
{
    char buf[512];
    bool same = true;
    for (size_t i = 1; i < L->nrank; i++)
        if (L->rank[i].npasses != L->rank[0].npasses)
            same = false;
    if (!same) {
        rank_passes(L, buf, sizeof buf);
        if (rounds)
            dg_add(&L->warn, "%s: --rounds %lu, but the ranks show different numbers of passes (%s)", L->path,
                   rounds, buf);
        else
            dg_add(&L->warn, "%s: the ranks show different numbers of passes (%s)", L->path, buf);
    } else if (rounds && L->nrank && L->rank[0].npasses != rounds) {
        dg_add(&L->warn, "%s: --rounds %lu, but the log shows %zu pass%s per rank", L->path, rounds,
               L->rank[0].npasses, L->rank[0].npasses == 1 ? "" : "es");
    }
    if (ranks && L->nrank != ranks)
        dg_add(&L->warn, "%s: --ranks %lu, but the log shows %zu rank%s", L->path, ranks, L->nrank,
               L->nrank == 1 ? "" : "s");
}

static void print_warnings(const ps_log *L)
{
    char more[64];
    for (size_t i = 0; i < L->warn.n; i++)
        fprintf(stderr, "hbg phases: warning: %s\n", L->warn.msg[i]);
    if (L->warn.suppressed)
        fprintf(stderr, "hbg phases: warning: %s\n", dg_more(L->warn.suppressed, more, sizeof more));
}

static void fig_table(FILE *f, int w, const char *name, const phs_fig *g)
{
    if (!g->n)
        return;
    if (g->missing)
        fprintf(f, "  %-*s varies: %" PRIu64 "..%" PRIu64 ", missing from %zu of %zu used passes (see warnings)\n", w,
                name, g->min, g->max, g->missing, g->missing + g->n);
    else if (g->varies)
        fprintf(f, "  %-*s varies: %" PRIu64 "..%" PRIu64 " (see warnings)\n", w, name, g->min, g->max);
    else
        fprintf(f, "  %-*s %" PRIu64 "\n", w, name, g->value);
}

static void stat_row(FILE *f, int w, const char *name, bool cp, const phs_stat *s)
{
    char med[32];
    if (!s->n) { /* a rank none of whose passes was used: no figure, not 0 */
        fprintf(f, "%-*s %1s %15s %17s %15s %5zu\n", w, name, cp ? "*" : "", "-", "-", "-", s->n);
        return;
    }
    fprintf(f, "%-*s %1s %15" PRIu64 " %17s %15" PRIu64 " %5zu\n", w, name, cp ? "*" : "", s->min,
            phs_med_str(s->med, med, sizeof med), s->max, s->n);
}

/* The width of the table's name column: 18, or the longest name it
 * shows (a segment name of up to 64 characters, a rank of the original
 * runtime named by its thread), so every row's figures stay under the
 * header's. */
static int name_width(const ps_log *L, const phs_result *R, bool by_rank)
{
    size_t w = 18;
    for (int r = 0; r < R->nrow; r++)
        w = strlen(L->segname[R->row_seg[r]]) > w ? strlen(L->segname[R->row_seg[r]]) : w;
    char lab[64];
    for (size_t i = 0; by_rank && i < L->nrank; i++) {
        rank_label(&L->rank[i], lab, sizeof lab);
        w = 2 + strlen(lab) > w ? 2 + strlen(lab) : w;
    }
    return (int)w;
}

static size_t retired_passes(const ps_log *L, int seg)
{
    size_t n = 0;
    for (size_t i = 0; i < L->npass; i++)
        if (L->pass[i].used && (L->pass[i].present & (1u << seg)))
            n++;
    return n;
}

static void out_table(ps_log *L, const phs_result *R, const phs_stat *by_rank)
{
    FILE *f = stdout;
    fprintf(f, "log     %s\n", L->path);
    if (L->has_stamp) {
        fprintf(f, "stamp   ");
        hbg__fput_masked(f, L->stamp.p, L->stamp.n);
        fputc('\n', f);
    } else {
        fprintf(f, "stamp   none: this log has no [stamp] line, so nothing in it records the command and commit\n");
    }
    /* of the candidates: a cold pass dropped anyway is not also excluded */
    size_t excluded = 0;
    for (size_t i = 0; i < L->npass; i++)
        if (L->pass[i].defects && (!L->pass[i].cold || L->opt.keep_first))
            excluded++;
    fprintf(f, "passes  %zu in %zu rank%s: %zu cold (%s), %zu warm; %zu excluded; %zu used\n", L->npass, L->nrank,
            L->nrank == 1 ? "" : "s", L->ncold, L->opt.keep_first ? "kept" : "dropped", L->nwarm, excluded,
            L->nused);
    int w = name_width(L, R, by_rank != NULL);
    fprintf(f, "\n%-*s %1s %15s %17s %15s %5s\n", w, "segment", "", "min_ns", "median_ns", "max_ns", "n");
    for (int r = 0; r < R->nrow; r++) {
        int s = R->row_seg[r];
        stat_row(f, w, L->segname[s], (PS_CONTROL_MASK >> s) & 1, &R->row[r]);
    }
    stat_row(f, w, "total", true, &R->total);
    if (by_rank) {
        /* every rank's own total: the pooled one hides a slow rank */
        char lab[64], name[80];
        for (size_t i = 0; i < L->nrank; i++) {
            rank_label(&L->rank[i], lab, sizeof lab);
            snprintf(name, sizeof name, "  %s", lab);
            stat_row(f, w, name, false, &by_rank[i]);
        }
    }
    fprintf(f, "\n* control plane, summed within each pass into total:");
    int k = 0;
    for (int s = 0; s < L->nseg; s++)
        if (R->control & (1u << s))
            fprintf(f, "%s %s", k++ ? " +" : "", L->segname[s]);
    fputc('\n', f);
    if (by_rank)
        fprintf(f, "  total is over the passes of every rank; the rows under it, of each rank alone\n");
    char absent[64] = "";
    for (int s = PS_RELOCATE; s <= PS_SM_H2D; s++)
        if (!retired_passes(L, s))
            snprintf(absent + strlen(absent), sizeof absent - strlen(absent), "%s%s", absent[0] ? ", " : "",
                     L->segname[s]);
    if (absent[0])
        fprintf(f, "  retired kinds absent from every pass: %s\n", absent);

    fprintf(f, "\nexact figures (the same in every used pass unless marked)\n");
    /* 34, or "bytes " and the longest segment name with a figure */
    int fw = 34;
    for (int s = 0; s < L->nseg; s++)
        if (R->bytes[s].n && 6 + (int)strlen(L->segname[s]) > fw)
            fw = 6 + (int)strlen(L->segname[s]);
    fig_table(f, fw, "heap_used", &R->heap_used);
    fig_table(f, fw, "tasks", &R->tasks);
    char name[96];
    for (int s = 0; s < L->nseg; s++) {
        snprintf(name, sizeof name, "bytes %s", L->segname[s]);
        fig_table(f, fw, name, &R->bytes[s]);
    }
    for (int o = 0; o < PS_NOPS; o++) {
        snprintf(name, sizeof name, "host-orch %s count", ps_op_name(o));
        fig_table(f, fw, name, &R->op_count[o]);
    }
    if (L->warn.n)
        fprintf(f, "\n%zu warning%s (on stderr)\n", L->warn.n + L->warn.suppressed, L->warn.n == 1 ? "" : "s");
}

static void json_stat(jw *w, const phs_stat *s)
{
    char med[32];
    if (!s->n) {
        jw_lit(w, "{\"min_ns\": null, \"median_ns\": null, \"max_ns\": null, \"n\": 0}");
        return;
    }
    jw_lit(w, "{\"min_ns\": ");
    jw_u64(w, s->min);
    jw_lit(w, ", \"median_ns\": ");
    jw_lit(w, phs_med_str(s->med, med, sizeof med));
    jw_lit(w, ", \"max_ns\": ");
    jw_u64(w, s->max);
    jw_lit(w, ", \"n\": ");
    jw_u64(w, s->n);
    jw_lit(w, "}");
}

static void json_fig(jw *w, const phs_fig *g)
{
    if (!g->varies) {
        jw_u64(w, g->value);
        return;
    }
    jw_lit(w, "{\"varies\": true, \"min\": ");
    jw_u64(w, g->min);
    jw_lit(w, ", \"max\": ");
    jw_u64(w, g->max);
    if (g->missing) {
        jw_lit(w, ", \"missing\": ");
        jw_u64(w, g->missing);
    }
    jw_lit(w, "}");
}

static void out_json(ps_log *L, const phs_result *R, const phs_stat *by_rank)
{
    jw w;
    if (!jw_init(&w, stdout))
        return;
    jw_lit(&w, "{\"log\": ");
    jw_str(&w, L->file, strlen(L->file));
    jw_lit(&w, ", \"stamp\": ");
    if (L->has_stamp)
        jw_str(&w, L->stamp.p, L->stamp.n);
    else
        jw_lit(&w, "null");
    jw_lit(&w, ", \"passes\": ");
    jw_u64(&w, L->npass);
    jw_lit(&w, ", \"warm\": ");
    jw_u64(&w, L->nwarm);
    jw_lit(&w, ", \"cold\": ");
    jw_u64(&w, L->ncold);
    jw_lit(&w, ", \"used\": ");
    jw_u64(&w, L->nused);
    jw_lit(&w, ", \"ranks\": ");
    jw_u64(&w, L->nrank);
    jw_lit(&w, ", \"phases\": {");
    for (int r = 0; r < R->nrow; r++) {
        int s = R->row_seg[r];
        if (r)
            jw_lit(&w, ", ");
        jw_str(&w, L->segname[s], strlen(L->segname[s]));
        jw_lit(&w, ": ");
        json_stat(&w, &R->row[r]);
    }
    jw_lit(&w, "}, \"total\": ");
    json_stat(&w, &R->total);
    jw_lit(&w, ", \"total_by_rank\": [");
    for (size_t i = 0; by_rank && i < L->nrank; i++) {
        char lab[64];
        rank_label(&L->rank[i], lab, sizeof lab);
        jw_lit(&w, i ? ", {\"rank\": " : "{\"rank\": ");
        jw_str(&w, lab, strlen(lab));
        jw_lit(&w, ", \"total\": ");
        json_stat(&w, &by_rank[i]);
        jw_lit(&w, "}");
    }
    jw_lit(&w, "]");
    jw_lit(&w, ", \"control_plane\": [");
    int k = 0;
    for (int s = 0; s < L->nseg; s++)
        if (R->control & (1u << s)) {
            if (k++)
                jw_lit(&w, ", ");
            jw_str(&w, L->segname[s], strlen(L->segname[s]));
        }
    jw_lit(&w, "], \"retired\": [");
    for (int s = PS_RELOCATE; s <= PS_SM_H2D; s++) {
        if (s != PS_RELOCATE)
            jw_lit(&w, ", ");
        jw_lit(&w, "{\"segment\": ");
        jw_str(&w, L->segname[s], strlen(L->segname[s]));
        jw_lit(&w, ", \"passes\": ");
        jw_u64(&w, retired_passes(L, s));
        jw_lit(&w, "}");
    }
    jw_lit(&w, "], \"exact\": {");
    k = 0;
    if (R->heap_used.n) {
        jw_lit(&w, "\"heap_used\": ");
        json_fig(&w, &R->heap_used);
        k++;
    }
    if (R->tasks.n) {
        jw_lit(&w, k++ ? ", \"tasks\": " : "\"tasks\": ");
        json_fig(&w, &R->tasks);
    }
    jw_lit(&w, k++ ? ", \"bytes\": {" : "\"bytes\": {");
    int b = 0;
    for (int s = 0; s < L->nseg; s++)
        if (R->bytes[s].n) {
            if (b++)
                jw_lit(&w, ", ");
            jw_str(&w, L->segname[s], strlen(L->segname[s]));
            jw_lit(&w, ": ");
            json_fig(&w, &R->bytes[s]);
        }
    jw_lit(&w, "}, \"host_orch_counts\": {");
    b = 0;
    for (int o = 0; o < PS_NOPS; o++)
        if (R->op_count[o].n) {
            if (b++)
                jw_lit(&w, ", ");
            jw_str(&w, ps_op_name(o), strlen(ps_op_name(o)));
            jw_lit(&w, ": ");
            json_fig(&w, &R->op_count[o]);
        }
    jw_lit(&w, "}}, \"warnings\": [");
    for (size_t i = 0; i < L->warn.n; i++) {
        if (i)
            jw_lit(&w, ", ");
        jw_str(&w, L->warn.msg[i], strlen(L->warn.msg[i]));
    }
    /* as stderr has it: a script reading the JSON alone learns that the
     * list is not all there is */
    if (L->warn.suppressed) {
        char more[64];
        dg_more(L->warn.suppressed, more, sizeof more);
        jw_lit(&w, L->warn.n ? ", " : "");
        jw_str(&w, more, strlen(more));
    }
    jw_lit(&w, "]}\n");
    jw_flush(&w);
    jw_free(&w);
}

static void out_csv(ps_log *L, const phs_result *R)
{
    char med[32];
    printf("segment,control_plane,min_ns,median_ns,max_ns,n\n");
    for (int r = 0; r < R->nrow; r++) {
        int s = R->row_seg[r];
        const phs_stat *x = &R->row[r];
        printf("%s,%d,%" PRIu64 ",%s,%" PRIu64 ",%zu\n", L->segname[s], (int)((PS_CONTROL_MASK >> s) & 1), x->min,
               phs_med_str(x->med, med, sizeof med), x->max, x->n);
    }
    printf("total,1,%" PRIu64 ",%s,%" PRIu64 ",%zu\n", R->total.min, phs_med_str(R->total.med, med, sizeof med),
           R->total.max, R->total.n);
}

/* The command line. */
typedef struct phases_args {
    unsigned long rounds, ranks;    /* 0: not checked */
    int fmt;
    ps_options po;
    const char *log;
} phases_args;

/* Returns -1 to go on, else the exit status (help printed, or a usage
 * error said). */
static int parse_args(int argc, char **argv, phases_args *a)
{
    static const struct option opts[] = {
        {"rounds", required_argument, NULL, 'r'}, {"ranks", required_argument, NULL, 'k'},
        {"keep-first", no_argument, NULL, 'f'},   {"format", required_argument, NULL, 'F'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
    memset(a, 0, sizeof *a);
    a->fmt = FMT_TABLE;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'r':
            if (!parse_count(optarg, &a->rounds)) {
                fprintf(stderr, "hbg phases: --rounds expects an integer from 1 to 1000000, got '%s'\n",
                        dg_shown(optarg));
                return 2;
            }
            break;
        case 'k':
            if (!parse_count(optarg, &a->ranks)) {
                fprintf(stderr, "hbg phases: --ranks expects an integer from 1 to 1000000, got '%s'\n",
                        dg_shown(optarg));
                return 2;
            }
            break;
        case 'f': a->po.keep_first = true; break;
        case 'F':
            if (!strcmp(optarg, "table")) a->fmt = FMT_TABLE;
            else if (!strcmp(optarg, "json")) a->fmt = FMT_JSON;
            else if (!strcmp(optarg, "csv")) a->fmt = FMT_CSV;
            else {
                fprintf(stderr, "hbg phases: --format expects table, json or csv, got '%s'\n", dg_shown(optarg));
                return 2;
            }
            break;
        case 'h': usage(stdout); return 0;
        default:
            if (c == '?' && hbg_cli_flag_value("hbg phases", opts, argv[optind - 1]))
                return 2;
            fprintf(stderr, "hbg phases: unknown or incomplete option '%s' (see `hbg phases --help`)\n",
                    dg_shown(argv[optind - 1]));
            return 2;
        }
    }
    if (argc - optind != 1) {
        fprintf(stderr, "hbg phases: expected exactly one LOG (see `hbg phases --help`)\n");
        return 2;
    }
    a->log = argv[optind];
    /* results appended to the log they are read from (`>> LOG`) */
    if (hbg_outfile_not_input("hbg phases", "-", (const char *const[]){a->log}, 1))
        return 2;
    return -1;
}

int hbg_cmd_phases(int argc, char **argv)
{
    phases_args a;
    int prc = parse_args(argc, argv, &a);
    if (prc >= 0)
        return prc;
    unsigned long rounds = a.rounds, ranks = a.ranks;
    int fmt = a.fmt;
    ps_options po = a.po;
    phs_stat *by_rank = NULL;
    const char *path;
    char err[512];
    int fd = tx_open_log(a.log, &path, err, sizeof err);
    if (fd < 0) {
        fprintf(stderr, "hbg phases: %s\n", err);
        return 2;
    }
    ps_log L;
    int rc = 0;
    hbg_status rs = ps_read_fd(&L, path, fd, &po, err, sizeof err);
    close(fd);
    if (rs != HBG_OK) {
        fprintf(stderr, "hbg phases: %s\n", err);
        rc = 2;
        goto out;
    }
    if (L.stamp_conflict) {
        print_warnings(&L);
        char mixed[PATH_MAX + 160];
        fprintf(stderr, "hbg phases: %s; refusing to merge them\n", ps_mixed_runs(&L, L.path, mixed, sizeof mixed));
        rc = 2;
        goto out;
    }
    if (L.nbind == 0) {
        print_warnings(&L);
        char why[320];
        fprintf(stderr, "hbg phases: %s%s\n", L.path, ps_no_bind_why(&L, why, sizeof why));
        rc = 1;
        goto out;
    }
    check_shape(&L, rounds, ranks);
    if (L.nused == 0) {
        print_warnings(&L);
        if (L.nwarm == 0)
            fprintf(stderr,
                    "hbg phases: %s: every pass is the cold first pass of its rank (%zu rank%s, one pass each), "
                    "and cold passes are dropped; run at least 2 rounds (6 recommended), or pass --keep-first "
                    "to look at the cold passes\n",
                    L.path, L.nrank, L.nrank == 1 ? "" : "s");
        else {
            char why[256];
            ps_exclusions(&L, why, sizeof why);
            /* with --keep-first the cold passes were candidates too, and are counted in `why` */
            bool kf = L.opt.keep_first;
            size_t n = L.nwarm + (kf ? L.ncold : 0);
            char all[64];
            fprintf(stderr, "hbg phases: %s: no usable passes: %s excluded (%s; see the warnings)\n", L.path,
                    ps_all_passes(n, kf ? "" : "warm ", all, sizeof all), why);
        }
        rc = 1;
        goto out;
    }
    phs_result R;
    /* per-rank totals when there is more than one rank to tell apart */
    by_rank = L.nrank > 1 ? calloc(L.nrank, sizeof *by_rank) : NULL;
    hbg_status st = L.nrank > 1 && !by_rank ? HBG_E_NOMEM : phs_compute(&L, &R, by_rank);
    if (st != HBG_OK) {
        fprintf(stderr, "hbg phases: %s: out of memory\n", L.path);
        rc = 2;
        goto out;
    }
    print_warnings(&L);
    if (fmt == FMT_JSON)
        out_json(&L, &R, by_rank);
    else if (fmt == FMT_CSV)
        out_csv(&L, &R);
    else
        out_table(&L, &R, by_rank);
    if (hbg_stdout_flush("hbg phases") != 0)
        rc = 2;
out:
    free(by_rank);
    ps_free(&L);
    return rc;
}
