/* Session 14 elementwise operators: where with Scalar branches, logical_not
 * / and / or / xor, sign, square, rsub, leaky_relu, softplus and their
 * backward operators, and session 27's sgn (abs's gradient). Reference values come from PyTorch 1.13 (the
 * expressions are named next to each table; x is `xs` below, float32), so the
 * tests run without it. Each operator is also checked through make_fx (the
 * aten name is recorded), the core decompositions (bit-equal to the kernel)
 * and a compiled plan (bit-equal to eager). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "kernels/cpu_isa.h"
#include "test_util.h"

TestSuite(ew2, .init = test_scope_open, .fini = test_scope_close_isa);

#define NX 10
/* torch.tensor([nan, inf, -inf, -0.0, 0.0, 0.5, -0.5, -2, 3, 25]) */
static const float xs[NX] = {NAN, INFINITY, -INFINITY, -0.0f, 0.0f, 0.5f, -0.5f, -2, 3, 25};
/* torch.linspace(-1, 2, 10): the upstream gradient of the gradient tests */
static const float gs[NX] = {-1, -0.666666627f, -0.333333313f, 2.98023224e-08f, 0.333333373f,
                             0.666666627f, 1, 1.33333325f, 1.66666663f, 2};

static tj_tensor *f32(int64_t n, const float *v) { return test_tensor(TJ_FLOAT32, 1, (int64_t[]){n}, v); }
static tj_tensor *i64(int64_t n, const int64_t *v) { return test_tensor(TJ_INT64, 1, (int64_t[]){n}, v); }
static tj_tensor *b8(int64_t n, const uint8_t *v) { return test_tensor(TJ_BOOL, 1, (int64_t[]){n}, v); }
static tj_tensor *xt(void) { return f32(NX, xs); }

/* float32 values within 1 ulp-ish (softplus: SLEEF's exp / log1p against
 * PyTorch's); infinities and nan exactly. */
static void expect_f32_close(const tj_tensor *t, const float *want, int64_t n)
{
    cr_assert_not_null(t, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_dtype(t), TJ_FLOAT32);
    cr_assert_eq(tj_tensor_numel(t), n);
    const float *p = tj_tensor_data(t);
    for (int64_t i = 0; i < n; i++)
        cr_assert(test_close(p[i], want[i], 3e-7, 1e-7) || (isnan(p[i]) && isnan(want[i])),
                  "[%lld] = %.9g, want %.9g", (long long)i, p[i], want[i]);
}

/* ---- values ---- */

