#!/usr/bin/python3
"""CuPy's cuSPARSE (cupyx.scipy.sparse) against SciPy on the sparse study's sizes and densities,
each setup cost timed on its own: the cuSPARSE handle's creation, the host-to-device transfer (of
the dense matrix, and of a CSR built on the host), the dense-to-CSR conversion on the GPU and on
the CPU, the first call (descriptors, workspace) and the download of the result.

    python3 examples/sparse/cupy_peer.py --json OUT.json [--max-seconds 17]

Rows are shaped like bench_sparse's ({"spmv": [...], "spgemm": [...]}, keys ending in _ms), so
scripts/gpu_report.py sets them beside Ember's cuSPARSE path (bench_sparse --device cuda). Cases
run from the cheapest up and the file is rewritten after each one, so a run cut short by its time
limit still leaves every finished case. Each CuPy result is checked against SciPy's.
"""
import argparse
import json
import sys
import time

import numpy as np
import scipy
import scipy.sparse as sp


# A case may take at most about this long per timed quantity: slow points get fewer samples, so
# that the whole sweep fits its step's time limit.
MAX_MS_PER_POINT = 300


def median_ms(f, repeats, sync=lambda: None):
    times = []
    for _ in range(repeats):
        sync()
        t0 = time.perf_counter()
        f()
        sync()
        times.append((time.perf_counter() - t0) * 1e3)
        if sum(times) > MAX_MS_PER_POINT:
            break
    return float(np.median(times))


def random_dense(rng, n, density):
    """An n x n float32 matrix whose entries are nonzero with probability `density` (random normal)."""
    dense = np.zeros((n, n), np.float32)
    nnz = rng.binomial(n * n, density)
    flat = rng.choice(n * n, size=nnz, replace=False) if nnz < n * n // 4 else np.flatnonzero(rng.random(n * n) < density)
    dense.flat[flat] = rng.standard_normal(flat.size).astype(np.float32)
    return dense


def gpu_timer(cp):
    """Times f on the GPU with CUDA events (the median of up to `repeats` calls after one warm-up)."""
    def run(f, repeats):
        f()
        start, stop, times = cp.cuda.Event(), cp.cuda.Event(), []
        for _ in range(repeats):
            start.record()
            f()
            stop.record()
            stop.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, stop))
            if sum(times) > MAX_MS_PER_POINT:
                break
        return float(np.median(times))
    return run


def spmv_case(cp, csp, rng, n, density, repeats):
    sync = cp.cuda.Device().synchronize
    dense = random_dense(rng, n, density)
    x = rng.standard_normal(n).astype(np.float32)
    row = {"n": n, "density": density}
    row["scipy_convert_ms"] = median_ms(lambda: sp.csr_matrix(dense), 1)
    a = sp.csr_matrix(dense)
    row["nnz"] = int(a.nnz)
    row["scipy_ms"] = median_ms(lambda: a @ x, repeats)
    row["scipy_setup_ms"] = row["scipy_convert_ms"] + row["scipy_ms"]
    # The GPU side from the same dense matrix: upload, convert on the GPU, first call, timed calls, download.
    row["cupy_h2d_dense_ms"] = median_ms(lambda: cp.asarray(dense), 1, sync)
    dd = cp.asarray(dense)
    row["cupy_convert_ms"] = median_ms(lambda: csp.csr_matrix(dd), 1, sync)
    row["cupy_h2d_csr_ms"] = median_ms(lambda: csp.csr_matrix(a), 1, sync)  # a CSR built on the host instead
    da, dx = csp.csr_matrix(dd), cp.asarray(x)
    t0 = time.perf_counter(); dy = da @ dx; sync()
    row["cupy_first_call_ms"] = (time.perf_counter() - t0) * 1e3
    row["cupy_ms"] = gpu_timer(cp)(lambda: da @ dx, repeats)
    row["cupy_d2h_ms"] = median_ms(lambda: dy.get(), 1, sync)
    row["cupy_setup_ms"] = row["cupy_h2d_dense_ms"] + row["cupy_convert_ms"] + row["cupy_first_call_ms"] + row["cupy_d2h_ms"]
    want = a @ x
    row["cupy_rel_err"] = float(np.max(np.abs(dy.get() - want)) / max(np.max(np.abs(want)), 1e-30))
    row["ok"] = row["cupy_rel_err"] < 1e-4
    return row


