"""Tensors from Python data: ember.tensor (always a copy), ember.from_numpy (shares memory where
the layout allows), DLPack, and indexing with ints and slices as views."""
import builtins

import numpy as np

from . import _ember
from ._ember import Tensor, DType

_TO_NUMPY = {DType.float32: np.float32, DType.float64: np.float64, DType.int64: np.int64,
             DType.bool: np.bool_}
_FROM_NUMPY = {np.dtype(np.float32): DType.float32, np.dtype(np.float64): DType.float64,
               np.dtype(np.int64): DType.int64, np.dtype(np.bool_): DType.bool}


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
                       "expected numbers (float32, float64 or int64 after conversion)")


def _shareable(a):
    """True when Ember can address `a`'s memory as it is: one of Ember's dtypes in native byte
    order, aligned, writable, strides in whole non-negative elements."""
    if a.dtype not in _FROM_NUMPY or not a.dtype.isnative:
        return False
    if not (a.flags.aligned and a.flags.writeable):
        return False
    return builtins.all(s >= 0 and s % a.itemsize == 0 for s in a.strides)


def from_numpy(a, dtype=None):
    """A tensor on NumPy array `a`'s memory when the layout allows (float32/float64/int64, native
    order, aligned, writable, non-negative strides: writes through either are seen by both);
    otherwise a converted copy. The array stays alive as long as any tensor on it."""
    if not isinstance(a, np.ndarray):
        raise TypeError(f"from_numpy: expected a numpy.ndarray, got {type(a).__name__}")
    want = _ember_dtype_for(a, dtype)
    if not (_shareable(a) and _FROM_NUMPY[a.dtype] == want):
        a = np.array(a, dtype=_TO_NUMPY[want], copy=True, order="C")
    return Tensor._from_ndarray(a)


def tensor(data, dtype=None, requires_grad=False):
    """A new tensor holding a copy of `data` (a tensor, NumPy array, nested list or number).
    Python floats become float32 (as in PyTorch), ints int64; an array keeps its dtype."""
    if isinstance(data, Tensor):
        t = data.detach().clone() if dtype is None else data.detach().to(dtype)
    else:
        was_array = isinstance(data, np.ndarray)
        a = np.array(data)
        if dtype is None and not was_array and a.dtype.kind == "f":
            dtype = DType.float32
        if a.dtype.kind not in "biuf":
            raise _ember.Error(f"tensor: expected numbers, got data of NumPy dtype {a.dtype}")
        t = from_numpy(np.array(a, dtype=_TO_NUMPY[_ember_dtype_for(a, dtype)], copy=True, order="C"))
    if requires_grad:
        t.requires_grad_()
    return t


def from_dlpack(obj):
    """A tensor sharing the memory of any DLPack producer on the CPU (a torch tensor, a NumPy array)."""
    return from_numpy(np.from_dlpack(obj))


# ---- Tensor methods written in Python ----

def _dlpack(self, *args, **kwargs):
    return self.numpy().__dlpack__(*args, **kwargs)


def _dlpack_device(self):
    if self.device != _ember.Device.cpu:
        raise _ember.Error("__dlpack_device__: only CPU tensors are exported through DLPack")
    return (1, 0)  # kDLCPU, device 0


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
    return self.numpy().tolist()


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
_NAMED = {"float32": DType.float32, "float64": DType.float64, "int64": DType.int64, "bool": DType.bool}


def _to(self, target):
    """x.to(ember.float64), x.to("float64"), x.to(ember.cpu), x.to("cpu") or x.to("cuda")."""
    if isinstance(target, str):
        target = _NAMED[target] if target in _NAMED else _ember._parse_device(target)
    return _cpp_to(self, target)


Tensor.to = _to
