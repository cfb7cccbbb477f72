#!/usr/bin/python3
"""examples/gpt2/rounds_table.py on synthetic rounds: medians over rounds per side, the ratio
pointing the right way for times (prefill) and rates (tokens/s), the per-round range, the decode
steps' row only where both sides report it, Ember's shares of the floor pooled over rounds, and a clear error for a folder without rounds."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "..", "examples", "gpt2", "rounds_table.py")


def write(path, doc):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(doc, f)


def run(prefill, tps, decode=None):
    row = {"generated": 32, "cache": True, "tokens_per_s": tps}
    if decode is not None:
        row["decode_tokens_per_s"] = decode
    return {"prompt_len": 128, "prefill_s": prefill, "rows": [row]}


class RoundsTable(unittest.TestCase):
    def test_medians_ratios_and_ranges(self):
        d = tempfile.mkdtemp()
        # Ember: prefill 0.2, 0.4, 0.3 s (median 0.3); PyTorch 0.3 s each round.
        for r, (ep, etps, edec) in enumerate([(0.2, 30.0, 40.0), (0.4, 10.0, 12.0), (0.3, 20.0, 24.0)], 1):
            write(f"{d}/r{r}_t1/ember.json", run(ep, etps, edec))
            write(f"{d}/r{r}_t1/torch.json", run(0.3, 20.0, 20.0))
        out = subprocess.run([sys.executable, SCRIPT, d], check=True, capture_output=True, text=True).stdout
        # Time: PyTorch's over Ember's (0.3 / 0.3 = 1.00x); per round 1.50x, 0.75x, 1.00x.
        self.assertIn("| 1 | prefill, 128 tokens (ms) | 3 | 300.00 | 300.00 | 1.00x | 0.75-1.50x |", out)
        # Rate: Ember's over PyTorch's (20 / 20); per round 1.50x, 0.50x, 1.00x.
        self.assertIn("| 1 | 32 tokens with the cache (tok/s) | 3 | 20.00 | 20.00 | 1.00x | 0.50-1.50x |", out)
        self.assertIn("| 1 | the 31 decode steps with the cache (tok/s) | 3 | 24.00 | 20.00 | 1.20x | 0.60-2.00x |", out)

    def test_no_decode_row_without_both_sides(self):
        d = tempfile.mkdtemp()
        write(f"{d}/r1_t2/ember.json", run(0.2, 30.0, 40.0))
        write(f"{d}/r1_t2/torch.json", run(0.3, 20.0))
        out = subprocess.run([sys.executable, SCRIPT, d], check=True, capture_output=True, text=True).stdout
        self.assertIn("| 2 | 32 tokens with the cache (tok/s) | 1 | 30.00 | 20.00 | 1.50x | 1.50-1.50x |", out)
        self.assertNotIn("decode steps", out)

    def test_floor_shares_pooled_over_rounds(self):
        d = tempfile.mkdtemp()
        # Three runs a round, two rounds: the median is over all six shares.
        for r, shares in enumerate([[70.0, 90.0, 80.0], [85.0, 60.0, 95.0]], 1):
            e = run(0.2, 30.0, 40.0)
            e["rows"][0]["decode_percent_of_floor_per_run"] = shares
            write(f"{d}/r{r}_t1/ember.json", e)
            write(f"{d}/r{r}_t1/torch.json", run(0.3, 20.0, 20.0))
        out = subprocess.run([sys.executable, SCRIPT, d], check=True, capture_output=True, text=True).stdout
        self.assertIn("| 1 | 31 | 6 | 82% | 60-95% |", out)

    def test_no_floor_table_for_older_runs(self):
        d = tempfile.mkdtemp()
        write(f"{d}/r1_t1/ember.json", run(0.2, 30.0, 40.0))
        write(f"{d}/r1_t1/torch.json", run(0.3, 20.0, 20.0))
        out = subprocess.run([sys.executable, SCRIPT, d], check=True, capture_output=True, text=True).stdout
        self.assertNotIn("probed after each run", out)

    def test_empty_folder_is_a_clear_error(self):
        p = subprocess.run([sys.executable, SCRIPT, tempfile.mkdtemp()], capture_output=True, text=True)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("no rR_tT/ember.json", p.stderr)


if __name__ == "__main__":
    unittest.main()