Test(ew2, where_with_scalar_branches_promotes_as_pytorch)
{
    tj_tensor *c = b8(4, (uint8_t[]){1, 0, 1, 0});
    /* torch.where(c, x, 0.5) on float32 keeps float32 */
    tj_tensor *x = f32(4, (float[]){NAN, -0.0f, 2, 3});
    test_expect_f32(tj_where_scalar_other(c, x, tj_v_float(0.5)), (float[]){NAN, 0.5f, 2, 0.5f}, 4, 0);
    /* torch.where(c, tensor([1, 2, 3, 4]), 0.5) is float32: [1, 0.5, 3, 0.5] */
    tj_tensor *i = i64(4, (int64_t[]){1, 2, 3, 4});
    test_expect_f32(tj_where_scalar_other(c, i, tj_v_float(0.5)), (float[]){1, 0.5f, 3, 0.5f}, 4, 0);
    /* torch.where(c, 2.5, tensor([1, 2, 3, 4])) likewise: [2.5, 2, 2.5, 4] */
    test_expect_f32(tj_where_scalar_self(c, tj_v_float(2.5), i), (float[]){2.5f, 2, 2.5f, 4}, 4, 0);
    /* an int Scalar keeps int64; with a bool tensor it gives int64 */
    test_expect_i64(tj_where_scalar_other(c, i, tj_v_int(-7)), 4, (int64_t[]){1, -7, 3, -7});
    tj_tensor *b = b8(4, (uint8_t[]){1, 1, 0, 0});
    test_expect_i64(tj_where_scalar_other(c, b, tj_v_int(0)), 4, (int64_t[]){1, 0, 0, 0});
    /* torch.where(c, 1.0, 0) float32, (c, 1, 0) int64, (c, True, False) bool */
    test_expect_f32(tj_where_scalar(c, tj_v_float(1.0), tj_v_int(0)), (float[]){1, 0, 1, 0}, 4, 0);
    test_expect_i64(tj_where_scalar(c, tj_v_int(1), tj_v_int(0)), 4, (int64_t[]){1, 0, 1, 0});
    test_expect_bool(tj_where_scalar(c, tj_v_bool(true), tj_v_bool(false)), 4, (uint8_t[]){1, 0, 1, 0});
    /* 0.1 rounds to float32 once; the condition broadcasts against self */
    tj_tensor *c2 = test_tensor(TJ_BOOL, 2, (int64_t[]){2, 1}, (uint8_t[]){1, 0});
    tj_tensor *r = tj_where_scalar_other(c2, f32(2, (float[]){5, 6}), tj_v_float(0.1));
    cr_assert_eq(tj_tensor_ndim(r), 2);
    test_expect_f32(r, (float[]){5, 6, 0.1f, 0.1f}, 4, 0);
    tj_tensor *r64 = tj_where_scalar_other(c, test_tensor(TJ_FLOAT64, 1, (int64_t[]){4}, (double[]){1, 2, 3, 4}),
                                           tj_v_float(0.1));
    cr_assert_eq(tj_tensor_item_at(r64, 1), 0.1); /* kept as a double */
}

/* torch.logical_not(x); logical_and / or / xor(x, y), y = [1,0,1,0,1,0,0,1,0,1] */
Test(ew2, logical_ops_treat_nan_as_true_and_minus_zero_as_false)
{
    tj_tensor *x = xt(), *y = i64(NX, (int64_t[]){1, 0, 1, 0, 1, 0, 0, 1, 0, 1});
    test_expect_bool(tj_logical_not(x), NX, (uint8_t[]){0, 0, 0, 1, 1, 0, 0, 0, 0, 0});
    test_expect_bool(tj_logical_and(x, y), NX, (uint8_t[]){1, 0, 1, 0, 0, 0, 0, 1, 0, 1});
    test_expect_bool(tj_logical_or(x, y), NX, (uint8_t[]){1, 1, 1, 0, 1, 1, 1, 1, 1, 1});
    test_expect_bool(tj_logical_xor(x, y), NX, (uint8_t[]){0, 1, 0, 0, 1, 1, 1, 0, 1, 0});
    /* int64 and bool in, broadcasting [2,1] against [3] */
    tj_tensor *i = i64(3, (int64_t[]){-3, 0, INT64_MIN});
    test_expect_bool(tj_logical_not(i), 3, (uint8_t[]){0, 1, 0});
    tj_tensor *m = test_tensor(TJ_BOOL, 2, (int64_t[]){2, 1}, (uint8_t[]){1, 0});
    tj_tensor *r = tj_logical_xor(m, i);
    cr_assert_eq(tj_tensor_ndim(r), 2);
    test_expect_bool(r, 6, (uint8_t[]){0, 1, 0, 1, 0, 1});
    test_expect_bool(tj_logical_and(m, i), 6, (uint8_t[]){1, 0, 1, 0, 0, 0});
    test_expect_bool(tj_logical_or(m, i), 6, (uint8_t[]){1, 1, 1, 1, 0, 1});
    test_expect_bool(tj_logical_not(b8(2, (uint8_t[]){1, 0})), 2, (uint8_t[]){0, 1});
}

