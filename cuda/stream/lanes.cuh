// stream/lanes.cuh - the stream's second form: a strided axis whose inner extent is small (a
// packed (outer, n, I) block scanned along n, 2 <= I <= kMaxLanes). The tensor is one flat
// stream of rows of I elements; each of the I lanes carries its own running value, and a row
// that starts a line (row % n == 0) resets them all. A tile is a run of whole rows, about 16 KB:
// loaded coalesced into shared memory, scanned down each lane by groups of threads, the groups
// joined by a scan in shared memory, the tiles by decoupled look-back of I values each (one
// status word per lane and 32-bit part, as lookback's column blocks). Tiles are claimed in scan
// order, one a block, like the segment form: a tile waits only on tiles claimed before it.
#pragma once

#include "stream/kernel.cuh"

namespace tscan {
namespace {

constexpr int kMaxLanes = kernel_policy::stream_max_lanes;  // status words a tile, per 32-bit part: 64 x 8 bytes of 16 KB

// The problem as the lanes kernel sees it: `rows` rows of `lanes` elements from `in` and `out`
// (their lowest addresses; both tensors laid out alike), lines of n rows.
struct lanes_args {
    const char *in;
    char *out;
    int64_t rows;
    int64_t n;
    int lanes;
    int64_t tile_rows;  // a whole number of 16-byte vectors when the base is aligned
    int64_t tiles;
    int status_words;   // a tile's, in whole 32-byte sectors
    bool aligned;       // both bases 16-byte aligned: tiles load as vectors
    bool reverse;
    bool exclusive;
};

// The layout the lanes form takes: a packed (outer, n, I) block, the same in both tensors,
// scanned along n in steps of I.
bool lanes_layout(const tscan_problem *p, lanes_args *a) {
    const int64_t lanes = p->in_step;
    if (lanes < 2 || lanes > kMaxLanes || p->out_step != lanes || p->batch_ndim < 1 || p->batch_ndim > 2) return false;
    const int last = (int)p->batch_ndim - 1;
    if (p->batch_sizes[last] != lanes || p->in_batch_strides[last] != 1 || p->out_batch_strides[last] != 1) return false;
    if (last == 1 && (p->in_batch_strides[0] != p->n * lanes || p->out_batch_strides[0] != p->n * lanes)) return false;
    const size_t in_size = p->elem_size;
    a->in = p->in;
    a->out = p->out;
    a->rows = p->n * (p->lines / lanes);
    a->n = p->n;
    a->lanes = (int)lanes;
    // Rows a tile: about 16 KB of input, in steps that keep every tile's start on the 16-byte grid
    // (a step is at most 16 rows, and 16 KB hold at least 32 rows of kMaxLanes 8-byte elements).
    int64_t step = 1;
    while (step * lanes * (int64_t)in_size % 16 != 0) ++step;
    a->tile_rows = stream_tile_elements(in_size) / lanes / step * step;
    a->tiles = (a->rows + a->tile_rows - 1) / a->tile_rows;
    const int64_t parts = p->out_elem_size == 8 ? 2 : 1;  // word_parts of the output's accumulator
    a->status_words = (int)((lanes * parts + kSectorWords - 1) / kSectorWords * kSectorWords);
    a->aligned = (uintptr_t)p->in % 16 == 0;
    a->reverse = p->reverse != 0;
    a->exclusive = p->exclusive != 0;
    return true;
}

// Block c scans logical tile c. Thread t serves lane t % I for group t / I of the tile's rows
// (threads past the last whole group idle while the groups scan).
template <tscan_dtype In, tscan_dtype Out, bool Prod>
__global__ void __launch_bounds__(kStreamThreads) lanes_kernel(const __grid_constant__ lanes_args a,
                                                                unsigned long long *words) {
    using TI = typename dtype_traits<In>::T;
    using TO = typename dtype_traits<Out>::T;
    using A = typename dtype_traits<Out>::A;
    constexpr int kParts = word_parts<A>();
    constexpr int64_t kTileElements = stream_tile_elements(sizeof(TI));
    const scan_op<A> op{Prod};
    const int t = threadIdx.x, lanes = a.lanes;

    wait_for_clear();
    __shared__ int64_t s_claim;
    __shared__ uint4 s_raw[kTileElements * sizeof(TI) / 16];
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
    const int64_t count = hi - lo;
    const int64_t base = a.reverse ? a.rows - hi : lo;
    const TI *const in = reinterpret_cast<const TI *>(a.in);
    TO *const out = reinterpret_cast<TO *>(a.out);
    TI *const raw = reinterpret_cast<TI *>(s_raw);
    {
        // Whole 16-byte vectors where the base is aligned, then the rest element by element.
        const int64_t first = lo * lanes, elements = count * lanes;
        int64_t vectored = 0;
        if (a.aligned) {
            const uint4 *const from = reinterpret_cast<const uint4 *>(in + first);
            const int64_t whole = elements * (int64_t)sizeof(TI) / 16;
            for (int64_t v = t; v < whole; v += kStreamThreads) s_raw[v] = from[v];
            vectored = whole * 16 / (int64_t)sizeof(TI);
        }
        for (int64_t e = vectored + t; e < elements; e += kStreamThreads) raw[e] = in[first + e];
    }
    __syncthreads();

    const int groups = kStreamThreads / lanes;
    const int lane = t % lanes, group = t / lanes;
    const bool active = group < groups;
    const int64_t per_group = (count + groups - 1) / groups;
    const int64_t j0 = min((int64_t)group * per_group, count), j1 = min(j0 + per_group, count);
    const auto memory_row = [&](int64_t j) { return a.reverse ? count - 1 - j : j; };  // within the tile
    const int64_t pos0 = (base + j0) % a.n;  // row j0's place in its line; rows step it on

    // Pass 1: each group's segment of its lane.
    segment<A> mine = {false, op.neutral()};
    if (active) {
        int64_t pos = pos0;
        for (int64_t j = j0; j < j1; ++j) {
            if (pos == 0) mine = {true, op.start(a.exclusive)};
            mine.value = op(mine.value, stream_load<In, Out>(raw[memory_row(j) * lanes + lane]));
            if (++pos == a.n) pos = 0;
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
    const bool needs_prefix = c > 0 && base % a.n != 0;
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

    // Pass 2: each group rescans its rows of its lane from the value running into them.
    if (active) {
        A running = then(op, segment<A>{false, needs_prefix ? s_prefix[lane] : op.neutral()}, before).value;
        int64_t pos = pos0;
        for (int64_t j = j0; j < j1; ++j) {
            if (pos == 0) running = op.start(a.exclusive);
            const int64_t at = memory_row(j) * lanes + lane;
            const A next = op(running, stream_load<In, Out>(raw[at]));
            out[(lo * lanes) + at] = dtype_traits<Out>::store(a.exclusive ? running : next);
            running = next;
            if (++pos == a.n) pos = 0;
        }
    }
}

}  // namespace
}  // namespace tscan
