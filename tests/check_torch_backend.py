#!/usr/bin/python3
"""Checks tjit as a PyTorch backend (python/tjit_fx.py's compile,
aot_function and aot_module over python/tjit.py) against torch eager, for
the module kinds a PyTorch user brings: forward passes, and training steps
(AOTAutograd's forward and backward graphs run by tjit, torch's optimiser)
of an MLP, a CNN with BatchNorm, a GPT block, an LSTM and an embedding
model, plain and through tjit's core decompositions. Needs torch (1.13,
Debian's python3-torch), so the suite does not run it (it runs
tests/test_python_binding.py, NumPy only); run it after changing either
module, from the checkout after building:

    OPENBLAS_CORETYPE=Haswell /usr/bin/python3 tests/check_torch_backend.py

Prints one line per case and exits 1 when any differs from torch beyond
float32 tolerances (outputs, losses over 4 steps, every parameter after)."""
import copy
import os
import sys
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.fx.experimental.proxy_tensor import make_fx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)
import tjit_fx  # noqa: E402
from make_fx_import import AttentionBlock  # noqa: E402

warnings.filterwarnings("ignore", category=UserWarning)
RTOL, ATOL = 1e-4, 1e-5
failures = []


def close(a, b):
    return torch.allclose(a, b, rtol=RTOL, atol=ATOL)


def report(name, ok, detail=""):
    print("%-50s %s %s" % (name, "ok" if ok else "FAILED", detail))
    if not ok:
        failures.append(name)


class Lstm(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 16, batch_first=True)
        self.head = nn.Linear(16, 4)

    def forward(self, x):
        out, (h, c) = self.lstm(x)
        return self.head(out[:, -1]) + c.sum()


