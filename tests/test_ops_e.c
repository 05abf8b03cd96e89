/* Session 16 (lossact) operators: the hard activations (hardtanh, relu6,
 * hardsigmoid, hardswish and their backward operators) and the regression
 * losses (l1_loss, smooth_l1_loss, huber_loss and their backward
 * operators). Reference values come from PyTorch 1.13 (`A` is
 * torch.ops.aten; the expression is named next to each table), so the tests
 * run without it. Where ATen 1.13's scalar and vectorised CPU loops disagree
 * (the backward operators at a kink or at nan), the references come from
 * one-element tensors, which take the scalar loop: the rule tjit follows.
 * Every operator is also traced with make_fx, lowered by the core
 * decompositions and replayed through a plan. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "kernels/cpu_isa.h"
#include "test_util.h"

TestSuite(opse, .init = test_scope_open, .fini = test_scope_close);

static tj_tensor *vec(int64_t n, const float *v) { return test_tensor(TJ_FLOAT32, 1, (int64_t[]){n}, v); }
static tj_tensor *f32(int ndim, const int64_t *shape, const float *v)
{
    return test_tensor(TJ_FLOAT32, ndim, shape, v);
}
static tj_tensor *scalar(float v) { return test_tensor(TJ_FLOAT32, 0, NULL, &v); }

/* The gradient of sum(f(x) * w) with respect to x. */
static tj_tensor *grad_of(tj_tensor *(*f)(tj_tensor *), tj_tensor *x, tj_tensor *w)
{
    tj_tensor_set_requires_grad(x, true);
    tj_tensor *y = tj_sum(tj_mul(f(x), w), -1), *g;
    cr_assert_not_null(y, "%s", tj_last_error());
    cr_assert_eq(tj_autograd_grad(&y, 1, NULL, &x, 1, &g), TJ_OK, "%s", tj_last_error());
    return g;
}

/* ---- hard activations ---- */

/* -inf, -4, -3, -2.5, -1, 0, 1, 2.5, 3, 4, inf, nan: both kinks of the hard
 * sigmoid / swish and of relu6, and the values that need a rule */
#define NX 12
static const float xs[NX] = {-INFINITY, -4, -3, -2.5f, -1, 0, 1, 2.5f, 3, 4, INFINITY, NAN};

Test(opse, hardtanh_clamps_and_keeps_nan)
{
    /* A.hardtanh(X), A.hardtanh(X, -0.5, 2.5), A.relu6(X) */
    tj_tensor *x = vec(NX, xs);
    test_expect_f32(tj_hardtanh(x, tj_v_int(-1), tj_v_int(1)), (float[]){-1, -1, -1, -1, -1, 0, 1, 1, 1, 1, 1, NAN},
                    NX, 0);
    test_expect_f32(tj_hardtanh(x, tj_v_float(-0.5), tj_v_float(2.5)),
                    (float[]){-0.5f, -0.5f, -0.5f, -0.5f, -0.5f, 0, 1, 2.5f, 2.5f, 2.5f, 2.5f, NAN}, NX, 0);
    test_expect_f32(tj_relu6(x), (float[]){0, 0, 0, 0, 0, 0, 1, 2.5f, 3, 4, 6, NAN}, NX, 0);
    /* clamp's rules: min_val > max_val gives max_val, a nan bound nan everywhere */
    tj_tensor *five = vec(5, (float[]){-3, -1, 0, 1, 3});
    test_expect_f32(tj_hardtanh(five, tj_v_float(1), tj_v_float(-1)), (float[]){-1, -1, -1, -1, -1}, 5, 0);
    test_expect_f32(tj_hardtanh(five, tj_v_float(NAN), tj_v_float(1)), (float[]){NAN, NAN, NAN, NAN, NAN}, 5, 0);
    /* float64: A.hardtanh(X.double(), 0.1, 0.7) keeps the bounds in double */
    tj_tensor *d = tj_hardtanh(test_tensor(TJ_FLOAT64, 1, (int64_t[]){2}, (double[]){-3, 3}), tj_v_float(0.1),
                               tj_v_float(0.7));
    cr_assert_eq(tj_tensor_dtype(d), TJ_FLOAT64);
    cr_expect_eq(tj_tensor_item_at(d, 0), 0.1);
    cr_expect_eq(tj_tensor_item_at(d, 1), 0.7);
}

