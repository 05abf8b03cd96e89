/* The typed API of the special functions (op_special.def; include/tjit/ops.h:
 * special functions); their in-place forms are api_inplace.c's. */
#include "api_call.h"


#define UNARY(name, ident) \
    tj_tensor *tj_##name(tj_tensor *self) { return CALL(ident, T(self)); }
#define BINARY(name, ident) \
    tj_tensor *tj_##name(tj_tensor *self, tj_tensor *other) { return CALL(ident, T(self), T(other)); }

UNARY(lgamma, lgamma)
UNARY(digamma, digamma)
UNARY(erfinv, erfinv)
UNARY(erfc, erfc)
UNARY(i0, i0)
UNARY(special_i0e, special_i0e)
UNARY(special_i1, special_i1)
UNARY(special_i1e, special_i1e)
UNARY(special_ndtri, special_ndtri)
UNARY(special_log_ndtr, special_log_ndtr)
UNARY(special_entr, special_entr)
UNARY(sinc, sinc)
BINARY(hypot, hypot)
BINARY(copysign, copysign_Tensor)
BINARY(heaviside, heaviside)
BINARY(special_xlog1py, special_xlog1py)

tj_tensor *tj_copysign_scalar(tj_tensor *self, tj_value other) { return CALL(copysign_Scalar, T(self), other); }
tj_tensor *tj_special_xlog1py_self_scalar(tj_value self, tj_tensor *other)
{
    return CALL(special_xlog1py_self_scalar, self, T(other));
}
tj_tensor *tj_special_xlog1py_other_scalar(tj_tensor *self, tj_value other)
{
    return CALL(special_xlog1py_other_scalar, T(self), other);
}
tj_tensor *tj_polygamma(int64_t n, tj_tensor *self) { return CALL(polygamma, tj_v_int(n), T(self)); }
tj_tensor *tj_logit(tj_tensor *self, tj_value eps) { return CALL(logit, T(self), eps); }
tj_tensor *tj_logit_backward(tj_tensor *grad_output, tj_tensor *self, tj_value eps)
{
    return CALL(logit_backward, T(grad_output), T(self), eps);
}
