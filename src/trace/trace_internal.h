/* Internal to src/trace/: the record builder every emitter shares.
 *
 * A record is built in a caller's stack buffer and handed to the log as a
 * whole, so the one-write-per-record rule lives in exactly one place
 * (rec_emit) and no emitter can split a record by accident.
 */
#ifndef HBG_TRACE_INTERNAL_H
#define HBG_TRACE_INTERNAL_H

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hbg/trace.h"

/* The largest record, newline included: one atomic write on a pipe. */
#define HBG_REC_MAX PIPE_BUF

typedef struct hbg_recbuf {
    size_t n;        /* bytes of content so far, newline excluded */
    bool truncated;
    char b[HBG_REC_MAX + 1]; /* +1: room for vsnprintf's terminating NUL */
} hbg_recbuf;

/* Starts "[mono_ns=..][T0x..][LEVEL] func: ". */
void hbg_rec_init(hbg_recbuf *r, uint64_t mono_ns, hbg_level l, const char *func);
void hbg_rec_puts(hbg_recbuf *r, const char *s);
void hbg_rec_putc(hbg_recbuf *r, char c);
void hbg_rec_printf(hbg_recbuf *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void hbg_rec_vprintf(hbg_recbuf *r, const char *fmt, va_list ap);

/* Ensures this process's clock anchor is in `lg` (when TIMING records can
 * be), so callers do this before reading the mono_ns their records carry. */
void hbg_log_anchor(hbg_log *lg);

/* Ends the record (truncation mark, newline) and writes it with one write(2). */
void hbg_rec_emit(hbg_log *lg, hbg_recbuf *r);

#endif
