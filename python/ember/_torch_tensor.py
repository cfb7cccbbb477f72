"""Tensor semantics as a PyTorch user expects them: element-wise == and != (with identity
hashing, so tensors stay usable as dict keys), max/min along a dim returning (values, indices),
topk/sort along any dim, dtype shorthands, // and %, indexing with tensors, lists and boolean
masks (and assignment through them), pickling and deepcopy."""
import builtins
import collections

import numpy as np

from . import _ember
from ._ember import Tensor, DType, Device

_cpp_max, _cpp_min = _ember.max, _ember.min
_cpp_argmax, _cpp_argmin = _ember.argmax, _ember.argmin
_cpp_topk, _cpp_sort = _ember.topk, _ember.sort
_Number = (int, float, np.number)

# torch.return_types.max and friends: unpack as (values, indices), or read .values / .indices.
ValuesIndices = collections.namedtuple("ValuesIndices", ["values", "indices"])


def _other(a, b):
    """b as a tensor beside a: a tensor as it is, a Python number as a 0-d tensor of a's dtype."""
    if isinstance(b, Tensor):
        return b
    if isinstance(b, (bool, np.bool_)):
        return _ember.scalar(float(b), a.dtype, a.device)
    if isinstance(b, _Number):
        return _ember.scalar(float(b), a.dtype, a.device)
    return None


def _eq(a, b):
    o = _other(a, b)
    return NotImplemented if o is None else _ember.eq(a, o)


def _ne(a, b):
    o = _other(a, b)
    return NotImplemented if o is None else _ember.ne(a, o)


def _reduce_pick(cpp_reduce, cpp_arg, name):
    def pick(input, dim=None, keepdim=False):
        """max(x): the largest element. max(x, dim, keepdim=False): (values, indices) along dim.
        max(x, other_tensor): the element-wise maximum (as torch)."""
        if not isinstance(input, Tensor):
            raise TypeError(f"ember.{name}: expected an ember.Tensor, got {type(input).__name__}")
        if isinstance(dim, Tensor):
            return (_ember.maximum if name == "max" else _ember.minimum)(input, dim)
        if dim is None:
            return cpp_reduce(input)
        if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
            raise TypeError(f"ember.{name}: dim must be an int, got {type(dim).__name__}")
        return ValuesIndices(cpp_reduce(input, int(dim), keepdim), cpp_arg(input, int(dim), keepdim))
    pick.__name__ = name
    return pick


max = _reduce_pick(_cpp_max, _cpp_argmax, "max")  # noqa: A001
min = _reduce_pick(_cpp_min, _cpp_argmin, "min")  # noqa: A001


def _arg(cpp_arg, name):
    def arg(input, dim=None, keepdim=False):
        """The index of the extreme element along dim; dim=None: of the flattened tensor (as torch)."""
        if dim is None:
            r = cpp_arg(input.reshape([-1]), 0, False)
            return r.reshape([1] * input.ndim) if keepdim else r
        return cpp_arg(input, int(dim), keepdim)
    arg.__name__ = name
    return arg


argmax = _arg(_cpp_argmax, "argmax")
argmin = _arg(_cpp_argmin, "argmin")


def _along(x, dim, fn):
    """fn applied along `dim` (the C++ selection ops work along the last dim)."""
    d = dim % x.ndim if x.ndim else 0
    last = x.ndim - 1
    if x.ndim == 0 or d == last:
        return fn(x)
    v, i = fn(x.transpose(d, last))
    return v.transpose(d, last), i.transpose(d, last)


def topk(input, k, dim=-1, largest=True, sorted=True):
    """The k largest (or smallest) along dim, as (values, indices); always sorted."""
    return ValuesIndices(*_along(input, dim, lambda t: _cpp_topk(t, int(k), largest)))


def sort(input, dim=-1, descending=False, stable=False):
    """(values, indices) along dim; the sort is stable (ties keep their order)."""
    return ValuesIndices(*_along(input, dim, lambda t: _cpp_sort(t, descending)))


