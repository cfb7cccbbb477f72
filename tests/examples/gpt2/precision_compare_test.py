"""precision_compare.py without running gpt2: its argument checks and the table it prints."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "examples", "gpt2"))
import precision_compare  # noqa: E402


def expect_exit(fn, *args):
    try:
        fn(*args)
    except SystemExit as e:
        return e.code
    raise AssertionError(f"{fn.__name__}{args} did not exit")


def test_parse_args():
    a = precision_compare.parse_args(["--steps", "40", "--eval-every", "20", "--rounds", "0"])
    assert (a.steps, a.eval_every, a.rounds) == (40, 20, 0)
    for bad in (["--steps", "0"], ["--rounds", "-1"], ["--threads", "0"], ["--eval-every", "0"]):
        assert expect_exit(precision_compare.parse_args, bad) == 2, bad


def test_parse_step_line():
    got = precision_compare.parse_step_line("noise\nstep_ms 40.5 forward_ms 10.25 backward_ms 20\n")
    assert got == {"step_ms": 40.5, "forward_ms": 10.25, "backward_ms": 20.0}
    assert expect_exit(precision_compare.parse_step_line, "nothing here") is not None


def test_table():
    logs = {"fp32": {"val": {0: 5.5, 100: 2.5, 200: 2.0}, "seconds": 10.0, "final_val": 1.98, "steps": 200},
            "bf16": {"val": {0: 5.5, 100: 2.53, 200: 2.01}, "seconds": 14.0, "final_val": 2.0, "steps": 200}}
    timing = {"fp32": {"step_ms": 40.0, "forward_ms": 10.0}, "bf16": {"step_ms": 60.0, "forward_ms": 20.0}}
    t = precision_compare.table(logs, timing)
    assert "| 100 | 2.5000 | 2.5300 | +0.0300 | +1.20% |" in t
    assert "largest |relative difference| after step 0: 1.20%" in t
    assert "| bf16 / fp32 | 1.50x | 2.00x |" in t
    assert "fp32 10.0 s (50.0 ms/step)" in t and "bf16 14.0 s (70.0 ms/step)" in t


if __name__ == "__main__":
    for name, fn in list(globals().items()):
        if name.startswith("test_"):
            fn()
            print("ok", name)
