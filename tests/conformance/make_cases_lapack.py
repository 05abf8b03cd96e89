#!/usr/bin/python3
"""Writes the conformance cases of the LAPACK operators
(linalg_solve_triangular, _linalg_solve_ex, linalg_lu_solve (the
operator of the solve's and determinants' gradients in torch's recorded
backward graphs), linalg_inv_ex, _linalg_det, _linalg_slogdet, linalg_cholesky_ex,
cholesky_solve) into OUTDIR (tests/conformance/cases), with PyTorch 1.13:

    /usr/bin/python3 tests/conformance/make_cases_lapack.py tests/conformance/cases

Every argument is written positionally, keyword-only ones included. Inputs
are well-conditioned seed-0 matrices (A = Q diag(d) Q^T + n I plus noise, a
row rotation so that LU pivots; M M^T + n I for Cholesky) and seed-0 right-hand sides; expected float
outputs are computed in float64 from the same inputs and rounded to the
output dtype. pivots and info are torch's int32 values written as int64,
tjit's dtype for them. Each operator's gradient is a case of the operators
its formula calls: linalg_solve_triangular's of linalg_solve_triangular
(A^T, the other triangle), _linalg_solve_ex's of linalg_lu_solve with the
forward's LU and pivots (adjoint False: a contiguous A is factored as A^T).
The format's inputs are contiguous, so there is no case of a strided A (whose
LU torch computes of A itself): tests/test_linalg_lapack.c has those."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from case_writer import call, widened, write_case  # noqa: E402

OUT = sys.argv[1]
A_ = torch.ops.aten
f32, f64 = torch.float32, torch.float64
torch.manual_seed(0)


def case(name, op, args, note):
    """The case of op (every schema argument in args), one output file per
    return: floats computed in float64 and rounded to the dtype of op on
    args themselves, int32 returns (pivots, info) as int64 (write_case)."""
    native = call(op, args)
    wide = call(op, widened(args))
    native = native if isinstance(native, tuple) else (native,)
    wide = wide if isinstance(wide, tuple) else (wide,)
    write_case(OUT, name, op, args, note, [w.to(n.dtype) if n.is_floating_point() else n for n, w in zip(native, wide)])


def well_conditioned(batch, n, noise=0.5):
    q, _ = torch.linalg.qr(torch.randn(*batch, n, n, dtype=f64))
    d = 0.5 + torch.rand(*batch, n, dtype=f64)
    a = q @ torch.diag_embed(d) @ q.mT + n * torch.eye(n, dtype=f64) + noise * torch.randn(*batch, n, n, dtype=f64)
    return a.roll(1, -2)


A = well_conditioned([2], 4)
B = torch.randn(2, 4, 3, dtype=f64)
T = torch.randn(2, 4, 4, dtype=f64)
T.diagonal(dim1=-2, dim2=-1).add_(4)

# ---- linalg_solve_triangular: (self, B, upper, left, unitriangular)
st = A_.linalg_solve_triangular.default
case("upper_left_f64", st, [T, B, True, True, False], "batch 2, A X = B with A's upper triangle")
case("lower_left_f32", st, [T.to(f32), B.to(f32), False, True, False], "float32, lower triangle")
case("upper_right_unit_f64", st, [T, B.mT.contiguous(), True, False, True], "X A = B, unit diagonal (A's is ignored)")
case("bcast_f64", st, [T[0], torch.randn(3, 1, 4, 2, dtype=f64), False, True, False], "A [4, 4] against B [3, 1, 4, 2]")
case("grad_of_upper_f64", st, [T.mT, B, False, True, False], "the gradient's solve: A^T, the lower triangle")
case("empty_rhs_f64", st, [T, torch.zeros(2, 4, 0, dtype=f64), True, True, False], "k = 0 columns")

# ---- _linalg_solve_ex: (A, B, left, check_errors) -> (result, LU, pivots, info)
sx = A_._linalg_solve_ex.default
case("matrix_f64", sx, [A, B, True, False], "batch 2, pivoting; LU of A^T (A contiguous)")
case("matrix_f32", sx, [A.to(f32), B.to(f32), True, True], "float32, check_errors on a regular A")
case("right_f64", sx, [A, B.mT.contiguous(), False, False], "X A = B")
case("vector_f64", sx, [A, torch.randn(2, 4, dtype=f64), True, False], "B of A's shape without its last dim: vectors")
case("vector_1d_f64", sx, [A[1], torch.randn(4, dtype=f64), True, False], "B [4]")
case("bcast_f64", sx, [A[0], torch.randn(3, 4, 2, dtype=f64), True, False], "A [4, 4] against B [3, 4, 2]")
sing = torch.tensor([[[1.0, 2, 3], [2, 4, 6], [1, 0, 1]]], dtype=f64)
case("singular_f64", sx, [sing, torch.ones(1, 3, 1, dtype=f64), True, False],
     "rank 2: info 2 (getrf of A^T meets a zero pivot), inf / nan in result")

# ---- linalg_lu_solve: (LU, pivots, B, left, adjoint)
_, lu, piv, _ = torch.ops.aten._linalg_solve_ex(A, B)
ls = A_.linalg_lu_solve.default
case("grad_route_f64", ls, [lu, piv, B, True, False], "_linalg_solve_ex's LU and pivots (of A^T): solves A^T X = B")
case("adjoint_f64", ls, [lu, piv, B, True, True], "adjoint: solves A X = B")
case("right_f64", ls, [lu, piv, B.mT.contiguous(), False, False], "X A^T = B")
case("right_adjoint_f32", ls, [lu.to(f32), piv, B.mT.contiguous().to(f32), False, True], "float32, X A = B")

# ---- linalg_inv_ex: (A, check_errors) -> (inverse, info); _linalg_det -> (result, LU, pivots);
# _linalg_slogdet -> (sign, logabsdet, LU, pivots)
iv, dt, sd = A_.linalg_inv_ex.default, A_._linalg_det.default, A_._linalg_slogdet.default
case("batch_f64", iv, [A, False], "batch 2, pivoting")
case("check_errors_f32", iv, [A.to(f32), True], "float32, check_errors on a regular A")
case("empty_batch_f64", iv, [torch.zeros(0, 3, 3, dtype=f64), False], "no matrices")
case("batch_f64", dt, [A], "batch 2, pivoting; LU of A^T (A contiguous)")
case("f32", dt, [A.to(f32)], "float32")
case("singular_f64", dt, [sing], "rank 2: 0")
case("n0_f64", dt, [torch.zeros(2, 0, 0, dtype=f64)], "0x0 matrices: 1")
neg = A.clone(); neg[0, 0] *= -5  # a negative determinant
case("batch_f64", sd, [neg, ], "batch 2, signs -1 and +1")
case("f32", sd, [A.to(f32)], "float32")
case("singular_f64", sd, [sing], "rank 2: sign 0, logabsdet -inf")

# ---- linalg_cholesky_ex: (self, upper, check_errors) -> (L, info); cholesky_solve: (self, input2, upper)
M = torch.randn(2, 4, 4, dtype=f64)
P = M @ M.mT + 4 * torch.eye(4, dtype=f64)  # symmetric positive-definite
ch, cs = A_.linalg_cholesky_ex.default, A_.cholesky_solve.default
case("lower_f64", ch, [P, False, False], "batch 2, symmetric positive-definite")
case("upper_f32", ch, [P.to(f32), True, True], "float32, upper, check_errors on a positive-definite A")
case("indefinite_f64", ch, [torch.tensor([[4.0, 2], [2, -1]], dtype=f64), False, False],
     "the minor of order 2 is negative: info 2, potrf's partial factor")
Lw = torch.linalg.cholesky(P)
case("lower_f64", cs, [B, Lw, False], "batch 2: (L L^T) X = B")
case("upper_f32", cs, [B.to(f32), Lw.mT.contiguous().to(f32), True], "float32, (U^T U) X = B")
case("bcast_f64", cs, [torch.randn(3, 1, 4, 2, dtype=f64), Lw, False], "B [3, 1, 4, 2] against L [2, 4, 4]")
