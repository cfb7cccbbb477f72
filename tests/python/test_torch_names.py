"""torch's tensor-level names in ember: factories with int sizes and requires_grad=, Generator,
multinomial, bernoulli, cat/chunk/split/stack, indexing with tensors, lists and masks, dim= on
topk/sort, dtype shorthands, // and %, grad modes, allclose/isnan/isfinite, save/load, DataLoader
over Python datasets, optimizer param_groups, clip_grad_norm_."""
import numpy as np
import pytest

import ember
from ember import nn, optim
from helpers import randn, assert_close


def test_factories_take_int_sizes_dtype_and_requires_grad():
    assert ember.zeros(2, 3).shape == (2, 3)
    assert ember.ones((2, 3), dtype=ember.float64).dtype == ember.float64
    assert ember.zeros([4], ember.int64).dtype == ember.int64  # Ember's positional form still works
    t = ember.randn(3, 4, requires_grad=True)
    assert t.requires_grad and t.shape == (3, 4)
    assert ember.full((2,), 7).dtype == ember.int64 and ember.full((2,), 7.0).dtype == ember.float32
    assert ember.rand(5).shape == (5,) and ember.empty(0).shape == (0,)
    assert ember.arange(5).tolist() == [0, 1, 2, 3, 4]
    assert_close(ember.arange(0, 1, 0.25), [0, 0.25, 0.5, 0.75])
    assert ember.ones(6).view(2, -1).shape == (2, 3)
    with pytest.raises(ValueError, match="float"):
        ember.zeros(2, dtype=ember.int64, requires_grad=True)
    with pytest.raises(TypeError, match="sizes must be ints"):
        ember.zeros([2.5])


def test_generator_multinomial_bernoulli():
    g = ember.Generator().manual_seed(0)
    a = ember.randn(4, generator=g).numpy().copy()
    g.manual_seed(0)
    np.testing.assert_array_equal(ember.randn(4, generator=g).numpy(), a)
    probs = ember.tensor([[0.1, 0.0, 0.6, 0.3], [0.0, 0.0, 1.0, 0.0]])
    draws = ember.multinomial(probs, 4000, replacement=True, generator=ember.Generator().manual_seed(1))
    assert draws.shape == (2, 4000) and draws.dtype == ember.int64
    freq = np.bincount(draws.numpy()[0], minlength=4) / 4000
    np.testing.assert_allclose(freq, [0.1, 0.0, 0.6, 0.3], atol=0.03)
    assert (draws.numpy()[1] == 2).all()
    once = ember.multinomial(ember.tensor([1.0, 2.0, 3.0, 4.0]), 4)  # without replacement: a permutation
    assert sorted(once.tolist()) == [0, 1, 2, 3]
    ember.manual_seed(5)
    s1 = ember.multinomial(probs, 1).tolist()
    ember.manual_seed(5)
    assert ember.multinomial(probs, 1).tolist() == s1
    with pytest.raises(ValueError, match="without replacement"):
        ember.multinomial(probs, 3)
    b = ember.bernoulli(ember.full((10000,), 0.3))
    assert b.dtype == ember.float32 and abs(b.numpy().mean() - 0.3) < 0.02 and set(np.unique(b.numpy())) <= {0, 1}


def test_cat_chunk_split_stack(rng):
    x = ember.from_numpy(randn(rng, 7, 2))
    parts = ember.chunk(x, 3)
    assert [p.shape[0] for p in parts] == [3, 3, 1]
    assert_close(ember.cat(parts), x.numpy())
    assert [p.shape[0] for p in ember.split(x, [2, 5])] == [2, 5]
    assert [p.shape[0] for p in x.split(3)] == [3, 3, 1]
    assert ember.stack([x, x], dim=1).shape == (7, 2, 2)
    q, k, v = ember.ones(2, 3, 12).split(4, dim=2)  # nanoGPT's qkv split
    assert q.shape == (2, 3, 4)


def test_indexing_with_tensors_lists_and_masks(rng):
    a = randn(rng, 5, 4)
    x = ember.from_numpy(a.copy()).requires_grad_()
    assert_close(x[[0, 3]], a[[0, 3]])
    assert_close(x[ember.tensor([4, 1])], a[[4, 1]])
    assert_close(x[:, [1, 2]], a[:, [1, 2]])
    mask = a > 0
    assert_close(x[ember.from_numpy(mask)], a[mask])
    assert_close(x[ember.from_numpy(mask[:, 0])], a[mask[:, 0]])
    x[ember.from_numpy(mask)].sum().backward()  # differentiable: the gradient is the mask
    np.testing.assert_array_equal(x.grad.numpy(), mask.astype(np.float64))
    y = ember.from_numpy(a.copy())
    y[y < 0] = 0.0
    np.testing.assert_array_equal(y.numpy(), np.where(a < 0, 0, a))
    y[[0, 1]] = ember.zeros(2, 4, dtype=ember.float64)
    assert not y.numpy()[:2].any()
    with pytest.raises(IndexError):
        x[[7]]


