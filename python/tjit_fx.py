"""Writes a graph traced by PyTorch's make_fx in tjit's graph text, which
tj_graph_parse reads (tracer/parse.c) and `tjit graph FILE` converts.

    from torch.fx.experimental.proxy_tensor import make_fx
    import tjit_fx

    gm = make_fx(f)(x, w)
    print(tjit_fx.save_case("f", gm, x, w))  # f.txt, f.in0.npy, ..., f.out0.npy, and the `tjit run` line
    tjit_fx.write_tjit_text("f.txt", gm, x, w)   # the graph alone; or text = tjit_fx.to_tjit_text(gm, x, w)

Placeholders take their dtype, shape and strides from the example inputs (or
from the node's meta when none are given: make_fx sets 'val' or
'tensor_meta'); get_attr tensors (make_fx's _param_constant0,
_tensor_constant0) become constants holding their values; operator.getitem
on a call with several results becomes tjit's tuple unpacking
(`%getitem, %getitem_1, _ = aten.native_layer_norm.default(...)`, "_"
where no getitem reads a result), and the pieces of split / split_with_sizes /
unbind / unsafe_split one view call each; _reshape_alias is written as view,
nested outputs flattened, placeholders of Python scalars that make_fx baked
into the calls (f(x, 2.0): the graph reads 2.0, not the placeholder) left out,
a masked_select that only whole sums and means read, directly or through a
gather of a 1-D tensor (label smoothing's, weighted or not), written in a
static form (_selection_reduced), torch.linalg's
_linalg_check_errors written as check_errors=True on the call it checks, and a result nothing reads of a call that writes
nothing is left out (as detach, or BatchNorm's empty uint8 tensor); keywords whose
value means what tjit's None means (layout=torch.strided, device=cpu,
pin_memory=False, memory_format=contiguous/preserve) are dropped, and any
other value of them raises ValueError naming the node, as do dtypes,
operators and node kinds the text cannot hold. Standard library and torch
(1.13) only."""
import math
import operator
import os
import re
import struct
import subprocess
import warnings

import torch
from torch.utils._pytree import tree_flatten, tree_unflatten

DTYPES = {torch.float32: "f32", torch.float64: "f64", torch.int64: "i64", torch.bool: "b8", torch.int32: "i32",
          torch.uint8: "u8", torch.int8: "i8", torch.int16: "i16", torch.float16: "f16", torch.bfloat16: "bf16"}
INLINE_MAX = 16  # elements of a constant written in the graph's body, as tracer/print.c

# keyword values that mean what tjit's None means there (CPU, strided, not pinned)
DROPPED = {
    "layout": (torch.strided,),
    "device": (torch.device("cpu"),),
    "pin_memory": (False,),
    "memory_format": (torch.contiguous_format, torch.preserve_format),
}
# operators make_fx records that tjit has under another name: lift_fresh_copy
# copies a tensor constant (torch.tensor([...]) in the traced function)
RENAMED = {"aten.lift_fresh_copy.default": "aten.clone.default"}
# splits into a list of views (the unsafe ones only skip autograd's view
# checks: LSTM and GRU cells split their gates with unsafe_split)
SPLITS = ("aten.split.Tensor", "aten.split_with_sizes.default", "aten.unsafe_split.Tensor",
          "aten.unsafe_split_with_sizes.default")


# the tjit command of the checkout this module is in, once built
TJIT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "tools", "tjit")


def tjit_ops(tjit=TJIT):
    """The operator overloads `tjit ops` lists ("aten::add.Tensor"), to pass
    to to_tjit_text as `ops`; by default from this checkout's build."""
    out = subprocess.run([tjit, "ops"], check=True, capture_output=True, text=True).stdout
    # "aten::add.Tensor(Tensor self, ...) -> Tensor  kind"; ".default" is left out there
    names = set()
    for line in out.splitlines():
        name = line.split("(", 1)[0]
        names.add(name if "." in name.split("::")[-1] else name + ".default")
    return names


