/* User operators (include/tjit/library.h): registration from an ATen schema,
 * eager calls, make_fx in real and fake mode, the printed graph and its
 * parse, replay, autograd, user decompositions under get_decompositions and
 * the core table, cycles, threads, and every registration error.
 *
 * Every test runs in its own process (Criterion), so each registers the
 * operators it needs through the suite's .init. Expected values are small
 * exact sums (self + alpha * other in float32), no external reference. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_counter.h"
#include "test_util.h"
#include "tjit/tjit.h"

#define SCALED_ADD "mylib::scaled_add(Tensor self, Tensor other, float alpha=1.0) -> Tensor"

static const tj_op *scaled_add;
static int kernel_calls;

/* ---- mylib::scaled_add: self + alpha * other, float32, same shapes ---- */

/* Storage offset (in elements) of the element at a row-major flat index. */
static int64_t offset_of(const tj_tensor *t, int64_t flat)
{
    const int64_t *shape = tj_tensor_shape(t), *strides = tj_tensor_strides(t);
    int64_t off = 0;
    for (int d = tj_tensor_ndim(t) - 1; d >= 0; d--) {
        off += flat % shape[d] * strides[d];
        flat /= shape[d];
    }
    return off;
}

static tj_status scaled_add_meta(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *x = args[0].u.t, *y = args[1].u.t;
    char a[64], b[64];
    if (tj_tensor_dtype(x) != TJ_FLOAT32 || tj_tensor_dtype(y) != TJ_FLOAT32)
        return tj_error(TJ_ERR_DTYPE, "mylib::scaled_add: expected float32, got %s and %s",
                        tj_dtype_name(tj_tensor_dtype(x)), tj_dtype_name(tj_tensor_dtype(y)));
    int nd = tj_tensor_ndim(x);
    if (nd != tj_tensor_ndim(y) || memcmp(tj_tensor_shape(x), tj_tensor_shape(y), sizeof(int64_t) * (size_t)nd))
        return tj_error(TJ_ERR_SHAPE, "mylib::scaled_add: self %s and other %s differ",
                        tj_shape_str(nd, tj_tensor_shape(x), a, sizeof a),
                        tj_shape_str(tj_tensor_ndim(y), tj_tensor_shape(y), b, sizeof b));
    outs[0].dtype = TJ_FLOAT32;
    outs[0].ndim = nd;
    memcpy(outs[0].shape, tj_tensor_shape(x), sizeof(int64_t) * (size_t)nd);
    return TJ_OK;
}

static tj_status scaled_add_kernel(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *x = args[0].u.t, *y = args[1].u.t;
    /* a float argument may arrive as an int */
    float alpha = (float)(args[2].kind == TJ_V_INT ? (double)args[2].u.i : args[2].u.f);
    const float *xd = tj_tensor_data(x), *yd = tj_tensor_data(y);
    float *o = tj_tensor_data(outs[0]);
    for (int64_t i = 0; i < tj_tensor_numel(outs[0]); i++) o[i] = xd[offset_of(x, i)] + alpha * yd[offset_of(y, i)];
    kernel_calls++;
    return TJ_OK;
}

/* d/dself = g, d/dother = alpha * g */
static tj_status scaled_add_backward(const tj_value *args, tj_tensor *const *results, tj_tensor *const *grads,
                                     const bool *needed, tj_tensor **grad_inputs)
{
    (void)results;
    if (needed[0]) grad_inputs[0] = grads[0];
    if (needed[1] && !(grad_inputs[1] = tj_mul_scalar(grads[0], args[2]))) return tj_last_status();
    return TJ_OK;
}

static void setup(void)
{
    test_scope_open();
    scaled_add = tj_op_register(SCALED_ADD, TJ_OP_PRIMITIVE, scaled_add_kernel, scaled_add_meta);
    cr_assert_not_null(scaled_add, "%s", tj_last_error());
}
TestSuite(library, .init = setup, .fini = test_scope_close);

static tj_tensor *vec(int n, const float *v)
{
    int64_t s[1] = {n};
    return tj_tensor_from_data(TJ_FLOAT32, 1, s, v);
}

static void expect_values(const tj_tensor *t, const double *want, int n)
{
    test_expect_close(t, want, n, 0, 1e-6);
}

static tj_tensor *call_scaled_add(tj_tensor *x, tj_tensor *y, double alpha)
{
    tj_value args[3] = {tj_v_tensor(x), tj_v_tensor(y), tj_v_float(alpha)}, out;
    return tj_dispatch(scaled_add, args, 3, &out) == TJ_OK ? out.u.t : NULL;
}

/* ---- the registry ---- */

Test(library, a_registered_operator_is_found_by_every_spelling_and_listed)
{
    cr_expect_eq(tj_op_find("mylib::scaled_add"), scaled_add);
    cr_expect_eq(tj_op_find("mylib::scaled_add.default"), scaled_add);
    cr_expect_eq(tj_op_find("mylib.scaled_add.default"), scaled_add);
    cr_expect_null(tj_op_find("scaled_add"), "an unqualified name means aten");
    cr_expect_null(tj_op_find("otherlib::scaled_add"));
    cr_expect_str_eq(tj_op_name(scaled_add), "mylib::scaled_add");
    cr_expect_str_eq(tj_op_namespace(scaled_add), "mylib");
    cr_expect_str_eq(tj_op_namespace(tj_op_find("aten::add.Tensor")), "aten");
    cr_expect_str_eq(tj_op_base_name(scaled_add), "scaled_add");
    cr_expect_str_eq(tj_op_overload(scaled_add), "");
    cr_expect_str_eq(tj_op_schema(scaled_add), SCALED_ADD);
    cr_expect_eq(tj_op_kind_of(scaled_add), TJ_OP_PRIMITIVE);
    cr_expect_eq(tj_op_num_args(scaled_add), 3);
    cr_expect_eq(tj_op_num_returns(scaled_add), 1);
    cr_expect_not(tj_op_is_view(scaled_add) || tj_op_is_inplace(scaled_add) || tj_op_is_random(scaled_add));
    /* listed after the built-in operators, as `tjit ops` lists them */
    cr_expect_eq(tj_op_at(tj_op_count() - 1), scaled_add);
}

Test(library, overloads_of_one_name_are_distinct_operators)
{
    const tj_op *s = tj_op_register("mylib::scaled_add.Scalar(Tensor self, Scalar other, float alpha=1.0) -> Tensor",
                                    TJ_OP_PRIMITIVE, scaled_add_kernel, scaled_add_meta);
    cr_assert_not_null(s, "%s", tj_last_error());
    cr_expect_neq(s, scaled_add);
    cr_expect_eq(tj_op_find("mylib::scaled_add.Scalar"), s);
    cr_expect_eq(tj_op_find("mylib.scaled_add.Scalar"), s);
    cr_expect_str_eq(tj_op_name(s), "mylib::scaled_add.Scalar");
    cr_expect_eq(tj_op_find("mylib::scaled_add"), scaled_add);
}

/* ---- eager calls ---- */

