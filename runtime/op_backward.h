/* backward operators: shape functions and kernels bound in op_backward.def. */
#ifndef TJIT_RUNTIME_OP_BACKWARD_H
#define TJIT_RUNTIME_OP_BACKWARD_H

#include "internal.h"

#endif