def _float32(v):
    """The fewest digits that read back to float32 v (tjit rounds a float32
    constant's element to float32 after strtod)."""
    if v != v or v in (float("inf"), float("-inf")):
        return repr(v)
    for digits in range(1, 10):
        s = "%.*g" % (digits, v)
        if struct.unpack("f", struct.pack("f", float(s)))[0] == v:
            break
    return s if any(c in s for c in ".e") else s + ".0"


def _element(v, dtype):
    """One element of a constant's values."""
    if dtype == torch.bool:
        return "True" if v else "False"
    if not dtype.is_floating_point:
        return str(int(v))
    return repr(float(v)) if dtype == torch.float64 else _float32(v)  # float16 and bfloat16 are exact in float32


def _type(who, dtype, shape, strides=None):
    """"f32[2, 3]", with "{1, 2}" for strides that are not row-major."""
    if dtype not in DTYPES:
        raise ValueError("%s: dtype %s: tjit's text holds %s" % (who, dtype, ", ".join(map(str, DTYPES))))
    text = "%s[%s]" % (DTYPES[dtype], ", ".join(str(int(s)) for s in shape))
    contiguous, expect = True, 1
    for size, stride in reversed(list(zip(shape, strides or ()))):
        contiguous = contiguous and (size == 1 or stride == expect)
        expect *= size
    if strides is not None and not contiguous:
        text += "{%s}" % ", ".join(str(int(s)) for s in strides)
    return text


def _baked(node, example):
    """Whether placeholder `node` (example: its example input, None when
    none was given) stands for a Python scalar (None, a bool, an int, a
    float, a str) that make_fx baked into the calls reading it: none reads
    the placeholder, so the text leaves it out (compile checks that a call
    brings the traced value)."""
    example = _example(node, example)
    return not node.users and (example is None or isinstance(example, (bool, int, float, str)))


def _example(node, example):
    """A placeholder's example input, or without one its meta's."""
    return node.meta.get("val", node.meta.get("tensor_meta")) if example is None else example


def _placeholder_type(node, example):
    """The type of a placeholder, from its example input or its meta."""
    example = _example(node, example)
    if example is None:
        raise ValueError("placeholder %s: no example input and no 'val' or 'tensor_meta' in its meta" % node.name)
    if not hasattr(example, "dtype"):
        raise ValueError("placeholder %s: %r is no tensor, and the graph reads it" % (node.name, example))
    strides = example.stride() if callable(getattr(example, "stride", None)) else example.stride
    offset = example.storage_offset() if isinstance(example, torch.Tensor) else 0
    text = _type("placeholder " + node.name, example.dtype, example.shape, strides)
    return text + (" offset %d" % offset if offset else "")


def _arg(node, a):
    """One argument as tjit's text writes it."""
    if isinstance(a, torch.fx.Node):
        return "%" + a.name
    if a is None or isinstance(a, (bool, int)):
        return repr(a)
    if isinstance(a, float):
        return repr(a)  # always with '.', 'e', 'inf' or 'nan'
    if isinstance(a, str):
        return repr(a)
    if isinstance(a, torch.dtype):
        if a not in DTYPES:
            raise ValueError("%s: dtype %s: tjit holds %s" % (node.name, a, ", ".join(map(str, DTYPES))))
        return str(a)  # torch.float32
    if isinstance(a, (list, tuple)):
        return "[%s]" % ", ".join(_arg(node, x) for x in a)
    raise ValueError("%s: argument %r (%s) has no form in tjit's text" % (node.name, a, type(a).__name__))


def _kwargs(node):
    """The keyword arguments as "name = value", those meaning tjit's None
    (DROPPED) left out."""
    out = []
    for key, value in node.kwargs.items():
        if key in DROPPED:
            if value is None or value in DROPPED[key]:
                continue
            allowed = " / ".join(map(str, DROPPED[key]))
            raise ValueError("%s: %s=%s: tjit runs %s only" % (node.name, key, value, allowed))
        out.append("%s = %s" % (key, _arg(node, value)))
    return out


