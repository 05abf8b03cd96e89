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

from ref_tables import emit, numel, print_header, ramp

torch.set_default_dtype(torch.float64)
A = torch.ops.aten


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

# ---- mv, dot, addmv, addr, outer ----
LM = ramp(12, 0.5, 1.5, 11)     # mat [3, 4]
LV = ramp(4, 1.25, 2.0, 5)      # vec [4]
LU = ramp(3, 0.75, 1.0, 7)      # vec [3]
LS = ramp(12, 0.25, 0.5, 13)    # self [3, 4] (addr), its first 3 (addmv)
LG = ramp(12, 0.5, 1.0, 7)      # gradient weights
emit("LIN_MAT", LM)
emit("LIN_VEC", LV)
emit("LIN_U", LU)
emit("LIN_SELF", LS)
emit("LIN_GY", LG)
def lin_grads(tag, fn, inputs, nout):
    ins = [torch.tensor(v).reshape(sh).requires_grad_() for v, sh in inputs]
    out = fn(*ins)
    gs = torch.autograd.grad((out * torch.tensor(LG[:nout]).reshape(out.shape)).sum(), ins)
    emit(tag + "_OUT", out.detach())
    for k, g in enumerate(gs):
        emit("%s_G%d" % (tag, k), g)
lin_grads("MV", torch.mv, [(LM, [3, 4]), (LV, [4])], 3)
lin_grads("DOT", torch.dot, [(LV, [4]), (LM[:4], [4])], 1)
lin_grads("ADDMV", lambda s, m, v: torch.addmv(s, m, v, beta=0.5, alpha=-2), [(LS[:3], [3]), (LM, [3, 4]), (LV, [4])], 3)
lin_grads("ADDR", lambda s, a, b: torch.addr(s, a, b, beta=-1.5, alpha=0.5), [(LS, [3, 4]), (LU, [3]), (LV, [4])], 12)
lin_grads("OUTER", torch.outer, [(LU, [3]), (LV, [4])], 12)

# ---- celu, selu ----
EX = [-30.0, -4.0, -1.5, -0.25, 0.0, 0.5, 2.0, 25.0, -0.75, 1.25, -6.0, 3.0]
emit("ELU_X", EX)
for tag, fn in [("CELU", lambda x: F.celu(x, 0.5)), ("SELU", F.selu)]:
    x = torch.tensor(EX).requires_grad_()
    out = fn(x)
    gx, = torch.autograd.grad((out * torch.tensor(LG)).sum(), [x])
    emit(tag + "_OUT", out.detach())
    emit(tag + "_GX", gx)

print_header("tests/make_opsbatch2_refs.py")
