#!/usr/bin/python3
"""Writes tests/views3_ref.h, the reference values of tests/test_views3.c, with
PyTorch (1.13, Debian's python3-torch):

    OPENBLAS_CORETYPE=Haswell /usr/bin/python3 tests/make_views3_refs.py > tests/views3_ref.h

Inputs are ramp() values of the shapes below, so that the tests build the same
tensors. Every operator runs in float64; gradients are torch.autograd.grad of
sum(out * GY) with GY the first elements of V3_GY in the output's shape. The
*_OPS tables list the operators make_fx records for the forward call, in
order, as tjit names them ("aten::mv", "aten::transpose.int"), with tjit's
deliberate renames applied: _reshape_alias -> view (tjit's reshape records
view, as PyTorch 2), squeeze_.dim -> squeeze.dim (tjit has no in-place
squeeze)."""
import torch
from torch.fx.experimental.proxy_tensor import make_fx

import ref_tables
from ref_tables import emit, numel, print_header, ramp

torch.set_default_dtype(torch.float64)

RENAMES = {"aten::_reshape_alias": "aten::view", "aten::squeeze_.dim": "aten::squeeze.dim"}


def emit_strings(name, strings):
    body = ", ".join('"%s"' % s for s in strings)
    ref_tables.lines.append("static const char *const %s[%d] = {%s};" % (name, max(len(strings), 1), body or '""'))
    ref_tables.lines.append("#define %s_N %d" % (name, len(strings)))


def recorded_ops(f, *args):
    """The call targets make_fx records for f(*args), as tjit names them."""
    g = make_fx(f)(*args)
    ops = []
    for n in g.graph.nodes:
        if n.op != "call_function":
            continue
        packet, overload = str(n.target).split(".")[1:3]
        name = "aten::" + packet + ("" if overload == "default" else "." + overload)
        ops.append(RENAMES.get(name, name))
    return ops


X = ramp(256, 0.25, 0.75, 11)
GY = ramp(256, 0.5, 1.25, 13)
emit("V3_X", X)
emit("V3_GY", GY)


def tensor(shape, source=X, start=0):
    return torch.tensor(source[start:start + numel(shape)]).reshape(shape)


# ---- matmul: torch 1.13's dispatch per rank combination ----
# (tag, self shape, other shape, self transposed: self is built of the
# swapped last two dims and transposed back); self holds V3_X's first
# elements, other those from 100 on
MATMUL_CASES = [("DOT", [4], [4], False), ("MV", [3, 4], [4], False), ("VM", [4], [4, 5], False),
                ("MM", [3, 4], [4, 5], False), ("FOLD3_1", [2, 3, 4], [4], False),
                ("FOLD3_2", [2, 3, 4], [4, 5], False), ("FOLD1_3", [4], [2, 4, 5], False),
                ("FOLD2_3", [3, 4], [2, 4, 5], False), ("BMM", [2, 3, 4], [2, 4, 5], False),
                ("BCAST", [2, 1, 3, 4], [5, 4, 6], False), ("FOLD4_1", [2, 2, 3, 4], [4], False),
                ("FOLD1_4", [4], [2, 2, 4, 5], False), ("T3_2", [2, 3, 4], [4, 5], True)]
for tag, sa, sb, trans in MATMUL_CASES:
    if trans:
        a = tensor(sa[:-2] + [sa[-1], sa[-2]]).transpose(-2, -1)
    else:
        a = tensor(sa)
    b = tensor(sb, X, 100)
    a.requires_grad_()
    b.requires_grad_()
    out = a @ b
    gy = tensor(list(out.shape), GY)
    ga, gb = torch.autograd.grad((out * gy).sum(), [a, b])
    emit("MATMUL_%s_OUT" % tag, out.detach())
    emit("MATMUL_%s_GA" % tag, ga)
    emit("MATMUL_%s_GB" % tag, gb)
    emit_strings("MATMUL_%s_OPS" % tag, recorded_ops(lambda x, y: x @ y, a.detach(), b.detach()))

# ---- diagonal ----
# (tag, shape, offset, dim1, dim2); x holds V3_X's first elements
DIAG_CASES = [("MAIN", [3, 4], 0, 0, 1), ("ABOVE", [3, 4], 1, 0, 1), ("BELOW", [4, 3], -2, 0, 1),
              ("NEG_DIMS", [2, 3, 4], 1, -1, -3), ("BATCH", [2, 3, 4], -1, 1, 2), ("SWAPPED", [3, 4], 1, 1, 0),
              ("BEYOND", [3, 4], 5, 0, 1), ("BEYOND_NEG", [3, 4], -3, 0, 1)]
