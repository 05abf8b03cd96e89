/* reduction operators: shape functions and kernels bound in op_reduction.def. */
#ifndef TJIT_RUNTIME_OP_REDUCTION_H
#define TJIT_RUNTIME_OP_REDUCTION_H

#include "internal.h"

#endif
