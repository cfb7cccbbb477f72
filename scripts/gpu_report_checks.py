"""The sections of scripts/gpu_report.py that read the checks and traces of scripts/gpu_check.sh
(compute-sanitizer, the Python CUDA tests, the torch.mm trace, ncu) and CuPy's sparse run. Each
takes the OUTDIR and returns markdown lines; a missing file gives a line saying so."""
import csv
import json
import os
import re
import xml.etree.ElementTree as ET


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def missing(name):
    return [f"`{name}`: not in this folder (the step did not run or failed; see summary.txt).", ""]


def sanitizer(out):
    lines = ["## compute-sanitizer (memcheck over one test per kernel family, racecheck over the shared-memory ones)", "",
             "| tool | log | tests run | errors / hazards reported | verdict |", "|---|---|---:|---:|---|"]
    found = False
    for tool in ("memcheck", "racecheck"):
        name = f"sanitizer_{tool}.log"
        path = os.path.join(out, name)
        if not os.path.exists(path):
            lines.append(f"| {tool} | `{name}` | - | - | not run (no log) |")
            continue
        found = True
        text = open(path, errors="replace").read()
        ran = re.search(r"\[==========\] (\d+) tests? from .* ran", text)
        passed = re.search(r"\[  PASSED  \] (\d+) test", text)
        # memcheck: "ERROR SUMMARY: N errors"; racecheck: "RACECHECK SUMMARY: N hazards displayed (E errors, W warnings)"
        m = re.search(r"ERROR SUMMARY: (\d+) error", text) or re.search(r"RACECHECK SUMMARY: (\d+) hazard", text)
        count = int(m.group(1)) if m else None
        if count is None:
            verdict = "no summary line (cut short?)"
        elif count == 0 and ran and passed and passed.group(1) == ran.group(1):
            verdict = "clean"
        elif count == 0:
            verdict = "no findings, but not every test passed"
        else:
            verdict = "FINDINGS: see the log"
        lines.append(f"| {tool} | `{name}` | {ran.group(1) if ran else '?'} | {'?' if count is None else count} | {verdict} |")
    return lines + ([""] if found else ["", "Neither sanitizer log is here.", ""])


def python_tests(out):
    name = "python_cuda_tests.xml"
    lines = [f"## Python CUDA tests against this CUDA build (`{name}`)", ""]
    try:
        root = ET.parse(os.path.join(out, name)).getroot()
    except (OSError, ET.ParseError):
        return lines + missing(name)
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    counts = {k: int(suite.get(k, 0)) for k in ("tests", "failures", "errors", "skipped")}
    passed = counts["tests"] - counts["failures"] - counts["errors"] - counts["skipped"]
    lines.append(f"{passed} passed, {counts['failures']} failed, {counts['errors']} errors, {counts['skipped']} skipped.")
    for case in suite.iter("testcase"):
        for kind in ("failure", "error", "skipped"):
            el = case.find(kind)
            if el is not None:
                msg = (el.get("message") or "").splitlines()[0][:120] if el.get("message") else ""
                lines.append(f"- {kind}: `{case.get('name')}` {msg}")
    return lines + [""]


def torch_trace(out):
    name = "torch_mm_trace.json"
    lines = [f"## How torch.mm reaches cuBLAS, traced (`{name}`, `torch_mm_cublaslt.log`)", ""]
    doc = load(os.path.join(out, name))
    if doc is None:
        return lines + missing(name)
    lines += [f"PyTorch {doc.get('torch')} (git {doc.get('git_version')}), CUDA {doc.get('cuda')}, {doc.get('gpu')}; "
              f"preferred BLAS library: {doc.get('preferred_blas_library')}.", "",
              "| m x k x n | dtype | TF32 allowed | operators (in order) | GPU kernels | rel. error vs float64 |",
              "|---|---|:---:|---|---|---:|"]
    for c in doc.get("cases", []):
        lines.append(f"| {c['m']}x{c['k']}x{c['n']} | {c['dtype']} | {'yes' if c['allow_tf32'] else 'no'} | "
                     f"{' > '.join(f'`{o}`' for o in c['cpu_ops'])} | {'<br>'.join(f'`{k}`' for k in c['kernels'])} | "
                     f"{c['rel_err']:.1e} |")
    log = os.path.join(out, "torch_mm_cublaslt.log")
    if os.path.exists(log):
        calls = [l.strip() for l in open(log, errors="replace") if "cublasLtMatmul" in l or "algo" in l.lower()]
        lines += ["", f"`torch_mm_cublaslt.log`: {len(calls)} lines name a cuBLASLt matmul call or algorithm"
                  + (f"; the first: `{calls[0][:200]}`" if calls else " (torch took the cuBLAS path, not cuBLASLt's)") + "."]
    return lines + [""]


NCU_COLUMNS = [("gpu__time_duration.sum", "time"), ("launch__block_size", "block"), ("launch__grid_size", "grid"),
               ("launch__registers_per_thread", "regs/thread"), ("launch__shared_mem_per_block_static", "static smem/block"),
               ("launch__shared_mem_per_block_dynamic", "dynamic smem/block"),
               ("sm__maximum_warps_per_active_cycle_pct", "theoretical occupancy %"),
               ("sm__warps_active.avg.pct_of_peak_sustained_active", "achieved occupancy %"),
               ("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.pct_of_peak_sustained_elapsed", "shared-memory pipe % of peak"),
               ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum", "bank conflicts"),
               ("dram__throughput.avg.pct_of_peak_sustained_elapsed", "DRAM throughput % of peak")]