def _target(node, ops):
    t = node.target
    if not isinstance(t, torch._ops.OpOverload):
        raise ValueError("%s: %s is no ATen operator overload (tjit's text holds torch.ops calls)" % (node.name, t))
    name = RENAMED.get(str(t), str(t))  # aten.add.Tensor
    if ops is not None and "%s::%s" % tuple(name.split(".", 1)) not in ops:
        raise ValueError("%s: tjit has no operator %s" % (node.name, name))
    return name


def _getitems(gm):
    """For each call whose results are read through operator.getitem: its
    result names by index. make_fx writes a getitem for every result, read
    or not; where one is missing (a dead-code pass removed it) the text
    writes "_", as tjit's printer does for a dropped result."""
    slots = {}
    for n in gm.graph.nodes:
        if n.op == "call_function" and n.target is operator.getitem:
            source, index = n.args
            if not (isinstance(source, torch.fx.Node) and isinstance(source.target, torch._ops.OpOverload)):
                raise ValueError("%s: getitem of %s, which is no operator call" % (n.name, source))
            slots.setdefault(source, {})[index] = n.name
    return slots


def _shape(node):
    """The shape of a value, from the meta make_fx gives every node (a
    get_attr tensor, which has none: from the tensor)."""
    if node.op == "get_attr":
        return list(operator.attrgetter(node.target)(node.graph.owning_module).shape)
    meta = node.meta.get("val", node.meta.get("tensor_meta"))
    if meta is None:
        raise ValueError("%s: no 'val' or 'tensor_meta' in its meta: its shape is unknown" % node.name)
    return list(meta.shape)


def _pieces(node, slots):
    """A call returning a list of views (split, split_with_sizes, unbind;
    chunk records split), which a node of tjit's graph cannot hold: one view
    call per piece read, as tjit's tracer records these operators
    (aten.slice.Tensor, aten.select.int)."""
    target = str(node.target)
    args = dict(zip((a.name for a in node.target._schema.arguments), node.args))
    args.update(node.kwargs)
    self = args["self"]
    shape = _shape(self)
    dim = args.get("dim", 0)
    dim += len(shape) if dim < 0 else 0
    if target == "aten.unbind.int":
        views = [("aten.select.int", [dim, k]) for k in range(shape[dim])]
    elif target in SPLITS:
        size = args.get("split_size")
        sizes = args["split_sizes"] if size is None else [min(size, shape[dim] - s) for s in range(0, shape[dim], size)]
        starts = [sum(sizes[:k]) for k in range(len(sizes))]
        views = [("aten.slice.Tensor", [dim, a, a + n]) for a, n in zip(starts, sizes)]
    else:
        raise ValueError("%s: %s returns a list of tensors, which tjit's text cannot hold" % (node.name, target))
    return ["    %%%s = %s(%%%s, %s)" % (slots[node][k], views[k][0], self.name, ", ".join(map(str, views[k][1])))
            for k in sorted(slots.get(node, {}))]


def _call(node, slots, ops, checked=()):
    """"%a = aten.op.overload(args)", several results unpacked as tjit does;
    with check_errors=True for a node in `checked` (_checked_calls)."""
    if not isinstance(node.target, torch._ops.OpOverload):
        hint = " (make_fx's symbolic mode: trace with real or fake tensors)" if "sym_" in str(node.target) else ""
        raise ValueError("%s: %s is no ATen operator overload%s" % (node.name, node.target, hint))
    returns = node.target._schema.returns
    if any(isinstance(r.type, torch.ListType) for r in returns):
        return "\n".join(_pieces(node, slots))
    if str(node.target) == "aten._reshape_alias.default":
        # a reshape that is a view, with the strides view computes: tjit's view
        return "    %%%s = aten.view.default(%s, %s)" % (node.name, _arg(node, node.args[0]), _arg(node, node.args[1]))
    target = _target(node, ops)
    if node in slots:
        names = ", ".join("%" + slots[node][i] if i in slots[node] else "_" for i in range(len(returns)))
    else:
        names = "%" + node.name if len(returns) == 1 else ", ".join(["_"] * len(returns))
    args = [_arg(node, a) for a in node.args] + _kwargs(node)
    if node in checked:
        args = [a for a in args if not a.startswith("check_errors =")] + ["check_errors = True"]
    if target == "aten.repeat_interleave.Tensor" and node.kwargs.get("output_size") is None:
        # a size read from the counts' values, which tjit's static-shape
        # graphs do not have: the traced one (a run with counts of another
        # sum is refused by the kernel)
        args = [a for a in args if not a.startswith("output_size")] + ["output_size = %d" % _shape(node)[0]]
    return "    %s = %s(%s)" % (names, target, ", ".join(args))