Test(ew2, sign_square_rsub_give_pytorchs_answers)
{
    tj_tensor *x = xt();
    /* torch.sign(x): +0 for nan and both zeros */
    test_expect_f32(tj_sign(x), (float[]){0, 1, -1, 0, 0, 1, -1, -1, 1, 1}, NX, 0);
    test_expect_i64(tj_sign(i64(4, (int64_t[]){-5, 0, 7, INT64_MIN})), 4, (int64_t[]){-1, 0, 1, -1});
    test_expect_bool(tj_sign(b8(2, (uint8_t[]){1, 0})), 2, (uint8_t[]){1, 0});
    /* torch.square(x); square of int64 wraps; of bool is int64 */
    test_expect_f32(tj_square(x), (float[]){NAN, INFINITY, INFINITY, 0, 0, 0.25f, 0.25f, 4, 9, 625}, NX, 0);
    test_expect_i64(tj_square(i64(3, (int64_t[]){-3, 3037000500LL, 0})), 3,
                    (int64_t[]){9, (int64_t)(3037000500ULL * 3037000500ULL), 0});
    test_expect_i64(tj_square(b8(2, (uint8_t[]){1, 0})), 2, (int64_t[]){1, 0});
    /* torch.rsub(x, 1.5, alpha=2) */
    test_expect_f32(tj_rsub_scalar(x, tj_v_float(1.5), tj_v_int(2)),
                    (float[]){NAN, -INFINITY, INFINITY, 1.5f, 1.5f, 0.5f, 2.5f, 5.5f, -4.5f, -48.5f}, NX, 0);
    /* torch.rsub(tensor([1, 2]), 2.5) is float32 [1.5, 0.5]; rsub.Tensor with alpha */
    test_expect_f32(tj_rsub_scalar(i64(2, (int64_t[]){1, 2}), tj_v_float(2.5), tj_v_int(1)), (float[]){1.5f, 0.5f}, 2,
                    0);
    test_expect_i64(tj_rsub_scalar(i64(2, (int64_t[]){1, 2}), tj_v_int(10), tj_v_int(3)), 2, (int64_t[]){7, 4});
    test_expect_f32(tj_rsub(f32(2, (float[]){1, 2}), f32(2, (float[]){5, 5}), tj_v_int(2)), (float[]){3, 1}, 2, 0);
    tj_tensor *m = test_tensor(TJ_FLOAT32, 2, (int64_t[]){2, 1}, (float[]){1, 2});
    tj_tensor *r = tj_rsub(m, f32(3, (float[]){10, 20, 30}), tj_v_int(1));
    cr_assert_eq(tj_tensor_ndim(r), 2);
    test_expect_f32(r, (float[]){9, 19, 29, 8, 18, 28}, 6, 0);
}

/* torch.sgn is torch.sign for every real dtype: nan and both zeros give +0,
 * int64 keeps int64 (INT64_MIN gives -1), bool is the identity (torch 1.13
 * allows bool for both; abs refuses it). */
Test(ew2, sgn_gives_sign_for_every_real_dtype)
{
    test_expect_f32(tj_sgn(xt()), (float[]){0, 1, -1, 0, 0, 1, -1, -1, 1, 1}, NX, 0);
    tj_tensor *d = tj_sgn(test_tensor(TJ_FLOAT64, 1, (int64_t[]){4}, (double[]){NAN, -0.0, -1e-300, 7}));
    cr_assert_not_null(d, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_dtype(d), TJ_FLOAT64);
    const double *dp = tj_tensor_data(d);
    cr_expect(test_bits_f64(dp[0]) == test_bits_f64(0.0) && test_bits_f64(dp[1]) == test_bits_f64(0.0),
              "sgn(nan) %g, sgn(-0.0) %g: want +0", dp[0], dp[1]);
    cr_expect(dp[2] == -1 && dp[3] == 1, "%g %g", dp[2], dp[3]);
    test_expect_i64(tj_sgn(i64(4, (int64_t[]){-5, 0, 7, INT64_MIN})), 4, (int64_t[]){-1, 0, 1, -1});
    test_expect_bool(tj_sgn(b8(2, (uint8_t[]){1, 0})), 2, (uint8_t[]){1, 0});
    test_expect_error(tj_sgn(NULL), TJ_ERR_INVALID_ARGUMENT, "aten::sgn", "");
    test_expect_error(tj_abs(b8(2, (uint8_t[]){1, 0})), TJ_ERR_DTYPE, "aten::abs", "bool");
}

