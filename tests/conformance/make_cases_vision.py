#!/usr/bin/python3
"""Writes the conformance cases of the 3-D and vision operators (3-D
convolution and convolution_backward, 3-D pooling, adaptive max pooling,
grid sampling, the other upsampling modes) into OUTDIR
(tests/conformance/cases), in the folder's format, with PyTorch 1.13:

    /usr/bin/python3 tests/conformance/make_cases_vision.py tests/conformance/cases

Every argument is written positionally. Inputs are seed-0 random values;
float outputs are computed in float64 from the same inputs and rounded to
the output dtype, int64 outputs (indices) are torch's own (asserted equal
to float64's for these inputs)."""
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


def r(*shape, dtype=f64):
    return torch.randn(*shape, dtype=dtype)


def multi_case(name, op, args, note, tol=None):
    """A case with several outputs: float ones from float64 copies rounded
    to their dtype, int64 ones torch's own (float64's must agree); one the
    float64 call leaves undefined is undefined (torch 1.13's float32 3-D
    convolution_backward computes masked-out gradients all the same)."""
    native = call(op, args)
    ref = call(op, widened(args))
    outs = []
    for n, w in zip(native, ref):
        if n is None or w is None: outs.append(None)
        elif n.is_floating_point(): outs.append(w.to(n.dtype))
        else:
            assert torch.equal(n, w), name
            outs.append(n)
    write_case(OUT, name, op, args, note, outs, tol)


# ---- 3-D convolution ----
# float32 sums of C * kd * kh * kw products against float64's: the shared
# convolution cases' tolerance (1e-5 failed once by 2e-8, summed in another order)
CONV_F32 = (1e-4, 1e-5)
C, CB = A.convolution.default, A.convolution_backward.default
x, w, b = r(2, 3, 5, 6, 7), r(4, 3, 3, 2, 3), r(4)
case("3d_f64", C, [x, w, b, [1], [0], [1], False, [0], 1], "3-D, bias")
case("3d_f32", C, [x.float(), w.float(), b.float(), [1], [0], [1], False, [0], 1], "3-D, float32", CONV_F32)
case("3d_stride_pad_dil", C, [x, w, None, [2, 1, 2], [1, 2, 0], [1, 2, 1], False, [0], 1],
     "3-D, per-dim stride, padding, dilation, no bias")
xg, wg = r(1, 4, 4, 5, 5), r(6, 2, 2, 3, 1)
case("3d_groups2_f32", C, [xg.float(), wg.float(), r(6).float(), [1, 2, 1], [1], [1], False, [0], 2],
     "3-D, groups=2", CONV_F32)
case("3d_pointwise", C, [xg, r(5, 4, 1, 1, 1), r(5), [1], [0], [1], False, [0], 1], "3-D 1x1x1 kernel")
wt = r(3, 2, 2, 3, 2)
case("3d_transposed", C, [x, wt, r(2), [2, 1, 2], [1, 0, 1], [1], True, [1, 0, 0], 1],
     "3-D transposed, stride, padding, output_padding")
case("3d_transposed_groups_f32", C, [xg.float(), r(4, 3, 2, 2, 2).float(), None, [1], [0], [1, 2, 1], True, [0], 2],
     "3-D transposed, groups=2, dilation", CONV_F32)
case("3d_empty_batch", C, [r(0, 3, 4, 4, 4), w, b, [1], [0], [1], False, [0], 1], "3-D, empty batch")

go = r(2, 4, 3, 5, 5)
multi_case("3d_f64", CB, [go, x, w, [4], [1], [0], [1], False, [0], 1, [True, True, True]], "3-D, every gradient")
multi_case("3d_f32", CB, [go.float(), x.float(), w.float(), [4], [1], [0], [1], False, [0], 1, [True, True, True]],
     "3-D float32", CONV_F32)
go2 = r(2, 4, 3, 8, 3)
multi_case("3d_stride_pad_dil", CB, [go2, x, w, None, [2, 1, 2], [1, 2, 0], [1, 2, 1], False, [0], 1,
                               [True, True, False]], "3-D strided, no bias")
multi_case("3d_groups2", CB, [r(1, 6, 5, 3, 7), xg, wg, [6], [1, 2, 1], [1], [1], False, [0], 2, [True, True, True]],
     "3-D groups=2")
yt = call(C, [x, wt, None, [2, 1, 2], [1, 0, 1], [1], True, [1, 0, 0], 1])
multi_case("3d_transposed", CB, [r(*yt.shape), x, wt, [2], [2, 1, 2], [1, 0, 1], [1], True, [1, 0, 0], 1,
                           [True, True, True]], "3-D transposed")
