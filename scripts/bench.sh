#!/usr/bin/env bash
# The benchmark from a fresh checkout: installs what is missing (scripts/deps.sh),
# configures and builds Release, and runs tscan-bench's default sweep, writing the report to
# the given path or results/bench-<host>-<date>.json. Without a GPU the driver says so and runs
# its reference sweep instead. Further arguments go to tscan-bench.
#   scripts/bench.sh [REPORT.json] [tscan-bench flags...]
# BUILD_DIR (default build-release) and JOBS (default: all cores) can be set in the environment.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build-release}
jobs=${JOBS:-$(nproc)}
report=""
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
  report=$1
  shift
fi
if [ -z "$report" ]; then
  mkdir -p "$root/results"
  report="$root/results/bench-$(hostname -s)-$(date -u +%Y%m%dT%H%M%SZ).json"
fi

"$root/scripts/deps.sh"
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "bench.sh: no GPU found: tscan-bench will run its reference sweep on the host" >&2
fi

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DTSCAN_BUILD_TESTS=OFF -DTSCAN_BUILD_BENCH=ON
cmake --build "$build" -j"$jobs" --target tscan-bench
mkdir -p "$(dirname "$report")"
status=0
"$build/bench/tscan-bench" --output "$report" "$@" || status=$?
echo "bench.sh: report: $report (tscan-bench exit status $status)" >&2
exit $status
