/* Decompositions of the composite rounding, modulo and float-classification
 * operators (trunc, floor, ceil, frac, remainder, fmod.Scalar, isnan, isinf,
 * isfinite, nan_to_num, clamp_min, clamp_max) and of exp2, written as ATen's kernels
 * compute them, so that results are bit-equal (exp2 = pow(2, x) within
 * SLEEF's 1 ULP). Each runs the operator's shape function first, so a
 * traced call fails exactly as the eager one does. */
#include <stdio.h>

#include "util.h"

/* x / 1 rounded toward zero: trunc(x) exactly (the quotient is x). */
static tj_tensor *trunc_of(tj_tensor *x, tj_dtype dt) { return tj_div_mode(x, tj_dc_number(1, dt), "trunc"); }

/* trunc, floor and ceil copy int64; a float t = trunc(x) steps down (floor)
 * or up (ceil) by one where x lies below or above it. t +- 1 is exact: x is
 * not integral there, so |t| < 2^23 (float32). Signed zeros, infinities and
 * nan come through trunc unchanged, as from the kernels. */
static tj_status rounded(const tj_value *args, const tj_meta *m, int step, tj_value *outs)
{
    tj_tensor *x = args[0].u.t;
    if (!tj_dtype_is_float(m[0].dtype)) return tj_dc_done(tj_clone(x), outs);
    tj_tensor *t = trunc_of(x, m[0].dtype);
    if (step == 0) return tj_dc_done(t, outs);
    tj_tensor *beyond = step > 0 ? tj_gt(x, t) : tj_lt(x, t);
    return tj_dc_done(tj_where(beyond, tj_add_scalar(t, tj_v_int(step)), t), outs);
}

static tj_status trunc_(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(trunc, args, m);
    return rounded(args, m, 0, outs);
}

static tj_status floor_(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(floor, args, m);
    return rounded(args, m, -1, outs);
}

static tj_status ceil_(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(ceil, args, m);
    return rounded(args, m, 1, outs);
}

/* ATen's remainder kernel: r = fmod(a, b), plus b where r is nonzero and
 * its sign differs from b's, written with primitives only: r where r < 0
 * and b < 0 agree, else r where r == 0, else r + b (nan, != 0, takes the
 * last branch as in ATen: nan + b is nan). An int64 zero divisor fails in
 * fmod, reported as remainder's error. */
static tj_status remainder_(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(remainder_Tensor, args, m);
    tj_tensor *b = args[1].u.t, *r = tj_fmod(args[0].u.t, b), *zero = tj_dc_number(0, m[0].dtype);
    if (!r) {
        char why[256];
        snprintf(why, sizeof why, "%s", tj_last_error());
        return tj_error(tj_last_status(), "aten::remainder.Tensor: %s", why);
    }
    tj_tensor *same_sign = tj_eq(tj_lt(r, zero), tj_lt(b, zero));
    return tj_dc_done(tj_where(same_sign, r, tj_where(tj_eq(r, zero), r, tj_add(r, b))), outs);
}

/* ATen's frac kernel: self - trunc(self) (float only). */
static tj_status frac(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(frac, args, m);
    tj_tensor *x = args[0].u.t;
    return tj_dc_done(tj_sub(x, tj_trunc(x)), outs);
}

/* The Scalar overloads: the Tensor overload on a 0-dim tensor holding the
 * Scalar converted to the result dtype, as the kernel boxes it. */
static tj_status remainder_scalar(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(remainder_Scalar, args, m);
    return tj_dc_done(tj_remainder(args[0].u.t, tj_dc_scalar(&args[1], m[0].dtype)), outs);
}

static tj_status fmod_scalar(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(fmod_Scalar, args, m);
    return tj_dc_done(tj_fmod(args[0].u.t, tj_dc_scalar(&args[1], m[0].dtype)), outs);
}

/* torch._refs: isnan(a) = a != a (false for integers). */
static tj_status isnan_(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(isnan, args, m);
    return tj_dc_done(tj_ne(args[0].u.t, args[0].u.t), outs);
}

/* ATen: abs(a) == inf; integers are never infinite (a != a is false for
 * them, and abs refuses bool). */
static tj_status isinf_(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(isinf, args, m);
    tj_tensor *x = args[0].u.t;
    if (!tj_dtype_is_float(tj_tensor_dtype(x))) return tj_dc_done(tj_ne(x, x), outs);
    return tj_dc_done(tj_eq_scalar(tj_abs(x), tj_v_float(INFINITY)), outs);
}

/* ATen's isfinite (implicit): (a == a) * (abs(a) != inf); integers a == a. */
static tj_status isfinite_(const tj_value *args, tj_value *outs)
{
    tj_tensor *x = args[0].u.t;
    if (!tj_dtype_is_float(tj_tensor_dtype(x))) return tj_dc_done(tj_eq(x, x), outs);
    return tj_dc_done(tj_mul(tj_eq(x, x), tj_ne_scalar(tj_abs(x), tj_v_float(INFINITY))), outs);
}

/* The replacement for one argument of nan_to_num (None: `dflt`), converted
 * to dt as the kernel converts it. */
