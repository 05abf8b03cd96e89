#!/usr/bin/python3
"""Writes the conformance cases of narrow, scatter_add_ and index_add_ into
OUTDIR (tests/conformance/cases), in the folder's final format (no gradient
keys, no torch_out files), with PyTorch 1.13:

    /usr/bin/python3 tests/conformance/make_cases_views_split.py tests/conformance/cases

Inputs are fixed values (seed 0 for the random ones); expected float
outputs are computed in float64 from the same inputs and rounded to the
output dtype, integer ones are torch's. The list-returning views (unbind.int,
chunk, split_with_sizes) have no cases: the format holds one file per
return and their number of pieces depends on the input."""
import os, sys
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from case_writer import reference_cases  # noqa: E402

case = reference_cases(sys.argv[1])
A = torch.ops.aten
f32, f64, i64, b8 = torch.float32, torch.float64, torch.int64, torch.bool
torch.manual_seed(0)


x = torch.randn(3, 4, 5, dtype=f64)
case("neg_start_f32", A.narrow.default, [x.to(f32), 1, -3, 2], "narrow(1, -3, 2): start counted from the end")
case("dim0_f64", A.narrow.default, [x, 0, 1, 2], "narrow(0, 1, 2)")
case("start_at_end_i64", A.narrow.default, [(x * 10).to(i64), 2, 5, 0], "start == size: an empty piece at the end")
case("empty_dim_bool", A.narrow.default, [torch.zeros(3, 0, dtype=b8), 1, -1, 0], "an empty dim wraps start -1 to 0")

I = lambda *s, hi: torch.randint(0, hi, s)
src = torch.randn(5, 4, 5, dtype=f64)
case("dim0_repeated_f32", A.scatter_add_.default, [x.to(f32), 0, I(4, 2, 5, hi=3), src.to(f32)],
     "indices repeated along dim 0; index smaller than src")
case("dim_neg1_f64", A.scatter_add_.default, [x, -1, I(3, 4, 7, hi=5), torch.randn(3, 4, 7, dtype=f64)],
     "dim -1, more positions than self's size along it")
case("i64", A.scatter_add_.default, [(x * 10).to(i64), 1, I(2, 3, 5, hi=4), (src[:3] * 10).to(i64)], "int64")
case("empty_index_f32", A.scatter_add_.default, [x.to(f32), 0, torch.zeros(0, 4, 5, dtype=i64), src.to(f32)],
     "an empty index leaves self as it was")

case("repeated_alpha1_f32", A.index_add_.default, [x.to(f32), 1, torch.tensor([3, 0, 3, 1]),
     torch.randn(3, 4, 5).to(f32), 1], "repeated indices accumulate; int alpha 1")
case("alpha_float_f64", A.index_add_.default, [x, -1, torch.tensor([4, 0]), torch.randn(3, 4, 2, dtype=f64), 2.5],
     "float alpha 2.5 along dim -1")
case("alpha_int_i64", A.index_add_.default, [(x * 10).to(i64), 0, torch.tensor([2, 2]),
     (torch.randn(2, 4, 5) * 10).to(i64), -3], "int64 with alpha -3")
case("0d_self_f64", A.index_add_.default, [torch.tensor(1.5, dtype=f64), 0, torch.tensor([0]),
     torch.tensor(2.0, dtype=f64), 2], "0-dim self and source")
