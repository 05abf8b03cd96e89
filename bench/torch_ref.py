#!/usr/bin/python3
"""The PyTorch side of `tjit bench`: the WORKLOADS.md workloads in PyTorch eager.

    /usr/bin/python3 bench/torch_ref.py [NAME...] [--threads 1,2] [--runs N]
        [--policies default,passive] [--ref DIR | --tjit PATH] [--json FILE]
        [--flush-denormal]

NAME as for `tjit bench` (mlp, cnn, gpt, block768, dispatch, copy, gelu,
softmax, layer_norm, mm, sdpa, mlp_b1, trace, or the groups models / micro;
default all). Micro-benchmarks give one figure per variant, named as tjit's:
gelu / gelu_out (allocating / into a preallocated output), softmax_out,
layer_norm_out, sdpa_decomp (matmul-softmax-matmul), copy (copy_ of 64 MiB).

Before timing, every model is checked against tjit: the parameters tjit saved
(safetensors, from seed 0), tjit's batch, its forward output, and one training
step's loss and updated parameters (files written by `tjit bench --export DIR`;
without --ref this script runs that command itself with --tjit, default
build/tools/tjit). A mismatch beyond float32 round-off stops the script with
exit status 1.

Each (thread count, OpenMP wait policy) runs in a fresh subprocess, because
the thread pools read OMP_NUM_THREADS / OPENBLAS_NUM_THREADS and
OMP_WAIT_POLICY when torch is imported; torch.set_num_threads is called too.
Policy "default" leaves OMP_WAIT_POLICY unset (PyTorch's default: spinning
OpenMP threads), "passive" sets OMP_WAIT_POLICY=passive. Each process
allocates and frees one 16 MiB tensor before timing (see WORKLOADS.md: else
glibc hands small buffers back to the OS and every call pays page faults).
--flush-denormal calls torch.set_flush_denormal(True) first in each process,
as `tjit bench --flush-denormal` flushes denormals to zero.

Figures follow tjit's rules: median of at least N timed calls (default 20,
more for cheap workloads) after 3 warm-up calls, minor page faults per call
(getrusage), training steps restarted from the state after 3 steps from the
saved seed-0 parameters (parameters and optimiser state copied back, untimed,
before each timed step). Without PyTorch the script says so and exits 0
(writing a JSON file that says so, for bench/merge.py).
"""
import argparse
import importlib.util
import json
import math
import os
import resource
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MODELS = ["mlp", "cnn", "gpt", "block768"]
MICRO = ["dispatch", "copy", "gelu", "softmax", "layer_norm", "mm", "sdpa", "mlp_b1", "trace"]
WARM_STEPS = 3
DISPATCH_CALLS = 1000
MAX_ROUNDS = 400
BUDGET_MS = 250.0


