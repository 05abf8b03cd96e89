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
