#!/usr/bin/python3
"""Writes the conformance cases of the LAPACK factorizations (linalg_qr,
_linalg_eigh, _linalg_svd, linalg_lu_factor_ex, linalg_lu; the implicit
linalg_matrix_norm and its .str_ord through them) into OUTDIR
(tests/conformance/cases), with PyTorch 1.13:

    OPENBLAS_CORETYPE=Haswell /usr/bin/python3 tests/conformance/make_cases_lapack_factor.py tests/conformance/cases

Every argument is written positionally, keyword-only ones included; float
outputs are computed in float64 from the same inputs and rounded to the
output dtype, torch's int32 pivots and info written as int64 (tjit's
dtype for them). The vectors' signs are compared directly: Debian's torch
calls the same OpenBLAS LAPACK routines tjit does (geqrf / orgqr, syevd,
gesdd) on a column-major copy of A, so the signs are the same ones. (In
float32 they can differ from float64's: such a case expects torch's float32
outputs, as its note says.) For the gradients of eigen / singular vectors
to be defined, and the signs stable, inputs are well-conditioned with well-separated
spectra: symmetric A = Q diag(d) Q^T with d = -3, -1, 0.5, 2.5 (plus
seed-0 noise of 0.05), A = U diag(s) V^T with s = 4, 2.5, 1.5, 0.7, QR of
seed-0 Gaussian matrices (full rank)."""
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
    """The case of op: float returns computed in float64 and rounded to the
    dtype of op on args themselves, unless (float32) LAPACK's vectors have
    other signs there than in float64: then torch's float32 outputs (the
    same routine's in tjit), said in the note."""
    native = call(op, args)
    wide = call(op, widened(args))
    native = native if isinstance(native, tuple) else (native,)
    wide = wide if isinstance(wide, tuple) else (wide,)
    if not all(torch.allclose(n.double(), w, rtol=1e-4, atol=1e-4) for n, w in zip(native, wide) if n.is_floating_point()):
        assert all(n.dtype != f64 for n in native), name
        wide, note = native, note + " (expected: torch's float32 outputs; float64's vectors have other signs)"
    write_case(OUT, name, op, args, note, [w.to(n.dtype) if n.is_floating_point() else n for n, w in zip(native, wide)])


def orthogonal(batch, n):
    q, _ = torch.linalg.qr(torch.randn(*batch, n, n, dtype=f64))
    return q


def symmetric(batch, d):
    q = orthogonal(batch, len(d))
    a = q @ torch.diag_embed(torch.tensor(d, dtype=f64)) @ q.mT
    noise = 0.05 * torch.randn(*batch, len(d), len(d), dtype=f64)
    return a + noise + noise.mT


def with_singular_values(batch, m, n, s):
    k = len(s)
    return orthogonal(batch, m)[..., :k] @ torch.diag_embed(torch.tensor(s, dtype=f64)) @ orthogonal(batch, n)[..., :k, :]


# ---- linalg_qr: (A, mode) -> (Q, R)
qr = A_.linalg_qr.default
G = torch.randn(2, 4, 3, dtype=f64)
case("reduced_f64", qr, [G, "reduced"], "batch 2, 4x3: Q 4x3, R 3x3")
case("complete_f64", qr, [G, "complete"], "batch 2, 4x3: Q 4x4, R 4x3 (a zero row)")
case("r_f64", qr, [G, "r"], "R only; Q is an empty [0]")
W = torch.randn(3, 5, dtype=f64)
case("wide_f64", qr, [W, "reduced"], "3x5: Q 3x3, R 3x5")
case("square_f32", qr, [torch.randn(3, 3, 3, dtype=f64).to(f32), "reduced"], "float32, batch 3, 3x3")

