#!/usr/bin/python3
"""Writes the conformance cases of operators that torch 1.13's make_fx
records of ordinary PyTorch code (bernoulli.p, whose cases serve
bernoulli_.float, recorded by a training-mode dropout) into OUTDIR
(tests/conformance/cases), in the folder's final format, with PyTorch 1.13:

    /usr/bin/python3 tests/conformance/make_cases_recorded.py tests/conformance/cases

Every argument is written positionally, keyword-only ones included. Inputs
are fixed values (seed 0 for the random ones); expected float outputs are
computed in float64 from the same inputs and rounded to the output dtype,
integer and bool ones are torch's. bernoulli.p draws: its cases take p = 0
and p = 1 only, whose results every generator gives alike."""
import json, os, sys
import numpy as np
import torch

OUT = sys.argv[1]
A = torch.ops.aten
f32, f64, i64, b8 = torch.float32, torch.float64, torch.int64, torch.bool
torch.manual_seed(0)


def jarg(a):
    if isinstance(a, float) and not np.isfinite(a): return {"float": str(a)}
    return a


def case(name, op, args, note):
    """A case of op with every schema argument given in args."""
    assert len(args) == len(op._schema.arguments)
    base = str(op).replace("aten.", "").replace(".default", "")
    d = os.path.join(OUT, f"{base}__{name}")
    os.makedirs(d, exist_ok=False)
    jargs, n = [], 0
    for a in args:
        if isinstance(a, torch.Tensor):
            fn = f"in{n}.npy"; n += 1
            np.save(os.path.join(d, fn), a.contiguous().numpy())
            jargs.append({"tensor": fn})
        else:
            jargs.append(jarg(a))
    pos, kw = [], {}
    for a, spec in zip(args, op._schema.arguments):
        if spec.kwarg_only: kw[spec.name] = a
        else: pos.append(a)
    native = op(*pos, **kw)
    wide = [a.double() if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in pos]
    ref = op(*wide, **kw).to(native.dtype)
    np.save(os.path.join(d, "out0.npy"), ref.contiguous().numpy())
    rtol, atol = (1e-5, 1e-6) if native.dtype == f32 else (1e-10, 1e-12)
    j = {"op": "aten::" + base, "args": jargs, "outputs": ["out0.npy"], "rtol": rtol, "atol": atol, "note": note}
    with open(os.path.join(d, "case.json"), "w") as f:
        json.dump(j, f, indent=0)


x = torch.randn(3, 4, dtype=f64)

case("p1_f32", A.bernoulli.p, [x.to(f32), 1.0, None], "p = 1: ones of self's shape and dtype")
case("p0_f64", A.bernoulli.p, [x, 0.0, None], "p = 0: zeros")
case("p1_i64", A.bernoulli.p, [torch.tensor([[3, -4], [0, 9]]), 1.0, None], "int64 self keeps its dtype")
case("p0_bool_0d", A.bernoulli.p, [torch.tensor(True), 0.0, None], "0-dim bool self")
case("p1_empty", A.bernoulli.p, [torch.zeros(0, 3), 1.0, None], "an empty self")
