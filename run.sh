#!/usr/bin/env bash
# Ember's two entry points (see README.md):
#   ./run.sh          install what is missing, build Release, run the main job
#   ./run.sh test     build and run the whole test suite (and, under CI, once more with sanitizers,
#                     then each reader of outside bytes under libFuzzer: scripts/fuzz.sh)
# Also: ./run.sh build | ./run.sh bench-deps (the benchmark peers: PyTorch, SciPy, OpenBLAS, ember
#       beside torch, llama.cpp's llama-bench with GGUF files of GPT-2 124M) | ./run.sh peer-ember
#       (that ember again, after a change to the library)
set -euo pipefail
cd "$(dirname "$0")"

JOBS=${JOBS:-2}
# OpenMP threads that spin while waiting steal the core their partner needs on small machines
# (an epoch took 1.5-26 s instead of 0.5 s with the default); sleeping waiters cost little.
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
BUILD_DIR=${BUILD_DIR:-build}
BUILD_PACKAGES=(build-essential cmake pkg-config libgtest-dev libcxxopts-dev nlohmann-json3-dev zlib1g-dev
                libpcre2-dev libopenblas-dev python3 python3-numpy python3-matplotlib ccache
                libopenmpi-dev openmpi-bin)
DATA_PACKAGES=(dataset-fashion-mnist fortunes)
PEER_PACKAGES=(python3-venv python3-scipy)
# The PyTorch/NumPy/SciPy peer: a virtual environment with PyPI's current wheels (Debian 12's
# python3-torch is 1.13, without scaled_dot_product_attention). Not committed; the benchmarks use
# its python when it exists, else /usr/bin/python3 (examples/common/peer_python.h, scripts/peer_info.py).
PEER_VENV=${EMBER_PEER_VENV:-$HOME/.cache/ember/peer-venv}
PEER_PIP_PACKAGES=("torch>=2,<3" "numpy>=1.26" scipy threadpoolctl)
# llama.cpp's llama-bench and llama-quantize (the GPT-2 weight-format peer, examples/gpt2/WEIGHTS.md),
# built from the sources in PyPI's llama-cpp-python sdist, and the GGUF files of a random GPT-2 124M.
LLAMA_CPP_CACHE=${EMBER_LLAMA_CPP_CACHE:-$HOME/.cache/ember/llama.cpp}
LLAMA_CPP_PYTHON_VERSION=0.3.36
# What llama.cpp's convert_hf_to_gguf.py imports beyond torch and numpy (its requirements file pins
# another torch, so only these): transformers at the version llama.cpp pins, gguf from its sources.
LLAMA_CONVERT_PIP_PACKAGES=("transformers==4.57.6")
FUZZ_PACKAGES=(clang)  # libFuzzer and its sanitizer runtimes come with Debian's clang

have_packages() {
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || return 1
  done
}

install_packages() {
  have_packages "$@" && return 0
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "==> installing missing Debian packages: $*"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@"
}

configure_and_build() {
  local dir=$1
  shift
  local extra=()
  # CI compiles the CUDA code for one architecture to save time; nothing runs it there.
  if [ "${CI:-}" = "true" ]; then extra+=(-DCMAKE_CUDA_ARCHITECTURES=80); fi
  if command -v ccache >/dev/null; then
    extra+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
    export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}  # relative paths, so clones in other folders share the cache
  fi
  cmake -S . -B "$dir" "${extra[@]}" "$@" >/dev/null
  cmake --build "$dir" -j "$JOBS"
}

# The Python package (pyproject.toml, python/): pip install . into a venv under the build folder,
# then pytest tests/python. The wheel's CMake build folder (build/py-wheel) persists, so a second
# run recompiles only what changed; ccache serves clones that built the same sources before.
PY_PACKAGES=(python3-venv python3-dev)
# pip install . into the virtual environment $1 (which has scikit-build-core and nanobind).
pip_install_ember() {
  echo "==> pip install . (the ember Python package) into $1"
  local cmake_args=""
  if command -v ccache >/dev/null; then
    cmake_args="-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"
    export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
  fi
  CMAKE_ARGS="$cmake_args" CMAKE_BUILD_PARALLEL_LEVEL=$JOBS \
    "$1/bin/python" -m pip install --quiet --no-build-isolation .
}
# Ember's own Python package beside torch in the peer environment, for the programs that time both
# in one process (examples/common/in_turns.py). It shares build/py-wheel with `./run.sh test`, so
# after a change to the library `./run.sh peer-ember` recompiles only what changed.
install_peer_ember() {
  install_packages "${PY_PACKAGES[@]}"
  if ! "$PEER_VENV/bin/python" -c "import scikit_build_core, nanobind" 2>/dev/null; then
    "$PEER_VENV/bin/python" -m pip install --quiet "scikit-build-core>=0.10" "nanobind>=2.0"
  fi
  pip_install_ember "$PEER_VENV"
}
PY_VENV=${EMBER_PY_VENV:-$BUILD_DIR/py-venv}
python_tests() {
  install_packages "${PY_PACKAGES[@]}"
  [ -x "$PY_VENV/bin/python" ] || /usr/bin/python3 -m venv "$PY_VENV"
  if ! "$PY_VENV/bin/python" -c "import scikit_build_core, nanobind, numpy, pytest" 2>/dev/null; then
    echo "==> pip install scikit-build-core nanobind numpy pytest into $PY_VENV"
    "$PY_VENV/bin/python" -m pip install --quiet --upgrade pip
    "$PY_VENV/bin/python" -m pip install --quiet "scikit-build-core>=0.10" "nanobind>=2.0" "numpy>=1.22" pytest
  fi
  pip_install_ember "$PY_VENV"
  echo "==> pytest tests/python"
  "$PY_VENV/bin/python" -m pytest -q -rs tests/python
}

