/* Decompositions of the composite elementwise operators (relu, gelu, silu,
 * logaddexp, leaky_relu, softplus, elu, hardtanh, relu6, hardsigmoid,
 * hardswish, mish, log_sigmoid, glu) and of the activations' backward
 * operators, as torch._decomp /
 * torch._refs write them in PyTorch 1.13, spelled with the operators of
 * OPS.md (no le.Scalar, isinf or rsub: `self <= t` is le.Tensor against a
 * 0-dim tensor, `1 - y` is neg + add.Scalar). The argument checks the
 * kernels' shape functions make are repeated here, so a traced call fails
 * the same way as an eager one. */
#include <math.h>
#include <string.h>

#include "util.h"

static tj_status done(tj_tensor *r, tj_value *outs)
{
    if (!r) return tj_last_status();
    outs[0] = tj_v_tensor(r);
    return TJ_OK;
}

/* result_type of the first n (tensor) arguments, which must be a float one;
 * writes those arguments converted to it into x (as torch._refs' type
 * promotion wrapper does): the kernels compute in that dtype, and abs / neg
 * below refuse the bool operand a float result may come from. */
static tj_status float_result(const char *op, const tj_value *args, int n, tj_dtype *dt, tj_tensor **x)
{
    *dt = tj_result_type(args, n);
    if (!tj_dtype_is_float(*dt))
        return tj_error(TJ_ERR_DTYPE, "%s: not supported for %s (float32/float64 only)", op, tj_dtype_name(*dt));
    for (int i = 0; i < n; i++)
        if (!(x[i] = tj_dc_to(args[i].u.t, *dt))) return tj_last_status();
    return TJ_OK;
}

static tj_status approximate(const char *op, const tj_value *v, bool *is_tanh)
{
    *is_tanh = !strcmp(v->u.s, "tanh");
    if (*is_tanh || !strcmp(v->u.s, "none")) return TJ_OK;
    return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: approximate argument must be either 'none' or 'tanh', got '%s'", op,
                    v->u.s);
}

#define F(x) tj_v_float(x)

/* gelu constants as torch._decomp spells them */
#define K_SQRT1_2 0.70710678118654752440
#define K_BETA (1.41421356237309504880 * 1.12837916709551257390 * 0.5) /* sqrt(2/pi) */
#define K_PDF (1.12837916709551257390 * 0.70710678118654752440 * 0.5)  /* 1/sqrt(2 pi) */
#define K_KAPPA 0.044715

/* relu(a) = clamp(a, min=0): keeps the dtype, nan stays nan. */
static tj_status relu(const tj_value *args, tj_value *outs)
{
    tj_tensor *a = args[0].u.t;
    if (tj_tensor_dtype(a) == TJ_BOOL) return tj_error(TJ_ERR_DTYPE, "aten::relu: not supported for bool input");
    return done(tj_clamp(a, tj_v_int(0), tj_v_none()), outs);
}

/* none: a * 0.5 * (1 + erf(a / sqrt(2)));
 * tanh: 0.5 * a * (1 + tanh(sqrt(2/pi) * (a + 0.044715 * a^3))). */
static tj_status gelu(const tj_value *args, tj_value *outs)
{
    tj_tensor *a;
    tj_dtype dt;
    bool is_tanh;
    tj_status st = approximate("aten::gelu", &args[1], &is_tanh);
    if (st == TJ_OK) st = float_result("aten::gelu", args, 1, &dt, &a);
    if (st != TJ_OK) return st;
    if (is_tanh) {
        tj_tensor *cube = tj_mul(tj_mul(a, a), a);
        tj_tensor *inner = tj_mul_scalar(tj_add(a, tj_mul_scalar(cube, F(K_KAPPA))), F(K_BETA));
        return done(tj_mul(tj_mul_scalar(a, F(0.5)), tj_add_scalar(tj_tanh(inner), tj_v_int(1))), outs);
    }
    tj_tensor *cdf1 = tj_add_scalar(tj_erf(tj_mul_scalar(a, F(K_SQRT1_2))), tj_v_int(1));
    return done(tj_mul(tj_mul_scalar(a, F(0.5)), cdf1), outs);
}

