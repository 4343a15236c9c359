/* Control bytes in text that quotes what a user or a log wrote.
 *
 * A message that quotes its input (a log's bytes, a program's own words)
 * must not carry an escape sequence to the terminal that shows it, nor a
 * line break that splits the one line it is. Bytes from 0x80 stay: they
 * are UTF-8 text.
 */
#ifndef HBG_UTIL_PRINTABLE_H
#define HBG_UTIL_PRINTABLE_H

#include <stdbool.h>

/* Below 0x20, or DEL. */
static inline bool hbg__is_control(unsigned char c)
{
    return c < 0x20 || c == 0x7f;
}

/* Replaces each control byte of s by '?'. Returns s. */
static inline char *hbg__mask_controls(char *s)
{
    for (char *c = s; *c; c++)
        if (hbg__is_control((unsigned char)*c))
            *c = '?';
    return s;
}

#endif
