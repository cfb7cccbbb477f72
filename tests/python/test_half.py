"""The 16-bit float dtypes from Python: ember.bfloat16, ember.float16 (ember.half), casts that round
to nearest even like NumPy's float16, printing, NumPy float16 memory shared both ways, DLPack for
both (kDLFloat 16 bits, kDLBfloat), and the errors for what NumPy cannot hold."""
import numpy as np
import pytest

import ember
from helpers import randn


def bf16_reference(a):
    """float64 values rounded to bfloat16 (nearest, ties to even), computed in integers from the
    float32 bits; exact for the float32-representable inputs used here."""
    u = np.asarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return r.astype(np.uint32).view(np.float32).astype(np.float64)


def test_names_and_facts():
    assert ember.half == ember.float16
    assert ember.bfloat16.itemsize == 2 and ember.float16.itemsize == 2
    assert ember.bfloat16.is_floating_point and ember.float16.is_floating_point
    assert ember.zeros(3, dtype=ember.bfloat16).dtype == ember.bfloat16
    assert ember.ones(2, 2, dtype=ember.float16).tolist() == [[1.0, 1.0], [1.0, 1.0]]


def test_casts_round_like_numpy_float16_and_the_bf16_reference(rng):
    a = (randn(rng, 4099) * 300).astype(np.float32)
    x = ember.from_numpy(a)
    np.testing.assert_array_equal(x.half().float().numpy(), a.astype(np.float16).astype(np.float32))
    np.testing.assert_array_equal(x.to(ember.float16).numpy(), a.astype(np.float16))
    np.testing.assert_array_equal(x.bfloat16().double().numpy(), bf16_reference(a))
    np.testing.assert_array_equal(x.to("bfloat16").to("float32").numpy(), bf16_reference(a).astype(np.float32))
    assert x.half().dtype == ember.float16 and x.bfloat16().dtype == ember.bfloat16
    assert x.half().type() == "ember.HalfTensor" and x.type("torch.BFloat16Tensor").dtype == ember.bfloat16
    t = ember.tensor([0.1, -2.5], dtype=ember.bfloat16)
    assert t.dtype == ember.bfloat16 and t.tolist() == pytest.approx([0.10009765625, -2.5], abs=0)


def test_repr_names_the_dtype():
    r = repr(ember.tensor([1.5, -2.0], dtype=ember.float16))
    assert "1.5" in r and "float16" in r
    assert "bfloat16" in repr(ember.tensor([3.0]).bfloat16())


def test_numpy_float16_shares_memory_both_ways(rng):
    a = randn(rng, 3, 5).astype(np.float16)
    t = ember.from_numpy(a)
    assert t.dtype == ember.float16
    b = t.numpy()
    assert b.dtype == np.float16 and np.shares_memory(a, b)
    a[2, 4] = 0.75
    assert t[2, 4].item() == 0.75
    t2 = ember.from_numpy(a[:, 2:5])  # a strided view is shared too
    assert t2.shape == (3, 3) and t2[2, 2].item() == 0.75


def test_bfloat16_has_no_numpy_twin():
    x = ember.ones(2).bfloat16()
    with pytest.raises(ember.Error, match="NumPy has no bfloat16"):
        x.numpy()
    y = ember.from_numpy(np.array([1.0, 0.1]), dtype=ember.bfloat16)  # a rounded copy
    assert y.dtype == ember.bfloat16 and y.float().tolist() == [1.0, 0.10009765625]


def test_half_to_int64_refuses_nan():
    with pytest.raises(ember.Error, match="NaN, infinite or outside int64"):
        ember.tensor([1.0, float("nan")]).half().long()


def test_dlpack_float16_through_numpy(rng):
    a = randn(rng, 4, 3).astype(np.float16)
    x = ember.from_dlpack(a)
    assert x.dtype == ember.float16
    b = np.from_dlpack(x)
    assert b.dtype == np.float16 and np.shares_memory(a, b)


def test_dlpack_with_torch_for_both_halves(rng):
    torch = pytest.importorskip("torch")
    for tdt, edt in ((torch.bfloat16, ember.bfloat16), (torch.float16, ember.float16)):
        t = torch.randn(5, 7, dtype=torch.float32).to(tdt)
        x = ember.from_dlpack(t)
        assert x.dtype == edt and x.shape == (5, 7)
        assert x.float().tolist() == t.float().tolist()
        back = torch.from_dlpack(x.t())
        assert back.dtype == tdt and torch.equal(back, t.t())
        x[0, 0] = 2.0  # shared memory
        assert float(t[0, 0]) == 2.0
