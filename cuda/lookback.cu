// lookback.cu - TSCAN_ALGO_LOOKBACK: a single-pass scan that splits the axis across blocks.
//
// A tile is `cols` consecutive lines by a chunk of `rows` consecutive elements of the axis.
// Each group of `cols` lines is a chain of tiles along the axis; a tile finds the scan of
// everything before it in its chain by decoupled look-back over its predecessors' published
// aggregates and inclusive prefixes, so the data is read once and written once.
//
//   - Strided axis with 16 lines or more: cols = 32 lines, one per lane, by 256 rows (128
//     when a lane's loads are 8 bytes). A warp loads its own rows straight into registers,
//     every load coalesced across neighbouring lines.
//   - Contiguous axis, or fewer lines: cols = 1, a tile is a chunk of 32 KB of one line.
//     Loads and stores are striped across the block (coalesced along the line) and
//     transposed through shared memory so that each thread scans consecutive elements.
//
// Elements narrower than 8 bytes move several to a load wherever the layout allows (packed):
// a column block lane's "line" is then a word of neighbouring lines, 2 of 4-byte elements in
// 64 bits or 4 / size of 1- and 2-byte ones in 32 (so the tile is 64 lines by 128 rows, or
// 64 or 128 lines by 256 rows); a line chunk's "element" a slot of consecutive elements of
// the line (16 bytes of 2-byte ones, 8 of 4-byte ones, 4 of 1-byte ones). A column block
// whose output is contiguous along the axis (a transposed input) stores words of consecutive
// elements of one line. Every tile moves 32 KB. Unpacked 1- and 2-byte elements move one at
// a time, zero-extended to a 32-bit slot.
//
// Blocks are persistent and claim every tile, their first too, in order from an atomic
// counter, chunk-major within bands of chains (the chains of a band advance together; see
// claim_band). Forward progress: a tile waits only on tiles claimed before it, and a claimed
// tile belongs to a block that is running, so the earliest unfinished tile can always finish,
// however few blocks the GPU makes resident beside other work (blockIdx.x carries no order:
// a block that other kernels keep off the SMs owns nothing anyone waits on). When a
// thread's loads fill their slots a block is pipelined: a warp of its own looks back while
// the others load the next tile (see lookback_kernel). The workspace is the counter and the
// statuses of the tiles that have a successor (tile_status); what a call reads before writing
// is cleared on its stream by a kernel that the scan kernel's launch overlaps
// (clear_workspace).
//
// Small problems whose axis packs in 16-byte vectors, and whose tiles of 16 KB all fit on the
// device at once, take a shorter path instead (one_wave_kernel): a block a tile, no shared-
// memory transpose, and a look-back that reads all of a line's earlier aggregates in one round
// trip.
#include <cuda/atomic>
#include <cuda/barrier>

#include <algorithm>
#include <cstdlib>

#include "common.cuh"

