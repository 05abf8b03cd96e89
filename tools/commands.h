/* Subcommands of the `tjit` command-line tool. Each takes the arguments after
 * its name (argv[0] is the subcommand) and returns the exit status: 0 success,
 * 1 failure, 2 bad usage. */
#ifndef TJIT_TOOLS_COMMANDS_H
#define TJIT_TOOLS_COMMANDS_H

#include <stdio.h>

int cmd_conform(int argc, char **argv);
int cmd_ops(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_graph(int argc, char **argv);
int cmd_decomps(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_profile(int argc, char **argv);
int cmd_bench(int argc, char **argv);

/** The end of a subcommand's option loop, for an option `c` (from
 *  getopt_long) the subcommand does not take itself: 'h' (-h, --help) prints
 *  `usage` to stdout and returns exit status 0; anything else (an unknown
 *  option, a missing or bad argument) prints it to stderr and returns 2. */
int cmd_usage_exit(void (*usage)(FILE *f), int c);

#endif
