#!/usr/bin/python3
"""scripts/make_gguf.py with stand-ins for llama.cpp's converter, llama-quantize and the peer python
(scripts that log their arguments and write their outputs): the first run makes the F32, F16 and
Q8_0 files with the promised flags, a second run remakes nothing, newer weights remake all three and
a newer F32 only Q8_0, a failed conversion leaves no file that a later run would take as done, the
random model and its tokenizer files are written once, and bad arguments are refused."""
import os
import stat
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "make_gguf.py")

FAKE_CONVERT = r'''import os, sys
a = sys.argv[1:]
with open(os.environ["FAKE_LOG"], "a") as log:
    log.write("convert " + " ".join(a) + "\n")
if a[a.index("--outtype") + 1] == os.environ.get("FAKE_FAIL"):
    open(a[a.index("--outfile") + 1], "w").write("half")
    sys.exit(1)
open(a[a.index("--outfile") + 1], "w").write("gguf " + a[a.index("--outtype") + 1])
'''

# Runs the converter with this interpreter; `-c CODE DIR` (the random model) writes stand-in files.
FAKE_PYTHON = f'''#!/bin/sh
if [ "$1" = "-c" ]; then
  echo "random $3" >> "$FAKE_LOG"
  mkdir -p "$3" && echo '{{}}' > "$3/config.json" && echo weights > "$3/model.safetensors"
  exit 0
fi
exec {sys.executable} "$@"
'''

FAKE_QUANTIZE = '''#!/bin/sh
echo "quantize $*" >> "$FAKE_LOG"
cp "$1" "$2" && echo q8 >> "$2"
'''


def write(path, text, executable=False):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    if executable:
        os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)


def age(path, seconds):
    t = time.time() - seconds
    os.utime(path, (t, t))