class Embed(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(50, 16)
        self.norm = nn.LayerNorm(16)
        self.head = nn.Linear(16, 50)

    def forward(self, tokens):
        return self.head(F.gelu(self.norm(self.embed(tokens)))).flatten(0, 1)


def models():
    torch.manual_seed(0)
    mlp = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
    cnn = nn.Sequential(nn.Conv2d(1, 8, 5, padding=2), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                        nn.Linear(8 * 14 * 14, 10))
    labels = torch.randint(0, 10, (16,))
    tokens = torch.randint(0, 50, (4, 12))
    return [
        ("mlp", mlp, torch.randn(16, 784), lambda out: F.cross_entropy(out, labels)),
        ("cnn with BatchNorm", cnn, torch.randn(16, 1, 28, 28), lambda out: F.cross_entropy(out, labels)),
        ("GPT block", AttentionBlock(d=64, heads=4), torch.randn(2, 16, 64), lambda out: out.pow(2).mean()),
        ("LSTM", Lstm(), torch.randn(4, 10, 8), lambda out: out.pow(2).mean()),
        ("embedding, LayerNorm, GELU", Embed(), tokens, lambda out: F.cross_entropy(out, tokens.flatten())),
    ]


def check_forward(name, module, x, decompose):
    module = copy.deepcopy(module).eval()
    with torch.no_grad():
        gm = make_fx(lambda x: module(x))(x)
        got, want = tjit_fx.compile(gm, x, decompose=decompose)(x), module(x)
    report("%s forward%s" % (name, " (decomposed)" if decompose else ""), close(got, want),
           "max |diff| %.2g" % (got - want).abs().max().item())


def check_training(name, module, x, loss_fn, decompose):
    """Losses and parameters against torch eager; buffers (BatchNorm's
    running statistics) against AOTAutograd with functorch's nop compilers:
    functorch 1.13's aot_module updates them at each of its traces too."""
    from functorch.compile import aot_module, nop

    models = [copy.deepcopy(module) for _ in range(3)]
    runs = [models[0], aot_module(models[1], fw_compiler=nop, bw_compiler=nop),
            tjit_fx.aot_module(models[2], decompose=decompose)]
    losses = []
    for model, run in zip(models, runs):
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        losses.append([])
        for _ in range(4):
            opt.zero_grad()
            loss = loss_fn(run(x))
            loss.backward()
            opt.step()
            losses[-1].append(loss.item())
    eager, aot, tjit = (dict(m.named_parameters()) for m in models)
    buffers = [dict(m.named_buffers()) for m in models]
    worst = max([(v - tjit[k]).abs().max().item() for k, v in eager.items()] + [0])
    ok = (all(close(torch.tensor(a), torch.tensor(b)) for a, b in zip(losses[0], losses[2]))
          and all(close(tjit[k], v) for k, v in eager.items())
          and all(close(buffers[2][k].double(), v.double()) for k, v in buffers[1].items()))
    report("%s training, 4 steps%s" % (name, " (decomposed)" if decompose else ""), ok,
           "last loss %.5f / %.5f, max |parameter diff| %.2g" % (losses[0][-1], losses[2][-1], worst))


def check_nested_and_aliases():
    """Nested inputs and outputs, an output that is an input's view, a None."""
    def f(params, x):
        y = x @ params["w"]
        return {"y": y, "wt": params["w"].t(), "x": x, "pair": (y.sum(), None)}
    params, x = {"w": torch.randn(3, 4)}, torch.randn(2, 3)
    gm = make_fx(f)(params, x)
    got, want = tjit_fx.compile(gm, params, x)(params, x), f(params, x)
    ok = (close(got["y"], want["y"]) and close(got["pair"][0], want["pair"][0]) and got["pair"][1] is None
          and got["wt"].data_ptr() == params["w"].data_ptr() and got["x"] is x)
    report("nested inputs and outputs, input aliases", ok)


def check_plain_collections():
    """A function returning a list and a dict gets a list and a dict back
    (fx's output node holds immutable ones)."""
    def f(x):
        return [x * 2, {"a": x + 1}]
    x = torch.randn(3)
    got = tjit_fx.compile(make_fx(f)(x), x)(x)
    report("lists and dicts returned as gm returns them", type(got) is list and type(got[1]) is dict
           and close(got[0], x * 2) and close(got[1]["a"], x + 1))


def check_parameters_followed():
    """make_fx of a module call reads its parameters through get_attr
    nodes, at every call of gm: the compiled function too, so an update in
    place (an optimiser step) or a tensor assigned to gm's attribute shows,
    and a buffer the graph updates in place is the module's."""
    lin, bn = nn.Linear(3, 2), nn.BatchNorm1d(3)
    eager = copy.deepcopy(bn)
    x = torch.randn(4, 3)
    with torch.no_grad():
        gm = make_fx(lambda x: lin(x))(x)
        f = tjit_fx.compile(gm, x)
        lin.weight.mul_(2)
        ok = close(f(x), lin(x))
        gm._param_constant1 = nn.Parameter(torch.ones(2))
        ok = ok and close(f(x), gm(x))
        frozen, before = tjit_fx.compile(gm, x, freeze=True), gm(x)
        lin.weight.mul_(2)
        ok = ok and close(frozen(x), before) and not close(gm(x), before)  # the weight of freezing time
    report("parameters read at each call, as gm reads them (unless frozen)", ok)
    traced = make_fx(lambda x: bn(x))(x)  # train mode: updates bn's running statistics
    bn.load_state_dict(eager.state_dict())  # as before the trace, which updated them
    got, want = tjit_fx.compile(traced, x)(x), eager(x)
    report("buffers a graph updates in place are the module's", close(got, want)
           and close(bn.running_mean, eager.running_mean) and close(bn.running_var, eager.running_var))


def check_plan_on_torch_tensors():
    """tjit.Plan on torch tensors as torch's own operators would treat them:
    a negated view read as its values, tjit's in-place writes counted in
    the version counter (autograd refuses the overwritten saved value), an
    out= tensor that requires grad refused."""
    import tjit
    add_ = tjit.Graph("graph(%x : f32[3]):\n    %add_ = aten.add_.Tensor(%x, 1)\n    return (%add_,)\n").compile()
    double = tjit.Graph("graph(%x : f32[3]):\n    %mul = aten.mul.Tensor(%x, 2)\n    return (%mul,)\n").compile()
    z = torch.tensor([1 + 1j, 2 - 2j, 3j])
    imag = z.conj().imag  # float32 with the negative bit set
    report("negated view read as its values", close(double(imag)[0], imag * 2))
    a = torch.ones(3, requires_grad=True)
    b = a * 2
    c = b * b  # saves b
    with torch.no_grad():  # in grad mode tjit refuses to write b, which requires grad
        add_(b)
    try:
        c.sum().backward()
        report("a saved value tjit overwrote is refused by backward", False, "gradient %s" % a.grad.tolist())
    except RuntimeError as e:
        report("a saved value tjit overwrote is refused by backward", "modified by an inplace operation" in str(e))
    try:
        double(torch.ones(3), out=[torch.zeros(3, requires_grad=True)])
        report("an out= tensor that requires grad is refused", False)
    except tjit.TjitError as e:
        report("an out= tensor that requires grad is refused", "output 0 requires grad" in str(e))


def check_exporter_edges():
    """Python scalars make_fx baked into the graph (checked at each call),
    compile's outputs with autograd history, an operator tjit lacks named
    by its FX node, label smoothing's mean of a selection, and tensors lent
    with strides (slices)."""
    import tjit
    x = torch.randn(3)
    f = tjit_fx.compile(make_fx(lambda x, s, n: x * s + n)(x, 2.0, 3), x, 2.0, 3)
    ok = close(f(x, 2.0, 3), x * 2 + 3)
    try:
        f(x, 2.5, 3)
        ok = False
    except ValueError as e:
        ok = ok and "placeholder s_1: 2.5 (float) now, 2.0 (float) when traced" in str(e)
    report("Python scalars baked into the graph, checked at each call", ok)
    lin = nn.Linear(3, 2)
    reference = copy.deepcopy(lin)
    g = tjit_fx.compile(make_fx(lambda x: lin(x))(x), x)
    xg = x.clone().requires_grad_()
    g(xg).pow(2).sum().backward()
    xr = x.clone().requires_grad_()
    reference(xr).pow(2).sum().backward()
    report("compile's outputs carry autograd (through aot_module) when inputs require grad",
           close(lin.weight.grad, reference.weight.grad) and close(xg.grad, xr.grad))
    frozen = tjit_fx.compile(make_fx(lambda x: lin(x))(x), x, freeze=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frozen(xg)
        frozen(xg)
    report("a frozen function's outputs without autograd: one warning", len(caught) == 1
           and "frozen" in str(caught[0].message))
    try:
        tjit_fx.compile(make_fx(lambda x: torch.special.erfcx(x) + 1)(x), x)
        report("an operator tjit lacks is named by its node", False)
    except tjit.TjitError as e:
        report("an operator tjit lacks is named by its node",
               str(e).startswith("node special_erfcx (aten.special_erfcx.default): unknown operator"), str(e))
    net = nn.Linear(5, 5)
    reference = copy.deepcopy(net)
    compiled, xs, ys = tjit_fx.aot_module(net), torch.randn(8, 5), torch.tensor([0, 1, 2, -100, 4, 0, 1, 2])
    losses = [F.cross_entropy(m(xs), ys, label_smoothing=0.1) for m in (compiled, reference)]
    for loss in losses:
        loss.backward()
    report("label smoothing (a mean of masked_select) forward and backward", close(losses[0], losses[1])
           and close(net.weight.grad, reference.weight.grad))
    net.weight.grad, reference.weight.grad, w = None, None, torch.rand(5) + 0.5
    losses = [F.cross_entropy(m(xs), ys, weight=w, label_smoothing=0.1) for m in (compiled, reference)]
    for loss in losses:
        loss.backward()
    report("weighted label smoothing (a sum of a gather of masked_select) forward and backward",
           close(losses[0], losses[1]) and close(net.weight.grad, reference.weight.grad))
    d = {"a": torch.randn(3), "b": torch.randn(3)}
    sub = tjit_fx.compile(make_fx(lambda d: d["a"] - d["b"])(d), d)
    report("dict arguments matched by key, as the GraphModule does", close(sub({"b": d["b"], "a": d["a"]}), d["a"] - d["b"]))
    h = tjit_fx.compile(make_fx(lambda x, s: x / s)(x, 0.0), x, 0.0)
    try:
        h(x, -0.0)
        report("a baked 0.0 refuses -0.0", False)
    except ValueError:
        report("a baked 0.0 refuses -0.0", True)
    first = tjit_fx.compile(make_fx(lambda x: lin(x))(x), x)
    first(x).sum().backward()  # the parameters only require grad
    xg, xr = x.clone().requires_grad_(), x.clone().requires_grad_()
    first(xg).sum().backward()
    lin(xr).sum().backward()
    report("an input requiring grad after calls where none did gets its gradient", close(xg.grad, xr.grad))
    add_ = tjit.Graph("graph(%x : f32[3]):\n    %add_ = aten.add_.Tensor(%x, 1)\n    return (%add_,)\n").compile()
    try:
        add_(torch.zeros(3, requires_grad=True) * 1)
        report("an input tjit writes that requires grad is refused", False)
    except tjit.TjitError as e:
        report("an input tjit writes that requires grad is refused", "input 0 requires grad" in str(e), str(e))
    with torch.inference_mode():
        frozen_out = torch.zeros(3)
    try:
        add_(torch.zeros(3), out=[frozen_out])
        report("an inference tensor tjit would write is refused", False)
    except tjit.TjitError as e:
        report("an inference tensor tjit would write is refused", "inference tensor" in str(e) and
               frozen_out.abs().sum() == 0, str(e))

    class Halves(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.randn(6, 3))

        def forward(self, x):
            a, b = self.w.chunk(2)
            return x @ a.t() + x @ b.t()
    halves, xs = Halves(), torch.randn(2, 3)
    with torch.no_grad():
        report("a parameter split into pieces", close(tjit_fx.compile(make_fx(halves)(xs), xs)(xs), halves(xs)))
    a, b = torch.randn(3, 3, dtype=torch.float64), torch.randn(3, dtype=torch.float64)
    solve = tjit_fx.compile(make_fx(torch.linalg.solve)(a, b), a, b)
    try:
        solve(torch.zeros(3, 3, dtype=torch.float64), b)
        report("a singular matrix raises, as torch.linalg.solve's _linalg_check_errors does", False)
    except tjit.TjitError as e:
        report("a singular matrix raises, as torch.linalg.solve's _linalg_check_errors does", "singular" in str(e), str(e))
    conv, seq_y = nn.Conv1d(3, 5, 1), torch.tensor([[0, 3, -100, 1], [4, 4, 0, 2]])
    reference, compiled, xs = copy.deepcopy(conv), tjit_fx.aot_module(conv), torch.randn(2, 3, 4)
    losses = [F.cross_entropy(m(xs), seq_y) for m in (compiled, reference)]
    for loss in losses:
        loss.backward()
    report("cross_entropy of [N, C, T] (nll_loss2d_forward / backward) forward and backward",
           close(losses[0], losses[1]) and close(conv.weight.grad, reference.weight.grad))
    m = torch.randn(4, 6)
    mm = tjit_fx.compile(make_fx(torch.mm)(m[:, :3], m[:3, :4]), m[:, :3], m[:3, :4])
    report("strided tensors lent as they are", close(mm(m[:, 1:4], m[1:4, 2:]), m[:, 1:4] @ m[1:4, 2:]))


def check_transformer_encoder():
    """An eval nn.TransformerEncoder (2 layers, batch_first) under no_grad,
    both norm orders: make_fx records torch 1.13's fused
    _transformer_encoder_layer_fwd per layer, which tjit runs as it is and
    through its core decompositions. With a key padding mask the encoder's
    nested-tensor form does not trace in torch itself
    (_nested_tensor_from_mask); enable_nested_tensor=False keeps the mask
    on each layer's fused call."""
    torch.manual_seed(0)
    x = torch.randn(3, 7, 32)
    pad = torch.zeros(3, 7, dtype=torch.bool)
    pad[1, 5:] = True
    for norm_first in (False, True):
        layer = nn.TransformerEncoderLayer(32, 4, 64, batch_first=True, norm_first=norm_first,
                                           activation="gelu" if norm_first else "relu")
        enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False).eval()
        with torch.no_grad():
            for name, fn, args in (("", lambda x: enc(x), (x,)),
                                   (", padding mask", lambda x, m: enc(x, src_key_padding_mask=m), (x, pad))):
                gm = make_fx(fn)(*args)
                fused = sum(n.target == torch.ops.aten._transformer_encoder_layer_fwd.default for n in gm.graph.nodes)
                want = fn(*args)
                for decompose in (False, True):
                    got = tjit_fx.compile(gm, *args, decompose=decompose)(*args)
                    report("TransformerEncoder norm_first=%s%s%s" % (norm_first, name, " (decomposed)" if decompose else ""),
                           fused == 2 and close(got, want), "%d fused layers, max |diff| %.2g" % (fused, (got - want).abs().max().item()))


def check_embedding_bag():
    """nn.EmbeddingBag (1-D tokens with offsets, an empty bag; padding_idx 0
    for mean and max, none for sum: float32 sum's empty offset2bag) + Linear
    per mode: the forward through compile of frozen parameters (torch records
    _embedding_bag_forward_only), plain and decomposed, and 4 SGD steps
    through aot_module (_embedding_bag and _embedding_bag_dense_backward)."""
    class BagHead(nn.Module):
        def __init__(self, mode, padding_idx):
            super().__init__()
            self.bag, self.head = nn.EmbeddingBag(20, 8, mode=mode, padding_idx=padding_idx), nn.Linear(8, 3)

        def forward(self, t, o):
            return self.head(self.bag(t, o))

    tokens = torch.tensor([3, 0, 7, 7, 12, 5, 0, 0, 9, 1, 2, 3])
    offsets = torch.tensor([0, 4, 4, 6, 8])
    for mode, padding_idx in (("sum", None), ("mean", 0), ("max", 0)):
        torch.manual_seed(0)
        model = BagHead(mode, padding_idx)
        frozen = copy.deepcopy(model).requires_grad_(False)
        for decompose in (False, True):
            gm = make_fx(frozen)(tokens, offsets)
            got = tjit_fx.compile(gm, tokens, offsets, decompose=decompose)(tokens, offsets)
            report("EmbeddingBag %s + Linear forward%s" % (mode, " (decomposed)" if decompose else ""),
                   "_embedding_bag_forward_only" in gm.code and close(got, frozen(tokens, offsets)))
        models = [copy.deepcopy(model) for _ in range(2)]
        runs = [models[0], tjit_fx.aot_module(models[1])]
        losses = []
        for m, run in zip(models, runs):
            opt = torch.optim.SGD(m.parameters(), lr=0.1)
            losses.append([])
            for _ in range(4):
                opt.zero_grad()
                loss = run(tokens, offsets).pow(2).mean()
                loss.backward()
                opt.step()
                losses[-1].append(loss.item())
        eager, tj = dict(models[0].named_parameters()), dict(models[1].named_parameters())
        report("EmbeddingBag %s + Linear training, 4 steps" % mode,
               all(close(torch.tensor(a), torch.tensor(b)) for a, b in zip(*losses))
               and all(close(tj[k], v) for k, v in eager.items()),
               "last loss %.5f / %.5f" % (losses[0][-1], losses[1][-1]))


def check_linalg_solve():
    """torch.linalg.solve (with slogdet, inv, cholesky and cholesky_solve)
    and its gradient through tjit_fx.aot_function (tjit's LAPACK operators
    forward, linalg_lu_solve and linalg_solve_triangular in the backward),
    a batch and a broadcast right-hand side, float64 and float32."""
    torch.manual_seed(0)
    for dtype in (torch.float64, torch.float32):
        a = (torch.randn(2, 4, 4, dtype=dtype) + 4 * torch.eye(4, dtype=dtype)).requires_grad_()
        b = torch.randn(3, 1, 4, 2, dtype=dtype).requires_grad_()
        def f(a, b):
            spd = a @ a.mT + torch.eye(4, dtype=a.dtype)
            return (torch.linalg.solve(a, b).square().sum() + torch.linalg.slogdet(a)[1].sum()
                    + torch.linalg.inv(a).sum() + torch.cholesky_solve(b, torch.linalg.cholesky(spd)).sum())
        want = f(a, b)
        gw = torch.autograd.grad(want, (a, b))
        got = tjit_fx.aot_function(f)(a, b)
        gg = torch.autograd.grad(got, (a, b))
        report("linalg.solve and its gradient (%s)" % str(dtype)[6:], close(got, want)
               and all(close(x, y) for x, y in zip(gg, gw)), "loss %.5f / %.5f" % (got.item(), want.item()))



def check_linalg_factor():
    """torch.linalg.qr, eigh, eigvalsh, svd, svdvals and lu with their
    gradients, and lu_factor with lu_solve, through tjit_fx.aot_function
    (tjit's _linalg_eigh, _linalg_svd, linalg_qr, linalg_lu forward, their
    backward graphs), float64 and float32. The spectra are well separated (so the
    vectors' gradients are defined); the vectors are compared as they come:
    torch calls the same OpenBLAS routines."""
    torch.manual_seed(0)
    for dtype in (torch.float64, torch.float32):
        a = torch.randn(2, 5, 3, dtype=dtype).requires_grad_()
        q = torch.linalg.qr(torch.randn(2, 4, 4, dtype=torch.float64))[0]
        s = (q @ torch.diag_embed(torch.tensor([-2.0, -0.5, 1.0, 3.0], dtype=torch.float64)) @ q.mT)
        s = s.to(dtype).requires_grad_()
        b = torch.randn(2, 4, 1, dtype=dtype)

        def f(a, s):
            Q, R = torch.linalg.qr(a)
            L, V = torch.linalg.eigh(s)
            U, S, Vh = torch.linalg.svd(a, full_matrices=False)
            lu, piv = torch.linalg.lu_factor(s.detach())
            return ((Q * Q.cos()).sum() + R.sum() + L.sum() + (V * V.exp()).sum() + torch.linalg.eigvalsh(s).square().sum()
                    + (U * U.sin()).sum() + S.sum() + Vh.sum() + torch.linalg.svdvals(s).sum()
                    + torch.linalg.lu_solve(lu, piv, b).sum() + sum((t * t).sum() for t in torch.linalg.lu(s)[1:]))
        want = f(a, s)
        gw = torch.autograd.grad(want, (a, s))
        got = tjit_fx.aot_function(f)(a, s)
        gg = torch.autograd.grad(got, (a, s))
        report("linalg qr, eigh, svd, lu, lu_factor and their gradients (%s)" % str(dtype)[6:], close(got, want)
               and all(close(x, y) for x, y in zip(gg, gw)), "loss %.5f / %.5f" % (got.item(), want.item()))

def check_opsbatch4():
    """Session 57's operators through tjit_fx.compile, plain and
    decomposed: searches, running selections, order statistics and
    statistics, with the gradient of the differentiable ones (make_fx of
    torch.autograd.grad)."""
    torch.manual_seed(0)
    x = torch.randn(4, 6)
    x[1, 2] = x[1, 3]  # a tie
    b = torch.linspace(-1, 1, 5)

    def values(x, b):
        return (torch.bucketize(x, b), torch.searchsorted(b, x, right=True), torch.cummax(x, 1).indices,
                torch.logcumsumexp(x, 0), x.median(1).values, x.kthvalue(2, 0).indices,
                torch.std_mean(x, 1)[0], torch.count_nonzero(x > 0, 1), F.hardshrink(x), F.softshrink(x, 0.25))

    def grads(x):
        x = x.detach().requires_grad_()
        y = (torch.cummin(x, 1).values.sum() + torch.logcumsumexp(x, 1).sum() + x.median(0).values.sum()
             + x.kthvalue(3, 1).values.sum() + torch.std_mean(x, 0)[0].sum() + x.nanmedian()
             + (F.hardshrink(x, 0.3) ** 2).sum() + (F.softshrink(x) * x).sum())
        return torch.autograd.grad(y, x)

    for decompose in (False, True):
        tag = " (decomposed)" if decompose else ""
        got, want = tjit_fx.compile(make_fx(values)(x, b), x, b, decompose=decompose)(x, b), values(x, b)
        report("opsbatch4 values" + tag, all(close(g.double(), w.double()) for g, w in zip(got, want)))
        got, want = tjit_fx.compile(make_fx(grads)(x), x, decompose=decompose)(x), grads(x)
        report("opsbatch4 gradients" + tag, close(got[0], want[0]), "max |diff| %.2g" % (got[0] - want[0]).abs().max().item())


def check_storage_dtypes():
    """uint8 images and a float16 / bfloat16 / int32 input converted inside
    the compiled graph; a float16 result."""
    def f(img, h, b, i):
        x = img.float() / 255 + h.float() + b.float() + i.float()
        return x.half(), x

    args = (torch.tensor([[0, 17], [255, 128]], dtype=torch.uint8), torch.tensor([[0.1, 2.5]], dtype=torch.float16),
            torch.tensor([[1.5], [-3.0]], dtype=torch.bfloat16), torch.tensor([7, -8], dtype=torch.int32))
    gm = make_fx(f)(*args)
    got, want = tjit_fx.compile(gm, *args)(*args), f(*args)
    report("storage dtypes in and out", got[0].dtype == torch.float16 and torch.equal(got[0], want[0]) and
           torch.equal(got[1], want[1]), "%s / %s" % (got[0], want[0]))

    def assign(x, img):  # y[:, 1] = 7 records fill_.Tensor (7 a 0-dim tensor), on a uint8 image too
        y, z = x.clone(), img.clone()
        y[:, 1] = 7
        z[0] = 3
        return y * x, z

    x, img = torch.randn(3, 4), args[0]
    got, want = tjit_fx.compile(make_fx(assign)(x, img), x, img)(x, img), assign(x, img)
    report("indexed assignment of a number (fill_.Tensor)", all(torch.equal(g, w) for g, w in zip(got, want)))
    def loss(w):  # functionalised by aot_function: fill.Tensor and a scatter
        y = w * 2
        y[:, 1] = 7
        return (y * w).sum()

    w = torch.randn(3, 4, requires_grad=True)
    got = torch.autograd.grad(tjit_fx.aot_function(loss)(w), w)[0]
    want = torch.autograd.grad(loss(w), w)[0]
    report("indexed assignment of a number, gradient", close(got, want))

    # a bfloat16 model computes in bfloat16 (tjit: float32, rounded once per operator): torch's results within
    # one bfloat16 unit in the last place of the output's scale; its gradients through aot_function too
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.LayerNorm(32), torch.nn.Linear(32, 4),
                            torch.nn.LogSoftmax(-1)).to(torch.bfloat16)
    x = torch.randn(8, 16).to(torch.bfloat16)
    want = m(x)
    for decompose in (False, True):
        got = tjit_fx.compile(make_fx(m)(x), x, decompose=decompose)(x)
        err = (got.float() - want.float()).abs().max().item()
        report("bfloat16 model" + (" (decomposed)" if decompose else ""), got.dtype == torch.bfloat16 and err <= 0.0625,
               "max |diff| %.3g" % err)
    w = m[0].weight.detach().clone().requires_grad_()
    def loss(w):
        return (F.linear(x, w).float() ** 2).sum()
    got = torch.autograd.grad(tjit_fx.aot_function(loss)(w), w)[0]
    want = torch.autograd.grad(loss(w), w)[0]
    report("bfloat16 gradient", got.dtype == torch.bfloat16 and torch.allclose(got.float(), want.float(), rtol=2e-2, atol=2e-2),
           "max |diff| %.3g" % (got.float() - want.float()).abs().max().item())


