"""Autodiff of Python functions, in the style of HIPS Autograd: make_vjp traces f once on boxed
inputs and returns its VJP; grad and value_and_grad are make_vjp with a cotangent of one. Nested
calls open nested traces, so grad(grad(f)) works on any Python function of Ember ops."""
import numbers
import threading

from . import _ember
from ._ember import Tensor, DType


def _as_input(x, what):
    if isinstance(x, Tensor):
        return x
    if isinstance(x, numbers.Real) and not isinstance(x, bool):
        return _ember.scalar(float(x), DType.float64)  # HIPS-style: a Python number is a float64 scalar
    from ._tensor import tensor
    try:
        return tensor(x)
    except Exception as e:
        raise TypeError(f"{what}: expected tensors (or numbers, arrays), got {type(x).__name__}") from e


def _as_outputs(r, what):
    if isinstance(r, Tensor):
        return (r,), True
    if isinstance(r, (tuple, list)) and all(isinstance(t, Tensor) for t in r):
        return tuple(r), False
    raise TypeError(f"{what}: the function must return an ember.Tensor or a tuple of them, "
                    f"got {type(r).__name__}")


class _Vjp:
    """vjp(g) for one output, vjp(g1, g2, ...) for several: returns the inputs' cotangents (one
    tensor for one input, else a tuple), zeros for inputs the outputs do not depend on."""

    def __init__(self, fn, n_in, n_out):
        self._fn, self._n_in, self._n_out = fn, n_in, n_out

    def __call__(self, *gs):
        if len(gs) != self._n_out:
            raise _ember.Error(f"vjp: expected {self._n_out} cotangent(s), one per output, got {len(gs)}")
        out = self._fn([_as_input(g, "vjp") for g in gs])
        return out[0] if self._n_in == 1 else tuple(out)


def make_vjp(f, *xs):
    """ys, vjp = make_vjp(f, *xs): f's result (as f returned it) and its vector-Jacobian product."""
    xs = [_as_input(x, "make_vjp") for x in xs]
    shape = {}

    def traced(inputs):
        outs, single = _as_outputs(f(*inputs), "make_vjp")
        shape["single"] = single
        return outs

    ys, fn = _ember._make_vjp(traced, xs)
    vjp = _Vjp(fn, len(xs), len(ys))
    return (ys[0] if shape["single"] else tuple(ys)), vjp


def make_jvp(f, primals, tangents):
    """ys, tangents_out = make_jvp(f, primals, tangents): forward mode, J v through each
    primitive's JVP rule. primals and tangents are each a tensor or a tuple of tensors."""
    one = not isinstance(primals, (tuple, list))
    xs = [_as_input(x, "make_jvp") for x in ((primals,) if one else primals)]
    vs = [_as_input(v, "make_jvp") for v in ((tangents,) if not isinstance(tangents, (tuple, list)) else tangents)]
    if len(xs) != len(vs):
        raise _ember.Error(f"make_jvp: {len(xs)} primal(s) but {len(vs)} tangent(s); expected one tangent per primal")
    shape = {}

    def traced(inputs):
        outs, single = _as_outputs(f(*inputs), "make_jvp")
        shape["single"] = single
        return outs

    ys, ts = _ember._make_jvp(traced, xs, vs)
    if shape["single"]:
        return ys[0], ts[0]
    return tuple(ys), tuple(ts)


def _check_scalar(y, what):
    if not isinstance(y, Tensor) or y.numel() != 1:
        got = f"shape {y.shape}" if isinstance(y, Tensor) else type(y).__name__
        raise _ember.Error(f"{what}: the function must return a one-element tensor, got {got}")


def value_and_grad(f, argnum=0):
    """value_and_grad(f, argnum)(*xs) -> (f(*xs), df/dxs[argnum]); argnum may be a tuple."""
    many = isinstance(argnum, (tuple, list))
    nums = tuple(argnum) if many else (argnum,)

    def vg(*xs):
        xs = [_as_input(x, "grad") for x in xs]
        for n in nums:
            if not -len(xs) <= n < len(xs):
                raise _ember.Error(f"grad: argnum {n} is out of range for {len(xs)} argument(s)")
        fixed = list(xs)

        def only(*wrt):
            args = list(fixed)
            for n, w in zip(nums, wrt):
                args[n] = w
            return f(*args)

        y, vjp = make_vjp(only, *[xs[n] for n in nums])
        _check_scalar(y, "grad")
        g = vjp(_ember.ones_like(y))
        if many:
            g = tuple(g) if len(nums) > 1 else (g,)
        return y, g

    return vg


