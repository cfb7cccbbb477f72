#!/usr/bin/python3
"""examples/common/in_turns.py: the turns alternate which side goes first, warm each side up before
timing, and pair the timings call by call; the summary takes the median of the per-pair ratios, not
the ratio of the medians; the thread settings reach the environment that OpenMP reads. And the two
scripts built on it (examples/attention/bench_in_turns.py, examples/gpt2/prefill_in_turns.py) exit
non-zero naming a bad flag, before anything is imported or timed (no ember or torch needed)."""
import importlib.util
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "..", "examples", "common", "in_turns.py")
spec = importlib.util.spec_from_file_location("in_turns", SCRIPT)
in_turns = importlib.util.module_from_spec(spec)
spec.loader.exec_module(in_turns)


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
        ta, tb = in_turns.time_in_turns(side("a", 0.25), side("b", 0.375), repeats=4, warmup_s=1.0, clock=clock)
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

        in_turns.time_in_turns(count("a"), count("b"), repeats=1, warmup_s=0.0)
        self.assertEqual(calls, {"a": 2, "b": 2})  # one warm-up call and one timed call each


class Summarise(unittest.TestCase):
    def test_ratio_is_the_median_of_the_pairs(self):
        # Per pair: 2.0, 1.0, 1.5; the ratio of the medians would be 2.0 / 1.0 = 2.0.
        s = in_turns.summarise([1.0, 2.0, 1.0], [2.0, 2.0, 1.5])
        self.assertAlmostEqual(s["ratio"], 1.5)
        self.assertAlmostEqual(s["ratio_min"], 1.0)
        self.assertAlmostEqual(s["ratio_max"], 2.0)
        self.assertAlmostEqual(s["ember_ms"], 1000.0)
        self.assertAlmostEqual(s["torch_ms"], 2000.0)

    def test_unequal_or_empty_timings_are_refused(self):
        with self.assertRaises(ValueError):
            in_turns.summarise([1.0, 2.0], [1.0])
        with self.assertRaises(ValueError):
            in_turns.summarise([], [])


class Settings(unittest.TestCase):
    def setUp(self):
        self.saved = {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "OMP_WAIT_POLICY")}
        for k in self.saved:
            os.environ.pop(k, None)

    def tearDown(self):
        for k, v in self.saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v

    def test_one_thread_keeps_openmps_own_policy(self):
        self.assertEqual(in_turns.set_threads(1), "")
        self.assertEqual(os.environ["OMP_NUM_THREADS"], "1")
        self.assertNotIn("OMP_WAIT_POLICY", os.environ)

    def test_more_threads_sleep_when_idle_unless_told_otherwise(self):
        self.assertEqual(in_turns.set_threads(2), "passive")
        self.assertEqual(os.environ["OMP_NUM_THREADS"], "2")
        self.assertEqual(os.environ["OMP_WAIT_POLICY"], "passive")
        self.assertEqual(in_turns.set_threads(2, "active"), "active")
        self.assertEqual(os.environ["OMP_WAIT_POLICY"], "active")

    def test_cpu_name_names_the_model(self):
        name = in_turns.cpu_name()
        self.assertTrue(name)
        if os.path.exists("/proc/cpuinfo"):
            self.assertIn("model", name)


EXAMPLES = os.path.join(HERE, "..", "..", "..", "examples")
BAD_FLAGS = {
    os.path.join(EXAMPLES, "attention", "bench_in_turns.py"): (
        (["--seq", "0"], "--seq"), (["--head-dim", "x"], "--head-dim"), (["--modes", "bwd"], "--modes"),
        (["--repeats", "0"], "--repeats"), (["--threads", "0"], "--threads"), (["--heads", "0"], "--heads")),
    os.path.join(EXAMPLES, "gpt2", "prefill_in_turns.py"): (
        (["--prompt-len", "0"], "--prompt-len"), (["--prompt-len", "1024"], "--prompt-len"),
        (["--repeats", "0"], "--repeats"), (["--threads", "0"], "--threads"), (["--config", "gpt3"], "--config")),
}


class ScriptFlags(unittest.TestCase):
    def test_bad_flags_exit_naming_the_flag(self):
        for script, cases in BAD_FLAGS.items():
            for args, flag in cases:
                r = subprocess.run([sys.executable, script, *args], capture_output=True, text=True)
                self.assertNotEqual(r.returncode, 0, (script, args))
                self.assertIn(flag, r.stderr, (script, args))


if __name__ == "__main__":
    unittest.main()
