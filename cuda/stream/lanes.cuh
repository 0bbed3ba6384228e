// stream/lanes.cuh - the stream's second form: a strided axis whose inner extent is small (a
// packed (outer, n, I) block scanned along n, 2 <= I <= kMaxLanes). The tensor is one flat
// stream of rows of I elements; each of the I lanes carries its own running value, and a row
// that starts a line (row % n == 0) resets them all. A tile is a run of whole rows (32 or 64 KB
// of shared memory: kLanesTileBytes): loaded coalesced into shared memory, scanned down each
// lane by groups of threads, the groups joined by a scan in shared memory, the result staged
// in shared memory and stored coalesced.
// Tiles are chained by decoupled look-back of I values each (one status word per lane and
// 32-bit part, as lookback's column blocks), claimed in scan order, one a block, like the
// segment form: a tile waits only on tiles claimed before it. Lines no longer than a tile make
// tiles of whole lines, which look back at nothing.
//
// The input may instead run along its lines (a transposed block: each lane's line contiguous,
// the output's rows across them): a tile then loads each lane's run of rows as 16-byte vectors
// into a lane-major buffer, and scans and stores it as above (lanes_args::lane_major).
#pragma once

#include <numeric>
#include "stream/kernel.cuh"

namespace tscan {
namespace {

constexpr int kMaxLanes = kernel_policy::stream_max_lanes;  // status words a tile, per 32-bit part
// Bytes of shared memory a tile's buffers take (bench/NOTES.md §2, "Stream"): the plain size
// keeps 6 blocks of 4-byte tiles an SM; wide tiles (3 blocks) serve lines longer than
// kLanesWideMinTiles plain ones whose lanes' statuses take kLanesWideStatusWords 32-bit parts
// or more. Every tile of a long line looks back, a window of 256 / I tiles a round trip, which
// keeps up with the tiles claimed only if they are big enough.
constexpr int64_t kLanesTileBytes = kernel_policy::lanes_tile_bytes;
constexpr int64_t kLanesWideTileBytes = kernel_policy::lanes_wide_tile_bytes;
constexpr int kLanesWideStatusWords = kernel_policy::lanes_wide_status_words;
constexpr int kLanesWideMinTiles = kernel_policy::lanes_wide_min_tiles;
// Bytes past a lane-major buffer's tile: a pitch exceeds the rows by under three vectors less
// two elements, 46 bytes at most.
constexpr int kLanePadBytes = kMaxLanes * 48;

// Elements a tile: a power of two, so that the scanned tile (staged in shared memory whole) and
// the loaded one, where it has a buffer of its own, fit tile_bytes. The tile is scanned in
// place where input and output have one width and the input is not lane-major.
constexpr bool lanes_in_place(size_t in_size, size_t out_size, bool lane_major) {
    return in_size == out_size && !lane_major;
}
constexpr int64_t lanes_tile_elements(size_t in_size, size_t out_size, bool lane_major, int64_t tile_bytes) {
    const int64_t per_element = (int64_t)(out_size + (lanes_in_place(in_size, out_size, lane_major) ? 0 : in_size));
    int64_t elements = 16;
    while (2 * elements * per_element <= tile_bytes) elements *= 2;
    return elements;
}
// A tile's dynamic shared memory: the staged tile, then the loaded one unless in place.
constexpr size_t lanes_smem_bytes(size_t in_size, size_t out_size, bool lane_major, int64_t tile_bytes) {
    const int64_t elements = lanes_tile_elements(in_size, out_size, lane_major, tile_bytes);
    return (size_t)(elements * (int64_t)out_size) +
           (lanes_in_place(in_size, out_size, lane_major)
                ? 0
                : (size_t)(elements * (int64_t)in_size) + (lane_major ? kLanePadBytes : 0));
}
// Every lanes kernel's limit: a wide tile's, the largest.
constexpr size_t kLanesMaxSmemBytes = (size_t)kLanesWideTileBytes + kLanePadBytes;

// The problem as the lanes kernel sees it: `rows` rows of `lanes` elements from `in` and `out`
// (their lowest addresses; both tensors laid out alike unless lane_major), lines of n rows.
struct lanes_args {
    const char *in;
    char *out;
    int64_t rows;
    int64_t n;
    int lanes;          // the kernel's: 32-bit words of a row where packed_size is set
    // 1 or 2: a sum of integers of this size whose rows fill whole 32-bit words (I * size a
    // multiple of 4, both bases on the 4-byte grid), scanned as words of 4 / size neighbouring
    // lanes (packed_lines_op), so that the shared-memory passes take 4 / size elements at once;
    // else 0
    int packed_size;
    int64_t tile_rows;  // whole 16-byte vectors of both tensors; whole lines where a line fits
    int64_t tiles;
    int group_rows;     // rows each group of threads scans down its lane (lanes_group_rows)
    int status_words;   // a tile's, in whole 32-byte sectors
    bool in_aligned;    // 16-byte aligned bases: tiles load and store as vectors
    bool out_aligned;
    // Each group stores its rows straight from registers rather than through the staged tile:
    // where a row's lanes fill a 32-byte sector with 4- or 8-byte elements, the stores are whole
    // sectors already and overlap the scan (H100, forced stream: 5592405x3x4 float64 80.6 direct
    // against 61.1 staged; rows of 8 bytes, 3355443x10x2 float32, 31 direct against 71 staged;
    // bench/NOTES.md §2, "narrow blocks").
    bool direct_stores;
    // The input runs along its lines: row k of line o, lane i at in + o * in_line + i * in_lane
    // + k (elements). A tile loads lane by lane into a buffer `pitch` elements a lane, an odd
    // number of 16-byte vectors, so that the lanes start on distinct banks (lanes_pitch);
    // vector_magic and row_magic divide by the vectors of a lane and by the tile's rows.
    bool lane_major;
    int pitch;
    uint32_t vector_magic, row_magic;
    int64_t in_line, in_lane;
    bool reverse;
    bool exclusive;
    int tile_elements;  // the staged tile's buffer; the loaded one's (unless in place) follows it
    size_t smem_bytes;  // the tile's dynamic shared memory (lanes_smem_bytes)
};

// Shared-memory wavefronts of one access of the first row of every group in the block's first
// warp (the others differ only where I does not divide 32): a group scans `group_rows`
// consecutive rows of its lane. Row-major (pitch 0), its threads read `lanes` neighbouring
// elements `group_rows` rows after the previous group's; lane-major, lane i's rows start
// i * pitch elements in, and the groups step group_rows along them. The lanes of a word share
// it; groups whose rows fall on one bank cost one wavefront each. Words come in increasing
// order, so a repeat is the previous word. Planned once a call, so it stays a few hundred steps.
inline int lanes_wavefronts(int64_t group_rows, int lanes, size_t elem_size, int64_t pitch = 0) {
    const int groups = kStreamThreads / lanes;
    int in_bank[32] = {0};
    int64_t previous = -1;
    for (int t = 0; t < 32 && t / lanes < groups; ++t) {
        const int64_t element = pitch ? (t % lanes) * pitch + (t / lanes) * group_rows
                                      : (t / lanes) * group_rows * lanes + t % lanes;
        const int64_t byte = element * (int64_t)elem_size;
        for (int64_t w = byte / 4; w <= (byte + (int64_t)elem_size - 1) / 4; ++w)
            if (w != previous) ++in_bank[w % 32], previous = w;
    }
    int worst = 0;
    for (int bank = 0; bank < 32; ++bank) worst = std::max(worst, in_bank[bank]);
    return worst;
}

// Rows a group scans: enough for the groups to cover a tile, lengthened by up to an eighth where
// that spreads the groups' rows over more banks (a tile of 2^k rows in 2^j groups otherwise
// puts every group of a warp on one bank: 8 ways for 4 lanes of bytes). A lane-major tile
// (pitch > 0) counts its reads of the loaded buffer beside its writes of the row-major staged one.
inline int lanes_group_rows(int64_t tile_rows, int lanes, size_t in_size, size_t out_size, int64_t pitch = 0) {
    const int groups = kStreamThreads / lanes;
    const int64_t least = (tile_rows + groups - 1) / groups;
    const auto cost = [&](int64_t rows) {
        return pitch ? lanes_wavefronts(rows, lanes, in_size, pitch) + lanes_wavefronts(rows, lanes, out_size)
                     : lanes_wavefronts(rows, lanes, in_size);
    };
    int64_t best = least;
    int best_cost = cost(least);
    for (int64_t rows = least + 1; rows <= least + std::max<int64_t>(1, least / 8); ++rows) {
        const int c = cost(rows);
        if (c < best_cost) best = rows, best_cost = c;
    }
    return (int)best;
}

// A lane-major buffer's pitch in elements: room for a lane's rows from any place in a 16-byte
// vector (a lane's run starts wherever its line puts it, and keeps that place in the buffer so
// that both move whole vectors), in an odd number of vectors, so that lanes start on distinct
// banks.
inline int lanes_pitch(int64_t tile_rows, size_t elem_size) {
    const int64_t per_vector = 16 / (int64_t)elem_size;
    int64_t pitch = (tile_rows + 2 * per_vector - 2) / per_vector * per_vector;
    if (pitch / per_vector % 2 == 0) pitch += per_vector;
    return (int)pitch;
}
// ceil(2^32 / d): e * magic / 2^32 is e / d, rounded down, while e * d < 2^32.
inline uint32_t division_magic(int64_t d) { return (uint32_t)((((uint64_t)1 << 32) + (uint64_t)d - 1) / (uint64_t)d); }

// The layout the lanes form takes: an output that is a packed (outer, n, I) block scanned
// along n in steps of I, and an input laid out alike or running along its lines (lane_major).
bool lanes_layout(const tscan_problem *p, lanes_args *a) {
    const int64_t lanes = p->out_step;
    if (lanes < 2 || lanes > kMaxLanes || p->batch_ndim < 1 || p->batch_ndim > 2) return false;
    const int last = (int)p->batch_ndim - 1;
    if (p->batch_sizes[last] != lanes || p->out_batch_strides[last] != 1) return false;
    if (last == 1 && p->out_batch_strides[0] != p->n * lanes) return false;
    const bool packed_in = p->in_step == lanes && p->in_batch_strides[last] == 1 &&
                           (last == 0 || p->in_batch_strides[0] == p->n * lanes);
    a->lane_major = !packed_in && p->in_step == 1;
    if (!packed_in && !a->lane_major) return false;
    a->in_lane = p->in_batch_strides[last];
    a->in_line = last == 1 ? p->in_batch_strides[0] : 0;
    const bool integer = p->dtype != TSCAN_FLOAT16 && p->dtype != TSCAN_BFLOAT16;
    const bool on_words = (uintptr_t)p->in % 4 == 0 && (uintptr_t)p->out % 4 == 0;
    a->packed_size = packed_in && p->op == TSCAN_OP_SUM && integer && p->elem_size <= 2 &&
                             p->out_elem_size == p->elem_size && lanes * (int64_t)p->elem_size % 4 == 0 && on_words
                         ? (int)p->elem_size
                         : 0;
    const size_t in_size = a->packed_size ? 4 : p->elem_size, out_size = a->packed_size ? 4 : p->out_elem_size;
    a->in = p->in;
    a->out = p->out;
    a->rows = p->n * (p->lines / lanes);
    a->n = p->n;
    a->lanes = (int)(a->packed_size ? lanes * (int64_t)p->elem_size / 4 : lanes);
    // Tiles start on the 16-byte grid of both tensors (of the output where the input is
    // lane-major): in steps of at most 16 rows (the output's elements are at least as wide as
    // the input's, both powers of two), and a tile (4 KB or more) holds at least 32 rows of
    // kMaxLanes 8-byte elements. Where lines in such steps fit a tile, tiles take whole lines:
    // every tile then starts a line and none waits for another.
    int64_t step = 1;
    while (step * a->lanes * (int64_t)(a->lane_major ? out_size : in_size) % 16 != 0) ++step;
    // Wide tiles where lines run over several plain ones and the lanes' statuses are wide.
    const int64_t parts = out_size == 8 ? 2 : 1;  // word_parts of the output's accumulator
    const int64_t plain_rows = lanes_tile_elements(in_size, out_size, a->lane_major, kLanesTileBytes) / a->lanes;
    const bool wide = p->n > kLanesWideMinTiles * plain_rows && a->lanes * parts >= kLanesWideStatusWords;
    const int64_t tile_bytes = wide ? kLanesWideTileBytes : kLanesTileBytes;
    a->tile_elements = (int)lanes_tile_elements(in_size, out_size, a->lane_major, tile_bytes);
    a->smem_bytes = lanes_smem_bytes(in_size, out_size, a->lane_major, tile_bytes);
    const int64_t most_rows = a->tile_elements / a->lanes;
    const int64_t whole_lines = std::lcm(p->n, step);
    const int64_t unit = whole_lines <= most_rows ? whole_lines : step;
    a->tile_rows = most_rows / unit * unit;
    a->tiles = (a->rows + a->tile_rows - 1) / a->tile_rows;
    a->pitch = a->lane_major ? lanes_pitch(a->tile_rows, in_size) : 0;
    a->row_magic = a->lane_major ? division_magic(a->tile_rows) : 0;
    a->vector_magic = a->lane_major ? division_magic(a->pitch * (int64_t)in_size / 16) : 0;
    a->group_rows = lanes_group_rows(a->tile_rows, a->lanes, in_size, out_size, a->pitch);
    a->status_words = (int)((a->lanes * parts + kSectorWords - 1) / kSectorWords * kSectorWords);
    a->in_aligned = (uintptr_t)p->in % 16 == 0;
    a->out_aligned = (uintptr_t)p->out % 16 == 0;
    a->direct_stores = out_size >= 4 && a->lanes * (int64_t)out_size >= 32;
    a->reverse = p->reverse != 0;
    a->exclusive = p->exclusive != 0;
    return true;
}

// The lane of element e of a lane-major tile of `count` rows (e counted lane by lane), by
// row_magic (e and the rows stay under 2^16 in a tile of 64 KB at most). A partial last tile
// has fewer rows: it divides.
__device__ __forceinline__ int lane_of_element(const lanes_args &a, int e, int count) {
    return count == a.tile_rows ? (int)__umulhi((unsigned)e, a.row_magic) : e / count;
}

// Block c scans logical tile c. Thread t serves lane t % I for group t / I of the tile's rows
// (threads past the last whole group idle while the groups scan). PackedSize: the lanes are
// words of packed_lines_op (In and Out UINT32, Prod false). LaneMajor: a.lane_major's kernel
// (its own buffer for the loaded tile; the others load in place where widths allow).
template <tscan_dtype In, tscan_dtype Out, bool Prod, int PackedSize = 0, bool LaneMajor = false>
__global__ void __launch_bounds__(kStreamThreads) lanes_kernel(const __grid_constant__ lanes_args a,
                                                               unsigned long long *words) {
    using TI = typename dtype_traits<In>::T;
    using TO = typename dtype_traits<Out>::T;
    using A = typename dtype_traits<Out>::A;
    using Op = std::conditional_t<PackedSize == 0, scan_op<A>, packed_lines_op<PackedSize>>;
    static_assert(PackedSize == 0 || (In == TSCAN_UINT32 && Out == TSCAN_UINT32 && !Prod), "words of packed lanes");
    constexpr int kParts = word_parts<A>();
    static_assert(!LaneMajor || PackedSize == 0, "words of lanes are packed blocks");
    constexpr bool kInPlace = lanes_in_place(sizeof(TI), sizeof(TO), LaneMajor);  // the scanned tile overwrites the loaded one
    const Op op{Prod};
    const int t = threadIdx.x, lanes = a.lanes;

    wait_for_clear();
    __shared__ int64_t s_claim;
#ifdef __CUDACC__
    extern __shared__ uint4 s_lanes_tiles[];  // a.smem_bytes
#else  // tests/emulated: blocks run one after another, and __shared__ is static
    static uint4 s_lanes_tiles[kLanesMaxSmemBytes / 16];
#endif
    uint4 *const s_staged = s_lanes_tiles, *const s_loaded = s_lanes_tiles + a.tile_elements * sizeof(TO) / 16;
    __shared__ A s_value[kStreamThreads];
    __shared__ int s_starts[kStreamThreads];
    __shared__ A s_prefix[kMaxLanes];
    if (t == 0) s_claim = (int64_t)atomicAdd(words, 1ull);
    __syncthreads();
    const int64_t c = s_claim;
    unsigned long long *const statuses = words + kSectorWords;

    // Memory rows [lo, hi) of the tile; logical row j of it is lo + j, or hi - 1 - j backwards,
    // and sits at scan row base + j.
    const int64_t j_tile = a.reverse ? a.tiles - 1 - c : c;
    const int64_t lo = j_tile * a.tile_rows, hi = min(lo + a.tile_rows, a.rows);
    const int count = (int)(hi - lo);
    const int64_t base = a.reverse ? a.rows - hi : lo;
    const int64_t first = lo * lanes;  // the tile's first element
    const int elements = count * lanes;
    const TI *const in = reinterpret_cast<const TI *>(a.in) + first;
    TO *const out = reinterpret_cast<TO *>(a.out) + first;
    uint4 *const s_raw = kInPlace ? s_staged : s_loaded;
    const TI *const raw = reinterpret_cast<const TI *>(s_raw);
    TO *const staged = reinterpret_cast<TO *>(s_staged);
    // Lane-major: the tile's rows [0, split) lie in line line_lo from element k_lo (lane 0's
    // run starts at `run0`), the rest in the lines after. A lane's rows sit in its buffer at
    // lane * pitch + shift + row, shift being where its run starts in a 16-byte vector; a tile
    // across a line's end loads element by element, unshifted.
    const TI *const from = reinterpret_cast<const TI *>(a.in);
    const int64_t line_lo = LaneMajor ? lo / a.n : 0, k_lo = lo - line_lo * a.n, split = a.n - k_lo;
    const TI *const run0 = from + line_lo * a.in_line + k_lo;
    const bool whole_runs = LaneMajor && split >= count;
    constexpr int kPerVector = 16 / (int)sizeof(TI);
    const auto shift_of = [&](int lane) {
        return whole_runs ? (int)((uintptr_t)(run0 + lane * a.in_lane) % 16 / sizeof(TI)) : 0;
    };
    if constexpr (LaneMajor) {
        TI *const loaded = reinterpret_cast<TI *>(s_raw);
        constexpr int kBatch = 4;
        if (whole_runs) {
            // Vector u of the buffer is vector v = u % (pitch / kPerVector) of lane u / (pitch /
            // kPerVector): consecutive threads take consecutive vectors of a run, whole where
            // the vector lies in the tile's rows, else element by element.
            const int per_lane = a.pitch / kPerVector, vectors = lanes * per_lane;
            for (int u0 = 0; u0 < vectors; u0 += kBatch * kStreamThreads) {
                uint4 x[kBatch];
                bool whole[kBatch];
#pragma unroll
                for (int m = 0; m < kBatch; ++m) {
                    const int u = u0 + m * kStreamThreads + t;
                    whole[m] = false;
                    if (u < vectors) {
                        const int lane = (int)__umulhi((unsigned)u, a.vector_magic), v = u - lane * per_lane;
                        const TI *const run = run0 + lane * a.in_lane;
                        const int row0 = v * kPerVector - shift_of(lane);
                        const TI *const at = run + row0;
                        whole[m] = row0 >= 0 && row0 + kPerVector <= count;
                        if (whole[m]) {
                            x[m] = *reinterpret_cast<const uint4 *>(at);
                        } else {
#pragma unroll
                            for (int e = 0; e < kPerVector; ++e)
                                if (row0 + e >= 0 && row0 + e < count) loaded[u * kPerVector + e] = at[e];
                        }
                    }
                }
#pragma unroll
                for (int m = 0; m < kBatch; ++m)
                    if (whole[m]) s_raw[u0 + m * kStreamThreads + t] = x[m];
            }
        } else {
            // Element e of the tile counted lane by lane: consecutive threads on consecutive
            // elements of a run, which crosses into the following lines.
            constexpr int kElements = 8;
            for (int e0 = 0; e0 < elements; e0 += kElements * kStreamThreads) {
                TI x[kElements];
#pragma unroll
                for (int m = 0; m < kElements; ++m) {
                    const int e = e0 + m * kStreamThreads + t;
                    if (e < elements) {
                        const int lane = lane_of_element(a, e, count), row = e - lane * count;
                        const TI *p;
                        if (row < split) {
                            p = run0 + row;
                        } else {  // n, k_lo and the row all under 2^16 where lines end inside tiles
                            const int k = (int)k_lo + row, n = (int)a.n, later = k / n;
                            p = from + (line_lo + later) * a.in_line + (k - later * n);
                        }
                        x[m] = p[lane * a.in_lane];
                    }
                }
#pragma unroll
                for (int m = 0; m < kElements; ++m) {
                    const int e = e0 + m * kStreamThreads + t;
                    if (e < elements) {
                        const int lane = lane_of_element(a, e, count);
                        loaded[lane * a.pitch + e - lane * count] = x[m];
                    }
                }
            }
        }
    } else {
        // Whole 16-byte vectors where the base is aligned, then the rest element by element.
        int vectored = 0;
        if (a.in_aligned) {
            const int whole = elements * (int)sizeof(TI) / 16;
            for (int v = t; v < whole; v += kStreamThreads) s_raw[v] = reinterpret_cast<const uint4 *>(in)[v];
            vectored = whole * 16 / (int)sizeof(TI);
        }
        for (int e = vectored + t; e < elements; e += kStreamThreads) reinterpret_cast<TI *>(s_raw)[e] = in[e];
    }
    __syncthreads();

    const int groups = kStreamThreads / lanes;
    const int lane = t % lanes, group = t / lanes;
    const bool active = group < groups;
    const int j0 = min(group * a.group_rows, count), j1 = min(j0 + a.group_rows, count);
    const auto memory_row = [&](int j) { return a.reverse ? count - 1 - j : j; };  // within the tile
    // Row r of the thread's lane in the loaded tile.
    const int lane_base = LaneMajor ? lane * a.pitch + shift_of(lane) : lane;
    const auto raw_at = [&](int r) { return LaneMajor ? lane_base + r : r * lanes + lane_base; };
    // Rows from j0 to the next line start (0: row j0 starts one), then a start every n rows: in
    // 32 bits, count + 1 standing for any distance past the tile's rows.
    const int64_t base_place = base % a.n;  // the tile's first row's place in its line
    int64_t place0 = base_place + j0;       // under n + count: one step back, or short lines
    if (place0 >= a.n) place0 = a.n > count ? place0 - a.n : (int)place0 % (int)a.n;
    const int n_rows = (int)min(a.n, (int64_t)count + 1);
    const int to_start0 = place0 == 0 ? 0 : (int)min(a.n - place0, (int64_t)count + 1);

    // Pass 1: each group's segment of its lane.
    segment<A> mine = {false, op.neutral()};
    if (active) {
        int to_start = to_start0;
        for (int j = j0; j < j1; ++j) {
            if (to_start == 0) mine = {true, op.start(a.exclusive)}, to_start = n_rows;
            mine.value = op(mine.value, stream_load<In, Out>(raw[raw_at(memory_row(j))]));
            --to_start;
        }
    }
    // The groups of a lane joined, nearest first: after the loop, the segment of groups 0..group.
    s_value[t] = mine.value;
    s_starts[t] = mine.starts;
    __syncthreads();
    for (int d = 1; d < groups; d *= 2) {
        segment<A> earlier = {false, op.neutral()};
        const bool has = active && group >= d;
        if (has) earlier = {s_starts[t - d * lanes] != 0, s_value[t - d * lanes]};
        __syncthreads();
        if (has) {
            mine = then(op, earlier, mine);
            s_value[t] = mine.value;
            s_starts[t] = mine.starts;
        }
        __syncthreads();
    }
    const segment<A> before = active && group > 0
                                  ? segment<A>{s_starts[t - lanes] != 0, s_value[t - lanes]}
                                  : segment<A>{false, op.neutral()};

    // The tile's segment of each lane is its last group's; every lane holds a start or none.
    const bool tile_starts = s_starts[(groups - 1) * lanes] != 0;
    const bool has_successor = c + 1 < a.tiles;
    unsigned long long *const mine_words = statuses + c * a.status_words;
    if (t < lanes && has_successor)
        publish_words(mine_words + t * kParts, s_value[(groups - 1) * lanes + t], tile_starts ? kInclusive : kAggregate);
    // Look back, unless the tile's first row starts a line: windows of `depth` tiles, thread t
    // reading lane t % I of tile top - t / I, all loads in flight at once; then a thread a lane
    // folds its window, nearest first, up to the nearest inclusive prefix. Rounds go on while a
    // lane has not found one (the first tile always holds one: row 0 starts a line).
    const bool needs_prefix = c > 0 && base_place != 0;
    if (needs_prefix) {
        __shared__ A s_window[kStreamThreads];
        __shared__ int s_window_inclusive[kStreamThreads];
        __shared__ int s_lane_done[kMaxLanes];
        const int depth = groups;  // kStreamThreads / I tiles a round
        A prefix = op.neutral();
        if (t < lanes) s_lane_done[t] = 0;
        __syncthreads();
        for (int64_t top = c - 1;; top -= depth) {
            if (active && !s_lane_done[lane]) {
                const int64_t k = top - group;
                A value = op.neutral();
                int inclusive = 1;  // before the first tile: nothing more to read
                if (k >= 0) {
                    unsigned long long w[kParts];
                    wait_for_words(statuses + k * a.status_words + lane * kParts, w);
                    value = announced_value<A>(w);
                    inclusive = (uint32_t)w[0] == kInclusive;
                }
                s_window[t] = value;
                s_window_inclusive[t] = inclusive;
            }
            __syncthreads();
            bool more = false;
            if (t < lanes && !s_lane_done[t]) {
                A window = op.neutral();
                for (int d = 0; d < depth; ++d) {
                    window = op(s_window[d * lanes + t], window);
                    if (s_window_inclusive[d * lanes + t]) {
                        s_lane_done[t] = 1;
                        break;
                    }
                }
                prefix = op(window, prefix);
                more = !s_lane_done[t];
            }
            if (!__syncthreads_or(more)) break;  // also orders this round's reads before the next writes
        }
        if (t < lanes) {
            s_prefix[t] = prefix;
            if (has_successor && !tile_starts)
                publish_words(mine_words + t * kParts, op(prefix, s_value[(groups - 1) * lanes + t]), kInclusive);
        }
    }
    __syncthreads();

    // Pass 2: each group rescans its rows of its lane from the value running into them, into
    // the staged tile, which is then stored whole (or straight out: lanes_args::direct_stores).
    if (active) {
        A running = then(op, segment<A>{false, needs_prefix ? s_prefix[lane] : op.neutral()}, before).value;
        int to_start = to_start0;
        for (int j = j0; j < j1; ++j) {
            if (to_start == 0) running = op.start(a.exclusive), to_start = n_rows;
            const int row = memory_row(j), at = row * lanes + lane;
            const A next = op(running, stream_load<In, Out>(raw[raw_at(row)]));
            const TO value = dtype_traits<Out>::store(a.exclusive ? running : next);
            if (a.direct_stores) out[at] = value;
            else staged[at] = value;
            running = next;
            --to_start;
        }
    }
    if (a.direct_stores) return;
    __syncthreads();
    int vectored = 0;
    if (a.out_aligned) {
        const int whole = elements * (int)sizeof(TO) / 16;
        for (int v = t; v < whole; v += kStreamThreads) reinterpret_cast<uint4 *>(out)[v] = s_staged[v];
        vectored = whole * 16 / (int)sizeof(TO);
    }
    for (int e = vectored + t; e < elements; e += kStreamThreads) out[e] = staged[e];
}

// The kernel of a planned lanes form for the pair In -> Out, passed to Use::with<kernel>(args):
// the words' kernel where the plan packs the lanes (lanes_args::packed_size), the lane-major
// one where the input runs along its lines, else the pair's own.
using lanes_kernel_t = void (*)(lanes_args, unsigned long long *);
template <tscan_dtype In, tscan_dtype Out, bool Prod, class Use, class... Args>
tscan_status with_lanes_kernel(const lanes_args &a, Args &&...args) {
    constexpr int kSize = (int)sizeof(typename dtype_traits<In>::T);
    if constexpr (kSize <= 2 && kSize == (int)sizeof(typename dtype_traits<Out>::T) && !Prod && In != TSCAN_FLOAT16 &&
                  In != TSCAN_BFLOAT16) {
        if (a.packed_size) return Use::template with<lanes_kernel<TSCAN_UINT32, TSCAN_UINT32, false, kSize>>(args...);
    }
    return a.lane_major ? Use::template with<lanes_kernel<In, Out, Prod, 0, true>>(args...)
                        : Use::template with<lanes_kernel<In, Out, Prod>>(args...);
}

}  // namespace
}  // namespace tscan
