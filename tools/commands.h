/* Subcommands of the `tjit` command-line tool. Each takes the arguments after
 * its name (argv[0] is the subcommand) and returns the exit status: 0 success,
 * 1 failure, 2 bad usage. */
#ifndef TJIT_TOOLS_COMMANDS_H
#define TJIT_TOOLS_COMMANDS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "tjit/tjit.h"

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
int cmd_run(int argc, char **argv);

/** The end of a subcommand's option loop, for an option `c` (from
 *  getopt_long) the subcommand does not take itself: 'h' (-h, --help) prints
 *  `usage` to stdout and returns exit status 0; anything else (an unknown
 *  option, a missing or bad argument) prints it to stderr and returns 2. */
int cmd_usage_exit(void (*usage)(FILE *f), int c);

/** A bad value for option `c` of `opts` (getopt_long's table, which names
 *  it): prints "tjit CMD: bad value 'VALUE' for --OPTION (EXPECTED)" and
 *  `usage` to stderr; returns exit status 2. */
int cmd_bad_value(const char *cmd, const struct option *opts, int c, const char *value, const char *expected,
                  void (*usage)(FILE *f));

/** Checks the operands left after the options (argv[optind..argc)): true
 *  when there are `want` of them (0 or 1); otherwise prints "tjit CMD:
 *  missing WHAT" or "tjit CMD: unexpected argument 'ARG'" and a blank line
 *  to stderr (the caller prints its usage and returns 2). */
bool cmd_operands(const char *cmd, int argc, char **argv, int want, const char *what);

/** --flush-denormal: tj_set_flush_denormal(true) for the calling thread (and
 *  so the kernels it runs on the pool's threads). Returns 0; when the CPU
 *  cannot, prints "tjit CMD: this CPU cannot flush denormals to zero (no
 *  DAZ)" to stderr and returns exit status 1. */
int cmd_flush_denormal(const char *cmd);

/** Parses all of `s` as a decimal integer in [lo, hi] into *out: digits,
 *  after a minus sign for a negative one; false (and *out untouched) for
 *  anything else: empty, a leading space or plus, trailing characters, out
 *  of range. */
bool cmd_parse_int(const char *s, long lo, long hi, int *out);

/** Refuses, before a long run, an output FILE that cannot be written at its
 *  end: an empty path, an existing directory, or a folder that is missing,
 *  not a folder or not writable. Prints "tjit CMD: cannot write 'PATH':
 *  REASON" to stderr and returns 1; 0 when the file can be made. */
int cmd_check_output_path(const char *cmd, const char *path);

/** The operators `name` names, as get_decompositions reads names: every
 *  overload of a name without one ("aten::add", "add", "aten.add"), else the
 *  one overload tj_op_find finds ("aten::add.Tensor", "aten.abs.default").
 *  Writes up to `max` of them to `out` (may be NULL when max is 0) and
 *  returns how many there are; 0 for an unknown operator. */
int cmd_op_select(const char *name, const tj_op **out, int max);

#endif
