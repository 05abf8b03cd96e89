#!/usr/bin/python3
"""Writes tests/fx_import/, the data of tests/test_fx_import.c, with PyTorch
(1.13, Debian's python3-torch) and python/tjit_fx.py:

    /usr/bin/python3 tests/make_fx_import.py

Each case traces a function with make_fx on fixed inputs (seeded) and
writes NAME.txt (tjit_fx.to_tjit_text of the GraphModule), NAME.in<k>.npy
(its inputs, in placeholder order) and NAME.out<k>.npy (torch's float32
outputs of the traced GraphModule on those inputs). It also checks that the
exporter refuses what tjit's text cannot hold, naming the node."""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.fx.experimental.proxy_tensor import make_fx
from torch.nn.utils.stateless import functional_call

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import tjit_fx  # noqa: E402

OUT = os.path.join(HERE, "fx_import")


def mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))


def layer_norm(x, w, b):
    """F.layer_norm reads one result of three; native_layer_norm all three."""
    y = F.layer_norm(x, (6,), w, b)
    out, mean, rstd = torch.native_layer_norm(x, [6], None, None, 1e-5)
    return y, out, mean, rstd


def softmax_cross_entropy(x, target):
    return F.softmax(x, -1), F.cross_entropy(x, target)


def smoothed_cross_entropy(x, target):
    """Label smoothing takes the mean of masked_select's selection (the
    exporter writes it in a static form); -100 targets are ignored."""
    return F.cross_entropy(x, target, label_smoothing=0.1)


def weighted_smoothed_cross_entropy(x, target, weight):
    """With class weights, label smoothing divides by the kept targets'
    weights: gather(weight, 0, masked_select(...)) summed (static form)."""
    return F.cross_entropy(x, target, weight=weight, label_smoothing=0.1)


def sequence_cross_entropy(x, target):
    """cross_entropy of [N, C, T] logits (a sequence model's): torch runs
    nll_loss2d_forward on a [N, C, T, 1] view, and its gradient
    nll_loss2d_backward (traced here through torch.autograd.grad)."""
    x = x.detach().requires_grad_()
    loss = F.cross_entropy(x, target)
    return (loss,) + torch.autograd.grad(loss, x)


def scaled(x, scale, shift):
    """Python scalars: make_fx bakes them into the calls (placeholders
    read by none, left out of the text)."""
    return x * scale + shift


def conv_relu_pool(x, w, b):
    return F.max_pool2d(F.relu(F.conv2d(x, w, b, padding=1)), 2)


def creation(x):
    """scalar_tensor, zeros and arange with make_fx's device / pin_memory
    keywords, a tensor constant (lift_fresh_copy) and a wrapped number."""
    positive = torch.where(x > 0, x, torch.scalar_tensor(0.0))
    return positive + torch.zeros(2, 4) + torch.arange(0, 4, 1) + torch.tensor([0.5, -1.0, 2.0, 0.25]) * 3


def split_views(x):
    """split (uneven), chunk (recorded as split), unbind and split_with_sizes,
    whose list results make_fx reads with getitem: one view per piece."""
    q, k = x.split(4, dim=-1)
    top, bottom = x.chunk(2, 0)
    rows = x.unbind(0)
    _, tail = x.split_with_sizes([1, 5], dim=1)
    return q.sum(1) + k.sum(1), top - bottom, rows[0] * rows[3], tail.sum(1)