namespace tscan {
namespace {

constexpr int kThreads = 256;          // data threads of a block: they load, scan and store
constexpr int kWarps = kThreads / 32;  // data warps

// What a thread loads at once: V elements of T, kept raw in a shared-memory slot of 16 bytes
// when they fill 16, of 8 when they fill 8 (8-byte elements, pairs of 4-byte lines), else 4.
// V when packed: column blocks pack neighbouring lines into a slot (4 / size of 1- and 2-byte
// elements, 2 of 4-byte ones), line chunks consecutive elements into 16 bytes (2-byte
// elements; 8 or 4 where the layout packs no wider), 8 (4-byte ones) or 32 bits (1-byte ones).
// Measured on the H100 (bench/NOTES.md): float32 column blocks in pairs, 256 bytes a warp's
// load instead of 128, took square_cols from 90.7 to 94.8 % of the copy and the transposed
// input from 83.3 to 88.6; 2-byte elements 4 lines to 64 bits lost 3 to 14 points (4
// accumulators a lane, with fenced statuses or with words). A line chunk has one accumulator
// whatever its slot holds: 8-byte slots halved its load, shared-memory and store instructions
// and took float32 wide_rows from 88.9 to 91.5 and 1-D from 84.7 to 86.9, float16 85.0 ->
// 87.4 and 81.5 -> 83.8; int8's 8 elements a slot lost 3 points, so 1-byte ones keep 32 bits.
// 16-byte slots (elements found at constant indices) gained float16 0.3-0.5 points more on
// rows of whole tiles, but cost float32 0.6-1.0 and float64 (2 elements a slot) 0.4-0.7.
constexpr size_t slot_bytes(size_t elem_size, int v) { return elem_size * v >= 16 ? 16 : elem_size * v >= 8 ? 8 : 4; }
template <class T, int V>
using slot_t = std::conditional_t<slot_bytes(sizeof(T), V) == 16, ulonglong2,
                                  std::conditional_t<slot_bytes(sizeof(T), V) == 8, uint64_t, uint32_t>>;
template <class T> constexpr int line_pack() { return sizeof(T) < 4 ? 4 / (int)sizeof(T) : sizeof(T) == 4 ? 2 : 1; }
template <class T> constexpr int axis_pack() {
    return sizeof(T) == 1 ? 4 : sizeof(T) == 2 ? 8 : sizeof(T) == 4 ? 2 : 1;
}
// The narrowest pack that still fills a slot (2 or more): a line chunk whose layout does not
// allow axis_pack tries halving it down to this (2-byte elements: 8, 4, then 2), else takes 1
// (as do 8-byte elements, whose axis_pack is 1).
template <class T> constexpr int min_axis_pack() { return sizeof(T) < 4 ? 4 / (int)sizeof(T) : 2; }
template <class T, int V> struct slot_io {
    using S = slot_t<T, V>;
    static constexpr bool kFull = sizeof(T) * V == sizeof(S);  // the loads fill the slot
    // A 16-byte slot is two 8-byte ones, x the lower.
    static constexpr int kHalf = 8 / (int)sizeof(T);
    using half_io = slot_io<T, kHalf>;
    // Element j of a slot, counted from its lowest address.
    static __device__ __forceinline__ T get(S s, int j) {
        if constexpr (sizeof(S) == 16) return half_io::get(j < kHalf ? s.x : s.y, j % kHalf);
        else if constexpr (sizeof(T) == sizeof(S)) return ::cuda::std::bit_cast<T>(s);
        else return word_element<T>(s, j);
    }
    static __device__ __forceinline__ S with(S s, int j, T x) {
        if constexpr (sizeof(S) == 16) {
            if (j < kHalf) s.x = half_io::with(s.x, j, x);
            else s.y = half_io::with(s.y, j - kHalf, x);
            return s;
        } else if constexpr (sizeof(T) == sizeof(S)) {
            return ::cuda::std::bit_cast<S>(x);
        } else {
            return with_word_element(s, j, x);
        }
    }
    // The slot's elements in reverse order: a decreasing step's slot as it lies in memory is
    // put in scan order once, so that every element is then found at a constant index (a
    // run-time index cost shifts and selects an element; measured, H100: float16 rows of whole
    // tiles 90.4 -> 93.5 % of the copy, float32 transposed input 88.9 -> 90.1).
    static __device__ __forceinline__ S reversed(S s) {
        if constexpr (sizeof(S) == 16) {
            return S{half_io::reversed(s.y), half_io::reversed(s.x)};
        } else {
            constexpr int kPer = (int)(sizeof(S) / sizeof(T));
            S r{};
#pragma unroll
            for (int j = 0; j < kPer; ++j) r = with(r, kPer - 1 - j, get(s, j));
            return r;
        }
    }
    static __device__ __forceinline__ S load(const T *p) {
        if constexpr (kFull) return *reinterpret_cast<const S *>(p);
        else return with(S{}, 0, *p);
    }
    static __device__ __forceinline__ void store(T *p, S s) {
        if constexpr (kFull) *reinterpret_cast<S *>(p) = s;
        else *p = get(s, 0);
    }
};

// Pipelined blocks (full slots): 8 data warps and a warp that looks back, with two tile
// buffers, so that the next tile loads while the current one looks back. Two buffers of up to
// 36 KB fit three blocks in an SM's shared memory; 288 threads x 3 leave 72 registers a thread.
// Serial blocks (unpacked 1- and 2-byte elements): 8 warps, one buffer, warp 0 looks back
// while the others wait; 4 blocks an SM (64 registers). Measured on an H200 (bench/NOTES.md):
// pipelining took float32 medium_cols from 52 to 70 % of the copy, and float16 square_cols,
// loaded one element at a time, from 43 down to 31: 2-byte loads in 3 blocks keep too few
// bytes in flight.
template <class T, int V> constexpr bool pipelined() { return slot_io<T, V>::kFull; }
template <class T, int V> constexpr int block_threads() { return pipelined<T, V>() ? kThreads + 32 : kThreads; }
template <class T, int V> constexpr int blocks_per_sm() { return pipelined<T, V>() ? 3 : 4; }
constexpr unsigned kFullMask = 0xffffffffu;

// Slots each thread holds: 128 bytes of them (32 of 4 bytes, 16 of 8, 8 of 16), so a tile
// carries 32 KB and the look-back traffic is a few percent of the data.
constexpr int items_per_thread(size_t slot_bytes) { return (int)(128 / slot_bytes); }
static_assert(kThreads * 128 == TSCAN_LOOKBACK_TILE_BYTES, "dispatch counts lines in tiles of this many bytes");

// Tile status flags. A flag only ever grows, and the value it announces is written before it.
enum tile_flag : uint32_t { kEmpty = 0, kAggregate = 1, kInclusive = 2 };

// The two tile shapes: 32 lines (one per lane) of a strided axis, or a chunk of one line.
enum tile_cols : int { kLineChunk = 1, kColumnBlock = 32 };

// Lines a data thread serves: a column block lane's V packed lines, or a chunk's one line.
template <int Cols, int V> constexpr int lines_per_thread() { return Cols == kLineChunk ? 1 : V; }

// A tile's status id is chunk * groups + group; claims take tiles in another order (band and
// tile_of_claim). Lines and rows count the kernel's elements: a word of V packed elements is one.
struct tile_layout {
    int64_t rows;    // axis elements per tile: (kThreads / cols) * items per thread
    int64_t groups;  // chains: ceil(lines / cols)
    int64_t chunks;  // tiles per chain: ceil(n / rows)
    int64_t tiles;   // groups * chunks
    // Tiles with a successor in their chain, the only ones that publish a status: the ids
    // below groups * (chunks - 1). A single-chunk problem needs no status at all.
    int64_t status_tiles;
    int64_t chunk_words;  // word statuses: a chunk's words (all its chains'), in whole 32-byte sectors
    int64_t band;         // chains claimed together, chunk-major (the last band may hold fewer)
};

// Chains claimed together (tile_layout::band), given the blocks resident at once. A tile's
// predecessor in its chain is claimed a band's width of claims before it, so resident / band
// of each chain's tiles are in flight. Measured on the H100 (396 blocks; bench/NOTES.md, "bands
// of chains"): 64x4096x1024 float16, 1024 chains of 16 tiles, ran at 85.8 % of the copy claimed
// all together, 88.9-89.3 in bands of 256 and 89.6-90.0 of 128; but bands of 128 cost 16384x16384
// (256 chains) 4 points, and 4096x65536 and 4x4096x16384 ran best at 256. So the band is the
// largest power of two up to 2/3 of the resident blocks (256 there), widened to split the
// chains evenly; fewer than two bands' worth of chains stay one band.
inline int64_t claim_band(int64_t groups, int64_t resident) {
    int64_t target = 1;
    while (target * 2 <= resident * 2 / 3) target *= 2;
    const int64_t bands = std::max<int64_t>(1, groups / target);
    return (groups + bands - 1) / bands;
}

// A tile's place: its chunk of the axis and its group of lines (its chain).
struct tile_at {
    int64_t chunk, group;
};

// The tile that claim `index` takes: chains go in bands of L.band, chunk-major within a band, so
// that every tile's predecessors are claimed before it. Past the last tile, chunk L.chunks.
__device__ __forceinline__ tile_at tile_of_claim(const tile_layout &L, int64_t index) {
    if (index >= L.tiles) return {L.chunks, 0};
    if (L.band == L.groups) {
        const int64_t chunk = index / L.groups;
        return {chunk, index - chunk * L.groups};
    }
    const int64_t band_tiles = L.band * L.chunks;
    const int64_t band = index / band_tiles;
    const int64_t first = band * L.band;
    const int64_t width = min(L.band, L.groups - first);
    const int64_t r = index - band * band_tiles;
    const int64_t chunk = r / width;
    return {chunk, first + r - chunk * width};
}

// A line's status in 64-bit words: the flag in the low half, a 32-bit part of the value it
// announces in the high half, stored and loaded whole, so that no fence has to order a value
// before its flag (a release fence waits for every store the warp has in flight: the data warp
// that publishes an aggregate has just stored a tile). A 4-byte accumulator is one word; an
// 8-byte one two, stored apart, and a reader takes the value when both words say the same
// state (each state is written once, so its parts are then that state's). A line chunk's words
// are its tile's status, read by the window walk in place of a flag; a column block's look-back
// reads its lines' words with no tile flag at all (sum_words_back), two words a lane a
// predecessor at most. Column blocks of 4 packed lines a lane (1-byte elements: a look-back
// batch of words would then cover only 2 predecessors; measured, int8 medium_cols 59 -> 51 %)
// keep a flag array and two value arrays, each flag stored with release after its values.
template <class A> constexpr int word_parts() {  // the 32-bit parts of a value
    static_assert(sizeof(A) % 4 == 0, "accumulators of 4 or 8 bytes");
    return (int)(sizeof(A) / 4);
}
// An accumulator as raw bits, which its status words hold 32 at a time.
template <class A> using value_bits = std::conditional_t<word_parts<A>() == 1, uint32_t, uint64_t>;
// The value that a line's status words (its word_parts, lowest part first) announce.
template <class A> __device__ __forceinline__ A announced_value(const unsigned long long *part) {
    value_bits<A> b = 0;
#pragma unroll
    for (int q = 0; q < word_parts<A>(); ++q) b |= (value_bits<A>)(uint32_t)(part[q] >> 32) << (32 * q);
    return ::cuda::std::bit_cast<A>(b);
}
constexpr bool word_status(size_t accumulator_size, int lines_per_lane, int cols) {
    return cols == kLineChunk || accumulator_size / 4 * lines_per_lane <= 2;
}

// Status word q of a value announced in state: its q-th 32-bit part high, the flag low.
template <class A> __device__ __forceinline__ unsigned long long status_word(A value, int q, tile_flag state) {
    return (unsigned long long)(uint32_t)(::cuda::std::bit_cast<value_bits<A>>(value) >> (32 * q)) << 32 | state;
}

template <class A> struct tile_status {
    unsigned long long *counter;  // next tile to claim
    uint32_t *flags;              // [status_tiles]; none for word statuses
    A *aggregate;                 // [status_tiles][tile lines]: the tile's own reduction, per line
    A *inclusive;                 // [status_tiles][tile lines]: scan of the chain through the tile
    unsigned long long *words;    // [chunks - 1][chunk_words] instead of the value arrays (word_status)
};

// How lookback runs a problem: the tile shape, the elements a word packs, and the problem as
// the kernel sees it (packed, when V > 1).
struct lookback_plan {
    scan_args a;
    int cols;
    int v;
    int64_t out_word_line_step;  // output elements between the lines of a column block's word
    int lines_per_lane() const { return cols == kLineChunk ? 1 : v; }  // lines_per_thread<Cols, V>
    int tile_lines() const { return cols * lines_per_lane(); }          // status values per tile
};

// Column blocks when the axis is strided and there are lines enough to fill most lanes
// (neighbouring lines are then usually neighbouring addresses); otherwise each line is its
// own chain, read along the axis (coalesced when the axis is contiguous). Elements narrower
// than 8 bytes pack when the lines allow (column blocks: in both tensors, or in the input
// with the axis in the output), 1- and 2-byte ones also when the axis does (line chunks).
template <class T> lookback_plan make_plan(const tscan_problem *p) {
    constexpr int kLinePack = line_pack<T>(), kAxisPack = axis_pack<T>();
    lookback_plan plan{make_scan_args(p), kLineChunk, 1, 0};
    const bool contiguous_axis = llabs(p->in_step) <= 1 && llabs(p->out_step) == 1;
    plan.cols = !contiguous_axis && p->lines >= 16 ? kColumnBlock : kLineChunk;
    if (plan.cols == kColumnBlock && kLinePack > 1 &&
        (lines_packed_by(plan.a, kLinePack, sizeof(T)) || lines_packed_into_axis_by(plan.a, kLinePack, sizeof(T)))) {
        plan.out_word_line_step = plan.a.batch.out_strides[plan.a.batch.ndim - 1];
        pack_lines(plan.a, kLinePack);
        plan.v = kLinePack;
    } else if (plan.cols == kLineChunk) {
        for (int w = kAxisPack; w >= min_axis_pack<T>(); w /= 2) {
            if (axis_packed_by(plan.a, w, sizeof(T))) {
                pack_axis(plan.a, w, sizeof(T));
                plan.v = w;
                break;
            }
        }
    }
    return plan;
}

// A 32-byte L2 sector of status words. Each chunk's words start a sector of their own (from a
// workspace at least 32-byte aligned), so that neighbouring chunks of a chain, whose statuses
// its look-backs poll while they are being written, never share one. Packed, one long line's
// chunks put 4 statuses to a sector (2 of 8-byte accumulators), which every look-back of the
// chain polled at once (measured, H100, 1-D: float32 88.7 -> 93.1 % of the copy, float16 86.3
// -> 90.4, float64 89.7 -> 92.0, int32 88.7 -> 92.9). Column blocks' tiles fill whole sectors
// already, as do many chains' line chunks.
constexpr int64_t kSectorWords = 32 / sizeof(unsigned long long);

template <class T, class A> tile_layout make_layout(const lookback_plan &plan) {
    const scan_args &a = plan.a;
    const int cols = plan.cols;
    tile_layout L;
    L.rows = (int64_t)(kThreads / cols) * items_per_thread(slot_bytes(sizeof(T), plan.v));
    L.groups = (a.lines + cols - 1) / cols;
    L.chunks = (a.n + L.rows - 1) / L.rows;
    L.tiles = L.groups * L.chunks;
    L.status_tiles = L.groups * (L.chunks - 1);
    const int64_t tile_words = (int64_t)plan.tile_lines() * word_parts<A>();
    L.chunk_words = (L.groups * tile_words + kSectorWords - 1) / kSectorWords * kSectorWords;
    L.band = L.groups;  // the launch sets it from the blocks resident
    return L;
}

// The first status word of a tile (word statuses).
__device__ __forceinline__ int64_t tile_words_at(const tile_layout &L, int64_t chunk, int64_t group, int tile_words) {
    return chunk * L.chunk_words + group * tile_words;
}

// Workspace: counter, flags (none for word statuses), then the values, 8-byte aligned (words:
// 32-byte, whole sectors). Statuses in words are cleared whole (a zero word is an empty status);
// otherwise only the counter and flags, as a value is read only under a flag set after it was
// written.
struct workspace_plan {
    size_t cleared;
    size_t values;  // offset of the aggregates
    size_t total;
};

template <class A> workspace_plan plan_workspace(const tile_layout &L, const lookback_plan &plan) {
    const bool words = word_status(sizeof(A), plan.lines_per_lane(), plan.cols);
    const size_t flag_bytes = words ? 0 : (size_t)L.status_tiles * sizeof(uint32_t);
    const size_t value_bytes = words ? (size_t)(L.chunks - 1) * L.chunk_words * sizeof(unsigned long long)
                                     : (size_t)L.status_tiles * plan.tile_lines() * 2 * sizeof(A);
    const size_t align = words ? 32 : 8;  // words: sectors
    workspace_plan w;
    w.values = (sizeof(unsigned long long) + flag_bytes + align - 1) & ~(align - 1);
    w.cleared = words ? w.values + value_bytes : sizeof(unsigned long long) + flag_bytes;
    w.total = w.values + value_bytes;
    return w;
}

template <class V> __device__ __forceinline__ V load_relaxed(V &x) {
    return cuda::atomic_ref<V, cuda::thread_scope_device>(x).load(cuda::memory_order_relaxed);
}

// A hint: fetch the line at p into L2 (no register written, nothing waited for).
__device__ __forceinline__ void prefetch_l2(const void *p) { asm volatile("prefetch.global.L2 [%0];" ::"l"(p)); }

// The scan kernel is launched as a programmatic dependent of clear_workspace: its blocks start
// while the clear runs and wait here, at their start, for the clear to be done and visible.
// (Waiting only before the first touch of the workspace, so that a block's first loads overlap
// the clear too, measured the same: H100, 2^20 float32 11.9 us either way.) Without that
// launch attribute, or before sm_90, there is nothing to wait for. The clear triggers its
// dependent under the same guard as this wait: code built for an older architecture has
// neither, and the scan kernel then starts only once the clear has completed.
__device__ __forceinline__ void wait_for_clear() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Zeroes what a call reads before writing (workspace_plan::cleared, in words: the claim
// counter first) and lets the scan kernel launch at once, rather than after a memset
// (bench/NOTES.md, "Small problems").
__global__ void clear_workspace(unsigned long long *words, int64_t n_words) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;");
#endif
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n_words; i += (int64_t)gridDim.x * blockDim.x)
        words[i] = 0;
}

// Blocks of kernel (threads and smem bytes each) that the device holds at once, and its SMs.
template <class Kernel> tscan_status resident_blocks(Kernel kernel, int threads, size_t smem, int64_t *resident, int *sms) {
    int per_sm = 0;
    TSCAN_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
    const tscan_status s = sm_count(sms);
    if (s != TSCAN_SUCCESS) return s;
    *resident = (int64_t)per_sm * *sms;
    return TSCAN_SUCCESS;
}

// Clears the workspace's first n_words (see clear_workspace) and launches kernel as its programmatic dependent, so that the kernel's launch overlaps the
// clear and its threads wait in wait_for_clear.
template <class... Params, class... Args>
tscan_status launch_after_clear(void (*kernel)(Params...), unsigned grid, int threads, size_t smem, cudaStream_t stream,
                                unsigned long long *words, int64_t n_words, int sms, const Args &...args) {
    const unsigned clear_grid = (unsigned)std::min<int64_t>((n_words + 255) / 256, (int64_t)sms * 4);
    clear_workspace<<<clear_grid, 256, 0, stream>>>(words, n_words);
    TSCAN_LAUNCH_CHECK("clear_workspace");
    cudaLaunchAttribute overlap;
    overlap.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    overlap.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config = {};
    config.gridDim = grid;
    config.blockDim = (unsigned)threads;
    config.dynamicSmemBytes = smem;
    config.stream = stream;
    config.attrs = &overlap;
    config.numAttrs = 1;
    TSCAN_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, args...));
    return TSCAN_SUCCESS;
}

