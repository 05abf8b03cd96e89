/* Double backward through the backward operators: a traced training step
 * (y = f(x, ...), g_i = grad(sum(y * c), x_i), captured by tj_make_fx in
 * real mode) run by tj_graph_run on the x_i and c requiring grad records the
 * backward operator its graph holds (elu_backward, native_layer_norm_backward,
 * convolution_backward, ...), and a second tj_autograd_grad of sum_i sum(g_i
 * * c2_i) differentiates it with respect to every x_i (input, weight, bias)
 * and c (its grad_output). That double backward is also traced (fake mode),
 * compiled and run by a plan, which must match eager; and traced on inputs
 * requiring grad and replayed on such inputs, where a third tj_autograd_grad
 * must run (the formulas are written with differentiable operators).
 *
 * Reference values: PyTorch 1.13, float64, torch.autograd.grad with
 * create_graph=True, written by tests/make_double_backward_refs.py into
 * tests/double_backward_ref.h (hardsigmoid_backward, which 1.13 does not
 * differentiate, from its closed form there). The inputs hold both sides of
 * every kink and the kinks themselves. */
#include <criterion/criterion.h>
#include <string.h>

#include "double_backward_ref.h"
#include "test_util.h"

TestSuite(double_backward, .init = test_scope_open, .fini = test_scope_close, .timeout = 300);

typedef tj_tensor *(*forward_fn)(tj_tensor *x);
/** a forward of several inputs (input, weight, bias) */
typedef tj_tensor *(*forward_n_fn)(tj_tensor *const *x);

typedef struct dbl_case {
    const char *name;
    forward_fn f;
    const char *backward_op; /**< what the trace must hold */
    int ndim, yndim;
    int64_t shape[2], yshape[2]; /**< x's (and c2's), y's (and c's) */
    const double *x, *c, *c2, *g, *ggx, *ggc;
} dbl_case;

#define MAX_IN 3

/** One forward input: its shape and values, the weight c2 of its first
 * gradient g in the second loss, and its second-order gradient gg. */
typedef struct dbl_input {
    int ndim;
    int64_t shape[4];
    const double *x, *c2, *g, *gg;
} dbl_input;

/** A case of y = f(x_0, ..., x_{n-1}): the first gradients g_i of sum(y *
 * c), then the gradients of sum_i sum(g_i * c2_i) with respect to every x_i
 * and to c (ggc). */
typedef struct dbl_multi {
    const char *name;
    forward_n_fn f;
    forward_fn f1; /**< instead of f, for one input */
    const char *backward_op;
    int n;
    dbl_input in[MAX_IN];
    int yndim;
    int64_t yshape[4];
    const double *c, *ggc;
} dbl_multi;

static int64_t count(int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d];
    return n;
}

static tj_tensor *forward(const dbl_multi *k, tj_tensor *const *x) { return k->f ? k->f(x) : k->f1(x[0]); }

/* g_i = grad(sum(f(x) * c), x_i) on in = {x_0, ..., x_{n-1}, c}; the x_i
 * require grad. */
static tj_status step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    const dbl_multi *k = ctx;
    tj_tensor *loss = tj_sum(tj_mul(forward(k, in), in[k->n]), -1);
    *n_out = k->n;
    return loss ? tj_autograd_grad(&loss, 1, NULL, (tj_tensor **)in, k->n, out) : tj_last_status();
}

/* The second-order gradients of sum_i sum(g_i * c2_i) with respect to
 * every x_i and c (in = {x..., c}), zeros where the loss does not depend on
 * one (tj_autograd_grad's NULL, PyTorch's None). */
static tj_status second_order(const dbl_multi *k, tj_tensor *const *g, tj_tensor *const *in, tj_tensor *const *c2,
                              tj_tensor **gg)
{
    tj_tensor *loss = tj_sum(tj_mul(g[0], c2[0]), -1);
    for (int i = 1; i < k->n; i++) loss = tj_add(loss, tj_sum(tj_mul(g[i], c2[i]), -1));
    if (!loss) return tj_last_status();
    tj_status st = tj_autograd_grad(&loss, 1, NULL, in, k->n + 1, gg);
    for (int i = 0; st == TJ_OK && i <= k->n; i++)
        if (!gg[i] && !(gg[i] = tj_zeros_like(in[i], TJ_DTYPE_NONE))) st = tj_last_status();
    return st;
}

/* A traced first backward (step's graph) replayed on fresh leaves made of in
 * = {x..., c, c2...}, then differentiated again: out = the n + 1 gradients
 * of second_order (the double backward, as eager code or traced whole). */
typedef struct replay {
    const dbl_multi *k;
    const tj_graph *first;
    bool on_inputs; /**< the x and c themselves (they require grad), not fresh leaves */
} replay;

