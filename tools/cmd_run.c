/* tjit run GRAPH [INPUT.npy ...] [--decompose core|none] [--native] [--threads N]
 *                [--out PREFIX] [--expect OUT.npy]... [--rtol R] [--atol A] [--runs N] [--quiet] */
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "commands.h"
#include "runtime/internal.h"
#include "tjit/tjit.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: tjit run GRAPH [INPUT.npy ...] [--decompose core|none] [--native] [--threads N]\n"
               "                [--out PREFIX] [--expect OUT.npy]... [--rtol R] [--atol A] [--runs N] [--quiet]\n\n"
               "Reads a graph in tjit's text form (as `tjit trace` prints it, or python/tjit_fx.py\n"
               "writes from a PyTorch make_fx GraphModule), compiles it into a plan (tj_compile) and\n"
               "runs it on the .npy files given, one per placeholder in order (any dtype numpy and\n"
               "tjit share: float32/64/16, int64/32/16/8, uint8, bool), then prints each output (as\n"
               "torch prints a tensor; --quiet: its type only).\n"
               "python/tjit_fx.py's save_case writes such a graph, its inputs and torch's outputs.\n"
               "--decompose core first lowers the graph through the core decomposition table;\n"
               "--native compiles the fused elementwise loops with the system C compiler.\n"
               "--threads N sets the kernels' threads (default: all cores).\n"
               "--out PREFIX writes output k to PREFIXk.npy. --expect OUT.npy (once per output, in\n"
               "order) checks each output against a reference, as torch.allclose with --rtol\n"
               "(default 1e-5) and --atol (default 1e-6): the exit status is 1 on a mismatch.\n"
               "--runs N then times at least N more runs (the median; after 3 warm-up runs, and\n"
               "up to 400 runs for a cheap graph, as `tjit bench` times). An input written back by\n"
               "the graph (an in-place update it holds: an optimiser step's parameters) is updated\n"
               "in memory, not in its file: --out writes it too, as PREFIXinK.npy, after the first run.\n");
}

typedef struct run_args {
    const char *decompose, *out_prefix;
    const char **expect;
    int n_expect, runs, threads;
    double rtol, atol;
    bool native, quiet;
} run_args;

typedef struct timed_plan {
    tj_plan *p;
    tj_tensor *const *inputs;
    int n_inputs;
} timed_plan;

static tj_status run_once(void *ctx)
{
    timed_plan *t = ctx;
    tj_tensor *outs[TJ_MAX_GRAPH_OUTPUTS];
    tj_scope *s = tj_scope_begin();
    tj_status st = tj_plan_run(t->p, t->inputs, t->n_inputs, outs);
    tj_scope_end(s);
    return st;
}

/* Largest |out - ref| over the elements, both read as double. */
static double max_abs_diff(const tj_tensor *out, const tj_tensor *ref)
{
    double worst = 0;
    for (int64_t i = 0; i < tj_tensor_numel(out); i++) {
        double a = tj_tensor_item_at(out, i), b = tj_tensor_item_at(ref, i);
        if (a == b || (isnan(a) && isnan(b))) continue; /* equal infinities too */
        double d = fabs(a - b);
        if (!(d <= worst)) worst = d; /* nan wins */
    }
    return worst;
}

/* Output k against its reference ref, read from path: prints the verdict;
 * 1 on a mismatch. */
static int check_output(int k, const tj_tensor *out, const tj_tensor *ref, const char *path, double rtol, double atol)
{
    /* allclose would broadcast a reference of another shape */
    char a[160], b[160];
    tj_tensor_describe(out, a, sizeof a);
    tj_tensor_describe(ref, b, sizeof b);
    if (strcmp(a, b))
        return fprintf(stderr, "tjit run: output %d is %s, %s holds %s\n", k, a, path, b), 1;
    bool close = false;
    if (tj_allclose(out, ref, rtol, atol, true, &close) != TJ_OK)
        return fprintf(stderr, "tjit run: output %d against %s: %s\n", k, path, tj_last_error()), 1;
    printf("output %d %s %s (largest |difference| %.3g)\n", k, close ? "matches" : "DIFFERS from", path,
           max_abs_diff(out, ref));
    return close ? 0 : 1;
}

