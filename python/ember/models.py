"""ember.models: GPT-2 (models/gpt2 in C++) from a Hugging Face folder (config.json,
model.safetensors, and vocab.json + merges.txt for text):

    model = ember.models.GPT2.from_pretrained("gpt2-folder", attention="flash2")
    logits = model([[15496, 11, 314]])           # (1, 3, vocab) float32
    text = model.generate("Hello,", max_new_tokens=20, temperature=0.8, top_k=40, seed=1)

The forward pass and generation run in C++ without the GIL."""
import os
import shutil

import numpy as np

from . import _ember
from ._ember import Tensor, DType, GPT2Config, GPT2KVCache  # noqa: F401

_TOKENIZER_FILES = ("vocab.json", "merges.txt")


def _as_ids(ids, what):
    """Token ids as an int64 tensor of shape (B, T); a 1-D sequence is a batch of one."""
    if not isinstance(ids, Tensor):
        a = np.asarray(ids)
        if a.dtype.kind not in "iu":
            raise _ember.Error(f"{what}: token ids must be integers, got NumPy dtype {a.dtype}")
        ids = Tensor._from_ndarray(np.ascontiguousarray(a, dtype=np.int64))
    if ids.ndim == 1:
        ids = ids.unsqueeze(0)
    return ids


def _id_list(ids, what):
    """Token ids as a flat list of ints (a tensor, array or sequence of one row)."""
    if isinstance(ids, Tensor):
        ids = ids.cpu().numpy()
    a = np.asarray(ids)
    if a.ndim == 2 and a.shape[0] == 1:
        a = a[0]
    if a.ndim != 1 or (a.size and a.dtype.kind not in "iu"):
        raise _ember.Error(f"{what}: expected one sequence of integer token ids, got shape {a.shape} of {a.dtype}")
    return [int(v) for v in a]


class GPT2Tokenizer:
    """GPT-2's byte-level BPE: text -> ids -> the exact same bytes back."""

    def __init__(self, impl, folder=None):
        self._impl = impl
        self._folder = folder  # where vocab.json and merges.txt came from, for save_pretrained

    @classmethod
    def from_pretrained(cls, folder):
        """Reads folder/vocab.json and folder/merges.txt (ember.Error naming a missing or bad file)."""
        folder = os.fspath(folder)
        return cls(_ember._GPT2Tokenizer.from_dir(folder), folder)

    @classmethod
    def from_files(cls, vocab_json, merges_txt):
        return cls(_ember._GPT2Tokenizer.from_files(os.fspath(vocab_json), os.fspath(merges_txt)),
                   os.path.dirname(os.fspath(vocab_json)))

    def encode(self, text):
        """The ids of `text` (str, encoded as UTF-8, or bytes)."""
        return self._impl.encode(text.encode("utf-8") if isinstance(text, str) else bytes(text))

    __call__ = encode

    def decode_bytes(self, ids):
        return self._impl.decode(_id_list(ids, "decode"))

    def decode(self, ids, errors="replace"):
        """The text of `ids`. A cut through a multi-byte character is not UTF-8: `errors` says what
        to do with it, as in bytes.decode ("replace", "strict", ...)."""
        return self.decode_bytes(ids).decode("utf-8", errors)

    def token(self, id):
        """One token's bytes."""
        return self._impl.token(int(id))

    @property
    def vocab_size(self):
        return self._impl.vocab_size

    def __len__(self):
        return self._impl.vocab_size

    @property
    def eot_id(self):
        """The id of <|endoftext|>, or None when the vocabulary has none."""
        i = self._impl.eot_id
        return None if i < 0 else i

    def save_pretrained(self, folder):
        if self._folder is None:
            raise _ember.Error("GPT2Tokenizer.save_pretrained: this tokenizer was not read from files")
        os.makedirs(folder, exist_ok=True)
        for name in _TOKENIZER_FILES:
            src, dst = os.path.join(self._folder, name), os.path.join(folder, name)
            if os.path.abspath(src) != os.path.abspath(dst):
                shutil.copyfile(src, dst)


