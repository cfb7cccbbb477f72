"""Autodiff of Python functions: make_vjp, grad, value_and_grad, make_jvp, backward, no_grad,
grad of grad; every result against the analytic derivative in NumPy."""
import numpy as np
import pytest

import ember
from helpers import randn, assert_close


def test_baydin_example_values_and_gradients():
    # y = ln(x1) + x1*x2 - sin(x2) at (2, 5), as in the C++ quick start
    f = lambda x1, x2: ember.log(x1) + x1 * x2 - ember.sin(x2)
    y, g = ember.value_and_grad(f, argnum=(0, 1))(2.0, 5.0)
    assert y.item() == pytest.approx(np.log(2) + 10 - np.sin(5))
    assert g[0].item() == pytest.approx(5.5)
    assert g[1].item() == pytest.approx(2 - np.cos(5))
    ys, dy = ember.make_jvp(f, (ember.scalar(2.0, ember.float64), ember.scalar(5.0, ember.float64)),
                            (ember.scalar(1.0, ember.float64), ember.scalar(0.0, ember.float64)))
    assert dy.item() == pytest.approx(5.5)


def test_make_vjp_several_inputs_and_outputs(rng):
    a, b = randn(rng, 3, 4), randn(rng, 4, 2)
    x, w = ember.from_numpy(a), ember.from_numpy(b)
    (y1, y2), vjp = ember.make_vjp(lambda x, w: (x @ w, x.exp().sum(1)), x, w)
    assert_close(y1, a @ b)
    g1, g2 = randn(rng, 3, 2), randn(rng, 3)
    dx, dw = vjp(ember.from_numpy(g1), ember.from_numpy(g2))
    assert_close(dx, g1 @ b.T + g2[:, None] * np.exp(a))
    assert_close(dw, a.T @ g1)
    # a VJP can be called again
    dx2, _ = vjp(ember.from_numpy(g1), ember.from_numpy(g2))
    assert_close(dx2, dx.numpy())


def test_make_vjp_single_input_returns_one_cotangent(rng):
    a = randn(rng, 5)
    y, vjp = ember.make_vjp(lambda x: ember.tanh(x), ember.from_numpy(a))
    g = randn(rng, 5)
    assert_close(vjp(ember.from_numpy(g)), g * (1 - np.tanh(a) ** 2))


def test_unused_input_gets_zeros(rng):
    a, b = randn(rng, 3), randn(rng, 3)
    _, vjp = ember.make_vjp(lambda x, y: x * 2.0, ember.from_numpy(a), ember.from_numpy(b))
    dx, dy = vjp(ember.ones([3], ember.float64))
    assert_close(dx, np.full(3, 2.0))
    assert_close(dy, np.zeros(3))


def test_grad_of_grad_of_python_functions(rng):
    f = lambda x: (ember.sin(x) * x).sum()
    a = randn(rng, 4)
    x = ember.from_numpy(a)
    assert_close(ember.grad(f)(x), np.cos(a) * a + np.sin(a))
    d2 = ember.grad(lambda x: ember.grad(f)(x).sum())(x)
    assert_close(d2, -np.sin(a) * a + 2 * np.cos(a))
    d3 = ember.grad(lambda x: ember.grad(lambda x: ember.grad(f)(x).sum())(x).sum())(x)
    assert_close(d3, -np.cos(a) * a - 3 * np.sin(a))


def test_grad_argnum_and_errors(rng):
    f = lambda x, w: (x @ w).sum()
    a, b = randn(rng, 2, 3), randn(rng, 3, 4)
    assert_close(ember.grad(f, argnum=1)(ember.from_numpy(a), ember.from_numpy(b)),
                 np.repeat(a.sum(0)[:, None], 4, axis=1))
    with pytest.raises(ember.Error, match="one-element"):
        ember.grad(lambda x: x * 2.0)(ember.from_numpy(a))
    with pytest.raises(ember.Error, match="argnum"):
        ember.grad(f, argnum=3)(ember.from_numpy(a), ember.from_numpy(b))
    with pytest.raises(TypeError, match="must return"):
        ember.make_vjp(lambda x: 3, ember.from_numpy(a))


