#!/usr/bin/env bash
# Builds the libFuzzer harnesses of tests/fuzz with clang (ASan + UBSan) and runs each for a
# bounded time on its committed seed corpus and dictionary. Fails on the first finding (crash,
# sanitizer report, an exception other than ember::Error, a leak); the reproducer is left in
# $FUZZ_OUT/<name>/ (libFuzzer's crash-*, leak-*, timeout-* files).
#   scripts/fuzz.sh [SECONDS per harness, default 25] [harness names...]
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-25}
shift || true
JOBS=${JOBS:-2}
BUILD=${FUZZ_BUILD_DIR:-build-fuzz}
FUZZ_OUT=${FUZZ_OUT:-$BUILD/fuzz-runs}
ALL=(safetensors npy idx idx_gzip gpt2_config vocab merges tokenizer_roundtrip checkpoint)
NAMES=("$@")
[ ${#NAMES[@]} -gt 0 ] || NAMES=("${ALL[@]}")

command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ not found (apt-get install clang)" >&2; exit 2; }
extra=()
if command -v ccache >/dev/null; then extra+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
# One library built with clang and the sanitizers; only the harnesses on top (no tests, no programs).
# Line tables (not full -g) keep sanitizer reports symbolised at a fraction of the compile time;
# Release's -O3, which comes after the -O1 here, is what the code is optimised with.
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS="-O1 -gline-tables-only" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DEMBER_FUZZ=ON -DEMBER_CUDA=OFF -DEMBER_BUILD_EXAMPLES=OFF -DEMBER_BUILD_TESTS=OFF "${extra[@]}" >/dev/null
cmake --build "$BUILD" -j "$JOBS" --target fuzzers

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export OMP_NUM_THREADS=1
status=0
printf '%-22s %12s %8s %s\n' harness executions corpus result
for name in "${NAMES[@]}"; do
  work="$FUZZ_OUT/$name"
  rm -rf "$work"
  mkdir -p "$work/corpus"
  log="$work/log.txt"
  # New inputs go to the scratch corpus, never into the committed seeds.
  if "$BUILD/bin/fuzz_$name" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
       -print_final_stats=1 -artifact_prefix="$work/" -dict="tests/fuzz/dict/$name.dict" \
       "$work/corpus" "tests/fuzz/corpus/$name" >"$log" 2>&1; then
    result=ok
  else
    result="FINDING (see $log)"
    status=1
  fi
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
  printf '%-22s %12s %8s %s\n' "$name" "$execs" "$(ls "$work/corpus" | wc -l)" "$result"
done
exit $status
