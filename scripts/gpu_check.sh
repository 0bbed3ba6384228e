#!/usr/bin/env bash
# On the GPU machine (from the project root, with .gpu/ carried): build for sm_90, run every
# suite including the large cases, compute-sanitizer memcheck on the GPU shape, strategy,
# example and stream suites, and racecheck on small shapes of every strategy (racecheck is
# too slow for whole suites). Logs go to $OUT (or ./gpu-logs) as build.log and check.log, few
# files because the device tool brings back at most eight; a summary is printed last.
#   source .gpu/env.sh && scripts/gpu_check.sh [--quick]    # --quick: no large cases, no memcheck
# With TSCAN_PREBUILT=DIR (scripts/stage_gpu.sh fills .gpubin/), the programs in DIR run and
# nothing is built here.
set -uo pipefail
out=${OUT:-gpu-logs}
mkdir -p "$out"
log=$out/check.log
quick=${1:-}
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv,noheader > "$log" 2>&1
if [ -n "${TSCAN_PREBUILT:-}" ]; then
  bin=$TSCAN_PREBUILT tests=$TSCAN_PREBUILT bench=$TSCAN_PREBUILT/tscan-bench
  export LD_LIBRARY_PATH="$(cd "$bin" && pwd):${LD_LIBRARY_PATH:-}"
  echo "prebuilt programs from $bin (commit $(cat "$bin/commit" 2>/dev/null), dirty $(cat "$bin/dirty" 2>/dev/null))" > "$out/build.log"
else
  tests=build-gpu/tests bench=build-gpu/bench/tscan-bench
  if ! { cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DTSCAN_WERROR=ON &&
         cmake --build build-gpu -j"$(nproc)"; } > "$out/build.log" 2>&1; then
    grep -E "error|Error" -A4 "$out/build.log" | head -60
    exit 1
  fi
fi
summary=()
step() {  # step NAME COMMAND...: runs it, appends its output to the log, records a summary line
  local name=$1
  shift
  echo "==== $name" >> "$log"
  "$@" >> "$log" 2>&1
  local rc=$?
  summary+=("$name: rc=$rc $(sed -n '/^==== '"$name"'$/,$p' "$log" | grep -a -E 'Synthesis|ERROR SUMMARY|RACECHECK SUMMARY' | sort | uniq -c | tr '\n' ' ')")
}
if [ "$quick" = "--quick" ]; then
  step tests "$tests/tscan_tests" -j8
else
  step tests-large env TSCAN_TEST_LARGE=1 "$tests/tscan_tests" -j4
  # The stress suite once more on a GPU it has to itself (above, it shares it with other suites).
  step stress "$tests/tscan_tests" --filter 'gpu_stress/*' -j1
fi
step contract-c "$tests/tscan_contract_c"
step contract-cpp "$tests/tscan_contract_cpp"
if [ "$quick" != "--quick" ]; then
  step memcheck compute-sanitizer --tool memcheck --target-processes all --error-exitcode 3 \
    "$tests/tscan_tests" --filter 'gpu_[se]*/*' -j1
fi
step racecheck timeout 150 compute-sanitizer --tool racecheck --error-exitcode 3 "$bench" \
  --backend gpu --shape 3000x200 --axis 0 --shape 300x20000 --axis 1 --shape 20000x100 --axis 1 \
  --shape 70000 --axis 0 --shape 300x2000x12 --axis 1 --shape 600x1500 --axis 1 --shape 2000x600 --axis 1 --layout transposed --algo all --dtype float32,float64,int8 --min-samples 2 --warmup 0 --time-limit 0.01
# Stream's halos near the stream's two ends (lines of a few hundred to 3001 elements over two
# or three tiles, whose last bytes are off the 16-byte grid), both directions: a halo vector
# read past either end of the buffers would be out of bounds.
step memcheck-halos timeout 150 compute-sanitizer --tool memcheck --error-exitcode 3 "$bench" \
  --backend gpu --shape 7x3001 --axis 1 --shape 11x777 --axis 1 --shape 9x1999 --axis 1 --shape 13x1000 --axis 1 \
  --algo stream --dtype int8,float32,float16,float64 --op all --direction both --exclusive both --min-samples 2 \
  --warmup 0 --time-limit 0.01
# Columns' staged form (tiles of a permuted input through shared memory): permuted inputs only
# reach it, and they need strides a sweep file gives; a case takes tens of ms under racecheck.
step racecheck-staged timeout 150 compute-sanitizer --tool racecheck --error-exitcode 3 "$bench" \
  --backend gpu --sweep bench/sweeps/race_permuted.json --min-samples 2 --warmup 0 --time-limit 2
# The gather of a permuted input (tiles through shared memory) runs under AUTO from 4 MiB of
# output: one such shape, 1- and 8-byte elements.
step racecheck-gather timeout 150 compute-sanitizer --tool racecheck --error-exitcode 3 "$bench" \
  --backend gpu --sweep bench/sweeps/race_gather.json --min-samples 2 --warmup 0 --time-limit 2
# Wider outputs: columns' widened vectors stage each warp's outputs in shared memory; lookback's
# line chunks of input words (a line of whole words and one in part).
step racecheck-wider timeout 150 compute-sanitizer --tool racecheck --error-exitcode 3 "$bench" \
  --backend gpu --shape 2x600000 --axis 0 --shape 300x2000x12 --axis 1 --shape 300x4000 --axis 1 --shape 100003 --axis 0 \
  --algo columns,lookback \
  --dtype uint8,int16 --output-dtype int32 --min-samples 2 --warmup 0 --time-limit 0.01
grep -a -E '\[(FAIL|----)\]' "$log" | head -40
printf '%s\n' "${summary[@]}"
