#!/usr/bin/env python3
"""Full GPT training steps, Ember against PyTorch, timed in turns in one process.

A step is what `gpt2 train` and nanoGPT's train.py do per iteration on a CPU: forward, loss, backward,
gradient clipping to norm 1, an AdamW step and zero_grad. Ember's side is the C++ GPT-2 (models/gpt2)
with the C++ AdamW, driven from Python (one call per stage, so Python adds microseconds to steps of
tens of milliseconds). PyTorch's side is laid out as nanoGPT's model.py is: pre-norm blocks, one
c_attn GEMM for Q/K/V, scaled_dot_product_attention(is_causal=True), GELU MLP, tied lm_head,
init std 0.02 with the residual projections scaled by 1/sqrt(2 n_layer), AdamW with nanoGPT's
decay/no-decay groups, eager (and torch.compile as a second column with --compile).

Both sides train on the same random token batches at the same shapes and threads. Every repeat runs
one step of each, the order swapped between repeats; the ratio is the median of per-pair ratios.

    python3 examples/gpt2/train_in_turns.py --config nano --threads 2
    python3 examples/gpt2/train_in_turns.py --config all --threads 1 --compile --json out.json

Run it in the peer environment (`./run.sh peer-ember` installs ember beside torch there)."""
import argparse
import json
import math
import os
import platform
import statistics
import sys
import time

# (layers, heads, width, context, batch, vocab): nanoGPT's CPU recipe (with Ember's byte vocabulary),
# a mid size, and GPT-2 124M at context 256.
CONFIGS = {
    "nano": (4, 4, 128, 64, 12, 257),
    "mid": (6, 6, 384, 256, 16, 257),
    "gpt2": (12, 12, 768, 256, 4, 50257),
}


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                epilog="Configurations (layers/heads/width, context, batch, vocab): " + "; ".join(
                                    f"{k}: {v[0]}/{v[1]}/{v[2]}, {v[3]}, {v[4]}, {v[5]}" for k, v in CONFIGS.items()))
    p.add_argument("--config", default="nano", help="nano, mid, gpt2 or all (default nano)")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="threads for both sides (default: all cores)")
    p.add_argument("--repeats", type=int, default=0, help="timed steps per side (default: 20 nano, 10 mid, 5 gpt2)")
    p.add_argument("--warmup", type=int, default=3, help="untimed steps per side first (default 3)")
    p.add_argument("--compile", action="store_true", help="also time torch.compile'd steps (a third column)")
    p.add_argument("--json", help="write the results to this file")
    a = p.parse_args(argv)
    names = list(CONFIGS) if a.config == "all" else [a.config]
    for n in names:
        if n not in CONFIGS:
            p.error(f"--config: unknown configuration {n!r}; expected one of {', '.join(CONFIGS)} or all")
    if a.threads < 1 or a.repeats < 0 or a.warmup < 0:
        p.error("--threads must be at least 1, --repeats and --warmup at least 0")
    a.names = names
    return a


def torch_gpt(torch, layers, heads, width, context, vocab):
    nn, F = torch.nn, torch.nn.functional

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(width, 3 * width)
            self.c_proj = nn.Linear(width, width)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.c_attn(x).split(width, dim=2)
            q, k, v = (t.view(B, T, heads, C // heads).transpose(1, 2) for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.attn, self.ln_2 = nn.LayerNorm(width), Attention(), nn.LayerNorm(width)
            self.c_fc, self.c_proj = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.c_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(vocab, width), nn.Embedding(context, width)
            self.h = nn.ModuleList(Block() for _ in range(layers))
            self.ln_f = nn.LayerNorm(width)
            self.lm_head = nn.Linear(width, vocab, bias=False)
            self.lm_head.weight = self.wte.weight  # tied, as GPT-2 and nanoGPT
            for name, p in self.named_parameters():
                if p.dim() == 2:
                    std = 0.02 / math.sqrt(2 * layers) if name.endswith("c_proj.weight") else 0.02
                    nn.init.normal_(p, 0.0, std)
                elif name.endswith(".bias"):
                    nn.init.zeros_(p)

        def forward(self, idx, targets):
            T = idx.shape[1]
            x = self.wte(idx) + self.wpe(torch.arange(T))
            for b in self.h:
                x = b(x)
            logits = self.lm_head(self.ln_f(x))
            return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))

    return GPT()