static tj_tensor *replacement(const tj_value *v, double dflt, tj_dtype dt)
{
    return v->kind == TJ_V_NONE ? tj_dc_number(dflt, dt) : tj_dc_scalar(v, dt);
}

/* torch._refs: where(isnan(a), nan, where(a == inf, posinf, where(a == -inf,
 * neginf, a))); integers are copied. */
static tj_status nan_to_num(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(nan_to_num, args, m);
    tj_dtype dt = m[0].dtype;
    tj_tensor *x = args[0].u.t;
    if (!tj_dtype_is_float(dt)) return tj_dc_done(tj_clone(x), outs);
    double big = dt == TJ_FLOAT32 ? FLT_MAX : DBL_MAX;
    tj_tensor *r = tj_where(tj_eq_scalar(x, tj_v_float(-INFINITY)), replacement(&args[3], -big, dt), x);
    r = tj_where(tj_eq_scalar(x, tj_v_float(INFINITY)), replacement(&args[2], big, dt), r);
    return tj_dc_done(tj_where(tj_ne(x, x), replacement(&args[1], 0, dt), r), outs);
}

/* clamp with the one bound, or with a nan bound on both sides: clamp_min_out
 * and clamp_max_out fill nan for a nan bound, as clamp does with two. */
static tj_tensor *one_sided_clamp(const tj_value *args, bool is_min)
{
    tj_value b = args[1];
    bool nan_bound = b.kind == TJ_V_FLOAT && isnan(b.u.f);
    return tj_clamp(args[0].u.t, is_min || nan_bound ? b : tj_v_none(), !is_min || nan_bound ? b : tj_v_none());
}

static tj_status clamp_min(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(clamp_min, args, m);
    return tj_dc_done(one_sided_clamp(args, true), outs);
}

static tj_status clamp_max(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(clamp_max, args, m);
    return tj_dc_done(one_sided_clamp(args, false), outs);
}

/* torch._refs: floor_divide(a, b) = div(a, b, rounding_mode="floor") */
static tj_status floor_divide(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(floor_divide, args, m);
    return tj_dc_done(tj_div_mode(args[0].u.t, args[1].u.t, "floor"), outs);
}

static tj_status floor_divide_scalar(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(floor_divide_Scalar, args, m);
    return tj_dc_done(tj_div_scalar_mode(args[0].u.t, args[1], "floor"), outs);
}

/* ATen's xlogy kernel, in the result dtype: where(other is nan, nan,
 * where(self == 0, 0, self * log(other))). torch._decomp's tests isnan(self)
 * instead and so gives 0 for xlogy(0, nan), where the kernel gives nan. */
static tj_status xlogy(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(xlogy_Tensor, args, m);
    tj_dtype dt = m[0].dtype;
    tj_tensor *x = tj_dc_to(args[0].u.t, dt), *y = tj_dc_to(args[1].u.t, dt), *zero = tj_dc_number(0, dt);
    tj_tensor *r = tj_where(tj_eq(x, zero), zero, tj_mul(x, tj_log(y)));
    return tj_dc_done(tj_where(tj_ne(y, y), tj_dc_number(NAN, dt), r), outs);
}

/* torch._refs: exp2(a) = pow(2, a), in the result dtype */
static tj_status exp2_(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(exp2, args, m);
    tj_dtype dt = m[0].dtype;
    return tj_dc_done(tj_pow(tj_dc_number(2, dt), tj_dc_to(args[0].u.t, dt)), outs);
}

void tj_register_math_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(trunc), trunc_, "trunc");
    tj_op_set_decomposition(TJ_OPS(floor), floor_, "floor");
    tj_op_set_decomposition(TJ_OPS(ceil), ceil_, "ceil");
    tj_op_set_decomposition(TJ_OPS(remainder_Tensor), remainder_, "remainder");
    tj_op_set_decomposition(TJ_OPS(frac), frac, "frac");
    tj_op_set_decomposition(TJ_OPS(remainder_Scalar), remainder_scalar, "remainder_scalar");
    tj_op_set_decomposition(TJ_OPS(fmod_Scalar), fmod_scalar, "fmod_scalar");
    tj_op_set_decomposition(TJ_OPS(isnan), isnan_, "isnan");
    tj_op_set_decomposition(TJ_OPS(isinf), isinf_, "isinf");
    tj_op_set_decomposition(TJ_OPS(isfinite), isfinite_, "isfinite");
    tj_op_set_decomposition(TJ_OPS(nan_to_num), nan_to_num, "nan_to_num");
    tj_op_set_decomposition(TJ_OPS(clamp_min), clamp_min, "clamp_min");
    tj_op_set_decomposition(TJ_OPS(clamp_max), clamp_max, "clamp_max");
    tj_op_set_decomposition(TJ_OPS(exp2), exp2_, "exp2");
    tj_op_set_decomposition(TJ_OPS(floor_divide), floor_divide, "floor_divide");
    tj_op_set_decomposition(TJ_OPS(floor_divide_Scalar), floor_divide_scalar, "floor_divide_scalar");
    tj_op_set_decomposition(TJ_OPS(xlogy_Tensor), xlogy, "xlogy");
}
