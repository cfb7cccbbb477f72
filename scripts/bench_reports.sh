#!/usr/bin/env bash
# The per-study tables of the reports (examples/*/README.md) beyond the README's summary, each
# program with its peer in the same run, on this machine:
#
#   scripts/bench_reports.sh [OUTDIR] [STEP...]   (default results/reports; all steps: about 75 min)
#
# Steps: matmul matmul64 ops attention (which includes attention_blockm) attention_blockm
# attention_large attention_unfused sparse sparsity custom_op attention_grid attention_grid_large (12 heads at
# N = 4096 and 8192; about 30 minutes, not in the default list) gpt2 gpt2_long (the last two about
# 15 minutes each) classifier classifier_cnn (about 5 minutes) classifier_90 (about
# 11 minutes) dist. Run it on a quiet machine (each program prints the load it saw) after
# `./run.sh build` and `./run.sh bench-deps`.
# OpenBLAS runs on the core examples/common/openblas_core.h picks for this CPU; torch gets the
# same thread count as Ember. OpenMP keeps its default wait policy, as a user runs it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=${1:-results/reports}
shift || true
steps=${*:-matmul matmul64 ops attention attention_large attention_unfused sparse sparsity custom_op attention_grid gpt2 gpt2_long classifier classifier_cnn classifier_90 dist}
bin=${EMBER_BIN:-build/bin}
for p in bench_matmul bench_ops bench_attention bench_sparse contextual_sparsity custom_op_demo gpt2 train_classifier openblas_env; do
  [ -x "$bin/$p" ] || { echo "bench_reports: $bin/$p is missing; build first (./run.sh build)" >&2; exit 1; }
done
mkdir -p "$out"
unset OMP_WAIT_POLICY
export EMBER_KEEP_WAIT_POLICY=1
PY=$("$bin/openblas_env" --which-python)
"$bin/openblas_env" --python "$PY" --json >"$out/peer.json"
{ date -u +%FT%TZ; grep -m1 "model name" /proc/cpuinfo; uptime; } >>"$out/machine.txt"  # appended: one OUTDIR may collect several runs
step() { echo; echo "=== bench_reports $(date -u +%T): $*" >&2; }
block_m_sweep() {
  step "attention: the effect of M on Algorithm 1, N = 4096"
  for m in 4096 16384 65536 262144 1048576; do
    "$bin/bench_attention" --seq 4096 --head-dim 64 --causal off --repeats 3 --block-m "$m" --max-standard-n 0 \
      --impls flash --json "$out/attention_cpu_m$m.json" | tee "$out/attention_cpu_m$m.txt"
  done
}

