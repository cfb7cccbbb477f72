#!/usr/bin/env python3
"""gpt2 train in float32 and under bf16 autocast: validation losses at the same steps, and ms/step.

Both runs are `gpt2 train` on nanoGPT's CPU recipe (4 layers, 4 heads, width 128, context 64,
batch 12, lr 1e-3) with the same seed, data and steps, so they draw the same batches; only
--precision differs. The table gives each evaluation's validation loss for both and their
relative difference (the issue's goal: within 2%). Training speed comes from `gpt2 train-step`
(random tokens, the same step: forward and loss, backward, clipping, AdamW, zero_grad), run for
both precisions in alternating rounds so that a busy machine slows both alike; the medians of each
stage say where bf16's extra time goes.

    python3 examples/gpt2/precision_compare.py --steps 1000 --threads 2
    python3 examples/gpt2/precision_compare.py --steps 50 --eval-every 25 --rounds 1   # a quick check"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from in_turns import cpu_name  # noqa: E402

RECIPE = {"layers": 4, "heads": 4, "embd": 128, "context": 64, "batch": 12, "lr": 1e-3}
PRECISIONS = ("fp32", "bf16")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gpt2", default="build/bin/gpt2", help="the gpt2 program (default build/bin/gpt2)")
    p.add_argument("--data", default="/usr/share/games/fortunes", help="folder of text files (gpt2 train's default)")
    p.add_argument("--steps", type=int, default=1000, help="training steps per precision (default 1000)")
    p.add_argument("--eval-every", type=int, default=250, help="steps between evaluations (default 250)")
    p.add_argument("--eval-batches", type=int, default=20, help="validation batches per evaluation (default 20)")
    p.add_argument("--seed", type=int, default=0, help="seed of both runs (default 0)")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="OMP_NUM_THREADS (default: all cores)")
    p.add_argument("--rounds", type=int, default=3, help="alternating train-step rounds per precision (default 3; 0 skips)")
    p.add_argument("--step-steps", type=int, default=30, help="timed steps per train-step round (default 30)")
    p.add_argument("--json", help="write the logs and timings here")
    a = p.parse_args(argv)
    if a.steps < 1 or a.eval_every < 1 or a.eval_batches < 1 or a.threads < 1 or a.rounds < 0 or a.step_steps < 1:
        p.error("--steps, --eval-every, --eval-batches, --threads and --step-steps must be at least 1, --rounds at least 0")
    return a


def recipe_flags():
    r = RECIPE
    return ["--batch", str(r["batch"]), "--context", str(r["context"]), "--layers", str(r["layers"]),
            "--heads", str(r["heads"]), "--embd", str(r["embd"]), "--lr", str(r["lr"])]


def run(cmd, threads):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f"precision_compare: failed (exit {r.returncode}): {' '.join(cmd)}\n{r.stderr[-2000:]}")
    return r.stdout


def train(a, precision, work):
    out = os.path.join(work, precision)
    cmd = [a.gpt2, "train", "--data", a.data, "--out", out, "--steps", str(a.steps), "--eval-every", str(a.eval_every),
           "--eval-batches", str(a.eval_batches), "--seed", str(a.seed), "--sample-tokens", "0", "--minutes", "100000",
           "--precision", precision] + recipe_flags()
    print("  " + " ".join(cmd), flush=True)
    run(cmd, a.threads)
    with open(os.path.join(out, "training.json")) as f:
        doc = json.load(f)
    return {"val": {e["step"]: e["val_loss"] for e in doc["log"]}, "seconds": doc["seconds"],
            "final_val": doc["val_loss"], "steps": doc["steps"]}


def parse_step_line(text):
    for line in text.splitlines():
        if line.startswith("step_ms"):
            f = line.split()
            return {f[i]: float(f[i + 1]) for i in range(0, len(f) - 1, 2)}
    sys.exit("precision_compare: gpt2 train-step printed no step_ms line")


def time_steps(a):
    """Alternating rounds of gpt2 train-step, fp32 then bf16, then the other order: per-stage medians."""
    rounds = {p: [] for p in PRECISIONS}
    for i in range(a.rounds):
        for prec in (PRECISIONS if i % 2 == 0 else PRECISIONS[::-1]):
            cmd = [a.gpt2, "train-step", "--steps", str(a.step_steps), "--warmup", "3", "--seed", str(a.seed),
                   "--precision", prec] + recipe_flags()
            rounds[prec].append(parse_step_line(run(cmd, a.threads)))
    return {p: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for p, rs in rounds.items() if rs}


def table(logs, timing):
    lines = ["| step | fp32 val loss | bf16 val loss | bf16 - fp32 | relative |", "|---:|---:|---:|---:|---:|"]
    worst = 0.0
    for step in sorted(logs["fp32"]["val"]):
        if step not in logs["bf16"]["val"]:
            continue
        f, b = logs["fp32"]["val"][step], logs["bf16"]["val"][step]
        rel = (b - f) / f
        if step > 0:
            worst = max(worst, abs(rel))
        lines.append(f"| {step} | {f:.4f} | {b:.4f} | {b - f:+.4f} | {100 * rel:+.2f}% |")
    f, b = logs["fp32"]["final_val"], logs["bf16"]["final_val"]
    lines.append(f"| final ({logs['fp32']['steps']}, 4x batches) | {f:.4f} | {b:.4f} | {b - f:+.4f} | "
                 f"{100 * (b - f) / f:+.2f}% |")
    lines.append(f"\nlargest |relative difference| after step 0: {100 * worst:.2f}% (goal: within 2%)")
    lines.append("\nwall time of each training run (evaluations included): " + ", ".join(
        f"{p} {logs[p]['seconds']:.1f} s ({1e3 * logs[p]['seconds'] / max(logs[p]['steps'], 1):.1f} ms/step)"
        for p in PRECISIONS))
    if timing:
        keys = list(timing["fp32"])
        lines.append("\ngpt2 train-step medians (ms), alternating rounds:\n")
        lines.append("| precision | " + " | ".join(k.replace("_ms", "") for k in keys) + " |")
        lines.append("|---|" + "---:|" * len(keys))
        for p in PRECISIONS:
            lines.append(f"| {p} | " + " | ".join(f"{timing[p][k]:.2f}" for k in keys) + " |")
        lines.append("| bf16 / fp32 | " + " | ".join(
            f"{timing['bf16'][k] / timing['fp32'][k]:.2f}x" if timing["fp32"][k] > 0 else "-" for k in keys) + " |")
    return "\n".join(lines)


def main(argv=None):
    a = parse_args(argv)
    if not os.path.exists(a.gpt2):
        sys.exit(f"precision_compare: no gpt2 program at {a.gpt2} (build it, or pass --gpt2)")
    print(f"CPU: {cpu_name()}; threads {a.threads}; recipe {RECIPE}; {a.steps} steps, seed {a.seed}", flush=True)
    with tempfile.TemporaryDirectory() as work:
        logs = {p: train(a, p, work) for p in PRECISIONS}
    timing = time_steps(a) if a.rounds else None
    print(table(logs, timing))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"cpu": cpu_name(), "threads": a.threads, "recipe": RECIPE, "steps": a.steps,
                       "logs": {p: {**logs[p], "val": {str(k): v for k, v in logs[p]["val"].items()}} for p in logs},
                       "train_step_ms": timing}, f, indent=1)


if __name__ == "__main__":
    main()
