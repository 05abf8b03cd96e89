/* The implicit forms of the LAPACK operators (op_lapack.def), as ATen 1.13
 * writes them (BatchLinearAlgebra.cpp): the _ex operator's first result(s)
 * (det and slogdet drop the LU factors); eigh, eigvalsh, svd and svdvals
 * through _linalg_eigh and _linalg_svd. ATen follows a solve, an inverse or
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

static tj_status linalg_lu_factor(const tj_value *args, tj_value *outs)
{
    tj_tensor *LU = NULL, *pivots = NULL;
    tj_status st = tj_linalg_lu_factor_ex(args[0].u.t, args[1].u.b, true, &LU, &pivots, NULL);
    if (st == TJ_OK) outs[0] = tj_v_tensor(LU), outs[1] = tj_v_tensor(pivots);
    return st;
}

static tj_status linalg_eigh(const tj_value *args, tj_value *outs)
{
    tj_tensor *w = NULL, *V = NULL;
    tj_status st = tj__linalg_eigh(args[0].u.t, args[1].u.s, true, &w, &V);
    if (st == TJ_OK) outs[0] = tj_v_tensor(w), outs[1] = tj_v_tensor(V);
    return st;
}

/* ATen's _may_require_fw_or_bw_grad: the vectors only for a gradient to come */
static bool may_require_grad(const tj_tensor *A) { return tj_grad_enabled() && tj_tensor_requires_grad(A); }

static tj_status linalg_eigvalsh(const tj_value *args, tj_value *outs)
{
    tj_tensor *w = NULL;
    tj_status st = tj__linalg_eigh(args[0].u.t, args[1].u.s, may_require_grad(args[0].u.t), &w, NULL);
    if (st == TJ_OK) outs[0] = tj_v_tensor(w);
    return st;
}

static const char *driver_of(const tj_value *v) { return v->kind == TJ_V_STR ? v->u.s : NULL; }

static tj_status linalg_svd(const tj_value *args, tj_value *outs)
{
    tj_tensor *U = NULL, *S = NULL, *Vh = NULL;
    tj_status st = tj__linalg_svd(args[0].u.t, args[1].u.b, true, driver_of(&args[2]), &U, &S, &Vh);
    if (st == TJ_OK) outs[0] = tj_v_tensor(U), outs[1] = tj_v_tensor(S), outs[2] = tj_v_tensor(Vh);
    return st;
}

static tj_status linalg_svdvals(const tj_value *args, tj_value *outs)
{
    tj_tensor *S = NULL;
    tj_status st = tj__linalg_svd(args[0].u.t, false, may_require_grad(args[0].u.t), driver_of(&args[1]), NULL, &S, NULL);
    if (st == TJ_OK) outs[0] = tj_v_tensor(S);
    return st;
}

void tj_register_lapack_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(linalg_lu_factor), linalg_lu_factor, "linalg_lu_factor");
    tj_op_set_decomposition(TJ_OPS(linalg_eigh), linalg_eigh, "linalg_eigh");
    tj_op_set_decomposition(TJ_OPS(linalg_eigvalsh), linalg_eigvalsh, "linalg_eigvalsh");
    tj_op_set_decomposition(TJ_OPS(linalg_svd), linalg_svd, "linalg_svd");
    tj_op_set_decomposition(TJ_OPS(linalg_svdvals), linalg_svdvals, "linalg_svdvals");
    tj_op_set_decomposition(TJ_OPS(linalg_cholesky), linalg_cholesky, "linalg_cholesky");
    tj_op_set_decomposition(TJ_OPS(linalg_solve), linalg_solve, "linalg_solve");
    tj_op_set_decomposition(TJ_OPS(linalg_inv), linalg_inv, "linalg_inv");
    tj_op_set_decomposition(TJ_OPS(linalg_det), linalg_det, "linalg_det");
    tj_op_set_decomposition(TJ_OPS(linalg_slogdet), linalg_slogdet, "linalg_slogdet");
}
