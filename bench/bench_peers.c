/* hbg beside StarPU and OpenMP tasks: the cost of building one pass's DAG.
 *
 * For each case (qwen, dsv4) the bench captures the flat task stream of
 * one orchestration (bench/peers/peers.h) and builds it, pass after pass,
 * interleaved:
 *   hbg        the case's own orchestration through the orchestrator, as a
 *              bind pass's host_orch runs it (Graphs re-recorded);
 *   hbg flat   the flat stream through hbg_submit_task & co, no Graph;
 *   hbg walk, flat walk   the same two with the tensor map's journal off:
 *              every dependency query walks the map, pass after pass;
 *   StarPU     starpu_task_build + submit per task, a handle per atom,
 *              workers paused;
 *   OpenMP     `omp task` with depend clauses, behind a closed gate.
 * Only building is timed (no task runs meanwhile). Each figure is the
 * pass's time divided by the stream's kernel and dummy tasks, the minimum
 * over warm passes (the first is dropped) with the range.
 *
 * Before timing, and alone with --check, the edges each system inferred
 * are checked against reference trackers run over the same stream
 * (bench/peers/peers_ref.c); any disagreement fails the run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peers/peers.h"
#include "peers/peers_hbg.h"
#include "peers/peers_omp.h"
#include "peers/peers_starpu.h"

#define MSG 512

static void usage(FILE *f)
{
    fprintf(f,
            "usage: bench_peers [--check [--fault]] [--passes N] [--case NAME]...\n"
            "\n"
            "Builds the qwen and dsv4 task sets with hbg (the case's orchestration and\n"
            "the flat stream, each with the tensor map's journal and without: walk),\n"
            "StarPU (starpu_task_build + submit, STARPU_R/W/RW on a handle per atom)\n"
            "and OpenMP tasks (depend clauses), interleaved, and prints the cost per\n"
            "task of building one pass (minimum over warm passes, [range]) and the\n"
            "ratio to hbg.\n"
            "\n"
            "  --check      only check that each system's edges agree with the reference\n"
            "               trackers; no timing\n"
            "  --fault      with --check: StarPU is given the tasks without their explicit\n"
            "               deps, so its check must fail (a test shows it does)\n"
            "  --passes N   passes per system and case, the first dropped (default 11)\n"
            "  --case NAME  qwen or dsv4 (repeatable; default both)\n"
            "\n"
            "StarPU reads its STARPU_* variables; unset, the bench uses STARPU_SILENT=1,\n"
            "STARPU_NCPU=1, STARPU_SCHED=eager. Set OMP_WAIT_POLICY=passive for OpenMP's\n"
            "idle gate threads to sleep at once.\n"
            "\n"
            "Exit status: 0 done, 1 a check failed or a system refused the task set,\n"
            "2 bad usage.\n");
}

typedef struct stat2 {
    double min, max;
    int n;
} stat2;

static void note(stat2 *s, double v)
{
    if (s->n == 0 || v < s->min)
        s->min = v;
    if (s->n == 0 || v > s->max)
        s->max = v;
    s->n++;
}

enum { SYS_HBG, SYS_FLAT, SYS_HBG_WALK, SYS_FLAT_WALK, SYS_STARPU, SYS_OMP, SYS_COUNT };
static const char *const sys_name[SYS_COUNT] = {"hbg", "hbg flat", "hbg walk", "flat walk", "StarPU", "OpenMP"};

typedef struct bcase {
    peers_case pc;
    peers_stream s;
    peers_edges ref_hbg, ref_seq;
    hbg_orch *orch, *flat, *orch_walk, *flat_walk;
    peers_sp *sp;
    peers_omp *omp;
    stat2 st[SYS_COUNT];
} bcase;

static void close_case(bcase *b)
{
    peers_omp_release(b->omp);
    peers_starpu_release(b->sp);
    peers_hbg_close(b->orch);
    peers_hbg_close(b->flat);
    peers_hbg_close(b->orch_walk);
    peers_hbg_close(b->flat_walk);
    peers_edges_free(&b->ref_hbg);
    peers_edges_free(&b->ref_seq);
    peers_stream_free(&b->s);
    peers_case_close(&b->pc);
}

static hbg_status open_case(bcase *b, const char *name, char *msg)
{
    memset(b, 0, sizeof *b);
    hbg_status st = peers_case_open(name, &b->pc, msg, MSG);
    if (!st)
        st = peers_capture(&b->pc, &b->s, msg, MSG);
    if (!st)
        st = peers_atoms(&b->s);
    if (!st)
        st = peers_ref_edges(&b->s, PEERS_RULE_HBG, &b->ref_hbg);
    if (!st)
        st = peers_ref_edges(&b->s, PEERS_RULE_SEQ, &b->ref_seq);
    if (!st)
        st = peers_hbg_open(&b->pc, b->pc.window, PEERS_HEAP_BASE, true, &b->orch);
    if (!st)
        st = peers_hbg_open(&b->pc, b->s.ntasks + 16, PEERS_HEAP_BASE, true, &b->flat);
    if (!st)
        st = peers_hbg_open(&b->pc, b->pc.window, PEERS_HEAP_BASE, false, &b->orch_walk);
    if (!st)
        st = peers_hbg_open(&b->pc, b->s.ntasks + 16, PEERS_HEAP_BASE, false, &b->flat_walk);
    if (!st && !(b->sp = peers_starpu_prepare(&b->s)))
        st = HBG_E_NOMEM;
    if (!st && !(b->omp = peers_omp_prepare(&b->s, &b->ref_seq)))
        st = HBG_E_NOMEM;
    if (st && !msg[0])
        snprintf(msg, MSG, "%s: preparing the task set failed: %s", name, hbg_strerror(st));
    return st;
}

/* One line of the check table; returns whether it holds. */
static bool check_line(const char *cname, const char *what, uint64_t got, uint64_t want)
{
    printf("  %-5s %-44s %10llu %10llu  %s\n", cname, what, (unsigned long long)got, (unsigned long long)want,
           got == want ? "ok" : "MISMATCH");
    return got == want;
}

