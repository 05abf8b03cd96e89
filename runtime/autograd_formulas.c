/* Derivative formulas (vector-Jacobian products), one per differentiable
 * operator, after PyTorch 1.13's tools/autograd/derivatives.yaml and
 * FunctionsManual.cpp. They call the public operator API, ATen's backward
 * operators where ATen does (threshold_backward for relu, gelu_backward,
 * convolution_backward, ...), so a backward pass run under make_fx is traced
 * like any other code. Broadcast shapes and dtypes of the gradients they
 * return are reduced by the engine (tj_autograd_sum_to). The slot numbering
 * of `gi` is described in autograd_internal.h. */
#include <pthread.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include "autograd_internal.h"
#include "op_inplace.h"
#include "op_lapack.h"
#include "op_special.h"
#include "op_reduction.h"

#define FORMULA(name) static tj_status name(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi)
/* ARG / OUT / SAVED: saved tensors whose values the formula reads (checked
 * against in-place writes since the call); META: one it reads only the
 * shape or dtype of, which stays valid whatever is written into it. */
#define ARG(i) tj_grad_arg(c, i)
#define OUT(i) tj_grad_result(c, i)
#define SAVED(i) tj_grad_value(c, i)
#define META(i) (c->args[i].u.t)
#define NEED(k) (c->needed[k])
/* Whether the call is `ident` or its in-place form (index_copy_ shares
 * index_copy's formula, and c->op is then the in-place operator). */
#define CALLED(ident) (c->op == TJ_OPS(ident) || tj_op_inplace_functional(c->op) == TJ_OPS(ident))

/* ---- helpers ---- */

static bool is_one(const tj_value *v) { return tj_value_as_double(v) == 1.0; }

/* x * s, skipping the multiplication when s is 1. */
static tj_tensor *scaled(tj_tensor *x, const tj_value *s) { return is_one(s) ? x : tj_mul_scalar(x, *s); }

/* -x * s, as derivatives.yaml's maybe_multiply(-grad, alpha) for sub's and
 * rsub's alpha: neg, then a mul.Scalar by s unless s is 1. */
static tj_tensor *neg_scaled(tj_tensor *x, const tj_value *s) { return scaled(tj_neg(x), s); }

static tj_tensor *zeros_like(const tj_tensor *t) { return tj_zeros(t->shape, t->ndim, t->dtype); }

/* scalar_tensor(0.) of g's dtype: the zero 1.13's clamp formulas make
 * before their conditions. */
static tj_tensor *zero_for(const tj_tensor *g) { return g ? tj_scalar_tensor(tj_v_float(0), g->dtype) : NULL; }

/* g where cond holds, else 0 (ATen's where(cond, grad, zeros({}))). */
static tj_tensor *where_or_zero(tj_tensor *cond, tj_tensor *g)
{
    return g ? tj_where(cond, g, tj_scalar_tensor(tj_v_int(0), g->dtype)) : NULL;
}

/* Which dims of a rank-`ndim` tensor a reduction's `int[1]? dim` names
 * (None or [] meaning all). */
static tj_status reduced_dims(const tj_op *op, const tj_value *dim, int ndim, bool *mask)
{
    bool all = dim->kind != TJ_V_INTS || dim->n == 0;
    for (int d = 0; d < ndim; d++) mask[d] = all;
    for (int i = 0; !all && i < dim->n; i++) {
        int d;
        tj_status st = tj_wrap_dim(op->name, dim->u.ints[i], ndim, &d);
        if (st != TJ_OK) return st;
        if (ndim > 0) mask[d] = true;
    }
    return TJ_OK;
}

/* A reduction's gradient with the reduced dims put back as size 1
 * (unsqueeze_multiple), so that it broadcasts against the input. */
static tj_tensor *restore_dims(tj_tensor *g, int ndim, const bool *mask, bool keepdim)
{
    for (int d = 0; !keepdim && g && d < ndim; d++)
        if (mask[d]) g = tj_unsqueeze(g, d);
    return g;
}

static int64_t reduced_count(const tj_tensor *self, const bool *mask)
{
    int64_t n = 1;
    for (int d = 0; d < self->ndim; d++)
        if (mask[d]) n *= self->shape[d];
    return n;
}

static tj_tensor *expand_as(tj_tensor *g, const tj_tensor *like)
{
    return g ? tj_expand(g, like->shape, like->ndim) : NULL;
}

/* Dispatches a backward operator with boxed arguments. */
static tj_status call(const tj_op *op, const tj_value *args, tj_value *outs)
{
    return tj_dispatch(op, args, op->nargs, outs);
}

/* ---- unary ---- */

/* derivatives.yaml 1.13: grad * self.sgn() */
FORMULA(d_abs) { gi[0] = tj_mul(g[0], tj_sgn(ARG(0))); return TJ_OK; }
FORMULA(d_neg) { gi[0] = tj_neg(g[0]); return TJ_OK; }
FORMULA(d_exp) { gi[0] = tj_mul(g[0], OUT(0)); return TJ_OK; }
FORMULA(d_log) { gi[0] = tj_div(g[0], ARG(0)); return TJ_OK; }
FORMULA(d_sqrt) { gi[0] = tj_div(g[0], tj_mul_scalar(OUT(0), tj_v_int(2))); return TJ_OK; }
FORMULA(d_rsqrt)
{
    gi[0] = tj_mul(tj_mul_scalar(g[0], tj_v_float(-0.5)), tj_pow_scalar(OUT(0), tj_v_int(3)));
    return TJ_OK;
}
FORMULA(d_tanh) { gi[0] = tj_tanh_backward(g[0], OUT(0)); return TJ_OK; }
FORMULA(d_sigmoid) { gi[0] = tj_sigmoid_backward(g[0], OUT(0)); return TJ_OK; }
FORMULA(d_erf)
{
    tj_tensor *x = ARG(0);
    gi[0] = tj_mul(tj_mul_scalar(tj_exp(tj_neg(tj_pow_scalar(x, tj_v_int(2)))), tj_v_float(2.0 / sqrt(M_PI))), g[0]);
    return TJ_OK;
}
FORMULA(d_reciprocal) { gi[0] = tj_mul(tj_neg(g[0]), tj_mul(OUT(0), OUT(0))); return TJ_OK; }
FORMULA(d_sin) { gi[0] = tj_mul(g[0], tj_cos(ARG(0))); return TJ_OK; }
FORMULA(d_cos) { gi[0] = tj_mul(g[0], tj_neg(tj_sin(ARG(0)))); return TJ_OK; }
FORMULA(d_log1p) { gi[0] = tj_div(g[0], tj_add_scalar(ARG(0), tj_v_int(1))); return TJ_OK; }
FORMULA(d_expm1) { gi[0] = tj_mul(g[0], tj_add_scalar(OUT(0), tj_v_int(1))); return TJ_OK; }
FORMULA(d_relu) { gi[0] = tj_threshold_backward(g[0], OUT(0), tj_v_int(0)); return TJ_OK; }
FORMULA(d_gelu) { gi[0] = tj_gelu_backward(g[0], ARG(0), c->args[1].u.s); return TJ_OK; }

/* silu_backward: grad * s * (1 + x * (1 - s)), s = sigmoid(x) */
FORMULA(d_silu)
{
    tj_tensor *x = ARG(0), *s = tj_sigmoid(x);
    tj_tensor *one_minus = tj_add_scalar(tj_neg(s), tj_v_int(1));
    gi[0] = tj_mul(g[0], tj_mul(s, tj_add_scalar(tj_mul(x, one_minus), tj_v_int(1))));
    return TJ_OK;
}

/* piecewise constant: sign, floor, ceil, round, trunc (derivatives.yaml's
 * zeros_like(grad)) */
FORMULA(d_zero) { gi[0] = tj_zeros_like(g[0], TJ_DTYPE_NONE); return TJ_OK; }
/* zeros of each of the first two inputs' shape (normal.Tensor_Tensor's mean and std) */
FORMULA(d_zeros_of_inputs)
{
    (void)g;
    for (int k = 0; k < 2; k++)
        if (NEED(k)) gi[k] = tj_zeros(META(k)->shape, META(k)->ndim, META(k)->dtype);
    return TJ_OK;
}
FORMULA(d_leaky_relu) { gi[0] = tj_leaky_relu_backward(g[0], ARG(0), c->args[1], false); return TJ_OK; }
/* mish (PyTorch 1.13's formula with grad mode on, what make_fx records):
 * grad * (t + x * sigmoid(x) * (1 - t * t)), t = tanh(softplus(x)) */
FORMULA(d_mish)
{
    tj_tensor *x = ARG(0), *t = tj_tanh(tj_softplus(x, tj_v_int(1), tj_v_int(20)));
    tj_tensor *r = tj_mul(tj_mul(x, tj_sigmoid(x)), tj_rsub_scalar(tj_mul(t, t), tj_v_int(1), tj_v_int(1)));
    gi[0] = tj_mul(g[0], tj_add(t, r));
    return TJ_OK;
}
FORMULA(d_log_sigmoid_forward) { gi[0] = tj_log_sigmoid_backward(g[0], ARG(0), OUT(1)); return TJ_OK; }
FORMULA(d_glu) { gi[0] = tj_glu_backward(g[0], ARG(0), c->args[1].u.i); return TJ_OK; }
FORMULA(d_softplus) { gi[0] = tj_softplus_backward(g[0], ARG(0), c->args[1], c->args[2]); return TJ_OK; }
FORMULA(d_hardtanh) { gi[0] = tj_hardtanh_backward(g[0], ARG(0), c->args[1], c->args[2]); return TJ_OK; }
FORMULA(d_hardsigmoid) { gi[0] = tj_hardsigmoid_backward(g[0], ARG(0)); return TJ_OK; }
FORMULA(d_hardswish) { gi[0] = tj_hardswish_backward(g[0], ARG(0)); return TJ_OK; }
FORMULA(d_elu)
{
    gi[0] = tj_elu_backward(g[0], c->args[1], c->args[2], c->args[3], false, ARG(0));
    return TJ_OK;
}
/* The in-place forms differentiate their result, as derivatives.yaml's
 * leaky_relu_ / elu_ (self_is_result: no copy of self is kept; a negative
 * slope or alpha fails in the backward operator, as in PyTorch). */
FORMULA(d_leaky_relu_result) { gi[0] = tj_leaky_relu_backward(g[0], OUT(0), c->args[1], true); return TJ_OK; }
FORMULA(d_elu_result)
{
    gi[0] = tj_elu_backward(g[0], c->args[1], c->args[2], c->args[3], true, OUT(0));
    return TJ_OK;
}

/* ---- backward operators of activations (double backward) ----
 * A traced training step run on inputs that require grad records the
 * backward operators its graph holds; these differentiate them, after
 * derivatives.yaml. Each is linear in grad_output, whose gradient is the
 * same backward operator applied to the incoming gradient; self's is the
 * activation's second derivative times grad * grad_output: zero for the
 * piecewise linear ones (a zero tensor, as ATen's zeros_like(grad)). */

/* threshold_backward(grad_output, self, threshold) (relu's) */
FORMULA(d_threshold_backward)
{
    if (NEED(0)) gi[0] = tj_threshold_backward(g[0], ARG(1), c->args[2]);
    if (NEED(1)) gi[1] = zeros_like(META(1));
    return TJ_OK;
}

/* leaky_relu_backward(grad_output, self, negative_slope, self_is_result):
 * grad_output through leaky_relu_backward(grad, self, slope, false) (self
 * and the result have one sign for the slopes self_is_result allows) */
FORMULA(d_leaky_relu_backward)
{
    if (NEED(0)) gi[0] = tj_leaky_relu_backward(g[0], ARG(1), c->args[2], false);
    if (NEED(1)) gi[1] = zeros_like(META(1));
    return TJ_OK;
}

FORMULA(d_hardtanh_backward)
{
    if (NEED(0)) gi[0] = tj_hardtanh_backward(g[0], ARG(1), c->args[2], c->args[3]);
    if (NEED(1)) gi[1] = zeros_like(META(1));
    return TJ_OK;
}

/* hardsigmoid_backward: PyTorch 1.13 has no formula (later versions have
 * this one) */
FORMULA(d_hardsigmoid_backward)
{
    if (NEED(0)) gi[0] = tj_hardsigmoid_backward(g[0], ARG(1));
    if (NEED(1)) gi[1] = zeros_like(META(1));
    return TJ_OK;
}

/* hardswish_backward: self gets grad * grad_output / 3 where -3 < self < 3 */
FORMULA(d_hardswish_backward)
{
    tj_tensor *self = ARG(1);
    if (NEED(0)) gi[0] = tj_hardswish_backward(g[0], self);
    if (NEED(1)) {
        tj_tensor *inside = tj_logical_and(tj_gt_scalar(self, tj_v_int(-3)), tj_lt_scalar(self, tj_v_int(3)));
        gi[1] = where_or_zero(inside, tj_div_scalar(tj_mul(g[0], ARG(0)), tj_v_float(3.0)));
    }
    return TJ_OK;
}

/* tanh_backward(grad_output, output): output gets grad * (-2 output * grad_output) */
FORMULA(d_tanh_backward)
{
    tj_tensor *y = ARG(1);
    if (NEED(0)) gi[0] = tj_tanh_backward(g[0], y);
    if (NEED(1)) gi[1] = tj_mul(g[0], tj_mul(tj_mul_scalar(y, tj_v_int(-2)), ARG(0)));
    return TJ_OK;
}

/* sigmoid_backward(grad_output, output): output gets grad * grad_output * (1 - 2 output) */
FORMULA(d_sigmoid_backward)
{
    tj_tensor *y = ARG(1);
    if (NEED(0)) gi[0] = tj_sigmoid_backward(g[0], y);
    if (NEED(1))
        gi[1] = tj_mul(tj_mul(g[0], ARG(0)), tj_add_scalar(tj_mul_scalar(y, tj_v_int(-2)), tj_v_int(1)));
    return TJ_OK;
}

/* softplus_backward(grad_output, self, beta, threshold): self as ATen's
 * softplus_double_backward, beta * s (1 - s) * grad * grad_output with s =
 * sigmoid(self * beta), where self * beta < threshold (0 on the linear side
 * and at the threshold itself) */
FORMULA(d_softplus_backward)
{
    tj_tensor *self = ARG(1);
    if (NEED(0)) gi[0] = tj_softplus_backward(g[0], self, c->args[2], c->args[3]);
    if (NEED(1)) {
        tj_tensor *x = tj_mul_scalar(self, c->args[2]);
        tj_tensor *d = tj_mul_scalar(tj_sigmoid_backward(tj_mul(g[0], ARG(0)), tj_sigmoid(x)), c->args[2]);
        gi[1] = where_or_zero(tj_lt_scalar(x, c->args[3]), d);
    }
    return TJ_OK;
}

/* gelu_backward(grad_output, self, approximate): self gets grad *
 * grad_output * GELU''(self): phi(x) (2 - x^2) for "none"; for "tanh", with
 * u = k (x + a x^3), t = tanh(u), u' = k (1 + 3 a x^2), u'' = 6 k a x:
 * (1 - t^2) (u' + x (u'' - 2 t u'^2) / 2) (ATen's gelu_double_backward) */
FORMULA(d_gelu_backward)
{
    tj_tensor *x = ARG(1);
    const char *approximate = c->args[2].u.s;
    if (NEED(0)) gi[0] = tj_gelu_backward(g[0], x, approximate);
    if (!NEED(1)) return TJ_OK;
    tj_tensor *x2 = tj_mul(x, x), *d;
    if (approximate && strcmp(approximate, "tanh") == 0) {
        const double k = M_SQRT2 * M_2_SQRTPI * 0.5, a = 0.044715;
        tj_tensor *t = tj_tanh(tj_mul_scalar(tj_mul(x, tj_add_scalar(tj_mul_scalar(x2, tj_v_float(a)), tj_v_int(1))),
                                             tj_v_float(k)));
        tj_tensor *du = tj_add_scalar(tj_mul_scalar(x2, tj_v_float(3 * a * k)), tj_v_float(k));
        tj_tensor *inner =
            tj_sub(tj_mul_scalar(x, tj_v_float(6 * a * k)), tj_mul_scalar(tj_mul(t, tj_mul(du, du)), tj_v_int(2)));
        tj_tensor *s = tj_add(du, tj_mul_scalar(tj_mul(x, inner), tj_v_float(0.5)));
        d = tj_mul(tj_rsub_scalar(tj_mul(t, t), tj_v_int(1), tj_v_int(1)), s);
    } else {
        tj_tensor *pdf =
            tj_mul_scalar(tj_exp(tj_mul_scalar(x2, tj_v_float(-0.5))), tj_v_float(M_2_SQRTPI * M_SQRT1_2 * 0.5));
        d = tj_mul(pdf, tj_rsub_scalar(x2, tj_v_int(2), tj_v_int(1)));
    }
    gi[1] = tj_mul(tj_mul(g[0], ARG(0)), d);
    return TJ_OK;
}

/* elu_backward(grad_output, alpha, scale, input_scale, is_result,
 * self_or_result) (elu's, celu's, selu's): self_or_result as ATen's
 * elu_double_backward, nonzero where it is < 0 only (0 at 0, where the
 * first derivative takes the negative branch): grad * grad_output *
 * input_scale^2 * alpha * scale * exp(self * input_scale) for the input,
 * grad * grad_output * input_scale for the result (elu's is
 * input_scale * (result + alpha * scale) there) */
FORMULA(d_elu_backward)
{
    tj_tensor *v = ARG(5);
    bool is_result = c->args[4].u.b;
    if (NEED(0)) gi[0] = tj_elu_backward(g[0], c->args[1], c->args[2], c->args[3], is_result, v);
    if (!NEED(1)) return TJ_OK;
    double input_scale = tj_value_as_double(&c->args[3]);
    tj_tensor *d = tj_mul_scalar(tj_mul(g[0], ARG(0)), c->args[3]);
    if (!is_result) {
        double coef = tj_value_as_double(&c->args[1]) * tj_value_as_double(&c->args[2]) * input_scale;
        d = tj_mul(d, tj_mul_scalar(tj_exp(tj_mul_scalar(v, c->args[3])), tj_v_float(coef)));
    }
    gi[1] = where_or_zero(tj_lt_scalar(v, tj_v_int(0)), d);
    return TJ_OK;
}

/* log_sigmoid_backward(grad_output, self, buffer): self gets grad *
 * grad_output * (s - 1) s, s = sigmoid(self), through buffer's dependence
 * on self too (buffer, log_sigmoid_forward's second return, must not
 * require grad, as in PyTorch) */
FORMULA(d_log_sigmoid_backward)
{
    tj_tensor *self = ARG(1);
    if (NEED(0)) gi[0] = tj_log_sigmoid_backward(g[0], self, ARG(2));
    if (NEED(1)) {
        tj_tensor *s = tj_sigmoid(self);
        gi[1] = tj_mul(tj_mul(tj_mul(g[0], ARG(0)), tj_sub_scalar(s, tj_v_int(1))), s);
    }
    return TJ_OK;
}

/* glu_backward(grad_output, self, dim), self = [a, b] along dim, s =
 * sigmoid(b), gradient [go s, go a s (1 - s)]; for grad = [ga, gb]:
 * grad_output gets ga s + gb a s (1 - s), a gets gb go s (1 - s), b gets
 * ga go s (1 - s) + gb go a s (1 - s) (1 - 2 s) (ATen's
 * glu_double_backward and glu_double_backward_grad_output) */
FORMULA(d_glu_backward)
{
    tj_tensor *self = ARG(1);
    int d;
    tj_status st = tj_wrap_dim(c->op->name, c->args[2].u.i, self->ndim, &d);
    if (st != TJ_OK) return st;
    int64_t half = self->shape[d] / 2;
    tj_tensor *a = tj_slice(self, d, true, 0, true, half, 1), *b = tj_slice(self, d, true, half, true, 2 * half, 1);
    tj_tensor *ga = tj_slice(g[0], d, true, 0, true, half, 1), *gb = tj_slice(g[0], d, true, half, true, 2 * half, 1);
    tj_tensor *s = tj_sigmoid(b), *ds = tj_mul(s, tj_rsub_scalar(s, tj_v_int(1), tj_v_int(1)));
    if (NEED(0)) gi[0] = tj_add(tj_mul(ga, s), tj_mul(gb, tj_mul(a, ds)));
    if (NEED(1)) {
        tj_tensor *go_ds = tj_mul(ARG(0), ds);
        tj_tensor *dd = tj_mul(tj_mul(a, go_ds), tj_rsub_scalar(s, tj_v_int(1), tj_v_int(2)));
        tj_tensor *parts[2] = {tj_mul(gb, go_ds), tj_add(tj_mul(ga, go_ds), tj_mul(gb, dd))};
        gi[1] = parts[0] && parts[1] ? tj_cat(parts, 2, d) : NULL;
    }
    return TJ_OK;
}

/* ---- binary ---- */

/* add / sub (Tensor and Scalar overloads): self gets g, other alpha * g. */
FORMULA(d_add)
{
    gi[0] = g[0];
    if (c->op->args[1].type == TJ_A_TENSOR && NEED(1)) gi[1] = scaled(g[0], &c->args[2]);
    return TJ_OK;
}

FORMULA(d_sub)
{
    gi[0] = g[0];
    if (c->op->args[1].type == TJ_A_TENSOR && NEED(1))
        gi[1] = neg_scaled(g[0], &c->args[2]);
    return TJ_OK;
}

/* rsub: self gets -alpha * g, a Tensor other g. */
FORMULA(d_rsub)
{
    if (NEED(0))
        gi[0] = neg_scaled(g[0], &c->args[2]);
    if (c->op->args[1].type == TJ_A_TENSOR && NEED(1)) gi[1] = g[0];
    return TJ_OK;
}

/* other's gradient first: the order torch 1.13's MulBackward0 computes them */
FORMULA(d_mul)
{
    if (NEED(1)) gi[1] = tj_mul(g[0], ARG(0));
    if (NEED(0)) gi[0] = tj_mul(g[0], ARG(1));
    return TJ_OK;
}

FORMULA(d_mul_scalar) { gi[0] = tj_mul_scalar(g[0], c->args[1]); return TJ_OK; }

/* other: -grad * ((self / other) / other), computed before self's as torch
 * 1.13's DivBackward0 does */
static void div_grads(const tj_grad_ctx *c, tj_tensor *g, tj_tensor **gi)
{
    if (NEED(1)) {
        tj_tensor *q = tj_div(tj_div(ARG(0), ARG(1)), ARG(1));
        gi[1] = tj_mul(tj_neg(g), q);
    }
    if (NEED(0)) gi[0] = tj_div(g, ARG(1));
}

FORMULA(d_div) { div_grads(c, g[0], gi); return TJ_OK; }
FORMULA(d_div_scalar) { gi[0] = tj_div_scalar(g[0], c->args[1]); return TJ_OK; }
FORMULA(d_div_scalar_mode)
{
    if (c->args[2].kind == TJ_V_NONE) return d_div_scalar(c, g, gi);
    gi[0] = zeros_like(META(0));
    return TJ_OK;
}

/* A rounding division is piecewise constant: zero gradients. */
FORMULA(d_div_mode)
{
    if (c->args[2].kind == TJ_V_NONE) {
        div_grads(c, g[0], gi);
        return TJ_OK;
    }
    for (int k = 0; k < 2; k++)
        if (NEED(k)) gi[k] = zeros_like(META(k));
    return TJ_OK;
}

/* ATen 1.13's pow_backward: grad * (exponent * self^(exponent - 1)) with the
 * exponent as a double (pow(self, 1.0), mul.Scalar by 2.0 for exponent 2);
 * a zero exponent gives zeros_like(self). */
FORMULA(d_pow_scalar)
{
    double e = tj_value_as_double(&c->args[1]);
    if (e == 0.0) {
        gi[0] = tj_zeros_like(META(0), TJ_DTYPE_NONE);
        return TJ_OK;
    }
    gi[0] = tj_mul(g[0], tj_mul_scalar(tj_pow_scalar(ARG(0), tj_v_float(e - 1.0)), tj_v_float(e)));
    return TJ_OK;
}

