"""Random numbers with torch's spellings: ember.Generator, the factories taking sizes as ints
(rand(2, 3)), generator= and requires_grad=, multinomial and bernoulli.

Without a generator every draw comes from the process-wide generator that ember.manual_seed
seeds (the C++ default generator). An explicit ember.Generator is an independent stream
(NumPy's PCG64 under the hood): the same seed gives the same numbers every run, but not the
numbers torch's generator of that seed would give."""
import numpy as np

from . import _ember
from ._ember import Tensor, DType


class Generator:
    """An independent random stream: Generator().manual_seed(s) as in torch."""

    def __init__(self, device="cpu"):
        if str(device) not in ("cpu", "Device.cpu"):
            raise ValueError(f"ember.Generator: only CPU generators exist, got device {device!r}")
        self._seed = 67280421310721
        self._rng = np.random.Generator(np.random.PCG64(self._seed))

    def manual_seed(self, seed):
        if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
            raise TypeError(f"Generator.manual_seed: expected an int, got {type(seed).__name__}")
        self._seed = int(seed) & 0xFFFFFFFFFFFFFFFF
        self._rng = np.random.Generator(np.random.PCG64(self._seed))
        return self

    def initial_seed(self):
        return self._seed

    def get_state(self):
        return self._rng.bit_generator.state

    def set_state(self, state):
        self._rng.bit_generator.state = state
        return self


def _check_gen(generator, what):
    if generator is not None and not isinstance(generator, Generator):
        raise TypeError(f"{what}: generator must be an ember.Generator or None, got {type(generator).__name__}")


