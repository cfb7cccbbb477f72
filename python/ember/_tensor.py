"""Tensors from Python data: ember.tensor (always a copy), ember.from_numpy (shares memory where
the layout allows), DLPack (CPU and CUDA), devices (x.to("cuda"), x.cpu()), and indexing with
ints and slices as views."""
import builtins

import numpy as np

from . import _ember
from . import cuda as _cuda
from ._ember import Tensor, DType, Device

# NumPy has no bfloat16: values bound for one are staged in float64 and rounded once by Ember.
_TO_NUMPY = {DType.float32: np.float32, DType.float64: np.float64, DType.int64: np.int64,
             DType.bool: np.bool_, DType.float16: np.float16, DType.bfloat16: np.float64}
_FROM_NUMPY = {np.dtype(np.float32): DType.float32, np.dtype(np.float64): DType.float64,
               np.dtype(np.int64): DType.int64, np.dtype(np.bool_): DType.bool,
               np.dtype(np.float16): DType.float16}


def _ember_dtype_for(a, dtype):
    """The Ember dtype for NumPy array `a`: as asked, else its own, else the nearest of the three."""
    if dtype is not None:
        return dtype
    if a.dtype in _FROM_NUMPY:
        return _FROM_NUMPY[a.dtype]
    if a.dtype.kind in "biu":
        return DType.int64
    if a.dtype.kind == "f":
        return DType.float32 if a.dtype.itemsize <= 4 else DType.float64
    raise _ember.Error(f"tensor: cannot make a tensor of NumPy dtype {a.dtype}; "
                       "expected numbers (float32, float64, float16 or int64 after conversion)")


_INT64_MAX = int(np.iinfo(np.int64).max)


def _converted(a, want):
    """A C-ordered copy of `a` in Ember dtype `want`. Values that int64 cannot hold raise
    ValueError: NumPy would wrap uint64 values above 2^63-1 and turn NaN or inf into INT64_MIN
    without a word."""
    if want == DType.int64 and a.size and a.dtype.kind == "u" and int(a.max()) > _INT64_MAX:
        raise ValueError(f"cannot convert {a.dtype} value {int(a.max())} to int64 (largest: {_INT64_MAX})")
    if want == DType.int64 and a.size and a.dtype.kind == "f":
        bad = ~np.isfinite(a) | (a < -2.0 ** 63) | (a >= 2.0 ** 63)
        if bad.any():
            raise ValueError(f"cannot convert {a.dtype} value {a[bad].flat[0]} to int64 "
                             "(expected finite values in [-2^63, 2^63))")
    return np.array(a, dtype=_TO_NUMPY[want], copy=True, order="C")


def _shareable(a):
    """True when Ember can address `a`'s memory as it is: one of Ember's dtypes in native byte
    order, aligned, writable, strides in whole non-negative elements."""
    if a.dtype not in _FROM_NUMPY or not a.dtype.isnative:
        return False
    if not (a.flags.aligned and a.flags.writeable):
        return False
    return builtins.all(s >= 0 and s % a.itemsize == 0 for s in a.strides)


def from_numpy(a, dtype=None):
    """A tensor on NumPy array `a`'s memory when the layout allows (float32/float64/float16/int64/
    bool, native order, aligned, writable, non-negative strides: writes through either are seen by
    both); otherwise a converted copy (always for dtype=ember.bfloat16, which NumPy lacks). The
    array stays alive as long as any tensor on it."""
    if not isinstance(a, np.ndarray):
        raise TypeError(f"from_numpy: expected a numpy.ndarray, got {type(a).__name__}")
    want = _ember_dtype_for(a, dtype)
    if want == DType.bfloat16:
        return _cpp_to(Tensor._from_ndarray(_converted(a, want)), want)
    if not (_shareable(a) and _FROM_NUMPY[a.dtype] == want):
        a = _converted(a, want)
    return Tensor._from_ndarray(a)


def as_device(d):
    """An ember.Device from a Device, "cpu", "cuda" or "cuda:0" (Ember uses one GPU)."""
    if isinstance(d, Device):
        return d
    if isinstance(d, str):
        return _ember._parse_device("cuda" if d == "cuda:0" else d)
    raise TypeError(f"expected a device ('cpu', 'cuda' or an ember.Device), got {type(d).__name__}")


