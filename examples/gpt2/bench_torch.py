#!/usr/bin/python3
"""The PyTorch peer of `gpt2 bench`, laid out as nanoGPT's model.py is (GPTConfig, CausalSelfAttention,
MLP, Block, GPT, and a `generate` that crops to the block size and runs the whole sequence through
the model at every step), plus a second generation path through the same modules with a key/value
cache. Random weights at GPT-2 124M shapes by default, greedy decoding. Prints the same table and
writes the same JSON keys as `gpt2 bench --json`, including the latency of every step against its
position, so that bench_vs_torch.sh and plot_bench.py read both runs alike."""
import argparse
import json
import math
import os
import sys
import time
from dataclasses import dataclass

import torch
import torch.nn as nn
from torch.nn import functional as F

PRESETS = {"gpt2": (12, 12, 768), "gpt2-medium": (24, 16, 1024), "gpt2-large": (36, 20, 1280), "gpt2-xl": (48, 25, 1600)}


@dataclass
class GPTConfig:
    block_size: int = 1024
    vocab_size: int = 50257  # GPT-2's own (nanoGPT pads to 50304 for GPU tiles; Ember uses 50257)
    n_layer: int = 12
    n_head: int = 12
    n_embd: int = 768


class KVCache:
    """Per layer, keys and values of shape (B, n_head, capacity, head_dim), allocated once: a step
    writes its one position in place and attends over a view of the filled prefix (Ember's design,
    models/gpt2/kv_cache.h), instead of concatenating a grown copy every step."""

    def __init__(self, config, batch, capacity, dtype=torch.float32):
        hd = config.n_embd // config.n_head
        self.k = [torch.empty(batch, config.n_head, capacity, hd, dtype=dtype) for _ in range(config.n_layer)]
        self.v = [torch.empty(batch, config.n_head, capacity, hd, dtype=dtype) for _ in range(config.n_layer)]
        self.length = 0

    def append(self, layer, k, v):
        end = self.length + k.size(2)
        assert end <= self.k[layer].size(2), f"KVCache: {end} positions exceed the capacity {self.k[layer].size(2)}"
        self.k[layer][:, :, self.length:end] = k
        self.v[layer][:, :, self.length:end] = v
        return self.k[layer][:, :, :end], self.v[layer][:, :, :end]