# ---------------------------------------------------------------- the models
def build_models():
    """The WORKLOADS.md models as nn.Modules, with tjit's parameter names."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(784, 256)
            self.fc2 = nn.Linear(256, 256)
            self.fc3 = nn.Linear(256, 10)

        def forward(self, x):
            x = torch.flatten(x, 1)
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            return self.fc3(x)

    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 16, 5, padding=2)
            self.conv2 = nn.Conv2d(16, 32, 5, padding=2)
            self.fc1 = nn.Linear(1568, 128)
            self.fc2 = nn.Linear(128, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), 2)
            x = F.max_pool2d(F.relu(self.conv2(x)), 2)
            x = torch.flatten(x, 1)
            x = F.relu(self.fc1(x))
            return self.fc2(x)

    class CausalSelfAttention(nn.Module):
        def __init__(self, d, heads):
            super().__init__()
            self.heads = heads
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)

        def forward(self, x, mask):
            B, T, d = x.shape
            hd = d // self.heads
            q, k, v = self.qkv(x).split(d, dim=2)
            q = q.view(B, T, self.heads, hd).transpose(1, 2)
            k = k.view(B, T, self.heads, hd).transpose(1, 2)
            v = v.view(B, T, self.heads, hd).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
            att = att.masked_fill(mask[:T, :T] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            y = (att @ v).transpose(1, 2).contiguous().view(B, T, d)
            return self.proj(y)

    class FeedForward(nn.Module):
        def __init__(self, d, hidden):
            super().__init__()
            self.fc = nn.Linear(d, hidden)
            self.proj = nn.Linear(hidden, d)

        def forward(self, x):
            return self.proj(F.gelu(self.fc(x), approximate="tanh"))

    class Block(nn.Module):
        def __init__(self, d, heads, hidden):
            super().__init__()
            self.ln1 = nn.LayerNorm(d)
            self.attn = CausalSelfAttention(d, heads)
            self.ln2 = nn.LayerNorm(d)
            self.mlp = FeedForward(d, hidden)

        def forward(self, x, mask):
            x = x + self.attn(self.ln1(x), mask)
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self, vocab=256, context=64, d=128, heads=4, layers=2):
            super().__init__()
            self.wte = nn.Embedding(vocab, d)
            self.wpe = nn.Embedding(context, d)
            self.h = nn.ModuleList([Block(d, heads, 4 * d) for _ in range(layers)])
            self.ln_f = nn.LayerNorm(d)
            self.register_buffer("mask", torch.tril(torch.ones(context, context, dtype=torch.bool)), persistent=False)

        def forward(self, tokens):
            T = tokens.shape[1]
            pos = torch.arange(0, T, dtype=torch.long)
            x = self.wte(tokens) + self.wpe(pos)
            for block in self.h:
                x = block(x, self.mask)
            x = self.ln_f(x)
            return F.linear(x, self.wte.weight)

    class Block768(nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block(768, 12, 3072)
            self.register_buffer("mask", torch.tril(torch.ones(128, 128, dtype=torch.bool)), persistent=False)

        def forward(self, x):
            return self.block(x, self.mask)

    return {"mlp": MLP, "cnn": CNN, "gpt": GPT, "block768": Block768}


def loss_fn(name, logits, y):
    import torch.nn.functional as F

    if name == "gpt":
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), y.view(-1))
    return F.cross_entropy(logits, y)


def make_optimizer(name, model):
    import torch

    if name == "gpt":
        return torch.optim.AdamW(model.parameters(), lr=3e-4, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01)
    return torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)


# ------------------------------------------------------------------- files
def load_safetensors(path):
    """safetensors -> {name: tensor}, with json and torch.frombuffer only."""
    import torch

    dtypes = {"F32": torch.float32, "F64": torch.float64, "I64": torch.int64, "BOOL": torch.bool}
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8 : 8 + n])
    data = bytearray(blob[8 + n :])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        dtype = dtypes[info["dtype"]]
        if end == begin:
            out[name] = torch.empty(info["shape"], dtype=dtype)
            continue
        count = (end - begin) // torch.empty((), dtype=dtype).element_size()
        out[name] = torch.frombuffer(data, dtype=dtype, count=count, offset=begin).reshape(info["shape"]).clone()
    return out


def load_npy(path):
    import numpy
    import torch

    return torch.from_numpy(numpy.load(path))


# ------------------------------------------------------------------ timing
def minor_faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def measure(call, runs, prepare=None, warmup=3):
    """Median / fastest ms per call, median thread CPU time per call and minor
    faults per call, as tjit measures."""
    fastest_warm = None
    for _ in range(warmup):
        if prepare:
            prepare()
        t0 = time.perf_counter()
        call()
        ms = (time.perf_counter() - t0) * 1e3
        fastest_warm = ms if fastest_warm is None else min(fastest_warm, ms)
    rounds = runs
    if fastest_warm and BUDGET_MS / fastest_warm > rounds:
        rounds = int(BUDGET_MS / fastest_warm)
    rounds = min(rounds, max(runs, MAX_ROUNDS))
    times, cpu, faults = [], [], 0
    for _ in range(rounds):
        if prepare:
            prepare()
        f0 = minor_faults()
        c0, t0 = time.thread_time(), time.perf_counter()
        call()
        times.append((time.perf_counter() - t0) * 1e3)
        cpu.append((time.thread_time() - c0) * 1e3)
        faults += minor_faults() - f0
    return {"runs": rounds, "median_ms": median(times), "min_ms": min(times), "cpu_ms": median(cpu),
            "faults_per_call": faults / rounds}


def median(x):
    x = sorted(x)
    mid = len(x) // 2
    return x[mid] if len(x) % 2 else 0.5 * (x[mid - 1] + x[mid])


# ------------------------------------------------------------- the checks
class Mismatch(Exception):
    pass


def compare(what, got, want, atol, rtol):
    import torch

    got, want = got.detach().float(), want.detach().float()
    if got.shape != want.shape:
        raise Mismatch(f"{what}: shape {tuple(got.shape)} differs from tjit's {tuple(want.shape)}")
    err = (got - want).abs() / (atol + rtol * want.abs())
    worst = err.max().item() if err.numel() else 0.0
    if not worst <= 1.0:
        i = int(err.flatten().argmax()) if err.numel() else 0
        raise Mismatch(f"{what}: PyTorch {got.flatten()[i].item():.9g} vs tjit {want.flatten()[i].item():.9g} "
                       f"at flat index {i} ({worst:.3g} times the tolerance atol {atol}, rtol {rtol}; "
                       f"max abs diff {(got - want).abs().max().item():.3g})")
    return worst


def load_model(name, ref_dir, ref):
    import torch

    model = build_models()[name]()
    model.load_state_dict(load_safetensors(os.path.join(ref_dir, ref["params"])), strict=True)
    x = load_npy(os.path.join(ref_dir, ref["x"]))
    y = load_npy(os.path.join(ref_dir, ref["y"])) if "y" in ref else None
    return model, x, y


def check_model(name, ref_dir, ref):
    """Forward output, one step's loss and updated parameters against tjit's."""
    import torch

    model, x, y = load_model(name, ref_dir, ref)
    with torch.no_grad():
        out = model(x)
    worst = compare(f"{name} forward output", out, load_npy(os.path.join(ref_dir, ref["out"])), 1e-4, 1e-4)
    line = f"{name}: forward output matches tjit (worst {worst:.2g} of tolerance)"
    if y is not None:
        opt = make_optimizer(name, model)
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(name, model(x), y)
        loss.backward()
        opt.step()
        compare(f"{name} training-step loss", loss, torch.tensor(ref["loss"]), 0.0, 1e-5)
        after = load_safetensors(os.path.join(ref_dir, ref["step1"]))
        worst_p, noise = 0.0, 0
        for pname, p in model.named_parameters():
            want = after[pname]
            if name == "gpt":
                # AdamW's first step moves each element by about lr * sign(grad): where the
                # gradient is round-off (|g| < 1e-6, e.g. the key biases, whose exact
                # gradient is 0), the two sides may move it anywhere within 2 lr
                free = (p.grad.abs() < 1e-6) & ((p.detach() - want).abs() <= 2.1 * 3e-4)
                noise += int(free.sum())
                want = torch.where(free, p.detach(), want)
            worst_p = max(worst_p, compare(f"{name} parameter {pname} after one step", p, want, 1e-5, 1e-4))
        line += f"; step loss {loss.item():.6f} vs tjit {ref['loss']:.6f}; parameters after the step match " \
                f"(worst {worst_p:.2g} of tolerance"
        line += f"; {noise} elements with round-off gradients not compared)" if name == "gpt" else ")"
    return line


# ---------------------------------------------------------------- workloads
def bench_model(name, ref_dir, ref, runs, threads, mode, results):
    import torch

    model, x, y = load_model(name, ref_dir, ref)

    def forward():
        with torch.no_grad():
            model(x)

    r = measure(forward, runs)
    results.append(dict(r, name=name, what="forward", mode=mode, threads=threads, value=r["median_ms"], unit="ms"))
    log(f"  {name} forward, {threads} thread(s), {mode}: {r['median_ms']:.3f} ms ({r['runs']} runs)")
    if y is None:
        return
    opt = make_optimizer(name, model)

    def train_step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(name, model(x), y)
        loss.backward()
        opt.step()

    for _ in range(WARM_STEPS):
        train_step()
    state = list(model.parameters()) + [t for s in opt.state.values() for t in s.values() if torch.is_tensor(t)]
    saved = [t.detach().clone() for t in state]

    def restore():
        with torch.no_grad():
            for t, s in zip(state, saved):
                t.copy_(s)

    r = measure(train_step, runs, prepare=restore)
    results.append(dict(r, name=name, what="train", mode=mode, threads=threads, value=r["median_ms"], unit="ms"))
    log(f"  {name} train, {threads} thread(s), {mode}: {r['median_ms']:.3f} ms ({r['runs']} runs)")


def gpt_train_trace_fn(model):
    """The gpt training step as one function of (params, AdamW state, causal
    mask, x, y), the way tjit traces it: forward, loss, autograd.grad, AdamW
    update in place (capturable form: the step count is a tensor). The mask
    buffer is an input: 1.13's fake mode rejects real tensors met on the way."""
    import torch

    names = [n for n, _ in model.named_parameters()]
    n = len(names)

    def step(*args):
        params = dict(zip(names, args[:n]))
        exp_avg, exp_avg_sq, steps = args[n : 2 * n], args[2 * n : 3 * n], args[3 * n : 4 * n]
        mask, x, y = args[-3], args[-2], args[-1]
        logits = torch.nn.utils.stateless.functional_call(model, dict(params, mask=mask), (x,))
        loss = loss_fn("gpt", logits, y)
        grads = torch.autograd.grad(loss, list(params.values()))
        with torch.no_grad():
            for p, g, m, v, s in zip(params.values(), grads, exp_avg, exp_avg_sq, steps):
                p = p.detach()
                s.add_(1)
                p.mul_(1 - 3e-4 * 0.01)
                m.mul_(0.9).add_(g, alpha=0.1)
                v.mul_(0.999).addcmul_(g, g, value=0.001)
                denom = (v.sqrt() / (1 - torch.pow(0.999, s)).sqrt()).add_(1e-8)
                p.sub_(m / denom * (3e-4 / (1 - torch.pow(0.9, s))))
        return loss.detach()

    params = [p.detach().clone().requires_grad_(True) for p in model.parameters()]
    state = [torch.zeros_like(p) for p in params] + [torch.zeros_like(p) for p in params] + \
        [torch.zeros(()) for _ in params]
    return step, params + state + [model.mask]


