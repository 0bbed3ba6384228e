#!/usr/bin/env bash
# On the GPU machine (from the project root, with .gpu/ carried): build for sm_90, run every
# suite including the large cases, then compute-sanitizer (memcheck and racecheck) on a
# reduced run: the GPU shape, strategy, example and stream suites (not the full matrix). Logs go to $OUT (or ./gpu-logs); a short summary is printed last.
#   source .gpu/env.sh && scripts/gpu_check.sh [--no-sanitizer]
set -uo pipefail
out=${OUT:-gpu-logs}
mkdir -p "$out"
build=build-gpu
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv,noheader > "$out/gpu.txt" 2>&1
if ! { cmake -S . -B $build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DTSCAN_WERROR=ON &&
       cmake --build $build -j"$(nproc)"; } > "$out/build.log" 2>&1; then
  grep -E "error|Error" -A4 "$out/build.log" | head -60
  exit 1
fi
summary=()
TSCAN_TEST_LARGE=1 "$build/tests/tscan_tests" -j4 > "$out/tests.log" 2>&1
summary+=("tests (large on): rc=$? $(grep -a 'Synthesis' "$out/tests.log" | tail -1)")
for c in contract_c contract_cpp; do
  "$build/tests/tscan_$c" > "$out/$c.log" 2>&1
  summary+=("$c: rc=$? $(grep -a 'Synthesis' "$out/$c.log" | tail -1)")
done
if [ "${1:-}" != "--no-sanitizer" ]; then
  for tool in memcheck racecheck; do
    compute-sanitizer --tool $tool --target-processes all --error-exitcode 3 \
      "$build/tests/tscan_tests" --filter 'gpu_[se]*/*' -j1 > "$out/sanitizer-$tool.log" 2>&1
    summary+=("compute-sanitizer $tool: rc=$? $(grep -a -E 'ERROR SUMMARY' "$out/sanitizer-$tool.log" | sort | uniq -c | tr '\n' ' ')")
  done
fi
grep -a -E '\[(FAIL|----)\]' "$out/tests.log" | head -40
cat "$out/gpu.txt"
printf '%s\n' "${summary[@]}"
