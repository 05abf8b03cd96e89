/* The cost of decomposition: each composite operator with a kernel on the
 * WORKLOADS.md sizes (gelu f32[16*2^20], softmax and layer_norm with weight
 * and bias over the last dim of f32[4096,1024], and their backward
 * operators), timed as
 *   kernel      the one-call graph compiled with tj_compile, tj_plan_run_into
 *   decomposed  the graph traced with tj_core_decompositions() (primitives
 *               only), cleaned by the dead-code / CSE / no-op passes,
 *               compiled and run the same way
 *   native      the decomposed graph compiled with native_code (its fused
 *               steps' arithmetic as machine code, tracer/fuse_native.c)
 * with 1 and 2 threads; median (and best) of RUNS runs after a warm-up run.
 * Usage: bench_decomp [runs] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tjit/plan.h"
#include "tjit/tjit.h"

static int runs = 20;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One benchmarked call: operator and arguments (tensors from the inputs). */
typedef struct bench_op {
    const char *label;
    const char *op;
    int n_in;
    int64_t shape[2];
    int ndim;
    int (*args)(tj_tensor *const *in, tj_value *args); /* fills the schema's arguments */
} bench_op;

static const int64_t hidden[1] = {1024};
static const bool all_grads[3] = {true, true, true};

static int gelu_args(tj_tensor *const *in, tj_value *a)
{
    a[0] = tj_v_tensor(in[0]), a[1] = tj_v_str("none");
    return 2;
}
static int softmax_args(tj_tensor *const *in, tj_value *a)
{
    a[0] = tj_v_tensor(in[0]), a[1] = tj_v_int(-1), a[2] = tj_v_bool(false);
    return 3;
}
static int layer_norm_args(tj_tensor *const *in, tj_value *a)
{
    a[0] = tj_v_tensor(in[0]), a[1] = tj_v_ints(hidden, 1), a[2] = tj_v_tensor(in[1]), a[3] = tj_v_tensor(in[2]);
    a[4] = tj_v_float(1e-5);
    return 5;
}
static int gelu_backward_args(tj_tensor *const *in, tj_value *a)
{
    a[0] = tj_v_tensor(in[0]), a[1] = tj_v_tensor(in[1]), a[2] = tj_v_str("none");
    return 3;
}
static int softmax_backward_args(tj_tensor *const *in, tj_value *a)
{
    a[0] = tj_v_tensor(in[0]), a[1] = tj_v_tensor(in[1]), a[2] = tj_v_int(-1), a[3] = tj_v_dtype(TJ_FLOAT32);
    return 4;
}
/* in: grad, x, mean [4096, 1], rstd [4096, 1], weight, bias */
static int layer_norm_backward_args(tj_tensor *const *in, tj_value *a)
{
    a[0] = tj_v_tensor(in[0]), a[1] = tj_v_tensor(in[1]), a[2] = tj_v_ints(hidden, 1), a[3] = tj_v_tensor(in[2]);
    a[4] = tj_v_tensor(in[3]), a[5] = tj_v_tensor(in[4]), a[6] = tj_v_tensor(in[5]), a[7] = tj_v_bools(all_grads, 3);
    return 8;
}

static const bench_op ops[] = {
    {"gelu f32[16Mi]", "aten::gelu", 1, {16 << 20}, 1, gelu_args},
    {"_softmax f32[4096,1024]", "aten::_softmax", 1, {4096, 1024}, 2, softmax_args},
    {"native_layer_norm f32[4096,1024]", "aten::native_layer_norm", 3, {4096, 1024}, 2, layer_norm_args},
    {"gelu_backward f32[16Mi]", "aten::gelu_backward", 2, {16 << 20}, 1, gelu_backward_args},
    {"_softmax_backward_data f32[4096,1024]", "aten::_softmax_backward_data", 2, {4096, 1024}, 2,
     softmax_backward_args},
    {"native_layer_norm_backward f32[4096,1024]", "aten::native_layer_norm_backward", 6, {4096, 1024}, 2,
     layer_norm_backward_args},
};

static const bench_op *current;

static tj_status traced(void *ctx, tj_tensor *const *in, int n_in, tj_tensor **out, int *n_out)
{
    (void)ctx;
    (void)n_in;
    tj_value args[16], outs[4];
    const tj_op *op = tj_op_find(current->op);
    current->args(in, args);
    tj_status st = tj_dispatch(op, args, tj_op_num_args(op), outs);
    if (st != TJ_OK) return st;
    *n_out = 0;
    for (int i = 0; i < tj_op_num_returns(op); i++)
        if (outs[i].kind == TJ_V_TENSOR) out[(*n_out)++] = outs[i].u.t;
    return TJ_OK;
}