/* Runs one pass of each system with its checks. */
static bool check_case(bcase *b, char *msg)
{
    const char *n = b->pc.name;
    uint64_t ns, edges = 0, viol = 0;
    bool ok = true;
    hbg_status st = peers_hbg_flat_pass(b->flat, &b->s, &ns);
    if (!st)
        st = peers_hbg_check_flat(b->flat, &b->s, msg, MSG);
    if (st) {
        if (!msg[0])
            snprintf(msg, MSG, "%s: hbg's flat pass failed: %s", n, hbg_strerror(st));
        return false;
    }
    ok &= check_line(n, "hbg flat: fanins = reference (hbg's rule)", peers_hbg_flat_edges(b->flat), b->ref_hbg.total);
    if (!(st = peers_hbg_flat_pass(b->flat_walk, &b->s, &ns)))
        st = peers_hbg_check_flat(b->flat_walk, &b->s, msg, MSG);
    if (st) {
        if (!msg[0])
            snprintf(msg, MSG, "%s: hbg's flat pass without the journal failed: %s", n, hbg_strerror(st));
        return false;
    }
    ok &= check_line(n, "flat walk: fanins = reference (hbg's rule)", peers_hbg_flat_edges(b->flat_walk),
                     b->ref_hbg.total);

    if ((st = peers_hbg_case_pass(b->orch, &b->pc, &ns))) {
        snprintf(msg, MSG, "%s: hbg's pass failed: %s", n, hbg_strerror(st));
        return false;
    }
    peers_hbg_counts c;
    peers_hbg_case_counts(b->orch, &c);
    ok &= check_line(n, "hbg: tasks + replays x nodes = stream tasks", c.outer_tasks + c.node_tasks, b->s.npeer);

    if ((st = peers_starpu_pass(b->sp, &ns, &edges))) {
        snprintf(msg, MSG, "%s: StarPU refused the task set", n);
        return false;
    }
    ok &= check_line(n, "StarPU: successors = reference (sequential)", edges, b->ref_seq.total);
    if ((st = peers_omp_pass(b->omp, true, &ns, &viol, msg, MSG)))
        return false;
    ok &= check_line(n, "OpenMP: reference edges not enforced", viol, 0);

    peers_cmp cmp;
    peers_ref_compare(&b->s, &b->ref_hbg, &b->ref_seq, &cmp);
    const uint64_t *k = b->ref_seq.by_kind;
    printf("  %-5s edges: hbg's rule %llu (the pass itself: %llu in the window + %llu replays x %llu nodes' =\n"
           "        %llu); sequential %llu (read-after-write %llu, write-after-read %llu, write-after-write\n"
           "        %llu, explicit only %llu); in both %llu, only hbg's %llu, only sequential %llu (%llu of them\n"
           "        write-after-read)\n",
           n, (unsigned long long)b->ref_hbg.total, (unsigned long long)c.outer_edges, (unsigned long long)c.replays,
           (unsigned long long)(c.replays ? c.node_edges / c.replays : 0),
           (unsigned long long)(c.outer_edges + c.node_edges), (unsigned long long)b->ref_seq.total,
           (unsigned long long)k[PEERS_EDGE_RAW], (unsigned long long)k[PEERS_EDGE_WAR],
           (unsigned long long)k[PEERS_EDGE_WAW], (unsigned long long)k[PEERS_EDGE_EXPLICIT],
           (unsigned long long)cmp.both, (unsigned long long)cmp.only_hbg, (unsigned long long)cmp.only_seq,
           (unsigned long long)cmp.only_seq_war);
    if (!ok)
        snprintf(msg, MSG, "%s: the systems' edges disagree with the reference (see MISMATCH above)", n);
    return ok;
}