// One warp sets a tile's status: lane l < Cols writes its LV lines' words, or their values and
// then lane 0 the flag. The last tile of a chain publishes nothing: no one reads it.
template <int Cols, int LV, class A>
__device__ void publish_status(const tile_layout &L, const tile_status<A> &st, tile_at at, A *values,
                               const A (&value)[LV], tile_flag state) {
    if (at.chunk == L.chunks - 1) return;
    const int lane = threadIdx.x % 32;
    if constexpr (word_status(sizeof(A), LV, Cols)) {
        constexpr int kParts = word_parts<A>();
        unsigned long long *const words = st.words + tile_words_at(L, at.chunk, at.group, Cols * LV * kParts);
        if (lane < Cols) {
#pragma unroll
            for (int j = 0; j < LV; ++j) {
#pragma unroll
                for (int q = 0; q < kParts; ++q)
                    cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(words[(lane * LV + j) * kParts + q])
                        .store(status_word(value[j], q, state), cuda::memory_order_relaxed);
            }
        }
        return;
    }
    // Release: the lanes' values are written before the flag that announces them (the warp
    // barrier orders them before lane 0's release store).
    const int64_t id = at.chunk * L.groups + at.group;  // the status's index
    if (lane < Cols) {
#pragma unroll
        for (int j = 0; j < LV; ++j) values[(id * Cols + lane) * LV + j] = value[j];
    }
    __syncwarp();
    if (lane == 0)
        cuda::atomic_ref<uint32_t, cuda::thread_scope_device>(st.flags[id]).store(state, cuda::memory_order_release);
}

// A tile's per-line reduction, published as soon as its data is in: the aggregate, or for the
// chain's first tile the inclusive prefix op(start, aggregate) at once.
template <int Cols, int LV, class A>
__device__ void publish_aggregate(const tile_layout &L, const tile_status<A> &st, const scan_op<A> &op, tile_at at,
                                  A start, const A (&aggregate)[LV]) {
    if (at.chunk == 0) {
        A inclusive[LV];
#pragma unroll
        for (int j = 0; j < LV; ++j) inclusive[j] = op(start, aggregate[j]);
        publish_status<Cols>(L, st, at, st.inclusive, inclusive, kInclusive);
    } else {
        publish_status<Cols>(L, st, at, st.aggregate, aggregate, kAggregate);
    }
}

// A column block's walk over its predecessors' line words, nearest first, in batches loaded
// before any is looked at (so that the loads overlap: measured, one at a time cost float16
// medium_cols 21 points), until every lane's lines have met an inclusive word: sets prefix to
// the reduction of what they announce. The word carries its own flag, so no tile flag is
// polled first: a round trip less a window of 32, 2 of the ~11 of a medium_cols look-back
// (measured: float32 medium_cols 84.1 -> 88.4 %, float16 80.0 -> 84.3). A word not yet
// published is re-read, and so is the part of an 8-byte value that says an earlier state than
// the other. Lane l reads its LV lines' words of each predecessor, o chain steps below the
// nearest's; a batch past the first tile of the chain reloads that tile, which is inclusive,
// rather than branch around its loads: a long walk is bound by its instructions as much as by
// its round trips (measured: float32 medium_cols 81.5 -> 83.3 % against a 64-bit index and a
// branch a load).
template <int LV, class A>
__device__ void sum_words_back(const tile_layout &L, const tile_status<A> &st, const scan_op<A> &op, int64_t chunk,
                               int64_t group, A (&prefix)[LV]) {
    constexpr int kParts = word_parts<A>();
    constexpr int kWords = LV * kParts;  // a lane's words of one predecessor
    constexpr int kBatch = 8 / kWords;
    const int lane = threadIdx.x % 32;
    const int64_t chain_step = L.chunk_words;
    unsigned long long *nearest = st.words + tile_words_at(L, chunk - 1, group, kColumnBlock * kWords) + lane * kWords;
    bool done[LV] = {};
    for (int64_t o0 = 0;; o0 += kBatch, nearest -= kBatch * chain_step) {
        const int last = (int)min(chunk - 1 - o0, (int64_t)kBatch - 1);  // past it, the chain's first tile
        unsigned long long word[kBatch][kWords];
#pragma unroll
        for (int i = 0; i < kBatch; ++i)
#pragma unroll
            for (int w = 0; w < kWords; ++w) word[i][w] = load_relaxed(nearest[w - min(i, last) * chain_step]);
#pragma unroll
        for (int i = 0; i < kBatch; ++i) {
            const auto reload = [&](int w) { word[i][w] = load_relaxed(nearest[w - min(i, last) * chain_step]); };
#pragma unroll
            for (int j = 0; j < LV; ++j) {
                if (done[j]) continue;
                unsigned long long *const part = word[i] + j * kParts;
                while ((uint32_t)part[0] == kEmpty) reload(j * kParts);
                if constexpr (kParts == 2) {
                    // The parts were stored apart: a value is whole when both say the same state.
                    while ((uint32_t)part[1] < (uint32_t)part[0]) reload(j * kParts + 1);
                    while ((uint32_t)part[0] < (uint32_t)part[1]) reload(j * kParts);
                }
                prefix[j] = op(prefix[j], announced_value<A>(part));
                done[j] = (uint32_t)part[0] == kInclusive;
            }
        }
        bool all_done = true;
#pragma unroll
        for (int j = 0; j < LV; ++j) all_done &= done[j];
        if (__all_sync(kFullMask, all_done)) return;
    }
}

