"""ember.autocast (torch.autocast's signature): the matmul family in bf16, the float32 list in
float32, gradients of float32 leaves in float32, nesting, enabled=False, the decorator, and the
errors a torch user expects for a bad device_type or dtype."""
import threading

import numpy as np
import pytest

import ember
from helpers import randn


def f32(rng, *shape):
    return ember.from_numpy(randn(rng, *shape, dtype=np.float32))


def test_off_by_default_and_state_restored():
    assert not ember.is_autocast_enabled()
    with ember.autocast("cpu", dtype=ember.bfloat16) as ac:
        assert ember.is_autocast_enabled() and ember.is_autocast_enabled("cpu")
        assert ember.get_autocast_dtype("cpu") == ember.bfloat16
        assert ac.fast_dtype == ember.bfloat16
        with ember.autocast(dtype=ember.float16):
            assert ember.get_autocast_dtype() == ember.float16
            with ember.autocast("cpu", enabled=False):
                assert not ember.is_autocast_enabled()
            assert ember.is_autocast_enabled()
        assert ember.get_autocast_dtype() == ember.bfloat16
    assert not ember.is_autocast_enabled()


def test_restored_after_an_exception():
    with pytest.raises(KeyError):
        with ember.autocast("cpu"):
            raise KeyError("leave")
    assert not ember.is_autocast_enabled()


def test_matmul_runs_in_bf16_within_its_rounding(rng):
    a, b = randn(rng, 7, 33, dtype=np.float32), randn(rng, 33, 5, dtype=np.float32)
    with ember.autocast("cpu", dtype=ember.bfloat16):
        y = ember.from_numpy(a) @ ember.from_numpy(b)
        y2 = ember.linear(ember.from_numpy(a), ember.from_numpy(b.T.copy()))
    assert y.dtype == ember.bfloat16 and y2.dtype == ember.bfloat16
    exact = a.astype(np.float64) @ b.astype(np.float64)
    got = y.float().numpy()
    np.testing.assert_allclose(got, exact, atol=0.1, rtol=1e-2)
    assert not np.array_equal(got, (a @ b).astype(np.float32))  # it did round
    np.testing.assert_array_equal(y2.float().numpy(), got)


def test_float32_ops_return_float32(rng):
    x = f32(rng, 6, 33).bfloat16()
    t = ember.from_numpy(np.array([0, 32, 5, 7, 1, 20], dtype=np.int64))
    w, b = f32(rng, 33), f32(rng, 33)
    with ember.autocast("cpu"):
        outs = {"softmax": ember.softmax(x, -1), "log_softmax": ember.log_softmax(x, -1),
                "layer_norm": ember.layer_norm(x, w, b), "cross_entropy": ember.cross_entropy(x, t),
                "sum": x.sum()}
    for name, y in outs.items():
        assert y.dtype == ember.float32, name
    np.testing.assert_array_equal(outs["softmax"].numpy(), ember.softmax(x.float(), -1).numpy())


def test_enabled_false_changes_nothing(rng):
    a, b = f32(rng, 4, 6), f32(rng, 6, 3)
    with ember.autocast("cpu", dtype=ember.bfloat16, enabled=False):
        y = a @ b
    assert y.dtype == ember.float32
    np.testing.assert_array_equal(y.numpy(), (a @ b).numpy())


def test_gradients_reach_float32_leaves(rng):
    x0, w0 = randn(rng, 9, 33, dtype=np.float32), 0.3 * randn(rng, 5, 33, dtype=np.float32)
    t = ember.from_numpy(np.array([0, 4, 2, 1, 3, 3, 0, 2, 4], dtype=np.int64))

    def grads(amp):
        x, w = ember.from_numpy(x0.copy()).requires_grad_(), ember.from_numpy(w0.copy()).requires_grad_()
        with ember.autocast("cpu", enabled=amp):
            loss = ember.cross_entropy(ember.linear(x, w), t)
        assert loss.dtype == ember.float32
        loss.backward()
        return x.grad, w.grad

    ref, amp = grads(False), grads(True)
    for r, g in zip(ref, amp):
        assert g.dtype == ember.float32
        r, g = r.numpy(), g.numpy()
        err = np.linalg.norm(g - r) / np.linalg.norm(r)
        assert 0 < err < 3e-2


def test_decorator_and_threads(rng):
    a, b = f32(rng, 3, 4), f32(rng, 4, 2)

    @ember.autocast("cpu")
    def product():
        return a @ b

    assert product().dtype == ember.bfloat16
    assert not ember.is_autocast_enabled()
    seen = []
    with ember.autocast("cpu"):
        th = threading.Thread(target=lambda: seen.append(ember.is_autocast_enabled()))
        th.start()
        th.join()
    assert seen == [False]  # the scope is per thread, as torch's


def test_bad_arguments():
    with pytest.raises(ValueError, match="bfloat16 or ember.float16"):
        ember.autocast("cpu", dtype=ember.float32)
    with pytest.raises(ValueError):
        ember.autocast("cpu", dtype=ember.float64)
    with pytest.raises(TypeError, match="dtype"):
        ember.autocast("cpu", dtype="bfloat16")
    with pytest.raises(TypeError, match="enabled"):
        ember.autocast("cpu", enabled="yes")
    with pytest.raises(RuntimeError, match="device_type"):
        ember.autocast("tpu")
    with pytest.raises(TypeError, match="device_type"):
        ember.autocast(ember.bfloat16)
    assert not ember.is_autocast_enabled()


def test_op_lists():
    lower, f = ember.autocast_lower_precision_ops(), ember.autocast_float32_ops()
    assert {"matmul", "linear", "attention"} <= set(lower)
    assert {"softmax", "log_softmax", "cross_entropy", "layer_norm", "sum"} <= set(f)
    assert not set(lower) & set(f)
