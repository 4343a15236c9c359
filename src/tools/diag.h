/* A list of one-line messages (warnings), kept in the order found, so a
 * command can print them on stderr and also put them in its JSON. */
#ifndef HBG_TOOLS_DIAG_H
#define HBG_TOOLS_DIAG_H

#include <stddef.h>

typedef struct dg_list {
    char **msg;
    size_t n, cap;
    size_t limit;      /* beyond this many, only count (0: no limit) */
    size_t suppressed;
} dg_list;

void dg_init(dg_list *d, size_t limit);
void dg_add(dg_list *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* dg_add past the limit: a warning that must not be lost among a
 * thousand others (a log that says it is incomplete). */
void dg_add_always(dg_list *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void dg_free(dg_list *d);
/* "N more warnings not shown" ("1 more warning" for one), for n
 * suppressed ones: the last line on stderr, and the last entry of a
 * JSON's warnings. Every command says it with these words. Into buf;
 * returns it. */
const char *dg_more(size_t n, char *buf, size_t cap);

/* Replaces each control byte of s (below 0x20, 0x7f, a C1 control) by
 * '?': a message that quotes its input must not carry an escape sequence
 * to the terminal that shows it, nor a line break that splits it. Bytes
 * from 0x80 stay where they are UTF-8 text; one that starts no
 * well-formed character is a '?' too, so that the message is UTF-8
 * whatever the log held (printable.h). Returns s. */
char *dg_sanitize(char *s);

/* s as a message may show it: s itself when it has no control byte and
 * is UTF-8, else a masked copy ('?' for each such byte: dg_sanitize) in
 * one of a few buffers of this thread, valid until the fourth call after.
 * For the paths the user gave, which an error quotes as they were typed
 * ($'x\ny.log' would split the one line the error is; $'\xff.log' would
 * reach the terminal as no character). */
const char *dg_shown(const char *s);

#endif
