/* Elementwise operators: shape functions and kernels bound in
 * op_elementwise.def (and the elementwise backward operators of
 * op_backward.def). tj_meta_<ident> / tj_kernel_<ident>, ident as in the
 * table. */
#ifndef TJIT_RUNTIME_OP_ELEMENTWISE_H
#define TJIT_RUNTIME_OP_ELEMENTWISE_H

#include "internal.h"

#define TJ_EW_DECLARE(ident)                                                    \
    tj_status tj_meta_##ident(const tj_value *args, tj_meta *outs);             \
    tj_status tj_kernel_##ident(const tj_value *args, tj_tensor *const *outs);

/* unary (op_elementwise.c) */
TJ_EW_DECLARE(abs)
TJ_EW_DECLARE(neg)
TJ_EW_DECLARE(exp)
TJ_EW_DECLARE(log)
TJ_EW_DECLARE(sqrt)
TJ_EW_DECLARE(rsqrt)
TJ_EW_DECLARE(tanh)
TJ_EW_DECLARE(sigmoid)
TJ_EW_DECLARE(erf)
TJ_EW_DECLARE(reciprocal)
TJ_EW_DECLARE(sin)
TJ_EW_DECLARE(cos)
TJ_EW_DECLARE(log1p)
TJ_EW_DECLARE(expm1)
TJ_EW_DECLARE(relu)
TJ_EW_DECLARE(gelu)
TJ_EW_DECLARE(silu)

/* binary and ternary (op_elementwise.c) */
TJ_EW_DECLARE(add_Tensor)
TJ_EW_DECLARE(add_Scalar)
TJ_EW_DECLARE(sub_Tensor)
TJ_EW_DECLARE(sub_Scalar)
TJ_EW_DECLARE(mul_Tensor)
TJ_EW_DECLARE(mul_Scalar)
TJ_EW_DECLARE(div_Tensor)
TJ_EW_DECLARE(div_Scalar)
TJ_EW_DECLARE(div_Tensor_mode)
TJ_EW_DECLARE(pow_Tensor_Scalar)
TJ_EW_DECLARE(pow_Tensor_Tensor)
TJ_EW_DECLARE(maximum)
TJ_EW_DECLARE(minimum)
TJ_EW_DECLARE(eq_Tensor)
TJ_EW_DECLARE(ne_Tensor)
TJ_EW_DECLARE(lt_Tensor)
TJ_EW_DECLARE(le_Tensor)
TJ_EW_DECLARE(gt_Tensor)
TJ_EW_DECLARE(ge_Tensor)
TJ_EW_DECLARE(eq_Scalar)
TJ_EW_DECLARE(gt_Scalar)
TJ_EW_DECLARE(where_self)
TJ_EW_DECLARE(clamp)
TJ_EW_DECLARE(clamp_Tensor)
TJ_EW_DECLARE(masked_fill_Scalar)
TJ_EW_DECLARE(logaddexp)

/* backward (op_elementwise_backward.c) */
TJ_EW_DECLARE(threshold_backward)
TJ_EW_DECLARE(gelu_backward)
TJ_EW_DECLARE(sigmoid_backward)
TJ_EW_DECLARE(tanh_backward)

#undef TJ_EW_DECLARE

#endif
