/* Special functions (op_special.def): shape functions and kernels
 * (op_special.c), derivative formulas (autograd_special.c). */
#ifndef TJIT_RUNTIME_OP_SPECIAL_H
#define TJIT_RUNTIME_OP_SPECIAL_H

#include "autograd_internal.h"

TJ_OP_DECLARE(lgamma)
TJ_OP_DECLARE(digamma)
TJ_OP_DECLARE(polygamma)
TJ_OP_DECLARE(erfinv)
TJ_OP_DECLARE(erfc)
TJ_OP_DECLARE(i0)
TJ_OP_DECLARE(special_i0e)
TJ_OP_DECLARE(special_i1)
TJ_OP_DECLARE(special_i1e)
TJ_OP_DECLARE(special_ndtri)
TJ_OP_DECLARE(special_log_ndtr)
TJ_OP_DECLARE(special_entr)
TJ_OP_DECLARE(logit)
TJ_OP_DECLARE(logit_backward)
TJ_OP_DECLARE(sinc)
TJ_OP_DECLARE(hypot)
TJ_OP_DECLARE(copysign_Tensor)
TJ_OP_DECLARE(heaviside)
TJ_OP_DECLARE(special_xlog1py)
/* op_scalar_overloads.c */
TJ_OP_DECLARE(copysign_Scalar)
TJ_OP_DECLARE(special_xlog1py_self_scalar)
TJ_OP_DECLARE(special_xlog1py_other_scalar)

/* derivatives.yaml's formulas (PyTorch 1.13), one per operator */
#define TJ_SPECIAL_GRAD(name) tj_status tj_grad_##name(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi);
TJ_SPECIAL_GRAD(lgamma)
TJ_SPECIAL_GRAD(digamma)
TJ_SPECIAL_GRAD(polygamma)
TJ_SPECIAL_GRAD(erfinv)
TJ_SPECIAL_GRAD(erfc)
TJ_SPECIAL_GRAD(i0)
TJ_SPECIAL_GRAD(special_i0e)
TJ_SPECIAL_GRAD(special_i1)
TJ_SPECIAL_GRAD(special_i1e)
TJ_SPECIAL_GRAD(special_ndtri)
TJ_SPECIAL_GRAD(special_log_ndtr)
TJ_SPECIAL_GRAD(special_entr)
TJ_SPECIAL_GRAD(logit)
TJ_SPECIAL_GRAD(logit_backward)
TJ_SPECIAL_GRAD(sinc)
TJ_SPECIAL_GRAD(hypot)
TJ_SPECIAL_GRAD(copysign_Tensor)
TJ_SPECIAL_GRAD(special_xlog1py)
TJ_SPECIAL_GRAD(copysign_Scalar)
TJ_SPECIAL_GRAD(special_xlog1py_self_scalar)
TJ_SPECIAL_GRAD(special_xlog1py_other_scalar)
#undef TJ_SPECIAL_GRAD

#endif
