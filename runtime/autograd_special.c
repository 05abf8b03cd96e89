/* Derivative formulas of the special functions (op_special.def), after
 * PyTorch 1.13's derivatives.yaml and FunctionsManual.cpp, through the
 * public operator API so that a backward pass traced by make_fx records
 * torch's operators. Slots and conventions as autograd_formulas.c's. */
#include <float.h>
#include <math.h>

#include "op_special.h"

#define ARG(i) tj_grad_arg(c, i)
#define OUT(i) tj_grad_result(c, i)
#define META(i) (c->args[i].u.t)
#define NEED(k) (c->needed[k])

static tj_tensor *number(double v, const tj_tensor *like) { return tj_scalar_tensor(tj_v_float(v), like->dtype); }

/* grad * digamma(self) */
tj_status tj_grad_lgamma(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi)
{
    gi[0] = tj_mul(g[0], tj_digamma(ARG(0)));
    return TJ_OK;
}

/* grad * polygamma(1, self) */
tj_status tj_grad_digamma(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi)
{
    gi[0] = tj_mul(g[0], tj_polygamma(1, ARG(0)));
    return TJ_OK;
}

/* grad * polygamma(n + 1, self); n is argument 0, self slot 0 */
tj_status tj_grad_polygamma(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi)
{
    gi[0] = tj_mul(g[0], tj_polygamma(c->args[0].u.i + 1, ARG(1)));
    return TJ_OK;
}

/* 0.5 * sqrt(M_PI) * exp(self.erfinv().pow(2)) * grad */
tj_status tj_grad_erfinv(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi)
{
    tj_tensor *e = tj_exp(tj_pow_scalar(tj_erfinv(ARG(0)), tj_v_int(2)));
    gi[0] = tj_mul(tj_mul_scalar(e, tj_v_float(0.5 * sqrt(M_PI))), g[0]);
    return TJ_OK;
}

/* -2.0 / sqrt(M_PI) * exp(-(self.pow(2))) * grad */
tj_status tj_grad_erfc(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi)
{
    tj_tensor *e = tj_exp(tj_neg(tj_pow_scalar(ARG(0), tj_v_int(2))));
    gi[0] = tj_mul(tj_mul_scalar(e, tj_v_float(-2.0 / sqrt(M_PI))), g[0]);
    return TJ_OK;
}

/* grad * special_i1(self) */
tj_status tj_grad_i0(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi)
{
    gi[0] = tj_mul(g[0], tj_special_i1(ARG(0)));
    return TJ_OK;
}

/* grad * (special_i1e(self) - self.sgn() * result) */
tj_status tj_grad_special_i0e(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi)
{
    tj_tensor *x = ARG(0);
    gi[0] = tj_mul(g[0], tj_sub(tj_special_i1e(x), tj_mul(tj_sgn(x), OUT(0))));
    return TJ_OK;
}

/* i1_backward / i1e_backward: with x replaced by eps where |x| <= eps
 * (the formula is 0 / 0 at x = 0, where the derivative is 1/2),
 * grad * where(|x| > eps, i0(x) - result / x, 0.5), for i1e
 * i0e(x) - result * (sgn(x) + 1 / x) */
static tj_status i1_grad(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi, bool scaled)
{
    tj_tensor *x = ARG(0), *r = OUT(0);
    double eps = x->dtype == TJ_FLOAT32 ? FLT_EPSILON : DBL_EPSILON;
    tj_tensor *not_tiny = tj_gt(tj_abs(x), number(eps, x));
    tj_tensor *safe = tj_where(not_tiny, x, number(eps, x));
    tj_tensor *gx = scaled ? tj_sub(tj_special_i0e(safe), tj_mul(r, tj_add(tj_sgn(safe), tj_reciprocal(safe))))
                           : tj_sub(tj_i0(safe), tj_mul(r, tj_reciprocal(safe)));
    gi[0] = tj_mul(g[0], tj_where(not_tiny, gx, number(0.5, x)));
    return TJ_OK;
}
tj_status tj_grad_special_i1(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi) { return i1_grad(c, g, gi, false); }
tj_status tj_grad_special_i1e(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi) { return i1_grad(c, g, gi, true); }

/* grad * std::sqrt(2 * M_PI) * (result.square() / 2).exp() */
tj_status tj_grad_special_ndtri(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi)
{
    tj_tensor *e = tj_exp(tj_div_scalar(tj_pow_scalar(OUT(0), tj_v_int(2)), tj_v_int(2)));
    gi[0] = tj_mul(tj_mul_scalar(g[0], tj_v_float(sqrt(2 * M_PI))), e);
    return TJ_OK;
}

/* grad / std::sqrt(2 * M_PI) * (result + self.pow(2) / 2).neg().exp() */
tj_status tj_grad_special_log_ndtr(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi)
{
    tj_tensor *half_square = tj_div_scalar(tj_pow_scalar(ARG(0), tj_v_int(2)), tj_v_int(2));
    tj_tensor *e = tj_exp(tj_neg(tj_add(OUT(0), half_square)));
    gi[0] = tj_mul(tj_div_scalar(g[0], tj_v_float(sqrt(2 * M_PI))), e);
    return TJ_OK;
}