def _checked_calls(gm):
    """The calls whose info result a _linalg_check_errors node checks (torch
    1.13's linalg.solve, inv, cholesky: an _ex operator, then the check).
    tjit's text has no call without results, so the exporter writes the _ex
    call with check_errors=True instead, which raises as the check would;
    a check of anything else raises ValueError rather than being lost."""
    checked = set()
    for n in gm.graph.nodes:
        if n.op != "call_function" or str(n.target) != "aten._linalg_check_errors.default":
            continue
        info = n.args[0]
        source = info.args[0] if isinstance(info, torch.fx.Node) and info.target is operator.getitem else None
        schema = getattr(getattr(source, "target", None), "_schema", None)
        if schema is None or "check_errors" not in [a.name for a in schema.arguments]:
            raise ValueError("%s: checks %s, which no call with a check_errors argument returns: tjit's text "
                             "cannot hold the check" % (n.name, info))
        checked.add(source)
    return checked


def _reduced(node):
    """Whether whole sums and means (without dtype) are all that read node."""
    return bool(node.users) and all(str(u.target) in ("aten.sum.default", "aten.mean.default")
                                    and u.kwargs.get("dtype") is None for u in node.users)


def _gathered(node):
    """Whether node is gather(w, 0, selection) of a 1-D w: a value per
    selected element, as weighted label smoothing takes each kept target's
    class weight."""
    return (isinstance(node, torch.fx.Node) and str(node.target) == "aten.gather.default" and len(node.args) == 3
            and node.args[1] == 0 and not node.kwargs and len(_shape(node.args[0])) == 1)


def _selection_reduced(node):
    """Whether node is masked_select(x, mask) read only by whole sums and
    means, directly or through a gather of a 1-D tensor (_gathered), as
    cross_entropy's label smoothing reads it (weighted: the kept targets'
    class weights). How many elements it selects depends on mask's values,
    which a static-shape graph does not hold; but their sum is
    where(mask, x, 0)'s (written under the node's name; a gather then reads
    element 0 at the unselected positions, which _gathered_lines zeroes),
    and their mean that sum over the count of selected elements
    (_selection_mean): nan for none, as the mean of an empty tensor."""
    return (isinstance(node, torch.fx.Node) and str(node.target) == "aten.masked_select.default" and node.users
            and all(_reduced(u) if _gathered(u) and u.args[2] is node else
                    str(u.target) in ("aten.sum.default", "aten.mean.default") and u.kwargs.get("dtype") is None
                    for u in node.users))


def _selection_of(node):
    """The masked_select that node, a reduced selection or a gather of one,
    stands for."""
    return node.args[2] if _gathered(node) else node


def _gathered_lines(node):
    """The lines of node, gather(w, 0, selection) of a reduced selection:
    the gather at every position, zero where the mask is false."""
    w, mask, name = _arg(node, node.args[0]), _arg(node, node.args[2].args[1]), node.name
    return ["    %%%s__all = aten.gather.default(%s, 0, %%%s)" % (name, w, node.args[2].name),
            "    %%%s = aten.where.ScalarOther(%s, %%%s__all, 0)" % (name, mask, name)]


