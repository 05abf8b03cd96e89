/* Replay: plans compiled from traced graphs, their memory plan, execution
 * contexts, allocation-free runs and the profiler. Reference results come
 * from the interpreter (tj_graph_run) on the same graph, which calls the same
 * kernels, so comparisons are bit-exact. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/parallel.h"
#include "models.h"
#include "runtime/internal.h"
#include "step.h"
#include "test_util.h"
#include "tjit/tjit.h"

static tj_tensor *random_f32(int ndim, const int64_t *shape, unsigned seed)
{
    tj_tensor *t = tj_tensor_empty(TJ_FLOAT32, ndim, shape);
    float *p = tj_tensor_data(t);
    srand(seed);
    for (int64_t i = 0; i < tj_tensor_numel(t); i++) p[i] = (float)rand() / RAND_MAX * 2.0f - 1.0f;
    return t;
}

/* An allocator hook counting allocations. */
static atomic_long n_allocs;

static void *counting_alloc(void *ctx, size_t n)
{
    (void)ctx;
    atomic_fetch_add(&n_allocs, 1);
    return aligned_alloc(64, (n + 63) / 64 * 64);
}

static void counting_free(void *ctx, void *p, size_t n)
{
    (void)ctx, (void)n;
    free(p);
}

/* Same shape and every element equal (NaN equal to NaN). */
static void expect_same(tj_tensor *a, tj_tensor *b)
{
    cr_assert_not_null(a);
    cr_assert_not_null(b);
    cr_assert_eq(tj_tensor_dtype(a), tj_tensor_dtype(b));
    cr_assert_eq(tj_tensor_ndim(a), tj_tensor_ndim(b));
    for (int d = 0; d < tj_tensor_ndim(a); d++) cr_assert_eq(tj_tensor_size(a, d), tj_tensor_size(b, d));
    for (int64_t i = 0; i < tj_tensor_numel(a); i++) {
        double x = tj_tensor_item_at(a, i), y = tj_tensor_item_at(b, i);
        cr_assert(x == y || (isnan(x) && isnan(y)), "element %ld: %.9g vs %.9g", (long)i, x, y);
    }
}

/* Runs g through the interpreter and through a plan (every output mode) and
 * checks the results agree exactly. */
static void expect_plan_matches(const tj_graph *g, tj_plan *p, tj_tensor *const *in, int n_in)
{
    int n_out = tj_graph_num_outputs(g);
    cr_assert_eq(tj_plan_num_outputs(p), n_out);
    tj_scope *s = tj_scope_begin();
    tj_tensor *ref[8], *got[8];
    cr_assert_eq(tj_graph_run(g, in, n_in, ref), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj_plan_run(p, in, n_in, got), TJ_OK, "%s", tj_last_error());
    for (int k = 0; k < n_out; k++) expect_same(got[k], ref[k]);
    /* again: the arena is reused from the first run */
    cr_assert_eq(tj_plan_run(p, in, n_in, got), TJ_OK, "%s", tj_last_error());
    for (int k = 0; k < n_out; k++) expect_same(got[k], ref[k]);
    /* borrowed results left in the context */
    cr_assert_eq(tj_plan_run_into(p, in, n_in, NULL), TJ_OK, "%s", tj_last_error());
    for (int k = 0; k < n_out; k++) expect_same(tj_plan_context_output(tj_plan_default_context(p), k), ref[k]);
    tj_scope_end(s);
}

static tj_plan *compile_ok(const tj_graph *g, const tj_compile_options *o)
{
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_plan *p = tj_compile(g, o);
    cr_assert_not_null(p, "tj_compile: %s", tj_last_error());
    return p;
}

/* p's statistics (tj_plan_stats), asserting it answers. This file keeps
 * off test_util, which the ThreadSanitizer build does not link. */
static tj_plan_statistics plan_stats(const tj_plan *p)
{
    tj_plan_statistics st;
    cr_assert_eq(tj_plan_stats(p, &st), TJ_OK);
    return st;
}

/* ---- traced functions ---- */

/* in: x [8, 16], w1 [32, 16], b1 [32], w2 [4, 32], b2 [4] */
static tj_status fn_mlp(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *h = tj_relu(tj_linear(in[0], in[1], in[2]));
    tj_tensor *y = tj_linear(tj_gelu(h, "tanh"), in[3], in[4]);
    out[0] = tj_softmax(y, 1);
    out[1] = h;
    *n_out = 2;
    return out[0] ? TJ_OK : tj_last_status();
}

/* in: x [2, 3, 4]: every view operator, each result read by a kernel */
static tj_status fn_views(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *x = in[0];
    tj_tensor *e = tj_exp(x);                                            /* [2, 3, 4] */
    tj_tensor *p = tj_permute(e, (int64_t[]){2, 0, 1}, 3);               /* [4, 2, 3] */
    tj_tensor *v = tj_view(e, (int64_t[]){6, 4}, 2);                     /* [6, 4] */
    tj_tensor *t = tj_t(v);                                              /* [4, 6] */
    tj_tensor *s = tj_slice(t, 1, true, 1, true, 5, 2);                  /* [4, 2] */
    tj_tensor *x1 = tj_slice(x, 2, true, 0, true, 1, 1);                 /* [2, 3, 1] */
    tj_tensor *ex = tj_expand(x1, (int64_t[]){2, 3, 4}, 3);              /* [2, 3, 4] */
    out[0] = tj_mul(tj_view(tj_clone(p), (int64_t[]){4, 6}, 2), t);    /* a permute is not viewable */
    out[1] = tj_add(s, tj_unsqueeze(tj_select(t, 1, 0), 1));            /* [4, 2] + [4, 1] */
    out[2] = tj_sub(ex, e);
    *n_out = 3;
    return out[0] && out[1] && out[2] ? TJ_OK : tj_last_status();
}

/* in: x [4, 6], w [6], b [6]: native_layer_norm's three results, max.dim's two */
static tj_status fn_multi(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *y, *mean, *rstd, *vals, *idx;
    tj_status st = tj_native_layer_norm(in[0], (int64_t[]){6}, 1, in[1], in[2], 1e-5, &y, &mean, &rstd);
    if (st != TJ_OK) return st;
    if ((st = tj_max_dim(y, 1, false, &vals, &idx)) != TJ_OK) return st;
    out[0] = tj_gelu(y, "none");
    out[1] = rstd;
    out[2] = vals;
    out[3] = idx;
    *n_out = 4;
    return out[0] ? TJ_OK : tj_last_status();
}

/* in: x [5, 4]; weight and bias captured from ctx become constants */
static tj_status fn_constants(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    tj_tensor **w = ctx;
    (void)n;
    out[0] = tj_relu(tj_linear(in[0], w[0], w[1]));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* in: x, y [64, 64]: a chain of elementwise operators */
static tj_status fn_chain(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *a = tj_add(in[0], in[1]);
    tj_tensor *b = tj_mul(a, in[1]);
    tj_tensor *c = tj_tanh(b);
    tj_tensor *d = tj_sigmoid(c);
    tj_tensor *e = tj_sub(d, a);
    out[0] = tj_exp(tj_neg(e));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* in: x [3, 4], w [3, 5]: mm of a view of an input */
static tj_status fn_input_view(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_mm(tj_t(in[0]), in[1]);
    out[1] = tj_add(tj_slice(in[0], 1, true, 1, true, 3, 1), tj_slice(in[1], 1, true, 0, true, 2, 1));
    *n_out = 2;
    return out[0] && out[1] ? TJ_OK : tj_last_status();
}

/* in: x [2, 3]: returns the input itself, a view of it, and a computed value twice */
static tj_status fn_passthrough(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *y = tj_exp(in[0]);
    out[0] = in[0];
    out[1] = tj_t(in[0]);
    out[2] = y;
    out[3] = y;
    out[4] = tj_t(y);
    *n_out = 5;
    return out[4] ? TJ_OK : tj_last_status();
}

/* self.add_(other) through the dispatcher (no typed API for in-place operators) */
static tj_tensor *add_inplace(tj_tensor *self, tj_tensor *other)
{
    tj_value args[2] = {tj_v_tensor(self), tj_v_tensor(other)}, out[1];
    return tj_call("aten::add_.Tensor", args, 2, out) == TJ_OK ? out[0].u.t : NULL;
}

/* in: x [3, 4], w [3, 4]: in-place updates of an intermediate (seen through
 * a view taken before) and of an input */
static tj_status fn_inplace(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *y = tj_exp(in[0]);
    tj_tensor *yt = tj_t(y);
    tj_tensor *y2 = add_inplace(y, in[1]);
    tj_tensor *z = tj_mul(y2, in[1]);
    add_inplace(in[0], z);
    out[0] = yt;
    out[1] = tj_relu(z);
    *n_out = 2;
    return out[1] ? TJ_OK : tj_last_status();
}

static tj_graph *trace(tj_trace_fn fn, void *ctx, tj_tensor *const *in, int n)
{
    tj_graph *g = tj_make_fx(fn, ctx, in, n, NULL, TJ_TRACE_REAL);
    cr_assert_not_null(g, "make_fx: %s", tj_last_error());
    return g;
}

typedef struct mlp_case {
    tj_scope *scope;
    tj_tensor *in[5];
    tj_graph *g;
} mlp_case;

static mlp_case mlp_setup(void)
{
    mlp_case m;
    m.scope = tj_scope_begin();
    m.in[0] = random_f32(2, (int64_t[]){8, 16}, 1);
    m.in[1] = random_f32(2, (int64_t[]){32, 16}, 2);
    m.in[2] = random_f32(1, (int64_t[]){32}, 3);
    m.in[3] = random_f32(2, (int64_t[]){4, 32}, 4);
    m.in[4] = random_f32(1, (int64_t[]){4}, 5);
    m.g = trace(fn_mlp, NULL, m.in, 5);
    return m;
}

static void mlp_teardown(mlp_case *m)
{
    tj_graph_free(m->g);
    tj_scope_end(m->scope);
}

/* ---- results ---- */

Test(plan, mlp_results_equal_the_interpreter_bit_for_bit)
{
    mlp_case m = mlp_setup();
    tj_plan *p = compile_ok(m.g, NULL);
    expect_plan_matches(m.g, p, m.in, 5);
    /* other inputs of the same shapes */
    tj_tensor *in2[5] = {random_f32(2, (int64_t[]){8, 16}, 11), m.in[1], m.in[2], m.in[3], m.in[4]};
    expect_plan_matches(m.g, p, in2, 5);
    tj_plan_free(p);
    mlp_teardown(&m);
}

Test(plan, graph_may_be_freed_after_compiling)
{
    mlp_case m = mlp_setup();
    tj_plan *p = compile_ok(m.g, NULL);
    tj_tensor *ref[2], *got[2];
    cr_assert_eq(tj_graph_run(m.g, m.in, 5, ref), TJ_OK);
    tj_graph_free(m.g);
    m.g = NULL;
    cr_assert_eq(tj_plan_run(p, m.in, 5, got), TJ_OK, "%s", tj_last_error());
    expect_same(got[0], ref[0]);
    expect_same(got[1], ref[1]);
    tj_plan_free(p);
    tj_scope_end(m.scope);
}

Test(plan, views_are_resolved_at_compile_time_without_nodes)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *x = random_f32(3, (int64_t[]){2, 3, 4}, 7);
    tj_graph *g = trace(fn_views, NULL, &x, 1);
    tj_plan *p = compile_ok(g, NULL);
    tj_plan_statistics st = plan_stats(p);
    int views = 0, calls = 0;
    for (int i = 0; i < tj_graph_num_nodes(g); i++) {
        if (tj_graph_node_kind(g, i) != TJ_NODE_CALL) continue;
        calls++;
        views += tj_op_is_view(tj_graph_node_op(g, i));
    }
    cr_expect_geq(views, 8, "the graph has t, view, permute, slice, expand, select, unsqueeze nodes");
    cr_expect_eq(st.n_views, views);
    cr_expect_eq(st.n_kernels, calls - views);
    expect_plan_matches(g, p, &x, 1);
    tj_plan_free(p);
    tj_graph_free(g);
    tj_scope_end(s);
}

Test(plan, multi_output_nodes_bind_every_result)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *in[3] = {random_f32(2, (int64_t[]){4, 6}, 1), random_f32(1, (int64_t[]){6}, 2),
                        random_f32(1, (int64_t[]){6}, 3)};
    tj_graph *g = trace(fn_multi, NULL, in, 3);
    tj_plan *p = compile_ok(g, NULL);
    expect_plan_matches(g, p, in, 3);
    tj_tensor *out[4];
    cr_assert_eq(tj_plan_run(p, in, 3, out), TJ_OK);
    cr_expect_eq(tj_tensor_dtype(out[3]), TJ_INT64);
    cr_expect_eq(tj_tensor_ndim(out[1]), 2); /* rstd keeps the normalised dim: [4, 1] */
    tj_plan_free(p);
    tj_graph_free(g);
    tj_scope_end(s);
}

Test(plan, constants_are_placed_once_and_shared)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *w[2] = {random_f32(2, (int64_t[]){3, 4}, 1), random_f32(1, (int64_t[]){3}, 2)};
    tj_tensor *x = random_f32(2, (int64_t[]){5, 4}, 3);
    tj_graph *g = trace(fn_constants, w, &x, 1);
    tj_plan *p = compile_ok(g, NULL);
    tj_plan_statistics st = plan_stats(p);
    cr_expect_eq(st.n_constants, 2);
    tj_graph_free(g); /* the plan keeps its own references */
    g = trace(fn_constants, w, &x, 1);
    expect_plan_matches(g, p, &x, 1);
    /* y = relu(x w^T + b), checked by hand for one element */
    tj_tensor *y[1];
    cr_assert_eq(tj_plan_run(p, &x, 1, y), TJ_OK);
    double acc = tj_tensor_item_at(w[1], 2);
    for (int k = 0; k < 4; k++) acc += tj_tensor_item_at(x, 4 * 1 + k) * tj_tensor_item_at(w[0], 4 * 2 + k);
    cr_expect_float_eq(tj_tensor_item_at(y[0], 3 * 1 + 2), acc > 0 ? acc : 0, 1e-5);
    tj_plan_free(p);
    tj_graph_free(g);
    tj_scope_end(s);
}

Test(plan, graph_parsed_from_text_compiles)
{
    const char *text = "graph(%x : f32[2, 3], %y : f32[3]):\n"
                       "    %add = aten.add.Tensor(%x, %y)\n"
                       "    %t = aten.t.default(%add)\n"
                       "    %mm = aten.mm.default(%t, %x)\n"
                       "    %relu = aten.relu.default(%mm)\n"
                       "    return (%relu, %t)\n";
    tj_graph *g = tj_graph_parse(text);
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_scope *s = tj_scope_begin();
    tj_tensor *in[2] = {random_f32(2, (int64_t[]){2, 3}, 1), random_f32(1, (int64_t[]){3}, 2)};
    tj_plan *p = compile_ok(g, NULL);
    expect_plan_matches(g, p, in, 2);
    tj_plan_free(p);
    tj_graph_free(g);
    tj_scope_end(s);
}

/* reshape, flatten and contiguous have no kernel: graph text holding them
 * compiles through the calls they make (a view of x; a copy of x^T) */
Test(plan, graph_text_with_implicit_operators_compiles)
{
    const char *text = "graph(%x : f32[2, 3]):\n"
                       "    %reshape = aten.reshape.default(%x, [3, 2])\n"
                       "    %t = aten.t.default(%x)\n"
                       "    %flatten = aten.flatten.using_ints(%t)\n"
                       "    %contiguous = aten.contiguous.default(%t)\n"
                       "    %add = aten.add.Tensor(%reshape, %contiguous)\n"
                       "    return (%add, %flatten)\n";
    tj_graph *g = tj_graph_parse(text);
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_scope *s = tj_scope_begin();
    tj_tensor *in[1] = {test_f32(2, (int64_t[]){2, 3}, (float[]){0, 1, 2, 3, 4, 5})};
    tj_plan *p = compile_ok(g, NULL);
    expect_plan_matches(g, p, in, 1);
    tj_tensor *out[2];
    cr_assert_eq(tj_plan_run(p, in, 1, out), TJ_OK, "%s", tj_last_error());
    static const float sum[6] = {0, 4, 3, 7, 6, 10}, flat[6] = {0, 3, 1, 4, 2, 5};
    for (int i = 0; i < 6; i++) {
        cr_assert_eq(tj_tensor_item_at(out[0], i), sum[i]);
        cr_assert_eq(tj_tensor_item_at(out[1], i), flat[i]);
    }
    tj_plan_free(p);
    tj_graph_free(g);
    tj_scope_end(s);
}

