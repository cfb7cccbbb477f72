"""nn.utils: gradient clipping under torch's names."""
import math

from .. import _ember
from .._ember import Tensor


def _params(parameters):
    if isinstance(parameters, Tensor):
        return [parameters]
    return [p for p in parameters]


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scales every gradient by min(1, max_norm / total_norm) in place; returns the total norm of
    the gradients before clipping (a 0-d float32 tensor, as torch). Only the 2-norm is supported."""
    if float(norm_type) != 2.0:
        raise ValueError(f"clip_grad_norm_: only norm_type=2 is supported by Ember, got {norm_type}")
    ps = [p for p in _params(parameters) if p.grad is not None]
    if not ps:
        return _ember.scalar(0.0)
    total = _ember.clip_grad_norm(ps, float(max_norm))
    if error_if_nonfinite and not math.isfinite(total):
        raise RuntimeError(f"clip_grad_norm_: the total norm of the gradients is {total}")
    return _ember.scalar(float(total))


def clip_grad_value_(parameters, clip_value):
    from .. import autograd
    with autograd.no_grad():
        for p in _params(parameters):
            if p.grad is not None:
                p.grad.clamp_(-float(clip_value), float(clip_value))


def parameters_to_vector(parameters):
    return _ember.concat([p.reshape([-1]) for p in _params(parameters)], 0)
