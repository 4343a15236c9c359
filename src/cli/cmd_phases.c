/* placeholder: replaced by the real command */
#include <stdio.h>
#include "cli/cli.h"
int hbg_cmd_phases(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "hbg phases: not built yet\n"); return 2; }
