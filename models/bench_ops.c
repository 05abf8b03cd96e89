/* Micro-benchmarks of WORKLOADS.md: dispatch, gelu, softmax, layer_norm,
 * mm, mlp_b1 and trace (see bench.h). */
#include <string.h>

#include "bench.h"

#define DISPATCH_CALLS 1000 /* tj_add calls per timed call */

const char *const bench_micro_names[] = {"dispatch", "gelu", "softmax", "layer_norm", "mm", "mlp_b1", "trace", NULL};

bool bench_known(const char *name)
{
    for (int i = 0; bench_model_names[i]; i++)
        if (!strcmp(name, bench_model_names[i])) return true;
    for (int i = 0; bench_micro_names[i]; i++)
        if (!strcmp(name, bench_micro_names[i])) return true;
    return false;
}

/* An eager operator call on fixed inputs; the result is freed each time. */
typedef struct op_case {
    const char *name;
    tj_tensor *a, *b, *c;
    model gpt;
    tj_decomp_table *core;
} op_case;

static tj_status call_dispatch(void *ctx)
{
    op_case *c = ctx;
    for (int i = 0; i < DISPATCH_CALLS; i++) {
        tj_tensor *r = tj_add(c->a, c->b);
        if (!r) return tj_last_status();
        tj_tensor_release(r);
    }
    return TJ_OK;
}

static tj_status call_op(void *ctx)
{
    op_case *c = ctx;
    static const int64_t last[1] = {1024};
    tj_tensor *r = !strcmp(c->name, "gelu")      ? tj_gelu(c->a, "none")
                   : !strcmp(c->name, "softmax") ? tj_softmax(c->a, -1)
                   : !strcmp(c->name, "mm")      ? tj_mm(c->a, c->b)
                                                 : tj_layer_norm(c->a, last, 1, c->b, c->c, 1e-5);
    if (!r) return tj_last_status();
    tj_tensor_release(r);
    return TJ_OK;
}

static tj_status call_trace(void *ctx)
{
    op_case *c = ctx;
    tj_graph *g = step_trace(&c->gpt, STEP_TRAIN, 0, c->core, TJ_TRACE_FAKE);
    tj_graph_free(g);
    return g ? TJ_OK : tj_last_status();
}

/* Inputs of a case: randn tensors from seed 1. */
static tj_status op_init(op_case *c, const char *name)
{
    memset(c, 0, sizeof *c);
    c->name = name;
    tj_manual_seed(1);
    if (!strcmp(name, "dispatch")) {
        int64_t one = 1;
        c->a = tj_tensor_from_data(TJ_FLOAT32, 1, &one, (float[]){1});
        c->b = tj_tensor_from_data(TJ_FLOAT32, 1, &one, (float[]){2});
        return c->a && c->b ? TJ_OK : tj_last_status();
    }
    if (!strcmp(name, "trace")) {
        tj_status st = model_create(model_find("gpt"), 0, &c->gpt);
        if (st == TJ_OK && !(c->core = tj_core_decompositions())) st = tj_last_status();
        return st;
    }
    if (!strcmp(name, "gelu")) c->a = tj_randn((int64_t[]){(int64_t)16 << 20}, 1, TJ_FLOAT32);
    else if (!strcmp(name, "mm")) {
        c->a = tj_randn((int64_t[]){1024, 1024}, 2, TJ_FLOAT32);
        c->b = tj_randn((int64_t[]){1024, 1024}, 2, TJ_FLOAT32);
    } else {
        c->a = tj_randn((int64_t[]){4096, 1024}, 2, TJ_FLOAT32);
        if (!strcmp(name, "layer_norm")) {
            c->b = tj_randn((int64_t[]){1024}, 1, TJ_FLOAT32);
            c->c = tj_randn((int64_t[]){1024}, 1, TJ_FLOAT32);
        }
    }
    return c->a && (c->b || !strcmp(name, "gelu") || !strcmp(name, "softmax")) &&
                   (c->c || strcmp(name, "layer_norm"))
               ? TJ_OK
               : tj_last_status();
}

static void op_free(op_case *c)
{
    tj_tensor_release(c->a);
    tj_tensor_release(c->b);
    tj_tensor_release(c->c);
    if (c->gpt.def) model_free(&c->gpt);
    tj_decomp_table_free(c->core);
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
    bench_case bc = {NULL, call_op, &c};
    if (!strcmp(name, "dispatch")) {
        bc.call = call_dispatch;
        scale = 1e6 / DISPATCH_CALLS;
        unit = "ns";
    } else if (!strcmp(name, "trace")) {
        bc.call = call_trace;
        mode = "fake+core";
    } else if (!strcmp(name, "mm")) {
        scale = 2.0 * 1024 * 1024 * 1024 / 1e9;
        unit = "GFLOP/s";
    } else {
        scale = st == TJ_OK ? 2.0 * (double)tj_tensor_numel(c.a) * sizeof(float) / 1e9 : 0;
        unit = "GB/s";
    }
    for (int i = 0; i < o->n_threads && st == TJ_OK; i++) {
        tj_set_num_threads(o->threads[i]);
        bench_timing t;
        st = bench_measure(&bc, 1, o->runs, 3, &t);
        if (st == TJ_OK) st = bench_add(out, name, name, mode, o->threads[i], &t, scale, unit, -1, 0);
        if (st == TJ_OK && o->log) {
            const bench_result *r = &out->items[out->n - 1];
            fprintf(o->log, "  %s, %d thread%s: %.4g %s (%.3f ms per call, %d runs)\n", name, o->threads[i],
                    o->threads[i] > 1 ? "s" : "", r->value, unit, t.median_ms, t.runs);
            fflush(o->log);
        }
    }
    op_free(&c);
    return st;
}
