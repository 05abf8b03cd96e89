/* creation operators: shape functions and kernels bound in op_creation.def. */
#ifndef TJIT_RUNTIME_OP_CREATION_H
#define TJIT_RUNTIME_OP_CREATION_H

#include "internal.h"

tj_status tj_meta_zeros(const tj_value *args, tj_meta *outs);
tj_status tj_kernel_zeros(const tj_value *args, tj_tensor *const *outs);
tj_status tj_meta_ones(const tj_value *args, tj_meta *outs);
tj_status tj_kernel_ones(const tj_value *args, tj_tensor *const *outs);
tj_status tj_meta_full(const tj_value *args, tj_meta *outs);
tj_status tj_kernel_full(const tj_value *args, tj_tensor *const *outs);
tj_status tj_meta_arange(const tj_value *args, tj_meta *outs);
tj_status tj_kernel_arange(const tj_value *args, tj_tensor *const *outs);
tj_status tj_meta_scalar_tensor(const tj_value *args, tj_meta *outs);
tj_status tj_kernel_scalar_tensor(const tj_value *args, tj_tensor *const *outs);
tj_status tj_meta_rand(const tj_value *args, tj_meta *outs);
tj_status tj_kernel_rand(const tj_value *args, tj_tensor *const *outs);
tj_status tj_meta_randn(const tj_value *args, tj_meta *outs);
tj_status tj_kernel_randn(const tj_value *args, tj_tensor *const *outs);
tj_status tj_meta_bernoulli_p(const tj_value *args, tj_meta *outs);
tj_status tj_kernel_bernoulli_p(const tj_value *args, tj_tensor *const *outs);

#endif
