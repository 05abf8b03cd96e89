/* Micro-benchmarks of WORKLOADS.md and issues 2-3 (see bench.h). Each name
 * measures its variants interleaved call by call, so that their ratios hold
 * on a drifting machine; every variant is its own result (name == what):
 *
 *   dispatch     tj_add of two f32[1] into a new tensor (ns per call);
 *                dispatch_mode: the same with one pass-through mode pushed
 *   copy         memcpy of 64 MiB split over the threads (GB/s read + written):
 *                the memory-bandwidth reference
 *   gelu         gelu (erf) of f32[16 Mi], allocating its output each call;
 *                gelu_out: into a preallocated output (a one-call plan run
 *                with tj_plan_run_into)
 *   softmax      softmax over the last dim of f32[4096, 1024]; softmax_out
 *   layer_norm   layer_norm over the last dim of f32[4096, 1024] with weight
 *                and bias; layer_norm_out
 *   mm           tj_mm 1024^3 (GFLOP/s); mm_cblas: cblas_sgemm on the same
 *                operands into a preallocated result, timed after tj_mm's
 *                runs rather than interleaved with them
 *   sdpa         scaled_dot_product_attention of [1, 12, 128, 64], causal
 *                (ms); sdpa_decomp: matmul, scale, masked_fill, softmax,
 *                matmul as the gpt model writes it
 *   mlp_b1       mlp forward on x [1, 784] in the three modes (bench_models.c)
 *   trace        make_fx of the gpt training step, fake mode, core table */
#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <string.h>

#include "bench.h"

#define DISPATCH_CALLS 1000 /* tj_add calls per timed call */
#define MAX_VARIANTS 2

const char *const bench_micro_names[] = {"dispatch", "copy",   "gelu",   "softmax", "layer_norm",
                                         "mm",       "sdpa",   "mlp_b1", "trace",   NULL};

bool bench_known(const char *name)
{
    for (int i = 0; bench_model_names[i]; i++)
        if (!strcmp(name, bench_model_names[i])) return true;
    for (int i = 0; bench_micro_names[i]; i++)
        if (!strcmp(name, bench_micro_names[i])) return true;
    return false;
}

const char *bench_micro_model(const char *name)
{
    if (!strcmp(name, "mlp_b1")) return "mlp";
    if (!strcmp(name, "trace")) return "gpt";
    return NULL;
}

/* Inputs and state of one micro-benchmark. */
typedef struct op_case {
    const char *name;
    tj_tensor *in[4]; /* the operator's tensor arguments */
    int n_in;
    tj_tensor *out;   /* preallocated result (gelu_out, ..., mm_cblas, copy) */
    tj_plan *plan;    /* the one-call plan of the _out variants */
    model gpt;
    tj_decomp_table *core;
} op_case;

/* The eager call of a case: a new result; in a trace too (trace_one). */
static tj_tensor *apply(const char *name, tj_tensor *const *in)
{
    static const int64_t last[1] = {1024};
    if (!strcmp(name, "gelu")) return tj_gelu(in[0], "none");
    if (!strcmp(name, "softmax")) return tj_softmax(in[0], -1);
    if (!strcmp(name, "layer_norm")) return tj_layer_norm(in[0], last, 1, in[1], in[2], 1e-5);
    if (!strcmp(name, "mm")) return tj_mm(in[0], in[1]);
    return tj_scaled_dot_product_attention(in[0], in[1], in[2], NULL, 0.0, true);
}

/* softmax(mask(q k^T / sqrt(E))) v with the bool causal mask in[3], as
 * models/layers.c writes attention */
static tj_tensor *sdpa_decomposed(tj_tensor *const *in)
{
    double scale = 1.0 / sqrt((double)tj_tensor_size(in[0], -1));
    tj_tensor *att = tj_mul_scalar(tj_matmul(in[0], tj_transpose(in[1], -2, -1)), tj_v_float(scale));
    att = tj_masked_fill(att, tj_eq_scalar(in[3], tj_v_int(0)), tj_v_float(-INFINITY));
    return tj_matmul(tj_softmax(att, -1), in[2]);
}

static tj_status call_dispatch(void *ctx)
{
    op_case *c = ctx;
    for (int i = 0; i < DISPATCH_CALLS; i++) {
        tj_tensor *r = tj_add(c->in[0], c->in[1]);
        if (!r) return tj_last_status();
        tj_tensor_release(r);
    }
    return TJ_OK;
}

static tj_status pass_through(tj_mode *mode, const tj_op *op, const tj_value *args, int nargs, tj_value *outs)
{
    return tj_redispatch(mode, op, args, nargs, outs);
}

static tj_status call_dispatch_mode(void *ctx)
{
    tj_mode mode = {pass_through, NULL, "pass-through"};
    tj_status st = tj_mode_push(&mode);
    if (st != TJ_OK) return st;
    st = call_dispatch(ctx);
    tj_mode_pop(&mode);
    return st;
}

/* memcpy of the 64 MiB input into the output, split over the threads as
 * the elementwise kernels split their work */
