#!/usr/bin/python3
"""tjit's resampling and adaptive pooling kernels against PyTorch 1.13 in
the same process: each operator (forward, and its backward operator called
directly) on float32, N = 8, C = 32, the 2-d ones 64 x 64 -> 128 x 128
(adaptive_max_pool2d 64 x 64 -> 7 x 7), the 1-d ones 4096 -> 8192, the 3-d
ones 16^3 -> 32^3 (the same element counts; _adaptive_avg_pool3d 16^3 ->
7^3). tjit runs a plan compiled from
the make_fx graph of the single call (python/tjit_fx.py), reading and
writing the torch tensors in place. Rounds alternate tjit and torch at 1
and 2 threads (tjit.set_num_threads, torch.set_num_threads); a round times
CALLS calls of each; the figures are medians over ROUNDS rounds, in ms per
call, and the ratio tjit / torch.

    OPENBLAS_CORETYPE=Haswell /usr/bin/python3 bench/bench_resample.py [ROUNDS] [NAME,NAME...]

(TJIT_LIB=path/libtjit.so times another build, for an A/B.)
"""
import os
import statistics
import sys
import time
import warnings

import torch
from torch.fx.experimental.proxy_tensor import make_fx

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import tjit  # noqa: E402
import tjit_fx  # noqa: E402

warnings.filterwarnings("ignore", category=UserWarning)
ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 15
FILTER = sys.argv[2] if len(sys.argv) > 2 else ""  # comma-separated parts of names
CALLS = 3
A = torch.ops.aten
torch.manual_seed(0)
x1, x2, x3 = torch.randn(8, 32, 4096), torch.randn(8, 32, 64, 64), torch.randn(8, 32, 16, 16, 16)
_, amax_idx = A.adaptive_max_pool2d(x2, [7, 7])


def ops():
    """(name, function of its tensors, the tensors)"""
    yield "adaptive_max_pool2d 64x64->7x7", lambda x: A.adaptive_max_pool2d(x, [7, 7]), (x2,)
    yield ("adaptive_max_pool2d_backward", lambda g, x, i: A.adaptive_max_pool2d_backward(g, x, i),
           (torch.randn(8, 32, 7, 7), x2, amax_idx))
    yield "_adaptive_avg_pool3d 16^3->7^3", lambda x: A._adaptive_avg_pool3d(x, [7, 7, 7]), (x3,)
    yield ("_adaptive_avg_pool3d_backward", lambda g, x: A._adaptive_avg_pool3d_backward(g, x),
           (torch.randn(8, 32, 7, 7, 7), x3))
    for name, fwd, bwd, x, size, corners in [
            ("upsample_bicubic2d", A.upsample_bicubic2d.vec, A.upsample_bicubic2d_backward.vec, x2, [128, 128], True),
            ("upsample_bilinear2d", A.upsample_bilinear2d.vec, A.upsample_bilinear2d_backward.vec, x2, [128, 128],
             True),
            ("upsample_nearest2d", A.upsample_nearest2d.vec, A.upsample_nearest2d_backward.vec, x2, [128, 128], False),
            ("upsample_linear1d", A.upsample_linear1d.vec, A.upsample_linear1d_backward.vec, x1, [8192], True),
            ("upsample_nearest1d", A.upsample_nearest1d.vec, A.upsample_nearest1d_backward.vec, x1, [8192], False),
            ("upsample_trilinear3d", A.upsample_trilinear3d.vec, A.upsample_trilinear3d_backward.vec, x3,
             [32, 32, 32], True),
            ("upsample_nearest3d", A.upsample_nearest3d.vec, A.upsample_nearest3d_backward.vec, x3, [32, 32, 32],
             False)]:
        extra = [False] if corners else []
        yield name, forward_call(fwd, size, extra), (x,)
        yield name + "_backward", backward_call(bwd, size, list(x.shape), extra), (torch.randn(*x.shape[:2], *size),)


# make_fx traces every parameter of the function: no defaults to bind these
def forward_call(fwd, size, extra):
    return lambda x: fwd(x, size, *extra, None)


def backward_call(bwd, size, input_size, extra):
    return lambda g: bwd(g, size, input_size, *extra, None)


def timed(f, args):
    t = time.perf_counter()
    for _ in range(CALLS): f(*args)
    return (time.perf_counter() - t) / CALLS * 1e3


print(f"| operator | threads | tjit ms | torch ms | tjit / torch |  ({ROUNDS} rounds of {CALLS} calls, medians)")
print("| --- | --- | --- | --- | --- |")
for name, f, args in ops():
    if not any(f in name for f in FILTER.split(",")): continue
    plan = tjit_fx.compile(make_fx(f)(*args), *args, differentiable=False)
    want, got = f(*args), plan(*args)
    for w, g in zip(want if isinstance(want, tuple) else (want,), got if isinstance(got, tuple) else (got,)):
        assert torch.allclose(w.double(), g.double(), rtol=1e-5, atol=1e-5), name
    for threads in (1, 2):
        tjit.set_num_threads(threads)
        torch.set_num_threads(threads)
        mine, theirs = [], []
        for _ in range(ROUNDS):
            mine.append(timed(plan, args))
            theirs.append(timed(f, args))
        a, b = statistics.median(mine), statistics.median(theirs)
        print(f"| {name} | {threads} | {a:.3f} | {b:.3f} | {a / b:.2f} |", flush=True)
