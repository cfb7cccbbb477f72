"""ember.models.GPT2 and GPT2Tokenizer on a tiny random Hugging Face folder written from Python."""
import json
import os
import threading

import numpy as np
import pytest

import ember
from ember.models import GPT2, GPT2Tokenizer
from gpt2_folder import VOCAB, reference_logits, write_folder


@pytest.fixture
def folder(tmp_path, rng):
    d = tmp_path / "tiny-gpt2"
    weights = write_folder(str(d), rng)
    return d, weights


def test_logits_match_a_float64_numpy_forward(folder):
    d, w = folder
    model = GPT2.from_pretrained(d)
    ids = [258, 111, 32, 7, 255, 104, 101, 3, 0, 259]
    want = reference_logits(w, np.array(ids), model.config.n_head)
    ember.register_study_kernels()  # the attention study's "flash" and "standard"
    for attention in ["flash2", "flash", "standard"]:
        model.attention = attention
        assert model.attention == attention
        logits = model([ids])
        assert logits.shape == (1, len(ids), VOCAB) and logits.dtype == ember.float32
        np.testing.assert_allclose(logits.numpy()[0], want, rtol=1e-4, atol=1e-4, err_msg=attention)


def test_from_pretrained_reads_the_config_and_every_named_weight(folder):
    d, w = folder
    ember.register_study_kernels()
    model = GPT2.from_pretrained(d, attention="standard")
    c = model.config
    assert (c.n_layer, c.n_head, c.n_embd, c.vocab_size, c.n_positions) == (2, 2, 16, VOCAB, 24)
    assert not model.training and model.attention == "standard"
    state = model.state_dict()
    assert set(state) == set(w)
    for n, a in w.items():
        np.testing.assert_array_equal(state[n].numpy(), a.astype(np.float32), err_msg=n)
    assert model.num_parameters() == sum(a.size for a in w.values())


def test_batched_forward_equals_each_row_and_a_1d_sequence_is_a_batch_of_one(folder, rng):
    model = GPT2.from_pretrained(folder[0])
    ids = rng.integers(0, VOCAB, size=(3, 7))
    batch = model(ember.tensor(ids)).numpy()
    for b in range(3):
        np.testing.assert_allclose(batch[b], model(ids[b]).numpy()[0], rtol=1e-5, atol=1e-5)


def test_kv_cache_chunks_give_the_logits_of_the_whole_sequence(folder, rng):
    model = GPT2.from_pretrained(folder[0])
    ids = rng.integers(0, VOCAB, size=(1, 9))
    whole = model(ids).numpy()
    cache = model.new_cache()
    parts = [model(ids[:, :4], cache=cache).numpy(), model(ids[:, 4:5], cache=cache).numpy(),
             model(ids[:, 5:], cache=cache).numpy()]
    assert cache.length == 9 and cache.capacity == model.config.n_positions
    np.testing.assert_allclose(np.concatenate(parts, axis=1), whole, rtol=1e-4, atol=1e-4)
    cache.reset()
    assert cache.length == 0


@pytest.mark.parametrize("sampling", [dict(), dict(temperature=0.9, top_k=20, seed=3), dict(temperature=1.3, top_p=0.8, seed=4)])
def test_generate_gives_the_same_tokens_with_and_without_the_cache(folder, sampling):
    model = GPT2.from_pretrained(folder[0])
    prompt = [104, 101, 108, 108, 111]
    with_cache = model.generate(prompt, max_new_tokens=12, stop_token=-1, use_cache=True, **sampling)
    without = model.generate(prompt, max_new_tokens=12, stop_token=-1, use_cache=False, **sampling)
    assert len(with_cache) == 12 and all(0 <= t < VOCAB for t in with_cache)
    assert with_cache == without


def test_greedy_generation_appends_the_argmax_of_the_logits(folder):
    model = GPT2.from_pretrained(folder[0])
    seq = [72, 105, 33]
    out = model.generate(seq, max_new_tokens=6, stop_token=-1)
    for t in out:
        assert t == int(np.argmax(model([seq]).numpy()[0, -1]))
        seq.append(t)


def test_sampling_is_reproducible_for_a_seed_and_differs_across_seeds(folder):
    model = GPT2.from_pretrained(folder[0])
    runs = {s: model.generate([1, 2, 3], max_new_tokens=16, temperature=2.0, seed=s, stop_token=-1) for s in (7, 7, 8, 9)}
    assert runs[7] == model.generate([1, 2, 3], max_new_tokens=16, temperature=2.0, seed=7, stop_token=-1)
    assert len({tuple(r) for r in runs.values()}) > 1


