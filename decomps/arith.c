/* Decompositions of the arithmetic operators that are not primitives: the
 * Scalar overloads become their Tensor overloads on a 0-dim tensor holding
 * the Scalar converted as the kernel converts it (so results are bit-equal),
 * sub is add with a negated alpha, neg a multiplication by -1, and the unary
 * operators follow their kernels' formulas (kernels/elementwise_simd.h):
 * reciprocal 1/x, rsqrt 1/sqrt(x), sigmoid 1/(1+exp(-x)), abs max(x, -x) + 0.
 * Each runs the operator's shape function first, so a traced call fails
 * exactly as the eager one does. */
#include "util.h"

/* The result dtype the shape function decides (after its checks). */
#define CHECKED_DTYPE(ident, args, dt) \
    TJ_DC_CHECK(ident, args, m_);      \
    tj_dtype dt = m_[0].dtype

/* neg(x) = x * -1 (exact for floats; wraps for int64 as the kernel does). */
static tj_status neg(const tj_value *args, tj_value *outs)
{
    CHECKED_DTYPE(neg, args, dt);
    return tj_dc_done(tj_mul(args[0].u.t, tj_dc_number(-1, dt)), outs);
}

/* abs(x) = maximum(x, -x), nan staying nan. maximum keeps one of two equal
 * zeros, so abs(-0) could stay -0 (and 1 / abs(-0) be -inf, as in a
 * negative-order vector norm): for floats, + 0 turns -0 into +0 and changes
 * nothing else. */
static tj_status abs_(const tj_value *args, tj_value *outs)
{
    CHECKED_DTYPE(abs, args, dt);
    tj_tensor *m = tj_maximum(args[0].u.t, tj_neg(args[0].u.t));
    return tj_dc_done(tj_dtype_is_float(dt) ? tj_add(m, tj_dc_number(0, dt)) : m, outs);
}

static tj_status reciprocal(const tj_value *args, tj_value *outs)
{
    CHECKED_DTYPE(reciprocal, args, dt);
    return tj_dc_done(tj_div(tj_dc_number(1, dt), args[0].u.t), outs);
}

static tj_status rsqrt(const tj_value *args, tj_value *outs)
{
    CHECKED_DTYPE(rsqrt, args, dt);
    return tj_dc_done(tj_div(tj_dc_number(1, dt), tj_sqrt(args[0].u.t)), outs);
}

static tj_status sigmoid(const tj_value *args, tj_value *outs)
{
    CHECKED_DTYPE(sigmoid, args, dt);
    tj_tensor *one = tj_dc_number(1, dt);
    return tj_dc_done(tj_div(one, tj_add(one, tj_exp(tj_neg(tj_dc_to(args[0].u.t, dt))))), outs);
}

/* -alpha, wrapping for int64 as the kernel's sub does. */
static tj_value negated(const tj_value *alpha)
{
    if (alpha->kind == TJ_V_FLOAT) return tj_v_float(-alpha->u.f);
    int64_t i = alpha->kind == TJ_V_BOOL ? alpha->u.b : alpha->u.i;
    return tj_v_int((int64_t)(0 - (uint64_t)i));
}

static tj_status add_scalar(const tj_value *args, tj_value *outs)
{
    CHECKED_DTYPE(add_Scalar, args, dt);
    return tj_dc_done(tj_add_alpha(args[0].u.t, tj_dc_scalar(&args[1], dt), args[2]), outs);
}

static tj_status sub_tensor(const tj_value *args, tj_value *outs)
{
    CHECKED_DTYPE(sub_Tensor, args, dt);
    (void)dt;
    return tj_dc_done(tj_add_alpha(args[0].u.t, args[1].u.t, negated(&args[2])), outs);
}

static tj_status sub_scalar(const tj_value *args, tj_value *outs)
{
    CHECKED_DTYPE(sub_Scalar, args, dt);
    return tj_dc_done(tj_add_alpha(args[0].u.t, tj_dc_scalar(&args[1], dt), negated(&args[2])), outs);
}

static tj_status mul_scalar(const tj_value *args, tj_value *outs)
{
    CHECKED_DTYPE(mul_Scalar, args, dt);
    return tj_dc_done(tj_mul(args[0].u.t, tj_dc_scalar(&args[1], dt)), outs);
}

static tj_status div_scalar(const tj_value *args, tj_value *outs)
{
    CHECKED_DTYPE(div_Scalar, args, dt);
    return tj_dc_done(tj_div(args[0].u.t, tj_dc_scalar(&args[1], dt)), outs);
}

static tj_status div_scalar_mode(const tj_value *args, tj_value *outs)
{
    CHECKED_DTYPE(div_Scalar_mode, args, dt);
    const char *mode = args[2].kind == TJ_V_STR ? args[2].u.s : NULL;
    return tj_dc_done(tj_div_mode(args[0].u.t, tj_dc_scalar(&args[1], dt), mode), outs);
}

/* pow(x, e) with the kernel's shortcuts for e in {0, 1, 2, 3, 0.5, -0.5, -1,
 * -2} (x*x and friends instead of pow), else pow.Tensor_Tensor. */
