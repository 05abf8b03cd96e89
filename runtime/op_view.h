/* View operators and data movement: shape functions and kernels bound in
 * op_view.def, plus the view-geometry helpers reshape's decomposition shares. */
#ifndef TJIT_RUNTIME_OP_VIEW_H
#define TJIT_RUNTIME_OP_VIEW_H

#include "internal.h"

/** ATen's infer_size: copies `size` (n entries, at most one -1) into `out`
 * with the -1 replaced so that the product equals `numel`. Errors name `op`:
 * TJ_ERR_SHAPE for more than one -1, a negative size, a product that does not
 * match numel, or a -1 that is ambiguous (numel 0); TJ_ERR_OVERFLOW for an
 * empty shape whose other sizes multiply past INT64_MAX; TJ_ERR_INVALID_ARGUMENT
 * for more than TJ_MAX_DIMS sizes. */
tj_status tj_view_infer_size(const char *op, const int64_t *size, int n, int64_t numel, int64_t *out);

/** ATen's computeStride: strides under which a tensor of `shape`/`strides`
 * can be viewed as `new_shape` (same numel) without copying. Returns false
 * when no such strides exist (a new dim would span two non-contiguous
 * chunks); the caller then has to copy (reshape) or fail (view). */
bool tj_view_strides(int ndim, const int64_t *shape, const int64_t *strides, int new_ndim, const int64_t *new_shape,
                     int64_t *new_strides);

/** split.Tensor's checks, as ATen's split: self has rank >= 1, split_size
 * >= 0 (0 only when the split dim has size 0), dim in range. Writes the
 * wrapped dim and the number of chunks (at least 1); chunk i covers
 * [i * split_size, min((i + 1) * split_size, size)). Errors name
 * aten::split.Tensor: TJ_ERR_INDEX (0-dim self, dim out of range),
 * TJ_ERR_INVALID_ARGUMENT (split_size). */
tj_status tj_split_plan(const tj_tensor *self, int64_t split_size, int64_t dim, int *wrapped, int64_t *nchunks);

/** constant_pad_nd's geometry, as ATen 1.13's constant_pad_nd
 * (PadNd.cpp): pad holds (before, after) pairs from the last dim backwards;
 * negative entries crop. For each dim d of self: the input keeps
 * [src_start[d], src_start[d] + count[d]), which lands at dst_start[d] of a
 * result of out_shape[d]; `grows` tells whether any entry is positive (else
 * the result is the cropped input, copied). Errors name aten::constant_pad_nd:
 * TJ_ERR_INVALID_ARGUMENT for an odd pad length or more pairs than dims,
 * TJ_ERR_SHAPE when cropping exceeds a dim or, with padding, a padded dim
 * would have size <= 0. */
typedef struct tj_pad_plan {
    int64_t out_shape[TJ_MAX_DIMS], src_start[TJ_MAX_DIMS], dst_start[TJ_MAX_DIMS], count[TJ_MAX_DIMS];
    bool grows;
} tj_pad_plan;
tj_status tj_pad_plan_make(const tj_tensor *self, const int64_t *pad, int npad, tj_pad_plan *p);

tj_status tj_meta_view(const tj_value *args, tj_meta *outs);
tj_status tj_meta_unsafe_view(const tj_value *args, tj_meta *outs);
tj_status tj_meta_permute(const tj_value *args, tj_meta *outs);
tj_status tj_meta_transpose(const tj_value *args, tj_meta *outs);
tj_status tj_meta_t(const tj_value *args, tj_meta *outs);
/** aten::detach: an alias of self, same geometry; the dispatcher makes it
 * a detached alias (no history, not a view autograd rebases). */
tj_status tj_meta_detach(const tj_value *args, tj_meta *outs);
tj_status tj_meta_expand(const tj_value *args, tj_meta *outs);
tj_status tj_meta_unsqueeze(const tj_value *args, tj_meta *outs);
tj_status tj_meta_squeeze_dim(const tj_value *args, tj_meta *outs);
tj_status tj_meta_squeeze(const tj_value *args, tj_meta *outs);
/** The in-place views unsqueeze_, squeeze_.dim, squeeze_, transpose_, t_:
 * the geometry of their view operator, as an alias of self that the
 * dispatcher writes into self (tj_op_is_inplace_view); errors name the
 * in-place operator. */
