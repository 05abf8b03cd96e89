/* Decompositions of the overloads of runtime/op_elementwise_overloads.c:
 * clamp_min.Tensor / clamp_max.Tensor as clamp.Tensor with one bound (as
 * torch._refs), remainder.Scalar_Tensor as remainder.Tensor of the Scalar
 * boxed in the result dtype, round.decimals as ATen's round_decimals_kernel
 * (round(x * 10^d) / 10^d; round(x / 10^-d) * 10^-d for negative d);
 * the Scalar overloads of runtime/op_scalar_overloads.c as their Tensor
 * overload of the Scalar boxed in the result dtype, and special_xlogy (all
 * three, CompositeImplicitAutograd in ATen) as xlogy's. */
#include "util.h"

static tj_status clamp_min_tensor(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(clamp_min_Tensor, args, m);
    return tj_dc_done(tj_clamp_tensor(args[0].u.t, args[1].u.t, NULL), outs);
}

static tj_status clamp_max_tensor(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(clamp_max_Tensor, args, m);
    return tj_dc_done(tj_clamp_tensor(args[0].u.t, NULL, args[1].u.t), outs);
}

static tj_status remainder_scalar_tensor(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(remainder_Scalar_Tensor, args, m);
    return tj_dc_done(tj_remainder(tj_dc_scalar(&args[0], m[0].dtype), args[1].u.t), outs);
}

static tj_status round_decimals(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(round_decimals, args, m);
    tj_tensor *x = args[0].u.t;
    int64_t d = args[1].u.i;
    if (d == 0) return tj_dc_done(tj_round(x), outs);
    tj_value scale = tj_v_float(pow(10.0, (double)(d < 0 ? -d : d)));
    if (d > 0) return tj_dc_done(tj_div_scalar(tj_round(tj_mul_scalar(x, scale)), scale), outs);
    return tj_dc_done(tj_mul_scalar(tj_round(tj_div_scalar(x, scale)), scale), outs);
}

/* the Tensor overload `fn` of args with the Scalar at `at` boxed in the
 * result dtype (whose values the Tensor overload computes in) */
static tj_status scalar_overload(const tj_value *args, tj_value *outs, tj_dtype dt, int at,
                                 tj_tensor *(*fn)(tj_tensor *, tj_tensor *))
{
    tj_tensor *t[2];
    for (int i = 0; i < 2; i++) t[i] = i == at ? tj_dc_scalar(&args[i], dt) : args[i].u.t;
    return tj_dc_done(fn(t[0], t[1]), outs);
}

#define SCALAR_OVERLOAD_DECOMP(ident, at, fn)                     \
    static tj_status decomp_##ident(const tj_value *args, tj_value *outs) \
    {                                                             \
        TJ_DC_CHECK(ident, args, m);                              \
        return scalar_overload(args, outs, m[0].dtype, at, fn);   \
    }
SCALAR_OVERLOAD_DECOMP(copysign_Scalar, 1, tj_copysign)
SCALAR_OVERLOAD_DECOMP(special_xlog1py_self_scalar, 0, tj_special_xlog1py)
SCALAR_OVERLOAD_DECOMP(special_xlog1py_other_scalar, 1, tj_special_xlog1py)
SCALAR_OVERLOAD_DECOMP(xlogy_Scalar_Self, 0, tj_xlogy)
SCALAR_OVERLOAD_DECOMP(xlogy_Scalar_Other, 1, tj_xlogy)
#undef SCALAR_OVERLOAD_DECOMP

static tj_status special_xlogy(const tj_value *args, tj_value *outs)
{
    return tj_dc_done(tj_xlogy(args[0].u.t, args[1].u.t), outs);
}
static tj_status special_xlogy_self_scalar(const tj_value *args, tj_value *outs)
{
    return tj_dc_done(tj_xlogy_scalar_self(args[0], args[1].u.t), outs);
}
static tj_status special_xlogy_other_scalar(const tj_value *args, tj_value *outs)
{
    return tj_dc_done(tj_xlogy_scalar_other(args[0].u.t, args[1]), outs);
}

void tj_register_overload_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(copysign_Scalar), decomp_copysign_Scalar, "copysign_scalar");
    tj_op_set_decomposition(TJ_OPS(special_xlog1py_self_scalar), decomp_special_xlog1py_self_scalar,
                            "special_xlog1py_self_scalar");
    tj_op_set_decomposition(TJ_OPS(special_xlog1py_other_scalar), decomp_special_xlog1py_other_scalar,
                            "special_xlog1py_other_scalar");
    tj_op_set_decomposition(TJ_OPS(xlogy_Scalar_Self), decomp_xlogy_Scalar_Self, "xlogy_scalar_self");
    tj_op_set_decomposition(TJ_OPS(xlogy_Scalar_Other), decomp_xlogy_Scalar_Other, "xlogy_scalar_other");
    tj_op_set_decomposition(TJ_OPS(special_xlogy), special_xlogy, "special_xlogy");
    tj_op_set_decomposition(TJ_OPS(special_xlogy_self_scalar), special_xlogy_self_scalar, "special_xlogy_self_scalar");
    tj_op_set_decomposition(TJ_OPS(special_xlogy_other_scalar), special_xlogy_other_scalar,
                            "special_xlogy_other_scalar");
    tj_op_set_decomposition(TJ_OPS(clamp_min_Tensor), clamp_min_tensor, "clamp_min_tensor");
    tj_op_set_decomposition(TJ_OPS(clamp_max_Tensor), clamp_max_tensor, "clamp_max_tensor");
    tj_op_set_decomposition(TJ_OPS(remainder_Scalar_Tensor), remainder_scalar_tensor, "remainder_scalar_tensor");
    tj_op_set_decomposition(TJ_OPS(round_decimals), round_decimals, "round_decimals");
}
