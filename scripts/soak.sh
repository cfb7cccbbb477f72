#!/usr/bin/env bash
# Long-run stability (not part of ./run.sh test): trains the Fashion-MNIST MLP for MINUTES (default
# 30) with soak_classifier, printing RSS and the caching allocator's held bytes every
# REPORT_SECONDS (default 60); fails if either grows past its warm-up maximum (the first 20% of the
# run) by more than 16 MiB (RSS) or 1 MiB (held). Extra arguments go to soak_classifier
# (e.g. --data DIR, --threads 2, --leak-kib-per-step 64 to watch the check fail).
#   scripts/soak.sh [MINUTES] [soak_classifier flags...]
set -euo pipefail
cd "$(dirname "$0")/.."
MINUTES=${1:-30}
shift || true
BUILD=${BUILD_DIR:-build}
JOBS=${JOBS:-2}
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  extra=()
  if command -v ccache >/dev/null; then extra+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release "${extra[@]}" >/dev/null
fi
cmake --build "$BUILD" -j "$JOBS" --target soak_classifier >/dev/null
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
exec "$BUILD/bin/soak_classifier" --minutes "$MINUTES" --report-seconds "${REPORT_SECONDS:-60}" "$@"
