#!/usr/bin/python3
"""Turns what scripts/gpu_check.sh left in OUTDIR into the GPU tables and plots of the reports,
with no hand work: OUTDIR/report.md (one section per study, each naming its JSON) and the
attention plots in OUTDIR/plots/. A file that is missing (a step that did not run) gives a line
saying so, not an error.

    python3 scripts/gpu_report.py OUTDIR

Tables: the CUDA tests (passed, failed, skipped), the matmul variants (bench_matmul_gpu: GFLOP/s
and % of cuBLAS per size; bench_matmul --device cuda), the cuBLASLt kernels that ran (from
CUBLASLT_LOG_LEVEL=2), attention (time and peak memory per N, d, causal, pass, algorithm) and the
sparse study (examples/sparse/report_tables.py's tables).
"""
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def missing(name):
    return [f"`{name}`: not in this folder (the step did not run or failed; see summary.txt).", ""]


def cuda_tests(out):
    doc = load(os.path.join(out, "cuda_tests.json"))
    lines = ["## CUDA tests", ""]
    if doc is None:
        return lines + missing("cuda_tests.json")
    passed = failed = skipped = 0
    failures = []
    for suite in doc.get("testsuites", []):
        for t in suite.get("testsuite", []):
            if t.get("result") == "SKIPPED" or t.get("status") == "NOTRUN":
                skipped += 1
            elif t.get("failures"):
                failed += 1
                failures.append(f"{suite.get('name')}.{t.get('name')}")
            else:
                passed += 1
    lines += [f"{passed} passed, {failed} failed, {skipped} skipped (`cuda_tests.json`)."]
    lines += [f"- failed: `{f}`" for f in failures]
    return lines + [""]


def matmul_gpu(out):
    doc = load(os.path.join(out, "bench_matmul_gpu.json"))
    lines = ["## Matmul variants on the GPU (`bench_matmul_gpu.json`)", ""]
    if doc is None:
        return lines + missing("bench_matmul_gpu.json")
    rows = doc.get("results", [])
    labels = list(dict.fromkeys(r["label"] for r in rows))
    sizes = sorted({r["n"] for r in rows})
    lines += ["GFLOP/s (% of cuBLAS in brackets); a cell marked ! failed its check against cuBLAS.", "",
              "| variant | " + " | ".join(f"n={n}" for n in sizes) + " |", "|---|" + "---:|" * len(sizes)]
    for label in labels:
        cells = []
        for n in sizes:
            r = next((r for r in rows if r["label"] == label and r["n"] == n), None)
            if r is None:
                cells.append("-")
                continue
            pct = r.get("pct_cublas")
            cells.append(f"{r['gflops']:.0f}" + (f" ({pct:.0f}%)" if pct is not None else "") + ("" if r.get("ok", True) else " !"))
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines + [""]


def run_script(args):
    res = subprocess.run([sys.executable, *args], capture_output=True, text=True)
    if res.returncode != 0:
        return [f"({os.path.basename(args[0])} failed: {res.stderr.strip()[-300:]})", ""]
    return res.stdout.rstrip().splitlines() + [""]


def matmul_cuda(out):
    path = os.path.join(out, "bench_matmul_cuda.json")
    lines = ["## Matmul through the shared harness (`bench_matmul_cuda.json`)", ""]
    if not os.path.exists(path):
        return lines + missing("bench_matmul_cuda.json")
    return lines + run_script([os.path.join(ROOT, "examples", "matmul", "to_markdown.py"), path])


def cublaslt_kernels(out):
    path = os.path.join(out, "cublaslt_kernels.log")
    lines = ["## cuBLASLt kernels that ran (`cublaslt_kernels.log`)", ""]
    if not os.path.exists(path):
        return lines + missing("cublaslt_kernels.log")
    names = {}
    for line in open(path, errors="replace"):
        for m in re.finditer(r"(sm\d+_xmma_\w+|cutlass\w+|\b\w*gemm\w*kernel\w*)", line):
            names[m.group(1)] = names.get(m.group(1), 0) + 1
    if not names:
        return lines + ["The log holds no kernel names.", ""]
    lines += ["| kernel | lines of the log naming it |", "|---|---:|"]
    lines += [f"| `{k}` | {v} |" for k, v in sorted(names.items(), key=lambda kv: -kv[1])]
    return lines + [""]


def plot_python():
    """A Python with matplotlib for the plot scripts: this one, else Debian's."""
    for py in (sys.executable, "/usr/bin/python3"):
        if os.path.exists(py) and subprocess.run([py, "-c", "import matplotlib"], capture_output=True).returncode == 0:
            return py
    return sys.executable


def attention(out):
    path = os.path.join(out, "bench_attention_cuda.json")
    doc = load(path)
    lines = ["## Attention on the GPU (`bench_attention_cuda.json`)", ""]
    if doc is None:
        return lines + missing("bench_attention_cuda.json")
    lines += ["| N | d | causal | pass | algorithm | median ms | peak extra MiB |", "|---:|---:|:---:|---|---|---:|---:|"]
    for r in sorted(doc.get("results", []), key=lambda r: (r["d"], r["causal"], r["mode"], r["n"], r["impl"])):
        peak = r.get("peak_extra_bytes")
        lines.append(f"| {r['n']} | {r['d']} | {'yes' if r['causal'] else 'no'} | {r['mode']} | {r['impl']} | "
                     f"{r['median_ms']:.3f} | {'-' if peak is None else f'{peak / 2**20:.1f}'} |")
    plots = os.path.join(out, "plots")
    for causal in ([], ["--causal"]):
        res = subprocess.run([plot_python(), os.path.join(ROOT, "examples", "attention", "plot_attention.py"), path,
                              "--out", plots, *causal], capture_output=True, text=True)
        if res.returncode != 0:
            lines += ["", f"(plot_attention.py failed: {res.stderr.strip()[-300:]})"]
    if os.path.isdir(plots):
        lines += [""] + [f"![{p}](plots/{p})" for p in sorted(os.listdir(plots)) if p.endswith(".png")]
    return lines + [""]


def sparse(out):
    path = os.path.join(out, "bench_sparse_cuda.json")
    lines = ["## Sparse products on the GPU (`bench_sparse_cuda.json`)", ""]
    if not os.path.exists(path):
        return lines + missing("bench_sparse_cuda.json")
    return lines + run_script([os.path.join(ROOT, "examples", "sparse", "report_tables.py"), path])


def main():
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0 if len(sys.argv) == 2 else 2)
    out = sys.argv[1]
    if not os.path.isdir(out):
        sys.exit(f"gpu_report: {out} is not a folder (expected the OUTDIR of scripts/gpu_check.sh)")
    lines = ["# GPU results", ""]
    info = os.path.join(out, "summary.txt")
    if os.path.exists(info):
        lines += ["```", open(info, errors="replace").read().strip(), "```", ""]
    for section in (cuda_tests, matmul_gpu, matmul_cuda, cublaslt_kernels, attention, sparse):
        lines += section(out)
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("\n".join(lines))
    print(f"wrote {os.path.join(out, 'report.md')}")


if __name__ == "__main__":
    main()
