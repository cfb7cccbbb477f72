#!/usr/bin/python3
"""PyTorch (eager) reference for train_classifier: the same MLP (or, with --model cnn, CNN), batch size, optimizer, learning-rate
schedule, data split sizes and per-step work (forward, cross-entropy, backward, AdamW step, loss and
accuracy read back), timed per epoch. Writes a JSON document like train_classifier's --json.

Run it through bench_vs_torch.sh, which sets the thread counts fairly (torch's pool plus OpenBLAS's
pool within the core count) and measures Ember in the same run.
"""
import argparse
import gzip
import json
import math
import os
import time

import numpy as np
import torch


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load(data_dir, train):
    prefix = "train" if train else "t10k"
    x = read_idx(os.path.join(data_dir, f"{prefix}-images-idx3-ubyte.gz")).reshape(-1, 784).astype(np.float32) / 255.0
    x = (x - 0.2860) / 0.3530  # the same normalisation as Ember's loader
    y = read_idx(os.path.join(data_dir, f"{prefix}-labels-idx1-ubyte.gz")).astype(np.int64)
    return torch.from_numpy(x), torch.from_numpy(y)


def openblas_kernel():
    """The OpenBLAS build and core kernel this process runs (the library torch loaded), or None."""
    try:
        import ctypes
        lib = ctypes.CDLL("libopenblas.so.0")
        lib.openblas_get_config.restype = ctypes.c_char_p
        lib.openblas_get_corename.restype = ctypes.c_char_p
        return f"{lib.openblas_get_config().decode()} (core {lib.openblas_get_corename().decode()})"
    except (OSError, AttributeError):
        return None


def mlp(sizes):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(torch.nn.Linear(sizes[i], sizes[i + 1]))
        if i + 2 < len(sizes):
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


def cnn():
    """examples/classifier/cnn_model.cpp's network, layer for layer."""
    nn = torch.nn
    return nn.Sequential(
        nn.Unflatten(1, (1, 28, 28)),
        nn.Conv2d(1, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1, bias=False), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 7 * 7, 10))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--model", choices=["mlp", "cnn"], default="mlp",
                   help="cnn: train_classifier --model cnn's network (cnn_model.cpp)")
    p.add_argument("--hidden", default="256,128")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--weight-decay", type=float, default=0.01)
    p.add_argument("--warmup-steps", type=int, default=200)
    p.add_argument("--val-size", type=int, default=5000)
    p.add_argument("--threads", type=int, default=2, help="torch.set_num_threads")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", default="", help="write the results here")
    a = p.parse_args()

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    x, y = load(a.data, True)
    xt, yt = load(a.data, False)
    perm = torch.randperm(len(x))
    tr, va = perm[: len(x) - a.val_size], perm[len(x) - a.val_size:]
    xtr, ytr, xva, yva = x[tr].contiguous(), y[tr].contiguous(), x[va].contiguous(), y[va].contiguous()

    model = cnn() if a.model == "cnn" else mlp([784] + [int(h) for h in a.hidden.split(",") if h] + [10])
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=a.weight_decay)
    steps_per_epoch = len(xtr) // a.batch_size  # drop_last, as train_classifier
    total = a.epochs * steps_per_epoch
    warmup = min(a.warmup_steps, total // 5)

    def lr_at(step):
        if step < warmup:
            return a.lr * (step + 1) / warmup
        progress = min(1.0, (step - warmup) / (total - warmup))
        return a.lr * 0.5 * (1 + math.cos(math.pi * progress))

    epochs, step = [], 0
    for epoch in range(a.epochs):
        t0 = time.perf_counter()
        order = torch.randperm(len(xtr))
        loss_sum, correct, seen = 0.0, 0, 0
        for b in range(steps_per_epoch):
            idx = order[b * a.batch_size: (b + 1) * a.batch_size]
            xb, yb = xtr[idx], ytr[idx]
            for g in opt.param_groups:
                g["lr"] = lr_at(step)
            logits = model(xb)
            loss = torch.nn.functional.cross_entropy(logits, yb)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            step += 1
            loss_sum += loss.item() * len(yb)
            correct += int((logits.detach().argmax(1) == yb).sum())
            seen += len(yb)
        secs = time.perf_counter() - t0
        epochs.append({"epoch": epoch + 1, "train_loss": loss_sum / seen, "train_accuracy": correct / seen,
                       "epoch_seconds": secs, "samples_per_second": seen / secs})
        print(f"torch epoch {epoch + 1}: loss {loss_sum / seen:.4f} acc {correct / seen:.4f} {secs:.2f}s", flush=True)

    with torch.no_grad():
        model.eval()
        test_acc = float((model(xt).argmax(1) == yt).float().mean())
        val_acc = float((model(xva).argmax(1) == yva).float().mean())
    doc = {"program": "bench_torch", "torch": torch.__version__, "threads": a.threads,
           "openblas_threads": os.environ.get("OPENBLAS_NUM_THREADS", "default"), "openblas": openblas_kernel(),
           "config": vars(a), "epochs": epochs, "val_accuracy": val_acc, "test": {"accuracy": test_acc}}
    print(f"torch test accuracy {100 * test_acc:.2f}%")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(doc, f, indent=2)


if __name__ == "__main__":
    main()
