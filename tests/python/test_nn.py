"""ember.nn, ember.optim, safetensors, .npy and the data loader from Python."""
import numpy as np
import pytest

import ember
from ember import nn, optim
from helpers import randn, assert_close


def test_linear_matches_its_formula_and_the_cpp_init(rng):
    layer = nn.Linear(4, 3, seed=7)
    assert layer.weight.shape == (3, 4) and layer.bias.shape == (3,)
    assert layer.weight.requires_grad
    assert np.all(np.abs(layer.weight.numpy()) <= 1 / np.sqrt(4))
    again = nn.Linear(4, 3, seed=7)
    np.testing.assert_array_equal(again.weight.numpy(), layer.weight.numpy())
    a = randn(rng, 5, 4).astype(np.float32)
    assert_close(layer(ember.from_numpy(a)), a @ layer.weight.numpy().T + layer.bias.numpy(), rtol=1e-5)
    assert nn.Linear(4, 3, bias=False).bias is None


def test_module_tree_parameters_state_dict(rng):
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(6, 8, seed=1), nn.ReLU(), nn.LayerNorm(8))
            self.head = nn.Linear(8, 2, seed=2)
            self.emb = nn.Embedding(10, 6, seed=3)

        def forward(self, ids):
            return self.head(self.body(self.emb(ids)))

    net = Net()
    names = [n for n, _ in net.named_parameters()]
    assert names == ["body.0.weight", "body.0.bias", "body.2.weight", "body.2.bias", "head.weight", "head.bias",
                     "emb.weight"]
    assert net.num_parameters() == 6 * 8 + 8 + 8 + 8 + 8 * 2 + 2 + 10 * 6
    out = net(ember.tensor([[1, 2], [3, 9]]))
    assert out.shape == (2, 2, 2)
    other = Net()
    for p in other.parameters():
        p.fill_(0.5)
    other.load_state_dict(net.state_dict())
    np.testing.assert_array_equal(other.head.weight.numpy(), net.head.weight.numpy())
    with pytest.raises(ember.Error, match="missing"):
        other.load_state_dict({})
    assert "Linear(in_features=6, out_features=8" in repr(net)  # torch's repr


@pytest.mark.parametrize("kind", ["sgd", "adam", "adamw"])
def test_optimizers_fit_a_linear_regression(rng, kind):
    a = randn(rng, 64, 3).astype(np.float32)
    y = a @ np.array([[1.5, -2.0, 0.5]], dtype=np.float32).T + 0.25
    model = nn.Linear(3, 1, seed=0)
    make = {"sgd": lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9), "adam": lambda ps: optim.Adam(ps, lr=0.05),
            "adamw": lambda ps: optim.AdamW(ps, lr=0.05)}[kind]
    opt = make(model.parameters())
    assert opt.kind == kind
    x, t = ember.from_numpy(a), ember.from_numpy(y)
    first = None
    for _ in range(150):
        opt.zero_grad()
        loss = ((model(x) - t) ** 2.0).mean()
        loss.backward()
        opt.step()
        first = first if first is not None else loss.item()
    assert loss.item() < 0.05 * first
    assert opt.steps == 150


def test_sgd_step_is_the_formula(rng):
    w0 = randn(rng, 4)
    w = ember.from_numpy(w0.copy()).requires_grad_()
    opt = optim.SGD([w], lr=0.1)
    (w * w).sum().backward()
    opt.step()
    assert_close(w, w0 - 0.1 * 2 * w0)
    opt.lr = 0.5
    assert opt.lr == 0.5
    sched = optim.LrSchedule("cosine", base_lr=1.0, warmup_steps=0, total_steps=10)
    assert sched(0) == pytest.approx(1.0) and sched(10) == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ember.Error):
        optim.LrSchedule("sideways")


def test_safetensors_round_trip(tmp_path, rng):
    tensors = {"a": ember.from_numpy(randn(rng, 2, 3).astype(np.float32)), "b": ember.tensor([1, 2, 3]),
               "c": ember.from_numpy(randn(rng, 4))}
    path = str(tmp_path / "t.safetensors")
    ember.save_file(tensors, path, {"note": "from python"})
    back = ember.load_file(path)
    assert list(back) == ["a", "b", "c"]
    for k in tensors:
        assert back[k].dtype == tensors[k].dtype
        np.testing.assert_array_equal(back[k].numpy(), tensors[k].numpy())
    assert ember.load_file_metadata(path)["note"] == "from python"
    with open(path, "r+b") as f:
        f.write(b"\xff" * 8)  # a header length no file can have
    with pytest.raises(ember.Error):
        ember.load_file(path)
    with pytest.raises(ember.Error):
        ember.load_file(str(tmp_path / "missing.safetensors"))


def test_npy_round_trip(tmp_path, rng):
    a = randn(rng, 3, 2)
    path = str(tmp_path / "a.npy")
    ember.save_npy(path, ember.from_numpy(a))
    np.testing.assert_array_equal(np.load(path), a)
    np.save(path, a.T.copy())
    np.testing.assert_array_equal(ember.load_npy(path).numpy(), a.T)


def test_data_loader_over_a_tensor_dataset(rng):
    x = ember.from_numpy(randn(rng, 10, 3).astype(np.float32))
    ds = ember.data.TensorDataset(x, ember.arange(10))
    assert len(ds) == 10
    loader = ember.data.DataLoader(ds, batch_size=4, shuffle=True, seed=1)
    assert len(loader) == 3
    seen = []
    for xb, yb in loader:
        np.testing.assert_array_equal(xb.numpy(), x.numpy()[yb.numpy()])
        seen += yb.tolist()
    assert sorted(seen) == list(range(10))


@pytest.mark.skipif(not ember.data.fashion_mnist_available(),
                    reason="Fashion-MNIST is not installed (Debian package dataset-fashion-mnist)")
def test_fashion_mnist_loads():
    ds = ember.data.load_fashion_mnist(train=False, limit=100)
    assert len(ds) == 100
    assert ds.inputs.shape == (100, 784) and ds.targets.dtype == ember.int64
    assert len(ember.data.fashion_mnist_classes()) == 10
