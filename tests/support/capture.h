/* Test helper: a temporary file to log into and read back. */
#ifndef HBG_TEST_CAPTURE_H
#define HBG_TEST_CAPTURE_H

#include <stddef.h>

/* An unlinked temporary file opened O_RDWR|O_APPEND (fails the test on error). */
int capture_open(void);
/* Everything written to `fd` so far, NUL-terminated; free() it. */
char *capture_read(int fd, size_t *len);
/* Number of '\n'-terminated lines in `s` that contain `needle`. */
size_t capture_count(const char *s, const char *needle);
/* A copy of line `i` (0-based) of `s` without its newline, or NULL; free() it. */
char *capture_line(const char *s, size_t i);

#endif