def spgemm_case(cp, csp, rng, n, density, repeats):
    sync = cp.cuda.Device().synchronize
    dense = random_dense(rng, n, density)
    row = {"n": n, "density": density}
    row["scipy_convert_ms"] = median_ms(lambda: sp.csr_matrix(dense), 1)
    a = sp.csr_matrix(dense)
    row["nnz"] = int(a.nnz)
    row["scipy_ms"] = median_ms(lambda: a @ a, repeats)
    row["scipy_setup_ms"] = row["scipy_convert_ms"] + row["scipy_ms"]
    row["cupy_h2d_dense_ms"] = median_ms(lambda: cp.asarray(dense), 1, sync)
    dd = cp.asarray(dense)
    row["cupy_convert_ms"] = median_ms(lambda: csp.csr_matrix(dd), 1, sync)
    row["cupy_h2d_csr_ms"] = median_ms(lambda: csp.csr_matrix(a), 1, sync)
    da = csp.csr_matrix(dd)
    t0 = time.perf_counter(); dc = da @ da; sync()
    row["cupy_first_call_ms"] = (time.perf_counter() - t0) * 1e3
    row["cupy_ms"] = gpu_timer(cp)(lambda: da @ da, repeats)
    row["cupy_d2h_ms"] = median_ms(lambda: dc.get(), 1, sync)
    row["cupy_setup_ms"] = row["cupy_h2d_dense_ms"] + row["cupy_convert_ms"] + row["cupy_first_call_ms"] + row["cupy_d2h_ms"]
    want, got = a @ a, dc.get()
    row["c_nnz"] = int(want.nnz)
    diff = abs(got - want)
    scale = max(float(abs(want).max()) if want.nnz else 0.0, 1e-30)
    row["cupy_rel_err"] = (float(diff.max()) if diff.nnz else 0.0) / scale
    row["ok"] = row["cupy_rel_err"] < 1e-4
    return row


def floats(s):
    return [float(v) for v in s.split(",") if v]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", required=True)
    ap.add_argument("--spmv-sizes", default="1024,8192")
    ap.add_argument("--spgemm-sizes", default="512,1024,2048")
    ap.add_argument("--densities", default="1e-5,1e-4,1e-3,0.01,0.05,0.1,0.2,0.5")
    ap.add_argument("--max-products", type=float, default=1e8, help="skip SpGEMM cases with more multiply-adds")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--max-seconds", type=float, default=17, help="start no case after this many seconds")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    try:
        import cupy as cp
        import cupyx.scipy.sparse as csp
        cp.cuda.runtime.getDeviceCount()
    except Exception as e:  # no CuPy or no GPU: say so, measure nothing
        sys.exit(f"cupy_peer: CuPy with a GPU is needed ({type(e).__name__}: {e})")

    t_start = time.perf_counter()
    doc = {"cupy": cp.__version__, "scipy": scipy.__version__, "numpy": np.__version__,
           "gpu": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "repeats": args.repeats,
           "spmv": [], "spgemm": [], "skipped": []}
    # The handle is created on first use; timed here on its own, before any sparse call needs it.
    t0 = time.perf_counter()
    cp.cuda.device.get_cusparse_handle()
    doc["cusparse_handle_ms"] = (time.perf_counter() - t0) * 1e3

    cases = [("spmv", int(n), d, n * n * d) for n in floats(args.spmv_sizes) for d in floats(args.densities)]
    cases += [("spgemm", int(n), d, n ** 3 * d * d) for n in floats(args.spgemm_sizes) for d in floats(args.densities)]
    rng = np.random.default_rng(args.seed)
    for op, n, d, cost in sorted(cases, key=lambda c: c[3]):
        if op == "spgemm" and cost > args.max_products:
            doc["skipped"].append({"op": op, "n": n, "density": d, "why": f"{cost:.2g} multiply-adds > --max-products"})
            continue
        if time.perf_counter() - t_start > args.max_seconds:
            doc["skipped"].append({"op": op, "n": n, "density": d, "why": f"time: past --max-seconds {args.max_seconds:g}"})
            continue
        row = (spmv_case if op == "spmv" else spgemm_case)(cp, csp, rng, n, d, args.repeats)
        doc[op].append(row)
        print(f"{op:6s} n={n:<5d} d={d:<7g} scipy {row['scipy_ms']:9.3f} ms  cupy {row['cupy_ms']:9.3f} ms  "
              f"cupy+setup {row['cupy_setup_ms']:9.3f} ms  {'ok' if row['ok'] else 'WRONG'}", flush=True)
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)
    with open(args.json, "w") as f:
        json.dump(doc, f, indent=1)
    bad = [r for op in ("spmv", "spgemm") for r in doc[op] if not r["ok"]]
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
