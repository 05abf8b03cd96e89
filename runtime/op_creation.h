/* creation operators: shape functions and kernels bound in op_creation.def. */
#ifndef TJIT_RUNTIME_OP_CREATION_H
#define TJIT_RUNTIME_OP_CREATION_H

#include "internal.h"

TJ_OP_DECLARE(zeros)
TJ_OP_DECLARE(ones)
TJ_OP_DECLARE(full)
TJ_OP_DECLARE(arange)
TJ_OP_DECLARE(scalar_tensor)
TJ_OP_DECLARE(rand)
TJ_OP_DECLARE(randn)
TJ_OP_DECLARE(bernoulli_p)

#endif
