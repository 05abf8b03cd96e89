/* nn operators: shape functions and kernels bound in op_nn.def. */
#ifndef TJIT_RUNTIME_OP_NN_H
#define TJIT_RUNTIME_OP_NN_H

#include "internal.h"

/* convolution (op_conv.c), pooling (op_pool.c), nll_loss (op_loss.c), dropout (op_dropout.c) */
tj_status tj_meta_convolution(const tj_value *args, tj_meta *outs);
tj_status tj_kernel_convolution(const tj_value *args, tj_tensor *const *outs);
tj_status tj_meta_max_pool2d_with_indices(const tj_value *args, tj_meta *outs);
tj_status tj_kernel_max_pool2d_with_indices(const tj_value *args, tj_tensor *const *outs);
tj_status tj_meta_avg_pool2d(const tj_value *args, tj_meta *outs);
tj_status tj_kernel_avg_pool2d(const tj_value *args, tj_tensor *const *outs);
tj_status tj_meta_nll_loss_forward(const tj_value *args, tj_meta *outs);
tj_status tj_kernel_nll_loss_forward(const tj_value *args, tj_tensor *const *outs);
tj_status tj_meta_native_dropout(const tj_value *args, tj_meta *outs);
tj_status tj_kernel_native_dropout(const tj_value *args, tj_tensor *const *outs);

/* softmax (op_softmax.c), layer norm (op_layer_norm.c), embedding (op_embedding.c), attention (op_attention.c) */
tj_status tj_meta__softmax(const tj_value *args, tj_meta *outs);
tj_status tj_kernel__softmax(const tj_value *args, tj_tensor *const *outs);
tj_status tj_meta__log_softmax(const tj_value *args, tj_meta *outs);
tj_status tj_kernel__log_softmax(const tj_value *args, tj_tensor *const *outs);
tj_status tj_meta_native_layer_norm(const tj_value *args, tj_meta *outs);
tj_status tj_kernel_native_layer_norm(const tj_value *args, tj_tensor *const *outs);
tj_status tj_meta_embedding(const tj_value *args, tj_meta *outs);
tj_status tj_kernel_embedding(const tj_value *args, tj_tensor *const *outs);
/* The fused kernel never materialises the [L, S] scores; a query whose keys
 * are all masked gets zeros (softmax would give nan); dropout_p must be 0. */
tj_status tj_meta_scaled_dot_product_attention(const tj_value *args, tj_meta *outs);
tj_status tj_kernel_scaled_dot_product_attention(const tj_value *args, tj_tensor *const *outs);

#endif
