#!/usr/bin/python3
"""Writes the conformance cases of session 59's fixes into OUTDIR
(tests/conformance/cases), in the folder's final format, with PyTorch 1.13:

    /usr/bin/python3 tests/conformance/make_cases_fixes59.py tests/conformance/cases

- grid_sampler_2d and its backward with nan and infinite grid coordinates:
  zeros padding turns a bilinear sample with a non-finite coordinate into
  nan (nearest samples nothing), border and reflection padding send nan to
  0 and reflection sends +-inf to 0 too. torch 1.13's CPU backward crashes
  (an out-of-range gather) on nan with border or reflection padding and on
  +-inf with reflection: those backward calls have no cases.
- the Scalar overloads copysign.Scalar, special_xlog1py.self_scalar /
  .other_scalar, xlogy.Scalar_Self / .Scalar_Other, special_xlogy (all
  three) and the in-place copysign_.Scalar, xlogy_.Tensor,
  xlogy_.Scalar_Other; heaviside of int64 and bool; polygamma at the poles
  (the float32 cases expect torch's own float32 result: ATen's float32
  trigamma computes in float32) and polygamma_.
- special_log_ndtr: both branches, the far tails, inf and nan.
- the random fills uniform(_), normal_functional / normal_, exponential(_)
  and normal's four overloads at the parameters whose result draws nothing
  random (from == to, std 0, lambd inf): tjit's generator is not torch's.

Inputs are fixed values (seed 0 for the random ones); expected float outputs
are computed in float64 from the same inputs and rounded to the output dtype."""
import os, sys
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from case_writer import reference_cases, write_case  # noqa: E402

OUT = sys.argv[1]
case = reference_cases(OUT)
A = torch.ops.aten
f32, f64, i64 = torch.float32, torch.float64, torch.int64
nan, inf = float("nan"), float("inf")
torch.manual_seed(0)

# ---- grid_sampler_2d with non-finite coordinates ----
GS, GSB = A.grid_sampler_2d.default, A.grid_sampler_2d_backward.default
image = torch.randn(2, 3, 4, 5, dtype=f64)
edge = [nan, inf, -inf, 1e30, -1e30, 0.3]
# every pairing of an edge value with itself and with a finite coordinate
nonfinite = torch.tensor([[[[a, b] for a in edge] for b in [0.25, nan, inf, -inf, -1e30]]] * 2, dtype=f64)
infinite = torch.tensor([[[[a, b] for a in [inf, -inf, 1e30, 0.3]] for b in [0.25, inf, -inf]]] * 2, dtype=f64)
huge = torch.tensor([[[[a, b] for a in [1e30, -1e30, 7.7, 0.3]] for b in [0.25, 1e30, -3.1]]] * 2, dtype=f64)
PAD = {0: "zeros", 1: "border", 2: "reflection"}
for dt, sfx in [(f64, ""), (f32, "_f32")]:
    for pad in range(3):
        for mode in range(2):
            for align in (False, True):
                name = f"nonfinite_{'bilinear' if mode == 0 else 'nearest'}_{PAD[pad]}{'_align' if align else ''}{sfx}"
                case(name, GS, [image.to(dt), nonfinite.to(dt), mode, pad, align],
                     "grid with nan, +-inf and +-1e30 coordinates")
                # the backward calls torch survives
                g = (nonfinite if pad == 0 or mode == 1 else infinite if pad == 1 else huge).to(dt)
                gout = torch.randn(2, 3, g.shape[1], g.shape[2], dtype=f64).to(dt)
                args = [gout, image.to(dt), g, mode, pad, align, [True, True]]
                write_case(OUT, name, GSB, args, "gradients at nan / inf / huge grid coordinates",
                           [t.to(dt) for t in A.grid_sampler_2d_backward.default(
                               *[a.double() if isinstance(a, torch.Tensor) else a for a in args])])

