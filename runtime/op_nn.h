/* nn operators: shape functions and kernels bound in op_nn.def. */
#ifndef TJIT_RUNTIME_OP_NN_H
#define TJIT_RUNTIME_OP_NN_H

#include "internal.h"

/* convolution (op_conv.c), pooling (op_pool.c, op_adaptive_pool.c), nll_loss (op_loss.c), dropout (op_dropout.c) */
TJ_OP_DECLARE(convolution)
TJ_OP_DECLARE(max_pool2d_with_indices)
TJ_OP_DECLARE(avg_pool2d)
/* 3-D pooling (op_pool3d.c) */
TJ_OP_DECLARE(max_pool3d_with_indices)
TJ_OP_DECLARE(avg_pool3d)
/* grid sampling (op_grid_sample.c) */
TJ_OP_DECLARE(grid_sampler_2d)
TJ_OP_DECLARE(_adaptive_avg_pool2d)
TJ_OP_DECLARE(adaptive_max_pool2d)
TJ_OP_DECLARE(_adaptive_avg_pool3d)
/** Window i of adaptive pooling of `in` elements into `out` windows (the
 * kernel's, for the decompositions): [*start, *end), start = floor(i * in /
 * out), end = ceil((i + 1) * in / out); 0 <= i < out, in * (out + 1) within
 * int64 (the shape function checks it). */
void tj_adaptive_window(int64_t i, int64_t out, int64_t in, int64_t *start, int64_t *end);
/* upsample (op_upsample.c), pixel_shuffle / pixel_unshuffle (op_pixel_shuffle.c) */
TJ_OP_DECLARE(upsample_nearest2d_vec)
TJ_OP_DECLARE(upsample_bilinear2d_vec)
TJ_OP_DECLARE(upsample_bicubic2d_vec)
TJ_OP_DECLARE(upsample_nearest1d_vec)
TJ_OP_DECLARE(upsample_linear1d_vec)
TJ_OP_DECLARE(upsample_nearest3d_vec)
TJ_OP_DECLARE(upsample_trilinear3d_vec)
TJ_OP_DECLARE(pixel_shuffle)
TJ_OP_DECLARE(pixel_unshuffle)
TJ_OP_DECLARE(nll_loss_forward)
TJ_OP_DECLARE(binary_cross_entropy)
TJ_OP_DECLARE(binary_cross_entropy_with_logits)
TJ_OP_DECLARE(native_dropout)
/* smooth_l1_loss, huber_loss, mse_loss (op_loss_pointwise.c) */
TJ_OP_DECLARE(smooth_l1_loss)
TJ_OP_DECLARE(huber_loss)
TJ_OP_DECLARE(mse_loss)
/** TJ_ERR_INVALID_ARGUMENT naming `op` unless reduction is 0 (none), 1
 * (mean) or 2 (sum) (op_loss.c). */
tj_status tj_check_reduction(const char *op, int64_t reduction);

/* softmax (op_softmax.c), layer / batch / group norm (op_layer_norm.c), embedding (op_embedding.c), attention (op_attention.c) */
TJ_OP_DECLARE(_softmax)
TJ_OP_DECLARE(_log_softmax)
TJ_OP_DECLARE(native_layer_norm)
TJ_OP_DECLARE(native_batch_norm)
TJ_OP_DECLARE(_native_batch_norm_legit_functional)
TJ_OP_DECLARE(native_group_norm)
TJ_OP_DECLARE(embedding)
/* _embedding_bag, _embedding_bag_forward_only (op_embedding_bag.c) */
TJ_OP_DECLARE(_embedding_bag)
TJ_OP_DECLARE(_embedding_bag_forward_only)
/* The fused kernel never materialises the [L, S] scores; a query whose keys
 * are all masked gets zeros (softmax would give nan); dropout_p must be 0. */
TJ_OP_DECLARE(scaled_dot_product_attention)
TJ_OP_DECLARE(glu)
TJ_OP_DECLARE(glu_backward)
/* op_prelu.c */
TJ_OP_DECLARE(prelu)
TJ_OP_DECLARE(prelu_backward)
/* reflection / replication padding (op_pad.c) */
/** Kernel of a plan step that makes a zero-padded buffer in one pass, in
 * place of zeros + slice_scatter per padded dim (tracer/fuse_pad.c; a
 * decomposed convolution's padding, decomps/windows.c). args[0]: x
 * [N, C, H, W] or [N, C, L], any dtype whose zero is all bits 0 (+0.0),
 * any strides; args[1]: ints {top, left}, where x starts along the last
 * two dims of the buffer ([N, C, L]: top 0). outs[0]: contiguous, x's
 * dtype and rank, [N, C, Hp, Wp] (Hp >= top + H, Wp >= left + W): x at
 * (top, left), zeros elsewhere, the bits the slice_scatter steps give
 * (kernels/pad.h, tj_k_pad_zeros). The compiler checks the geometry:
 * no error. */
tj_status tj_kernel_zero_padded(const tj_value *args, tj_tensor *const *outs);
TJ_OP_DECLARE(reflection_pad1d)
TJ_OP_DECLARE(reflection_pad2d)
TJ_OP_DECLARE(replication_pad1d)
TJ_OP_DECLARE(replication_pad2d)
/** Kernel of a plan step that replaces attention written out as operators
 * (tracer/fuse_attention.c): out = softmax(masked_fill(q @ k^T * scale,
 * mask, -inf), -1) @ v, computed by the fused attention kernel (online
 * softmax: results within rounding of the operators', not bit-equal).
 * args: q [..., L, E], k^T [..., E, S] (as the first product reads it),
 * v [..., S, Ev] (float32 or float64, one batch shape, any strides), mask
 * (bool, true where masked_fill writes -inf, broadcast to [..., L, S]) or
 * None, scale (float). outs[0]: contiguous, q's batch items times [L, Ev]
 * in order (the second product's [batch, L, Ev] result).
 * A query whose keys are all masked gets nan, as softmax gives; a mask that
 * marks exactly the keys after each query runs as causal attention. */
tj_status tj_kernel_fused_attention(const tj_value *args, tj_tensor *const *outs);

/* im2col / col2im (op_im2col.c), _cdist_forward / _cdist_backward / _euclidean_dist (op_cdist.c) */
TJ_OP_DECLARE(im2col)
TJ_OP_DECLARE(col2im)
TJ_OP_DECLARE(_cdist_forward)
TJ_OP_DECLARE(_cdist_backward)
TJ_OP_DECLARE(_euclidean_dist)

#endif
