#!/usr/bin/env python3
"""scripts/bench_ab_table.py on two synthetic rounds: medians per side, and the per-round ratios the
right way round for rates (higher is better) and for times (lower is better)."""
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]


def log(gflops, prefill, ms):
    return (f"threads: 1\nGFLOP/s (median)\n                                packed\nn=256       {gflops}\n"
            f"prefill of 128 tokens: 0.2 s ({prefill} tokens/s)\n"
            f"  1024   64     no flash2   fwd          {ms}      2.00      6.09\n")


with tempfile.TemporaryDirectory() as d:
    p = pathlib.Path(d)
    (p / "A_r1.log").write_text(log(50, 600, 2.0))
    (p / "B_r1.log").write_text(log(100, 300, 1.0))
    (p / "A_r2.log").write_text(log(50, 600, 2.0))
    (p / "B_r2.log").write_text(log(100, 300, 1.0))
    out = subprocess.run([sys.executable, str(ROOT / "scripts/bench_ab_table.py"), d], capture_output=True,
                         text=True, check=True).stdout
rows = {line.split(" | ")[0].lstrip("| "): line for line in out.splitlines()}
assert "| 50 | 100 | 2.00x |" in rows["sgemm n=256, 1 thr (GFLOP/s)"], out
assert "| 600 | 300 | 0.50x |" in rows["GPT-2 prefill 128, 2 thr (tokens/s)"], out
assert "| 2 | 1 | 2.00x |" in rows["Flash2 fwd N=1024 d=64 full, 2 thr (ms)"], out
print("bench_ab_table_test: ok")