def _selection_mean(node):
    """The lines of node, the mean of a reduced selection (masked_select(x,
    mask) written as where(mask, x, 0), or a gather of it): its sum over
    the count of true mask elements."""
    selected, name = node.args[0], node.name
    mask = _arg(node, _selection_of(selected).args[1])
    return ["    %%%s__sum = aten.sum.default(%%%s)" % (name, selected.name),
            "    %%%s__ones = aten.ones_like.default(%%%s)" % (name, selected.name),
            "    %%%s__selected = aten.where.ScalarOther(%s, %%%s__ones, 0)" % (name, mask, name),
            "    %%%s__count = aten.sum.default(%%%s__selected)" % (name, name),
            "    %%%s = aten.div.Tensor(%%%s__sum, %%%s__count)" % (name, name, name)]


def _output(results):
    for r in results:
        if not isinstance(r, torch.fx.Node):
            raise ValueError("output: %r is no value of the graph (tjit returns tensors only)" % (r,))
    return "    return (%s%s)" % (", ".join("%" + r.name for r in results), "," if len(results) == 1 else "")


def _attribute(gm, node):
    """The tensor get_attr node reads from gm (make_fx's _param_constant0:
    the very parameter the traced function read)."""
    value = gm
    for part in node.target.split("."):
        value = getattr(value, part)
    if not isinstance(value, torch.Tensor):
        raise ValueError("%s: get_attr %s is a %s, not a tensor" % (node.name, node.target, type(value).__name__))
    return value


def _constant(gm, node, blocks):
    """A get_attr tensor as a constant; its values after 'return' (appended
    to blocks) when it has more than INLINE_MAX, as tjit's printer does."""
    value = _attribute(gm, node).detach()
    data = "[%s]" % ", ".join(_element(v, value.dtype) for v in value.reshape(-1).tolist())
    line = "    %%%s : %s = constant(" % (node.name, _type(node.name, value.dtype, value.shape))
    if value.numel() > INLINE_MAX:
        blocks.append("%s = %s" % (node.name, data))
        return line + node.name + ")"
    return line + data + ")"


def to_tjit_text(gm, *example_inputs, ops=None):
    """gm (a torch.fx.GraphModule from make_fx) in tjit's graph text.
    example_inputs: what gm was traced with (nested as make_fx took them: a
    dict of parameters is flattened as make_fx flattens it), or none: the
    placeholders' meta serves then. ops: the operator overloads tjit has
    (tjit_ops()), to name a missing one here; without it, tj_graph_parse
    names it. Raises ValueError naming the node for what the text cannot
    hold."""
    return _text(gm, example_inputs, ops, lambda results: results)


