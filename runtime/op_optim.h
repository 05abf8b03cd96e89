/* Optimiser operators: shape functions and kernels bound in op_optim.def. */
#ifndef TJIT_RUNTIME_OP_OPTIM_H
#define TJIT_RUNTIME_OP_OPTIM_H

#include "internal.h"

TJ_OP_DECLARE(_fused_adamw_step)
TJ_OP_DECLARE(_fused_sgd_step)

#endif
