/* linalg operators: shape functions and kernels bound in op_linalg.def. */
#ifndef TJIT_RUNTIME_OP_LINALG_H
#define TJIT_RUNTIME_OP_LINALG_H

#include "internal.h"

#endif
