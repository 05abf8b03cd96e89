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

/* linalg_inv_ex: -inverse^H (grad inverse^H) */
tj_status tj_grad_linalg_inv_ex(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi)
{
    if (!g[0]) return TJ_OK;
    tj_tensor *inv = OUT(0);
    gi[0] = tj_neg(tj_matmul(mT(inv), tj_matmul(g[0], mT(inv))));
    return gi[0] ? TJ_OK : tj_last_status();
}

/* diag_embed(v.unsqueeze(-1).expand_as(pivots)).mH(): v on the diagonal,
 * transposed as lu_solve expects it */
static tj_tensor *diagonal_of(tj_tensor *v, const tj_tensor *pivots)
{
    tj_tensor *d = tj_expand(tj_unsqueeze(v, -1), tj_tensor_shape(pivots), tj_tensor_ndim(pivots));
    return mT(tj_diag_embed(d, 0, -2, -1));
}

/* The gradient A^{-H} d from the forward's LU and pivots, adjoint unless
 * the forward factored A^T (a contiguous A), or with grad mode on from a
 * new solve of A^H (differentiable again). */
static tj_tensor *solve_transposed(const tj_grad_ctx *c, tj_tensor *LU, tj_tensor *d, int pivots_out)
{
    if (tj_grad_enabled()) return tj_linalg_solve(mT(ARG(0)), d, true);
    return tj_linalg_lu_solve(LU, OUT(pivots_out), d, true, !tj_tensor_is_contiguous(META(0)));
}

/* linalg_det_backward: A^{-H} (grad det) on the diagonal; without grad
 * mode from the LU factors with eps added where U's diagonal is 0 (a
 * singular A), as PyTorch 1.13 */
tj_status tj_grad__linalg_det(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi)
{
    if (!g[0]) return TJ_OK;
    tj_tensor *d = diagonal_of(tj_mul(g[0], OUT(0)), c->results[2]), *LU = NULL;
    if (!tj_grad_enabled()) {
        tj_tensor *lu = OUT(1);
        double eps = tj_tensor_dtype(lu) == TJ_FLOAT64 ? 2.220446049250313e-16 : 1.1920928955078125e-07;
        tj_tensor *zero_pivot = tj_eq_scalar(tj_diagonal(lu, 0, -2, -1), tj_v_float(0));
        tj_tensor *bump = tj_where(zero_pivot, tj_scalar_tensor(tj_v_float(eps), TJ_FLOAT32),
                                   tj_scalar_tensor(tj_v_float(0), TJ_FLOAT32));
        LU = tj_add(lu, tj_diag_embed(bump, 0, -2, -1));
    }
    gi[0] = solve_transposed(c, LU, d, 2);
    return gi[0] ? TJ_OK : tj_last_status();
}

/* slogdet_backward: the real sign has no gradient; logabsdet's is A^{-H}
 * grad on the diagonal */
tj_status tj_grad__linalg_slogdet(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi)
{
    if (!g[1]) return TJ_OK;
    gi[0] = solve_transposed(c, tj_grad_enabled() ? NULL : OUT(2), diagonal_of(g[1], c->results[3]), 3);
    return gi[0] ? TJ_OK : tj_last_status();
}

/* cholesky_backward (Murray 2016, arXiv 1602.07527): with L lower (the
 * transposes for upper), gA = L^{-H} Φ(L^H gL) L^{-1}, Φ the lower triangle
 * with the strict part symmetrised and halved */
tj_status tj_grad_linalg_cholesky_ex(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi)
{
    if (!g[0]) return TJ_OK;
    bool upper = c->args[1].u.b;
    tj_tensor *L = upper ? mT(OUT(0)) : OUT(0), *gL = upper ? mT(g[0]) : g[0];
    tj_tensor *gA = tj_tril(tj_matmul(mT(L), gL), 0);
    gA = tj_mul_scalar(tj_add(gA, mT(tj_tril(gA, -1))), tj_v_float(0.5));
    gA = tj_linalg_solve_triangular(mT(L), gA, true, true, false);
    gi[0] = tj_linalg_solve_triangular(L, gA, false, false, false);
    return gi[0] ? TJ_OK : tj_last_status();
}

/* cholesky_solve_backward: gB = cholesky_solve(g, L); with S = gB X^H +
 * (gB X^H)^H, gL = -S L (-L S for upper) */
