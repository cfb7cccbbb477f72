#!/usr/bin/python3
"""GPT-2 124M inference by weight format: Ember's f32, bf16 and int8 weights (`gpt2 bench
--weights`), and optionally llama.cpp's `llama-bench` on GGUF F32/F16/Q8_0 files of the same model
and PyTorch (bench_torch.py: float32, bfloat16, quantize_dynamic int8),
timed in turns: each round runs every (threads, format) point once, the order of the formats
rotated from round to round, so that a slow phase of a shared machine falls on all of them.
Reported: decode tokens/s with the KV cache (the steps after the prompt) and prefill tokens/s of a
128-token prompt, the median over the rounds (each round itself the median of --repeats runs after
`gpt2 bench`'s warm-up). Raw output of every run goes into OUT/raw.json, the table into
OUT/table.md; the CPU is named in both.

    examples/gpt2/bench_weights.py OUT --rounds 3 --threads 1 2
    examples/gpt2/bench_weights.py OUT --model DIR --llama-bench PATH --gguf DIR   # with llama.cpp
    examples/gpt2/bench_weights.py OUT --torch ~/.cache/ember/peer-venv/bin/python  # with PyTorch

--model DIR reads a Hugging Face folder (default: random weights at GPT-2 124M's shapes, which
time the same). --gguf DIR holds model-f32.gguf, model-f16.gguf and model-q8_0.gguf: `./run.sh
bench-deps` builds llama-bench into ~/.cache/ember/llama.cpp/bin and writes them, from the random
GPT-2 124M folder gpt2-random beside them, into ~/.cache/ember/llama.cpp/gguf (scripts/make_gguf.py)."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))
from in_turns import cpu_name  # noqa: E402
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
GGUF = {"F32": "model-f32.gguf", "F16": "model-f16.gguf", "Q8_0": "model-q8_0.gguf"}


def run_json_bench(args, cmd, out, env):
    """Runs a program that writes `gpt2 bench --json`'s keys to `out`; its decode and prefill rates."""
    log = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    with open(out) as f:
        j = json.load(f)
    row = next(r for r in j["rows"] if r["cache"] and r["generated"] == args.decode + 1)
    return {"decode": row["decode_tokens_per_s"], "prefill": args.prompt_len / j["prefill_s"], "json": j, "log": log,
            "command": " ".join(cmd)}


def run_ember(args, weights, threads):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "bench.json")
        # "int8-dots" / "int8-widen": int8 weights with that decode kernel; "int8": gpt2 bench's default
        cmd = [args.gpt2, "bench", "--weights", weights.split("-")[0], "--threads", str(threads), "--prompt-len",
               str(args.prompt_len), "--lengths", str(args.decode + 1), "--no-cache-lengths", "2", "--repeats",
               str(args.repeats), "--json", out]
        if "-" in weights:
            cmd += ["--int8-decode", weights.split("-")[1]]
        if args.model:
            cmd += ["--model", args.model]
        return run_json_bench(args, cmd, out, dict(os.environ, OMP_WAIT_POLICY="passive"))


