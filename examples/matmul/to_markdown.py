#!/usr/bin/python3
"""Prints bench_matmul's or bench_ops's JSON as a Markdown table (for README.md).

    /usr/bin/python3 examples/matmul/to_markdown.py examples/matmul/data/cpu_float32.json
"""
import json
import sys


def matmul_table(d):
    variants = list(dict.fromkeys(r["variant"] for r in d["results"]))
    labels = list(dict.fromkeys(r["label"] for r in d["results"]))
    ratio = "packed" in variants and "blas" in variants
    head = ["product"] + variants + (["packed / blas"] if ratio else []) + ["CPUs idle before (min)"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for l in labels:
        rows = {r["variant"]: r for r in d["results"] if r["label"] == l}
        cells = [l.replace("@", " @ ")]
        for v in variants:
            r = rows.get(v)
            cells.append("-" if r is None or r["gflops"] <= 0 else "{:.1f}".format(r["gflops"]))
        if ratio:
            p, b = rows.get("packed", {}).get("gflops", 0), rows.get("blas", {}).get("gflops", 0)
            cells.append("{:.0f}%".format(100 * p / b) if p > 0 and b > 0 else "-")
        idle = [r.get("idle_before", -1) for r in rows.values() if r["gflops"] > 0]
        idle = [i for i in idle if i >= 0]
        cells.append("{:.0f}%".format(100 * min(idle)) if idle else "not checked")
        print("| " + " | ".join(cells) + " |")


def ops_table(d):
    print("| op | elements | MB moved | median ms | GB/s | of memcpy | CPUs idle before |")
    print("|---|---|---|---|---|---|---|")
    for r in d["results"]:
        idle = r.get("idle_before", -1)
        print("| {} | {} | {:.1f} | {:.3f} | {:.1f} | {:.0f}% | {} |".format(
            r["op"], r["numel"], r["bytes_moved"] * 1e-6, r["timing"]["median_s"] * 1e3, r["gbps"],
            100 * r["fraction_of_memcpy"], "{:.0f}%".format(100 * idle) if idle >= 0 else "not checked"))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        d = json.load(f)
    if d.get("program") == "bench_ops":
        ops_table(d)
    else:
        matmul_table(d)


if __name__ == "__main__":
    main()