tj_status tj_grad_cholesky_solve(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi)
{
    if (!g[0]) return TJ_OK;
    bool upper = c->args[2].u.b;
    tj_tensor *L = ARG(1);
    tj_tensor *gB = tj_cholesky_solve(g[0], L, upper);
    tj_tensor *common = tj_matmul(gB, mT(OUT(0)));
    common = tj_add(common, mT(common));
    if (NEED(0)) gi[0] = gB;
    if (NEED(1)) gi[1] = tj_neg(upper ? tj_matmul(L, common) : tj_matmul(common, L));
    return common ? TJ_OK : tj_last_status();
}

/* linalg_lu_backward for a square A (P has no gradient): gA = P L^{-H}
 * (tril(L^H gL, -1) + triu(gU U^H)) U^{-H}. PyTorch's rectangular cases
 * are not written here. */
tj_status tj_grad_linalg_lu(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi)
{
    if (!g[1] && !g[2]) return TJ_OK;
    const tj_tensor *A = META(0);
    char s[96];
    if (A->shape[A->ndim - 2] != A->shape[A->ndim - 1])
        return tj_error(TJ_ERR_UNSUPPORTED, "aten::linalg_lu: the derivative for a non-square A %s is not implemented in "
                        "tjit (only square matrices)", tj_shape_str(A->ndim, A->shape, s, sizeof s));
    tj_tensor *L = OUT(1), *U = OUT(2), *gA = NULL;
    if (g[1]) gA = tj_tril(tj_matmul(mT(L), g[1]), -1);
    if (g[2]) {
        tj_tensor *u = tj_triu(tj_matmul(g[2], mT(U)), 0);
        gA = gA ? tj_add(gA, u) : u;
    }
    gA = tj_linalg_solve_triangular(mT(U), gA, false, false, false);
    gA = tj_linalg_solve_triangular(mT(L), gA, true, true, true);
    gi[0] = tj_matmul(OUT(0), gA);
    return gi[0] ? TJ_OK : tj_last_status();
}

/* linalg_qr_backward for m >= n (Q [*, m, n], R [*, n, n]): gA = (gQ + Q
 * syminvadj(triu(gR R^H - Q^H gQ))) R^{-H}, syminvadj(T) = T + T^H with
 * the diagonal halved (T + triu(T, 1)^H). PyTorch's wide case (m < n) is
 * not written here. */
tj_status tj_grad_linalg_qr(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi)
{
    if (!g[0] && !g[1]) return TJ_OK;
    const char *mode = c->args[1].u.s;
    const tj_tensor *A = META(0);
    char s[96];
    if (!strcmp(mode, "r"))
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "aten::linalg_qr: The derivative of linalg.qr depends on Q, which is not "
                        "computed when mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to differentiate "
                        "through linalg.qr.");
    int64_t m = A->shape[A->ndim - 2], n = A->shape[A->ndim - 1];
    if (!strcmp(mode, "complete") && m > n)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "aten::linalg_qr: The QR decomposition is not differentiable when "
                        "mode='complete' and nrows > ncols (A %s).", tj_shape_str(A->ndim, A->shape, s, sizeof s));
    if (m < n)
        return tj_error(TJ_ERR_UNSUPPORTED, "aten::linalg_qr: the derivative for A %s with fewer rows than columns is not "
                        "implemented in tjit (only m >= n)", tj_shape_str(A->ndim, A->shape, s, sizeof s));
    tj_tensor *Q = OUT(0), *R = OUT(1), *b = NULL;
    if (g[1]) b = tj_matmul(g[1], mT(R));
    if (g[0]) {
        tj_tensor *QhgQ = tj_matmul(mT(Q), g[0]);
        b = b ? tj_sub(b, QhgQ) : tj_neg(QhgQ);
    }
    b = tj_triu(b, 0);
    b = tj_matmul(Q, tj_add(b, mT(tj_triu(b, 1))));
    if (g[0]) b = tj_add(b, g[0]);
    gi[0] = tj_linalg_solve_triangular(mT(R), b, false, false, false);
    return gi[0] ? TJ_OK : tj_last_status();
}

/* X with its diagonal replaced by v ([*, n]) */
static tj_tensor *with_diagonal(tj_tensor *X, tj_tensor *v) { return tj_diagonal_scatter(X, v, 0, -2, -1); }

/* [*, k, k] with v[j] - v[i] at (i, j) and ones on the diagonal: the
 * divisor of the eigen / singular vectors' gradients */
static tj_tensor *differences(tj_tensor *v)
{
    tj_tensor *E = tj_sub(tj_unsqueeze(v, -2), tj_unsqueeze(v, -1));
    return with_diagonal(E, tj_ones_like(v, TJ_DTYPE_NONE));
}

/* linalg_eig_backward, Hermitian case: gA = V (skew(V^H gV) / 2 / E +
 * diag(gL)) V^H, E[i][j] = L[j] - L[i]; eigenvalues alone give V diag(gL)
 * V^H. */
