/* Internal to src/trace/: the line builder every emitter shares.
 *
 * A log line is built in a caller's stack buffer and handed to the log as a
 * whole, so the one-write-per-line rule lives in exactly one place
 * (hbg__line_emit) and no emitter can split a line by accident.
 */
#ifndef HBG_TRACE_INTERNAL_H
#define HBG_TRACE_INTERNAL_H

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hbg/trace.h"

/* The longest line, newline included: one atomic write on a pipe. */
#define HBG_LINE_MAX PIPE_BUF

typedef struct hbg__linebuf {
    size_t n;        /* bytes of content so far, newline excluded */
    bool truncated;
    char b[HBG_LINE_MAX + 1]; /* +1: room for vsnprintf's terminating NUL */
} hbg__linebuf;

/* Starts "[mono_ns=..][T0x..][LEVEL] func: ". */
void hbg__line_init(hbg__linebuf *r, uint64_t mono_ns, hbg_level l, const char *func);
void hbg__line_puts(hbg__linebuf *r, const char *s);
void hbg__line_putc(hbg__linebuf *r, char c);
void hbg__line_printf(hbg__linebuf *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void hbg__line_vprintf(hbg__linebuf *r, const char *fmt, va_list ap);

/* Ensures this process's clock anchor is in `lg` (when TIMING records can
 * be), so callers do this before reading the mono_ns their records carry. */
void hbg__log_anchor(hbg_log *lg);

/* Ends the record (truncation mark, newline) and writes it with one write(2). */
void hbg__line_emit(hbg_log *lg, hbg__linebuf *r);

#endif
