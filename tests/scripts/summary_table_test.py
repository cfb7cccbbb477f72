#!/usr/bin/python3
"""scripts/summary_table.py on a synthetic results folder: ratios point the right way for times
and rates, a missing peer is "not measured", MKL timed in bench_matmul's process is preferred to
torch.mm timed apart, and --compact puts thread counts side by side."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "summary_table.py")


def write(path, doc):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(doc, f)


class SummaryTable(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        d = self.dir
        for t, (packed, blas, torch) in {1: (50.0, 60.0, 40.0), 2: (100.0, 80.0, None)}.items():
            write(f"{d}/matmul_t{t}.json", {"results": [
                {"variant": "packed", "label": "n=256", "m": 256, "k": 256, "n": 256, "gflops": packed},
                {"variant": "blas", "label": "n=256", "m": 256, "k": 256, "n": 256, "gflops": blas}]})
            if torch is not None:
                write(f"{d}/matmul_torch_t{t}.json", {"results": [{"m": 256, "k": 256, "n": 256, "gflops": torch}]})
        write(f"{d}/gpt2_t1/ember.json", {"prompt_len": 128, "prefill_s": 0.5,
                                          "rows": [{"generated": 32, "cache": True, "tokens_per_s": 20.0,
                                                    "decode_tokens_per_s": 30.0}]})
        write(f"{d}/gpt2_t1/torch.json", {"prompt_len": 128, "prefill_s": 0.25,
                                          "rows": [{"generated": 32, "cache": True, "tokens_per_s": 10.0,
                                                    "decode_tokens_per_s": 24.0}]})

    def run_script(self, *flags):
        return subprocess.run([sys.executable, SCRIPT, *flags, self.dir], check=True, capture_output=True,
                              text=True).stdout

    def test_rates_and_times_give_speed_ratios(self):
        out = self.run_script()
        self.assertIn("| sgemm n=256 | 1 | 50.0 GFLOP/s | 40.0 GFLOP/s | torch.mm (MKL) | 1.25x |", out)
        self.assertIn("| sgemm n=256 | 1 | 50.0 GFLOP/s | 60.0 GFLOP/s | OpenBLAS | 0.83x |", out)
        self.assertIn("| GPT-2 124M prefill, 128 tokens | 1 | 500.0 ms | 250.0 ms | nanoGPT-style PyTorch | 0.50x |", out)
        self.assertIn("| GPT-2 decode, 32 tokens, KV cache | 1 | 20.00 tok/s | 10.00 tok/s | nanoGPT-style PyTorch | 2.00x |",
                      out)
        # The steps after the prompt's pass, when both sides report them.
        self.assertIn("| GPT-2 decode with the KV cache, the 31 steps after the prompt | 1 | 30.00 tok/s | 24.00 tok/s |"
                      " nanoGPT-style PyTorch | 1.25x |", out)

    def test_gemv_rows_take_mkls_better_call(self):
        write(f"{self.dir}/gemv.json", {"results": [
            {"layout": "Wv", "rows": 8192, "cols": 8192, "threads": 1, "ember_s": 0.010, "mkl_gemv_s": 0.012,
             "mkl_gemm_s": 0.015},
            {"layout": "xWt", "rows": 50257, "cols": 768, "threads": 2, "ember_s": 0.004, "mkl_gemv_s": 0.009,
             "mkl_gemm_s": 0.008},
            {"layout": "xW", "rows": 768, "cols": 768, "threads": 1, "ember_s": 0.001}]})  # no peer: no row
        out = self.run_script()
        self.assertIn("| GEMV W @ v, W 8192x8192 from DRAM | 1 | 10.0 ms | 12.0 ms | MKL sgemv/sgemm (same process) | 1.20x |",
                      out)
        self.assertIn("| GEMV x @ W^T, W 50257x768 from DRAM | 2 | 4.000 ms | 8.000 ms | MKL sgemv/sgemm (same process) |"
                      " 2.00x |", out)
        self.assertNotIn("W 768x768", out)

    def test_missing_peer_says_not_measured(self):
        out = self.run_script()
        self.assertIn("| sgemm n=256 | 2 | 100.0 GFLOP/s | not measured | torch.mm (MKL) | - |", out)
        self.assertIn("| MLP 784-256-128-10, one epoch | 1 | not measured | not measured |", out)

    def test_in_process_mkl_replaces_torch_mm(self):
        write(f"{self.dir}/matmul_t1.json", {"results": [
            {"variant": "packed", "label": "n=256", "m": 256, "k": 256, "n": 256, "gflops": 50.0},
            {"variant": "mkl", "label": "n=256", "m": 256, "k": 256, "n": 256, "gflops": 100.0}]})
        out = self.run_script()
        self.assertIn("| sgemm n=256 | 1 | 50.0 GFLOP/s | 100.0 GFLOP/s | MKL (torch's, same process) | 0.50x |", out)
        self.assertNotIn("| sgemm n=256 | 1 | 50.0 GFLOP/s | 40.0 GFLOP/s | torch.mm (MKL)", out)

    def test_mkl_in_turns_takes_the_median_of_the_per_round_ratios(self):
        # The medians say 0.50x; the rounds, in which the two took turns, said 0.93x.
        write(f"{self.dir}/matmul_t2.json", {"results": [
            {"variant": "packed", "label": "n=1024", "m": 1024, "k": 1024, "n": 1024, "gflops": 50.0},
            {"variant": "mkl", "label": "n=1024", "m": 1024, "k": 1024, "n": 1024, "gflops": 100.0,
             "packed_speedup_in_turns": 0.93}]})
        out = self.run_script()
        self.assertIn("| sgemm n=1024 | 2 | 50.0 GFLOP/s | 100.0 GFLOP/s | MKL (torch's, same process) | 0.93x |", out)

    def test_a_transposed_b_is_its_own_row_against_its_own_peer(self):
        write(f"{self.dir}/matmul_t1.json", {"results": [
            {"variant": "packed", "label": "64x768@768x50257", "m": 64, "k": 768, "n": 50257, "gflops": 60.0},
            {"variant": "mkl", "label": "64x768@768x50257", "m": 64, "k": 768, "n": 50257, "gflops": 80.0},
            {"variant": "packed", "label": "64x768@(50257x768)^T", "m": 64, "k": 768, "n": 50257,
             "b_transposed": True, "gflops": 57.0},
            {"variant": "mkl", "label": "64x768@(50257x768)^T", "m": 64, "k": 768, "n": 50257,
             "b_transposed": True, "gflops": 60.0}]})
        out = self.run_script()
        self.assertIn("| sgemm 64x768 @ 768x50257 | 1 | 60.0 GFLOP/s | 80.0 GFLOP/s | MKL (torch's, same process) | 0.75x |",
                      out)
        self.assertIn("| sgemm 64x768 @ (50257x768)^T | 1 | 57.0 GFLOP/s | 60.0 GFLOP/s | MKL (torch's, same process) |"
                      " 0.95x |", out)

    def test_gpt2_rounds_give_medians_and_the_rounds_ratio(self):
        # Three rounds at 2 threads. Prefill: Ember 0.2, 0.6, 0.3 s (median 0.3), PyTorch 0.22, 0.3,
        # 0.36 s (median 0.3): the medians say 1.00x, the rounds 1.10x, 0.50x and 1.20x (median 1.10x).
        ember = [(0.2, 40.0, 45.0), (0.6, 10.0, 15.0), (0.3, 30.0, 35.0)]
        torch = [(0.22, 30.0, 32.0), (0.3, 8.0, 10.0), (0.36, 25.0, 27.0)]
        for r, (e, p) in enumerate(zip(ember, torch), 1):
            for side, (prefill, tps, dps) in (("ember", e), ("torch", p)):
                write(f"{self.dir}/gpt2_rounds/r{r}_t2/{side}.json", {"prompt_len": 128, "prefill_s": prefill,
                      "rows": [{"generated": 32, "cache": True, "tokens_per_s": tps, "decode_tokens_per_s": dps}]})
        write(f"{self.dir}/matmul_t2.json", {"results": []})
        out = self.run_script()
        peer = "nanoGPT-style PyTorch (median of 3 rounds)"
        self.assertIn(f"| GPT-2 124M prefill, 128 tokens | 2 | 300.0 ms | 300.0 ms | {peer} | 1.10x |", out)
        # 40/30, 10/8, 30/25 = 1.33, 1.25, 1.20: 1.25x, where the medians 30/25 say 1.20x.
        self.assertIn(f"| GPT-2 decode, 32 tokens, KV cache | 2 | 30.00 tok/s | 25.00 tok/s | {peer} | 1.25x |", out)
        # 45/32, 15/10, 35/27 = 1.41, 1.50, 1.30: 1.41x, where the medians 35/27 say 1.30x.
        self.assertIn(f"| GPT-2 decode with the KV cache, the 31 steps after the prompt | 2 | 35.00 tok/s | 27.00 tok/s |"
                      f" {peer} | 1.41x |", out)
        # The single run of 1 thread is still read as before.
        self.assertIn("| GPT-2 124M prefill, 128 tokens | 1 | 500.0 ms | 250.0 ms | nanoGPT-style PyTorch | 0.50x |", out)

    def test_attention_rounds_give_medians_and_the_rounds_ratio(self):
        def doc(ember_ms, torch_ms):
            return {"results": [{"impl": "flash2", "mode": "fwd", "n": 1024, "d": 64, "causal": False,
                                 "median_ms": ember_ms, "torch": {"impl": "scaled_dot_product_attention", "ms": torch_ms}}]}
        # Medians 3.0 and 4.0 ms (1.33x); the rounds 1.50x, 0.44x, 2.00x (median 1.50x).
        for r, (e, p) in enumerate([(2.0, 3.0), (9.0, 4.0), (3.0, 6.0)], 1):
            write(f"{self.dir}/attention_t1_r{r}.json", doc(e, p))
        write(f"{self.dir}/attention_t1.json", doc(100.0, 1.0))  # a single run beside rounds is not read
        out = self.run_script()
        self.assertIn("| attention fwd, N=1024, d=64 | 1 | 3.000 ms | 4.000 ms | torch SDPA (median of 3 rounds) | 1.50x |",
                      out)
        self.assertNotIn("100.0 ms", out)

    def test_a_single_attention_run_gives_the_ratio_of_its_times(self):
        write(f"{self.dir}/attention_t1.json", {"results": [{"impl": "flash2", "mode": "fwd", "n": 512, "d": 64,
              "causal": True, "median_ms": 2.0, "torch": {"impl": "scaled_dot_product_attention", "ms": 3.0}}]})
        out = self.run_script()
        self.assertIn("| attention fwd, N=512, d=64, causal | 1 | 2.000 ms | 3.000 ms | torch SDPA | 1.50x |", out)

    def test_rows_in_turns_take_the_median_of_their_pairs(self):
        write(f"{self.dir}/attention_turns_t1.json", {"threads": 1, "repeats": 11, "results": [
            {"n": 4096, "d": 128, "heads": 12, "causal": True, "mode": "fwd+bwd", "ember_ms": 10.0, "torch_ms": 12.0,
             "ratio": 1.5, "ratio_min": 1.1, "ratio_max": 1.9}]})
        write(f"{self.dir}/gpt2_prefill_turns_t1.json", {"threads": 1, "repeats": 15, "prompt_len": 128,
                                                          "ember_ms": 100.0, "torch_ms": 90.0, "ratio": 0.95})
        write(f"{self.dir}/gpt2_nocache_step_turns_t1.json", {"threads": 1, "repeats": 15, "prompt_len": 144,
                                                               "no_cache": True, "ember_ms": 110.0, "torch_ms": 130.0,
                                                               "ratio": 1.25})
        out = self.run_script()
        # 1.50x and 0.95x, the pairs' medians, not 12 / 10 = 1.20x and 90 / 100 = 0.90x.
        self.assertIn("| attention fwd+bwd, N=4096, d=128, 12 heads, causal | 1 | 10.0 ms | 12.0 ms | "
                      "torch SDPA (in turns, 11 pairs) | 1.50x |", out)
        self.assertIn("| GPT-2 124M prefill, 128 tokens | 1 | 100.0 ms | 90.0 ms | "
                      "nanoGPT-style PyTorch (in turns, 15 pairs) | 0.95x |", out)
        self.assertIn("| GPT-2 decode without the cache, one step at 144 tokens | 1 | 110.0 ms | 130.0 ms | "
                      "nanoGPT-style PyTorch (in turns, 15 pairs) | 1.25x |", out)

    def test_training_rows_show_eager_and_compile_with_the_pairs_ratio(self):
        write(f"{self.dir}/gpt2_train_turns_t1.json", {"results": [
            {"config": "nano", "shape": "4/4/128, context 64, batch 12, vocab 257", "threads": 1, "repeats": 20,
             "ember ms": 50.0, "torch eager ms": 40.0, "torch.compile ms": 45.0, "ember vs torch eager": 0.85,
             "ember vs torch.compile": 0.9},
            {"config": "mid", "shape": "6/6/384, context 256, batch 16, vocab 257", "threads": 1, "repeats": 10,
             "ember ms": 900.0, "torch eager ms": 1000.0, "ember vs torch eager": 1.2}]})
        out = self.run_script()
        self.assertIn("| GPT training step, nano (4/4/128, context 64, batch 12, vocab 257) | 1 | 50.0 ms | 40.0 ms | "
                      "nanoGPT-style PyTorch, eager (in turns, 20 pairs) | 0.85x |", out)
        self.assertIn("nanoGPT-style PyTorch, torch.compile (in turns, 20 pairs) | 0.90x |", out)
        self.assertIn("| GPT training step, mid (6/6/384, context 256, batch 16, vocab 257) | 1 | 900.0 ms | "
                      "1.00 s | nanoGPT-style PyTorch, eager (in turns, 10 pairs) | 1.20x |", out)
        self.assertEqual(out.count("GPT training step, mid"), 1)  # no compile row where it did not run

    def test_cnn_step_rows_take_each_sides_median(self):
        lines = [{"framework": "ember", "threads": 1, "batch": 128, "step_ms": v} for v in (30.0, 10.0, 20.0)]
        lines += [{"framework": "torch 2.15.0", "threads": 1, "batch": 128, "step_ms": v} for v in (50.0, 40.0, 30.0)]
        lines += [{"framework": "ember", "threads": 1, "layer": "conv1", "forward_gflops": 9.0}]
        with open(f"{self.dir}/cnn_step.jsonl", "w") as f:
            f.write("\n".join(json.dumps(l) for l in lines) + "\nnot json: the script's own table\n")
        out = self.run_script()
        self.assertIn("| CNN training step (2 conv + BN + pool, linear head), batch 128 | 1 | 20.0 ms | 40.0 ms | "
                      "PyTorch eager (oneDNN), alternated runs | 2.00x |", out)

    def test_weight_formats_face_the_nearest_peer_format(self):
        runs = [{"side": "ember", "format": "bf16", "threads": 1, "round": r, "decode": v, "prefill": 300.0}
                for r, v in ((1, 40.0), (2, 44.0), (3, 60.0))]
        runs += [{"side": "torch", "format": "bf16", "threads": 1, "round": r, "decode": v, "prefill": 50.0}
                 for r, v in ((1, 20.0), (2, 21.0), (3, 22.0))]
        runs += [{"side": "llama.cpp", "format": "F16", "threads": 1, "round": 1, "decode": 88.0, "prefill": 600.0}]
        runs += [{"side": "torch", "format": "int8", "threads": 1, "round": 1, "decode": 30.0, "prefill": 400.0}]
        write(f"{self.dir}/weights/raw.json", {"cpu": "test", "runs": runs})
        out = self.run_script()
        self.assertIn("| GPT-2 124M decode, bf16 weights, KV cache | 1 | 44.00 tok/s | 21.00 tok/s | "
                      "PyTorch bf16 (bench_torch.py; int8: quantize_dynamic) | 2.10x |", out)
        self.assertIn("| GPT-2 124M decode, bf16 weights, KV cache | 1 | 44.00 tok/s | 88.00 tok/s | "
                      "llama.cpp F16 (llama-bench) | 0.50x |", out)
        self.assertIn("| GPT-2 124M prefill, 128 tokens, bf16 weights | 1 | 300.00 tok/s | 50.00 tok/s |", out)
        self.assertNotIn("int8 weights", out)  # no Ember int8 run: no row against torch's int8

    def test_compact_puts_threads_side_by_side(self):
        out = self.run_script("--compact")
        self.assertIn("| sgemm n=256 | OpenBLAS | 50.0 GFLOP/s / 60.0 GFLOP/s (**0.83x**) | "
                      "100.0 GFLOP/s / 80.0 GFLOP/s (**1.25x**) |", out)


if __name__ == "__main__":
    unittest.main()
