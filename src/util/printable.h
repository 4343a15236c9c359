/* Control bytes in text that quotes what a user or a log wrote.
 *
 * A message that quotes its input (a log's bytes, a program's own words)
 * must not carry an escape sequence to the terminal that shows it, nor a
 * line break that splits the one line it is. Bytes from 0x80 stay where
 * they are UTF-8 text; not the C1 controls (U+0080..U+009F, CSI among
 * them), which a terminal may act on whether they come as UTF-8 (C2 9B)
 * or as a bare byte (9B) read by a terminal in an 8-bit mode, nor a byte
 * that starts no well-formed character (FF, a lone C3): a log is bytes,
 * and what a message passes on of it must stay UTF-8 for the terminal,
 * the log line or the JSON string that carries it.
 */
#ifndef HBG_UTIL_PRINTABLE_H
#define HBG_UTIL_PRINTABLE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* Below 0x20, or DEL. */
static inline bool hbg__is_control(unsigned char c)
{
    return c < 0x20 || c == 0x7f;
}

/* The length of the well-formed UTF-8 character at s[0..n) (2 to 4
 * bytes; no overlong form, surrogate or code point past U+10FFFF), or 0
 * when s starts none (ASCII included). */
static inline size_t hbg__utf8_len(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    unsigned char c = p[0];
    size_t len;
    unsigned char lo = 0x80, hi = 0xbf; /* the second byte's range */
    if (c >= 0xc2 && c <= 0xdf)
        len = 2;
    else if (c >= 0xe0 && c <= 0xef)
        len = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
    else if (c >= 0xf0 && c <= 0xf4)
        len = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
    else
        return 0;
    if (n < len || p[1] < lo || p[1] > hi)
        return 0;
    for (size_t k = 2; k < len; k++)
        if (p[k] < 0x80 || p[k] > 0xbf)
            return 0;
    return len;
}

/* Ends s where its last whole character ends: text cut to fit a buffer
 * (snprintf) may stop inside a UTF-8 character, and its lone lead bytes
 * would reach a terminal, a log line or JSON as a broken character.
 * Drops only a lead byte (and its continuations) whose character runs
 * past the end. Returns s. */
static inline char *hbg__utf8_trim(char *s)
{
    size_t n = strlen(s);
    for (size_t back = 1; back <= 3 && back <= n; back++) {
        unsigned char c = (unsigned char)s[n - back];
        if (c < 0x80)
            break;
        if (c >= 0xc0) { /* a lead byte: how long its character is */
            size_t need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
            if (need > back)
                s[n - back] = '\0';
            break;
        }
    }
    return s;
}

/* vsnprintf into buf, cut at a whole character (hbg__utf8_trim): the
 * one way the per-thread "last error" messages are written. */
static inline void hbg__vformat(char *buf, size_t n, const char *fmt, va_list ap)
{
    vsnprintf(buf, n, fmt, ap);
    hbg__utf8_trim(buf);
}

/* Whether the character at s, of len bytes (hbg__utf8_len), is a C1
 * control, U+0080..U+009F. */
static inline bool hbg__utf8_is_c1(const char *s, size_t len)
{
    return len == 2 && (unsigned char)s[0] == 0xc2 && (unsigned char)s[1] <= 0x9f;
}

/* The length of the piece of text at s[0..n) (n >= 1): a whole UTF-8
 * character, else one byte; *control tells whether it is masked as a
 * control is (C0, DEL, a C1 as UTF-8, or any byte from 0x80 that starts
 * no well-formed character: a bare C1 byte, FF, a lead byte cut short).
 * A caller steps through text by it, so that the continuation bytes of a
 * character (0x80..0xBF) are never taken for bare bytes. */
static inline size_t hbg__text_step(const char *s, size_t n, bool *control)
{
    unsigned char c = (unsigned char)s[0];
    size_t len = c >= 0x80 ? hbg__utf8_len(s, n) : 0;
    if (len) {
        *control = hbg__utf8_is_c1(s, len);
        return len;
    }
    *control = hbg__is_control(c) || c >= 0x80;
    return 1;
}

/* What of s[0..n) text that heads a line of a tool's output (a stamp's
 * commit) cannot carry: "a control byte" (C0, DEL, a C1 as UTF-8 or as a
 * bare byte 0x80..0x9F), else "a byte that starts no UTF-8 character";
 * NULL for neither. *at, when not NULL, gets the offset of the first
 * byte of what is named. The one rule for a commit, so that the library
 * never writes a stamp hbg compare refuses. One walk: a control anywhere
 * is named before a byte no character starts. */
static inline const char *hbg__text_flaw(const char *s, size_t n, size_t *at)
{
    const char *flaw = NULL;
    size_t where = 0;
    for (size_t i = 0; i < n;) {
        bool ctl;
        size_t len = hbg__text_step(s + i, n - i, &ctl);
        if (ctl && (len > 1 || (unsigned char)s[i] <= 0x9f)) {
            flaw = "a control byte", where = i;
            break;
        }
        if (ctl && !flaw)
            flaw = "a byte that starts no UTF-8 character", where = i;
        i += len;
    }
    if (flaw && at)
        *at = where;
    return flaw;
}

/* Replaces each byte of each control of s, and each byte that starts no
 * well-formed character, by '?' (so C2 9B is "??", FF C3 28 "??("), in
 * place. Returns s. */
static inline char *hbg__mask_controls(char *s)
{
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        bool ctl;
        size_t len = hbg__text_step(s + i, n - i, &ctl);
        for (size_t k = 0; ctl && k < len; k++)
            s[i + k] = '?';
        i += len;
    }
    return s;
}

/* Whether s[0..n) holds a control or a byte that starts no well-formed
 * character (hbg__text_step). */
static inline bool hbg__has_control(const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        bool ctl;
        i += hbg__text_step(s + i, n - i, &ctl);
        if (ctl)
            return true;
    }
    return false;
}

/* Writes s[0..n) to f with each control, and each byte that starts no
 * well-formed character, as one '?'. */
static inline void hbg__fput_masked(FILE *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        bool ctl;
        size_t len = hbg__text_step(s + i, n - i, &ctl);
        if (ctl)
            fputc('?', f);
        else
            fwrite(s + i, 1, len, f);
        i += len;
    }
}

#endif