Test(library, calls_run_the_kernel_with_defaults_and_any_strides)
{
    tj_tensor *x = vec(3, (float[]){1, 2, 3}), *y = vec(3, (float[]){10, 20, 30});
    expect_values(call_scaled_add(x, y, 0.5), (double[]){6, 12, 18}, 3);
    /* tj_call fills alpha=1.0 from the schema; an int passes as a float */
    tj_value out, args[3] = {tj_v_tensor(x), tj_v_tensor(y), tj_v_int(-2)};
    cr_assert_eq(tj_call("mylib::scaled_add", args, 2, &out), TJ_OK, "%s", tj_last_error());
    expect_values(out.u.t, (double[]){11, 22, 33}, 3);
    cr_assert_eq(tj_call("mylib.scaled_add.default", args, 3, &out), TJ_OK, "%s", tj_last_error());
    expect_values(out.u.t, (double[]){-19, -38, -57}, 3);
    /* a transposed input: [[1, 2], [3, 4]]^T + 1 * ones */
    int64_t s2[2] = {2, 2};
    tj_tensor *m = tj_t(tj_tensor_from_data(TJ_FLOAT32, 2, s2, (float[]){1, 2, 3, 4}));
    tj_tensor *r = call_scaled_add(m, tj_ones(s2, 2, TJ_FLOAT32), 1.0);
    expect_values(r, (double[]){2, 4, 3, 5}, 4);
    /* empty tensors */
    int64_t s0[1] = {0};
    tj_tensor *e = tj_tensor_empty(TJ_FLOAT32, 1, s0);
    cr_expect_eq(tj_tensor_numel(call_scaled_add(e, e, 2.0)), 0);
}

Test(library, errors_of_the_shape_function_and_of_argument_types_name_the_operator)
{
    tj_tensor *x = vec(3, (float[]){1, 2, 3}), *y = vec(2, (float[]){1, 2});
    cr_expect_null(call_scaled_add(x, y, 1.0));
    cr_expect_eq(tj_last_status(), TJ_ERR_SHAPE);
    cr_expect_str_eq(tj_last_error(), "mylib::scaled_add: self [3] and other [2] differ");
    int64_t s[1] = {3};
    cr_expect_null(call_scaled_add(x, tj_zeros(s, 1, TJ_INT64), 1.0));
    cr_expect_eq(tj_last_status(), TJ_ERR_DTYPE);
    tj_value out, args[3] = {tj_v_tensor(x), tj_v_tensor(x), tj_v_str("two")};
    cr_expect_eq(tj_dispatch(scaled_add, args, 3, &out), TJ_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(tj_last_error(), "mylib::scaled_add: argument 2 'alpha' expects float"), "%s", tj_last_error());
    cr_expect_eq(out.kind, TJ_V_NONE);
}

/* ---- tracing, printing, parsing, replay ---- */

