#!/usr/bin/env bash
# On the GPU machine (from the project root, with .gpu/ carried): the reports of results/,
# named for the GPU (h100, h200, ...). Each step is named on the command line, so that one
# device call of at most 10 minutes takes what fits:
#   check        scripts/gpu_check.sh --quick (every suite, the stress suite included)
#   sweep        the default sweep                      -> tscan-GPU.json, sweep.txt
#   random N     N shapes drawn from seed 1 (--random), each under AUTO and every strategy: 6 N
#                cases (60: about 90 s; 360 outlasts the step's 420 s) -> random-GPU.json, random.txt
#   peers        PyTorch and CuPy on the float32/float16 increasing inclusive cases -> peers-GPU.json
#   contiguous   every strategy that takes a contiguous axis on 13 shapes of it (1-D, rows short
#                and long, odd lengths), four dtypes, and uint8 into int32 -> contiguous-GPU.json
#   lanes        strided axes of inner extent 3 to 33 (stream's lanes form against columns and
#                lookback), four dtypes -> lanes-GPU.json
# With no step named: check, sweep and peers. Files go to $OUT (the device tool brings back at
# most eight). The tree arrives without .git: scripts/stage_gpu.sh writes the commit and dirty
# flag into .gpubin/ (or write them into .gpu/commit and .gpu/dirty), and the reports carry them
# (TSCAN_GIT_COMMIT, TSCAN_GIT_DIRTY). TSCAN_PREBUILT=DIR runs the programs staged there.
#   source .gpu/env.sh && [TSCAN_PREBUILT=.gpubin] scripts/gpu_results.sh [check] [sweep] [random N] [peers]
set -uo pipefail
meta=${TSCAN_PREBUILT:-.gpu}
[ -f "$meta/commit" ] && export TSCAN_GIT_COMMIT=$(cat "$meta/commit") TSCAN_GIT_DIRTY=$(cat "$meta/dirty" 2>/dev/null)
out=${OUT:-gpu-logs}
mkdir -p "$out"
if [ -n "${TSCAN_PREBUILT:-}" ]; then
  bench=$TSCAN_PREBUILT/tscan-bench
  export LD_LIBRARY_PATH="$(cd "$TSCAN_PREBUILT" && pwd):${LD_LIBRARY_PATH:-}"
else
  bench=build-gpu/bench/tscan-bench
fi
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -oiE '[A-Z][0-9]{2,3}' | head -1 | tr 'A-Z' 'a-z')
gpu=${gpu:-gpu}
[ $# -eq 0 ] && set -- check sweep peers
while [ $# -gt 0 ]; do
  case $1 in
  check) scripts/gpu_check.sh --quick || exit 1 ;;
  sweep)
    timeout 240 "$bench" --output "$out/tscan-$gpu.json" > "$out/sweep.txt" 2>&1
    echo "sweep: rc=$? $(grep -a 'cases:' "$out/sweep.txt" | tail -1)" ;;
  random)
    shift
    timeout 420 "$bench" --random "$1" --seed 1 --output "$out/random-$gpu.json" > "$out/random.txt" 2>&1
    echo "random: rc=$? $(grep -a 'cases:' "$out/random.txt" | tail -1)" ;;
  contiguous)
    shapes="--shape 268435456 --axis 0 --shape 421672517 --axis 0 --shape 16384x16384 --axis 1 \
      --shape 4194304x64 --axis 1 --shape 1048576x256 --axis 1 --shape 256x1048576 --axis 1 --shape 47340575x7 --axis 1 \
      --shape 304x11x21957x4 --axis 3 --shape 15x16237291 --axis 1 --shape 1048576 --axis 0 --shape 3000x70001 --axis 1 \
      --shape 8x16x1000003 --axis 2 --shape 65536x4096 --axis 1"
    timeout 300 "$bench" $shapes --algo auto,stream,lookback,rows,cub_device --dtype float32,float16,int8,float64 \
      --op sum --direction increasing --exclusive no --min-samples 5 --time-limit 0.1 \
      --output "$out/contiguous-$gpu.json" > "$out/contiguous.txt" 2>&1
    echo "contiguous: rc=$? $(grep -a 'cases:' "$out/contiguous.txt" | tail -1)"
    timeout 100 "$bench" --shape 268435456 --axis 0 --shape 47340575x7 --axis 1 --shape 4194304x64 --axis 1 \
      --algo auto,stream --dtype uint8 --output-dtype int32 --direction both --exclusive both --min-samples 5 \
      --time-limit 0.1 --output "$out/contiguous-wider-$gpu.json" > "$out/contiguous-wider.txt" 2>&1
    echo "contiguous wider: rc=$? $(grep -a 'cases:' "$out/contiguous-wider.txt" | tail -1)" ;;
  lanes)
    shapes="--shape 10027606x12 --axis 0 --shape 4068424x8 --axis 0 --shape 2x14505x9x18x10x4 --axis 4 \
      --shape 33554432x3 --axis 0 --shape 65536x64x16 --axis 1 --shape 8192x1024x33 --axis 1"
    timeout 200 "$bench" $shapes --algo auto,stream,columns,lookback --dtype float32,float16,int8,float64 \
      --op sum --direction increasing --exclusive no --min-samples 5 --time-limit 0.1 \
      --output "$out/lanes-$gpu.json" > "$out/lanes.txt" 2>&1
    echo "lanes: rc=$? $(grep -a 'cases:' "$out/lanes.txt" | tail -1)" ;;
  peers)
    "$bench" --list --algo auto --dtype float32,float16 --direction increasing --exclusive no \
      --output /tmp/peer-cases.json > /dev/null
    timeout 200 python3 bench/peers.py --cases /tmp/peer-cases.json --output "$out/peers-$gpu.json" \
      > "$out/peers.txt" 2>&1
    echo "peers: rc=$? (the report is rewritten after every case: a run cut short keeps what it timed)" ;;
  *) echo "gpu_results.sh: unknown step $1" >&2; exit 2 ;;
  esac
  shift
done
