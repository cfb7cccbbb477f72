#!/usr/bin/env python3
"""The PyTorch peer of bench_matmul: torch.mm (MKL in the PyPI wheel) on the same float32 shapes,
median of timed runs after warm-up, at one thread count per call (torch.set_num_threads; the
caller keeps it within the cores). Writes JSON rows shaped like bench_matmul's, variant "torch".

    PY examples/matmul/peer_torch_mm.py --sizes 256,1024,2048 --shapes 64x768x2304 --threads 2 --json OUT
"""
import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))


def parse_shapes(sizes, shapes):
    out = [(n, n, n, f"n={n}") for n in sizes]
    for s in shapes:
        m, k, n = (int(v) for v in s.split("x"))
        out.append((m, k, n, s))
    return out


def time_mm(torch, a, b, warmup, repeats, max_seconds):
    c = torch.empty(a.shape[0], b.shape[1], dtype=a.dtype)
    for _ in range(warmup):
        torch.mm(a, b, out=c)
    times = []
    start = time.perf_counter()
    while len(times) < repeats:
        t0 = time.perf_counter()
        torch.mm(a, b, out=c)
        times.append(time.perf_counter() - t0)
        if len(times) >= 3 and time.perf_counter() - start > max_seconds:
            break
    return statistics.median(times), len(times), c


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="256,1024,2048", help="square sizes n, comma-separated")
    p.add_argument("--shapes", default="", help="extra products MxKxN, comma-separated")
    p.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--max-seconds", type=float, default=5.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", help="write the rows here")
    args = p.parse_args()

    import torch
    torch.set_num_threads(args.threads)
    try:
        from peer_info import info
        peer = info()
    except Exception as e:  # the probe is informative only; the timing does not depend on it
        peer = {"error": str(e)}
    gen = torch.Generator().manual_seed(args.seed)
    sizes = [int(v) for v in args.sizes.split(",") if v]
    shapes = [s for s in args.shapes.split(",") if s]
    rows = []
    for m, k, n, label in parse_shapes(sizes, shapes):
        a = torch.randn(m, k, generator=gen)
        b = torch.randn(k, n, generator=gen)
        med, reps, c = time_mm(torch, a, b, args.warmup, args.repeats, args.max_seconds)
        ref = a.double() @ b.double()
        err = ((c.double() - ref).abs().max() / ref.abs().max()).item()
        gflops = 2.0 * m * k * n / med / 1e9
        rows.append({"variant": "torch", "label": label, "m": m, "k": k, "n": n, "threads": args.threads,
                     "gflops": gflops, "median_s": med, "repeats": reps, "max_rel_err": err})
        print(f"torch.mm {label:>14} threads {args.threads}: {med * 1e3:9.3f} ms  {gflops:8.1f} GFLOP/s", flush=True)
    doc = {"program": "peer_torch_mm.py", "torch": torch.__version__,
           "torch_config": torch.__config__.show(), "mkl": torch.backends.mkl.is_available(),
           "peer": peer, "results": rows}
    if args.json:
        tmp = args.json + ".tmp"
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=1)
        os.replace(tmp, args.json)


if __name__ == "__main__":
    main()
