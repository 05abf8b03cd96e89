"""PyTorch's side of bench_micro's upsample figure: median (and min) time of
F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False), which
records aten::upsample_bilinear2d.vec, on float32 [8, 64, 64, 64], with one
thread and 25 runs after a warm-up, as bench_micro times tjit (wall and
thread CPU time: the latter is not inflated by time spent descheduled).

    OPENBLAS_CORETYPE=Haswell taskset -c 0 /usr/bin/python3 bench/torch_upsample.py
"""
import statistics
import time

import torch
import torch.nn.functional as F

torch.set_num_threads(1)
x = torch.rand(8, 64, 64, 64)
F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)  # warm-up
times, cpu = [], []
for _ in range(25):
    t, c = time.perf_counter(), time.thread_time()
    F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)
    times.append(time.perf_counter() - t)
    cpu.append(time.thread_time() - c)
print(f"torch {torch.__version__} upsample_bilinear2d.vec f32[8,64,64,64] x2, 1 thread: "
      f"median {statistics.median(times) * 1e3:.2f} ms (min {min(times) * 1e3:.2f}, "
      f"CPU time {statistics.median(cpu) * 1e3:.2f})")
