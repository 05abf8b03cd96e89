/* tjit profile MODEL [--train] [--batch N] [--runs N] [--threads N]
 *                    [--decompose core|none] [--trace FILE] [--memory] [--no-fusion] [--native]
 *                    [--flush-denormal] [--denormals] */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "bench.h"
#include "models.h"
#include "runtime/internal.h"
#include "step.h"
#include "tjit/tjit.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: tjit profile MODEL [--train] [--batch N] [--runs N] [--threads N]\n"
               "                    [--decompose core|none] [--trace FILE] [--memory] [--no-fusion]\n"
               "                    [--native] [--flush-denormal] [--denormals]\n\n"
               "Traces MODEL's forward pass (mlp, cnn, gpt, block768), or with --train its\n"
               "whole training step (forward, loss, backward, optimiser; mlp, cnn, gpt), on\n"
               "a batch of its WORKLOADS.md shape (--batch N: N samples instead; mlp --batch 1\n"
               "is the mlp_b1 benchmark), compiles it into a plan, replays it N\n"
               "times (default 20, after one warm-up run) with per-kernel timing, prints the\n"
               "table by operator and writes the last run as a Chrome trace (default\n"
               "MODEL.trace.json; open it in ui.perfetto.dev or chrome://tracing).\n"
               "--threads sets the kernels' threads (default: all cores); --decompose core\n"
               "traces down to primitives (default none). --memory also prints the memory\n"
               "plan. --no-fusion compiles every operator as its own kernel: no relu, gelu or\n"
               "residual add inside the addmm before it, no fused attention, no copy read in\n"
               "place by the bmm after it, no product scattered as computed by the\n"
               "scatter_add after it, no chain of elementwise calls (with the row\n"
               "reductions between them) run as one loop (\"fused pointwise (...)\" steps).\n"
               "--native compiles those steps' exactly rounded arithmetic to machine code\n"
               "with the system C compiler (tj_compile_options.native_code; cached per user).\n"
               "--flush-denormal flushes denormal numbers to zero (tj_set_flush_denormal, as\n"
               "torch.set_flush_denormal(True)): faster where values underflow into denormals\n"
               "(the gpt training step on an Intel CPU); results then differ from IEEE's there.\n"
               "--denormals then runs the step once more through the interpreter with a census\n"
               "of denormal results (tj_denormal_mode) and prints, per operator, how many of its\n"
               "float results were denormal: where an Intel CPU slows down ~100x per operation.\n");
}

static int cmp_denormals(const void *a, const void *b)
{
    int64_t x = ((const int64_t *)a)[0], y = ((const int64_t *)b)[0];
    return (x < y) - (x > y); /* most first */
}

/* One run of `g` through the interpreter under a tj_denormal_mode, then its
 * table: the operators with denormal results, most first, and the total. */
static tj_status denormal_census(const tj_graph *g, tj_tensor *const *inputs, int n_inputs)
{
    tj_denormal_mode *m = tj_denormal_mode_new();
    int n_ops = tj_op_count(), n_out = tj_graph_num_outputs(g);
    tj_tensor **outs = calloc((size_t)n_out + 1, sizeof *outs);
    int64_t(*rows)[2] = calloc((size_t)n_ops, sizeof *rows); /* denormals, operator index */
    tj_status st = m && outs && rows ? TJ_OK : tj_error(TJ_ERR_OUT_OF_MEMORY, "profile: out of memory for the census");
    tj_scope *s = tj_scope_begin();
    if (st == TJ_OK && (st = tj_mode_push(tj_denormal_mode_base(m))) == TJ_OK) {
        st = tj_graph_run(g, inputs, n_inputs, outs);
        tj_mode_pop(tj_denormal_mode_base(m));
    }
    tj_scope_end(s);
    if (st == TJ_OK) {
        int64_t all = 0, denormal = 0;
        int used = 0, n_rows = 0;
        for (int i = 0; i < n_ops; i++) {
            int64_t results, d;
            tj_denormal_mode_counts(m, tj_op_at(i), NULL, &results, &d);
            all += results, denormal += d, used += results > 0;
            if (d) rows[n_rows][0] = d, rows[n_rows++][1] = i;
        }
        qsort(rows, (size_t)n_rows, sizeof *rows, cmp_denormals);
        printf("denormal results, one run through the interpreter (IEEE arithmetic unless --flush-denormal):\n"
               "%-44s  %8s  %16s  %16s  %10s\n", "Name", "Calls", "Float results", "Denormal", "% denormal");
        for (int r = 0; r < n_rows; r++) {
            const tj_op *op = tj_op_at((int)rows[r][1]);
            int64_t calls, results, d;
            tj_denormal_mode_counts(m, op, &calls, &results, &d);
            printf("%-44s  %8lld  %16lld  %16lld  %9.3f%%\n", tj_op_name(op), (long long)calls, (long long)results,
                   (long long)d, 100.0 * (double)d / (double)results);
        }
        printf("total: %lld denormal of %lld float %s (%.3f%%), in %d of the %d %s with float results\n",
               (long long)denormal, (long long)all, tj_noun(all, "result", "results"),
               all ? 100.0 * (double)denormal / (double)all : 0.0, n_rows, used, tj_noun(used, "operator", "operators"));
    }
    free(rows);
    free(outs);
    tj_denormal_mode_free(m);
    return st;
}

