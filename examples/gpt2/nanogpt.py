"""nanoGPT's model and training loop written as a PyTorch user writes them; only the import lines
differ (bench_nanogpt.py runs this very file under PyTorch by swapping them).

    python examples/gpt2/nanogpt.py input.txt [--steps 500] [--n-layer 4 --n-head 4 --n-embd 128]

Byte-level tokens (vocab 256), a GPT of Blocks in a ModuleList with a causal mask buffer (or
is_causal attention with --flash), the LM head tied to the token embedding, AdamW over a
decay/no-decay split of the parameters, a warm-up then cosine learning rate set through
param_groups, clip_grad_norm_, and generation with top-k + multinomial sampling.
"""
import argparse
import math
import os
import tempfile
import time
from dataclasses import dataclass

import numpy as np

import ember as torch
import ember.nn as nn
from ember.nn import functional as F


@dataclass
class GPTConfig:
    block_size: int = 128
    vocab_size: int = 256
    n_layer: int = 4
    n_head: int = 4
    n_embd: int = 128
    dropout: float = 0.0
    bias: bool = True
    flash: bool = True


class LayerNorm(nn.Module):
    """LayerNorm with an optional bias."""

    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, input):
        return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)


class CausalSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        assert config.n_embd % config.n_head == 0
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.attn_dropout = nn.Dropout(config.dropout)
        self.resid_dropout = nn.Dropout(config.dropout)
        self.n_head, self.n_embd, self.dropout = config.n_head, config.n_embd, config.dropout
        self.flash = config.flash
        if not self.flash:
            self.register_buffer("bias", torch.tril(torch.ones(config.block_size, config.block_size))
                                 .view(1, 1, config.block_size, config.block_size))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        if self.flash:
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=None,
                                               dropout_p=self.dropout if self.training else 0, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            att = self.attn_dropout(att)
            y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.ln_1 = LayerNorm(config.n_embd, bias=config.bias)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = LayerNorm(config.n_embd, bias=config.bias)
        self.mlp = MLP(config)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd),
            wpe=nn.Embedding(config.block_size, config.n_embd),
            drop=nn.Dropout(config.dropout),
            h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
            ln_f=LayerNorm(config.n_embd, bias=config.bias),
        ))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # weight tying
        self.apply(self._init_weights)
        for pn, p in self.named_parameters():
            if pn.endswith("c_proj.weight"):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

    def get_num_params(self, non_embedding=True):
        n_params = sum(p.numel() for p in self.parameters())
        if non_embedding:
            n_params -= self.transformer.wpe.weight.numel()
        return n_params

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        b, t = idx.size()
        assert t <= self.config.block_size, f"Cannot forward sequence of length {t}, block size is only {self.config.block_size}"
        pos = torch.arange(0, t, dtype=torch.long)
        tok_emb = self.transformer.wte(idx)
        pos_emb = self.transformer.wpe(pos)
        x = self.transformer.drop(tok_emb + pos_emb)
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        if targets is not None:
            logits = self.lm_head(x)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        else:
            logits = self.lm_head(x[:, [-1], :])
            loss = None
        return logits, loss

    def configure_optimizers(self, weight_decay, learning_rate, betas):
        param_dict = {pn: p for pn, p in self.named_parameters()}
        param_dict = {pn: p for pn, p in param_dict.items() if p.requires_grad}
        decay_params = [p for n, p in param_dict.items() if p.dim() >= 2]
        nodecay_params = [p for n, p in param_dict.items() if p.dim() < 2]
        optim_groups = [
            {"params": decay_params, "weight_decay": weight_decay},
            {"params": nodecay_params, "weight_decay": 0.0},
        ]
        return torch.optim.AdamW(optim_groups, lr=learning_rate, betas=betas)

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
        for _ in range(max_new_tokens):
            idx_cond = idx if idx.size(1) <= self.config.block_size else idx[:, -self.config.block_size:]
            logits, _ = self(idx_cond)
            logits = logits[:, -1, :] / temperature
            if top_k is not None:
                v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float("Inf")
            probs = F.softmax(logits, dim=-1)
            idx_next = torch.multinomial(probs, num_samples=1)
            idx = torch.cat((idx, idx_next), dim=1)
        return idx