def test_text_prompts_and_streamed_tokens(folder):
    model = GPT2.from_pretrained(folder[0])
    streamed = []
    text = model.generate("hello", max_new_tokens=8, temperature=1.0, seed=5, stop_token=-1, on_token=streamed.append)
    assert len(streamed) == 8
    assert text == model.tokenizer.decode(streamed)
    ids = model.generate(model.tokenizer.encode("hello"), max_new_tokens=8, temperature=1.0, seed=5, stop_token=-1)
    assert ids == streamed


def test_generation_stops_at_end_of_text_by_default(folder):
    d, _ = folder
    model = GPT2.from_pretrained(d)
    assert model.tokenizer.eot_id == 259
    # Make <|endoftext|> the only likely token: its embedding row dominates every logit.
    state = model.state_dict()
    row = state["wte.weight"].numpy().copy()
    row[259] = 50.0 * np.sign(row.mean(0) + 1e-3)
    assert model.generate([1, 2], max_new_tokens=10)[0] != 259
    state["wte.weight"].copy_(ember.tensor(row))
    assert model.generate([1, 2], max_new_tokens=10) == [259]
    assert len(model.generate([1, 2], max_new_tokens=10, stop_token=-1)) == 10


def test_two_python_threads_generate_at_once_with_python_callbacks(folder):
    model = GPT2.from_pretrained(folder[0])
    seen, errors = [], []

    def work():
        try:
            seen.append(model.generate([5, 6], max_new_tokens=10, stop_token=-1, on_token=lambda t: None))
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(seen) == 2 and seen[0] == seen[1]


def test_an_exception_in_on_token_ends_generation_and_propagates(folder):
    model = GPT2.from_pretrained(folder[0])
    seen = []

    def stop_after_three(t):
        seen.append(t)
        if len(seen) == 3:
            raise ValueError("enough")

    with pytest.raises(ValueError, match="enough"):
        model.generate([1, 2], max_new_tokens=10, stop_token=-1, on_token=stop_after_three)
    assert len(seen) == 3
    assert len(model.generate([1, 2], max_new_tokens=4, stop_token=-1)) == 4  # the model still works


def test_configs_from_presets_and_json():
    c = ember.models.GPT2Config.preset("gpt2-medium")
    assert (c.n_layer, c.n_head, c.n_embd, c.head_dim) == (24, 16, 1024, 64)
    back = ember.models.GPT2Config.from_json_string(c.to_json_string())
    assert (back.n_layer, back.n_embd, back.vocab_size, back.n_positions) == (24, 1024, 50257, 1024)
    with pytest.raises(ember.Error, match="gpt2-tiny"):
        ember.models.GPT2Config.preset("gpt2-tiny")
    model = GPT2(ember.models.GPT2Config(n_layer=1, n_head=2, n_embd=8, vocab_size=11, n_positions=6), seed=4)
    again = GPT2(model.config, seed=4)
    assert model.training and model.attention == "flash2" and model.tokenizer is None
    np.testing.assert_array_equal(model([[1, 2]]).numpy(), again([[1, 2]]).numpy())


def test_config_takes_nanogpts_structure():
    # bias=False: no Linear or LayerNorm biases; "gelu": the exact (erf) GELU, as nanoGPT's model.
    c = ember.models.GPT2Config(n_layer=1, n_head=2, n_embd=8, vocab_size=11, n_positions=6, bias=False,
                                activation_function="gelu")
    assert (c.bias, c.activation_function) == (False, "gelu")
    assert "bias=False" in repr(c) and "'gelu'" in repr(c)
    back = ember.models.GPT2Config.from_json_string(c.to_json_string())
    assert (back.bias, back.activation_function) == (False, "gelu")
    bare, full = GPT2(c, seed=2), GPT2(ember.models.GPT2Config(n_layer=1, n_head=2, n_embd=8, vocab_size=11,
                                                              n_positions=6), seed=2)
    names = list(bare.state_dict())
    assert names and not any(n.endswith(".bias") for n in names)
    assert bare.num_parameters() < full.num_parameters()
    assert np.isfinite(bare([[1, 2, 3]]).numpy()).all()
    with pytest.raises(ember.Error, match="relu"):
        ember.models.GPT2Config(activation_function="relu")


