/* Version counters (PyTorch's tensor._version): which writes bump them, and
 * autograd refusing gradients that need a saved value written in place since
 * the call, while still computing those that need only its shape. Expected
 * behaviour from PyTorch 1.13 ("one of the variables needed for gradient
 * computation has been modified by an inplace operation"). */
#include <criterion/criterion.h>
#include <string.h>

#include "test_util.h"

TestSuite(version, .init = test_scope_open, .fini = test_scope_close);

static tj_tensor *vec(int n, const double *v)
{
    int64_t s[1] = {n};
    return test_f64(1, s, v);
}

static tj_tensor *leaf(int n, const double *v)
{
    tj_tensor *t = vec(n, v);
    cr_assert_eq(tj_tensor_set_requires_grad(t, true), TJ_OK);
    return t;
}

/* Expects backward to fail with TJ_ERR_MODIFIED and a message holding each
 * of the fragments. */
static void expect_modified(tj_tensor *loss, const char *const *fragments, int n)
{
    cr_expect_eq(tj_backward(loss, NULL), TJ_ERR_MODIFIED, "%s", tj_last_error());
    for (int i = 0; i < n; i++)
        cr_expect(strstr(tj_last_error(), fragments[i]), "expected '%s' in: %s", fragments[i], tj_last_error());
}

Test(version, in_place_operators_bump_the_storage_version_shared_by_views)
{
    tj_tensor *x = vec(4, (double[]){1, 2, 3, 4});
    cr_expect_eq(tj_tensor_version(x), 0);
    tj_tensor *y = tj_add_scalar(x, tj_v_int(1));
    cr_expect_eq(tj_tensor_version(x), 0, "an out-of-place call writes nothing of x");
    cr_expect_eq(tj_tensor_version(y), 0);
    cr_assert_not_null(tj_add_scalar_(x, tj_v_int(1), tj_v_int(1)));
    cr_expect_eq(tj_tensor_version(x), 1);
    tj_tensor *v = tj_slice(x, 0, true, 1, true, 3, 1);
    cr_expect_eq(tj_tensor_version(v), 1, "a view shares its base's counter");
    cr_assert_not_null(tj_zero_(v));
    cr_expect_eq(tj_tensor_version(x), 2, "a write through the view bumps the base");
    cr_expect_eq(tj_tensor_version(tj_tensor_detach(x)), 2);
    /* a refused call writes nothing and keeps the version */
    tj_tensor *wrong = vec(3, (double[]){1, 2, 3});
    cr_expect_null(tj_add_(x, wrong, tj_v_int(1)));
    cr_expect_eq(tj_tensor_version(x), 2);
    cr_expect_eq(tj_tensor_version(NULL), 0);
}

/* x * w with x overwritten before backward: w's gradient would need the old
 * x (PyTorch: RuntimeError at backward). */
Test(version, backward_refuses_a_saved_argument_written_in_place)
{
    tj_tensor *x = vec(3, (double[]){1, 2, 3}), *w = leaf(3, (double[]){10, 20, 30});
    tj_tensor *loss = tj_sum(tj_mul(x, w), -1);
    cr_assert_not_null(tj_add_scalar_(x, tj_v_int(100), tj_v_int(1)));
    expect_modified(loss, (const char *[]){"aten::mul.Tensor", "argument 'self'", "f64[3]", "version 1, saved at version 0"},
                    4);
    cr_expect_null(tj_tensor_grad(w), "no gradient computed from the new x");
}

/* exp saves its result; doubling it under no_grad invalidates exp's
 * formula (PyTorch: the same error, "output 0 of ExpBackward0"). */
Test(version, backward_refuses_a_saved_result_written_in_place)
{
    tj_tensor *w = leaf(2, (double[]){0, 1});
    tj_tensor *y = tj_exp(w);
    bool prev = tj_no_grad_begin();
    cr_assert_not_null(tj_mul_scalar_(y, tj_v_int(2)));
    tj_no_grad_end(prev);
    expect_modified(tj_sum(y, -1), (const char *[]){"aten::exp", "return 0"}, 2);
}

/* Fake tensors (shape-only runs, fake-mode traces) count versions as real
 * ones: torch 1.13's fake-mode make_fx refuses this backward too. */
