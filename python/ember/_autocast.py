"""ember.autocast: mixed precision in a scope, as torch.autocast."""
import functools

from . import _ember
from ._ember import DType

_DEVICE_TYPES = ("cpu", "cuda")
_HALF = (DType.bfloat16, DType.float16)


class autocast:
    """with ember.autocast("cpu", dtype=ember.bfloat16): matmul, linear and attention cast
    their float32 inputs to `dtype` and return it; softmax, log_softmax, logsumexp, cross_entropy,
    layer_norm, batch_norm, sum, prod, cumsum, exp, log and pow cast bfloat16/float16 inputs up to
    float32 (ember.autocast_lower_precision_ops() and ember.autocast_float32_ops() list them); every
    other op runs in the dtypes it is given. The casts are recorded, so float32 leaves (master
    weights) get float32 gradients. Nests, restores the previous state on exit (also on an
    exception), works as a decorator, and is per thread.

    As torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None), except:
    - device_type may be left out (default "cpu"); the scope applies to the thread's ops on every
      device, not only on `device_type`'s (it only picks the default dtype: bfloat16 for "cpu",
      float16 for "cuda"); another device type raises RuntimeError, as torch does;
    - a dtype other than bfloat16 or float16 raises ValueError (torch warns and turns autocast off);
      a dtype that is not an ember dtype, or an `enabled` that is not a bool, raises TypeError;
    - cache_enabled is accepted and ignored: Ember keeps no cache of cast weights, so a weight used
      twice in one scope is cast twice;
    - backward() runs each op's gradient in the dtypes its forward chose, whether or not it is
      called inside the scope (torch recommends calling it outside; both work here).
    """

    def __init__(self, device_type="cpu", dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise TypeError(f"ember.autocast: device_type must be a str ('cpu' or 'cuda'), got {type(device_type).__name__}")
        if device_type not in _DEVICE_TYPES:
            raise RuntimeError(f"ember.autocast: unsupported device_type '{device_type}', expected 'cpu' or 'cuda'")
        if not isinstance(enabled, bool):
            raise TypeError(f"ember.autocast: enabled must be a bool, got {type(enabled).__name__}")
        if dtype is None:
            dtype = DType.bfloat16 if device_type == "cpu" else DType.float16
        if not isinstance(dtype, DType):
            raise TypeError(f"ember.autocast: dtype must be an ember dtype (ember.bfloat16 or ember.float16), "
                            f"got {dtype!r}")
        if dtype not in _HALF:
            raise ValueError(f"ember.autocast: dtype must be ember.bfloat16 or ember.float16, got {dtype}")
        self.device = device_type
        self.fast_dtype = dtype
        self._enabled = enabled
        self._saved = []  # one previous state per open entry, so one object may be entered again

    def __enter__(self):
        self._saved.append(_ember._autocast_state())
        _ember._set_autocast_state(self._enabled, self.fast_dtype)
        return self

    def __exit__(self, *exc):
        enabled, dtype = self._saved.pop()
        _ember._set_autocast_state(enabled, dtype)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with autocast(self.device, dtype=self.fast_dtype, enabled=self._enabled):
                return fn(*args, **kwargs)
        return wrapped


def is_autocast_enabled(device_type=None):
    """True inside an enabled ember.autocast scope on this thread. As torch.is_autocast_enabled;
    device_type is accepted for torch's signature and does not matter (Ember's scope covers every
    device)."""
    if device_type is not None and device_type not in _DEVICE_TYPES:
        raise RuntimeError(f"ember.is_autocast_enabled: unsupported device_type '{device_type}'")
    return _ember._autocast_state()[0]


def get_autocast_dtype(device_type="cpu"):
    """The dtype the innermost ember.autocast scope chose (bfloat16 when none is open), as
    torch.get_autocast_dtype."""
    if device_type not in _DEVICE_TYPES:
        raise RuntimeError(f"ember.get_autocast_dtype: unsupported device_type '{device_type}'")
    return _ember._autocast_state()[1]
