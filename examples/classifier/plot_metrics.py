#!/usr/bin/python3
"""Draws train_classifier's loss and accuracy curves from its metrics.json (or metrics.csv).

    /usr/bin/python3 examples/classifier/plot_metrics.py results/classifier/metrics.json [-o out.png]
"""
import argparse
import csv
import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(path):
    if path.endswith(".csv"):
        with open(path) as f:
            rows = list(csv.DictReader(f))
        conv = lambda v: float(v) if v not in ("", "null", None) else None  # noqa: E731
        return [{k: conv(v) for k, v in r.items()} for r in rows], None
    with open(path) as f:
        doc = json.load(f)
    return doc["epochs"], doc.get("test", {}).get("accuracy")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("metrics", help="metrics.json or metrics.csv written by train_classifier")
    p.add_argument("-o", "--out", help="PNG path (default: metrics.png beside the input)")
    a = p.parse_args()
    epochs, test_acc = load(a.metrics)
    if not epochs:
        raise SystemExit(f"{a.metrics}: no epochs recorded")
    out = a.out or os.path.join(os.path.dirname(os.path.abspath(a.metrics)), "metrics.png")
    x = [e["epoch"] for e in epochs]

    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(10, 4))
    ax_loss.plot(x, [e["train_loss"] for e in epochs], "o-", label="train")
    if epochs[0].get("val_loss") is not None:
        ax_loss.plot(x, [e["val_loss"] for e in epochs], "s-", label="validation")
    ax_loss.set_xlabel("epoch")
    ax_loss.set_ylabel("cross-entropy loss")
    ax_loss.set_title("Loss")
    ax_loss.grid(alpha=0.3)
    ax_loss.legend()

    ax_acc.plot(x, [100 * e["train_accuracy"] for e in epochs], "o-", label="train")
    if epochs[0].get("val_accuracy") is not None:
        ax_acc.plot(x, [100 * e["val_accuracy"] for e in epochs], "s-", label="validation")
    if test_acc is not None:
        ax_acc.axhline(100 * test_acc, color="k", ls="--", lw=1, label=f"test {100 * test_acc:.2f}%")
    ax_acc.set_xlabel("epoch")
    ax_acc.set_ylabel("accuracy (%)")
    ax_acc.set_title("Accuracy")
    ax_acc.grid(alpha=0.3)
    ax_acc.legend()

    fig.suptitle("Ember MLP on Fashion-MNIST")
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