tj_status tj_grad__linalg_eigh(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi)
{
    if (!g[0] && !g[1]) return TJ_OK;
    if (!c->args[2].u.b)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "aten::_linalg_eigh: the derivative needs the eigenvectors, which are not "
                        "computed with compute_v=False (torch.linalg.eigvalsh computes them when A requires grad)");
    tj_tensor *L = OUT(0), *V = OUT(1);
    if (!g[1]) {
        gi[0] = tj_matmul(tj_mul(V, tj_unsqueeze(g[0], -2)), mT(V));
        return gi[0] ? TJ_OK : tj_last_status();
    }
    tj_tensor *VhgV = tj_matmul(mT(V), g[1]);
    VhgV = tj_mul_scalar(tj_sub(VhgV, mT(VhgV)), tj_v_float(0.5));
    tj_tensor *ret = tj_div(VhgV, differences(L));
    if (g[0]) ret = with_diagonal(ret, g[0]);
    gi[0] = tj_matmul(V, tj_matmul(ret, mT(V)));
    return gi[0] ? TJ_OK : tj_last_status();
}

static tj_tensor *skew(tj_tensor *X) { return tj_sub(X, mT(X)); }

/* svd_backward (derivatives.yaml narrows full_matrices' U, Vh and their
 * gradients to k = min(m, n) columns / rows first): with E[i][j] = S[j]^2 -
 * S[i]^2, gA = U [(skew(U^H gU) S + S skew(Vh gVh^H)) / E + diag(gS)] Vh,
 * plus (I - U U^H) gU S^{-1} Vh for m > n, U S^{-1} gVh (I - Vh^H Vh) for
 * m < n; singular values alone give U diag(gS) Vh. */
tj_status tj_grad__linalg_svd(const tj_grad_ctx *c, tj_tensor *const *g, tj_tensor **gi)
{
    if (!g[0] && !g[1] && !g[2]) return TJ_OK;
    if (!c->args[2].u.b)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "aten::_linalg_svd: the derivative needs U and Vh, which are not computed "
                        "with compute_uv=False (torch.linalg.svdvals computes them when A requires grad)");
    const tj_tensor *A = META(0);
    int64_t m = A->shape[A->ndim - 2], n = A->shape[A->ndim - 1], k = m < n ? m : n;
    bool full = c->args[1].u.b;
    tj_tensor *U = OUT(0), *S = OUT(1), *Vh = OUT(2), *gU = g[0], *gS = g[1], *gVh = g[2];
    if (full) {
        U = tj_narrow(U, -1, 0, k), Vh = tj_narrow(Vh, -2, 0, k);
        if (gU) gU = tj_narrow(gU, -1, 0, k);
        if (gVh) gVh = tj_narrow(gVh, -2, 0, k);
    }
    if (!gU && !gVh) {
        gi[0] = m >= n ? tj_matmul(U, tj_mul(tj_unsqueeze(gS, -1), Vh)) : tj_matmul(tj_mul(U, tj_unsqueeze(gS, -2)), Vh);
        return gi[0] ? TJ_OK : tj_last_status();
    }
    tj_tensor *ret = NULL;
    if (gU) ret = tj_mul(skew(tj_matmul(mT(U), gU)), tj_unsqueeze(S, -2));
    if (gVh) {
        tj_tensor *v = tj_mul(tj_unsqueeze(S, -1), skew(tj_matmul(Vh, mT(gVh))));
        ret = ret ? tj_add(ret, v) : v;
    }
    ret = tj_div(ret, differences(tj_mul(S, S)));
    if (gS) ret = tj_add(ret, tj_diag_embed(gS, 0, -2, -1));
    tj_tensor *gA;
    if (m > n && gU) {
        tj_tensor *gUSinv = tj_div(gU, tj_unsqueeze(S, -2));
        gA = tj_add(tj_matmul(U, ret), gUSinv);
        gA = tj_matmul(tj_sub(gA, tj_matmul(U, tj_matmul(mT(U), gUSinv))), Vh);
    } else if (m < n && gVh) {
        tj_tensor *SinvgVh = tj_div(gVh, tj_unsqueeze(S, -1));
        gA = tj_add(tj_matmul(ret, Vh), SinvgVh);
        gA = tj_matmul(U, tj_sub(gA, tj_matmul(tj_matmul(SinvgVh, mT(Vh)), Vh)));
    } else {
        gA = m >= n ? tj_matmul(U, tj_matmul(ret, Vh)) : tj_matmul(tj_matmul(U, ret), Vh);
    }
    gi[0] = gA;
    return gA ? TJ_OK : tj_last_status();
}
