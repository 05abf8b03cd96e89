/* In-place operators and their out-of-place counterparts: shape functions
 * and kernels bound in op_inplace.def. tj_meta_<ident> / tj_kernel_<ident>,
 * ident as in the table (the out-of-place copy is tj_*_copy_oop, since
 * tj_kernel_copy is the view family's copy kernel). */
#ifndef TJIT_RUNTIME_OP_INPLACE_H
#define TJIT_RUNTIME_OP_INPLACE_H

#include "internal.h"

#define TJ_INPLACE_DECLARE(ident)                                               \
    tj_status tj_meta_##ident(const tj_value *args, tj_meta *outs);             \
    tj_status tj_kernel_##ident(const tj_value *args, tj_tensor *const *outs);

TJ_INPLACE_DECLARE(add__Tensor)
TJ_INPLACE_DECLARE(add__Scalar)
TJ_INPLACE_DECLARE(sub__Tensor)
TJ_INPLACE_DECLARE(mul__Tensor)
TJ_INPLACE_DECLARE(mul__Scalar)
TJ_INPLACE_DECLARE(div__Tensor)
TJ_INPLACE_DECLARE(div__Scalar)
TJ_INPLACE_DECLARE(sqrt_)
TJ_INPLACE_DECLARE(addcmul_)
TJ_INPLACE_DECLARE(addcdiv_)
TJ_INPLACE_DECLARE(lerp__Scalar)
TJ_INPLACE_DECLARE(copy_)
TJ_INPLACE_DECLARE(zero_)
TJ_INPLACE_DECLARE(fill__Scalar)
TJ_INPLACE_DECLARE(addcmul)
TJ_INPLACE_DECLARE(addcdiv)
TJ_INPLACE_DECLARE(lerp_Scalar)
TJ_INPLACE_DECLARE(copy_oop)
TJ_INPLACE_DECLARE(zero)
TJ_INPLACE_DECLARE(fill_Scalar)
TJ_INPLACE_DECLARE(slice_scatter)
TJ_INPLACE_DECLARE(select_scatter)

#undef TJ_INPLACE_DECLARE

#endif
