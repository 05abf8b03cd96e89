#!/usr/bin/python3
"""Writes the conformance cases of the special functions (lgamma, digamma,
polygamma, erfinv, erfc, i0, special_i0e / i1 / i1e, special_ndtri,
special_entr, logit, logit_backward, sinc, hypot, copysign.Tensor,
heaviside, special_xlog1py and the in-place forms lgamma_, digamma_,
erfinv_, erfc_, i0_, sinc_, logit_, hypot_, copysign_.Tensor) into OUTDIR
(tests/conformance/cases), with PyTorch 1.13:

    /usr/bin/python3 tests/conformance/make_cases_special.py tests/conformance/cases

Inputs are fixed edge values (poles, signed zeros, +-inf, nan, the ends of
the domains, large arguments) and seed-0 random ones; expected float outputs
are torch's float64 results rounded to the output dtype. erfinv's inputs
stay within |x| <= 1 - 1e-8: closer to +-1 torch 1.13's float64 kernel
loses digits (tests/test_special.c checks tjit's values there against
mpmath)."""
import os, sys
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from case_writer import reference_cases, write_case  # noqa: E402

case = reference_cases(sys.argv[1])
A = torch.ops.aten
f32, f64 = torch.float32, torch.float64
torch.manual_seed(0)
nan, inf = float("nan"), float("inf")

r = torch.randn(3, 4, dtype=f64) * 3
pos = torch.rand(3, 4, dtype=f64) * 5 + 0.05
unit = torch.rand(3, 4, dtype=f64)

# the gamma family: poles at 0 and the negative integers, signed zeros,
# negative non-integers (reflection), the positive root of digamma, large x
gam = torch.tensor([0.0, -0.0, 1.0, 2.0, -1.0, -2.0, -2.5, -0.5, 0.5, 1.4616321449683622, 1e-8, 3.7, 9.99, 10.0,
                    11.3, 100.5, 1e6, 1e20, -7.25, -3.999, inf, -inf, nan, 170.5, 35.0, 1e-300], dtype=f64)
for dt, sfx in [(f32, "f32"), (f64, "f64")]:
    g = gam.to(dt)
    case(f"edges_{sfx}", A.lgamma.default, [g], "poles (inf), signed zeros, negative x, large x, inf, nan")
    case(f"edges_{sfx}", A.digamma.default, [g], "+0 -> -inf, -0 -> inf, nan at the negative integers and -inf")
    for n in range(5):
        if n == 1 and dt == f32:  # ATen's float32 trigamma computes in float32: at the poles -1, -2, ...
            # its sin(pi x) is float pi's rounding error, and the value not the float64 one rounded
            write_case(sys.argv[1], f"n1_edges_{sfx}", A.polygamma.default, [n, g],
                       "polygamma(1, x) at poles, negative x, large x: torch's own float32 result",
                       torch.polygamma(n, g))
            continue
        case(f"n{n}_edges_{sfx}", A.polygamma.default, [n, g], f"polygamma({n}, x) at poles, negative x, large x")
    case(f"random_{sfx}", A.lgamma.default, [r.to(dt)], "seed-0 values")
    case(f"random_{sfx}", A.digamma.default, [r.to(dt)], "seed-0 values")
    case(f"n2_random_{sfx}", A.polygamma.default, [2, r.to(dt)], "seed-0 values")
case("i64", A.lgamma.default, [torch.tensor([1, 2, 5, 0, -3])], "int64 computes in float32")
case("n1_i64", A.polygamma.default, [1, torch.tensor([[1, 2], [3, 7]])], "int64 computes in float32")
case("empty", A.digamma.default, [torch.zeros(0, 3)], "empty")
case("n3_0d", A.polygamma.default, [3, torch.tensor(0.25, dtype=f64)], "0-dim")

erfinv_x = torch.tensor([-1.0, 1.0, 0.0, -0.0, 0.5, -0.5, 0.3, 0.9, 0.999, 1 - 1e-8, -(1 - 1e-8), 1e-20, 0.49999,
                         0.50001, 1.5, nan, -2.0, 0.7, -0.123, inf], dtype=f64)
erfc_x = torch.tensor([0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 3.0, 5.0, 10.0, 26.0, 27.0, -6.0, 1e-10, inf, -inf, nan],
                      dtype=f64)
ndtri_x = torch.tensor([0.0, 1.0, 0.5, 1e-300, 1e-20, 1e-8, 0.02425, 0.1, 0.3, 0.7, 0.97575, 0.999, 1 - 1e-12,
                        1 - 1e-16, nan, -0.1, 1.1, 0.49, 0.51, inf], dtype=f64)
bessel_x = torch.tensor([0.0, -0.0, 1.0, -1.0, 5.0, -5.0, 29.9, 30.1, -30.1, 50.0, 100.0, 700.0, 713.0, inf, -inf,
                         nan, 1e-10, 2.5, -12.3, 300.0], dtype=f64)
