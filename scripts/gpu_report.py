#!/usr/bin/python3
"""Turns what scripts/gpu_check.sh left in OUTDIR into the GPU tables and plots of the reports,
with no hand work: OUTDIR/report.md (one section per study, each naming its JSON) and the
attention plots in OUTDIR/plots/. A file that is missing (a step that did not run) gives a line
saying so, not an error.

    python3 scripts/gpu_report.py OUTDIR

Tables: the CUDA tests (passed, failed, skipped), compute-sanitizer's verdicts, the Python CUDA
tests, the matmul variants (bench_matmul_gpu: GFLOP/s and % of cuBLAS per size; bench_matmul
--device cuda), the cuBLASLt kernels that ran (from CUBLASLT_LOG_LEVEL=2), the torch.mm trace, the
ncu profile, attention (time and peak memory per N, d, causal, pass, algorithm), the sparse study
(examples/sparse/report_tables.py's tables) and CuPy's cuSPARSE against SciPy beside Ember's.
The sections are in gpu_report_checks.py too.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_report_checks  # noqa: E402  (beside this file)
from gpu_report_checks import load, missing  # noqa: E402  (one reader of the step outputs for both)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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


# Every file the report reads; scripts/gpu_check_plan.py checks that some step of gpu_check.sh writes
# each (a step NAME writes NAME.log).
INPUTS = ["cuda_tests.json", "sanitizer_memcheck.log", "sanitizer_racecheck.log", "python_cuda_tests.xml",
          "bench_matmul_gpu.json", "bench_matmul_cuda.json", "cublaslt_kernels.log", "torch_mm_trace.json",
          "torch_mm_cublaslt.log", "ncu_matmul.csv", "ncu_flash.csv", "bench_attention_cuda.json",
          "bench_sparse_cuda.json", "cupy_sparse.json"]

# The questions of the two GPU reports and the files that answer them (examples/matmul/GPU.md,
# examples/sparse/README.md name the same list).
QUESTIONS = [
    ("matmul", "Naive against __shared__-tiled kernels, and the TILE sweet spot", ["bench_matmul_gpu.json"]),
    ("matmul", "Register tiling against the best tiled kernel and cuBLAS", ["bench_matmul_gpu.json", "bench_matmul_cuda.json"]),
    ("matmul", "Why: occupancy, shared-memory and DRAM throughput of tiled, register-tiled (and flash)", ["ncu_matmul.csv", "ncu_flash.csv"]),
    ("matmul", "Which cuBLAS kernel runs", ["cublaslt_kernels.log"]),
    ("matmul", "How PyTorch calls cuBLAS (a trace of torch.mm)", ["torch_mm_trace.json", "torch_mm_cublaslt.log"]),
    ("sparse", "CuPy's cuSPARSE against SciPy across densities, setup included", ["cupy_sparse.json"]),
    ("sparse", "Ember's cuSPARSE path and cuBLAS, op alone and with setup", ["bench_sparse_cuda.json"]),
    ("both", "Every CUDA kernel correct on the GPU (C++ and Python tests, compute-sanitizer)",
     ["cuda_tests.json", "python_cuda_tests.xml", "sanitizer_memcheck.log", "sanitizer_racecheck.log"]),
]


def questions(out):
    lines = ["## The reports' questions and what this run answers", "", "| report | question | files | status |", "|---|---|---|---|"]
    for report, q, files in QUESTIONS:
        have = [f for f in files if os.path.exists(os.path.join(out, f))]
        status = "measured" if len(have) == len(files) else ("partly measured" if have else "not measured yet")
        lines.append(f"| {report} | {q} | {', '.join(f'`{f}`' for f in files)} | {status} |")
    return lines + [""]


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
    g = gpu_report_checks
    for section in (questions, cuda_tests, g.sanitizer, g.python_tests, matmul_gpu, matmul_cuda, cublaslt_kernels,
                    g.torch_trace, g.ncu, attention, sparse, g.cupy_sparse):
        lines += section(out)
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("\n".join(lines))
    print(f"wrote {os.path.join(out, 'report.md')}")


if __name__ == "__main__":
    main()
