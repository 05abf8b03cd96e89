#!/usr/bin/python3
"""tjit as a PyTorch backend, in-process (python/tjit.py, tjit_fx.compile,
tjit_fx.aot_module): torch tensors go to a tjit plan by address, without
a copy, and the figures include every Python-side cost of a call (wrapping,
output allocation, ctypes). Against torch eager, same thread count (1),
3 rounds of 200 calls (50 for training steps) after warm-up, medians of the
rounds' medians. Run from the checkout after building:

    OPENBLAS_CORETYPE=Haswell /usr/bin/python3 bench/torch_in_process.py

Rows: the call overhead (add of two f32[1]), WORKLOADS.md's mlp forward at
batch 1 and 64, the GPT block of bench/torch_fx_replay.py forward, and
training steps (forward, cross-entropy or mean-square loss, backward, SGD
with momentum: torch's optimiser in both columns) of mlp batch 64, the
block and a 32-32-4 mlp at batch 8 (where per-call costs dominate) through
aot_module, whose forward and backward graphs tjit runs, and
the same with functorch's nop compilers (torch running AOTAutograd's
graphs), which measures what AOTAutograd's own wrapper costs."""
import copy
import os
import statistics
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import torch  # noqa: E402
import tjit  # noqa: E402
import tjit_fx  # noqa: E402
from torch.fx.experimental.proxy_tensor import make_fx  # noqa: E402
from make_fx_import import AttentionBlock  # noqa: E402

torch.set_num_threads(1)
tjit.set_num_threads(1)
torch.manual_seed(0)


def median_ms(fn, n):
    for _ in range(10):
        fn()
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def compare(name, torch_call, tjit_call, n=200):
    rounds = [(median_ms(torch_call, n), median_ms(tjit_call, n)) for _ in range(3)]
    te, tt = (statistics.median(r[i] for r in rounds) for i in range(2))
    unit, scale = ("us", 1e3) if te < 1 else ("ms", 1)
    print("| %s | %.3g %s | %.3g %s | %.2fx |" % (name, te * scale, unit, tt * scale, unit, te / tt))


def mlp():
    return torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256),
                               torch.nn.ReLU(), torch.nn.Linear(256, 10))


def forward_row(name, module, x):
    with torch.no_grad():
        gm = make_fx(lambda x: module(x))(x)
        compiled = tjit_fx.compile(gm, x, freeze=True)  # inference: the weights as constants
        assert torch.allclose(compiled(x), module(x), rtol=1e-4, atol=1e-5)
        compare(name, lambda: module(x), lambda: compiled(x))


def train_row(name, module, x, loss_fn):
    """The step with tjit's compilers, then with functorch's nop compilers
    (torch runs AOTAutograd's graphs): the cost of AOTAutograd itself."""
    from functorch.compile import aot_module, nop

    reference, traced = copy.deepcopy(module), copy.deepcopy(module)
    compiled = tjit_fx.aot_module(module)
    with_nop = aot_module(traced, fw_compiler=nop, bw_compiler=nop)

    def stepper(m, model):
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

        def step():
            opt.zero_grad()
            loss = loss_fn(m(x))
            loss.backward()
            opt.step()
            return loss

        return step

    eager, jit, nop_step = stepper(reference, reference), stepper(compiled, module), stepper(with_nop, traced)
    assert abs(eager().item() - jit().item()) < 1e-4
    compare(name, eager, jit, n=50)
    compare(name + ", functorch's nop compilers in place of tjit's", eager, nop_step, n=50)


print("| call | torch eager | tjit in-process | speed-up |")
print("| --- | --- | --- | --- |")
a, b = torch.randn(1), torch.randn(1)
add = tjit_fx.compile(make_fx(torch.add)(a, b), a, b)
compare("add of two f32[1] (call overhead)", lambda: torch.add(a, b), lambda: add(a, b))
model = mlp()
forward_row("mlp forward, batch 1", model, torch.randn(1, 784))
forward_row("mlp forward, batch 64", model, torch.randn(64, 784))
block = AttentionBlock(d=128, heads=4)
forward_row("GPT block forward, x [8, 64, 128]", block, torch.randn(8, 64, 128))
y = torch.randint(0, 10, (64,))
train_row("mlp training step, batch 64", mlp(), torch.randn(64, 784),
          lambda out: torch.nn.functional.cross_entropy(out, y))
train_row("GPT block training step", AttentionBlock(d=128, heads=4), torch.randn(8, 64, 128),
          lambda out: out.pow(2).mean())
y8 = torch.randint(0, 4, (8,))
train_row("small mlp (32-32-4) training step, batch 8: per-call costs",
          torch.nn.Sequential(torch.nn.Linear(32, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)), torch.randn(8, 32),
          lambda out: torch.nn.functional.cross_entropy(out, y8))
