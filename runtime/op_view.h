/* view operators: shape functions and kernels bound in op_view.def. */
#ifndef TJIT_RUNTIME_OP_VIEW_H
#define TJIT_RUNTIME_OP_VIEW_H

#include "internal.h"

#endif
