set -u
export LD_LIBRARY_PATH=$PWD/.gpubin:$LD_LIBRARY_PATH
B=.gpubin/tscan-bench
which ncu || ls /usr/local/cuda/bin | grep -i ncu
for spec in "256x1048576 1 packed" "1048576x256 0 packed" "16384x16384 1 transposed" "16384x16384 0 packed"; do
  set -- $spec
  timeout 120 ncu -k regex:lookback_kernel --launch-skip 2 --launch-count 1 --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats \
    $B --backend gpu --shape $1 --axis $2 --layout $3 --algo lookback --dtype float32 --op sum --direction increasing --exclusive no --min-samples 2 --warmup 0 --time-limit 5 --max-noise 50 --output /tmp/p.json > $OUT/ncu-$1-$2-$3.txt 2>&1
  echo "== $spec rc=$?"
  grep -a -E "Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Theoretical Occupancy|Stall|Warp Cycles Per Issued|Block Limit Registers|Block Limit Shared" $OUT/ncu-$1-$2-$3.txt | head -14
done
