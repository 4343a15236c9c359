/* Helpers for the log-tool tests: fixture paths, whole files, and running
 * the built `hbg` with its stdout and stderr captured. */
#ifndef HBG_TEST_TOOLS_SUPPORT_H
#define HBG_TEST_TOOLS_SUPPORT_H

#include <stddef.h>

/* $HBG_SOURCE_DIR/tests/data/logs/NAME (static buffer, one at a time). */
const char *ts_fixture(const char *name);
/* The whole file, NUL-terminated (malloc'd); NULL if unreadable. */
char *ts_slurp(const char *path, size_t *len);
/* Writes len bytes to a fresh temporary file and returns its path (malloc'd). */
char *ts_temp_file(const void *data, size_t len, const char *suffix);
/* Runs $HBG_CLI with args (NULL-terminated; args[0] is the subcommand).
 * Returns the exit status (-1 if it did not exit normally). */
int ts_run_cli(const char *const *args, char **out, char **err);
/* The same with standard input read from the file in (a path, or a FIFO). */
int ts_run_cli_in(const char *const *args, const char *in, char **out, char **err);
/* Runs argv (argv[0] looked up in PATH) in dir (NULL: here) with standard
 * input from the file in (NULL: inherited); stdout into *out (its length
 * into *outlen), stderr into *err, either NULL to drop. Returns the exit
 * status (-1 if it did not exit normally). */
int ts_exec(const char *dir, const char *const *argv, const char *in, char **out, size_t *outlen, char **err);
/* ts_exec (without *outlen), argv started with SIGCHLD ignored, as a
 * parent may leave it (exec keeps the setting); it is given limit_s
 * seconds, then SIGTERM (and SIGKILL 5 s on), and -2 is returned. */
int ts_exec_chld_ignored(const char *dir, const char *const *argv, const char *in, char **out, char **err,
                         unsigned limit_s);
/* ts_exec (without *outlen), given limit_s seconds, then SIGTERM (and
 * SIGKILL 5 s on), and -2 is returned: for a command that must not wait
 * on its input. */
int ts_exec_limit(const char *dir, const char *const *argv, const char *in, char **out, char **err, unsigned limit_s);
/* Runs the nhead words of head followed by args (NULL-terminated), as
 * ts_exec does (here, stdin from in). */
int ts_exec_args(const char *const *head, size_t nhead, const char *const *args, const char *in, char **out,
                 char **err);
/* A fresh, private directory parent/hbg-TAG-XXXXXX (parent NULL: $TMPDIR,
 * else /tmp); the path is malloc'd. Every test that needs scratch files
 * makes them here and removes them with ts_rmtree. */
char *ts_tempdir_in(const char *parent, const char *tag);
char *ts_tempdir(const char *tag);
/* Removes dir and everything under it (no shell; links are removed, never
 * followed) and frees the path. */
void ts_rmtree(char *dir);
/* Does hay contain needle? */
int ts_contains(const char *hay, const char *needle);

#endif
