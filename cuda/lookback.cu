// lookback.cu - TSCAN_ALGO_LOOKBACK: a single-pass scan that splits the axis across blocks.
//
// A tile is `cols` consecutive lines by a chunk of `rows` consecutive elements of the axis.
// Each group of `cols` lines is a chain of tiles along the axis; a tile finds the scan of
// everything before it in its chain by decoupled look-back over its predecessors' published
// aggregates and inclusive prefixes, so the data is read once and written once.
//
//   - Strided axis with 16 lines or more: cols = 32 lines, one per lane, by 256 rows (128
//     for 8-byte accumulators). A warp loads its own rows straight into registers, every
//     load coalesced across neighbouring lines.
//   - Contiguous axis, or fewer lines: cols = 1, a tile is a chunk of 8192 (4096) elements
//     of one line. Loads and stores are striped across the block (coalesced along the line)
//     and transposed through shared memory so that each thread scans consecutive elements.
//
// Blocks are persistent and claim tiles in order from an atomic counter, chunk-major (all
// chains advance together), so a tile's predecessors were claimed earlier by running blocks:
// forward progress needs no co-residency. For 4- and 8-byte elements a block is pipelined: a
// warp of its own looks back while the others load the next tile (see lookback_kernel). The
// workspace is the counter, one status flag per tile that has a successor, and two value
// arrays; the counter and flags are cleared on the stream every call.
#include <cuda/atomic>
#include <cuda/barrier>

#include <cstdlib>

#include "common.cuh"

