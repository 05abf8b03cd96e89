#!/usr/bin/python3
"""PyTorch's side of bench_reduce: torch.sum(x, dim) of float32 matrices.

    OPENBLAS_CORETYPE=Haswell taskset -c 0 /usr/bin/python3 bench/torch_sum.py [RUNS]

The same shapes, dims, calls per run (about 16 Mi elements a run) and runs
(default 21) as build/bench/bench_reduce, 1 thread (OMP_NUM_THREADS=1 before
import, torch.set_num_threads(1)); figures are medians of the wall time and
of the thread's CPU time per call, in ms. Without PyTorch it says so and
exits 0.
"""
import os
import statistics
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
try:
    import torch
except ImportError:
    print("torch_sum.py: PyTorch is not installed")
    sys.exit(0)

SHAPES = [(4096, 4096), (64, 4096), (4096, 64), (512, 512)]


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 21
    torch.set_num_threads(1)
    torch.manual_seed(0)
    print(f"torch {torch.__version__} float32 sum over one dim, 1 thread, median of {runs} runs "
          "(ms per call; CPU time)")
    for rows, cols in SHAPES:
        x = torch.randn(rows, cols)
        calls = max(1, (16 << 20) // (rows * cols))
        for dim in (0, 1):
            torch.sum(x, dim)  # warm-up
            wall, cpu = [], []
            for _ in range(runs):
                w0, c0 = time.perf_counter_ns(), time.thread_time_ns()
                for _ in range(calls):
                    torch.sum(x, dim)
                wall.append((time.perf_counter_ns() - w0) / calls / 1e6)
                cpu.append((time.thread_time_ns() - c0) / calls / 1e6)
            print(f"[{rows}, {cols}]".ljust(14),
                  f"{dim:3d} {statistics.median(wall):10.4f} ({statistics.median(cpu):.4f})")


if __name__ == "__main__":
    main()
