#!/usr/bin/env bash
# llama.cpp's llama-bench and llama-quantize, the peer of examples/gpt2/bench_weights.py, built from
# the llama.cpp sources vendored in PyPI's llama-cpp-python sdist (only PyPI and Debian are
# reachable from these machines). CPU only, Release, native CPU flags (the peer is built on the
# machine that runs it), only those two targets. Skips every step already done.
#
#   scripts/build_llama_cpp.sh [--cache DIR] [--version V] [--jobs N] [--plan] [--force]
#
#   --cache DIR   where the sdist, its sources and the build go (default: $EMBER_LLAMA_CPP_CACHE or
#                 ~/.cache/ember/llama.cpp); the programs land in DIR/bin
#   --version V   llama-cpp-python version whose vendored llama.cpp is built (default: 0.3.36)
#   --jobs N      parallel compile jobs (default: $JOBS or 2)
#   --plan        print the steps that would run (download, extract, build or skip) and stop
#   --force       build again even if DIR/bin holds programs built from this version
set -euo pipefail

usage() { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; }

CACHE=${EMBER_LLAMA_CPP_CACHE:-$HOME/.cache/ember/llama.cpp}
VERSION=0.3.36
JOBS=${JOBS:-2}
PLAN=0
FORCE=0
PIP=${EMBER_PIP:-}

die() { echo "build_llama_cpp.sh: $*" >&2; exit 2; }
need_value() { [ $# -ge 2 ] && [ -n "$2" ] || die "$1 needs a value (see --help)"; }

while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --cache) need_value "$@"; CACHE=$2; shift 2 ;;
    --version) need_value "$@"; VERSION=$2; shift 2 ;;
    --jobs) need_value "$@"; JOBS=$2; shift 2 ;;
    --plan) PLAN=1; shift ;;
    --force) FORCE=1; shift ;;
    *) die "unknown argument '$1' (expected --cache DIR, --version V, --jobs N, --plan, --force; see --help)" ;;
  esac
done
[[ "$VERSION" =~ ^[0-9]+(\.[0-9]+)*$ ]] || die "--version '$VERSION' is not a version like 0.3.36"
[[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || die "--jobs '$JOBS' is not a positive whole number"

SDIST=$CACHE/llama_cpp_python-$VERSION.tar.gz
SRC=$CACHE/llama_cpp_python-$VERSION/vendor/llama.cpp
BUILD=$CACHE/build-$VERSION
BIN=$CACHE/bin
STAMP=$BIN/built-from.txt  # the version the programs in BIN were built from

step() { if [ "$PLAN" = 1 ]; then echo "$1: $2"; else echo "==> $1: $2"; fi; }

built_already() {
  [ "$FORCE" = 0 ] && [ -x "$BIN/llama-bench" ] && [ -x "$BIN/llama-quantize" ] && [ -f "$STAMP" ] &&
    [ "$(head -n 1 "$STAMP")" = "llama-cpp-python $VERSION" ]
}

if built_already; then
  step skip "llama-bench and llama-quantize already built from llama-cpp-python $VERSION in $BIN"
  exit 0
fi

if [ -f "$SDIST" ]; then
  step download "skip, have $SDIST"
else
  step download "llama-cpp-python==$VERSION sdist from PyPI into $CACHE"
  if [ "$PLAN" = 0 ]; then
    mkdir -p "$CACHE"
    if [ -z "$PIP" ]; then
      if [ -x "$HOME/.cache/ember/peer-venv/bin/python" ]; then PIP="$HOME/.cache/ember/peer-venv/bin/python -m pip"
      else PIP="/usr/bin/python3 -m pip"; fi
    fi
    $PIP download --quiet --no-binary :all: --no-deps "llama-cpp-python==$VERSION" -d "$CACHE"
    [ -f "$SDIST" ] || die "pip download did not write $SDIST"
  fi
fi

if [ -f "$SRC/CMakeLists.txt" ]; then
  step extract "skip, have $SRC"
else
  step extract "$SDIST into $CACHE"
  [ "$PLAN" = 1 ] || tar xzf "$SDIST" -C "$CACHE"
fi

step build "llama-bench, llama-quantize (Release, CPU, native) in $BUILD with $JOBS jobs, into $BIN"
[ "$PLAN" = 1 ] && exit 0
# Static libraries so the two programs run from BIN alone; OpenSSL, the server, the web UI, tests
# and examples are not needed to time a model.
cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
  -DGGML_NATIVE=ON -DGGML_CUDA=OFF -DGGML_METAL=OFF -DGGML_VULKAN=OFF -DGGML_BLAS=OFF -DGGML_RPC=OFF \
  -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF \
  -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_COMMON=ON >/dev/null
cmake --build "$BUILD" -j "$JOBS" --target llama-bench llama-quantize
mkdir -p "$BIN"
cp "$BUILD/bin/llama-bench" "$BUILD/bin/llama-quantize" "$BIN/"
{
  echo "llama-cpp-python $VERSION"
  # The sdist has no git history; its changelog names the llama.cpp commit it vendors.
  echo "llama.cpp commit: $(awk -v v="## [$VERSION]" '$0 == v {on = 1; next} on && /^## / {exit}
    on && match($0, /llama\.cpp@[0-9a-f]+/) {print substr($0, RSTART + 10, RLENGTH - 10); exit}' \
    "$CACHE/llama_cpp_python-$VERSION/CHANGELOG.md" 2>/dev/null) (from the sdist's CHANGELOG.md)"
  # GGML_NATIVE compiles with -march=native: the x86 features that turns on here.
  echo "compiler: $(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$BUILD/CMakeCache.txt")"
  echo "-march=native enables: $(echo | ${CC:-cc} -march=native -dM -E - 2>/dev/null |
    sed -n 's/^#define __\(SSE4_2\|AVX\|AVX2\|FMA\|F16C\|BMI2\|AVX512[A-Z0-9_]*\|AMX[A-Z0-9_]*\|AVXVNNI\)__ 1$/\1/p' | sort | tr '\n' ' ')"
  grep -E '^GGML_(NATIVE|OPENMP|BLAS|CUDA):' "$BUILD/CMakeCache.txt" || true
} >"$STAMP"
echo "==> built: $BIN/llama-bench, $BIN/llama-quantize"
cat "$STAMP"
