/* linalg operators: shape functions and kernels bound in op_linalg.def. */
#ifndef TJIT_RUNTIME_OP_LINALG_H
#define TJIT_RUNTIME_OP_LINALG_H

#include "internal.h"

/* aten::mm: [m, k] x [k, n] -> [m, n]; float32, float64 or int64, one dtype. */
TJ_OP_DECLARE(mm)
/* aten::bmm: [b, m, k] x [b, k, n] -> [b, m, n]. */
TJ_OP_DECLARE(bmm)
/* aten::addmm: beta * self + alpha * (mat1 @ mat2), self broadcast to [m, n];
 * beta = 0 ignores self (nan included). */
TJ_OP_DECLARE(addmm)

#endif