def _check_reachable(d, what):
    """ember.Error, before any copy, when `d` is CUDA and no GPU is usable."""
    if d == Device.cuda:
        _cuda._require(what)


def with_device_names(fn, position):
    """The factory `fn` taking its device (keyword, or positional at `position`) also as "cpu",
    "cuda" or "cuda:0", and failing with the reason when CUDA is asked for and not usable."""
    def factory(*args, **kwargs):
        args = list(args)
        if "device" in kwargs:
            kwargs["device"] = as_device(kwargs["device"])
            d = kwargs["device"]
        elif len(args) > position:
            args[position] = d = as_device(args[position])
        else:
            d = Device.cpu
        _check_reachable(d, f"ember.{fn.__name__}(..., device='{d.name}')")
        return fn(*args, **kwargs)
    factory.__name__ = fn.__name__
    factory.__doc__ = fn.__doc__
    return factory


def tensor(data, dtype=None, requires_grad=False, device=None):
    """A new tensor holding a copy of `data` (a tensor, NumPy array, nested list or number), on
    `device` ("cpu", "cuda"; default: the CPU, or the device of a tensor given as data).
    Python floats become float32 (as in PyTorch), ints int64; an array keeps its dtype."""
    if device is not None:
        d = as_device(device)
        _check_reachable(d, f"ember.tensor(..., device='{d.name}')")
        t = tensor(data, dtype)
        if t.device != d:
            t = _cpp_to(t, d)
        if requires_grad:
            t.requires_grad_()
        return t
    if isinstance(data, Tensor):
        t = data.detach().clone() if dtype is None else data.detach().to(dtype)
    else:
        was_array = isinstance(data, np.ndarray)
        a = np.array(data)
        if dtype is None and not was_array and a.dtype.kind == "f":
            dtype = DType.float32
        if a.dtype.kind not in "biuf":
            raise _ember.Error(f"tensor: expected numbers, got data of NumPy dtype {a.dtype}")
        want = _ember_dtype_for(a, dtype)
        t = from_numpy(_converted(a, want), want)
    if requires_grad:
        t.requires_grad_()
    return t


_KDL_CPU, _KDL_CUDA = 1, 2
_CUDA_LEGACY_DEFAULT_STREAM = 1  # the DLPack code for the stream Ember's kernels run on


def from_dlpack(obj):
    """A tensor sharing the memory of a DLPack producer (a torch tensor, a NumPy or CuPy array) on
    the CPU or on CUDA device 0."""
    kind = obj.__dlpack_device__()[0] if hasattr(obj, "__dlpack_device__") else _KDL_CPU
    if kind == _KDL_CUDA:
        _cuda._require("ember.from_dlpack of a CUDA array")
        # The producer makes its pending work visible to this stream before handing the memory over.
        return Tensor._from_cuda_dlpack(obj.__dlpack__(stream=_CUDA_LEGACY_DEFAULT_STREAM))
    if kind != _KDL_CPU:
        raise _ember.Error(f"from_dlpack: DLPack device type {kind} is not supported (expected kDLCPU=1 or kDLCUDA=2)")
    try:
        a = np.from_dlpack(obj)
    except (TypeError, BufferError, RuntimeError, ValueError):
        # NumPy cannot hold every DLPack dtype (bfloat16): such memory is wrapped directly.
        return Tensor._from_ndarray(obj)
    return from_numpy(a)


# ---- Tensor methods written in Python ----

def _dlpack(self, **kwargs):
    """The DLPack capsule of this tensor's memory (CPU or CUDA). For a CUDA tensor, Ember's GPU
    work is finished first, so the consumer's `stream` needs no wait."""
    return self._dlpack_view().__dlpack__(**kwargs)


def _dlpack_device(self):
    return (_KDL_CUDA, 0) if self.device == Device.cuda else (_KDL_CPU, 0)


def _array(self, dtype=None, copy=None):
    a = self.numpy()
    if dtype is not None and np.dtype(dtype) != a.dtype:
        return a.astype(dtype)
    return a.copy() if copy else a


