#!/usr/bin/python3
"""scripts/gpu_report.py on a synthetic gpu_check.sh folder: each present file becomes its table,
each missing one a line that says so.

FORMAT TEST: every input below is fabricated, shaped like what the tools write (gtest JSON, pytest's
JUnit XML, compute-sanitizer's summary lines, ncu's --csv --page raw, the scripts' JSON). None of
its numbers is a measurement; it checks only that the report turns such files into its tables."""
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
        with open(os.path.join(d, "report.md")) as f:
            report = f.read()
        self.assertIn("1 passed, 1 failed, 1 skipped", report)
        self.assertIn("`CudaMatmul.C`", report)
        self.assertIn("| tiled16 | 2500 (12%) | 3000 (11%) ! |", report)
        self.assertIn("| cublas | 20000 (100%) | - |", report)
        self.assertIn("| `sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32` | 3 |", report)
        self.assertIn("`bench_attention_cuda.json`: not in this folder", report)
        self.assertIn("`bench_sparse_cuda.json`: not in this folder", report)

    def test_checks_traces_and_cupy_tables_from_fabricated_outputs(self):
        d = tempfile.mkdtemp()

        def w(name, text):
            with open(os.path.join(d, name), "w") as f:
                f.write(text)

        def wj(name, doc):
            w(name, json.dumps(doc))

        w("sanitizer_memcheck.log", "[==========] 14 tests from 6 test suites ran. (9000 ms total)\n[  PASSED  ] 14 tests.\n"
          "========= ERROR SUMMARY: 0 errors\n")
        w("sanitizer_racecheck.log", "[==========] 7 tests from 3 test suites ran. (9000 ms total)\n[  PASSED  ] 7 tests.\n"
          "========= RACECHECK SUMMARY: 2 hazards displayed (2 errors, 0 warnings)\n")
        w("python_cuda_tests.xml", '<?xml version="1.0"?><testsuites><testsuite name="pytest" tests="5" failures="1" '
          'errors="0" skipped="1"><testcase name="test_a"/><testcase name="test_b"><failure message="boom">x</failure>'
          '</testcase><testcase name="test_c"><skipped message="no GPU"/></testcase><testcase name="test_d"/>'
          '<testcase name="test_e"/></testsuite></testsuites>')
        wj("torch_mm_trace.json", {"torch": "9.9", "git_version": "abc123", "cuda": "13.0", "gpu": "FAKE GPU", "preferred_blas_library": "Cublas",
                   "cases": [{"m": 8, "k": 4, "n": 2, "dtype": "float32", "allow_tf32": False, "rel_err": 1e-7,
                              "cpu_ops": ["aten::mm", "cudaLaunchKernel"], "kernels": ["fake_sgemm_128x64"]}]})
        w("ncu_matmul.csv", "==PROF== Connected to process\n"
          '"ID","Process ID","Process Name","Host Name","Kernel Name","sm__warps_active.avg.pct_of_peak_sustained_active",'
          '"dram__throughput.avg.pct_of_peak_sustained_elapsed","launch__block_size"\n'
          '"","","","","","%","%",""\n'
          '"0","1","bench","h","void ember::tiled_kernel<float, 16>(GemmView<float>, long)","91.5","12.25","256"\n')
        wj("cupy_sparse.json", {"cupy": "0.0", "scipy": "0.0", "gpu": "FAKE GPU", "repeats": 3, "cusparse_handle_ms": 2.0,
                   "spmv": [{"n": 1024, "density": 0.01, "nnz": 10486, "scipy_ms": 0.5, "cupy_ms": 0.05, "scipy_setup_ms": 3.0,
                             "cupy_setup_ms": 4.0, "cupy_h2d_dense_ms": 1.0, "cupy_convert_ms": 0.5, "cupy_first_call_ms": 2.0,
                             "cupy_d2h_ms": 0.5, "cupy_h2d_csr_ms": 0.2, "ok": True}],
                   "spgemm": [], "skipped": [{"op": "spgemm", "n": 2048, "density": 0.5, "why": "too many"}]})
        wj("bench_sparse_cuda.json", {"spmv": [{"n": 1024, "density": 0.01, "cusparse_ms": 0.04, "cusparse_setup_ms": 5.0}]})
        subprocess.run([sys.executable, SCRIPT, d], check=True, capture_output=True)
        with open(os.path.join(d, "report.md")) as f:
            report = f.read()
        self.assertIn("| memcheck | `sanitizer_memcheck.log` | 14 | 0 | clean |", report)
        self.assertIn("| racecheck | `sanitizer_racecheck.log` | 7 | 2 | FINDINGS: see the log |", report)
        self.assertIn("3 passed, 1 failed, 0 errors, 1 skipped.", report)
        self.assertIn("- failure: `test_b` boom", report)
        self.assertIn("PyTorch 9.9 (git abc123)", report)
        self.assertIn("| 8x4x2 | float32 | no | `aten::mm` > `cudaLaunchKernel` | `fake_sgemm_128x64` | 1.0e-07 |", report)
        self.assertIn("| `tiled_kernel<float, 16>` | - | 256 | - |", report)
        self.assertIn("| 91.5 | - | - | 12.25 |", report)
        self.assertIn("`ncu_flash.csv`: not in this folder", report)
        self.assertIn("| 1024 | 0.01 | 10486 | 0.5 | 0.05 | 10.00 | 3 | 4 | 1, 0.5, 2, 0.5 | 0.2 | 0.04 | 5 | ok |", report)
        self.assertIn("- not run: spgemm n=2048 density 0.5: too many", report)
        self.assertIn("| sparse | CuPy's cuSPARSE against SciPy across densities, setup included | `cupy_sparse.json` | measured |", report)
        self.assertIn("| matmul | Which cuBLAS kernel runs | `cublaslt_kernels.log` | not measured yet |", report)

    def test_not_a_folder_is_an_error(self):
        res = subprocess.run([sys.executable, SCRIPT, "/nonexistent/out"], capture_output=True, text=True)
        self.assertNotEqual(res.returncode, 0)
        self.assertIn("is not a folder", res.stderr)


if __name__ == "__main__":
    unittest.main()
