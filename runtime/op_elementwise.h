/* Elementwise operators: shape functions and kernels bound in op_elementwise.def. */
#ifndef TJIT_RUNTIME_OP_ELEMENTWISE_H
#define TJIT_RUNTIME_OP_ELEMENTWISE_H

#include "internal.h"

tj_status tj_meta_add(const tj_value *args, tj_meta *outs);
tj_status tj_kernel_add(const tj_value *args, tj_tensor *const *outs);

#endif
