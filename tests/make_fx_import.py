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

import numpy as np
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


def train_step(params, x, target):
    """Loss, gradients (torch.autograd.grad, traced into the graph) and the
    parameters after one SGD step of 0.1."""
    loss = F.cross_entropy(functional_call(MLP, params, (x,)), target)
    grads = torch.autograd.grad(loss, list(params.values()))
    return (loss, *grads, *(p - 0.1 * g for p, g in zip(params.values(), grads)))


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


def save(path, t):
    np.save(path, t.detach().contiguous().numpy())


def main():
    check_errors()
    os.makedirs(OUT, exist_ok=True)
    for name, fn, inputs in cases():
        gm = make_fx(fn)(*inputs)
        if name.endswith("_dce"):
            gm.graph.eliminate_dead_code()
            gm.recompile()
        with open(os.path.join(OUT, name + ".txt"), "w") as f:
            f.write(tjit_fx.to_tjit_text(gm, *inputs))
        flat = torch.utils._pytree.tree_flatten(list(inputs))[0]
        outputs = gm(*inputs)
        outputs = outputs if isinstance(outputs, (list, tuple)) else [outputs]
        for k, t in enumerate(flat):
            save(os.path.join(OUT, "%s.in%d.npy" % (name, k)), t)
        for k, t in enumerate(outputs):
            save(os.path.join(OUT, "%s.out%d.npy" % (name, k)), t)


if __name__ == "__main__":
    main()