def bench_micro(name, ref_dir, refs, runs, threads, mode, results):
    import torch

    torch.manual_seed(1)
    if name == "mlp_b1":
        model, _, _ = load_model("mlp", ref_dir, refs["mlp"])
        x = torch.randn(1, 784)

        def call():
            with torch.no_grad():
                model(x)

        r = measure(call, runs)
        results.append(dict(r, name=name, what="forward", mode=mode, threads=threads, value=r["median_ms"] * 1e3,
                            unit="us"))
        log(f"  mlp_b1 forward, {threads} thread(s), {mode}: {r['median_ms'] * 1e3:.1f} us ({r['runs']} runs)")
        return
    if name == "trace":
        if mode != "pytorch":
            return  # tracing runs no kernels: measured once per thread count, with the default policy
        from torch._decomp import decomposition_table
        from torch.fx.experimental.proxy_tensor import make_fx

        # aten-level decompositions (torch._decomp's own; 1.13 has no core_aten table,
        # and its torch._refs entries lower to prims, further than tjit's core table)
        table = {k: v for k, v in decomposition_table.items()
                 if getattr(v, "__module__", "").startswith("torch._decomp")}
        model, _, _ = load_model("gpt", ref_dir, refs["gpt"])
        step, state = gpt_train_trace_fn(model)
        x, y = load_npy(os.path.join(ref_dir, refs["gpt"]["x"])), load_npy(os.path.join(ref_dir, refs["gpt"]["y"]))
        call = lambda: make_fx(step, decomposition_table=table, tracing_mode="fake")(*state, x, y)
        mode_name = mode + "+fake"
        r = measure(call, runs, warmup=1)
        results.append(dict(r, name=name, what=name, mode=mode_name, threads=threads, value=r["median_ms"], unit="ms"))
        log(f"  trace, {threads} thread(s), {mode}: {r['median_ms']:.1f} ms ({r['runs']} runs)")
        return
    for variant, call, scale, unit in micro_variants(name):
        r = measure(call, runs)
        value = scale / (r["median_ms"] * 1e-3) if "/" in unit else r["median_ms"] * scale
        results.append(dict(r, name=variant, what=variant, mode=mode, threads=threads, value=value, unit=unit))
        log(f"  {variant}, {threads} thread(s), {mode}: {value:.4g} {unit} ({r['runs']} runs)")