static tj_status trace_fn(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *r = call_scaled_add(in[0], in[1], 2.5);
    if (!r) return tj_last_status();
    out[0] = tj_relu(r);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* what make_fx prints for trace_fn (placeholders are named argN) */
static const char *const TRACED = "graph(%arg0_1 : f32[4], %arg1_1 : f32[4]):\n"
                                  "    %scaled_add = mylib.scaled_add.default(%arg0_1, %arg1_1, 2.5)\n"
                                  "    %relu = aten.relu.default(%scaled_add)\n"
                                  "    return (%relu,)\n";

static void expect_traced_text(const tj_graph *g)
{
    char *text = tj_graph_to_string(g);
    cr_assert_not_null(text);
    cr_expect_str_eq(text, TRACED);
    free(text);
}

Test(library, make_fx_records_the_operator_in_real_and_fake_mode)
{
    tj_tensor *in[2] = {vec(4, (float[]){1, -2, 3, -4}), vec(4, (float[]){1, 1, -1, 1})};
    kernel_calls = 0;
    tj_graph *real = tj_make_fx(trace_fn, NULL, in, 2, NULL, TJ_TRACE_REAL);
    cr_assert_not_null(real, "%s", tj_last_error());
    cr_expect_eq(kernel_calls, 1);
    cr_expect_eq(tj_graph_count_op(real, scaled_add), 1);
    expect_traced_text(real);

    int64_t s[1] = {4};
    tj_tensor *fake[2] = {tj_tensor_fake(TJ_FLOAT32, 1, s), tj_tensor_fake(TJ_FLOAT32, 1, s)};
    tj_graph *g = tj_make_fx(trace_fn, NULL, fake, 2, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_expect_eq(kernel_calls, 1, "fake mode runs the shape function only");
    expect_traced_text(g);
    /* fake mode checks shapes through the user's shape function */
    int64_t s5[1] = {5};
    tj_tensor *bad[2] = {fake[0], tj_tensor_fake(TJ_FLOAT32, 1, s5)};
    cr_expect_null(tj_make_fx(trace_fn, NULL, bad, 2, NULL, TJ_TRACE_FAKE));
    cr_expect_str_eq(tj_last_error(), "mylib::scaled_add: self [4] and other [5] differ");
    tj_graph_free(real);
    tj_graph_free(g);
}

Test(library, the_printed_graph_parses_back_to_the_same_operator)
{
    tj_tensor *in[2] = {vec(4, (float[]){1, -2, 3, -4}), vec(4, (float[]){1, 1, -1, 1})};
    tj_graph *g = tj_make_fx(trace_fn, NULL, in, 2, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    char *text = tj_graph_to_string(g);
    tj_graph *p = tj_graph_parse(text);
    cr_assert_not_null(p, "%s", tj_last_error());
    char *again = tj_graph_to_string(p);
    cr_expect_str_eq(again, text);
    cr_expect_eq(tj_graph_count_op(p, scaled_add), 1);
    /* a hand-written graph reads back to its own text */
    tj_graph *h = tj_graph_parse(TRACED);
    cr_assert_not_null(h, "%s", tj_last_error());
    cr_expect_eq(tj_graph_count_op(h, scaled_add), 1);
    char *h_text = tj_graph_to_string(h);
    cr_expect_str_eq(h_text, TRACED);
    free(h_text);
    tj_graph *u = tj_graph_parse("graph(%x : f32[2]):\n"
                                 "    %y = otherlib.scaled_add.default(%x, %x)\n"
                                 "    return (%y,)\n");
    cr_expect_null(u);
    cr_expect(strstr(tj_last_error(), "unknown operator otherlib::scaled_add.default"), "%s", tj_last_error());
    free(text);
    free(again);
    tj_graph_free(g);
    tj_graph_free(p);
    tj_graph_free(h);
}

Test(library, a_compiled_plan_binds_the_kernel_and_equals_eager)
{
    tj_tensor *in[2] = {vec(4, (float[]){1, -2, 3, -4}), vec(4, (float[]){1, 1, -1, 1})};
    int64_t s[1] = {4};
    tj_tensor *fake[2] = {tj_tensor_fake(TJ_FLOAT32, 1, s), tj_tensor_fake(TJ_FLOAT32, 1, s)};
    tj_graph *g = tj_make_fx(trace_fn, NULL, fake, 2, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_plan *plan = tj_compile(g, NULL);
    cr_assert_not_null(plan, "%s", tj_last_error());
    tj_tensor *eager[1];
    int n = 0;
    cr_assert_eq(trace_fn(NULL, in, 2, eager, &n), TJ_OK);
    const double want[4] = {3.5, 0.5, 0.5, 0}; /* relu(x + 2.5 y) */
    expect_values(eager[0], want, 4);
    kernel_calls = 0;
    tj_tensor *out[1];
    cr_assert_eq(tj_plan_run(plan, in, 2, out), TJ_OK, "%s", tj_last_error());
    cr_expect_eq(kernel_calls, 1);
    expect_values(out[0], want, 4);
    cr_assert_eq(tj_graph_run(g, in, 2, out), TJ_OK, "%s", tj_last_error());
    expect_values(out[0], want, 4);
    tj_plan_free(plan);
    tj_graph_free(g);
}

/* ---- autograd ---- */

/* As torch.library's custom operators without register_autograd: the call
 * runs, and a backward pass reaching it fails. */
Test(library, an_operator_without_backward_fails_when_backward_reaches_it)
{
    tj_tensor *x = vec(2, (float[]){1, 2}), *y = vec(2, (float[]){3, 4});
    cr_assert_eq(tj_tensor_set_requires_grad(x, true), TJ_OK);
    tj_tensor *r = call_scaled_add(x, y, 1.0);
    expect_values(r, (double[]){4, 6}, 2);
    cr_expect(tj_tensor_requires_grad(r));
    cr_expect_not(tj_op_has_derivative(scaled_add));
    cr_expect_eq(tj_backward(tj_sum(r, -1), NULL), TJ_ERR_UNSUPPORTED);
    cr_expect(strstr(tj_last_error(), "mylib::scaled_add: derivative not implemented"), "%s", tj_last_error());
    cr_expect(strstr(tj_last_error(), "tj_op_set_backward"), "%s", tj_last_error());
    cr_expect_null(strstr(tj_last_error(), "PyTorch"), "%s", tj_last_error());
    cr_expect_null(tj_tensor_grad(x));
    /* under no_grad nothing is recorded */
    bool prev = tj_no_grad_begin();
    cr_expect_not(tj_tensor_requires_grad(call_scaled_add(x, y, 1.0)));
    tj_no_grad_end(prev);
}

Test(library, a_registered_backward_gives_gradients_to_each_input)
{
    cr_assert_eq(tj_op_set_backward(scaled_add, scaled_add_backward), TJ_OK);
    cr_expect(tj_op_has_derivative(scaled_add));
    tj_tensor *x = vec(2, (float[]){1, 2}), *y = vec(2, (float[]){3, 4});
    cr_assert_eq(tj_tensor_set_requires_grad(x, true), TJ_OK);
    cr_assert_eq(tj_tensor_set_requires_grad(y, true), TJ_OK);
    /* loss = sum(x + 3 (y * x)): d/dx = 1 + 3 y (through the formula and mul), d/dy = 3 x */
    tj_tensor *r = call_scaled_add(x, tj_mul(y, x), 3.0);
    cr_assert_not_null(r, "%s", tj_last_error());
    cr_expect(tj_tensor_requires_grad(r));
    cr_assert_eq(tj_backward(tj_sum(r, -1), NULL), TJ_OK, "%s", tj_last_error());
    expect_values(tj_tensor_grad(x), (double[]){10, 13}, 2); /* 1 + 3 y */
    expect_values(tj_tensor_grad(y), (double[]){3, 6}, 2);   /* 3 x */
}

/* The engine cannot know which saved tensors a user formula reads: any of
 * them written in place since the call stops the backward pass. */
Test(library, a_registered_backward_is_not_run_over_saved_values_written_since)
{
    cr_assert_eq(tj_op_set_backward(scaled_add, scaled_add_backward), TJ_OK);
    tj_tensor *x = vec(2, (float[]){1, 2}), *y = vec(2, (float[]){3, 4});
    cr_assert_eq(tj_tensor_set_requires_grad(x, true), TJ_OK);
    tj_tensor *loss = tj_sum(call_scaled_add(x, y, 2.0), -1);
    cr_assert_not_null(loss, "%s", tj_last_error());
    cr_assert_not_null(tj_fill_(y, tj_v_int(0)));
    cr_expect_eq(tj_backward(loss, NULL), TJ_ERR_MODIFIED);
    cr_expect(strstr(tj_last_error(), "mylib::scaled_add: backward: argument 'other'"), "%s", tj_last_error());
    cr_expect_null(tj_tensor_grad(x));
}

Test(library, a_null_backward_makes_the_operator_not_differentiable)
{
    cr_assert_eq(tj_op_set_backward(scaled_add, NULL), TJ_OK);
    cr_expect_not(tj_op_is_differentiable(scaled_add));
    tj_tensor *x = vec(2, (float[]){1, 2});
    cr_assert_eq(tj_tensor_set_requires_grad(x, true), TJ_OK);
    tj_tensor *r = call_scaled_add(x, x, 1.0);
    expect_values(r, (double[]){2, 4}, 2);
    cr_expect_not(tj_tensor_requires_grad(r));
}

Test(library, set_backward_refuses_null_built_in_and_implicit_operators)
{
    cr_expect_eq(tj_op_set_backward(NULL, scaled_add_backward), TJ_ERR_INVALID_ARGUMENT);
    cr_expect_eq(tj_op_set_backward(tj_op_find("aten::add.Tensor"), scaled_add_backward), TJ_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(tj_last_error(), "aten::add.Tensor is built in"), "%s", tj_last_error());
    const tj_op *imp = tj_op_register("mylib::imp(Tensor x) -> Tensor", TJ_OP_IMPLICIT, NULL, NULL);
    cr_assert_not_null(imp, "%s", tj_last_error());
    cr_expect_eq(tj_op_set_backward(imp, scaled_add_backward), TJ_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(tj_last_error(), "mylib::imp is implicit"), "%s", tj_last_error());
}

/* ---- decompositions ---- */

/* mylib::axpy_relu = relu(x + alpha * y): a composite with a kernel (through
 * scaled_add's) and a decomposition into built-in operators. */
static tj_status axpy_relu_kernel(const tj_value *args, tj_tensor *const *outs)
{
    tj_status st = scaled_add_kernel(args, outs);
    float *o = tj_tensor_data(outs[0]);
    for (int64_t i = 0; i < tj_tensor_numel(outs[0]); i++) o[i] = o[i] > 0 ? o[i] : 0;
    return st;
}

static tj_status axpy_relu_decomp(const tj_value *args, tj_value *outs)
{
    tj_tensor *r = tj_relu(tj_add_alpha(args[0].u.t, args[1].u.t, args[2]));
    outs[0] = tj_v_tensor(r);
    return r ? TJ_OK : tj_last_status();
}

static const tj_op *register_axpy_relu(void)
{
    const tj_op *op = tj_op_register("mylib::axpy_relu(Tensor x, Tensor y, float alpha=1.0) -> Tensor",
                                     TJ_OP_COMPOSITE, axpy_relu_kernel, scaled_add_meta);
    cr_assert_not_null(op, "%s", tj_last_error());
    cr_assert_eq(tj_register_decomposition(op, axpy_relu_decomp, "axpy_relu_decomp"), TJ_OK);
    return op;
}

static tj_status trace_axpy_relu(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    tj_value args[3] = {tj_v_tensor(in[0]), tj_v_tensor(in[1]), tj_v_float(-0.5)}, r;
    tj_status st = tj_dispatch(ctx, args, 3, &r);
    out[0] = r.u.t;
    *n_out = 1;
    return st;
}

Test(library, a_user_decomposition_lowers_under_get_decompositions_and_the_core_table)
{
    const tj_op *op = register_axpy_relu();
    tj_tensor *in[2] = {vec(4, (float[]){1, -2, 3, 4}), vec(4, (float[]){4, 2, 2, 10})};
    const double want[4] = {0, 0, 2, 0};
    tj_tensor *eager[1];
    int n;
    cr_assert_eq(trace_axpy_relu((void *)op, in, 2, eager, &n), TJ_OK, "%s", tj_last_error());
    expect_values(eager[0], want, 4);

    const char *names[2] = {"mylib::axpy_relu", "mylib::scaled_add"};
    tj_decomp_table *t = tj_get_decompositions(names, 2);
    cr_assert_not_null(t);
    cr_expect_eq(tj_decomp_table_size(t), 1);
    cr_expect(tj_decomp_table_contains(t, op));
    cr_expect_eq(tj_decompositions_missing(names, 2, NULL), 1, "scaled_add is a primitive");
    char *text = test_decomp_table_text(t);
    cr_expect_str_eq(text, "mylib::axpy_relu.default -> axpy_relu_decomp\n");
    free(text);

    tj_graph *g = tj_make_fx(trace_axpy_relu, (void *)op, in, 2, t, TJ_TRACE_REAL);
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_expect_eq(tj_graph_count_op(g, op), 0);
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::add.Tensor")), 1);
    tj_tensor *out[1];
    cr_assert_eq(tj_graph_run(g, in, 2, out), TJ_OK, "%s", tj_last_error());
    expect_values(out[0], want, 4);
    tj_graph_free(g);

    /* the core table made after the registration includes it */
    tj_decomp_table *core = tj_core_decompositions();
    cr_expect(tj_decomp_table_contains(core, op));
    cr_expect_not(tj_decomp_table_contains(core, scaled_add), "a user primitive stays");
    g = tj_make_fx(trace_axpy_relu, (void *)op, in, 2, core, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_expect(test_only_primitives(g));
    cr_expect_eq(tj_graph_count_op(g, op), 0);
    tj_plan *plan = tj_compile(g, NULL);
    cr_assert_not_null(plan, "%s", tj_last_error());
    cr_assert_eq(tj_plan_run(plan, in, 2, out), TJ_OK, "%s", tj_last_error());
    expect_values(out[0], want, 4);
    tj_plan_free(plan);
    tj_graph_free(g);
    tj_decomp_table_free(core);
    tj_decomp_table_free(t);
}

Test(library, a_core_table_made_before_the_registration_takes_the_entry_by_hand)
{
    tj_decomp_table *core = tj_core_decompositions();
    const tj_op *op = register_axpy_relu();
    cr_expect_not(tj_decomp_table_contains(core, op));
    cr_assert_eq(tj_decomp_table_add_fn(core, op, axpy_relu_decomp, "axpy_relu_decomp"), TJ_OK);
    cr_expect(tj_decomp_table_contains(core, op));
    tj_tensor *in[2] = {vec(2, (float[]){1, 2}), vec(2, (float[]){1, 1})};
    tj_graph *g = tj_make_fx(trace_axpy_relu, (void *)op, in, 2, core, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_expect(test_only_primitives(g));
    tj_graph_free(g);
    tj_decomp_table_free(core);
}

Test(library, re_registering_a_decomposition_replaces_it)
{
    const tj_op *op = register_axpy_relu();
    cr_assert_eq(tj_register_decomposition(op, axpy_relu_decomp, "second_name"), TJ_OK);
    const char *names[1] = {"mylib::axpy_relu.default"};
    tj_decomp_table *t = tj_get_decompositions(names, 1);
    char *text = test_decomp_table_text(t);
    cr_expect_str_eq(text, "mylib::axpy_relu.default -> second_name\n");
    free(text);
    tj_decomp_table_free(t);
}

/* mylib::ping and mylib::pong: composites whose decompositions call each other */
static const tj_op *ping, *pong;

static tj_status call_other(const tj_op *op, const tj_value *args, tj_value *outs)
{
    tj_value r;
    tj_status st = tj_dispatch(op, args, 1, &r);
    outs[0] = r;
    return st;
}
static tj_status ping_decomp(const tj_value *args, tj_value *outs) { return call_other(pong, args, outs); }
static tj_status pong_decomp(const tj_value *args, tj_value *outs) { return call_other(ping, args, outs); }

static tj_status same_meta(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *x = args[0].u.t;
    outs[0].dtype = tj_tensor_dtype(x);
    outs[0].ndim = tj_tensor_ndim(x);
    memcpy(outs[0].shape, tj_tensor_shape(x), sizeof(int64_t) * (size_t)outs[0].ndim);
    return TJ_OK;
}

static tj_status copy_kernel(const tj_value *args, tj_tensor *const *outs)
{
    return tj_tensor_copy_to(args[0].u.t, tj_tensor_data(outs[0]));
}

static tj_status trace_one(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    tj_value a = tj_v_tensor(in[0]), r;
    tj_status st = tj_dispatch(ctx, &a, 1, &r);
    out[0] = r.u.t;
    *n_out = 1;
    return st;
}

Test(library, a_cycle_through_user_decompositions_is_reported_with_its_chain)
{
    ping = tj_op_register("mylib::ping(Tensor x) -> Tensor", TJ_OP_COMPOSITE, copy_kernel, same_meta);
    pong = tj_op_register("mylib::pong(Tensor x) -> Tensor", TJ_OP_COMPOSITE, copy_kernel, same_meta);
    cr_assert(ping && pong, "%s", tj_last_error());
    cr_assert_eq(tj_register_decomposition(ping, ping_decomp, "ping_decomp"), TJ_OK);
    cr_assert_eq(tj_register_decomposition(pong, pong_decomp, "pong_decomp"), TJ_OK);
    tj_tensor *x = vec(2, (float[]){1, 2});
    /* eager: composites run their kernels */
    tj_tensor *out;
    int n;
    cr_assert_eq(trace_one((void *)ping, &x, 1, &out, &n), TJ_OK, "%s", tj_last_error());
    expect_values(out, (double[]){1, 2}, 2);
    tj_decomp_table *core = tj_core_decompositions();
    cr_expect_null(tj_make_fx(trace_one, (void *)ping, &x, 1, core, TJ_TRACE_FAKE));
    cr_expect_eq(tj_last_status(), TJ_ERR_CYCLE);
    cr_expect(strstr(tj_last_error(), "mylib::ping -> mylib::pong -> mylib::ping"), "%s", tj_last_error());
    tj_decomp_table_free(core);
}

/* ---- implicit operators ---- */

static const tj_op *twice, *loop;

static tj_status twice_decomp(const tj_value *args, tj_value *outs)
{
    tj_tensor *r = tj_add(args[0].u.t, args[0].u.t);
    outs[0] = tj_v_tensor(r);
    return r ? TJ_OK : tj_last_status();
}

static tj_status loop_decomp(const tj_value *args, tj_value *outs) { return call_other(loop, args, outs); }

Test(library, an_implicit_operator_always_decomposes_and_differentiates_through_it)
{
    twice = tj_op_register("mylib::twice(Tensor x) -> Tensor", TJ_OP_IMPLICIT, NULL, NULL);
    cr_assert_not_null(twice, "%s", tj_last_error());
    tj_tensor *x = vec(2, (float[]){1, 2}), *out;
    int n;
    cr_expect_eq(trace_one((void *)twice, &x, 1, &out, &n), TJ_ERR_UNSUPPORTED, "no decomposition yet");
    cr_expect(strstr(tj_last_error(), "mylib::twice: no decomposition registered"), "%s", tj_last_error());
    cr_assert_eq(tj_register_decomposition(twice, twice_decomp, "twice_decomp"), TJ_OK);
    cr_assert_eq(tj_tensor_set_requires_grad(x, true), TJ_OK);
    cr_assert_eq(trace_one((void *)twice, &x, 1, &out, &n), TJ_OK, "%s", tj_last_error());
    expect_values(out, (double[]){2, 4}, 2);
    cr_assert_eq(tj_backward(tj_sum(out, -1), NULL), TJ_OK, "%s", tj_last_error());
    expect_values(tj_tensor_grad(x), (double[]){2, 2}, 2);
    /* traced: the operators it calls, not the operator */
    tj_graph *g = tj_make_fx(trace_one, (void *)twice, &x, 1, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_expect_eq(tj_graph_count_op(g, twice), 0);
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::add.Tensor")), 1);
    tj_graph_free(g);
}

Test(library, an_implicit_operator_that_reaches_itself_is_a_cycle)
{
    loop = tj_op_register("mylib::loop(Tensor x) -> Tensor", TJ_OP_IMPLICIT, NULL, NULL);
    cr_assert_not_null(loop, "%s", tj_last_error());
    cr_assert_eq(tj_register_decomposition(loop, loop_decomp, "loop_decomp"), TJ_OK);
    tj_tensor *x = vec(2, (float[]){1, 2}), *out;
    int n;
    cr_expect_eq(trace_one((void *)loop, &x, 1, &out, &n), TJ_ERR_CYCLE);
    cr_expect(strstr(tj_last_error(), "decomposition cycle: mylib::loop -> mylib::loop"), "%s", tj_last_error());
    cr_expect_null(tj_make_fx(trace_one, (void *)loop, &x, 1, NULL, TJ_TRACE_FAKE));
    cr_expect_eq(tj_last_status(), TJ_ERR_CYCLE);
}

/* ---- views and in-place operators ---- */

/* mylib::first(Tensor(a) self) -> Tensor(a): row 0 of a matrix, a view */
static tj_status first_meta(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *x = args[0].u.t;
    if (tj_tensor_ndim(x) != 2 || tj_tensor_size(x, 0) < 1)
        return tj_error(TJ_ERR_SHAPE, "mylib::first: expected a matrix with a row");
    outs[0].dtype = tj_tensor_dtype(x);
    outs[0].ndim = 1;
    outs[0].shape[0] = tj_tensor_size(x, 1);
    outs[0].strides[0] = tj_tensor_strides(x)[1];
    outs[0].offset = tj_tensor_storage_offset(x);
    outs[0].alias = 0;
    return TJ_OK;
}

/* mylib::halve_(Tensor(a!) self) -> Tensor(a!) and its out-of-place form */
static tj_status halve_inplace_meta(const tj_value *args, tj_meta *outs)
{
    tj_status st = same_meta(args, outs);
    outs[0].alias = 0;
    outs[0].same = true;
    return st;
}

static tj_status halve_kernel(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *x = args[0].u.t;
    const float *xd = tj_tensor_data(x);
    float *o = tj_tensor_data(outs[0]);
    for (int64_t i = 0; i < tj_tensor_numel(x); i++) o[offset_of(outs[0], i)] = xd[offset_of(x, i)] / 2;
    return TJ_OK;
}

Test(library, view_and_in_place_operators_follow_their_shape_function)
{
    const tj_op *first = tj_op_register("mylib::first(Tensor(a) self) -> Tensor(a)", TJ_OP_PRIMITIVE, NULL, first_meta);
    cr_assert_not_null(first, "%s", tj_last_error());
    cr_expect(tj_op_is_view(first));
    int64_t s[2] = {2, 3};
    tj_tensor *m = tj_tensor_from_data(TJ_FLOAT32, 2, s, (float[]){1, 2, 3, 4, 5, 6});
    tj_value a = tj_v_tensor(tj_t(m)), r;
    cr_assert_eq(tj_dispatch(first, &a, 1, &r), TJ_OK, "%s", tj_last_error());
    expect_values(r.u.t, (double[]){1, 4}, 2);
    cr_expect(tj_tensor_shares_storage(r.u.t, m));

    const tj_op *halve_ = tj_op_register("mylib::halve_(Tensor(a!) self) -> Tensor(a!)", TJ_OP_PRIMITIVE,
                                         halve_kernel, halve_inplace_meta);
    const tj_op *halve = tj_op_register("mylib::halve(Tensor self) -> Tensor", TJ_OP_PRIMITIVE, halve_kernel,
                                        same_meta);
    cr_assert(halve_ && halve, "%s", tj_last_error());
    cr_expect(tj_op_is_inplace(halve_));
    tj_tensor *x = vec(2, (float[]){4, 8});
    a = tj_v_tensor(x);
    cr_assert_eq(tj_dispatch(halve_, &a, 1, &r), TJ_OK, "%s", tj_last_error());
    cr_expect_eq(r.u.t, x, "in place: the result is self");
    expect_values(x, (double[]){2, 4}, 2);
    cr_expect_eq(tj_tensor_version(x), 1, "the Tensor(a!) argument was written");
    cr_assert_eq(tj_dispatch(halve, &a, 1, &r), TJ_OK, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_version(x), 1, "the out-of-place form writes nothing of x");
    /* functionalization finds the out-of-place form in the same namespace */
    tj_graph *g = tj_make_fx(trace_one, (void *)halve_, &x, 1, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_expect_geq(tj_pass_functionalize(g), 1, "%s", tj_last_error());
    cr_expect_eq(tj_graph_count_op(g, halve_), 0);
    cr_expect_eq(tj_graph_count_op(g, halve), 1);
    tj_graph_free(g);
}

/* A user operator writing a Tensor(a!) argument is not recorded: rebasing
 * the written argument's history is done for built-in in-place operators
 * only (before, one named without '_' was recorded as out-of-place and the
 * written tensor lost its gradient silently). */
Test(library, user_operators_writing_an_argument_are_refused_when_recorded)
{
    const tj_op *halve_ = tj_op_find("mylib::halve_");
    if (!halve_) halve_ = tj_op_register("mylib::halve_(Tensor(a!) self) -> Tensor(a!)", TJ_OP_PRIMITIVE,
                                         halve_kernel, halve_inplace_meta);
    const tj_op *halve_buf = tj_op_register("mylib::halve_buf(Tensor(a!) self) -> Tensor(a!)", TJ_OP_PRIMITIVE,
                                            halve_kernel, halve_inplace_meta);
    cr_assert(halve_ && halve_buf, "%s", tj_last_error());
    const tj_op *ops[2] = {halve_, halve_buf};
    for (int k = 0; k < 2; k++) {
        cr_assert_eq(tj_op_set_backward(ops[k], scaled_add_backward), TJ_OK);
        tj_tensor *w = vec(2, (float[]){4, 8});
        cr_assert_eq(tj_tensor_set_requires_grad(w, true), TJ_OK);
        tj_tensor *h = tj_mul_scalar(w, tj_v_int(1));
        tj_value a = tj_v_tensor(h), r;
        cr_expect_eq(tj_dispatch(ops[k], &a, 1, &r), TJ_ERR_UNSUPPORTED, "%s", tj_op_name(ops[k]));
        cr_expect(strstr(tj_last_error(), "writes its Tensor(a!) arguments"), "%s", tj_last_error());
        expect_values(h, (double[]){4, 8}, 2); /* refused before the kernel */
        bool prev = tj_no_grad_begin();
        cr_expect_eq(tj_dispatch(ops[k], &a, 1, &r), TJ_OK, "%s", tj_last_error());
        tj_no_grad_end(prev);
        expect_values(h, (double[]){2, 4}, 2);
    }
}

/* ---- registration errors ---- */

static void expect_refused(const char *schema, tj_op_kind kind, tj_kernel_fn k, tj_meta_fn m, tj_status st,
                           const char *message)
{
    int before = tj_op_count();
    int64_t live = live_allocations();
    tj_clear_error();
    cr_expect_null(tj_op_register(schema, kind, k, m), "%s", schema ? schema : "NULL");
    cr_expect_eq(tj_last_status(), st, "%s: %s", schema ? schema : "NULL", tj_last_error());
    cr_expect(strstr(tj_last_error(), message), "expected '%s' in: %s", message, tj_last_error());
    cr_expect_eq(tj_op_count(), before);
    cr_expect_eq(live_allocations(), live, "%s leaked", schema ? schema : "NULL");
}

#define K scaled_add_kernel
#define M scaled_add_meta

Test(library, malformed_schemas_are_parse_errors_that_quote_the_schema, .init = count_allocations)
{
    static const struct {
        const char *schema, *why;
    } bad[] = {
        {"mylib::f", "expected '(' after the name"},
        {"mylib::(Tensor x) -> Tensor", "expected a name after '::'"},
        {"mylib::f.(Tensor x) -> Tensor", "expected an overload name"},
        {"mylib::f.default(Tensor x) -> Tensor", "'default' names the overload without a name"},
        {"mylib::f(Tensor x -> Tensor", "expected ',' or ')'"},
        {"mylib::f(Tensor x,", "unterminated argument list"},
        {"mylib::f(Tensor x, ) -> Tensor", "expected the type of argument 1"},
        {"mylib::f(Foo x) -> Tensor", "unknown type 'Foo' of argument 0"},
        {"mylib::f(Tensor) -> Tensor", "argument 0 has no name"},
        {"mylib::f(Tensor x, Tensor x) -> Tensor", "two arguments named 'x'"},
        {"mylib::f(Tensor x, int n=abc) -> Tensor", "argument 'n': bad default 'abc'"},
        {"mylib::f(Tensor x, float a=None) -> Tensor", "argument 'a': default None for a type without '?'"},
        {"mylib::f(Tensor x, bool b=yes) -> Tensor", "argument 'b': bad default 'yes'"},
        {"mylib::f(Tensor x, int[2] k=[1, x]) -> Tensor", "argument 'k': bad default"},
        {"mylib::f(Tensor x, str s=none) -> Tensor", "argument 's': bad default"},
        {"mylib::f(Tensor x, int n=) -> Tensor", "'=' without a default"},
        {"mylib::f(Tensor x, *, *, int n) -> Tensor", "a second '*'"},
        {"mylib::f(int(a) x) -> Tensor", "an alias annotation on argument 0, which is not a Tensor"},
        {"mylib::f(Tensor x) Tensor", "expected '->' after the arguments"},
        {"mylib::f(Tensor x) -> Tensor, Tensor", "unexpected ', Tensor' after the returns"},
        {"mylib::f(Tensor x) -> (Tensor, Tensor", "expected ',' or ')' in the returns"},
        {"mylib::f(Tensor x) -> Foo", "unknown type 'Foo' of return 0"},
        {"", "expected an operator name"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        expect_refused(bad[i].schema, TJ_OP_PRIMITIVE, K, M, TJ_ERR_PARSE, bad[i].why);
        char quoted[160];
        snprintf(quoted, sizeof quoted, "tj_op_register: malformed schema \"%s\"", bad[i].schema);
        cr_expect(strstr(tj_last_error(), quoted), "%s", tj_last_error());
    }
}

Test(library, unsupported_schemas_are_refused_with_the_reason, .init = count_allocations)
{
    expect_refused("mylib::f(Tensor x) -> int", TJ_OP_PRIMITIVE, K, M, TJ_ERR_UNSUPPORTED,
                   "return 0 is 'int': only Tensor returns are supported");
    expect_refused("mylib::f(Tensor x) -> Tensor?", TJ_OP_PRIMITIVE, K, M, TJ_ERR_UNSUPPORTED, "only Tensor returns");
    expect_refused("mylib::f(Tensor x) -> ()", TJ_OP_PRIMITIVE, K, M, TJ_ERR_UNSUPPORTED, "without returns");
    expect_refused("mylib::f(Tensor x) -> Tensor[]", TJ_OP_PRIMITIVE, K, M, TJ_ERR_UNSUPPORTED,
                   "a Tensor[] return needs an implicit operator");
    /* Tensor?[] is supported (aten::index's indices), no other '?[]' */
    expect_refused("mylib::f(int?[] x) -> Tensor", TJ_OP_PRIMITIVE, K, M, TJ_ERR_UNSUPPORTED,
                   "lists of optional elements (int?[]) are not supported");
    expect_refused("mylib::f(str[] x) -> Tensor", TJ_OP_PRIMITIVE, K, M, TJ_ERR_UNSUPPORTED,
                   "lists of str (in argument 0) are not supported");
    expect_refused("mylib::f(Tensor x) -> (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor)", TJ_OP_PRIMITIVE, K, M,
                   TJ_ERR_UNSUPPORTED, "more than 5 returns");
    expect_refused("mylib::f(int a, int b, int c, int d, int e, int f, int g, int h, int i, int j, int k, int l, "
                   "int m, int n, int o, int p, int q, int r, int s, int t, int u) -> Tensor",
                   TJ_OP_PRIMITIVE, K, M, TJ_ERR_UNSUPPORTED, "more than 20 arguments");
    expect_refused("mylib::f(Tensor x, ScalarType t=float) -> Tensor", TJ_OP_PRIMITIVE, K, M, TJ_ERR_UNSUPPORTED,
                   "argument 't': only None can be its default");
}

Test(library, names_kinds_and_functions_are_checked, .init = count_allocations)
{
    expect_refused(NULL, TJ_OP_PRIMITIVE, K, M, TJ_ERR_INVALID_ARGUMENT, "tj_op_register: NULL schema");
    expect_refused("mylib::f(Tensor x) -> Tensor", (tj_op_kind)7, K, M, TJ_ERR_INVALID_ARGUMENT, "invalid kind 7");
    expect_refused("f(Tensor x) -> Tensor", TJ_OP_PRIMITIVE, K, M, TJ_ERR_INVALID_ARGUMENT,
                   "needs a namespace of your own, as in 'mylib::f'");
    expect_refused("aten::f(Tensor x) -> Tensor", TJ_OP_PRIMITIVE, K, M, TJ_ERR_INVALID_ARGUMENT,
                   "\"aten::f(Tensor x) -> Tensor\": the namespace 'aten' is the built-in operators'");
    expect_refused("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", TJ_OP_PRIMITIVE, K, M,
                   TJ_ERR_INVALID_ARGUMENT, "the namespace 'aten'");
    expect_refused(SCALED_ADD, TJ_OP_PRIMITIVE, K, M, TJ_ERR_INVALID_ARGUMENT,
                   "\"" SCALED_ADD "\": mylib::scaled_add is already registered");
    expect_refused("mylib::f(Tensor x) -> Tensor", TJ_OP_PRIMITIVE, NULL, M, TJ_ERR_INVALID_ARGUMENT,
                   "\"mylib::f(Tensor x) -> Tensor\": a primitive operator needs a kernel");
    expect_refused("mylib::f(Tensor x) -> Tensor", TJ_OP_COMPOSITE, K, NULL, TJ_ERR_INVALID_ARGUMENT,
                   "a composite operator needs a shape function");
    expect_refused("mylib::f(Tensor x) -> Tensor", TJ_OP_IMPLICIT, K, NULL, TJ_ERR_INVALID_ARGUMENT,
                   "an implicit operator has no kernel or shape function");
    expect_refused("mylib::a_name_longer_than_forty_seven_characters_is_refused_here(Tensor x) -> Tensor",
                   TJ_OP_PRIMITIVE, K, M, TJ_ERR_PARSE, "the name is longer than 47 characters");
    /* each refused name is free for a correct registration */
    cr_expect_not_null(tj_op_register("mylib::f(Tensor x) -> Tensor", TJ_OP_PRIMITIVE, K, M), "%s", tj_last_error());
}

Test(library, out_of_memory_during_registration_leaks_nothing, .init = count_allocations)
{
    const char *schema = "mylib::g(Tensor x, str mode=\"fast\") -> Tensor";
    const tj_op *op = NULL;
    int failures = 0;
    for (uint64_t n = 1; !op && n < 16; n++) {
        int64_t live = live_allocations();
        tj_debug_fail_allocation(n);
        op = tj_op_register(schema, TJ_OP_PRIMITIVE, K, M);
        tj_debug_fail_allocation(0);
        if (op) break;
        failures++;
        cr_expect_eq(tj_last_status(), TJ_ERR_OUT_OF_MEMORY, "%s", tj_last_error());
        cr_expect_eq(live_allocations(), live);
        cr_expect_null(tj_op_find("mylib::g"));
    }
    cr_expect_geq(failures, 2, "the record and its strings are allocated");
    cr_assert_not_null(op);
    cr_expect_str_eq(tj_op_schema(op), schema);
    cr_expect_str_eq(tj_op_find("mylib::g") ? "found" : "", "found");
}

/* The arguments the last call of mylib::defaults received. */
static tj_value seen[10];

static tj_status defaults_meta(const tj_value *args, tj_meta *outs)
{
    memcpy(seen, args, sizeof seen);
    return same_meta(args, outs);
}

Test(library, schema_defaults_of_every_type_complete_calls)
{
    const tj_op *op = tj_op_register("mylib::defaults(Tensor x, int n=-3, float f=1e-05, bool b=True, Scalar s=2.5, "
                                     "str mode='tanh', int[2] k=1, int[] d=[0, 1], *, ScalarType? dtype=None, "
                                     "Tensor? w=None) -> Tensor",
                                     TJ_OP_PRIMITIVE, copy_kernel, defaults_meta);
    cr_assert_not_null(op, "%s", tj_last_error());
    cr_expect_eq(tj_op_num_args(op), 10);
    tj_tensor *x = vec(2, (float[]){1, 2});
    tj_value a = tj_v_tensor(x), out;
    cr_assert_eq(tj_call("mylib::defaults", &a, 1, &out), TJ_OK, "%s", tj_last_error());
    cr_expect(seen[1].kind == TJ_V_INT && seen[1].u.i == -3);
    cr_expect(seen[2].kind == TJ_V_FLOAT && seen[2].u.f == 1e-05);
    cr_expect(seen[3].kind == TJ_V_BOOL && seen[3].u.b);
    cr_expect(seen[4].kind == TJ_V_FLOAT && seen[4].u.f == 2.5);
    cr_expect(seen[5].kind == TJ_V_STR && strcmp(seen[5].u.s, "tanh") == 0);
    cr_expect(seen[6].kind == TJ_V_INTS && seen[6].n == 2 && seen[6].u.ints[0] == 1 && seen[6].u.ints[1] == 1);
    cr_expect(seen[7].kind == TJ_V_INTS && seen[7].n == 2 && seen[7].u.ints[0] == 0 && seen[7].u.ints[1] == 1);
    cr_expect(seen[8].kind == TJ_V_NONE && seen[9].kind == TJ_V_NONE);
    /* the printer leaves defaults out and the parser puts them back */
    const char *text = "graph(%x : f32[2]):\n"
                       "    %a = mylib.defaults.default(%x)\n"
                       "    %b = mylib.defaults.default(%a, 4, 1e-05, True, 2.5, 'none', [1, 1], [0, 1], "
                       "dtype = torch.float64)\n"
                       "    return (%b,)\n";
    test_expect_round_trip(text);
}

/* ---- threads ---- */

#define N_THREADS 4
#define PER_THREAD 50

static void *register_many(void *arg)
{
    intptr_t t = (intptr_t)arg;
    for (int i = 0; i < PER_THREAD; i++) {
        char schema[96];
        snprintf(schema, sizeof schema, "threads::op_%d_%d(Tensor x) -> Tensor", (int)t, i);
        if (!tj_op_register(schema, TJ_OP_PRIMITIVE, copy_kernel, same_meta)) return (void *)1;
        /* lookups run while others register */
        snprintf(schema, sizeof schema, "threads::op_%d_%d", (int)t, i);
        if (!tj_op_find(schema) || !tj_op_find("mylib::scaled_add")) return (void *)1;
    }
    return NULL;
}

static atomic_int same_name_wins;

static void *register_same(void *arg)
{
    (void)arg;
    if (tj_op_register("threads::same(Tensor x) -> Tensor", TJ_OP_PRIMITIVE, copy_kernel, same_meta))
        atomic_fetch_add(&same_name_wins, 1);
    return NULL;
}

Test(library, registration_from_several_threads_loses_nothing)
{
    int before = tj_op_count();
    pthread_t th[N_THREADS];
    for (intptr_t t = 0; t < N_THREADS; t++) pthread_create(&th[t], NULL, register_many, (void *)t);
    for (int t = 0; t < N_THREADS; t++) {
        void *r;
        pthread_join(th[t], &r);
        cr_expect_null(r, "thread %d failed", t);
    }
    cr_expect_eq(tj_op_count(), before + N_THREADS * PER_THREAD);
    for (int i = before; i < tj_op_count(); i++) cr_expect_str_eq(tj_op_namespace(tj_op_at(i)), "threads");
    for (int t = 0; t < N_THREADS; t++) pthread_create(&th[t], NULL, register_same, NULL);
    for (int t = 0; t < N_THREADS; t++) pthread_join(th[t], NULL);
    cr_expect_eq(atomic_load(&same_name_wins), 1, "one registration of a name wins");
}

Test(library, the_registry_holds_a_bounded_number_of_user_operators)
{
    int i = 1; /* scaled_add is registered */
    for (; i < TJ_MAX_USER_OPS; i++) {
        char schema[64];
        snprintf(schema, sizeof schema, "full::op_%d(Tensor x) -> Tensor", i);
        cr_assert_not_null(tj_op_register(schema, TJ_OP_PRIMITIVE, copy_kernel, same_meta), "%d: %s", i,
                           tj_last_error());
    }
    cr_expect_null(tj_op_register("full::one_too_many(Tensor x) -> Tensor", TJ_OP_PRIMITIVE, copy_kernel, same_meta));
    cr_expect_eq(tj_last_status(), TJ_ERR_OVERFLOW);
    cr_expect(strstr(tj_last_error(), "the registry is full (1024 user operators)"), "%s", tj_last_error());
}

/* ---- str arguments in the graph's text and JSON ---- */

/* mylib::tagged(Tensor x, str tag): a copy of x; the tag (ctx) only
 * travels with the graph. */
static tj_status trace_tagged_fn(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    const tj_op *tagged = tj_op_find("mylib::tagged");
    if (!tagged)
        tagged = tj_op_register("mylib::tagged(Tensor x, str tag) -> Tensor", TJ_OP_PRIMITIVE, copy_kernel, same_meta);
    if (!tagged) return tj_last_status();
    tj_value a[2] = {tj_v_tensor(in[0]), tj_v_str(ctx)}, r;
    tj_status st = tj_dispatch(tagged, a, 2, &r);
    out[0] = r.u.t;
    *n_out = 1;
    return st;
}

static tj_graph *trace_tagged(const char *tag)
{
    tj_tensor *x = vec(2, (float[]){1, 2});
    tj_graph *g = tj_make_fx(trace_tagged_fn, (void *)tag, &x, 1, NULL, TJ_TRACE_REAL);
    cr_assert_not_null(g, "%s", tj_last_error());
    return g;
}

/* g's JSON without its spaces and newlines (jansson's layout). */
static char *compact_json(const tj_graph *g)
{
    char *buf = test_graph_json(g);
    char *w = buf;
    for (const char *r = buf; *r; r++)
        if (*r != ' ' && *r != '\n') *w++ = *r;
    *w = '\0';
    return buf;
}

Test(library, a_str_argument_that_is_not_utf8_is_exported_as_its_bytes)
{
    /* json_string refuses a string that is not UTF-8: the argument went
     * missing from "args", and nothing said so */
    tj_graph *g = trace_tagged("a\xff\xc3\xa9\x01");
    char *json = compact_json(g);
    const char *want = "\"args\":[{\"value\":\"arg0_1\"},{\"bytes\":[97,255,195,169,1]}]";
    cr_expect(strstr(json, want) != NULL, "%s lacks %s", json, want);
    free(json);
    tj_graph_free(g);
    /* UTF-8 stays a string, its control characters escaped */
    g = trace_tagged("\xc3\xa9\t");
    json = compact_json(g);
    want = "\"args\":[{\"value\":\"arg0_1\"},\"\xc3\xa9\\t\"]";
    cr_expect(strstr(json, want) != NULL, "%s lacks %s", json, want);
    free(json);
    tj_graph_free(g);
}

Test(library, a_str_argument_reads_back_from_the_text_whatever_it_holds)
{
    /* written between quotes as it was, a quote or a newline in it made
     * text that did not parse */
    static const struct {
        const char *tag, *written;
    } cases[] = {
        {"it's", "'it\\'s'"}, {"a\nb\r\tc", "'a\\nb\\r\\tc'"}, {"back\\slash", "'back\\\\slash'"},
        {"\x01\x7f", "'\\x01\\x7f'"}, {"\xff\xc3\xa9\xc3", "'\\xff\xc3\xa9\\xc3'"}, {"", "''"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tj_graph *g = trace_tagged(cases[i].tag);
        char *text = tj_graph_to_string(g), call[64];
        snprintf(call, sizeof call, "mylib.tagged.default(%%arg0_1, %s)\n", cases[i].written);
        cr_expect(strstr(text, call) != NULL, "case %zu: %s lacks %s", i, text, call);
        tj_graph *p = tj_graph_parse(text);
        cr_assert_not_null(p, "case %zu: %s", i, tj_last_error());
        char *again = tj_graph_to_string(p), *want = compact_json(g), *got = compact_json(p);
        cr_expect_str_eq(again, text, "case %zu", i);
        cr_expect_str_eq(got, want, "case %zu: the parsed graph holds the same string", i);
        free(text);
        free(again);
        free(want);
        free(got);
        tj_graph_free(g);
        tj_graph_free(p);
    }
    /* double quotes, as Python reads them too: the same string as in single ones */
    tj_graph *single = trace_tagged("it's \"q\"");
    char *printed = tj_graph_to_string(single);
    cr_expect(strstr(printed, "'it\\'s \"q\"'") != NULL, "%s", printed);
    tj_graph *dq = tj_graph_parse("graph(%arg0_1 : f32[2]):\n"
                                  "    %tagged = mylib.tagged.default(%arg0_1, \"it's \\\"q\\\"\")\n"
                                  "    return (%tagged,)\n");
    cr_assert_not_null(dq, "%s", tj_last_error());
    char *reprinted = tj_graph_to_string(dq);
    cr_expect_str_eq(reprinted, printed);
    free(printed);
    free(reprinted);
    tj_graph_free(single);
    tj_graph_free(dq);
    /* escapes the printer never writes are errors naming their place */
    static const struct {
        const char *arg, *needle;
    } bad[] = {{"'a\\qb'", "column 37: string: unknown escape"},
               {"'\\x0'", "column 36: string: \\x takes two hex digits"},
               {"'\\x00'", "column 36: string: \\x takes two hex digits, not 00"},
               {"'a\\'", "unterminated string"}, {"\"a'", "unterminated string"}};
    tj_graph_free(trace_tagged("registers the operator"));
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char text[160];
        snprintf(text, sizeof text, "graph(%%x : f32[2]):\n    %%y = mylib.tagged.default(%%x, %s)\n    return (%%y,)\n",
                 bad[i].arg);
        cr_expect_null(tj_graph_parse(text), "case %zu", i);
        cr_expect(strstr(tj_last_error(), bad[i].needle) != NULL, "case %zu: '%s' lacks '%s'", i, tj_last_error(),
                  bad[i].needle);
    }
}
