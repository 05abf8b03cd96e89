/* creation operators: shape functions and kernels bound in op_creation.def. */
#ifndef TJIT_RUNTIME_OP_CREATION_H
#define TJIT_RUNTIME_OP_CREATION_H

#include "internal.h"

#endif