Test(plan, inputs_with_other_strides_and_offsets_are_accepted)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *in[2] = {random_f32(2, (int64_t[]){3, 4}, 1), random_f32(2, (int64_t[]){3, 5}, 2)};
    tj_graph *g = trace(fn_input_view, NULL, in, 2);
    tj_plan *p = compile_ok(g, NULL);
    expect_plan_matches(g, p, in, 2);
    /* x as the transpose of a [4, 3] tensor; w as a slice of a wider one (storage offset 1) */
    tj_tensor *xt = tj_t(random_f32(2, (int64_t[]){4, 3}, 3));
    tj_tensor *wide = random_f32(2, (int64_t[]){3, 7}, 4);
    tj_tensor *w = tj_slice(wide, 1, true, 1, true, 6, 1);
    cr_assert_eq(tj_tensor_storage_offset(w), 1);
    tj_tensor *odd[2] = {xt, w};
    expect_plan_matches(g, p, odd, 2);
    /* and back to contiguous inputs: the views' compiled strides come back */
    expect_plan_matches(g, p, in, 2);
    tj_plan_free(p);
    tj_graph_free(g);
    tj_scope_end(s);
}

/* in: x [3, 4]: 2 * x^T and _unsafe_view(x, [12]) + 1 (a view of x for
 * contiguous strides, a copy for others) */
static tj_status fn_unsafe_view(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_mul_scalar(tj_t(in[0]), tj_v_int(2));
    out[1] = tj_add_scalar(tj_unsafe_view(in[0], (int64_t[]){12}, 1), tj_v_int(1));
    *n_out = 2;
    return out[0] && out[1] ? TJ_OK : tj_last_status();
}

/* Runs p on `in` (the 1st, and 2nd time: every view re-resolved) and on
 * `in` with contiguous copies of the inputs that staged[] names: the same
 * bits (a kernel may take another path for other strides of an input that
 * is not copied), the outputs in `got`. */
static void expect_same_as_staged(tj_plan *p, tj_tensor *const *in, int n, const bool *staged, tj_tensor **got)
{
    tj_tensor *dense[8], *ref[8];
    int n_out = tj_plan_num_outputs(p);
    for (int i = 0; i < n; i++) dense[i] = staged[i] ? tj_contiguous(in[i]) : in[i];
    cr_assert_eq(tj_plan_run(p, dense, n, ref), TJ_OK, "%s", tj_last_error());
    for (int r = 0; r < 2; r++) {
        cr_assert_eq(tj_plan_run(p, in, n, got), TJ_OK, "%s", tj_last_error());
        for (int k = 0; k < n_out; k++) expect_same(got[k], ref[k]);
    }
}

/* A plan keeps _unsafe_view of a contiguous input as a view. An input whose
 * strides do not allow that view used to be read through strides that do
 * not fit it (wrong values, silently), then was refused; it is now copied
 * into the context's staging block and read from there, as eager
 * _unsafe_view copies. The view of x^T re-resolved before the copy is made
 * must read the copy with the compiled strides (and the next run with the
 * compiled strides x itself). */
Test(plan, an_input_view_that_the_run_strides_would_turn_into_a_copy_reads_a_staged_copy)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *x = random_f32(2, (int64_t[]){3, 4}, 5);
    tj_graph *g = trace(fn_unsafe_view, NULL, &x, 1);
    tj_plan *p = compile_ok(g, NULL);
    cr_assert_eq(tj_graph_count_op(g, tj_op_find("aten::_unsafe_view")), 1);
    tj_plan_statistics st = plan_stats(p);
    cr_expect_eq(st.staging_bytes, 64, "x's 48 bytes, rounded up");
    expect_plan_matches(g, p, &x, 1);
    tj_tensor *xt = tj_t(random_f32(2, (int64_t[]){4, 3}, 6));
    tj_tensor *got[2], *eager[2];
    int n_out;
    cr_assert_eq(fn_unsafe_view(NULL, &xt, 1, eager, &n_out), TJ_OK);
    expect_same_as_staged(p, &xt, 1, (bool[]){true}, got);
    expect_same(got[0], eager[0]);
    expect_same(got[1], eager[1]);
    expect_plan_matches(g, p, &x, 1);
    tj_plan_free(p);
    tj_graph_free(g);
    tj_scope_end(s);
}

/* in: x [4, 3]: as_strided(x, [2, 2], [1, 2]) and reshape(x, [2, 6]), which
 * traced on a slice (strides [6, 2]) is a view */
static tj_status fn_strided_and_reshape(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_as_strided(in[0], (int64_t[]){2, 2}, (int64_t[]){1, 2}, 2, false, 0);
    out[1] = tj_reshape(in[0], (int64_t[]){2, 6}, 2);
    *n_out = 2;
    return out[1] ? TJ_OK : tj_last_status();
}

/* A run on x^T stages x for the reshape view; as_strided reads storage
 * elements 0..3 of the caller's x^T ([[0, 2], [1, 3]] as eager and
 * torch.as_strided), not of the staged row-major copy: it was re-resolved
 * against the copy and gave [[0, 8], [4, 1]]. */
Test(plan, as_strided_reads_the_callers_storage_when_another_view_stages_the_input)
{
    tj_scope *s = tj_scope_begin();
    float v[24];
    for (int i = 0; i < 24; i++) v[i] = (float)i;
    tj_tensor *sliced = tj_slice(tj_tensor_from_data(TJ_FLOAT32, 2, (int64_t[]){4, 6}, v), 1, true, 0, true, 6, 2);
    tj_tensor *xt = tj_t(tj_tensor_from_data(TJ_FLOAT32, 2, (int64_t[]){3, 4}, v));
    for (int mode = 0; mode < 2; mode++) {
        tj_graph *g = tj_make_fx(fn_strided_and_reshape, NULL, &sliced, 1, NULL, mode ? TJ_TRACE_FAKE : TJ_TRACE_REAL);
        cr_assert_not_null(g, "%s", tj_last_error());
        cr_assert_eq(tj_graph_count_op(g, tj_op_find("aten::view")), 1, "the reshape is a view of the slice");
        tj_plan *p = compile_ok(g, NULL);
        tj_tensor *got[2], *eager[2];
        int n_out;
        cr_assert_eq(fn_strided_and_reshape(NULL, &xt, 1, eager, &n_out), TJ_OK);
        cr_assert_eq(tj_plan_run(p, &xt, 1, got), TJ_OK, "%s", tj_last_error());
        const float strided[4] = {0, 2, 1, 3};
        for (int i = 0; i < 4; i++) cr_expect_eq(tj_tensor_item_at(got[0], i), strided[i], "element %d", i);
        expect_same(got[0], eager[0]);
        expect_same(got[1], eager[1]);
        tj_plan_free(p);
        tj_graph_free(g);
    }
    tj_scope_end(s);
}

/* in: x [3, 4]: _unsafe_view(x, [12]) + _unsafe_view(2 * exp(x), [12]):
 * the view of x is read at the last step, after two results were placed */
static tj_status fn_late_view(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *y = tj_mul_scalar(tj_exp(in[0]), tj_v_int(2));
    out[0] = tj_add(tj_unsafe_view(in[0], (int64_t[]){12}, 1), tj_unsafe_view(y, (int64_t[]){12}, 1));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* The staging block lives until the input's last read: no result made
 * before is placed over it. */
Test(plan, a_staged_input_read_at_the_last_step_keeps_its_block)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *x = random_f32(2, (int64_t[]){3, 4}, 5);
    tj_graph *g = trace(fn_late_view, NULL, &x, 1);
    tj_plan *p = compile_ok(g, NULL);
    tj_tensor *xt = tj_t(random_f32(2, (int64_t[]){4, 3}, 6)), *got[1], *eager[1];
    int n_out;
    cr_assert_eq(fn_late_view(NULL, &xt, 1, eager, &n_out), TJ_OK);
    expect_same_as_staged(p, &xt, 1, (bool[]){true}, got);
    expect_same(got[0], eager[0]);
    tj_plan_free(p);
    tj_graph_free(g);
    tj_scope_end(s);
}

/* in: x [2, 3]: reshape(x^T, [6]) * 2, a view of x^T when x is transposed */
static tj_status fn_flatten_transposed(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_mul_scalar(tj_reshape(tj_t(in[0]), (int64_t[]){6}, 1), tj_v_int(2));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* Traced on a transposed input, the plan's view holds for those strides; a
 * contiguous input at run time was staged into a contiguous block, where the
 * view did not hold either, and staged again without end (the run hung):
 * the block takes the compiled layout. */
Test(plan, an_input_traced_transposed_is_staged_with_its_compiled_strides, .timeout = 20)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *xt = tj_t(random_f32(2, (int64_t[]){3, 2}, 5));
    tj_graph *g = trace(fn_flatten_transposed, NULL, &xt, 1);
    tj_plan *p = compile_ok(g, NULL);
    cr_assert_gt(plan_stats(p).staging_bytes, 0);
    tj_tensor *x = random_f32(2, (int64_t[]){2, 3}, 6), *got[1], *eager[1];
    int n_out;
    cr_assert_eq(fn_flatten_transposed(NULL, &x, 1, eager, &n_out), TJ_OK);
    for (int r = 0; r < 2; r++) {
        cr_assert_eq(tj_plan_run(p, &x, 1, got), TJ_OK, "%s", tj_last_error());
        expect_same(got[0], eager[0]);
    }
    expect_plan_matches(g, p, &xt, 1);
    tj_plan_free(p);
    tj_graph_free(g);
    tj_scope_end(s);
}

/* in: x [12]: view(x, [3, 4]) * 2, a view for any strides of x */
static tj_status fn_split_view(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_mul_scalar(tj_view(in[0], (int64_t[]){3, 4}, 2), tj_v_int(2));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* A view that only splits dims needs no staging block. */
Test(plan, an_input_view_that_only_splits_dims_gets_no_staging_block)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *x = random_f32(1, (int64_t[]){12}, 5);
    tj_graph *g = trace(fn_split_view, NULL, &x, 1);
    tj_plan *p = compile_ok(g, NULL);
    tj_plan_statistics st = plan_stats(p);
    cr_expect_eq(st.staging_bytes, 0);
    tj_tensor *every_other = tj_slice(random_f32(1, (int64_t[]){24}, 6), 0, true, 0, true, 24, 2);
    expect_plan_matches(g, p, &every_other, 1);
    tj_plan_free(p);
    tj_graph_free(g);
    tj_scope_end(s);
}

/* in: x [3, 4]: _unsafe_view(x, [12]) + 1, then x.add_(1) in place */
static tj_status fn_unsafe_view_then_write(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_add_scalar(tj_unsafe_view(in[0], (int64_t[]){12}, 1), tj_v_int(1));
    *n_out = 1;
    return out[0] && add_inplace(in[0], tj_ones((int64_t[]){1}, 1, -1)) ? TJ_OK : tj_last_status();
}

/* An input the plan writes in place gets no staging block (the copy would
 * take the writes): a run whose strides do not allow its view stays
 * refused, and leaves the plan as it was. */
Test(plan, an_input_written_in_place_whose_view_would_copy_is_refused)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *x = random_f32(2, (int64_t[]){3, 4}, 5);
    tj_graph *g = trace(fn_unsafe_view_then_write, NULL, (tj_tensor *[]){tj_clone(x)}, 1);
    tj_plan *p = compile_ok(g, NULL);
    tj_plan_statistics st = plan_stats(p);
    cr_expect_eq(st.staging_bytes, 0);
    tj_tensor *xt = tj_t(random_f32(2, (int64_t[]){4, 3}, 6)), *xt0 = tj_clone(xt);
    tj_tensor *out[1] = {NULL};
    cr_expect_eq(tj_plan_run(p, &xt, 1, out), TJ_ERR_UNSUPPORTED, "%s", tj_last_error());
    cr_expect(strstr(tj_last_error(), "aten::_unsafe_view") != NULL, "%s", tj_last_error());
    cr_expect_null(out[0]);
    expect_same(xt, xt0);
    /* contiguous: x is read, then written (+1) */
    tj_tensor *xa = tj_clone(x), *xb = tj_clone(x), *ref[1];
    cr_assert_eq(tj_graph_run(g, &xa, 1, ref), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj_plan_run(p, &xb, 1, out), TJ_OK, "%s", tj_last_error());
    expect_same(out[0], ref[0]);
    expect_same(xb, xa);
    cr_expect_float_eq(tj_tensor_item_at(xb, 5), tj_tensor_item_at(x, 5) + 1, 1e-6);
    tj_plan_free(p);
    tj_graph_free(g);
    tj_scope_end(s);
}