/* Prints (and writes, checks against refs) the outputs of one run. */
static int report_outputs(const run_args *a, tj_tensor *const *outs, int n_out, tj_tensor *const *refs)
{
    int rc = 0;
    for (int k = 0; k < n_out; k++) {
        char type[160];
        tj_tensor_describe(outs[k], type, sizeof type);
        printf("output %d: %s\n", k, type);
        if (!a->quiet && tj_tensor_print(outs[k], stdout) != TJ_OK)
            return fprintf(stderr, "tjit run: %s\n", tj_last_error()), 1;
        if (a->out_prefix) {
            char path[PATH_MAX];
            snprintf(path, sizeof path, "%s%d.npy", a->out_prefix, k);
            if (tj_npy_save(path, outs[k]) != TJ_OK) return fprintf(stderr, "tjit run: %s\n", tj_last_error()), 1;
            printf("written to %s\n", path);
        }
        if (k < a->n_expect) rc |= check_output(k, outs[k], refs[k], a->expect[k], a->rtol, a->atol);
    }
    return rc;
}

/* Names the inputs the run updated in place (an optimiser step's
 * parameters) and, with --out, writes them to PREFIXinK.npy; 1 when a write
 * fails. */
static int report_updated_inputs(const run_args *a, tj_tensor *const *inputs, const uint32_t *versions, int n)
{
    for (int i = 0; i < n; i++) {
        if (tj_tensor_version(inputs[i]) == versions[i]) continue;
        char type[160];
        tj_tensor_describe(inputs[i], type, sizeof type);
        printf("input %d (%s) was updated in place", i, type);
        if (a->out_prefix) {
            char path[PATH_MAX];
            snprintf(path, sizeof path, "%sin%d.npy", a->out_prefix, i);
            if (tj_npy_save(path, inputs[i]) != TJ_OK) return printf("\n"), fprintf(stderr, "tjit run: %s\n", tj_last_error()), 1;
            printf(": written to %s", path);
        }
        printf("\n");
    }
    return 0;
}

/* The placeholders' types, for a wrong number of input files. */
static void print_placeholders(const tj_graph *g)
{
    fprintf(stderr, "the graph's placeholders:");
    for (int n = 0; n < tj_graph_num_nodes(g); n++)
        if (tj_graph_node_kind(g, n) == TJ_NODE_PLACEHOLDER) fprintf(stderr, " %%%s", tj_graph_node_name(g, n));
    fprintf(stderr, "\n");
}

static int run_graph(const run_args *a, tj_graph *g, char **input_paths, int n_inputs)
{
    int n_out = tj_graph_num_outputs(g), rc = 1;
    if (n_inputs != tj_graph_num_inputs(g)) {
        fprintf(stderr, "tjit run: the graph takes %d %s, %d .npy %s given\n", tj_graph_num_inputs(g),
                tj_noun(tj_graph_num_inputs(g), "input", "inputs"), n_inputs, tj_noun(n_inputs, "file", "files"));
        print_placeholders(g);
        return 1;
    }
    if (a->n_expect > n_out) {
        fprintf(stderr, "tjit run: %d --expect files for %d %s\n", a->n_expect, n_out, tj_noun(n_out, "output", "outputs"));
        return 1;
    }
    tj_tensor **inputs = calloc((size_t)n_inputs + 1, sizeof *inputs);
    uint32_t *versions = calloc((size_t)n_inputs + 1, sizeof *versions);
    tj_tensor **refs = calloc((size_t)a->n_expect + 1, sizeof *refs);
    tj_compile_options copts = {.native_code = a->native};
    tj_plan *p = NULL;
    if (!inputs || !versions || !refs) {
        free(inputs);
        free(versions);
        free(refs);
        return fprintf(stderr, "tjit run: out of memory\n"), 1;
    }
    tj_scope *scope = tj_scope_begin();
    for (int i = 0; i < n_inputs; i++)
        if (!(inputs[i] = tj_npy_load(input_paths[i]))) goto done;
    /* read before --out writes anything: a reference among the files it
     * writes (--out ref_ --expect ref_0.npy) was checked against itself */
    for (int k = 0; k < a->n_expect; k++)
        if (!(refs[k] = tj_npy_load(a->expect[k]))) {
            fprintf(stderr, "tjit run: output %d: %s\n", k, tj_last_error());
            goto done_reported;
        }
    if (!(p = tj_compile(g, &copts))) goto done;
    if (a->native && tj_plan_native_code_error(p)) {
        fprintf(stderr, "tjit run: native code not built: %s\n", tj_plan_native_code_error(p));
        goto done_reported;
    }
    tj_tensor *outs[TJ_MAX_GRAPH_OUTPUTS];
    for (int i = 0; i < n_inputs; i++) versions[i] = tj_tensor_version(inputs[i]);
    if (tj_plan_run(p, inputs, n_inputs, outs) != TJ_OK) goto done;
    rc = report_outputs(a, outs, n_out, refs);
    if (rc == 0 && report_updated_inputs(a, inputs, versions, n_inputs)) rc = 1;
    if (a->runs > 0) {
        timed_plan t = {p, inputs, n_inputs};
        bench_case c = {.call = run_once, .ctx = &t};
        bench_timing timing;
        if (bench_measure(&c, 1, a->runs, 3, &timing) != TJ_OK) goto done;
        tj_plan_statistics s;
        tj_plan_stats(p, &s);
        bool us = timing.median_ms < 1; /* a small graph's run takes microseconds */
        printf("%d timed %s: median %.4g %s (fastest %.4g), %d %s per run, arena %.2f MiB\n", timing.runs,
               tj_noun(timing.runs, "run", "runs"), timing.median_ms * (us ? 1e3 : 1), us ? "us" : "ms",
               timing.min_ms * (us ? 1e3 : 1), s.n_kernels, tj_noun(s.n_kernels, "kernel", "kernels"),
               s.arena_bytes / 1048576.0);
    }
    goto done_reported;
done:
    fprintf(stderr, "tjit run: %s\n", tj_last_error());
    rc = 1;
done_reported:
    tj_plan_free(p);
    tj_scope_end(scope);
    free(inputs);
    free(versions);
    free(refs);
    return rc;
}

