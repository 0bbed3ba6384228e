#!/usr/bin/env bash
# On the GPU machine (from the project root, with .gpu/ carried): scripts/gpu_check.sh --quick,
# then the default benchmark sweep and the peers on the increasing inclusive float32/float16
# cases and the ladder. Six files go to $OUT (the device tool brings back at most eight):
# build.log, check.log, sweep.txt, tscan-h100.json, peers.txt, peers-h100.json.
# The tree arrives without .git: write the commit first, here, with
#   git rev-parse HEAD > .gpu/commit; git diff --quiet HEAD && echo 0 > .gpu/dirty || echo 1 > .gpu/dirty
# and the reports carry it (TSCAN_GIT_COMMIT, TSCAN_GIT_DIRTY).
#   source .gpu/env.sh && scripts/gpu_results.sh
set -uo pipefail
[ -f .gpu/commit ] && export TSCAN_GIT_COMMIT=$(cat .gpu/commit) TSCAN_GIT_DIRTY=$(cat .gpu/dirty 2>/dev/null)
out=${OUT:-gpu-logs}
bench=build-gpu/bench/tscan-bench
scripts/gpu_check.sh --quick || exit 1
timeout 240 "$bench" --output "$out/tscan-h100.json" > "$out/sweep.txt" 2>&1
echo "sweep: rc=$? $(grep -a 'cases:' "$out/sweep.txt" | tail -1)"
"$bench" --list --algo auto --dtype float32,float16 --direction increasing --exclusive no \
  --output /tmp/peer-cases.json > /dev/null
timeout 200 python3 bench/peers.py --cases /tmp/peer-cases.json --output "$out/peers-h100.json" \
  > "$out/peers.txt" 2>&1
echo "peers: rc=$? (the report is rewritten after every case: a run cut short keeps what it timed)"