def _text(gm, example_inputs, ops, returned, attributes=()):
    """to_tjit_text, returning returned(gm's outputs, flattened), and with
    the get_attr nodes in `attributes` as inputs after gm's own."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    examples = tree_flatten(list(example_inputs))[0] or [None] * len(placeholders)
    if len(examples) != len(placeholders):
        raise ValueError("%d example inputs for %d placeholders" % (len(examples), len(placeholders)))
    examples = list(examples) + [_attribute(gm, n) for n in attributes]
    header = ", ".join("%%%s : %s" % (n.name, _placeholder_type(n, x))
                       for n, x in zip(placeholders + list(attributes), examples) if not _baked(n, x))
    lines, blocks, slots, checked = ["graph(%s):" % header], [], _getitems(gm), _checked_calls(gm)
    for n in gm.graph.nodes:
        if n.op == "get_attr":
            if n not in attributes:
                lines.append(_constant(gm, n, blocks))
        elif n.op == "call_function" and n.target is not operator.getitem:
            # a result nothing reads, of a call that writes nothing: left out
            # (BatchNorm's empty uint8 "reserve" tensor, which tjit's batch norm does not return)
            if not n.users and isinstance(n.target, torch._ops.OpOverload) and not n.target._schema.is_mutable:
                continue
            if _selection_reduced(n):
                lines.append("    %%%s = aten.where.ScalarOther(%s, %s, 0)" % (n.name, _arg(n, n.args[1]), _arg(n, n.args[0])))
            elif _gathered(n) and _selection_reduced(n.args[2]):
                lines += _gathered_lines(n)
            elif str(n.target) == "aten.mean.default" and isinstance(n.args[0], torch.fx.Node) and (
                    _selection_reduced(n.args[0]) or _gathered(n.args[0]) and _selection_reduced(n.args[0].args[2])):
                lines += _selection_mean(n)
            else:
                lines.append(_call(n, slots, ops, checked))
        elif n.op == "output":
            lines.append(_output(returned(tree_flatten(n.args[0])[0])))  # an LSTM's (output, (h, c))
        elif n.op not in ("placeholder", "call_function"):
            raise ValueError("%s: %s nodes have no form in tjit's text (make_fx writes call_function)" % (n.name, n.op))
    return "\n".join(lines + blocks) + "\n"


def write_tjit_text(path, gm, *example_inputs, ops=None):
    """Writes to_tjit_text(gm, *example_inputs, ops=ops) to the file `path`
    (not created when the graph cannot be written)."""
    text = to_tjit_text(gm, *example_inputs, ops=ops)
    with open(path, "w") as f:
        f.write(text)


def save_case(prefix, gm, *example_inputs, ops=None, tjit="tjit"):
    """Writes what `tjit run` needs to replay gm and check it against torch:
    PREFIX.txt (the graph), PREFIX.in<k>.npy (the example inputs, flattened
    in placeholder order as make_fx flattens them: a dict of parameters in
    its order; detached) and PREFIX.out<k>.npy (gm's outputs on them,
    flattened; run under torch.no_grad(), as the graph holds its backward).
    Returns the command line that runs and checks it."""
    import numpy

    def save(path, t):
        numpy.save(path, t.detach().contiguous().numpy())

    write_tjit_text(prefix + ".txt", gm, *example_inputs, ops=ops)
    command = [tjit, "run", prefix + ".txt"]
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    tensors = [t for n, t in zip(placeholders, tree_flatten(list(example_inputs))[0]) if not _baked(n, t)]
    for k, t in enumerate(tensors):  # before gm may update them in place
        save("%s.in%d.npy" % (prefix, k), t)
        command.append("%s.in%d.npy" % (prefix, k))
    with torch.no_grad():  # the graph holds its own backward; its in-place updates of leaves then run as traced
        outputs = gm(*example_inputs)
    for k, t in enumerate(tree_flatten(outputs)[0]):
        save("%s.out%d.npy" % (prefix, k), t)
        command += ["--expect", "%s.out%d.npy" % (prefix, k)]
    return " ".join(command)


def _input_alias(node, roots=("placeholder",)):
    """Whether node is a placeholder (or another of the node kinds `roots`),
    or a view of one through view operators only (t, view, expand, detach,
    ...)."""
    while isinstance(node, torch.fx.Node) and node.op == "call_function":
        schema = getattr(node.target, "_schema", None)
        if (schema is None or schema.is_mutable or len(schema.returns) != 1
                or not isinstance(schema.returns[0].type, torch.TensorType) or schema.returns[0].alias_info is None):
            return False
        node = node.args[0]
    return isinstance(node, torch.fx.Node) and node.op in roots


def _writes_inputs(gm):
    """Whether a call of gm writes in place into an input or a get_attr
    tensor (a buffer), or a view of one."""
    for n in gm.graph.nodes:
        schema = getattr(n.target, "_schema", None)
        if n.op == "call_function" and schema is not None and schema.is_mutable:
            for a, arg in zip(schema.arguments, n.args):
                if a.alias_info is not None and a.alias_info.is_write and _input_alias(arg, ("placeholder", "get_attr")):
                    return True
    return False


def _plain(a):
    """a, an output node's argument, with the lists and dicts fx keeps
    immutable made the plain ones gm's code returns."""
    from torch.fx.immutable_collections import immutable_dict, immutable_list

    if isinstance(a, immutable_list):
        return [_plain(v) for v in a]
    if isinstance(a, immutable_dict):
        return {k: _plain(v) for k, v in a.items()}
    return tuple(_plain(v) for v in a) if type(a) is tuple else a


