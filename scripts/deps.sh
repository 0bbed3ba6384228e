#!/usr/bin/env bash
# Installs what building tscan needs, when it is missing: CMake, pkg-config, cJSON and
# Criterion from Debian's packages; with `--tests`, also the Python packages that the
# benchmark's tests use. Needs root (or sudo) only when something is missing. CUDA's compiler
# must already be installed (/usr/local/cuda/bin/nvcc or nvcc on PATH).
#   scripts/deps.sh [--tests]
set -euo pipefail

have_all() {
  command -v cmake >/dev/null && command -v pkg-config >/dev/null && pkg-config --exists libcjson &&
    echo '#include <criterion/criterion.h>' | cc -E -x c - >/dev/null 2>&1
}
if ! have_all; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq cmake pkg-config libcjson-dev libcriterion-dev >/dev/null
fi
if [ "${1:-}" = "--tests" ] && ! python3 -c 'import jsonschema, numpy' 2>/dev/null; then
  python3 -m pip install -q jsonschema numpy
fi
if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "deps.sh: CUDA's compiler (nvcc) was not found; install the CUDA toolkit first" >&2
  exit 1
fi
