#!/usr/bin/python3
"""Writes the conformance cases of arange, arange.start, empty.memory_format,
new_zeros, new_ones, new_full and new_empty into OUTDIR
(tests/conformance/cases), in the folder's final format, with PyTorch 1.13:

    /usr/bin/python3 tests/conformance/make_cases_creation.py tests/conformance/cases

Every argument is written positionally, keyword-only ones included (dtype as
{"dtype": name}, layout, device, pin_memory and memory_format null). The
expected outputs are torch's own (creation operators compute nothing a
float64 reference would round differently), except for empty and new_empty:
their values are unspecified in PyTorch and zero-filled in tjit, so the
expected output is torch.zeros of torch's result's shape and dtype."""
import os, sys
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from case_writer import call, write_case  # noqa: E402

OUT = sys.argv[1]
A = torch.ops.aten
torch.manual_seed(0)
f32, f64, i64, b8 = torch.float32, torch.float64, torch.int64, torch.bool
UNSPECIFIED = (A.empty.memory_format, A.new_empty.default)


def case(name, op, args, note, dtype=None):
    """A case of op with the given leading arguments, dtype (None or a torch
    dtype) and None for the remaining keyword-only arguments."""
    n_kw = sum(1 for a in op._schema.arguments if a.kwarg_only)
    args = list(args) + [dtype] + [None] * (n_kw - 1)
    out = call(op, args)
    write_case(OUT, name, op, args, note, torch.zeros_like(out) if op in UNSPECIFIED else out)


case("int_end", A.arange.default, [7], "arange(7): int64")
case("float_end", A.arange.default, [2.5], "arange(2.5): float32, ceil(2.5) elements")
case("zero_end_f64", A.arange.default, [0], "arange(0, dtype=float64): empty", f64)
case("float_end_i64", A.arange.default, [4.7], "arange(4.7, dtype=int64): end truncated to 4", i64)
case("int", A.arange.start, [-3, 4], "arange(-3, 4): int64")
case("float_start", A.arange.start, [0.5, 3], "arange(0.5, 3): float32")
case("f64", A.arange.start, [1, 2.75], "arange(1, 2.75, dtype=float64)", f64)
case("equal_bounds", A.arange.start, [5, 5], "arange(5, 5): empty int64")

case("default", A.empty.memory_format, [[2, 3]], "empty([2, 3]): float32, zero-filled in tjit")
case("i64_empty", A.empty.memory_format, [[0, 4]], "empty([0, 4], dtype=int64)", i64)
case("0d_bool", A.empty.memory_format, [[]], "empty([], dtype=bool): 0-dim", b8)

x = torch.randn(3, 2, dtype=f64)
xi = torch.tensor([4, -1, 7])
case("f64_self", A.new_zeros.default, [x, [2, 4]], "self's dtype float64, another shape")
case("dtype_given", A.new_zeros.default, [xi, [3]], "int64 self, float32 asked for", f32)
case("i64_self", A.new_ones.default, [xi, [2, 2]], "self's dtype int64")
case("bool_0d", A.new_ones.default, [x, []], "0-dim bool", b8)
case("f32_self", A.new_full.default, [x.to(f32), [2, 3], -1.5], "self's dtype float32")
case("float_into_i64", A.new_full.default, [xi, [4], 2.7], "self's int64: not inferred from the value, 2.7 truncates")
case("int_dtype_f64", A.new_full.default, [xi, [2, 1], 3], "an int fill, float64 asked for", f64)
case("inf_f32", A.new_full.default, [x.to(f32), [0, 2], float("-inf")], "an empty result")
case("f64_self", A.new_empty.default, [x, [4, 1]], "self's dtype, zero-filled in tjit")
case("dtype_given", A.new_empty.default, [x, [2]], "int64 asked for", i64)