def _normalize_index(self, idx):
    if not isinstance(idx, tuple):
        idx = (idx,)
    if builtins.sum(1 for i in idx if i is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    n_real = builtins.sum(1 for i in idx if i is not None and i is not Ellipsis)
    if n_real > self.ndim:
        raise IndexError(f"too many indices for a tensor of dimension {self.ndim} (got {n_real})")
    out = []
    for i in idx:
        if i is Ellipsis:
            out.extend([builtins.slice(None)] * (self.ndim - n_real))
        else:
            out.append(i)
    return out


def _getitem(self, idx):
    """Basic indexing as views: ints select (dropping the dim), slices with a positive step keep
    it, None adds a dim, ... fills the rest. Recorded by autograd like any view."""
    t = self
    dim = 0
    for i in _normalize_index(self, idx):
        if i is None:
            t = t.unsqueeze(dim)
            dim += 1
        elif isinstance(i, builtins.slice):
            start, stop, step = i.indices(t.shape[dim])
            if step <= 0:
                raise IndexError("ember: slices need a positive step (negative strides are not supported)")
            if (start, stop, step) != (0, t.shape[dim], 1):
                t = t.slice(dim, start, builtins.max(start, stop), step)
            dim += 1
        elif isinstance(i, (int, np.integer)) and not isinstance(i, bool):
            n = t.shape[dim]
            k = int(i)
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for dimension {dim} with size {n}")
            k %= n
            t = t.slice(dim, k, k + 1).squeeze(dim)
        else:
            raise IndexError(f"ember: unsupported index {i!r} (ints, slices, None and ... are supported)")
    return t


def _setitem(self, idx, value):
    """x[idx] = value writes through the view (not recorded by autograd)."""
    view = _getitem(self, idx)
    if isinstance(value, Tensor):
        view.copy_(value)
    elif isinstance(value, (int, float, np.number)):
        view.fill_(float(value))
    else:
        view.copy_(tensor(value, dtype=self.dtype))


def _iter(self):
    for i in range(len(self)):
        yield _getitem(self, i)


def _tolist(self):
    t = self.cpu()
    if t.dtype == DType.bfloat16:  # NumPy has no bfloat16; float32 holds each value exactly
        t = _cpp_to(t, DType.float32)
    return t.numpy().tolist()


def _float(self):
    return float(self.item())


def _int(self):
    return int(self.item())


def _bool(self):
    if self.numel() != 1:
        raise _ember.Error("bool() of a tensor with more than one element is ambiguous")
    return bool(self.item())


Tensor.__dlpack__ = _dlpack
Tensor.__dlpack_device__ = _dlpack_device
Tensor.__array__ = _array
Tensor.__getitem__ = _getitem
Tensor.__setitem__ = _setitem
Tensor.__iter__ = _iter
Tensor.__float__ = _float
Tensor.__int__ = _int
Tensor.__bool__ = _bool
Tensor.tolist = _tolist


_cpp_to = Tensor.to
_NAMED = {"float32": DType.float32, "float64": DType.float64, "int64": DType.int64, "bool": DType.bool,
          "bfloat16": DType.bfloat16, "float16": DType.float16, "half": DType.float16}


def _to(self, target):
    """x.to(ember.float64), x.to("float64"), x.to(ember.cpu), x.to("cpu") or x.to("cuda")."""
    if isinstance(target, str):
        target = _NAMED[target] if target in _NAMED else as_device(target)
    if isinstance(target, Device):
        _check_reachable(target, f"x.to('{target.name}')")
        if target == self.device:
            return self
    return _cpp_to(self, target)


def _cuda_method(self):
    """A copy on the GPU (this tensor when already there); ember.Error without a usable GPU."""
    _check_reachable(Device.cuda, "x.cuda()")
    return _to(self, Device.cuda)


def _cpu(self):
    """A copy in host memory (this tensor when already there), e.g. before .numpy()."""
    return _to(self, Device.cpu)


Tensor.to = _to
Tensor.cuda = _cuda_method
Tensor.cpu = _cpu
Tensor.is_cuda = property(lambda self: self.device == Device.cuda)
