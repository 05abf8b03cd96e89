/* The typed API of the optimiser operators (include/tjit/ops.h). */
#include "internal.h"

tj_status tj__fused_adamw_step(tj_tensor *self, tj_tensor *grad, tj_tensor *exp_avg, tj_tensor *exp_avg_sq,
                               tj_tensor *max_exp_avg_sq, tj_tensor *step, double lr, double beta1, double beta2,
                               double weight_decay, double eps, tj_tensor **outs)
{
    const tj_value args[] = {tj_v_tensor(self), tj_v_tensor(grad), tj_v_tensor(exp_avg), tj_v_tensor(exp_avg_sq),
                             tj_v_tensor(max_exp_avg_sq), tj_v_tensor(step), tj_v_float(lr), tj_v_float(beta1),
                             tj_v_float(beta2), tj_v_float(weight_decay), tj_v_float(eps)};
    if (!outs) return tj_error(TJ_ERR_INVALID_ARGUMENT, "aten::_fused_adamw_step: NULL outs (four results)");
    tj_value r[TJ_MAX_RETURNS];
    for (int k = 0; k < 4; k++) outs[k] = NULL;
    tj_status st = tj_dispatch(TJ_OPS(_fused_adamw_step), args, (int)(sizeof args / sizeof *args), r);
    for (int k = 0; st == TJ_OK && k < 4; k++) outs[k] = r[k].kind == TJ_V_TENSOR ? r[k].u.t : NULL;
    return st;
}

tj_status tj__fused_sgd_step(tj_tensor *self, tj_tensor *grad, tj_tensor *momentum_buffer, double lr, double momentum,
                             double dampening, double weight_decay, bool nesterov, bool maximize, tj_tensor **outs)
{
    const tj_value args[] = {tj_v_tensor(self),     tj_v_tensor(grad),      tj_v_tensor(momentum_buffer),
                             tj_v_float(lr),        tj_v_float(momentum),   tj_v_float(dampening),
                             tj_v_float(weight_decay), tj_v_bool(nesterov), tj_v_bool(maximize)};
    if (!outs) return tj_error(TJ_ERR_INVALID_ARGUMENT, "aten::_fused_sgd_step: NULL outs (two results)");
    tj_value r[TJ_MAX_RETURNS];
    outs[0] = outs[1] = NULL;
    tj_status st = tj_dispatch(TJ_OPS(_fused_sgd_step), args, (int)(sizeof args / sizeof *args), r);
    for (int k = 0; st == TJ_OK && k < 2; k++) outs[k] = r[k].u.t;
    return st;
}