def test_tokenizer_round_trips_bytes_and_applies_merges(folder):
    tok = GPT2Tokenizer.from_pretrained(folder[0])
    assert tok.vocab_size == VOCAB == len(tok)
    assert tok.encode("hello") == [258, ord("o")]
    assert tok.encode("he") == [256]
    assert tok.token(258) == b"hell"
    for text in ["hello world, it's 2024!", "héllo wörld ✓ 東京", "  spaces\tand\nlines  ", ""]:
        assert tok.decode(tok.encode(text)) == text
    assert tok.encode("a<|endoftext|>b") == [ord("a"), 259, ord("b")]
    # A cut through a multi-byte character is not text: replaced, or raised when asked.
    ids = tok.encode("é")
    assert len(ids) == 2 and tok.decode_bytes(ids[:1]) == "é".encode()[:1]
    assert tok.decode(ids[:1]) == "\ufffd"
    with pytest.raises(UnicodeDecodeError):
        tok.decode(ids[:1], errors="strict")


def test_save_pretrained_round_trips_the_model_and_tokenizer(folder, tmp_path):
    model = GPT2.from_pretrained(folder[0])
    out = tmp_path / "copy"
    model.save_pretrained(out)
    assert {"config.json", "model.safetensors", "vocab.json", "merges.txt"} <= set(os.listdir(out))
    back = GPT2.from_pretrained(out)
    ids = [[3, 1, 4, 1, 5, 9, 2, 6]]
    np.testing.assert_array_equal(back(ids).numpy(), model(ids).numpy())
    assert back.tokenizer.encode("hello") == [258, ord("o")]


def test_loss_backward_reaches_every_parameter(folder, rng):
    model = GPT2.from_pretrained(folder[0])
    ids = rng.integers(0, VOCAB, size=(2, 6))
    loss = model.loss(ids)
    assert loss.shape == () and 0 < loss.item() < 100
    loss.backward()
    for p in model.parameters():
        assert p.grad is not None and np.abs(p.grad.numpy()).sum() > 0


def test_errors_raise_ember_error_with_the_reason(folder, tmp_path):
    d, _ = folder
    with pytest.raises(ember.Error, match="does not exist"):
        GPT2.from_pretrained(tmp_path / "nope")
    with pytest.raises(ember.Error, match="variant 'fast' is not available on cpu"):
        GPT2.from_pretrained(d, attention="fast")
    model = GPT2.from_pretrained(d)
    with pytest.raises(ember.Error, match="do not fit the model's context of 24"):
        model.generate([1] * 20, max_new_tokens=5)
    with pytest.raises(ember.Error, match="outside the vocabulary"):
        model.generate([VOCAB + 3], max_new_tokens=2)
    with pytest.raises(ember.Error, match="at least one token"):
        model.generate([], max_new_tokens=2)
    with pytest.raises(ember.Error, match="temperature"):
        model.generate([1], max_new_tokens=2, temperature=-1.0)
    with pytest.raises(ember.Error, match="exceed the context length"):
        model([list(range(25))])
    with pytest.raises(ember.Error, match="integers"):
        model([[0.5, 1.5]])
    bare = GPT2.from_pretrained(d, tokenizer=False)
    with pytest.raises(ember.Error, match="text prompt needs the tokenizer"):
        bare.generate("hello", max_new_tokens=2)
    with pytest.raises(ember.Error, match="not divisible"):
        ember.models.GPT2Config(n_embd=10, n_head=3)


def test_bad_folders_name_the_file_or_tensor(folder):
    d, w = folder
    cfg = d / "config.json"
    good = cfg.read_text()
    cfg.write_text(json.dumps({"n_embd": 10, "n_head": 3}))
    with pytest.raises(ember.Error, match="not divisible"):
        GPT2.from_pretrained(d)
    cfg.write_text("{not json")
    with pytest.raises(ember.Error, match="not valid JSON"):
        GPT2.from_pretrained(d)
    cfg.write_text(good)
    state = {n: ember.from_numpy(a.astype(np.float32)) for n, a in w.items() if n != "h.1.mlp.c_fc.bias"}
    ember.save_file(state, str(d / "model.safetensors"))
    with pytest.raises(ember.Error, match="h.1.mlp.c_fc.bias"):
        GPT2.from_pretrained(d)
    ember.save_file({n: ember.from_numpy(a.astype(np.float32)) for n, a in w.items()}, str(d / "model.safetensors"))
    (d / "merges.txt").unlink()
    with pytest.raises(ember.Error, match="merges.txt"):
        GPT2.from_pretrained(d)
    assert GPT2.from_pretrained(d, tokenizer=False).tokenizer is None


def test_a_vocabulary_smaller_than_the_model_fails_at_load(folder):
    d, _ = folder
    vocab = json.loads((d / "vocab.json").read_text(encoding="utf-8"))
    del vocab["<|endoftext|>"]
    (d / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(ember.Error, match="vocab_size is 260"):
        GPT2.from_pretrained(d)
