/* Operators without a derivative formula (the fused optimiser steps, which
 * PyTorch does not differentiate either) called on inputs that require
 * grad: as in PyTorch, the call runs and its results get a node (PyTorch's
 * NotImplemented) that fails only when a backward pass reaches it, naming
 * the operator and saying that tjit has no formula for it. So a traced
 * training step (forward, backward, update) runs through tj_graph_run with
 * parameters that require grad.
 *
 * Reference values: one SGD step (momentum 0.5, lr 0.5, no dampening or
 * weight decay) of
 *     p = [1, 2, 3, 4], grad = [0.5, -1, 2, 0.25], buf = [1, -0.5, 2, 0.75]:
 *     buf' = 0.5 buf + grad = [1, -1.25, 3, 0.625], p' = p - 0.5 buf'
 * (binary fractions with few bits: every path is exact). */
#include <criterion/criterion.h>
#include <string.h>

#include "models/step.h"
#include "test_util.h"

TestSuite(no_derivative, .init = test_scope_open, .fini = test_scope_close, .timeout = 300);

static const double P[4] = {1, 2, 3, 4}, GRAD[4] = {0.5, -1, 2, 0.25}, BUF[4] = {1, -0.5, 2, 0.75};
static const double NEW_P[4] = {0.5, 2.625, 1.5, 3.6875}, NEW_BUF[4] = {1, -1.25, 3, 0.625};

typedef struct sgd_case {
    tj_tensor *p, *grad, *buf; /**< parameter, gradient, momentum buffer */
    tj_tensor *out[2];         /**< new parameter, new momentum buffer */
} sgd_case;

/* The inputs above, each requiring grad when `grad` is set. */
static sgd_case sgd_inputs(bool grad)
{
    int64_t s[1] = {4};
    sgd_case c = {.p = test_f64(1, s, P), .grad = test_f64(1, s, GRAD), .buf = test_f64(1, s, BUF)};
    tj_tensor *in[3] = {c.p, c.grad, c.buf};
    for (int i = 0; i < 3 && grad; i++) cr_assert_eq(tj_tensor_set_requires_grad(in[i], true), TJ_OK);
    return c;
}

/* The step of c's inputs, both results; the test fails when the call does. */
static void sgd_step(sgd_case *c)
{
    cr_assert_eq(tj__fused_sgd_step(c->p, c->grad, c->buf, 0.5, 0.5, 0, 0, false, false, c->out), TJ_OK, "%s",
                 tj_last_error());
}

static void expect_reference_values(tj_tensor *const out[2])
{
    test_expect_close(out[0], NEW_P, 4, 0, 0);
    test_expect_close(out[1], NEW_BUF, 4, 0, 0);
}

/* The failure at backward: tjit's own, naming the operator. */
static void expect_not_implemented(tj_status st)
{
    cr_expect_eq(st, TJ_ERR_UNSUPPORTED);
    cr_expect(strstr(tj_last_error(), "aten::_fused_sgd_step: derivative not implemented"), "%s", tj_last_error());
    cr_expect(strstr(tj_last_error(), "tjit has no derivative formula for aten::_fused_sgd_step"), "%s",
              tj_last_error());
    cr_expect_null(strstr(tj_last_error(), "PyTorch"), "%s", tj_last_error());
}

Test(no_derivative, the_call_runs_and_its_results_require_grad)
{
    sgd_case plain = sgd_inputs(false), grad = sgd_inputs(true);
    sgd_step(&plain);
    sgd_step(&grad);
    expect_reference_values(plain.out);
    expect_reference_values(grad.out);
    for (int i = 0; i < 2; i++) {
        cr_expect(!tj_tensor_requires_grad(plain.out[i]));
        cr_expect(tj_tensor_requires_grad(grad.out[i]), "result %d", i);
        cr_expect(!tj_tensor_is_leaf(grad.out[i]), "result %d", i);
        test_expect_same(grad.out[i], plain.out[i], "with and without grad");
    }
    /* under no_grad nothing is recorded */
    bool prev = tj_no_grad_begin();
    sgd_case off = sgd_inputs(true);
    sgd_step(&off);
    tj_no_grad_end(prev);
    for (int i = 0; i < 2; i++) cr_expect(!tj_tensor_requires_grad(off.out[i]), "result %d", i);
}

