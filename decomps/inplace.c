/* Decompositions of the optimisers' fused pointwise operators, as
 * torch._refs writes them (self + value * tensor1 * tensor2, ...). Their
 * in-place forms (addcmul_, ...) are lines of op_inplace_forms.def, with
 * the generic decomposition (decomps/inplace_ops.c). */
#include "util.h"

/* torch._refs' type promotion wrapper converts the three tensors to the
 * result dtype first, as the kernel computes: a float32 tensor1 times an
 * int64 tensor2 for a float64 self is a float64 product, not a float32 one. */
static tj_tensor *addcmul(const tj_value *a, tj_dtype dt)
{
    tj_tensor *self = tj_dc_to(a[0].u.t, dt), *t1 = tj_dc_to(a[1].u.t, dt), *t2 = tj_dc_to(a[2].u.t, dt);
    return tj_add(self, tj_mul(tj_mul_scalar(t1, a[3]), t2));
}

static tj_tensor *addcdiv(const tj_value *a, tj_dtype dt)
{
    tj_tensor *self = tj_dc_to(a[0].u.t, dt), *t1 = tj_dc_to(a[1].u.t, dt), *t2 = tj_dc_to(a[2].u.t, dt);
    return tj_add(self, tj_div(tj_mul_scalar(t1, a[3]), t2));
}

/* ATen's two-sided lerp, the branch chosen by the Scalar weight. */
static tj_tensor *lerp(const tj_value *a)
{
    tj_tensor *self = a[0].u.t, *end = a[1].u.t;
    double w = tj_value_as_double(&a[2]);
    tj_tensor *diff = tj_sub(end, self);
    if (w < 0.5 && w > -0.5) return tj_add(self, tj_mul_scalar(diff, a[2]));
    return tj_sub(end, tj_mul_scalar(diff, tj_v_float(1.0 - w)));
}

/* With a tensor weight, torch._refs' form of the same two branches: where
 * |weight| >= 0.5, (weight - 1) * (end - self) + end, else weight * (end -
 * self) + self; each rounds as the kernel's branch does (w - 1 is -(1 - w)
 * exactly), so the values are the kernel's bit for bit. */
static tj_tensor *lerp_tensor(const tj_value *a)
{
    tj_tensor *self = a[0].u.t, *end = a[1].u.t, *w = a[2].u.t;
    tj_tensor *large = tj_ge_scalar(tj_abs(w), tj_v_float(0.5));
    tj_tensor *coeff = tj_where(large, tj_sub_scalar(w, tj_v_int(1)), w);
    return tj_add(tj_mul(coeff, tj_sub(end, self)), tj_where(large, end, self));
}

/* Each runs its operator's shape function first: the kernels refuse
 * dtypes their formulas accept (bool addcmul, integer addcdiv, lerp of
 * differing or integer dtypes), and a decomposed call must fail as the
 * kernel does, not trace a graph the eager call never runs. */
static tj_status decomp_addcmul(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(addcmul, args, m);
    return tj_dc_done(addcmul(args, m[0].dtype), outs);
}
static tj_status decomp_addcdiv(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(addcdiv, args, m);
    return tj_dc_done(addcdiv(args, m[0].dtype), outs);
}
static tj_status decomp_lerp(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(lerp_Scalar, args, m);
    return tj_dc_done(lerp(args), outs);
}
static tj_status decomp_lerp_tensor(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(lerp_Tensor, args, m);
    return tj_dc_done(lerp_tensor(args), outs);
}

void tj_register_inplace_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(addcmul), decomp_addcmul, "decomp_addcmul");
    tj_op_set_decomposition(TJ_OPS(addcdiv), decomp_addcdiv, "decomp_addcdiv");
    tj_op_set_decomposition(TJ_OPS(lerp_Scalar), decomp_lerp, "decomp_lerp");
    tj_op_set_decomposition(TJ_OPS(lerp_Tensor), decomp_lerp_tensor, "decomp_lerp_tensor");
}
