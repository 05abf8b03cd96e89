/* The typed API of the LAPACK operators (op_lapack.def): each function
 * boxes its arguments in schema order and dispatches. */
#include "internal.h"

/* Dispatches and hands results to the non-NULL entries of dst (one per
 * return); results the caller did not ask for are released. */
static tj_status dispatch_to(const tj_op *op, const tj_value *args, tj_tensor **const *dst)
{
    for (int i = 0; i < op->nreturns; i++)
        if (dst[i]) *dst[i] = NULL;
    tj_value outs[TJ_MAX_RETURNS];
    tj_status st = tj_dispatch(op, args, op->nargs, outs);
    if (st != TJ_OK) return st;
    for (int i = 0; i < op->nreturns; i++) {
        if (dst[i]) *dst[i] = outs[i].u.t;
        else if (outs[i].kind == TJ_V_TENSOR) tj_scope_drop(outs[i].u.t);
    }
    return TJ_OK;
}

static tj_tensor *dispatch1(const tj_op *op, const tj_value *args)
{
    tj_tensor *r = NULL;
    return dispatch_to(op, args, (tj_tensor **const[]){&r}) == TJ_OK ? r : NULL;
}

tj_tensor *tj_linalg_solve_triangular(tj_tensor *A, tj_tensor *B, bool upper, bool left, bool unitriangular)
{
    return dispatch1(TJ_OPS(linalg_solve_triangular),
                     (const tj_value[]){tj_v_tensor(A), tj_v_tensor(B), tj_v_bool(upper), tj_v_bool(left),
                                        tj_v_bool(unitriangular)});
}

tj_tensor *tj_linalg_lu_solve(tj_tensor *LU, tj_tensor *pivots, tj_tensor *B, bool left, bool adjoint)
{
    return dispatch1(TJ_OPS(linalg_lu_solve), (const tj_value[]){tj_v_tensor(LU), tj_v_tensor(pivots), tj_v_tensor(B),
                                                                 tj_v_bool(left), tj_v_bool(adjoint)});
}

tj_status tj__linalg_solve_ex(tj_tensor *A, tj_tensor *B, bool left, bool check_errors, tj_tensor **result,
                              tj_tensor **LU, tj_tensor **pivots, tj_tensor **info)
{
    return dispatch_to(TJ_OPS(_linalg_solve_ex),
                       (const tj_value[]){tj_v_tensor(A), tj_v_tensor(B), tj_v_bool(left), tj_v_bool(check_errors)},
                       (tj_tensor **const[]){result, LU, pivots, info});
}

tj_tensor *tj_linalg_solve(tj_tensor *A, tj_tensor *B, bool left)
{
    return dispatch1(TJ_OPS(linalg_solve), (const tj_value[]){tj_v_tensor(A), tj_v_tensor(B), tj_v_bool(left)});
}

tj_status tj_linalg_inv_ex(tj_tensor *A, bool check_errors, tj_tensor **inverse, tj_tensor **info)
{
    return dispatch_to(TJ_OPS(linalg_inv_ex), (const tj_value[]){tj_v_tensor(A), tj_v_bool(check_errors)},
                       (tj_tensor **const[]){inverse, info});
}

tj_tensor *tj_linalg_inv(tj_tensor *A) { return dispatch1(TJ_OPS(linalg_inv), (const tj_value[]){tj_v_tensor(A)}); }

tj_status tj__linalg_det(tj_tensor *A, tj_tensor **result, tj_tensor **LU, tj_tensor **pivots)
{
    return dispatch_to(TJ_OPS(_linalg_det), (const tj_value[]){tj_v_tensor(A)}, (tj_tensor **const[]){result, LU, pivots});
}

tj_tensor *tj_linalg_det(tj_tensor *A) { return dispatch1(TJ_OPS(linalg_det), (const tj_value[]){tj_v_tensor(A)}); }

tj_status tj__linalg_slogdet(tj_tensor *A, tj_tensor **sign, tj_tensor **logabsdet, tj_tensor **LU, tj_tensor **pivots)
{
    return dispatch_to(TJ_OPS(_linalg_slogdet), (const tj_value[]){tj_v_tensor(A)},
                       (tj_tensor **const[]){sign, logabsdet, LU, pivots});
}

tj_status tj_linalg_slogdet(tj_tensor *A, tj_tensor **sign, tj_tensor **logabsdet)
{
    return dispatch_to(TJ_OPS(linalg_slogdet), (const tj_value[]){tj_v_tensor(A)}, (tj_tensor **const[]){sign, logabsdet});
}

tj_status tj_linalg_cholesky_ex(tj_tensor *A, bool upper, bool check_errors, tj_tensor **L, tj_tensor **info)
{
    return dispatch_to(TJ_OPS(linalg_cholesky_ex), (const tj_value[]){tj_v_tensor(A), tj_v_bool(upper), tj_v_bool(check_errors)},
                       (tj_tensor **const[]){L, info});
}

tj_tensor *tj_linalg_cholesky(tj_tensor *A, bool upper)
{
    return dispatch1(TJ_OPS(linalg_cholesky), (const tj_value[]){tj_v_tensor(A), tj_v_bool(upper)});
}