/* in: a [2, 3], b [2, 3]: b += 1 in place, then a reshaped to [6] times 3 */
static tj_status fn_write_other_then_reshape(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    if (!tj_add_(in[1], tj_scalar_tensor(tj_v_float(1), TJ_FLOAT32), tj_v_int(1))) return tj_last_status();
    out[0] = tj_mul_scalar(tj_reshape(in[0], (int64_t[]){6}, 1), tj_v_int(3));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* A staged copy is taken before the first step: one transposed tensor
 * passed as a (staged) and as b (written in place before a is read) would
 * give a's old values, so that run is refused, nothing written; separate
 * tensors stage as usual. */
Test(plan, a_staged_input_sharing_memory_with_an_input_written_in_place_is_refused)
{
    tj_scope *s = tj_scope_begin();
    tj_graph *g = trace(fn_write_other_then_reshape, NULL,
                        (tj_tensor *[]){random_f32(2, (int64_t[]){2, 3}, 1), random_f32(2, (int64_t[]){2, 3}, 2)}, 2);
    tj_plan *p = compile_ok(g, NULL);
    tj_tensor *xt = tj_t(random_f32(2, (int64_t[]){3, 2}, 3)), *xt0 = tj_clone(xt);
    tj_tensor *out[1] = {NULL};
    cr_expect_eq(tj_plan_run(p, (tj_tensor *[]){xt, xt}, 2, out), TJ_ERR_UNSUPPORTED);
    cr_expect(strstr(tj_last_error(), "shares memory with input 1") != NULL, "%s", tj_last_error());
    cr_expect_null(out[0]);
    expect_same(xt, xt0);
    /* separate tensors: a staged, b written; eager's values */
    tj_tensor *a = tj_t(random_f32(2, (int64_t[]){3, 2}, 4)), *b = random_f32(2, (int64_t[]){2, 3}, 5);
    tj_tensor *b_ref = tj_clone(b), *ref[1];
    int nref;
    cr_assert_eq(fn_write_other_then_reshape(NULL, (tj_tensor *[]){a, b_ref}, 2, ref, &nref), TJ_OK);
    cr_assert_eq(tj_plan_run(p, (tj_tensor *[]){a, b}, 2, out), TJ_OK, "%s", tj_last_error());
    expect_same(out[0], ref[0]);
    expect_same(b, b_ref);
    tj_plan_free(p);
    tj_graph_free(g);
    tj_scope_end(s);
}

/* in: x [2, 3, 4], w [5, 4], b [5]: a 3-D linear (matmul views x as
 * [6, 4], then the result as [2, 3, 5]) */
static tj_status fn_linear3d(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_linear(in[0], in[1], in[2]);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* x [a, b, c], w [5, c], b [5] */
static tj_graph *trace_linear3d(tj_tensor **in, int64_t a, int64_t b, int64_t c)
{
    in[0] = random_f32(3, (int64_t[]){a, b, c}, 1);
    in[1] = random_f32(2, (int64_t[]){5, c}, 2);
    in[2] = random_f32(1, (int64_t[]){5}, 3);
    return trace(fn_linear3d, NULL, in, 3);
}

/* x [a, b, c] as a transpose of a [b, a, c] tensor (dims 0 and 1 do not merge) */
static tj_tensor *transposed_x(unsigned seed, int64_t a, int64_t b, int64_t c)
{
    return tj_transpose(random_f32(3, (int64_t[]){b, a, c}, seed), 0, 1);
}

/* Traced with contiguous inputs, linear's view of x takes a copy for a
 * transposed x, as eager linear does: eager's bits. Only x has a staging
 * block (w is read through t(), a view for any strides). */
Test(plan, three_d_linear_of_a_transposed_input_gives_eager_results)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *in[3];
    tj_graph *g = trace_linear3d(in, 2, 3, 4);
    cr_expect_geq(tj_graph_count_op(g, tj_op_find("aten::view")), 1);
    tj_plan *p = compile_ok(g, NULL);
    tj_plan_statistics st = plan_stats(p);
    cr_expect_eq(st.staging_bytes, 128, "x's 96 bytes, rounded up");
    expect_plan_matches(g, p, in, 3);
    tj_tensor *odd[3] = {transposed_x(7, 2, 3, 4), tj_t(random_f32(2, (int64_t[]){4, 5}, 8)), in[2]};
    tj_tensor *got[1];
    expect_same_as_staged(p, odd, 3, (bool[]){true, false, false}, got);
    expect_same(got[0], tj_linear(odd[0], odd[1], odd[2]));
    expect_plan_matches(g, p, in, 3);
    tj_plan_free(p);
    tj_graph_free(g);
    tj_scope_end(s);
}

/* in: x [1, 2, 6, 5], w [3, 2, 3, 3], b [3]: conv2d, stride 1, padding 1 */
static tj_status fn_conv(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_conv2d(in[0], in[1], in[2], (int64_t[]){1, 1}, (int64_t[]){1, 1}, (int64_t[]){1, 1}, 1);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* The core decomposition of conv2d reshapes the weight (and the columns)
 * with views: a weight and an input in other layouts give the bits of
 * their contiguous copies, and eager conv2d's values. */
Test(plan, decomposed_conv2d_of_non_contiguous_inputs_gives_eager_results)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *in[3] = {random_f32(4, (int64_t[]){1, 2, 6, 5}, 1), random_f32(4, (int64_t[]){3, 2, 3, 3}, 2),
                        random_f32(1, (int64_t[]){3}, 3)};
    tj_graph *g = trace(fn_conv, NULL, in, 3);
    tj_decomp_table *core = tj_core_decompositions();
    tj_graph *d = tj_graph_decompose(g, core);
    tj_decomp_table_free(core);
    cr_assert_not_null(d, "%s", tj_last_error());
    cr_expect_eq(tj_graph_count_op(d, tj_op_find("aten::convolution")), 0);
    tj_plan *p = compile_ok(d, NULL);
    tj_plan_statistics st = plan_stats(p);
    cr_expect_gt(st.staging_bytes, 0);
    expect_plan_matches(d, p, in, 3);
    /* x channels-last, w with its spatial dims transposed */
    tj_tensor *x = tj_permute(random_f32(4, (int64_t[]){1, 6, 5, 2}, 4), (int64_t[]){0, 3, 1, 2}, 4);
    tj_tensor *w = tj_transpose(random_f32(4, (int64_t[]){3, 2, 3, 3}, 5), 2, 3);
    tj_tensor *odd[3] = {x, w, in[2]}, *got[1];
    expect_same_as_staged(p, odd, 3, (bool[]){true, true, false}, got);
    tj_tensor *eager = tj_conv2d(x, w, in[2], (int64_t[]){1, 1}, (int64_t[]){1, 1}, (int64_t[]){1, 1}, 1);
    for (int64_t i = 0; i < tj_tensor_numel(eager); i++)
        cr_expect_float_eq(tj_tensor_item_at(got[0], i), tj_tensor_item_at(eager, i), 1e-5, "element %ld", (long)i);
    expect_plan_matches(d, p, in, 3);
    tj_plan_free(p);
    tj_graph_free(d);
    tj_graph_free(g);
    tj_scope_end(s);
}

/* in: x [3, 4], y [12]: x' = 2 * x (written back to x), _unsafe_view(x, [12]) + y */
static tj_status fn_view_and_write_back(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_mul_scalar(in[0], tj_v_int(2));
    out[1] = tj_add(tj_unsafe_view(in[0], (int64_t[]){12}, 1), in[1]);
    *n_out = 2;
    return out[0] && out[1] ? TJ_OK : tj_last_status();
}

/* An input both viewed and written back (a functionalised graph): the view
 * reads the staged copy of the old value, the new value goes into the
 * caller's tensor, at its strides. */
Test(plan, a_staged_input_written_back_gets_its_new_value)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *in[2] = {random_f32(2, (int64_t[]){3, 4}, 1), random_f32(1, (int64_t[]){12}, 2)};
    tj_graph *g = trace(fn_view_and_write_back, NULL, in, 2);
    int wb[2] = {0, -1};
    tj_compile_options o = {.writeback = wb};
    tj_plan *p = compile_ok(g, &o);
    tj_plan_statistics st = plan_stats(p);
    cr_expect_eq(st.staging_bytes, 64);
    tj_tensor *base = random_f32(2, (int64_t[]){4, 3}, 3);
    tj_tensor *xt = tj_t(base), *x0 = tj_clone(xt);
    for (int r = 0; r < 3; r++) {
        tj_tensor *eager[2], *got[2];
        int n_out;
        tj_tensor *ref_in[2] = {tj_clone(xt), in[1]};
        cr_assert_eq(fn_view_and_write_back(NULL, ref_in, 2, eager, &n_out), TJ_OK);
        cr_assert_eq(tj_plan_run(p, (tj_tensor *[]){xt, in[1]}, 2, got), TJ_OK, "%s", tj_last_error());
        cr_expect_eq(got[0], xt, "the written-back output is the input");
        expect_same(xt, eager[0]);
        expect_same(got[1], eager[1]);
    }
    cr_expect_float_eq(tj_tensor_item_at(base, 1), 8 * tj_tensor_item_at(x0, 4), 1e-6, "base[0][1] is x[1][0]");
    tj_plan_free(p);
    tj_graph_free(g);
    tj_scope_end(s);
}

Test(plan, outputs_that_are_inputs_views_or_repeated_are_returned)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *x = random_f32(2, (int64_t[]){2, 3}, 1);
    tj_graph *g = trace(fn_passthrough, NULL, &x, 1);
    tj_plan *p = compile_ok(g, NULL);
    expect_plan_matches(g, p, &x, 1);
    /* into caller tensors, one of them non-contiguous */
    tj_tensor *o[5] = {tj_tensor_empty(TJ_FLOAT32, 2, (int64_t[]){2, 3}),
                       tj_tensor_empty(TJ_FLOAT32, 2, (int64_t[]){3, 2}),
                       tj_t(tj_tensor_empty(TJ_FLOAT32, 2, (int64_t[]){3, 2})),
                       tj_tensor_empty(TJ_FLOAT32, 2, (int64_t[]){2, 3}),
                       tj_tensor_empty(TJ_FLOAT32, 2, (int64_t[]){3, 2})};
    cr_assert_eq(tj_plan_run_into(p, &x, 1, o), TJ_OK, "%s", tj_last_error());
    expect_same(o[0], x);
    expect_same(o[1], tj_t(x));
    expect_same(o[2], tj_exp(x));
    expect_same(o[3], tj_exp(x));
    expect_same(o[4], tj_t(tj_exp(x)));
    tj_plan_free(p);
    tj_graph_free(g);
    tj_scope_end(s);
}

/* A view of a context's result and autograd's saved alias of one hold its
 * storage: both outlive the plan and its contexts, with the last run's values
 * (ASan: before, releasing them wrote into the freed context). */
Test(plan, views_and_saved_aliases_of_context_results_outlive_the_plan)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *x = random_f32(2, (int64_t[]){2, 3}, 1);
    tj_graph *g = trace(fn_passthrough, NULL, &x, 1);
    tj_plan *p = compile_ok(g, NULL);
    cr_assert_eq(tj_plan_run_into(p, &x, 1, NULL), TJ_OK, "%s", tj_last_error());
    tj_tensor *y = tj_plan_context_output(tj_plan_default_context(p), 2);
    tj_tensor *flat = tj_reshape(y, (int64_t[]){6}, 1);
    tj_tensor *w = tj_ones((int64_t[]){2, 3}, 2, TJ_FLOAT32);
    cr_assert_eq(tj_tensor_set_requires_grad(w, true), TJ_OK);
    tj_tensor *loss = tj_sum(tj_mul(w, y), -1);
    tj_plan_free(p);
    tj_graph_free(g);
    expect_same(flat, tj_reshape(tj_exp(x), (int64_t[]){6}, 1));
    cr_assert_eq(tj_backward(loss, NULL), TJ_OK, "%s", tj_last_error());
    expect_same(tj_tensor_grad(w), tj_exp(x));
    tj_scope_end(s);
}

Test(plan, output_tensor_sharing_an_input_gets_the_right_values)
{
    tj_scope *s = tj_scope_begin();
    int64_t sh[2] = {64, 64};
    tj_tensor *in[2] = {random_f32(2, sh, 1), random_f32(2, sh, 2)};
    tj_graph *g = trace(fn_chain, NULL, in, 2);
    tj_plan *p = compile_ok(g, NULL);
    tj_tensor *ref[1];
    cr_assert_eq(tj_graph_run(g, in, 2, ref), TJ_OK);
    /* the output is the first input: written only after the last read */
    tj_tensor *x = tj_clone(in[0]);
    tj_tensor *args[2] = {x, in[1]};
    cr_assert_eq(tj_plan_run_into(p, args, 2, &x), TJ_OK, "%s", tj_last_error());
    expect_same(x, ref[0]);
    tj_plan_free(p);
    tj_graph_free(g);
    tj_scope_end(s);
}

/* in: x [2, 3], z [2, 3]; out: 2 x, 2 x + x, x^T, z. */
static tj_status fn_reads_after_copies(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *y = tj_mul_scalar(in[0], tj_v_float(2));
    out[0] = y;
    out[1] = tj_add(y, in[0]);
    out[2] = tj_transpose(in[0], 0, 1);
    out[3] = in[1];
    *n_out = 4;
    return out[0] && out[1] && out[2] ? TJ_OK : tj_last_status();
}

Test(plan, output_tensors_sharing_inputs_are_copied_after_the_values_read)
{
    tj_scope *s = tj_scope_begin();
    int64_t sh[2] = {2, 3}, tsh[2] = {3, 2};
    tj_tensor *in[2] = {random_f32(2, sh, 1), random_f32(2, sh, 2)};
    tj_graph *g = trace(fn_reads_after_copies, NULL, in, 2);
    tj_plan *p = compile_ok(g, NULL);
    tj_tensor *ref[4];
    cr_assert_eq(tj_graph_run(g, in, 2, ref), TJ_OK, "%s", tj_last_error());
    /* output 1 into the input x, whose transpose output 2 returns: x^T was
     * copied after x had taken 3 x */
    tj_tensor *x = tj_clone(in[0]), *args[2] = {x, in[1]};
    tj_tensor *o[4] = {tj_tensor_empty(TJ_FLOAT32, 2, sh), x, tj_tensor_empty(TJ_FLOAT32, 2, tsh),
                       tj_tensor_empty(TJ_FLOAT32, 2, sh)};
    cr_assert_eq(tj_plan_run_into(p, args, 2, o), TJ_OK, "%s", tj_last_error());
    for (int k = 0; k < 4; k++) expect_same(o[k], ref[k]);
    /* output 0 into z, whose value output 3 is, copied into x: one copy
     * would overwrite what the other reads, whatever the order */
    tj_tensor *z = tj_clone(in[1]);
    args[0] = x = tj_clone(in[0]);
    args[1] = z;
    tj_tensor *swap[4] = {z, tj_tensor_empty(TJ_FLOAT32, 2, sh), tj_tensor_empty(TJ_FLOAT32, 2, tsh), x};
    cr_expect_eq(tj_plan_run_into(p, args, 2, swap), TJ_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(tj_last_error(), "tj_plan_run_into: output 0 (%mul) shares memory with output 3's value (%arg1_1"),
              "%s", tj_last_error());
    tj_plan_free(p);
    /* an output tensor over an input the run writes back (output 0 into x) */
    int wb[4] = {0, -1, -1, -1};
    p = compile_ok(g, &(tj_compile_options){.writeback = wb});
    args[0] = x = tj_clone(in[0]);
    args[1] = tj_clone(in[1]);
    tj_tensor *over[4] = {NULL, x, NULL, NULL};
    cr_expect_eq(tj_plan_run_into(p, args, 2, over), TJ_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(tj_last_error(), "output 1 (%add) shares memory with input 0 (%arg0_1), which the run writes "
                                      "back (output 0)"), "%s", tj_last_error());
    expect_same(x, in[0]); /* refused before anything ran */
    tj_plan_free(p);
    tj_graph_free(g);
    tj_scope_end(s);
}

/* A fused step's result placed in place over a block whose value comes
 * later in the graph (the step runs where its last member was): it ran as
 * the tensor object of value 0 (the donor's object was not set yet), input 0,
 * and wrote its float64 result into the float32 input (ASan: a heap
 * overflow; a differential fuzzer's graph, reduced). */
Test(plan, a_result_in_place_over_a_later_value_runs_as_that_values_object)
{
    static const char text[] =
        "graph(%arg0_1 : f32[130, 130], %arg1_1 : f64[130, 130]):\n"
        "    %mul = aten.mul.Tensor(%arg0_1, %arg1_1)\n"
        "    %amax = aten.amax.default(%mul, [-1], True)\n"
        "    %full = aten.full.default([], 1.0, dtype = torch.float64)\n"
        "    %div = aten.div.Tensor_mode(%amax, %full, rounding_mode = 'trunc')\n"
        "    %full_2 = aten.full.default([], -1.0, dtype = torch.float64)\n"
        "    %maximum = aten.maximum.default(%full_2, %arg1_1)\n"
        "    %full_3 = aten.full.default([], 1.0, dtype = torch.float64)\n"
        "    %full_4 = aten.full.default([], False, dtype = torch.bool)\n"
        "    %eq = aten.eq.Tensor(%full_3, %full_3)\n"
        "    %eq_1 = aten.eq.Tensor(%eq, %full_4)\n"
        "    %lt = aten.lt.Tensor(%full_3, %maximum)\n"
        "    %full_5 = aten.full.default([], True, dtype = torch.bool)\n"
        "    %where = aten.where.self(%lt, %full_5, %eq_1)\n"
        "    %where_1 = aten.where.self(%where, %full_3, %maximum)\n"
        "    %full_6 = aten.full.default([], -1.0, dtype = torch.float64)\n"
        "    %mul_1 = aten.mul.Tensor(%where_1, %full_6)\n"
        "    %full_7 = aten.full.default([], 0.0, dtype = torch.float64)\n"
        "    %maximum_1 = aten.maximum.default(%full_7, %mul_1)\n"
        "    %full_9 = aten.full.default([], 1.0, dtype = torch.float64)\n"
        "    %div_3 = aten.div.Tensor_mode(%mul, %full_9, rounding_mode = 'trunc')\n"
        "    %add_2 = aten.add.Tensor(%mul, %div_3, alpha = -1)\n"
        "    %lt_1 = aten.lt.Tensor(%where_1, %mul)\n"
        "    %where_2 = aten.where.self(%lt_1, %where_1, %add_2)\n"
        "    %tanh = aten.tanh.default(%amax)\n"
        "    %lt_3 = aten.lt.Tensor(%maximum_1, %where_2)\n"
        "    %where_4 = aten.where.self(%lt_3, %maximum_1, %tanh)\n"
        "    %_to_copy_2 = aten._to_copy.default(%where_4)\n"
        "    %add_4 = aten.add.Tensor(%_to_copy_2, %div)\n"
        "    %copy_ = aten.copy_.default(%_to_copy_2, %add_4)\n"
        "    %mul_5 = aten.mul.Tensor(%div, %where_1)\n"
        "    %full_14 = aten.full.default([], -1.0, dtype = torch.float64)\n"
        "    %mul_7 = aten.mul.Tensor(%div, %full_14)\n"
        "    %add_7 = aten.add.Tensor(%mul_5, %mul_7)\n"
        "    return (%add_7, %mul)\n";
    tj_scope *s = tj_scope_begin();
    tj_graph *g = tj_graph_parse(text);
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_tensor *in[2] = {random_f32(2, (int64_t[]){130, 130}, 1), tj_to_copy(random_f32(2, (int64_t[]){130, 130}, 2), TJ_FLOAT64)};
    tj_tensor *x = tj_clone(in[0]), *ref[2], *got[2];
    cr_assert_eq(tj_graph_run(g, in, 2, ref), TJ_OK, "%s", tj_last_error());
    tj_plan *p = compile_ok(g, NULL);
    cr_expect_gt(plan_stats(p).n_inplace, 0);
    for (int run = 0; run < 2; run++) {
        cr_assert_eq(tj_plan_run(p, in, 2, got), TJ_OK, "%s", tj_last_error());
        expect_same(in[0], x);
        for (int k = 0; k < 2; k++) expect_same(got[k], ref[k]);
    }
    tj_plan_free(p);
    tj_graph_free(g);
    tj_scope_end(s);
}