/* Replays the step `g` of model `m` on `inputs` (laid out by step_inputs: a
 * batch of `batch` samples). A training step updates the parameters and
 * optimiser state in place at each run, as training does. */
static int profile(const model *m, tj_graph *g, bool train, int64_t batch, tj_tensor **inputs, int n_inputs,
                   int runs, const char *trace_path, bool memory, bool denormals, const tj_compile_options *copts)
{
    tj_plan *p = tj_compile(g, copts);
    if (!p) return fprintf(stderr, "tjit profile: %s\n", tj_last_error()), 1;
    if (copts->native_code && tj_plan_native_code_error(p)) { /* as bench and train: the loops' times would pass for its */
        fprintf(stderr, "tjit profile: native code not built: %s\n", tj_plan_native_code_error(p));
        tj_plan_free(p);
        return 1;
    }
    tj_status st = tj_plan_run_into(p, inputs, n_inputs, NULL);
    if (st == TJ_ERR_OUT_OF_MEMORY) { /* the first run makes the arena: the batch is what sizes it */
        fprintf(stderr, "tjit profile: %s at batch %lld: %s\n", m->def->id, (long long)batch, tj_last_error());
        tj_plan_free(p);
        return 1;
    }
    tj_plan_set_profiling(p, true);
    for (int r = 0; r < runs && st == TJ_OK; r++) st = tj_plan_run_into(p, inputs, n_inputs, NULL);
    if (st == TJ_OK) {
        tj_plan_statistics s;
        tj_plan_stats(p, &s);
        printf("%s %s (batch %lld): %d %s (%d %s and %d %s fused, %d %s read in place by products, %d %s scattered as "
               "computed, %d elementwise %s (%d of them row %s, %d %s run inside their where) in %d fused pointwise "
               "%s), %d %s resolved, %d dead %s left out, %d identical %s merged, %d %s by one aliased, arena %.2f MiB "
               "(naive %.2f MiB, lower bound %.2f MiB)\n",
               m->def->id, train ? "train step" : "forward", (long long)batch, s.n_kernels,
               tj_noun(s.n_kernels, "kernel", "kernels"),
               s.n_fused, tj_noun(s.n_fused, "epilogue", "epilogues"), s.n_fused_attention,
               tj_noun(s.n_fused_attention, "attention", "attentions"), s.n_gathered,
               tj_noun(s.n_gathered, "copy", "copies"),
               s.n_scattered_products, tj_noun(s.n_scattered_products, "product", "products"), s.n_fused_pointwise_nodes,
               tj_noun(s.n_fused_pointwise_nodes, "call", "calls"), s.n_fused_row_reductions,
               tj_noun(s.n_fused_row_reductions, "reduction", "reductions"), s.n_fused_compare_wheres,
               tj_noun(s.n_fused_compare_wheres, "comparison", "comparisons"), s.n_fused_pointwise,
               tj_noun(s.n_fused_pointwise, "step", "steps"), s.n_views, tj_noun(s.n_views, "view", "views"), s.n_dead,
               tj_noun(s.n_dead, "call", "calls"), s.n_common, tj_noun(s.n_common, "call", "calls"), s.n_identities,
               tj_noun(s.n_identities, "multiplication", "multiplications"), s.arena_bytes / 1048576.0,
               s.naive_bytes / 1048576.0, s.lower_bound_bytes / 1048576.0);
        if (copts->native_code)
            printf("native code: %d %s of %d elementwise %s%s\n", s.n_native_segments,
                   tj_noun(s.n_native_segments, "run", "runs"), s.n_native_calls,
                   tj_noun(s.n_native_calls, "call", "calls"),
                   s.n_native_segments ? "" : " (no fused elementwise steps: most come from --decompose core)");
        st = tj_plan_profile_print(p, stdout);
    }
    if (st == TJ_OK && memory) st = tj_plan_print_memory(p, stdout);
    if (st == TJ_OK) st = tj_plan_profile_write_trace(p, trace_path);
    if (st == TJ_OK) printf("trace written to %s\n", trace_path);
    if (st == TJ_OK && denormals) st = denormal_census(g, inputs, n_inputs);
    if (st != TJ_OK) fprintf(stderr, "tjit profile: %s\n", tj_last_error());
    tj_plan_free(p);
    return st == TJ_OK ? 0 : 1;
}