/* silu(a) = a * sigmoid(a) */
static tj_status silu(const tj_value *args, tj_value *outs)
{
    tj_tensor *a;
    tj_dtype dt;
    tj_status st = float_result("aten::silu", args, 1, &dt, &a);
    if (st != TJ_OK) return st;
    return done(tj_mul(a, tj_sigmoid(a)), outs);
}

/* max + log1p(exp(min - max)), except that equal infinities give
 * themselves: where(a == b & |a| == inf, a, ...). */
static tj_status logaddexp(const tj_value *args, tj_value *outs)
{
    tj_tensor *x[2];
    tj_dtype dt;
    tj_status st = float_result("aten::logaddexp", args, 2, &dt, x);
    if (st != TJ_OK) return st;
    tj_tensor *a = x[0], *b = x[1];
    tj_tensor *mask = tj_ge(a, b);
    tj_tensor *mx = tj_where(mask, a, b), *mn = tj_where(mask, b, a);
    tj_tensor *inf_mask = tj_mul(tj_eq(a, b), tj_eq_scalar(tj_abs(a), F(INFINITY)));
    return done(tj_where(inf_mask, a, tj_add(mx, tj_log1p(tj_exp(tj_sub(mn, mx))))), outs);
}

/* where(self <= threshold, 0, grad), computed in result_type(grad, self). */
static tj_status threshold_backward(const tj_value *args, tj_value *outs)
{
    tj_tensor *grad = args[0].u.t, *self = args[1].u.t;
    tj_dtype dt = tj_result_type(args, 2);
    if (dt == TJ_BOOL) return tj_error(TJ_ERR_DTYPE, "aten::threshold_backward: not supported for bool operands");
    tj_tensor *mask = tj_le(self, tj_scalar_tensor(args[2], (int)dt));
    if (tj_tensor_dtype(grad) != dt) grad = tj_to_copy(grad, (int)dt);
    return done(tj_where(mask, tj_scalar_tensor(tj_v_int(0), (int)dt), grad), outs);
}

static tj_status gelu_backward(const tj_value *args, tj_value *outs)
{
    tj_tensor *ops[2];
    tj_dtype dt;
    bool is_tanh;
    tj_status st = approximate("aten::gelu_backward", &args[2], &is_tanh);
    if (st == TJ_OK) st = float_result("aten::gelu_backward", args, 2, &dt, ops);
    if (st != TJ_OK) return st;
    tj_tensor *grad = ops[0], *x = ops[1];
    if (is_tanh) {
        /* as the kernel computes it, without 1 + tanh's cancellation:
         * s = sigmoid(2 inner) from e = exp(-2|inner|), s (1 - s) = e / (1 + e)^2,
         * grad (s + x s (1 - s) 2 inner'). Each sign test is one selection
         * on lt (a fused step runs a comparison inside its where; abs and
         * clamp would decompose into three calls each): -2|inner| is
         * t < 0 ? 2 beta t : -2 beta t (scaling by 2 is exact: the bits of
         * -2 (beta t)), the kernel's |x| == x is !(x < 0) (alike for -0; a nan
         * takes the other branch, nan either way, its sign may differ), and
         * x^2 capped as clamp would (nan stays nan). */
        tj_tensor *x_sq = tj_mul(x, x), *x_cube = tj_mul(x_sq, x);
        tj_tensor *t = tj_add(x, tj_mul_scalar(x_cube, F(K_KAPPA))), *zero = tj_scalar_tensor(tj_v_int(0), (int)dt);
        tj_tensor *minus_2_abs_inner =
            tj_where(tj_lt(t, zero), tj_mul_scalar(t, F(2 * K_BETA)), tj_mul_scalar(t, F(-2 * K_BETA)));
        tj_tensor *e = tj_exp(minus_2_abs_inner);
        tj_tensor *r = tj_reciprocal(tj_add_scalar(e, tj_v_int(1)));
        tj_tensor *s = tj_where(tj_lt(x, zero), tj_mul(e, r), r); /* x >= 0 ? r : e r */
        /* x^2 capped (e is 0 long before) so that large finite x give grad, not 0 * inf */
        tj_tensor *cap = tj_scalar_tensor(F(1e4), (int)dt);
        tj_tensor *x_sq_capped = tj_where(tj_lt(cap, x_sq), cap, x_sq);
        tj_tensor *inner_derivative2 =
            tj_mul_scalar(tj_add_scalar(tj_mul_scalar(x_sq_capped, F(3 * K_KAPPA)), tj_v_int(1)), F(2 * K_BETA));
        tj_tensor *right = tj_mul(x, tj_mul(tj_mul(tj_mul(e, r), r), inner_derivative2));
        return done(tj_mul(grad, tj_add(s, right)), outs);
    }
    tj_tensor *cdf = tj_mul_scalar(tj_add_scalar(tj_erf(tj_mul_scalar(x, F(K_SQRT1_2))), tj_v_int(1)), F(0.5));
    tj_tensor *pdf = tj_mul_scalar(tj_exp(tj_mul_scalar(tj_mul(x, x), F(-0.5))), F(K_PDF));
    return done(tj_mul(grad, tj_add(cdf, tj_mul(x, pdf))), outs);
}

