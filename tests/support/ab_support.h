/* Helpers for the `hbg ab` tests: a throwaway folder holding git
 * repositories and the cache, commands run inside it, and the tiny
 * project whose measure.sh writes bind logs. Nothing here touches the
 * source tree's own repository except to list its files. */
#ifndef HBG_TEST_AB_SUPPORT_H
#define HBG_TEST_AB_SUPPORT_H

#include <stddef.h>

/* A fresh folder under /tmp (outside any repository, so a test cannot
 * reach the source tree's), with XDG_CACHE_HOME pointed at ROOT/cache and
 * git's global and system configuration switched off. Returns ROOT
 * (malloc'd); fails the test on error. */
char *ab_sandbox(const char *tag);
/* rm -rf ROOT, then free it. */
void ab_sandbox_free(char *root);

/* Runs argv (NULL-terminated, argv[0] searched in PATH) in dir with
 * stdout and stderr captured (malloc'd, NUL-terminated; NULL pointers
 * discard). Returns the exit status, -1 when it did not exit. */
int ab_exec(const char *dir, const char *const *argv, char **out, char **err);
/* The same for $HBG_CLI with args (args[0] is the subcommand). */
int ab_hbg(const char *dir, const char *const *args, char **out, char **err);
/* git in repo with a fixed identity; fails the test unless it exits 0. */
void ab_git(const char *repo, const char *const *args);
/* The first line of a git command's output (malloc'd). */
char *ab_git_line(const char *repo, const char *const *args);

/* Writes text to path (the parent folder must exist). */
void ab_write(const char *path, const char *text);
/* The whole file (malloc'd), NULL when it cannot be read. */
char *ab_read(const char *path);
/* Lines in the file (0 when it is missing). */
int ab_lines(const char *path);
/* Entries of a folder other than . and .. (-1 when it cannot be read). */
int ab_entries(const char *dir);

/* measure.sh: six bind passes in hbg's log grammar, host_orch taking
 * host_orch_ns plus a little that depends on the pass (malloc'd). */
char *ab_measure_script(unsigned host_orch_ns);
/* ROOT/NAME: a repository of two commits of measure.sh, the second with
 * host_orch 10 % longer. Returns the repository's path (malloc'd) and
 * both commits' short shas (8 bytes each). */
char *ab_two_commit_repo(const char *root, const char *name, char c1[8], char c2[8]);

/* Copies the files `git -C src ls-files -co --exclude-standard` lists
 * (tracked and untracked, not ignored; those missing on disk skipped)
 * into dst. Returns the number copied. */
int ab_copy_listed(const char *src, const char *dst);

#endif
