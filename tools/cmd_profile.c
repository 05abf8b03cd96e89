/* tjit profile MODEL [--runs N] [--threads N] [--decompose core|none]
 *                    [--trace FILE] [--memory] */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "models.h"
#include "step.h"
#include "tjit/tjit.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: tjit profile MODEL [--runs N] [--threads N] [--decompose core|none]\n"
               "                    [--trace FILE] [--memory]\n\n"
               "Traces MODEL's forward pass (mlp, cnn, gpt, block768) on a batch of its\n"
               "WORKLOADS.md shape, compiles it into a plan, replays it N times (default 20,\n"
               "after one warm-up run) with per-kernel timing, prints the table by operator\n"
               "and writes the last run as a Chrome trace (default MODEL.trace.json; open it\n"
               "in ui.perfetto.dev or chrome://tracing). --memory also prints the memory plan.\n");
}

/* The model's parameters, then a deterministic x of the model's input shape. */
static tj_tensor *make_x(const model_def *d)
{
    tj_tensor *x = tj_tensor_empty(d->x_dtype, d->x_ndim, d->x_shape);
    if (!x) return NULL;
    int64_t n = tj_tensor_numel(x);
    if (d->x_dtype == TJ_INT64) {
        int64_t *p = tj_tensor_data(x);
        for (int64_t i = 0; i < n; i++) p[i] = (i * 7919) % 256;
    } else {
        float *p = tj_tensor_data(x);
        for (int64_t i = 0; i < n; i++) p[i] = (float)((i * 7919) % 1000) / 1000.0f - 0.5f;
    }
    return x;
}

static int profile(model *m, tj_graph *g, int runs, const char *trace_path, bool memory)
{
    tj_plan *p = tj_compile(g, NULL);
    if (!p) return fprintf(stderr, "tjit profile: %s\n", tj_last_error()), 1;
    tj_tensor *in[MODEL_MAX_PARAMS + 1];
    memcpy(in, m->params, sizeof(tj_tensor *) * (size_t)m->n_params);
    in[m->n_params] = make_x(m->def);
    tj_status st = in[m->n_params] ? tj_plan_run_into(p, in, m->n_params + 1, NULL) : tj_last_status();
    tj_plan_set_profiling(p, true);
    for (int r = 0; r < runs && st == TJ_OK; r++) st = tj_plan_run_into(p, in, m->n_params + 1, NULL);
    if (st == TJ_OK) {
        tj_plan_statistics s;
        tj_plan_stats(p, &s);
        printf("%s forward: %d kernels, %d views resolved, arena %.2f MiB (naive %.2f MiB, lower bound %.2f MiB)\n",
               m->def->id, s.n_kernels, s.n_views, s.arena_bytes / 1048576.0, s.naive_bytes / 1048576.0,
               s.lower_bound_bytes / 1048576.0);
        st = tj_plan_profile_print(p, stdout);
    }
    if (st == TJ_OK && memory) st = tj_plan_print_memory(p, stdout);
    if (st == TJ_OK) st = tj_plan_profile_write_trace(p, trace_path);
    if (st == TJ_OK) printf("trace written to %s\n", trace_path);
    else fprintf(stderr, "tjit profile: %s\n", tj_last_error());
    tj_tensor_release(in[m->n_params]);
    tj_plan_free(p);
    return st == TJ_OK ? 0 : 1;
}

int cmd_profile(int argc, char **argv)
{
    static const struct option opts[] = {{"runs", required_argument, 0, 'r'},  {"threads", required_argument, 0, 'j'},
                                         {"decompose", required_argument, 0, 'd'}, {"trace", required_argument, 0, 'o'},
                                         {"memory", no_argument, 0, 'm'},      {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    int runs = 20, threads = 0, c;
    bool memory = false;
    const char *decompose = "none", *trace_path = NULL;
    optind = 1;
    while ((c = getopt_long(argc, argv, "r:j:d:o:mh", opts, NULL)) != -1) {
        switch (c) {
        case 'r': runs = atoi(optarg); break;
        case 'j': threads = atoi(optarg); break;
        case 'd': decompose = optarg; break;
        case 'o': trace_path = optarg; break;
        case 'm': memory = true; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    const model_def *def = optind + 1 == argc ? model_find(argv[optind]) : NULL;
    if (!def || runs < 1 || (strcmp(decompose, "none") && strcmp(decompose, "core"))) {
        if (optind + 1 == argc && !def) fprintf(stderr, "tjit profile: unknown model '%s'\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    if (threads > 0) tj_set_num_threads(threads);
    char default_path[128];
    snprintf(default_path, sizeof default_path, "%s.trace.json", def->id);
    tj_decomp_table *table = strcmp(decompose, "core") ? NULL : tj_core_decompositions();
    model m;
    if ((!table && !strcmp(decompose, "core")) || model_create(def, 0, &m) != TJ_OK) {
        fprintf(stderr, "tjit profile: %s\n", tj_last_error());
        tj_decomp_table_free(table);
        return 1;
    }
    tj_graph *g = step_trace(&m, STEP_FORWARD, 0, table, TJ_TRACE_FAKE);
    int rc = g ? profile(&m, g, runs, trace_path ? trace_path : default_path, memory)
               : (fprintf(stderr, "tjit profile: %s\n", tj_last_error()), 1);
    tj_graph_free(g);
    model_free(&m);
    tj_decomp_table_free(table);
    return rc;
}