/* (grad * (1 - y)) * y, in the kernel's order of operations */
static tj_status sigmoid_backward(const tj_value *args, tj_value *outs)
{
    tj_tensor *x[2];
    tj_dtype dt;
    tj_status st = float_result("aten::sigmoid_backward", args, 2, &dt, x);
    if (st != TJ_OK) return st;
    tj_tensor *grad = x[0], *y = x[1];
    return done(tj_mul(tj_mul(grad, tj_add_scalar(tj_neg(y), tj_v_int(1))), y), outs);
}

/* grad * (1 - y * y) */
static tj_status tanh_backward(const tj_value *args, tj_value *outs)
{
    tj_tensor *x[2];
    tj_dtype dt;
    tj_status st = float_result("aten::tanh_backward", args, 2, &dt, x);
    if (st != TJ_OK) return st;
    tj_tensor *grad = x[0], *y = x[1];
    return done(tj_mul(grad, tj_add_scalar(tj_neg(tj_mul(y, y)), tj_v_int(1))), outs);
}

/* torch._refs leaky_relu: where(a > 0, a, a * negative_slope). */
static tj_status leaky_relu(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(leaky_relu, args, m);
    tj_tensor *a = args[0].u.t;
    return done(tj_where(tj_gt_scalar(a, tj_v_int(0)), a, tj_mul_scalar(a, args[1])), outs);
}

/* torch._refs softplus: where(a * beta > threshold, a, log1p(exp(a * beta)) / beta). */
static tj_status softplus(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(softplus, args, m);
    tj_tensor *a = args[0].u.t, *scaled = tj_mul_scalar(a, args[1]);
    tj_tensor *rhs = tj_div_scalar(tj_log1p(tj_exp(scaled)), args[1]);
    return done(tj_where(tj_gt_scalar(scaled, args[2]), a, rhs), outs);
}

/* elu's coefficients as its kernel forms them: scale and input_scale
 * converted to dt, alpha * scale multiplied in dt. */
typedef struct elu_coefs {
    tj_value negcoef, poscoef, negiptcoef;
} elu_coefs;

static elu_coefs elu_coefs_of(const tj_value *alpha, const tj_value *scale, const tj_value *input_scale, tj_dtype dt)
{
    double a = tj_dc_convert(alpha, dt).u.f, s = tj_dc_convert(scale, dt).u.f;
    return (elu_coefs){dt == TJ_FLOAT32 ? tj_v_float((double)((float)a * (float)s)) : tj_v_float(a * s),
                       tj_dc_convert(scale, dt), tj_dc_convert(input_scale, dt)};
}

/* torch._decomp (1.13, with scale and input_scale): where(a > 0, a * scale,
 * (exp(a * input_scale) - 1) * (alpha * scale)). */
static tj_status elu(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(elu, args, m);
    tj_tensor *a = args[0].u.t;
    elu_coefs k = elu_coefs_of(&args[1], &args[2], &args[3], m[0].dtype);
    tj_tensor *neg = tj_mul_scalar(tj_add_scalar(tj_exp(tj_mul_scalar(a, k.negiptcoef)), tj_v_int(-1)), k.negcoef);
    return done(tj_where(tj_gt_scalar(a, tj_v_int(0)), tj_mul_scalar(a, k.poscoef), neg), outs);
}

