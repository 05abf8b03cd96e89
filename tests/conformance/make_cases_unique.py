#!/usr/bin/python3
"""Writes the conformance cases of the grouping, counting and index
generating operators (_unique2, unique_consecutive, unique_dim, bincount,
histc, tril_indices, triu_indices, argsort) into OUTDIR
(tests/conformance/cases), in the folder's format, with PyTorch 1.13:

    /usr/bin/python3 tests/conformance/make_cases_unique.py tests/conformance/cases

Every argument is written positionally. Inputs are fixed values (seed 0 for
the random ones); float outputs are computed in float64 from the same
inputs and rounded to the output dtype (histc's counts are torch's own in
the input dtype: its bin edges are rounded to it), integer ones are
torch's. _unique2 is written with sorted=True only (torch 1.13's CPU
kernel returns its hash set's order for sorted=False; tjit sorts) and
without nan (torch 1.13 gives nan values inverse 0 and count 0; tjit
counts each: see include/tjit/ops.h). The random operators (randint,
randperm, multinomial) have no cases here: tjit's generator is not
torch's; tests/test_unique_random.c checks their statistics."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from case_writer import call, reference_cases, write_case  # noqa: E402

OUT = sys.argv[1]
case = reference_cases(OUT)
A = torch.ops.aten
f32, f64, i64, b8 = torch.float32, torch.float64, torch.int64, torch.bool
torch.manual_seed(0)


def multi(name, op, args, note):
    """A case of an operator with several results, all torch's own (the
    unique family's values are input values, copied)."""
    write_case(OUT, name, op, args, note, list(call(op, args)))


U = A._unique2.default
r = torch.randint(0, 6, (3, 5))
multi("f32_all", U, [r.to(f32), True, True, True], "2-D float32 with repeats: values, inverse [3, 5], counts")
multi("f64_values", U, [torch.randn(7, dtype=f64).repeat(2), True, False, False], "values only: inverse, counts [0]")
multi("i64_inverse", U, [r, True, True, False], "int64, inverse only")
multi("bool", U, [torch.tensor([[True, False], [True, True]]), True, True, True], "bool")
multi("zeros_signed", U, [torch.tensor([0.0, -0.0, 1.5, -0.0, -2.0], dtype=f64), True, True, True],
      "-0 equals +0: the first one seen is kept")
multi("0d", U, [torch.tensor(3.5), True, True, True], "0-dim: one value, 0-dim inverse")
multi("empty", U, [torch.zeros(0, 3), True, True, True], "empty: [0], inverse [0, 3]")
multi("strided", U, [r.t(), True, True, True], "a transposed self: row-major order of its shape")

UC = A.unique_consecutive.default
s = torch.tensor([3, 3, 1, 1, 1, 2, 3, 3, 0])
multi("flat", UC, [s, True, True, None], "runs of a 1-D int64")
multi("flat_f32_2d", UC, [s.reshape(3, 3).to(f32), True, True, None], "2-D flattened: inverse of self's shape")
multi("flat_values", UC, [s.to(f64), False, False, None], "values only")
rows = torch.tensor([[1, 2], [1, 2], [0, 5], [1, 2], [1, 2]])
multi("dim0", UC, [rows, False, False, 0], "rows along dim 0: inverse and counts always computed")
multi("dim1", UC, [rows.t().contiguous().to(f64), True, True, 1], "columns along dim 1")
multi("dim_neg", UC, [torch.tensor([[[1., 1.], [2., 2.]], [[1., 1.], [2., 3.]]]), True, True, -1], "dim -1 of a 3-D")
multi("dim_empty", UC, [torch.zeros(0, 3), True, True, 0], "an empty dim selected")

UD = A.unique_dim.default
multi("dim0", UD, [rows, 0, True, True, True], "distinct rows, sorted lexicographically")
multi("dim1_f32", UD, [torch.tensor([[3., 1., 3., 0.], [2., 2., 2., 5.]]), 1, True, False, False],
      "distinct columns; inverse and counts computed regardless of the flags")
