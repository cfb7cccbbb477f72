"""ember.nn's torch-named layers, containers, Parameter, init and Module traversal, each checked
against a float64 NumPy reference."""
import numpy as np
import pytest

import ember
from ember import nn
from helpers import randn, assert_close

F64 = ember.float64


def _conv_ref(x, w, b, stride, pad):
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    ho, wo = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    out = np.zeros((n, o, ho, wo))
    for i in range(ho):
        for j in range(wo):
            patch = xp[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw]
            out[:, :, i, j] = np.einsum("nchw,ochw->no", patch, w)
    return out + b[None, :, None, None]


def test_conv2d_layer_matches_the_reference_and_torch_init_bounds(rng):
    conv = nn.Conv2d(3, 4, 3, stride=2, padding=1, dtype=F64)
    bound = 1 / np.sqrt(3 * 9)
    assert conv.weight.shape == (4, 3, 3, 3) and conv.bias.shape == (4,)
    assert np.abs(conv.weight.numpy()).max() <= bound and np.abs(conv.weight.numpy()).max() > bound / 2
    x = randn(rng, 2, 3, 7, 7)
    assert_close(conv(ember.from_numpy(x)), _conv_ref(x, conv.weight.numpy(), conv.bias.numpy(), 2, 1), rtol=1e-10)
    same = nn.Conv2d(3, 2, 3, padding="same", bias=False, dtype=F64)
    assert same.bias is None and same(ember.from_numpy(x)).shape == (2, 2, 7, 7)
    with pytest.raises(ValueError, match="divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)


@pytest.mark.parametrize("cls,shape", [(nn.BatchNorm1d, (8, 3)), (nn.BatchNorm1d, (8, 3, 5)), (nn.BatchNorm2d, (4, 3, 2, 5))])
def test_batch_norm_train_and_eval(rng, cls, shape):
    bn = cls(3, momentum=0.2, dtype=F64)
    x = randn(rng, *shape) * 2 + 1
    axes = tuple(i for i in range(len(shape)) if i != 1)
    mean, var = x.mean(axes), x.var(axes)
    bshape = [1, 3] + [1] * (len(shape) - 2)
    assert_close(bn(ember.from_numpy(x)), (x - mean.reshape(bshape)) / np.sqrt(var.reshape(bshape) + 1e-5), rtol=1e-9)
    n = x.size / 3
    assert_close(bn.running_mean, 0.2 * mean, rtol=1e-10)
    assert_close(bn.running_var, 0.8 + 0.2 * var * n / (n - 1), rtol=1e-10)
    bn.eval()
    y = randn(rng, *shape)
    rm, rv = bn.running_mean.numpy().reshape(bshape), bn.running_var.numpy().reshape(bshape)
    assert_close(bn(ember.from_numpy(y)), (y - rm) / np.sqrt(rv + 1e-5), rtol=1e-9)
    with pytest.raises(ValueError, match="expected"):
        bn(ember.ones(2, 3, 4, 5, 6, dtype=F64))


def test_group_norm_pools_flatten_dropout(rng):
    x = randn(rng, 2, 4, 6, 6)
    gn = nn.GroupNorm(2, 4, dtype=F64)
    g = x.reshape(2, 2, -1)
    ref = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5)).reshape(x.shape)
    assert_close(gn(ember.from_numpy(x)), ref, rtol=1e-9)
    mp = nn.MaxPool2d(2)(ember.from_numpy(x))
    assert_close(mp, x.reshape(2, 4, 3, 2, 3, 2).max((3, 5)), rtol=0)
    ap = nn.AvgPool2d(3, stride=3)(ember.from_numpy(x))
    assert_close(ap, x.reshape(2, 4, 2, 3, 2, 3).mean((3, 5)), rtol=1e-12)
    assert nn.Flatten()(ember.from_numpy(x)).shape == (2, 144)
    assert nn.Flatten(0, 1)(ember.from_numpy(x)).shape == (8, 6, 6)
    d = nn.Dropout(0.5)
    d.eval()
    np.testing.assert_array_equal(d(ember.from_numpy(x)).numpy(), x)
    d.train()
    kept = d(ember.from_numpy(x)).numpy()
    assert set(np.unique(np.isclose(kept, 2 * x))) <= {True, False} and (kept == 0).any()