tj_status tj_meta_as_strided_(const tj_value *args, tj_meta *outs);
tj_status tj_meta_unsqueeze_(const tj_value *args, tj_meta *outs);
tj_status tj_meta_squeeze__dim(const tj_value *args, tj_meta *outs);
tj_status tj_meta_squeeze_(const tj_value *args, tj_meta *outs);
tj_status tj_meta_transpose_(const tj_value *args, tj_meta *outs);
tj_status tj_meta_t_(const tj_value *args, tj_meta *outs);
tj_status tj_meta_select(const tj_value *args, tj_meta *outs);
tj_status tj_meta_slice(const tj_value *args, tj_meta *outs);
/** The range [*start, *end) of a dim of `size` elements that slice.Tensor's
 * start and end arguments (ints, or None / INT64_MAX for the defaults;
 * negative ones count from the end) select, clamped to [0, size] with
 * *end >= *start, as ATen's slice. */
void tj_slice_range(int64_t size, const tj_value *start_arg, const tj_value *end_arg, int64_t *start, int64_t *end);
/** aten::diagonal (a view): dims dim1 and dim2 of self (rank >= 2) replaced
 * by their diagonal as the last dim, `offset` above (> 0) or below (< 0) the
 * main one; empty when the offset passes either size. Errors name
 * aten::diagonal: TJ_ERR_INDEX for rank < 2 or a dim out of range,
 * TJ_ERR_INVALID_ARGUMENT for dim1 == dim2 (after wrapping) or strides
 * whose sum overflows. */
tj_status tj_meta_diagonal(const tj_value *args, tj_meta *outs);
/** tj_meta_diagonal with its errors naming `op` (diagonal_scatter,
 * diagonal_backward). */
tj_status tj_diagonal_geometry(const char *op, const tj_value *args, tj_meta *outs);
/** aten::as_strided (a view): self's storage read with the given size,
 * stride and storage offset (args[3], None for self's). Errors name
 * aten::as_strided: TJ_ERR_SHAPE for lists of different lengths, a negative
 * size or an element outside the storage (naming size, stride and offset),
 * TJ_ERR_INVALID_ARGUMENT for a negative stride or offset. */
tj_status tj_meta_as_strided(const tj_value *args, tj_meta *outs);
/** as_strided's checks and geometry: args are size, stride, offset (None:
 * default_offset); the view must stay within storage_elements elements from
 * storage offset 0. Errors name op. */
tj_status tj_as_strided_geometry(const char *op, const tj_tensor *self, int64_t storage_elements,
                                 const tj_value *args, int64_t default_offset, tj_meta *o);
/** The elements t's storage holds from offset 0 (for a fake tensor, the
 * span its root base addresses). */
int64_t tj_storage_elements(const tj_tensor *t);
tj_status tj_meta_cat(const tj_value *args, tj_meta *outs);
tj_status tj_meta_clone(const tj_value *args, tj_meta *outs);
tj_status tj_meta_to_copy(const tj_value *args, tj_meta *outs);

/** Copy kernels: _unsafe_view (only when its shape function could not make
 * a view), clone and _to_copy share one (the output's dtype says whether it
 * converts). */
tj_status tj_kernel_copy(const tj_value *args, tj_tensor *const *outs);
/** Copies src into dst, a tensor of the same shape that does not overlap
 * it: the strided copy of _to_copy when the dtypes match (a broadcast value
 * is a fill, short runs are block moves), tj_copy_convert otherwise. */
void tj_copy_tensor(tj_tensor *dst, const tj_tensor *src);
tj_status tj_kernel_cat(const tj_value *args, tj_tensor *const *outs);
/** aten::stack: the tensors (one shape) side by side along a new dim, in
 * the dtype cat promotes to. */
tj_status tj_meta_stack(const tj_value *args, tj_meta *outs);
tj_status tj_kernel_stack(const tj_value *args, tj_tensor *const *outs);
/** aten::flip: a contiguous copy of self with the listed dims reversed. */
tj_status tj_meta_flip(const tj_value *args, tj_meta *outs);
tj_status tj_kernel_flip(const tj_value *args, tj_tensor *const *outs);

/** aten::roll (runtime/op_roll.c): a contiguous copy of self shifted
 * circularly along dims, or along the flattened self without dims. */
TJ_OP_DECLARE(roll)
tj_status tj_meta_constant_pad_nd(const tj_value *args, tj_meta *outs);
tj_status tj_kernel_constant_pad_nd(const tj_value *args, tj_tensor *const *outs);
/* repeat_interleave.Tensor (op_repeat_interleave.c) */
TJ_OP_DECLARE(repeat_interleave_Tensor)

#endif
