/* backward operators: shape functions and kernels bound in op_backward.def. */
#ifndef TJIT_RUNTIME_OP_BACKWARD_H
#define TJIT_RUNTIME_OP_BACKWARD_H

#include "internal.h"

/* convolution_backward (op_conv.c), max_pool2d_with_indices_backward (op_pool.c),
 * _adaptive_avg_pool2d_backward (op_adaptive_pool.c), nll_loss_backward (op_loss.c) */
TJ_OP_DECLARE(convolution_backward)
TJ_OP_DECLARE(max_pool2d_with_indices_backward)
TJ_OP_DECLARE(max_pool3d_with_indices_backward)
TJ_OP_DECLARE(avg_pool3d_backward)
TJ_OP_DECLARE(grid_sampler_2d_backward)
TJ_OP_DECLARE(_adaptive_avg_pool2d_backward)
TJ_OP_DECLARE(adaptive_max_pool2d_backward)
TJ_OP_DECLARE(_adaptive_avg_pool3d_backward)
/* the upsample_*_backward.vec operators (op_upsample.c) */
TJ_OP_DECLARE(upsample_nearest2d_backward_vec)
TJ_OP_DECLARE(upsample_bilinear2d_backward_vec)
TJ_OP_DECLARE(upsample_bicubic2d_backward_vec)
TJ_OP_DECLARE(upsample_nearest1d_backward_vec)
TJ_OP_DECLARE(upsample_linear1d_backward_vec)
TJ_OP_DECLARE(upsample_nearest3d_backward_vec)
TJ_OP_DECLARE(upsample_trilinear3d_backward_vec)
TJ_OP_DECLARE(nll_loss_backward)
TJ_OP_DECLARE(binary_cross_entropy_backward)
TJ_OP_DECLARE(smooth_l1_loss_backward)
TJ_OP_DECLARE(huber_loss_backward)
TJ_OP_DECLARE(mse_loss_backward)

/* softmax backward (op_softmax.c), layer / batch / group norm backward (op_layer_norm.c: output_mask false -> undefined output),
 * embedding_dense_backward (op_embedding.c) */
TJ_OP_DECLARE(_softmax_backward_data)
TJ_OP_DECLARE(_log_softmax_backward_data)
TJ_OP_DECLARE(native_layer_norm_backward)
TJ_OP_DECLARE(native_batch_norm_backward)
TJ_OP_DECLARE(native_group_norm_backward)
TJ_OP_DECLARE(embedding_dense_backward)
/* their gradients (op_embedding_bag.c) */
TJ_OP_DECLARE(_embedding_bag_dense_backward)
TJ_OP_DECLARE(_embedding_bag_per_sample_weights_backward)
/* reflection / replication padding backward (op_pad.c) */
TJ_OP_DECLARE(reflection_pad1d_backward)
TJ_OP_DECLARE(reflection_pad2d_backward)
TJ_OP_DECLARE(replication_pad1d_backward)
TJ_OP_DECLARE(replication_pad2d_backward)

#endif
