#!/usr/bin/python3
"""PyTorch peer for bench_attention: the same configurations, timed the same way (warm-up, repeats,
median), forward and forward+backward. Uses torch.nn.functional.scaled_dot_product_attention where
the installed torch has it (2.0 and later); Debian's torch 1.13 lacks it, and then the peer is the
explicit softmax(Q K^T * scale [+ causal mask]) V in torch ops, i.e. torch's version of Algorithm 0.

Threads: torch 2.x (PyPI, with MKL and oneDNN) runs scaled_dot_product_attention and its GEMMs in
torch's own pool, so that pool gets --threads (bench_attention passes as many as Ember uses). Debian's
torch 1.13 instead runs its own pool with 1 thread and OpenBLAS (the BLAS it links) with
--blas-threads: with 2 + 2 on two cores, torch's spinning OpenMP workers and
OpenBLAS's threads fight for the cores (N=256 took 67 ms instead of 0.3 ms), and torch 2 + OpenBLAS 1
leaves the GEMMs on one core (N=2048 forward 115 ms against 54 ms). Prints one JSON document."""
import argparse
import ctypes
import json
import math
import os
import statistics
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--configs", required=True, help="n:d:causal,... (causal 0 or 1)")
    ap.add_argument("--threads", type=int, default=2, help="torch intra-op threads")
    ap.add_argument("--blas-threads", type=int, default=0, help="OpenBLAS threads (default: --threads)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1, help="untimed calls per case, and at least 0.2 s of them")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--heads", type=int, default=1)
    ap.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    ap.add_argument("--max-n", type=int, default=16384, help="skip N above this (N x N buffers)")
    args = ap.parse_args()
    os.environ["OPENBLAS_NUM_THREADS"] = str(args.blas_threads or args.threads)  # read when libopenblas loads
    import torch

    sdpa = getattr(torch.nn.functional, "scaled_dot_product_attention", None)
    torch_threads = args.threads if sdpa is not None else 1
    torch.set_num_threads(torch_threads)
    dtype = torch.float32 if args.dtype == "float32" else torch.float64
    blas = "unknown"
    try:
        lib = ctypes.CDLL("libblas.so.3")
        lib.openblas_get_corename.restype = ctypes.c_char_p
        blas = "OpenBLAS " + lib.openblas_get_corename().decode()
    except (OSError, AttributeError):
        pass
    if sdpa is not None:
        impl = "scaled_dot_product_attention"
        note = f"torch {torch.__version__}: scaled_dot_product_attention; {torch_threads} torch threads"
    else:
        impl = "explicit softmax(QK^T)V"
        note = (f"torch {torch.__version__} has no scaled_dot_product_attention (added in 2.0); peer is the explicit "
                f"softmax(Q K^T * scale) V in torch ops; BLAS {blas}; torch {torch_threads} + OpenBLAS {args.blas_threads or args.threads} threads")

    def explicit(q, k, v, causal):
        s = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
        if causal:
            n = q.shape[-2]
            mask = torch.ones(n, n, dtype=torch.bool).triu(1)
            s = s.masked_fill(mask, float("-inf"))
        return torch.softmax(s, dim=-1) @ v

    def attend(q, k, v, causal):
        if sdpa is not None:
            return sdpa(q, k, v, is_causal=causal)
        return explicit(q, k, v, causal)

    results = []
    for item in args.configs.split(","):
        n, d, c = (int(x) for x in item.split(":"))
        if n > args.max_n:
            continue
        causal = bool(c)
        g = torch.Generator().manual_seed(n * 131 + d)
        shape = (args.batch, args.heads, n, d)
        q, k, v, do = (torch.randn(shape, generator=g, dtype=dtype) for _ in range(4))
        for mode in ("fwd", "fwd+bwd"):
            def run():
                if mode == "fwd":
                    with torch.no_grad():
                        attend(q, k, v, causal)
                else:
                    qq, kk, vv = (t.detach().requires_grad_() for t in (q, k, v))
                    out = attend(qq, kk, vv, causal)
                    torch.autograd.grad(out, (qq, kk, vv), do)

            # At least --warmup calls and at least 0.2 s: on a 2-core VM the first shape of a
            # 2-thread run can stay 8x slower for all its repeats after one warm-up call; a peer
            # timed cold is no peer.
            t_warm = time.perf_counter()
            for _ in range(args.warmup):
                run()
            while time.perf_counter() - t_warm < 0.2:
                run()
            ts = []
            for _ in range(args.repeats):
                t0 = time.perf_counter()
                run()
                ts.append((time.perf_counter() - t0) * 1e3)
            results.append({"n": n, "d": d, "causal": causal, "mode": mode, "impl": impl,
                            "ms": statistics.median(ts), "min_ms": min(ts)})
            print(f"torch {impl} {mode} N={n} d={d} causal={causal}: {statistics.median(ts):.2f} ms",
                  file=sys.stderr)
    json.dump({"note": note, "results": results}, sys.stdout)


if __name__ == "__main__":
    main()
