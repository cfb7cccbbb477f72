#!/usr/bin/python3
"""Plots bench_attention's JSON: time, peak extra memory and counted bytes against N, one column per
head size d, for standard and flash (and the PyTorch peer's time when present).

usage: /usr/bin/python3 examples/attention/plot_attention.py benchmarks/DATE-CPU/reports/attention_cpu.json [--out DIR] [--causal]"""
import argparse
import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json")
    ap.add_argument("--out", default=None, help="folder for the PNGs (default: beside the JSON)")
    ap.add_argument("--causal", action="store_true", help="plot the causal runs (default: non-causal)")
    args = ap.parse_args()
    doc = json.load(open(args.json))
    rows = [r for r in doc["results"] if r["causal"] == args.causal]
    ds = sorted({r["d"] for r in rows})
    out = args.out or os.path.dirname(os.path.abspath(args.json))
    os.makedirs(out, exist_ok=True)
    tag = f"{doc['device']}{'_causal' if args.causal else ''}"
    title = f"{doc['machine']}, {doc['threads']} threads, {doc['dtype']}, B={doc['batch']} H={doc['heads']}" + (
        ", causal" if args.causal else "")

    def series(d, impl, mode, key):
        pts = sorted((r["n"], r[key]) for r in rows if r["d"] == d and r["impl"] == impl and r["mode"] == mode)
        return [p[0] for p in pts], [p[1] for p in pts]

    # Time.
    fig, axes = plt.subplots(1, len(ds), figsize=(6 * len(ds), 4.5), squeeze=False)
    for ax, d in zip(axes[0], ds):
        for impl, style in (("standard", "-o"), ("flash", "-s")):
            for mode, alpha in (("fwd", 1.0), ("fwd+bwd", 0.55)):
                x, y = series(d, impl, mode, "median_ms")
                if x:
                    ax.plot(x, y, style, alpha=alpha, label=f"{impl} {mode}")
        for mode, alpha in (("fwd", 1.0), ("fwd+bwd", 0.55)):
            pts = sorted((r["n"], r["torch"]["ms"]) for r in rows
                         if r["d"] == d and r["impl"] == "standard" and r["mode"] == mode and "torch" in r)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], "--^", alpha=alpha, label=f"torch {mode}")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("N")
        ax.set_ylabel("median time (ms)")
        ax.set_title(f"d = {d}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(os.path.join(out, f"attention_time_{tag}.png"), dpi=120)

    # Memory and bytes.
    fig, axes = plt.subplots(2, len(ds), figsize=(6 * len(ds), 8), squeeze=False)
    for col, d in enumerate(ds):
        ax = axes[0][col]
        for impl, style in (("standard", "-o"), ("flash", "-s")):
            for mode, alpha in (("fwd", 1.0), ("fwd+bwd", 0.55)):
                x, y = series(d, impl, mode, "peak_extra_bytes")
                if x:
                    ax.plot(x, [v / 2**20 for v in y], style, alpha=alpha, label=f"{impl} {mode}")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("N")
        ax.set_ylabel("peak extra memory (MiB, Ember allocator)")
        ax.set_title(f"d = {d}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        ax = axes[1][col]
        for impl, style in (("standard", "-o"), ("flash", "-s")):
            x, r = series(d, impl, "fwd", "read_bytes")
            _, w = series(d, impl, "fwd", "write_bytes")
            if x:
                ax.plot(x, [(a + b) / 2**20 for a, b in zip(r, w)], style, label=f"{impl} fwd, counted")
        x, m0 = series(d, "standard", "fwd", "model0_bytes")
        if x:
            ax.plot(x, [v / 2**20 for v in m0], ":", label="Nd + N^2 (model 0)")
        x, m1 = series(d, "flash", "fwd", "model1_bytes")
        if x:
            ax.plot(x, [v / 2**20 for v in m1], ":", label="N^2 d^2 / M (model 1)")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("N")
        ax.set_ylabel("main-memory traffic (MiB)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(os.path.join(out, f"attention_memory_{tag}.png"), dpi=120)
    print("wrote", os.path.join(out, f"attention_time_{tag}.png"), "and", os.path.join(out, f"attention_memory_{tag}.png"))


if __name__ == "__main__":
    main()
