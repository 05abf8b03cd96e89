#!/usr/bin/python3
"""Writes the conformance cases of the operators whose result shape depends
on their input's values (nonzero, masked_select, index.Tensor with bool
masks) and of masked_scatter, index_put and index_put_ with bool masks, into
OUTDIR (tests/conformance/cases), in the folder's final format, with
PyTorch 1.13:

    /usr/bin/python3 tests/conformance/make_cases_masked.py tests/conformance/cases

Every argument is written positionally. Inputs are fixed values (seed 0 for
the random ones); expected float outputs are computed in float64 from the
same inputs and rounded to the output dtype, integer and bool ones are
torch's. The expected outputs' shapes are the counts of these inputs' true
or non-zero elements: the runner calls the operators eagerly."""
import os, sys
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from case_writer import reference_cases  # noqa: E402

case = reference_cases(sys.argv[1])
A = torch.ops.aten
f32, f64, i64, b8 = torch.float32, torch.float64, torch.int64, torch.bool
torch.manual_seed(0)
nan, inf = float("nan"), float("inf")


x = torch.randn(3, 4, dtype=f64)
x[0, 1] = 0.0
x3 = torch.randn(2, 3, 4, dtype=f64)
x3[x3.abs() < 0.5] = 0.0
m34 = x > 0
m3 = torch.tensor([True, False, True])
c4 = torch.tensor([False, True, True, False])

edge = torch.tensor([[0., -0., nan, 1e-40], [inf, 0, 0, -3]])
case("edges_f32", A.nonzero.default, [edge], "nan and denormals count, -0 does not")
case("zeros_f64", A.nonzero.default, [x3], "3-d, about half zeros")
case("i64", A.nonzero.default, [torch.tensor([[0, 5], [7, 0], [0, -2]])], "int64")
case("bool", A.nonzero.default, [m34], "a bool mask")
case("1d", A.nonzero.default, [torch.tensor([0., 2., 0., 3.])], "1-d: [count, 1]")
case("0d_true", A.nonzero.default, [torch.tensor(2.5)], "0-dim non-zero: [1, 0]")
case("0d_false", A.nonzero.default, [torch.tensor(0, dtype=i64)], "0-dim zero: [0, 0]")
case("all_zero", A.nonzero.default, [torch.zeros(2, 3)], "none: [0, 2]")
case("empty", A.nonzero.default, [torch.zeros(0, 3, dtype=b8)], "empty input: [0, 2]")

case("same_shape_f32", A.masked_select.default, [x.to(f32), m34], "x[x > 0] as masked_select")
case("same_shape_f64", A.masked_select.default, [x, m34], "float64")
case("bcast_self", A.masked_select.default, [torch.tensor([1., 2.]), m3.reshape(3, 1)], "self [2], mask [3, 1]: [4]")
case("bcast_mask", A.masked_select.default, [x, c4], "a column mask [4] over [3, 4]")
case("i64", A.masked_select.default, [torch.arange(12).reshape(3, 4), m34], "int64 self")
case("bool", A.masked_select.default, [m34, c4], "bool self")
case("0d", A.masked_select.default, [torch.tensor(3.), torch.tensor(True)], "0-dim self and mask: [1]")
case("none_true", A.masked_select.default, [x, torch.zeros(3, 4, dtype=b8)], "no true element: [0]")
case("empty", A.masked_select.default, [torch.zeros(0, 4), c4], "empty self")

src = torch.randn(3, 4, dtype=f64)
case("same_shape_f64", A.masked_scatter.default, [x, m34, src], "the true positions take source's first elements")
case("same_shape_f32", A.masked_scatter.default, [x.to(f32), m34, src.to(f32)], "float32")
case("bcast", A.masked_scatter.default, [torch.tensor([1., 2.]), m3.reshape(3, 1), torch.arange(10.)],
     "self [2], mask [3, 1]: [3, 2], source longer than the count")
case("src_2d", A.masked_scatter.default, [x, c4, src.t()], "source [4, 3] read in its row-major order")
case("i64", A.masked_scatter.default, [torch.arange(12).reshape(3, 4), m34, -torch.arange(12)], "int64")
case("bool", A.masked_scatter.default, [torch.zeros(3, 4, dtype=b8), m34, torch.ones(12, dtype=b8)], "bool")
case("none_true_empty_src", A.masked_scatter.default, [x, torch.zeros(3, 4, dtype=b8), torch.zeros(0, dtype=f64)],
     "no true element, empty source: self")

case("mask_rows_f32", A.index.Tensor, [x.to(f32), [m3]], "x[mask] over rows")
case("mask_cols_f64", A.index.Tensor, [x, [None, c4]], "x[:, mask]")
case("mask_2d", A.index.Tensor, [x, [m34]], "x[x > 0]: a mask covering both dims")
case("mask_3d_leading", A.index.Tensor, [x3, [x3[:, :, 0] != 0]], "a 2-d mask over the first two of three dims")
case("mask_and_int", A.index.Tensor, [x3, [torch.tensor([[True, False, True], [False, True, False]]),
                                           torch.tensor([3, 0, -1])]], "a 2-d mask then an int64 index: [3]")
case("int_none_mask", A.index.Tensor, [x3, [torch.tensor([1, 0]), None, torch.tensor([False, True, False, True])]],
     "int64, None, mask: non-adjacent, B first")
case("mask_none_true", A.index.Tensor, [x, [torch.zeros(3, dtype=b8)]], "no true row: [0, 4]")
case("mask_i64_self", A.index.Tensor, [torch.arange(12).reshape(3, 4), [None, c4]], "int64 self")

case("mask_scalar", A.index_put.default, [x, [m3], torch.tensor(-1., dtype=f64), False], "x[mask] = -1")
case("mask_row_acc", A.index_put.default, [x.to(f32), [m3], torch.tensor([10., 20, 30, 40]), True],
     "x[mask] += row")
case("mask_2d_values", A.index_put.default, [x, [m34], torch.arange(float(int(m34.sum())), dtype=f64), False],
     "x[x > 0] = one value per true element")
case("mask_cols", A.index_put.default, [x, [None, c4], torch.ones(3, 2, dtype=f64), True], "x[:, mask] += ones")
case("mask_and_int", A.index_put.default, [x3, [torch.tensor([[True, False, True], [False, True, False]]),
                                               torch.tensor([3, 0, -1])], torch.tensor([7., 8., 9.], dtype=f64), False],
     "a 2-d mask then an int64 index")
case("mask_inplace", A.index_put_.default, [x, [m3], torch.tensor(0.5, dtype=f64), False], "x[mask] = 0.5 in place")
