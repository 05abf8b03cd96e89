#!/usr/bin/python3
"""Writes the conformance cases of arithmetic on the storage dtypes into
OUTDIR (tests/conformance/cases), with PyTorch 1.13:

    /usr/bin/python3 tests/conformance/make_cases_storage_compute.py tests/conformance/cases

float16: the operators' values computed in float64 from the float16 inputs
and rounded to float16 (torch 1.13 has no float16 CPU kernel for most of
them; tjit computes in float32 and rounds once, so the two differ by at
most one float16 unit in the last place: rtol 1e-3). Results that are not
floating point (indices, comparisons) are torch's own.
int32, int16, int8, uint8: torch's own results, exactly, wrap-around and
the promotion to int64 of sum and cumsum included."""
import os, sys
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from case_writer import call, widened, write_case  # noqa: E402

OUT = sys.argv[1]
A = torch.ops.aten
f16, f32, i32 = torch.float16, torch.float32, torch.int32
torch.manual_seed(0)
HALF_TOL = (1e-3, 1e-4)


def half_case(name, op, args, note, tol=HALF_TOL, float_dtype=f16):
    """op computed in float64, its floating results rounded to float_dtype."""
    want = call(op, widened(args))
    many = isinstance(want, (list, tuple))
    want = [w.to(float_dtype) if w.is_floating_point() else w for w in (want if many else [want])]
    write_case(OUT, f"{name}_f16", op, args, note, want if many else want[0], tol)


def int_case(name, op, args, note):
    """torch's own results on the integer inputs, dtypes kept."""
    want = call(op, args)
    write_case(OUT, name, op, args, note, list(want) if isinstance(want, tuple) else want, (0, 0),
               int32_as_int64=False)


x = (torch.randn(3, 5) * 2).to(f16)
y = (torch.randn(3, 5) * 2).to(f16)
row = torch.randn(5).to(f16)
pos = (torch.rand(3, 5) * 4 + 0.1).to(f16)
m = torch.randn(4, 6).to(f16)
n = torch.randn(6, 3).to(f16)
big = torch.tensor([60000.0, -65504.0, 1e-7, 3.0], dtype=f16)

# elementwise: one rounding of the float32 value
half_case("bcast", A.add.Tensor, [x, row, 1], "float16 + float16 broadcast, computed in float32")
half_case("alpha", A.sub.Tensor, [x, y, 2.5], "alpha 2.5")
half_case("overflow", A.mul.Tensor, [big, big], "60000 * 60000 -> inf; subnormal products")
half_case("plain", A.div.Tensor, [x, pos], "true division")
half_case("plain", A.exp.default, [x], "exp")
half_case("plain", A.log.default, [pos], "log")
half_case("plain", A.tanh.default, [x], "tanh")
half_case("plain", A.sigmoid.default, [x], "sigmoid")
half_case("plain", A.relu.default, [x], "relu")
half_case("plain", A.silu.default, [x], "silu")
half_case("plain", A.rsqrt.default, [pos], "rsqrt")
half_case("square", A.pow.Tensor_Scalar, [x, 2], "x ** 2")
half_case("plain", A.clamp.default, [x, -1.0, 1.5], "clamp to [-1, 1.5]")
half_case("plain", A.where.self, [x > 0, x, y], "where on a bool condition")
half_case("plain", A.maximum.default, [x, y], "maximum")
half_case("plain", A.eq.Tensor, [x, y.where(y > 0, x)], "a bool result")
half_case("f32_0dim", A.add.Tensor, [x, torch.tensor(0.1, dtype=f32), 1],
          "a float32 0-dim operand does not promote float16")
half_case("f32_dim", A.add.Tensor, [x, torch.randn(5), 1], "a float32 operand with dims promotes to float32",
          tol=(1e-5, 1e-6), float_dtype=f32)
# reductions: accumulated in float32, rounded once
half_case("dim", A.sum.dim_IntList, [x, [1], False, None], "sum over dim 1")
half_case("dim", A.mean.dim, [x, [0], True, None], "mean over dim 0, keepdim")
half_case("dim", A.amax.default, [x, [1], False], "amax")
half_case("dim", A.max.dim, [x, 1, False], "values float16, indices int64")
half_case("dim", A.argmax.default, [x, 1, False], "int64 indices")
half_case("dim", A.var.correction, [x, [1], 1, False], "var over dim 1")
half_case("dim", A.cumsum.default, [x, 1, None], "cumsum")
half_case("dim", A.logsumexp.default, [x, [1], False], "logsumexp")
# products, convolution, normalisation, losses, indexing
half_case("plain", A.mm.default, [m, n], "mm")
half_case("plain", A.addmm.default, [row[:3], m, n, 1, 1], "addmm")
half_case("plain", A.bmm.default, [torch.randn(2, 3, 4).to(f16), torch.randn(2, 4, 2).to(f16)], "bmm")
half_case("2d", A.convolution.default,
          [torch.randn(1, 2, 5, 5).to(f16), torch.randn(3, 2, 3, 3).to(f16), torch.randn(3).to(f16), [1, 1], [1, 1],
           [1, 1], False, [0, 0], 1], "3x3 convolution, padding 1")
