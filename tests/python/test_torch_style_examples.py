"""The two programs written as PyTorch users write them (examples/classifier/train_cnn.py and
examples/gpt2/nanogpt.py), run short: the loss falls, the reloaded state dict reproduces the
outputs, generation samples bytes; and the benchmark beside nanoGPT runs a few steps."""
import importlib.util
import os

import pytest

import ember

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def _load(rel):
    spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(rel))[0], os.path.join(ROOT, rel))
    mod = importlib.util.module_from_spec(spec)
    import sys
    sys.modules[spec.name] = mod  # the dataclass in nanogpt.py looks its module up
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture
def text_file(tmp_path):
    lines = [f"{i} little pigs went to market and {i * 3 % 7} came home.\n" for i in range(400)]
    p = tmp_path / "input.txt"
    p.write_text("".join(lines))
    return p


def test_nanogpt_trains_reloads_and_generates(text_file, tmp_path, capsys):
    ng = _load("examples/gpt2/nanogpt.py")
    out = ng.main([str(text_file), "--steps", "40", "--n-layer", "2", "--n-head", "2", "--n-embd", "32",
                   "--block-size", "32", "--batch-size", "8", "--lr", "1e-2", "--warmup", "5", "--eval-every", "0",
                   "--sample-tokens", "20", "--save", str(tmp_path / "ng.safetensors")])
    losses = out["losses"]
    assert sum(losses[-5:]) / 5 < sum(losses[:5]) / 5 - 0.5, losses
    assert out["reload_identical"]
    assert len(out["sample"]) > 0
    assert (tmp_path / "ng.safetensors").exists()


def test_nanogpt_explicit_mask_matches_is_causal(text_file):
    ng = _load("examples/gpt2/nanogpt.py")
    outs = []
    for flash in (True, False):
        ember.manual_seed(3)
        m = ng.GPT(ng.GPTConfig(block_size=16, n_layer=1, n_head=2, n_embd=16, flash=flash))
        assert ("transformer.h.0.attn.bias" in m.state_dict()) == (not flash)  # the mask buffer
        assert m.transformer.wte.weight is m.lm_head.weight
        x = ember.randint(0, 256, (2, 16))
        outs.append(m(x, x)[0].numpy())
    import numpy as np
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-5, atol=1e-6)


def test_nanogpt_help(capsys):
    ng = _load("examples/gpt2/nanogpt.py")
    with pytest.raises(SystemExit):
        ng.parse_args(["--help"])
    assert "top-k" in capsys.readouterr().out


@pytest.mark.skipif(not ember.data.fashion_mnist_available(),
                    reason="Fashion-MNIST is not installed (Debian package dataset-fashion-mnist)")
def test_train_cnn_short_run(tmp_path):
    cnn = _load("examples/classifier/train_cnn.py")
    out = cnn.main(["--epochs", "2", "--limit", "1000", "--max-steps", "8", "--channels", "4", "8",
                    "--batch-size", "64", "--lr", "3e-3", "--save", str(tmp_path / "cnn.safetensors")])
    losses = out["losses"]
    assert sum(losses[-4:]) / 4 < sum(losses[:4]) / 4, losses
    assert out["reload_identical"] and out["accuracy"] > 0.3


def test_bench_nanogpt_runs_a_few_steps():
    bench = _load("examples/gpt2/bench_nanogpt.py")
    r = bench.main(["--repeats", "2", "--warmup-s", "0", "--batch", "2", "--block", "16", "--layers", "1",
                    "--heads", "2", "--embd", "16", "--no-torch"])
    assert set(r["median_ms"]) == {"ember nanogpt.py", "ember C++ GPT2"}
    assert all(v > 0 for v in r["median_ms"].values())
