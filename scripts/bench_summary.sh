#!/usr/bin/env bash
# The summary benchmarks of README "Performance against PyTorch 2.x": every row of that table,
# Ember and its peer in the same run, on this machine, then the table itself (summary.md).
#
#   scripts/bench_summary.sh [OUTDIR]        (default results/summary; about an hour on 2 cores)
#
# Needs a Release build (build/bin) and the peers of `./run.sh bench-deps` (PyTorch 2.x, SciPy).
# Each program picks a fair peer itself: OpenBLAS runs on the core examples/common/openblas_core.h
# chooses for this CPU (printed), torch gets the same thread count as Ember, never more than the
# cores. Run it on a quiet machine: every program also prints the load it saw.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=${1:-results/summary}
bin=${EMBER_BIN:-build/bin}
for p in bench_matmul bench_gemv bench_attention bench_autograd bench_sparse bench_cnn_step gpt2 train_classifier openblas_env; do
  [ -x "$bin/$p" ] || { echo "bench_summary: $bin/$p is missing; build first (./run.sh builds Release)" >&2; exit 1; }
done
mkdir -p "$out"
# OpenMP's default wait policy, as a user runs it (passive, right on a shared machine, costs
# Ember up to 30% on a quiet one; NOTES.md). The machine must be quiet.
unset OMP_WAIT_POLICY
export EMBER_KEEP_WAIT_POLICY=1
cores=$(nproc)
threads="1 $cores"
[ "$cores" -gt 1 ] || threads=1
PY=$("$bin/openblas_env" --which-python)
"$bin/openblas_env" --python "$PY" --json >"$out/peer.json"
PEER_ENV=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["openblas"]["env"])' "$out/peer.json")
{ date -u +%FT%TZ; grep -m1 'model name' /proc/cpuinfo; uptime; } >"$out/machine.txt"
step() { echo; echo "=== bench_summary: $*" >&2; }

for t in $threads; do
  step "sgemm, $t thread(s): Ember packed, OpenBLAS and torch's MKL in turns in one process, then torch.mm from Python"
  "$bin/bench_matmul" --device cpu --threads "$t" --sizes 256,1024,2048 --gpt2-tokens 64 --shapes 64x768x50257,64x768x50257t \
    --variants packed,blas,mkl --python "$PY" --repeats 11 --json "$out/matmul_t$t.json"
  $PEER_ENV "$PY" examples/matmul/peer_torch_mm.py --threads "$t" --sizes 256,1024,2048 \
    --shapes 64x768x2304,64x768x768,64x768x3072,64x3072x768,64x768x50257 --json "$out/matmul_torch_t$t.json"
done

step "GEMV: W from DRAM, Ember and MKL's sgemv/sgemm in turns in one process (decode's c_fc and LM head, a column vector)"
"$bin/bench_gemv" --cases xW:768x3072,xWt:50257x768,Wv:8192x8192 --threads "${threads// /,}" \
  --python "$PY" --repeats 11 --json "$out/gemv.json"

step "MLP epoch: train_classifier against the PyTorch loop (3 epochs, the first untimed, 3 repeats)"
examples/classifier/bench_vs_torch.sh "$out/classifier" 3 3

step "CNN training step: bench_cnn_step against bench_cnn_torch.py, alternated 3 times per thread count"
PEER_PY="$PY" EMBER_BIN=$bin examples/classifier/bench_cnn_vs_torch.sh 3 20 | tee "$out/cnn_step.txt" | grep '^{' >"$out/cnn_step.jsonl"

# In rounds: Ember and PyTorch take turns three times per thread count and the table takes the
# medians, since a slow phase of a VM lasts minutes and one run per side can put either ahead.
step "GPT-2 124M shapes: prefill of 128 tokens, 32 generated with and without the cache, 3 rounds per thread count"
EMBER_BIN=$bin examples/gpt2/bench_rounds.sh "$out/gpt2_rounds" 3 $threads