def grad(f, argnum=0):
    """grad(f, argnum)(*xs): the gradient of a one-element f with respect to xs[argnum]."""
    vg = value_and_grad(f, argnum)

    def g(*xs):
        return vg(*xs)[1]

    return g


# The no-grad scopes open on this thread, outermost first, so that enable_grad can lift them.
_open = threading.local()


def _stack():
    if not hasattr(_open, "guards"):
        _open.guards = []
    return _open.guards


class _GradMode:
    """Base of the grad-mode scopes: a context manager, and a decorator (as torch's)."""

    def __call__(self, fn):
        mode = self

        def wrapped(*a, **k):
            with type(mode)(*mode._args):
                return fn(*a, **k)
        wrapped.__name__ = getattr(fn, "__name__", "wrapped")
        wrapped.__doc__ = getattr(fn, "__doc__", None)
        return wrapped


class no_grad(_GradMode):
    """with ember.no_grad(): ops compute on raw values and record nothing (also a decorator)."""
    _args = ()

    def __enter__(self):
        self._guard = _ember._NoGrad()
        self._guard.__enter__()
        _stack().append(self)
        return self

    def __exit__(self, *exc):
        st = _stack()
        if st and st[-1] is self:
            st.pop()
        self._guard.__exit__(*exc)
        return False


class inference_mode(no_grad):
    """As no_grad (Ember has no separate inference mode; inference_mode(False) does nothing)."""

    def __init__(self, mode=True):
        self._args = (mode,)
        self._on = bool(mode)

    def __enter__(self):
        return super().__enter__() if self._on else self

    def __exit__(self, *exc):
        return super().__exit__(*exc) if self._on else False


class enable_grad(_GradMode):
    """Records again inside a no_grad scope (also a decorator)."""
    _args = ()

    def __enter__(self):
        st = _stack()
        self._lifted = list(st)
        for g in reversed(self._lifted):  # innermost first, so each guard restores what it saw
            g._guard.__exit__(None, None, None)
        st.clear()
        return self

    def __exit__(self, *exc):
        st = _stack()
        for g in self._lifted:
            g._guard = _ember._NoGrad()
            g._guard.__enter__()
            st.append(g)
        return False


class set_grad_enabled(_GradMode):
    """set_grad_enabled(False) turns recording off at once (as a call) or for a with-block."""

    def __init__(self, mode):
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled: mode must be a bool, got {type(mode).__name__}")
        self._args = (mode,)
        self._scope = no_grad() if not mode else enable_grad()
        self._scope.__enter__()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return self._scope.__exit__(*exc)


def is_grad_enabled():
    return _ember.grad_enabled()


def autodiff_trace(f, x, direction=None):
    """Baydin et al.'s evaluation traces of f at the numbers x (float64 scalars): the forward primal
    and tangent traces and the reverse adjoint trace, read back from the graph Ember records.
    direction defaults to the first unit vector. t.primal_table(), t.tangent_table(),
    t.adjoint_table() print them ("text" or "latex"); t.y, t.gradient, t.vars hold the numbers."""
    x = [float(v) for v in x]
    if direction is None:
        direction = [1.0] + [0.0] * (len(x) - 1)
    return _ember._autodiff_trace(lambda xs: f(*xs), x, [float(v) for v in direction])


def checkpoint(f, *xs):
    """y = checkpoint(f, *xs): f(*xs) without keeping f's intermediate values for backward; they
    are recomputed from xs when the gradient is needed (same dropout masks). In eager training f
    may use its module's parameters; under make_vjp/grad pass every differentiated tensor in xs."""
    xs = [_as_input(x, "checkpoint") for x in xs]

    def call(inputs):
        r = f(*inputs)
        if not isinstance(r, Tensor):
            raise TypeError(f"checkpoint: the function must return one ember.Tensor, got {type(r).__name__}")
        return r

    return _ember._checkpoint(call, xs)
