#!/usr/bin/python3
"""Writes the conformance cases of the resampling and adaptive pooling
operators added after make_cases.py's upsample cases (adaptive_max_pool2d,
upsample_bicubic2d.vec, upsample_nearest1d.vec, upsample_linear1d.vec,
upsample_nearest3d.vec, upsample_trilinear3d.vec and their backward
operators, _adaptive_avg_pool3d and its backward) into OUTDIR
(tests/conformance/cases), in the folder's format, with PyTorch 1.13:

    /usr/bin/python3 tests/conformance/make_cases_resample.py tests/conformance/cases

Every argument is written positionally. Inputs are seed-0 random values;
float outputs are computed in float64 from the same inputs and rounded to
the output dtype, int64 outputs (indices) are torch's own (asserted equal
to float64's). The backward cases take the gradient operator's own
arguments (for adaptive_max_pool2d_backward, the forward's indices)."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from case_writer import call, reference_cases, widened, write_case  # noqa: E402

OUT = sys.argv[1]
case = reference_cases(OUT)
A = torch.ops.aten
f32, f64 = torch.float32, torch.float64
torch.manual_seed(0)
# float32 against float64 rounded: a 16-tap weighted sum (weights up to 1.2
# in magnitude, of either sign) of N(0, 1) values, each tap rounded
F32 = (1e-5, 1e-5)


def r(*shape, dtype=f64):
    return torch.randn(*shape, dtype=dtype)


def values_and_indices(name, op, args, note):
    """A case of (values, int64 indices): values from float64 copies rounded
    to their dtype, indices torch's own (float64's must agree)."""
    native, ref = call(op, args), call(op, widened(args))
    assert torch.equal(native[1], ref[1]), name
    write_case(OUT, name, op, args, note, [ref[0].to(native[0].dtype), native[1]])
    return native


# ---- adaptive_max_pool2d, adaptive_max_pool2d_backward ----
AM, AMB = A.adaptive_max_pool2d.default, A.adaptive_max_pool2d_backward.default
x = r(2, 3, 7, 9)
x[0, 0, 0, :2] = float("nan")  # the last nan of a window wins
x[0, 1, 2:4, 2:5] = 0.25  # ties: the first position
x[1, 2, :3, :3] = float("-inf")  # a window of -inf keeps its first position
for name, xx, size, note in [("f64", x, [3, 4], "uneven windows, nan, ties, -inf"),
                             ("larger_f32", x.float(), [10, 12], "more outputs than inputs: overlapping windows"),
                             ("unbatched", x[1], [4, 2], "3-d input"),
                             ("global_f32", x.float(), [1, 1], "one window per plane"),
                             ("divides", r(1, 2, 8, 6), [4, 3], "sizes that divide: 2 x 2 windows")]:
    _, idx = values_and_indices(name, AM, [xx, size], note)
    case(name, AMB, [r(*idx.shape, dtype=xx.dtype), xx, idx], "adjoint of the forward, with its indices",
         F32 if xx.dtype == f32 else None)

# ---- upsample_bicubic2d.vec, upsample_bicubic2d_backward.vec ----
BC, BCB = A.upsample_bicubic2d.vec, A.upsample_bicubic2d_backward.vec
xi = r(2, 3, 5, 7)
for ac in (False, True):
    tag = "align" if ac else "noalign"
    for sname, xs, size, scales in [("size_up", xi, [11, 13], None), ("size_down", xi, [3, 4], None),
                                    ("size_same", xi, [5, 7], None), ("size_one", xi, [1, 1], None),
                                    ("scale2", xi, None, [2.0, 2.0]), ("scale_frac", xi, None, [1.7, 0.6]),
                                    ("from1", xi[:, :, :1, :2], [4, 3], None), ("big", xi[:1, :1], [23, 29], None)]:
        for dt in ((f64, f32) if sname in ("size_up", "scale_frac") else (f64,)):
            name = f"{sname}_{tag}" + ("_f32" if dt == f32 else "")
            inp = xs.to(dt)
            out = call(BC, [inp, size, ac, scales])
            tol = F32 if dt == f32 else None
            case(name, BC, [inp, size, ac, scales], f"{sname}, align_corners={ac}", tol)
            case(name, BCB, [r(*out.shape, dtype=dt), size, list(inp.shape), ac, scales],
                 f"adjoint of {sname}, align_corners={ac}", tol)

# ---- upsample_nearest1d / linear1d / nearest3d / trilinear3d .vec and backward ----
x1, x3 = r(2, 3, 7), r(2, 2, 3, 4, 5)
CASES_1D = [("size_up", [17], None), ("size_down", [4], None), ("size_same", [7], None), ("size_one", [1], None),
            ("scale2", None, [2.0]), ("scale_frac", None, [1.7])]
CASES_3D = [("size_up", [5, 7, 9], None), ("size_down", [2, 3, 2], None), ("size_one", [1, 1, 1], None),
            ("scale2", None, [2.0, 2.0, 2.0]), ("scale_frac", None, [1.7, 0.6, 2.5])]
for op_name, xs, cases, linear in [("upsample_nearest1d", x1, CASES_1D, False),
                                   ("upsample_linear1d", x1, CASES_1D, True),
                                   ("upsample_nearest3d", x3, CASES_3D, False),
                                   ("upsample_trilinear3d", x3, CASES_3D, True)]:
    fwd, bwd = getattr(A, op_name).vec, getattr(A, op_name + "_backward").vec
    for ac in ((False, True) if linear else (None,)):
        tag = "" if ac is None else ("_align" if ac else "_noalign")
        for sname, size, scales in cases:
            for dt in ((f64, f32) if sname in ("size_up", "scale_frac") else (f64,)):
                name = sname + tag + ("_f32" if dt == f32 else "")
                inp = xs.to(dt)
                fargs = [inp, size, scales] if ac is None else [inp, size, ac, scales]
                out = call(fwd, fargs)
                tol = F32 if dt == f32 else None
                case(name, fwd, fargs, f"{op_name} {sname}" + ("" if ac is None else f", align_corners={ac}"), tol)
                g = r(*out.shape, dtype=dt)
                bargs = [g, size, list(inp.shape), scales] if ac is None else [g, size, list(inp.shape), ac, scales]
                case(name, bwd, bargs, f"adjoint of {op_name} {sname}", tol)

# ---- _adaptive_avg_pool3d, _adaptive_avg_pool3d_backward ----
AA3, AA3B = A._adaptive_avg_pool3d.default, A._adaptive_avg_pool3d_backward.default
xa = r(2, 3, 5, 7, 6)
for name, xx, size, note in [("f64", xa, [3, 4, 2], "uneven windows"),
                             ("larger_f32", xa.float(), [7, 9, 8], "more outputs than inputs: overlapping windows"),
                             ("unbatched", xa[1], [2, 3, 5], "4-d input"),
                             ("divides", xa[:, :, :4, :6, :6], [2, 3, 2], "sizes that divide")]:
    tol = F32 if xx.dtype == f32 else None
    out = call(AA3, [xx, size])
    case(name, AA3, [xx, size], note, tol)
    case(name, AA3B, [r(*out.shape, dtype=xx.dtype), xx], "adjoint of the forward", tol)
