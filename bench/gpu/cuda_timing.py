"""Timing of PyTorch work for bench/gpu.sh's scripts: the median of CUDA
event times over `iters` calls after `warmup` untimed ones."""
import torch


def median_ms(fn, iters=50, warmup=10):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(iters):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return times[len(times) // 2]
