/* Helpers for tests that drive `hbg run` as a user would. */
#ifndef HBG_TEST_RUN_SUPPORT_H
#define HBG_TEST_RUN_SUPPORT_H

#include <stddef.h>
#include <sys/types.h>

/* Runs `env ENV $HBG_CLI ARGS` (the run switches cleared first) with stdout
 * and stderr into `out`; returns the exit status (128: did not exit). */
int rs_run(const char *env, const char *args, char *out, size_t cap);

/* The whole file, NUL-terminated (malloc'd); fails the test if unreadable. */
char *rs_slurp(const char *path);

/* Starts `hbg run` with argv (NULL-terminated, argv[0] = "run") writing its
 * log to `log` and its output to `outp`, waits until the log holds
 * `spans` spans named `span`, kills the rank process with the highest pid
 * (rank 1) with SIGKILL, and waits for `hbg run` to end. Asserts what any
 * killed rank must give: exit status 1 within 20 s, the line naming rank 1
 * as killed by signal 9, and a log of whole lines. Returns the output
 * (malloc'd) for the caller's own checks. */
char *rs_kill_a_rank(const char *const *argv, const char *log, const char *outp, const char *span, int spans);

/* A cmocka group set-up and tear-down: rs_dir is a fresh scratch
 * directory (ts_tempdir) for the group's runs, removed afterwards. */
extern char *rs_dir;
int rs_dir_setup(void **state);
int rs_dir_teardown(void **state);

/* Asserts that every line of the log is a whole record (or the stamp). */
void rs_assert_whole_lines(const char *log);

#endif