half_case("last", A._softmax.default, [x, 1, False], "softmax")
half_case("last", A._log_softmax.default, [x, 1, False], "log_softmax")
half_case("rows", A.native_layer_norm.default, [x, [5], row, row, 1e-5], "layer_norm: mean and rstd float16 too")
half_case("2x2", A.max_pool2d_with_indices.default, [torch.randn(1, 2, 4, 4).to(f16), [2, 2], [2, 2], [0, 0], [1, 1],
                                                     False], "max_pool2d")
half_case("plain", A.embedding.default, [m, torch.tensor([3, 0, 3]), -1, False, False], "float16 weight rows")
half_case("plain", A.index_select.default, [x, 1, torch.tensor([4, 0])], "index_select")
half_case("mean", A.nll_loss_forward.default, [x.float().log_softmax(1).to(f16), torch.tensor([0, 4, 2]), None, 1,
                                               -100], "nll_loss, mean")
half_case("mean", A.mse_loss.default, [x, y, 1], "mse_loss")

# integers: int64 arithmetic truncated is the narrow type's wrap-around
a = torch.tensor([2147483647, -2147483648, 7, -7, 100000], dtype=i32)
b = torch.tensor([1, -1, 2, 3, 100000], dtype=i32)
int_case("wrap_i32", A.add.Tensor, [a, b, 1], "int32 overflow wraps")
int_case("wrap_i32", A.mul.Tensor, [a, b], "int32 products wrap")
int_case("i32", A.sub.Tensor, [a, b, 3], "alpha 3, wrapping")
d = torch.tensor([10, 3, 2, -3, -7], dtype=i32)  # torch's own INT_MIN // -1 traps
int_case("i32", A.floor_divide.default, [a, d], "floor division rounds down")
int_case("i32", A.remainder.Tensor, [a, d], "remainder takes the divisor's sign")
int_case("i32", A.bitwise_xor.Tensor, [a, b], "bitwise_xor")
int_case("i32", A.div.Tensor, [a, b], "true division: float32")
int_case("i32", A.abs.default, [a], "abs(INT_MIN) wraps")
int_case("i32", A.lt.Tensor, [a, b], "a bool result")
int_case("i32_i64_0dim", A.add.Tensor, [a, torch.tensor(2 ** 40 + 1), 1], "an int64 0-dim operand stays int32")
int_case("i32", A.sum.default, [a, None], "sum of int32 is int64")
int_case("i32", A.cumsum.default, [a, 0, None], "cumsum of int32 is int64")
int_case("i32", A.max.dim, [a.reshape(1, 5), 1, False], "values int32, indices int64")
int_case("i32", A.argmax.default, [a, 0, False], "argmax")
int_case("i32", A.sort.default, [a, 0, True], "descending sort")
int_case("i32_index", A.index_select.default, [torch.arange(6.0), 0, torch.tensor([5, 1], dtype=i32)],
         "int32 indices")
u = torch.tensor([200, 3, 0, 255], dtype=torch.uint8)
int_case("wrap_u8", A.add.Tensor, [u, torch.tensor([100, 4, 0, 1], dtype=torch.uint8), 1], "200 + 100 = 44")
int_case("wrap_u8", A.sub.Tensor, [u, torch.tensor([201, 3, 1, 0], dtype=torch.uint8), 1], "0 - 1 = 255")
int_case("wrap_i8", A.mul.Tensor, [torch.tensor([100, -128, 5], dtype=torch.int8), torch.tensor([3, -1, 5],
                                                                                                   dtype=torch.int8)],
         "int8 products wrap")
int_case("i16_u8", A.add.Tensor, [torch.tensor([30000, -5], dtype=torch.int16), torch.tensor([200, 1],
                                                                                              dtype=torch.uint8), 1],
         "int16 + uint8 is int16")
# other operands take the narrow dtype first (TensorIterator's cast to the common dtype)
int_case("u8_minus_one", A.eq.Scalar, [torch.tensor([255, 1], dtype=torch.uint8), -1], "-1 wraps to 255")
int_case("i8_200", A.lt.Scalar, [torch.tensor([5, -60], dtype=torch.int8), 200], "200 wraps to -56")
int_case("i8_i32_0dim", A.maximum.default, [torch.tensor([5, -60], dtype=torch.int8), torch.tensor(200, dtype=i32)],
         "a 0-dim int32 operand is cast to int8 first")
