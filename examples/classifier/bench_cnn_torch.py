#!/usr/bin/python3
"""PyTorch peer of bench_cnn_step: the same CNN (conv 3x3 without bias, batch norm, ReLU, 2x2 max
pool, twice, then a linear head), batch, AdamW and thread count; the median forward, backward and
optimizer time of a training step on a random batch. Prints one JSON line; with --convs one more
per convolution (forward, input gradient, weight gradient alone, in GFLOP/s), as bench_cnn_step."""
import argparse
import json
import statistics
import time

import torch
from torch import nn


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--convs", action="store_true", help="also time each convolution alone")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Unflatten(1, (1, 28, 28)),
        nn.Conv2d(1, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1, bias=False), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 7 * 7, 10))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    x = torch.randn(a.batch_size, 784)
    y = torch.randint(0, 10, (a.batch_size,))
    fwd, bwd, upd = [], [], []
    for s in range(a.warmup + a.steps):
        t0 = time.perf_counter()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.item()
        f = time.perf_counter() - t0
        t0 = time.perf_counter()
        opt.zero_grad()
        loss.backward()
        b = time.perf_counter() - t0
        t0 = time.perf_counter()
        opt.step()
        u = time.perf_counter() - t0
        if s >= a.warmup:
            fwd.append(f * 1e3), bwd.append(b * 1e3), upd.append(u * 1e3)
    f, b, u = statistics.median(fwd), statistics.median(bwd), statistics.median(upd)
    print(json.dumps({"framework": f"torch {torch.__version__}", "threads": torch.get_num_threads(), "batch": a.batch_size,
                      "forward_ms": round(f, 3), "backward_ms": round(b, 3), "optimizer_ms": round(u, 3),
                      "step_ms": round(f + b + u, 3)}))
    if a.convs:
        time_convs(a)


def median_ms(fn, warmup, steps):
    ms = []
    for s in range(warmup + steps):
        t0 = time.perf_counter()
        fn()
        if s >= warmup:
            ms.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ms)


def time_convs(a):
    """Each convolution of the CNN alone: F.conv2d and torch.nn.grad's two gradients (oneDNN)."""
    g = torch.Generator().manual_seed(2)
    for name, c, cout, hw in (("conv1", 1, 32, 28), ("conv2", 32, 64, 14)):
        x = torch.randn(a.batch_size, c, hw, hw, generator=g)
        w = torch.randn(cout, c, 3, 3, generator=g)
        gy = torch.randn(a.batch_size, cout, hw, hw, generator=g)
        gflop = 2.0 * a.batch_size * hw * hw * cout * c * 9 / 1e9
        with torch.no_grad():
            fwd = median_ms(lambda: nn.functional.conv2d(x, w, padding=1), a.warmup, a.steps)
            dx = median_ms(lambda: torch.nn.grad.conv2d_input(x.shape, w, gy, padding=1), a.warmup, a.steps)
            dw = median_ms(lambda: torch.nn.grad.conv2d_weight(x, w.shape, gy, padding=1), a.warmup, a.steps)
        print(json.dumps({"framework": f"torch {torch.__version__}", "threads": torch.get_num_threads(), "layer": name,
                          "batch": a.batch_size, "gflop": round(gflop, 4), "forward_gflops": round(gflop / fwd * 1e3, 1),
                          "input_grad_gflops": round(gflop / dx * 1e3, 1), "weight_grad_gflops": round(gflop / dw * 1e3, 1)}))


if __name__ == "__main__":
    main()
