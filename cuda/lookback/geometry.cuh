// lookback/geometry.cuh - what a tile is: the slots a thread loads, the tile's shape and blocks, the chains'
// layout and the order in which claims take their tiles (claim_band, tile_of_claim).
// Included by cuda/lookback.cu and by the stream kernels (cuda/stream/), each translation unit
// with its own copy, hence the anonymous namespace.
#pragma once

#include <algorithm>
#include <type_traits>
#include "common.cuh"

namespace tscan {
namespace {

constexpr int kThreads = kernel_policy::lookback_threads;  // data threads of a block: they load, scan and store
constexpr int kWarps = kThreads / 32;  // data warps

// What a thread loads at once: V elements of T, kept raw in a shared-memory slot of 16 bytes
// when they fill 16, of 8 when they fill 8 (8-byte elements, pairs of 4-byte lines), else 4.
// V when packed: column blocks pack neighbouring lines into a slot (4 / size of 1- and 2-byte
// elements, 2 of 4-byte ones), line chunks consecutive elements into 16 bytes (2-byte
// elements; 8 or 4 where the layout packs no wider), 8 (4-byte ones) or 32 bits (1-byte ones).
// Each width beat the others on the H100 (bench/NOTES.md §3.10): float32 column blocks in
// pairs load 256 bytes a warp instead of 128; 2-byte elements 4 lines to 64 bits lost (4
// accumulators a lane). A line chunk has one accumulator
// whatever its slot holds, so 8-byte slots halved its load, shared-memory and store
// instructions; int8's 8 elements a slot lost, so 1-byte ones keep 32 bits. 16-byte slots
// (elements found at constant indices) gained float16 a little more on rows of whole tiles,
// but cost float32 and float64 (2 elements a slot).
constexpr size_t slot_bytes(size_t elem_size, int v) { return elem_size * v >= 16 ? 16 : elem_size * v >= 8 ? 8 : 4; }
template <class T, int V>
using slot_t = std::conditional_t<slot_bytes(sizeof(T), V) == 16, ulonglong2,
                                  std::conditional_t<slot_bytes(sizeof(T), V) == 8, uint64_t, uint32_t>>;
template <class T> constexpr int line_pack() { return sizeof(T) < 4 ? 4 / (int)sizeof(T) : sizeof(T) == 4 ? 2 : 1; }
template <class T> constexpr int axis_pack() {
    return sizeof(T) == 1 ? 4 : sizeof(T) == 2 ? 8 : sizeof(T) == 4 ? 2 : 1;
}
// A line chunk of a narrower input (a wider output): 16 bytes of the output a slot.
template <class T> constexpr int widened_axis_pack() { return 16 / (int)sizeof(T); }
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
    // run-time index cost shifts and selects an element, which every packed kernel paid for:
    // bench/NOTES.md §3.10).
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
    // V slots of V elements transposed: element e of slot j becomes element j of slot e (a
    // column block's V rows of V lines into V words of one line each). 1- and 2-byte elements
    // in 32-bit slots by byte permutes: 8 for four slots of bytes, where taking them apart and
    // putting them back costs 32 (bench/NOTES.md §2, "1-byte rows").
    static __device__ __forceinline__ void transpose(S (&s)[V]) {
        if constexpr (sizeof(S) == 4 && sizeof(T) == 1 && V == 4) {
            const uint32_t low0 = __byte_perm(s[0], s[1], 0x5140), low1 = __byte_perm(s[2], s[3], 0x5140);
            const uint32_t high0 = __byte_perm(s[0], s[1], 0x7362), high1 = __byte_perm(s[2], s[3], 0x7362);
            s[0] = __byte_perm(low0, low1, 0x5410), s[1] = __byte_perm(low0, low1, 0x7632);
            s[2] = __byte_perm(high0, high1, 0x5410), s[3] = __byte_perm(high0, high1, 0x7632);
        } else if constexpr (sizeof(S) == 4 && sizeof(T) == 2 && V == 2) {
            const uint32_t s0 = s[0];
            s[0] = __byte_perm(s0, s[1], 0x5410), s[1] = __byte_perm(s0, s[1], 0x7632);
        } else {
            S t[V];
#pragma unroll
            for (int j = 0; j < V; ++j) {
                t[j] = S{};
#pragma unroll
                for (int e = 0; e < V; ++e) t[j] = with(t[j], e, get(s[e], j));
            }
#pragma unroll
            for (int j = 0; j < V; ++j) s[j] = t[j];
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
    // A slot of which only elements [first, end) (memory order) exist: those move one at a
    // time, and the others load as `fill`.
    static __device__ __forceinline__ S load_part(const T *p, int first, int end, T fill) {
        S s{};
#pragma unroll
        for (int j = 0; j < V; ++j) s = with(s, j, j >= first && j < end ? p[j] : fill);
        return s;
    }
    static __device__ __forceinline__ void store_part(T *p, S s, int first, int end) {
#pragma unroll
        for (int j = 0; j < V; ++j)
            if (j >= first && j < end) p[j] = get(s, j);
    }
};

// Pipelined blocks (full slots): 8 data warps and a warp that looks back, with two tile
// buffers, so that the next tile loads while the current one looks back. Two buffers of up to
// 36 KB fit three blocks in an SM's shared memory; 288 threads x 3 leave 72 registers a thread.
// Serial blocks (unpacked 1- and 2-byte elements): 8 warps, one buffer, warp 0 looks back
// while the others wait; 4 blocks an SM (64 registers). Measured on an H200 (bench/NOTES.md
// §3.10): pipelining sped up float32 medium_cols but slowed float16 square_cols, loaded one
// element at a time: 2-byte loads in 3 blocks keep too few bytes in flight.
template <class T, int V> constexpr bool pipelined() { return slot_io<T, V>::kFull; }
template <class T, int V> constexpr int block_threads() { return pipelined<T, V>() ? kThreads + 32 : kThreads; }
// A column block of single lines of a narrower input (Widen, V = 1: each row converted on
// load) needs ~96 registers; at 3 blocks it spilled 100-570 bytes, and 2 blocks ran 6-18 %
// faster on the H100 (bench/NOTES.md §3.1, "Wider outputs"). Its pairs (half the rows) fit 3.
template <class T, int V, bool WidenColumns = false> constexpr int blocks_per_sm() {
    return WidenColumns && V == 1 ? 2 : pipelined<T, V>() ? 3 : 4;
}

// Slots each thread holds: 128 bytes of them (32 of 4 bytes, 16 of 8, 8 of 16), so a tile
// carries 32 KB and the look-back traffic is a few percent of the data.
constexpr int items_per_thread(size_t slot_bytes) { return (int)(128 / slot_bytes); }
constexpr int64_t kTileBytes = kThreads * 128;  // every tile's data, whatever its shape (AUTO reads it: outline)


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
    // A line chunk's line in part in its first and last slots (pack_axis): the elements of the
    // first before the line (in scan order), and the line's elements in the last (0: whole).
    // Those slots move element by element.
    int axis_head, axis_tail;
    int64_t chunk_words;  // a chunk's status words (all its chains'), in whole 32-byte sectors
    int64_t band;         // chains claimed together, chunk-major (the last band may hold fewer)
    // Column blocks off the grid (OffGrid): the lines of a run of the last batch dimension, and
    // the words of V lines a run (its last may hold fewer lines); 0 otherwise.
    int64_t run_lines, run_words;
};

// Chains claimed together (tile_layout::band), given the blocks resident at once. A tile's
// predecessor in its chain is claimed a band's width of claims before it, so resident / band
// of each chain's tiles are in flight. Measured on the H100 (bench/NOTES.md §3.10): many
// chains claimed all together ran slower than in bands, but too narrow a band cost problems of
// fewer chains. So the band is the largest power of two up to 2/3 of the resident blocks,
// widened to split the chains evenly; fewer than two bands' worth of chains stay one band.
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

}  // namespace
}  // namespace tscan
