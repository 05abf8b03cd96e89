#!/usr/bin/python3
"""Writes tests/lapack_ref.h, the reference values of tests/test_linalg_lapack.c,
with PyTorch (1.13, Debian's python3-torch):

    OPENBLAS_CORETYPE=Haswell /usr/bin/python3 tests/make_lapack_refs.py > tests/lapack_ref.h

Inputs are written to the header too, so that the tests build the same
tensors: well-conditioned matrices A = Q diag(d) Q^T + n I (Q from a seed-0
QR, d in [0.5, 1.5]), for solve plus seed-0 noise and a row rotation,
and seed-0 right-hand sides. Every operator runs in
float64; gradients are torch.autograd.grad of sum(out * GY)."""
import torch

from ref_tables import emit, print_header

torch.set_default_dtype(torch.float64)
torch.manual_seed(0)


def well_conditioned(batch, n):
    q, _ = torch.linalg.qr(torch.randn(*batch, n, n))
    d = 0.5 + torch.rand(*batch, n)
    return q @ torch.diag_embed(d) @ q.mT + n * torch.eye(n)


def grads(out, inputs):
    gy = torch.randn(out.shape)
    return gy, torch.autograd.grad((out * gy).sum(), inputs)


# ---- linalg_solve: A [2, 3, 3] (not symmetric; the second with its rows
# rotated, so that LU pivots), B [2, 3, 2]; a vector B [3] against A[0] ----
A = well_conditioned([2], 3) + 0.5 * torch.randn(2, 3, 3)
A[1] = A[1].roll(1, 0)
A.requires_grad_()
B = torch.randn(2, 3, 2).requires_grad_()
emit("SOLVE_A", A.detach())
emit("SOLVE_B", B.detach())
X = torch.linalg.solve(A, B)
gy, (ga, gb) = grads(X, [A, B])
emit("SOLVE_X", X.detach()); emit("SOLVE_GY", gy); emit("SOLVE_GA", ga); emit("SOLVE_GB", gb)
# left=False: X A = B with B [2, 2, 3]
BR = torch.randn(2, 2, 3).requires_grad_()
emit("SOLVE_BR", BR.detach())
XR = torch.linalg.solve(A, BR, left=False)
gy, (ga, gb) = grads(XR, [A, BR])
emit("SOLVE_RIGHT_X", XR.detach()); emit("SOLVE_RIGHT_GY", gy); emit("SOLVE_RIGHT_GA", ga); emit("SOLVE_RIGHT_GB", gb)
# the vector case
v = torch.randn(3).requires_grad_()
emit("SOLVE_V", v.detach())
xv = torch.linalg.solve(A[0], v)
gy, (ga, gv) = grads(xv, [A, v])
emit("SOLVE_VEC_X", xv.detach()); emit("SOLVE_VEC_GY", gy); emit("SOLVE_VEC_GA", ga[0]); emit("SOLVE_VEC_GV", gv)
# _linalg_solve_ex's LU and pivots (of A^T: A is contiguous), as int64
_, lu, piv, info = torch.ops.aten._linalg_solve_ex(A.detach(), B.detach())
emit("SOLVE_LU", lu); emit("SOLVE_PIVOTS", piv.long(), "int64_t"); emit("SOLVE_INFO", info.long(), "int64_t")

# ---- linalg_solve_triangular ----
T = torch.randn(2, 3, 3)
T.diagonal(dim1=-2, dim2=-1).add_(3)  # away from 0
T.requires_grad_()
emit("TRI_A", T.detach())
for tag, upper, left, unit in [("UPPER_LEFT", True, True, False), ("LOWER_RIGHT_UNIT", False, False, True)]:
    rhs = (B if left else BR)
    out = torch.linalg.solve_triangular(T, rhs, upper=upper, left=left, unitriangular=unit)
    gy, (ga, gb) = grads(out, [T, rhs])
    emit("TRI_%s_X" % tag, out.detach()); emit("TRI_%s_GY" % tag, gy)
    emit("TRI_%s_GA" % tag, ga); emit("TRI_%s_GB" % tag, gb)

# ---- linalg_inv, linalg_det, linalg_slogdet of SOLVE_A ----
inv = torch.linalg.inv(A)
gy, (ga,) = grads(inv, [A])
emit("INV_X", inv.detach()); emit("INV_GY", gy); emit("INV_GA", ga)
det = torch.linalg.det(A)
gy, (ga,) = grads(det, [A])
emit("DET_X", det.detach()); emit("DET_GY", gy); emit("DET_GA", ga)
sign, logabs = torch.linalg.slogdet(A)
gy, (ga,) = grads(logabs, [A])
emit("SLOGDET_SIGN", sign.detach()); emit("SLOGDET_LOGABS", logabs.detach()); emit("SLOGDET_GY", gy); emit("SLOGDET_GA", ga)
# a singular matrix's det gradient: eps on U's zero pivot (linalg_det_backward)
S = torch.tensor([[1.0, 2, 3], [2, 4, 6], [1, 0, 1]], requires_grad=True)
(gs,) = torch.autograd.grad(torch.linalg.det(S), [S])
emit("DET_SINGULAR_GA", gs)

# ---- linalg_cholesky (of P = well_conditioned, symmetric positive-definite), cholesky_solve ----
P = well_conditioned([2], 3).requires_grad_()
emit("CHOL_A", P.detach())
for tag, upper in [("LOWER", False), ("UPPER", True)]:
    L = torch.linalg.cholesky(P, upper=upper)
    gy, (ga,) = grads(L, [P])
    emit("CHOL_%s_L" % tag, L.detach()); emit("CHOL_%s_GY" % tag, gy); emit("CHOL_%s_GA" % tag, ga)
L = torch.linalg.cholesky(P).detach().requires_grad_()
X = torch.cholesky_solve(B, L)
gy, (gb, gl) = grads(X, [B, L])
emit("CHOLSOLVE_X", X.detach()); emit("CHOLSOLVE_GY", gy); emit("CHOLSOLVE_GB", gb); emit("CHOLSOLVE_GL", gl)

print_header("tests/make_lapack_refs.py")