for tag, shape, off, d1, d2 in DIAG_CASES:
    x = tensor(shape).requires_grad_()
    out = x.diagonal(off, d1, d2)
    gy = tensor(list(out.shape), GY)
    gx, = torch.autograd.grad((out * gy).sum(), [x])
    emit("DIAG_%s_OUT" % tag, out.detach())
    emit("DIAG_%s_GEOM" % tag, list(out.shape) + list(out.stride()) + [out.storage_offset()], "int64_t")
    emit("DIAG_%s_GX" % tag, gx)
    # in place through the view of a non-leaf: base = x * 1; base.diagonal() *= 3; sum(base * GY2)
    base = x * 1
    base.diagonal(off, d1, d2).mul_(3)
    gb = tensor(shape, GY)
    gx2, = torch.autograd.grad((base * gb).sum(), [x])
    emit("DIAG_%s_INPLACE" % tag, base.detach())
    emit("DIAG_%s_INPLACE_GX" % tag, gx2)
emit_strings("DIAG_OPS", recorded_ops(lambda x: x.diagonal(1, 0, 1).sum(), tensor([3, 4])))

# ---- as_strided ----
# (tag, size, stride, storage offset or None, source): the view of x [3, 4]
# (V3_X's first elements) itself ("x"), of x[1:] ("slice": storage offset 4)
# or of x[0].expand(3, 4) ("expanded": an input whose elements overlap)
STRIDED_CASES = [("WINDOW", [2, 2], [1, 2], 1, "x"), ("OVERLAP", [3, 3], [1, 1], 0, "x"),
                 ("EXPAND", [2, 3], [0, 1], 2, "x"), ("DEFAULT_OFF", [4, 3], [1, 4], None, "x"),
                 ("SIZE1", [1, 3, 1], [5, 2, 7], 3, "x"), ("EMPTY", [0, 2], [1, 1], 0, "x"),
                 ("OF_SLICE", [2, 2], [4, 1], None, "slice"), ("OF_SLICE_OFF", [3], [3], 2, "slice"),
                 ("IN_OVERLAP", [2, 3], [1, 1], 1, "expanded")]


def strided_input(x, source):
    return x if source == "x" else x[1:] if source == "slice" else x[0].expand(3, 4)


for tag, size, stride, off, source in STRIDED_CASES:
    x = tensor([3, 4]).requires_grad_()
    out = strided_input(x, source).as_strided(size, stride, off)
    gy = tensor(list(out.shape), GY)
    gx, = torch.autograd.grad((out * gy).sum(), [x])
    emit("STRIDED_%s_OUT" % tag, out.detach())
    emit("STRIDED_%s_GEOM" % tag, list(out.shape) + list(out.stride()) + [out.storage_offset()], "int64_t")
    emit("STRIDED_%s_GX" % tag, gx)
    if source == "x" and tag in ("WINDOW", "DEFAULT_OFF"):
        base = x * 1
        base.as_strided(size, stride, off).mul_(3)
        gx2, = torch.autograd.grad((base * tensor([3, 4], GY)).sum(), [x])
        emit("STRIDED_%s_INPLACE" % tag, base.detach())
        emit("STRIDED_%s_INPLACE_GX" % tag, gx2)
emit_strings("STRIDED_OPS", recorded_ops(lambda x: x.as_strided([2, 2], [1, 2], 1).sum(), tensor([3, 4])))

# ---- diag, diag_embed, trace ----
# (tag, operator, self shape, arguments after self); self holds V3_X's first
# elements. Each gives the output, its rank and shape and the gradient of
# sum(out * GY).
DIAGM_CASES = [("VEC", "diag", [3], [0]), ("VEC_BELOW", "diag", [3], [-2]), ("VEC_ABOVE", "diag", [4], [1]),
               ("SQUARE", "diag", [3, 3], [1]), ("WIDE", "diag", [3, 4], [-1]), ("TALL_BEYOND", "diag", [3, 2], [-3]),
               ("EMBED", "diag_embed", [2, 3], [0, -2, -1]), ("EMBED_SWAPPED", "diag_embed", [2, 3], [-1, 2, 0]),
               ("EMBED_MID", "diag_embed", [2, 3], [1, 0, 2]), ("EMBED_1D", "diag_embed", [3], [2, 0, 1]),
               ("TRACE", "trace", [3, 4], []), ("TRACE_TALL", "trace", [5, 2], [])]
for tag, op, shape, extra in DIAGM_CASES:
    x = tensor(shape).requires_grad_()
    out = getattr(torch, op)(x, *extra)
    gy = tensor(list(out.shape), GY)
    # torch 1.13's trace_backward fills every (n + 1)-th element of a tall
    # [m, n] matrix, past its diagonal too: the gradient of the diagonal's sum
    y = torch.diagonal(x).sum() if op == "trace" else out
    gx, = torch.autograd.grad((y * gy).sum(), [x])
    emit("DIAGM_%s_OUT" % tag, out.detach())
    emit("DIAGM_%s_SHAPE" % tag, [out.dim()] + list(out.shape), "int64_t")  # rank, then sizes
    emit("DIAGM_%s_GX" % tag, gx)

print_header("tests/make_views3_refs.py")
