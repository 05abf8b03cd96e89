#!/usr/bin/python3
"""Writes tests/lapack_factor_ref.h, the reference values of
tests/test_linalg_factor.c, with PyTorch (1.13, Debian's python3-torch):

    OPENBLAS_CORETYPE=Haswell /usr/bin/python3 tests/make_lapack_factor_refs.py > tests/lapack_factor_ref.h

Inputs are written to the header too, so that the tests build the same
tensors. Eigen and singular vectors are compared as they come: this torch
calls the same OpenBLAS routines (syevd, gesdd, geqrf / orgqr) tjit does on
a column-major copy of A, so their signs are the same. Inputs have
well-separated spectra, so that the vectors' gradients are defined:
symmetric A = Q diag(-2, -0.5, 1, 3) Q^T, A = U diag(s) V^T with s = (3, 2, 1,
0.5) (tall) and (2.5, 1.5, 0.8) (wide); QR and LU of seed-0 Gaussian
matrices. Every operator runs in float64; gradients are
torch.autograd.grad of the sum of each output times a seed-0 GY."""
import torch

from ref_tables import emit, print_header

torch.set_default_dtype(torch.float64)
torch.manual_seed(0)


def orthogonal(n):
    q, _ = torch.linalg.qr(torch.randn(2, n, n))
    return q


def grads(outs, inputs, names):
    gys = [torch.randn(o.shape) for o in outs]
    for name, gy in zip(names, gys):
        emit(name, gy)
    return torch.autograd.grad(sum((o * gy).sum() for o, gy in zip(outs, gys)), inputs)


# ---- linalg_qr: A [2, 4, 3], reduced and complete; a wide B [3, 5] (values only) ----
A = torch.randn(2, 4, 3, requires_grad=True)
emit("QR_A", A.detach())
Q, R = torch.linalg.qr(A)
emit("QR_Q", Q.detach()); emit("QR_R", R.detach())
(ga,) = grads([Q, R], [A], ["QR_GQ", "QR_GR"])
emit("QR_GA", ga)
Qc, Rc = torch.linalg.qr(A, mode="complete")
emit("QR_COMPLETE_Q", Qc.detach()); emit("QR_COMPLETE_R", Rc.detach())
(ga,) = grads([torch.linalg.qr(A)[1]], [A], ["QR_R_ONLY_GR"])
emit("QR_R_ONLY_GA", ga)
W = torch.randn(3, 5)
emit("QR_WIDE_A", W)
Qw, Rw = torch.linalg.qr(W)
emit("QR_WIDE_Q", Qw); emit("QR_WIDE_R", Rw)

# ---- linalg_eigh: symmetric S [2, 4, 4]; eigvalsh ----
q = orthogonal(4)
S = (q @ torch.diag_embed(torch.tensor([-2.0, -0.5, 1.0, 3.0])) @ q.mT).requires_grad_()
emit("EIGH_A", S.detach())
L, V = torch.linalg.eigh(S)
emit("EIGH_L", L.detach()); emit("EIGH_V", V.detach())
(ga,) = grads([L, V], [S], ["EIGH_GL", "EIGH_GV"])
emit("EIGH_GA", ga)
(ga,) = grads([torch.linalg.eigvalsh(S)], [S], ["EIGVALSH_GL"])
emit("EIGVALSH_GA", ga)
(ga,) = grads([torch.linalg.eigh(S)[1]], [S], ["EIGH_V_ONLY_GV"])
emit("EIGH_V_ONLY_GA", ga)

# ---- linalg_svd: tall T [2, 5, 4] (reduced), wide Wd [2, 3, 5] (full_matrices); svdvals ----
def with_singular_values(m, n, s):
    k = len(s)
    return orthogonal(m)[..., :k] @ torch.diag_embed(torch.tensor(s)) @ orthogonal(n)[..., :k, :]


T = with_singular_values(5, 4, [3.0, 2.0, 1.0, 0.5]).requires_grad_()
emit("SVD_TALL_A", T.detach())
U, s, Vh = torch.linalg.svd(T, full_matrices=False)
emit("SVD_TALL_U", U.detach()); emit("SVD_TALL_S", s.detach()); emit("SVD_TALL_VH", Vh.detach())
(ga,) = grads([U, s, Vh], [T], ["SVD_TALL_GU", "SVD_TALL_GS", "SVD_TALL_GVH"])
emit("SVD_TALL_GA", ga)
Wd = with_singular_values(3, 5, [2.5, 1.5, 0.8]).requires_grad_()
emit("SVD_WIDE_A", Wd.detach())
U, s, Vh = torch.linalg.svd(Wd, full_matrices=True)
emit("SVD_WIDE_U", U.detach()); emit("SVD_WIDE_S", s.detach()); emit("SVD_WIDE_VH", Vh.detach())
(ga,) = grads([U, s, Vh], [Wd], ["SVD_WIDE_GU", "SVD_WIDE_GS", "SVD_WIDE_GVH"])
emit("SVD_WIDE_GA", ga)
(ga,) = grads([torch.linalg.svdvals(T)], [T], ["SVDVALS_GS"])
emit("SVDVALS_GA", ga)
(ga,) = grads([torch.linalg.svd(Wd, full_matrices=False)[2]], [Wd], ["SVD_WIDE_VH_ONLY_GVH"])
emit("SVD_WIDE_VH_ONLY_GA", ga)

# ---- linalg_lu_factor: M [2, 4, 4] and the tall QR_A; lu_solve with the factors ----
M = torch.randn(2, 4, 4)
emit("LU_A", M)
LU, piv = torch.linalg.lu_factor(M)
emit("LU_LU", LU); emit("LU_PIVOTS", piv.long(), "int64_t")
B = torch.randn(2, 4, 2)
emit("LU_B", B); emit("LU_X", torch.linalg.lu_solve(LU, piv, B))
LUt, pivt = torch.linalg.lu_factor(A.detach())
emit("LU_TALL_LU", LUt); emit("LU_TALL_PIVOTS", pivt.long(), "int64_t")

# ---- linalg_lu: P, L, U of LU_A with gradients; of the wide QR_WIDE_A (values) ----
Mg = M.clone().requires_grad_()
P, L, U = torch.linalg.lu(Mg)
emit("LU_P", P.detach()); emit("LU_L", L.detach()); emit("LU_U", U.detach())
(ga,) = grads([L, U], [Mg], ["LU_GL", "LU_GU"])
emit("LU_GA", ga)
P, L, U = torch.linalg.lu(W)
emit("LU_WIDE_P", P); emit("LU_WIDE_L", L); emit("LU_WIDE_U", U)

# ---- linalg_matrix_norm of the tall T: nuc and 2 with gradients, -1 over dims (0, 2) kept ----
nuc = torch.linalg.matrix_norm(T, "nuc")
two = torch.linalg.matrix_norm(T, 2)
emit("NORM_NUC", nuc.detach()); emit("NORM_TWO", two.detach())
(ga,) = torch.autograd.grad(nuc.sum() + two.sum(), [T])
emit("NORM_GA", ga)
emit("NORM_MINUS_ONE_KEPT", torch.linalg.matrix_norm(T.detach(), -1, dim=(0, 2), keepdim=True))

print_header("tests/make_lapack_factor_refs.py")
