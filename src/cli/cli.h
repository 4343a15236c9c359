/* The hbg command: one function per subcommand, one file per subcommand. */
#ifndef HBG_CLI_H
#define HBG_CLI_H

#include <stdbool.h>
#include <string.h>

/* Each returns the process exit status. argv[0] is the subcommand name. */
int hbg_cmd_run(int argc, char **argv);
int hbg_cmd_phases(int argc, char **argv);
int hbg_cmd_spans(int argc, char **argv);
int hbg_cmd_timeline(int argc, char **argv);
int hbg_cmd_compare(int argc, char **argv);
/* hbg compare run by another command (hbg ab) on logs it made: cmd (e.g.
 * "hbg ab") names it in the diagnostics. */
int hbg_cmd_compare_as(const char *cmd, int argc, char **argv);
int hbg_cmd_ab(int argc, char **argv);
int hbg_cmd_fit(int argc, char **argv);

/* Whether s is written as a decimal number ("0.05", "2", "1e-3", "-5"):
 * strtod alone would also take "0x10" (16), "inf", "nan" and leading
 * spaces, none of which a person means as a percentage or an alpha. */
static inline bool hbg_cli_decimal(const char *s)
{
    return s && *s && strspn(s, "0123456789.eE+-") == strlen(s);
}

/* Whether s is written as a count, decimal digits alone: strtoul would
 * also take leading spaces and a sign (" 3", "+3"; "-1" as the largest
 * unsigned long), none of which a person means as a count. */
static inline bool hbg_cli_digits(const char *s)
{
    return s && *s && strspn(s, "0123456789") == strlen(s);
}

/* The commit the binary was built from (generated at build time). */
const char *hbg_build_commit(void);

#endif
