#!/usr/bin/python3
"""An eval nn.TransformerEncoderLayer(d_model=128, nhead=4,
dim_feedforward=512, batch_first=True) forward on x [8, 64, 128] under
no_grad, which torch 1.13 runs as its fused _transformer_encoder_layer_fwd:
torch eager against the make_fx graph compiled by python/tjit_fx.py
(decompose=False: tjit's kernel for the operator; decompose=True: its core
decomposition), 1 thread each. ROUNDS alternated rounds of RUNS calls, the
median call of each round, then the median over rounds. Run from the
checkout after building:

    OPENBLAS_CORETYPE=Haswell /usr/bin/python3 bench/torch_transformer.py [ROUNDS] [RUNS]"""
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

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 15
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 40
torch.set_num_threads(1)
tjit.set_num_threads(1)
torch.manual_seed(0)


def call_median(fn, x):
    ts = []
    for _ in range(RUNS):
        t = time.perf_counter()
        fn(x)
        ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e3


def main():
    layer = torch.nn.TransformerEncoderLayer(128, 4, 512, batch_first=True).eval()
    x = torch.randn(8, 64, 128)
    with torch.no_grad():
        gm = make_fx(lambda x: layer(x))(x)
        assert any(n.target == torch.ops.aten._transformer_encoder_layer_fwd.default for n in gm.graph.nodes)
        variants = {"torch eager": layer,
                    "tjit_fx.compile": tjit_fx.compile(gm, x),
                    "tjit_fx.compile decompose": tjit_fx.compile(gm, x, decompose=True)}
        want = layer(x)
        for name, fn in variants.items():
            assert torch.allclose(fn(x), want, rtol=1e-4, atol=1e-5), name
            for _ in range(5): fn(x)
        times = {name: [] for name in variants}
        for _ in range(ROUNDS):
            for name, fn in variants.items():
                times[name].append(call_median(fn, x))
    base = statistics.median(times["torch eager"])
    print("TransformerEncoderLayer(128, 4, 512) eval, x [8, 64, 128], 1 thread, %d rounds x %d calls" % (ROUNDS, RUNS))
    for name, ts in times.items():
        m = statistics.median(ts)
        print("%-28s median %.3f ms  (rounds %.3f..%.3f)  torch / this %.2f" % (name, m, min(ts), max(ts), base / m))


if __name__ == "__main__":
    main()
