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
// forward progress needs no co-residency. The workspace is the counter, one status flag per
// tile that has a successor, and two value arrays; the counter and flags are cleared on the
// stream every call.
#include <cuda/atomic>

#include <cstdlib>

#include "common.cuh"

namespace tscan {
namespace {

constexpr int kThreads = 256;
// Resident blocks per SM the register budget is held to (64 registers a thread, at the cost of
// a few spilled words): a tile lives several microseconds (load, look-back, store), so the
// tiles in flight bound the throughput. Measured: 4 beats 3 for 1- and 2-byte types by up to
// 40% and is even for 4- and 8-byte ones.
constexpr int kBlocksPerSM = 4;
constexpr int kWarps = kThreads / 32;
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

// Warp 0 of a block: publishes the tile's per-line aggregate, looks back over its chain for
// the exclusive prefix, publishes the inclusive prefix and returns the exclusive one. Lane l
// serves line l % Cols. The last tile of a chain publishes nothing: no one reads it. The
// chain's first tile starts from `start` (op.start); every other reduction from op.neutral(),
// so that the sign of a zero sum is the reference's.
template <int Cols, class A>
__device__ A publish_and_look_back(const tile_layout &L, const tile_status<A> &st, const scan_op<A> &op,
                                   int64_t tile, int64_t chunk, int64_t group, A start, A aggregate) {
    constexpr int kFlagLoads = flag_loads_per_lane<Cols>();
    constexpr int kWindowTiles = 32 * kFlagLoads;
    constexpr int kLanesPerCol = 32 / Cols;
    const int lane = threadIdx.x % 32;
    const int col = lane % Cols;
    const bool has_successor = chunk + 1 < L.chunks;
    const int64_t slot = tile * Cols + lane;
    // Release: the lanes' values are written before the flag that announces them (the warp
    // barrier orders them before lane 0's release store).
    const auto publish = [&](A *values, A value, tile_flag state) {
        if (lane < Cols) values[slot] = value;
        __syncwarp();
        if (lane == 0)
            cuda::atomic_ref<uint32_t, cuda::thread_scope_device>(st.flags[tile]).store(state, cuda::memory_order_release);
    };
    if (chunk == 0) {
        if (has_successor) publish(st.inclusive, op(start, aggregate), kInclusive);
        return start;
    }
    if (has_successor) publish(st.aggregate, aggregate, kAggregate);

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

    if (has_successor) publish(st.inclusive, op(prefix, aggregate), kInclusive);
    return prefix;
}

// Thread t serves line group * Cols + t % Cols and the R consecutive rows of slice t / Cols.
// A column block's warp is one slice and loads its rows straight into registers, coalesced
// across lanes. A line chunk is loaded striped across the block (coalesced along the line)
// and transposed through shared memory, padded one slot per 128 bytes so that each thread's
// run of R elements starts on its own bank. Either way the scanned rows wait in shared memory
// during the look-back, so that they hold no registers there.
//
// A column block whose output is contiguous along the axis (a transposed input: lines are
// neighbours in the input, rows in the output) stores line by line instead: the finished
// tile goes through shared memory, padded one slot per row of slots so that a warp reads a
// line's rows from distinct banks, and each warp writes a run of one line's rows.
template <tscan_dtype D, int Cols>
__global__ void __launch_bounds__(kThreads, kBlocksPerSM)
    lookback_kernel(scan_args a, tile_layout L, tile_status<typename dtype_traits<D>::A> st) {
    using Traits = dtype_traits<D>;
    using T = typename Traits::T;
    using A = typename Traits::A;
    constexpr int R = items_per_thread(sizeof(A));
    constexpr bool kTransposed = Cols == kLineChunk;
    constexpr int kSlots = 128 / sizeof(A);
    constexpr int kRowStride = kTransposed ? kThreads : 1;  // between a thread's loaded rows
    static_assert(R == kSlots, "a thread's run of rows is one 128-byte row of banks");
    static_assert((R - 1) * (kThreads + 1) + kThreads <= kThreads * R + kThreads * R / kSlots,
                  "a column block's padded slots fit s_items");
    const scan_op<A> op{a.prod};
    const int t = threadIdx.x, lane = t % 32, warp = t / 32;
    const int col = t % Cols;
    const int first_row = kTransposed ? t : warp * R;
    // Shared-memory slot of the thread's scanned row r, and of the element loaded striped as row i.
    const auto own_slot = [&](int r) { return kTransposed ? t * (R + R / kSlots) + r : r * (kThreads + 1) + t; };
    const auto striped_slot = [&](int i) { return i * (kThreads + kThreads / kSlots) + t + t / kSlots; };

    __shared__ long long s_claim;
    __shared__ A s_warp_total[kWarps][32];
    __shared__ A s_tile_prefix[32];
    __shared__ T *s_line_out[32];  // line-major stores: each line's output base
    __shared__ A s_items[kThreads * R + kThreads * R / kSlots];

    // A tile is claimed only when the block can start it: a claimed tile that waits behind
    // another stalls every successor in its chain.
    for (;;) {
        __syncthreads();  // everyone has read s_claim and is done with the previous tile's shared memory
        if (t == 0) s_claim = (long long)atomicAdd(st.counter, 1ull);
        __syncthreads();
        const int64_t tile = s_claim;
        if (tile >= L.tiles) break;
        const int64_t chunk = tile / L.groups, group = tile % L.groups;
        const int64_t line = group * Cols + col;
        const T *in = nullptr;
        T *out = nullptr;
        if (line < a.lines) {
            int64_t in_offset, out_offset;
            a.batch.offsets(line, in_offset, out_offset);
            in = reinterpret_cast<const T *>(a.in) + in_offset;
            out = reinterpret_cast<T *>(a.out) + out_offset;
        }
        // Loaded row i of this thread is axis element k0 + i * kRowStride, present for
        // i * kRowStride < left.
        const int64_t k0 = chunk * L.rows + first_row;
        const int left = in ? (int)min(max(a.n - k0, (int64_t)0), L.rows) : 0;

        A items[R];
        {
            int64_t offset = k0 * a.in_step;
            const int64_t step = kRowStride * a.in_step;
#pragma unroll
            for (int i = 0; i < R; ++i, offset += step)
                items[i] = i * kRowStride < left ? Traits::load(in[offset]) : op.neutral();
        }
        if (kTransposed) {
#pragma unroll
            for (int i = 0; i < R; ++i) s_items[striped_slot(i)] = items[i];
            __syncthreads();
#pragma unroll
            for (int r = 0; r < R; ++r) items[r] = s_items[own_slot(r)];
        }

        // Scan the thread's rows, then the slices' totals per line: within the warp (lanes
        // Cols apart serve the same line), then across warps.
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
        if (lane >= 32 - Cols) s_warp_total[warp][col] = warp_inclusive;
        __syncthreads();

        if (warp == 0) {
            A aggregate = op.neutral();
            for (int w = 0; w < kWarps; ++w) aggregate = op(aggregate, s_warp_total[w][col]);
            const A tile_prefix = publish_and_look_back<Cols>(L, st, op, tile, chunk, group, op.start(a.exclusive), aggregate);
            if (lane < Cols) s_tile_prefix[lane] = tile_prefix;
        }
        __syncthreads();

        A prefix = s_tile_prefix[col];
        for (int w = 0; w < warp; ++w) prefix = op(prefix, s_warp_total[w][col]);
        if (lane >= Cols) prefix = op(prefix, warp_exclusive);
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
            if (line_by_line && warp == 0) s_line_out[lane] = out;
            __syncthreads();
        }
        if (line_by_line) {
            // Thread t writes row t % kTileRows of every kLineSteps-th line of the tile.
            constexpr int kTileRows = kWarps * R;
            constexpr int kLineSteps = kThreads / kTileRows;
            const int row = t % kTileRows;
            const int64_t k = chunk * L.rows + row;
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
            int64_t offset = k0 * a.out_step;
            const int64_t step = kRowStride * a.out_step;
#pragma unroll
            for (int i = 0; i < R; ++i, offset += step)
                if (i * kRowStride < left) out[offset] = Traits::store(items[i]);
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
        int per_sm = 0, sms = 0;
        TSCAN_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, lookback_kernel<K, Cols>, kThreads, 0));
        const tscan_status s = sm_count(&sms);
        if (s != TSCAN_SUCCESS) return s;
        if (per_sm < 1) return tscan_fail(TSCAN_ERROR_INTERNAL, "lookback_kernel cannot be resident on this device");
        const int64_t resident = (int64_t)per_sm * sms;
        const unsigned grid = (unsigned)(L.tiles < resident ? L.tiles : resident);

        TSCAN_CUDA_CHECK(cudaMemsetAsync(workspace, 0, w.cleared, stream));
        lookback_kernel<K, Cols><<<grid, kThreads, 0, stream>>>(make_scan_args(p), L, st);
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
