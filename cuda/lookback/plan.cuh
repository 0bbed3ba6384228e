// lookback/plan.cuh - how lookback runs a problem: the tile shape and packing it picks (make_plan), the
// chains and tiles that follow (make_layout), and the workspace they need (tile_workspace_words).
// Included by cuda/lookback.cu alone (its translation unit holds every lookback kernel), hence
// the anonymous namespace.
#pragma once

#include <cstdlib>
#include "lookback/status.cuh"

namespace tscan {
namespace {

// How lookback runs a problem: the tile shape, the elements a word packs, and the problem as
// the kernel sees it (packed, when V > 1).
struct lookback_plan {
    scan_args a;
    int cols;
    int v;
    int64_t out_word_line_step;  // output elements between the lines of a column block's word
    int axis_head, axis_tail;    // line chunks: the line's first and last slots in part (tile_layout)
    int64_t run_lines, run_words;  // column blocks off the grid (off_grid), as tile_layout's
    bool off_grid;
    int lines_per_lane() const { return cols == kLineChunk ? 1 : v; }  // lines_per_thread<Cols, V>
};

// Column blocks when the axis is strided and there are lines enough to fill most lanes
// (neighbouring lines are then usually neighbouring addresses); otherwise each line is its
// own chain, read along the axis (coalesced when the axis is contiguous). Elements narrower
// than 8 bytes pack when the lines allow (column blocks: in both tensors, or in the input
// with the axis in the output), 1- and 2-byte ones also when the axis does (line chunks: the
// lines on one grid of slots, whatever their length and start; a line's first and last slot
// may hold it in part, and those move element by element).
// Pairs of 4-byte lines that neighbour in both tensors but lie off that grid (a row pitch or
// base off 8 bytes, or an odd number of lines a run) still pack, off the grid: a run's lines go
// two to a word, its last word maybe in part, and each row of a word loads whole where it lies
// on the grid and element by element elsewhere (the rows of an odd pitch alternate). Not 1- and
// 2-byte words, whose rows off the grid would move 1-2 bytes a load in the pipelined block's
// three blocks an SM, too few in flight (they lost 4-17 to the serial single elements on the
// H100: bench/NOTES.md §2), nor where the output runs along the axis (the transposed input's
// line-by-line stores need whole words).
// A narrower input (a wider output, T the output's type) packs its column blocks as the
// output's type does (the lines' words on the grid of each tensor's elements: a word of the
// input holds a slot's lines), never off the grid; its line chunks take slots of 16 bytes of
// the output (kWidenedAxisPack elements, each row of them loaded as one word of the input).
template <class T> lookback_plan make_plan(const tscan_problem *p) {
    constexpr int kLinePack = line_pack<T>(), kAxisPack = axis_pack<T>(), kWidenedAxisPack = widened_axis_pack<T>();
    lookback_plan plan{make_scan_args(p), kLineChunk, 1, 0, 0, 0, 0, 0, false};
    const bool contiguous_axis = llabs(p->in_step) <= 1 && llabs(p->out_step) == 1;
    plan.cols = !contiguous_axis && p->lines >= 16 ? kColumnBlock : kLineChunk;
    const int last = plan.a.batch.ndim - 1;
    if (plan.cols == kColumnBlock && kLinePack > 1 &&
        (lines_packed_by(plan.a, kLinePack, sizeof(T)) || lines_packed_into_axis_by(plan.a, kLinePack, sizeof(T)))) {
        plan.out_word_line_step = plan.a.batch.out_strides[last];
        pack_lines(plan.a, kLinePack);
        plan.v = kLinePack;
    } else if (plan.a.widens) {
        const int head = plan.cols == kLineChunk ? axis_head_in_vectors_of(plan.a, kWidenedAxisPack, sizeof(T)) : -1;
        if (head >= 0) {
            plan.axis_tail = pack_axis(plan.a, kWidenedAxisPack, sizeof(T), head);
            plan.axis_head = head;
            plan.v = kWidenedAxisPack;
        }
    } else if (plan.cols == kColumnBlock && sizeof(T) == 4 && llabs(plan.a.out_step) != 1 &&
               lines_neighbour(plan.a, kLinePack)) {
        plan.run_lines = plan.a.batch.sizes[last];
        pack_lines(plan.a, kLinePack);
        plan.run_words = plan.a.batch.sizes[last];
        plan.v = kLinePack;
        plan.off_grid = true;
    } else if (plan.cols == kLineChunk) {
        for (int w = kAxisPack; w >= min_axis_pack<T>(); w /= 2) {
            const int head = axis_head_in_vectors_of(plan.a, w, sizeof(T));
            if (head >= 0) {
                plan.axis_tail = pack_axis(plan.a, w, sizeof(T), head);
                plan.axis_head = head;
                plan.v = w;
                break;
            }
        }
    }
    return plan;
}

template <class T, class A> tile_layout make_layout(const lookback_plan &plan) {
    const scan_args &a = plan.a;
    const int cols = plan.cols;
    tile_layout L;
    L.rows = (int64_t)(kThreads / cols) * items_per_thread(slot_bytes(sizeof(T), plan.v));
    L.groups = (a.lines + cols - 1) / cols;
    L.chunks = (a.n + L.rows - 1) / L.rows;
    L.tiles = L.groups * L.chunks;
    const int lv = plan.lines_per_lane();
    const int64_t tile_words = (int64_t)plan.cols * lane_words<A>(lv, packed_status<T, A>(lv, plan.cols));
    L.chunk_words = (L.groups * tile_words + kSectorWords - 1) / kSectorWords * kSectorWords;
    L.band = L.groups;  // the launch sets it from the blocks resident
    L.axis_head = plan.axis_head;
    L.axis_tail = plan.axis_tail;
    L.run_lines = plan.run_lines;
    L.run_words = plan.run_words;
    return L;
}

// The tile kernel that runs a plan of kernel dtype K (lookback_kernel<K, Cols, V, Widen,
// OffGrid>): calls f.template with<Cols, V, Widen, OffGrid>() and returns what it returns. The
// planner and tests/emulated both choose through it. A line chunk's V is one of axis_pack's
// halvings down to min_axis_pack, or 1; signed integers run their unsigned twins' kernels
// (kernel_dtype), and only outputs that take a narrower input have widened ones.
template <tscan_dtype K, int V, class F> auto with_line_chunk_kernel(const lookback_plan &plan, const F &f) {
    using T = typename dtype_traits<K>::T;
    if constexpr (V >= min_axis_pack<T>()) {
        if (plan.v == V) return f.template with<kLineChunk, V, false, false>();
        return with_line_chunk_kernel<K, V / 2>(plan, f);
    } else {
        return f.template with<kLineChunk, 1, false, false>();
    }
}
template <tscan_dtype K, class F> auto with_tile_kernel(const lookback_plan &plan, const F &f) {
    using T = typename dtype_traits<K>::T;
    if constexpr (takes_narrower_input(K)) {
        if (plan.a.widens) {
            if (plan.cols == kLineChunk)
                return plan.v > 1 ? f.template with<kLineChunk, widened_axis_pack<T>(), true, false>()
                                  : f.template with<kLineChunk, 1, true, false>();
            if constexpr (line_pack<T>() > 1) {
                if (plan.v > 1) return f.template with<kColumnBlock, line_pack<T>(), true, false>();
            }
            return f.template with<kColumnBlock, 1, true, false>();
        }
    }
    if (plan.cols == kLineChunk) return with_line_chunk_kernel<K, axis_pack<T>()>(plan, f);
    if constexpr (sizeof(T) == 4) {
        if (plan.off_grid) return f.template with<kColumnBlock, line_pack<T>(), false, true>();
    }
    return plan.v > 1 ? f.template with<kColumnBlock, line_pack<T>(), false, false>()
                      : f.template with<kColumnBlock, 1, false, false>();
}

// Workspace, in 64-bit words: the claim counter alone in its 32-byte sector, then the status
// words, whole sectors (kSectorWords); all cleared before the kernel runs (a zero word is an
// empty status).
inline int64_t tile_workspace_words(const tile_layout &L) { return kSectorWords + (L.chunks - 1) * L.chunk_words; }

}  // namespace
}  // namespace tscan
