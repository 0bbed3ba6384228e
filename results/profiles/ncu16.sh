#!/usr/bin/env bash
# Nsight Compute: float32 line chunk (256x2^20 along axis 1), 8-byte slots (.gpubin, cded524) vs 16-byte (.xp/N16)
set -u
source .gpu/env.sh
export PATH=/usr/local/cuda/bin:$PATH
for v in gpubin:.gpubin N16:.xp/N16; do
  name=${v%%:*}; dir=${v#*:}
  LD_LIBRARY_PATH=$PWD/$dir:$PWD/.gpubin:$LD_LIBRARY_PATH timeout 200 ncu --clock-control none -k regex:lookback_kernel --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section WarpStateStats --section Occupancy --section LaunchStats --section SchedulerStats --section InstructionStats \
    .gpubin/tscan-bench --backend gpu --shape 256x1048576 --axis 1 --algo lookback --dtype float32 --op sum --direction increasing --exclusive no --min-samples 2 --warmup 0 --time-limit 5 --max-noise 50 --output /tmp/p.json > $OUT/ncu-$name.txt 2>&1
  echo "== $name rc=$?"
  grep -a -E "Duration|DRAM Throughput|L1/TEX Hit|L2 Hit|Mem Busy|Max Bandwidth|Achieved Occupancy|Registers Per|Warp Cycles Per Issued|Issued Ipc|Executed Instructions  |Stall|Shared Memory|Bank" $OUT/ncu-$name.txt | head -30
done