static tj_status double_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    const replay *r = ctx;
    const dbl_multi *k = r->k;
    tj_tensor *leaves[MAX_IN + 1], *g[MAX_IN];
    for (int i = 0; i <= k->n; i++) {
        if (r->on_inputs) {
            leaves[i] = in[i];
            continue;
        }
        leaves[i] = tj_tensor_detach(in[i]);
        if (!leaves[i]) return tj_last_status();
        tj_status st = tj_tensor_set_requires_grad(leaves[i], true);
        if (st != TJ_OK) return st;
    }
    *n_out = k->n + 1;
    tj_status st = tj_graph_run(r->first, leaves, k->n + 1, g);
    return st == TJ_OK ? second_order(k, g, leaves, in + k->n + 1, out) : st;
}

static void expect_second_order(const dbl_multi *k, tj_tensor *const *gg)
{
    for (int i = 0; i < k->n; i++) {
        test_assert_dtype_shape(gg[i], TJ_FLOAT64, k->in[i].ndim, k->in[i].shape);
        test_expect_close(gg[i], k->in[i].gg, count(k->in[i].ndim, k->in[i].shape), 1e-12, 1e-14);
    }
    test_assert_dtype_shape(gg[k->n], TJ_FLOAT64, k->yndim, k->yshape);
    test_expect_close(gg[k->n], k->ggc, count(k->yndim, k->yshape), 1e-12, 1e-14);
}

/* The inputs {x..., c} (requiring grad when `grad`), then the c2... */
static void make_inputs(const dbl_multi *k, bool grad, tj_tensor **in)
{
    for (int i = 0; i < k->n; i++) {
        in[i] = test_f64(k->in[i].ndim, k->in[i].shape, k->in[i].x);
        in[k->n + 1 + i] = test_f64(k->in[i].ndim, k->in[i].shape, k->in[i].c2);
    }
    in[k->n] = test_f64(k->yndim, k->yshape, k->c);
    for (int i = 0; grad && i <= k->n; i++) cr_assert_eq(tj_tensor_set_requires_grad(in[i], true), TJ_OK);
}

/* The first backward traced (make_fx, real mode) and run by tj_graph_run on
 * inputs requiring grad, then differentiated again; and that double
 * backward traced (fake mode), compiled and run by a plan, against eager. */
static void expect_multi(const dbl_multi *k)
{
    cr_log_info("%s", k->name);
    tj_tensor *in[2 * MAX_IN + 1], *g[MAX_IN], *gg[MAX_IN + 1];
    make_inputs(k, false, in);
    for (int i = 0; i < k->n; i++) cr_assert_eq(tj_tensor_set_requires_grad(in[i], true), TJ_OK);
    tj_graph *graph = tj_make_fx(step, (void *)k, in, k->n + 1, NULL, TJ_TRACE_REAL);
    cr_assert_not_null(graph, "%s: %s", k->name, tj_last_error());
    cr_expect_geq(tj_graph_count_op(graph, tj_op_find(k->backward_op)), 1, "%s: no %s", k->name, k->backward_op);

    make_inputs(k, true, in);
    cr_assert_eq(tj_graph_run(graph, in, k->n + 1, g), TJ_OK, "%s: %s", k->name, tj_last_error());
    for (int i = 0; i < k->n; i++) {
        test_expect_close(g[i], k->in[i].g, count(k->in[i].ndim, k->in[i].shape), 1e-13, 1e-15);
        cr_assert(tj_tensor_requires_grad(g[i]), "%s", k->name);
    }
    cr_assert_eq(second_order(k, g, in, in + k->n + 1, gg), TJ_OK, "%s: %s", k->name, tj_last_error());
    expect_second_order(k, gg);

    /* the double backward traced, compiled */
    replay r = {k, graph, false};
    int n_in = 2 * k->n + 1, n_out;
    tj_tensor *fake[2 * MAX_IN + 1], *eager[MAX_IN + 1], *planned[MAX_IN + 1];
    make_inputs(k, false, in);
    for (int i = 0; i < n_in; i++) fake[i] = tj_tensor_fake(TJ_FLOAT64, tj_tensor_ndim(in[i]), tj_tensor_shape(in[i]));
    tj_graph *second = tj_make_fx(double_step, &r, fake, n_in, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(second, "%s: %s", k->name, tj_last_error());
    tj_plan *plan = tj_compile(second, NULL);
    cr_assert_not_null(plan, "%s: %s", k->name, tj_last_error());
    cr_assert_eq(tj_plan_run(plan, in, n_in, planned), TJ_OK, "%s: %s", k->name, tj_last_error());
    cr_assert_eq(double_step(&r, in, n_in, eager, &n_out), TJ_OK, "%s: %s", k->name, tj_last_error());
    expect_second_order(k, planned);
    for (int i = 0; i <= k->n; i++) {
        int64_t n = tj_tensor_numel(eager[i]);
        const double *want = tj_tensor_data(tj_contiguous(eager[i]));
        test_expect_close(planned[i], want, n, 1e-13, 1e-15);
    }
    tj_plan_free(plan);
    tj_graph_free(second);

    /* triple backward: the double backward traced on inputs requiring grad
     * (real mode) and replayed on such inputs differentiates once more */
    replay on = {k, graph, true};
    make_inputs(k, true, in);
    second = tj_make_fx(double_step, &on, in, n_in, NULL, TJ_TRACE_REAL);
    cr_assert_not_null(second, "%s: %s", k->name, tj_last_error());
    make_inputs(k, true, in);
    cr_assert_eq(tj_graph_run(second, in, n_in, gg), TJ_OK, "%s: %s", k->name, tj_last_error());
    tj_tensor *loss = NULL, *ggg[MAX_IN + 1];
    for (int i = 0; i <= k->n; i++)
        if (tj_tensor_requires_grad(gg[i])) {
            tj_tensor *sq = tj_sum(tj_mul(gg[i], gg[i]), -1);
            loss = loss ? tj_add(loss, sq) : sq;
        }
    if (loss)
        cr_expect_eq(tj_autograd_grad(&loss, 1, NULL, in, k->n + 1, ggg), TJ_OK, "%s: third order: %s", k->name,
                     tj_last_error());
    tj_graph_free(second);
    tj_graph_free(graph);
}

/* A one-input case as the general one: x, its gradient and c2 of x's shape. */
static void expect_double_backward(const dbl_case *k)
{
    dbl_multi m = {k->name, NULL, k->f, k->backward_op, 1, {{k->ndim, {0}, k->x, k->c2, k->g, k->ggx}}, k->yndim,
                   {0}, k->c, k->ggc};
    memcpy(m.in[0].shape, k->shape, sizeof k->shape);
    memcpy(m.yshape, k->yshape, sizeof k->yshape);
    expect_multi(&m);
}

#define CASES(cases)                                                                                                   \
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) expect_double_backward(&cases[i])
#define MULTI_CASES(cases)                                                                                             \
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) expect_multi(&cases[i])

