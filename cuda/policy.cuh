// policy.cuh - the kernels' compile-time tuning in one table: a struct per architecture, and the
// one every strategy builds with (kernel_policy). Each value's reason stays beside the code that
// uses it; the measurements are in bench/NOTES.md §3. AUTO's run-time thresholds are the other
// table (src/policy.c). All values were measured on an H100 (sm_90), and every architecture the
// build targets uses them: there is one set. A part measured otherwise gets a struct of its
// own here, chosen by __CUDA_ARCH__ in device code and by the device's compute capability where
// the host sizes a launch.
#pragma once

#include <cstdint>

namespace tscan {

struct sm90_policy {
    // rows (cuda/rows.cu)
    static constexpr int rows_block_threads = 256;
    static constexpr int64_t rows_warp_min_lines_per_sm = 32;  // a warp a line from this many lines an SM
    static constexpr int64_t rows_max_blocks_per_sm = 32;      // waves of blocks before a grid-stride loop
    // columns (cuda/columns.cu)
    static constexpr int columns_threads = 256;
    static constexpr int columns_long_unroll = 16;             // rows in registers before any is scanned
    static constexpr int columns_short_unroll = 4;             // ... for an axis of a few elements
    static constexpr int64_t columns_max_blocks_per_sm = 32;
    static constexpr int64_t columns_min_vector_threads = 16384;  // 16 bytes a thread only above this
    // cub_device (cuda/cub_device.cu)
    static constexpr int64_t cub_device_max_lines = 4096;      // one CUB call a line, up to this many
    // lookback (cuda/lookback/)
    static constexpr int lookback_threads = 256;               // data threads a block; 128 bytes each a tile
    static constexpr int one_wave_threads = 256;
    static constexpr int one_wave_vectors = 4;                 // 16-byte vectors a thread
    static constexpr int one_wave_reads = 4;                   // predecessor statuses a thread reads
    // lookback's bulk line chunks (cuda/lookback/bulk_kernel.cuh): a ring of tile buffers a block,
    // filled by bulk copies; an H200 needs about 40 % more bytes in flight than an H100
    static constexpr int bulk_tile_bytes = 32768;               // a tile, as the tile kernel's
    static constexpr int bulk_stages = 3;                       // tile buffers a block
    static constexpr int bulk_pieces = 4;                       // bulk copies a tile, each on its own mbarrier
    static constexpr int bulk_blocks_per_sm = 2;                // 2 x 3 x 32 KB of buffers an SM
    static constexpr int bulk_min_tiles_per_block = 8;          // fewer: the ring's fill outweighs it (tile kernel)
    // stream (cuda/stream/)
    static constexpr int stream_threads = 256;
    static constexpr int stream_vectors = 4;                   // 16-byte input vectors a thread: 16 KB tiles
    static constexpr int stream_blocks_per_sm = 6;             // the segment form's occupancy (registers: 40)
    static constexpr int stream_halo_vectors = 2;              // 16-byte vectors a thread reads of its tile's halo
    static constexpr int stream_max_lanes = 64;                // the lanes form's widest inner extent
    static constexpr unsigned stream_backoff_ns = 64;          // a look-back thread's pause between reads of a status
    static constexpr int64_t lanes_tile_bytes = 32768;         // the lanes form's tile buffers
    static constexpr int64_t lanes_wide_tile_bytes = 65536;    // ... on long lines of wide statuses
    static constexpr int lanes_wide_status_words = 16;         // a tile's status parts that make long lines wide
    static constexpr int lanes_wide_min_tiles = 4;             // ... and plain tiles a line runs over, more than
    // copies of broadcast lines (cuda/replicate.cu)
    static constexpr int replicate_threads = 256;
    static constexpr int64_t replicate_blocks_per_sm = 8;      // resident blocks before a grid-stride loop
    // the gather of permuted inputs (cuda/gather.cu)
    static constexpr int gather_threads = 256;
    static constexpr int gather_blocks_per_sm = 4;              // resident blocks before a grid-stride loop
    static constexpr int gather_tile_bytes = 16384;             // a tile's elements in shared memory
    static constexpr int gather_max_side = 512;                 // elements of U or V a tile, at most
};

using kernel_policy = sm90_policy;

}  // namespace tscan
