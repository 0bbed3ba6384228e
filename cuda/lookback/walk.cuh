// lookback/walk.cuh - the look-back: a tile's walk over its chain's earlier statuses to its exclusive
// prefix, by line words (sum_words_back) or by windows of 32 (sum_windows_back).
// Included by cuda/lookback.cu alone (its translation unit holds every lookback kernel), hence
// the anonymous namespace.
#pragma once

#include "lookback/status.cuh"

namespace tscan {
namespace {

// A column block's walk over its predecessors' line words, nearest first, in batches loaded
// before any is looked at (so that the loads overlap; one at a time cost dearly:
// bench/NOTES.md §3.10), until every lane's lines have met an inclusive word: sets prefix to
// the reduction of what they announce. The word carries its own flag, so no tile flag is
// polled first: a round trip less a window of 32 (bench/NOTES.md §3.10). A word not yet
// published is re-read, and so is the part of an 8-byte value that says an earlier state than
// the other. Lane l reads its LV lines' words of each predecessor, o chain steps below the
// nearest's; a batch past the first tile of the chain reloads that tile, which is inclusive,
// rather than branch around its loads: a long walk is bound by its instructions as much as by
// its round trips (bench/NOTES.md §3.10, against a 64-bit index and a branch a load).
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
// lane, read together) cost every line chunk, as a wait re-reads the whole window, and the
// wider, the more (bench/NOTES.md §3.10).
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
            f = pred < 0 ? (uint32_t)kInclusive : load_relaxed(st.flags[(pred * L.groups + group) * kSectorFlags]);
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
            // carry over here: with it the int8 kernel spilled and slowed (bench/NOTES.md §3.10).
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

}  // namespace
}  // namespace tscan
