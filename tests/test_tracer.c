/* make_fx, the graph text round trip, DOT/JSON, passes and the interpreter. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "tjit/tjit.h"

static void expect_close(tj_tensor *a, tj_tensor *b, double tol)
{
    cr_assert_not_null(a);
    cr_assert_not_null(b);
    cr_assert_eq(tj_tensor_numel(a), tj_tensor_numel(b));
    for (int64_t i = 0; i < tj_tensor_numel(a); i++) {
        double x = tj_tensor_item_at(a, i), y = tj_tensor_item_at(b, i);
        cr_assert(fabs(x - y) <= tol || (isnan(x) && isnan(y)), "element %ld: %g vs %g", (long)i, x, y);
    }
}

static char *roundtrip_ok(const tj_graph *g)
{
    char *t1 = tj_graph_to_string(g);
    tj_graph *g2 = tj_graph_parse(t1);
    cr_assert_not_null(g2, "parse failed: %s\n%s", tj_last_error(), t1);
    char *t2 = tj_graph_to_string(g2);
    cr_expect_str_eq(t2, t1);
    free(t2);
    tj_graph_free(g2);
    return t1;
}

/* ---- traced functions ---- */

static tj_status fn_add_mul(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_mul(tj_add(in[0], in[1]), in[1]);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* Runs g, a trace of fn_add_mul, on x and y and expects exactly the eager
 * (x + y) * y; then releases g, x and y. */
static void expect_add_mul_then_free(tj_graph *g, tj_tensor *x, tj_tensor *y)
{
    tj_tensor *in[2] = {x, y}, *out[1];
    cr_assert_eq(tj_graph_run(g, in, 2, out), TJ_OK, "%s", tj_last_error());
    tj_scope *scope = tj_scope_begin(); /* owns the eager intermediates */
    expect_close(out[0], tj_mul(tj_add(x, y), y), 0);
    tj_scope_end(scope);
    tj_tensor_release(out[0]);
    tj_graph_free(g);
    tj_tensor_release(x);
    tj_tensor_release(y);
}

static tj_status fn_linear_relu(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    tj_tensor **w = ctx; /* weight and bias captured from ctx: graph constants */
    (void)n;
    out[0] = tj_relu(tj_linear(in[0], w[0], w[1]));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

static tj_status fn_layer_norm(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *y, *mean, *rstd;
    int64_t norm[1] = {4};
    tj_status st = tj_native_layer_norm(in[0], norm, 1, in[1], in[2], 1e-5, &y, &mean, &rstd);
    if (st != TJ_OK) return st;
    out[0] = tj_gelu(y, "tanh");
    out[1] = rstd;
    *n_out = 2;
    return out[0] ? TJ_OK : tj_last_status();
}

static tj_status fn_creation_views(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    int64_t shape[2] = {3, 2};
    tj_tensor *z = tj_zeros(shape, 2, -1);
    tj_tensor *r = tj_arange(tj_v_int(0), tj_v_int(6), tj_v_int(1), TJ_FLOAT32);
    tj_tensor *v = tj_view(r, shape, 2);
    out[0] = tj_add(tj_add(tj_t(in[0]), v), z);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(make_fx, records_one_call_node_per_operator_call)
{
    int64_t s[2] = {2, 3};
    tj_tensor *x = test_random_f32(2, s, 1), *y = test_random_f32(2, s, 2);
    tj_tensor *in[2] = {x, y};
    tj_graph *g = tj_make_fx(fn_add_mul, NULL, in, 2, NULL, TJ_TRACE_REAL);
    cr_assert_not_null(g, "%s", tj_last_error());
    char *text = tj_graph_to_string(g);
    cr_expect_str_eq(text, "graph(%arg0_1 : f32[2, 3], %arg1_1 : f32[2, 3]):\n"
                           "    %add = aten.add.Tensor(%arg0_1, %arg1_1)\n"
                           "    %mul = aten.mul.Tensor(%add, %arg1_1)\n"
                           "    return (%mul,)\n");
    free(text);
    cr_expect_eq(tj_graph_num_calls(g), 2);
    cr_expect_eq(tj_graph_num_inputs(g), 2);
    cr_expect_eq(tj_graph_num_outputs(g), 1);
    expect_add_mul_then_free(g, x, y);
}

Test(make_fx, implicit_composites_never_appear_and_captured_tensors_become_constants)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *w[2] = {test_random_f32(2, (int64_t[]){5, 4}, 3), test_random_f32(1, (int64_t[]){5}, 4)};
    tj_tensor *x = test_random_f32(2, (int64_t[]){3, 4}, 5);
    tj_graph *g = tj_make_fx(fn_linear_relu, w, &x, 1, NULL, TJ_TRACE_REAL);
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::linear")), 0);
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::t")), 1);
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::addmm")), 1);
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::relu")), 1);
    char *text = roundtrip_ok(g);
    /* 20 elements: named in the graph, the values after the return line;
     * 5 elements: inline */
    cr_expect(strstr(text, "%_tensor_constant0 : f32[5, 4] = constant(_tensor_constant0)\n") != NULL, "%s", text);
    cr_expect(strstr(text, ",)\n_tensor_constant0 = [") != NULL, "%s", text);
    cr_expect(strstr(text, "%_tensor_constant1 : f32[5] = constant([") != NULL, "%s", text);
    free(text);
    tj_tensor *out[1];
    cr_assert_eq(tj_graph_run(g, &x, 1, out), TJ_OK, "%s", tj_last_error());
    expect_close(out[0], tj_relu(tj_linear(x, w[0], w[1])), 0);
    tj_graph_free(g);
    tj_scope_end(s);
}

/* y = torch.tensor([1., 1., 1., 1.]); y.mul_(x); y.mul_(x); return y.sum() */
static tj_status fn_fresh_mutated(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *y = tj_tensor_from_data(TJ_FLOAT32, 1, (int64_t[]){4}, (float[]){1, 1, 1, 1});
    tj_mul_(y, in[0]);
    tj_mul_(y, in[0]);
    out[0] = tj_sum(y, TJ_DTYPE_NONE);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* y = torch.tensor([1., 2., 3., 4.]); return y * x: nothing writes y */
static tj_status fn_fresh_read(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_mul(tj_tensor_from_data(TJ_FLOAT32, 1, (int64_t[]){4}, (float[]){1, 2, 3, 4}), in[0]);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(make_fx, a_tensor_the_function_makes_and_writes_starts_afresh_in_every_run)
{
    /* torch 1.13's make_fx records torch.tensor(...) as lift_fresh_copy of
     * a constant: both tracing modes give 30.0 on every run of the graph.
     * Before the fix the graph wrote its constant: 354 then 72354 (real
     * mode, whose trace had written it already), 30 then 4890 (fake). */
    tj_scope *s = tj_scope_begin();
    for (int mode = TJ_TRACE_REAL; mode <= TJ_TRACE_FAKE; mode++) {
        tj_tensor *x = tj_tensor_from_data(TJ_FLOAT32, 1, (int64_t[]){4}, (float[]){1, 2, 3, 4});
        tj_graph *g = tj_make_fx(fn_fresh_mutated, NULL, &x, 1, NULL, (tj_tracing_mode)mode);
        cr_assert_not_null(g, "%s", tj_last_error());
        char *text = roundtrip_ok(g);
        cr_expect(strstr(text, "%lift_fresh_copy = aten._to_copy.default(%_tensor_constant0)") != NULL, "%s", text);
        free(text);
        tj_tensor *out[1];
        for (int run = 0; run < 2; run++) {
            cr_assert_eq(tj_graph_run(g, &x, 1, out), TJ_OK, "%s", tj_last_error());
            cr_expect_eq(tj_tensor_item_at(out[0], 0), 30.0, "mode %d, graph run %d: %g", mode, run,
                         tj_tensor_item_at(out[0], 0));
        }
        tj_plan *p = tj_compile(g, NULL);
        cr_assert_not_null(p, "%s", tj_last_error());
        for (int run = 0; run < 2; run++) {
            cr_assert_eq(tj_plan_run(p, &x, 1, out), TJ_OK, "%s", tj_last_error());
            cr_expect_eq(tj_tensor_item_at(out[0], 0), 30.0, "mode %d, plan run %d: %g", mode, run,
                         tj_tensor_item_at(out[0], 0));
        }
        tj_plan_free(p);
        cr_expect_eq(tj_pass_functionalize(g), 2, "%s", tj_last_error());
        cr_assert_eq(tj_graph_run(g, &x, 1, out), TJ_OK, "%s", tj_last_error());
        cr_expect_eq(tj_tensor_item_at(out[0], 0), 30.0);
        tj_graph_free(g);
        /* a made tensor nothing writes is read as the constant itself */
        g = tj_make_fx(fn_fresh_read, NULL, &x, 1, NULL, (tj_tracing_mode)mode);
        cr_assert_not_null(g, "%s", tj_last_error());
        cr_expect_eq(tj_graph_num_calls(g), 1);
        cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::mul.Tensor")), 1);
        cr_assert_eq(tj_graph_run(g, &x, 1, out), TJ_OK, "%s", tj_last_error());
        cr_expect_eq(tj_tensor_item_at(out[0], 3), 16.0);
        tj_graph_free(g);
    }
    tj_scope_end(s);
}

/* buf.add_(x); return buf * 1, with buf captured (made by the caller) */
static tj_status fn_captured_add_(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    tj_tensor *buf = ctx;
    out[0] = tj_mul_scalar(tj_add_(buf, in[0], tj_v_int(1)), tj_v_int(1));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(make_fx, a_captured_tensor_written_in_place_is_a_constant_held_by_reference)
{
    /* torch 1.13 (/usr/bin/python3): buf = torch.zeros(3);
     * gm = make_fx(lambda x: buf.add_(x) * 1)(torch.full((3,), 2.)); the
     * trace writes buf (2), gm._tensor_constant0 is buf, and three runs of
     * gm give 4, 6, 8, buf following. Plans hold it alike. */
    static const double runs[3] = {4, 6, 8};
    tj_scope *s = tj_scope_begin();
    tj_tensor *x = tj_full((int64_t[]){3}, 1, tj_v_float(2), TJ_FLOAT32);
    for (int replay = 0; replay < 2; replay++) {
        tj_tensor *buf = tj_zeros((int64_t[]){3}, 1, TJ_FLOAT32);
        tj_graph *g = tj_make_fx(fn_captured_add_, buf, &x, 1, NULL, TJ_TRACE_REAL);
        cr_assert_not_null(g, "%s", tj_last_error());
        cr_expect_eq(tj_tensor_item_at(buf, 0), 2.0, "the trace runs add_ on buf: %g", tj_tensor_item_at(buf, 0));
        char *text = tj_graph_to_string(g);
        cr_expect(strstr(text, "%add_ = aten.add_.Tensor(%_tensor_constant0, %arg0_1)") != NULL, "%s", text);
        cr_expect(strstr(text, "_to_copy") == NULL, "%s", text);
        free(text);
        tj_plan *p = replay ? tj_compile(g, NULL) : NULL;
        cr_assert(!replay || p, "%s", tj_last_error());
        for (int run = 0; run < 3; run++) {
            tj_tensor *out[1];
            tj_status st = p ? tj_plan_run(p, &x, 1, out) : tj_graph_run(g, &x, 1, out);
            cr_assert_eq(st, TJ_OK, "%s", tj_last_error());
            for (int i = 0; i < 3; i++) {
                cr_expect_eq(tj_tensor_item_at(out[0], i), runs[run], "%s run %d: %g", p ? "plan" : "graph", run,
                             tj_tensor_item_at(out[0], i));
                cr_expect_eq(tj_tensor_item_at(buf, i), runs[run], "%s run %d: buf %g", p ? "plan" : "graph", run,
                             tj_tensor_item_at(buf, i));
            }
        }
        tj_plan_free(p);
        tj_graph_free(g);
    }
    tj_scope_end(s);
}

Test(make_fx, multi_output_kwargs_and_views_round_trip_through_text)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *in[3] = {test_random_f32(2, (int64_t[]){3, 4}, 6), test_random_f32(1, (int64_t[]){4}, 7),
                        test_random_f32(1, (int64_t[]){4}, 8)};
    tj_graph *g = tj_make_fx(fn_layer_norm, NULL, in, 3, NULL, TJ_TRACE_REAL);
    cr_assert_not_null(g, "%s", tj_last_error());
    char *text = roundtrip_ok(g);
    cr_expect(strstr(text, "%getitem, %getitem_1, %getitem_2 = aten.native_layer_norm.default(%arg0_1, [4], %arg1_1, %arg2_1, 1e-05)") != NULL, "%s", text);
    cr_expect(strstr(text, "aten.gelu.default(%getitem, approximate = 'tanh')") != NULL, "%s", text);
    free(text);
    tj_graph_free(g);

    tj_tensor *x = test_random_f32(2, (int64_t[]){2, 3}, 9);
    g = tj_make_fx(fn_creation_views, NULL, &x, 1, NULL, TJ_TRACE_REAL);
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::zeros")), 1);
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::arange.start_step")), 1);
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::view")), 1);
    free(roundtrip_ok(g));
    tj_tensor *out[1], *ref[1];
    cr_assert_eq(tj_graph_run(g, &x, 1, out), TJ_OK, "%s", tj_last_error());
    int n = 1;
    cr_assert_eq(fn_creation_views(NULL, &x, 1, ref, &n), TJ_OK);
    expect_close(out[0], ref[0], 0);
    tj_graph_free(g);
    tj_scope_end(s);
}

Test(make_fx, fake_mode_traces_a_huge_matmul_without_data)
{
    int64_t shape[2] = {100000, 100000};
    tj_tensor *a = tj_tensor_fake(TJ_FLOAT32, 2, shape), *b = tj_tensor_fake(TJ_FLOAT32, 2, shape);
    tj_tensor *in[2] = {a, b};
    tj_graph *g = tj_make_fx(fn_add_mul, NULL, in, 2, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_graph_free(g);
    static const char *mm_text = "graph(%a : f32[100000, 100000], %b : f32[100000, 100000]):\n"
                                 "    %mm = aten.mm.default(%a, %b)\n"
                                 "    return (%mm,)\n";
    g = tj_graph_parse(mm_text);
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_graph_free(g);
    tj_tensor_release(a);
    tj_tensor_release(b);
}

Test(make_fx, real_tensors_traced_in_fake_mode_lend_only_their_shapes)
{
    int64_t s[1] = {4};
    tj_tensor *x = test_random_f32(1, s, 10), *y = test_random_f32(1, s, 11);
    tj_tensor *in[2] = {x, y};
    tj_graph *g = tj_make_fx(fn_add_mul, NULL, in, 2, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    expect_add_mul_then_free(g, x, y);
}

/* d/dx sum(x * x) through tj_backward on the input itself: the function
 * differentiates with respect to its input, as a PyTorch training step
 * whose parameters require grad does. */
static tj_status fn_grad_of_square(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    tj_status st = tj_backward(tj_sum(tj_mul(in[0], in[0]), -1), NULL);
    if (st != TJ_OK) return st;
    out[0] = tj_tensor_grad(in[0]);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_error(TJ_ERR_INVALID_ARGUMENT, "no gradient");
}

Test(make_fx, fake_mode_keeps_the_inputs_requires_grad)
{
    float d[3] = {1.5f, -2.0f, 0.25f};
    tj_tensor *w = test_f32(1, (int64_t[]){3}, d);
    cr_assert_eq(tj_tensor_set_requires_grad(w, true), TJ_OK);
    tj_graph *real = tj_make_fx(fn_grad_of_square, NULL, &w, 1, NULL, TJ_TRACE_REAL);
    cr_assert_not_null(real, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_set_grad(w, NULL), TJ_OK);
    tj_graph *fake = tj_make_fx(fn_grad_of_square, NULL, &w, 1, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(fake, "%s", tj_last_error());
    cr_expect_null(tj_tensor_grad(w), "a fake trace accumulates into its fake inputs only");
    char *rt = tj_graph_to_string(real), *ft = tj_graph_to_string(fake);
    cr_expect_str_eq(ft, rt);
    tj_tensor *x = test_f32(1, (int64_t[]){3}, d), *g = NULL;
    cr_assert_eq(tj_graph_run(fake, &x, 1, &g), TJ_OK, "%s", tj_last_error());
    double want[3] = {3.0, -4.0, 0.5};
    test_expect_close(g, want, 3, 0, 0);
    tj_tensor_release(g);
    tj_tensor_release(x);
    tj_tensor_release(w);
    free(rt);
    free(ft);
    tj_graph_free(real);
    tj_graph_free(fake);
}

/* sum(x * w) through tj_backward, with w a module's parameter captured in
 * ctx, not an input of the trace */
static tj_status fn_backward_into_captured(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    out[0] = tj_sum(tj_mul(in[0], ctx), -1);
    *n_out = 1;
    return out[0] ? tj_backward(out[0], NULL) : tj_last_status();
}

/* A fake .grad on a real parameter made every later eager step do nothing
 * (tj_add_ into it, the optimiser's update from it); leaving .grad alone
 * would let the traced function read a stale or missing one. A real-mode
 * trace runs the step on the tensors: their .grad gets the values. */
Test(make_fx, fake_mode_refuses_a_gradient_for_a_captured_real_tensor)
{
    tj_tensor *w = test_f32(1, (int64_t[]){3}, (float[]){1, 2, 3});
    tj_tensor *x = test_f32(1, (int64_t[]){3}, (float[]){0.5f, -1, 4});
    cr_assert_eq(tj_tensor_set_requires_grad(w, true), TJ_OK);
    const char *why = "the gradient of a real tensor (f32[3]) is fake";
    test_expect_error(tj_make_fx(fn_backward_into_captured, w, &x, 1, NULL, TJ_TRACE_FAKE), TJ_ERR_INVALID_ARGUMENT,
                      "tj_backward", why);
    cr_expect_null(tj_tensor_grad(w));
    /* nor is one added to a real .grad from eager training */
    tj_tensor *ones = test_f32(1, (int64_t[]){3}, (float[]){1, 1, 1});
    cr_assert_eq(tj_tensor_set_grad(w, ones), TJ_OK);
    test_expect_error(tj_make_fx(fn_backward_into_captured, w, &x, 1, NULL, TJ_TRACE_FAKE), TJ_ERR_INVALID_ARGUMENT,
                      "tj_backward", why);
    test_expect_close(tj_tensor_grad(w), (double[]){1, 1, 1}, 3, 0, 0);
    cr_assert_eq(tj_tensor_set_grad(w, NULL), TJ_OK);
    /* nor set by hand */
    tj_tensor *f = tj_tensor_fake(TJ_FLOAT32, 1, (int64_t[]){3});
    cr_expect_eq(tj_tensor_set_grad(w, f), TJ_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(tj_last_error(), "tj_tensor_set_grad: a fake grad for a real tensor"), "%s", tj_last_error());
    cr_expect_null(tj_tensor_grad(w));
    /* as an input, its fake copy takes the gradient */
    tj_graph *g = tj_make_fx(fn_grad_of_square, NULL, &w, 1, NULL, TJ_TRACE_FAKE);
    cr_expect_not_null(g, "%s", tj_last_error());
    tj_graph_free(g);
    /* real mode: w.grad = x, as eagerly */
    g = tj_make_fx(fn_backward_into_captured, w, &x, 1, NULL, TJ_TRACE_REAL);
    cr_assert_not_null(g, "%s", tj_last_error());
    test_expect_close(tj_tensor_grad(w), (double[]){0.5, -1, 4}, 3, 0, 0);
    tj_graph_free(g);
    tj_tensor_release(f);
    tj_tensor_release(ones);
    tj_tensor_release(x);
    tj_tensor_release(w);
}

/* relu(x) when x[0] > 0, else neg(x): a branch on a value */
static tj_status fn_branch_on_value(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_tensor_item_at(in[0], 0) > 0 ? tj_relu(in[0]) : tj_neg(in[0]);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* PyTorch raises DataDependentOutputException; the value read in fake mode
 * (nan) would otherwise pick the branch silently. */
Test(make_fx, fake_mode_refuses_a_function_that_reads_values)
{
    tj_tensor *x = test_f32(1, (int64_t[]){2}, (float[]){1, -1});
    tj_graph *fake = tj_make_fx(fn_branch_on_value, NULL, &x, 1, NULL, TJ_TRACE_FAKE);
    cr_expect_null(fake);
    cr_expect_eq(tj_last_status(), TJ_ERR_UNSUPPORTED);
    cr_expect(strstr(tj_last_error(), "called tj_tensor_item_at on a fake tensor"), "%s", tj_last_error());
    tj_graph_free(fake);
    tj_graph *real = tj_make_fx(fn_branch_on_value, NULL, &x, 1, NULL, TJ_TRACE_REAL);
    cr_assert_not_null(real, "%s", tj_last_error());
    cr_expect_eq(tj_graph_count_op(real, tj_op_find("aten::relu")), 1);
    tj_graph_free(real);
    /* the read is forgotten once the trace ends: the next fake trace is clean */
    tj_graph *ok = tj_make_fx(fn_add_mul, NULL, (tj_tensor *[]){x, x}, 2, NULL, TJ_TRACE_FAKE);
    cr_expect_not_null(ok, "%s", tj_last_error());
    tj_graph_free(ok);
    tj_tensor_release(x);
}

/* exp(x), then a failed check of the function's own, as user code writes
 * it: a status returned without tj_error */
static tj_status fn_own_check_fails(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    out[0] = tj_exp(in[0]);
    *n_out = 1;
    if (ctx) tj_exp(NULL); /* a failed call with an error of its own */
    return TJ_ERR_SHAPE;
}

Test(make_fx, a_status_returned_without_an_error_is_recorded)
{
    tj_tensor *x = test_f32(1, (int64_t[]){2}, (float[]){1, 2});
    for (int fake = 0; fake < 2; fake++) {
        tj_tracing_mode mode = fake ? TJ_TRACE_FAKE : TJ_TRACE_REAL;
        /* an earlier call's error of the same status is not taken for fn's */
        tj_error(TJ_ERR_SHAPE, "an earlier error");
        test_expect_error(tj_make_fx(fn_own_check_fails, NULL, &x, 1, NULL, mode), TJ_ERR_SHAPE, "tj_make_fx",
                          "the traced function returned shape error (2) without recording an error");
        /* fn's status wins over the failed call's, whose message is kept */
        test_expect_error(tj_make_fx(fn_own_check_fails, x, &x, 1, NULL, mode), TJ_ERR_SHAPE, "tj_make_fx",
                          "the traced function returned shape error (2); the last error (invalid argument): aten::exp");
    }
    tj_tensor_release(x);
}

static tj_status fn_index_select(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_index_select(in[0], 0, in[1]);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* A composite decomposed while tracing fails naming the operator the
 * function called, then the primitive of its decomposition that refused, as
 * eager mode names an implicit composite. */
Test(make_fx, a_failing_decomposition_names_the_operator_called_then_its_cause)
{
    tj_tensor *in[2] = {test_f32(1, (int64_t[]){4}, (float[]){1, 2, 3, 4}), test_i64(1, (int64_t[]){2}, (int64_t[]){1, 9})};
    tj_decomp_table *core = tj_core_decompositions();
    test_expect_error(tj_make_fx(fn_index_select, NULL, in, 2, core, TJ_TRACE_REAL), TJ_ERR_INDEX,
                      "aten::index_select: aten::gather", "index 9 is out of bounds for dimension 0 with size 4");
    /* without the table the kernel's own check names it alone */
    test_expect_error(tj_make_fx(fn_index_select, NULL, in, 2, NULL, TJ_TRACE_REAL), TJ_ERR_INDEX,
                      "aten::index_select", "index 9 is out of bounds");
    tj_decomp_table_free(core);
    tj_tensor_release(in[0]);
    tj_tensor_release(in[1]);
}

/* ---- decomposition tables during tracing ---- */

static tj_status add_as_sub_neg(const tj_value *args, tj_value *outs)
{
    /* add(x, y, alpha) == sub(x, neg(y), alpha) */
    tj_tensor *r = tj_sub_alpha(args[0].u.t, tj_neg(args[1].u.t), args[2]);
    outs[0] = tj_v_tensor(r);
    return r ? TJ_OK : tj_last_status();
}

static tj_status sub_as_add(const tj_value *args, tj_value *outs)
{
    tj_tensor *r = tj_add_alpha(args[0].u.t, tj_neg(args[1].u.t), args[2]);
    outs[0] = tj_v_tensor(r);
    return r ? TJ_OK : tj_last_status();
}

Test(decomp_table, a_table_entry_replaces_the_operator_while_tracing)
{
    tj_decomp_table *t = tj_decomp_table_new();
    cr_assert_eq(tj_decomp_table_add_fn(t, tj_op_find("aten::add.Tensor"), add_as_sub_neg, "add_as_sub_neg"), TJ_OK);
    int64_t s[1] = {3};
    tj_tensor *x = test_random_f32(1, s, 12), *y = test_random_f32(1, s, 13);
    tj_tensor *in[2] = {x, y};
    tj_graph *g = tj_make_fx(fn_add_mul, NULL, in, 2, t, TJ_TRACE_REAL);
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::add.Tensor")), 0);
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::neg")), 1);
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::sub.Tensor")), 1);
    tj_tensor *out[1];
    cr_assert_eq(tj_graph_run(g, in, 2, out), TJ_OK);
    tj_tensor *ref = tj_mul(tj_add(x, y), y);
    expect_close(out[0], ref, 1e-6);
    tj_tensor_release(ref);
    tj_tensor_release(out[0]);
    tj_graph_free(g);
    tj_decomp_table_free(t);
    tj_tensor_release(x);
    tj_tensor_release(y);
}

Test(decomp_table, a_cycle_is_reported_with_its_chain)
{
    tj_decomp_table *t = tj_decomp_table_new();
    tj_decomp_table_add_fn(t, tj_op_find("aten::add.Tensor"), add_as_sub_neg, "add_as_sub_neg");
    tj_decomp_table_add_fn(t, tj_op_find("aten::sub.Tensor"), sub_as_add, "sub_as_add");
    int64_t s[1] = {3};
    tj_tensor *x = test_random_f32(1, s, 14), *y = test_random_f32(1, s, 15);
    tj_tensor *in[2] = {x, y};
    tj_graph *g = tj_make_fx(fn_add_mul, NULL, in, 2, t, TJ_TRACE_REAL);
    cr_expect_null(g);
    cr_expect_eq(tj_last_status(), TJ_ERR_CYCLE);
    cr_expect(strstr(tj_last_error(), "aten::add.Tensor -> aten::sub.Tensor -> aten::add.Tensor") != NULL, "%s",
              tj_last_error());
    tj_decomp_table_free(t);
    tj_tensor_release(x);
    tj_tensor_release(y);
}

/* The outer trace records add; a trace nested inside it uses its own table. */
static tj_status fn_nested(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    tj_graph **inner = ctx;
    tj_decomp_table *empty = tj_get_decompositions(NULL, 0);
    *inner = tj_make_fx(fn_add_mul, NULL, in, n, empty, TJ_TRACE_REAL);
    tj_decomp_table_free(empty);
    return fn_add_mul(NULL, in, n, out, n_out);
}

Test(decomp_table, nested_traces_use_the_table_each_was_given)
{
    tj_decomp_table *t = tj_decomp_table_new();
    tj_decomp_table_add_fn(t, tj_op_find("aten::add.Tensor"), add_as_sub_neg, "add_as_sub_neg");
    int64_t s[1] = {3};
    tj_tensor *x = test_random_f32(1, s, 16), *y = test_random_f32(1, s, 17);
    tj_tensor *in[2] = {x, y};
    tj_graph *inner = NULL;
    tj_graph *outer = tj_make_fx(fn_nested, &inner, in, 2, t, TJ_TRACE_REAL);
    cr_assert_not_null(outer, "%s", tj_last_error());
    cr_assert_not_null(inner);
    cr_expect_eq(tj_graph_count_op(outer, tj_op_find("aten::add.Tensor")), 0);
    cr_expect_eq(tj_graph_count_op(inner, tj_op_find("aten::add.Tensor")), 1);
    tj_graph_free(inner);
    tj_graph_free(outer);
    tj_decomp_table_free(t);
    tj_tensor_release(x);
    tj_tensor_release(y);
}

/* ---- text forms ---- */

Test(graph_text, literals_keep_their_exact_bits_and_kinds)
{
    const char *text = "graph(%x : i64[4], %f : f32[2, 2]{1, 2}):\n"
                       "    %add = aten.add.Scalar(%x, 2)\n"
                       "    %add_1 = aten.add.Scalar(%x, 2.0)\n"
                       "    %mul = aten.mul.Scalar(%f, 0.1)\n"
                       "    %clamp = aten.clamp.default(%f, -inf, nan)\n"
                       "    %sum_1 = aten.sum.dim_IntList(%f, [0, -1], True, dtype = torch.float64)\n"
                       "    return (%add, %add_1, %mul, %clamp, %sum_1)\n";
    test_expect_round_trip(text);
}

/* Floats are written as Python's repr writes them, which FX's text shows:
 * print([10.0, 100.0, 1e15, 1e16, 0.0001, 0.00001, 1.5e300, 1e-320, -0.0,
 * 123.456, 9007199254740993.0, 1e22]) in Python 3 gives the list below
 * (%g wrote 10.0 as 1e+01). */
Test(graph_text, floats_are_written_as_python_writes_them)
{
    const char *text = "graph(%x : f64[3]):\n"
                       "    %mul = aten.mul.Scalar(%x, 10.0)\n"
                       "    %add = aten.add.Scalar(%mul, 1000000000000000.0)\n"
                       "    %clamp = aten.clamp.default(%add, -1e+16, 0.0001)\n"
                       "    %_tensor_constant0 : f64[12] = constant([10.0, 100.0, 1000000000000000.0, 1e+16, 0.0001, "
                       "1e-05, 1.5e+300, 1e-320, -0.0, 123.456, 9007199254740992.0, 1e+22])\n"
                       "    return (%clamp, %_tensor_constant0)\n";
    test_expect_round_trip(text);
}

/* A placeholder's storage offset is written where it is not 0; a bound
 * one (the graph holds for its geometry only) writes strides, size-1 dims'
 * included, and offset always, and its reason: the text reads back to the
 * same geometry and binds. */
Test(graph_text, offsets_and_geometry_binds_round_trip)
{
    const char *text = "graph(%w : f32[2, 2]{1, 2} offset 3 bound \"aten::as_strided's gradient\", %x : f32[2, 2] offset 1, "
                       "%y : f32[1, 2]{7, 1} offset 0 bound \"r\"):\n"
                       "    %add = aten.add.Tensor(%w, %x)\n"
                       "    %add_1 = aten.add.Tensor(%add, %y)\n"
                       "    return (%add_1,)\n";
    test_expect_round_trip(text);
    /* a bind read without strides or offset: row-major at offset 0, so written */
    tj_graph *g = tj_graph_parse("graph(%w : f32[2, 2] bound \"r\"):\n    return (%w,)\n");
    cr_assert_not_null(g, "%s", tj_last_error());
    char *again = tj_graph_to_string(g);
    cr_expect_str_eq(again, "graph(%w : f32[2, 2]{2, 1} offset 0 bound \"r\"):\n    return (%w,)\n");
    free(again);
    tj_graph_free(g);
}

Test(graph_text, parse_errors_name_line_and_column)
{
    static const struct {
        const char *text, *needle;
    } bad[] = {
        {"graph(%x : f32[2]):\n    %y = aten.nope.default(%x)\n    return (%y,)\n", "line 2"},
        {"graph(%x : f32[2]):\n    %y = aten.neg.default(%z)\n    return (%y,)\n", "undefined value %z"},
        {"graph(%x : f32[2]):\n    %y = aten.neg.default(%x, %x)\n    return (%y,)\n", "too many arguments"},
        {"graph(%x : f32[2]):\n    %y = aten.add.Tensor(%x)\n    return (%y,)\n", "missing"},
        {"graph(%x : f32[2]):\n    %y = aten.neg.default(%x)\n", "missing 'return'"},
        {"graph(%x : q32[2]):\n    return (%x,)\n", "line 1, column 12"},
        {"graph(%x : f32[2], %x : f32[2]):\n    return (%x,)\n", "defined twice"},
        {"graph(%x : f32[2]):\n    %y = aten.add.Tensor(%x, %x\n    return (%y,)\n", "line 2"},
        {"", "expected 'graph'"},
        {"graph(%x : f32[-2]):\n    return (%x,)\n", "negative"},
        {"graph(%x : f32[2]):\n    %c : f32[20] = constant(c)\n    return (%x,)\n", "missing the values of constant %c"},
        {"graph(%x : f32[2]):\n    %c : f32[2] = constant(d)\n    return (%x,)\nd = [1.0, 2.0]\n",
         "constant(d): the values of %c are written constant([...]) or constant(c)"},
        {"graph(%x : f32[2]):\n    return (%x,)\nx = [1.0, 2.0]\n",
         "line 3, column 1: values for %x, which is no constant written 'constant(x)'"},
        {"graph(%x : f32[2]):\n    return (%x,)\nzz = [1.0, 2.0]\n", "line 3, column 1: values for %zz, which is not defined"},
        {"graph(%x : f32[2]):\n    %c : f32[2] = constant([1.0, 2.0])\n    return (%x,)\nc = [1.0, 2.0]\n",
         "line 4, column 1: values for %c, which is no constant written 'constant(c)'"},
        {"graph(%x : f32[2]):\n    %c : f32[2] = constant(c)\n    return (%x,)\nc = [1.0, 2.0]\nc = [1.0, 2.0]\n",
         "line 5, column 1: the values of constant %c are given twice"},
        /* the first constant left without values, whatever came before */
        {"graph(%x : f32[2]):\n    %a : f32[2] = constant(a)\n    %b : f32[2] = constant(b)\n"
         "    %c : f32[2] = constant(c)\n    return (%x,)\na = [1.0, 2.0]\n",
         "missing the values of constant %b"},
        {"graph(%x : f32[2]):\n    %c : f32[3] = constant(c)\n    return (%x,)\nc = [1.0, 2.0]\n", "line 4"},
        /* refused before allocating 16 GB for values the text cannot hold */
        {"graph(%x : f32[2]):\n    %c : f32[4000000000] = constant(c)\n    return (%x,)\n",
         "line 2, column 37: the constant has more elements than the rest of the text"},
        {"graph(%x : f32[2]):\n    %c : f32[65536, 65536, 65536] = constant([1.0])\n    return (%x,)\n",
         "more elements than the rest of the text"},
        /* a count past the text multiplied on past INT64_MAX (UBSan; a fuzzing finding) */
        {"graph(%x : f32[2]):\n    %c : f32[64, 3] = constant([1.0])\n    return (%x,)\n",
         "more elements than the rest of the text"},
        {"graph(%x : f32[2]):\n    return (%x,) x\n", "end of the line after 'return'"},
        /* a name the parser cannot hold says so, not "expected a placeholder" */
        {"graph(%nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn : f32[2]):\n    return (%x,)\n",
         "line 1, column 136: a name of 128 characters is longer than the 127 allowed"},
        {"graph(%x : f32[2]):\n    %nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn = aten.neg.default(%x)\n    return (%x,)\n",
         "line 2, column 134: a name of 128 characters is longer than the 127 allowed"},
        {"graph(%x : f32[2]):\n    %y = aten.neg.default(%nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn)\n    return (%y,)\n",
         "a name of 128 characters is longer than the 127 allowed"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        tj_graph *g = tj_graph_parse(bad[i].text);
        cr_expect_null(g, "case %zu parsed", i);
        tj_graph_free(g);
        cr_expect_eq(tj_last_status(), TJ_ERR_PARSE, "case %zu: %s", i, tj_last_error());
        cr_expect(strstr(tj_last_error(), bad[i].needle) != NULL, "case %zu: '%s' lacks '%s'", i, tj_last_error(),
                  bad[i].needle);
    }
}

/* A dim of 0 empties a constant whatever its other dims: not refused as
 * more elements than the text holds. */
Test(graph_text, a_constant_with_a_zero_dim_after_a_huge_one_is_empty)
{
    tj_graph *g = tj_graph_parse("graph(%x : f32[2]):\n    %c : f32[4000000000, 0] = constant([])\n    return (%c,)\n");
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_graph_free(g);
}

Test(graph_text, dot_and_json_exports_describe_every_node)
{
    tj_graph *g = tj_graph_parse("graph(%x : f32[2]):\n    %neg = aten.neg.default(%x)\n    return (%neg,)\n");
    cr_assert_not_null(g, "%s", tj_last_error());
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert_eq(tj_graph_write_dot(g, f), TJ_OK);
    fclose(f);
    cr_expect(strstr(buf, "n1 [label=\"neg\\naten.neg.default\\nf32[2]\"];") != NULL, "%s", buf);
    cr_expect(strstr(buf, "n0 -> n1;") != NULL, "%s", buf);
    if (system("command -v dot >/dev/null 2>&1") == 0) {
        FILE *p = popen("dot -Tsvg -o /dev/null", "w");
        fputs(buf, p);
        cr_expect_eq(pclose(p), 0, "dot rejected the graph");
    }
    free(buf);
    buf = test_graph_json(g);
    cr_expect(strstr(buf, "\"op\": \"aten::neg\"") != NULL, "%s", buf);
    free(buf);
    tj_graph_free(g);
}

Test(graph_text, dot_shows_a_placeholders_strides_offset_and_bound)
{
    /* the DOT labels gave the shape alone: a graph bound to its inputs'
     * geometry looked like any other */
    tj_graph *g = tj_graph_parse("graph(%x : f32[2, 2]{1, 2} offset 1, %y : f32[2, 2]{2, 1} offset 0 bound \"as\\it\"):\n"
                                 "    %add = aten.add.Tensor(%x, %y)\n"
                                 "    return (%add,)\n");
    cr_assert_not_null(g, "%s", tj_last_error());
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert_eq(tj_graph_write_dot(g, f), TJ_OK);
    fclose(f);
    static const char *const want[] = {"n0 [label=\"x\\nplaceholder\\nf32[2, 2]{1, 2} offset 1\", style=rounded];",
                                       "n1 [label=\"y\\nplaceholder\\nf32[2, 2]\\nbound: as\\\\it\", style=rounded];",
                                       "n2 [label=\"add\\naten.add.Tensor\\nf32[2, 2]\"];"};
    for (int k = 0; k < 3; k++) cr_expect(strstr(buf, want[k]) != NULL, "%s lacks %s", buf, want[k]);
    if (system("command -v dot >/dev/null 2>&1") == 0) {
        FILE *p = popen("dot -Tsvg -o /dev/null", "w");
        fputs(buf, p);
        cr_expect_eq(pclose(p), 0, "dot rejected the graph");
    }
    free(buf);
    tj_graph_free(g);
}

Test(graph_text, json_export_carries_constant_values)
{
    tj_graph *g = tj_graph_parse("graph(%x : f32[3]):\n"
                                 "    %c : f32[3] = constant([1.5, -inf, 0.25])\n"
                                 "    %i : i64[2] = constant([9007199254740993, -4])\n"
                                 "    %add = aten.add.Tensor(%x, %c)\n"
                                 "    return (%add, %i)\n");
    cr_assert_not_null(g, "%s", tj_last_error());
    char *buf = test_graph_json(g);
    /* jansson writes one element a line at this indent; 2^53 + 1 only as an integer */
    static const char *const want[] = {"\"values\": [\n    1.5,\n    {\n     \"float\": \"-inf\"\n    },\n    0.25\n   ]",
                                       "\"values\": [\n    9007199254740993,\n    -4\n   ]"};
    for (int k = 0; k < 2; k++) cr_expect(strstr(buf, want[k]) != NULL, "%s lacks %s", buf, want[k]);
    free(buf);
    tj_graph_free(g);
}

/* ---- passes ---- */

static tj_status fn_redundant(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *x = in[0];
    tj_tensor *a = tj_add(x, x);
    tj_tensor *b = tj_add(x, x);                          /* CSE merges it with a */
    tj_tensor *dead = tj_mul(a, b);                       /* unused: DCE */
    tj_tensor *one = tj_mul_scalar(b, tj_v_int(1));       /* no-op */
    tj_tensor *tt = tj_t(tj_t(one));                      /* no-op */
    int64_t shape[2] = {3, 4};
    tj_tensor *v = tj_view(tt, shape, 2);                 /* view to the same shape: no-op */
    (void)dead;
    out[0] = tj_sub(v, a);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(passes, dce_cse_and_noop_keep_results_and_remove_work)
{
    tj_tensor *x = test_random_f32(2, (int64_t[]){3, 4}, 18);
    tj_graph *g = tj_make_fx(fn_redundant, NULL, &x, 1, NULL, TJ_TRACE_REAL);
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_tensor *before[1], *after[1];
    cr_assert_eq(tj_graph_run(g, &x, 1, before), TJ_OK);
    cr_expect_eq(tj_graph_num_calls(g), 8);
    tj_graph_pass passes[3] = {tj_pass_cse, tj_pass_noop, tj_pass_dead_code};
    const char *names[3] = {"cse", "noop", "dce"};
    char *buf = NULL;
    size_t len = 0;
    FILE *report = open_memstream(&buf, &len);
    cr_assert_eq(tj_run_passes(g, passes, names, 3, report), TJ_OK);
    fclose(report);
    cr_expect(strstr(buf, "cse") != NULL);
    free(buf);
    char *text = tj_graph_to_string(g);
    cr_expect_str_eq(text, "graph(%arg0_1 : f32[3, 4]):\n"
                           "    %add = aten.add.Tensor(%arg0_1, %arg0_1)\n"
                           "    %sub = aten.sub.Tensor(%add, %add)\n"
                           "    return (%sub,)\n");
    free(text);
    cr_assert_eq(tj_graph_run(g, &x, 1, after), TJ_OK);
    expect_close(before[0], after[0], 0);
    tj_tensor_release(before[0]);
    tj_tensor_release(after[0]);
    tj_graph_free(g);
    tj_tensor_release(x);
}

/* Two dropouts of one input draw two masks: merged, dropout(x) - dropout(x)
 * was 0 everywhere (aten::dropout was not counted as random). */
Test(passes, cse_keeps_two_dropouts_of_one_input)
{
    tj_graph *g = tj_graph_parse("graph(%x : f32[1000]):\n"
                                 "    %a = aten.dropout.default(%x, 0.5, True)\n"
                                 "    %b = aten.dropout.default(%x, 0.5, True)\n"
                                 "    %c = aten.sub.Tensor(%a, %b)\n"
                                 "    return (%c,)\n");
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_expect(tj_op_is_random(tj_op_find("aten::dropout")));
    cr_expect_eq(tj_pass_cse(g), 0);
    cr_expect_eq(tj_graph_num_calls(g), 3);
    tj_tensor *x = tj_full((int64_t[]){1000}, 1, tj_v_float(1.0), TJ_FLOAT32), *c;
    cr_assert_eq(tj_graph_run(g, &x, 1, &c), TJ_OK, "%s", tj_last_error());
    int differ = 0; /* each element differs with probability 1/2 */
    for (int i = 0; i < 1000; i++) differ += tj_tensor_item_at(c, i) != 0;
    cr_expect_gt(differ, 300);
    tj_tensor_release(c);
    tj_tensor_release(x);
    tj_graph_free(g);
}

/* mul(x, 1) returned by the graph is a new tensor in PyTorch; after the
 * no-op pass tj_graph_run must still not hand back the caller's x (nor the
 * same object for two outputs), while a no-op feeding another call goes. */
Test(passes, noop_keeps_outputs_distinct_from_inputs_and_each_other)
{
    tj_graph *g = tj_graph_parse("graph(%x : f32[2]):\n"
                                 "    %mul = aten.mul.Scalar(%x, 1)\n"
                                 "    %neg = aten.neg.default(%x)\n"
                                 "    %div = aten.div.Scalar(%neg, 1)\n"
                                 "    %add = aten.add.Scalar(%neg, 0)\n"
                                 "    %view = aten.view.default(%x, [2])\n"
                                 "    %mul_1 = aten.mul.Scalar(%neg, 1)\n"
                                 "    %exp = aten.exp.default(%mul_1)\n"
                                 "    return (%mul, %div, %add, %view, %exp)\n");
    cr_assert_not_null(g, "%s", tj_last_error());
    /* only mul_1 (not an output) and one of div / add (the other then
     * stands for the output) go */
    cr_expect_eq(tj_pass_noop(g), 2);
    tj_tensor *x = tj_tensor_from_data(TJ_FLOAT32, 1, (int64_t[]){2}, (float[]){1.5f, -2});
    tj_tensor *out[5];
    cr_assert_eq(tj_graph_run(g, &x, 1, out), TJ_OK, "%s", tj_last_error());
    for (int i = 0; i < 5; i++) {
        cr_expect_neq(out[i], x, "output %d is the input object", i);
        for (int j = 0; j < i; j++) cr_expect_neq(out[i], out[j], "outputs %d and %d are one object", j, i);
    }
    const float want[5][2] = {{1.5f, -2}, {-1.5f, 2}, {-1.5f, 2}, {1.5f, -2}, {expf(-1.5f), expf(2)}};
    for (int i = 0; i < 5; i++)
        for (int k = 0; k < 2; k++) cr_expect_eq(((float *)tj_tensor_data(out[i]))[k], want[i][k], "out %d[%d]", i, k);
    for (int i = 0; i < 5; i++) tj_tensor_release(out[i]);
    tj_tensor_release(x);
    tj_graph_free(g);
}

/* x + 0 turns -0 into +0 (abs's decomposition relies on it), and alpha * 0
 * is nan for alpha = inf: only exact float no-ops go, integers lose any
 * add of 0. */
Test(passes, noop_removes_only_exact_float_adds_of_zero)
{
    tj_graph *g = tj_graph_parse("graph(%x : f32[2], %i : i64[2]):\n"
                                 "    %add = aten.add.Scalar(%x, 0)\n"
                                 "    %add_1 = aten.add.Scalar(%add, -0.0)\n"
                                 "    %sub = aten.sub.Scalar(%add_1, 0.0)\n"
                                 "    %sub_1 = aten.sub.Scalar(%sub, -0.0)\n"
                                 "    %add_2 = aten.add.Scalar(%sub_1, -0.0, inf)\n"
                                 "    %exp = aten.exp.default(%add_2)\n"
                                 "    %add_3 = aten.add.Scalar(%i, 0)\n"
                                 "    %neg = aten.neg.default(%add_3)\n"
                                 "    return (%exp, %neg)\n");
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_expect_eq(tj_pass_noop(g), 3); /* add_1, sub, add_3 */
    char *text = tj_graph_to_string(g);
    cr_expect(strstr(text, "aten.add.Scalar(%x, 0)") && strstr(text, "aten.sub.Scalar(%add, -0.0)") &&
                  strstr(text, "aten.add.Scalar(%sub_1, -0.0, inf)") && strstr(text, "aten.neg.default(%i)"),
              "%s", text);
    free(text);
    tj_graph_free(g);
}

/* A contiguous copy of a transposed view is what the view after it reads
 * (a decomposed convolution's im2col columns): the pass keeps it, and drops
 * a copy that keeps its input's layout. */
Test(passes, noop_keeps_a_copy_that_changes_the_layout)
{
    tj_graph *g = tj_graph_parse("graph(%x : f32[2, 3]):\n"
                                 "    %t = aten.t.default(%x)\n"
                                 "    %clone = aten.clone.default(%t)\n"
                                 "    %view = aten.view.default(%clone, [6])\n"
                                 "    %neg = aten.neg.default(%x)\n"
                                 "    %_to_copy = aten._to_copy.default(%neg)\n"
                                 "    %exp = aten.exp.default(%_to_copy)\n"
                                 "    return (%view, %exp)\n");
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_expect_eq(tj_pass_noop(g), 1);
    char *text = tj_graph_to_string(g);
    cr_expect(strstr(text, "aten.clone.default(%t)") && strstr(text, "aten.exp.default(%neg)"), "%s", text);
    free(text);
    tj_tensor *x = tj_tensor_from_data(TJ_FLOAT32, 2, (int64_t[]){2, 3}, (float[]){1, 2, 3, 4, 5, 6});
    tj_tensor *out[2];
    cr_assert_eq(tj_graph_run(g, &x, 1, out), TJ_OK, "%s", tj_last_error());
    const float want[6] = {1, 4, 2, 5, 3, 6};
    for (int k = 0; k < 6; k++) cr_expect_eq(((float *)tj_tensor_data(out[0]))[k], want[k], "view[%d]", k);
    for (int i = 0; i < 2; i++) tj_tensor_release(out[i]);
    tj_tensor_release(x);
    tj_graph_free(g);
}

Test(passes, dead_outputs_of_a_multi_output_node_do_not_keep_it_alive_alone)
{
    tj_graph *g = tj_graph_parse("graph(%x : f32[2, 4]):\n"
                                 "    %getitem, %getitem_1, %getitem_2 = aten.native_layer_norm.default(%x, [4], None, None, 1e-05)\n"
                                 "    %neg = aten.neg.default(%x)\n"
                                 "    return (%neg,)\n");
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_expect_eq(tj_pass_dead_code(g), 1);
    cr_expect_eq(tj_graph_num_calls(g), 1);
    tj_graph_free(g);
}

Test(interpreter, rejects_inputs_of_the_wrong_shape_or_dtype)
{
    tj_graph *g = tj_graph_parse("graph(%x : f32[2]):\n    %neg = aten.neg.default(%x)\n    return (%neg,)\n");
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_tensor *bad = tj_tensor_empty(TJ_FLOAT32, 1, (int64_t[]){3});
    tj_tensor *out[1];
    cr_expect_eq(tj_graph_run(g, &bad, 1, out), TJ_ERR_SHAPE);
    cr_expect(strstr(tj_last_error(), "[3]") != NULL, "%s", tj_last_error());
    tj_tensor_release(bad);
    bad = tj_tensor_empty(TJ_FLOAT64, 1, (int64_t[]){2});
    cr_expect_eq(tj_graph_run(g, &bad, 1, out), TJ_ERR_DTYPE);
    tj_tensor_release(bad);
    tj_graph_free(g);
}