def compile(gm, *example_inputs, decompose=False, freeze=False, differentiable=True):
    """gm (from make_fx, or a graph functorch's aot_function hands its
    compilers) compiled by tjit in this process (python/tjit.py): returns a
    function called as gm is (inputs nested as gm takes them) that returns
    gm's outputs, nested as gm returns them, computed by a tjit plan reading
    and writing the torch tensors' memory in place (by address), without a copy
    (inputs gm updates in place are updated). As AOTAutograd's runtime
    wrapper does, outputs that are inputs or views of them (a forward graph
    returns the input and t(weight) for its backward) are made again from
    the inputs by torch, as views, and None outputs (an AOT backward graph's
    for inputs without gradients) stay None: the plan computes the rest.
    example_inputs as for to_tjit_text; the plan is compiled for their
    dtypes and shapes (other strides are fine). gm's get_attr tensors (make_fx's
    _param_constant0: parameters and buffers the traced function read) are
    inputs of the plan read from gm at each call, as gm reads them: updates
    show, and buffers the graph updates in place are updated. freeze: their
    values of now are constants of the plan instead (torch.jit.freeze's
    bargain: a call passes fewer arrays, and the plan folds what
    depends on them alone; later updates do not show, and a buffer the graph
    updates in place is the plan's copy). decompose: lower the graph
    through tjit's core decomposition table first. Outputs carry autograd
    history as gm's would: a call in grad mode with an input or a parameter
    that requires grad runs gm through aot_module instead (its forward and
    backward graphs compiled by tjit, traced at the first such call; a
    frozen function, one of a graph writing its inputs in place, or one made
    with differentiable=False as the graphs AOTAutograd hands tjit's
    compilers are, warns once that its outputs have none). The function carries
    .plan (tjit.Plan) and .text (the graph text). Raises ValueError as
    to_tjit_text, tjit.TjitError for what tjit refuses."""
    returned, spec = tree_flatten(_plain(next(n for n in gm.graph.nodes if n.op == "output").args[0]))
    aliases = {r for r in returned if _input_alias(r)}
    computed = [r for r in returned if r is not None and r not in aliases]
    # read at each call, as gm reads them: a constant would keep their values of now
    attributes = [] if freeze else [n for n in gm.graph.nodes if n.op == "get_attr"]
    text = _text(gm, example_inputs, None, lambda results: computed, attributes)
    readers = [operator.attrgetter(n.target) for n in attributes]
    graph = _parse(text, gm)
    plan = (graph.decompose() if decompose else graph).compile()
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    examples = tree_flatten(list(example_inputs))[0] or [None] * len(placeholders)
    baked = {k: _example(n, x) for k, (n, x) in enumerate(zip(placeholders, examples)) if _baked(n, x)}
    # of outputs without autograd history, once; aot_module of gm per pattern of inputs requiring grad
    warned, traced = [], {}
    # why a call in grad mode cannot run gm through aot_module, or None
    undifferentiable = ("frozen" if freeze else "made with differentiable=False" if not differentiable else
                        "writing its inputs in place (BatchNorm's running statistics), which AOTAutograd 1.13 "
                        "does not support"
                        if _writes_inputs(gm) else None)
    needed = set()  # the view calls the aliases need
    for r in aliases:
        while r.op == "call_function":
            needed.add(r)
            r = r.args[0]
    views = [n for n in gm.graph.nodes if n in needed]  # in graph order
    pytree_info = getattr(gm.graph._codegen, "pytree_info", None)  # make_fx of a function taking or returning nests
    if pytree_info is not None and pytree_info.out_spec is not None:
        spec = pytree_info.out_spec
    in_spec = pytree_info.in_spec if pytree_info is not None else None
    # parameters frozen into the plan that require grad: their gradients are lost, as for an input's
    frozen_grad = freeze and any(p.requires_grad for p in gm.parameters())

    def run(*args):
        if all(isinstance(a, torch.Tensor) for a in args):
            flat = args
        else:  # by the traced structure, as gm flattens them: a dict by its keys, not their order
            flat = torch.fx._pytree.tree_flatten_spec(list(args), in_spec) if in_spec else tree_flatten(list(args))[0]
        tensors = _unbaked(flat, baked, placeholders) if baked else flat
        params = [read(gm) for read in readers]
        grads = tuple(getattr(t, "requires_grad", False) for t in list(tensors) + params)
        if torch.is_grad_enabled() and (frozen_grad or any(grads)):
            if not undifferentiable:
                if grads not in traced:  # functorch 1.13 traces once, for the first call's inputs requiring grad
                    traced[grads] = aot_module(gm, decompose=decompose)
                return traced[grads](*args)
            if not warned:
                warned.append(True)
                warnings.warn("tjit_fx.compile: inputs require grad, the outputs of a function %s do not "
                              "(call under torch.no_grad())" % undifferentiable, stacklevel=2)
        values = dict(zip(computed, plan(*tensors, *params)))
        values.update(zip(placeholders, flat))
        for n in views:
            values[n] = n.target(*torch.fx.node.map_arg(n.args, values.__getitem__), **n.kwargs)
        return tree_unflatten([None if r is None else values[r] for r in returned], spec)

    run.plan, run.text = plan, text
    return run