def micro_variants(name):
    """(result name, call, work per call, unit) of each variant of a
    micro-benchmark, named as tjit names its own (models/bench_ops.c): the
    allocating call under the benchmark's name, `NAME_out` into a
    preallocated output (ATen's out= overloads), `sdpa_decomp` the attention
    as matmul, scale, masked_fill, softmax, matmul (1.13 has no fused
    scaled_dot_product_attention)."""
    import torch
    import torch.nn.functional as F

    gb = lambda t: 2 * t.numel() * 4 / 1e9  # bytes read + written
    if name == "dispatch":
        a, b = torch.ones(1), torch.full((1,), 2.0)

        def call():
            for _ in range(DISPATCH_CALLS):
                torch.add(a, b)

        return [("dispatch", call, 1e6 / DISPATCH_CALLS, "ns")]
    if name == "copy":
        a = torch.randn(16 << 20)
        o = torch.zeros_like(a)
        return [("copy", lambda: o.copy_(a), gb(a), "GB/s")]
    if name == "gelu":
        a = torch.randn(16 << 20)
        o = torch.zeros_like(a)
        return [("gelu", lambda: F.gelu(a), gb(a), "GB/s"),
                ("gelu_out", lambda: torch._C._nn.gelu(a, out=o), gb(a), "GB/s")]
    if name == "softmax":
        a = torch.randn(4096, 1024)
        o = torch.zeros_like(a)
        return [("softmax", lambda: torch.softmax(a, -1), gb(a), "GB/s"),
                ("softmax_out", lambda: torch.softmax(a, -1, out=o), gb(a), "GB/s")]
    if name == "layer_norm":
        a, w, b = torch.randn(4096, 1024), torch.randn(1024), torch.randn(1024)
        o, m, r = torch.zeros_like(a), torch.zeros(4096, 1), torch.zeros(4096, 1)
        return [("layer_norm", lambda: F.layer_norm(a, (1024,), w, b, 1e-5), gb(a), "GB/s"),
                ("layer_norm_out", lambda: torch.ops.aten.native_layer_norm.out(a, [1024], w, b, 1e-5, out0=o,
                                                                                 out1=m, out2=r), gb(a), "GB/s")]
    if name == "mm":
        a, b = torch.randn(1024, 1024), torch.randn(1024, 1024)
        return [("mm", lambda: torch.mm(a, b), 2 * 1024**3 / 1e9, "GFLOP/s")]
    if name == "sdpa":
        q, k, v = (torch.randn(1, 12, 128, 64) for _ in range(3))
        mask = torch.tril(torch.ones(128, 128, dtype=torch.bool))
        scale = 1.0 / math.sqrt(64)

        def call():
            att = (q @ k.transpose(-2, -1)) * scale
            att = att.masked_fill(mask == 0, float("-inf"))
            return torch.softmax(att, -1) @ v

        return [("sdpa_decomp", call, 1.0, "ms")]
    raise ValueError(name)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ------------------------------------------------------------------ worker
