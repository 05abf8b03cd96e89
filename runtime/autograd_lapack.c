/* Derivative formulas of the LAPACK operators (op_lapack.def), after
 * PyTorch 1.13's derivatives.yaml and FunctionsManual.cpp, through the
 * public operator API (so a backward pass run under make_fx is traced as
 * torch's). Slots and conventions as autograd_formulas.c's. */
#include "op_lapack.h"

#define ARG(i) tj_grad_arg(c, i)
#define OUT(i) tj_grad_result(c, i)
#define META(i) (c->args[i].u.t)
#define NEED(k) (c->needed[k])

static tj_tensor *mT(tj_tensor *t) { return tj_transpose(t, -2, -1); }

/* linalg_solve_triangular_backward: gB = A^{-H} gX (the other triangle),
 * gA = -gB X^H (left) or -X^H gB, projected onto A's triangle (without the
 * diagonal when unitriangular). */
tj_status tj_grad_linalg_solve_triangular(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi)
{
    if (!g[0]) return TJ_OK;
    bool upper = c->args[2].u.b, left = c->args[3].u.b, unit = c->args[4].u.b;
    tj_tensor *gB = tj_linalg_solve_triangular(mT(ARG(0)), g[0], !upper, left, unit);
    if (NEED(0)) {
        tj_tensor *XH = mT(OUT(0));
        tj_tensor *gA = tj_neg(left ? tj_matmul(gB, XH) : tj_matmul(XH, gB));
        gi[0] = upper ? tj_triu(gA, unit) : tj_tril(gA, -(int64_t)unit);
    }
    if (NEED(1)) gi[1] = gB;
    return gB ? TJ_OK : tj_last_status();
}

/* linalg_solve_backward: gB = A^{-H} gX (X A = B: gX A^{-H}), gA = -gB X^H
 * (-X^H gB), a vector B's gradients read as columns. With grad mode on (a
 * double backward to come) gB is a new linalg_solve of A^H; otherwise
 * linalg_lu_solve reuses the factors, adjoint unless the forward factored
 * A^T (a contiguous A, see tj__linalg_solve_ex). */
tj_status tj_grad__linalg_solve_ex(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi)
{
    if (!g[0]) return TJ_OK;
    tj_tensor *A = META(0), *X = OUT(0);
    bool left = c->args[2].u.b;
    bool vector = X && (tj_tensor_ndim(X) == 1 || (tj_tensor_ndim(X) == tj_tensor_ndim(A) - 1 &&
                                                   !memcmp(tj_tensor_shape(X), tj_tensor_shape(A),
                                                           sizeof(int64_t) * (size_t)tj_tensor_ndim(X))));
    tj_tensor *gX = vector ? tj_unsqueeze(g[0], -1) : g[0];
    tj_tensor *gB = tj_grad_enabled()
                        ? tj_linalg_solve(mT(ARG(0)), gX, left)
                        : tj_linalg_lu_solve(OUT(1), OUT(2), gX, left, !tj_tensor_is_contiguous(A));
    if (NEED(0)) {
        tj_tensor *Xm = vector ? tj_unsqueeze(X, -1) : X;
        tj_tensor *gA = tj_neg(left ? tj_matmul(gB, mT(Xm)) : tj_matmul(mT(Xm), gB));
        gi[0] = vector ? tj_squeeze_dim(gA, -1) : gA;
    }
    if (NEED(1)) gi[1] = vector ? tj_squeeze_dim(gB, -1) : gB;
    return gB ? TJ_OK : tj_last_status();
}
