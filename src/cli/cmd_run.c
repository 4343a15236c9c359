/* placeholder: replaced by the real command */
#include <stdio.h>
#include "cli/cli.h"
int hbg_cmd_run(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "hbg run: not built yet\n"); return 2; }
