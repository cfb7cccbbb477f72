#!/usr/bin/env bash
# stage_python_package.sh BUILD_DIR STAGE: lays out the ember package of a CMake build made with
# -DEMBER_PYTHON=ON (the extension _ember and Ember's libraries, as the wheel holds them, beside
# python/ember's sources) under STAGE/ember, so that PYTHONPATH=STAGE imports it without pip.
# scripts/gpu_check.sh uses it to run the Python CUDA tests against its CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:?usage: scripts/stage_python_package.sh BUILD_DIR STAGE}
STAGE=${2:?usage: scripts/stage_python_package.sh BUILD_DIR STAGE}
if ! ls "$BUILD_DIR"/python/_ember*.so >/dev/null 2>&1; then
  echo "stage_python_package: $BUILD_DIR has no _ember module (configure it with -DEMBER_PYTHON=ON and build _ember)" >&2
  exit 1
fi
rm -rf "$STAGE/ember"
cmake --install "$BUILD_DIR" --component ember_python --prefix "$STAGE"
cp python/ember/*.py "$STAGE/ember/"
ls "$STAGE/ember"
