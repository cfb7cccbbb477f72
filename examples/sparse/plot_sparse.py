#!/usr/bin/python3
"""Plots for the sparse study from bench_sparse's JSON.

Usage: /usr/bin/python3 examples/sparse/plot_sparse.py RESULTS.json [MORE.json ...] OUTDIR
Writes spmv_time.png, spgemm_time.png, spmv_bandwidth.png and setup_share.png. With several files,
each operation's rows (and the SpMV file's copy bandwidth) come from the last file that has any.
"""
import json
import os
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def series(rows, n, key):
    pts = [(r["density"], r[key]) for r in rows if r["n"] == n and key in r and r[key] is not None]
    pts.sort()
    return [p[0] for p in pts], [p[1] for p in pts]


def time_plot(res, op, path):
    rows = [r for r in res[op] if "skipped" not in r]
    sizes = sorted({r["n"] for r in rows})
    threads = res.get("threads", [1, 2])
    tmax = max(threads)
    fig, axes = plt.subplots(1, len(sizes), figsize=(5 * len(sizes), 4.2), squeeze=False)
    lines = [(f"ember_t{tmax}_ms", f"Ember CSR, {tmax} threads", "C0", "-"),
             ("ember_t1_ms", "Ember CSR, 1 thread", "C0", ":"),
             ("scipy_ms", "SciPy CSR (1 thread)", "C1", "-"),
             ("dense_ms", "dense (Ember matmul)", "C2", "-"),
             ("numpy_dense_ms", "dense (NumPy/OpenBLAS, 2 threads)", "C5", "-"),
             (f"ember_setup_t{tmax}_ms", "Ember, from dense (setup incl.)", "C0", "--"),
             ("scipy_setup_ms", "SciPy, from dense (setup incl.)", "C1", "--"),
             ("cusparse_ms", "cuSPARSE", "C3", "-"),
             ("cusparse_setup_ms", "cuSPARSE, setup incl.", "C3", "--"),
             ("cublas_ms", "cuBLAS dense", "C4", "-"),
             ("cublas_setup_ms", "cuBLAS dense, setup incl.", "C4", "--")]
    for ax, n in zip(axes[0], sizes):
        for key, label, color, style in lines:
            x, y = series(rows, n, key)
            if x:
                ax.loglog(x, y, style, color=color, marker="o", ms=3, label=label)
        ax.set_title(f"{op.upper()}, n = {n}")
        ax.set_xlabel("density")
        ax.set_ylabel("time per call (ms, median)")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def bandwidth_plot(res, path):
    rows = [r for r in res["spmv"] if "ember_gbs" in r]
    fig, ax = plt.subplots(figsize=(6, 4.2))
    for n in sorted({r["n"] for r in rows}):
        x, y = series(rows, n, "ember_gbs")
        ax.semilogx(x, y, marker="o", label=f"Ember SpMV, n = {n}")
    if "stream" in res:
        ax.axhline(res["stream"]["copy_gbs"], color="k", ls="--", label="STREAM-like copy")
        ax.axhline(0.5 * res["stream"]["copy_gbs"], color="k", ls=":", label="50% of copy")
    ax.set_xlabel("density")
    ax.set_ylabel("modelled bytes / time (GB/s)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def setup_plot(res, path):
    threads = max(res.get("threads", [2]))
    pairs = [(f"ember_t{threads}_ms", f"ember_setup_t{threads}_ms", "Ember"), ("scipy_ms", "scipy_setup_ms", "SciPy"),
             ("cusparse_ms", "cusparse_setup_ms", "cuSPARSE")]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2))
    for ax, op in zip(axes, ["spmv", "spgemm"]):
        rows = [r for r in res[op] if "skipped" not in r]
        for n in sorted({r["n"] for r in rows}):
            for k_op, k_setup, label in pairs:
                pts = sorted((r["density"], 100 * (1 - r[k_op] / r[k_setup])) for r in rows
                             if r["n"] == n and k_op in r and k_setup in r)
                if pts:
                    ax.semilogx([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, label=f"{label}, n = {n}")
        ax.set_title(f"{op.upper()}: share of time spent on setup")
        ax.set_xlabel("density")
        ax.set_ylabel("setup share (%)")
        ax.set_ylim(0, 100)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    files = [json.load(open(p)) for p in sys.argv[1:-1]]
    out = sys.argv[-1]
    res = dict(files[0])
    for f in files:
        for op in ("spmv", "spgemm"):
            if f.get(op):
                res[op] = f[op]
                if op == "spmv" and "stream" in f:
                    res["stream"] = f["stream"]
    os.makedirs(out, exist_ok=True)
    time_plot(res, "spmv", os.path.join(out, "spmv_time.png"))
    time_plot(res, "spgemm", os.path.join(out, "spgemm_time.png"))
    bandwidth_plot(res, os.path.join(out, "spmv_bandwidth.png"))
    setup_plot(res, os.path.join(out, "setup_share.png"))
    print("wrote plots to", out)


if __name__ == "__main__":
    main()