static tj_status pow_scalar(const tj_value *args, tj_value *outs)
{
    CHECKED_DTYPE(pow_Tensor_Scalar, args, dt);
    tj_tensor *x = tj_dc_to(args[0].u.t, dt);
    tj_value ev = tj_dc_convert(&args[1], dt);
    double e = tj_value_as_double(&ev);
    if (!tj_dtype_is_float(dt)) return tj_dc_done(tj_pow(x, tj_dc_scalar(&args[1], dt)), outs);
    tj_tensor *one = tj_dc_number(1, dt), *r;
    if (e == 0) r = tj_full(tj_tensor_shape(x), tj_tensor_ndim(x), tj_v_int(1), (int)dt);
    else if (e == 1) r = tj_to_copy(x, (int)dt);
    else if (e == 2) r = tj_mul(x, x);
    else if (e == 3) r = tj_mul(tj_mul(x, x), x);
    else if (e == 0.5) r = tj_sqrt(x);
    else if (e == -0.5) r = tj_div(one, tj_sqrt(x));
    else if (e == -1) r = tj_div(one, x);
    else if (e == -2) r = tj_div(one, tj_mul(x, x));
    else r = tj_pow(x, tj_dc_scalar(&args[1], dt));
    return tj_dc_done(r, outs);
}

/* sign(x) = where(x > 0, 1, where(x < 0, -1, 0)): nan and -0 give +0, as
 * the kernel; bool is the identity. */
static tj_status sign(const tj_value *args, tj_value *outs)
{
    CHECKED_DTYPE(sign, args, dt);
    tj_tensor *x = args[0].u.t;
    if (dt == TJ_BOOL) return tj_dc_done(tj_to_copy(x, (int)dt), outs);
    tj_value zero = tj_v_int(0);
    tj_tensor *neg_part = tj_where(tj_lt_scalar(x, zero), tj_dc_number(-1, dt), tj_dc_number(0, dt));
    return tj_dc_done(tj_where(tj_gt_scalar(x, zero), tj_dc_number(1, dt), neg_part), outs);
}

/* torch._refs.sgn: sign for the real dtypes (x / |x| only for complex). */
static tj_status sgn(const tj_value *args, tj_value *outs)
{
    CHECKED_DTYPE(sgn, args, dt);
    (void)dt;
    return tj_dc_done(tj_sign(args[0].u.t), outs);
}

/* square (implicit, as in ATen 1.13): pow(self, 2), so a graph records
 * pow.Tensor_Scalar and its gradient pow_backward's; bool becomes int64 as
 * result_type(bool tensor, 2) does. */
static tj_status square(const tj_value *args, tj_value *outs)
{
    return tj_dc_done(tj_pow_scalar(args[0].u.t, tj_v_int(2)), outs);
}

/* torch._refs.rsub: sub(other, self, alpha), a Scalar other boxed in the
 * result dtype (0-dim: self's shape and the result dtype win). */
static tj_status rsub_tensor(const tj_value *args, tj_value *outs)
{
    CHECKED_DTYPE(rsub_Tensor, args, dt);
    (void)dt;
    return tj_dc_done(tj_add_alpha(args[1].u.t, args[0].u.t, negated(&args[2])), outs);
}

static tj_status rsub_scalar(const tj_value *args, tj_value *outs)
{
    CHECKED_DTYPE(rsub_Scalar, args, dt);
    return tj_dc_done(tj_add_alpha(tj_dc_scalar(&args[1], dt), args[0].u.t, negated(&args[2])), outs);
}

void tj_register_arith_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(neg), neg, "neg");
    tj_op_set_decomposition(TJ_OPS(abs), abs_, "abs");
    tj_op_set_decomposition(TJ_OPS(reciprocal), reciprocal, "reciprocal");
    tj_op_set_decomposition(TJ_OPS(rsqrt), rsqrt, "rsqrt");
    tj_op_set_decomposition(TJ_OPS(sigmoid), sigmoid, "sigmoid");
    tj_op_set_decomposition(TJ_OPS(add_Scalar), add_scalar, "add_scalar");
    tj_op_set_decomposition(TJ_OPS(sub_Tensor), sub_tensor, "sub_tensor");
    tj_op_set_decomposition(TJ_OPS(sub_Scalar), sub_scalar, "sub_scalar");
    tj_op_set_decomposition(TJ_OPS(mul_Scalar), mul_scalar, "mul_scalar");
    tj_op_set_decomposition(TJ_OPS(div_Scalar), div_scalar, "div_scalar");
    tj_op_set_decomposition(TJ_OPS(div_Scalar_mode), div_scalar_mode, "div_scalar_mode");
    tj_op_set_decomposition(TJ_OPS(pow_Tensor_Scalar), pow_scalar, "pow_scalar");
    tj_op_set_decomposition(TJ_OPS(sign), sign, "sign");
    tj_op_set_decomposition(TJ_OPS(sgn), sgn, "sgn");
    tj_op_set_decomposition(TJ_OPS(square), square, "square");
    tj_op_set_decomposition(TJ_OPS(rsub_Tensor), rsub_tensor, "rsub_tensor");
    tj_op_set_decomposition(TJ_OPS(rsub_Scalar), rsub_scalar, "rsub_scalar");
}