Test(no_derivative, backward_reaching_the_call_fails_naming_the_operator)
{
    sgd_case c = sgd_inputs(true);
    sgd_step(&c);
    tj_tensor *loss = tj_sum(tj_mul_scalar(c.out[0], tj_v_float(2)), -1);
    cr_assert_not_null(loss, "%s", tj_last_error());
    expect_not_implemented(tj_backward(loss, NULL));
    cr_expect_null(tj_tensor_grad(c.p));
    cr_expect_null(tj_tensor_grad(c.grad));
    cr_expect_null(tj_tensor_grad(c.buf));
    /* tj_autograd_grad too, leaving no results */
    tj_tensor *g[2] = {c.p, c.p};
    tj_tensor *inputs[2] = {c.p, c.buf};
    expect_not_implemented(tj_autograd_grad(&loss, 1, NULL, inputs, 2, g));
    cr_expect_null(g[0]);
    cr_expect_null(g[1]);
    /* through another result of the same call as well */
    expect_not_implemented(tj_backward(tj_sum(c.out[1], -1), NULL));
}

/* Reference: d/dp sum(p * p + grad * p) = 2 p + grad, d/dgrad = p */
Test(no_derivative, backward_around_the_call_gives_gradients)
{
    sgd_case c = sgd_inputs(true);
    sgd_step(&c);
    /* a failed pass first: the tensors and the graph stay usable */
    expect_not_implemented(tj_backward(tj_sum(c.out[0], -1), NULL));
    tj_tensor *loss = tj_sum(tj_add(tj_mul(c.p, c.p), tj_mul(c.grad, c.p)), -1);
    cr_assert_not_null(loss, "%s", tj_last_error());
    cr_assert_eq(tj_backward(loss, NULL), TJ_OK, "%s", tj_last_error());
    test_expect_close(tj_tensor_grad(c.p), (double[]){2.5, 3, 8, 8.25}, 4, 0, 0);
    test_expect_close(tj_tensor_grad(c.grad), P, 4, 0, 0);
    cr_expect_null(tj_tensor_grad(c.buf));
    expect_reference_values(c.out);
}

/* The results themselves as the inputs of tj_autograd_grad: the pass stops
 * at them and never reaches the call (PyTorch's capture). */
Test(no_derivative, gradients_with_respect_to_its_results_do_not_reach_it)
{
    sgd_case c = sgd_inputs(true);
    sgd_step(&c);
    tj_tensor *loss = tj_sum(tj_mul(c.out[1], c.out[1]), -1), *g;
    cr_assert_not_null(loss, "%s", tj_last_error());
    cr_assert_eq(tj_autograd_grad(&loss, 1, NULL, &c.out[1], 1, &g), TJ_OK, "%s", tj_last_error());
    double want[4];
    for (int i = 0; i < 4; i++) want[i] = 2 * NEW_BUF[i];
    test_expect_close(g, want, 4, 0, 0);
}

Test(no_derivative, unused_results_need_no_backward)
{
    tj_scope *s = tj_scope_begin();
    sgd_case c = sgd_inputs(true);
    sgd_step(&c);
    tj_scope_end(s); /* results and their node go (ASan: nothing leaks) */
    sgd_case d = sgd_inputs(true);
    tj_tensor *loss = tj_sum(tj_mul(d.p, d.p), -1);
    cr_assert_eq(tj_backward(loss, NULL), TJ_OK, "%s", tj_last_error());
    test_expect_close(tj_tensor_grad(d.p), (double[]){2, 4, 6, 8}, 4, 0, 0);
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
        "graph(%p : f64[4], %g : f64[4], %b : f64[4]):\n"
        "    %getitem, %getitem_1 = aten._fused_sgd_step.default(%p, %g, %b, lr = 0.5, momentum = 0.5, "
        "dampening = 0.0, weight_decay = 0.0, nesterov = False, maximize = False)\n"
        "    return (%getitem, %getitem_1)\n");
    cr_assert_not_null(g, "%s", tj_last_error());
    sgd_case plain = sgd_inputs(false), grad = sgd_inputs(true);
    cr_assert_eq(tj_graph_run(g, (tj_tensor *[]){plain.p, plain.grad, plain.buf}, 3, plain.out), TJ_OK, "%s",
                 tj_last_error());
    cr_assert_eq(tj_graph_run(g, (tj_tensor *[]){grad.p, grad.grad, grad.buf}, 3, grad.out), TJ_OK, "%s",
                 tj_last_error());
    expect_reference_values(plain.out);
    expect_reference_values(grad.out);
    for (int i = 0; i < 2; i++) cr_expect(tj_tensor_requires_grad(grad.out[i]), "output %d", i);
    expect_not_implemented(tj_backward(tj_sum(grad.out[0], -1), NULL));
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
