/* tjit graph FILE [--format text|dot|json] */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "tjit/tjit.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: tjit graph FILE [--format text|dot|json]\n\n"
               "Reads a graph in tjit's FX-style text form (as `tjit trace` prints it) and\n"
               "writes it as text (default), Graphviz DOT (`| dot -Tsvg > g.svg`) or JSON.\n");
}

/* The whole file as a string; NULL with errno set when it cannot be read
 * (a directory opens, then fails to read: EISDIR). */
static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t len = 0, cap = 0, n;
    char chunk[65536];
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (len + n + 1 > cap) {
            cap = (len + n + 1) * 2;
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
        }
        memcpy(buf + len, chunk, n);
        len += n;
    }
    if (ferror(f)) {
        int err = errno;
        free(buf);
        fclose(f);
        errno = err;
        return NULL;
    }
    fclose(f);
    if (!buf) buf = calloc(1, 1);
    else buf[len] = 0;
    return buf;
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
    char *text = read_file(argv[optind]);
    if (!text) {
        fprintf(stderr, "tjit graph: cannot read '%s': %s\n", argv[optind], strerror(errno));
        return 1;
    }
    tj_graph *g = tj_graph_parse(text);
    free(text);
    if (!g) {
        fprintf(stderr, "tjit graph: %s: %s\n", argv[optind], tj_last_error());
        return 1;
    }
    tj_status st = !strcmp(format, "dot") ? tj_graph_write_dot(g, stdout)
                   : !strcmp(format, "json") ? tj_graph_write_json(g, stdout)
                                             : tj_graph_print(g, stdout);
    if (st != TJ_OK) fprintf(stderr, "tjit graph: %s\n", tj_last_error());
    tj_graph_free(g);
    return st == TJ_OK ? 0 : 1;
}
