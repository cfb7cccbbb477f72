#!/usr/bin/env bash
# gpu_check.sh OUTDIR: on a machine with an NVIDIA GPU, build Ember for that GPU and, in one call of
# at most 8 minutes, run the CUDA tests (C++ and Python), compute-sanitizer over one test per kernel
# family, every GPU benchmark sweep, CuPy's cuSPARSE against SciPy, a trace of torch.mm and an ncu
# profile of the study kernels, leaving logs and JSON under OUTDIR and OUTDIR/report.md
# (scripts/gpu_report.py). Each step has its own time limit, so one slow step cannot eat the
# others' time. Exit status: 0 when every step passed.
#
#   scripts/gpu_check.sh results/gpu            # then commit results/gpu/*.json and the logs
#   BUILD_DIR=build-gpu JOBS=16 scripts/gpu_check.sh /tmp/gpu
#   scripts/gpu_check.sh /tmp/gpu; tar czf "$OUT/gpu.tgz" -C /tmp gpu   # through the device tool, which
#                                                # returns at most 8 files: one archive holds them all
#   scripts/gpu_check.sh --dry-run [CPU_BUILD_DIR]
#
# --dry-run runs on a machine without a GPU (CI does, as the CTest gpu_check_dry_run): it runs no
# step but records each one's limit and command line, and scripts/gpu_check_plan.py checks them:
# every program is built by the build step or is a tool of the GPU image, every script exists and
# compiles, every Python import is in the image, every gtest filter matches tests of
# CPU_BUILD_DIR's ember_tests, and the limits add up to within the budget.
set -uo pipefail
cd "$(dirname "$0")/.."

DRY_RUN=0
if [ "${1:-}" = "--dry-run" ]; then
  DRY_RUN=1
  LIST_BUILD=${2:-build}  # a CPU build whose ember_tests lists the test names the filters must match
  OUT=$(mktemp -d)
  trap 'rm -rf "$OUT"' EXIT
else
  OUT=${1:?usage: scripts/gpu_check.sh OUTDIR | --dry-run [CPU_BUILD_DIR]}
fi
BUILD_DIR=${BUILD_DIR:-build-gpu}
JOBS=${JOBS:-$(nproc)}
PYTHON=${PYTHON:-python3}  # the image's python3 holds torch, CuPy, SciPy, pytest and nanobind
mkdir -p "$OUT"
SUMMARY="$OUT/summary.txt"
PLAN="$OUT/plan.tsv"
: >"$SUMMARY"
: >"$PLAN"
status=0
start=$(date +%s)
BUDGET=${BUDGET:-470}  # seconds for the whole check: 8 minutes less a margin
# The limits of the steps a one-GPU machine runs add up to 470 s, the budget (the dry run checks
# the sum). They are estimates, not measurements: no step has run on a GPU yet. The most important
# steps come first: the build, the tests every figure rests on, then the studies' measurements.

note() { echo "$*" | tee -a "$SUMMARY"; }
# step NAME LIMIT_SECONDS COMMAND...: runs it with a time limit, logs to OUTDIR/NAME.log.
step() {
  local name=$1 limit=$2
  shift 2
  if [ "$DRY_RUN" -eq 1 ]; then  # one line per step: name, limit, then the arguments, tab-separated
    (IFS=$'\t'; echo "$name"$'\t'"$limit"$'\t'"$*") >>"$PLAN"
    return 0
  fi
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
if [ "$DRY_RUN" -eq 1 ]; then
  ARCH=90
  GPUS=1  # the machine lent is one H100 or H200
else
  if ! command -v nvidia-smi >/dev/null || ! nvidia-smi >"$OUT/nvidia-smi.txt" 2>&1; then
    note "no usable NVIDIA GPU here (nvidia-smi failed); nothing to check"
    exit 2
  fi
  GPU_NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  ARCH=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '.[:space:]')
  [ -n "$ARCH" ] || ARCH=90
  GPUS=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
  note "GPU: $GPU_NAME (sm_$ARCH); $(nproc) cores; $(date -u +%Y-%m-%dT%H:%M:%SZ); commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
fi
BIN="$BUILD_DIR/bin"

# ---- build for that GPU only, the Python extension too (EMBER_PYTHON, for the Python CUDA tests) ----
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
# The extension needs Python's headers: without them the Python steps are skipped (and said so)
# rather than the configure failing and taking every other step with it.
py_targets=(_ember)
py_define=(-DEMBER_PYTHON=ON -DPython_EXECUTABLE="$(command -v "$PYTHON" || echo "$PYTHON")")
if [ "$DRY_RUN" -eq 0 ] && ! "$PYTHON" -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' 2>/dev/null; then
  note "WARNING: $PYTHON has no Python.h: the extension is not built and the Python CUDA tests are skipped"
  py_targets=()
  py_define=(-DEMBER_PYTHON=OFF)
  status=1
