"""Custom ops with Python rules, recorded as one node like a built-in primitive (C++ CustomOp),
and gradcheck against float64 central differences (C++ gradcheck)."""
from . import _ember
from ._ember import Tensor


class CustomOp:
    """A primitive defined in Python.

    forward(*inputs) -> Tensor or NumPy array; inputs are untraced tensors (x.numpy() is free).
    vjp(g, i, inputs, output) -> input i's cotangent, written with Ember ops so that it can be
        differentiated again; or vjp_all(g, needs, inputs, output) -> one cotangent (or None) per input.
    jvp(tangents, inputs, output) -> the output's tangent (optional: forward mode transposes the VJP);
        tangents[i] is None where input i carries none.
    """

    def __init__(self, name, forward, vjp=None, vjp_all=None, jvp=None):
        for what, rule in (("forward", forward), ("vjp", vjp), ("vjp_all", vjp_all), ("jvp", jvp)):
            if rule is not None and not callable(rule) or (what == "forward" and rule is None):
                raise _ember.Error(f"CustomOp '{name}': {what} must be a function, got {type(rule).__name__}")
        self.name = name
        self._forward = forward
        self._op = _ember._custom_op(name, lambda ins: forward(*ins), vjp, vjp_all, jvp)

    def __call__(self, *inputs):
        from .autograd import _as_input
        return self._op([_as_input(x, f"custom op '{self.name}'") for x in inputs])

    @property
    def has_jvp(self):
        return self._op.has_jvp

    def __repr__(self):
        return f"CustomOp('{self.name}')"


def custom_op(name, vjp=None, vjp_all=None, jvp=None):
    """Decorator: @custom_op("softplus", vjp=...) on the forward function."""
    def wrap(forward):
        return CustomOp(name, forward, vjp=vjp, vjp_all=vjp_all, jvp=jvp)
    return wrap


def gradcheck(f, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, check_vjp=True, check_jvp=True,
              check_dot_product=True, seed=1234, raise_exception=False):
    """Checks f's VJP and JVP at `inputs` (float64 tensors) against central differences. Returns a
    GradcheckResult (truthy when ok) naming the worst element: mode, input, input_index,
    output_index, analytic and numeric values, and a message. raise_exception=True raises
    ember.Error with that message instead of returning a failed result."""
    if isinstance(inputs, Tensor):
        inputs = [inputs]
    inputs = list(inputs)

    def call(xs):
        r = f(*xs)
        if not isinstance(r, Tensor):
            raise TypeError(f"gradcheck: f must return one ember.Tensor, got {type(r).__name__}")
        return r

    r = _ember._gradcheck(call, inputs, eps, atol, rtol, check_vjp, check_jvp, check_dot_product, seed)
    if raise_exception and not r.ok:
        raise _ember.Error(r.message)
    return r