/* torch._decomp elu_backward, in result_type(grad, self_or_result): where
 * self_or_result > 0 (a nan takes the negative side, as the vectorised
 * kernel) grad * scale, else grad * input_scale * (self_or_result +
 * alpha * scale) with is_result, grad * input_scale * (alpha * scale) *
 * exp(self_or_result * input_scale) without. (1.13's decomposition writes
 * self_or_result * scale on the positive side with is_result; the kernel
 * and this use grad.) */
static tj_status elu_backward(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(elu_backward, args, m);
    tj_dtype dt = m[0].dtype;
    tj_tensor *grad = tj_dc_to(args[0].u.t, dt), *y = tj_dc_to(args[5].u.t, dt);
    elu_coefs k = elu_coefs_of(&args[1], &args[2], &args[3], dt);
    tj_tensor *g_ipt = tj_mul_scalar(grad, k.negiptcoef);
    tj_tensor *neg = args[4].u.b ? tj_mul(g_ipt, tj_add_scalar(y, k.negcoef))
                                 : tj_mul(tj_mul_scalar(g_ipt, k.negcoef), tj_exp(tj_mul_scalar(y, k.negiptcoef)));
    return done(tj_where(tj_gt_scalar(y, tj_v_int(0)), tj_mul_scalar(grad, k.poscoef), neg), outs);
}

/* torch._decomp: where(self > 0, grad, grad * negative_slope), in
 * result_type(grad, self). */
static tj_status leaky_relu_backward(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(leaky_relu_backward, args, m);
    tj_tensor *grad = tj_dc_to(args[0].u.t, m[0].dtype), *self = tj_dc_to(args[1].u.t, m[0].dtype);
    return done(tj_where(tj_gt_scalar(self, tj_v_int(0)), grad, tj_mul_scalar(grad, args[2])), outs);
}

/* torch._decomp: z = exp(self * beta);
 * where(self * beta > threshold, grad, grad * z / (z + 1)). */
static tj_status softplus_backward(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(softplus_backward, args, m);
    tj_tensor *grad = tj_dc_to(args[0].u.t, m[0].dtype), *self = tj_dc_to(args[1].u.t, m[0].dtype);
    tj_tensor *scaled = tj_mul_scalar(self, args[2]), *z = tj_exp(scaled);
    tj_tensor *rhs = tj_div(tj_mul(grad, z), tj_add_scalar(z, tj_v_int(1)));
    return done(tj_where(tj_gt_scalar(scaled, args[3]), grad, rhs), outs);
}

/* torch._refs hardtanh: clamp(a, min_val, max_val), the bounds truncated to
 * integers for an int64 a (no promotion, as ATen). */
static tj_status hardtanh(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(hardtanh, args, m);
    tj_value lo = args[1], hi = args[2];
    if (m[0].dtype == TJ_INT64) {
        lo = tj_dc_convert(&args[1], TJ_INT64);
        hi = tj_dc_convert(&args[2], TJ_INT64);
    }
    return done(tj_clamp(args[0].u.t, lo, hi), outs);
}

/* relu6 (implicit in ATen 1.13) = hardtanh(a, 0, 6) */
static tj_status relu6(const tj_value *args, tj_value *outs)
{
    return done(tj_hardtanh(args[0].u.t, tj_v_int(0), tj_v_int(6)), outs);
}

/* clamp(a + 3, 0, 6): clamp's maximum / minimum keep a nan */
static tj_tensor *relu6_of_plus_3(tj_tensor *a)
{
    return tj_clamp(tj_add_scalar(a, tj_v_int(3)), tj_v_int(0), tj_v_int(6));
}

/* torch._decomp: clamp(a + 3, 0, 6) / 6 */
static tj_status hardsigmoid(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(hardsigmoid, args, m);
    return done(tj_div_scalar(relu6_of_plus_3(args[0].u.t), tj_v_int(6)), outs);
}

/* torch._decomp: a * clamp(a + 3, 0, 6) / 6 */
static tj_status hardswish(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(hardswish, args, m);
    tj_tensor *a = args[0].u.t;
    return done(tj_div_scalar(tj_mul(a, relu6_of_plus_3(a)), tj_v_int(6)), outs);
}

/* torch._decomp: where(self <= min_val | self >= max_val, 0, grad), in
 * result_type(grad, self); a nan self (or a nan bound's comparison) keeps
 * grad, as ATen's scalar loop. */