def flatten(input, start_dim=0, end_dim=-1):
    n = input.ndim
    if n == 0:
        return input.reshape([1])
    s, e = start_dim % n, end_dim % n
    if s > e:
        raise ValueError(f"flatten: start_dim ({start_dim}) must not come after end_dim ({end_dim})")
    shape = list(input.shape)
    merged = 1
    for v in shape[s:e + 1]:
        merged *= v
    return input.reshape(shape[:s] + [merged] + shape[e + 1:])


# ---- // and % ----

def _np(t):
    return t.detach().cpu().numpy()


def _floor_div_values(a, b):
    """floor(a / b) as a tensor of a's dtype (not differentiable: its derivative is 0)."""
    av = _np(a)
    bv = _np(b) if isinstance(b, Tensor) else b
    if a.dtype == DType.int64 and np.any(np.asarray(bv) == 0):
        raise ZeroDivisionError("integer division by zero in a tensor //")
    out = Tensor._from_ndarray(np.ascontiguousarray(np.floor_divide(av, bv)).astype(av.dtype))
    return out.to(a.device) if a.device != Device.cpu else out


def floor_divide(a, b):
    if not isinstance(a, Tensor):
        a = _other(b, a)
    return _floor_div_values(a, b)


def remainder(a, b):
    """a - floor(a / b) * b, with the sign of b (Python's and torch's %); differentiable in a and b."""
    if not isinstance(a, Tensor):
        a = _other(b, a)
    if a.dtype == DType.int64:
        return _floor_div_values(a, b) * -1 * b + a if isinstance(b, Tensor) else \
            Tensor._from_ndarray(np.ascontiguousarray(np.remainder(_np(a), b)))
    return a - _floor_div_values(a, b) * b


# ---- indexing with tensors, lists and masks ----

def _is_advanced(i):
    if isinstance(i, Tensor):
        return True
    if isinstance(i, np.ndarray):
        return True
    return isinstance(i, (list, tuple)) and not isinstance(i, str)


def _to_np_index(i):
    if isinstance(i, Tensor):
        a = _np(i)
        if i.dtype not in (DType.int64, DType.bool):
            raise IndexError(f"tensors used as indices must be int64 or bool, got {i.dtype}")
        return a
    if isinstance(i, (list, tuple)):
        a = np.asarray(i)
        if a.size and a.dtype.kind not in "biu":
            raise IndexError(f"lists used as indices must hold ints or bools, got {a.dtype}")
        return a.astype(np.int64) if a.size == 0 else a
    return i


def _has_advanced(idx):
    if isinstance(idx, tuple):
        return builtins.any(_is_advanced(i) for i in idx)
    return _is_advanced(idx)


def _np_index(idx):
    if isinstance(idx, tuple):
        return tuple(_to_np_index(i) for i in idx)
    return _to_np_index(idx)


def _advanced_getitem(x, idx):
    """NumPy's indexing rules, as a differentiable gather: the flat positions the index selects
    (computed on positions 0..n-1 in NumPy) picked from the flattened tensor by index_select."""
    np_idx = _np_index(idx)
    positions = np.arange(x.numel(), dtype=np.int64).reshape(tuple(x.shape))
    try:
        picked = positions[np_idx]
    except IndexError as e:
        raise IndexError(str(e)) from None
    flat = Tensor._from_ndarray(np.ascontiguousarray(picked.reshape(-1)))
    if x.device != Device.cpu:
        flat = flat.to(x.device)
    return _ember.index_select(x.contiguous().reshape([-1]), 0, flat).reshape(list(picked.shape))


def _advanced_setitem(x, idx, value):
    """x[mask] = v, x[[0, 2]] = v, x[t] = v: NumPy's assignment on the tensor's memory (not recorded)."""
    np_idx = _np_index(idx)
    v = _np(value) if isinstance(value, Tensor) else value
    if x.device == Device.cpu:
        x.numpy()[np_idx] = v
    else:
        host = x.cpu().numpy().copy()
        host[np_idx] = v
        x.copy_(Tensor._from_ndarray(host).to(x.device))


