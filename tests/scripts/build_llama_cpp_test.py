#!/usr/bin/python3
"""scripts/build_llama_cpp.sh without the network or a compiler: bad arguments are refused, and the
decisions of what to do (skip a finished build, reuse a downloaded sdist and extracted sources,
build again for another version or with --force) are the ones --plan and a real run report. pip is
replaced by a program that fails, so a test that reached the download would show."""
import os
import stat
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "build_llama_cpp.sh")


def write(path, text="", mode=None):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    if mode is not None:
        os.chmod(path, os.stat(path).st_mode | mode)


class BuildLlamaCpp(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.cache = os.path.join(self.tmp.name, "cache")
        self.pip_log = os.path.join(self.tmp.name, "pip.log")
        self.fake_pip = os.path.join(self.tmp.name, "pip")
        write(self.fake_pip, f"#!/bin/sh\necho \"$@\" >> {self.pip_log}\nexit 1\n", stat.S_IXUSR)

    def tearDown(self):
        self.tmp.cleanup()

    def run_script(self, *args):
        env = dict(os.environ, EMBER_PIP=self.fake_pip, EMBER_LLAMA_CPP_CACHE=self.cache)
        return subprocess.run(["bash", SCRIPT, *args], capture_output=True, text=True, env=env)

    def built(self, version="0.3.36"):
        for prog in ("llama-bench", "llama-quantize"):
            write(os.path.join(self.cache, "bin", prog), "#!/bin/sh\n", stat.S_IXUSR)
        write(os.path.join(self.cache, "bin", "built-from.txt"), f"llama-cpp-python {version}\nGGML_NATIVE:BOOL=ON\n")

    def test_help(self):
        r = self.run_script("--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        for flag in ("--cache", "--version", "--jobs", "--plan", "--force"):
            self.assertIn(flag, r.stdout)

    def test_bad_arguments(self):
        for args, words in ((["--jobs", "0"], "--jobs"), (["--jobs", "two"], "--jobs"),
                            (["--version", "latest"], "--version"), (["--cache"], "--cache needs a value"),
                            (["--frobnicate"], "unknown argument '--frobnicate'")):
            r = self.run_script(*args)
            self.assertEqual(r.returncode, 2, args)
            self.assertIn(words, r.stderr, args)
        self.assertFalse(os.path.exists(self.pip_log))

    def test_skips_a_finished_build_without_downloading(self):
        self.built()
        r = self.run_script()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("skip", r.stdout)
        self.assertIn("already built from llama-cpp-python 0.3.36", r.stdout)
        self.assertFalse(os.path.exists(self.pip_log))

    def test_plan_of_a_fresh_cache_downloads_extracts_and_builds(self):
        r = self.run_script("--plan", "--jobs", "3")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertEqual([ln.split(":")[0] for ln in lines], ["download", "extract", "build"])
        self.assertIn("llama-cpp-python==0.3.36", lines[0])
        self.assertIn("3 jobs", lines[2])
        self.assertFalse(os.path.exists(self.pip_log))

    def test_other_version_or_force_or_missing_program_builds_again(self):
        write(os.path.join(self.cache, "llama_cpp_python-0.4.0.tar.gz"))
        write(os.path.join(self.cache, "llama_cpp_python-0.4.0", "vendor", "llama.cpp", "CMakeLists.txt"))
        self.built("0.3.36")
        r = self.run_script("--plan", "--version", "0.4.0")
        self.assertEqual(r.stdout.splitlines(), [
            f"download: skip, have {self.cache}/llama_cpp_python-0.4.0.tar.gz",
            f"extract: skip, have {self.cache}/llama_cpp_python-0.4.0/vendor/llama.cpp",
            f"build: llama-bench, llama-quantize (Release, CPU, native) in {self.cache}/build-0.4.0 with 2 jobs, "
            f"into {self.cache}/bin"])
        self.built("0.4.0")
        self.assertIn("skip", self.run_script("--plan", "--version", "0.4.0").stdout.splitlines()[0])
        self.assertEqual(self.run_script("--plan", "--version", "0.4.0", "--force").stdout.splitlines()[-1].split(":")[0],
                         "build")
        os.remove(os.path.join(self.cache, "bin", "llama-quantize"))
        self.assertEqual(self.run_script("--plan", "--version", "0.4.0").stdout.splitlines()[-1].split(":")[0], "build")

    def test_a_failed_download_stops_with_an_error(self):
        r = self.run_script()
        self.assertNotEqual(r.returncode, 0)
        with open(self.pip_log) as f:
            self.assertIn("download --quiet --no-binary :all: --no-deps llama-cpp-python==0.3.36", f.read())
        self.assertFalse(os.path.exists(os.path.join(self.cache, "bin")))


if __name__ == "__main__":
    unittest.main()