static tj_status call_copy(void *ctx)
{
    op_case *c = ctx;
    const char *src = tj_tensor_data(c->in[0]);
    char *dst = tj_tensor_data(c->out);
    size_t bytes = (size_t)tj_tensor_numel(c->in[0]) * sizeof(float);
    int nt = tj_get_num_threads();
#pragma omp parallel num_threads(nt)
    {
        int t = omp_get_thread_num(), n = omp_get_num_threads();
        size_t chunk = (bytes / (size_t)n + 63) & ~(size_t)63;
        size_t s = (size_t)t * chunk, e = s + chunk < bytes ? s + chunk : bytes;
        if (s < e) memcpy(dst + s, src + s, e - s);
    }
    return TJ_OK;
}

static tj_status call_eager(void *ctx)
{
    op_case *c = ctx;
    tj_tensor *r = apply(c->name, c->in);
    if (!r) return tj_last_status();
    tj_tensor_release(r);
    return TJ_OK;
}

static tj_status call_out(void *ctx)
{
    op_case *c = ctx;
    return tj_plan_run_into(c->plan, c->in, c->n_in, &c->out);
}

static tj_status call_cblas(void *ctx)
{
    op_case *c = ctx;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 1024, 1024, 1024, 1.0f, tj_tensor_data(c->in[0]), 1024,
                tj_tensor_data(c->in[1]), 1024, 0.0f, tj_tensor_data(c->out), 1024);
    return TJ_OK;
}

static tj_status call_sdpa_decomposed(void *ctx)
{
    op_case *c = ctx;
    tj_scope *scope = tj_scope_begin();
    tj_tensor *r = sdpa_decomposed(c->in);
    tj_status st = r ? TJ_OK : tj_last_status();
    tj_scope_end(scope);
    return st;
}

static tj_status call_trace(void *ctx)
{
    op_case *c = ctx;
    tj_graph *g = step_trace(&c->gpt, STEP_TRAIN, 0, c->core, TJ_TRACE_FAKE);
    tj_graph_free(g);
    return g ? TJ_OK : tj_last_status();
}

static tj_status trace_one(void *ctx, tj_tensor *const *inputs, int n_inputs, tj_tensor **outputs, int *n_outputs)
{
    (void)n_inputs;
    outputs[0] = apply(((op_case *)ctx)->name, inputs);
    *n_outputs = 1;
    return outputs[0] ? TJ_OK : tj_last_status();
}

static tj_tensor *randn(int ndim, int64_t d0, int64_t d1, int64_t d2, int64_t d3)
{
    const int64_t shape[4] = {d0, d1, d2, d3};
    return tj_randn(shape, ndim, TJ_FLOAT32);
}

/* Inputs of a case (randn from seed 1), its preallocated result and plan. */
static tj_status op_init(op_case *c, const char *name)
{
    memset(c, 0, sizeof *c);
    c->name = name;
    tj_manual_seed(1);
    if (!strcmp(name, "dispatch")) {
        int64_t one = 1;
        c->in[0] = tj_tensor_from_data(TJ_FLOAT32, 1, &one, (float[]){1});
        c->in[1] = tj_tensor_from_data(TJ_FLOAT32, 1, &one, (float[]){2});
        c->n_in = 2;
    } else if (!strcmp(name, "trace")) {
        tj_status st = model_create(model_find("gpt"), 0, &c->gpt);
        if (st == TJ_OK && !(c->core = tj_core_decompositions())) st = tj_last_status();
        return st;
    } else if (!strcmp(name, "gelu") || !strcmp(name, "copy")) {
        c->in[0] = randn(1, (int64_t)16 << 20, 0, 0, 0);
        c->n_in = 1;
    } else if (!strcmp(name, "mm")) {
        c->in[0] = randn(2, 1024, 1024, 0, 0);
        c->in[1] = randn(2, 1024, 1024, 0, 0);
        c->n_in = 2;
    } else if (!strcmp(name, "sdpa")) {
        for (int i = 0; i < 3; i++) c->in[i] = randn(4, 1, 12, 128, 64);
        const int64_t tt[2] = {128, 128};
        c->in[3] = tj_tensor_empty(TJ_BOOL, 2, tt);
        if (c->in[3]) {
            unsigned char *m = tj_tensor_data(c->in[3]);
            for (int i = 0; i < 128; i++)
                for (int j = 0; j < 128; j++) m[i * 128 + j] = j <= i;
        }
        c->n_in = 4;
    } else {
        c->in[0] = randn(2, 4096, 1024, 0, 0);
        c->n_in = 1;
        if (!strcmp(name, "layer_norm")) {
            c->in[1] = randn(1, 1024, 0, 0, 0);
            c->in[2] = randn(1, 1024, 0, 0, 0);
            c->n_in = 3;
        }
    }
    for (int i = 0; i < c->n_in; i++)
        if (!c->in[i]) return tj_last_status();
    bool out_variant = !strcmp(name, "gelu") || !strcmp(name, "softmax") || !strcmp(name, "layer_norm");
    if (out_variant || !strcmp(name, "mm") || !strcmp(name, "copy")) {
        /* the result of one eager call, faulted in, as the caller's buffer */
        c->out = !strcmp(name, "copy") ? tj_tensor_empty(TJ_FLOAT32, 1, (int64_t[]){(int64_t)16 << 20})
                                       : apply(name, c->in);
        if (!c->out) return tj_last_status();
        memset(tj_tensor_data(c->out), 0, (size_t)tj_tensor_numel(c->out) * sizeof(float));
    }
    if (out_variant) {
        tj_graph *g = tj_make_fx(trace_one, c, c->in, c->n_in, NULL, TJ_TRACE_FAKE);
        c->plan = g ? tj_compile(g, NULL) : NULL;
        tj_graph_free(g);
        if (!c->plan) return tj_last_status();
    }
    return TJ_OK;
}