def _sizes(size, what):  # noqa: C901
    """(2, 3), ((2, 3),) and ([2, 3],) all mean the shape [2, 3]."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    out = []
    for s in size:
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)):
            raise TypeError(f"{what}: sizes must be ints, got {s!r} ({type(s).__name__})")
        if s < 0:
            raise ValueError(f"{what}: sizes must be >= 0, got {tuple(size)}")
        out.append(int(s))
    return out


def _finish(t, requires_grad, device):
    if device is not None:
        from ._tensor import as_device
        d = as_device(device)
        if t.device != d:
            t = t.to(d)
    if requires_grad:
        t.requires_grad_()
    return t


def _np_float(a, dtype):
    return Tensor._from_ndarray(np.ascontiguousarray(a, dtype=np.float64 if dtype == DType.float64 else np.float32))


def _draw_args(args, kwargs, what):
    from ._factories import split_args
    generator = kwargs.pop("generator", None)
    _check_gen(generator, what)
    shape, _, dtype, device, rg = split_args(args, kwargs, what)
    return shape, dtype or DType.float32, device, rg, generator


def rand(*size, **kwargs):
    """Uniform on [0, 1): rand(2, 3), rand((2, 3)); dtype=, device=, generator=, requires_grad=."""
    shape, dtype, device, rg, generator = _draw_args(size, kwargs, "rand")
    t = _ember.rand(shape, dtype) if generator is None else _np_float(generator._rng.random(shape), dtype)
    return _finish(t, rg, device)


def randn(*size, **kwargs):
    """Standard normal: randn(2, 3), randn((2, 3)); dtype=, device=, generator=, requires_grad=."""
    shape, dtype, device, rg, generator = _draw_args(size, kwargs, "randn")
    t = _ember.randn(shape, dtype) if generator is None else _np_float(generator._rng.standard_normal(shape), dtype)
    return _finish(t, rg, device)


def uniform(shape, low, high, dtype=DType.float32, generator=None):
    """Uniform on [low, high) of the given shape (Ember's name; torch writes torch.empty(s).uniform_)."""
    _check_gen(generator, "uniform")
    shape = _sizes((shape,) if isinstance(shape, (list, tuple)) else (shape,), "uniform")
    if generator is None:
        return _ember.uniform(shape, float(low), float(high), dtype)
    return _np_float(generator._rng.uniform(low, high, shape), dtype)


def randint(low, high=None, size=None, generator=None, dtype=DType.int64, device=None):
    """randint(high, size) or randint(low, high, size): int64 in [low, high)."""
    _check_gen(generator, "randint")
    if size is None:
        low, high, size = 0, low, high
    if size is None:
        raise TypeError("randint: expected randint(high, size) or randint(low, high, size)")
    shape = _sizes((size,) if isinstance(size, (list, tuple)) else (size,), "randint")
    if not low < high:
        raise ValueError(f"randint: expected low < high, got low={low}, high={high}")
    if generator is None:
        t = _ember.randint(int(low), int(high), shape)
    else:
        t = Tensor._from_ndarray(np.ascontiguousarray(generator._rng.integers(low, high, shape), dtype=np.int64))
    if dtype != DType.int64:
        t = t.to(dtype)
    return _finish(t, False, device)


def _uniform_like(shape, generator):
    """float64 U[0, 1) of `shape` as NumPy, from `generator` or the global stream."""
    if generator is None:
        return _ember.rand(list(shape), DType.float64).numpy()
    return generator._rng.random(shape)


def bernoulli(input, p=None, generator=None):
    """1 with probability input (or p), else 0, in input's dtype."""
    _check_gen(generator, "bernoulli")
    if not isinstance(input, Tensor):
        raise TypeError(f"bernoulli: expected an ember.Tensor, got {type(input).__name__}")
    probs = np.full(tuple(input.shape), float(p)) if p is not None else input.detach().cpu().numpy().astype(np.float64)
    if np.any((probs < 0) | (probs > 1)) or np.any(np.isnan(probs)):
        raise ValueError("bernoulli: probabilities must be in [0, 1]")
    out = (_uniform_like(probs.shape, generator) < probs)
    dt = input.dtype
    t = Tensor._from_ndarray(np.ascontiguousarray(out, dtype={DType.float64: np.float64, DType.int64: np.int64,
                                                               DType.bool: np.bool_}.get(dt, np.float32)))
    return t.to(input.device) if input.device != t.device else t


def multinomial(input, num_samples, replacement=False, generator=None):
    """Indices drawn from the rows of `input` (1-D or 2-D non-negative weights, not necessarily
    normalised): int64 of shape (num_samples,) or (rows, num_samples), as torch.multinomial."""
    _check_gen(generator, "multinomial")
    if not isinstance(input, Tensor):
        raise TypeError(f"multinomial: expected an ember.Tensor, got {type(input).__name__}")
    if input.ndim not in (1, 2):
        raise ValueError(f"multinomial: expected a 1-D or 2-D tensor of weights, got shape {tuple(input.shape)}")
    if isinstance(num_samples, bool) or not isinstance(num_samples, (int, np.integer)) or num_samples <= 0:
        raise ValueError(f"multinomial: num_samples must be a positive int, got {num_samples!r}")
    w = input.detach().cpu().numpy().astype(np.float64)
    w2 = w.reshape(-1, w.shape[-1])
    if not np.all(np.isfinite(w2)) or np.any(w2 < 0):
        raise ValueError("multinomial: weights must be finite and non-negative")
    sums = w2.sum(axis=1)
    if np.any(sums <= 0):
        raise ValueError("multinomial: every row needs a positive total weight")
    if not replacement and num_samples > int(np.count_nonzero(w2, axis=1).min()):
        raise ValueError(f"multinomial: cannot draw {num_samples} samples without replacement from a row "
                         f"with fewer non-zero weights")
    n = w2.shape[1]
    if replacement:
        cdf = np.cumsum(w2, axis=1) / sums[:, None]
        u = _uniform_like((w2.shape[0], num_samples), generator)
        idx = np.stack([np.minimum(np.searchsorted(cdf[r], u[r], side="right"), n - 1) for r in range(w2.shape[0])])
    else:
        # exponential race: the k smallest of E_i / w_i are a draw of k without replacement
        u = _uniform_like(w2.shape, generator)
        with np.errstate(divide="ignore"):
            keys = -np.log1p(-u) / w2
        idx = np.argsort(keys, axis=1, kind="stable")[:, :num_samples]
    out = Tensor._from_ndarray(np.ascontiguousarray(idx, dtype=np.int64).reshape(w.shape[:-1] + (num_samples,)))
    return out.to(input.device) if input.device != out.device else out
