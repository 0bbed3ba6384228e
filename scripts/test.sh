#!/usr/bin/env bash
# Builds tscan (Release, warnings as errors) and runs every test suite through ctest.
# GPU suites skip, saying why, when no CUDA device is present; TSCAN_TEST_LARGE=1 adds the
# tensors of more than 2^31 elements (GPU machine only). Build dir: $TSCAN_BUILD_DIR or build.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh --tests
build=${TSCAN_BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DTSCAN_WERROR=ON ${TSCAN_CMAKE_ARGS:-}
cmake --build "$build" -j "$(nproc)"
ctest --test-dir "$build" --output-on-failure -V
