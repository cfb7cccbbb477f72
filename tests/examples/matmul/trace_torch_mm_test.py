#!/usr/bin/python3
"""examples/matmul/trace_torch_mm.py with --device cpu (its GPU code path, at 1/64 of the sizes, with
the CPU profiler only), then its JSON read by scripts/gpu_report.py. FORMAT TEST: on the CPU no
cuBLAS kernel runs, so it checks the profiler calls, the recorded operators and the report's table,
not a trace. Needs a Python with PyTorch (the benchmarks' peer environment, else this one);
skipped, saying so, without one."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
SCRIPT = os.path.join(ROOT, "examples", "matmul", "trace_torch_mm.py")
REPORT = os.path.join(ROOT, "scripts", "gpu_report.py")


def python_with_torch():
    for py in (sys.executable, os.path.join(os.environ.get("EMBER_PEER_VENV", os.path.expanduser("~/.cache/ember/peer-venv")),
                                            "bin", "python")):
        if os.path.exists(py) and subprocess.run([py, "-c", "import torch"], capture_output=True).returncode == 0:
            return py
    return None


class TraceTorchMmFormat(unittest.TestCase):
    def test_cpu_trace_and_its_table(self):
        py = python_with_torch()
        if py is None:
            self.skipTest("no Python with PyTorch here (run ./run.sh bench-deps for the peer environment)")
        d = tempfile.mkdtemp()
        out = os.path.join(d, "torch_mm_trace.json")
        res = subprocess.run([py, SCRIPT, "--device", "cpu", "--json", out], capture_output=True, text=True)
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        with open(out) as f:
            doc = json.load(f)
        self.assertRegex(doc["git_version"], r"^[0-9a-f]{40}$")  # the commit the source reading pins to
        self.assertEqual([(c["m"], c["k"], c["n"], c["dtype"]) for c in doc["cases"]],
                         [(64, 64, 64, "float32"), (64, 64, 64, "float32"), (1, 12, 36, "float32"), (64, 64, 64, "bfloat16")])
        for c in doc["cases"]:
            self.assertEqual(c["cpu_ops"][0], "aten::mm")
            self.assertEqual(c["kernels"], [])
            self.assertLess(c["rel_err"], 1e-2 if c["dtype"] == "bfloat16" else 1e-5)
        subprocess.run([sys.executable, REPORT, d], check=True, capture_output=True)
        with open(os.path.join(d, "report.md")) as f:
            report = f.read()
        self.assertIn(f"PyTorch {doc['torch']} (git {doc['git_version']})", report)
        self.assertIn("| 1x12x36 | float32 | no | `aten::mm`", report)


if __name__ == "__main__":
    unittest.main()