def _parse(text, gm):
    """tjit.Graph(text), its errors naming gm's node rather than a line of
    the text generated from gm."""
    import tjit

    try:
        return tjit.Graph(text)
    except tjit.TjitError as e:
        found = re.match(r"tj_graph_parse: line (\d+), column \d+: (.*)", str(e), re.S)
        lines = text.split("\n")
        name = found and int(found.group(1)) <= len(lines) and re.match(r"\s*%(\w+)", lines[int(found.group(1)) - 1])
        node = name and next((n for n in gm.graph.nodes if n.name == name.group(1)), None)
        node = node.args[0] if node and node.target is operator.getitem else node  # one of a call's results
        if not node:
            raise
        raise tjit.TjitError("node %s (%s): %s" % (node.name, node.target, found.group(2))) from None


def _unbaked(flat, baked, placeholders):
    """flat without the Python scalars make_fx baked into the graph, each
    checked against its traced value: the graph holds that value, so another
    would be silently ignored."""
    for k, value in baked.items():
        if not _same_scalar(flat[k], value):
            raise ValueError("placeholder %s: %r (%s) now, %r (%s) when traced: make_fx wrote the traced value "
                             "into the graph (trace again for another, or pass it as a tensor)"
                             % (placeholders[k].name, flat[k], type(flat[k]).__name__, value, type(value).__name__))
    return [x for k, x in enumerate(flat) if k not in baked]


def _same_scalar(a, b):
    """Whether a call's Python scalar a is the traced b: of one type (2 and
    2.0, True and 1 give other dtypes), equal, a float's sign too (x / -0.0
    is not x / 0.0), nan as nan."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (a == b and math.copysign(1, a) == math.copysign(1, b)) or (a != a and b != b)
    return a == b


def _aot_compilers(decompose):
    from functorch.compile import make_boxed_func

    def compiler(gm, example_inputs):  # AOTAutograd calls it with a list of arguments (boxed)
        return make_boxed_func(compile(gm, *example_inputs, decompose=decompose, differentiable=False))

    return {"fw_compiler": compiler, "bw_compiler": compiler}


def aot_function(fn, decompose=False, **kwargs):
    """fn traced as functorch.compile.aot_function traces it (forward and
    backward graphs, AOTAutograd), each graph compiled by compile(): tjit
    as a backend of PyTorch training. kwargs go to aot_function
    (partition_fn, decompositions, ...). functorch 1.13 traces at the first
    call only: later calls must bring the same input shapes (the plans
    refuse others, naming the input), and the module's mode then
    (train / eval) stays the graph's."""
    from functorch.compile import aot_function as aot

    return aot(fn, **_aot_compilers(decompose), **kwargs)


def aot_module(module, decompose=False, **kwargs):
    """aot_function for an nn.Module (functorch.compile.aot_module): its
    parameters and buffers are the graph's inputs, read in place."""
    from functorch.compile import aot_module as aot

    return aot(module, **_aot_compilers(decompose), **kwargs)
