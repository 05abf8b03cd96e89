/* Decompositions of the optimisers' fused pointwise operators, as
 * torch._refs writes them (self + value * tensor1 * tensor2, ...), and of
 * their in-place forms, which compute out of place and copy_ the result into
 * self (so a traced graph keeps the mutation for functionalisation). */
#include "internal.h"

static tj_status done(tj_tensor *r, tj_value *outs)
{
    if (!r) return tj_last_status();
    outs[0] = tj_v_tensor(r);
    return TJ_OK;
}

static tj_tensor *addcmul(const tj_value *a)
{
    return tj_add(a[0].u.t, tj_mul(tj_mul_scalar(a[1].u.t, a[3]), a[2].u.t));
}

static tj_tensor *addcdiv(const tj_value *a)
{
    return tj_add(a[0].u.t, tj_div(tj_mul_scalar(a[1].u.t, a[3]), a[2].u.t));
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

static tj_status decomp_addcmul(const tj_value *args, tj_value *outs) { return done(addcmul(args), outs); }
static tj_status decomp_addcdiv(const tj_value *args, tj_value *outs) { return done(addcdiv(args), outs); }
static tj_status decomp_lerp(const tj_value *args, tj_value *outs) { return done(lerp(args), outs); }

/* self.copy_(out-of-place result); the result is self itself. */
static tj_status copy_into_self(const tj_value *args, tj_tensor *r, tj_value *outs)
{
    return done(r ? tj_copy_(args[0].u.t, r) : NULL, outs);
}

static tj_status decomp_addcmul_(const tj_value *args, tj_value *outs)
{
    return copy_into_self(args, addcmul(args), outs);
}
static tj_status decomp_addcdiv_(const tj_value *args, tj_value *outs)
{
    return copy_into_self(args, addcdiv(args), outs);
}
static tj_status decomp_lerp_(const tj_value *args, tj_value *outs) { return copy_into_self(args, lerp(args), outs); }

void tj_register_inplace_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(addcmul), decomp_addcmul, "decomp_addcmul");
    tj_op_set_decomposition(TJ_OPS(addcdiv), decomp_addcdiv, "decomp_addcdiv");
    tj_op_set_decomposition(TJ_OPS(lerp_Scalar), decomp_lerp, "decomp_lerp");
    tj_op_set_decomposition(TJ_OPS(addcmul_), decomp_addcmul_, "decomp_addcmul_");
    tj_op_set_decomposition(TJ_OPS(addcdiv_), decomp_addcdiv_, "decomp_addcdiv_");
    tj_op_set_decomposition(TJ_OPS(lerp__Scalar), decomp_lerp_, "decomp_lerp_");
}
