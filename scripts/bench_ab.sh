#!/usr/bin/env bash
# Two builds of Ember, A and B, timed in turns on the rows of the summary that need no peer: the
# packed sgemm on GPT-2's shapes and squares, the GEMV path (decode), prefill and decode of GPT-2
# 124M with random weights, Flash2's forward and backward, and autograd's per-op overhead. For a
# change that should move no number (a refactor), or one that should move some.
#
#   scripts/bench_ab.sh A_DIR B_DIR OUTDIR [ROUNDS]     (A_DIR, B_DIR: build folders with bin/ and lib/)
#
# Each round runs every case on A, then on B; OUTDIR gets one log per side and round. About 4
# minutes a round on 2 cores. Run it on a quiet machine.
set -euo pipefail
[ $# -ge 3 ] || { sed -n 2,9p "$0" >&2; exit 2; }
a=$1 b=$2 out=$3 rounds=${4:-3}
for d in "$a" "$b"; do
  for p in bench_matmul gpt2 bench_attention bench_autograd; do
    [ -x "$d/bin/$p" ] || { echo "bench_ab: $d/bin/$p is missing" >&2; exit 2; }
  done
done
mkdir -p "$out"
{ date -u +%FT%TZ; grep -m1 'model name' /proc/cpuinfo; nproc; uptime; } >"$out/machine.txt"
run_side() {  # $1 build folder, $2 log
  local bin=$1/bin
  export LD_LIBRARY_PATH=$1/lib  # the side's own libraries, whatever the programs' RUNPATH says
  for t in 1 2; do
    "$bin/bench_matmul" --device cpu --threads "$t" --sizes 256,1024 --gpt2-tokens 64 --variants packed \
      --repeats 9 2>&1
  done
  OMP_NUM_THREADS=2 "$bin/gpt2" bench --prompt-len 128 --lengths 32 --no-cache-lengths 8 --repeats 3 --threads 2 2>&1
  OMP_NUM_THREADS=2 "$bin/bench_attention" --seq 1024 --head-dim 64 --causal both --impls flash2 --repeats 5 2>&1
  "$bin/bench_autograd" --no-torch --threads 1 --rounds 1 2>&1
  unset LD_LIBRARY_PATH
}
for r in $(seq 1 "$rounds"); do
  echo "=== round $r of $rounds: A ($a)" >&2
  run_side "$a" >"$out/A_r$r.log"
  echo "=== round $r of $rounds: B ($b)" >&2
  run_side "$b" >"$out/B_r$r.log"
done
echo "bench_ab: logs in $out" >&2
