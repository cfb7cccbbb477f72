"""A tiny random GPT-2 in a Hugging Face folder (config.json, model.safetensors, vocab.json,
merges.txt), written from Python as the C++ tests do (tests/models/gpt2/gpt2_fixtures.h), and
a float64 NumPy forward pass to check the model against."""
import json
import math
import os

import numpy as np

import ember
from helpers import randn

# 256 byte tokens, three merges and <|endoftext|>; the model's vocabulary is the tokenizer's.
MERGES = ["h e", "l l", "he ll"]
EXTRA_TOKENS = {"he": 256, "ll": 257, "hell": 258, "<|endoftext|>": 259}
VOCAB = 260


def tiny_config():
    return ember.models.GPT2Config(n_layer=2, n_head=2, n_embd=16, vocab_size=VOCAB, n_positions=24)


def byte_to_unicode():
    """GPT-2's byte -> printable character table: printable Latin-1 bytes stand for themselves,
    the others take the characters from U+0100 on, in byte order."""
    printable = set(range(ord("!"), ord("~") + 1)) | set(range(0xA1, 0xAC + 1)) | set(range(0xAE, 0xFF + 1))
    table, extra = {}, 0
    for b in range(256):
        if b in printable:
            table[b] = chr(b)
        else:
            table[b] = chr(0x100 + extra)
            extra += 1
    return table


def write_tokenizer(folder):
    vocab = {ch: b for b, ch in byte_to_unicode().items()}
    vocab.update(EXTRA_TOKENS)
    with open(os.path.join(folder, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
    with open(os.path.join(folder, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n" + "\n".join(MERGES) + "\n")


def write_folder(folder, rng, with_tokenizer=True):
    """The folder of a tiny GPT-2 whose every parameter is random (biases and LayerNorm weights
    too, so that a dropped term shows), as float32 arrays; returns {name: float64 array}."""
    os.makedirs(folder, exist_ok=True)
    ember.models.GPT2(tiny_config(), seed=1).save_pretrained(folder)  # config.json, and the names and shapes
    names = ember.load_file(os.path.join(folder, "model.safetensors"))
    weights = {n: (randn(rng, *t.shape) * 0.3).astype(np.float32) for n, t in names.items()}
    for n in weights:
        if n.endswith("ln_1.weight") or n.endswith("ln_2.weight") or n == "ln_f.weight":
            weights[n] += 1.0
    ember.save_file({n: ember.from_numpy(a) for n, a in weights.items()}, os.path.join(folder, "model.safetensors"))
    if with_tokenizer:
        write_tokenizer(folder)
    return {n: a.astype(np.float64) for n, a in weights.items()}


def _layer_norm(x, w, b, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def _gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def reference_logits(w, ids, n_head):
    """GPT-2's forward pass in float64 NumPy: ids (T,) -> logits (T, vocab)."""
    T = len(ids)
    x = w["wte.weight"][ids] + w["wpe.weight"][:T]
    C = x.shape[-1]
    hd = C // n_head
    causal = np.triu(np.full((T, T), -np.inf), 1)
    layer = 0
    while f"h.{layer}.ln_1.weight" in w:
        p = f"h.{layer}."
        h = _layer_norm(x, w[p + "ln_1.weight"], w[p + "ln_1.bias"])
        qkv = h @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]
        q, k, v = (qkv[:, i * C:(i + 1) * C].reshape(T, n_head, hd).transpose(1, 0, 2) for i in range(3))
        s = q @ k.transpose(0, 2, 1) / math.sqrt(hd) + causal
        p_attn = np.exp(s - s.max(-1, keepdims=True))
        p_attn /= p_attn.sum(-1, keepdims=True)
        heads = (p_attn @ v).transpose(1, 0, 2).reshape(T, C)
        x = x + heads @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]
        h = _layer_norm(x, w[p + "ln_2.weight"], w[p + "ln_2.bias"])
        m = _gelu_tanh(h @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"])
        x = x + m @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"]
        layer += 1
    x = _layer_norm(x, w["ln_f.weight"], w["ln_f.bias"])
    return x @ w["wte.weight"].T