Test(plan, inplace_operators_update_intermediates_views_and_inputs)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *x = random_f32(2, (int64_t[]){3, 4}, 1), *w = random_f32(2, (int64_t[]){3, 4}, 2);
    tj_tensor *in[2] = {tj_clone(x), w};
    tj_graph *g = trace(fn_inplace, NULL, in, 2);
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::add_.Tensor")), 2);
    tj_plan *p = compile_ok(g, NULL);
    tj_tensor *x1 = tj_clone(x), *x2 = tj_clone(x), *ref[2], *got[2];
    cr_assert_eq(tj_graph_run(g, (tj_tensor *[]){x1, w}, 2, ref), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj_plan_run(p, (tj_tensor *[]){x2, w}, 2, got), TJ_OK, "%s", tj_last_error());
    expect_same(got[0], ref[0]);
    expect_same(got[1], ref[1]);
    expect_same(x2, x1); /* the caller's input was updated as the interpreter does */
    /* yt = (exp(x) + w)^T */
    double e = exp(tj_tensor_item_at(x, 4 * 2 + 1)) + tj_tensor_item_at(w, 4 * 2 + 1);
    cr_expect_float_eq(tj_tensor_item_at(got[0], 3 * 1 + 2), e, 1e-5 * fabs(e));
    tj_plan_free(p);
    tj_graph_free(g);
    tj_scope_end(s);
}

/* ---- write-back of updated inputs ---- */


