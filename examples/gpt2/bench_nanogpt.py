"""The training step of nanogpt.py (Ember from Python) against the C++ GPT-2 training step at the
same shapes, and against nanogpt.py itself under PyTorch (its import lines swapped), in turns.

    python examples/gpt2/bench_nanogpt.py [--repeats 30] [--warmup-s 2] [--json out.json]

Each step is forward, cross-entropy, backward, clip_grad_norm_(1.0), AdamW step, zero_grad, on a
(batch, block) batch of random byte tokens. The C++ contestant is models/gpt2's GPT2 (the model
`gpt2 train` trains) called from here: forward, loss and backward run in C++, the few calls
between them cost microseconds. Every repeat times one step of each contestant, the order rotated,
and the report gives each one's median after the warm-up and the median of the per-repeat ratios.
PyTorch is timed where `import torch` works (the peer venv: ./run.sh bench-deps, ./run.sh peer-ember).
"""
import argparse
import json
import os
import platform
import statistics
import sys
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))

EMBER_IMPORTS = ("import ember as torch\nimport ember.nn as nn\nfrom ember.nn import functional as F\n")
TORCH_IMPORTS = ("import torch\nimport torch.nn as nn\nfrom torch.nn import functional as F\n")


def load_nanogpt(backend):
    """nanogpt.py as a module; backend "torch" runs the same source with torch's imports."""
    with open(os.path.join(HERE, "nanogpt.py")) as f:
        src = f.read()
    if EMBER_IMPORTS not in src:
        raise SystemExit("bench_nanogpt: nanogpt.py's import lines changed; update EMBER_IMPORTS")
    if backend == "torch":
        src = src.replace(EMBER_IMPORTS, TORCH_IMPORTS)
    mod = types.ModuleType(f"nanogpt_{backend}")
    mod.__file__ = os.path.join(HERE, "nanogpt.py")
    sys.modules[mod.__name__] = mod  # dataclasses look their module up by name
    exec(compile(src, mod.__file__, "exec"), mod.__dict__)
    return mod


def nanogpt_step(backend, args):
    mod = load_nanogpt(backend)
    torch = mod.torch
    torch.manual_seed(0)
    if backend == "torch":
        torch.set_num_threads(args.threads)
    cfg = mod.GPTConfig(block_size=args.block, n_layer=args.layers, n_head=args.heads, n_embd=args.embd)
    model = mod.GPT(cfg)
    opt = model.configure_optimizers(0.1, 3e-3, (0.9, 0.95))
    x = torch.randint(0, 256, (args.batch, args.block))
    y = torch.randint(0, 256, (args.batch, args.block))

    def step():
        _, loss = model(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss.item()
    return step


def cpp_step(args):
    import ember
    cfg = ember.models.GPT2Config(n_layer=args.layers, n_head=args.heads, n_embd=args.embd, vocab_size=256,
                                  n_positions=args.block)
    model = ember._ember._GPT2(cfg, 0)
    model.train(True)
    params = model.parameters()
    opt = ember._ember.AdamW(params, lr=3e-3, betas=(0.9, 0.95), weight_decay=0.1)
    ember.manual_seed(0)
    x = ember.randint(0, 256, (args.batch, args.block))
    y = ember.randint(0, 256, (args.batch, args.block))

    def step():
        logits = model.forward(x)
        loss = ember._ember.cross_entropy(logits.reshape(-1, 256), y.reshape(-1))
        loss.backward()
        ember._ember.clip_grad_norm(params, 1.0)
        opt.step()
        opt.zero_grad()
        return loss.item()
    return step


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeats", type=int, default=30, help="timed steps of each contestant")
    p.add_argument("--warmup-s", type=float, default=2.0, help="untimed seconds of steps per contestant first")
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--block", type=int, default=128)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--embd", type=int, default=128)
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                   help="threads of both libraries (OMP_NUM_THREADS, set before either is imported)")
    p.add_argument("--no-torch", action="store_true", help="skip PyTorch even where it is installed")
    p.add_argument("--json", default="", help="write the timings here too")
    args = p.parse_args(argv)
    sys.path.insert(0, os.path.join(HERE, "..", "common"))
    from in_turns import cpu_name, set_threads
    set_threads(args.threads)  # no effect where ember or torch was imported before (the tests)

    contestants = {"ember nanogpt.py": nanogpt_step("ember", args), "ember C++ GPT2": cpp_step(args)}
    if not args.no_torch:
        try:
            import torch  # noqa: F401
            contestants["torch nanogpt.py"] = nanogpt_step("torch", args)
        except ImportError:
            print("bench_nanogpt: torch is not importable here; timing Ember only", file=sys.stderr)
    names = list(contestants)
    for n in names:  # warm-up: the caching allocator, the packed weights, the threads
        t0 = time.perf_counter()
        contestants[n]()
        while time.perf_counter() - t0 < args.warmup_s:
            contestants[n]()
    times = {n: [] for n in names}
    for r in range(args.repeats):
        order = names[r % len(names):] + names[:r % len(names)]
        for n in order:
            t0 = time.perf_counter()
            contestants[n]()
            times[n].append(time.perf_counter() - t0)
    base = times["ember C++ GPT2"]
    report = {"shapes": vars(args), "python": platform.python_version(), "machine": cpu_name(),
              "median_ms": {n: statistics.median(times[n]) * 1e3 for n in names},
              "ratio_to_cpp": {n: statistics.median([a / b for a, b in zip(times[n], base)]) for n in names}}
    print(f"CPU: {report['machine']}; {args.threads} thread(s)")
    print(f"batch {args.batch} x block {args.block}, {args.layers} layers, {args.heads} heads, embd {args.embd}; "
          f"{args.repeats} steps each in turns after {args.warmup_s:g} s of warm-up")
    for n in names:
        print(f"  {n:18s} {report['median_ms'][n]:9.2f} ms/step   {report['ratio_to_cpp'][n]:5.2f}x the C++ step")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({**report, "times_s": times}, f, indent=1)
    return report


if __name__ == "__main__":
    main()
