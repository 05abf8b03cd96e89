/* Decompositions of the optimiser operators. */
#include "util.h"

#define F(x) tj_v_float(x)

/* 1 - x, as PyTorch's rsub (exactly -x + 1). */
static tj_tensor *one_minus(tj_tensor *x) { return tj_add_scalar(tj_neg(x), tj_v_int(1)); }

/* t converted to dt (itself when it has that dtype already). */
static tj_tensor *as_dtype(tj_tensor *t, tj_dtype dt) { return t && tj_tensor_dtype(t) != dt ? tj_to_copy(t, (int)dt) : t; }

/* The one-element tensor t as a 0-dim tensor of dt: it then takes part in
 * the parameter's arithmetic as the kernel's scalar rounded to dt once. */
static tj_tensor *scalar_of(tj_tensor *t, tj_dtype dt) { return as_dtype(tj_reshape(t, NULL, 0), dt); }

/* _fused_adamw_step: the kernel's update (PyTorch 1.13's default AdamW
 * branch, as tj_adamw_update's operator path), out of place, with the step
 * count read from its tensor: the bias corrections in float64 from the
 * count (1 - beta^step; step_size = lr / (1 - beta1^step), the sqrt of
 * 1 - beta2^step), each rounded once to the parameter's dtype, then
 *     p * (1 - lr * wd) + (-step_size * exp_avg) / (sqrt(sq) / bc2_sqrt + eps)
 * as the kernel rounds. (torch's capturable branch computes the corrections
 * in the count's dtype, float32: 1 - 0.999f is 1.3e-5 off 0.001.) */
static tj_status fused_adamw_step(const tj_value *args, tj_value *outs)
{
    tj_meta m[4];
    tj_status st = tj_dc_check(TJ_OPS(_fused_adamw_step), args, m);
    if (st != TJ_OK) return st;
    tj_tensor *param = args[0].u.t, *grad = args[1].u.t, *max_sq = tj_opt_tensor(&args[4]);
    double lr = tj_value_as_double(&args[6]), beta1 = tj_value_as_double(&args[7]);
    double beta2 = tj_value_as_double(&args[8]), wd = tj_value_as_double(&args[9]), eps = tj_value_as_double(&args[10]);
    tj_dtype pd = tj_tensor_dtype(param);
    tj_tensor *p = tj_mul_scalar(param, F(1 - lr * wd));
    tj_tensor *exp_avg = tj_add_alpha(tj_mul_scalar(args[2].u.t, F(beta1)), grad, F(1 - beta1));
    tj_tensor *exp_avg_sq = tj_addcmul(tj_mul_scalar(args[3].u.t, F(beta2)), grad, grad, F(1 - beta2));
    tj_tensor *sq = max_sq ? tj_maximum(max_sq, exp_avg_sq) : exp_avg_sq;
    tj_tensor *step = as_dtype(args[5].u.t, TJ_FLOAT64);
    tj_tensor *bc1 = one_minus(tj_pow(tj_scalar_tensor(F(beta1), TJ_FLOAT64), step));
    tj_tensor *bc2 = one_minus(tj_pow(tj_scalar_tensor(F(beta2), TJ_FLOAT64), step));
    tj_tensor *neg_step_size = scalar_of(tj_neg(tj_div(tj_scalar_tensor(F(lr), TJ_FLOAT64), bc1)), pd);
    tj_tensor *denom = tj_add_scalar(tj_div(tj_sqrt(sq), scalar_of(tj_sqrt(bc2), pd)), F(eps));
    p = tj_add(p, tj_div(tj_mul(exp_avg, neg_step_size), denom));
    if (!p || !exp_avg || !exp_avg_sq || !sq) return tj_last_status();
    outs[0] = tj_v_tensor(p);
    outs[1] = tj_v_tensor(exp_avg);
    outs[2] = tj_v_tensor(exp_avg_sq);
    outs[3] = max_sq ? tj_v_tensor(sq) : tj_v_none();
    return TJ_OK;
}

/* _fused_sgd_step: PyTorch 1.13's _single_tensor_sgd once the momentum
 * buffer exists, out of place, operator for operator as the kernel rounds. */
static tj_status fused_sgd_step(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(_fused_sgd_step, args, m);
    tj_tensor *param = args[0].u.t, *d_p = args[1].u.t;
    double lr = tj_value_as_double(&args[3]), momentum = tj_value_as_double(&args[4]);
    double dampening = tj_value_as_double(&args[5]), wd = tj_value_as_double(&args[6]);
    if (args[8].u.b) d_p = tj_neg(d_p);
    if (wd != 0) d_p = tj_add_alpha(d_p, param, F(wd));
    tj_tensor *buf = tj_add_alpha(tj_mul_scalar(args[2].u.t, F(momentum)), d_p, F(1 - dampening));
    tj_tensor *p = tj_add_alpha(param, args[7].u.b ? tj_add_alpha(d_p, buf, F(momentum)) : buf, F(-lr));
    if (!p || !buf) return tj_last_status();
    outs[0] = tj_v_tensor(p);
    outs[1] = tj_v_tensor(buf);
    return TJ_OK;
}

void tj_register_optim_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(_fused_adamw_step), fused_adamw_step, "fused_adamw_step");
    tj_op_set_decomposition(TJ_OPS(_fused_sgd_step), fused_sgd_step, "fused_sgd_step");
}
