#!/usr/bin/env bash
# This stop's benchmark runs; nothing else runs meanwhile.
set -u
cd /work/main
B=benchmarks/2026-12-07-amd-epyc-zen3-d
mkdir -p $B
PY=~/.cache/ember/peer-venv/bin/python
L=~/.cache/ember/llama.cpp
{ date; uptime; lscpu | grep -E "Model name|^CPU\(s\)|Flags" | cut -c1-300; git log --oneline -1; } > $B/machine.txt
for t in 1 2; do
  echo "== bench_quant_kernels decode t=$t" | tee -a $B/log.txt
  build/bin/bench_quant_kernels --threads $t --rounds 9 --json $B/quant_kernels_decode_t$t.json 2>&1 | tee -a $B/log.txt
  echo "== bench_quant_kernels prefill t=$t" | tee -a $B/log.txt
  build/bin/bench_quant_kernels --threads $t --rounds 5 --rows 128 --json $B/quant_kernels_prefill_t$t.json 2>&1 | tee -a $B/log.txt
done
python3 examples/gpt2/bench_weights.py $B/weights --rounds 2 --threads 1 2 --formats f32 bf16 int8 int8-widen \
  --torch $PY --gpt2 build/bin/gpt2 --llama-bench $L/bin/llama-bench --gguf $L/gguf --model $L/gguf/gpt2-random 2>&1 | tail -24 | tee -a $B/log.txt
for t in 1 2; do
  echo "== ceiling nano t=$t" | tee -a $B/log.txt
  OMP_NUM_THREADS=$t build/bin/gpt2 train-step --steps 30 --vocab 257 --ceiling 2>&1 | tee $B/ceiling_nano_t$t.txt | tail -3 | tee -a $B/log.txt
  echo "== ceiling mid t=$t" | tee -a $B/log.txt
  OMP_NUM_THREADS=$t build/bin/gpt2 train-step --steps 6 --warmup 2 --layers 6 --heads 6 --embd 384 --context 256 --batch 16 --vocab 257 --ceiling 2>&1 | tee $B/ceiling_mid_t$t.txt | tail -3 | tee -a $B/log.txt
  echo "== ceiling gpt2 t=$t" | tee -a $B/log.txt
  OMP_NUM_THREADS=$t build/bin/gpt2 train-step --steps 3 --warmup 1 --layers 12 --heads 12 --embd 768 --context 256 --batch 4 --vocab 50257 --ceiling 2>&1 | tee $B/ceiling_gpt2_t$t.txt | tail -3 | tee -a $B/log.txt
done
for c in mid gpt2; do for t in 1 2; do
  echo "== train_in_turns $c t=$t --compile" | tee -a $B/log.txt
  $PY examples/gpt2/train_in_turns.py --config $c --threads $t --compile --json $B/train_turns_${c}_t$t.json 2>&1 | grep -v "No CUDA runtime" | tail -8 | tee -a $B/log.txt
done; done
{ date; uptime; } >> $B/machine.txt
echo done | tee -a $B/log.txt
