#!/usr/bin/python3
"""examples/attention/bench_in_turns.py without ember or torch: the turns alternate which side goes
first, warm each side up before timing, and pair the timings call by call; the summary takes the
median of the per-pair ratios, not the ratio of the medians; bad flags exit naming the flag."""
import importlib.util
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "..", "examples", "attention", "bench_in_turns.py")
spec = importlib.util.spec_from_file_location("bench_in_turns", SCRIPT)
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


class FakeClock:
    """A clock that each call of a side advances by that side's cost, so timings are exact."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


class TimeInTurns(unittest.TestCase):
    def test_alternates_the_order_and_pairs_the_calls(self):
        clock, log = FakeClock(), []

        def side(name, cost):
            def call():
                log.append(name)
                clock.now += cost
            return call

        # Costs and warm-up in exact binary fractions, so that the clock's sums are exact.
        ta, tb = bench.time_in_turns(side("a", 0.25), side("b", 0.375), repeats=4, warmup_s=1.0, clock=clock)
        # Warm-up: at least 1 s of each, a first, then b: 4 calls of a (0.25 s each), 3 of b (0.375 s).
        self.assertEqual(log[:7], ["a"] * 4 + ["b"] * 3)
        self.assertEqual(log[7:], ["a", "b", "b", "a", "a", "b", "b", "a"])
        self.assertEqual(len(ta), 4)
        self.assertEqual(len(tb), 4)
        self.assertEqual(ta, [0.25] * 4)
        self.assertEqual(tb, [0.375] * 4)

    def test_warm_up_calls_each_side_at_least_once(self):
        calls = {"a": 0, "b": 0}

        def count(name):
            def call():
                calls[name] += 1
            return call

        bench.time_in_turns(count("a"), count("b"), repeats=1, warmup_s=0.0)
        self.assertEqual(calls, {"a": 2, "b": 2})  # one warm-up call and one timed call each


class Summarise(unittest.TestCase):
    def test_ratio_is_the_median_of_the_pairs(self):
        # Per pair: 2.0, 1.0, 1.5; the ratio of the medians would be 2.0 / 1.0 = 2.0.
        s = bench.summarise([1.0, 2.0, 1.0], [2.0, 2.0, 1.5])
        self.assertAlmostEqual(s["ratio"], 1.5)
        self.assertAlmostEqual(s["ratio_min"], 1.0)
        self.assertAlmostEqual(s["ratio_max"], 2.0)
        self.assertAlmostEqual(s["ember_ms"], 1000.0)
        self.assertAlmostEqual(s["torch_ms"], 2000.0)

    def test_unequal_or_empty_timings_are_refused(self):
        with self.assertRaises(ValueError):
            bench.summarise([1.0, 2.0], [1.0])
        with self.assertRaises(ValueError):
            bench.summarise([], [])


class Flags(unittest.TestCase):
    def run_script(self, *args):
        return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)

    def test_bad_flags_exit_naming_the_flag(self):
        for args, flag in ((["--seq", "0"], "--seq"), (["--head-dim", "x"], "--head-dim"),
                           (["--modes", "bwd"], "--modes"), (["--repeats", "0"], "--repeats"),
                           (["--threads", "0"], "--threads")):
            r = self.run_script(*args)
            self.assertNotEqual(r.returncode, 0, args)
            self.assertIn(flag, r.stderr, args)


if __name__ == "__main__":
    unittest.main()
