#!/usr/bin/env bash
# Here, before a GPU run: builds for sm_90 (build-gpu) with the same CUDA as the GPU machine
# and copies the library, the test programs and the benchmark into .gpubin/ (git-excluded),
# so that the GPU machine spends its time running rather than compiling. Then call the device
# with carry [".gpu", ".gpubin"] and TSCAN_PREBUILT=.gpubin before scripts/gpu_check.sh or
# scripts/gpu_results.sh. Also writes the commit and dirty flag for the reports.
set -euo pipefail
cd "$(dirname "$0")/.."
grep -qxF '/.gpubin/' .git/info/exclude 2>/dev/null || echo '/.gpubin/' >> .git/info/exclude
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DTSCAN_WERROR=ON > /dev/null
cmake --build build-gpu -j"$(nproc)" > /dev/null
rm -rf .gpubin && mkdir -p .gpubin
cp -P build-gpu/libtscan.so* build-gpu/tests/tscan_tests build-gpu/tests/tscan_contract_c \
  build-gpu/tests/tscan_contract_cpp build-gpu/bench/tscan-bench .gpubin/
git rev-parse HEAD > .gpubin/commit
git diff --quiet HEAD && echo 0 > .gpubin/dirty || echo 1 > .gpubin/dirty
# For commands run there by hand (a tscan-bench ab, a sweep): `source .gpubin/env.sh` puts the
# staged library first and names its commit in the reports. Without it tscan-bench asks git,
# and the copied tree can hold a stale .git (the A/B reports of cf78589's round named 98dad4d).
cat > .gpubin/env.sh <<'ENV'
staged=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export LD_LIBRARY_PATH="$staged:${LD_LIBRARY_PATH:-}"
export TSCAN_GIT_COMMIT=$(cat "$staged/commit") TSCAN_GIT_DIRTY=$(cat "$staged/dirty")
ENV
du -sh .gpubin | cut -f1 | xargs echo "staged .gpubin:"
