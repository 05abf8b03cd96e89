/* tjit trace MODEL [--train] [--decompose core|none|OP,OP...]
 *                  [--tracing-mode real|fake] [--format text|dot|json] [--stats] */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "runtime/internal.h"
#include "models.h"
#include "step.h"
#include "tjit/tjit.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: tjit trace MODEL [--train] [--decompose core|none|OP,OP...]\n"
               "                  [--tracing-mode real|fake] [--format text|dot|json] [--stats]\n\n"
               "Traces MODEL (mlp, cnn, gpt, block768) with make_fx and prints the graph: the\n"
               "forward pass, or with --train the whole training step (forward, loss,\n"
               "backward, optimiser update). --decompose names the decomposition table:\n"
               "core (everything down to primitives), none (default), or a comma-separated\n"
               "list of operators for get_decompositions. --tracing-mode fake (default:\n"
               "dtypes and shapes only) or real (the kernels run on seed-0 weights and a\n"
               "batch; the same graph for these models). --format text (FX-style, default;\n"
               "`tjit graph` reads it back), dot (Graphviz) or json. A training step is\n"
               "printed functionalised: its return line ends with `writeback {output: input}`\n"
               "for the parameters and optimiser state it updates. --stats prints node counts\n"
               "and the operator histogram instead of the graph.\n");
}

/* get_decompositions over a comma-separated list of operators. NULL with
 * *unknown set when the list names an operator that does not exist (said on
 * stderr), NULL otherwise on error (tj_last_error). */
static tj_decomp_table *table_from_list(const char *list, bool *unknown)
{
    char *copy = strdup(list);
    if (!copy) return tj_error(TJ_ERR_OUT_OF_MEMORY, "tjit trace: out of memory"), NULL;
    const char *names[256];
    int n = 0;
    for (char *tok = strtok(copy, ","); tok && n < 256; tok = strtok(NULL, ",")) names[n++] = tok;
    tj_decomp_table *t = NULL;
    for (int i = 0; i < n && !*unknown; i++)
        if (!cmd_op_select(names[i], NULL, 0)) {
            fprintf(stderr, "tjit trace: unknown operator '%s'\n", names[i]);
            *unknown = true;
        }
    if (!*unknown) t = tj_get_decompositions(names, n);
    if (t && tj_decompositions_missing(names, n, NULL)) {
        fprintf(stderr, "tjit trace: no registered decomposition for:\n");
        tj_decompositions_missing(names, n, stderr);
    }
    free(copy);
    return t;
}

/* The table --decompose names: none, core or a list (table_from_list). */
static tj_decomp_table *decomp_table_from_option(const char *spec, bool *unknown)
{
    if (!strcmp(spec, "none")) return tj_decomp_table_new();
    if (!strcmp(spec, "core")) return tj_core_decompositions();
    return table_from_list(spec, unknown);
}

static void print_stats(const tj_graph *g)
{
    int counts[1024] = {0};
    int n_in = tj_graph_num_inputs(g), n_calls = tj_graph_num_calls(g), n_out = tj_graph_num_outputs(g);
    printf("nodes: %d (%d %s, %d %s, %d %s)\n", tj_graph_num_nodes(g), n_in, tj_noun(n_in, "input", "inputs"), n_calls,
           tj_noun(n_calls, "call", "calls"), n_out, tj_noun(n_out, "output", "outputs"));
    for (int i = 0; i < tj_graph_num_nodes(g); i++) {
        const tj_op *op = tj_graph_node_op(g, i);
        for (int k = 0; op && k < tj_op_count() && k < 1024; k++)
            if (tj_op_at(k) == op) counts[k]++;
    }
    for (int k = 0; k < tj_op_count() && k < 1024; k++)
        if (counts[k]) printf("%6d  %s\n", counts[k], tj_op_name(tj_op_at(k)));
}

int cmd_trace(int argc, char **argv)
{
    static const struct option opts[] = {{"train", no_argument, 0, 't'},           {"decompose", required_argument, 0, 'd'},
                                         {"tracing-mode", required_argument, 0, 'm'}, {"format", required_argument, 0, 'f'},
                                         {"stats", no_argument, 0, 's'},           {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    bool train = false, stats = false;
    const char *decompose = "none", *tmode = "fake", *format = "text";
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "td:m:f:sh", opts, NULL)) != -1) {
        switch (c) {
        case 't': train = true; break;
        case 'd':
            /* an empty entry (",", "a,,b", a trailing comma) is a typo, not a request for no table */
            if (!*optarg || *optarg == ',' || optarg[strlen(optarg) - 1] == ',' || strstr(optarg, ",,"))
                return cmd_bad_value("trace", opts, c, optarg, "core, none or a comma-separated list of operators",
                                     usage);
            decompose = optarg;
            break;
        case 'm':
            if (strcmp(optarg, "real") && strcmp(optarg, "fake"))
                return cmd_bad_value("trace", opts, c, optarg, "real or fake", usage);
            tmode = optarg;
            break;
        case 'f':
            if (strcmp(optarg, "text") && strcmp(optarg, "dot") && strcmp(optarg, "json"))
                return cmd_bad_value("trace", opts, c, optarg, "text, dot or json", usage);
            format = optarg;
            break;
        case 's': stats = true; break;
        default: return cmd_usage_exit(usage, c);
        }
    }
    bool one = cmd_operands("trace", argc, argv, 1, "the model");
    const model_def *def = one ? model_find(argv[optind]) : NULL;
    if (!def) {
        if (one) fprintf(stderr, "tjit trace: unknown model '%s'\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    if (train && !def->trainable) {
        fprintf(stderr, "tjit trace: %s has no training step (forward only)\n", def->id);
        return 2;
    }
    bool unknown = false;
    tj_decomp_table *table = decomp_table_from_option(decompose, &unknown);
    if (!table) {
        if (!unknown) fprintf(stderr, "tjit trace: %s\n", tj_last_error());
        return unknown ? 2 : 1;
    }
    model m;
    if (model_create(def, 0, &m) != TJ_OK) {
        fprintf(stderr, "tjit trace: %s\n", tj_last_error());
        tj_decomp_table_free(table);
        return 1;
    }
    tj_graph *g = step_trace(&m, train ? STEP_TRAIN : STEP_FORWARD, 0, table,
                             !strcmp(tmode, "fake") ? TJ_TRACE_FAKE : TJ_TRACE_REAL);
    int rc = 0;
    if (!g) {
        fprintf(stderr, "tjit trace: %s\n", tj_last_error());
        rc = 1;
    } else if (stats) {
        print_stats(g);
    } else {
        tj_status st = !strcmp(format, "dot") ? tj_graph_write_dot(g, stdout)
                       : !strcmp(format, "json") ? tj_graph_write_json(g, stdout)
                                                 : tj_graph_print(g, stdout);
        if (st != TJ_OK) fprintf(stderr, "tjit trace: %s\n", tj_last_error());
        rc = st == TJ_OK ? 0 : 1;
    }
    tj_graph_free(g);
    model_free(&m);
    tj_decomp_table_free(table);
    return rc;
}