Test(ew2, leaky_relu_and_softplus_give_pytorchs_answers_on_every_isa)
{
    tj_tensor *x = xt();
    /* a 37-element input reaches the vector bodies and the partial tail */
    float wide[37];
    for (int i = 0; i < 37; i++) wide[i] = xs[i % NX];
    tj_tensor *w = f32(37, wide);
    for (int k = 0; k < TEST_NISA; k++) {
        if (!tj_k_isa_force(test_isas[k])) continue;
        /* F.leaky_relu(x, 0.01); F.leaky_relu(x, -0.2) */
        test_expect_f32(tj_leaky_relu(x, tj_v_float(0.01)),
                        (float[]){NAN, INFINITY, -INFINITY, -0.0f, 0, 0.5f, -0.00499999989f, -0.0199999996f, 3, 25}, NX,
                        0);
        test_expect_f32(tj_leaky_relu(x, tj_v_float(-0.2)),
                        (float[]){NAN, INFINITY, INFINITY, 0, -0.0f, 0.5f, 0.100000001f, 0.400000006f, 3, 25}, NX, 0);
        /* F.softplus(x); F.softplus(x, beta=2, threshold=5) */
        expect_f32_close(tj_softplus(x, tj_v_int(1), tj_v_int(20)),
                         (float[]){NAN, INFINITY, 0, 0.693147182f, 0.693147182f, 0.974076986f, 0.474076986f,
                                   0.126928002f, 3.04858732f, 25},
                         NX);
        const float sp2[NX] = {NAN, INFINITY, 0, 0.346573591f, 0.346573591f, 0.656630814f, 0.156630844f,
                               0.00907496456f, 3, 25};
        expect_f32_close(tj_softplus(x, tj_v_int(2), tj_v_int(5)), sp2, NX);
        tj_tensor *sw = tj_softplus(w, tj_v_int(2), tj_v_int(5));
        float want[37];
        for (int i = 0; i < 37; i++) want[i] = sp2[i % NX];
        expect_f32_close(sw, want, 37);
    }
    tj_k_isa_force(NULL);
    /* float64 keeps float64 and the double slope */
    tj_tensor *d = tj_leaky_relu(test_tensor(TJ_FLOAT64, 1, (int64_t[]){2}, (double[]){-1, 2}), tj_v_float(0.1));
    cr_assert_eq(tj_tensor_dtype(d), TJ_FLOAT64);
    cr_assert_eq(tj_tensor_item_at(d, 0), -0.1);
}

/* ---- gradients: x.grad after op(x).backward(g) in PyTorch ---- */

typedef tj_tensor *(*unary_fn)(tj_tensor *x);
static tj_tensor *leaky01(tj_tensor *x) { return tj_leaky_relu(x, tj_v_float(0.1)); }
static tj_tensor *softplus25(tj_tensor *x) { return tj_softplus(x, tj_v_int(2), tj_v_int(5)); }
static tj_tensor *rsub15(tj_tensor *x) { return tj_rsub_scalar(x, tj_v_float(1.5), tj_v_int(2)); }
static const uint8_t cond[NX] = {1, 0, 1, 0, 1, 0, 1, 0, 1, 0};
static tj_tensor *where_other(tj_tensor *x) { return tj_where_scalar_other(b8(NX, cond), x, tj_v_float(0.5)); }
static tj_tensor *where_self(tj_tensor *x) { return tj_where_scalar_self(b8(NX, cond), tj_v_float(0.5), x); }