static void op_free(op_case *c)
{
    for (int i = 0; i < 4; i++) tj_tensor_release(c->in[i]);
    tj_tensor_release(c->out);
    tj_plan_free(c->plan);
    if (c->gpt.def) model_free(&c->gpt);
    tj_decomp_table_free(c->core);
}

/* The variants of a micro-benchmark: result names and calls. */
typedef struct variant {
    char name[16];
    tj_status (*call)(void *ctx);
} variant;

static int variants_of(const char *name, variant *v)
{
    snprintf(v[0].name, sizeof v[0].name, "%s", name);
    v[0].call = call_eager;
    if (!strcmp(name, "dispatch")) {
        v[0].call = call_dispatch;
        v[1] = (variant){"dispatch_mode", call_dispatch_mode};
        return 2;
    }
    if (!strcmp(name, "copy")) {
        v[0].call = call_copy;
        return 1;
    }
    if (!strcmp(name, "trace")) {
        v[0].call = call_trace;
        return 1;
    }
    if (!strcmp(name, "mm")) {
        v[1] = (variant){"mm_cblas", call_cblas};
        return 2;
    }
    if (!strcmp(name, "sdpa")) {
        v[1] = (variant){"sdpa_decomp", call_sdpa_decomposed};
        return 2;
    }
    snprintf(v[1].name, sizeof v[1].name, "%s_out", name);
    v[1].call = call_out;
    return 2;
}

tj_status bench_micro(const char *name, const bench_options *o, bench_results *out)
{
    if (!strcmp(name, "mlp_b1")) return bench_model_b1(o, out);
    if (!bench_known(name)) return tj_error(TJ_ERR_NOT_FOUND, "bench: unknown benchmark '%s'", name);
    op_case c;
    tj_status st = op_init(&c, name);
    /* per call: ns of one dispatch, GB read + written, GFLOP, or ms */
    double scale = 1;
    const char *unit = "ms", *mode = "eager";
    if (!strcmp(name, "dispatch")) {
        scale = 1e6 / DISPATCH_CALLS;
        unit = "ns";
    } else if (!strcmp(name, "trace")) {
        mode = "fake+core";
    } else if (!strcmp(name, "mm")) {
        scale = 2.0 * 1024 * 1024 * 1024 / 1e9;
        unit = "GFLOP/s";
    } else if (strcmp(name, "sdpa")) {
        scale = st == TJ_OK ? 2.0 * (double)tj_tensor_numel(c.in[0]) * sizeof(float) / 1e9 : 0;
        unit = "GB/s";
    }
    variant v[MAX_VARIANTS];
    int nv = variants_of(name, v);
    bench_case bc[MAX_VARIANTS];
    for (int k = 0; k < nv; k++) bc[k] = (bench_case){NULL, v[k].call, &c};
    for (int i = 0; i < o->n_threads && st == TJ_OK; i++) {
        tj_set_num_threads(o->threads[i]);
        bench_timing t[MAX_VARIANTS];
        if (!strcmp(name, "mm")) {
            /* one after the other, not interleaved: after each cblas_sgemm,
             * OpenBLAS's idle workers spin ~2^28 cycles (its default
             * OPENBLAS_THREAD_TIMEOUT) on the cores tj_mm's pool needs, which
             * halved tj_mm at 2 threads in most processes */
            for (int k = 0; k < nv && st == TJ_OK; k++) st = bench_measure(&bc[k], 1, o->runs, 3, &t[k]);
        } else {
            st = bench_measure(bc, nv, o->runs, 3, t);
        }
        for (int k = 0; k < nv && st == TJ_OK; k++) {
            st = bench_add(out, v[k].name, v[k].name, mode, o->threads[i], &t[k], scale, unit, -1, 0);
            if (st == TJ_OK && o->log) {
                const bench_result *r = &out->items[out->n - 1];
                fprintf(o->log, "  %s, %d thread%s: %.4g %s (%.3f ms per run, CPU %.3f ms, %.1f faults, %d runs)\n",
                        v[k].name, o->threads[i], o->threads[i] > 1 ? "s" : "", r->value, unit, t[k].median_ms,
                        t[k].cpu_ms, t[k].faults_per_call, t[k].runs);
                fflush(o->log);
            }
        }
    }
    op_free(&c);
    return st;
}
