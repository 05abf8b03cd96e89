/* Decompositions of the overloads of runtime/op_elementwise_overloads.c:
 * clamp_min.Tensor / clamp_max.Tensor as clamp.Tensor with one bound (as
 * torch._refs), remainder.Scalar_Tensor as remainder.Tensor of the Scalar
 * boxed in the result dtype, round.decimals as ATen's round_decimals_kernel
 * (round(x * 10^d) / 10^d; round(x / 10^-d) * 10^-d for negative d). */
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

void tj_register_overload_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(clamp_min_Tensor), clamp_min_tensor, "clamp_min_tensor");
    tj_op_set_decomposition(TJ_OPS(clamp_max_Tensor), clamp_max_tensor, "clamp_max_tensor");
    tj_op_set_decomposition(TJ_OPS(remainder_Scalar_Tensor), remainder_scalar_tensor, "remainder_scalar_tensor");
    tj_op_set_decomposition(TJ_OPS(round_decimals), round_decimals, "round_decimals");
}
