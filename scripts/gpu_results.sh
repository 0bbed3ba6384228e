#!/usr/bin/env bash
# On the GPU machine (from the project root, with .gpu/ carried): the reports of results/,
# named for the GPU (h100, h200, ...). Each step is named on the command line, so that one
# device call of at most 10 minutes takes what fits:
#   check        scripts/gpu_check.sh --quick (every suite, the stress suite included)
#   sweep        the default sweep                      -> tscan-GPU.json, sweep.txt
#   random N     N cases drawn from seed 1 (--random)   -> random-GPU.json, random.txt
#   peers        PyTorch and CuPy on the float32/float16 increasing inclusive cases -> peers-GPU.json
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
