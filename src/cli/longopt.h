/* Long options as the commands read them: which option a word names,
 * and the one refusal all of them word alike, a value given to an option
 * that takes none (--skip-device-run=1). */
#ifndef HBG_CLI_LONGOPT_H
#define HBG_CLI_LONGOPT_H

#include <getopt.h>
#include <stddef.h>

/* The long option that `len` bytes of `name` (a word without its "--"
 * and its "=VALUE") name, as getopt_long resolves them: the exact name,
 * or a prefix that only one option starts with; NULL for neither. */
const struct option *hbg_cli_long_option(const struct option *opts, const char *name, size_t len);

/* Says on stderr that the long option `name` (without "--"), which takes
 * no value, was given one: "CMD: --NAME takes no value (given "=VALUE")",
 * eq pointing at the word's '='. Returns 2, the usage exit status. */
int hbg_cli_no_value(const char *cmd, const char *name, const char *eq);

/* For a word getopt_long has refused: when it is --NAME=VALUE and NAME
 * resolves (hbg_cli_long_option) to an option that takes no value, says
 * so (hbg_cli_no_value) and returns 2; else 0, for the caller's own
 * message. getopt_long calls such a word unknown, as it does a name that
 * no option has: the name was right, the value is what to drop. */
int hbg_cli_flag_value(const char *cmd, const struct option *opts, const char *word);

#endif
