#!/usr/bin/python3
"""The PyTorch eager peer of `gpt2 bench`: a GPT-2 of the same shapes written here with torch ops,
random weights, greedy decoding with and without a key/value cache. Prints the same table and
writes the same JSON keys, so bench_vs_torch.sh can compare the two runs."""
import argparse, json, math, time

import torch
import torch.nn.functional as F

PRESETS = {"gpt2": (12, 12, 768), "gpt2-medium": (24, 16, 1024), "gpt2-large": (36, 20, 1280), "gpt2-xl": (48, 25, 1600)}


class Gpt2:
    def __init__(self, n_layer, n_head, n_embd, vocab=50257, n_pos=1024, seed=0):
        g = torch.Generator().manual_seed(seed)
        r = lambda *s: torch.randn(*s, generator=g) * 0.02
        self.h, self.c = n_head, n_embd
        self.wte, self.wpe = r(vocab, n_embd), r(n_pos, n_embd)
        self.blocks = [dict(ln1=(torch.ones(n_embd), torch.zeros(n_embd)), attn=(r(n_embd, 3 * n_embd), torch.zeros(3 * n_embd)),
                            proj=(r(n_embd, n_embd), torch.zeros(n_embd)), ln2=(torch.ones(n_embd), torch.zeros(n_embd)),
                            fc=(r(n_embd, 4 * n_embd), torch.zeros(4 * n_embd)), out=(r(4 * n_embd, n_embd), torch.zeros(n_embd)))
                       for _ in range(n_layer)]
        self.lnf = (torch.ones(n_embd), torch.zeros(n_embd))

    def forward(self, ids, past=None):
        B, T = ids.shape
        start = 0 if past is None or past[0] is None else past[0][0].shape[2]
        x = self.wte[ids] + self.wpe[start:start + T]
        new_past = []
        for i, b in enumerate(self.blocks):
            h = F.layer_norm(x, (self.c,), *b["ln1"])
            q, k, v = (h @ b["attn"][0] + b["attn"][1]).split(self.c, dim=2)
            q, k, v = [t.view(B, T, self.h, self.c // self.h).transpose(1, 2) for t in (q, k, v)]
            if past is not None and past[i] is not None:
                k, v = torch.cat([past[i][0], k], 2), torch.cat([past[i][1], v], 2)
            new_past.append((k, v))
            s = (q @ k.transpose(-2, -1)) / math.sqrt(k.shape[-1])
            if T > 1:
                s = s.masked_fill(torch.ones(T, k.shape[2], dtype=torch.bool).triu(k.shape[2] - T + 1), float("-inf"))
            y = (F.softmax(s, -1) @ v).transpose(1, 2).reshape(B, T, self.c)
            x = x + y @ b["proj"][0] + b["proj"][1]
            h = F.layer_norm(x, (self.c,), *b["ln2"])
            x = x + F.gelu(h @ b["fc"][0] + b["fc"][1], approximate="tanh") @ b["out"][0] + b["out"][1]
        x = F.layer_norm(x, (self.c,), *self.lnf)
        return x @ self.wte.t(), new_past

    def generate(self, prompt, n, cache):
        seq = prompt.clone()
        past = [None] * len(self.blocks) if cache else None
        inp = seq
        for _ in range(n):
            logits, new_past = self.forward(inp, past)
            nxt = logits[:, -1].argmax(-1, keepdim=True)
            seq = torch.cat([seq, nxt], 1)
            if cache:
                past, inp = new_past, nxt
            else:
                inp = seq
        return seq


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--config", default="gpt2")
    ap.add_argument("--prompt-len", type=int, default=128)
    ap.add_argument("--lengths", default="64,128,256,512,896")
    ap.add_argument("--no-cache-lengths", default="16,32,64")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2, help="torch intra-op threads (keep <= cores)")
    ap.add_argument("--json")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    m = Gpt2(*PRESETS[a.config])
    prompt = torch.randint(0, 50257, (1, a.prompt_len), generator=torch.Generator().manual_seed(3))

    def median(fn):
        ts = []
        for _ in range(a.repeats):
            t0 = time.perf_counter(); fn(); ts.append(time.perf_counter() - t0)
        return sorted(ts)[len(ts) // 2]

    rows = []
    with torch.inference_mode():
        m.generate(prompt, 2, True)  # warm-up
        prefill = median(lambda: m.forward(prompt, [None] * len(m.blocks)))
        print(f"torch {torch.__version__} eager, {a.threads} threads: prefill of {a.prompt_len} tokens: {prefill:.3f} s")
        print(f"{'generated':>10}{'cache':>8}{'seconds':>12}{'tokens/s':>12}")
        for cache, lengths in ((True, a.lengths), (False, a.no_cache_lengths)):
            for n in map(int, lengths.split(",")):
                t = median(lambda: m.generate(prompt, n, cache))
                print(f"{n:>10}{'yes' if cache else 'no':>8}{t:>12.3f}{n / t:>12.2f}")
                rows.append(dict(generated=n, cache=cache, seconds=t, tokens_per_s=n / t))
    if a.json:
        json.dump(dict(torch=torch.__version__, threads=a.threads, prompt_len=a.prompt_len, prefill_s=prefill, rows=rows),
                  open(a.json, "w"), indent=2)


if __name__ == "__main__":
    main()
