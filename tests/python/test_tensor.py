"""Tensors from Python: construction, NumPy round trips and memory sharing, DLPack, lifetimes,
indexing, operators, methods, errors."""
import gc
import sys

import numpy as np
import pytest

import ember
from helpers import randn, assert_close


def test_tensor_from_lists_infers_dtype():
    assert ember.tensor([1.0, 2.0]).dtype == ember.float32
    assert ember.tensor([1, 2]).dtype == ember.int64
    assert ember.tensor([[1, 2]], dtype=ember.float64).dtype == ember.float64
    t = ember.tensor([[1.5, 2.5, 3.5], [4.5, 5.5, 6.5]])
    assert t.shape == (2, 3) and t.ndim == 2 and t.numel() == 6 and len(t) == 2
    assert t.device == ember.cpu
    assert t.tolist() == [[1.5, 2.5, 3.5], [4.5, 5.5, 6.5]]
    assert ember.tensor(3.25).shape == () and float(ember.tensor(3.25)) == 3.25


def test_repr_names_dtype_and_values():
    r = repr(ember.tensor([1.5, -2.0], dtype=ember.float64))
    assert "1.5" in r and "float64" in r and "shape=[2]" in r
    x = ember.tensor([1.0]).requires_grad_()
    assert "requires_grad=True" in repr(x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_numpy_round_trip_shares_memory(rng, dtype):
    a = (randn(rng, 3, 4) * 10).astype(dtype)
    t = ember.from_numpy(a)
    assert t.dtype == {np.float32: ember.float32, np.float64: ember.float64, np.int64: ember.int64}[dtype]
    b = t.numpy()
    np.testing.assert_array_equal(b, a)
    assert np.shares_memory(a, b)
    a[1, 2] = 7
    assert t[1, 2].item() == 7  # the tensor sees writes to the array
    t[0, 0] = 5
    assert a[0, 0] == 5  # and the array sees writes through the tensor


def test_non_contiguous_arrays_are_shared_with_their_strides(rng):
    base = randn(rng, 6, 8)
    a = base[1::2, ::3]
    t = ember.from_numpy(a)
    assert t.shape == a.shape
    assert t.strides == tuple(s // 8 for s in a.strides)
    np.testing.assert_array_equal(t.numpy(), a)
    assert np.shares_memory(t.numpy(), base)
    at = base.T
    tt = ember.from_numpy(at)
    assert not tt.is_contiguous()
    assert_close(tt.exp(), np.exp(at))


def test_layouts_ember_cannot_address_are_copied(rng):
    a = randn(rng, 4, 5)
    rev = a[::-1]  # negative stride
    t = ember.from_numpy(rev)
    np.testing.assert_array_equal(t.numpy(), rev)
    assert not np.shares_memory(t.numpy(), a)
    i32 = np.arange(6, dtype=np.int32).reshape(2, 3)
    t = ember.from_numpy(i32)
    assert t.dtype == ember.int64 and t.tolist() == i32.tolist()
    ro = np.arange(4.0)
    ro.flags.writeable = False
    t = ember.from_numpy(ro)
    assert not np.shares_memory(t.numpy(), ro)
    big = np.arange(3.0).astype(">f8")
    assert ember.from_numpy(big).tolist() == [0.0, 1.0, 2.0]


def test_ember_views_come_back_as_strided_arrays(rng):
    a = randn(rng, 4, 6)
    t = ember.from_numpy(a)
    v = t.t()[1:5:2]
    np.testing.assert_array_equal(v.numpy(), a.T[1:5:2])
    assert np.shares_memory(v.numpy(), a)
    e = ember.tensor([1.0, 2.0]).reshape(2, 1).expand(2, 3)
    np.testing.assert_array_equal(e.numpy(), [[1, 1, 1], [2, 2, 2]])


def test_array_outlives_tensor():
    t = ember.randn([100, 100], ember.float64)
    a = t.numpy()
    expected = a.copy()
    del t
    gc.collect()
    ember.randn([100, 100], ember.float64)  # reuse of freed memory would overwrite a
    np.testing.assert_array_equal(a, expected)


def test_tensor_outlives_array():
    a = np.linspace(1.0, 2.0, 1000)
    t = ember.from_numpy(a)
    del a
    gc.collect()
    np.testing.assert_allclose(t.numpy(), np.linspace(1.0, 2.0, 1000))
    assert_close(t.sum(), np.linspace(1.0, 2.0, 1000).sum())


def test_view_outlives_its_base():
    base = ember.tensor(np.arange(24.0).reshape(4, 6))
    v = base[1:3, 2:5]
    del base
    gc.collect()
    np.testing.assert_array_equal(v.numpy(), np.arange(24.0).reshape(4, 6)[1:3, 2:5])


def test_numpy_refcount_is_released():
    a = np.ones(10)
    before = sys.getrefcount(a)
    t = ember.from_numpy(a)
    assert sys.getrefcount(a) > before
    del t
    gc.collect()
    assert sys.getrefcount(a) == before


def test_dlpack_to_numpy_and_back(rng):
    a = randn(rng, 3, 5)
    t = ember.from_numpy(a)
    assert t.__dlpack_device__() == (1, 0)
    b = np.from_dlpack(t)
    np.testing.assert_array_equal(b, a)
    assert np.shares_memory(a, b)
    t2 = ember.from_dlpack(b)
    assert t2._data_ptr() == t._data_ptr()
    np.testing.assert_array_equal(np.asarray(t), a)


def test_torch_dlpack_round_trip(rng):
    torch = pytest.importorskip("torch", reason="torch is not installed in this venv: DLPack with torch not tested")
    a = randn(rng, 3, 4).astype(np.float32)
    t = ember.from_numpy(a)
    tt = torch.from_dlpack(t)
    np.testing.assert_array_equal(tt.numpy(), a)
    back = ember.from_dlpack(tt)
    assert back._data_ptr() == t._data_ptr()


def test_indexing_matches_numpy(rng):
    a = randn(rng, 4, 5, 6)
    t = ember.from_numpy(a)
    for idx in [0, -1, (1, 2), (slice(1, 3),), (slice(None), 2), (Ellipsis, 3), (1, slice(None, None, 2), slice(4, 1)),
                (None, 1), (slice(-3, None), Ellipsis, slice(1, 5, 3)), (2, 3, 4)]:
        np.testing.assert_array_equal(t[idx].numpy(), a[idx], err_msg=str(idx))
    assert np.shares_memory(t[1:3, ::2].numpy(), a)
    with pytest.raises(IndexError):
        t[4]
    with pytest.raises(IndexError):
        t[::-1]
    with pytest.raises(IndexError):
        t[0, 0, 0, 0]
    with pytest.raises(IndexError):
        t["x"]


def test_setitem_writes_through_views(rng):
    a = randn(rng, 3, 4)
    t = ember.from_numpy(a.copy())
    t[1] = 2.5
    t[0, 1:3] = ember.tensor([7.0, 8.0], dtype=ember.float64)
    t[2, :2] = [9.0, 10.0]
    a[1] = 2.5
    a[0, 1:3] = [7, 8]
    a[2, :2] = [9, 10]
    np.testing.assert_array_equal(t.numpy(), a)


def test_operators_against_numpy(rng):
    a, b = randn(rng, 3, 4), randn(rng, 3, 4)
    x, y = ember.from_numpy(a), ember.from_numpy(b)
    assert_close(x + y, a + b)
    assert_close(x - y, a - b)
    assert_close(x * y, a * b)
    assert_close(x / y, a / b)
    assert_close(-x, -a)
    assert_close(x + 2.5, a + 2.5)
    assert_close(2.5 - x, 2.5 - a)
    assert_close(3.0 * x, 3.0 * a)
    assert_close(1.5 / y, 1.5 / b)
    assert_close(ember.abs(x) ** 1.5, np.abs(a) ** 1.5)
    assert_close(x @ y.t(), a @ b.T)
    assert_close(x.T @ y, a.T @ b)
    assert_close(x > y, (a > b).astype(np.float64))
    assert_close(x <= 0.0, (a <= 0).astype(np.float64))


def test_methods_against_numpy(rng):
    a = randn(rng, 3, 4)
    x = ember.from_numpy(a)
    assert_close(x.sum(1), a.sum(1))
    assert_close(x.sum(), a.sum())
    assert_close(x.sum((0, 1)), a.sum())
    assert_close(x.mean(0, keepdim=True), a.mean(0, keepdims=True))
    assert_close(x.max(1).values, a.max(1))
    assert_close(x.max(), a.max())
    np.testing.assert_array_equal(x.argmax(1).numpy(), a.argmax(1))
    assert_close(x.abs().sqrt(), np.sqrt(np.abs(a)))
    assert_close(x.exp(), np.exp(a))
    assert_close(x.tanh(), np.tanh(a))
    assert_close(x.softmax(-1), np.exp(a) / np.exp(a).sum(-1, keepdims=True))
    assert_close(x.reshape(4, 3), a.reshape(4, 3))
    assert_close(x.reshape((2, 6)), a.reshape(2, 6))
    assert_close(x.permute(1, 0), a.T)
    assert_close(x.unsqueeze(0).squeeze(0), a)
    assert_close(x.flatten(), a.ravel())
    assert_close(x.cumsum(1), np.cumsum(a, 1))
    assert x.to(ember.float32).dtype == ember.float32
    assert x.clone()._data_ptr() != x._data_ptr()


def test_factories():
    assert ember.zeros([2, 3]).tolist() == [[0.0] * 3] * 2
    assert ember.ones([2], ember.int64).tolist() == [1, 1]
    assert ember.full([2], 3.5, ember.float64).tolist() == [3.5, 3.5]
    assert ember.arange(4).tolist() == [0, 1, 2, 3]
    assert ember.arange(1, 7, 2).tolist() == [1, 3, 5]
    ember.manual_seed(3)
    a = ember.randn([5]).numpy().copy()
    ember.manual_seed(3)
    np.testing.assert_array_equal(ember.randn([5]).numpy(), a)
    r = ember.randint(2, 5, [100]).numpy()
    assert r.min() >= 2 and r.max() < 5


def test_errors_are_ember_errors_with_the_message():
    with pytest.raises(ember.Error, match=r"matmul: inner dimensions differ, \[2, 3\] @ \[4, 5\] \(3 vs 4\)"):
        ember.ones([2, 3]) @ ember.ones([4, 5])
    assert issubclass(ember.Error, RuntimeError)
    with pytest.raises(ember.Error):
        ember.ones([2, 3]) + ember.ones([4])
    with pytest.raises(ember.Error):
        ember.ones([2, 3]).reshape(7)
    with pytest.raises(ember.Error, match="one-element"):
        ember.ones([2]).item()
    with pytest.raises(ember.Error, match="floating"):
        ember.ones([2], ember.int64).requires_grad_()
    with pytest.raises(ember.Error):
        ember.tensor(["a", "b"])
    with pytest.raises(TypeError):
        ember.ones([2]) + "x"
    with pytest.raises(TypeError):
        ember.from_numpy([1, 2])
    with pytest.raises(ember.Error):
        ember.ones([2, 3]).transpose(0, 5)


def test_to_takes_names():
    x = ember.tensor([1.5, 2.5])
    assert x.to("float64").dtype == ember.float64 and x.to("int64").tolist() == [1, 2]
    assert x.to("cpu").device == ember.cpu
    with pytest.raises(ember.Error):
        x.to("tpu")
