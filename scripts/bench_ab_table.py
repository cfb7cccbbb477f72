#!/usr/bin/env python3
"""The table of scripts/bench_ab.sh: for each figure, the median over rounds of A and of B, and the
median of the per-round ratios (above 1: B faster). Reads OUTDIR/{A,B}_r*.log.

    python3 scripts/bench_ab_table.py OUTDIR > OUTDIR/README-table.md
"""
import pathlib
import re
import statistics
import sys


def figures(text):
    """(name, value, higher_is_better) from one side's log."""
    out = []
    threads = 0
    for line in text.splitlines():
        m = re.match(r"threads: (\d+)", line)
        if m:
            threads = int(m.group(1))
        m = re.match(r"(n=\d+|gpt2 \w+ \S+)\s+([\d.]+)$", line.strip())
        if m:
            out.append((f"sgemm {m.group(1)}, {threads} thr (GFLOP/s)", float(m.group(2)), True))
        m = re.match(r"prefill of (\d+) tokens: [\d.]+ s \(([\d.]+) tokens/s\)", line)
        if m:
            out.append((f"GPT-2 prefill {m.group(1)}, 2 thr (tokens/s)", float(m.group(2)), True))
        m = re.match(r"\s+(\d+)\s+(yes|no)\s+[\d.]+\s+([\d.]+)", line)
        if m:
            what = "decode with the cache" if m.group(2) == "yes" else "no-cache steps"
            out.append((f"GPT-2 {what}, {m.group(1)} tokens, 2 thr (tokens/s)", float(m.group(3)), True))
        m = re.match(r"\s+(\d+)\s+(\d+)\s+(yes|no) flash2\s+(fwd\+bwd|fwd)\s+([\d.]+)", line)
        if m:
            causal = "causal" if m.group(3) == "yes" else "full"
            out.append((f"Flash2 {m.group(4)} N={m.group(1)} d={m.group(2)} {causal}, 2 thr (ms)", float(m.group(5)), False))
        m = re.match(r"(recorded op, forward \(make_vjp\)|backward, per recorded op|forward \+ backward, per op|"
                     r"forward only \(no recording\)|forward \+ backward)\s+([\d.]+)", line.strip())
        if m:
            unit = "us per op" if "per" in m.group(1) or "make_vjp" in m.group(1) else "ms, MLP step"
            out.append((f"autograd {m.group(1)}, 1 thr ({unit})", float(m.group(2)), False))
    return out


def main():
    d = pathlib.Path(sys.argv[1])
    rounds = sorted({int(p.stem.split("_r")[1]) for p in d.glob("A_r*.log")})
    table, better = {}, {}
    for r in rounds:
        for side in "AB":
            for name, v, hib in figures((d / f"{side}_r{r}.log").read_text()):
                table.setdefault(name, {}).setdefault(side, []).append(v)
                better[name] = hib
    print(f"| figure ({len(rounds)} rounds, A then B each round) | A median | B median | B/A speed, median of rounds |")
    print("|---|---|---|---|")
    for name, sides in table.items():
        a, b = sides.get("A", []), sides.get("B", [])
        if not a or len(a) != len(b):
            continue
        ratios = [(y / x if better[name] else x / y) for x, y in zip(a, b)]
        print(f"| {name} | {statistics.median(a):g} | {statistics.median(b):g} | {statistics.median(ratios):.2f}x |")


if __name__ == "__main__":
    main()
