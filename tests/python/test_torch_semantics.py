"""What a PyTorch user would get silently wrong: buffers in state_dict, element-wise ==, max(dim)
returning indices, layers drawing from the global seed, Sequential(OrderedDict), causal alignment,
tied weights counted once."""
import copy
import pickle
from collections import OrderedDict

import numpy as np
import pytest

import ember
from ember import nn
import ember.nn.functional as F
from helpers import randn, assert_close


def test_batch_norm_running_stats_are_buffers_saved_and_reloaded(rng, tmp_path):
    def make():
        return nn.Sequential(nn.Conv2d(2, 3, 3, padding=1), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(),
                             nn.Linear(3 * 4 * 4, 5))
    net = make()
    net.train()
    for _ in range(3):
        net(ember.from_numpy(randn(rng, 6, 2, 4, 4).astype(np.float32) * 3 + 2))
    names = [n for n, _ in net.named_buffers()]
    assert names == ["1.running_mean", "1.running_var", "1.num_batches_tracked"]
    assert int(net[1].num_batches_tracked.item()) == 3
    sd = net.state_dict()
    assert "1.running_mean" in sd and "1.running_var" in sd
    assert not np.allclose(sd["1.running_mean"].numpy(), 0)  # the statistics moved away from the start
    net.eval()
    x = ember.from_numpy(randn(rng, 2, 2, 4, 4).astype(np.float32))
    want = net(x).numpy().copy()
    ember.save(sd, tmp_path / "cnn.safetensors")
    other = make()
    other.load_state_dict(ember.load(tmp_path / "cnn.safetensors"))
    other.eval()
    np.testing.assert_array_equal(other(x).numpy(), want)
    np.testing.assert_array_equal(other[1].running_var.numpy(), net[1].running_var.numpy())


def test_register_buffer_persistent_and_not(rng):
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("mask", ember.tril(ember.ones(4, 4)).reshape(1, 1, 4, 4))
            self.register_buffer("scratch", ember.zeros(2), persistent=False)
            self.lin = nn.Linear(2, 2)

    m = M()
    assert [n for n, _ in m.named_buffers()] == ["mask", "scratch"]
    assert len(m.buffers()) == 2 and all(isinstance(b, ember.Tensor) for b in m.buffers())
    assert list(m.state_dict()) == ["mask", "lin.weight", "lin.bias"]
    assert "mask" not in [n for n, _ in m.named_parameters()]
    m.mask = ember.zeros(1, 1, 4, 4)  # assigning a tensor replaces the buffer
    assert m.state_dict()["mask"].numpy().sum() == 0


def test_eq_ne_are_elementwise_and_hash_is_identity(rng):
    a = ember.tensor([1.0, 2.0, 3.0])
    b = ember.tensor([1.0, 5.0, 3.0])
    assert (a == b).tolist() == [True, False, True]
    assert (a != b).tolist() == [False, True, False]
    assert (a == 2.0).tolist() == [False, True, False]
    assert (a != 2).tolist() == [True, False, True]
    bias = ember.tril(ember.ones(3, 3))
    att = ember.from_numpy(randn(rng, 3, 3).astype(np.float32))
    filled = att.masked_fill(bias == 0, float("-inf"))  # nanoGPT's line
    assert np.isneginf(filled.numpy()[0, 1]) and filled.numpy()[1, 0] == att.numpy()[1, 0]
    assert (a == None) is False  # noqa: E711  (no tensor to compare with: False, as Python's default)
    d = {a: "a", b: "b"}  # tensors stay usable as dict keys, by identity
    assert d[a] == "a" and d[b] == "b" and a in {a} and b not in {a}


def test_max_min_along_a_dim_return_values_and_indices(rng):
    x0 = randn(rng, 4, 5)
    x = ember.from_numpy(x0)
    v, i = x.max(1)
    assert v.shape == (4,) and i.shape == (4,)
    np.testing.assert_array_equal(v.numpy(), x0.max(1))
    np.testing.assert_array_equal(i.numpy(), x0.argmax(1))
    r = ember.min(x, dim=0, keepdim=True)
    np.testing.assert_array_equal(r.values.numpy(), x0.min(0, keepdims=True))
    np.testing.assert_array_equal(r.indices.numpy(), x0.argmin(0)[None])
    assert x.max().item() == x0.max()
    assert ember.argmax(x).item() == x0.argmax()  # flattened, as torch
    assert x.argmin(1).tolist() == x0.argmin(1).tolist()
    y = ember.from_numpy(randn(rng, 4, 5))
    np.testing.assert_array_equal(ember.max(x, y).numpy(), np.maximum(x0, y.numpy()))


