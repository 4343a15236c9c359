/* What rank processes of `hbg run` tell the parent, and how it is printed.
 *
 * Each rank writes tagged fixed-size messages to its pipe: a summary when
 * set-up ends, one row per pass, a final summary. A rank that dies leaves
 * its messages so far, and the parent names what is missing.
 */
#ifndef HBG_CLI_RUN_REPORT_H
#define HBG_CLI_RUN_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "hbg/status.h"

enum { GOLDEN_SKIPPED = 0, GOLDEN_PASSED, GOLDEN_FAILED };
enum { MSG_SUMMARY = 1, MSG_ROW = 2 };

typedef struct rank_summary {
    uint32_t rank, pid;
    int32_t status;
    uint32_t golden;
    uint32_t rounds_done;
    int32_t log_errno;          /* the rank's first failed log write (hbg_log_write_error) */
    bool device_ran, final;
    uint64_t device_wall_min_ns;
    uint64_t records_dropped;   /* per-op records the pool refused, over all passes */
    uint32_t passes_dropping;   /* passes that refused one or more */
    char msg[256];
} rank_summary;

typedef struct pass_row {
    uint32_t rank, round, pid;
    int32_t status;
    uint64_t inv;
    uint64_t control_plane_ns, cp_ns[3]; /* host_orch, graph_upload, arena_h2d */
    uint32_t tasks, defs_uploaded, failed_segment;
    uint64_t heap_used, shipped;
    bool device_ran;
    uint64_t device_wall_ns;
} pass_row;

typedef struct rank_state {
    rank_summary sum;
    bool have_sum;
    int pid;
    int wait_status;   /* from waitpid, when reaped */
    bool reaped, stopped;
    unsigned char buf[sizeof(pass_row) + sizeof(rank_summary) + 8];
    size_t have;
} rank_state;

typedef struct run_collector {
    uint32_t ranks, rounds;
    rank_state rank[8];
    pass_row *rows;
    uint32_t nrows, cap;
} run_collector;

int collector_init(run_collector *c, uint32_t ranks, uint32_t rounds);
void collector_free(run_collector *c);
/* Feeds bytes read from rank r's pipe. */
void collector_feed(run_collector *c, uint32_t r, const void *data, size_t n);
/* Prints the pass table and the per-rank result lines; returns the exit
 * status (0 all ranks succeeded, 1 otherwise). */
int collector_print(const run_collector *c, FILE *out, bool skip_device, bool skip_golden);

/* Names on err each rank whose log writes failed ("hbg run: cannot write
 * LOG: why (rank N; ...)"); returns 1 when there was one, else 0. */
int collector_log_errors(const run_collector *c, const char *log_name, FILE *err);

/* Names on err each rank whose record pool refused records ("hbg run:
 * warning: rank N (pid P): K per-op records dropped in J of M passes
 * ..."): those passes' host_phase_records.jsonl lines are incomplete.
 * The exit status is not changed: the bind ran and was measured. */
void collector_record_drops(const run_collector *c, uint32_t per_thread, FILE *err);

/* Writes one tagged message to a rank's pipe. */
void report_send(int fd, uint32_t tag, const void *msg, size_t n);

#endif