Test(version, a_fake_in_place_call_bumps_the_version_and_backward_refuses_its_saved_value)
{
    int64_t s[1] = {3};
    tj_tensor *x = tj_tensor_fake(TJ_FLOAT64, 1, s);
    cr_assert_eq(tj_mul_scalar_(x, tj_v_int(2)), x, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_version(x), 1);
    tj_tensor *w = tj_tensor_fake(TJ_FLOAT64, 1, s);
    cr_assert_eq(tj_tensor_set_requires_grad(w, true), TJ_OK);
    tj_tensor *y = tj_sigmoid(tj_mul_scalar(w, tj_v_int(1)));
    cr_assert_not_null(tj_mul_scalar_(y, tj_v_int(3)), "%s", tj_last_error());
    expect_modified(tj_sum(y, -1), (const char *[]){"aten::sigmoid", "return 0"}, 2);
}

/* An optimiser-like update of a parameter between forward and backward:
 * mm saved the parameter to differentiate the other operand. */
Test(version, parameter_updated_before_backward_is_refused_where_its_value_is_needed)
{
    int64_t s[2] = {2, 2};
    tj_tensor *x = test_f64(2, s, (double[]){1, 2, 3, 4}), *p = test_f64(2, s, (double[]){1, 0, 0, 1});
    cr_assert_eq(tj_tensor_set_requires_grad(x, true), TJ_OK);
    cr_assert_eq(tj_tensor_set_requires_grad(p, true), TJ_OK);
    tj_tensor *loss = tj_sum(tj_mm(x, p), -1);
    bool prev = tj_no_grad_begin();
    cr_assert_not_null(tj_sub_(p, tj_ones(s, 2, TJ_FLOAT64), tj_v_float(0.1)));
    tj_no_grad_end(prev);
    expect_modified(loss, (const char *[]){"aten::mm", "argument 'mat2'"}, 2);
}

/* When only p requires grad, mm needs x's values and p's layout alone: p may
 * change (PyTorch saves only x then). Reference: d/dp sum(x @ p) = x^T 1. */
Test(version, saved_tensor_whose_values_the_formula_does_not_read_may_change)
{
    int64_t s[2] = {2, 2};
    tj_tensor *x = test_f64(2, s, (double[]){1, 2, 3, 4}), *p = test_f64(2, s, (double[]){1, 0, 0, 1});
    cr_assert_eq(tj_tensor_set_requires_grad(p, true), TJ_OK);
    tj_tensor *loss = tj_sum(tj_mm(x, p), -1);
    bool prev = tj_no_grad_begin();
    cr_assert_not_null(tj_mul_scalar_(p, tj_v_int(3)));
    tj_no_grad_end(prev);
    cr_assert_eq(tj_backward(loss, NULL), TJ_OK, "%s", tj_last_error());
    test_expect_close(tj_tensor_grad(p), (double[]){4, 4, 6, 6}, 4, 0, 1e-12);
}

/* add and cat read only shapes of their saved inputs: overwriting x after
 * the calls leaves the gradients as PyTorch computes them. */
Test(version, shape_only_formulas_accept_overwritten_inputs)
{
    tj_tensor *x = vec(2, (double[]){1, 2}), *w = leaf(2, (double[]){3, 4});
    tj_tensor *sum = tj_add(x, w);
    tj_tensor *cat = tj_cat((tj_tensor *[]){x, w}, 2, 0);
    tj_tensor *loss = tj_add(tj_sum(sum, -1), tj_sum(tj_mul_scalar(cat, tj_v_int(2)), -1));
    cr_assert_not_null(tj_fill_(x, tj_v_int(7)));
    cr_assert_eq(tj_backward(loss, NULL), TJ_OK, "%s", tj_last_error());
    test_expect_close(tj_tensor_grad(w), (double[]){3, 3}, 2, 0, 0);
}

/* A plan writing its result back into an input bumps that input's version,
 * as the in-place operators it stands for would. */
