/* The hbg command: one function per subcommand, one file per subcommand. */
#ifndef HBG_CLI_H
#define HBG_CLI_H

/* Each returns the process exit status. argv[0] is the subcommand name. */
int hbg_cmd_run(int argc, char **argv);
int hbg_cmd_phases(int argc, char **argv);
int hbg_cmd_spans(int argc, char **argv);
int hbg_cmd_timeline(int argc, char **argv);
int hbg_cmd_compare(int argc, char **argv);
int hbg_cmd_ab(int argc, char **argv);
int hbg_cmd_fit(int argc, char **argv);

/* The commit the binary was built from (generated at build time). */
const char *hbg_build_commit(void);

#endif
