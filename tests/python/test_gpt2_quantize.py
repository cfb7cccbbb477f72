"""GPT2.quantize: int8 and bf16 weights for inference, from Python."""
import numpy as np
import pytest

import ember
from ember.models import GPT2
from gpt2_folder import VOCAB, write_folder


@pytest.fixture
def folder(tmp_path, rng):
    d = tmp_path / "tiny-gpt2"
    write_folder(str(d), rng)
    return d


# Bounds on the largest logit error over the largest logit; measured 1.0% (int8) and 0.54% (bf16).
@pytest.mark.parametrize("weights,bound", [("int8", 0.03), ("bf16", 0.01)])
def test_quantised_logits_stay_close_to_float32(folder, weights, bound):
    ref = GPT2.from_pretrained(folder)
    model = GPT2.from_pretrained(folder)
    assert model.weights == "f32"
    assert model.quantize(weights) is model
    assert model.weights == weights
    ids = [258, 111, 32, 7, 255, 104, 101, 3, 0, 259]
    with ember.no_grad():
        want = ref([ids]).numpy()
    got = model([ids]).numpy()  # no no_grad needed: a quantised model records nothing
    assert got.shape == (1, len(ids), VOCAB)
    diff = np.abs(got - want).max() / np.abs(want).max()
    assert 0 < diff < bound
    # the cache path (one row at a time: the decode kernels, which for int8 quantise x per block too)
    cache = model.new_cache()
    steps = np.concatenate([model([[i]], cache).numpy() for i in ids], axis=1)
    assert np.abs(steps - want).max() / np.abs(want).max() < bound
    assert len(model.generate(ids[:3], max_new_tokens=5, stop_token=-1)) == 5
    assert model._impl.decode_weight_bytes < ref._impl.decode_weight_bytes


def test_quantize_refuses_bad_names_twice_and_training(folder):
    model = GPT2.from_pretrained(folder)
    with pytest.raises(ValueError, match="unknown weight format 'int4'"):
        model.quantize("int4")
    model.quantize("f32")  # a float32 model stays float32
    assert model.weights == "f32"
    model.quantize("bf16")
    with pytest.raises(ember.Error, match="already quantised to bf16"):
        model.quantize("int8")
    model.train()
    with pytest.raises(ember.Error, match="cannot be trained"):
        model.loss([[1, 2, 3, 4]])
