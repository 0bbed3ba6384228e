#!/usr/bin/env bash
# On the GPU machine (from the project root, with .gpu/ carried): scripts/gpu_check.sh --quick,
# then the default benchmark sweep and the peers on the increasing inclusive float32/float16
# cases and the ladder. Six files go to $OUT (the device tool brings back at most eight):
# build.log, check.log, sweep.txt, tscan-h100.json, peers.txt, peers-h100.json.
# The tree arrives without .git: scripts/stage_gpu.sh writes the commit and dirty flag into
# .gpubin/ (or write them into .gpu/commit and .gpu/dirty), and the reports carry them
# (TSCAN_GIT_COMMIT, TSCAN_GIT_DIRTY). TSCAN_PREBUILT=DIR runs the programs staged there.
#   source .gpu/env.sh && [TSCAN_PREBUILT=.gpubin] scripts/gpu_results.sh
set -uo pipefail
meta=${TSCAN_PREBUILT:-.gpu}
[ -f "$meta/commit" ] && export TSCAN_GIT_COMMIT=$(cat "$meta/commit") TSCAN_GIT_DIRTY=$(cat "$meta/dirty" 2>/dev/null)
out=${OUT:-gpu-logs}
if [ -n "${TSCAN_PREBUILT:-}" ]; then
  bench=$TSCAN_PREBUILT/tscan-bench
  export LD_LIBRARY_PATH="$(cd "$TSCAN_PREBUILT" && pwd):${LD_LIBRARY_PATH:-}"
else
  bench=build-gpu/bench/tscan-bench
fi
scripts/gpu_check.sh --quick || exit 1
timeout 240 "$bench" --output "$out/tscan-h100.json" > "$out/sweep.txt" 2>&1
echo "sweep: rc=$? $(grep -a 'cases:' "$out/sweep.txt" | tail -1)"
"$bench" --list --algo auto --dtype float32,float16 --direction increasing --exclusive no \
  --output /tmp/peer-cases.json > /dev/null
timeout 200 python3 bench/peers.py --cases /tmp/peer-cases.json --output "$out/peers-h100.json" \
  > "$out/peers.txt" 2>&1
echo "peers: rc=$? (the report is rewritten after every case: a run cut short keeps what it timed)"