def worker(args):
    """One process: one thread count, one wait policy (set before import)."""
    import torch

    # before any parallel region: OpenMP's threads start with this thread's MXCSR
    if args.flush_denormal and not torch.set_flush_denormal(True):
        sys.exit("torch_ref: this CPU cannot flush denormals to zero")
    torch.set_num_threads(args.threads)
    # one 16 MiB allocation freed before timing raises glibc's mmap threshold
    warm = torch.empty(16 << 20, dtype=torch.uint8)
    warm.fill_(0)
    del warm
    with open(os.path.join(args.ref, "reference.json")) as f:
        refs = json.load(f)["models"]
    mode = "pytorch" if args.policy == "default" else "pytorch_" + args.policy
    results, checks = [], []
    try:
        for name in args.names:
            if name in MODELS:
                checks.append(check_model(name, args.ref, refs[name]))
    except Mismatch as e:
        log(f"torch_ref: MISMATCH with tjit: {e}")
        sys.exit(1)
    for line in checks:
        log("  check: " + line)
    for name in args.names:
        if name in MODELS:
            bench_model(name, args.ref, refs[name], args.runs, args.threads, mode, results)
        else:
            bench_micro(name, args.ref, refs, args.runs, args.threads, mode, results)
    info = {"torch": torch.__version__, "torch_threads": torch.get_num_threads(), "checks": checks,
            "flush_denormal": args.flush_denormal,
            "env": {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                                                    "OMP_WAIT_POLICY", "OPENBLAS_CORETYPE")}}
    with open(args.out, "w") as f:
        json.dump({"info": info, "results": results}, f)


# ------------------------------------------------------------------ driver
def select(names):
    if not names:
        return MODELS + MICRO
    out = []
    for n in names:
        group = MODELS if n == "models" else MICRO if n == "micro" else [n]
        for g in group:
            if g not in MODELS + MICRO:
                sys.exit(f"torch_ref: unknown benchmark '{g}' (known: {', '.join(MODELS + MICRO)}, models, micro)")
            if g not in out:
                out.append(g)
    return out