namespace tscan {
namespace {

constexpr int kThreads = 256;          // data threads of a block: they load, scan and store
constexpr int kWarps = kThreads / 32;  // data warps

// Pipelined blocks (4- and 8-byte elements): 8 data warps and a warp that looks back, with two
// tile buffers, so that the next tile loads while the current one looks back. Two buffers of
// 33 KB fit three blocks in an SM's shared memory; 288 threads x 3 leave 72 registers a thread.
// Serial blocks (1- and 2-byte elements): 8 warps, one buffer, warp 0 looks back while the
// others wait; 4 blocks an SM (64 registers). Measured on an H200 (bench/NOTES.md): pipelining
// took float32 medium_cols from 52 to 70 % of the copy, and float16 square_cols from 43 down to
// 31: a 2-byte load moves too little for 3 blocks' loads to cover the memory latency.
template <class T> constexpr bool pipelined() { return sizeof(T) >= 4; }
template <class T> constexpr int block_threads() { return pipelined<T>() ? kThreads + 32 : kThreads; }
template <class T> constexpr int blocks_per_sm() { return pipelined<T>() ? 3 : 4; }
constexpr unsigned kFullMask = 0xffffffffu;
// Look-back window: each step reads the flags of 32 x this many predecessors at once (one per
// lane and load), then the values of those it needs, so one step costs two L2 round trips. A
// chain must not advance by more than a window during one step, or the look-back falls
// behind: 32 tiles for column blocks, 128 for line chunks (one chain for one long line).
template <int Cols> constexpr int flag_loads_per_lane() { return Cols == 1 ? 4 : 1; }

// Elements each thread holds in registers: 32 four-byte or 16 eight-byte accumulators, so a
// tile carries 8192 (4096) elements and the look-back traffic is a few percent of the data.
constexpr int items_per_thread(size_t acc_bytes) { return acc_bytes == 8 ? 16 : 32; }

// Tile status flags. A flag only ever grows, and the value it announces is written before it.
enum tile_flag : uint32_t { kEmpty = 0, kAggregate = 1, kInclusive = 2 };

// The two tile shapes: 32 lines (one per lane) of a strided axis, or a chunk of one line.
enum tile_cols : int { kLineChunk = 1, kColumnBlock = 32 };

// Tile id = chunk * groups + group: chunk-major, so that all chains advance together.
struct tile_layout {
    int64_t rows;    // axis elements per tile: (kThreads / cols) * items per thread
    int64_t groups;  // chains: ceil(lines / cols)
    int64_t chunks;  // tiles per chain: ceil(n / rows)
    int64_t tiles;   // groups * chunks
    // Tiles with a successor in their chain, the only ones that publish a status: the ids
    // below groups * (chunks - 1). A single-chunk problem needs no status at all.
    int64_t status_tiles;
};

template <class A> struct tile_status {
    unsigned long long *counter;  // next tile to claim
    uint32_t *flags;              // [status_tiles]
    A *aggregate;                 // [status_tiles][cols]: the tile's own reduction, per line
    A *inclusive;                 // [status_tiles][cols]: scan of the chain through the tile
};

// Column blocks when the axis is strided and there are lines enough to fill most lanes
// (neighbouring lines are then usually neighbouring addresses); otherwise each line is its
// own chain, read along the axis (coalesced when the axis is contiguous).
inline int tile_cols_for(const tscan_problem *p) {
    const bool contiguous_axis = llabs(p->in_step) <= 1 && llabs(p->out_step) == 1;
    return !contiguous_axis && p->lines >= 16 ? kColumnBlock : kLineChunk;
}

template <class A> tile_layout make_layout(const tscan_problem *p, int cols) {
    tile_layout L;
    L.rows = (int64_t)(kThreads / cols) * items_per_thread(sizeof(A));
    L.groups = (p->lines + cols - 1) / cols;
    L.chunks = (p->n + L.rows - 1) / L.rows;
    L.tiles = L.groups * L.chunks;
    L.status_tiles = L.groups * (L.chunks - 1);
    return L;
}

// Workspace: counter, flags, then the two value arrays, 8-byte aligned. Only the first
// `cleared` bytes need resetting: a value is read only under a flag set after it was written.
struct workspace_plan {
    size_t cleared;
    size_t values;  // offset of the aggregates
    size_t total;
};

template <class A> workspace_plan plan_workspace(const tile_layout &L, int cols) {
    workspace_plan w;
    w.cleared = sizeof(unsigned long long) + (size_t)L.status_tiles * sizeof(uint32_t);
    w.values = (w.cleared + 7) & ~(size_t)7;
    w.total = w.values + 2 * (size_t)L.status_tiles * (size_t)cols * sizeof(A);
    return w;
}

template <class V> __device__ __forceinline__ V load_relaxed(V &x) {
    return cuda::atomic_ref<V, cuda::thread_scope_device>(x).load(cuda::memory_order_relaxed);
}

// One warp sets a tile's status: lane l < Cols writes line l's value, then lane 0 the flag.
// The last tile of a chain publishes nothing: no one reads it.
template <int Cols, class A>
__device__ void publish_status(const tile_layout &L, const tile_status<A> &st, int64_t tile, A *values, A value,
                               tile_flag state) {
    if (tile >= L.status_tiles) return;
    const int lane = threadIdx.x % 32;
    // Release: the lanes' values are written before the flag that announces them (the warp
    // barrier orders them before lane 0's release store).
    if (lane < Cols) values[tile * Cols + lane] = value;
    __syncwarp();
    if (lane == 0)
        cuda::atomic_ref<uint32_t, cuda::thread_scope_device>(st.flags[tile]).store(state, cuda::memory_order_release);
}

// A tile's per-line reduction, published as soon as its data is in: the aggregate, or for the
// chain's first tile the inclusive prefix op(start, aggregate) at once.
template <int Cols, class A>
__device__ void publish_aggregate(const tile_layout &L, const tile_status<A> &st, const scan_op<A> &op, int64_t tile,
                                  A start, A aggregate) {
    if (tile < L.groups) /* chunk 0 */ publish_status<Cols>(L, st, tile, st.inclusive, op(start, aggregate), kInclusive);
    else publish_status<Cols>(L, st, tile, st.aggregate, aggregate, kAggregate);
}

// The look-back warp: the exclusive prefix of a tile whose aggregate is published, found over
// its chain's predecessors; then publishes the tile's inclusive prefix. Lane l serves line
// l % Cols. The chain's first tile starts from `start` (op.start); every other reduction from
// op.neutral(), so that the sign of a zero sum is the reference's.
template <int Cols, class A>
__device__ A look_back(const tile_layout &L, const tile_status<A> &st, const scan_op<A> &op, int64_t tile, A start,
                       A aggregate) {
    constexpr int kFlagLoads = flag_loads_per_lane<Cols>();
    constexpr int kWindowTiles = 32 * kFlagLoads;
    constexpr int kLanesPerCol = 32 / Cols;
    const int lane = threadIdx.x % 32;
    const int col = lane % Cols;
    const int64_t chunk = tile / L.groups, group = tile % L.groups;
    if (chunk == 0) return start;

    // Predecessor o >= 0 of the window is chunk - 1 - (base + o) of the same chain; before
    // chunk 0 an inclusive identity stands in, so the walk ends. Lane l reads the flags of
    // predecessors l + 32 w; the warp shares them through ballots, so every line sees the same
    // statuses and the control flow stays uniform.
    A prefix = op.neutral();
    for (int64_t base = 0;;) {
        unsigned inclusive[kFlagLoads], empty[kFlagLoads];
#pragma unroll
        for (int w = 0; w < kFlagLoads; ++w) {
            const int64_t pred = chunk - 1 - (base + lane + 32 * w);
            const uint32_t f = pred < 0 ? (uint32_t)kInclusive : load_relaxed(st.flags[pred * L.groups + group]);
            inclusive[w] = __ballot_sync(kFullMask, f == kInclusive);
            empty[w] = __ballot_sync(kFullMask, f == kEmpty);
        }
        int first = kWindowTiles;  // the nearest inclusive predecessor in the window, if any
#pragma unroll
        for (int w = kFlagLoads - 1; w >= 0; --w)
            if (inclusive[w]) first = 32 * w + __ffs(inclusive[w]) - 1;
        bool waiting = false;  // a predecessor nearer than `first` has not published yet
#pragma unroll
        for (int w = 0; w < kFlagLoads; ++w) {
            const int nearer = min(max(first - 32 * w, 0), 32);
            waiting |= (empty[w] & (nearer == 32 ? kFullMask : (1u << nearer) - 1)) != 0;
        }
        if (waiting) continue;

        // Acquire: each lane's flag read is ordered before the value loads of every lane
        // (its own fence, then the warp barrier).
        cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device);
        __syncwarp();
        const int64_t real = chunk - base;  // predecessors of the window that exist
        const int count = (int)min((int64_t)min(first + 1, kWindowTiles), real);
        A sum = op.neutral();
#pragma unroll
        for (int w = 0; w < kFlagLoads; ++w) {
            const int end = min(count - 32 * w, 32);
#pragma unroll 8
            for (int o = lane / Cols; o < end; o += kLanesPerCol) {
                const int64_t pred = chunk - 1 - (base + 32 * w + o);
                A *values = (inclusive[w] >> o) & 1 ? st.inclusive : st.aggregate;
                sum = op(sum, load_relaxed(values[(pred * L.groups + group) * Cols + col]));
            }
        }
#pragma unroll
        for (int d = Cols; d < 32; d *= 2) sum = op(sum, __shfl_xor_sync(kFullMask, sum, d));
        prefix = op(sum, prefix);
        if (first < kWindowTiles) break;
        base += kWindowTiles;
    }