Test(opse, hardtanh_on_int64_truncates_the_bounds)
{
    /* A.hardtanh(i, -1.5, 2.5) = [-1, -1, 0, 1, 2]; A.hardtanh(i, -2.7, -0.5) =
     * [-2, -1, 0, 0, 0]; A.relu6(i) = [0, 0, 0, 1, 3] */
    tj_tensor *i = test_tensor(TJ_INT64, 1, (int64_t[]){5}, (int64_t[]){-3, -1, 0, 1, 3});
    struct { tj_tensor *got; int64_t want[5]; } cases[] = {
        {tj_hardtanh(i, tj_v_float(-1.5), tj_v_float(2.5)), {-1, -1, 0, 1, 2}},
        {tj_hardtanh(i, tj_v_float(-2.7), tj_v_float(-0.5)), {-2, -1, 0, 0, 0}},
        {tj_relu6(i), {0, 0, 0, 1, 3}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        cr_assert_not_null(cases[k].got, "%s", tj_last_error());
        cr_assert_eq(tj_tensor_dtype(cases[k].got), TJ_INT64);
        for (int e = 0; e < 5; e++) cr_expect_eq(tj_tensor_item_at(cases[k].got, e), cases[k].want[e], "%zu[%d]", k, e);
    }
}

/* PyTorch's values at xs: A.hardsigmoid(X), A.hardswish(X) (-inf gives 0
 * and nan, -inf * 0; -0 for x <= -3), and with grad 2, one element per call
 * (the scalar loop): A.hardsigmoid_backward(g, x), A.hardswish_backward(g,
 * x), A.hardtanh_backward(g, x, -1, 1). (1.13's vectorised loop gives grad
 * at x = 3 and nan at nan for hardswish, 0 at nan for hardtanh.) */
#define THIRD 0.333333343f
static const float hardsigmoid_want[NX] = {0, 0, 0, 0.0833333358f, THIRD, 0.5f, 0.666666687f, 0.916666687f,
                                           1, 1, 1, NAN};
static const float hardswish_want[NX] = {NAN, -0.0f, -0.0f, -0.208333328f, -THIRD, 0, 0.666666687f, 2.29166675f,
                                         3, 4, INFINITY, NAN};
static const float hardsigmoid_grad_want[NX] = {0, 0, 0, THIRD, THIRD, THIRD, THIRD, THIRD, 0, 0, 0, 0};
static const float hardswish_grad_want[NX] = {0, 0, -1, -0.666666627f, 0.333333313f, 1, 1.66666675f, 2.66666651f,
                                              3, 2, 2, 2};
static const float hardtanh_grad_want[NX] = {0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 2};

static tj_tensor *twos(int64_t n)
{
    float v[128];
    cr_assert_leq(n, 128);
    for (int64_t i = 0; i < n; i++) v[i] = 2;
    return vec(n, v);
}

Test(opse, hardsigmoid_and_hardswish_give_pytorchs_values)
{
    tj_tensor *x = vec(NX, xs);
    test_expect_f32(tj_hardsigmoid(x), hardsigmoid_want, NX, 0);
    test_expect_f32(tj_hardswish(x), hardswish_want, NX, 0);
    /* float64: A.hardswish / A.hardsigmoid of [0, 0.5, -2] in double */
    tj_tensor *d = test_tensor(TJ_FLOAT64, 1, (int64_t[]){3}, (double[]){0, 0.5, -2});
    tj_tensor *hs = tj_hardswish(d), *hg = tj_hardsigmoid(d);
    cr_assert_not_null(hs, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_item_at(hs, 1), 0.2916666666666667);
    cr_expect_eq(tj_tensor_item_at(hs, 2), -0.3333333333333333);
    cr_expect_eq(tj_tensor_item_at(hg, 1), 0.5833333333333334);
    cr_expect_eq(tj_tensor_item_at(hg, 2), 0.16666666666666666);
}

Test(opse, hard_backward_operators_follow_atens_scalar_loop_at_kinks_and_nan)
{
    tj_tensor *g = twos(NX), *x = vec(NX, xs);
    test_expect_f32(tj_hardsigmoid_backward(g, x), hardsigmoid_grad_want, NX, 0);
    test_expect_f32(tj_hardswish_backward(g, x), hardswish_grad_want, NX, 0);
    test_expect_f32(tj_hardtanh_backward(g, x, tj_v_int(-1), tj_v_int(1)), hardtanh_grad_want, NX, 0);
    /* A.hardtanh_backward(g, x, -0.5, 2.5) and (g, x, nan, 1): a nan bound's
     * comparison is false */
    test_expect_f32(tj_hardtanh_backward(g, x, tj_v_float(-0.5), tj_v_float(2.5)),
                    (float[]){0, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 2}, NX, 0);
    test_expect_f32(tj_hardtanh_backward(g, x, tj_v_float(NAN), tj_v_int(1)), (float[]){2, 2, 2, 2, 2, 2, 0, 0, 0, 0,
                    0, 2},
                    NX, 0);
    /* float64: A.hardsigmoid_backward(ones(1).double(), tensor([0.5]).double())
     * uses 1/6 rounded to float32 */
    tj_tensor *d = tj_hardsigmoid_backward(test_tensor(TJ_FLOAT64, 1, (int64_t[]){1}, (double[]){1}),
                                           test_tensor(TJ_FLOAT64, 1, (int64_t[]){1}, (double[]){0.5}));
    cr_assert_not_null(d, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_item_at(d, 0), 0.1666666716337204);
}

/* xs repeated over 101 elements (full vectors and a partial one at every
 * width): each instruction set gives the one-element values above, in
 * float32 and in float64. */
Test(opse, hard_activations_give_the_same_values_on_every_isa, .fini = test_scope_close_isa)
{
    enum { N = 101 };
    float x[N];
    for (int i = 0; i < N; i++) x[i] = xs[i % NX];
    struct { const char *name; const float *want; } rows[5] = {
        {"hardsigmoid", hardsigmoid_want},
        {"hardswish", hardswish_want},
        {"hardsigmoid_backward", hardsigmoid_grad_want},
        {"hardswish_backward", hardswish_grad_want},
        {"hardtanh_backward", hardtanh_grad_want},
    };
    for (int k = 0; k < TEST_NISA; k++) {
        if (!tj_k_isa_force(test_isas[k])) continue;
        for (int dt = 0; dt < 2; dt++) {
            tj_tensor *xt = vec(N, x), *g = twos(N);
            if (dt) xt = tj_to_copy(xt, TJ_FLOAT64), g = tj_to_copy(g, TJ_FLOAT64);
            tj_tensor *got[5] = {tj_hardsigmoid(xt), tj_hardswish(xt), tj_hardsigmoid_backward(g, xt),
                                 tj_hardswish_backward(g, xt), tj_hardtanh_backward(g, xt, tj_v_int(-1), tj_v_int(1))};
            for (int r = 0; r < 5; r++) {
                cr_assert_not_null(got[r], "%s: %s", rows[r].name, tj_last_error());
                for (int i = 0; i < N; i++) {
                    double v = tj_tensor_item_at(got[r], i), w = rows[r].want[i % NX];
                    /* float64 differs from the float32 references only by rounding */
                    bool ok = (isnan(v) && isnan(w)) || (dt ? test_close(v, w, 1e-6, 1e-7) : v == w);
                    cr_expect(ok, "%s on %s (%s) at x = %g: %.9g, want %.9g", rows[r].name, test_isas[k],
                              dt ? "float64" : "float32", x[i], v, w);
                }
            }
        }
    }
}

static tj_tensor *hardtanh_narrow(tj_tensor *x) { return tj_hardtanh(x, tj_v_float(-1.25), tj_v_float(0.75)); }

Test(opse, hard_activation_gradients_match_pytorch)
{
    /* torch.autograd.grad((f(x) * w).sum(), x), x = [-3.5, -3, -1.25, 0, 0.75,
     * 3, 5], w = [1, 2, 3, -1, 0.5, 2, -2] (7 elements: the scalar loop) */
    static const float x[7] = {-3.5f, -3, -1.25f, 0, 0.75f, 3, 5}, w[7] = {1, 2, 3, -1, 0.5f, 2, -2};
    test_expect_f32(grad_of(tj_hardswish, vec(7, x), vec(7, w)), (float[]){0, -1, 0.25000003f, -0.5f, 0.375f, 3, -2},
                    7, 0);
    test_expect_f32(grad_of(tj_hardsigmoid, vec(7, x), vec(7, w)), (float[]){0, 0, 0.5f, -0.166666672f, 0.0833333358f,
                    0, 0},
                    7, 0);
    test_expect_f32(grad_of(hardtanh_narrow, vec(7, x), vec(7, w)), (float[]){0, 0, 0, -1, 0, 0, 0}, 7, 0);
    test_expect_f32(grad_of(tj_relu6, vec(7, x), vec(7, w)), (float[]){0, 0, 0, 0, 0.5f, 2, -2}, 7, 0);
}

Test(opse, hard_activation_errors_name_the_operator_and_value)
{
    tj_tensor *b = test_tensor(TJ_BOOL, 1, (int64_t[]){2}, (bool[]){true, false});
    tj_tensor *i = test_tensor(TJ_INT64, 1, (int64_t[]){2}, (int64_t[]){1, 2});
    tj_tensor *x = vec(2, (float[]){0, 1});
    test_expect_error(tj_hardtanh(b, tj_v_int(-1), tj_v_int(1)), TJ_ERR_DTYPE, "aten::hardtanh", "bool");
    test_expect_error(tj_relu6(b), TJ_ERR_DTYPE, "aten::hardtanh", "bool");
    test_expect_error(tj_hardtanh(x, tj_v_float(-1e300), tj_v_int(1)), TJ_ERR_INVALID_ARGUMENT, "aten::hardtanh",
                      "min_val -1e+300");
    /* a nan bound cannot become an int64 one (PyTorch converts it with toLong, undefined) */
    test_expect_error(tj_hardtanh(i, tj_v_float(NAN), tj_v_int(1)), TJ_ERR_INVALID_ARGUMENT, "aten::hardtanh",
                      "min_val nan cannot be converted to type int64");
    test_expect_error(tj_hardsigmoid(i), TJ_ERR_DTYPE, "aten::hardsigmoid", "int64");
    test_expect_error(tj_hardswish(b), TJ_ERR_DTYPE, "aten::hardswish", "bool");
    test_expect_error(tj_hardswish_backward(i, i), TJ_ERR_DTYPE, "aten::hardswish_backward", "int64");
    test_expect_error(tj_hardsigmoid_backward(vec(4, (float[]){0, 0, 0, 0}), vec(5, (float[]){0, 0, 0, 0, 0})),
                      TJ_ERR_SHAPE, "aten::hardsigmoid_backward", "[4] and [5]");
    test_expect_error(tj_hardtanh_backward(x, x, tj_v_int(-1), tj_v_float(1e39)), TJ_ERR_INVALID_ARGUMENT,
                      "aten::hardtanh_backward", "max_val 1e+39");
}

/* ---- losses ---- */

/* self [3, 1] and target [4]: the losses broadcast them to [3, 4] */
static tj_tensor *loss_self(void) { return f32(2, (int64_t[]){3, 1}, (float[]){0.5f, -1.25f, 2}); }
static tj_tensor *loss_target(void) { return vec(4, (float[]){0, 1, -0.75f, 0.25f}); }

Test(opse, smooth_l1_huber_and_l1_give_pytorchs_values_when_broadcasting)
{
    /* A.<loss>(s, t, reduction[, param]), s = [[0.5], [-1.25], [2]],
     * t = [0, 1, -0.75, 0.25] */
    struct {
        const char *name;
        int op; /* 0 smooth_l1, 1 huber, 2 l1 */
        double param;
        float none[12], mean, sum;
    } cases[] = {
        {"smooth_l1 beta 1", 0, 1, {0.125f, 0.125f, 0.75f, 0.03125f, 0.75f, 1.75f, 0.125f, 1, 1.5f, 0.5f, 2.25f, 1.25f},
         0.846354187f, 10.15625f},
        {"smooth_l1 beta 0.5", 0, 0.5, {0.25f, 0.25f, 1, 0.0625f, 1, 2, 0.25f, 1.25f, 1.75f, 0.75f, 2.5f, 1.5f},
         1.046875f, 12.5625f},
        /* beta 0 is the l1 loss */
        {"smooth_l1 beta 0", 0, 0, {0.5f, 0.5f, 1.25f, 0.25f, 1.25f, 2.25f, 0.5f, 1.5f, 2, 1, 2.75f, 1.75f},
         1.29166663f, 15.5f},
        {"huber delta 0.5", 1, 0.5, {0.125f, 0.125f, 0.5f, 0.03125f, 0.5f, 1, 0.125f, 0.625f, 0.875f, 0.375f, 1.25f,
                                     0.75f},
         0.5234375f, 6.28125f},
        {"l1", 2, 0, {0.5f, 0.5f, 1.25f, 0.25f, 1.25f, 2.25f, 0.5f, 1.5f, 2, 1, 2.75f, 1.75f}, 1.29166663f, 15.5f},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        for (int red = 0; red <= 2; red++) {
            tj_tensor *s = loss_self(), *t = loss_target(), *r;
            if (cases[k].op == 0) r = tj_smooth_l1_loss(s, t, red, cases[k].param);
            else if (cases[k].op == 1) r = tj_huber_loss(s, t, red, cases[k].param);
            else r = tj_l1_loss(s, t, red);
            cr_assert_not_null(r, "%s: %s", cases[k].name, tj_last_error());
            cr_expect_eq(tj_tensor_ndim(r), red == 0 ? 2 : 0, "%s", cases[k].name);
            test_expect_f32(r, red == 0 ? cases[k].none : red == 1 ? &cases[k].mean : &cases[k].sum,
                            red == 0 ? 12 : 1, 0);
        }
    }
}

Test(opse, losses_keep_nan_and_inf_and_reduce_empty_inputs_as_pytorch)
{
    /* A.smooth_l1_loss(v, zeros(4), 0), A.huber_loss(v, zeros(4), 0), v = [nan, inf, -inf, 1] */
    tj_tensor *v = vec(4, (float[]){NAN, INFINITY, -INFINITY, 1}), *z = vec(4, (float[]){0, 0, 0, 0});
    test_expect_f32(tj_smooth_l1_loss(v, z, 0, 1), (float[]){NAN, INFINITY, INFINITY, 0.5f}, 4, 0);
    test_expect_f32(tj_huber_loss(v, z, 0, 1), (float[]){NAN, INFINITY, INFINITY, 0.5f}, 4, 0);
    /* beta 0 where self == target: 0 (z < beta never holds, so no 0 / 0);
     * A.smooth_l1_loss(w, w, 0, 0.0) */
    tj_tensor *w = vec(3, (float[]){0, -1.5f, 2});
    test_expect_f32(tj_smooth_l1_loss(w, w, 0, 0), (float[]){0, 0, 0}, 3, 0);
    /* empty: mean nan, sum 0 */
    tj_tensor *e = vec(0, NULL);
    test_expect_f32(tj_smooth_l1_loss(e, e, 1, 1), (float[]){NAN}, 1, 0);
    test_expect_f32(tj_huber_loss(e, e, 2, 1), (float[]){0}, 1, 0);
    test_expect_f32(tj_l1_loss(e, e, 1), (float[]){NAN}, 1, 0);
}

Test(opse, huber_keeps_self_dtype_while_smooth_l1_and_l1_promote)
{
    /* A.huber_loss(tensor([0.1]), tensor([0.3], dtype=float64), 0): float32
     * 0.019999999552965164; A.smooth_l1_loss(...): float64 0.019999999701976776 */
    tj_tensor *s = vec(1, (float[]){0.1f}), *t = test_tensor(TJ_FLOAT64, 1, (int64_t[]){1}, (double[]){0.3});
    test_expect_f32(tj_huber_loss(s, t, 0, 1), (float[]){0.0199999996f}, 1, 0);
    tj_tensor *r = tj_smooth_l1_loss(s, t, 0, 1);
    cr_assert_not_null(r, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_dtype(r), TJ_FLOAT64);
    cr_expect_eq(tj_tensor_item_at(r, 0), 0.019999999701976776);
    /* an int64 target next to a float32 self: float32,
     * A.smooth_l1_loss(tensor([0.1]), tensor([1]), 0, 1.0) = 0.4049999713897705 */
    tj_tensor *it = test_tensor(TJ_INT64, 1, (int64_t[]){1}, (int64_t[]){1});
    test_expect_f32(tj_smooth_l1_loss(s, it, 0, 1), (float[]){0.404999971f}, 1, 0);
    /* A.l1_loss on int64: int64 without reduction, [2, 4, 0] */
    tj_tensor *li = tj_l1_loss(test_tensor(TJ_INT64, 1, (int64_t[]){3}, (int64_t[]){1, 5, -2}),
                               test_tensor(TJ_INT64, 1, (int64_t[]){3}, (int64_t[]){3, 1, -2}), 0);
    cr_assert_not_null(li, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_dtype(li), TJ_INT64);
    static const double l1_want[3] = {2, 4, 0};
    for (int e = 0; e < 3; e++) cr_expect_eq(tj_tensor_item_at(li, e), l1_want[e]);
}

Test(opse, loss_errors_name_the_operator_and_the_offending_value)
{
    tj_tensor *x = vec(3, (float[]){0, 1, 2});
    /* PyTorch: "smooth_l1_loss does not support negative values for beta." (nan too) */
    test_expect_error(tj_smooth_l1_loss(x, x, 1, -1), TJ_ERR_INVALID_ARGUMENT, "aten::smooth_l1_loss",
                      "negative values for beta (got -1)");
    test_expect_error(tj_smooth_l1_loss(x, x, 1, NAN), TJ_ERR_INVALID_ARGUMENT, "aten::smooth_l1_loss", "(got nan)");
    /* PyTorch: "huber_loss does not support non-positive values for delta." */
    test_expect_error(tj_huber_loss(x, x, 1, 0), TJ_ERR_INVALID_ARGUMENT, "aten::huber_loss",
                      "non-positive values for delta (got 0)");
    test_expect_error(tj_huber_loss(x, x, 1, -2.5), TJ_ERR_INVALID_ARGUMENT, "aten::huber_loss", "(got -2.5)");
    cr_assert_not_null(tj_smooth_l1_loss(x, x, 1, -0.0), "beta -0 is allowed: %s", tj_last_error());
    test_expect_error(tj_smooth_l1_loss(x, x, 3, 1), TJ_ERR_INVALID_ARGUMENT, "aten::smooth_l1_loss", "got 3");
    test_expect_error(tj_huber_loss(x, x, -1, 1), TJ_ERR_INVALID_ARGUMENT, "aten::huber_loss", "got -1");
    test_expect_error(tj_l1_loss(x, x, 5), TJ_ERR_INVALID_ARGUMENT, "aten::l1_loss", "got 5");
    tj_tensor *y = vec(4, (float[]){0, 1, 2, 3});
    test_expect_error(tj_smooth_l1_loss(x, y, 0, 1), TJ_ERR_SHAPE, "aten::smooth_l1_loss", "[3] and [4]");
    test_expect_error(tj_huber_loss(x, y, 1, 1), TJ_ERR_SHAPE, "aten::huber_loss", "[3] and [4]");
    test_expect_error(tj_l1_loss(x, y, 1), TJ_ERR_SHAPE, "aten::l1_loss", "[3] and [4]");
    tj_tensor *i = test_tensor(TJ_INT64, 1, (int64_t[]){3}, (int64_t[]){0, 1, 2});
    test_expect_error(tj_smooth_l1_loss(i, i, 1, 1), TJ_ERR_DTYPE, "aten::smooth_l1_loss", "int64");
    /* huber writes into a tensor like self: an int64 self cannot take a float loss */
    test_expect_error(tj_huber_loss(i, x, 0, 1), TJ_ERR_DTYPE, "aten::huber_loss",
                      "float32 can't be cast to self's dtype int64");
    test_expect_error(tj_l1_loss(i, i, 1), TJ_ERR_DTYPE, "aten::mean", "int64");
    tj_tensor *d = test_tensor(TJ_FLOAT64, 1, (int64_t[]){3}, (double[]){0, 1, 2});
    test_expect_error(tj_huber_loss_backward(x, x, d, 0, 1), TJ_ERR_DTYPE, "aten::huber_loss_backward",
                      "self's dtype float32, got float64");
    test_expect_error(tj_smooth_l1_loss_backward(i, i, i, 0, 1), TJ_ERR_DTYPE, "aten::smooth_l1_loss_backward",
                      "int64");
    test_expect_error(tj_smooth_l1_loss_backward(y, x, x, 0, 1), TJ_ERR_SHAPE, "aten::smooth_l1_loss_backward",
                      "[4] and [3]");
}

Test(opse, loss_backward_operators_give_pytorchs_values)
{
    /* x = [0, 1, -1, 0.25, nan], t = zeros(5), g = [1, -2, 0.5, 3, 1]:
     * A.smooth_l1_loss_backward(g, x, t, 0, 0.0) (-g at x = 0: x <= -0),
     * A.smooth_l1_loss_backward(tensor(2.), x, t, 1, 0.5),
     * A.huber_loss_backward(g, x, t, 0, 1.0), A.huber_loss_backward(tensor(2.), x, t, 2, 0.5),
     * A.huber_loss_backward(tensor(2.), x, t, 1, 0.5) */
    tj_tensor *x = vec(5, (float[]){0, 1, -1, 0.25f, NAN}), *t = vec(5, (float[]){0, 0, 0, 0, 0});
    tj_tensor *g = vec(5, (float[]){1, -2, 0.5f, 3, 1});
    test_expect_f32(tj_smooth_l1_loss_backward(g, x, t, 0, 0), (float[]){-1, -2, -0.5f, 3, NAN}, 5, 0);
    test_expect_f32(tj_smooth_l1_loss_backward(scalar(2), x, t, 1, 0.5), (float[]){0, 0.400000006f, -0.400000006f,
                                                                                   0.200000003f, NAN},
                    5, 0);
    test_expect_f32(tj_huber_loss_backward(g, x, t, 0, 1), (float[]){0, -2, -0.5f, 0.75f, NAN}, 5, 0);
    test_expect_f32(tj_huber_loss_backward(scalar(2), x, t, 2, 0.5), (float[]){0, 1, -1, 0.5f, NAN}, 5, 0);
    test_expect_f32(tj_huber_loss_backward(scalar(2), x, t, 1, 0.5), (float[]){0, 0.200000003f, -0.200000003f,
                                                                               0.100000001f, NAN},
                    5, 0);
}

static tj_tensor *loss_grads(int op, tj_tensor *a, tj_tensor *b, int64_t reduction, double param, tj_tensor **gb)
{
    tj_tensor_set_requires_grad(a, true);
    tj_tensor_set_requires_grad(b, true);
    tj_tensor *l = op == 0 ? tj_smooth_l1_loss(a, b, reduction, param)
                 : op == 1 ? tj_huber_loss(a, b, reduction, param) : tj_l1_loss(a, b, reduction);
    tj_tensor *g[2];
    cr_assert_not_null(l, "%s", tj_last_error());
    cr_assert_eq(tj_autograd_grad(&l, 1, NULL, (tj_tensor *[]){a, b}, 2, g), TJ_OK, "%s", tj_last_error());
    *gb = g[1];
    return g[0];
}

Test(opse, loss_gradients_match_pytorch)
{
    /* torch.autograd.grad(loss, (a, b)), a = [0.5, -1.25, 2, 0.1], b = [0, 1, -0.75, 0.35] */
    static const float av[4] = {0.5f, -1.25f, 2, 0.1f}, bv[4] = {0, 1, -0.75f, 0.35f};
    tj_tensor *gb;
    /* A.smooth_l1_loss(a, b, 1, 0.5) */
    test_expect_f32(loss_grads(0, vec(4, av), vec(4, bv), 1, 0.5, &gb), (float[]){0.25f, -0.25f, 0.25f, -0.125f}, 4,
                    1e-6);
    test_expect_f32(gb, (float[]){-0.25f, 0.25f, -0.25f, 0.125f}, 4, 1e-6);
    /* A.huber_loss(a, b, 2, 0.3) */
    test_expect_f32(loss_grads(1, vec(4, av), vec(4, bv), 2, 0.3, &gb), (float[]){0.300000012f, -0.300000012f,
                    0.300000012f,
                                                                                  -0.25f},
                    4, 1e-6);
    test_expect_f32(gb, (float[]){-0.300000012f, 0.300000012f, -0.300000012f, 0.25f}, 4, 1e-6);
    /* A.l1_loss(a, b, 1) */
    test_expect_f32(loss_grads(2, vec(4, av), vec(4, bv), 1, 0, &gb), (float[]){0.25f, -0.25f, 0.25f, -0.25f}, 4, 0);
    /* beta 0 at a == b: smooth_l1_loss_backward's -grad, not l1's 0;
     * A.smooth_l1_loss(z, zeros(4), 2, 0.0), z = [0, 1, -1, 0.5] */
    test_expect_f32(loss_grads(0, vec(4, (float[]){0, 1, -1, 0.5f}), vec(4, (float[]){0, 0, 0, 0}), 2, 0, &gb),
                    (float[]){-1, 1, -1, 1}, 4, 0);
}

Test(opse, broadcast_loss_gradients_average_over_the_loss_elements)
{
    /* The mean's gradient divides by the broadcast loss's 12 elements, as
     * for self and target expanded first (F.smooth_l1_loss broadcasts them);
     * PyTorch 1.13's aten-level formula divides by self's 3 (target's 4)
     * elements, which gradcheck rejects. torch.autograd.grad of
     * A.smooth_l1_loss(se, te, 1, 0.5), se / te s / t expanded to [3, 4],
     * summed back: */
    tj_tensor *gb, *ga = loss_grads(0, loss_self(), loss_target(), 1, 0.5, &gb);
    test_expect_f32(ga, (float[]){0.125f, -0.333333343f, 0.333333343f}, 3, 1e-6);
    test_expect_f32(gb, (float[]){-0.0833333358f, 0.0833333358f, -0.0833333358f, -0.0416666679f}, 4, 1e-6);
    cr_expect_eq(tj_tensor_ndim(ga), 2);
}

/* ---- tracing, decomposition, replay ---- */

static tj_status all_ops(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx;
    (void)n;
    int k = 0;
    tj_tensor *x = in[0], *t = in[1], *g = in[2];
    out[k++] = tj_hardtanh(x, tj_v_float(-2.5), tj_v_int(3));
    out[k++] = tj_relu6(x);
    out[k++] = tj_hardsigmoid(x);
    out[k++] = tj_hardswish(x);
    out[k++] = tj_hardtanh_backward(g, x, tj_v_int(-3), tj_v_float(2.5));
    out[k++] = tj_hardsigmoid_backward(g, x);
    out[k++] = tj_hardswish_backward(g, x);
    out[k++] = tj_l1_loss(x, t, 1);
    out[k++] = tj_smooth_l1_loss(x, t, 0, 0.5);
    out[k++] = tj_huber_loss(x, t, 2, 1.5);
    out[k++] = tj_smooth_l1_loss_backward(g, x, t, 1, 1);
    out[k++] = tj_huber_loss_backward(g, x, t, 0, 0.75);
    *n_out = k;
    for (int i = 0; i < k; i++)
        if (!out[i]) return tj_last_status();
    return TJ_OK;
}

#define NOPS 12
/* the operator each output's call records (relu6 and l1_loss are implicit) */
static const char *const op_names[NOPS] = {
    "aten::hardtanh", "aten::hardtanh", "aten::hardsigmoid", "aten::hardswish", "aten::hardtanh_backward",
    "aten::hardsigmoid_backward", "aten::hardswish_backward", "aten::mean", "aten::smooth_l1_loss",
    "aten::huber_loss", "aten::smooth_l1_loss_backward", "aten::huber_loss_backward"};

/* x holds both kinks, the bounds, nan and infinities; t is a row broadcast
 * against it */
static void inputs(tj_tensor **in)
{
    in[0] = f32(2, (int64_t[]){3, 4}, (float[]){-3, 3, -2.5f, 2.5f, NAN, INFINITY, -INFINITY, 0.5f, -7, 6, 1, -0.25f});
    in[1] = vec(4, (float[]){0.5f, -1, 0, 2});
    in[2] = f32(2, (int64_t[]){3, 4}, (float[]){1, -2, 0.5f, 3, 1, 1, 2, -1, 0.25f, 4, -3, 1.5f});
}

/* Equal results (zeros of the same sign), nan matching nan. */
static void expect_same(const tj_tensor *got, const tj_tensor *want, const char *what)
{
    cr_assert_not_null(got, "%s: %s", what, tj_last_error());
    cr_assert_eq(tj_tensor_dtype(got), tj_tensor_dtype(want), "%s", what);
    cr_assert_eq(tj_tensor_numel(got), tj_tensor_numel(want), "%s", what);
    cr_assert_eq(tj_tensor_ndim(got), tj_tensor_ndim(want), "%s", what);
    for (int64_t i = 0; i < tj_tensor_numel(got); i++) {
        double a = tj_tensor_item_at(got, i), b = tj_tensor_item_at(want, i);
        cr_expect((isnan(a) && isnan(b)) || (a == b && signbit(a) == signbit(b)), "%s [%lld]: %.17g, eager %.17g", what,
                  (long long)i, a, b);
    }
}

Test(opse, make_fx_records_aten_names_and_replay_matches_eager)
{
    tj_tensor *in[3], *eager[NOPS], *got[NOPS];
    inputs(in);
    test_run_eager(all_ops, in, 3, eager, NOPS);
    tj_graph *g = tj_make_fx(all_ops, NULL, in, 3, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    for (int k = 0; k < NOPS; k++) cr_expect_geq(tj_graph_count_op(g, tj_op_find(op_names[k])), 1, "%s", op_names[k]);
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::hardtanh")), 2, "relu6 records hardtanh");
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::relu6")), 0);
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::l1_loss")), 0);
    test_replay(g, in, 3, got, NOPS);
    for (int k = 0; k < NOPS; k++) expect_same(got[k], eager[k], op_names[k]);
    tj_graph_free(g);
}

/* In float32 and in float64 (where the kernels' float32 constants show). */
Test(opse, core_decompositions_lower_to_primitives_and_replay_like_eager)
{
    for (int dt = 0; dt < 2; dt++) {
        tj_tensor *in[3], *eager[NOPS], *got[NOPS];
        inputs(in);
        for (int i = 0; dt && i < 3; i++) in[i] = tj_to_copy(in[i], TJ_FLOAT64);
        test_run_eager(all_ops, in, 3, eager, NOPS);
        tj_decomp_table *core = tj_core_decompositions();
        for (int k = 0; k < NOPS; k++)
            cr_expect(tj_decomp_table_contains(core, tj_op_find(op_names[k])), "%s not in the core table", op_names[k]);
        tj_graph *g = tj_make_fx(all_ops, NULL, in, 3, core, TJ_TRACE_FAKE);
        tj_decomp_table_free(core);
        cr_assert_not_null(g, "%s", tj_last_error());
        cr_expect(test_only_primitives(g));
        test_replay(g, in, 3, got, NOPS);
        /* the pointwise results are the same numbers; the reduced losses
         * (sums in another order) are close */
        for (int k = 0; k < NOPS; k++) {
            if (k == 7 || k == 9)
                cr_expect(test_close(tj_tensor_item_at(got[k], 0), tj_tensor_item_at(eager[k], 0), 1e-6, 0), "%s",
                          op_names[k]);
            else expect_same(got[k], eager[k], op_names[k]);
        }
        tj_graph_free(g);
    }
}
