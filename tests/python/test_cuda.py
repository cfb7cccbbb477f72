"""CUDA tensors from Python: without a usable GPU every CUDA request raises ember.Error saying
why; with one (a wheel built with -C cmake.define.EMBER_CUDA=AUTO on a GPU machine) tensors move
to the GPU and back, compute there, and cross DLPack as kDLCUDA."""
import gc

import numpy as np
import pytest

import ember
from helpers import randn

HAS_GPU = ember.cuda.is_available()
needs_gpu = pytest.mark.skipif(not HAS_GPU, reason="no usable GPU: " + (ember.cuda.unavailable_reason() or "?"))
no_gpu_only = pytest.mark.skipif(HAS_GPU, reason="a GPU is usable here: the no-GPU errors cannot be provoked")


def test_availability_is_reported_the_same_way_everywhere():
    assert ember.cuda_available() == ember.cuda.is_available() == HAS_GPU
    assert (ember.cuda.unavailable_reason() == "") == HAS_GPU
    if not ember.cuda.built_with_cuda():
        assert not HAS_GPU and "built without CUDA" in ember.cuda.unavailable_reason()


def test_device_names():
    assert ember.as_device("cuda") == ember.as_device("cuda:0") == ember.Device.cuda
    assert ember.as_device("cpu") == ember.as_device(ember.cpu) == ember.Device.cpu
    with pytest.raises(ember.Error, match="unknown device 'tpu'"):
        ember.as_device("tpu")
    with pytest.raises(ember.Error, match="unknown device 'cuda:1'"):
        ember.ones([2]).to("cuda:1")
    with pytest.raises(TypeError, match="expected a device"):
        ember.tensor([1.0], device=3)


def test_cpu_tensors_stay_where_they_are(rng):
    a = randn(rng, 2, 3)
    x = ember.from_numpy(a)
    assert x.device == ember.cpu and not x.is_cuda
    assert x.cpu() is x and x.to("cpu") is x
    assert x.__dlpack_device__() == (1, 0)
    t = ember.tensor(a, device="cpu")
    np.testing.assert_array_equal(t.numpy(), a)
    assert t._data_ptr() != x._data_ptr()
    assert ember.zeros([2], device="cpu").device == ember.cpu
    assert ember.full([2], 3.0, ember.float64, "cpu").numpy().tolist() == [3.0, 3.0]


def test_the_dlpack_view_shares_memory_and_keeps_the_tensor_alive(rng):
    # The path CUDA tensors export through, exercised on the CPU: strides, dtype, lifetime.
    a = randn(rng, 4, 6)
    x = ember.from_numpy(a).transpose(0, 1).slice(0, 1, 6, 2)
    view = x._dlpack_view()
    assert view.__dlpack_device__() == (1, 0)
    b = np.from_dlpack(view)
    np.testing.assert_array_equal(b, a.T[1:6:2])
    assert np.shares_memory(b, a)
    del x, view
    gc.collect()
    np.testing.assert_array_equal(b, a.T[1:6:2])
    for dtype in (ember.float32, ember.int64):
        y = ember.tensor([[1, 2], [3, 4]], dtype=dtype)
        np.testing.assert_array_equal(np.from_dlpack(y._dlpack_view()), y.numpy())


class _FakeProducer:
    def __init__(self, device_type):
        self.device_type = device_type

    def __dlpack_device__(self):
        return (self.device_type, 0)

    def __dlpack__(self, **kwargs):
        raise AssertionError("from_dlpack must refuse before asking for the memory")


def test_from_dlpack_refuses_devices_it_cannot_address():
    with pytest.raises(ember.Error, match="DLPack device type 14 is not supported"):
        ember.from_dlpack(_FakeProducer(14))