def patch(getitem, setitem):
    def _getitem(self, idx):
        if isinstance(idx, Tensor) and idx.ndim == 0 and idx.dtype == DType.int64:
            idx = int(idx.item())
        if _has_advanced(idx):
            return _advanced_getitem(self, idx)
        return getitem(self, idx)

    def _setitem(self, idx, value):
        if _has_advanced(idx):
            return _advanced_setitem(self, idx, value)
        return setitem(self, idx, value)

    Tensor.__getitem__ = _getitem
    Tensor.__setitem__ = _setitem
    Tensor.__eq__ = _eq
    Tensor.__ne__ = _ne
    Tensor.__hash__ = lambda self: builtins.id(self)  # identity, as torch: usable as dict keys / in sets
    Tensor.max = max
    Tensor.min = min
    Tensor.argmax = argmax
    Tensor.argmin = argmin
    Tensor.topk = topk
    Tensor.sort = sort
    Tensor.flatten = flatten
    Tensor.float = lambda self: self if self.dtype == DType.float32 else self.to(DType.float32)
    Tensor.double = lambda self: self if self.dtype == DType.float64 else self.to(DType.float64)
    Tensor.long = lambda self: self if self.dtype == DType.int64 else self.to(DType.int64)
    Tensor.half = lambda self: self if self.dtype == DType.float16 else self.to(DType.float16)
    Tensor.bfloat16 = lambda self: self if self.dtype == DType.bfloat16 else self.to(DType.bfloat16)
    Tensor.bool = lambda self: self if self.dtype == DType.bool else self.to(DType.bool)
    Tensor.type = _type
    Tensor.__floordiv__ = lambda a, b: floor_divide(a, b)
    Tensor.__rfloordiv__ = lambda a, b: floor_divide(_other(a, b), a)
    Tensor.__mod__ = lambda a, b: remainder(a, b)
    Tensor.__rmod__ = lambda a, b: remainder(_other(a, b), a)
    Tensor.__reduce__ = _reduce
    Tensor.__deepcopy__ = _deepcopy
    Tensor.is_floating_point = lambda self: self.dtype.is_floating_point
    Tensor.element_size = lambda self: self.dtype.itemsize
    Tensor.chunk = lambda self, chunks, dim=0: chunk(self, chunks, dim)
    Tensor.masked_fill_ = _masked_fill_
    Tensor.isnan = lambda self: isnan(self)
    Tensor.isfinite = lambda self: isfinite(self)
    Tensor.data_ptr = lambda self: self._data_ptr()
    Tensor.__index__ = _index


def _index(self):
    """A one-element int64 tensor as a Python int (for slices and range, as torch)."""
    if self.dtype != DType.int64 or self.numel() != 1:
        raise TypeError(f"only one-element int64 tensors can be used as an index, got {self.dtype} "
                        f"of shape {tuple(self.shape)}")
    return int(self.item())


_TYPE_NAMES = {"torch.FloatTensor": DType.float32, "torch.DoubleTensor": DType.float64,
               "torch.LongTensor": DType.int64, "torch.BoolTensor": DType.bool,
               "torch.HalfTensor": DType.float16, "torch.BFloat16Tensor": DType.bfloat16,
               "float32": DType.float32, "float64": DType.float64, "int64": DType.int64, "bool": DType.bool,
               "float16": DType.float16, "bfloat16": DType.bfloat16}


