/* Optimiser operators: shape functions and kernels bound in op_optim.def. */
#ifndef TJIT_RUNTIME_OP_OPTIM_H
#define TJIT_RUNTIME_OP_OPTIM_H

#include "internal.h"

tj_status tj_meta__fused_adamw_step(const tj_value *args, tj_meta *outs);
tj_status tj_kernel__fused_adamw_step(const tj_value *args, tj_tensor *const *outs);

#endif