/* grad * (-(1 + self.log())) */
tj_status tj_grad_special_entr(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi)
{
    gi[0] = tj_mul(g[0], tj_neg(tj_add_scalar(tj_log(ARG(0)), tj_v_int(1))));
    return TJ_OK;
}

/* logit_backward(grad, self, eps): derivatives.yaml's form without grad
 * mode (a backward pass traced by make_fx records it) */
tj_status tj_grad_logit(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi)
{
    gi[0] = tj_logit_backward(g[0], ARG(0), c->args[1]);
    return TJ_OK;
}

/* grad_output: logit_backward(grad, self, eps); self: grad * grad_output *
 * (2 self - 1) / (self (1 - self))^2, the derivative of dy / (self (1 -
 * self)), 0 where eps clamps self */
tj_status tj_grad_logit_backward(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi)
{
    tj_tensor *x = ARG(1);
    if (NEED(0)) gi[0] = tj_logit_backward(g[0], x, c->args[2]);
    if (NEED(1)) {
        tj_tensor *v = tj_mul(x, tj_rsub_scalar(x, tj_v_int(1), tj_v_int(1)));
        tj_tensor *d = tj_div(tj_sub_scalar(tj_mul_scalar(x, tj_v_int(2)), tj_v_int(1)), tj_mul(v, v));
        tj_tensor *r = tj_mul(tj_mul(g[0], ARG(0)), d);
        if (c->args[2].kind != TJ_V_NONE) {
            double eps = c->args[2].u.f;
            tj_tensor *inside = tj_logical_and(tj_ge_scalar(x, tj_v_float(eps)), tj_le_scalar(x, tj_v_float(1 - eps)));
            r = tj_where(inside, r, number(0, x));
        }
        gi[1] = r;
    }
    return TJ_OK;
}

/* sinc_backward: grad * ((pi x cos(pi x) - sin(pi x)) / (pi x x)), 0 at 0 */
tj_status tj_grad_sinc(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi)
{
    tj_tensor *x = ARG(0), *px = tj_mul_scalar(x, tj_v_float(M_PI));
    tj_tensor *num = tj_sub(tj_mul(px, tj_cos(px)), tj_sin(px));
    tj_tensor *d = tj_div(num, tj_mul(px, x));
    gi[0] = tj_mul(tj_masked_fill(d, tj_eq_scalar(x, tj_v_int(0)), tj_v_int(0)), g[0]);
    return TJ_OK;
}

/* self: grad * self / result; other: grad * other / result */
tj_status tj_grad_hypot(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi)
{
    tj_tensor *r = OUT(0);
    if (NEED(0)) gi[0] = tj_div(tj_mul(g[0], ARG(0)), r);
    if (NEED(1)) gi[1] = tj_div(tj_mul(g[0], ARG(1)), r);
    return TJ_OK;
}

/* copysign_tensor_self_backward: grad * (result / self), 0 where self is
 * 0; other: zeros */
static tj_tensor *copysign_self_grad(const tj_grad_ctx *c, tj_tensor *g)
{
    tj_tensor *x = ARG(0);
    return tj_mul(g, tj_masked_fill(tj_div(OUT(0), x), tj_eq_scalar(x, tj_v_int(0)), tj_v_int(0)));
}

tj_status tj_grad_copysign_Tensor(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi)
{
    if (NEED(0)) gi[0] = copysign_self_grad(c, g[0]);
    if (NEED(1)) gi[1] = tj_zeros(META(1)->shape, META(1)->ndim, META(1)->dtype);
    return TJ_OK;
}

/* copysign.Scalar: self's as copysign.Tensor's */
tj_status tj_grad_copysign_Scalar(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi)
{
    gi[0] = copysign_self_grad(c, g[0]);
    return TJ_OK;
}

/* self: xlog1py(grad, other), 0 where self == 0 and other <= -1;
 * other: grad * self / (other + 1) */
tj_status tj_grad_special_xlog1py(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi)
{
    if (NEED(0)) {
        tj_tensor *y = ARG(1), *pole = tj_logical_and(tj_eq_scalar(ARG(0), tj_v_int(0)), tj_le_scalar(y, tj_v_int(-1)));
        gi[0] = tj_masked_fill(tj_special_xlog1py(g[0], y), pole, tj_v_int(0));
    }
    if (NEED(1)) gi[1] = tj_div(tj_mul(g[0], ARG(0)), tj_add_scalar(ARG(1), tj_v_int(1)));
    return TJ_OK;
}

/* special_xlog1py.self_scalar: other grad * self / (other + 1) (slot 0) */
tj_status tj_grad_special_xlog1py_self_scalar(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi)
{
    gi[0] = tj_div(tj_mul_scalar(g[0], c->args[0]), tj_add_scalar(ARG(1), tj_v_int(1)));
    return TJ_OK;
}

/* special_xlog1py.other_scalar: self xlog1py(grad, other), and where
 * other <= -1 0 at self == 0 */
tj_status tj_grad_special_xlog1py_other_scalar(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi)
{
    tj_value y = c->args[1];
    tj_tensor *d = tj_special_xlog1py_other_scalar(g[0], y);
    gi[0] = tj_value_as_double(&y) > -1 ? d : tj_masked_fill(d, tj_eq_scalar(ARG(0), tj_v_int(0)), tj_v_int(0));
    return TJ_OK;
}