def _type(self, dtype=None):
    """x.type(): the type's name ("ember.FloatTensor"-style as torch); x.type(ember.float64) casts."""
    if dtype is None:
        return {DType.float32: "ember.FloatTensor", DType.float64: "ember.DoubleTensor",
                DType.int64: "ember.LongTensor", DType.bool: "ember.BoolTensor",
                DType.float16: "ember.HalfTensor", DType.bfloat16: "ember.BFloat16Tensor"}[self.dtype]
    if isinstance(dtype, str):
        if dtype.replace("ember.", "torch.") not in _TYPE_NAMES and dtype not in _TYPE_NAMES:
            raise ValueError(f"x.type: unknown type {dtype!r}")
        dtype = _TYPE_NAMES.get(dtype, _TYPE_NAMES.get(dtype.replace("ember.", "torch.")))
    return self if self.dtype == dtype else self.to(dtype)


def _masked_fill_(self, mask, value):
    """In place, not recorded (refused on a tensor that requires grad outside no_grad, as add_)."""
    if self.requires_grad and _ember.grad_enabled():
        raise _ember.Error("masked_fill_: a tensor that requires grad cannot be written in place; "
                           "use masked_fill (out of place) or ember.no_grad()")
    self.copy_(_ember.masked_fill(self, mask, float(value)))
    return self


# ---- pickling ----

def _rebuild(array, requires_grad, device):
    t = Tensor._from_ndarray(np.ascontiguousarray(array))
    if device != "cpu":
        t = t.to(Device.cuda)
    if requires_grad:
        t.requires_grad_()
    return t


def _reduce(self):
    """Pickled as its values (a copy), dtype, device and requires_grad; a traced tensor pickles as
    its detached value."""
    return (_rebuild, (_np(self).copy(), bool(self.requires_grad),
                       "cuda" if self.device == Device.cuda else "cpu"))


def _deepcopy(self, memo):
    if builtins.id(self) in memo:
        return memo[builtins.id(self)]
    t = self.detach().clone()
    if self.requires_grad:
        t.requires_grad_()
    memo[builtins.id(self)] = t
    return t


# ---- functions ----

def cat(tensors, dim=0):
    tensors = list(tensors)
    if not tensors:
        raise ValueError("ember.cat: expected a non-empty sequence of tensors")
    return _ember.concat(tensors, dim)


def chunk(input, chunks, dim=0):
    """Up to `chunks` pieces along dim, each ceil(n / chunks) long but the last (as torch)."""
    if isinstance(chunks, bool) or not isinstance(chunks, (int, np.integer)) or chunks <= 0:
        raise ValueError(f"chunk: chunks must be a positive int, got {chunks!r}")
    n = input.shape[dim]
    size = builtins.max(1, -(-n // int(chunks)))
    return list(_ember.split(input, size, dim))


def split(tensor, split_size_or_sections, dim=0):
    if isinstance(split_size_or_sections, (list, tuple)):
        return list(_ember.split(tensor, [int(s) for s in split_size_or_sections], dim))
    return list(_ember.split(tensor, int(split_size_or_sections), dim))


def stack(tensors, dim=0):
    tensors = list(tensors)
    if not tensors:
        raise ValueError("ember.stack: expected a non-empty sequence of tensors")
    return _ember.stack(tensors, dim)


def isnan(input):
    return _ember.ne(input, input)


def isinf(input):
    if not input.dtype.is_floating_point:
        return _ember.zeros(list(input.shape), DType.bool, input.device)
    return _ember.eq(_ember.abs(input), _ember.scalar(float("inf"), input.dtype, input.device))


def isfinite(input):
    if not input.dtype.is_floating_point:
        return _ember.ones(list(input.shape), DType.bool, input.device)
    return _ember.logical_not(_ember.logical_or(isnan(input), isinf(input)))


def allclose(input, other, rtol=1e-5, atol=1e-8, equal_nan=False):
    a, b = _np(input).astype(np.float64), _np(other).astype(np.float64)
    return builtins.bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def isclose(input, other, rtol=1e-5, atol=1e-8, equal_nan=False):
    a, b = _np(input).astype(np.float64), _np(other).astype(np.float64)
    return Tensor._from_ndarray(np.ascontiguousarray(np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)))


def equal(input, other):
    return tuple(input.shape) == tuple(other.shape) and builtins.bool(_ember.all(_ember.eq(input, other)).item())