static bool parse_tolerance(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v >= 0) || v > 1e300) return false;
    *out = v;
    return true;
}

int cmd_run(int argc, char **argv)
{
    static const struct option opts[] = {
        {"decompose", required_argument, 0, 'd'}, {"native", no_argument, 0, 'n'},
        {"threads", required_argument, 0, 'j'},   {"out", required_argument, 0, 'o'},
        {"expect", required_argument, 0, 'e'},    {"rtol", required_argument, 0, 'R'},
        {"atol", required_argument, 0, 'A'},      {"runs", required_argument, 0, 'r'},
        {"quiet", no_argument, 0, 'q'},           {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    run_args a = {.decompose = "none", .rtol = 1e-5, .atol = 1e-6};
    const char **expect = calloc((size_t)argc, sizeof *expect); /* at most one per argument */
    if (!expect) return fprintf(stderr, "tjit run: out of memory\n"), 1;
    a.expect = expect;
    int c, rc = 2;
    optind = 1;
    while ((c = getopt_long(argc, argv, "d:nj:o:e:R:A:r:qh", opts, NULL)) != -1) {
        switch (c) {
        case 'd':
            if (strcmp(optarg, "none") && strcmp(optarg, "core")) {
                rc = cmd_bad_value("run", opts, c, optarg, "core or none", usage);
                goto out;
            }
            a.decompose = optarg;
            break;
        case 'n': a.native = true; break;
        case 'q': a.quiet = true; break;
        case 'j':
            if (!cmd_parse_int(optarg, 1, INT_MAX, &a.threads)) {
                rc = cmd_bad_value("run", opts, c, optarg, "a positive number of threads; omit for all cores", usage);
                goto out;
            }
            break;
        case 'o': a.out_prefix = optarg; break;
        case 'e': expect[a.n_expect++] = optarg; break;
        case 'R':
        case 'A':
            if (!parse_tolerance(optarg, c == 'R' ? &a.rtol : &a.atol)) {
                rc = cmd_bad_value("run", opts, c, optarg, "a number >= 0", usage);
                goto out;
            }
            break;
        case 'r':
            if (!cmd_parse_int(optarg, 1, BENCH_MAX_RUNS, &a.runs)) {
                rc = cmd_bad_value("run", opts, c, optarg, "a positive integer up to 1000000", usage);
                goto out;
            }
            break;
        default: rc = cmd_usage_exit(usage, c); goto out;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "tjit run: missing the graph FILE\n\n");
        usage(stderr);
        goto out;
    }
    if (a.threads > 0) tj_set_num_threads(a.threads);
    rc = 1;
    size_t len;
    const char *path = strcmp(argv[optind], "-") ? argv[optind] : "/dev/stdin";
    char *text = tj_read_text_file(path, "tjit run", TJ_TEXT_FILE_MAX, &len);
    if (!text) {
        fprintf(stderr, "%s\n", tj_last_error());
        goto out;
    }
    tj_graph *g = tj_graph_parse(text);
    tj_free_file(text, len);
    if (!g) {
        fprintf(stderr, "tjit run: %s: %s\n", path, tj_last_error());
        goto out;
    }
    if (!strcmp(a.decompose, "core")) {
        tj_decomp_table *table = tj_core_decompositions();
        tj_graph *lowered = table ? tj_graph_decompose(g, table) : NULL;
        tj_decomp_table_free(table);
        tj_graph_free(g);
        if (!(g = lowered)) {
            fprintf(stderr, "tjit run: %s: --decompose core: %s\n", path, tj_last_error());
            goto out;
        }
    }
    rc = run_graph(&a, g, argv + optind + 1, argc - optind - 1);
    tj_graph_free(g);
out:
    free(expect);
    return rc;
}
