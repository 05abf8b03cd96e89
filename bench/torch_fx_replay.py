#!/usr/bin/python3
"""PyTorch graphs replayed by tjit: a GPT block (tests/make_fx_import.py's
AttentionBlock at d 128, 4 heads, x [8, 64, 128]) traced by make_fx, forward
and SGD training step, exported with python/tjit_fx.py's save_case and timed
by `tjit run --runs 200 --threads 1` (plain and --decompose core) against
torch eager (the function itself) and torch replaying the traced GraphModule,
1 thread, 3 rounds, medians. Run from the checkout after building:

    OPENBLAS_CORETYPE=Haswell /usr/bin/python3 bench/torch_fx_replay.py

It writes its cases into the current folder."""
import os
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import torch  # noqa: E402
import tjit_fx  # noqa: E402
from torch.fx.experimental.proxy_tensor import make_fx  # noqa: E402
from torch.nn.utils.stateless import functional_call  # noqa: E402
from make_fx_import import AttentionBlock  # noqa: E402
torch.set_num_threads(1)
torch.manual_seed(0)
TJIT = os.path.join(ROOT, "build", "tools", "tjit")

def torch_median(fn, args, n=200):
    for _ in range(10): fn(*args)
    ts = []
    for _ in range(n):
        t = time.perf_counter(); fn(*args); ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e3

def tjit_median(cmd, extra):
    out = subprocess.run(cmd.split() + ["--quiet", "--threads", "1", "--runs", "200"] + extra, capture_output=True, text=True)
    m = re.search(r"median ([0-9.e+]+) (us|ms)", out.stdout)
    assert m, out.stdout + out.stderr
    return float(m.group(1)) * (1e-3 if m.group(2) == "us" else 1)

block = AttentionBlock(d=128, heads=4)
x = torch.randn(8, 64, 128)
params = {k: v.detach().clone().requires_grad_() for k, v in block.named_parameters()}
def step(params, x):
    loss = functional_call(block, params, (x,)).pow(2).mean()
    grads = torch.autograd.grad(loss, list(params.values()))
    with torch.no_grad():
        for p, g in zip(params.values(), grads):
            p.sub_(0.01 * g)
    return loss.detach()
cases = {"block forward": (lambda x: block(x), (x,)), "block train step": (step, (params, x))}
for name, (fn, args) in cases.items():
    gm = make_fx(fn)(*args)
    cmd = tjit_fx.save_case(name.replace(" ", "_"), gm, *args, tjit=TJIT)
    def eager(*a):
        if name.endswith("forward"):
            with torch.no_grad(): return fn(*a)
        return fn(*a)
    def graph(*a):
        with torch.no_grad(): return gm(*a)
    rows = []
    for rnd in range(3):
        te = torch_median(eager, args); tg = torch_median(graph, args)
        tp = tjit_median(cmd, []); td = tjit_median(cmd, ["--decompose", "core"])
        rows.append((te, tg, tp, td))
    med = [statistics.median(r[i] for r in rows) for i in range(4)]
    print("%s: torch eager %.3f ms, torch replaying the graph %.3f ms, tjit run %.3f ms, tjit run --decompose core %.3f ms; speed-up vs eager %.2fx / %.2fx" % (name, *med, med[0] / med[2], med[0] / med[3]))
