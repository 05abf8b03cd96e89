#!/usr/bin/python3
"""Writes tests/opsbatch3_ref.h, the reference values of tests/test_ops_batch3.c,
with PyTorch (1.13, Debian's python3-torch):

    OPENBLAS_CORETYPE=Haswell /usr/bin/python3 tests/make_opsbatch3_refs.py > tests/opsbatch3_ref.h

Inputs are the fixed lists below (written to the header too), so that the
tests build the same tensors. Every operator runs in float64 (inputs are
multiples of 1/4, so float32 products are exact too; scatter's reduction
order cases run in float32 as well); gradients are
torch.autograd.grad of sum(out * GY) (GY of the output's shape). Values are
printed with %.17g."""
import torch
import torch.nn.functional as F

from ref_tables import emit, numel, print_header, ramp

torch.set_default_dtype(torch.float64)
A = torch.ops.aten


# ---- prelu, prelu_backward ----
# (tag, self shape, weight shape); self is PX's first elements (zeros and
# negatives among them), the weight PW's, GY PG's. Each gives the output, the
# gradients of self and weight, and the double backward: the gradients of
# sum(gx * PA) + sum(gw * PB) in self, weight and GY.
PRELU_CASES = [("C3", [2, 3, 4], [3]),
               ("W1", [2, 3, 4], [1]),
               ("W0", [2, 3], []),
               ("D4", [2, 3, 2, 2], [3]),
               ("D1", [5], [1]),
               ("D0", [], [1])]
PX = ramp(48, 0.5, 1.5, 7)
PW = [0.25, -0.5, 1.5]
PG = ramp(48, 0.25, 1.0, 11)
PA = ramp(48, 0.5, 1.0, 5)
PB = [0.75, -1.25, 2.0]
for name, v in [("PRELU_X", PX), ("PRELU_W", PW), ("PRELU_GY", PG), ("PRELU_A", PA), ("PRELU_B", PB)]:
    emit(name, v)
for tag, xs, ws in PRELU_CASES:
    x = torch.tensor(PX[:numel(xs)]).reshape(xs).requires_grad_()
    w = torch.tensor(PW[:numel(ws)]).reshape(ws).requires_grad_()
    out = F.prelu(x, w)
    gy = torch.tensor(PG[:out.numel()]).reshape(out.shape).requires_grad_()
    gx, gw = torch.autograd.grad((out * gy).sum(), [x, w], create_graph=True)
    second = (gx * torch.tensor(PA[:x.numel()]).reshape(xs)).sum() + (gw * torch.tensor(PB[:w.numel()]).reshape(ws)).sum()
    ggx, ggw, ggy = torch.autograd.grad(second, [x, w, gy], allow_unused=True)
    emit("PRELU_%s_OUT" % tag, out.detach())
    emit("PRELU_%s_GX" % tag, gx.detach())
    emit("PRELU_%s_GW" % tag, gw.detach())
    emit("PRELU_%s_GGX" % tag, ggx if ggx is not None else torch.zeros(xs))
    emit("PRELU_%s_GGW" % tag, ggw if ggw is not None else torch.zeros(ws))
    emit("PRELU_%s_GGY" % tag, ggy)
# nan, infinities and signed zeros with one weight of 0.5 and of nan
PS = [float("nan"), -0.0, 0.0, -1.0, float("-inf"), float("inf")]
emit("PRELU_SPECIAL_X", PS)
emit("PRELU_SPECIAL_OUT", F.prelu(torch.tensor(PS), torch.tensor([0.5])))
emit("PRELU_SPECIAL_NAN_W_OUT", F.prelu(torch.tensor(PS), torch.tensor([float("nan")])))

# ---- index_fill.int_Tensor ----
# self [3, 4] (IFX), a 0-dim value, along dim 1 with a repeated index;
# gradients of sum(out * IFG) in self and value (1.13's value gradient fails
# for a negative index: index_select does not wrap it; IF_NEG_OUT has one)
IFX = ramp(12, 0.5, 1.5, 7)
IFG = ramp(12, 0.25, 1.0, 11)
IFI1 = [2, 0, 2]
emit("IF_X", IFX)
emit("IF_GY", IFG)
emit("IF_I1", IFI1, "int64_t")
x = torch.tensor(IFX).reshape(3, 4).requires_grad_()
v = torch.tensor(-2.5, requires_grad=True)
out = x.index_fill(1, torch.tensor(IFI1), v)
gx, gv = torch.autograd.grad((out * torch.tensor(IFG).reshape(3, 4)).sum(), [x, v])
emit("IF_OUT", out.detach())
emit("IF_GX", gx)
emit("IF_GV", gv)
emit("IF_NEG_OUT", x.detach().index_fill(1, torch.tensor([-1, -4]), torch.tensor(0.75)))
# along dim 0 with index [1], an int64 self and a float value (truncates)
emit("IF_INT_OUT", torch.arange(12).reshape(3, 4).index_fill(0, torch.tensor([1]), torch.tensor(-7.9)), "int64_t")