/* in: p, g: p - 0.1 g (an SGD step) */
static tj_status fn_sgd(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_sub(in[0], tj_mul_scalar(in[1], tj_v_float(0.1)));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* in: p, buf, g: buf' = 0.9 buf + g, p' = p - 0.01 buf' (SGD with momentum) */
static tj_status fn_momentum(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *buf = tj_add(tj_mul_scalar(in[1], tj_v_float(0.9)), in[2]);
    out[0] = tj_sub(in[0], tj_mul_scalar(buf, tj_v_float(0.01)));
    out[1] = buf;
    *n_out = 2;
    return out[0] ? TJ_OK : tj_last_status();
}

/* fn_momentum traced on three random float32 tensors of `shape` (p, buf,
 * g: seeds 1, 2, 3), which land in in. */
static tj_graph *trace_momentum(int ndim, const int64_t *shape, tj_tensor **in)
{
    for (int i = 0; i < 3; i++) in[i] = random_f32(ndim, shape, (unsigned)i + 1);
    return trace(fn_momentum, NULL, in, 3);
}

/* in: p, g: p' = p + g, and q = p * p' reads p after p' is made */
static tj_status fn_late_read(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_add(in[0], in[1]);
    out[1] = tj_mul(in[0], out[0]);
    *n_out = 2;
    return out[1] ? TJ_OK : tj_last_status();
}

/* Runs the interpreter `steps` times, feeding output k back into input
 * wb[k], and the plan the same way through write-back; compares the outputs
 * and the written-back inputs after each step. Results stay in the caller's
 * scope. */
static void expect_writeback_matches(const tj_graph *g, tj_plan *p, tj_tensor **ref_in, tj_tensor **plan_in, int n_in,
                                     const int *wb, int steps)
{
    int n_out = tj_graph_num_outputs(g);
    for (int s = 0; s < steps; s++) {
        tj_tensor *ref[4], *got[4];
        cr_assert_eq(tj_graph_run(g, ref_in, n_in, ref), TJ_OK, "%s", tj_last_error());
        cr_assert_eq(tj_plan_run(p, plan_in, n_in, got), TJ_OK, "%s", tj_last_error());
        for (int k = 0; k < n_out; k++) {
            expect_same(got[k], ref[k]);
            if (wb[k] < 0) continue;
            expect_same(plan_in[wb[k]], ref[k]);
            ref_in[wb[k]] = ref[k];
        }
    }
}

Test(plan, written_back_output_is_computed_in_the_input_buffer)
{
    tj_scope *s = tj_scope_begin();
    int64_t sh[2] = {64, 64};
    tj_tensor *in[2] = {random_f32(2, sh, 1), random_f32(2, sh, 2)};
    tj_graph *g = trace(fn_sgd, NULL, in, 2);
    int wb[1] = {0};
    tj_compile_options o = {.writeback = wb, .no_pointwise_fusion = true}; /* 0.1 g in the arena */
    tj_plan *p = compile_ok(g, &o);
    tj_plan_statistics st = plan_stats(p);
    cr_expect_eq(st.n_writeback, 1);
    cr_expect_eq(st.n_writeback_direct, 1, "sub reads p element by element where it writes p'");
    /* p' lives in p: only 0.1 g has an arena block */
    const size_t block = 64 * 64 * 4;
    cr_expect_eq(st.naive_bytes, 2 * block);
    cr_expect_eq(st.arena_bytes, block, "arena %zu", st.arena_bytes);
    cr_expect_eq(st.lower_bound_bytes, block);
    cr_expect_eq(st.writeback_fallback_bytes, block);
    tj_tensor *ref_in[2] = {tj_clone(in[0]), in[1]};
    tj_tensor *plan_in[2] = {tj_clone(in[0]), in[1]};
    expect_writeback_matches(g, p, ref_in, plan_in, 2, wb, 3);
    /* p_3 = ((p - 0.1 g) - 0.1 g) - 0.1 g, by hand for one element */
    float p0 = (float)tj_tensor_item_at(in[0], 77), g0 = (float)tj_tensor_item_at(in[1], 77);
    float step = (float)(g0 * 0.1);
    cr_expect_eq((float)tj_tensor_item_at(plan_in[0], 77), ((p0 - step) - step) - step);
    /* a non-contiguous input: the value is copied in at the end instead */
    tj_tensor *pt = tj_t(tj_clone(tj_t(plan_in[0])));
    tj_tensor *odd_in[2] = {pt, in[1]};
    tj_tensor *ref_odd[2] = {tj_clone(pt), in[1]};
    expect_writeback_matches(g, p, ref_odd, odd_in, 2, wb, 2);
    tj_plan_free(p);
    tj_graph_free(g);
    tj_scope_end(s);
}

Test(plan, optimiser_state_and_parameters_are_written_back_without_copies)
{
    tj_scope *s = tj_scope_begin();
    int64_t sh[1] = {1000};
    tj_tensor *in[3];
    tj_graph *g = trace_momentum(1, sh, in);
    int wb[2] = {0, 1};
    tj_compile_options o = {.writeback = wb};
    tj_plan *p = compile_ok(g, &o);
    tj_plan_statistics st = plan_stats(p);
    cr_expect_eq(st.n_writeback, 2);
    cr_expect_eq(st.n_writeback_direct, 2);
    tj_tensor *ref_in[3] = {tj_clone(in[0]), tj_clone(in[1]), in[2]};
    tj_tensor *plan_in[3] = {tj_clone(in[0]), tj_clone(in[1]), in[2]};
    expect_writeback_matches(g, p, ref_in, plan_in, 3, wb, 4);
    tj_plan_free(p);
    tj_graph_free(g);
    tj_scope_end(s);
}

Test(plan, input_read_after_its_new_value_is_made_is_copied_back_at_the_end)
{
    tj_scope *s = tj_scope_begin();
    int64_t sh[2] = {8, 8};
    tj_tensor *in[2] = {random_f32(2, sh, 1), random_f32(2, sh, 2)};
    tj_graph *g = trace(fn_late_read, NULL, in, 2);
    int wb[2] = {0, -1};
    /* apart: loop fusion would read p in the step that writes p' */
    tj_compile_options o = {.writeback = wb, .no_pointwise_fusion = true};
    tj_plan *p = compile_ok(g, &o);
    tj_plan_statistics st = plan_stats(p);
    cr_expect_eq(st.n_writeback, 1);
    cr_expect_eq(st.n_writeback_direct, 0);
    tj_tensor *ref_in[2] = {tj_clone(in[0]), in[1]};
    tj_tensor *plan_in[2] = {tj_clone(in[0]), in[1]};
    expect_writeback_matches(g, p, ref_in, plan_in, 2, wb, 3);
    tj_plan_free(p);
    tj_graph_free(g);
    tj_scope_end(s);
}

/* Staging an input copies it into the context's arena: no allocation, in
 * runs that stage it or not, one after the other. */
Test(plan, staged_runs_allocate_nothing)
{
    tj_allocator a = {counting_alloc, counting_free, NULL};
    tj_set_allocator(&a);
    tj_scope *s = tj_scope_begin();
    tj_tensor *in[3];
    tj_graph *g = trace_linear3d(in, 2, 3, 4);
    tj_plan *p = compile_ok(g, NULL);
    tj_tensor *odd[3] = {transposed_x(7, 2, 3, 4), in[1], in[2]};
    tj_tensor *out = tj_tensor_empty(TJ_FLOAT32, 3, (int64_t[]){2, 3, 5});
    cr_assert_eq(tj_plan_run_into(p, odd, 3, &out), TJ_OK, "%s", tj_last_error());
    long before = atomic_load(&n_allocs);
    for (int i = 0; i < 100; i++) cr_assert_eq(tj_plan_run_into(p, i % 3 ? odd : in, 3, &out), TJ_OK);
    cr_expect_eq(atomic_load(&n_allocs) - before, 0);
    tj_plan_free(p);
    tj_graph_free(g);
    tj_scope_end(s);
    tj_set_allocator(NULL);
}

Test(plan, write_back_runs_allocate_nothing)
{
    tj_allocator a = {counting_alloc, counting_free, NULL};
    tj_set_allocator(&a);
    tj_scope *s = tj_scope_begin();
    int64_t sh[1] = {1000};
    tj_tensor *in[3];
    tj_graph *g = trace_momentum(1, sh, in);
    tj_compile_options o = {.writeback = (int[]){0, 1}};
    tj_plan *p = compile_ok(g, &o);
    cr_assert_eq(tj_plan_run_into(p, in, 3, NULL), TJ_OK);
    long before = atomic_load(&n_allocs);
    for (int i = 0; i < 100; i++) cr_assert_eq(tj_plan_run_into(p, in, 3, NULL), TJ_OK);
    cr_expect_eq(atomic_load(&n_allocs) - before, 0);
    tj_plan_free(p);
    tj_graph_free(g);
    tj_scope_end(s);
    tj_set_allocator(NULL);
}

Test(plan, write_back_fallback_is_allocated_once_when_an_input_first_needs_it)
{
    tj_allocator a = {counting_alloc, counting_free, NULL};
    tj_set_allocator(&a);
    tj_scope *s = tj_scope_begin();
    int64_t sh[2] = {32, 48};
    tj_tensor *in[3];
    tj_graph *g = trace_momentum(2, sh, in);
    int wb[2] = {0, 1};
    tj_compile_options o = {.writeback = wb};
    tj_plan *p = compile_ok(g, &o);
    tj_plan_statistics st = plan_stats(p);
    cr_expect_eq(st.n_writeback_direct, 2);
    cr_expect_eq(st.writeback_fallback_bytes, 2 * 32 * 48 * 4, "p' and buf'");
    /* contiguous inputs: written in place, no fallback (after a first run,
     * which makes the plan's default context) */
    tj_tensor *warm[3] = {tj_clone(in[0]), tj_clone(in[1]), in[2]};
    cr_assert_eq(tj_plan_run_into(p, warm, 3, NULL), TJ_OK, "%s", tj_last_error());
    tj_tensor *ref_out[2], *ref_in[3] = {in[0], in[1], in[2]};
    tj_tensor *plan_in[3] = {tj_clone(in[0]), tj_clone(in[1]), in[2]};
    long before = atomic_load(&n_allocs);
    cr_assert_eq(tj_plan_run_into(p, plan_in, 3, NULL), TJ_OK, "%s", tj_last_error());
    cr_expect_eq(atomic_load(&n_allocs) - before, 0, "the fallback is not allocated while inputs take their values");
    cr_assert_eq(tj_graph_run(g, ref_in, 3, ref_out), TJ_OK, "%s", tj_last_error());
    expect_same(plan_in[0], ref_out[0]);
    expect_same(plan_in[1], ref_out[1]);
    /* p and buf as two views of one storage: the values go to the fallback,
     * allocated once, and are copied in at the end */
    tj_tensor *flat = tj_view(tj_cat((tj_tensor *[]){plan_in[0], plan_in[1]}, 2, 0), (int64_t[]){2, 32, 48}, 3);
    tj_tensor *views[3] = {tj_select(flat, 0, 0), tj_select(flat, 0, 1), in[2]};
    tj_tensor *ref_views[3] = {tj_clone(views[0]), tj_clone(views[1]), in[2]};
    long plan_allocs = 0;
    for (int r = 0; r < 3; r++) {
        before = atomic_load(&n_allocs);
        cr_assert_eq(tj_plan_run_into(p, views, 3, NULL), TJ_OK, "%s", tj_last_error());
        plan_allocs += atomic_load(&n_allocs) - before;
        cr_assert_eq(tj_graph_run(g, ref_views, 3, ref_out), TJ_OK, "%s", tj_last_error());
        expect_same(views[0], ref_out[0]);
        expect_same(views[1], ref_out[1]);
        ref_views[0] = ref_out[0], ref_views[1] = ref_out[1];
    }
    cr_expect_eq(plan_allocs, 1, "one fallback allocation for three runs");
    tj_plan_free(p);
    tj_graph_free(g);
    tj_scope_end(s);
    tj_set_allocator(NULL);
}

/* in: p, buf, g: buf.mul_(0.9).add_(g); p.sub_(buf, alpha=0.01); returns p * 2
 * (the in-place form an optimiser writes) */
static tj_status fn_momentum_inplace(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_add_(tj_mul_scalar_(in[1], tj_v_float(0.9)), in[2], tj_v_int(1));
    tj_sub_(in[0], in[1], tj_v_float(0.01));
    out[0] = tj_mul_scalar(in[0], tj_v_int(2));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(plan, functionalised_graph_writes_mutated_inputs_back_in_place)
{
    tj_scope *s = tj_scope_begin();
    int64_t sh[1] = {1000};
    tj_tensor *in[3] = {random_f32(1, sh, 1), random_f32(1, sh, 2), random_f32(1, sh, 3)};
    tj_tensor *trace_in[3] = {tj_clone(in[0]), tj_clone(in[1]), in[2]};
    tj_graph *g = trace(fn_momentum_inplace, NULL, trace_in, 3);
    cr_assert_eq(tj_pass_functionalize(g), 3, "%s", tj_last_error());
    cr_assert_eq(tj_graph_num_outputs(g), 3);
    cr_expect_eq(tj_graph_output_writeback(g, 1) + tj_graph_output_writeback(g, 2), 0 + 1);
    tj_plan *p = compile_ok(g, NULL);
    tj_plan_statistics st = plan_stats(p);
    cr_expect_eq(st.n_writeback, 2);
    cr_expect_eq(st.n_writeback_direct, 2, "buf' and p' are made by elementwise kernels reading buf, p in place");
    /* four steps: the interpreter on its own copies, the plan on others */
    tj_tensor *ref_in[3] = {tj_clone(in[0]), tj_clone(in[1]), in[2]};
    tj_tensor *plan_in[3] = {tj_clone(in[0]), tj_clone(in[1]), in[2]};
    for (int step = 0; step < 4; step++) {
        tj_tensor *ref[3], *got[3];
        cr_assert_eq(tj_graph_run(g, ref_in, 3, ref), TJ_OK, "%s", tj_last_error());
        cr_assert_eq(tj_plan_run(p, plan_in, 3, got), TJ_OK, "%s", tj_last_error());
        expect_same(got[0], ref[0]);
        expect_same(plan_in[0], ref_in[0]);
        expect_same(plan_in[1], ref_in[1]);
        for (int k = 1; k < 3; k++) cr_expect_eq(got[k], plan_in[tj_graph_output_writeback(g, k)], "returned as the input");
    }
    /* buf_1 = 0.9 buf + g, p_1 = p - 0.01 buf_1, by hand for one element */
    tj_tensor *one[3] = {tj_clone(in[0]), tj_clone(in[1]), in[2]}, *out[3];
    cr_assert_eq(tj_plan_run(p, one, 3, out), TJ_OK);
    float buf1 = (float)tj_tensor_item_at(in[1], 5) * 0.9f + (float)tj_tensor_item_at(in[2], 5);
    cr_expect_float_eq(tj_tensor_item_at(one[1], 5), buf1, 1e-6);
    cr_expect_float_eq(tj_tensor_item_at(one[0], 5), (float)tj_tensor_item_at(in[0], 5) - 0.01f * buf1, 1e-6);
    tj_plan_free(p);
    tj_graph_free(g);
    tj_scope_end(s);
}

Test(plan, mlp_training_step_replays_like_the_interpreter_with_direct_write_backs)
{
    tj_scope *s = tj_scope_begin();
    model m;
    train_state state;
    cr_assert_eq(model_create(model_find("mlp"), 0, &m), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(train_state_init(&m, &state), TJ_OK);
    tj_graph *g = step_trace(&m, STEP_TRAIN, 8, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_plan *p = compile_ok(g, NULL);
    tj_plan_statistics st = plan_stats(p);
    cr_expect_eq(st.n_writeback, 2 * m.n_params, "parameters and momentum buffers");
    cr_expect_eq(st.n_writeback_direct, st.n_writeback);
    cr_expect_leq(st.arena_bytes, st.naive_bytes);
    /* the same batch for both; each side updates its own copies */
    tj_tensor *x = random_f32(2, (int64_t[]){8, 784}, 5);
    int64_t labels[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    tj_tensor *y = tj_tensor_from_data(TJ_INT64, 1, (int64_t[]){8}, labels);
    tj_tensor *ref_in[3 * MODEL_MAX_PARAMS + 2], *plan_in[3 * MODEL_MAX_PARAMS + 2];
    int n = step_inputs(&m, &state, x, y, ref_in);
    for (int i = 0; i < n; i++) {
        plan_in[i] = tj_clone(ref_in[i]);
        ref_in[i] = tj_clone(ref_in[i]);
    }
    for (int step = 0; step < 3; step++) {
        tj_tensor *ref[3 * MODEL_MAX_PARAMS + 1], *got[3 * MODEL_MAX_PARAMS + 1];
        cr_assert_eq(tj_graph_run(g, ref_in, n, ref), TJ_OK, "%s", tj_last_error());
        cr_assert_eq(tj_plan_run(p, plan_in, n, got), TJ_OK, "%s", tj_last_error());
        expect_same(got[0], ref[0]); /* the loss */
        for (int i = 0; i < n; i++) expect_same(plan_in[i], ref_in[i]);
    }
    tj_plan_free(p);
    tj_graph_free(g);
    train_state_free(&state);
    model_free(&m);
    tj_scope_end(s);
}

Test(plan, gpt_training_step_arena_is_at_most_60_percent_of_the_naive_sum)
{
    model m;
    cr_assert_eq(model_create(model_find("gpt"), 0, &m), TJ_OK, "%s", tj_last_error());
    tj_graph *g = step_trace(&m, STEP_TRAIN, 0, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_plan *p = compile_ok(g, NULL);
    tj_plan_statistics st = plan_stats(p);
    cr_expect_leq(st.arena_bytes * 10, st.naive_bytes * 6, "arena %zu, naive %zu", st.arena_bytes, st.naive_bytes);
    cr_expect_geq(st.arena_bytes, st.lower_bound_bytes);
    cr_expect_eq(st.n_writeback_direct, st.n_writeback);
    tj_plan_free(p);
    tj_graph_free(g);
    model_free(&m);
}

/* As PyTorch's wte(tokens) + wpe(pos): the token embedding first, so the
 * backward (later nodes first) records the position embedding's gradient
 * before the token embedding's, which then takes the LM head's gradient:
 * torch 1.13's make_fx order. */
Test(plan, gpt_embeds_tokens_before_positions_as_torch)
{
    model m;
    cr_assert_eq(model_create(model_find("gpt"), 0, &m), TJ_OK, "%s", tj_last_error());
    tj_graph *g = step_trace(&m, STEP_TRAIN, 0, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    char *text = tj_graph_to_string(g);
    char *tok = strstr(text, "%embedding = aten.embedding.default(%detach, %x)\n");
    char *pos = strstr(text, "%embedding_1 = aten.embedding.default(%detach_1, %arange)\n");
    char *pos_grad = strstr(text, "%embedding_dense_backward = aten.embedding_dense_backward.default(%view_70, %arange, ");
    char *tok_grad = strstr(text, "%embedding_dense_backward_1 = aten.embedding_dense_backward.default(%add_12, %x, ");
    cr_expect(tok && pos && pos_grad && tok_grad, "%s", text);
    cr_expect(strstr(text, "%add_13 = aten.add.Tensor(%t_12, %embedding_dense_backward_1)\n"), "%s", text);
    free(text);
    tj_graph_free(g);
    model_free(&m);
}

Test(plan, thread_placement_moves_blocks_at_two_threads_and_keeps_results)
{
    tj_scope *s = tj_scope_begin();
    model m;
    cr_assert_eq(model_create(model_find("gpt"), 0, &m), TJ_OK, "%s", tj_last_error());
    tj_graph *g = step_trace(&m, STEP_FORWARD, 0, NULL, TJ_TRACE_FAKE);
    int n = tj_graph_num_inputs(g);
    tj_tensor *in[MODEL_MAX_PARAMS + 1];
    int64_t xs[2] = {8, 64};
    tj_tensor *x = tj_tensor_empty(TJ_INT64, 2, xs);
    for (int i = 0; i < 8 * 64; i++) ((int64_t *)tj_tensor_data(x))[i] = (i * 37) % 256;
    cr_assert_eq(step_inputs(&m, NULL, x, NULL, in), n);
    tj_set_num_threads(2);
    /* bit-exact against the interpreter: attention as its operators */
    tj_compile_options exact = {.no_attention_fusion = true}, blind = {.no_thread_placement = true, .no_attention_fusion = true};
    tj_plan *aware = compile_ok(g, &exact), *plain = compile_ok(g, &blind);
    char *a = test_plan_memory_text(aware), *b = test_plan_memory_text(plain);
    cr_expect_str_neq(a, b, "the same placement with and without thread-aware placement");
    free(a);
    free(b);
    expect_plan_matches(g, aware, in, n);
    expect_plan_matches(g, plain, in, n);
    tj_plan_free(aware);
    tj_plan_free(plain);
    tj_graph_free(g);
    model_free(&m);
    tj_scope_end(s);
}

/* Thread-aware placement models part t of a large result as written by
 * thread t, for as many parts as threads; but at most
 * TJ_K_MAX_PARTICIPANTS threads run a kernel (the pool's size), so a larger
 * setting places as that many do. It used to cut each result into that many
 * parts: tj_set_num_threads(1000) made compiling `tjit profile cnn` take
 * 33 s (0.5 s at 2 threads), 100000 never finished, and INT_MAX overflowed
 * the segment count into plain best fit. (The timeout only stops a
 * regression from hanging the suite.) */
Test(plan, placement_models_no_more_threads_than_a_kernel_runs_on, .timeout = 300)
{
    tj_scope *s = tj_scope_begin();
    model m;
    cr_assert_eq(model_create(model_find("gpt"), 0, &m), TJ_OK, "%s", tj_last_error());
    tj_graph *g = step_trace(&m, STEP_FORWARD, 0, NULL, TJ_TRACE_FAKE);
    tj_compile_options o = {.no_attention_fusion = true};
    tj_set_num_threads(TJ_K_MAX_PARTICIPANTS);
    tj_plan *pool = compile_ok(g, &o);
    char *want = test_plan_memory_text(pool);
    const int more[3] = {TJ_K_MAX_PARTICIPANTS + 1, 100000, INT_MAX};
    for (int k = 0; k < 3; k++) {
        tj_set_num_threads(more[k]);
        tj_plan *p = compile_ok(g, &o);
        char *got = test_plan_memory_text(p);
        cr_expect_str_eq(got, want, "placement at %d threads", more[k]);
        free(got);
        tj_plan_free(p);
    }
    free(want);
    tj_plan_free(pool);
    tj_graph_free(g);
    model_free(&m);
    tj_scope_end(s);
}

Test(plan, bad_write_back_entries_are_compile_errors)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *in[3];
    tj_graph *g = trace_momentum(1, (int64_t[]){4}, in);
    tj_compile_options o = {.writeback = (int[]){3, -1}};
    cr_expect_null(tj_compile(g, &o));
    cr_expect(strstr(tj_last_error(), "output 0 is written back to input 3 of 3"), "%s", tj_last_error());
    o.writeback = (int[]){0, 0};
    cr_expect_null(tj_compile(g, &o));
    cr_expect(strstr(tj_last_error(), "input 0 (%arg0_1) is written back by two outputs"), "%s", tj_last_error());
    tj_graph_free(g);
    tj_tensor *x = random_f32(2, (int64_t[]){2, 3}, 4);
    g = trace(fn_passthrough, NULL, &x, 1);
    o.writeback = (int[]){-1, 0, -1, -1, -1};
    cr_expect_null(tj_compile(g, &o));
    cr_expect_eq(tj_last_status(), TJ_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(tj_last_error(), "(%t, float32[3, 2]) cannot be written back to input 0 (%arg0_1, float32[2, 3])"),
              "%s", tj_last_error());
    tj_graph_free(g);
    tj_scope_end(s);
}

/* ---- errors ---- */

Test(plan, wrong_input_shape_dtype_or_count_is_a_clear_error)
{
    mlp_case m = mlp_setup();
    tj_plan *p = compile_ok(m.g, NULL);
    tj_tensor *out[2];
    tj_tensor *bad[5] = {random_f32(2, (int64_t[]){16, 8}, 1), m.in[1], m.in[2], m.in[3], m.in[4]};
    cr_expect_eq(tj_plan_run(p, bad, 5, out), TJ_ERR_SHAPE);
    cr_expect_str_eq(tj_last_error(), "tj_plan_run: input 0 (%arg0_1) has shape [16, 8], the plan was compiled for [8, 16]");
    cr_expect_null(out[0]);
    bad[0] = tj_tensor_empty(TJ_FLOAT64, 2, (int64_t[]){8, 16});
    cr_expect_eq(tj_plan_run(p, bad, 5, out), TJ_ERR_DTYPE);
    cr_expect(strstr(tj_last_error(), "input 0 (%arg0_1) is float64[8, 16], the plan was compiled for float32[8, 16]"),
              "%s", tj_last_error());
    cr_expect_eq(tj_plan_run(p, m.in, 4, out), TJ_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(tj_last_error(), "takes 5 inputs, got 4"), "%s", tj_last_error());
    bad[0] = NULL;
    cr_expect_eq(tj_plan_run(p, bad, 5, out), TJ_ERR_INVALID_ARGUMENT);
    /* a wrong output tensor for run_into */
    tj_tensor *o[2] = {tj_tensor_empty(TJ_FLOAT32, 2, (int64_t[]){8, 5}), tj_tensor_empty(TJ_FLOAT32, 2, (int64_t[]){8, 32})};
    cr_expect_eq(tj_plan_run_into(p, m.in, 5, o), TJ_ERR_SHAPE);
    cr_expect(strstr(tj_last_error(), "output 0"), "%s", tj_last_error());
    tj_plan_free(p);
    mlp_teardown(&m);
}

Test(plan, operator_without_kernel_fails_at_compile_time)
{
    mlp_case m = mlp_setup();
    struct tj_op *relu = TJ_OPS(relu);
    tj_kernel_fn saved = relu->kernel;
    relu->kernel = NULL;
    tj_plan *p = tj_compile(m.g, NULL);
    relu->kernel = saved;
    cr_expect_null(p);
    cr_expect_eq(tj_last_status(), TJ_ERR_UNSUPPORTED);
    cr_expect_str_eq(tj_last_error(), "tj_compile: node %relu: aten::relu has no kernel");
    mlp_teardown(&m);
}

Test(plan, null_arguments_are_errors)
{
    cr_expect_null(tj_compile(NULL, NULL));
    cr_expect_eq(tj_last_status(), TJ_ERR_INVALID_ARGUMENT);
    cr_expect_eq(tj_plan_run(NULL, NULL, 0, NULL), TJ_ERR_INVALID_ARGUMENT);
    cr_expect_eq(tj_plan_run_ctx_into(NULL, NULL, 0, NULL), TJ_ERR_INVALID_ARGUMENT);
    tj_plan_free(NULL);
    tj_plan_context_free(NULL);
}

/* ---- memory plan ---- */

Test(plan, arena_lies_between_the_lower_bound_and_the_naive_sum)
{
    mlp_case m = mlp_setup();
    tj_plan *p = compile_ok(m.g, NULL);
    tj_plan_statistics st = plan_stats(p);
    cr_expect_leq(st.lower_bound_bytes, st.arena_bytes);
    cr_expect_leq(st.arena_bytes, st.naive_bytes);
    cr_expect_eq(st.arena_bytes % 64, 0);
    /* without reuse every intermediate has its own block */
    tj_compile_options o = {.no_memory_reuse = true};
    tj_plan *q = compile_ok(m.g, &o);
    tj_plan_statistics sq = plan_stats(q);
    cr_expect_eq(sq.arena_bytes, sq.naive_bytes);
    cr_expect_eq(sq.naive_bytes, st.naive_bytes);
    expect_plan_matches(m.g, q, m.in, 5);
    tj_plan_free(q);
    tj_plan_free(p);
    mlp_teardown(&m);
}

/* The chain on x, y of `shape`: its plan with in-place reuse (its calls
 * each a kernel: no loop fusion, which would keep the chain out of the
 * arena). */
static tj_plan *compile_chain(const int64_t *shape, tj_tensor **in, tj_graph **g)
{
    in[0] = random_f32(2, shape, 1);
    in[1] = random_f32(2, shape, 2);
    *g = trace(fn_chain, NULL, in, 2);
    return compile_ok(*g, &(tj_compile_options){.no_pointwise_fusion = true});
}

Test(plan, elementwise_chain_reuses_dying_inputs_in_place)
{
    tj_scope *s = tj_scope_begin();
    int64_t sh[2] = {256, 128};
    tj_tensor *in[2];
    tj_graph *g;
    tj_plan *p = compile_chain(sh, in, &g);
    tj_plan_statistics st = plan_stats(p);
    const size_t block = 256 * 128 * 4;
    /* 7 results of 128 KiB: a (live until sub) plus one working block suffice */
    cr_expect_eq(st.naive_bytes, 7 * block);
    cr_expect_eq(st.arena_bytes, 2 * block, "arena %zu", st.arena_bytes);
    cr_expect_eq(st.lower_bound_bytes, 2 * block);
    cr_expect_geq(st.n_inplace, 4);
    expect_plan_matches(g, p, in, 2);
    /* no in-place reuse: same results, more memory */
    tj_compile_options o = {.no_inplace_reuse = true, .no_pointwise_fusion = true};
    tj_plan *q = compile_ok(g, &o);
    tj_plan_statistics sq = plan_stats(q);
    cr_expect_eq(sq.n_inplace, 0);
    cr_expect_eq(sq.arena_bytes, 3 * block);
    expect_plan_matches(g, q, in, 2);
    tj_plan_free(q);
    tj_plan_free(p);
    tj_graph_free(g);
    tj_scope_end(s);
}

Test(plan, small_elementwise_results_get_blocks_of_their_own)
{
    /* below 128 KiB in-place reuse saves no cache worth having and, with
     * threads, moves the block's lines between cores (memory_plan.c) */
    tj_scope *s = tj_scope_begin();
    int64_t sh[2] = {64, 64};
    tj_tensor *in[2];
    tj_graph *g;
    tj_plan *p = compile_chain(sh, in, &g);
    tj_plan_statistics st = plan_stats(p);
    cr_expect_eq(st.n_inplace, 0);
    cr_expect_eq(st.arena_bytes, 3 * 64 * 64 * 4, "arena %zu", st.arena_bytes);
    expect_plan_matches(g, p, in, 2);
    tj_plan_free(p);
    tj_graph_free(g);
    tj_scope_end(s);
}

Test(plan, memory_plan_prints_one_line_per_intermediate)
{
    mlp_case m = mlp_setup();
    tj_plan *p = compile_ok(m.g, NULL);
    char *buf = test_plan_memory_text(p);
    cr_expect(strncmp(buf, "arena ", 6) == 0, "%s", buf);
    cr_expect(strstr(buf, "%relu "), "%s", buf); /* the result of addmm + relu, one fused step */
    cr_expect(strstr(buf, "float32[8, 32]"), "%s", buf);
    cr_expect(!strstr(buf, "%addmm "), "addmm's own result is never stored: %s", buf);
    free(buf);
    tj_plan_free(p);
    mlp_teardown(&m);
}

/* ---- allocation-free runs ---- */

Test(plan, runs_after_warm_up_allocate_nothing)
{
    tj_allocator a = {counting_alloc, counting_free, NULL};
    tj_set_allocator(&a);
    mlp_case m = mlp_setup();
    tj_plan *p = compile_ok(m.g, NULL);
    tj_tensor *out[2] = {tj_tensor_empty(TJ_FLOAT32, 2, (int64_t[]){8, 4}),
                         tj_tensor_empty(TJ_FLOAT32, 2, (int64_t[]){8, 32})};
    cr_assert_eq(tj_plan_run_into(p, m.in, 5, out), TJ_OK, "%s", tj_last_error()); /* warm-up */
    long before = atomic_load(&n_allocs);
    for (int i = 0; i < 100; i++) cr_assert_eq(tj_plan_run_into(p, m.in, 5, out), TJ_OK);
    cr_expect_eq(atomic_load(&n_allocs) - before, 0, "into caller tensors: %ld allocations",
                 atomic_load(&n_allocs) - before);
    before = atomic_load(&n_allocs);
    for (int i = 0; i < 100; i++) cr_assert_eq(tj_plan_run_into(p, m.in, 5, NULL), TJ_OK);
    cr_expect_eq(atomic_load(&n_allocs) - before, 0, "results left in the context");
    tj_tensor *ref[2];
    cr_assert_eq(tj_graph_run(m.g, m.in, 5, ref), TJ_OK);
    expect_same(out[0], ref[0]);
    expect_same(out[1], ref[1]);
    tj_plan_free(p);
    mlp_teardown(&m);
    tj_set_allocator(NULL);
}

/* d/dx and d/dw of sum(group_norm(batch_norm(x, w, b) in training, 2 groups)):
 * the norms' forward and backward kernels, whose per-channel scratch comes
 * from the storage cache. */
static tj_status norms_grad(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *x = tj_tensor_detach(in[0]), *w = tj_tensor_detach(in[1]);
    tj_tensor_set_requires_grad(x, true);
    tj_tensor_set_requires_grad(w, true);
    tj_tensor *y = tj_group_norm(tj_batch_norm(x, w, in[2], NULL, NULL, true, 0.1, 1e-5), 2, w, in[2], 1e-5);
    tj_tensor *loss = tj_sum(tj_mul(y, in[3]), -1), *wrt[2] = {x, w};
    *n_out = 2;
    return tj_autograd_grad(&loss, 1, NULL, wrt, 2, out);
}

Test(plan, batch_norm_and_group_norm_runs_allocate_nothing)
{
    tj_allocator a = {counting_alloc, counting_free, NULL};
    tj_set_allocator(&a);
    tj_scope *s = tj_scope_begin();
    tj_tensor *in[4] = {random_f32(4, (int64_t[]){8, 4, 5, 5}, 1), random_f32(1, (int64_t[]){4}, 2),
                        random_f32(1, (int64_t[]){4}, 3), random_f32(4, (int64_t[]){8, 4, 5, 5}, 4)};
    tj_graph *g = tj_make_fx(norms_grad, NULL, in, 4, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_expect_eq(tj_graph_count_op(g, TJ_OPS(native_batch_norm_backward)), 1);
    cr_expect_eq(tj_graph_count_op(g, TJ_OPS(native_group_norm_backward)), 1);
    tj_plan *p = compile_ok(g, NULL);
    cr_assert_eq(tj_plan_run_into(p, in, 4, NULL), TJ_OK, "%s", tj_last_error()); /* warm-up */
    long before = atomic_load(&n_allocs);
    for (int i = 0; i < 100; i++) cr_assert_eq(tj_plan_run_into(p, in, 4, NULL), TJ_OK, "%s", tj_last_error());
    cr_expect_eq(atomic_load(&n_allocs) - before, 0, "%ld allocations in 100 runs", atomic_load(&n_allocs) - before);
    tj_plan_free(p);
    tj_graph_free(g);
    tj_scope_end(s);
    tj_set_allocator(NULL);
}

/* Replayed training steps of model `id` on a batch of `batch`, after one
 * warm-up step: no allocation through the hook (kernels that need
 * scratch memory take it from the runtime's cache). */
static void expect_training_steps_allocate_nothing(const char *id, int64_t batch)
{
    tj_allocator a = {counting_alloc, counting_free, NULL};
    tj_set_allocator(&a);
    model m;
    train_state state;
    cr_assert_eq(model_create(model_find(id), 0, &m), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(train_state_init(&m, &state), TJ_OK);
    tj_scope *s = tj_scope_begin();
    tj_graph *g = step_trace(&m, STEP_TRAIN, batch, NULL, TJ_TRACE_FAKE);
    tj_plan *p = compile_ok(g, NULL);
    const model_def *d = m.def;
    int64_t xs[4], ys[4];
    memcpy(xs, d->x_shape, sizeof xs);
    memcpy(ys, d->y_shape, sizeof ys);
    xs[0] = ys[0] = batch;
    tj_tensor *x = d->x_dtype == TJ_INT64 ? tj_tensor_empty(TJ_INT64, d->x_ndim, xs) : random_f32(d->x_ndim, xs, 7);
    tj_tensor *y = tj_tensor_empty(TJ_INT64, d->y_ndim, ys);
    int64_t *yd = tj_tensor_data(y);
    for (int64_t i = 0; i < tj_tensor_numel(y); i++) yd[i] = i * 7 % 10;
    if (d->x_dtype == TJ_INT64)
        for (int64_t i = 0; i < tj_tensor_numel(x); i++) ((int64_t *)tj_tensor_data(x))[i] = i * 13 % 256;
    tj_tensor *in[3 * MODEL_MAX_PARAMS + 2];
    int n = step_inputs(&m, &state, x, y, in);
    /* 100 steps on one thread, then a few on two (OpenMP's spinning makes
     * many steps slow on a loaded machine) */
    int saved = tj_get_num_threads();
    for (int threads = 1; threads <= 2; threads++) {
        int runs = threads == 1 ? 100 : 10;
        tj_set_num_threads(threads);
        cr_assert_eq(tj_plan_run_into(p, in, n, NULL), TJ_OK, "%s", tj_last_error()); /* warm-up */
        long before = atomic_load(&n_allocs);
        for (int i = 0; i < runs; i++) cr_assert_eq(tj_plan_run_into(p, in, n, NULL), TJ_OK, "%s", tj_last_error());
        cr_expect_eq(atomic_load(&n_allocs) - before, 0, "%s: %ld allocations in %d steps on %d threads", id,
                     atomic_load(&n_allocs) - before, runs, threads);
    }
    tj_set_num_threads(saved);
    cr_expect(isfinite(tj_tensor_item_at(tj_plan_context_output(tj_plan_default_context(p), 0), 0)), "the loss");
    tj_plan_free(p);
    tj_graph_free(g);
    tj_scope_end(s);
    train_state_free(&state);
    model_free(&m);
    tj_set_allocator(NULL);
}

Test(plan, gpt_training_steps_allocate_nothing_after_warm_up)
{
    expect_training_steps_allocate_nothing("gpt", 2);
}

Test(plan, cnn_training_steps_allocate_nothing_after_warm_up)
{
    expect_training_steps_allocate_nothing("cnn", 4);
}

/* ---- constant folding ---- */

/* in: x [4]: x + full(2) * arange(4), times full(2) again (the same call) */
static tj_status fn_folds(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    int64_t four = 4;
    tj_tensor *c = tj_mul(tj_full(&four, 1, tj_v_float(2.0), -1), tj_arange(tj_v_int(0), tj_v_int(4), tj_v_int(1), TJ_FLOAT32));
    out[0] = tj_mul(tj_add(in[0], c), tj_full(&four, 1, tj_v_float(2.0), -1));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* in: x [4]: x + rand(4) * full(2) */
static tj_status fn_random(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    int64_t four = 4;
    out[0] = tj_add(in[0], tj_mul(tj_rand(&four, 1, -1), tj_full(&four, 1, tj_v_float(2.0), -1)));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* the mlp's inputs: constants built from full and arange enter the layers */
static tj_status fn_folds_mlp(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    int64_t hid = 32, four = 4;
    tj_tensor *shift = tj_mul(tj_full(&hid, 1, tj_v_float(0.5), -1), tj_arange(tj_v_int(0), tj_v_int(32), tj_v_int(1), TJ_FLOAT32));
    tj_tensor *h = tj_relu(tj_add(tj_linear(in[0], in[1], in[2]), shift));
    out[0] = tj_add(tj_linear(h, in[3], in[4]), tj_full(&four, 1, tj_v_float(0.5), -1));
    out[1] = h;
    *n_out = 2;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(plan, full_and_arange_feeding_an_add_fold_and_match_the_interpreter)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *x = random_f32(1, (int64_t[]){4}, 7);
    tj_graph *g = trace(fn_folds, NULL, &x, 1);
    /* the second full, the first's twin, is folding's to share here (merged
     * as a common subexpression by default, before folding sees it) */
    tj_plan *p = compile_ok(g, &(tj_compile_options){.no_pointwise_fusion = true, .no_common_subexpressions = true});
    tj_plan *q = compile_ok(g, &(tj_compile_options){.no_constant_folding = true, .no_pointwise_fusion = true,
                                                    .no_common_subexpressions = true});
    tj_plan_statistics sp, sq;
    tj_plan_stats(p, &sp);
    tj_plan_stats(q, &sq);
    /* full, arange, their product and the second full (the first's twin) */
    cr_expect_eq(sp.n_folded, 4);
    cr_expect_eq(sp.n_folded_shared, 1);
    cr_expect_eq(sp.n_kernels, 2, "add and the last mul run, got %d kernels", sp.n_kernels);
    cr_expect_eq(sq.n_kernels, 6);
    cr_expect_eq(sq.n_folded, 0);
    expect_plan_matches(g, p, &x, 1);
    expect_plan_matches(g, q, &x, 1);
    tj_tensor *got;
    cr_assert_eq(tj_plan_run(p, &x, 1, &got), TJ_OK, "%s", tj_last_error());
    const float *xs = tj_tensor_data(x);
    for (int i = 0; i < 4; i++) /* (x + 2 i) * 2, exact in float32 */
        cr_expect_eq(tj_tensor_item_at(got, i), (double)((xs[i] + 2.0f * (float)i) * 2.0f));
    tj_plan_free(p);
    tj_plan_free(q);
    tj_graph_free(g);
    tj_scope_end(s);
}

Test(plan, random_operators_are_never_folded)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *x = random_f32(1, (int64_t[]){4}, 7);
    tj_graph *g = trace(fn_random, NULL, &x, 1);
    tj_plan *p = compile_ok(g, &(tj_compile_options){.no_pointwise_fusion = true});
    tj_plan_statistics st = plan_stats(p);
    cr_expect_eq(st.n_folded, 1, "only full folds, got %d", st.n_folded);
    cr_expect_eq(st.n_kernels, 3, "rand, mul and add run, got %d kernels", st.n_kernels);
    /* every run draws anew */
    tj_tensor *a, *b;
    cr_assert_eq(tj_plan_run(p, &x, 1, &a), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj_plan_run(p, &x, 1, &b), TJ_OK, "%s", tj_last_error());
    bool differ = false;
    for (int i = 0; i < 4; i++) differ |= tj_tensor_item_at(a, i) != tj_tensor_item_at(b, i);
    cr_expect(differ, "two runs gave the same random values");
    tj_plan_free(p);
    tj_graph_free(g);
    tj_scope_end(s);
}

/* ---- concurrency ---- */

typedef struct worker {
    tj_plan *p;
    tj_tensor *in[5];
    int n_in;
    tj_tensor *out[2];
    int runs;
    int mismatches;
    tj_status st;
} worker;

static void *worker_main(void *arg)
{
    worker *w = arg;
    tj_plan_context *c = tj_plan_context_new(w->p);
    w->st = c ? TJ_OK : tj_last_status();
    for (int i = 0; i < w->runs && w->st == TJ_OK; i++) w->st = tj_plan_run_ctx_into(c, w->in, w->n_in, w->out);
    tj_plan_context_free(c);
    return NULL;
}

/* Four contexts of one plan of g (the mlp's inputs and output shapes) run
 * at once; each matches the default context's sequential run. */
static void expect_four_threads_match(const tj_graph *g, tj_tensor *const *in)
{
    tj_plan *p = compile_ok(g, NULL);
    worker w[4];
    pthread_t th[4];
    tj_tensor *expected[4][2];
    for (int t = 0; t < 4; t++) {
        w[t] = (worker){.p = p, .n_in = 5, .runs = 200};
        memcpy(w[t].in, in, sizeof w[t].in);
        w[t].in[0] = random_f32(2, (int64_t[]){8, 16}, 100 + t); /* each thread its own batch */
        w[t].out[0] = tj_tensor_empty(TJ_FLOAT32, 2, (int64_t[]){8, 4});
        w[t].out[1] = tj_tensor_empty(TJ_FLOAT32, 2, (int64_t[]){8, 32});
        cr_assert_eq(tj_plan_run(p, w[t].in, 5, expected[t]), TJ_OK); /* sequential, default context */
    }
    for (int t = 0; t < 4; t++) pthread_create(&th[t], NULL, worker_main, &w[t]);
    for (int t = 0; t < 4; t++) pthread_join(th[t], NULL);
    for (int t = 0; t < 4; t++) {
        cr_assert_eq(w[t].st, TJ_OK);
        expect_same(w[t].out[0], expected[t][0]);
        expect_same(w[t].out[1], expected[t][1]);
    }
    tj_plan_free(p);
}

Test(plan, four_threads_on_one_plan_match_sequential_runs)
{
    mlp_case m = mlp_setup();
    expect_four_threads_match(m.g, m.in);
    mlp_teardown(&m);
}

Test(plan, four_threads_share_folded_constants_and_match_sequential_runs)
{
    mlp_case m = mlp_setup();
    tj_graph *g = trace(fn_folds_mlp, NULL, m.in, 5);
    tj_plan *p = compile_ok(g, NULL);
    tj_plan_statistics s = plan_stats(p);
    cr_expect_geq(s.n_folded, 4);
    tj_plan_free(p);
    expect_four_threads_match(g, m.in);
    tj_graph_free(g);
    mlp_teardown(&m);
}

/* A worker of four_threads_stage_...: runs its own context, comparing
 * every run's result (out[0]) with out[1]; counts the runs that differ. */
static void *staging_worker_main(void *arg)
{
    worker *w = arg;
    tj_plan_context *c = tj_plan_context_new(w->p);
    w->st = c ? TJ_OK : tj_last_status();
    size_t bytes = (size_t)tj_tensor_numel(w->out[0]) * sizeof(float);
    for (int i = 0; i < w->runs && w->st == TJ_OK; i++) {
        w->st = tj_plan_run_ctx_into(c, w->in, w->n_in, w->out);
        w->mismatches += memcmp(tj_tensor_data(w->out[0]), tj_tensor_data(w->out[1]), bytes) != 0;
    }
    tj_plan_context_free(c);
    return NULL;
}

/* Each context has its own staging block: four threads running one plan
 * with their own transposed inputs (each staged every run) get the results
 * of sequential runs, every run. */
Test(plan, four_threads_stage_their_own_inputs_and_match_sequential_runs)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *in[3];
    tj_graph *g = trace_linear3d(in, 16, 32, 64); /* 128 KiB copies: a shared block would be overwritten */
    tj_plan *p = compile_ok(g, NULL);
    worker w[4];
    pthread_t th[4];
    for (int t = 0; t < 4; t++) {
        w[t] = (worker){.p = p, .in = {transposed_x(100 + t, 16, 32, 64), in[1], in[2]}, .n_in = 3, .runs = 300};
        w[t].out[0] = tj_tensor_empty(TJ_FLOAT32, 3, (int64_t[]){16, 32, 5});
        w[t].out[1] = tj_tensor_empty(TJ_FLOAT32, 3, (int64_t[]){16, 32, 5});
        cr_assert_eq(tj_plan_run_into(p, w[t].in, 3, &w[t].out[1]), TJ_OK, "%s", tj_last_error()); /* sequential */
    }
    for (int t = 0; t < 4; t++) pthread_create(&th[t], NULL, staging_worker_main, &w[t]);
    for (int t = 0; t < 4; t++) pthread_join(th[t], NULL);
    for (int t = 0; t < 4; t++) {
        cr_assert_eq(w[t].st, TJ_OK);
        cr_expect_eq(w[t].mismatches, 0, "thread %d: %d of %d runs differ", t, w[t].mismatches, w[t].runs);
    }
    tj_plan_free(p);
    tj_graph_free(g);
    tj_scope_end(s);
}


/* ---- a plan that writes a graph constant: one context at a time ---- */

/* buf.add_(x) * 1 with buf captured: %add_ writes %_tensor_constant0 */
static tj_status fn_captured_add_(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    out[0] = tj_mul_scalar(tj_add_(ctx, in[0], tj_v_int(1)), tj_v_int(1));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

static void expect_constant_writer_refused(const char *msg)
{
    cr_expect(strstr(msg, "node %add_ (aten::add_.Tensor) writes graph constant %_tensor_constant0 in place") != NULL,
              "%s", msg);
    cr_expect(strstr(msg, "one context at a time") != NULL, "%s", msg);
}

/* reliab::rerun(x) -> a copy of x, running the plan on rerun.c meanwhile:
 * a second run of the plan while the first is in progress, deterministic */
static struct {
    tj_plan_context *c;
    tj_tensor *in;
    tj_status st;
    char msg[512];
} rerun;

static tj_status rerun_meta(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *x = args[0].u.t;
    outs[0].dtype = tj_tensor_dtype(x);
    outs[0].ndim = tj_tensor_ndim(x);
    memcpy(outs[0].shape, tj_tensor_shape(x), sizeof(int64_t) * (size_t)outs[0].ndim);
    return TJ_OK;
}

static tj_status rerun_kernel(const tj_value *args, tj_tensor *const *outs)
{
    tj_plan_context *c = rerun.c;
    if (c) {
        tj_tensor *out[1];
        rerun.c = NULL; /* a run that goes through runs no third one */
        rerun.st = tj_plan_run_ctx(c, &rerun.in, 1, out);
        snprintf(rerun.msg, sizeof rerun.msg, "%s", rerun.st == TJ_OK ? "" : tj_last_error());
        rerun.c = c;
    }
    const tj_tensor *x = args[0].u.t; /* contiguous float32 here */
    memcpy(tj_tensor_data(outs[0]), tj_tensor_data(x), sizeof(float) * (size_t)tj_tensor_numel(x));
    return TJ_OK;
}

static tj_status fn_captured_add_rerun(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    tj_value a = tj_v_tensor(tj_add_(ctx, in[0], tj_v_int(1))), r;
    tj_status st = tj_call("reliab::rerun", &a, 1, &r);
    out[0] = st == TJ_OK ? r.u.t : NULL;
    *n_out = 1;
    return st;
}

Test(plan, a_second_run_of_a_plan_writing_a_constant_is_refused_while_one_is_in_progress)
{
    if (!tj_op_find("reliab::rerun"))
        cr_assert_not_null(tj_op_register("reliab::rerun(Tensor x) -> Tensor", TJ_OP_PRIMITIVE, rerun_kernel, rerun_meta),
                           "%s", tj_last_error());
    tj_scope *s = tj_scope_begin();
    tj_tensor *buf = tj_zeros((int64_t[]){3}, 1, TJ_FLOAT32), *x = tj_full((int64_t[]){3}, 1, tj_v_float(2), TJ_FLOAT32);
    tj_graph *g = trace(fn_captured_add_rerun, buf, &x, 1); /* writes buf: 2 */
    tj_plan *p = compile_ok(g, NULL);
    tj_plan_context *a = tj_plan_context_new(p);
    rerun.c = tj_plan_context_new(p);
    rerun.in = x;
    cr_assert(a && rerun.c, "%s", tj_last_error());
    tj_tensor *out[1];
    cr_assert_eq(tj_plan_run_ctx(a, &x, 1, out), TJ_OK, "%s", tj_last_error());
    cr_expect_eq(rerun.st, TJ_ERR_UNSUPPORTED, "the run inside the run: %s", tj_status_name(rerun.st));
    expect_constant_writer_refused(rerun.msg);
    cr_expect_eq(tj_tensor_item_at(buf, 0), 4.0, "one run added 2: %g", tj_tensor_item_at(buf, 0));
    cr_expect_eq(tj_tensor_item_at(out[0], 2), 4.0);
    /* after it, the other context runs the plan */
    tj_plan_context *other = rerun.c;
    rerun.c = NULL;
    cr_assert_eq(tj_plan_run_ctx(other, &x, 1, out), TJ_OK, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_item_at(out[0], 1), 6.0);
    tj_plan_context_free(a);
    tj_plan_context_free(other);
    tj_plan_free(p);
    tj_graph_free(g);
    tj_scope_end(s);
}

typedef struct constant_worker {
    tj_plan *p;
    tj_tensor *x, *out;
    pthread_barrier_t *start;
    int runs, ok, refused, other;
    char msg[512];
} constant_worker;

static void *constant_worker_main(void *arg)
{
    constant_worker *w = arg;
    tj_plan_context *c = tj_plan_context_new(w->p);
    pthread_barrier_wait(w->start); /* the four run at once */
    for (int i = 0; c && i < w->runs; i++) {
        tj_status st = tj_plan_run_ctx_into(c, &w->x, 1, &w->out);
        w->ok += st == TJ_OK;
        w->refused += st == TJ_ERR_UNSUPPORTED;
        w->other += st != TJ_OK && st != TJ_ERR_UNSUPPORTED;
        if (st == TJ_ERR_UNSUPPORTED) snprintf(w->msg, sizeof w->msg, "%s", tj_last_error());
    }
    w->other += !c;
    tj_plan_context_free(c);
    return NULL;
}

/* Four threads run a plan writing a captured buffer, each on its own
 * context, starting together: every run either updates the buffer alone or
 * is refused; no update is lost (the buffer ends at 2 per run that went
 * through). CI runs it under ThreadSanitizer too, which
 * checks the flag's ordering; without the refusal it saw no race here (the
 * AVX kernels' 32-byte stores are not instrumented, and whole runs rarely
 * overlap): the test above is the one that fails then. */
#define CW_N 256
Test(plan, four_threads_on_a_plan_writing_a_constant_never_race_on_it)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *buf = tj_zeros((int64_t[]){CW_N}, 1, TJ_FLOAT32);
    tj_tensor *x = tj_full((int64_t[]){CW_N}, 1, tj_v_float(2), TJ_FLOAT32);
    tj_graph *g = trace(fn_captured_add_, buf, &x, 1);
    tj_plan *p = compile_ok(g, NULL);
    constant_worker w[4];
    pthread_t th[4];
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, 4);
    for (int t = 0; t < 4; t++)
        w[t] = (constant_worker){.p = p, .x = x, .out = tj_tensor_empty(TJ_FLOAT32, 1, (int64_t[]){CW_N}),
                                 .start = &start, .runs = 1000};
    for (int t = 0; t < 4; t++) cr_assert_eq(pthread_create(&th[t], NULL, constant_worker_main, &w[t]), 0);
    for (int t = 0; t < 4; t++) pthread_join(th[t], NULL);
    int ok = 0;
    for (int t = 0; t < 4; t++) {
        cr_expect_eq(w[t].other, 0, "thread %d", t);
        cr_expect_eq(w[t].ok + w[t].refused, w[t].runs);
        if (w[t].refused) expect_constant_writer_refused(w[t].msg);
        ok += w[t].ok;
    }
    pthread_barrier_destroy(&start);
    cr_expect_geq(ok, 1);
    for (int i = 0; i < CW_N; i += 15)
        cr_expect_eq(tj_tensor_item_at(buf, i), 2.0 + 2.0 * ok, "element %d: %g after %d runs", i,
                     tj_tensor_item_at(buf, i), ok);
    tj_plan_free(p);
    tj_graph_free(g);
    tj_scope_end(s);
}
/* ---- profiler ---- */

Test(plan, profiler_table_lists_operators_with_throughput)
{
    mlp_case m = mlp_setup();
    tj_plan *p = compile_ok(m.g, NULL);
    tj_plan_set_profiling(p, true);
    tj_tensor *out[2];
    for (int i = 0; i < 3; i++) cr_assert_eq(tj_plan_run(p, m.in, 5, out), TJ_OK);
    char *buf = test_profile_table(p);
    cr_expect(strstr(buf, "Name"), "%s", buf);
    cr_expect(strstr(buf, "aten::addmm"), "%s", buf);
    cr_expect(strstr(buf, "GFLOP/s"), "%s", buf);
    cr_expect(strstr(buf, "GB/s"), "%s", buf);
    cr_expect(strstr(buf, "Runs: 3"), "%s", buf);
    /* one addmm with relu fused into it and one alone per run: a row each */
    static const char *const rows[] = {"\naten::addmm + aten::relu ", "\naten::addmm  "}; /* padded: not the fused row */
    for (int r = 0; r < 2; r++) {
        const char *row = strstr(buf, rows[r]);
        cr_assert_not_null(row, "%s", buf);
        const char *calls = row + strlen(rows[r]);
        cr_expect_eq(atoi(calls + strspn(calls, " ")), 3, "%s", buf);
    }
    free(buf);
    tj_plan_free(p);
    mlp_teardown(&m);
}

Test(plan, profiler_trace_is_chrome_trace_event_json)
{
    mlp_case m = mlp_setup();
    tj_plan *p = compile_ok(m.g, NULL);
    char path[] = "/tmp/tjit_trace_XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    cr_expect_eq(tj_plan_profile_write_trace(p, path), TJ_ERR_INVALID_ARGUMENT, "nothing profiled yet");
    tj_plan_set_profiling(p, true);
    cr_assert_eq(tj_plan_run_into(p, m.in, 5, NULL), TJ_OK);
    cr_assert_eq(tj_plan_profile_write_trace(p, path), TJ_OK, "%s", tj_last_error());
    json_error_t err;
    json_t *root = json_load_file(path, 0, &err);
    cr_assert_not_null(root, "%s at line %d", err.text, err.line);
    json_t *events = json_object_get(root, "traceEvents");
    cr_assert(json_is_array(events));
    tj_plan_statistics st = plan_stats(p);
    int kernels = 0, runs = 0, addmm = 0, fused = 0;
    double last_ts = -1, run_ts = 0, run_end = 0;
    size_t i;
    json_t *ev;
    json_array_foreach(events, i, ev) {
        const char *ph = json_string_value(json_object_get(ev, "ph"));
        const char *cat = json_string_value(json_object_get(ev, "cat"));
        const char *name = json_string_value(json_object_get(ev, "name"));
        cr_assert_not_null(ph);
        cr_assert_not_null(name);
        if (strcmp(ph, "X") != 0) continue;
        double ts = json_number_value(json_object_get(ev, "ts")), dur = json_number_value(json_object_get(ev, "dur"));
        cr_expect_geq(dur, 0);
        cr_expect(json_is_integer(json_object_get(ev, "pid")) && json_is_integer(json_object_get(ev, "tid")));
        if (strcmp(cat, "run") == 0) {
            runs++;
            run_ts = ts;
            run_end = ts + dur;
            continue;
        }
        kernels++;
        cr_expect_geq(ts, last_ts, "kernels in schedule order");
        last_ts = ts;
        addmm += strcmp(name, "aten::addmm") == 0;
        fused += strcmp(name, "aten::addmm + aten::relu") == 0;
        cr_expect_not_null(json_object_get(json_object_get(ev, "args"), "node"));
    }
    cr_expect_eq(runs, 1);
    cr_expect_eq(kernels, st.n_kernels);
    cr_expect_eq(addmm, 1);
    cr_expect_eq(fused, 1);
    cr_expect_geq(last_ts, run_ts);
    cr_expect_leq(last_ts, run_end);
    json_decref(root);
    remove(path);
    tj_plan_free(p);
    mlp_teardown(&m);
}

/* in: w [2, 3], x [2, 3], flag (ctx: with the gradient): sum(as_strided(w,
 * [2, 2], [1, 2], 1) * as_strided(x, [2, 2], [3, 1], 0)) and, with ctx, its
 * gradient in w, which as_strided's formula builds from w's strides and
 * offset (a gradient of w's storage read back with w's geometry). */
static tj_status fn_as_strided_loss(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    tj_tensor *w = ctx ? tj_tensor_detach(in[0]) : in[0];
    if (ctx) tj_tensor_set_requires_grad(w, true);
    tj_tensor *l = tj_sum(tj_mul(tj_as_strided(w, (int64_t[]){2, 2}, (int64_t[]){1, 2}, 2, true, 1),
                                 tj_as_strided(in[1], (int64_t[]){2, 2}, (int64_t[]){3, 1}, 2, true, 0)),
                          -1);
    *n_out = 1;
    if (!ctx) return (out[0] = l) ? TJ_OK : tj_last_status();
    return tj_autograd_grad(&l, 1, NULL, &w, 1, out);
}

/* as_strided's gradient holds for the geometry it was traced with only:
 * the plan and the interpreter refuse w laid out otherwise (they gave a
 * gradient of 2 where eager's is 0), run it so laid out, and a graph with
 * as_strided but no gradient still runs any layout (its storage read as
 * eager's). */
Test(plan, a_traced_as_strided_gradient_refuses_inputs_of_other_strides)
{
    tj_scope *s = tj_scope_begin();
    int with_grad = 1;
    tj_tensor *in[2] = {random_f32(2, (int64_t[]){2, 3}, 7), random_f32(2, (int64_t[]){2, 3}, 8)};
    tj_tensor *base = random_f32(2, (int64_t[]){4, 6}, 9);
    tj_tensor *other[2] = {tj_slice(tj_slice(base, 0, true, 1, true, 3, 1), 1, true, 1, false, 0, 2), in[1]};
    tj_graph *g = trace(fn_as_strided_loss, &with_grad, in, 2);
    tj_plan *p = compile_ok(g, NULL);
    expect_plan_matches(g, p, in, 2);
    tj_tensor *got[1], *eager[1];
    int n_out;
    cr_assert_eq(fn_as_strided_loss(&with_grad, in, 2, eager, &n_out), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj_plan_run(p, in, 2, got), TJ_OK, "%s", tj_last_error());
    expect_same(got[0], eager[0]);
    cr_assert_eq(tj_plan_run(p, other, 2, got), TJ_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(tj_last_error(), "tj_plan_run: input 0 (%arg0_1) has strides [6, 2] and storage offset 7") &&
                  strstr(tj_last_error(), "strides [3, 1] and offset 0") &&
                  strstr(tj_last_error(), "aten::as_strided's gradient"),
              "%s", tj_last_error());
    cr_assert_eq(tj_graph_run(g, other, 2, got), TJ_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(tj_last_error(), "tj_graph_run: input 0 (%arg0_1)"), "%s", tj_last_error());
    tj_plan_free(p);
    tj_graph_free(g);

    tj_graph *fwd = trace(fn_as_strided_loss, NULL, in, 2);
    p = compile_ok(fwd, NULL);
    cr_assert_eq(fn_as_strided_loss(NULL, other, 2, eager, &n_out), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj_plan_run(p, other, 2, got), TJ_OK, "%s", tj_last_error());
    expect_same(got[0], eager[0]);
    tj_plan_free(p);
    tj_graph_free(fwd);
    tj_scope_end(s);
}

/* The plan and the interpreter of g refuse `other` (w laid out otherwise
 * than traced). */
static void expect_bound(tj_graph *g, tj_tensor *const *other, const char *what)
{
    tj_tensor *got[1];
    tj_plan *p = compile_ok(g, NULL);
    cr_expect_eq(tj_plan_run(p, other, 2, got), TJ_ERR_INVALID_ARGUMENT, "%s: plan accepted other strides", what);
    cr_expect_eq(tj_graph_run(g, other, 2, got), TJ_ERR_INVALID_ARGUMENT, "%s: tj_graph_run accepted other strides", what);
    tj_plan_free(p);
}

/* The bind survives tj_graph_decompose (which replays the graph, running
 * no gradient formula), tracing with core decompositions and fake-mode
 * tracing. */
Test(plan, an_as_strided_gradient_stays_bound_through_decompose_and_fake_tracing)
{
    tj_scope *s = tj_scope_begin();
    int with_grad = 1;
    tj_tensor *in[2] = {random_f32(2, (int64_t[]){2, 3}, 7), random_f32(2, (int64_t[]){2, 3}, 8)};
    tj_tensor *base = random_f32(2, (int64_t[]){4, 6}, 9);
    tj_tensor *other[2] = {tj_slice(tj_slice(base, 0, true, 1, true, 3, 1), 1, true, 1, false, 0, 2), in[1]};
    tj_graph *g = trace(fn_as_strided_loss, &with_grad, in, 2);
    tj_decomp_table *core = tj_core_decompositions();
    tj_graph *d = tj_graph_decompose(g, core);
    cr_assert_not_null(d, "%s", tj_last_error());
    expect_bound(d, other, "decomposed");
    tj_graph *traced_core = tj_make_fx(fn_as_strided_loss, &with_grad, in, 2, core, TJ_TRACE_REAL);
    cr_assert_not_null(traced_core, "%s", tj_last_error());
    expect_bound(traced_core, other, "traced with core decompositions");
    tj_graph *fake = tj_make_fx(fn_as_strided_loss, &with_grad, in, 2, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(fake, "%s", tj_last_error());
    expect_bound(fake, other, "fake");
    tj_graph_free(fake);
    tj_graph_free(traced_core);
    tj_graph_free(d);
    tj_graph_free(g);
    tj_decomp_table_free(core);
    tj_scope_end(s);
}

/* in: w, x: the graph of fn_as_strided_loss (ctx as its) traced inside
 * and run on them */
static tj_status fn_nested_as_strided(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    tj_graph *inner = tj_make_fx(fn_as_strided_loss, ctx, in, n, NULL, TJ_TRACE_REAL);
    if (!inner) return tj_last_status();
    *n_out = 1;
    tj_status st = tj_graph_run(inner, in, n, out);
    tj_graph_free(inner);
    return st;
}

/* A make_fx inside the traced function tells the enclosing one too: its
 * graph records the same gradient. */
Test(plan, an_as_strided_gradient_traced_by_a_nested_make_fx_binds_the_outer_graph)
{
    tj_scope *s = tj_scope_begin();
    int with_grad = 1;
    tj_tensor *in[2] = {random_f32(2, (int64_t[]){2, 3}, 7), random_f32(2, (int64_t[]){2, 3}, 8)};
    tj_tensor *base = random_f32(2, (int64_t[]){4, 6}, 9);
    tj_tensor *other[2] = {tj_slice(tj_slice(base, 0, true, 1, true, 3, 1), 1, true, 1, false, 0, 2), in[1]};
    tj_graph *g = trace(fn_nested_as_strided, &with_grad, in, 2);
    expect_bound(g, other, "nested");
    tj_graph_free(g);
    tj_scope_end(s);
}

/* An input traced at storage offset 1: tj_graph_decompose keeps that
 * offset, so the input as traced runs (the eager gradient's bits) and one
 * at offset 0 is refused. */
Test(plan, a_decomposed_as_strided_gradient_keeps_its_inputs_offset)
{
    tj_scope *s = tj_scope_begin();
    int with_grad = 1;
    tj_tensor *wide = random_f32(2, (int64_t[]){2, 4}, 10);
    tj_tensor *in[2] = {tj_slice(wide, 1, true, 1, false, 0, 1), random_f32(2, (int64_t[]){2, 3}, 8)};
    tj_graph *g = trace(fn_as_strided_loss, &with_grad, in, 2);
    tj_decomp_table *core = tj_core_decompositions();
    tj_graph *d = tj_graph_decompose(g, core);
    cr_assert_not_null(d, "%s", tj_last_error());
    tj_tensor *eager[1], *got[1];
    int n_out;
    cr_assert_eq(fn_as_strided_loss(&with_grad, in, 2, eager, &n_out), TJ_OK, "%s", tj_last_error());
    tj_plan *p = compile_ok(d, NULL);
    cr_assert_eq(tj_plan_run(p, in, 2, got), TJ_OK, "%s", tj_last_error());
    expect_same(got[0], eager[0]);
    tj_tensor *packed[2] = {tj_contiguous(in[0]), in[1]};
    cr_expect_eq(tj_plan_run(p, packed, 2, got), TJ_ERR_INVALID_ARGUMENT, "offset 0 accepted");
    tj_plan_free(p);
    tj_graph_free(d);
    tj_graph_free(g);
    tj_decomp_table_free(core);
    tj_scope_end(s);
}

/* The error tj_plan_run gives p on `in`, copied (it must refuse). */
static char *plan_refusal(tj_plan *p, tj_tensor *const *in)
{
    tj_tensor *got[1];
    cr_assert_eq(tj_plan_run(p, in, 2, got), TJ_ERR_INVALID_ARGUMENT, "accepted other strides or offset");
    return strdup(tj_last_error());
}

/* Printed and parsed back, an as_strided gradient graph keeps its input's
 * strides, offset (1: w is a slice) and bind: compiled, it gives the
 * original plan's bits for w as traced and refuses other strides and
 * another offset with the original's very messages, also once the parsed
 * graph is freed (the plan and a decomposition of it keep their own copy
 * of the reason). The JSON export carries offset and bind. */
Test(plan, an_as_strided_gradient_stays_bound_through_text_and_json)
{
    tj_scope *s = tj_scope_begin();
    int with_grad = 1;
    tj_tensor *wide = random_f32(2, (int64_t[]){2, 4}, 10);
    tj_tensor *in[2] = {tj_slice(wide, 1, true, 1, false, 0, 1), random_f32(2, (int64_t[]){2, 3}, 8)};
    tj_tensor *base = random_f32(2, (int64_t[]){4, 6}, 9);
    tj_tensor *strided[2] = {tj_slice(tj_slice(base, 0, true, 1, true, 3, 1), 1, true, 1, false, 0, 2), in[1]};
    tj_tensor *packed[2] = {tj_contiguous(in[0]), in[1]};
    tj_graph *g = trace(fn_as_strided_loss, &with_grad, in, 2);
    char *text = tj_graph_to_string(g);
    cr_expect(strstr(text, "graph(%arg0_1 : f32[2, 3]{4, 1} offset 1 bound \"aten::as_strided's gradient\", "
                           "%arg1_1 : f32[2, 3]):\n"),
              "%s", text);
    tj_graph *parsed = tj_graph_parse(text);
    cr_assert_not_null(parsed, "%s\n%s", tj_last_error(), text);
    char *again = tj_graph_to_string(parsed);
    cr_expect_str_eq(again, text);

    tj_plan *p = compile_ok(g, NULL), *q = compile_ok(parsed, NULL);
    tj_decomp_table *core = tj_core_decompositions();
    tj_graph *d = tj_graph_decompose(parsed, core);
    cr_assert_not_null(d, "%s", tj_last_error());
    tj_graph_free(parsed);
    tj_tensor *want[1], *got[1];
    cr_assert_eq(tj_plan_run(p, in, 2, want), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj_plan_run(q, in, 2, got), TJ_OK, "%s", tj_last_error());
    float bits_want[6], bits_got[6];
    cr_assert_eq(tj_tensor_numel(got[0]), 6);
    cr_assert_eq(tj_tensor_copy_to(want[0], bits_want), TJ_OK);
    cr_assert_eq(tj_tensor_copy_to(got[0], bits_got), TJ_OK);
    cr_expect_eq(memcmp(bits_want, bits_got, sizeof bits_want), 0, "the parsed graph's plan gives other bits");
    tj_tensor *eager[1];
    int n_out;
    cr_assert_eq(fn_as_strided_loss(&with_grad, in, 2, eager, &n_out), TJ_OK, "%s", tj_last_error());
    expect_same(got[0], eager[0]);

    tj_tensor *const *others[2] = {strided, packed};
    for (int k = 0; k < 2; k++) {
        char *original = plan_refusal(p, others[k]), *reparsed = plan_refusal(q, others[k]);
        cr_expect_str_eq(reparsed, original);
        cr_expect(strstr(original, k ? "has strides [3, 1] and storage offset 0" : "has strides [6, 2] and storage offset 7"),
                  "%s", original);
        cr_expect(strstr(original, "the strides [4, 1] and offset 1 it was traced with only (aten::as_strided's gradient"),
                  "%s", original);
        free(original);
        free(reparsed);
    }
    expect_bound(d, strided, "parsed, then decomposed");
    cr_expect(strstr(tj_last_error(), "(aten::as_strided's gradient reads them)"), "%s", tj_last_error());

    char *json = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&json, &len);
    cr_assert_eq(tj_graph_write_json(g, f), TJ_OK, "%s", tj_last_error());
    fclose(f);
    json_error_t jerr;
    json_t *root = json_loads(json, 0, &jerr);
    cr_assert_not_null(root, "%s: %s", jerr.text, json);
    json_t *w = json_array_get(json_object_get(root, "inputs"), 0), *x = json_array_get(json_object_get(root, "inputs"), 1);
    cr_expect_eq(json_integer_value(json_object_get(w, "offset")), 1, "%s", json);
    cr_expect_eq(json_integer_value(json_array_get(json_object_get(w, "strides"), 0)), 4, "%s", json);
    cr_expect_str_eq(json_string_value(json_object_get(w, "geometry_bound")), "aten::as_strided's gradient");
    cr_expect(json_is_integer(json_object_get(x, "offset")) && json_integer_value(json_object_get(x, "offset")) == 0,
              "%s", json);
    cr_expect(json_is_null(json_object_get(x, "geometry_bound")), "%s", json);
    json_decref(root);
    free(json);

    free(again);
    free(text);
    tj_plan_free(q);
    tj_plan_free(p);
    tj_graph_free(d);
    tj_graph_free(g);
    tj_decomp_table_free(core);
    tj_scope_end(s);
}

/* in: w, x; ctx: a graph of fn_as_strided_loss, run on them. */
static tj_status fn_run_graph(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    *n_out = 1;
    return tj_graph_run(ctx, in, n, out);
}

/* A function that runs a bound graph (here one parsed from text, freed
 * before the trace is used) traces to a graph bound the same way: what it
 * records is the gradient built for w's traced geometry. Running an
 * unbound one (no gradient) binds nothing. */
Test(plan, tracing_a_run_of_a_bound_graph_binds_the_traced_graph)
{
    tj_scope *s = tj_scope_begin();
    int with_grad = 1;
    tj_tensor *in[2] = {random_f32(2, (int64_t[]){2, 3}, 7), random_f32(2, (int64_t[]){2, 3}, 8)};
    tj_tensor *base = random_f32(2, (int64_t[]){4, 6}, 9);
    tj_tensor *other[2] = {tj_slice(tj_slice(base, 0, true, 1, true, 3, 1), 1, true, 1, false, 0, 2), in[1]};
    for (int bound = 0; bound < 2; bound++) {
        tj_graph *g = trace(fn_as_strided_loss, bound ? &with_grad : NULL, in, 2);
        char *text = tj_graph_to_string(g);
        tj_graph *parsed = tj_graph_parse(text);
        cr_assert_not_null(parsed, "%s", tj_last_error());
        tj_graph *outer = trace(fn_run_graph, parsed, in, 2);
        tj_graph_free(parsed);
        char *outer_text = tj_graph_to_string(outer);
        cr_expect_eq(strstr(outer_text, "bound \"aten::as_strided's gradient\"") != NULL, bound, "%s", outer_text);
        tj_plan *p = compile_ok(outer, NULL);
        tj_tensor *got[1], *want[1];
        cr_assert_eq(tj_graph_run(g, in, 2, want), TJ_OK, "%s", tj_last_error());
        cr_assert_eq(tj_plan_run(p, in, 2, got), TJ_OK, "%s", tj_last_error());
        expect_same(got[0], want[0]);
        if (bound) {
            cr_expect_eq(tj_plan_run(p, other, 2, got), TJ_ERR_INVALID_ARGUMENT, "the outer plan accepted other strides");
            cr_expect(strstr(tj_last_error(), "(aten::as_strided's gradient reads them)"), "%s", tj_last_error());
        } else {
            cr_assert_eq(tj_graph_run(g, other, 2, want), TJ_OK, "%s", tj_last_error());
            cr_assert_eq(tj_plan_run(p, other, 2, got), TJ_OK, "%s", tj_last_error());
            expect_same(got[0], want[0]);
        }
        tj_plan_free(p);
        free(outer_text);
        free(text);
        tj_graph_free(outer);
        tj_graph_free(g);
    }
    tj_scope_end(s);
}

/* ---- a plan run inside make_fx ---- */

/* in: x [3]: x * x */
static tj_status fn_square(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_mul(in[0], in[0]);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* t's n values, exactly */
static void expect_values(tj_tensor *t, const float *want, int n)
{
    cr_assert_eq(tj_tensor_numel(t), n);
    for (int i = 0; i < n; i++) cr_expect_eq(tj_tensor_item_at(t, i), want[i], "element %d", i);
}

typedef struct plan_inside {
    tj_plan *p;
    bool into;      /* tj_plan_run_into, into a tensor the trace records */
    bool untraced;  /* on a tensor fn makes itself, which the trace holds as a constant */
} plan_inside;

/* in: x [3]: the plan (x * x) on x, or on [1, 2, 3] (untraced), plus 1 */
static tj_status fn_runs_plan(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    const plan_inside *c = ctx;
    (void)n;
    tj_tensor *x = c->untraced ? tj_tensor_from_data(TJ_FLOAT32, 1, (int64_t[]){3}, (float[]){1, 2, 3}) : in[0];
    tj_tensor *r[1] = {c->into ? tj_empty_like(in[0], -1) : NULL};
    tj_status st = c->into ? tj_plan_run_into(c->p, &x, 1, r) : tj_plan_run(c->p, &x, 1, r);
    if (st != TJ_OK) return st;
    out[0] = tj_add_scalar(r[0], tj_v_int(1));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* A plan's steps bypass the dispatcher, so make_fx could only record what
 * they made as a constant, frozen at the traced input's values: the trace
 * used to return such a graph silently. A plan reading or writing a traced
 * tensor is refused, naming it; on a tensor the trace does not follow it
 * runs, as any computation outside the trace. */
Test(plan, a_plan_run_on_a_traced_tensor_inside_make_fx_is_refused)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *x = tj_tensor_from_data(TJ_FLOAT32, 1, (int64_t[]){3}, (float[]){1, -2, 4});
    tj_graph *inner = trace(fn_square, NULL, &x, 1);
    plan_inside c = {compile_ok(inner, NULL), false, false};
    for (int into = 0; into < 2; into++) {
        c.into = into;
        tj_graph *g = tj_make_fx(fn_runs_plan, &c, &x, 1, NULL, TJ_TRACE_REAL);
        cr_expect_null(g, "into %d: the plan's result would be a constant", into);
        cr_expect_eq(tj_last_status(), TJ_ERR_UNSUPPORTED);
        const char *who = into ? "tj_plan_run_into: tj_make_fx is tracing this tensor (%arg0_1)"
                               : "tj_plan_run: tj_make_fx is tracing this tensor (%arg0_1)";
        cr_expect(strstr(tj_last_error(), who) != NULL, "%s", tj_last_error());
        tj_graph_free(g);
    }
    /* outside a trace the same call runs */
    tj_tensor *r[1];
    cr_assert_eq(tj_plan_run(c.p, &x, 1, r), TJ_OK, "%s", tj_last_error());
    expect_values(r[0], (float[]){1, 4, 16}, 3);
    /* on an untraced tensor: a constant, [1, 4, 9] + 1 whatever x is */
    c.into = false;
    c.untraced = true;
    tj_graph *g = trace(fn_runs_plan, &c, &x, 1);
    tj_tensor *y = tj_tensor_from_data(TJ_FLOAT32, 1, (int64_t[]){3}, (float[]){7, 7, 7}), *got[1];
    cr_assert_eq(tj_graph_run(g, &y, 1, got), TJ_OK, "%s", tj_last_error());
    expect_values(got[0], (float[]){2, 5, 10}, 3);
    tj_graph_free(g);
    tj_plan_free(c.p);
    tj_graph_free(inner);
    tj_scope_end(s);
}

/* x [1] -> exp(x expanded to [n]) summed: an arena holding the [n] float32
 * intermediate (loop fusion off, so that it is materialised) */
static tj_status fn_wide_intermediate(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    int64_t size = *(int64_t *)ctx;
    out[0] = tj_sum(tj_exp(tj_expand(in[0], &size, 1)), TJ_DTYPE_NONE);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(plan, an_arena_larger_than_the_memory_available_is_refused_before_it_is_touched)
{
    /* breaker43: `tjit profile gpt --batch 100000` made a 21.4 GiB arena on a
     * 23 GiB machine; malloc succeeded (overcommit) and zeroing it got the
     * process OOM-killed. A meminfo file stands for a small machine here. */
    char path[32];
    test_small_machine(path);
    int64_t size = 20 << 20, one = 1;
    tj_tensor *x = tj_tensor_fake(TJ_FLOAT32, 1, &one);
    tj_graph *g = tj_make_fx(fn_wide_intermediate, &size, &x, 1, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_tensor_release(x);
    tj_compile_options o = {.no_fusion = true};
    tj_plan *p = tj_compile(g, &o);
    cr_assert_not_null(p, "%s", tj_last_error());
    tj_plan_statistics s;
    tj_plan_stats(p, &s);
    cr_assert_geq(s.arena_bytes, (size_t)size * 4);
    tj_tensor *in = tj_tensor_scalar_f32(0.5f), *out = NULL;
    tj_tensor *in1 = tj_view(in, &one, 1);
    cr_expect_eq(tj_plan_run(p, &in1, 1, &out), TJ_ERR_OUT_OF_MEMORY);
    char want[160];
    snprintf(want, sizeof want, "tj_plan_context_new: not enough memory: the plan's arena needs %zu bytes", s.arena_bytes);
    cr_expect(strstr(tj_last_error(), want) != NULL, "%s", tj_last_error());
    cr_expect(strstr(tj_last_error(), "more than 7/8 of the 0.05 GiB available (MemAvailable + SwapFree in /tmp/tjit-meminfo-") != NULL,
              "%s", tj_last_error());
    /* with memory enough the same plan runs */
    tj_debug_set_meminfo_path(NULL);
    unlink(path);
    cr_assert_eq(tj_plan_run(p, &in1, 1, &out), TJ_OK, "%s", tj_last_error());
    cr_expect_float_eq(*(float *)tj_tensor_data(out), (float)size * expf(0.5f), 1e-3f * (float)size);
    tj_tensor_release(out);
    tj_tensor_release(in1);
    tj_tensor_release(in);
    tj_plan_free(p);
    tj_graph_free(g);
}
