/* Operators without a derivative formula (convolution_backward and the
 * fused optimiser steps) called on inputs that require grad: as in PyTorch,
 * the call runs and its results get a node (PyTorch's NotImplemented) that fails
 * only when a backward pass reaches it, naming the operator and saying that
 * tjit has no formula for it (PyTorch has one for convolution_backward).
 * So a traced training step (forward, backward, update) runs through
 * tj_graph_run with parameters that require grad.
 *
 * Reference values: PyTorch 1.13 (/usr/bin/python3), float64, for
 *     x = [[[[1,2,3],[4,5,6],[7,8,9]]]], w = [[[[0.5,-1],[2,0.25]]]],
 *     go = [[[[1,-0.5],[2,0.75]]]]
 *     torch.ops.aten.convolution_backward(go, x, w, [1], [1,1], [0,0], [1,1],
 *                                         False, [0,0], 1, [True]*3)
 * (all binary fractions with few bits: every path is exact). */
#include <criterion/criterion.h>
#include <string.h>

#include "models/step.h"
#include "test_util.h"

TestSuite(no_derivative, .init = test_scope_open, .fini = test_scope_close, .timeout = 300);

static const double X[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, W[4] = {0.5, -1, 2, 0.25}, GO[4] = {1, -0.5, 2, 0.75};
static const double GRAD_INPUT[9] = {0.5, -1.25, 0.5, 3.0, -2.375, -0.875, 4.0, 2.0, 0.1875};
static const double GRAD_WEIGHT[4] = {11.75, 15.0, 21.5, 24.75}, GRAD_BIAS[1] = {3.25};

typedef struct conv_case {
    tj_tensor *go, *x, *w;   /**< grad_output, input, weight */
    tj_tensor *out[3];       /**< grad_input, grad_weight, grad_bias */
} conv_case;

/* The inputs above, each requiring grad when `grad` is set. */
static conv_case conv_inputs(bool grad)
{
    conv_case c = {
        .go = test_f64(4, (int64_t[]){1, 1, 2, 2}, GO),
        .x = test_f64(4, (int64_t[]){1, 1, 3, 3}, X),
        .w = test_f64(4, (int64_t[]){1, 1, 2, 2}, W),
    };
    tj_tensor *in[3] = {c.go, c.x, c.w};
    for (int i = 0; i < 3 && grad; i++) cr_assert_eq(tj_tensor_set_requires_grad(in[i], true), TJ_OK);
    return c;
}

/* convolution_backward of c's inputs (stride 1, no padding), all three
 * results; the test fails when the call does. */
static void conv_backward(conv_case *c)
{
    const int64_t one[2] = {1, 1}, zero[2] = {0, 0}, bias_sizes[1] = {1};
    const bool mask[3] = {true, true, true};
    cr_assert_eq(tj_convolution_backward(c->go, c->x, c->w, bias_sizes, 1, one, zero, one, false, zero, 1, mask,
                                         &c->out[0], &c->out[1], &c->out[2]),
                 TJ_OK, "%s", tj_last_error());
}

static void expect_reference_values(tj_tensor *const out[3])
{
    test_expect_close(out[0], GRAD_INPUT, 9, 0, 0);
    test_expect_close(out[1], GRAD_WEIGHT, 4, 0, 0);
    test_expect_close(out[2], GRAD_BIAS, 1, 0, 0);
}

/* The failure at backward: tjit's own (PyTorch 1.13 differentiates
 * convolution_backward: the message must not claim otherwise). */
static void expect_not_implemented(tj_status st)
{
    cr_expect_eq(st, TJ_ERR_UNSUPPORTED);
    cr_expect(strstr(tj_last_error(), "aten::convolution_backward: derivative not implemented"), "%s",
              tj_last_error());
    cr_expect(strstr(tj_last_error(), "tjit has no derivative formula for aten::convolution_backward"), "%s",
              tj_last_error());
    cr_expect_null(strstr(tj_last_error(), "PyTorch"), "%s", tj_last_error());
}

Test(no_derivative, the_call_runs_and_its_results_require_grad)
{
    conv_case plain = conv_inputs(false), grad = conv_inputs(true);
    conv_backward(&plain);
    conv_backward(&grad);
    expect_reference_values(plain.out);
    expect_reference_values(grad.out);
    for (int i = 0; i < 3; i++) {
        cr_expect(!tj_tensor_requires_grad(plain.out[i]));
        cr_expect(tj_tensor_requires_grad(grad.out[i]), "result %d", i);
        cr_expect(!tj_tensor_is_leaf(grad.out[i]), "result %d", i);
        test_expect_same(grad.out[i], plain.out[i], "with and without grad");
    }
    /* under no_grad nothing is recorded */
    bool prev = tj_no_grad_begin();
    conv_case off = conv_inputs(true);
    conv_backward(&off);
    tj_no_grad_end(prev);
    for (int i = 0; i < 3; i++) cr_expect(!tj_tensor_requires_grad(off.out[i]), "result %d", i);
}

Test(no_derivative, backward_reaching_the_call_fails_naming_the_operator)
{
    conv_case c = conv_inputs(true);
    conv_backward(&c);
    tj_tensor *loss = tj_sum(tj_mul_scalar(c.out[1], tj_v_float(2)), -1);
    cr_assert_not_null(loss, "%s", tj_last_error());
    expect_not_implemented(tj_backward(loss, NULL));
    cr_expect_null(tj_tensor_grad(c.x));
    cr_expect_null(tj_tensor_grad(c.w));
    cr_expect_null(tj_tensor_grad(c.go));
    /* tj_autograd_grad too, leaving no results */
    tj_tensor *g[2] = {c.x, c.x};
    tj_tensor *inputs[2] = {c.x, c.w};
    expect_not_implemented(tj_autograd_grad(&loss, 1, NULL, inputs, 2, g));
    cr_expect_null(g[0]);
    cr_expect_null(g[1]);
    /* through another result of the same call as well */
    expect_not_implemented(tj_backward(tj_sum(c.out[2], -1), NULL));
}

/* Reference: d/dw sum(w * w + x[0:2, 0:2] * w) = 2 w + x[0:2, 0:2] */
Test(no_derivative, backward_around_the_call_gives_gradients)
{
    conv_case c = conv_inputs(true);
    conv_backward(&c);
    /* a failed pass first: the tensors and the graph stay usable */
    expect_not_implemented(tj_backward(tj_sum(c.out[0], -1), NULL));
    tj_tensor *corner = tj_slice(tj_slice(c.x, 2, true, 0, true, 2, 1), 3, true, 0, true, 2, 1);
    tj_tensor *loss = tj_sum(tj_add(tj_mul(c.w, c.w), tj_mul(corner, c.w)), -1);
    cr_assert_not_null(loss, "%s", tj_last_error());
    cr_assert_eq(tj_backward(loss, NULL), TJ_OK, "%s", tj_last_error());
    test_expect_close(tj_tensor_grad(c.w), (double[]){2 * 0.5 + 1, 2 * -1. + 2, 2 * 2. + 4, 2 * 0.25 + 5}, 4, 0, 0);
    test_expect_close(tj_tensor_grad(c.x), (double[]){0.5, -1, 0, 2, 0.25, 0, 0, 0, 0}, 9, 0, 0);
    cr_expect_null(tj_tensor_grad(c.go));
    expect_reference_values(c.out);
}

/* The results themselves as the inputs of tj_autograd_grad: the pass stops
 * at them and never reaches the call (PyTorch's capture). */
Test(no_derivative, gradients_with_respect_to_its_results_do_not_reach_it)
{
    conv_case c = conv_inputs(true);
    conv_backward(&c);
    tj_tensor *loss = tj_sum(tj_mul(c.out[1], c.out[1]), -1), *g;
    cr_assert_not_null(loss, "%s", tj_last_error());
    cr_assert_eq(tj_autograd_grad(&loss, 1, NULL, &c.out[1], 1, &g), TJ_OK, "%s", tj_last_error());
    double want[4];
    for (int i = 0; i < 4; i++) want[i] = 2 * GRAD_WEIGHT[i];
    test_expect_close(g, want, 4, 0, 0);
}

Test(no_derivative, unused_results_need_no_backward)
{
    tj_scope *s = tj_scope_begin();
    conv_case c = conv_inputs(true);
    conv_backward(&c);
    tj_scope_end(s); /* results and their node go (ASan: nothing leaks) */
    conv_case d = conv_inputs(true);
    tj_tensor *loss = tj_sum(tj_mul(d.w, d.w), -1);
    cr_assert_eq(tj_backward(loss, NULL), TJ_OK, "%s", tj_last_error());
    test_expect_close(tj_tensor_grad(d.w), (double[]){1, -2, 4, 0.5}, 4, 0, 0);
}

/* Two calls without a formula in a row: the pass fails at the later one,
 * the first it reaches. An SGD step with a zero momentum buffer (x - 0.5
 * grad, exact), then an AdamW step at step 1, whose bias-corrected update
 * is lr * grad / (|grad| + eps): p - 0.25 sign(grad) to eps. */
Test(no_derivative, a_chain_of_such_calls_fails_at_the_last_one)
{
    int64_t s[1] = {4};
    tj_tensor *x = test_f64(1, s, (double[]){-1, 2, -3, 4}), *grad = test_f64(1, s, (double[]){0.5, -1, 2, -0.25});
    tj_tensor *sgd[2], *adamw[4];
    cr_assert_eq(tj_tensor_set_requires_grad(x, true), TJ_OK);
    cr_assert_eq(tj__fused_sgd_step(x, grad, tj_zeros(s, 1, TJ_FLOAT64), 0.5, 0.9, 0, 0, false, false, sgd), TJ_OK,
                 "%s", tj_last_error());
    test_expect_close(sgd[0], (double[]){-1.25, 2.5, -4, 4.125}, 4, 0, 0);
    cr_assert_eq(tj__fused_adamw_step(sgd[0], grad, tj_zeros(s, 1, TJ_FLOAT64), tj_zeros(s, 1, TJ_FLOAT64), NULL,
                                      tj_ones((int64_t[]){1}, 1, TJ_FLOAT64), 0.25, 0.9, 0.999, 0, 1e-8, adamw),
                 TJ_OK, "%s", tj_last_error());
    test_expect_close(adamw[0], (double[]){-1.5, 2.75, -4.25, 4.375}, 4, 1e-6, 0);
    cr_assert(tj_tensor_requires_grad(adamw[0]));
    cr_expect_eq(tj_backward(tj_sum(adamw[0], -1), NULL), TJ_ERR_UNSUPPORTED);
    cr_expect(strstr(tj_last_error(), "aten::_fused_adamw_step: derivative not implemented"), "%s", tj_last_error());
    cr_expect_null(tj_tensor_grad(x));
}

/* The same graph as printed by make_fx, through the interpreter. */
Test(no_derivative, a_graph_run_records_the_call_and_backward_through_it_fails)
{
    tj_graph *g = tj_graph_parse(
        "graph(%go : f64[1, 1, 2, 2], %x : f64[1, 1, 3, 3], %w : f64[1, 1, 2, 2]):\n"
        "    %getitem, %getitem_1, %getitem_2 = aten.convolution_backward.default(%go, %x, %w, [1], [1, 1], "
        "[0, 0], [1, 1], False, [0, 0], 1, [True, True, True])\n"
        "    return (%getitem, %getitem_1, %getitem_2)\n");
    cr_assert_not_null(g, "%s", tj_last_error());
    conv_case plain = conv_inputs(false), grad = conv_inputs(true);
    cr_assert_eq(tj_graph_run(g, (tj_tensor *[]){plain.go, plain.x, plain.w}, 3, plain.out), TJ_OK, "%s",
                 tj_last_error());
    cr_assert_eq(tj_graph_run(g, (tj_tensor *[]){grad.go, grad.x, grad.w}, 3, grad.out), TJ_OK, "%s",
                 tj_last_error());
    expect_reference_values(plain.out);
    expect_reference_values(grad.out);
    for (int i = 0; i < 3; i++) cr_expect(tj_tensor_requires_grad(grad.out[i]), "output %d", i);
    expect_not_implemented(tj_backward(tj_sum(grad.out[1], -1), NULL));
    tj_graph_free(g);
}

/* A model's traced training step (forward, loss, backward with
 * convolution_backward and friends, fused SGD update) run by the
 * interpreter twice from the same start: once on plain inputs, once with
 * every float input (parameters, momentum buffers, the batch) requiring
 * grad. Loss, parameters and momentum buffers after each step match bit for
 * bit, and the steps do change the parameters. */
static void expect_training_step_with_grad_inputs(const char *name, int ndim, const int64_t *x_shape)
{
    model m;
    train_state state;
    cr_assert_eq(model_create(model_find(name), 0, &m), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(train_state_init(&m, &state), TJ_OK, "%s", tj_last_error());
    tj_graph *g = step_trace(&m, STEP_TRAIN, x_shape[0], NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_tensor *x = test_random_f32(ndim, x_shape, 7);
    tj_tensor *y = test_i64(1, x_shape, (int64_t[]){0, 1, 2, 3, 4, 5, 6, 7});
    tj_tensor *in[3 * MODEL_MAX_PARAMS + 2], *plain[3 * MODEL_MAX_PARAMS + 2], *grad[3 * MODEL_MAX_PARAMS + 2];
    int n = step_inputs(&m, &state, x, y, in);
    for (int i = 0; i < n; i++) {
        plain[i] = tj_clone(in[i]);
        grad[i] = tj_clone(in[i]);
    }
    for (int i = 0; i < n; i++)
        if (tj_tensor_dtype(grad[i]) == TJ_FLOAT32) cr_assert_eq(tj_tensor_set_requires_grad(grad[i], true), TJ_OK);
    for (int step = 0; step < 2; step++) {
        tj_tensor *out_plain[3 * MODEL_MAX_PARAMS + 1], *out_grad[3 * MODEL_MAX_PARAMS + 1];
        cr_assert_eq(tj_graph_run(g, plain, n, out_plain), TJ_OK, "%s", tj_last_error());
        cr_assert_eq(tj_graph_run(g, grad, n, out_grad), TJ_OK, "%s: step %d: %s", name, step, tj_last_error());
        test_expect_same(out_grad[0], out_plain[0], "loss");
        /* the step returns detach(loss), recorded as aten.detach: no history,
         * as the eager step's loss */
        cr_expect(!tj_tensor_requires_grad(out_grad[0]), "%s: the loss is detached", name);
        for (int i = 0; i < n; i++) test_expect_same(grad[i], plain[i], "parameters and state after the step");
    }
    for (int i = 0; i < m.n_params; i++) {
        tj_tensor *change = tj_sum(tj_abs(tj_sub(grad[i], in[i])), -1);
        cr_expect_gt(tj_tensor_item_at(change, 0), 0, "%s: parameter %d moved", name, i);
    }
    tj_graph_free(g);
    train_state_free(&state);
    model_free(&m);
}

Test(no_derivative, a_traced_cnn_training_step_runs_with_parameters_requiring_grad)
{
    expect_training_step_with_grad_inputs("cnn", 4, (int64_t[]){8, 1, 28, 28});
}

Test(no_derivative, a_traced_mlp_training_step_runs_with_parameters_requiring_grad)
{
    expect_training_step_with_grad_inputs("mlp", 2, (int64_t[]){8, 784});
}
