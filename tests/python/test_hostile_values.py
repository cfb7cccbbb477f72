"""Values that used to crash the interpreter or come back silently wrong: INT64_MIN / -1, tensors
of more than 64 dimensions (from files and DLPack), int64 conversions that cannot hold the value,
narrow out of range, error messages holding invalid UTF-8, and writers that must not replace what
a path is."""
import ctypes
import os
import struct

import numpy as np
import pytest

import ember

INT64_MIN = -2**63


def test_int64_min_divided_by_minus_one_wraps():
    a = ember.tensor([INT64_MIN, 7, -9], dtype=ember.int64)
    m1 = ember.tensor([-1], dtype=ember.int64)
    want = [INT64_MIN, -7, 9]
    assert (a / m1).numpy().tolist() == want
    assert ember.div(a, m1).numpy().tolist() == want
    assert (a / -1.0).numpy().tolist() == want
    b = a.clone()
    b.div_(m1)
    assert b.numpy().tolist() == want


def _npy_bytes(dict_text, data, version=1):
    """A .npy file with the header `dict_text` (bytes) and the raw `data`."""
    pre = b"\x93NUMPY" + bytes([version, 0])
    width = 2 if version == 1 else 4
    pad = (64 - (len(pre) + width + len(dict_text) + 1) % 64) % 64
    header = dict_text + b" " * pad + b"\n"
    return pre + len(header).to_bytes(width, "little") + header + data


def test_npy_with_too_many_dimensions_is_refused(tmp_path):
    p = tmp_path / "deep.npy"
    for rank in (65, 1000):
        p.write_bytes(_npy_bytes(b"{'descr': '<f4', 'fortran_order': False, 'shape': (" + b"1," * rank + b"), }",
                                 struct.pack("<f", 1.5), version=2))
        with pytest.raises(ember.Error, match=f"{rank} dimensions is too many \\(at most 64"):
            ember.load_npy(str(p))
    # 64 dimensions load and convert to NumPy like any tensor.
    p.write_bytes(_npy_bytes(b"{'descr': '<f4', 'fortran_order': False, 'shape': (" + b"1," * 64 + b"), }",
                             struct.pack("<f", 1.5), version=2))
    t = ember.load_npy(str(p))
    assert t.numpy().shape == (1,) * 64 and t.numpy().ravel()[0] == 1.5
    assert "1.5" in repr(t)


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


def _dlpack_capsule(ndim, keep):
    """A DLPack capsule of one float32 1.5 in `ndim` dimensions of size 1 (NumPy cannot make one
    past 64); `keep` holds its buffers alive."""
    value = (ctypes.c_float * 1)(1.5)
    shape = (ctypes.c_int64 * ndim)(*([1] * ndim))
    strides = (ctypes.c_int64 * ndim)(*([1] * ndim))
    managed = _DLManagedTensor()
    managed.dl_tensor = _DLTensor(ctypes.cast(value, ctypes.c_void_p), _DLDevice(1, 0), ndim, _DLDataType(2, 32, 1),
                                  shape, strides, 0)
    keep += [value, shape, strides, managed]
    new = ctypes.pythonapi.PyCapsule_New
    new.restype = ctypes.py_object
    new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    return new(ctypes.addressof(managed), b"dltensor", None)


def test_dlpack_with_too_many_dimensions_is_refused():
    keep = []
    t = ember.Tensor._from_ndarray(_dlpack_capsule(64, keep))
    assert t.ndim == 64 and t.numpy().ravel()[0] == 1.5
    # nanobind itself turns such a capsule away (TypeError) before Ember's own check would say
    # "too many dimensions"; either way an error, not a tensor that aborts later in .numpy().
    for ndim in (65, 1000):
        with pytest.raises((TypeError, ember.Error)):
            ember.Tensor._from_ndarray(_dlpack_capsule(ndim, keep))


def test_unsqueeze_past_64_dimensions_is_refused():
    t = ember.from_numpy(np.ones((1,) * 64, dtype=np.float32))
    with pytest.raises(ember.Error, match="at most 64"):
        t.unsqueeze(0)


@pytest.mark.parametrize("values,dtype", [
    ([2**63], np.uint64), ([2**64 - 1, 3], np.uint64),
    ([np.nan], np.float64), ([1.0, np.inf], np.float32), ([-np.inf], np.float64), ([1e19], np.float64),
    ([-1e30], np.float32)])
def test_conversions_to_int64_that_cannot_hold_the_value_raise(values, dtype):
    a = np.array(values, dtype=dtype)
    with pytest.raises(ValueError, match="to int64"):
        ember.tensor(a, dtype=ember.int64)
    with pytest.raises(ValueError, match="to int64"):
        ember.from_numpy(a, dtype=ember.int64)
    if dtype == np.uint64:  # uint64 becomes int64 by default
        with pytest.raises(ValueError, match="largest"):
            ember.from_numpy(a)


def test_conversions_to_int64_that_fit_are_exact():
    assert ember.from_numpy(np.array([2**63 - 1, 0], dtype=np.uint64)).numpy().tolist() == [2**63 - 1, 0]
    assert ember.tensor(np.array([-2.0**63, 1.9, -1.9]), dtype=ember.int64).numpy().tolist() == [INT64_MIN, 1, -1]
    with pytest.raises(ember.Error, match="outside int64's range"):
        ember.tensor([np.nan, 1.0]).to(ember.int64)


def test_narrow_out_of_range_raises():
    t = ember.ones([3, 2])
    with pytest.raises(ember.Error, match="length 5 from start 2 does not fit"):
        t.narrow(0, 2, 5)
    with pytest.raises(ember.Error, match="length -1"):
        t.narrow(0, 1, -1)
    assert t.narrow(0, 1, 2).shape == (2, 2)


def test_error_messages_with_invalid_utf8_reach_python(tmp_path):
    p = tmp_path / "bytes.npy"
    p.write_bytes(_npy_bytes(b"{'descr': '\xff\xfe', 'fortran_order': False, 'shape': (1,), }", b"\0" * 4))
    with pytest.raises(ember.Error) as e:
        ember.load_npy(str(p))
    assert "unsupported dtype '\ufffd\ufffd'" in str(e.value)


def test_npy_header_with_a_second_descr_is_refused(tmp_path):
    p = tmp_path / "two_descr.npy"
    p.write_bytes(_npy_bytes(b"{'descr': '>f8', 'fortran_order': False, 'shape': (1,), 'descr': '<f8'}", b"\0" * 8))
    with pytest.raises(ember.Error, match="repeats the key 'descr'"):
        ember.load_npy(str(p))


def test_load_npy_of_an_endless_device_is_refused():
    with pytest.raises(ember.Error, match="not a .npy file"):
        ember.load_npy("/dev/zero")


def test_writers_follow_symlinks_and_refuse_fifos(tmp_path):
    real, link, fifo = tmp_path / "real.npy", tmp_path / "link.npy", tmp_path / "fifo.npy"
    ember.save_npy(str(real), ember.ones([2]))
    os.symlink("real.npy", link)
    ember.save_npy(str(link), ember.full([3], 4.0))
    assert os.path.islink(link) and np.load(real).tolist() == [4.0, 4.0, 4.0]
    os.mkfifo(fifo)
    with pytest.raises(ember.Error, match="is a FIFO, not a regular file"):
        ember.save_npy(str(fifo), ember.ones([2]))
    with pytest.raises(ember.Error, match="is a FIFO"):
        ember.save_file({"w": ember.ones([2])}, str(fifo))
    assert not any(".tmp." in n for n in os.listdir(tmp_path))
