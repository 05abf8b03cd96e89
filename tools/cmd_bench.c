/* tjit bench [NAME...] [--threads 1,2] [--runs N] [--json FILE] [--export DIR] [--native]
 *            [--flush-denormal] [--quiet] */
#include <cblas.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "commands.h"
#include "runtime/internal.h"

#define MAX_THREAD_COUNTS 8
#define MAX_NAMES 32

static void usage(FILE *f)
{
    fprintf(f, "usage: tjit bench [NAME...] [--threads 1,2] [--runs N] [--json FILE] [--export DIR] [--native]\n"
               "                  [--flush-denormal] [--quiet]\n\n"
               "Benchmarks the WORKLOADS.md workloads. NAME is a model (mlp, cnn, gpt: forward\n"
               "pass and training step; block768: forward pass only; each in modes eager,\n"
               "traced, decomposed and jit, as `tjit train --mode`), a micro-benchmark\n"
               "(dispatch, copy, gelu, softmax, layer_norm, mm, sdpa, mlp_b1, trace; mm_cblas,\n"
               "a figure of mm's, runs mm), or 'models' / 'micro' for a group; default:\n"
               "everything.\n\n"
               "Each figure is the median of at least N timed runs (default 20; cheap workloads\n"
               "get more) after warm-up, next to the minor page faults per run and, for the\n"
               "replayed modes, the plan's arena (a run of dispatch: 1000 tj_add calls, its\n"
               "figure per call). Training steps all start from the state after\n"
               "3 steps from seed 0. The modes are checked against eager mode first, and\n"
               "their timed runs are interleaved so that ratios hold on a drifting machine\n"
               "(mm_cblas excepted: timed after mm, as OpenBLAS's idle workers spin for ~0.1 s).\n"
               "--threads sets tjit's and OpenBLAS's threads for each listed count.\n"
               "--json writes every figure for tools (bench/merge.py); --export writes the\n"
               "weights, batches and results bench/torch_ref.py checks PyTorch against, of the\n"
               "named models (and mlp for mlp_b1, gpt for trace), and exits.\n"
               "--native compiles the replayed and jit modes' fused elementwise steps to machine\n"
               "code (tj_compile_options.native_code: the system C compiler, cached per user);\n"
               "when it cannot be built, bench stops with the reason.\n"
               "--flush-denormal flushes denormal numbers to zero (tj_set_flush_denormal, as\n"
               "torch.set_flush_denormal(True)): faster where values underflow into denormals\n"
               "(the gpt training step on an Intel CPU); results then differ from IEEE's there.\n"
               "--quiet drops the progress lines on stderr.\n");
}

/* Parses "1,2" into counts; false on anything else (an empty entry, as
 * in "1," or "1,,2", a sign or a space, which strtol would skip, or a
 * count given twice). */
static bool parse_threads(const char *s, int *counts, int *n)
{
    *n = 0;
    for (;;) {
        char *end;
        if (!isdigit((unsigned char)*s)) return false;
        long v = strtol(s, &end, 10);
        if (v < 1 || v > 256 || *n == MAX_THREAD_COUNTS || (*end && *end != ',')) return false;
        for (int i = 0; i < *n; i++)
            if (counts[i] == v) return false; /* the same rows twice */
        counts[(*n)++] = (int)v;
        if (!*end) return true;
        s = end + 1;
    }
}

/* The benchmark a name runs: mm_cblas, a figure of mm's (cblas_sgemm called
 * directly), runs mm, which times both. */
static const char *bench_of(const char *name) { return strcmp(name, "mm_cblas") ? name : "mm"; }

/* Expands the names given (or everything) into models and micro lists. */
static bool select_names(int argc, char **argv, const char **models, int *n_models, const char **micro, int *n_micro)
{
    bool all = argc == 0, want_models = all, want_micro = all;
    *n_models = *n_micro = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "models")) want_models = true;
        else if (!strcmp(argv[i], "micro")) want_micro = true;
        else if (!bench_known(bench_of(argv[i]))) {
            fprintf(stderr, "tjit bench: unknown benchmark '%s'\n\n", argv[i]);
            return false;
        }
    }
    for (int i = 0; bench_model_names[i]; i++) {
        bool named = want_models;
        for (int k = 0; k < argc; k++) named |= !strcmp(argv[k], bench_model_names[i]);
        if (named) models[(*n_models)++] = bench_model_names[i];
    }
    for (int i = 0; bench_micro_names[i]; i++) {
        bool named = want_micro;
        for (int k = 0; k < argc; k++) named |= !strcmp(bench_of(argv[k]), bench_micro_names[i]);
        if (named) micro[(*n_micro)++] = bench_micro_names[i];
    }
    return true;
}

static double mib(long long bytes) { return (double)bytes / 1048576.0; }

/* One line per (workload, step, threads): the modes side by side (jit: "-"
 * where a result has none). */
