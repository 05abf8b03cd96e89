/* Elementwise operators: shape functions and kernels bound in
 * op_elementwise.def (and the elementwise backward operators of
 * op_backward.def). tj_meta_<ident> / tj_kernel_<ident>, ident as in the
 * table. */
#ifndef TJIT_RUNTIME_OP_ELEMENTWISE_H
#define TJIT_RUNTIME_OP_ELEMENTWISE_H

#include "internal.h"

/* unary (op_elementwise.c) */
TJ_OP_DECLARE(abs)
TJ_OP_DECLARE(neg)
TJ_OP_DECLARE(exp)
TJ_OP_DECLARE(log)
TJ_OP_DECLARE(sqrt)
TJ_OP_DECLARE(rsqrt)
TJ_OP_DECLARE(tanh)
TJ_OP_DECLARE(sigmoid)
TJ_OP_DECLARE(erf)
TJ_OP_DECLARE(reciprocal)
TJ_OP_DECLARE(sin)
TJ_OP_DECLARE(cos)
TJ_OP_DECLARE(log1p)
TJ_OP_DECLARE(expm1)
TJ_OP_DECLARE(relu)
TJ_OP_DECLARE(gelu)
TJ_OP_DECLARE(silu)

/* binary and ternary (op_elementwise.c) */
TJ_OP_DECLARE(add_Tensor)
TJ_OP_DECLARE(add_Scalar)
TJ_OP_DECLARE(sub_Tensor)
TJ_OP_DECLARE(sub_Scalar)
TJ_OP_DECLARE(mul_Tensor)
TJ_OP_DECLARE(mul_Scalar)
TJ_OP_DECLARE(div_Tensor)
TJ_OP_DECLARE(div_Scalar)
TJ_OP_DECLARE(div_Tensor_mode)
TJ_OP_DECLARE(pow_Tensor_Scalar)
TJ_OP_DECLARE(pow_Tensor_Tensor)
TJ_OP_DECLARE(maximum)
TJ_OP_DECLARE(minimum)
TJ_OP_DECLARE(eq_Tensor)
TJ_OP_DECLARE(ne_Tensor)
TJ_OP_DECLARE(lt_Tensor)
TJ_OP_DECLARE(le_Tensor)
TJ_OP_DECLARE(gt_Tensor)
TJ_OP_DECLARE(ge_Tensor)
TJ_OP_DECLARE(eq_Scalar)
TJ_OP_DECLARE(gt_Scalar)
TJ_OP_DECLARE(ne_Scalar)
TJ_OP_DECLARE(lt_Scalar)
TJ_OP_DECLARE(le_Scalar)
TJ_OP_DECLARE(ge_Scalar)
TJ_OP_DECLARE(where_self)
TJ_OP_DECLARE(clamp)
TJ_OP_DECLARE(clamp_Tensor)
TJ_OP_DECLARE(masked_fill_Scalar)
TJ_OP_DECLARE(logaddexp)

/* backward (op_elementwise_backward.c) */
TJ_OP_DECLARE(threshold_backward)
TJ_OP_DECLARE(gelu_backward)
TJ_OP_DECLARE(sigmoid_backward)
TJ_OP_DECLARE(tanh_backward)
/* Session 14 (opsA) */
TJ_OP_DECLARE(where_ScalarOther)
TJ_OP_DECLARE(where_ScalarSelf)
TJ_OP_DECLARE(where_Scalar)
TJ_OP_DECLARE(logical_not)
TJ_OP_DECLARE(logical_and)
TJ_OP_DECLARE(logical_or)
TJ_OP_DECLARE(logical_xor)
TJ_OP_DECLARE(sign)
TJ_OP_DECLARE(square)
TJ_OP_DECLARE(rsub_Tensor)
TJ_OP_DECLARE(rsub_Scalar)
TJ_OP_DECLARE(leaky_relu)
TJ_OP_DECLARE(softplus)
TJ_OP_DECLARE(elu)
TJ_OP_DECLARE(leaky_relu_backward)
TJ_OP_DECLARE(softplus_backward)
TJ_OP_DECLARE(elu_backward)
/* Session 16 (lossact): op_elementwise.c, op_elementwise_backward.c */
TJ_OP_DECLARE(hardtanh)
TJ_OP_DECLARE(hardsigmoid)
TJ_OP_DECLARE(hardswish)
TJ_OP_DECLARE(hardtanh_backward)
TJ_OP_DECLARE(hardsigmoid_backward)
TJ_OP_DECLARE(hardswish_backward)

#endif