multi_case("3d_no_weight_f32", CB, [go.float(), x.float(), w.float(), [4], [1], [0], [1], False, [0], 1,
                              [True, False, True]], "3-D, no weight gradient", CONV_F32)

# ---- 3-D pooling ----
MP, MPB = A.max_pool3d_with_indices.default, A.max_pool3d_with_indices_backward.default
AP, APB = A.avg_pool3d.default, A.avg_pool3d_backward.default
xp = r(2, 3, 5, 6, 7)
xp[0, 0, 0, 0, :3] = float("nan")  # a nan wins its window
xp[1, 1, 1:3, 1:3, 1:3] = 0.5  # ties: the first position
multi_case("f64", MP, [xp, [2], [], [0], [1], False], "2x2x2 windows, stride = kernel, nan and ties")
multi_case("f32_pad_stride", MP, [xp.float(), [3, 2, 3], [2, 1, 2], [1, 0, 1], [1], False], "per-dim, padding")
multi_case("dilation_ceil", MP, [xp, [2, 3, 2], [2, 2, 2], [1, 1, 0], [2, 1, 2], True], "dilation, ceil_mode")
multi_case("unbatched_f32", MP, [xp[0].float(), [3], [2], [1], [1], True], "4-d input, ceil_mode")


def max_backward_case(name, x, k, s, p, d, ceil):
    out, idx = call(MP, [x, k, s, p, d, ceil])
    case(name, MPB, [r(*out.shape, dtype=x.dtype), x, k, s, p, d, ceil, idx], "with the forward's indices")
    return out


max_backward_case("overlap_f64", xp, [3, 3, 3], [1, 2, 2], [1, 1, 1], [1, 1, 1], False)
max_backward_case("f32", xp.float(), [2, 2, 2], [2, 2, 2], [0, 0, 0], [1, 1, 1], True)
case("f64", AP, [xp.nan_to_num(), [2], [], [0], False, True, None], "2x2x2, stride = kernel")
case("pad_include_f32", AP, [xp.nan_to_num().float(), [3, 2, 3], [2, 1, 2], [1, 0, 1], False, True, None],
     "padding counted")
case("pad_exclude_ceil", AP, [xp.nan_to_num(), [3, 2, 3], [2, 2, 2], [1, 1, 1], True, False, None],
     "padding not counted, ceil_mode")
case("divisor_override", AP, [xp.nan_to_num()[0], [2, 3, 2], [1], [1, 1, 1], False, True, 5], "unbatched, divisor")
for name, (k, s, p, ceil, inc, div) in {"f64": ([2], [], [0], False, True, None),
                                        "pad_exclude_ceil": ([3, 2, 3], [2, 2, 2], [1, 1, 1], True, False, None),
                                        "divisor_f32": ([2, 3, 2], [1, 2, 1], [1, 1, 1], False, True, 5)}.items():
    xx = xp.nan_to_num().float() if name.endswith("f32") else xp.nan_to_num()
    out = call(AP, [xx, k, s, p, ceil, inc, div])
    case(name, APB, [r(*out.shape, dtype=xx.dtype), xx, k, s if s else k, p, ceil, inc, div], "adjoint of avg_pool3d")

# ---- grid_sampler_2d ----
GS, GSB = A.grid_sampler_2d.default, A.grid_sampler_2d_backward.default
xs = r(2, 3, 5, 6)
grid = torch.rand(2, 4, 7, 2, dtype=f64) * 2.6 - 1.3  # reaches past [-1, 1]
grid[0, 0, 0] = torch.tensor([0.0, 0.0])
for mode, mname in ((0, "bilinear"), (1, "nearest")):
    for pad, pname in ((0, "zeros"), (1, "border"), (2, "reflection")):
        for align in (False, True):
            name = "%s_%s%s" % (mname, pname, "_align" if align else "")
            dt = f32 if (pad + align) % 2 else f64
            case(name + ("_f32" if dt == f32 else ""), GS, [xs.to(dt), grid.to(dt), mode, pad, align],
                 "%s, padding %s, align_corners=%s" % (mname, pname, align))
            if mode == 0 or pad == 0:
                gout = r(2, 3, 4, 7, dtype=dt)
                multi_case(name + ("_f32" if dt == f32 else ""), GSB,
                           [gout, xs.to(dt), grid.to(dt), mode, pad, align, [True, True]],
                           "%s, padding %s, align_corners=%s: both gradients" % (mname, pname, align))
multi_case("input_only", GSB, [r(2, 3, 4, 7), xs, grid, 0, 1, False, [True, False]], "grad_input only")