static tj_status hardtanh_backward(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(hardtanh_backward, args, m);
    tj_tensor *grad = tj_dc_to(args[0].u.t, m[0].dtype), *self = tj_dc_to(args[1].u.t, m[0].dtype);
    tj_tensor *outside = tj_logical_or(tj_le_scalar(self, args[2]), tj_ge_scalar(self, args[3]));
    return done(tj_where_scalar_self(outside, tj_v_int(0), grad), outs);
}

/* torch._decomp: where(-3 < self < 3, grad * (1/6), 0), 1/6 rounded to
 * float32 as ATen's kernel constant (for float64 too). */
static tj_status hardsigmoid_backward(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(hardsigmoid_backward, args, m);
    tj_tensor *grad = tj_dc_to(args[0].u.t, m[0].dtype), *self = tj_dc_to(args[1].u.t, m[0].dtype);
    tj_tensor *inside = tj_logical_and(tj_gt_scalar(self, tj_v_int(-3)), tj_lt_scalar(self, tj_v_int(3)));
    return done(tj_where_scalar_other(inside, tj_mul_scalar(grad, F((double)(1.0f / 6.0f))), tj_v_int(0)), outs);
}

/* torch._decomp: where(self < -3, 0, where(self <= 3, grad * (self / 3 +
 * 0.5), grad)); a nan self keeps grad, as ATen's scalar loop. */
static tj_status hardswish_backward(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(hardswish_backward, args, m);
    tj_tensor *grad = tj_dc_to(args[0].u.t, m[0].dtype), *self = tj_dc_to(args[1].u.t, m[0].dtype);
    tj_tensor *slope = tj_add_scalar(tj_div_scalar(self, tj_v_int(3)), F(0.5));
    tj_tensor *upper = tj_where(tj_le_scalar(self, tj_v_int(3)), tj_mul(grad, slope), grad);
    return done(tj_where_scalar_self(tj_lt_scalar(self, tj_v_int(-3)), tj_v_int(0), upper), outs);
}

/* torch._refs: self * tanh(softplus(self)) */
static tj_status mish(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(mish, args, m);
    tj_tensor *x = args[0].u.t;
    return done(tj_mul(x, tj_tanh(tj_softplus(x, tj_v_int(1), tj_v_int(20)))), outs);
}

/* log_sigmoid (implicit in ATen 1.13): log_sigmoid_forward's output */
static tj_status log_sigmoid(const tj_value *args, tj_value *outs)
{
    tj_tensor *out;
    tj_status st = tj_log_sigmoid_forward(args[0].u.t, &out, NULL);
    return st != TJ_OK ? st : done(out, outs);
}

/* torch._decomp: z = exp(-|x|), (minimum(0, x) - log1p(z), z) */
static tj_status log_sigmoid_forward(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(log_sigmoid_forward, args, m);
    tj_tensor *x = args[0].u.t;
    tj_tensor *z = tj_exp(tj_neg(tj_abs(x)));
    tj_tensor *out = tj_sub(tj_minimum(tj_dc_number(0, m[0].dtype), x), tj_log1p(z));
    if (!out) return tj_last_status();
    outs[1] = tj_v_tensor(z);
    return done(out, outs);
}

/* ATen's CPU formula over the buffer (torch._decomp recomputes
 * exp(-|x|), which is the buffer): (max_deriv - sign * (buffer / (1 +
 * buffer))) * grad, max_deriv = where(x < 0, 1, 0), sign = where(x < 0, 1, -1) */
static tj_status log_sigmoid_backward(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(log_sigmoid_backward, args, m);
    tj_dtype dt = m[0].dtype;
    tj_tensor *g = tj_dc_to(args[0].u.t, dt), *x = tj_dc_to(args[1].u.t, dt), *b = tj_dc_to(args[2].u.t, dt);
    tj_tensor *negative = tj_lt_scalar(x, tj_v_int(0));
    tj_tensor *max_deriv = tj_where_scalar(negative, tj_v_int(1), tj_v_int(0));
    tj_tensor *sign = tj_where_scalar(negative, tj_v_int(1), tj_v_int(-1));
    tj_tensor *frac = tj_div(b, tj_add_scalar(b, tj_v_int(1)));
    return done(tj_mul(tj_sub(max_deriv, tj_mul(sign, frac)), g), outs);
}