def check_unique_random():
    """The grouping, counting and index-generating operators through
    tjit_fx.compile, plain and decomposed, where their shapes are static
    (histc, tril_indices / triu_indices, argsort and argsort.stable; the
    unique family and bincount are data-dependent, refused by a static
    plan as nonzero), and the random ones by shape, dtype and range
    (tjit's generator is not torch's)."""
    torch.manual_seed(0)
    x = torch.randn(4, 6)
    x[1, 2] = x[1, 3]  # a tie

    def values(x):
        return (torch.histc(x, 7), torch.histc(x, 4, -1, 1), torch.tril_indices(4, 6, 1), torch.triu_indices(5, 3, -1),
                x.argsort(1), x.argsort(0, descending=True), torch.argsort(x, dim=1, stable=True))

    def draws(x):
        return (torch.randint(-2, 5, (3, 4)), torch.randperm(7), torch.multinomial(x.abs(), 3),
                torch.randint_like(x, 9))

    for decompose in (False, True):
        tag = " (decomposed)" if decompose else ""
        got, want = tjit_fx.compile(make_fx(values)(x), x, decompose=decompose)(x), values(x)
        report("unique_random values" + tag, all(torch.equal(g, w) for g, w in zip(got, want)))
        got = tjit_fx.compile(make_fx(draws)(x), x, decompose=decompose)(x)
        ok = [g.shape == w.shape and g.dtype == w.dtype for g, w in zip(got, draws(x))]
        ok += [bool((got[0] >= -2).all() and (got[0] < 5).all()), torch.equal(got[1].sort().values, torch.arange(7)),
               all(len(set(r.tolist())) == 3 for r in got[2]), bool((got[3] >= 0).all() and (got[3] < 9).all())]
        report("unique_random draws" + tag, all(ok))