class CausalSelfAttention(nn.Module):
    def __init__(self, config, layer):
        super().__init__()
        self.layer, self.n_head, self.n_embd = layer, config.n_head, config.n_embd
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd)  # Q, K and V of every head in one GEMM
        self.c_proj = nn.Linear(config.n_embd, config.n_embd)
        self.flash = hasattr(F, "scaled_dot_product_attention")
        # The manual path's lower-triangular mask, block_size^2 entries kept as a buffer.
        self.register_buffer("bias", torch.tril(torch.ones(config.block_size, config.block_size))[None, None])

    def forward(self, x, cache=None):
        B, T, C = x.size()
        hd = C // self.n_head
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        q, k, v = (t.view(B, T, self.n_head, hd).transpose(1, 2) for t in (q, k, v))  # views: (B, nh, T, hd)
        past = 0
        if cache is not None:
            past = cache.length
            k, v = cache.append(self.layer, k, v)
        if self.flash:
            # SDPA's is_causal aligns its mask top-left (query i sees keys 0..i). That is right for a
            # whole sequence or a prefill into an empty cache, wrong for a cached step, whose single
            # query must see every key: there the mask is switched off instead.
            assert past == 0 or T == 1, "this peer steps the cache one token at a time"
            y = F.scaled_dot_product_attention(q, k, v, is_causal=T > 1)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
            # Rows past..past+T of the mask: the queries' own positions, so cached steps work too.
            att = att.masked_fill(self.bias[:, :, past:past + T, :past + T] == 0, float("-inf"))
            y = F.softmax(att, dim=-1) @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # heads side by side again
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd)
        # GPT-2's tanh form, as Ember's; nanoGPT's nn.GELU() is the erf form (same cost, ~1e-3 apart).
        self.gelu = nn.GELU(approximate="tanh")
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd)

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, config, layer):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.n_embd)
        self.attn = CausalSelfAttention(config, layer)
        self.ln_2 = nn.LayerNorm(config.n_embd)
        self.mlp = MLP(config)

    def forward(self, x, cache=None):
        x = x + self.attn(self.ln_1(x), cache)
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd),
            wpe=nn.Embedding(config.block_size, config.n_embd),
            h=nn.ModuleList([Block(config, i) for i in range(config.n_layer)]),
            ln_f=nn.LayerNorm(config.n_embd)))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # tied, as in GPT-2
        for name, p in self.named_parameters():
            if p.dim() == 2:  # N(0, 0.02), residual projections scaled by 1/sqrt(2 n_layer)
                std = 0.02 / math.sqrt(2 * config.n_layer) if name.endswith("c_proj.weight") else 0.02
                nn.init.normal_(p, 0.0, std)
            elif name.endswith(".bias") and "ln_" not in name:
                nn.init.zeros_(p)

    def forward(self, idx, cache=None):
        b, t = idx.size()
        start = 0 if cache is None else cache.length
        assert start + t <= self.config.block_size, f"{start + t} positions exceed the block size {self.config.block_size}"
        pos = torch.arange(start, start + t, dtype=torch.long)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            x = block(x, cache)
        if cache is not None:
            cache.length += t
        x = self.transformer.ln_f(x)
        return self.lm_head(x[:, [-1], :])  # generation needs the last position's logits only

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None, use_cache=False, on_step=None):
        """nanoGPT's loop when use_cache is False: every step crops the sequence to the last
        block_size tokens and runs all of them through the model. With use_cache the prompt is
        prefilled once and each later step feeds only the token just chosen. temperature 0 is greedy
        (nanoGPT always samples; the benchmark decodes greedily, as `gpt2 bench` does)."""
        bs = self.config.block_size
        cache = None
        if use_cache:
            # Absolute positions (wpe) cannot slide, so a cached run stops at the block size.
            assert idx.size(1) + max_new_tokens <= bs, "a cached run must fit the block size"
            cache = KVCache(self.config, idx.size(0), idx.size(1) + max_new_tokens, self.transformer.wte.weight.dtype)
        feed = idx
        for _ in range(max_new_tokens):
            if cache is None:
                feed = idx if idx.size(1) <= bs else idx[:, -bs:]
            logits = self(feed, cache)[:, -1, :]
            if temperature == 0:
                idx_next = logits.argmax(-1, keepdim=True)
            else:
                logits = logits / temperature
                if top_k is not None:
                    v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                    logits[logits < v[:, [-1]]] = -float("inf")
                idx_next = torch.multinomial(F.softmax(logits, dim=-1), num_samples=1)
            idx = torch.cat((idx, idx_next), dim=1)
            feed = idx_next
            if on_step:
                on_step()
        return idx


