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
