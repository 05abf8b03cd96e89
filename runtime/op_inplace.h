/* In-place operators and their out-of-place counterparts: shape functions
 * and kernels bound in op_inplace.def. tj_meta_<ident> / tj_kernel_<ident>,
 * ident as in the table (the out-of-place copy is tj_*_copy_oop, since
 * tj_kernel_copy is the view family's copy kernel). */
#ifndef TJIT_RUNTIME_OP_INPLACE_H
#define TJIT_RUNTIME_OP_INPLACE_H

#include "internal.h"

TJ_OP_DECLARE(copy_)
TJ_OP_DECLARE(zero_)
TJ_OP_DECLARE(fill__Scalar)
TJ_OP_DECLARE(fill__Tensor)
TJ_OP_DECLARE(addcmul)
TJ_OP_DECLARE(addcdiv)
TJ_OP_DECLARE(lerp_Scalar)
TJ_OP_DECLARE(lerp_Tensor)
TJ_OP_DECLARE(copy_oop)
TJ_OP_DECLARE(zero)
TJ_OP_DECLARE(fill_Scalar)
TJ_OP_DECLARE(fill_Tensor)
TJ_OP_DECLARE(slice_scatter)
TJ_OP_DECLARE(index_put_)
TJ_OP_DECLARE(select_scatter)
TJ_OP_DECLARE(diagonal_scatter)
TJ_OP_DECLARE(as_strided_scatter)
/** The dims of t ordered as its elements lie in memory, outermost first
 * (size-1 dims leading), into perm (t->ndim entries), when t is dense: its
 * elements fill their span, each once (a transposed tensor), the layout
 * PyTorch's self.clone() keeps (preserve_format). Otherwise false, perm
 * the identity (the clone is row-major). */
bool tj_storage_order(const tj_tensor *t, int *perm);
/* the views' derivatives (op_backward.def): zeros with the gradient in the view */
TJ_OP_DECLARE(diagonal_backward)
TJ_OP_DECLARE(select_backward)
TJ_OP_DECLARE(slice_backward)

/** out (contiguous, a kernel's output) set to zeros but for its diagonal
 * (tj_diagonal's offset, dim1, dim2), which receives src: diagonal_backward's,
 * diag_embed's and diag's kernel. The caller's shape function has checked that
 * src has the diagonal's shape. Errors: TJ_ERR_OUT_OF_MEMORY (the view). */
tj_status tj_zeros_with_diagonal(tj_tensor *out, const tj_tensor *src, int64_t offset, int64_t dim1, int64_t dim2);

/** The generic in-place shape function and kernel: `functional`'s checks and
 * kernel, the result written into self (args[0]), which must hold it: same
 * shape (TJ_ERR_SHAPE), a dtype self can hold (TJ_ERR_DTYPE), no overlap with
 * a tensor operand other than exact identity (TJ_ERR_UNSUPPORTED). Errors
 * name `op`. */
tj_status tj_inplace_meta(const tj_op *op, const tj_op *functional, const tj_value *args, tj_meta *outs);
tj_status tj_inplace_kernel(const tj_op *op, const tj_op *functional, const tj_value *args, tj_tensor *const *outs);

/* the in-place forms of op_inplace_forms.def (op_inplace_forms.c) */
#define TJ_INPLACE_FORM(ident, schema, functional) TJ_OP_DECLARE(ident)
#include "op_inplace_forms.def"
#undef TJ_INPLACE_FORM


#endif
