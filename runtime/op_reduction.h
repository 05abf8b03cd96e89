/* reduction operators: shape functions and kernels bound in op_reduction.def. */
#ifndef TJIT_RUNTIME_OP_REDUCTION_H
#define TJIT_RUNTIME_OP_REDUCTION_H

#include "internal.h"

TJ_OP_DECLARE(sum_dim)
TJ_OP_DECLARE(sum)
TJ_OP_DECLARE(cumsum)
TJ_OP_DECLARE(mean_dim)
TJ_OP_DECLARE(amax)
TJ_OP_DECLARE(amin)
TJ_OP_DECLARE(argmax)
TJ_OP_DECLARE(max_dim)
TJ_OP_DECLARE(var)
TJ_OP_DECLARE(var_mean)
TJ_OP_DECLARE(logsumexp)
TJ_OP_DECLARE(mean)
TJ_OP_DECLARE(max)
TJ_OP_DECLARE(min)
TJ_OP_DECLARE(min_dim)
TJ_OP_DECLARE(argmin)
TJ_OP_DECLARE(std)
TJ_OP_DECLARE(linalg_vector_norm)
TJ_OP_DECLARE(norm_ScalarOpt_dim)
/** norm.ScalarOpt_dim's arguments (self, p?, dim, keepdim) as
 * linalg_vector_norm's (p None is 2; dtype None): out holds 5 values. */
void tj_norm_vector_norm_args(const tj_value *args, tj_value *out);
TJ_OP_DECLARE(prod)
TJ_OP_DECLARE(prod_dim)
TJ_OP_DECLARE(cumprod)
TJ_OP_DECLARE(all)
TJ_OP_DECLARE(all_dim)
TJ_OP_DECLARE(any)
TJ_OP_DECLARE(any_dim)

#endif