/* The halves of self along dim (the shape function checked it is even) */
static void glu_halves(tj_tensor *self, int64_t dim, tj_tensor **a, tj_tensor **b)
{
    int d;
    tj_wrap_dim("aten::glu", dim, tj_tensor_ndim(self), &d);
    int64_t h = tj_tensor_shape(self)[d] / 2;
    *a = tj_slice(self, d, true, 0, true, h, 1);
    *b = tj_slice(self, d, true, h, true, 2 * h, 1);
}

/* torch._refs: a * sigmoid(b) over the halves */
static tj_status glu(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(glu, args, m);
    tj_tensor *a, *b;
    glu_halves(args[0].u.t, args[1].u.i, &a, &b);
    return done(tj_mul(a, tj_sigmoid(b)), outs);
}

/* torch._decomp: cat([sigmoid(b) * grad, (1 - sigmoid(b)) * sigmoid(b) * a * grad], dim) */
static tj_status glu_backward(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(glu_backward, args, m);
    tj_tensor *g = args[0].u.t, *a, *b;
    glu_halves(args[1].u.t, args[2].u.i, &a, &b);
    tj_tensor *s = tj_sigmoid(b);
    tj_tensor *second = tj_mul(tj_mul(tj_mul(tj_rsub_scalar(s, tj_v_int(1), tj_v_int(1)), s), a), g);
    tj_tensor *halves[2] = {tj_mul(s, g), second};
    if (!halves[0] || !halves[1]) return tj_last_status();
    return done(tj_cat(halves, 2, args[2].u.i), outs);
}

/* celu: elu(self, alpha, 1, 1 / alpha) (ATen's); selu (implicit): elu
 * with SELU's constants, as ATen 1.13 records it */
static tj_status celu(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(celu, args, m);
    double alpha = tj_value_as_double(&args[1]);
    return done(tj_elu(args[0].u.t, args[1], tj_v_float(1.0), tj_v_float(1.0 / alpha)), outs);
}

static tj_status selu(const tj_value *args, tj_value *outs)
{
    return done(tj_elu(args[0].u.t, tj_v_float(1.6732632423543772848170429916717),
                       tj_v_float(1.0507009873554804934193349852946), tj_v_int(1)), outs);
}

/* prelu as torch._refs: where(self > 0, self, self * weight), the weight
 * viewed to broadcast along self's dim 1 ([C, 1, ...]), or as one value
 * (0-dim) when it has one element and self fewer than two dims (where
 * torch._refs' broadcast_in_dim fails) or when it is 0-dim */
static tj_status prelu(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(prelu, args, m);
    tj_tensor *x = args[0].u.t, *w = args[1].u.t;
    int nd = tj_tensor_ndim(x);
    int64_t shape[TJ_MAX_DIMS] = {tj_tensor_numel(w)};
    for (int k = 1; k < nd - 1; k++) shape[k] = 1;
    tj_tensor *wb = tj_view(w, shape, tj_tensor_ndim(w) == 0 || nd < 2 ? 0 : nd - 1);
    return done(tj_where(tj_gt_scalar(x, tj_v_int(0)), x, tj_mul(x, wb)), outs);
}

/* prelu_backward as torch._decomp: the weight unsqueezed at the end to
 * broadcast along dim 1 of self (torch._decomp counts grad_output's dims,
 * the same but for the kernel's grad_output broadcasting to self's shape),
 * self's gradient where(self > 0,
 * grad, weight * grad), weight's where(self > 0, 0, self * grad) summed to
 * that shape (sum_to_size) and viewed as the weight's */