/* Inputs: full-size tensors uniform in [-3, 3); layer norm's weight and
 * bias [1024], its mean and rstd [4096, 1] (rstd positive). */
static void make_inputs(const bench_op *b, tj_tensor **in)
{
    for (int i = 0; i < b->n_in; i++) {
        bool param = !strcmp(b->op, "aten::native_layer_norm") ? i > 0 : i >= 4;
        bool stat = !strcmp(b->op, "aten::native_layer_norm_backward") && (i == 2 || i == 3);
        int64_t row[2] = {4096, 1};
        in[i] = param ? tj_rand(hidden, 1, TJ_DTYPE_NONE) : stat ? tj_rand(row, 2, TJ_DTYPE_NONE) : tj_rand(b->shape, b->ndim, TJ_DTYPE_NONE);
        if (!param && !stat) in[i] = tj_add_scalar(tj_mul_scalar(in[i], tj_v_float(6.0)), tj_v_float(-3.0));
        tj_scope_keep(in[i]);
    }
}

/* Median and best seconds of plan runs writing into preallocated outputs. */
static void time_plan(tj_plan *p, tj_tensor **in, int n_in, double *median, double *best)
{
    double t[256];
    for (int r = -1; r < runs; r++) {
        double t0 = now();
        tj_status st = tj_plan_run_into(p, in, n_in, NULL);
        double t1 = now();
        if (st != TJ_OK) {
            fprintf(stderr, "bench_decomp: %s\n", tj_last_error());
            exit(1);
        }
        if (r >= 0) t[r] = t1 - t0;
    }
    qsort(t, (size_t)runs, sizeof *t, cmp);
    *median = t[runs / 2];
    *best = t[0];
}

static tj_plan *compile_or_die(tj_graph *g, bool native_code, const char *what)
{
    tj_compile_options o = {.native_code = native_code};
    tj_plan *p = g ? tj_compile(g, &o) : NULL;
    if (!p) {
        fprintf(stderr, "bench_decomp: %s: %s\n", what, tj_last_error());
        exit(1);
    }
    if (native_code && tj_plan_native_code_error(p)) {
        fprintf(stderr, "bench_decomp: %s: %s\n", what, tj_plan_native_code_error(p));
        exit(1);
    }
    return p;
}

int main(int argc, char **argv)
{
    if (argc > 1) runs = atoi(argv[1]);
    if (runs < 1 || runs > 256) runs = 20;
    tj_decomp_table *core = tj_core_decompositions();
    static const tj_graph_pass passes[3] = {tj_pass_dead_code, tj_pass_cse, tj_pass_noop};
    static const char *const names[3] = {"dce", "cse", "noop"};
    printf("| operator | threads | kernel (ms) | decomposed (ms) | ratio | native (ms) | ratio | decomposed graph |\n");
    printf("|---|---|---|---|---|---|---|---|\n");
    for (size_t k = 0; k < sizeof ops / sizeof *ops; k++) {
        current = &ops[k];
        tj_tensor *in[8];
        make_inputs(current, in);
        tj_graph *g = tj_make_fx(traced, NULL, in, current->n_in, NULL, TJ_TRACE_FAKE);
        tj_graph *d = tj_make_fx(traced, NULL, in, current->n_in, core, TJ_TRACE_FAKE);
        if (d) tj_run_passes(d, passes, names, 3, NULL);
        tj_plan *pk = compile_or_die(g, false, "kernel graph"), *pd = compile_or_die(d, false, "decomposed graph");
        tj_plan *pn = compile_or_die(d, true, "decomposed graph, native code");
        tj_plan_statistics stats;
        tj_plan_stats(pd, &stats);
        for (int threads = 1; threads <= 2; threads++) {
            tj_set_num_threads(threads);
            double km, kb, dm, db, nm, nb;
            time_plan(pk, in, current->n_in, &km, &kb);
            time_plan(pd, in, current->n_in, &dm, &db);
            time_plan(pn, in, current->n_in, &nm, &nb);
            printf("| %s | %d | %.2f (best %.2f) | %.2f (best %.2f) | %.2fx | %.2f (best %.2f) | %.2fx | %d calls, %d "
                   "kernels, arena %.0f MiB |\n",
                   current->label, threads, km * 1e3, kb * 1e3, dm * 1e3, db * 1e3, dm / km, nm * 1e3, nb * 1e3,
                   nm / km, tj_graph_num_calls(d), stats.n_kernels, (double)stats.arena_bytes / (1 << 20));
            fflush(stdout);
        }
        tj_plan_free(pk);
        tj_plan_free(pd);
        tj_plan_free(pn);
        tj_graph_free(g);
        tj_graph_free(d);
        for (int i = 0; i < current->n_in; i++) tj_tensor_release(in[i]);
    }
    tj_decomp_table_free(core);
    return 0;
}
