// lookback/status.cuh - the status-word protocol: how a tile publishes its aggregate and its inclusive
// prefix for the look-backs of its successors (ARCHITECTURE.md, "Invariants").
// Included by cuda/lookback.cu and by the stream kernels (cuda/stream/), each translation unit
// with its own copy, hence the anonymous namespace.
#pragma once

#include <cuda/atomic>
#include "lookback/geometry.cuh"

namespace tscan {
namespace {

// Tile status flags. A flag only ever grows, and the value it announces is written before it.
enum tile_flag : uint32_t { kEmpty = 0, kAggregate = 1, kInclusive = 2 };

// A line's status in 64-bit words: the flag in the low half, a 32-bit part of the value it
// announces in the high half, stored and loaded whole, so that no fence has to order a value
// before its flag (a release fence waits for every store the warp has in flight: the data warp
// that publishes an aggregate has just stored a tile). A 4-byte accumulator is one word; an
// 8-byte one two, stored apart, and a reader takes the value when both words say the same
// state (each state is written once, so its parts are then that state's). A line chunk's words
// are its tile's status, read by the window walk in place of a flag; a column block's look-back
// reads its lines' words with no tile flag at all (sum_words_back), two words a lane a
// predecessor at most. Column blocks of 4 packed lines a lane (1-byte elements: a look-back
// batch of words would then cover only 2 predecessors, and measured slower; bench/NOTES.md
// §3.10) keep a flag array and two value arrays, each flag stored with release after its values.
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
    uint32_t *flags;              // [status_tiles], a sector each (kSectorFlags); none for word statuses
    A *aggregate;                 // [status_tiles][tile lines]: the tile's own reduction, per line
    A *inclusive;                 // [status_tiles][tile lines]: scan of the chain through the tile
    unsigned long long *words;    // [chunks - 1][chunk_words] instead of the value arrays (word_status)
};

// A 32-byte L2 sector of status words. Each chunk's words start a sector of their own (from a
// workspace at least 32-byte aligned), so that neighbouring chunks of a chain, whose statuses
// its look-backs poll while they are being written, never share one. Packed, one long line's
// chunks put 4 statuses to a sector (2 of 8-byte accumulators), which every look-back of the
// chain polled at once, slowing every 1-D type (bench/NOTES.md §3.10). Column blocks' tiles
// fill whole sectors already, as do many chains' line chunks.
constexpr int64_t kSectorWords = 32 / sizeof(unsigned long long);
// The fenced arrays' flags (int8 column blocks) a sector apart for the same reason: tile i's
// flag is flags[i * kSectorFlags].
constexpr int64_t kSectorFlags = 32 / sizeof(uint32_t);

// The first status word of a tile (word statuses).
__device__ __forceinline__ int64_t tile_words_at(const tile_layout &L, int64_t chunk, int64_t group, int tile_words) {
    return chunk * L.chunk_words + group * tile_words;
}

template <class V> __device__ __forceinline__ V load_relaxed(V &x) {
    return cuda::atomic_ref<V, cuda::thread_scope_device>(x).load(cuda::memory_order_relaxed);
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
        cuda::atomic_ref<uint32_t, cuda::thread_scope_device>(st.flags[id * kSectorFlags]).store(state, cuda::memory_order_release);
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

}  // namespace
}  // namespace tscan