entr_x = torch.tensor([0.0, -0.0, 1.0, 0.5, 1e-30, 2.0, 100.0, -1.0, -1e-10, inf, -inf, nan], dtype=f64)
sinc_x = torch.tensor([0.0, -0.0, 0.5, -0.5, 1.0, 2.0, -3.0, 1e-10, 0.25, 1e5 + 0.5, inf, -inf, nan], dtype=f64)
for dt, sfx in [(f32, "f32"), (f64, "f64")]:
    case(f"edges_{sfx}", A.erfinv.default, [erfinv_x.to(dt)], "+-1 -> +-inf, nan outside [-1, 1], near +-1")
    case(f"edges_{sfx}", A.erfc.default, [erfc_x.to(dt)], "signed zeros, the underflow at ~27, +-inf, nan")
    case(f"edges_{sfx}", A.special_ndtri.default, [ndtri_x.to(dt)], "0 -> -inf, 1 -> inf, nan outside [0, 1], tails")
    for op in [A.i0.default, A.special_i0e.default, A.special_i1.default, A.special_i1e.default]:
        case(f"edges_{sfx}", op, [bessel_x.to(dt)], "signed zeros, the series / asymptotic switch at 30, "
             "overflow past 709.78, +-inf, nan")
    case(f"edges_{sfx}", A.special_entr.default, [entr_x.to(dt)], "0 at 0, -inf below, nan kept")
    case(f"edges_{sfx}", A.sinc.default, [sinc_x.to(dt)], "1 at 0, zeros at the integers, +-inf -> nan")
    case(f"random_{sfx}", A.erfinv.default, [(unit * 2 - 1).to(dt)], "seed-0 values in (-1, 1)")
    case(f"random_{sfx}", A.erfc.default, [r.to(dt)], "seed-0 values")
    case(f"random_{sfx}", A.special_ndtri.default, [unit.to(dt)], "seed-0 values in (0, 1)")
    case(f"random_{sfx}", A.i0.default, [r.to(dt)], "seed-0 values")
    case(f"random_{sfx}", A.special_i1e.default, [r.to(dt)], "seed-0 values")
    case(f"random_{sfx}", A.sinc.default, [r.to(dt)], "seed-0 values")
case("i64", A.erfc.default, [torch.tensor([0, 1, -2])], "int64 computes in float32")
case("bool", A.i0.default, [torch.tensor([True, False])], "bool computes in float32")

logit_x = torch.tensor([0.0, 1.0, 0.5, 0.25, 0.75, 1e-7, 1 - 1e-7, -0.5, 1.5, inf, -inf, nan, 1e-3, 0.999],
                       dtype=f64)
for dt, sfx in [(f32, "f32"), (f64, "f64")]:
    x = logit_x.to(dt)
    case(f"none_{sfx}", A.logit.default, [x, None], "no eps: +-inf at 1 / 0, nan outside [0, 1]")
    # float32 cases take eps with 1 - eps exact in float32: ATen's float32
    # kernel forms 1 - eps in float32, the float64 reference in float64
    eps = 1e-6 if dt == f64 else 2.0 ** -20
    case(f"eps_{sfx}", A.logit.default, [x, eps], "eps clamps")
    case(f"eps0_{sfx}", A.logit.default, [x, 0.0], "eps 0 clamps to [0, 1]")
    gx = torch.linspace(-2, 2, 14, dtype=f64).to(dt)
    case(f"none_{sfx}", A.logit_backward.default, [gx, x, None], "no eps: nan outside [0, 1], +-inf at the ends")
    case(f"eps_{sfx}", A.logit_backward.default, [gx, x, 2.0 ** -7], "eps 1/128: 0 outside [eps, 1 - eps], nan kept")
case("random_bcast_f32", A.logit_backward.default, [torch.randn(4).float(), unit.float(), None],
     "grad_output [4] broadcast with self [3, 4]")
case("i64", A.logit.default, [torch.tensor([0, 1, 2]), None], "int64 computes in float32")

ha = torch.tensor([0.0, -0.0, 3.0, -3.0, 1e300, 1e-300, inf, -inf, nan, inf, 5.0, -2.5], dtype=f64)
hb = torch.tensor([0.0, 0.0, 4.0, -4.0, 1e300, 1e-300, nan, 1.0, 1.0, nan, -0.0, nan], dtype=f64)
for dt, sfx in [(f32, "f32"), (f64, "f64")]:
    a, b = ha.to(dt), hb.to(dt)
    case(f"edges_{sfx}", A.hypot.default, [a, b], "no overflow, inf beats nan, signed zeros")
    case(f"edges_{sfx}", A.copysign.Tensor, [a, b], "the sign bit of other, -0 and nan included")
    case(f"edges_{sfx}", A.heaviside.default, [a, b], "values where self is 0, nan self gives 0")
    case(f"edges_{sfx}", A.special_xlog1py.default, [a, b], "0 where self is 0, nan where other is nan")
    case(f"bcast_{sfx}", A.hypot.default, [r.to(dt), pos[0].to(dt)], "[3, 4] with [4]")
    case(f"bcast_{sfx}", A.special_xlog1py.default, [r.to(dt), pos[:, :1].to(dt)], "[3, 4] with [3, 1]")
case("i64_f32", A.copysign.Tensor, [torch.tensor([1, -2, 3]), torch.tensor([-1.0, 2.0, -0.0])],
     "int64 self with float32 other: float32")
case("i64_i64", A.copysign.Tensor, [torch.tensor([1, -2, 3]), torch.tensor([-1, 2, 0])], "two int64: float32")
case("f32_f64", A.special_xlog1py.default, [r.float(), pos.double()], "float32 with float64: float64")

# the in-place forms, float self
for op, x in [(A.lgamma_.default, [r]), (A.digamma_.default, [r]), (A.erfinv_.default, [unit * 2 - 1]),
              (A.erfc_.default, [r]), (A.i0_.default, [r]), (A.sinc_.default, [r]), (A.logit_.default, [unit, None]),
              (A.logit_.default, [unit, 0.25]), (A.hypot_.default, [r, pos[0]]),
              (A.copysign_.Tensor, [pos, r])]:
    for dt, sfx in [(f32, "f32"), (f64, "f64")]:
        args = [a.to(dt) if isinstance(a, torch.Tensor) else a for a in x]
        name = f"{sfx}" if len(x) == 1 or not isinstance(x[1], (float, type(None))) else \
            f"{'none' if x[1] is None else 'eps'}_{sfx}"
        case(name, op, args, "in place, seed-0 values")