for s in $steps; do
  case $s in
    matmul)
      for t in 2 1; do
        step "matmul float32, $t thread(s), every CPU variant (study kernels included)"
        "$bin/bench_matmul" --device cpu --threads "$t" --sizes 64,128,256,512,1024,2048 --gpt2-tokens 64 \
          --json "$out/matmul_f32_t$t.json" | tee "$out/matmul_f32_t$t.txt"
      done
      step "matmul float32, large n (B beyond the L3), 2 threads"
      "$bin/bench_matmul" --device cpu --sizes 1024,2048,4096 --gpt2-tokens 0 --variants ikj,blocked,packed,blas \
        --repeats 3 --warmup 1 --json "$out/matmul_f32_large.json" | tee "$out/matmul_f32_large.txt"
      ;;
    matmul64)
      for t in 2 1; do
        step "matmul float64, $t thread(s)"
        "$bin/bench_matmul" --device cpu --dtype float64 --threads "$t" --sizes 64,256,1024,2048 --gpt2-tokens 64 \
          --variants ikj,blocked,packed,blas --json "$out/matmul_f64_t$t.json" | tee "$out/matmul_f64_t$t.txt"
      done
      ;;
    ops)
      step "elementwise, reductions, softmax family against memcpy"
      "$bin/bench_ops" --repeats 31 --json "$out/ops_float32.json" | tee "$out/ops_float32.txt"
      ;;
    attention)
      step "attention: Algorithm 0, Algorithm 1, Flash2 and torch SDPA, N = 256..4096, d = 64, both masks"
      "$bin/bench_attention" --peer --python "$PY" --repeats 5 --json "$out/attention_cpu.json" | tee "$out/attention_cpu.txt"
      block_m_sweep
      ;;
    attention_blockm)
      block_m_sweep
      ;;
    attention_large)
      step "attention: N = 8192, 16384 (Algorithm 0 at 8192 only)"
      "$bin/bench_attention" --peer --python "$PY" --seq 8192,16384 --head-dim 64 --causal off --repeats 3 \
        --max-standard-n 8192 --json "$out/attention_cpu_large.json" | tee "$out/attention_cpu_large.txt"
      ;;
    attention_unfused)
      step "attention: Algorithm 0 fused by strips against its three steps over the whole N x N matrix"
      "$bin/bench_attention" --seq 1024,2048,4096,8192 --head-dim 64 --causal off --repeats 3 \
        --impls standard,unfused,flash,flash2 --json "$out/attention_unfused.json" | tee "$out/attention_unfused.txt"
      ;;
    attention_grid)
      for t in 2 1; do
        step "attention grid, $t thread(s): Flash2 against torch SDPA, N = 512..8192, d = 64 and 128, 1 and 12 heads"
        OMP_NUM_THREADS=$t "$bin/bench_attention" --peer --python "$PY" --seq 512,8192 --head-dim 64 --causal both \
          --impls flash2 --repeats 3 --json "$out/attention_grid_d64_t$t.json" | tee "$out/attention_grid_d64_t$t.txt"
        OMP_NUM_THREADS=$t "$bin/bench_attention" --peer --python "$PY" --seq 512,1024,4096,8192 --head-dim 128 --causal both \
          --impls flash2 --repeats 3 --json "$out/attention_grid_d128_t$t.json" | tee "$out/attention_grid_d128_t$t.txt"
        OMP_NUM_THREADS=$t "$bin/bench_attention" --peer --python "$PY" --seq 512,1024 --heads 12 --head-dim 64,128 \
          --causal both --impls flash2 --repeats 3 --json "$out/attention_grid_h12_t$t.json" | tee "$out/attention_grid_h12_t$t.txt"
      done
      ;;
    attention_grid_large)
      for t in 2 1; do
        step "attention grid, the long 12-head cells, $t thread(s): Flash2 against torch SDPA, N = 4096, 8192, d = 64 and 128"
        OMP_NUM_THREADS=$t "$bin/bench_attention" --peer --python "$PY" --seq 4096,8192 --heads 12 --head-dim 64,128 \
          --causal both --impls flash2 --repeats 3 --json "$out/attention_grid_h12_large_t$t.json" | tee "$out/attention_grid_h12_large_t$t.txt"
      done
      ;;
    gpt2)
      step "GPT-2 124M, 2 threads: nanoGPT's generate against a KV cache, Ember and PyTorch, 16 to 512 tokens"
      EMBER_BIN=$bin examples/gpt2/bench_vs_torch.sh "$out/gpt2_nanogpt_t2" --threads 2 --prompt-len 16 \
        --lengths 16,32,64,128,256,512 --no-cache-lengths 16,32,64,128,256,512 | tee "$out/gpt2_nanogpt_t2.txt"
      ;;
    gpt2_long)
      for t in 1 2; do
        step "GPT-2 124M, $t thread(s): a 128-token prompt, 64 to 896 tokens with the cache, 16 to 64 without"
        EMBER_BIN=$bin examples/gpt2/bench_vs_torch.sh "$out/gpt2_long_t$t" --threads "$t" --prompt-len 128 \
          --lengths 64,128,256,512,896 --no-cache-lengths 16,32,64 | tee "$out/gpt2_long_t$t.txt"
      done
      ;;
    classifier)
      step "the default run (./run.sh's job): the 784-256-128-10 MLP, 10 epochs, 1 thread"
      /usr/bin/time -v "$bin/train_classifier" --out "$out/classifier_default" --no-progress \
        >"$out/classifier_default.txt" 2>"$out/classifier_default.time"
      tail -3 "$out/classifier_default.txt"
      ;;
    classifier_cnn)
      step "the CNN's default run (train_classifier --model cnn: 10 epochs, 2 threads)"
      /usr/bin/time -v "$bin/train_classifier" --model cnn --out "$out/classifier_cnn" --no-progress \
        >"$out/classifier_cnn.txt" 2>"$out/classifier_cnn.time"
      rm -f "$out/classifier_cnn"/*.safetensors  # the weights are not needed for the report
      tail -3 "$out/classifier_cnn.txt"
      ;;
    classifier_90)
      step "what reaches 90%: the MLP's options, one run each (1 thread, one after another; about 11 minutes)"
      rows=("" "--seed 1" "--seed 2" "--val-size 0" "--epochs 20" "--epochs 20 --seed 1" "--epochs 20 --seed 2"
            "--epochs 20 --dropout 0.1" "--epochs 20 --dropout 0.1 --seed 1" "--hidden 512,256 --epochs 20"
            "--hidden 512,256 --dropout 0.2 --epochs 30" "--hidden 512,256 --dropout 0.2 --epochs 30 --seed 1"
            "--hidden 512,256 --dropout 0.2 --epochs 30 --seed 2" "--hidden 512,256 --dropout 0.2 --epochs 30 --val-size 0"
            "--hidden 1024,512 --dropout 0.3 --epochs 40")
      for i in "${!rows[@]}"; do
        d=$out/classifier_90/$(printf %02d "$i")
        mkdir -p "$d"
        echo "${rows[$i]}" >"$d/options.txt"
        # shellcheck disable=SC2086  # the options are words
        "$bin/train_classifier" ${rows[$i]} --out "$d" --no-progress >"$d/log.txt"
        rm -f "$d"/*.safetensors  # the weights are not needed for the table
        echo "${rows[$i]:-(defaults)}: $(grep '^test:' "$d/log.txt")"
      done
      python3 examples/classifier/accuracy_table.py "$out/classifier_90" | tee "$out/classifier_90.md"
      ;;
    dist)
      step "data-parallel: 2 ranks x 1 thread against 1 rank x 2 threads (the MLP, then a GPT-2 step)"
      examples/classifier/scale_dist.sh 1 3 | tee "$out/scale_dist.txt"
      export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
      g=(--steps 40 --eval-every 40 --eval-batches 1 --sample-tokens 0)
      : >"$out/gpt2_train_dist.txt"
      for r in 1 2; do
        OMP_NUM_THREADS=2 "$bin/gpt2" train "${g[@]}" --out "$out/gpt2_train_1x2_r$r" | grep -E "trained" |
          sed "s/^/run $r, 1 rank x 2 threads: /" | tee -a "$out/gpt2_train_dist.txt"
        OMP_NUM_THREADS=1 mpirun -np 2 "$bin/gpt2" train "${g[@]}" --distributed --out "$out/gpt2_train_2x1_r$r" |
          grep -E "trained|gradient averaging" | sed "s/^/run $r, 2 ranks x 1 thread: /" | tee -a "$out/gpt2_train_dist.txt"
      done
      # Only training.json is kept (the weights and the tokenizer files are not needed for the report).
      rm -f "$out"/gpt2_train_*_r*/*.safetensors "$out"/gpt2_train_*_r*/{vocab.json,merges.txt}
      # The seconds each run took (training.json), for the report's ms-per-step column.
      for f in "$out"/gpt2_train_*_r*/training.json; do
        /usr/bin/python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(sys.argv[1], "%.1f ms/step" % (1e3 * d["seconds"] / d["steps"]))' "$f"
      done | tee -a "$out/gpt2_train_dist.txt"
      ;;
    sparse)
      step "SpGEMM and SpMV against SciPy, every size and density"
      "$bin/bench_sparse" --python "$PY" --wait-quiet 0 --json "$out/bench_sparse_cpu.json" | tee "$out/bench_sparse_cpu.txt"
      ;;
    sparsity)
      step "contextual sparsity: the gathered MLP at GPT-2 124M shapes, one thread"
      OPENBLAS_NUM_THREADS=1 "$bin/contextual_sparsity" speed --repeats 101 --json "$out/sparsity_speed.json" |
        tee "$out/sparsity_speed.txt"
      ;;
    custom_op)
      step "custom op demo (softplus as a user-registered op), one thread"
      OMP_NUM_THREADS=1 "$bin/custom_op_demo" --repeats 41 --json "$out/custom_op.json" | tee "$out/custom_op.txt"
      ;;
    *)
      echo "bench_reports: unknown step '$s'" >&2
      exit 2
      ;;
  esac
done
{ echo "end $(date -u +%FT%TZ)"; uptime; } >>"$out/machine.txt"
