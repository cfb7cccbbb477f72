#!/usr/bin/env python3
"""Two builds of `gpt2 train-step` timed in turns: medians of each stage, and whether their losses agree.

A shared or noisy machine drifts between two runs taken minutes apart, so each round runs both
binaries once, the order swapped every round; the ratio is the median of the per-round ratios.
Losses come from the same seed on both sides and must agree to --rtol (float rounding only).

    scripts/train_step_ab.py --old /tmp/gpt2.old --new build/bin/gpt2 --rounds 7 --threads 2
    scripts/train_step_ab.py --old A --new B -- --layers 6 --heads 6 --embd 384 --context 256 --batch 16
"""
import argparse
import os
import statistics
import subprocess
import sys

STAGES = ("step_ms", "forward_ms", "backward_ms", "clip_ms", "adamw_ms", "zero_grad_ms")


def run(binary, threads, extra):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    out = subprocess.run([binary, "train-step", "--losses"] + extra, env=env, check=True, capture_output=True,
                         text=True).stdout
    losses, stages = [], {}
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "loss":
            losses.append(float(f[2]))
        elif f and f[0] == "step_ms":
            stages = {f[i]: float(f[i + 1]) for i in range(0, len(f), 2)}
    if not stages:
        sys.exit(f"{binary}: no step_ms line in its output:\n{out}")
    return losses, stages


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--old", required=True, help="the baseline gpt2 binary")
    p.add_argument("--new", required=True, help="the changed gpt2 binary")
    p.add_argument("--rounds", type=int, default=5, help="rounds, each running both (default 5)")
    p.add_argument("--threads", type=int, default=2, help="OMP_NUM_THREADS for both (default 2)")
    p.add_argument("--rtol", type=float, default=1e-4, help="largest relative loss difference (default 1e-4)")
    p.add_argument("extra", nargs="*", help="flags for train-step after --, e.g. -- --steps 30")
    a = p.parse_args()
    if a.rounds < 1 or a.threads < 1:
        p.error("--rounds and --threads must be at least 1")
    res = {"old": [], "new": []}
    worst = 0.0
    for r in range(a.rounds):
        order = ("old", "new") if r % 2 == 0 else ("new", "old")
        got = {side: run(getattr(a, side), a.threads, a.extra) for side in order}
        for side in order:
            res[side].append(got[side][1])
        lo, ln = got["old"][0], got["new"][0]
        if len(lo) != len(ln):
            sys.exit(f"round {r}: {len(lo)} losses against {len(ln)}")
        for x, y in zip(lo, ln):
            worst = max(worst, abs(x - y) / max(abs(x), 1e-30))
    print(f"{a.rounds} rounds in turns, {a.threads} threads, flags: {' '.join(a.extra) or '(nano defaults)'}")
    print(f"{'stage':<14}{'old ms':>10}{'new ms':>10}{'new/old':>9}")
    for s in STAGES:
        o = statistics.median(x[s] for x in res["old"])
        n = statistics.median(x[s] for x in res["new"])
        ratio = statistics.median(y[s] / x[s] if x[s] else 1.0 for x, y in zip(res["old"], res["new"]))
        print(f"{s:<14}{o:>10.3f}{n:>10.3f}{ratio:>9.3f}")
    print(f"largest relative loss difference: {worst:.3g} ({'within' if worst <= a.rtol else 'OVER'} rtol {a.rtol:g})")
    return 0 if worst <= a.rtol else 1


if __name__ == "__main__":
    sys.exit(main())
