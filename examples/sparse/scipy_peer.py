#!/usr/bin/python3
"""SciPy peer for bench_sparse: times scipy.sparse CSR on the exact matrices bench_sparse wrote.

Usage: /usr/bin/python3 scipy_peer.py CASES.json OUT.json   (bench_sparse runs it for you)

Same hygiene as bench_sparse: warm-up calls, then `repeats` samples, each a batch of calls lasting
at least min_batch_ms, and the median per call. Writes per case: op_ms (the operation alone),
setup_ms (csr_matrix(dense) + the operation, the dense matrix built beforehand, untimed), and
checksums (sum of y; nonzeros and sum of C) so bench_sparse can confirm identical results.
Where asked ("dense": true), also NumPy's dense product on the same matrix (OpenBLAS; its thread
count comes from OPENBLAS_NUM_THREADS, set by bench_sparse) as a tuned dense baseline.
"""
import ctypes
import json
import math
import struct
import sys
import time

import numpy as np
import scipy
import scipy.sparse as sp


def load(path):
    with open(path, "rb") as f:
        buf = f.read()
    if buf[:4] != b"EMSP":
        raise SystemExit(f"{path}: not a bench_sparse matrix file")
    version, rows, cols, nnz, has_x = struct.unpack_from("<iqqqq", buf, 4)
    if version != 1:
        raise SystemExit(f"{path}: unknown version {version}")
    off = 4 + 4 + 32
    need = off + 4 * (rows + 1) + 8 * nnz + (4 * cols if has_x else 0)
    if len(buf) != need:
        raise SystemExit(f"{path}: {len(buf)} bytes, expected {need}")
    indptr = np.frombuffer(buf, np.int32, rows + 1, off); off += 4 * (rows + 1)
    indices = np.frombuffer(buf, np.int32, nnz, off); off += 4 * nnz
    data = np.frombuffer(buf, np.float32, nnz, off); off += 4 * nnz
    x = np.frombuffer(buf, np.float32, cols, off) if has_x else None
    a = sp.csr_matrix((data, indices, indptr), shape=(rows, cols))
    a.has_sorted_indices = True  # bench_sparse writes validated, sorted CSR
    return a, x


def time_it(f, warmup, repeats, min_batch_ms):
    for _ in range(warmup):
        f()
    t0 = time.perf_counter(); f(); one = max((time.perf_counter() - t0) * 1e3, 1e-6)
    batch = min(100000, max(1, math.ceil(min_batch_ms / one)))
    samples = []
    for _ in range(max(repeats, 1)):
        t0 = time.perf_counter()
        for _ in range(batch):
            f()
        samples.append((time.perf_counter() - t0) * 1e3 / batch)
    samples.sort()
    m = len(samples)
    med = samples[m // 2] if m % 2 else 0.5 * (samples[m // 2 - 1] + samples[m // 2])
    return {"ms": med, "min_ms": samples[0], "batch": batch}


def blas_name():
    """The OpenBLAS kernel NumPy will use (as threadpoolctl would report it), or 'unknown'."""
    try:
        lib = ctypes.CDLL("libopenblas.so.0")
        lib.openblas_get_corename.restype = ctypes.c_char_p
        lib.openblas_get_config.restype = ctypes.c_char_p
        return f"{lib.openblas_get_config().decode()}, core {lib.openblas_get_corename().decode()}"
    except (OSError, AttributeError):
        return "unknown"


def main():
    spec = json.load(open(sys.argv[1]))
    w, r, mb = spec["warmup"], spec["repeats"], spec["min_batch_ms"]
    results = {}
    for case in spec["cases"]:
        a, x = load(case["file"])
        res = {}
        if case["op"] == "spmv":
            y = a @ x
            res["sum"] = float(np.sum(y, dtype=np.float64))
            t = time_it(lambda: a @ x, w, r, mb)
            if case["setup"] or case.get("dense"):
                d = a.toarray()
            if case["setup"]:
                s = time_it(lambda: sp.csr_matrix(d) @ x, w, r, 0.0)
            if case.get("dense"):
                res["dense_ms"] = time_it(lambda: d @ x, w, r, mb)["ms"]
        else:
            c = a @ a
            c.sort_indices()
            res["c_nnz"] = int(c.nnz)
            res["c_sum"] = float(np.sum(c.data, dtype=np.float64))
            res["c_sorted_by_scipy"] = bool((a @ a).has_sorted_indices)
            t = time_it(lambda: a @ a, w, r, mb)
            if case["setup"] or case.get("dense"):
                d = a.toarray()
            if case.get("dense"):
                res["dense_ms"] = time_it(lambda: d @ d, w, r, mb)["ms"]
            if case["setup"]:

                def with_setup():
                    s_ = sp.csr_matrix(d)
                    return s_ @ s_
                s = time_it(with_setup, w, r, 0.0)
        res["op_ms"], res["op_min_ms"], res["op_batch"] = t["ms"], t["min_ms"], t["batch"]
        if case["setup"]:
            res["setup_ms"], res["setup_min_ms"] = s["ms"], s["min_ms"]
        results[case["id"]] = res
    json.dump({"scipy_version": scipy.__version__, "numpy_version": np.__version__,
               "python": sys.version.split()[0], "blas": blas_name(), "results": results}, open(sys.argv[2], "w"), indent=1)


if __name__ == "__main__":
    main()
