#!/usr/bin/env bash
# On the GPU machine (from the project root, with .gpu/ carried): build, run the GPU suites
# (large cases left to scripts/gpu_check.sh), racecheck a few small shapes of every
# strategy, then the default benchmark sweep and the peers on the increasing inclusive
# float32/float16 cases and the ladder. Everything goes to $OUT (seven files: the device
# tool brings back at most eight); a summary is printed last.
#   source .gpu/env.sh && scripts/gpu_results.sh
set -uo pipefail
out=${OUT:-gpu-logs}
mkdir -p "$out"
build=build-gpu
bench=$build/bench/tscan-bench
if ! { cmake -S . -B $build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DTSCAN_WERROR=ON &&
       cmake --build $build -j"$(nproc)"; } > "$out/build.log" 2>&1; then
  grep -E "error|Error" -A4 "$out/build.log" | head -60
  exit 1
fi
summary=()
timeout 120 "$build/tests/tscan_tests" -j8 > "$out/tests.log" 2>&1
summary+=("tests: rc=$? $(grep -a 'Synthesis' "$out/tests.log" | tail -1)")
timeout 100 compute-sanitizer --tool racecheck --error-exitcode 3 "$bench" --backend gpu \
  --shape 3000x200 --axis 0 --shape 300x20000 --axis 1 --shape 20000x100 --axis 1 --shape 70000 --axis 0 \
  --algo all --dtype float32,float64,int8 --min-samples 2 --warmup 0 --time-limit 0.01 \
  > "$out/racecheck.log" 2>&1
summary+=("racecheck: rc=$? $(grep -a -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/racecheck.log" | sort | uniq -c | tr '\n' ' ')")
timeout 240 "$bench" --output "$out/tscan-h100.json" > "$out/sweep.txt" 2> "$out/sweep.err"
summary+=("sweep: rc=$? $(tail -2 "$out/sweep.err" | head -1)")
"$bench" --list --algo auto --dtype float32,float16 --direction increasing --exclusive no \
  --output /tmp/peer-cases.json > /dev/null
timeout 200 python3 bench/peers.py --cases /tmp/peer-cases.json --output "$out/peers-h100.json" \
  > "$out/peers.txt" 2>&1
summary+=("peers: rc=$? $(tail -1 "$out/peers.txt")")
grep -a -E '\[(FAIL|----)\]' "$out/tests.log" | head -20
printf '%s\n' "${summary[@]}"
