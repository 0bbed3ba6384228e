// lookback/walk.cuh - the look-back: a tile's walk over its chain's earlier statuses to its exclusive
// prefix, by lane words (sum_words_back: column blocks) or by windows of 32 (sum_windows_back:
// line chunks).
// Included by cuda/lookback.cu alone (its translation unit holds every lookback kernel), hence
// the anonymous namespace.
#pragma once

#include "lookback/status.cuh"

namespace tscan {
namespace {

// A column block's walk over its predecessors' lane words, nearest first, in batches loaded
// before any is looked at (so that the loads overlap; one at a time cost dearly:
// bench/NOTES.md §3.10), until every lane's lines have met an inclusive word: sets prefix to
// the reduction of what they announce. The word carries its own flag, so no tile flag is
// polled first: a round trip less a window of 32 (bench/NOTES.md §3.10). A word not yet
// published is re-read, and so is the part of an 8-byte value that says an earlier state than
// the other. Lane l reads its LV lines' words of each predecessor, o chain steps below the
// nearest's; a batch past the first tile of the chain reloads that tile, which is inclusive,
// rather than branch around its loads: a long walk is bound by its instructions as much as by
// its round trips (bench/NOTES.md §3.10, against a 64-bit index and a branch a load). Op is
// scan_op<A>, or packed_lines_op over one packed word a lane (LV 1, A uint32_t).
template <int LV, class A, class Op>
__device__ void sum_words_back(const tile_layout &L, const tile_status<A> &st, const Op &op, int64_t chunk,
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

// The walk of line chunks, a window of 32 predecessors at a time, one a lane: sets prefix to the
// reduction of the chunk's predecessors back to the nearest inclusive one. Predecessor o of the
// window (lane o's) is chunk - 1 - (base + o) of the same chain; before chunk 0 an inclusive
// identity stands in, so the walk ends. The warp shares the statuses through ballots, so every
// lane sees the same ones and the control flow stays uniform. A window is one load a lane:
// wider ones (2 or 4 loads a lane, read together) cost every line chunk, as a wait re-reads the
// whole window, and the wider, the more (bench/NOTES.md §3.10).
template <class A>
__device__ void sum_windows_back(const tile_layout &L, const tile_status<A> &st, const scan_op<A> &op, int64_t chunk,
                                 int64_t group, A &prefix) {
    constexpr int kParts = word_parts<A>();
    const int lane = threadIdx.x % 32;
    for (int64_t base = 0;;) {
        const int64_t pred = chunk - 1 - (base + lane);
        // An 8-byte value's two words were stored apart: until both say the same state, the
        // predecessor counts as not yet published. Before chunk 0: inclusive, never summed.
        uint32_t f = kInclusive;
        A value{};
        if (pred >= 0) {
            unsigned long long *const words = st.words + tile_words_at(L, pred, group, kParts);
            unsigned long long part[kParts];
#pragma unroll
            for (int q = 0; q < kParts; ++q) part[q] = load_relaxed(words[q]);
            f = (uint32_t)part[0];
#pragma unroll
            for (int q = 1; q < kParts; ++q)
                if ((uint32_t)part[q] != f) f = kEmpty;
            value = announced_value<A>(part);
        }
        const unsigned inclusive = __ballot_sync(kFullMask, f == kInclusive);
        const unsigned empty = __ballot_sync(kFullMask, f == kEmpty);
        // The nearest inclusive predecessor in the window (32 if none); wait while a nearer one
        // has not published yet.
        const int first = inclusive ? __ffs(inclusive) - 1 : 32;
        if (empty & (first == 32 ? kFullMask : (1u << first) - 1)) continue;

        const int64_t real = chunk - base;  // predecessors of the window that exist
        const int count = (int)min((int64_t)min(first + 1, 32), real);
        A sum = lane < count ? value : op.neutral();
#pragma unroll
        for (int d = 1; d < 32; d *= 2) sum = op(sum, __shfl_xor_sync(kFullMask, sum, d));
        prefix = op(sum, prefix);
        if (first < 32) break;
        base += 32;
    }
}

// The look-back warp: the exclusive prefix of a tile whose aggregate is published, found over
// its chain's predecessors; then publishes the tile's inclusive prefix. Lane l serves the LV
// lines of lane l % Cols; `aggregate` and `prefix` hold the tile's lines in that order. The
// chain's first tile starts from `start` (op.start); every other reduction from op.neutral(),
// so that the sign of a zero sum is the reference's.
template <int Cols, int LV, int Packed, class A>
__device__ void look_back(const tile_layout &L, const tile_status<A> &st, const scan_op<A> &op, tile_at at, A start,
                          const A *aggregate, A *prefix_out) {
    const int lane = threadIdx.x % 32;
    const int col = lane % Cols;
    const int64_t chunk = at.chunk, group = at.group;
    A prefix[LV];
#pragma unroll
    for (int j = 0; j < LV; ++j) prefix[j] = chunk == 0 ? start : op.neutral();

    if (chunk > 0) {  // chunk 0 published its inclusive prefix with its aggregate
        if constexpr (Packed != 0) {
            const packed_lines_op<Packed> lines_op{op.prod};
            A packed[1] = {lines_op.neutral()};
            sum_words_back<1>(L, st, lines_op, chunk, group, packed);
#pragma unroll
            for (int j = 0; j < LV; ++j) prefix[j] = packed[0] >> 8 * Packed * j & ((1u << 8 * Packed) - 1);
        } else if constexpr (Cols == kColumnBlock) {
            sum_words_back<LV>(L, st, op, chunk, group, prefix);
        } else {
            static_assert(LV == 1, "a line chunk is one line");
            sum_windows_back(L, st, op, chunk, group, prefix[0]);
        }
        A inclusive[LV];
#pragma unroll
        for (int j = 0; j < LV; ++j) inclusive[j] = op(prefix[j], aggregate[col * LV + j]);
        publish_status<Cols, LV, Packed>(L, st, at, inclusive, kInclusive);
    }
    if (lane < Cols) {
#pragma unroll
        for (int j = 0; j < LV; ++j) prefix_out[lane * LV + j] = prefix[j];
    }
}

}  // namespace
}  // namespace tscan
