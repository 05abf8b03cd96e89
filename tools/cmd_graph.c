/* tjit graph FILE [--format text|dot|json] */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "runtime/internal.h"
#include "tjit/tjit.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: tjit graph FILE [--format text|dot|json]\n\n"
               "Reads a graph in tjit's FX-style text form (as `tjit trace` prints it) and\n"
               "writes it as text (default), Graphviz DOT (`| dot -Tsvg > g.svg`) or JSON.\n"
               "FILE may be a pipe, or - (or /dev/stdin) for the standard input; it must hold text (a NUL byte is an error\n"
               "naming its place) of at most 256 MiB.\n");
}

int cmd_graph(int argc, char **argv)
{
    static const struct option opts[] = {{"format", required_argument, 0, 'f'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *format = "text";
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "f:h", opts, NULL)) != -1) {
        if (c != 'f') return cmd_usage_exit(usage, c);
        if (strcmp(optarg, "text") && strcmp(optarg, "dot") && strcmp(optarg, "json"))
            return cmd_bad_value("graph", opts, c, optarg, "text, dot or json", usage);
        format = optarg;
    }
    if (!cmd_operands("graph", argc, argv, 1, "the graph FILE")) {
        usage(stderr);
        return 2;
    }
    /* bounded (/dev/zero would fill memory) and without a NUL byte, where
     * tj_graph_parse's C string would end, ignoring the rest */
    size_t len;
    const char *path = strcmp(argv[optind], "-") ? argv[optind] : "/dev/stdin";
    char *text = tj_read_text_file(path, "tjit graph", TJ_TEXT_FILE_MAX, &len);
    if (!text) {
        fprintf(stderr, "%s\n", tj_last_error());
        return 1;
    }
    tj_graph *g = tj_graph_parse(text);
    tj_free_file(text, len);
    if (!g) {
        fprintf(stderr, "tjit graph: %s: %s\n", path, tj_last_error());
        return 1;
    }
    tj_status st = !strcmp(format, "dot") ? tj_graph_write_dot(g, stdout)
                   : !strcmp(format, "json") ? tj_graph_write_json(g, stdout)
                                             : tj_graph_print(g, stdout);
    if (st != TJ_OK) fprintf(stderr, "tjit graph: %s\n", tj_last_error());
    tj_graph_free(g);
    return st == TJ_OK ? 0 : 1;
}