def progress(label, done, total, t0):
    """A one-line progress report on stderr, redrawn in place on a terminal, final line only otherwise."""
    tty = sys.stderr.isatty()
    clear = "\r\033[K" if tty else ""
    if done < total and not tty:
        return
    el = time.perf_counter() - t0
    filled = round(24 * done / total)
    when = f"took {el:.1f}s" if done == total else f"ETA {el * (total - done) / done:.1f}s"
    print(f"{clear}{label} [{'#' * filled}{'.' * (24 - filled)}] {done}/{total} | "
          f"{done / el:.2f} tokens/s | {when}", end="\n" if done == total else "", file=sys.stderr, flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--config", default="gpt2")
    ap.add_argument("--prompt-len", type=int, default=16)
    ap.add_argument("--lengths", default="16,32,64,128,256,512", help="generated lengths reported with the cache")
    ap.add_argument("--no-cache-lengths", default="16,32,64,128,256,512", help="... without the cache (nanoGPT's loop)")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2, help="torch intra-op threads (keep <= cores)")
    ap.add_argument("--manual-attention", action="store_true", help="nanoGPT's masked-softmax path instead of SDPA")
    ap.add_argument("--weights", choices=["f32", "bf16", "int8"], default="f32",
                    help="bf16: the model cast with .to(torch.bfloat16); int8: torch.ao.quantization.quantize_dynamic "
                         "on every nn.Linear (int8 weights with per-tensor scales, activations quantised per call)")
    ap.add_argument("--json")
    a, _ = ap.parse_known_args()  # bench_vs_torch.sh passes gpt2 bench's flags through
    threads = a.threads if a.threads > 0 else os.cpu_count()
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    n_layer, n_head, n_embd = PRESETS[a.config]
    m = GPT(GPTConfig(n_layer=n_layer, n_head=n_head, n_embd=n_embd)).eval()
    m = with_weights(m, a.weights)
    for blk in m.transformer.h:
        blk.attn.flash = blk.attn.flash and not a.manual_attention
    prompt = torch.randint(0, m.config.vocab_size, (1, a.prompt_len), generator=torch.Generator().manual_seed(3))

    def sweep(cache, lengths):
        """Runs generate to the longest length `repeats` times; returns, per repeat, each step's seconds."""
        n = max(lengths)
        runs = []
        for r in range(a.repeats):
            steps, t0 = [], [time.perf_counter()]
            start = t0[0]

            def on_step():
                t = time.perf_counter()
                steps.append(t - t0[0])
                t0[0] = t
                progress(f"torch {'cache' if cache else 'no cache'} {r + 1}/{a.repeats}", len(steps), n, start)

            m.generate(prompt, n, temperature=0, use_cache=cache, on_step=on_step)
            runs.append(steps)
        return runs

    def med(xs):
        xs = sorted(xs)
        k = len(xs)
        return xs[k // 2] if k % 2 else 0.5 * (xs[k // 2 - 1] + xs[k // 2])

    rows, per_step = [], []
    with torch.no_grad():
        m.generate(prompt, 2, temperature=0, use_cache=True)  # warm-up
        dtype = m.transformer.wte.weight.dtype
        prefill = med([timed(lambda: m(prompt, KVCache(m.config, 1, a.prompt_len, dtype))) for _ in range(a.repeats)])
        attn = "manual masked softmax" if a.manual_attention else "SDPA"
        print(f"torch {torch.__version__} eager ({attn}), {a.weights} weights, {threads} threads: prefill of "
              f"{a.prompt_len} tokens: {prefill:.3f} s")
        print(f"{'generated':>10}{'cache':>8}{'seconds':>12}{'tokens/s':>12}{'decode tokens/s':>16}")
        for cache, lengths in ((True, a.lengths), (False, a.no_cache_lengths)):
            lengths = [int(x) for x in lengths.split(",") if x.strip()]
            if not lengths:
                continue
            runs = sweep(cache, lengths)
            for n in lengths:
                t = med([sum(r[:n]) for r in runs])
                row = dict(generated=n, cache=cache, seconds=t, tokens_per_s=n / t)
                if n >= 2:  # the steps after the first, which includes the prompt's pass (as gpt2 bench)
                    row["decode_tokens_per_s"] = (n - 1) / med([sum(r[1:n]) for r in runs])
                print(f"{n:>10}{'yes' if cache else 'no':>8}{t:>12.3f}{n / t:>12.2f}"
                      f"{row.get('decode_tokens_per_s', float('nan')):>16.2f}")
                rows.append(row)
            per_step.append(dict(cache=cache, positions=[a.prompt_len + i for i in range(len(runs[0]))],
                                 seconds=[med(s) for s in zip(*runs)]))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(dict(torch=torch.__version__, attention=attn, structure="nanoGPT model.py", weights=a.weights,
                           threads=threads,
                           prompt_len=a.prompt_len, prefill_s=prefill, rows=rows, per_step=per_step), f, indent=2)


def with_weights(m, weights):
    """The model as a PyTorch user would shrink its weights: one cast, or dynamic int8 quantisation."""
    if weights == "bf16":
        return m.to(torch.bfloat16)
    if weights == "int8":
        return torch.ao.quantization.quantize_dynamic(m, {nn.Linear}, dtype=torch.qint8)
    return m


def timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
