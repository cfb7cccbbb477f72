#!/usr/bin/env bash
# This stop's benchmark runs (nothing else ran meanwhile). time_to_loss_t2.* came first and
# time_to_loss_t1.* last, with (T = 2, then 1):
#   $PY examples/gpt2/time_to_loss.py --nanogpt /tmp/nanoGPT --threads T --target 2.1 --json $B/time_to_loss_tT.json
set -u
cd "$(dirname "$0")/../.."
B=benchmarks/2026-12-08-amd-epyc-zen3
PY=~/.cache/ember/peer-venv/bin/python
{ date; uptime; lscpu | grep -E "Model name|^CPU\(s\)|Flags" | cut -c1-300; git log --oneline -1; } > $B/machine.txt
for t in 1 2; do
  echo "== ceiling nano t=$t" | tee -a $B/log.txt
  OMP_NUM_THREADS=$t build/bin/gpt2 train-step --steps 30 --vocab 257 --ceiling 2>&1 | tee $B/ceiling_nano_t$t.txt | tail -3 | tee -a $B/log.txt
  echo "== train_in_turns nano t=$t --compile" | tee -a $B/log.txt
  $PY examples/gpt2/train_in_turns.py --config nano --threads $t --compile --json $B/train_turns_nano_t$t.json 2>&1 | grep -v "No CUDA runtime" | tail -8 | tee -a $B/log.txt
done
echo "== ceiling gpt2 t=2" | tee -a $B/log.txt
OMP_NUM_THREADS=2 build/bin/gpt2 train-step --steps 3 --warmup 1 --layers 12 --heads 12 --embd 768 --context 256 --batch 4 --vocab 50257 --ceiling 2>&1 | tee $B/ceiling_gpt2_t2.txt | tail -3 | tee -a $B/log.txt
echo "== train_in_turns gpt2 t=2 --compile" | tee -a $B/log.txt
$PY examples/gpt2/train_in_turns.py --config gpt2 --threads 2 --compile --json $B/train_turns_gpt2_t2.json 2>&1 | grep -v "No CUDA runtime" | tail -8 | tee -a $B/log.txt
