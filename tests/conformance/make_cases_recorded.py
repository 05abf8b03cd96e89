#!/usr/bin/python3
"""Writes the conformance cases of operators that torch 1.13's make_fx
records of ordinary PyTorch code (bernoulli.p, whose cases serve
bernoulli_.float, recorded by a training-mode dropout; bitwise_not;
floor_divide and its Scalar overload; xlogy.Tensor; norm.ScalarOpt_dim)
into OUTDIR (tests/conformance/cases), in the folder's final format, with
PyTorch 1.13:

    /usr/bin/python3 tests/conformance/make_cases_recorded.py tests/conformance/cases

Every argument is written positionally, keyword-only ones included. Inputs
are fixed values (seed 0 for the random ones); expected float outputs are
computed in float64 from the same inputs and rounded to the output dtype,
integer and bool ones are torch's. bernoulli.p draws: its cases take p = 0
and p = 1 only, whose results every generator gives alike."""
import os, sys
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from case_writer import reference_cases  # noqa: E402

case = reference_cases(sys.argv[1])
A = torch.ops.aten
f32, f64, i64, b8 = torch.float32, torch.float64, torch.int64, torch.bool
torch.manual_seed(0)


x = torch.randn(3, 4, dtype=f64)

case("p1_f32", A.bernoulli.p, [x.to(f32), 1.0, None], "p = 1: ones of self's shape and dtype")
case("p0_f64", A.bernoulli.p, [x, 0.0, None], "p = 0: zeros")
case("p1_i64", A.bernoulli.p, [torch.tensor([[3, -4], [0, 9]]), 1.0, None], "int64 self keeps its dtype")
case("p0_bool_0d", A.bernoulli.p, [torch.tensor(True), 0.0, None], "0-dim bool self")
case("p1_empty", A.bernoulli.p, [torch.zeros(0, 3), 1.0, None], "an empty self")

b = torch.tensor([[True, False, True], [False, False, True]])
case("bool", A.bitwise_not.default, [b], "~mask")
case("i64", A.bitwise_not.default, [torch.tensor([0, 5, -3, -2**63, 2**63 - 1])], "~x = -1 - x, wrapping at the ends")
case("bool_0d", A.bitwise_not.default, [torch.tensor(False)], "0-dim")
case("i64_empty", A.bitwise_not.default, [torch.zeros(0, 2, dtype=i64)], "empty")

nan, inf = float("nan"), float("inf")
fa = torch.tensor([7, -7, 7, -7, 5.5, -5.5, 0.0, -0.0, 3, 1, inf, -inf, nan, 2, 1e20, 0.3], dtype=f64)
fb = torch.tensor([2, 2, -2, -2, 2, -2, 3, 3, 0, -0.0, 2, 2, 2, inf, 3, 0.1], dtype=f64)
case("signs_zeros_inf_f32", A.floor_divide.default, [fa.to(f32), fb.to(f32)], "floors: -7 // 2 is -4; x // 0 is +-inf or nan")
case("signs_zeros_inf_f64", A.floor_divide.default, [fa, fb], "as float32")
case("i64", A.floor_divide.default, [torch.tensor([7, -7, 7, -7, 0, -2**63 + 1, 5]), torch.tensor([2, 2, -2, -2, 3, -1, 7])],
     "integer floor division")
case("bcast_i64_by_f32", A.floor_divide.default, [torch.tensor([[7], [-7], [9]]), torch.tensor([2.0, -0.5])],
     "int64 by float32 broadcast: float32")
case("f32_by_0d", A.floor_divide.default, [x.to(f32) * 10, torch.tensor(3.0)], "by a 0-dim tensor")
case("i64_by_int", A.floor_divide.Scalar, [torch.tensor([7, -7, 9, 0]), 2], "y // 2: int64 stays int64")
case("i64_by_float", A.floor_divide.Scalar, [torch.tensor([7, -7, 9, 0]), 2.5], "int64 // 2.5: float32")
case("f64_by_neg", A.floor_divide.Scalar, [fa, -0.5], "float64 // -0.5, with zeros, inf and nan")
case("f32_by_zero", A.floor_divide.Scalar, [fa.to(f32), 0.0], "x // 0.0: +-inf, nan")

xa = torch.tensor([0., 0., 0., nan, 1., 2., 0.5, 3., -1.5, 1e-3, 0., 2.], dtype=f64)
ya = torch.tensor([0., nan, -1., 1., nan, -1., 0.25, inf, 2., 0., inf, 1.], dtype=f64)
case("edges_f32", A.xlogy.Tensor, [xa.to(f32), ya.to(f32)], "0 where self == 0 (other 0, -1, inf too), nan where other is nan")
case("edges_f64", A.xlogy.Tensor, [xa, ya], "as float32")
case("bcast_f32", A.xlogy.Tensor, [x.to(f32).abs(), torch.rand(4)], "self [3, 4], other [4]")
case("i64_f32", A.xlogy.Tensor, [torch.tensor([0, 2, 3]), torch.tensor([5, 4, 1])], "int64 operands: float32")
case("empty_f32", A.xlogy.Tensor, [torch.zeros(0, 3), torch.rand(3)], "empty")

y = torch.randn(2, 3, 4, dtype=f64)
y[0, 1, 2] = 0.0
case("p2_dim1_keepdim_f32", A.norm.ScalarOpt_dim, [y.to(f32), 2.0, [1], True], "F.normalize: p 2.0, keepdim")
case("p2_int_dim1_f32", A.norm.ScalarOpt_dim, [y.to(f32), 2, [1], False], "x.norm(dim=1): p int 2")
case("pnone_dims_f64", A.norm.ScalarOpt_dim, [y, None, [0, -1], False], "p None is 2; two dims, one negative")
case("p1_f64", A.norm.ScalarOpt_dim, [y, 1, [2], False], "p 1")
case("pinf_f32", A.norm.ScalarOpt_dim, [y.to(f32), inf, [-1], True], "p inf: max |x|")
case("p0_f32", A.norm.ScalarOpt_dim, [y.to(f32), 0, [2], False], "p 0: non-zeros counted")
case("p3_f64", A.norm.ScalarOpt_dim, [y, 3.0, [1], False], "p 3")
case("0d_f32", A.norm.ScalarOpt_dim, [torch.tensor(-2.5), 2, [0], False], "0-dim self, dim 0")
