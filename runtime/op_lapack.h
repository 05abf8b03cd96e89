/* Dense linear algebra on LAPACK: shape functions and kernels bound in
 * op_lapack.def (op_lapack.c), derivative formulas (autograd_lapack.c). */
#ifndef TJIT_RUNTIME_OP_LAPACK_H
#define TJIT_RUNTIME_OP_LAPACK_H

#include "autograd_internal.h"

TJ_OP_DECLARE(linalg_solve_triangular)
TJ_OP_DECLARE(linalg_lu_solve)
TJ_OP_DECLARE(_linalg_solve_ex)
TJ_OP_DECLARE(linalg_inv_ex)
TJ_OP_DECLARE(_linalg_det)
TJ_OP_DECLARE(_linalg_slogdet)
TJ_OP_DECLARE(linalg_cholesky_ex)
TJ_OP_DECLARE(cholesky_solve)
TJ_OP_DECLARE(linalg_lu_factor_ex)
TJ_OP_DECLARE(linalg_lu)
TJ_OP_DECLARE(linalg_qr)
TJ_OP_DECLARE(_linalg_eigh)
TJ_OP_DECLARE(_linalg_svd)

/* derivatives.yaml's formulas (FunctionsManual.cpp, PyTorch 1.13) */
tj_status tj_grad_linalg_solve_triangular(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi);
tj_status tj_grad__linalg_solve_ex(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi);
tj_status tj_grad_linalg_inv_ex(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi);
tj_status tj_grad__linalg_det(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi);
tj_status tj_grad__linalg_slogdet(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi);
tj_status tj_grad_linalg_cholesky_ex(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi);
tj_status tj_grad_cholesky_solve(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi);
tj_status tj_grad_linalg_lu(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi);
tj_status tj_grad_linalg_qr(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi);
tj_status tj_grad__linalg_eigh(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi);
tj_status tj_grad__linalg_svd(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi);

#endif