def test_python_exception_inside_traced_function_propagates():
    def f(x):
        raise ValueError("boom from Python")
    with pytest.raises(ValueError, match="boom from Python"):
        ember.grad(f)(ember.ones([2]))
    # the tracer is usable afterwards
    assert ember.grad(lambda x: (x * x).sum())(ember.ones([2], ember.float64)).tolist() == [2.0, 2.0]


def test_jvp_matches_vjp(rng):
    a, v, u = randn(rng, 3, 4), randn(rng, 3, 4), randn(rng, 3)
    f = lambda x: ember.log_softmax(x, 1).exp().sum(1) * ember.sigmoid(x).sum(1)
    _, jv = ember.make_jvp(f, ember.from_numpy(a), ember.from_numpy(v))
    _, vjp = ember.make_vjp(f, ember.from_numpy(a))
    jtu = vjp(ember.from_numpy(u))
    assert (jv.numpy() * u).sum() == pytest.approx((v * jtu.numpy()).sum(), rel=1e-9)


def test_backward_on_leaves(rng):
    a, b = randn(rng, 3, 4), randn(rng, 4)
    x = ember.from_numpy(a.copy()).requires_grad_()
    w = ember.from_numpy(b.copy()).requires_grad_()
    assert x.requires_grad and x.grad is None
    loss = ((x * w).sum(1) ** 2.0).mean()
    loss.backward()
    s = (a * b).sum(1)
    assert_close(x.grad, 2 * s[:, None] * b / 3)
    assert_close(w.grad, (2 * s[:, None] * a).sum(0) / 3)
    loss2 = (x * w).sum()  # gradients accumulate
    loss2.backward()
    assert_close(w.grad, (2 * s[:, None] * a).sum(0) / 3 + a.sum(0))
    x.zero_grad()
    assert x.grad is None


def test_no_grad_records_nothing(rng):
    x = ember.from_numpy(randn(rng, 3)).requires_grad_()
    with ember.no_grad():
        assert not ember.grad_enabled()
        y = x * 2.0
    assert ember.grad_enabled()
    assert not y.requires_grad
    assert (x * 2.0).requires_grad

    @ember.no_grad()
    def double(t):
        return t * 2.0
    assert not double(x).requires_grad


def test_detach_and_requires_grad_off(rng):
    x = ember.from_numpy(randn(rng, 3)).requires_grad_()
    assert not x.detach().requires_grad
    x.requires_grad_(False)
    assert not x.requires_grad


def test_gil_is_released_during_kernels():
    import threading
    import time
    x = ember.randn([700, 700])
    done = []
    ticks = []

    def work():
        for _ in range(4):
            x @ x
        done.append(True)

    t = threading.Thread(target=work)
    t.start()
    while not done:
        ticks.append(time.perf_counter())
        time.sleep(0.001)
    t.join()
    # The main thread kept running Python while the matmuls ran (with the GIL held it would not).
    assert len(ticks) >= 3


def test_autodiff_trace_gives_baydins_tables():
    t = ember.autodiff_trace(lambda x1, x2: ember.log(x1) + x1 * x2 - ember.sin(x2), [2.0, 5.0])
    assert t.y == pytest.approx(np.log(2) + 10 - np.sin(5))
    assert t.gradient == pytest.approx([5.5, 2 - np.cos(5)])
    assert t.y_tangent == pytest.approx(5.5)
    assert [v["op"] for v in t.vars] == ["input", "input", "log", "mul", "add", "sin", "sub"]  # Python order
    primal = t.primal_table()
    assert "11.652" in primal and "0.693" in primal
    assert "5.5" in t.tangent_table()
    assert "1.716" in t.adjoint_table()
    assert "tabular" in t.primal_table("latex")
    with pytest.raises(ember.Error, match="format"):
        t.primal_table("html")
