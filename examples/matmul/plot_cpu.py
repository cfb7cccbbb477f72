#!/usr/bin/python3
"""Plots bench_matmul's JSON (--device cpu): GFLOP/s against n for every variant, the GPT-2
products as bars, and the theoretical peak as a line.

    /usr/bin/python3 examples/matmul/plot_cpu.py results/cpu.json examples/matmul/cpu_gflops.png
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        data = json.load(f)
    results = [r for r in data["results"] if r["gflops"] > 0]
    variants = list(dict.fromkeys(r["variant"] for r in data["results"]))
    machine = data.get("machine", {})

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(13, 5), gridspec_kw={"width_ratios": [3, 2]})
    for v in variants:
        pts = sorted((r["n"], r["gflops"]) for r in results
                     if r["variant"] == v and r["label"].startswith("n=") and r["m"] == r["n"] == r["k"])
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=v)
    if machine.get("peak_gflops"):  # null where the clock is not known (VMs)
        ax.axhline(machine["peak_gflops"], color="gray", linestyle="--", label="theoretical peak")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("n (n x n @ n x n)")
    ax.set_ylabel("GFLOP/s (median)")
    ax.set_title("square products, {}".format(data.get("dtype", "")))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()

    gpt = [r for r in results if r["label"].startswith("gpt2")]
    labels = list(dict.fromkeys(r["label"] for r in gpt))
    width = 0.8 / max(1, len(variants))
    for i, v in enumerate(variants):
        ys = [next((r["gflops"] for r in gpt if r["label"] == l and r["variant"] == v), 0) for l in labels]
        bx.bar([j + i * width for j in range(len(labels))], ys, width, label=v)
    bx.set_xticks([j + 0.4 - width / 2 for j in range(len(labels))])
    bx.set_xticklabels([l.replace("gpt2 ", "").replace(" ", "\n", 1).replace("@", "\n@ ") for l in labels], fontsize=7)
    bx.set_ylabel("GFLOP/s (median)")
    bx.set_title("GPT-2 small products")
    bx.legend(fontsize=8)
    blas = machine.get("blas", "").split(" / ")
    fig.suptitle("{}, {} threads; OpenBLAS {}".format(machine.get("cpu", "?"), machine.get("threads", "?"),
                                                    blas[1] if len(blas) > 1 else "not built"), fontsize=9)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)
    print("wrote", sys.argv[2])


if __name__ == "__main__":
    main()
