#!/usr/bin/env bash
# gpu_check.sh OUTDIR: on a machine with an NVIDIA GPU, build Ember for that GPU, run the CUDA
# tests and every GPU benchmark sweep, and leave logs and JSON under OUTDIR. Meant to finish
# within 8 minutes on one H200 (16 cores); each step has its own time limit so that one slow step
# cannot eat the others' time. Exit status: 0 when every step passed.
#
#   scripts/gpu_check.sh results/gpu            # then commit results/gpu/*.json and the logs
#   BUILD_DIR=build-gpu JOBS=16 scripts/gpu_check.sh /tmp/gpu
set -uo pipefail
cd "$(dirname "$0")/.."

OUT=${1:?usage: scripts/gpu_check.sh OUTDIR}
BUILD_DIR=${BUILD_DIR:-build-gpu}
JOBS=${JOBS:-$(nproc)}
mkdir -p "$OUT"
SUMMARY="$OUT/summary.txt"
: >"$SUMMARY"
status=0
start=$(date +%s)
BUDGET=${BUDGET:-470}  # seconds for the whole check: 8 minutes less a margin
# The step limits below add up to 450 s, within the budget; the most important steps come first:
# the build, the CUDA tests (every GPU figure rests on them), then matmul, attention, sparse.

note() { echo "$*" | tee -a "$SUMMARY"; }
# step NAME LIMIT_SECONDS COMMAND...: runs it with a time limit, logs to OUTDIR/NAME.log.
step() {
  local name=$1 limit=$2
  shift 2
  local t0=$(date +%s)
  local left=$(( start + BUDGET - t0 ))  # never run past the overall budget
  if [ "$left" -lt 5 ]; then
    note "$(printf '%-26s not run: the %ss budget is spent' "$name" "$BUDGET")"
    status=1
    return 1
  fi
  [ "$limit" -le "$left" ] || limit=$left
  timeout --signal=INT --kill-after=10 "$limit" "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  note "$(printf '%-26s rc=%-3s %4ss  (log: %s)' "$name" "$rc" "$(( $(date +%s) - t0 ))" "$OUT/$name.log")"
  [ "$rc" -eq 0 ] || status=1
  return $rc
}

# ---- the GPU present and its architecture (sm_90 for an H100/H200) ----
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi >"$OUT/nvidia-smi.txt" 2>&1; then
  note "no usable NVIDIA GPU here (nvidia-smi failed); nothing to check"
  exit 2
fi
GPU_NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
ARCH=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '.[:space:]')
[ -n "$ARCH" ] || ARCH=90
note "GPU: $GPU_NAME (sm_$ARCH); $(nproc) cores; $(date -u +%Y-%m-%dT%H:%M:%SZ); commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"

# ---- build for that GPU only ----
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
step configure 40 cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DEMBER_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES="$ARCH" "${launcher[@]}" || { note "configure failed"; exit 1; }
step build 170 cmake --build "$BUILD_DIR" -j "$JOBS" --target ember_tests bench_matmul_gpu bench_matmul bench_attention bench_sparse || { note "build failed"; exit 1; }

# ---- the CUDA tests (they skip without a GPU; here they must run): every suite with Cuda in its
# name (CudaBackend, CudaOps, CudaNnOps, CudaMatmul, CudaEmulator, AttentionCuda, SparseCuda, ...) ----
step cuda_tests 60 "$BUILD_DIR/bin/ember_tests" --gtest_filter='*Cuda*' --gtest_output="json:$OUT/cuda_tests.json"
if grep -q '\[  SKIPPED \]' "$OUT/cuda_tests.log"; then
  note "WARNING: some CUDA tests skipped on a GPU machine (see cuda_tests.log)"
  status=1
fi

# ---- NCCL: world size 1 ran above (DistNcclCuda, part of *Cuda*); 2 ranks when there are 2 GPUs
# and MPI was found (ember_mpi_tests, each rank on its own GPU) ----
if grep -q "NCCL communicator ON" "$OUT/configure.log"; then
  note "NCCL: built (world size 1 in cuda_tests)"
else
  note "WARNING: the NCCL communicator was not built (see configure.log); DistNcclCuda checked only the error"
  status=1
fi
GPUS=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
if [ "$GPUS" -ge 2 ] && [ -x "$BUILD_DIR/bin/ember_mpi_tests" ]; then
  step nccl_2_ranks 60 env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    mpirun -n 2 "$BUILD_DIR/bin/ember_mpi_tests" --gtest_filter='*Nccl*'
else
  note "nccl_2_ranks: not run ($GPUS GPU(s); needs 2 and ember_mpi_tests)"
fi

# ---- GPU sweeps ----
# Matmul study: every variant, n 256..8192, TILE swept.
step bench_matmul_gpu 60 "$BUILD_DIR/bin/bench_matmul_gpu" --json "$OUT/bench_matmul_gpu.json"
# The same variants through the shared matmul harness (bench_matmul --device cuda), incl. GPT-2 shapes.
if [ -x "$BUILD_DIR/bin/bench_matmul" ]; then
  # CUBLASLT_LOG_LEVEL=2 logs the cuBLASLt kernel each GEMM ran (its name gives the tile shape).
  CUBLASLT_LOG_LEVEL=2 CUBLASLT_LOG_FILE="$OUT/cublaslt_kernels.log" \
    step bench_matmul_cuda 30 "$BUILD_DIR/bin/bench_matmul" --device cuda --sizes 1024,4096 --json "$OUT/bench_matmul_cuda.json"
fi

# Attention study: standard vs flash on the GPU, N up to 16384, d 64 and 128, causal and not.
if [ -x "$BUILD_DIR/bin/bench_attention" ]; then
  step bench_attention_cuda 60 "$BUILD_DIR/bin/bench_attention" --device cuda --seq 256,512,1024,2048,4096,8192,16384 \
    --head-dim 64,128 --causal both --repeats 5 --json "$OUT/bench_attention_cuda.json"
else
  note "bench_attention: not built yet, skipped"
fi

# Sparse study: cuSPARSE SpMV and SpGEMM across densities, with and without setup costs.
if [ -x "$BUILD_DIR/bin/bench_sparse" ]; then
  step bench_sparse_cuda 30 "$BUILD_DIR/bin/bench_sparse" --device cuda --wait-quiet 0 --json "$OUT/bench_sparse_cuda.json"
else
  note "bench_sparse: not built yet, skipped"
fi

# The reports' GPU tables and plots from the JSON above (OUT/report.md, OUT/plots/).
python3 scripts/gpu_report.py "$OUT" >>"$SUMMARY" 2>&1 || note "gpu_report.py failed (the JSON is still in $OUT)"
note "total $(( $(date +%s) - start ))s; status $status"
exit $status
