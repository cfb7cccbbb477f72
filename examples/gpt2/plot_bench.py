#!/usr/bin/python3
"""Plots `gpt2 bench` against its PyTorch peer: seconds to generate n tokens after the prompt, with
and without the KV cache, from the JSON files bench_vs_torch.sh writes.

    /usr/bin/python3 examples/gpt2/plot_bench.py OUTDIR [OUTDIR2 ...] --out examples/gpt2/bench.png

Each OUTDIR holds ember.json and torch.json from one run (e.g. one per thread count)."""
import argparse
import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def series(rows, cache):
    pts = sorted((r["generated"], r["seconds"]) for r in rows if r["cache"] == cache)
    return [p[0] for p in pts], [p[1] for p in pts]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="+", help="folders with ember.json and torch.json")
    ap.add_argument("--out", required=True, help="PNG to write")
    args = ap.parse_args()
    fig, axes = plt.subplots(1, len(args.dirs), figsize=(6 * len(args.dirs), 4.5), squeeze=False)
    for ax, d in zip(axes[0], args.dirs):
        runs = {name: json.load(open(os.path.join(d, name + ".json"))) for name in ("ember", "torch")}
        for name, color in (("ember", "tab:red"), ("torch", "tab:blue")):
            label = "Ember" if name == "ember" else "PyTorch eager"
            for cache, style in ((True, "-o"), (False, "--s")):
                x, y = series(runs[name]["rows"], cache)
                if x:
                    ax.plot(x, y, style, color=color, label=f"{label}, {'KV cache' if cache else 'no cache'}")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("tokens generated after a %d-token prompt" % runs["ember"]["prompt_len"])
        ax.set_ylabel("seconds")
        ax.set_title("%s, %d thread%s" % (runs["ember"]["cpu"], runs["ember"]["threads"], "" if runs["ember"]["threads"] == 1 else "s"))
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8, loc="upper left")
    fig.suptitle("GPT-2 124M shapes, greedy decoding: time against generated length")
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print("wrote", args.out)


if __name__ == "__main__":
    main()