    publish_status<Cols>(L, st, tile, st.inclusive, op(prefix, aggregate), kInclusive);
    return prefix;
}

// Shared-memory elements of one tile buffer: the tile, padded one slot per 128 bytes.
template <class A> constexpr int buffer_slots() {
    return kThreads * items_per_thread(sizeof(A)) + kThreads * items_per_thread(sizeof(A)) / (128 / (int)sizeof(A));
}
template <class T, class A> constexpr size_t dynamic_smem_bytes() {
    return (pipelined<T>() ? 2 : 1) * (size_t)buffer_slots<A>() * sizeof(A);
}

// A pipelined block is 8 data warps and one look-back warp, with two tile buffers in shared
// memory. While the look-back warp finds the prefix of the current tile, the data warps claim,
// load, scan and publish the next one into the other buffer; then they finish the current tile
// (add the prefix, store). So a look-back no longer stops the block's memory traffic, and a
// tile's aggregate is published as soon as its data is in, whatever its predecessors are doing:
// claiming the next tile early delays no chain. (An earlier try, which loaded the next tile in
// the waiting warps but published it only after the current look-back, cost 10-26 points.)
// A serial block (1- and 2-byte elements) runs the same steps one after another, warp 0
// looking back while the other warps wait.
//
// Data thread t serves line group * Cols + t % Cols and the R consecutive rows of slice t / Cols.
// A column block's warp is one slice and loads its rows straight into registers, coalesced
// across lanes. A line chunk is loaded striped across the block (coalesced along the line)
// and transposed through shared memory, padded one slot per 128 bytes so that each thread's
// run of R elements starts on its own bank. Either way the scanned rows wait in their buffer
// until the prefix is known, so that they hold no registers then.
//
// A column block whose output is contiguous along the axis (a transposed input: lines are
// neighbours in the input, rows in the output) stores line by line instead: the finished
// tile goes through shared memory, padded one slot per row of slots so that a warp reads a
// line's rows from distinct banks, and each warp writes a run of one line's rows.
template <tscan_dtype D, int Cols>
__global__ void __launch_bounds__(block_threads<typename dtype_traits<D>::T>(), blocks_per_sm<typename dtype_traits<D>::T>())
    lookback_kernel(scan_args a, tile_layout L, tile_status<typename dtype_traits<D>::A> st) {
    using Traits = dtype_traits<D>;
    using T = typename Traits::T;
    using A = typename Traits::A;
    constexpr int R = items_per_thread(sizeof(A));
    constexpr bool kTransposed = Cols == kLineChunk;
    constexpr int kSlots = 128 / sizeof(A);
    constexpr int kRowStride = kTransposed ? kThreads : 1;  // between a thread's loaded rows
    static_assert(R == kSlots, "a thread's run of rows is one 128-byte row of banks");
    static_assert((R - 1) * (kThreads + 1) + kThreads <= buffer_slots<A>(), "a column block's padded slots fit a buffer");
    const scan_op<A> op{a.prod};
    const int t = threadIdx.x, lane = t % 32, warp = t / 32;
    const int col = t % Cols;
    const bool lookback_warp = warp == kWarps;
    const int first_row = kTransposed ? t : warp * R;
    // Shared-memory slot of the thread's scanned row r, and of the element loaded striped as row i.
    const auto own_slot = [&](int r) { return kTransposed ? t * (R + R / kSlots) + r : r * (kThreads + 1) + t; };
    const auto striped_slot = [&](int i) { return i * (kThreads + kThreads / kSlots) + t + t / kSlots; };

    extern __shared__ __align__(16) unsigned char s_dynamic[];
    A *const s_buffers = reinterpret_cast<A *>(s_dynamic);
    __shared__ long long s_tile[2];           // the tile in each buffer
    __shared__ A s_warp_total[2][kWarps][32];  // per buffer: each slice's total per line
    __shared__ A s_tile_aggregate[2][32];
    __shared__ A s_tile_prefix[2][32];
    __shared__ T *s_line_out[32];  // line-by-line stores: each line's output base
    // The data threads' barrier. Pipelined blocks need one that the look-back warp does not take
    // part in: an mbarrier rather than a named barrier (bar.sync 1, 256), which is as good on
    // the hardware, but which racecheck does not model when a warp stays out of it (it reports
    // hazards on a probe that has none: bench/NOTES.md).
#pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ cuda::barrier<cuda::thread_scope_block> s_data_sync;
    const auto data_barrier = [&] {
        if constexpr (pipelined<T>()) s_data_sync.arrive_and_wait();
        else __syncthreads();
    };

    // Where a data thread's rows of a tile are: its line's base pointers (null past the last
    // line), the first row and how many of its rows exist.
    struct rows_of {
        const T *in;
        T *out;
        int64_t k0;
        int left;
    };
    const auto rows_of_tile = [&](int64_t tile) {
        const int64_t chunk = tile / L.groups, group = tile % L.groups;
        const int64_t line = group * Cols + col;
        rows_of v{nullptr, nullptr, chunk * L.rows + first_row, 0};
        if (line < a.lines) {
            int64_t in_offset, out_offset;
            a.batch.offsets(line, in_offset, out_offset);
            v.in = reinterpret_cast<const T *>(a.in) + in_offset;
            v.out = reinterpret_cast<T *>(a.out) + out_offset;
            // Loaded row i of this thread is axis element k0 + i * kRowStride, present for
            // i * kRowStride < left.
            v.left = (int)min(max(a.n - v.k0, (int64_t)0), L.rows);
        }
        return v;
    };

    // Data warps: load a tile into buffer buf, scan each thread's rows, then the slices' totals
    // per line (within the warp: lanes Cols apart serve the same line; then across warps), and
    // publish the tile's aggregate. Returns the thread's exclusive prefix within its warp.
    const auto stage = [&](int64_t tile, int buf, const rows_of &v) {
        A *const s_items = s_buffers + buf * buffer_slots<A>();
        A items[R];
        {
            int64_t offset = v.k0 * a.in_step;
            const int64_t step = kRowStride * a.in_step;
#pragma unroll
            for (int i = 0; i < R; ++i, offset += step)
                items[i] = i * kRowStride < v.left ? Traits::load(v.in[offset]) : op.neutral();
        }
        if (kTransposed) {
#pragma unroll
            for (int i = 0; i < R; ++i) s_items[striped_slot(i)] = items[i];
            data_barrier();
#pragma unroll
            for (int r = 0; r < R; ++r) items[r] = s_items[own_slot(r)];
        }
#pragma unroll
        for (int r = 1; r < R; ++r) items[r] = op(items[r - 1], items[r]);
#pragma unroll
        for (int r = 0; r < R; ++r) s_items[own_slot(r)] = items[r];
        A warp_inclusive = items[R - 1];
#pragma unroll
        for (int d = Cols; d < 32; d *= 2) {
            const A up = __shfl_up_sync(kFullMask, warp_inclusive, d);
            if (lane >= d) warp_inclusive = op(up, warp_inclusive);
        }
        const A warp_exclusive = __shfl_up_sync(kFullMask, warp_inclusive, Cols);
        if (lane >= 32 - Cols) s_warp_total[buf][warp][col] = warp_inclusive;
        data_barrier();
        if (warp == 0) {
            A aggregate = op.neutral();
            for (int w = 0; w < kWarps; ++w) aggregate = op(aggregate, s_warp_total[buf][w][col]);
            if (lane < Cols) s_tile_aggregate[buf][lane] = aggregate;
            publish_aggregate<Cols>(L, st, op, tile, op.start(a.exclusive), aggregate);
        }
        return warp_exclusive;
    };

    // Data warps: add the tile's prefix (s_tile_prefix[buf]) to the scanned rows in buffer buf
    // and store them.
    const auto finish = [&](int64_t tile, int buf, A warp_exclusive, const rows_of &v) {
        A *const s_items = s_buffers + buf * buffer_slots<A>();
        A prefix = s_tile_prefix[buf][col];
        for (int w = 0; w < warp; ++w) prefix = op(prefix, s_warp_total[buf][w][col]);
        if (lane >= Cols) prefix = op(prefix, warp_exclusive);
        A items[R];
        if (a.exclusive) {
            items[0] = prefix;
#pragma unroll
            for (int r = 1; r < R; ++r) items[r] = op(prefix, s_items[own_slot(r - 1)]);
        } else {
#pragma unroll
            for (int r = 0; r < R; ++r) items[r] = op(prefix, s_items[own_slot(r)]);
        }
        const bool line_by_line = !kTransposed && (a.out_step == 1 || a.out_step == -1);
        if (kTransposed || line_by_line) {
            // Each thread overwrites only its own slots: no barrier needed before.
#pragma unroll
            for (int r = 0; r < R; ++r) s_items[own_slot(r)] = items[r];
            if (line_by_line && warp == 0) s_line_out[lane] = v.out;
            data_barrier();
        }
        if (line_by_line) {
            // Thread t writes row t % kTileRows of every kLineSteps-th line of the tile.
            constexpr int kTileRows = kWarps * R;
            constexpr int kLineSteps = kThreads / kTileRows;
            const int row = t % kTileRows;
            const int64_t k = tile / L.groups * L.rows + row;
            const int slot = row % R * (kThreads + 1) + row / R * 32;  // own_slot of (line 0, row)
            if (k < a.n) {
#pragma unroll 4
                for (int c = t / kTileRows; c < Cols; c += kLineSteps)
                    if (T *line_out = s_line_out[c]) line_out[k * a.out_step] = Traits::store(s_items[slot + c]);
            }
        } else {
            if (kTransposed) {
#pragma unroll
                for (int i = 0; i < R; ++i) items[i] = s_items[striped_slot(i)];
            }
            int64_t offset = v.k0 * a.out_step;
            const int64_t step = kRowStride * a.out_step;
#pragma unroll
            for (int i = 0; i < R; ++i, offset += step)
                if (i * kRowStride < v.left) v.out[offset] = Traits::store(items[i]);
        }
    };

    // Tiles are claimed in order from the counter, each only when the block can load it at
    // once: a claimed tile that waits behind another stalls every successor in its chain.
    if constexpr (!pipelined<T>()) {
        for (;;) {
            __syncthreads();  // everyone has read s_tile and is done with the previous tile
            if (t == 0) s_tile[0] = (long long)atomicAdd(st.counter, 1ull);
            __syncthreads();
            const int64_t tile = s_tile[0];
            if (tile >= L.tiles) return;
            const rows_of v = rows_of_tile(tile);
            const A warp_exclusive = stage(tile, 0, v);
            if (warp == 0) {
                __syncwarp();  // lane 0's s_tile_aggregate, when Cols is 1
                const A prefix = look_back<Cols>(L, st, op, tile, op.start(a.exclusive), s_tile_aggregate[0][col]);
                if (lane < Cols) s_tile_prefix[0][lane] = prefix;
            }
            __syncthreads();
            finish(tile, 0, warp_exclusive, v);
        }
    } else {
        if (t == 0) {
            init(&s_data_sync, kThreads);
            s_tile[0] = (long long)atomicAdd(st.counter, 1ull);
        }
        __syncthreads();
        int64_t tile = s_tile[0];
        if (tile >= L.tiles) return;
        int buf = 0;
        A warp_exclusive = op.neutral(), next_warp_exclusive = op.neutral();
        if (!lookback_warp) warp_exclusive = stage(tile, buf, rows_of_tile(tile));
        __syncthreads();  // the tile's aggregate is in s_tile_aggregate
        for (;;) {
            const int next_buf = buf ^ 1;
            if (lookback_warp) {
                const A prefix = look_back<Cols>(L, st, op, tile, op.start(a.exclusive), s_tile_aggregate[buf][col]);
                if (lane < Cols) s_tile_prefix[buf][lane] = prefix;
            } else {
                // The other buffer was last read by the previous finish, which every data thread
                // has passed before this barrier.
                if (t == 0) s_tile[next_buf] = (long long)atomicAdd(st.counter, 1ull);
                data_barrier();
                const int64_t next = s_tile[next_buf];
                if (next < L.tiles) next_warp_exclusive = stage(next, next_buf, rows_of_tile(next));
            }
            __syncthreads();  // the prefix of this tile, and the next tile's id and aggregate
            const int64_t next = s_tile[next_buf];
            // The line pointers are found again rather than kept across the next tile's stage,
            // which would hold them in registers through its loads.
            if (!lookback_warp) finish(tile, buf, warp_exclusive, rows_of_tile(tile));
            if (next >= L.tiles) break;
            tile = next;
            buf = next_buf;
            warp_exclusive = next_warp_exclusive;
        }
    }
}

template <tscan_dtype D> struct lookback_workspace {
    static tscan_status run(const tscan_problem *p, size_t *bytes) {
        using A = typename dtype_traits<D>::A;
        const int cols = tile_cols_for(p);
        *bytes = plan_workspace<A>(make_layout<A>(p, cols), cols).total;
        return TSCAN_SUCCESS;
    }
};

// Signed integers run the kernels of their unsigned twins (kernel_dtype): 16 kernels, not 24.
template <tscan_dtype D> struct lookback_launch {
    static tscan_status run(const tscan_problem *p, void *workspace, cudaStream_t stream) {
        const int cols = tile_cols_for(p);
        return cols == kColumnBlock ? launch_shape<kColumnBlock>(p, workspace, stream)
                                    : launch_shape<kLineChunk>(p, workspace, stream);
    }

    template <int Cols> static tscan_status launch_shape(const tscan_problem *p, void *workspace, cudaStream_t stream) {
        constexpr tscan_dtype K = kernel_dtype(D);
        using A = typename dtype_traits<K>::A;
        const tile_layout L = make_layout<A>(p, Cols);
        const workspace_plan w = plan_workspace<A>(L, Cols);
        char *base = static_cast<char *>(workspace);
        tile_status<A> st;
        st.counter = reinterpret_cast<unsigned long long *>(base);
        st.flags = reinterpret_cast<uint32_t *>(base + sizeof(unsigned long long));
        st.aggregate = reinterpret_cast<A *>(base + w.values);
        st.inclusive = st.aggregate + L.status_tiles * Cols;

        // Persistent grid: as many blocks as can be resident, each claiming tiles until none is left.
        const size_t smem = dynamic_smem_bytes<typename dtype_traits<K>::T, A>();
        const int threads = block_threads<typename dtype_traits<K>::T>();
        TSCAN_CUDA_CHECK(cudaFuncSetAttribute(lookback_kernel<K, Cols>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        int per_sm = 0, sms = 0;
        TSCAN_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, lookback_kernel<K, Cols>, threads, smem));
        const tscan_status s = sm_count(&sms);
        if (s != TSCAN_SUCCESS) return s;
        if (per_sm < 1) return tscan_fail(TSCAN_ERROR_INTERNAL, "lookback_kernel cannot be resident on this device");
        const int64_t resident = (int64_t)per_sm * sms;
        const unsigned grid = (unsigned)(L.tiles < resident ? L.tiles : resident);

        TSCAN_CUDA_CHECK(cudaMemsetAsync(workspace, 0, w.cleared, stream));
        lookback_kernel<K, Cols><<<grid, threads, smem, stream>>>(make_scan_args(p), L, st);
        TSCAN_LAUNCH_CHECK("lookback_kernel");
        return TSCAN_SUCCESS;
    }
};

tscan_status workspace_size(const tscan_problem *p, size_t *bytes) {
    return dispatch_dtype<lookback_workspace>(p->dtype, p, bytes);
}

tscan_status launch(const tscan_problem *p, void *workspace, size_t, cudaStream_t stream) {
    if ((uintptr_t)workspace % 8 != 0)
        return tscan_fail(TSCAN_ERROR_INVALID_ARGUMENT, "workspace %p is not 8-byte aligned (lookback needs it)",
                          workspace);
    return dispatch_dtype<lookback_launch>(p->dtype, p, workspace, stream);
}

}  // namespace
}  // namespace tscan

extern "C" const tscan_strategy tscan_strategy_lookback = {TSCAN_ALGO_LOOKBACK, tscan::takes_every_layout,
                                                           tscan::workspace_size, tscan::launch};