class GPT2:
    """GPT-2 with Hugging Face's parameter names ("h.0.attn.c_attn.weight", ...)."""

    def __init__(self, config=None, seed=0, attention="flash2", tokenizer=None, _impl=None):
        """A randomly initialised model (GPT-2's initialisation, from `seed`); `config` is a
        GPT2Config or a preset name ("gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl")."""
        if _impl is None:
            if config is None or isinstance(config, str):
                config = GPT2Config.preset(config or "gpt2")
            _impl = _ember._GPT2(config, seed)
        self._impl = _impl
        self._impl.attention = attention
        self.tokenizer = tokenizer

    @classmethod
    def from_pretrained(cls, folder, attention="flash2", tokenizer=True):
        """Loads folder/config.json and folder/model.safetensors (in eval mode), and the tokenizer
        when folder/vocab.json exists and `tokenizer` is true. Missing or mis-shaped tensors, bad
        configs and missing folders raise ember.Error naming them."""
        folder = os.fspath(folder)
        impl = _ember._GPT2.load(folder)
        impl.eval()
        tok = None
        if tokenizer and os.path.exists(os.path.join(folder, "vocab.json")):
            tok = GPT2Tokenizer.from_pretrained(folder)
            # Now, rather than at the first generated id that has no token.
            tok._impl.check_covers(impl.config.vocab_size, os.path.join(folder, "vocab.json"))
        return cls(attention=attention, tokenizer=tok, _impl=impl)

    def save_pretrained(self, folder):
        """Writes config.json and model.safetensors (and the tokenizer's files, when it has them)."""
        folder = os.fspath(folder)
        self._impl.save(folder)
        if self.tokenizer is not None and self.tokenizer._folder is not None:
            self.tokenizer.save_pretrained(folder)

    def __call__(self, ids, cache=None):
        """Logits (B, T, vocab) of token ids (B, T) (a 1-D sequence is a batch of one). With a
        cache (new_cache()), the ids continue the positions it holds and it is extended by them.
        Recorded by autograd unless under ember.no_grad()."""
        return self._impl.forward(_as_ids(ids, "GPT2"), cache)

    forward = __call__

    def hidden(self, ids, cache=None):
        """The final hidden states (B, T, n_embd), before the LM head."""
        return self._impl.hidden(_as_ids(ids, "GPT2.hidden"), cache)

    def new_cache(self, batch=1, capacity=None):
        """An empty KV cache for `batch` sequences of up to `capacity` positions (n_positions)."""
        return GPT2KVCache(self.config, batch, -1 if capacity is None else capacity)

    def loss(self, ids):
        """Mean next-token cross-entropy of ids (B, T) under the model."""
        ids = _as_ids(ids, "GPT2.loss")
        return _ember._gpt2_lm_loss(self._impl.forward(ids, None), ids)

    def generate(self, prompt, max_new_tokens=32, temperature=0.0, top_k=0, top_p=1.0, seed=0, use_cache=True,
                 stop_token=None, on_token=None):
        """Continues `prompt`: token ids in, the new ids out (a list); or text in (needs the
        tokenizer), the new text out. temperature 0 is greedy (argmax); otherwise tokens are drawn
        from the top_k most likely (0: all) within top_p of the mass, reproducibly for a seed.
        use_cache=False recomputes the whole prefix each step (same tokens, slower). Stops after
        stop_token (default: the tokenizer's <|endoftext|>, if any; -1: never). on_token(id) is
        called for each new id as it comes."""
        text = isinstance(prompt, str)
        if text:
            if self.tokenizer is None:
                raise _ember.Error("generate: a text prompt needs the tokenizer (vocab.json and merges.txt in the "
                                   "model folder); pass token ids instead")
            ids = self.tokenizer.encode(prompt)
        else:
            ids = _id_list(prompt, "generate")
        context = self.config.n_positions
        if len(ids) + max_new_tokens > context:
            raise _ember.Error(f"generate: the {len(ids)}-token prompt and max_new_tokens={max_new_tokens} do not fit "
                               f"the model's context of {context} positions")
        if stop_token is None:
            eot = self.tokenizer.eot_id if self.tokenizer is not None else None
            stop_token = -1 if eot is None else eot
        out = self._impl.generate(ids, max_new_tokens, float(temperature), int(top_k), float(top_p), int(seed),
                                  bool(use_cache), int(stop_token), on_token)
        return self.tokenizer.decode(out) if text else out

    def quantize(self, weights):
        """Weight-only quantisation for inference, in place: weights="int8" (blocks of 32 int8
        values with a float16 scale each) or "bf16" (bfloat16); "f32" leaves a float32 model as it
        is. The linear layers and the tied LM head then read the quantised bytes (the embedding
        lookup keeps float32 wte); the model switches to eval mode and records nothing for autograd;
        training it (train() and a forward with gradients) raises ember.Error, as does a second
        quantisation or an unknown name. Returns the model."""
        if weights not in ("f32", "bf16", "int8"):
            raise ValueError(f"GPT2.quantize: unknown weight format {weights!r}; expected 'f32', 'bf16' or 'int8'")
        self._impl.quantize(weights)
        return self

    @property
    def weights(self):
        """The weight format: "f32", "bf16" or "int8"."""
        return self._impl.weights

    @property
    def config(self):
        return self._impl.config

    @property
    def attention(self):
        """The attention kernel: "flash2" (FlashAttention-2's loop order, the library's), or after
        ember.register_study_kernels() the attention study's "flash" (the paper's Algorithm 1) or
        "standard" (Algorithm 0). An unknown name raises ember.Error listing what is registered."""
        return self._impl.attention

    @attention.setter
    def attention(self, name):
        self._impl.attention = name

    def state_dict(self):
        """{name: tensor} of every parameter, with Hugging Face's names."""
        return self._impl.state_dict()

    def parameters(self):
        return self._impl.parameters()

    def num_parameters(self):
        return self._impl.num_parameters()

    def train(self, on=True):
        self._impl.train(on)
        return self

    def eval(self):
        return self.train(False)

    @property
    def training(self):
        return self._impl.training

    def zero_grad(self):
        self._impl.zero_grad()

    def __repr__(self):
        c = self.config
        return (f"GPT2(n_layer={c.n_layer}, n_head={c.n_head}, n_embd={c.n_embd}, vocab_size={c.vocab_size}, "
                f"n_positions={c.n_positions}, attention={self.attention!r})")