def check_distributions():
    """torch.distributions' special functions through tjit_fx.aot_function:
    Gamma, Beta and Dirichlet log_prob (lgamma forward, digamma in the
    backward), Normal.icdf (erfinv), Normal.cdf (erf) and a logit-based
    loss (logit, logit_backward), with the gradients of their parameters,
    float64 and float32; and the same values through tjit_fx.compile of a
    make_fx graph, plain and decomposed (special_i0e, i1, ndtri, entr,
    xlog1py, hypot, copysign, sinc, polygamma and friends)."""
    D = torch.distributions
    D.Distribution.set_default_validate_args(False)  # its checks read values: data-dependent under tracing
    torch.manual_seed(0)
    for dtype in (torch.float64, torch.float32):
        conc = (torch.rand(5, dtype=dtype) * 3 + 0.5).requires_grad_()
        rate = (torch.rand(5, dtype=dtype) + 0.5).requires_grad_()
        p = (torch.rand(5, dtype=dtype) * 0.9 + 0.05).requires_grad_()
        x = torch.rand(5, dtype=dtype) * 4 + 0.1
        u = torch.rand(5, dtype=dtype) * 0.8 + 0.1
        simplex = torch.softmax(torch.randn(5, dtype=dtype), 0)

        def f(conc, rate, p):
            # Gamma.log_prob's xlogy records bitwise_and.Tensor in its gradient
            return (D.Gamma(conc, rate).log_prob(x).sum() + D.Beta(conc, rate).log_prob(u).sum()
                    + D.Dirichlet(conc).log_prob(simplex) + D.Normal(0.5, rate).icdf(p).sum()
                    + (torch.logit(p, 1e-3) * u).sum() + torch.polygamma(2, conc).sum())
        want = f(conc, rate, p)
        gw = torch.autograd.grad(want, (conc, rate, p))
        got = tjit_fx.aot_function(f)(conc, rate, p)
        gg = torch.autograd.grad(got, (conc, rate, p))
        report("distributions log_prob / icdf and gradients (%s)" % str(dtype)[6:],
               close(got, want) and all(close(a, b) for a, b in zip(gg, gw)),
               "loss %.5f / %.5f" % (got.item(), want.item()))

    y = torch.randn(3, 4) * 2
    q = torch.rand(3, 4) * 0.98 + 0.01

    def values(y, q):
        return (torch.special.i0e(y), torch.special.i1(y), torch.special.i1e(y), torch.i0(y),
                torch.special.ndtri(q), torch.special.entr(q), torch.special.xlog1py(y, q), torch.hypot(y, q),
                torch.copysign(q, y), torch.sinc(y), torch.erfc(y), torch.erfinv(q * 2 - 1),
                torch.heaviside(y, q), torch.digamma(q), torch.lgamma(y), torch.logit(q))

    for decompose in (False, True):
        tag = " (decomposed)" if decompose else ""
        got, want = tjit_fx.compile(make_fx(values)(y, q), y, q, decompose=decompose)(y, q), values(y, q)
        report("special function values" + tag, all(close(g, w) for g, w in zip(got, want)))


