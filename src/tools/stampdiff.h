/* Do two [stamp] lines describe the same ruler, the commit aside?
 *
 * A stamp is "<commit>[-dirty] env VAR=value ... <command>". Two agree when
 * - the assignments agree as the environment they make: each variable's
 *   value is its last assignment (as env applies them), and the order of
 *   two variables is how they happened to be written, not a condition;
 * - the command's leading words (the program and its positional arguments)
 *   agree word for word, in order;
 * - its options agree as a set: `--rounds 6 --mode numbers` is the run
 *   `--mode numbers --rounds 6` is, and `--x=v` is `--x v`. Occurrences of
 *   one option keep their order (the last may win);
 * - options that say where output goes or how long a run may last, not how
 *   it is measured, are left out: -o/--log, --out-dir, --time-limit,
 *   --peer-timeout (as "-o LOG", "--log LOG" or "--log=LOG");
 * - in two `hbg run` stamps (the program named hbg, then "run"), a value
 *   that is a decimal is its number (03 is 3) and a --device-memory its
 *   bytes (1g is 1G is 1024M): an earlier revision stamped as typed;
 * - in an `hbg run` stamp (the program named hbg, then "run") that assigns
 *   all four switches (HBG_BIND_BREAKDOWN, HBG_HOST_PHASE_RECORDS,
 *   HBG_SKIP_DEVICE_RUN, HBG_LOG_LEVEL), as hbg run's own do, --mode,
 *   --skip-device-run and --log-level are left out too: they only set
 *   switches, which the assignments give resolved.
 * Inside any word, each stamp's own commit stands for "this log's commit"
 * where it is a whole token, continued by no letter or digit on either
 * side (a log path named after its commit is not a difference), and only
 * a commit that is a git hash (4 hex digits or more, "-dirty" or not)
 * does: of commits 1 and 2, "--rounds 1" is not "--rounds 2".
 *
 * An option is a word starting with '-' (not "-", not a number such as -1,
 * -.5, -inf or -nan); the words after it, up to the next option, are its
 * value (after "--x=v" too, following its v), so a flag's positional word
 * moves with it. A word after "--" is
 * positional, and so is whatever a stamp holds past its 255th word. */
#ifndef HBG_TOOLS_STAMPDIFF_H
#define HBG_TOOLS_STAMPDIFF_H

#include <stdbool.h>
#include <stddef.h>

/* The first difference between stamps a and b (their text after
 * "[stamp] "), written to out as text naming na and nb ("env X=1 in A, X=2
 * in B", "command word 3: 'qwen' in A, 'dsv4' in B", "command option
 * --rounds: '6' in A, '7' in B", ...); false when they agree. Not
 * reentrant: the words are split into static tables. */
bool sd_differ(const char *a, size_t alen, const char *b, size_t blen, const char *na, const char *nb, char *out,
               size_t n);

#endif