// The walk of line chunks (their status words) and of fenced arrays (their flags), a window of
// 32 predecessors at a time, one a lane: sets prefix to the reduction of the chunk's
// predecessors back to the nearest inclusive one. Predecessor o of the window (lane o's) is
// chunk - 1 - (base + o) of the same chain; before chunk 0 an inclusive identity stands in, so
// the walk ends. The warp shares the statuses through ballots, so every line sees the same ones
// and the control flow stays uniform. A window is one load a lane: wider ones (2 or 4 loads a
// lane, read together) cost every line chunk, as a wait re-reads the whole window (measured,
// H100: float32 1-D 88.8 % of the copy with 32, 88.1 with 64, 87.2 with 128, 85.8 with 256).
template <int Cols, int LV, class A>
__device__ void sum_windows_back(const tile_layout &L, const tile_status<A> &st, const scan_op<A> &op, int64_t chunk,
                                 int64_t group, A (&prefix)[LV]) {
    constexpr int kLanesPerCol = 32 / Cols;
    constexpr bool kChunkWords = word_status(sizeof(A), LV, Cols);
    static_assert(!kChunkWords || Cols == kLineChunk, "column blocks' words are walked by sum_words_back");
    const int lane = threadIdx.x % 32;
    const int col = lane % Cols;
    for (int64_t base = 0;;) {
        const int64_t pred = chunk - 1 - (base + lane);
        uint32_t f;
        A word_value{};  // kChunkWords: the value the flag announced (before chunk 0: never summed)
        if constexpr (kChunkWords) {
            // An 8-byte value's two words were stored apart: until both say the same state, the
            // predecessor counts as not yet published.
            constexpr int kParts = word_parts<A>();
            f = kInclusive;
            if (pred >= 0) {
                unsigned long long *const words = st.words + tile_words_at(L, pred, group, kParts);
                unsigned long long part[kParts];
#pragma unroll
                for (int q = 0; q < kParts; ++q) part[q] = load_relaxed(words[q]);
                f = (uint32_t)part[0];
#pragma unroll
                for (int q = 1; q < kParts; ++q)
                    if ((uint32_t)part[q] != f) f = kEmpty;
                word_value = announced_value<A>(part);
            }
        } else {
            f = pred < 0 ? (uint32_t)kInclusive : load_relaxed(st.flags[pred * L.groups + group]);
        }
        const unsigned inclusive = __ballot_sync(kFullMask, f == kInclusive);
        const unsigned empty = __ballot_sync(kFullMask, f == kEmpty);
        // The nearest inclusive predecessor in the window (32 if none); wait while a nearer one
        // has not published yet.
        const int first = inclusive ? __ffs(inclusive) - 1 : 32;
        if (empty & (first == 32 ? kFullMask : (1u << first) - 1)) continue;

        const int64_t real = chunk - base;  // predecessors of the window that exist
        const int count = (int)min((int64_t)min(first + 1, 32), real);
        A sum[LV];
#pragma unroll
        for (int j = 0; j < LV; ++j) sum[j] = op.neutral();
        if constexpr (kChunkWords) {
            if (lane < count) sum[0] = word_value;
        } else {
            // Acquire: each lane's flag read is ordered before the value loads of every lane
            // (its own fence, then the warp barrier). The words' chain-step addressing did not
            // carry over here: with it the int8 kernel spilled and its medium_cols fell from 59
            // to 53 %.
            cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device);
            __syncwarp();
#pragma unroll 8
            for (int o = lane / Cols; o < count; o += kLanesPerCol) {
                const int64_t pred_o = chunk - 1 - (base + o);
                A *values = (inclusive >> o) & 1 ? st.inclusive : st.aggregate;
                A *line = values + ((pred_o * L.groups + group) * Cols + col) * LV;
#pragma unroll
                for (int j = 0; j < LV; ++j) sum[j] = op(sum[j], load_relaxed(line[j]));
            }
        }
#pragma unroll
        for (int j = 0; j < LV; ++j) {
#pragma unroll
            for (int d = Cols; d < 32; d *= 2) sum[j] = op(sum[j], __shfl_xor_sync(kFullMask, sum[j], d));
            prefix[j] = op(sum[j], prefix[j]);
        }
        if (first < 32) break;
        base += 32;
    }
}

// The look-back warp: the exclusive prefix of a tile whose aggregate is published, found over
// its chain's predecessors; then publishes the tile's inclusive prefix. Lane l serves the LV
// lines of lane l % Cols; `aggregate` and `prefix` hold the tile's lines in that order. The
// chain's first tile starts from `start` (op.start); every other reduction from op.neutral(),
// so that the sign of a zero sum is the reference's.
template <int Cols, int LV, class A>
__device__ void look_back(const tile_layout &L, const tile_status<A> &st, const scan_op<A> &op, tile_at at, A start,
                          const A *aggregate, A *prefix_out) {
    const int lane = threadIdx.x % 32;
    const int col = lane % Cols;
    const int64_t chunk = at.chunk, group = at.group;
    A prefix[LV];
#pragma unroll
    for (int j = 0; j < LV; ++j) prefix[j] = chunk == 0 ? start : op.neutral();

    if (chunk > 0) {  // chunk 0 published its inclusive prefix with its aggregate
        if constexpr (word_status(sizeof(A), LV, Cols) && Cols > 1) sum_words_back<LV>(L, st, op, chunk, group, prefix);
        else sum_windows_back<Cols, LV>(L, st, op, chunk, group, prefix);
        A inclusive[LV];
#pragma unroll
        for (int j = 0; j < LV; ++j) inclusive[j] = op(prefix[j], aggregate[col * LV + j]);
        publish_status<Cols>(L, st, at, st.inclusive, inclusive, kInclusive);
    }
    if (lane < Cols) {
#pragma unroll
        for (int j = 0; j < LV; ++j) prefix_out[lane * LV + j] = prefix[j];
    }
}

// Runs step with the operator: when `copies`, inlined once per operator, each a constant (so
// that the compiler does not compute both the sum and the product and select), else once with
// the run-time choice. The step takes a scan_op, not auto: a generic lambda in the kernel
// crashes cudafe++ in CUDA 13.
template <class A, class Step>
__device__ __forceinline__ void with_op_copies(bool copies, const scan_op<A> &op, Step &&step) {
    if (copies && op.prod) step(scan_op<A>{true});
    else if (copies) step(scan_op<A>{false});
    else step(op);
}

// Shared-memory slots of one tile buffer: the tile, padded one slot per 128 bytes.
template <class S> constexpr int buffer_slots() {
    return kThreads * items_per_thread(sizeof(S)) + kThreads * items_per_thread(sizeof(S)) / (128 / (int)sizeof(S));
}
template <class T, int V> constexpr size_t dynamic_smem_bytes() {
    return (pipelined<T, V>() ? 2 : 1) * (size_t)buffer_slots<slot_t<T, V>>() * sizeof(slot_t<T, V>);
}

