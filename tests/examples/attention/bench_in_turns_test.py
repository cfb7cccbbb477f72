#!/usr/bin/python3
"""examples/attention/bench_in_turns.py without ember or torch: bad flags exit non-zero, naming the
flag, before anything is imported or timed (the timing itself: tests/examples/common/in_turns_test.py)."""
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "..", "examples", "attention", "bench_in_turns.py")


class Flags(unittest.TestCase):
    def run_script(self, *args):
        return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)

    def test_bad_flags_exit_naming_the_flag(self):
        for args, flag in ((["--seq", "0"], "--seq"), (["--head-dim", "x"], "--head-dim"),
                           (["--modes", "bwd"], "--modes"), (["--repeats", "0"], "--repeats"),
                           (["--threads", "0"], "--threads"), (["--heads", "0"], "--heads")):
            r = self.run_script(*args)
            self.assertNotEqual(r.returncode, 0, args)
            self.assertIn(flag, r.stderr, args)


if __name__ == "__main__":
    unittest.main()
