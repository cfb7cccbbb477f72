#!/usr/bin/python3
"""PyTorch eager peer of bench_autograd: the same chain of tiny recorded adds and muls and the same
784-256-10 MLP step, timed the same way (warm-up, repeats, median). Prints one JSON object.

Run by bench_autograd itself; by hand: /usr/bin/python3 bench_autograd_torch.py --ops 2000
"""
import argparse
import json
import statistics
import time

import torch


def median_seconds(fn, warmup, repeats):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def chain(y, a, b, ops):
    for k in range(ops):
        y = y + a if k % 2 == 0 else y * b
    return y


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--ops", type=int, default=2000)
    p.add_argument("--size", type=int, default=4)
    p.add_argument("--repeats", type=int, default=21)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--mlp-repeats", type=int, default=21)
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)

    x = torch.rand(args.size) + 0.5
    a = torch.full((args.size,), 1e-3)
    b = torch.full((args.size,), 1.0001)
    g = torch.ones(args.size)

    def plain():
        with torch.no_grad():
            chain(x, a, b, args.ops)

    leaves = [t.clone().requires_grad_() for t in (x, a, b)]
    state = {}

    def forward():
        for t in leaves:
            t.grad = None  # so the sanity value below is one backward pass's gradient
        state["y"] = chain(leaves[0], leaves[1], leaves[2], args.ops)

    def backward():
        state["y"].backward(g)

    def forward_backward():
        forward()
        backward()

    out = {"peer": "pytorch " + torch.__version__, "threads": torch.get_num_threads()}
    out["chain_plain_s"] = median_seconds(plain, args.warmup, args.repeats)
    out["chain_forward_s"] = median_seconds(forward, args.warmup, args.repeats)
    # Backward alone: a fresh graph before each timed backward, outside the timer.
    times = []
    for r in range(args.warmup + args.repeats):
        forward()
        t0 = time.perf_counter()
        backward()
        if r >= args.warmup:
            times.append(time.perf_counter() - t0)
    out["chain_backward_s"] = statistics.median(times)
    out["chain_total_s"] = median_seconds(forward_backward, args.warmup, args.repeats)
    out["chain_grad_a"] = float(leaves[1].grad[0])  # a sanity value, compared by bench_autograd

    # The MLP step: 784-256-10, batch 128, relu, cross-entropy against fixed class targets.
    xb = torch.rand(args.batch, 784)
    target = torch.randint(0, 10, (args.batch,))
    w1 = (torch.randn(784, 256) * 0.05).requires_grad_()
    b1 = torch.zeros(256).requires_grad_()
    w2 = (torch.randn(256, 10) * 0.05).requires_grad_()
    b2 = torch.zeros(10).requires_grad_()

    def mlp_step():
        for w in (w1, b1, w2, b2):
            w.grad = None
        h = torch.relu(xb @ w1 + b1)
        loss = torch.nn.functional.cross_entropy(h @ w2 + b2, target)
        loss.backward()

    def mlp_forward():
        with torch.no_grad():
            h = torch.relu(xb @ w1 + b1)
            torch.nn.functional.cross_entropy(h @ w2 + b2, target)

    out["mlp_step_s"] = median_seconds(mlp_step, args.warmup, args.mlp_repeats)
    out["mlp_forward_s"] = median_seconds(mlp_forward, args.warmup, args.mlp_repeats)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
