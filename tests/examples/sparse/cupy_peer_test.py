#!/usr/bin/python3
"""examples/sparse/cupy_peer.py run end to end on the CPU against a stand-in for CuPy built on NumPy
and SciPy (written below, into a temporary folder put first on the path), then its JSON read by
scripts/gpu_report.py. FORMAT TEST: the stand-in computes what CuPy would, so the rows must check
out against SciPy, but none of its timings means anything; what is tested is the script's flow
(cases cheapest first, the multiply-add cap, a row per case written as it goes, the result checks)
and that the report reads the file it writes. Needs a Python with SciPy (the benchmarks' peer
environment, else this one); skipped, saying so, without one."""
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
PEER = os.path.join(ROOT, "examples", "sparse", "cupy_peer.py")
REPORT = os.path.join(ROOT, "scripts", "gpu_report.py")

FAKE_CUPY = textwrap.dedent('''
    """A stand-in for the parts of CuPy that cupy_peer.py uses, on NumPy (arrays stay on the host)."""
    import time
    import numpy as np
    __version__ = "stand-in"

    class _Array(np.ndarray):
        def get(self):
            return np.asarray(self)

    def asarray(x):
        return np.array(x).view(_Array)

    class _Event:
        def record(self):
            self.t = time.perf_counter()
        def synchronize(self):
            pass

    class _Device:
        def synchronize(self):
            pass

    class _Runtime:
        @staticmethod
        def getDeviceCount():
            return 1
        @staticmethod
        def getDeviceProperties(i):
            return {"name": b"stand-in GPU"}

    class _DeviceModule:
        @staticmethod
        def get_cusparse_handle():
            return 0

    class cuda:
        Event = _Event
        Device = _Device
        runtime = _Runtime
        device = _DeviceModule
        @staticmethod
        def get_elapsed_time(a, b):
            return (b.t - a.t) * 1e3
''')

FAKE_CUPYX_SPARSE = textwrap.dedent('''
    import numpy as np
    import scipy.sparse as sp
    import cupy

    class csr_matrix:
        def __init__(self, x):
            self.m = sp.csr_matrix(x.m if isinstance(x, csr_matrix) else (x if sp.issparse(x) else np.asarray(x)))
        def __matmul__(self, other):
            if isinstance(other, csr_matrix):
                return csr_matrix(self.m @ other.m)
            return cupy.asarray(self.m @ np.asarray(other))
        def get(self):
            return self.m.copy()
''')


def python_with_scipy():
    for py in (sys.executable, os.path.join(os.environ.get("EMBER_PEER_VENV", os.path.expanduser("~/.cache/ember/peer-venv")),
                                            "bin", "python")):
        if os.path.exists(py) and subprocess.run([py, "-c", "import scipy"], capture_output=True).returncode == 0:
            return py
    return None


class CupyPeerFormat(unittest.TestCase):
    def test_runs_end_to_end_and_the_report_reads_it(self):
        py = python_with_scipy()
        if py is None:
            self.skipTest("no Python with SciPy here (run ./run.sh bench-deps for the peer environment)")
        d = tempfile.mkdtemp()
        fake = os.path.join(d, "fake")
        os.makedirs(os.path.join(fake, "cupy"))
        os.makedirs(os.path.join(fake, "cupyx", "scipy", "sparse"))
        for path, text in ((("cupy", "__init__.py"), FAKE_CUPY), (("cupyx", "__init__.py"), ""),
                           (("cupyx", "scipy", "__init__.py"), ""), (("cupyx", "scipy", "sparse", "__init__.py"), FAKE_CUPYX_SPARSE)):
            with open(os.path.join(fake, *path), "w") as f:
                f.write(text)
        out = os.path.join(d, "cupy_sparse.json")
        env = dict(os.environ, PYTHONPATH=fake)
        res = subprocess.run([py, PEER, "--json", out, "--spmv-sizes", "64,200", "--spgemm-sizes", "50,300",
                              "--densities", "0.01,0.3", "--max-products", "1e6", "--repeats", "2"],
                             capture_output=True, text=True, env=env)
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        with open(out) as f:
            doc = json.load(f)
        self.assertEqual(doc["gpu"], "stand-in GPU")
        self.assertEqual(len(doc["spmv"]), 4)
        self.assertEqual(len(doc["spgemm"]), 3)  # 300^3 x 0.3^2 = 2.4e6 multiply-adds: over the cap
        self.assertEqual(doc["skipped"], [{"op": "spgemm", "n": 300, "density": 0.3,
                                           "why": "2.4e+06 multiply-adds > --max-products"}])
        for op in ("spmv", "spgemm"):
            for r in doc[op]:
                self.assertTrue(r["ok"], r)
                self.assertLess(r["cupy_rel_err"], 1e-6)
                parts = r["cupy_h2d_dense_ms"] + r["cupy_convert_ms"] + r["cupy_first_call_ms"] + r["cupy_d2h_ms"]
                self.assertAlmostEqual(r["cupy_setup_ms"], parts)
                self.assertAlmostEqual(r["scipy_setup_ms"], r["scipy_convert_ms"] + r["scipy_ms"])
        # The cheapest case ran first: rows appear in order of cost within each op.
        costs = [r["n"] * r["n"] * r["density"] for r in doc["spmv"]]
        self.assertEqual(costs, sorted(costs))
        subprocess.run([sys.executable, REPORT, d], check=True, capture_output=True)
        with open(os.path.join(d, "report.md")) as f:
            report = f.read()
        self.assertIn("CuPy stand-in, SciPy", report)
        self.assertIn("- not run: spgemm n=300 density 0.3", report)
        self.assertEqual(report.count("| ok |"), 7)


if __name__ == "__main__":
    unittest.main()