static tj_status prelu_backward(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(prelu_backward, args, m);
    tj_tensor *g = args[0].u.t, *x = args[1].u.t, *w = args[2].u.t, *cur = w;
    int xd = tj_tensor_ndim(x);
    for (int k = 2; k < xd; k++) cur = tj_unsqueeze(cur, -1);
    tj_tensor *pos = tj_gt_scalar(x, tj_v_int(0));
    tj_tensor *gx = tj_where(pos, g, tj_mul(cur, g));
    tj_tensor *terms = tj_where_scalar_self(pos, tj_v_float(0.0), tj_mul(x, g));
    if (!gx || !terms || !cur) return tj_last_status();
    /* sum_to_size(terms, cur's shape): leading dims away, then the dims cur has as 1 */
    int td = tj_tensor_ndim(terms), cd = tj_tensor_ndim(cur), lead = td - cd, nred = 0;
    int64_t dims[TJ_MAX_DIMS];
    for (int d = 0; d < lead; d++) dims[nred++] = d;
    if (nred) terms = tj_sum_dim(terms, dims, nred, false, TJ_DTYPE_NONE);
    nred = 0;
    for (int d = 0; d < cd; d++)
        if (tj_tensor_shape(cur)[d] == 1 && tj_tensor_shape(x)[lead + d] != 1) dims[nred++] = d;
    if (nred) terms = tj_sum_dim(terms, dims, nred, true, TJ_DTYPE_NONE);
    tj_tensor *gw = tj_view(terms, m[1].shape, m[1].ndim);
    if (!gw) return tj_last_status();
    outs[1] = tj_v_tensor(gw);
    return done(gx, outs);
}

void tj_register_elementwise_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(prelu), prelu, "prelu");
    tj_op_set_decomposition(TJ_OPS(prelu_backward), prelu_backward, "prelu_backward");
    tj_op_set_decomposition(TJ_OPS(celu), celu, "celu");
    tj_op_set_decomposition(TJ_OPS(selu), selu, "selu");
    tj_op_set_decomposition(TJ_OPS(relu), relu, "relu");
    tj_op_set_decomposition(TJ_OPS(gelu), gelu, "gelu");
    tj_op_set_decomposition(TJ_OPS(silu), silu, "silu");
    tj_op_set_decomposition(TJ_OPS(logaddexp), logaddexp, "logaddexp");
    tj_op_set_decomposition(TJ_OPS(threshold_backward), threshold_backward, "threshold_backward");
    tj_op_set_decomposition(TJ_OPS(gelu_backward), gelu_backward, "gelu_backward");
    tj_op_set_decomposition(TJ_OPS(sigmoid_backward), sigmoid_backward, "sigmoid_backward");
    tj_op_set_decomposition(TJ_OPS(tanh_backward), tanh_backward, "tanh_backward");
    tj_op_set_decomposition(TJ_OPS(leaky_relu), leaky_relu, "leaky_relu");
    tj_op_set_decomposition(TJ_OPS(softplus), softplus, "softplus");
    tj_op_set_decomposition(TJ_OPS(elu), elu, "elu");
    tj_op_set_decomposition(TJ_OPS(leaky_relu_backward), leaky_relu_backward, "leaky_relu_backward");
    tj_op_set_decomposition(TJ_OPS(softplus_backward), softplus_backward, "softplus_backward");
    tj_op_set_decomposition(TJ_OPS(elu_backward), elu_backward, "elu_backward");
    tj_op_set_decomposition(TJ_OPS(hardtanh), hardtanh, "hardtanh");
    tj_op_set_decomposition(TJ_OPS(relu6), relu6, "relu6");
    tj_op_set_decomposition(TJ_OPS(hardsigmoid), hardsigmoid, "hardsigmoid");
    tj_op_set_decomposition(TJ_OPS(hardswish), hardswish, "hardswish");
    tj_op_set_decomposition(TJ_OPS(hardtanh_backward), hardtanh_backward, "hardtanh_backward");
    tj_op_set_decomposition(TJ_OPS(hardsigmoid_backward), hardsigmoid_backward, "hardsigmoid_backward");
    tj_op_set_decomposition(TJ_OPS(hardswish_backward), hardswish_backward, "hardswish_backward");
    tj_op_set_decomposition(TJ_OPS(mish), mish, "mish");
    tj_op_set_decomposition(TJ_OPS(log_sigmoid), log_sigmoid, "log_sigmoid");
    tj_op_set_decomposition(TJ_OPS(log_sigmoid_forward), log_sigmoid_forward, "log_sigmoid_forward");
    tj_op_set_decomposition(TJ_OPS(log_sigmoid_backward), log_sigmoid_backward, "log_sigmoid_backward");
    tj_op_set_decomposition(TJ_OPS(glu), glu, "glu");
    tj_op_set_decomposition(TJ_OPS(glu_backward), glu_backward, "glu_backward");
}
