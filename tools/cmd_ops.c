/* tjit ops [--kind primitive|composite|implicit] */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "tjit/tjit.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: tjit ops [--kind primitive|composite|implicit]\n\n"
               "Lists every operator overload, one per line: its ATen schema, then its kind.\n"
               "--kind lists one kind only: primitive (a kernel the core decomposition table\n"
               "keeps), composite (a kernel and a registered decomposition) or implicit (no\n"
               "kernel: every call runs its decomposition).\n");
}

int cmd_ops(int argc, char **argv)
{
    static const struct option opts[] = {{"kind", required_argument, 0, 'k'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *kind = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "k:h", opts, NULL)) != -1) {
        if (c != 'k') return cmd_usage_exit(usage, c);
        if (strcmp(optarg, "primitive") && strcmp(optarg, "composite") && strcmp(optarg, "implicit"))
            return cmd_bad_value("ops", opts, c, optarg, "primitive, composite or implicit", usage);
        kind = optarg;
    }
    if (!cmd_operands("ops", argc, argv, 0, "")) {
        usage(stderr);
        return 2;
    }
    for (int i = 0; i < tj_op_count(); i++) {
        const tj_op *op = tj_op_at(i);
        const char *k = tj_op_kind_name(tj_op_kind_of(op));
        if (!kind || !strcmp(kind, k)) printf("%s  %s\n", tj_op_schema(op), k);
    }
    return 0;
}