run_tests() {
  local dir=$1
  ctest --test-dir "$dir" --output-on-failure -j "$JOBS" --timeout 900
}

case "${1:-main}" in
  main)
    install_packages "${BUILD_PACKAGES[@]}" "${DATA_PACKAGES[@]}"
    configure_and_build "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release
    "$BUILD_DIR/bin/autodiff_trace"
    echo
    "$BUILD_DIR/bin/train_classifier" --out results/classifier
    if /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
      /usr/bin/python3 examples/classifier/plot_metrics.py results/classifier/metrics.json
    fi
    ;;
  build)
    install_packages "${BUILD_PACKAGES[@]}"
    configure_and_build "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release
    ;;
  test)
    install_packages "${BUILD_PACKAGES[@]}" "${DATA_PACKAGES[@]}"
    configure_and_build "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release
    run_tests "$BUILD_DIR"
    python_tests
    if [ "${CI:-}" = "true" ] || [ "${EMBER_SANITIZE_RUN:-0}" = "1" ]; then
      # Without MPI: OpenMPI's own allocations that live until exit would read as leaks.
      echo "==> the suite once more under AddressSanitizer and UndefinedBehaviorSanitizer (Debug)"
      configure_and_build build-sanitize -DCMAKE_BUILD_TYPE=Debug -DEMBER_SANITIZE=ON -DEMBER_CUDA=OFF \
        -DEMBER_BUILD_EXAMPLES=OFF -DEMBER_MPI=OFF
      ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 run_tests build-sanitize
    fi
    if [ "${CI:-}" = "true" ] || [ "${EMBER_FUZZ_RUN:-0}" = "1" ]; then
      echo "==> the readers of outside bytes under libFuzzer (clang, ASan + UBSan), ${FUZZ_SECONDS:-20} s each"
      install_packages "${FUZZ_PACKAGES[@]}"
      JOBS=$JOBS scripts/fuzz.sh "${FUZZ_SECONDS:-20}"
    fi
    ;;
  bench-deps)
    install_packages "${BUILD_PACKAGES[@]}" "${DATA_PACKAGES[@]}" "${PEER_PACKAGES[@]}"
    if [ ! -x "$PEER_VENV/bin/python" ]; then
      echo "==> creating the peer virtual environment $PEER_VENV"
      /usr/bin/python3 -m venv "$PEER_VENV"
    fi
    # PyPI's default torch wheel for Linux x86_64 is the CUDA build: ~540 MB, plus ~3 GB of nvidia-*
    # wheels it depends on. Its CPU code is the same; only PyPI is reachable from these machines.
    echo "==> pip install ${PEER_PIP_PACKAGES[*]} into $PEER_VENV (torch: ~0.5 GB + CUDA libraries)"
    "$PEER_VENV/bin/python" -m pip install --quiet --upgrade pip
    "$PEER_VENV/bin/python" -m pip install --upgrade "${PEER_PIP_PACKAGES[@]}"
    install_peer_ember
    "$PEER_VENV/bin/python" scripts/peer_info.py
    JOBS=$JOBS scripts/build_llama_cpp.sh --cache "$LLAMA_CPP_CACHE" --version "$LLAMA_CPP_PYTHON_VERSION"
    llama_src=$LLAMA_CPP_CACHE/llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION/vendor/llama.cpp
    if ! "$PEER_VENV/bin/python" -c "import gguf, transformers" 2>/dev/null; then
      echo "==> pip install llama.cpp's gguf-py and ${LLAMA_CONVERT_PIP_PACKAGES[*]} into $PEER_VENV"
      "$PEER_VENV/bin/python" -m pip install --quiet "$llama_src/gguf-py" "${LLAMA_CONVERT_PIP_PACKAGES[@]}"
    fi
    /usr/bin/python3 scripts/make_gguf.py "$LLAMA_CPP_CACHE/gguf" --llama-cpp "$llama_src" \
      --quantize "$LLAMA_CPP_CACHE/bin/llama-quantize" --python "$PEER_VENV/bin/python"
    ;;
  peer-ember)
    [ -x "$PEER_VENV/bin/python" ] || { echo "run.sh peer-ember: no $PEER_VENV; run ./run.sh bench-deps first" >&2; exit 1; }
    install_peer_ember
    ;;
  -h|--help|help)
    sed -n '2,8p' "$0"
    ;;
  *)
    echo "unknown command '$1' (expected: main, test, build, bench-deps, peer-ember)" >&2
    exit 2
    ;;
esac