fi
step configure 25 cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DEMBER_CUDA=ON "${py_define[@]}" \
  -DCMAKE_CUDA_ARCHITECTURES="$ARCH" "${launcher[@]}" || { note "configure failed"; exit 1; }
step build 160 cmake --build "$BUILD_DIR" -j "$JOBS" --target ember_tests bench_matmul_gpu bench_matmul bench_attention \
  bench_sparse "${py_targets[@]}" || { note "build failed"; exit 1; }

# ---- the CUDA tests (they skip without a GPU; here they must run): every suite with Cuda in its
# name (CudaBackend, CudaOps, CudaNnOps, CudaMatmul, CudaEmulator, AttentionCuda, SparseCuda, ...) ----
step cuda_tests 35 "$BIN/ember_tests" --gtest_filter='*Cuda*' --gtest_output="json:$OUT/cuda_tests.json"
if [ "$DRY_RUN" -eq 0 ] && grep -q '\[  SKIPPED \]' "$OUT/cuda_tests.log"; then
  note "WARNING: some CUDA tests skipped on a GPU machine (see cuda_tests.log)"
  status=1
fi

# ---- compute-sanitizer: memcheck over one test per CUDA kernel family, racecheck over the families
# whose kernels share memory between threads (block reductions, softmax, norms, cross-entropy,
# attention, the tiled matmuls). --error-exitcode makes a finding fail the step. ----
MEMCHECK_TESTS='CudaOps.UnaryMatchesCpu:CudaOps.BinaryBroadcastsLikeCpu:CudaOps.WhereCastAndCopyMatchCpu:CudaOps.ReductionsMatchCpu'
MEMCHECK_TESTS+=':CudaNnOps.*:SelectCuda.TopkAndSortMatchCpu:SelectCuda.CumsumMatchesCpu:CudaMatmul.StudyKernelsMatchFloat64Reference'
MEMCHECK_TESTS+=':AttentionCuda.KernelsMatchTheCpuReference:SparseCuda.SpmvAndSpmmMatchCpu:SparseCuda.SpgemmMatchesCpu'
MEMCHECK_TESTS+=':*OpTable.CudaMatchesCpu/conv2d*:*OpTable.CudaMatchesCpu/batch_norm*'
RACECHECK_TESTS='CudaOps.ReductionsMatchCpu:CudaNnOps.SoftmaxFamilyMatchesCpu:CudaNnOps.LayerNormMatchesCpu'
RACECHECK_TESTS+=':CudaNnOps.CrossEntropyMatchesCpuAndChecksTargets:CudaMatmul.StudyKernelsMatchFloat64Reference'
RACECHECK_TESTS+=':AttentionCuda.KernelsMatchTheCpuReference:*OpTable.CudaMatchesCpu/batch_norm*'
step sanitizer_memcheck 30 compute-sanitizer --tool memcheck --error-exitcode 1 --print-limit 20 \
  "$BIN/ember_tests" --gtest_filter="$MEMCHECK_TESTS"
step sanitizer_racecheck 25 compute-sanitizer --tool racecheck --racecheck-report all --error-exitcode 1 --print-limit 20 \
  "$BIN/ember_tests" --gtest_filter="$RACECHECK_TESTS"

# ---- the Python CUDA tests against this CUDA build of the package: the extension and its libraries
# installed as the wheel would hold them, beside python/ember's sources ----
PY_STAGE="$BUILD_DIR/py-stage"  # in the build folder: OUTDIR holds results only
if [ "${#py_targets[@]}" -gt 0 ]; then
  step python_stage 5 scripts/stage_python_package.sh "$BUILD_DIR" "$PY_STAGE" &&
    step python_cuda_tests 20 env PYTHONPATH="$PY_STAGE:tests/python" "$PYTHON" -m pytest -q -rs -p no:cacheprovider \
      tests/python/test_cuda.py --junitxml="$OUT/python_cuda_tests.xml"
fi

# ---- NCCL: world size 1 ran above (DistNcclCuda, part of *Cuda*); 2 ranks when there are 2 GPUs
# and MPI was found (ember_mpi_tests, each rank on its own GPU). A one-GPU machine skips it, so it
# is outside the sum above. ----
if [ "$DRY_RUN" -eq 0 ]; then
  if grep -q "NCCL communicator ON" "$OUT/configure.log"; then
    note "NCCL: built (world size 1 in cuda_tests)"
  else
    note "WARNING: the NCCL communicator was not built (see configure.log); DistNcclCuda checked only the error"
    status=1
  fi