// A pipelined block is 8 data warps and one look-back warp, with two tile buffers in shared
// memory. While the look-back warp finds the prefix of the current tile, the data warps claim,
// load, reduce and publish the next one into the other buffer; then they finish the current
// tile (scan it from its prefix, store). So a look-back no longer stops the block's memory
// traffic, and a tile's aggregate is published as soon as its data is in, whatever its
// predecessors are doing: claiming the next tile early delays no chain. (An earlier try, which
// loaded the next tile in the waiting warps but published it only after the current
// look-back, cost 10-26 points.) A serial block runs the same steps one after another, warp 0
// looking back while the other warps wait.
//
// Data thread t serves line group * Cols + t % Cols and the R consecutive rows of slice t / Cols.
// A column block's warp is one slice and loads its rows straight into registers, coalesced
// across lanes. A line chunk is loaded striped across the block (coalesced along the line)
// and transposed through shared memory, padded one slot per 128 bytes so that each thread's
// run of R slots starts on its own bank. Either way the tile waits in its buffer until the
// prefix is known, so that it holds no registers then: a column block's rows of single
// elements already scanned, anything else raw, to be scanned on the way out (kScanned).
//
// A column block whose output is contiguous along the axis (a transposed input: lines are
// neighbours in the input, rows in the output) stores line by line instead: the finished
// tile goes through shared memory, padded one slot per row of slots so that a warp reads a
// line's rows from distinct banks, and each warp writes a run of one line's rows (as words
// of V rows when a slot holds V lines).
template <tscan_dtype D, int Cols, int V>
__global__ void __launch_bounds__(block_threads<typename dtype_traits<D>::T, V>(),
                                  blocks_per_sm<typename dtype_traits<D>::T, V>())
    lookback_kernel(scan_args a, int64_t out_word_line_step, tile_layout L, tile_status<typename dtype_traits<D>::A> st) {
    using Traits = dtype_traits<D>;
    using T = typename Traits::T;
    using A = typename Traits::A;
    using IO = slot_io<T, V>;
    using S = slot_t<T, V>;
    constexpr int R = items_per_thread(sizeof(S));
    constexpr int LV = lines_per_thread<Cols, V>();
    constexpr int kTileLines = Cols * LV;
    constexpr bool kTransposed = Cols == kLineChunk;
    constexpr bool kPipelined = pipelined<T, V>();
    // A column block of single elements keeps its rows scanned in the buffer (an accumulator
    // fits the slot); line chunks and words keep them raw, and finish scans them. Measured on
    // the H100 (bench/NOTES.md): raw column blocks cost int64 4 points on the transposed input
    // (8-byte registers spilled), raw line chunks gained float32 0.5-1.
    constexpr bool kScanned = V == 1 && !kTransposed;
    constexpr int kSlots = 128 / sizeof(S);
    constexpr int kRowStride = kTransposed ? kThreads : 1;  // between a thread's loaded rows
    static_assert(R == kSlots, "a thread's run of rows is one 128-byte row of banks");
    static_assert((R - 1) * (kThreads + 1) + kThreads <= buffer_slots<S>(), "a column block's padded slots fit a buffer");
    const scan_op<A> op{a.prod};
    const int t = threadIdx.x, lane = t % 32, warp = t / 32;
    const int col = t % Cols;
    const bool lookback_warp = warp == kWarps;
    const int first_row = kTransposed ? t : warp * R;
    // A packed line chunk's slot holds its elements in reverse order when its step decreases.
    const bool in_reversed = kTransposed && V > 1 && a.in_step < 0;
    const bool out_reversed = kTransposed && V > 1 && a.out_step < 0;
    // Shared-memory slot of the thread's row r, and of the slot loaded striped as row i.
    const auto own_slot = [&](int r) { return kTransposed ? t * (R + R / kSlots) + r : r * (kThreads + 1) + t; };
    const auto striped_slot = [&](int i) { return i * (kThreads + kThreads / kSlots) + t + t / kSlots; };

    extern __shared__ __align__(16) unsigned char s_dynamic[];
    S *const s_buffers = reinterpret_cast<S *>(s_dynamic);
    __shared__ tile_at s_tile[2];                   // the tile in each buffer
    __shared__ A s_warp_total[kWarps][kTileLines];  // the staged tile: each slice's total per line
    __shared__ A s_tile_aggregate[2][kTileLines];   // per buffer
    __shared__ A s_tile_prefix[2][kTileLines];
    __shared__ T *s_line_out[32];  // line-by-line stores: each line's output base
    // The data threads' barrier. Pipelined blocks need one that the look-back warp does not take
    // part in: an mbarrier rather than a named barrier (bar.sync 1, 256), which is as good on
    // the hardware, but which racecheck does not model when a warp stays out of it (it reports
    // hazards on a probe that has none: bench/NOTES.md).
#pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ cuda::barrier<cuda::thread_scope_block> s_data_sync;
    const auto data_barrier = [&] {
        if constexpr (kPipelined) s_data_sync.arrive_and_wait();
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
    const auto rows_of_tile = [&](tile_at at) {
        const int64_t line = at.group * Cols + col;
        rows_of v{nullptr, nullptr, at.chunk * L.rows + first_row, 0};
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
    // Element e of a slot in scan order: line e of a column block's word, or the e-th
    // element along the axis of a line chunk's (stage puts a decreasing line's in that order).
    const auto element_in = [&](S s, int e) { return Traits::load(IO::get(s, e)); };
    const auto line_of = [](int e) { return LV == 1 ? 0 : e; };

    // Data warps: load a tile into buffer buf and reduce (or scan) each thread's rows, then the
    // slices' totals per line (within the warp: lanes Cols apart serve the same line; then
    // across warps), and publish the tile's aggregate. Sets `within` to the thread's exclusive
    // prefix within the tile.
    const auto stage = [&](tile_at tile, int buf, const rows_of &v, A(&within)[LV], const scan_op<A> &item_op) {
        S *const s_items = s_buffers + buf * buffer_slots<S>();
        S slots[R];
        {
            int64_t offset = v.k0 * a.in_step;
            const int64_t step = kRowStride * a.in_step;
#pragma unroll
            for (int i = 0; i < R; ++i, offset += step) slots[i] = i * kRowStride < v.left ? IO::load(v.in + offset) : S{};
        }
        if (in_reversed) {
#pragma unroll
            for (int i = 0; i < R; ++i) slots[i] = IO::reversed(slots[i]);
        }
        if (kTransposed) {
#pragma unroll
            for (int i = 0; i < R; ++i) s_items[striped_slot(i)] = slots[i];
            data_barrier();
#pragma unroll
            for (int r = 0; r < R; ++r) slots[r] = s_items[own_slot(r)];
        }
        // Rows past the end of the line load as zeros: they only reach totals that no
        // existing element and no published status depends on.
        A total[LV];
        if constexpr (kScanned) {
            A scanned = element_in(slots[0], 0);
            s_items[own_slot(0)] = ::cuda::std::bit_cast<S>(scanned);
#pragma unroll
            for (int r = 1; r < R; ++r) {
                scanned = item_op(scanned, element_in(slots[r], 0));
                s_items[own_slot(r)] = ::cuda::std::bit_cast<S>(scanned);
            }
            total[0] = scanned;
        } else {
            if (!kTransposed) {
#pragma unroll
                for (int r = 0; r < R; ++r) s_items[own_slot(r)] = slots[r];
            }
#pragma unroll
            for (int j = 0; j < LV; ++j) total[j] = op.neutral();
#pragma unroll
            for (int r = 0; r < R; ++r) {
#pragma unroll
                for (int e = 0; e < V; ++e) total[line_of(e)] = item_op(total[line_of(e)], element_in(slots[r], e));
            }
        }
        A warp_exclusive[LV];
#pragma unroll
        for (int j = 0; j < LV; ++j) {
#pragma unroll
            for (int d = Cols; d < 32; d *= 2) {
                const A up = __shfl_up_sync(kFullMask, total[j], d);
                if (lane >= d) total[j] = op(up, total[j]);
            }
            warp_exclusive[j] = __shfl_up_sync(kFullMask, total[j], Cols);
            if (lane >= 32 - Cols) s_warp_total[warp][col * LV + j] = total[j];
        }
        data_barrier();
        // The earlier slices' totals: every one that can be earlier is read before any is
        // reduced, so that the reads overlap (a loop of `warp` dependent reads cannot); the
        // reduction stops at the warp's own slice (the same for the whole warp).
        A slice_total[kWarps - 1][LV];
#pragma unroll
        for (int w = 0; w < kWarps - 1; ++w) {
#pragma unroll
            for (int j = 0; j < LV; ++j) slice_total[w][j] = s_warp_total[w][col * LV + j];
        }
        A prefix[LV];
#pragma unroll
        for (int j = 0; j < LV; ++j) prefix[j] = op.neutral();
#pragma unroll
        for (int w = 0; w < kWarps - 1; ++w) {
            if (w >= warp) break;
#pragma unroll
            for (int j = 0; j < LV; ++j) prefix[j] = op(prefix[j], slice_total[w][j]);
        }
#pragma unroll
        for (int j = 0; j < LV; ++j) within[j] = lane >= Cols ? op(prefix[j], warp_exclusive[j]) : prefix[j];
        if (warp == 0) {
            A aggregate[LV];
#pragma unroll
            for (int j = 0; j < LV; ++j) {
                aggregate[j] = op.neutral();
                for (int w = 0; w < kWarps; ++w) aggregate[j] = op(aggregate[j], s_warp_total[w][col * LV + j]);
                if (lane < Cols) s_tile_aggregate[buf][lane * LV + j] = aggregate[j];
            }
            publish_aggregate<Cols>(L, st, op, tile, op.start(a.exclusive), aggregate);
        }
    };

    // Data warps: finish the scan of the rows in buffer buf from the tile's prefix
    // (s_tile_prefix[buf]) and the thread's prefix within it, and store them.
    const auto finish = [&](tile_at tile, int buf, const A(&within)[LV], const rows_of &v, const scan_op<A> &item_op) {
        S *const s_items = s_buffers + buf * buffer_slots<S>();
        A running[LV];
#pragma unroll
        for (int j = 0; j < LV; ++j) running[j] = op(s_tile_prefix[buf][col * LV + j], within[j]);
        const bool line_by_line = !kTransposed && (a.out_step == 1 || a.out_step == -1);
        const bool through_shared = kTransposed || line_by_line;
        A previous = running[0];  // scanned buffers: the inclusive scan before row r
        // Row r's outputs, in a slot as stored (each thread overwrites only its own slots, once
        // read: no barrier is needed before).
        const auto output_row = [&](int r) {
            const S in = s_items[own_slot(r)];
            S out{};
            if constexpr (kScanned) {
                const A inclusive = item_op(running[0], ::cuda::std::bit_cast<A>(in));
                out = IO::with(out, 0, Traits::store(a.exclusive ? previous : inclusive));
                previous = inclusive;
            } else {
#pragma unroll
                for (int e = 0; e < V; ++e) {
                    A &acc = running[line_of(e)];
                    const A next = item_op(acc, element_in(in, e));
                    out = IO::with(out, e, Traits::store(a.exclusive ? acc : next));
                    acc = next;
                }
            }
            return out_reversed ? IO::reversed(out) : out;
        };
        if (V > 1 && line_by_line) {
            // Each V rows of V lines become V words, one per line of V rows, in the group's
            // slots (line j in slot j); a decreasing output holds a word's rows in reverse order.
#pragma unroll
            for (int r = 0; r < R; r += V) {
                S group[V];
#pragma unroll
                for (int e = 0; e < V; ++e) group[e] = output_row(r + e);
#pragma unroll
                for (int j = 0; j < V; ++j) {
                    S word{};
#pragma unroll
                    for (int e = 0; e < V; ++e) word = IO::with(word, e, IO::get(group[e], j));
                    s_items[own_slot(r + j)] = a.out_step < 0 ? IO::reversed(word) : word;
                }
            }
        } else {
            // Rows go through shared memory for line chunks and single-element lines, else
            // straight out (spelled so that words' column blocks know it at compile time:
            // measured 1 point on float16 medium_cols).
            int64_t offset = v.k0 * a.out_step;
#pragma unroll
            for (int r = 0; r < R; ++r, offset += a.out_step) {
                const S out = output_row(r);
                if (kTransposed || (V == 1 && line_by_line)) s_items[own_slot(r)] = out;
                else if (r < v.left) IO::store(v.out + offset, out);
            }
        }
        if (through_shared) {
            if (line_by_line && warp == 0) s_line_out[lane] = v.out;
            data_barrier();
        }
        if (line_by_line) {
            // A lane column c holds V lines (a word's) of kTileRows rows: kTileRows output words
            // of V rows each, the words of a warp's slice of rows in its thread's own slots.
            // Thread t writes word t % kTileRows of every kLineSteps-th lane column: within a
            // warp, 32 / V lanes per line take 32 consecutive rows, so that each line's run is
            // one contiguous store and the 32 slots read lie in distinct banks. For V = 1 that
            // is row t of line c.
            constexpr int kTileRows = kWarps * R;
            constexpr int kLineSteps = kThreads / kTileRows;
            constexpr int kLanesPerLine = 32 / V;
            const int unit = t % kTileRows;
            const int line_in_word = unit % 32 / kLanesPerLine;
            const int row = unit / 32 * 32 + unit % kLanesPerLine * V;  // the word's first row
            const int64_t k = tile.chunk * L.rows + row;
            // A decreasing output's word starts at its last row.
            const int64_t word_offset = k * a.out_step - (a.out_step < 0 ? V - 1 : 0) + line_in_word * out_word_line_step;
            const int slot = (row % R + line_in_word) * (kThreads + 1) + row / R * 32;  // of lane column 0
            if (k < a.n) {
                // Eight lines' output pointers and words are read before any is stored, so that the
                // reads overlap rather than each store waiting on two dependent shared-memory
                // reads (measured, H100: float16 82.2 -> 84.8 % of the copy on the transposed
                // input, bfloat16 81.3 -> 83.6, float32 90.0 -> 90.4, float64 91.0 -> 91.8).
                // Sixteen spill 36-44 bytes in the float32 pairs and the 8-byte column blocks.
                static_assert(kTransposed || Cols % kLineSteps == 0, "each thread stores the same number of lane columns");
                constexpr int kBatch = std::clamp(Cols / kLineSteps, 1, 8);
                const int first_col = t / kTileRows;
#pragma unroll
                for (int i0 = 0; i0 < Cols / kLineSteps; i0 += kBatch) {
                    T *outs[kBatch];
                    S words[kBatch];
#pragma unroll
                    for (int i = 0; i < kBatch; ++i) {
                        const int c = first_col + (i0 + i) * kLineSteps;
                        outs[i] = s_line_out[c];
                        words[i] = s_items[slot + c];
                    }
#pragma unroll
                    for (int i = 0; i < kBatch; ++i)
                        if (outs[i]) IO::store(outs[i] + word_offset, words[i]);
                }
            }
        } else if (kTransposed) {
            int64_t offset = v.k0 * a.out_step;
            const int64_t step = kRowStride * a.out_step;
#pragma unroll
            for (int i = 0; i < R; ++i, offset += step)
                if (i * kRowStride < v.left) IO::store(v.out + offset, s_items[striped_slot(i)]);
        }
    };

    // 1- and 2-byte elements (several a slot, each converted) have the most arithmetic a
    // byte: their stage and finish are inlined twice, each with its operator a constant, so
    // that the compiler does not compute both the sum and the product of every element and
    // select. Other sizes keep one copy (measured: two cost float32 sums up to 1.2 points).
    constexpr bool kOpCopies = sizeof(T) < 4;
    // The look-back of 4-byte elements has its operator a constant too: a long walk is bound by
    // its instructions (measured: float32 medium_cols +0.9 points). Others keep one look-back:
    // beside the two copies of stage and finish of 1- and 2-byte elements a third cost
    // bfloat16's column blocks 2.5 points (it spills), and float64's transposed input lost 0.4.
    constexpr bool kLookBackCopies = sizeof(T) == 4;
    const auto staged = [&](tile_at tile, int buf, const rows_of &v, A(&within)[LV]) {
        with_op_copies(kOpCopies, op, [&](const scan_op<A> &item_op) { stage(tile, buf, v, within, item_op); });
    };
    const auto finished = [&](tile_at tile, int buf, const A(&within)[LV], const rows_of &v) {
        with_op_copies(kOpCopies, op, [&](const scan_op<A> &item_op) { finish(tile, buf, within, v, item_op); });
    };
    const auto looked_back = [&](tile_at tile, int buf) {
        const A start = op.start(a.exclusive);
        with_op_copies(kLookBackCopies, op, [&](const scan_op<A> &walk_op) {
            look_back<Cols, LV>(L, st, walk_op, tile, start, s_tile_aggregate[buf], s_tile_prefix[buf]);
        });
    };

    // Every tile, the first included, is claimed from the counter (forward progress: see the
    // file's header), each only when the block can load it at once: a claimed tile that waits
    // behind another stalls every successor in its chain. Thread 0 finds a claim's tile
    // (tile_of_claim divides) and the block reads it from s_tile.
    const auto claim = [&] { return tile_of_claim(L, (int64_t)atomicAdd(st.counter, 1ull)); };
    // No tile can be claimed before the clear is done. Meanwhile each data thread fetches into L2
    // its rows of the tile of claim blockIdx.x, which the block's first claim most often takes
    // (blocks start, and so claim, in about index order): its loads then find them there.
    if (!lookback_warp) {
        const rows_of v = rows_of_tile(tile_of_claim(L, blockIdx.x));
#pragma unroll
        for (int i = 0; i < R; ++i)
            if (i * kRowStride < v.left) prefetch_l2(v.in + (v.k0 + (int64_t)i * kRowStride) * a.in_step);
    }
    wait_for_clear();
    if (t == 0) s_tile[0] = claim();
    if constexpr (!kPipelined) {
        __syncthreads();
        for (;;) {
            const tile_at tile = s_tile[0];
            if (tile.chunk == L.chunks) break;
            const rows_of v = rows_of_tile(tile);
            A within[LV];
            staged(tile, 0, v, within);
            if (warp == 0) {
                __syncwarp();  // lane 0's s_tile_aggregate, when Cols is 1
                looked_back(tile, 0);
            }
            __syncthreads();
            finished(tile, 0, within, v);
            __syncthreads();  // everyone is done with the tile and has read s_tile
            if (t == 0) s_tile[0] = claim();
            __syncthreads();
        }
    } else {
        if (t == 0) init(&s_data_sync, kThreads);
        __syncthreads();
        // A block that starts once every tile is taken has nothing to do (its first claim is past
        // the last tile, which it must neither stage nor look back from).
        if (s_tile[0].chunk == L.chunks) return;
        int buf = 0;
        A within[LV], next_within[LV];
        if (!lookback_warp) staged(s_tile[0], buf, rows_of_tile(s_tile[0]), within);
        __syncthreads();  // the tile's aggregate is in s_tile_aggregate
        for (;;) {
            const int next_buf = buf ^ 1;
            if (lookback_warp) {
                looked_back(s_tile[buf], buf);
            } else {
                // The other buffer was last read by the previous finish, and s_warp_total by the
                // previous stage, which every data thread has passed before this barrier.
                if (t == 0) s_tile[next_buf] = claim();
                data_barrier();
                const tile_at next = s_tile[next_buf];
                if (next.chunk < L.chunks) staged(next, next_buf, rows_of_tile(next), next_within);
            }
            // Read before the barrier: the next iteration's claim writes this slot. The line
            // pointers are found again rather than kept across the next tile's stage, which
            // would hold them in registers through its loads.
            const tile_at tile = s_tile[buf];
            __syncthreads();  // the prefix of this tile, and the next tile's id and aggregate
            const bool last = s_tile[next_buf].chunk == L.chunks;
            if (!lookback_warp) finished(tile, buf, within, rows_of_tile(tile));
            if (last) break;
            buf = next_buf;
#pragma unroll
            for (int j = 0; j < LV; ++j) within[j] = next_within[j];
        }
    }
}

// ---- One wave: small problems, every tile on the device at once ---------------------------
// A line chunk tile spends ~4.4 us beyond an empty launch (seven barriers, a shared-memory
// transpose, the pipelined walk; bench/NOTES.md, "Small problems"), and at 2^20 float32 every
// SM runs one. Where the axis packs into 16-byte vectors and the problem's tiles all fit on
// the device at once, a shorter path runs instead: tiles of 16 KB, four coalesced vectors a
// thread (warp w's 128 vectors in rows of 32, scanned by shuffles: no transpose), two block
// barriers; each block publishes its aggregate and then reads the aggregates of all of its
// line's earlier tiles at once, a thread each (up to kWaveReads), instead of walking back
// window by window: one round trip, whatever the tile's place in its line.
constexpr int kWaveThreads = 256;
constexpr int kWaveWarps = kWaveThreads / 32;
constexpr int kWaveVectors = 4;  // 16-byte vectors a thread
constexpr int64_t kWaveTileVectors = (int64_t)kWaveThreads * kWaveVectors;
constexpr int kWaveReads = 4;  // predecessor statuses a thread reads, at most
constexpr int64_t kWaveMaxChunks = (int64_t)kWaveThreads * kWaveReads;

// The problem as the one-wave kernel sees it: the axis packed into 16-byte vectors (n and the
// steps count vectors' elements as pack_axis leaves them), chunks of kWaveTileVectors.
struct one_wave_plan {
    scan_args a;
    int64_t chunks;  // tiles a line
    int64_t tiles;   // lines * chunks: the grid
};

// Whether p's layout takes the one-wave path (the axis packed by 16 bytes in both tensors, a
// line in at most kWaveMaxChunks tiles), and how. Whether its tiles fit on the device at once
// is the launch's question.
template <class T> bool make_one_wave_plan(const tscan_problem *p, one_wave_plan *w) {
    constexpr int kPer = 16 / (int)sizeof(T);
    w->a = make_scan_args(p);
    if (!axis_packed_by(w->a, kPer, sizeof(T))) return false;
    pack_axis(w->a, kPer, sizeof(T));
    w->chunks = (w->a.n + kWaveTileVectors - 1) / kWaveTileVectors;
    w->tiles = w->a.lines * w->chunks;
    return w->chunks <= kWaveMaxChunks;
}

// The one-wave workspace: the claim counter, alone in its 32-byte sector, then each tile's
// status, its aggregate in word_parts 64-bit words.
template <class A> int64_t one_wave_words(const one_wave_plan &w) { return kSectorWords + w.tiles * word_parts<A>(); }

// A block scans the tile it claims from the counter: chunk c % chunks of line c / chunks for
// claim c. Warp w holds the tile's vectors
// 128 w .. 128 w + 127, vector i of lane l being 128 w + 32 i + l, so that each load is
// coalesced. A tile's status is its aggregate in word_parts 64-bit words (flag low, a 32-bit
// part of the value high, as the line chunks' words), stored whole without a fence. A tile's
// predecessors have lower claims, so they belong to blocks that are running or done: every
// wait ends, however few of the grid's blocks are resident. Four blocks an SM at least (64
// registers a thread; 64-bit products spill 24 bytes): the 528 tiles that AUTO counts on an
// H100 (src/dispatch.c).
template <tscan_dtype D, bool Prod>
__global__ void __launch_bounds__(kWaveThreads, 4) one_wave_kernel(scan_args a, int64_t chunks, unsigned long long *words) {
    using Traits = dtype_traits<D>;
    using T = typename Traits::T;
    using A = typename Traits::A;
    constexpr int kPer = 16 / (int)sizeof(T);
    constexpr int kParts = word_parts<A>();
    const scan_op<A> op{Prod};
    const int t = threadIdx.x, lane = t % 32, warp = t / 32;
    // Tile c: its line, its chunk, and this thread's first vector k0 (vector i is k0 + 32 i). In
    // 32 bits: the grid is at most one block a tile, so tiles, chunks and lines fit (a 64-bit
    // division is a call).
    const auto tile_at = [&](unsigned c, unsigned &line, unsigned &chunk, int64_t &in_offset, int64_t &out_offset) {
        line = c / (unsigned)chunks;
        chunk = c - line * (unsigned)chunks;
        a.batch.offsets(line, in_offset, out_offset);
        return (int64_t)chunk * kWaveTileVectors + warp * (32 * kWaveVectors) + lane;
    };
    unsigned line, chunk;
    int64_t in_offset, out_offset;
    // No tile can be claimed before the clear is done. Meanwhile the thread fetches into L2 its
    // vectors of tile blockIdx.x, which the claim most often hands out (blocks start, and so
    // claim, in about index order): the loads after the claim then find them there.
    {
        const int64_t k0 = tile_at(blockIdx.x, line, chunk, in_offset, out_offset);
#pragma unroll
        for (int i = 0; i < kWaveVectors; ++i)
            if (k0 + 32 * i < a.n) prefetch_l2(reinterpret_cast<const T *>(a.in) + in_offset + (k0 + 32 * i) * a.in_step);
    }
    wait_for_clear();
    __shared__ unsigned s_claim;
    if (t == 0) s_claim = (unsigned)atomicAdd(words, 1ull);
    __syncthreads();
    unsigned long long *const statuses = words + kSectorWords;
    const int64_t k0 = tile_at(s_claim, line, chunk, in_offset, out_offset);
    const T *const in = reinterpret_cast<const T *>(a.in) + in_offset;
    T *const out = reinterpret_cast<T *>(a.out) + out_offset;

    // Vectors past the end of the line load as zeros: they come after every real one, so
    // only totals that nothing reads depend on them.
    item_pack<T, kWaveVectors * kPer> items;
#pragma unroll
    for (int i = 0; i < kWaveVectors; ++i) {
        const int64_t k = k0 + 32 * i;
        const uint4 v = k < a.n ? *reinterpret_cast<const uint4 *>(in + k * a.in_step) : make_uint4(0, 0, 0, 0);
        items.set_vector(i, v, a.in_step < 0);
    }
    // Every load issued before the scan starts: without this ordering point ptxas interleaved
    // the 64-bit integer sum's loads with its scan, each load waiting on the one before
    // (measured, H100, 2^16 int64: 7.5 us a launch against float64's 4.9).
    __syncwarp();

    // The warp's scan of its rows: before[i] is the reduction of the warp's vectors before
    // this lane's vector i, warp_total of all 128.
    A before[kWaveVectors], warp_total = op.neutral();
    {
        A scan[kWaveVectors];
#pragma unroll
        for (int i = 0; i < kWaveVectors; ++i) {
            scan[i] = op.neutral();
#pragma unroll
            for (int e = 0; e < kPer; ++e) scan[i] = op(scan[i], Traits::load(items.get(i * kPer + e)));
        }
#pragma unroll
        for (int d = 1; d < 32; d *= 2) {
#pragma unroll
            for (int i = 0; i < kWaveVectors; ++i) {
                const A up = __shfl_up_sync(kFullMask, scan[i], d);
                if (lane >= d) scan[i] = op(up, scan[i]);
            }
        }
#pragma unroll
        for (int i = 0; i < kWaveVectors; ++i) {
            const A up = __shfl_up_sync(kFullMask, scan[i], 1);
            before[i] = lane == 0 ? warp_total : op(warp_total, up);
            warp_total = op(warp_total, __shfl_sync(kFullMask, scan[i], 31));
        }
    }
    __shared__ A s_warp_total[kWaveWarps];
    __shared__ A s_read_total[kWaveWarps];
    if (lane == 0) s_warp_total[warp] = warp_total;
    __syncthreads();
    A warp_prefix = op.neutral(), aggregate = op.neutral();
#pragma unroll
    for (int w = 0; w < kWaveWarps; ++w) {
        if (w == warp) warp_prefix = aggregate;
        aggregate = op(aggregate, s_warp_total[w]);
    }
    unsigned long long *const line_words = statuses + (int64_t)line * chunks * kParts;
    if (t == 0 && chunk + 1 < chunks) {
#pragma unroll
        for (int q = 0; q < kParts; ++q)
            cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(line_words[chunk * kParts + q])
                .store(status_word(aggregate, q, kAggregate), cuda::memory_order_relaxed);
    }

    // The reduction of every earlier tile of the line: thread t reads tiles t, t + 256, ...,
    // all loads issued before any is waited on, then the block reduces what its threads read.
    A prefix = op.start(a.exclusive);
    if (chunk > 0) {
        unsigned long long word[kWaveReads][kParts];
#pragma unroll
        for (int r = 0; r < kWaveReads; ++r) {
            const int64_t j = t + r * kWaveThreads;
#pragma unroll
            for (int q = 0; q < kParts; ++q) word[r][q] = j < chunk ? load_relaxed(line_words[j * kParts + q]) : 0;
        }
        A read_total = op.neutral();
#pragma unroll
        for (int r = 0; r < kWaveReads; ++r) {
            const int64_t j = t + r * kWaveThreads;
            if (j >= chunk) break;
#pragma unroll
            for (int q = 0; q < kParts; ++q)
                while ((uint32_t)word[r][q] == kEmpty) word[r][q] = load_relaxed(line_words[j * kParts + q]);
            read_total = op(read_total, announced_value<A>(word[r]));
        }
#pragma unroll
        for (int d = 1; d < 32; d *= 2) read_total = op(read_total, __shfl_xor_sync(kFullMask, read_total, d));
        if (lane == 0) s_read_total[warp] = read_total;
        __syncthreads();
        A earlier = op.neutral();
#pragma unroll
        for (int w = 0; w < kWaveWarps; ++w) earlier = op(earlier, s_read_total[w]);
        prefix = op(prefix, earlier);
    }

    const A base = op(prefix, warp_prefix);
#pragma unroll
    for (int i = 0; i < kWaveVectors; ++i) {
        A running = op(base, before[i]);
#pragma unroll
        for (int e = 0; e < kPer; ++e) {
            const A next = op(running, Traits::load(items.get(i * kPer + e)));
            items.set(i * kPer + e, Traits::store(a.exclusive ? running : next));
            running = next;
        }
        const int64_t k = k0 + 32 * i;
        if (k < a.n) *reinterpret_cast<uint4 *>(out + k * a.out_step) = items.vector(i, a.out_step < 0);
    }
}

template <tscan_dtype D> struct lookback_workspace {
    static tscan_status run(const tscan_problem *p, size_t *bytes) {
        constexpr tscan_dtype K = kernel_dtype(D);
        using T = typename dtype_traits<K>::T;
        const lookback_plan plan = make_plan<T>(p);
        using A = typename dtype_traits<K>::A;
        *bytes = plan_workspace<A>(make_layout<T, A>(plan), plan).total;
        one_wave_plan wave;  // the launch decides between the two: room for either
        if (make_one_wave_plan<T>(p, &wave)) *bytes = std::max(*bytes, (size_t)one_wave_words<A>(wave) * sizeof(unsigned long long));
        return TSCAN_SUCCESS;
    }
};

// Signed integers run the kernels of their unsigned twins (kernel_dtype): 24 kernels, not 36.
template <tscan_dtype D> struct lookback_launch {
    static constexpr tscan_dtype K = kernel_dtype(D);
    using T = typename dtype_traits<K>::T;
    using A = typename dtype_traits<K>::A;
    // With no workspace, only checks that the device can run the kernel that p would launch.
    static tscan_status run(const tscan_problem *p, void *workspace, cudaStream_t stream) {
        one_wave_plan wave;
        if (workspace && make_one_wave_plan<T>(p, &wave)) {
            bool ran = false;
            const tscan_status s = p->op == TSCAN_OP_PROD ? launch_one_wave<true>(wave, workspace, stream, &ran)
                                                          : launch_one_wave<false>(wave, workspace, stream, &ran);
            if (s != TSCAN_SUCCESS || ran) return s;
        }
        const lookback_plan plan = make_plan<T>(p);
        if (plan.cols == kLineChunk) return launch_line_chunk<axis_pack<T>()>(plan, workspace, stream);
        return plan.v > 1 ? launch_shape<kColumnBlock, line_pack<T>()>(plan, workspace, stream)
                          : launch_shape<kColumnBlock, 1>(plan, workspace, stream);
    }

    // The line chunk kernel of plan.v: one of axis_pack's halvings down to min_axis_pack, or 1.
    template <int V> static tscan_status launch_line_chunk(const lookback_plan &plan, void *workspace, cudaStream_t stream) {
        if constexpr (V >= min_axis_pack<T>()) {
            if (plan.v == V) return launch_shape<kLineChunk, V>(plan, workspace, stream);
            return launch_line_chunk<V / 2>(plan, workspace, stream);
        } else {
            return launch_shape<kLineChunk, 1>(plan, workspace, stream);
        }
    }

    template <int Cols, int V>
    static tscan_status launch_shape(const lookback_plan &plan, void *workspace, cudaStream_t stream) {
        // Shared memory from the device, not from Hopper: a block that does not fit is declined,
        // and AUTO runs another strategy.
        const size_t smem = dynamic_smem_bytes<T, V>();
        const tscan_device_info *dev;
        cudaFuncAttributes attributes;
        if (!workspace && !tscan_device_present()) return TSCAN_SUCCESS;  // a query, with no device to fit: yes
        tscan_status s = tscan_current_device_info(&dev);
        if (s != TSCAN_SUCCESS) return s;
        TSCAN_CUDA_CHECK(cudaFuncGetAttributes(&attributes, lookback_kernel<K, Cols, V>));
        if (smem + attributes.sharedSizeBytes > dev->smem_per_block_optin)
            return tscan_fail(TSCAN_ERROR_NOT_SUPPORTED,
                              "lookback's blocks need %zu bytes of shared memory; device %d (%s) gives a block %zu",
                              smem + attributes.sharedSizeBytes, dev->ordinal, dev->name, dev->smem_per_block_optin);
        if (!workspace) return TSCAN_SUCCESS;
        tile_layout L = make_layout<T, A>(plan);
        const workspace_plan w = plan_workspace<A>(L, plan);
        char *base = static_cast<char *>(workspace);
        tile_status<A> st;
        st.counter = reinterpret_cast<unsigned long long *>(base);
        st.flags = reinterpret_cast<uint32_t *>(base + sizeof(unsigned long long));
        st.words = reinterpret_cast<unsigned long long *>(base + w.values);
        st.aggregate = reinterpret_cast<A *>(base + w.values);
        st.inclusive = st.aggregate + L.status_tiles * plan.tile_lines();

        // Persistent grid: as many blocks as can be resident, each claiming tiles until none is left.
        const int threads = block_threads<T, V>();
        TSCAN_CUDA_CHECK(cudaFuncSetAttribute(lookback_kernel<K, Cols, V>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        int64_t resident = 0;
        int sms = 0;
        s = resident_blocks(lookback_kernel<K, Cols, V>, threads, smem, &resident, &sms);
        if (s != TSCAN_SUCCESS) return s;
        if (resident < 1) return tscan_fail(TSCAN_ERROR_INTERNAL, "lookback_kernel cannot be resident on this device");
        const unsigned grid = (unsigned)(L.tiles < resident ? L.tiles : resident);
        L.band = claim_band(L.groups, resident);

        return launch_after_clear(lookback_kernel<K, Cols, V>, grid, threads, smem, stream, st.counter,
                                  (int64_t)((w.cleared + 7) / 8), sms, plan.a, plan.out_word_line_step, L, st);
    }

    // The one-wave path, when the plan's tiles all fit on the device at once (*ran says
    // whether it ran).
    template <bool Prod>
    static tscan_status launch_one_wave(const one_wave_plan &wave, void *workspace, cudaStream_t stream, bool *ran) {
        const auto kernel = one_wave_kernel<K, Prod>;
        int64_t resident = 0;
        int sms = 0;
        const tscan_status s = resident_blocks(kernel, kWaveThreads, 0, &resident, &sms);
        if (s != TSCAN_SUCCESS) return s;
        *ran = wave.tiles <= resident;
        if (!*ran) return TSCAN_SUCCESS;
        unsigned long long *const words = static_cast<unsigned long long *>(workspace);
        return launch_after_clear(kernel, (unsigned)wave.tiles, kWaveThreads, 0, stream, words, one_wave_words<A>(wave), sms,
                                  wave.a, wave.chunks, words);
    }
};

tscan_status workspace_size(const tscan_problem *p, size_t *bytes) {
    return dispatch_dtype<lookback_workspace>(p->dtype, p, bytes);
}

tscan_status check(const tscan_problem *p) { return dispatch_dtype<lookback_launch>(p->dtype, p, nullptr, cudaStream_t{}); }

tscan_status launch(const tscan_problem *p, void *workspace, size_t, cudaStream_t stream) {
    if (!workspace || (uintptr_t)workspace % 8 != 0)
        return tscan_fail(TSCAN_ERROR_INVALID_ARGUMENT, "workspace %p is null or not 8-byte aligned (lookback needs 8)",
                          workspace);
    return dispatch_dtype<lookback_launch>(p->dtype, p, workspace, stream);
}

}  // namespace
}  // namespace tscan

extern "C" int tscan_lookback_packs_words(const tscan_problem *p) {
    switch (p->elem_size) {
    case 1: return tscan::make_plan<uint8_t>(p).v > 1;
    case 2: return tscan::make_plan<uint16_t>(p).v > 1;
    default: return 0;
    }
}

extern "C" int64_t tscan_lookback_one_wave_tiles(const tscan_problem *p) {
    tscan::one_wave_plan w;
    bool takes = false;
    switch (p->elem_size) {
    case 1: takes = tscan::make_one_wave_plan<uint8_t>(p, &w); break;
    case 2: takes = tscan::make_one_wave_plan<uint16_t>(p, &w); break;
    case 4: takes = tscan::make_one_wave_plan<uint32_t>(p, &w); break;
    default: takes = tscan::make_one_wave_plan<uint64_t>(p, &w); break;
    }
    return takes ? w.tiles : 0;
}

extern "C" const tscan_strategy tscan_strategy_lookback = {TSCAN_ALGO_LOOKBACK, tscan::check,
                                                           tscan::workspace_size, tscan::launch};
