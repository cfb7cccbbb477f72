"""In-place arithmetic from Python, the saved-tensor check behind it, and ember.checkpoint: each
against NumPy or against the same computation without the feature."""
import numpy as np
import pytest

import ember
from helpers import randn, assert_close


def test_inplace_ops_match_numpy_and_write_through_views(rng):
    a, b = randn(rng, 3, 4), randn(rng, 4)
    x = ember.from_numpy(a.copy())
    x.add_(ember.from_numpy(b), alpha=0.5).mul_(2.0).sub_(1.0).div_(ember.from_numpy(np.abs(b) + 1)).clamp_(-0.5, 0.5)
    want = np.clip(((a + 0.5 * b) * 2.0 - 1.0) / (np.abs(b) + 1), -0.5, 0.5)
    assert_close(x, want, rtol=1e-12, atol=1e-12)
    base = ember.from_numpy(a.copy())
    base[:, 1:3].mul_(10.0)  # a view: the base changes
    want = a.copy()
    want[:, 1:3] *= 10
    assert_close(base, want, rtol=1e-12, atol=1e-12)


def test_inplace_on_a_tracked_tensor_is_refused_unless_no_grad(rng):
    w = ember.from_numpy(randn(rng, 3)).requires_grad_()
    with pytest.raises(ember.Error, match="mul_: cannot modify a leaf that requires grad"):
        w.mul_(2.0)
    before = w.detach().numpy().copy()
    with ember.no_grad():
        w.add_(1.0)
    assert_close(w.detach(), before + 1.0)


def test_a_saved_tensor_changed_before_backward_raises(rng):
    w = ember.from_numpy(randn(rng, 3, 2)).requires_grad_()
    loss = (w * w).sum()
    with ember.no_grad():
        w.mul_(0.5)
    with pytest.raises(ember.Error, match="backward through 'mul': input 0 .* modified in place by 'mul_'"):
        loss.backward()


def test_checkpoint_gives_the_plain_gradient_and_replays_once(rng):
    calls = []
    w1, w2 = ember.from_numpy(randn(rng, 4, 6)), ember.from_numpy(randn(rng, 6, 3))

    def block(x, a, b):
        calls.append(1)
        return ember.tanh(x @ a) @ b

    x = ember.from_numpy(randn(rng, 5, 4))
    f_plain = lambda a, b: (block(x, a, b) ** 2).sum()
    f_ckpt = lambda a, b: (ember.checkpoint(block, x, a, b) ** 2).sum()
    g_plain = ember.grad(f_plain, argnum=(0, 1))(w1, w2)
    calls.clear()
    g_ckpt = ember.grad(f_ckpt, argnum=(0, 1))(w1, w2)
    assert len(calls) == 2  # the forward and one replay in backward
    for p, c in zip(g_plain, g_ckpt):
        assert_close(c, p.numpy(), rtol=1e-12, atol=1e-12)
    with pytest.raises(TypeError, match="must return one ember.Tensor"):
        ember.grad(lambda a: ember.checkpoint(lambda t: (t, t), a).sum())(w1)