def read_ncu_csv(path):
    """Rows of ncu --csv --page raw: a header line starting "ID", a units line, one line per kernel."""
    text = open(path, errors="replace").read().splitlines()
    start = next((i for i, l in enumerate(text) if l.startswith('"ID"')), None)
    if start is None:
        return [], {}
    rows = list(csv.DictReader(text[start:]))
    units = rows[0] if rows and not rows[0].get("ID", "").strip().isdigit() else {}
    return [r for r in rows if r.get("ID", "").strip().isdigit()], units


def short_kernel(name):
    base = re.sub(r"\(.*$", "", name)  # the parameter list
    return re.sub(r"^void\s+", "", base).replace("ember::", "")


def ncu(out):
    lines = ["## ncu: occupancy, shared-memory and DRAM throughput (`ncu_matmul.csv`, `ncu_flash.csv`)", ""]
    rows = []
    for name in ("ncu_matmul.csv", "ncu_flash.csv"):
        path = os.path.join(out, name)
        if not os.path.exists(path):
            lines.append(f"`{name}`: not in this folder (the step did not run or failed; see summary.txt).")
            continue
        got, units = read_ncu_csv(path)
        if not got:
            lines.append(f"`{name}`: no kernel was profiled (see the ncu_*.log next to it).")
        rows += [(r, units) for r in got]
    if not rows:
        return lines + [""]
    lines += ["", "| kernel | " + " | ".join(h for _, h in NCU_COLUMNS) + " |", "|---|" + "---:|" * len(NCU_COLUMNS)]
    for r, units in rows:
        cells = []
        for key, _ in NCU_COLUMNS:
            v = r.get(key, "-").strip() or "-"
            u = units.get(key, "").strip()
            cells.append(f"{v} {u}".strip() if u and v != "-" and u not in ("%", "") else v)
        lines.append(f"| `{short_kernel(r.get('Kernel Name', '?'))}` | " + " | ".join(cells) + " |")
    return lines + [""]


def _fmt(v):
    return "-" if v is None else f"{v:.3g}"


def cupy_sparse(out):
    name = "cupy_sparse.json"
    lines = [f"## CuPy's cuSPARSE against SciPy, setup included, beside Ember's cuSPARSE path (`{name}`, `bench_sparse_cuda.json`)", ""]
    doc = load(os.path.join(out, name))
    if doc is None:
        return lines + missing(name)
    ember = load(os.path.join(out, "bench_sparse_cuda.json")) or {}
    lines += [f"CuPy {doc.get('cupy')}, SciPy {doc.get('scipy')} (one thread), {doc.get('gpu')}; median of "
              f"up to {doc.get('repeats')} calls (fewer where they pass 0.3 s); cuSPARSE handle created in {doc.get('cusparse_handle_ms', 0):.3g} ms (once per "
              "program, not in the rows). Times in ms. CuPy + setup = dense upload + conversion on the GPU + first call "
              "+ download of the result; SciPy + setup = conversion from dense + the product.", ""]
    for op in ("spmv", "spgemm"):
        rows = doc.get(op, [])
        if not rows:
            lines += [f"{op}: no case ran.", ""]
            continue
        ember_rows = {(r.get("n"), r.get("density")): r for r in ember.get(op, [])}
        lines += [f"### {'SpMV y = A x' if op == 'spmv' else 'SpGEMM C = A A'}", "",
                  "| n | density | nnz | SciPy | CuPy | SciPy / CuPy | SciPy + setup | CuPy + setup | (upload, convert, first call, download) | CSR upload | Ember cuSPARSE | Ember cuSPARSE + setup | check |",
                  "|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---|"]
        for r in sorted(rows, key=lambda r: (r["n"], r["density"])):
            e = ember_rows.get((r["n"], r["density"]), {})
            parts = ", ".join(_fmt(r.get(k)) for k in ("cupy_h2d_dense_ms", "cupy_convert_ms", "cupy_first_call_ms", "cupy_d2h_ms"))
            lines.append(f"| {r['n']} | {r['density']:g} | {r['nnz']} | {_fmt(r['scipy_ms'])} | {_fmt(r['cupy_ms'])} | "
                         f"{r['scipy_ms'] / max(r['cupy_ms'], 1e-12):.2f} | {_fmt(r['scipy_setup_ms'])} | {_fmt(r['cupy_setup_ms'])} | "
                         f"{parts} | {_fmt(r.get('cupy_h2d_csr_ms'))} | {_fmt(e.get('cusparse_ms'))} | "
                         f"{_fmt(e.get('cusparse_setup_ms'))} | {'ok' if r.get('ok') else 'WRONG'} |")
        lines.append("")
    for s in doc.get("skipped", []):
        lines.append(f"- not run: {s['op']} n={s['n']} density {s['density']:g}: {s['why']}")
    return lines + [""]