class MakeGguf(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        d = self.tmp.name
        self.llama = os.path.join(d, "llama.cpp")
        write(os.path.join(self.llama, "convert_hf_to_gguf.py"), FAKE_CONVERT)
        self.quantize = os.path.join(d, "llama-quantize")
        write(self.quantize, FAKE_QUANTIZE, executable=True)
        self.python = os.path.join(d, "python")
        write(self.python, FAKE_PYTHON, executable=True)
        self.model = os.path.join(d, "model")
        for name in ("model.safetensors", "config.json", "vocab.json", "merges.txt"):
            write(os.path.join(self.model, name), name)
        self.tok = os.path.join(d, "bpe")
        write(os.path.join(self.tok, "vocab.json"), "{\"a\": 0}")
        write(os.path.join(self.tok, "merges.txt"), "#version: 0.2\n")
        self.out = os.path.join(d, "out")
        self.log = os.path.join(d, "calls.log")

    def tearDown(self):
        self.tmp.cleanup()

    def run_script(self, *args, fail=None, model=True):
        env = dict(os.environ, FAKE_LOG=self.log)
        if fail:
            env["FAKE_FAIL"] = fail
        cmd = [sys.executable, SCRIPT, self.out, "--llama-cpp", self.llama, "--quantize", self.quantize,
               "--python", self.python, "--tokenizer", self.tok]
        if model:
            cmd += ["--model", self.model]
        return subprocess.run(cmd + list(args), capture_output=True, text=True, env=env)

    def calls(self):
        if not os.path.exists(self.log):
            return []
        with open(self.log) as f:
            lines = f.read().splitlines()
        os.remove(self.log)
        return lines

    def gguf(self, fmt):
        return os.path.join(self.out, f"model-{fmt}.gguf")

    def test_makes_each_file_once(self):
        r = self.run_script()
        self.assertEqual(r.returncode, 0, r.stderr)
        conv = os.path.join(self.llama, "convert_hf_to_gguf.py")
        self.assertEqual(self.calls(), [
            f"convert {self.model} --outtype f32 --outfile {self.gguf('f32')}.part",
            f"convert {self.model} --outtype f16 --outfile {self.gguf('f16')}.part",
            f"quantize {self.gguf('f32')} {self.gguf('q8_0')}.part Q8_0"])
        self.assertTrue(os.path.isfile(conv))
        with open(self.gguf("f16")) as f:
            self.assertEqual(f.read(), "gguf f16")
        with open(self.gguf("q8_0")) as f:
            self.assertEqual(f.read(), "gguf f32q8\n")
        self.assertEqual(sorted(os.listdir(self.out)), ["model-f16.gguf", "model-f32.gguf", "model-q8_0.gguf"])
        r = self.run_script()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.calls(), [])
        self.assertEqual([ln.split()[1] for ln in r.stdout.splitlines()[:3]], ["skip", "skip", "skip"])

    def test_newer_sources_remake_what_depends_on_them(self):
        self.assertEqual(self.run_script().returncode, 0)
        self.calls()
        for f in ("f32", "f16", "q8_0"):
            age(self.gguf(f), 100)
        self.assertEqual(self.run_script().returncode, 0)  # weights newer than every file
        self.assertEqual([c.split()[0] for c in self.calls()], ["convert", "convert", "quantize"])
        age(os.path.join(self.model, "model.safetensors"), 200)
        age(self.gguf("q8_0"), 100)  # the F32 file is newer than the Q8_0 file made from it
        self.assertEqual(self.run_script().returncode, 0)
        self.assertEqual([c.split()[0] for c in self.calls()], ["quantize"])
        self.assertEqual(self.run_script("--force").returncode, 0)
        self.assertEqual(len(self.calls()), 3)

    def test_plan_runs_nothing(self):
        r = self.run_script("--plan")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual([ln.split()[:2] for ln in r.stdout.splitlines()],
                         [["f32:", "run"], ["f16:", "run"], ["q8_0:", "run"]])
        self.assertEqual(self.calls(), [])
        self.assertFalse(os.path.exists(self.out))

    def test_failed_conversion_leaves_no_finished_file(self):
        r = self.run_script(fail="f16")
        self.assertNotEqual(r.returncode, 0)
        self.assertTrue(os.path.isfile(self.gguf("f32")))
        self.assertFalse(os.path.exists(self.gguf("f16")))
        self.assertFalse(os.path.exists(self.gguf("q8_0")))
        self.calls()
        self.assertEqual(self.run_script().returncode, 0)
        self.assertEqual([c.split()[0] + " " + c.split()[-1] for c in self.calls()],
                         [f"convert {self.gguf('f16')}.part", f"quantize Q8_0"])

    def test_random_model_and_tokenizer_written_once(self):
        r = self.run_script(model=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        folder = os.path.join(self.out, "gpt2-random")
        calls = self.calls()
        self.assertEqual(calls[0], f"random {folder}.part")
        self.assertEqual(calls[1], f"convert {folder} --outtype f32 --outfile {self.gguf('f32')}.part")
        self.assertEqual(sorted(os.listdir(folder)), ["config.json", "merges.txt", "model.safetensors", "vocab.json"])
        with open(os.path.join(folder, "vocab.json")) as f:
            self.assertEqual(f.read(), "{\"a\": 0}")
        self.assertFalse(os.path.exists(folder + ".part"))
        r = self.run_script(model=False)
        self.assertEqual(self.calls(), [])
        self.assertTrue(r.stdout.startswith(f"random-model: skip {folder}\ntokenizer: skip {folder}\n"), r.stdout)

    def test_bad_arguments(self):
        os.remove(os.path.join(self.model, "merges.txt"))
        r = self.run_script()
        self.assertEqual(r.returncode, 2)
        self.assertIn("lacks merges.txt", r.stderr)
        r = self.run_script("--llama-cpp", self.tmp.name)
        self.assertEqual(r.returncode, 2)
        self.assertIn("has no convert_hf_to_gguf.py", r.stderr)
        r = self.run_script("--quantize", os.path.join(self.tmp.name, "nothing"), model=False)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--quantize", r.stderr)
        os.remove(os.path.join(self.tok, "vocab.json"))
        r = self.run_script(model=False)
        self.assertEqual(r.returncode, 2)
        self.assertIn("lacks vocab.json", r.stderr)
        os.remove(os.path.join(self.model, "model.safetensors"))
        write(os.path.join(self.model, "merges.txt"), "")
        r = self.run_script()
        self.assertEqual(r.returncode, 2)
        self.assertIn("has no model.safetensors", r.stderr)
        self.assertEqual(self.calls(), [])
        self.assertFalse(os.path.exists(self.out))


if __name__ == "__main__":
    unittest.main()
