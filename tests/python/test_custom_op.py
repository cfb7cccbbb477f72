"""Custom ops with Python rules: recorded as one primitive, differentiated in both modes and
twice, checked by gradcheck, which names the worst element of a wrong rule."""
import numpy as np
import pytest

import ember
from helpers import randn, assert_close


def _softplus_np(x):
    return np.log1p(np.exp(x))


# forward in NumPy, VJP in Ember ops (so that grad of grad works)
softplus = ember.CustomOp(
    "py_softplus",
    forward=lambda x: _softplus_np(x.numpy()),
    vjp=lambda g, i, inputs, out: g * ember.sigmoid(inputs[0]),
    jvp=lambda tangents, inputs, out: tangents[0] * ember.sigmoid(inputs[0]),
)


def test_forward_vjp_jvp_against_numpy(rng):
    a = randn(rng, 3, 4)
    x = ember.from_numpy(a)
    assert_close(softplus(x), _softplus_np(a))
    sig = 1 / (1 + np.exp(-a))
    assert_close(ember.grad(lambda x: softplus(x).sum())(x), sig)
    v = randn(rng, 3, 4)
    _, t = ember.make_jvp(softplus, x, ember.from_numpy(v))
    assert_close(t, v * sig)
    assert "py_softplus" in ember.custom_op_names()
    assert any(op["name"] == "py_softplus" and not op["builtin"] for op in ember.registered_ops())


def test_gradcheck_passes_and_grad_of_grad(rng):
    a = randn(rng, 2, 3)
    r = ember.gradcheck(softplus, [ember.from_numpy(a)])
    assert r.ok and bool(r), r.message
    d2 = ember.grad(lambda x: ember.grad(lambda y: softplus(y).sum())(x).sum())(ember.from_numpy(a))
    sig = 1 / (1 + np.exp(-a))
    assert_close(d2, sig * (1 - sig))


def test_backward_on_leaves_runs_the_python_rule(rng):
    a = randn(rng, 5)
    x = ember.from_numpy(a.copy()).requires_grad_()
    (softplus(x) * 3.0).sum().backward()
    assert_close(x.grad, 3 / (1 + np.exp(-a)))


def test_wrong_vjp_is_caught_with_the_worst_element(rng):
    bad = ember.CustomOp("py_softplus_bad", forward=lambda x: _softplus_np(x.numpy()),
                         vjp=lambda g, i, inputs, out: g * ember.sigmoid(inputs[0]) * 1.1)
    a = randn(rng, 2, 3)
    r = ember.gradcheck(bad, [ember.from_numpy(a)], check_jvp=False, check_dot_product=False)
    assert not r.ok and not bool(r)
    assert r.mode == "vjp" and r.input == 0
    assert len(r.input_index) == 2 and len(r.output_index) == 2
    sig = 1 / (1 + np.exp(-a))
    # the 10% error is largest in absolute terms where sigmoid is largest
    assert r.numeric == pytest.approx(sig.max(), rel=1e-6)
    assert r.analytic == pytest.approx(1.1 * sig.max(), rel=1e-6)
    assert tuple(r.input_index) == np.unravel_index(sig.argmax(), sig.shape)
    assert "vjp" in r.message
    with pytest.raises(ember.Error):
        ember.gradcheck(bad, [ember.from_numpy(a)], raise_exception=True)


def test_vjp_all_and_several_inputs(rng):
    mul_add = ember.CustomOp(
        "py_mul_add", forward=lambda x, y: x * y + x,
        vjp_all=lambda g, needs, ins, out: (g * ins[1] + g if needs[0] else None, g * ins[0] if needs[1] else None))
    a, b = randn(rng, 3), randn(rng, 3)
    r = ember.gradcheck(mul_add, [ember.from_numpy(a), ember.from_numpy(b)])
    assert r.ok, r.message
    dx, dy = ember.make_vjp(mul_add, ember.from_numpy(a), ember.from_numpy(b))[1](ember.ones([3], ember.float64))
    assert_close(dx, b + 1)
    assert_close(dy, a)
    assert not mul_add.has_jvp  # forward mode transposes the VJP
    _, t = ember.make_jvp(mul_add, (ember.from_numpy(a), ember.from_numpy(b)),
                          (ember.ones([3], ember.float64), ember.zeros([3], ember.float64)))
    assert_close(t, b + 1)


def test_decorator_form(rng):
    @ember.custom_op("py_cube", vjp=lambda g, i, ins, out: g * 3.0 * ins[0] * ins[0])
    def cube(x):
        return x * x * x

    a = randn(rng, 4)
    assert_close(ember.grad(lambda x: cube(x).sum())(ember.from_numpy(a)), 3 * a * a)


def test_errors_in_rules_become_python_exceptions(rng):
    def boom(g, i, ins, out):
        raise ValueError("vjp exploded")

    op = ember.CustomOp("py_boom", forward=lambda x: x * 2.0, vjp=boom)
    x = ember.from_numpy(randn(rng, 3))
    with pytest.raises(ValueError, match="vjp exploded"):
        ember.grad(lambda x: op(x).sum())(x)
    wrong_shape = ember.CustomOp("py_wrong_shape", forward=lambda x: x * 2.0,
                                 vjp=lambda g, i, ins, out: ember.ones([7], ember.float64))
    with pytest.raises(ember.Error, match="py_wrong_shape"):
        ember.grad(lambda x: wrong_shape(x).sum())(x)
    not_a_tensor = ember.CustomOp("py_not_tensor", forward=lambda x: "hello")
    with pytest.raises(Exception):
        not_a_tensor(x)
    with pytest.raises(ember.Error, match="vjp or vjp_all"):
        ember.CustomOp("py_both", forward=lambda x: x, vjp=boom, vjp_all=boom)


def test_interpreter_exits_cleanly_with_custom_ops_and_shared_arrays_alive():
    # The op table (a C++ static) outlives the interpreter and keeps Python rules; tensors on NumPy
    # memory may be alive in globals at exit. Neither may crash or print at shutdown.
    import subprocess
    import sys
    code = ("import numpy as np, ember\n"
            "op = ember.CustomOp('py_exit_op', forward=lambda x: x.numpy() * 2, vjp=lambda g, i, ins, out: g * 2.0)\n"
            "keep = ember.from_numpy(np.ones(1000))\n"
            "y, vjp = ember.make_vjp(op, keep)\n"
            "view = keep[::2].numpy()\n"
            "print('done')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "done" and r.stderr == ""
