"""ember.register_study_kernels(): the studies' CPU kernels (matmul's naive, ikj, blocked; attention's
standard and flash, the paper's Algorithms 0 and 1) are not the library's, and join the ops by name
only once it is called. Before that, asking for one raises ember.Error naming the registration. The
CUDA matmul study's kernels join the same way, from a library the call opens only in CUDA builds."""
import subprocess
import sys

import numpy as np
import pytest

import ember
from helpers import randn, assert_close


def _softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_before_registration_only_the_librarys_kernels_are_there():
    # A fresh interpreter: the registration is for the whole process, and other tests make it.
    code = (
        "import numpy as np, ember\n"
        "q = ember.from_numpy(np.ones((1, 4, 3)))\n"
        "names = [v for op in ember.registered_ops() if op['name'] == 'attention'\n"
        "         for d, v in op['variants'] if d == ember.Device.cpu]\n"
        "assert 'flash' not in names and 'flash2' in names, names\n"
        "try:\n"
        "    ember.attention(q, q, q, impl='flash')\n"
        "except ember.Error as e:\n"
        "    print(e)\n"
        "try:\n"
        "    ember.matmul(q[0], q[0].t(), impl='naive')\n"
        "except ember.Error as e:\n"
        "    print(e)\n"
        "ember.register_study_kernels()\n"
        "print(tuple(ember.attention(q, q, q, impl='flash').shape), tuple(ember.matmul(q[0], q[0].t(), impl='naive').shape))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    lines = out.strip().splitlines()
    assert len(lines) == 3, out
    assert "variant 'flash' is not available on cpu (registered: auto, flash2)" in lines[0]
    assert "ember.register_study_kernels()" in lines[0]
    assert "variant 'naive' is not available on cpu" in lines[1]
    assert "register_matmul_study_kernels()" in lines[1]
    assert lines[2] == "(1, 4, 3) (4, 4)", lines[2]


def test_registered_study_kernels_match_numpy(rng):
    ember.register_study_kernels()
    ember.register_study_kernels()  # once per process; again does nothing
    table = {op["name"]: op["variants"] for op in ember.registered_ops()}
    cpu = ember.Device.cpu
    attention_cpu = [v for d, v in table["attention"] if d == cpu]
    matmul_cpu = [v for d, v in table["matmul"] if d == cpu]
    assert [attention_cpu.count(v) for v in ["flash2", "standard", "flash"]] == [1, 1, 1]
    assert [matmul_cpu.count(v) for v in ["naive", "ikj", "blocked"]] == [1, 1, 1]

    a, b = randn(rng, 2, 5, 7), randn(rng, 7, 3)
    for impl in ["auto", "naive", "ikj", "blocked"]:
        assert_close(ember.matmul(ember.from_numpy(a), ember.from_numpy(b), impl=impl), a @ b, rtol=1e-12, atol=1e-12)
        assert_close(ember.from_numpy(a).matmul(ember.from_numpy(b), impl=impl), a @ b, rtol=1e-12, atol=1e-12)

    q, k, v, w = randn(rng, 2, 6, 4), randn(rng, 2, 9, 4), randn(rng, 2, 9, 4), randn(rng, 2, 6, 4)
    s = q @ k.transpose(0, 2, 1) / 2.0
    s = np.where(np.triu(np.ones((6, 9)), 1 + 9 - 6) > 0, -np.inf, s)  # causal, bottom-right aligned
    p = _softmax(s)
    ref = p @ v
    # The gradient of sum(out * w) with respect to v is P^T w.
    for impl in ["auto", "flash2", "standard", "flash"]:
        vt = ember.from_numpy(v)
        vt.requires_grad_()
        out = ember.attention(ember.from_numpy(q), ember.from_numpy(k), vt, causal=True, impl=impl)
        assert_close(out, ref, rtol=1e-10, atol=1e-12)
        (out * ember.from_numpy(w)).sum().backward()
        assert_close(vt.grad, p.transpose(0, 2, 1) @ w, rtol=1e-10, atol=1e-12)

    with pytest.raises(ember.Error, match="variant 'nope' is not available on cpu"):
        ember.matmul(ember.from_numpy(a), ember.from_numpy(b), impl="nope")


def test_cuda_study_kernels_need_a_cuda_build():
    if ember.cuda.built_with_cuda():
        pytest.skip("this ember has the CUDA backend: test_cuda_study_kernels_register checks it instead")
    with pytest.raises(ember.Error, match=r"the CUDA matmul study is not installed .*EMBER_CUDA=AUTO"):
        ember.register_study_kernels(cuda=True)
    ember.register_study_kernels(cuda=False)  # the CPU kernels alone: no error
    ember.register_study_kernels()  # None: no GPU here, so the CPU kernels alone


def test_cuda_study_kernels_register(rng):
    if not ember.cuda.built_with_cuda():
        pytest.skip("this ember was built without CUDA (pip install . -C cmake.define.EMBER_CUDA=AUTO builds it)")
    ember.register_study_kernels(cuda=True)  # needs no GPU: the kernels run only on CUDA tensors
    table = {op["name"]: op["variants"] for op in ember.registered_ops()}
    matmul_cuda = [v for d, v in table["matmul"] if d == ember.Device.cuda]
    assert [matmul_cuda.count(v) for v in ["naive", "tiled", "register_tiled", "register_tiled_db"]] == [1, 1, 1, 1]
    if not ember.cuda.is_available():
        pytest.skip(f"registered; no GPU to run them: {ember.cuda.unavailable_reason()}")
    a, b = randn(rng, 37, 53, dtype=np.float32), randn(rng, 53, 29, dtype=np.float32)
    ga, gb = ember.from_numpy(a).to(ember.Device.cuda), ember.from_numpy(b).to(ember.Device.cuda)
    for impl, tile in [("naive", 16), ("tiled", 4), ("tiled", 32), ("register_tiled", 16), ("register_tiled_db", 16)]:
        out = ember.matmul(ga, gb, impl=impl, tile=tile).to(ember.Device.cpu).numpy()
        assert_close(out, a @ b, rtol=1e-4, atol=1e-4)
