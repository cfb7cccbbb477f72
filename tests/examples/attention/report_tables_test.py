#!/usr/bin/python3
"""examples/attention/report_tables.py on synthetic bench_attention JSON: the study table pairs the
three algorithms of one configuration, the peer table's ratio is torch / Ember (> 1: Ember faster),
and the M table derives Bc and Br from M and d as Algorithm 1 does."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "..", "examples", "attention", "report_tables.py")
MIB = 1024 * 1024


def result(impl, n, ms, causal=False, mode="fwd", torch_ms=None):
    r = {"impl": impl, "n": n, "d": 64, "causal": causal, "mode": mode, "median_ms": ms, "cpu_ms": 2 * ms,
         "peak_extra_bytes": 3 * MIB, "read_bytes": 2 * MIB, "write_bytes": MIB, "model1_bytes": MIB}
    if torch_ms is not None:
        r["torch"] = {"ms": torch_ms}
    return r


class ReportTables(unittest.TestCase):
    def write(self, doc):
        path = os.path.join(tempfile.mkdtemp(), "a.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        return path

    def run_script(self, *args):
        return subprocess.run([sys.executable, SCRIPT, *args], check=True, capture_output=True, text=True).stdout

    def test_study_row_pairs_the_algorithms(self):
        doc = {"threads": 2, "heads": 1, "batch": 1, "block_m": 65536,
               "results": [result("standard", 1024, 20.0), result("flash", 1024, 10.0),
                           result("flash2", 1024, 4.0, torch_ms=8.0)]}
        out = self.run_script("study", self.write(doc))
        row = next(l for l in out.splitlines() if l.startswith("| 1024 |"))
        cells = [c.strip() for c in row.strip("|").split("|")]
        self.assertEqual(cells[2:6], ["20.00", "10.00", "4.00", "0.50"])  # times, flash / standard
        self.assertEqual(cells[10], "3.0")  # traffic = read + write
        self.assertEqual(cells[-1], "8.00")  # the torch time of that configuration

    def test_peer_ratio_is_torch_over_ember(self):
        doc = {"threads": 1, "heads": 12, "batch": 1, "results": [result("flash2", 512, 5.0, True, "fwd+bwd", 10.0)]}
        out = self.run_script("peer", self.write(doc))
        row = next(l for l in out.splitlines() if l.startswith("| 1 | 12 | 512"))
        self.assertTrue(row.rstrip().endswith("| 2.00 |"), row)
        self.assertIn("| yes | fwd+bwd |", row)

    def test_grid_puts_passes_and_threads_side_by_side(self):
        one = {"threads": 1, "heads": 1, "batch": 1, "results": [result("flash2", 512, 4.0, False, "fwd", 2.0)]}
        two = {"threads": 2, "heads": 1, "batch": 1, "results": [result("flash2", 512, 2.0, False, "fwd", 3.0)]}
        out = self.run_script("grid", self.write(one), self.write(two))
        self.assertIn("| B*H | N | d | causal | fwd 1t | fwd 2t | fwd+bwd 1t | fwd+bwd 2t |", out)
        self.assertIn("| 1 | 512 | 64 | no | 0.50 | 1.50 | - | - |", out)

    def test_grid_takes_the_median_of_rounds(self):
        # Three rounds of one cell: ratios 0.5, 2.0 and 1.5; the median is 1.5, not the mean (1.33).
        rounds = [{"threads": 2, "heads": 1, "batch": 1, "results": [result("flash2", 512, ms, False, "fwd", 2.0)]}
                  for ms in (4.0, 1.0, 2.0 / 1.5)]
        out = self.run_script("grid", *(self.write(doc) for doc in rounds))
        self.assertIn("| 1 | 512 | 64 | no | 1.50 | - |", out)

    def test_turns_shows_the_pairs_median_and_lowest_pair(self):
        def turn(n, causal, mode, ratio, low):
            return {"n": n, "d": 128, "heads": 12, "causal": causal, "mode": mode, "ember_ms": 10.0,
                    "torch_ms": 10.0 * ratio, "ratio": ratio, "ratio_min": low, "ratio_max": ratio + 0.1}
        one = {"threads": 1, "results": [turn(4096, False, "fwd", 1.25, 1.1), turn(4096, False, "fwd+bwd", 0.98, 0.9)]}
        two = {"threads": 2, "results": [turn(4096, False, "fwd", 1.5, 1.4)]}
        out = self.run_script("turns", self.write(one), self.write(two))
        self.assertIn("| B*H | N | d | causal | fwd 1t | fwd 2t | fwd+bwd 1t | fwd+bwd 2t |", out)
        self.assertIn("| 12 | 4096 | 128 | no | 1.25 (1.10) | 1.50 (1.40) | 0.98 (0.90) | - |", out)

    def test_sgemm_shares_the_forward_rate_of_the_best_square_of_its_round(self):
        # 12 heads, N = 1000, d = 64: 4 * 12 * 1e6 * 64 = 3.072 GFLOP in 30 ms = 102.4 GFLOP/s, against
        # the better of 100 and 128 GFLOP/s: 80%. The causal row and the flash row are left out.
        attn = {"threads": 2, "heads": 12, "batch": 1,
                "results": [dict(result("flash2", 1000, 30.0), d=64), result("flash2", 1000, 10.0, causal=True),
                            result("flash", 1000, 50.0)]}
        # A faster product that is not a square (a GPT-2 shape) is not the yardstick.
        mm = {"results": [{"label": "n=1024", "m": 1024, "n": 1024, "k": 1024, "gflops": 100.0},
                          {"label": "n=2048", "m": 2048, "n": 2048, "k": 2048, "gflops": 128.0},
                          {"label": "gpt2 fc", "m": 64, "n": 3072, "k": 768, "gflops": 200.0}]}
        out = self.run_script("sgemm", self.write(attn), self.write(mm))
        self.assertIn("| 2 | 12 | 1000 | 64 | 30.0 | 102 | 128 | 80% |", out)
        self.assertEqual(out.count("| 2 | 12 |"), 1)

    def test_sgemm_needs_a_square_in_the_matmul_json(self):
        attn = {"threads": 1, "heads": 1, "batch": 1, "results": [result("flash2", 1000, 30.0)]}
        mm = {"results": [{"label": "gpt2 fc", "m": 64, "n": 3072, "k": 768, "gflops": 200.0}]}
        p = subprocess.run([sys.executable, SCRIPT, "sgemm", self.write(attn), self.write(mm)], capture_output=True,
                           text=True)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("has no square product", p.stderr)

    def test_sgemm_wants_pairs(self):
        p = subprocess.run([sys.executable, SCRIPT, "sgemm", "only_one.json"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("in pairs", p.stderr)

    def test_blockm_derives_blocks(self):
        doc = {"threads": 2, "heads": 1, "batch": 1, "block_m": 16384, "results": [result("flash", 4096, 7.0)]}
        out = self.run_script("blockm", self.write(doc))
        self.assertIn("| 16384 | 64, 64 |", out)

    def test_bad_usage_exits_2(self):
        p = subprocess.run([sys.executable, SCRIPT, "nonsense"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("study JSON", p.stderr)


if __name__ == "__main__":
    unittest.main()