def get_lr(it, learning_rate, warmup_iters, lr_decay_iters, min_lr):
    if it < warmup_iters:
        return learning_rate * (it + 1) / (warmup_iters + 1)
    if it > lr_decay_iters:
        return min_lr
    decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
    return min_lr + coeff * (learning_rate - min_lr)


def load_bytes(path):
    with open(path, "rb") as f:
        data = np.frombuffer(f.read(), dtype=np.uint8).astype(np.int64)
    n = int(0.9 * len(data))
    return torch.from_numpy(data[:n].copy()), torch.from_numpy(data[n:].copy())


def get_batch(data, block_size, batch_size):
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([data[i:i + block_size] for i in ix])
    y = torch.stack([data[i + 1:i + 1 + block_size] for i in ix])
    return x, y


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("input", help="a text file to train on (bytes are the tokens)")
    p.add_argument("--steps", type=int, default=500)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--block-size", type=int, default=128)
    p.add_argument("--n-layer", type=int, default=4)
    p.add_argument("--n-head", type=int, default=4)
    p.add_argument("--n-embd", type=int, default=128)
    p.add_argument("--dropout", type=float, default=0.0)
    p.add_argument("--no-flash", action="store_true", help="the explicit masked attention with the bias buffer")
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--grad-clip", type=float, default=1.0)
    p.add_argument("--warmup", type=int, default=50)
    p.add_argument("--eval-every", type=int, default=100)
    p.add_argument("--sample-tokens", type=int, default=200)
    p.add_argument("--top-k", type=int, default=40)
    p.add_argument("--temperature", type=float, default=0.8)
    p.add_argument("--seed", type=int, default=1337)
    p.add_argument("--save", default="", help="where to save the state dict (default: a temporary file)")
    return p.parse_args(argv)


@torch.no_grad()
def estimate_loss(model, data, args, batches=8):
    model.eval()
    losses = [model(*get_batch(data, args.block_size, args.batch_size))[1].item() for _ in range(batches)]
    model.train()
    return sum(losses) / len(losses)


def main(argv=None):
    args = parse_args(argv)
    torch.manual_seed(args.seed)
    train_data, val_data = load_bytes(args.input)
    if len(val_data) <= args.block_size + 1:
        raise SystemExit(f"{args.input}: too short for --block-size {args.block_size}")
    config = GPTConfig(block_size=args.block_size, n_layer=args.n_layer, n_head=args.n_head, n_embd=args.n_embd,
                       dropout=args.dropout, flash=not args.no_flash)
    model = GPT(config)
    print(f"number of parameters: {model.get_num_params() / 1e6:.2f}M")
    optimizer = model.configure_optimizers(args.weight_decay, args.lr, (0.9, 0.95))
    losses = []
    t0 = time.time()
    for it in range(args.steps):
        lr = get_lr(it, args.lr, args.warmup, args.steps, args.lr / 10)
        for param_group in optimizer.param_groups:
            param_group["lr"] = lr
        if args.eval_every and it % args.eval_every == 0:
            print(f"step {it}: val loss {estimate_loss(model, val_data, args):.4f}")
        X, Y = get_batch(train_data, args.block_size, args.batch_size)
        logits, loss = model(X, Y)
        loss.backward()
        if args.grad_clip != 0.0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.grad_clip)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(loss.item())
    dt = time.time() - t0
    print(f"trained {args.steps} steps in {dt:.1f} s; last train loss {losses[-1]:.4f}")

    path = args.save or os.path.join(tempfile.mkdtemp(), "nanogpt.safetensors")
    torch.save(model.state_dict(), path)
    model.eval()
    reloaded = GPT(config)
    reloaded.load_state_dict(torch.load(path))
    reloaded.eval()
    X, Y = get_batch(val_data, args.block_size, 2)
    same = torch.equal(model(X, Y)[0], reloaded(X, Y)[0])
    print(f"saved to {path}; reloaded model gives identical outputs: {same}")

    sample = ""
    if args.sample_tokens:
        start = torch.tensor([list(b"\n")], dtype=torch.long)
        out = model.generate(start, args.sample_tokens, temperature=args.temperature, top_k=args.top_k)
        sample = bytes(out[0].tolist()).decode("utf-8", errors="replace")
        print(sample)
    return {"losses": losses, "reload_identical": same, "sample": sample}


if __name__ == "__main__":
    main()