# ---- _linalg_eigh: (A, UPLO, compute_v) -> (eigenvalues, eigenvectors)
eh = A_._linalg_eigh.default
S = symmetric([2], [-3.0, -1.0, 0.5, 2.5])
lower_only = S.tril() + 7 * torch.ones(4, 4, dtype=f64).triu(1)  # the upper triangle is not read
case("lower_f64", eh, [lower_only, "L", True], "batch 2, 4x4, distinct eigenvalues; upper triangle garbage")
upper_only = S.triu() - 5 * torch.ones(4, 4, dtype=f64).tril(-1)
case("upper_f64", eh, [upper_only, "U", True], "UPLO 'U': the lower triangle garbage")
case("values_only_f64", eh, [S, "L", False], "compute_v False: eigenvectors an empty [0]")
case("f32", eh, [S.to(f32), "L", True], "float32")

# ---- _linalg_svd: (A, full_matrices, compute_uv, driver) -> (U, S, Vh)
sv = A_._linalg_svd.default
T = with_singular_values([2], 5, 4, [4.0, 2.5, 1.5, 0.7])
case("tall_f64", sv, [T, False, True, None], "batch 2, 5x4, distinct singular values")
case("tall_full_f64", sv, [T, True, True, None], "full_matrices: U 5x5")
Wd = with_singular_values([], 3, 5, [4.0, 2.5, 1.5])
case("wide_full_f64", sv, [Wd, True, True, None], "3x5, full_matrices: Vh 5x5")
case("values_only_f32", sv, [T.to(f32), False, False, None], "float32, compute_uv False: U, Vh empty [0]")
case("f32", sv, [Wd.to(f32), False, True, None], "float32, 3x5")
case("empty_full_f64", sv, [torch.zeros(3, 0, dtype=f64), True, True, None], "3x0, full_matrices: U the identity")

# ---- linalg_lu_factor_ex: (A, pivot, check_errors) -> (LU, pivots, info)
lf = A_.linalg_lu_factor_ex.default
case("square_f64", lf, [torch.randn(2, 4, 4, dtype=f64), True, False], "batch 2, 4x4, LU of A itself")
case("tall_f64", lf, [G, True, False], "4x3: pivots [2, 3]")
case("wide_f32", lf, [W.to(f32), True, True], "float32, 3x5, check_errors on a full-rank A")
case("singular_f64", lf, [torch.tensor([[1.0, 2, 3], [2, 4, 6], [1, 0, 1]], dtype=f64), True, False],
     "rank 2: info 3 (U[2][2] is 0)")

# ---- linalg_lu: (A, pivot) -> (P, L, U)
lu = A_.linalg_lu.default
case("square_f64", lu, [torch.randn(2, 4, 4, dtype=f64), True], "batch 2, 4x4: A = P L U")
case("tall_f32", lu, [G.to(f32), True], "float32, 4x3: L 4x3, U 3x3")
case("wide_f64", lu, [W, True], "3x5: L 3x3, U 3x5")

# ---- linalg_matrix_norm (implicit): (self, ord, dim, keepdim, dtype); .str_ord likewise
mn, mns = A_.linalg_matrix_norm.default, A_.linalg_matrix_norm.str_ord
case("two_f64", mn, [T, 2, [-2, -1], False, None], "the largest singular value: 4")
case("minus_two_dims_f64", mn, [G, -2, [0, 2], True, None], "the smallest over dims (0, 2), kept")
case("one_f64", mn, [G, 1, [-2, -1], False, None], "the largest column sum of |A|")
case("minus_inf_f64", mn, [G, float("-inf"), [-1, 0], True, None], "the smallest row sum over dims (2, 0), kept")
case("inf_to_f64", mn, [G.to(f32), float("inf"), [-2, -1], False, f64], "float32 A, dtype float64")
case("nuc_f64", mns, [T, "nuc", [2, 1], False, None], "the sum of the singular values, dims (2, 1)")
case("fro_f32", mns, [G.to(f32), "fro", [-2, -1], True, None], "float32, the entries' 2-norm, kept")