static tj_status fn_sgd(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_sub(in[0], tj_mul_scalar(in[1], tj_v_float(0.5)));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(version, plan_runs_bump_the_inputs_and_outputs_they_write)
{
    tj_tensor *p = vec(2, (double[]){1, 2}), *g = vec(2, (double[]){2, 2});
    tj_graph *graph = tj_make_fx(fn_sgd, NULL, (tj_tensor *[]){p, g}, 2, NULL, TJ_TRACE_REAL);
    cr_assert_not_null(graph, "%s", tj_last_error());
    int wb[1] = {0};
    tj_compile_options o = {.writeback = wb};
    tj_plan *plan = tj_compile(graph, &o);
    cr_assert_not_null(plan, "%s", tj_last_error());
    tj_tensor *out[1];
    cr_assert_eq(tj_plan_run(plan, (tj_tensor *[]){p, g}, 2, out), TJ_OK, "%s", tj_last_error());
    test_expect_close(p, (double[]){0, 1}, 2, 0, 0);
    cr_expect_eq(tj_tensor_version(p), 1);
    cr_expect_eq(tj_tensor_version(g), 0, "read only");
    tj_compile_options plain = {0};
    tj_plan *into = tj_compile(graph, &plain);
    cr_assert_not_null(into, "%s", tj_last_error());
    tj_tensor *dst = vec(2, (double[]){0, 0});
    cr_assert_eq(tj_plan_run_into(into, (tj_tensor *[]){p, g}, 2, &dst), TJ_OK, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_version(dst), 1);
    cr_expect_eq(tj_tensor_version(p), 1, "not written back by this plan");
    tj_plan_free(into);
    tj_plan_free(plan);
    tj_graph_free(graph);
}

/* A result kept in the context (tj_plan_context_output) is overwritten by the
 * next run: a gradient needing the value autograd saved from it is refused. */
Test(version, a_context_output_saved_by_autograd_is_caught_after_the_next_run)
{
    tj_tensor *p = vec(2, (double[]){1, 2}), *g = vec(2, (double[]){2, 2});
    tj_graph *graph = tj_make_fx(fn_sgd, NULL, (tj_tensor *[]){p, g}, 2, NULL, TJ_TRACE_REAL);
    cr_assert_not_null(graph, "%s", tj_last_error());
    tj_plan *plan = tj_compile(graph, NULL);
    cr_assert_not_null(plan, "%s", tj_last_error());
    tj_plan_context *c = tj_plan_default_context(plan);
    cr_assert_eq(tj_plan_run_into(plan, (tj_tensor *[]){p, g}, 2, NULL), TJ_OK, "%s", tj_last_error());
    tj_tensor *y = tj_plan_context_output(c, 0);
    cr_expect_eq(tj_tensor_version(y), 1);
    tj_tensor *w = leaf(2, (double[]){3, 4});
    tj_tensor *loss = tj_sum(tj_mul(w, y), -1);
    cr_assert_eq(tj_plan_run_into(plan, (tj_tensor *[]){g, p}, 2, NULL), TJ_OK, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_version(y), 2);
    cr_expect_eq(tj_tensor_version(g), 0, "an input only read");
    expect_modified(loss, (const char *[]){"aten::mul.Tensor", "argument 'other'", "version 2, saved at version 1"}, 3);
    tj_plan_free(plan);
    tj_graph_free(graph);
}

/* loss = sum(2x) + sum(exp(y)) with exp's result doubled in place: the pass
 * fails at exp, and x, whose gradient needs nothing saved, gets no .grad
 * either (leaves are written only once the whole pass has run). */
Test(version, a_failing_pass_stores_no_gradient_into_any_leaf)
{
    tj_tensor *x = leaf(2, (double[]){1, 2}), *y = leaf(2, (double[]){0, 1});
    tj_tensor *r = tj_exp(y);
    tj_tensor *loss = tj_add(tj_sum(tj_mul_scalar(x, tj_v_int(2)), -1), tj_sum(r, -1));
    cr_assert_not_null(loss, "%s", tj_last_error());
    cr_assert_not_null(tj_mul_scalar_(r, tj_v_int(2)));
    expect_modified(loss, (const char *const[]){"aten::exp"}, 1);
    cr_expect_null(tj_tensor_grad(x));
    cr_expect_null(tj_tensor_grad(y));
}