# ---- scatter.reduce, scatter.value_reduce ----
# self [3, 4] (SCR_X, no zeros), along dim 0 with index SCR_I0 [2, 4] and src
# [2, 4], along dim 1 with index SCR_I1 [3, 2] and a larger src [3, 3] (SCR_SRC's
# first elements); both indices repeat targets. Products of these halves and
# quarters are exact in float32 too; strided inputs hold the same values.
SCR_X = ramp(12, 0.5, 1.75, 7)
SCR_SRC = ramp(9, 0.5, 1.25, 7)
SCR_I = {0: [0, 1, 2, 0, 0, 0, 2, 1], 1: [3, 3, 0, 2, 1, 1]}
SCR_SHAPES = {0: ([2, 4], [2, 4]), 1: ([3, 2], [3, 3])}   # index, src
emit("SCR_X", SCR_X)
emit("SCR_SRC", SCR_SRC)
for d in (0, 1):
    emit("SCR_I%d" % d, SCR_I[d], "int64_t")
for red, tag in (("add", "ADD"), ("multiply", "MUL")):
    for d in (0, 1):
        ishape, sshape = SCR_SHAPES[d]
        x = torch.tensor(SCR_X).reshape(3, 4)
        index = torch.tensor(SCR_I[d]).reshape(ishape)
        src = torch.tensor(SCR_SRC[:numel(sshape)]).reshape(sshape)
        emit("SCR_%s_D%d_OUT" % (tag, d), x.scatter(d, index, src, reduce=red))
        emit("SCV_%s_D%d_OUT" % (tag, d), x.scatter(d, index, -1.5, reduce=red))
# int64: self arange(12) - 5, src SCR_I64_SRC along dim 0; the value 2.7
# (truncated to 2) along dim 1
emit("SCR_I64_SRC", [3, -2, 4, 0, -1, 5, 2, 7], "int64_t")
xi = torch.arange(12).reshape(3, 4) - 5
for red, tag in (("add", "ADD"), ("multiply", "MUL")):
    emit("SCR_I64_%s" % tag, xi.scatter(0, torch.tensor(SCR_I[0]).reshape(2, 4),
                                        torch.tensor([3, -2, 4, 0, -1, 5, 2, 7]).reshape(2, 4), reduce=red), "int64_t")
    emit("SCV_I64_%s" % tag, xi.scatter(1, torch.tensor(SCR_I[1]).reshape(3, 2), 2.7, reduce=red), "int64_t")
# the order of the values reduced into one element: that of the index
# positions along dim. self [1] = {BIG}, four values all at 0 (add: 1, 1,
# -BIG, 1 give 1, not 2; multiply with self 2: BIG, BIG, 0, 3 give inf * 0 =
# nan, not 0), in float32 (BIG 1e8 / 1e30) and float64 (1e17 / 1e300)
for dt, add_big, mul_big, tag in ((torch.float32, 1e8, 1e30, "F32"), (torch.float64, 1e17, 1e300, "F64")):
    zeros = torch.zeros(4, dtype=torch.long)
    add = torch.tensor([add_big], dtype=dt).scatter(0, zeros, torch.tensor([1, 1, -add_big, 1], dtype=dt), reduce="add")
    mul = torch.tensor([2], dtype=dt).scatter(0, zeros, torch.tensor([mul_big, mul_big, 0, 3], dtype=dt),
                                              reduce="multiply")
    emit("SCR_ORDER_%s" % tag, [add.item(), mul.item()])
# 0-dim self 3, index 0: src 2.5 added and multiplied, the value 4 multiplied
x0, i0 = torch.tensor(3.0), torch.tensor(0)
emit("SCR_0DIM", [x0.scatter(0, i0, torch.tensor(2.5), reduce="add").item(),
                  x0.scatter(0, i0, torch.tensor(2.5), reduce="multiply").item(),
                  x0.scatter(-1, i0, 4.0, reduce="multiply").item()])

print_header("tests/make_opsbatch3_refs.py")
