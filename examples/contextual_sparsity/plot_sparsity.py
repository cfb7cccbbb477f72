#!/usr/bin/python3
"""Draws the contextual-sparsity study's plots from the JSON that `contextual_sparsity ... --json` writes.

usage: /usr/bin/python3 examples/contextual_sparsity/plot_sparsity.py RESULT.json [RESULT.json ...] --out DIR

Each file is recognised by its "command" (classifier, gpt, speed, head-speed); a gpt file with a
"speed" section also gets the speed plot, and one with a "head_predictor" section the head-recall plot. PNGs are written to DIR with the input file's stem as prefix.
"""
import argparse
import json
import math
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLORS = {"contextual": "C0", "oracle": "C0", "static": "C1", "random": "C2", "predictor": "C3"}


def save(fig, out, name):
    path = os.path.join(out, name)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print("wrote", path)


def classifier(doc, out, stem):
    rows = doc["rows"]
    x = [r["fraction"] * 100 for r in rows]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for key, title in (("accuracy", "test accuracy"), ("agreement", "prediction = dense prediction")):
        ax = axes[0 if key == "accuracy" else 1]
        for m in ("contextual", "static", "random"):
            ax.plot(x, [100 * r[m][key] for r in rows], "o-", color=COLORS[m], label=m + (" top-k" if m != "random" else " k"))
        if key == "accuracy":
            ax.axhline(100 * doc["dense_accuracy"], color="k", ls=":", label="dense")
        ax.set_xscale("log")
        ax.set_xlabel("kept hidden units per layer, k/n (%)")
        ax.set_ylabel(title + " (%)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.suptitle("Fashion-MNIST MLP %s: keeping k units of each hidden layer" % "-".join(map(str, doc["hidden_widths"])))
    save(fig, out, stem + "_accuracy.png")


def gpt(doc, out, stem):
    dense = math.exp(doc["dense_loss"])
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    rows = doc["mlp"]
    x = [r["fraction"] * 100 for r in rows]
    ax = axes[0]
    for m in ("oracle", "static", "random", "predictor"):
        ax.plot(x, [math.exp(r[m]) for r in rows], "o-", color=COLORS[m], label=m)
    ax.axhline(dense, color="k", ls=":", label="dense")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("kept MLP neurons per token and layer, k/4C (%)")
    ax.set_ylabel("validation perplexity")
    ax.set_title("MLP sparsity")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    ax = axes[1]
    rows = doc["attention"]
    ks = [r["k"] for r in rows]
    for m in ("oracle", "static", "random", "predictor"):
        if all(m in r for r in rows):
            ax.plot(ks, [math.exp(r[m]) for r in rows], "o-", color=COLORS[m], label=m)
    ax.axhline(dense, color="k", ls=":", label="dense")
    ax.set_yscale("log")
    ax.set_xlabel("kept attention heads per token and layer, k of %d" % doc["heads"])
    ax.set_ylabel("validation perplexity")
    ax.set_title("head sparsity")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.suptitle("%s (%d layers, C=%d)" % (doc["model"], doc["config"]["n_layer"], doc["config"]["n_embd"]))
    save(fig, out, stem + "_perplexity.png")

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    ax = axes[0]
    cov = doc["norm_coverage"]
    layers = [c["layer"] for c in cov]
    width = 0.27
    for i, part in enumerate(("0.90", "0.95", "0.99")):
        ax.bar([l + (i - 1) * width for l in layers], [100 * c[part]["mean_fraction"] for c in cov], width,
               label="%s%% of the norm" % part[2:])
    ax.set_xticks(layers)
    ax.set_xlabel("layer")
    ax.set_ylabel("MLP neurons needed, mean over tokens (% of 4C)")
    ax.set_title("how concentrated each token's MLP activation is")
    ax.legend()
    ax.grid(True, axis="y", alpha=0.3)
    ax = axes[1]
    rec = doc["predictor"]["recall"]
    x = [r["fraction"] * 100 for r in rec]
    for l in range(len(layers)):
        c = "C%d" % (l % 10)
        ax.plot(x, [100 * r["predictor"][l] for r in rec], "o-", color=c, label="predictor, layer %d" % l)
        ax.plot(x, [100 * r["static"][l] for r in rec], "x--", color=c, alpha=0.6)
    ax.plot(x, [100 * r["chance"] for r in rec], "k:", label="chance (k/4C)")
    ax.set_xscale("log")
    ax.set_xlabel("k/4C (%)")
    ax.set_ylabel("recall of the oracle top-k set (%)")
    ax.set_title("predictor (solid) vs static (dashed) recall, r=%d" % doc["predictor"]["rank"])
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    save(fig, out, stem + "_coverage_recall.png")
    if "head_predictor" in doc:
        head_recall(doc, out, stem)
    if "speed" in doc:
        speed(doc["speed"], out, stem)


def head_recall(doc, out, stem):
    hp = doc["head_predictor"]
    rec = hp["recall"]
    ks = [r["k"] for r in rec]
    fig, ax = plt.subplots(figsize=(6, 4.2))
    for l in range(len(rec[0]["predictor"])):
        c = "C%d" % (l % 10)
        ax.plot(ks, [100 * r["predictor"][l] for r in rec], "o-", color=c, label="predictor, layer %d" % l)
        ax.plot(ks, [100 * r["static"][l] for r in rec], "x--", color=c, alpha=0.6)
    ax.plot(ks, [100 * r["chance"] for r in rec], "k:", label="chance (k/H)")
    ax.set_xlabel("kept heads k of %d" % doc["heads"])
    ax.set_ylabel("recall of the oracle top-k heads (%)")
    kind = "linear" if hp["rank"] == 0 else "rank %d" % hp["rank"]
    ax.set_title("head predictor (%s, trained on top %d; solid) vs static (dashed)" % (kind, hp["k"]), fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    save(fig, out, stem + "_head_recall.png")


def head_speed(hs, out, stem):
    threads = hs["threads"]
    fig, axes = plt.subplots(1, len(threads), figsize=(5.5 * len(threads), 4.2), squeeze=False)
    for ax, n in zip(axes[0], threads):
        rows = [r for r in hs["rows"] if r["threads"] == n]
        for r in rows:
            if r["variant"].startswith("dense") or r["variant"] == "kernel, every head":
                ax.axhline(1e6 * r["seconds"], ls=":", color="k" if "flash2" in r["variant"] else
                           ("C4" if "standard" in r["variant"] else "C5"), label=r["variant"])
        for variant, color in (("kernel, k heads; keys and values of every head", "C0"),
                               ("kernel, k heads; nothing of the skipped heads", "C1")):
            pts = sorted((r for r in rows if r["variant"] == variant), key=lambda r: r["k"])
            ax.plot([r["k"] for r in pts], [1e6 * r["seconds"] for r in pts], "o-", color=color, label=variant)
        ax.set_yscale("log")
        ax.set_xlabel("kept heads k of %d" % hs["heads"])
        ax.set_ylabel("median time (us)")
        ax.set_title("one token's attention, C=%d, %d cached, %d thread(s)" % (hs["width"], hs["cached"], n), fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    save(fig, out, stem + "_head_speed.png")


def speed(sp, out, stem):
    batches = sorted({r["batch"] for r in sp["rows"]})
    fig, axes = plt.subplots(1, len(batches), figsize=(5.5 * len(batches), 4.2), squeeze=False)
    for ax, b in zip(axes[0], batches):
        rows = [r for r in sp["rows"] if r["batch"] == b]
        for r in rows:
            if r["variant"].startswith("dense") or r["variant"].endswith("every unit"):
                ax.axhline(1e6 * r["seconds"], ls=":", color="k" if "Ember" in r["variant"] else ("C4" if "BLAS" in r["variant"] else "C5"),
                           label=r["variant"])
        for variant, color in (("gathered kernel, k units", "C0"), ("gathered, same k for all tokens", "C0"),
                               ("gathered, own k per token", "C1")):
            pts = [r for r in rows if r["variant"] == variant]
            if pts:
                ax.plot([100 * r["fraction"] for r in pts], [1e6 * r["seconds"] for r in pts], "o-", color=color, label=variant)
        pred = [r for r in rows if r["variant"].startswith("predictor")]
        for r in pred:
            ax.plot([100 * r["fraction"]], [1e6 * r["seconds"]], "s", color="C3", label=r["variant"])
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("kept neurons k/N (%)")
        ax.set_ylabel("median time (us)")
        ax.set_title("batch %d, MLP %d-%d-%d, %d thread(s)" % (b, sp["width"], sp["hidden"], sp["width"], sp["threads"]))
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    save(fig, out, stem + "_speed.png")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="+")
    p.add_argument("--out", default="examples/contextual_sparsity/plots")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for f in a.files:
        with open(f) as fh:
            doc = json.load(fh)
        stem = os.path.splitext(os.path.basename(f))[0]
        cmd = doc.get("command")
        if cmd == "classifier":
            classifier(doc, a.out, stem)
        elif cmd == "gpt":
            gpt(doc, a.out, stem)
        elif cmd == "speed":
            speed(doc["speed"], a.out, stem)
        elif cmd == "head-speed":
            head_speed(doc["head_speed"], a.out, stem)
        else:
            raise SystemExit("%s: not a contextual_sparsity result (command %r)" % (f, cmd))


if __name__ == "__main__":
    main()
