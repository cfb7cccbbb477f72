#!/usr/bin/python3
"""scripts/gpu_check_plan.py catches each kind of mistake that would fail the one GPU call: a program
the build does not make, a flag the program does not have, a script that is missing or does not
compile, an import the GPU image lacks, a gtest filter that matches nothing, a report input no step
writes, and limits over the budget. The CPU build it lists tests from is a fake one here."""
import os
import stat
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SCRIPT = os.path.join(ROOT, "scripts", "gpu_check_plan.py")

# A plan whose every step is right; each test breaks one thing.
GOOD = [
    ("configure", "20", ["cmake", "-S", ".", "-B", "bg"]),
    ("build", "100", ["cmake", "--build", "bg", "--target", "ember_tests", "bench_matmul_gpu"]),
    ("cuda_tests", "30", ["bg/bin/ember_tests", "--gtest_filter=CudaOps.*:CudaNnOps.SoftmaxFamilyMatchesCpu",
                          "--gtest_output=json:/o/cuda_tests.json"]),
    ("bench_matmul_gpu", "30", ["bg/bin/bench_matmul_gpu", "--sizes", "256", "--json", "/o/bench_matmul_gpu.json"]),
    ("torch_mm_trace", "10", ["env", "CUBLASLT_LOG_LEVEL=2", "python3", "examples/matmul/trace_torch_mm.py", "--json",
                              "/o/torch_mm_trace.json"]),
]


def fake_list_build(d):
    """A 'CPU build' with the CUDA backend, an ember_tests that lists three tests and a bench_matmul_gpu with --help."""
    os.makedirs(os.path.join(d, "bin"))
    os.makedirs(os.path.join(d, "lib"))
    open(os.path.join(d, "lib", "libember_cuda.so"), "w").close()
    progs = {"ember_tests": "printf 'CudaOps.\\n  UnaryMatchesCpu\\n  ReductionsMatchCpu\\nCudaNnOps.\\n  SoftmaxFamilyMatchesCpu\\n'",
             "bench_matmul_gpu": "echo '  --sizes arg  comma-separated n'; echo '  --json arg   write JSON'"}
    for name, body in progs.items():
        p = os.path.join(d, "bin", name)
        with open(p, "w") as f:
            f.write("#!/bin/sh\n" + body + "\n")
        os.chmod(p, os.stat(p).st_mode | stat.S_IXUSR)


class GpuCheckPlan(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.build = os.path.join(self.tmp, "cpu-build")
        fake_list_build(self.build)

    def run_plan(self, steps, budget=470, image=None):
        plan = os.path.join(self.tmp, "plan.tsv")
        with open(plan, "w") as f:
            for name, limit, argv in steps:
                f.write("\t".join([name, limit, *argv]) + "\n")
        args = [sys.executable, SCRIPT, plan, "--budget", str(budget), "--build-dir", "bg", "--list-build", self.build,
                "--report-inputs", "cuda_tests.json,bench_matmul_gpu.json,torch_mm_trace.json"]
        if image:
            args += ["--image", image]
        return subprocess.run(args, capture_output=True, text=True)

    def with_step(self, name, argv=None, limit=None):
        return [(n, limit if (n == name and limit) else l, argv if (n == name and argv) else a) for n, l, a in GOOD]

    def assertFails(self, res, text):
        self.assertNotEqual(res.returncode, 0, res.stdout)
        self.assertIn(text, res.stdout)

    def test_a_right_plan_passes(self):
        res = self.run_plan(GOOD)
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        self.assertIn("limits adding up to 190s", res.stdout)

    def test_a_program_the_build_does_not_make(self):
        res = self.run_plan(self.with_step("bench_matmul_gpu", ["bg/bin/bench_matmul_gpux", "--json", "/o/bench_matmul_gpu.json"]))
        self.assertFails(res, "bg/bin/bench_matmul_gpux is not built by the build step")

    def test_a_target_no_cmake_file_defines(self):
        steps = self.with_step("build", ["cmake", "--build", "bg", "--target", "ember_tests", "bench_matmul_gpu", "no_such_target"])
        self.assertFails(self.run_plan(steps), "target no_such_target is not defined")

    def test_a_flag_the_program_lacks(self):
        res = self.run_plan(self.with_step("bench_matmul_gpu", ["bg/bin/bench_matmul_gpu", "--size", "256", "--json",
                                                                "/o/bench_matmul_gpu.json"]))
        self.assertFails(res, "bench_matmul_gpu has no flag --size")

    def test_a_flag_the_script_lacks(self):
        steps = self.with_step("torch_mm_trace", ["python3", "examples/matmul/trace_torch_mm.py", "--jsn", "/o/torch_mm_trace.json"])
        self.assertFails(self.run_plan(steps), "trace_torch_mm.py has no flag --jsn")

    def test_a_gtest_filter_that_matches_nothing(self):
        steps = self.with_step("cuda_tests", ["bg/bin/ember_tests", "--gtest_filter=CudaOps.*:CudaNnOp.Softmax*",
                                              "--gtest_output=json:/o/cuda_tests.json"])
        self.assertFails(self.run_plan(steps), "pattern 'CudaNnOp.Softmax*' matches no test")

    def test_a_missing_script(self):
        steps = self.with_step("torch_mm_trace", ["python3", "examples/matmul/trace_torch_mmm.py", "--json", "/o/torch_mm_trace.json"])
        self.assertFails(self.run_plan(steps), "examples/matmul/trace_torch_mmm.py does not exist")

    def test_a_script_that_does_not_compile_or_imports_what_the_image_lacks(self):
        scratch = tempfile.mkdtemp()
        for body, text in (("def f(:\n", "does not compile"), ("import tensorflow\n", "imports tensorflow, which the GPU image")):
            with open(os.path.join(scratch, "probe.py"), "w") as f:
                f.write(body)
            steps = self.with_step("torch_mm_trace", ["python3", os.path.join(scratch, "probe.py"), "/o/torch_mm_trace.json"])
            self.assertFails(self.run_plan(steps), text)

    def test_a_tool_the_image_lacks(self):
        steps = self.with_step("torch_mm_trace", ["nsys", "profile", "python3", "examples/matmul/trace_torch_mm.py", "--json",
                                                  "/o/torch_mm_trace.json"])
        self.assertFails(self.run_plan(steps), "nsys is neither a tool of the GPU image")

    def test_a_report_input_no_step_writes(self):
        steps = [s for s in GOOD if s[0] != "torch_mm_trace"]
        self.assertFails(self.run_plan(steps), "gpu_report.py reads torch_mm_trace.json, which no step writes")

    def test_limits_over_the_budget_or_a_budget_over_the_call(self):
        self.assertFails(self.run_plan(GOOD, budget=180), "add up to 190s, over the budget of 180s")
        self.assertFails(self.run_plan(GOOD, budget=500), "budget 500s is over the call's 480s")
        self.assertFails(self.run_plan(self.with_step("configure", limit="ten")), "limit 'ten' is not a positive number")

    def test_two_steps_of_one_name(self):
        self.assertFails(self.run_plan(GOOD + [GOOD[0]]), "two steps of this name")


if __name__ == "__main__":
    unittest.main()