static tj_tensor *grad_of(unary_fn f)
{
    tj_tensor *x = xt();
    cr_assert_eq(tj_tensor_set_requires_grad(x, true), TJ_OK);
    tj_tensor *y = f(x);
    cr_assert_not_null(y, "%s", tj_last_error());
    cr_assert_eq(tj_backward(y, f32(NX, gs)), TJ_OK, "%s", tj_last_error());
    return tj_tensor_grad(x);
}

Test(ew2, gradients_match_pytorchs)
{
    test_expect_f32(grad_of(leaky01),
                    (float[]){-0.100000001f, -0.666666627f, -0.0333333313f, 2.98023228e-09f, 0.0333333388f,
                              0.666666627f, 0.100000001f, 0.133333325f, 1.66666663f, 2},
                    NX, 0);
    expect_f32_close(grad_of(softplus25), (float[]){NAN, -0.666666627f, -0.0f, 1.49011612e-08f, 0.166666687f,
                                                    0.487372339f, 0.268941432f, 0.0239816122f, 1.66666663f, 2},
                     NX);
    test_expect_f32(grad_of(tj_square),
                    (float[]){NAN, -INFINITY, INFINITY, -0.0f, 0, 0.666666627f, -1, -5.33333302f, 10, 100}, NX, 0);
    test_expect_f32(grad_of(tj_sign), (float[]){0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, NX, 0);
    test_expect_f32(grad_of(tj_sgn), (float[]){0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, NX, 0);
    /* abs: g * sgn(x), -0 where a negative g meets a zero sgn (nan's) */
    test_expect_f32(grad_of(tj_abs),
                    (float[]){-0.0f, -0.666666627f, 0.333333313f, 0, 0, 0.666666627f, -1, -1.33333325f, 1.66666663f, 2},
                    NX, 0);
    test_expect_f32(grad_of(rsub15),
                    (float[]){2, 1.33333325f, 0.666666627f, -5.96046448e-08f, -0.666666746f, -1.33333325f, -2,
                              -2.66666651f, -3.33333325f, -4},
                    NX, 0);
    test_expect_f32(grad_of(where_other), (float[]){-1, 0, -0.333333313f, 0, 0.333333373f, 0, 1, 0, 1.66666663f, 0}, NX,
                    0);
    test_expect_f32(grad_of(where_self),
                    (float[]){0, -0.666666627f, 0, 2.98023224e-08f, 0, 0.666666627f, 0, 1.33333325f, 0, 2}, NX, 0);
    /* rsub.Tensor: other gets g, self -alpha g */
    tj_tensor *a = f32(2, (float[]){1, 2}), *b = f32(2, (float[]){3, 4});
    tj_tensor_set_requires_grad(a, true);
    tj_tensor_set_requires_grad(b, true);
    cr_assert_eq(tj_backward(tj_rsub(a, b, tj_v_float(0.5)), f32(2, (float[]){1, -2})), TJ_OK, "%s", tj_last_error());
    test_expect_f32(tj_tensor_grad(a), (float[]){-0.5f, 1}, 2, 0);
    test_expect_f32(tj_tensor_grad(b), (float[]){1, -2}, 2, 0);
}

Test(ew2, backward_operators_give_pytorchs_answers)
{
    tj_tensor *x = xt(), *g = f32(NX, gs);
    /* torch.ops.aten.leaky_relu_backward(g, x, 0.1, False) equals the grads above */
    test_expect_f32(tj_leaky_relu_backward(g, x, tj_v_float(0.1), false),
                    (float[]){-0.100000001f, -0.666666627f, -0.0333333313f, 2.98023228e-09f, 0.0333333388f,
                              0.666666627f, 0.100000001f, 0.133333325f, 1.66666663f, 2},
                    NX, 0);
    /* self_is_result with a non-negative slope is allowed (the result's sign is the input's) */
    cr_assert_not_null(tj_leaky_relu_backward(g, x, tj_v_float(0.1), true), "%s", tj_last_error());
    expect_f32_close(tj_softplus_backward(g, x, tj_v_int(2), tj_v_int(5)),
                     (float[]){NAN, -0.666666627f, -0.0f, 1.49011612e-08f, 0.166666687f, 0.487372339f, 0.268941432f,
                               0.0239816122f, 1.66666663f, 2},
                     NX);
}

/* ---- errors ---- */

Test(ew2, bad_input_names_the_operator_and_shapes)
{
    tj_tensor *b = b8(2, (uint8_t[]){1, 0}), *i = i64(2, (int64_t[]){1, 2});
    test_expect_error(tj_leaky_relu(b, tj_v_float(0.01)), TJ_ERR_DTYPE, "aten::leaky_relu", "bool");
    test_expect_error(tj_leaky_relu(i, tj_v_float(0.01)), TJ_ERR_DTYPE, "aten::leaky_relu", "int64");
    test_expect_error(tj_softplus(i, tj_v_int(1), tj_v_int(20)), TJ_ERR_DTYPE, "aten::softplus", "int64");
    test_expect_error(tj_leaky_relu(f32(1, (float[]){1}), tj_v_float(1e300)), TJ_ERR_INVALID_ARGUMENT,
                      "aten::leaky_relu",
                      "negative_slope");
    tj_tensor *a3 = f32(3, (float[]){1, 2, 3}), *a4 = f32(4, (float[]){1, 2, 3, 4});
    test_expect_error(tj_logical_and(a3, a4), TJ_ERR_SHAPE, "aten::logical_and", "[3] and [4]");
    test_expect_error(tj_logical_or(a3, a4), TJ_ERR_SHAPE, "aten::logical_or", "[3] and [4]");
    test_expect_error(tj_logical_xor(a3, a4), TJ_ERR_SHAPE, "aten::logical_xor", "[3] and [4]");
    test_expect_error(tj_where_scalar_other(i, a3, tj_v_int(0)), TJ_ERR_DTYPE, "aten::where.ScalarOther", "bool");
    test_expect_error(tj_where_scalar_self(b, tj_v_int(0), a3), TJ_ERR_SHAPE, "aten::where.ScalarSelf", "[2] and [3]");
    test_expect_error(tj_rsub(b, b, tj_v_int(1)), TJ_ERR_DTYPE, "aten::rsub.Tensor", "bool");
    test_expect_error(tj_rsub_scalar(i, tj_v_int(1), tj_v_float(0.5)), TJ_ERR_DTYPE, "aten::rsub.Scalar", "alpha");
    test_expect_error(tj_leaky_relu_backward(a3, a3, tj_v_float(-0.1), true), TJ_ERR_INVALID_ARGUMENT,
                      "aten::leaky_relu_backward", "negative slope");
    test_expect_error(tj_softplus_backward(a3, a4, tj_v_int(1), tj_v_int(20)), TJ_ERR_SHAPE, "aten::softplus_backward",
                      "[3] and [4]");
}

/* ---- tracing, decomposition, replay ---- */

/* Every new operator once, on x (float32 [2, 5]) and m (bool [5]). */
static tj_status all_ops(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx;
    (void)n;
    tj_tensor *x = in[0], *m = in[1];
    int k = 0;
    out[k++] = tj_where_scalar_other(m, x, tj_v_float(0.5));
    out[k++] = tj_where_scalar_self(m, tj_v_int(-1), x);
    out[k++] = tj_where_scalar(m, tj_v_float(1.0), tj_v_int(0));
    out[k++] = tj_logical_not(x);
    out[k++] = tj_logical_and(x, m);
    out[k++] = tj_logical_or(x, m);
    out[k++] = tj_logical_xor(x, m);
    out[k++] = tj_sign(x);
    out[k++] = tj_square(x);
    out[k++] = tj_sgn(x);
    out[k++] = tj_rsub(x, x, tj_v_int(2));
    out[k++] = tj_rsub_scalar(x, tj_v_float(1.5), tj_v_int(1));
    out[k++] = tj_leaky_relu(x, tj_v_float(0.01));
    out[k++] = tj_softplus(x, tj_v_int(2), tj_v_int(5));
    out[k++] = tj_leaky_relu_backward(x, x, tj_v_float(0.2), false);
    out[k++] = tj_softplus_backward(x, x, tj_v_float(1.5), tj_v_int(3));
    *n_out = k;
    for (int i = 0; i < k; i++)
        if (!out[i]) return tj_last_status();
    return TJ_OK;
}

#define NOPS 16
/* square is implicit, as in ATen 1.13: graphs record pow.Tensor_Scalar(x, 2) */
static const char *const op_names[NOPS] = {
    "aten::where.ScalarOther", "aten::where.ScalarSelf", "aten::where.Scalar", "aten::logical_not",
    "aten::logical_and", "aten::logical_or", "aten::logical_xor", "aten::sign", "aten::pow.Tensor_Scalar", "aten::sgn",
    "aten::rsub.Tensor", "aten::rsub.Scalar", "aten::leaky_relu", "aten::softplus", "aten::leaky_relu_backward",
    "aten::softplus_backward"};

static void inputs(tj_tensor **in)
{
    in[0] = test_tensor(TJ_FLOAT32, 2, (int64_t[]){2, 5}, xs);
    in[1] = b8(5, (uint8_t[]){1, 0, 0, 1, 1});
}

Test(ew2, make_fx_records_the_aten_names)
{
    tj_tensor *in[2];
    inputs(in);
    tj_graph *g = tj_make_fx(all_ops, NULL, in, 2, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    test_expect_op_count(g, op_names, NOPS, 1);
    tj_graph_free(g);
}

Test(ew2, decomposed_graph_and_plan_give_the_kernels_bits)
{
    tj_tensor *in[2];
    inputs(in);
    tj_tensor *eager[NOPS];
    test_run_eager(all_ops, in, 2, eager, NOPS);
    /* the core table lowers everything to primitives with the kernels' bits */
    tj_tensor *got[NOPS];
    cr_expect(test_run_core(all_ops, NULL, in, 2, got));
    for (int k = 0; k < NOPS; k++) test_expect_identical(got[k], eager[k], op_names[k]);
    /* the undecomposed graph compiled into a plan replays eager's bits */
    tj_graph *g = tj_make_fx(all_ops, NULL, in, 2, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    test_replay(g, in, 2, got, NOPS);
    for (int k = 0; k < NOPS; k++) test_expect_identical(got[k], eager[k], op_names[k]);
    tj_graph_free(g);
}

/* PyTorch 1.13: torch.ops.aten.where.ScalarOther(c, float32 x, 1e300) and
 * where.Scalar(c, 1e300, 0) raise "value cannot be converted to type float
 * without overflow"; a float64 self takes 1e300. */
Test(ew2, where_scalar_branches_that_overflow_float32_are_refused)
{
    tj_tensor *c = b8(4, (uint8_t[]){1, 0, 1, 0});
    cr_expect_null(tj_where_scalar_other(c, f32(4, (float[]){1, 2, 3, 4}), tj_v_float(1e300)));
    cr_expect_eq(tj_last_status(), TJ_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(tj_last_error(), "aten::where.ScalarOther: other 1e+300") != NULL, "%s", tj_last_error());
    cr_expect_null(tj_where_scalar(c, tj_v_float(1e300), tj_v_int(0)));
    cr_expect(strstr(tj_last_error(), "aten::where.Scalar: self 1e+300") != NULL, "%s", tj_last_error());
    tj_tensor *r = tj_where_scalar_other(c, test_tensor(TJ_FLOAT64, 1, (int64_t[]){4}, (double[]){1, 2, 3, 4}),
                                         tj_v_float(1e300));
    cr_assert_not_null(r, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_item_at(r, 1), 1e300);
}
