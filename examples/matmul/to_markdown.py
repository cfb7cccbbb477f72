#!/usr/bin/python3
"""Prints bench_matmul's, bench_ops's or bench_gemv's JSON as a Markdown table (for README.md).

    /usr/bin/python3 examples/matmul/to_markdown.py benchmarks/2026-12-02-amd-epyc-zen3/reports/matmul_f32_t2.json
"""
import json
import sys


def matmul_table(d, key="gflops"):
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
            cells.append("-" if r is None or r.get(key, 0) <= 0 else "{:.1f}".format(r[key]))
        if ratio:
            p, b = rows.get("packed", {}).get(key, 0), rows.get("blas", {}).get(key, 0)
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


def gemv_table(d):
    """One row per matrix and thread count, one column per layout: Ember's share of the read probe
    and its speed over MKL's better call ("-" where MKL did not run)."""
    layouts = list(dict.fromkeys(r["layout"] for r in d["results"]))
    names = {"xW": "x @ W", "xWt": "x @ W^T", "Wv": "W @ v", "Wtv": "W^T @ v"}
    head = ["W", "threads"] + [f"{names.get(l, l)}: % of read (vs MKL)" for l in layouts]
    print("| " + " | ".join(head) + " |")
    print("|---|---|" + "---|" * len(layouts))
    keys = list(dict.fromkeys((r["rows"], r["cols"], r["threads"]) for r in d["results"]))
    for rows, cols, threads in keys:
        cells = [f"{rows} x {cols}", str(threads)]
        for l in layouts:
            r = next((x for x in d["results"] if (x["rows"], x["cols"], x["threads"], x["layout"]) == (rows, cols, threads, l)),
                     None)
            if r is None:
                cells.append("-")
                continue
            ratio = f"{r['ratio_vs_best_mkl']:.2f}x" if "ratio_vs_best_mkl" in r else "-"
            cells.append(f"{r['percent_of_read']:.0f}% ({ratio})")
        print("| " + " | ".join(cells) + " |")


def main():
    args = [a for a in sys.argv[1:] if a != "--cpu-time"]
    if len(args) != 1:
        sys.exit(__doc__)
    with open(args[0]) as f:
        d = json.load(f)
    if d.get("program") == "bench_ops":
        ops_table(d)
    elif d.get("program") == "bench_gemv":
        gemv_table(d)
    else:
        matmul_table(d, "gflops_per_cpu_second" if "--cpu-time" in sys.argv else "gflops")


if __name__ == "__main__":
    main()