static void print_model_table(const bench_results *r)
{
    static const char *const modes[4] = {"eager", "traced", "decomposed", "jit"};
    bool header = false;
    for (int i = 0; i < r->n; i++) {
        const bench_result *e = &r->items[i];
        if (strcmp(e->mode, "eager") || strcmp(e->name, e->what) == 0) continue;
        const bench_result *m[4];
        for (int k = 0; k < 4; k++) m[k] = bench_results_find(r, e->name, e->what, modes[k], e->threads);
        if (!m[1] || !m[2]) continue;
        if (!header) {
            printf("\n%-9s %-7s %3s %11s %11s %11s %11s %13s %14s %10s %12s %12s %20s\n", "model", "step", "thr",
                   "eager", "traced", "decomposed", "jit", "traced/eager", "decomp/traced", "jit/eager", "arena trace",
                   "arena decomp", "faults/call e/t/d/j");
            header = true;
        }
        char v[4][24] = {"-", "-", "-", "-"}, jit_ratio[16] = "-", jit_faults[16] = "-";
        for (int k = 0; k < 4; k++)
            if (m[k]) snprintf(v[k], sizeof v[k], "%.3f %s", m[k]->value, m[k]->unit);
        if (m[3]) {
            snprintf(jit_ratio, sizeof jit_ratio, "%.2fx", m[3]->median_ms / m[0]->median_ms);
            snprintf(jit_faults, sizeof jit_faults, "%.1f", m[3]->faults_per_call);
        }
        printf("%-9s %-7s %3d %11s %11s %11s %11s %12.2fx %13.2fx %10s %8.2f MiB %8.2f MiB %5.1f/%.1f/%.1f/%s\n",
               e->name, e->what, e->threads, v[0], v[1], v[2], v[3], m[1]->median_ms / m[0]->median_ms,
               m[2]->median_ms / m[1]->median_ms, jit_ratio, mib(m[1]->arena_bytes), mib(m[2]->arena_bytes),
               m[0]->faults_per_call, m[1]->faults_per_call, m[2]->faults_per_call, jit_faults);
    }
}

static void print_micro_table(const bench_results *r)
{
    bool header = false;
    for (int i = 0; i < r->n; i++) {
        const bench_result *x = &r->items[i];
        if (strcmp(x->name, x->what)) continue;
        if (!header) {
            printf("\n%-15s %3s %16s %13s %12s %6s\n", "micro", "thr", "figure", "ms per run", "faults/run", "runs");
            header = true;
        }
        char v[32];
        snprintf(v, sizeof v, "%.4g %s", x->value, x->unit);
        /* %-15s: variant names are up to 15 characters (layer_norm_out, dispatch_mode) */
        printf("%-15s %3d %16s %13.4f %12.2f %6d\n", x->name, x->threads, v, x->median_ms, x->faults_per_call, x->runs);
    }
}

/* libgomp reads OMP_WAIT_POLICY when it loads: the policy of this process. */
static const char *wait_policy(void)
{
    const char *p = getenv("OMP_WAIT_POLICY");
    return p && *p ? p : "default";
}

static tj_status dump_json(FILE *f, void *root)
{
    return json_dumpf(root, f, JSON_INDENT(1)) == 0 && fflush(f) == 0 && !ferror(f) ? TJ_OK : TJ_ERR_IO;
}

static int write_json(const char *path, const bench_results *r, const int *threads, int n_threads, int runs,
                      const char *date, const double *load)
{
    json_t *root = json_object(), *list = json_array(), *th = json_array();
    for (int i = 0; i < n_threads; i++) json_array_append_new(th, json_integer(threads[i]));
    json_object_set_new(root, "tool", json_string("tjit"));
    json_object_set_new(root, "date", json_string(date));
    json_object_set_new(root, "openblas_core", json_string(openblas_get_corename()));
    json_object_set_new(root, "cpus", json_integer(sysconf(_SC_NPROCESSORS_ONLN)));
    json_object_set_new(root, "loadavg", json_pack("[f,f,f]", load[0], load[1], load[2]));
    json_object_set_new(root, "threads", th);
    json_object_set_new(root, "min_runs", json_integer(runs));
    json_object_set_new(root, "omp_wait_policy", json_string(wait_policy()));
    json_object_set_new(root, "flush_denormal", json_boolean(tj_get_flush_denormal()));
    for (int i = 0; i < r->n; i++) {
        const bench_result *x = &r->items[i];
        json_t *o = json_pack("{s:s,s:s,s:s,s:i,s:i,s:f,s:f,s:f,s:f,s:f,s:s}", "name", x->name, "what", x->what, "mode",
                              x->mode, "threads", x->threads, "runs", x->runs, "median_ms", x->median_ms, "min_ms",
                              x->min_ms, "cpu_ms", x->cpu_ms, "faults_per_call", x->faults_per_call, "value", x->value,
                              "unit", x->unit);
        if (x->arena_bytes >= 0) {
            json_object_set_new(o, "arena_bytes", json_integer(x->arena_bytes));
            json_object_set_new(o, "kernels", json_integer(x->kernels));
        }
        json_array_append_new(list, o);
    }
    json_object_set_new(root, "results", list);
    /* through a temporary: a failed write leaves an earlier file as it was */
    int rc = tj_write_file_replacing(path, "tjit bench", dump_json, root) == TJ_OK ? 0 : 1;
    if (rc) fprintf(stderr, "%s\n", tj_last_error());
    json_decref(root);
    return rc;
}

