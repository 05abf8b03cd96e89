/* Elementwise operators: shape functions and kernels bound in
 * op_elementwise.def (and the elementwise backward operators of
 * op_backward.def). tj_meta_<ident> / tj_kernel_<ident>, ident as in the
 * table. */
#ifndef TJIT_RUNTIME_OP_ELEMENTWISE_H
#define TJIT_RUNTIME_OP_ELEMENTWISE_H

#include "internal.h"
#include "op_elementwise_list.h"

/* the one-loop operators of op_elementwise_list.h (op_elementwise.c) */
#define TJ_EW_DECLARE(ident, ...) TJ_OP_DECLARE(ident)
TJ_EW_LOOP_OPS(TJ_EW_DECLARE, TJ_EW_DECLARE, TJ_EW_DECLARE, TJ_EW_DECLARE)
#undef TJ_EW_DECLARE

/* the others (op_elementwise.c) */
TJ_OP_DECLARE(gelu)
TJ_OP_DECLARE(log_sigmoid_forward)
TJ_OP_DECLARE(isnan)
TJ_OP_DECLARE(isinf)
TJ_OP_DECLARE(logical_not)
TJ_OP_DECLARE(div_Tensor_mode)
TJ_OP_DECLARE(div_Scalar_mode)
TJ_OP_DECLARE(pow_Tensor_Scalar)
TJ_OP_DECLARE(where_self)
TJ_OP_DECLARE(where_ScalarOther)
TJ_OP_DECLARE(where_ScalarSelf)
TJ_OP_DECLARE(where_Scalar)
TJ_OP_DECLARE(clamp)
TJ_OP_DECLARE(clamp_min)
TJ_OP_DECLARE(clamp_max)
TJ_OP_DECLARE(clamp_Tensor)
TJ_OP_DECLARE(masked_fill_Scalar)
TJ_OP_DECLARE(leaky_relu)
TJ_OP_DECLARE(elu)
TJ_OP_DECLARE(softplus)
TJ_OP_DECLARE(hardtanh)
TJ_OP_DECLARE(hardsigmoid)
TJ_OP_DECLARE(hardswish)
TJ_OP_DECLARE(nan_to_num)
TJ_OP_DECLARE(celu)

/* op_elementwise_overloads.c */
TJ_OP_DECLARE(clamp_min_Tensor)
TJ_OP_DECLARE(clamp_max_Tensor)
TJ_OP_DECLARE(remainder_Scalar_Tensor)
TJ_OP_DECLARE(round_decimals)
TJ_OP_DECLARE(masked_fill_Tensor)
TJ_OP_DECLARE(bitwise_not)
TJ_OP_DECLARE(floor_divide)
TJ_OP_DECLARE(floor_divide_Scalar)

/* op_xlogy.c */
TJ_OP_DECLARE(xlogy_Tensor)
/* op_scalar_overloads.c */
TJ_OP_DECLARE(xlogy_Scalar_Self)
TJ_OP_DECLARE(xlogy_Scalar_Other)

/* backward (op_elementwise_backward.c) */
TJ_OP_DECLARE(threshold_backward)
TJ_OP_DECLARE(gelu_backward)
TJ_OP_DECLARE(sigmoid_backward)
TJ_OP_DECLARE(tanh_backward)
TJ_OP_DECLARE(leaky_relu_backward)
TJ_OP_DECLARE(softplus_backward)
TJ_OP_DECLARE(log_sigmoid_backward)
TJ_OP_DECLARE(elu_backward)
TJ_OP_DECLARE(hardtanh_backward)
TJ_OP_DECLARE(hardsigmoid_backward)
TJ_OP_DECLARE(hardswish_backward)

#endif