def torch_step_fn(torch, model, x, y, compiled):
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.99))
    fwd = torch.compile(model) if compiled else model
    losses = []

    def step():
        loss = fwd(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(loss.item())
    return step, losses


def ember_step_fn(E, cfg, x, y):
    model = E._GPT2(cfg, 1)
    params = model.parameters()
    opt = E.AdamW(params, lr=1e-3, betas=(0.9, 0.99), weight_decay=0.1)
    losses = []

    def step():
        loss = E._gpt2_lm_loss(model.forward(x), y)
        loss.backward()
        E.clip_grad_norm(params, 1.0)
        opt.step()
        opt.zero_grad()
        losses.append(loss.item())
    return step, losses


def time_in_turns(fns, warmup, repeats):
    for f in fns:
        for _ in range(warmup):
            f()
    times = [[] for _ in fns]
    for r in range(repeats):
        order = list(range(len(fns)))
        if r % 2:
            order.reverse()
        for i in order:
            t0 = time.perf_counter()
            fns[i]()
            times[i].append(time.perf_counter() - t0)
    return times


def main(argv=None):
    a = parse_args(argv)
    os.environ["OMP_NUM_THREADS"] = str(a.threads)  # before either library starts its thread pool
    import numpy as np
    import torch
    import ember
    E = ember._ember
    torch.set_num_threads(a.threads)
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:0] = [os.path.join(here, "..", "common"), os.path.join(here, "..", "..", "scripts")]
    from in_turns import cpu_name
    from peer_info import info
    print(f"CPU: {cpu_name()}; threads {a.threads}; torch {torch.__version__}; ember {getattr(ember, '__version__', '?')}")
    results = []
    for name in a.names:
        layers, heads, width, context, batch, vocab = CONFIGS[name]
        repeats = a.repeats or {"nano": 20, "mid": 10, "gpt2": 5}[name]
        rng = np.random.default_rng(0)
        ids = rng.integers(0, vocab, size=(batch, context + 1), dtype=np.int64)
        xs, ys = np.ascontiguousarray(ids[:, :-1]), np.ascontiguousarray(ids[:, 1:])
        cfg = E.GPT2Config(n_layer=layers, n_head=heads, n_embd=width, vocab_size=vocab, n_positions=context)
        ember_step, ember_losses = ember_step_fn(E, cfg, ember.tensor(xs), ember.tensor(ys))
        torch.manual_seed(1)
        tm = torch_gpt(torch, layers, heads, width, context, vocab)
        tx, ty = torch.from_numpy(xs), torch.from_numpy(ys)
        torch_step, torch_losses = torch_step_fn(torch, tm, tx, ty, False)
        fns, labels = [ember_step, torch_step], ["ember", "torch eager"]
        compile_note = None
        if a.compile:
            try:
                torch.manual_seed(1)
                tc = torch_gpt(torch, layers, heads, width, context, vocab)
                cstep, _ = torch_step_fn(torch, tc, tx, ty, True)
                t0 = time.perf_counter()
                cstep()  # compiles
                compile_note = f"compiled in {time.perf_counter() - t0:.1f} s"
                fns.append(cstep)
                labels.append("torch.compile")
            except Exception as e:  # inductor needs a working C++ toolchain; say why it could not run
                compile_note = f"torch.compile failed: {type(e).__name__}: {str(e).splitlines()[0][:160]}"
        times = time_in_turns(fns, a.warmup, repeats)
        row = {"config": name, "shape": f"{layers}/{heads}/{width}, context {context}, batch {batch}, vocab {vocab}",
               "threads": a.threads, "repeats": repeats}
        for lab, t in zip(labels, times):
            row[lab + " ms"] = statistics.median(t) * 1e3
        for lab, t in zip(labels[1:], times[1:]):
            row["ember vs " + lab] = statistics.median([p / e for e, p in zip(times[0], t)])
        row["first loss ember"], row["first loss torch"] = ember_losses[0], torch_losses[0]
        if compile_note:
            row["compile"] = compile_note
        results.append(row)
        cols = ", ".join(f"{lab} {row[lab + ' ms']:.1f} ms" for lab in labels)
        ratios = ", ".join(f"{row['ember vs ' + lab]:.2f}x of {lab}" for lab in labels[1:])
        print(f"{name:5s} ({row['shape']}): {cols}; Ember {ratios} (median of {repeats} pairs; above 1: Ember faster)"
              + (f"; {compile_note}" if compile_note else ""))
        print(f"      first-step loss: ember {ember_losses[0]:.4f}, torch {torch_losses[0]:.4f} (ln vocab = {math.log(vocab):.4f})")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"cpu": cpu_name(), "machine": platform.machine(), "peer": info(), "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