int cmd_bench(int argc, char **argv)
{
    static const struct option opts[] = {{"threads", required_argument, 0, 't'}, {"runs", required_argument, 0, 'r'},
                                         {"json", required_argument, 0, 'j'},    {"export", required_argument, 0, 'x'},
                                         {"quiet", no_argument, 0, 'q'},         {"native", no_argument, 0, 'n'},
                                         {"flush-denormal", no_argument, 0, 'z'}, {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    int threads[MAX_THREAD_COUNTS] = {1, 2}, n_threads = 2, runs = 20, c;
    const char *json = NULL, *export_dir = NULL;
    bool quiet = false, native_code = false, flush = false;
    optind = 1;
    while ((c = getopt_long(argc, argv, "t:r:j:x:qnzh", opts, NULL)) != -1) {
        switch (c) {
        case 't':
            if (!parse_threads(optarg, threads, &n_threads))
                return cmd_bad_value("bench", opts, c, optarg, "a comma-separated list of distinct positive thread counts up to 256, like 1,2",
                                     usage);
            break;
        case 'r':
            if (!cmd_parse_int(optarg, 1, BENCH_MAX_RUNS, &runs))
                return cmd_bad_value("bench", opts, c, optarg, "a positive integer up to 1000000", usage);
            break;
        case 'j': json = optarg; break;
        case 'x': export_dir = optarg; break;
        case 'q': quiet = true; break;
        case 'n': native_code = true; break;
        case 'z': flush = true; break;
        default: return cmd_usage_exit(usage, c);
        }
    }
    const char *models[MAX_NAMES], *micro[MAX_NAMES];
    int n_models, n_micro;
    if (!select_names(argc - optind, argv + optind, models, &n_models, micro, &n_micro)) {
        usage(stderr);
        return 2;
    }
    if (export_dir) {
        /* the named models, and those whose files a named micro-benchmark reads */
        const char *ids[MAX_NAMES];
        int n_ids = 0;
        for (int i = 0; bench_model_names[i]; i++) {
            bool wanted = false;
            for (int k = 0; k < n_models; k++) wanted |= !strcmp(models[k], bench_model_names[i]);
            for (int k = 0; k < n_micro; k++) {
                const char *m = bench_micro_model(micro[k]);
                wanted |= m && !strcmp(m, bench_model_names[i]);
            }
            if (wanted) ids[n_ids++] = bench_model_names[i];
        }
        if (bench_export(export_dir, ids, n_ids) != TJ_OK) {
            fprintf(stderr, "tjit bench: %s\n", tj_last_error());
            return 1;
        }
        printf("wrote reference files for bench/torch_ref.py to %s\n", export_dir);
        return 0;
    }
    if (json && cmd_check_output_path("bench", json)) return 1; /* before an hour of benchmarks */
    if (flush && cmd_flush_denormal("bench")) return 1;
    char date[64];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S %Z", localtime(&now));
    double load[3] = {0, 0, 0};
    getloadavg(load, 3);
    printf("tjit bench, %s; OpenBLAS core %s; %ld CPUs; load average %.2f %.2f %.2f\n", date, openblas_get_corename(),
           sysconf(_SC_NPROCESSORS_ONLN), load[0], load[1], load[2]);
    printf("threads:");
    for (int i = 0; i < n_threads; i++) printf("%s%d", i ? "," : " ", threads[i]);
    printf(" (tjit's kernels and OpenBLAS); OMP_WAIT_POLICY %s; median of >= %d timed %s per figure%s%s\n",
           wait_policy(), runs, tj_noun(runs, "run", "runs"),
           native_code ? "; replayed and jit modes with native code" : "", flush ? "; denormals flushed to zero" : "");
    fflush(stdout);
    bench_options o = {threads, n_threads, runs, quiet ? NULL : stderr, native_code};
    bench_results r = {0};
    tj_status st = TJ_OK;
    for (int i = 0; i < n_models && st == TJ_OK; i++) st = bench_model(models[i], &o, &r);
    for (int i = 0; i < n_micro && st == TJ_OK; i++) st = bench_micro(micro[i], &o, &r);
    int rc = 0;
    if (st != TJ_OK) {
        fprintf(stderr, "tjit bench: %s\n", tj_last_error());
        rc = 1;
    }
    print_model_table(&r);
    print_micro_table(&r);
    if (json && r.n && write_json(json, &r, threads, n_threads, runs, date, load)) rc = 1;
    bench_results_free(&r);
    return rc;
}
