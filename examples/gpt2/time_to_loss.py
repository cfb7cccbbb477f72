#!/usr/bin/env python3
"""Wall-clock to a validation loss: `gpt2 train` against nanoGPT's own train.py on the same text.

Both train nanoGPT's CPU recipe (4 layers, 4 heads, width 128, context 64, batch 12, lr 1e-3,
AdamW's beta2 0.99 and weight decay 0.1 on the matrices only, no dropout, evaluation every 250
steps) in the structure nanoGPT's train.py builds by default (no biases, exact GELU: `gpt2 train
--bias false --gelu exact`) on the same bytes: the text of --data, concatenated as `gpt2 train`
reads it, split 90/10, tokenised as bytes for both (nanoGPT gets the bytes as its
token ids, so both learn the same distribution and report loss in nats per byte). nanoGPT's
train.py runs unchanged from a checkout you point to (it is not part of Ember):

    git clone https://github.com/karpathy/nanoGPT /tmp/nanoGPT
    python3 examples/gpt2/time_to_loss.py --nanogpt /tmp/nanoGPT --threads 2 --target 2.1

Each side's clock starts at its first training step (nanoGPT: its step-0 evaluation line; Ember:
the training loop, as `training.json` records it) and includes the evaluations before the one that
reaches the target. Run in the peer environment (torch installed)."""
import argparse
import json
import os
import pickle
import re
import subprocess
import sys
import tempfile
import time

RECIPE = {"layers": 4, "heads": 4, "embd": 128, "context": 64, "batch": 12, "lr": 1e-3}


def corpus(folder):
    """The bytes `gpt2 train --data folder` trains on (models/gpt2/text_data.cpp's from_fortunes)."""
    if not os.path.isdir(folder):
        sys.exit(f"time_to_loss: --data {folder!r} is not a folder of text files")
    names = sorted(n for n in os.listdir(folder) if os.path.isfile(os.path.join(folder, n))
                   and os.path.splitext(n)[1] not in (".dat", ".u8"))
    text = b"".join(open(os.path.join(folder, n), "rb").read() for n in names)
    if len(text) <= 4096:
        sys.exit(f"time_to_loss: {folder!r} holds only {len(text)} bytes of text")
    return text


def first_reaching(log, target):
    """(seconds, step, loss) of the first evaluation at or below target, or None."""
    for seconds, step, loss in log:
        if loss <= target:
            return seconds, step, loss
    return None