def check_resample():
    """F.adaptive_max_pool2d (values and indices), adaptive_max_pool1d and
    F.interpolate's bicubic, 1-d (nearest, linear) and 3-d (nearest,
    trilinear) modes and F.adaptive_avg_pool3d through tjit_fx.compile, plain and decomposed, with
    their gradients (make_fx of torch.autograd.grad)."""
    torch.manual_seed(0)
    x = torch.randn(2, 3, 7, 9)

    def values(x):
        v, i = F.adaptive_max_pool2d(x, (3, 4), return_indices=True)
        v3 = x[:, :, None].expand(2, 3, 3, 7, 9)
        return (v, i, F.adaptive_max_pool1d(x[0], 5), F.interpolate(x, scale_factor=2, mode="bicubic"),
                F.interpolate(x, size=(4, 11), mode="bicubic", align_corners=True),
                F.interpolate(x[0], scale_factor=1.5, mode="linear"), F.interpolate(x[0], size=13, mode="nearest"),
                F.interpolate(v3, scale_factor=2, mode="trilinear"), F.interpolate(v3, size=(2, 5, 6), mode="nearest"),
                F.adaptive_avg_pool3d(v3, (2, 4, 5)))

    def grads(x):
        x = x.detach().requires_grad_()
        v3 = x[:, :, None].expand(2, 3, 3, 7, 9)
        y = ((F.adaptive_max_pool2d(x, (5, 4)) ** 2).sum()
             + (F.interpolate(x, scale_factor=1.5, mode="bicubic") ** 2).sum()
             + (F.interpolate(x[0], size=11, mode="linear", align_corners=True) ** 2).sum()
             + (F.interpolate(x[1], scale_factor=2, mode="nearest") ** 2).sum()
             + (F.interpolate(v3, size=(4, 5, 6), mode="trilinear") ** 2).sum()
             + (F.interpolate(v3, scale_factor=1.5, mode="nearest") ** 2).sum()
             + (F.adaptive_avg_pool3d(v3, (2, 5, 4)) ** 2).sum())
        return torch.autograd.grad(y, x)

    for decompose in (False, True):
        tag = " (decomposed)" if decompose else ""
        got, want = tjit_fx.compile(make_fx(values)(x), x, decompose=decompose)(x), values(x)
        report("resample values" + tag, all(close(g.double(), w.double()) for g, w in zip(got, want)))
        got, want = tjit_fx.compile(make_fx(grads)(x), x, decompose=decompose)(x), grads(x)
        report("resample gradients" + tag, close(got[0], want[0]),
               "max |diff| %.2g" % (got[0] - want[0]).abs().max().item())


