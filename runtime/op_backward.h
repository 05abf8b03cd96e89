/* backward operators: shape functions and kernels bound in op_backward.def. */
#ifndef TJIT_RUNTIME_OP_BACKWARD_H
#define TJIT_RUNTIME_OP_BACKWARD_H

#include "internal.h"

/* convolution_backward (op_conv.c), max_pool2d_with_indices_backward (op_pool.c), nll_loss_backward (op_loss.c) */
tj_status tj_meta_convolution_backward(const tj_value *args, tj_meta *outs);
tj_status tj_kernel_convolution_backward(const tj_value *args, tj_tensor *const *outs);
tj_status tj_meta_max_pool2d_with_indices_backward(const tj_value *args, tj_meta *outs);
tj_status tj_kernel_max_pool2d_with_indices_backward(const tj_value *args, tj_tensor *const *outs);
tj_status tj_meta_nll_loss_backward(const tj_value *args, tj_meta *outs);
tj_status tj_kernel_nll_loss_backward(const tj_value *args, tj_tensor *const *outs);

/* softmax backward (op_softmax.c), layer norm backward (op_layer_norm.c: output_mask false -> undefined output),
 * embedding_dense_backward (op_embedding.c) */
tj_status tj_meta__softmax_backward_data(const tj_value *args, tj_meta *outs);
tj_status tj_kernel__softmax_backward_data(const tj_value *args, tj_tensor *const *outs);
tj_status tj_meta__log_softmax_backward_data(const tj_value *args, tj_meta *outs);
tj_status tj_kernel__log_softmax_backward_data(const tj_value *args, tj_tensor *const *outs);
tj_status tj_meta_native_layer_norm_backward(const tj_value *args, tj_meta *outs);
tj_status tj_kernel_native_layer_norm_backward(const tj_value *args, tj_tensor *const *outs);
tj_status tj_meta_embedding_dense_backward(const tj_value *args, tj_meta *outs);
tj_status tj_kernel_embedding_dense_backward(const tj_value *args, tj_tensor *const *outs);

#endif