/* ATen 1.13's pow_backward_exponent, then pow_backward_self (the order
 * PowBackward1 computes them), each argument list evaluated last to first as
 * ATen's build does: exponent gets grad * where(self == 0 & exponent >= 0,
 * 0, result * log(self)) (log in self's dtype, as 1.13's), self gets
 * where(exponent == 0.0, 0, grad * (exponent * self^(exponent - 1))). */
FORMULA(d_pow)
{
    tj_tensor *self = ARG(0), *e = ARG(1);
    if (NEED(1)) {
        tj_tensor *nonneg = tj_ge_scalar(e, tj_v_int(0));
        tj_tensor *cond = tj_logical_and(tj_eq_scalar(self, tj_v_int(0)), nonneg);
        tj_tensor *r = tj_mul(OUT(0), tj_log(self));
        gi[1] = tj_mul(g[0], tj_where(cond, tj_zeros(NULL, 0, g[0]->dtype), r));
    }
    if (NEED(0)) {
        tj_tensor *d = tj_mul(g[0], tj_mul(e, tj_pow(self, tj_sub_scalar(e, tj_v_int(1)))));
        tj_tensor *zero = tj_zeros(NULL, 0, g[0]->dtype);
        gi[0] = tj_where(tj_eq_scalar(e, tj_v_float(0)), zero, d);
    }
    return TJ_OK;
}

/* derivatives.yaml 1.13, other's gradient first as MaximumBackward0 computes
 * it: maximum's self where(self == other, grad / 2, grad).masked_fill_(self
 * < other, 0), other the same with self > other; minimum's the other way
 * round. Each gradient computes its own where, which tj_pass_cse merges
 * once tj_pass_functionalize has made masked_fill_ out of place. */
static tj_tensor *extremum_grad(const tj_grad_ctx *c, tj_tensor *g, bool greater)
{
    tj_tensor *self = ARG(0), *other = ARG(1);
    tj_tensor *half = tj_div_scalar(g, tj_v_int(2));
    tj_tensor *h = tj_where(tj_eq(self, other), half, g);
    return tj_masked_fill_(h, greater ? tj_gt(self, other) : tj_lt(self, other), tj_v_int(0));
}

static void extremum_grads(const tj_grad_ctx *c, tj_tensor *g, tj_tensor **gi, bool is_max)
{
    if (NEED(1)) gi[1] = extremum_grad(c, g, is_max);
    if (NEED(0)) gi[0] = extremum_grad(c, g, !is_max);
}

FORMULA(d_maximum) { extremum_grads(c, g[0], gi, true); return TJ_OK; }
FORMULA(d_minimum) { extremum_grads(c, g[0], gi, false); return TJ_OK; }

/* where.self, ScalarOther, ScalarSelf: slots number the Tensor arguments,
 * so a Tensor other is slot 1 when self is a Scalar. */
FORMULA(d_where)
{
    tj_tensor *cond = ARG(0);
    bool self_t = c->op->args[1].type == TJ_A_TENSOR, other_t = c->op->args[2].type == TJ_A_TENSOR;
    /* other's first, each with its own zero, as 1.13's WhereBackward0 */
    if (other_t && NEED(self_t ? 2 : 1))
        gi[self_t ? 2 : 1] = tj_where(cond, tj_scalar_tensor(tj_v_int(0), g[0]->dtype), g[0]);
    if (self_t && NEED(1)) gi[1] = tj_where(cond, g[0], tj_scalar_tensor(tj_v_int(0), g[0]->dtype));
    return TJ_OK;
}

/* ATen 1.13's clamp_backward (and clamp_min's / clamp_max's formulas):
 * where(self >= lo, grad, zero), where(self <= hi, ...), or both conditions
 * joined by logical_and_, the zero scalar_tensor(0.) made first; lo / hi
 * NULL when absent. */
static tj_tensor *clamp_grad(const tj_grad_ctx *c, tj_tensor *g, const tj_value *lo, const tj_value *hi)
{
    if (!g) return NULL;
    tj_tensor *self = ARG(0), *zero = zero_for(g);
    tj_tensor *ge = lo ? tj_ge_scalar(self, *lo) : NULL, *le = hi ? tj_le_scalar(self, *hi) : NULL;
    tj_tensor *cond = ge && le ? tj_logical_and_(ge, le) : ge ? ge : le;
    return cond ? tj_where(cond, g, zero) : g;
}

FORMULA(d_clamp)
{
    const tj_value *lo = &c->args[1], *hi = &c->args[2];
    gi[0] = clamp_grad(c, g[0], lo->kind != TJ_V_NONE ? lo : NULL, hi->kind != TJ_V_NONE ? hi : NULL);
    return TJ_OK;
}

/* clamp.Tensor: min's and max's gradients first, as ATen 1.13's
 * clamp_backward_min_max (one zero for both; min where self < min < max,
 * max where self > max or max < min), then self's, as its clamp_backward
 * (its own zero; where min <= self <= max). */
FORMULA(d_clamp_tensor)
{
    tj_tensor *self = ARG(0), *lo = c->args[1].kind == TJ_V_TENSOR ? ARG(1) : NULL,
              *hi = c->args[2].kind == TJ_V_TENSOR ? ARG(2) : NULL;
    if ((lo && NEED(1)) || (hi && NEED(2))) {
        tj_tensor *zero = zero_for(g[0]);
        if (lo && NEED(1)) {
            tj_tensor *cond = tj_lt(self, lo);
            if (hi) cond = tj_logical_and(cond, tj_lt(lo, hi));
            gi[1] = tj_where(cond, g[0], zero);
        }
        if (hi && NEED(2)) {
            tj_tensor *cond = tj_gt(self, hi);
            if (lo) cond = tj_logical_or(cond, tj_lt(hi, lo));
            gi[2] = tj_where(cond, g[0], zero);
        }
    }
    if (NEED(0)) {
        tj_tensor *zero = zero_for(g[0]), *cond = lo ? tj_ge(self, lo) : NULL;
        if (hi) {
            tj_tensor *le = tj_le(self, hi);
            cond = cond ? tj_logical_and(cond, le) : le;
        }
        gi[0] = tj_where(cond, g[0], zero);
    }
    return TJ_OK;
}

/* self: grad where mask is false; a tensor value (masked_fill.Tensor): the
 * sum of grad where mask is true (ATen's masked_fill_backward) */
FORMULA(d_masked_fill)
{
    if (NEED(0)) gi[0] = tj_masked_fill(g[0], ARG(1), tj_v_int(0));
    if (c->args[2].kind == TJ_V_TENSOR && NEED(2)) gi[2] = tj_sum(where_or_zero(ARG(1), g[0]), TJ_DTYPE_NONE);
    return TJ_OK;
}

/* self: grad / (1 + exp(other - self)), other: grad / (1 + exp(self - other)) */
FORMULA(d_logaddexp)
{
    tj_tensor *a = ARG(0), *b = ARG(1);
    /* other's first: the inputs' alphabetical order (see d_mm) */
    if (NEED(1)) gi[1] = tj_div(g[0], tj_add_scalar(tj_exp(tj_sub(a, b)), tj_v_int(1)));
    if (NEED(0)) gi[0] = tj_div(g[0], tj_add_scalar(tj_exp(tj_sub(b, a)), tj_v_int(1)));
    return TJ_OK;
}

/* remainder: self - floor(self / other) * other; fmod: the same with trunc
 * (derivatives.yaml: other gets -grad * self.div(other, rounding_mode)). */
static tj_status modulo_grads(const tj_grad_ctx *c, tj_tensor *g, tj_tensor **gi, const char *rounding_mode)
{
    if (NEED(0)) gi[0] = g;
    if (NEED(1)) gi[1] = tj_mul(tj_neg(g), tj_div_mode(ARG(0), ARG(1), rounding_mode));
    return TJ_OK;
}

FORMULA(d_remainder) { return modulo_grads(c, g[0], gi, "floor"); }
FORMULA(d_fmod) { return modulo_grads(c, g[0], gi, "trunc"); }

/* atan2_backward: grad * other / (self^2 + other^2), grad * -self / (...) */
/* derivatives.yaml 1.13: self xlogy(grad, other).masked_fill((self == 0) &
 * (other <= 0), 0); other grad * self / other */
FORMULA(d_xlogy)
{
    tj_tensor *x = ARG(0), *y = ARG(1);
    if (NEED(0)) {
        tj_tensor *at_zero = tj_logical_and(tj_eq_scalar(x, tj_v_int(0)), tj_le_scalar(y, tj_v_int(0)));
        gi[0] = tj_masked_fill(tj_xlogy(g[0], y), at_zero, tj_v_int(0));
    }
    if (NEED(1)) gi[1] = tj_div(tj_mul(g[0], x), y);
    return TJ_OK;
}

/* derivatives.yaml 1.13: xlogy.Scalar_Self other grad * self / other;
 * xlogy.Scalar_Other self xlogy(grad, other), and where other <= 0 0 at
 * self == 0 */
FORMULA(d_xlogy_scalar_self)
{
    gi[0] = tj_div(tj_mul_scalar(g[0], c->args[0]), ARG(1));
    return TJ_OK;
}

FORMULA(d_xlogy_scalar_other)
{
    tj_value y = c->args[1];
    tj_tensor *d = tj_xlogy_scalar_other(g[0], y);
    gi[0] = tj_value_as_double(&y) > 0 ? d : tj_masked_fill(d, tj_eq_scalar(ARG(0), tj_v_int(0)), tj_v_int(0));
    return TJ_OK;
}

FORMULA(d_atan2)
{
    tj_tensor *a = ARG(0), *b = ARG(1);
    tj_tensor *recip = tj_reciprocal(tj_add(tj_mul(a, a), tj_mul(b, b)));
    if (NEED(0)) gi[0] = tj_mul(tj_mul(g[0], b), recip);
    if (NEED(1)) gi[1] = tj_mul(tj_mul(g[0], tj_neg(a)), recip);
    return TJ_OK;
}

/* rsqrt(1 - x^2), written (-x * x + 1).rsqrt() as derivatives.yaml */
/* (-x * x + 1).rsqrt(), as derivatives.yaml 1.13 writes asin's and acos's */
static tj_tensor *rsqrt_one_minus_square(tj_tensor *x) { return tj_rsqrt(tj_add_scalar(tj_mul(tj_neg(x), x), tj_v_int(1))); }

FORMULA(d_asin) { gi[0] = tj_mul(g[0], rsqrt_one_minus_square(ARG(0))); return TJ_OK; }
FORMULA(d_acos) { gi[0] = tj_mul(g[0], tj_neg(rsqrt_one_minus_square(ARG(0)))); return TJ_OK; }
FORMULA(d_atan) { gi[0] = tj_div(g[0], tj_add_scalar(tj_mul(ARG(0), ARG(0)), tj_v_int(1))); return TJ_OK; }
FORMULA(d_sinh) { gi[0] = tj_mul(g[0], tj_cosh(ARG(0))); return TJ_OK; }
FORMULA(d_cosh) { gi[0] = tj_mul(g[0], tj_sinh(ARG(0))); return TJ_OK; }
FORMULA(d_log2) { gi[0] = tj_div(g[0], tj_mul_scalar(ARG(0), tj_v_float(M_LN2))); return TJ_OK; }
/* derivatives.yaml 1.13's constant for log10, the double just below ln 10
 * (M_LN10 rounds up) */
FORMULA(d_log10) { gi[0] = tj_div(g[0], tj_mul_scalar(ARG(0), tj_v_float(2.3025850929940456))); return TJ_OK; }
/* grad * result * ln 2, multiplied in that order as 1.13's formula */
FORMULA(d_exp2) { gi[0] = tj_mul_scalar(tj_mul(g[0], OUT(0)), tj_v_float(M_LN2)); return TJ_OK; }
FORMULA(d_nan_to_num) { gi[0] = tj_mul(g[0], tj_isfinite(ARG(0))); return TJ_OK; }
FORMULA(d_clamp_min) { gi[0] = clamp_grad(c, g[0], &c->args[1], NULL); return TJ_OK; }
FORMULA(d_clamp_max) { gi[0] = clamp_grad(c, g[0], NULL, &c->args[1]); return TJ_OK; }

/* derivatives.yaml 1.13: clamp_min.Tensor passes grad to min where self <
 * min, then to self where self >= min, each where(cond, grad,
 * scalar_tensor(0.)) with its zero made first; clamp_max.Tensor likewise
 * with > / <=. */
static tj_status clamp_bound_tensor_grad(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi,
                                         tj_tensor *(*bound_wins)(tj_tensor *, tj_tensor *),
                                         tj_tensor *(*self_wins)(tj_tensor *, tj_tensor *))
{
    if (NEED(1)) {
        tj_tensor *zero = zero_for(g[0]);
        gi[1] = tj_where(bound_wins(ARG(0), ARG(1)), g[0], zero);
    }
    if (NEED(0)) {
        tj_tensor *zero = zero_for(g[0]);
        gi[0] = tj_where(self_wins(ARG(0), ARG(1)), g[0], zero);
    }
    return TJ_OK;
}

FORMULA(d_clamp_min_tensor) { return clamp_bound_tensor_grad(c, g, gi, tj_lt, tj_ge); }
FORMULA(d_clamp_max_tensor) { return clamp_bound_tensor_grad(c, g, gi, tj_gt, tj_le); }

/* ---- reductions ---- */

/* sum.dim_IntList and mean.dim: the gradient expanded back (/ N for mean). */
static tj_status sum_mean_grad(const tj_grad_ctx *c, tj_tensor *g, tj_tensor **gi, bool mean)
{
    tj_tensor *self = META(0);
    bool mask[TJ_MAX_DIMS];
    tj_status st = reduced_dims(c->op, &c->args[1], self->ndim, mask);
    if (st != TJ_OK) return st;
    tj_tensor *e = expand_as(restore_dims(g, self->ndim, mask, c->args[2].u.b), self);
    gi[0] = mean ? tj_div_scalar(e, tj_v_int(reduced_count(self, mask))) : e;
    return TJ_OK;
}

FORMULA(d_sum_dim) { return sum_mean_grad(c, g[0], gi, false); }

/* flip(cumsum(flip(t))) along dim (FunctionsManual's reversed_cumsum) */
static tj_tensor *reversed_cumsum(tj_tensor *t, int64_t dim)
{
    return tj_flip(tj_cumsum(tj_flip(t, &dim, 1), dim, TJ_DTYPE_NONE), &dim, 1);
}

/* cumsum (FunctionsManual's cumsum_backward): the reversed cumsum of the
 * gradient, or g itself when there is nothing to sum (one element, or size
 * 1 along dim). The engine converts a dtype argument's result gradient back
 * to self's dtype. */
FORMULA(d_cumsum)
{
    tj_tensor *go = g[0];
    int d;
    tj_status st = tj_wrap_dim(c->op->name, c->args[1].u.i, go->ndim, &d);
    if (st != TJ_OK) return st;
    if (go->numel <= 1 || go->ndim == 0 || go->shape[d] == 1) {
        gi[0] = go;
        return TJ_OK;
    }
    gi[0] = reversed_cumsum(go, d);
    return TJ_OK;
}
FORMULA(d_mean_dim) { return sum_mean_grad(c, g[0], gi, true); }
FORMULA(d_sum) { gi[0] = expand_as(g[0], META(0)); return TJ_OK; }

/* amax / amin: the gradient split evenly among the elements equal to the
 * result, as derivatives.yaml 1.13 records it: scale_grad_by_count(
 * restore_reduced_dims(grad), restore_reduced_dims(result) == self), the
 * result's dims restored (by a reshape, make_fx's view) and compared first. */
FORMULA(d_amax_amin)
{
    tj_tensor *self = ARG(0);
    bool mask[TJ_MAX_DIMS], keepdim = c->args[2].u.b;
    tj_status st = reduced_dims(c->op, &c->args[1], self->ndim, mask);
    if (st != TJ_OK) return st;
    int64_t dims[TJ_MAX_DIMS], kept[TJ_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < self->ndim; d++) {
        if (mask[d]) dims[nd++] = d;
        kept[d] = mask[d] ? 1 : self->shape[d];
    }
    bool restore = nd && !keepdim;
    tj_tensor *hit = tj_eq(restore ? tj_reshape(OUT(0), kept, self->ndim) : OUT(0), self);
    tj_tensor *grad = restore ? tj_reshape(g[0], kept, self->ndim) : g[0];
    tj_tensor *count = nd ? tj_sum_dim(hit, dims, nd, true, -1) : tj_to_copy(hit, TJ_INT64);
    gi[0] = tj_mul(tj_div(grad, count), hit);
    return TJ_OK;
}

/* max.dim and min.dim: the gradient goes to the selected index (a one-hot
 * mask built from arange instead of ATen's scatter). */
FORMULA(d_max_dim)
{
    tj_tensor *self = META(0), *idx = OUT(1);
    if (self->ndim == 0) {
        gi[0] = g[0];
        return TJ_OK;
    }
    int d;
    tj_status st = tj_wrap_dim(c->op->name, c->args[1].u.i, self->ndim, &d);
    if (st != TJ_OK) return st;
    bool keepdim = c->args[2].u.b;
    tj_tensor *gk = keepdim ? g[0] : tj_unsqueeze(g[0], d), *ik = keepdim ? idx : tj_unsqueeze(idx, d);
    int64_t shape[TJ_MAX_DIMS];
    for (int k = 0; k < self->ndim; k++) shape[k] = k == d ? self->shape[d] : 1;
    tj_tensor *pos = tj_arange(tj_v_int(0), tj_v_int(self->shape[d]), tj_v_int(1), TJ_INT64);
    pos = tj_view(pos, shape, self->ndim);
    gi[0] = where_or_zero(tj_eq(pos, ik), tj_expand(gk, self->shape, self->ndim));
    return TJ_OK;
}

/* sort, sort.stable, topk: the gradient goes back to the selected positions
 * (ATen's value_selecting_reduction_backward scatters into zeros; the
 * positions of one row are distinct, so scatter_add adds each once). The
 * dim is argument `dim_arg`. */
static tj_status sorted_grad(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi, int dim_arg)
{
    tj_tensor *self = META(0);
    if (self->ndim == 0 || !g[0]) {
        gi[0] = g[0];
        return TJ_OK;
    }
    gi[0] = tj_scatter_add(zeros_like(self), c->args[dim_arg].u.i, OUT(1), g[0]);
    return TJ_OK;
}
FORMULA(d_sort) { return sorted_grad(c, g, gi, 1); }
FORMULA(d_sort_stable) { return sorted_grad(c, g, gi, 2); }
FORMULA(d_topk) { return sorted_grad(c, g, gi, 2); }

/* mean (.default): the gradient expanded and divided by N */
FORMULA(d_mean)
{
    tj_tensor *self = META(0);
    gi[0] = tj_div_scalar(expand_as(g[0], self), tj_v_int(self->numel));
    return TJ_OK;
}

/* max / min (.default): ATen 1.13's evenly_distribute_backward as it runs
 * under make_fx (its branch for tensor subclasses): mask * (grad /
 * mask.sum()), mask = (self == result).logical_or_(isnan(self) &
 * isnan(result)), the gradient split evenly among the elements equal to the
 * result, or among the nans when the result is nan. */
FORMULA(d_max_min_all)
{
    tj_tensor *self = ARG(0), *r = OUT(0);
    tj_tensor *self_nan = tj_isnan(self);
    tj_tensor *both_nan = tj_logical_and(self_nan, tj_isnan(r));
    tj_tensor *hit = tj_logical_or_(tj_eq(self, r), both_nan);
    gi[0] = tj_mul(hit, tj_div(g[0], tj_sum(hit, -1)));
    return TJ_OK;
}

/* ---- prod and prod.dim_int: FunctionsManual's prod_backward ---- */

/* x in the gradient's dtype (prod's dtype argument may widen the result) */
static tj_tensor *in_dtype_of(tj_tensor *x, const tj_tensor *g)
{
    return x && g && x->dtype != g->dtype ? tj_to_copy(x, g->dtype) : x;
}

/* Whether the formula may look at x's values: not on fake tensors nor while
 * a mode (a trace) is active, where PyTorch's formula (isTensorSubclassLike)
 * takes the path that is exact for every input. */
static bool reads_values(const tj_tensor *x) { return tj_mode_depth() == 0 && !tj_tensor_is_fake(x); }

/* The number of zeros in x, into *n. */
static tj_status zero_count(tj_tensor *x, int64_t *n)
{
    tj_tensor *c = tj_sum(tj_eq_scalar(x, tj_v_int(0)), TJ_DTYPE_NONE);
    if (!c) return tj_last_status();
    *n = (int64_t)tj_tensor_item_at(c, 0);
    return TJ_OK;
}

/* ATen's prod_safe_zeros_backward: g (x's shape with size 1 along dim, or
 * broadcasting to it) times, for each element, the product of those before
 * it along dim (the cumprod of [1, x[:-1]]) and of those after it (the
 * reversed cumprod of [1, reversed x[1:]]): exact with zeros, where
 * result / x is not. */