class AttentionBlock(nn.Module):
    """A pre-LayerNorm causal self-attention block as GPT's: qkv split, view
    (recorded as _reshape_alias), masked_fill, softmax, a tanh-GELU MLP."""

    def __init__(self, d=8, heads=2):
        super().__init__()
        self.ln1, self.qkv, self.proj = nn.LayerNorm(d), nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.ln2, self.fc, self.fc2 = nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.heads = heads

    def forward(self, x):
        b, t, c = x.shape
        h = self.heads
        q, k, v = (z.view(b, t, h, c // h).transpose(1, 2) for z in self.qkv(self.ln1(x)).split(c, 2))
        att = (q @ k.transpose(-2, -1)) / (c // h) ** 0.5
        att = att.masked_fill(torch.tril(torch.ones(t, t)).view(1, 1, t, t) == 0, float("-inf")).softmax(-1)
        x = x + self.proj((att @ v).transpose(1, 2).contiguous().view(b, t, c))
        return x + self.fc2(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


def bn_net():
    return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                         nn.Flatten(), nn.Linear(4, 2))


def bn_eval_grads(net):
    """The gradients of net's squared output by its parameters."""
    def grads(params, x):
        out = functional_call(net, params, (x,))
        return torch.autograd.grad(out.pow(2).sum(), list(params.values()))
    return grads


def train_step(params, x, target):
    """Loss, gradients (torch.autograd.grad, traced into the graph) and the
    parameters after one SGD step of 0.1."""
    loss = F.cross_entropy(functional_call(MLP, params, (x,)), target)
    grads = torch.autograd.grad(loss, list(params.values()))
    return (loss, *grads, *(p - 0.1 * g for p, g in zip(params.values(), grads)))


def fold_cdist(x, pts, ref, counts):
    """F.unfold / F.fold (im2col, col2im), repeat_interleave by an int (a
    constant [3] of counts, written with the traced size as output_size)
    and by a tensor with output_size, torch.cdist at p 2 and 1.5
    (_cdist_forward), and the gradients (col2im / im2col, _cdist_backward,
    index_select's index_add)."""
    img = F.fold(F.unfold(x, 3, padding=1, stride=2) * 0.5, (x.shape[-2], x.shape[-1]), 3, padding=1, stride=2)
    d = torch.cdist(pts.repeat_interleave(2, dim=0), ref)
    d1 = torch.cdist(pts.repeat_interleave(counts, dim=0, output_size=7), ref, p=1.5)
    loss = (img * img).sum() + (d * d1[:6]).sum() + d1.sum()
    return (loss, *torch.autograd.grad(loss, [x, pts, ref]))


MLP = mlp()


def cases():
    torch.manual_seed(1)
    x = torch.randn(2, 4)
    params = {k: v.detach().clone() for k, v in MLP.named_parameters()}
    grad_params = {k: v.clone().requires_grad_() for k, v in params.items()}
    target = torch.tensor([2, 0])
    yield "mlp_constants", (lambda x: MLP(x)), (x,)  # parameters as get_attr constants
    yield "mlp_functional", (lambda p, x: functional_call(MLP, p, (x,))), (params, x)
    yield "layer_norm", layer_norm, (torch.randn(3, 6), torch.randn(6), torch.randn(6))
    yield "softmax_cross_entropy", softmax_cross_entropy, (torch.randn(3, 5), torch.tensor([4, 0, 2]))
    yield "conv_relu_pool", conv_relu_pool, (torch.randn(1, 2, 6, 6), torch.randn(3, 2, 3, 3), torch.randn(3))
    yield "creation", creation, (torch.randn(2, 4),)
    yield "train_step", train_step, (grad_params, x, target)
    # the same after FX's dead-code pass: the unread indices' getitem is gone, "_" in the text
    yield "conv_relu_pool_dce", conv_relu_pool, (torch.randn(1, 2, 6, 6), torch.randn(3, 2, 3, 3), torch.randn(3))
    yield "split_views", split_views, (torch.randn(4, 6),)
    # a GRU cell updates its gates, column blocks of one product (unsafe_split), in place
    yield "gru_cell", nn.GRUCell(4, 6), (torch.randn(2, 4),)
    # an LSTM returns (output, (h, c)): the outputs flattened
    yield "lstm", nn.LSTM(4, 6, batch_first=True), (torch.randn(2, 3, 4),)
    yield "attention_block", AttentionBlock(), (torch.randn(2, 5, 8),)
    # BatchNorm in training: running statistics and num_batches_tracked (a
    # tensor constant, += 1) updated in place, an unused empty uint8 tensor
    yield "batch_norm_train", bn_net(), (torch.randn(2, 3, 6, 6),)
    # in evaluation, gradients: the backward takes the forward's empty saved statistics
    net = bn_net().eval()
    yield "batch_norm_eval_grads", bn_eval_grads(net), (dict(net.named_parameters()), torch.randn(2, 3, 6, 6))
    yield "fold_cdist", fold_cdist, (torch.randn(2, 3, 6, 7).requires_grad_(), torch.randn(3, 4).requires_grad_(),
                                     torch.randn(5, 4).requires_grad_(), torch.tensor([1, 4, 2]))
    yield "smoothed_cross_entropy", smoothed_cross_entropy, (torch.randn(4, 5), torch.tensor([4, -100, 2, 0]))
    yield "scaled", scaled, (torch.randn(3), 2.5, 1)
    # torch.linalg.solve records _linalg_solve_ex, then _linalg_check_errors on its info: written as
    # check_errors=True on the solve
    a = torch.randn(3, 3, dtype=torch.float64) + 3 * torch.eye(3, dtype=torch.float64)
    yield "linalg_solve_checked", torch.linalg.solve, (a, torch.randn(3, 2, dtype=torch.float64))
    yield "weighted_smoothed_cross_entropy", weighted_smoothed_cross_entropy, (
        torch.randn(5, 4), torch.tensor([3, -100, 0, 1, 1]), torch.rand(4) + 0.5)
    yield "sequence_cross_entropy", sequence_cross_entropy, (torch.randn(2, 4, 5), torch.tensor([[0, 3, -100, 1, 2],
                                                                                              [3, 3, 0, 1, -100]]))


def check_errors():
    """What tjit's text cannot hold raises ValueError naming the node."""
    g = torch.fx.Graph()
    x = g.placeholder("x")
    z = g.call_function(torch.ops.aten.zeros.default, ([2],), {"layout": torch.sparse_coo})
    g.output(g.call_function(torch.ops.aten.add.Tensor, (x, z)))
    gm = torch.fx.GraphModule(torch.nn.Module(), g)
    for example, needle in ((torch.zeros(2), "zeros_default: layout=torch.sparse_coo"),
                            (torch.zeros(2, dtype=torch.float16), "placeholder x: dtype torch.float16")):
        try:
            tjit_fx.to_tjit_text(gm, example)
        except ValueError as e:
            assert needle in str(e), e
        else:
            raise AssertionError("no error for " + needle)


def main():
    check_errors()
    os.makedirs(OUT, exist_ok=True)
    for name, fn, inputs in cases():
        gm = make_fx(fn)(*inputs)
        if name.endswith("_dce"):
            gm.graph.eliminate_dead_code()
            gm.recompile()
        tjit_fx.save_case(os.path.join(OUT, name), gm, *inputs)

if __name__ == "__main__":
    main()
