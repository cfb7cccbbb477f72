#!/usr/bin/python3
"""Plots `gpt2 bench` against its PyTorch peer, from the JSON files bench_vs_torch.sh writes.

    /usr/bin/python3 examples/gpt2/plot_bench.py OUTDIR [OUTDIR2 ...] --out examples/gpt2/bench.png
    /usr/bin/python3 examples/gpt2/plot_bench.py OUTDIR --per-step --out examples/gpt2/per_step.png

Each OUTDIR holds ember.json and torch.json from one run (e.g. one per thread count). The default
figure is the seconds to generate n tokens after the prompt, with and without the KV cache;
--per-step draws the latency of every step against its position (the context length it attends
over), four lines: Ember and the nanoGPT-structured PyTorch model, each with and without the cache."""
import argparse
import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

NAMES = (("ember", "tab:red", "Ember"), ("torch", "tab:blue", "PyTorch, nanoGPT's model"))


def series(rows, cache):
    pts = sorted((r["generated"], r["seconds"]) for r in rows if r["cache"] == cache)
    return [p[0] for p in pts], [p[1] for p in pts]


def title(run):
    return "%s, %d thread%s" % (run.get("cpu", "CPU"), run["threads"], "" if run["threads"] == 1 else "s")


def plot_totals(ax, runs):
    for name, color, label in NAMES:
        if name == "torch":
            label = "PyTorch eager"
        for cache, style in ((True, "-o"), (False, "--s")):
            x, y = series(runs[name]["rows"], cache)
            if x:
                ax.plot(x, y, style, color=color, label=f"{label}, {'KV cache' if cache else 'no cache'}")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("tokens generated after a %d-token prompt" % runs["ember"]["prompt_len"])
    ax.set_ylabel("seconds")
    ax.legend(fontsize=8, loc="upper left")


def plot_per_step(ax, runs):
    for name, color, label in NAMES:
        for s in runs[name].get("per_step", []):
            # Step 0 is the prompt's pass (prefill), not a decoding step: drawn as a lone marker.
            pos, sec = s["positions"], s["seconds"]
            style = "-" if s["cache"] else "--"
            what = "KV cache" if s["cache"] else ("no cache (nanoGPT's generate)" if name == "torch" else "no cache")
            ax.plot(pos[1:], sec[1:], style, color=color, lw=1, alpha=0.85, label=f"{label}, {what}")
            ax.plot(pos[:1], sec[:1], "o" if s["cache"] else "s", color=color, ms=4, mfc="none")
    ax.set_yscale("log")
    ax.set_xlabel("position: tokens in the context at that step (prompt %d; hollow markers: the prompt's pass)"
                  % runs["ember"]["prompt_len"])
    ax.set_ylabel("seconds per step")
    ax.legend(fontsize=8, loc="best")  # the curves fill different corners depending on the lengths run


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="+", help="folders with ember.json and torch.json")
    ap.add_argument("--out", required=True, help="PNG to write")
    ap.add_argument("--per-step", action="store_true", help="latency of each step against its position")
    args = ap.parse_args()
    fig, axes = plt.subplots(1, len(args.dirs), figsize=(7 * len(args.dirs), 4.8), squeeze=False)
    for ax, d in zip(axes[0], args.dirs):
        runs = {name: json.load(open(os.path.join(d, name + ".json"))) for name in ("ember", "torch")}
        (plot_per_step if args.per_step else plot_totals)(ax, runs)
        ax.set_title(title(runs["ember"]))
        ax.grid(True, which="both", alpha=0.3)
    fig.suptitle("GPT-2 124M shapes, greedy decoding: " +
                 ("latency of each step against its position" if args.per_step else "time against generated length"))
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print("wrote", args.out)


if __name__ == "__main__":
    main()