/* Traces and profiles the forward pass or training step of `m` on the
 * benchmark's batch (bench_batch: the inputs `tjit bench` times), of
 * `batch` samples when > 0. */
static int profile_model(model *m, bool train, int64_t batch, const tj_decomp_table *table, int runs,
                         const char *trace_path, bool memory, bool denormals, const tj_compile_options *copts)
{
    step_kind kind = train ? STEP_TRAIN : STEP_FORWARD;
    train_state state = {0};
    tj_tensor *x = NULL, *y = NULL, *inputs[4 * MODEL_MAX_PARAMS + 2];
    tj_graph *g = NULL;
    int rc = 1;
    if ((train && train_state_init(m, &state) != TJ_OK) || bench_batch(m, batch, &x, &y) != TJ_OK ||
        !(g = step_trace(m, kind, batch, table, TJ_TRACE_FAKE)))
        fprintf(stderr, "tjit profile: %s\n", tj_last_error());
    else
        rc = profile(m, g, train, tj_tensor_size(x, 0), inputs, step_inputs(m, train ? &state : NULL, x, train ? y : NULL, inputs), runs,
                     trace_path, memory, denormals, copts);
    tj_graph_free(g);
    tj_tensor_release(x);
    tj_tensor_release(y);
    if (train) train_state_free(&state);
    return rc;
}

int cmd_profile(int argc, char **argv)
{
    static const struct option opts[] = {{"runs", required_argument, 0, 'r'},  {"threads", required_argument, 0, 'j'},
                                         {"batch", required_argument, 0, 'b'},
                                         {"decompose", required_argument, 0, 'd'}, {"trace", required_argument, 0, 'o'},
                                         {"memory", no_argument, 0, 'm'},      {"train", no_argument, 0, 't'},
                                         {"no-fusion", no_argument, 0, 'f'},   {"native", no_argument, 0, 'n'},
                                         {"flush-denormal", no_argument, 0, 'z'}, {"denormals", no_argument, 0, 'D'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    int runs = 20, threads = 0, batch = 0, c;
    bool memory = false, train = false, flush = false, denormals = false;
    const char *decompose = "none", *trace_path = NULL;
    tj_compile_options copts = {0};
    optind = 1;
    while ((c = getopt_long(argc, argv, "r:j:b:d:o:mtfnzDh", opts, NULL)) != -1) {
        switch (c) {
        case 'r':
            if (!cmd_parse_int(optarg, 1, INT_MAX, &runs))
                return cmd_bad_value("profile", opts, c, optarg, "a positive integer", usage);
            break;
        case 'j':
            if (!cmd_parse_int(optarg, 1, INT_MAX, &threads))
                return cmd_bad_value("profile", opts, c, optarg, "a positive number of threads; omit for all cores",
                                     usage);
            break;
        case 'b':
            if (!cmd_parse_int(optarg, 1, INT_MAX, &batch))
                return cmd_bad_value("profile", opts, c, optarg, "a positive number of samples", usage);
            break;
        case 'd':
            if (strcmp(optarg, "none") && strcmp(optarg, "core"))
                return cmd_bad_value("profile", opts, c, optarg, "core or none", usage);
            decompose = optarg;
            break;
        case 'o': trace_path = optarg; break;
        case 'm': memory = true; break;
        case 't': train = true; break;
        case 'f': copts.no_fusion = true; break;
        case 'n': copts.native_code = true; break;
        case 'z': flush = true; break;
        case 'D': denormals = true; break;
        default: return cmd_usage_exit(usage, c);
        }
    }
    bool one = cmd_operands("profile", argc, argv, 1, "the model");
    const model_def *def = one ? model_find(argv[optind]) : NULL;
    if (!def || (train && !def->trainable)) {
        if (one && !def) fprintf(stderr, "tjit profile: unknown model '%s'\n", argv[optind]);
        if (def && train && !def->trainable) fprintf(stderr, "tjit profile: %s has no training step\n", def->id);
        usage(stderr);
        return 2;
    }
    if (threads > 0) tj_set_num_threads(threads);
    if (flush && cmd_flush_denormal("profile")) return 1;
    char default_path[128];
    snprintf(default_path, sizeof default_path, "%s.trace.json", def->id);
    if (cmd_check_output_path("profile", trace_path ? trace_path : default_path)) return 1; /* before the runs */
    tj_decomp_table *table = strcmp(decompose, "core") ? NULL : tj_core_decompositions();
    model m;
    if ((!table && !strcmp(decompose, "core")) || model_create(def, 0, &m) != TJ_OK) {
        fprintf(stderr, "tjit profile: %s\n", tj_last_error());
        tj_decomp_table_free(table);
        return 1;
    }
    int rc = profile_model(&m, train, batch, table, runs, trace_path ? trace_path : default_path, memory, denormals,
                           &copts);
    model_free(&m);
    tj_decomp_table_free(table);
    return rc;
}
