/* The implicit forms of the LAPACK operators (op_lapack.def), as ATen 1.13
 * writes them (BatchLinearAlgebra.cpp): the _ex operator's first result(s)
 * (det and slogdet drop the LU factors). ATen follows a solve, an inverse or
 * a Cholesky factor with _linalg_check_errors(info); tjit has the _ex operator check instead
 * (check_errors=True), with the same condition. */
#include "internal.h"

static tj_status linalg_solve(const tj_value *args, tj_value *outs)
{
    tj_tensor *r = NULL;
    tj_status st = tj__linalg_solve_ex(args[0].u.t, args[1].u.t, args[2].u.b, true, &r, NULL, NULL, NULL);
    if (st == TJ_OK) outs[0] = tj_v_tensor(r);
    return st;
}

static tj_status linalg_inv(const tj_value *args, tj_value *outs)
{
    tj_tensor *r = NULL;
    tj_status st = tj_linalg_inv_ex(args[0].u.t, true, &r, NULL);
    if (st == TJ_OK) outs[0] = tj_v_tensor(r);
    return st;
}

static tj_status linalg_det(const tj_value *args, tj_value *outs)
{
    tj_tensor *r = NULL;
    tj_status st = tj__linalg_det(args[0].u.t, &r, NULL, NULL);
    if (st == TJ_OK) outs[0] = tj_v_tensor(r);
    return st;
}

static tj_status linalg_slogdet(const tj_value *args, tj_value *outs)
{
    tj_tensor *sign = NULL, *logabsdet = NULL;
    tj_status st = tj__linalg_slogdet(args[0].u.t, &sign, &logabsdet, NULL, NULL);
    if (st == TJ_OK) outs[0] = tj_v_tensor(sign), outs[1] = tj_v_tensor(logabsdet);
    return st;
}

static tj_status linalg_cholesky(const tj_value *args, tj_value *outs)
{
    tj_tensor *r = NULL;
    tj_status st = tj_linalg_cholesky_ex(args[0].u.t, args[1].u.b, true, &r, NULL);
    if (st == TJ_OK) outs[0] = tj_v_tensor(r);
    return st;
}

void tj_register_lapack_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(linalg_cholesky), linalg_cholesky, "linalg_cholesky");
    tj_op_set_decomposition(TJ_OPS(linalg_solve), linalg_solve, "linalg_solve");
    tj_op_set_decomposition(TJ_OPS(linalg_inv), linalg_inv, "linalg_inv");
    tj_op_set_decomposition(TJ_OPS(linalg_det), linalg_det, "linalg_det");
    tj_op_set_decomposition(TJ_OPS(linalg_slogdet), linalg_slogdet, "linalg_slogdet");
}