def default_tjit():
    for d in ("build", "build-bench"):
        p = os.path.join(ROOT, d, "tools", "tjit")
        if os.access(p, os.X_OK):
            return p
    return os.path.join(ROOT, "build", "tools", "tjit")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--policies", default="default,passive")
    ap.add_argument("--ref", help="directory written by `tjit bench --export DIR`")
    ap.add_argument("--tjit", default=None, help="the tjit command, to write the reference files (without --ref)")
    ap.add_argument("--json", help="write every figure here (for bench/merge.py)")
    ap.add_argument("--flush-denormal", action="store_true",
                    help="torch.set_flush_denormal(True), as tjit bench --flush-denormal")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--policy", default="default", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.names = select(args.names)
    if args.runs < 1:
        sys.exit("torch_ref: --runs must be at least 1")
    try:
        threads = [int(t) for t in args.threads.split(",")]
        assert threads and min(threads) >= 1
    except (ValueError, AssertionError):
        sys.exit(f"torch_ref: bad --threads '{args.threads}' (a comma-separated list like 1,2)")
    policies = args.policies.split(",")
    if any(p not in ("default", "passive") for p in policies):
        sys.exit(f"torch_ref: bad --policies '{args.policies}' (default, passive)")
    if args.worker:
        args.threads = threads[0]
        return worker(args)

    if importlib.util.find_spec("torch") is None:
        print("torch_ref: PyTorch is not installed (Debian: apt-get install python3-torch); "
              "no PyTorch figures, the tjit side of the benchmarks still works")
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"tool": "pytorch", "available": False, "results": []}, f)
        return 0

    with tempfile.TemporaryDirectory(prefix="torch_ref.") as tmp:
        ref = args.ref
        if not ref:
            ref = os.path.join(tmp, "ref")
            tjit = args.tjit or default_tjit()
            log(f"torch_ref: writing tjit's reference files with {tjit} bench --export {ref}")
            subprocess.run([tjit, "bench", "--export", ref], check=True, stdout=subprocess.DEVNULL)
        load = os.getloadavg()
        date = time.strftime("%Y-%m-%d %H:%M:%S %Z")
        print(f"torch_ref, {date}; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
              f"threads {args.threads}; policies {args.policies}"
              f"{'; denormals flushed to zero' if args.flush_denormal else ''}", flush=True)
        results, infos = [], []
        for nt in threads:
            for policy in policies:
                env = dict(os.environ, OMP_NUM_THREADS=str(nt), OPENBLAS_NUM_THREADS=str(nt), MKL_NUM_THREADS=str(nt))
                env.pop("OMP_WAIT_POLICY", None)
                if policy == "passive":
                    env["OMP_WAIT_POLICY"] = "passive"
                out = os.path.join(tmp, f"w{nt}_{policy}.json")
                log(f"torch_ref: {nt} thread(s), OpenMP wait policy {policy}")
                cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--threads", str(nt), "--policy", policy,
                       "--runs", str(args.runs), "--ref", ref, "--out", out] + args.names
                if args.flush_denormal:
                    cmd.append("--flush-denormal")
                if subprocess.run(cmd, env=env).returncode != 0:
                    print("torch_ref: FAILED (see above): PyTorch and tjit disagree or a workload failed",
                          file=sys.stderr)
                    return 1
                with open(out) as f:
                    w = json.load(f)
                results += w["results"]
                infos.append(dict(w["info"], threads=nt, policy=policy))
        print_table(results)
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"tool": "pytorch", "available": True, "date": date, "loadavg": list(load),
                           "threads": threads, "policies": policies, "min_runs": args.runs, "processes": infos,
                           "results": results}, f, indent=1)
    return 0


def print_table(results):
    print(f"\n{'workload':<11} {'step':<11} {'thr':>3} {'mode':<17} {'figure':>16} {'ms per call':>12} "
          f"{'faults/call':>12} {'runs':>5}")
    for r in results:
        fig = f"{r['value']:.4g} {r['unit']}"
        print(f"{r['name']:<11} {r['what']:<11} {r['threads']:>3} {r['mode']:<17} {fig:>16} {r['median_ms']:>12.4f} "
              f"{r['faults_per_call']:>12.2f} {r['runs']:>5}")


if __name__ == "__main__":
    sys.exit(main())
