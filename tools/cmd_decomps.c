/* tjit decomps [--table core] [OP...] */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "tjit/tjit.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: tjit decomps [--table core] [OP...]\n\n"
               "Prints a decomposition table, one operator per line with what it maps to, like\n"
               "printing torch._decomp.get_decompositions([...]). With OPs (\"aten::gelu\" takes\n"
               "every overload, \"aten::add.Tensor\" just one) prints get_decompositions(OPs) and\n"
               "lists the names that have no registered decomposition; with --table core (the\n"
               "default without OPs) prints the table that lowers everything to primitives.\n");
}

int cmd_decomps(int argc, char **argv)
{
    static const struct option opts[] = {{"table", required_argument, 0, 't'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *table = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "t:h", opts, NULL)) != -1) {
        if (c == 't') table = optarg;
        else if (c == 'h') {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }
    if ((table && strcmp(table, "core")) || (table && optind < argc)) {
        usage(stderr);
        return 2;
    }
    const char *const *ops = (const char *const *)argv + optind;
    int n = argc - optind;
    tj_decomp_table *t = n ? tj_get_decompositions(ops, n) : tj_core_decompositions();
    if (!t) {
        fprintf(stderr, "tjit decomps: %s\n", tj_last_error());
        return 1;
    }
    tj_decomp_table_print(t, stdout);
    tj_decomp_table_free(t);
    if (n && tj_decompositions_missing(ops, n, NULL) > 0) {
        printf("\nno registered decomposition:\n");
        tj_decompositions_missing(ops, n, stdout);
    }
    return 0;
}