# ---- Scalar overloads, heaviside of integers, polygamma at the poles ----
xs = torch.tensor([0.0, -0.0, 1.5, -2.25, 3.0, nan, inf, -inf, 1e-3, -7.0], dtype=f64)
ys = torch.tensor([0.0, 1.0, -0.5, 2.0, nan, 0.25, 3.0, -1.0, inf, 1e-8], dtype=f64)
ints = torch.tensor([[3, -4, 0], [7, 0, -1]])
for dt, sfx in [(f64, "f64"), (f32, "f32")]:
    case(f"neg_{sfx}", A.copysign.Scalar, [xs.to(dt), -1.0], "|x| with the sign of -1.0")
    case(f"negzero_{sfx}", A.copysign.Scalar, [xs.to(dt), -0.0], "-0.0 counts as negative")
    case(f"int_{sfx}", A.copysign.Scalar, [xs.to(dt), 2], "an int Scalar keeps the float dtype")
    case(f"other_{sfx}", A.special_xlog1py.other_scalar, [xs.to(dt), 0.5], "x * log1p(0.5), 0 at x = 0")
    case(f"other_nan_{sfx}", A.special_xlog1py.other_scalar, [xs.to(dt), nan], "nan everywhere")
    case(f"other_m1_{sfx}", A.special_xlog1py.other_scalar, [xs.to(dt), -1], "x * -inf, 0 at x = 0")
    case(f"self_{sfx}", A.special_xlog1py.self_scalar, [2.5, ys.to(dt)], "2.5 * log1p(y)")
    case(f"self_zero_{sfx}", A.special_xlog1py.self_scalar, [0, ys.to(dt)], "0 but at nan")
    case(f"other_{sfx}", A.xlogy.Scalar_Other, [xs.to(dt), 3.0], "x * log(3)")
    case(f"other_zero_{sfx}", A.xlogy.Scalar_Other, [xs.to(dt), 0], "x * -inf, 0 at x = 0")
    case(f"self_{sfx}", A.xlogy.Scalar_Self, [-1.5, ys.to(dt)], "-1.5 * log(y)")
    case(f"self_zero_{sfx}", A.xlogy.Scalar_Self, [0.0, ys.to(dt)], "0 but at nan")
    case(f"inplace_{sfx}", A.copysign_.Scalar, [xs.to(dt), -2.0], "in place")
    case(f"inplace_{sfx}", A.xlogy_.Tensor, [xs.to(dt), ys.to(dt)], "in place")
    case(f"inplace_{sfx}", A.xlogy_.Scalar_Other, [xs.to(dt), 2], "in place")
case("int_by_float", A.copysign.Scalar, [ints, -1.5], "int64 tensor, float Scalar: float32")
case("int_by_int", A.xlogy.Scalar_Other, [ints, 2], "int64 tensor, int Scalar: float32")
case("float_by_int", A.xlogy.Scalar_Self, [3, ints], "int Scalar, int64 tensor: float32")
case("int_by_float", A.special_xlog1py.other_scalar, [ints, 2.5], "int64 tensor, float Scalar: float32")
case("bool_self", A.special_xlog1py.self_scalar, [True, ys], "a bool Scalar self")

hx = torch.tensor([[-3, 0, 5, 0], [0, 2, -1, 0]])
case("int64", A.heaviside.default, [hx, torch.tensor([7, -2, 4, 0])], "int64: values where self is 0, else self > 0")
case("int64_bcast", A.heaviside.default, [hx, torch.tensor(9)], "int64 values broadcast")
case("bool", A.heaviside.default, [torch.tensor([True, False, False, True]), torch.tensor([False, True, False, True])],
     "bool: self or values")

poles = torch.tensor([0.0, -0.0, -1.0, -2.0, -3.0, -10.0, -0.5, 1.0], dtype=f64)
for n in range(5):
    case(f"poles_n{n}_f64", A.polygamma.default, [n, poles], "digamma: -inf at 0, inf at -0, nan at -1, -2, ...; "
         "trigamma: inf at 0, sin(pi x)'s rounding error at -1, ...; n >= 2: (-1)^(n+1) inf at every pole")
    # ATen's float32 trigamma computes in float32: its value at the poles is not
    # the float64 one rounded (which overflows to inf)
    p32 = poles.to(f32)
    write_case(OUT, f"poles_n{n}_f32", A.polygamma.default, [n, p32], "torch's own float32 result",
               torch.polygamma(n, p32))
