/* A small buffered JSON writer: numbers formatted by hand (no printf on the
 * timeline's per-event path), strings escaped so any log bytes, including
 * invalid UTF-8, still make valid JSON: each byte that is no part of a
 * UTF-8 character is written U+FFFD (jw.c, escape_at). */
#ifndef HBG_TOOLS_JW_H
#define HBG_TOOLS_JW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct bw;

/* Small pieces the compiler would otherwise weigh case by case and call. */
#define JW_ALWAYS_INLINE __attribute__((always_inline))

typedef struct jw {
    FILE *f;
    char *buf;
    size_t n, cap;
    uint64_t out;          /* bytes handed on before buf's */
    int err;               /* 0, or the errno of the first write that failed (disk
                              full, closed pipe), for jw_flush to give back */
    struct bw *bw;         /* the writer thread, once jw_background started it */
} jw;

bool jw_init(jw *w, FILE *f);
/* From here on, full buffers are written to f's descriptor by a thread of
 * their own while the caller goes on (bgwrite.h): for outputs of tens of
 * megabytes. f is flushed first and must not be written to otherwise
 * until jw_flush. False, and nothing changed, where no thread could be
 * started or f has no descriptor. */
bool jw_background(jw *w);
/* Everything written so far handed to f (with jw_background: written).
 * False if any write failed, with errno set to the failed write's. */
bool jw_flush(jw *w);
void jw_free(jw *w);
/* Bytes written so far: what lies between two positions, when no more
 * than w->n, is still in the buffer, at its end. */
static inline uint64_t jw_pos(const jw *w)
{
    return w->out + w->n;
}
/* Hands on what the buffer holds (to f, or to the thread). */
void jw_spill(jw *w);
/* At least need bytes (need <= 64 KiB) of room at the end of the buffer:
 * the caller writes there and adds what it wrote to w->n. */
static inline char *jw_reserve(jw *w, size_t need)
{
    if (w->cap - w->n < need)
        jw_spill(w);
    return w->buf + w->n;
}

/* The writes of a trace are millions of short pieces: the common case (the
 * piece fits) is inline, so a literal's copy is a few moves, not a call. */
void jw_raw_slow(jw *w, const char *s, size_t n);
static inline void jw_raw(jw *w, const char *s, size_t n)
{
    if (n <= 64 && w->cap - w->n >= 64) {
        /* two overlapping blocks cover any length from one block to two */
        char *d = w->buf + w->n;
        if (n >= 32) {
            memcpy(d, s, 32);
            memcpy(d + n - 32, s + n - 32, 32);
        } else if (n >= 16) {
            memcpy(d, s, 16);
            memcpy(d + n - 16, s + n - 16, 16);
        } else if (n >= 8) {
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
/* A string literal: its length is known at compile time, so its copy is
 * a few moves wherever it is written (always inlined: the compiler would
 * otherwise weigh jw_raw's every case and call it). */
static inline JW_ALWAYS_INLINE void jw_lit_n(jw *w, const char *s, size_t n)
{
    if (w->cap - w->n >= n) {
        memcpy(w->buf + w->n, s, n);
        w->n += n;
    } else {
        jw_raw_slow(w, s, n);
    }
}
#define JW_LIT(w, s) jw_lit_n((w), (s), sizeof(s) - 1)
/* --- decimal digits ------------------------------------------------------
 * Eight digits at a time in one register (each step halves every lane's
 * number with a multiply and shift, no division chain), stored with one
 * write: the trace holds millions of numbers. The stores write past the
 * digits: callers keep 24 bytes of room, and only the digits count. */

/* The eight decimal digits of v < 10^8, as the byte values 0..9 of a word
 * whose lowest byte holds the first digit. */
static inline JW_ALWAYS_INLINE uint64_t jw_digits8(uint32_t v)
{
    uint64_t x = (uint64_t)(v / 10000) | (uint64_t)(v % 10000) << 32; /* two lanes of 4 digits */
    uint64_t q = ((x * 10486) >> 20) & 0x0000007F0000007Full;        /* each lane / 100 (exact below 43699) */
    x = q | (x - q * 100) << 16;                                      /* four lanes of 2 digits */
    q = ((x * 103) >> 10) & 0x000F000F000F000Full;                    /* each lane / 10 (exact below 179) */
    return q | (x - q * 10) << 8;                                     /* eight lanes of 1 digit */
}

static inline JW_ALWAYS_INLINE void jw_store8(char *out, uint64_t d)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    d = __builtin_bswap64(d);
#endif
    memcpy(out, &d, 8);
}

/* v < 10^8 as exactly eight digits, leading zeros kept. */
static inline JW_ALWAYS_INLINE void jw_fmt8(char *out, uint32_t v)
{
    jw_store8(out, jw_digits8(v) | 0x3030303030303030ull);
}

/* v < 10^8 without leading zeros ("0" for 0); returns the digit count and
 * writes 8 bytes. */
static inline JW_ALWAYS_INLINE size_t jw_fmt_lead8(char *out, uint32_t v)
{
    uint64_t d = jw_digits8(v);
    unsigned lz = d ? (unsigned)__builtin_ctzll(d) >> 3 : 7; /* leading zero digits: the lowest bytes */
    jw_store8(out, (d | 0x3030303030303030ull) >> (8 * lz));
    return 8 - lz;
}

/* The decimal of v, as printf's %llu writes it; returns its length (at
 * most 20) and writes up to 24 bytes. */
static inline JW_ALWAYS_INLINE size_t jw_fmt_u64(char *out, uint64_t v)
{
    if (v < 100000000u)
        return jw_fmt_lead8(out, (uint32_t)v);
    if (v < 10000000000000000ull) {
        uint64_t hi = v / 100000000u;
        size_t n = jw_fmt_lead8(out, (uint32_t)hi);
        jw_fmt8(out + n, (uint32_t)(v - hi * 100000000u));
        return n + 8;
    }
    uint64_t top = v / 10000000000000000ull, rest = v - top * 10000000000000000ull;
    uint64_t mid = rest / 100000000u;
    size_t n = jw_fmt_lead8(out, (uint32_t)top);
    jw_fmt8(out + n, (uint32_t)mid);
    jw_fmt8(out + n + 8, (uint32_t)(rest - mid * 100000000u));
    return n + 16;
}

/* v < 10^9 as exactly nine digits (nanoseconds of a second); writes 9 bytes. */
static inline JW_ALWAYS_INLINE void jw_fmt9(char *out, uint32_t v)
{
    uint32_t hi = v / 100000000u;
    out[0] = (char)('0' + hi);
    jw_fmt8(out + 1, v - hi * 100000000u);
}

void jw_u64(jw *w, uint64_t v);
void jw_u64str(jw *w, uint64_t v);        /* "123": exact where a double is not */
/* ns as microseconds: 5120000000.317; where a reader that truncates its
 * double times 1000 (Perfetto) would take those three decimals as ns - 1,
 * nudged past them (1.017001): every reader then takes exactly ns. */
void jw_us(jw *w, uint64_t ns);
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
/* Whether the string jw_str writes for s[0..n) is s itself: false where
 * a byte is no part of a UTF-8 character, which it writes as U+FFFD (so
 * two texts may be written as one string). */
bool jw_str_exact(const char *s, size_t n);
/* The string jw_str writes for s[0..n), unescaped (as a reader gets it):
 * s with each such byte as U+FFFD's three bytes. out has room for 3 * n
 * bytes; returns the length written there. */
size_t jw_str_text(const char *s, size_t n, char *out);

#endif