@no_gpu_only
def test_without_a_gpu_every_cuda_request_raises_with_the_reason():
    x = ember.ones([2, 2])
    requests = [
        ("x.to('cuda')", lambda: x.to("cuda")),
        ("x.to('cuda')", lambda: x.to(ember.Device.cuda)),
        ("x.cuda()", lambda: x.cuda()),
        ("ember.tensor(..., device='cuda')", lambda: ember.tensor([1.0, 2.0], device="cuda")),
        ("ember.zeros(..., device='cuda')", lambda: ember.zeros([3], device="cuda")),
        ("ember.ones(..., device='cuda')", lambda: ember.ones([3], ember.float32, ember.Device.cuda)),
        ("ember.full(..., device='cuda')", lambda: ember.full([3], 1.0, ember.float32, "cuda")),
        ("ember.cuda.device_name()", ember.cuda.device_name),
        ("ember.cuda.synchronize()", ember.cuda.synchronize),
        ("ember.cuda.memory_stats()", ember.cuda.memory_stats),
        ("ember.from_dlpack of a CUDA array", lambda: ember.from_dlpack(_FakeProducer(2))),
    ]
    for what, request in requests:
        with pytest.raises(ember.Error) as e:
            request()
        msg = str(e.value)
        assert msg.startswith(what + ": CUDA is not available"), msg
        assert ember.cuda.unavailable_reason() in msg and "ember.cuda.is_available()" in msg
        if not ember.cuda.built_with_cuda():
            assert "cmake.define.EMBER_CUDA=AUTO" in msg
    # The C++ factories refuse too when called directly, with the core's reason.
    with pytest.raises(ember.Error, match="device cuda is not available"):
        ember._ember.zeros([2], ember.float32, ember.Device.cuda)


@needs_gpu
def test_tensors_move_to_the_gpu_and_back(rng):
    a = randn(rng, 3, 5).astype(np.float32)
    for x in (ember.tensor(a, device="cuda"), ember.from_numpy(a).to("cuda"), ember.from_numpy(a).cuda(),
              ember.from_numpy(a).to(ember.Device.cuda)):
        assert x.device == ember.Device.cuda and x.is_cuda and x.shape == (3, 5)
        assert x.cuda() is x
        back = x.cpu()
        assert back.device == ember.cpu
        np.testing.assert_array_equal(back.numpy(), a)
    assert ember.zeros([4], device="cuda").cpu().numpy().tolist() == [0.0] * 4
    assert ember.tensor([[1, 2]], device="cuda").tolist() == [[1, 2]]


@needs_gpu
def test_numpy_of_a_gpu_tensor_says_to_call_cpu_first():
    x = ember.ones([2], device="cuda")
    for f in (x.numpy, lambda: np.asarray(x)):
        with pytest.raises(ember.Error, match=r"call \.cpu\(\) first"):
            f()


@needs_gpu
def test_ops_and_gradients_on_the_gpu_match_numpy(rng):
    a, b = randn(rng, 4, 3), randn(rng, 3, 2)
    x = ember.tensor(a, device="cuda", requires_grad=True)
    y = ember.tensor(b, device="cuda")
    out = ember.tanh(x @ y).sum()
    out.backward()
    np.testing.assert_allclose(out.cpu().item(), np.tanh(a @ b).sum(), rtol=1e-10)
    want = (1 - np.tanh(a @ b) ** 2) @ b.T
    assert x.grad.device == ember.Device.cuda
    np.testing.assert_allclose(x.grad.cpu().numpy(), want, rtol=1e-10)


@needs_gpu
def test_gpu_tensors_cross_dlpack_as_kdlcuda(rng):
    a = randn(rng, 2, 3)
    x = ember.tensor(a, device="cuda")
    assert x.__dlpack_device__() == (2, 0)
    back = ember.from_dlpack(x)
    assert back.device == ember.Device.cuda and back._data_ptr() == x._data_ptr()
    np.testing.assert_array_equal(back.cpu().numpy(), a)


@needs_gpu
def test_gpu_dlpack_with_torch(rng):
    torch = pytest.importorskip("torch", reason="torch is not installed in this venv: CUDA DLPack with torch not tested")
    if not torch.cuda.is_available():
        pytest.skip("this torch has no CUDA")
    a = randn(rng, 3, 4).astype(np.float32)
    x = ember.tensor(a, device="cuda")
    tt = torch.from_dlpack(x)
    assert tt.is_cuda and tt.data_ptr() == x._data_ptr()
    np.testing.assert_array_equal(tt.cpu().numpy(), a)
    back = ember.from_dlpack(tt * 2)
    assert back.device == ember.Device.cuda
    np.testing.assert_array_equal(back.cpu().numpy(), a * 2)
