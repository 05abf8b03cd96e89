/* reduction operators: shape functions and kernels bound in op_reduction.def. */
#ifndef TJIT_RUNTIME_OP_REDUCTION_H
#define TJIT_RUNTIME_OP_REDUCTION_H

#include "internal.h"

tj_status tj_meta_sum_dim(const tj_value *args, tj_meta *outs);
tj_status tj_kernel_sum_dim(const tj_value *args, tj_tensor *const *outs);
tj_status tj_meta_sum(const tj_value *args, tj_meta *outs);
tj_status tj_kernel_sum(const tj_value *args, tj_tensor *const *outs);
tj_status tj_meta_mean_dim(const tj_value *args, tj_meta *outs);
tj_status tj_kernel_mean_dim(const tj_value *args, tj_tensor *const *outs);
tj_status tj_meta_amax(const tj_value *args, tj_meta *outs);
tj_status tj_kernel_amax(const tj_value *args, tj_tensor *const *outs);
tj_status tj_meta_amin(const tj_value *args, tj_meta *outs);
tj_status tj_kernel_amin(const tj_value *args, tj_tensor *const *outs);
tj_status tj_meta_argmax(const tj_value *args, tj_meta *outs);
tj_status tj_kernel_argmax(const tj_value *args, tj_tensor *const *outs);
tj_status tj_meta_max_dim(const tj_value *args, tj_meta *outs);
tj_status tj_kernel_max_dim(const tj_value *args, tj_tensor *const *outs);
tj_status tj_meta_var(const tj_value *args, tj_meta *outs);
tj_status tj_kernel_var(const tj_value *args, tj_tensor *const *outs);
tj_status tj_meta_var_mean(const tj_value *args, tj_meta *outs);
tj_status tj_kernel_var_mean(const tj_value *args, tj_tensor *const *outs);
tj_status tj_meta_logsumexp(const tj_value *args, tj_meta *outs);
tj_status tj_kernel_logsumexp(const tj_value *args, tj_tensor *const *outs);

#endif
