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
// predecessor at most. A column block of 1- or 2-byte integers (4 or 2 lines a lane) announces
// the low bits of its lane's values packed in one word (packed_status, packed_lines_op).
template <class A> constexpr int word_parts() {  // the 32-bit parts of a value
    static_assert(sizeof(A) % 4 == 0, "accumulators of 4 or 8 bytes");
    return (int)(sizeof(A) / 4);
}
// An accumulator as raw bits, which its status words hold 32 at a time.
template <class A> using value_bits = std::conditional_t<word_parts<A>() == 1, uint32_t, uint64_t>;
// The element size whose lines a column block's lane packs in one status word: 1 or 2 (integer
// accumulators of 4 bytes, 4 / Size lines a lane: their low bits say all a sum or product of
// them outputs), 0 where each line has its own words. Packed, a tile's status is one word a
// lane, as for single 4-byte lines (a look-back batch covers 8 predecessors, not 2 or 4).
template <class T, class A> constexpr int packed_status(int lines_per_lane, int cols) {
    return cols == kColumnBlock && std::is_integral_v<A> && sizeof(A) == 4 && lines_per_lane > 1 &&
                   sizeof(T) * lines_per_lane == 4
               ? (int)sizeof(T)
               : 0;
}
// Status words a lane of a tile: one a line and 32-bit part, or one packed word.
template <class A> constexpr int lane_words(int lines_per_lane, int packed) {
    return packed ? 1 : lines_per_lane * word_parts<A>();
}
// The value that a line's status words (its word_parts, lowest part first) announce.
template <class A> __device__ __forceinline__ A announced_value(const unsigned long long *part) {
    value_bits<A> b = 0;
#pragma unroll
    for (int q = 0; q < word_parts<A>(); ++q) b |= (value_bits<A>)(uint32_t)(part[q] >> 32) << (32 * q);
    return ::cuda::std::bit_cast<A>(b);
}

// Status word q of a value announced in state: its q-th 32-bit part high, the flag low.
template <class A> __device__ __forceinline__ unsigned long long status_word(A value, int q, tile_flag state) {
    return (unsigned long long)(uint32_t)(::cuda::std::bit_cast<value_bits<A>>(value) >> (32 * q)) << 32 | state;
}

template <class A> struct tile_status {
    unsigned long long *counter;  // next tile to claim
    unsigned long long *words;    // [chunks - 1][chunk_words]: each chunk's tiles' words, group by group
};

// A 32-byte L2 sector of status words. Each chunk's words start a sector of their own (from a
// workspace at least 32-byte aligned), so that neighbouring chunks of a chain, whose statuses
// its look-backs poll while they are being written, never share one. Packed, one long line's
// chunks put 4 statuses to a sector (2 of 8-byte accumulators), which every look-back of the
// chain polled at once, slowing every 1-D type (bench/NOTES.md §3.10). Column blocks' tiles
// fill whole sectors already, as do many chains' line chunks.
constexpr int64_t kSectorWords = 32 / sizeof(unsigned long long);

// The first status word of a tile (word statuses).
__device__ __forceinline__ int64_t tile_words_at(const tile_layout &L, int64_t chunk, int64_t group, int tile_words) {
    return chunk * L.chunk_words + group * tile_words;
}

template <class V> __device__ __forceinline__ V load_relaxed(V &x) {
    return cuda::atomic_ref<V, cuda::thread_scope_device>(x).load(cuda::memory_order_relaxed);
}

// One warp sets a tile's status: lane l < Cols writes its LV lines' words. The last tile of a
// chain publishes nothing: no one reads it.
template <int Cols, int LV, int Packed, class A>
__device__ void publish_status(const tile_layout &L, const tile_status<A> &st, tile_at at, const A (&value)[LV],
                               tile_flag state) {
    constexpr int kLaneWords = lane_words<A>(LV, Packed);
    const int lane = threadIdx.x % 32;
    if (at.chunk == L.chunks - 1 || lane >= Cols) return;
    unsigned long long *const words = st.words + tile_words_at(L, at.chunk, at.group, Cols * kLaneWords) + lane * kLaneWords;
    const auto store = [&](int w, unsigned long long word) {
        cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(words[w]).store(word, cuda::memory_order_relaxed);
    };
    if constexpr (Packed != 0) {
        store(0, status_word(packed_low_bits<Packed>(value), 0, state));
    } else {
        constexpr int kParts = word_parts<A>();
#pragma unroll
        for (int j = 0; j < LV; ++j) {
#pragma unroll
            for (int q = 0; q < kParts; ++q) store(j * kParts + q, status_word(value[j], q, state));
        }
    }
}

// A tile's per-line reduction, published as soon as its data is in: the aggregate, or for the
// chain's first tile the inclusive prefix op(start, aggregate) at once.
template <int Cols, int Packed, int LV, class A>
__device__ void publish_aggregate(const tile_layout &L, const tile_status<A> &st, const scan_op<A> &op, tile_at at,
                                  A start, const A (&aggregate)[LV]) {
    if (at.chunk == 0) {
        A inclusive[LV];
#pragma unroll
        for (int j = 0; j < LV; ++j) inclusive[j] = op(start, aggregate[j]);
        publish_status<Cols, LV, Packed>(L, st, at, inclusive, kInclusive);
    } else {
        publish_status<Cols, LV, Packed>(L, st, at, aggregate, kAggregate);
    }
}

}  // namespace
}  // namespace tscan
