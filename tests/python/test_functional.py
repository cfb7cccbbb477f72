"""ember.nn.functional against float64 NumPy references, with torch's argument names; and against
torch itself where it is importable (skipped visibly otherwise)."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from helpers import randn, assert_close


def _softmax(a, axis=-1):
    e = np.exp(a - a.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def test_int_sizes_for_pools_and_conv(rng):
    x0 = randn(rng, 2, 3, 6, 6)
    x = ember.from_numpy(x0)
    assert_close(F.max_pool2d(x, 2), x0.reshape(2, 3, 3, 2, 3, 2).max((3, 5)), rtol=0)
    assert_close(ember.max_pool2d(x, 2), x0.reshape(2, 3, 3, 2, 3, 2).max((3, 5)), rtol=0)
    assert_close(x.avg_pool2d(3), x0.reshape(2, 3, 2, 3, 2, 3).mean((3, 5)), rtol=1e-12)
    assert_close(F.adaptive_avg_pool2d(x, 1), x0.mean((2, 3), keepdims=True), rtol=1e-12)
    w = ember.from_numpy(randn(rng, 4, 3, 1, 1))
    assert_close(F.conv2d(x, w, stride=2), np.einsum("nchw,oc->nohw", x0[:, :, ::2, ::2], w.numpy()[:, :, 0, 0]),
                 rtol=1e-10)


def test_losses_and_softmax_family(rng):
    logits0 = randn(rng, 4, 5, 3)  # (N, C, d1): torch's K-dimensional cross entropy
    t0 = rng.integers(0, 5, size=(4, 3))
    t0[0, 0] = -100
    logits, t = ember.from_numpy(logits0), ember.from_numpy(t0)
    logp = np.log(_softmax(np.moveaxis(logits0, 1, -1)))
    picked = -np.take_along_axis(logp, np.maximum(t0, 0)[..., None], -1)[..., 0]
    keep = t0 != -100
    assert_close(F.cross_entropy(logits, t), picked[keep].mean(), rtol=1e-10)
    none = F.cross_entropy(logits, t, reduction="none")
    assert none.shape == (4, 3)
    assert_close(none, np.where(keep, picked, 0.0), rtol=1e-10)
    sm = 0.1
    smooth = (1 - sm) * picked - sm / 5 * logp.sum(-1)
    assert_close(F.cross_entropy(logits, t, label_smoothing=sm, reduction="sum"), smooth[keep].sum(), rtol=1e-10)
    x0 = randn(rng, 3, 4)
    assert_close(F.softmax(ember.from_numpy(x0), dim=0), _softmax(x0, 0), rtol=1e-12)
    assert_close(F.log_softmax(ember.from_numpy(x0), dim=1), np.log(_softmax(x0, 1)), rtol=1e-12)


def test_linear_embedding_layer_norm_dropout(rng):
    x0, w0, b0 = randn(rng, 2, 3, 4), randn(rng, 5, 4), randn(rng, 5)
    assert_close(F.linear(ember.from_numpy(x0), ember.from_numpy(w0), ember.from_numpy(b0)), x0 @ w0.T + b0,
                 rtol=1e-12)
    table = randn(rng, 6, 3)
    ids = np.array([[0, 5], [2, 2]])
    assert_close(F.embedding(ember.from_numpy(ids), ember.from_numpy(table)), table[ids], rtol=0)
    g, b = randn(rng, 4), randn(rng, 4)
    ref = (x0 - x0.mean(-1, keepdims=True)) / np.sqrt(x0.var(-1, keepdims=True) + 1e-5) * g + b
    assert_close(F.layer_norm(ember.from_numpy(x0), (4,), ember.from_numpy(g), ember.from_numpy(b)), ref, rtol=1e-9)
    assert_close(F.layer_norm(ember.from_numpy(x0), 4), (x0 - x0.mean(-1, keepdims=True)) /
                 np.sqrt(x0.var(-1, keepdims=True) + 1e-5), rtol=1e-9)
    np.testing.assert_array_equal(F.dropout(ember.from_numpy(x0), 0.5, training=False).numpy(), x0)


def test_gradcheck_through_the_composite_attention(rng):
    q, k, v = (ember.from_numpy(randn(rng, 2, n, 3)) for n in (3, 4, 4))
    f = lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True)  # noqa: E731
    assert ember.gradcheck(f, [q, k, v]).ok
    x = ember.from_numpy(randn(rng, 5, 4))
    assert ember.gradcheck(lambda x: x[ember.tensor([4, 0, 4])], [x]).ok


def test_against_torch_where_installed(rng):
    torch = pytest.importorskip("torch")
    q, k, v = randn(rng, 2, 3, 4), randn(rng, 2, 5, 4), randn(rng, 2, 5, 4)
    want = torch.nn.functional.scaled_dot_product_attention(torch.from_numpy(q), torch.from_numpy(k),
                                                            torch.from_numpy(v), is_causal=True).numpy()
    got = F.scaled_dot_product_attention(ember.from_numpy(q), ember.from_numpy(k), ember.from_numpy(v), is_causal=True)
    assert_close(got, want, rtol=1e-10, atol=1e-12)
    x = randn(rng, 4, 6)
    tv, ti = torch.from_numpy(x).max(1)
    ev, ei = ember.from_numpy(x).max(1)
    np.testing.assert_array_equal(ev.numpy(), tv.numpy())
    np.testing.assert_array_equal(ei.numpy(), ti.numpy())
