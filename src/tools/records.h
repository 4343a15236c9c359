/* The per-op records file, host_phase_records.jsonl (docs/log-format.md, "Per-op records"):
 * one JSON object per line, one line per armed bind pass. Lines that do not
 * follow the schema are reported with their line number and skipped; a
 * number past 64 bits (or negative) is such a line. Every value from 0 to
 * 2^64 - 1 is read exactly, as the runtime writes them. */
#ifndef HBG_TOOLS_RECORDS_H
#define HBG_TOOLS_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "hbg/status.h"
#include "tools/diag.h"

/* The reader's limits: distinct phase names in one file, and the length
 * of one name. A record past either skips its line, naming the limit. */
#define RC_MAX_PHASES 64
#define RC_MAX_NAME 32
#define RC_STR_(x) #x
#define RC_STR(x) RC_STR_(x)

typedef struct rc_rec {
    uint64_t start, end, detail, tid;
    uint16_t phase;         /* index into rc_file.phase */
} rc_rec;

typedef struct rc_line {
    uint64_t pid, inv, dropped;
    size_t lineno;
    size_t first, n;        /* its records: rec[first .. first+n) */
} rc_line;

typedef struct rc_file {
    const char *path;
    rc_line *line;
    size_t nline, capline;
    rc_rec *rec;
    size_t nrec, caprec;
    char phase[RC_MAX_PHASES][RC_MAX_NAME + 1];
    int nphase;
    size_t nbad;            /* lines skipped */
} rc_file;

/* The longest line read whole: a pass's line holds every record of it
 * (the default pool, 4 x 65536 records, writes about 30 MB); a longer one
 * is read as its first RC_MAX_LINE bytes (and so skipped, with a warning
 * naming the limit), and an endless input (/dev/zero) holds no more. */
#define RC_MAX_LINE ((size_t)1 << 30)

/* Parses buf; problems are added to warn as "PATH:LINE: ...". HBG_E_NOMEM
 * is the only failure; an unusable line is a warning and a count. */
hbg_status rc_parse(rc_file *f, const char *path, const char *buf, size_t len, dg_list *warn);

/* The same, read from fd to its end in whole-line pieces, a line read
 * whole up to max_line bytes (0: RC_MAX_LINE; tests use small ones).
 * Failures: HBG_E_NOMEM, HBG_E_IO (a read failed), each with a one-line
 * reason in err. */
hbg_status rc_read_fd(rc_file *f, const char *path, int fd, size_t max_line, dg_list *warn, char *err,
                      size_t errlen);

/* The file at path, opened, read with rc_read_fd and closed (f is left
 * for rc_free whatever the outcome). HBG_E_IO also when it cannot be
 * opened or is a directory. */
hbg_status rc_load(rc_file *f, const char *path, dg_list *warn, char *err, size_t errlen);
/* A pass writes one records line, so a file holds a pass once (a second
 * line skipped, with a warning); across the files f[0..n) the same: a
 * pass's line in a later file (a copy of a file, one given under two
 * names that are not links) is skipped there, counted in its nbad, with
 * "R2:L: a second records line for pid=P inv=I (the first is R1:K); line
 * skipped", rather than drawn or counted twice. Its records stay in rec,
 * reached by no line. HBG_E_NOMEM is the only failure (nothing skipped). */
hbg_status rc_drop_repeats(rc_file *f, size_t n, dg_list *warn);
void rc_free(rc_file *f);

#endif
