#!/usr/bin/python3
"""Writes tests/opsbatch_ref.h, the reference values of tests/test_ops_batch.c,
with PyTorch (1.13, Debian's python3-torch):

    /usr/bin/python3 tests/make_opsbatch_refs.py > tests/opsbatch_ref.h

Inputs are the fixed lists below (written to the header too), so that the
tests build the same tensors. Every operator runs in float64; gradients are
torch.autograd.grad of sum(out * GY) (GY of the output's shape, or the
scalar 1.5 for a reduced loss). Values are printed with %.17g."""
import torch
import torch.nn.functional as F

from ref_tables import emit, print_header, ramp

torch.set_default_dtype(torch.float64)


def grads(fn, inputs, gy=None):
    ins = [torch.tensor(v).reshape(s).requires_grad_(g) for v, s, g in inputs]
    out = fn(*ins)
    g = torch.tensor(gy).reshape(out.shape) if gy is not None else torch.tensor(1.5)
    gs = torch.autograd.grad((out * g).sum(), [t for t in ins if t.requires_grad])
    return out.detach(), gs


# ---- binary_cross_entropy_with_logits ----
BX = ramp(12, 1.5, 4.0)
BT = [((i * 3) % 5) / 4.0 for i in range(12)]
BW = [0.5, 1.0, 2.0, 0.25]
BP = [3.0, 0.5, 1.0, 2.0]
BG = ramp(12, 0.25, 0.5, 5)
emit("BCEL_X", BX)
emit("BCEL_T", BT)
emit("BCEL_W", BW)
emit("BCEL_P", BP)
emit("BCEL_GY", BG)
for tag, w, p, red in [("NONE", None, None, "none"), ("MEAN_WP", BW, BP, "mean"), ("SUM_P", None, BP, "sum"),
                       ("MEAN_W", BW, None, "mean")]:
    def f(x, t, red=red, w=w, p=p):
        return F.binary_cross_entropy_with_logits(x, t, None if w is None else torch.tensor(w),
                                                  pos_weight=None if p is None else torch.tensor(p), reduction=red)
    out, (gx, gt) = grads(f, [(BX, [3, 4], True), (BT, [3, 4], True)], BG if red == "none" else None)
    emit("BCEL_%s_OUT" % tag, out)
    emit("BCEL_%s_GX" % tag, gx)
    emit("BCEL_%s_GT" % tag, gt)

# ---- baddbmm ----
AS, A1, A2 = ramp(24, 0.5, 1.0), ramp(30, 0.25, 0.75, 11), ramp(40, 0.5, 1.5, 13)
AG = ramp(24, 0.75, 2.0, 5)
emit("BADDBMM_SELF", AS)
emit("BADDBMM_B1", A1)
emit("BADDBMM_B2", A2)
emit("BADDBMM_GY", AG)
out, gs = grads(lambda s, a, b: torch.baddbmm(s, a, b, beta=0.5, alpha=2),
                [(AS, [2, 3, 4], True), (A1, [2, 3, 5], True), (A2, [2, 5, 4], True)], AG)
emit("BADDBMM_OUT", out)
for n, g in zip(["GSELF", "GB1", "GB2"], gs):
    emit("BADDBMM_" + n, g)
out, (gself,) = grads(lambda s, a, b: torch.baddbmm(s, a, b, beta=-1.5),
                      [(AS[:4], [4], True), (A1, [2, 3, 5], False), (A2, [2, 5, 4], False)], AG)
emit("BADDBMM_BCAST_OUT", out)
emit("BADDBMM_BCAST_GSELF", gself)

# ---- scatter.src / scatter.value (duplicate indices: the last one wins) ----
SS, SI0, SRC0 = ramp(12, 0.5, 1.0), [0, 1, 2, 0, 0, 0, 2, 1], ramp(8, 1.25, 3.0, 11)
SI1, SRC1 = [4, 0, 4, 1, 1, 3], ramp(6, 0.75, 2.0, 13)
SG = ramp(12, 0.5, 2.0, 11)
emit("SCATTER_SELF", SS)
emit("SCATTER_GY", SG)
emit("SCATTER_I0", SI0, "int64_t")
emit("SCATTER_SRC0", SRC0)
emit("SCATTER_I1", SI1, "int64_t")
emit("SCATTER_SRC1", SRC1)
out, gs = grads(lambda s, src: torch.scatter(s, 0, torch.tensor(SI0).reshape(2, 4), src),
                [(SS, [3, 4], True), (SRC0, [2, 4], True)], SG)
emit("SCATTER_DIM0_OUT", out)
emit("SCATTER_DIM0_GSELF", gs[0])
emit("SCATTER_DIM0_GSRC", gs[1])
out, gs = grads(lambda s, src: torch.scatter(s, -1, torch.tensor(SI1).reshape(2, 3), src),
                [(SS[:10], [2, 5], True), (SRC1, [2, 3], True)], SG[:10])
emit("SCATTER_DIM1_OUT", out)
emit("SCATTER_DIM1_GSELF", gs[0])
emit("SCATTER_DIM1_GSRC", gs[1])
# src [2, 4] larger than index [2, 3]: torch 1.13's ScatterBackward0 fails ("returned an invalid gradient at
# index 1 - got [2, 3] but expected shape compatible with [2, 4]"); tjit pads grad.gather with zeros, as
# scatter_add's gradient does: the expected values are written out here
emit("SCATTER_PADDED_GSRC", torch.cat([torch.gather(torch.tensor(SG[:10]).reshape(2, 5), 1,
                                                    torch.tensor(SI1).reshape(2, 3)), torch.zeros(2, 1)], 1))
out, (gself,) = grads(lambda s: torch.scatter(s, 0, torch.tensor(SI0).reshape(2, 4), -2.5), [(SS, [3, 4], True)], SG)
emit("SCATTER_VALUE_OUT", out)
emit("SCATTER_VALUE_GSELF", gself)

# ---- mish, log_sigmoid, softsign, glu ----
AX = [-30.0, -4.0, -1.5, -0.25, 0.0, 0.5, 2.0, 25.0] + ramp(4, 0.75, 1.0, 11)
AGY = ramp(12, 0.5, 1.0, 7)
emit("ACT_X", AX)
emit("ACT_GY", AGY)
for tag, fn in [("MISH", F.mish), ("LOG_SIGMOID", F.logsigmoid), ("SOFTSIGN", F.softsign)]:
    out, (gx,) = grads(fn, [(AX, [3, 4], True)], AGY)
    emit(tag + "_OUT", out)
    emit(tag + "_GX", gx)
emit("LOG_SIGMOID_BUFFER", torch.ops.aten.log_sigmoid_forward(torch.tensor(AX))[1])
for tag, dim in [("GLU_LAST", -1), ("GLU_FIRST", 0)]:
    shape = [3, 4] if dim == -1 else [4, 3]
    out, (gx,) = grads(lambda x, dim=dim: F.glu(x, dim), [(AX, shape, True)],
                       AGY[:6])
    emit(tag + "_OUT", out)
    emit(tag + "_GX", gx)

print_header("tests/make_opsbatch_refs.py")