def run_nanogpt(nanogpt, text, a, work):
    data = os.path.join(work, "data", "ember_bytes")
    os.makedirs(data)
    import numpy as np  # here, so that the parts the tests use need no NumPy
    ids = np.frombuffer(text, dtype=np.uint8).astype(np.uint16)
    cut = int(len(ids) * 0.9)
    ids[:cut].tofile(os.path.join(data, "train.bin"))
    ids[cut:].tofile(os.path.join(data, "val.bin"))
    with open(os.path.join(data, "meta.pkl"), "wb") as f:
        pickle.dump({"vocab_size": 256}, f)
    os.symlink(os.path.join(nanogpt, "configurator.py"), os.path.join(work, "configurator.py"))
    r = RECIPE
    cmd = [sys.executable, os.path.join(nanogpt, "train.py"), "--dataset=ember_bytes", "--device=cpu", "--compile=False",
           "--dtype=float32", f"--eval_iters={a.eval_batches}", "--log_interval=50", f"--block_size={r['context']}",
           f"--batch_size={r['batch']}", f"--n_layer={r['layers']}", f"--n_head={r['heads']}", f"--n_embd={r['embd']}",
           f"--max_iters={a.steps}", f"--lr_decay_iters={a.steps}", "--dropout=0.0", f"--learning_rate={r['lr']}",
           f"--eval_interval={a.eval_every}", "--beta2=0.99", "--warmup_iters=100", "--min_lr=1e-4",
           "--always_save_checkpoint=False", f"--out_dir={os.path.join(work, 'out')}", "--gradient_accumulation_steps=1"]
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads))
    p = subprocess.Popen(cmd, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log, t_start = [], None
    for line in p.stdout:
        m = re.match(r"step (\d+): train loss [\d.]+, val loss ([\d.]+)", line)
        if m:
            now = time.perf_counter()
            t_start = now if t_start is None else t_start
            log.append((now - t_start, int(m.group(1)), float(m.group(2))))
            print(f"  nanoGPT step {m.group(1)}: val {m.group(2)} at {now - t_start:.1f} s", flush=True)
    if p.wait() != 0 or not log:
        sys.exit(f"time_to_loss: nanoGPT's train.py failed (exit {p.returncode}); command: {' '.join(cmd)}")
    return log


def ember_command(gpt2, folder, a, out):
    """`gpt2 train` with the recipe, structured as nanoGPT's train.py builds its model by default
    (bias=False, nn.GELU())."""
    r = RECIPE
    return [gpt2, "train", "--data", folder, "--out", out, "--steps", str(a.steps), "--batch", str(r["batch"]),
            "--context", str(r["context"]), "--layers", str(r["layers"]), "--heads", str(r["heads"]),
            "--embd", str(r["embd"]), "--lr", str(r["lr"]), "--beta2", "0.99", "--bias", "false", "--gelu", "exact",
            "--eval-every", str(a.eval_every), "--eval-batches", str(a.eval_batches), "--sample-tokens", "0",
            "--minutes", "1000"]


def run_ember(gpt2, folder, a, work):
    out = os.path.join(work, "ember-out")
    cmd = ember_command(gpt2, folder, a, out)
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads))
    if subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL).returncode != 0:
        sys.exit(f"time_to_loss: gpt2 train failed; command: {' '.join(cmd)}")
    with open(os.path.join(out, "training.json")) as f:
        doc = json.load(f)
    log = [(e["seconds"], e["step"], e["val_loss"]) for e in doc["log"]]
    for s, step, loss in log:
        print(f"  Ember   step {step}: val {loss:.4f} at {s:.1f} s", flush=True)
    return log


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nanogpt", required=True, help="a checkout of nanoGPT (its train.py, model.py, configurator.py)")
    p.add_argument("--data", default="/usr/share/games/fortunes", help="folder of text files (gpt2 train's default)")
    p.add_argument("--gpt2", default="build/bin/gpt2", help="the gpt2 program (default build/bin/gpt2)")
    p.add_argument("--target", type=float, default=2.1, help="validation loss to reach, nats per byte (default 2.1)")
    p.add_argument("--steps", type=int, default=2000, help="training steps at most (default 2000)")
    p.add_argument("--eval-every", type=int, default=250, help="steps between evaluations (default 250)")
    p.add_argument("--eval-batches", type=int, default=20, help="validation batches per evaluation (default 20)")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="threads for both (default: all cores)")
    p.add_argument("--json", help="write both logs and the result here")
    a = p.parse_args(argv)
    if not os.path.isfile(os.path.join(a.nanogpt, "train.py")):
        p.error(f"--nanogpt {a.nanogpt!r} has no train.py; clone https://github.com/karpathy/nanoGPT first")
    if not os.access(a.gpt2, os.X_OK):
        p.error(f"--gpt2 {a.gpt2!r} is not an executable; build it with ./run.sh build")
    text = corpus(a.data)
    with tempfile.TemporaryDirectory() as work:
        print(f"nanoGPT train.py, {a.threads} threads:")
        peer = run_nanogpt(os.path.abspath(a.nanogpt), text, a, work)
        print(f"Ember gpt2 train, {a.threads} threads:")
        ours = run_ember(os.path.abspath(a.gpt2), a.data, a, work)
    hit_peer, hit_ours = first_reaching(peer, a.target), first_reaching(ours, a.target)
    for name, hit in (("nanoGPT", hit_peer), ("Ember", hit_ours)):
        print(f"{name}: " + (f"val {hit[2]:.4f} <= {a.target} at step {hit[1]}, {hit[0]:.1f} s" if hit
                             else f"never reached {a.target} in {a.steps} steps"))
    if hit_peer and hit_ours:
        print(f"time to loss, Ember / nanoGPT: {hit_ours[0] / hit_peer[0]:.2f} (below 1: Ember sooner)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"threads": a.threads, "target": a.target, "nanogpt": peer, "ember": ours}, f, indent=1)


if __name__ == "__main__":
    main()
