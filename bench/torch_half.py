#!/usr/bin/python3
"""Half-precision inference in-process (tjit_fx.compile, as
bench/torch_in_process.py measures it): WORKLOADS.md's mlp (batch 64 and
1) and cnn (batch 64) forward with bfloat16 and float16 weights and inputs.
tjit computes both in float32 between conversions (README "Dtypes"); torch
1.13's CPU has bfloat16 kernels and no float16 ones for these models, so
the float16 rows compare with torch in float32. One thread each, 3 rounds
of 100 calls after warm-up, medians of the rounds' medians:

    OPENBLAS_CORETYPE=Haswell /usr/bin/python3 bench/torch_half.py"""
import copy
import os
import statistics
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, "python"))
import torch  # noqa: E402
import tjit  # noqa: E402
import tjit_fx  # noqa: E402
from torch.fx.experimental.proxy_tensor import make_fx  # noqa: E402

torch.set_num_threads(1)
tjit.set_num_threads(1)
torch.manual_seed(0)
nn = torch.nn


def median_ms(fn, n=100):
    for _ in range(10):
        fn()
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def mlp():
    return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))


def cnn():
    return nn.Sequential(nn.Conv2d(1, 16, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(16, 32, 5, padding=2),
                         nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(1568, 128), nn.ReLU(), nn.Linear(128, 10))


def plans(model, x):
    """The model traced in bfloat16 (torch's make_fx runs it: torch 1.13 has
    bfloat16 CPU kernels), compiled for bfloat16 and, with every bfloat16
    type of the graph text made float16 (parameters included), for float16."""
    text = tjit_fx.to_tjit_text(make_fx(model.to(torch.bfloat16))(x.to(torch.bfloat16)), x.to(torch.bfloat16))
    half = text.replace("bf16[", "f16[").replace("torch.bfloat16", "torch.float16")
    return {torch.bfloat16: tjit.Graph(text).compile(), torch.float16: tjit.Graph(half).compile()}


def row(name, make, x):
    torch.manual_seed(0)
    f32 = make()
    compiled = plans(copy.deepcopy(f32), x)
    for dtype, plan in compiled.items():
        xd, m = x.to(dtype), copy.deepcopy(f32).to(dtype)
        with torch.no_grad():
            err = (plan(xd)[0].float() - f32(x)).abs().max().item()
            try:
                m(xd)
                torch_call, torch_name = (lambda: m(xd)), str(dtype).replace("torch.", "")
            except RuntimeError:  # torch 1.13 has no float16 CPU kernel here
                torch_call, torch_name = (lambda: f32(x)), "float32"
            rounds = [(median_ms(torch_call), median_ms(lambda: plan(xd))) for _ in range(3)]
        te, tt = (statistics.median(r[i] for r in rounds) for i in range(2))
        print("| %s %s | torch %s %.3g ms | tjit %.3g ms | %.2fx | max abs diff from float32 %.2g |"
              % (name, str(dtype).replace("torch.", ""), torch_name, te, tt, te / tt, err))


row("mlp batch 64", mlp, torch.randn(64, 784))
row("mlp batch 1", mlp, torch.randn(1, 784))
row("cnn batch 64", cnn, torch.randn(64, 1, 28, 28))
