// columns/staged.cuh - columns' staged form: short lines of a permuted input through shared memory.
// A permuted input stores the lines across memory (a long axis step) and has its unit stride on
// a batch dimension u, while the output stores them along memory, line after line along its own
// fastest batch dimension v. Thread-a-line kernels walk the lines in v's order, which in the input
// are far apart: every element they read is a sector of its own. Here a block takes a tile of Tu
// lines along u by Tv along v, whole: loaded a warp row at a time along u (the input's unit
// stride), scanned a thread a line in shared memory, and stored along each u's run of Tv lines,
// which the output holds end to end. The tile is held in the output's storage type, and 1- and
// 2-byte inputs whose u runs lie on the 4-byte grid load a word of 4 / size neighbouring u a
// lane, so that a tile of them holds that many times the lines for the same registers; 1- and
// 2-byte outputs whose runs start on that grid leave a word a lane.
// Included by cuda/columns.cu and by the emulated tests (tests/emulated/), each translation unit
// with its own copy, hence the anonymous namespace.
#pragma once

#include "columns/kernel.cuh"

namespace tscan {
namespace {

constexpr int kStagedThreads = 256;
constexpr int kStagedWarps = kStagedThreads / 32;
// The tile, in the output's storage type, declared statically (the emulated tests run the
// kernel's own source, which has no dynamic shared memory). 32 KB holds a thread's line each of
// up to 31 elements of 4-byte types (15 of 8-byte ones), with each u's row padded to an odd
// number of 32-bit words (of elements, for 8-byte ones) so that lanes a u apart hit distinct
// banks.
constexpr int kStagedTileBytes = 32 * 1024;
constexpr int kStagedBlocksPerSM = 4;
// A thread loads kStagedGroups warp rows of the tile (each 32 lanes of one load) at each of the
// next staged_chunk positions before it writes any to shared memory: 16 loads in flight (8 of 8
// bytes), in 56-64 registers under the 64 of 4 blocks an SM (chunks of 6 spilled). Walked one
// position at a time, ptxas wrote each load to shared memory two or three loads later, and the
// thread waited on it (bench/NOTES.md §3.7, "The staged form"). A load is an element, or a word
// of W elements (staged_args::load_words), so a tile holds up to 4 W lines a thread.
constexpr int kStagedGroups = 4;
template <class L> constexpr int staged_chunk() { return sizeof(L) == 8 ? 2 : 4; }
// A u row's elements in the tile: at least `elements`, a whole odd number of 32-bit words for
// 1- and 2-byte types, odd for wider ones.
inline int64_t staged_row(int64_t elements, int64_t elem_bytes) {
    const int64_t per_word = elem_bytes < 4 ? 4 / elem_bytes : 1;
    return ((elements + per_word - 1) / per_word | 1) * per_word;
}

// A tile's geometry. u and v are batch dimensions of scan_args; `rest` maps the others to a
// tile's outer offsets. Tu and Tv are powers of two, Tu at most a warp.
struct staged_args {
    batch_map rest;
    int64_t u_size, v_size;
    int64_t in_v, out_u;  // the input's unit stride is u's, the output's v's stride is the line
    int64_t u_tiles, v_tiles, tiles;
    int log_tu, log_tv;
    int row;  // elements a u holds in shared memory: its Tv lines end to end (staged_row)
    bool load_words;   // a 1- or 2-byte input of one width whose u runs lie on the 4-byte grid:
                       // a load is a 32-bit word of W = 4 / size neighbouring u
    bool store_words;  // a 1- or 2-byte output whose u runs start on the 4-byte grid: stored a
                       // 32-bit word of 4 / size elements a lane
};

// D is the output's dtype; Widen: a narrower input, converted on load. Words: each load a
// 32-bit word of 4 / size elements (s.load_words), for 1- and 2-byte inputs of one width. Positions
// in a line count in the output's memory order (m), so that a u's run of lines is contiguous in
// shared memory as in the output; scan element k is m, or n - 1 - m where the output runs
// backwards.
template <tscan_dtype D, bool Widen, bool Words = false>
__global__ void __launch_bounds__(kStagedThreads, kStagedBlocksPerSM) columns_staged_kernel(scan_args a, staged_args s) {
    using Traits = dtype_traits<D>;
    using T = typename Traits::T;
    using A = typename Traits::A;
    static_assert(!Words || (!Widen && sizeof(T) < 4), "words of 1- and 2-byte elements");
    constexpr int kWordElements = sizeof(T) < 4 ? 4 / (int)sizeof(T) : 1;  // in 32 bits
    constexpr int kW = Words ? kWordElements : 1;                          // a load's elements
    constexpr int kLogW = kW == 4 ? 2 : kW == 2 ? 1 : 0;
    using L = std::conditional_t<Words, uint32_t, T>;  // what a load brings
    alignas(16) __shared__ T tile[kStagedTileBytes / sizeof(T)];  // (rows of whole words: staged_row)
    const scan_op<A> op{a.prod};
    const int n = (int)a.n, tu = 1 << s.log_tu, tv = 1 << s.log_tv;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const bool backwards = a.out_step < 0;
    // Input element m of a line: at the line's scan element 0 plus first + m * m_step.
    const int64_t in_first = backwards ? (a.n - 1) * a.in_step : 0, in_m_step = backwards ? -a.in_step : a.in_step;
    const int64_t out_first = backwards ? 1 - a.n : 0;
    // Loads: a warp row is one position m of 32 loads, lanes along u first (Tu / W lanes, each
    // W neighbouring u; 32 W / Tu v's a row); warp w takes the rows w, w + 8, ..., at most
    // kStagedGroups of them.
    const int log_tl = s.log_tu - kLogW;
    const int lane_u = (lane & ((1 << log_tl) - 1)) << kLogW, log_vpr = 5 - log_tl;
    const int lane_v = (lane >> log_tl) + (warp << log_vpr);
    const int groups = ((tu >> kLogW) * tv) >> 5;
    const int my_groups = groups > warp ? (groups - warp + kStagedWarps - 1) / kStagedWarps : 0;
    const int group_v = kStagedWarps << log_vpr;  // v between a thread's groups
    constexpr int kChunk = staged_chunk<L>();
    const auto load = [&](int64_t at) -> L {
        if constexpr (Widen) return read_widened<D>(a.in + at * a.in_bytes, a.in_dtype);
        else if constexpr (Words) return *reinterpret_cast<const uint32_t *>(reinterpret_cast<const T *>(a.in) + at);
        else return reinterpret_cast<const T *>(a.in)[at];
    };
    for (int64_t t = blockIdx.x; t < s.tiles; t += gridDim.x) {
        const int64_t u_tile = t % s.u_tiles, rest_index = t / s.u_tiles, v_tile = rest_index % s.v_tiles;
        int64_t in_off, out_off;
        s.rest.offsets(rest_index / s.v_tiles, in_off, out_off);
        const int64_t u0 = u_tile << s.log_tu, v0 = v_tile << s.log_tv;
        const int tu_here = (int)min((int64_t)tu, s.u_size - u0), tv_here = (int)min((int64_t)tv, s.v_size - v0);
        const int64_t tile_in = in_off + u0 + v0 * s.in_v + in_first;
        const int64_t tile_out = out_off + u0 * s.out_u + v0 * a.n + out_first;
        {
            // The thread's group g: input elements at at + g * at_group + m * in_m_step, shared
            // memory slots from slot + g * slot_group.
            const int64_t at = tile_in + lane_u + (int64_t)lane_v * s.in_v, at_group = (int64_t)group_v * s.in_v;
            const int slot = lane_u * s.row + lane_v * n, slot_group = group_v * n;
            const bool u_in = lane_u < tu_here;  // (a word is whole: tu_here is a multiple of W)
            const auto present = [&](int g) { return g < my_groups && u_in && lane_v + g * group_v < tv_here; };
            for (int m0 = 0; m0 < n; m0 += kChunk) {
                L x[kStagedGroups][kChunk];
#pragma unroll
                for (int g = 0; g < kStagedGroups; ++g) {
#pragma unroll
                    for (int j = 0; j < kChunk; ++j)
                        if (present(g) && m0 + j < n) x[g][j] = load(at + g * at_group + (int64_t)(m0 + j) * in_m_step);
                }
#pragma unroll
                for (int g = 0; g < kStagedGroups; ++g) {
#pragma unroll
                    for (int j = 0; j < kChunk; ++j) {
                        if (!present(g) || m0 + j >= n) continue;
                        T *const to = tile + slot + g * slot_group + m0 + j;
                        if constexpr (Words) {
#pragma unroll
                            for (int e = 0; e < kW; ++e) to[e * s.row] = (T)(x[g][j] >> (8 * sizeof(T) * e));
                        } else {
                            *to = x[g][j];
                        }
                    }
                }
            }
        }
        __syncthreads();
        // A thread a line, lanes along u; lines outside the tensor scan what was left there,
        // never stored.
        for (int line = threadIdx.x; line < tu * tv; line += kStagedThreads) {
            T *const x = tile + (line & (tu - 1)) * s.row + (line >> s.log_tu) * n;
            A running = op.start(a.exclusive);
            for (int i = 0; i < n; ++i) {
                const int m = backwards ? n - 1 - i : i;
                const A next = op(running, Traits::load(x[m]));
                x[m] = Traits::store(a.exclusive ? running : next);
                running = next;
            }
        }
        __syncthreads();
        // Stores: each u's run of tv_here lines, 32 of its elements a warp row, or 32 words of
        // kWordElements where every run starts on the 4-byte grid (s.store_words; a run's last
        // word in part goes element by element).
        const int run = tv_here * n;
        T *const out = reinterpret_cast<T *>(a.out) + tile_out;
        const int per_lane = kWordElements > 1 && s.store_words ? kWordElements : 1;
        const int chunks = (run + 32 * per_lane - 1) / (32 * per_lane);
        for (int item = warp; item < tu_here * chunks; item += kStagedWarps) {
            const int u = item / chunks, e = ((item - u * chunks) * 32 + lane) * per_lane;
            const T *const from = tile + u * s.row + e;
            T *const to = out + u * s.out_u + e;
            if constexpr (kWordElements > 1) {
                if (per_lane > 1 && e + kWordElements <= run) {
                    *reinterpret_cast<uint32_t *>(to) = *reinterpret_cast<const uint32_t *>(from);
                    continue;
                }
            }
            for (int i = 0; i < per_lane && e + i < run; ++i) to[i] = from[i];
        }
        __syncthreads();
    }
}

// The staged form for a, in s. Takes: the output along the axis (unit step), its lines end to
// end along its fastest batch dimension v, whose neighbours lie a sector or more apart in the
// input; the input's unit stride on another batch dimension u; v long enough to fill half a
// tile at least; and lines short enough that a tile of a warp along u (or all of u) holds a line
// a thread (out_bytes: an output element's size). A tile holds up to kStagedGroups W lines a
// thread.
inline bool plan_staged(const scan_args &a, staged_args &s, int64_t out_bytes) {
    const int v = a.batch.ndim - 1;  // the canonical problem orders batch dimensions by output stride
    if ((a.out_step != 1 && a.out_step != -1) || a.in_step == 1 || a.in_step == -1 || a.n < 2 || v < 1 ||
        a.batch.out_strides[v] != a.n || llabs(a.batch.in_strides[v]) * a.in_bytes < 32)
        return false;
    int u = -1;
    for (int d = 0; d < v; ++d)
        if (a.batch.in_strides[d] == 1 && a.batch.sizes[d] > 1) u = d;
    if (u < 0) return false;
    const int log_tu = std::min(log2_ceil(a.batch.sizes[u]), 5);
    const int64_t tu = int64_t(1) << log_tu;
    // Words of W elements where every u run of the input starts on the 4-byte grid (its base and
    // every stride but u's a multiple of W) and u holds whole words.
    int log_w = 0;
    if (!a.widens && a.in_bytes < 4) {
        const int64_t w = 4 / a.in_bytes;
        bool on_grid = (uintptr_t)a.in % 4 == 0 && a.batch.sizes[u] % w == 0 && a.in_step % w == 0;
        for (int d = 0; d < a.batch.ndim; ++d)
            if (d != u) on_grid = on_grid && a.batch.in_strides[d] % w == 0;
        if (on_grid) log_w = log2_ceil(w);
    }
    const auto tile_bytes = [&](int64_t tv) { return tu * staged_row(tv * a.n, out_bytes) * out_bytes; };
    // A tile of fewer lines than threads (along a short v) would leave most of the block idle.
    // Lines as long as a tile of a line a thread holds in 4-byte accumulators (31 elements; 15
    // of 8-byte ones), the form's measured range, though 1- and 2-byte tiles would hold more.
    const int64_t acc_bytes = out_bytes < 4 ? 4 : out_bytes;
    if (2 * tu * a.batch.sizes[v] < kStagedThreads || tu * ((kStagedThreads / tu * a.n) | 1) * acc_bytes > kStagedTileBytes)
        return false;
    // Tv: up to kStagedGroups W lines a thread, within the tile's bytes and v's extent.
    int log_tv = log2_ceil(kStagedThreads / tu);
    while ((tu << (log_tv + 1)) <= (int64_t)kStagedGroups * kStagedThreads << log_w &&
           tile_bytes(int64_t(2) << log_tv) <= kStagedTileBytes && (int64_t(1) << log_tv) < a.batch.sizes[v])
        ++log_tv;
    s.u_size = a.batch.sizes[u];
    s.v_size = a.batch.sizes[v];
    s.in_v = a.batch.in_strides[v];
    s.out_u = a.batch.out_strides[u];
    s.log_tu = log_tu;
    s.log_tv = log_tv;
    s.load_words = log_w > 0;
    s.row = (int)staged_row(a.n << log_tv, out_bytes);
    // A run of lines starts at the output's lowest address plus multiples of u's and the other
    // batch dimensions' strides and of a tile's Tv lines.
    s.store_words = false;
    if (out_bytes < 4) {
        const int64_t w = 4 / out_bytes;
        const char *const lowest = a.out + (a.out_step < 0 ? (1 - a.n) * out_bytes : 0);
        bool on_grid = (uintptr_t)lowest % 4 == 0 && (a.n << log_tv) % w == 0;
        for (int d = 0; d < v; ++d) on_grid = on_grid && a.batch.out_strides[d] % w == 0;
        s.store_words = on_grid;
    }
    s.u_tiles = (s.u_size + tu - 1) >> log_tu;
    s.v_tiles = (s.v_size + (int64_t(1) << log_tv) - 1) >> log_tv;
    s.rest = batch_map{};
    int64_t outer = 1;
    for (int d = 0; d < v; ++d) {
        if (d == u) continue;
        const int r = s.rest.ndim++;
        s.rest.sizes[r] = a.batch.sizes[d];
        s.rest.in_strides[r] = a.batch.in_strides[d];
        s.rest.out_strides[r] = a.batch.out_strides[d];
        outer *= a.batch.sizes[d];
    }
    for (int r = s.rest.ndim; r < TSCAN_MAX_DIMS - 1; ++r) s.rest.sizes[r] = 1;
    s.tiles = s.u_tiles * s.v_tiles * outer;
    return true;
}

}  // namespace
}  // namespace tscan