def test_topk_sort_along_dim_and_dtype_shorthands(rng):
    a = randn(rng, 4, 6)
    x = ember.from_numpy(a)
    v, i = x.topk(2, dim=0)
    np.testing.assert_array_equal(v.numpy(), -np.sort(-a, axis=0)[:2])
    np.testing.assert_array_equal(i.numpy(), np.argsort(-a, axis=0, kind="stable")[:2])
    s = ember.sort(x, dim=0, descending=False)
    np.testing.assert_array_equal(s.values.numpy(), np.sort(a, axis=0))
    assert x.float().dtype == ember.float32 and x.long().dtype == ember.int64 and x.double() is x
    assert x.type(ember.float32).dtype == ember.float32 and x.type() == "ember.DoubleTensor"


def test_floor_division_and_remainder(rng):
    a = np.array([7, -7, 5, -3])
    t = ember.tensor(a)
    assert (t // 2).tolist() == (a // 2).tolist()
    assert (t % 3).tolist() == (a % 3).tolist()
    f = randn(rng, 6) * 5
    xf = ember.from_numpy(f).requires_grad_()
    assert_close(xf % 1.5, np.mod(f, 1.5), rtol=1e-12, atol=1e-12)
    assert_close(xf // 1.5, np.floor_divide(f, 1.5), rtol=0)
    (xf % 1.5).sum().backward()
    np.testing.assert_array_equal(xf.grad.numpy(), np.ones(6))


def test_grad_modes():
    w = ember.ones(2, requires_grad=True)
    with ember.no_grad():
        assert not ember.is_grad_enabled()
        with ember.enable_grad():
            assert ember.is_grad_enabled()
            assert (w * 2).is_traced
        assert not ember.is_grad_enabled()
    with ember.set_grad_enabled(False):
        assert not (w * 2).is_traced
    assert ember.is_grad_enabled()
    with ember.inference_mode():
        assert not (w * 2).is_traced

    @ember.no_grad()
    def f():
        return ember.is_grad_enabled()
    assert f() is False and ember.is_grad_enabled()


def test_allclose_isnan_isfinite():
    x = ember.tensor([1.0, float("nan"), float("inf"), -2.0])
    assert ember.isnan(x).tolist() == [False, True, False, False]
    assert ember.isfinite(x).tolist() == [True, False, False, True]
    assert ember.isinf(x).tolist() == [False, False, True, False]
    assert ember.allclose(ember.tensor([1.0, 2.0]), ember.tensor([1.0, 2.0 + 1e-7]))
    assert not ember.allclose(ember.tensor([1.0]), ember.tensor([1.1]))


def test_save_load_state_dict_and_objects(rng, tmp_path):
    net = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    ember.save(net.state_dict(), tmp_path / "m.pt")
    sd = ember.load(tmp_path / "m.pt")
    assert list(sd) == list(net.state_dict()) or set(sd) == set(net.state_dict())
    np.testing.assert_array_equal(sd["0.weight"].numpy(), net[0].weight.numpy())
    ember.save({"step": 3, "model": net.state_dict()}, str(tmp_path / "ckpt.pt"))
    ck = ember.load(str(tmp_path / "ckpt.pt"))
    assert ck["step"] == 3 and ck["model"]["1.running_var"].shape == (4,)
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
    (tmp_path / "junk").write_bytes(b"hello world")
    with pytest.raises(ember.Error, match="neither"):
        ember.load(tmp_path / "junk")


def test_dataloader_over_a_python_dataset():
    class Squares(ember.data.Dataset):
        def __len__(self):
            return 10

        def __getitem__(self, i):
            return ember.tensor([float(i)]), i * i

    loader = ember.data.DataLoader(Squares(), batch_size=4, shuffle=True, generator=ember.Generator().manual_seed(0))
    assert len(loader) == 3
    seen = []
    for x, y in loader:
        assert x.shape[1] == 1
        assert (x.numpy()[:, 0] ** 2).tolist() == y.tolist()
        seen += x.numpy()[:, 0].tolist()
    assert sorted(seen) == list(range(10)) and seen != list(range(10))
    ds = ember.data.TensorDataset(ember.ones(5, 2), ember.tensor([0, 1, 2, 3, 4]))
    assert isinstance(ds, ember.data.Dataset)
    x, y = ds[3]
    assert x.shape == (2,) and int(y.item()) == 3
    with pytest.raises(TypeError, match="__len__"):
        ember.data.DataLoader(object())


def test_param_groups_decay_split_and_lr_changes(rng):
    ember.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 4), nn.LayerNorm(4))
    decay = [p for p in net.parameters() if p.ndim >= 2]
    no_decay = [p for p in net.parameters() if p.ndim < 2]
    opt = optim.AdamW([{"params": decay, "weight_decay": 0.5}, {"params": no_decay, "weight_decay": 0.0}],
                      lr=0.1, betas=(0.9, 0.95))
    assert len(opt.param_groups) == 2 and opt.param_groups[1]["betas"] == (0.9, 0.95)
    before = [p.numpy().copy() for p in net.parameters()]
    # zero gradients: only decoupled decay moves a parameter
    (net(ember.ones(2, 3)) * 0.0).sum().backward()
    opt.step()
    w, b = net[0].weight.numpy(), net[1].bias.numpy()
    assert_close(w, before[0] * (1 - 0.1 * 0.5), rtol=1e-6)
    np.testing.assert_array_equal(b, before[3])
    for g in opt.param_groups:
        g["lr"] = 0.0
    opt.zero_grad(set_to_none=True)
    (net(ember.ones(2, 3)) * 0.0).sum().backward()
    w1 = net[0].weight.numpy().copy()
    opt.step()
    np.testing.assert_array_equal(net[0].weight.numpy(), w1)  # lr 0 through param_groups took effect
    with pytest.raises(ValueError, match="more than one"):
        optim.SGD([{"params": decay}, {"params": decay}])