for r in 1 2 3; do  # rounds, as for GPT-2 (each runs Ember's cases, then SDPA's); the table takes medians
  for t in $threads; do
    step "attention, round $r of 3, $t thread(s): N = 1024, 4096, d = 64, one head, Flash2 and the torch SDPA peer"
    OMP_NUM_THREADS=$t "$bin/bench_attention" --peer --python "$PY" --seq 1024,4096 --head-dim 64 --causal both \
      --impls flash2 --repeats 5 --json "$out/attention_t${t}_r$r.json"
  done
done

# The same attention cells and the GPT-2 prefill once more, Ember and PyTorch called in turns in one
# Python (examples/common/in_turns.py): on a host whose speed drifts within a minute, the rounds
# above can put the two sides in different phases. Needs ember in the peer's Python (bench-deps),
# brought up to this tree's library first, or the rows would time whichever Ember was installed.
turns=0
importable=0
"$PY" -c "import ember, torch" 2>/dev/null && importable=1
if [ "$importable" = 1 ]; then
  turns=1
  if [ "$PY" = "${EMBER_PEER_VENV:-$HOME/.cache/ember/peer-venv}/bin/python" ]; then
    step "ember in the peer's Python, rebuilt from this tree (./run.sh peer-ember)"
    ./run.sh peer-ember || { echo "bench_summary: could not rebuild ember in $PY; the rows in turns are skipped" >&2; turns=0; }
  else
    echo "bench_summary: $PY is not the peer environment of run.sh; the rows in turns time the ember installed there" >&2
  fi
fi
if [ "$turns" = 1 ]; then
  for t in $threads; do
    step "in turns, one process, $t thread(s): the attention cells above, GPT-2's 128-token prefill and a decode step without the cache"
    "$PY" examples/attention/bench_in_turns.py --threads "$t" --seq 1024,4096 --head-dim 64 --causal both \
      --repeats 11 --json "$out/attention_turns_t$t.json"
    "$PY" examples/gpt2/prefill_in_turns.py --threads "$t" --prompt-len 128 --repeats 15 \
      --json "$out/gpt2_prefill_turns_t$t.json"
    # The middle step of the rounds' no-cache decode (positions 128-159), which the rounds' drift blurs.
    "$PY" examples/gpt2/prefill_in_turns.py --threads "$t" --prompt-len 144 --no-cache --repeats 15 \
      --json "$out/gpt2_nocache_step_turns_t$t.json"
    # Full training steps: nanoGPT's CPU recipe, a mid size and GPT-2 124M, eager and torch.compile.
    "$PY" examples/gpt2/train_in_turns.py --config all --threads "$t" --compile --json "$out/gpt2_train_turns_t$t.json"
  done
elif [ "$importable" = 0 ]; then
  echo "bench_summary: $PY cannot import ember and torch; the rows in turns are skipped (./run.sh bench-deps)" >&2
fi

step "GPT-2 124M by weight format: Ember f32/bf16/int8 against PyTorch (and llama.cpp where bench-deps built it), 2 rounds"
peers=()
"$PY" -c "import torch" 2>/dev/null && peers+=(--torch "$PY")
llama=${EMBER_LLAMA_DIR:-$HOME/.cache/ember/llama.cpp}
[ -x "$llama/bin/llama-bench" ] && [ -d "$llama/gguf" ] && peers+=(--llama-bench "$llama/bin/llama-bench" --gguf "$llama/gguf")
/usr/bin/python3 examples/gpt2/bench_weights.py "$out/weights" --rounds 2 --threads $threads --formats f32 bf16 int8 \
  --gpt2 "$bin/gpt2" "${peers[@]}"

step "recorded-op overhead and an MLP step against PyTorch eager"
for t in $threads; do
  "$bin/bench_autograd" --rounds 3 --threads "$t" --python "$PY" --json "$out/autograd_t$t.json"
done

step "SpMV and SpGEMM against SciPy"
"$bin/bench_sparse" --spmv-sizes 8192 --spgemm-sizes 2048 --densities 0.001,0.01,0.1 --large-n 0 \
  --threads "${threads// /,}" --wait-quiet 0 --python "$PY" --json "$out/sparse.json"

/usr/bin/python3 scripts/summary_table.py "$out" | tee "$out/summary.md"
