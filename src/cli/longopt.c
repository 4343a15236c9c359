/* Long options as the commands read them (see longopt.h). */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli/longopt.h"
#include "tools/diag.h"

const struct option *hbg_cli_long_option(const struct option *opts, const char *name, size_t len)
{
    const struct option *hit = NULL;
    bool two = false; /* two options start with it: only an exact name is taken */
    for (const struct option *p = opts; p->name; p++) {
        if (strncmp(p->name, name, len))
            continue;
        if (strlen(p->name) == len)
            return p;
        two = hit != NULL;
        hit = p;
    }
    return two ? NULL : hit;
}

int hbg_cli_no_value(const char *cmd, const char *name, const char *eq)
{
    fprintf(stderr, "%s: --%s takes no value (given \"%s\")\n", cmd, name, dg_shown(eq));
    return 2;
}

int hbg_cli_flag_value(const char *cmd, const struct option *opts, const char *word)
{
    if (strncmp(word, "--", 2))
        return 0;
    const char *eq = strchr(word + 2, '=');
    if (!eq || eq == word + 2)
        return 0;
    const struct option *p = hbg_cli_long_option(opts, word + 2, (size_t)(eq - word - 2));
    if (!p || p->has_arg != no_argument)
        return 0;
    return hbg_cli_no_value(cmd, p->name, eq);
}
