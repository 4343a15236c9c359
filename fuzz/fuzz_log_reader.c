/* libFuzzer target: the log reader (lexer, pass grouping, statistics),
 * the span views and the timeline writers on arbitrary bytes, through both readers: the
 * whole-buffer one (the input is not NUL-terminated, so any read past its
 * end is an ASan report) and the piecewise one `hbg phases` and
 * `hbg timeline` use (fed through a memfd, in reads of 16 B to 4 KiB),
 * which must find what the first found; and the spans-only read of
 * `hbg spans`. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tools/phstats.h"
#include "tools/spans.h"
#include "tools/timeline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every view of hbg spans, on the first few callables. */
static void use_spans(ps_log *L, FILE *sink)
{
    sp_set S;
    if (sp_build(&S, L) == HBG_OK) {
        for (size_t c = 0; c < S.ncall && c < 4; c++) {
            sp_stage *st;
            sp_node *nd;
            sp_round *r;
            size_t n;
            sp_tree_notes notes;
            sp_sat_note sat;
            unsigned cols;
            sp_stat sum[SP_NCOL];
            if (sp_tpot(&S, c, &st, &n, &sat) == HBG_OK)
                free(st);
            if (sp_tree(&S, c, &nd, &n, &notes) == HBG_OK)
                free(nd);
            if (sp_rounds(&S, c, &r, &n, &cols, sum) == HBG_OK)
                free(r);
        }
        sp_overlap ov;
        char err[256];
        sp_check_overlap(&S, "chip.run.bind", "chip.run.runner_run", true, &ov, err, sizeof err);
        sp_overlap_free(&ov);
    }
    sp_free(&S);
    dg_list w;
    dg_init(&w, 100);
    tl_report rep;
    tl_write_per_invocation(L, sink, &rep, &w);
    dg_free(&w);
}

static void use(ps_log *L, FILE *sink)
{
    /* what the commands read from the stamp, and how they explain exclusions */
    char said[96];
    volatile const char *quiet = ps_stamp_quiet_level(L, said, sizeof said);
    (void)quiet;
    char why[256];
    ps_exclusions(L, why, sizeof why);
    if (L->nused) {
        phs_result R;
        phs_stat *by_rank = calloc(L->nrank ? L->nrank : 1, sizeof *by_rank);
        if (by_rank)
            phs_compute(L, &R, by_rank);
        free(by_rank);
    }
    if (sink) {
        dg_list w;
        dg_init(&w, 100);
        tl_report rep;
        tl_write(L, NULL, 0, sink, &rep, &w);
        dg_free(&w);
        use_spans(L, sink);
    }
}

/* The longest line of data, lines ending at '\n', or at '\r' in a text
 * without a '\n' (as the line reader splits one past its bound). */
static size_t longest_line(const uint8_t *data, size_t size)
{
    uint8_t eol = memchr(data, '\n', size) ? '\n' : '\r';
    size_t best = 0, run = 0;
    for (size_t i = 0; i < size; i++) {
        run++;
        if (data[i] == eol) {
            best = run > best ? run : best;
            run = 0;
        }
    }
    return run > best ? run : best;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *sink;
    if (!sink)
        sink = fopen("/dev/null", "w");
    ps_options o = {.keep_first = size && (data[0] & 1), .keep_spans = true};
    ps_log L;
    /* what the whole-buffer reader found, which the piecewise one must
     * find too, however the reads split the lines */
    size_t seen[6] = {0};
    bool whole_ok = ps_read(&L, "fuzz.log", (const char *)data, size, &o) == HBG_OK;
    if (whole_ok) {
        size_t s6[6] = {L.npass, L.nused, L.warn.n, L.nbind, L.norch, L.nspans};
        memcpy(seen, s6, sizeof seen);
        use(&L, sink);
    }
    ps_free(&L);

    int fd = memfd_create("fuzz-log", MFD_CLOEXEC);
    if (fd < 0)
        return 0;
    size_t off = 0;
    while (off < size) {
        ssize_t w = write(fd, data + off, size - off);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    lseek(fd, 0, SEEK_SET);
    char err[256];
    o.keep_spans = size > 1 && (data[1] & 1);
    /* reads of 16 bytes to 4 KiB, so lines split across reads (and the
     * read-ahead thread) are exercised, not only one whole-file read; the
     * unit tests split fixtures down to single bytes */
    o.chunk = size > 2 ? (size_t)16 << (data[2] % 9) : 0;
    /* a line bound of a few reads at most, so that a text of CR-only line
     * ends passes it and is split at its CRs; a line past it is cut, which
     * the whole-buffer reader does not do, so the counts are then not
     * compared */
    o.max_line = size > 3 && (data[3] & 1) ? o.chunk * (1 + data[3] % 4) : 0;
    bool comparable = !o.max_line || longest_line(data, size) <= o.max_line;
    if (ps_read_fd(&L, "fuzz.log", fd, &o, err, sizeof err) == HBG_OK) {
        size_t s6[6] = {L.npass, L.nused, L.warn.n, L.nbind, L.norch, L.nspans};
        if (whole_ok && comparable && memcmp(seen, s6, sizeof seen) != 0)
            abort(); /* the two readers disagree: a line was split or lost */
        use(&L, o.keep_spans ? sink : NULL);
    }
    ps_free(&L);
    /* hbg spans' read: spans, anchors and the stamp only. No count to
     * compare: text that a bind record swallows in a full read (a marker
     * without its prefix) is a record here. */
    lseek(fd, 0, SEEK_SET);
    o.keep_spans = true;
    o.spans_only = true;
    if (ps_read_fd(&L, "fuzz.log", fd, &o, err, sizeof err) == HBG_OK)
        use(&L, sink);
    ps_free(&L);
    close(fd);
    return 0;
}
