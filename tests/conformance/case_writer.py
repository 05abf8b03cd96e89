"""What the make_cases_*.py generators share: one case folder (its inputs,
the expected output, case.json) in the format README.md gives."""
import json
import os

import numpy as np
import torch

NAMES = {torch.float32: "float32", torch.float64: "float64", torch.int64: "int64", torch.bool: "bool",
         torch.float16: "float16", torch.int32: "int32", torch.uint8: "uint8", torch.int8: "int8",
         torch.int16: "int16"}


def call(op, args):
    """op on copies of args (in-place operators write them), with its
    keyword-only arguments by name."""
    pos, kw = [], {}
    for a, spec in zip(args, op._schema.arguments):
        a = a.clone() if isinstance(a, torch.Tensor) else a
        if spec.kwarg_only: kw[spec.name] = a
        else: pos.append(a)
    return op(*pos, **kw)


def widened(args):
    """args with float64 copies of the floating-point tensors."""
    return [a.double() if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args]


def float64_reference(op, args):
    """op computed on float64 copies of the floating-point tensors, rounded
    to the dtype of op on args themselves."""
    native = call(op, args)
    return call(op, widened(args)).to(native.dtype)


def saved(t, int32_as_int64=True):
    """t as a case file holds it: contiguous, int32 as int64 unless told
    (tjit's dtype for torch's int32 pivots and info)."""
    return (t.long() if t.dtype == torch.int32 and int32_as_int64 else t).contiguous().numpy()


def json_arg(a):
    """A non-tensor argument as case.json writes it."""
    if isinstance(a, torch.dtype): return {"dtype": NAMES[a]}
    if isinstance(a, float) and not np.isfinite(a): return {"float": str(a)}
    return a


def write_case(out, name, op, args, note, expected, tol=None, int32_as_int64=True):
    """The case OUT/BASE__NAME of op (BASE: its name without "aten." and
    ".default") with every schema argument in args; its expected output is
    `expected`, a tensor, or a list of them for an operator with several
    results (None for one torch leaves undefined: null in case.json); the
    first one's dtype sets the tolerances, unless tol gives (rtol, atol).
    int32 tensors are written as int64 unless int32_as_int64 is false."""
    assert len(args) == len(op._schema.arguments)
    base = str(op).replace("aten.", "").replace(".default", "")
    d = os.path.join(out, f"{base}__{name}")
    os.makedirs(d, exist_ok=False)
    jargs, n = [], 0
    for a in args:
        if isinstance(a, torch.Tensor):
            fn = f"in{n}.npy"; n += 1
            np.save(os.path.join(d, fn), saved(a, int32_as_int64))
            jargs.append({"tensor": fn})
        elif isinstance(a, (list, tuple)) and any(isinstance(t, torch.Tensor) for t in a):
            names = []  # a Tensor?[] (index, index_put): None entries as null
            for t in a:
                if t is None: names.append(None); continue
                fn = f"in{n}.npy"; n += 1
                np.save(os.path.join(d, fn), saved(t, int32_as_int64))
                names.append(fn)
            jargs.append({"tensors": names})
        else:
            jargs.append(json_arg(a))
    expected = expected if isinstance(expected, (list, tuple)) else [expected]
    outputs = []
    for k, e in enumerate(expected):
        outputs.append(None if e is None else f"out{k}.npy")
        if e is not None:
            np.save(os.path.join(d, outputs[k]), saved(e, int32_as_int64))
    rtol, atol = tol or ((1e-5, 1e-6) if expected[0].dtype == torch.float32 else (1e-10, 1e-12))
    j = {"op": "aten::" + base, "args": jargs, "outputs": outputs, "rtol": rtol, "atol": atol, "note": note}
    with open(os.path.join(d, "case.json"), "w") as f:
        json.dump(j, f, indent=0)


def reference_cases(out):
    """case(name, op, args, note): the case of op with every schema argument
    in args, written under `out`, its expected output float64_reference's."""
    def case(name, op, args, note, tol=None):
        write_case(out, name, op, args, note, float64_reference(op, args), tol)
    return case
