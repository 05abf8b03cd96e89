/* nn operators: shape functions and kernels bound in op_nn.def. */
#ifndef TJIT_RUNTIME_OP_NN_H
#define TJIT_RUNTIME_OP_NN_H

#include "internal.h"

/* convolution (op_conv.c), pooling (op_pool.c), nll_loss (op_loss.c), dropout (op_dropout.c) */
TJ_OP_DECLARE(convolution)
TJ_OP_DECLARE(max_pool2d_with_indices)
TJ_OP_DECLARE(avg_pool2d)
TJ_OP_DECLARE(nll_loss_forward)
TJ_OP_DECLARE(native_dropout)

/* softmax (op_softmax.c), layer norm (op_layer_norm.c), embedding (op_embedding.c), attention (op_attention.c) */
TJ_OP_DECLARE(_softmax)
TJ_OP_DECLARE(_log_softmax)
TJ_OP_DECLARE(native_layer_norm)
TJ_OP_DECLARE(embedding)
/* The fused kernel never materialises the [L, S] scores; a query whose keys
 * are all masked gets zeros (softmax would give nan); dropout_p must be 0. */
TJ_OP_DECLARE(scaled_dot_product_attention)

#endif
