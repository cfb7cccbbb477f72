"""nn.init: in-place initialisers with torch's names, drawing from the global generator
(ember.manual_seed) or an explicit ember.Generator. They run without recording (as under
torch.no_grad()) and return the tensor."""
import math

from .. import _ember
from .._ember import Tensor


def _check(t, what):
    if not isinstance(t, Tensor):
        raise TypeError(f"nn.init.{what}: expected an ember.Tensor, got {type(t).__name__}")
    if not t.dtype.is_floating_point:
        raise ValueError(f"nn.init.{what}: expected a float32 or float64 tensor, got {t.dtype}")


def _write(t, values):
    t.detach().copy_(values.to(t.device) if values.device != t.device else values)
    return t


def _shape(t):
    return list(t.shape)


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    _check(tensor, "uniform_")
    if not a <= b:
        raise ValueError(f"nn.init.uniform_: expected a <= b, got a={a}, b={b}")
    from ..random import uniform
    return _write(tensor, uniform(_shape(tensor), a, b, tensor.dtype, generator=generator))


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    _check(tensor, "normal_")
    if std < 0:
        raise ValueError(f"nn.init.normal_: std must be >= 0, got {std}")
    from ..random import randn
    return _write(tensor, randn(*_shape(tensor), dtype=tensor.dtype, generator=generator) * float(std) + float(mean))


def constant_(tensor, val):
    _check(tensor, "constant_")
    tensor.detach().fill_(float(val))
    return tensor


def zeros_(tensor):
    return constant_(tensor, 0.0)


def ones_(tensor):
    return constant_(tensor, 1.0)


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.ndim < 2:
        raise ValueError(f"nn.init: fan in and fan out need a tensor of at least 2 dims, got shape {tuple(tensor.shape)}")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def calculate_gain(nonlinearity, param=None):
    if nonlinearity in ("linear", "conv1d", "conv2d", "sigmoid", "identity"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3.0
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else float(param)
        return math.sqrt(2.0 / (1 + slope * slope))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"nn.init.calculate_gain: unknown nonlinearity {nonlinearity!r} "
                     "(expected linear, conv1d, conv2d, sigmoid, tanh, relu, leaky_relu, selu)")


def _fan(tensor, mode):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"nn.init: mode must be 'fan_in' or 'fan_out', got {mode!r}")
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor, gain=1.0, generator=None):
    _check(tensor, "xavier_uniform_")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    b = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -b, b, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    _check(tensor, "xavier_normal_")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), generator)


def kaiming_uniform_(tensor, a=0.0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    _check(tensor, "kaiming_uniform_")
    b = calculate_gain(nonlinearity, a) * math.sqrt(3.0 / _fan(tensor, mode))
    return uniform_(tensor, -b, b, generator)


def kaiming_normal_(tensor, a=0.0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    _check(tensor, "kaiming_normal_")
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode)), generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Normal values, those outside [a, b] redrawn until every one is inside."""
    _check(tensor, "trunc_normal_")
    if not a < b:
        raise ValueError(f"nn.init.trunc_normal_: expected a < b, got a={a}, b={b}")
    import numpy as np
    from ..random import randn
    out = np.empty(tensor.numel(), dtype=np.float64)
    todo = np.arange(out.size)
    while todo.size:
        v = randn(int(todo.size), dtype=_ember.DType.float64, generator=generator).numpy() * std + mean
        ok = (v >= a) & (v <= b)
        out[todo[ok]] = v[ok]
        todo = todo[~ok]
    return _write(tensor, _ember.Tensor._from_ndarray(out.reshape(tuple(tensor.shape))).to(tensor.dtype))
