/* In-place operators and their out-of-place counterparts: shape functions
 * and kernels bound in op_inplace.def. tj_meta_<ident> / tj_kernel_<ident>,
 * ident as in the table (the out-of-place copy is tj_*_copy_oop, since
 * tj_kernel_copy is the view family's copy kernel). */
#ifndef TJIT_RUNTIME_OP_INPLACE_H
#define TJIT_RUNTIME_OP_INPLACE_H

#include "internal.h"

TJ_OP_DECLARE(add__Tensor)
TJ_OP_DECLARE(add__Scalar)
TJ_OP_DECLARE(sub__Tensor)
TJ_OP_DECLARE(mul__Tensor)
TJ_OP_DECLARE(mul__Scalar)
TJ_OP_DECLARE(div__Tensor)
TJ_OP_DECLARE(div__Scalar)
TJ_OP_DECLARE(sqrt_)
TJ_OP_DECLARE(addcmul_)
TJ_OP_DECLARE(addcdiv_)
TJ_OP_DECLARE(lerp__Scalar)
TJ_OP_DECLARE(copy_)
TJ_OP_DECLARE(zero_)
TJ_OP_DECLARE(fill__Scalar)
TJ_OP_DECLARE(addcmul)
TJ_OP_DECLARE(addcdiv)
TJ_OP_DECLARE(lerp_Scalar)
TJ_OP_DECLARE(copy_oop)
TJ_OP_DECLARE(zero)
TJ_OP_DECLARE(fill_Scalar)
TJ_OP_DECLARE(slice_scatter)
TJ_OP_DECLARE(index_put_)
TJ_OP_DECLARE(select_scatter)
TJ_OP_DECLARE(tril_)
TJ_OP_DECLARE(triu_)


#endif
