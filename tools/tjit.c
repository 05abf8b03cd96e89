/* tjit: the command-line tool. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *help;
} command;

static const command commands[] = {
    {"conform", cmd_conform, "run operator conformance cases (../shared/conformance/cases)"},
    {"ops", cmd_ops, "list every operator overload with its schema and kind"},
    {"train", cmd_train, "train mlp or cnn on Fashion-MNIST (eager, traced, decomposed or jit)"},
    {"eval", cmd_eval, "test accuracy of saved parameters"},
    {"trace", cmd_trace, "trace a model's forward pass or training step and print the graph"},
    {"profile", cmd_profile, "replay a traced forward pass or training step with the profiler (table, Chrome trace)"},
    {"bench", cmd_bench, "benchmark the WORKLOADS.md models and micro-benchmarks (eager, traced, decomposed, jit)"},
    {"decomps", cmd_decomps, "print a decomposition table (get_decompositions, the core table)"},
    {"graph", cmd_graph, "convert a graph text file to text, DOT or JSON"},
    {"run", cmd_run, "compile and run a graph text file on .npy inputs (check, save, time its outputs)"},
    {"demo", cmd_demo, "a short tour of the tensor API, the dispatcher's modes and a compiled function"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: tjit <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
    fprintf(f, "\n`tjit <command> --help` describes a command.\n");
}

/* A command that succeeded but whose output did not all reach stdout (a
 * full disk, a closed pipe: a listing or --help writes with printf and
 * checks nothing) fails; one that failed has said why already. */
static int check_stdout(const char *cmd, int rc)
{
    errno = 0;
    if (fflush(stdout) == 0 && !ferror(stdout)) return rc;
    if (rc == 0)
        fprintf(stderr, "tjit%s%s: cannot write standard output: %s\n", cmd ? " " : "", cmd ? cmd : "",
                errno ? strerror(errno) : "an earlier write failed");
    return rc ? rc : 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return check_stdout(NULL, 0);
    }
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (!strcmp(argv[1], commands[i].name)) {
            /* getopt prefixes its messages with argv[0]: "tjit train: option
             * '--epochs' requires an argument", as the commands' own */
            char prog[32];
            snprintf(prog, sizeof prog, "tjit %s", commands[i].name);
            argv[1] = prog;
            return check_stdout(commands[i].name, commands[i].run(argc - 1, argv + 1));
        }
    fprintf(stderr, "tjit: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return 2;
}
