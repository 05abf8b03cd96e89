#!/usr/bin/python3
"""Writes tests/opsbatch2_ref.h, the reference values of tests/test_ops_batch2.c,
with PyTorch (1.13, Debian's python3-torch):

    /usr/bin/python3 tests/make_opsbatch2_refs.py > tests/opsbatch2_ref.h

Inputs are the fixed lists below (written to the header too), so that the
tests build the same tensors. Every operator runs in float64; gradients are
torch.autograd.grad of sum(out * GY) (GY of the output's shape). Values are
printed with %.17g."""
import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)
A = torch.ops.aten
lines = []


def emit(name, values, ctype="double"):
    vals = torch.as_tensor(values).flatten().tolist()
    fmt = (lambda v: "%d" % v) if ctype == "int64_t" else (lambda v: "%.17g" % v)
    body = ", ".join(fmt(v).replace("inf", "INFINITY").replace("nan", "NAN") for v in vals)
    lines.append("static const %s %s[%d] = {%s};" % (ctype, name, max(len(vals), 1), body))


def ramp(n, scale, shift, mod=7):
    """A deterministic spread of values: scale * ((3 i + 1) % mod) - shift."""
    return [scale * ((3 * i + 1) % mod) - shift for i in range(n)]


def numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


# ---- reflection / replication padding ----
# (tag, operator, input shape, padding); the input is PAD_X's first elements, GY
# PAD_GY's; each gives the output, the gradient of x and the backward operator's
# gradient of grad_output (the forward of GY, double backward)
PAD_CASES = [("REFLECT1", A.reflection_pad1d, [2, 3, 5], [2, 4]),
             ("REFLECT1_CROP", A.reflection_pad1d, [3, 4], [-1, 3]),
             ("REFLECT2", A.reflection_pad2d, [1, 2, 4, 5], [1, 4, 3, 2]),
             ("REFLECT2_CROP", A.reflection_pad2d, [2, 4, 3], [-2, 2, 0, -1]),
             ("REPLICATE1", A.replication_pad1d, [2, 3, 4], [5, 1]),
             ("REPLICATE2", A.replication_pad2d, [1, 2, 3, 4], [2, 3, -1, 2])]
PX = ramp(120, 0.5, 1.5, 11)
PG = ramp(400, 0.25, 1.0, 13)
emit("PAD_X", PX)
emit("PAD_GY", PG)
for tag, op, shape, pad in PAD_CASES:
    x = torch.tensor(PX[:numel(shape)]).reshape(shape).requires_grad_()
    out = op(x, pad)
    gy = torch.tensor(PG[:out.numel()]).reshape(out.shape).requires_grad_()
    gx, = torch.autograd.grad((out * gy).sum(), [x], create_graph=True)
    # the backward operator's own gradient in grad_output (with weights x)
    ggy, = torch.autograd.grad((gx * x.detach()).sum(), [gy])
    emit("PAD_%s_OUT" % tag, out.detach())
    emit("PAD_%s_GX" % tag, gx.detach())
    emit("PAD_%s_GGY" % tag, ggy)

# ---- scatter_reduce.two ----
# self [3, 4], index [2, 3] (dim 0: duplicates in columns 0 and 1; column 3 untouched), src [2, 4] (its last
# column unread); self and src hold ties and zeros for amax / amin and prod
SRS = [1.5, -2.0, 0.0, 3.0, 2.5, 1.0, -1.0, 0.5, -0.5, 4.0, 2.0, -3.0]
SRI0 = [0, 0, 2, 0, 1, 2]
SRC = [2.5, 0.0, -1.5, 7.0, 2.5, -2.0, 3.0, -4.0]
SRG = ramp(12, 0.5, 1.5, 11)
# dim 1: index [3, 2] into [3, 4], src [3, 3]
SRI1 = [3, 3, 0, 2, 1, 1]
SRC1 = [0.0, 2.0, 9.0, -1.0, 4.0, 8.0, 2.0, 2.0, 5.0]
emit("SR_SELF", SRS)
emit("SR_GY", SRG)
emit("SR_I0", SRI0, "int64_t")
emit("SR_SRC0", SRC)
emit("SR_I1", SRI1, "int64_t")
emit("SR_SRC1", SRC1)
for red in ["sum", "prod", "mean", "amax", "amin"]:
    for inc in [True, False]:
        for d, idx, sv, ss in [(0, SRI0, SRC, [2, 4]), (1, SRI1, SRC1, [3, 3])]:
            ishape = [2, 3] if d == 0 else [3, 2]
            x = torch.tensor(SRS).reshape(3, 4).requires_grad_()
            s = torch.tensor(sv).reshape(ss).requires_grad_()
            i = torch.tensor(idx).reshape(ishape)
            # torch 1.13's backward needs src of index's shape: differentiate through the leading block
            sb = s[tuple(slice(0, n) for n in ishape)]
            out = x.scatter_reduce(d, i, sb, red, include_self=inc)
            gx, gs = torch.autograd.grad((out * torch.tensor(SRG).reshape(3, 4)).sum(), [x, s])
            tag = "SR_%s_%s_D%d" % (red.upper(), "INC" if inc else "EXC", d)
            emit(tag + "_OUT", out.detach())
            emit(tag + "_GSELF", gx)
            emit(tag + "_GSRC", gs)
# int64: mean rounds down, sums wrap
XI = torch.tensor([5, -7, 3, 0, 2, 9]).reshape(2, 3)
II = torch.tensor([1, 1, 0, 1]).reshape(2, 2)
SI = torch.tensor([-4, 1, 6, 3, 2, 8]).reshape(2, 3)
for red in ["sum", "prod", "mean", "amax", "amin"]:
    emit("SR_I64_%s" % red.upper(), XI.scatter_reduce(1, II, SI[:, :2], red, include_self=False), "int64_t")

# ---- index_copy / index_fill.int_Scalar ----
# self [4, 3]; index_copy along dim 0 with a repeated index (the last wins), index_fill along dim 1 with a
# negative and a repeated index
ICX = ramp(12, 0.5, 1.5, 11)
ICS = ramp(9, 1.25, 2.0, 13)
ICI = [3, 0, 3]
IFI = [0, -1, 0]
ICG = ramp(12, 0.25, 1.0, 7)
emit("IC_SELF", ICX)
emit("IC_SOURCE", ICS)
emit("IC_GY", ICG)
x = torch.tensor(ICX).reshape(4, 3).requires_grad_()
src = torch.tensor(ICS).reshape(3, 3).requires_grad_()
out = x.index_copy(0, torch.tensor(ICI), src)
gx, gs = torch.autograd.grad((out * torch.tensor(ICG).reshape(4, 3)).sum(), [x, src])
emit("IC_OUT", out.detach())
emit("IC_GSELF", gx)
emit("IC_GSOURCE", gs)
x = torch.tensor(ICX).reshape(4, 3).requires_grad_()
out = x.index_fill(1, torch.tensor(IFI), -2.5)
gx, = torch.autograd.grad((out * torch.tensor(ICG).reshape(4, 3)).sum(), [x])
emit("IF_OUT", out.detach())
emit("IF_GSELF", gx)

print("/* Generated by tests/make_opsbatch2_refs.py with PyTorch %s (float64): do not edit. */" % torch.__version__)
print("#include <math.h>\n#include <stdint.h>\n")
print("\n".join(lines))
