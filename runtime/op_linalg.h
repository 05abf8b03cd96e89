/* linalg operators: shape functions and kernels bound in op_linalg.def. */
#ifndef TJIT_RUNTIME_OP_LINALG_H
#define TJIT_RUNTIME_OP_LINALG_H

#include "internal.h"

/* aten::mm: [m, k] x [k, n] -> [m, n]; float32, float64 or int64, one dtype. */
tj_status tj_meta_mm(const tj_value *args, tj_meta *outs);
tj_status tj_kernel_mm(const tj_value *args, tj_tensor *const *outs);
/* aten::bmm: [b, m, k] x [b, k, n] -> [b, m, n]. */
tj_status tj_meta_bmm(const tj_value *args, tj_meta *outs);
tj_status tj_kernel_bmm(const tj_value *args, tj_tensor *const *outs);
/* aten::addmm: beta * self + alpha * (mat1 @ mat2), self broadcast to [m, n];
 * beta = 0 ignores self (nan included). */
tj_status tj_meta_addmm(const tj_value *args, tj_meta *outs);
tj_status tj_kernel_addmm(const tj_value *args, tj_tensor *const *outs);

#endif