/* one case of shape [2, 4] for y = f(x) of x's shape, tables TAG_X ... TAG_GGC */
#define ELEMENTWISE(tag, f, op)                                                                                        \
    {#tag, f, op, 2, 2, {2, 4}, {2, 4}, tag##_X, tag##_C, tag##_C2, tag##_G, tag##_GGX, tag##_GGC}

/* ---- activations ---- */

static tj_tensor *f_elu(tj_tensor *x) { return tj_elu(x, tj_v_float(1.3), tj_v_int(1), tj_v_int(1)); }
static tj_tensor *f_celu(tj_tensor *x) { return tj_celu(x, tj_v_float(2.0)); }
static tj_tensor *f_leaky_relu(tj_tensor *x) { return tj_leaky_relu(x, tj_v_float(0.1)); }
static tj_tensor *f_hardtanh(tj_tensor *x) { return tj_hardtanh(x, tj_v_float(-0.25), tj_v_float(0.5)); }
static tj_tensor *f_softplus(tj_tensor *x) { return tj_softplus(x, tj_v_int(1), tj_v_int(20)); }
static tj_tensor *f_softplus_b2(tj_tensor *x) { return tj_softplus(x, tj_v_int(2), tj_v_int(3)); }
static tj_tensor *f_gelu(tj_tensor *x) { return tj_gelu(x, "none"); }
static tj_tensor *f_gelu_tanh(tj_tensor *x) { return tj_gelu(x, "tanh"); }
static tj_tensor *f_glu(tj_tensor *x) { return tj_glu(x, -1); }
static tj_tensor *f_glu0(tj_tensor *x) { return tj_glu(x, 0); }

Test(double_backward, piecewise_linear_activations)
{
    static const dbl_case cases[] = {
        ELEMENTWISE(RELU, tj_relu, "aten::threshold_backward"),
        ELEMENTWISE(LEAKY_RELU, f_leaky_relu, "aten::leaky_relu_backward"),
        ELEMENTWISE(HARDTANH, f_hardtanh, "aten::hardtanh_backward"),
        ELEMENTWISE(HARDSIGMOID, tj_hardsigmoid, "aten::hardsigmoid_backward"),
    };
    CASES(cases);
}

Test(double_backward, exponential_linear_units)
{
    static const dbl_case cases[] = {
        ELEMENTWISE(ELU, f_elu, "aten::elu_backward"),
        ELEMENTWISE(CELU, f_celu, "aten::elu_backward"),
        ELEMENTWISE(SELU, tj_selu, "aten::elu_backward"),
    };
    CASES(cases);
}

Test(double_backward, smooth_activations)
{
    static const dbl_case cases[] = {
        {"HARDSWISH", tj_hardswish, "aten::hardswish_backward", 2, 2, {3, 3}, {3, 3}, HARDSWISH_X, HARDSWISH_C,
         HARDSWISH_C2, HARDSWISH_G, HARDSWISH_GGX, HARDSWISH_GGC},
        ELEMENTWISE(TANH, tj_tanh, "aten::tanh_backward"),
        ELEMENTWISE(SIGMOID, tj_sigmoid, "aten::sigmoid_backward"),
        ELEMENTWISE(SOFTPLUS, f_softplus, "aten::softplus_backward"),
        ELEMENTWISE(SOFTPLUS_B2, f_softplus_b2, "aten::softplus_backward"),
        ELEMENTWISE(GELU, f_gelu, "aten::gelu_backward"),
        ELEMENTWISE(GELU_TANH, f_gelu_tanh, "aten::gelu_backward"),
        ELEMENTWISE(LOG_SIGMOID, tj_log_sigmoid, "aten::log_sigmoid_backward"),
    };
    CASES(cases);
}

Test(double_backward, glu)
{
    static const dbl_case cases[] = {
        {"GLU(dim -1)", f_glu, "aten::glu_backward", 2, 2, {2, 4}, {2, 2}, GLU_X, GLU_C, GLU_C2, GLU_G, GLU_GGX,
         GLU_GGC},
        {"GLU(dim 0)", f_glu0, "aten::glu_backward", 2, 2, {4, 2}, {2, 2}, GLU0_X, GLU0_C, GLU0_C2, GLU0_G, GLU0_GGX,
         GLU0_GGC},
    };
    CASES(cases);
}

/* elu_backward on elu's result (is_result), called directly */
Test(double_backward, elu_backward_of_the_result)
{
    int64_t s[1] = {6};
    tj_tensor *go = test_f64(1, s, ELU_RESULT_GO), *r = test_f64(1, s, ELU_RESULT_R), *gg[2];
    cr_assert_eq(tj_tensor_set_requires_grad(go, true), TJ_OK);
    cr_assert_eq(tj_tensor_set_requires_grad(r, true), TJ_OK);
    tj_tensor *out = tj_elu_backward(go, tj_v_float(1.3), tj_v_int(1), tj_v_int(1), true, r);
    test_expect_close(out, ELU_RESULT_OUT, 6, 1e-15, 0);
    tj_tensor *loss = tj_sum(tj_mul(out, test_f64(1, s, ELU_RESULT_C2)), -1);
    cr_assert_eq(tj_autograd_grad(&loss, 1, NULL, (tj_tensor *[]){go, r}, 2, gg), TJ_OK, "%s", tj_last_error());
    test_expect_close(gg[0], ELU_RESULT_GGO, 6, 1e-15, 0);
    test_expect_close(gg[1], ELU_RESULT_GGR, 6, 1e-15, 0);
}

/* ---- softmax ---- */

static tj_tensor *f_softmax(tj_tensor *x) { return tj__softmax(x, 1, false); }
static tj_tensor *f_softmax0(tj_tensor *x) { return tj__softmax(x, 0, false); }
static tj_tensor *f_log_softmax(tj_tensor *x) { return tj__log_softmax(x, 1, false); }
static tj_tensor *f_log_softmax0(tj_tensor *x) { return tj__log_softmax(x, 0, false); }

/* a [2, 3] case of y = f(x) of x's shape */
#define SOFTMAX_CASE(tag, f, op)                                                                                       \
    {#tag, f, op, 2, 2, {2, 3}, {2, 3}, tag##_X, tag##_C, tag##_C2, tag##_G, tag##_GGX, tag##_GGC}

Test(double_backward, softmax_and_log_softmax)
{
    static const dbl_case cases[] = {
        SOFTMAX_CASE(SOFTMAX, f_softmax, "aten::_softmax_backward_data"),
        SOFTMAX_CASE(SOFTMAX0, f_softmax0, "aten::_softmax_backward_data"),
        SOFTMAX_CASE(LOG_SOFTMAX, f_log_softmax, "aten::_log_softmax_backward_data"),
        SOFTMAX_CASE(LOG_SOFTMAX0, f_log_softmax0, "aten::_log_softmax_backward_data"),
    };
    CASES(cases);
}

/* ---- losses (targets and weights are constants of the trace) ---- */

static const int64_t S24[2] = {2, 4};
static tj_tensor *t_reg(void) { return test_f64(2, S24, T_REG); }
static tj_tensor *f_smooth_l1(tj_tensor *x) { return tj_smooth_l1_loss(x, t_reg(), 0, 1.0); }
static tj_tensor *f_smooth_l1_mean(tj_tensor *x) { return tj_smooth_l1_loss(x, t_reg(), 1, 0.5); }
static tj_tensor *f_smooth_l1_sum_b0(tj_tensor *x) { return tj_smooth_l1_loss(x, t_reg(), 2, 0.0); }
static tj_tensor *f_huber(tj_tensor *x) { return tj_huber_loss(x, t_reg(), 0, 1.0); }
static tj_tensor *f_huber_mean(tj_tensor *x) { return tj_huber_loss(x, t_reg(), 1, 0.5); }
static tj_tensor *f_bce(tj_tensor *x) { return tj_binary_cross_entropy(x, test_f64(2, S24, T_BCE), NULL, 1); }
static tj_tensor *f_bce_none(tj_tensor *x) { return tj_binary_cross_entropy(x, test_f64(2, S24, T_BCE), NULL, 0); }
static tj_tensor *f_bce_sum_w(tj_tensor *x)
{
    return tj_binary_cross_entropy(x, test_f64(2, S24, T_BCE), test_f64(2, S24, W_BCE), 2);
}
static tj_tensor *t_nll(void) { return test_i64(1, (int64_t[]){3}, T_NLL); }
static tj_tensor *w_nll(void) { return test_f64(1, (int64_t[]){4}, W_NLL); }
static tj_tensor *f_nll(tj_tensor *x) { return tj_nll_loss(x, t_nll(), NULL, 1, -100); }
static tj_tensor *f_nll_sum(tj_tensor *x) { return tj_nll_loss(x, t_nll(), NULL, 2, -100); }
static tj_tensor *f_nll_none_w(tj_tensor *x) { return tj_nll_loss(x, t_nll(), w_nll(), 0, -100); }
static tj_tensor *f_nll_mean_w_ignore(tj_tensor *x) { return tj_nll_loss(x, t_nll(), w_nll(), 1, 3); }

/* a case of x [2, 4] and a loss of shape [2, 4] (none) or [] */
#define LOSS_CASE(tag, f, op, reduced)                                                                                 \
    {#tag, f, op, 2, reduced ? 0 : 2, {2, 4}, {2, 4}, tag##_X, tag##_C, tag##_C2, tag##_G, tag##_GGX, tag##_GGC}

Test(double_backward, regression_losses)
{
    static const dbl_case cases[] = {
        LOSS_CASE(SMOOTH_L1, f_smooth_l1, "aten::smooth_l1_loss_backward", false),
        LOSS_CASE(SMOOTH_L1_MEAN, f_smooth_l1_mean, "aten::smooth_l1_loss_backward", true),
        LOSS_CASE(SMOOTH_L1_SUM_B0, f_smooth_l1_sum_b0, "aten::smooth_l1_loss_backward", true),
        LOSS_CASE(HUBER, f_huber, "aten::huber_loss_backward", false),
        LOSS_CASE(HUBER_MEAN, f_huber_mean, "aten::huber_loss_backward", true),
    };
    CASES(cases);
}

Test(double_backward, binary_cross_entropy)
{
    static const dbl_case cases[] = {
        LOSS_CASE(BCE, f_bce, "aten::binary_cross_entropy_backward", true),
        LOSS_CASE(BCE_NONE, f_bce_none, "aten::binary_cross_entropy_backward", false),
        LOSS_CASE(BCE_SUM_W, f_bce_sum_w, "aten::binary_cross_entropy_backward", true),
    };
    CASES(cases);
}

Test(double_backward, nll_loss)
{
    static const dbl_case cases[] = {
        {"NLL", f_nll, "aten::nll_loss_backward", 2, 0, {3, 4}, {0}, NLL_X, NLL_C, NLL_C2, NLL_G, NLL_GGX, NLL_GGC},
        {"NLL_SUM", f_nll_sum, "aten::nll_loss_backward", 2, 0, {3, 4}, {0}, NLL_SUM_X, NLL_SUM_C, NLL_SUM_C2,
         NLL_SUM_G, NLL_SUM_GGX, NLL_SUM_GGC},
        {"NLL_NONE_W", f_nll_none_w, "aten::nll_loss_backward", 2, 1, {3, 4}, {3}, NLL_NONE_W_X, NLL_NONE_W_C,
         NLL_NONE_W_C2, NLL_NONE_W_G, NLL_NONE_W_GGX, NLL_NONE_W_GGC},
        {"NLL_MEAN_W_IGNORE", f_nll_mean_w_ignore, "aten::nll_loss_backward", 2, 0, {3, 4}, {0},
         NLL_MEAN_W_IGNORE_X, NLL_MEAN_W_IGNORE_C, NLL_MEAN_W_IGNORE_C2, NLL_MEAN_W_IGNORE_G, NLL_MEAN_W_IGNORE_GGX,
         NLL_MEAN_W_IGNORE_GGC},
    };
    CASES(cases);
}

/* As PyTorch 1.13: bce's and nll's weights, nll's total_weight and
 * log_sigmoid's buffer take no gradient, and a call with one that requires
 * grad is refused. */
Test(double_backward, arguments_without_a_derivative_must_not_require_grad)
{
    int64_t s4[1] = {4}, s24[2] = {2, 4};
    tj_tensor *go = tj_ones(NULL, 0, TJ_FLOAT64), *w = test_f64(2, s24, W_BCE), *w4 = test_f64(1, s4, W_NLL);
    tj_tensor *tw = tj_ones(NULL, 0, TJ_FLOAT64), *buffer = tj_ones(s4, 1, TJ_FLOAT64);
    tj_tensor *x = test_f64(2, s24, BCE_X), *t = test_f64(2, s24, T_BCE);
    tj_tensor *nx = test_f64(2, (int64_t[]){3, 4}, NLL_X), *nt = test_i64(1, (int64_t[]){3}, T_NLL);
    tj_tensor *rg[4] = {w, w4, tw, buffer};
    for (int i = 0; i < 4; i++) cr_assert_eq(tj_tensor_set_requires_grad(rg[i], true), TJ_OK);
    test_expect_error(tj_binary_cross_entropy_backward(go, x, t, w, 1), TJ_ERR_UNSUPPORTED,
                      "aten::binary_cross_entropy_backward", "'weight'");
    test_expect_error(tj_nll_loss_backward(go, nx, nt, w4, 1, -100, tj_ones(NULL, 0, TJ_FLOAT64)), TJ_ERR_UNSUPPORTED,
                      "aten::nll_loss_backward", "'weight'");
    test_expect_error(tj_nll_loss_backward(go, nx, nt, NULL, 1, -100, tw), TJ_ERR_UNSUPPORTED,
                      "aten::nll_loss_backward", "'total_weight'");
    test_expect_error(tj_log_sigmoid_backward(tj_ones(s4, 1, TJ_FLOAT64), tj_ones(s4, 1, TJ_FLOAT64), buffer),
                      TJ_ERR_UNSUPPORTED, "aten::log_sigmoid_backward", "'buffer'");
}

/* ---- normalisations, embedding, pooling: forwards of several inputs ---- */

/* input i of a case TAG: tables TAG_X<i>, TAG_C2_<i>, TAG_G<i>, TAG_GG<i> */
#define IN(tag, i, nd, ...) {nd, {__VA_ARGS__}, tag##_X##i, tag##_C2_##i, tag##_G##i, tag##_GG##i}

static const int64_t ln_shape[1] = {4}, ln_shape2[2] = {2, 3};

static tj_tensor *f_layer_norm(tj_tensor *const *x) { return tj_layer_norm(x[0], ln_shape, 1, x[1], x[2], 1e-5); }
static tj_tensor *f_layer_norm2(tj_tensor *const *x) { return tj_layer_norm(x[0], ln_shape2, 2, NULL, NULL, 1e-5); }
static tj_tensor *f_layer_norm_all(tj_tensor *const *x)
{
    return tj_layer_norm(x[0], ln_shape2, 2, x[1], x[2], 1e-5);
}

Test(double_backward, native_layer_norm_backward)
{
    static const dbl_multi cases[] = {
        {"LAYER_NORM (weight, bias)", f_layer_norm, NULL, "aten::native_layer_norm_backward", 3,
         {IN(LAYER_NORM, 0, 2, 3, 4), IN(LAYER_NORM, 1, 1, 4), IN(LAYER_NORM, 2, 1, 4)}, 2, {3, 4}, LAYER_NORM_C,
         LAYER_NORM_GGC},
        {"LAYER_NORM2 (two dims)", f_layer_norm2, NULL, "aten::native_layer_norm_backward", 1,
         {IN(LAYER_NORM2, 0, 3, 2, 2, 3)}, 3, {2, 2, 3}, LAYER_NORM2_C, LAYER_NORM2_GGC},
        {"LAYER_NORM_ALL (every dim, weight, bias)", f_layer_norm_all, NULL, "aten::native_layer_norm_backward", 3,
         {IN(LAYER_NORM_ALL, 0, 2, 2, 3), IN(LAYER_NORM_ALL, 1, 2, 2, 3), IN(LAYER_NORM_ALL, 2, 2, 2, 3)}, 2, {2, 3},
         LAYER_NORM_ALL_C, LAYER_NORM_ALL_GGC},
    };
    MULTI_CASES(cases);
}

static tj_tensor *f_batch_norm(tj_tensor *const *x)
{
    return tj_batch_norm(x[0], x[1], x[2], NULL, NULL, true, 0.1, 1e-5);
}
static tj_tensor *f_batch_norm_eval(tj_tensor *const *x)
{
    int64_t s3[1] = {3};
    return tj_batch_norm(x[0], x[1], x[2], test_f64(1, s3, RM_BN), test_f64(1, s3, RV_BN), false, 0.1, 1e-5);
}

/* three channels, training (batch statistics) and evaluation (running ones) */
Test(double_backward, native_batch_norm_backward)
{
    static const dbl_multi cases[] = {
        {"BATCH_NORM (training)", f_batch_norm, NULL, "aten::native_batch_norm_backward", 3,
         {IN(BATCH_NORM, 0, 3, 3, 3, 2), IN(BATCH_NORM, 1, 1, 3), IN(BATCH_NORM, 2, 1, 3)}, 3, {3, 3, 2},
         BATCH_NORM_C, BATCH_NORM_GGC},
        {"BATCH_NORM_EVAL", f_batch_norm_eval, NULL, "aten::native_batch_norm_backward", 3,
         {IN(BATCH_NORM_EVAL, 0, 3, 3, 3, 2), IN(BATCH_NORM_EVAL, 1, 1, 3), IN(BATCH_NORM_EVAL, 2, 1, 3)}, 3,
         {3, 3, 2}, BATCH_NORM_EVAL_C, BATCH_NORM_EVAL_GGC},
    };
    MULTI_CASES(cases);
}

static tj_tensor *f_group_norm(tj_tensor *const *x) { return tj_group_norm(x[0], 2, x[1], x[2], 1e-5); }
static tj_tensor *f_group_norm4(tj_tensor *const *x) { return tj_group_norm(x[0], 3, NULL, NULL, 1e-5); }

Test(double_backward, native_group_norm_backward)
{
    static const dbl_multi cases[] = {
        {"GROUP_NORM (2 groups, weight, bias)", f_group_norm, NULL, "aten::native_group_norm_backward", 3,
         {IN(GROUP_NORM, 0, 3, 2, 4, 3), IN(GROUP_NORM, 1, 1, 4), IN(GROUP_NORM, 2, 1, 4)}, 3, {2, 4, 3},
         GROUP_NORM_C, GROUP_NORM_GGC},
        {"GROUP_NORM4 (3 groups, 4-d)", f_group_norm4, NULL, "aten::native_group_norm_backward", 1,
         {IN(GROUP_NORM4, 0, 4, 1, 6, 2, 2)}, 4, {1, 6, 2, 2}, GROUP_NORM4_C, GROUP_NORM4_GGC},
    };
    MULTI_CASES(cases);
}

/* As PyTorch 1.13 (derivatives.yaml's not_implemented): the statistics a
 * normalisation's backward operator takes have no derivative of their own;
 * the call is recorded, and a pass that needs one fails naming it. */
Test(double_backward, the_statistics_of_a_normalisation_have_no_derivative)
{
    int64_t s34[2] = {3, 4}, s31[2] = {3, 1};
    static const bool mask[3] = {true, false, false};
    tj_tensor *go = test_f64(2, s34, LAYER_NORM_C), *x = test_f64(2, s34, LAYER_NORM_X0);
    tj_tensor *mean = tj_ones(s31, 2, TJ_FLOAT64), *rstd = tj_ones(s31, 2, TJ_FLOAT64), *gx, *gg[2];
    cr_assert_eq(tj_tensor_set_requires_grad(x, true), TJ_OK);
    cr_assert_eq(tj_tensor_set_requires_grad(rstd, true), TJ_OK);
    cr_assert_eq(tj_native_layer_norm_backward(go, x, (int64_t[]){4}, 1, mean, rstd, NULL, NULL, mask, &gx, NULL, NULL),
                 TJ_OK, "%s", tj_last_error());
    tj_tensor *loss = tj_sum(gx, -1);
    cr_expect_eq(tj_autograd_grad(&loss, 1, NULL, (tj_tensor *[]){x, rstd}, 2, gg), TJ_ERR_UNSUPPORTED);
    cr_expect(strstr(tj_last_error(), "aten::native_layer_norm_backward: derivative with respect to 'rstd' not "
                                      "implemented"), "%s", tj_last_error());
    cr_expect_eq(tj_autograd_grad(&loss, 1, NULL, &x, 1, gg), TJ_OK, "%s", tj_last_error());

    /* batch norm: save_invstd the same; running_var, which PyTorch does not
     * differentiate, is refused at the call */
    int64_t s332[3] = {3, 3, 2}, s3[1] = {3};
    tj_tensor *bgo = test_f64(3, s332, BATCH_NORM_C), *bx = test_f64(3, s332, BATCH_NORM_X0);
    tj_tensor *rv = test_f64(1, s3, RV_BN), *invstd = test_f64(1, s3, RV_BN);
    cr_assert_eq(tj_tensor_set_requires_grad(invstd, true), TJ_OK);
    cr_assert_eq(tj_native_batch_norm_backward(bgo, bx, NULL, NULL, NULL, test_f64(1, s3, RM_BN), invstd, true, 1e-5,
                                               mask, &gx, NULL, NULL),
                 TJ_OK, "%s", tj_last_error());
    loss = tj_sum(gx, -1);
    cr_expect_eq(tj_autograd_grad(&loss, 1, NULL, &invstd, 1, gg), TJ_ERR_UNSUPPORTED);
    cr_expect(strstr(tj_last_error(), "aten::native_batch_norm_backward: derivative with respect to 'save_invstd' "
                                      "not implemented"), "%s", tj_last_error());
    cr_assert_eq(tj_tensor_set_requires_grad(rv, true), TJ_OK);
    cr_expect_eq(tj_native_batch_norm_backward(bgo, bx, NULL, test_f64(1, s3, RM_BN), rv, NULL, NULL, false, 1e-5,
                                               mask, &gx, NULL, NULL),
                 TJ_ERR_UNSUPPORTED);
    cr_expect(strstr(tj_last_error(), "aten::native_batch_norm_backward: not differentiable with respect to argument "
                                      "'running_var'"), "%s", tj_last_error());
}

static tj_tensor *idx_emb(void) { return test_i64(2, (int64_t[]){2, 3}, IDX_EMB); }
static tj_tensor *f_embedding_pad(tj_tensor *w) { return tj_embedding(w, idx_emb(), 2); }
static tj_tensor *f_embedding(tj_tensor *w) { return tj_embedding(w, idx_emb(), -1); }

/* weight [5, 3] gets no second-order gradient (the backward operator does
 * not read it: zeros, as PyTorch's None) */
Test(double_backward, embedding_dense_backward)
{
    static const dbl_multi cases[] = {
        {"EMBEDDING_PAD (padding_idx 2)", NULL, f_embedding_pad, "aten::embedding_dense_backward", 1,
         {IN(EMBEDDING_PAD, 0, 2, 5, 3)}, 3, {2, 3, 3}, EMBEDDING_PAD_C, EMBEDDING_PAD_GGC},
        {"EMBEDDING", NULL, f_embedding, "aten::embedding_dense_backward", 1, {IN(EMBEDDING, 0, 2, 5, 3)}, 3,
         {2, 3, 3}, EMBEDDING_C, EMBEDDING_GGC},
    };
    MULTI_CASES(cases);
}

static const int64_t k3[2] = {3, 3}, k2[2] = {2, 2}, s2[2] = {2, 2}, p1[2] = {1, 1}, p0[2] = {0, 0}, d1[2] = {1, 1};
static tj_tensor *f_max_pool(tj_tensor *x) { return tj_max_pool2d(x, k3, s2, p1, d1, false); }
static tj_tensor *f_max_pool_ceil(tj_tensor *x) { return tj_max_pool2d(x, k2, s2, p0, d1, true); }

/* overlapping windows with a tie, windows past the edge (ceil_mode) */
Test(double_backward, max_pool2d_with_indices_backward)
{
    static const dbl_multi cases[] = {
        {"MAX_POOL", NULL, f_max_pool, "aten::max_pool2d_with_indices_backward", 1, {IN(MAX_POOL, 0, 4, 1, 2, 5, 5)},
         4, {1, 2, 3, 3}, MAX_POOL_C, MAX_POOL_GGC},
        {"MAX_POOL_CEIL (no batch)", NULL, f_max_pool_ceil, "aten::max_pool2d_with_indices_backward", 1,
         {IN(MAX_POOL_CEIL, 0, 3, 1, 4, 5)}, 3, {1, 2, 3}, MAX_POOL_CEIL_C, MAX_POOL_CEIL_GGC},
    };
    MULTI_CASES(cases);
}

static const int64_t c11[2] = {1, 1}, c22[2] = {2, 2}, c00[2] = {0, 0};
static tj_tensor *f_conv(tj_tensor *const *x) { return tj_convolution(x[0], x[1], x[2], c11, c11, c11, false, c00, 1); }
static tj_tensor *f_conv_groups(tj_tensor *const *x)
{
    return tj_convolution(x[0], x[1], NULL, (int64_t[]){2, 1}, (int64_t[]){0, 1}, (int64_t[]){1, 2}, false, c00, 2);
}
static tj_tensor *f_conv_t(tj_tensor *const *x)
{
    return tj_convolution(x[0], x[1], x[2], c22, c11, c11, true, c11, 1);
}

/* padded with bias; strided, dilated in two groups; transposed */
Test(double_backward, convolution_backward)
{
    static const dbl_multi cases[] = {
        {"CONV (padding, bias)", f_conv, NULL, "aten::convolution_backward", 3,
         {IN(CONV, 0, 4, 1, 2, 3, 3), IN(CONV, 1, 4, 3, 2, 2, 2), IN(CONV, 2, 1, 3)}, 4, {1, 3, 4, 4}, CONV_C,
         CONV_GGC},
        {"CONV_GROUPS (stride, dilation, groups)", f_conv_groups, NULL, "aten::convolution_backward", 2,
         {IN(CONV_GROUPS, 0, 4, 1, 2, 5, 5), IN(CONV_GROUPS, 1, 4, 4, 1, 2, 1)}, 4, {1, 4, 2, 7}, CONV_GROUPS_C,
         CONV_GROUPS_GGC},
        {"CONV_T (transposed, output_padding)", f_conv_t, NULL, "aten::convolution_backward", 3,
         {IN(CONV_T, 0, 4, 1, 2, 3, 3), IN(CONV_T, 1, 4, 2, 1, 3, 3), IN(CONV_T, 2, 1, 1)}, 4, {1, 1, 6, 6}, CONV_T_C,
         CONV_T_GGC},
    };
    MULTI_CASES(cases);
}