fi
if [ "$GPUS" -ge 2 ] && [ -x "$BIN/ember_mpi_tests" ]; then
  step nccl_2_ranks 60 env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    mpirun -n 2 "$BIN/ember_mpi_tests" --gtest_filter='*Nccl*'
else
  note "nccl_2_ranks: not run ($GPUS GPU(s); needs 2 and ember_mpi_tests)"
fi

# ---- matmul study: every variant, n 256..8192, TILE swept (a slow point gets fewer repeats) ----
step bench_matmul_gpu 30 "$BIN/bench_matmul_gpu" --max-seconds 1.5 --json "$OUT/bench_matmul_gpu.json"
# The same variants through the shared matmul harness. CUBLASLT_LOG_LEVEL=2 logs the cuBLASLt
# kernel each GEMM ran (its name gives the tile shape).
step bench_matmul_cuda 15 env CUBLASLT_LOG_LEVEL=2 CUBLASLT_LOG_FILE="$OUT/cublaslt_kernels.log" \
  "$BIN/bench_matmul" --device cuda --sizes 1024,4096 --json "$OUT/bench_matmul_cuda.json"
# How PyTorch calls cuBLAS: torch.profiler's kernel names and cuBLASLt's log of one torch.mm.
step torch_mm_trace 15 env CUBLASLT_LOG_LEVEL=2 CUBLASLT_LOG_FILE="$OUT/torch_mm_cublaslt.log" \
  "$PYTHON" examples/matmul/trace_torch_mm.py --json "$OUT/torch_mm_trace.json"

# ---- sparse study: Ember's cuSPARSE path, then CuPy's cuSPARSE against SciPy on the same densities ----
step bench_sparse_cuda 15 "$BIN/bench_sparse" --device cuda --wait-quiet 0 --json "$OUT/bench_sparse_cuda.json"
step cupy_sparse 20 "$PYTHON" examples/sparse/cupy_peer.py --json "$OUT/cupy_sparse.json"

# ---- ncu: achieved occupancy, shared-memory and DRAM throughput of the tiled and register-tiled
# matmuls and the flash forward (one launch each; ncu replays a kernel once per counter pass) ----
# The metrics by name (the raw page: one CSV row per kernel), so gpu_report.py reads the same columns
# whatever sections this ncu version groups them in.
NCU_METRICS=gpu__time_duration.sum,launch__block_size,launch__grid_size,launch__registers_per_thread
NCU_METRICS+=,launch__shared_mem_per_block_static,launch__shared_mem_per_block_dynamic
NCU_METRICS+=,sm__maximum_warps_per_active_cycle_pct,sm__warps_active.avg.pct_of_peak_sustained_active
NCU_METRICS+=,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.pct_of_peak_sustained_elapsed
NCU_METRICS+=,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
# --reps 1 --warmup 0: each variant launches its kernel once, so -c 4 catches tiled(16), tiled(32),
# register_tiled and register_tiled_db in turn.
step ncu_matmul 25 ncu --metrics "$NCU_METRICS" --csv --page raw -k 'regex:tiled_kernel' -c 4 \
  --log-file "$OUT/ncu_matmul.csv" "$BIN/bench_matmul_gpu" --sizes 2048 --variants tiled,register_tiled,register_tiled_db \
  --tiles 16,32 --warmup 0 --reps 1 --no-flush
step ncu_flash 20 ncu --metrics "$NCU_METRICS" --csv --page raw -k 'regex:flash_forward' -c 1 \
  --log-file "$OUT/ncu_flash.csv" "$BIN/bench_attention" --device cuda --seq 4096 --head-dim 64 --causal off \
  --impls flash --warmup 0 --repeats 1

# ---- attention study: standard vs flash on the GPU, N up to 16384, d 64 and 128, causal and not ----
step bench_attention_cuda 25 "$BIN/bench_attention" --device cuda --seq 256,512,1024,2048,4096,8192,16384 \
  --head-dim 64,128 --causal both --repeats 3 --json "$OUT/bench_attention_cuda.json"

if [ "$DRY_RUN" -eq 1 ]; then
  "$PYTHON" scripts/gpu_check_plan.py "$PLAN" --budget "$BUDGET" --build-dir "$BUILD_DIR" --list-build "$LIST_BUILD"
  exit $?
fi

# The reports' GPU tables and plots from the files above (OUT/report.md, OUT/plots/).
"$PYTHON" scripts/gpu_report.py "$OUT" >>"$SUMMARY" 2>&1 || note "gpu_report.py failed (the JSON is still in $OUT)"
note "total $(( $(date +%s) - start ))s; status $status"
exit $status
