"""The parts of the training benchmarks that run without torch: argument checks, the alternation of
timed calls, the corpus `time_to_loss.py` hands nanoGPT, and how it reads a loss log."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "examples", "gpt2"))
import time_to_loss  # noqa: E402
import train_in_turns  # noqa: E402


def expect_exit(fn, *args):
    try:
        fn(*args)
    except SystemExit as e:
        return e.code
    raise AssertionError(f"{fn.__name__}{args} did not exit")


def test_parse_args():
    a = train_in_turns.parse_args(["--config", "all", "--threads", "1"])
    assert a.names == ["nano", "mid", "gpt2"] and a.threads == 1
    assert train_in_turns.parse_args(["--config", "mid"]).names == ["mid"]
    assert expect_exit(train_in_turns.parse_args, ["--config", "huge"]) == 2
    assert expect_exit(train_in_turns.parse_args, ["--threads", "0"]) == 2


def test_time_in_turns_alternates():
    calls = []
    times = train_in_turns.time_in_turns([lambda: calls.append("a"), lambda: calls.append("b")], 1, 4)
    assert calls[:2] == ["a", "b"]  # warm-up, one each
    assert calls[2:] == ["a", "b", "b", "a", "a", "b", "b", "a"], calls
    assert [len(t) for t in times] == [4, 4] and all(x >= 0 for t in times for x in t)


def test_corpus_matches_gpt2_train():
    with tempfile.TemporaryDirectory() as d:
        for name, body in (("b", b"second " * 500), ("a", b"first " * 500), ("a.dat", b"index"), ("c.u8", b"utf8")):
            with open(os.path.join(d, name), "wb") as f:
                f.write(body)
        text = time_to_loss.corpus(d)
        assert text == b"first " * 500 + b"second " * 500  # sorted by name, .dat and .u8 left out
        with open(os.path.join(d, "a"), "wb") as f:
            f.write(b"x")
        os.remove(os.path.join(d, "b"))
        assert expect_exit(time_to_loss.corpus, d) is not None  # too little text
    assert expect_exit(time_to_loss.corpus, "/nonexistent/folder") is not None


def test_first_reaching():
    log = [(0.0, 0, 5.5), (10.0, 250, 2.4), (21.0, 500, 2.05), (30.0, 750, 1.9)]
    assert time_to_loss.first_reaching(log, 2.1) == (21.0, 500, 2.05)
    assert time_to_loss.first_reaching(log, 2.4) == (10.0, 250, 2.4)
    assert time_to_loss.first_reaching(log, 1.0) is None



def test_ember_trains_nanogpts_structure():
    """nanoGPT's train.py builds its model with bias=False and exact GELU: Ember's run must too."""
    class Args:
        steps, eval_every, eval_batches = 500, 250, 20
    cmd = time_to_loss.ember_command("gpt2", "/data", Args(), "/out")
    flags = dict(zip(cmd[2::2], cmd[3::2]))
    assert cmd[:2] == ["gpt2", "train"]
    assert flags["--bias"] == "false" and flags["--gelu"] == "exact", cmd
    assert flags["--beta2"] == "0.99" and flags["--steps"] == "500" and flags["--data"] == "/data"


if __name__ == "__main__":
    for name, fn in list(globals().items()):
        if name.startswith("test_"):
            fn()
            print("ok", name)