def run_torch(args, fmt, threads):
    """bench_torch.py (nanoGPT's model in PyTorch) with that format's weights, under --torch's interpreter."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "bench.json")
        cmd = [args.torch, os.path.join(HERE, "bench_torch.py"), "--weights", fmt, "--threads", str(threads),
               "--prompt-len", str(args.prompt_len), "--lengths", str(args.decode + 1), "--no-cache-lengths", "",
               "--repeats", str(args.repeats), "--json", out]
        return run_json_bench(args, cmd, out, dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_WAIT_POLICY="passive"))


def run_llama(args, fmt, threads):
    model = os.path.join(args.gguf, GGUF[fmt])
    cmd = [args.llama_bench, "-m", model, "-p", str(args.prompt_len), "-n", str(args.decode), "-t", str(threads),
           "-r", str(args.repeats), "-o", "json"]
    j = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    got = {}
    for test in j:  # one entry for the prompt test (n_gen 0), one for the generation test
        key = "prefill" if test.get("n_prompt", 0) > 0 and test.get("n_gen", 0) == 0 else "decode"
        got[key] = test["avg_ts"]
    got.update({"json": j, "command": " ".join(cmd)})
    return got


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="output folder (raw.json, table.md)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--formats", nargs="+", default=["f32", "bf16", "int8"],
                    choices=["f32", "bf16", "int8", "int8-widen", "int8-dots"],
                    help="int8-widen / int8-dots: int8 weights with that decode kernel (gpt2 bench --int8-decode)")
    ap.add_argument("--prompt-len", type=int, default=128)
    ap.add_argument("--decode", type=int, default=32, help="decode steps timed after the prompt")
    ap.add_argument("--repeats", type=int, default=3, help="runs per point and round (gpt2 bench --repeats)")
    ap.add_argument("--model", help="Hugging Face GPT-2 folder (default: random weights, GPT-2 124M shapes)")
    ap.add_argument("--gpt2", default=os.path.join(ROOT, "build", "bin", "gpt2"), help="the gpt2 program")
    ap.add_argument("--llama-bench", help="llama.cpp's llama-bench, to time it in the same rounds")
    ap.add_argument("--gguf", help="folder with model-f32.gguf, model-f16.gguf, model-q8_0.gguf")
    ap.add_argument("--torch", metavar="PYTHON",
                    help="a Python with torch (the peer venv): times bench_torch.py's nanoGPT model in the same rounds "
                         "with f32, bf16 (.to(bfloat16)) and int8 (quantize_dynamic) weights")
    args = ap.parse_args()
    if args.rounds < 1 or args.repeats < 1 or args.decode < 1 or args.prompt_len < 1:
        ap.error("--rounds, --repeats, --decode and --prompt-len must be positive")
    if bool(args.llama_bench) != bool(args.gguf):
        ap.error("--llama-bench and --gguf go together")
    if not os.access(args.gpt2, os.X_OK):
        ap.error(f"{args.gpt2} is not an executable; build the gpt2 target or pass --gpt2")
    os.makedirs(args.out, exist_ok=True)
    sides = [("ember", f) for f in args.formats]
    if args.llama_bench:
        sides += [("llama.cpp", f) for f in GGUF]
    if args.torch:
        sides += [("torch", f) for f in ("f32", "bf16", "int8")]
    raw, results = [], {}
    for r in range(args.rounds):
        for t in args.threads:
            order = sides[r % len(sides):] + sides[:r % len(sides)]
            for side, fmt in order:
                print(f"round {r + 1}/{args.rounds}, {t} thread(s): {side} {fmt}", file=sys.stderr, flush=True)
                run = {"ember": run_ember, "llama.cpp": run_llama, "torch": run_torch}[side]
                got = run(args, fmt, t)
                raw.append({"round": r + 1, "threads": t, "side": side, "format": fmt, **got})
                results.setdefault((side, fmt, t), []).append((got["decode"], got["prefill"]))
    cpu = cpu_name()
    lines = [f"CPU: {cpu}; {args.rounds} rounds in turns, medians; decode = tokens/s with the KV cache after a "
             f"{args.prompt_len}-token prompt ({args.decode} steps), prefill = {args.prompt_len}-token prompt tokens/s", "",
             "| side | weights | threads | decode tok/s | prefill tok/s | decode vs Ember f32 |", "|---|---|---|---|---|---|"]
    for (side, fmt, t), v in results.items():
        dec = statistics.median(x[0] for x in v)
        pre = statistics.median(x[1] for x in v)
        base = results.get(("ember", "f32", t))
        rel = f"{dec / statistics.median(x[0] for x in base):.2f}x" if base else "-"
        lines.append(f"| {side} | {fmt} | {t} | {dec:.1f} ({min(x[0] for x in v):.1f}-{max(x[0] for x in v):.1f}) | "
                     f"{pre:.0f} | {rel} |")
    table = "\n".join(lines) + "\n"
    with open(os.path.join(args.out, "raw.json"), "w") as f:
        json.dump({"cpu": cpu, "args": vars(args), "runs": raw}, f, indent=1)
    with open(os.path.join(args.out, "table.md"), "w") as f:
        f.write(table)
    print(table)


if __name__ == "__main__":
    main()
