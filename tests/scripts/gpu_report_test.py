#!/usr/bin/python3
"""scripts/gpu_report.py on a synthetic gpu_check.sh folder: each present file becomes its table,
each missing one a line that says so."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "gpu_report.py")


class GpuReport(unittest.TestCase):
    def test_tables_from_present_files_and_lines_for_missing_ones(self):
        d = tempfile.mkdtemp()
        with open(os.path.join(d, "cuda_tests.json"), "w") as f:
            json.dump({"testsuites": [{"name": "CudaMatmul", "testsuite": [
                {"name": "A", "result": "COMPLETED"}, {"name": "B", "result": "SKIPPED"},
                {"name": "C", "result": "COMPLETED", "failures": [{"failure": "x"}]}]}]}, f)
        with open(os.path.join(d, "bench_matmul_gpu.json"), "w") as f:
            json.dump({"results": [
                {"n": 1024, "label": "tiled16", "gflops": 2500.0, "pct_cublas": 12.5, "ok": True},
                {"n": 1024, "label": "cublas", "gflops": 20000.0, "pct_cublas": 100.0, "ok": True},
                {"n": 4096, "label": "tiled16", "gflops": 3000.0, "pct_cublas": 11.0, "ok": False}]}, f)
        with open(os.path.join(d, "cublaslt_kernels.log"), "w") as f:
            f.write("[cublasLt][matmul] algo sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32\n" * 3)
        subprocess.run([sys.executable, SCRIPT, d], check=True, capture_output=True)
        report = open(os.path.join(d, "report.md")).read()
        self.assertIn("1 passed, 1 failed, 1 skipped", report)
        self.assertIn("`CudaMatmul.C`", report)
        self.assertIn("| tiled16 | 2500 (12%) | 3000 (11%) ! |", report)
        self.assertIn("| cublas | 20000 (100%) | - |", report)
        self.assertIn("| `sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32` | 3 |", report)
        self.assertIn("`bench_attention_cuda.json`: not in this folder", report)
        self.assertIn("`bench_sparse_cuda.json`: not in this folder", report)

    def test_not_a_folder_is_an_error(self):
        res = subprocess.run([sys.executable, SCRIPT, "/nonexistent/out"], capture_output=True, text=True)
        self.assertNotEqual(res.returncode, 0)
        self.assertIn("is not a folder", res.stderr)


if __name__ == "__main__":
    unittest.main()