def check_fixes59():
    """Session 59's fixes through tjit_fx, plain and decomposed: grid_sample
    at nan / inf grid coordinates, the Scalar overloads make_fx records for
    Python numbers, heaviside of int64, log_ndtr with its gradient
    (aot_function), and the random fills of nn.init (uniform_ through
    kaiming_uniform_, normal_, exponential_, normal's overloads) by shape,
    dtype and range."""
    torch.manual_seed(0)
    img, y = torch.randn(1, 2, 4, 5), torch.randn(3, 4) * 3
    grid = torch.rand(1, 3, 3, 2) * 2.4 - 1.2
    grid[0, 0, 0, 0], grid[0, 1, 1, 1], grid[0, 2, 2] = float("nan"), float("inf"), float("-inf")
    k = torch.tensor([[-3, 0, 5], [0, 2, -1]])

    def values(img, grid, y, k):
        return (F.grid_sample(img, grid, align_corners=False), F.grid_sample(img, grid, padding_mode="border"),
                F.grid_sample(img, grid, mode="nearest", padding_mode="reflection", align_corners=True),
                torch.copysign(y, -1.0), torch.xlogy(y, 2.0), torch.xlogy(3, y.abs()), torch.special.xlog1py(y, 0.5),
                torch.special.xlog1py(2, y.abs()), torch.heaviside(k, k.flip(0)), torch.special.log_ndtr(y * 10))

    for decompose in (False, True):
        tag = " (decomposed)" if decompose else ""
        got = tjit_fx.compile(make_fx(values)(img, grid, y, k), img, grid, y, k, decompose=decompose)(img, grid, y, k)
        want = values(img, grid, y, k)
        report("session 59 values" + tag, all(g.dtype == w.dtype and torch.allclose(g.double(), w.double(), RTOL, ATOL,
                                                                                    equal_nan=True)
                                               for g, w in zip(got, want)))

    def f(y):
        return (torch.special.log_ndtr(y) * torch.xlogy(y, 3.0)).sum()

    w = (torch.randn(6) * 5).requires_grad_()
    got, want = tjit_fx.aot_function(f)(w), f(w)
    report("log_ndtr and xlogy.Scalar_Other gradients", close(got, want) and
           close(torch.autograd.grad(got, w)[0], torch.autograd.grad(want, w)[0]))

    def draws(m, s):
        weight = nn.init.kaiming_uniform_(torch.empty(4, 6), a=5 ** 0.5)  # nn.Linear's init: uniform_
        return (weight, m.clone().uniform_(-2, 3), m.clone().normal_(1, 0.5), m.clone().exponential_(4.0),
                torch.normal(m, 2.0), torch.normal(1.0, s), torch.normal(m, s), torch.normal(0.0, 1.0, (2, 3)))

    m, s = torch.randn(3, 4), torch.rand(4) + 0.5
    for decompose in (False, True):
        tag = " (decomposed)" if decompose else ""
        got = tjit_fx.compile(make_fx(draws)(m, s), m, s, decompose=decompose)(m, s)
        ok = [g.shape == w.shape and g.dtype == w.dtype for g, w in zip(got, draws(m, s))]
        ok += [bool((got[0].abs() <= 6 ** -0.5).all()), bool((got[1] >= -2).all() and (got[1] <= 3).all()),
               bool((got[3] >= 0).all()), not torch.equal(got[1], m)]
        report("session 59 random fills" + tag, all(ok))


def main():
    for name, module, x, loss_fn in models():
        for decompose in (False, True):
            check_forward(name, module, x, decompose)
            check_training(name, module, x, loss_fn, decompose)
    check_nested_and_aliases()
    check_plain_collections()
    check_parameters_followed()
    check_plan_on_torch_tensors()
    check_exporter_edges()
    check_transformer_encoder()
    check_embedding_bag()
    check_linalg_solve()
    check_linalg_factor()
    check_opsbatch4()
    check_resample()
    check_storage_dtypes()
    check_unique_random()
    check_distributions()
    check_fixes59()
    print("%d failed" % len(failures) if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