multi("3d", UD, [torch.randint(0, 2, (2, 4, 3)).to(f64), 1, False, True, True], "3-D along dim 1, sorted=False ignored")
multi("bool", UD, [torch.tensor([[True, False], [False, True], [True, False]]), 0, True, True, True], "bool rows")
multi("dim_empty", UD, [torch.zeros(0, 3), 0, True, True, True], "an empty dim selected")

B = A.bincount.default
x = torch.tensor([1, 4, 1, 0, 7, 4, 4])
w = torch.randn(7, dtype=f64)
case("plain", B, [x, None, 0], "counts, size max + 1")
case("minlength", B, [x, None, 10], "minlength above max + 1")
case("w_f32", B, [x, w.to(f32), 0], "float32 weights: float32 sums")
case("w_f64", B, [x, w, 3], "float64 weights, minlength below max + 1")
case("w_i64", B, [x, torch.arange(7), 0], "int64 weights: float64 sums")
case("empty", B, [torch.zeros(0, dtype=i64), None, 4], "empty: minlength zeros")
case("empty_none", B, [torch.zeros(0, dtype=i64), None, 0], "empty: [0]")
case("strided", B, [x[::2], w[::2], 0], "strided self and weights")

H = A.histc.default


def hcase(name, args, note):
    write_case(OUT, name, H, args, note, call(H, args))


v = torch.randn(50, dtype=f64)
hcase("f64", [v, 7, -2.0, 2.0], "values outside the range not counted")
hcase("f32", [v.to(f32), 10, -1, 1], "float32, int range")
hcase("auto_range", [v.reshape(5, 10), 6, 0, 0], "min == max: the values' range, max in the last bin")
hcase("auto_f32", [v.to(f32), 100, 0, 0], "default bins")
hcase("edges", [torch.arange(0, 1.05, 0.1, dtype=f32), 10, 0, 1], "values on rounded bin edges")
hcase("edges_f64", [torch.arange(0, 1.05, 0.1, dtype=f64), 10, 0.0, 1.0], "float64 values on bin edges")
hcase("one_value", [torch.tensor([2.0, 2.0, 2.0]), 4, 0, 0], "one value: range [1, 3]")
hcase("nan", [torch.tensor([0.5, float("nan"), 1.5]), 2, 0, 2], "nan counted in the first bin, as ATen 1.13")
hcase("empty", [torch.zeros(0), 3, 0, 0], "empty: range [-1, 1], zeros")
hcase("strided", [v.reshape(5, 10).t(), 5, -1.5, 1.0], "transposed self")

for op, nm in ((A.tril_indices.default, "tril"), (A.triu_indices.default, "triu")):
    for (rr, cc, off) in ((3, 4, 0), (4, 3, 1), (5, 5, -2), (3, 4, 7), (3, 4, -9), (0, 4, 0), (1, 1, 0)):
        write_case(OUT, f"r{rr}_c{cc}_o{off}".replace("-", "m"), op, [rr, cc, off, None, None, None, None],
                   f"{nm} of [{rr}, {cc}], offset {off}", op(rr, cc, off))

AS = A.argsort.default
y = torch.tensor([[3.0, 1.0, 2.0, 1.0], [float("nan"), -1.0, 0.0, -1.0]], dtype=f64)
write_case(OUT, "ties", AS, [y, -1, False], "sort's indices: ties in input order, nan last", torch.sort(y, dim=-1, stable=True)[1])
write_case(OUT, "desc_dim0", AS, [y.to(f32), 0, True], "descending along dim 0", torch.sort(y, dim=0, descending=True, stable=True)[1])
AST = A.argsort.stable
write_case(OUT, "ties", AST, [y, True, -1, False], "stable: ties in input order", call(AST, [y, True, -1, False]))
write_case(OUT, "desc", AST, [y, True, 1, True], "stable, descending", call(AST, [y, True, 1, True]))