def test_layers_draw_from_the_global_generator(rng):
    ember.manual_seed(1)
    a, b = nn.Linear(8, 8), nn.Linear(8, 8)
    assert not np.array_equal(a.weight.numpy(), b.weight.numpy())
    wte, wpe = nn.Embedding(16, 4), nn.Embedding(8, 4)
    assert not np.array_equal(wte.weight.numpy()[:8], wpe.weight.numpy())
    conv1, conv2 = nn.Conv2d(2, 2, 3), nn.Conv2d(2, 2, 3)
    assert not np.array_equal(conv1.weight.numpy(), conv2.weight.numpy())
    ember.manual_seed(1)
    a2 = nn.Linear(8, 8)
    np.testing.assert_array_equal(a2.weight.numpy(), a.weight.numpy())
    # an explicit seed still gives the C++ layer's weights, whatever the global state
    np.testing.assert_array_equal(nn.Linear(8, 8, seed=3).weight.numpy(), nn.Linear(8, 8, seed=3).weight.numpy())


def test_sequential_from_an_ordered_dict():
    s = nn.Sequential(OrderedDict([("fc", nn.Linear(3, 4)), ("act", nn.ReLU()), ("out", nn.Linear(4, 2))]))
    assert len(s) == 3
    assert [n for n, _ in s.named_parameters()] == ["fc.weight", "fc.bias", "out.weight", "out.bias"]
    assert s(ember.ones(5, 3)).shape == (5, 2)


def _attention_reference(q, k, v, top_left):
    L, S = q.shape[-2], k.shape[-2]
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    i, j = np.arange(L)[:, None], np.arange(S)[None]
    allowed = j <= i if top_left else j <= i + (S - L)
    s = np.where(allowed, s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


@pytest.mark.parametrize("L,S", [(3, 5), (5, 5), (1, 4)])
def test_sdpa_is_causal_aligns_top_left_as_torch(rng, L, S):
    q, k, v = randn(rng, 2, L, 4), randn(rng, 2, S, 4), randn(rng, 2, S, 4)
    out = F.scaled_dot_product_attention(ember.from_numpy(q), ember.from_numpy(k), ember.from_numpy(v), is_causal=True)
    assert_close(out, _attention_reference(q, k, v, top_left=True), rtol=1e-10, atol=1e-12)
    # ember.attention keeps the KV-cache alignment (bottom-right), as its docstring says
    kv = ember.attention(ember.from_numpy(q), ember.from_numpy(k), ember.from_numpy(v), causal=True)
    assert_close(kv, _attention_reference(q, k, v, top_left=False), rtol=1e-10, atol=1e-12)


def test_sdpa_masks_and_scale(rng):
    q, k, v = randn(rng, 2, 3, 4), randn(rng, 2, 5, 4), randn(rng, 2, 5, 4)
    mask = rng.random((3, 5)) < 0.7
    mask[:, 0] = True
    out = F.scaled_dot_product_attention(ember.from_numpy(q), ember.from_numpy(k), ember.from_numpy(v),
                                         attn_mask=ember.from_numpy(mask), scale=0.3)
    s = np.where(mask, q @ np.swapaxes(k, -1, -2) * 0.3, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    assert_close(out, (p / p.sum(-1, keepdims=True)) @ v, rtol=1e-10, atol=1e-12)
    add = randn(rng, 3, 5)
    out2 = F.scaled_dot_product_attention(ember.from_numpy(q), ember.from_numpy(k), ember.from_numpy(v),
                                          attn_mask=ember.from_numpy(add))
    s2 = q @ np.swapaxes(k, -1, -2) / 2.0 + add
    p2 = np.exp(s2 - s2.max(-1, keepdims=True))
    assert_close(out2, (p2 / p2.sum(-1, keepdims=True)) @ v, rtol=1e-10, atol=1e-12)


def test_tied_weights_counted_once():
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(10, 4)
            self.head = nn.Linear(4, 10, bias=False)
            self.wte.weight = self.head.weight

    m = Tied()
    assert len(m.parameters()) == 1
    assert m.num_parameters() == 40
    assert list(m.state_dict()) == ["wte.weight", "head.weight"]  # both names, as torch
    ids = ember.tensor([[1, 2]])
    m.head(m.wte(ids)).sum().backward()
    assert m.head.weight.grad is not None and m.wte.weight.grad is not None


def test_pickle_and_deepcopy_of_tensors_and_modules(rng):
    x = ember.from_numpy(randn(rng, 3, 2)).requires_grad_()
    y = pickle.loads(pickle.dumps(x))
    np.testing.assert_array_equal(y.numpy(), x.numpy())
    assert y.requires_grad and y.dtype == ember.float64
    net = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    twin = copy.deepcopy(net)
    twin[0].weight.detach().fill_(0.0)
    assert not np.allclose(net[0].weight.numpy(), 0)
    back = pickle.loads(pickle.dumps(net))
    np.testing.assert_array_equal(back[0].weight.numpy(), net[0].weight.numpy())
    assert [n for n, _ in back.named_buffers()] == ["1.running_mean", "1.running_var", "1.num_batches_tracked"]
