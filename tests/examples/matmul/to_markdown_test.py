#!/usr/bin/python3
"""examples/matmul/to_markdown.py on bench_gemv's JSON: one row per matrix and thread count, one
column per layout with Ember's share of the read probe and its speed over MKL's better call, "-"
for a layout not measured or a cell without the peer."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "..", "examples", "matmul", "to_markdown.py")


def row(layout, rows, cols, threads, pct, ratio=None):
    r = {"layout": layout, "rows": rows, "cols": cols, "threads": threads, "percent_of_read": pct}
    if ratio is not None:
        r["ratio_vs_best_mkl"] = ratio
    return r


class GemvTable(unittest.TestCase):
    def render(self, results):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump({"program": "bench_gemv", "results": results}, f)
        try:
            return subprocess.run([sys.executable, SCRIPT, f.name], check=True, capture_output=True,
                                  text=True).stdout.splitlines()
        finally:
            os.unlink(f.name)

    def test_rows_by_matrix_and_threads_columns_by_layout(self):
        out = self.render([row("xW", 768, 2304, 1, 93.6, 1.434), row("Wv", 768, 2304, 1, 88.4, 1.83),
                           row("xW", 768, 2304, 2, 99.2, 1.6), row("xW", 1000, 3001, 1, 79.0)])
        self.assertEqual(out[0], "| W | threads | x @ W: % of read (vs MKL) | W @ v: % of read (vs MKL) |")
        self.assertEqual(out[2], "| 768 x 2304 | 1 | 94% (1.43x) | 88% (1.83x) |")
        self.assertEqual(out[3], "| 768 x 2304 | 2 | 99% (1.60x) | - |")  # Wv not measured at 2 threads
        self.assertEqual(out[4], "| 1000 x 3001 | 1 | 79% (-) | - |")  # no peer in that run
        self.assertEqual(len(out), 5)


if __name__ == "__main__":
    unittest.main()