def test_clip_grad_norm_(rng):
    a = ember.from_numpy(randn(rng, 3)).requires_grad_()
    b = ember.from_numpy(randn(rng, 2, 2)).requires_grad_()
    ((a * 3.0).sum() + (b * b).sum()).backward()
    ga, gb = a.grad.numpy().copy(), b.grad.numpy().copy()
    total = np.sqrt((ga ** 2).sum() + (gb ** 2).sum())
    n = nn.utils.clip_grad_norm_([a, b], 1.0)
    assert abs(float(n) - total) < 1e-6 * total  # a float32 0-d tensor, as torch
    assert_close(a.grad, ga / total, rtol=1e-6)


def test_from_numpy_shares_only_embers_dtypes():
    a = np.arange(4, dtype=np.float64)
    x = ember.from_numpy(a)
    a[0] = 9.0
    assert x.numpy()[0] == 9.0  # shared
    h = np.arange(4, dtype=np.float16)
    z = ember.from_numpy(h)
    h[1] = 0.5
    assert z.dtype == ember.float16 and z.numpy()[1] == 0.5  # float16 is an Ember dtype: shared
    for dt, want in ((np.int32, ember.int64), (np.uint8, ember.int64)):
        b = np.arange(4).astype(dt)
        y = ember.from_numpy(b)
        b[0] = 7
        assert y.dtype == want and y.numpy()[0] == 0  # a converted copy, as the README says


@pytest.mark.parametrize("what,call,exc,fragment", [
    ("chunk count", lambda: ember.chunk(ember.ones(4), 0), ValueError, "positive"),
    ("cat empty", lambda: ember.cat([]), ValueError, "non-empty"),
    ("multinomial shape", lambda: ember.multinomial(ember.ones(2, 2, 2), 1), ValueError, "1-D or 2-D"),
    ("multinomial negative", lambda: ember.multinomial(ember.tensor([-1.0, 2.0]), 1), ValueError, "non-negative"),
    ("bernoulli range", lambda: ember.bernoulli(ember.tensor([1.5])), ValueError, "[0, 1]"),
    ("generator type", lambda: ember.rand(2, generator=3), TypeError, "Generator"),
    ("float index", lambda: ember.ones(3)[ember.ones(1)], IndexError, "int64 or bool"),
    ("Conv2d padding mode", lambda: nn.Conv2d(1, 1, 3, padding_mode="reflect"), ValueError, "zeros"),
    ("BatchNorm momentum None", lambda: nn.BatchNorm2d(3, momentum=None), ValueError, "momentum"),
    ("gelu approximate", lambda: nn.functional.gelu(ember.ones(2), approximate="fast"), ValueError, "tanh"),
    ("layer_norm shape", lambda: nn.functional.layer_norm(ember.ones(2, 3), (4,)), ValueError, "normalized_shape"),
    ("sdpa both masks", lambda: nn.functional.scaled_dot_product_attention(
        ember.ones(2, 3), ember.ones(2, 3), ember.ones(2, 3), attn_mask=ember.ones(2, 2), is_causal=True),
     ValueError, "not both"),
    ("cross_entropy float target", lambda: nn.functional.cross_entropy(ember.ones(2, 3), ember.ones(2)), ValueError,
     "int64"),
    ("register_buffer type", lambda: nn.Module().register_buffer("b", 3), TypeError, "ember.Tensor"),
    ("Sequential of a non-module", lambda: nn.Sequential(nn.ReLU(), 3), TypeError, "nn.Module"),
    ("optimizer group keys", lambda: optim.SGD([{"params": [ember.ones(2, requires_grad=True)], "foo": 1}]),
     TypeError, "foo"),
    ("set_grad_enabled mode", lambda: ember.set_grad_enabled(1), TypeError, "bool"),
    ("save to a file object", lambda: ember.save({}, object()), TypeError, "path"),
])
def test_new_functions_check_their_arguments(what, call, exc, fragment):
    with pytest.raises(exc) as e:
        call()
    assert fragment in str(e.value), (what, str(e.value))


def test_error_messages_speak_python():
    w = ember.ones(2, requires_grad=True)
    with pytest.raises(ember.Error) as e:
        w.mul_(2.0)
    assert "ember.no_grad()" in str(e.value) and "NoGradGuard" not in str(e.value)
    m = ember.tensor([True, False])
    with pytest.raises(ember.Error) as e:
        m + m
    assert ".to(ember.float32)" in str(e.value) and "DType::" not in str(e.value)
