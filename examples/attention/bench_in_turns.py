#!/usr/bin/python3
"""Ember's attention and PyTorch's scaled_dot_product_attention timed in turns, call by call, in one
process.

`bench_attention --peer` times all of Ember's cases and then all of SDPA's, in a second process that
starts about a minute later. On a VM whose speed drifts by up to 1.5x within a minute the two sides can then land in different phases: four back-to-back runs read 0.79x to
1.54x for one cell. Here every repeat makes one call of each, the order swapped from one repeat to
the next, so that both sides see the same phase, and the ratio reported is the median of the
per-repeat ratios (SDPA's time / Ember's: above 1, Ember is faster; examples/common/in_turns.py).

It needs one Python that imports both `ember` and `torch` 2.x: `./run.sh bench-deps` installs the
ember package into the peer environment (and `./run.sh peer-ember` brings it up to the tree after a
change to the library; otherwise this times the Ember that was installed), so

    ~/.cache/ember/peer-venv/bin/python examples/attention/bench_in_turns.py --threads 1 \\
        --seq 1024,4096 --head-dim 64 --causal both --json results/attention_in_turns_t1.json

Threads: both libraries run OpenMP, each with its own runtime, and --threads goes to both (through
OMP_NUM_THREADS, set before either is imported, and torch.set_num_threads). With more than one
thread, an idle runtime's workers would spin for milliseconds after each call, on the cores the
other side is about to use; OMP_WAIT_POLICY=passive (the default here above one thread,
--wait-policy to change) sends them to sleep at once. Each attention call is one parallel region
on both sides, so the policy costs neither side much."""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from in_turns import cpu_name, set_threads, summarise, time_in_turns  # noqa: E402


def parse_ints(text, flag):
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise SystemExit(f"bench_in_turns: {flag} expects comma-separated positive integers, got '{text}'")
    if not values or min(values) < 1:
        raise SystemExit(f"bench_in_turns: {flag} expects comma-separated positive integers, got '{text}'")
    return values


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seq", default="1024,4096", help="sequence lengths N, comma-separated")
    ap.add_argument("--head-dim", default="64", help="head dimensions d, comma-separated")
    ap.add_argument("--heads", type=int, default=1, help="batch * heads")
    ap.add_argument("--causal", default="both", choices=["off", "on", "both"])
    ap.add_argument("--modes", default="fwd,fwd+bwd", help="fwd, fwd+bwd or both")
    ap.add_argument("--threads", type=int, default=1, help="threads for both libraries")
    ap.add_argument("--repeats", type=int, default=11, help="timed calls per side and case")
    ap.add_argument("--impl", default="flash2", help="Ember's attention kernel: flash2 (the library's), or the "
                    "study's flash or standard")
    ap.add_argument("--wait-policy", default="", help="OMP_WAIT_POLICY for both runtimes (default: passive "
                    "above one thread, OpenMP's own at one)")
    ap.add_argument("--json", default="", help="write the results here")
    args = ap.parse_args()
    seqs, dims = parse_ints(args.seq, "--seq"), parse_ints(args.head_dim, "--head-dim")
    modes = [m for m in args.modes.split(",") if m]
    if not modes or any(m not in ("fwd", "fwd+bwd") for m in modes):
        raise SystemExit(f"bench_in_turns: --modes expects fwd, fwd+bwd or both, got '{args.modes}'")
    for flag, value in (("--threads", args.threads), ("--repeats", args.repeats), ("--heads", args.heads)):
        if value < 1:
            raise SystemExit(f"bench_in_turns: {flag} must be at least 1, got {value}")
    causals = {"off": [False], "on": [True], "both": [False, True]}[args.causal]

    policy = set_threads(args.threads, args.wait_policy)  # before either OpenMP runtime loads
    try:
        import numpy as np
        import torch
        import ember
    except ImportError as e:
        raise SystemExit(f"bench_in_turns: {e}; run it with a Python that has both ember and torch 2.x "
                         "(./run.sh bench-deps puts ember into ~/.cache/ember/peer-venv)")
    sdpa = getattr(torch.nn.functional, "scaled_dot_product_attention", None)
    if sdpa is None:
        raise SystemExit(f"bench_in_turns: torch {torch.__version__} has no scaled_dot_product_attention (2.0+)")
    torch.set_num_threads(args.threads)
    if args.impl not in ("", "auto", "flash2"):
        ember.register_study_kernels()  # the study's "flash" and "standard" join by name

    results = []
    for d in dims:
        for n in seqs:
            rng = np.random.default_rng(n * 131 + d)
            q, k, v, do = (rng.standard_normal((args.heads, n, d), dtype=np.float32) for _ in range(4))
            eq, ek, ev, edo = (ember.from_numpy(a) for a in (q, k, v, do))
            tq, tk, tv, tdo = (torch.from_numpy(a) for a in (q, k, v, do))
            for causal in causals:
                # The two sides must compute the same thing before their times mean anything.
                got = ember.attention(eq, ek, ev, causal=causal, impl=args.impl).numpy()
                with torch.no_grad():
                    want = sdpa(tq, tk, tv, is_causal=causal).numpy()
                err = float(np.max(np.abs(got - want)))
                if not err < 1e-3:
                    raise SystemExit(f"bench_in_turns: N={n} d={d} causal={causal}: Ember and SDPA differ by {err}")
                for mode in modes:
                    if mode == "fwd":
                        def ember_call():
                            ember.attention(eq, ek, ev, causal=causal, impl=args.impl)

                        def torch_call():
                            with torch.no_grad():
                                sdpa(tq, tk, tv, is_causal=causal)
                    else:
                        def ember_call():
                            _, vjp = ember.make_vjp(lambda a, b, c: ember.attention(a, b, c, causal=causal,
                                                                                     impl=args.impl), eq, ek, ev)
                            vjp(edo)

                        def torch_call():
                            a, b, c = (t.detach().requires_grad_() for t in (tq, tk, tv))
                            torch.autograd.grad(sdpa(a, b, c, is_causal=causal), (a, b, c), tdo)
                    te, tt = time_in_turns(ember_call, torch_call, args.repeats)
                    row = {"n": n, "d": d, "heads": args.heads, "causal": causal, "mode": mode, **summarise(te, tt)}
                    results.append(row)
                    print(f"N={n:6d} d={d:4d} heads={args.heads:3d} causal={'yes' if causal else 'no ':3s} {mode:8s} "
                          f"Ember {row['ember_ms']:9.3f} ms  SDPA {row['torch_ms']:9.3f} ms  "
                          f"SDPA/Ember {row['ratio']:.2f}x (pairs {row['ratio_min']:.2f}-{row['ratio_max']:.2f})",
                          flush=True)
    if args.json:
        doc = {"program": "bench_in_turns.py", "threads": args.threads, "repeats": args.repeats,
               "wait_policy": policy or "default", "impl": args.impl, "machine": cpu_name(),
               "torch": torch.__version__, "results": results}
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)
        print(f"wrote {args.json}", file=sys.stderr)


if __name__ == "__main__":
    main()
