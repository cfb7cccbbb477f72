"""Tensor factories with torch's spellings: sizes as ints or one sequence (zeros(2, 3),
zeros((2, 3))), dtype and device positionally (Ember's older form) or by keyword, and
requires_grad=."""
import numpy as np

from . import _ember
from ._ember import DType, Device


def split_args(args, kwargs, what, n_values=0):
    """(shape, values, dtype, device, requires_grad) from a factory's arguments: the leading ints or
    one sequence are the shape, then `n_values` values (full's fill value), then dtype and device."""
    args = list(args)
    if not args and "size" in kwargs:
        args = [kwargs.pop("size")]
    if args and isinstance(args[0], (list, tuple)):
        shape = list(args.pop(0))
    else:
        shape = []
        while args and isinstance(args[0], (int, np.integer)) and not isinstance(args[0], bool) \
                and len(args) > n_values:
            shape.append(int(args.pop(0)))
    for s in shape:
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)):
            raise TypeError(f"ember.{what}: sizes must be ints, got {s!r} ({type(s).__name__})")
    values = []
    for _ in range(n_values):
        if not args:
            raise TypeError(f"ember.{what}: missing the fill value")
        values.append(args.pop(0))
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    requires_grad = kwargs.pop("requires_grad", False)
    for a in args:
        if isinstance(a, DType) and dtype is None:
            dtype = a
        elif isinstance(a, (Device, str)) and device is None:
            device = a
        else:
            raise TypeError(f"ember.{what}: unexpected argument {a!r} (expected sizes, then dtype, device)")
    if kwargs:
        raise TypeError(f"ember.{what}: unexpected keyword arguments {sorted(kwargs)}")
    if dtype is not None and not isinstance(dtype, DType):
        raise TypeError(f"ember.{what}: dtype must be an ember dtype (ember.float32, ...), got {dtype!r}")
    return [int(s) for s in shape], values, dtype, device, bool(requires_grad)


def _finish(t, requires_grad, what):
    if requires_grad:
        if not t.dtype.is_floating_point:
            raise ValueError(f"ember.{what}: only float tensors can require grad, got {t.dtype}")
        t.requires_grad_()
    return t


def _device(device, name):
    from ._tensor import as_device, _check_reachable
    d = Device.cpu if device is None else as_device(device)
    _check_reachable(d, f"ember.{name}(..., device='{d.name}')")
    return d


def make_shaped(cpp_fn, name, n_values=0, default_dtype=DType.float32):
    """zeros/ones/empty (n_values=0) and full (n_values=1) with torch's spellings."""
    def factory(*args, **kwargs):
        shape, values, dtype, device, rg = split_args(args, kwargs, name, n_values)
        if dtype is None:
            dtype = default_dtype
            if values and isinstance(values[0], (bool, np.bool_)):
                dtype = DType.bool
            elif values and isinstance(values[0], (int, np.integer)) and name == "full":
                dtype = DType.int64
        return _finish(cpp_fn(shape, *[float(v) for v in values], dtype, _device(device, name)), rg, name)
    factory.__name__ = name
    factory.__doc__ = (f"ember.{name}(*size{', fill_value' if n_values else ''}, dtype=float32, device='cpu', "
                       "requires_grad=False): sizes as ints or one sequence, as torch."
                       + (" An int fill value gives int64, a bool one bool (as torch)." if n_values else ""))
    return factory


def make_like(cpp_fn, name, n_values=0):
    def factory(input, *values, dtype=None, device=None, requires_grad=False):
        t = cpp_fn(input, *[float(v) for v in values])
        if dtype is not None and t.dtype != dtype:
            t = t.to(dtype)
        if device is not None:
            d = _device(device, name)
            if t.device != d:
                t = t.to(d)
        return _finish(t, requires_grad, name)
    factory.__name__ = name
    return factory


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False):
    """arange(end), arange(start, end, step): int64 for int arguments, float32 when any is a float
    (as torch)."""
    if end is None:
        start, end = 0, start
    is_float = any(isinstance(v, (float, np.floating)) for v in (start, end, step))
    if step == 0:
        raise ValueError("ember.arange: step must not be 0")
    if not is_float and (dtype is None or dtype == DType.int64):
        t = _ember.arange(int(start), int(end), int(step), DType.int64)
    else:
        n = max(0, int(np.ceil((float(end) - float(start)) / float(step))))
        a = float(start) + float(step) * np.arange(n, dtype=np.float64)
        want = dtype or DType.float32
        t = _ember.Tensor._from_ndarray(np.ascontiguousarray(a)).to(want) if want != DType.float64 else \
            _ember.Tensor._from_ndarray(np.ascontiguousarray(a))
    if dtype is not None and t.dtype != dtype:
        t = t.to(dtype)
    if device is not None:
        d = _device(device, "arange")
        if t.device != d:
            t = t.to(d)
    return _finish(t, requires_grad, "arange")
