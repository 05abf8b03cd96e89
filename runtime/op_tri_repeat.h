/* tril, triu and repeat: shape functions and kernels bound in op_view.def
 * (runtime/op_tri_repeat.c); the in-place tril_ / triu_ run these through
 * op_inplace.c. */
#ifndef TJIT_RUNTIME_OP_TRI_REPEAT_H
#define TJIT_RUNTIME_OP_TRI_REPEAT_H

#include "internal.h"

TJ_OP_DECLARE(tril)
TJ_OP_DECLARE(triu)
TJ_OP_DECLARE(repeat)

#endif
