#!/usr/bin/python3
"""examples/gpt2/bench_weights.py with stand-ins for `gpt2 bench` and `llama-bench` (scripts that
print fixed rates per format and log their arguments): every (threads, format) point runs once per
round with the flags the script promises, the table holds the medians and the ratio to Ember's
f32, raw.json keeps every run, and bad argument combinations are refused."""
import json
import os
import stat
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "..", "examples", "gpt2", "bench_weights.py")

# decode tokens/s per (weights, int8-decode); prefill seconds of 128 tokens
FAKE_GPT2 = r'''#!/usr/bin/python3
import json, os, sys
a = sys.argv[1:]
get = lambda f, d=None: a[a.index(f) + 1] if f in a else d
with open(os.environ["FAKE_LOG"], "a") as log:
    log.write(" ".join(a) + "\n")
rates = {"f32": 20.0, "bf16": 40.0, "int8": 60.0}
rate = rates[get("--weights")] + (5.0 if get("--int8-decode") == "dots" else 0.0) + float(get("--threads"))
n = int(get("--lengths"))
json.dump({"prefill_s": 0.5, "rows": [{"generated": n, "cache": True, "decode_tokens_per_s": rate},
                                      {"generated": 2, "cache": False, "tokens_per_s": 1.0}]}, open(get("--json"), "w"))
print("fake gpt2 bench")
'''

FAKE_LLAMA = r'''#!/usr/bin/python3
import json, sys
a = sys.argv[1:]
m = a[a.index("-m") + 1]
r = {"model-f32.gguf": 10.0, "model-f16.gguf": 30.0, "model-q8_0.gguf": 50.0}[m.split("/")[-1]]
print(json.dumps([{"n_prompt": 128, "n_gen": 0, "avg_ts": 300.0}, {"n_prompt": 0, "n_gen": 32, "avg_ts": r}]))
'''

# Stands in for the peer venv's python: argv[1] is bench_torch.py, then its flags.
FAKE_TORCH_PYTHON = r'''#!/usr/bin/python3
import json, os, sys
a = sys.argv[2:]
assert sys.argv[1].endswith("bench_torch.py"), sys.argv[1]
get = lambda f: a[a.index(f) + 1]
with open(os.environ["FAKE_LOG"] + ".torch", "a") as log:
    log.write(" ".join(a) + "\n")
rate = {"f32": 15.0, "bf16": 12.0, "int8": 45.0}[get("--weights")]
n = int(get("--lengths"))
assert get("--no-cache-lengths") == ""
json.dump({"prefill_s": 1.0, "rows": [{"generated": n, "cache": True, "decode_tokens_per_s": rate}]}, open(get("--json"), "w"))
'''


def read(path):
    with open(path) as f:
        return f.read()


def executable(path, text):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)


class BenchWeights(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.gpt2 = os.path.join(self.dir, "gpt2")
        self.llama = os.path.join(self.dir, "llama-bench")
        executable(self.gpt2, FAKE_GPT2)
        executable(self.llama, FAKE_LLAMA)
        self.log = os.path.join(self.dir, "calls.log")
        self.env = dict(os.environ, FAKE_LOG=self.log)

    def tearDown(self):
        self.tmp.cleanup()

    def run_script(self, *args):
        return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, env=self.env)

    def test_rounds_medians_ratios_and_raw_output(self):
        out = os.path.join(self.dir, "out")
        r = self.run_script(out, "--gpt2", self.gpt2, "--rounds", "2", "--threads", "1", "2", "--formats", "f32", "bf16",
                            "int8-dots", "--llama-bench", self.llama, "--gguf", self.dir)
        self.assertEqual(r.returncode, 0, r.stderr)
        calls = read(self.log).splitlines()
        self.assertEqual(len(calls), 2 * 2 * 3)  # rounds x threads x Ember formats
        for c in calls:
            self.assertIn("--prompt-len 128", c)
            self.assertIn("--lengths 33", c)
        self.assertEqual(sum("--int8-decode dots" in c for c in calls), 4)
        table = read(os.path.join(out, "table.md"))
        self.assertIn("| ember | f32 | 1 | 21.0 (21.0-21.0) | 256 | 1.00x |", table)
        self.assertIn("| ember | bf16 | 2 | 42.0 (42.0-42.0) | 256 | 1.91x |", table)
        self.assertIn("| ember | int8-dots | 1 | 66.0 (66.0-66.0) | 256 | 3.14x |", table)
        self.assertIn("| llama.cpp | Q8_0 | 2 | 50.0 (50.0-50.0) | 300 | 2.27x |", table)
        raw = json.loads(read(os.path.join(out, "raw.json")))
        self.assertEqual(len(raw["runs"]), 2 * 2 * 6)
        self.assertIn("cpu", raw)
        # the formats take turns: the first side of round 2 is not the first of round 1
        firsts = [run["format"] for run in raw["runs"] if run["threads"] == 1]
        self.assertNotEqual(firsts[0], firsts[6])

    def test_torch_peer_in_the_same_rounds(self):
        fake = os.path.join(self.dir, "python-with-torch")
        executable(fake, FAKE_TORCH_PYTHON)
        out = os.path.join(self.dir, "out")
        r = self.run_script(out, "--gpt2", self.gpt2, "--rounds", "3", "--threads", "2", "--formats", "f32",
                            "--torch", fake)
        self.assertEqual(r.returncode, 0, r.stderr)
        calls = read(self.log + ".torch").splitlines()
        self.assertEqual(len(calls), 3 * 3)  # rounds x torch formats
        self.assertEqual(sorted({c.split("--weights ")[1].split()[0] for c in calls}), ["bf16", "f32", "int8"])
        for c in calls:
            self.assertIn("--threads 2", c)
            self.assertIn("--prompt-len 128", c)
        table = read(os.path.join(out, "table.md"))
        self.assertIn("| torch | int8 | 2 | 45.0 (45.0-45.0) | 128 | 2.05x |", table)
        self.assertIn("| torch | bf16 | 2 | 12.0 (12.0-12.0) | 128 | 0.55x |", table)

    def test_refuses_bad_arguments(self):
        out = os.path.join(self.dir, "out")
        r = self.run_script(out, "--gpt2", self.gpt2, "--llama-bench", self.llama)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("--llama-bench and --gguf go together", r.stderr)
        r = self.run_script(out, "--gpt2", self.gpt2, "--rounds", "0")
        self.assertIn("must be positive", r.stderr)
        r = self.run_script(out, "--gpt2", os.path.join(self.dir, "missing"))
        self.assertIn("is not an executable", r.stderr)
        r = self.run_script(out, "--gpt2", self.gpt2, "--formats", "int4")
        self.assertIn("invalid choice", r.stderr)


if __name__ == "__main__":
    unittest.main()
