#!/usr/bin/env bash
# GPT-2 against its PyTorch peer in rounds: bench_vs_torch.sh ROUNDS times per thread count, Ember
# and PyTorch taking turns, then the median of each figure over the rounds (rounds_table.py). On a
# VM whose speed moves by 1.5x within minutes, one run of each side, minutes apart, can put either
# ahead; rounds let a slow phase fall on both sides.
# Usage: examples/gpt2/bench_rounds.sh OUTDIR [ROUNDS [THREADS...]]   (default: 3 rounds, 1 and 2 threads)
# Each round runs `bench_vs_torch.sh OUTDIR/rR_tT --threads T --prompt-len 128 --lengths 32
# --no-cache-lengths 32 --repeats 3`; EMBER_BIN=DIR picks another build's bin folder.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: bench_rounds.sh OUTDIR [ROUNDS [THREADS...]]}
rounds=${2:-3}
shift $(( $# >= 2 ? 2 : 1 ))
threads=${*:-1 2}
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "bench_rounds: ROUNDS must be a positive integer, got '$rounds'" >&2; exit 2; }
mkdir -p "$out"
for r in $(seq 1 "$rounds"); do
  for t in $threads; do
    echo "=== round $r of $rounds, $t thread(s), $(date -u +%T)" >&2
    "$here/bench_vs_torch.sh" "$out/r${r}_t$t" --threads "$t" --prompt-len 128 --lengths 32 --no-cache-lengths 32 \
      --repeats 3 > "$out/r${r}_t$t.log" 2>&1
  done
done
/usr/bin/python3 "$here/rounds_table.py" "$out" | tee "$out/table.md"
