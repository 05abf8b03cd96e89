#!/usr/bin/python3
"""Writes the conformance cases of session 57's operators (searchsorted,
bucketize, cummax, cummin, logcumsumexp) into OUTDIR
(tests/conformance/cases), in the folder's format, with PyTorch 1.13:

    /usr/bin/python3 tests/conformance/make_cases_opsbatch4.py tests/conformance/cases

Every argument is written positionally. Inputs are fixed values (seed 0 for
the random ones); float outputs are computed in float64 from the same
inputs and rounded to the output dtype, int64 outputs (positions, indices)
are torch's. The two-output operators write both outputs."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from case_writer import call, reference_cases, widened, write_case  # noqa: E402

OUT = sys.argv[1]
case = reference_cases(OUT)
A = torch.ops.aten
f32, f64, i64 = torch.float32, torch.float64, torch.int64
torch.manual_seed(0)
nan, inf = float("nan"), float("inf")


def pair_case(name, op, args, note):
    """A two-output case: values from float64 copies rounded to the input
    dtype, int64 indices torch's own (float64 and the input dtype agree on
    them for these inputs: asserted), a float second output (std_mean's
    mean) from float64 too."""
    native = call(op, args)
    ref = call(op, widened(args))
    second = native[1]
    if second.is_floating_point(): second = ref[1].to(second.dtype)  # std_mean's mean
    else: assert torch.equal(ref[1], second), name
    write_case(OUT, name, op, args, note, [ref[0].to(native[0].dtype), second])


# ---- searchsorted, bucketize ----
b = torch.tensor([-2.0, -0.5, 0.0, 0.0, 1.5, 3.0], dtype=f64)
v = torch.tensor([[-3.0, -2.0, 0.0, 0.25], [1.5, 3.0, 4.0, -0.0]], dtype=f64)
bn = torch.sort(torch.randn(2, 3, 5, dtype=f64), dim=-1).values
vn = torch.randn(2, 3, 4, dtype=f64)
vn[0, 0, :2] = bn[0, 0, 1:3]  # exact hits
S = A.searchsorted.Tensor
case("left_f64", S, [b, v, False, False, None, None], "1-D boundaries with ties, hits on boundaries")
case("right_f32", S, [b.to(f32), v.to(f32), False, True, None, None], "right=True")
case("side_right", S, [b, v, False, False, "right", None], "side='right'")
case("side_left", S, [b, v, False, False, "left", None], "side='left'")
case("nd_rows", S, [bn, vn, False, False, None, None], "one boundaries row per values row")
case("nd_rows_right", S, [bn.to(f32), vn.to(f32), False, True, None, None], "N-D, right")
case("i64", S, [torch.tensor([1, 3, 3, 7]), torch.tensor([[0, 3], [5, 9]]), False, True, None, None], "int64")
case("mixed_i64_f32", S, [torch.tensor([1, 2, 3]), torch.tensor([2.5, 0.5, 3.0]), False, False, None, None],
     "int64 boundaries, float32 values: compared as float32")
case("mixed_f32_i64", S, [torch.tensor([1.0, 2.5, 3.0]), torch.tensor([2, 3]), False, False, None, None],
     "float32 boundaries, int64 values")
case("nan", S, [torch.tensor([1.0, nan]), torch.tensor([nan, 0.0, 2.0, inf]), False, False, None, None],
     "nan in boundaries and values: ATen's binary search moves past nan")
case("nan_right", S, [torch.tensor([-inf, 1.0, 2.0]), torch.tensor([nan, -inf, 1.0]), False, True, None, None],
     "nan and infinities, right")
unsorted = torch.tensor([3.0, 1.0, 2.0, 1.0], dtype=f64)
case("sorter", S, [unsorted, torch.tensor([2.0, 0.0, 4.0, 1.0, 1.5], dtype=f64), False, False, None,
                   torch.tensor([1, 3, 2, 0])], "unsorted boundaries read through sorter")
case("sorter_right_nd", S, [torch.tensor([[3.0, 1.0, 2.0], [0.0, -1.0, 5.0]]), torch.tensor([[1.0, 2.5], [0.0, 9.0]]),
                            False, True, None, torch.tensor([[1, 2, 0], [1, 0, 2]])], "N-D sorter, right")
case("0d_self", S, [b, torch.tensor(0.0, dtype=f64), False, False, None, None], "0-dim self: 0-dim result")
case("empty_boundaries", S, [torch.zeros(0), torch.tensor([1.0, -1.0]), False, False, None, None], "every position 0")
case("empty_self", S, [b, torch.zeros(0, 3, dtype=f64), False, False, None, None], "empty self")
case("strided", S, [b[::2], v.t(), False, False, None, None], "strided boundaries and values")
SS = A.searchsorted.Scalar
case("int", SS, [b, 0, False, False, None, None], "int Scalar against float64 boundaries")
case("float_i64", SS, [torch.tensor([1, 2, 3]), 2.5, False, False, None, None], "float Scalar, int64 boundaries")
case("right", SS, [b.to(f32), 1.5, False, True, None, None], "right")
B = A.bucketize.Tensor
case("f64", B, [v, b, False, False], "bucketize = searchsorted(boundaries, self)")
case("right_f32", B, [v.to(f32), b.to(f32), False, True], "right")
case("i64", B, [torch.tensor([[0, 3], [5, 9]]), torch.tensor([1, 3, 3, 7]), False, False], "int64")
BS = A.bucketize.Scalar
case("float", BS, [2.5, torch.tensor([1, 2, 3]), False, False], "float Scalar, int64 boundaries")
case("int_right", BS, [3, torch.tensor([1.0, 3.0, 5.0]), False, True], "int Scalar, right")

# ---- cummax, cummin ----
x = torch.randn(3, 5, 4, dtype=f64)
x[0, 1:3, 0] = x[0, 0, 0]  # ties
ties = torch.tensor([1.0, 3.0, 3.0, 2.0, 3.0, -1.0, -1.0])
edges = torch.tensor([1.0, 3.0, 3.0, nan, 2.0, nan, 5.0, -inf])
for op in (A.cummax.default, A.cummin.default):
    pair_case("dim1_f64", op, [x, 1], "3-d along dim 1 (inner 4), with ties")
    pair_case("last_f32", op, [x.to(f32), -1], "along the last dim")
    pair_case("first", op, [x, 0], "along dim 0")
    pair_case("ties", op, [ties, 0], "equal values: the last one's index")
    pair_case("nan_inf", op, [edges, 0], "a nan is taken and kept, later nans move the index")
    pair_case("i64", op, [torch.tensor([[3, 1, 4], [1, 5, 9], [2, 6, 5]]), 0], "int64 along dim 0")
    pair_case("bool", op, [torch.tensor([True, False, True, False]), 0], "bool")
    pair_case("0d", op, [torch.tensor(2.5, dtype=f64), -1], "0-dim: itself and 0")
    pair_case("empty", op, [torch.zeros(2, 0, dtype=f64), 1], "empty")
    pair_case("strided", op, [x.transpose(0, 2), 1], "a transposed self")
    pair_case("wide", op, [torch.randn(2, 3, 300, dtype=f64), 1], "inner 300: two column blocks")

# ---- logcumsumexp ----
L = A.logcumsumexp.default
case("dim1_f64", L, [x * 10, 1], "3-d along dim 1, large magnitudes")
case("last_f32", L, [x.to(f32) * 10, -1], "float32 along the last dim")
case("big", L, [torch.tensor([800.0, 801.0, -800.0, 1000.0], dtype=f64), 0], "no overflow where exp would")
case("inf_nan", L, [torch.tensor([-inf, -inf, 1.0, inf, inf, 2.0, nan, 3.0], dtype=f64), 0],
     "-inf adds nothing, +inf stays, nan propagates")
case("neg_inf_only", L, [torch.tensor([-inf, -inf], dtype=f64), 0], "all -inf")
case("0d", L, [torch.tensor(3.0, dtype=f64), 0], "0-dim: itself")
case("empty", L, [torch.zeros(0, 3, dtype=f64), 0], "empty")
case("strided", L, [x.transpose(0, 2), 0], "a transposed self")

# ---- kthvalue, median.dim, nanmedian.dim, median, nanmedian ----
# many ties (small integers as floats) so that the positions chosen among
# equal values are tested: quick_select's for kthvalue, the (value,
# position) order's for median; rows of 1 to 40 elements
tie = torch.randint(0, 4, (5, 37)).to(f64)
tie_nan = tie.clone()
tie_nan[1, 3] = nan
tie_nan[1, 20] = nan
tie_nan[3, ::2] = nan
all_nan = torch.full((3, 13), nan, dtype=f64)
for n in (1, 2, 3, 4, 5, 6, 7, 11, 16, 29):
    all_nan_n = torch.full((n,), nan, dtype=f64)
    pair_case(f"all_nan_{n}", A.nanmedian.dim, [all_nan_n, 0, False], "an all-nan row: libstdc++'s position")
K = A.kthvalue.default
for k in (1, 2, 9, 19, 37):
    pair_case(f"ties_k{k}", K, [tie, k, 1, False], "many ties along the last dim")
pair_case("nan_k36", K, [tie_nan, 36, -1, True], "nan counts as the largest, keepdim")
pair_case("dim0_f32", K, [x.to(f32), 2, 0, False], "along dim 0 (strided rows)")
pair_case("i64", K, [torch.randint(-3, 3, (4, 9)), 5, 1, False], "int64 with ties")
pair_case("0d", K, [torch.tensor(2.5, dtype=f64), 1, 0, False], "0-dim: itself and 0")
pair_case("transposed", K, [tie.t(), 3, 0, True], "a transposed self")
pair_case("empty_rows", K, [torch.zeros(0, 4, dtype=f64), 2, 1, False], "no rows, k within the dim")
for op in (A.median.dim, A.nanmedian.dim):
    pair_case("ties", op, [tie, 1, False], "many ties: the lower median of (value, position)")
    pair_case("ties_even", op, [tie[:, :36], -1, True], "even length, keepdim")
    pair_case("nan", op, [tie_nan, 1, False], "rows with nans (median: the first nan)")
    pair_case("dim0_f32", op, [x.to(f32), 0, False], "along dim 0")
    pair_case("i64", op, [torch.randint(-3, 3, (4, 9)), 1, False], "int64")
    pair_case("0d", op, [torch.tensor(-1.5, dtype=f64), 0, False], "0-dim")
    pair_case("all_nan_rows", op, [all_nan, 1, False], "all-nan rows of 13")
    pair_case("empty_rows", op, [torch.zeros(0, 4, dtype=f64), 1, True], "no rows")
for op in (A.median.default, A.nanmedian.default):
    case("ties", op, [tie], "all elements, ties")
    case("even_f32", op, [x.to(f32)[:, :, :2]], "an even count: the lower median")
    case("nan", op, [tie_nan], "with nans")
    case("all_nan", op, [all_nan], "all nan")
    case("i64", op, [torch.randint(-3, 3, (4, 9))], "int64")
    case("0d", op, [torch.tensor(7.0, dtype=f64)], "0-dim")
case("empty", A.median.default, [torch.zeros(0, dtype=f64)], "empty: nan")
case("empty_f32", A.nanmedian.default, [torch.zeros(2, 0)], "empty: nan")

# ---- std_mean.correction, count_nonzero ----
SM = A.std_mean.correction
sm_x = torch.randn(3, 4, 5, dtype=f64) * 3 + 1
pair_case("dims_f64", SM, [sm_x, [0, 2], None, False], "two dims, correction None (1)")
pair_case("all_f32", SM, [sm_x.to(f32), None, 0, True], "every dim, correction 0, keepdim")
pair_case("c2_neg_dim", SM, [sm_x, [-1], 2, False], "correction 2 along the last dim")
pair_case("big_correction", SM, [sm_x[:, :2], [1], 5, False], "correction past N: divisor 0, inf")
pair_case("nan", SM, [torch.tensor([[1.0, nan, 2.0], [3.0, 4.0, 5.0]], dtype=f64), [1], 1, False], "nan propagates")
pair_case("empty", SM, [torch.zeros(0, 3, dtype=f64), [0], 1, False], "an empty slice: nan")
CN = A.count_nonzero.dim_IntList
cn_x = torch.tensor([[[0.0, -0.0, nan, 1e-40], [inf, 0.0, 2.0, -3.0]], [[0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 0.0, 1.0]]])
case("dims", CN, [cn_x, [0, 2]], "nan and denormals count, -0 does not")
case("all", CN, [cn_x, []], "[]: every dim")
case("neg", CN, [cn_x.to(f64), [-1]], "the last dim, float64")
case("i64", CN, [torch.tensor([[0, 5, 0], [7, 0, -2]]), [1]], "int64")
case("bool", CN, [torch.tensor([[True, False], [True, True]]), [0]], "bool")
case("empty", CN, [torch.zeros(0, 3), [0]], "empty: zeros")
C0 = A.count_nonzero.default
case("none", C0, [cn_x, None], "None: every dim")
case("dim", C0, [cn_x, 1], "one dim")
case("0d", C0, [torch.tensor(3.0), None], "0-dim")

# ---- hardshrink, softshrink and their backward operators ----
sh_x = torch.tensor([-1.0, -0.5, -0.25, -0.0, 0.0, 0.3, 0.5, 0.7, nan, inf, -inf, 2.0])
sh_r = torch.randn(3, 4, 5, dtype=f64)
sh_g = torch.randn(3, 4, 5, dtype=f64)
for op in (A.hardshrink.default, A.softshrink.default):
    case("edges_f32", op, [sh_x, 0.5], "the bounds, signed zeros, nan and infinities")
    case("rand_f64", op, [sh_r, 0.75], "float64")
    case("int_lambd", op, [sh_r.to(f32) * 3, 2], "an int lambd")
    case("lambd0", op, [sh_x.to(f64), 0.0], "lambd 0")
    case("strided", op, [sh_r.transpose(0, 2), 0.5], "a transposed self")
    case("0d", op, [torch.tensor(-0.6, dtype=f64), 0.5], "0-dim")
    case("empty", op, [torch.zeros(0, 3), 0.5], "empty")
for op in (A.hardshrink_backward.default, A.softshrink_backward.default):
    case("edges_f32", op, [torch.arange(12.0) - 5, sh_x, 0.5], "the bounds, nan and infinities")
    case("rand_f64", op, [sh_g, sh_r, 0.75], "float64")
    case("bcast_grad", op, [sh_g[0, 0], sh_r, 0.5], "grad_output [5] against self [3, 4, 5]")