static tj_tensor *prod_safe_zeros(tj_tensor *g, tj_tensor *x, int dim)
{
    if (!g || !x) return NULL;
    int64_t n = x->shape[dim], d = dim, shape[TJ_MAX_DIMS];
    if (n == 0) return zeros_like(x);
    if (n == 1) return g;
    memcpy(shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
    shape[dim] = 1;
    tj_tensor *ones = tj_ones(shape, x->ndim, g->dtype);
    tj_tensor *head[2] = {ones, tj_slice(x, dim, true, 0, true, n - 1, 1)};
    tj_tensor *tail[2] = {ones, tj_flip(tj_slice(x, dim, true, 1, true, n, 1), &d, 1)};
    tj_tensor *before = tj_cumprod(tj_cat(head, 2, dim), dim, TJ_DTYPE_NONE);
    tj_tensor *after = tj_flip(tj_cumprod(tj_cat(tail, 2, dim), dim, TJ_DTYPE_NONE), &d, 1);
    return tj_mul(g, tj_mul(before, after));
}

/* prod: grad * (result / self) when self holds no zero; 0 everywhere when it
 * holds several (ATen's shortcut with grad mode off: backward passes record
 * nothing); else the safe formula over the flattened self. */
FORMULA(d_prod)
{
    tj_tensor *go = g[0], *x = in_dtype_of(ARG(0), go);
    if (!x) return tj_last_status();
    if (x->ndim == 0) {
        gi[0] = go;
        return TJ_OK;
    }
    if (reads_values(x)) {
        int64_t zeros = 0;
        tj_status st = zero_count(x, &zeros);
        if (st != TJ_OK) return st;
        if (zeros != 1) {
            gi[0] = zeros ? zeros_like(x) : tj_mul(go, tj_div(OUT(0), x));
            return TJ_OK;
        }
    }
    int64_t flat = -1;
    tj_tensor *r = prod_safe_zeros(go, tj_reshape(x, &flat, 1), 0);
    gi[0] = r ? tj_view(r, x->shape, x->ndim) : NULL;
    return TJ_OK;
}

/* prod.dim_int: grad * (result / self) when self holds no zero at all, else
 * the safe formula along dim (grad and result with dim put back). */
FORMULA(d_prod_dim)
{
    tj_tensor *go = g[0], *r = OUT(0), *x = in_dtype_of(ARG(0), go);
    if (!x) return tj_last_status();
    if (x->ndim == 0) {
        gi[0] = go;
        return TJ_OK;
    }
    int d;
    tj_status st = tj_wrap_dim(c->op->name, c->args[1].u.i, x->ndim, &d);
    if (st != TJ_OK) return st;
    if (!c->args[2].u.b) {
        go = tj_unsqueeze(go, d);
        r = tj_unsqueeze(r, d);
    }
    if (reads_values(x)) {
        int64_t zeros = 0;
        if ((st = zero_count(x, &zeros)) != TJ_OK) return st;
        if (zeros == 0) {
            gi[0] = tj_mul(go, tj_div(r, x));
            return TJ_OK;
        }
    }
    gi[0] = prod_safe_zeros(go, x, d);
    return TJ_OK;
}

/* ---- cumprod: FunctionsManual's cumprod_backward ---- */

/* x's shape with size 1 along dim, into shape */
static void shape_one_along(const tj_tensor *x, int dim, int64_t *shape)
{
    memcpy(shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
    shape[dim] = 1;
}

/* ATen's O(n) path for a self holding zeros (the result y = cumprod(x), g
 * the gradient; z1, z2 a row's first and second zero). Before z1 the
 * no-zero formula holds on that stretch: reversed_cumsum(y * g) / x. At
 * z1, dy_j/dx_z1 is y[z1 - 1] times the product of x over (z1, j] for j in
 * [z1, z2) and 0 from z2 on, so the gradient is y[z1 - 1] * sum over
 * [z1, z2) of g times the running product of x over (z1, j]. After z1 every
 * y_j that holds an element holds the zero z1 too: 0.
 * ATen's masked_scatter_ into zeros is a where here; its first-zero mask
 * (the argmax of [z1, z2), scattered) is is_zero and "one zero so far". */
static tj_tensor *cumprod_grad_with_zeros(tj_tensor *g, tj_tensor *x, tj_tensor *y, int dim)
{
    int64_t n = x->shape[dim], d = dim, shape[TJ_MAX_DIMS];
    shape_one_along(x, dim, shape);
    tj_tensor *is_zero = tj_eq_scalar(x, tj_v_int(0));
    tj_tensor *zeros_so_far = tj_cumsum(is_zero, d, TJ_DTYPE_NONE);
    tj_tensor *before_first = tj_eq_scalar(zeros_so_far, tj_v_int(0));
    tj_tensor *first_to_second = tj_eq_scalar(zeros_so_far, tj_v_int(1));
    tj_tensor *first = tj_logical_and(first_to_second, is_zero);
    tj_tensor *between = tj_logical_and(first_to_second, tj_logical_not(is_zero));

    tj_tensor *w = tj_masked_fill(tj_mul(y, g), tj_logical_not(before_first), tj_v_int(0));
    tj_tensor *head = where_or_zero(before_first, tj_div(reversed_cumsum(w, d), x));

    tj_tensor *run = tj_cumprod(tj_masked_fill(x, tj_logical_not(between), tj_v_int(1)), d, TJ_DTYPE_NONE);
    tj_tensor *g_stretch = tj_masked_fill(g, tj_logical_not(first_to_second), tj_v_int(0));
    tj_tensor *sum = tj_sum_dim(tj_mul(run, g_stretch), &d, 1, true, TJ_DTYPE_NONE);
    tj_tensor *prev[2] = {tj_ones(shape, x->ndim, y->dtype), tj_slice(y, d, true, 0, true, n - 1, 1)};
    return tj_where(first, tj_mul(sum, tj_cat(prev, 2, d)), head);
}

/* The formula PyTorch takes on tensor subclasses (make_fx's proxies) and
 * for double backward (which tjit does not do), exact for every input, in
 * O(n^2) calls, as its make_fx records it: for each k, sum(g[k:] * omitted)
 * along dim, where omitted[j] is the product of x over [0, j] without x[k]
 * (prod of x[:k] times cumprod of x[k+1:]); the columns stacked along dim.
 * (PyTorch also records w = result * grad and self == 0 before taking this
 * path, unused; they are left out.) */
static tj_tensor *cumprod_grad_exact(tj_tensor *g, tj_tensor *x, int dim)
{
    int64_t n = x->shape[dim], d = dim;
    tj_tensor **cols = tj_alloc(sizeof *cols * (size_t)n);
    if (!cols) {
        tj_oom("aten::cumprod backward", sizeof *cols * (size_t)n);
        return NULL;
    }
    int64_t one = 1, shape[TJ_MAX_DIMS], k = 0;
    shape_one_along(x, dim, shape);
    tj_tensor *ones = tj_expand(tj_ones(&one, 1, g->dtype), shape, x->ndim), *r = NULL;
    for (; k < n; k++) {
        tj_tensor *until = k ? tj_prod_dim(tj_slice(x, d, true, 0, true, k, 1), d, true, TJ_DTYPE_NONE) : ones;
        tj_tensor *omitted = until;
        if (k < n - 1) {
            tj_tensor *from = tj_cumprod(tj_slice(x, d, true, k + 1, false, 0, 1), d, TJ_DTYPE_NONE);
            if (!until || !from) break;
            tj_tensor *parts[2] = {until, k ? tj_mul(tj_expand(until, from->shape, from->ndim), from) : from};
            omitted = tj_cat(parts, 2, d);
        }
        if (!(cols[k] = tj_sum_dim(tj_mul(tj_slice(g, d, true, k, false, 0, 1), omitted), &d, 1, false,
                                   TJ_DTYPE_NONE)))
            break;
    }
    if (k == n) r = tj_stack(cols, (int)n, d);
    tj_free(cols, sizeof *cols * (size_t)n);
    return r;
}

/* cumprod: g itself for at most one element or size 1 along dim; on real
 * tensors outside a trace reversed_cumsum(result * g) / self when self
 * holds no zero, else the first-zero formula; traced, the exact formula
 * PyTorch's make_fx records. g is first converted to self's dtype (ATen's
 * grad.to(self.scalar_type()) for a dtype argument). */
FORMULA(d_cumprod)
{
    tj_tensor *x = ARG(0), *y = OUT(0), *go = g[0];
    if (!x || !y) return tj_last_status();
    if (go->dtype != x->dtype && !(go = tj_to_copy(go, x->dtype))) return tj_last_status();
    int d;
    tj_status st = tj_wrap_dim(c->op->name, c->args[1].u.i, x->ndim, &d);
    if (st != TJ_OK) return st;
    if (x->numel <= 1 || x->shape[d] == 1) {
        gi[0] = go;
        return TJ_OK;
    }
    if (reads_values(x)) {
        int64_t zeros = 0;
        if ((st = zero_count(x, &zeros)) != TJ_OK) return st;
        gi[0] = zeros ? cumprod_grad_with_zeros(go, x, y, d) : tj_div(reversed_cumsum(tj_mul(y, go), d), x);
        return TJ_OK;
    }
    gi[0] = cumprod_grad_exact(go, x, d);
    return TJ_OK;
}

/* (2 / (N - correction)) * grad * (self - mean(self)) */
static tj_tensor *var_grad(const tj_grad_ctx *c, tj_tensor *g)
{
    tj_tensor *self = ARG(0);
    bool mask[TJ_MAX_DIMS];
    if (reduced_dims(c->op, &c->args[1], self->ndim, mask) != TJ_OK) return NULL;
    int64_t dims[TJ_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < self->ndim; d++)
        if (mask[d]) dims[nd++] = d;
    int64_t correction = c->args[2].kind == TJ_V_INT ? c->args[2].u.i : 1;
    double dof = (double)(reduced_count(self, mask) - correction);
    tj_tensor *gu = restore_dims(g, self->ndim, mask, c->args[3].u.b);
    tj_tensor *centred = tj_sub(self, tj_mean_dim(self, dims, nd, true, -1));
    return tj_mul(tj_mul_scalar(gu, tj_v_float(2.0 / dof)), centred);
}

FORMULA(d_var) { gi[0] = var_grad(c, g[0]); return TJ_OK; }

/* std: var's formula on grad / (2 result), 0 where the result is 0 (ATen's
 * std_backward, masked in place) */
FORMULA(d_std)
{
    tj_tensor *r = OUT(0);
    tj_tensor *gv = tj_div(g[0], tj_mul_scalar(r, tj_v_int(2)));
    gi[0] = var_grad(c, tj_masked_fill_(gv, tj_eq_scalar(r, tj_v_int(0)), tj_v_int(0)));
    return TJ_OK;
}

/* linalg_vector_norm: ATen 1.13's norm_backward (FunctionsManual.cpp), per
 * order: 0 none (no gradient at all, as ATen's undefined tensor); 1 sgn(x) g; 2 g x / n (0 where n = 0); inf the gradient
 * split among the elements whose |x| is the norm (or nan); p < 1 sgn(x)
 * |x|^(p-1) (0 at x = 0) g n^(1-p); p < 2 sgn(x) |x|^(p-1) g / n^(p-1); else
 * x |x|^(p-2) g / n^(p-1), the last two 0 where n = 0. */
FORMULA(d_linalg_vector_norm)
{
    tj_tensor *self = ARG(0);
    double p = tj_value_as_double(&c->args[1]);
    bool mask[TJ_MAX_DIMS], keepdim = c->args[3].u.b;
    tj_status st = reduced_dims(c->op, &c->args[2], self->ndim, mask);
    if (st != TJ_OK) return st;
    tj_tensor *grad = restore_dims(g[0], self->ndim, mask, keepdim);
    if (p == 0) return TJ_OK; /* ATen returns an undefined gradient: x.grad stays None */
    if (p == 1) {
        gi[0] = tj_mul(tj_sgn(self), grad);
        return TJ_OK;
    }
    tj_tensor *norm = restore_dims(OUT(0), self->ndim, mask, keepdim);
    tj_tensor *norm_zero = tj_eq_scalar(norm, tj_v_int(0));
    if (p == 2) {
        gi[0] = tj_mul(grad, tj_masked_fill(tj_div(self, norm), norm_zero, tj_v_int(0)));
    } else if (isinf(p)) {
        int64_t dims[TJ_MAX_DIMS];
        int nd = 0;
        for (int d = 0; d < self->ndim; d++)
            if (mask[d]) dims[nd++] = d;
        tj_tensor *a = tj_abs(self), *hit = tj_logical_or(tj_eq(a, norm), tj_ne(a, a));
        gi[0] = tj_mul(tj_sgn(self), tj_mul(tj_div(grad, tj_sum_dim(hit, dims, nd, true, -1)), hit));
    } else if (p < 1) {
        tj_tensor *scaled = tj_mul(tj_sgn(self), tj_masked_fill(tj_pow_scalar(tj_abs(self), tj_v_float(p - 1)),
                                                                  tj_eq_scalar(self, tj_v_int(0)), tj_v_int(0)));
        gi[0] = tj_mul(tj_mul(scaled, grad), tj_pow_scalar(norm, tj_v_float(1 - p)));
    } else {
        tj_tensor *scaled = p < 2 ? tj_mul(tj_sgn(self), tj_pow_scalar(tj_abs(self), tj_v_float(p - 1)))
                                  : tj_mul(self, tj_pow_scalar(tj_abs(self), tj_v_float(p - 2)));
        tj_tensor *scale = tj_masked_fill(tj_div(grad, tj_pow_scalar(norm, tj_v_float(p - 1))), norm_zero, tj_v_int(0));
        gi[0] = tj_mul(scaled, scale);
    }
    return TJ_OK;
}

/* derivatives.yaml: norm_backward, linalg_vector_norm's formula over the
 * same arguments (p None is 2) */
FORMULA(d_norm_scalaropt_dim)
{
    tj_value a[5];
    tj_norm_vector_norm_args(c->args, a);
    tj_grad_ctx vc = *c;
    vc.args = a;
    return d_linalg_vector_norm(&vc, g, gi);
}

/* var_mean: the variance part plus the mean part, for whichever got a
 * gradient (gvar: the variance's, gmean: the mean's; NULL when none). */
static tj_status var_mean_grad(const tj_grad_ctx *c, tj_tensor *gvar, tj_tensor *gmean, tj_tensor **gi)
{
    tj_tensor *const g[2] = {gvar, gmean};
    tj_tensor *self = ARG(0), *r = g[0] ? var_grad(c, g[0]) : NULL;
    if (g[1]) {
        bool mask[TJ_MAX_DIMS];
        tj_status st = reduced_dims(c->op, &c->args[1], self->ndim, mask);
        if (st != TJ_OK) return st;
        tj_tensor *m = tj_div_scalar(expand_as(restore_dims(g[1], self->ndim, mask, c->args[3].u.b), self),
                                     tj_v_int(reduced_count(self, mask)));
        r = r ? tj_add(r, m) : m;
    }
    gi[0] = r;
    return TJ_OK;
}
FORMULA(d_var_mean) { return var_mean_grad(c, g[0], g[1], gi); }

/* std_mean (1.13: std_mean_backward): std's gradient as d_std's, grad /
 * (2 std) masked to 0 where std is 0, through var's, plus the mean's */
FORMULA(d_std_mean)
{
    tj_tensor *gv = NULL, *r = OUT(0);
    if (g[0]) gv = tj_masked_fill_(tj_div(g[0], tj_mul_scalar(r, tj_v_int(2))), tj_eq_scalar(r, tj_v_int(0)), tj_v_int(0));
    return var_mean_grad(c, gv, g[1], gi);
}

/* grad * exp(self - result) */
FORMULA(d_logsumexp)
{
    tj_tensor *self = ARG(0);
    bool mask[TJ_MAX_DIMS], keepdim = c->args[2].u.b;
    tj_status st = reduced_dims(c->op, &c->args[1], self->ndim, mask);
    if (st != TJ_OK) return st;
    tj_tensor *grad = restore_dims(g[0], self->ndim, mask, keepdim);
    tj_tensor *r = restore_dims(OUT(0), self->ndim, mask, keepdim);
    gi[0] = tj_mul(grad, tj_exp(tj_sub(self, r)));
    return TJ_OK;
}

/* ---- linear algebra ---- */

/* Whether a matrix is column-major (strides (1, rows)): PyTorch's
 * mm_mat1_backward / mm_mat2_backward then return its gradient column-major
 * too, as the transpose of a product, so that the gradient of a Linear
 * weight (mat2 = weight.t()) comes out contiguous like the weight. */
static bool column_major(const tj_tensor *m) { return m->strides[0] == 1 && m->strides[1] == m->shape[0]; }

/* grad @ mat2^T, or (mat2 @ grad^T)^T when mat1 was column-major (only
 * mat1's layout is read, so the callers pass it unchecked). */
static tj_tensor *mm_mat1_backward(tj_tensor *g, tj_tensor *mat1, tj_tensor *mat2)
{
    return column_major(mat1) ? tj_t(tj_mm(mat2, tj_t(g))) : tj_mm(g, tj_t(mat2));
}

/* mat1^T @ grad, or (grad^T @ mat1)^T when mat2 was column-major (only
 * mat2's layout is read). */
static tj_tensor *mm_mat2_backward(tj_tensor *g, tj_tensor *mat1, tj_tensor *mat2)
{
    return column_major(mat2) ? tj_t(tj_mm(tj_t(g), mat1)) : tj_mm(tj_t(mat1), g);
}

/* The generated backward functions of torch 1.13 compute their inputs'
 * gradients in the alphabetical order of the inputs' names (mm's mat2 before
 * self, addmm's mat1, mat2, self; mul's other before self): make_fx records
 * them so. */
FORMULA(d_mm)
{
    if (NEED(1)) gi[1] = mm_mat2_backward(g[0], ARG(0), META(1));
    if (NEED(0)) gi[0] = mm_mat1_backward(g[0], META(0), ARG(1));
    return TJ_OK;
}

FORMULA(d_bmm)
{
    if (NEED(1)) gi[1] = tj_bmm(tj_transpose(ARG(0), 1, 2), g[0]);
    if (NEED(0)) gi[0] = tj_bmm(g[0], tj_transpose(ARG(1), 1, 2));
    return TJ_OK;
}

/* mat1: alpha * grad @ mat2^T; mat2: alpha * mat1^T @ grad (as above); self:
 * beta * grad */
FORMULA(d_addmm)
{
    const tj_value *beta = &c->args[3], *alpha = &c->args[4];
    if (NEED(1)) gi[1] = scaled(mm_mat1_backward(g[0], META(1), ARG(2)), alpha);
    if (NEED(2)) gi[2] = scaled(mm_mat2_backward(g[0], ARG(1), META(2)), alpha);
    if (NEED(0)) gi[0] = scaled(g[0], beta);
    return TJ_OK;
}

/* batch1: alpha * grad @ batch2^T; batch2: alpha * batch1^T @ grad; self:
 * beta * grad */
FORMULA(d_baddbmm)
{
    const tj_value *beta = &c->args[3], *alpha = &c->args[4];
    if (NEED(1)) gi[1] = scaled(tj_bmm(g[0], tj_transpose(ARG(2), 1, 2)), alpha);
    if (NEED(2)) gi[2] = scaled(tj_bmm(tj_transpose(ARG(1), 1, 2), g[0]), alpha);
    if (NEED(0)) gi[0] = scaled(g[0], beta);
    return TJ_OK;
}

/* ---- views and data movement ---- */

FORMULA(d_view) { gi[0] = tj_reshape(g[0], META(0)->shape, META(0)->ndim); return TJ_OK; }

FORMULA(d_permute)
{
    const tj_value *dims = &c->args[1];
    int64_t inv[TJ_MAX_DIMS];
    for (int i = 0; i < dims->n; i++) {
        int d;
        tj_status st = tj_wrap_dim(c->op->name, dims->u.ints[i], dims->n, &d);
        if (st != TJ_OK) return st;
        inv[d] = i;
    }
    gi[0] = tj_permute(g[0], inv, dims->n);
    return TJ_OK;
}

FORMULA(d_transpose) { gi[0] = tj_transpose(g[0], c->args[1].u.i, c->args[2].u.i); return TJ_OK; }
FORMULA(d_t) { gi[0] = tj_t(g[0]); return TJ_OK; }
FORMULA(d_expand) { gi[0] = tj_autograd_sum_to(g[0], META(0), c->op->name); return TJ_OK; }
FORMULA(d_unsqueeze) { gi[0] = tj_squeeze_dim(g[0], c->args[1].u.i); return TJ_OK; }

/* unsqueeze_to(grad, self.sizes()): one unsqueeze per size-1 dim of self */
FORMULA(d_squeeze)
{
    tj_tensor *self = META(0), *r = g[0];
    for (int d = 0; d < self->ndim && r; d++)
        if (self->shape[d] == 1) r = tj_unsqueeze(r, d);
    gi[0] = r;
    return r ? TJ_OK : tj_last_status();
}

FORMULA(d_squeeze_dim)
{
    tj_tensor *self = META(0);
    if (g[0]->ndim == self->ndim) {
        gi[0] = g[0];
        return TJ_OK;
    }
    int d;
    tj_status st = tj_wrap_dim(c->op->name, c->args[1].u.i, self->ndim, &d);
    if (st == TJ_OK) gi[0] = tj_unsqueeze(g[0], d);
    return st;
}

/* select / slice: select_backward / slice_backward of the gradient
 * (derivatives.yaml; slice's None start and end are 0 and INT64_MAX, as
 * slice_backward_wrapper), and theirs the view of the gradient. */
FORMULA(d_select)
{
    const tj_tensor *self = META(0);
    gi[0] = tj_select_backward(g[0], self->shape, self->ndim, c->args[1].u.i, c->args[2].u.i);
    return TJ_OK;
}

FORMULA(d_slice)
{
    const tj_tensor *self = META(0);
    const tj_value *a = c->args;
    int64_t start = a[2].kind == TJ_V_NONE ? 0 : a[2].u.i, end = a[3].kind == TJ_V_NONE ? INT64_MAX : a[3].u.i;
    gi[0] = tj_slice_backward(g[0], self->shape, self->ndim, a[1].u.i, start, end, a[4].u.i);
    return TJ_OK;
}

FORMULA(d_select_backward)
{
    gi[0] = tj_select(g[0], c->args[2].u.i, c->args[3].u.i);
    return TJ_OK;
}

FORMULA(d_slice_backward)
{
    const tj_value *a = c->args;
    gi[0] = tj_slice(g[0], a[2].u.i, true, a[3].u.i, true, a[4].u.i, a[5].u.i);
    return TJ_OK;
}

/* constant_pad_nd: the padding cropped off (and the crop padded back with
 * zeros), constant_pad_nd of the gradient with the pads negated, as ATen. */
FORMULA(d_constant_pad_nd)
{
    const tj_value *pad = &c->args[1];
    int64_t neg[2 * TJ_MAX_DIMS];
    if (pad->n > 2 * TJ_MAX_DIMS) return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: %d pads", c->op->name, pad->n);
    for (int k = 0; k < pad->n; k++) neg[k] = -pad->u.ints[k];
    gi[0] = tj_constant_pad_nd(g[0], neg, pad->n, tj_v_int(0));
    return TJ_OK;
}

/* cat: each input gets its slice along dim; legacy-skipped 1-D empty inputs
 * get an empty gradient. */
FORMULA(d_cat)
{
    const tj_value *ts = &c->args[0];
    int d;
    tj_status st = tj_wrap_dim(c->op->name, c->args[1].u.i, g[0]->ndim, &d);
    if (st != TJ_OK) return st;
    int64_t offset = 0;
    for (int k = 0; k < ts->n; k++) {
        tj_tensor *t = ts->u.ts[k];
        bool skipped = t->ndim == 1 && t->shape[0] == 0 && g[0]->ndim != 1;
        if (skipped) {
            if (NEED(k)) gi[k] = zeros_like(t);
            continue;
        }
        int64_t size = t->shape[d];
        if (NEED(k)) gi[k] = tj_slice(g[0], d, true, offset, true, offset + size, 1);
        offset += size;
    }
    return TJ_OK;
}

/* stack: tensor k's gradient is the gradient's index k along the new dim
 * (derivatives.yaml's unbind, recorded as select.int as torch's make_fx
 * records it). */
FORMULA(d_stack)
{
    int d;
    tj_status st = tj_wrap_dim(c->op->name, c->args[1].u.i, g[0]->ndim, &d);
    if (st != TJ_OK) return st;
    for (int k = 0; k < c->args[0].n; k++)
        if (NEED(k)) gi[k] = tj_select(g[0], d, k);
    return TJ_OK;
}

/* flip: the gradient flipped back. */
FORMULA(d_flip)
{
    gi[0] = tj_flip(g[0], c->args[1].u.ints, c->args[1].n);
    return TJ_OK;
}

/* roll: the gradient rolled back, as PyTorch's derivative (shifts negated,
 * both lists reversed). INT64_MIN, which has no negation, is first reduced
 * modulo the size it rolls (any shift rolls an empty self to itself). */
FORMULA(d_roll)
{
    const tj_tensor *self = META(0);
    const tj_value *shifts = &c->args[1], *dims = &c->args[2];
    int n = shifts->n;
    int64_t back[TJ_MAX_DIMS], rdims[TJ_MAX_DIMS];
    for (int i = 0; i < n; i++) {
        int64_t s = shifts->u.ints[n - 1 - i];
        if (s == INT64_MIN) {
            int d = 0;
            if (dims->n) tj_wrap_dim("aten::roll", dims->u.ints[n - 1 - i], self->ndim, &d);
            int64_t size = dims->n ? self->shape[d] : self->numel;
            s = size ? s % size : 0;
        }
        back[i] = -s;
        if (dims->n) rdims[i] = dims->u.ints[n - 1 - i];
    }
    gi[0] = tj_roll(g[0], back, n, rdims, dims->n);
    return TJ_OK;
}

/* tril / triu and their in-place forms: the same triangle of the gradient. */
FORMULA(d_tril) { gi[0] = tj_tril(g[0], c->args[1].u.i); return TJ_OK; }
FORMULA(d_triu) { gi[0] = tj_triu(g[0], c->args[1].u.i); return TJ_OK; }

/* repeat, as PyTorch 1.13's repeat_backward: zeros for an empty result (a
 * repeat of 0); else the leading new dims summed away, then each repeated
 * dim d viewed as [repeats[d], size[d]] and summed over the repeats, in one
 * reshape and sum when that fits TJ_MAX_DIMS dims, else dim by dim through
 * the view [before d, repeats[d], size[d], after d]. */
FORMULA(d_repeat)
{
    const tj_tensor *self = META(0);
    const int64_t *reps = c->args[1].u.ints + (c->args[1].n - self->ndim);
    tj_tensor *grad = g[0];
    if (grad->numel == 0) {
        gi[0] = zeros_like(self);
        return TJ_OK;
    }
    static const int64_t first[1] = {0};
    for (int i = self->ndim; i < c->args[1].n && grad; i++) grad = tj_sum_dim(grad, first, 1, false, TJ_DTYPE_NONE);
    int64_t split[2 * TJ_MAX_DIMS], sum_dims[TJ_MAX_DIMS], size[TJ_MAX_DIMS];
    int ns = 0, nd = 0;
    for (int d = 0; d < self->ndim; d++) {
        if (reps[d] != 1) {
            sum_dims[nd++] = ns;
            split[ns++] = reps[d];
        }
        split[ns++] = size[d] = self->shape[d];
    }
    if (nd == 0) {
        gi[0] = grad;
    } else if (ns <= TJ_MAX_DIMS) {
        gi[0] = tj_sum_dim(tj_reshape(grad, split, ns), sum_dims, nd, false, TJ_DTYPE_NONE);
    } else {
        static const int64_t tiles[1] = {1};
        int64_t cur[TJ_MAX_DIMS]; /* grad's shape: dims before d summed already */
        for (int d = 0; d < self->ndim; d++) cur[d] = reps[d] * size[d];
        for (int d = 0; d < self->ndim && grad; d++) {
            if (reps[d] == 1) continue;
            int64_t before = 1, after = 1;
            for (int j = 0; j < d; j++) before *= cur[j];
            for (int j = d + 1; j < self->ndim; j++) after *= cur[j];
            cur[d] = size[d];
            tj_tensor *t = tj_reshape(grad, (int64_t[]){before, reps[d], size[d], after}, 4);
            grad = tj_reshape(tj_sum_dim(t, tiles, 1, false, TJ_DTYPE_NONE), cur, self->ndim);
        }
        gi[0] = grad;
    }
    return TJ_OK;
}

/* clone, _to_copy (the engine converts the dtype back) */
FORMULA(d_identity) { gi[0] = g[0]; return TJ_OK; }

/* ---- indexing ---- */

/* gather: the gradient added back at the gathered positions. */
FORMULA(d_gather)
{
    gi[0] = tj_scatter_add(zeros_like(META(0)), c->args[1].u.i, ARG(2), g[0]);
    return TJ_OK;
}

/* index_select (PyTorch 1.13's index_select_backward, recorded as it
 * records it): zeros of self's shape with the gradient rows index_add-ed
 * at their indices. */
FORMULA(d_index_select)
{
    tj_tensor *self = META(0);
    gi[0] = tj_index_add(tj_zeros(self->shape, self->ndim, g[0]->dtype), c->args[1].u.i, ARG(2), g[0], tj_v_int(1));
    return TJ_OK;
}

/* index_add: self gets grad; source alpha * grad.index_select(dim, index)
 * (the engine sums it to a broadcast source's shape). */
FORMULA(d_index_add)
{
    if (NEED(0)) gi[0] = g[0];
    if (NEED(2)) {
        tj_tensor *r = tj_index_select(g[0], c->args[1].u.i, ARG(2));
        gi[2] = r ? scaled(r, &c->args[4]) : NULL;
    }
    return TJ_OK;
}

/* index.Tensor (ATen's index_backward): zeros of self's shape with the
 * gradient index_put at the indexed positions, repeated ones summed. Slots:
 * 0 self, then one per index entry (int64: never needed). */
FORMULA(d_index)
{
    tj_tensor *self = META(0);
    const tj_value ix = SAVED(1);
    gi[0] = tj_index_put(tj_zeros(self->shape, self->ndim, g[0]->dtype), ix.u.ts, ix.n, g[0], true);
    return TJ_OK;
}

/* index_put (ATen's _index_put_impl_ entry): self gets grad, with the written
 * positions zeroed unless accumulate; values get grad[indices] (the engine
 * sums it to a broadcast values' shape). Slots: 0 self, one per index entry,
 * then values. */
FORMULA(d_index_put)
{
    const tj_value ix = SAVED(1);
    bool accumulate = c->args[3].u.b;
    if (NEED(0))
        gi[0] = accumulate ? g[0] : tj_index_put(g[0], ix.u.ts, ix.n, tj_zeros(NULL, 0, g[0]->dtype), false);
    if (NEED(1 + ix.n)) gi[1 + ix.n] = tj_index(g[0], ix.u.ts, ix.n);
    return TJ_OK;
}

/* masked_select (ATen's masked_select_backward): the gradient written at the
 * mask's true positions of zeros of self and mask broadcast together (the
 * engine sums it to self's shape). Slots: 0 self, 1 mask (bool). */
FORMULA(d_masked_select)
{
    tj_tensor *self = META(0);
    gi[0] = tj_masked_scatter(tj_zeros(self->shape, self->ndim, g[0]->dtype), ARG(1), g[0]);
    return TJ_OK;
}

/* masked_scatter (ATen's masked_scatter_backward): self gets the gradient
 * where mask is false; source the gradient at the true positions in order,
 * zeros for its elements left unused, in source's shape. Slots: 0 self,
 * 1 mask (bool), 2 source. */
FORMULA(d_masked_scatter)
{
    if (NEED(0)) gi[0] = tj_masked_fill(g[0], ARG(1), tj_v_int(0));
    if (NEED(2)) {
        tj_tensor *source = META(2), *taken = tj_masked_select(g[0], ARG(1));
        if (!taken) return tj_last_status();
        int64_t unused = source->numel - taken->numel;
        if (unused > 0) taken = tj_cat((tj_tensor *[]){taken, tj_zeros(&unused, 1, g[0]->dtype)}, 2, 0);
        gi[2] = tj_reshape(taken, source->shape, source->ndim);
    }
    return TJ_OK;
}

/* scatter_add: self gets grad, src the gradient at its target positions
 * (index may cover only a leading block of src: the rest gets zeros). */
/* scatter_add's and scatter's src: the gradient at the positions it was
 * written to (grad.gather), zero-padded where src is larger than index. */
static tj_tensor *zero_padded_to(tj_tensor *r, const tj_tensor *src);
static tj_tensor *scatter_src_grad(tj_tensor *g, int64_t dim, tj_tensor *index, const tj_tensor *src)
{
    return zero_padded_to(tj_gather(g, dim, index), src);
}

/* r (of index's shape) zero-padded at the end of each dim to src's shape */
static tj_tensor *zero_padded_to(tj_tensor *r, const tj_tensor *src)
{
    int64_t shape[TJ_MAX_DIMS];
    for (int d = 0; r && d < src->ndim; d++) {
        if (r->shape[d] == src->shape[d]) continue;
        memcpy(shape, r->shape, sizeof(int64_t) * (size_t)r->ndim);
        shape[d] = src->shape[d];
        r = tj_slice_scatter(tj_zeros(shape, r->ndim, r->dtype), r, d, true, 0, true, r->shape[d], 1);
    }
    return r;
}

FORMULA(d_scatter_add)
{
    if (NEED(0)) gi[0] = g[0];
    if (NEED(2)) gi[2] = scatter_src_grad(g[0], c->args[1].u.i, ARG(2), META(3));
    return TJ_OK;
}

/* scatter (derivatives.yaml): self gets the gradient with the written
 * positions zeroed (grad.scatter(dim, index, 0)), src as scatter_add's */
FORMULA(d_scatter)
{
    if (NEED(0)) gi[0] = tj_scatter_value(g[0], c->args[1].u.i, ARG(2), tj_v_int(0));
    if (CALLED(scatter_src) && NEED(2)) gi[2] = scatter_src_grad(g[0], c->args[1].u.i, ARG(2), META(3));
    return TJ_OK;
}

/* unfold (ATen's unfold_backward): element k of window w came from position
 * w * step + k along `dimension`; the windows' gradients are laid out along
 * that dim (window-major) and added there with scatter_add. */
FORMULA(d_unfold)
{
    tj_tensor *self = META(0), *go = g[0];
    if (self->ndim == 0) {
        gi[0] = tj_view(go, self->shape, 0);
        return TJ_OK;
    }
    int d;
    tj_status st = tj_wrap_dim(c->op->name, c->args[1].u.i, self->ndim, &d);
    if (st != TJ_OK) return st;
    int64_t size = c->args[2].u.i, step = c->args[3].u.i, nw = go->shape[d];
    int nd = go->ndim;
    int64_t perm[TJ_MAX_DIMS + 1], shape[TJ_MAX_DIMS], col[2] = {nw, 1}, row[2] = {1, size};
    for (int i = 0, next = 0; i < nd; i++) perm[i] = i == d + 1 ? nd - 1 : next++; /* window elements after dim d */
    memcpy(shape, self->shape, sizeof(int64_t) * (size_t)self->ndim);
    shape[d] = nw * size;
    tj_tensor *flat = tj_reshape(tj_permute(go, perm, nd), shape, self->ndim);
    tj_tensor *w = tj_view(tj_arange(tj_v_int(0), tj_v_int(nw * step), tj_v_int(step), TJ_INT64), col, 2);
    tj_tensor *k = tj_view(tj_arange(tj_v_int(0), tj_v_int(size), tj_v_int(1), TJ_INT64), row, 2);
    int64_t ishape[TJ_MAX_DIMS];
    for (int i = 0; i < self->ndim; i++) ishape[i] = i == d ? nw * size : 1;
    tj_tensor *index = tj_expand(tj_view(tj_add(w, k), ishape, self->ndim), shape, self->ndim);
    gi[0] = tj_scatter_add(zeros_like(self), d, index, flat);
    return TJ_OK;
}

/* ---- neural networks ---- */

FORMULA(d_softmax)
{
    gi[0] = tj__softmax_backward_data(g[0], OUT(0), c->args[1].u.i, META(0)->dtype);
    return TJ_OK;
}

FORMULA(d_log_softmax)
{
    gi[0] = tj__log_softmax_backward_data(g[0], OUT(0), c->args[1].u.i, META(0)->dtype);
    return TJ_OK;
}

/* _softmax_backward_data(grad_output, output, dim, input_dtype), gradient
 * y (go - sum(go y)): grad_output through it again; output gets
 * go grad - sum(y go) grad - go sum(y grad) (ATen's softmax_double_backward) */
FORMULA(d_softmax_backward_data)
{
    tj_tensor *go = ARG(0), *y = ARG(1);
    const int64_t dim[1] = {c->args[2].u.i};
    if (NEED(0)) gi[0] = tj__softmax_backward_data(g[0], y, dim[0], c->args[3].u.dtype);
    if (NEED(1)) {
        tj_tensor *sum_go = tj_sum_dim(tj_mul(y, go), dim, 1, true, TJ_DTYPE_NONE);
        tj_tensor *sum_g = tj_sum_dim(tj_mul(y, g[0]), dim, 1, true, TJ_DTYPE_NONE);
        gi[1] = tj_sub(tj_sub(tj_mul(go, g[0]), tj_mul(sum_go, g[0])), tj_mul(go, sum_g));
    }
    return TJ_OK;
}

/* _log_softmax_backward_data(grad_output, output, dim, input_dtype),
 * gradient go - exp(y) sum(go): grad_output gets grad - sum(grad exp(y)),
 * output -sum(go) exp(y) grad */
FORMULA(d_log_softmax_backward_data)
{
    tj_tensor *y = ARG(1), *e = tj_exp(y);
    const int64_t dim[1] = {c->args[2].u.i};
    if (NEED(0)) gi[0] = tj_sub(g[0], tj_sum_dim(tj_mul(g[0], e), dim, 1, true, TJ_DTYPE_NONE));
    if (NEED(1)) gi[1] = tj_mul(tj_mul(tj_neg(tj_sum_dim(ARG(0), dim, 1, true, TJ_DTYPE_NONE)), e), g[0]);
    return TJ_OK;
}

/* native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd,
 * weight, bias, mask); the mean and rstd returns carry no gradient. */
FORMULA(d_native_layer_norm)
{
    if (!g[0]) return TJ_OK;
    bool mask[3] = {NEED(0), NEED(1), NEED(2)};
    tj_value args[8] = {tj_v_tensor(g[0]), SAVED(0), c->args[1], tj_v_tensor(OUT(1)),
                        tj_v_tensor(OUT(2)), SAVED(2), SAVED(3), tj_v_bools(mask, 3)};
    tj_value outs[TJ_MAX_RETURNS];
    tj_status st = call(TJ_OPS(native_layer_norm_backward), args, outs);
    for (int k = 0; st == TJ_OK && k < 3; k++) gi[k] = outs[k].kind == TJ_V_TENSOR ? outs[k].u.t : NULL;
    return st;
}

/* native_batch_norm_backward(grad_out, input, weight, running_mean,
 * running_var, save_mean, save_invstd, training, eps, mask). Training reads
 * no running statistics (the forward has just written them: passing them
 * would read a stale version), evaluation no saved ones. */
FORMULA(d_native_batch_norm)
{
    if (!g[0]) return TJ_OK;
    bool train = c->args[5].u.b, mask[3] = {NEED(0), NEED(1), NEED(2)};
    tj_value args[10] = {tj_v_tensor(g[0]), SAVED(0), SAVED(1), train ? tj_v_none() : SAVED(3),
                         train ? tj_v_none() : SAVED(4), train ? tj_v_tensor(OUT(1)) : tj_v_none(),
                         train ? tj_v_tensor(OUT(2)) : tj_v_none(), c->args[5], c->args[7], tj_v_bools(mask, 3)};
    tj_value outs[TJ_MAX_RETURNS];
    tj_status st = call(TJ_OPS(native_batch_norm_backward), args, outs);
    for (int k = 0; st == TJ_OK && k < 3; k++) gi[k] = outs[k].kind == TJ_V_TENSOR ? outs[k].u.t : NULL;
    return st;
}

/* native_group_norm_backward(grad_out, input, mean, rstd, weight, N, C,
 * HxW, group, mask) */
FORMULA(d_native_group_norm)
{
    if (!g[0]) return TJ_OK;
    bool mask[3] = {NEED(0), NEED(1), NEED(2)};
    tj_value args[10] = {tj_v_tensor(g[0]), SAVED(0),    tj_v_tensor(OUT(1)), tj_v_tensor(OUT(2)), SAVED(1),
                         c->args[3],        c->args[4], c->args[5],          c->args[6],          tj_v_bools(mask, 3)};
    tj_value outs[TJ_MAX_RETURNS];
    tj_status st = call(TJ_OPS(native_group_norm_backward), args, outs);
    for (int k = 0; st == TJ_OK && k < 3; k++) gi[k] = outs[k].kind == TJ_V_TENSOR ? outs[k].u.t : NULL;
    return st;
}

/* convolution_backward(grad, input, weight, bias_sizes, stride, padding,
 * dilation, transposed, output_padding, groups, mask) */
FORMULA(d_convolution)
{
    tj_tensor *bias = c->args[2].kind == TJ_V_TENSOR ? META(2) : NULL;
    bool mask[3] = {NEED(0), NEED(1), bias && NEED(2)};
    tj_value args[11] = {tj_v_tensor(g[0]), SAVED(0), SAVED(1),
                         bias ? tj_v_ints(bias->shape, bias->ndim) : tj_v_none(),
                         c->args[3], c->args[4], c->args[5], c->args[6], c->args[7], c->args[8], tj_v_bools(mask, 3)};
    tj_value outs[TJ_MAX_RETURNS];
    tj_status st = call(TJ_OPS(convolution_backward), args, outs);
    for (int k = 0; st == TJ_OK && k < 3; k++) gi[k] = outs[k].kind == TJ_V_TENSOR ? outs[k].u.t : NULL;
    return st;
}

/* max_pool{2,3}d_with_indices_backward(grad, self, kernel_size, stride,
 * padding, dilation, ceil_mode, indices) of the pooling `c`; an empty
 * stride means the kernel size. */
static tj_status max_pool_grad(const tj_op *backward, const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi)
{
    const tj_value *stride = c->args[2].n ? &c->args[2] : &c->args[1];
    tj_value args[8] = {tj_v_tensor(g[0]), SAVED(0), c->args[1], *stride, c->args[3], c->args[4], c->args[5],
                        tj_v_tensor(OUT(1))};
    tj_value out;
    tj_status st = call(backward, args, &out);
    gi[0] = out.u.t;
    return st;
}

FORMULA(d_max_pool2d) { return max_pool_grad(TJ_OPS(max_pool2d_with_indices_backward), c, g, gi); }
FORMULA(d_max_pool3d) { return max_pool_grad(TJ_OPS(max_pool3d_with_indices_backward), c, g, gi); }

/* grid_sampler_2d: grid_sampler_2d_backward(grad, input, grid, modes,
 * mask) for both inputs (derivatives.yaml). */
FORMULA(d_grid_sampler_2d)
{
    bool mask[2] = {NEED(0), NEED(1)};
    tj_value args[7] = {tj_v_tensor(g[0]), SAVED(0), SAVED(1), c->args[2], c->args[3], c->args[4], tj_v_bools(mask, 2)};
    tj_value outs[TJ_MAX_RETURNS];
    tj_status st = call(TJ_OPS(grid_sampler_2d_backward), args, outs);
    for (int k = 0; st == TJ_OK && k < 2; k++) gi[k] = outs[k].kind == TJ_V_TENSOR ? outs[k].u.t : NULL;
    return st;
}

/* avg_pool3d: avg_pool3d_backward(grad, self, kernel_size, stride,
 * padding, ceil_mode, count_include_pad, divisor_override). */
FORMULA(d_avg_pool3d)
{
    tj_value args[8] = {tj_v_tensor(g[0]), tj_v_tensor(META(0)), c->args[1], c->args[2], c->args[3], c->args[4],
                        c->args[5], c->args[6]};
    tj_value out;
    tj_status st = call(TJ_OPS(avg_pool3d_backward), args, &out);
    gi[0] = out.u.t;
    return st;
}

/* avg_pool3d_backward is linear in grad_output: its gradient is avg_pool3d
 * of the incoming gradient (derivatives.yaml); self gets zeros. */
FORMULA(d_avg_pool3d_backward)
{
    if (NEED(0)) {
        tj_value args[7] = {tj_v_tensor(g[0]), c->args[2], c->args[3], c->args[4], c->args[5], c->args[6], c->args[7]};
        tj_value out;
        tj_status st = call(TJ_OPS(avg_pool3d), args, &out);
        if (st != TJ_OK) return st;
        gi[0] = out.u.t;
    }
    if (NEED(1)) gi[1] = zeros_like(META(1));
    return TJ_OK;
}

FORMULA(d_embedding)
{
    gi[0] = tj_embedding_dense_backward(g[0], ARG(1), META(0)->shape[0], c->args[2].u.i, c->args[3].u.b);
    return TJ_OK;
}

/* _embedding_bag (weight slot 0, per_sample_weights slot 3), as 1.13's
 * _embedding_bag_backward: an empty offset2bag (the float32 sum path) is
 * rebuilt from the offsets first, make_offset2bag's cumsum of the bag starts
 * minus one. */
FORMULA(d_embedding_bag)
{
    tj_tensor *indices = ARG(1), *offsets = ARG(2), *o2b = OUT(1);
    int64_t n = indices->numel, mode = c->args[4].u.i, pad = c->args[8].u.i;
    if (!g[0]) return TJ_OK;
    if (n != 0 && o2b->numel == 0) {
        int64_t size[1] = {n + 1};
        tj_tensor *starts = tj_index_add(tj_zeros(size, 1, TJ_INT64), 0, offsets,
                                         tj_ones(offsets->shape, 1, TJ_INT64), tj_v_int(1));
        o2b = tj_slice(tj_sub_scalar(tj_cumsum(starts, 0, TJ_INT64), tj_v_int(1)), 0, true, 0, true, n, 1);
    }
    tj_tensor *psw = c->args[6].kind == TJ_V_TENSOR ? ARG(6) : NULL;
    if (NEED(0))
        gi[0] = tj__embedding_bag_dense_backward(g[0], indices, o2b, OUT(2), OUT(3), META(0)->shape[0],
                                                 c->args[3].u.b, mode, psw, pad);
    if (NEED(3)) gi[3] = tj__embedding_bag_per_sample_weights_backward(g[0], ARG(0), indices, offsets, o2b, mode, pad);
    return TJ_OK;
}

/* grad * mask * scale, scale = 1 / (1 - p) in training (0 for p = 1), else
 * 1. train None trains, as the forward does (PyTorch 1.13's formula takes
 * None as eval, inconsistently with its own forward). */
FORMULA(d_native_dropout)
{
    double p = tj_value_as_double(&c->args[1]);
    bool train = c->args[2].kind == TJ_V_NONE || c->args[2].u.b;
    double scale = !train ? 1.0 : p == 1.0 ? 0.0 : 1.0 / (1.0 - p);
    gi[0] = tj_mul_scalar(tj_mul(g[0], OUT(1)), tj_v_float(scale));
    return TJ_OK;
}

/* binary_cross_entropy: self through binary_cross_entropy_backward; target
 * as ATen's binary_cross_entropy_target_backward, -logit(self) * grad * w
 * (divided by the element count for the mean). */
FORMULA(d_binary_cross_entropy)
{
    tj_tensor *self = ARG(0), *weight = c->args[2].kind == TJ_V_TENSOR ? ARG(2) : NULL;
    int64_t reduction = c->args[3].u.i;
    if (NEED(0)) gi[0] = tj_binary_cross_entropy_backward(g[0], self, ARG(1), weight, reduction);
    if (NEED(1)) {
        tj_tensor *logit = tj_log(tj_div(self, tj_rsub_scalar(self, tj_v_int(1), tj_v_int(1))));
        tj_tensor *r = tj_mul(tj_neg(logit), g[0]);
        if (weight) r = tj_mul(r, weight);
        if (reduction == 1) r = tj_div_scalar(r, tj_v_int(tj_tensor_numel(self)));
        gi[1] = r;
    }
    return TJ_OK;
}

/* binary_cross_entropy_with_logits, as PyTorch 1.13's formulas (what its
 * make_fx records): self gets (sigmoid(x) - t) * grad, or with pos_weight p
 * ((p t + 1 - t) sigmoid(x) - p t) * grad; target -x * grad, or
 * (log_sigmoid(-x) - p log_sigmoid(x)) * grad; each times the weight and
 * divided by x's element count for the mean. */
static tj_tensor *bce_logits_scaled(tj_tensor *r, tj_tensor *g, tj_tensor *weight, int64_t reduction, const tj_tensor *x)
{
    r = tj_mul(r, g);
    if (weight) r = tj_mul_(r, weight); /* in place, as 1.13's mul_ / div_ */
    return reduction == 1 ? tj_div_scalar_(r, tj_v_int(x->numel)) : r;
}

FORMULA(d_binary_cross_entropy_with_logits)
{
    tj_tensor *x = ARG(0), *t = ARG(1), *weight = c->args[2].kind == TJ_V_TENSOR ? ARG(2) : NULL,
              *p = c->args[3].kind == TJ_V_TENSOR ? ARG(3) : NULL;
    int64_t reduction = c->args[4].u.i;
    if (NEED(0)) {
        tj_tensor *r;
        if (p) {
            tj_tensor *pt = tj_mul(p, t);
            r = tj_sub(tj_mul(tj_sub(tj_add_scalar(pt, tj_v_int(1)), t), tj_sigmoid(x)), pt);
        } else {
            r = tj_sub(tj_sigmoid(x), t);
        }
        gi[0] = bce_logits_scaled(r, g[0], weight, reduction, x);
    }
    if (NEED(1)) {
        tj_tensor *r = p ? tj_sub(tj_log_sigmoid(tj_neg(x)), tj_mul(tj_log_sigmoid(x), p)) : tj_neg(x);
        gi[1] = bce_logits_scaled(r, g[0], weight, reduction, x);
    }
    return TJ_OK;
}

/* smooth_l1_loss / huber_loss: self through the backward operator, target
 * through it with the two swapped (derivatives.yaml). Both go in at the
 * loss's broadcast shape, so that the mean's 1 / numel counts the loss's
 * elements: 1.13's formula passes them as they are, which gives a wrong
 * gradient when they broadcast (F.smooth_l1_loss broadcasts them first). */
static tj_tensor *at_shape(tj_tensor *t, int nd, const int64_t *shape)
{
    bool same = t->ndim == nd && memcmp(t->shape, shape, sizeof(int64_t) * (size_t)nd) == 0;
    return same ? t : tj_expand(t, shape, nd);
}

typedef tj_tensor *(*pointwise_loss_backward_fn)(tj_tensor *, tj_tensor *, tj_tensor *, int64_t, double);

/* self and target (arguments 0 and 1) expanded to their broadcast shape. */
static tj_status loss_operands(const tj_grad_ctx *c, tj_tensor **self, tj_tensor **target)
{
    *self = ARG(0);
    *target = ARG(1);
    int nd;
    int64_t shape[TJ_MAX_DIMS];
    tj_status st = tj_broadcast_shapes(c->op->name, (*self)->ndim, (*self)->shape, (*target)->ndim, (*target)->shape,
                                       &nd, shape);
    if (st != TJ_OK) return st;
    *self = at_shape(*self, nd, shape);
    *target = at_shape(*target, nd, shape);
    return TJ_OK;
}

static tj_status pointwise_loss_grads(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi,
                                      pointwise_loss_backward_fn backward)
{
    tj_tensor *self, *target;
    tj_status st = loss_operands(c, &self, &target);
    if (st != TJ_OK) return st;
    int64_t reduction = c->args[2].u.i;
    double param = tj_value_as_double(&c->args[3]);
    if (NEED(0)) gi[0] = backward(g[0], self, target, reduction, param);
    if (NEED(1)) gi[1] = backward(g[0], target, self, reduction, param);
    return TJ_OK;
}

FORMULA(d_smooth_l1_loss) { return pointwise_loss_grads(c, g, gi, tj_smooth_l1_loss_backward); }
FORMULA(d_huber_loss) { return pointwise_loss_grads(c, g, gi, tj_huber_loss_backward); }

/* mse_loss: derivatives.yaml's mse_loss_backward for self, and with self
 * and target swapped for target (operands at the loss's shape, as above). */
FORMULA(d_mse_loss)
{
    tj_tensor *self, *target;
    tj_status st = loss_operands(c, &self, &target);
    if (st != TJ_OK) return st;
    int64_t reduction = c->args[2].u.i;
    if (NEED(0)) gi[0] = tj_mse_loss_backward(g[0], self, target, reduction);
    if (NEED(1)) gi[1] = tj_mse_loss_backward(g[0], target, self, reduction);
    return TJ_OK;
}

/* mse_loss_backward(grad_output, self, target, reduction), as
 * derivatives.yaml: grad_output through mse_loss_backward again; self gets
 * mse_loss_double_backward(grad * grad_output) = 2 * grad * grad_output
 * (divided by self's element count for the mean, the count the call's
 * norm used), target its negation. */
FORMULA(d_mse_loss_backward)
{
    tj_tensor *self = ARG(1);
    int64_t reduction = c->args[3].u.i;
    if (NEED(0)) gi[0] = tj_mse_loss_backward(g[0], self, ARG(2), reduction);
    if (NEED(1) || NEED(2)) {
        tj_tensor *d = tj_mul_scalar(tj_mul(g[0], ARG(0)), tj_v_int(2));
        if (reduction == 1) d = tj_div_scalar(d, tj_v_int(tj_tensor_numel(self)));
        if (NEED(1)) gi[1] = d;
        if (NEED(2)) gi[2] = tj_neg(d);
    }
    return TJ_OK;
}

FORMULA(d_nll_loss)
{
    tj_tensor *weight = c->args[2].kind == TJ_V_TENSOR ? ARG(2) : NULL;
    gi[0] = tj_nll_loss_backward(g[0], ARG(0), ARG(1), weight, c->args[3].u.i, c->args[4].u.i, OUT(1));
    return TJ_OK;
}

/* ---- backward operators of losses (double backward) ----
 * Linear in grad_output (0-dim for the mean and sum: the engine sums the
 * gradient, of self's shape, down to it); self and target get the loss's
 * second derivative times grad * grad_output, divided by self's element
 * count for the mean as the backward operators' own norm. */

/* grad * grad_output masked to |self - target| < threshold, times scale
 * (smooth_l1's 1 / beta, huber's 1), over self's count for the mean: ATen's
 * smooth_l1_loss_double_backward / huber_loss_double_backward */
static tj_tensor *pointwise_loss_double(const tj_grad_ctx *c, tj_tensor *const *g, double threshold, double scale)
{
    tj_tensor *self = ARG(1), *target = ARG(2);
    tj_tensor *d = tj_mul(g[0], ARG(0));
    if (scale != 1.0) d = tj_mul_scalar(d, tj_v_float(scale));
    d = where_or_zero(tj_lt_scalar(tj_abs(tj_sub(self, target)), tj_v_float(threshold)), d);
    return c->args[3].u.i == 1 ? tj_div_scalar(d, tj_v_int(tj_tensor_numel(self))) : d;
}

/* smooth_l1_loss_backward(grad_output, self, target, reduction, beta):
 * self gets grad * grad_output / beta where |self - target| < beta, target
 * its negation; zero for beta 0 (ATen's guard against dividing by it) */
FORMULA(d_smooth_l1_loss_backward)
{
    int64_t reduction = c->args[3].u.i;
    double beta = c->args[4].u.f;
    if (NEED(0)) gi[0] = tj_smooth_l1_loss_backward(g[0], ARG(1), ARG(2), reduction, beta);
    if (NEED(1) || NEED(2)) {
        tj_tensor *d = beta == 0 ? zeros_like(g[0]) : pointwise_loss_double(c, g, beta, 1.0 / beta);
        if (NEED(1)) gi[1] = d;
        if (NEED(2)) gi[2] = d ? tj_neg(d) : NULL;
    }
    return TJ_OK;
}

/* huber_loss_backward(grad_output, self, target, reduction, delta): self
 * gets grad * grad_output where |self - target| < delta, target its negation */
FORMULA(d_huber_loss_backward)
{
    int64_t reduction = c->args[3].u.i;
    double delta = c->args[4].u.f;
    if (NEED(0)) gi[0] = tj_huber_loss_backward(g[0], ARG(1), ARG(2), reduction, delta);
    if (NEED(1) || NEED(2)) {
        tj_tensor *d = pointwise_loss_double(c, g, delta, 1.0);
        if (NEED(1)) gi[1] = d;
        if (NEED(2)) gi[2] = d ? tj_neg(d) : NULL;
    }
    return TJ_OK;
}

/* binary_cross_entropy_backward(grad_output, self, target, weight,
 * reduction), gradient go w (x - t) / (x (1 - x)) (over the count for the
 * mean), as ATen's binary_cross_entropy_double_backward{,_grad_output,
 * _target} with their eps = 1e-12: grad_output gets grad w (x - t) / ((x +
 * eps) (1 - x + eps)); self grad go w (x^2 - 2 x t + t) / ((x + eps) (1 - x
 * + eps))^2; target -grad go w / max((1 - x) x, eps). weight has none. */
FORMULA(d_binary_cross_entropy_backward)
{
    tj_tensor *x = ARG(1), *t = ARG(2), *weight = c->args[3].kind == TJ_V_TENSOR ? ARG(3) : NULL;
    bool mean = c->args[4].u.i == 1;
    const tj_value eps = tj_v_float(1e-12), one = tj_v_int(1);
    tj_tensor *r[3] = {NULL, NULL, NULL};
    if (NEED(0) || NEED(1)) {
        tj_tensor *denom = tj_mul(tj_add_scalar(x, eps), tj_add_scalar(tj_rsub_scalar(x, one, one), eps));
        if (NEED(0)) r[0] = tj_mul(tj_div(tj_sub(x, t), denom), g[0]);
        if (NEED(1)) {
            tj_tensor *num = tj_add(tj_sub(tj_mul(x, x), tj_mul_scalar(tj_mul(x, t), tj_v_int(2))), t);
            r[1] = tj_mul(tj_div(num, tj_mul(denom, denom)), tj_mul(g[0], ARG(0)));
        }
    }
    if (NEED(2)) {
        tj_tensor *denom = tj_clamp_min(tj_mul(tj_rsub_scalar(x, one, one), x), eps);
        r[2] = tj_div(tj_mul(tj_neg(g[0]), ARG(0)), denom);
    }
    for (int k = 0; k < 3; k++) {
        if (!NEED(k) || !r[k]) continue;
        if (weight) r[k] = tj_mul(r[k], weight);
        gi[k] = mean ? tj_div_scalar(r[k], tj_v_int(tj_tensor_numel(x))) : r[k];
    }
    return TJ_OK;
}

/* nll_loss_backward(grad_output, self, target, weight, reduction,
 * ignore_index, total_weight): linear in grad_output, whose gradient is
 * the loss of grad itself, nll_loss(grad, target, weight, reduction,
 * ignore_index) (the same total weight); none of self's values is read:
 * self gets zeros */
FORMULA(d_nll_loss_backward)
{
    tj_tensor *weight = c->args[3].kind == TJ_V_TENSOR ? ARG(3) : NULL;
    if (NEED(0)) gi[0] = tj_nll_loss(g[0], ARG(2), weight, c->args[4].u.i, c->args[5].u.i);
    if (NEED(1)) gi[1] = zeros_like(META(1));
    return TJ_OK;
}

/* ---- backward operators of normalisations (double backward) ----
 * Per row of N elements (the dims a statistic reduces), with xh = (x - mean)
 * rstd, gy = grad_out * weight and P(h) = rstd (h - mean(h) - xh mean(h xh))
 * (the Jacobian of xh, which is symmetric), the backward operators compute
 * grad_input = P(gy), grad_weight = sum(grad_out xh), grad_bias =
 * sum(grad_out), the sums over the rows. Given the gradients gI, gW and gB
 * of these, grad_out gets weight P(gI) + gW xh + gB, weight sum(grad_out
 * P(gI)) and input P(grad_out gW - rstd (gI mean(gy xh) + gy mean(gI xh)))
 * - rstd^2 xh (mean(gI gy) - mean(gI) mean(gy) - mean(gI xh) mean(gy xh)),
 * through mean and rstd's dependence on it (the last term is rstd's); mean
 * and rstd themselves are constants, as in ATen's layer_norm_double_backward
 * and batchnorm_double_backward. */

/* A normalisation laid out so that x, grad_out and the gradient gI have one
 * shape, mean, rstd, weight, gW and gB broadcast against it, `stat` names
 * the dims a statistic reduces and `wsum` those grad_weight sums over. */
typedef struct norm_layout {
    tj_tensor *x, *go, *mean, *rstd, *w; /**< w NULL: ones */
    const int64_t *stat, *wsum;
    int nstat, nwsum;
} norm_layout;

static tj_tensor *row_mean(const norm_layout *l, tj_tensor *t)
{
    return tj_mean_dim(t, l->stat, l->nstat, true, TJ_DTYPE_NONE);
}

/* P(h) above */
static tj_tensor *norm_project(const norm_layout *l, tj_tensor *xh, tj_tensor *h)
{
    tj_tensor *centred = tj_sub(h, row_mean(l, h));
    return tj_mul(tj_sub(centred, tj_mul(xh, row_mean(l, tj_mul(h, xh)))), l->rstd);
}

static tj_tensor *add_or(tj_tensor *a, tj_tensor *b) { return !a ? b : !b ? a : tj_add(a, b); }

/* The gradients above for grad_out (ggo), input (gx) and weight (gw, keeping
 * the summed dims as 1), each computed when its pointer is given; gI, gW,
 * gB may be NULL (zero). */
static void norm_double_backward(const norm_layout *l, tj_tensor *gI, tj_tensor *gW, tj_tensor *gB, tj_tensor **ggo,
                                 tj_tensor **gx, tj_tensor **gw)
{
    tj_tensor *xh = tj_mul(tj_sub(l->x, l->mean), l->rstd);
    tj_tensor *p_gI = gI ? norm_project(l, xh, gI) : NULL;
    if (ggo) {
        tj_tensor *r = p_gI && l->w ? tj_mul(p_gI, l->w) : p_gI;
        r = add_or(add_or(r, gW ? tj_mul(gW, xh) : NULL), gB);
        *ggo = r ? at_shape(r, l->x->ndim, l->x->shape) : NULL;
    }
    if (gw) {
        /* a layer norm over every dim sums over no dim (an empty dim list
         * would sum them all) */
        tj_tensor *t = p_gI ? tj_mul(l->go, p_gI) : NULL;
        *gw = t && l->nwsum ? tj_sum_dim(t, l->wsum, l->nwsum, true, TJ_DTYPE_NONE) : t;
    }
    if (!gx) return;
    tj_tensor *h = gW ? tj_mul(l->go, gW) : NULL, *rstd_term = NULL;
    if (gI) {
        tj_tensor *gy = l->w ? tj_mul(l->go, l->w) : l->go;
        tj_tensor *m_gy_xh = row_mean(l, tj_mul(gy, xh)), *m_gI_xh = row_mean(l, tj_mul(gI, xh));
        tj_tensor *cross = tj_mul(tj_add(tj_mul(gI, m_gy_xh), tj_mul(gy, m_gI_xh)), l->rstd);
        h = h ? tj_sub(h, cross) : tj_neg(cross);
        tj_tensor *s = tj_sub(tj_sub(row_mean(l, tj_mul(gI, gy)), tj_mul(row_mean(l, gI), row_mean(l, gy))),
                              tj_mul(m_gI_xh, m_gy_xh));
        rstd_term = tj_mul(tj_mul(xh, tj_mul(l->rstd, l->rstd)), s);
    }
    tj_tensor *r = h ? norm_project(l, xh, h) : NULL;
    *gx = rstd_term ? (r ? tj_sub(r, rstd_term) : tj_neg(rstd_term)) : r;
}

/* ATen has no derivative for a statistic a normalisation's backward
 * operator takes (derivatives.yaml's not_implemented): a pass that needs
 * one fails. */
static tj_status statistic_not_differentiable(const tj_grad_ctx *c, int slot, const char *name)
{
    if (!NEED(slot)) return TJ_OK;
    return tj_error(TJ_ERR_UNSUPPORTED, "%s: derivative with respect to '%s' not implemented (as in PyTorch): the "
                    "formula differentiates through input, of which the forward computed it", c->op->name, name);
}

/* native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd,
 * weight, bias, output_mask): rows are input's leading dims; bias gets
 * none (it is not read) */
FORMULA(d_native_layer_norm_backward)
{
    tj_status st = statistic_not_differentiable(c, 2, "mean");
    if (st == TJ_OK) st = statistic_not_differentiable(c, 3, "rstd");
    if (st != TJ_OK) return st;
    tj_tensor *x = ARG(1), *w = c->args[5].kind == TJ_V_TENSOR ? ARG(5) : NULL;
    int nn = c->args[2].n, lead = x->ndim - nn;
    int64_t stat[TJ_MAX_DIMS], rows[TJ_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++) {
        rows[d] = d < lead ? x->shape[d] : 1;
        if (d >= lead) stat[d - lead] = d;
    }
    int64_t wsum[TJ_MAX_DIMS];
    for (int d = 0; d < lead; d++) wsum[d] = d;
    norm_layout l = {x, ARG(0), tj_reshape(ARG(3), rows, x->ndim), tj_reshape(ARG(4), rows, x->ndim), w,
                     stat, wsum, nn, lead};
    tj_tensor *gw = NULL;
    norm_double_backward(&l, g[0], g[1], g[2], NEED(0) ? &gi[0] : NULL, NEED(1) ? &gi[1] : NULL,
                         w && NEED(4) ? &gw : NULL);
    if (gw) gi[4] = tj_reshape(gw, w->shape, w->ndim);
    return TJ_OK;
}

static tj_tensor *reshape_or_null(tj_tensor *t, const int64_t *shape, int ndim)
{
    return t ? tj_reshape(t, shape, ndim) : NULL;
}

/* t ([C], or NULL) as [1, C, 1, ...] against a rank-`ndim` input */
static tj_tensor *per_channel(tj_tensor *t, int ndim)
{
    int64_t shape[TJ_MAX_DIMS];
    for (int d = 0; d < ndim; d++) shape[d] = d == 1 ? -1 : 1;
    return reshape_or_null(t, shape, ndim);
}

/* native_batch_norm_backward(grad_out, input, weight, running_mean,
 * running_var, save_mean, save_invstd, train, eps, output_mask), input [N,
 * C, *]. Training normalises each channel over the other dims with the
 * saved statistics (the layout above; batchnorm_double_backward). In
 * evaluation the running statistics, constants, give grad_input = grad_out
 * invstd weight with invstd = 1 / sqrt(running_var + eps), xh = (x -
 * running_mean) invstd: grad_out gets gI invstd weight + gW xh + gB, input
 * grad_out gW invstd, weight sum(gI grad_out invstd). The running statistics
 * must not require grad (as in PyTorch); the saved ones have no derivative. */
FORMULA(d_native_batch_norm_backward)
{
    tj_status st = statistic_not_differentiable(c, 5, "save_mean");
    if (st == TJ_OK) st = statistic_not_differentiable(c, 6, "save_invstd");
    if (st != TJ_OK) return st;
    tj_tensor *go = ARG(0), *x = ARG(1), *weight = c->args[2].kind == TJ_V_TENSOR ? ARG(2) : NULL;
    int nd = x->ndim;
    tj_tensor *w = per_channel(weight, nd), *gW = per_channel(g[1], nd), *gB = per_channel(g[2], nd), *gw = NULL;
    int64_t dims[TJ_MAX_DIMS];
    for (int d = 0, k = 0; d < nd; d++)
        if (d != 1) dims[k++] = d;
    if (c->args[7].u.b) {
        norm_layout l = {x, go, per_channel(ARG(5), nd), per_channel(ARG(6), nd), w, dims, dims, nd - 1, nd - 1};
        norm_double_backward(&l, g[0], gW, gB, NEED(0) ? &gi[0] : NULL, NEED(1) ? &gi[1] : NULL,
                             weight && NEED(2) ? &gw : NULL);
    } else {
        tj_tensor *rstd = tj_rsqrt(tj_add_scalar(per_channel(ARG(4), nd), tj_v_float(c->args[8].u.f)));
        tj_tensor *gI = g[0] ? tj_mul(g[0], rstd) : NULL;
        if (NEED(0)) {
            tj_tensor *xh = gW ? tj_mul(tj_sub(x, per_channel(ARG(3), nd)), rstd) : NULL;
            tj_tensor *r = add_or(add_or(gI && w ? tj_mul(gI, w) : gI, gW ? tj_mul(gW, xh) : NULL), gB);
            gi[0] = r ? at_shape(r, nd, x->shape) : NULL;
        }
        if (NEED(1) && gW) gi[1] = tj_mul(tj_mul(go, gW), rstd);
        if (weight && NEED(2) && gI) gw = tj_sum_dim(tj_mul(gI, go), dims, nd - 1, true, TJ_DTYPE_NONE);
    }
    if (gw) gi[2] = tj_reshape(gw, weight->shape, weight->ndim);
    return TJ_OK;
}

/* native_group_norm_backward(grad_out, input, mean, rstd, weight, N, C,
 * HxW, group, output_mask): input read as [N, group, C / group, HxW], each
 * sample's group a row, the weight per channel (the layout above) */
FORMULA(d_native_group_norm_backward)
{
    tj_status st = statistic_not_differentiable(c, 2, "mean");
    if (st == TJ_OK) st = statistic_not_differentiable(c, 3, "rstd");
    if (st != TJ_OK) return st;
    tj_tensor *go = ARG(0), *x = ARG(1), *weight = c->args[4].kind == TJ_V_TENSOR ? ARG(4) : NULL;
    int64_t n = c->args[5].u.i, ch = c->args[6].u.i, hxw = c->args[7].u.i, groups = c->args[8].u.i;
    const int64_t rows[4] = {n, groups, ch / groups, hxw}, stats[4] = {n, groups, 1, 1};
    const int64_t chans[4] = {1, groups, ch / groups, 1}, stat_dims[2] = {2, 3}, wsum[2] = {0, 3};
    norm_layout l = {tj_reshape(x, rows, 4), tj_reshape(go, rows, 4), tj_reshape(ARG(2), stats, 4),
                     tj_reshape(ARG(3), stats, 4), reshape_or_null(weight, chans, 4), stat_dims, wsum, 2, 2};
    tj_tensor *ggo = NULL, *gx = NULL, *gw = NULL;
    norm_double_backward(&l, reshape_or_null(g[0], rows, 4), reshape_or_null(g[1], chans, 4),
                         reshape_or_null(g[2], chans, 4), NEED(0) ? &ggo : NULL, NEED(1) ? &gx : NULL,
                         weight && NEED(4) ? &gw : NULL);
    gi[0] = reshape_or_null(ggo, go->shape, go->ndim);
    gi[1] = reshape_or_null(gx, x->shape, x->ndim);
    if (gw) gi[4] = tj_reshape(gw, weight->shape, weight->ndim);
    return TJ_OK;
}

/* convolution(input, weight, bias) with convolution_backward's (the
 * recorded call's) stride, padding, dilation, transposed, output_padding
 * and groups */
static tj_tensor *conv_again(const tj_grad_ctx *c, tj_tensor *input, tj_tensor *weight, tj_tensor *bias)
{
    tj_value args[9] = {tj_v_tensor(input), tj_v_tensor(weight), bias ? tj_v_tensor(bias) : tj_v_none(),
                        c->args[4],         c->args[5],         c->args[6],
                        c->args[7],         c->args[8],         c->args[9]};
    tj_value out;
    return call(TJ_OPS(convolution), args, &out) == TJ_OK ? out.u.t : NULL;
}

/* Result k (0 grad_input, 1 grad_weight) of convolution_backward(go, input,
 * weight) with the recorded call's parameters. */
static tj_tensor *conv_backward_again(const tj_grad_ctx *c, tj_tensor *go, tj_tensor *input, tj_tensor *weight, int k)
{
    bool mask[3] = {k == 0, k == 1, false};
    tj_value args[11] = {tj_v_tensor(go), tj_v_tensor(input), tj_v_tensor(weight), tj_v_none(), c->args[4],
                         c->args[5],      c->args[6],         c->args[7],          c->args[8],  c->args[9],
                         tj_v_bools(mask, 3)};
    tj_value outs[TJ_MAX_RETURNS];
    return call(TJ_OPS(convolution_backward), args, outs) == TJ_OK ? outs[k].u.t : NULL;
}

/* convolution_backward(grad_output, input, weight, bias_sizes, stride,
 * padding, dilation, transposed, output_padding, groups, output_mask): its
 * results are the adjoints of the convolution, bilinear in (input, weight),
 * so with the gradients gI, gW, gB of grad_input, grad_weight and grad_bias
 * (ATen's _convolution_double_backward): grad_output gets conv(gI, weight) +
 * conv(input, gW) + gB, input the grad_input of conv(input, gW) for
 * grad_output, weight the grad_weight of conv(gI, weight) for grad_output,
 * each through the operators again (so they differentiate once more). */
FORMULA(d_convolution_backward)
{
    tj_tensor *go = ARG(0), *x = ARG(1), *w = ARG(2), *gI = g[0], *gW = g[1], *gB = g[2];
    if (NEED(0)) {
        tj_tensor *r = gI ? conv_again(c, gI, w, gB) : NULL;
        if (gW) r = add_or(r, conv_again(c, x, gW, r ? NULL : gB));
        if (!r && gB) r = at_shape(per_channel(gB, go->ndim), go->ndim, go->shape);
        gi[0] = r;
    }
    if (NEED(1) && gW) gi[1] = conv_backward_again(c, go, x, gW, 0);
    if (NEED(2) && gI) gi[2] = conv_backward_again(c, go, gI, w, 1);
    return TJ_OK;
}

/* embedding_dense_backward(grad_output, indices, num_weights, padding_idx,
 * scale_grad_by_freq): linear in grad_output, which gets the rows of grad
 * at the indices ([*indices' shape, D]), zero where an index is
 * padding_idx, as ATen's embedding_dense_double_backward; with
 * scale_grad_by_freq each divided by its index's count (which PyTorch 1.13
 * leaves out: its double backward is that of the unscaled operator).
 * indices are integers. */
FORMULA(d_embedding_dense_backward)
{
    tj_tensor *idx = ARG(1), *flat = tj_reshape(idx, (int64_t[]){-1}, 1);
    int64_t n = tj_tensor_numel(idx), padding_idx = c->args[3].u.i, shape[TJ_MAX_DIMS + 1];
    tj_tensor *rows = tj_index_select(g[0], 0, flat);
    if (c->args[4].u.b) {
        /* the count of every index, padding_idx's included (masked below) */
        tj_tensor *ones = tj_ones((int64_t[]){n, 1}, 2, g[0]->dtype);
        tj_tensor *counts = tj_embedding_dense_backward(ones, flat, c->args[2].u.i, -1, false);
        rows = tj_div(rows, tj_index_select(counts, 0, flat));
    }
    if (padding_idx >= 0)
        rows = where_or_zero(tj_unsqueeze(tj_ne_scalar(flat, tj_v_int(padding_idx)), 1), rows);
    memcpy(shape, idx->shape, sizeof(int64_t) * (size_t)idx->ndim);
    shape[idx->ndim] = g[0]->shape[1];
    gi[0] = tj_reshape(rows, shape, idx->ndim + 1);
    return TJ_OK;
}

/* max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride,
 * padding, dilation, ceil_mode, indices), the 3-D one (indices into a
 * volume) and adaptive_max_pool2d_backward(grad_output, self, indices):
 * linear in grad_output, which gets
 * grad (self's shape) at each output position's index into its plane, as
 * ATen's max_pool_double_backward; self gets zeros (piecewise linear), the
 * indices are integers. */
FORMULA(d_max_pool2d_with_indices_backward)
{
    tj_tensor *idx = CALLED(adaptive_max_pool2d_backward) ? ARG(2) : ARG(7);
    int64_t first = CALLED(max_pool3d_with_indices_backward) ? -3 : -2; /* the plane's or volume's dims */
    if (NEED(0)) {
        tj_tensor *planes = tj_flatten(g[0], first, -1), *at = tj_flatten(idx, first, -1);
        gi[0] = tj_reshape(tj_gather(planes, -1, at), idx->shape, idx->ndim);
    }
    if (NEED(1)) gi[1] = zeros_like(META(1));
    return TJ_OK;
}

/* scaled_dot_product_attention: the attention weights P = softmax(q k^T /
 * sqrt(E) + mask) are recomputed (rows that are fully masked are 0, as the
 * forward's output), then dv = P^T g, dS = softmax_backward(g v^T, P),
 * dq = dS k / sqrt(E), dk = dS^T q / sqrt(E), and a float mask gets dS. */
FORMULA(d_attention)
{
    tj_tensor *q = ARG(0), *k = ARG(1), *v = ARG(2), *mask = c->args[3].kind == TJ_V_TENSOR ? ARG(3) : NULL;
    if (tj_value_as_double(&c->args[4]) > 0)
        return tj_error(TJ_ERR_UNSUPPORTED, "%s: the derivative with dropout_p > 0 is not implemented", c->op->name);
    int64_t L = q->shape[q->ndim - 2], S = k->shape[k->ndim - 2], E = q->shape[q->ndim - 1];
    double scale = 1.0 / sqrt((double)E);
    tj_tensor *neg_inf = tj_scalar_tensor(tj_v_float(-INFINITY), q->dtype);
    tj_tensor *scores = tj_mul_scalar(tj_matmul(q, tj_transpose(k, -2, -1)), tj_v_float(scale));
    if (mask) scores = mask->dtype == TJ_BOOL ? tj_where(mask, scores, neg_inf) : tj_add(scores, mask);
    if (c->args[5].u.b) {
        int64_t col[2] = {L, 1}, row[2] = {1, S};
        tj_tensor *i = tj_view(tj_arange(tj_v_int(0), tj_v_int(L), tj_v_int(1), TJ_INT64), col, 2);
        tj_tensor *j = tj_view(tj_arange(tj_v_int(0), tj_v_int(S), tj_v_int(1), TJ_INT64), row, 2);
        scores = tj_where(tj_ge(i, j), scores, neg_inf);
    }
    tj_tensor *p = tj__softmax(scores, -1, false);
    p = tj_masked_fill(p, tj_ne(p, p), tj_v_int(0));
    if (NEED(2)) gi[2] = tj_matmul(tj_transpose(p, -2, -1), g[0]);
    if (!NEED(0) && !NEED(1) && !NEED(3)) return TJ_OK;
    tj_tensor *ds = tj__softmax_backward_data(tj_matmul(g[0], tj_transpose(v, -2, -1)), p, -1, q->dtype);
    if (NEED(0)) gi[0] = tj_mul_scalar(tj_matmul(ds, k), tj_v_float(scale));
    if (NEED(1)) gi[1] = tj_mul_scalar(tj_matmul(tj_transpose(ds, -2, -1), q), tj_v_float(scale));
    if (NEED(3)) gi[3] = ds;
    return TJ_OK;
}

/* avg_pool2d: out = (1 / d) * (window sum of x), so the gradient is the
 * transposed window sum of grad / d, which is convolution_backward with a
 * ones kernel over planes of one channel. d per output comes from pooling
 * ones: avg_pool(ones) = count / d with count = avg_pool(ones, divisor 1).
 * With ceil_mode the last windows reach past the input: the transposed sum
 * runs on a taller / wider input whose extra rows and columns are dropped. */
FORMULA(d_avg_pool2d)
{
    tj_tensor *x = META(0), *go = g[0];
    int nd = x->ndim;
    if (x->numel == 0) {
        gi[0] = zeros_like(x);
        return TJ_OK;
    }
    const tj_value *k = &c->args[1], *st = c->args[2].n ? &c->args[2] : &c->args[1], *pd = &c->args[3];
    int64_t kernel[2] = {k->u.ints[0], k->u.ints[k->n - 1]}, stride[2] = {st->u.ints[0], st->u.ints[st->n - 1]};
    int64_t pad[2] = {pd->u.ints[0], pd->u.ints[pd->n - 1]}, one2[2] = {1, 1}, zero2[2] = {0, 0};
    int64_t H = x->shape[nd - 2], W = x->shape[nd - 1], Ho = go->shape[nd - 2], Wo = go->shape[nd - 1];
    int64_t ones_shape[4] = {1, 1, H, W};
    tj_tensor *ones = tj_ones(ones_shape + 4 - nd, nd, x->dtype);
    tj_value pool[7] = {tj_v_tensor(ones), c->args[1], c->args[2], c->args[3], c->args[4], c->args[5], c->args[6]};
    tj_value avg, count;
    tj_status status = ones ? call(TJ_OPS(avg_pool2d), pool, &avg) : tj_last_status();
    pool[6] = tj_v_int(1);
    if (status == TJ_OK) status = call(TJ_OPS(avg_pool2d), pool, &count);
    if (status != TJ_OK) return status;
    int64_t planes = x->numel / (H * W);
    int64_t gshape[4] = {planes, 1, Ho, Wo}, ishape[4] = {planes, 1, H, W}, wshape[4] = {1, 1, kernel[0], kernel[1]};
    for (int d = 0; d < 2; d++) {
        int64_t need = ((d ? Wo : Ho) - 1) * stride[d] + kernel[d] - 2 * pad[d];
        if (need > ishape[2 + d]) ishape[2 + d] = need;
    }
    tj_tensor *scaled_grad = tj_reshape(tj_mul(go, tj_div(avg.u.t, count.u.t)), gshape, 4);
    bool mask[3] = {true, false, false};
    tj_value args[11] = {tj_v_tensor(scaled_grad), tj_v_tensor(tj_zeros(ishape, 4, x->dtype)),
                         tj_v_tensor(tj_ones(wshape, 4, x->dtype)), tj_v_none(), tj_v_ints(stride, 2),
                         tj_v_ints(pad, 2), tj_v_ints(one2, 2), tj_v_bool(false), tj_v_ints(zero2, 2), tj_v_int(1),
                         tj_v_bools(mask, 3)};
    tj_value outs[TJ_MAX_RETURNS];
    status = call(TJ_OPS(convolution_backward), args, outs);
    if (status != TJ_OK) return status;
    tj_tensor *r = tj_slice(tj_slice(outs[0].u.t, 2, true, 0, true, H, 1), 3, true, 0, true, W, 1);
    gi[0] = tj_reshape(r, x->shape, nd);
    return TJ_OK;
}

/* _adaptive_avg_pool2d: _adaptive_avg_pool2d_backward(grad, self), which
 * reads self's sizes only; an empty self has an empty gradient (the
 * backward, as PyTorch's, refuses a grad_output with an empty dim). */
FORMULA(d_adaptive_avg_pool2d)
{
    tj_tensor *self = ARG(0);
    gi[0] = self->numel == 0 ? zeros_like(self) : tj__adaptive_avg_pool2d_backward(g[0], self);
    return TJ_OK;
}

/* _adaptive_avg_pool3d: _adaptive_avg_pool3d_backward(grad, self); its
 * backward is linear in grad_output, with the forward as its transpose
 * (derivatives.yaml). Empty self or grad as the 2-d ones. */
FORMULA(d_adaptive_avg_pool3d)
{
    tj_tensor *self = ARG(0);
    gi[0] = self->numel == 0 || g[0]->numel == 0 ? zeros_like(self) : tj__adaptive_avg_pool3d_backward(g[0], self);
    return TJ_OK;
}
FORMULA(d_adaptive_avg_pool3d_backward)
{
    const tj_tensor *go = META(0);
    if (NEED(0)) gi[0] = tj__adaptive_avg_pool3d(g[0], go->shape + go->ndim - 3);
    return TJ_OK;
}

/* adaptive_max_pool2d: adaptive_max_pool2d_backward(grad, self, indices)
 * (derivatives.yaml; the indices are not differentiable). An empty self
 * or output has a zero gradient (the backward refuses an empty grad). */
FORMULA(d_adaptive_max_pool2d)
{
    tj_tensor *self = ARG(0);
    gi[0] = self->numel == 0 || g[0]->numel == 0 ? zeros_like(self)
                                                  : tj_adaptive_max_pool2d_backward(g[0], self, OUT(1));
    return TJ_OK;
}

/* _adaptive_avg_pool2d_backward is linear in grad_output, with the forward
 * pooling as its transpose; self's values are not read (no gradient). */
FORMULA(d_adaptive_avg_pool2d_backward)
{
    const tj_tensor *go = META(0);
    int64_t size[2] = {go->shape[go->ndim - 2], go->shape[go->ndim - 1]};
    if (NEED(0)) gi[0] = tj__adaptive_avg_pool2d(g[0], size);
    return TJ_OK;
}

/* upsample_*.vec: its backward operator with the forward's output_size,
 * [align_corners,] scale_factors and the input's sizes (derivatives.yaml);
 * the backward is linear in grad_output, its gradient the forward. */
static tj_status d_upsample(const tj_op *backward, const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi)
{
    const tj_tensor *in = META(0);
    /* (grad_output, output_size, input_size, [align_corners,] scale_factors) */
    tj_value args[5] = {tj_v_tensor(g[0]), c->args[1], tj_v_ints(in->shape, in->ndim)}, out;
    for (int i = 3; i < tj_op_num_args(backward); i++) args[i] = c->args[i - 1];
    tj_status st = call(backward, args, &out);
    gi[0] = st == TJ_OK ? out.u.t : NULL;
    return st;
}
FORMULA(d_upsample_nearest2d) { return d_upsample(TJ_OPS(upsample_nearest2d_backward_vec), c, g, gi); }
FORMULA(d_upsample_bilinear2d) { return d_upsample(TJ_OPS(upsample_bilinear2d_backward_vec), c, g, gi); }
FORMULA(d_upsample_bicubic2d) { return d_upsample(TJ_OPS(upsample_bicubic2d_backward_vec), c, g, gi); }
FORMULA(d_upsample_nearest1d) { return d_upsample(TJ_OPS(upsample_nearest1d_backward_vec), c, g, gi); }
FORMULA(d_upsample_linear1d) { return d_upsample(TJ_OPS(upsample_linear1d_backward_vec), c, g, gi); }
FORMULA(d_upsample_nearest3d) { return d_upsample(TJ_OPS(upsample_nearest3d_backward_vec), c, g, gi); }
FORMULA(d_upsample_trilinear3d) { return d_upsample(TJ_OPS(upsample_trilinear3d_backward_vec), c, g, gi); }

static tj_status d_upsample_backward(const tj_op *forward, const tj_grad_ctx *c, tj_tensor *const *g,
                                     tj_tensor **gi)
{
    /* the forward's (input, output_size, [align_corners,] scale_factors): the
     * backward's arguments without input_size */
    tj_value args[4] = {tj_v_tensor(g[0]), c->args[1]}, out;
    for (int i = 2; i < tj_op_num_args(forward); i++) args[i] = c->args[i + 1];
    tj_status st = call(forward, args, &out);
    gi[0] = st == TJ_OK ? out.u.t : NULL;
    return st;
}
FORMULA(d_upsample_nearest2d_backward) { return d_upsample_backward(TJ_OPS(upsample_nearest2d_vec), c, g, gi); }
FORMULA(d_upsample_bilinear2d_backward) { return d_upsample_backward(TJ_OPS(upsample_bilinear2d_vec), c, g, gi); }
FORMULA(d_upsample_bicubic2d_backward) { return d_upsample_backward(TJ_OPS(upsample_bicubic2d_vec), c, g, gi); }
FORMULA(d_upsample_nearest1d_backward) { return d_upsample_backward(TJ_OPS(upsample_nearest1d_vec), c, g, gi); }
FORMULA(d_upsample_linear1d_backward) { return d_upsample_backward(TJ_OPS(upsample_linear1d_vec), c, g, gi); }
FORMULA(d_upsample_nearest3d_backward) { return d_upsample_backward(TJ_OPS(upsample_nearest3d_vec), c, g, gi); }
FORMULA(d_upsample_trilinear3d_backward)
{
    return d_upsample_backward(TJ_OPS(upsample_trilinear3d_vec), c, g, gi);
}

/* pixel_shuffle and pixel_unshuffle undo each other (derivatives.yaml). */
FORMULA(d_pixel_shuffle)
{
    gi[0] = tj_pixel_unshuffle(g[0], c->args[1].u.i);
    return TJ_OK;
}
FORMULA(d_pixel_unshuffle)
{
    gi[0] = tj_pixel_shuffle(g[0], c->args[1].u.i);
    return TJ_OK;
}

/* reflection / replication padding (derivatives.yaml): the forward's
 * gradient is its backward operator (self's values unread); the backward is
 * linear in grad_output, whose gradient is the forward of the gradient,
 * self's zeros. */
static tj_status d_pad(const tj_op *backward, const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi)
{
    tj_value args[3] = {tj_v_tensor(g[0]), c->args[0], c->args[1]}, out;
    tj_status st = call(backward, args, &out);
    gi[0] = st == TJ_OK ? out.u.t : NULL;
    return st;
}
static tj_status d_pad_backward(const tj_op *forward, const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi)
{
    if (NEED(1)) gi[1] = zeros_like(META(1));
    if (!NEED(0)) return TJ_OK;
    tj_value args[2] = {tj_v_tensor(g[0]), c->args[2]}, out;
    tj_status st = call(forward, args, &out);
    gi[0] = st == TJ_OK ? out.u.t : NULL;
    return st;
}
#define PAD_FORMULAS(ident)                                                                            \
    FORMULA(d_##ident) { return d_pad(TJ_OPS(ident##_backward), c, g, gi); }                           \
    FORMULA(d_##ident##_backward) { return d_pad_backward(TJ_OPS(ident), c, g, gi); }
PAD_FORMULAS(reflection_pad1d)
PAD_FORMULAS(reflection_pad2d)
PAD_FORMULAS(replication_pad1d)
PAD_FORMULAS(replication_pad2d)

/* scatter_reduce.two: PyTorch 1.13's scatter_reduce_backward
 * (FunctionsManual.cpp), with src read over index's shape (the leading
 * block the forward reads) and its gradient zero-padded to src's shape. */
static void scatter_reduce_grads(const tj_grad_ctx *c, tj_tensor *grad, tj_tensor **gself, tj_tensor **gsrc)
{
    int64_t dim = c->args[1].u.i;
    tj_tensor *index = ARG(2);
    const char *reduce = c->args[4].u.s;
    bool include_self = c->args[5].u.b;
    if (strcmp(reduce, "sum") == 0) {
        *gself = grad;
        *gsrc = tj_gather(grad, dim, index);
        return;
    }
    tj_tensor *src = ARG(3);
    for (int d = 0; src && d < index->ndim; d++)
        if (src->shape[d] != index->shape[d]) src = tj_slice(src, d, true, 0, true, index->shape[d], 1);
    if (strcmp(reduce, "mean") == 0) {
        tj_tensor *n = include_self ? tj_ones_like(grad, TJ_DTYPE_NONE) : zeros_like(grad);
        n = tj_scatter_add(n, dim, index, tj_ones_like(src, TJ_DTYPE_NONE));
        n = tj_masked_fill(n, tj_eq_scalar(n, tj_v_int(0)), tj_v_int(1));
        *gself = tj_div(grad, n);
        *gsrc = tj_div(tj_gather(grad, dim, index), tj_gather(n, dim, index));
        return;
    }
    tj_tensor *self = ARG(0), *result = OUT(0);
    if (strcmp(reduce, "prod") == 0) {
        /* zeros in self or src handled apart: the product of the others */
        tj_tensor *masked_self = tj_masked_fill(self, tj_eq_scalar(self, tj_v_int(0)), tj_v_int(1));
        tj_tensor *masked_self_result = tj_scatter_reduce(masked_self, dim, index, src, reduce, include_self);
        *gself = tj_div(tj_mul(grad, masked_self_result), masked_self);
        tj_tensor *src_zero = tj_eq_scalar(src, tj_v_int(0));
        tj_tensor *zeros = tj_scatter_add(zeros_like(self), dim, index, tj_to_copy(src_zero, grad->dtype));
        tj_tensor *single_zero = tj_logical_and(src_zero, tj_eq_scalar(tj_gather(zeros, dim, index), tj_v_int(1)));
        tj_tensor *masked_src_result =
            tj_scatter_reduce(self, dim, index, tj_masked_fill(src, single_zero, tj_v_int(1)), reduce, include_self);
        tj_tensor *others = tj_div(tj_gather(tj_mul(grad, result), dim, index),
                                   tj_masked_fill(src, src_zero, tj_v_int(1)));
        *gsrc = tj_where(single_zero, tj_gather(tj_mul(grad, masked_src_result), dim, index), others);
        return;
    }
    /* amax / amin: the gradient split evenly between the values equal to the
     * result; as ATen, the masks that pick them are bool and compared anew
     * (make_fx records eq again and a mul of bool by float, same values) */
    tj_tensor *value = tj_gather(result, dim, index);
    tj_tensor *self_is = tj_to_copy(tj_eq(self, result), self->dtype);
    tj_tensor *src_is = tj_to_copy(tj_eq(src, value), self->dtype);
    tj_tensor *distributed = tj_div(grad, tj_scatter_add(self_is, dim, index, src_is));
    *gself = tj_mul(tj_eq(self, result), distributed);
    tj_tensor *src_distributed = tj_gather(distributed, dim, index); /* before the eq, in torch's order */
    *gsrc = tj_mul(tj_eq(src, value), src_distributed);
}

FORMULA(d_scatter_reduce)
{
    tj_tensor *gself = NULL, *gsrc = NULL;
    scatter_reduce_grads(c, g[0], &gself, &gsrc);
    if (!c->args[5].u.b && gself) gself = tj_scatter_value(gself, c->args[1].u.i, ARG(2), tj_v_int(0));
    if (NEED(0)) gi[0] = gself;
    if (NEED(2)) gi[2] = gsrc ? zero_padded_to(gsrc, META(3)) : NULL;
    return gself && gsrc ? TJ_OK : tj_last_status();
}

/* index_copy / index_fill (derivatives.yaml): self gets the gradient with
 * the written slices zeroed; index_copy's source the gradient's slices at
 * index (viewed as source: a 0-dim index keeps its dim); index_fill's
 * value tensor the gradient summed over the filled elements: the sum of
 * where(filled, grad, 0), filled an index_fill of a bool mask (PyTorch sums
 * index_select(grad, dim, _unique(index)), tjit has no _unique) */
FORMULA(d_index_copy_fill)
{
    int64_t dim = c->args[1].u.i;
    if (NEED(0)) gi[0] = tj_index_fill(g[0], dim, ARG(2), tj_v_int(0));
    if (CALLED(index_copy) && NEED(2)) {
        const tj_tensor *src = META(3);
        gi[2] = tj_view(tj_index_select(g[0], dim, ARG(2)), src->shape, src->ndim);
    }
    if (CALLED(index_fill_int_Tensor) && NEED(2)) {
        const tj_tensor *gm = g[0];
        tj_tensor *filled = tj_index_fill(tj_zeros(gm->shape, gm->ndim, TJ_BOOL), dim, ARG(2), tj_v_bool(true));
        gi[2] = tj_sum(where_or_zero(filled, g[0]), TJ_DTYPE_NONE);
    }
    return TJ_OK;
}

/* mv, dot, addmv, addr (derivatives.yaml): outer products (ger) and
 * matrix-vector products, scaled by alpha / beta as maybe_multiply */
FORMULA(d_mv)
{
    if (NEED(0)) gi[0] = tj_outer(g[0], ARG(1));
    if (NEED(1)) gi[1] = tj_mv(tj_t(ARG(0)), g[0]);
    return TJ_OK;
}

FORMULA(d_dot)
{
    if (NEED(0)) gi[0] = tj_mul(g[0], ARG(1));
    if (NEED(1)) gi[1] = tj_mul(g[0], ARG(0));
    return TJ_OK;
}

FORMULA(d_addmv)
{
    const tj_value *beta = &c->args[3], *alpha = &c->args[4];
    if (NEED(0)) gi[0] = scaled(g[0], beta);
    if (NEED(1)) gi[1] = scaled(tj_outer(g[0], ARG(2)), alpha);
    if (NEED(2)) gi[2] = scaled(tj_mv(tj_t(ARG(1)), g[0]), alpha);
    return TJ_OK;
}

FORMULA(d_addr)
{
    const tj_value *beta = &c->args[3], *alpha = &c->args[4];
    if (NEED(0)) gi[0] = scaled(g[0], beta);
    if (NEED(1)) gi[1] = scaled(tj_mv(g[0], ARG(2)), alpha);
    if (NEED(2)) gi[2] = scaled(tj_mv(tj_t(g[0]), ARG(1)), alpha);
    return TJ_OK;
}

/* celu (derivatives.yaml): elu_backward(grad, alpha, 1, 1 / alpha, false, self);
 * celu_ differentiates its result (is_result true), keeping no copy of self */
static tj_tensor *celu_grad(const tj_grad_ctx *c, tj_tensor *g, bool is_result, tj_tensor *self_or_result)
{
    double alpha = tj_value_as_double(&c->args[1]);
    return tj_elu_backward(g, c->args[1], tj_v_int(1), tj_v_float(1.0 / alpha), is_result, self_or_result);
}
FORMULA(d_celu) { gi[0] = celu_grad(c, g[0], false, ARG(0)); return TJ_OK; }
FORMULA(d_celu_result) { gi[0] = celu_grad(c, g[0], true, OUT(0)); return TJ_OK; }

/* prelu (derivatives.yaml): prelu_backward(grad, self, weight) */
FORMULA(d_prelu) { return g[0] ? tj_prelu_backward(g[0], ARG(0), ARG(1), &gi[0], &gi[1]) : TJ_OK; }

/* prelu_backward: PyTorch 1.13's prelu_double_backward (FunctionsManual.cpp)
 * step for step, so that make_fx records its operators: with gI / gW the
 * incoming gradients (zeros when absent), pos / nonpos the masks self > 0
 * and self <= 0 in self's dtype, and ggW / weight unsqueezed to broadcast
 * along dim 1 (one weight: expanded as it is), grad_output's gradient is
 * gI * (pos + nonpos * weight) + ggW * nonpos * self, self's ggW *
 * grad_output * nonpos, weight's the sum of gI * grad_output * nonpos per
 * weight. */
FORMULA(d_prelu_backward)
{
    tj_tensor *go = ARG(0), *x = ARG(1), *w = ARG(2);
    const tj_tensor *xm = META(1), *gom = META(0), *wm = META(2);
    tj_tensor *ggi = g[0] ? g[0] : zeros_like(xm), *ggw = g[1] ? g[1] : zeros_like(wm);
    tj_tensor *pos = tj_to_copy(tj_gt_scalar(x, tj_v_int(0)), xm->dtype);
    tj_tensor *nonpos = tj_to_copy(tj_le_scalar(x, tj_v_int(0)), xm->dtype);
    if (wm->numel == 1) {
        /* a 0-dim self with a 1-D weight: weight and ggW as 0-dim */
        bool squeeze = xm->ndim == 0 && wm->ndim == 1;
        tj_tensor *wq = squeeze ? tj_squeeze_dim(w, 0) : w, *ggwq = squeeze ? tj_squeeze_dim(ggw, 0) : ggw;
        tj_tensor *mask = tj_add(pos, tj_mul(nonpos, tj_expand(wq, xm->shape, xm->ndim)));
        tj_tensor *ggw_e = tj_expand(ggwq, gom->shape, gom->ndim);
        gi[0] = tj_add(tj_mul(ggi, mask), tj_mul(ggw_e, tj_mul(nonpos, x)));
        gi[1] = tj_mul(tj_mul(tj_expand(ggwq, gom->shape, gom->ndim), go), nonpos);
        gi[2] = tj_expand(tj_sum(tj_mul(tj_mul(ggi, go), nonpos), TJ_DTYPE_NONE), wm->shape, wm->ndim);
        return TJ_OK;
    }
    tj_tensor *ggw_e = ggw, *w_e = w;
    for (int k = 2; k < xm->ndim; k++) ggw_e = tj_unsqueeze(ggw_e, 1);
    ggw_e = tj_expand(ggw_e, tj_tensor_shape(ggi), tj_tensor_ndim(ggi));
    gi[1] = tj_mul(tj_mul(ggw_e, go), nonpos);
    tj_tensor *gw = tj_mul(tj_mul(ggi, go), nonpos);
    if (xm->ndim > 1) gw = tj_sum_dim(gw, (const int64_t[]){0}, 1, false, TJ_DTYPE_NONE);
    while (gw && tj_tensor_ndim(gw) > 1) gw = tj_sum_dim(gw, (const int64_t[]){1}, 1, false, TJ_DTYPE_NONE);
    gi[2] = gw;
    for (int k = 2; k < xm->ndim; k++) w_e = tj_unsqueeze(w_e, 1);
    w_e = tj_expand(w_e, xm->shape, xm->ndim);
    tj_tensor *mask = tj_add(pos, tj_mul(nonpos, w_e));
    gi[0] = tj_add(tj_mul(ggi, mask), tj_mul(tj_mul(ggw_e, nonpos), x));
    return TJ_OK;
}

/* ---- the optimisers' pointwise operators and functionalisation's scatters ---- */

FORMULA(d_addcmul)
{
    const tj_value *v = &c->args[3];
    gi[0] = g[0];
    if (NEED(1)) gi[1] = tj_mul(g[0], scaled(ARG(2), v));
    if (NEED(2)) gi[2] = tj_mul(g[0], scaled(ARG(1), v));
    return TJ_OK;
}

/* tensor1: grad * (value / tensor2); tensor2: -grad * (value * tensor1 / tensor2^2) */
FORMULA(d_addcdiv)
{
    const tj_value *v = &c->args[3];
    gi[0] = g[0];
    if (NEED(1)) gi[1] = tj_mul(g[0], tj_mul_scalar(tj_reciprocal(ARG(2)), *v));
    if (NEED(2)) {
        tj_tensor *t2 = ARG(2);
        gi[2] = tj_mul(tj_neg(g[0]), tj_div(scaled(ARG(1), v), tj_mul(t2, t2)));
    }
    return TJ_OK;
}

/* end: grad * weight, self: grad * (1 - weight), and for lerp.Tensor
 * weight: grad * (end - self), in the inputs' alphabetical order (see d_mm).
 * ATen writes 1 - weight in C++ (empty_like, fill_, sub_ in make_fx); tjit
 * records rsub. */
FORMULA(d_lerp_tensor)
{
    tj_tensor *w = ARG(2);
    if (NEED(1)) gi[1] = tj_mul(g[0], w);
    if (NEED(0)) gi[0] = tj_mul(g[0], tj_rsub_scalar(w, tj_v_int(1), tj_v_int(1)));
    if (NEED(2)) gi[2] = tj_mul(g[0], tj_sub(ARG(1), ARG(0)));
    return TJ_OK;
}

FORMULA(d_lerp)
{
    double w = tj_value_as_double(&c->args[2]);
    if (NEED(1)) gi[1] = tj_mul_scalar(g[0], c->args[2]); /* end's first, as LerpBackward0 */
    if (NEED(0)) gi[0] = tj_mul_scalar(g[0], tj_v_float(1.0 - w));
    return TJ_OK;
}

/* copy: self's values are overwritten (zero gradient); src gets grad. */
FORMULA(d_copy)
{
    if (NEED(0)) gi[0] = zeros_like(META(0));
    if (NEED(1)) gi[1] = g[0];
    return TJ_OK;
}

FORMULA(d_overwrite) { gi[0] = zeros_like(META(0)); return TJ_OK; }

/* fill.Tensor: self overwritten; the 0-dim value gets the gradient's sum. */
FORMULA(d_fill_tensor)
{
    if (NEED(0)) gi[0] = zeros_like(META(0));
    if (NEED(1)) gi[1] = tj_sum(g[0], TJ_DTYPE_NONE);
    return TJ_OK;
}

/* self: the gradient with the scattered region zeroed; src: that region. */
FORMULA(d_slice_scatter)
{
    tj_tensor *src = META(1);
    if (NEED(0)) {
        tj_value args[6] = {tj_v_tensor(g[0]), tj_v_tensor(zeros_like(src)), c->args[2], c->args[3], c->args[4],
                            c->args[5]};
        tj_value out;
        tj_status st = args[1].u.t ? call(TJ_OPS(slice_scatter), args, &out) : tj_last_status();
        if (st != TJ_OK) return st;
        gi[0] = out.u.t;
    }
    if (NEED(1)) {
        tj_value args[5] = {tj_v_tensor(g[0]), c->args[2], c->args[3], c->args[4], c->args[5]};
        tj_value out;
        tj_status st = call(TJ_OPS(slice_Tensor), args, &out);
        if (st != TJ_OK) return st;
        gi[1] = out.u.t;
    }
    return TJ_OK;
}

/* diagonal, diagonal_backward, diagonal_scatter (derivatives.yaml): the
 * gradient back on the diagonal of zeros (diagonal_backward), the
 * diagonal of the gradient */
FORMULA(d_diagonal)
{
    const tj_tensor *self = META(0);
    gi[0] = tj_diagonal_backward(g[0], self->shape, self->ndim, c->args[1].u.i, c->args[2].u.i, c->args[3].u.i);
    return TJ_OK;
}

FORMULA(d_diagonal_backward)
{
    gi[0] = tj_diagonal(g[0], c->args[2].u.i, c->args[3].u.i, c->args[4].u.i);
    return TJ_OK;
}

FORMULA(d_diagonal_scatter)
{
    int64_t offset = c->args[2].u.i, dim1 = c->args[3].u.i, dim2 = c->args[4].u.i;
    if (NEED(0)) gi[0] = tj_diagonal_scatter(g[0], zeros_like(META(1)), offset, dim1, dim2);
    if (NEED(1)) gi[1] = tj_diagonal(g[0], offset, dim1, dim2);
    return TJ_OK;
}

/* ---- as_strided: PyTorch 1.13's as_strided_backward (FunctionsManual.cpp) ---- */

/* The dims of a geometry without its size-1 dims, into *n / size / stride;
 * false when one has size 0. */
static bool squeezed_geometry(int nd, const int64_t *shape, const int64_t *strides, int *n, int64_t *size,
                              int64_t *stride)
{
    *n = 0;
    for (int d = 0; d < nd; d++) {
        if (shape[d] == 0) return false;
        if (shape[d] == 1) continue;
        size[*n] = shape[d];
        stride[(*n)++] = strides[d];
    }
    return true;
}

/* ATen's _maybe_overlapping_memory: some stride does not exceed the span
 * of the dims with smaller strides (an expanded dim, stride 0, included). */
static bool maybe_overlapping(int n, const int64_t *size, const int64_t *stride)
{
    int order[TJ_MAX_DIMS];
    for (int i = 0; i < n; i++) order[i] = i;
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && stride[order[j - 1]] > stride[order[j]]; j--) {
            int x = order[j];
            order[j] = order[j - 1];
            order[j - 1] = x;
        }
    int64_t span = 0;
    for (int i = 0; i < n; i++) {
        int d = order[i];
        if (stride[d] <= span) return true;
        span += (size[d] - 1) * stride[d];
    }
    return false;
}

/* The storage a geometry needs from offset 0 (ATen's _min_storage_size). */
static int64_t min_storage(int n, const int64_t *size, const int64_t *stride, int64_t offset)
{
    int64_t end = offset + 1;
    for (int d = 0; d < n; d++) end += (size[d] - 1) * stride[d];
    return end;
}

/* An int64 view of arange(base) with the geometry, flattened. */
static tj_tensor *geometry_indices(tj_tensor *arange, int n, const int64_t *size, const int64_t *stride, int64_t offset)
{
    int64_t flat = -1;
    return tj_reshape(tj_as_strided(arange, size, stride, n, true, offset), &flat, 1);
}

/* The gradient g of out = as_strided(self, size, stride, offset): the
 * output's elements scattered into a storage shared with the input's
 * geometry (summed where the output overlaps itself, divided by the
 * multiplicity where the input does), read back with the input's geometry. */
FORMULA(d_as_strided)
{
    const tj_tensor *self = META(0);
    const tj_value *size = &c->args[1], *stride = &c->args[2];
    int64_t offset = c->args[3].kind == TJ_V_INT ? c->args[3].u.i : self->offset;
    int no, ni;
    tj_note_geometry_read(self, "aten::as_strided's gradient");
    int64_t osize[TJ_MAX_DIMS], ostride[TJ_MAX_DIMS], isize[TJ_MAX_DIMS], istride[TJ_MAX_DIMS];
    tj_tensor *grad = g[0];
    /* the output's geometry: size-1 dims squeezed, expanded ones summed */
    no = 0;
    for (int d = size->n - 1; d >= 0 && grad; d--) {
        if (size->u.ints[d] == 0) {
            gi[0] = zeros_like(self);
            return TJ_OK;
        }
        if (size->u.ints[d] == 1) grad = tj_squeeze_dim(grad, d);
        else if (stride->u.ints[d] == 0) grad = tj_sum_dim(grad, (int64_t[]){d}, 1, false, TJ_DTYPE_NONE);
    }
    if (!grad) return tj_last_status();
    for (int d = 0; d < size->n; d++)
        if (size->u.ints[d] != 1 && stride->u.ints[d] != 0) {
            osize[no] = size->u.ints[d];
            ostride[no++] = stride->u.ints[d];
        }
    if (!squeezed_geometry(self->ndim, self->shape, self->strides, &ni, isize, istride)) {
        gi[0] = zeros_like(self);
        return TJ_OK;
    }
    bool out_overlap = maybe_overlapping(no, osize, ostride), in_overlap = maybe_overlapping(ni, isize, istride);
    int64_t shared = offset < self->offset ? offset : self->offset;
    int64_t in_off = self->offset - shared, out_off = offset - shared;
    int64_t a = min_storage(ni, isize, istride, in_off), b = min_storage(no, osize, ostride, out_off);
    int64_t base = a > b ? a : b;
    tj_tensor *storage = tj_zeros(&base, 1, grad->dtype), *indices = NULL;
    if (out_overlap || in_overlap) indices = tj_arange(tj_v_int(0), tj_v_int(base), tj_v_int(1), TJ_INT64);
    if (out_overlap) {
        int64_t flat = -1;
        storage = tj_index_add(storage, 0, geometry_indices(indices, no, osize, ostride, out_off),
                               tj_reshape(grad, &flat, 1), tj_v_int(1));
    } else {
        storage = tj_as_strided_scatter(storage, grad, osize, ostride, no, true, out_off);
    }
    if (in_overlap) {
        tj_tensor *idx = geometry_indices(indices, ni, isize, istride, in_off);
        tj_tensor *ones = idx ? tj_ones(tj_tensor_shape(idx), 1, grad->dtype) : NULL;
        tj_tensor *count = tj_index_add(tj_zeros(&base, 1, grad->dtype), 0, idx, ones, tj_v_int(1));
        storage = tj_div(storage, count); /* nan outside the input's elements, as ATen */
    }
    gi[0] = tj_as_strided(storage, self->shape, self->strides, self->ndim, true, in_off);
    return TJ_OK;
}

/* as_strided_scatter: self gets the gradient with the written elements
 * zeroed, src the gradient read with the geometry, both over a row-major
 * copy of the gradient in self's storage order (the operator addresses
 * self's clone, which keeps a dense self's layout: tj_storage_order). */
FORMULA(d_as_strided_scatter)
{
    const tj_tensor *self = META(0), *src = META(1);
    const tj_value *size = &c->args[2], *stride = &c->args[3];
    bool has = c->args[4].kind == TJ_V_INT;
    int64_t off = has ? c->args[4].u.i : 0;
    int order[TJ_MAX_DIMS];
    int64_t perm[TJ_MAX_DIMS], inverse[TJ_MAX_DIMS];
    tj_storage_order(self, order);
    for (int k = 0; k < self->ndim; k++) perm[k] = order[k], inverse[order[k]] = k;
    tj_tensor *stored = tj_clone(tj_permute(g[0], perm, self->ndim));
    if (NEED(0))
        gi[0] = tj_permute(tj_as_strided_scatter(stored, zeros_like(src), size->u.ints, stride->u.ints, size->n, true,
                                                 off), inverse, self->ndim);
    if (NEED(1)) gi[1] = tj_as_strided(stored, size->u.ints, stride->u.ints, size->n, true, off);
    return TJ_OK;
}

/* diag (derivatives.yaml, diag_backward): diag of the gradient for a vector
 * or square self, diagonal_backward for another matrix, or a square one
 * with an offset past its sizes (whose diag would be a matrix of side
 * |offset|; PyTorch 1.13's forward fails there) */
FORMULA(d_diag)
{
    const tj_tensor *self = META(0);
    int64_t k = c->args[1].u.i;
    if (self->ndim == 1 || (self->shape[0] == self->shape[1] && k >= -self->shape[0] && k <= self->shape[0]))
        gi[0] = tj_diag(g[0], k);
    else gi[0] = tj_diagonal_backward(g[0], self->shape, 2, k, 0, 1);
    return TJ_OK;
}

FORMULA(d_diag_embed)
{
    gi[0] = tj_diagonal(g[0], c->args[1].u.i, c->args[2].u.i, c->args[3].u.i);
    return TJ_OK;
}

/* trace (derivatives.yaml, trace_backward): the gradient index_fill'ed at
 * every (n + 1)-th element of zeros([m * n]) below n (n + 1), the diagonal's
 * (torch 1.13 goes on to m n, past the diagonal of a tall matrix), viewed
 * as [m, n] */
FORMULA(d_trace)
{
    const tj_tensor *self = META(0);
    int64_t m = self->shape[0], n = self->shape[1], numel = m * n;
    int64_t end = m > n ? n * (n + 1) : numel;
    tj_tensor *zeros = tj_zeros(&numel, 1, (int)tj_tensor_dtype(g[0]));
    tj_tensor *at = tj_arange(tj_v_int(0), tj_v_int(end), tj_v_int(n + 1), TJ_INT64);
    gi[0] = tj_view(tj_index_fill_tensor(zeros, 0, at, g[0]), self->shape, 2);
    return TJ_OK;
}

FORMULA(d_select_scatter)
{
    int64_t dim = c->args[2].u.i, index = c->args[3].u.i;
    if (NEED(0)) gi[0] = tj_select_scatter(g[0], zeros_like(META(1)), dim, index);
    if (NEED(1)) gi[1] = tj_select(g[0], dim, index);
    return TJ_OK;
}

/* derivatives.yaml 1.13: im2col and col2im are each other's gradient, over
 * self's last two sizes for im2col's */
FORMULA(d_im2col)
{
    const tj_tensor *self = META(0);
    const int64_t size[2] = {self->shape[self->ndim - 2], self->shape[self->ndim - 1]};
    const tj_value *a = c->args;
    gi[0] = tj_col2im(g[0], size, a[1].u.ints, a[2].u.ints, a[3].u.ints, a[4].u.ints);
    return TJ_OK;
}

FORMULA(d_col2im)
{
    const tj_value *a = c->args;
    gi[0] = tj_im2col(g[0], a[2].u.ints, a[3].u.ints, a[4].u.ints, a[5].u.ints);
    return TJ_OK;
}

/* derivatives.yaml 1.13: x1 _cdist_backward(grad.contiguous(), x1, x2, p,
 * result); x2 the same with x1, x2 swapped and grad, result transposed
 * (mT().contiguous()) */
FORMULA(d_cdist_forward)
{
    tj_tensor *x1 = ARG(0), *x2 = ARG(1), *r = OUT(0);
    double p = tj_value_as_double(&c->args[2]);
    if (NEED(0)) gi[0] = tj__cdist_backward(tj_contiguous(g[0]), x1, x2, p, r);
    if (NEED(1))
        gi[1] = tj__cdist_backward(tj_contiguous(tj_transpose(g[0], -2, -1)), x2, x1, p,
                                   tj_contiguous(tj_transpose(r, -2, -1)));
    return TJ_OK;
}

/* FunctionsManual 1.13 _euclidean_dist_backward: ratio = grad / result, 0
 * where the result is 0; x1 * ratio.sum(-1, true) - ratio @ x2, x2 *
 * ratio.sum(-2).unsqueeze(-1) - ratio.mT @ x1 */
FORMULA(d_euclidean_dist)
{
    tj_tensor *x1 = ARG(0), *x2 = ARG(1), *r = OUT(0);
    tj_tensor *ratio = tj_masked_fill(tj_div(g[0], r), tj_eq_scalar(r, tj_v_int(0)), tj_v_int(0));
    const int64_t last = -1, rows = -2;
    if (NEED(0)) gi[0] = tj_sub(tj_mul(x1, tj_sum_dim(ratio, &last, 1, true, -1)), tj_matmul(ratio, x2));
    if (NEED(1))
        gi[1] = tj_sub(tj_mul(x2, tj_unsqueeze(tj_sum_dim(ratio, &rows, 1, false, -1), -1)),
                       tj_matmul(tj_transpose(ratio, -2, -1), x1));
    return TJ_OK;
}

/* ---- searches, running and order selections, std_mean, shrinks (op_search_select.def) ---- */

/* cummax / cummin (derivatives.yaml 1.13: cummaxmin_backward(grad, self,
 * indices, dim)): the gradient scattered-added into zeros at the indices;
 * an empty self gives itself back, a 0-dim one the gradient */
FORMULA(d_cummaxmin)
{
    tj_tensor *self = META(0);
    if (self->ndim == 0 || self->numel == 0) {
        gi[0] = self->numel == 0 ? zeros_like(self) : g[0];
        return TJ_OK;
    }
    gi[0] = tj_scatter_add(zeros_like(self), c->args[1].u.i, OUT(1), g[0]);
    return TJ_OK;
}

/* FunctionsManual 1.13's logcumsumexp_backward (after TensorFlow's
 * cumulative_logsumexp gradient): with lowest the dtype's lowest finite
 * value, log|g| split by sign (lowest where g has the other sign or is 0),
 * exp(reversed logcumsumexp(log|g| - result) + self) for each part, the
 * positive minus the negative. A 0-dim or empty gradient is its own. */
FORMULA(d_logcumsumexp)
{
    tj_tensor *go = g[0], *self = ARG(0), *r = OUT(0);
    if (go->ndim == 0 || go->numel == 0) {
        gi[0] = go;
        return TJ_OK;
    }
    int64_t d = c->args[1].u.i;
    tj_tensor *lowest = tj_full_like(go, tj_v_float(go->dtype == TJ_FLOAT32 ? -FLT_MAX : -DBL_MAX), TJ_DTYPE_NONE);
    tj_tensor *log_pos = tj_where(tj_gt_scalar(go, tj_v_int(0)), tj_log(go), lowest);
    tj_tensor *log_neg = tj_where(tj_lt_scalar(go, tj_v_int(0)), tj_log(tj_neg(go)), lowest);
    tj_tensor *part[2], *log_part[2] = {log_pos, log_neg};
    for (int k = 0; k < 2; k++) {
        tj_tensor *rev = tj_flip(tj_logcumsumexp(tj_flip(tj_sub(log_part[k], r), &d, 1), d), &d, 1);
        part[k] = tj_exp(tj_add(rev, self));
    }
    gi[0] = tj_sub(part[0], part[1]);
    return TJ_OK;
}

/* kthvalue, median.dim, nanmedian.dim (derivatives.yaml 1.13:
 * value_selecting_reduction_backward): grad and indices unsqueezed at dim
 * unless keepdim, scattered into zeros of self's shape; a 0-dim self takes
 * the gradient as it is */
static tj_status selected_grad(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi, int dim_arg)
{
    tj_tensor *self = META(0), *go = g[0], *idx = OUT(1);
    if (self->ndim == 0) {
        gi[0] = go;
        return TJ_OK;
    }
    int64_t d = c->args[dim_arg].u.i;
    if (!c->args[dim_arg + 1].u.b) go = tj_unsqueeze(go, d), idx = tj_unsqueeze(idx, d);
    gi[0] = tj_scatter(zeros_like(self), d, idx, go);
    return TJ_OK;
}
FORMULA(d_kthvalue) { return selected_grad(c, g, gi, 2); }
FORMULA(d_median_dim) { return selected_grad(c, g, gi, 1); }

/* median, nanmedian (derivatives.yaml 1.13: evenly_distribute_backward, as
 * its branch for traced tensors): mask = (self == result) | (isnan(self) &
 * isnan(result)); mask * (grad / mask.sum()) */
FORMULA(d_median)
{
    tj_tensor *self = ARG(0), *r = OUT(0);
    tj_tensor *both_nan = tj_logical_and(tj_isnan(self), tj_isnan(r));
    tj_tensor *mask = tj_logical_or(tj_eq(self, r), both_nan);
    gi[0] = tj_mul(mask, tj_div(g[0], tj_sum(mask, TJ_DTYPE_NONE)));
    return TJ_OK;
}

/* hardshrink / softshrink (derivatives.yaml 1.13): their backward
 * operators; those differentiate as themselves in grad_output and as zeros
 * in self */
FORMULA(d_hardshrink) { gi[0] = tj_hardshrink_backward(g[0], ARG(0), c->args[1]); return TJ_OK; }
FORMULA(d_softshrink) { gi[0] = tj_softshrink_backward(g[0], ARG(0), c->args[1]); return TJ_OK; }
FORMULA(d_shrink_backward)
{
    tj_tensor *self = ARG(1);
    if (NEED(0))
        gi[0] = CALLED(hardshrink_backward) ? tj_hardshrink_backward(g[0], self, c->args[2])
                                            : tj_softshrink_backward(g[0], self, c->args[2]);
    if (NEED(1)) gi[1] = zeros_like(META(1));
    return TJ_OK;
}

/* ---- the table ---- */

#define D(ident, fn) [TJ_OPI_##ident] = {fn, false, 0}
#define D_OUTS(ident, fn, nondiff_mask) [TJ_OPI_##ident] = {fn, false, nondiff_mask}
#define NONDIFF(ident) [TJ_OPI_##ident] = {NULL, true, 0}
/* formulas that read no value of self (derivatives.yaml's `result`, or
 * nothing of self), and those that read it only for the other inputs'
 * gradients: recording an in-place call over them copies self's old value
 * never, or only when another input requires grad (tj_self_read) */
#define D_NO_SELF(ident, fn) [TJ_OPI_##ident] = {fn, false, 0, 0, TJ_SELF_UNREAD}
#define D_SELF_FOR_OTHERS(ident, fn) [TJ_OPI_##ident] = {fn, false, 0, 0, TJ_SELF_READ_FOR_OTHERS}
/* arguments (bit i: argument i) that must not require grad, and returns
 * without a gradient */
#define D_NO_GRAD_ARGS(ident, fn, nondiff_args, nondiff_outputs) \
    [TJ_OPI_##ident] = {fn, false, nondiff_outputs, nondiff_args}

static const tj_derivative derivatives[TJ_OPI_COUNT] = {
    D(abs, d_abs), D_NO_SELF(neg, d_neg), D_NO_SELF(exp, d_exp), D(log, d_log), D_NO_SELF(sqrt, d_sqrt),
    D_NO_SELF(rsqrt, d_rsqrt), D_NO_SELF(tanh, d_tanh), D_NO_SELF(sigmoid, d_sigmoid), D(erf, d_erf),
    D_NO_SELF(reciprocal, d_reciprocal), D(sin, d_sin), D(cos, d_cos), D(log1p, d_log1p), D_NO_SELF(expm1, d_expm1),
    D_NO_SELF(relu, d_relu), D(gelu, d_gelu), D(silu, d_silu), D_NO_SELF(add_Tensor, d_add),
    D_NO_SELF(add_Scalar, d_add), D_NO_SELF(sub_Tensor, d_sub), D_NO_SELF(sub_Scalar, d_sub),
    D_SELF_FOR_OTHERS(mul_Tensor, d_mul), D_NO_SELF(mul_Scalar, d_mul_scalar), D_SELF_FOR_OTHERS(div_Tensor, d_div),
    D_NO_SELF(div_Scalar, d_div_scalar), D_SELF_FOR_OTHERS(div_Tensor_mode, d_div_mode),
    D_NO_SELF(div_Scalar_mode, d_div_scalar_mode), D(pow_Tensor_Scalar, d_pow_scalar), D(pow_Tensor_Tensor, d_pow),
    D(maximum, d_maximum), D(minimum, d_minimum), D(where_self, d_where), D(clamp, d_clamp),
    D(clamp_Tensor, d_clamp_tensor), D_NO_SELF(masked_fill_Scalar, d_masked_fill),
    D_NO_SELF(masked_fill_Tensor, d_masked_fill), D(logaddexp, d_logaddexp), NONDIFF(eq_Tensor), NONDIFF(detach), NONDIFF(ne_Tensor),
    NONDIFF(lt_Tensor), NONDIFF(le_Tensor), NONDIFF(gt_Tensor), NONDIFF(ge_Tensor), NONDIFF(eq_Scalar),
    NONDIFF(gt_Scalar), NONDIFF(ne_Scalar), NONDIFF(lt_Scalar), NONDIFF(le_Scalar), NONDIFF(ge_Scalar),
    /* session 14 (opsA) */
    D(where_ScalarOther, d_where), D(where_ScalarSelf, d_where), NONDIFF(where_Scalar), NONDIFF(logical_not),
    NONDIFF(logical_and), NONDIFF(logical_or), NONDIFF(logical_xor), D_NO_SELF(sign, d_zero),
    D_NO_SELF(sgn, d_zero), NONDIFF(bitwise_not), D(xlogy_Tensor, d_xlogy), D(xlogy_Scalar_Self, d_xlogy_scalar_self),
    D(xlogy_Scalar_Other, d_xlogy_scalar_other), NONDIFF(bitwise_and_Tensor),
    NONDIFF(bitwise_and_Scalar), NONDIFF(bitwise_or_Tensor), NONDIFF(bitwise_or_Scalar), NONDIFF(bitwise_xor_Tensor),
    NONDIFF(bitwise_xor_Scalar),
    /* floor_divide and floor_divide.Scalar have none (a NotImplemented
     * node, as PyTorch's) */
    D(rsub_Tensor, d_rsub), D(rsub_Scalar, d_rsub), D(leaky_relu, d_leaky_relu), D(softplus, d_softplus),
    D(elu, d_elu), D_NO_SELF(leaky_relu_, d_leaky_relu_result), D_NO_SELF(elu_, d_elu_result),
    /* session 16 (lossact) */
    D(hardtanh, d_hardtanh), D(hardsigmoid, d_hardsigmoid), D(hardswish, d_hardswish),
    D(smooth_l1_loss, d_smooth_l1_loss), D(huber_loss, d_huber_loss),
    /* session 20 (fxparity) */
    D(mse_loss, d_mse_loss), D(mse_loss_backward, d_mse_loss_backward),
    /* session 19 (emath) */
    D_NO_SELF(floor, d_zero), D_NO_SELF(ceil, d_zero), D_NO_SELF(round, d_zero), D_NO_SELF(trunc, d_zero),
    D_NO_SELF(frac, d_identity), D_SELF_FOR_OTHERS(remainder_Tensor, d_remainder),
    D_NO_SELF(remainder_Scalar, d_identity), D_SELF_FOR_OTHERS(fmod_Tensor, d_fmod),
    D_NO_SELF(fmod_Scalar, d_identity), NONDIFF(isnan), NONDIFF(isinf), D(nan_to_num, d_nan_to_num),
    D(clamp_min, d_clamp_min), D(clamp_max, d_clamp_max), D(atan2, d_atan2), D(asin, d_asin), D(acos, d_acos),
    D(atan, d_atan), D(sinh, d_sinh), D(cosh, d_cosh), D(log2, d_log2), D(log10, d_log10), D_NO_SELF(exp2, d_exp2),
    /* remainder.Scalar_Tensor has none (as PyTorch); the in-place
     * forms take their partner's entry (tj_derivative_of) */
    D(mish, d_mish), D_OUTS(log_sigmoid_forward, d_log_sigmoid_forward, 2u), D(glu, d_glu),
    D(clamp_min_Tensor, d_clamp_min_tensor), D(clamp_max_Tensor, d_clamp_max_tensor), D_NO_SELF(round_decimals, d_zero),

    D(sum_dim_IntList, d_sum_dim), D(sum, d_sum), D(cumsum, d_cumsum), D(mean_dim, d_mean_dim), D(amax, d_amax_amin),
    D(amin, d_amax_amin), NONDIFF(argmax), D(max_dim, d_max_dim), D(var_correction, d_var),
    D(var_mean_correction, d_var_mean), D(logsumexp, d_logsumexp),
    D(mean, d_mean), D(max, d_max_min_all), D(min, d_max_min_all), D(min_dim, d_max_dim), NONDIFF(argmin),
    D(std_correction, d_std), D(linalg_vector_norm, d_linalg_vector_norm),
    D(norm_ScalarOpt_dim, d_norm_scalaropt_dim),
    D(sort, d_sort), D(sort_stable, d_sort_stable), D(topk, d_topk),
    D(prod, d_prod), D(prod_dim_int, d_prod_dim), D(cumprod, d_cumprod), NONDIFF(all), NONDIFF(all_dim),
    NONDIFF(any), NONDIFF(any_dim),

    D(mm, d_mm), D(bmm, d_bmm), D(addmm, d_addmm), D(baddbmm, d_baddbmm),

    D(view, d_view), D(_unsafe_view, d_view), D(permute, d_permute), D(transpose_int, d_transpose), D(t, d_t),
    D(expand, d_expand), D(unsqueeze, d_unsqueeze), D(squeeze_dim, d_squeeze_dim), D(squeeze, d_squeeze), D(select_int, d_select),
    D(slice_Tensor, d_slice), D(cat, d_cat), D(flip, d_flip), D(constant_pad_nd, d_constant_pad_nd),
    D(clone, d_identity), D(_to_copy, d_identity), D(stack, d_stack),

    NONDIFF(zeros), NONDIFF(ones), NONDIFF(full), NONDIFF(arange_start_step), NONDIFF(arange_default),
    NONDIFF(arange_start), NONDIFF(empty_memory_format), NONDIFF(scalar_tensor),
    NONDIFF(rand), NONDIFF(randn), NONDIFF(bernoulli_p),
    /* derivatives.yaml: bernoulli_.float's self gets zeros (its result keeps
     * a history, unlike bernoulli.p's) */
    D_NO_SELF(bernoulli__float, d_zero),
    /* derivatives.yaml: uniform_, normal_, exponential_ give self zeros,
     * normal's overloads zeros to their mean / std */
    D_NO_SELF(uniform, d_zero), D_NO_SELF(normal_functional, d_zero), D_NO_SELF(exponential, d_zero),
    D_NO_SELF(normal_Tensor_float, d_zero), D_NO_SELF(normal_float_Tensor, d_zero),
    D_NO_SELF(normal_Tensor_Tensor, d_zeros_of_inputs), NONDIFF(normal_float_float), NONDIFF(zeros_like), NONDIFF(ones_like), NONDIFF(full_like),
    NONDIFF(empty_like), NONDIFF(new_zeros), NONDIFF(new_ones), NONDIFF(new_full),
    NONDIFF(new_empty), NONDIFF(rand_like), NONDIFF(randn_like), NONDIFF(eye), NONDIFF(eye_m), NONDIFF(linspace),

    D(_softmax, d_softmax), D(_log_softmax, d_log_softmax), D_OUTS(native_layer_norm, d_native_layer_norm, 6u),
    D_NO_GRAD_ARGS(native_batch_norm, d_native_batch_norm, 0x18u, 6u), /* running_mean, running_var */
    /* the same arguments; its running statistics are returned, not written */
    D_NO_GRAD_ARGS(_native_batch_norm_legit_functional, d_native_batch_norm, 0x18u, 0x1eu),
    D_OUTS(native_group_norm, d_native_group_norm, 6u),
    D(convolution, d_convolution), D_OUTS(max_pool2d_with_indices, d_max_pool2d, 2u),
    D(avg_pool2d, d_avg_pool2d), D(_adaptive_avg_pool2d, d_adaptive_avg_pool2d),
    D_OUTS(max_pool3d_with_indices, d_max_pool3d, 2u), D(avg_pool3d, d_avg_pool3d),
    D(grid_sampler_2d, d_grid_sampler_2d),
    D(_adaptive_avg_pool2d_backward, d_adaptive_avg_pool2d_backward),
    D_OUTS(adaptive_max_pool2d, d_adaptive_max_pool2d, 2u), D(_adaptive_avg_pool3d, d_adaptive_avg_pool3d),
    D(_adaptive_avg_pool3d_backward, d_adaptive_avg_pool3d_backward), D(embedding, d_embedding),
    D_OUTS(native_dropout, d_native_dropout, 2u),
    D_NO_GRAD_ARGS(nll_loss_forward, d_nll_loss, 4u, 2u), /* weight */
    D_NO_GRAD_ARGS(binary_cross_entropy, d_binary_cross_entropy, 4u, 0u), /* weight */
    D_NO_GRAD_ARGS(binary_cross_entropy_with_logits, d_binary_cross_entropy_with_logits, 0xcu, 0u), /* weights */
    D(scaled_dot_product_attention, d_attention),

    D(gather, d_gather), D_NO_SELF(scatter_add, d_scatter_add), D_NO_SELF(scatter_src, d_scatter),
    D_NO_SELF(scatter_value, d_scatter), D(index_select, d_index_select), D_NO_SELF(index_add, d_index_add),
    D(unfold, d_unfold), D(index_Tensor, d_index), D(index_put, d_index_put), D_NO_SELF(index_put_, d_index_put),
    NONDIFF(nonzero), NONDIFF(_unique2), NONDIFF(unique_consecutive), NONDIFF(unique_dim), NONDIFF(bincount),
    NONDIFF(histc), NONDIFF(randint_low), NONDIFF(randint), NONDIFF(randint_like), NONDIFF(randint_like_low_dtype),
    NONDIFF(randperm), NONDIFF(multinomial), NONDIFF(tril_indices), NONDIFF(triu_indices),
    D(masked_select, d_masked_select), D_NO_SELF(masked_scatter, d_masked_scatter),

    D_NO_SELF(addcmul, d_addcmul), D_NO_SELF(addcdiv, d_addcdiv), D_NO_SELF(lerp_Scalar, d_lerp),
    D_SELF_FOR_OTHERS(lerp_Tensor, d_lerp_tensor), D(copy, d_copy), D(zero, d_overwrite), D(fill_Scalar, d_overwrite), D(fill_Tensor, d_fill_tensor),
    D(slice_scatter, d_slice_scatter), D(select_scatter, d_select_scatter),

    /* in place, besides the forms of op_inplace_forms.def */
    D_NO_SELF(copy_, d_copy), D_NO_SELF(zero_, d_overwrite), D_NO_SELF(fill__Scalar, d_overwrite), D_NO_SELF(fill__Tensor, d_fill_tensor),
    /* in-place views: the view's formula over self's geometry before the
     * call (recording keeps an alias of it, autograd.c's check_inplace) */
    D_NO_SELF(unsqueeze_, d_unsqueeze), D_NO_SELF(squeeze__dim, d_squeeze_dim), D_NO_SELF(squeeze_, d_squeeze),
    D_NO_SELF(transpose_, d_transpose), D_NO_SELF(t_, d_t), D_NO_SELF(as_strided_, d_as_strided),

    /* session 17 (trirep) */
    D_NO_SELF(tril, d_tril), D_NO_SELF(triu, d_triu), D(repeat, d_repeat), D(roll, d_roll),

    /* resampling */
    D(upsample_nearest2d_vec, d_upsample_nearest2d), D(upsample_bilinear2d_vec, d_upsample_bilinear2d),
    D(upsample_nearest2d_backward_vec, d_upsample_nearest2d_backward),
    D(upsample_bilinear2d_backward_vec, d_upsample_bilinear2d_backward),
    D(upsample_bicubic2d_vec, d_upsample_bicubic2d), D(upsample_bicubic2d_backward_vec, d_upsample_bicubic2d_backward),
    D(upsample_nearest1d_vec, d_upsample_nearest1d), D(upsample_nearest1d_backward_vec, d_upsample_nearest1d_backward),
    D(upsample_linear1d_vec, d_upsample_linear1d), D(upsample_linear1d_backward_vec, d_upsample_linear1d_backward),
    D(upsample_nearest3d_vec, d_upsample_nearest3d), D(upsample_nearest3d_backward_vec, d_upsample_nearest3d_backward),
    D(upsample_trilinear3d_vec, d_upsample_trilinear3d),
    D(upsample_trilinear3d_backward_vec, d_upsample_trilinear3d_backward),
    D(pixel_shuffle, d_pixel_shuffle),
    D(pixel_unshuffle, d_pixel_unshuffle),

    /* session 24 (opsbatch2): padding */
    D_NO_SELF(reflection_pad1d, d_reflection_pad1d), D_NO_SELF(reflection_pad2d, d_reflection_pad2d),
    D_NO_SELF(replication_pad1d, d_replication_pad1d), D_NO_SELF(replication_pad2d, d_replication_pad2d),
    D(reflection_pad1d_backward, d_reflection_pad1d_backward),
    D(reflection_pad2d_backward, d_reflection_pad2d_backward),
    D(replication_pad1d_backward, d_replication_pad1d_backward),
    D(replication_pad2d_backward, d_replication_pad2d_backward),
    D(scatter_reduce_two, d_scatter_reduce), D_NO_SELF(index_copy, d_index_copy_fill),
    D_NO_SELF(index_fill_int_Scalar, d_index_copy_fill), D_NO_SELF(index_fill_int_Tensor, d_index_copy_fill),
    D(mv, d_mv), D(dot, d_dot), D_NO_SELF(addmv, d_addmv), D_NO_SELF(addr, d_addr), D(celu, d_celu), D_NO_SELF(celu_, d_celu_result),

    /* session 24 (views3) */
    D(diagonal, d_diagonal), D_NO_SELF(diagonal_backward, d_diagonal_backward),
    D_NO_SELF(select_backward, d_select_backward), D_NO_SELF(slice_backward, d_slice_backward),
    D(diagonal_scatter, d_diagonal_scatter), D(as_strided, d_as_strided), D(as_strided_scatter, d_as_strided_scatter),
    /* session 25 (diag) */
    D_NO_SELF(diag, d_diag), D_NO_SELF(diag_embed, d_diag_embed), D_NO_SELF(trace, d_trace),
    /* session 24 (opsbatch3) */
    D(prelu, d_prelu), D(prelu_backward, d_prelu_backward),
    /* session 24 (dbl): backward operators of activations (double backward) */
    D(threshold_backward, d_threshold_backward), D(leaky_relu_backward, d_leaky_relu_backward),
    D(hardtanh_backward, d_hardtanh_backward), D(hardsigmoid_backward, d_hardsigmoid_backward),
    D(hardswish_backward, d_hardswish_backward), D(tanh_backward, d_tanh_backward),
    D(sigmoid_backward, d_sigmoid_backward), D(softplus_backward, d_softplus_backward),
    D(gelu_backward, d_gelu_backward), D(elu_backward, d_elu_backward),
    D_NO_GRAD_ARGS(log_sigmoid_backward, d_log_sigmoid_backward, 4u, 0u), /* buffer */
    D(glu_backward, d_glu_backward),
    D(_softmax_backward_data, d_softmax_backward_data), D(_log_softmax_backward_data, d_log_softmax_backward_data),
    /* session 24 (dbl): backward operators of losses */
    D(smooth_l1_loss_backward, d_smooth_l1_loss_backward), D(huber_loss_backward, d_huber_loss_backward),
    D_NO_GRAD_ARGS(binary_cross_entropy_backward, d_binary_cross_entropy_backward, 8u, 0u), /* weight */
    D_NO_GRAD_ARGS(nll_loss_backward, d_nll_loss_backward, 0x48u, 0u), /* weight, total_weight */
    /* session 24 (dbl2): backward operators of normalisations, embedding, pooling */
    D(native_layer_norm_backward, d_native_layer_norm_backward),
    D_NO_GRAD_ARGS(native_batch_norm_backward, d_native_batch_norm_backward, 0x18u, 0u), /* running stats */
    D(native_group_norm_backward, d_native_group_norm_backward),
    D(convolution_backward, d_convolution_backward),
    D(embedding_dense_backward, d_embedding_dense_backward),
    D(max_pool2d_with_indices_backward, d_max_pool2d_with_indices_backward),
    D(max_pool3d_with_indices_backward, d_max_pool2d_with_indices_backward),
    D(adaptive_max_pool2d_backward, d_max_pool2d_with_indices_backward),
    D(avg_pool3d_backward, d_avg_pool3d_backward),
    /* session 56 (ops56); _cdist_backward has none (not_implemented in 1.13) */
    D_NO_SELF(im2col, d_im2col), D_NO_SELF(col2im, d_col2im), D(_cdist_forward, d_cdist_forward),
    D(_euclidean_dist, d_euclidean_dist),
    /* _embedding_bag: offset2bag, bag_size, max_indices have no gradient */
    D_OUTS(_embedding_bag, d_embedding_bag, 0xeu),
    NONDIFF(repeat_interleave_Tensor),
    /* LAPACK operators (autograd_lapack.c); linalg_lu_solve and linalg_lu_factor_ex have none (PyTorch's are
     * not written here) */
    D(linalg_solve_triangular, tj_grad_linalg_solve_triangular), D_OUTS(_linalg_solve_ex, tj_grad__linalg_solve_ex, 0xeu),
    D_OUTS(linalg_inv_ex, tj_grad_linalg_inv_ex, 2u), D_OUTS(_linalg_det, tj_grad__linalg_det, 6u),
    D_OUTS(_linalg_slogdet, tj_grad__linalg_slogdet, 0xcu),
    D_OUTS(linalg_cholesky_ex, tj_grad_linalg_cholesky_ex, 2u), D(cholesky_solve, tj_grad_cholesky_solve),
    D_OUTS(linalg_lu, tj_grad_linalg_lu, 1u), D(linalg_qr, tj_grad_linalg_qr), D(_linalg_eigh, tj_grad__linalg_eigh), D(_linalg_svd, tj_grad__linalg_svd),
    /* op_search_select.def */
    NONDIFF(searchsorted_Tensor), NONDIFF(searchsorted_Scalar), NONDIFF(bucketize_Tensor), NONDIFF(bucketize_Scalar),
    D(cummax, d_cummaxmin), D(cummin, d_cummaxmin), D(logcumsumexp, d_logcumsumexp),
    D(kthvalue, d_kthvalue), D(median_dim, d_median_dim), D(nanmedian_dim, d_median_dim), D(median, d_median),
    D(nanmedian, d_median), D(std_mean_correction, d_std_mean), NONDIFF(count_nonzero_dim_IntList),
    NONDIFF(count_nonzero), D(hardshrink, d_hardshrink), D(softshrink, d_softshrink),
    D(hardshrink_backward, d_shrink_backward), D(softshrink_backward, d_shrink_backward),
    /* op_special.def (autograd_special.c); heaviside has no gradient */
    D(lgamma, tj_grad_lgamma), D(digamma, tj_grad_digamma), D(polygamma, tj_grad_polygamma),
    D(erfinv, tj_grad_erfinv), D(erfc, tj_grad_erfc), D(i0, tj_grad_i0), D(special_i0e, tj_grad_special_i0e),
    D(special_i1, tj_grad_special_i1), D(special_i1e, tj_grad_special_i1e),
    D_NO_SELF(special_ndtri, tj_grad_special_ndtri), D(special_log_ndtr, tj_grad_special_log_ndtr), D(special_entr, tj_grad_special_entr), D(logit, tj_grad_logit),
    D(logit_backward, tj_grad_logit_backward), D(sinc, tj_grad_sinc), D(hypot, tj_grad_hypot),
    D(copysign_Tensor, tj_grad_copysign_Tensor), NONDIFF(heaviside), D(special_xlog1py, tj_grad_special_xlog1py),
    D(special_xlog1py_self_scalar, tj_grad_special_xlog1py_self_scalar),
    D_NO_SELF(special_xlog1py_other_scalar, tj_grad_special_xlog1py_other_scalar), D(copysign_Scalar, tj_grad_copysign_Scalar),
};

/* No gradient reaches any input: the in-place forms of non-differentiable
 * operators (eq_, logical_and_: self's new values do not depend on the old
 * ones differentiably, and its history must still be replaced). */
FORMULA(d_none)
{
    (void)c, (void)g, (void)gi;
    return TJ_OK;
}

/* The in-place forms of op_inplace_forms.def: their partner's entry, whose
 * self_read says when recording copies self's old value. Built once, before
 * the first lookup returns. */
static tj_derivative form_derivatives[TJ_OPI_COUNT];
static pthread_once_t forms_once = PTHREAD_ONCE_INIT;

static void init_form_derivatives(void)
{
    for (int i = 0; i < TJ_OPI_COUNT; i++) {
        const tj_op *f = tj_op_inplace_functional(&tj_builtin_ops[i]);
        if (!f) continue;
        /* a form's own entry (leaky_relu_ differentiates its result) first;
         * a partner without a formula (scatter.reduce) leaves the form
         * none: a NotImplemented node naming it, as PyTorch's */
        tj_derivative d = derivatives[i].fn ? derivatives[i] : derivatives[f->index];
        if (d.nondiff) d = (tj_derivative){.fn = d_none, .self_read = TJ_SELF_UNREAD};
        else if (!d.fn) d = (tj_derivative){.self_read = TJ_SELF_UNREAD};
        form_derivatives[i] = d;
    }
}

const tj_derivative *tj_derivative_of(const tj_op *op)
{
    static const tj_derivative none;
    if (op->derivative) return op->derivative; /* a user operator's (runtime/library.c) */
    int i = op->index;
    if (tj_op_inplace_functional(op)) {
        pthread_once(&forms_once, init_form_derivatives);
        return &form_derivatives[i];
    }
    return i >= 0 && i < TJ_OPI_COUNT && op == &tj_builtin_ops[i] ? &derivatives[i] : &none;
}