def test_layer_norm_multi_dim_and_activations(rng):
    x = randn(rng, 3, 4, 5)
    ln = nn.LayerNorm((4, 5), dtype=F64)
    f = x.reshape(3, -1)
    ref = ((f - f.mean(-1, keepdims=True)) / np.sqrt(f.var(-1, keepdims=True) + 1e-5)).reshape(x.shape)
    assert_close(ln(ember.from_numpy(x)), ref, rtol=1e-9)
    assert ln.weight.shape == (4, 5)
    t = ember.from_numpy(x)
    from math import erf
    gelu = np.vectorize(lambda v: 0.5 * v * (1 + erf(v / np.sqrt(2))))(x)
    assert_close(nn.GELU()(t), gelu, rtol=1e-12)
    tanh_gelu = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
    assert_close(nn.GELU(approximate="tanh")(t), tanh_gelu, rtol=1e-12)
    assert_close(nn.SiLU()(t), x / (1 + np.exp(-x)), rtol=1e-12)
    assert_close(nn.LeakyReLU(0.2)(t), np.where(x > 0, x, 0.2 * x), rtol=1e-12)
    assert_close(nn.Softmax(dim=-1)(t), np.exp(x) / np.exp(x).sum(-1, keepdims=True), rtol=1e-12)


def test_module_list_dict_parameter_and_traversal():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
            self.heads = nn.ModuleDict({"a": nn.Linear(4, 2), "b": nn.Linear(4, 1)})
            self.scale = nn.Parameter(ember.ones(4))
            self.drop = nn.Dropout(0.1)

        def forward(self, x):
            for b in self.blocks:
                x = b(x)
            return self.heads["a"](x * self.scale)

    net = Net()
    names = [n for n, _ in net.named_parameters()]
    assert names[:2] == ["scale", "blocks.0.weight"]
    assert "heads.b.bias" in names and len(names) == 3 * 2 + 2 * 2 + 1
    assert isinstance(net.scale, nn.Parameter) and not isinstance(ember.ones(2), nn.Parameter)
    assert net(ember.ones(2, 4)).shape == (2, 2)
    assert [n for n, _ in net.named_modules()][:3] == ["", "blocks", "blocks.0"]
    assert len(list(net.modules())) == 1 + 1 + 3 + 1 + 2 + 1
    assert [type(c).__name__ for c in net.children()] == ["ModuleList", "ModuleDict", "Dropout"]
    net.eval()
    assert all(not m.training for m in net.modules())
    net.train()
    assert net.drop.training
    seen = []
    net.apply(lambda m: seen.append(type(m).__name__))
    assert seen[-1] == "Net" and seen.count("Linear") == 5
    assert len(net.blocks[1:]) == 2 and "a" in net.heads and len(net.heads) == 2


def test_init_functions(rng):
    ember.manual_seed(3)
    w = ember.empty(200, 300)
    nn.init.normal_(w, mean=0.5, std=0.02)
    assert abs(w.numpy().mean() - 0.5) < 0.001 and abs(w.numpy().std() - 0.02) < 0.001
    nn.init.zeros_(w)
    assert not w.numpy().any()
    nn.init.ones_(w)
    assert (w.numpy() == 1).all()
    nn.init.uniform_(w, -0.1, 0.3)
    assert w.numpy().min() >= -0.1 and w.numpy().max() < 0.3 and abs(w.numpy().mean() - 0.1) < 0.005
    nn.init.xavier_uniform_(w)
    b = np.sqrt(6 / 500)
    assert np.abs(w.numpy()).max() <= b and np.abs(w.numpy()).max() > 0.99 * b
    nn.init.kaiming_normal_(w, nonlinearity="relu")
    assert abs(w.numpy().std() - np.sqrt(2 / 300)) < 0.003
    g = ember.Generator().manual_seed(5)
    a1 = nn.init.normal_(ember.empty(4), generator=g).numpy().copy()
    a2 = nn.init.normal_(ember.empty(4), generator=ember.Generator().manual_seed(5)).numpy()
    np.testing.assert_array_equal(a1, a2)
    lin = nn.Linear(3, 3)
    nn.init.zeros_(lin.bias)  # on a parameter, as in model.apply(_init_weights)
    assert not lin.bias.numpy().any() and lin.bias.requires_grad


def test_zero_grad_and_state_dict_roundtrip_of_a_cnn(rng):
    net = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(2 * 3 * 3, 4))
    x = ember.from_numpy(randn(rng, 3, 1, 8, 8).astype(np.float32))
    net(x).sum().backward()
    assert net[0].weight.grad is not None
    net.zero_grad(set_to_none=True)
    g = net[0].weight.grad
    assert g is None or not g.numpy().any()
    missing, unexpected = net.load_state_dict({"4.bias": ember.zeros(4)}, strict=False)
    assert "0.weight" in missing and unexpected == []
    assert not net[4].bias.numpy().any()


def test_to_dtype_keeps_ties_and_buffers():
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(5, 3)
            self.head = nn.Linear(3, 5, bias=False)
            self.head.weight = self.emb.weight
            self.bn = nn.BatchNorm1d(3)

    m = Tied().double()
    assert m.emb.weight.dtype == ember.float64 and m.head.weight is m.emb.weight and m.head.weight.requires_grad
    assert m.bn.running_mean.dtype == ember.float64 and m.bn.num_batches_tracked.dtype == ember.int64
    assert len(m.parameters()) == 3
