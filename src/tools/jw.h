/* A small buffered JSON writer: numbers formatted by hand (no printf on the
 * timeline's per-event path), strings escaped so any log bytes, including
 * invalid UTF-8, still make valid JSON. */
#ifndef HBG_TOOLS_JW_H
#define HBG_TOOLS_JW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct jw {
    FILE *f;
    char *buf;
    size_t n, cap;
    bool err;              /* a write failed (disk full, closed pipe) */
} jw;

bool jw_init(jw *w, FILE *f);
bool jw_flush(jw *w);          /* false if any write failed */
void jw_free(jw *w);

/* The writes of a trace are millions of short pieces: the common case (the
 * piece fits) is inline, so a literal's copy is a few moves, not a call. */
void jw_raw_slow(jw *w, const char *s, size_t n);
static inline void jw_raw(jw *w, const char *s, size_t n)
{
    if (n <= 16 && w->cap - w->n >= 16) {
        /* two overlapping words cover any length from 8 to 16 */
        char *d = w->buf + w->n;
        if (n >= 8) {
            memcpy(d, s, 8);
            memcpy(d + n - 8, s + n - 8, 8);
        } else if (n >= 4) {
            memcpy(d, s, 4);
            memcpy(d + n - 4, s + n - 4, 4);
        } else {
            for (size_t i = 0; i < n; i++)
                d[i] = s[i];
        }
        w->n += n;
    } else if (w->cap - w->n >= n) {
        memcpy(w->buf + w->n, s, n);
        w->n += n;
    } else {
        jw_raw_slow(w, s, n);
    }
}
static inline void jw_lit(jw *w, const char *s)
{
    jw_raw(w, s, strlen(s));
}
/* A string literal: its length is known at compile time. */
#define JW_LIT(w, s) jw_raw((w), (s), sizeof(s) - 1)
void jw_u64(jw *w, uint64_t v);
void jw_u64str(jw *w, uint64_t v);        /* "123": exact where a double is not */
void jw_us(jw *w, uint64_t ns);           /* ns as microseconds: 5120000000.317 */
/* The duration of a slice that starts at ts (written by jw_us), as the
 * microseconds a reader must add to ts's double to land exactly on the
 * double of ts + dur: 135.77999973297119 from 5000000000.1, not 135.78,
 * which on a lane moved to start at 5000000000.1 (speedscope's) ends after
 * 5000000135.88 - 5000000000.1 in doubles. So a slice ends exactly where
 * the next one starts or its parent ends. Rounded to three decimals it is
 * dur in microseconds; where those decimals already sum exactly, they are
 * what is written (jw_us). */
void jw_dur_us(jw *w, uint64_t ts, uint64_t dur);
void jw_str(jw *w, const char *s, size_t n);  /* quoted and escaped */

/* Escapes into a caller buffer (for printf users); returns out. */
char *jw_escape(const char *s, size_t n, char *out, size_t outlen);

#endif
