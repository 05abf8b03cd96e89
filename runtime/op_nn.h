/* nn operators: shape functions and kernels bound in op_nn.def. */
#ifndef TJIT_RUNTIME_OP_NN_H
#define TJIT_RUNTIME_OP_NN_H

#include "internal.h"

#endif