case("n2", A.polygamma_.default, [torch.tensor([0.3, -1.5, 4.0, -2.0], dtype=f64), 2], "in place")
case("n1_f32", A.polygamma_.default, [torch.tensor([0.3, -1.5, 4.0, 7.25]), 1], "in place")
case("f64", A.special_xlogy.default, [xs, ys], "xlogy under another name")
case("self_f32", A.special_xlogy.self_scalar, [2, ys.to(f32)], "xlogy.Scalar_Self under another name")
case("other_f32", A.special_xlogy.other_scalar, [xs.to(f32), 0.5], "xlogy.Scalar_Other under another name")

# ---- special_log_ndtr: both branches, the erfc / asymptotic seam near
# -36.8, far tails, non-finite values; its gradient via autograd ----
ln = torch.tensor([-1e5, -300.0, -40.0, -37.0, -36.8, -36.7, -30.0, -10.0, -1.0000001, -1.0, -0.5, 0.0, -0.0, 3.0,
                   10.0, 40.0, inf, -inf, nan, 1e-3], dtype=f64)
for dt, sfx in [(f64, "f64"), (f32, "f32")]:
    case(f"edges_{sfx}", A.special_log_ndtr.default, [ln.to(dt)], "tails, the seams at -1 and -36.8, inf, nan")
    case(f"random_{sfx}", A.special_log_ndtr.default, [(torch.randn(3, 5, dtype=f64) * 8).to(dt)], "seed-0 values")
case("i64", A.special_log_ndtr.default, [torch.tensor([-40, -2, 0, 5])], "int64 computes in float32")
case("empty", A.special_log_ndtr.default, [torch.zeros(0, 2)], "empty")

# ---- the float random fills, at parameters whose result draws nothing
# random (the draws are tjit's Philox stream, not torch's numbers) ----
sf = torch.randn(2, 3, dtype=f64)
for dt, sfx in [(f64, "f64"), (f32, "f32")]:
    case(f"point_{sfx}", A.uniform.default, [sf.to(dt), 0.5, 0.5, None], "from == to: all from")
    case(f"point_{sfx}", A.uniform_.default, [sf.to(dt), -2.0, -2.0, None], "in place, from == to")
    case(f"std0_{sfx}", A.normal_functional.default, [sf.to(dt), -1.5, 0.0, None], "std 0: all mean")
    case(f"std0_{sfx}", A.normal_.default, [sf.to(dt), 3.0, 0.0, None], "in place, std 0")
    case(f"inf_{sfx}", A.exponential.default, [sf.to(dt), inf, None], "lambd inf: zeros")
    case(f"inf_{sfx}", A.exponential_.default, [sf.to(dt), inf, None], "in place, lambd inf")
    case(f"std0_{sfx}", A.normal.Tensor_float, [sf.to(dt), 0.0, None], "std 0: mean itself")
    case(f"std0_{sfx}", A.normal.float_Tensor, [2.5, torch.zeros(4, dtype=dt), None], "std zeros: all mean")
    case(f"std0_bcast_{sfx}", A.normal.Tensor_Tensor, [sf.to(dt), torch.zeros(3, dtype=dt), None],
         "std zeros broadcast: mean")
case("std0", A.normal.float_float, [3.0, 0.0, [2, 3], None, None, None, None, None], "float32 by default")
case("std0_f64", A.normal.float_float, [-1.0, 0.0, [4], None, f64, None, None, None], "float64")
case("mixed", A.normal.Tensor_Tensor, [sf.to(f32), torch.zeros(3, dtype=f64), None], "float32 mean, float64 std")