tj_tensor *tj_cholesky_solve(tj_tensor *B, tj_tensor *L, bool upper)
{
    return dispatch1(TJ_OPS(cholesky_solve), (const tj_value[]){tj_v_tensor(B), tj_v_tensor(L), tj_v_bool(upper)});
}

tj_status tj_linalg_lu_factor_ex(tj_tensor *A, bool pivot, bool check_errors, tj_tensor **LU, tj_tensor **pivots,
                                 tj_tensor **info)
{
    return dispatch_to(TJ_OPS(linalg_lu_factor_ex), (const tj_value[]){tj_v_tensor(A), tj_v_bool(pivot), tj_v_bool(check_errors)},
                       (tj_tensor **const[]){LU, pivots, info});
}

tj_status tj_linalg_lu_factor(tj_tensor *A, bool pivot, tj_tensor **LU, tj_tensor **pivots)
{
    return dispatch_to(TJ_OPS(linalg_lu_factor), (const tj_value[]){tj_v_tensor(A), tj_v_bool(pivot)},
                       (tj_tensor **const[]){LU, pivots});
}

tj_status tj_linalg_lu(tj_tensor *A, bool pivot, tj_tensor **P, tj_tensor **L, tj_tensor **U)
{
    return dispatch_to(TJ_OPS(linalg_lu), (const tj_value[]){tj_v_tensor(A), tj_v_bool(pivot)},
                       (tj_tensor **const[]){P, L, U});
}

tj_status tj_linalg_qr(tj_tensor *A, const char *mode, tj_tensor **Q, tj_tensor **R)
{
    return dispatch_to(TJ_OPS(linalg_qr), (const tj_value[]){tj_v_tensor(A), tj_v_str(mode)}, (tj_tensor **const[]){Q, R});
}

tj_status tj__linalg_eigh(tj_tensor *A, const char *UPLO, bool compute_v, tj_tensor **eigenvalues,
                          tj_tensor **eigenvectors)
{
    return dispatch_to(TJ_OPS(_linalg_eigh), (const tj_value[]){tj_v_tensor(A), tj_v_str(UPLO), tj_v_bool(compute_v)},
                       (tj_tensor **const[]){eigenvalues, eigenvectors});
}

tj_status tj_linalg_eigh(tj_tensor *A, const char *UPLO, tj_tensor **eigenvalues, tj_tensor **eigenvectors)
{
    return dispatch_to(TJ_OPS(linalg_eigh), (const tj_value[]){tj_v_tensor(A), tj_v_str(UPLO)},
                       (tj_tensor **const[]){eigenvalues, eigenvectors});
}

tj_tensor *tj_linalg_eigvalsh(tj_tensor *A, const char *UPLO)
{
    return dispatch1(TJ_OPS(linalg_eigvalsh), (const tj_value[]){tj_v_tensor(A), tj_v_str(UPLO)});
}

tj_status tj__linalg_svd(tj_tensor *A, bool full_matrices, bool compute_uv, const char *driver, tj_tensor **U,
                         tj_tensor **S, tj_tensor **Vh)
{
    return dispatch_to(TJ_OPS(_linalg_svd),
                       (const tj_value[]){tj_v_tensor(A), tj_v_bool(full_matrices), tj_v_bool(compute_uv), tj_v_str(driver)},
                       (tj_tensor **const[]){U, S, Vh});
}

tj_status tj_linalg_svd(tj_tensor *A, bool full_matrices, const char *driver, tj_tensor **U, tj_tensor **S,
                        tj_tensor **Vh)
{
    return dispatch_to(TJ_OPS(linalg_svd), (const tj_value[]){tj_v_tensor(A), tj_v_bool(full_matrices), tj_v_str(driver)},
                       (tj_tensor **const[]){U, S, Vh});
}

tj_tensor *tj_linalg_svdvals(tj_tensor *A, const char *driver)
{
    return dispatch1(TJ_OPS(linalg_svdvals), (const tj_value[]){tj_v_tensor(A), tj_v_str(driver)});
}

/* TJ_DTYPE_NONE is None; any other value goes to the dispatcher's check */
static tj_value dtype_arg(int dtype) { return dtype == TJ_DTYPE_NONE ? tj_v_none() : tj_v_dtype((tj_dtype)dtype); }

/* dim NULL: the schema's default, the last two dims */
static const int64_t last_two[2] = {-2, -1};

tj_tensor *tj_linalg_matrix_norm(tj_tensor *A, tj_value ord, const int64_t *dim, int ndim, bool keepdim, int dtype)
{
    return dispatch1(TJ_OPS(linalg_matrix_norm), (const tj_value[]){tj_v_tensor(A), ord, tj_v_ints(dim ? dim : last_two, dim ? ndim : 2),
                                                                    tj_v_bool(keepdim), dtype_arg(dtype)});
}

tj_tensor *tj_linalg_matrix_norm_str_ord(tj_tensor *A, const char *ord, const int64_t *dim, int ndim, bool keepdim,
                                         int dtype)
{
    return dispatch1(TJ_OPS(linalg_matrix_norm_str_ord), (const tj_value[]){tj_v_tensor(A), tj_v_str(ord),
                                                                            tj_v_ints(dim ? dim : last_two, dim ? ndim : 2),
                                                                            tj_v_bool(keepdim), dtype_arg(dtype)});
}
