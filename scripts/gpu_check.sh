#!/usr/bin/env bash
# On the GPU machine (from the project root, with .gpu/ carried): build for sm_90, run every
# suite including the large cases, compute-sanitizer memcheck on the GPU shape, strategy,
# example and stream suites, and racecheck on small shapes of every strategy (racecheck is
# too slow for whole suites). Logs go to $OUT (or ./gpu-logs) as build.log and check.log, few
# files because the device tool brings back at most eight; a summary is printed last.
#   source .gpu/env.sh && scripts/gpu_check.sh [--quick]    # --quick: no large cases, no memcheck
set -uo pipefail
out=${OUT:-gpu-logs}
mkdir -p "$out"
log=$out/check.log
build=build-gpu
quick=${1:-}
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv,noheader > "$log" 2>&1
if ! { cmake -S . -B $build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DTSCAN_WERROR=ON &&
       cmake --build $build -j"$(nproc)"; } > "$out/build.log" 2>&1; then
  grep -E "error|Error" -A4 "$out/build.log" | head -60
  exit 1
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
  step tests "$build/tests/tscan_tests" -j8
else
  step tests-large env TSCAN_TEST_LARGE=1 "$build/tests/tscan_tests" -j4
fi
step contract-c "$build/tests/tscan_contract_c"
step contract-cpp "$build/tests/tscan_contract_cpp"
if [ "$quick" != "--quick" ]; then
  step memcheck compute-sanitizer --tool memcheck --target-processes all --error-exitcode 3 \
    "$build/tests/tscan_tests" --filter 'gpu_[se]*/*' -j1
fi
step racecheck timeout 150 compute-sanitizer --tool racecheck --error-exitcode 3 "$build/bench/tscan-bench" \
  --backend gpu --shape 3000x200 --axis 0 --shape 300x20000 --axis 1 --shape 20000x100 --axis 1 \
  --shape 70000 --axis 0 --algo all --dtype float32,float64,int8 --min-samples 2 --warmup 0 --time-limit 0.01
grep -a -E '\[(FAIL|----)\]' "$log" | head -40
printf '%s\n' "${summary[@]}"