/* One timed pass of system `sys`; per task in ns. */
static hbg_status timed(bcase *b, int sys, double *per_task, char *msg)
{
    uint64_t ns = 0;
    hbg_status st;
    switch (sys) {
    case SYS_HBG: st = peers_hbg_case_pass(b->orch, &b->pc, &ns); break;
    case SYS_FLAT: st = peers_hbg_flat_pass(b->flat, &b->s, &ns); break;
    case SYS_HBG_WALK: st = peers_hbg_case_pass(b->orch_walk, &b->pc, &ns); break;
    case SYS_FLAT_WALK: st = peers_hbg_flat_pass(b->flat_walk, &b->s, &ns); break;
    case SYS_STARPU: st = peers_starpu_pass(b->sp, &ns, NULL); break;
    default: st = peers_omp_pass(b->omp, false, &ns, NULL, msg, MSG); break;
    }
    if (st && !msg[0])
        snprintf(msg, MSG, "%s: a %s pass failed: %s", b->pc.name, sys_name[sys], hbg_strerror(st));
    *per_task = (double)ns / b->s.npeer;
    return st;
}

static void report(const bcase *b)
{
    printf("%s: %u tasks (the kernel and dummy tasks of %u submits, %u Graph calls inline), %u atoms, "
           "OpenMP team %d\n",
           b->pc.name, b->s.npeer, b->s.ntasks, b->s.replays, b->s.natoms, peers_omp_threads(b->omp));
    printf("  %-10s %10s %24s %8s %12s\n", "system", "ns/task", "range", "x hbg", "x hbg flat");
    for (int k = 0; k < SYS_COUNT; k++) {
        const stat2 *s = &b->st[k];
        char r[64];
        snprintf(r, sizeof r, "[%.1f .. %.1f]", s->min, s->max);
        printf("  %-10s %10.1f %24s %8.2f %12.2f\n", sys_name[k], s->min, r, s->min / b->st[SYS_HBG].min,
               s->min / b->st[SYS_FLAT].min);
    }
}

int main(int argc, char **argv)
{
    bool check = false, fault = false;
    int passes = 11;
    const char *names[2];
    int nnames = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--check") == 0) {
            check = true;
        } else if (strcmp(argv[i], "--fault") == 0) {
            fault = true;
        } else if (strcmp(argv[i], "--passes") == 0 && i + 1 < argc) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end || v < 2 || v > 1000) {
                fprintf(stderr, "bench_peers: --passes %s: expected an integer in [2, 1000]\n", argv[i]);
                return 2;
            }
            passes = (int)v;
        } else if (strcmp(argv[i], "--case") == 0 && i + 1 < argc) {
            const char *v = argv[++i];
            if ((strcmp(v, "qwen") && strcmp(v, "dsv4")) || nnames == 2) {
                fprintf(stderr, "bench_peers: --case %s: expected qwen or dsv4, at most twice\n", v);
                return 2;
            }
            names[nnames++] = v;
        } else {
            fprintf(stderr, "bench_peers: unknown argument '%s' (see --help)\n", argv[i]);
            return 2;
        }
    }
    if (fault && !check) {
        fprintf(stderr, "bench_peers: --fault goes with --check only\n");
        return 2;
    }
    if (nnames == 0) {
        names[nnames++] = "qwen";
        names[nnames++] = "dsv4";
    }

    char msg[MSG] = "";
    if (peers_starpu_init(msg, MSG)) {
        fprintf(stderr, "bench_peers: %s\n", msg);
        return 1;
    }
    bcase cases[2];
    int opened = 0, rc = 0;
    for (; opened < nnames; opened++) {
        if (open_case(&cases[opened], names[opened], msg)) {
            rc = 1;
            break;
        }
        if (fault)
            peers_starpu_drop_deps(cases[opened].sp);
    }
    if (!rc)
        printf("edge checks (got, want):\n");
    for (int c = 0; c < opened && !rc; c++)
        if (!check_case(&cases[c], msg))
            rc = 1;
    /* Interleaved: every system's pass p of every case before pass p + 1. */
    for (int p = 0; p < passes && !rc && !check; p++)
        for (int c = 0; c < opened && !rc; c++)
            for (int k = 0; k < SYS_COUNT && !rc; k++) {
                double v;
                if (timed(&cases[c], k, &v, msg))
                    rc = 1;
                else if (p > 0)
                    note(&cases[c].st[k], v);
            }
    if (!rc && !check) {
        printf("building one pass, per task: minimum over %d warm passes [range], and its ratio to hbg's\n",
               passes - 1);
        for (int c = 0; c < opened; c++)
            report(&cases[c]);
    }
    if (rc)
        fprintf(stderr, "bench_peers: %s\n", msg);
    for (int c = 0; c < opened + (rc && opened < nnames); c++)
        close_case(&cases[c]);
    peers_starpu_shutdown();
    return rc;
}
